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

/* Attribute schemas: {name, type, default, flags} per attr, ending in
 * {NULL}.  The type is how the loaders decode the attr (DGC_A_*); the
 * default is the value the passes and kernels use when a graph leaves the
 * attr out (as text; NULL: none, the attr is then simply absent);
 * REQ: TF's OpDef has no default for it; INTERNAL: set by a pass, never
 * read from a graph file.  "dtype" (DGC_A_DTYPE) is accepted on every op
 * (the output dtype where it matters). */
#define REQ DGC_AS_TF_REQUIRED
#define INTERNAL DGC_AS_INTERNAL
#define A_END {NULL, 0, NULL, 0}
static const dgc_attr_spec a_none[] = {A_END};
static const dgc_attr_spec a_const[] = {
    {"value", DGC_A_TENSOR, NULL, REQ}, {"shape", DGC_A_SHAPE, NULL, 0},
    A_END};
static const dgc_attr_spec a_var[] = {
    {"shape", DGC_A_SHAPE, NULL, REQ}, {"init", DGC_A_INIT, "zeros", 0},
    {"trainable", DGC_A_BOOL, "true", 0},
    {"init_name", DGC_A_STR, NULL, INTERNAL}, /* replicate.c */
    A_END};
static const dgc_attr_spec a_ph[] = {{"shape", DGC_A_SHAPE, NULL, 0}, A_END};
static const dgc_attr_spec a_rand[] = {
    {"shape", DGC_A_SHAPE, NULL, 0}, {"mean", DGC_A_FLOAT, "0", 0},
    {"stddev", DGC_A_FLOAT, "1", 0}, {"min", DGC_A_FLOAT, "0", 0},
    {"max", DGC_A_FLOAT, "1", 0}, {"seed", DGC_A_INT, "0", 0},
    {"seed2", DGC_A_INT, "0", 0}, A_END};
static const dgc_attr_spec a_matmul[] = {
    {"transpose_a", DGC_A_BOOL, "false", 0},
    {"transpose_b", DGC_A_BOOL, "false", 0}, A_END};
static const dgc_attr_spec a_reduce[] = {
    {"axis", DGC_A_INTS, NULL, 0}, {"keepdims", DGC_A_BOOL, "false", 0},
    A_END};
static const dgc_attr_spec a_reshape[] = {{"shape", DGC_A_SHAPE, NULL, 0},
                                          A_END};
static const dgc_attr_spec a_perm[] = {{"perm", DGC_A_INTS, NULL, 0}, A_END};
static const dgc_attr_spec a_argmax[] = {
    {"axis", DGC_A_INTS, "0", 0}, {"output_type", DGC_A_DTYPE, "int64", 0},
    A_END};
static const dgc_attr_spec a_assign[] = {
    {"validate_shape", DGC_A_BOOL, "true", 0},
    {"use_locking", DGC_A_BOOL, "false", 0}, A_END};
static const dgc_attr_spec a_print[] = {
    {"message", DGC_A_STR, "", 0}, {"summarize", DGC_A_INT, "3", 0},
    {"first_n", DGC_A_INT, "-1", 0}, A_END};
static const dgc_attr_spec a_momentum[] = {
    {"use_locking", DGC_A_BOOL, "false", 0},
    {"use_nesterov", DGC_A_BOOL, "false", 0}, A_END};
static const dgc_attr_spec a_bcast[] = { /* BroadcastLike */
    {"axis", DGC_A_INTS, NULL, 0}, {"keepdims", DGC_A_BOOL, "false", 0},
    {"mean", DGC_A_BOOL, "false", 0}, A_END};
static const dgc_attr_spec a_bn[] = {{"epsilon", DGC_A_FLOAT, "0.001", 0},
                                     A_END};
/* 0.99: Keras' and tf.compat.v1.layers' batch-norm momentum (the OpenCL
 * kernel read 0.999, the CPU kernel 0.99: one default now) */
static const dgc_attr_spec a_decay[] = {{"decay", DGC_A_FLOAT, "0.99", 0},
                                        A_END};
/* the replication pass (replicate.c) tells each copy of a collective
 * which replica it is and the key its peers know it by */
#define A_REPLICA {"replica", DGC_A_INT, "0", INTERNAL}, \
                  {"replicas", DGC_A_INT, "1", INTERNAL}
static const dgc_attr_spec a_allreduce[] = {
    {"reduction", DGC_A_STR, "sum", 0}, {"root", DGC_A_INT, NULL, 0},
    {"key", DGC_A_STR, NULL, INTERNAL}, A_REPLICA, A_END};
static const dgc_attr_spec a_broadcast[] = {
    {"root", DGC_A_INT, "0", 0}, {"key", DGC_A_STR, NULL, INTERNAL},
    A_REPLICA, A_END};
static const dgc_attr_spec a_replica[] = {A_REPLICA, A_END};
/* control flow (issue 11) */
static const dgc_attr_spec a_enter[] = {
    {"frame_name", DGC_A_STR, NULL, REQ},
    {"is_constant", DGC_A_BOOL, "false", 0},
    {"parallel_iterations", DGC_A_INT, "10", 0}, A_END};
static const dgc_attr_spec a_ta[] = {
    {"dtype", DGC_A_DTYPE, NULL, REQ}, {"element_shape", DGC_A_SHAPE, NULL, 0},
    {"dynamic_size", DGC_A_BOOL, "false", 0},
    {"clear_after_read", DGC_A_BOOL, "true", 0},
    {"identical_element_shapes", DGC_A_BOOL, "false", 0},
    {"tensor_array_name", DGC_A_STR, "", 0}, A_END};
static const dgc_attr_spec a_ta_read[] = {
    {"dtype", DGC_A_DTYPE, NULL, REQ}, {"element_shape", DGC_A_SHAPE, NULL, 0},
    {"output_shape", DGC_A_SHAPE, NULL, 0}, A_END};
static const dgc_attr_spec a_ta_grad[] = {{"source", DGC_A_STR, NULL, REQ},
                                          A_END};
static const dgc_attr_spec a_stack[] = {
    {"elem_type", DGC_A_DTYPE, NULL, REQ}, {"stack_name", DGC_A_STR, "", 0},
    {"swap_memory", DGC_A_BOOL, "false", 0},
    {"element_shape", DGC_A_SHAPE, NULL, 0},
    {"output_shape", DGC_A_SHAPE, NULL, 0}, A_END};
#define CFLOW (DGC_OP_NOT_DIFF | DGC_OP_CONTROL_FLOW)
#define CFLOW_DIFF DGC_OP_CONTROL_FLOW /* Switch, Merge: grad_rules.c */
#define RES (DGC_OP_STATEFUL | DGC_OP_NOT_DIFF | DGC_OP_CONTROL_FLOW | DGC_OP_RESOURCE)
/* TF graph ops (issue 10) */
static const dgc_attr_spec a_shape_of[] = {
    {"out_type", DGC_A_DTYPE, "int32", 0}, A_END};
static const dgc_attr_spec a_axis[] = {{"axis", DGC_A_INTS, "0", 0}, A_END};
static const dgc_attr_spec a_tile[] = {{"multiples", DGC_A_INTS, NULL, 0},
                                       A_END};
static const dgc_attr_spec a_gather[] = {
    {"axis", DGC_A_INTS, "0", 0}, {"batch_dims", DGC_A_INT, "0", 0}, A_END};
static const dgc_attr_spec a_split[] = {
    {"axis", DGC_A_INTS, "0", 0}, {"num", DGC_A_INT, NULL, REQ}, A_END};
static const dgc_attr_spec a_sslice[] = {
    {"begin_mask", DGC_A_INT, "0", 0}, {"end_mask", DGC_A_INT, "0", 0},
    {"ellipsis_mask", DGC_A_INT, "0", 0}, {"new_axis_mask", DGC_A_INT, "0", 0},
    {"shrink_axis_mask", DGC_A_INT, "0", 0}, A_END};
/* the CNN ops: their layout attr (data_format) takes NCHW too */
static const dgc_attr_spec a_conv[] = {
    {"strides", DGC_A_INTS, NULL, REQ}, {"padding", DGC_A_STR, NULL, REQ},
    {"dilations", DGC_A_INTS, "[1,1,1,1]", 0},
    {"data_format", DGC_A_STR, "NHWC", 0},
    {"explicit_paddings", DGC_A_INTS, "[]", 0},
    {"_sizes", DGC_A_SHAPE, NULL, INTERNAL}, /* infer_nn.c */
    A_END};
static const dgc_attr_spec a_pool[] = {
    {"ksize", DGC_A_INTS, NULL, REQ}, {"strides", DGC_A_INTS, NULL, REQ},
    {"padding", DGC_A_STR, NULL, REQ}, {"data_format", DGC_A_STR, "NHWC", 0},
    {"explicit_paddings", DGC_A_INTS, "[]", 0},
    {"_sizes", DGC_A_SHAPE, NULL, INTERNAL}, /* infer_nn.c */
    A_END};
static const dgc_attr_spec a_fbn[] = {
    {"epsilon", DGC_A_FLOAT, "0.0001", 0},
    {"is_training", DGC_A_BOOL, "true", 0},
    {"exponential_avg_factor", DGC_A_FLOAT, "1", 0},
    {"data_format", DGC_A_STR, "NHWC", 0}, A_END};
/* issue 21 */
static const dgc_attr_spec a_prevent[] = {{"message", DGC_A_STR, "", 0},
                                          A_END};
static const dgc_attr_spec a_seeds[] = {
    {"seed", DGC_A_INT, "0", 0}, {"seed2", DGC_A_INT, "0", 0}, A_END};
static const dgc_attr_spec a_multinomial[] = {
    {"seed", DGC_A_INT, "0", 0}, {"seed2", DGC_A_INT, "0", 0},
    {"output_dtype", DGC_A_DTYPE, "int64", 0}, A_END};
/* fusion (issue 16) */
static const dgc_attr_spec a_fused[] = {
    {"transpose_a", DGC_A_BOOL, "false", 0},
    {"transpose_b", DGC_A_BOOL, "false", 0},
    {"fused_ops", DGC_A_STR, NULL, INTERNAL}, A_END};
/* the conv fusion (issue 23, fuse_conv.c): the convolution's attrs, the
 * fused ops ("BiasAdd[,Add][,Relu|Relu6|Elu|LeakyRelu|Sigmoid|Swish]"),
 * LeakyRelu's alpha, swish's beta (x * sigmoid(beta x)) and the op the
 * user wrote for the node (shown in placement) */
static const dgc_attr_spec a_fused_conv[] = {
    {"strides", DGC_A_INTS, NULL, REQ}, {"padding", DGC_A_STR, NULL, REQ},
    {"dilations", DGC_A_INTS, "[1,1,1,1]", 0},
    {"data_format", DGC_A_STR, "NHWC", 0},
    {"explicit_paddings", DGC_A_INTS, "[]", 0},
    {"_sizes", DGC_A_SHAPE, NULL, INTERNAL},
    {"fused_ops", DGC_A_STR, NULL, INTERNAL},
    {"leakyrelu_alpha", DGC_A_FLOAT, "0.2", INTERNAL},
    {"swish_beta", DGC_A_FLOAT, "1", INTERNAL},
    {"_user_op", DGC_A_STR, NULL, INTERNAL}, A_END};

/* op breadth (issue 22) */
static const dgc_attr_spec a_leaky[] = {{"alpha", DGC_A_FLOAT, "0.2", 0},
                                        A_END};
static const dgc_attr_spec a_einsum[] = {{"equation", DGC_A_STR, NULL, REQ},
                                         A_END};
static const dgc_attr_spec a_resize[] = {
    {"align_corners", DGC_A_BOOL, "false", 0},
    {"half_pixel_centers", DGC_A_BOOL, "false", 0}, A_END};
static const dgc_attr_spec a_bmm[] = {
    {"adj_x", DGC_A_BOOL, "false", 0}, {"adj_y", DGC_A_BOOL, "false", 0},
    A_END};
static const dgc_attr_spec a_conv3d[] = {
    {"strides", DGC_A_INTS, NULL, REQ}, {"padding", DGC_A_STR, NULL, REQ},
    {"dilations", DGC_A_INTS, "[1,1,1,1,1]", 0},
    {"data_format", DGC_A_STR, "NDHWC", 0}, A_END};
static const dgc_attr_spec a_pool3d[] = {
    {"ksize", DGC_A_INTS, NULL, REQ}, {"strides", DGC_A_INTS, NULL, REQ},
    {"padding", DGC_A_STR, NULL, REQ}, {"data_format", DGC_A_STR, "NDHWC", 0},
    A_END};
static const dgc_attr_spec a_unique[] = {
    {"out_idx", DGC_A_DTYPE, "int32", 0}, A_END};
static const dgc_attr_spec a_dynpart[] = {
    {"num_partitions", DGC_A_INT, NULL, REQ}, A_END};

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

int dgc_op_has(int op, uint32_t flag)
{
    return (op >= 0 && op < dgc_n_ops) && (dgc_ops[op].flags & flag) != 0;
}

int dgc_op_kernel_dtype(const dgc_graph *g, const dgc_node *n)
{
    /* random ops: TF's kernels are registered by the output dtype (their
     * shape input is a host-memory int vector) */
    if ((dgc_op_has(n->op, DGC_OP_RANDOM) || n->op == DGC_OPID_RandomUniformInt) &&
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

/* ---- TF's GPU kernels (issue 21, item 4: the table; placement does not
 * read it yet) --------------------------------------------------------- */

static const struct tf_gpu_row {
    const char *op, *dtypes, *host;
} tf_gpu[] = {
#define DGC_TF_GPU(op, dtypes, host) {op, dtypes, host},
#include "tf_gpu_kernels.def"
#undef DGC_TF_GPU
};

int dgc_tf_gpu_kernel(const char *tf_op, const char **dtypes,
                      const char **host)
{
    size_t lo = 0, hi = sizeof tf_gpu / sizeof tf_gpu[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(tf_gpu[mid].op, tf_op);
        if (c == 0) {
            *dtypes = tf_gpu[mid].dtypes;
            if (host)
                *host = tf_gpu[mid].host;
            return 1;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

