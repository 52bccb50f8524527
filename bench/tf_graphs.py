#!/usr/bin/env python3
"""tf_graphs.py -- dgrun against TensorFlow on the same GraphDef, same
machine, same threads (issue 10 item 7, issue 11's LSTM):

  lenet        LeNet training (conv 5x5x32 SAME, max pool 2x2, conv 5x5x64,
               max pool, fc 3136x256, fc 256x10, ReLU, sparse softmax cross
               entropy, Adam), batch 64: steps/s
  mobilenet1   frozen tf.keras.applications.MobileNetV2(weights=None),
  mobilenet32  224x224x3, inference latency at batch 1 and 32: ms/batch
  mlp          MLP 784-1024-1024-10 (ReLU, sparse softmax cross entropy,
               Adam), batch 256: steps/s
  lstm         tests/data/tf/lstm (dynamic_rnn LSTM, Adam): steps/s

    bench/.venv/bin/python bench/tf_graphs.py build/cli/dgrun
        [--threads T] [--reps R] [--only a,b] [--scale F]
        [--dgrun-env OMP_WAIT_POLICY=passive]

bench/.venv is a symlink to a venv with tensorflow-cpu (e.g. `ln -s
/work/venv-tf bench/.venv`; gitignored).  The graphs are exported by TF
into bench/.tfgraphs/ (gitignored) on first use: tf.compat.v1 graph mode,
Variables starting at seeded Consts, the frozen MobileNetV2 through
convert_variables_to_constants_v2.

Both sides run the GraphDef as written, with the same inputs, the same
fetches (loss + train op, or the model output), intra-op and inter-op
threads = T.  TF: one Session, sess.run per step, timed in-process after a
warm-up.  dgrun: `dgrun run GRAPH --repeat N`, a step's time is
(t(W + N) - t(W)) / N, so process start, loading and compiling are not
counted.  The rounds are interleaved (TF, dgrun, TF, dgrun...), R rounds
(default 5); the medians and dgrun/TF speed ratios are printed, with the
load average before and after.  Beside the wall time, the CPU time per
step (all threads: TF's process, dgrun's child) and its ratio: on a
loaded machine it is the steadier figure.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, ".tfgraphs")

# per benchmark: steps per timed dgrun run / TF round, warm-up steps
STEPS = {"lenet": (30, 3), "mobilenet1": (100, 3), "mobilenet32": (4, 1),
         "mlp": (15, 3), "lstm": (300, 10), "resnet_small": (30, 3)}


def tf_mods():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    return tf, tf.compat.v1


# ---- export -------------------------------------------------------------

def var(tf1, rs, shape, name, scale):
    v = (rs.standard_normal(shape) * scale).astype(np.float32) if scale \
        else np.zeros(shape, np.float32)
    return tf1.Variable(v, name=name, use_resource=False)


def save(name, gd, feeds, fetch, train):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    meta = {"feeds": {}, "fetch": fetch, "train": train}
    for ph, val in feeds.items():
        np.save(os.path.join(d, ph + ".npy"), val)
        meta["feeds"][ph] = os.path.join(d, ph + ".npy")
    with open(os.path.join(d, "graph.pb"), "wb") as f:
        f.write(gd.SerializeToString(deterministic=True))
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def classifier(name, batch, build):
    """A training graph: build(x) -> logits; labels y, Adam, init op."""
    tf, tf1 = tf_mods()
    g = tf.Graph()
    with g.as_default():
        rs = np.random.RandomState(1)
        x, shape_x = build(tf, tf1, rs, None)
        y = tf1.placeholder(tf.int32, [None], name="y")
        logits = build(tf, tf1, rs, x)
        tf.identity(logits, name="logits")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=y, logits=logits), name="loss")
        tf1.train.AdamOptimizer(1e-3).minimize(loss, name="train")
        tf1.global_variables_initializer()
    xs = rs.uniform(0, 1, [batch] + shape_x).astype(np.float32)
    ys = rs.randint(0, 10, batch).astype(np.int32)
    save(name, g.as_graph_def(), {"x": xs, "y": ys}, ["loss"],
         {"op": "train", "init": "init"})


def lenet_build(tf, tf1, rs, x):
    if x is None:
        return tf1.placeholder(tf.float32, [None, 28, 28, 1], name="x"), \
            [28, 28, 1]

    def conv(h, cin, cout, n):
        w = var(tf1, rs, [5, 5, cin, cout], n + "/w", 0.1)
        b = var(tf1, rs, [cout], n + "/b", 0)
        h = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(h, w, 1, "SAME"), b))
        return tf.nn.max_pool2d(h, 2, 2, "VALID")
    h = conv(conv(x, 1, 32, "c1"), 32, 64, "c2")
    h = tf.reshape(h, [-1, 3136])
    h = tf.nn.relu(tf.matmul(h, var(tf1, rs, [3136, 256], "f3/w", 0.02)) +
                   var(tf1, rs, [256], "f3/b", 0))
    return tf.matmul(h, var(tf1, rs, [256, 10], "f4/w", 0.05)) + \
        var(tf1, rs, [10], "f4/b", 0)


def resnet_small_build(tf, tf1, rs, x):
    """bench_tf_cnn.py's resnet_small (CIFAR ResNet-20: 3 stages x 3 basic
    blocks, 16/32/64 channels) in tf.compat.v1 ops on reference Variables,
    batch norm in training mode (tf.compat.v1.nn.fused_batch_norm, the
    batch's statistics; no moving averages)."""
    if x is None:
        return tf1.placeholder(tf.float32, [None, 32, 32, 3], name="x"), \
            [32, 32, 3]
    n = [0]

    def bn(h, c):
        n[0] += 1
        g = tf1.Variable(np.ones(c, np.float32), name="bn%d/g" % n[0])
        b = var(tf1, rs, [c], "bn%d/b" % n[0], 0)
        return tf1.nn.fused_batch_norm(h, g, b, is_training=True)[0]

    def conv(h, cin, cout, k, s):
        n[0] += 1
        w = var(tf1, rs, [k, k, cin, cout], "c%d/w" % n[0],
                np.sqrt(2.0 / (k * k * cin)))
        return tf.nn.conv2d(h, w, s, "SAME")

    h = tf.nn.relu(bn(conv(x, 3, 16, 3, 1), 16))
    cin = 16
    for stage, f in enumerate((16, 32, 64)):
        for b in range(3):
            s = 2 if stage and b == 0 else 1
            sc = h if s == 1 else bn(conv(h, cin, f, 1, s), f)
            y = tf.nn.relu(bn(conv(h, cin, f, 3, s), f))
            y = bn(conv(y, f, f, 3, 1), f)
            h = tf.nn.relu(y + sc)
            cin = f
    h = tf.reduce_mean(h, [1, 2])
    return tf.matmul(h, var(tf1, rs, [64, 10], "fc/w", 0.1)) + \
        var(tf1, rs, [10], "fc/b", 0)


def mlp_build(tf, tf1, rs, x):
    if x is None:
        return tf1.placeholder(tf.float32, [None, 784], name="x"), [784]
    h = x
    for i, (a, b) in enumerate([(784, 1024), (1024, 1024)]):
        h = tf.nn.relu(tf.matmul(h, var(tf1, rs, [a, b], "l%d/w" % i,
                                        1 / np.sqrt(a))) +
                       var(tf1, rs, [b], "l%d/b" % i, 0))
    return tf.matmul(h, var(tf1, rs, [1024, 10], "out/w", 0.03)) + \
        var(tf1, rs, [10], "out/b", 0)


def mobilenet():
    tf, _ = tf_mods()
    from tensorflow.python.framework.convert_to_constants import \
        convert_variables_to_constants_v2
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.applications.MobileNetV2(weights=None)
    fn = tf.function(lambda t: model(t, training=False)).get_concrete_function(
        tf.TensorSpec([None, 224, 224, 3], tf.float32, name="image"))
    frozen = convert_variables_to_constants_v2(fn)
    gd = frozen.graph.as_graph_def()
    del gd.library.function[:]
    rs = np.random.RandomState(2)
    for b in (1, 32):
        xs = rs.uniform(-1, 1, (b, 224, 224, 3)).astype(np.float32)
        save("mobilenet%d" % b, gd, {frozen.inputs[0].op.name: xs},
             [frozen.outputs[0].op.name], None)


def lstm():
    d = os.path.join(ROOT, "tests", "data", "tf", "lstm")
    with open(os.path.join(d, "meta.json")) as f:
        m = json.load(f)
    out = os.path.join(OUT, "lstm")
    os.makedirs(out, exist_ok=True)
    meta = {"feeds": {k: os.path.join(d, v) for k, v in m["feeds"].items()},
            "fetch": [m["train"]["loss"]],
            "train": {"op": m["train"]["op"], "init": "init"},
            "graph": os.path.join(d, "graph.pb")}
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def export(name):
    if os.path.exists(os.path.join(OUT, name, "meta.json")):
        return
    print("exporting %s with TensorFlow..." % name, flush=True)
    if name == "lenet":
        classifier("lenet", 64, lenet_build)
    elif name == "mlp":
        classifier("mlp", 256, mlp_build)
    elif name == "resnet_small":
        classifier("resnet_small", 32, resnet_small_build)
    elif name.startswith("mobilenet"):
        mobilenet()
    else:
        lstm()


def meta_of(name):
    with open(os.path.join(OUT, name, "meta.json")) as f:
        m = json.load(f)
    m.setdefault("graph", os.path.join(OUT, name, "graph.pb"))
    return m


# ---- timing -------------------------------------------------------------

class TFRunner:
    """One Session on the GraphDef; step() times n sess.run calls."""

    def __init__(self, m, threads):
        tf, tf1 = tf_mods()
        gd = tf1.GraphDef()
        with open(m["graph"], "rb") as f:
            gd.ParseFromString(f.read())
        self.g = tf.Graph()
        with self.g.as_default():
            tf.graph_util.import_graph_def(gd, name="")
        cfg = tf1.ConfigProto(intra_op_parallelism_threads=threads,
                              inter_op_parallelism_threads=threads)
        self.s = tf1.Session(graph=self.g, config=cfg)
        self.feed = {self.g.get_tensor_by_name(k + ":0"): np.load(v)
                     for k, v in m["feeds"].items()}
        self.fetch = [self.g.get_tensor_by_name(t + ":0") for t in m["fetch"]]
        if m["train"]:
            self.s.run(self.g.get_operation_by_name(m["train"]["init"]))
            self.fetch.append(self.g.get_operation_by_name(m["train"]["op"]))

    def time(self, n):
        """(wall, cpu) seconds per step (cpu: this process, all threads)"""
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(n):
            self.s.run(self.fetch, self.feed)
        return ((time.perf_counter() - t0) / n,
                (time.process_time() - c0) / n)


def dgrun_cmd(dgrun, m, threads, n):
    fetch = list(m["fetch"])
    if m["train"]:
        fetch.append(m["train"]["op"])
    cmd = [dgrun, "run", m["graph"], "--fetch", ",".join(fetch),
           "--repeat", str(n), "--opencl-devices", "none",
           "--intra-op-threads", str(threads),
           "--inter-op-threads", str(threads)]
    for k, v in m["feeds"].items():
        cmd += ["--feed", "%s=%s" % (k, v)]
    return cmd


DGRUN_ENV = dict(os.environ)


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def dgrun_time(dgrun, m, threads, n, warm):
    """(wall, cpu) seconds per step: (t(warm + n) - t(warm)) / n"""
    def run(k):
        t0, c0 = time.perf_counter(), child_cpu()
        p = subprocess.run(dgrun_cmd(dgrun, m, threads, k),
                           capture_output=True, env=DGRUN_ENV)
        if p.returncode:
            sys.exit("dgrun failed (%d): %s" % (p.returncode,
                                                p.stderr.decode()[-2000:]))
        return time.perf_counter() - t0, child_cpu() - c0
    (w1, c1), (w0, c0) = run(warm + n), run(warm)
    return (w1 - w0) / n, (c1 - c0) / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dgrun")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="lenet,mobilenet1,mobilenet32,mlp,lstm")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply the step counts")
    ap.add_argument("--dgrun-env", action="append", default=[],
                    metavar="K=V", help="set K=V in dgrun's environment "
                    "(e.g. OMP_WAIT_POLICY=passive)")
    a = ap.parse_args()
    for kv in a.dgrun_env:
        k, _, v = kv.partition("=")
        DGRUN_ENV[k] = v
    names = a.only.split(",")
    for n in names:
        if n not in STEPS:
            sys.exit("unknown benchmark %s (one of %s)" % (n, ",".join(STEPS)))
        export(n)
    dgrun = os.path.abspath(a.dgrun)
    print("threads %d, %d interleaved rounds%s; load average before: %.2f "
          "%.2f %.2f" % ((a.threads, a.reps, "".join(
              ", dgrun with " + kv for kv in a.dgrun_env)) +
              os.getloadavg()), flush=True)
    rows = []
    for n in names:
        m = meta_of(n)
        steps, warm = STEPS[n]
        steps = max(1, int(steps * a.scale))
        tfr = TFRunner(m, a.threads)
        tfr.time(warm)
        tt, dt, tc, dc = [], [], [], []
        for _ in range(a.reps):
            w, c = tfr.time(steps)
            tt.append(w)
            tc.append(c)
            w, c = dgrun_time(dgrun, m, a.threads, steps, warm)
            dt.append(w)
            dc.append(c)
        tfm, dgm = statistics.median(tt), statistics.median(dt)
        train = m["train"] is not None
        if train:
            row = "%-12s TF %8.1f steps/s  dgrun %8.1f steps/s  dgrun/TF %.2fx" \
                % (n, 1 / tfm, 1 / dgm, tfm / dgm)
        else:
            row = "%-12s TF %8.2f ms      dgrun %8.2f ms      dgrun/TF %.2fx" \
                % (n, tfm * 1e3, dgm * 1e3, tfm / dgm)
        row += "  cpu/step TF %.1f dgrun %.1f ms (%.2fx)" % (
            statistics.median(tc) * 1e3, statistics.median(dc) * 1e3,
            statistics.median(tc) / statistics.median(dc))
        row += "\n%12s walls: TF %s; dgrun %s ms" % ("", 
            " ".join("%.2f" % (t * 1e3) for t in tt),
            " ".join("%.2f" % (t * 1e3) for t in dt))
        print(row, flush=True)
        rows.append(row)
        tfr.s.close()
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
