/*
 * infer_grad.c -- shape inference functions (placeholder: being written)
 */
#include "infer.h"
#include <stdio.h>
int dgc_infer_const(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_variable(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_placeholder(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_random(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_unary(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_unary_float(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_binary(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_addn(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_matmul(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_biasadd(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_reduce(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_reshape(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_transpose(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_cast(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_xent(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_sparse_xent(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_argmax(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_equal(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_assign(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_apply_gd(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_noop(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_sum_to(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_broadcast_like(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_reshape_like(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_grad_pair(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_max_grad(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_apply_momentum(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_apply_adam(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_batchnorm(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_batchnorm_grad(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
int dgc_infer_assign_moving_avg(DGC_INFER_ARGS) { (void)n; (void)in; (void)n_in; (void)out; snprintf(msg, msgsz, "not implemented"); return -1; }
