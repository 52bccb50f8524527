/*
 * philox.c -- TF's Philox4x32-10 and its uniform / normal sample
 * conversions, written anew in C from TF's definitions (philox.h).
 */
#include "philox.h"

#include <math.h>
#include <string.h>

#define PHILOX_W32A 0x9E3779B9u
#define PHILOX_W32B 0xBB67AE85u
#define PHILOX_M4x32A 0xD2511F53u
#define PHILOX_M4x32B 0xCD9E8D57u

static void round1(uint32_t c[4], const uint32_t k[2])
{
    uint64_t p0 = (uint64_t)PHILOX_M4x32A * c[0];
    uint64_t p1 = (uint64_t)PHILOX_M4x32B * c[2];
    uint32_t lo0 = (uint32_t)p0, hi0 = (uint32_t)(p0 >> 32);
    uint32_t lo1 = (uint32_t)p1, hi1 = (uint32_t)(p1 >> 32);
    uint32_t r0 = hi1 ^ c[1] ^ k[0], r2 = hi0 ^ c[3] ^ k[1];
    c[0] = r0;
    c[1] = lo1;
    c[2] = r2;
    c[3] = lo0;
}

void dgr_philox_next(dgr_philox *p, uint32_t out[4])
{
    uint32_t c[4], k[2] = {p->key[0], p->key[1]};
    memcpy(c, p->ctr, sizeof c);
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k[0] += PHILOX_W32A;
            k[1] += PHILOX_W32B;
        }
        round1(c, k);
    }
    memcpy(out, c, sizeof c);
    if (++p->ctr[0] == 0 && ++p->ctr[1] == 0 && ++p->ctr[2] == 0)
        ++p->ctr[3];
}

void dgr_philox_skip(dgr_philox *p, uint64_t count)
{
    uint32_t lo = (uint32_t)count, hi = (uint32_t)(count >> 32);
    p->ctr[0] += lo;
    if (p->ctr[0] < lo)
        ++hi;
    p->ctr[1] += hi;
    if (p->ctr[1] < hi && ++p->ctr[2] == 0)
        ++p->ctr[3];
}

void dgr_philox_from_seed(dgr_philox *p, uint64_t s0, uint64_t s1)
{
    p->key[0] = 0x3ec8f720u;
    p->key[1] = 0x02461e29u;
    p->ctr[0] = (uint32_t)s0;
    p->ctr[1] = (uint32_t)(s0 >> 32);
    p->ctr[2] = (uint32_t)s1;
    p->ctr[3] = (uint32_t)(s1 >> 32);
    uint32_t mix[4];
    dgr_philox_next(p, mix);
    p->key[0] = mix[0];
    p->key[1] = mix[1];
    p->ctr[0] = p->ctr[1] = 0;
    p->ctr[2] = mix[2];
    p->ctr[3] = mix[3];
}

float dgr_philox_u32_to_f32(uint32_t x)
{
    uint32_t v = (127u << 23) | (x & 0x7fffffu);
    float f;
    memcpy(&f, &v, sizeof f);
    return f - 1.0f;
}

double dgr_philox_u64_to_f64(uint32_t x0, uint32_t x1)
{
    uint64_t v = (1023ull << 52) | ((uint64_t)(x0 & 0xfffffu) << 32) | x1;
    double d;
    memcpy(&d, &v, sizeof d);
    return d - 1.0;
}

void dgr_philox_box_muller_f32(uint32_t x0, uint32_t x1, float *f0,
                               float *f1)
{
    float u1 = dgr_philox_u32_to_f32(x0);
    if (u1 < 1.0e-7f)
        u1 = 1.0e-7f;
    /* TF: 2.0f * M_PI * u in double, stored as float */
    float v1 = (float)(2.0f * M_PI * dgr_philox_u32_to_f32(x1));
    float u2 = sqrtf(-2.0f * logf(u1));
    *f0 = sinf(v1) * u2;
    *f1 = cosf(v1) * u2;
}

void dgr_philox_box_muller_f64(const uint32_t x[4], double *d0, double *d1)
{
    double u1 = dgr_philox_u64_to_f64(x[0], x[1]);
    if (u1 < 1.0e-7)
        u1 = 1.0e-7;
    double v1 = 2 * M_PI * dgr_philox_u64_to_f64(x[2], x[3]);
    double u2 = sqrt(-2.0 * log(u1));
    *d0 = sin(v1) * u2;
    *d1 = cos(v1) * u2;
}
