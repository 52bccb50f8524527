/*
 * cpu_backend.c -- the CPU backend's function table and kernel registry:
 * one row per op id, the dtypes ("T") its kernel runs in and the kernel.
 * Every op has a CPU kernel for every dtype it supports (SPEC 4.7), so the
 * rows say DGR_KDT_OP; Variable, Placeholder and PlaceholderWithDefault
 * are rows without a kernel: the executor reads Variables and feeds (or a
 * PlaceholderWithDefault's input) itself.
 */
#include "cpu_backend.h"
#include "kernels_cpu.h"
#include "kernels_cpu_conv.h"
#include "kernels_cpu_dnnl.h"
#include "devices.h"
#include "cpu_gemm.h"

#define ROW(op, fn) [DGC_OPID_##op] = {DGR_KDT_OP, fn}

static const dgr_kernel_row cpu_kernels[DGC_N_OPS] = {
    ROW(Const, dgr_k_const),
    ROW(Variable, NULL),
    ROW(Placeholder, NULL),
    ROW(RandomNormal, dgr_k_random),
    ROW(RandomUniform, dgr_k_random),
    ROW(Identity, dgr_k_identity),
    ROW(Neg, dgr_k_neg),
    ROW(Abs, dgr_k_abs),
    ROW(Sin, dgr_k_sin),
    ROW(Cos, dgr_k_cos),
    ROW(Exp, dgr_k_exp),
    ROW(Log, dgr_k_log),
    ROW(Sqrt, dgr_k_sqrt),
    ROW(Square, dgr_k_square),
    ROW(Tanh, dgr_k_tanh),
    ROW(Sigmoid, dgr_k_sigmoid),
    ROW(Relu, dgr_k_relu),
    ROW(Add, dgr_k_add),
    ROW(Sub, dgr_k_sub),
    ROW(Mul, dgr_k_mul),
    ROW(Div, dgr_k_div),
    ROW(Pow, dgr_k_pow),
    ROW(Maximum, dgr_k_maximum),
    ROW(Minimum, dgr_k_minimum),
    ROW(AddN, dgr_k_addn),
    ROW(MatMul, dgr_k_matmul),
    ROW(BiasAdd, dgr_k_bias_add),
    ROW(Sum, dgr_k_sum),
    ROW(Mean, dgr_k_mean),
    ROW(Max, dgr_k_max),
    ROW(Reshape, dgr_k_reshape),
    ROW(Transpose, dgr_k_transpose),
    ROW(Cast, dgr_k_cast),
    ROW(Softmax, dgr_k_softmax),
    ROW(SoftmaxCrossEntropyWithLogits, dgr_k_xent),
    ROW(SparseSoftmaxCrossEntropyWithLogits, dgr_k_sparse_xent),
    ROW(ArgMax, dgr_k_argmax),
    ROW(Equal, dgr_k_equal),
    ROW(Assign, dgr_k_assign),
    ROW(AssignAdd, dgr_k_assign_add),
    ROW(AssignSub, dgr_k_assign_sub),
    ROW(ApplyGradientDescent, dgr_k_apply_gd),
    ROW(Print, dgr_k_print),
    ROW(NoOp, dgr_k_noop),
    /* replication (issue 13) */
    ROW(AllReduce, dgr_k_collective),
    ROW(Broadcast, dgr_k_collective),
    ROW(ReplicaIndex, dgr_k_replica_index),
    ROW(ZerosLike, dgr_k_zeros_like),
    ROW(OnesLike, dgr_k_ones_like),
    ROW(SumTo, dgr_k_sum_to),
    ROW(BroadcastLike, dgr_k_broadcast_like),
    ROW(ReshapeLike, dgr_k_reshape),
    ROW(ReluGrad, dgr_k_relu_grad),
    ROW(SigmoidGrad, dgr_k_sigmoid_grad),
    ROW(TanhGrad, dgr_k_tanh_grad),
    ROW(SoftmaxGrad, dgr_k_softmax_grad),
    ROW(MaxGrad, dgr_k_max_grad),
    ROW(ApplyMomentum, dgr_k_apply_momentum),
    ROW(ApplyAdam, dgr_k_apply_adam),
    ROW(BatchNorm, dgr_k_batchnorm),
    ROW(BatchNormGrad, dgr_k_batchnorm_grad),
    /* TF graph ops: convolution, pooling, batch norm (issue 10) */
    ROW(Conv2D, dgr_k_conv2d),
    ROW(Conv2DBackpropInput, dgr_k_conv2d_bp_input),
    ROW(Conv2DBackpropFilter, dgr_k_conv2d_bp_filter),
    ROW(DepthwiseConv2dNative, dgr_k_conv2d),
    ROW(DepthwiseConv2dNativeBackpropInput, dgr_k_conv2d_bp_input),
    ROW(DepthwiseConv2dNativeBackpropFilter, dgr_k_conv2d_bp_filter),
    ROW(MaxPool, dgr_k_pool),
    ROW(MaxPoolGrad, dgr_k_max_pool_grad),
    ROW(AvgPool, dgr_k_pool),
    ROW(AvgPoolGrad, dgr_k_avg_pool_grad),
    ROW(FusedBatchNormV3, dgr_k_fused_bn),
    ROW(FusedBatchNormGradV3, dgr_k_fused_bn_grad),
    ROW(AssignMovingAvg, dgr_k_assign_moving_avg),
    /* control flow (issue 11): rows without a kernel, the executor with
     * frames runs them (runtime/exec/exec_frames.c); TensorArrays and
     * stacks are CPU-resident (only this backend has their rows) */
    ROW(Enter, NULL),
    ROW(Exit, NULL),
    ROW(Switch, NULL),
    ROW(Merge, NULL),
    ROW(NextIteration, NULL),
    ROW(LoopCond, NULL),
    ROW(ControlTrigger, NULL),
    ROW(TensorArrayV3, NULL),
    ROW(TensorArrayReadV3, NULL),
    ROW(TensorArrayWriteV3, NULL),
    ROW(TensorArrayScatterV3, NULL),
    ROW(TensorArrayGatherV3, NULL),
    ROW(TensorArraySizeV3, NULL),
    ROW(TensorArrayCloseV3, NULL),
    ROW(TensorArrayGradV3, NULL),
    ROW(StackV2, NULL),
    ROW(StackPushV2, NULL),
    ROW(StackPopV2, NULL),
    ROW(StackCloseV2, NULL),
    /* TF graph ops: shapes, indexing, comparisons (issue 10) */
    ROW(Shape, dgr_k_shape),
    ROW(Size, dgr_k_size),
    ROW(Rank, dgr_k_rank),
    ROW(ExpandDims, dgr_k_view),
    ROW(Squeeze, dgr_k_view),
    ROW(Tile, dgr_k_tile),
    ROW(Prod, dgr_k_prod),
    ROW(FloorMod, dgr_k_floor_mod),
    ROW(FloorDiv, dgr_k_floor_div),
    ROW(GatherV2, dgr_k_gather),
    ROW(BiasAddGrad, dgr_k_bias_add_grad),
    ROW(L2Loss, dgr_k_l2loss),
    ROW(ConcatV2, dgr_k_concat),
    ROW(Rsqrt, dgr_k_rsqrt),
    ROW(Reciprocal, dgr_k_reciprocal),
    ROW(Relu6, dgr_k_relu6),
    ROW(Relu6Grad, dgr_k_relu6_grad),
    ROW(RsqrtGrad, dgr_k_rsqrt_grad),
    ROW(ReciprocalGrad, dgr_k_reciprocal_grad),
    ROW(Less, dgr_k_less),
    ROW(LessEqual, dgr_k_less_equal),
    ROW(Greater, dgr_k_greater),
    ROW(GreaterEqual, dgr_k_greater_equal),
    ROW(NotEqual, dgr_k_not_equal),
    ROW(StridedSlice, dgr_k_slice_any),
    ROW(Slice, dgr_k_slice_any),
    ROW(Pack, dgr_k_concat),
    ROW(Fill, dgr_k_fill),
    ROW(ShapeN, dgr_k_shape_n),
    ROW(Unpack, dgr_k_split_any),
    ROW(Split, dgr_k_split_any),
    ROW(SplitV, dgr_k_split_any),
    ROW(Range, dgr_k_range),
    ROW(DynamicStitch, dgr_k_dynamic_stitch_any), /* kernels_cpu_zoo.c */
    ROW(BroadcastTo, dgr_k_broadcast_to),
    ROW(BroadcastGradientArgs, dgr_k_bcast_grad_args),
    ROW(ConcatOffset, dgr_k_concat_offset),
    ROW(Pad, dgr_k_pad),
    ROW(Select, dgr_k_select),
    ROW(SelectV2, dgr_k_select),
    ROW(LogicalAnd, dgr_k_logical_and),
    ROW(LogicalOr, dgr_k_logical_or),
    ROW(LogicalNot, dgr_k_logical_not),
    ROW(LogSoftmax, dgr_k_log_softmax),
    /* op breadth (issue 22): kernels_cpu_zoo.c */
    ROW(SquaredDifference, dgr_k_squared_difference),
    ROW(Erf, dgr_k_erf),
    ROW(Erfc, dgr_k_erfc),
    ROW(LeakyRelu, dgr_k_leaky_relu),
    ROW(LeakyReluGrad, dgr_k_leaky_relu_grad),
    ROW(Elu, dgr_k_elu),
    ROW(EluGrad, dgr_k_elu_grad),
    ROW(Selu, dgr_k_selu),
    ROW(SeluGrad, dgr_k_selu_grad),
    ROW(Softplus, dgr_k_softplus),
    ROW(SoftplusGrad, dgr_k_softplus_grad),
    ROW(Softsign, dgr_k_softsign),
    ROW(SoftsignGrad, dgr_k_softsign_grad),
    ROW(ReverseV2, dgr_k_reverse),
    ROW(IdentityN, dgr_k_identity_n),
    ROW(Einsum, dgr_k_einsum),
    ROW(ResizeBilinear, dgr_k_resize_bilinear),
    ROW(ResizeBilinearGrad, dgr_k_resize_bilinear_grad),
    ROW(ResizeNearestNeighbor, dgr_k_resize_nearest),
    ROW(ResizeNearestNeighborGrad, dgr_k_resize_nearest_grad),
    ROW(Unique, dgr_k_unique),
    ROW(UnsortedSegmentSum, dgr_k_unsorted_segment_sum),
    ROW(ScatterAdd, dgr_k_scatter_add),
    ROW(ScatterSub, dgr_k_scatter_sub),
    ROW(DynamicPartition, dgr_k_dynamic_partition),
    ROW(Sign, dgr_k_sign),
    ROW(BatchMatMulV2, dgr_k_einsum),
    ROW(DivNoNan, dgr_k_div_no_nan),
    ROW(SpaceToBatchND, dgr_k_space_to_batch),
    ROW(BatchToSpaceND, dgr_k_batch_to_space),
    ROW(Conv3D, dgr_k_conv3d),
    ROW(IsVariableInitialized, dgr_k_is_initialized),
    ROW(MaxPool3D, dgr_k_max_pool3d),
    ROW(SqrtGrad, dgr_k_sqrt_grad),
    ROW(Floor, dgr_k_floor),
    ROW(Ceil, dgr_k_ceil),
    ROW(Round, dgr_k_round),
    ROW(Rint, dgr_k_rint),
    ROW(Log1p, dgr_k_log1p),
    ROW(Expm1, dgr_k_expm1),
    ROW(Tan, dgr_k_tan),
    ROW(Atan, dgr_k_atan),
    ROW(Asin, dgr_k_asin),
    ROW(Acos, dgr_k_acos),
    ROW(Sinh, dgr_k_sinh),
    ROW(Cosh, dgr_k_cosh),
    ROW(Atan2, dgr_k_atan2),
    ROW(IsNan, dgr_k_is_nan),
    ROW(IsInf, dgr_k_is_inf),
    ROW(IsFinite, dgr_k_is_finite),
    ROW(Min, dgr_k_min),
    ROW(ArgMin, dgr_k_argmin),
    ROW(Any, dgr_k_any),
    ROW(All, dgr_k_all),
    ROW(Cumsum, dgr_k_cumsum),
    ROW(OneHot, dgr_k_one_hot),
    ROW(DepthToSpace, dgr_k_depth_to_space),
    ROW(SpaceToDepth, dgr_k_space_to_depth),
    ROW(MirrorPad, dgr_k_mirror_pad),
    ROW(MirrorPadGrad, dgr_k_mirror_pad_grad),
    ROW(GatherNd, dgr_k_gather_nd),
    ROW(TopKV2, dgr_k_topk),
    ROW(Where, dgr_k_where),
    ROW(LRN, dgr_k_lrn),
    ROW(LRNGrad, dgr_k_lrn_grad),
    ROW(AvgPool3D, dgr_k_avg_pool3d),
    ROW(AvgPool3DGrad, dgr_k_avg_pool3d_grad),
    ROW(ApplyAdagrad, dgr_k_apply_opt),
    ROW(ApplyRMSProp, dgr_k_apply_opt),
    ROW(ApplyCenteredRMSProp, dgr_k_apply_opt),
    ROW(ApplyAdadelta, dgr_k_apply_opt),
    ROW(ApplyAdaMax, dgr_k_apply_opt),
    ROW(ApplyProximalGradientDescent, dgr_k_apply_opt),
    ROW(ApplyProximalAdagrad, dgr_k_apply_opt),
    ROW(ApplyFtrl, dgr_k_apply_opt),
    ROW(ApplyFtrlV2, dgr_k_apply_opt),
    ROW(ApplyAdagradDA, dgr_k_apply_opt),
    ROW(SparseApplyMomentum, dgr_k_apply_opt),
    ROW(SparseApplyAdagrad, dgr_k_apply_opt),
    ROW(SparseApplyAdagradDA, dgr_k_apply_opt),
    ROW(SparseApplyAdadelta, dgr_k_apply_opt),
    ROW(SparseApplyRMSProp, dgr_k_apply_opt),
    ROW(SparseApplyCenteredRMSProp, dgr_k_apply_opt),
    ROW(SparseApplyFtrl, dgr_k_apply_opt),
    ROW(SparseApplyFtrlV2, dgr_k_apply_opt),
    ROW(SparseApplyProximalGradientDescent, dgr_k_apply_opt),
    ROW(SparseApplyProximalAdagrad, dgr_k_apply_opt),
    ROW(ScatterUpdate, dgr_k_scatter_update),
    ROW(ScatterNd, dgr_k_scatter_nd),
    /* fusion (issue 16) */
    ROW(_FusedMatMul, dgr_k_fused_matmul),
    ROW(_FusedConv2D, dgr_k_fused_conv),
    ROW(_FusedDepthwiseConv2dNative, dgr_k_fused_conv),
    ROW(_FusedMaxPoolGrad, dgr_k_fused_max_pool_grad),
    ROW(ScalarSummary, dgr_k_summary),
    ROW(HistogramSummary, dgr_k_summary),
    ROW(ImageSummary, dgr_k_summary),
    ROW(AudioSummary, dgr_k_summary),
    ROW(TensorSummary, dgr_k_summary),
    ROW(MergeSummary, dgr_k_summary),
    /* issue 21: gradient blockers and random ops */
    ROW(StopGradient, dgr_k_identity),
    ROW(PreventGradient, dgr_k_identity),
    /* no kernel: the executor gives the feed or the input itself */
    ROW(PlaceholderWithDefault, NULL),
    ROW(TruncatedNormal, dgr_k_random),
    ROW(RandomUniformInt, dgr_k_random_uniform_int),
    ROW(Multinomial, dgr_k_multinomial),
    ROW(InvertPermutation, dgr_k_invert_permutation),
    ROW(Conv3DBackpropInputV2, dgr_k_conv3d_bp_input),
    ROW(Conv3DBackpropFilterV2, dgr_k_conv3d_bp_filter),
};

static dg_status cpu_discover(const dg_options *o, dg_device_list *l,
                              dg_error *err)
{
    (void)o;
    dg_device_info d;
    dgc_device_cpu_info(&d, NULL); /* the registry sets the kernel set */
    if (dgc_devices_append(l, &d))
        return dg_err_nomem(err, "device list");
    return DG_OK;
}

char dgr_cpu_keeps;

static dg_status cpu_open(dgr_device *d, const dg_options *o, dg_error *err)
{
    (void)err;
    d->impl = &dgr_cpu_keeps;
    d->be = &dgr_backend_cpu;
    /* BLAS calls are single-threaded blocks on our intra-op pool (one
     * thread budget); the libraries' own threads would spin against it.
     * oneDNN's one-time set-up pays only over many steps. */
    dgr_cpu_gemm_init(o->train_mode || o->repeat > 1);
    return DG_OK;
}

static void cpu_close(dgr_device *d)
{
    /* values kept for the session's later runs (issue 23) */
    dgr_dnnl_close(d);
    dgr_cpu_const_close(d);
}

static dg_status cpu_sync(dgr_device *d, dg_error *err)
{
    (void)d;
    (void)err;
    return DG_OK;
}

const dgr_backend dgr_backend_cpu = {
    .name = "cpu",
    .type = DG_DEV_CPU,
    .host_memory = 1,
    .kernels = cpu_kernels,
    .discover = cpu_discover,
    .open = cpu_open,
    .close = cpu_close,
    .buffer_get = dgr_cpu_buffer_get,
    .buffer_put = dgr_cpu_buffer_put,
    .read = dgr_cpu_read,
    .write = dgr_cpu_write,
    .sync = cpu_sync,
    .streams = NULL,
};
