/*
 * cl_kernels_conv.c -- OpenCL kernels of TF's CNN ops (opencl_kernels/conv.cl):
 * Conv2D and its backprops as clBLAST GEMMs over im2col patches (a slice
 * of the batch at a time, so the patch matrix stays under a fixed size;
 * dgr_cl_gemm_conv, which Conv3D's kernels share),
 * depthwise convolution, pooling and fused batch norm as kernels of ours.
 * The geometry is infer_nn.c's, the same the CPU kernels use.
 */
#include "cl_internal.h"
#include "infer_nn.h"

#include <string.h>

/* conv.cl's `geom` */
typedef struct clgeom {
    cl_long N, H, W, C, KH, KW, OH, OW, OC, mult, sh, sw, dh, dw, pt, pl, nchw;
} clgeom;

/* patch matrix elements per slice of the batch, at most */
#define COL_MAX ((size_t)1 << 23)

static dg_status geom(dgr_kctx *k, int kind, const dg_shape *x,
                      const dg_shape *w, dgc_nn_geom *g, clgeom *cg)
{
    char msg[256];
    if (dgc_nn_geom_init(k->node, kind, x, w, g, msg, sizeof msg) ||
        dgc_nn_geom_check_known(x, w, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    clgeom c = {g->N, g->H, g->W, g->C, g->KH, g->KW, g->OH, g->OW, g->OC,
                g->mult, g->sh, g->sw, g->dh, g->dw, g->pt, g->pl, g->nchw};
    *cg = c;
    return DG_OK;
}

/* a scratch buffer of n elements of dt on k's stream */
static dgr_buffer *scratch(dgr_kctx *k, dg_dtype dt, size_t n)
{
    return dgr_buffer_new(k->dev, (n ? n : 1) * dg_dtype_size(dt), k->stream,
                          k->err);
}

static cl_mem memof(dgr_buffer *b) { return b ? (cl_mem)b->mem : NULL; }

/* a 1-D launch of kernel `name` of c's program over n items: (in, out,
 * geom, n0, n) */
static dg_status run_io(dgr_kctx *k, dg_dtype dt, const dgr_cl_im2col *c,
                        const char *name, cl_mem in, cl_mem out, cl_long n0,
                        cl_long n)
{
    dgr_cl_arg a[] = {DGR_ARG(in), DGR_ARG(out), c->geom, DGR_ARG(n0),
                      DGR_ARG(n)};
    return dgr_cl_launch1d(k, c->prog, dt, name, (size_t)n, a, 5);
}

enum { FWD = DGR_CONV_FWD, BWD_D = DGR_CONV_BWD_D, BWD_W = DGR_CONV_BWD_W };

dg_status dgr_cl_gemm_conv(dgr_kctx *k, int what, dg_dtype dt,
                           const dgr_cl_im2col *c, cl_mem a, cl_mem b,
                           cl_mem out)
{
    size_t K = c->K, P1 = c->P1, OC = c->OC, N = c->N;
    size_t nb = (P1 * K) > 0 ? COL_MAX / (P1 * K) : N;
    if (nb < 1)
        nb = 1;
    if (nb > N)
        nb = N;
    dgr_buffer *col = scratch(k, dt, nb * P1 * K);
    dgr_buffer *rows = c->nchw ? scratch(k, dt, nb * P1 * OC) : NULL;
    dg_status st = (!col || (c->nchw && !rows)) ? k->err->code : DG_OK;
    int empty = N == 0 || P1 == 0; /* no outputs: dfilter / dx are 0 */
    if (what != FWD && empty && st == DG_OK) {
        cl_uchar zero = 0;
        const cl_event *wl;
        cl_uint nw = dgr_cl_take_waits(k, &wl);
        cl_event ev = NULL;
        cl_int e = clEnqueueFillBuffer(dgr_cl_queue(k), out, &zero, 1, 0,
                                       (what == BWD_W ? K * OC : N * c->in_ex) *
                                           dg_dtype_size(dt), nw, wl,
                                       dgr_cl_want_event(k) ? &ev : NULL);
        st = dgr_cl_enqueued(k, "clEnqueueFillBuffer", e, wl, nw, ev);
    }
    for (size_t n0 = 0; st == DG_OK && !empty && n0 < N; n0 += nb) {
        size_t cnt = N - n0 < nb ? N - n0 : nb;
        size_t P = cnt * P1;
        cl_mem cm = memof(col), rm = memof(rows);
        if (what == FWD) {
            st = run_io(k, dt, c, c->im2col, a, cm, (cl_long)n0,
                        (cl_long)(P * K));
            if (st == DG_OK)
                st = dgr_cl_gemm(k, dt, 0, 0, P, OC, K, cm, 0, K, b, 0, OC,
                                 0.0, c->nchw ? rm : out,
                                 c->nchw ? 0 : n0 * P1 * OC, OC);
            if (st == DG_OK && c->nchw)
                st = run_io(k, dt, c, "rows_to_nchw", rm, out, (cl_long)n0,
                            (cl_long)(P * OC));
        } else if (what == BWD_W) {
            st = run_io(k, dt, c, c->im2col, a, cm, (cl_long)n0,
                        (cl_long)(P * K));
            if (st == DG_OK && c->nchw)
                st = run_io(k, dt, c, "nchw_to_rows", b, rm, (cl_long)n0,
                            (cl_long)(P * OC));
            if (st == DG_OK)
                st = dgr_cl_gemm(k, dt, 1, 0, K, OC, P, cm, 0, K,
                                 c->nchw ? rm : b, c->nchw ? 0 : n0 * P1 * OC,
                                 OC, n0 ? 1.0 : 0.0, out, 0, OC);
        } else {
            if (c->nchw)
                st = run_io(k, dt, c, "nchw_to_rows", a, rm, (cl_long)n0,
                            (cl_long)(P * OC));
            if (st == DG_OK)
                st = dgr_cl_gemm(k, dt, 0, 1, P, K, OC, c->nchw ? rm : a,
                                 c->nchw ? 0 : n0 * P1 * OC, OC, b, 0, OC, 0.0,
                                 cm, 0, K);
            if (st == DG_OK)
                st = run_io(k, dt, c, c->col2im, cm, out, (cl_long)n0,
                            (cl_long)(cnt * c->in_ex));
        }
    }
    if (col)
        dgr_buffer_release(col);
    if (rows)
        dgr_buffer_release(rows);
    return st;
}

/* Conv2D (non-depthwise) through im2col + GEMM; a, b, out as for the CPU:
 * FWD (x, w) -> y, BWD_D (dy, w) -> dx, BWD_W (x, dy) -> dw */
static dg_status gemm_conv(dgr_kctx *k, int what, dg_dtype dt,
                           const dgc_nn_geom *g, const clgeom *cg, cl_mem a,
                           cl_mem b, cl_mem out)
{
    dgr_cl_im2col c = {"conv", "im2col", "col2im", DGR_ARG(*cg),
                       (size_t)g->N, (size_t)(g->OH * g->OW),
                       (size_t)(g->KH * g->KW * g->C), (size_t)g->OC,
                       (size_t)(g->H * g->W * g->C), (int)g->nchw};
    return dgr_cl_gemm_conv(k, what, dt, &c, a, b, out);
}

/* depthwise: the grouped kernels (groups = C) forward and backward data,
 * a work-group reduction per filter element backward filter */
static dg_status dw_conv(dgr_kctx *k, int what, dg_dtype dt,
                         const dgc_nn_geom *g, const clgeom *cg, cl_mem a,
                         cl_mem b, cl_mem out)
{
    if (what == BWD_W) {
        size_t es = dg_dtype_size(dt), l;
        cl_long P = g->N * g->OH * g->OW;
        dg_status st = dgr_cl_reduce_wg(k, "conv", dt, "dw_bwd_filter",
                                        (size_t)(P > 0 ? P : 1), es, &l);
        if (st != DG_OK)
            return st;
        dgr_cl_arg args[] = {DGR_ARG(a), DGR_ARG(b), DGR_ARG(out),
                             DGR_ARG(*cg), DGR_LOCAL(l * es)};
        size_t gs = (size_t)(g->KH * g->KW * g->OC) * l;
        return gs ? dgr_cl_launch(k, "conv", dt, "dw_bwd_filter", 1, &gs, &l,
                                  args, 5)
                  : DG_OK;
    }
    /* forward and backward data: the grouped kernels with groups = C */
    cl_long n = what == FWD ? g->N * g->OH * g->OW * g->OC
                            : g->N * g->H * g->W * g->C;
    cl_long groups = g->C;
    dgr_cl_arg args[] = {DGR_ARG(a), DGR_ARG(b), DGR_ARG(out), DGR_ARG(*cg),
                         DGR_ARG(groups), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "conv", dt,
                           what == FWD ? "grouped_fwd" : "grouped_bwd_data",
                           (size_t)n, args, 6);
}

static dg_status conv_run(dgr_kctx *k, int what, int dw, const dg_shape *xs,
                          const dg_shape *ws, const dgr_value *a,
                          const dgr_value *b)
{
    dg_dtype dt = k->out_types[0].dtype;
    dgc_nn_geom g;
    clgeom cg;
    dg_status st = geom(k, dw ? DGC_NN_DWCONV : DGC_NN_CONV, xs, ws, &g, &cg);
    if (st || (st = dgr_cl_float_output(k, dt)))
        return st;
    if (a->dtype != dt || b->dtype != dt)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': inputs must be %s",
                      k->node->name, dg_dtype_name(dt));
    if (dg_shape_numel(&k->out_types[0].shape) == 0)
        return DG_OK;
    cl_mem am = dgr_cl_mem(a), bm = dgr_cl_mem(b), om = dgr_cl_mem(&k->out[0]);
    if (g.groups > 1) { /* grouped Conv2D: direct sums, one item an output
                           element (dy, dx, or dfilter) */
        static const char *const kn[] = {"grouped_fwd", "grouped_bwd_data",
                                         "grouped_bwd_filter"};
        cl_long groups = g.groups;
        cl_long n = what == FWD ? g.N * g.OH * g.OW * g.OC
                    : what == BWD_D ? g.N * g.H * g.W * g.C
                                    : g.KH * g.KW * (g.C / groups) * g.OC;
        dgr_cl_arg args[] = {DGR_ARG(am), DGR_ARG(bm), DGR_ARG(om),
                             DGR_ARG(cg), DGR_ARG(groups), DGR_ARG(n)};
        return dgr_cl_launch1d(k, "conv", dt, kn[what], (size_t)n, args, 6);
    }
    return dw ? dw_conv(k, what, dt, &g, &cg, am, bm, om)
              : gemm_conv(k, what, dt, &g, &cg, am, bm, om);
}

dg_status dgr_cl_k_conv2d(dgr_kctx *k)
{
    return conv_run(k, FWD, k->node->op == DGC_OPID_DepthwiseConv2dNative,
                    &k->in[0].shape, &k->in[1].shape, &k->in[0], &k->in[1]);
}
DGR_KERNEL(Conv2D, dgr_cl_k_conv2d);
DGR_KERNEL(DepthwiseConv2dNative, dgr_cl_k_conv2d);

static int is_dw(const dgr_kctx *k)
{
    return k->node->op == DGC_OPID_DepthwiseConv2dNativeBackpropInput ||
           k->node->op == DGC_OPID_DepthwiseConv2dNativeBackpropFilter;
}

dg_status dgr_cl_k_conv2d_bp_input(dgr_kctx *k)
{
    return conv_run(k, BWD_D, is_dw(k), &k->out_types[0].shape,
                    &k->in[1].shape, &k->in[2], &k->in[1]);
}
DGR_KERNEL_DT(Conv2DBackpropInput, dgr_cl_k_conv2d_bp_input, DGR_CL_KDT_FLOAT_INT);
DGR_KERNEL_DT(DepthwiseConv2dNativeBackpropInput, dgr_cl_k_conv2d_bp_input, DGR_CL_KDT_FLOAT_INT);

dg_status dgr_cl_k_conv2d_bp_filter(dgr_kctx *k)
{
    return conv_run(k, BWD_W, is_dw(k), &k->in[0].shape,
                    &k->out_types[0].shape, &k->in[0], &k->in[2]);
}
DGR_KERNEL(Conv2DBackpropFilter, dgr_cl_k_conv2d_bp_filter);
DGR_KERNEL(DepthwiseConv2dNativeBackpropFilter, dgr_cl_k_conv2d_bp_filter);

/* ---- pooling ------------------------------------------------------------- */

dg_status dgr_cl_k_pool(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dgc_nn_geom g;
    clgeom cg;
    dg_status st = geom(k, DGC_NN_POOL, &k->in[0].shape, NULL, &g, &cg);
    if (st || (st = dgr_cl_float_output(k, dt)))
        return st;
    cl_int is_max = k->node->op == DGC_OPID_MaxPool;
    cl_long n = dg_shape_numel(&k->out_types[0].shape);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(cg), DGR_ARG(is_max),
                      DGR_ARG(n)};
    return dgr_cl_launch1d(k, "conv", dt, "pool_fwd", (size_t)n, a, 5);
}
DGR_KERNEL(MaxPool, dgr_cl_k_pool);
DGR_KERNEL(AvgPool, dgr_cl_k_pool);

/* MaxPoolGrad (x, y, dy) and AvgPoolGrad (sizes, dy) */
dg_status dgr_cl_k_pool_grad(dgr_kctx *k)
{
    cl_int is_max = k->node->op == DGC_OPID_MaxPoolGrad;
    const dgr_value *dy = &k->in[is_max ? 2 : 1];
    dg_dtype dt = dy->dtype;
    dgc_nn_geom g;
    clgeom cg;
    dg_status st = geom(k, DGC_NN_POOL, &k->out_types[0].shape, NULL, &g, &cg);
    if (st || (st = dgr_cl_float_output(k, dt)))
        return st;
    cl_long n = dg_shape_numel(&k->out_types[0].shape);
    cl_mem x = is_max ? dgr_cl_mem(&k->in[0]) : dgr_cl_mem(dy),
           dym = dgr_cl_mem(dy), dx = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(dym),    DGR_ARG(dx),
                      DGR_ARG(cg), DGR_ARG(is_max), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "conv", dt, "pool_grad", (size_t)n, a, 6);
}
DGR_KERNEL(MaxPoolGrad, dgr_cl_k_pool_grad);
DGR_KERNEL_DT(AvgPoolGrad, dgr_cl_k_pool_grad, DGR_CL_KDT_FLOAT_INT);

/* ---- fused batch norm ---------------------------------------------------- */

typedef struct bnarg {
    cl_long rows, HW, C, nchw, n;
    cl_int train;
    cl_float ff, ef;
    cl_double fd, ed;
} bnarg;

static void bn_setup(dgr_kctx *k, const dg_shape *xs, bnarg *b)
{
    const dgc_attr *df = dgc_attr_at(k->node, DGC_AT_data_format);
    b->nchw = df && df->s && strcmp(df->s, "NCHW") == 0;
    b->n = dg_shape_numel(xs);
    b->C = xs->dims[b->nchw ? 1 : 3];
    b->HW = xs->dims[b->nchw ? 2 : 1] * xs->dims[b->nchw ? 3 : 2];
    b->rows = xs->dims[0] * b->HW;
    b->train = dgc_attr_b(k->node, DGC_AT_is_training);
    b->fd = dgc_attr_f(k->node, DGC_AT_exponential_avg_factor);
    b->ed = dgc_attr_f(k->node, DGC_AT_epsilon);
    b->ff = (cl_float)b->fd;
    b->ef = (cl_float)b->ed;
}

static dg_status outs(dgr_kctx *k, dg_dtype dt)
{
    dg_status st = dgr_cl_need_float(k, dt);
    for (int i = 0; i < k->n_out && st == DG_OK; i++)
        st = dgr_kctx_alloc_output(k, i);
    for (int i = 0; i < k->n_in && st == DG_OK; i++)
        if (k->in[i].dtype != dt)
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': input %d must be %s",
                        k->node->name, i, dg_dtype_name(dt));
    return st;
}

/* one work-group per channel, then one work-item per element */
static dg_status chan_then_apply(dgr_kctx *k, dg_dtype dt, const char *red,
                                 dgr_cl_arg *ra, int nra, const bnarg *b,
                                 const char *app, const dgr_cl_arg *aa,
                                 int naa)
{
    size_t es = dg_dtype_size(dt), l;
    dg_status st = dgr_cl_reduce_wg(k, "conv", dt, red,
                                    (size_t)(b->rows > 0 ? b->rows : 1), es,
                                    &l);
    if (st != DG_OK || b->C == 0)
        return st;
    ra[nra - 1] = DGR_LOCAL(l * es);
    size_t gs = (size_t)b->C * l;
    if ((st = dgr_cl_launch(k, "conv", dt, red, 1, &gs, &l, ra, nra)))
        return st;
    return dgr_cl_launch1d(k, "conv", dt, app, (size_t)b->n, aa, naa);
}

dg_status dgr_cl_k_fused_bn(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = outs(k, dt);
    if (st)
        return st;
    bnarg b;
    bn_setup(k, &k->in[0].shape, &b);
    int d = dt == DG_F64;
    cl_mem x = dgr_cl_mem(&k->in[0]), sc = dgr_cl_mem(&k->in[1]),
           of = dgr_cl_mem(&k->in[2]), pm = dgr_cl_mem(&k->in[3]),
           pv = dgr_cl_mem(&k->in[4]), y = dgr_cl_mem(&k->out[0]),
           bm = dgr_cl_mem(&k->out[1]), bv = dgr_cl_mem(&k->out[2]),
           r1 = dgr_cl_mem(&k->out[3]), r2 = dgr_cl_mem(&k->out[4]);
    if (k->in[3].shape.dims[0] < b.C && (!b.train || b.fd != 1.0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': mean and variance "
                      "must have %lld elements", k->node->name,
                      (long long)b.C);
    if (!pm || !pv) /* empty mean / variance of a training batch norm */
        pm = pv = r1;
    dgr_cl_arg ra[] = {DGR_ARG(x),      DGR_ARG(pm),     DGR_ARG(pv),
                       DGR_ARG(bm),     DGR_ARG(bv),     DGR_ARG(r1),
                       DGR_ARG(r2),     DGR_ARG(b.rows), DGR_ARG(b.HW),
                       DGR_ARG(b.C),    DGR_ARG(b.nchw), DGR_ARG(b.train),
                       d ? DGR_ARG(b.fd) : DGR_ARG(b.ff), {0, NULL}};
    dgr_cl_arg aa[] = {DGR_ARG(x),   DGR_ARG(sc),   DGR_ARG(of),  DGR_ARG(r1),
                       DGR_ARG(r2),  DGR_ARG(y),    DGR_ARG(b.n), DGR_ARG(b.HW),
                       DGR_ARG(b.C), DGR_ARG(b.nchw),
                       d ? DGR_ARG(b.ed) : DGR_ARG(b.ef)};
    return chan_then_apply(k, dt, "fbn_stats", ra, 14, &b, "fbn_apply", aa,
                           11);
}
DGR_KERNEL(FusedBatchNormV3, dgr_cl_k_fused_bn);

dg_status dgr_cl_k_fused_bn_grad(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = outs(k, dt);
    if (st)
        return st;
    bnarg b;
    bn_setup(k, &k->in[1].shape, &b);
    int d = dt == DG_F64;
    cl_mem dy = dgr_cl_mem(&k->in[0]), x = dgr_cl_mem(&k->in[1]),
           sc = dgr_cl_mem(&k->in[2]), m = dgr_cl_mem(&k->in[3]),
           v = dgr_cl_mem(&k->in[4]), dx = dgr_cl_mem(&k->out[0]),
           ds = dgr_cl_mem(&k->out[1]), dof = dgr_cl_mem(&k->out[2]);
    dgr_cl_arg eps = d ? DGR_ARG(b.ed) : DGR_ARG(b.ef);
    dgr_cl_arg ra[] = {DGR_ARG(dy),     DGR_ARG(x),    DGR_ARG(m),
                       DGR_ARG(v),      DGR_ARG(ds),   DGR_ARG(dof),
                       DGR_ARG(b.rows), DGR_ARG(b.HW), DGR_ARG(b.C),
                       DGR_ARG(b.nchw), eps,           {0, NULL}};
    dgr_cl_arg aa[] = {DGR_ARG(dy),     DGR_ARG(x),    DGR_ARG(sc),
                       DGR_ARG(m),      DGR_ARG(v),    DGR_ARG(ds),
                       DGR_ARG(dof),    DGR_ARG(dx),   DGR_ARG(b.n),
                       DGR_ARG(b.rows), DGR_ARG(b.HW), DGR_ARG(b.C),
                       DGR_ARG(b.nchw), DGR_ARG(b.train), eps};
    return chan_then_apply(k, dt, "fbn_grad_reduce", ra, 12, &b,
                           "fbn_grad_apply", aa, 15);
}
DGR_KERNEL(FusedBatchNormGradV3, dgr_cl_k_fused_bn_grad);
