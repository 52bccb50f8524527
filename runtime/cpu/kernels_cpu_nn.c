/*
 * kernels_cpu_nn.c -- CPU kernels for the neural-network ops that work on
 * rows of the last axis or columns of it: Softmax (numerically stable),
 * SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits,
 * SoftmaxGrad, BatchNorm (batch statistics over all but the last axis) and
 * BatchNormGrad.
 */
#include "kernels_cpu.h"
#include "kernels_cpu_dnnl.h"
#include "dg_alloc.h"

#include <math.h>
#include <string.h>

static dg_status float_only(dgr_kctx *k, dg_dtype t)
{
    if (t == DG_F32 || t == DG_F64)
        return DG_OK;
    return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for %s",
                  k->node->name, dg_dtype_name(t));
}

/* Last-axis length C and rows of a value (C = 1 for scalars). */
static void rows_cols(const dg_shape *s, int64_t *rows, int64_t *cols)
{
    int64_t n = dg_shape_numel(s);
    *cols = s->rank ? s->dims[s->rank - 1] : 1;
    *rows = *cols ? n / *cols : 0;
}

/* ---- Softmax ------------------------------------------------------------- */

typedef struct sm_job {
    const void *x;
    void *y;
    int64_t C;
} sm_job;

#define SOFTMAX_ROWS(SUF, T, EXP)                                            \
    static void softmax_##SUF(void *arg, int64_t r0, int64_t r1)             \
    {                                                                        \
        sm_job *j = arg;                                                     \
        int64_t C = j->C;                                                    \
        for (int64_t r = r0; r < r1; r++) {                                  \
            const T *x = (const T *)j->x + r * C;                            \
            T *y = (T *)j->y + r * C;                                        \
            T m = x[0];                                                      \
            for (int64_t c = 1; c < C; c++)                                  \
                m = x[c] > m ? x[c] : m;                                     \
            double s = 0;                                                    \
            for (int64_t c = 0; c < C; c++) {                                \
                y[c] = EXP(x[c] - m);                                        \
                s += y[c];                                                   \
            }                                                                \
            T inv = (T)(1.0 / s);                                            \
            for (int64_t c = 0; c < C; c++)                                  \
                y[c] *= inv;                                                 \
        }                                                                    \
    }
SOFTMAX_ROWS(f32, float, expf)
SOFTMAX_ROWS(f64, double, exp)

/* TF's value for a row holding NaN or +inf (its max is NaN or inf, so
 * every difference, exp and the sum are NaN): all NaN.  oneDNN gives NaN
 * only where the input is. */
static void softmax_nan_rows(const float *x, float *y, int64_t rows,
                             int64_t C)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * C;
        int bad = 0;
        for (int64_t c = 0; c < C; c++)
            bad |= (xr[c] != xr[c]) | (xr[c] == INFINITY);
        if (bad)
            for (int64_t c = 0; c < C; c++)
                y[r * C + c] = NAN;
    }
}

/* Elements from which a float32 Softmax runs on oneDNN (its per-call cost,
 * ~3 us, is more than small ones take here). */
#define DGR_SOFTMAX_DNNL_MIN (1 << 14)

dg_status dgr_k_softmax(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    dg_status st = float_only(k, x->dtype);
    if (st || (st = dgr_kctx_alloc_output(k, 0)))
        return st;
    int64_t rows, C;
    rows_cols(&x->shape, &rows, &C);
    if (rows == 0 || C == 0)
        return DG_OK;
    /* large float32 ones on oneDNN's vectorised exp (a transformer's
     * attention at batch 32: 1.9 ms a call with libm's expf); by the
     * shape alone, so a tensor always takes the same path */
    if (x->dtype == DG_F32 && rows * C >= DGR_SOFTMAX_DNNL_MIN) {
        int rc = dgr_dnnl_rows(k->dev->intra, DGR_DNNL_SOFTMAX, rows, C,
                               dgr_cpu_ptr(x), dgr_cpu_ptr(&k->out[0]));
        if (rc < 0)
            return dg_err_nomem(k->err, k->node->name);
        if (rc == 0) {
            softmax_nan_rows(dgr_cpu_ptr(x), dgr_cpu_ptr(&k->out[0]), rows,
                             C);
            return DG_OK;
        }
    }
    sm_job j = {dgr_cpu_ptr(x), dgr_cpu_ptr(&k->out[0]), C};
    dgr_range_fn fn = x->dtype == DG_F32 ? softmax_f32 : softmax_f64;
    if (rows * C >= DGR_CPU_PAR_MIN) {
        int64_t grain = DGR_CPU_PAR_MIN / 2 / C;
        dgr_parallel_for(k->dev->intra, rows, grain > 0 ? grain : 1, fn, &j);
    } else {
        fn(&j, 0, rows);
    }
    return DG_OK;
}
DGR_KERNEL(Softmax, dgr_k_softmax);

/* ---- cross entropy ------------------------------------------------------- */

/* Per row: loss = -sum labels * log_softmax, backprop = softmax - labels.
 * Sparse: labels are class indices (lab_idx), checked by the caller. */
#define XENT(T, EXP)                                                         \
    do {                                                                     \
        const T *xv = dgr_cpu_ptr(&k->in[0]);                                \
        T *loss = dgr_cpu_ptr(&k->out[0]);                                   \
        T *bp = dgr_cpu_ptr(&k->out[1]);                                     \
        for (int64_t r = 0; r < rows; r++) {                                 \
            const T *x = xv + r * C;                                         \
            T *g = bp + r * C;                                               \
            T m = x[0];                                                      \
            for (int64_t c = 1; c < C; c++)                                  \
                m = x[c] > m ? x[c] : m;                                     \
            double s = 0;                                                    \
            for (int64_t c = 0; c < C; c++)                                  \
                s += EXP(x[c] - m);                                          \
            double lse = log(s);                                             \
            double l = 0;                                                    \
            if (sparse) {                                                    \
                int64_t lab = lab_idx(&k->in[1], r);                         \
                for (int64_t c = 0; c < C; c++)                              \
                    g[c] = (T)(exp((double)(x[c] - m) - lse) - (c == lab));  \
                l = lse - (double)(x[lab] - m);                              \
            } else {                                                         \
                const T *lb = (const T *)dgr_cpu_ptr(&k->in[1]) + r * C;     \
                for (int64_t c = 0; c < C; c++) {                            \
                    double ls = (double)(x[c] - m) - lse;                    \
                    if (lb[c] != 0)                                          \
                        l -= (double)lb[c] * ls;                             \
                    g[c] = (T)(exp(ls) - (double)lb[c]);                     \
                }                                                            \
            }                                                                \
            loss[r] = (T)l;                                                  \
        }                                                                    \
    } while (0)

static int64_t lab_idx(const dgr_value *v, int64_t r)
{
    if (v->dtype == DG_I32)
        return ((const int32_t *)dgr_cpu_ptr(v))[r];
    return ((const int64_t *)dgr_cpu_ptr(v))[r];
}

static dg_status xent(dgr_kctx *k, int sparse)
{
    const dgr_value *x = &k->in[0], *lab = &k->in[1];
    dg_status st = float_only(k, x->dtype);
    if (st)
        return st;
    int64_t rows, C;
    rows_cols(&x->shape, &rows, &C);
    if (sparse) {
        if (lab->dtype != DG_I32 && lab->dtype != DG_I64)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': labels must be int32 or int64",
                          k->node->name);
        if (dg_shape_numel(&lab->shape) != rows)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': %lld labels for %lld rows of logits",
                          k->node->name,
                          (long long)dg_shape_numel(&lab->shape),
                          (long long)rows);
        for (int64_t r = 0; r < rows; r++) {
            int64_t l = lab_idx(lab, r);
            if (l < 0 || l >= C)
                return dg_err(k->err, DG_E_RUNTIME,
                              "node '%s': Received a label value of %lld which "
                              "is outside the valid range of [0, %lld)",
                              k->node->name, (long long)l, (long long)C);
        }
    } else if (lab->dtype != x->dtype ||
               dg_shape_numel(&lab->shape) != dg_shape_numel(&x->shape)) {
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': labels must match the logits' dtype and shape",
                      k->node->name);
    }
    if ((st = dgr_kctx_alloc_output(k, 0)) || (st = dgr_kctx_alloc_output(k, 1)))
        return st;
    if (C == 0) {
        if (rows > 0)
            memset(dgr_cpu_ptr(&k->out[0]), 0,
               (size_t)rows * dg_dtype_size(x->dtype));
        return DG_OK;
    }
    if (x->dtype == DG_F32)
        XENT(float, expf);
    else
        XENT(double, exp);
    return DG_OK;
}

dg_status dgr_k_xent(dgr_kctx *k) { return xent(k, 0); }
DGR_KERNEL(SoftmaxCrossEntropyWithLogits, dgr_k_xent);
dg_status dgr_k_sparse_xent(dgr_kctx *k) { return xent(k, 1); }
DGR_KERNEL(SparseSoftmaxCrossEntropyWithLogits, dgr_k_sparse_xent);

/* ---- SoftmaxGrad(y, dy) = (dy - sum(dy * y)) * y per row ---------------- */

#define SMGRAD(T)                                                            \
    do {                                                                     \
        const T *yv = dgr_cpu_ptr(&k->in[0]);                                \
        const T *dv = dgr_cpu_ptr(&k->in[1]);                                \
        T *o = dgr_cpu_ptr(&k->out[0]);                                      \
        for (int64_t r = 0; r < rows; r++) {                                 \
            const T *y = yv + r * C, *dy = dv + r * C;                       \
            double s = 0;                                                    \
            for (int64_t c = 0; c < C; c++)                                  \
                s += (double)dy[c] * (double)y[c];                           \
            for (int64_t c = 0; c < C; c++)                                  \
                o[r * C + c] = (T)((dy[c] - s) * y[c]);                      \
        }                                                                    \
    } while (0)

dg_status dgr_k_softmax_grad(dgr_kctx *k)
{
    dg_status st = float_only(k, k->in[0].dtype);
    if (st)
        return st;
    if (dg_shape_numel(&k->in[1].shape) != dg_shape_numel(&k->in[0].shape))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': y and dy shapes differ", k->node->name);
    if ((st = dgr_kctx_alloc_output(k, 0)))
        return st;
    int64_t rows, C;
    rows_cols(&k->in[0].shape, &rows, &C);
    if (k->in[0].dtype == DG_F32)
        SMGRAD(float);
    else
        SMGRAD(double);
    return DG_OK;
}
DGR_KERNEL(SoftmaxGrad, dgr_k_softmax_grad);

/* ---- BatchNorm ----------------------------------------------------------- */

#define BN_FWD(T)                                                            \
    do {                                                                     \
        const T *x = dgr_cpu_ptr(&k->in[0]);                                 \
        const T *sc = dgr_cpu_ptr(&k->in[1]);                                \
        const T *of = dgr_cpu_ptr(&k->in[2]);                                \
        T *y = dgr_cpu_ptr(&k->out[0]);                                      \
        T *mo = dgr_cpu_ptr(&k->out[1]);                                     \
        T *vo = dgr_cpu_ptr(&k->out[2]);                                     \
        for (int64_t r = 0; r < rows; r++)                                   \
            for (int64_t c = 0; c < C; c++)                                  \
                mean[c] += x[r * C + c];                                     \
        for (int64_t c = 0; c < C; c++)                                      \
            mean[c] = rows ? mean[c] / (double)rows : 0;                     \
        for (int64_t r = 0; r < rows; r++)                                   \
            for (int64_t c = 0; c < C; c++) {                                \
                double d = x[r * C + c] - mean[c];                           \
                var[c] += d * d;                                             \
            }                                                                \
        for (int64_t c = 0; c < C; c++) {                                    \
            var[c] = rows ? var[c] / (double)rows : 0;                       \
            mo[c] = (T)mean[c];                                              \
            vo[c] = (T)var[c];                                               \
            var[c] = 1.0 / sqrt(var[c] + eps); /* now rstd */                \
        }                                                                    \
        for (int64_t r = 0; r < rows; r++)                                   \
            for (int64_t c = 0; c < C; c++)                                  \
                y[r * C + c] = (T)((x[r * C + c] - mean[c]) * var[c] *       \
                                       sc[c] + of[c]);                       \
    } while (0)

static dg_status bn_check(dgr_kctx *k, int first_c, int last_c, int64_t C)
{
    for (int i = first_c; i <= last_c; i++)
        if (dg_shape_numel(&k->in[i].shape) != C || k->in[i].dtype != k->in[0].dtype)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': input %d must have %lld elements of %s",
                          k->node->name, i, (long long)C,
                          dg_dtype_name(k->in[0].dtype));
    return DG_OK;
}

dg_status dgr_k_batchnorm(dgr_kctx *k)
{
    dg_status st = float_only(k, k->in[0].dtype);
    if (st)
        return st;
    int64_t rows, C;
    rows_cols(&k->in[0].shape, &rows, &C);
    if ((st = bn_check(k, 1, 2, C)))
        return st;
    for (int i = 0; i < 3; i++)
        if ((st = dgr_kctx_alloc_output(k, i)))
            return st;
    double eps = dgc_attr_f(k->node, DGC_AT_epsilon);
    double *mean = dg_calloc((size_t)(2 * C + 1), sizeof *mean);
    if (!mean)
        return dg_err_nomem(k->err, "BatchNorm");
    double *var = mean + C;
    if (k->in[0].dtype == DG_F32)
        BN_FWD(float);
    else
        BN_FWD(double);
    dg_free(mean);
    return DG_OK;
}
DGR_KERNEL(BatchNorm, dgr_k_batchnorm);

/* dx = scale * rstd * (dy - doffset/R - xhat * dscale/R) */
#define BN_BWD(T)                                                            \
    do {                                                                     \
        const T *dy = dgr_cpu_ptr(&k->in[0]);                                \
        const T *x = dgr_cpu_ptr(&k->in[1]);                                 \
        const T *sc = dgr_cpu_ptr(&k->in[2]);                                \
        const T *mu = dgr_cpu_ptr(&k->in[3]);                                \
        const T *va = dgr_cpu_ptr(&k->in[4]);                                \
        T *dx = dgr_cpu_ptr(&k->out[0]);                                     \
        T *dsc = dgr_cpu_ptr(&k->out[1]);                                    \
        T *dof = dgr_cpu_ptr(&k->out[2]);                                    \
        for (int64_t c = 0; c < C; c++)                                      \
            rstd[c] = 1.0 / sqrt((double)va[c] + eps);                       \
        for (int64_t r = 0; r < rows; r++)                                   \
            for (int64_t c = 0; c < C; c++) {                                \
                double g = dy[r * C + c];                                    \
                sdy[c] += g;                                                 \
                sdx[c] += g * (x[r * C + c] - mu[c]) * rstd[c];              \
            }                                                                \
        for (int64_t c = 0; c < C; c++) {                                    \
            dsc[c] = (T)sdx[c];                                              \
            dof[c] = (T)sdy[c];                                              \
        }                                                                    \
        double inv = rows ? 1.0 / (double)rows : 0;                          \
        for (int64_t r = 0; r < rows; r++)                                   \
            for (int64_t c = 0; c < C; c++) {                                \
                double xh = (x[r * C + c] - mu[c]) * rstd[c];                \
                dx[r * C + c] = (T)(sc[c] * rstd[c] *                        \
                                    (dy[r * C + c] - sdy[c] * inv -          \
                                     xh * sdx[c] * inv));                    \
            }                                                                \
    } while (0)

dg_status dgr_k_batchnorm_grad(dgr_kctx *k)
{
    dg_status st = float_only(k, k->in[0].dtype);
    if (st)
        return st;
    int64_t rows, C;
    rows_cols(&k->in[1].shape, &rows, &C);
    if (dg_shape_numel(&k->in[0].shape) != rows * C)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': dy and x shapes differ",
                      k->node->name);
    if ((st = bn_check(k, 2, 4, C)))
        return st;
    for (int i = 0; i < 3; i++)
        if ((st = dgr_kctx_alloc_output(k, i)))
            return st;
    double eps = dgc_attr_f(k->node, DGC_AT_epsilon);
    double *rstd = dg_calloc((size_t)(3 * C + 1), sizeof *rstd);
    if (!rstd)
        return dg_err_nomem(k->err, "BatchNormGrad");
    double *sdy = rstd + C, *sdx = sdy + C;
    if (k->in[0].dtype == DG_F32)
        BN_BWD(float);
    else
        BN_BWD(double);
    dg_free(rstd);
    return DG_OK;
}
DGR_KERNEL(BatchNormGrad, dgr_k_batchnorm_grad);
