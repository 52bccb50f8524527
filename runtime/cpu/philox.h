/*
 * philox.h -- TF's Philox4x32-10 counter-based generator and the sample
 * conversions of its distributions (tsl/lib/random: philox_random.h,
 * random_distributions*.h), bit for bit: the stateless random ops' source.
 */
#ifndef DGR_PHILOX_H
#define DGR_PHILOX_H

#include <stdint.h>

typedef struct dgr_philox {
    uint32_t ctr[4];
    uint32_t key[2];
} dgr_philox;

/* TF's stateless GenerateKey: the key and counter that seed pair (s0, s1)
 * selects (scrambled by one Philox block). */
void dgr_philox_from_seed(dgr_philox *p, uint64_t s0, uint64_t s1);
/* The 4 words of the block at p's counter; the counter then moves on by
 * one. */
void dgr_philox_next(dgr_philox *p, uint32_t out[4]);
/* Move p's 128-bit counter on by count blocks (TF's Skip). */
void dgr_philox_skip(dgr_philox *p, uint64_t count);
/* TF's Uint32ToFloat / Uint64ToDouble: [0, 1) from a sample's bits. */
float dgr_philox_u32_to_f32(uint32_t x);
double dgr_philox_u64_to_f64(uint32_t x0, uint32_t x1);
/* TF's Box-Muller transforms: two normal samples from two words (float)
 * or four (double). */
void dgr_philox_box_muller_f32(uint32_t x0, uint32_t x1, float *f0,
                               float *f1);
void dgr_philox_box_muller_f64(const uint32_t x[4], double *d0, double *d1);

#endif
