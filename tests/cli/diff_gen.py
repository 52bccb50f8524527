#!/usr/bin/env python3
"""Seeded random graph generator for the differential test (e2e_diff.py).

make_graph(seed) builds a float32 dgrun graph: broadcasting elementwise ops,
small (or, in one graph in seven, large) MatMuls, reductions with
axis/keepdims, Softmax, cross entropies, Reshape/Transpose, Cast round trips,
ArgMax/Equal, AddN, NoOp/Print, float64 chains, Placeholders fed from .npy,
RandomNormal/RandomUniform; random `device` over /cpu:0, /gpu:0..3 and none,
colocate_with and acyclic control inputs; float32 Variables updated by
AssignAdd/Assign and read only through Identity(v, ^update) (so no read
races with the update), int32 counters; a `gradients` section (sometimes a
second one with grad_ys) and sometimes a `train` section.  Alongside it
records per tensor the depth, reduction length and the discrete ops
(ArgMax, Cast to int/bool) upstream, which the comparison uses.
Standard library and numpy only.
"""
import random

import numpy as np

DEVICES = ["/cpu:0", "/gpu:0", "/gpu:1", "/device:GPU:3", "GPU:2", None, None]
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
        for _ in range(r.randint(4, 60 if r.random() < 0.2 else 22)):
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
            if r.random() < 0.3:
                # a second set with explicit grad_ys (ys-shaped tensors)
                y = r.choice(cands)
                gy = self.pick(y.shape)
                xs2 = [v for v, _ in self.vars]
                doc["gradients"].append({"name": "h", "ys": [y.ref], "xs": xs2,
                                         "grad_ys": [gy.ref],
                                         "colocate": r.random() < 0.5})
                self.fetch += ["h/" + x for x in xs2]
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
