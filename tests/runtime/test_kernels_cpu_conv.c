/*
 * test_kernels_cpu_conv.c -- the CPU kernels of TF's CNN ops (Conv2D,
 * DepthwiseConv2dNative and their backprops, MaxPool / AvgPool and their
 * gradients, FusedBatchNormV3 and its gradient) against naive reference
 * implementations written here: scatter-form backprops (the kernels
 * gather), NHWC and NCHW, strides, dilations, SAME / VALID / EXPLICIT
 * padding, odd sizes; float32 (oneDNN) and float64 (dgrun's loops);
 * and the fused convolutions (bias, residual, activation) and max-pool
 * gradient (+ ReluGrad).
 */
#include "kernels_cpu_harness.h"
#include "kernels_cpu_dnnl.h"
#include "cnn_cases.h"

#include <stdlib.h>

/* ---- reference geometry (TF's rules, written out again) ----------------- */

static void ref_out(const ccase *c, int64_t in, int64_t k, int64_t s,
                    int64_t d, int64_t p0e, int64_t p1e, int64_t *out,
                    int64_t *p0)
{
    int64_t dk = (k - 1) * d + 1;
    if (strcmp(c->pad, "SAME") == 0) {
        *out = (in + s - 1) / s;
        int64_t tot = (*out - 1) * s + dk - in;
        *p0 = tot > 0 ? tot / 2 : 0;
    } else if (strcmp(c->pad, "VALID") == 0) {
        *out = (in - dk) / s + 1;
        *p0 = 0;
    } else {
        *out = (in + p0e + p1e - dk) / s + 1;
        *p0 = p0e;
    }
}

typedef struct rgeo {
    int64_t OH, OW, OC, pt, pl;
} rgeo;

static rgeo ref_geo(const ccase *c)
{
    rgeo r;
    ref_out(c, c->H, c->KH, c->sh, c->dh, c->pads[0], c->pads[1], &r.OH, &r.pt);
    ref_out(c, c->W, c->KW, c->sw, c->dw, c->pads[2], c->pads[3], &r.OW, &r.pl);
    r.OC = c->depthwise ? c->C * c->OC : c->OC;
    return r;
}

/* NHWC index; the kernels get NCHW copies when c->nchw */
#define IX(n, h, w, ch, H, W, C) ((((n) * (H) + (h)) * (W) + (w)) * (C) + (ch))

static double *to_layout(const double *v, int64_t N, int64_t H, int64_t W,
                         int64_t C, int nchw, int back)
{
    double *o = malloc(sizeof *o * (size_t)(N * H * W * C + 1));
    for (int64_t n = 0; n < N; n++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t w = 0; w < W; w++)
                for (int64_t ch = 0; ch < C; ch++) {
                    int64_t a = IX(n, h, w, ch, H, W, C);
                    int64_t b = nchw ? ((n * C + ch) * H + h) * W + w : a;
                    if (back)
                        o[a] = v[b];
                    else
                        o[b] = v[a];
                }
    return o;
}

static int64_t wix(const ccase *c, const rgeo *g, int64_t kh, int64_t kw,
                   int64_t ic, int64_t oc)
{
    return c->depthwise ? (kh * c->KW + kw) * g->OC + oc
                        : ((kh * c->KW + kw) * c->C + ic) * g->OC + oc;
}

/* visit every (output, tap) pair: y[o] += x[i] * w[k] */
typedef void (*tap_fn)(void *ctx, int64_t xi, int64_t wi, int64_t yi);
static void ref_taps(const ccase *c, const rgeo *g, tap_fn f, void *ctx)
{
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++)
                for (int64_t oc = 0; oc < g->OC; oc++)
                    for (int64_t kh = 0; kh < c->KH; kh++)
                        for (int64_t kw = 0; kw < c->KW; kw++) {
                            int64_t ih = oh * c->sh - g->pt + kh * c->dh;
                            int64_t iw = ow * c->sw - g->pl + kw * c->dw;
                            if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W)
                                continue;
                            int64_t i0 = c->depthwise ? oc / c->OC : 0;
                            int64_t i1 = c->depthwise ? i0 + 1 : c->C;
                            for (int64_t ic = i0; ic < i1; ic++)
                                f(ctx, IX(n, ih, iw, ic, c->H, c->W, c->C),
                                  wix(c, g, kh, kw, ic, oc),
                                  IX(n, oh, ow, oc, g->OH, g->OW, g->OC));
                        }
}

typedef struct tapctx {
    const double *x, *w, *dy;
    double *y, *dx, *dw;
} tapctx;

static void tap(void *p, int64_t xi, int64_t wi, int64_t yi)
{
    tapctx *t = p;
    t->y[yi] += t->x[xi] * t->w[wi];
    t->dx[xi] += t->dy[yi] * t->w[wi];
    t->dw[wi] += t->dy[yi] * t->x[xi];
}

static void dims4(const ccase *c, int64_t N, int64_t H, int64_t W, int64_t C,
                  int64_t *d)
{
    d[0] = N;
    d[c->nchw ? 2 : 1] = H;
    d[c->nchw ? 3 : 2] = W;
    d[c->nchw ? 1 : 3] = C;
}

/* an int32 Const input holding v (input_sizes / filter_sizes) */
static void kt_sizes(kt *t, const int64_t *v)
{
    int32_t p = dgc_graph_add_node(t->g, "sizes", dgc_op_find("Const"),
                                   &t->err);
    assert_true(p >= 0);
    dg_shape s = {1, {4}};
    dg_tensor *tn = dg_tensor_new(DG_I32, &s);
    for (int i = 0; i < 4; i++)
        ((int32_t *)tn->data)[i] = (int32_t)v[i];
    assert_int_equal(dgc_node_set_tensor(&t->g->nodes[p], "value", tn), 0);
    assert_int_equal(dgc_infer_node(t->g, p, &t->err), DG_OK);
    dgc_ref r = {p, 0};
    assert_int_equal(dgc_node_add_input(t->g, t->id, r), 0);
    dgr_value *iv = &t->in[t->n_in++];
    iv->dtype = DG_I32;
    iv->shape = s;
    iv->buf = dgr_buffer_new(&t->dev, 16, 0, &t->err);
    for (int i = 0; i < 4; i++)
        ((int32_t *)iv->buf->host)[i] = (int32_t)v[i];
}

static void check_all(kt *t, const double *want, int64_t n, dg_dtype dt,
                      const char *what, int ci)
{
    double scale = 1;
    for (int64_t i = 0; i < n; i++)
        scale = fmax(scale, fabs(want[i]));
    double tl = dt == DG_F32 ? 2e-5 : 1e-11;
    for (int64_t i = 0; i < n; i++)
        if (fabs(kt_out(t, 0, i) - want[i]) > tl * scale)
            fail_msg("case %d %s [%lld]: got %.9g, want %.9g", ci, what,
                     (long long)i, kt_out(t, 0, i), want[i]);
}

/* oneDNN itself takes float32 case (not dgrun's fallback loops): run it
 * directly on the kernel's inputs a, b and compare with output 0 */
static void dnnl_took(kt *t, int kind, int what, int dw, int ia, int ib,
                      const dg_shape *xs, const dg_shape *ws)
{
    if (!dgr_dnnl_available() || t->in[ia].dtype != DG_F32)
        return;
    dgc_nn_geom g;
    char msg[200];
    assert_int_equal(dgc_nn_geom_init(NODE(t), kind, xs, ws, &g, msg,
                                      sizeof msg), 0);
    int64_t n = dg_shape_numel(&t->out[0].shape);
    float *o = calloc((size_t)n + 1, sizeof *o);
    int rc = dgr_dnnl_run(NULL, what, &g, dw, t->in[ia].buf->host,
                          ib >= 0 ? t->in[ib].buf->host : NULL, o);
    if (rc != 0)
        fail_msg("oneDNN declined %s", dgc_op_name(NODE(t)->op));
    for (int64_t i = 0; i < n; i++)
        assert_true(o[i] == (float)kt_out(t, 0, i));
    free(o);
}

static void run_conv_case(const ccase *c, int ci, dg_dtype dt, int int_sizes)
{
    rgeo g = ref_geo(c);
    int64_t nx = c->N * c->H * c->W * c->C, ny = c->N * g.OH * g.OW * g.OC;
    int64_t nw = c->KH * c->KW * c->C * c->OC;
    double *x = calloc((size_t)nx, sizeof *x), *w = calloc((size_t)nw, sizeof *w);
    double *dy = calloc((size_t)ny, sizeof *dy);
    double *y = calloc((size_t)ny, sizeof *y), *dx = calloc((size_t)nx, sizeof *dx);
    double *dw = calloc((size_t)nw, sizeof *dw);
    fill_vals(x, nx, DG_F64, -1, 1);
    fill_vals(w, nw, DG_F64, -1, 1);
    fill_vals(dy, ny, DG_F64, -1, 1);
    if (dt == DG_F32) {
        for (int64_t i = 0; i < nx; i++) x[i] = (float)x[i];
        for (int64_t i = 0; i < nw; i++) w[i] = (float)w[i];
        for (int64_t i = 0; i < ny; i++) dy[i] = (float)dy[i];
    }
    tapctx tc = {x, w, dy, y, dx, dw};
    ref_taps(c, &g, tap, &tc);
    double *xl = to_layout(x, c->N, c->H, c->W, c->C, c->nchw, 0);
    double *dyl = to_layout(dy, c->N, g.OH, g.OW, g.OC, c->nchw, 0);
    double *yl = to_layout(y, c->N, g.OH, g.OW, g.OC, c->nchw, 0);
    double *dxl = to_layout(dx, c->N, c->H, c->W, c->C, c->nchw, 0);
    int64_t xd[4], yd[4];
    int64_t wd[4] = {c->KH, c->KW, c->C, c->OC};
    dims4(c, c->N, c->H, c->W, c->C, xd);
    dims4(c, c->N, g.OH, g.OW, g.OC, yd);
    const char *ops[3][2] = {
        {"Conv2D", "DepthwiseConv2dNative"},
        {"Conv2DBackpropInput", "DepthwiseConv2dNativeBackpropInput"},
        {"Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropFilter"}};
    kt t;
    kt_init(&t, ops[0][c->depthwise]);
    cc_attrs(NODE(&t), c, 0);
    kt_in(&t, dt, 4, xd, xl);
    kt_in(&t, dt, 4, wd, w);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, yl, ny, dt, ops[0][c->depthwise], ci);
    int kind = c->depthwise ? DGC_NN_DWCONV : DGC_NN_CONV;
    dnnl_took(&t, kind, DGR_DNNL_CONV_FWD, c->depthwise, 0, 1,
              &t.in[0].shape, &t.in[1].shape);
    kt_free(&t);

    kt_init(&t, ops[1][c->depthwise]);
    cc_attrs(NODE(&t), c, 0);
    if (int_sizes)
        kt_sizes(&t, xd);
    else
        kt_in(&t, dt, 4, xd, NULL); /* "shaped like", as dgrun's gradients */
    kt_in(&t, dt, 4, wd, w);
    kt_in(&t, dt, 4, yd, dyl);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, dxl, nx, dt, ops[1][c->depthwise], ci);
    dnnl_took(&t, kind, DGR_DNNL_CONV_BWD_D, c->depthwise, 2, 1,
              &t.out[0].shape, &t.in[1].shape);
    kt_free(&t);

    kt_init(&t, ops[2][c->depthwise]);
    cc_attrs(NODE(&t), c, 0);
    kt_in(&t, dt, 4, xd, xl);
    if (int_sizes)
        kt_sizes(&t, wd);
    else
        kt_in(&t, dt, 4, wd, NULL);
    kt_in(&t, dt, 4, yd, dyl);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, dw, nw, dt, ops[2][c->depthwise], ci);
    dnnl_took(&t, kind, DGR_DNNL_CONV_BWD_W, c->depthwise, 0, 2,
              &t.in[0].shape, &t.out[0].shape);
    kt_free(&t);
    free(x); free(w); free(dy); free(y); free(dx); free(dw);
    free(xl); free(dyl); free(yl); free(dxl);
}

static void test_conv_f32(void **s)
{
    (void)s;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_conv_case(&cases[i], (int)i, DG_F32, (int)(i % 2));
}

static void test_conv_f64(void **s)
{
    (void)s;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_conv_case(&cases[i], (int)i, DG_F64, (int)((i + 1) % 2));
}

/* ---- grouped Conv2D (issue 22: tf_keras Conv2D(groups=...)) --------------
 * filter [KH, KW, C / groups, OC]; output channel oc reads the input
 * channels of its group, oc / (OC / groups).  oneDNN declines it: float32
 * and float64 both run dgrun's loops; the backprops against the scatter
 * form of the same taps. */
static void run_grouped(const ccase *c, int64_t groups, dg_dtype dt, int ci)
{
    rgeo g = ref_geo(c);
    int64_t fc = c->C / groups;
    int64_t nx = c->N * c->H * c->W * c->C, ny = c->N * g.OH * g.OW * g.OC;
    int64_t nw = c->KH * c->KW * fc * c->OC;
    double *x = calloc((size_t)nx, sizeof *x), *w = calloc((size_t)nw, 8);
    double *y = calloc((size_t)ny, sizeof *y), *dy = calloc((size_t)ny, 8);
    double *dx = calloc((size_t)nx, 8), *dw = calloc((size_t)nw, 8);
    fill_vals(x, nx, dt, -1, 1);
    fill_vals(w, nw, dt, -1, 1);
    fill_vals(dy, ny, dt, -1, 1);
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oh = 0; oh < g.OH; oh++)
            for (int64_t ow = 0; ow < g.OW; ow++)
                for (int64_t oc = 0; oc < g.OC; oc++)
                    for (int64_t kh = 0; kh < c->KH; kh++)
                        for (int64_t kw = 0; kw < c->KW; kw++) {
                            int64_t ih = oh * c->sh - g.pt + kh * c->dh;
                            int64_t iw = ow * c->sw - g.pl + kw * c->dw;
                            if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W)
                                continue;
                            int64_t c0 = oc / (c->OC / groups) * fc;
                            for (int64_t j = 0; j < fc; j++) {
                                int64_t yi = IX(n, oh, ow, oc, g.OH, g.OW,
                                                g.OC);
                                int64_t xi = IX(n, ih, iw, c0 + j, c->H, c->W,
                                                c->C);
                                int64_t wi = ((kh * c->KW + kw) * fc + j) *
                                             c->OC + oc;
                                y[yi] += x[xi] * w[wi];
                                dx[xi] += dy[yi] * w[wi];
                                dw[wi] += dy[yi] * x[xi];
                            }
                        }
    double *xl = to_layout(x, c->N, c->H, c->W, c->C, c->nchw, 0);
    double *yl = to_layout(y, c->N, g.OH, g.OW, g.OC, c->nchw, 0);
    double *dyl = to_layout(dy, c->N, g.OH, g.OW, g.OC, c->nchw, 0);
    double *dxl = to_layout(dx, c->N, c->H, c->W, c->C, c->nchw, 0);
    int64_t xd[4], yd[4], wd[4] = {c->KH, c->KW, fc, c->OC};
    dims4(c, c->N, c->H, c->W, c->C, xd);
    dims4(c, c->N, g.OH, g.OW, g.OC, yd);
    kt t;
    kt_init(&t, "Conv2D");
    cc_attrs(NODE(&t), c, 0);
    kt_in(&t, dt, 4, xd, xl);
    kt_in(&t, dt, 4, wd, w);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, yl, ny, dt, "grouped Conv2D", ci);
    kt_free(&t);
    kt_init(&t, "Conv2DBackpropInput");
    cc_attrs(NODE(&t), c, 0);
    kt_sizes(&t, xd);
    kt_in(&t, dt, 4, wd, w);
    kt_in(&t, dt, 4, yd, dyl);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, dxl, nx, dt, "grouped Conv2DBackpropInput", ci);
    kt_free(&t);
    kt_init(&t, "Conv2DBackpropFilter");
    cc_attrs(NODE(&t), c, 0);
    kt_in(&t, dt, 4, xd, xl);
    kt_sizes(&t, wd);
    kt_in(&t, dt, 4, yd, dyl);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, dw, nw, dt, "grouped Conv2DBackpropFilter", ci);
    kt_free(&t);
    free(x); free(w); free(y); free(dy); free(dx); free(dw);
    free(xl); free(yl); free(dyl); free(dxl);
}

static void test_conv_grouped(void **s)
{
    (void)s;
    static const ccase gc[] = {
        {2, 7, 6, 6, 3, 3, 4, 1, 1, 1, 1, "SAME", {0}, 0, 0},
        {1, 8, 9, 4, 3, 2, 8, 2, 1, 1, 2, "VALID", {0}, 1, 0},
        {1, 5, 5, 4, 3, 3, 4, 1, 1, 1, 1, "EXPLICIT", {1, 0, 1, 2}, 0, 0},
    };
    static const int64_t groups[] = {2, 4, 4}; /* the last: depthwise-like */
    for (int i = 0; i < 3; i++) {
        run_grouped(&gc[i], groups[i], DG_F32, i);
        run_grouped(&gc[i], groups[i], DG_F64, i);
    }
}

/* ---- pooling ------------------------------------------------------------- */

static void run_pool_case(const ccase *c, int ci, dg_dtype dt, int max)
{
    if (!max && strcmp(c->pad, "EXPLICIT") == 0)
        return; /* TF's AvgPool has no EXPLICIT padding */
    rgeo g = ref_geo(c);
    g.OC = c->C;
    int64_t nx = c->N * c->H * c->W * c->C, ny = c->N * g.OH * g.OW * c->C;
    double *x = calloc((size_t)nx, sizeof *x), *dy = calloc((size_t)ny, 8);
    double *y = calloc((size_t)ny, sizeof *y), *dx = calloc((size_t)nx, 8);
    fill_vals(x, nx, DG_F64, -1, 1);
    fill_vals(dy, ny, DG_F64, -1, 1);
    for (int64_t i = 0; i < nx; i++) /* a few ties: the first max wins */
        x[i] = (i % 7 == 3) ? 0.5 : (float)x[i];
    for (int64_t i = 0; i < ny; i++) dy[i] = (float)dy[i];
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oh = 0; oh < g.OH; oh++)
            for (int64_t ow = 0; ow < g.OW; ow++)
                for (int64_t ch = 0; ch < c->C; ch++) {
                    int64_t yi = IX(n, oh, ow, ch, g.OH, g.OW, c->C), best = -1;
                    double acc = 0;
                    int cnt = 0;
                    for (int64_t kh = 0; kh < c->KH; kh++)
                        for (int64_t kw = 0; kw < c->KW; kw++) {
                            int64_t ih = oh * c->sh - g.pt + kh;
                            int64_t iw = ow * c->sw - g.pl + kw;
                            if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W)
                                continue;
                            int64_t xi = IX(n, ih, iw, ch, c->H, c->W, c->C);
                            cnt++;
                            acc += x[xi];
                            if (best < 0 || x[xi] > x[best])
                                best = xi;
                        }
                    y[yi] = max ? x[best] : acc / cnt;
                    for (int64_t kh = 0; !max && kh < c->KH; kh++)
                        for (int64_t kw = 0; kw < c->KW; kw++) {
                            int64_t ih = oh * c->sh - g.pt + kh;
                            int64_t iw = ow * c->sw - g.pl + kw;
                            if (ih >= 0 && ih < c->H && iw >= 0 && iw < c->W)
                                dx[IX(n, ih, iw, ch, c->H, c->W, c->C)] +=
                                    dy[yi] / cnt;
                        }
                    if (max)
                        dx[best] += dy[yi];
                }
    double *xl = to_layout(x, c->N, c->H, c->W, c->C, c->nchw, 0);
    double *yl = to_layout(y, c->N, g.OH, g.OW, c->C, c->nchw, 0);
    double *dyl = to_layout(dy, c->N, g.OH, g.OW, c->C, c->nchw, 0);
    double *dxl = to_layout(dx, c->N, c->H, c->W, c->C, c->nchw, 0);
    int64_t xd[4], yd[4];
    dims4(c, c->N, c->H, c->W, c->C, xd);
    dims4(c, c->N, g.OH, g.OW, c->C, yd);
    kt t;
    kt_init(&t, max ? "MaxPool" : "AvgPool");
    cc_attrs(NODE(&t), c, 1);
    kt_in(&t, dt, 4, xd, xl);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, yl, ny, dt, max ? "MaxPool" : "AvgPool", ci);
    dnnl_took(&t, DGC_NN_POOL, max ? DGR_DNNL_MAXPOOL : DGR_DNNL_AVGPOOL, 0,
              0, -1, &t.in[0].shape, NULL);
    kt_free(&t);
    kt_init(&t, max ? "MaxPoolGrad" : "AvgPoolGrad");
    cc_attrs(NODE(&t), c, 1);
    if (max) {
        kt_in(&t, dt, 4, xd, xl);
        kt_in(&t, dt, 4, yd, yl);
    } else {
        kt_sizes(&t, xd);
    }
    kt_in(&t, dt, 4, yd, dyl);
    assert_int_equal(kt_run(&t), DG_OK);
    check_all(&t, dxl, nx, dt, max ? "MaxPoolGrad" : "AvgPoolGrad", ci);
    if (max)
        dnnl_took(&t, DGC_NN_POOL, DGR_DNNL_MAXPOOL_BWD, 0, 0, 2,
                  &t.out[0].shape, NULL);
    else
        dnnl_took(&t, DGC_NN_POOL, DGR_DNNL_AVGPOOL_BWD, 0, 1, -1,
                  &t.out[0].shape, NULL);
    double *mpg = calloc((size_t)nx, sizeof *mpg);
    for (int64_t i = 0; max && i < nx; i++)
        mpg[i] = kt_out(&t, 0, i);
    kt_free(&t);
    if (max) { /* the fusion pass's MaxPoolGrad + ReluGrad: the same bits
                * as the two ops (x is the Relu output there) */
        kt_init(&t, "_FusedMaxPoolGrad");
        cc_attrs(NODE(&t), c, 1);
        kt_in(&t, dt, 4, xd, xl);
        kt_in(&t, dt, 4, yd, yl);
        kt_in(&t, dt, 4, yd, dyl);
        assert_int_equal(kt_run(&t), DG_OK);
        for (int64_t i = 0; i < nx; i++)
            if (kt_out(&t, 0, i) != (xl[i] > 0 ? mpg[i] : 0))
                fail_msg("case %d _FusedMaxPoolGrad [%lld]: got %.9g, x %g, "
                         "MaxPoolGrad %.9g", ci, (long long)i,
                         kt_out(&t, 0, i), xl[i], mpg[i]);
        kt_free(&t);
    }
    free(mpg);
    free(x); free(dy); free(y); free(dx);
    free(xl); free(yl); free(dyl); free(dxl);
}

static void test_pool(void **s)
{
    (void)s;
    for (size_t i = 0; i < sizeof pools / sizeof *pools; i++)
        for (int max = 0; max < 2; max++) {
            run_pool_case(&pools[i], (int)i, DG_F32, max);
            run_pool_case(&pools[i], (int)i, DG_F64, max);
        }
}

/* ---- fused batch norm ---------------------------------------------------- */

static void run_bn(int nchw, int train, double factor, dg_dtype dt)
{
    enum { N = 3, H = 2, W = 3, C = 4, NX = N * H * W * C };
    double x[NX], dy[NX], sc[C], of[C], pm[C], pv[C];
    fill_vals(x, NX, DG_F64, -2, 2);
    fill_vals(dy, NX, DG_F64, -1, 1);
    fill_vals(sc, C, DG_F64, 0.5, 1.5);
    fill_vals(of, C, DG_F64, -1, 1);
    fill_vals(pm, C, DG_F64, -1, 1);
    fill_vals(pv, C, DG_F64, 0.5, 2);
    double y[NX], dx[NX], mu[C], var[C], bm[C], bv[C], dsc[C], dof[C];
    double eps = 1e-3, R = N * H * W;
    for (int c = 0; c < C; c++) {
        double s = 0, ss = 0;
        for (int r = 0; r < N * H * W; r++) s += x[r * C + c];
        mu[c] = train ? s / R : pm[c];
        for (int r = 0; r < N * H * W; r++)
            ss += (x[r * C + c] - s / R) * (x[r * C + c] - s / R);
        var[c] = train ? ss / R : pv[c];
        bm[c] = train ? (1 - factor) * pm[c] + factor * mu[c] : pm[c];
        bv[c] = train ? (1 - factor) * pv[c] + factor * ss / (R - 1) : pv[c];
        double rs = 1 / sqrt(var[c] + eps), sdy = 0, sdyx = 0;
        for (int r = 0; r < N * H * W; r++) {
            double xh = (x[r * C + c] - mu[c]) * rs;
            y[r * C + c] = xh * sc[c] + of[c];
            sdy += dy[r * C + c];
            sdyx += dy[r * C + c] * xh;
        }
        dsc[c] = sdyx;
        dof[c] = sdy;
        for (int r = 0; r < N * H * W; r++) {
            double xh = (x[r * C + c] - mu[c]) * rs;
            dx[r * C + c] = train ? sc[c] * rs * (dy[r * C + c] - sdy / R - xh * sdyx / R)
                                  : sc[c] * rs * dy[r * C + c];
        }
    }
    ccase lay = {0};
    lay.nchw = nchw;
    double *xl = to_layout(x, N, H, W, C, nchw, 0);
    double *yl = to_layout(y, N, H, W, C, nchw, 0);
    double *dyl = to_layout(dy, N, H, W, C, nchw, 0);
    double *dxl = to_layout(dx, N, H, W, C, nchw, 0);
    int64_t xd[4], cd[1] = {C};
    dims4(&lay, N, H, W, C, xd);
    double tl = dt == DG_F32 ? 1e-4 : 1e-10;
    kt t;
    kt_init(&t, "FusedBatchNormV3");
    cc_set_str(NODE(&t), "data_format", nchw ? "NCHW" : "NHWC");
    assert_int_equal(dgc_node_set_bool(NODE(&t), "is_training", train), 0);
    assert_int_equal(dgc_node_set_float(NODE(&t), "epsilon", eps), 0);
    assert_int_equal(dgc_node_set_float(NODE(&t), "exponential_avg_factor", factor), 0);
    kt_in(&t, dt, 4, xd, xl);
    kt_in(&t, dt, 1, cd, sc);
    kt_in(&t, dt, 1, cd, of);
    kt_in(&t, dt, 1, cd, pm);
    kt_in(&t, dt, 1, cd, pv);
    assert_int_equal(kt_run(&t), DG_OK);
    for (int i = 0; i < NX; i++)
        assert_close(kt_out(&t, 0, i), yl[i], tl, "fbn y");
    for (int c = 0; c < C; c++) {
        assert_close(kt_out(&t, 1, c), bm[c], tl, "fbn batch_mean");
        assert_close(kt_out(&t, 2, c), bv[c], tl, "fbn batch_variance");
        assert_close(kt_out(&t, 3, c), mu[c], tl, "fbn reserve_1");
    }
    double r2[C];
    for (int c = 0; c < C; c++)
        r2[c] = kt_out(&t, 4, c);
    kt_free(&t);

    kt_init(&t, "FusedBatchNormGradV3");
    cc_set_str(NODE(&t), "data_format", nchw ? "NCHW" : "NHWC");
    assert_int_equal(dgc_node_set_bool(NODE(&t), "is_training", train), 0);
    assert_int_equal(dgc_node_set_float(NODE(&t), "epsilon", eps), 0);
    kt_in(&t, dt, 4, xd, dyl);
    kt_in(&t, dt, 4, xd, xl);
    kt_in(&t, dt, 1, cd, sc);
    kt_in(&t, dt, 1, cd, mu);
    kt_in(&t, dt, 1, cd, r2);
    assert_int_equal(kt_run(&t), DG_OK);
    for (int i = 0; i < NX; i++)
        assert_close(kt_out(&t, 0, i), dxl[i], tl, "fbn dx");
    for (int c = 0; c < C; c++) {
        assert_close(kt_out(&t, 1, c), dsc[c], tl, "fbn dscale");
        assert_close(kt_out(&t, 2, c), dof[c], tl, "fbn doffset");
    }
    kt_free(&t);
    free(xl); free(yl); free(dyl); free(dxl);
}

static void test_fused_bn(void **s)
{
    (void)s;
    for (int nchw = 0; nchw < 2; nchw++)
        for (int train = 0; train < 2; train++) {
            run_bn(nchw, train, 1.0, DG_F32);
            run_bn(nchw, train, train ? 0.3 : 1.0, DG_F64);
        }
}

/* Shape inference rejects what TF rejects. */
/* _FusedConv2D / _FusedDepthwiseConv2dNative (the fusion pass's conv +
 * bias [+ residual] [+ activation], issue 23) against the plain kernel's
 * output with the epilogue applied here, every NHWC case (the batch of 24
 * is cut into blocks: the residual's offsets), each activation in turn
 * (Sigmoid and swish: oneDNN's logistic and swish),
 * the residual on every other case; float32 (oneDNN post-ops) and float64
 * (loops + epilogue). */
static void run_fused_case(const ccase *c, int ci, dg_dtype dt, int act)
{
    static const char *const acts[] = {"",          ",Relu",    ",Relu6",
                                       ",Elu",      ",LeakyRelu", ",Sigmoid",
                                       ",Swish"};
    rgeo g = ref_geo(c);
    int64_t nx = c->N * c->H * c->W * c->C, ny = c->N * g.OH * g.OW * g.OC;
    int64_t nw = c->KH * c->KW * c->C * c->OC;
    double *x = calloc((size_t)nx, sizeof *x), *w = calloc((size_t)nw, sizeof *w);
    double *b = calloc((size_t)g.OC, sizeof *b), *sd = calloc((size_t)ny, sizeof *sd);
    double *y = calloc((size_t)ny, sizeof *y);
    fill_vals(x, nx, dt, -1, 1);
    fill_vals(w, nw, dt, -1, 1);
    fill_vals(b, g.OC, dt, -1, 1);
    fill_vals(sd, ny, dt, -2, 2);
    int64_t xd[4], yd[4], bd[1] = {g.OC};
    int64_t wd[4] = {c->KH, c->KW, c->C, c->OC};
    dims4(c, c->N, c->H, c->W, c->C, xd);
    dims4(c, c->N, g.OH, g.OW, g.OC, yd);
    kt t;
    kt_init(&t, c->depthwise ? "DepthwiseConv2dNative" : "Conv2D");
    cc_attrs(NODE(&t), c, 0);
    kt_in(&t, dt, 4, xd, x);
    kt_in(&t, dt, 4, wd, w);
    assert_int_equal(kt_run(&t), DG_OK);
    for (int64_t i = 0; i < ny; i++)
        y[i] = kt_out(&t, 0, i);
    kt_free(&t);
    int sum = ci % 2 == 0;
    char ops[64];
    snprintf(ops, sizeof ops, "BiasAdd%s%s", sum ? ",Add" : "", acts[act]);
    for (int64_t i = 0; i < ny; i++) {
        double v = y[i] + b[i % g.OC] + (sum ? sd[i] : 0);
        if (dt == DG_F32) /* the unfused float ops */
            v = (float)((float)(y[i] + b[i % g.OC]) + (sum ? sd[i] : 0));
        switch (act) {
        case 1: v = v > 0 ? v : 0; break;
        case 2: v = v > 0 ? (v < 6 ? v : 6) : 0; break;
        case 3: v = v > 0 ? v : expm1(v); break;
        case 4: v = v > 0 ? v : 0.3 * v; break;
        case 5: v = 1 / (1 + exp(-v)); break;
        case 6: v = v / (1 + exp(-0.75 * v)); break;
        default: break;
        }
        y[i] = v;
    }
    kt_init(&t, c->depthwise ? "_FusedDepthwiseConv2dNative" : "_FusedConv2D");
    cc_attrs(NODE(&t), c, 0);
    assert_int_equal(dgc_node_set_str(NODE(&t), "fused_ops", ops), 0);
    assert_int_equal(dgc_node_set_float(NODE(&t), "leakyrelu_alpha", 0.3), 0);
    assert_int_equal(dgc_node_set_float(NODE(&t), "swish_beta", 0.75), 0);
    kt_in(&t, dt, 4, xd, x);
    kt_in(&t, dt, 4, wd, w);
    kt_in(&t, dt, 1, bd, b);
    if (sum)
        kt_in(&t, dt, 4, yd, sd);
    assert_int_equal(kt_run(&t), DG_OK);
    char what[96];
    snprintf(what, sizeof what, "%s %s", dgc_op_name(NODE(&t)->op), ops);
    check_all(&t, y, ny, dt, what, ci);
    kt_free(&t);
    free(x); free(w); free(b); free(sd); free(y);
}

static void test_fused_conv(void **s)
{
    (void)s;
    int k = 0; /* the 9 NHWC cases: every activation in both dtypes */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (!cases[i].nchw) {
            run_fused_case(&cases[i], (int)i, DG_F32, k % 7);
            run_fused_case(&cases[i], (int)i, DG_F64, k++ % 7);
        }
}

static void test_infer_errors(void **s)
{
    (void)s;
    kt t;
    int64_t xd[4] = {1, 5, 5, 2}, wd[4] = {3, 3, 3, 4};
    kt_init(&t, "Conv2D");
    cc_set_str(NODE(&t), "padding", "SAME");
    kt_in(&t, DG_F32, 4, xd, NULL);
    kt_in(&t, DG_F32, 4, wd, NULL); /* 3 input channels, x has 2 */
    assert_int_not_equal(dgc_infer_node(t.g, t.id, &t.err), DG_OK);
    assert_non_null(strstr(t.err.msg, "input channels"));
    kt_free(&t);
    int64_t xd4[4] = {1, 5, 5, 4}, wdg[4] = {3, 3, 2, 3};
    kt_init(&t, "Conv2D");
    cc_set_str(NODE(&t), "padding", "SAME");
    kt_in(&t, DG_F32, 4, xd4, NULL);
    kt_in(&t, DG_F32, 4, wdg, NULL); /* 2 groups, 3 outputs: no grouping */
    assert_int_not_equal(dgc_infer_node(t.g, t.id, &t.err), DG_OK);
    assert_non_null(strstr(t.err.msg, "input channels"));
    kt_free(&t);
    int64_t dyg[4] = {1, 5, 5, 3}, wdg2[4] = {3, 3, 2, 3};
    kt_init(&t, "Conv2DBackpropInput"); /* as above, backwards */
    cc_set_str(NODE(&t), "padding", "SAME");
    kt_sizes(&t, (const int64_t[]){1, 5, 5, 4});
    kt_in(&t, DG_F32, 4, wdg2, NULL);
    kt_in(&t, DG_F32, 4, dyg, NULL);
    assert_int_not_equal(dgc_infer_node(t.g, t.id, &t.err), DG_OK);
    assert_non_null(strstr(t.err.msg, "input channels"));
    kt_free(&t);
    int64_t wd2[4] = {7, 7, 2, 4};
    kt_init(&t, "Conv2D");
    cc_set_str(NODE(&t), "padding", "VALID");
    kt_in(&t, DG_F32, 4, xd, NULL);
    kt_in(&t, DG_F32, 4, wd2, NULL); /* window larger than the input */
    assert_int_not_equal(dgc_infer_node(t.g, t.id, &t.err), DG_OK);
    kt_free(&t);
    /* input_sizes computed at run time by ops dgrun does not read at
     * compile time (here a Placeholder): a clear error, not a crash */
    int64_t v4[1] = {4}, dyd[4] = {1, 5, 5, 4};
    double sz[4] = {1, 5, 5, 2};
    kt_init(&t, "Conv2DBackpropInput");
    cc_set_str(NODE(&t), "padding", "SAME");
    kt_in(&t, DG_I32, 1, v4, sz);
    int64_t wd3[4] = {3, 3, 2, 4};
    kt_in(&t, DG_F32, 4, wd3, NULL);
    kt_in(&t, DG_F32, 4, dyd, NULL);
    assert_int_not_equal(kt_run(&t), DG_OK);
    assert_non_null(strstr(t.err.msg, "is not known"));
    kt_free(&t);
    kt_init(&t, "MaxPool");
    cc_set_str(NODE(&t), "padding", "SAME");
    int64_t k[4] = {2, 2, 2, 1};
    assert_int_equal(dgc_node_set_ints(NODE(&t), "ksize", k, 4), 0);
    kt_in(&t, DG_F32, 4, xd, NULL); /* ksize on the batch dim */
    assert_int_not_equal(dgc_infer_node(t.g, t.id, &t.err), DG_OK);
    kt_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_f32),
        cmocka_unit_test(test_conv_f64),
        cmocka_unit_test(test_conv_grouped),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_fused_bn),
        cmocka_unit_test(test_fused_conv),
        cmocka_unit_test(test_infer_errors),
    };
    g_pool = dgr_pool_new(2, NULL);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    dgr_pool_free(g_pool);
    return rc;
}
