/*
 * fuse_conv.c -- the convolution half of the fusion pass (issue 23; TF's
 * Grappler remapper and FoldBatchNorms): after placement, on a device whose
 * kernel set has `_FusedConv2D` (the CPU; OpenCL keeps the ops unfused),
 *
 *   Conv2D | DepthwiseConv2dNative (NHWC)
 *     [-> BiasAdd]
 *     [-> batch norm: Mul(s) -> Add(o) by per-channel Consts (Keras'
 *         frozen inference form), or FusedBatchNormV3 with is_training
 *         false and Const scale, offset, mean, variance]
 *     [-> Add(side): a residual of the output's shape]
 *     [-> Relu | Relu6 | Elu | LeakyRelu | Sigmoid | swish: x *
 *         Sigmoid(x) or x * Sigmoid(beta x), Keras' frozen form]
 *
 * (a BiasAdd or a batch norm at least; a zero Pad before it becomes its
 * explicit padding) becomes one `_FusedConv2D` /
 * `_FusedDepthwiseConv2dNative` node (x, filter, bias[, side]; the
 * convolution's attrs, fused_ops "BiasAdd[,Add][,Relu|Relu6|Elu|
 * LeakyRelu|Sigmoid|Swish]", leakyrelu_alpha, swish_beta) whose CPU kernel runs oneDNN's
 * convolution with bias, sum and eltwise post-ops.  A batch norm is folded
 * into new Consts: filter' = filter * s per output channel, bias' = bias *
 * s + o (FusedBatchNormV3: s = scale / sqrt(variance + epsilon), o =
 * offset - mean * s), computed in double and rounded once.
 *
 * As in fuse.c the LAST node of the chain is rewritten in place (its name,
 * device, consumers, fetches and transfers are kept; `_user_op` remembers
 * the op it had, shown by placement output); the absorbed nodes stay in the
 * graph unchanged and lose their only reader.  A chain is fused only when
 * its nodes are on one device, the intermediates have no other reader and
 * are not fetched, and the absorbed nodes have no control inputs; a batch
 * norm is folded only when its statistics are Consts (frozen graphs: a
 * training graph's FusedBatchNormV3 or Variable filters stay unfused).
 */
#include "fuse.h"
#include "dg_util.h"
#include "infer.h"
#include "ops.h"
#include "dg_alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { ACT_NONE, ACT_RELU, ACT_RELU6, ACT_ELU, ACT_LEAKY, ACT_SIGMOID,
       ACT_SWISH };
static const char *const act_name[] = {"",          "Relu",    "Relu6", "Elu",
                                       "LeakyRelu", "Sigmoid", "Swish"};

/* A matched chain, from its last node back to the convolution. */
typedef struct chain {
    int32_t last, conv;
    int act;
    double alpha;         /* LeakyRelu's slope, Swish's beta */
    int32_t pre;          /* the node the activation reads, or -1 */
    int32_t pre_reads;    /* its expected reads (ReluGrads besides) */
    dgc_ref side;         /* residual, node -1: none */
    int bn;               /* a batch norm to fold */
    double *s, *o;        /* its per-channel scale and shift (OC each) */
    dgc_ref bias;         /* BiasAdd's bias, node -1: none */
    int32_t pad;          /* a zero Pad folded into the padding, or -1 */
    int64_t pads[8];      /* the explicit paddings then (NHWC pairs) */
    int32_t abs[10];      /* absorbed nodes */
    int n_abs;
    int64_t oc;
} chain;

static double tval(const dg_tensor *t, int64_t i)
{
    return t->dtype == DG_F32 ? ((const float *)t->data)[i]
                              : ((const double *)t->data)[i];
}

/* Const r as oc per-channel values into v (a scalar, or all dims 1 but the
 * last, oc); 0 ok, -1 not such a Const. */
static int const_channels(const dgc_graph *g, dgc_ref r, int64_t oc,
                          double *v)
{
    const dg_tensor *t = dgc_fuse_const_tensor(g, r);
    if (!t)
        return -1;
    int64_t n = dg_shape_numel(&t->shape);
    if (n != 1 && (t->shape.rank < 1 || t->shape.rank > 4 ||
                   t->shape.dims[t->shape.rank - 1] != oc || n != oc))
        return -1;
    for (int64_t c = 0; c < oc; c++)
        v[c] = tval(t, n == 1 ? 0 : c);
    return 0;
}

/* r's oc per-channel values into v when r is computed from Consts by
 * elementwise float ops (Keras' frozen batch norm: Rsqrt(var + eps) *
 * gamma, beta - mean * that; dgrun's constant folding folds integer shape
 * arithmetic only), in double; 0 ok, -1 not such a value or nomem. */
static int per_channel(const dgc_graph *g, dgc_ref r, int64_t oc, double *v,
                       int depth)
{
    if (r.node < 0 || r.index != 0 || depth > 8)
        return -1;
    const dgc_node *n = &g->nodes[r.node];
    if (n->op == DGC_OPID_Const)
        return const_channels(g, r, oc, v);
    /* a vector's shape changes (Keras' bias: Squeeze(Reshape(b))) */
    if ((n->op == DGC_OPID_Identity || n->op == DGC_OPID_Reshape ||
         n->op == DGC_OPID_Squeeze || n->op == DGC_OPID_ExpandDims) &&
        n->n_inputs >= 1)
        return per_channel(g, n->inputs[0], oc, v, depth + 1);
    int op = n->op;
    int un = op == DGC_OPID_Rsqrt || op == DGC_OPID_Sqrt ||
             op == DGC_OPID_Neg || op == DGC_OPID_Reciprocal;
    int bin = op == DGC_OPID_Add || op == DGC_OPID_Sub ||
              op == DGC_OPID_Mul || op == DGC_OPID_Div;
    if (!n->outputs || (n->outputs[0].dtype != DG_F32 &&
                        n->outputs[0].dtype != DG_F64) ||
        (!un && !bin) || n->n_inputs != (un ? 1 : 2) ||
        per_channel(g, n->inputs[0], oc, v, depth + 1))
        return -1;
    double *b = NULL;
    if (bin && (!(b = dg_malloc(sizeof *b * (size_t)oc)) ||
                per_channel(g, n->inputs[1], oc, b, depth + 1))) {
        dg_free(b);
        return -1;
    }
    for (int64_t c = 0; c < oc; c++) {
        double x = v[c];
        switch (op) {
        case DGC_OPID_Rsqrt: x = 1 / sqrt(x); break;
        case DGC_OPID_Sqrt: x = sqrt(x); break;
        case DGC_OPID_Neg: x = -x; break;
        case DGC_OPID_Reciprocal: x = 1 / x; break;
        case DGC_OPID_Add: x += b[c]; break;
        case DGC_OPID_Sub: x -= b[c]; break;
        case DGC_OPID_Mul: x *= b[c]; break;
        default: x /= b[c]; break;
        }
        v[c] = x;
    }
    dg_free(b);
    return 0;
}

/* The node r is output 0 of, or -1. */
static int32_t producer(dgc_ref r)
{
    return r.index == 0 ? r.node : -1;
}

static int nhwc(const dgc_node *n)
{
    const dgc_attr *f = dgc_node_attr(n, "data_format");
    return !f || !f->s || strcmp(f->s, "NHWC") == 0;
}

/* Readers of outputs > 0 of node id (FusedBatchNormV3's statistics). */
static int other_outputs_read(const dgc_graph *g, int32_t id)
{
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *q = &g->nodes[i];
        for (int k = 0; k < q->n_inputs; k++)
            if (q->inputs[k].node == id && q->inputs[k].index != 0)
                return 1;
    }
    return 0;
}

/* Node id joins ch: absorbed, given `reads` expected reads (the
 * activation's input: pre_reads); the last node is rewritten instead. */
static int take(const dgc_fuse_ctx *c, chain *ch, int32_t id, int32_t reads)
{
    if (id == ch->last)
        return 1;
    if (id == ch->pre)
        reads = ch->pre_reads;
    if (id < 0 || ch->n_abs >= 10 ||
        !dgc_fuse_absorbable(c, id, reads, &c->g->nodes[ch->last]))
        return 0;
    ch->abs[ch->n_abs++] = id;
    return 1;
}

/* The convolution at r (absorbed into ch): NHWC, two inputs. */
static int match_conv(const dgc_fuse_ctx *c, chain *ch, int32_t id)
{
    if (id < 0)
        return 0;
    const dgc_node *n = &c->g->nodes[id];
    if ((n->op != DGC_OPID_Conv2D && n->op != DGC_OPID_DepthwiseConv2dNative) ||
        n->n_inputs != 2 || !nhwc(n) || !n->outputs ||
        n->outputs[0].shape.rank != 4 || n->outputs[0].shape.dims[3] < 1 ||
        !take(c, ch, id, 1))
        return 0;
    ch->conv = id;
    ch->oc = n->outputs[0].shape.dims[3];
    return 1;
}

/* [BiasAdd ->] conv at node id. */
static int match_bias_conv(const dgc_fuse_ctx *c, chain *ch, int32_t id)
{
    if (id >= 0 && c->g->nodes[id].op == DGC_OPID_BiasAdd) {
        const dgc_node *b = &c->g->nodes[id];
        if (b->n_inputs != 2 || !nhwc(b) || !take(c, ch, id, 1))
            return 0;
        ch->bias = b->inputs[1];
        return match_conv(c, ch, producer(b->inputs[0]));
    }
    return match_conv(c, ch, id);
}

/* s, o of a batch norm whose statistics are Consts; *x: what it reads. */
static int bn_consts(const dgc_graph *g, chain *ch, const dgc_node *n,
                     dgc_ref *x)
{
    if (n->op == DGC_OPID_FusedBatchNormV3) {
        if (n->n_inputs != 5 || dgc_attr_bool(n, "is_training", 1) || !nhwc(n))
            return 0;
        double eps = dgc_attr_float(n, "epsilon", 1e-4);
        const dg_tensor *t[4];
        for (int i = 0; i < 4; i++)
            if (!(t[i] = dgc_fuse_const_tensor(g, n->inputs[1 + i])) ||
                dg_shape_numel(&t[i]->shape) != ch->oc)
                return 0;
        for (int64_t k = 0; k < ch->oc; k++) {
            ch->s[k] = tval(t[0], k) / sqrt(tval(t[3], k) + eps);
            ch->o[k] = tval(t[1], k) - tval(t[2], k) * ch->s[k];
        }
        *x = n->inputs[0];
        return 1;
    }
    /* Add(Mul(x, s), o), either operand order */
    for (int k = 0; k < 2; k++) {
        int32_t m = producer(n->inputs[k]);
        if (m < 0 || g->nodes[m].op != DGC_OPID_Mul ||
            per_channel(g, n->inputs[1 - k], ch->oc, ch->o, 0))
            continue;
        const dgc_node *mn = &g->nodes[m];
        for (int j = 0; j < 2; j++)
            if (per_channel(g, mn->inputs[1 - j], ch->oc, ch->s, 0) == 0) {
                *x = mn->inputs[j];
                return 1;
            }
    }
    return 0;
}

/* Is r output 0 of a BiasAdd or a convolution (what a batch norm reads)? */
static int conv_like(const dgc_graph *g, dgc_ref r)
{
    return dgc_fuse_is_op(g, r, DGC_OPID_BiasAdd) ||
           dgc_fuse_is_op(g, r, DGC_OPID_Conv2D) ||
           dgc_fuse_is_op(g, r, DGC_OPID_DepthwiseConv2dNative);
}

/* The part below the residual Add: a batch norm over [BiasAdd ->] conv
 * (filter and BiasAdd's bias Consts), or BiasAdd -> conv. */
static int match_core(const dgc_fuse_ctx *c, chain *ch, int32_t id)
{
    const dgc_graph *g = c->g;
    if (id < 0)
        return 0;
    const dgc_node *n = &g->nodes[id];
    if (n->op == DGC_OPID_BiasAdd)
        return match_bias_conv(c, ch, id);
    int fbn = n->op == DGC_OPID_FusedBatchNormV3;
    if ((n->op != DGC_OPID_Add && !fbn) || n->n_inputs < 2)
        return 0;
    /* the convolution's channels first: the Consts are checked against
     * them; find it under the batch norm's input */
    int n0 = ch->n_abs;
    dgc_ref x = fbn ? n->inputs[0] : (dgc_ref){-1, 0};
    if (!fbn) { /* Add(Mul(x, s), o): x is under the Mul */
        for (int k = 0; k < 2 && x.node < 0; k++) {
            int32_t m = producer(n->inputs[k]);
            if (m >= 0 && g->nodes[m].op == DGC_OPID_Mul)
                for (int j = 0; j < 2 && x.node < 0; j++)
                    if (conv_like(g, g->nodes[m].inputs[j]))
                        x = g->nodes[m].inputs[j];
        }
    }
    chain probe = *ch;
    if (!match_bias_conv(c, &probe, producer(x)))
        return 0;
    ch->oc = probe.oc;
    ch->bn = 1;
    if (!bn_consts(g, ch, n, &x) || producer(x) != probe.abs[n0] ||
        (fbn && other_outputs_read(g, id)) || !take(c, ch, id, 1))
        return 0;
    if (!fbn) { /* the Mul */
        int32_t m = -1;
        for (int k = 0; k < 2; k++)
            if (producer(n->inputs[k]) >= 0 &&
                g->nodes[producer(n->inputs[k])].op == DGC_OPID_Mul &&
                per_channel(g, n->inputs[1 - k], ch->oc, ch->o, 0) == 0)
                m = producer(n->inputs[k]);
        if (!take(c, ch, m, 1))
            return 0;
    }
    if (!match_bias_conv(c, ch, producer(x)))
        return 0;
    /* a folded BiasAdd's bias must be a Const too */
    if (ch->bias.node >= 0) {
        double *b = dg_malloc(sizeof *b * (size_t)ch->oc);
        int ok = b && per_channel(g, ch->bias, ch->oc, b, 0) == 0;
        for (int64_t k = 0; ok && k < ch->oc; k++)
            ch->o[k] += b[k] * ch->s[k];
        dg_free(b);
        if (!ok)
            return 0;
    }
    /* and the filter */
    return dgc_fuse_const_tensor(g, g->nodes[ch->conv].inputs[1]) != NULL;
}

static int act_of(const dgc_node *n, double *alpha)
{
    switch (n->op) {
    case DGC_OPID_Relu: return ACT_RELU;
    case DGC_OPID_Relu6: return ACT_RELU6;
    case DGC_OPID_Elu: return ACT_ELU;
    case DGC_OPID_LeakyRelu:
        *alpha = dgc_attr_float(n, "alpha", 0.2);
        return ACT_LEAKY;
    case DGC_OPID_Sigmoid: return ACT_SIGMOID;
    default: return ACT_NONE;
    }
}

/* Swish as Keras freezes it: n = Mul(a, Sigmoid(a)) or Mul(a, Sigmoid(
 * Mul(a, beta))) with a scalar Const beta, either operand order; the
 * Sigmoid (and inner Mul) join ch, *a is the activation's input. */
static int match_swish(const dgc_fuse_ctx *c, chain *ch, const dgc_node *n,
                       dgc_ref *a)
{
    const dgc_graph *g = c->g;
    if (n->op != DGC_OPID_Mul || n->n_inputs != 2)
        return 0;
    for (int k = 0; k < 2; k++) {
        int32_t sg = producer(n->inputs[1 - k]);
        *a = n->inputs[k];
        if (sg < 0 || g->nodes[sg].op != DGC_OPID_Sigmoid ||
            g->nodes[sg].n_inputs != 1)
            continue;
        dgc_ref in = g->nodes[sg].inputs[0];
        if (in.node == a->node && in.index == a->index) {
            ch->alpha = 1;
            return take(c, ch, sg, 1);
        }
        int32_t m = producer(in);
        const dgc_node *mn = m >= 0 ? &g->nodes[m] : NULL;
        if (!mn || mn->op != DGC_OPID_Mul || mn->n_inputs != 2)
            continue;
        for (int j = 0; j < 2; j++)
            if (mn->inputs[j].node == a->node &&
                mn->inputs[j].index == a->index &&
                per_channel(g, mn->inputs[1 - j], 1, &ch->alpha, 0) == 0 &&
                !dgc_fuse_const_node(g, *a))
                return take(c, ch, sg, 1) && take(c, ch, m, 1);
    }
    return 0;
}

/* Match the chain ending at node id (s, o: room for the channels). */
static int match(const dgc_fuse_ctx *c, chain *ch, int32_t id)
{
    const dgc_graph *g = c->g;
    const dgc_node *n = &g->nodes[id];
    double *s = ch->s, *o = ch->o;
    memset(ch, 0, sizeof *ch);
    ch->s = s;
    ch->o = o;
    ch->last = id;
    ch->conv = ch->pre = ch->pad = -1;
    ch->pre_reads = 1;
    ch->side.node = ch->bias.node = -1;
    if (c->keep[id] == DGC_FUSE_ABSORBED || !n->outputs || n->n_outputs < 1 ||
        n->flags & DGC_NODE_FUSED ||
        !dgc_fuse_dev_has(c, n, DGC_OPID__FusedConv2D))
        return 0;
    int32_t top = id;
    dgc_ref a;
    ch->act = act_of(n, &ch->alpha);
    if (ch->act == ACT_NONE && match_swish(c, ch, n, &a)) {
        /* the activation's input is read by the Mul and the Sigmoid (or
         * the inner Mul) */
        ch->act = ACT_SWISH;
        if ((top = ch->pre = producer(a)) < 0)
            return 0;
        ch->pre_reads = 2;
    } else if (ch->act != ACT_NONE) {
        if (n->n_inputs != 1 || (top = ch->pre = producer(n->inputs[0])) < 0)
            return 0;
        ch->pre_reads =
            1 + (ch->act == ACT_RELU ? dgc_fuse_relugrads(c, top) : 0);
    } else {
        ch->n_abs = 0; /* a Mul that is no swish */
    }
    const dgc_node *t = &g->nodes[top];
    if (t->op == DGC_OPID_Add && t->n_inputs == 2 && t->outputs) {
        /* a residual Add: one operand is the chain, the other the side */
        for (int k = 0; k < 2; k++) {
            const dgc_ref r = t->inputs[k], sd = t->inputs[1 - k];
            const dgc_node *sn = sd.node >= 0 ? &g->nodes[sd.node] : NULL;
            if (!sn || !sn->outputs || sd.index >= sn->n_outputs ||
                !dg_shape_same(&sn->outputs[sd.index].shape,
                            &t->outputs[0].shape) ||
                dgc_fuse_const_node(g, sd))
                continue;
            chain tr = *ch;
            if (take(c, &tr, top, 1) && match_core(c, &tr, producer(r)) &&
                dg_shape_same(&g->nodes[tr.conv].outputs[0].shape,
                           &t->outputs[0].shape)) {
                *ch = tr;
                ch->side = sd;
                return 1;
            }
        }
    }
    return match_core(c, ch, top);
}

/* A zero Pad of the spatial dims that the convolution reads (MobileNetV2's
 * and EfficientNet's ZeroPadding2D before a stride-2 convolution) joins
 * the chain as the convolution's explicit padding, when the convolution
 * pads VALID or EXPLICIT (the Pad pass over memory goes). */
static void match_pad(const dgc_fuse_ctx *c, chain *ch)
{
    const dgc_graph *g = c->g;
    const dgc_node *cv = &g->nodes[ch->conv];
    int32_t p = producer(cv->inputs[0]);
    const dgc_attr *pa = dgc_node_attr(cv, "padding");
    const dgc_attr *ex = dgc_node_attr(cv, "explicit_paddings");
    if (p < 0 || g->nodes[p].op != DGC_OPID_Pad || !pa || !pa->s ||
        (strcmp(pa->s, "VALID") != 0 && strcmp(pa->s, "EXPLICIT") != 0))
        return;
    const dgc_node *pn = &g->nodes[p];
    if (pn->n_inputs == 3) { /* PadV2: the constant must be 0 */
        double zero;
        if (per_channel(g, pn->inputs[2], 1, &zero, 0) || zero != 0)
            return;
    }
    const dgc_node *pc = dgc_fuse_const_node(g, pn->inputs[1]);
    const dgc_attr *pv = pc ? dgc_node_attr(pc, "value") : NULL;
    const dg_tensor *t = pv ? pv->tensor : NULL;
    if (!t || (t->dtype != DG_I32 && t->dtype != DG_I64) ||
        dg_shape_numel(&t->shape) != 8)
        return;
    int64_t pads[8];
    for (int i = 0; i < 8; i++) {
        pads[i] = t->dtype == DG_I32 ? ((const int32_t *)t->data)[i]
                                     : ((const int64_t *)t->data)[i];
        if (ex && ex->kind == DGC_A_INTS && ex->n == 8)
            pads[i] += ex->ints[i];
        if (pads[i] < 0 || ((i < 2 || i > 5) && pads[i] != 0))
            return;
    }
    if (!take(c, ch, p, 1))
        return;
    ch->pad = p;
    memcpy(ch->pads, pads, sizeof pads);
}

/* A new Const node beside `last` (its device) holding t; its id, -1 nomem
 * (err filled; t freed). */
static int32_t new_const(dgc_graph *g, int32_t last, const char *suffix,
                         dg_tensor *t, dg_error *err)
{
    char name[1024];
    snprintf(name, sizeof name, "%s/%s", g->nodes[last].name, suffix);
    size_t len = strlen(name);
    for (int k = 1; dgc_graph_find(g, name) >= 0; k++)
        snprintf(name + len, sizeof name - len, "_%d", k);
    int32_t id = dgc_graph_add_node(g, name, DGC_OPID_Const, err);
    if (id < 0) {
        dg_tensor_free(t);
        return -1;
    }
    dgc_node *n = &g->nodes[id], *l = &g->nodes[last];
    n->flags |= DGC_NODE_GENERATED;
    n->device_id = l->device_id;
    n->reason = l->reason;
    if (dgc_node_set_tensor(n, "value", t) ||
        !(n->requested = dg_strdup(l->requested ? l->requested : ""))) {
        dg_err_nomem(err, "fusion");
        return -1;
    }
    return dgc_infer_node(g, id, err) == DG_OK ? id : -1;
}

/* The folded filter (filter * s per output channel, the channel being the
 * innermost index of HWIO and of depthwise's H W C M) and bias (o) as new
 * Consts; 0 ok, -1 nomem (err filled). */
static int fold(dgc_graph *g, const chain *ch, dg_dtype dt, dgc_ref *w,
                dgc_ref *bias, dg_error *err)
{
    const dg_tensor *f = dgc_fuse_const_tensor(g, g->nodes[ch->conv].inputs[1]);
    dg_shape bs = {.rank = 1, .dims = {ch->oc}};
    dg_tensor *nf = dg_tensor_new(dt, &f->shape), *nb = dg_tensor_new(dt, &bs);
    if (!nf || !nb) {
        dg_tensor_free(nf);
        dg_tensor_free(nb);
        dg_err_nomem(err, "fusion");
        return -1;
    }
    int64_t n = dg_shape_numel(&f->shape);
    for (int64_t i = 0; i < n; i++) {
        double v = tval(f, i) * ch->s[i % ch->oc];
        if (dt == DG_F32)
            ((float *)nf->data)[i] = (float)v;
        else
            ((double *)nf->data)[i] = v;
    }
    for (int64_t k = 0; k < ch->oc; k++) {
        if (dt == DG_F32)
            ((float *)nb->data)[k] = (float)ch->o[k];
        else
            ((double *)nb->data)[k] = ch->o[k];
    }
    int32_t wid = new_const(g, ch->last, "_folded_filter", nf, err);
    if (wid < 0) {
        dg_tensor_free(nb);
        return -1;
    }
    int32_t bid = new_const(g, ch->last, "_folded_bias", nb, err);
    if (bid < 0)
        return -1;
    *w = (dgc_ref){wid, 0};
    *bias = (dgc_ref){bid, 0};
    return 0;
}

/* The attrs of the convolution the fused node runs. */
static const char *const conv_attrs[] = {"strides", "padding", "dilations",
                                         "data_format", "explicit_paddings"};

/* Rewrite ch->last into the fused convolution.  0 ok, -1 nomem. */
static int rewrite(dgc_fuse_ctx *c, const chain *ch, dg_error *err)
{
    dgc_graph *g = c->g;
    dgc_ref in[4];
    int n_in = 3;
    in[0] = ch->pad >= 0 ? g->nodes[ch->pad].inputs[0]
                         : g->nodes[ch->conv].inputs[0];
    in[1] = g->nodes[ch->conv].inputs[1];
    in[2] = ch->bias;
    if (ch->bn && fold(g, ch, g->nodes[ch->last].outputs[0].dtype, &in[1],
                       &in[2], err))
        return -1;
    if (ch->side.node >= 0)
        in[n_in++] = ch->side;
    char ops[64];
    snprintf(ops, sizeof ops, "BiasAdd%s%s%s", ch->side.node >= 0 ? ",Add" : "",
             ch->act ? "," : "", act_name[ch->act]);
    const dgc_node *cv = &g->nodes[ch->conv];
    dgc_node *n = &g->nodes[ch->last];
    const char *user = dgc_node_op_name(n); /* a static string */
    for (int i = 0; i < n->n_attrs; i++)
        dgc_attr_clear(&n->attrs[i]);
    n->n_attrs = 0;
    int bad = 0;
    for (size_t i = 0; i < sizeof conv_attrs / sizeof *conv_attrs; i++) {
        const dgc_attr *a = dgc_node_attr(cv, conv_attrs[i]);
        if (a && a->kind == DGC_A_INTS)
            bad |= dgc_node_set_ints(n, a->key, a->ints, a->n);
        else if (a && a->kind == DGC_A_STR)
            bad |= dgc_node_set_str(n, a->key, a->s);
    }
    if (ch->pad >= 0)
        bad |= dgc_node_set_str(n, "padding", "EXPLICIT") ||
               dgc_node_set_ints(n, "explicit_paddings", ch->pads, 8);
    bad |= dgc_node_set_str(n, "fused_ops", ops) ||
           dgc_node_set_str(n, "_user_op", user);
    if (ch->act == ACT_LEAKY)
        bad |= dgc_node_set_float(n, "leakyrelu_alpha", ch->alpha);
    if (ch->act == ACT_SWISH)
        bad |= dgc_node_set_float(n, "swish_beta", ch->alpha);
    for (int i = 0; !bad && i < n_in; i++) {
        if (i < n->n_inputs)
            n->inputs[i] = in[i];
        else if (dgc_node_add_input(g, ch->last, in[i]))
            bad = 1;
        n = &g->nodes[ch->last];
    }
    if (bad) {
        dg_err_nomem(err, "fusion");
        return -1;
    }
    n->n_inputs = n_in;
    n->n_outputs = 1;
    n->op = cv->op == DGC_OPID_Conv2D ? DGC_OPID__FusedConv2D
                                      : DGC_OPID__FusedDepthwiseConv2dNative;
    n->op_alias = 0;
    n->flags |= DGC_NODE_FUSED;
    if (ch->act == ACT_RELU)
        dgc_fuse_rewire_relugrads(c, ch->pre, ch->last);
    dgc_fuse_absorb(c, ch->abs, ch->n_abs, ch->last);
    return 0;
}

/* Activations first (the longest chains), then residual and batch-norm
 * Adds, then BiasAdds and FusedBatchNormV3s; each pass from the last node
 * back, so a residual Add is tried before the batch norm under it. */
static int pass_of(int op)
{
    switch (op) {
    case DGC_OPID_Relu: case DGC_OPID_Relu6: case DGC_OPID_Elu:
    case DGC_OPID_LeakyRelu: case DGC_OPID_Sigmoid:
    case DGC_OPID_Mul: /* swish: x * sigmoid(beta x) */
        return 0;
    case DGC_OPID_Add:
        return 1;
    case DGC_OPID_BiasAdd: case DGC_OPID_FusedBatchNormV3:
        return 2;
    default:
        return -1;
    }
}

dg_status dgc_fuse_convs(dgc_fuse_ctx *c, dg_error *err)
{
    dgc_graph *g = c->g;
    int64_t max_oc = 1;
    for (int32_t i = 0; i < c->n; i++) {
        const dgc_node *n = &g->nodes[i];
        if ((n->op == DGC_OPID_Conv2D ||
             n->op == DGC_OPID_DepthwiseConv2dNative) && n->outputs &&
            n->outputs[0].shape.rank == 4 &&
            n->outputs[0].shape.dims[3] > max_oc)
            max_oc = n->outputs[0].shape.dims[3];
    }
    chain ch = {.s = dg_malloc(sizeof(double) * (size_t)max_oc),
                .o = dg_malloc(sizeof(double) * (size_t)max_oc)};
    dg_status st = DG_OK;
    if (!ch.s || !ch.o) {
        st = dg_err_nomem(err, "fusion");
        goto done;
    }
    for (int pass = 0; pass < 3; pass++)
        for (int32_t i = c->n - 1; i >= 0; i--) {
            if (pass_of(g->nodes[i].op) != pass || !match(c, &ch, i))
                continue;
            match_pad(c, &ch);
            if (rewrite(c, &ch, err)) {
                st = err->code ? err->code : DG_E_NOMEM;
                goto done;
            }
        }
done:
    dg_free(ch.s);
    dg_free(ch.o);
    return st;
}
