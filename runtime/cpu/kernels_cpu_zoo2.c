/*
 * kernels_cpu_zoo2.c -- CPU kernels of issue 22's short round: Where
 * (tf.where with one input: the int64 coordinates of the true elements in
 * row-major order, [n, rank], n counted from the data before the output is
 * allocated, as Unique sizes its own); LRN and LRNGrad (float32 NHWC, in
 * TF's CPU kernels' order of sums), AvgPool3D and AvgPool3DGrad (NDHWC,
 * padding not counted), MaxPool3DGrad (TF's CPU kernel's selection: every
 * cell within 1e-5 of its window's max) and MaxPool3DGradGrad;
 * Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 (NDHWC, gather form,
 * double sums).
 */
#include "kernels_cpu.h"
#include "infer.h"
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
DGR_KERNEL(Where, dgr_k_where);

/* ---- LRN, LRNGrad ---------------------------------------------------------- */

typedef struct lrn_attrs {
    int64_t r, rows, depth; /* depth_radius; rows of depth elements */
    float bias, alpha, beta;
} lrn_attrs;

/* Allocate output 0 and read the attrs and the row geometry into *a. */
static dg_status lrn_begin(dgr_kctx *k, lrn_attrs *a)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    a->r = dgc_attr_i(k->node, DGC_AT_depth_radius);
    a->bias = (float)dgc_attr_f(k->node, DGC_AT_bias);
    a->alpha = (float)dgc_attr_f(k->node, DGC_AT_alpha);
    a->beta = (float)dgc_attr_f(k->node, DGC_AT_beta);
    a->depth = k->in[0].shape.dims[3];
    a->rows = a->depth ? dg_shape_numel(&k->in[0].shape) / a->depth : 0;
    return DG_OK;
}

/* The window [*b, *e) of depth index j in a row of `depth`. */
static void lrn_window(const lrn_attrs *a, int64_t j, int64_t *b, int64_t *e)
{
    *b = j - a->r < 0 ? 0 : j - a->r;
    *e = j + a->r + 1 > a->depth ? a->depth : j + a->r + 1;
}

/* bias + alpha * the sum of x[q]^2 over j's window in one depth row. */
static float lrn_norm(const float *x, int64_t j, const lrn_attrs *a)
{
    int64_t b, e;
    lrn_window(a, j, &b, &e);
    float s = 0;
    for (int64_t q = b; q < e; q++)
        s += x[q] * x[q];
    return a->bias + a->alpha * s;
}

static void lrn_fwd(dgr_kctx *k, const lrn_attrs *a)
{
    int64_t depth = a->depth;
    const float *x = dgr_cpu_ptr(&k->in[0]);
    float *y = dgr_cpu_ptr(&k->out[0]);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < depth; j++)
            y[i * depth + j] = x[i * depth + j] *
                powf(lrn_norm(x + i * depth, j, a), -a->beta);
}

/* TF's LRNGradOp: dx[q] += dy[j] * (-2 alpha beta x[q] y[j] / norm[j]
 * + (q == j) norm[j]^-beta) for q in j's window. */
static void lrn_bwd(dgr_kctx *k, const lrn_attrs *a)
{
    int64_t depth = a->depth;
    const float *dy = dgr_cpu_ptr(&k->in[0]);
    const float *x = dgr_cpu_ptr(&k->in[1]);
    const float *y = dgr_cpu_ptr(&k->in[2]);
    float *dx = dgr_cpu_ptr(&k->out[0]);
    memset(dx, 0, sizeof *dx * (size_t)(a->rows * depth));
    for (int64_t i = 0; i < a->rows; i++) {
        const float *xr = x + i * depth;
        float *dxr = dx + i * depth;
        for (int64_t j = 0; j < depth; j++) {
            float norm = lrn_norm(xr, j, a);
            int64_t b, e;
            lrn_window(a, j, &b, &e);
            for (int64_t q = b; q < e; q++) {
                float d = -2.0f * a->alpha * a->beta * xr[q] *
                          y[i * depth + j] / norm;
                if (q == j)
                    d += powf(norm, -a->beta);
                dxr[q] += d * dy[i * depth + j];
            }
        }
    }
}

static dg_status lrn_run(dgr_kctx *k, void (*body)(dgr_kctx *,
                                                   const lrn_attrs *))
{
    lrn_attrs a;
    dg_status st = lrn_begin(k, &a);
    if (!st)
        body(k, &a);
    return st;
}

dg_status dgr_k_lrn(dgr_kctx *k) { return lrn_run(k, lrn_fwd); }
DGR_KERNEL(LRN, dgr_k_lrn);
dg_status dgr_k_lrn_grad(dgr_kctx *k) { return lrn_run(k, lrn_bwd); }
DGR_KERNEL(LRNGrad, dgr_k_lrn_grad);

/* ---- AvgPool3D, AvgPool3DGrad, MaxPool3DGrad(Grad) ---------------------- */

static double fget(const void *p, dg_dtype t, int64_t i)
{
    return t == DG_F32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

static void acc_at(void *p, dg_dtype t, int64_t i, double v)
{
    if (t == DG_F32)
        ((float *)p)[i] += (float)v;
    else
        ((double *)p)[i] += v;
}

/* Whether orig_input value v is its window's max m for MaxPool3DGrad: TF's
 * CPU kernel's test, |v - m| < 1e-5 in the dtype. */
static int near_max(dg_dtype t, double v, double m)
{
    return t == DG_F32 ? fabsf((float)v - (float)m) < 1e-5f
                       : fabs(v - m) < 1e-5;
}

enum { AVG_FWD, AVG_GRAD, MAX_GRAD, MAX_GRADGRAD };

/* For each output element of the pooling of x (shape xs) into os: the
 * mean of its window's cells inside x (AVG_FWD), or each such cell of
 * dx += dy / their count (AVG_GRAD), or += dy where the cell of orig_input
 * mx is near the output's max my[] (MAX_GRAD, near_max), or the output
 * takes a[] at the first cell (in d, h, w order) whose mx equals my[]
 * exactly (MAX_GRADGRAD, TF's MaxPooling3dGradGradOp; 0 when none).
 * a: x, dy or MaxPool3DGradGrad's grad (shaped as x); b: y or dx (zeroed). */
static void pool3d(const dgr_kctx *k, const dg_shape *xs, const dg_shape *os,
                   const void *a, void *b, int mode, const void *mx,
                   const void *my)
{
    const dgc_attr *sa = dgc_attr_at(k->node, DGC_AT_strides);
    const dgc_attr *ka = dgc_attr_at(k->node, DGC_AT_ksize);
    const dgc_attr *pa = dgc_attr_at(k->node, DGC_AT_padding);
    int same = pa && pa->s && strcmp(pa->s, "SAME") == 0;
    dg_dtype t = k->out[0].dtype;
    int64_t K[3], S[3], P[3], lo[3], hi[3];
    for (int d = 0; d < 3; d++) {
        K[d] = ka->ints[1 + d];
        S[d] = sa->ints[1 + d];
        dgc_win3d(xs->dims[1 + d], K[d], S[d], 1, same, &P[d]);
    }
    int64_t C = xs->dims[4], oi = 0;
    for (int64_t n = 0; n < os->dims[0]; n++)
        for (int64_t z = 0; z < os->dims[1]; z++)
            for (int64_t y = 0; y < os->dims[2]; y++)
                for (int64_t w = 0; w < os->dims[3]; w++, oi += C) {
                    int64_t o[3] = {z, y, w}, cnt = 1;
                    for (int d = 0; d < 3; d++) {
                        lo[d] = o[d] * S[d] - P[d];
                        hi[d] = lo[d] + K[d];
                        lo[d] = lo[d] < 0 ? 0 : lo[d];
                        hi[d] = hi[d] > xs->dims[1 + d] ? xs->dims[1 + d]
                                                        : hi[d];
                        cnt *= hi[d] > lo[d] ? hi[d] - lo[d] : 0;
                    }
                    for (int64_t c = 0; c < C; c++) {
                        double acc = 0, m = mode >= MAX_GRAD
                                                ? fget(my, t, oi + c) : 0;
                        int found = 0;
                        for (int64_t iz = lo[0]; iz < hi[0]; iz++)
                            for (int64_t iy = lo[1]; iy < hi[1]; iy++)
                                for (int64_t ix = lo[2]; ix < hi[2]; ix++) {
                                    int64_t xi = (((n * xs->dims[1] + iz) *
                                                   xs->dims[2] + iy) *
                                                  xs->dims[3] + ix) * C + c;
                                    if (mode == AVG_FWD)
                                        acc += fget(a, t, xi);
                                    else if (mode == AVG_GRAD)
                                        acc_at(b, t, xi,
                                             fget(a, t, oi + c) / (double)cnt);
                                    else if (mode == MAX_GRAD &&
                                             near_max(t, fget(mx, t, xi), m))
                                        acc_at(b, t, xi, fget(a, t, oi + c));
                                    else if (mode == MAX_GRADGRAD && !found &&
                                             fget(mx, t, xi) == m) {
                                        found = 1;
                                        acc = fget(a, t, xi);
                                    }
                                }
                        if (mode == AVG_FWD)
                            acc_at(b, t, oi + c, cnt ? acc / (double)cnt : 0);
                        else if (mode == MAX_GRADGRAD)
                            acc_at(b, t, oi + c, acc);
                    }
                }
}

/* Output 0 allocated and zeroed, then pool3d: AVG_FWD pools input 0 into
 * it, AVG_GRAD spreads input 1 (dy) back over it, MAX_GRAD input 2 (dy)
 * by inputs 0 and 1 (orig_input, orig_output), MAX_GRADGRAD picks input
 * 2 (shaped as orig_input) by them. */
static dg_status pool3d_run(dgr_kctx *k, int mode)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dgr_value *o = &k->out[0];
    int mx = mode >= MAX_GRAD;
    const dgr_value *a = &k->in[mx ? 2 : mode];
    void *p = dgr_cpu_ptr(o);
    memset(p, 0, (size_t)dg_shape_numel(&o->shape) * dg_dtype_size(o->dtype));
    const dg_shape *xs = mode == AVG_GRAD || mode == MAX_GRAD ? &o->shape
                         : mx ? &k->in[0].shape : &a->shape;
    const dg_shape *os = mode == AVG_FWD || mode == MAX_GRADGRAD
                             ? &o->shape : &a->shape;
    pool3d(k, xs, os, dgr_cpu_ptr(a), p, mode,
           mx ? dgr_cpu_ptr(&k->in[0]) : NULL,
           mx ? dgr_cpu_ptr(&k->in[1]) : NULL);
    return DG_OK;
}

dg_status dgr_k_avg_pool3d(dgr_kctx *k) { return pool3d_run(k, AVG_FWD); }
DGR_KERNEL(AvgPool3D, dgr_k_avg_pool3d);
dg_status dgr_k_avg_pool3d_grad(dgr_kctx *k)
{
    return pool3d_run(k, AVG_GRAD);
}
dg_status dgr_k_max_pool3d_grad(dgr_kctx *k)
{
    return pool3d_run(k, MAX_GRAD);
}
DGR_KERNEL(MaxPool3DGrad, dgr_k_max_pool3d_grad);
dg_status dgr_k_max_pool3d_grad_grad(dgr_kctx *k)
{
    return pool3d_run(k, MAX_GRADGRAD);
}
DGR_KERNEL(MaxPool3DGradGrad, dgr_k_max_pool3d_grad_grad);

/* ---- Conv3DBackpropInputV2 (Conv3DTranspose), Conv3DBackpropFilterV2 ------ */

/* One Conv3D's geometry: input xs, filter ws, output ds (NDHWC). */
typedef struct c3 {
    int64_t K[3], S[3], D[3], P[3], I[3], O[3], N, C, OC;
} c3;

static dg_status c3_geom(dgr_kctx *k, const dg_shape *xs, const dg_shape *ws,
                         const dg_shape *ds, c3 *g)
{
    const dgc_attr *sa = dgc_attr_at(k->node, DGC_AT_strides);
    const dgc_attr *da = dgc_attr_at(k->node, DGC_AT_dilations);
    const dgc_attr *pa = dgc_attr_at(k->node, DGC_AT_padding);
    int same = pa && pa->s && strcmp(pa->s, "SAME") == 0;
    for (int d = 0; d < 3; d++) {
        g->K[d] = ws->dims[d];
        g->S[d] = sa->ints[1 + d];
        g->D[d] = da && da->n == 5 ? da->ints[1 + d] : 1;
        g->I[d] = xs->dims[1 + d];
        g->O[d] = ds->dims[1 + d];
        int64_t o = dgc_win3d(g->I[d], g->K[d], g->S[d], g->D[d], same,
                              &g->P[d]);
        if (o != g->O[d])
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': out_backprop's "
                          "dim %d is %lld, Conv3D of the input gives %lld",
                          k->node->name, 1 + d, (long long)g->O[d],
                          (long long)o);
    }
    g->N = xs->dims[0];
    g->C = xs->dims[4];
    g->OC = ds->dims[4];
    if (ws->dims[3] != g->C || ws->dims[4] != g->OC || ds->dims[0] != g->N)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': filter [%lld, %lld] "
                      "does not map %lld input to %lld output channels",
                      k->node->name, (long long)ws->dims[3],
                      (long long)ws->dims[4], (long long)g->C,
                      (long long)g->OC);
    return DG_OK;
}

/* The output position q[] that input position at[] meets through filter
 * cell cell[] (oz * S + a * D - P = iz per dim), or 0 when none. */
static int c3_hit(const c3 *g, const int64_t *at, const int64_t *cell,
                  int64_t *q)
{
    for (int d = 0; d < 3; d++) {
        int64_t t = at[d] + g->P[d] - cell[d] * g->D[d];
        if (t < 0 || t % g->S[d] || t / g->S[d] >= g->O[d])
            return 0;
        q[d] = t / g->S[d];
    }
    return 1;
}

static void st_at(void *p, dg_dtype t, int64_t i, double v)
{
    if (t == DG_F32)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

/* dx[n, iz, iy, ix, ci] (shape inferred from input_sizes or the input) =
 * the sum over the filter's cells and output channels that Conv3D carried
 * it to: dy[n, oz, oy, ox, co] * w[a, b, c, ci, co], in double in that
 * order. */
dg_status dgr_k_conv3d_bp_input(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    c3 g;
    if (st || (st = c3_geom(k, &k->out[0].shape, &k->in[1].shape,
                            &k->in[2].shape, &g)))
        return st;
    dg_dtype t = k->out[0].dtype;
    const void *w = dgr_cpu_ptr(&k->in[1]), *dy = dgr_cpu_ptr(&k->in[2]);
    void *dx = dgr_cpu_ptr(&k->out[0]);
    int64_t xi = 0, at[3], q[3], nk = g.K[0] * g.K[1] * g.K[2];
    for (int64_t n = 0; n < g.N; n++)
        for (at[0] = 0; at[0] < g.I[0]; at[0]++)
            for (at[1] = 0; at[1] < g.I[1]; at[1]++)
                for (at[2] = 0; at[2] < g.I[2]; at[2]++)
                    for (int64_t ci = 0; ci < g.C; ci++, xi++) {
                        double acc = 0;
                        for (int64_t a = 0; a < nk; a++) {
                            int64_t cell[3] = {a / (g.K[1] * g.K[2]),
                                               a / g.K[2] % g.K[1],
                                               a % g.K[2]};
                            if (!c3_hit(&g, at, cell, q))
                                continue;
                            int64_t yb = (((n * g.O[0] + q[0]) * g.O[1] +
                                           q[1]) * g.O[2] + q[2]) * g.OC;
                            int64_t wb = (a * g.C + ci) * g.OC;
                            for (int64_t co = 0; co < g.OC; co++)
                                acc += fget(dy, t, yb + co) *
                                       fget(w, t, wb + co);
                        }
                        st_at(dx, t, xi, acc);
                    }
    return DG_OK;
}
DGR_KERNEL(Conv3DBackpropInputV2, dgr_k_conv3d_bp_input);

/* dw[a, b, c, ci, co] (shape inferred from filter_sizes or the filter) =
 * the sum over the batch and the input positions that cell (a, b, c)
 * carried to an output: x[n, iz, iy, ix, ci] * dy[n, oz, oy, ox, co]. */
dg_status dgr_k_conv3d_bp_filter(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    c3 g;
    if (st || (st = c3_geom(k, &k->in[0].shape, &k->out[0].shape,
                            &k->in[2].shape, &g)))
        return st;
    dg_dtype t = k->out[0].dtype;
    const void *x = dgr_cpu_ptr(&k->in[0]), *dy = dgr_cpu_ptr(&k->in[2]);
    void *dw = dgr_cpu_ptr(&k->out[0]);
    int64_t wi = 0, at[3], q[3], nk = g.K[0] * g.K[1] * g.K[2];
    for (int64_t a = 0; a < nk; a++) {
        int64_t cell[3] = {a / (g.K[1] * g.K[2]), a / g.K[2] % g.K[1],
                           a % g.K[2]};
        for (int64_t ci = 0; ci < g.C; ci++)
            for (int64_t co = 0; co < g.OC; co++, wi++) {
                double acc = 0;
                for (int64_t n = 0; n < g.N; n++)
                    for (at[0] = 0; at[0] < g.I[0]; at[0]++)
                        for (at[1] = 0; at[1] < g.I[1]; at[1]++)
                            for (at[2] = 0; at[2] < g.I[2]; at[2]++) {
                                if (!c3_hit(&g, at, cell, q))
                                    continue;
                                int64_t xb = (((n * g.I[0] + at[0]) * g.I[1] +
                                               at[1]) * g.I[2] + at[2]) * g.C;
                                int64_t yb = (((n * g.O[0] + q[0]) * g.O[1] +
                                               q[1]) * g.O[2] + q[2]) * g.OC;
                                acc += fget(x, t, xb + ci) *
                                       fget(dy, t, yb + co);
                            }
                st_at(dw, t, wi, acc);
            }
    }
    return DG_OK;
}
DGR_KERNEL(AvgPool3DGrad, dgr_k_avg_pool3d_grad);
DGR_KERNEL(Conv3DBackpropFilterV2, dgr_k_conv3d_bp_filter);
