/*
 * infer_nn.c -- shape inference of TF's CNN ops: Conv2D and
 * DepthwiseConv2dNative with their two backprops, MaxPool / AvgPool with
 * their gradients, FusedBatchNormV3 and its gradient; and the window
 * geometry (TF's SAME / VALID / EXPLICIT padding) the kernels share.
 *
 * The backprop ops take the shape they produce as a tensor (input_sizes,
 * filter_sizes, orig_input_shape).  dgrun reads its value when it is known
 * at compile time (dgc_nn_resolve_sizes: a Const, or Shape / ShapeN of a
 * typed tensor) and fills dims it cannot know from the other inputs (the
 * batch from dy, channels from the filter).  The gradient pass passes the
 * forward tensor itself instead (a float input: "shaped like"), which keeps
 * run-time batch sizes exact.
 */
#include "infer.h"
#include "infer_nn.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) (snprintf(msg, msgsz, __VA_ARGS__), -1)

void dgc_nn_shape4(int nchw, int64_t N, int64_t H, int64_t W, int64_t C,
                   dg_shape *s)
{
    memset(s, 0, sizeof *s);
    s->rank = 4;
    s->dims[0] = N;
    s->dims[nchw ? 2 : 1] = H;
    s->dims[nchw ? 3 : 2] = W;
    s->dims[nchw ? 1 : 3] = C;
}

static int is_float(dg_dtype t) { return t == DG_F32 || t == DG_F64; }

/* attr `key` as 4 ints in data_format order -> (h, w); dflt when absent */
static int hw_attr(const dgc_node *n, const char *key, int nchw, int64_t dflt,
                   int64_t *h, int64_t *w, char *msg, size_t msgsz)
{
    const dgc_attr *a = dgc_node_attr(n, key);
    *h = *w = dflt;
    if (!a)
        return dflt > 0 ? 0 : FAIL("attr '%s' is required", key);
    if (a->kind != DGC_A_INTS || a->n != 4)
        return FAIL("attr '%s' must be a list of 4 ints", key);
    int hi = nchw ? 2 : 1, ci = nchw ? 1 : 3;
    if (a->ints[0] != 1 || a->ints[ci] != 1)
        return FAIL("attr '%s' must be 1 on the batch and channel dims", key);
    *h = a->ints[hi];
    *w = a->ints[hi + 1];
    if (*h < 1 || *w < 1)
        return FAIL("attr '%s' must be positive", key);
    return 0;
}

/* output size and padding of one spatial dim */
static int spatial(int64_t in, int64_t k, int64_t s, int64_t d, int pad,
                   const int64_t *expl, int64_t *out, int64_t *p0,
                   int64_t *p1, char *msg, size_t msgsz)
{
    int64_t dk = (k - 1) * d + 1;
    *p0 = *p1 = 0;
    if (pad == 2) {
        *p0 = expl[0];
        *p1 = expl[1];
    }
    if (in < 0 || k < 0) {
        *out = -1;
        return 0;
    }
    if (pad == 1) { /* SAME */
        *out = (in + s - 1) / s;
        int64_t tot = (*out - 1) * s + dk - in;
        if (tot < 0)
            tot = 0;
        *p0 = tot / 2;
        *p1 = tot - *p0;
        return 0;
    }
    int64_t span = in + *p0 + *p1 - dk;
    if (span < 0)
        return FAIL("window %lld (dilated) is larger than the padded input "
                    "%lld", (long long)dk, (long long)(in + *p0 + *p1));
    *out = span / s + 1;
    return 0;
}

/* A Conv2D (or its fused form or backprops) whose filter's input channels
 * divide the input's, the output channels a multiple of the groups (TF's
 * grouped convolution, as tf_keras' Conv2D(groups=...) makes): 1 and
 * g->groups set, else 0. */
static int grouped(const dgc_node *n, int kind, const dg_shape *w,
                   dgc_nn_geom *g)
{
    if (kind != DGC_NN_CONV || (n->op != DGC_OPID_Conv2D &&
                                n->op != DGC_OPID__FusedConv2D &&
                                n->op != DGC_OPID_Conv2DBackpropInput &&
                                n->op != DGC_OPID_Conv2DBackpropFilter) ||
        w->dims[2] < 1 || g->C % w->dims[2] || w->dims[3] < 0 ||
        w->dims[3] % (g->C / w->dims[2]))
        return 0;
    g->groups = g->C / w->dims[2];
    return 1;
}

int dgc_nn_geom_init(const dgc_node *n, int kind, const dg_shape *x,
                     const dg_shape *w, dgc_nn_geom *g, char *msg,
                     size_t msgsz)
{
    memset(g, 0, sizeof *g);
    const dgc_attr *df = dgc_node_attr(n, "data_format");
    if (df && (df->kind != DGC_A_STR || !df->s ||
               (strcmp(df->s, "NHWC") != 0 && strcmp(df->s, "NCHW") != 0)))
        return FAIL("attr 'data_format' must be \"NHWC\" or \"NCHW\"");
    g->nchw = df && strcmp(df->s, "NCHW") == 0;
    if (x->rank != 4)
        return FAIL("input must have rank 4, got rank %d", x->rank);
    g->N = x->dims[0];
    g->H = x->dims[g->nchw ? 2 : 1];
    g->W = x->dims[g->nchw ? 3 : 2];
    g->C = x->dims[g->nchw ? 1 : 3];
    g->mult = g->groups = 1;
    if (hw_attr(n, "strides", g->nchw, 1, &g->sh, &g->sw, msg, msgsz))
        return -1;
    if (kind == DGC_NN_POOL) {
        g->dh = g->dw = 1;
        if (hw_attr(n, "ksize", g->nchw, 0, &g->KH, &g->KW, msg, msgsz))
            return -1;
        g->OC = g->C;
    } else {
        if (hw_attr(n, "dilations", g->nchw, 1, &g->dh, &g->dw, msg, msgsz))
            return -1;
        if (w->rank != 4)
            return FAIL("filter must have rank 4, got rank %d", w->rank);
        g->KH = w->dims[0];
        g->KW = w->dims[1];
        if (w->dims[2] >= 0 && g->C >= 0 && w->dims[2] != g->C &&
            !grouped(n, kind, w, g))
            return FAIL("filter has %lld input channels, the input has %lld",
                        (long long)w->dims[2], (long long)g->C);
        if (kind == DGC_NN_DWCONV) {
            g->mult = w->dims[3];
            g->OC = (g->C < 0 || g->mult < 0) ? -1 : g->C * g->mult;
        } else {
            g->OC = w->dims[3];
        }
    }
    const dgc_attr *pa = dgc_node_attr(n, "padding");
    if (!pa || pa->kind != DGC_A_STR || !pa->s)
        return FAIL("attr 'padding' (\"SAME\", \"VALID\" or \"EXPLICIT\") is "
                    "required");
    int pad = strcmp(pa->s, "VALID") == 0 ? 0 : strcmp(pa->s, "SAME") == 0 ? 1
              : strcmp(pa->s, "EXPLICIT") == 0 ? 2 : -1;
    if (pad < 0)
        return FAIL("attr 'padding' must be \"SAME\", \"VALID\" or "
                    "\"EXPLICIT\", got \"%s\"", pa->s);
    int64_t ex[8] = {0};
    const dgc_attr *ea = dgc_node_attr(n, "explicit_paddings");
    if (pad == 2) {
        if (!ea || ea->kind != DGC_A_INTS || ea->n != 8)
            return FAIL("padding \"EXPLICIT\" needs attr 'explicit_paddings' "
                        "of 8 ints");
        int hi = g->nchw ? 2 : 1, ci = g->nchw ? 1 : 3;
        for (int i = 0; i < 8; i++)
            if (ea->ints[i] < 0)
                return FAIL("attr 'explicit_paddings' must be >= 0");
        if (ea->ints[0] || ea->ints[1] || ea->ints[2 * ci] ||
            ea->ints[2 * ci + 1])
            return FAIL("attr 'explicit_paddings' must be 0 on the batch and "
                        "channel dims");
        memcpy(ex, ea->ints + 2 * hi, 4 * sizeof *ex);
    } else if (ea && ea->n > 0) {
        return FAIL("attr 'explicit_paddings' needs padding \"EXPLICIT\"");
    }
    if (spatial(g->H, g->KH, g->sh, g->dh, pad, ex, &g->OH, &g->pt, &g->pb,
                msg, msgsz) ||
        spatial(g->W, g->KW, g->sw, g->dw, pad, ex + 2, &g->OW, &g->pl, &g->pr,
                msg, msgsz))
        return -1;
    if (kind == DGC_NN_POOL && (g->KH > g->H + g->pt + g->pb) && g->H >= 0)
        return FAIL("pooling window is larger than the input");
    return 0;
}

int dgc_nn_geom_check_known(const dg_shape *x, const dg_shape *w, char *msg,
                            size_t msgsz)
{
    for (int i = 0; i < 4; i++)
        if (x->dims[i] < 0 || (w && w->dims[i] < 0))
            return FAIL("the shape input (input_sizes / filter_sizes / "
                        "orig_input_shape) is not known: dgrun reads it when "
                        "it is a Const, or Shape / ShapeN of a tensor of "
                        "known shape");
    return 0;
}

/* ---- shape-tensor inputs --------------------------------------------------- */

int dgc_nn_sizes_input(int op, int *idx)
{
    switch (op) {
    case DGC_OPID_Conv2DBackpropInput:
    case DGC_OPID_DepthwiseConv2dNativeBackpropInput:
    case DGC_OPID_AvgPoolGrad:
        *idx = 0;
        return 1;
    case DGC_OPID_Conv2DBackpropFilter:
    case DGC_OPID_DepthwiseConv2dNativeBackpropFilter:
        *idx = 1;
        return 1;
    default:
        return 0;
    }
}

/* The value of integer tensor r when known at compile time. */
static int known_value(const dgc_graph *g, dgc_ref r, dg_shape *s, int depth)
{
    const dgc_node *p = &g->nodes[r.node];
    const char *op = dgc_op_name(p->op);
    if (depth > 16)
        return -1;
    if (strcmp(op, "Identity") == 0 && p->n_inputs == 1)
        return known_value(g, p->inputs[0], s, depth + 1);
    if (strcmp(op, "Const") == 0) {
        const dgc_attr *v = dgc_node_attr(p, "value");
        const dg_tensor *t = v ? v->tensor : NULL;
        if (!t || t->shape.rank != 1 || t->shape.dims[0] > DG_MAX_RANK ||
            (t->dtype != DG_I32 && t->dtype != DG_I64))
            return -1;
        memset(s, 0, sizeof *s);
        s->rank = (int)t->shape.dims[0];
        for (int i = 0; i < s->rank; i++)
            s->dims[i] = t->dtype == DG_I32 ? ((const int32_t *)t->data)[i]
                                            : ((const int64_t *)t->data)[i];
        return 0;
    }
    int k = strcmp(op, "Shape") == 0 ? 0 : strcmp(op, "ShapeN") == 0 ? r.index
                                                                      : -1;
    if (k < 0 || k >= p->n_inputs)
        return -1;
    const dgc_node *q = &g->nodes[p->inputs[k].node];
    if (p->inputs[k].index >= q->n_outputs || !q->outputs)
        return -1;
    *s = q->outputs[p->inputs[k].index].shape;
    return 0;
}

int dgc_nn_resolve_sizes(dgc_graph *g, int32_t id)
{
    dgc_node *n = &g->nodes[id];
    int k;
    if (!dgc_nn_sizes_input(n->op, &k) || k >= n->n_inputs)
        return 0;
    dg_shape s;
    if (known_value(g, n->inputs[k], &s, 0))
        return 0;
    return dgc_node_set_shape(n, "_sizes", &s);
}

/* The shape a sizes input stands for: a float input is "shaped like"; an
 * integer one has its value in `_sizes` (else rank 4 of unknown dims). */
static int sizes_shape(const dgc_node *n, const dgc_ttype *t, dg_shape *s,
                       char *msg, size_t msgsz)
{
    if (is_float(t->dtype)) {
        *s = t->shape;
    } else if (t->dtype == DG_I32 || t->dtype == DG_I64) {
        if (t->shape.rank != 1 || (t->shape.dims[0] >= 0 &&
                                   t->shape.dims[0] != 4))
            return FAIL("the sizes input must be a vector of 4 ints");
        const dgc_attr *a = dgc_node_attr(n, "_sizes");
        memset(s, 0, sizeof *s);
        s->rank = 4;
        for (int i = 0; i < 4; i++)
            s->dims[i] = a && a->n == 4 ? a->ints[i] : -1;
    } else {
        return FAIL("the sizes input must be int32 or int64");
    }
    if (s->rank != 4)
        return FAIL("the sizes input must describe a rank-4 shape");
    return 0;
}

static void fill(int64_t *d, int64_t v)
{
    if (*d < 0)
        *d = v;
}

static int same_dtype(const dgc_ttype *a, const dgc_ttype *b, char *msg,
                      size_t msgsz)
{
    if (!is_float(a->dtype))
        return FAIL("needs float32 or float64, got %s", dg_dtype_name(a->dtype));
    if (a->dtype != b->dtype)
        return FAIL("inputs have dtypes %s and %s", dg_dtype_name(a->dtype),
                    dg_dtype_name(b->dtype));
    return 0;
}

static int dim_eq(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

/* dy must have the output shape of geometry g */
static int check_dy(const dgc_nn_geom *g, const dg_shape *dy, char *msg,
                    size_t msgsz)
{
    dg_shape o;
    dgc_nn_shape4(g->nchw, g->N, g->OH, g->OW, g->OC, &o);
    if (dy->rank != 4)
        return FAIL("dy must have rank 4");
    for (int i = 0; i < 4; i++)
        if (!dim_eq(o.dims[i], dy->dims[i]))
            return FAIL("dy has dim %d = %lld, the forward output has %lld", i,
                        (long long)dy->dims[i], (long long)o.dims[i]);
    return 0;
}

static int conv_fwd(DGC_INFER_ARGS, int kind)
{
    dgc_nn_geom g;
    if (n_in != 2 || same_dtype(&in[0], &in[1], msg, msgsz) ||
        dgc_nn_geom_init(n, kind, &in[0].shape, &in[1].shape, &g, msg, msgsz))
        return n_in != 2 ? FAIL("needs 2 inputs") : -1;
    out[0].dtype = in[0].dtype;
    dgc_nn_shape4(g.nchw, g.N, g.OH, g.OW, g.OC, &out[0].shape);
    return 0;
}

int dgc_infer_conv2d(DGC_INFER_ARGS)
{
    return conv_fwd(n, in, n_in, out, msg, msgsz, DGC_NN_CONV);
}

int dgc_infer_dwconv(DGC_INFER_ARGS)
{
    return conv_fwd(n, in, n_in, out, msg, msgsz, DGC_NN_DWCONV);
}

/* _FusedConv2D / _FusedDepthwiseConv2dNative (x, filter, bias[, side]):
 * the convolution's output; bias [OC], side (the residual) that shape. */
int dgc_infer_fused_conv(DGC_INFER_ARGS)
{
    if (n_in != 3 && n_in != 4)
        return FAIL("needs 3 or 4 inputs (x, filter, bias[, side])");
    int kind = n->op == DGC_OPID__FusedDepthwiseConv2dNative ? DGC_NN_DWCONV
                                                              : DGC_NN_CONV;
    const dgc_attr *df = dgc_node_attr(n, "data_format");
    if (df && df->s && strcmp(df->s, "NHWC") != 0)
        return FAIL("a fused convolution is NHWC only");
    if (conv_fwd(n, in, 2, out, msg, msgsz, kind))
        return -1;
    const dg_shape *y = &out[0].shape, *b = &in[2].shape;
    if (in[2].dtype != out[0].dtype || b->rank != 1 ||
        (b->dims[0] >= 0 && y->dims[3] >= 0 && b->dims[0] != y->dims[3]))
        return FAIL("bias must be a vector of the output's %lld channels",
                    (long long)y->dims[3]);
    if (n_in == 4) {
        const dg_shape *s = &in[3].shape;
        int ok = in[3].dtype == out[0].dtype && s->rank == 4;
        for (int i = 0; ok && i < 4; i++)
            ok = s->dims[i] < 0 || y->dims[i] < 0 || s->dims[i] == y->dims[i];
        if (!ok)
            return FAIL("the residual input must have the output's shape");
    }
    return 0;
}

static int dw_kind(const dgc_node *n)
{
    return n->op == DGC_OPID_DepthwiseConv2dNativeBackpropInput ||
                   n->op == DGC_OPID_DepthwiseConv2dNativeBackpropFilter
               ? DGC_NN_DWCONV : DGC_NN_CONV;
}

/* (input_sizes, filter, dy) -> dx */
int dgc_infer_conv_bp_input(DGC_INFER_ARGS)
{
    dg_shape x;
    dgc_nn_geom g;
    if (n_in != 3)
        return FAIL("needs 3 inputs");
    if (same_dtype(&in[1], &in[2], msg, msgsz) ||
        sizes_shape(n, &in[0], &x, msg, msgsz))
        return -1;
    if (in[1].shape.rank != 4 || in[2].shape.rank != 4)
        return FAIL("filter and dy must have rank 4");
    int nchw = 0;
    const dgc_attr *df = dgc_node_attr(n, "data_format");
    nchw = df && df->s && strcmp(df->s, "NCHW") == 0;
    fill(&x.dims[0], in[2].shape.dims[0]);
    fill(&x.dims[nchw ? 1 : 3], in[1].shape.dims[2]);
    if (dgc_nn_geom_init(n, dw_kind(n), &x, &in[1].shape, &g, msg, msgsz) ||
        check_dy(&g, &in[2].shape, msg, msgsz))
        return -1;
    out[0].dtype = in[1].dtype;
    out[0].shape = x;
    return 0;
}

/* (input, filter_sizes, dy) -> dfilter */
int dgc_infer_conv_bp_filter(DGC_INFER_ARGS)
{
    dg_shape w;
    dgc_nn_geom g;
    if (n_in != 3)
        return FAIL("needs 3 inputs");
    if (same_dtype(&in[0], &in[2], msg, msgsz) ||
        sizes_shape(n, &in[1], &w, msg, msgsz))
        return -1;
    if (in[0].shape.rank != 4 || in[2].shape.rank != 4)
        return FAIL("input and dy must have rank 4");
    const dgc_attr *df = dgc_node_attr(n, "data_format");
    int nchw = df && df->s && strcmp(df->s, "NCHW") == 0;
    int64_t cin = in[0].shape.dims[nchw ? 1 : 3];
    int64_t cout = in[2].shape.dims[nchw ? 1 : 3];
    fill(&w.dims[2], cin);
    if (dw_kind(n) == DGC_NN_DWCONV)
        fill(&w.dims[3], (cin > 0 && cout >= 0) ? cout / cin : -1);
    else
        fill(&w.dims[3], cout);
    if (dgc_nn_geom_init(n, dw_kind(n), &in[0].shape, &w, &g, msg, msgsz) ||
        check_dy(&g, &in[2].shape, msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    out[0].shape = w;
    return 0;
}

int dgc_infer_pool(DGC_INFER_ARGS)
{
    dgc_nn_geom g;
    if (n_in != 1)
        return FAIL("needs 1 input");
    if (!is_float(in[0].dtype))
        return FAIL("needs float32 or float64, got %s",
                    dg_dtype_name(in[0].dtype));
    if (dgc_nn_geom_init(n, DGC_NN_POOL, &in[0].shape, NULL, &g, msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    dgc_nn_shape4(g.nchw, g.N, g.OH, g.OW, g.C, &out[0].shape);
    return 0;
}

/* (orig_input, orig_output, dy) -> dx */
int dgc_infer_max_pool_grad(DGC_INFER_ARGS)
{
    dgc_nn_geom g;
    if (n_in != 3)
        return FAIL("needs 3 inputs");
    if (same_dtype(&in[0], &in[1], msg, msgsz) ||
        same_dtype(&in[0], &in[2], msg, msgsz) ||
        dgc_nn_geom_init(n, DGC_NN_POOL, &in[0].shape, NULL, &g, msg, msgsz) ||
        check_dy(&g, &in[1].shape, msg, msgsz) ||
        check_dy(&g, &in[2].shape, msg, msgsz))
        return -1;
    out[0] = in[0];
    return 0;
}

/* (orig_input_shape, dy) -> dx */
int dgc_infer_avg_pool_grad(DGC_INFER_ARGS)
{
    dg_shape x;
    dgc_nn_geom g;
    if (n_in != 2)
        return FAIL("needs 2 inputs");
    if (!is_float(in[1].dtype))
        return FAIL("dy must be float32 or float64");
    if (sizes_shape(n, &in[0], &x, msg, msgsz))
        return -1;
    if (in[1].shape.rank != 4)
        return FAIL("dy must have rank 4");
    const dgc_attr *df = dgc_node_attr(n, "data_format");
    int ci = df && df->s && strcmp(df->s, "NCHW") == 0 ? 1 : 3;
    fill(&x.dims[0], in[1].shape.dims[0]);
    fill(&x.dims[ci], in[1].shape.dims[ci]);
    if (dgc_nn_geom_init(n, DGC_NN_POOL, &x, NULL, &g, msg, msgsz) ||
        check_dy(&g, &in[1].shape, msg, msgsz))
        return -1;
    out[0].dtype = in[1].dtype;
    out[0].shape = x;
    return 0;
}

/* ---- fused batch norm ---------------------------------------------------- */

static void vec(dgc_ttype *t, dg_dtype dt, int64_t n)
{
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->shape.rank = 1;
    t->shape.dims[0] = n;
}

/* x rank 4, channels C; inputs [from, to) vectors of C (or empty when
 * `empty_ok`: the mean / variance of a training batch norm) */
static int bn_common(const dgc_node *n, const dgc_ttype *in, int xi, int from,
                     int to, int empty_ok, int64_t *C, char *msg, size_t msgsz)
{
    const dgc_attr *df = dgc_node_attr(n, "data_format");
    if (df && (df->kind != DGC_A_STR || !df->s ||
               (strcmp(df->s, "NHWC") != 0 && strcmp(df->s, "NCHW") != 0)))
        return FAIL("attr 'data_format' must be \"NHWC\" or \"NCHW\"");
    int nchw = df && strcmp(df->s, "NCHW") == 0;
    if (!is_float(in[xi].dtype))
        return FAIL("x must be float32 or float64");
    if (in[xi].shape.rank != 4)
        return FAIL("x must have rank 4, got rank %d", in[xi].shape.rank);
    *C = in[xi].shape.dims[nchw ? 1 : 3];
    for (int i = from; i < to; i++) {
        if (in[i].dtype != DG_F32 && in[i].dtype != DG_F64)
            return FAIL("input %d must be float", i);
        if (in[i].shape.rank != 1)
            return FAIL("input %d must be a vector", i);
        int64_t d = in[i].shape.dims[0];
        if (!dim_eq(d, *C) && !(empty_ok && i >= 3 && d == 0))
            return FAIL("input %d has %lld elements, x has %lld channels", i,
                        (long long)d, (long long)*C);
    }
    return 0;
}

int dgc_infer_fused_bn(DGC_INFER_ARGS)
{
    int64_t C;
    if (n_in != 5)
        return FAIL("needs 5 inputs");
    int train = dgc_attr_bool(n, "is_training", 1);
    if (bn_common(n, in, 0, 1, 5, train, &C, msg, msgsz))
        return -1;
    out[0] = in[0];
    for (int i = 1; i < 5; i++)
        vec(&out[i], in[1].dtype, C);
    vec(&out[5], in[1].dtype, 0);
    return 0;
}

int dgc_infer_fused_bn_grad(DGC_INFER_ARGS)
{
    int64_t C;
    if (n_in != 5 && n_in != 6)
        return FAIL("needs 5 or 6 inputs");
    if (bn_common(n, in, 1, 2, 5, 0, &C, msg, msgsz))
        return -1;
    if (in[0].dtype != in[1].dtype || in[0].shape.rank != 4)
        return FAIL("dy must be like x");
    for (int i = 0; i < 4; i++)
        if (!dim_eq(in[0].shape.dims[i], in[1].shape.dims[i]))
            return FAIL("dy and x shapes differ");
    out[0] = in[1];
    vec(&out[1], in[2].dtype, C);
    vec(&out[2], in[2].dtype, C);
    vec(&out[3], in[2].dtype, 0);
    vec(&out[4], in[2].dtype, 0);
    return 0;
}
