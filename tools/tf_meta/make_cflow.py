#!/usr/bin/env python3
"""make_cflow.py -- TF 2 SavedModels with functional control flow (issue 24).

Needs TensorFlow (the fixture venv); the test suite only reads what this
writes.

  tools/tf_fixtures/.venv/bin/python tools/tf_meta/make_cflow.py [OUT]

OUT defaults to tests/data/tf_meta.  Writes under OUT:

  tf2_while/   a tf.Module whose tf.function runs a tf.while_loop (a
               functional While: cond and body functions) that calls
               another tf.function in its body, reads a variable, writes a
               tf.TensorArray at a varying index (TensorListReserve /
               SetItem, stacked after the loop: TensorListStack), reads a
               TensorArray unstacked from its input (TensorListFromTensor /
               GetItem), fills a dynamic-size TensorArray (SetItem
               resize_if_index_out_of_bounds), takes a tf.cond on the
               iteration's parity (an If inside the loop) and counts its
               iterations; x.npy and TF's outputs (out_ys.npy, out_zs.npy,
               out_n.npy, out_acc.npy), meta.json
  keras_gru/   a Keras GRU (return_sequences, so the loop writes every
               step) then Dense: x.npy, out.npy (TF's serving_default)
  tf2_cond/    a tf.function with a tf.cond (a functional If / StatelessIf)
               on its input: x.npy, xneg.npy and TF's outputs for both
               (out.npy, outneg.npy)
  tf2_list/    a tf.function pushing onto an EmptyTensorList (TensorList
               ops dgrun does not map: an error test); x.npy

  tf2_graphdef/ the GraphDef of a concrete tf.function (a tf.while_loop
               over a TensorArray with a tf.cond in its body, no variables)
               as TF 2 writes it: the While and the If with their functions
               in the GraphDef's library; fn.pb, x.npy and TF's outputs
               (out.npy: the stacked array, n.npy: the count) and
               meta.json naming the output tensors

and the saved_model.pb of tf2_while, tf2_cond and tf2_list and
tf2_graphdef's fn.pb as seeds of the savedmodel fuzz target
(tests/fuzz/corpus/savedmodel/*_saved_model.pb, graphdef_fn.pb).
"""
import json
import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "data", "tf_meta"))


def fresh(name):
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


class Loop(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.array([[0.5, -0.25], [0.75, 0.1]],
                                      np.float32), name="w")

    @tf.function
    def step(self, h, x):
        return tf.tanh(tf.matmul(h, self.w) + x)

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def run(self, x):
        xs = tf.TensorArray(tf.float32, size=tf.shape(x)[0]).unstack(x)
        ys = tf.TensorArray(tf.float32, size=tf.shape(x)[0])
        zs = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        h = tf.zeros([1, 2])

        def cond(i, h, ys, zs, acc):
            return i < tf.shape(x)[0]

        def body(i, h, ys, zs, acc):
            h = self.step(h, tf.reshape(xs.read(i), [1, 2]))
            acc = tf.cond(i % 2 == 0, lambda: acc + 2.0,
                          lambda: acc * 1.5 - tf.reduce_sum(h))
            return (i + 1, h, ys.write(i, tf.reshape(h, [2])),
                    zs.write(i, acc), acc)

        n, h, ys, zs, acc = tf.while_loop(cond, body, [0, h, ys, zs, 0.0])
        return {"ys": ys.stack(), "zs": zs.stack(), "n": n, "acc": acc}


def tf2_while():
    d = fresh("tf2_while")
    m = Loop()
    tf.saved_model.save(m, os.path.join(d, "model"),
                        signatures={"serving_default": m.run})
    x = np.array([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6], [0.7, 0.8]],
                 np.float32)
    fn = tf.saved_model.load(os.path.join(d, "model")).signatures[
        "serving_default"]
    res = fn(x=tf.constant(x))
    np.save(os.path.join(d, "x.npy"), x)
    for k in ("ys", "zs", "n", "acc"):
        np.save(os.path.join(d, "out_%s.npy" % k), res[k].numpy())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"inputs": ["x"], "outputs": sorted(res.keys())}, f)
        f.write("\n")


def keras_gru():
    import keras
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from make_fixtures import save_keras
    keras.utils.set_random_seed(6)
    model = keras.Sequential([keras.Input((4, 3)),
                              keras.layers.GRU(5, return_sequences=True),
                              keras.layers.Dense(2)])
    x = np.random.RandomState(12).randn(2, 4, 3).astype(np.float32)
    save_keras(OUT, "keras_gru", model, x)


class Cond(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def run(self, x):
        s = tf.reduce_sum(x)
        return tf.cond(s > 0, lambda: x * 2.0 + 1.0, lambda: tf.exp(x) - s)


def tf2_cond():
    d = fresh("tf2_cond")
    m = Cond()
    tf.saved_model.save(m, os.path.join(d, "model"),
                        signatures={"serving_default": m.run})
    fn = tf.saved_model.load(os.path.join(d, "model")).signatures[
        "serving_default"]
    x = np.array([[0.5, 1.0, -0.25], [0.75, 0.1, 0.2]], np.float32)
    for name, v in (("", x), ("neg", -x)):
        res = fn(x=tf.constant(v))
        np.save(os.path.join(d, "x%s.npy" % name), v)
        np.save(os.path.join(d, "out%s.npy" % name),
                res[sorted(res.keys())[0]].numpy())


class PushBack(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def run(self, x):
        ls = tf.raw_ops.EmptyTensorList(element_shape=[3],
                                        max_num_elements=-1,
                                        element_dtype=tf.float32)
        ls = tf.raw_ops.TensorListPushBack(input_handle=ls, tensor=x)
        return tf.raw_ops.TensorListStack(input_handle=ls, element_shape=[3],
                                          element_dtype=tf.float32)


def tf2_list():
    d = fresh("tf2_list")
    m = PushBack()
    tf.saved_model.save(m, os.path.join(d, "model"),
                        signatures={"serving_default": m.run})
    np.save(os.path.join(d, "x.npy"), np.array([1, 2, 3], np.float32))


def tf2_graphdef():
    d = fresh("tf2_graphdef")

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def fn(x):
        ta = tf.TensorArray(tf.float32, size=tf.shape(x)[0])

        def body(i, s, ta):
            xi = tf.gather(x, i)
            s = tf.cond(xi > 0, lambda: s + xi, lambda: s * 0.5)
            return i + 1, s, ta.write(i, s)

        n, s, ta = tf.while_loop(lambda i, s, ta: i < tf.shape(x)[0], body,
                                 [0, 1.0, ta])
        return tf.identity(ta.stack(), name="out"), tf.identity(n, name="n")

    cf = fn.get_concrete_function()
    with open(os.path.join(d, "fn.pb"), "wb") as f:
        f.write(cf.graph.as_graph_def().SerializeToString(deterministic=True))
    x = np.array([0.5, -1.0, 2.0, 0.25, -3.0], np.float32)
    out, n = fn(tf.constant(x))
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "out.npy"), out.numpy())
    np.save(os.path.join(d, "n.npy"), n.numpy())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"input": cf.inputs[0].name,
                   "outputs": [t.name for t in cf.outputs]}, f)
        f.write("\n")


def main():
    tf2_while()
    keras_gru()
    tf2_cond()
    tf2_list()
    tf2_graphdef()
    seeds = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "..", "tests", "fuzz", "corpus", "savedmodel")
    for name in ("while", "cond", "list"):
        shutil.copyfile(os.path.join(OUT, "tf2_" + name, "model",
                                     "saved_model.pb"),
                        os.path.join(seeds, name + "_saved_model.pb"))
    shutil.copyfile(os.path.join(OUT, "tf2_graphdef", "fn.pb"),
                    os.path.join(seeds, "graphdef_fn.pb"))


if __name__ == "__main__":
    main()
