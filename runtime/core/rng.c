/*
 * rng.c -- seeded random numbers (xoshiro256**) and Variable initializers.
 *
 * The same --seed gives the same numbers on every machine: generation is
 * sequential in C order from a seed derived per node (dgr_session_rng_seed).
 */
#include "rng.h"
#include "ops.h"
#include "attr_get.h"

#include <math.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void dgr_rng_seed(dgr_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t dgr_rng_next(dgr_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double dgr_rng_uniform(dgr_rng *r)
{
    return (double)(dgr_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

double dgr_rng_normal(dgr_rng *r)
{
    /* Box-Muller, one sample per call (deterministic, simple). */
    double u1 = dgr_rng_uniform(r), u2 = dgr_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double dgr_rng_truncated_normal(dgr_rng *r)
{
    for (;;) {
        double x = dgr_rng_normal(r);
        if (x >= -2.0 && x <= 2.0)
            return x;
    }
}

void dgr_rng_fill_node(dgr_rng *r, const dgc_node *node, void *o, dg_dtype dt,
                       int64_t n)
{
    int uni = node->op == DGC_OPID_RandomUniform;
    int trunc = node->op == DGC_OPID_TruncatedNormal;
    double a = uni ? dgc_attr_f(node, DGC_AT_min)
                   : dgc_attr_f(node, DGC_AT_mean);
    double b = uni ? dgc_attr_f(node, DGC_AT_max)
                   : dgc_attr_f(node, DGC_AT_stddev);
    for (int64_t i = 0; i < n; i++) {
        double v = uni ? a + (b - a) * dgr_rng_uniform(r)
                       : a + b * (trunc ? dgr_rng_truncated_normal(r)
                                        : dgr_rng_normal(r));
        if (dt == DG_F32)
            ((float *)o)[i] = (float)v;
        else
            ((double *)o)[i] = v;
    }
}

void dgr_rng_fill_int(dgr_rng *r, int64_t lo, int64_t hi, void *o,
                      dg_dtype dt, int64_t n)
{
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t)((uint64_t)lo + dgr_rng_next(r) % range);
        if (dt == DG_I32)
            ((int32_t *)o)[i] = (int32_t)v;
        else
            ((int64_t *)o)[i] = v;
    }
}

void dgr_rng_multinomial(dgr_rng *r, const void *logits, dg_dtype lt,
                         int64_t rows, int64_t classes, int64_t samples,
                         void *o, dg_dtype ot, double *cdf)
{
    for (int64_t b = 0; b < rows; b++) {
        /* as TF's CPU kernel: cdf of exp(logit - max) over the finite
         * logits, then upper_bound(cdf, u * total) per sample */
        double mx = -INFINITY;
        for (int64_t c = 0; c < classes; c++) {
            int64_t i = b * classes + c;
            double l = lt == DG_F32 ? ((const float *)logits)[i]
                                    : ((const double *)logits)[i];
            if (isfinite(l) && l > mx)
                mx = l;
        }
        double total = 0;
        for (int64_t c = 0; c < classes; c++) {
            int64_t i = b * classes + c;
            double l = lt == DG_F32 ? ((const float *)logits)[i]
                                    : ((const double *)logits)[i];
            if (isfinite(l))
                total += exp(l - mx);
            cdf[c] = total;
        }
        for (int64_t s = 0; s < samples; s++) {
            double u = dgr_rng_uniform(r) * total;
            int64_t lo = 0, hi = classes; /* first c with cdf[c] > u */
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] > u)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            if (lo >= classes)
                lo = classes - 1;
            int64_t at = b * samples + s;
            if (ot == DG_I32)
                ((int32_t *)o)[at] = (int32_t)lo;
            else
                ((int64_t *)o)[at] = lo;
        }
    }
}

static void store(dg_tensor *t, int64_t i, double v)
{
    switch (t->dtype) {
    case DG_F32: ((float *)t->data)[i] = (float)v; break;
    case DG_F64: ((double *)t->data)[i] = v; break;
    case DG_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
    case DG_I64: ((int64_t *)t->data)[i] = (int64_t)v; break;
    case DG_BOOL: ((uint8_t *)t->data)[i] = v != 0; break;
    default: break;
    }
}

static double load(const dg_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DG_F32: return ((const float *)t->data)[i];
    case DG_F64: return ((const double *)t->data)[i];
    case DG_I32: return ((const int32_t *)t->data)[i];
    case DG_I64: return (double)((const int64_t *)t->data)[i];
    case DG_BOOL: return ((const uint8_t *)t->data)[i];
    default: return 0;
    }
}

dg_status dgr_init_fill(const dgc_init *init, dg_tensor *t, dgr_rng *r,
                        dg_error *err)
{
    int64_t n = dg_shape_numel(&t->shape);
    switch (init->kind) {
    case DGC_INIT_ZEROS:
        memset(t->data, 0, (size_t)n * dg_dtype_size(t->dtype));
        return DG_OK;
    case DGC_INIT_VALUE: {
        const dg_tensor *v = init->value;
        int64_t vn = v ? dg_shape_numel(&v->shape) : 0;
        if (!v || (vn != 1 && vn != n))
            return dg_err(err, DG_E_GRAPH,
                          "initializer has %lld elements, variable %lld",
                          (long long)vn, (long long)n);
        for (int64_t i = 0; i < n; i++)
            store(t, i, load(v, vn == 1 ? 0 : i));
        return DG_OK;
    }
    case DGC_INIT_RANDOM_NORMAL:
        for (int64_t i = 0; i < n; i++)
            store(t, i, init->a + init->b * dgr_rng_normal(r));
        return DG_OK;
    case DGC_INIT_TRUNCATED_NORMAL:
        for (int64_t i = 0; i < n; i++)
            store(t, i, init->a + init->b * dgr_rng_truncated_normal(r));
        return DG_OK;
    case DGC_INIT_RANDOM_UNIFORM:
        for (int64_t i = 0; i < n; i++)
            store(t, i, init->a + (init->b - init->a) * dgr_rng_uniform(r));
        return DG_OK;
    case DGC_INIT_GLOROT_UNIFORM: {
        /* fan_in/fan_out as Keras: last two dims, receptive field before. */
        double fan_in = 1, fan_out = 1;
        const dg_shape *s = &t->shape;
        if (s->rank == 1) {
            fan_in = fan_out = (double)s->dims[0];
        } else if (s->rank >= 2) {
            double rf = 1;
            for (int d = 0; d < s->rank - 2; d++)
                rf *= (double)s->dims[d];
            fan_in = (double)s->dims[s->rank - 2] * rf;
            fan_out = (double)s->dims[s->rank - 1] * rf;
        }
        double limit = sqrt(6.0 / (fan_in + fan_out > 0 ? fan_in + fan_out : 1));
        for (int64_t i = 0; i < n; i++)
            store(t, i, -limit + 2 * limit * dgr_rng_uniform(r));
        return DG_OK;
    }
    }
    return dg_err(err, DG_E_GRAPH, "unknown initializer");
}
