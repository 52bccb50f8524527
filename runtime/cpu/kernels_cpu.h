/*
 * kernels_cpu.h -- internal header of the CPU kernels (kernels_cpu*.c): the
 * kernel functions each family file exports to the table in kernels_cpu.c,
 * and the small helpers they share (dtype conversion, axis attributes,
 * shape collapsing for broadcasting and reductions).
 */
#ifndef DGR_KERNELS_CPU_H
#define DGR_KERNELS_CPU_H

#include <stdint.h>

#include "kernel.h"
#include "rng.h"
#include "threadpool.h"

/* Elements above which an elementwise op or reduction is split over the
 * intra-op pool. */
#define DGR_CPU_PAR_MIN 32768

typedef uint8_t dgr_bool_t; /* DG_BOOL storage: one byte, 0 or 1 */

/* ---- helpers (kernels_cpu.c) --------------------------------------------- */

/* Convert n elements from src (dtype st) to dst (dtype dt); float -> int
 * truncates toward zero, anything -> bool is (x != 0).  src and dst may be
 * the same pointer only when st == dt. */
void dgr_cpu_convert(const void *src, dg_dtype st, void *dst, dg_dtype dt,
                     int64_t n);
/* Element i of a host buffer of dtype t, as a double. */
double dgr_cpu_get(const void *p, dg_dtype t, int64_t i);
/* Host pointer of a value (NULL when it has no buffer). */
static inline void *dgr_cpu_ptr(const dgr_value *v)
{
    return v->buf ? v->buf->host : NULL;
}

/* Reduction axes of node n for an input of rank `rank` from attribute
 * `key` ("axis"): absent = all axes; an int or a list, negatives counted
 * from the end.  Sets mask bit d for each reduced axis.  Returns 0, or -1
 * with an error naming the node when an axis is out of range. */
int dgr_cpu_axes(dgr_kctx *k, dgc_attr_id key, int rank, uint32_t *mask);

/* A binary broadcast of operands a and b into an output shape, collapsed
 * to at most DG_MAX_RANK dims: dims[] with element strides sa[]/sb[] (0 on
 * broadcast dims).  rank 0 = scalar. */
typedef struct dgr_bcast {
    int rank;
    int64_t dims[DG_MAX_RANK];
    int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
} dgr_bcast;
/* Build the collapsed broadcast of shapes a and b to out.  Returns 0, or -1
 * when they do not broadcast to out. */
int dgr_bcast_init(dgr_bcast *bc, const dg_shape *a, const dg_shape *b,
                   const dg_shape *out);

/* Reduce x (shape xs, dtype t) over the axes in mask into out (whose
 * numel is the product of the kept dims, in order).  kind: 0 sum, 1 mean,
 * 2 max.  Splits large work over k->intra. */
enum { DGR_RED_SUM = 0, DGR_RED_MEAN = 1, DGR_RED_MAX = 2 };
void dgr_cpu_reduce(dgr_kctx *k, const void *x, const dg_shape *xs,
                    dg_dtype t, uint32_t mask, int kind, void *out);

/* ---- kernels, by family file --------------------------------------------- */

#define DGR_K(name) dg_status name(dgr_kctx *k)

/* kernels_cpu_elementwise.c */
DGR_K(dgr_k_neg); DGR_K(dgr_k_abs); DGR_K(dgr_k_sin); DGR_K(dgr_k_cos);
DGR_K(dgr_k_exp); DGR_K(dgr_k_log); DGR_K(dgr_k_sqrt); DGR_K(dgr_k_square);
DGR_K(dgr_k_tanh); DGR_K(dgr_k_sigmoid); DGR_K(dgr_k_relu);
DGR_K(dgr_k_add); DGR_K(dgr_k_sub); DGR_K(dgr_k_mul); DGR_K(dgr_k_div);
DGR_K(dgr_k_pow); DGR_K(dgr_k_maximum); DGR_K(dgr_k_minimum);
DGR_K(dgr_k_equal); DGR_K(dgr_k_relu_grad); DGR_K(dgr_k_sigmoid_grad);
DGR_K(dgr_k_tanh_grad); DGR_K(dgr_k_addn); DGR_K(dgr_k_bias_add);

/* kernels_cpu_reduce.c */
DGR_K(dgr_k_sum); DGR_K(dgr_k_mean); DGR_K(dgr_k_max);
DGR_K(dgr_k_sum_to); DGR_K(dgr_k_broadcast_like); DGR_K(dgr_k_max_grad);
DGR_K(dgr_k_argmax);

/* kernels_cpu_matmul.c */
DGR_K(dgr_k_matmul);
DGR_K(dgr_k_fused_matmul); /* MatMul + BiasAdd (+ Relu), inputs a, b, bias */

/* kernels_cpu_nn.c */
DGR_K(dgr_k_softmax); DGR_K(dgr_k_xent); DGR_K(dgr_k_sparse_xent);
DGR_K(dgr_k_softmax_grad); DGR_K(dgr_k_batchnorm);
DGR_K(dgr_k_batchnorm_grad);

/* kernels_cpu_state.c */
DGR_K(dgr_k_assign); DGR_K(dgr_k_assign_add);
DGR_K(dgr_k_assign_sub); DGR_K(dgr_k_apply_gd); DGR_K(dgr_k_apply_momentum);
DGR_K(dgr_k_apply_adam); DGR_K(dgr_k_assign_moving_avg);

/* kernels_cpu_misc.c */
DGR_K(dgr_k_const); DGR_K(dgr_k_random);
DGR_K(dgr_k_random_uniform_int); DGR_K(dgr_k_multinomial);
DGR_K(dgr_k_invert_permutation);
DGR_K(dgr_k_identity); DGR_K(dgr_k_reshape);
DGR_K(dgr_k_transpose); DGR_K(dgr_k_cast); DGR_K(dgr_k_print);
DGR_K(dgr_k_noop); DGR_K(dgr_k_zeros_like); DGR_K(dgr_k_ones_like);

/* kernels_cpu_collective.c */
DGR_K(dgr_k_replica_index); DGR_K(dgr_k_collective);
/* TF graph ops (issue 10): kernels_cpu_elementwise.c */
DGR_K(dgr_k_floor_div); DGR_K(dgr_k_floor_mod); DGR_K(dgr_k_less);
DGR_K(dgr_k_less_equal); DGR_K(dgr_k_greater); DGR_K(dgr_k_greater_equal);
DGR_K(dgr_k_not_equal); DGR_K(dgr_k_relu6_grad); DGR_K(dgr_k_rsqrt_grad);
DGR_K(dgr_k_reciprocal_grad); DGR_K(dgr_k_relu6); DGR_K(dgr_k_rsqrt);
DGR_K(dgr_k_reciprocal);
/* kernels_cpu_tf.c */
DGR_K(dgr_k_shape); DGR_K(dgr_k_size); DGR_K(dgr_k_rank); DGR_K(dgr_k_view);
DGR_K(dgr_k_tile); DGR_K(dgr_k_prod); DGR_K(dgr_k_gather);
DGR_K(dgr_k_bias_add_grad); DGR_K(dgr_k_l2loss); DGR_K(dgr_k_concat);
DGR_K(dgr_k_slice_any); DGR_K(dgr_k_fill); /* + Pack: dgr_k_concat */
DGR_K(dgr_k_shape_n); DGR_K(dgr_k_split_any); DGR_K(dgr_k_range);
DGR_K(dgr_k_dynamic_stitch); DGR_K(dgr_k_broadcast_to);
DGR_K(dgr_k_bcast_grad_args); DGR_K(dgr_k_concat_offset); DGR_K(dgr_k_pad);
DGR_K(dgr_k_select); DGR_K(dgr_k_log_softmax); DGR_K(dgr_k_logical_and);
DGR_K(dgr_k_logical_or); DGR_K(dgr_k_logical_not);
DGR_K(dgr_k_summary); /* ScalarSummary, MergeSummary...: a no-op */

/* The elementwise drivers of kernels_cpu_elementwise.c, for other family
 * files: fns[dtype] applied to input 0 (unary) or inputs 0 and 1 with
 * NumPy broadcasting (binary; sa/sb are 0 or 1); output 0 allocated. */
typedef void (*dgr_cpu_un_fn)(const void *a, void *o, int64_t n);
typedef void (*dgr_cpu_bin_fn)(const void *a, int64_t sa, const void *b,
                               int64_t sb, void *o, int64_t n);
dg_status dgr_cpu_unary(dgr_kctx *k, const dgr_cpu_un_fn *fns);
dg_status dgr_cpu_binary(dgr_kctx *k, const dgr_cpu_bin_fn *fns);

/* kernels_cpu_zoo.c: op breadth (issue 22) */
DGR_K(dgr_k_floor); DGR_K(dgr_k_ceil); DGR_K(dgr_k_round); DGR_K(dgr_k_rint);
DGR_K(dgr_k_log1p); DGR_K(dgr_k_expm1); DGR_K(dgr_k_tan); DGR_K(dgr_k_atan);
DGR_K(dgr_k_asin); DGR_K(dgr_k_acos); DGR_K(dgr_k_sinh); DGR_K(dgr_k_cosh);
DGR_K(dgr_k_atan2); DGR_K(dgr_k_is_nan); DGR_K(dgr_k_is_inf);
DGR_K(dgr_k_is_finite);
/* kernels_cpu_tf.c: Min, Any, All (Prod's loop); kernels_cpu_reduce.c:
 * ArgMin (ArgMax's) */
DGR_K(dgr_k_min); DGR_K(dgr_k_any); DGR_K(dgr_k_all); DGR_K(dgr_k_argmin);
DGR_K(dgr_k_cumsum); DGR_K(dgr_k_one_hot); DGR_K(dgr_k_depth_to_space);
DGR_K(dgr_k_space_to_depth); DGR_K(dgr_k_mirror_pad);
DGR_K(dgr_k_apply_opt); /* kernels_cpu_state.c: ApplyAdagrad ... */
DGR_K(dgr_k_mirror_pad_grad); DGR_K(dgr_k_gather_nd); DGR_K(dgr_k_scatter_nd);
DGR_K(dgr_k_topk);
DGR_K(dgr_k_where); DGR_K(dgr_k_lrn); DGR_K(dgr_k_lrn_grad);
DGR_K(dgr_k_avg_pool3d); DGR_K(dgr_k_avg_pool3d_grad); /* kernels_cpu_zoo2.c */
DGR_K(dgr_k_conv3d_bp_input); DGR_K(dgr_k_conv3d_bp_filter); /* zoo2.c */
DGR_K(dgr_k_squared_difference); DGR_K(dgr_k_erf); DGR_K(dgr_k_erfc);
DGR_K(dgr_k_leaky_relu); DGR_K(dgr_k_leaky_relu_grad); DGR_K(dgr_k_elu);
DGR_K(dgr_k_elu_grad); DGR_K(dgr_k_selu); DGR_K(dgr_k_selu_grad);
DGR_K(dgr_k_softplus); DGR_K(dgr_k_softplus_grad); DGR_K(dgr_k_softsign);
DGR_K(dgr_k_softsign_grad); DGR_K(dgr_k_reverse); DGR_K(dgr_k_identity_n);
DGR_K(dgr_k_einsum); DGR_K(dgr_k_resize_bilinear);
DGR_K(dgr_k_resize_bilinear_grad); DGR_K(dgr_k_resize_nearest);
DGR_K(dgr_k_resize_nearest_grad); DGR_K(dgr_k_unique);
DGR_K(dgr_k_unsorted_segment_sum); DGR_K(dgr_k_scatter_add);
DGR_K(dgr_k_scatter_sub); DGR_K(dgr_k_scatter_update);
DGR_K(dgr_k_dynamic_partition);
DGR_K(dgr_k_sign); DGR_K(dgr_k_sqrt_grad); DGR_K(dgr_k_div_no_nan);
DGR_K(dgr_k_space_to_batch); DGR_K(dgr_k_batch_to_space);
DGR_K(dgr_k_conv3d); DGR_K(dgr_k_max_pool3d);
DGR_K(dgr_k_dynamic_stitch_any); /* DynamicStitch's row: sizes itself */
DGR_K(dgr_k_is_initialized);
#endif
