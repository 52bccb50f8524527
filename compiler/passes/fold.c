/*
 * fold.c -- the constant-folding pass (issue 10, as TF's Grappler does for
 * shape arithmetic): a node whose value is known when the graph is
 * compiled (infer/fold_value.c evaluates it) becomes a Const holding it.
 * A folded node keeps its name, device request, `_class` colocation and
 * control inputs; its data inputs go (they are pruned like any unfetched
 * node) -- except that a node inside a cond branch or loop must stay dead
 * where its inputs are: each data input downstream of a Switch becomes a
 * control input, and a Const input's own control inputs (the branch's
 * pivot) are forwarded, as Grappler's constant folding keeps them.
 */
#include "program.h"
#include "infer.h"
#include "dg_alloc.h"

#include <string.h>

/* Turn node id into a Const holding o (keeps device, _class, control
 * inputs).  0 ok, -1 nomem. */
static int make_const(dgc_graph *g, int32_t id, const dgc_kval *o)
{
    dg_tensor *t = dg_tensor_new(o->dtype, &o->shape);
    if (!t)
        return -1;
    for (int64_t i = 0; i < o->n; i++) {
        switch (o->dtype) {
        case DG_I32: ((int32_t *)t->data)[i] = (int32_t)o->v[i]; break;
        case DG_I64: ((int64_t *)t->data)[i] = o->v[i]; break;
        case DG_F32: ((float *)t->data)[i] = (float)o->f[i]; break;
        default: ((double *)t->data)[i] = o->f[i]; break;
        }
    }
    dgc_node *n = &g->nodes[id];
    for (int i = 0; i < n->n_attrs; i++)
        dgc_attr_clear(&n->attrs[i]);
    n->n_attrs = 0;
    if (dgc_node_set_tensor(n, "value", t)) {
        dg_tensor_free(t);
        return -1;
    }
    if (!n->folded_op) {
        n->folded_op = n->op + 1;
        n->folded_alias = n->op_alias;
    }
    n->op = DGC_OPID_Const;
    n->op_alias = 0;
    n->n_inputs = 0;
    return 0;
}

/* d[i] = 1 when node i is downstream of a Switch (through data or
 * control edges): its value may be dead at run time. NULL on nomem. */
static unsigned char *downstream_of_switch(const dgc_graph *g)
{
    unsigned char *d = dg_calloc((size_t)g->n_nodes + 1, 1);
    if (!d)
        return NULL;
    for (int changed = 1; changed;) { /* ids are not a topological order */
        changed = 0;
        for (int32_t id = 0; id < g->n_nodes; id++) {
            const dgc_node *n = &g->nodes[id];
            int v = n->op == DGC_OPID_Switch;
            for (int i = 0; i < n->n_inputs && !v; i++)
                v = n->inputs[i].node >= 0 && d[n->inputs[i].node];
            for (int i = 0; i < n->n_ctrl && !v; i++)
                v = n->ctrl[i] >= 0 && d[n->ctrl[i]];
            if (v && !d[id]) {
                d[id] = 1;
                changed = 1;
            }
        }
    }
    return d;
}

/* Control inputs that keep folded node id as dead as its data inputs
 * (see the top).  0 ok, -1 nomem. */
static int keep_deadness(dgc_graph *g, int32_t id, const unsigned char *dead)
{
    int n_in = g->nodes[id].n_inputs;
    for (int i = 0; i < n_in; i++) {
        int32_t src = g->nodes[id].inputs[i].node;
        if (src < 0 || !dead[src])
            continue;
        if (g->nodes[src].op != DGC_OPID_Const) {
            if (dgc_node_add_ctrl(g, id, src))
                return -1;
            continue;
        }
        for (int c = 0; c < g->nodes[src].n_ctrl; c++)
            if (dgc_node_add_ctrl(g, id, g->nodes[src].ctrl[c]))
                return -1;
    }
    return 0;
}

dg_status dgc_pass_fold(dgc_graph *g, dg_error *err)
{
    int changed = 0;
    unsigned char *dead = NULL;
    /* node ids are a topological order only for the loader's nodes:
     * repeat until nothing more folds (each round folds at least one) */
    for (int round = 0; round < 64; round++) {
        int folded = 0;
        for (int32_t id = 0; id < g->n_nodes; id++) {
            dgc_node *n = &g->nodes[id];
            if (n->op == DGC_OPID_Const || !n->outputs || n->n_outputs != 1 ||
                dgc_ops[n->op].n_out != 1 ||
                dgc_op_has(n->op, DGC_OP_STATEFUL | DGC_OP_SOURCE))
                continue;
            dgc_kval o;
            if (!dgc_fold_eval(g, n, &o))
                continue;
            if (!dead && !(dead = downstream_of_switch(g)))
                return dg_err_nomem(err, "constant folding");
            if (keep_deadness(g, id, dead) || make_const(g, id, &o)) {
                dg_free(dead);
                return dg_err_nomem(err, "constant folding");
            }
            folded++;
        }
        if (!folded)
            break;
        changed = 1;
        /* consumers may now be known */
        dg_status st = dgc_pass_infer(g, 0, err);
        if (st) {
            dg_free(dead);
            return st;
        }
    }
    (void)changed;
    dg_free(dead);
    return DG_OK;
}
