/*
 * kernels_cpu_stateless.c -- CPU kernels of TF's stateless random ops
 * (issue 22, ops10b): StatelessRandomUniform, StatelessRandomNormal,
 * StatelessTruncatedNormal and StatelessRandomUniformInt (V1: shape, seed
 * int32/int64 [2]; the int one: minval, maxval), TF's
 * numbers bit for bit: Philox blocks from the seed's key and counter
 * (philox.h), each block 4 float or 2 double samples, the last block's
 * tail dropped, as TF's CPU fill; the truncated normal's groups (4 float,
 * 2 double) each from its own stretch of 256 reserved words per sample.
 */
#include "kernels_cpu.h"
#include "philox.h"

#include <math.h>

/* the generator seed input 1 selects: an int32/int64 pair */
static dg_status seed_gen(dgr_kctx *k, dgr_philox *p)
{
    const dgr_value *s = &k->in[1];
    if ((s->dtype != DG_I32 && s->dtype != DG_I64) || s->shape.rank != 1 ||
        s->shape.dims[0] != 2)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': seed must be an "
                      "int32/int64 vector of 2 elements", k->node->name);
    /* an int32 seed sign-extends, as TF's uint64 copy of it */
    dgr_philox_from_seed(p, (uint64_t)dgr_cpu_iat(s, 0),
                         (uint64_t)dgr_cpu_iat(s, 1));
    return DG_OK;
}

/* the generator of k's seed, output 0 allocated, its element count */
static dg_status start(dgr_kctx *k, dgr_philox *p, int64_t *n)
{
    dg_status st = seed_gen(k, p);
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    *n = st ? 0 : dg_shape_numel(&k->out[0].shape);
    return st;
}

/* TF's SingleSampleAdapter: the next word of q's blocks */
static uint32_t next_word(dgr_philox *q, uint32_t buf[4], int *used)
{
    if (*used == 4) {
        dgr_philox_next(q, buf);
        *used = 0;
    }
    return buf[(*used)++];
}

/* TF's truncated normal fill: group g (gs samples) from the generator
 * skipped by g * gs * 256 / 4 blocks, Box-Muller pairs kept where |v| < 2 */
static void truncated_normal(const dgr_philox *p, dgr_value *out, int64_t n)
{
    int f32 = out->dtype == DG_F32, gs = f32 ? 4 : 2;
    for (int64_t g = 0; g * gs < n; g++) {
        dgr_philox q = *p;
        dgr_philox_skip(&q, (uint64_t)g * (uint64_t)gs * 256 / 4);
        uint32_t buf[4], x[4];
        int used = 4, got = 0;
        double v[4];
        while (got < gs) {
            double d[2];
            if (f32) {
                float f[2];
                x[0] = next_word(&q, buf, &used);
                x[1] = next_word(&q, buf, &used);
                dgr_philox_box_muller_f32(x[0], x[1], &f[0], &f[1]);
                d[0] = f[0];
                d[1] = f[1];
            } else {
                for (int j = 0; j < 4; j++)
                    x[j] = next_word(&q, buf, &used);
                dgr_philox_box_muller_f64(x, &d[0], &d[1]);
            }
            for (int j = 0; j < 2 && got < gs; j++)
                if (fabs(d[j]) < 2.0)
                    v[got++] = d[j];
        }
        for (int j = 0; j < gs && g * gs + j < n; j++) {
            if (f32)
                ((float *)dgr_cpu_ptr(out))[g * gs + j] = (float)v[j];
            else
                ((double *)dgr_cpu_ptr(out))[g * gs + j] = v[j];
        }
    }
}

dg_status dgr_k_stateless_random(dgr_kctx *k)
{
    dgr_philox p;
    int64_t n;
    dg_status st = start(k, &p, &n);
    if (st)
        return st;
    int normal = k->node->op == DGC_OPID_StatelessRandomNormal;
    if (k->node->op == DGC_OPID_StatelessTruncatedNormal) {
        truncated_normal(&p, &k->out[0], n);
        return DG_OK;
    }
    uint32_t b[4];
    if (k->out[0].dtype == DG_F32) {
        float *y = dgr_cpu_ptr(&k->out[0]), v[4];
        for (int64_t i = 0; i < n; i += 4) {
            dgr_philox_next(&p, b);
            if (normal) {
                dgr_philox_box_muller_f32(b[0], b[1], &v[0], &v[1]);
                dgr_philox_box_muller_f32(b[2], b[3], &v[2], &v[3]);
            } else {
                for (int j = 0; j < 4; j++)
                    v[j] = dgr_philox_u32_to_f32(b[j]);
            }
            for (int j = 0; j < 4 && i + j < n; j++)
                y[i + j] = v[j];
        }
    } else {
        double *y = dgr_cpu_ptr(&k->out[0]), v[2];
        for (int64_t i = 0; i < n; i += 2) {
            dgr_philox_next(&p, b);
            if (normal) {
                dgr_philox_box_muller_f64(b, &v[0], &v[1]);
            } else {
                v[0] = dgr_philox_u64_to_f64(b[0], b[1]);
                v[1] = dgr_philox_u64_to_f64(b[2], b[3]);
            }
            for (int j = 0; j < 2 && i + j < n; j++)
                y[i + j] = v[j];
        }
    }
    return DG_OK;
}
DGR_KERNEL(StatelessRandomUniform, dgr_k_stateless_random);
DGR_KERNEL(StatelessRandomNormal, dgr_k_stateless_random);
DGR_KERNEL(StatelessTruncatedNormal, dgr_k_stateless_random);

/* lo + bits % (hi - lo) in unsigned arithmetic (TF's SignedAdd), a block
 * giving 4 int32 samples (a word each) or 2 int64 (two words each) */
dg_status dgr_k_stateless_random_int(dgr_kctx *k)
{
    dgr_philox p;
    int64_t n;
    dg_status st = start(k, &p, &n);
    if (st || n == 0)
        return st;
    int64_t lo = dgr_cpu_iat(&k->in[2], 0), hi = dgr_cpu_iat(&k->in[3], 0);
    if (lo >= hi)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': need minval < "
                      "maxval, got %lld >= %lld", k->node->name,
                      (long long)lo, (long long)hi);
    uint32_t b[4];
    if (k->out[0].dtype == DG_I32) {
        int32_t *y = dgr_cpu_ptr(&k->out[0]);
        uint32_t range = (uint32_t)hi - (uint32_t)lo;
        for (int64_t i = 0; i < n; i += 4) {
            dgr_philox_next(&p, b);
            for (int j = 0; j < 4 && i + j < n; j++)
                y[i + j] = (int32_t)((uint32_t)lo + b[j] % range);
        }
    } else {
        int64_t *y = dgr_cpu_ptr(&k->out[0]);
        uint64_t range = (uint64_t)hi - (uint64_t)lo;
        for (int64_t i = 0; i < n; i += 2) {
            dgr_philox_next(&p, b);
            for (int j = 0; j < 2 && i + j < n; j++) {
                uint64_t bits = b[2 * j] | (uint64_t)b[2 * j + 1] << 32;
                y[i + j] = (int64_t)((uint64_t)lo + bits % range);
            }
        }
    }
    return DG_OK;
}
DGR_KERNEL(StatelessRandomUniformInt, dgr_k_stateless_random_int);
