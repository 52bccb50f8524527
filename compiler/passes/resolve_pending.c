/*
 * resolve_pending.c -- dgc_pass_resolve_pending: once the gradient and
 * training passes made the nodes that pending inputs name (ir/pending.c),
 * resolve those names into edges (the loader's dgc_resolve_inputs) and
 * infer the whole graph again, which also reports any cycle the new edges
 * closed.
 */
#include "program.h"
#include "load_priv.h"
#include "dg_alloc.h"

dg_status dgc_pass_resolve_pending(dgc_graph *g, dg_error *err)
{
    if (g->n_pending == 0)
        return DG_OK;
    int32_t *mark = dg_calloc((size_t)g->n_nodes + 1, sizeof *mark);
    if (!mark)
        return dg_err_nomem(err, "inputs");
    dg_status st = DG_OK;
    for (int i = 0; i < g->n_pending && !st; i++) {
        const char *s = g->pending[i].names;
        st = dgc_resolve_inputs(g, g->pending[i].node, &s, g->pending[i].n_in,
                                mark, NULL, err);
    }
    dg_free(mark);
    if (st)
        return st;
    for (int32_t i = 0; i < g->n_nodes; i++)
        g->nodes[i].flags &= ~(uint32_t)(DGC_NODE_PENDING | DGC_NODE_AFTER);
    for (int i = 0; i < g->n_pending; i++)
        dg_free(g->pending[i].names);
    dg_free(g->pending);
    g->pending = NULL;
    g->n_pending = 0;
    /* types for the waiting nodes, and a cycle check over the new edges */
    return dgc_pass_infer(g, 0, err);
}
