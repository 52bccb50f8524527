#!/usr/bin/env python3
"""record.py -- record TensorFlow's values for dgrun's op-conformance
harness (tests/cli/e2e_ops.py; issue 22).  Needs TensorFlow (2.21, graph
mode); the suite never does: it reads what this writes.

For every case of CASES (an op, its dtype, inputs, attrs) it writes to OUT
(default tests/data/ops/):

  <case>.pb       a binary GraphDef: the inputs as Consts (Variables for
                  the Scatter ops), the op as node `y` (outputs y, y:1...),
                  and TF's own gradient ops for d(sum(y * dy))/d(input i)
                  as `grad_i` (tf.gradients with grad_ys = the Const `dy`)
  <case>.dg.json  the same forward graph in dgrun's JSON with a
                  `gradients` section (same grad_ys): dgrun's gradient rules
                  against TF's (only for differentiable cases)
  cases.json      per case: op, dtype, the fetches and TF's values (NaN and
                  infinities as strings), the gradient fetches and values

Usage: record.py [OUT]
       RECORD_ONLY=case1,case2 record.py   re-record only those cases
       (cases.json keeps the others'; their dy draws differ from a full run)
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.python.ops import data_flow_ops  # noqa: E402

tf1 = tf.compat.v1
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "ops"))
RS = np.random.RandomState(22)


def r(*shape, dtype=np.float32, lo=-2.0, hi=2.0):
    return RS.uniform(lo, hi, size=shape).astype(dtype)


def ri(*shape, lo=0, hi=5, dtype=np.int32):
    return RS.randint(lo, hi, size=shape).astype(dtype)


SPECIAL = np.array([0.0, -0.0, 1e-6, -30.0, 30.0, np.nan, np.inf, -np.inf],
                   np.float32)
CASES = []


def case(name, op, fn, inputs, attrs=None, grad=True, dg_op=None, var=False,
         n_out=1, extra=None, also=(), y_out=0):
    """fn(*input tensors) -> output tensor(s); attrs: the op's attrs for
    dgrun's JSON (TF names); grad: record gradients of the float inputs;
    var: input 0 is a Variable (Scatter ops; a number n: inputs 0..n-1, the
    optimizers' slots); extra: inputs fn makes itself
    (axis, size, num_segments), given to dgrun's JSON as Consts; also:
    the other op types the case's graph exercises (cases.json names their
    nodes: the harness counts them covered too); y_out: the op's output
    that fn returns (dgrun's JSON differentiates that one)."""
    assert name not in {c["name"] for c in CASES}, name
    CASES.append(dict(name=name, op=op, fn=fn, inputs=inputs,
                      attrs=attrs or {}, grad=grad, dg_op=dg_op or op,
                      var=var, n_out=n_out, extra=extra or [],
                      also=list(also), y_out=y_out))


# ---- the op-breadth ops (issue 22) ----------------------------------------
for dt, sfx in ((np.float32, "f32"), (np.float64, "f64")):
    case("SquaredDifference_bcast_" + sfx, "SquaredDifference",
         tf.math.squared_difference, [r(2, 3, dtype=dt), r(3, dtype=dt)])
    case("LeakyRelu_" + sfx, "LeakyRelu",
         lambda x: tf.nn.leaky_relu(x, alpha=0.1), [r(3, 4, dtype=dt)],
         {"alpha": 0.1})
case("SquaredDifference_i32", "SquaredDifference",
     tf.math.squared_difference, [ri(2, 3, lo=-5), ri(2, 3, lo=-5)],
     grad=False)
case("SquaredDifference_scalar", "SquaredDifference",
     tf.math.squared_difference, [r(), r(4)])
case("Erf_f32", "Erf", tf.math.erf, [r(12, lo=-3, hi=3)])
case("Erf_special", "Erf", tf.math.erf, [SPECIAL], grad=False)
case("Erfc_f32", "Erfc", tf.math.erfc, [r(12, lo=-3, hi=3)])
case("LeakyRelu_default", "LeakyRelu", tf.nn.leaky_relu, [r(2, 5)])
case("Elu_f32", "Elu", tf.nn.elu, [r(10)])
case("Selu_f32", "Selu", tf.nn.selu, [r(10)])
case("Softplus_f32", "Softplus", tf.nn.softplus,
     [np.concatenate([r(8), np.array([-30, 30, 15, -15], np.float32)])])
case("Softsign_f32", "Softsign", tf.nn.softsign, [r(10)])
case("Softplus_special", "Softplus", tf.nn.softplus, [SPECIAL], grad=False)
case("ReverseV2_axis1", "ReverseV2", lambda x: tf.reverse(x, [1]),
     [r(2, 3, 4)], extra=[np.array([1], np.int32)])
case("ReverseV2_axes02", "ReverseV2", lambda x: tf.reverse(x, [0, -1]),
     [r(2, 3, 4)], extra=[np.array([0, -1], np.int32)])
case("ReverseV2_i32", "ReverseV2", lambda x: tf.reverse(x, [0]),
     [ri(4, 2)], grad=False)
case("IdentityN", "IdentityN", lambda a, b: tf.identity_n([a, b]),
     [r(2, 3), r(4)], n_out=2)
for eq, shapes in (("abc,cde->abde", ((2, 3, 4), (4, 2, 5))),
                   ("aecd,abcd->acbe", ((2, 3, 2, 4), (2, 5, 2, 4))),
                   ("acbe,aecd->abcd", ((2, 2, 5, 3), (2, 3, 2, 4))),
                   ("abcd,cde->abe", ((2, 3, 2, 4), (2, 4, 5))),
                   ("ij,jk->ik", ((3, 4), (4, 2))),
                   ("...ij,...jk->...ik", ((2, 3, 4), (1, 4, 2))),
                   ("ij->ji", ((3, 4),)),
                   ("bij->bj", ((2, 3, 4),))):
    nm = "Einsum_" + eq.replace(",", "_").replace("->", "_to_").replace(
        "...", "E")
    # TF's gradient of a broadcasting ellipsis sums over run-time axes
    # (a Sum whose axes are no Const): forward only
    case(nm, "Einsum", (lambda e: lambda *xs: tf.einsum(e, *xs))(eq),
         [r(*s) for s in shapes], {"equation": eq}, grad="..." not in eq)
for ac, hp, nm in ((False, False, "default"), (True, False, "align"),
                   (False, True, "half")):
    for size, dirn in (((5, 7), "up"), ((2, 3), "down")):
        case("ResizeBilinear_%s_%s" % (nm, dirn), "ResizeBilinear",
             (lambda s, a, h: lambda x: tf1.image.resize_bilinear(
                 x, s, align_corners=a, half_pixel_centers=h))(size, ac, hp),
             [r(2, 3, 4, 2)], {"align_corners": ac,
                               "half_pixel_centers": hp},
             extra=[np.array(size, np.int32)])
        case("ResizeNearestNeighbor_%s_%s" % (nm, dirn),
             "ResizeNearestNeighbor",
             (lambda s, a, h: lambda x: tf1.image.resize_nearest_neighbor(
                 x, s, align_corners=a, half_pixel_centers=h))(size, ac, hp),
             [r(2, 3, 4, 2)], {"align_corners": ac,
                               "half_pixel_centers": hp},
             extra=[np.array(size, np.int32)])
case("Unique_i32", "Unique", lambda x: tf.unique(x, out_idx=tf.int64),
     [np.array([4, 1, 4, 7, 1, 1, 0], np.int32)], {"out_idx": "int64"},
     grad=False, n_out=2)
case("Unique_f32", "Unique", tf.unique,
     [np.array([0.5, -1.0, 0.5, 2.0], np.float32)], grad=False, n_out=2)
case("UnsortedSegmentSum_f32", "UnsortedSegmentSum",
     lambda x, i: tf.math.unsorted_segment_sum(x, i, 4),
     [r(6, 3), np.array([0, 2, 0, 3, 2, 2], np.int32)],
     extra=[np.array(4, np.int32)])
case("UnsortedSegmentSum_i32", "UnsortedSegmentSum",
     lambda x, i: tf.math.unsorted_segment_sum(x, i, 3),
     [ri(5, 2, lo=-9, hi=9), np.array([2, 0, 2, -1, 1], np.int32)],
     grad=False)
case("ScatterAdd_f32", "ScatterAdd",
     lambda v, i, u: tf1.scatter_add(v, i, u),
     [r(5, 3), np.array([1, 3, 1], np.int32), r(3, 3)], var=True,
     grad=False)
case("ScatterSub_f32", "ScatterSub",
     lambda v, i, u: tf1.scatter_sub(v, i, u),
     [r(4, 2), np.array([0, 0, 2], np.int32), r(3, 2)], var=True,
     grad=False)
for dt, sfx in ((np.float32, "f32"), (np.int32, "i32")):
    case("ScatterUpdate_" + sfx, "ScatterUpdate",
         lambda v, i, u: tf1.scatter_update(v, i, u),
         [r(4, 2, dtype=dt) if dt == np.float32 else ri(4, 2, hi=9),
          np.array([3, 0, 3], np.int32),
          r(3, 2, dtype=dt) if dt == np.float32 else ri(3, 2, hi=9)],
         var=True, grad=False)
case("DynamicPartition_f32", "DynamicPartition",
     lambda x, p: tf.dynamic_partition(x, p, 3),
     [r(6, 2), np.array([2, 0, 2, 1, 0, 2], np.int32)],
     {"num_partitions": 3}, n_out=3, grad=False)
case("DynamicStitch_f32", "DynamicStitch",
     lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
     [np.array([0, 2], np.int32), np.array([1, 3, 4], np.int32), r(2, 3),
      r(3, 3)])
case("ParallelDynamicStitch_f32", "DynamicStitch",
     lambda i0, i1, d0, d1: data_flow_ops.parallel_dynamic_stitch(
         [i0, i1], [d0, d1]),
     [np.array([3, 1], np.int32), np.array([0, 2], np.int32), r(2),
      r(2)], dg_op="ParallelDynamicStitch")

# (TF's gradient of a broadcasting batch matmul sums over axes computed at
# run time (BroadcastGradientArgs of StridedSlices of Shapes), which dgrun's
# loader wants as Consts: forward only)
case("BatchMatMulV2_bcast", "BatchMatMulV2", tf.matmul,
     [r(2, 1, 3, 4), r(3, 4, 2)], grad=False)
case("BatchMatMulV2_f32", "BatchMatMulV2", tf.matmul,
     [r(2, 3, 4), r(2, 4, 2)])
case("BatchMatMulV2_adj", "BatchMatMulV2",
     lambda a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True),
     [r(2, 4, 3), r(2, 5, 4)], {"adj_x": True, "adj_y": True})
case("DivNoNan_f32", "DivNoNan", tf.math.divide_no_nan,
     [r(2, 3), np.array([1.5, 0.0, -2.0], np.float32)])
case("SpaceToBatchND_f32", "SpaceToBatchND",
     lambda x: tf.space_to_batch_nd(x, [2, 2], [[1, 1], [0, 1]]),
     [r(2, 4, 3, 2)], extra=[np.array([2, 2], np.int32),
                             np.array([[1, 1], [0, 1]], np.int32)])
case("BatchToSpaceND_f32", "BatchToSpaceND",
     lambda x: tf.batch_to_space(x, [2, 2], [[1, 0], [0, 1]]),
     [r(8, 2, 3, 2)], extra=[np.array([2, 2], np.int32),
                             np.array([[1, 0], [0, 1]], np.int32)])
case("Conv3D_same", "Conv3D",
     lambda x, w: tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME"),
     [r(1, 3, 4, 4, 2), r(2, 3, 2, 2, 3)],
     {"strides": [1, 1, 2, 1, 1], "padding": "SAME"})
case("Conv3D_valid", "Conv3D",
     lambda x, w: tf.nn.conv3d(x, w, [1, 1, 1, 1, 1], "VALID"),
     [r(2, 3, 4, 3, 2), r(2, 2, 2, 2, 2)],
     {"strides": [1, 1, 1, 1, 1], "padding": "VALID"})
case("MaxPool3D_same", "MaxPool3D",
     lambda x: tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
     [r(1, 3, 5, 4, 2)], grad=False)
case("Sign_f32", "Sign", tf.sign, [SPECIAL], grad=False)

# ---- edge shapes: 0-d, empty tensors; integer dtypes ------------------------
case("Erf_scalar", "Erf", tf.math.erf, [r()])
case("SquaredDifference_0d", "SquaredDifference",
     tf.math.squared_difference, [r(), r()])
case("LeakyRelu_empty", "LeakyRelu", tf.nn.leaky_relu,
     [np.zeros((0, 3), np.float32)], grad=False)
case("Einsum_empty", "Einsum", lambda a, b: tf.einsum("ij,jk->ik", a, b),
     [np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)],
     {"equation": "ij,jk->ik"}, grad=False)
case("UnsortedSegmentSum_empty", "UnsortedSegmentSum",
     lambda x, i: tf.math.unsorted_segment_sum(x, i, 3),
     [np.zeros((0, 2), np.float32), np.zeros((0,), np.int32)], grad=False)
case("ReverseV2_empty", "ReverseV2", lambda x: tf.reverse(x, [1]),
     [np.zeros((2, 0), np.float32)], grad=False)
case("Add_empty", "AddV2", tf.add,
     [np.zeros((0, 3), np.float32), r(3)], grad=False)
case("Sum_empty_axis", "Sum", lambda x: tf.reduce_sum(x, axis=0),
     [np.zeros((0, 3), np.float32)], {"axis": [0]}, grad=False)
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    for nm, fn in (("Add", tf.add), ("Sub", tf.subtract),
                   ("Mul", tf.multiply), ("Maximum", tf.maximum),
                   ("Minimum", tf.minimum)):
        case("%s_bcast_%s" % (nm, sfx), nm if nm != "Add" else "AddV2", fn,
             [ri(2, 3, lo=-9, hi=9, dtype=dt), ri(3, lo=-9, hi=9, dtype=dt)],
             grad=False)
    case("Sum_axis1_" + sfx, "Sum", lambda x: tf.reduce_sum(x, axis=1),
         [ri(3, 4, lo=-9, hi=9, dtype=dt)], {"axis": [1]}, grad=False)
    case("Abs_" + sfx, "Abs", tf.abs, [ri(5, lo=-9, hi=9, dtype=dt)],
         grad=False)
    case("Sign_" + sfx, "Sign", tf.sign, [ri(5, lo=-2, hi=3, dtype=dt)],
         grad=False)
for nm, fn in (("Add", tf.add), ("Mul", tf.multiply), ("Maximum",
                                                        tf.maximum)):
    case(nm + "_bcast_f64", nm if nm != "Add" else "AddV2", fn,
         [r(2, 3, dtype=np.float64), r(3, dtype=np.float64)])
case("ReverseV2_bool", "ReverseV2", lambda x: tf.reverse(x, [0]),
     [np.array([True, False, False]), ], grad=False)

# more than 64 indices: the output size is no longer an inference-time
# value (kernels_cpu_zoo.c sizes it)
_perm = np.random.RandomState(5).permutation(150).astype(np.int32)
case("DynamicStitch_large", "DynamicStitch",
     lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
     [_perm[:80], _perm[80:], r(80, 2), r(70, 2)])
case("DynamicPartition_large", "DynamicPartition",
     lambda x, p: tf.dynamic_partition(x, p, 2),
     [r(100, 2), (np.arange(100) % 3 == 0).astype(np.int32)],
     {"num_partitions": 2}, n_out=2, grad=False)

# ---- existing ops: elementwise and reductions -----------------------------
for nm, fn in (("Add", tf.add), ("Sub", tf.subtract), ("Mul", tf.multiply),
               ("Div", tf.math.truediv), ("Maximum", tf.maximum),
               ("Minimum", tf.minimum)):
    case(nm + "_bcast_f32", nm if nm != "Add" else "AddV2", fn,
         [r(2, 3), r(3) + 3.0 if nm == "Div" else r(3)])
case("Pow_f32", "Pow", tf.pow, [r(5, lo=0.5, hi=2), r(5)])
for nm, fn, lo in (("Sqrt", tf.sqrt, 0.1), ("Exp", tf.exp, -2),
                   ("Log", tf.math.log, 0.1), ("Tanh", tf.tanh, -2),
                   ("Sigmoid", tf.sigmoid, -2), ("Relu", tf.nn.relu, -2),
                   ("Relu6", tf.nn.relu6, -8), ("Rsqrt", tf.math.rsqrt, 0.1),
                   ("Square", tf.square, -2), ("Abs", tf.abs, -2),
                   ("Neg", tf.negative, -2), ("Sin", tf.sin, -2),
                   ("Cos", tf.cos, -2), ("Reciprocal", tf.math.reciprocal,
                                         0.5)):
    case(nm + "_f32", nm, fn, [r(3, 4, lo=lo, hi=8 if nm == "Relu6" else 2)])
for nm, fn in (("Sum", tf.reduce_sum), ("Mean", tf.reduce_mean),
               ("Max", tf.reduce_max), ("Prod", tf.reduce_prod)):
    case(nm + "_axis1", nm, (lambda f: lambda x: f(x, axis=1))(fn),
         [r(3, 4, 2)], {"axis": [1]}, grad=nm != "Prod")
    case(nm + "_all_keepdims", nm,
         (lambda f: lambda x: f(x, axis=[0, 1], keepdims=True))(fn),
         [r(3, 4)], {"axis": [0, 1], "keepdims": True}, grad=nm != "Prod")
case("Softmax_f32", "Softmax", tf.nn.softmax, [r(3, 5)])
case("LogSoftmax_f32", "LogSoftmax", tf.nn.log_softmax, [r(3, 5)])
case("MatMul_f32", "MatMul", tf.matmul, [r(3, 4), r(4, 2)])
case("MatMul_tb_f64", "MatMul", lambda a, b: tf.matmul(a, b,
                                                       transpose_b=True),
     [r(3, 4, dtype=np.float64), r(2, 4, dtype=np.float64)],
     {"transpose_b": True})


# ---- existing ops: shapes, indexing, comparisons, CNN ----------------------
case("Cast_f32_to_i32", "Cast", lambda x: tf.cast(x, tf.int32), [r(6) * 3],
     {"DstT": "int32"}, grad=False)
case("ConcatV2_axis1", "ConcatV2", lambda a, b: tf.concat([a, b], 1),
     [r(2, 3), r(2, 2)], {"axis": 1})
case("Pack_axis1", "Pack", lambda a, b: tf.stack([a, b], 1), [r(2, 3), r(2, 3)],
     {"axis": 1})
# (TF's gradient graphs of Transpose (InvertPermutation), Tile (a Sum over
# a computed range) and StridedSlice (StridedSliceGrad) need ops or
# compile-time values dgrun's loader does not have yet: forward only)
case("Transpose_perm", "Transpose", lambda x: tf.transpose(x, [2, 0, 1]),
     [r(2, 3, 4)], {"perm": [2, 0, 1]}, grad=False)
case("Reshape_f32", "Reshape", lambda x: tf.reshape(x, [3, -1]), [r(2, 3, 2)],
     extra=[np.array([3, -1], np.int32)])
case("Tile_f32", "Tile", lambda x: tf.tile(x, [2, 3]), [r(2, 2)],
     {"multiples": [2, 3]}, grad=False)
case("Pad_f32", "Pad", lambda x: tf.pad(x, [[1, 0], [2, 1]]), [r(2, 3)],
     extra=[np.array([[1, 0], [2, 1]], np.int32)])
case("StridedSlice_f32", "StridedSlice", lambda x: x[1:, ::2, -1],
     [r(3, 4, 2)], grad=False)
case("GatherV2_f32", "GatherV2",
     lambda x, i: tf.gather(x, i), [r(5, 3), np.array([4, 0, 2, 0], np.int32)])
case("SelectV2_f32", "SelectV2",
     lambda c, a, b: tf.where(c, a, b),
     [np.array([True, False, True]), r(2, 3), r(2, 3)])
case("ArgMax_f32", "ArgMax", lambda x: tf.argmax(x, axis=1), [r(3, 5)],
     grad=False)
for nm, fn in (("Equal", tf.equal), ("Less", tf.less),
               ("GreaterEqual", tf.greater_equal)):
    case(nm + "_f32", nm, fn, [np.round(r(2, 3)), np.round(r(3))], grad=False)
case("BiasAdd_f32", "BiasAdd", tf.nn.bias_add, [r(2, 3, 4), r(4)])
case("AddN_f32", "AddN", lambda a, b, c: tf.add_n([a, b, c]),
     [r(2, 3), r(2, 3), r(2, 3)])
case("Conv2D_same_s2", "Conv2D",
     lambda x, w: tf.nn.conv2d(x, w, 2, "SAME"), [r(2, 5, 6, 3), r(3, 3, 3, 4)],
     {"strides": [1, 2, 2, 1], "padding": "SAME"})
case("DepthwiseConv2dNative_valid", "DepthwiseConv2dNative",
     lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID"),
     [r(1, 5, 5, 2), r(3, 3, 2, 2)], {"strides": [1, 1, 1, 1],
                                      "padding": "VALID"})
case("MaxPool_same", "MaxPool",
     lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"), [r(2, 5, 5, 2)],
     {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1], "padding": "SAME"})
case("AvgPool_valid", "AvgPool",
     lambda x: tf.nn.avg_pool2d(x, 2, 2, "VALID"), [r(1, 4, 6, 3)],
     {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "VALID"})
case("SoftmaxXent_f32", "SoftmaxCrossEntropyWithLogits",
     lambda l, y: tf.nn.softmax_cross_entropy_with_logits(labels=y,
                                                          logits=l),
     [r(3, 4), tf.nn.softmax(r(3, 4)).numpy()])
case("SparseSoftmaxXent_f32", "SparseSoftmaxCrossEntropyWithLogits",
     lambda l, y: tf.nn.sparse_softmax_cross_entropy_with_logits(
         labels=y, logits=l),
     [r(3, 4), np.array([0, 3, 1], np.int32)])
case("L2Loss_f32", "L2Loss", tf.nn.l2_loss, [r(3, 4)])



# the gradients' dy are drawn when recording, from here on: cases added
# below leave the recorded values of the cases above unchanged
DY_STATE = RS.get_state()


def more(name, *args, **kw):
    """case(), unless a case above has the name already (it covers that
    op and dtype)."""
    if name not in {c["name"] for c in CASES}:
        case(name, *args, **kw)

# ---- every dtype of the elementwise ops; the ops no case had yet ----------
# (issue 22 item 2: cases for as many ops of `dgrun ops` as TF can make)
raw = tf.raw_ops
F64 = np.float64
for nm, fn, lo, ints in (
        ("Sqrt", tf.sqrt, 0.1, 0), ("Exp", tf.exp, -2, 0),
        ("Log", tf.math.log, 0.1, 0), ("Tanh", tf.tanh, -2, 0),
        ("Sigmoid", tf.sigmoid, -2, 0), ("Relu", tf.nn.relu, -2, 1),
        ("Relu6", tf.nn.relu6, -8, 1), ("Rsqrt", tf.math.rsqrt, 0.1, 0),
        ("Square", tf.square, -2, 1), ("Abs", tf.abs, -2, 0),
        ("Neg", tf.negative, -2, 1), ("Sin", tf.sin, -2, 0),
        ("Cos", tf.cos, -2, 0), ("Reciprocal", tf.math.reciprocal, 0.5, 0),
        ("Erf", tf.math.erf, -2, 0), ("Elu", tf.nn.elu, -2, 0),
        ("Selu", tf.nn.selu, -2, 0), ("Softplus", tf.nn.softplus, -2, 0),
        ("Softsign", tf.nn.softsign, -2, 0),
        ("LogSoftmax", tf.nn.log_softmax, -2, 0),
        ("Softmax", tf.nn.softmax, -2, 0), ("Sign", tf.sign, -2, 0)):
    more(nm + "_f64", nm, fn, [r(3, 4, lo=lo, hi=8 if nm == "Relu6" else 2,
                                 dtype=F64)], grad=nm != "Sign")
    if ints:
        for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
            more("%s_%s" % (nm, sfx), nm, fn,
                 [ri(3, 4, lo=-9, hi=9, dtype=dt)], grad=False)
for nm, fn in (("Sub", tf.subtract), ("Div", tf.math.truediv),
               ("Minimum", tf.minimum), ("Pow", tf.pow),
               ("SquaredDifference", tf.math.squared_difference),
               ("DivNoNan", tf.math.divide_no_nan)):
    b = r(3, dtype=F64) + (3.0 if nm in ("Div", "DivNoNan") else 0.0)
    a = r(2, 3, lo=0.5, hi=2, dtype=F64) if nm == "Pow" else r(2, 3,
                                                              dtype=F64)
    more(nm + "_bcast_f64", nm, fn, [a, b])
more("Div_i32", "Div", tf.math.truediv if False else
     (lambda a, b: raw.Div(x=a, y=b)),
     [np.array([7, -7, 6, -6, 0], np.int32),
      np.array([2, 2, -4, 4, 3], np.int32)], grad=False)
more("Pow_i32", "Pow", tf.pow, [ri(5, lo=-3, hi=4), ri(5, lo=0, hi=4)],
     grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    if dt in (np.int32, np.int64):
        a = np.array([7, -7, 6, -6, 0, 5], dt)
        b = np.array([2, 2, -4, 4, 3, -3], dt)
    else:
        a = np.array([7.5, -7.5, 6, -6, 0, 5.25], dt)
        b = np.array([2, 2, -4, 4, 3, -1.5], dt)
    more("FloorDiv_" + sfx, "FloorDiv", tf.math.floordiv, [a, b], grad=False)
    more("FloorMod_" + sfx, "FloorMod", tf.math.floormod, [a, b],
         grad=False)
    for nm, fn in (("Greater", tf.greater), ("LessEqual", tf.less_equal),
                   ("NotEqual", tf.not_equal), ("Less", tf.less),
                   ("Equal", tf.equal), ("GreaterEqual", tf.greater_equal)):
        more("%s_%s" % (nm, sfx), nm, fn, [a, b[::-1].copy()], grad=False)
    more("Max_axis0_" + sfx, "Max", lambda x: tf.reduce_max(x, axis=0),
         [a.reshape(2, 3)], {"axis": [0]}, grad=False)
    more("Mean_axis1_" + sfx, "Mean", lambda x: tf.reduce_mean(x, axis=1),
         [a.reshape(2, 3)], {"axis": [1]}, grad=False)
    more("Prod_axis1_" + sfx, "Prod", lambda x: tf.reduce_prod(x, axis=1),
         [a.reshape(3, 2)], {"axis": [1]}, grad=False)
    more("ArgMax_" + sfx, "ArgMax", lambda x: tf.argmax(x, axis=0),
         [a.reshape(2, 3)], grad=False)
    more("AddN_" + sfx, "AddN", lambda x, y: tf.add_n([x, y]), [a, b],
         grad=dt in (np.float32, F64))
    more("BiasAdd_" + sfx, "BiasAdd", tf.nn.bias_add,
         [a.reshape(2, 3), b[:3].copy()], grad=dt in (np.float32, F64))
    more("BiasAddGrad_" + sfx, "BiasAddGrad",
         lambda x: raw.BiasAddGrad(out_backprop=x), [a.reshape(3, 2)],
         grad=False)
    more("ReluGrad_" + sfx, "ReluGrad",
         lambda g, x: raw.ReluGrad(gradients=g, features=x), [b, a],
         grad=False)
    more("Relu6Grad_" + sfx, "Relu6Grad",
         lambda g, x: raw.Relu6Grad(gradients=g, features=x), [b, a],
         grad=False)
    # (raw ops: TF's Python folds these of a Const into a Const, which
    # left the op out of the graph)
    more("ZerosLike_" + sfx, "ZerosLike", lambda x: raw.ZerosLike(x=x), [a],
         grad=False)
    more("OnesLike_" + sfx, "OnesLike", lambda x: raw.OnesLike(x=x), [a],
         grad=False)
    more("Identity_" + sfx, "Identity", tf.identity, [a])
    more("StopGradient_" + sfx, "StopGradient", tf.stop_gradient, [a],
         grad=False)
    more("Shape_" + sfx, "Shape", lambda x: raw.Shape(input=x),
         [a.reshape(2, 3)], grad=False)
    more("Size_" + sfx, "Size", lambda x: raw.Size(input=x),
         [a.reshape(2, 3)], grad=False)
    more("Rank_" + sfx, "Rank", lambda x: raw.Rank(input=x),
         [a.reshape(2, 3)], grad=False)
    more("ExpandDims_" + sfx, "ExpandDims",
         lambda x: tf.expand_dims(x, 1), [a.reshape(2, 3)],
         extra=[np.array(1, np.int32)])
    more("Squeeze_" + sfx, "Squeeze", lambda x: tf.squeeze(x, [1]),
         [a.reshape(2, 1, 3)], {"axis": [1]})
    more("Slice_" + sfx, "Slice", lambda x: tf.slice(x, [0, 1], [2, 2]),
         [a.reshape(2, 3)], grad=False)
    more("Split_" + sfx, "Split", lambda x: tf.split(x, 3, axis=1),
         [a.reshape(2, 3)], {"num_split": 3}, n_out=3, grad=False)
    more("SplitV_" + sfx, "SplitV", lambda x: tf.split(x, [1, 2], axis=1),
         [a.reshape(2, 3)], n_out=2, grad=False)
    more("Unpack_" + sfx, "Unpack", lambda x: tf.unstack(x, axis=1),
         [a.reshape(2, 3)], {"num": 3, "axis": 1}, n_out=3, grad=False)
    more("Fill_" + sfx, "Fill", lambda v: tf.fill([2, 3], v),
         [np.asarray(a[0])], grad=False)
    more("BroadcastTo_" + sfx, "BroadcastTo",
         lambda x: tf.broadcast_to(x, [2, 2, 3]), [a.reshape(2, 3)[:1]],
         grad=False)
    more("Select_" + sfx, "Select",
         lambda cnd, x, y: tf1.where(cnd, x, y),
         [np.array([True, False, False, True, True, False]), a, b],
         grad=False)
    more("Tile_" + sfx, "Tile", lambda x: tf.tile(x, [2, 1]),
         [a.reshape(2, 3)], grad=False)
    more("Transpose_" + sfx, "Transpose", tf.transpose, [a.reshape(2, 3)],
         grad=False)
    more("ConcatV2_" + sfx, "ConcatV2", lambda x, y: tf.concat([x, y], 0),
         [a, b], {"axis": 0}, grad=dt in (np.float32, F64))
    more("Pack_" + sfx, "Pack", lambda x, y: tf.stack([x, y]), [a, b],
         grad=dt in (np.float32, F64))
    more("GatherV2_" + sfx, "GatherV2",
         lambda x, i: tf.gather(x, i, axis=1),
         [a.reshape(2, 3), np.array([2, 0, 2], np.int32)], grad=False)
    more("Cast_to_f32_" + sfx, "Cast",
         lambda x: raw.Cast(x=x, DstT=tf.float32), [a], grad=False)
    more("Cast_to_i64_" + sfx, "Cast",
         lambda x: raw.Cast(x=x, DstT=tf.int64), [a], grad=False)
    more("Cast_to_bool_" + sfx, "Cast", lambda x: tf.cast(x, tf.bool),
         [a], grad=False)
    more("Pad_" + sfx, "Pad", lambda x: tf.pad(x, [[0, 1], [1, 1]]),
         [a.reshape(2, 3)], grad=False)
    more("ReverseV2_" + sfx, "ReverseV2", lambda x: tf.reverse(x, [1]),
         [a.reshape(2, 3)], grad=False)
    more("SelectV2_bcast_" + sfx, "SelectV2",
         lambda cnd, x, y: tf.where(cnd, x, y),
         [np.array([[True], [False]]), a.reshape(2, 3), b[:3].copy()],
         grad=False)
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    more("Range_" + sfx, "Range", lambda a, l, d: tf.range(a, l, d),
         [np.array(1, dt), np.array(11, dt), np.array(3, dt)], grad=False)
    more("InvertPermutation_" + sfx, "InvertPermutation",
         tf.math.invert_permutation, [np.array([2, 0, 3, 1], dt)],
         grad=False)
for nm, fn in (("LogicalAnd", tf.logical_and), ("LogicalOr", tf.logical_or),
               ("NotEqual", tf.not_equal), ("Equal", tf.equal)):
    more(nm + "_bool", nm, fn, [np.array([True, True, False, False]),
                                np.array([True, False, True, False])],
         grad=False)
more("LogicalNot_bool", "LogicalNot", tf.logical_not,
     [np.array([True, False])], grad=False)
more("LogicalAnd_bcast", "LogicalAnd", tf.logical_and,
     [np.array([[True], [False]]), np.array([True, False, True])],
     grad=False)
# gradient ops, as TF's gradient graphs contain them
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    y, g = r(3, 4, lo=0.1, hi=0.9, dtype=dt), r(3, 4, dtype=dt)
    for nm in ("TanhGrad", "SigmoidGrad", "RsqrtGrad", "SqrtGrad",
               "ReciprocalGrad"):
        more("%s_%s" % (nm, sfx), nm,
             (lambda o: lambda a, b: getattr(raw, o)(y=a, dy=b))(nm), [y, g],
             grad=False)
    x = r(3, 4, dtype=dt)
    for nm, k in (("EluGrad", "outputs"), ("SeluGrad", "outputs"),
                  ("SoftplusGrad", "features"),
                  ("SoftsignGrad", "features")):
        more("%s_%s" % (nm, sfx), nm,
             (lambda o, kk: lambda a, b: getattr(raw, o)(
                 **{"gradients": a, kk: b}))(nm, k), [g, x], grad=False)
    more("LeakyReluGrad_" + sfx, "LeakyReluGrad",
         lambda a, b: raw.LeakyReluGrad(gradients=a, features=b, alpha=0.3),
         [g, x], {"alpha": 0.3}, grad=False)
    more("L2Loss_" + sfx, "L2Loss", tf.nn.l2_loss, [x])
    more("MatMul_ta_" + sfx, "MatMul",
         lambda a, b: tf.matmul(a, b, transpose_a=True),
         [r(4, 3, dtype=dt), r(4, 2, dtype=dt)], {"transpose_a": True})
    xi = r(2, 5, 6, 3, dtype=dt)
    w = r(3, 3, 3, 4, dtype=dt)
    dyc = r(2, 3, 3, 4, dtype=dt)
    more("Conv2D_valid_" + sfx, "Conv2D",
         lambda a, b: tf.nn.conv2d(a, b, 1, "VALID"), [xi, w],
         {"strides": [1, 1, 1, 1], "padding": "VALID"})
    more("Conv2DBackpropInput_" + sfx, "Conv2DBackpropInput",
         lambda b, d: tf.nn.conv2d_transpose(d, b, [2, 5, 6, 3], 2, "SAME"),
         [w, dyc], grad=False)
    more("Conv2DBackpropFilter_" + sfx, "Conv2DBackpropFilter",
         lambda a, d: raw.Conv2DBackpropFilter(
             input=a, filter_sizes=[3, 3, 3, 4], out_backprop=d,
             strides=[1, 2, 2, 1], padding="SAME"), [xi, dyc], grad=False)
    wd = r(3, 3, 3, 2, dtype=dt)
    dyd = r(2, 3, 3, 6, dtype=dt)
    more("DepthwiseConv2dNativeBackpropInput_" + sfx,
         "DepthwiseConv2dNativeBackpropInput",
         lambda b, d: raw.DepthwiseConv2dNativeBackpropInput(
             input_sizes=[2, 5, 6, 3], filter=b, out_backprop=d,
             strides=[1, 2, 2, 1], padding="SAME"), [wd, dyd], grad=False)
    more("DepthwiseConv2dNativeBackpropFilter_" + sfx,
         "DepthwiseConv2dNativeBackpropFilter",
         lambda a, d: raw.DepthwiseConv2dNativeBackpropFilter(
             input=a, filter_sizes=[3, 3, 3, 2], out_backprop=d,
             strides=[1, 2, 2, 1], padding="SAME"), [xi, dyd], grad=False)
    xp = r(1, 4, 4, 2, dtype=dt)
    more("MaxPool_valid_" + sfx, "MaxPool",
         lambda a: tf.nn.max_pool2d(a, 2, 2, "VALID"), [xp],
         {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
          "padding": "VALID"})
    more("AvgPool_same_" + sfx, "AvgPool",
         lambda a: tf.nn.avg_pool2d(a, 3, 2, "SAME"), [xp],
         {"ksize": [1, 3, 3, 1], "strides": [1, 2, 2, 1],
          "padding": "SAME"})
    more("MaxPoolGrad_" + sfx, "MaxPoolGrad",
         lambda a, o, d: raw.MaxPoolGrad(
             orig_input=a, orig_output=o, grad=d, ksize=[1, 2, 2, 1],
             strides=[1, 2, 2, 1], padding="VALID"),
         [xp, xp.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4)),
          r(1, 2, 2, 2, dtype=dt)], grad=False)
    more("AvgPoolGrad_" + sfx, "AvgPoolGrad",
         lambda d: raw.AvgPoolGrad(
             orig_input_shape=[1, 4, 4, 2], grad=d, ksize=[1, 3, 3, 1],
             strides=[1, 2, 2, 1], padding="SAME"),
         [r(1, 2, 2, 2, dtype=dt)], grad=False)
    more("ResizeBilinearGrad_" + sfx, "ResizeBilinearGrad",
         lambda d, im: raw.ResizeBilinearGrad(grads=d, original_image=im),
         [r(1, 5, 7, 2, dtype=np.float32), r(1, 3, 4, 2, dtype=dt)],
         grad=False)
    more("ResizeNearestNeighborGrad_" + sfx, "ResizeNearestNeighborGrad",
         lambda d: raw.ResizeNearestNeighborGrad(grads=d, size=[3, 4]),
         [r(1, 5, 7, 2, dtype=dt)], grad=False)
    sc, of = r(3, dtype=dt, lo=0.5), r(3, dtype=dt)
    mu, var = r(3, dtype=dt), r(3, dtype=dt, lo=0.5)
    xb = r(2, 3, 2, 3, dtype=dt)
    if dt == np.float32:
        more("FusedBatchNormV3_infer", "FusedBatchNormV3",
             lambda a, s_, o_, m_, v_: tf1.nn.fused_batch_norm(
                 a, s_, o_, m_, v_, epsilon=0.01, is_training=False)[0],
             [xb, sc, of, mu, var], {"epsilon": 0.01,
                                     "is_training": False})
        more("FusedBatchNormV3_train", "FusedBatchNormV3",
             lambda a, s_, o_: tf1.nn.fused_batch_norm(
                 a, s_, o_, epsilon=0.001, is_training=True)[0],
             [xb, sc, of], grad=False)
    # the optimizers' Apply ops on a Variable
    more("ApplyGradientDescent_" + sfx, "ApplyGradientDescent",
         lambda v, a, d: raw.ApplyGradientDescent(var=v, alpha=a, delta=d),
         [r(2, 3, dtype=dt), np.asarray(0.1, dt), r(2, 3, dtype=dt)],
         var=True, grad=False)
    more("Assign_" + sfx, "Assign", lambda v, x: tf1.assign(v, x),
         [r(2, 3, dtype=dt), r(2, 3, dtype=dt)], var=True, grad=False)
    more("AssignAdd_" + sfx, "AssignAdd", lambda v, x: tf1.assign_add(v, x),
         [r(2, 3, dtype=dt), r(2, 3, dtype=dt)], var=True, grad=False)
    more("AssignSub_" + sfx, "AssignSub", lambda v, x: tf1.assign_sub(v, x),
         [r(2, 3, dtype=dt), r(2, 3, dtype=dt)], var=True, grad=False)

# ---- step 3's elementwise math (Floor ... Cosh) ----------------------------
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.7, 0.7, 3.2, -0.0],
                  np.float32)
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for nm, fn in (("Floor", tf.floor), ("Ceil", tf.math.ceil),
                   ("Round", tf.round), ("Rint", tf.math.rint)):
        more("%s_%s" % (nm, sfx), nm, fn, [HALVES.astype(dt)])
    for nm, fn, lo, hi in (("Log1p", tf.math.log1p, -0.9, 3),
                           ("Expm1", tf.math.expm1, -3, 3),
                           ("Tan", tf.math.tan, -1.4, 1.4),
                           ("Atan", tf.math.atan, -4, 4),
                           ("Asin", tf.math.asin, -0.95, 0.95),
                           ("Acos", tf.math.acos, -0.95, 0.95),
                           ("Sinh", tf.math.sinh, -3, 3),
                           ("Cosh", tf.math.cosh, -3, 3)):
        more("%s_%s" % (nm, sfx), nm, fn, [r(3, 4, lo=lo, hi=hi, dtype=dt)])
for nm, fn in (("Floor", tf.floor), ("Log1p", tf.math.log1p),
               ("Expm1", tf.math.expm1), ("Asin", tf.math.asin)):
    more(nm + "_special", nm, fn, [SPECIAL], grad=False)
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    # (tf.round of an int is the int itself, no Round node; TF 2.21's raw
    # Round kernel gives zeros for int32/int64, dgrun x: not TF's oracle)
    more("Round_" + sfx, "Round", tf.round, [ri(5, lo=-9, hi=9, dtype=dt)],
         grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    more("Atan2_" + sfx, "Atan2", tf.math.atan2,
         [r(3, 4, dtype=dt), r(3, 4, dtype=dt)])
    more("Atan2_bcast_" + sfx, "Atan2", tf.math.atan2,
         [r(2, 3, dtype=dt), r(3, dtype=dt) + 2.5])
    for nm, fn in (("IsNan", tf.math.is_nan), ("IsInf", tf.math.is_inf),
                   ("IsFinite", tf.math.is_finite)):
        more("%s_%s" % (nm, sfx), nm, fn, [SPECIAL.astype(dt)], grad=False)
more("Atan2_signs", "Atan2", tf.math.atan2,
     [np.array([0.0, -0.0, 1.0, -1.0, 0.0, -0.0, 1.0, np.nan], np.float32),
      np.array([1.0, 1.0, 0.0, 0.0, -1.0, -1.0, -np.inf, 1.0], np.float32)],
     grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    x = r(3, 4, 2, dtype=dt) if fl else ri(3, 4, 2, lo=-9, hi=9, dtype=dt)
    more("Min_axis1_" + sfx, "Min", lambda a: tf.reduce_min(a, axis=1), [x],
         {"axis": [1]}, grad=fl)
    more("Min_all_keepdims_" + sfx, "Min",
         lambda a: tf.reduce_min(a, axis=[0, 2], keepdims=True), [x],
         {"axis": [0, 2], "keepdims": True}, grad=fl)
    more("ArgMin_" + sfx, "ArgMin", lambda a: tf.argmin(a, axis=1), [x],
         grad=False)
    more("ArgMin_i32out_" + sfx, "ArgMin",
         lambda a: tf.argmin(a, axis=0, output_type=tf.int32), [x],
         grad=False)
more("Min_ties", "Min", lambda a: tf.reduce_min(a, axis=1),
     [np.array([[1.0, -2.0, -2.0], [0.5, 0.5, 0.5]], np.float32)],
     {"axis": [1]})
more("Min_special", "Min", lambda a: tf.reduce_min(a, axis=0),
     [SPECIAL.reshape(4, 2)], grad=False)
_b = RS.uniform(size=(3, 4, 2)) > 0.5
for nm, fn in (("Any", tf.reduce_any), ("All", tf.reduce_all)):
    more(nm + "_axis1", nm, (lambda f: lambda a: f(a, axis=1))(fn), [_b],
         grad=False)
    more(nm + "_all", nm, fn, [_b], grad=False)
    more(nm + "_keepdims", nm,
         (lambda f: lambda a: f(a, axis=[0, 2], keepdims=True))(fn),
         [np.ones((2, 3, 2), bool)], grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    x = r(3, 4, dtype=dt) if fl else ri(3, 4, lo=-9, hi=9, dtype=dt)
    for ax, ex, rv in ((1, False, False), (0, True, False), (-1, False, True),
                       (0, True, True)):
        more("Cumsum_ax%d%s%s_%s" % (ax, "_excl" if ex else "",
                                     "_rev" if rv else "", sfx), "Cumsum",
             (lambda a_, e_, r_: lambda a: tf.cumsum(
                 a, axis=a_, exclusive=e_, reverse=r_))(ax, ex, rv), [x],
             {"axis": ax, "exclusive": ex, "reverse": rv}, grad=fl)
for it, isfx in ((np.int32, "i32"), (np.int64, "i64")):
    ids = np.array([[0, 2, -1], [3, 1, 5]], it)
    more("OneHot_" + isfx, "OneHot", lambda i: tf.one_hot(i, 4), [ids],
         grad=False)
    more("OneHot_axis0_" + isfx, "OneHot",
         lambda i: tf.one_hot(i, 3, on_value=2.5, off_value=-1.0, axis=0,
                              dtype=tf.float64), [ids], grad=False)
    more("OneHot_int_axis1_" + isfx, "OneHot",
         lambda i: tf.one_hot(i, 4, on_value=7, off_value=0, axis=1,
                              dtype=tf.int64), [ids], grad=False)
more("OneHot_vector", "OneHot", lambda i: tf.one_hot(i, 5),
     [np.array([4, 0, 0, 9], np.int32)], grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for b in (2, 3):
        d = r(2, 2, 3, 2 * b * b, dtype=dt) if fl else \
            ri(2, 2, 3, 2 * b * b, lo=-9, hi=9).astype(dt)
        s_ = r(2, 2 * b, 3 * b, 2, dtype=dt) if fl else \
            ri(2, 2 * b, 3 * b, 2, lo=-9, hi=9).astype(dt)
        more("DepthToSpace_b%d_%s" % (b, sfx), "DepthToSpace",
             (lambda bb: lambda a: tf.nn.depth_to_space(a, bb))(b), [d],
             {"block_size": b}, grad=fl)
        more("SpaceToDepth_b%d_%s" % (b, sfx), "SpaceToDepth",
             (lambda bb: lambda a: tf.nn.space_to_depth(a, bb))(b), [s_],
             {"block_size": b}, grad=fl)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    x = r(3, 4, dtype=dt) if fl else ri(3, 4, lo=-9, hi=9, dtype=dt)
    for mode, pads in (("REFLECT", [[1, 2], [3, 0]]),
                       ("SYMMETRIC", [[2, 3], [0, 4]])):
        more("MirrorPad_%s_%s" % (mode.lower(), sfx), "MirrorPad",
             (lambda m_, p_: lambda a: tf.pad(a, p_, mode=m_))(mode, pads),
             [x], {"mode": mode}, extra=[np.array(pads, np.int32)], grad=fl)
        more("MirrorPadGrad_%s_%s" % (mode.lower(), sfx), "MirrorPadGrad",
             (lambda m_, p_: lambda a: raw.MirrorPadGrad(
                 input=a, paddings=p_, mode=m_))(mode, pads),
             [r(3 + sum(pads[0]), 4 + sum(pads[1]), dtype=dt) if fl else
              ri(3 + sum(pads[0]), 4 + sum(pads[1]), lo=-9, hi=9,
                 dtype=dt)],
             grad=False)
more("MirrorPad_reflect_3d", "MirrorPad",
     lambda a: tf.pad(a, [[0, 0], [2, 2], [1, 1]], mode="REFLECT"),
     [r(2, 3, 4)], {"mode": "REFLECT"},
     extra=[np.array([[0, 0], [2, 2], [1, 1]], np.int32)])
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    p_ = r(3, 4, 2, dtype=dt) if fl else ri(3, 4, 2, lo=-9, hi=9, dtype=dt)
    more("GatherNd_k2_" + sfx, "GatherNd", tf.gather_nd,
         [p_, np.array([[0, 1], [2, 3], [0, 1]], np.int32)], grad=fl)
    more("GatherNd_k1_i64idx_" + sfx, "GatherNd", tf.gather_nd,
         [p_, np.array([[[2], [0]]], np.int64)], grad=fl)
    more("GatherNd_full_" + sfx, "GatherNd", tf.gather_nd,
         [p_, np.array([[1, 2, 1], [0, 0, 0]], np.int32)], grad=fl)
    u = r(3, 2, dtype=dt) if fl else ri(3, 2, lo=-9, hi=9, dtype=dt)
    more("ScatterNd_" + sfx, "ScatterNd",
         lambda i, up: tf.scatter_nd(i, up, [4, 2]),
         [np.array([[1], [3], [1]], np.int32), u], grad=False)
more("ScatterNd_grad_f32", "ScatterNd",
     lambda i, up: tf.scatter_nd(i, up, [3, 4]),
     [np.array([[0, 1], [2, 3], [0, 1]], np.int32), r(3)],
     extra=[np.array([3, 4], np.int32)])
# the optimizers' updates: the variable and its slots are Variables
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    def sc(v, d=dt):
        return np.asarray(v, d)
    w_, g_ = r(2, 3, dtype=dt), r(2, 3, dtype=dt)
    pos = (lambda: r(2, 3, lo=0.1, hi=1.0, dtype=dt))
    more("ApplyAdagrad_" + sfx, "ApplyAdagrad",
         lambda v, a, lr, g: raw.ApplyAdagrad(var=v, accum=a, lr=lr, grad=g),
         [w_, pos(), sc(0.1), g_], var=2, grad=False)
    more("ApplyAdagrad_noslots_" + sfx, "ApplyAdagrad",
         lambda v, a, lr, g: raw.ApplyAdagrad(var=v, accum=a, lr=lr, grad=g,
                                              update_slots=False),
         [w_, pos(), sc(0.1), g_], var=2, grad=False)
    more("ApplyRMSProp_" + sfx, "ApplyRMSProp",
         lambda v, ms, mo, lr, rho, m, e, g: raw.ApplyRMSProp(
             var=v, ms=ms, mom=mo, lr=lr, rho=rho, momentum=m, epsilon=e,
             grad=g),
         [w_, pos(), r(2, 3, dtype=dt), sc(0.01), sc(0.9), sc(0.5),
          sc(1e-7), g_], var=3, grad=False)
    more("ApplyCenteredRMSProp_" + sfx, "ApplyCenteredRMSProp",
         lambda v, mg, ms, mo, lr, rho, m, e, g: raw.ApplyCenteredRMSProp(
             var=v, mg=mg, ms=ms, mom=mo, lr=lr, rho=rho, momentum=m,
             epsilon=e, grad=g),
         [w_, r(2, 3, lo=-0.1, hi=0.1, dtype=dt), pos(), r(2, 3, dtype=dt),
          sc(0.01), sc(0.9), sc(0.5), sc(1e-7), g_], var=4, grad=False)
    more("ApplyAdadelta_" + sfx, "ApplyAdadelta",
         lambda v, a, au, lr, rho, e, g: raw.ApplyAdadelta(
             var=v, accum=a, accum_update=au, lr=lr, rho=rho, epsilon=e,
             grad=g),
         [w_, pos(), pos(), sc(1.0), sc(0.95), sc(1e-6), g_], var=3,
         grad=False)
    more("ApplyAdaMax_" + sfx, "ApplyAdaMax",
         lambda v, m, vv, b1p, lr, b1, b2, e, g: raw.ApplyAdaMax(
             var=v, m=m, v=vv, beta1_power=b1p, lr=lr, beta1=b1, beta2=b2,
             epsilon=e, grad=g),
         [w_, r(2, 3, dtype=dt), pos(), sc(0.81), sc(0.01), sc(0.9),
          sc(0.999), sc(1e-7), g_], var=3, grad=False)
    for nest in (False, True):
        more("ApplyMomentum_%s%s" % ("nesterov_" if nest else "", sfx),
             "ApplyMomentum",
             (lambda ns: lambda v, a, lr, g, m: raw.ApplyMomentum(
                 var=v, accum=a, lr=lr, grad=g, momentum=m,
                 use_nesterov=ns))(nest),
             [w_, r(2, 3, dtype=dt), sc(0.1), g_, sc(0.9)], var=2,
             grad=False)
    more("ApplyAdam_" + sfx, "ApplyAdam",
         lambda v, m, vv, b1p, b2p, lr, b1, b2, e, g: raw.ApplyAdam(
             var=v, m=m, v=vv, beta1_power=b1p, beta2_power=b2p, lr=lr,
             beta1=b1, beta2=b2, epsilon=e, grad=g),
         [w_, r(2, 3, dtype=dt), pos(), sc(0.81), sc(0.998), sc(0.01),
          sc(0.9), sc(0.999), sc(1e-7), g_], var=3, grad=False)
    for l1 in (0.0, 0.05):
        more("ApplyProximalAdagrad_l1_%g_%s" % (l1, sfx),
             "ApplyProximalAdagrad",
             lambda v, a, lr, l1_, l2, g: raw.ApplyProximalAdagrad(
                 var=v, accum=a, lr=lr, l1=l1_, l2=l2, grad=g),
             [w_, pos(), sc(0.5), sc(l1), sc(0.1), g_], var=2, grad=False)
        more("ApplyProximalGradientDescent_l1_%g_%s" % (l1, sfx),
             "ApplyProximalGradientDescent",
             lambda v, a, l1_, l2, d: raw.ApplyProximalGradientDescent(
                 var=v, alpha=a, l1=l1_, l2=l2, delta=d),
             [w_, sc(0.5), sc(l1), sc(0.1), g_], var=1, grad=False)
    # Ftrl, AdagradDA and the sparse (embedding) updates: raw op `op`
    # called with `names` = the inputs in order, attrs kw
    def opt(name, op, names, inputs, nvar, **kw):
        more(name + "_" + sfx, op,
             (lambda o, nm, k: lambda *a: getattr(raw, o)(
                 **dict(zip(nm, a)), **k))(op, names, kw),
             inputs, var=nvar, grad=False)
    ftrl = ["var", "accum", "linear", "grad", "lr", "l1", "l2"]
    for p_, l1, mul in ((-0.5, 0.0, False), (-0.5, 0.05, False),
                        (-0.6, 0.05, False), (-0.5, 0.05, True)):
        tag = "p%g_l1_%g%s" % (-p_, l1, "_mullr" if mul else "")
        opt("ApplyFtrl_" + tag, "ApplyFtrl", ftrl + ["lr_power"],
            [w_, pos(), r(2, 3, lo=-0.3, hi=0.3, dtype=dt), g_, sc(0.5),
             sc(l1), sc(0.1), sc(p_)], 3, multiply_linear_by_lr=mul)
        opt("ApplyFtrlV2_" + tag, "ApplyFtrlV2",
            ftrl + ["l2_shrinkage", "lr_power"],
            [w_, pos(), r(2, 3, lo=-0.3, hi=0.3, dtype=dt), g_, sc(0.5),
             sc(l1), sc(0.1), sc(0.2), sc(p_)], 3, multiply_linear_by_lr=mul)
    da = ["var", "gradient_accumulator", "gradient_squared_accumulator",
          "grad"]
    for l1 in (0.0, 0.05):
        opt("ApplyAdagradDA_l1_%g" % l1, "ApplyAdagradDA",
            da + ["lr", "l1", "l2", "global_step"],
            [w_, r(2, 3, dtype=dt), pos(), g_, sc(0.5), sc(l1), sc(0.1),
             np.int64(3)], 3)
    # sparse: a [4, 3] variable, gradient rows for indices (a repeated
    # index is applied twice, in order)
    sw, sg = r(4, 3, dtype=dt), r(3, 3, dtype=dt)
    spos = (lambda: r(4, 3, lo=0.1, hi=1.0, dtype=dt))
    ix, ixd = np.array([3, 0, 1], np.int32), np.array([2, 0, 2], np.int64)
    for nest in (False, True):
        opt("SparseApplyMomentum%s" % ("_nesterov" if nest else ""),
            "SparseApplyMomentum",
            ["var", "accum", "lr", "grad", "indices", "momentum"],
            [sw, r(4, 3, dtype=dt), sc(0.1), sg, ix, sc(0.9)], 2,
            use_nesterov=nest)
    for i_, tag in ((ix, ""), (ixd, "_dup_i64")):
        opt("SparseApplyAdagrad" + tag, "SparseApplyAdagrad",
            ["var", "accum", "lr", "grad", "indices"],
            [sw, spos(), sc(0.1), sg, i_], 2)
    opt("SparseApplyAdagrad_noslots", "SparseApplyAdagrad",
        ["var", "accum", "lr", "grad", "indices"],
        [sw, spos(), sc(0.1), sg, ix], 2, update_slots=False)
    for l1 in (0.0, 0.05):
        opt("SparseApplyAdagradDA_l1_%g" % l1, "SparseApplyAdagradDA",
            da + ["indices", "lr", "l1", "l2", "global_step"],
            [sw, r(4, 3, dtype=dt), spos(), sg, ix, sc(0.5), sc(l1),
             sc(0.1), np.int64(3)], 3)
    opt("SparseApplyAdadelta", "SparseApplyAdadelta",
        ["var", "accum", "accum_update", "lr", "rho", "epsilon", "grad",
         "indices"],
        [sw, spos(), spos(), sc(1.0), sc(0.95), sc(1e-6), sg, ix], 3)
    opt("SparseApplyRMSProp", "SparseApplyRMSProp",
        ["var", "ms", "mom", "lr", "rho", "momentum", "epsilon", "grad",
         "indices"],
        [sw, spos(), r(4, 3, dtype=dt), sc(0.01), sc(0.9), sc(0.5),
         sc(1e-7), sg, ix], 3)
    opt("SparseApplyCenteredRMSProp", "SparseApplyCenteredRMSProp",
        ["var", "mg", "ms", "mom", "lr", "rho", "momentum", "epsilon",
         "grad", "indices"],
        [sw, r(4, 3, lo=-0.1, hi=0.1, dtype=dt), spos(), r(4, 3, dtype=dt),
         sc(0.01), sc(0.9), sc(0.5), sc(1e-7), sg, ix], 4)
    for p_, l1, mul in ((-0.5, 0.05, False), (-0.6, 0.0, False),
                        (-0.5, 0.05, True)):
        tag = "p%g_l1_%g%s" % (-p_, l1, "_mullr" if mul else "")
        sft = ["var", "accum", "linear", "grad", "indices", "lr", "l1", "l2"]
        opt("SparseApplyFtrl_" + tag, "SparseApplyFtrl", sft + ["lr_power"],
            [sw, spos(), r(4, 3, lo=-0.3, hi=0.3, dtype=dt), sg, ix,
             sc(0.5), sc(l1), sc(0.1), sc(p_)], 3,
            multiply_linear_by_lr=mul)
        opt("SparseApplyFtrlV2_" + tag, "SparseApplyFtrlV2",
            sft + ["l2_shrinkage", "lr_power"],
            [sw, spos(), r(4, 3, lo=-0.3, hi=0.3, dtype=dt), sg, ix,
             sc(0.5), sc(l1), sc(0.1), sc(0.2), sc(p_)], 3,
            multiply_linear_by_lr=mul)
    for l1 in (0.0, 0.05):
        opt("SparseApplyProximalGradientDescent_l1_%g" % l1,
            "SparseApplyProximalGradientDescent",
            ["var", "alpha", "l1", "l2", "grad", "indices"],
            [sw, sc(0.5), sc(l1), sc(0.1), sg, ix], 1)
        opt("SparseApplyProximalAdagrad_l1_%g" % l1,
            "SparseApplyProximalAdagrad",
            ["var", "accum", "lr", "l1", "l2", "grad", "indices"],
            [sw, spos(), sc(0.5), sc(l1), sc(0.1), sg, ix], 2)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    x = r(2, 3, 6, dtype=dt) if fl else ri(2, 3, 6, lo=-4, hi=4, dtype=dt)
    for kk in (1, 3):
        more("TopKV2_k%d_%s" % (kk, sfx), "TopKV2",
             (lambda k_: lambda a: tf.math.top_k(a, k_))(kk), [x],
             extra=[np.array(kk, np.int32)], n_out=2, grad=fl)
more("TopKV2_ties", "TopKV2", lambda a: tf.math.top_k(a, 4),
     [np.array([[1.0, 3.0, 3.0, -1.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0]],
               np.float32)], extra=[np.array(4, np.int32)], n_out=2,
     grad=False)

# ---- issue 22's short round: Where (one input) -----------------------------
more("Where_bool", "Where", lambda c: tf.where(c),
     [np.array([[True, False, True], [False, False, True]])], grad=False)
more("Where_f32", "Where", lambda c: tf.where(c),
     [np.array([[0.0, 1.5], [np.nan, 0.0], [-0.0, -2.0]], np.float32)],
     grad=False)
more("Where_i64_3d", "Where", lambda c: tf.where(c),
     [ri(2, 3, 2, lo=-1, hi=2, dtype=np.int64)], grad=False)
more("Where_none", "Where", lambda c: tf.where(c),
     [np.zeros((2, 2), np.int32)], grad=False)

# LRN (TF's gradient: LRNGrad in the .pb; dgrun's rule in the JSON)
more("LRN_default", "LRN", tf.nn.local_response_normalization,
     [r(2, 3, 2, 8)])
more("LRN_attrs", "LRN",
     lambda x: tf.nn.local_response_normalization(
         x, depth_radius=2, bias=2.0, alpha=0.1, beta=0.75),
     [r(1, 2, 3, 7)],
     {"depth_radius": 2, "bias": 2.0, "alpha": 0.1, "beta": 0.75})
more("LRN_r0", "LRN",
     lambda x: tf.nn.local_response_normalization(
         x, depth_radius=0, bias=0.5, alpha=1.0, beta=1.0),
     [r(1, 1, 2, 3)],
     {"depth_radius": 0, "bias": 0.5, "alpha": 1.0, "beta": 1.0})

# AvgPool3D, float32 (TF has no float64 CPU kernel; TF's gradient:
# AvgPool3DGrad of Shape(x) in the .pb)
more("AvgPool3D_same", "AvgPool3D",
     lambda x: tf.nn.avg_pool3d(x, [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
     [r(1, 3, 5, 4, 2)],
     {"ksize": [1, 2, 2, 2, 1], "strides": [1, 2, 2, 2, 1],
      "padding": "SAME"})
more("AvgPool3D_valid", "AvgPool3D",
     lambda x: tf.nn.avg_pool3d(x, [1, 2, 3, 2, 1], [1, 1, 2, 1, 1],
                                "VALID"),
     [r(2, 3, 5, 3, 2)],
     {"ksize": [1, 2, 3, 2, 1], "strides": [1, 1, 2, 1, 1],
      "padding": "VALID"})

# ==== issue 22 item 3: a case for every op of `dgrun ops` (harn22) =========
# The ops no case had: TF's gradient ops and shape helpers called directly,
# TF-1 control flow, TensorArrays and stacks (tf.while_loop and friends
# built with control flow v1: the ops dgrun loads), Grappler's fused ops
# (a GraphDef edited by hand, run by TF's own _Fused* kernels), summaries
# and the no-ops.  dgrun-internal ops with no TF counterpart are checked
# against NumPy in tests/cli/ops_oracles.py (its table gives the reasons).


def add_also(ent, c, gd):
    """ent["also"]: op type -> its nodes, for each op of c's `also`."""
    if c.get("also"):
        ent["also"] = {t: [n.name for n in gd.node if n.op == t]
                       for t in c["also"]}


def record_graph(c):
    """The recorder of graph_case: c["build"]() makes the graph (in the
    default graph) and returns its fetches; written with _output_shapes."""
    g = tf.Graph()
    with g.as_default():
        ys = c["build"]()
        ys = [tf.identity(t, name="y" if k == 0 else "y_%d" % k)
              for k, t in enumerate(ys)]
        with tf1.Session(graph=g) as s:
            s.run(tf1.global_variables_initializer())
            vals = s.run(ys)
        gd = g.as_graph_def(add_shapes=True)
    with open(os.path.join(OUT, c["name"] + ".pb"), "wb") as f:
        f.write(gd.SerializeToString(deterministic=True))
    opnode = [n for n in gd.node if n.op == c["op"]]
    ent = {"op": c["op"], "dtype": c["dtype"],
           "node": opnode[0].name if opnode else None, "fetch": {},
           "grads": {}}
    for k, v in enumerate(vals):
        ent["fetch"]["y" if k == 0 else "y_%d" % k] = {
            "shape": list(np.shape(v)), "value": jval(v),
            "dtype": DT.get(np.asarray(v).dtype, "?")}
    add_also(ent, c, gd)
    return ent


def graph_case(name, op, dtype, build, also=()):
    """A case whose graph build() makes itself (no inputs-as-Consts
    shape): forward values only."""
    assert name not in {c["name"] for c in CASES}, name
    CASES.append(dict(name=name, op=op, dtype=dtype, build=build,
                      also=list(also), recorder=record_graph))


def v1(fn):
    """fn with TF-1 control flow (Switch/Merge/Enter..., TensorArrayV3,
    stacks in gradients): the ops dgrun loads."""
    def wrapped(*a):
        tf1.disable_control_flow_v2()
        try:
            return fn(*a)
        finally:
            tf1.enable_control_flow_v2()
    return wrapped


# -- TF's gradient ops and shape helpers, called as raw ops -----------------
for lrn in ({}, {"depth_radius": 2, "bias": 2.0, "alpha": 0.1,
                 "beta": 0.75}):
    more("LRNGrad_%s" % ("attrs" if lrn else "default"), "LRNGrad",
         (lambda a_: lambda g_, x_: raw.LRNGrad(
             input_grads=g_, input_image=x_,
             output_image=tf.nn.local_response_normalization(x_, **a_),
             **a_))(lrn), [r(2, 2, 3, 7), r(2, 2, 3, 7)], grad=False)
more("AvgPool3DGrad_same", "AvgPool3DGrad",
     lambda g_: raw.AvgPool3DGrad(
         orig_input_shape=[1, 3, 5, 4, 2], grad=g_, ksize=[1, 2, 2, 2, 1],
         strides=[1, 2, 2, 2, 1], padding="SAME"), [r(1, 2, 3, 2, 2)],
     grad=False)
more("AvgPool3DGrad_valid", "AvgPool3DGrad",
     lambda g_: raw.AvgPool3DGrad(
         orig_input_shape=[2, 3, 5, 3, 2], grad=g_, ksize=[1, 2, 3, 2, 1],
         strides=[1, 1, 2, 1, 1], padding="VALID"), [r(2, 2, 2, 2, 2)],
     grad=False)
for train in (True, False):
    # (inference: the population mean and variance in the reserve spaces,
    # as TF's own gradient of FusedBatchNormV3 passes them)
    def _fbg(dy, x, sc, off, t_=train):
        mv = [tf.constant([0.1, -0.2, 0.3]), tf.constant([1.0, 0.5, 2.0])]
        bn = raw.FusedBatchNormV3(
            x=x, scale=sc, offset=off, mean=mv[0], variance=mv[1],
            epsilon=0.001, is_training=t_)
        return raw.FusedBatchNormGradV3(
            y_backprop=dy, x=x, scale=sc,
            reserve_space_1=bn[3] if t_ else mv[0],
            reserve_space_2=bn[4] if t_ else mv[1], reserve_space_3=bn[5],
            epsilon=0.001, is_training=t_)[:3]
    more("FusedBatchNormGradV3_%s" % ("train" if train else "infer"),
         "FusedBatchNormGradV3", _fbg,
         [r(2, 2, 3, 3), r(2, 2, 3, 3), r(3, lo=0.5), r(3)], n_out=3,
         grad=False, also=["FusedBatchNormV3"])
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    more("BroadcastGradientArgs_" + sfx, "BroadcastGradientArgs",
         lambda a, b: raw.BroadcastGradientArgs(s0=a, s1=b),
         [np.array([2, 1, 3], dt), np.array([4, 3], dt)], n_out=2,
         grad=False)
    more("BroadcastGradientArgs_same_" + sfx, "BroadcastGradientArgs",
         lambda a, b: raw.BroadcastGradientArgs(s0=a, s1=b),
         [np.array([2, 3], dt), np.array([2, 3], dt)], n_out=2, grad=False)
    more("ConcatOffset_" + sfx, "ConcatOffset",
         lambda d, a, b: raw.ConcatOffset(concat_dim=d, shape=[a, b]),
         [np.array(1, np.int32), np.array([2, 3, 4], dt),
          np.array([2, 5, 4], dt)], n_out=2, grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    x = r(2, 3, dtype=dt) if fl else ri(2, 3, lo=-2, hi=3).astype(dt)
    more("Const_" + sfx, "Const", tf.identity, [x], grad=False)
    more("Const_0d_" + sfx, "Const", tf.identity, [x.ravel()[0].copy()],
         grad=False)
    for ot in ("int32", "int64"):
        more("ShapeN_%s_%s" % (ot, sfx), "ShapeN",
             (lambda o: lambda a, b: tf.shape_n([a, b], out_type=o))(ot),
             [x, x.reshape(3, 1, 2)[:, :, :0].copy()], n_out=2, grad=False)
    more("PreventGradient_" + sfx, "PreventGradient",
         lambda a: raw.PreventGradient(input=a, message="no"), [x],
         grad=False)
    more("PlaceholderWithDefault_" + sfx, "PlaceholderWithDefault",
         lambda a: tf1.placeholder_with_default(a, [None, 3]), [x],
         grad=False)
    more("Print_" + sfx, "Print",
         lambda a: tf1.Print(a, [a], message="harness: ", summarize=2),
         [x], grad=False)
    more("IsVariableInitialized_" + sfx, "IsVariableInitialized",
         tf1.is_variable_initialized, [x], var=True, grad=False,
         also=["VariableV2"])


# Div of floats (tf.math.truediv writes RealDiv, which dgrun loads as Div)
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    more("Div_raw_" + sfx, "Div", lambda a, b: raw.Div(x=a, y=b),
         [r(2, 3, dtype=dt), r(3, dtype=dt) + 3.0], grad=False)


# -- the no-ops: NoOp (tf.group) and ControlTrigger as control inputs -------
def _noop(v):
    up = tf.group(tf1.assign_add(v, tf.ones_like(v)), name="grp")
    with tf.control_dependencies([up, raw.ControlTrigger(name="trig")]):
        return tf.identity(v.read_value() * 2.0)


more("NoOp_ControlTrigger_f32", "NoOp", _noop, [r(3)], var=True,
     grad=False, also=["ControlTrigger", "AssignAdd", "VariableV2"])


# -- summaries: run as control inputs of y (dgrun: no-ops, TF's tags and
# strings dropped at load); y must be TF's value
def _summaries(x):
    img = tf.reshape(tf.sigmoid(x[:12]), [1, 2, 2, 3])
    ss = [tf1.summary.scalar("s", x[0]), tf1.summary.histogram("h", x),
          tf1.summary.image("i", img),
          tf1.summary.audio("a", tf.reshape(x, [2, 8]) * 0.1, 8000.0),
          tf1.summary.tensor_summary("t", x)]
    with tf.control_dependencies(ss + [tf1.summary.merge(ss)]):
        return tf.identity(x) * 3.0


more("Summaries_f32", "ScalarSummary", _summaries, [r(16)], grad=False,
     also=["HistogramSummary", "ImageSummary", "AudioSummaryV2",
           "TensorSummaryV2", "MergeSummary"])


# -- TF-1 control flow: cond, while loops (and their gradient: stacks) ------
_CF = ["Enter", "Exit", "Merge", "Switch", "NextIteration", "LoopCond"]
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    more("While_" + sfx, "Merge", v1(lambda x: tf1.while_loop(
        lambda i, a: i < 4, lambda i, a: (i + 1, a * 0.5 + x),
        [tf.constant(0), tf.zeros_like(x)])[1]), [r(2, 3, dtype=dt)],
        grad=False, also=_CF)
    more("Cond_" + sfx, "Switch", v1(lambda x, p: tf1.cond(
        p, lambda: tf.sin(x), lambda: tf.cos(x) * 2.0)),
        [r(4, dtype=dt), np.array(False)], grad=False, also=["Merge"])
    graph_case("WhileGrad_" + sfx, "StackPushV2", np.dtype(dt).name,
               (lambda xv: v1(lambda: (lambda x: [tf.gradients(tf1.while_loop(
                   lambda i, a: i < 3, lambda i, a: (i + 1, a * a * 0.5 + x),
                   [tf.constant(0), x])[1], x)[0]])(
                       tf.constant(xv, name="x"))))(r(5, dtype=dt)),
               also=["StackV2", "StackPopV2"] + _CF)


# -- stacks directly: push two, pop one, close ------------------------------
def _stack(dt):
    a, b = (r(3, dtype=dt) if dt != np.int32 else ri(3, lo=-9, hi=9)
            for _ in range(2))
    d = tf.as_dtype(dt)

    def build():
        h = raw.StackV2(max_size=-1, elem_type=d, stack_name="st")
        p1 = raw.StackPushV2(handle=h, elem=tf.constant(a))
        with tf.control_dependencies([p1]):
            p2 = raw.StackPushV2(handle=h, elem=tf.constant(b))
        with tf.control_dependencies([p2]):
            pop = raw.StackPopV2(handle=h, elem_type=d)
        with tf.control_dependencies([pop]):
            cl = raw.StackCloseV2(handle=h)
        with tf.control_dependencies([cl]):
            return [tf.identity(pop), tf.identity(p1)]
    return build


for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32")):
    graph_case("Stack_" + sfx, "StackPopV2", np.dtype(dt).name,
               _stack(dt),
               also=["StackV2", "StackPushV2", "StackCloseV2"])


# -- TensorArrays (v1): write, scatter, read, gather, size, close, grad -----
def _tarray(dt):
    xv, dyv, x0 = r(4, 3, dtype=dt), r(3, 3, dtype=dt), r(3, dtype=dt)
    d = tf.as_dtype(dt)

    def build():
        x = tf.constant(xv, name="x")
        ta = tf.TensorArray(d, size=5, element_shape=[3])
        ta = ta.write(0, tf.constant(x0))
        ta = ta.scatter([1, 3, 4, 2], x)
        rd = ta.read(3)
        st = ta.gather([4, 0, 1])
        sz = ta.size()
        gx = tf.gradients(st, x, grad_ys=tf.constant(dyv))[0]
        with tf.control_dependencies([rd, st, gx]):
            cl = ta.close()
        with tf.control_dependencies([cl]):
            return [tf.identity(rd), tf.identity(st), tf.identity(sz), gx]
    return v1(build)


for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    graph_case("TensorArray_" + sfx, "TensorArrayV3", np.dtype(dt).name,
               _tarray(dt),
               also=["TensorArrayWriteV3", "TensorArrayScatterV3",
                     "TensorArrayReadV3", "TensorArrayGatherV3",
                     "TensorArraySizeV3", "TensorArrayCloseV3",
                     "TensorArrayGradV3"])


# -- Grappler's fused ops: a GraphDef with the node, run by TF's kernels ----
def _fused(op, shapes, fused, d, attrs):
    """A GraphDef of just the fused node `op` (TF's Python makes none),
    imported with its inputs mapped to Consts."""
    vals = [r(*s, dtype=d) for s in shapes]

    def build():
        ins = [tf.constant(v, name="in%d" % k) for k, v in enumerate(vals)]
        gd = tf1.GraphDef()
        n = gd.node.add()
        n.name, n.op = "op", op
        n.input.extend(["in%d" % k for k in range(len(shapes))])
        t = tf.as_dtype(d).as_datatype_enum
        n.attr["T"].type = t
        n.attr["fused_ops"].list.s.extend([f.encode() for f in fused])
        n.attr["num_args"].i = len(shapes) - 2
        if op != "_FusedDepthwiseConv2dNative":  # (its OpDef has no TArgs)
            n.attr["TArgs"].list.type.extend([t] * (len(shapes) - 2))
        for k, v in attrs.items():
            if isinstance(v, list):
                n.attr[k].list.i.extend(v)
            elif isinstance(v, bool):
                n.attr[k].b = v
            else:
                n.attr[k].s = v.encode()
        tf.graph_util.import_graph_def(
            gd, input_map={"in%d:0" % k: t_ for k, t_ in enumerate(ins)},
            name="")
        return [tf1.get_default_graph().get_tensor_by_name("op:0")]
    return build


_CONV = {"strides": [1, 2, 1, 1], "padding": "SAME"}
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    dts = np.dtype(dt).name
    for fo in (["BiasAdd"], ["BiasAdd", "Relu"], ["BiasAdd", "Relu6"],
               ["BiasAdd", "Elu"], ["BiasAdd", "LeakyRelu"]):
        tag = "_".join(fo).lower()
        graph_case("_FusedConv2D_%s_%s" % (tag, sfx), "_FusedConv2D", dts,
                   _fused("_FusedConv2D", [(2, 5, 4, 3), (3, 3, 3, 4), (4,)],
                          fo, dt, _CONV))
        # TF's _FusedDepthwiseConv2dNative CPU kernel: float only
        if fo[-1] in ("BiasAdd", "Relu", "Relu6") and dt == np.float32:
            graph_case("_FusedDepthwiseConv2dNative_%s_%s" % (tag, sfx),
                       "_FusedDepthwiseConv2dNative", dts,
                       _fused("_FusedDepthwiseConv2dNative",
                              [(1, 5, 5, 2), (3, 3, 2, 2), (4,)], fo, dt,
                              {"strides": [1, 1, 1, 1],
                               "padding": "VALID"}))
    if dt == np.float32:  # TF's _FusedMatMul CPU kernel: float only
        for fo in (["BiasAdd"], ["BiasAdd", "Relu"]):
            for tb in (False, True):
                graph_case("_FusedMatMul_%s%s" % (
                    "_".join(fo).lower(), "_tb" if tb else ""),
                    "_FusedMatMul", dts,
                    _fused("_FusedMatMul",
                           [(3, 4), (2, 4) if tb else (4, 2), (2,)], fo, dt,
                           {"transpose_a": False, "transpose_b": tb}))
# -- the dtypes of dgrun's table no case ran yet (harn22) -------------------
BL = np.array([[True, False, True], [False, False, True]])
for nm, op, fn, ins, kw in (
        ("Identity", "Identity", tf.identity, [BL], {}),
        ("ZerosLike", "ZerosLike", lambda x: raw.ZerosLike(x=x), [BL], {}),
        ("OnesLike", "OnesLike", lambda x: raw.OnesLike(x=x), [BL], {}),
        ("StopGradient", "StopGradient", tf.stop_gradient, [BL], {}),
        ("Shape", "Shape", lambda x: raw.Shape(input=x), [BL], {}),
        ("Size", "Size", lambda x: raw.Size(input=x), [BL], {}),
        ("Rank", "Rank", lambda x: raw.Rank(input=x), [BL], {}),
        ("ExpandDims", "ExpandDims", lambda x: tf.expand_dims(x, 0), [BL],
         {}),
        ("Squeeze", "Squeeze", lambda x: tf.squeeze(x, [1]),
         [BL.reshape(2, 1, 3)], {}),
        ("Tile", "Tile", lambda x: tf.tile(x, [1, 2]), [BL], {}),
        ("Transpose", "Transpose", tf.transpose, [BL], {}),
        ("Cast", "Cast", lambda x: raw.Cast(x=x, DstT=tf.float32), [BL], {}),
        ("Reshape", "Reshape", lambda x: tf.reshape(x, [3, 2]), [BL], {}),
        ("GatherV2", "GatherV2", lambda x, i: tf.gather(x, i, axis=1),
         [BL, np.array([2, 0], np.int32)], {}),
        ("ConcatV2", "ConcatV2", lambda a, b: tf.concat([a, b], 0),
         [BL, ~BL], {}),
        ("Slice", "Slice", lambda x: tf.slice(x, [0, 1], [2, 2]), [BL], {}),
        ("StridedSlice", "StridedSlice", lambda x: x[:, ::-2], [BL], {}),
        ("Pack", "Pack", lambda a, b: tf.stack([a, b], 1), [BL, ~BL], {}),
        ("Unpack", "Unpack", lambda x: tf.unstack(x, axis=1), [BL],
         {"n_out": 3}),
        ("Split", "Split", lambda x: tf.split(x, 3, axis=1), [BL],
         {"n_out": 3}),
        ("SplitV", "SplitV", lambda x: tf.split(x, [2, 1], axis=1), [BL],
         {"n_out": 2}),
        ("Fill", "Fill", lambda v: tf.fill([2, 2], v), [np.array(True)], {}),
        ("BroadcastTo", "BroadcastTo", lambda x: tf.broadcast_to(x, [2, 2, 3]),
         [BL[:1]], {}),
        ("Pad", "Pad", lambda x: tf.pad(x, [[1, 0], [0, 1]]), [BL], {}),
        ("Select", "Select", lambda c_, a, b: tf1.where(c_, a, b),
         [BL, BL, ~BL], {}),
        ("SelectV2", "SelectV2", lambda c_, a, b: tf.where(c_, a, b),
         [BL[0], BL, ~BL], {}),
        ("MirrorPad", "MirrorPad",
         lambda x: tf.pad(x, [[1, 0], [1, 1]], mode="REFLECT"), [BL], {}),
        ("GatherNd", "GatherNd", tf.gather_nd,
         [BL, np.array([[1, 2], [0, 0]], np.int32)], {}),
        ("DynamicPartition", "DynamicPartition",
         lambda x, p: tf.dynamic_partition(x, p, 2),
         [BL.ravel(), np.array([1, 0, 1, 1, 0, 0], np.int32)], {"n_out": 2}),
        ("IdentityN", "IdentityN", lambda a, b: tf.identity_n([a, b]),
         [BL, BL[0]], {"n_out": 2})):
    more(nm + "_bool", op, fn, ins, grad=False, **kw)
for dt, sfx in ((F64, "f64"), (np.int32, "i32"), (np.int64, "i64")):
    fl = dt == F64
    x = r(2, 3, 4, dtype=dt) if fl else ri(2, 3, 4, lo=-9, hi=9, dtype=dt)
    more("Reshape_" + sfx, "Reshape", lambda a: tf.reshape(a, [4, -1]), [x],
         extra=[np.array([4, -1], np.int32)], grad=fl)
    more("StridedSlice_" + sfx, "StridedSlice", lambda a: a[1:, ::2, -1],
         [x], grad=False)
    more("StridedSlice_mask_" + sfx, "StridedSlice",
         lambda a: a[..., tf.newaxis, 1:3], [x], grad=False)
    more("IdentityN_" + sfx, "IdentityN", lambda a, b: tf.identity_n([a, b]),
         [x, x[0]], n_out=2, grad=False)
    more("SpaceToBatchND_" + sfx, "SpaceToBatchND",
         lambda a: tf.space_to_batch_nd(a, [2], [[0, 1]]), [x], grad=False)
    more("BatchToSpaceND_" + sfx, "BatchToSpaceND",
         lambda a: tf.batch_to_space(a, [2], [[0, 1]]), [x], grad=False)
    more("DynamicPartition_" + sfx, "DynamicPartition",
         lambda a, p: tf.dynamic_partition(a, p, 2),
         [x, np.array([1, 0], np.int32)], n_out=2, grad=False)
    more("ScatterAdd_" + sfx, "ScatterAdd",
         lambda v, i, u: tf1.scatter_add(v, i, u),
         [x[0], np.array([1, 2, 1], np.int32), x[1]], var=True, grad=False)
    more("ScatterSub_" + sfx, "ScatterSub",
         lambda v, i, u: tf1.scatter_sub(v, i, u),
         [x[0], np.array([0, 0, 2], np.int32), x[1]], var=True, grad=False)
    more("ResizeNearestNeighbor_" + sfx, "ResizeNearestNeighbor",
         lambda a: tf1.image.resize_nearest_neighbor(a, [5, 3]),
         [x.reshape(1, 2, 3, 4)], grad=False)
    more("UnsortedSegmentSum_" + sfx, "UnsortedSegmentSum",
         lambda a, i: tf.math.unsorted_segment_sum(a, i, 3),
         [x, np.array([2, 0], np.int32)], grad=False)
    if dt != np.int32:
        more("Unique_" + sfx, "Unique", tf.unique,
             [np.array([3, 1, 3, 0, 1], dt)], n_out=2, grad=False)
        more("ResizeBilinear_" + sfx, "ResizeBilinear",
             lambda a: tf1.image.resize_bilinear(a, [5, 3]),
             [x.reshape(1, 2, 3, 4)], grad=False)
    if dt != F64:
        more("DynamicStitch_" + sfx, "DynamicStitch",
             lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
             [np.array([0, 2], np.int32), np.array([1], np.int32), x[0, :2],
              x[1, :1]], grad=False)
        for a_ in (("Assign", tf1.assign), ("AssignAdd", tf1.assign_add),
                   ("AssignSub", tf1.assign_sub)):
            more("%s_%s" % (a_[0], sfx), a_[0], a_[1], [x[0], x[1]],
                 var=True, grad=False)
        more("ScatterNd_" + sfx, "ScatterNd",
             lambda i, u: tf.scatter_nd(i, u, [4, 4]),
             [np.array([[1], [3], [1]], np.int32), x[0]], grad=False)
        more("Div_" + sfx, "Div", lambda a, b: raw.Div(x=a, y=b),
             [x[0], np.array([2, -3, 5, 7], dt)], grad=False)
        more("Pow_" + sfx, "Pow", tf.pow,
             [x[0], np.array([2, 0, 3, 1], dt)], grad=False)
        more("SquaredDifference_" + sfx, "SquaredDifference",
             tf.math.squared_difference, [x[0], x[1]], grad=False)
    else:
        more("DynamicStitch_f32", "DynamicStitch",
             lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
             [np.array([1, 0], np.int32), np.array([2], np.int32), r(2, 3),
              r(1, 3)])
        more("DynamicStitch_" + sfx, "DynamicStitch",
             lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
             [np.array([1, 0], np.int32), np.array([2], np.int32), x[0, :2],
              x[1, :1]])
        more("Sum_axis1_f64", "Sum", lambda a: tf.reduce_sum(a, axis=1), [x],
             {"axis": [1]})
        more("SoftmaxXent_f64", "SoftmaxCrossEntropyWithLogits",
             lambda l_, y_: tf.nn.softmax_cross_entropy_with_logits(
                 labels=y_, logits=l_),
             [x[0], tf.nn.softmax(r(3, 4, dtype=F64)).numpy()])
        more("SparseSoftmaxXent_f64", "SparseSoftmaxCrossEntropyWithLogits",
             lambda l_, y_: tf.nn.sparse_softmax_cross_entropy_with_logits(
                 labels=y_, logits=l_), [x[0], np.array([0, 3, 1], np.int32)])
        more("DepthwiseConv2dNative_f64", "DepthwiseConv2dNative",
             lambda a, w: tf.nn.depthwise_conv2d(a, w, [1, 1, 1, 1], "SAME"),
             [r(1, 4, 4, 2, dtype=F64), r(2, 2, 2, 2, dtype=F64)],
             {"strides": [1, 1, 1, 1], "padding": "SAME"})
        more("Erfc_f64", "Erfc", tf.math.erfc, [x])
        more("Einsum_f64", "Einsum", lambda a, b: tf.einsum("ij,jk->ik", a, b),
             [x[0], x[1].T.copy()], {"equation": "ij,jk->ik"})
        more("BatchMatMulV2_f64", "BatchMatMulV2", tf.matmul,
             [x, r(2, 4, 3, dtype=F64)])
        more("Conv3D_f64", "Conv3D",
             lambda a, w: tf.nn.conv3d(a, w, [1, 1, 1, 1, 1], "SAME"),
             [r(1, 2, 3, 3, 2, dtype=F64), r(2, 2, 2, 2, 3, dtype=F64)],
             grad=False)
        more("Where_f64", "Where", lambda c_: tf.where(c_), [x], grad=False)
        more("ResizeBilinearGrad_f64", "ResizeBilinearGrad",
             lambda d, im: raw.ResizeBilinearGrad(grads=d, original_image=im),
             [r(1, 5, 7, 2, dtype=np.float32), r(1, 3, 4, 2, dtype=F64)],
             grad=False)
        more("ScatterNd_f64", "ScatterNd", lambda i, u: tf.scatter_nd(i, u, [4, 4]),
             [np.array([[1], [3], [1]], np.int32), x[0]], grad=False)

# -- NaN/Inf, 0-d, empty and larger tensors across the elementwise ops ------
# (SPECIAL: 0, -0, 1e-6, -30, 30, NaN, Inf, -Inf; LARGE: 1031 values, no
# multiple of a work-group size; kept small: cases.json stores them)
_UN = (("Abs", tf.abs), ("Acos", tf.math.acos), ("Asin", tf.math.asin),
       ("Atan", tf.math.atan), ("Ceil", tf.math.ceil), ("Cos", tf.cos),
       ("Cosh", tf.math.cosh), ("Elu", tf.nn.elu), ("Erf", tf.math.erf),
       ("Erfc", tf.math.erfc), ("Exp", tf.exp), ("Expm1", tf.math.expm1),
       ("Floor", tf.floor), ("IsFinite", tf.math.is_finite),
       ("IsInf", tf.math.is_inf), ("IsNan", tf.math.is_nan),
       ("LeakyRelu", tf.nn.leaky_relu), ("Log", tf.math.log),
       ("Log1p", tf.math.log1p), ("Neg", tf.negative),
       ("Reciprocal", tf.math.reciprocal), ("Relu", tf.nn.relu),
       ("Relu6", tf.nn.relu6), ("Rint", tf.math.rint), ("Round", tf.round),
       ("Rsqrt", tf.math.rsqrt), ("Selu", tf.nn.selu),
       ("Sigmoid", tf.sigmoid), ("Sign", tf.sign), ("Sin", tf.sin),
       ("Sinh", tf.math.sinh), ("Softplus", tf.nn.softplus),
       ("Softsign", tf.nn.softsign), ("Sqrt", tf.sqrt),
       ("Square", tf.square), ("Tan", tf.math.tan), ("Tanh", tf.tanh))
_NOGRAD = {"Ceil", "Floor", "IsFinite", "IsInf", "IsNan", "Rint", "Round",
           "Sign"}
for nm, fn in _UN:
    for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
        # (TF 2.21's float64 Erf gives NaN at +-Inf; erf(+-inf) = +-1,
        # dgrun's: not TF's oracle there)
        sp = SPECIAL[:6] if (nm, sfx) == ("Erf", "f64") else SPECIAL
        more("%s_special_%s" % (nm, sfx), nm, fn, [sp.astype(dt)],
             grad=False)
    more("%s_0d" % nm, nm, fn,
         [np.asarray(0.375 if nm in ("Acos", "Asin") else 1.25, np.float32)],
         grad=nm not in _NOGRAD)
    more(nm + "_empty", nm, fn, [np.zeros((0, 3), np.float32)], grad=False)
LARGE = r(1031, lo=-3, hi=3)
for nm, fn in (("Tanh", tf.tanh), ("Exp", tf.exp), ("Relu", tf.nn.relu)):
    more(nm + "_large", nm, fn, [LARGE])
_BIN = (("Add", "AddV2", tf.add), ("Sub", "Sub", tf.subtract),
        ("Mul", "Mul", tf.multiply), ("Div", "Div",
                                      lambda a, b: raw.Div(x=a, y=b)),
        ("Maximum", "Maximum", tf.maximum), ("Minimum", "Minimum",
                                             tf.minimum),
        ("Pow", "Pow", tf.pow), ("SquaredDifference", "SquaredDifference",
                                 tf.math.squared_difference),
        ("FloorDiv", "FloorDiv", tf.math.floordiv),
        ("FloorMod", "FloorMod", tf.math.floormod),
        ("Atan2", "Atan2", tf.math.atan2),
        ("DivNoNan", "DivNoNan", tf.math.divide_no_nan),
        ("Equal", "Equal", tf.equal), ("Less", "Less", tf.less),
        ("GreaterEqual", "GreaterEqual", tf.greater_equal))
for nm, op, fn in _BIN:
    # every pair of specials: broadcasting [8,1] against [8]
    more(nm + "_special_outer", op, fn,
         [SPECIAL.reshape(8, 1), SPECIAL.copy()], grad=False)
    more(nm + "_empty_bcast", op, fn,
         [np.zeros((0, 1), np.float32), r(3)], grad=False)
    more(nm + "_large_bcast", op, fn,
         [r(9, 37, lo=0.5, hi=2), r(37, lo=0.5, hi=2)], grad=False)
more("Sum_large", "Sum", lambda x: tf.reduce_sum(x, axis=0),
     [r(1031, 3)], {"axis": [0]}, grad=False)
more("Max_large", "Max", lambda x: tf.reduce_max(x, axis=1),
     [r(3, 1031)], {"axis": [1]}, grad=False)
more("Mean_special", "Mean", lambda x: tf.reduce_mean(x, axis=0),
     [SPECIAL.reshape(4, 2)], {"axis": [0]}, grad=False)
more("Max_special", "Max", lambda x: tf.reduce_max(x, axis=0),
     [SPECIAL.reshape(4, 2)], {"axis": [0]}, grad=False)
more("Softmax_large", "Softmax", tf.nn.softmax, [r(2, 700)])
more("Softmax_special", "Softmax", tf.nn.softmax,
     [SPECIAL.reshape(2, 4)], grad=False)
more("MatMul_large", "MatMul", tf.matmul, [r(33, 35), r(35, 31)])
more("MatMul_empty", "MatMul", tf.matmul,
     [np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32)],
     grad=False)
# NaN through the chains the fusion pass fuses (_FusedMatMul, _FusedConv2D)
_NANA = r(3, 4)
_NANA[1, 2] = np.nan
more("Relu_fused_matmul_nan", "Relu",
     lambda a, b, c_: tf.nn.relu(tf.nn.bias_add(tf.matmul(a, b), c_)),
     [_NANA, r(4, 5), r(5)], grad=False)
_NANX = r(1, 4, 4, 2)
_NANX[0, 1, 2, 0] = np.nan
for nm, act in (("Relu", tf.nn.relu), ("Relu6", tf.nn.relu6)):
    more(nm + "_fused_conv_nan", nm,
         (lambda f_: lambda x, w, c_: f_(tf.nn.bias_add(
             tf.nn.conv2d(x, w, 1, "SAME"), c_)))(act),
         [_NANX, r(3, 3, 2, 3), r(3)], grad=False)
more("Transpose_large", "Transpose", lambda x: tf.transpose(x, [1, 0]),
     [r(37, 29)], {"perm": [1, 0]}, grad=False)

# ==== end of harn22's block =================================================
# grouped Conv2D (tf_keras Conv2D(groups=...): RegNet, ConvNeXt; TF's
# gradients are the grouped backprops; TF's CPU backprops take neither
# dilations nor float64 there) and Conv3DBackpropInputV2 (Conv3DTranspose; no dilations on
# TF's CPU either)
more("Conv2D_grouped", "Conv2D",
     lambda x, w: tf.nn.conv2d(x, w, 1, "SAME"), [r(2, 5, 4, 6), r(3, 3, 2, 6)],
     {"strides": [1, 1, 1, 1], "padding": "SAME"})
more("Conv2D_grouped_s2", "Conv2D",
     lambda x, w: tf.nn.conv2d(x, w, 2, "VALID"),
     [r(2, 7, 6, 8), r(3, 2, 2, 12)],
     {"strides": [1, 2, 2, 1], "padding": "VALID"})
more("Conv2D_grouped_dilated", "Conv2D",
     lambda x, w: tf.nn.conv2d(x, w, 1, "VALID", dilations=2),
     [r(1, 6, 7, 4), r(2, 3, 1, 8)],
     {"strides": [1, 1, 1, 1], "padding": "VALID",
      "dilations": [1, 2, 2, 1]}, grad=False)
more("Conv2D_grouped_s2_f64", "Conv2D",
     lambda x, w: tf.nn.conv2d(x, w, 2, "SAME"),
     [r(1, 5, 5, 4, dtype=F64), r(3, 3, 2, 4, dtype=F64)],
     {"strides": [1, 2, 2, 1], "padding": "SAME"}, grad=False)
for sfx, dt in (("f32", np.float32), ("f64", F64)):
    # (input_sizes as input 0, so that dgrun's JSON has the op's order)
    more("Conv3DBackpropInputV2_" + sfx, "Conv3DBackpropInputV2",
         lambda s, w, d: tf.nn.conv3d_transpose(d, w, s, [1, 1, 2, 2, 1],
                                                "SAME"),
         [np.array([2, 3, 4, 5, 2], np.int32), r(2, 3, 2, 2, 3, dtype=dt),
          r(2, 3, 2, 3, 3, dtype=dt)],
         {"strides": [1, 1, 2, 2, 1], "padding": "SAME"},
         grad=dt == np.float32)
    more("Conv3DBackpropFilterV2_" + sfx, "Conv3DBackpropFilterV2",
         lambda x, s, d: raw.Conv3DBackpropFilterV2(
             input=x, filter_sizes=s, out_backprop=d,
             strides=[1, 1, 2, 2, 1], padding="SAME"),
         [r(2, 3, 4, 5, 2, dtype=dt), np.array([2, 3, 2, 2, 3], np.int32),
          r(2, 3, 2, 3, 3, dtype=dt)],
         {"strides": [1, 1, 2, 2, 1], "padding": "SAME"},
         grad=dt == np.float32)
more("Conv3DBackpropInputV2_valid", "Conv3DBackpropInputV2",
     lambda w, d: tf.nn.conv3d_transpose(d, w, [1, 5, 4, 3, 3],
                                         [1, 2, 1, 1, 1], "VALID"),
     [r(3, 2, 2, 3, 2), r(1, 2, 3, 2, 2)], grad=False)
# ---- issue 20: the ops added to prove the add-an-op recipe -----------------
# (inputs from their own RandomState, so that the cases above and every
# case's dy stay what a full run gave before)
RS20 = np.random.RandomState(20)
for nm, fn, zeros, lo in (("Xdivy", tf.math.xdivy, (1, 5), 0.5),
                          ("Xlogy", tf.math.xlogy, (2, 3), 0.1)):
    for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
        x20 = RS20.uniform(-2, 2, size=(2, 3)).astype(dt)
        x20.flat[list(zeros)] = 0.0  # 0 there, and so is the gradient
        more("%s_%s" % (nm, sfx), nm, fn,
             [x20, RS20.uniform(lo, 3, size=(2, 3)).astype(dt)])
        more("%s_bcast_%s" % (nm, sfx), nm, fn,
             [x20, RS20.uniform(lo, 3, size=(3,)).astype(dt)])
    more(nm + "_special", nm, fn,
         [np.array([0, 0, 0, 0, 1, -1, 2, np.nan, 1], np.float32),
          np.array([0, -1, np.inf, np.nan, 0, -0.0 if nm == "Xdivy" else -1,
                    np.nan, 1, np.inf], np.float32)], grad=False)

# ---- issue 22 (cl3d): the 3-D convolutions and pools and LRN, now with
# OpenCL kernels: their attribute variants (strides per dimension,
# dilations, SAME / VALID, odd sizes, batch > 1, float64), inputs from their
# own RandomState.  MaxPool3D's gradient is MaxPool3DGrad, whose TF CPU
# kernel gives each window's grad to every cell within 1e-5 of the window's
# max (the _ties cases: small integers, many equal maxima).
RS3 = np.random.RandomState(3)


def r3(*shape, dtype=np.float32):
    return RS3.uniform(-2, 2, size=shape).astype(dtype)


def ties3(*shape):
    return RS3.randint(0, 3, size=shape).astype(np.float32)


more("Conv3D_s213_valid_b2", "Conv3D",
     lambda x, w: tf.nn.conv3d(x, w, [1, 2, 3, 1, 1], "VALID"),
     [r3(2, 5, 7, 4, 3), r3(3, 2, 2, 3, 2)],
     {"strides": [1, 2, 3, 1, 1], "padding": "VALID"})
more("Conv3D_dilated", "Conv3D",
     lambda x, w: tf.nn.conv3d(x, w, [1, 1, 1, 1, 1], "SAME",
                               dilations=[1, 2, 1, 2, 1]),
     [r3(2, 5, 4, 6, 2), r3(2, 3, 2, 2, 3)],
     {"strides": [1, 1, 1, 1, 1], "padding": "SAME",
      "dilations": [1, 2, 1, 2, 1]}, grad=False)
more("Conv3D_s2_same_f64", "Conv3D",
     lambda x, w: tf.nn.conv3d(x, w, [1, 1, 2, 2, 1], "SAME"),
     [r3(2, 3, 5, 4, 2, dtype=F64), r3(3, 2, 3, 2, 3, dtype=F64)],
     {"strides": [1, 1, 2, 2, 1], "padding": "SAME"})
more("Conv3DBackpropInputV2_s312_b2", "Conv3DBackpropInputV2",
     lambda s, w, d: tf.nn.conv3d_transpose(d, w, s, [1, 3, 1, 2, 1],
                                            "SAME"),
     [np.array([2, 7, 3, 5, 2], np.int32), r3(2, 2, 3, 2, 3),
      r3(2, 3, 3, 3, 3)],
     {"strides": [1, 3, 1, 2, 1], "padding": "SAME"})
more("Conv3DBackpropFilterV2_s212_valid", "Conv3DBackpropFilterV2",
     lambda x, s, d: raw.Conv3DBackpropFilterV2(
         input=x, filter_sizes=s, out_backprop=d, strides=[1, 2, 1, 2, 1],
         padding="VALID"),
     [r3(2, 5, 4, 7, 3), np.array([3, 2, 3, 3, 2], np.int32),
      r3(2, 2, 3, 3, 2)],
     {"strides": [1, 2, 1, 2, 1], "padding": "VALID"})
more("MaxPool3D_valid_b2", "MaxPool3D",
     lambda x: tf.nn.max_pool3d(x, [1, 2, 3, 2, 1], [1, 1, 2, 1, 1],
                                "VALID"), [r3(2, 3, 7, 4, 3)],
     {"ksize": [1, 2, 3, 2, 1], "strides": [1, 1, 2, 1, 1],
      "padding": "VALID"})
more("MaxPool3D_ties", "MaxPool3D",
     lambda x: tf.nn.max_pool3d(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1],
                                "SAME"), [ties3(1, 3, 4, 3, 2)],
     {"ksize": [1, 2, 2, 2, 1], "strides": [1, 1, 1, 1, 1],
      "padding": "SAME"})
for nm, xin, ks, st, pad in (
        ("same", r3(1, 3, 5, 4, 2), [1, 2, 2, 2, 1], [1, 2, 2, 2, 1], "SAME"),
        ("ties_valid", ties3(2, 4, 5, 3, 2), [1, 2, 3, 2, 1],
         [1, 1, 1, 2, 1], "VALID")):
    def mp3g(x_, k_=ks, s_=st, p_=pad):
        y_ = tf.nn.max_pool3d(x_, k_, s_, p_)
        return raw.MaxPool3DGrad(orig_input=x_, orig_output=y_,
                                 grad=tf.ones_like(y_) * 0.5 + y_,
                                 ksize=k_, strides=s_, padding=p_)
    more("MaxPool3DGrad_" + nm, "MaxPool3DGrad", mp3g, [xin], grad=False,
         also=("MaxPool3D",))
more("AvgPool3D_s123_same_b2", "AvgPool3D",
     lambda x: tf.nn.avg_pool3d(x, [1, 3, 2, 2, 1], [1, 1, 2, 3, 1],
                                "SAME"), [r3(2, 5, 4, 7, 3)],
     {"ksize": [1, 3, 2, 2, 1], "strides": [1, 1, 2, 3, 1],
      "padding": "SAME"})
more("AvgPool3DGrad_s123_same_b2", "AvgPool3DGrad",
     lambda g_: raw.AvgPool3DGrad(
         orig_input_shape=[2, 5, 4, 7, 3], grad=g_, ksize=[1, 3, 2, 2, 1],
         strides=[1, 1, 2, 3, 1], padding="SAME"), [r3(2, 5, 2, 3, 3)],
     grad=False)
# MaxPool3DGrad's and MaxPool3DGradGrad's gradients (TF's
# _MaxPool3DGradGrad, _MaxPool3DGradGradGrad): orig_output as an input
# (MaxPool3D's values, from TF), so that dgrun's JSON has the op's inputs
def max_pool3d_np(x, k, s, p):
    g = tf.Graph()
    with g.as_default(), tf1.Session(graph=g) as se:
        return se.run(tf.nn.max_pool3d(tf.constant(x), k, s, p))


MP3 = {"ksize": [1, 2, 2, 2, 1], "strides": [1, 1, 2, 1, 1],
       "padding": "SAME"}
x_mp3 = ties3(2, 3, 5, 4, 2)
y_mp3 = max_pool3d_np(x_mp3, MP3["ksize"], MP3["strides"], MP3["padding"])
more("MaxPool3DGrad_gradgrad", "MaxPool3DGrad",
     lambda x_, y_, g_: raw.MaxPool3DGrad(orig_input=x_, orig_output=y_,
                                          grad=g_, **MP3),
     [x_mp3, y_mp3, r3(*y_mp3.shape)], MP3)
more("MaxPool3DGradGrad_ties", "MaxPool3DGradGrad",
     lambda x_, y_, g_: raw.MaxPool3DGradGrad(orig_input=x_, orig_output=y_,
                                              grad=g_, **MP3),
     [x_mp3, y_mp3, r3(*x_mp3.shape)], MP3)
# AvgPool3DGrad's own gradient (TF's _AvgPool3DGradGrad: AvgPool3D of it);
# orig_input_shape as input 0, so that dgrun's JSON has the op's order
more("AvgPool3DGrad_gradgrad", "AvgPool3DGrad",
     lambda s_, g_: raw.AvgPool3DGrad(
         orig_input_shape=s_, grad=g_, ksize=[1, 2, 2, 3, 1],
         strides=[1, 2, 1, 2, 1], padding="VALID"),
     [np.array([1, 5, 4, 7, 2], np.int32), r3(1, 2, 3, 3, 2)],
     {"ksize": [1, 2, 2, 3, 1], "strides": [1, 2, 1, 2, 1],
      "padding": "VALID"})
LRN3 = {"depth_radius": 3, "bias": 1.5, "alpha": 0.3, "beta": 0.6}
more("LRN_deep_b2", "LRN",
     lambda x: tf.nn.local_response_normalization(x, **LRN3),
     [r3(2, 3, 2, 70)], LRN3)
more("LRNGrad_deep_b2", "LRNGrad",
     lambda g_, x_: raw.LRNGrad(
         input_grads=g_, input_image=x_,
         output_image=tf.nn.local_response_normalization(x_, **LRN3),
         **LRN3), [r3(2, 3, 2, 70), r3(2, 3, 2, 70)], grad=False)

# ---- issue 22: the data-movement and reduction ops moved from host memory
# to OpenCL kernels (cldata): broadcasting, 0-d, empty, NaN, every
# reduction axis set, float64 (inputs from their own RandomState: the cases
# above keep their values)
RS22 = np.random.RandomState(2201)


def r22(*shape, dtype=np.float32, lo=-2.0, hi=2.0):
    return RS22.uniform(lo, hi, size=shape).astype(dtype)


for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    t_, e_ = r22(2, 3, dtype=dt), r22(2, 3, dtype=dt)
    t_[0, 1] = np.nan
    more("Select_scalar_cond_" + sfx, "Select",
         lambda c_, a, b: raw.Select(condition=c_, x=a, y=b),
         [np.array(False), t_, e_], grad=False)
    more("Select_vector_cond_" + sfx, "Select",
         lambda c_, a, b: raw.Select(condition=c_, x=a, y=b),
         [np.array([False, True]), t_, e_], grad=False)
    more("SelectV2_scalar_cond_" + sfx, "SelectV2",
         lambda c_, a, b: raw.SelectV2(condition=c_, t=a, e=b),
         [np.array(True), t_, e_[0]], grad=False)
    more("SelectV2_full_bcast_" + sfx, "SelectV2",
         lambda c_, a, b: raw.SelectV2(condition=c_, t=a, e=b),
         [RS22.uniform(size=(2, 1, 3)) > 0.5, r22(4, 1, dtype=dt),
          r22(1, 2, 1, 1, dtype=dt)], grad=False)
    more("Fill_nan_" + sfx, "Fill", lambda v: raw.Fill(dims=[3, 1, 2], value=v),
         [np.asarray(np.nan, dt)], grad=False)
    x3 = r22(2, 3, 4, dtype=dt, lo=0.5, hi=1.5)
    for nm, fn in (("Prod", tf.reduce_prod), ("Min", tf.reduce_min)):
        for ax in ([0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2], [-1],
                   [-3, -1]):
            for kd in (False, True):
                if sfx == "f64" and (kd or len(ax) == 2):
                    continue
                tag = "_".join(str(a) for a in ax).replace("-", "m")
                more("%s_ax%s%s_%s" % (nm, tag, "_kd" if kd else "", sfx), nm,
                     (lambda f_, a_, k_: lambda a: f_(a, axis=a_,
                                                      keepdims=k_))(
                         fn, ax, kd), [x3], {"axis": ax, "keepdims": kd},
                     grad=False)
        more("%s_large_%s" % (nm, sfx), nm,
             (lambda f_: lambda a: f_(a, axis=0))(fn),
             [r22(700, 3, dtype=dt, lo=0.999, hi=1.001)], {"axis": [0]},
             grad=False)
        more("%s_special_%s" % (nm, sfx), nm,
             (lambda f_: lambda a: f_(a, axis=1))(fn),
             [SPECIAL.astype(dt).reshape(2, 4)], {"axis": [1]}, grad=False)
for nm, fn in (("Prod", tf.reduce_prod), ("Min", tf.reduce_min)):
    more(nm + "_0d", nm, lambda a, f_=fn: f_(a), [np.asarray(1.5, np.float32)],
         grad=False)
    more(nm + "_empty_ax0", nm, lambda a, f_=fn: f_(a, axis=0),
         [np.zeros((0, 3), np.float32)], {"axis": [0]}, grad=False)
    more(nm + "_empty_ax1", nm, lambda a, f_=fn: f_(a, axis=1),
         [np.zeros((0, 3), np.float32)], {"axis": [1]}, grad=False)
more("Select_0d", "Select",
     lambda c_, a, b: raw.Select(condition=c_, x=a, y=b),
     [np.array(True), np.asarray(2.5, np.float32),
      np.asarray(-1.0, np.float32)], grad=False)
more("Select_empty", "Select",
     lambda c_, a, b: raw.Select(condition=c_, x=a, y=b),
     [np.zeros((0, 3), bool), np.zeros((0, 3), np.float32),
      np.zeros((0, 3), np.float32)], grad=False)
more("SelectV2_0d", "SelectV2",
     lambda c_, a, b: raw.SelectV2(condition=c_, t=a, e=b),
     [np.array(False), np.asarray(2.5, np.float32),
      np.asarray(-1.0, np.float32)], grad=False)
more("SelectV2_empty_bcast", "SelectV2",
     lambda c_, a, b: raw.SelectV2(condition=c_, t=a, e=b),
     [np.zeros((0, 1), bool), r22(3), np.asarray(1.0, np.float32)],
     grad=False)
more("Fill_0d", "Fill", lambda v: raw.Fill(dims=np.zeros(0, np.int32), value=v),
     [np.asarray(-3.25, np.float32)], grad=False)
more("Fill_empty", "Fill", lambda v: raw.Fill(dims=[0, 3], value=v),
     [np.asarray(1.0, np.float32)], grad=False)
more("Fill_large", "Fill", lambda v: raw.Fill(dims=[1031], value=v),
     [np.asarray(0.5, np.float32)], grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    g3 = r22(4, 3, 5, dtype=dt)
    g3[1, 1, 1] = np.nan
    pads = [[1, 2], [0, 1], [2, 2]]
    more("MirrorPadGrad_3d_" + sfx, "MirrorPadGrad",
         lambda a: raw.MirrorPadGrad(input=a, paddings=[[1, 2], [0, 1],
                                                        [1, 1]],
                                     mode="REFLECT"),
         [r22(6, 4, 5, dtype=dt)], grad=False)
    more("MirrorPadGrad_sym_3d_" + sfx, "MirrorPadGrad",
         lambda a, p_=pads: raw.MirrorPadGrad(input=a, paddings=p_,
                                              mode="SYMMETRIC"),
         [r22(3 + 3, 2 + 1, 4 + 4, dtype=dt)], grad=False)
    more("MirrorPadGrad_1d_nan_" + sfx, "MirrorPadGrad",
         lambda a: raw.MirrorPadGrad(input=a, paddings=[[2, 1]],
                                     mode="SYMMETRIC"),
         [np.array([1.0, np.nan, 2.0, 3.0, 4.0, 5.0], dt)], grad=False)
    more("GatherNd_nan_" + sfx, "GatherNd", tf.gather_nd,
         [g3, np.array([[1, 1], [3, 2], [1, 1]], np.int32)], grad=False)
    more("GatherNd_k0_" + sfx, "GatherNd", tf.gather_nd,
         [g3[:2, :2, :2].copy(), np.zeros((2, 0), np.int32)], grad=False)
    more("DynamicStitch_dup_" + sfx, "DynamicStitch",
         lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
         [np.array([[0, 3], [3, 1]], np.int32), np.array([2, 1], np.int32),
          r22(2, 2, 2, dtype=dt), r22(2, 2, dtype=dt)], grad=False)
    more("DynamicStitch_scalar_idx_" + sfx, "DynamicStitch",
         lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
         [np.array(1, np.int32), np.array(0, np.int32), r22(3, dtype=dt),
          r22(3, dtype=dt)], grad=False)
    more("DynamicPartition_gap_" + sfx, "DynamicPartition",
         lambda a, p_: tf.dynamic_partition(a, p_, 4),
         [r22(5, 2, 2, dtype=dt), np.array([3, 0, 3, 0, 3], np.int32)],
         {"num_partitions": 4}, n_out=4, grad=False)
    wx = r22(3, 2, 4, 5, dtype=dt)
    wx[wx < 0.5] = 0.0
    wx[0, 1, 2, 3] = np.nan
    more("Where_4d_" + sfx, "Where", lambda c_: tf.where(c_), [wx],
         grad=False)
    tk = r22(3, 700, dtype=dt)
    tk[1, 100:110] = 3.0  # ties among the largest
    more("TopKV2_large_" + sfx, "TopKV2", lambda a: tf.math.top_k(a, 6),
         [tk], extra=[np.array(6, np.int32)], n_out=2, grad=False)
# the table's dtypes no case ran: ScatterUpdate float64/int64/bool (and
# float64 on the GPU), DynamicStitch bool
for dt, sfx in ((F64, "f64"), (np.int64, "i64"), (np.bool_, "bool")):
    sv = r22(4, 2, dtype=dt) if dt == F64 else \
        (RS22.uniform(size=(4, 2)) * 9).astype(dt)
    su = r22(3, 2, dtype=dt) if dt == F64 else \
        (RS22.uniform(size=(3, 2)) * 9).astype(dt)
    more("ScatterUpdate_" + sfx, "ScatterUpdate",
         lambda v, i, u: tf1.scatter_update(v, i, u),
         [sv, np.array([3, 0, 3], np.int32), su], var=True, grad=False)
more("Assign_bool", "Assign", lambda v, x_: tf1.assign(v, x_),
     [np.array([True, False, True]), np.array([False, False, True])],
     var=True, grad=False)
more("ResizeBilinear_i32", "ResizeBilinear",
     lambda a: tf1.image.resize_bilinear(a, [5, 3]),
     [(RS22.uniform(size=(1, 2, 3, 2)) * 20).astype(np.int32)], grad=False)
# (TF's ResizeNearestNeighborGrad takes no int64)
more("ResizeNearestNeighborGrad_i32", "ResizeNearestNeighborGrad",
     lambda d: raw.ResizeNearestNeighborGrad(grads=d, size=[3, 4]),
     [(RS22.uniform(size=(1, 5, 7, 2)) * 20).astype(np.int32)], grad=False)
more("DynamicStitch_bool", "DynamicStitch",
     lambda i0, i1, d0, d1: tf.dynamic_stitch([i0, i1], [d0, d1]),
     [np.array([2, 0], np.int32), np.array([1], np.int32),
      np.array([True, False]), np.array([True])], grad=False)
more("GatherNd_empty", "GatherNd", tf.gather_nd,
     [r22(3, 2), np.zeros((0, 1), np.int32)], grad=False)
more("DynamicStitch_empty", "DynamicStitch",
     lambda i0, d0: tf.dynamic_stitch([i0], [d0]),
     [np.zeros((0,), np.int32), np.zeros((0, 2), np.float32)], grad=False)
more("DynamicPartition_empty", "DynamicPartition",
     lambda a, p_: tf.dynamic_partition(a, p_, 2),
     [np.zeros((0, 3), np.float32), np.zeros((0,), np.int32)],
     {"num_partitions": 2}, n_out=2, grad=False)
_wl = (RS22.uniform(size=5000) > 0.7).astype(np.float32)
more("Where_large", "Where", lambda c_: tf.where(c_), [_wl], grad=False)
# (no 0-d Where: TF's kernel refuses it, "Unhandled input dimensions: 0")
more("Where_empty", "Where", lambda c_: tf.where(c_),
     [np.zeros((0, 3), np.float32)], grad=False)
more("TopKV2_all", "TopKV2", lambda a: tf.math.top_k(a, 5),
     [np.array([[2.0, -1.0, 2.0, 0.0, 7.5]], np.float32)],
     extra=[np.array(5, np.int32)], n_out=2, grad=False)
more("TopKV2_k0", "TopKV2", lambda a: tf.math.top_k(a, 0),
     [r22(2, 4)], extra=[np.array(0, np.int32)], n_out=2, grad=False)
# int64 indices and k (index_type, Tk), and a k large enough that the CPU
# kernel's heap is deep (ties among the kept and the dropped)
more("TopKV2_idx64_f32", "TopKV2",
     lambda a: tf.math.top_k(a, 3, index_type=tf.int64),
     [r22(2, 3, 6)], extra=[np.array(3, np.int32)], n_out=2, grad=False)
more("TopKV2_k64_i32", "TopKV2",
     lambda a: tf.raw_ops.TopKV2(input=a, k=np.int64(4), index_type=tf.int64),
     [(RS22.uniform(size=(3, 9)) * 6).astype(np.int32)],
     extra=[np.array(4, np.int64)], n_out=2, grad=False)
_tkb = np.round(r22(3, 700) * 4) / 4  # many equal values
more("TopKV2_bigk_f32", "TopKV2", lambda a: tf.math.top_k(a, 200),
     [_tkb], extra=[np.array(200, np.int32)], n_out=2, grad=False)

# ---- ops9a: the simple ops of TF-1 frozen models and TF-2 exports ---------
# (inputs from their own RandomState: the cases above keep their values)
RS9A = np.random.RandomState(9001)


def r9(*shape, dtype=np.float32, lo=-2.0, hi=2.0):
    return RS9A.uniform(lo, hi, size=shape).astype(dtype)


# FusedBatchNorm (V1) and its gradients V1 / V2 load as V3's
for train in (False, True):
    tn = "train" if train else "infer"
    more("FusedBatchNorm_" + tn, "FusedBatchNorm",
         (lambda t_: lambda a, s_, o_, m_, v_: raw.FusedBatchNorm(
             x=a, scale=s_, offset=o_, mean=m_, variance=v_, epsilon=0.01,
             is_training=t_)[:3])(train),
         [r9(2, 3, 2, 3), r9(3, lo=0.5), r9(3), r9(3), r9(3, lo=0.5)],
         {"epsilon": 0.01, "is_training": train},
         dg_op="FusedBatchNormV3", n_out=3, grad=not train)
    for gv in ("FusedBatchNormGrad", "FusedBatchNormGradV2"):
        def _fbg1(dy, x, sc, off, t_=train, gv_=gv):
            mv = [tf.constant([0.1, -0.2, 0.3]), tf.constant([1.0, 0.5, 2.0])]
            bn = raw.FusedBatchNorm(
                x=x, scale=sc, offset=off, mean=mv[0], variance=mv[1],
                epsilon=0.001, is_training=t_)
            return getattr(raw, gv_)(
                y_backprop=dy, x=x, scale=sc,
                reserve_space_1=bn[3] if t_ else mv[0],
                reserve_space_2=bn[4] if t_ else mv[1],
                epsilon=0.001, is_training=t_)[:3]
        more("%s_%s" % (gv, tn), gv, _fbg1,
             [r9(2, 2, 3, 3), r9(2, 2, 3, 3), r9(3, lo=0.5), r9(3)], n_out=3,
             dg_op="FusedBatchNormGradV3", grad=False,
             also=["FusedBatchNormV3"])
# MaxPoolV2 / MaxPoolGradV2: ksize and strides Consts folded at load
for pad in ("VALID", "SAME"):
    more("MaxPoolV2_" + pad.lower(), "MaxPoolV2",
         (lambda p_: lambda a: raw.MaxPoolV2(
             input=a, ksize=[1, 2, 3, 1], strides=[1, 2, 2, 1],
             padding=p_))(pad),
         [r9(2, 5, 7, 3)], {"ksize": [1, 2, 3, 1], "strides": [1, 2, 2, 1],
                            "padding": pad}, dg_op="MaxPool")
    more("MaxPoolGradV2_" + pad.lower(), "MaxPoolGradV2",
         (lambda p_: lambda a, d: raw.MaxPoolGradV2(
             orig_input=a, orig_output=tf.nn.max_pool2d(
                 a, [2, 3], [2, 2], p_), grad=d, ksize=[1, 2, 3, 1],
             strides=[1, 2, 2, 1], padding=p_))(pad),
         [r9(2, 5, 7, 3), r9(2, 3 if pad == "SAME" else 2,
                             4 if pad == "SAME" else 3, 3)],
         dg_op="MaxPoolGrad", grad=False, also=["MaxPool"])

# ClipByValue: each bound a scalar or of t's shape (TF's kernel)
for dt, sfx in ((np.float32, "f32"), (np.float64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    def _t9(*sh, dt_=dt):
        if np.dtype(dt_).kind == "f":
            return r9(*sh, dtype=dt_, lo=-3, hi=3)
        return RS9A.randint(-6, 7, size=sh).astype(dt_)
    _lo, _hi = _t9(2, 3) - 2, _t9(2, 3) + 3
    _lo, _hi = np.minimum(_lo, _hi), np.maximum(_lo, _hi)
    more("ClipByValue_scalar_" + sfx, "ClipByValue",
         lambda t_, l_, h_: raw.ClipByValue(
             t=t_, clip_value_min=l_, clip_value_max=h_),
         [_t9(3, 4), np.asarray(-1, dt), np.asarray(1, dt)])
    more("ClipByValue_tensor_" + sfx, "ClipByValue",
         lambda t_, l_, h_: raw.ClipByValue(
             t=t_, clip_value_min=l_, clip_value_max=h_),
         [_t9(2, 3), _lo, _hi])
    more("ClipByValue_mixed_" + sfx, "ClipByValue",
         lambda t_, l_, h_: raw.ClipByValue(
             t=t_, clip_value_min=l_, clip_value_max=h_),
         [_t9(2, 3), np.asarray(-1, dt), _hi])
more("ClipByValue_0d", "ClipByValue",
     lambda t_, l_, h_: raw.ClipByValue(
         t=t_, clip_value_min=l_, clip_value_max=h_),
     [np.asarray(2.5, np.float32), np.asarray(-1, np.float32),
      np.asarray(1, np.float32)])
more("ClipByValue_empty", "ClipByValue",
     lambda t_, l_, h_: raw.ClipByValue(
         t=t_, clip_value_min=l_, clip_value_max=h_),
     [np.zeros((0, 3), np.float32), np.asarray(-1, np.float32),
      np.asarray(1, np.float32)], grad=False)
more("ClipByValue_special", "ClipByValue",
     lambda t_, l_, h_: raw.ClipByValue(
         t=t_, clip_value_min=l_, clip_value_max=h_),
     [SPECIAL, np.asarray(-1, np.float32), np.asarray(1, np.float32)],
     grad=False)
# the inverse hyperbolic functions, inside their domains (and the special
# values, without gradients)
for dt, sfx in ((np.float32, "f32"), (np.float64, "f64")):
    more("Asinh_" + sfx, "Asinh", tf.math.asinh, [r9(3, 4, dtype=dt, lo=-4,
                                                     hi=4)])
    more("Acosh_" + sfx, "Acosh", tf.math.acosh, [r9(3, 4, dtype=dt, lo=1.1,
                                                     hi=5)])
    more("Atanh_" + sfx, "Atanh", tf.math.atanh, [r9(3, 4, dtype=dt,
                                                     lo=-0.95, hi=0.95)])
for nm, fn in (("Asinh", tf.math.asinh), ("Acosh", tf.math.acosh),
               ("Atanh", tf.math.atanh)):
    more(nm + "_special", nm, fn,
         [np.concatenate([SPECIAL, np.array([1, -1, 0.5, 2], np.float32)])],
         grad=False)

# EnsureShape (partial dims), CheckNumerics: identities that check
for dt, sfx in ((np.float32, "f32"), (np.float64, "f64")):
    more("EnsureShape_" + sfx, "EnsureShape",
         lambda a: tf.ensure_shape(a, [2, None, 3]),
         [r9(2, 4, 3, dtype=dt)], {"shape": [2, -1, 3]})
    more("CheckNumerics_" + sfx, "CheckNumerics",
         lambda a: tf.debugging.check_numerics(a, "ops9a"),
         [r9(3, 4, dtype=dt)], {"message": "ops9a"})
more("EnsureShape_i32", "EnsureShape", lambda a: tf.ensure_shape(a, [None]),
     [np.arange(5, dtype=np.int32)], {"shape": [-1]})
more("EnsureShape_0d", "EnsureShape", lambda a: tf.ensure_shape(a, []),
     [np.asarray(1.5, np.float32)], {"shape": []})
more("EnsureShape_bool", "EnsureShape", lambda a: tf.ensure_shape(a, [2, 2]),
     [np.array([[True, False], [False, True]])], {"shape": [2, 2]})
more("CheckNumerics_empty", "CheckNumerics",
     lambda a: tf.debugging.check_numerics(a, "e"),
     [np.zeros((0, 2), np.float32)], {"message": "e"}, grad=False)


# Assert: a passing one, through a control input (as graphs use it; its
# string data dropped at load)
def _assert_pass(cnd, a):
    chk = raw.Assert(condition=cnd, data=[tf.constant("x is"), a],
                     summarize=2)
    with tf.control_dependencies([chk]):
        return tf.identity(a)


more("Assert_pass", "Assert", _assert_pass,
     [np.asarray(True), r9(2, 3)], grad=False)

# TruncateDiv (integers: dgrun's Div), TruncateMod: C's quotient and
# remainder, signs mixed, broadcasting
_tnum = np.array([[7, -7, 7, -7, 0, 9], [13, -13, 2, -2, 5, -1]])
_tden = np.array([2, 2, -2, -2, 3, 4])
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    more("TruncateDiv_" + sfx, "TruncateDiv",
         lambda a, b: raw.TruncateDiv(x=a, y=b),
         [_tnum.astype(dt), _tden.astype(dt)], dg_op="Div", grad=False)
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64"), (np.float32, "f32"),
                (np.float64, "f64")):
    more("TruncateMod_" + sfx, "TruncateMod",
         lambda a, b: raw.TruncateMod(x=a, y=b),
         [_tnum.astype(dt) + (0.5 if dt in (np.float32, np.float64)
                              else 0), _tden.astype(dt)], grad=False)
more("TruncateMod_scalar", "TruncateMod",
     lambda a, b: raw.TruncateMod(x=a, y=b),
     [np.array([-5.5, 5.5, 0.25], np.float32), np.asarray(-2, np.float32)],
     grad=False)


# ---- ops9c: segment reductions (issue 22) ----------------------------------
RS9C = np.random.RandomState(93)


def d9(*shape, dt=np.float32):
    """Data with ties (values on a coarse grid) in dtype dt."""
    v = np.round(RS9C.uniform(-3, 3, size=shape) * 2) / 2
    if np.dtype(dt).kind == "i":
        v = v * 2
    return v.astype(dt)


for dt, sfx in ((np.float32, "f32"), (np.float64, "f64"),
                (np.int32, "i32"), (np.int64, "i64")):
    fl = np.dtype(dt).kind == "f"
    for nm, fn in (("Max", tf.math.unsorted_segment_max),
                   ("Min", tf.math.unsorted_segment_min),
                   ("Prod", tf.math.unsorted_segment_prod)):
        op = "UnsortedSegment" + nm
        # segments 1 and 4 empty, a negative id dropped
        more(op + "_" + sfx, op, (lambda f: lambda a, i: f(a, i, 5))(fn),
             [d9(6, 3, dt=dt), np.array([0, 2, 0, 3, -1, 2], np.int32)],
             extra=[np.array(5, np.int32)], grad=fl)
        more(op + "_ids2d_" + sfx, op,
             (lambda f: lambda a, i: f(a, i, np.int64(3)))(fn),
             [d9(2, 3, 2, dt=dt),
              np.array([[0, 1, 0], [2, -1, 1]], np.int64)],
             extra=[np.array(3, np.int64)], grad=fl)
    for nm, fn in (("Sum", tf.math.segment_sum),
                   ("Mean", tf.math.segment_mean),
                   ("Max", tf.math.segment_max),
                   ("Min", tf.math.segment_min),
                   ("Prod", tf.math.segment_prod)):
        op = "Segment" + nm
        # segment 2 empty
        more(op + "_" + sfx, op, fn,
             [d9(6, 2, dt=dt), np.array([0, 0, 1, 3, 3, 3], np.int32)],
             grad=fl)
        more(op + "_ids64_" + sfx, op, fn,
             [d9(4, 2, 2, dt=dt), np.array([1, 1, 1, 2], np.int64)],
             grad=fl)
for nm, fn in (("Max", tf.math.unsorted_segment_max),
               ("Prod", tf.math.unsorted_segment_prod)):
    more("UnsortedSegment%s_empty" % nm, "UnsortedSegment" + nm,
         (lambda f: lambda a, i: f(a, i, 2))(fn),
         [np.zeros((0, 2), np.float32), np.zeros((0,), np.int32)],
         extra=[np.array(2, np.int32)], grad=False)
more("SegmentSum_empty", "SegmentSum", tf.math.segment_sum,
     [np.zeros((0, 3), np.float32), np.zeros((0,), np.int32)], grad=False)
# zeros in a product (one zero, two zeros in a segment): the gradient's cases
more("SegmentProd_zeros", "SegmentProd", tf.math.segment_prod,
     [np.array([2.0, 0.0, 3.0, 0.0, 0.0, 1.5, -2.0], np.float32),
      np.array([0, 0, 0, 1, 1, 2, 2], np.int32)])
more("UnsortedSegmentProd_zeros", "UnsortedSegmentProd",
     lambda a, i: tf.math.unsorted_segment_prod(a, i, 3),
     [np.array([2.0, 0.0, 3.0, 0.0, 0.0, 1.5, -2.0], np.float32),
      np.array([0, 2, 0, 1, 1, 2, 0], np.int32)],
     extra=[np.array(3, np.int32)])
# SparseSegmentSum/Mean/SqrtN (embedding_lookup_sparse's combiners) and the
# gradient ops TF 2.21's rules emit for them
_ssi = np.array([0, 3, 3, 1, 4, 2], np.int32)
_sss = np.array([0, 0, 1, 1, 1, 3], np.int32)
for dt, sfx in ((np.float32, "f32"), (np.float64, "f64"),
                (np.int32, "i32"), (np.int64, "i64")):
    fl = np.dtype(dt).kind == "f"
    for nm, fn in (("Sum", tf.sparse.segment_sum),
                   ("Mean", tf.sparse.segment_mean),
                   ("SqrtN", tf.sparse.segment_sqrt_n)):
        if not fl and nm != "Sum":
            continue
        op = "SparseSegment" + nm
        more(op + "_" + sfx, op, fn, [d9(5, 3, dt=dt), _ssi, _sss], grad=fl)
        more(op + "_ids64_" + sfx, op, fn,
             [d9(4, 2, 2, dt=dt), np.array([3, 0, 1], np.int64),
              np.array([1, 1, 2], np.int64)], grad=fl)
        if fl:
            g = getattr(raw, op + "Grad")
            more(op + "Grad_" + sfx, op + "Grad",
                 (lambda g_: lambda d, i, s_: g_(
                     grad=d, indices=i, segment_ids=s_, output_dim0=6))(g),
                 [d9(4, 3, dt=dt), _ssi, _sss],
                 extra=[np.array(6, np.int32)], grad=False)
more("SparseSegmentSum_empty", "SparseSegmentSum", tf.sparse.segment_sum,
     [r(3, 2), np.zeros((0,), np.int32), np.zeros((0,), np.int32)],
     grad=False)
# SparseToDense: rank-2 and rank-1 / 0-d indices, vector and scalar values
_s2d = lambda i, sh, v, d: raw.SparseToDense(  # noqa: E731
    sparse_indices=i, output_shape=sh, sparse_values=v, default_value=d)
more("SparseToDense_2d_f32", "SparseToDense", _s2d,
     [np.array([[0, 1], [1, 3], [2, 0]], np.int64),
      np.array([3, 4], np.int64), r(3), np.float32(0.5)], grad=False)
more("SparseToDense_1d_scalar_i32", "SparseToDense", _s2d,
     [np.array([1, 4, 5], np.int32), np.array([7], np.int32),
      np.int32(3), np.int32(-1)], grad=False)
more("SparseToDense_0d_f64", "SparseToDense", _s2d,
     [np.int32(2), np.array([4], np.int32), np.float64(2.5),
      np.float64(0)], grad=False)
more("SparseToDense_i64", "SparseToDense", _s2d,
     [np.array([[0, 0, 1], [1, 1, 0]], np.int32),
      np.array([2, 2, 2], np.int32), np.array([7, -8], np.int64),
      np.int64(1)], grad=False)
more("SparseToDense_bool", "SparseToDense", _s2d,
     [np.array([0, 2], np.int32), np.array([3], np.int32),
      np.array([True, True]), np.bool_(False)], grad=False)
more("SparseToDense_empty", "SparseToDense", _s2d,
     [np.zeros((0, 2), np.int64), np.array([2, 3], np.int64),
      np.zeros((0,), np.float32), np.float32(1)], grad=False)
more("SparseToDense_unvalidated", "SparseToDense",
     lambda i, sh, v, d: raw.SparseToDense(
         sparse_indices=i, output_shape=sh, sparse_values=v, default_value=d,
         validate_indices=False),
     [np.array([3, 0, 2], np.int32), np.array([5], np.int32), r(3),
      np.float32(-1)], {"validate_indices": False}, grad=False)
# InTopKV2 (TF-1 eval metrics): ties, a non-finite row, a target out of range
_itk = lambda p_, t_, k_: raw.InTopKV2(  # noqa: E731
    predictions=p_, targets=t_, k=k_)
_itp = np.array([[0.1, 0.5, 0.5, 0.2, 0.5], [1, 2, 3, 4, 5],
                 [0.3, np.nan, 0.1, 0.2, 0.0], [2, 1, np.inf, 0, 3],
                 [-1, -1, -1, -1, -1], [3, 1, 2, 0, 4]], np.float32)
more("InTopKV2_i32", "InTopKV2", _itk,
     [_itp, np.array([1, 3, 0, 4, 2, 7], np.int32), np.int32(2)],
     grad=False)
more("InTopKV2_i64", "InTopKV2", _itk,
     [_itp, np.array([3, 4, 2, 0, 0, -1], np.int64), np.int64(1)],
     grad=False)
more("InTopKV2_k0", "InTopKV2", _itk,
     [r(3, 4), np.array([0, 1, 2], np.int32), np.int32(0)], grad=False)
more("InTopKV2_kall", "InTopKV2", _itk,
     [r(3, 4), np.array([0, 1, 2], np.int32), np.int32(4)], grad=False)
# UniqueWithCounts (out_idx int32 / int64)
more("UniqueWithCounts_i32", "UniqueWithCounts",
     lambda x: tf.unique_with_counts(x, out_idx=tf.int64),
     [np.array([4, 1, 4, 7, 1, 1, 0], np.int32)], {"out_idx": "int64"},
     grad=False, n_out=3)
more("UniqueWithCounts_f32", "UniqueWithCounts", tf.unique_with_counts,
     [np.array([0.5, -1.0, 0.5, 2.0, -0.0, 0.0], np.float32)], grad=False,
     n_out=3)
more("UniqueWithCounts_f64", "UniqueWithCounts", tf.unique_with_counts,
     [np.array([3, 1, 3, 3], np.float64)], grad=False, n_out=3)
more("UniqueWithCounts_i64", "UniqueWithCounts",
     lambda x: tf.unique_with_counts(x, out_idx=tf.int64),
     [np.array([9, 9, -2, 5, -2], np.int64)], {"out_idx": "int64"},
     grad=False, n_out=3)
more("UniqueWithCounts_empty", "UniqueWithCounts", tf.unique_with_counts,
     [np.zeros((0,), np.int32)], grad=False, n_out=3)
# Bincount / DenseBincount (tf.math.bincount): counts, weights of each dtype,
# values past size ignored, per-row bins of a matrix, binary_output
_bc = lambda a, s_, w: raw.Bincount(arr=a, size=s_, weights=w)  # noqa
_bca = np.array([1, 3, 1, 7, 0, 3, 3], np.int32)
more("Bincount_count", "Bincount", _bc,
     [_bca, np.int32(5), np.zeros((0,), np.float32)], grad=False)
for dt, sfx in ((np.float32, "f32"), (np.float64, "f64"),
                (np.int32, "i32"), (np.int64, "i64")):
    more("Bincount_w_" + sfx, "Bincount", _bc,
         [_bca, np.int32(6), d9(7, dt=dt)], grad=False)
    more("DenseBincount_w_" + sfx, "DenseBincount",
         lambda a, s_, w: raw.DenseBincount(input=a, size=s_, weights=w),
         [np.array([[0, 2, 2], [4, 1, 9]], np.int64), np.int64(5),
          d9(2, 3, dt=dt)], grad=False)
more("DenseBincount_count_i32", "DenseBincount",
     lambda a, s_, w: raw.DenseBincount(input=a, size=s_, weights=w),
     [_bca, np.int32(4), np.zeros((0,), np.int32)], grad=False)
more("DenseBincount_binary", "DenseBincount",
     lambda a, s_, w: raw.DenseBincount(input=a, size=s_, weights=w,
                                        binary_output=True),
     [np.array([[0, 2, 2], [3, 1, 1]], np.int32), np.int32(4),
      np.zeros((0,), np.float32)], {"binary_output": True}, grad=False)
more("DenseBincount_math", "DenseBincount",
     lambda a: tf.math.bincount(a, minlength=4), [_bca], grad=False)
more("Bincount_empty", "Bincount", _bc,
     [np.zeros((0,), np.int32), np.int32(3), np.zeros((0,), np.float32)],
     grad=False)
# ---- ops9b: structure and matrix ops (issue 22) ---------------------------
# (inputs from their own RandomState: the cases above keep their values)
RS9B = np.random.RandomState(909)


def r9b(*shape, dtype=np.float32):
    if np.dtype(dtype).kind == "f":
        return RS9B.uniform(-2.0, 2.0, size=shape).astype(dtype)
    return RS9B.randint(-9, 9, size=shape).astype(dtype)


for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for lo, up, shp in ((-1, 0, (4, 4)), (0, -1, (2, 3, 5)), (1, 2, (2, 2, 5, 3)),
                        (0, 0, (3, 4)), (-1, -1, (2, 4, 3))):
        more("MatrixBandPart_%d_%d_r%d_%s" % (lo, up, len(shp), sfx),
             "MatrixBandPart",
             (lambda l_, u_: lambda a: tf.linalg.band_part(a, l_, u_))(lo, up),
             [r9b(*shp, dtype=dt)],
             extra=[np.array(lo, np.int64), np.array(up, np.int64)], grad=fl)
more("MatrixBandPart_i32bands", "MatrixBandPart",
     lambda a: tf.raw_ops.MatrixBandPart(input=a, num_lower=np.int32(2),
                                         num_upper=np.int32(1)),
     [r9b(3, 6)], extra=[np.array(2, np.int32), np.array(1, np.int32)])
more("MatrixBandPart_bool", "MatrixBandPart",
     lambda a: tf.linalg.band_part(a, 1, 0), [r9b(4, 3) > 0],
     extra=[np.array(1, np.int64), np.array(0, np.int64)], grad=False)
more("MatrixBandPart_empty", "MatrixBandPart",
     lambda a: tf.linalg.band_part(a, -1, 0), [np.zeros((2, 3, 0), np.float32)],
     extra=[np.array(-1, np.int64), np.array(0, np.int64)])
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for nm, sh, ax, shp in (("s2a0", 2, 0, (5, 3)), ("neg", -3, 1, (2, 4)),
                            ("big", 11, -1, (3, 4)),
                            ("vec", [1, -2], [0, 2], (3, 2, 4)),
                            ("twice", [2, 3], [1, 1], (2, 6))):
        it = np.int64 if nm == "big" else np.int32
        more("Roll_%s_%s" % (nm, sfx), "Roll",
             (lambda s_, a_: lambda x: tf.roll(x, s_, a_))(sh, ax),
             [r9b(*shp, dtype=dt)],
             extra=[np.array(sh, it), np.array(ax, it)], grad=fl)
more("Roll_bool", "Roll", lambda x: tf.roll(x, 1, 0), [r9b(4, 2) > 0],
     extra=[np.array(1, np.int32), np.array(0, np.int32)], grad=False)
more("Roll_empty", "Roll", lambda x: tf.roll(x, 1, 1),
     [np.zeros((3, 0), np.float32)],
     extra=[np.array(1, np.int32), np.array(1, np.int32)])
more("Roll_0d_axis_vec1", "Roll", lambda x: tf.roll(x, [7], [0]),
     [r9b(5)], extra=[np.array([7], np.int32), np.array([0], np.int32)])

for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for nm, sd, bd, shp, lens, lt in (
            ("s1b0", 1, 0, (3, 5), [2, 5, 0], np.int32),
            ("s0b1", 0, 1, (4, 3, 2), [4, 1, 3], np.int64),
            ("s2b0", 2, 0, (2, 3, 4), [3, 4], np.int64),
            ("s1b2", 1, 2, (2, 4, 3, 2), [1, 4, 2], np.int32)):
        more("ReverseSequence_%s_%s" % (nm, sfx), "ReverseSequence",
             (lambda l_, s_, b_: lambda a: tf.reverse_sequence(
                 a, l_, seq_axis=s_, batch_axis=b_))(np.array(lens, lt), sd,
                                                      bd),
             [r9b(*shp, dtype=dt)], {"seq_dim": sd, "batch_dim": bd},
             extra=[np.array(lens, lt)], grad=fl)
more("ReverseSequence_bool", "ReverseSequence",
     lambda a: tf.reverse_sequence(a, np.array([2, 1], np.int64), 1, 0),
     [r9b(2, 3) > 0], {"seq_dim": 1, "batch_dim": 0},
     extra=[np.array([2, 1], np.int64)], grad=False)
more("ReverseSequence_empty", "ReverseSequence",
     lambda a: tf.reverse_sequence(a, np.array([0, 0], np.int32), 1, 0),
     [np.zeros((2, 0), np.float32)], {"seq_dim": 1, "batch_dim": 0},
     extra=[np.array([0, 0], np.int32)])

for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    for nm, a, b in (("bcast", [2, 1, 3], [4, 3]), ("same", [3, 1], [3, 1]),
                     ("zero", [0, 1], [1, 5]), ("empty", [], [2, 2])):
        more("BroadcastArgs_%s_%s" % (nm, sfx), "BroadcastArgs",
             lambda a_, b_: raw.BroadcastArgs(s0=a_, s1=b_),
             [np.array(a, dt), np.array(b, dt)], grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for num in (1, 2, 7):
        more("LinSpace_n%d_%s" % (num, sfx), "LinSpace",
             (lambda n_: lambda a_, b_: raw.LinSpace(start=a_, stop=b_,
                                                     num=n_))(num),
             [np.array(-1.5, dt), np.array(2.25, dt)],
             extra=[np.array(num, np.int32)], grad=False)
    # tf.linspace: BroadcastArgs, BroadcastTo, Range, ... (TF 2.21)
    graph_case("LinSpace_tf_linspace_" + sfx, "BroadcastArgs", "int32",
               (lambda d_: lambda: [tf.linspace(
                   tf.constant(np.array([0.0, -1.0], d_)),
                   tf.constant(np.array(3.0, d_)), 5, axis=1)])(dt),
               also=["BroadcastTo", "Range"])
more("LinSpace_n4_i64num", "LinSpace",
     lambda a_, b_: raw.LinSpace(start=a_, stop=b_, num=np.int64(4)),
     [np.array(3.0, np.float32), np.array(-3.0, np.float32)],
     extra=[np.array(4, np.int64)], grad=False)

for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    x = (RS9B.uniform(0.5, 1.5, size=(3, 4)) * RS9B.choice([-1, 1], (3, 4))
         ).astype(dt) if fl else RS9B.randint(-3, 4, size=(3, 4)).astype(dt)
    for ax, ex, rv in ((1, False, False), (0, True, False), (-1, False, True),
                       (0, True, True)):
        more("Cumprod_ax%d%s%s_%s" % (ax, "_excl" if ex else "",
                                      "_rev" if rv else "", sfx), "Cumprod",
             (lambda a_, e_, r_: lambda a: tf.math.cumprod(
                 a, axis=a_, exclusive=e_, reverse=r_))(ax, ex, rv), [x],
             {"axis": ax, "exclusive": ex, "reverse": rv}, grad=fl)
more("Cumprod_zero_f32", "Cumprod", lambda a: tf.math.cumprod(a, axis=1),
     [np.array([[1.5, 0.0, 2.0, -1.0], [0.5, 2.0, 0.0, 0.0]], np.float32)],
     {"axis": 1})
more("Cumprod_rank3_f64", "Cumprod",
     lambda a: tf.math.cumprod(a, axis=1, exclusive=True),
     [RS9B.uniform(0.5, 1.5, size=(2, 3, 4))], {"axis": 1, "exclusive": True})
more("Cumprod_empty", "Cumprod", lambda a: tf.math.cumprod(a, axis=0),
     [np.zeros((0, 3), np.float32)], {"axis": 0}, grad=False)

for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for nm, fn in (("Update", tf.tensor_scatter_nd_update),
                   ("Add", tf.tensor_scatter_nd_add),
                   ("Sub", tf.tensor_scatter_nd_sub)):
        more("TensorScatter%s_rows_%s" % (nm, sfx), "TensorScatter" + nm, fn,
             [r9b(5, 3, dtype=dt), np.array([[3], [0]], np.int32),
              r9b(2, 3, dtype=dt)], grad=fl)
        more("TensorScatter%s_elems_%s" % (nm, sfx), "TensorScatter" + nm,
             fn, [r9b(2, 4, dtype=dt), np.array([[1, 2], [0, 0], [1, 0]],
                                                np.int64),
                  r9b(3, dtype=dt)], grad=fl)
more("TensorScatterAdd_repeat_f32", "TensorScatterAdd",
     tf.tensor_scatter_nd_add,
     [r9b(3, 2), np.array([[1], [1], [0]], np.int32), r9b(3, 2)])
more("TensorScatterUpdate_bool", "TensorScatterUpdate",
     tf.tensor_scatter_nd_update,
     [r9b(3, 2) > 0, np.array([[2], [0]], np.int32), r9b(2, 2) > 0],
     grad=False)
more("TensorScatterUpdate_empty", "TensorScatterUpdate",
     tf.tensor_scatter_nd_update,
     [r9b(3, 2), np.zeros((0, 1), np.int32), np.zeros((0, 2), np.float32)],
     grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for kk, shp in ((0, (3, 4)), (1, (2, 3, 4)), (-2, (4, 3))):
        ks = "k%d" % kk if kk >= 0 else "km%d" % -kk
        more("MatrixDiagPartV3_%s_%s" % (ks, sfx), "MatrixDiagPartV3",
             (lambda k_: lambda a: tf.linalg.diag_part(a, k=k_))(kk),
             [r9b(*shp, dtype=dt)],
             extra=[np.array(kk, np.int32), np.array(0, dt)], grad=fl)
        ln = min(shp[-2] + min(kk, 0), shp[-1] - max(kk, 0))
        more("MatrixDiagV3_%s_%s" % (ks, sfx), "MatrixDiagV3",
             (lambda k_: lambda a: tf.linalg.diag(
                 a, k=k_, padding_value=3))(kk),
             [r9b(*(shp[:-2] + (ln,)), dtype=dt)],
             extra=[np.array(kk, np.int32), np.array(-1, np.int32),
                    np.array(-1, np.int32), np.array(3, dt)], grad=fl)
        more("MatrixSetDiagV3_%s_%s" % (ks, sfx), "MatrixSetDiagV3",
             (lambda k_: lambda a, b: tf.linalg.set_diag(a, b, k=k_))(kk),
             [r9b(*shp, dtype=dt), r9b(*(shp[:-2] + (ln,)), dtype=dt)],
             extra=[np.array(kk, np.int32)], grad=fl)


def _ssg(dt, shp, sl):
    """TF's gradient of x[sl] (tf.gradients: StridedSliceGrad with the
    slice's masks), dy drawn for the slice's shape"""
    def build():
        x = tf.constant(r9b(*shp, dtype=dt), name="x")
        y = x.__getitem__(sl)
        dy = tf.constant(r9b(*y.shape.as_list(), dtype=dt), name="dy")
        return [tf.gradients(y, x, grad_ys=dy)[0]]
    return build


for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for nm, shp, sl in (
            ("step", (5, 4), (slice(1, None), slice(None, None, 2))),
            ("shrink", (3, 4, 2), (1, slice(None, None, -1))),
            ("ellipsis_newaxis", (2, 3, 4), (Ellipsis, None, slice(1, 3))),
            ("neg", (6,), (slice(-2, -6, -2),))):
        graph_case("StridedSliceGrad_%s_%s" % (nm, sfx), "StridedSliceGrad",
                   np.dtype(dt).name, _ssg(dt, shp, sl))

# ---- session 10: GatherV2 axis != 0 / batch_dims (forward and TF's
# _GatherV2Grad), ExpandDims' one-element dim tensor --
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for nm, ax, bd, ishp in (("ax1", 1, 0, (2, 2)), ("ax2_b1", 2, 1, (2, 3)),
                             ("ax1_b1", 1, 1, (2, 4)),
                             ("ax3_b2", 3, 2, (2, 3, 2)),
                             ("bneg", 2, -1, (2, 3, 2))):
        more("GatherV2_%s_%s" % (nm, sfx), "GatherV2",
             (lambda a_, b_: lambda x, i: tf.gather(x, i, axis=a_,
                                                   batch_dims=b_))(ax, bd),
             [r9b(2, 3, 4, 5, dtype=dt),
              np.random.RandomState(len(ishp) + ax).randint(
                  0, (2, 3, 4, 5)[ax], size=ishp).astype(
                      np.int64 if ax == 3 else np.int32)],
             {"axis": ax, "batch_dims": bd})
more("ExpandDims_dim1elem_f32", "ExpandDims",
     lambda x: raw.ExpandDims(input=x, axis=tf.constant([1])), [r9b(2, 3)],
     {"axis": 1})

# ---- ops10c: array ops of real exports (issue 22) --------------------------
RS10C = np.random.RandomState(1010)


def r10c(*shape, dtype=np.float32):
    if np.dtype(dtype).kind == "f":
        return RS10C.uniform(-2.0, 2.0, size=shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return RS10C.randint(0, 2, size=shape).astype(bool)
    return RS10C.randint(-9, 9, size=shape).astype(dtype)


for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for shp in ((3,), (2, 3), (2, 1, 2)):
        more("Diag_r%d_%s" % (len(shp), sfx), "Diag",
             lambda a: raw.Diag(diagonal=a), [r10c(*shp, dtype=dt)], grad=fl)
        more("DiagPart_r%d_%s" % (len(shp), sfx), "DiagPart",
             lambda a: raw.DiagPart(input=a),
             [r10c(*(shp + shp), dtype=dt)], grad=fl)
more("Diag_empty", "Diag", lambda a: raw.Diag(diagonal=a),
     [np.zeros((0,), np.float32)], grad=False)
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    more("UnravelIndex_vec_" + sfx, "UnravelIndex",
         lambda i, d: raw.UnravelIndex(indices=i, dims=d),
         [np.array([0, 22, 41, 7, 59], dt), np.array([3, 4, 5], dt)],
         grad=False)
    more("UnravelIndex_scalar_" + sfx, "UnravelIndex",
         lambda i, d: raw.UnravelIndex(indices=i, dims=d),
         [np.array(13, dt), np.array([2, 7], dt)], grad=False)
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    for nm, src, dst, x in (
            ("nhwc_nchw", "NHWC", "NCHW", [8, 32, 24, 3]),
            ("nchw_nhwc", "NCHW", "NHWC", [8, 3, 32, 24]),
            ("spatial", "NHWC", "NCHW", [32, 24]),
            ("rows", "NHWC", "NCHW", [[0, 0], [1, 2], [3, 4], [0, 0]]),
            ("rows_spatial", "NCHW", "NHWC", [[1, 2], [3, 4]]),
            ("ndhwc", "NDHWC", "NCDHW", [4, 5, 6, 7, 2]),
            ("hwnc", "NHWC", "HWNC", [1, 2, 3, 4])):
        more("DataFormatVecPermute_%s_%s" % (nm, sfx),
             "DataFormatVecPermute",
             (lambda s_, d_: lambda a: raw.DataFormatVecPermute(
                 x=a, src_format=s_, dst_format=d_))(src, dst),
             [np.array(x, dt)], {"src_format": src, "dst_format": dst},
             grad=False)
    for nm, src, dst, x in (
            ("nhwc_nchw", "NHWC", "NCHW", [-4, -3, -2, -1, 0, 1, 2, 3]),
            ("scalar", "NHWC", "NCHW", 1),
            ("mat", "NCHW", "NHWC", [[0, 1], [2, 3]]),
            ("ndhwc", "NDHWC", "NCDHW", [0, 1, 2, 3, 4, -1])):
        more("DataFormatDimMap_%s_%s" % (nm, sfx), "DataFormatDimMap",
             (lambda s_, d_: lambda a: raw.DataFormatDimMap(
                 x=a, src_format=s_, dst_format=d_))(src, dst),
             [np.array(x, dt)], {"src_format": src, "dst_format": dst},
             grad=False)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for nm, shp, bs, pad in (("b2", (1, 4, 4, 2), 2, [[0, 0], [0, 0]]),
                             ("b2pad", (2, 3, 5, 1), 2, [[1, 0], [0, 1]]),
                             ("b3", (1, 3, 6, 2), 3, [[0, 0], [1, 2]])):
        pv = np.array(pad, np.int64 if nm == "b3" else np.int32)
        more("SpaceToBatch_%s_%s" % (nm, sfx), "SpaceToBatch",
             (lambda p_, b_: lambda a: raw.SpaceToBatch(
                 input=a, paddings=p_, block_size=b_))(pv, bs),
             [r10c(*shp, dtype=dt)], {"block_size": bs}, extra=[pv],
             grad=fl)
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    more("ScatterNdNonAliasingAdd_rows_" + sfx, "ScatterNdNonAliasingAdd",
         lambda a, i, u: raw.ScatterNdNonAliasingAdd(input=a, indices=i,
                                                     updates=u),
         [r10c(4, 3, dtype=dt), np.array([[2], [0], [2]], np.int32),
          r10c(3, 3, dtype=dt)], grad=fl, dg_op="TensorScatterAdd")
    more("ScatterNdNonAliasingAdd_elems_" + sfx, "ScatterNdNonAliasingAdd",
         lambda a, i, u: raw.ScatterNdNonAliasingAdd(input=a, indices=i,
                                                     updates=u),
         [r10c(2, 3, dtype=dt), np.array([[1, 2], [0, 0]], np.int64),
          r10c(2, dtype=dt)], grad=fl, dg_op="TensorScatterAdd")
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    for nm, shp, nth, rev in (("n0", (3, 5), 0, False),
                              ("n2_rev", (2, 3, 4), 2, True),
                              ("vec", (6,), 3, False),
                              ("last_rev", (4, 3), 2, True)):
        more("NthElement_%s_%s" % (nm, sfx), "NthElement",
             (lambda n_, r_: lambda a: raw.NthElement(
                 input=a, n=n_, reverse=r_))(np.int32(nth), rev),
             [r10c(*shp, dtype=dt)], {"reverse": rev},
             extra=[np.array(nth, np.int32)], grad=fl)
# ties: dy shared evenly by the equal entries (TF's _NthElementGrad)
more("NthElement_ties_f32", "NthElement",
     lambda a: raw.NthElement(input=a, n=np.int32(1)),
     [np.array([[1.0, 3.0, 1.0, 2.0], [2.0, 2.0, 2.0, 0.5]], np.float32)],
     extra=[np.array(1, np.int32)])
for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    for ta, tb in ((False, False), (True, False), (False, True),
                   (True, True)):
        more("MatMul_%s%s_%s" % ("t" if ta else "n", "t" if tb else "n",
                                 sfx), "MatMul",
             (lambda a_, b_: lambda a, b: tf.matmul(
                 a, b, transpose_a=a_, transpose_b=b_))(ta, tb),
             [r10c(*((4, 3) if ta else (3, 4)), dtype=dt),
              r10c(*((2, 4) if tb else (4, 2)), dtype=dt)],
             {"transpose_a": ta, "transpose_b": tb}, grad=False)
    more("MatMul_empty_" + sfx, "MatMul", tf.matmul,
         [np.zeros((2, 0), dt), np.zeros((0, 3), dt)], grad=False)
    # not fused: _FusedMatMul is float only
    more("MatMul_biasadd_" + sfx, "MatMul",
         lambda a, b, c: tf.nn.relu(tf.nn.bias_add(tf.matmul(a, b), c)),
         [r10c(3, 4, dtype=dt), r10c(4, 2, dtype=dt), r10c(2, dtype=dt)],
         grad=False, also=["BiasAdd", "Relu"])

# linear algebra on batches of matrices (well conditioned: dominant
# diagonals, symmetric positive definite for Cholesky)


def wellcond(*shape, dtype=np.float32):
    a = RS10C.uniform(-1.0, 1.0, size=shape)
    return (a + 2.0 * shape[-1] ** 0.5 * np.eye(shape[-1])).astype(dtype)


def spd(*shape, dtype=np.float32):
    a = RS10C.uniform(-1.0, 1.0, size=shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
            ).astype(dtype)


for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for nm, shp in (("3", (3, 3)), ("b2x4", (2, 4, 4)), ("1", (1, 1))):
        for adj in (False, True):
            more("MatrixInverse_%s%s_%s" % (nm, "_adj" if adj else "", sfx),
                 "MatrixInverse",
                 (lambda a_: lambda a: raw.MatrixInverse(input=a,
                                                         adjoint=a_))(adj),
                 [wellcond(*shp, dtype=dt)], {"adjoint": adj})
        more("MatrixDeterminant_%s_%s" % (nm, sfx), "MatrixDeterminant",
             tf.linalg.det, [wellcond(*shp, dtype=dt) - (
                 1.5 * np.eye(shp[-1], dtype=dt))])
        more("LogMatrixDeterminant_%s_%s" % (nm, sfx),
             "LogMatrixDeterminant",
             lambda a: list(raw.LogMatrixDeterminant(input=a)),
             [wellcond(*shp, dtype=dt) * np.where(
                 np.arange(shp[-1]) == 0, -1.0, 1.0).astype(dt)],
             n_out=2, grad=False)
        # the gradient of log |det| (output 1)
        more("LogMatrixDeterminant_%s_logdet_%s" % (nm, sfx),
             "LogMatrixDeterminant",
             lambda a: raw.LogMatrixDeterminant(input=a)[1],
             [wellcond(*shp, dtype=dt)], y_out=1)
        more("Cholesky_%s_%s" % (nm, sfx), "Cholesky", tf.linalg.cholesky,
             [spd(*shp, dtype=dt)])
    for nm, shp, k in (("3x2", (3, 3), 2), ("b2x4x3", (2, 4, 4), 3),
                       ("1x1", (1, 1), 1)):
        for adj in (False, True):
            more("MatrixSolve_%s%s_%s" % (nm, "_adj" if adj else "", sfx),
                 "MatrixSolve",
                 (lambda a_: lambda a, b: raw.MatrixSolve(
                     matrix=a, rhs=b, adjoint=a_))(adj),
                 [wellcond(*shp, dtype=dt),
                  r10c(*(shp[:-1] + (k,)), dtype=dt)], {"adjoint": adj})
            for lo in (True, False):
                more("MatrixTriangularSolve_%s%s%s_%s" % (
                    nm, "_lower" if lo else "_upper", "_adj" if adj else "",
                    sfx), "MatrixTriangularSolve",
                    (lambda a_, l_: lambda a, b: raw.MatrixTriangularSolve(
                        matrix=a, rhs=b, lower=l_, adjoint=a_))(adj, lo),
                    [wellcond(*shp, dtype=dt),
                     r10c(*(shp[:-1] + (k,)), dtype=dt)],
                    {"adjoint": adj, "lower": lo})
    # batch dims broadcasting (TF 2.2+): gradients summed back
    for nm, sa, sb in (("bcast_a", (3, 3), (2, 3, 2)),
                       ("bcast_both", (2, 1, 3, 3), (4, 3, 2))):
        for lo in (True, False):
            more("MatrixTriangularSolve_%s%s_%s" % (
                nm, "" if lo else "_upper", sfx), "MatrixTriangularSolve",
                (lambda l_: lambda a, b: raw.MatrixTriangularSolve(
                    matrix=a, rhs=b, lower=l_, adjoint=not l_))(lo),
                [wellcond(*sa, dtype=dt), r10c(*sb, dtype=dt)],
                {"lower": lo, "adjoint": not lo})
more("MatrixDeterminant_singular", "MatrixDeterminant", tf.linalg.det,
     [np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)], grad=False)
more("LogMatrixDeterminant_singular", "LogMatrixDeterminant",
     lambda a: list(raw.LogMatrixDeterminant(input=a)),
     [np.array([[1.0, 2.0], [2.0, 4.0]], F64)], n_out=2, grad=False)
more("MatrixInverse_empty", "MatrixInverse", tf.linalg.inv,
     [np.zeros((2, 0, 0), np.float32)], grad=False)

# the decompositions, forward only: singular and eigen vectors are unique
# up to sign, so their cases compare |u|, |v| (sign-invariant per column)
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for nm, shp in (("4x3", (4, 3)), ("3x4", (3, 4)), ("b2x3x3", (2, 3, 3))):
        for full in (False, True):
            fs = "_full" if full else ""
            more("Qr_%s%s_%s" % (nm, fs, sfx), "Qr",
                 (lambda f_: lambda a: list(raw.Qr(
                     input=a, full_matrices=f_)))(full),
                 [r10c(*shp, dtype=dt)], {"full_matrices": full}, n_out=2,
                 grad=False)
            more("Svd_%s%s_%s" % (nm, fs, sfx), "Svd",
                 (lambda f_: lambda a: (lambda s_, u_, v_: [
                     s_, tf.abs(u_), tf.abs(v_)])(*raw.Svd(
                         input=a, compute_uv=True, full_matrices=f_)))(full),
                 [r10c(*shp, dtype=dt)], {"full_matrices": full}, n_out=3,
                 grad=False, also=["Abs"])
        # TF's _QrGrad through q (output 0) and through r (output 1)
        for out, on in ((0, "q"), (1, "r")):
            for full in ((False, True) if shp[-2] <= shp[-1] else (False,)):
                more("Qr_%s%s_grad_%s_%s" % (nm, "_full" if full else "", on,
                                             sfx), "Qr",
                     (lambda o_, f_: lambda a: raw.Qr(
                         input=a, full_matrices=f_)[o_])(out, full),
                     [r10c(*shp, dtype=dt)], {"full_matrices": full},
                     y_out=out)
        # TF's _SvdGrad through s (sign-invariant: u diag(dy) v^T)
        for uv in (True, False):
            more("Svd_%s_grad_s%s_%s" % (nm, "" if uv else "_no_uv", sfx),
                 "Svd", (lambda u_: lambda a: raw.Svd(
                     input=a, compute_uv=u_)[0])(uv),
                 [r10c(*shp, dtype=dt)], {"compute_uv": uv})
        more("Svd_%s_s_only_%s" % (nm, sfx), "Svd",
             lambda a: raw.Svd(input=a, compute_uv=False)[0],
             [r10c(*shp, dtype=dt)], {"compute_uv": False}, grad=False)
    for nm, shp in (("3", (3, 3)), ("b2x4", (2, 4, 4))):
        x = r10c(*shp, dtype=dt)
        sym = (x + np.swapaxes(x, -1, -2)).astype(dt)
        lowonly = np.tril(sym)  # the upper triangle is not read
        more("SelfAdjointEigV2_%s_%s" % (nm, sfx), "SelfAdjointEigV2",
             lambda a: (lambda e_, v_: [e_, tf.abs(v_)])(
                 *raw.SelfAdjointEigV2(input=a, compute_v=True)),
             [lowonly], n_out=2, grad=False, also=["Abs"])
        # the gradient of the eigenvalues (sign-invariant: v diag(dy) v^T)
        for cv in (True, False):
            more("SelfAdjointEigV2_%s_grad_e%s_%s" % (
                nm, "" if cv else "_no_v", sfx), "SelfAdjointEigV2",
                (lambda c_: lambda a: raw.SelfAdjointEigV2(
                    input=a, compute_v=c_)[0])(cv),
                [lowonly], {"compute_v": cv})
        more("SelfAdjointEigV2_%s_e_only_%s" % (nm, sfx),
             "SelfAdjointEigV2",
             lambda a: raw.SelfAdjointEigV2(input=a, compute_v=False)[0],
             [sym], {"compute_v": False}, grad=False)

# ---- ops10b (issue 22): the special functions ----------------------------
RS10B = np.random.RandomState(1010)


def r10(*shape, dtype=np.float32, lo=-2.0, hi=2.0):
    return RS10B.uniform(lo, hi, size=shape).astype(dtype)


SPECIAL10 = np.concatenate([SPECIAL, np.array(
    [1, -1, 0.5, 2, -2.5, -3, 0.999, 1e-30, 12], np.float32)])
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for nm, fn, lo, hi in (
            ("Lgamma", tf.math.lgamma, 0.2, 6),
            ("Digamma", tf.math.digamma, 0.2, 6),
            ("Erfinv", tf.math.erfinv, -0.95, 0.95),
            ("Ndtri", tf.math.ndtri, 0.02, 0.98),
            ("BesselI0e", tf.math.bessel_i0e, -12, 12),
            ("BesselI1e", tf.math.bessel_i1e, -12, 12)):
        more("%s_%s" % (nm, sfx), nm, fn, [r10(3, 5, dtype=dt, lo=lo, hi=hi)])
        more("%s_special_%s" % (nm, sfx), nm, fn,
             [SPECIAL10.astype(dt)], grad=False)
    # the negative half-line (the reflection), Ndtri's tails, Bessel at 0
    more("Lgamma_neg_" + sfx, "Lgamma", tf.math.lgamma,
         [np.array([-0.5, -1.25, -2.75, -7.1, -0.01], dt)])
    more("Digamma_neg_" + sfx, "Digamma", tf.math.digamma,
         [np.array([-0.5, -1.25, -2.75, -3.4, -0.01], dt)])
    more("Ndtri_tails_" + sfx, "Ndtri", tf.math.ndtri,
         [np.array([1e-5, 1e-12, 0.1, 0.9, 1 - 1e-6], dt)])
    more("BesselI1e_zero_" + sfx, "BesselI1e", tf.math.bessel_i1e,
         [np.array([0.0, 1.0, -3.0, 9.0], dt)])
    more("Lgamma_empty_" + sfx, "Lgamma", tf.math.lgamma,
         [np.zeros((0, 3), dt)], grad=False)
    more("Digamma_0d_" + sfx, "Digamma", tf.math.digamma,
         [np.asarray(2.5, dt)])
    # the broadcasting ones: polygamma(a, x) (x's gradient only), zeta(x,
    # q) (q's), the incomplete gamma functions (no gradient: TF's for a
    # is IgammaGradA, which dgrun lacks)
    more("Polygamma_" + sfx, "Polygamma", tf.math.polygamma,
         [np.array([0, 1, 2, 3], dt), r10(3, 4, dtype=dt, lo=0.3, hi=5)])
    more("Polygamma_special_" + sfx, "Polygamma", tf.math.polygamma,
         [np.array([1.5, -1, 1, 2, 0, 1], dt),
          np.array([2, 2, -1.5, 0, -2, np.nan], dt)], grad=False)
    more("Zeta_" + sfx, "Zeta", tf.math.zeta,
         [r10(3, 4, dtype=dt, lo=1.5, hi=6), r10(4, dtype=dt, lo=0.5, hi=3)])
    more("Zeta_special_" + sfx, "Zeta", tf.math.zeta,
         [np.array([1, 0.5, 2, 3, 2, 4, 30], dt),
          np.array([1, 1, -2, -2, -1.5, 1e-3, 2], dt)], grad=False)
    for nm, fn in (("Igamma", tf.math.igamma), ("Igammac", tf.math.igammac)):
        more(nm + "_" + sfx, nm, fn,
             [r10(3, 4, dtype=dt, lo=0.2, hi=6),
              r10(4, dtype=dt, lo=0.05, hi=9)], grad=False)
        more(nm + "_special_" + sfx, nm, fn,
             [np.array([1, 1, 0, -1, 2, 2, 5, 0.5, np.nan], dt),
              np.array([0, np.inf, 1, 1, -1, 30, 4.5, 1e-8, 1], dt)],
             grad=False)

# ---- ops10b: Mod, ApproximateEqual, the bitwise ops ----------------------
for dt, sfx in ((np.float32, "f32"), (F64, "f64"), (np.int32, "i32"),
                (np.int64, "i64")):
    fl = dt in (np.float32, F64)
    a = np.array([[7, -7, 6, -6, 0, 5]], dt) + (0.5 if fl else 0)
    b = np.array([[2], [-3]], dt)
    more("Mod_" + sfx, "Mod", lambda x_, y_: raw.Mod(x=x_, y=y_), [a, b],
         grad=False, dg_op="TruncateMod")
    if fl:
        x = r10(3, 4, dtype=dt)
        y = x + np.array([0, 1e-6, 2e-5, -3e-6], dt)
        for tol in (1e-5, 0.1):
            more("ApproximateEqual_%g_%s" % (tol, sfx), "ApproximateEqual",
                 (lambda t_: lambda x_, y_: raw.ApproximateEqual(
                     x=x_, y=y_, tolerance=t_))(tol), [x, y],
                 {"tolerance": tol}, grad=False)
        continue
    bits = 32 if dt == np.int32 else 64
    ii = np.iinfo(dt)
    x = np.array([[0, 1, -1, 5, ii.min, ii.max, 12345, -98765]], dt)
    y = np.array([[3], [-1], [bits - 1], [bits], [bits + 7], [-70]], dt)
    for nm, fn in (("BitwiseAnd", tf.bitwise.bitwise_and),
                   ("BitwiseOr", tf.bitwise.bitwise_or),
                   ("BitwiseXor", tf.bitwise.bitwise_xor),
                   ("LeftShift", tf.bitwise.left_shift),
                   ("RightShift", tf.bitwise.right_shift)):
        more("%s_%s" % (nm, sfx), nm, fn, [x, y], grad=False)
        more("%s_0d_%s" % (nm, sfx), nm, fn,
             [np.asarray(-77, dt), np.asarray(2, dt)], grad=False)
    more("Invert_" + sfx, "Invert", tf.bitwise.invert, [x], grad=False)
    more("Invert_empty_" + sfx, "Invert", tf.bitwise.invert,
         [np.zeros((0, 2), dt)], grad=False)

# CumulativeLogsumexp: every exclusive / reverse, -inf and large values
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    x = r10(3, 5, dtype=dt, lo=-3, hi=3)
    for ax, ex, rv in ((1, False, False), (0, True, False), (-1, False, True),
                       (1, True, True)):
        more("CumulativeLogsumexp_ax%d%s%s_%s" % (
            ax, "_excl" if ex else "", "_rev" if rv else "", sfx),
            "CumulativeLogsumexp",
            (lambda a_, e_, r_: lambda a: tf.math.cumulative_logsumexp(
                a, axis=a_, exclusive=e_, reverse=r_))(ax, ex, rv), [x],
            {"axis": ax, "exclusive": ex, "reverse": rv})
    more("CumulativeLogsumexp_special_" + sfx, "CumulativeLogsumexp",
         lambda a: tf.math.cumulative_logsumexp(a, axis=0),
         [np.array([-np.inf, -np.inf, 1, 800, -800, np.inf, 3], dt)],
         {"axis": 0}, grad=False)
    more("CumulativeLogsumexp_empty_" + sfx, "CumulativeLogsumexp",
         lambda a: tf.math.cumulative_logsumexp(a, axis=1),
         [np.zeros((0, 3), dt)], {"axis": 1}, grad=False)

# TF's stateless random numbers (V1: shape, seed pair): several seeds and
# shapes, odd sizes (Philox's 4-word blocks), both seed dtypes
_SEEDS = (np.array([1, 2], np.int64), np.array([-5, 123456789012], np.int64),
          np.array([7, -3], np.int32), np.array([0, 0], np.int32))
_SHAPES = ((7,), (3, 5), (2, 3, 3), (0, 4), (1,))
for dt, sfx in ((np.float32, "f32"), (F64, "f64")):
    for nm, op in (("RandomUniform", raw.StatelessRandomUniform),
                   ("RandomNormal", raw.StatelessRandomNormal),
                   ("TruncatedNormal", raw.StatelessTruncatedNormal)):
        for k, (sd, shp) in enumerate(zip(_SEEDS + _SEEDS[:1], _SHAPES)):
            more("Stateless%s_%d_%s" % (nm, k, sfx), "Stateless" + nm,
                 (lambda o_, d_: lambda sh, se: o_(
                     shape=sh, seed=se, dtype=d_))(op, tf.as_dtype(dt)),
                 [np.array(shp, np.int32), sd], grad=False)

for dt, sfx in ((np.int32, "i32"), (np.int64, "i64")):
    for k, (sd, shp, lo, hi) in enumerate(zip(
            _SEEDS, _SHAPES, (0, -7, -2**31 if dt == np.int32 else -2**62, 5),
            (10, 1000, 2**31 - 1 if dt == np.int32 else 2**62, 6))):
        more("StatelessRandomUniformInt_%d_%s" % (k, sfx),
             "StatelessRandomUniformInt",
             lambda sh, se, a, b: raw.StatelessRandomUniformInt(
                 shape=sh, seed=se, minval=a, maxval=b),
             [np.array(shp, np.int32), sd, np.asarray(lo, dt),
              np.asarray(hi, dt)], grad=False)

# ---- session 10: NonMaxSuppressionV3/V4/V5 (TF's CPU kernel: ties in
# its priority queue's order, corners in either order, soft NMS) ---------
_nms_rs = np.random.RandomState(1234)


def _nms_boxes(n, flip=False):
    lo = _nms_rs.uniform(0, 6, (n, 2))
    b = np.concatenate([lo, lo + _nms_rs.uniform(0.5, 3, (n, 2))], 1)
    if flip:  # y1 > y2 and x1 > x2 on every other box
        b[::2] = b[::2][:, [2, 3, 0, 1]]
    return b.astype(np.float32)


_nms_ties = np.round(_nms_rs.uniform(0, 1, 40) * 4) / 4  # many equal scores
for nm, n, mo, iou_t, st, flip, scores in (
        ("basic", 30, 10, 0.5, 0.1, False, None),
        ("ties", 40, 25, 0.3, 0.0, True, _nms_ties),
        ("thresh", 30, 30, 0.6, 0.5, False, None),
        ("none", 12, 0, 0.5, 0.0, False, None),
        ("iou0", 20, 20, 0.0, -1.0, True, None)):
    b = _nms_boxes(n, flip)
    sc = (scores if scores is not None else
          _nms_rs.uniform(0, 1, n)).astype(np.float32)
    more("NonMaxSuppressionV3_%s" % nm, "NonMaxSuppressionV3",
         (lambda m_, i_, s_: lambda bx, s: raw.NonMaxSuppressionV3(
             boxes=bx, scores=s, max_output_size=m_, iou_threshold=i_,
             score_threshold=s_))(mo, iou_t, st), [b, sc],
         extra=[np.array(mo, np.int32), np.array(iou_t, np.float32),
                np.array(st, np.float32)], grad=False)
    for pad in (False, True):
        more("NonMaxSuppressionV4_%s%s" % (nm, "_pad" if pad else ""),
             "NonMaxSuppressionV4",
             (lambda m_, i_, s_, p_: lambda bx, s: raw.NonMaxSuppressionV4(
                 boxes=bx, scores=s, max_output_size=m_, iou_threshold=i_,
                 score_threshold=s_, pad_to_max_output_size=p_))(
                     mo, iou_t, st, pad), [b, sc],
             {"pad_to_max_output_size": pad},
             extra=[np.array(mo, np.int32), np.array(iou_t, np.float32),
                    np.array(st, np.float32)], grad=False, n_out=2)
    for sig in (0.0, 0.5):
        more("NonMaxSuppressionV5_%s_s%g" % (nm, sig), "NonMaxSuppressionV5",
             (lambda m_, i_, s_, g_: lambda bx, s: raw.NonMaxSuppressionV5(
                 boxes=bx, scores=s, max_output_size=m_, iou_threshold=i_,
                 score_threshold=s_, soft_nms_sigma=g_,
                 pad_to_max_output_size=True))(mo, iou_t, st, sig), [b, sc],
             {"pad_to_max_output_size": True},
             extra=[np.array(mo, np.int32), np.array(iou_t, np.float32),
                    np.array(st, np.float32), np.array(sig, np.float32)],
             grad=False, n_out=3)

DT = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
      np.dtype(np.int32): "int32", np.dtype(np.int64): "int64",
      np.dtype(np.bool_): "bool"}


def jval(a):
    a = np.asarray(a)
    if a.dtype.kind == "b":
        return [bool(v) for v in a.ravel()]
    if a.dtype.kind == "f":
        return [None if False else (float(v) if np.isfinite(v) else str(v))
                for v in a.ravel()]
    return [int(v) for v in a.ravel()]


def dg_attr(v):
    return v


def record(c):
    g = tf.Graph()
    with g.as_default():
        ins = []
        for i, a in enumerate(c["inputs"]):
            if i < int(c["var"]):
                ins.append(tf1.Variable(a, name="in%d" % i,
                                        use_resource=False))
            else:
                ins.append(tf.constant(a, name="in%d" % i))
        y = c["fn"](*ins)
        ys = list(y) if isinstance(y, (list, tuple)) else [y]
        y0 = tf.identity(ys[0], name="y") if len(ys) == 1 else None
        if len(ys) > 1:
            ys = [tf.identity(t, name="y" if k == 0 else "y_%d" % k)
                  for k, t in enumerate(ys)]
        else:
            ys = [y0]
        fetch = ["y"] + ["y_%d" % k for k in range(1, len(ys))]
        grads = {}
        fl = [i for i, a in enumerate(c["inputs"])
              if a.dtype.kind == "f" and i >= int(c["var"])]
        if c["grad"] and ys[0].dtype.is_floating:
            shp = ys[0].shape.as_list()
            if None in shp:  # data-dependent (DynamicPartition): ask TF
                with tf1.Session(graph=g) as s:
                    s.run(tf1.global_variables_initializer())
                    shp = list(s.run(ys[0]).shape)
            dy = tf.constant(r(*shp,
                               dtype=ys[0].dtype.as_numpy_dtype), name="dy")
            gs = tf.gradients(ys[0], [ins[i] for i in fl], grad_ys=dy)
            for i, gt in zip(fl, gs):
                if isinstance(gt, tf.IndexedSlices):  # Gather's gradient
                    gt = tf.convert_to_tensor(gt)
                if gt is not None:
                    grads[i] = tf.identity(gt, name="grad_%d" % i)
        init = tf1.global_variables_initializer()
        with tf1.Session(graph=g) as s:
            s.run(init)
            vals = s.run(ys + list(grads.values()) +
                         ([dy] if grads else []))
        gd = g.as_graph_def(add_shapes=bool(c.get("shapes")))
    with open(os.path.join(OUT, c["name"] + ".pb"), "wb") as f:
        f.write(gd.SerializeToString(deterministic=True))
    opnode = [n for n in gd.node if n.op == c["op"] or n.op == c["dg_op"]]
    # the dtype TF registers the kernel by: Select's values, not its cond
    # (nor a Conv3DBackpropInputV2's input_sizes, an AvgPool3DGrad's
    # orig_input_shape when given as an input, nor ScatterNd's indices:
    # its updates, nor DynamicStitch's indices: its data, the second half
    # of the inputs)
    tin = c["inputs"][len(c["inputs"]) // 2 if c["op"] == "DynamicStitch"
                      else 1 if c["op"] in ("Select", "SelectV2", "ScatterNd",
                                            "Conv3DBackpropInputV2") or (
        c["op"] == "AvgPool3DGrad" and len(c["inputs"]) > 1) else 0]
    ent = {"op": c["dg_op"], "dtype": DT.get(tin.dtype, "?"),
           "node": opnode[0].name if opnode else None,
           "fetch": {}, "grads": {}}
    if c["op"].startswith("Stateless"):  # by its output, as TF
        ent["dtype"] = DT.get(np.asarray(vals[0]).dtype, "?")
    for name, v in zip(fetch, vals[:len(ys)]):
        ent["fetch"][name] = {"shape": list(np.shape(v)), "value": jval(v),
                              "dtype": DT.get(np.asarray(v).dtype, "?")}
    for (i, t), v in zip(grads.items(), vals[len(ys):]):
        ent["grads"]["grad_%d" % i] = {"shape": list(np.shape(v)),
                                       "value": jval(v), "input": i}
    # dgrun's JSON: the same forward op, dgrun's gradients
    if grads:
        nodes = []
        for i, a in enumerate(c["inputs"]):
            nodes.append({"name": "in%d" % i, "op": "Const", "attrs": {
                "dtype": DT[a.dtype], "value": np.asarray(a).tolist()}})
        for k, a in enumerate(c["extra"]):
            nodes.append({"name": "ex%d" % k, "op": "Const", "attrs": {
                "dtype": DT[a.dtype], "value": np.asarray(a).tolist()}})
        nodes.append({"name": "op", "op": c["dg_op"],
                      "inputs": ["in%d" % i for i in range(len(c["inputs"]))]
                      + ["ex%d" % k for k in range(len(c["extra"]))],
                      "attrs": {k: dg_attr(v) for k, v in c["attrs"].items()}})
        dyv = vals[-1]
        nodes.append({"name": "dy", "op": "Const", "attrs": {
            "dtype": DT[np.asarray(dyv).dtype],
            "value": np.asarray(dyv).tolist()}})
        if np.asarray(dyv).ndim == 0:
            nodes[-1]["attrs"]["value"] = float(dyv)
        yref = "op"
        if c.get("y_out"):  # gradients' ys name nodes: an Identity of it
            yref = "op_y"
            nodes.append({"name": yref, "op": "Identity",
                          "inputs": ["op:%d" % c["y_out"]]})
        graph = {"version": 1, "nodes": nodes, "gradients": [
            {"name": "g", "ys": [yref], "xs": ["in%d" % i for i in grads],
             "grad_ys": ["dy"]}],
            "fetch": [yref] + ["g/in%d" % i for i in grads]}
        if c.get("y_out"):
            ent["dg_y"] = yref
        with open(os.path.join(OUT, c["name"] + ".dg.json"), "w") as f:
            json.dump(graph, f)
        ent["dg_grads"] = {"g/in%d" % i: "grad_%d" % i for i in grads}
    add_also(ent, c, gd)
    return ent


def record_fused_nan(c):
    """A NaN through Conv2D + BiasAdd + Relu(6) (the *_fused_conv_nan
    cases): record() writes the graph with Consts, which Grappler folds, so
    its value is the unfused kernels' (NaN stays NaN).  TF's CPU runs the
    chain fused (Grappler's remapper: _FusedConv2D, oneDNN's
    _MklNativeFusedConv2D, whose relu post-op turns NaN into 0), as dgrun's
    fusion pass does on CPU:0: that value, from the same graph with the
    input fed, is the case's; the GPU, where dgrun's OpenCL runs the chain
    unfused, keeps the unfused value (fetch_on)."""
    ent = record(c)
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.as_dtype(c["inputs"][0].dtype),
                            c["inputs"][0].shape)
        ins = [x] + [tf.constant(a) for a in c["inputs"][1:]]
        y = c["fn"](*ins)
        ro = tf1.RunOptions(output_partition_graphs=True)
        md = tf1.RunMetadata()
        with tf1.Session(graph=g) as s:
            v = s.run(y, {x: c["inputs"][0]}, options=ro, run_metadata=md)
    ran = {n.op for pg in md.partition_graphs for n in pg.node}
    assert ran & {"_FusedConv2D", "_MklNativeFusedConv2D",
                  "_MklFusedConv2D"}, ran
    ent["fetch_on"] = {"GPU": {"y": ent["fetch"]["y"]}}
    ent["fetch"] = {"y": {"shape": list(np.shape(v)), "value": jval(v),
                          "dtype": DT[np.asarray(v).dtype]}}
    return ent


for _c in CASES:
    if _c["name"].endswith("_fused_conv_nan"):
        _c["recorder"] = record_fused_nan


def main():
    os.makedirs(OUT, exist_ok=True)
    out = {"tf_version": tf.__version__, "cases": {}}
    RS.set_state(DY_STATE)
    only = set(os.environ.get("RECORD_ONLY", "").split(",")) - {""}
    path = os.path.join(OUT, "cases.json")
    if only:  # re-record these cases only, keeping the others' values
        with open(path) as f:
            out["cases"] = json.load(f)["cases"]
    for c in CASES:
        rec = c.get("recorder") or record
        ent = rec(c) if not only or c["name"] in only else None
        if ent is not None:
            out["cases"][c["name"]] = ent
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    print("%d cases -> %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
