/*
 * ops.c -- the op table (see ops.h) and the queries built on it: lookup by
 * name, kernel availability per device type (SPEC 4.7), and the graph
 * facts read off it (a loop's back edge).  The op table's leaf: it calls
 * nothing above ir/ (shape inference, infer/, keeps its own column of
 * ops.def).
 */
#include "ops.h"

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

/* name, alias, min_in, max_in, n_out, dtypes, flags, attrs, doc; the
 * infer column is infer/'s (infer/infer_table.c), not this layer's.
 * "dtype" is accepted on every op (the output dtype where it matters). */
const dgc_op_def dgc_ops[] = {
#define DGC_OP(name, alias, min_in, max_in, n_out, dtypes, flags, attrs, \
               infer, doc)                                              \
    [DGC_OPID_##name] = {#name, alias, min_in, max_in, n_out, dtypes,   \
                         flags, attrs, doc},
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

int dgc_cflow_back_edge(const dgc_graph *g, dgc_ref r)
{
    return g->nodes[r.node].op == DGC_OPID_NextIteration;
}
