/*
 * fuse.c -- the fusion pass (issue 16; TF's Grappler "remapper"): after
 * placement, MatMul -> BiasAdd [-> Relu] becomes one `_FusedMatMul` node
 * (inputs a, b, bias; attrs transpose_a, transpose_b copied from the
 * MatMul, fused_ops "BiasAdd" or "BiasAdd,Relu"), whose kernel runs the
 * GEMM with the bias and Relu applied to each block of the output while it
 * is in cache (CPU) or in one epilogue pass (OpenCL).  An AddV2 / Add of
 * the MatMul and a vector of its N columns (either operand order: Keras'
 * and tf.compat.v1's `matmul(x, w) + b`) is a BiasAdd to the remapper too
 * (its "bias-semantic add"); the fused node then shows as AddV2 / Add.
 * Shape / Size / Rank readers of the MatMul (the Add gradient's
 * `Shape(MatMul)`) read the fused node instead: its output has the
 * MatMul's shape.
 *
 * The node that becomes `_FusedMatMul` is the LAST of the pattern (the Relu,
 * else the BiasAdd): it keeps its name, device, colocation, control inputs
 * and output type, so its consumers, fetches and transfers are untouched.
 * It is flagged DGC_NODE_FUSED: the placement log, `place` and `--expect`
 * keep showing it as the user's op (dg_program_node); traces and profiles
 * show what ran (`_FusedMatMul` under the last node's name).  The MatMul
 * and BiasAdd it absorbed stay in the graph unchanged but lose their only
 * consumer, so plans (which hold only what fetches and targets need) skip
 * them; fetching one of them by name still computes it, from its own
 * inputs.  A ReluGrad reading the BiasAdd's output (Relu's input, as the
 * gradient rule wires it) is rewired to the Relu's output: x > 0 iff
 * relu(x) > 0, which is also how TF's Relu gradient reads it.
 *
 * A chain is fused only when every node of it is on one device whose
 * backend has a `_FusedMatMul` kernel for its dtype, the intermediates
 * have no other consumer (data or control) and are not among the fetches
 * the compile knows, and the MatMul and BiasAdd have no control inputs.
 */
#include "fuse.h"
#include "infer.h"
#include "ops.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

/* Which fused form a node is shown as (its user's op), for a node the pass
 * made: the op it had (`_user_op`, fuse_conv.c), else "Relu" or "BiasAdd";
 * NULL for any other node. */
const char *dgc_fused_user_op(const dgc_node *n)
{
    if (!(n->flags & DGC_NODE_FUSED))
        return NULL;
    const dgc_attr *u = dgc_node_attr(n, "_user_op");
    if (u && u->s)
        return u->s;
    const dgc_attr *a = dgc_node_attr(n, "fused_ops");
    return a && a->s && strstr(a->s, "Relu") ? "Relu" : "BiasAdd";
}

/* The Const node r is (through Identity), or NULL. */
const dgc_node *dgc_fuse_const_node(const dgc_graph *g, dgc_ref r)
{
    for (int hops = 0; hops < 8 && r.node >= 0 && r.index == 0; hops++) {
        const dgc_node *p = &g->nodes[r.node];
        if (p->op == DGC_OPID_Const)
            return p;
        if (p->op != DGC_OPID_Identity || p->n_inputs != 1)
            return NULL;
        r = p->inputs[0];
    }
    return NULL;
}

/* The float tensor of Const r (through Identity), or NULL. */
const dg_tensor *dgc_fuse_const_tensor(const dgc_graph *g, dgc_ref r)
{
    const dgc_node *c = dgc_fuse_const_node(g, r);
    const dgc_attr *a = c ? dgc_node_attr(c, "value") : NULL;
    if (!a || !a->tensor ||
        (a->tensor->dtype != DG_F32 && a->tensor->dtype != DG_F64))
        return NULL;
    return a->tensor;
}

/* Is r output 0 of a node of op `op`? */
int dgc_fuse_is_op(const dgc_graph *g, dgc_ref r, int op)
{
    return r.node >= 0 && r.index == 0 && g->nodes[r.node].op == op;
}

int dgc_fuse_dev_has(const dgc_fuse_ctx *c, const dgc_node *n, int fused)
{
    int d = n->device_id;
    if (d < 0 || d >= c->devs->n || !n->outputs || n->n_outputs < 1)
        return 0;
    const dg_device_info *di = &c->devs->devs[d];
    dg_dtype t = n->outputs[0].dtype;
    if (t != DG_F32 && t != DG_F64)
        return 0;
    if (t == DG_F64 && !di->fp64)
        return 0;
    return di->kernels && (di->kernels->dtypes[fused] & (1u << t)) != 0;
}

/* Control edges from it (the training pass orders a variable's update
 * after its readers that way) move to `last`, which reads what it read;
 * only when `last` has no control inputs of its own (no cycle possible:
 * everything else `last` waits on, the absorbed nodes waited on too). */
int dgc_fuse_absorbable(const dgc_fuse_ctx *c, int32_t id, int32_t reads,
                        const dgc_node *last)
{
    const dgc_node *n = &c->g->nodes[id];
    return id < c->n && !c->keep[id] && n->n_ctrl == 0 &&
           c->reads[id] == reads &&
           (c->ctrls[id] == 0 || last->n_ctrl == 0) &&
           n->device_id == last->device_id &&
           !(n->flags & DGC_NODE_FUSED) &&
           /* reads counts every output's: one output (FusedBatchNormV3:
            * fuse_conv.c checks its statistics outputs are not read) */
           (n->n_outputs == 1 || n->op == DGC_OPID_FusedBatchNormV3);
}

int32_t dgc_fuse_relugrads(const dgc_fuse_ctx *c, int32_t b)
{
    return b >= 0 && b < c->n ? c->rg[b] : 0;
}

void dgc_fuse_rewire_relugrads(dgc_fuse_ctx *c, int32_t b, int32_t last)
{
    dgc_graph *g = c->g;
    if (!dgc_fuse_relugrads(c, b))
        return;
    c->rg[last] += c->rg[b];
    c->rg[b] = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        dgc_node *q = &g->nodes[i];
        if (q->op == DGC_OPID_ReluGrad && q->n_inputs == 2 &&
            q->inputs[1].node == b && q->inputs[1].index == 0) {
            q->inputs[1].node = last;
            c->reads[b]--;
            c->reads[last]++;
        }
    }
}

static int in_list(const int32_t *ids, int n, int32_t x)
{
    for (int i = 0; i < n; i++)
        if (ids[i] == x)
            return 1;
    return 0;
}

void dgc_fuse_absorb(dgc_fuse_ctx *c, const int32_t *ids, int n,
                     int32_t last)
{
    dgc_graph *g = c->g;
    int any = 0;
    for (int i = 0; i < n; i++) {
        c->reads[ids[i]]--;
        c->keep[ids[i]] = DGC_FUSE_ABSORBED;
        any |= c->ctrls[ids[i]] != 0;
    }
    if (!any)
        return;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        dgc_node *q = &g->nodes[i];
        int has = 0;
        for (int k = 0; k < q->n_ctrl; k++)
            has |= q->ctrl[k] == last;
        for (int k = 0; k < q->n_ctrl; k++) {
            if (!in_list(ids, n, q->ctrl[k]))
                continue;
            c->ctrls[q->ctrl[k]]--;
            if (has) {
                q->ctrl[k--] = q->ctrl[--q->n_ctrl];
            } else {
                q->ctrl[k] = last;
                c->ctrls[last]++;
                has = 1;
            }
        }
    }
}

/* Does node q only read the shape of its inputs (Shape, Size, Rank,
 * ShapeN)? */
static int shape_only(const dgc_node *q)
{
    return q->op == DGC_OPID_Shape || q->op == DGC_OPID_Size ||
           q->op == DGC_OPID_Rank || q->op == DGC_OPID_ShapeN;
}

/* Move the shape-only reads of output 0 of node id (c->shp) to output 0
 * of node `to`, whose output has the same shape. */
static void move_shape_reads(dgc_fuse_ctx *c, int32_t id, int32_t to)
{
    dgc_graph *g = c->g;
    if (!c->shp[id])
        return;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        dgc_node *q = &g->nodes[i];
        if (!shape_only(q))
            continue;
        for (int k = 0; k < q->n_inputs; k++)
            if (q->inputs[k].node == id && q->inputs[k].index == 0)
                q->inputs[k].node = to;
    }
    c->reads[id] -= c->shp[id];
    c->reads[to] += c->shp[id];
    c->shp[to] += c->shp[id];
    c->shp[id] = 0;
}

/* Rewrite node `last` into _FusedMatMul(m.a, m.b, bias) (+ Relu); b is the
 * BiasAdd or the bias-semantic Add.  0 ok, -1 nomem. */
static int rewrite(dgc_fuse_ctx *c, int32_t last, int32_t m, int32_t b,
                   dgc_ref bias, int relu)
{
    dgc_graph *g = c->g;
    dgc_ref a = g->nodes[m].inputs[0], w = g->nodes[m].inputs[1];
    int ta = dgc_attr_bool(&g->nodes[m], "transpose_a", 0);
    int tb = dgc_attr_bool(&g->nodes[m], "transpose_b", 0);
    dgc_node *n = &g->nodes[last];
    int user = n->op != DGC_OPID_Relu && n->op != DGC_OPID_BiasAdd;
    if (user && dgc_node_set_str(n, "_user_op", dgc_node_op_name(n)))
        return -1;
    n = &g->nodes[last];
    n->inputs[0] = a; /* a Relu has 1 input, a BiasAdd / Add 2 */
    if (n->n_inputs == 2) {
        n->inputs[1] = w;
        if (dgc_node_add_input(g, last, bias))
            return -1;
    } else if (dgc_node_add_input(g, last, w) ||
               dgc_node_add_input(g, last, bias)) {
        return -1;
    }
    n = &g->nodes[last];
    if (dgc_node_set_bool(n, "transpose_a", ta) ||
        dgc_node_set_bool(n, "transpose_b", tb) ||
        dgc_node_set_str(n, "fused_ops", relu ? "BiasAdd,Relu" : "BiasAdd"))
        return -1;
    n->op = DGC_OPID__FusedMatMul;
    n->op_alias = 0;
    n->flags |= DGC_NODE_FUSED;
    if (relu)
        dgc_fuse_rewire_relugrads(c, b, last);
    move_shape_reads(c, m, last);
    int32_t ids[2] = {m, b};
    dgc_fuse_absorb(c, ids, 2, last);
    return 0;
}

/* Is node b a BiasAdd of a MatMul, or an Add / AddV2 of a MatMul and a
 * vector of its N columns (TF's bias-semantic add)?  Sets the MatMul's
 * id and the bias; 0 if not. */
static int bias_of_matmul(const dgc_graph *g, const dgc_node *bn,
                          int32_t *m, dgc_ref *bias)
{
    if (bn->n_inputs != 2)
        return 0;
    if (bn->op == DGC_OPID_BiasAdd) {
        const dgc_attr *fmt = dgc_node_attr(bn, "data_format");
        if ((fmt && fmt->s && strcmp(fmt->s, "NHWC") != 0) ||
            !dgc_fuse_is_op(g, bn->inputs[0], DGC_OPID_MatMul))
            return 0;
        *m = bn->inputs[0].node;
        *bias = bn->inputs[1];
        return 1;
    }
    if (bn->op != DGC_OPID_Add) /* AddV2 is its alias */
        return 0;
    for (int k = 0; k < 2; k++) {
        dgc_ref mr = bn->inputs[k], br = bn->inputs[1 - k];
        if (!dgc_fuse_is_op(g, mr, DGC_OPID_MatMul) || br.node < 0)
            continue;
        const dgc_node *mn = &g->nodes[mr.node], *bp = &g->nodes[br.node];
        if (!mn->outputs || !bp->outputs || br.index >= bp->n_outputs)
            continue;
        const dgc_ttype *mt = &mn->outputs[0], *bt = &bp->outputs[br.index];
        if (mt->shape.rank != 2 || mt->shape.dims[1] < 1 ||
            bt->shape.rank != 1 || bt->shape.dims[0] != mt->shape.dims[1] ||
            bt->dtype != mt->dtype)
            continue;
        *m = mr.node;
        *bias = br;
        return 1;
    }
    return 0;
}

/* Try the chain ending at node id (a Relu, a BiasAdd, an Add / AddV2).
 * 1 fused, 0 not, -1 nomem. */
static int try_fuse(dgc_fuse_ctx *c, int32_t id)
{
    dgc_graph *g = c->g;
    const dgc_node *n = &g->nodes[id];
    int relu = n->op == DGC_OPID_Relu;
    if (n->n_inputs < 1 || (relu && (n->inputs[0].node < 0 ||
                                     n->inputs[0].index != 0)))
        return 0;
    int32_t b = relu ? n->inputs[0].node : id, m;
    dgc_ref bias;
    const dgc_node *bn = &g->nodes[b];
    if (!bias_of_matmul(g, bn, &m, &bias))
        return 0;
    const dgc_node *mn = &g->nodes[m];
    if (!mn->outputs || (mn->outputs[0].dtype != DG_F32 &&
                         mn->outputs[0].dtype != DG_F64))
        return 0; /* _FusedMatMul is float only (int32 / int64 MatMul) */
    if (mn->n_inputs != 2 || mn->device_id != n->device_id ||
        bn->device_id != n->device_id ||
        !dgc_fuse_dev_has(c, n, DGC_OPID__FusedMatMul) ||
        !dgc_fuse_absorbable(c, m, 1 + c->shp[m], n))
        return 0;
    if (relu && !dgc_fuse_absorbable(c, b, 1 + dgc_fuse_relugrads(c, b), n))
        return 0;
    return rewrite(c, id, m, b, bias, relu) ? -1 : 1;
}

static void mark_fetch(dgc_fuse_ctx *c, const char *name)
{
    dgc_ref r;
    if (name && dgc_graph_parse_ref(c->g, name, &r) == 0 && r.node >= 0)
        c->keep[r.node] = 1;
}

dg_status dgc_pass_fuse(dgc_graph *g, const dg_device_list *devs,
                        const char *const *fetch, int n_fetch, dg_error *err)
{
    dgc_fuse_ctx c = {.g = g, .devs = devs, .n = g->n_nodes};
    size_t nn = (size_t)g->n_nodes + 1;
    c.reads = dg_calloc(nn, sizeof *c.reads);
    c.ctrls = dg_calloc(nn, sizeof *c.ctrls);
    c.keep = dg_calloc(nn, 1);
    c.rg = dg_calloc(nn, sizeof *c.rg);
    c.shp = dg_calloc(nn, sizeof *c.shp);
    dg_status st = DG_OK;
    if (!c.reads || !c.ctrls || !c.keep || !c.rg || !c.shp) {
        st = dg_err_nomem(err, "fusion");
        goto done;
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            if (n->inputs[k].node >= 0) {
                c.reads[n->inputs[k].node]++;
                if (shape_only(n) && n->inputs[k].index == 0)
                    c.shp[n->inputs[k].node]++;
            }
        for (int k = 0; k < n->n_ctrl; k++)
            if (n->ctrl[k] >= 0)
                c.ctrls[n->ctrl[k]]++;
        if (n->op == DGC_OPID_ReluGrad && n->n_inputs == 2 &&
            n->inputs[1].node >= 0 && n->inputs[1].index == 0)
            c.rg[n->inputs[1].node]++;
    }
    for (int i = 0; i < n_fetch; i++)
        mark_fetch(&c, fetch[i]);
    for (int i = 0; i < g->n_fetch; i++)
        mark_fetch(&c, g->fetch[i]);
    mark_fetch(&c, g->train.loss);
    for (int i = 0; i < g->train.n_eval_fetch; i++)
        mark_fetch(&c, g->train.eval_fetch[i]);
    /* convolution chains first (a conv's BiasAdd is never a MatMul's) */
    if ((st = dgc_fuse_convs(&c, err)) || (st = dgc_fuse_pools(&c, err)) ||
        (st = dgc_fuse_gelus(&c, err)) || (st = dgc_fuse_norms(&c, err)))
        goto done;
    /* Relu chains first, then the BiasAdds / Adds left over */
    for (int pass = 0; pass < 2; pass++)
        for (int32_t i = 0; i < g->n_nodes; i++) {
            int op = g->nodes[i].op;
            if (pass ? op != DGC_OPID_BiasAdd && op != DGC_OPID_Add
                     : op != DGC_OPID_Relu)
                continue;
            if (try_fuse(&c, i) < 0) {
                st = dg_err_nomem(err, "fusion");
                goto done;
            }
        }
    st = dgc_fuse_deps(&c, err);
done:
    dg_free(c.reads);
    dg_free(c.ctrls);
    dg_free(c.keep);
    dg_free(c.rg);
    dg_free(c.shp);
    return st;
}
