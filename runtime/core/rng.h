/*
 * rng.h -- the runtime's random numbers: xoshiro256** streams seeded from
 * --seed, and Variable initializers drawn from them.
 */
#ifndef DGR_RNG_H
#define DGR_RNG_H

#include <stdint.h>

#include "dgrun.h"
#include "dg_error.h"
#include "ir.h"

typedef struct dgr_rng { uint64_t s[4]; } dgr_rng;
void dgr_rng_seed(dgr_rng *r, uint64_t seed);
uint64_t dgr_rng_next(dgr_rng *r);
double dgr_rng_uniform(dgr_rng *r);           /* [0, 1) */
double dgr_rng_normal(dgr_rng *r);            /* N(0, 1) */
/* N(0, 1) redrawn until |x| <= 2: TF's TruncatedNormal */
double dgr_rng_truncated_normal(dgr_rng *r);

/* The random ops (issue 21).  The samples of a float random node
 * (RandomNormal, RandomUniform, TruncatedNormal: its op and mean/stddev or
 * min/max attrs) into the host array o of n float32/float64 elements, in C
 * order.  CPU and OpenCL kernels both draw here, so a --seed gives the same
 * numbers on every device. */
void dgr_rng_fill_node(dgr_rng *r, const dgc_node *node, void *o, dg_dtype dt,
                       int64_t n);
/* n integers uniform in [lo, hi) into o (int32/int64); needs lo < hi. */
void dgr_rng_fill_int(dgr_rng *r, int64_t lo, int64_t hi, void *o,
                      dg_dtype dt, int64_t n);
/* TF's Multinomial: for each of `rows` rows of logits (float32/float64,
 * `classes` per row) `samples` class indices drawn with probabilities
 * softmax(row) into o (int32/int64, rows x samples); -inf and NaN logits
 * have probability 0.  cdf: scratch of `classes` doubles. */
void dgr_rng_multinomial(dgr_rng *r, const void *logits, dg_dtype lt,
                         int64_t rows, int64_t classes, int64_t samples,
                         void *o, dg_dtype ot, double *cdf);

/* Fill a host tensor per a Variable initializer (glorot uses fan in/out). */
dg_status dgr_init_fill(const dgc_init *init, dg_tensor *t, dgr_rng *r,
                        dg_error *err);

#endif
