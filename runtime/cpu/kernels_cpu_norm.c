/*
 * kernels_cpu_norm.c -- _LayerNorm, the fusion pass's Keras
 * LayerNormalization (compiler/passes/fuse_norm.c): per row of x's last
 * axis, the unfused graph's float operations in its order -- mean and
 * variance as Mean computes them (DGR_ROWSUM_DEF: double sums, divided,
 * rounded to T), (x - mean)^2 as SquaredDifference, 1 / sqrt(var + eps)
 * as AddV2 and Rsqrt, then x * inv + (-mean * inv + beta) with inv =
 * rsqrt * gamma as the Mul / Neg / AddV2 nodes -- so `--no-fusion` gives
 * the same bits.  Two passes over each row where the graph made eight.
 */
#include "kernels_cpu.h"
#include "dg_alloc.h"

#include <math.h>

DGR_ROWSUM_DEF(ln_rowsum_f32, float, double)
DGR_ROWSUM_DEF(ln_rowsum_f64, double, double)

typedef struct ln_job {
    const void *x, *gamma, *beta;
    void *y;
    int64_t C;
    double eps;
} ln_job;

#define LN_ROWS(SUF, T, SQRT)                                                \
    DGR_HOT static void ln_rows_##SUF(void *arg, int64_t r0, int64_t r1)    \
    {                                                                        \
        const ln_job *j = arg;                                               \
        const int64_t C = j->C;                                              \
        const T *restrict gm = j->gamma, *restrict bt = j->beta;             \
        const T eps = (T)j->eps;                                             \
        for (int64_t r = r0; r < r1; r++) {                                  \
            const T *restrict x = (const T *)j->x + r * C;                   \
            T *restrict y = (T *)j->y + r * C;                               \
            T mean = (T)(ln_rowsum_##SUF(x, C) / (double)C);                 \
            /* the squares go through y, which the last loop overwrites */  \
            for (int64_t c = 0; c < C; c++)                                  \
                y[c] = (x[c] - mean) * (x[c] - mean);                        \
            T var = (T)(ln_rowsum_##SUF(y, C) / (double)C);                  \
            T rs = (T)1 / SQRT(var + eps), nm = -mean;                       \
            for (int64_t c = 0; c < C; c++) {                                \
                T inv = rs * gm[c];                                          \
                y[c] = x[c] * inv + (nm * inv + bt[c]);                      \
            }                                                                \
        }                                                                    \
    }
LN_ROWS(f32, float, sqrtf)
LN_ROWS(f64, double, sqrt)

dg_status dgr_k_layer_norm(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&x->shape);
    ln_job j = {dgr_cpu_ptr(x), dgr_cpu_ptr(&k->in[1]), dgr_cpu_ptr(&k->in[2]),
                dgr_cpu_ptr(&k->out[0]), x->shape.dims[x->shape.rank - 1],
                dgc_attr_f(k->node, DGC_AT_epsilon)};
    if (n == 0 || j.C == 0)
        return DG_OK;
    int64_t rows = n / j.C;
    dgr_range_fn fn = x->dtype == DG_F64 ? ln_rows_f64 : ln_rows_f32;
    if (n >= DGR_CPU_PAR_MIN) {
        int64_t grain = DGR_CPU_PAR_MIN / 4 / j.C;
        dgr_parallel_for(k->dev->intra, rows, grain > 0 ? grain : 1, fn, &j);
    } else {
        fn(&j, 0, rows);
    }
    return DG_OK;
}
DGR_KERNEL(_LayerNorm, dgr_k_layer_norm);
