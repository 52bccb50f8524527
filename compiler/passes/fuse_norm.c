/*
 * fuse_norm.c -- Keras' LayerNormalization as one op (issue 23; TF's
 * remapper makes the same subgraph one oneDNN layer norm).  A frozen
 * Keras 3 model spells it as eleven nodes over the activations, eight of
 * them full passes:
 *
 *   mean = Mean(x, [-1], keepdims)        var = Mean(SquaredDifference(
 *   inv  = Mul(Rsqrt(AddV2(var, eps)),          x, StopGradient(mean)),
 *              gamma)                           [-1], keepdims)
 *   y    = AddV2(Mul(x, inv), AddV2(Mul(Neg(mean), inv), beta))
 *
 * (operands of Mul / AddV2 / SquaredDifference in either order; the
 * StopGradient may be absent).  The last AddV2 becomes `_LayerNorm(x,
 * gamma, beta)` with attr epsilon: it keeps its name, device, consumers
 * and control inputs (`_user_op` AddV2, as fuse_gelu.c); the other nodes
 * stay in the graph unread.  Only where the device has a `_LayerNorm`
 * kernel for the dtype, gamma and beta are vectors along the last axis,
 * eps is a scalar Const, both means reduce the last axis alone, and every
 * intermediate is read by the pattern alone and absorbable (fuse.c).  The
 * kernel repeats the unfused ops' arithmetic in their order
 * (runtime/cpu/kernels_cpu_norm.c): the same bits with --no-fusion.
 *
 * And a training step's Relu or Relu6 of FusedBatchNormV3's y on the CPU:
 * the batch norm applies it as it writes y (attr `_relu` 1 or 6), the Relu
 * becomes an Identity of that (`_user_op` Relu / Relu6: its name,
 * consumers and gradient stay), saving a pass over the activations with
 * the same bits (the same clamp of the same value).  Only where y has no
 * other reader and the node is on the CPU.
 */
#include "fuse.h"
#include "ops.h"
#include "dg_alloc.h"

static int same(dgc_ref a, dgc_ref b)
{
    return a.node == b.node && a.index == b.index;
}

/* Node id if r is output 0 of an `op` node with two inputs, else -1. */
static int32_t bin_of(const dgc_graph *g, dgc_ref r, int op)
{
    return dgc_fuse_is_op(g, r, op) && g->nodes[r.node].n_inputs == 2
               ? r.node : -1;
}

/* Input s of binary node id. */
static dgc_ref in_of(const dgc_graph *g, int32_t id, int s)
{
    return g->nodes[id].inputs[s];
}

/* Is r a Mean over the last axis alone of a rank-`rank` tensor, keeping
 * dims?  Its node id, else -1. */
static int32_t last_axis_mean(const dgc_graph *g, dgc_ref r, int rank)
{
    if (!dgc_fuse_is_op(g, r, DGC_OPID_Mean))
        return -1;
    const dgc_node *m = &g->nodes[r.node];
    const dgc_attr *ax = dgc_node_attr(m, "axis");
    if (m->n_inputs != 1 || !ax ||
        ax->kind != DGC_A_INTS || ax->n != 1 ||
        (ax->ints[0] != -1 && ax->ints[0] != rank - 1) ||
        !dgc_attr_bool(m, "keepdims", 0))
        return -1;
    return r.node;
}

/* The mean side of SquaredDifference node sq reading x: the Mean (and the
 * StopGradient / Identity between, into *sg, or -1).  -1 if not one. */
static int32_t sq_mean(const dgc_graph *g, int32_t sq, dgc_ref x, int rank,
                       int32_t *sg)
{
    for (int s = 0; s < 2; s++) {
        if (!same(in_of(g, sq, s), x))
            continue;
        dgc_ref o = in_of(g, sq, 1 - s);
        *sg = -1;
        if (dgc_fuse_is_op(g, o, DGC_OPID_StopGradient) ||
            dgc_fuse_is_op(g, o, DGC_OPID_Identity)) {
            *sg = o.node;
            o = g->nodes[o.node].inputs[0];
        }
        int32_t m = last_axis_mean(g, o, rank);
        if (m >= 0 && same(g->nodes[m].inputs[0], x))
            return m;
    }
    return -1;
}

/* Is r a tensor of C elements along the last axis ([C], [1, C], ...: a
 * Const or the Reshape of one, as Keras reads gamma and beta)? */
static int last_axis_vec(const dgc_graph *g, dgc_ref r, int64_t C)
{
    const dgc_node *n = r.node >= 0 ? &g->nodes[r.node] : NULL;
    if (!n || !n->outputs || r.index >= n->n_outputs)
        return 0;
    const dg_shape *s = &n->outputs[r.index].shape;
    return s->rank >= 1 && s->dims[s->rank - 1] == C &&
           dg_shape_numel(s) == C;
}

/* The nodes of one match, the fused node's inputs and epsilon. */
typedef struct ln_match {
    int32_t ids[11];
    int32_t reads[11]; /* the data reads each has: the pattern's own */
    int n;
    dgc_ref x, gamma, beta;
    double eps;
} ln_match;

/* inv = Mul(Rsqrt(AddV2(var, eps)), gamma), var the variance of x: fills
 * gamma, eps and the nodes up to the variance's SquaredDifference (mean
 * node into *mean).  0 yes, -1 no. */
static int inv_side(const dgc_graph *g, dgc_ref invref, dgc_ref x, int64_t C,
                    int rank, ln_match *mt, int32_t *mean)
{
    int32_t inv = bin_of(g, invref, DGC_OPID_Mul);
    if (inv < 0)
        return -1;
    for (int u = 0; u < 2; u++) {
        if (!dgc_fuse_is_op(g, in_of(g, inv, u), DGC_OPID_Rsqrt) ||
            !last_axis_vec(g, in_of(g, inv, 1 - u), C))
            continue;
        int32_t r = in_of(g, inv, u).node;
        int32_t a = bin_of(g, g->nodes[r].inputs[0], DGC_OPID_Add);
        if (a < 0)
            continue;
        for (int v = 0; v < 2; v++) {
            const dg_tensor *e = dgc_fuse_const_tensor(g, in_of(g, a, v));
            if (!e || dg_shape_numel(&e->shape) != 1)
                continue;
            int32_t var = last_axis_mean(g, in_of(g, a, 1 - v), rank);
            int32_t sq = var >= 0 ? bin_of(g, g->nodes[var].inputs[0],
                                           DGC_OPID_SquaredDifference)
                                  : -1;
            int32_t sg;
            int32_t m = sq >= 0 ? sq_mean(g, sq, x, rank, &sg) : -1;
            if (m < 0)
                continue;
            mt->gamma = in_of(g, inv, 1 - u);
            mt->eps = e->dtype == DG_F32 ? ((const float *)e->data)[0]
                                         : ((const double *)e->data)[0];
            int k = mt->n;
            mt->reads[k] = 2, mt->ids[k++] = inv; /* both Muls */
            mt->reads[k] = 1, mt->ids[k++] = r;
            mt->reads[k] = 1, mt->ids[k++] = a;
            mt->reads[k] = 1, mt->ids[k++] = var;
            mt->reads[k] = 1, mt->ids[k++] = sq;
            if (sg >= 0)
                mt->reads[k] = 1, mt->ids[k++] = sg;
            mt->n = k;
            *mean = m;
            return 0;
        }
    }
    return -1;
}

/* The pattern ending at Add node id; 0 and *mt filled, else -1. */
static int match(const dgc_graph *g, int32_t id, ln_match *mt)
{
    for (int s = 0; s < 2; s++) {
        int32_t m2 = bin_of(g, in_of(g, id, s), DGC_OPID_Mul);
        int32_t a1 = bin_of(g, in_of(g, id, 1 - s), DGC_OPID_Add);
        if (m2 < 0 || a1 < 0)
            continue;
        for (int t = 0; t < 2; t++) {
            dgc_ref x = in_of(g, m2, t), invref = in_of(g, m2, 1 - t);
            const dgc_node *xn = &g->nodes[x.node];
            if (!xn->outputs || x.index >= xn->n_outputs)
                continue;
            const dg_shape *xs = &xn->outputs[x.index].shape;
            if (xs->rank < 1 || xs->dims[xs->rank - 1] <= 0)
                continue;
            int64_t C = xs->dims[xs->rank - 1];
            mt->n = 0;
            int32_t mean;
            if (inv_side(g, invref, x, C, xs->rank, mt, &mean))
                continue;
            /* a1 = AddV2(Mul(Neg(mean), inv), beta) */
            for (int v = 0; v < 2; v++) {
                int32_t m1 = bin_of(g, in_of(g, a1, v), DGC_OPID_Mul);
                dgc_ref beta = in_of(g, a1, 1 - v);
                if (m1 < 0 || !last_axis_vec(g, beta, C))
                    continue;
                for (int w = 0; w < 2; w++) {
                    dgc_ref ng = in_of(g, m1, w);
                    if (!same(in_of(g, m1, 1 - w), invref) ||
                        !dgc_fuse_is_op(g, ng, DGC_OPID_Neg) ||
                        g->nodes[ng.node].inputs[0].node != mean ||
                        g->nodes[ng.node].inputs[0].index != 0)
                        continue;
                    int k = mt->n;
                    mt->reads[k] = 1, mt->ids[k++] = m2;
                    mt->reads[k] = 1, mt->ids[k++] = a1;
                    mt->reads[k] = 1, mt->ids[k++] = m1;
                    mt->reads[k] = 1, mt->ids[k++] = ng.node;
                    mt->reads[k] = 2, mt->ids[k++] = mean; /* Neg, variance */
                    mt->n = k;
                    mt->x = x;
                    mt->beta = beta;
                    return 0;
                }
            }
        }
    }
    return -1;
}

/* Node `last` (an AddV2) as _LayerNorm of the match.  0 ok, -1 nomem. */
static int rewrite(dgc_fuse_ctx *c, int32_t last, const ln_match *mt)
{
    dgc_graph *g = c->g;
    dgc_node *m = &g->nodes[last];
    for (int i = 0; i < m->n_attrs; i++)
        dgc_attr_clear(&m->attrs[i]);
    m->n_attrs = 0;
    if (dgc_node_set_str(m, "_user_op", dgc_node_op_name(m)) ||
        dgc_node_set_float(m, "epsilon", mt->eps))
        return -1;
    dgc_ref in[3] = {mt->x, mt->gamma, mt->beta};
    m = &g->nodes[last];
    m->n_inputs = 0;
    for (int i = 0; i < 3; i++)
        if (dgc_node_add_input(g, last, in[i]))
            return -1;
    m = &g->nodes[last];
    m->op = DGC_OPID__LayerNorm;
    m->op_alias = 0;
    m->flags |= DGC_NODE_FUSED;
    dgc_fuse_absorb(c, mt->ids, mt->n, last);
    return 0;
}

/* Relu(FusedBatchNormV3:0) on the CPU into the batch norm (see the top).
 * 0 ok, -1 nomem. */
static int bn_relus(dgc_fuse_ctx *c)
{
    dgc_graph *g = c->g;
    int32_t *y_reads = dg_calloc((size_t)c->n + 1, sizeof *y_reads);
    if (!y_reads)
        return -1;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            dgc_ref r = n->inputs[k];
            if (r.node >= 0 && r.node < c->n && r.index == 0 &&
                g->nodes[r.node].op == DGC_OPID_FusedBatchNormV3)
                y_reads[r.node]++;
        }
    }
    int rc = 0;
    for (int32_t i = 0; i < c->n && !rc; i++) {
        dgc_node *n = &g->nodes[i];
        int act = n->op == DGC_OPID_Relu ? 1 : n->op == DGC_OPID_Relu6 ? 6 : 0;
        if (!act || n->n_inputs != 1 ||
            (n->flags & DGC_NODE_FUSED) || c->keep[i] == DGC_FUSE_ABSORBED)
            continue;
        int32_t b = n->inputs[0].node;
        if (b < 0 || b >= c->n || n->inputs[0].index != 0 ||
            g->nodes[b].op != DGC_OPID_FusedBatchNormV3 || y_reads[b] != 1 ||
            c->keep[b] || g->nodes[b].device_id != n->device_id ||
            n->device_id < 0 || n->device_id >= c->devs->n ||
            c->devs->devs[n->device_id].type != DG_DEV_CPU ||
            dgc_attr_int(&g->nodes[b], "_relu", 0))
            continue;
        if (dgc_node_set_int(&g->nodes[b], "_relu", act) ||
            dgc_node_set_str(&g->nodes[i], "_user_op",
                             act == 6 ? "Relu6" : "Relu")) {
            rc = -1;
            break;
        }
        n = &g->nodes[i];
        n->op = DGC_OPID_Identity;
        n->op_alias = 0;
        n->flags |= DGC_NODE_FUSED;
    }
    dg_free(y_reads);
    return rc;
}

dg_status dgc_fuse_norms(dgc_fuse_ctx *c, dg_error *err)
{
    dgc_graph *g = c->g;
    if (bn_relus(c))
        return dg_err_nomem(err, "fusion (batch norm relu)");
    for (int32_t i = 0; i < c->n; i++) {
        const dgc_node *n = &g->nodes[i];
        if (n->op != DGC_OPID_Add || n->n_inputs != 2 ||
            c->keep[i] == DGC_FUSE_ABSORBED || (n->flags & DGC_NODE_FUSED) ||
            !dgc_fuse_dev_has(c, n, DGC_OPID__LayerNorm))
            continue;
        ln_match mt;
        if (match(g, i, &mt))
            continue;
        int ok = 1;
        for (int q = 0; q < mt.n && ok; q++)
            ok = dgc_fuse_absorbable(c, mt.ids[q], mt.reads[q], n);
        if (!ok)
            continue;
        if (rewrite(c, i, &mt))
            return dg_err_nomem(err, "fusion (layer norm)");
    }
    return DG_OK;
}
