#!/usr/bin/env python3
"""make_fixtures.py -- TF-made MetaGraphDef and SavedModel fixtures (issue 24).

Needs TensorFlow (the fixture venv: /work/main/tools/tf_fixtures/.venv or
tools/tf_fixtures/make.sh's); the test suite only reads what this writes.

  python tools/tf_meta/make_fixtures.py [OUT]    (default tests/data/tf_meta)

Writes under OUT:

  mlp_adam/      a TF-1 MLP (4-16-3, ReLU, sparse softmax cross-entropy,
                 AdamOptimizer(0.01).minimize with a global step) trained
                 STEPS steps full-batch by tf.compat.v1.train.Saver:
                 ck/model.ckpt-STEPS.{meta,index,data-00000-of-00001},
                 ck/checkpoint; model_text.meta (the same MetaGraphDef as
                 text); x.npy, y.npy; meta.json: TF's loss before each of
                 the next 3 steps after the restore and the variables after
                 those 3 steps (loss_next, after3).
  sm_tf1/        tf.compat.v1.saved_model.simple_save of that trained MLP
                 (inputs {"x"}, outputs {"probs", "logits"}); probs.npy,
                 logits.npy: TF's outputs for x.npy.
  keras_mlp/     TF 2 SavedModels (tf.saved_model.save of a Keras model):
                 an MLP, a small CNN, an LSTM; x.npy and TF's
                 serving_default output (out.npy), meta.json with the
                 signature's keys.  (The LSTM's functional While and
                 TensorLists: compiler/load/load_cflow.c.)
"""
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OUT = os.path.abspath(ARGS[0] if ARGS else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "tf_meta"))
STEPS = 20


def data():
    rs = np.random.RandomState(7)
    x = rs.randn(32, 4).astype(np.float32)
    y = (np.abs(x[:, 0] * 2 + x[:, 1]).astype(np.int64) % 3).astype(np.int32)
    return x, y


def build_mlp():
    """The TF-1 MLP in the current default graph; returns its tensors."""
    rs = np.random.RandomState(3)
    x = tf1.placeholder(tf.float32, [None, 4], name="x")
    y = tf1.placeholder(tf.int32, [None], name="y")
    w1 = tf1.get_variable("w1", initializer=(rs.randn(4, 16) * 0.5)
                          .astype(np.float32))
    b1 = tf1.get_variable("b1", initializer=np.zeros(16, np.float32))
    w2 = tf1.get_variable("w2", initializer=(rs.randn(16, 3) * 0.5)
                          .astype(np.float32))
    b2 = tf1.get_variable("b2", initializer=np.zeros(3, np.float32))
    h = tf.nn.relu(tf.matmul(x, w1) + b1, name="h")
    logits = tf.add(tf.matmul(h, w2), b2, name="logits")
    probs = tf.nn.softmax(logits, name="probs")
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=y, logits=logits), name="loss")
    tf1.add_to_collection(tf1.GraphKeys.LOSSES, loss)
    gs = tf1.train.get_or_create_global_step()
    train = tf1.train.AdamOptimizer(0.01).minimize(loss, global_step=gs,
                                                   name="train")
    # (minimize puts `train` in the train_op collection itself)
    tf1.summary.scalar("loss", loss)
    return dict(x=x, y=y, logits=logits, probs=probs, loss=loss, train=train,
                gs=gs)


def var_values(sess):
    return {v.op.name: sess.run(v).tolist() for v in tf1.global_variables()}


def mlp_adam():
    tf1.disable_resource_variables()  # TF-1's VariableV2 (ref variables)
    d = os.path.join(OUT, "mlp_adam")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "ck"))
    x, y = data()
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y)
    g = tf.Graph()
    with g.as_default():
        m = build_mlp()
        saver = tf1.train.Saver(save_relative_paths=True)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            fd = {m["x"]: x, m["y"]: y}
            for _ in range(STEPS):
                sess.run(m["train"], fd)
            saver.save(sess, os.path.join(d, "ck", "model.ckpt"),
                       global_step=STEPS)
            tf1.train.export_meta_graph(os.path.join(d, "model_text.meta"),
                                        as_text=True, saver_def=saver.saver_def)
            nxt = []
            for _ in range(3):
                lv, _ = sess.run([m["loss"], m["train"]], fd)
                nxt.append(float(lv))
            after = var_values(sess)
    # the checkpoint's state file names the checkpoint relative to ck/
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"steps": STEPS, "loss_next": nxt, "after3": after},
                  f, indent=1, sort_keys=True)
        f.write("\n")

    # the same trained model as a TF-1 SavedModel
    s = os.path.join(OUT, "sm_tf1")
    shutil.rmtree(s, ignore_errors=True)
    g = tf.Graph()
    with g.as_default():
        m = build_mlp()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            saver.restore(sess, os.path.join(d, "ck", "model.ckpt-%d" % STEPS))
            tf1.saved_model.simple_save(
                sess, os.path.join(s, "model"), inputs={"x": m["x"]},
                outputs={"probs": m["probs"], "logits": m["logits"]})
            p, lg = sess.run([m["probs"], m["logits"]], {m["x"]: x[:5]})
    np.save(os.path.join(s, "x.npy"), x[:5])
    np.save(os.path.join(s, "probs.npy"), p)
    np.save(os.path.join(s, "logits.npy"), lg)


def keras_models():
    import keras
    keras.utils.set_random_seed(5)
    rs = np.random.RandomState(11)
    zoo = {
        "keras_mlp": (keras.Sequential([
            keras.Input((6,)), keras.layers.Dense(8, activation="relu"),
            keras.layers.Dense(3, activation="softmax")]),
            rs.randn(2, 6).astype(np.float32)),
        "keras_cnn": (keras.Sequential([
            keras.Input((8, 8, 1)),
            keras.layers.Conv2D(4, 3, activation="relu"),
            keras.layers.MaxPooling2D(), keras.layers.Flatten(),
            keras.layers.Dense(3)]),
            rs.randn(2, 8, 8, 1).astype(np.float32)),
        "keras_lstm": (keras.Sequential([
            keras.Input((5, 3)), keras.layers.LSTM(4),
            keras.layers.Dense(2)]),
            rs.randn(2, 5, 3).astype(np.float32)),
    }
    for name, (model, x) in zoo.items():
        save_keras(OUT, name, model, x)


def save_keras(out, name, model, x):
    """OUT/name/: the Keras model as a TF 2 SavedModel, x.npy, TF's
    serving_default output for it (out.npy) and the signature's keys."""
    d = os.path.join(out, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    tf.saved_model.save(model, os.path.join(d, "model"))
    loaded = tf.saved_model.load(os.path.join(d, "model"))
    fn = loaded.signatures["serving_default"]
    ins = list(fn.structured_input_signature[1].keys())
    res = fn(**{ins[0]: tf.constant(x)})
    outs = sorted(res.keys())
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "out.npy"), res[outs[0]].numpy())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"inputs": ins, "outputs": outs}, f, sort_keys=True)
        f.write("\n")


def mlp_resource():
    """mlp_rv/: the MLP with resource variables (TF 2's default in graph
    mode: VarHandleOp, ResourceApplyAdam), trained 5 steps and saved;
    meta.json: TF's loss before each of the next 3 steps."""
    d = os.path.join(OUT, "mlp_rv")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "ck"))
    x, y = data()
    with tf.Graph().as_default():
        tf1.enable_resource_variables()
        m = build_mlp()
        tf1.disable_resource_variables()
        saver = tf1.train.Saver(save_relative_paths=True)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            fd = {m["x"]: x, m["y"]: y}
            for _ in range(5):
                sess.run(m["train"], fd)
            saver.save(sess, os.path.join(d, "ck", "model.ckpt"),
                       global_step=5, write_meta_graph=True)
            nxt = [float(sess.run([m["loss"], m["train"]], fd)[0])
                   for _ in range(3)]
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"steps": 5, "loss_next": nxt}, f, indent=1)
        f.write("\n")


def fuzz_seeds():
    """Small seeds for tests/fuzz/corpus/savedmodel: a tiny TF-1 graph
    (y = x * w + 1, a Variable, a Saver, a train op) as a binary
    MetaGraphDef and as a SavedModel with a signature."""
    d = os.path.join(OUT, "..", "..", "fuzz", "corpus", "savedmodel")
    os.makedirs(d, exist_ok=True)
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.float32, [None, 2], name="x")
        w = tf1.get_variable("w", initializer=np.ones((2, 1), np.float32))
        y = tf.add(tf.matmul(x, w), 1.0, name="y")
        loss = tf.reduce_mean(tf.square(y), name="loss")
        tf1.add_to_collection(tf1.GraphKeys.LOSSES, loss)
        tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        saver = tf1.train.Saver()
        mg = tf1.train.export_meta_graph(saver_def=saver.saver_def,
                                         strip_default_attrs=True)
        with open(os.path.join(d, "tiny.meta"), "wb") as f:
            f.write(mg.SerializeToString())
        from google.protobuf import text_format
        mg2 = type(mg)()
        mg2.CopyFrom(mg)
        mg2.meta_info_def.ClearField("stripped_op_list")
        with open(os.path.join(d, "tiny_text.meta"), "w") as f:
            f.write(text_format.MessageToString(mg2))
        from tensorflow.core.protobuf import saved_model_pb2
        sig = tf1.saved_model.predict_signature_def({"x": x}, {"y": y})
        mg.signature_def["serving_default"].CopyFrom(sig)
        mg.meta_info_def.tags.append("serve")
        sm = saved_model_pb2.SavedModel(saved_model_schema_version=1)
        sm.meta_graphs.add().CopyFrom(mg)
        with open(os.path.join(d, "tiny_saved_model.pb"), "wb") as f:
            f.write(sm.SerializeToString())


def tf2_module():
    """tf2_module/: a tf.Module saved by tf.saved_model.save: a
    tf.function calling another (nested calls), a tf.device scope inside
    it, a counter variable assigned in it (a control output) and read
    after; out_y.npy and out_count.npy: TF's outputs of the 1st and 3rd
    call."""
    class M(tf.Module):
        def __init__(self):
            rs = np.random.RandomState(2)
            self.w = tf.Variable(rs.randn(3, 2).astype(np.float32), name="w")
            self.b = tf.Variable(np.array([0.5, -0.5], np.float32), name="b")
            self.count = tf.Variable(0.0, name="count")

        @tf.function
        def dense(self, x):
            with tf.device("/device:CPU:0"):
                h = tf.matmul(x, self.w)
            return tf.nn.relu(h + self.b)

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            self.count.assign_add(1.0)
            return {"y": self.dense(x) * 2.0,
                    "count": self.count.read_value()}

    d = os.path.join(OUT, "tf2_module")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    m = M()
    tf.saved_model.save(m, os.path.join(d, "model"),
                        signatures={"serving_default": m.__call__})
    x = np.random.RandomState(4).randn(4, 3).astype(np.float32)
    loaded = tf.saved_model.load(os.path.join(d, "model"))
    f = loaded.signatures["serving_default"]
    r1 = f(x=tf.constant(x))
    f(x=tf.constant(x))
    r3 = f(x=tf.constant(x))
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), r1["y"].numpy())
    np.save(os.path.join(d, "count1.npy"), r1["count"].numpy())
    np.save(os.path.join(d, "count3.npy"), r3["count"].numpy())
    # the same SavedModel in text format (saved_model.pbtxt)
    from google.protobuf import text_format
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    with open(os.path.join(d, "model", "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    shutil.copytree(os.path.join(d, "model", "variables"),
                    os.path.join(d, "model_text", "variables"))
    with open(os.path.join(d, "model_text", "saved_model.pbtxt"), "w") as f:
        f.write(text_format.MessageToString(sm))


def main():
    os.makedirs(OUT, exist_ok=True)
    if "--tf2-only" in sys.argv:
        tf2_module()
        return
    mlp_adam()
    mlp_resource()
    fuzz_seeds()
    tf2_module()
    if "--no-keras" not in sys.argv:
        keras_models()


if __name__ == "__main__":
    main()
