/*
 * fold.c -- the constant-folding pass (issue 10, as TF's Grappler does for
 * shape arithmetic): a node whose value is known when the graph is
 * compiled (infer/fold_value.c evaluates it) becomes a Const holding it.
 * A folded node keeps its name, device request, `_class` colocation and
 * control inputs; only its data inputs go (they may become dead, and are
 * pruned like any unfetched node).
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

dg_status dgc_pass_fold(dgc_graph *g, dg_error *err)
{
    int changed = 0;
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
            if (make_const(g, id, &o))
                return dg_err_nomem(err, "constant folding");
            folded++;
        }
        if (!folded)
            break;
        changed = 1;
        /* consumers may now be known */
        dg_status st = dgc_pass_infer(g, 0, err);
        if (st)
            return st;
    }
    (void)changed;
    return DG_OK;
}
