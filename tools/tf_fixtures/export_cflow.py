#!/usr/bin/env python3
"""export_cflow.py -- the TF-1 control-flow fixtures of issue 11 (a sibling
of export.py, whose writer it uses; run it with the venv make.sh creates:
tools/tf_fixtures/.venv/bin/python tools/tf_fixtures/export_cflow.py [OUT]).

TF-1 control flow (tf.compat.v1.disable_control_flow_v2: Switch/Merge/
Enter/Exit/NextIteration, TensorArrayV3, stacks), GraphDefs written with
_output_shapes (add_shapes=True: the shapes of TensorArray reads and stack
pops, which only the run knows, come from there):

  cf_cond         y = cond(p, sin(x) * 2, cos(x) + 1) for p fed true
  cf_while_nested an outer while_loop (3 iterations) around an inner one
                  (4 iterations) accumulating x
  lstm            tf.compat.v1.nn.dynamic_rnn over an LSTM cell (hidden 8,
                  seq 5, batch 4, input 3, time-major), squared error
                  against a target, AdamOptimizer (TF's gradient loop with
                  stacks and TensorArray gradients)
  lstm_frozen     the same LSTM's forward graph, variables frozen, cut at
                  its outputs
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export as ex  # noqa: E402  (sets up TF and OUT)

tf, tf1, np = ex.tf, ex.tf1, ex.np
tf1.disable_control_flow_v2()


def cf_cond():
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [4], name="x")
        p = tf1.placeholder(tf.bool, [], name="p")
        tf1.cond(p, lambda: tf.sin(x) * 2.0, lambda: tf.cos(x) + 1.0,
                 name="cond")
        y = tf.identity(g.get_tensor_by_name("cond/Merge:0"), name="y")
        del y
        with ex.session(g) as s:
            xs = np.linspace(-1, 1, 4).astype(np.float32)
            ex.write("cf_cond", g.as_graph_def(add_shapes=True),
                     {"x": xs, "p": np.array(True)}, ["y"], s, g,
                     note="tf.cond (TF-1 Switch/Merge), p fed true")


def cf_while_nested():
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [3], name="x")

        def outer_body(i, acc):
            def inner_body(j, a):
                return j + 1, a * 0.5 + x
            _, acc2 = tf1.while_loop(lambda j, a: j < 4, inner_body,
                                     [tf.constant(0), acc], name="inner")
            return i + 1, acc2 + tf.cast(i, tf.float32)
        _, out = tf1.while_loop(lambda i, a: i < 3, outer_body,
                                [tf.constant(0), tf.zeros([3])],
                                name="outer")
        tf.identity(out, name="y")
        with ex.session(g) as s:
            xs = np.array([1.0, -2.0, 0.5], np.float32)
            ex.write("cf_while_nested", g.as_graph_def(add_shapes=True),
                     {"x": xs}, ["y"], s, g,
                     note="nested tf.while_loop (TF-1 frames)")


class LSTM:
    """A minimal LSTM cell for tf.compat.v1.nn.dynamic_rnn (Keras 3 has no
    tf1 LSTMCell): four gates, each x @ Wx + h @ Wh + b (no concat/split),
    state (c, h), forget bias 1."""

    def __init__(self, rs, nin, hidden):
        self.hidden = hidden
        self.w = {}
        for gate in "ifoc":
            self.w[gate] = (ex.var(rs, [nin, hidden], "lstm/wx_" + gate, 0.3),
                            ex.var(rs, [hidden, hidden], "lstm/wh_" + gate,
                                   0.3),
                            ex.var(rs, [hidden], "lstm/b_" + gate, zero=True))

    @property
    def state_size(self):
        return (self.hidden, self.hidden)

    @property
    def output_size(self):
        return self.hidden

    def zero_state(self, batch, dtype):
        z = tf.zeros([batch, self.hidden], dtype)
        return (z, z)

    def __call__(self, x, state, scope=None):
        c, h = state

        def gate(k):
            wx, wh, b = self.w[k]
            return tf.matmul(x, wx) + tf.matmul(h, wh) + b
        i = tf.sigmoid(gate("i"))
        f = tf.sigmoid(gate("f") + 1.0)
        o = tf.sigmoid(gate("o"))
        c2 = f * c + i * tf.tanh(gate("c"))
        h2 = o * tf.tanh(c2)
        return h2, (c2, h2)


def lstm():
    hidden, seq, batch, nin = 8, 5, 4, 3
    g = tf.Graph()
    with g.as_default():
        rs = ex.rng(21)
        x = tf1.placeholder(tf.float32, [seq, batch, nin], name="x")
        t = tf1.placeholder(tf.float32, [seq, batch, hidden], name="target")
        cell = LSTM(rs, nin, hidden)
        out, _ = tf1.nn.dynamic_rnn(cell, x, dtype=tf.float32,
                                    time_major=True, scope="rnn")
        out = tf.identity(out, name="outputs")
        loss = tf.reduce_mean(tf.square(out - t), name="loss")
        tf1.train.AdamOptimizer(0.01).minimize(loss, name="train")
        b = ex.rng(22)
        xs = b.uniform(-1, 1, (seq, batch, nin)).astype(np.float32)
        ts = b.uniform(-0.5, 0.5, (seq, batch, hidden)).astype(np.float32)
        with ex.session(g) as s:
            s.run(tf1.global_variables_initializer())
            gd = g.as_graph_def(add_shapes=True)
            frozen = tf1.graph_util.convert_variables_to_constants(
                s, gd, ["outputs"])
            ex.write("lstm_frozen", frozen, {"x": xs}, ["outputs"], s, g,
                     note="the lstm graph's forward part, variables frozen")
            ex.write("lstm", gd, {"x": xs, "target": ts},
                     ["outputs", "loss"], s, g, train=("train", "loss"),
                     note="dynamic_rnn LSTM (hidden 8, seq 5, batch 4), "
                     "Adam; TF-1 while loop, TensorArrays, stacks")


def lstm_batch():
    """Issue 21: the dynamic_rnn of a TF-1 user, batch-major on an unknown
    batch: x [None, seq, nin]; dynamic_rnn transposes with the perm
    ConcatV2([1, 0], Range(2, Rank(x))) and sizes its zero state and
    TensorArrays from Shape(x) at run time."""
    hidden, seq, batch, nin = 8, 5, 4, 3
    g = tf.Graph()
    with g.as_default():
        rs = ex.rng(23)
        x = tf1.placeholder(tf.float32, [None, seq, nin], name="x")
        t = tf1.placeholder(tf.float32, [None, seq, hidden], name="target")
        cell = LSTM(rs, nin, hidden)
        out, _ = tf1.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="rnn")
        out = tf.identity(out, name="outputs")
        loss = tf.reduce_mean(tf.square(out - t), name="loss")
        tf1.train.AdamOptimizer(0.01).minimize(loss, name="train")
        b = ex.rng(24)
        xs = b.uniform(-1, 1, (batch, seq, nin)).astype(np.float32)
        ts = b.uniform(-0.5, 0.5, (batch, seq, hidden)).astype(np.float32)
        with ex.session(g) as s:
            s.run(tf1.global_variables_initializer())
            frozen = tf1.graph_util.convert_variables_to_constants(
                s, g.as_graph_def(), ["outputs"])
            ex.write("lstm_batch_frozen", frozen, {"x": xs}, ["outputs"], s,
                     g, note="the lstm_batch graph's forward part, "
                     "variables frozen")
            ex.write("lstm_batch", g.as_graph_def(), {"x": xs, "target": ts},
                     ["outputs", "loss"], s, g, train=("train", "loss"),
                     note="batch-major dynamic_rnn LSTM on x [None, 5, 3] "
                     "(hidden 8), Adam: run-time Transpose perm and shapes")


def main():
    os.makedirs(ex.OUT, exist_ok=True)
    only = sys.argv[2:]
    if not only or "cf_cond" in only:
        cf_cond()
    if not only or "cf_while_nested" in only:
        cf_while_nested()
    if not only or "lstm" in only:
        lstm()
    if not only or "lstm_batch" in only or "lstm_batch_frozen" in only:
        lstm_batch()


if __name__ == "__main__":
    main()
