/*
 * ops.c -- the op table (see ops.h) and the queries built on it: lookup by
 * name, kernel availability per device type (SPEC 4.7), and the graph
 * facts read off it (a loop's back edge).  The op table's leaf: it calls
 * nothing above ir/ (shape inference, infer/, keeps its own column of
 * ops.def).
 */
#include "ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F32 (1u << DG_F32)
#define F64 (1u << DG_F64)
#define I32 (1u << DG_I32)
#define I64 (1u << DG_I64)
#define BOOL (1u << DG_BOOL)
#define FLOAT (F32 | F64)
#define NUM (F32 | F64 | I32 | I64)
#define ALL (NUM | BOOL)

/* Attribute schemas: AS(name, type, default, flags) per attr, ending in
 * A_END.  The type is how the loaders decode the attr (DGC_A_*); the
 * default is the value the passes and kernels use when a graph leaves the
 * attr out (as text; NULL: none, the attr is then simply absent);
 * REQ: TF's OpDef has no default for it; INTERNAL: set by a pass, never
 * read from a graph file.  "dtype" (DGC_A_DTYPE) is accepted on every op
 * (the output dtype where it matters). */
#define REQ DGC_AS_TF_REQUIRED
#define INTERNAL DGC_AS_INTERNAL
/* AS(name, type, default, flags): a schema row; `name` must be a row of
 * attr_names.def (DGC_AT_<name>: a misspelt one does not compile) */
#define AS(name, type, dflt, flags) {#name, DGC_AT_##name, type, dflt, flags}
#define A_END {NULL, DGC_AT_NONE, 0, NULL, 0}
static const dgc_attr_spec a_none[] = {A_END};
static const dgc_attr_spec a_const[] = {
    AS(value, DGC_A_TENSOR, NULL, REQ), AS(shape, DGC_A_SHAPE, NULL, 0),
    A_END};
static const dgc_attr_spec a_var[] = {
    AS(shape, DGC_A_SHAPE, NULL, REQ), AS(init, DGC_A_INIT, "zeros", 0),
    AS(trainable, DGC_A_BOOL, "true", 0),
    AS(init_name, DGC_A_STR, NULL, INTERNAL), /* replicate.c */
    A_END};
static const dgc_attr_spec a_ph[] = {AS(shape, DGC_A_SHAPE, NULL, 0), A_END};
static const dgc_attr_spec a_rand[] = {
    AS(shape, DGC_A_SHAPE, NULL, 0), AS(mean, DGC_A_FLOAT, "0", 0),
    AS(stddev, DGC_A_FLOAT, "1", 0), AS(min, DGC_A_FLOAT, "0", 0),
    AS(max, DGC_A_FLOAT, "1", 0), AS(seed, DGC_A_INT, "0", 0),
    AS(seed2, DGC_A_INT, "0", 0), A_END};
static const dgc_attr_spec a_matmul[] = {
    AS(transpose_a, DGC_A_BOOL, "false", 0),
    AS(transpose_b, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_layernorm[] = {
    AS(epsilon, DGC_A_FLOAT, "0.001", 0), A_END};
static const dgc_attr_spec a_reduce[] = {
    AS(axis, DGC_A_INTS, NULL, 0), AS(keepdims, DGC_A_BOOL, "false", 0),
    A_END};
static const dgc_attr_spec a_reshape[] = {AS(shape, DGC_A_SHAPE, NULL, 0),
                                          A_END};
static const dgc_attr_spec a_perm[] = {AS(perm, DGC_A_INTS, NULL, 0), A_END};
static const dgc_attr_spec a_argmax[] = {
    AS(axis, DGC_A_INTS, "0", 0), AS(output_type, DGC_A_DTYPE, "int64", 0),
    A_END};
static const dgc_attr_spec a_assign[] = {
    AS(validate_shape, DGC_A_BOOL, "true", 0),
    AS(use_locking, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_print[] = {
    AS(message, DGC_A_STR, "", 0), AS(summarize, DGC_A_INT, "3", 0),
    AS(first_n, DGC_A_INT, "-1", 0), A_END};
static const dgc_attr_spec a_momentum[] = {
    AS(use_locking, DGC_A_BOOL, "false", 0),
    AS(use_nesterov, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_adagrad[] = {
    AS(use_locking, DGC_A_BOOL, "false", 0),
    AS(update_slots, DGC_A_BOOL, "true", 0), A_END};
static const dgc_attr_spec a_opt[] = {AS(use_locking, DGC_A_BOOL, "false", 0),
                                      A_END};
static const dgc_attr_spec a_ftrl[] = {
    AS(use_locking, DGC_A_BOOL, "false", 0),
    AS(multiply_linear_by_lr, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_bcast[] = { /* BroadcastLike */
    AS(axis, DGC_A_INTS, NULL, 0), AS(keepdims, DGC_A_BOOL, "false", 0),
    AS(mean, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_bn[] = {AS(epsilon, DGC_A_FLOAT, "0.001", 0),
                                     A_END};
/* 0.99: Keras' and tf.compat.v1.layers' batch-norm momentum (the OpenCL
 * kernel read 0.999, the CPU kernel 0.99: one default now) */
static const dgc_attr_spec a_decay[] = {AS(decay, DGC_A_FLOAT, "0.99", 0),
                                        A_END};
/* the replication pass (replicate.c) tells each copy of a collective
 * which replica it is and the key its peers know it by */
#define A_REPLICA AS(replica, DGC_A_INT, "0", INTERNAL), \
                  AS(replicas, DGC_A_INT, "1", INTERNAL)
static const dgc_attr_spec a_allreduce[] = {
    AS(reduction, DGC_A_STR, "sum", 0), AS(root, DGC_A_INT, NULL, 0),
    AS(key, DGC_A_STR, NULL, INTERNAL), A_REPLICA, A_END};
static const dgc_attr_spec a_broadcast[] = {
    AS(root, DGC_A_INT, "0", 0), AS(key, DGC_A_STR, NULL, INTERNAL),
    A_REPLICA, A_END};
static const dgc_attr_spec a_replica[] = {A_REPLICA, A_END};
/* control flow (issue 11) */
static const dgc_attr_spec a_enter[] = {
    AS(frame_name, DGC_A_STR, NULL, REQ),
    AS(is_constant, DGC_A_BOOL, "false", 0),
    AS(parallel_iterations, DGC_A_INT, "10", 0), A_END};
static const dgc_attr_spec a_ta[] = {
    AS(dtype, DGC_A_DTYPE, NULL, REQ), AS(element_shape, DGC_A_SHAPE, NULL, 0),
    AS(dynamic_size, DGC_A_BOOL, "false", 0),
    AS(clear_after_read, DGC_A_BOOL, "true", 0),
    AS(identical_element_shapes, DGC_A_BOOL, "false", 0),
    AS(tensor_array_name, DGC_A_STR, "", 0),
    /* issue 24: a TF 2 TensorList made a TensorArray (load_cflow.c):
     * a write replaces the element (TensorListSetItem) */
    AS(_tensor_list, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_ta_read[] = {
    AS(dtype, DGC_A_DTYPE, NULL, REQ), AS(element_shape, DGC_A_SHAPE, NULL, 0),
    AS(output_shape, DGC_A_SHAPE, NULL, 0), A_END};
static const dgc_attr_spec a_ta_grad[] = {AS(source, DGC_A_STR, NULL, REQ),
                                          A_END};
static const dgc_attr_spec a_stack[] = {
    AS(elem_type, DGC_A_DTYPE, NULL, REQ), AS(stack_name, DGC_A_STR, "", 0),
    AS(swap_memory, DGC_A_BOOL, "false", 0),
    AS(element_shape, DGC_A_SHAPE, NULL, 0),
    AS(output_shape, DGC_A_SHAPE, NULL, 0), A_END};
#define CFLOW (DGC_OP_NOT_DIFF | DGC_OP_CONTROL_FLOW)
#define CFLOW_DIFF DGC_OP_CONTROL_FLOW /* Switch, Merge: grad_rules.c */
#define RES (DGC_OP_STATEFUL | DGC_OP_NOT_DIFF | DGC_OP_CONTROL_FLOW | DGC_OP_RESOURCE)
/* TF graph ops (issue 10) */
static const dgc_attr_spec a_shape_of[] = {
    AS(out_type, DGC_A_DTYPE, "int32", 0), A_END};
static const dgc_attr_spec a_axis[] = {AS(axis, DGC_A_INTS, "0", 0), A_END};
static const dgc_attr_spec a_tile[] = {AS(multiples, DGC_A_INTS, NULL, 0),
                                       A_END};
static const dgc_attr_spec a_gather[] = {
    AS(axis, DGC_A_INTS, "0", 0), AS(batch_dims, DGC_A_INT, "0", 0),
    /* ResourceGather's (issue 22): indices are always checked */
    AS(validate_indices, DGC_A_BOOL, "true", 0), A_END};
static const dgc_attr_spec a_split[] = {
    AS(axis, DGC_A_INTS, "0", 0), AS(num, DGC_A_INT, NULL, REQ), A_END};
static const dgc_attr_spec a_sslice[] = {
    AS(begin_mask, DGC_A_INT, "0", 0), AS(end_mask, DGC_A_INT, "0", 0),
    AS(ellipsis_mask, DGC_A_INT, "0", 0), AS(new_axis_mask, DGC_A_INT, "0", 0),
    AS(shrink_axis_mask, DGC_A_INT, "0", 0), A_END};
/* the CNN ops: their layout attr (data_format) takes NCHW too */
static const dgc_attr_spec a_conv[] = {
    AS(strides, DGC_A_INTS, NULL, REQ), AS(padding, DGC_A_STR, NULL, REQ),
    AS(dilations, DGC_A_INTS, "[1,1,1,1]", 0),
    AS(data_format, DGC_A_STR, "NHWC", 0),
    AS(explicit_paddings, DGC_A_INTS, "[]", 0),
    AS(_sizes, DGC_A_SHAPE, NULL, INTERNAL), /* infer_nn.c */
    A_END};
static const dgc_attr_spec a_pool[] = {
    AS(ksize, DGC_A_INTS, NULL, REQ), AS(strides, DGC_A_INTS, NULL, REQ),
    AS(padding, DGC_A_STR, NULL, REQ), AS(data_format, DGC_A_STR, "NHWC", 0),
    AS(explicit_paddings, DGC_A_INTS, "[]", 0),
    AS(_sizes, DGC_A_SHAPE, NULL, INTERNAL), /* infer_nn.c */
    A_END};
static const dgc_attr_spec a_fbn[] = {
    AS(epsilon, DGC_A_FLOAT, "0.0001", 0),
    AS(is_training, DGC_A_BOOL, "true", 0),
    AS(exponential_avg_factor, DGC_A_FLOAT, "1", 0),
    AS(data_format, DGC_A_STR, "NHWC", 0),
    /* the fusion pass's (fuse_norm.c): y goes through Relu (1) or Relu6
     * (6), the Relu node an Identity of it */
    AS(_relu, DGC_A_INT, "0", 0), A_END};
/* issue 21 */
static const dgc_attr_spec a_prevent[] = {AS(message, DGC_A_STR, "", 0),
                                          A_END};
static const dgc_attr_spec a_seeds[] = {
    AS(seed, DGC_A_INT, "0", 0), AS(seed2, DGC_A_INT, "0", 0), A_END};
static const dgc_attr_spec a_multinomial[] = {
    AS(seed, DGC_A_INT, "0", 0), AS(seed2, DGC_A_INT, "0", 0),
    AS(output_dtype, DGC_A_DTYPE, "int64", 0), A_END};
/* fusion (issue 16) */
static const dgc_attr_spec a_fused[] = {
    AS(transpose_a, DGC_A_BOOL, "false", 0),
    AS(transpose_b, DGC_A_BOOL, "false", 0),
    AS(fused_ops, DGC_A_STR, NULL, INTERNAL), A_END};
/* the conv fusion (issue 23, fuse_conv.c): the convolution's attrs, the
 * fused ops ("BiasAdd[,Add][,Relu|Relu6|Elu|LeakyRelu|Sigmoid|Swish]"),
 * LeakyRelu's alpha, swish's beta (x * sigmoid(beta x)) and the op the
 * user wrote for the node (shown in placement) */
static const dgc_attr_spec a_fused_conv[] = {
    AS(strides, DGC_A_INTS, NULL, REQ), AS(padding, DGC_A_STR, NULL, REQ),
    AS(dilations, DGC_A_INTS, "[1,1,1,1]", 0),
    AS(data_format, DGC_A_STR, "NHWC", 0),
    AS(explicit_paddings, DGC_A_INTS, "[]", 0),
    AS(_sizes, DGC_A_SHAPE, NULL, INTERNAL),
    AS(fused_ops, DGC_A_STR, NULL, INTERNAL),
    AS(leakyrelu_alpha, DGC_A_FLOAT, "0.2", INTERNAL),
    AS(swish_beta, DGC_A_FLOAT, "1", INTERNAL),
    AS(_user_op, DGC_A_STR, NULL, INTERNAL), A_END};

/* op breadth (issue 22) */
static const dgc_attr_spec a_leaky[] = {AS(alpha, DGC_A_FLOAT, "0.2", 0),
                                        A_END};
/* ops10b (issue 22) */
static const dgc_attr_spec a_approx_equal[] = {
    AS(tolerance, DGC_A_FLOAT, "1e-05", 0), A_END};
static const dgc_attr_spec a_stateless[] = {
    AS(dtype, DGC_A_DTYPE, "float32", 0), A_END};
static const dgc_attr_spec a_stateless_int[] = {
    AS(dtype, DGC_A_DTYPE, "int64", 0), A_END};
static const dgc_attr_spec a_einsum[] = {AS(equation, DGC_A_STR, NULL, REQ),
                                         A_END};
static const dgc_attr_spec a_resize[] = {
    AS(align_corners, DGC_A_BOOL, "false", 0),
    AS(half_pixel_centers, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_bmm[] = {
    AS(adj_x, DGC_A_BOOL, "false", 0), AS(adj_y, DGC_A_BOOL, "false", 0),
    A_END};
static const dgc_attr_spec a_conv3d[] = {
    AS(strides, DGC_A_INTS, NULL, REQ), AS(padding, DGC_A_STR, NULL, REQ),
    AS(dilations, DGC_A_INTS, "[1,1,1,1,1]", 0),
    AS(data_format, DGC_A_STR, "NDHWC", 0), A_END};
static const dgc_attr_spec a_pool3d[] = {
    AS(ksize, DGC_A_INTS, NULL, REQ), AS(strides, DGC_A_INTS, NULL, REQ),
    AS(padding, DGC_A_STR, NULL, REQ), AS(data_format, DGC_A_STR, "NDHWC", 0),
    A_END};
static const dgc_attr_spec a_nms[] = {
    AS(pad_to_max_output_size, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_unique[] = {
    AS(out_idx, DGC_A_DTYPE, "int32", 0), A_END};
static const dgc_attr_spec a_lrn[] = {
    AS(depth_radius, DGC_A_INT, "5", 0), AS(bias, DGC_A_FLOAT, "1", 0),
    AS(alpha, DGC_A_FLOAT, "1", 0), AS(beta, DGC_A_FLOAT, "0.5", 0), A_END};
static const dgc_attr_spec a_dynpart[] = {
    AS(num_partitions, DGC_A_INT, NULL, REQ), A_END};
/* ops9c: SparseSegmentSum/Mean/SqrtN (the forward values do not depend on
 * it; dgrun's gradient is the dense one either way) */
static const dgc_attr_spec a_sparse_seg[] = {
    AS(sparse_gradient, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_sparse_to_dense[] = {
    AS(validate_indices, DGC_A_BOOL, "true", 0), A_END};
static const dgc_attr_spec a_dense_bincount[] = {
    AS(binary_output, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_cumsum[] = {
    AS(axis, DGC_A_INTS, "0", 0), AS(exclusive, DGC_A_BOOL, "false", 0),
    AS(reverse, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_onehot[] = {AS(axis, DGC_A_INT, "-1", 0),
                                         A_END};
static const dgc_attr_spec a_mirror[] = {AS(mode, DGC_A_STR, NULL, REQ),
                                         A_END};
/* GatherNd, ScatterNd: "" (TF's default) and ERROR fail on a bad index */
static const dgc_attr_spec a_nd[] = {
    AS(bad_indices_policy, DGC_A_STR, "", 0), A_END};
static const dgc_attr_spec a_topk[] = {AS(sorted, DGC_A_BOOL, "true", 0),
                                       AS(index_type, DGC_A_DTYPE, "int32",
                                        0),
                                       A_END};
static const dgc_attr_spec a_revseq[] = {
    AS(seq_dim, DGC_A_INT, NULL, REQ), AS(batch_dim, DGC_A_INT, "0", 0),
    A_END};
static const dgc_attr_spec a_diag3[] = {
    AS(align, DGC_A_STR, "RIGHT_LEFT", 0), A_END};
static const dgc_attr_spec a_blocksize[] = {
    AS(block_size, DGC_A_INT, NULL, REQ),
    AS(data_format, DGC_A_STR, "NHWC", 0), A_END};
/* ops10c: DataFormatVecPermute / DataFormatDimMap, NthElement, SpaceToBatch */
static const dgc_attr_spec a_fmt_perm[] = {
    AS(src_format, DGC_A_STR, "NHWC", 0),
    AS(dst_format, DGC_A_STR, "NCHW", 0), A_END};
static const dgc_attr_spec a_nth[] = {AS(reverse, DGC_A_BOOL, "false", 0),
                                      A_END};
static const dgc_attr_spec a_s2b[] = {AS(block_size, DGC_A_INT, NULL, REQ),
                                      A_END};
/* ops10c: the linear-algebra ops */
static const dgc_attr_spec a_adjoint[] = {
    AS(adjoint, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_trisolve[] = {
    AS(lower, DGC_A_BOOL, "true", 0), AS(adjoint, DGC_A_BOOL, "false", 0),
    A_END};
static const dgc_attr_spec a_qr[] = {
    AS(full_matrices, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_svd[] = {
    AS(compute_uv, DGC_A_BOOL, "true", 0),
    AS(full_matrices, DGC_A_BOOL, "false", 0), A_END};
static const dgc_attr_spec a_eig[] = {AS(compute_v, DGC_A_BOOL, "true", 0),
                                      A_END};
/* ops9a: EnsureShape (partial dims), CheckNumerics, Assert */
static const dgc_attr_spec a_ensure_shape[] = {
    AS(shape, DGC_A_SHAPE, NULL, REQ), A_END};
static const dgc_attr_spec a_check_numerics[] = {
    AS(message, DGC_A_STR, NULL, REQ), A_END};
static const dgc_attr_spec a_assert[] = {AS(summarize, DGC_A_INT, "3", 0),
                                         A_END};

#define SRC DGC_OP_SOURCE
#define NODIFF DGC_OP_NOT_DIFF
#define STATE (DGC_OP_STATE | DGC_OP_STATEFUL | DGC_OP_NOT_DIFF)
/* the float random ops: a source unless given a run-time shape input */
#define RANDOM (SRC | DGC_OP_RANDOM | DGC_OP_STATEFUL | NODIFF | DGC_OP_HOST_IN)
#define SUMMARY (DGC_OP_SUMMARY | DGC_OP_ZERO_GRAD | DGC_OP_HOST_OK)

/* name, alias, min_in, max_in, n_out, dtypes, flags, attrs, doc; the
 * infer column is infer/'s (infer/infer_table.c), not this layer's. */
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

const char *dgc_node_user_op_name(const dgc_node *n)
{
    int op = n->folded_op - 1;
    if (op < 0 || op >= dgc_n_ops)
        return dgc_node_op_name(n);
    if (n->folded_alias && dgc_ops[op].alias)
        return dgc_ops[op].alias;
    return dgc_op_name(op);
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
    if (k == DGC_OUT_PER_INPUT)
        return n->n_inputs;
    if (k == DGC_OUT_PER_INPUT_BUT_FIRST)
        return n->n_inputs > 0 ? n->n_inputs - 1 : 0;
    if (k == DGC_OUT_NUM_ATTR) {
        /* Split/Unpack: num; DynamicPartition: num_partitions */
        int64_t v = dgc_attr_int(n, "num", dgc_attr_int(n, "num_partitions", 0));
        return v > 0 && v < 100000 ? (int)v : 0;
    }
    return k;
}

int dgc_node_axis_input(const dgc_node *n)
{
    if (dgc_node_attr(n, "axis"))
        return -1;
    switch (n->op) {
    case DGC_OPID_ConcatV2: return n->n_inputs >= 2 ? n->n_inputs - 1 : -1;
    case DGC_OPID_Split: return n->n_inputs == 2 ? 1 : -1;
    case DGC_OPID_SplitV: return n->n_inputs == 3 ? 2 : -1;
    case DGC_OPID_GatherV2: return n->n_inputs == 3 ? 2 : -1;
    default: return -1;
    }
}

int dgc_op_n_refs(int op)
{
    if (!dgc_op_has(op, DGC_OP_STATE))
        return 0;
    switch (op) {
    case DGC_OPID_ApplyCenteredRMSProp:
    case DGC_OPID_SparseApplyCenteredRMSProp:
        return 4;
    case DGC_OPID_ApplyAdam: case DGC_OPID_ApplyRMSProp:
    case DGC_OPID_ApplyAdadelta: case DGC_OPID_ApplyAdaMax:
    case DGC_OPID_ApplyFtrl: case DGC_OPID_ApplyFtrlV2:
    case DGC_OPID_ApplyAdagradDA: case DGC_OPID_SparseApplyAdagradDA:
    case DGC_OPID_SparseApplyAdadelta: case DGC_OPID_SparseApplyRMSProp:
    case DGC_OPID_SparseApplyFtrl: case DGC_OPID_SparseApplyFtrlV2:
        return 3;
    case DGC_OPID_ApplyMomentum: case DGC_OPID_ApplyAdagrad:
    case DGC_OPID_ApplyProximalAdagrad: case DGC_OPID_SparseApplyMomentum:
    case DGC_OPID_SparseApplyAdagrad: case DGC_OPID_SparseApplyProximalAdagrad:
        return 2;
    default:
        return 1;
    }
}

int dgc_op_apply_layout(int op, int n_in, int *indices)
{
    int refs = dgc_op_n_refs(op);
    switch (op) {
    /* gradient right after the slots (and, sparse, its indices next) */
    case DGC_OPID_ApplyFtrl: case DGC_OPID_ApplyFtrlV2:
    case DGC_OPID_ApplyAdagradDA:
        *indices = -1;
        return refs;
    case DGC_OPID_SparseApplyMomentum: case DGC_OPID_SparseApplyAdagrad:
    case DGC_OPID_SparseApplyAdagradDA: case DGC_OPID_SparseApplyFtrl:
    case DGC_OPID_SparseApplyFtrlV2:
    {
        int grad = op == DGC_OPID_SparseApplyMomentum ||
                           op == DGC_OPID_SparseApplyAdagrad
                       ? refs + 1 /* after lr */
                       : refs;
        *indices = grad + 1;
        return grad;
    }
    /* gradient and indices last */
    case DGC_OPID_SparseApplyAdadelta: case DGC_OPID_SparseApplyRMSProp:
    case DGC_OPID_SparseApplyCenteredRMSProp:
    case DGC_OPID_SparseApplyProximalGradientDescent:
    case DGC_OPID_SparseApplyProximalAdagrad:
        *indices = n_in - 1;
        return n_in - 2;
    default:
        *indices = -1;
        return n_in - 1;
    }
}

int dgc_op_apply_dense(int op)
{
    switch (op) {
    case DGC_OPID_SparseApplyMomentum: return DGC_OPID_ApplyMomentum;
    case DGC_OPID_SparseApplyAdagrad: return DGC_OPID_ApplyAdagrad;
    case DGC_OPID_SparseApplyAdagradDA: return DGC_OPID_ApplyAdagradDA;
    case DGC_OPID_SparseApplyAdadelta: return DGC_OPID_ApplyAdadelta;
    case DGC_OPID_SparseApplyRMSProp: return DGC_OPID_ApplyRMSProp;
    case DGC_OPID_SparseApplyCenteredRMSProp:
        return DGC_OPID_ApplyCenteredRMSProp;
    case DGC_OPID_SparseApplyFtrl: return DGC_OPID_ApplyFtrl;
    case DGC_OPID_SparseApplyFtrlV2: return DGC_OPID_ApplyFtrlV2;
    case DGC_OPID_SparseApplyProximalGradientDescent:
        return DGC_OPID_ApplyProximalGradientDescent;
    case DGC_OPID_SparseApplyProximalAdagrad:
        return DGC_OPID_ApplyProximalAdagrad;
    default: return op;
    }
}

int dgc_op_has(int op, uint32_t flag)
{
    return (op >= 0 && op < dgc_n_ops) && (dgc_ops[op].flags & flag) != 0;
}

int dgc_op_kernel_dtype(const dgc_graph *g, const dgc_node *n)
{
    /* random ops (stateless ones too): TF's kernels are registered by the
     * output dtype (their shape input is a host-memory int vector) */
    if ((dgc_op_has(n->op, DGC_OP_RANDOM) || n->op == DGC_OPID_RandomUniformInt ||
         n->op == DGC_OPID_StatelessRandomUniform ||
         n->op == DGC_OPID_StatelessRandomNormal ||
         n->op == DGC_OPID_StatelessTruncatedNormal ||
         n->op == DGC_OPID_StatelessRandomUniformInt) &&
        n->n_outputs > 0)
        return (int)n->outputs[0].dtype;
    /* Select, SelectV2: by T, the values' dtype (input 0 is the bool
     * condition) */
    if ((n->op == DGC_OPID_Select || n->op == DGC_OPID_SelectV2) &&
        n->n_outputs > 0)
        return (int)n->outputs[0].dtype;
    /* Fill (input 0: dims) and DynamicStitch (inputs 0..N-1: indices):
     * by T, the values' dtype, as TF registers them; ParallelDynamicStitch
     * (the alias) by its int32 indices: TF keeps all its arguments in
     * host memory, and so it runs there (dgc_op_host_mem) */
    if ((n->op == DGC_OPID_Fill ||
         (n->op == DGC_OPID_DynamicStitch && !n->op_alias)) &&
        n->n_outputs > 0)
        return (int)n->outputs[0].dtype;
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

const dgc_attr_spec *dgc_op_attr(int op, const char *name)
{
    if (op < 0 || op >= dgc_n_ops)
        return NULL;
    for (const dgc_attr_spec *a = dgc_ops[op].attrs; a->name; a++)
        if (strcmp(a->name, name) == 0)
            return a;
    return NULL;
}

/* Edit distance of a and b, stopping early past max (then max + 1). */
static int distance(const char *a, const char *b, int max)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return max + 1;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0], best;
        row[0] = best = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < v)
                v = up + 1;
            if (row[j - 1] + 1 < v)
                v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
            if (v < best)
                best = v;
        }
        if (best > max)
            return max + 1;
    }
    return row[lb];
}

const char *dgc_op_attr_near(int op, const char *name)
{
    const char *best = NULL;
    int bd = 3; /* at most 2 edits away */
    if (op < 0 || op >= dgc_n_ops)
        return NULL;
    for (const dgc_attr_spec *a = dgc_ops[op].attrs; a->name; a++) {
        if (a->flags & DGC_AS_INTERNAL)
            continue;
        int d = distance(name, a->name, bd - 1);
        if (d < bd) {
            bd = d;
            best = a->name;
        }
    }
    if (distance(name, "dtype", bd - 1) < bd)
        best = "dtype";
    return best;
}

/* ---- TF's OpDef attributes (issue 21, item 2) ---------------------------- */

static const struct tf_attrs_row {
    const char *op, *attrs;
} tf_attrs[] = {
#define DGC_TF_ATTRS(op, attrs) {op, attrs},
#include "tf_attrs.def"
#undef DGC_TF_ATTRS
};

int dgc_tf_attr_kind(const char *tf_op, const char *attr, const char **kind)
{
    static const char *const kinds[] = {"b", "i", "f", "s", "type", "shape",
                                        "tensor", "func", "list", NULL};
    size_t lo = 0, hi = sizeof tf_attrs / sizeof tf_attrs[0];
    while (lo < hi) { /* the rows are sorted by op (strcmp order) */
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(tf_attrs[mid].op, tf_op);
        if (c == 0) {
            size_t al = strlen(attr);
            for (const char *p = tf_attrs[mid].attrs; *p;) {
                const char *colon = strchr(p, ':');
                const char *end = strchr(p, ' ');
                if (!colon)
                    break;
                size_t kl = end ? (size_t)(end - colon - 1) : strlen(colon + 1);
                if ((size_t)(colon - p) == al && memcmp(p, attr, al) == 0) {
                    *kind = "?";
                    for (int k = 0; kinds[k]; k++)
                        if (strlen(kinds[k]) == kl &&
                            memcmp(kinds[k], colon + 1, kl) == 0)
                            *kind = kinds[k];
                    return 1;
                }
                if (!end)
                    break;
                p = end + 1;
            }
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* ---- TF's GPU kernels (issue 21, item 4; SPEC 4.7) ---------------------- */

static const struct tf_gpu_row {
    const char *op, *dtypes, *host, *arg;
} tf_gpu[] = {
#define DGC_TF_GPU(op, dtypes, host, arg) {op, dtypes, host, arg},
#include "tf_gpu_kernels.def"
#undef DGC_TF_GPU
};

int dgc_tf_gpu_kernel(const char *tf_op, const char **dtypes,
                      const char **host, const char **arg)
{
    size_t lo = 0, hi = sizeof tf_gpu / sizeof tf_gpu[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(tf_gpu[mid].op, tf_op);
        if (c == 0) {
            *dtypes = tf_gpu[mid].dtypes;
            if (host)
                *host = tf_gpu[mid].host;
            if (arg)
                *arg = tf_gpu[mid].arg;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}


/* 1 when the comma-separated list `list` holds `word`. */
static int list_has(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == wl && memcmp(p, word, wl) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

int dgc_op_tf_gpu_row(int op, const char **dtypes, const char **host,
                      const char **arg)
{
    if (op < 0 || op >= dgc_n_ops)
        return -1;
    if (dgc_tf_gpu_kernel(dgc_ops[op].name, dtypes, host, arg) > 0)
        return 1;
    if (dgc_ops[op].alias &&
        dgc_tf_gpu_kernel(dgc_ops[op].alias, dtypes, host, arg) > 0)
        return 1;
    return -1;
}

/* The dtype of node n's arg `arg` ("in:K", "out:K", "attr:NAME" as
 * tf_gpu_kernels.def writes them), -1 when it has no such arg or attr, or
 * the text is empty. */
static int arg_dtype(const dgc_graph *g, const dgc_node *n, const char *arg)
{
    if (strncmp(arg, "attr:", 5) == 0) {
        const dgc_attr *a = dgc_node_attr(n, arg + 5);
        if (!a && strcmp(arg + 5, "dtype") != 0)
            a = dgc_node_attr(n, "dtype"); /* dgrun's name for elem_type */
        return a && a->kind == DGC_A_DTYPE ? (int)a->i : -1;
    }
    int k = (int)strtol(arg + 3, NULL, 10);
    if (strncmp(arg, "in:", 3) == 0 && k < n->n_inputs) {
        const dgc_node *p = &g->nodes[n->inputs[k].node];
        if (n->inputs[k].index < p->n_outputs)
            return (int)p->outputs[n->inputs[k].index].dtype;
    } else if (strncmp(arg, "out:", 4) == 0) {
        k = (int)strtol(arg + 4, NULL, 10);
        if (k < n->n_outputs)
            return (int)n->outputs[k].dtype;
    }
    return -1;
}

int dgc_op_no_gpu(const dgc_graph *g, const dgc_node *n)
{
    if (n->folded_op)
        return 0;
    int dt = dgc_op_kernel_dtype(g, n);
    if ((n->op == DGC_OPID_Variable || n->op == DGC_OPID_Const ||
         n->op == DGC_OPID_Assign) && dt == DG_I32)
        return 1;
    return n->op == DGC_OPID_Print || dgc_op_has(n->op, DGC_OP_SUMMARY);
}

int dgc_op_tf_dtype(const dgc_graph *g, const dgc_node *n)
{
    const char *dts, *arg;
    if (dgc_op_tf_gpu_row(n->op, &dts, NULL, &arg) > 0 && *arg)
        return arg_dtype(g, n, arg);
    return dgc_op_kernel_dtype(g, n);
}

int dgc_op_gpu_placeable(const dgc_graph *g, const dgc_node *n,
                         const dg_kernel_set *ks, int fp64)
{
    if (n->op < 0 || n->op >= DGC_N_OPS)
        return 0;
    if (n->folded_op) /* a value known at compile time (fold.c), in host
                         memory wherever its op ran: any device */
        return 1;
    if (dgc_op_no_gpu(g, n)) /* host memory (an int32 Const): fits a GPU
                                request, shown and run on the CPU */
        return dgc_op_host_mem(g, n);
    const char *dts;
    if (dgc_op_tf_gpu_row(n->op, &dts, NULL, NULL) < 0)
        /* not a TF op (dgrun's own gradient helpers, collectives): what
         * dgrun's device runs, host-memory ops anywhere */
        return dgc_op_has_kernel(g, n, ks, fp64) || dgc_op_host_mem(g, n);
    if (strcmp(dts, "*") == 0)
        return 1;
    if (!*dts)
        return 0;
    int dt = dgc_op_tf_dtype(g, n); /* Select's T: its input 1 */
    if (dt < 0)
        return 1;
    if (dt == DG_F64 && !fp64)
        return 0;
    return list_has(dts, dg_dtype_name((dg_dtype)dt));
}
