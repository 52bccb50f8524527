#!/usr/bin/env python3
"""bench_tf_cnn.py -- dgrun against TensorFlow on the same frozen Keras CNN
GraphDefs (issue 23): inference latency per run at batch 1 and 32, 1 and 2
threads, and LeNet training steps/s; dgrun/TF for each row; optionally the
table written into docs/PERFORMANCE.md (between the "cnn table" markers).

    PY=/work/main/tools/tf_fixtures/.venv/bin/python   # any tensorflow-cpu venv
    $PY bench/bench_tf_cnn.py build/cli/dgrun [--reps 5] [--threads 1,2]
        [--batches 1,32] [--only resnet_small,mobilenetv2,...] [--runs N]
        [--loaded] [--write] [--dgrun-env K=V] [--base DGRUN_BEFORE]

Models (exported by TF into bench/.tfgraphs/cnn_* on first use, seeded;
frozen with convert_variables_to_constants_v2, so filters and batch-norm
statistics are Consts; inference mode: FusedBatchNormV3 is_training=False):
  resnet_small  CIFAR-style ResNet-20 (3 stages x 3 basic blocks, 16/32/64
                channels, batch norm, ReLU, residual Add), 32x32x3
  resnet50q     ResNet-50's bottleneck stages (3, 4, 6, 3 blocks) at a
                quarter of its width (16..128 -> 64..512 channels), 64x64x3
  mobilenetv2   tf.keras.applications.MobileNetV2(alpha=0.35), 96x96x3
  efficientnet  tf.keras.applications.EfficientNetB0(weights=None),
                96x96x3 (its swish IdentityN nodes, whose outputs 1.. only
                the gradient reads, exported as Identity)
  lenet         LeNet-5-like (conv 5x5x32, pool, conv 5x5x64, pool, fc 256,
                fc 10), 28x28x1, inference
  transformer   a Keras encoder block (MultiHeadAttention 4 heads x 32,
                residual + LayerNormalization, gelu feed-forward 512),
                sequence 64 x 128 features
  lenet_train   the same LeNet trained with Adam at batch 64 (Variables):
                steps/s (bench/tf_graphs.py's graph)
  resnet_small_train  resnet_small in tf.compat.v1 ops (batch norm in
                training mode) trained with Adam at batch 32: steps/s
                (bench/tf_graphs.py's graph)

Timing.  Every (model, batch, threads) row runs R interleaved rounds (TF,
dgrun, TF, dgrun, ...); in a round each engine makes N timed runs after W
warm-up runs, so process start-up, loading, compilation and first-run
costs (oneDNN's JIT) are excluded.
  TF: one worker process per row holding one tf.compat.v1 Session (Grappler
      on, intra = inter = threads), asked for a round at a time; each
      sess.run timed with perf_counter; CPU = process_time over the N.
  dgrun: `dgrun profile GRAPH --repeat W+N` (same threads): a run's time is
      the span of its ops in the trace (first start to last end); CPU per
      run = (user+sys of `dgrun run --repeat W+N` - that of `dgrun run
      --repeat W`) / N, untraced processes (tracing costs CPU).
The row's median and 90th percentile are over all R x N per-run times of
each engine; the spread is the lowest and highest of the R per-round
medians.  dgrun/TF > 1 means dgrun is faster.  The CPU columns (ms of CPU
per run, all threads) are the steadier figure on a loaded machine.

--base runs an earlier dgrun binary in the same rounds (TF, before,
after) and prints a before/after table (per-run medians and CPU).

--loaded starts a competing process (a busy loop, nice 0) pinned to core 0
(taskset) for the whole benchmark, as a shared machine would have.
The load average is printed before and after each row.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, ".tfgraphs")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- cnn table (bench/bench_tf_cnn.py) -->", "<!-- end cnn table -->"

MODELS = ["resnet_small", "resnet50q", "mobilenetv2", "efficientnet", "lenet",
          "transformer", "lenet_train", "resnet_small_train", "mlp_train"]
# training rows: bench/tf_graphs.py's graph and its batch
TRAIN = {"lenet_train": ("lenet", 64), "resnet_small_train": ("resnet_small", 32),
         "mlp_train": ("mlp", 256)}
# (warm-up, timed runs) per (model, batch): more runs for short ones
RUNS = {1: (5, 30), 32: (2, 6)}
TRAIN_RUNS = (3, 20)


def tf_mods():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    return tf, tf.compat.v1


# ---- export -------------------------------------------------------------

def freeze(model, shape):
    tf, _ = tf_mods()
    from tensorflow.python.framework.convert_to_constants import \
        convert_variables_to_constants_v2
    fn = tf.function(lambda t: model(t, training=False)).get_concrete_function(
        tf.TensorSpec([None] + list(shape), tf.float32, name="image"))
    frozen = convert_variables_to_constants_v2(fn)
    gd = frozen.graph.as_graph_def()
    del gd.library.function[:]
    return gd, frozen.inputs[0].op.name, frozen.outputs[0].op.name


def randomise_bn(model, rs):
    """Non-trivial batch-norm statistics (fresh ones are 0 / 1)."""
    tf, _ = tf_mods()
    for layer in model.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            ws = layer.get_weights()
            n = ws[0].shape[0]
            layer.set_weights([rs.uniform(0.5, 1.5, n).astype(np.float32),
                               rs.normal(0, 0.1, n).astype(np.float32),
                               rs.normal(0, 0.1, n).astype(np.float32),
                               rs.uniform(0.5, 2, n).astype(np.float32)][:len(ws)])


def identity_n_to_identity(gd):
    """Keras's swish (EfficientNet) is y = IdentityN(x * sigmoid(x), x,
    beta) for its custom gradient; inference reads only output 0, so each
    such IdentityN becomes an Identity of its input 0 (dgrun has no
    IdentityN)."""
    used = set()
    for n in gd.node:
        for i in n.input:
            nm, _, idx = i.lstrip("^").partition(":")
            if idx not in ("", "0"):
                used.add(nm)
    for n in gd.node:
        if n.op == "IdentityN" and n.name not in used:
            t = n.attr["T"].list.type[0]
            first = n.input[0]
            del n.input[:]
            n.input.append(first)
            n.op = "Identity"
            n.attr["T"].Clear()
            n.attr["T"].type = t


def resnet_small(k):
    inp = k.Input((32, 32, 3))

    def cbr(h, f, s=1, relu=True):
        h = k.layers.Conv2D(f, 3, strides=s, padding="same", use_bias=False)(h)
        h = k.layers.BatchNormalization()(h)
        return k.layers.ReLU()(h) if relu else h
    h = cbr(inp, 16)
    for stage, f in enumerate((16, 32, 64)):
        for b in range(3):
            s = 2 if stage and b == 0 else 1
            sc = h
            if s != 1:
                sc = k.layers.Conv2D(f, 1, strides=s, use_bias=False)(h)
                sc = k.layers.BatchNormalization()(sc)
            y = cbr(cbr(h, f, s), f, relu=False)
            h = k.layers.ReLU()(k.layers.Add()([y, sc]))
    h = k.layers.GlobalAveragePooling2D()(h)
    return k.Model(inp, k.layers.Dense(10, activation="softmax")(h)), (32, 32, 3)


def resnet50q(k):
    inp = k.Input((64, 64, 3))
    h = k.layers.Conv2D(16, 7, strides=2, padding="same")(inp)
    h = k.layers.ReLU()(k.layers.BatchNormalization()(h))
    h = k.layers.MaxPooling2D(3, 2, padding="same")(h)
    for stage, (f, n) in enumerate(((16, 3), (32, 4), (64, 6), (128, 3))):
        for b in range(n):
            s = 2 if stage and b == 0 else 1
            sc = h
            if b == 0:
                sc = k.layers.Conv2D(4 * f, 1, strides=s)(h)
                sc = k.layers.BatchNormalization()(sc)
            y = k.layers.Conv2D(f, 1, strides=s)(h)
            y = k.layers.ReLU()(k.layers.BatchNormalization()(y))
            y = k.layers.Conv2D(f, 3, padding="same")(y)
            y = k.layers.ReLU()(k.layers.BatchNormalization()(y))
            y = k.layers.Conv2D(4 * f, 1)(y)
            y = k.layers.BatchNormalization()(y)
            h = k.layers.ReLU()(k.layers.Add()([y, sc]))
    h = k.layers.GlobalAveragePooling2D()(h)
    return k.Model(inp, k.layers.Dense(10, activation="softmax")(h)), (64, 64, 3)


def lenet(k):
    inp = k.Input((28, 28, 1))
    h = k.layers.Conv2D(32, 5, padding="same", activation="relu")(inp)
    h = k.layers.MaxPooling2D(2)(h)
    h = k.layers.Conv2D(64, 5, padding="same", activation="relu")(h)
    h = k.layers.MaxPooling2D(2)(h)
    h = k.layers.Dense(256, activation="relu")(k.layers.Flatten()(h))
    return k.Model(inp, k.layers.Dense(10)(h)), (28, 28, 1)


def transformer(k):
    """An encoder block at a size where the math shows (Einsum attention,
    softmax, LayerNormalization, erf gelu)."""
    inp = k.Input((64, 128))
    a = k.layers.MultiHeadAttention(num_heads=4, key_dim=32)(inp, inp)
    h = k.layers.LayerNormalization()(inp + a)
    f = k.layers.Dense(512, activation="gelu")(h)
    f = k.layers.Dense(128)(f)
    return k.Model(inp, k.layers.LayerNormalization()(h + f)), (64, 128)


def export(name):
    d = os.path.join(OUT, "cnn_" + name)
    if os.path.exists(os.path.join(d, "meta.json")):
        return
    print("exporting %s with TensorFlow..." % name, flush=True)
    os.makedirs(d, exist_ok=True)
    if name in TRAIN:
        sys.path.insert(0, HERE)
        import tf_graphs
        tf_graphs.OUT = OUT
        tf_graphs.export(TRAIN[name][0])
        src = tf_graphs.meta_of(TRAIN[name][0])
        meta = {"graph": src["graph"], "feeds": {"1": src["feeds"]},
                "fetch": src["fetch"], "train": src["train"]}
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        return
    tf, _ = tf_mods()
    k = tf.keras
    tf.keras.utils.set_random_seed(1)
    if name == "mobilenetv2":
        model, shape = k.applications.MobileNetV2(
            input_shape=(96, 96, 3), alpha=0.35, weights=None), (96, 96, 3)
    elif name == "efficientnet":
        model, shape = k.applications.EfficientNetB0(
            input_shape=(96, 96, 3), weights=None), (96, 96, 3)
    else:
        model, shape = globals()[name](k)
    randomise_bn(model, np.random.RandomState(3))
    gd, inp, out = freeze(model, shape)
    identity_n_to_identity(gd)
    with open(os.path.join(d, "graph.pb"), "wb") as f:
        f.write(gd.SerializeToString(deterministic=True))
    rs = np.random.RandomState(2)
    feeds = {}
    for b in (1, 32):
        p = os.path.join(d, "x%d.npy" % b)
        np.save(p, rs.uniform(-1, 1, (b,) + tuple(shape)).astype(np.float32))
        feeds[str(b)] = {inp: p}
    meta = {"graph": os.path.join(d, "graph.pb"), "feeds": feeds,
            "fetch": [out], "train": None}
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def meta_of(name):
    with open(os.path.join(OUT, "cnn_" + name, "meta.json")) as f:
        return json.load(f)


# ---- TF side (a worker process per round) -------------------------------

def tf_worker(name, batch, threads, warm, n):
    """One Session for a row; for each line on stdin, warm + n runs and one
    line of JSON {"runs": [s...], "cpu": s per run} on stdout."""
    tf, tf1 = tf_mods()
    m = meta_of(name)
    gd = tf1.GraphDef()
    with open(m["graph"], "rb") as f:
        gd.ParseFromString(f.read())
    g = tf.Graph()
    with g.as_default():
        tf.graph_util.import_graph_def(gd, name="")
    cfg = tf1.ConfigProto(intra_op_parallelism_threads=threads,
                          inter_op_parallelism_threads=threads)
    s = tf1.Session(graph=g, config=cfg)
    feed = {g.get_tensor_by_name(kk + ":0"): np.load(v)
            for kk, v in m["feeds"][str(batch)].items()}
    fetch = [g.get_tensor_by_name(t + ":0") for t in m["fetch"]]
    if m["train"]:
        s.run(g.get_operation_by_name(m["train"]["init"]))
        fetch.append(g.get_operation_by_name(m["train"]["op"]))
    print("ready", flush=True)
    for _ in sys.stdin:
        for _ in range(warm):
            s.run(fetch, feed)
        runs = []
        c0 = time.process_time()
        for _ in range(n):
            t0 = time.perf_counter()
            s.run(fetch, feed)
            runs.append(time.perf_counter() - t0)
        cpu = (time.process_time() - c0) / n
        print(json.dumps({"runs": runs, "cpu": cpu}), flush=True)


class TFWorker:
    """The TF side of a row: one worker process (TF imported and the
    Session made once), a round per request, so TF's start-up is paid once
    per row and not in the rounds."""

    def __init__(self, py, name, batch, threads, warm, n):
        self.p = subprocess.Popen(
            [py, os.path.abspath(__file__), "--tf-worker", name, str(batch),
             str(threads), str(warm), str(n)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True)
        if self.p.stdout.readline().strip() != "ready":
            sys.exit("TF worker failed to start")

    def round(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            sys.exit("TF worker died")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


# ---- dgrun side ---------------------------------------------------------

DGRUN_ENV = dict(os.environ)


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def dgrun_args(m, batch, threads):
    fetch = list(m["fetch"])
    if m["train"]:
        fetch.append(m["train"]["op"])
    a = [m["graph"], "--fetch", ",".join(fetch), "--opencl-devices", "none",
         "--intra-op-threads", str(threads), "--inter-op-threads", str(threads)]
    for kk, v in m["feeds"][str(batch)].items():
        a += ["--feed", "%s=%s" % (kk, v)]
    return a


def run_spans(trace, warm):
    """Per-run seconds from a dgrun trace: each step's first op start to
    its last op end; the first `warm` steps dropped."""
    with open(trace) as f:
        t = json.load(f)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    lo, hi = {}, {}
    for e in ev:
        if e.get("ph") != "X" or "step" not in (e.get("args") or {}):
            continue
        s = e["args"]["step"]
        a, b = e["ts"], e["ts"] + e.get("dur", 0)
        lo[s] = min(lo.get(s, a), a)
        hi[s] = max(hi.get(s, b), b)
    steps = sorted(lo)[warm:]
    return [(hi[s] - lo[s]) * 1e-6 for s in steps]


def dgrun_round(dgrun, name, batch, threads, warm, n, tmp):
    m = meta_of(name)
    a = dgrun_args(m, batch, threads)
    trace = os.path.join(tmp, "t.json")

    def proc(cmd):
        c0 = child_cpu()
        p = subprocess.run(cmd, capture_output=True, env=DGRUN_ENV)
        if p.returncode:
            sys.exit("dgrun failed (%d): %s\n%s" % (
                p.returncode, " ".join(cmd), p.stderr.decode()[-2000:]))
        return child_cpu() - c0
    proc([dgrun, "profile"] + a + ["--repeat", str(warm + n), "-o", trace])
    # CPU from untraced processes: tracing and writing the trace cost
    # ~1 ms of CPU a run on a 300-op graph
    c1 = proc([dgrun, "run"] + a + ["--repeat", str(warm + n)])
    c0 = proc([dgrun, "run"] + a + ["--repeat", str(warm)])
    return {"runs": run_spans(trace, warm), "cpu": max(c1 - c0, 0.0) / n}


# ---- driver -------------------------------------------------------------

def p90(xs):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]


def summary(rounds):
    allr = [t for r in rounds for t in r["runs"]]
    meds = [statistics.median(r["runs"]) for r in rounds]
    return {"med": statistics.median(allr), "p90": p90(allr),
            "lo": min(meds), "hi": max(meds),
            "cpu": statistics.median([r["cpu"] for r in rounds])}


def start_load():
    return subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c",
                             "while True: pass"])


def fmt_row(name, batch, threads, t, d, train):
    if train:
        u = "steps/s"
        tv = "%.1f (%.1f-%.1f) p90 %.1f" % (1 / t["med"], 1 / t["hi"], 1 / t["lo"],
                                             1 / t["p90"])
        dv = "%.1f (%.1f-%.1f) p90 %.1f" % (1 / d["med"], 1 / d["hi"], 1 / d["lo"],
                                             1 / d["p90"])
    else:
        u = "ms"
        tv = "%.2f (%.2f-%.2f) p90 %.2f" % (t["med"] * 1e3, t["lo"] * 1e3,
                                             t["hi"] * 1e3, t["p90"] * 1e3)
        dv = "%.2f (%.2f-%.2f) p90 %.2f" % (d["med"] * 1e3, d["lo"] * 1e3,
                                             d["hi"] * 1e3, d["p90"] * 1e3)
    return "| %s | %d | %d | %s | %s | %s | **%.2f** | %.2f | %.1f / %.1f | **%.2f** |" % (
        name, batch, threads, u, tv, dv, t["med"] / d["med"], t["p90"] / d["p90"],
        t["cpu"] * 1e3, d["cpu"] * 1e3, t["cpu"] / d["cpu"])


def fmt_base(name, batch, threads, b, d, train):
    """A before (--base) / after row: per-run medians, spreads, CPU."""
    k, u = (1, "steps/s") if train else (1e3, "ms")

    def v(x):
        if train:
            return "%.1f (%.1f-%.1f)" % (1 / x["med"], 1 / x["hi"], 1 / x["lo"])
        return "%.2f (%.2f-%.2f)" % (x["med"] * k, x["lo"] * k, x["hi"] * k)
    return "| %s | %d | %d | %s | %s | %s | **%.2f** | %.1f / %.1f | **%.2f** |" % (
        name, batch, threads, u, v(b), v(d), b["med"] / d["med"],
        b["cpu"] * 1e3, d["cpu"] * 1e3, b["cpu"] / d["cpu"])


BASE_HEAD = ("| model | batch | threads | unit | before median (round spread) | "
             "after median (round spread) | speed-up | CPU ms/run before / after | "
             "CPU speed-up |\n|---|---|---|---|---|---|---|---|---|")


HEAD = ("| model | batch | threads | unit | TF median (round spread) p90 | "
        "dgrun median (round spread) p90 | dgrun/TF median | dgrun/TF p90 | "
        "CPU ms/run TF / dgrun | dgrun/TF CPU |\n"
        "|---|---|---|---|---|---|---|---|---|---|")


def write_doc(text):
    with open(DOC) as f:
        doc = f.read()
    block = BEGIN + "\n" + text + "\n" + END
    if BEGIN in doc:
        a = doc.index(BEGIN)
        b = doc.index(END) + len(END)
        doc = doc[:a] + block + doc[b:]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    with open(DOC, "w") as f:
        f.write(doc)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--tf-worker":
        a = sys.argv[2:]
        tf_worker(a[0], int(a[1]), int(a[2]), int(a[3]), int(a[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("dgrun")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--only", default=",".join(MODELS))
    ap.add_argument("--runs", type=int, default=0,
                    help="timed runs per round (default: 30 at batch 1, 6 at 32, "
                    "20 training steps)")
    ap.add_argument("--loaded", action="store_true",
                    help="a competing busy process on core 0 throughout")
    ap.add_argument("--write", action="store_true",
                    help="write the table into docs/PERFORMANCE.md")
    ap.add_argument("--dgrun-env", action="append", default=[], metavar="K=V")
    ap.add_argument("--base", metavar="DGRUN",
                    help="an earlier dgrun binary run in the same rounds: a "
                    "before/after table follows")
    a = ap.parse_args()
    for kv in a.dgrun_env:
        kk, _, v = kv.partition("=")
        DGRUN_ENV[kk] = v
    names = a.only.split(",")
    for n in names:
        if n not in MODELS:
            sys.exit("unknown model %s (one of %s)" % (n, ",".join(MODELS)))
        export(n)
    dgrun = os.path.abspath(a.dgrun)
    py = sys.executable
    threads = [int(t) for t in a.threads.split(",")]
    batches = [int(b) for b in a.batches.split(",")]
    load = start_load() if a.loaded else None
    rows, base_rows = [], []
    hdr = "%d interleaved rounds%s%s; load average at start %.2f %.2f %.2f" % (
        (a.reps, ", competing busy process on core 0" if load else "",
         "".join(", dgrun with " + kv for kv in a.dgrun_env)) + os.getloadavg())
    print(hdr + "\n" + HEAD, flush=True)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                train = name in TRAIN
                for batch in ([TRAIN[name][1]] if train else batches):
                    for th in threads:
                        warm, n = TRAIN_RUNS if train else RUNS.get(batch, (2, 6))
                        n = a.runs or n
                        fb = 1 if train else batch
                        tr, dr, br = [], [], []
                        tfw = TFWorker(py, name, fb, th, warm, n)
                        for _ in range(a.reps):
                            tr.append(tfw.round())
                            if a.base:
                                br.append(dgrun_round(os.path.abspath(a.base), name,
                                                      fb, th, warm, n, tmp))
                            dr.append(dgrun_round(dgrun, name, fb, th, warm, n, tmp))
                        tfw.close()
                        row = fmt_row(name, batch, th, summary(tr), summary(dr), train)
                        print(row + "  <!-- load %.2f -->" % os.getloadavg()[0],
                              flush=True)
                        rows.append(row)
                        if a.base:
                            base_rows.append(fmt_base(name, batch, th, summary(br),
                                                      summary(dr), train))
    finally:
        if load:
            load.kill()
            load.wait()
    ld = os.getloadavg()
    print("load average at end %.2f %.2f %.2f" % ld)
    if base_rows:
        print("\nbefore = %s, after = %s\n%s\n%s" % (
            a.base, a.dgrun, BASE_HEAD, "\n".join(base_rows)), flush=True)
    if a.write:
        cmd = " ".join(["bench/bench_tf_cnn.py", os.path.relpath(a.dgrun, ROOT)] +
                       sys.argv[2:])
        text = ("`%s` (%s; load average at end %.2f %.2f %.2f)\n\n%s\n%s" % (
            cmd, hdr, ld[0], ld[1], ld[2], HEAD, "\n".join(rows)))
        write_doc(text)


if __name__ == "__main__":
    main()
