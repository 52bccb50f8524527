/*
 * infer.h -- shape and dtype inference functions named by the op table.
 *
 * The layer above ir/: it owns the `infer` column of ops.def
 * (dgc_op_infer), runs it on nodes (dgc_infer_node) and over a graph
 * (dgc_pass_infer), and evaluates small constant values (fold_value.c).
 * infer.c implements the ops of SPEC's appendix; infer_grad.c the ops the
 * gradient and training passes generate (SumTo, ReluGrad, ApplyAdam, ...).
 * Each has the dgc_infer_fn contract of ops.h: 0, or -1 with a one-line
 * reason (no node name) in msg.  They must accept -1 dims (unknown) and
 * produce concrete outputs when the inputs are concrete, because the runtime
 * calls them with real shapes to size outputs.
 */
#ifndef DGC_INFER_H
#define DGC_INFER_H

#include "ops.h"

#define DGC_INFER_ARGS const dgc_node *n, const dgc_ttype *in, int n_in, \
                       dgc_ttype *out, char *msg, size_t msgsz

/* The shape function of each op, by op id: the `infer` column of ops.def
 * (infer_table.c).  The runtime calls it too, with concrete shapes. */
extern const dgc_infer_fn dgc_op_infer[DGC_N_OPS];

/* Run the op's infer function on node id (inputs' outputs must be typed);
 * fills node->outputs.  DG_E_GRAPH naming the node on mismatch
 * (infer_node.c). */
dg_status dgc_infer_node(dgc_graph *g, int32_t id, dg_error *err);

/* Whether node id is a StackPopV2 whose element shape comes from a
 * StackPushV2 of its stack not typed yet (infer_node.c; the pass infers
 * it later, after the loop that pushes). */
int dgc_infer_pop_waits(const dgc_graph *g, int32_t id);

/* The inference pass (shape.c): type every node from `from` on in
 * topological order; rejects cycles. */
dg_status dgc_pass_infer(dgc_graph *g, int32_t from, dg_error *err);

/* infer.c: SPEC appendix ops */
int dgc_infer_const(DGC_INFER_ARGS);
int dgc_infer_variable(DGC_INFER_ARGS);
int dgc_infer_placeholder(DGC_INFER_ARGS);
int dgc_infer_placeholder_default(DGC_INFER_ARGS); /* shape attr, input fits */
int dgc_infer_random(DGC_INFER_ARGS);     /* attrs.shape or input 0 */
int dgc_infer_random_int(DGC_INFER_ARGS); /* shape, minval, maxval */
int dgc_infer_multinomial(DGC_INFER_ARGS); /* logits, num_samples */
int dgc_infer_invert_permutation(DGC_INFER_ARGS);
int dgc_infer_unary(DGC_INFER_ARGS);       /* same type as input 0 */
int dgc_infer_unary_float(DGC_INFER_ARGS); /* same, input must be float */
/* _LayerNorm (x, gamma, beta): x's type; gamma and beta of the last
 * dimension's length (fuse_norm.c) */
int dgc_infer_layernorm(DGC_INFER_ARGS);
/* NonMaxSuppressionV3/V4/V5 (infer_nms.c) */
int dgc_infer_nms(DGC_INFER_ARGS);
int dgc_infer_binary(DGC_INFER_ARGS);      /* NumPy broadcasting, same dtype */
int dgc_infer_clip_by_value(DGC_INFER_ARGS); /* t; bounds scalar or t-shaped */
/* 0 when ClipByValue's bounds lo and hi each are a scalar or of t's shape
 * (unknown dims fit), step[i] then 0 (a scalar) or 1; else -1 with the
 * reason in msg (the shape function's and the kernels' check). */
int dgc_clip_bounds_check(const dg_shape *t, const dg_shape *lo,
                          const dg_shape *hi, int64_t step[2], char *msg,
                          size_t msgsz);
int dgc_infer_ensure_shape(DGC_INFER_ARGS);  /* x refined by attr shape */
/* 0 when shape x fits EnsureShape node n's attr shape (-1 dims, unknown
 * rank and x's unknown dims fit), else -1 with the reason in msg (the
 * shape function's and the kernels' check). */
int dgc_ensure_shape_check(const dgc_node *n, const dg_shape *x, char *msg,
                           size_t msgsz);
int dgc_infer_assert(DGC_INFER_ARGS);        /* bool scalar condition, no outputs */
int dgc_infer_addn(DGC_INFER_ARGS);
int dgc_infer_matmul(DGC_INFER_ARGS);
int dgc_infer_biasadd(DGC_INFER_ARGS);
int dgc_infer_fused_matmul(DGC_INFER_ARGS); /* _FusedMatMul (passes/fuse.c) */
int dgc_infer_reduce(DGC_INFER_ARGS);      /* Sum, Mean, Max: axis, keepdims */
int dgc_infer_reshape(DGC_INFER_ARGS);
int dgc_infer_transpose(DGC_INFER_ARGS);
int dgc_infer_cast(DGC_INFER_ARGS);
int dgc_infer_xent(DGC_INFER_ARGS);        /* outputs loss [N], backprop [N,C] */
int dgc_infer_sparse_xent(DGC_INFER_ARGS);
int dgc_infer_argmax(DGC_INFER_ARGS);
int dgc_infer_equal(DGC_INFER_ARGS);
/* ApproximateEqual: x and y of one shape (no broadcasting), bool */
int dgc_infer_approximate_equal(DGC_INFER_ARGS);
/* the stateless random ops: attrs.dtype (float) of shape input 0, seed
 * input 1 an int32/int64 [2] */
int dgc_infer_stateless_random(DGC_INFER_ARGS);
/* StatelessRandomUniformInt: RandomUniformInt's (shape, minval, maxval)
 * with the seed second */
int dgc_infer_stateless_random_int(DGC_INFER_ARGS);
int dgc_infer_assign(DGC_INFER_ARGS);      /* Assign, AssignAdd, AssignSub */
int dgc_infer_apply_gd(DGC_INFER_ARGS);
int dgc_infer_noop(DGC_INFER_ARGS);

/* infer_grad.c: generated ops */
int dgc_infer_sum_to(DGC_INFER_ARGS);        /* type of input 1, dtype of 0 */
int dgc_infer_broadcast_like(DGC_INFER_ARGS);/* type of input 1, dtype of 0 */
int dgc_infer_reshape_like(DGC_INFER_ARGS);  /* same */
int dgc_infer_grad_pair(DGC_INFER_ARGS);     /* ReluGrad etc.: type of input 0,
                                                inputs must match */
int dgc_infer_max_grad(DGC_INFER_ARGS);      /* type of x (input 0) */
int dgc_infer_apply_momentum(DGC_INFER_ARGS);
int dgc_infer_apply_adam(DGC_INFER_ARGS);
int dgc_infer_batchnorm(DGC_INFER_ARGS);
int dgc_infer_batchnorm_grad(DGC_INFER_ARGS);
int dgc_infer_assign_moving_avg(DGC_INFER_ARGS);

/* infer_collective.c: replication ops (issue 13) */
int dgc_infer_allreduce(DGC_INFER_ARGS);     /* type of x; checks reduction */
int dgc_infer_broadcast(DGC_INFER_ARGS);     /* type of x; checks root */
int dgc_infer_replica_index(DGC_INFER_ARGS); /* int32 scalar */
/* AllReduce's reduction name -> 0 sum, 1 mean, 2 max, 3 min; -1 unknown. */
int dgc_allreduce_reduction(const char *s);
/* infer_tf.c: TF graph ops (issue 10) */
int dgc_infer_shape_of(DGC_INFER_ARGS);      /* Shape */
int dgc_infer_size_of(DGC_INFER_ARGS);       /* Size */
int dgc_infer_rank_of(DGC_INFER_ARGS);       /* Rank */
int dgc_infer_expand_dims(DGC_INFER_ARGS);
int dgc_infer_squeeze(DGC_INFER_ARGS);
int dgc_infer_tile(DGC_INFER_ARGS);
int dgc_infer_gather(DGC_INFER_ARGS);        /* GatherV2 */
int dgc_infer_bias_add_grad(DGC_INFER_ARGS);
int dgc_infer_l2loss(DGC_INFER_ARGS);
int dgc_infer_summary(DGC_INFER_ARGS);       /* ScalarSummary, MergeSummary... */
int dgc_infer_concat(DGC_INFER_ARGS);        /* ConcatV2 (axis attr) */
int dgc_infer_strided_slice(DGC_INFER_ARGS); /* input, begin, end[, strides] */
int dgc_infer_slice(DGC_INFER_ARGS);         /* input, begin, size */
int dgc_infer_pack(DGC_INFER_ARGS);          /* N inputs, axis attr */
int dgc_infer_fill(DGC_INFER_ARGS);          /* dims, value */
int dgc_infer_shape_n(DGC_INFER_ARGS);       /* ShapeN: one output per input */
int dgc_infer_split(DGC_INFER_ARGS);         /* Unpack, Split, SplitV */
int dgc_infer_range(DGC_INFER_ARGS);         /* start, limit, delta */
int dgc_infer_dynamic_stitch(DGC_INFER_ARGS);/* N indices, N data */
int dgc_infer_broadcast_to(DGC_INFER_ARGS);  /* x, shape */
int dgc_infer_bcast_grad_args(DGC_INFER_ARGS); /* BroadcastGradientArgs */
int dgc_infer_concat_offset(DGC_INFER_ARGS); /* concat_dim, shape... */
int dgc_infer_pad(DGC_INFER_ARGS);           /* x, paddings[, value] */
int dgc_infer_select(DGC_INFER_ARGS);        /* Select, SelectV2 */
int dgc_infer_logical(DGC_INFER_ARGS);       /* LogicalAnd/Or/Not */
/* TF's BroadcastGradientArgs: the axes over which a gradient must be
 * summed for shapes a and b.  0, or -1 when they do not broadcast. */
int dgc_bcast_grad_args(const int64_t *a, int na, const int64_t *b, int nb,
                        int64_t *ra, int *nra, int64_t *rb, int *nrb);

/* A slice of an input of rank `rank`: per input dim its first index,
 * stride and length (-1 unknown); `out` the result's shape (new axes
 * added, shrunk axes dropped).  Shared by inference and the kernels. */
typedef struct dgc_slice {
    int rank;
    int64_t start[DG_MAX_RANK], stride[DG_MAX_RANK], len[DG_MAX_RANK];
    dg_shape out;
} dgc_slice;
/* StridedSlice with node n's masks (begin/end/ellipsis/new_axis/
 * shrink_axis_mask) over an input of shape x, m-element begin/end/strides,
 * as TF does (clamping, negative indices and strides).  0, or -1 with a
 * reason in msg. */
int dgc_slice_spec(const dgc_node *n, const dg_shape *x, const int64_t *beg,
                   const int64_t *end, const int64_t *str, int m,
                   dgc_slice *sp, char *msg, size_t msgsz);
/* Slice(x, begin, size) (size -1 = to the end). */
int dgc_slice_simple(const dg_shape *x, const int64_t *beg,
                     const int64_t *size, dgc_slice *sp, char *msg,
                     size_t msgsz);

/* The elements of a small int32/int64 vector or scalar parameter t into
 * v[0..max): returns its length (elements written only when t->value is
 * set), -1 when t is no int vector of known length, -2 when longer than
 * max. */
int dgc_ttype_ints(const dgc_ttype *t, int64_t *v, int max);
/* fold_value.c: the value of output r when it is a small int tensor (at most
 * max <= DGC_FOLD_MAX elements) that a Const holds or that constant
 * folding computes from Consts a few producers up (Shape of a fully known
 * shape, Range, FloorMod, DynamicStitch...; r's producer must be typed).
 * Writes it into buf in r's dtype (int32 or int64) and returns 1; 0 when
 * not known at compile time. */
#define DGC_FOLD_MAX 64
int dgc_fold_value(const dgc_graph *g, dgc_ref r, void *buf, int max);
/* A known value (fold_value.c): up to DGC_FOLD_MAX elements, C order;
 * ints in v, float dtypes in f (float32 exactly). */
typedef struct dgc_kval {
    dg_dtype dtype;
    dg_shape shape;
    int64_t n;
    int64_t v[DGC_FOLD_MAX];
    double f[DGC_FOLD_MAX];
} dgc_kval;
/* Evaluate node n from its inputs when they are small Consts (the
 * constant-folding pass, passes/fold.c): 1 and *o, or 0 when not known. */
int dgc_fold_eval(const dgc_graph *g, const dgc_node *n, dgc_kval *o);
/* infer_nn.c: convolution, pooling, fused batch norm (TF's CNN ops) */
int dgc_infer_conv2d(DGC_INFER_ARGS);
int dgc_infer_dwconv(DGC_INFER_ARGS);
int dgc_infer_fused_conv(DGC_INFER_ARGS); /* passes/fuse_conv.c (NHWC) */
int dgc_infer_conv_bp_input(DGC_INFER_ARGS);
int dgc_infer_conv_bp_filter(DGC_INFER_ARGS);
int dgc_infer_pool(DGC_INFER_ARGS);
int dgc_infer_max_pool_grad(DGC_INFER_ARGS);
int dgc_infer_avg_pool_grad(DGC_INFER_ARGS);
int dgc_infer_fused_bn(DGC_INFER_ARGS);
int dgc_infer_fused_bn_grad(DGC_INFER_ARGS);

/* infer_zoo.c: op breadth (issue 22) */
int dgc_infer_reverse(DGC_INFER_ARGS);          /* ReverseV2 */
int dgc_infer_identity_n(DGC_INFER_ARGS);       /* IdentityN */
int dgc_infer_einsum(DGC_INFER_ARGS);           /* Einsum */
int dgc_infer_resize(DGC_INFER_ARGS);           /* Resize*(images, size) */
int dgc_infer_resize_grad(DGC_INFER_ARGS);      /* ResizeBilinearGrad */
int dgc_infer_unique(DGC_INFER_ARGS);           /* Unique */
int dgc_infer_unsorted_segment(DGC_INFER_ARGS); /* UnsortedSegmentSum */
int dgc_infer_segment(DGC_INFER_ARGS); /* SegmentSum, ...Mean/Max/Min/Prod */
int dgc_infer_sparse_segment(DGC_INFER_ARGS); /* SparseSegmentSum, ... */
int dgc_infer_sparse_segment_grad(DGC_INFER_ARGS); /* SparseSegmentSumGrad */
int dgc_infer_sparse_to_dense(DGC_INFER_ARGS);
int dgc_infer_in_top_k(DGC_INFER_ARGS); /* InTopKV2 */
int dgc_infer_bincount(DGC_INFER_ARGS); /* Bincount, DenseBincount */
int dgc_infer_scatter(DGC_INFER_ARGS);          /* ScatterAdd, ScatterSub */
int dgc_infer_dynamic_partition(DGC_INFER_ARGS);
int dgc_infer_space_batch(DGC_INFER_ARGS);
int dgc_infer_is_initialized(DGC_INFER_ARGS);  /* a bool scalar */     /* SpaceToBatchND & inverse */
int dgc_infer_conv3d(DGC_INFER_ARGS);          /* Conv3D, MaxPool3D */
int dgc_infer_is_finite(DGC_INFER_ARGS); /* IsNan/IsInf/IsFinite: bool */
int dgc_infer_cumsum(DGC_INFER_ARGS);    /* Cumsum: x's type, axis checked */
/* Shape s seen as [outer, len, inner] around axis `axis` (negative counts
 * from the end): 0, or -1 when the axis is out of range for s's rank.
 * (Cumsum's kernels.) */
int dgc_axis_split(const dg_shape *s, int64_t axis, int64_t *outer,
                   int64_t *len, int64_t *inner);
int dgc_infer_one_hot(DGC_INFER_ARGS);   /* OneHot: depth's value inserted */
int dgc_infer_depth_space(DGC_INFER_ARGS); /* DepthToSpace, SpaceToDepth */
/* infer_grad.c: ApplyAdagrad, ApplyRMSProp, ... (dgc_op_n_refs slots) */
#define DGC_MAX_APPLY 8
int dgc_infer_apply_opt(DGC_INFER_ARGS);
int dgc_infer_mirror_pad(DGC_INFER_ARGS); /* MirrorPad and its gradient */
int dgc_infer_gather_nd(DGC_INFER_ARGS);  /* GatherNd */
int dgc_infer_topk(DGC_INFER_ARGS);       /* TopKV2: values, int32 indices */
/* infer_ops9b.c: the ops9b group (issue 22) */
int dgc_infer_band_part(DGC_INFER_ARGS); /* MatrixBandPart: x's type */
/* MatrixBandPart's bands against an [rows, cols] matrix (-1: unknown):
 * 0, or -1 with the reason in msg when one is wider than the matrix. */
int dgc_band_check(int64_t rows, int64_t cols, int64_t lo, int64_t up,
                   char *msg, size_t msgsz);
int dgc_infer_roll(DGC_INFER_ARGS);      /* Roll: x's type, axes checked */
int dgc_infer_reverse_sequence(DGC_INFER_ARGS); /* ReverseSequence: x's type */
int dgc_infer_bcast_args(DGC_INFER_ARGS); /* BroadcastArgs: [max(len0, len1)] */
int dgc_infer_linspace(DGC_INFER_ARGS);   /* LinSpace: start's type, [num] */
int dgc_infer_tensor_scatter(DGC_INFER_ARGS); /* TensorScatter*: tensor's type (infer_zoo.c) */
int dgc_infer_strided_slice_grad(DGC_INFER_ARGS); /* dy's dtype, `shape` */
int dgc_infer_matrix_diag(DGC_INFER_ARGS); /* MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3 */
/* ops10c (infer_ops10c.c) */
int dgc_infer_diag(DGC_INFER_ARGS);       /* Diag: s + s; DiagPart: s of s + s */
int dgc_infer_unravel_index(DGC_INFER_ARGS); /* [rank(dims)] or [rank(dims), n] */
int dgc_infer_fmt_perm(DGC_INFER_ARGS);   /* DataFormatVecPermute: x's type */
int dgc_infer_space_batch_v1(DGC_INFER_ARGS); /* SpaceToBatch: as SpaceToBatchND */
int dgc_infer_nth_element(DGC_INFER_ARGS); /* NthElement: the last axis dropped */
int dgc_infer_linalg(DGC_INFER_ARGS);     /* MatrixInverse ... MatrixSolve */
int dgc_infer_decomp(DGC_INFER_ARGS);     /* Qr, Svd, SelfAdjointEigV2 */
/* The formats of a DataFormatVecPermute / DataFormatDimMap node for a
 * vector of `size` entries (the format's length, or for
 * DataFormatVecPermute its spatial letters alone): src[i] for each i of
 * dst in from[i] (y[i] = x[from[i]]), and *len the format length used.
 * 0, or -1 with msg (formats of other lengths, not a permutation, a size
 * neither). size < 0: the whole formats. */
int dgc_fmt_perm(const dgc_node *n, int64_t size, int *from, int *len,
                 char *msg, size_t msgsz);
/* The one diagonal k of a k input (a scalar, or [lo, hi] with lo == hi)
 * into *k: 0, 1 when its value is unknown, or -1 with msg (a k range). */
int dgc_diag_k(const dgc_ttype *t, int64_t *k, char *msg, size_t msgsz);
/* The shape r[0..max(na, nb)) that shapes a and b broadcast to (TF's
 * BroadcastArgs: right-aligned; equal dims, or a 1 taking the other):
 * its rank, or -1 - i where dimension i of r is incompatible. */
int dgc_bcast_args(const int64_t *a, int na, const int64_t *b, int nb,
                   int64_t *r);
/* Roll's per-dimension shifts sh[0..rank) in [0, dim) from n (shift,
 * axis) pairs (negative axes from the end; one axis twice adds): -1, or
 * the index of the first axis out of range. */
int dgc_roll_shifts(const dg_shape *s, const int64_t *shift,
                    const int64_t *axis, int n, int64_t *sh);
int dgc_infer_lrn(DGC_INFER_ARGS);        /* LRN, LRNGrad: x's (infer_zoo2.c) */
int dgc_infer_avg_pool3d_grad(DGC_INFER_ARGS); /* AvgPool3DGrad (infer_zoo2.c) */
int dgc_infer_max_pool3d_grad(DGC_INFER_ARGS); /* MaxPool3DGrad(Grad) (infer_zoo2.c) */
int dgc_infer_conv3d_bp_input(DGC_INFER_ARGS); /* Conv3DBackpropInputV2 (infer_zoo2.c) */
int dgc_infer_conv3d_bp_filter(DGC_INFER_ARGS); /* Conv3DBackpropFilterV2 (infer_zoo2.c) */
int dgc_infer_where(DGC_INFER_ARGS);      /* Where: int64 [-1, rank] (infer_zoo2.c) */
int dgc_infer_scatter_nd(DGC_INFER_ARGS); /* ScatterNd: shape's value */
/* A 3-D convolution's or pool's layout and padding attributes: data_format
 * NDHWC (or unset) and padding SAME or VALID.  0 and *same (if not NULL)
 * set, or -1 with
 * the reason in msg. */
int dgc_infer_ndhwc_padding(const dgc_node *n, int *same, char *msg,
                            size_t msgsz);
/* The window of a 3-D convolution or pooling along one axis: output size,
 * and the padding before (TF's SAME / VALID).  -1 for an unknown size. */
int64_t dgc_win3d(int64_t in, int64_t k, int64_t s, int64_t dil, int same,
                  int64_t *pad_before);
/* An Einsum equation over concrete or partial input shapes: every label
 * (letters, then one per ellipsis dim) gets an id, its size dim[id] (-1
 * unknown; a size-1 dim broadcasts), and each input dim and output dim
 * the id of its label.  Shared by inference, the kernels and the gradient
 * rule.  0, or -1 with a reason in msg. */
#define DGC_EINSUM_MAX_LABELS 16
typedef struct dgc_einsum {
    int n_in, n_labels;
    char names[DGC_EINSUM_MAX_LABELS]; /* letters; '0'+k: ellipsis dim k */
    int64_t dim[DGC_EINSUM_MAX_LABELS];
    int rank[2], in[2][DG_MAX_RANK];
    int out_rank, out[DG_MAX_RANK];
} dgc_einsum;
/* The equation of an Einsum node (attr equation), or the one a
 * BatchMatMulV2 node computes ("...ij,...jk->...ik" with its adj_x/adj_y
 * transposes), in buf; NULL when missing. */
const char *dgc_einsum_equation(const dgc_node *n, char *buf, size_t size);
int dgc_einsum_parse(const char *eq, const dg_shape *const *shapes, int n_in,
                     dgc_einsum *e, char *msg, size_t msgsz);
/* The loops of a parsed Einsum over concrete shapes sh: the output dims
 * with each input's element stride per output dim, and the contracted
 * dims (labels not in the output) with their strides (0 where an input
 * lacks the label or broadcasts it). */
typedef struct dgc_einsum_loops {
    int no, nc;
    int64_t odim[DG_MAX_RANK], ost[2][DG_MAX_RANK];
    int64_t cdim[DGC_EINSUM_MAX_LABELS], cst[2][DGC_EINSUM_MAX_LABELS];
} dgc_einsum_loops;
void dgc_einsum_loops_of(const dgc_einsum *e, const dg_shape *const *sh,
                         dgc_einsum_loops *l);

#endif
