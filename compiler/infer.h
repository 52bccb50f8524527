/*
 * infer.h -- shape and dtype inference functions named by the op table.
 *
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

/* infer.c: SPEC appendix ops */
int dgc_infer_const(DGC_INFER_ARGS);
int dgc_infer_variable(DGC_INFER_ARGS);
int dgc_infer_placeholder(DGC_INFER_ARGS);
int dgc_infer_random(DGC_INFER_ARGS);
int dgc_infer_unary(DGC_INFER_ARGS);       /* same type as input 0 */
int dgc_infer_unary_float(DGC_INFER_ARGS); /* same, input must be float */
int dgc_infer_binary(DGC_INFER_ARGS);      /* NumPy broadcasting, same dtype */
int dgc_infer_addn(DGC_INFER_ARGS);
int dgc_infer_matmul(DGC_INFER_ARGS);
int dgc_infer_biasadd(DGC_INFER_ARGS);
int dgc_infer_reduce(DGC_INFER_ARGS);      /* Sum, Mean, Max: axis, keepdims */
int dgc_infer_reshape(DGC_INFER_ARGS);
int dgc_infer_transpose(DGC_INFER_ARGS);
int dgc_infer_cast(DGC_INFER_ARGS);
int dgc_infer_xent(DGC_INFER_ARGS);        /* outputs loss [N], backprop [N,C] */
int dgc_infer_sparse_xent(DGC_INFER_ARGS);
int dgc_infer_argmax(DGC_INFER_ARGS);
int dgc_infer_equal(DGC_INFER_ARGS);
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

/* infer_nn.c: convolution, pooling, fused batch norm (TF's CNN ops) */
int dgc_infer_conv2d(DGC_INFER_ARGS);
int dgc_infer_dwconv(DGC_INFER_ARGS);
int dgc_infer_conv_bp_input(DGC_INFER_ARGS);
int dgc_infer_conv_bp_filter(DGC_INFER_ARGS);
int dgc_infer_pool(DGC_INFER_ARGS);
int dgc_infer_max_pool_grad(DGC_INFER_ARGS);
int dgc_infer_avg_pool_grad(DGC_INFER_ARGS);
int dgc_infer_fused_bn(DGC_INFER_ARGS);
int dgc_infer_fused_bn_grad(DGC_INFER_ARGS);

#endif
