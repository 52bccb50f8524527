#!/usr/bin/python3
"""peers.py -- dgrun against TensorFlow 1 (tf.compat.v1 Session), PyTorch and
ONNX Runtime on the same work, interleaved, and the table written into
docs/PERFORMANCE.md (between the "peers table" markers).

    /usr/bin/python3 bench/peers.py [--dgrun build/cli/dgrun] [--reps 5]
                                   [--threads 1,2] [--only CASE,...] [--full]
                                   [--no-write]

Cases (CASE names for --only):
  chain     20,000 scalar Adds (x = x + c): dgrun's executor
            (build/bench/bench_executor), TF-1 with and without Grappler
            (without: meta optimizer off and graph opt level L0, so no
            constant folding either), ORT, torch eager -- us per op; and
            the same chain on Consts as a graph file, run by `dgrun run
            --repeat` (compiler/fold.c folds it to one Const, as Grappler
            does) -- us per run against TF-1's run with Grappler
  digits    the digits MLP (64-128-10, Adam, batch 64) -- steps/s
  mlp       784-1024-1024-10 MLP, batch 256, Adam -- steps/s (dgrun
            also with --no-fusion at 1 thread: the fusion pass's effect)
  matmul    1024^3 and 2048^3 float32 MatMul -- ms per product
  compile   dgrun check of 100k and 1M-node graphs (ours and GraphDef JSON):
            wall s and peak RSS; TF imports the 100k GraphDef (and the 1M
            one with --full: it needs ~8 GB) and runs it once, in the first
            repetition only (minutes per run; no target depends on it)

Every (case, engine, threads) measurement is its own process, run once per
repetition, the engines of a repetition back to back (interleaved, so load
changes hit them alike); the table gives medians.  The load average is
printed before and after.  TF and ORT run in bench/.venv (created with
tensorflow-cpu, onnxruntime, onnx and numpy from PyPI when missing); torch
is Debian's python3-torch for /usr/bin/python3 (installed when missing).
dgrun's steps/s comes from the cumulative rates its training loop prints
(its own clock) at step W and W + N, so start-up, compilation, data loading
and W warm-up steps are excluded (TF and torch time N steps after 5
warm-up steps); its ms per product is
the median MatMul kernel time in the trace of one `dgrun profile --repeat`
process after 2 warm-up runs (TF, torch and ORT: median call time after 2).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, "bench", ".venv")
VPY = os.path.join(VENV, "bin", "python")
SYSPY = "/usr/bin/python3"
DATA = os.path.join(ROOT, "graphs", "data")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- peers table (bench/peers.py) -->", "<!-- end peers table -->"
CHAIN = 20000

# ---------------------------------------------------------------- workers
# Run inside the peer's interpreter: `peers.py --worker ENGINE CASE THREADS
# ARG`; print one JSON number (the measurement).


def _median_time(fn, reps, warm=2):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def _tf(threads):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    tf1 = tf.compat.v1
    tf1.disable_eager_execution()
    cfg = tf1.ConfigProto(intra_op_parallelism_threads=threads,
                          inter_op_parallelism_threads=threads)
    return tf, tf1, cfg


def _mlp_data(layers, rows, seed=7):
    import numpy as np
    rs = np.random.RandomState(seed)
    x = rs.rand(rows, layers[0]).astype(np.float32)
    y = np.eye(layers[-1], dtype=np.float32)[rs.randint(0, layers[-1], rows)]
    return x, y


def _digits():
    import numpy as np
    return (np.load(os.path.join(DATA, "digits_train_x.npy")).astype("float32"),
            np.load(os.path.join(DATA, "digits_train_y.npy")).astype("float32"))


def _train_spec(case):
    if case == "digits":
        x, y = _digits()
        return [64, 128, 10], 64, 0.005, x, y, 1000
    x, y = _mlp_data([784, 1024, 1024, 10], 2048)
    return [784, 1024, 1024, 10], 256, 0.001, x, y, 20


def w_tf_train(case, threads, _arg):
    tf, tf1, cfg = _tf(threads)
    layers, batch, lr, X, Y, steps = _train_spec(case)
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [None, layers[0]])
        y = tf1.placeholder(tf.float32, [None, layers[-1]])
        h = x
        for i in range(1, len(layers)):
            w = tf1.get_variable("w%d" % i, [layers[i - 1], layers[i]],
                                 initializer=tf1.glorot_uniform_initializer())
            b = tf1.get_variable("b%d" % i, [layers[i]], initializer=tf1.zeros_initializer())
            h = tf.nn.bias_add(tf.matmul(h, w), b)
            if i < len(layers) - 1:
                h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=h))
        opt = tf1.train.AdamOptimizer(lr).minimize(loss)
        init = tf1.global_variables_initializer()
    sess = tf1.Session(graph=g, config=cfg)
    sess.run(init)
    nb = X.shape[0] // batch
    pos = [0]

    def step():
        i = pos[0] % nb
        pos[0] += 1
        sess.run(opt, {x: X[i * batch:(i + 1) * batch], y: Y[i * batch:(i + 1) * batch]})

    for _ in range(5):
        step()
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    # steps/s, and CPU ms per step (every thread of the process)
    return [steps / (time.perf_counter() - t0), (time.process_time() - c0) / steps * 1e3]


def w_torch_train(case, threads, _arg):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    layers, batch, lr, X, Y, steps = _train_spec(case)
    X, Y = torch.from_numpy(X), torch.from_numpy(Y)
    mods = []
    for i in range(1, len(layers)):
        mods.append(torch.nn.Linear(layers[i - 1], layers[i]))
        if i < len(layers) - 1:
            mods.append(torch.nn.ReLU())
    model = torch.nn.Sequential(*mods)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    nb = X.shape[0] // batch
    pos = [0]

    def step():
        i = pos[0] % nb
        pos[0] += 1
        xb, yb = X[i * batch:(i + 1) * batch], Y[i * batch:(i + 1) * batch]
        opt.zero_grad()
        loss = torch.sum(-yb * torch.log_softmax(model(xb), 1), 1).mean()
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - t0)


def w_tf_chain(grappler, threads, _arg):
    tf, tf1, cfg = _tf(threads)
    if not grappler:
        cfg.graph_options.rewrite_options.disable_meta_optimizer = True
        cfg.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
        cfg.graph_options.optimizer_options.do_constant_folding = False
    g = tf1.Graph()
    with g.as_default():
        v = tf.constant(1.0)
        c = tf.constant(0.5)
        for _ in range(CHAIN):
            v = tf.add(v, c)
    sess = tf1.Session(graph=g, config=cfg)
    return _median_time(lambda: sess.run(v), 15) / CHAIN * 1e6


def w_ort_chain(_case, threads, _arg):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Add", ["v%d" % i, "c"], ["v%d" % (i + 1)]) for i in range(CHAIN)]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("v%d" % CHAIN, TensorProto.FLOAT, [1])],
        [helper.make_tensor("c", TensorProto.FLOAT, [1], [0.5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = threads
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {"v0": np.ones(1, np.float32)}
    return _median_time(lambda: s.run(None, feed), 15) / CHAIN * 1e6


def w_torch_chain(_case, threads, _arg):
    import torch
    torch.set_num_threads(threads)

    def run():
        with torch.no_grad():
            v = torch.ones(())
            for _ in range(CHAIN):
                v = v + 0.5
        return v

    return _median_time(run, 5) / CHAIN * 1e6


def w_tf_matmul(_case, threads, n):
    tf, tf1, cfg = _tf(threads)
    n = int(n)
    g = tf1.Graph()
    with g.as_default():
        a = tf1.get_variable("a", [n, n], initializer=tf1.glorot_uniform_initializer())
        b = tf1.get_variable("b", [n, n], initializer=tf1.glorot_uniform_initializer())
        op = tf.matmul(a, b).op
        init = tf1.global_variables_initializer()
    sess = tf1.Session(graph=g, config=cfg)
    sess.run(init)
    return _median_time(lambda: sess.run(op), 7 if n <= 1024 else 3) * 1e3


def w_torch_matmul(_case, threads, n):
    import torch
    torch.set_num_threads(threads)
    n = int(n)
    a, b, c = torch.rand(n, n), torch.rand(n, n), torch.empty(n, n)
    return _median_time(lambda: torch.mm(a, b, out=c), 7 if n <= 1024 else 3) * 1e3


def w_ort_matmul(_case, threads, n):
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper
    n = int(n)
    rs = np.random.RandomState(0)
    bval = rs.rand(n, n).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["c"])], "mm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor("b", TensorProto.FLOAT, [n, n], bval.ravel().tolist())])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = threads
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {"a": rs.rand(n, n).astype(np.float32)}
    return _median_time(lambda: s.run(None, feed), 7 if n <= 1024 else 3) * 1e3


def w_tf_compile(_case, threads, path):
    """Seconds to parse, import and run once a GraphDef JSON file."""
    t0 = time.perf_counter()
    tf, tf1, cfg = _tf(threads)
    from google.protobuf import json_format
    t0 = time.perf_counter()
    with open(path) as f:
        gd = json_format.Parse(f.read(), tf1.GraphDef())
    g = tf1.Graph()
    with g.as_default():
        tf.import_graph_def(gd, name="")
    sess = tf1.Session(graph=g, config=cfg)
    last = gd.node[-1].name
    sess.run(g.get_operation_by_name(last).outputs[0])
    return time.perf_counter() - t0


WORKERS = {
    ("tf", "digits"): w_tf_train, ("tf", "mlp"): w_tf_train,
    ("torch", "digits"): w_torch_train, ("torch", "mlp"): w_torch_train,
    ("tf", "chain"): lambda c, t, a: w_tf_chain(True, t, a),
    ("tf-nograppler", "chain"): lambda c, t, a: w_tf_chain(False, t, a),
    ("ort", "chain"): w_ort_chain, ("torch", "chain"): w_torch_chain,
    ("tf", "matmul"): w_tf_matmul, ("torch", "matmul"): w_torch_matmul,
    ("ort", "matmul"): w_ort_matmul, ("tf", "compile"): w_tf_compile,
}

# ---------------------------------------------------------------- dgrun side


def run_timed(cmd, env=None):
    """(wall seconds, peak RSS MB, stderr, CPU seconds) of one process, via
    /usr/bin/time (a Python parent's own wait4 ru_maxrss would count the
    forked interpreter's pages); raises on failure."""
    e = dict(os.environ)
    e.update(env or {})
    with tempfile.NamedTemporaryFile("r") as tf_, tempfile.TemporaryFile() as errf:
        t0 = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", tf_.name, "-f", "%M %U %S"] + cmd,
                           stdout=subprocess.DEVNULL, stderr=errf, env=e)
        wall = time.perf_counter() - t0
        errf.seek(0)
        err = errf.read().decode(errors="replace")
        fields = tf_.read().split()
    if p.returncode:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, err[-300:]))
    rss_kb, user, sys_ = int(fields[-3]), float(fields[-2]), float(fields[-1])
    return wall, rss_kb / 1024.0, err, user + sys_


def dgrun_flags(threads):
    f = ["--opencl-devices", "none"]
    if threads:
        f += ["--inter-op-threads", str(threads), "--intra-op-threads", str(threads)]
    return f


class Dgrun:
    def __init__(self, exe, tmp):
        self.exe, self.tmp = exe, tmp
        build = os.path.dirname(os.path.dirname(exe))
        self.bench_exec = os.path.join(build, "bench", "bench_executor")
        subprocess.run(["ninja", "-C", build, "cli/dgrun", "bench/bench_executor"],
                       check=True, stdout=subprocess.DEVNULL)
        self.mlp = os.path.join(tmp, "mlp")
        subprocess.run([SYSPY, os.path.join(ROOT, "bench", "gen_mlp.py"), self.mlp], check=True)
        self.mm = {}
        for n in (1024, 2048):
            self.mm[(n, 1)] = self.matmul_graph(n, 1)
        self.graphs = {}
        self.chain_json = os.path.join(tmp, "chain_const.json")
        nodes = [{"name": "v0", "op": "Const", "attrs": {"value": 1.0, "dtype": "float32"}},
                 {"name": "c", "op": "Const", "attrs": {"value": 0.5, "dtype": "float32"}}]
        nodes += [{"name": "v%d" % (i + 1), "op": "Add", "inputs": ["v%d" % i, "c"]}
                  for i in range(CHAIN)]
        with open(self.chain_json, "w") as f:
            json.dump({"version": 1, "nodes": nodes, "fetch": ["v%d" % CHAIN]}, f)

    def matmul_graph(self, n, r):
        nodes = [{"name": "a", "op": "Variable", "attrs": {"dtype": "float32", "shape": [n, n],
                                                       "init": {"glorot_uniform": {}}}},
                 {"name": "b", "op": "Variable", "attrs": {"dtype": "float32", "shape": [n, n],
                                                       "init": {"glorot_uniform": {}}}}]
        prev = "a"
        for i in range(r):
            nodes.append({"name": "m%d" % i, "op": "MatMul", "inputs": [prev, "b"]})
            prev = "m%d" % i
        nodes.append({"name": "s", "op": "Sum", "inputs": [prev]})
        path = os.path.join(self.tmp, "mm%d_%d.json" % (n, r))
        with open(path, "w") as f:
            json.dump({"version": 1, "nodes": nodes, "fetch": ["s"]}, f)
        return path

    def chain_fold(self, threads, n=20000):
        """us per run of the Const chain: (wall of `run --repeat 1+n` - wall
        of `run --repeat 1`) / n, so loading and compiling cancel out."""
        base = [self.exe, "run", self.chain_json] + dgrun_flags(threads)
        t1 = run_timed(base + ["--repeat", "1"])[0]
        tn = run_timed(base + ["--repeat", str(1 + n)])[0]
        return max(tn - t1, 0.0) / n * 1e6

    def train_rate(self, case, threads, extra=(), cpu=None):
        """steps/s of the training loop after W warm-up steps, from the
        cumulative rates dgrun prints at step W and at step W + N (its
        loop's own clock: start-up, compilation and data loading excluded;
        TF and torch also time N steps after 5 warm-up steps)."""
        if case == "digits":
            g, w, n = os.path.join(ROOT, "graphs", "digits_mlp.json"), 100, 3000
        else:
            g, w, n = os.path.join(self.mlp, "mlp.json"), 5, 25
        cmd = [self.exe, "train", g, "--json"] + dgrun_flags(threads) + list(extra)
        _, _, err, c_all = run_timed(cmd + ["--steps", str(w + n)])
        rate = {int(a): float(b) for a, b in
                re.findall(r"step ([0-9]+)/[0-9]+ loss \S+ \(([0-9.]+) steps/s", err)}
        t_w, t_all = w / rate[w], (w + n) / rate[w + n]
        if cpu is not None:
            # CPU ms per step: the process's user + sys of w + n steps
            # minus that of a w-step process (start-up cancels out)
            c_w = run_timed(cmd + ["--steps", str(w)])[3]
            cpu.append((c_all - c_w) / n * 1e3)
        return n / (t_all - t_w)

    def chain(self, threads):
        out = subprocess.run([self.bench_exec, "--reps", "9", "--inter-op", str(threads or 1),
                              str(CHAIN)], check=True, capture_output=True, text=True).stdout
        return float(re.search(r"wall: executor ([0-9.]+) us/op", out).group(1))

    def matmul(self, n, threads):
        """Median MatMul kernel time (ms) in one `dgrun profile --repeat`
        process, after 2 warm-up runs (as the peers warm up)."""
        reps = 7 if n <= 1024 else 3
        trace = os.path.join(self.tmp, "mm.trace.json")
        run_timed([self.exe, "profile", self.mm[(n, 1)], "--repeat", str(reps + 2), "-o",
                   trace] + dgrun_flags(threads))
        with open(trace) as f:
            t = json.load(f)
        ev = t["traceEvents"] if isinstance(t, dict) else t
        durs = [e["dur"] for e in ev if e.get("ph") == "X" and
                (e.get("args") or {}).get("op") == "MatMul"]
        return statistics.median(durs[2:]) / 1e3

    def check_tiny(self):
        """`dgrun check` of a 4-node graph: (wall ms, CPU ms, max RSS MB);
        CPU from `perf stat -e task-clock` (time's is in 10 ms steps)."""
        cmd = [self.exe, "check", os.path.join(ROOT, "graphs", "matmul.json")]
        wall, rss, _, cpu = run_timed(cmd)
        r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock"] + cmd,
                           capture_output=True, text=True)
        m = re.search(r"^([0-9.]+),msec,task-clock", r.stderr, re.M)
        return wall * 1e3, float(m.group(1)) if m else cpu * 1e3, rss

    def compile(self, kind, n):
        key = (kind, n)
        if key not in self.graphs:
            path = os.path.join(self.tmp, "%s%d.json" % (kind, n))
            gen = "gen_graph.py" if kind == "ours" else "gen_graphdef.py"
            subprocess.run([SYSPY, os.path.join(ROOT, "bench", gen), str(n), path], check=True)
            self.graphs[key] = path
        extra = ["--assume-gpus", "4"] if kind == "ours" else []
        wall, rss, err, _ = run_timed([self.exe, "check", self.graphs[key]] + extra)
        if err.strip():
            raise RuntimeError("dgrun check %s: %s" % (self.graphs[key], err.strip()))
        return wall, rss


# ---------------------------------------------------------------- set-up


def ensure_peers():
    if not os.path.exists(VPY):
        print("peers: creating %s (tensorflow-cpu, onnxruntime, onnx, numpy)" % VENV, flush=True)
        subprocess.run([SYSPY, "-m", "venv", VENV], check=True)
        subprocess.run([VPY, "-m", "pip", "install", "-q", "tensorflow-cpu", "onnxruntime",
                        "onnx", "numpy"], check=True)
    if subprocess.run([SYSPY, "-c", "import torch, numpy"], capture_output=True).returncode:
        print("peers: installing Debian python3-torch", flush=True)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "python3-torch",
                        "python3-numpy"], check=True,
                       env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def versions():
    v = {}
    for eng, py, mod in (("tf", VPY, "tensorflow"), ("ort", VPY, "onnxruntime"),
                         ("torch", SYSPY, "torch")):
        r = subprocess.run([py, "-c", "import %s as m; print(m.__version__)" % mod],
                           capture_output=True, text=True,
                           env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        v[eng] = r.stdout.strip() or "?"
    return v


def peer(engine, case, threads, arg=""):
    py = SYSPY if engine == "torch" else VPY
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    r = subprocess.run([py, os.path.abspath(__file__), "--worker", engine, case, str(threads),
                        str(arg)], capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError("%s %s: %s" % (engine, case, r.stderr.strip()[-400:]))
    v = json.loads(r.stdout.strip().splitlines()[-1])
    return v if isinstance(v, list) else float(v)


# ---------------------------------------------------------------- main


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def main():
    args = sys.argv[1:]
    if args[:1] == ["--worker"]:
        engine, case, threads, arg = args[1], args[2], int(args[3]), args[4]
        fn = WORKERS[(engine, case)]
        print(json.dumps(fn(case, threads, arg)))
        return 0
    opt = {"--dgrun": os.path.join(ROOT, "build", "cli", "dgrun"), "--reps": "5",
           "--threads": "1,2", "--only": "chain,digits,mlp,matmul,compile"}
    flags = set()
    i = 0
    while i < len(args):
        if args[i] in opt:
            opt[args[i]] = args[i + 1]
            i += 2
        else:
            flags.add(args[i])
            i += 1
    reps = int(opt["--reps"])
    threads = [int(t) for t in opt["--threads"].split(",")]
    only = opt["--only"].split(",")
    ensure_peers()
    tmp = tempfile.mkdtemp(prefix="dgrun-peers-")
    dg = Dgrun(os.path.abspath(opt["--dgrun"]), tmp)
    ver = versions()
    load0 = load()
    print("load average before: %s" % load0, flush=True)

    # CPU ms per step of the training cases (a load-robust companion of
    # steps/s: on a loaded machine, wall time measures the scheduler)
    side = {}

    def dg_train(c, t):
        cpu = []
        v = dg.train_rate(c, t, cpu=cpu)
        side.setdefault((c + "-cpu", "dgrun", t), []).append(cpu[0])
        return v

    def tf_train(c, t):
        v = peer("tf", c, t)
        side.setdefault((c + "-cpu", "tf", t), []).append(v[1])
        return v[0]

    # jobs: key -> callable; one repetition runs them all, back to back
    # (those in `once` only in the first repetition)
    jobs = []
    once = set()
    for t in threads:
        if "chain" in only:
            jobs += [(("chain", "dgrun", t), lambda t=t: dg.chain(t)),
                     (("chainrun", "dgrun", t), lambda t=t: dg.chain_fold(t))]
            for e in ("tf", "tf-nograppler", "ort", "torch"):
                jobs.append((("chain", e, t), lambda e=e, t=t: peer(e, "chain", t)))
        for case in ("digits", "mlp"):
            if case in only:
                jobs.append(((case, "dgrun", t), lambda c=case, t=t: dg_train(c, t)))
                jobs.append(((case, "tf", t), lambda c=case, t=t: tf_train(c, t)))
                jobs.append(((case, "torch", t), lambda c=case, t=t: peer("torch", c, t)))
        if "matmul" in only:
            for n in (1024, 2048):
                jobs.append((("matmul%d" % n, "dgrun", t), lambda n=n, t=t: dg.matmul(n, t)))
                for e in ("tf", "torch", "ort"):
                    jobs.append((("matmul%d" % n, e, t), lambda e=e, n=n, t=t: peer(e, "matmul", t, n)))
    if "mlp" in only:
        jobs.append((("mlp", "dgrun-default", 0), lambda: dg.train_rate("mlp", 0)))
        jobs.append((("mlp", "dgrun-nofusion", 1),
                     lambda: dg.train_rate("mlp", 1, ["--no-fusion"])))
    if "compile" in only:
        jobs.append((("check-tiny", "dgrun", 0), dg.check_tiny))
        for kind in ("ours", "graphdef"):
            for n in (100000, 1000000):
                jobs.append((("compile-%s" % kind, "dgrun", n), lambda k=kind, n=n: dg.compile(k, n)))
        for n in ((100000, 1000000) if "--full" in flags else (100000,)):
            def tfc(n=n):
                dg.compile("graphdef", n)  # makes sure the file exists
                return peer("tf", "compile", 1, dg.graphs[("graphdef", n)])
            jobs.append((("compile-graphdef", "tf", n), tfc))
            once.add(("compile-graphdef", "tf", n))  # minutes per run: context only
    res = {}
    for r in range(reps):
        for key, fn in jobs:
            if r and key in once:
                continue
            try:
                v = fn()
            except Exception as ex:  # a failing peer is reported, not fatal
                print("  %s: failed: %s" % ("/".join(map(str, key)), ex), flush=True)
                continue
            res.setdefault(key, []).append(v)
            print("  rep %d %-28s %s" % (r + 1, "/".join(map(str, key)), v), flush=True)
    res.update(side)
    load1 = load()
    print("load average after: %s" % load1, flush=True)
    table = render(res, threads, reps, ver, load0, load1)
    print(table)
    if "--no-write" not in flags:
        write_doc(table)
        print("written into %s" % DOC)
    return 0


def med(res, key):
    v = res.get(key)
    if not v:
        return None
    if isinstance(v[0], tuple):
        return tuple(statistics.median(x[i] for x in v) for i in range(len(v[0])))
    return statistics.median(v)


def fmt(v, nd=3):
    if v is None:
        return "-"
    if isinstance(v, tuple):
        return "%.2f s, %.0f MB" % v
    if v >= 100:
        return "{:,.0f}".format(v)
    return "%.*f" % (nd, v) if v < 10 else "%.1f" % v


def render(res, threads, reps, ver, load0, load1):
    L = []
    L.append("Measured by `/usr/bin/python3 bench/peers.py --reps %d` on %s; load average "
             "before %s, after %s (2 cores). TensorFlow %s (tf.compat.v1 Session), PyTorch %s, "
             "ONNX Runtime %s. Medians of %d interleaved runs; \"x\" columns are dgrun's "
             "advantage (> 1: dgrun faster)."
             % (reps, time.strftime("%Y-%m-%d %H:%M"), load0, load1, ver["tf"], ver["torch"],
                ver["ort"], reps))
    L.append("")
    L.append("| case | threads | dgrun | TF-1 | x TF | TF-1 no Grappler | torch | x torch | ORT | x ORT |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    cases = [("chain", "20k-Add chain, us/op", False), ("digits", "digits MLP, steps/s", True),
             ("mlp", "784-1024-1024-10 MLP b256, steps/s", True),
             ("digits-cpu", "digits MLP, CPU ms/step", False),
             ("mlp-cpu", "784-1024-1024-10 MLP b256, CPU ms/step", False),
             ("matmul1024", "MatMul 1024, ms", False), ("matmul2048", "MatMul 2048, ms", False)]
    targets = []
    for key, label, higher in cases:
        for t in threads:
            d = med(res, (key, "dgrun", t))
            if d is None:
                continue
            row = [label, str(t), fmt(d)]

            def ratio(p):
                if p is None or not d:
                    return None
                return d / p if higher else p / d

            tf_, tfn, to, ox = (med(res, (key, e, t)) for e in ("tf", "tf-nograppler", "torch", "ort"))
            row += [fmt(tf_), fmt(ratio(tf_), 2), fmt(tfn), fmt(to), fmt(ratio(to), 2), fmt(ox),
                    fmt(ratio(ox), 2)]
            L.append("| " + " | ".join(row) + " |")
            if key == "mlp":
                targets.append(("784-1024-1024-10 MLP >= 1.1x TF-1 (%d thr)" % t, ratio(tf_), 1.1))
            if key == "mlp-cpu":
                targets.append(("(proxy, CPU time per step) 784-1024-1024-10 MLP >= 1.1x "
                                "TF-1 (%d thr)" % t, ratio(tf_), 1.1))
            if key.startswith("matmul"):
                targets.append(("%s >= 1.0x TF (%d thr)" % (label, t), ratio(tf_), 1.0))
            if key == "digits":
                targets.append(("digits MLP >= 3x TF-1 (%d thr)" % t, ratio(tf_), 3.0))
                targets.append(("digits MLP >= 3x torch (%d thr)" % t, ratio(to), 3.0))
            if key == "chain":
                targets.append(("chain per-op <= 0.3x TF-1's (no Grappler, %d thr)" % t,
                                ratio(tfn), 1 / 0.3))
        if key == "chain":
            # the chain on Consts, per run: dgrun folds it (fold.c), TF's
            # Grappler folds it; the per-op figures above times CHAIN
            for t in threads:
                d = med(res, ("chainrun", "dgrun", t))
                if d is None:
                    continue
                per = [med(res, ("chain", e, t)) for e in ("tf", "tf-nograppler", "torch", "ort")]
                tfg, tfn, to, ox = [None if v is None else v * CHAIN for v in per]

                def rr(p):
                    return None if p is None or not d else p / d

                L.append("| " + " | ".join(["20k-Add chain on Consts, us/run", str(t), fmt(d),
                                            fmt(tfg), fmt(rr(tfg), 2), fmt(tfn), fmt(to),
                                            fmt(rr(to), 2), fmt(ox), fmt(rr(ox), 2)]) + " |")
                targets.append(("chain on Consts: dgrun's run <= TF-with-Grappler's (%d thr)" % t,
                                rr(tfg), 1.0))
    dd = med(res, ("mlp", "dgrun-default", 0))
    if dd is not None:
        L.append("| 784-1024-1024-10 MLP b256, steps/s | default | %s | | | | | | | |" % fmt(dd))
    dn = med(res, ("mlp", "dgrun-nofusion", 1))
    if dn is not None:
        L.append("| 784-1024-1024-10 MLP b256, steps/s, `--no-fusion` | 1 | %s | | | | | | | |"
                 % fmt(dn))
    L.append("")
    comp = [(k, n) for k in ("ours", "graphdef") for n in (100000, 1000000)]
    if any(med(res, ("compile-%s" % k, "dgrun", n)) for k, n in comp):
        L.append("| compile (`dgrun check`) | nodes | dgrun | TF-1 import + first run |")
        L.append("|---|---|---|---|")
        for k, n in comp:
            d = med(res, ("compile-%s" % k, "dgrun", n))
            tfv = med(res, ("compile-%s" % k, "tf", n))
            L.append("| %s | %s | %s | %s |" % ("our JSON" if k == "ours" else "GraphDef JSON",
                                               "{:,}".format(n), fmt(d),
                                               "-" if tfv is None else "%.2f s" % tfv))
            if d is not None and n == 1000000 and k == "graphdef":
                targets.append(("1M-node GraphDef JSON check <= 2 s", 2.0 / d[0], 1.0))
                targets.append(("1M-node GraphDef JSON check <= 600 MB", 600 / d[1], 1.0))
        L.append("")
    tiny = med(res, ("check-tiny", "dgrun", 0))
    if tiny is not None:
        L.append("`dgrun check graphs/matmul.json` (4 nodes): %.1f ms wall, %.1f ms CPU, %.1f MB "
                 "max RSS." % tiny)
        L.append("")
        targets.append(("tiny check <= 15 MB", 15.0 / tiny[2], 1.0))
        targets.append(("tiny check <= 5 ms (wall)", 5.0 / tiny[0], 1.0))
        targets.append(("tiny check <= 5 ms (CPU)", 5.0 / tiny[1], 1.0))
    L.append("| target | ratio | met |")
    L.append("|---|---|---|")
    for name, r, need in targets:
        if r is None:
            L.append("| %s | - | not measured |" % name)
        else:
            L.append("| %s | %.2f (need %.2f) | %s |" % (name, r, need, "yes" if r >= need else "NO"))
    return "\n".join(L)


def write_doc(table):
    with open(DOC) as f:
        text = f.read()
    block = BEGIN + "\n" + table + "\n" + END
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n## Against TensorFlow, PyTorch and ONNX Runtime " \
            "(bench/peers.py)\n\n" + block + "\n"
    tmpf = DOC + ".tmp"
    with open(tmpf, "w") as f:
        f.write(text)
    os.replace(tmpf, DOC)


if __name__ == "__main__":
    sys.exit(main())
