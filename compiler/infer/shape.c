/*
 * shape.c -- the shape/dtype inference pass: types every node with index
 * >= from in topological order (Kahn's algorithm over data and control
 * edges, O(nodes + edges)), reports a cycle through a named node, checks
 * that state ops (Assign*, Apply*) update a Variable, and runs each op's
 * inference function (ops.c dgc_infer_node) on output types it carves
 * from the graph's slab.
 */
#include "infer.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <string.h>

/* Find a node on a cycle among the unprocessed nodes and describe it. */
static dg_status report_cycle(dgc_graph *g, int32_t from, const int32_t *indeg,
                              dg_error *err)
{
    int32_t n = g->n_nodes - from;
    int32_t start = -1;
    for (int32_t i = 0; i < n && start < 0; i++)
        if (indeg[i] > 0)
            start = i;
    if (start < 0)
        return dg_err(err, DG_E_GRAPH, "graph has a cycle");
    /* walk backwards along unprocessed inputs until a node repeats */
    int32_t *seen = dg_malloc(sizeof *seen * (size_t)n);
    if (!seen)
        return dg_err_nomem(err, "cycle check");
    for (int32_t i = 0; i < n; i++)
        seen[i] = -1;
    int32_t cur = start, step = 0;
    while (seen[cur] < 0) {
        seen[cur] = step++;
        const dgc_node *nd = &g->nodes[cur + from];
        int32_t next = -1;
        for (int k = 0; k < nd->n_inputs && next < 0; k++) {
            int32_t p = nd->inputs[k].node - from;
            if (p >= 0 && indeg[p] > 0)
                next = p;
        }
        for (int k = 0; k < nd->n_ctrl && next < 0; k++) {
            int32_t p = nd->ctrl[k] - from;
            if (p >= 0 && indeg[p] > 0)
                next = p;
        }
        if (next < 0)
            break; /* cannot happen: every remaining node has one */
        cur = next;
    }
    /* cur is on the cycle: walk it again to print it (forward order) */
    dg_sbuf path;
    dg_sbuf_init(&path);
    int32_t c = cur;
    int32_t chain[16];
    int nc = 0;
    do {
        if (nc < 16)
            chain[nc++] = c;
        const dgc_node *nd = &g->nodes[c + from];
        int32_t next = -1;
        for (int k = 0; k < nd->n_inputs && next < 0; k++) {
            int32_t p = nd->inputs[k].node - from;
            if (p >= 0 && indeg[p] > 0 && seen[p] >= 0)
                next = p;
        }
        for (int k = 0; k < nd->n_ctrl && next < 0; k++) {
            int32_t p = nd->ctrl[k] - from;
            if (p >= 0 && indeg[p] > 0 && seen[p] >= 0)
                next = p;
        }
        c = next;
    } while (c >= 0 && c != cur && nc < 16);
    for (int i = nc - 1; i >= 0; i--) {
        dg_sbuf_add(&path, g->nodes[chain[i] + from].name);
        dg_sbuf_add(&path, " -> ");
    }
    dg_sbuf_add(&path, c == cur ? g->nodes[chain[nc - 1] + from].name : "...");
    dg_free(seen);
    dg_status st = dg_err(err, DG_E_GRAPH, "graph has a cycle through node "
                          "'%s': %s", g->nodes[cur + from].name,
                          path.s ? path.s : "");
    dg_sbuf_free(&path);
    return st;
}

static dg_status check_state(dgc_graph *g, int32_t id, dg_error *err)
{
    const dgc_node *n = &g->nodes[id];
    if (!dgc_op_has(n->op, DGC_OP_STATE) || n->n_inputs < 1)
        return DG_OK;
    const dgc_node *v = &g->nodes[n->inputs[0].node];
    if (!dgc_op_has(v->op, DGC_OP_VARIABLE))
        return dg_err(err, DG_E_GRAPH, "node '%s': %s: input 0 must be a "
                      "Variable, but '%s' is a %s", n->name,
                      dgc_op_name(n->op), v->name, dgc_op_name(v->op));
    return DG_OK;
}

#define WAITS(nd) (((nd)->flags & (DGC_NODE_PENDING | DGC_NODE_AFTER)) != 0)

dg_status dgc_pass_infer(dgc_graph *g, int32_t from, dg_error *err)
{
    if (from < 0)
        from = 0;
    int32_t n = g->n_nodes - from;
    if (n <= 0)
        return DG_OK;
    int32_t *indeg = dg_calloc((size_t)n, sizeof *indeg);
    int32_t *off = dg_calloc((size_t)n + 1, sizeof *off);
    int32_t *queue = dg_malloc(sizeof *queue * (size_t)n);
    int32_t *adj = NULL;
    int32_t *later = NULL; /* stack pops waiting for a push, see below */
    dg_status st = DG_OK;
    if (!indeg || !off || !queue) {
        st = dg_err_nomem(err, "shape inference");
        goto out;
    }
    /* consumers in CSR form; an edge counts once per input slot.  Nodes
     * waiting for a generated input (pending.c) are left out. */
    int64_t edges = 0;
    int32_t n_wait = 0;
    for (int32_t i = 0; i < n; i++) {
        const dgc_node *nd = &g->nodes[i + from];
        if (WAITS(nd)) {
            n_wait++;
            continue;
        }
        for (int k = 0; k < nd->n_inputs; k++)
            if (nd->inputs[k].node >= from &&
                !dgc_cflow_back_edge(g, nd->inputs[k]) && /* issue 11 */
                !WAITS(&g->nodes[nd->inputs[k].node])) {
                off[nd->inputs[k].node - from]++;
                indeg[i]++;
                edges++;
            }
        for (int k = 0; k < nd->n_ctrl; k++)
            if (nd->ctrl[k] >= from && !WAITS(&g->nodes[nd->ctrl[k]])) {
                off[nd->ctrl[k] - from]++;
                indeg[i]++;
                edges++;
            }
    }
    adj = dg_malloc(sizeof *adj * (size_t)(edges > 0 ? edges : 1));
    if (!adj) {
        st = dg_err_nomem(err, "shape inference");
        goto out;
    }
    int32_t sum = 0;
    for (int32_t i = 0; i <= n; i++) {
        int32_t c = i < n ? off[i] : 0;
        off[i] = sum;
        sum += c;
    }
    /* off[i] is now the start; fill using a moving cursor (queue as temp) */
    for (int32_t i = 0; i < n; i++)
        queue[i] = off[i];
    for (int32_t i = 0; i < n; i++) {
        const dgc_node *nd = &g->nodes[i + from];
        if (WAITS(nd))
            continue;
        for (int k = 0; k < nd->n_inputs; k++)
            if (nd->inputs[k].node >= from &&
                !dgc_cflow_back_edge(g, nd->inputs[k]) && /* issue 11 */
                !WAITS(&g->nodes[nd->inputs[k].node]))
                adj[queue[nd->inputs[k].node - from]++] = i;
        for (int k = 0; k < nd->n_ctrl; k++)
            if (nd->ctrl[k] >= from && !WAITS(&g->nodes[nd->ctrl[k]]))
                adj[queue[nd->ctrl[k] - from]++] = i;
    }
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n; i++)
        if (indeg[i] == 0 && !WAITS(&g->nodes[i + from]))
            queue[tail++] = i;
    /* a stack pop whose element type only a push's inference gives
     * (issue 21: GraphDefs without _output_shapes) waits until the queue
     * has nothing else; a round with no progress stops the waiting */
    int32_t n_later = 0, done_at_defer = -1, done = 0;
    for (;;) {
        if (head == tail && n_later > 0 && done != done_at_defer) {
            done_at_defer = done;
            head = tail = 0;
            for (int32_t k = 0; k < n_later; k++)
                queue[tail++] = later[k];
            n_later = 0;
        }
        if (head >= tail)
            break;
        int32_t i = queue[head++];
        dgc_node *nd = &g->nodes[i + from];
        if (done != done_at_defer && dgc_infer_pop_waits(g, i + from)) {
            if (!later && !(later = dg_malloc(sizeof *later * (size_t)n))) {
                st = dg_err_nomem(err, "shape inference");
                goto out;
            }
            later[n_later++] = i;
            continue;
        }
        done++;
        int n_out = dgc_node_n_out(nd);
        if (!nd->outputs && n_out > 0) { /* one slab, not a malloc per node */
            nd->outputs = dgc_graph_slab_alloc(g, sizeof *nd->outputs *
                                                      (size_t)n_out);
            if (!nd->outputs) {
                st = dg_err_nomem(err, "shape inference");
                goto out;
            }
            nd->flags |= DGC_NODE_SLAB_OUTPUTS;
        }
        st = check_state(g, i + from, err);
        if (!st)
            st = dgc_infer_node(g, i + from, err);
        if (st)
            goto out;
        for (int32_t e = off[i]; e < off[i + 1]; e++)
            if (--indeg[adj[e]] == 0)
                queue[tail++] = adj[e];
    }
    if (done < n - n_wait)
        st = report_cycle(g, from, indeg, err);
out:
    dg_free(later);
    dg_free(indeg);
    dg_free(off);
    dg_free(queue);
    dg_free(adj);
    return st;
}
