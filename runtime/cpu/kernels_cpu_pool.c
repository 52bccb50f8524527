/*
 * kernels_cpu_pool.c -- CPU kernels of MaxPool, AvgPool, their gradients
 * and FusedBatchNormV3 / FusedBatchNormGradV3 (NHWC or NCHW).
 *
 * Max pooling and its gradient in float32 NHWC run the channel-vector
 * loops below, one image per item (issue 23: oneDNN 2.6's MaxPoolGrad ran
 * its forward pass again for the workspace, 4.6 ms of LeNet's training
 * step against TF's 0.7, and ran as one call at any thread count); other
 * float32 pooling runs through oneDNN (average excluding padding, as TF
 * counts; NCHW max); float64 and declined cases run the generic loops.
 * Both max paths send dy to the first maximum of each window, as TF does.  Batch norm is a memory-bound pass over the
 * tensor: plain loops with double accumulators, parallel over channels.
 */
#include "kernels_cpu.h"
#include "kernels_cpu_conv.h"
#include "kernels_cpu_dnnl.h"
#include "dg_alloc.h"

#include <math.h>
#include <string.h>

typedef struct pjob {
    const dgc_nn_geom *g;
    int max;
    dgr_fbuf x, y, dy, o;
} pjob;

static int64_t xo(const dgc_nn_geom *g, int64_t n, int64_t h, int64_t w,
                  int64_t c)
{
    return dgr_nn_off(g, n, h, w, c, g->H, g->W, g->C);
}

static int64_t yo(const dgc_nn_geom *g, int64_t n, int64_t h, int64_t w,
                  int64_t c)
{
    return dgr_nn_off(g, n, h, w, c, g->OH, g->OW, g->C);
}

/* window bounds of output (oh, ow), clipped to the input */
static void window(const dgc_nn_geom *g, int64_t oh, int64_t ow, int64_t *h0,
                   int64_t *h1, int64_t *w0, int64_t *w1)
{
    *h0 = oh * g->sh - g->pt;
    *w0 = ow * g->sw - g->pl;
    *h1 = *h0 + g->KH < g->H ? *h0 + g->KH : g->H;
    *w1 = *w0 + g->KW < g->W ? *w0 + g->KW : g->W;
    if (*h0 < 0)
        *h0 = 0;
    if (*w0 < 0)
        *w0 = 0;
}

/* items r = n * C + c: every output of channel c of example n */
DGR_HOT static void pool_items(void *arg, int64_t r0, int64_t r1)
{
    const pjob *j = arg;
    const dgc_nn_geom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / g->C, c = r % g->C;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                int64_t h0, h1, w0, w1;
                window(g, oh, ow, &h0, &h1, &w0, &w1);
                double acc = j->max ? -INFINITY : 0;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) {
                        double v = fb_ld(j->x, xo(g, n, h, w, c));
                        acc = j->max ? (v > acc ? v : acc) : acc + v;
                    }
                int64_t cnt = (h1 - h0) * (w1 - w0);
                if (!j->max)
                    acc = cnt > 0 ? acc / (double)cnt : 0;
                fb_st(j->o, yo(g, n, oh, ow, c), acc);
            }
    }
}

/* gradients: dx of channel c of example n (zeroed by the caller) */
DGR_HOT static void pool_grad_items(void *arg, int64_t r0, int64_t r1)
{
    const pjob *j = arg;
    const dgc_nn_geom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / g->C, c = r % g->C;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                int64_t h0, h1, w0, w1;
                window(g, oh, ow, &h0, &h1, &w0, &w1);
                double d = fb_ld(j->dy, yo(g, n, oh, ow, c));
                if (j->max) { /* the first maximum gets dy (TF) */
                    int64_t at = -1;
                    double best = -INFINITY;
                    for (int64_t h = h0; h < h1; h++)
                        for (int64_t w = w0; w < w1; w++) {
                            double v = fb_ld(j->x, xo(g, n, h, w, c));
                            if (at < 0 || v > best) {
                                best = v;
                                at = xo(g, n, h, w, c);
                            }
                        }
                    if (at >= 0)
                        fb_st(j->o, at, fb_ld(j->o, at) + d);
                    continue;
                }
                int64_t cnt = (h1 - h0) * (w1 - w0);
                if (cnt <= 0)
                    continue;
                d /= (double)cnt;
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++) {
                        int64_t i = xo(g, n, h, w, c);
                        fb_st(j->o, i, fb_ld(j->o, i) + d);
                    }
            }
    }
}

/* ---- float32 NHWC max pooling: channels are contiguous, so a window
 * position is a vector of C floats and the maximum (and, for the
 * gradient, the first position holding it) is kept per channel ---------- */

typedef struct mpjob {
    const dgc_nn_geom *g;
    const float *x, *dy; /* dy: NULL for the forward pass */
    float *o;            /* y, or dx */
    int relu;            /* gradient: dy only where x > 0 (ReluGrad) */
} mpjob;

#define MP_LANES 64

/* Channels [c0, c0 + cn) of output (oh, ow) of the image at x: their
 * maximum, and with at != NULL the offset of its first position (scan
 * order h, w, as TF); best = -inf, at = -1 for an empty window.  The
 * lane loops are branch-free so that they vectorise. */
DGR_HOT static void mp_window(const dgc_nn_geom *g, const float *restrict x,
                      int64_t oh, int64_t ow, int64_t c0, int cn,
                      float *restrict best, int32_t *restrict at)
{
    int64_t h0, h1, w0, w1;
    window(g, oh, ow, &h0, &h1, &w0, &w1);
    int32_t first = (int32_t)((h0 * g->W + w0) * g->C + c0);
    if (h0 >= h1 || w0 >= w1) {
        for (int c = 0; c < cn; c++)
            best[c] = -INFINITY;
        if (at)
            for (int c = 0; c < cn; c++)
                at[c] = -1;
        return;
    }
    for (int c = 0; c < cn; c++)
        best[c] = x[first + c];
    if (at)
        for (int c = 0; c < cn; c++)
            at[c] = first + c;
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = h == h0 ? w0 + 1 : w0; w < w1; w++) {
            int32_t off = (int32_t)((h * g->W + w) * g->C + c0);
            const float *restrict p = x + off;
            if (!at) {
                for (int c = 0; c < cn; c++)
                    best[c] = p[c] > best[c] ? p[c] : best[c];
                continue;
            }
            for (int c = 0; c < cn; c++) { /* masks: no branch */
                int32_t m = -(int32_t)(p[c] > best[c]);
                best[c] = p[c] > best[c] ? p[c] : best[c];
                at[c] = (at[c] & ~m) | ((off + c) & m);
            }
        }
}

/* Does every x position lie in at most one window, all windows inside
 * the image (stride = window, nothing padded before: the 2x2 / 2 pools of
 * a CNN)? */
static int mp_tiled(const dgc_nn_geom *g)
{
    return g->sh == g->KH && g->sw == g->KW && g->pt == 0 && g->pl == 0 &&
           g->OH * g->KH <= g->H && g->OW * g->KW <= g->W &&
           g->KH * g->KW <= 64;
}

/* The gradient of image n over tiled windows: each position's dx written
 * once, dy where it is its window's first maximum (and, with relu, that
 * maximum is > 0), else 0 -- the values of the general loop below, with no
 * zeroing pass and no scatter (pool1 of LeNet's step: 3.6 -> ~1 ms). */
DGR_HOT static void mp_grad_tiled(const mpjob *j, int64_t n)
{
    const dgc_nn_geom *g = j->g;
    int64_t C = g->C, W = g->W, KW = g->KW;
    int K = (int)(g->KH * g->KW);
    const float *x = j->x + n * g->H * W * C;
    const float *dy = j->dy + n * g->OH * g->OW * C;
    float *o = j->o + n * g->H * W * C;
    int32_t all = j->relu ? 0 : -1;
    float best[MP_LANES];
    int32_t at[MP_LANES], keep[MP_LANES];
    for (int64_t oh = 0; oh < g->OH; oh++) {
        for (int64_t ow = 0; ow < g->OW; ow++) {
            int64_t base = (oh * g->KH * W + ow * KW) * C;
            const float *d = dy + (oh * g->OW + ow) * C;
            for (int64_t c0 = 0; c0 < C; c0 += MP_LANES) {
                int cn = (int)(C - c0 < MP_LANES ? C - c0 : MP_LANES);
                const float *restrict p = x + base + c0;
                for (int c = 0; c < cn; c++) {
                    best[c] = p[c];
                    at[c] = 0;
                }
                for (int k = 1; k < K; k++) {
                    p = x + base + ((k / KW) * W + k % KW) * C + c0;
                    for (int c = 0; c < cn; c++) { /* masks: no branch */
                        int32_t m = -(int32_t)(p[c] > best[c]);
                        best[c] = p[c] > best[c] ? p[c] : best[c];
                        at[c] = (at[c] & ~m) | (k & m);
                    }
                }
                for (int c = 0; c < cn; c++) /* dy's bits, or 0 */
                    keep[c] = all | -(int32_t)(best[c] > 0);
                for (int k = 0; k < K; k++) {
                    float *restrict q = o + base + ((k / KW) * W + k % KW) * C;
                    for (int c = 0; c < cn; c++) {
                        uint32_t b;
                        memcpy(&b, &d[c0 + c], sizeof b);
                        b &= (uint32_t)(keep[c] & -(int32_t)(at[c] == k));
                        memcpy(&q[c0 + c], &b, sizeof b);
                    }
                }
            }
        }
        /* columns right of the last window */
        for (int64_t h = oh * g->KH; h < (oh + 1) * g->KH; h++)
            if (g->OW * KW < W)
                memset(o + (h * W + g->OW * KW) * C, 0,
                       sizeof *o * (size_t)((W - g->OW * KW) * C));
    }
    /* rows below the last window */
    if (g->OH * g->KH < g->H)
        memset(o + g->OH * g->KH * W * C, 0,
               sizeof *o * (size_t)((g->H - g->OH * g->KH) * W * C));
}

DGR_HOT static void mp_images(void *arg, int64_t n0, int64_t n1)
{
    const mpjob *j = arg;
    const dgc_nn_geom *g = j->g;
    int64_t xi = g->H * g->W * g->C, yi = g->OH * g->OW * g->C;
    float best[MP_LANES];
    int32_t at[MP_LANES];
    for (int64_t n = n0; n < n1; n++) {
        const float *x = j->x + n * xi;
        float *o = j->o + n * (j->dy ? xi : yi);
        if (j->dy && mp_tiled(g)) {
            mp_grad_tiled(j, n);
            continue;
        }
        if (j->dy) /* the image's dx, zeroed while it is in cache */
            memset(o, 0, sizeof *o * (size_t)xi);
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                int64_t yo_ = (oh * g->OW + ow) * g->C;
                for (int64_t c0 = 0; c0 < g->C; c0 += MP_LANES) {
                    int cn = (int)(g->C - c0 < MP_LANES ? g->C - c0
                                                        : MP_LANES);
                    if (!j->dy) { /* the maximum straight into y */
                        mp_window(g, x, oh, ow, c0, cn, o + yo_ + c0, NULL);
                        continue;
                    }
                    mp_window(g, x, oh, ow, c0, cn, best, at);
                    const float *d = j->dy + n * yi + yo_ + c0;
                    for (int c = 0; c < cn; c++)
                        if (at[c] >= 0 && (!j->relu || best[c] > 0))
                            o[at[c]] += d[c];
                }
            }
    }
}

/* Max pooling (dy NULL) or its gradient (with relu: only where x > 0) of
 * float32 NHWC, when the loops here take it: 1 done, 0 not this case. */
static int mp_nhwc(dgr_kctx *k, const dgc_nn_geom *g, const float *x,
                   const float *dy, float *o, int relu)
{
    if (g->nchw || g->H * g->W * g->C >= INT32_MAX)
        return 0;
    mpjob j = {g, x, dy, o, relu};
    int64_t per = g->H * g->W * g->C + 1;
    dgr_parallel_for(k->dev->intra, g->N, DGR_CPU_PAR_MIN / per + 1,
                     mp_images, &j);
    return 1;
}

static int is_f64(const dgr_value *v) { return v->dtype == DG_F64; }

dg_status dgr_k_pool(dgr_kctx *k)
{
    dgc_nn_geom g;
    dg_status s = dgr_nn_geom(k, DGC_NN_POOL, &k->in[0].shape, NULL, &g);
    if (s || (s = dgr_kctx_alloc_output(k, 0)))
        return s;
    int max = k->node->op == DGC_OPID_MaxPool;
    if (dg_shape_numel(&k->out_types[0].shape) == 0)
        return DG_OK;
    if (k->in[0].dtype == DG_F32 && max &&
        mp_nhwc(k, &g, dgr_cpu_ptr(&k->in[0]), NULL, dgr_cpu_ptr(&k->out[0]),
                0))
        return DG_OK;
    if (k->in[0].dtype == DG_F32) {
        int rc = dgr_dnnl_run(k->dev->intra,
                              max ? DGR_DNNL_MAXPOOL : DGR_DNNL_AVGPOOL, &g, 0,
                              dgr_cpu_ptr(&k->in[0]), NULL,
                              dgr_cpu_ptr(&k->out[0]));
        if (rc < 0)
            return dg_err_nomem(k->err, k->node->name);
        if (rc == 0)
            return DG_OK;
    }
    int f = is_f64(&k->in[0]);
    pjob j = {&g, max, {dgr_cpu_ptr(&k->in[0]), f}, {NULL, f}, {NULL, f},
              {dgr_cpu_ptr(&k->out[0]), f}};
    dgr_parallel_for(k->dev->intra, g.N * g.C, 1, pool_items, &j);
    return DG_OK;
}
DGR_KERNEL(MaxPool, dgr_k_pool);
DGR_KERNEL(AvgPool, dgr_k_pool);

/* items r: elements; dx[r] = x[r] > 0 ? dx[r] : 0 */
DGR_HOT static void relu_mask(void *arg, int64_t r0, int64_t r1)
{
    const pjob *j = arg;
    for (int64_t r = r0; r < r1; r++)
        if (!(fb_ld(j->x, r) > 0))
            fb_st(j->o, r, 0);
}

/* pool_grad's oneDNN and generic-loop paths. */
static dg_status pool_grad_other(dgr_kctx *k, const dgc_nn_geom *gp,
                                 int max, const dgr_value *x,
                                 const dgr_value *dy)
{
    dgc_nn_geom g = *gp;
    int64_t nx = dg_shape_numel(&k->out_types[0].shape);
    if (dy->dtype == DG_F32) {
        int rc = dgr_dnnl_run(k->dev->intra,
                              max ? DGR_DNNL_MAXPOOL_BWD : DGR_DNNL_AVGPOOL_BWD,
                              &g, 0, max ? dgr_cpu_ptr(x) : dgr_cpu_ptr(dy),
                              max ? dgr_cpu_ptr(dy) : NULL,
                              dgr_cpu_ptr(&k->out[0]));
        if (rc < 0)
            return dg_err_nomem(k->err, k->node->name);
        if (rc == 0)
            return DG_OK;
    }
    int f = is_f64(dy);
    memset(dgr_cpu_ptr(&k->out[0]), 0, (size_t)nx * dg_dtype_size(dy->dtype));
    pjob j = {&g, max, {x ? dgr_cpu_ptr(x) : NULL, f}, {NULL, f},
              {dgr_cpu_ptr(dy), f}, {dgr_cpu_ptr(&k->out[0]), f}};
    dgr_parallel_for(k->dev->intra, g.N * g.C, 1, pool_grad_items, &j);
    return DG_OK;
}

/* Max pooling's (max) or average pooling's gradient; relu (max only):
 * then zero where x <= 0 (_FusedMaxPoolGrad). */
static dg_status pool_grad(dgr_kctx *k, int max, const dgr_value *x,
                           const dgr_value *dy, int relu)
{
    dgc_nn_geom g;
    dg_status s = dgr_nn_geom(k, DGC_NN_POOL, &k->out_types[0].shape, NULL,
                              &g);
    if (s || (s = dgr_kctx_alloc_output(k, 0)))
        return s;
    int64_t nx = dg_shape_numel(&k->out_types[0].shape);
    if (nx == 0)
        return DG_OK;
    if (dy->dtype == DG_F32 && max && x->dtype == DG_F32 &&
        mp_nhwc(k, &g, dgr_cpu_ptr(x), dgr_cpu_ptr(dy),
                dgr_cpu_ptr(&k->out[0]), relu))
        return DG_OK;
    dg_status st = pool_grad_other(k, &g, max, x, dy);
    if (st || !relu)
        return st;
    int f = is_f64(dy);
    pjob j = {&g, max, {dgr_cpu_ptr(x), f}, {NULL, f}, {NULL, f},
              {dgr_cpu_ptr(&k->out[0]), f}};
    dgr_parallel_for(k->dev->intra, nx, DGR_CPU_PAR_MIN, relu_mask, &j);
    return DG_OK;
}

/* (orig_input, orig_output, dy) */
dg_status dgr_k_max_pool_grad(dgr_kctx *k)
{
    return pool_grad(k, 1, &k->in[0], &k->in[2], 0);
}
DGR_KERNEL(MaxPoolGrad, dgr_k_max_pool_grad);

dg_status dgr_k_fused_max_pool_grad(dgr_kctx *k)
{
    return pool_grad(k, 1, &k->in[0], &k->in[2], 1);
}
DGR_KERNEL(_FusedMaxPoolGrad, dgr_k_fused_max_pool_grad);

/* (orig_input_shape, dy) */
dg_status dgr_k_avg_pool_grad(dgr_kctx *k)
{
    return pool_grad(k, 0, NULL, &k->in[1], 0);
}
DGR_KERNEL(AvgPoolGrad, dgr_k_avg_pool_grad);

/* ---- fused batch norm ---------------------------------------------------- */

typedef struct bnjob {
    int nchw;
    int64_t N, HW, C;
    int train, grad;
    double eps, factor;
    dgr_fbuf x, dy, scale, offset, mean, var;    /* inputs */
    dgr_fbuf y, bmean, bvar, r1, r2;             /* outputs (fwd) */
    dgr_fbuf dx, dscale, doffset;                /* outputs (grad) */
} bnjob;

static inline int64_t bn_at(const bnjob *j, int64_t n, int64_t i, int64_t c)
{
    return j->nchw ? (n * j->C + c) * j->HW + i : (n * j->HW + i) * j->C + c;
}

DGR_HOT static void bn_fwd_chans(void *arg, int64_t c0, int64_t c1)
{
    const bnjob *j = arg;
    double cnt = (double)(j->N * j->HW);
    for (int64_t c = c0; c < c1; c++) {
        double mu, var;
        if (j->train) {
            double s = 0, ss = 0;
            for (int64_t n = 0; n < j->N; n++)
                for (int64_t i = 0; i < j->HW; i++)
                    s += fb_ld(j->x, bn_at(j, n, i, c));
            mu = cnt > 0 ? s / cnt : 0;
            for (int64_t n = 0; n < j->N; n++)
                for (int64_t i = 0; i < j->HW; i++) {
                    double d = fb_ld(j->x, bn_at(j, n, i, c)) - mu;
                    ss += d * d;
                }
            var = cnt > 0 ? ss / cnt : 0;
        } else {
            mu = fb_ld(j->mean, c);
            var = fb_ld(j->var, c);
        }
        double a = fb_ld(j->scale, c) / sqrt(var + j->eps);
        double b = fb_ld(j->offset, c);
        for (int64_t n = 0; n < j->N; n++)
            for (int64_t i = 0; i < j->HW; i++) {
                int64_t at = bn_at(j, n, i, c);
                fb_st(j->y, at, (fb_ld(j->x, at) - mu) * a + b);
            }
        double bm = mu, bv = var;
        if (j->train) {
            /* TF: the running variance is the unbiased one */
            double adj = cnt > 1 ? cnt / (cnt - 1) : 1;
            bv = var * adj;
            if (j->factor != 1.0) {
                bm = (1 - j->factor) * fb_ld(j->mean, c) + j->factor * mu;
                bv = (1 - j->factor) * fb_ld(j->var, c) + j->factor * bv;
            }
        }
        fb_st(j->bmean, c, bm);
        fb_st(j->bvar, c, bv);
        fb_st(j->r1, c, mu);
        fb_st(j->r2, c, var);
    }
}

DGR_HOT static void bn_grad_chans(void *arg, int64_t c0, int64_t c1)
{
    const bnjob *j = arg;
    double cnt = (double)(j->N * j->HW);
    for (int64_t c = c0; c < c1; c++) {
        double mu = fb_ld(j->mean, c);
        double rstd = 1.0 / sqrt(fb_ld(j->var, c) + j->eps);
        double sdy = 0, sdyx = 0;
        for (int64_t n = 0; n < j->N; n++)
            for (int64_t i = 0; i < j->HW; i++) {
                int64_t at = bn_at(j, n, i, c);
                double d = fb_ld(j->dy, at);
                sdy += d;
                sdyx += d * (fb_ld(j->x, at) - mu) * rstd;
            }
        double sc = fb_ld(j->scale, c);
        for (int64_t n = 0; n < j->N; n++)
            for (int64_t i = 0; i < j->HW; i++) {
                int64_t at = bn_at(j, n, i, c);
                double d = fb_ld(j->dy, at);
                if (j->train && cnt > 0) {
                    double xh = (fb_ld(j->x, at) - mu) * rstd;
                    d = d - sdy / cnt - xh * sdyx / cnt;
                }
                fb_st(j->dx, at, sc * rstd * d);
            }
        fb_st(j->dscale, c, sdyx);
        fb_st(j->doffset, c, sdy);
    }
}

static dg_status bn_setup(dgr_kctx *k, int xi, bnjob *j)
{
    memset(j, 0, sizeof *j);
    const dg_shape *xs = &k->in[xi].shape;
    const dgc_attr *df = dgc_attr_at(k->node, DGC_AT_data_format);
    j->nchw = df && df->s && strcmp(df->s, "NCHW") == 0;
    j->N = xs->dims[0];
    j->C = xs->dims[j->nchw ? 1 : 3];
    j->HW = xs->dims[1] * xs->dims[2] * xs->dims[3] / (j->C ? j->C : 1);
    j->train = dgc_attr_b(k->node, DGC_AT_is_training);
    j->eps = dgc_attr_f(k->node, DGC_AT_epsilon);
    j->factor = dgc_attr_f(k->node, DGC_AT_exponential_avg_factor);
    for (int i = 0; i < k->n_in; i++)
        if (k->in[i].dtype != DG_F32 && k->in[i].dtype != DG_F64)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': input %d must be "
                          "float", k->node->name, i);
    for (int i = 0; i < k->n_out; i++) {
        dg_status s = dgr_kctx_alloc_output(k, i);
        if (s)
            return s;
    }
    return DG_OK;
}

static dgr_fbuf fb(const dgr_value *v)
{
    dgr_fbuf b = {dgr_cpu_ptr(v), v->dtype == DG_F64};
    return b;
}

/* ---- float32 NHWC batch norm: row-major passes --------------------------
 * The per-channel loops above stride by C through memory and dispatch
 * each element's dtype; on NHWC float32 (every Keras model) these passes
 * read rows of C channels in order and vectorise.  Per-channel sums are
 * doubles, one partial per fixed block of rows added in block order (the
 * same bits for every thread count, issue 19); the elementwise passes are
 * float, as TF's Eigen kernels compute them. */

typedef struct bnf {
    const float *x, *dy;
    float *y;
    int64_t R, C, rows;     /* rows of C channels; rows per block */
    double *part;           /* [blocks][2][C] partial sums */
    const float *mu;        /* [C] */
    const float *k1, *k2, *k3; /* [C] elementwise coefficients */
    int relu;               /* forward: y through Relu (1) or Relu6 (6) */
} bnf;

/* part[blk] = (sum x, 0) or, with mu, (sum (x - mu)^2, 0); with dy:
 * (sum dy, sum dy * (x - mu)) */
DGR_HOT static void bnf_sums(void *arg, int64_t blk, int64_t r0, int64_t r1)
{
    const bnf *j = arg;
    int64_t C = j->C;
    double *s = j->part + blk * 2 * C, *t = s + C;
    for (int64_t c = 0; c < 2 * C; c++)
        s[c] = 0;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->x + r * C;
        if (j->dy) {
            const float *d = j->dy + r * C;
            for (int64_t c = 0; c < C; c++) {
                s[c] += d[c];
                t[c] += (double)d[c] * ((double)x[c] - (double)j->mu[c]);
            }
        } else if (j->mu) {
            for (int64_t c = 0; c < C; c++) {
                double e = (double)x[c] - (double)j->mu[c];
                s[c] += e * e;
            }
        } else {
            for (int64_t c = 0; c < C; c++)
                s[c] += x[c];
        }
    }
}

/* the block sums of part, in block order, into out[2][C] */
static void bnf_reduce(bnf *j, struct dgr_pool *pool, double *out)
{
    int64_t nb = dgr_blocks(j->R, j->rows);
    dgr_parallel_blocks(pool, j->R, j->rows, bnf_sums, j);
    for (int64_t c = 0; c < 2 * j->C; c++)
        out[c] = 0;
    for (int64_t b = 0; b < nb; b++)
        for (int64_t c = 0; c < 2 * j->C; c++)
            out[c] += j->part[b * 2 * j->C + c];
}

/* y = k1 * x + k2 * (dy or 0) + k3, per channel; with mu: x - mu for x */
DGR_HOT static void bnf_apply(void *arg, int64_t r0, int64_t r1)
{
    const bnf *j = arg;
    int64_t C = j->C;
    for (int64_t r = r0; r < r1; r++) {
        const float *x = j->x + r * C;
        float *y = j->y + r * C;
        if (j->dy) {
            const float *d = j->dy + r * C;
            for (int64_t c = 0; c < C; c++)
                y[c] = j->k1[c] * d[c] + j->k2[c] * (x[c] - j->mu[c]) +
                       j->k3[c];
        } else if (j->relu == 1) { /* Relu's x < 0 ? 0 : x: NaN stays */
            for (int64_t c = 0; c < C; c++) {
                float v = (x[c] - j->mu[c]) * j->k1[c] + j->k3[c];
                y[c] = v < 0 ? 0 : v;
            }
        } else if (j->relu == 6) {
            for (int64_t c = 0; c < C; c++) {
                float v = (x[c] - j->mu[c]) * j->k1[c] + j->k3[c];
                y[c] = v < 0 ? 0 : v > 6 ? 6 : v;
            }
        } else {
            for (int64_t c = 0; c < C; c++)
                y[c] = (x[c] - j->mu[c]) * j->k1[c] + j->k3[c];
        }
    }
}

/* FusedBatchNormV3 / its gradient on NHWC float32 (grad: j->dy set): 0,
 * or -1 out of memory. */
static int bn_nhwc_f32(dgr_kctx *k, const bnjob *b, int grad)
{
    int64_t C = b->C, R = b->N * b->HW;
    bnf j = {.x = b->x.p, .R = R, .C = C};
    j.rows = C > 0 ? (1 << 14) / C + 1 : 1;
    int64_t nb = dgr_blocks(R, j.rows);
    /* sum: [2][C] results, [2][C] a second pass's, then the blocks' */
    double *sum = dg_malloc((size_t)(2 * C * (nb + 2)) * sizeof *sum + 1);
    float *co = dg_malloc((size_t)(4 * C) * sizeof *co + 1);
    if (!sum || !co) {
        dg_free(sum);
        dg_free(co);
        return -1;
    }
    double *tmp = sum + 2 * C;
    j.part = sum + 4 * C;
    float *mu = co, *k1 = co + C, *k2 = co + 2 * C, *k3 = co + 3 * C;
    double cnt = (double)R;
    const float *scale = b->scale.p, *offset = b->offset.p;
    const float *mean = b->mean.p, *var = b->var.p;
    if (!grad) {
        double *m = sum, *v = sum + C;
        if (b->train) {
            bnf_reduce(&j, k->dev->intra, sum);
            for (int64_t c = 0; c < C; c++) {
                m[c] = cnt > 0 ? m[c] / cnt : 0;
                mu[c] = (float)m[c];
            }
            j.mu = mu;
            bnf_reduce(&j, k->dev->intra, tmp);
            for (int64_t c = 0; c < C; c++)
                v[c] = cnt > 0 ? tmp[c] / cnt : 0;
        } else {
            for (int64_t c = 0; c < C; c++) {
                m[c] = mean[c];
                v[c] = var[c];
                mu[c] = mean[c];
            }
        }
        float *bm = dgr_cpu_ptr(&k->out[1]), *bv = dgr_cpu_ptr(&k->out[2]);
        float *r1 = dgr_cpu_ptr(&k->out[3]), *r2 = dgr_cpu_ptr(&k->out[4]);
        for (int64_t c = 0; c < C; c++) {
            double a = scale[c] / sqrt(v[c] + b->eps);
            k1[c] = (float)a;
            k3[c] = offset[c];
            double om = m[c], ov = v[c];
            if (b->train) {
                /* TF: the running variance is the unbiased one */
                ov = v[c] * (cnt > 1 ? cnt / (cnt - 1) : 1);
                if (b->factor != 1.0) {
                    om = (1 - b->factor) * mean[c] + b->factor * m[c];
                    ov = (1 - b->factor) * var[c] + b->factor * ov;
                }
            }
            bm[c] = (float)om;
            bv[c] = (float)ov;
            r1[c] = (float)m[c];
            r2[c] = (float)v[c];
        }
        j.mu = mu;
        j.k1 = k1;
        j.k3 = k3;
        j.y = b->y.p;
        j.relu = (int)dgc_attr_i(k->node, DGC_AT__relu);
    } else {
        /* reserve_1 / reserve_2: the batch's mean and biased variance
         * (training) or the running ones (inference) */
        double *rstd = sum; /* [C], then sdy, sdyx in the block sums */
        for (int64_t c = 0; c < C; c++) {
            mu[c] = mean[c];
            rstd[c] = 1.0 / sqrt((double)var[c] + b->eps);
        }
        j.mu = mu;
        j.dy = b->dy.p;
        double *sd = tmp;
        bnf_reduce(&j, k->dev->intra, sd);
        float *dsc = dgr_cpu_ptr(&k->out[1]), *dof = dgr_cpu_ptr(&k->out[2]);
        for (int64_t c = 0; c < C; c++) {
            double sdy = sd[c], sdyx = sd[C + c] * rstd[c];
            double g = scale[c] * rstd[c];
            k1[c] = (float)g;
            if (b->train && cnt > 0) {
                k2[c] = (float)(-g * rstd[c] * sdyx / cnt);
                k3[c] = (float)(-g * sdy / cnt);
            } else {
                k2[c] = 0;
                k3[c] = 0;
            }
            dsc[c] = (float)sdyx;
            dof[c] = (float)sdy;
        }
        j.k1 = k1;
        j.k2 = k2;
        j.k3 = k3;
        j.y = b->dx.p;
    }
    if (R * C >= DGR_CPU_PAR_MIN)
        dgr_parallel_for(k->dev->intra, R, DGR_CPU_PAR_MIN / (C ? C : 1) + 1,
                         bnf_apply, &j);
    else
        bnf_apply(&j, 0, R);
    dg_free(sum);
    dg_free(co);
    return 0;
}

static int bn_fast(const bnjob *j, dgr_kctx *k, int n_in)
{
    if (j->nchw)
        return 0;
    for (int i = 0; i < n_in; i++)
        if (k->in[i].dtype != DG_F32)
            return 0;
    return 1;
}

/* (x, scale, offset, mean, variance) -> y, batch_mean, batch_variance,
 * reserve_1 (mean), reserve_2 (biased variance), reserve_3 (empty) */
dg_status dgr_k_fused_bn(dgr_kctx *k)
{
    bnjob j;
    dg_status s = bn_setup(k, 0, &j);
    if (s)
        return s;
    if (k->in[3].shape.dims[0] < j.C && (!j.train || j.factor != 1.0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': mean and variance "
                      "must have %lld elements", k->node->name,
                      (long long)j.C);
    j.x = fb(&k->in[0]); j.scale = fb(&k->in[1]); j.offset = fb(&k->in[2]);
    j.mean = fb(&k->in[3]); j.var = fb(&k->in[4]);
    j.y = fb(&k->out[0]); j.bmean = fb(&k->out[1]); j.bvar = fb(&k->out[2]);
    j.r1 = fb(&k->out[3]); j.r2 = fb(&k->out[4]);
    if (bn_fast(&j, k, 5)) {
        if (bn_nhwc_f32(k, &j, 0))
            return dg_err_nomem(k->err, k->node->name);
        return DG_OK;
    }
    dgr_parallel_for(k->dev->intra, j.C,
                     (DGR_CPU_PAR_MIN / (j.N * j.HW + 1)) + 1, bn_fwd_chans,
                     &j);
    int64_t act = dgc_attr_i(k->node, DGC_AT__relu); /* fuse_norm.c's */
    int64_t n = act ? j.N * j.HW * j.C : 0;
    double *yd = j.y.f64 ? j.y.p : NULL;
    float *yf = j.y.f64 ? NULL : j.y.p;
    for (int64_t i = 0; i < n && yd; i++)
        yd[i] = yd[i] < 0 ? 0 : act == 6 && yd[i] > 6 ? 6 : yd[i];
    for (int64_t i = 0; i < n && yf; i++)
        yf[i] = yf[i] < 0 ? 0 : act == 6 && yf[i] > 6 ? 6 : yf[i];
    return DG_OK;
}
DGR_KERNEL(FusedBatchNormV3, dgr_k_fused_bn);

/* (dy, x, scale, reserve_1, reserve_2[, reserve_3]) -> dx, dscale,
 * doffset, (empty), (empty) */
dg_status dgr_k_fused_bn_grad(dgr_kctx *k)
{
    bnjob j;
    dg_status s = bn_setup(k, 1, &j);
    if (s)
        return s;
    j.dy = fb(&k->in[0]); j.x = fb(&k->in[1]); j.scale = fb(&k->in[2]);
    j.mean = fb(&k->in[3]); j.var = fb(&k->in[4]);
    j.dx = fb(&k->out[0]); j.dscale = fb(&k->out[1]);
    j.doffset = fb(&k->out[2]);
    if (bn_fast(&j, k, 5)) {
        if (bn_nhwc_f32(k, &j, 1))
            return dg_err_nomem(k->err, k->node->name);
        return DG_OK;
    }
    dgr_parallel_for(k->dev->intra, j.C,
                     (DGR_CPU_PAR_MIN / (j.N * j.HW + 1)) + 1, bn_grad_chans,
                     &j);
    return DG_OK;
}
DGR_KERNEL(FusedBatchNormGradV3, dgr_k_fused_bn_grad);
