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
/* Fill a host tensor per a Variable initializer (glorot uses fan in/out). */
dg_status dgr_init_fill(const dgc_init *init, dg_tensor *t, dgr_rng *r,
                        dg_error *err);

#endif
