#!/usr/bin/env python3
"""export.py -- export the TensorFlow fixture graphs of dgrun's test suite.

Run through make.sh (which creates the venv with tensorflow-cpu); writes one
directory per graph under OUT (default tests/data/tf):

  graph.pb        the GraphDef, binary (tf.io.write_graph(..., as_text=False))
  graph.json      the same GraphDef as proto3 JSON (json_format.MessageToJson)
  <feed>.npy      the Placeholders' values (fixed seeded inputs)
  <fetch>.npy     TF's value of each fetch for those inputs (before training)
  placement.json  TF's placement of every node on this machine (CPU only,
                  allow_soft_placement), from the partition graphs
  meta.json       what the files are: feeds, fetches, the train op and the
                  loss TF printed before each of its first training steps

Graphs (tf.compat.v1 graph mode, reference variables, weights given as
seeded constants so dgrun starts from the same values):

  sincos       y = sin(x) * cos(x) + x^2 (elementwise ops only)
  mlp_frozen   the MLP below, variables frozen into Consts, cut at `probs`
  mlp          784-32-10 MLP, softmax cross-entropy, AdamOptimizer.minimize
  mlp_devices  the same under tf.device scopes (variables on CPU:0, layers on
               GPU:0 / GPU:1), colocate_gradients_with_ops=True
  lenet        LeNet CNN (conv-pool-conv-pool-fc-fc, small), Adam
  dwconv_bn    a MobileNet-style block trained in graph mode: conv, fused
               batch norm (training), ReLU6, depthwise conv, GradientDescent
  keras_cnn    a frozen tiny MobileNet-like Keras model: conv, depthwise
               conv, batch norm, ReLU6, global average pooling, dense
  fused_conv   issue 23: TF's own _FusedConv2D nodes, as Grappler's remapper
               writes them (tf_optimizer.OptimizeGraph, "remap" only, CPU):
               Conv2D + BiasAdd + Relu / Relu6 / LeakyRelu / residual Add,
               Const filters; TF's values of the optimised graph
  keras_resnet a frozen tiny ResNet-like Keras model (issue 23, the conv
               fusion): conv with and without bias, batch norm, ReLU, ELU,
               LeakyReLU, residual Adds (identity and projection
               shortcuts), depthwise conv, a zero padding before a stride-2
               conv, swish (x * sigmoid(x)) and sigmoid; two fetches (the
               logits and a block's output)
  cifar_towers the classic multi-tower CIFAR-10 training graph: 2 towers on
               GPU:0 / GPU:1, variables on CPU:0, L2Loss weight decay,
               averaged gradients, GradientDescent

  summaries    the MLP with tf.compat.v1.summary scalar, histogram, image
               and text ops merged by merge_all (dgrun runs them as no-ops)
  tf1_xent     issue 21: a 20-16-5 MLP whose loss is
               softmax_cross_entropy_with_logits_v2 of tf.stop_gradient
               labels, GradientDescent (seeded constant weights: TF's loss)
  dropout      issue 21: tf.compat.v1.layers.dropout(training=...) as TF-1
               builds it (a tf.cond on a bool placeholder around nn.dropout,
               TF-1 control flow) in a 20-16-5 MLP on a [None, 20] input:
               RandomUniform of a run-time Shape, and the gradient's
               BroadcastGradientArgs -> Sum over run-time axes; TF's values
               and loss curve with training=False (no random numbers)
  tf1_init     issue 21: the same model as the TF-1 tutorials initialise
               it (tf.compat.v1.set_random_seed, truncated_normal Variables
               and truncated_normal_initializer / random_normal
               get_variable), plus tf.random.uniform int32 and
               tf.random.categorical (Multinomial) samples: random values
               that dgrun draws from its own streams (no TF values)

Usage: export.py [OUT [NAME...]]     (NAME: only these; mlp includes
                                      mlp_frozen and mlp_devices)
"""
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import json_format  # noqa: E402

tf1 = tf.compat.v1
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "tf"))
TRAIN_STEPS = 3


def rng(seed):
    return np.random.RandomState(seed)


def var(rs, shape, name, scale=0.1, zero=False):
    """A reference variable (VariableV2) starting at a seeded constant."""
    v = np.zeros(shape, np.float32) if zero else \
        (rs.standard_normal(shape) * scale).astype(np.float32)
    return tf1.Variable(v, name=name, use_resource=False)


def write(name, graph_def, feeds, fetch, sess=None, graph=None, train=None,
          note=""):
    """Write a fixture directory.  feeds: {placeholder: array}; fetch: list
    of tensor names; train: (train_op, loss tensor name) or None."""
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    with open(os.path.join(d, "graph.pb"), "wb") as f:
        f.write(graph_def.SerializeToString(deterministic=True))
    with open(os.path.join(d, "graph.json"), "w") as f:
        f.write(json_format.MessageToJson(graph_def, sort_keys=True))
        f.write("\n")
    meta = {"tf_version": tf.__version__, "note": note, "feeds": {},
            "fetch": {}}
    feed_dict = {}
    for ph, val in feeds.items():
        fn = ph.replace("/", "_") + ".npy"
        np.save(os.path.join(d, fn), val)
        meta["feeds"][ph] = fn
        feed_dict[graph.get_tensor_by_name(ph + ":0")] = val
    opts = tf1.RunOptions(output_partition_graphs=True)
    md = tf1.RunMetadata()
    vals = sess.run([graph.get_tensor_by_name(t if ":" in t else t + ":0")
                     for t in fetch], feed_dict, options=opts,
                    run_metadata=md)
    for t, v in zip(fetch, vals):
        fn = t.replace("/", "_").replace(":", "_") + ".npy"
        np.save(os.path.join(d, fn), np.asarray(v))
        meta["fetch"][t] = fn
    if train:
        op, loss = train
        losses = []
        for _ in range(TRAIN_STEPS):
            lv, _ = sess.run([graph.get_tensor_by_name(loss + ":0"),
                              graph.get_operation_by_name(op)], feed_dict,
                             options=opts, run_metadata=md)
            losses.append(float(lv))
        meta["train"] = {"op": op, "loss": loss, "losses": losses}
    place = {}
    for pg in md.partition_graphs:
        for n in pg.node:
            if not n.op.startswith("_"):
                place[n.name] = n.device
    with open(os.path.join(d, "placement.json"), "w") as f:
        json.dump(dict(sorted(place.items())), f, indent=1)
        f.write("\n")
    meta["placement"] = "placement.json"
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print("%-13s %5d nodes %8d bytes" % (name, len(graph_def.node), size))


def session(graph):
    cfg = tf1.ConfigProto(allow_soft_placement=True,
                          intra_op_parallelism_threads=1,
                          inter_op_parallelism_threads=1)
    return tf1.Session(graph=graph, config=cfg)


# ---- graphs -----------------------------------------------------------------

def sincos():
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None], name="x")
        tf.add(tf.sin(x) * tf.cos(x), tf.square(x), name="y")
        with session(g) as s:
            xs = np.linspace(-2, 2, 9).astype(np.float32)
            write("sincos", g.as_graph_def(), {"x": xs}, ["y"], s, g)


def mlp_layers(x, rs, dev1=None, dev2=None, var_dev=None):
    def on(d):
        return tf.device(d) if d else _nullctx()
    with on(var_dev):
        w1 = var(rs, [784, 32], "w1", 0.05)
        b1 = var(rs, [32], "b1", zero=True)
        w2 = var(rs, [32, 10], "w2", 0.2)
        b2 = var(rs, [10], "b2", zero=True)
    with on(dev1):
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1), name="hidden")
    with on(dev2):
        logits = tf.add(tf.matmul(h, w2), b2, name="logits")
    return logits


class _nullctx:
    def __enter__(self):
        return None

    def __exit__(self, *a):
        return False


def mnist_batch(seed, n=8):
    rs = rng(seed)
    return (rs.uniform(0, 1, (n, 784)).astype(np.float32),
            rs.randint(0, 10, n).astype(np.int32))


def mlp(name, devices):
    g = tf.Graph()
    with g.as_default():
        rs = rng(1)
        x = tf1.placeholder(tf.float32, [None, 784], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")
        if devices:
            logits = mlp_layers(x, rs, "/device:GPU:0", "/device:GPU:1",
                                "/device:CPU:0")
        else:
            logits = mlp_layers(x, rs)
        with tf.device("/device:GPU:1" if devices else None):
            xent = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=logits)
            loss = tf.reduce_mean(xent, name="loss")
        tf.nn.softmax(logits, name="probs")
        opt = tf1.train.AdamOptimizer(0.01)
        opt.minimize(loss, name="train",
                     colocate_gradients_with_ops=bool(devices))
        xs, ys = mnist_batch(2)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            gd = g.as_graph_def()
            if not devices:
                frozen = tf1.graph_util.convert_variables_to_constants(
                    s, gd, ["probs"])
                write("mlp_frozen", frozen, {"x": xs}, ["logits", "probs"],
                      s, g, note="the mlp graph's variables frozen into "
                      "Consts, cut at probs (convert_variables_to_constants)")
            write(name, gd, {"x": xs, "y": ys}, ["logits", "loss"], s, g,
                  train=("train", "loss"))


def conv(x, w, b, name):
    return tf.nn.relu(tf.nn.bias_add(
        tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), b), name=name)


def pool(x, name, k=2, s=2):
    return tf.nn.max_pool2d(x, [1, k, k, 1], [1, s, s, 1], "SAME", name=name)


def lenet():
    g = tf.Graph()
    with g.as_default():
        rs = rng(3)
        x = tf1.placeholder(tf.float32, [None, 28, 28, 1], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")
        c1 = conv(x, var(rs, [5, 5, 1, 4], "conv1/w", 0.2),
                  var(rs, [4], "conv1/b", zero=True), "conv1/relu")
        p1 = pool(c1, "pool1")
        c2 = conv(p1, var(rs, [5, 5, 4, 8], "conv2/w", 0.1),
                  var(rs, [8], "conv2/b", zero=True), "conv2/relu")
        p2 = pool(c2, "pool2")
        flat = tf.reshape(p2, [-1, 7 * 7 * 8], name="flatten")
        f1 = tf.nn.relu(tf.matmul(flat, var(rs, [392, 32], "fc1/w", 0.05)) +
                        var(rs, [32], "fc1/b", zero=True), name="fc1/relu")
        logits = tf.add(tf.matmul(f1, var(rs, [32, 10], "fc2/w", 0.2)),
                        var(rs, [10], "fc2/b", zero=True), name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        tf1.train.AdamOptimizer(0.01).minimize(loss, name="train")
        xs, ys = mnist_batch(4, 4)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("lenet", g.as_graph_def(), {"x": xs.reshape(4, 28, 28, 1),
                                              "y": ys},
                  ["logits", "loss"], s, g, train=("train", "loss"))


def keras_cnn():
    from tensorflow.python.framework.convert_to_constants import \
        convert_variables_to_constants_v2
    k = tf.keras
    tf.keras.utils.set_random_seed(5)
    inp = k.Input((16, 16, 3), name="image")
    h = inp
    for layer in [k.layers.Conv2D(8, 3, strides=2, padding="same",
                                  use_bias=False),
                  k.layers.BatchNormalization(), k.layers.ReLU(6.0),
                  k.layers.DepthwiseConv2D(3, padding="same", use_bias=False),
                  k.layers.BatchNormalization(), k.layers.ReLU(6.0),
                  k.layers.Conv2D(16, 1, use_bias=False),
                  k.layers.BatchNormalization(), k.layers.ReLU(6.0),
                  k.layers.GlobalAveragePooling2D(),
                  k.layers.Dense(10, activation="softmax")]:
        h = layer(h)
    model = k.Model(inp, h)
    rs = rng(6)
    for layer in model.layers:   # non-trivial batch-norm statistics
        if isinstance(layer, k.layers.BatchNormalization):
            n = layer.gamma.shape[0]
            layer.set_weights([rs.uniform(0.5, 1.5, n), rs.normal(0, 0.1, n),
                               rs.normal(0, 0.1, n), rs.uniform(0.5, 2, n)])
    fn = tf.function(lambda t: model(t, training=False)).get_concrete_function(
        tf.TensorSpec([None, 16, 16, 3], tf.float32, name="image"))
    frozen = convert_variables_to_constants_v2(fn)
    gd = frozen.graph.as_graph_def()
    del gd.library.function[:]
    in_name = frozen.inputs[0].op.name
    out_name = frozen.outputs[0].op.name
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
        xs = rng(7).uniform(-1, 1, (2, 16, 16, 3)).astype(np.float32)
        with session(g) as s:
            write("keras_cnn", gd, {in_name: xs}, [out_name], s, g,
                  note="frozen Keras model (convert_variables_to_constants_v2);"
                  " input %s, output %s" % (in_name, out_name))


def fused_conv():
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.grappler import tf_optimizer
    g = tf.Graph()
    rs = rng(14)

    def cst(*shape):
        return tf.constant(rs.normal(0, 0.5, shape).astype(np.float32))
    with g.as_default(), tf.device("/device:CPU:0"):
        x = tf1.placeholder(tf.float32, [None, 8, 8, 3], name="x")
        y = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(x, cst(3, 3, 3, 4), 1,
                                                   "SAME"), cst(4)))
        z = tf.nn.relu6(tf.nn.bias_add(tf.nn.conv2d(y, cst(1, 1, 4, 4), 1,
                                                    "VALID"), cst(4)))
        r = tf.nn.bias_add(tf.nn.conv2d(z, cst(3, 3, 4, 4), 1, "SAME"), cst(4))
        r = tf.nn.relu(r + y)
        out = tf.identity(tf.nn.leaky_relu(tf.nn.bias_add(
            tf.nn.conv2d(r, cst(3, 3, 4, 2), 2, "SAME"), cst(2)), 0.1),
            name="out")
        mg = tf1.train.export_meta_graph(graph=g)
        mg.collection_def["train_op"].node_list.value.extend([out.op.name])
    cfg = config_pb2.ConfigProto()
    rw = cfg.graph_options.rewrite_options
    rw.optimizers.extend(["remap"])
    rw.min_graph_nodes = -1
    gd = tf_optimizer.OptimizeGraph(cfg, mg)
    fused = sorted(n.op for n in gd.node if n.op.startswith("_Fused"))
    g2 = tf.Graph()
    with g2.as_default():
        tf.graph_util.import_graph_def(gd, name="")
        xs = rng(15).uniform(-1, 1, (2, 8, 8, 3)).astype(np.float32)
        with session(g2) as s:
            write("fused_conv", gd, {"x": xs}, ["out"], s, g2,
                  note="Grappler-remapped GraphDef (%s)" % ", ".join(fused))


def keras_resnet():
    from tensorflow.python.framework.convert_to_constants import \
        convert_variables_to_constants_v2
    k = tf.keras
    tf.keras.utils.set_random_seed(11)
    inp = k.Input((12, 12, 3), name="image")
    h = k.layers.Conv2D(8, 3, padding="same")(inp)          # bias, then BN
    h = k.layers.ReLU()(k.layers.BatchNormalization()(h))
    y = k.layers.Conv2D(8, 3, padding="same", use_bias=False)(h)
    y = k.layers.ELU()(k.layers.BatchNormalization()(y))
    y = k.layers.Conv2D(8, 1, use_bias=False)(y)
    y = k.layers.BatchNormalization()(y)
    h = block1 = k.layers.ReLU()(k.layers.Add()([y, h]))  # identity
    y = k.layers.ZeroPadding2D(((1, 0), (1, 0)))(h)   # MobileNetV2's
    y = k.layers.Conv2D(16, 3, strides=2, padding="valid")(y)  # no BN
    y = k.layers.LeakyReLU(negative_slope=0.1)(y)
    y = k.layers.DepthwiseConv2D(3, padding="same", use_bias=False)(y)
    y = k.layers.BatchNormalization()(y)
    sc = k.layers.Conv2D(16, 1, strides=2, use_bias=False)(h)  # projection
    sc = k.layers.BatchNormalization()(sc)
    h = k.layers.ReLU()(k.layers.Add()([y, sc]))
    # swish as x * sigmoid(x) (Keras' own swish freezes with an IdentityN),
    # and a sigmoid
    y = k.layers.BatchNormalization()(k.layers.Conv2D(16, 1)(h))
    h = k.layers.Lambda(lambda t: t * tf.sigmoid(t))(y)
    h = k.layers.Activation("sigmoid")(k.layers.Conv2D(8, 1)(h))
    h = k.layers.GlobalAveragePooling2D()(h)
    model = k.Model(inp, [k.layers.Dense(10)(h), block1])
    rs = rng(12)
    for layer in model.layers:   # non-trivial batch-norm statistics
        if isinstance(layer, k.layers.BatchNormalization):
            n = layer.gamma.shape[0]
            layer.set_weights([rs.uniform(0.5, 1.5, n), rs.normal(0, 0.1, n),
                               rs.normal(0, 0.1, n), rs.uniform(0.5, 2, n)])
    fn = tf.function(lambda t: model(t, training=False)).get_concrete_function(
        tf.TensorSpec([None, 12, 12, 3], tf.float32, name="image"))
    frozen = convert_variables_to_constants_v2(fn)
    gd = frozen.graph.as_graph_def()
    del gd.library.function[:]
    in_name = frozen.inputs[0].op.name
    outs = [t.op.name for t in frozen.outputs]
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
        xs = rng(13).uniform(-1, 1, (3, 12, 12, 3)).astype(np.float32)
        with session(g) as s:
            write("keras_resnet", gd, {in_name: xs}, outs, s, g,
                  note="frozen Keras ResNet-like model "
                  "(convert_variables_to_constants_v2); input %s, outputs %s"
                  % (in_name, ", ".join(outs)))


def train_bn(rs, h, n, name):
    """A training-mode fused batch norm over h's n channels (Variables
    gamma ~1, beta ~0)."""
    with tf1.name_scope(name):
        out, _, _ = tf1.nn.fused_batch_norm(
            h, var(rs, [n], name + "/gamma", 0.1) + 1.0,
            var(rs, [n], name + "/beta", 0.1), is_training=True)
    return out


def pool_logits_train(rs, h, y):
    """Global average pool of h's 16 channels, "logits" (dense 16 -> 10),
    "loss" (sparse cross entropy against y), "train" (GradientDescent)."""
    h = tf.reduce_mean(h, [1, 2], name="pool")
    logits = tf.add(tf.matmul(h, var(rs, [16, 10], "fc/w", 0.3)),
                    var(rs, [10], "fc/b", zero=True), name="logits")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits), name="loss")
    tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")


def dwconv_bn():
    g = tf.Graph()
    with g.as_default():
        rs = rng(10)
        x = tf1.placeholder(tf.float32, [None, 8, 8, 3], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")

        h = tf.nn.conv2d(x, var(rs, [3, 3, 3, 8], "conv1/w", 0.2),
                         [1, 2, 2, 1], "SAME")
        h = tf.nn.relu6(train_bn(rs, h, 8, "bn1"), name="relu1")
        h = tf.nn.depthwise_conv2d(h, var(rs, [3, 3, 8, 1], "dw/w", 0.2),
                                   [1, 1, 1, 1], "SAME")
        h = tf.nn.relu6(train_bn(rs, h, 8, "bn2"), name="relu2")
        h = tf.nn.relu6(tf.nn.conv2d(h, var(rs, [1, 1, 8, 16], "pw/w", 0.2),
                                     [1, 1, 1, 1], "VALID"), name="relu3")
        pool_logits_train(rs, h, y)
        b = rng(11)
        xs = b.uniform(-1, 1, (4, 8, 8, 3)).astype(np.float32)
        ys = b.randint(0, 10, 4).astype(np.int32)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("dwconv_bn", g.as_graph_def(), {"x": xs, "y": ys},
                  ["logits", "loss"], s, g, train=("train", "loss"),
                  note="MobileNet-style block trained in graph mode: "
                  "FusedBatchNormV3 (training), DepthwiseConv2dNative, Relu6")


def bn_relu():
    """Conv2D -> FusedBatchNormV3 (training) -> Relu twice, trained in
    graph mode (session 10: the fusion pass applies the Relu inside the
    batch norm; TF's losses must not change)."""
    g = tf.Graph()
    with g.as_default():
        rs = rng(61)
        x = tf1.placeholder(tf.float32, [None, 8, 8, 3], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")

        h = tf.nn.conv2d(x, var(rs, [3, 3, 3, 8], "conv1/w", 0.3),
                         [1, 1, 1, 1], "SAME")
        h = tf.nn.relu(train_bn(rs, h, 8, "bn1"), name="relu1")
        h = tf.nn.conv2d(h, var(rs, [3, 3, 8, 16], "conv2/w", 0.3),
                         [1, 2, 2, 1], "SAME")
        h = tf.nn.relu(train_bn(rs, h, 16, "bn2"), name="relu2")
        pool_logits_train(rs, h, y)
        b = rng(62)
        xs = b.uniform(-1, 1, (6, 8, 8, 3)).astype(np.float32)
        ys = b.randint(0, 10, 6).astype(np.int32)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("bn_relu", g.as_graph_def(), {"x": xs, "y": ys},
                  ["logits", "loss"], s, g, train=("train", "loss"),
                  note="Conv2D, FusedBatchNormV3 (training), Relu, twice")


def cifar_towers():
    g = tf.Graph()
    with g.as_default():
        rs = rng(8)

        def variable(name, shape, scale, wd=None, zero=False):
            with tf.device("/cpu:0"):
                init = np.zeros(shape, np.float32) if zero else \
                    (rs.standard_normal(shape) * scale).astype(np.float32)
                v = tf1.get_variable(name, initializer=init, use_resource=False)
            if wd is not None:
                tf1.add_to_collection("losses", tf.multiply(
                    tf.nn.l2_loss(v), wd, name="weight_loss"))
            return v

        def inference(images):
            with tf1.variable_scope("conv1"):
                c1 = conv(images, variable("weights", [5, 5, 3, 8], 0.1),
                          variable("biases", [8], 0, zero=True), "conv1")
            p1 = pool(c1, "pool1", 3, 2)
            with tf1.variable_scope("conv2"):
                c2 = conv(p1, variable("weights", [5, 5, 8, 8], 0.1),
                          variable("biases", [8], 0, zero=True), "conv2")
            p2 = pool(c2, "pool2", 3, 2)
            flat = tf.reshape(p2, [images.get_shape().as_list()[0], -1])
            with tf1.variable_scope("local3"):
                l3 = tf.nn.relu(tf.matmul(flat, variable(
                    "weights", [72, 32], 0.1, wd=0.004)) +
                    variable("biases", [32], 0, zero=True), name="local3")
            with tf1.variable_scope("local4"):
                l4 = tf.nn.relu(tf.matmul(l3, variable(
                    "weights", [32, 16], 0.1, wd=0.004)) +
                    variable("biases", [16], 0, zero=True), name="local4")
            with tf1.variable_scope("softmax_linear"):
                return tf.add(tf.matmul(l4, variable("weights", [16, 10],
                                                     0.2)),
                              variable("biases", [10], 0, zero=True),
                              name="logits")

        def tower_loss(scope, images, labels):
            logits = inference(images)
            xent = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=labels, logits=logits), name="cross_entropy")
            tf1.add_to_collection("losses", xent)
            return tf.add_n(tf1.get_collection("losses", scope),
                            name="total_loss")

        with tf.device("/cpu:0"):
            opt = tf1.train.GradientDescentOptimizer(0.1)
            feeds, grads, losses = {}, [], []
            batch = rng(9)
            with tf1.variable_scope(tf1.get_variable_scope()):
                for i in range(2):
                    with tf.device("/gpu:%d" % i), \
                            tf.name_scope("tower_%d" % i) as scope:
                        with tf.device("/cpu:0"):
                            im = tf1.placeholder(tf.float32, [4, 12, 12, 3],
                                                 name="images")
                            lb = tf1.placeholder(tf.int32, [4], name="labels")
                        feeds[scope + "images"] = batch.uniform(
                            0, 1, (4, 12, 12, 3)).astype(np.float32)
                        feeds[scope + "labels"] = batch.randint(
                            0, 10, 4).astype(np.int32)
                        loss = tower_loss(scope, im, lb)
                        losses.append(loss)
                        tf1.get_variable_scope().reuse_variables()
                        grads.append(opt.compute_gradients(loss))
            avg = []
            for gv in zip(*grads):
                gs = [tf.expand_dims(gr, 0) for gr, _ in gv]
                grad = tf.reduce_mean(tf.concat(axis=0, values=gs), 0)
                avg.append((grad, gv[0][1]))
            opt.apply_gradients(avg, name="train")
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("cifar_towers", g.as_graph_def(),
                  {k.rstrip("/").replace(":0", ""): v
                   for k, v in feeds.items()},
                  ["tower_0/softmax_linear/logits", "tower_0/total_loss",
                   "tower_1/total_loss"], s, g,
                  train=("train", "tower_0/total_loss"))


def towers_bn():
    """Two towers with batch norm (issue 21): tf.compat.v1.layers'
    conv2d -> batch_normalization(training=True) (FusedBatchNormV3) ->
    relu -> max_pooling2d -> dense under tf.device(f) where the device
    function f pins variables on /cpu:0 and everything else on /gpu:i
    (labels int32 on the GPU, as TF places them), gradients averaged on
    the CPU, the towers' moving-average updates (UPDATE_OPS) as control
    inputs of the train op.  TF needs no soft placement for it on a host
    with 2 GPUs; neither must dgrun."""
    from tensorflow.python.training import moving_averages
    g = tf.Graph()
    with g.as_default():
        rs = rng(21)
        k1 = tf1.constant_initializer(
            (rs.standard_normal((3, 3, 3, 8)) * 0.3).astype(np.float32))
        k2 = tf1.constant_initializer(
            (rs.standard_normal((128, 10)) * 0.1).astype(np.float32))

        def pin(dev):
            def f(op):
                if op.type in ("Variable", "VariableV2", "VarHandleOp"):
                    return "/cpu:0"
                return dev
            return f

        def tower(images, labels):
            # tf.compat.v1.layers' conv2d / batch_normalization / dense,
            # spelt out (Keras 3 has no compat layers): the same ops
            w1 = tf1.get_variable("conv1/kernel", [3, 3, 3, 8],
                                  initializer=k1, use_resource=False)
            c = tf.nn.conv2d(images, w1, [1, 1, 1, 1], "SAME",
                             name="conv1/Conv2D")
            with tf1.variable_scope("bn1"):
                gamma = tf1.get_variable("gamma", [8], use_resource=False,
                                         initializer=tf1.ones_initializer())
                beta = tf1.get_variable("beta", [8], use_resource=False,
                                        initializer=tf1.zeros_initializer())
                mm = tf1.get_variable("moving_mean", [8], trainable=False,
                                      use_resource=False,
                                      initializer=tf1.zeros_initializer())
                mv = tf1.get_variable("moving_variance", [8],
                                      trainable=False, use_resource=False,
                                      initializer=tf1.ones_initializer())
            bn, mean, var = tf1.nn.fused_batch_norm(
                c, gamma, beta, epsilon=1e-3, is_training=True,
                name="bn1/FusedBatchNormV3")
            for v, x in ((mm, mean), (mv, var)):
                tf1.add_to_collection(tf1.GraphKeys.UPDATE_OPS,
                                      moving_averages.assign_moving_average(
                                          v, x, 0.99, zero_debias=False))
            p = tf.nn.max_pool2d(tf.nn.relu(bn), 2, 2, "VALID")
            w2 = tf1.get_variable("logits/kernel", [128, 10],
                                  initializer=k2, use_resource=False)
            b2 = tf1.get_variable("logits/bias", [10], use_resource=False,
                                  initializer=tf1.zeros_initializer())
            logits = tf.nn.bias_add(tf.matmul(tf.reshape(p, [4, 128]), w2),
                                    b2, name="logits/BiasAdd")
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=labels, logits=logits), name="loss")
            return logits, loss

        opt = tf1.train.GradientDescentOptimizer(0.1)
        feeds, grads = {}, []
        batch = rng(22)
        with tf1.variable_scope(tf1.get_variable_scope()):
            for i in range(2):
                with g.device(pin("/gpu:%d" % i)), \
                        tf.name_scope("tower_%d" % i) as scope:
                    im = tf1.placeholder(tf.float32, [4, 8, 8, 3],
                                         name="images")
                    lb = tf1.placeholder(tf.int32, [4], name="labels")
                    feeds[scope + "images"] = batch.uniform(
                        0, 1, (4, 8, 8, 3)).astype(np.float32)
                    feeds[scope + "labels"] = batch.randint(
                        0, 10, 4).astype(np.int32)
                    tower(im, lb)
                    tf1.get_variable_scope().reuse_variables()
                    grads.append(opt.compute_gradients(
                        g.get_tensor_by_name(scope + "loss:0")))
        with tf.device("/cpu:0"):
            avg = []
            for gv in zip(*grads):
                gs = [tf.expand_dims(gr, 0) for gr, _ in gv]
                avg.append((tf.reduce_mean(tf.concat(gs, 0), 0), gv[0][1]))
            with tf.control_dependencies(
                    tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)):
                opt.apply_gradients(avg, name="train")
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("towers_bn", g.as_graph_def(),
                  {k.rstrip("/"): v for k, v in feeds.items()},
                  ["tower_0/logits/BiasAdd", "tower_0/loss", "tower_1/loss"],
                  s, g, train=("train", "tower_0/loss"),
                  note="two towers with training batch norm under a "
                  "device function (variables on /cpu:0, the rest on "
                  "/gpu:i); TF ran it on CPU with soft placement")


def summaries():
    """The MLP with tf.compat.v1.summary ops (scalar, histogram, image,
    text) merged by merge_all, as exported training graphs carry them."""
    g = tf.Graph()
    with g.as_default():
        rs = rng(11)
        x = tf1.placeholder(tf.float32, [None, 784], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")
        logits = mlp_layers(x, rs)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        tf1.summary.scalar("loss", loss)
        tf1.summary.histogram("logits", logits)
        tf1.summary.image("input", tf.reshape(x, [-1, 28, 28, 1]),
                          max_outputs=2)
        tf1.summary.text("note", tf.constant("dgrun"))
        merged = tf1.summary.merge_all()
        tf.identity(loss, name="loss_copy")
        tf1.train.AdamOptimizer(0.01).minimize(loss, name="train")
        xs, ys = mnist_batch(12)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("summaries", g.as_graph_def(), {"x": xs, "y": ys},
                  ["logits", "loss"], s, g, train=("train", "loss"),
                  note="MLP with summary ops (scalar, histogram, image, "
                  "text) merged into %s" % merged.op.name)


def xent_batch(seed, n=16):
    rs = rng(seed)
    xs = rs.uniform(-1, 1, (n, 20)).astype(np.float32)
    ys = np.eye(5, dtype=np.float32)[rs.randint(0, 5, n)]
    return xs, ys


def tf1_xent():
    """tf.stop_gradient in softmax_cross_entropy_with_logits_v2 (issue 21),
    weights from seeded constants so that TF's loss curve is dgrun's."""
    g = tf.Graph()
    with g.as_default():
        rs = rng(21)
        x = tf1.placeholder(tf.float32, [None, 20], name="x")
        y = tf1.placeholder(tf.float32, [None, 5], name="y")
        w1 = var(rs, [20, 16], "w1", 0.3)
        b1 = var(rs, [16], "b1", zero=True)
        w2 = var(rs, [16, 5], "w2", 0.3)
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.matmul(h, w2, name="logits")
        xent = tf1.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.stop_gradient(y), logits=logits)
        loss = tf.reduce_mean(xent, name="loss")
        tf1.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
        xs, ys = xent_batch(3)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("tf1_xent", g.as_graph_def(), {"x": xs, "y": ys},
                  ["logits", "loss"], s, g, train=("train", "loss"),
                  note="softmax_cross_entropy_with_logits_v2 of "
                  "tf.stop_gradient(labels), GradientDescent")


def tf1_init():
    """TF-1 tutorial initializers (issue 21): truncated normal everywhere."""
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(1234)
        x = tf1.placeholder(tf.float32, [None, 20], name="x")
        y = tf1.placeholder(tf.float32, [None, 5], name="y")
        w1 = tf1.Variable(tf1.truncated_normal([20, 16], stddev=0.1),
                          name="w1", use_resource=False)
        b1 = tf1.Variable(tf.constant(0.1, shape=[16]), name="b1",
                          use_resource=False)
        w2 = tf1.get_variable(
            "w2", [16, 5], use_resource=False,
            initializer=tf1.truncated_normal_initializer(stddev=0.1))
        b2 = tf1.get_variable(
            "b2", [5], use_resource=False,
            initializer=tf1.random_normal_initializer(stddev=0.01))
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.add(tf.matmul(h, w2), b2, name="logits")
        xent = tf1.nn.softmax_cross_entropy_with_logits_v2(
            labels=tf.stop_gradient(y), logits=logits)
        loss = tf.reduce_mean(xent, name="loss")
        tf1.random.categorical(logits, 4, name="samples")
        tf1.random.uniform([3, 4], 0, 10, dtype=tf.int32, name="ints")
        tf.identity(tf1.truncated_normal([1000], mean=5.0, stddev=2.0),
                    name="tn")
        tf1.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
        xs, ys = xent_batch(4)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("tf1_init", g.as_graph_def(), {"x": xs, "y": ys},
                  ["loss"], s, g, train=("train", "loss"),
                  note="random initializers: TF's values are its own "
                  "Philox streams, not dgrun's; the test checks ranges "
                  "and that it trains")


def dropout():
    """tf.compat.v1.layers.dropout(training=t) on an unknown batch (issue
    21).  Keras 3 has no tf.compat.v1.layers, so this is its graph: the
    smart_cond of a bool placeholder, built with TF-1 control flow."""
    tf1.disable_control_flow_v2()
    g = tf.Graph()
    with g.as_default():
        rs = rng(22)
        x = tf1.placeholder(tf.float32, [None, 20], name="x")
        y = tf1.placeholder(tf.int32, [None], name="y")
        training = tf1.placeholder(tf.bool, [], name="training")
        w1 = var(rs, [20, 16], "w1", 0.3)
        b1 = var(rs, [16], "b1", zero=True)
        w2 = var(rs, [16, 5], "w2", 0.3)
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        with tf1.name_scope("drop1"):
            h = tf1.cond(training, lambda: tf.nn.dropout(h, rate=0.5),
                         lambda: tf.identity(h))
        logits = tf.matmul(h, w2, name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        tf1.train.GradientDescentOptimizer(0.5).minimize(loss, name="train")
        xs, _ = xent_batch(5)
        ys = rng(6).randint(0, 5, len(xs)).astype(np.int32)
        with session(g) as s:
            s.run(tf1.global_variables_initializer())
            write("dropout", g.as_graph_def(),
                  {"x": xs, "y": ys, "training": np.array(False)},
                  ["logits", "loss"], s, g, train=("train", "loss"),
                  note="dropout(training=placeholder) on a [None, 20] input; "
                  "TF's values with training=False")
    tf1.enable_control_flow_v2()

def ph_default():
    """tf.compat.v1.placeholder_with_default: a [None, 3] input whose
    default is a [2, 3] constant, a bool `training` flag defaulting to
    False (as Keras/TF-1 exports have it), and a Variable read through one
    (its gradient passes through).  Two fixtures of one graph: nothing fed
    (the defaults) and everything fed (a batch of 4, training=True)."""
    g = tf.Graph()
    with g.as_default():
        rs = rng(31)
        d = tf1.placeholder_with_default(
            tf.constant(rs.uniform(-1, 1, (2, 3)).astype(np.float32)),
            shape=[None, 3], name="d")
        training = tf1.placeholder_with_default(False, shape=[],
                                                name="training")
        w = var(rs, [3, 2], "w", 0.5)
        wd = tf1.placeholder_with_default(w, shape=[3, 2], name="wd")
        h = tf.matmul(d, wd, name="h")
        out = tf.multiply(h, 1.0 + tf.cast(training, tf.float32), name="out")
        loss = tf.reduce_mean(tf.square(out - 1.0), name="loss")
        tf1.train.GradientDescentOptimizer(0.3).minimize(loss, name="train")
        init = tf1.global_variables_initializer()
        for name, feeds in (
                ("ph_default", {}),
                ("ph_default_fed", {
                    "d": rng(32).uniform(-1, 1, (4, 3)).astype(np.float32),
                    "training": np.array(True)})):
            with session(g) as s:
                s.run(init)
                write(name, g.as_graph_def(), feeds, ["out", "loss"], s, g,
                      train=("train", "loss"),
                      note="PlaceholderWithDefault " +
                      ("fed" if feeds else "not fed: its defaults"))


def runtime_axes():
    """Split / SplitV / ConcatV2 / Concat / GatherV2 whose axis is a
    run-time tensor (issue 21): a fed int32 `axis` and a Rank-based one, on
    a [None, 4] input; TF's gradient of the concatenation (ConcatOffset,
    Slice) trains a Variable."""
    g = tf.Graph()
    with g.as_default():
        rs = rng(41)
        x = tf1.placeholder(tf.float32, [None, 4], name="x")
        ax = tf1.placeholder(tf.int32, [], name="axis")
        w = var(rs, [4, 4], "w", 0.5)
        h = tf.matmul(x, w, name="h")
        c = tf.concat([x, h], axis=ax, name="c")
        s0, s1 = tf.split(c, 2, axis=ax, name="s")
        v0, v1 = tf.split(c, [3, 5], axis=ax, name="v")
        ra = tf.subtract(tf.rank(x), 1, name="ra")
        c1 = tf.raw_ops.Concat(concat_dim=ra, values=[s1, v0], name="c1")
        tf.gather(c, [0, 2], axis=ax, name="g")
        loss = tf.add(tf.reduce_mean(tf.square(c1 - 0.5)),
                      tf.reduce_mean(tf.square(v1)), name="loss")
        tf1.train.GradientDescentOptimizer(0.2).minimize(loss, name="train")
        with session(g) as sess:
            sess.run(tf1.global_variables_initializer())
            write("runtime_axes", g.as_graph_def(),
                  {"x": rng(42).uniform(-1, 1, (3, 4)).astype(np.float32),
                   "axis": np.array(1, np.int32)},
                  ["c", "s:0", "s:1", "v:0", "v:1", "c1", "g", "loss"], sess,
                  g,
                  train=("train", "loss"),
                  note="Split/SplitV/ConcatV2 on a fed axis, Concat on "
                  "Rank(x) - 1")


def nms_padded():
    """tf.image.non_max_suppression_padded (TF 2.x control flow v2): a
    function with StatelessIf branches (the else branch of its sort returns
    a Const, which must stay dead when the then branch runs), while loops,
    batch_dims gathers and an ExpandDims whose dim is a [1] tensor."""
    g = tf.Graph()
    with g.as_default():
        rs = rng(51)
        boxes = tf1.placeholder(tf.float32, [12, 4], name="boxes")
        scores = tf1.placeholder(tf.float32, [12], name="scores")
        idx, n = tf.image.non_max_suppression_padded(
            boxes, scores, 5, iou_threshold=0.3, score_threshold=0.1,
            pad_to_max_output_size=True)
        tf.identity(idx, name="idx")
        tf.identity(n, name="n")
        lo = rs.uniform(0, 4, (12, 2))
        b = np.concatenate([lo, lo + rs.uniform(0.5, 2, (12, 2))], 1)
        with session(g) as sess:
            write("nms_padded", g.as_graph_def(),
                  {"boxes": b.astype(np.float32),
                   "scores": rs.uniform(0, 1, 12).astype(np.float32)},
                  ["idx", "n"], sess, g,
                  note="non_max_suppression_padded: If/While functions, "
                  "batch_dims gathers")


FIXTURES = ["keras_cnn", "keras_resnet", "fused_conv", "sincos", "mlp",
            "lenet", "dwconv_bn", "cifar_towers", "summaries", "tf1_xent",
            "tf1_init", "dropout", "towers_bn", "ph_default", "runtime_axes",
            "nms_padded", "bn_relu"]


def main():
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[2:] or FIXTURES
    for name in FIXTURES:   # eager Keras first: the rest is graph mode
        if name not in only:
            continue
        if name == "mlp":
            mlp("mlp", devices=False)
            mlp("mlp_devices", devices=True)
        else:
            globals()[name]()


if __name__ == "__main__":
    main()
