#!/usr/bin/env python3
"""replica_setter.py -- a TF-made between-graph-style training graph placed by
tf.compat.v1.train.replica_device_setter (issue 21, item 6): two worker
towers (/job:worker/task:i/device:GPU:0) whose Variables the setter deals
round-robin over two parameter-server tasks (/job:ps/task:0, /job:ps/task:1),
gradients averaged and applied on the ps tasks (colocated with their
Variables).  Writes graphs/cluster/tf_replica_setter.json (TF's GraphDef in
proto3 JSON), which tests/cli/e2e_cluster.py places with
--cluster ps=2,worker=2 and --assume-gpus 1 against a golden.
Run with tools/tf_fixtures/.venv/bin/python (tools/tf_fixtures/make.sh).
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import json_format  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "graphs", "cluster", "tf_replica_setter.json")


def main():
    g = tf.Graph()
    rs = np.random.RandomState(5)
    with g.as_default():
        opt = tf1.train.GradientDescentOptimizer(0.1)
        grads = []
        for i in range(2):
            setter = tf1.train.replica_device_setter(
                ps_tasks=2, ps_device="/job:ps",
                worker_device="/job:worker/task:%d/device:GPU:0" % i)
            with g.device(setter), tf.name_scope("tower_%d" % i):
                with tf1.variable_scope("model", reuse=tf1.AUTO_REUSE):
                    w = tf1.get_variable("w", initializer=rs.standard_normal(
                        (4, 3)).astype(np.float32), use_resource=False)
                    b = tf1.get_variable("b", initializer=np.zeros(
                        3, np.float32), use_resource=False)
                x = tf1.placeholder(tf.float32, [8, 4], name="x")
                y = tf1.placeholder(tf.int64, [8], name="y")
                logits = tf.matmul(x, w) + b
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(
                        labels=y, logits=logits), name="loss")
                acc = tf.reduce_mean(tf.cast(tf.equal(
                    tf.argmax(logits, 1), y), tf.float32), name="accuracy")
                grads.append(opt.compute_gradients(
                    loss, colocate_gradients_with_ops=True))
                del acc
        avg = []
        for gv in zip(*grads):
            with tf1.colocate_with(gv[0][1]):
                avg.append((tf.add_n([gr for gr, _ in gv]) / 2.0, gv[0][1]))
        opt.apply_gradients(avg, name="train")
    with open(OUT, "w") as f:
        f.write(json_format.MessageToJson(g.as_graph_def()))
    print("%d nodes -> %s" % (len(g.as_graph_def().node), OUT))


if __name__ == "__main__":
    main()
