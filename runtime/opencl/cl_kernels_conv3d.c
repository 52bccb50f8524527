/*
 * cl_kernels_conv3d.c -- OpenCL kernels of TF's 3-D CNN ops and LRN (issue
 * 22; their OpenCL C is opencl_kernels/conv3d.cl): Conv3D,
 * Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 as clBLAST GEMMs over
 * patch matrices (dgr_cl_gemm_conv, Conv2D's driver), MaxPool3D,
 * AvgPool3D, AvgPool3DGrad, MaxPool3DGrad and MaxPool3DGradGrad one
 * work-item per output or input element, LRN and LRNGrad one work-item
 * per element.  NDHWC only, as the CPU kernels and inference
 * (dgc_infer_ndhwc_padding); the geometry is dgc_win3d's, the CPU
 * kernels' own.
 */
#include "cl_internal.h"
#include "dg_util.h"
#include "infer.h"

#include <string.h>

/* conv3d.cl's `g3` */
typedef struct g3 {
    cl_long N, D, H, W, C, KD, KH, KW, OD, OH, OW, OC;
    cl_long sd, sh, sw, dd, dh, dw, pd, ph, pw;
} g3;

/* The geometry of the window op k maps input xs to output ys with (filter
 * ws for a convolution, the ksize attr for a pool, ws NULL): strides,
 * SAME / VALID padding, dilations; ys must be what it gives (a backprop's
 * dy is checked so before any kernel reads it). */
static dg_status geom3(dgr_kctx *k, const dg_shape *xs, const dg_shape *ws,
                       const dg_shape *ys, g3 *g)
{
    const char *pad = dgc_attr_str(k->node, DGC_AT_padding);
    int same = pad && strcmp(pad, "SAME") == 0;
    const dgc_attr *sa = dgc_attr_at(k->node, DGC_AT_strides);
    const dgc_attr *ka = ws ? NULL : dgc_attr_at(k->node, DGC_AT_ksize);
    const dgc_attr *da = ws ? dgc_attr_at(k->node, DGC_AT_dilations) : NULL;
    if (xs->rank != 5 || ys->rank != 5 || (ws && ws->rank != 5) || !sa ||
        sa->n != 5 || (!ws && (!ka || ka->n != 5)))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': needs rank-5 NDHWC "
                      "tensors and 5 strides%s", k->node->name,
                      ws ? "" : " and ksize");
    int64_t I[3], K[3], O[3], S[3], Dl[3], P[3];
    for (int d = 0; d < 3; d++) {
        I[d] = xs->dims[1 + d];
        K[d] = ws ? ws->dims[d] : ka->ints[1 + d];
        S[d] = sa->ints[1 + d];
        Dl[d] = da && da->n == 5 ? da->ints[1 + d] : 1;
        if (K[d] < 1 || S[d] < 1 || Dl[d] < 1)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': window, strides "
                          "and dilations must be >= 1", k->node->name);
        O[d] = dgc_win3d(I[d], K[d], S[d], Dl[d], same, &P[d]);
        if (O[d] != ys->dims[1 + d])
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': output dim %d is "
                          "%lld, the window over the input gives %lld",
                          k->node->name, 1 + d, (long long)ys->dims[1 + d],
                          (long long)O[d]);
    }
    g3 r = {xs->dims[0], I[0], I[1], I[2], xs->dims[4], K[0], K[1], K[2],
            O[0], O[1], O[2], ws ? ws->dims[4] : xs->dims[4], S[0], S[1],
            S[2], Dl[0], Dl[1], Dl[2], P[0], P[1], P[2]};
    *g = r;
    if (ys->dims[0] != g->N || ys->dims[4] != g->OC ||
        (ws && ws->dims[3] != g->C))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': batch or channels "
                      "of %s do not match", k->node->name,
                      ws ? "input, filter and output" : "input and output");
    return DG_OK;
}

/* ---- Conv3D and its backprops -------------------------------------------- */

/* what (DGR_CONV_*) of input xs, filter ws, output ys: (a, b) -> output 0
 * as dgr_cl_gemm_conv takes them, both of the output's dtype */
static dg_status conv3d_run(dgr_kctx *k, int what, const dg_shape *xs,
                            const dg_shape *ws, const dg_shape *ys,
                            const dgr_value *a, const dgr_value *b)
{
    dg_dtype dt = k->out_types[0].dtype;
    g3 g;
    dg_status st = geom3(k, xs, ws, ys, &g);
    if (st || (st = dgr_cl_float_output(k, dt)))
        return st;
    if (a->dtype != dt || b->dtype != dt)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': inputs must be %s",
                      k->node->name, dg_dtype_name(dt));
    if (dg_shape_numel(&k->out_types[0].shape) == 0)
        return DG_OK;
    dgr_cl_im2col c = {"conv3d", "im2col3d", "col3d2im", DGR_ARG(g),
                       (size_t)g.N, (size_t)(g.OD * g.OH * g.OW),
                       (size_t)(g.KD * g.KH * g.KW * g.C), (size_t)g.OC,
                       (size_t)(g.D * g.H * g.W * g.C), 0};
    return dgr_cl_gemm_conv(k, what, dt, &c, dgr_cl_mem(a), dgr_cl_mem(b),
                            dgr_cl_mem(&k->out[0]));
}

dg_status dgr_cl_k_conv3d(dgr_kctx *k)
{
    return conv3d_run(k, DGR_CONV_FWD, &k->in[0].shape, &k->in[1].shape,
                      &k->out_types[0].shape, &k->in[0], &k->in[1]);
}
DGR_KERNEL(Conv3D, dgr_cl_k_conv3d);

/* (input_sizes or the input, filter, out_backprop) */
dg_status dgr_cl_k_conv3d_bp_input(dgr_kctx *k)
{
    return conv3d_run(k, DGR_CONV_BWD_D, &k->out_types[0].shape,
                      &k->in[1].shape, &k->in[2].shape, &k->in[2],
                      &k->in[1]);
}
DGR_KERNEL_DT(Conv3DBackpropInputV2, dgr_cl_k_conv3d_bp_input, DGR_CL_KDT_FLOAT_INT);

/* (input, filter_sizes or the filter, out_backprop) */
dg_status dgr_cl_k_conv3d_bp_filter(dgr_kctx *k)
{
    return conv3d_run(k, DGR_CONV_BWD_W, &k->in[0].shape,
                      &k->out_types[0].shape, &k->in[2].shape, &k->in[0],
                      &k->in[2]);
}
DGR_KERNEL(Conv3DBackpropFilterV2, dgr_cl_k_conv3d_bp_filter);

/* ---- pools --------------------------------------------------------------- */

/* MaxPool3D, AvgPool3D: one work-item per output element */
dg_status dgr_cl_k_pool3d(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    g3 g;
    dg_status st = geom3(k, &k->in[0].shape, NULL, &k->out_types[0].shape,
                         &g);
    if (st || (st = dgr_cl_float_output(k, dt)))
        return st;
    cl_int is_max = k->node->op == DGC_OPID_MaxPool3D;
    cl_long n = dg_shape_numel(&k->out_types[0].shape);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(g), DGR_ARG(is_max),
                      DGR_ARG(n)};
    return n ? dgr_cl_launch1d(k, "conv3d", dt, "pool3d_fwd", (size_t)n, a, 5)
             : DG_OK;
}
DGR_KERNEL(MaxPool3D, dgr_cl_k_pool3d);
DGR_KERNEL(AvgPool3D, dgr_cl_k_pool3d);

/* MaxPool3DGrad (orig_input, orig_output, grad) and AvgPool3DGrad
 * (orig_input_shape, grad): one work-item per input element, gathering
 * from the outputs whose window holds it */
dg_status dgr_cl_k_pool3d_grad(dgr_kctx *k)
{
    cl_int is_max = k->node->op == DGC_OPID_MaxPool3DGrad;
    const dgr_value *dy = &k->in[is_max ? 2 : 1];
    dg_dtype dt = dy->dtype;
    g3 g;
    dg_status st = geom3(k, &k->out_types[0].shape, NULL, &dy->shape, &g);
    if (st || (st = dgr_cl_float_output(k, dt)))
        return st;
    if (is_max && (k->in[0].dtype != dt || k->in[1].dtype != dt ||
                   !dg_shape_same(&k->in[1].shape, &dy->shape)))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': orig_output must "
                      "have grad's shape, and both inputs its dtype %s",
                      k->node->name, dg_dtype_name(dt));
    cl_long n = dg_shape_numel(&k->out_types[0].shape);
    cl_mem dym = dgr_cl_mem(dy), dx = dgr_cl_mem(&k->out[0]);
    cl_mem x = is_max ? dgr_cl_mem(&k->in[0]) : dym,
           y = is_max ? dgr_cl_mem(&k->in[1]) : dym;
    if (!n)
        return DG_OK;
    if (!dym) /* an empty grad: no output holds any input */
        x = y = dym = dx;
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(y),      DGR_ARG(dym), DGR_ARG(dx),
                      DGR_ARG(g),  DGR_ARG(is_max), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "conv3d", dt, "pool3d_grad", (size_t)n, a, 7);
}
DGR_KERNEL(MaxPool3DGrad, dgr_cl_k_pool3d_grad);
DGR_KERNEL_DT(AvgPool3DGrad, dgr_cl_k_pool3d_grad, DGR_CL_KDT_FLOAT_INT);

/* MaxPool3DGradGrad (orig_input, orig_output, grad shaped as orig_input):
 * one work-item per output element */
dg_status dgr_cl_k_pool3d_gradgrad(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    g3 g;
    dg_status st = geom3(k, &k->in[0].shape, NULL, &k->in[1].shape, &g);
    if (st || (st = dgr_cl_float_output(k, dt)))
        return st;
    if (k->in[1].dtype != dt || k->in[2].dtype != dt ||
        !dg_shape_same(&k->in[2].shape, &k->in[0].shape))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': grad must have "
                      "orig_input's shape, and all inputs its dtype %s",
                      k->node->name, dg_dtype_name(dt));
    cl_long n = dg_shape_numel(&k->out_types[0].shape);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->in[1]),
           gr = dgr_cl_mem(&k->in[2]), o = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(gr), DGR_ARG(o),
                      DGR_ARG(g), DGR_ARG(n)};
    return n ? dgr_cl_launch1d(k, "conv3d", dt, "pool3d_gradgrad", (size_t)n,
                               a, 6)
             : DG_OK;
}
DGR_KERNEL(MaxPool3DGradGrad, dgr_cl_k_pool3d_gradgrad);

/* ---- LRN, LRNGrad -------------------------------------------------------- */

typedef struct lrn_args {
    cl_long depth, r, n;
    cl_float bias, alpha, beta;
    cl_double bias_d, alpha_d, beta_d;
} lrn_args;

/* Output 0 allocated and k's attrs (the CPU kernel's float values) */
static dg_status lrn_begin(dgr_kctx *k, lrn_args *l)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st)
        return st;
    const dg_shape *s = &k->in[0].shape;
    l->depth = s->rank > 0 ? s->dims[s->rank - 1] : 1;
    l->r = dgc_attr_i(k->node, DGC_AT_depth_radius);
    l->n = dg_shape_numel(s);
    l->bias = (cl_float)dgc_attr_f(k->node, DGC_AT_bias);
    l->alpha = (cl_float)dgc_attr_f(k->node, DGC_AT_alpha);
    l->beta = (cl_float)dgc_attr_f(k->node, DGC_AT_beta);
    l->bias_d = l->bias;
    l->alpha_d = l->alpha;
    l->beta_d = l->beta;
    return DG_OK;
}

/* a T-typed scalar argument */
static dgr_cl_arg targ(dg_dtype dt, const cl_float *f, const cl_double *d)
{
    return dt == DG_F64 ? DGR_ARG(*d) : DGR_ARG(*f);
}

dg_status dgr_cl_k_lrn(dgr_kctx *k)
{
    lrn_args l;
    dg_status st = lrn_begin(k, &l);
    if (st || l.n == 0)
        return st;
    dg_dtype dt = k->in[0].dtype;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),   DGR_ARG(y),
                      DGR_ARG(l.depth), DGR_ARG(l.r),
                      targ(dt, &l.bias, &l.bias_d),
                      targ(dt, &l.alpha, &l.alpha_d),
                      targ(dt, &l.beta, &l.beta_d), DGR_ARG(l.n)};
    return dgr_cl_launch1d(k, "conv3d", dt, "lrn_fwd", (size_t)l.n, a, 8);
}
DGR_KERNEL(LRN, dgr_cl_k_lrn);

/* (input_grads, input_image, output_image): each element's norm into a
 * scratch buffer, then the gather */
dg_status dgr_cl_k_lrn_grad(dgr_kctx *k)
{
    lrn_args l;
    dg_status st = lrn_begin(k, &l);
    if (st || l.n == 0)
        return st;
    dg_dtype dt = k->in[0].dtype;
    for (int i = 1; i < 3; i++)
        if (k->in[i].dtype != dt || !dg_shape_same(&k->in[i].shape,
                                                 &k->in[0].shape))
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': input %d must "
                          "have input_grads' shape and dtype", k->node->name,
                          i);
    dgr_buffer *nb = dgr_buffer_new(k->dev, (size_t)l.n * dg_dtype_size(dt),
                                    k->stream, k->err);
    if (!nb)
        return k->err->code;
    cl_mem dy = dgr_cl_mem(&k->in[0]), x = dgr_cl_mem(&k->in[1]),
           y = dgr_cl_mem(&k->in[2]), dx = dgr_cl_mem(&k->out[0]),
           norm = (cl_mem)nb->mem;
    dgr_cl_arg na[] = {DGR_ARG(x),       DGR_ARG(norm),
                       DGR_ARG(l.depth), DGR_ARG(l.r),
                       targ(dt, &l.bias, &l.bias_d),
                       targ(dt, &l.alpha, &l.alpha_d), DGR_ARG(l.n)};
    dgr_cl_arg ga[] = {DGR_ARG(dy),      DGR_ARG(x),    DGR_ARG(y),
                       DGR_ARG(norm),    DGR_ARG(dx),   DGR_ARG(l.depth),
                       DGR_ARG(l.r),     targ(dt, &l.alpha, &l.alpha_d),
                       targ(dt, &l.beta, &l.beta_d), DGR_ARG(l.n)};
    st = dgr_cl_launch1d(k, "conv3d", dt, "lrn_norm", (size_t)l.n, na, 7);
    if (st == DG_OK)
        st = dgr_cl_launch1d(k, "conv3d", dt, "lrn_grad", (size_t)l.n, ga,
                             10);
    dgr_buffer_release(nb);
    return st;
}
DGR_KERNEL(LRNGrad, dgr_cl_k_lrn_grad);
