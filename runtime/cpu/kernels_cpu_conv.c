/*
 * kernels_cpu_conv.c -- CPU kernels of Conv2D and DepthwiseConv2dNative and
 * their backprops (input and filter), NHWC or NCHW; _FusedConv2D and
 * _FusedDepthwiseConv2dNative (the fusion pass's convolution + bias [+
 * residual] [+ activation], issue 23) as oneDNN post-ops.
 *
 * float32 runs through oneDNN (kernels_cpu_dnnl.c); float64, and any case
 * oneDNN declines, through the direct loops here (double accumulation),
 * split over the intra-op pool.  The geometry (window, strides, dilations,
 * padding) is infer_nn.c's, so kernels and inference cannot disagree.
 */
#include "kernels_cpu.h"
#include "kernels_cpu_conv.h"
#include "kernels_cpu_dnnl.h"

#include <math.h>
#include <string.h>

int64_t dgr_nn_off(const dgc_nn_geom *g, int64_t n, int64_t h, int64_t w,
                   int64_t c, int64_t H, int64_t W, int64_t C)
{
    return g->nchw ? ((n * C + c) * H + h) * W + w : ((n * H + h) * W + w) * C + c;
}

/* filter element (kh, kw, ic, oc): depthwise oc = ic * mult + m; grouped,
 * ic's index within its group (the filter has C / groups inputs) */
static inline int64_t woff(const dgc_nn_geom *g, int dw, int64_t kh,
                           int64_t kw, int64_t ic, int64_t oc)
{
    int64_t fc = g->C / g->groups;
    return dw ? (kh * g->KW + kw) * g->OC + oc
              : ((kh * g->KW + kw) * fc + ic % fc) * g->OC + oc;
}

typedef struct job {
    const dgc_nn_geom *g;
    int dw;
    dgr_fbuf a, b, o;
} job;

/* y[n, oh, ow, oc] for rows r = n * OH + oh in [r0, r1) */
static void fwd_rows(void *arg, int64_t r0, int64_t r1)
{
    const job *j = arg;
    const dgc_nn_geom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / g->OH, oh = r % g->OH;
        for (int64_t ow = 0; ow < g->OW; ow++)
            for (int64_t oc = 0; oc < g->OC; oc++) {
                int64_t fc = g->C / g->groups; /* grouped: oc's group */
                int64_t c0 = j->dw ? oc / g->mult : oc / (g->OC / g->groups) * fc;
                int64_t c1 = j->dw ? c0 + 1 : c0 + fc;
                double acc = 0;
                for (int64_t kh = 0; kh < g->KH; kh++) {
                    int64_t ih = oh * g->sh - g->pt + kh * g->dh;
                    if (ih < 0 || ih >= g->H)
                        continue;
                    for (int64_t kw = 0; kw < g->KW; kw++) {
                        int64_t iw = ow * g->sw - g->pl + kw * g->dw;
                        if (iw < 0 || iw >= g->W)
                            continue;
                        for (int64_t c = c0; c < c1; c++)
                            acc += fb_ld(j->a, dgr_nn_off(g, n, ih, iw, c, g->H,
                                                       g->W, g->C)) *
                                   fb_ld(j->b, woff(g, j->dw, kh, kw, c, oc));
                    }
                }
                fb_st(j->o, dgr_nn_off(g, n, oh, ow, oc, g->OH, g->OW, g->OC),
                   acc);
            }
    }
}

/* dx[n, ih, iw, ic] for rows r = n * H + ih; a = dy, b = filter */
static void bwd_data_rows(void *arg, int64_t r0, int64_t r1)
{
    const job *j = arg;
    const dgc_nn_geom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t n = r / g->H, ih = r % g->H;
        for (int64_t iw = 0; iw < g->W; iw++)
            for (int64_t ic = 0; ic < g->C; ic++) {
                int64_t og = g->OC / g->groups; /* grouped: ic's group */
                int64_t o0 = j->dw ? ic * g->mult : ic / (g->C / g->groups) * og;
                int64_t o1 = j->dw ? o0 + g->mult : o0 + og;
                double acc = 0;
                for (int64_t kh = 0; kh < g->KH; kh++) {
                    int64_t th = ih + g->pt - kh * g->dh;
                    if (th < 0 || th % g->sh || th / g->sh >= g->OH)
                        continue;
                    for (int64_t kw = 0; kw < g->KW; kw++) {
                        int64_t tw = iw + g->pl - kw * g->dw;
                        if (tw < 0 || tw % g->sw || tw / g->sw >= g->OW)
                            continue;
                        for (int64_t oc = o0; oc < o1; oc++)
                            acc += fb_ld(j->a, dgr_nn_off(g, n, th / g->sh,
                                                       tw / g->sw, oc, g->OH,
                                                       g->OW, g->OC)) *
                                   fb_ld(j->b, woff(g, j->dw, kh, kw, ic, oc));
                    }
                }
                fb_st(j->o, dgr_nn_off(g, n, ih, iw, ic, g->H, g->W, g->C), acc);
            }
    }
}

/* dfilter for items r = (kh * KW + kw) * C + ic; a = x, b = dy */
static void bwd_filter_rows(void *arg, int64_t r0, int64_t r1)
{
    const job *j = arg;
    const dgc_nn_geom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t ic = r % g->C, kw = (r / g->C) % g->KW, kh = r / g->C / g->KW;
        int64_t og = g->OC / g->groups; /* grouped: ic's outputs, each
                                           filter element written once */
        int64_t o0 = j->dw ? ic * g->mult : ic / (g->C / g->groups) * og;
        int64_t o1 = j->dw ? o0 + g->mult : o0 + og;
        for (int64_t oc = o0; oc < o1; oc++) {
            double acc = 0;
            for (int64_t n = 0; n < g->N; n++)
                for (int64_t oh = 0; oh < g->OH; oh++) {
                    int64_t ih = oh * g->sh - g->pt + kh * g->dh;
                    if (ih < 0 || ih >= g->H)
                        continue;
                    for (int64_t ow = 0; ow < g->OW; ow++) {
                        int64_t iw = ow * g->sw - g->pl + kw * g->dw;
                        if (iw < 0 || iw >= g->W)
                            continue;
                        acc += fb_ld(j->a, dgr_nn_off(g, n, ih, iw, ic, g->H,
                                                   g->W, g->C)) *
                               fb_ld(j->b, dgr_nn_off(g, n, oh, ow, oc, g->OH,
                                                   g->OW, g->OC));
                    }
                }
            fb_st(j->o, woff(g, j->dw, kh, kw, ic, oc), acc);
        }
    }
}

/* The geometry of k's node: x = input shape, w = filter shape. */
dg_status dgr_nn_geom(dgr_kctx *k, int kind, const dg_shape *x,
                      const dg_shape *w, dgc_nn_geom *g)
{
    char msg[256];
    if (dgc_nn_geom_init(k->node, kind, x, w, g, msg, sizeof msg) ||
        dgc_nn_geom_check_known(x, w, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    return DG_OK;
}

enum { FWD, BWD_D, BWD_W };

/* The epilogue of a fused convolution run by the loops (float64, or no
 * oneDNN): y = act(y + bias[c] (+ side)), the unfused ops' order. */
typedef struct epi {
    const dgr_post *kind;
    dgr_fbuf bias, side, y;
    int64_t oc;
    double alpha; /* LeakyRelu's or swish's, unrounded for float64 */
} epi;

static void epi_rows(void *arg, int64_t i0, int64_t i1)
{
    const epi *e = arg;
    for (int64_t i = i0; i < i1; i++) {
        double v = fb_ld(e->y, i) + fb_ld(e->bias, i % e->oc);
        if (e->kind->sum)
            v += fb_ld(e->side, i);
        switch (e->kind->act) {
        case DGR_ACT_RELU: v = v > 0 || isnan(v) ? v : 0; break;
        case DGR_ACT_RELU6: v = v > 0 ? (v < 6 ? v : 6) : isnan(v) ? v : 0; break;
        case DGR_ACT_ELU: v = v > 0 ? v : expm1(v); break;
        case DGR_ACT_LEAKY: v = v > 0 ? v : v * e->alpha; break;
        case DGR_ACT_SIGMOID: v = 1 / (1 + exp(-v)); break;
        case DGR_ACT_SWISH: v = v / (1 + exp(-e->alpha * v)); break;
        default: break;
        }
        fb_st(e->y, i, v);
    }
}

/* shared body: input x shape, filter shape, the two operands, the output;
 * post: a fused forward convolution's epilogue (inputs 2, 3: bias, side),
 * or NULL */
static dg_status conv_run(dgr_kctx *k, int what, int dw, const dg_shape *xs,
                          const dg_shape *ws, const dgr_value *a,
                          const dgr_value *b, const dgr_post *post)
{
    dgc_nn_geom g;
    dg_status s = dgr_nn_geom(k, dw ? DGC_NN_DWCONV : DGC_NN_CONV, xs, ws, &g);
    if (s || (s = dgr_kctx_alloc_output(k, 0)))
        return s;
    dg_dtype dt = k->out[0].dtype;
    int64_t nout = dg_shape_numel(&k->out_types[0].shape);
    if (a->dtype != dt || b->dtype != dt)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': inputs must be %s",
                      k->node->name, dg_dtype_name(dt));
    if (post && (k->in[2].dtype != dt ||
                 dg_shape_numel(&k->in[2].shape) != g.OC ||
                 (post->sum && (k->in[3].dtype != dt ||
                                dg_shape_numel(&k->in[3].shape) != nout))))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': the bias must have the %lld output "
                      "channels and the residual the output's shape",
                      k->node->name, (long long)g.OC);
    if (nout == 0)
        return DG_OK;
    int done = 0;
    if (dt == DG_F32) {
        static const int map[] = {DGR_DNNL_CONV_FWD, DGR_DNNL_CONV_BWD_D,
                                  DGR_DNNL_CONV_BWD_W};
        dgr_fused f = {.kind = post ? *post : (dgr_post){0},
                       .bias = post ? dgr_cpu_ptr(&k->in[2]) : NULL,
                       .side = post && post->sum ? dgr_cpu_ptr(&k->in[3])
                                                 : NULL};
        int rc = dgr_dnnl_conv(k, map[what], &g, dw, dgr_cpu_ptr(a),
                               dgr_cpu_ptr(b), dgr_cpu_ptr(&k->out[0]),
                               post ? &f : NULL);
        if (rc == 0 && post)
            return DG_OK;
        if (rc > 0 && post) /* no fused primitive: the plain one */
            rc = dgr_dnnl_conv(k, map[what], &g, dw, dgr_cpu_ptr(a),
                               dgr_cpu_ptr(b), dgr_cpu_ptr(&k->out[0]), NULL);
        if (rc < 0)
            return dg_err_nomem(k->err, k->node->name);
        done = rc == 0;
    }
    if (done && !post)
        return DG_OK;
    int f64 = dt == DG_F64;
    job j = {&g, dw, {dgr_cpu_ptr(a), f64}, {dgr_cpu_ptr(b), f64},
             {dgr_cpu_ptr(&k->out[0]), f64}};
    if (done) /* the plain oneDNN convolution, epilogue below */
        ;
    else if (what == FWD)
        dgr_parallel_for(k->dev->intra, g.N * g.OH, 1, fwd_rows, &j);
    else if (what == BWD_D)
        dgr_parallel_for(k->dev->intra, g.N * g.H, 1, bwd_data_rows, &j);
    else
        dgr_parallel_for(k->dev->intra, g.KH * g.KW * g.C, 1, bwd_filter_rows,
                         &j);
    if (post) {
        epi e = {post, {dgr_cpu_ptr(&k->in[2]), f64},
                 {post->sum ? dgr_cpu_ptr(&k->in[3]) : NULL, f64}, j.o, g.OC,
                 post->act == DGR_ACT_SWISH
                     ? dgc_attr_f(k->node, DGC_AT_swish_beta)
                     : dgc_attr_f(k->node, DGC_AT_leakyrelu_alpha)};
        dgr_parallel_for(k->dev->intra, nout, 4096, epi_rows, &e);
    }
    return DG_OK;
}

dg_status dgr_k_conv2d(dgr_kctx *k)
{
    return conv_run(k, FWD, k->node->op == DGC_OPID_DepthwiseConv2dNative,
                    &k->in[0].shape, &k->in[1].shape, &k->in[0], &k->in[1],
                    NULL);
}
DGR_KERNEL(Conv2D, dgr_k_conv2d);
DGR_KERNEL(DepthwiseConv2dNative, dgr_k_conv2d);

/* _FusedConv2D / _FusedDepthwiseConv2dNative (x, filter, bias[, side]):
 * fused_ops "BiasAdd[,Add][,Relu|Relu6|Elu|LeakyRelu|Sigmoid|Swish]"
 * (fuse_conv.c). */
dg_status dgr_k_fused_conv(dgr_kctx *k)
{
    const dgc_attr *fo = dgc_attr_at(k->node, DGC_AT_fused_ops);
    const char *ops = fo && fo->s ? fo->s : "";
    static const char *const acts[] = {",Relu",      ",Relu6",   ",Elu",
                                       ",LeakyRelu", ",Sigmoid", ",Swish"};
    dgr_post post = {.bias = 1, .sum = strstr(ops, ",Add") != NULL};
    const char *last = strrchr(ops, ',');
    for (int i = 0; last && i < 6; i++)
        if (strcmp(last, acts[i]) == 0)
            post.act = DGR_ACT_RELU + i;
    post.alpha = (float)(post.act == DGR_ACT_SWISH
                             ? dgc_attr_f(k->node, DGC_AT_swish_beta)
                             : dgc_attr_f(k->node, DGC_AT_leakyrelu_alpha));
    if (strncmp(ops, "BiasAdd", 7) != 0 || k->n_in != 3 + post.sum ||
        (last && !post.act && strcmp(last, ",Add") != 0))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': fused_ops '%s' with %d inputs is not a "
                      "fused convolution dgrun runs",
                      k->node->name, ops, k->n_in);
    return conv_run(k, FWD,
                    k->node->op == DGC_OPID__FusedDepthwiseConv2dNative,
                    &k->in[0].shape, &k->in[1].shape, &k->in[0], &k->in[1],
                    &post);
}
DGR_KERNEL(_FusedConv2D, dgr_k_fused_conv);
DGR_KERNEL(_FusedDepthwiseConv2dNative, dgr_k_fused_conv);

static int is_dw(const dgr_kctx *k)
{
    return k->node->op == DGC_OPID_DepthwiseConv2dNativeBackpropInput ||
           k->node->op == DGC_OPID_DepthwiseConv2dNativeBackpropFilter;
}

/* (input_sizes, filter, dy): the input shape is the inferred output's */
dg_status dgr_k_conv2d_bp_input(dgr_kctx *k)
{
    return conv_run(k, BWD_D, is_dw(k), &k->out_types[0].shape,
                    &k->in[1].shape, &k->in[2], &k->in[1], NULL);
}
DGR_KERNEL(Conv2DBackpropInput, dgr_k_conv2d_bp_input);
DGR_KERNEL(DepthwiseConv2dNativeBackpropInput, dgr_k_conv2d_bp_input);

/* (input, filter_sizes, dy) */
dg_status dgr_k_conv2d_bp_filter(dgr_kctx *k)
{
    return conv_run(k, BWD_W, is_dw(k), &k->in[0].shape,
                    &k->out_types[0].shape, &k->in[0], &k->in[2], NULL);
}
DGR_KERNEL(Conv2DBackpropFilter, dgr_k_conv2d_bp_filter);
DGR_KERNEL(DepthwiseConv2dNativeBackpropFilter, dgr_k_conv2d_bp_filter);
