#!/usr/bin/env python3
"""Differential test of whole random graphs: CPU only vs OpenCL placements.

Usage: e2e_diff.py DGRUN [--graphs N] [--seed S] [--configs a,b,...] [--keep]
       e2e_diff.py DGRUN --regress      (the fixed regression seeds only)

A seeded generator builds random float32 graphs (broadcasting elementwise ops,
small MatMuls, reductions with axis/keepdims, Softmax, cross entropies,
Reshape/Transpose, Cast round trips, ArgMax/Equal, AddN), with random `device`
fields over /cpu:0, /gpu:0, /gpu:1 and none, random colocate_with, random
acyclic control inputs, Variables updated by AssignAdd/Assign and read through
Identity(v, ^update) (run with --repeat), a `gradients` section over some
Variables, and sometimes a `train` section.  Each graph runs with
`dgrun run --json` (or `train --json`) on CPU only (--opencl-devices none
--allow-soft-placement) and on OpenCL configurations (one PoCL device, two
virtual GPUs, POCL_DEVICES="pthread pthread", 1/2/4 queues per GPU); every
fetch must agree within a tolerance normalised by the tensor's magnitude and
the graph's depth/reduction length.  Integer and bool results must agree
exactly unless a discrete op upstream (ArgMax, Cast to int/bool) sees a near
tie in its (also fetched) input.  On failure the seed and configuration are
printed and the graph stays in the kept temp dir.  Exit 0 = pass, 1 = failure.
Needs numpy (/usr/bin/python3).
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# configuration name -> (environment, extra arguments)
CONFIGS = {
    "cpu": ({}, ["--opencl-devices", "none"]),
    "gpu1": ({"POCL_DEVICES": "pthread", "DGRUN_CL_QUEUES": "1"},
             ["--opencl-devices", "all"]),
    "virt2q2": ({"POCL_DEVICES": "pthread", "DGRUN_CL_QUEUES": "2"},
                ["--opencl-devices", "all", "--virtual-gpus", "2"]),
    "pocl2q4": ({"POCL_DEVICES": "pthread pthread", "DGRUN_CL_QUEUES": "4"},
                ["--opencl-devices", "all"]),
    "pocl2q1": ({"POCL_DEVICES": "pthread pthread", "DGRUN_CL_QUEUES": "1"},
                ["--opencl-devices", "all", "--inter-op-threads", "1"]),
}
DEFAULT_CONFIGS = ["gpu1", "virt2q2", "pocl2q4", "pocl2q1"]
# seeds that once exposed bugs (see the report in the commit); always run
REGRESSION_SEEDS = []

DEVICES = ["/cpu:0", "/gpu:0", "/gpu:1", None, None]
UNARY = ["Identity", "Neg", "Abs", "Sin", "Cos", "Exp", "Log", "Sqrt",
         "Square", "Tanh", "Sigmoid", "Relu"]
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Maximum", "Minimum"]


class T:
    """A tensor in the generated graph: reference, shape, dtype, metadata."""

    def __init__(self, ref, shape, dtype="float32", depth=0, taint=(),
                 state=False, red=1, vdep=False):
        self.ref, self.shape, self.dtype = ref, tuple(shape), dtype
        self.vdep = vdep  # depends on a Variable
        self.depth, self.taint, self.state = depth, frozenset(taint), state
        self.red = red  # product of reduction lengths upstream


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.seed = seed
        self.nodes = []
        self.pool = []          # float32 tensors usable as inputs
        self.names = []         # every node name so far
        self.fetch = []
        self.discrete = {}      # discrete node -> (kind, input ref, attrs)
        self.vars = []          # (var name, updated?) float32 Variables
        self.n = 0
        self.repeat = 1
        self.feeds = {}         # Placeholder -> numpy value
        self.train = False
        self.big = self.r.random() < 0.15  # sizes that split CPU work

    # -- helpers -------------------------------------------------------
    def name(self, op):
        self.n += 1
        return "%s_%d" % (op.lower(), self.n)

    def add(self, op, inputs=(), attrs=None, name=None, device=True):
        r = self.r
        nm = name or self.name(op)
        node = {"name": nm, "op": op}
        ins = list(inputs)
        if self.names and r.random() < 0.15:
            for _ in range(r.randint(1, 2)):
                c = r.choice(self.names)
                if "^" + c not in ins:
                    ins.append("^" + c)
        if ins:
            node["inputs"] = ins
        if attrs:
            node["attrs"] = attrs
        if device:
            d = r.choice(DEVICES)
            if d:
                node["device"] = d
        if self.names and r.random() < 0.1:
            node["colocate_with"] = [r.choice(self.names)]
        self.nodes.append(node)
        self.names.append(nm)
        return nm

    def rand_shape(self, rank=None):
        r = self.r
        if rank is None:
            rank = r.choice([0, 1, 1, 2, 2, 2, 3])
        if self.big:
            while True:
                s = tuple(r.choice([1, 2, 3, 7, 33, 130, 257, 1100])
                          for _ in range(rank))
                if int(np.prod(s)) <= 80000:
                    return s
        return tuple(r.randint(1, 4) for _ in range(rank))

    def bshape(self, s):
        """A shape that broadcasts with s to s."""
        r = self.r
        s = list(s)
        if s and r.random() < 0.4:
            s = s[r.randint(0, len(s)):]
        return tuple(1 if (d > 1 and r.random() < 0.3) else d for d in s)

    def const(self, shape, lo=-2.0, hi=2.0):
        r = self.r
        u = r.random()
        if self.big and int(np.prod(shape)) > 16 and u >= 0.24:
            u = r.random() * 0.14
        if shape and lo == -2.0 and u < 0.08:
            return T(self.add("RandomNormal", attrs={
                "shape": list(shape), "dtype": "float32", "mean": 0.0,
                "stddev": 1.0}), shape)
        if shape and lo == -2.0 and u < 0.14:
            return T(self.add("RandomUniform", attrs={
                "shape": list(shape), "dtype": "float32", "min": -1.0,
                "max": 1.0}), shape)
        if lo == -2.0 and u < 0.24 and not self.train:
            pshape = [(-1 if (i == 0 and r.random() < 0.5) else d)
                      for i, d in enumerate(shape)]
            nm = self.add("Placeholder", attrs={"dtype": "float32",
                                                "shape": pshape})
            val = np.array([round(r.uniform(lo, hi), 4) for _ in
                            range(int(np.prod(shape)) if shape else 1)],
                           dtype=np.float32).reshape(shape)
            self.feeds[nm] = val
            return T(nm, shape)
        vals = [round(self.r.uniform(lo, hi), 4) for _ in range(int(np.prod(shape)) if shape else 1)]
        if not shape:
            attrs = {"value": vals[0], "dtype": "float32"}
        else:
            attrs = {"value": vals, "shape": list(shape), "dtype": "float32"}
        return T(self.add("Const", attrs=attrs), shape)

    def pick(self, shape=None, rank=None):
        """A pool tensor, of exactly `shape` (or `rank`) when given; may be new."""
        cands = [t for t in self.pool
                 if (shape is None or t.shape == tuple(shape)) and
                 (rank is None or len(t.shape) == rank)]
        if cands and self.r.random() < 0.85:
            # prefer recent tensors so graphs get deep
            return cands[-1 - min(int(self.r.expovariate(0.5)), len(cands) - 1)]
        if shape is None:
            shape = self.rand_shape(rank)
        return self.const(shape)

    @staticmethod
    def meta(*ts, extra=1):
        return dict(depth=max(t.depth for t in ts) + 1,
                    taint=frozenset().union(*[t.taint for t in ts]),
                    state=any(t.state for t in ts),
                    red=max(t.red for t in ts) * extra,
                    vdep=any(t.vdep for t in ts))

    def emit(self, t):
        self.pool.append(t)
        return t

    # -- op generators -------------------------------------------------
    def g_unary(self):
        x = self.pick()
        op = self.r.choice(UNARY)
        if op == "Exp":
            x = T(self.add("Tanh", [x.ref]), x.shape, **self.meta(x))
        elif op in ("Log", "Sqrt"):
            a = T(self.add("Abs", [x.ref]), x.shape, **self.meta(x))
            c = self.const((), 0.5, 1.5)
            x = T(self.add("Add", [a.ref, c.ref]), x.shape, **self.meta(a))
        return self.emit(T(self.add(op, [x.ref]), x.shape, **self.meta(x)))

    def g_binary(self):
        r = self.r
        x = self.pick()
        ys = self.bshape(x.shape)
        y = self.pick(ys)
        if r.random() < 0.5:
            x, y = y, x
        out = tuple(np.broadcast_shapes(x.shape, y.shape))
        op = r.choice(BINARY)
        if op == "Div":
            a = T(self.add("Abs", [y.ref]), y.shape, **self.meta(y))
            c = self.const((), 0.5, 1.5)
            y = T(self.add("Add", [a.ref, c.ref]), y.shape, **self.meta(a))
        elif op == "Pow":
            a = T(self.add("Abs", [x.ref]), x.shape, **self.meta(x))
            c = self.const((), 0.5, 1.5)
            x = T(self.add("Add", [a.ref, c.ref]), x.shape, **self.meta(a))
            y = T(self.add("Tanh", [y.ref]), y.shape, **self.meta(y))
        return self.emit(T(self.add(op, [x.ref, y.ref]), out, **self.meta(x, y)))

    def g_addn(self):
        x = self.pick()
        xs = [x] + [self.pick(x.shape) for _ in range(self.r.randint(1, 3))]
        return self.emit(T(self.add("AddN", [t.ref for t in xs]), x.shape,
                           **self.meta(*xs, extra=len(xs))))

    def g_matmul(self):
        r = self.r
        if self.big:
            m, k, n = (r.choice([1, 3, 17, 64, 129]) for _ in range(3))
        else:
            m, k, n = r.randint(1, 5), r.randint(1, 6), r.randint(1, 5)
        ta, tb = r.random() < 0.3, r.random() < 0.3
        a = self.pick((k, m) if ta else (m, k))
        b = self.pick((n, k) if tb else (k, n))
        attrs = {}
        if ta:
            attrs["transpose_a"] = True
        if tb:
            attrs["transpose_b"] = True
        return self.emit(T(self.add("MatMul", [a.ref, b.ref], attrs), (m, n),
                           **self.meta(a, b, extra=k)))

    def g_biasadd(self):
        x = self.pick(rank=self.r.choice([2, 3]))
        b = self.pick((x.shape[-1],))
        return self.emit(T(self.add("BiasAdd", [x.ref, b.ref]), x.shape,
                           **self.meta(x, b)))

    def g_reduce(self):
        r = self.r
        x = self.pick()
        op = r.choice(["Sum", "Mean", "Max"])
        rank = len(x.shape)
        attrs = {}
        if rank == 0 or r.random() < 0.25:
            axes = list(range(rank))
        else:
            axes = sorted(r.sample(range(rank), r.randint(1, rank)))
            if len(axes) == 1 and r.random() < 0.5:
                attrs["axis"] = axes[0] - (rank if r.random() < 0.3 else 0)
            else:
                attrs["axis"] = axes
        keep = r.random() < 0.4
        if keep:
            attrs["keepdims"] = True
        shape = tuple((1 if i in axes else d) for i, d in enumerate(x.shape)
                      if keep or i not in axes)
        n = int(np.prod([x.shape[i] for i in axes])) if axes else 1
        return self.emit(T(self.add(op, [x.ref], attrs), shape,
                           **self.meta(x, extra=max(n, 1))))

    def g_reshape(self):
        r = self.r
        x = self.pick()
        size = int(np.prod(x.shape)) if x.shape else 1
        dims = []
        rest = size
        for _ in range(r.randint(0, 3)):
            divs = [d for d in range(1, rest + 1) if rest % d == 0]
            d = r.choice(divs)
            dims.append(d)
            rest //= d
        if rest > 1 or (dims and r.random() < 0.3):
            dims.append(rest)
        shape = list(dims)
        if shape and r.random() < 0.4:
            shape[r.randrange(len(shape))] = -1
        return self.emit(T(self.add("Reshape", [x.ref], {"shape": shape}),
                           dims, **self.meta(x)))

    def g_transpose(self):
        x = self.pick(rank=self.r.choice([2, 3]))
        perm = list(range(len(x.shape)))
        self.r.shuffle(perm)
        return self.emit(T(self.add("Transpose", [x.ref], {"perm": perm}),
                           [x.shape[p] for p in perm], **self.meta(x)))

    def g_softmax(self):
        x = self.pick(rank=self.r.choice([1, 2, 2]))
        return self.emit(T(self.add("Softmax", [x.ref]), x.shape,
                           **self.meta(x, extra=x.shape[-1])))

    def g_xent(self):
        r = self.r
        b, c = r.randint(1, 4), r.randint(2, 5)
        if self.big:
            b, c = r.choice([1, 40, 300]), r.choice([2, 10, 257])
        logits = self.pick((b, c))
        if r.random() < 0.5:
            lab = self.pick((b, c))
            labels = T(self.add("Softmax", [lab.ref]), (b, c), **self.meta(lab))
            out = self.add("SoftmaxCrossEntropyWithLogits",
                           [logits.ref, labels.ref])
            m = self.meta(logits, labels, extra=c)
        else:
            vals = [r.randrange(c) for _ in range(b)]
            lab = self.add("Const", attrs={"value": vals, "dtype":
                                           r.choice(["int32", "int64"])})
            out = self.add("SparseSoftmaxCrossEntropyWithLogits",
                           [logits.ref, lab])
            m = self.meta(logits, extra=c)
        return self.emit(T(out, (b,), **m))

    def g_cast(self):
        r = self.r
        x = self.pick()
        kind = r.choice(["float64", "int32", "int64", "bool"])
        if kind == "float64":
            mid = self.add("Cast", [x.ref], {"dtype": "float64"})
            return self.emit(T(self.add("Cast", [mid], {"dtype": "float32"}),
                               x.shape, **self.meta(x)))
        if kind == "bool":
            # keep the input away from 0 most of the time
            mid = self.add("Cast", [x.ref], {"dtype": "bool"})
        else:
            c = self.const((), 1.0, 4.0)
            sc = T(self.add("Mul", [x.ref, c.ref]), x.shape, **self.meta(x, c))
            self.pool.append(sc)
            x = sc
            mid = self.add("Cast", [x.ref], {"dtype": kind})
        self.discrete[mid] = ("cast", x.ref, kind)
        self.fetch += [mid, x.ref]
        m = self.meta(x)
        m["taint"] = m["taint"] | {mid}
        return self.emit(T(self.add("Cast", [mid], {"dtype": "float32"}),
                           x.shape, **m))

    def g_argmax(self):
        r = self.r
        x = self.pick(rank=r.choice([1, 2, 2, 3]))
        ax = r.randrange(len(x.shape))
        out = tuple(d for i, d in enumerate(x.shape) if i != ax)
        am = self.add("ArgMax", [x.ref], {"axis": ax})
        self.discrete[am] = ("argmax", x.ref, ax)
        self.fetch += [am, x.ref]
        m = self.meta(x)
        m["taint"] = m["taint"] | {am}
        # a second ArgMax over a same-shaped tensor, compared with Equal
        y = self.pick(x.shape)
        am2 = self.add("ArgMax", [y.ref], {"axis": ax})
        self.discrete[am2] = ("argmax", y.ref, ax)
        self.fetch += [am2, y.ref]
        eq = self.add("Equal", [am, am2])
        m2 = self.meta(x, y)
        m2["taint"] = m2["taint"] | {am, am2}
        self.fetch.append(eq)
        f = self.add("Cast", [eq], {"dtype": "float32"})
        self.emit(T(f, out, **m2))
        return self.emit(T(self.add("Cast", [am], {"dtype": "float32"}), out, **m))

    def g_variable(self):
        r = self.r
        shape = self.rand_shape()
        v = self.add("Variable", attrs={
            "dtype": "float32", "shape": list(shape),
            "init": r.choice([{"random_normal": {"mean": 0.0, "stddev": 1.0}},
                              {"random_uniform": {"min": -1.0, "max": 1.0}},
                              round(r.uniform(-1, 1), 3)])})
        kind = r.choice(["plain", "inc", "inc", "assign"])
        self.vars.append((v, kind))
        if kind == "plain":
            return self.emit(T(v, shape, vdep=True))
        if r.random() < 0.3:
            # the update reads v itself (ordered by the data edge)
            val = T(self.add(r.choice(["Sin", "Tanh"]), [v]), shape)
        else:
            val = self.pick(shape)
            if val.state:
                val = self.const(shape)
        upd = self.add("AssignAdd" if kind == "inc" else "Assign", [v, val.ref])
        self.fetch.append(upd)
        self.repeat = r.choice([1, 2, 3])
        rd = self.add("Identity", [v, "^" + upd])
        return self.emit(T(rd, shape, depth=val.depth + 2, taint=val.taint,
                           state=True, red=val.red, vdep=True))

    def g_intvar(self):
        """An int32 Variable (no GPU kernel) counted up by AssignAdd."""
        r = self.r
        shape = self.rand_shape(r.choice([0, 1]))
        n = int(np.prod(shape)) if shape else 1
        init = [r.randint(-3, 3) for _ in range(n)]
        v = self.add("Variable", attrs={"dtype": "int32", "shape": list(shape),
                                         "init": init if shape else init[0]})
        cv = [r.randint(1, 3) for _ in range(n)]
        c = self.add("Const", attrs={"dtype": "int32", "value": cv if shape else cv[0],
                                     **({"shape": list(shape)} if shape else {})})
        upd = self.add(r.choice(["AssignAdd", "AssignSub"]), [v, c])
        self.fetch.append(upd)
        self.repeat = r.choice([1, 2, 3])
        rd = self.add("Identity", [v, "^" + upd])
        self.fetch.append(rd)
        return self.emit(T(self.add("Cast", [rd], {"dtype": "float32"}), shape,
                           state=True))

    def g_noop(self):
        """A NoOp grouping a few nodes; a later Identity waits for it."""
        r = self.r
        deps = ["^" + c for c in r.sample(self.names, min(len(self.names), 3))]
        nop = self.add("NoOp", deps)
        x = self.pick()
        m = self.meta(x)
        return self.emit(T(self.add("Identity", [x.ref, "^" + nop]), x.shape, **m))

    def g_print(self):
        x = self.pick()
        return self.emit(T(self.add("Print", [x.ref], {"message": "p"}),
                           x.shape, **self.meta(x)))

    def g_f64(self):
        """A short float64 chain between two Casts."""
        r = self.r
        x = self.pick()
        y = self.add("Cast", [x.ref], {"dtype": "float64"})
        for _ in range(r.randint(1, 3)):
            y = self.add(r.choice(["Sin", "Tanh", "Square", "Neg", "Sigmoid"]), [y])
        y2 = self.add("Mul", [y, y])
        return self.emit(T(self.add("Cast", [y2], {"dtype": "float32"}), x.shape,
                           **self.meta(x, extra=1)))

    # -- whole graph ---------------------------------------------------
    def build(self, train=False):
        r = self.r
        self.train = train
        for _ in range(r.randint(1, 3)):
            self.g_variable()
        gens = [(self.g_unary, 6), (self.g_binary, 6), (self.g_addn, 1),
                (self.g_matmul, 2), (self.g_biasadd, 1), (self.g_reduce, 3),
                (self.g_reshape, 1), (self.g_transpose, 1), (self.g_softmax, 1),
                (self.g_xent, 1), (self.g_cast, 1), (self.g_argmax, 1),
                (self.g_variable, 0.5), (self.g_intvar, 0.3),
                (self.g_noop, 0.5), (self.g_print, 0.2), (self.g_f64, 0.5)]
        fns = [g for g, _ in gens]
        ws = [w for _, w in gens]
        for _ in range(r.randint(4, 22)):
            r.choices(fns, ws)[0]()
        floats = [t for t in self.pool]
        for t in r.sample(floats, min(len(floats), r.randint(1, 4))):
            self.fetch.append(t.ref)
        self.fetch.append(self.pool[-1].ref)
        doc = {"version": 1, "nodes": self.nodes}
        # gradients: ys free of state (Assign outputs), xs some Variables
        cands = [t for t in self.pool if not t.taint]
        if cands and r.random() < 0.7:
            ys = r.sample(cands, min(len(cands), r.randint(1, 2)))
            xs = [v for v, _ in self.vars]
            xs = r.sample(xs, r.randint(1, len(xs)))
            entry = {"name": "g", "ys": [t.ref for t in ys], "xs": xs}
            if r.random() < 0.5:
                entry["colocate"] = r.random() < 0.5
            doc["gradients"] = [entry]
            self.fetch += ["g/" + x for x in xs]
            self.grad_t = ys
        if train:
            # loss: a scalar reduction over a tensor depending on Variables
            cands = [t for t in self.pool if not t.taint and t.vdep]
            y = cands[-1] if cands else [t for t in self.pool if t.vdep][0]
            loss = self.add("Mean", [y.ref])
            self.loss_t = y
            opt = r.choice([{"type": "sgd", "learning_rate": 0.05},
                            {"type": "momentum", "learning_rate": 0.05,
                             "momentum": 0.9},
                            {"type": "adam", "learning_rate": 0.01}])
            doc["train"] = {"loss": loss, "optimizer": opt,
                            "steps": r.randint(1, 4)}
            if r.random() < 0.5:
                doc["train"]["colocate_gradients"] = r.random() < 0.5
        seen = set()
        fetch = []
        for f in self.fetch:
            if f not in seen:
                seen.add(f)
                fetch.append(f)
        doc["fetch"] = fetch
        if r.random() < 0.2:
            doc["placement"] = {"allow_soft_placement": True, "rules": [
                {"match": {"op": ["Variable"]}, "device": r.choice(["/cpu:0", "/gpu:1"])}]}
        return doc


def make_graph(seed):
    """(graph document, repeat, taint map, discrete map, train?) for seed."""
    g = Gen(seed)
    train = g.r.random() < 0.25
    doc = g.build(train=train)
    taint = {t.ref: t.taint for t in g.pool}
    if train:
        # the loss and every trained Variable depend on the loss's inputs
        taint["loss"] = g.loss_t.taint
        for v, _ in g.vars:
            taint["var:" + v] = g.loss_t.taint
    red = {t.ref: (t.depth, t.red) for t in g.pool}
    return doc, g.repeat, taint, red, g.discrete, train, g.feeds


# -- running and comparing ---------------------------------------------------
def run(dgrun, path, cfg, repeat, train, tmp, feed_args):
    env0, args = CONFIGS[cfg]
    env = dict(os.environ)
    for k in ("DGRUN_OPENCL_DEVICES", "DGRUN_VISIBLE_DEVICES", "DGRUN_CL_QUEUES"):
        env.pop(k, None)
    env.update(env0)
    cmd = [dgrun, "train" if train else "run", path, "--json",
           "--allow-soft-placement", "--seed", "7"] + args
    cmd += feed_args
    if not train and repeat > 1:
        cmd += ["--repeat", str(repeat)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr, cmd


def arr(v):
    val = v["value"] if isinstance(v, dict) else v
    dt = v.get("dtype", "float32") if isinstance(v, dict) else "float32"
    a = np.array(val, dtype=np.float64 if dt.startswith("float") else object)
    if dt == "bool":
        a = np.array(val, dtype=bool)
    elif dt.startswith("int"):
        a = np.array(val, dtype=np.int64)
    return dt, a


def near_tie(kind, x, aux, tol):
    x = np.asarray(x, dtype=np.float64)
    if kind == "cast":
        if aux == "bool":
            return bool(np.any(np.abs(x) <= tol))
        return bool(np.any(np.abs(x - np.round(x)) <= tol))
    if x.ndim == 0 or x.shape[aux] < 2:
        return False
    s = np.sort(x, axis=aux)
    gap = np.take(s, -1, axis=aux) - np.take(s, -2, axis=aux)
    return bool(np.any(gap <= tol))


STATS = {"worst": 0.0, "floats": 0, "exact": 0, "skipped": 0, "chaotic": 0}


def compare(ref, got, doc, taint, red, discrete, tolf=1.0, skip=frozenset(),
            stats=True):
    """[(fetch, mismatch description)] between two result dicts; fetches in
    `skip` (sensitive to rounding, see perturb) are not compared."""
    errs = []
    if set(ref) != set(got):
        return [("", "different result keys: %s vs %s" % (sorted(ref), sorted(got)))]
    # discrete ops whose inputs show near ties: their dependants are skipped
    tied = set()
    for d, (kind, src, aux) in discrete.items():
        if src in ref:
            _, x = arr(ref[src])
            _, y = arr(got[src])
            if x.shape == y.shape and np.array_equal(x, y):
                continue  # same input bits: the discrete result must agree
            scale = float(np.max(np.abs(x))) if x.size else 0.0
            dep, rl = red.get(src, (1, 1))
            if near_tie(kind, x, aux, 1e-3 * (1 + scale) * (dep + 1) * (1 + np.log2(rl))):
                tied.add(d)
        else:
            tied.add(d)
    for k in ref:
        if k in skip:
            STATS["chaotic"] += stats
            continue
        a, b = ref[k], got[k]
        if not isinstance(a, dict) or not isinstance(b, dict):
            dta, xa = arr(a)
            dtb, xb = arr(b)
        else:
            if a["shape"] != b["shape"] or a["dtype"] != b["dtype"]:
                errs.append((k, "%s: shape/dtype %s %s vs %s %s" % (k, a["dtype"], a["shape"], b["dtype"], b["shape"])))
                continue
            dta, xa = arr(a)
            dtb, xb = arr(b)
        tset = taint.get(k, frozenset())
        if k in discrete:
            tset = tset | {k}
        if tset & tied:
            STATS["skipped"] += stats
            continue
        if dta.startswith("float"):
            if xa.shape != xb.shape:
                errs.append((k, "%s: shape %s vs %s" % (k, xa.shape, xb.shape)))
                continue
            fa, fb = np.isfinite(xa), np.isfinite(xb)
            if np.any(fa != fb):
                errs.append((k, "%s: non-finite pattern differs\n  cpu=%s\n  got=%s" % (k, xa, xb)))
                continue
            scale = float(np.max(np.abs(xa[fa]))) if np.any(fa) else 0.0
            dep, rl = red.get(k, (8, 64))
            if k.startswith("g/") or k not in red:
                dep, rl = 12, 256
            tol = tolf * 2e-5 * (1 + scale) * (dep + 1) * (1 + np.log2(max(rl, 1)))
            diff = np.abs(np.where(fa, xa, 0) - np.where(fb, xb, 0))
            if diff.size and stats:
                STATS["worst"] = max(STATS["worst"], float(np.max(diff)) / tol)
            STATS["floats"] += stats
            if np.any(diff > tol):
                errs.append((k, "%s: max diff %.3g > tol %.3g (scale %.3g)\n  cpu=%s\n  got=%s"
                            % (k, float(np.max(diff)), tol, scale, xa, xb)))
        else:
            STATS["exact"] += stats
            if xa.shape != xb.shape or np.any(xa != xb):
                errs.append((k, "%s: exact mismatch\n  cpu=%s\n  got=%s" % (k, xa, xb)))
    return errs


def results_of(out, train):
    d = json.loads(out)
    if not train:
        return d
    res = {"loss": d["loss"]}
    for k, v in d.get("variables", {}).items():
        res["var:" + k] = v
    return res


PERTURB = 1.0 + 2.0 ** -20


def perturbed(doc):
    """A copy of doc with every float Const value and numeric Variable init
    scaled by PERTURB (a few ulps)."""
    d = json.loads(json.dumps(doc))

    def scale(v):
        if isinstance(v, list):
            return [scale(x) for x in v]
        return v * PERTURB if isinstance(v, float) else v

    for n in d["nodes"]:
        a = n.get("attrs", {})
        if n["op"] == "Const" and a.get("dtype") == "float32":
            a["value"] = scale(a["value"])
        if n["op"] == "Variable" and a.get("dtype") == "float32" and \
                not isinstance(a.get("init"), dict):
            a["init"] = scale(a["init"])
    return d


def one(dgrun, seed, configs, tmp, verbose=False):
    """Run seed on cpu and configs; return list of failure strings."""
    doc, repeat, taint, red, discrete, train, feeds = make_graph(seed)
    path = os.path.join(tmp, "graph_%d.json" % seed)
    ppath = os.path.join(tmp, "graph_%d_perturbed.json" % seed)
    files = [path, ppath]
    feed_args, pfeed_args = [], []
    pdoc = perturbed(doc)
    for nm, val in feeds.items():
        fp = "graph_%d_%s.npy" % (seed, nm)
        pfp = "graph_%d_%s_perturbed.npy" % (seed, nm)
        np.save(os.path.join(tmp, fp), val)
        np.save(os.path.join(tmp, pfp), (val * PERTURB).astype(np.float32))
        files += [os.path.join(tmp, fp), os.path.join(tmp, pfp)]
        if train:
            doc["train"].setdefault("feeds", {})[nm] = {"file": fp}
            pdoc["train"].setdefault("feeds", {})[nm] = {"file": pfp}
        else:
            feed_args += ["--feed", "%s=%s" % (nm, fp)]
            pfeed_args += ["--feed", "%s=%s" % (nm, pfp)]
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    with open(ppath, "w") as f:
        json.dump(pdoc, f, indent=1)
    code, out, err, cmd = run(dgrun, path, "cpu", repeat, train, tmp, feed_args)
    fails = []
    if code != 0:
        return ["seed %d cpu: exit %d: %s\n  %s" % (seed, code, err.strip()[:2000], " ".join(cmd))]
    ref = results_of(out, train)
    # fetches that move by more than half their tolerance when the
    # inputs move by a few ulps are ill-conditioned: not compared
    code, out, err, cmd = run(dgrun, ppath, "cpu", repeat, train, tmp, pfeed_args)
    if code != 0:
        return ["seed %d cpu (perturbed): exit %d: %s\n  %s" % (
            seed, code, err.strip()[:2000], " ".join(cmd))]
    skip = {k for k, _ in compare(ref, results_of(out, train), doc, taint, red,
                                  discrete, tolf=0.5, stats=False)}
    if "" in skip:
        skip = set(ref)
    for cfg in configs:
        code, out, err, cmd = run(dgrun, path, cfg, repeat, train, tmp, feed_args)
        if code != 0:
            fails.append("seed %d %s: exit %d: %s\n  %s" % (
                seed, cfg, code, err.strip()[:2000], " ".join(cmd)))
            continue
        got = results_of(out, train)
        errs = compare(ref, got, doc, taint, red, discrete, skip=skip)
        if errs:
            fails.append("seed %d %s: %s\n  %s" % (
                seed, cfg, "\n".join(e for _, e in errs)[:4000], " ".join(cmd)))
    if not fails:
        for f in files:
            os.unlink(f)
    return fails


def main():
    argv = sys.argv[1:]
    if not argv:
        sys.exit(__doc__)
    dgrun = os.path.abspath(argv[0])
    n, seed0, configs, keep, regress = 12, 1, DEFAULT_CONFIGS, False, False
    i = 1
    while i < len(argv):
        a = argv[i]
        if a == "--graphs":
            n = int(argv[i + 1]); i += 1
        elif a == "--seed":
            seed0 = int(argv[i + 1]); i += 1
        elif a == "--configs":
            configs = argv[i + 1].split(","); i += 1
        elif a == "--keep":
            keep = True
        elif a == "--regress":
            regress = True
        else:
            sys.exit("e2e_diff.py: unknown argument %r" % a)
        i += 1
    tmp = tempfile.mkdtemp(prefix="dgrun-diff-")
    seeds = list(REGRESSION_SEEDS) if regress else \
        list(REGRESSION_SEEDS) + list(range(seed0, seed0 + n))
    fails = []
    for s in seeds:
        f = one(dgrun, s, configs, tmp)
        for x in f:
            print("FAIL:", x)
        fails += f
    if fails:
        print("%d failure(s); graphs kept in %s" % (len(fails), tmp))
        return 1
    print("ok: %d graphs x %d configurations agree with CPU (%d float and %d "
          "exact comparisons, %d skipped for near ties, %d as ill-conditioned; "
          "worst diff/tol %.3g)"
          % (len(seeds), len(configs), STATS["floats"], STATS["exact"],
             STATS["skipped"], STATS["chaotic"], STATS["worst"]))
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
