/*
 * fuse_deps.c -- control-only computations skipped (issue 23; Grappler's
 * dependency optimizer does the same): tf.gradients groups each op's
 * input gradients with `tuple` (a NoOp `group_deps` with control inputs
 * on every gradient, read through Identity `control_dependency` nodes), so
 * a gradient nothing reads -- LeNet's first convolution's input gradient,
 * an MLP's first MatMul's -- is still waited for and computed.  TF 2.21
 * never runs it (its RunMetadata lists no such node).
 *
 * A pure node X (not stateful, not a source, variable, control-flow,
 * resource, random or summary op; not fetched as far as the compile
 * knows) whose data outputs are read only by dead Identity nodes (nothing
 * reads, waits on or fetches them) loses its control consumers: each
 * control edge from X is replaced by control edges from X's own inputs
 * (data producers and control inputs), so every node still waits for
 * what X waited for.  X itself stays unchanged in the graph: plans hold
 * only what fetches and targets need, so it no longer runs, and fetching
 * it (or its Identity) by name still computes it from its inputs.
 */
#include "fuse.h"
#include "ops.h"
#include "dg_alloc.h"

#define DEPS_SKIP                                                            \
    (DGC_OP_STATEFUL | DGC_OP_VARIABLE | DGC_OP_STATE | DGC_OP_SOURCE |       \
     DGC_OP_FEED | DGC_OP_RANDOM | DGC_OP_CONTROL_FLOW | DGC_OP_RESOURCE |    \
     DGC_OP_SUMMARY)

/* Most edges X's removal may add per control consumer (inputs + control
 * inputs of X), as Grappler bounds its rewrites. */
#define DEPS_MAX_IN 16

/* Is node id an Identity no one reads, waits on or fetches? */
static int dead_identity(const dgc_fuse_ctx *c, int32_t id)
{
    return id >= 0 && id < c->n && c->g->nodes[id].op == DGC_OPID_Identity &&
           c->reads[id] == 0 && c->ctrls[id] == 0 && !c->keep[id];
}

/* Are X's inputs plain nodes of X's device (no control flow to carry
 * deadness differently) and few enough? */
static int inputs_ok(const dgc_graph *g, const dgc_node *x)
{
    if (x->n_inputs + x->n_ctrl > DEPS_MAX_IN)
        return 0;
    for (int k = 0; k < x->n_inputs + x->n_ctrl; k++) {
        int32_t p = k < x->n_inputs ? x->inputs[k].node
                                    : x->ctrl[k - x->n_inputs];
        if (p < 0 || p >= g->n_nodes ||
            g->nodes[p].device_id != x->device_id ||
            dgc_op_has(g->nodes[p].op, DGC_OP_CONTROL_FLOW))
            return 0;
    }
    return 1;
}

/* May X's control consumers stop waiting for it?  dr: X's readers that
 * are dead Identity nodes. */
static int skippable(const dgc_fuse_ctx *c, int32_t x, int32_t dr)
{
    const dgc_graph *g = c->g;
    const dgc_node *n = &g->nodes[x];
    return !c->keep[x] && c->ctrls[x] > 0 && c->reads[x] == dr &&
           n->op != DGC_OPID_NoOp && n->op != DGC_OPID_Identity &&
           !dgc_op_has(n->op, DEPS_SKIP) && n->device_id >= 0 &&
           inputs_ok(g, n);
}

/* Node q's control inputs on skipped nodes now name those nodes' inputs.
 * 0 ok, -1 nomem. */
static int bypass(dgc_fuse_ctx *c, const uint8_t *skip, int32_t q)
{
    dgc_graph *g = c->g;
    for (int k = 0; k < g->nodes[q].n_ctrl; k++) {
        int32_t x = g->nodes[q].ctrl[k];
        if (x < 0 || x >= c->n || !skip[x])
            continue;
        dgc_node *qn = &g->nodes[q];
        qn->ctrl[k--] = qn->ctrl[--qn->n_ctrl];
        c->ctrls[x]--;
        const dgc_node *n = &g->nodes[x];
        for (int i = 0; i < n->n_inputs + n->n_ctrl; i++) {
            int32_t p = i < n->n_inputs ? n->inputs[i].node
                                        : n->ctrl[i - n->n_inputs];
            int had = g->nodes[q].n_ctrl;
            if (dgc_node_add_ctrl(g, q, p))
                return -1;
            if (g->nodes[q].n_ctrl > had && p < c->n)
                c->ctrls[p]++;
        }
    }
    return 0;
}

dg_status dgc_fuse_deps(dgc_fuse_ctx *c, dg_error *err)
{
    dgc_graph *g = c->g;
    int32_t *dr = dg_calloc((size_t)c->n + 1, sizeof *dr);
    uint8_t *skip = dg_calloc((size_t)c->n + 1, 1);
    dg_status st = DG_OK;
    if (!dr || !skip) {
        st = dg_err_nomem(err, "fusion (control-only nodes)");
        goto done;
    }
    for (int32_t i = 0; i < c->n; i++) {
        const dgc_node *q = &g->nodes[i];
        if (q->n_inputs == 1 && q->inputs[0].node >= 0 &&
            q->inputs[0].node < c->n && dead_identity(c, i))
            dr[q->inputs[0].node]++;
    }
    int any = 0;
    for (int32_t x = 0; x < c->n; x++)
        any |= skip[x] = (uint8_t)skippable(c, x, dr[x]);
    for (int32_t q = 0; any && q < g->n_nodes; q++)
        if (bypass(c, skip, q)) {
            st = dg_err_nomem(err, "fusion (control-only nodes)");
            break;
        }
done:
    dg_free(dr);
    dg_free(skip);
    return st;
}
