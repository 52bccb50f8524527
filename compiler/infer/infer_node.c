/*
 * infer_node.c -- running an op's shape function on one node
 * (dgc_infer_node): gather its inputs' types and the values of small
 * constant inputs, size its outputs, call the op's entry of dgc_op_infer
 * and check the dtypes it gives against the op table.
 */
#include "infer.h"
#include "infer_nn.h"
#include "dg_error.h"
#include "dg_alloc.h"

#include <string.h>

/* An op that reads its inputs' values (DGC_OP_HOST_IN) gets, for a small
 * int input computed from Consts (Range, FloorMod, DynamicStitch... of
 * Consts, Shape of a fully known shape), that value evaluated now, as TF's
 * shape refiner evaluates constant subgraphs (fold.c dgc_fold_value).
 * *vals holds DGC_FOLD_MAX elements per input, allocated on first use. */
static dg_status host_in_value(const dgc_graph *g, dgc_ref r, dgc_ttype *t,
                               int64_t **vals, int i, int n_in, dg_error *err)
{
    int64_t numel = dg_shape_numel(&t->shape);
    if ((t->dtype != DG_I32 && t->dtype != DG_I64) || numel < 0 ||
        numel > DGC_FOLD_MAX || t->shape.rank > 1)
        return DG_OK;
    if (!*vals && !(*vals = dg_malloc(sizeof **vals * DGC_FOLD_MAX *
                                      (size_t)n_in)))
        return dg_err_nomem(err, "shape inference");
    int64_t *buf = *vals + (size_t)i * DGC_FOLD_MAX;
    if (dgc_fold_value(g, r, buf, DGC_FOLD_MAX))
        t->value = buf;
    return DG_OK;
}

dg_status dgc_infer_node(dgc_graph *g, int32_t id, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    const dgc_op_def *d = &dgc_ops[n->op];
    dgc_ttype in_small[8];
    dgc_ttype *in = in_small;
    int64_t *vals = NULL; /* evaluated host-input values, see host_in_value */
    dg_status st = DG_OK;
    if (n->n_inputs > 8) {
        in = dg_malloc(sizeof *in * (size_t)n->n_inputs);
        if (!in)
            return dg_err_nomem(err, "shape inference");
    }
    for (int i = 0; i < n->n_inputs; i++) {
        const dgc_node *p = &g->nodes[n->inputs[i].node];
        if (n->inputs[i].index >= p->n_outputs &&
            dgc_cflow_back_edge(g, n->inputs[i])) {
            /* control flow (issue 11): a loop's back edge, typed later */
            memset(&in[i], 0, sizeof in[i]);
            in[i].shape.rank = -1;
            continue;
        }
        if (n->inputs[i].index >= p->n_outputs) {
            if (in != in_small)
                dg_free(in);
            return dg_err(err, DG_E_GRAPH,
                          "node '%s': input %d refers to output %d of '%s', "
                          "which has %d output%s",
                          n->name, i, n->inputs[i].index, p->name,
                          p->n_outputs, p->n_outputs == 1 ? "" : "s");
        }
        in[i] = p->outputs[n->inputs[i].index];
        in[i].value = NULL;
        const dgc_attr *v = p->op == DGC_OPID_Const
                                ? dgc_node_attr(p, "value") : NULL;
        if (v && v->tensor && v->tensor->dtype == in[i].dtype)
            in[i].value = v->tensor->data;
        else if (!v && dgc_op_has(n->op, DGC_OP_HOST_IN) &&
                 (st = host_in_value(g, n->inputs[i], &in[i], &vals, i,
                                     n->n_inputs, err)))
            break;
    }
    if (st) {
        if (in != in_small)
            dg_free(in);
        return st;
    }
    int n_out = dgc_node_n_out(n);
    if (!n->outputs && n_out > 0) {
        n->outputs = dg_calloc((size_t)n_out, sizeof *n->outputs);
        if (!n->outputs) {
            if (in != in_small)
                dg_free(in);
            return dg_err_nomem(err, "shape inference");
        }
    }
    n->n_outputs = n_out;
    if (dgc_nn_resolve_sizes(g, id) != 0) {
        if (in != in_small)
            dg_free(in);
        return dg_err_nomem(err, "shape inference");
    }
    char msg[512] = "";
    int rc = dgc_op_infer[n->op](n, in, n->n_inputs, n->outputs, msg,
                                 sizeof msg);
    if (in != in_small)
        dg_free(in);
    dg_free(vals);
    for (int k = 0; k < n_out; k++)
        n->outputs[k].value = NULL;
    if (rc)
        return dg_err(err, DG_E_GRAPH, "node '%s': %s: %s", n->name, d->name,
                      msg[0] ? msg : "invalid inputs");
    int dt = dgc_op_kernel_dtype(g, n);
    /* On an op with inputs (other than Cast) a `dtype` attr is TF's T, the
     * input type: it must agree with the inputs, as TF checks. */
    const dgc_attr *da = dgc_node_attr(n, "dtype");
    if (da && da->kind == DGC_A_DTYPE && n->n_inputs > 0 && dt >= 0 &&
        strcmp(d->name, "Cast") != 0 && da->i != dt &&
        !dgc_op_has(n->op, DGC_OP_RESOURCE)) /* issue 11: element dtype */
        return dg_err(err, DG_E_GRAPH, "node '%s': %s: attr dtype %s does not "
                      "match its input's dtype %s", n->name, d->name,
                      dg_dtype_name((dg_dtype)da->i), dg_dtype_name((dg_dtype)dt));
    if (dt >= 0 && !(d->dtypes & (1u << dt)))
        return dg_err(err, DG_E_GRAPH, "node '%s': %s does not support dtype %s",
                      n->name, d->name, dg_dtype_name((dg_dtype)dt));
    return DG_OK;
}
