/*
 * kernels_cpu_zoo2.c -- CPU kernels of issue 22's short round: Where
 * (tf.where with one input: the int64 coordinates of the true elements in
 * row-major order, [n, rank], n counted from the data before the output is
 * allocated, as Unique sizes its own); LRN and LRNGrad (float32 NHWC, in
 * TF's CPU kernels' order of sums).
 */
#include "kernels_cpu.h"
#include "dg_alloc.h"

#include <math.h>
#include <string.h>

/* Whether element i of x is true (nonzero; NaN is true, as in TF). */
static int truthy(const dgr_value *x, int64_t i)
{
    const void *p = dgr_cpu_ptr(x);
    switch (x->dtype) {
    case DG_F32: return ((const float *)p)[i] != 0;
    case DG_F64: return ((const double *)p)[i] != 0;
    case DG_I32: return ((const int32_t *)p)[i] != 0;
    case DG_I64: return ((const int64_t *)p)[i] != 0;
    case DG_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return 0;
    }
}

dg_status dgr_k_where(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    const dg_shape *s = &x->shape;
    int64_t numel = dg_shape_numel(s), n = 0;
    for (int64_t i = 0; i < numel; i++)
        n += truthy(x, i);
    dgr_value *y = &k->out[0];
    y->dtype = DG_I64;
    memset(&y->shape, 0, sizeof y->shape);
    y->shape.rank = 2;
    y->shape.dims[0] = n;
    y->shape.dims[1] = s->rank;
    y->buf = dgr_buffer_new(k->dev, (size_t)(n * s->rank) * sizeof(int64_t),
                            k->stream, k->err);
    if (!y->buf)
        return k->err->code ? k->err->code : DG_E_NOMEM;
    int64_t *out = dgr_cpu_ptr(y), row = 0;
    for (int64_t i = 0; i < numel; i++) {
        if (!truthy(x, i))
            continue;
        int64_t rest = i;
        for (int d = s->rank - 1; d >= 0; d--) {
            out[row * s->rank + d] = rest % s->dims[d];
            rest /= s->dims[d];
        }
        row++;
    }
    return DG_OK;
}

/* ---- LRN, LRNGrad ---------------------------------------------------------- */

typedef struct lrn_attrs {
    int64_t r;
    float bias, alpha, beta;
} lrn_attrs;

static lrn_attrs lrn_attrs_of(const dgr_kctx *k)
{
    lrn_attrs a;
    a.r = dgc_attr_i(k->node, DGC_AT_depth_radius);
    a.bias = (float)dgc_attr_f(k->node, DGC_AT_bias);
    a.alpha = (float)dgc_attr_f(k->node, DGC_AT_alpha);
    a.beta = (float)dgc_attr_f(k->node, DGC_AT_beta);
    return a;
}

/* bias + alpha * the sum of x[k]^2 for k within r of j in one depth row. */
static float lrn_norm(const float *x, int64_t depth, int64_t j,
                      const lrn_attrs *a)
{
    int64_t b = j - a->r < 0 ? 0 : j - a->r;
    int64_t e = j + a->r + 1 > depth ? depth : j + a->r + 1;
    float s = 0;
    for (int64_t q = b; q < e; q++)
        s += x[q] * x[q];
    return a->bias + a->alpha * s;
}

dg_status dgr_k_lrn(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    lrn_attrs a = lrn_attrs_of(k);
    const dg_shape *s = &k->in[0].shape;
    int64_t depth = s->dims[3];
    int64_t rows = depth ? dg_shape_numel(s) / depth : 0;
    const float *x = dgr_cpu_ptr(&k->in[0]);
    float *y = dgr_cpu_ptr(&k->out[0]);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < depth; j++)
            y[i * depth + j] = x[i * depth + j] *
                powf(lrn_norm(x + i * depth, depth, j, &a), -a.beta);
    return DG_OK;
}

/* TF's LRNGradOp: dx[k] += dy[j] * (-2 alpha beta x[k] y[j] / norm[j]
 * + (k == j) norm[j]^-beta) for k within depth_radius of j. */
dg_status dgr_k_lrn_grad(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    lrn_attrs a = lrn_attrs_of(k);
    const dg_shape *s = &k->in[0].shape;
    int64_t depth = s->dims[3];
    int64_t rows = depth ? dg_shape_numel(s) / depth : 0;
    const float *dy = dgr_cpu_ptr(&k->in[0]);
    const float *x = dgr_cpu_ptr(&k->in[1]);
    const float *y = dgr_cpu_ptr(&k->in[2]);
    float *dx = dgr_cpu_ptr(&k->out[0]);
    memset(dx, 0, sizeof *dx * (size_t)(rows * depth));
    for (int64_t i = 0; i < rows; i++) {
        const float *xr = x + i * depth;
        float *dxr = dx + i * depth;
        for (int64_t j = 0; j < depth; j++) {
            float norm = lrn_norm(xr, depth, j, &a);
            int64_t b = j - a.r < 0 ? 0 : j - a.r;
            int64_t e = j + a.r + 1 > depth ? depth : j + a.r + 1;
            for (int64_t q = b; q < e; q++) {
                float d = -2.0f * a.alpha * a.beta * xr[q] * y[i * depth + j] /
                          norm;
                if (q == j)
                    d += powf(norm, -a.beta);
                dxr[q] += d * dy[i * depth + j];
            }
        }
    }
    return DG_OK;
}
