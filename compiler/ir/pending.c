/*
 * pending.c -- inputs that name generated nodes.  A node may consume what a
 * compiler pass generates (the gradient "g/a", a training variable), as in
 * TF where tf.gradients returns tensors any op can take: the seed's
 * `Add(g/a, c)`.  The loader cannot resolve such a name (the node does not
 * exist before dg_compile), so the node's input names are kept aside
 * (DGC_NODE_PENDING, its inputs empty) and its consumers marked
 * DGC_NODE_AFTER; shape inference skips both.  dg_compile runs the
 * gradient and training passes (which refuse ys or a loss that depend on a
 * pending node: that would be a cycle through generated nodes), then
 * dgc_pass_resolve_pending (passes/resolve_pending.c) resolves the names
 * and infers the whole graph again, which also reports any cycle the new
 * edges closed.  This file keeps the names aside and checks them; it
 * reads and writes only the IR.
 */
#include "pending.h"
#include "dg_alloc.h"

#include <string.h>

dg_status dgc_pending_stash(dgc_graph *g, int32_t id, const char *names,
                            size_t len, int n_in, dg_error *err)
{
    dgc_pending *np = dg_realloc(g->pending, sizeof *np *
                                                 (size_t)(g->n_pending + 1));
    if (!np)
        return dg_err_nomem(err, "inputs");
    g->pending = np;
    dgc_pending *p = &np[g->n_pending];
    memset(p, 0, sizeof *p);
    p->names = dg_malloc(len + 1);
    if (!p->names)
        return dg_err_nomem(err, "inputs");
    memcpy(p->names, names, len);
    p->names[len] = '\0';
    p->node = id;
    p->n_in = n_in;
    g->n_pending++;
    dgc_node *n = &g->nodes[id];
    dg_free(n->ctrl);
    n->ctrl = NULL;
    n->n_ctrl = 0;
    n->inputs = NULL; /* slab storage: nothing to free */
    n->n_inputs = 0;
    n->flags |= DGC_NODE_PENDING;
    err->code = DG_OK;
    err->msg[0] = '\0';
    return DG_OK;
}

/* The node a pooled input name refers to ("^x", "x:k" -> x), -1 if none;
 * base and blen get the node name part. */
static int32_t lookup(const dgc_graph *g, const char *str, const char **base,
                      size_t *blen)
{
    const char *nm = str + (str[0] == '^');
    const char *colon = str[0] == '^' ? NULL : strchr(nm, ':');
    *base = nm;
    *blen = colon ? (size_t)(colon - nm) : strlen(nm);
    return dg_strmap_getn(&g->names, nm, *blen);
}

/* Whether a pass may generate node `name`: under a gradient set's name
 * ("<set>/..."), or anything when the graph trains (slots such as
 * "w/Momentum", "global_step", "train/..."). */
static int may_generate(const dgc_graph *g, const char *name, size_t len)
{
    if (g->train.present)
        return 1;
    for (int i = 0; i < g->n_gradsets; i++) {
        size_t sl = strlen(g->gradsets[i].name);
        if (len > sl + 1 && strncmp(name, g->gradsets[i].name, sl) == 0 &&
            name[sl] == '/')
            return 1;
    }
    return 0;
}

/* The loader's error for pending[i]'s first unknown input that no pass
 * may generate (any unknown one when `any`); DG_OK if there is none. */
static dg_status unknown_input(const dgc_graph *g, int i, int any,
                               dg_error *err)
{
    const dgc_pending *p = &g->pending[i];
    const char *s = p->names;
    for (int k = 0; k < p->n_in; k++, s += strlen(s) + 1) {
        const char *base;
        size_t bl;
        if (lookup(g, s, &base, &bl) >= 0 ||
            (!any && may_generate(g, base, bl)))
            continue;
        const char *who = g->nodes[p->node].name;
        if (s[0] == '^')
            return dg_err(err, DG_E_GRAPH, "node '%s': control input '%s' "
                          "names unknown node '%s'", who, s, s + 1);
        return dg_err(err, DG_E_GRAPH, "node '%s': input '%s' names "
                      "unknown node '%.*s'", who, s, (int)bl, base);
    }
    return DG_OK;
}

dg_status dgc_pending_first_error(const dgc_graph *g, int32_t before,
                                  dg_error *err)
{
    for (int i = 0; i < g->n_pending; i++)
        if (g->pending[i].node <= before)
            return unknown_input(g, i, 1, err);
    return DG_OK;
}

dg_status dgc_pending_check_load(dgc_graph *g, dg_error *err)
{
    if (g->n_pending == 0)
        return DG_OK;
    for (int i = 0; i < g->n_pending; i++) {
        dg_status st = unknown_input(g, i, 0, err);
        if (st)
            return st;
    }
    /* everything downstream of a pending node waits with it */
    int32_t n = g->n_nodes;
    uint8_t *after = dg_calloc((size_t)n + 1, 1);
    if (!after)
        return dg_err_nomem(err, "inputs");
    for (int i = 0; i < g->n_pending; i++)
        after[g->pending[i].node] = 1;
    for (int changed = 1; changed;) { /* rare: a few sweeps at most */
        changed = 0;
        for (int32_t i = 0; i < n; i++) {
            if (after[i])
                continue;
            const dgc_node *nd = &g->nodes[i];
            int hit = 0;
            for (int k = 0; k < nd->n_inputs && !hit; k++)
                hit = after[nd->inputs[k].node];
            for (int k = 0; k < nd->n_ctrl && !hit; k++)
                hit = after[nd->ctrl[k]];
            if (hit) {
                after[i] = 1;
                g->nodes[i].flags |= DGC_NODE_AFTER;
                changed = 1;
            }
        }
    }
    dg_free(after);
    return DG_OK;
}

dg_status dgc_pending_check_deps(const dgc_graph *g, const int32_t *ys,
                                 int n_ys, const char *set, dg_error *err)
{
    if (g->n_pending == 0)
        return DG_OK;
    int32_t n = g->n_nodes;
    uint8_t *seen = dg_calloc((size_t)n + 1, 1);
    int32_t *stack = dg_malloc(sizeof *stack * ((size_t)n + 1));
    dg_status st = DG_OK;
    if (!seen || !stack) {
        st = dg_err_nomem(err, "gradients");
        goto out;
    }
    for (int j = 0; j < n_ys && !st; j++) {
        int sp = 0;
        if (ys[j] < 0 || seen[ys[j]])
            continue;
        seen[ys[j]] = 1;
        stack[sp++] = ys[j];
        while (sp > 0 && !st) {
            int32_t v = stack[--sp];
            const dgc_node *nd = &g->nodes[v];
            if (nd->flags & DGC_NODE_PENDING) {
                const char *first = "";
                for (int i = 0; i < g->n_pending; i++)
                    if (g->pending[i].node == v) {
                        const char *s = g->pending[i].names;
                        for (int k = 0; k < g->pending[i].n_in;
                             k++, s += strlen(s) + 1) {
                            const char *base;
                            size_t bl;
                            if (lookup(g, s, &base, &bl) < 0) {
                                first = s;
                                break;
                            }
                        }
                    }
                st = dg_err(err, DG_E_GRAPH, "node '%s' takes generated node "
                            "'%s' as input, but '%s' (what %s differentiates) "
                            "depends on '%s': that is a cycle through "
                            "generated nodes", nd->name, first,
                            g->nodes[ys[j]].name,
                            strcmp(set, "train") ? "the gradients" : "training",
                            nd->name);
                break;
            }
            for (int k = 0; k < nd->n_inputs; k++)
                if (!seen[nd->inputs[k].node]) {
                    seen[nd->inputs[k].node] = 1;
                    stack[sp++] = nd->inputs[k].node;
                }
            for (int k = 0; k < nd->n_ctrl; k++)
                if (!seen[nd->ctrl[k]]) {
                    seen[nd->ctrl[k]] = 1;
                    stack[sp++] = nd->ctrl[k];
                }
        }
    }
out:
    dg_free(seen);
    dg_free(stack);
    return st;
}
