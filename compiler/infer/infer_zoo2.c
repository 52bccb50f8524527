/*
 * infer_zoo2.c -- shape functions of the ops of issue 22's short round:
 * Where (one input: the coordinates of the true elements, a row count only
 * the data tells, -1 here; the kernel sizes its output itself), LRN and
 * LRNGrad (NHWC float32, shaped as x), AvgPool3DGrad (shaped by
 * orig_input_shape's value, or like the forward input itself),
 * Conv3DBackpropInputV2 and Conv3DBackpropFilterV2 (shaped by
 * input_sizes' / filter_sizes' value, or like the tensor itself, as the
 * gradient rules give them).
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

int dgc_infer_where(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    (void)msg;
    (void)msgsz;
    const dg_shape *s = &in[0].shape;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].dtype = DG_I64;
    out[0].shape.rank = 2;
    out[0].shape.dims[0] = -1; /* the true elements: only the data tells */
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] == 0)
            out[0].shape.dims[0] = 0;
    out[0].shape.dims[1] = s->rank;
    out[0].value = NULL;
    return 0;
}

int dgc_infer_lrn(DGC_INFER_ARGS)
{
    (void)n;
    for (int i = 0; i < n_in; i++) {
        if (in[i].shape.rank != 4)
            FAIL("input %d must be rank 4 (NHWC), not rank %d", i,
                 in[i].shape.rank);
        if (in[i].dtype != DG_F32)
            FAIL("input %d must be float32, not %s", i,
                 dg_dtype_name(in[i].dtype));
        for (int d = 0; d < 4; d++)
            if (in[i].shape.dims[d] >= 0 && in[0].shape.dims[d] >= 0 &&
                in[i].shape.dims[d] != in[0].shape.dims[d])
                FAIL("input %d's dim %d is %lld, input 0's %lld", i, d,
                     (long long)in[i].shape.dims[d],
                     (long long)in[0].shape.dims[d]);
    }
    out[0].dtype = DG_F32;
    out[0].shape = in[0].shape;
    out[0].value = NULL;
    return 0;
}

int dgc_infer_avg_pool3d_grad(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    const dgc_ttype *o = &in[0], *dy = &in[1];
    if (dy->dtype != DG_F32) /* TF's kernels: float32 (and half) */
        FAIL("grad must be float32, not %s",
             dg_dtype_name(dy->dtype));
    if (dy->shape.rank != 5)
        FAIL("grad must be rank 5 (NDHWC), not rank %d", dy->shape.rank);
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = dy->dtype;
    if (o->dtype == DG_F32 || o->dtype == DG_F64) { /* the input itself */
        out[0].shape = o->shape;
    } else {
        if (o->shape.rank != 1 || (o->shape.dims[0] >= 0 &&
                                   o->shape.dims[0] != 5))
            FAIL("orig_input_shape must be a vector of 5 ints");
        out[0].shape.rank = 5;
        for (int d = 0; d < 5; d++)
            out[0].shape.dims[d] = !o->value ? -1
                : o->dtype == DG_I32 ? ((const int32_t *)o->value)[d]
                                     : ((const int64_t *)o->value)[d];
    }
    if (out[0].shape.rank != 5)
        FAIL("the original input must be rank 5 (NDHWC)");
    return 0;
}

/* MaxPool3DGrad (orig_input, orig_output, grad) -> dx shaped as
 * orig_input; MaxPool3DGradGrad (orig_input, orig_output, grad shaped as
 * orig_input) -> shaped as orig_output.  All three of one float dtype,
 * orig_output (and MaxPool3DGrad's grad) what MaxPool3D of orig_input
 * gives (dgc_infer_conv3d's pool shape). */
int dgc_infer_max_pool3d_grad(DGC_INFER_ARGS)
{
    (void)n_in;
    int gg = n->op == DGC_OPID_MaxPool3DGradGrad;
    dgc_ttype y;
    if (in[1].dtype != in[0].dtype || in[2].dtype != in[0].dtype)
        FAIL("orig_input, orig_output and grad must have one dtype, not "
             "%s, %s, %s", dg_dtype_name(in[0].dtype),
             dg_dtype_name(in[1].dtype), dg_dtype_name(in[2].dtype));
    if (dgc_infer_conv3d(n, in, 1, &y, msg, msgsz))
        return -1;
    for (int i = 1; i < 3; i++) {
        const dg_shape *want = gg && i == 2 ? &in[0].shape : &y.shape;
        if (in[i].shape.rank != 5)
            FAIL("%s must be rank 5 (NDHWC)", i == 1 ? "orig_output" : "grad");
        for (int d = 0; d < 5; d++)
            if (in[i].shape.dims[d] >= 0 && want->dims[d] >= 0 &&
                in[i].shape.dims[d] != want->dims[d])
                FAIL("%s's dim %d is %lld, not %lld (%s)",
                     i == 1 ? "orig_output" : "grad", d,
                     (long long)in[i].shape.dims[d],
                     (long long)want->dims[d],
                     want == &y.shape ? "the pooling of orig_input"
                                      : "orig_input's");
    }
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = in[0].dtype;
    out[0].shape = in[gg ? 1 : 0].shape;
    return 0;
}

/* The rank-5 shape a Conv3D backprop's shape input `sz` names: its value
 * (5 ints; dims -1 while unknown), or a float tensor's own shape. */
static int sizes5(const dgc_ttype *sz, const char *what, dg_shape *s,
                  char *msg, size_t msgsz)
{
    memset(s, 0, sizeof *s);
    if (sz->dtype == DG_F32 || sz->dtype == DG_F64) {
        *s = sz->shape;
        if (s->rank != 5)
            FAIL("%s must be rank 5 (NDHWC)", what);
        return 0;
    }
    if ((sz->dtype != DG_I32 && sz->dtype != DG_I64) || sz->shape.rank != 1 ||
        (sz->shape.dims[0] >= 0 && sz->shape.dims[0] != 5))
        FAIL("%s must be a vector of 5 int32 or int64", what);
    s->rank = 5;
    for (int d = 0; d < 5; d++)
        s->dims[d] = !sz->value ? -1
            : sz->dtype == DG_I32 ? ((const int32_t *)sz->value)[d]
                                  : ((const int64_t *)sz->value)[d];
    return 0;
}

/* What both Conv3D backprops need: the float operand a (`what`, the filter
 * or the input) and out_backprop dy of its dtype, both rank 5; NDHWC,
 * SAME / VALID, 5 strides. */
static int conv3d_bp_check(const dgc_node *n, const dgc_ttype *a,
                           const char *what, const dgc_ttype *dy, char *msg,
                           size_t msgsz)
{
    if (a->dtype != DG_F32 && a->dtype != DG_F64)
        FAIL("%s must be float32 or float64, not %s", what,
             dg_dtype_name(a->dtype));
    if (dy->dtype != a->dtype)
        FAIL("out_backprop is %s, the %s %s", dg_dtype_name(dy->dtype), what,
             dg_dtype_name(a->dtype));
    if (a->shape.rank != 5 || dy->shape.rank != 5)
        FAIL("%s and out_backprop must be rank 5 (NDHWC)", what);
    if (dgc_infer_ndhwc_padding(n, NULL, msg, msgsz))
        return -1;
    const dgc_attr *st = dgc_node_attr(n, "strides");
    if (!st || st->n != 5)
        FAIL("strides must have 5 elements");
    return 0;
}

/* (input_sizes [5 ints] or the input, filter [kd, kh, kw, in, out],
 * out_backprop NDHWC) -> dx of that shape, the filter's dtype;
 * out_backprop must be what Conv3D of that input gives (the kernel). */
int dgc_infer_conv3d_bp_input(DGC_INFER_ARGS)
{
    (void)n_in;
    const dgc_ttype *w = &in[1], *dy = &in[2];
    dg_shape xs;
    if (conv3d_bp_check(n, w, "filter", dy, msg, msgsz) ||
        sizes5(&in[0], "input_sizes", &xs, msg, msgsz))
        return -1;
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = w->dtype;
    out[0].shape = xs;
    if (out[0].shape.dims[4] >= 0 && w->shape.dims[3] >= 0 &&
        out[0].shape.dims[4] != w->shape.dims[3])
        FAIL("input_sizes has %lld channels, the filter %lld",
             (long long)out[0].shape.dims[4], (long long)w->shape.dims[3]);
    if (dy->shape.dims[4] >= 0 && w->shape.dims[4] >= 0 &&
        dy->shape.dims[4] != w->shape.dims[4])
        FAIL("out_backprop has %lld channels, the filter %lld",
             (long long)dy->shape.dims[4], (long long)w->shape.dims[4]);
    return 0;
}

/* (input NDHWC, filter_sizes [5 ints] or the filter, out_backprop) ->
 * dfilter of that shape, the input's dtype. */
int dgc_infer_conv3d_bp_filter(DGC_INFER_ARGS)
{
    (void)n_in;
    const dgc_ttype *x = &in[0], *dy = &in[2];
    dg_shape ws;
    if (conv3d_bp_check(n, x, "input", dy, msg, msgsz) ||
        sizes5(&in[1], "filter_sizes", &ws, msg, msgsz))
        return -1;
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = x->dtype;
    out[0].shape = ws;
    if (ws.dims[3] >= 0 && x->shape.dims[4] >= 0 &&
        ws.dims[3] != x->shape.dims[4])
        FAIL("filter_sizes has %lld input channels, the input %lld",
             (long long)ws.dims[3], (long long)x->shape.dims[4]);
    return 0;
}
