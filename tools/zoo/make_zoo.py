#!/usr/bin/env python3
"""make_zoo.py -- dgrun's model zoo (issue 22): small everyday models made
with TensorFlow 2.21 in graph mode (tf.compat.v1 and tf_keras; seeded
weights, small shapes, nothing downloaded), written as fixtures in the
format of tools/tf_fixtures/export.py (graph.pb, graph.json, feeds and
TF's fetched values as .npy, meta.json with TF's loss curve for training
graphs) under OUT (default tests/data/zoo/).  tests/cli/e2e_zoo.py runs
them on CPU:0 and on PoCL; tools/zoo/census.py counts their op types.

  transformer   a Keras encoder block: MultiHeadAttention (Einsum),
                LayerNormalization, a gelu (Erf) feed-forward; frozen
  bigru         Bidirectional(GRU) (go_backwards: ReverseV2), unrolled;
                frozen
  dcgan_gen     a DCGAN generator: Dense, BatchNormalization,
                LeakyReLU, Conv2DTranspose, tanh; frozen
  unet          a tiny U-Net: Conv2D, MaxPooling2D, UpSampling2D
                (ResizeNearestNeighbor), Concatenate, Resizing
                (ResizeBilinear); frozen
  efficientnet  EfficientNet-B0's blocks at width/depth 0.25, 32x32 input
                (swish, squeeze-excite, depthwise conv); frozen
  embed_adam    a TF-1 text model: an embedding trained by Adam (the
                sparse path: Unique, UnsortedSegmentSum, ScatterAdd)
  embed_part    a partitioned embedding (fixed_size_partitioner(2):
                DynamicPartition, ParallelDynamicStitch) trained by
                GradientDescent (ScatterSub)
  rnn_layers, activations, cnn_layers, norm_attention
                sets of tf_keras layers (recurrent, every activation,
                convolution and pooling kinds, norms and attention); frozen
  mobilenet_v1/_v2/_v3s, efficientnet
                tf_keras.applications at small widths (v2 and v3s at
                alpha 0.1, their fixed-width head conv narrowed)
  transformer_train
                a tf_keras encoder block trained TF-1 style (resource
                variables, seeded constant initialisers) by Adam
  dcgan_train   the DCGAN generator with tf.compat.v1.layers (reference
                variables) trained by Adam
  opt_dense, opt_sparse, opt_sparse_res
                every tf.compat.v1.train optimizer (Momentum incl.
                Nesterov, Adagrad, AdagradDA, Adadelta, RMSProp incl.
                centered, Ftrl incl. l2 shrinkage, the proximal ones, ...),
                each on its own small softmax model, trained together (one
                train op, the losses summed): dense gradients (a MatMul
                weight) and sparse ones (an embedding: SparseApply*,
                ScatterAdd/Sub), on reference variables and (the
                embedding model, its dense weights included) on resource
                variables
  layers_1d3d   Conv1D/SeparableConv1D/DepthwiseConv1D/Conv1DTranspose,
                1-D and 3-D pooling of every kind, UpSampling1D/3D,
                Conv3DTranspose (Conv3DBackpropInputV2), grouped Conv2D,
                PReLU, elu/selu/softplus/hard_sigmoid/swish; frozen
  vgg16 vgg19 resnet50 resnet50v2 inception_v3 xception densenet121
  nasnet_mobile efficientnet_v2b0 convnext_tiny regnetx regnety
  mobilenet_v3l the tf_keras.applications families, small (applications():
                narrowed or through their builders; v3l at alpha 0.1)

Run with the TF venv, tf_keras on PYTHONPATH (gitignored .venv-tfk:
tools/tf_fixtures/.venv/bin/pip install --no-deps --target .venv-tfk
tf-keras==2.21.0):
  PYTHONPATH=.venv-tfk tools/tf_fixtures/.venv/bin/python tools/zoo/make_zoo.py
Usage: make_zoo.py [OUT [NAME...]]
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.compat.v1.layers

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import json_format  # noqa: E402

tf1 = tf.compat.v1
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "zoo"))
ONLY = set(sys.argv[2:])
tf1.disable_control_flow_v2()  # TF-1 while loops (Enter/Exit/...)
TRAIN_STEPS = 3
# size policy: every model written has graph.pb and graph.json (issue 22:
# each zoo model runs from both; the JSON is ~2-3x the bytes, git stores it
# compressed), the model's files at all only below PB_MAX (above: ops.json
# and meta.json only, for the census; no model is that big now)
PB_MAX = int(os.environ.get("ZOO_PB_MAX", 1_000_000))  # (checks by hand)


def canon_functions(graph_def):
    """Library functions renamed by first call (TF numbers them with a
    process-wide counter, so a model's bytes would depend on what the same
    run built before it) and sorted: the same model, the same graph.pb."""
    names = {f.signature.name for f in graph_def.library.function}
    ren = {}

    def attrs():
        for n in graph_def.node:
            yield from n.attr.values()
        for f in graph_def.library.function:
            for n in f.node_def:
                yield from n.attr.values()
    for a in attrs():
        if a.HasField("func") and a.func.name in names and \
                a.func.name not in ren:
            ren[a.func.name] = "%s_%d" % (a.func.name.rstrip("0123456789")
                                          .rstrip("_"), len(ren))
    for a in attrs():
        if a.HasField("func") and a.func.name in ren:
            a.func.name = ren[a.func.name]
    fns = []
    for f in graph_def.library.function:
        fns.append(type(f)())
        fns[-1].CopyFrom(f)
        fns[-1].signature.name = ren.get(f.signature.name, f.signature.name)
    del graph_def.library.function[:]
    graph_def.library.function.extend(
        sorted(fns, key=lambda f: f.signature.name))


def write(name, graph_def, feeds, fetch, sess, graph, train=None, note=""):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    canon_functions(graph_def)
    pb = graph_def.SerializeToString(deterministic=True)
    ops = {}
    for n in graph_def.node:
        ops[n.op] = ops.get(n.op, 0) + 1
    with open(os.path.join(d, "ops.json"), "w") as f:
        json.dump({"nodes": len(graph_def.node), "ops": ops}, f, indent=1,
                  sort_keys=True)
        f.write("\n")
    meta = {"tf_version": tf.__version__, "note": note, "feeds": {},
            "fetch": {}}
    if len(pb) >= PB_MAX:
        meta["census_only"] = "graph.pb is %d bytes: only its op census is " \
            "kept (tools/zoo/make_zoo.py remakes it)" % len(pb)
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
            f.write("\n")
        print("%-13s %5d nodes (census only)" % (name, len(graph_def.node)))
        return
    with open(os.path.join(d, "graph.pb"), "wb") as f:
        f.write(pb)
    # (a function library, e.g. tf_keras' grouped Conv2D, loads from JSON
    # too: issue 22; tools/zoo/pb_to_json.py writes the same text from a
    # graph.pb without re-running TF)
    with open(os.path.join(d, "graph.json"), "w") as f:
        f.write(json_format.MessageToJson(graph_def, sort_keys=True))
        f.write("\n")
    feed_dict = {}
    for ph, val in feeds.items():
        fn = ph.replace("/", "_") + ".npy"
        np.save(os.path.join(d, fn), val)
        meta["feeds"][ph] = fn
        feed_dict[graph.get_tensor_by_name(ph + ":0")] = val
    vals = sess.run([graph.get_tensor_by_name(t if ":" in t else t + ":0")
                     for t in fetch], feed_dict)
    for t, v in zip(fetch, vals):
        fn = t.replace("/", "_").replace(":", "_") + ".npy"
        np.save(os.path.join(d, fn), np.asarray(v))
        meta["fetch"][t] = fn
    if train:
        op, loss = train
        losses = []
        for _ in range(TRAIN_STEPS):
            lv, _ = sess.run([graph.get_tensor_by_name(loss + ":0"),
                              graph.get_operation_by_name(op)], feed_dict)
            losses.append(float(lv))
        meta["train"] = {"op": op, "loss": loss, "losses": losses}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print("%-13s %5d nodes %8d bytes" % (name, len(graph_def.node), size))


def session(graph):
    cfg = tf1.ConfigProto(intra_op_parallelism_threads=1,
                          inter_op_parallelism_threads=1)
    return tf1.Session(graph=graph, config=cfg)


def keras_frozen(name, build, x, note):
    """build(K) -> a tf_keras Model; frozen at its output (inference)."""
    import tf_keras as K
    from tf_keras.src import backend as KB
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(22)
        K.utils.set_random_seed(22)
        sess = session(g)
        KB.set_session(sess)
        KB.set_learning_phase(0)
        model = build(K)
        out = tf.identity(model.outputs[0], name="output")
        sess.run(tf1.global_variables_initializer())
        inp = model.inputs[0].op.name
        frozen = tf1.graph_util.convert_variables_to_constants(
            sess, g.as_graph_def(), ["output"])
        frozen = tf1.graph_util.extract_sub_graph(frozen, ["output"])
        write(name, frozen, {inp: x}, ["output"], sess, g, note=note)
        sess.close()
        del out


def transformer():
    def build(K):
        L = K.layers
        x = L.Input((6, 16), batch_size=2, name="x")
        a = L.MultiHeadAttention(num_heads=2, key_dim=8)(x, x)
        h = L.LayerNormalization()(x + a)
        f = L.Dense(32, activation="gelu")(h)
        f = L.Dense(16)(f)
        y = L.LayerNormalization()(h + f)
        return K.Model(x, y)
    keras_frozen("transformer", build,
                 np.random.RandomState(1).standard_normal((2, 6, 16)).astype(
                     np.float32),
                 "a Keras encoder block: MultiHeadAttention, LayerNormalization,"
                 " gelu feed-forward; frozen")


def bigru():
    def build(K):
        L = K.layers
        x = L.Input((5, 4), batch_size=2, name="x")
        h = L.Bidirectional(L.GRU(6, unroll=True))(x)
        y = L.Dense(3)(h)
        return K.Model(x, y)
    keras_frozen("bigru", build,
                 np.random.RandomState(2).standard_normal((2, 5, 4)).astype(
                     np.float32),
                 "Bidirectional(GRU(6, unroll=True)) + Dense; frozen")


def dcgan_gen():
    def build(K):
        L = K.layers
        z = L.Input((8,), batch_size=2, name="z")
        h = L.Dense(4 * 4 * 16, use_bias=False)(z)
        h = L.BatchNormalization()(h)
        h = L.LeakyReLU(0.2)(h)
        h = L.Reshape((4, 4, 16))(h)
        h = L.Conv2DTranspose(8, 5, strides=2, padding="same",
                              use_bias=False)(h)
        h = L.BatchNormalization()(h)
        h = L.LeakyReLU(0.2)(h)
        y = L.Conv2DTranspose(1, 5, strides=2, padding="same",
                              activation="tanh")(h)
        return K.Model(z, y)
    keras_frozen("dcgan_gen", build,
                 np.random.RandomState(3).standard_normal((2, 8)).astype(
                     np.float32),
                 "a DCGAN generator (Conv2DTranspose, BatchNorm, LeakyReLU); "
                 "frozen")


def unet():
    def build(K):
        L = K.layers
        x = L.Input((16, 16, 3), batch_size=1, name="x")
        c1 = L.Conv2D(8, 3, padding="same", activation="relu")(x)
        p1 = L.MaxPooling2D()(c1)
        c2 = L.Conv2D(16, 3, padding="same", activation="relu")(p1)
        u1 = L.UpSampling2D()(c2)
        m = L.Concatenate()([u1, c1])
        c3 = L.Conv2D(8, 3, padding="same", activation="relu")(m)
        r = L.Resizing(20, 20)(c3)
        y = L.Conv2D(2, 1)(r)
        return K.Model(x, y)
    keras_frozen("unet", build,
                 np.random.RandomState(4).uniform(0, 1, (1, 16, 16, 3)).astype(
                     np.float32),
                 "a tiny U-Net: UpSampling2D, Concatenate, Resizing; frozen")


def efficientnet():
    def build(K):
        from tf_keras.src.applications import efficientnet as E
        return E.EfficientNet(0.25, 0.25, 32, 0.2, model_name="effnet_tiny",
                              weights=None, input_shape=(32, 32, 3),
                              classes=10)
    keras_frozen("efficientnet", build,
                 np.random.RandomState(5).uniform(0, 255, (1, 32, 32, 3))
                 .astype(np.float32),
                 "EfficientNet (B0's block list) at width and depth 0.25, "
                 "32x32 input, weights=None (seeded); frozen")


def rnn_layers():
    def build(K):
        L = K.layers
        x = L.Input((7,), batch_size=2, name="x", dtype="int32")
        e = L.Embedding(20, 6)(x)
        c = L.Conv1D(8, 3, padding="same", activation="relu")(e)
        a = L.LSTM(5, return_sequences=True, unroll=True)(c)
        b = L.SimpleRNN(4, return_sequences=True, unroll=True)(a)
        g = L.GRU(3, go_backwards=True, unroll=True)(b)
        m = L.GlobalMaxPooling1D()(c)
        y = L.Dense(2)(L.Concatenate()([g, m]))
        return K.Model(x, y)
    keras_frozen("rnn_layers", build,
                 np.random.RandomState(8).randint(0, 20, (2, 7)).astype(
                     np.int32),
                 "Embedding, Conv1D, LSTM, SimpleRNN, GRU(go_backwards), "
                 "unrolled (Keras' while-loop form fails in TF 2.21 under "
                 "TF-1 control flow), GlobalMaxPooling1D; frozen")


def activations():
    def build(K):
        L = K.layers
        x = L.Input((12,), batch_size=3, name="x")
        h = L.Dense(12)(x)
        outs = [L.PReLU()(h), L.ELU()(h), L.LeakyReLU()(h), L.ReLU(6.0)(h),
                L.Softmax()(h), L.ThresholdedReLU(0.3)(h)]
        for act in ("selu", "softplus", "softsign", "hard_sigmoid", "swish",
                    "exponential", "gelu", "tanh", "sigmoid", "mish",
                    "relu6", "log_softmax"):
            outs.append(L.Activation(act)(h))
        outs.append(K.activations.gelu(h, approximate=True))
        y = L.Concatenate()(outs)
        return K.Model(x, y)
    keras_frozen("activations", build,
                 np.random.RandomState(9).standard_normal((3, 12)).astype(
                     np.float32),
                 "every Keras activation (layers and Activation names); "
                 "frozen")


def cnn_layers():
    def build(K):
        L = K.layers
        x = L.Input((12, 12, 3), batch_size=2, name="x")
        h = L.ZeroPadding2D(1)(x)
        h = L.SeparableConv2D(8, 3, activation="relu")(h)
        h = L.DepthwiseConv2D(3, padding="same", depth_multiplier=2)(h)
        a = L.AveragePooling2D(2)(h)
        m = L.MaxPooling2D(3, strides=2, padding="same")(h)
        t = L.Conv2DTranspose(4, 3, strides=2, padding="same")(a)
        t = L.Cropping2D(((1, 1), (2, 2)))(t)
        u = L.UpSampling2D(interpolation="bilinear")(m)
        u = L.Conv2D(4, 1, dilation_rate=1)(u)
        d = L.Conv2D(4, 3, padding="same", dilation_rate=2)(u)
        g = L.Concatenate()([L.GlobalAveragePooling2D()(t),
                             L.GlobalMaxPooling2D()(d),
                             L.Flatten()(L.AveragePooling2D(4)(d))])
        v = L.Reshape((2, 2, 2, 1))(L.Dense(8)(g))
        v = L.Conv3D(2, 2, padding="same")(v)
        v = L.GlobalAveragePooling3D()(L.MaxPooling3D(2)(v))
        y = L.Dense(3)(L.Concatenate()([g, v]))
        return K.Model(x, y)
    keras_frozen("cnn_layers", build,
                 np.random.RandomState(10).uniform(0, 1, (2, 12, 12, 3))
                 .astype(np.float32),
                 "SeparableConv2D, DepthwiseConv2D, pooling of every kind, "
                 "Conv2DTranspose, Cropping2D, ZeroPadding2D, bilinear "
                 "UpSampling2D, dilated Conv2D, Conv3D; frozen")


def norm_attention():
    def build(K):
        L = K.layers
        q = L.Input((5, 8), batch_size=2, name="q")
        h = L.GroupNormalization(groups=2)(q)
        h = L.UnitNormalization()(h)
        a = L.Attention()([h, q])
        b = L.AdditiveAttention()([q, h])
        c = L.BatchNormalization()(L.Dense(8)(a + b))
        d = L.LayerNormalization(axis=[1, 2])(c)
        y = L.Dense(3, kernel_regularizer="l2")(L.Dropout(0.5)(d))
        return K.Model(q, y)
    keras_frozen("norm_attention", build,
                 np.random.RandomState(11).standard_normal((2, 5, 8)).astype(
                     np.float32),
                 "GroupNormalization, UnitNormalization, Attention, "
                 "AdditiveAttention, BatchNormalization, LayerNormalization "
                 "over two axes, Dropout; frozen")


def mobilenets(which):
    def build(K):
        # (v2 and v3s at alpha 0.1, their fixed-width head conv, 1280 and
        # 1024 filters, 16x narrower: graph.pb under 400 KB, op types kept)
        from tf_keras.src.applications import mobilenet_v2, mobilenet_v3
        if which == "mobilenet_v2":
            with narrow(mobilenet_v2, 16, only=(1280,)):
                return mobilenet_v2.MobileNetV2(
                    input_shape=(32, 32, 3), alpha=0.1, weights=None,
                    classes=10)
        if which == "mobilenet_v3s":
            with narrow(mobilenet_v3, 16, only=(1024,)):
                return mobilenet_v3.MobileNetV3Small(
                    input_shape=(32, 32, 3), alpha=0.1, weights=None,
                    classes=10, include_preprocessing=True)
        A = K.applications
        return A.MobileNet(input_shape=(32, 32, 3), alpha=0.25,
                           weights=None, classes=10)
    keras_frozen(which, build,
                 np.random.RandomState(12).uniform(0, 255, (1, 32, 32, 3))
                 .astype(np.float32),
                 "tf_keras.applications %s, 32x32, weights=None (seeded); "
                 "frozen" % which)


class Narrow:
    """A tf_keras.applications module's `layers` with every Conv2D,
    SeparableConv2D and hidden Dense DIV times narrower (at least 1 unit;
    a Dense of `classes` units is kept): the application's structure and
    op types, in KBs of weights.  Used as `with narrow(module, DIV):`;
    with `only` (filter counts), just the Conv2Ds of those widths."""
    def __init__(self, layers, div, classes, only=None):
        self._l, self._div, self._classes = layers, div, classes
        self._only = only

    def _cut(self, n):
        if self._only is not None and n not in self._only:
            return n
        return max(1, n // self._div)

    def __getattr__(self, name):
        cls = getattr(self._l, name)
        if self._only is not None and name != "Conv2D":
            return cls
        if name in ("Conv2D", "SeparableConv2D"):
            return lambda filters, *a, **k: cls(self._cut(filters), *a, **k)
        if name == "Dense":
            return lambda units, *a, **k: cls(
                units if units == self._classes else self._cut(units), *a,
                **k)
        return cls


class narrow:
    def __init__(self, module, div, classes=10, only=None):
        self.m, self.div, self.classes = module, div, classes
        self.only = only

    def __enter__(self):
        # (ResNet sets its module's `layers` from VersionAwareLayers() when
        # called: that name is narrowed too)
        self.saved = self.m.layers, self.m.VersionAwareLayers
        self.m.layers = Narrow(self.saved[0], self.div, self.classes,
                               self.only)
        self.m.VersionAwareLayers = lambda: Narrow(self.saved[1](), self.div,
                                                   self.classes, self.only)

    def __exit__(self, *exc):
        self.m.layers, self.m.VersionAwareLayers = self.saved


def applications(which):
    """tf_keras.applications families at small inputs (the least each
    accepts), narrowed (Narrow: VGG, ResNet, Inception, Xception, DenseNet)
    or at reduced widths/depths through their own builders (NASNet,
    EfficientNetV2, ConvNeXt, RegNet; MobileNetV3Large by alpha, without
    its top), each with its op types intact; weights=None (seeded by
    keras_frozen); frozen at the output (a softmax, or v3l's pooling)."""
    size = {"inception_v3": 75, "xception": 71}.get(which, 32)

    def build(K):
        from tf_keras.src.applications import (
            vgg16, vgg19, resnet, resnet_v2, inception_v3, xception,
            densenet, nasnet, efficientnet_v2, convnext, regnet)
        kw = dict(weights=None, input_shape=(size, size, 3), classes=10)
        if which in ("vgg16", "vgg19"):
            m = vgg16 if which == "vgg16" else vgg19
            with narrow(m, 64):
                return getattr(m, which.upper())(**kw)
        if which in ("resnet50", "resnet50v2"):
            with narrow(resnet, 64):
                return (resnet.ResNet50 if which == "resnet50" else
                        resnet_v2.ResNet50V2)(**kw)
        if which == "inception_v3":
            with narrow(inception_v3, 64):
                return inception_v3.InceptionV3(**kw)
        if which == "xception":
            with narrow(xception, 64):
                return xception.Xception(**kw)
        if which == "densenet121":
            with narrow(densenet, 16):  # DenseNet121's blocks, 2 layers each
                return densenet.DenseNet([2, 2, 2, 2], **kw)
        if which == "nasnet_mobile":
            return nasnet.NASNet(penultimate_filters=96, num_blocks=1,
                                 stem_block_filters=8, default_size=32, **kw)
        if which == "efficientnet_v2b0":
            return efficientnet_v2.EfficientNetV2(
                0.125, 0.25, 32, model_name="efficientnetv2-b0", **kw)
        if which == "convnext_tiny":
            return convnext.ConvNeXt([1, 1, 2, 1], [8, 16, 24, 32],
                                     default_size=32,
                                     model_name="convnext_tiny", **kw)
        if which in ("regnetx", "regnety"):
            return regnet.RegNet([1, 1, 2, 1], [8, 16, 24, 32], 8,
                                 which[-1].upper(), 32, model_name=which,
                                 **kw)
        if which == "mobilenet_v3l":
            return K.applications.MobileNetV3Large(
                alpha=0.1, include_top=False, pooling="avg",
                include_preprocessing=True, **kw)
        raise ValueError(which)
    keras_frozen(which, build,
                 np.random.RandomState(16).uniform(0, 255, (1, size, size, 3))
                 .astype(np.float32),
                 "tf_keras.applications %s, %dx%d, reduced (make_zoo.py "
                 "applications()), weights=None (seeded); frozen" % (
                     which, size, size))


def layers_1d3d():
    def build(K):
        L = K.layers
        x = L.Input((16, 4), batch_size=2, name="x")
        c = L.Conv1D(6, 3, strides=2, padding="causal", activation="elu")(x)
        c = L.Conv1D(6, 3, dilation_rate=2, padding="same",
                     activation="selu")(c)
        s = L.SeparableConv1D(8, 3, padding="same", depth_multiplier=2,
                              activation="softplus")(c)
        s = L.DepthwiseConv1D(3, padding="same")(s)
        t = L.Conv1DTranspose(4, 3, strides=2, padding="same",
                              activation="hard_sigmoid")(s)
        p = L.MaxPooling1D(2)(t)
        q = L.AveragePooling1D(3, strides=1, padding="same")(p)
        u = L.UpSampling1D(2)(q)
        u = L.PReLU(shared_axes=[1])(u)
        r = L.Dropout(0.3)(L.Activation("swish")(u))
        g1 = L.Concatenate()([L.GlobalAveragePooling1D()(r),
                              L.GlobalMaxPooling1D()(r)])
        v = L.Reshape((2, 2, 2, 2))(L.Dense(16)(g1))
        v = L.Conv3DTranspose(3, 2, strides=2, padding="same")(v)
        v = L.UpSampling3D((1, 2, 1))(v)
        v = L.Conv3D(4, 3, strides=(1, 2, 1), padding="valid")(
            L.ZeroPadding3D(1)(v))
        a = L.AveragePooling3D(2, padding="same")(v)
        m = L.MaxPooling3D((1, 2, 2), strides=1)(v)
        g3 = L.Concatenate()([L.GlobalMaxPooling3D()(a),
                              L.GlobalAveragePooling3D()(m)])
        w = L.Reshape((4, 4, 1))(L.Dense(16)(g3))
        w = L.Conv2D(8, 3, padding="same", groups=2)(
            L.Conv2D(4, 1)(w))
        w = L.Conv2D(4, 3, padding="same", groups=4,
                     dilation_rate=2)(w)
        y = L.Dense(3)(L.Concatenate()([g1, g3, L.Flatten()(w)]))
        return K.Model(x, y)
    keras_frozen("layers_1d3d", build,
                 np.random.RandomState(17).standard_normal((2, 16, 4)).astype(
                     np.float32),
                 "Conv1D (causal, dilated), SeparableConv1D, DepthwiseConv1D, "
                 "Conv1DTranspose, 1-D/3-D pooling of every kind, "
                 "UpSampling1D/3D, Conv3DTranspose, strided Conv3D, grouped "
                 "and grouped dilated Conv2D, PReLU, elu/selu/softplus/"
                 "hard_sigmoid/swish, Dropout; frozen")


def keras_train(name, build, x, y, note):
    """A tf_keras model trained TF-1 style: reference variables
    (disable_resource_variables), an MSE loss and tf.compat.v1's Adam; the
    whole training GraphDef with TF's loss curve."""
    import tf_keras as K
    from tf_keras.src import backend as KB
    g = tf.Graph()
    tf1.disable_resource_variables()
    try:
        with g.as_default():
            tf1.set_random_seed(22)
            K.utils.set_random_seed(22)
            sess = session(g)
            KB.set_session(sess)
            model = build(K)
            t = tf1.placeholder(tf.float32, y.shape, name="target")
            loss = tf.reduce_mean(tf.square(model.outputs[0] - t),
                                  name="loss")
            tf1.train.AdamOptimizer(0.01).minimize(loss, name="train")
            sess.run(tf1.global_variables_initializer())
            inp = model.inputs[0].op.name
            write(name, g.as_graph_def(), {inp: x, "target": y}, ["loss"],
                  sess, g, train=("train", "loss"), note=note)
            sess.close()
    finally:
        tf1.enable_resource_variables()


def transformer_train():
    def build(K):
        rs = np.random.RandomState(15)

        class Seeded(K.initializers.Initializer):
            """Seeded constants (TF's stateless initialisers cannot be
            reproduced outside TF)."""
            def __call__(self, shape, dtype=None, **kw):
                return tf.constant((rs.standard_normal(shape) * 0.2).astype(
                    np.float32))
        L = K.layers
        x = L.Input((6, 16), batch_size=2, name="x")
        a = L.MultiHeadAttention(num_heads=2, key_dim=8,
                                 kernel_initializer=Seeded())(x, x)
        h = L.LayerNormalization()(x + a)
        f = L.Dense(16, activation="gelu", kernel_initializer=Seeded())(h)
        return K.Model(x, L.Dense(4, kernel_initializer=Seeded())(f))
    rs = np.random.RandomState(13)
    keras_train("transformer_train", build,
                rs.standard_normal((2, 6, 16)).astype(np.float32),
                rs.standard_normal((2, 6, 4)).astype(np.float32),
                "the encoder block trained by tf.compat.v1 Adam on an MSE "
                "loss (Einsum, Erfc, LayerNorm gradients)")


def dcgan_train():
    """The DCGAN generator with tf.compat.v1.layers on reference variables
    (seeded constant initialisers) trained by Adam towards target images:
    LeakyReluGrad, FusedBatchNormGradV3, Conv2DBackpropInput/Filter."""
    g = tf.Graph()
    tf1.disable_resource_variables()
    try:
        with g.as_default():
            rs = np.random.RandomState(14)

            def const(shape, scale=0.2):
                return tf1.constant_initializer(
                    (rs.standard_normal(shape) * scale).astype(np.float32))
            z = tf1.placeholder(tf.float32, [2, 8], name="z")
            t = tf1.placeholder(tf.float32, [2, 16, 16, 1], name="target")
            h = tf1.layers.dense(z, 4 * 4 * 16, use_bias=False,
                                 kernel_initializer=const((8, 256)))
            # (no batch norm on the 2-D output here: its unfused moments use
            # StopGradient, another branch's op)
            h = tf.nn.leaky_relu(h, 0.2)
            h = tf.reshape(h, [2, 4, 4, 16])
            h = tf1.layers.conv2d_transpose(
                h, 8, 5, strides=2, padding="same", use_bias=False,
                kernel_initializer=const((5, 5, 8, 16)))
            h = tf1.layers.batch_normalization(h, training=True, fused=True)
            h = tf.nn.leaky_relu(h, 0.2)
            y = tf1.layers.conv2d_transpose(
                h, 1, 5, strides=2, padding="same", activation=tf.tanh,
                kernel_initializer=const((5, 5, 1, 8)))
            tf.identity(y, name="images")
            loss = tf.reduce_mean(tf.math.squared_difference(y, t),
                                  name="loss")
            upd = tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)
            with tf.control_dependencies(upd):
                tf1.train.AdamOptimizer(0.01).minimize(loss, name="train")
            with session(g) as s:
                s.run(tf1.global_variables_initializer())
                write("dcgan_train", g.as_graph_def(),
                      {"z": rs.standard_normal((2, 8)).astype(np.float32),
                       "target": rs.uniform(-1, 1, (2, 16, 16, 1)).astype(
                           np.float32)},
                      ["images", "loss"], s, g, train=("train", "loss"),
                      note="the DCGAN generator (tf.compat.v1.layers, "
                      "reference variables) trained by Adam on an MSE loss")
    finally:
        tf1.enable_resource_variables()


def text_batch(seed, vocab=50, n=4, t=5):
    rs = np.random.RandomState(seed)
    return (rs.randint(0, vocab, (n, t)).astype(np.int32),
            rs.randint(0, 3, n).astype(np.int32))


def embed_model(name, partitioned):
    g = tf.Graph()
    with g.as_default():
        rs = np.random.RandomState(6)
        ids = tf1.placeholder(tf.int32, [4, 5], name="ids")
        y = tf1.placeholder(tf.int32, [4], name="y")
        init = (rs.standard_normal((50, 8)) * 0.3).astype(np.float32)
        if partitioned:
            def part_init(shape, dtype=None, partition_info=None):
                o = partition_info.single_offset(shape) if partition_info \
                    else 0
                return tf.constant(init[o:o + shape[0]])
            emb = tf1.get_variable(
                "emb", [50, 8], initializer=part_init,
                partitioner=tf1.fixed_size_partitioner(2), use_resource=False)
        else:
            emb = tf1.Variable(init, name="emb", use_resource=False)
        e = tf1.nn.embedding_lookup(emb, ids, partition_strategy="div")
        h = tf.reduce_mean(e, axis=1)
        w = tf1.Variable((rs.standard_normal((8, 3)) * 0.3).astype(
            np.float32), name="w", use_resource=False)
        logits = tf.matmul(h, w, name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        opt = (tf1.train.GradientDescentOptimizer(0.5) if partitioned
               else tf1.train.AdamOptimizer(0.05))
        opt.minimize(loss, name="train")
        xs, ys = text_batch(7)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write(name, g.as_graph_def(), {"ids": xs, "y": ys},
                  ["logits", "loss"], s, g, train=("train", "loss"),
                  note="embedding lookup (%s) trained by %s" % (
                      "partitioned in 2" if partitioned else "one variable",
                      "GradientDescent" if partitioned else "Adam"))


def optimizers(gs):
    """Every tf.compat.v1.train optimizer, by name (gs: the global step
    AdagradDA needs)."""
    T = tf1.train
    return [
        ("gd", T.GradientDescentOptimizer(0.5)),
        ("momentum", T.MomentumOptimizer(0.3, 0.9)),
        ("nesterov", T.MomentumOptimizer(0.3, 0.9, use_nesterov=True)),
        ("adam", T.AdamOptimizer(0.05)),
        ("adagrad", T.AdagradOptimizer(0.5)),
        ("adagrad_da", T.AdagradDAOptimizer(
            0.5, gs, l1_regularization_strength=0.001,
            l2_regularization_strength=0.01)),
        ("adadelta", T.AdadeltaOptimizer(5.0)),
        ("rmsprop", T.RMSPropOptimizer(0.05, momentum=0.5)),
        ("rmsprop_c", T.RMSPropOptimizer(0.05, centered=True)),
        ("ftrl", T.FtrlOptimizer(0.5, l1_regularization_strength=0.01,
                                 l2_regularization_strength=0.01)),
        ("ftrl_v2", T.FtrlOptimizer(
            0.5, learning_rate_power=-0.6, l1_regularization_strength=0.01,
            l2_shrinkage_regularization_strength=0.05)),
        ("prox_gd", T.ProximalGradientDescentOptimizer(
            0.5, l1_regularization_strength=0.01,
            l2_regularization_strength=0.01)),
        ("prox_adagrad", T.ProximalAdagradOptimizer(
            0.5, l1_regularization_strength=0.01,
            l2_regularization_strength=0.01)),
    ]


def opt_model(name, sparse, resource):
    """Each optimizer trains its own small softmax classifier on the same
    batch: dense (x @ w) or sparse (the mean of an embedding lookup of ids,
    then @ w); loss = the sum of their losses, train = all the updates."""
    g = tf.Graph()
    with g.as_default():
        rs = np.random.RandomState(22)
        x = tf1.placeholder(tf.int32 if sparse else tf.float32,
                            [4, 5], name="x")
        y = tf1.placeholder(tf.int32, [4], name="y")
        gs = tf1.Variable(np.int64(1), name="global_step",
                          use_resource=resource, trainable=False)
        losses, updates = [], []
        for opt_name, opt in optimizers(gs):
            with tf1.variable_scope(opt_name):
                w = tf1.get_variable(
                    "w", initializer=(rs.standard_normal((6 if sparse else 5,
                                                         3)) * 0.3).astype(
                        np.float32), use_resource=resource)
                if sparse:
                    emb = tf1.get_variable(
                        "emb", initializer=(rs.standard_normal((12, 6)) *
                                            0.3).astype(np.float32),
                        use_resource=resource)
                    h = tf.reduce_mean(tf1.nn.embedding_lookup(emb, x), 1)
                else:
                    h = x
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(
                        labels=y, logits=tf.matmul(h, w)))
                losses.append(loss)
                updates.append(opt.minimize(
                    loss, global_step=gs if opt_name == "adagrad_da"
                    else None))
        tf.add_n(losses, name="loss")
        tf.group(*updates, name="train")
        feeds = {"x": rs.randint(0, 12, (4, 5)).astype(np.int32) if sparse
                 else rs.standard_normal((4, 5)).astype(np.float32),
                 "y": rs.randint(0, 3, 4).astype(np.int32)}
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write(name, g.as_graph_def(), feeds, ["loss"], s, g,
                  train=("train", "loss"),
                  note="every tf.compat.v1.train optimizer on its own %s "
                  "model (%s variables), the losses summed" % (
                      "embedding" if sparse else "dense",
                      "resource" if resource else "reference"))


MODELS = {"transformer": transformer, "bigru": bigru, "dcgan_gen": dcgan_gen,
          "unet": unet, "efficientnet": efficientnet,
          "embed_adam": lambda: embed_model("embed_adam", False),
          "embed_part": lambda: embed_model("embed_part", True),
          "rnn_layers": rnn_layers, "activations": activations,
          "cnn_layers": cnn_layers, "norm_attention": norm_attention,
          "mobilenet_v1": lambda: mobilenets("mobilenet_v1"),
          "mobilenet_v2": lambda: mobilenets("mobilenet_v2"),
          "mobilenet_v3s": lambda: mobilenets("mobilenet_v3s"),
          "transformer_train": transformer_train,
          "dcgan_train": dcgan_train, "layers_1d3d": layers_1d3d,
          "vgg16": lambda: applications("vgg16"),
          "vgg19": lambda: applications("vgg19"),
          "resnet50": lambda: applications("resnet50"),
          "resnet50v2": lambda: applications("resnet50v2"),
          "inception_v3": lambda: applications("inception_v3"),
          "xception": lambda: applications("xception"),
          "densenet121": lambda: applications("densenet121"),
          "nasnet_mobile": lambda: applications("nasnet_mobile"),
          "efficientnet_v2b0": lambda: applications("efficientnet_v2b0"),
          "convnext_tiny": lambda: applications("convnext_tiny"),
          "regnetx": lambda: applications("regnetx"),
          "regnety": lambda: applications("regnety"),
          "mobilenet_v3l": lambda: applications("mobilenet_v3l"),
          "opt_dense": lambda: opt_model("opt_dense", False, False),
          "opt_sparse": lambda: opt_model("opt_sparse", True, False),
          "opt_sparse_res": lambda: opt_model("opt_sparse_res", True, True)}


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fn in MODELS.items():
        if ONLY and name not in ONLY:
            continue
        fn()


if __name__ == "__main__":
    main()
