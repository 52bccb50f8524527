/*
 * ops.c -- the op table (see ops.h) and the queries built on it: lookup by
 * name, kernel availability per device type (SPEC 4.7), and running an op's
 * inference function on a node.
 */
#include "ops.h"
#include "infer.h"
#include "infer_cflow.h"
#include "infer_nn.h"
#include "dg_error.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

#define F32 (1u << DG_F32)
#define F64 (1u << DG_F64)
#define I32 (1u << DG_I32)
#define I64 (1u << DG_I64)
#define BOOL (1u << DG_BOOL)
#define FLOAT (F32 | F64)
#define NUM (F32 | F64 | I32 | I64)
#define ALL (NUM | BOOL)

static const char *const a_none[] = {NULL};
static const char *const a_const[] = {"value", "shape", NULL};
static const char *const a_var[] = {"shape", "init", "trainable", NULL};
static const char *const a_ph[] = {"shape", NULL};
static const char *const a_rand[] = {"shape", "mean", "stddev", "min", "max", "seed", NULL};
static const char *const a_matmul[] = {"transpose_a", "transpose_b", NULL};
static const char *const a_reduce[] = {"axis", "keepdims", NULL};
static const char *const a_reshape[] = {"shape", NULL};
static const char *const a_perm[] = {"perm", NULL};
static const char *const a_argmax[] = {"axis", "output_type", NULL};
static const char *const a_assign[] = {"validate_shape", "use_locking", NULL};
static const char *const a_print[] = {"message", "summarize", NULL};
static const char *const a_momentum[] = {"use_locking", "use_nesterov", NULL};
static const char *const a_bcast[] = {"axis", "keepdims", "mean", NULL};
static const char *const a_bn[] = {"epsilon", NULL};
static const char *const a_decay[] = {"decay", NULL};
static const char *const a_allreduce[] = {"reduction", "root", NULL};
static const char *const a_broadcast[] = {"root", NULL};
/* control flow (issue 11) */
static const char *const a_enter[] = {"frame_name", "is_constant", "parallel_iterations", NULL};
static const char *const a_ta[] = {"dtype", "element_shape", "dynamic_size", "clear_after_read", "identical_element_shapes", "tensor_array_name", NULL};
static const char *const a_ta_read[] = {"dtype", "element_shape", "output_shape", NULL};
static const char *const a_ta_grad[] = {"source", NULL};
static const char *const a_stack[] = {"elem_type", "stack_name", "swap_memory", "element_shape", "output_shape", NULL};
#define CFLOW (DGC_OP_NOT_DIFF | DGC_OP_CONTROL_FLOW)
#define CFLOW_DIFF DGC_OP_CONTROL_FLOW /* Switch, Merge: grad_rules.c */
#define RES (DGC_OP_STATEFUL | DGC_OP_NOT_DIFF | DGC_OP_CONTROL_FLOW | DGC_OP_RESOURCE)
/* TF graph ops (issue 10) */
static const char *const a_shape_of[] = {"out_type", NULL};
static const char *const a_axis[] = {"axis", NULL};
static const char *const a_tile[] = {"multiples", NULL};
static const char *const a_gather[] = {"axis", "batch_dims", NULL};
static const char *const a_split[] = {"axis", "num", NULL};
static const char *const a_sslice[] = {"begin_mask", "end_mask",
                                       "ellipsis_mask", "new_axis_mask",
                                       "shrink_axis_mask", NULL};
static const char *const a_conv[] = {"strides", "padding", "dilations",
                                     "data_format", "explicit_paddings", NULL};
static const char *const a_pool[] = {"ksize", "strides", "padding",
                                     "data_format", "explicit_paddings", NULL};
static const char *const a_fbn[] = {"epsilon", "is_training",
                                    "exponential_avg_factor", "data_format",
                                    NULL};
/* fusion (issue 16) */
static const char *const a_fused[] = {"transpose_a", "transpose_b", "fused_ops", NULL};

#define SRC DGC_OP_SOURCE
#define NODIFF DGC_OP_NOT_DIFF
#define STATE (DGC_OP_STATE | DGC_OP_STATEFUL | DGC_OP_NOT_DIFF)
#define SUMMARY (DGC_OP_SUMMARY | DGC_OP_ZERO_GRAD | DGC_OP_HOST_OK)

/* name, alias, min_in, max_in, n_out, dtypes, flags, attrs, infer, doc.
 * "dtype" is accepted on every op (the output dtype where it matters). */
const dgc_op_def dgc_ops[] = {
#define DGC_OP(name, ...) [DGC_OPID_##name] = {#name, __VA_ARGS__},
#include "ops.def"
#undef DGC_OP
};
const int dgc_n_ops = DGC_N_OPS;
_Static_assert(sizeof dgc_ops / sizeof dgc_ops[0] == DGC_N_OPS,
               "ops.def and dgc_ops disagree");

int dgc_op_find(const char *name)
{
    for (int i = 0; i < dgc_n_ops; i++)
        if (strcmp(dgc_ops[i].name, name) == 0 ||
            (dgc_ops[i].alias && strcmp(dgc_ops[i].alias, name) == 0))
            return i;
    return -1;
}

const char *dgc_op_name(int op)
{
    return (op >= 0 && op < dgc_n_ops) ? dgc_ops[op].name : "?";
}

const char *dgc_node_op_name(const dgc_node *n)
{
    if (n->op_alias && n->op >= 0 && n->op < dgc_n_ops && dgc_ops[n->op].alias)
        return dgc_ops[n->op].alias;
    return dgc_op_name(n->op);
}

int dgc_node_n_out(const dgc_node *n)
{
    int k = dgc_ops[n->op].n_out;
    if (k == -1)
        return n->n_inputs;
    if (k == -3)
        return n->n_inputs > 0 ? n->n_inputs - 1 : 0;
    if (k == -2) {
        int64_t v = dgc_attr_int(n, "num", 0);
        return v > 0 && v < 100000 ? (int)v : 0;
    }
    return k;
}

int dgc_op_has(int op, uint32_t flag)
{
    return (op >= 0 && op < dgc_n_ops) && (dgc_ops[op].flags & flag) != 0;
}

int dgc_op_kernel_dtype(const dgc_graph *g, const dgc_node *n)
{
    if (n->n_inputs > 0) {
        const dgc_node *p = &g->nodes[n->inputs[0].node];
        if (n->inputs[0].index < p->n_outputs)
            return (int)p->outputs[n->inputs[0].index].dtype;
        return -1;
    }
    if (n->n_outputs > 0)
        return (int)n->outputs[0].dtype;
    return -1;
}

int dgc_op_host_mem(const dgc_graph *g, const dgc_node *n)
{
    if (!dgc_op_has(n->op, DGC_OP_HOST_OK))
        return 0;
    if (n->op == DGC_OPID_Shape || n->op == DGC_OPID_Size ||
        n->op == DGC_OPID_Rank || dgc_op_has(n->op, DGC_OP_SUMMARY))
        return 1;
    int dt = dgc_op_kernel_dtype(g, n);
    return dt == DG_I32 || dt == DG_I64;
}

int dgc_op_has_kernel(const dgc_graph *g, const dgc_node *n,
                      const dg_kernel_set *ks, int fp64)
{
    if (!ks || n->op < 0 || n->op >= DGC_N_OPS)
        return 0;
    uint32_t m = ks->dtypes[n->op];
    if (!(m & DGC_KS_ROW))
        return 0;
    int dt = dgc_op_kernel_dtype(g, n);
    if (dt < 0) /* NoOp: no dtype */
        return 1;
    if (dt == DG_F64 && !fp64)
        return 0;
    return (m & (1u << dt)) != 0;
}

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
    int rc = d->infer(n, in, n->n_inputs, n->outputs, msg, sizeof msg);
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
