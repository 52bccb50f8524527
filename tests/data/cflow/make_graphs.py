#!/usr/bin/env python3
"""make_graphs.py -- write the hand-made control-flow graphs of this folder
(dgrun JSON; TF-1 control-flow ops wired as tf.while_loop / tf.cond do).
Run it after changing it: python3 make_graphs.py (writes next to itself).

  while_simple.json  i = 0, x = 1; while i != 5: i += 1, x *= 2
  cond.json          Switch/Merge on a fed bool p: p ? x * 2 : x + 10; the
                     untaken branch holds a Print that must stay silent
  nested.json        outer loop i < 3 (i != 3) around an inner loop j != 4:
                     acc = acc * 0.5 + x inside, acc += i outside
  nested_grad.json   nested with gradients: d y / d x
  while_cond_grad.json  a tf.cond in a loop body: x = (i == 2) ? x * w :
                     sin(x * w), 4 iterations (w enters each branch through
                     a Switch, as tf.cond makes it); gradients for w, x0
  nested_rnn_grad.json  an outer loop (3 iterations) whose body runs an
                     inner loop i + 1 times, reading a value of the outer
                     body and w: gradients for w and h0
  parallel.json      the same independent loop body with parallel_iterations
                     1 (out1) and 8 (out8): equal results
  dead_loop.json     a while loop in the untaken branch of a cond: its Exits
                     send dead tensors when its frame ends, Merge takes the
                     live branch
  tensorarray.json   scatter a [3, 2] into a TensorArray, a loop reads each
                     element, doubles it, pushes it on a stack and writes it
                     to a second TensorArray; gather, size, and pops after
                     the loop (last pushed first; parallel_iterations 1:
                     nothing else orders the pushes)
  cond_grad.json     gradients through a cond (Switch/Merge): loss =
                     sum(p ? w * x : w^2), d loss / d w
  while_grad.json    while_simple with gradients through the loop:
                     d x / d x0 = 2^5
  while_pow_grad.json  x = x0; n times (n fed): x = x * w; loss =
                     sum(sin(x)); d loss / d w (a loop-invariant input: an
                     accumulator) and d loss / d x0 (n = 0: the identity)
  while_rnn_grad.json  an RNN cell h = tanh(h W + b (i + 1)) run 4 times by
                     a while loop and the same unrolled: loss and loss_u,
                     gradient sets g (loop) and gu (unrolled) for W, b, h0
  while_train.json   the RNN loop trained by SGD towards a target (train
                     section); while_train_unrolled.json: the same unrolled
  bad_exit.json      an Exit without a loop (error)
  bad_pop.json       a pop from an empty stack (run-time error)
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


class G:
    def __init__(self):
        self.nodes = []
        self.k = 0

    def add(self, op, inputs=(), name=None, **attrs):
        if name is None:
            self.k += 1
            name = "%s_%d" % (op.lower(), self.k)
        n = {"name": name, "op": op}
        if inputs:
            n["inputs"] = list(inputs)
        if attrs:
            n["attrs"] = attrs
        self.nodes.append(n)
        return name

    def const(self, v, dtype=None, ctrl=None, name=None):
        a = {"value": v}
        if dtype:
            a["dtype"] = dtype
        return self.add("Const", ["^" + ctrl] if ctrl else [], name, **a)

    def loop(self, frame, init, cond, body, consts=(), parallel=None):
        """tf.while_loop: init = loop vars (refs in the outer frame),
        consts = outer refs the body reads (is_constant Enters).  cond(vars,
        consts) -> a bool ref meaning DONE (dgrun has no Less: the loop
        stops when it is true); body(vars, consts, pivot) -> new vars.
        Returns the Exit refs."""
        ea = {"frame_name": frame}
        if parallel is not None:
            ea["parallel_iterations"] = parallel
        enters = [self.add("Enter", [v], "%s/enter%d" % (frame, i), **ea)
                  for i, v in enumerate(init)]
        cs = [self.add("Enter", [c], "%s/const%d" % (frame, i),
                       is_constant=True, **ea) for i, c in enumerate(consts)]
        merges = ["%s/merge%d" % (frame, i) for i in range(len(init))]
        nexts = ["%s/next%d" % (frame, i) for i in range(len(init))]
        for i, m in enumerate(merges):
            self.add("Merge", [enters[i], nexts[i]], m)
        done = cond(merges, cs)
        lc = self.add("LoopCond", [done], "%s/cond" % frame)
        sws = [self.add("Switch", [m, lc], "%s/switch%d" % (frame, i))
               for i, m in enumerate(merges)]
        ids = [self.add("Identity", [s + ":0"], "%s/body%d" % (frame, i))
               for i, s in enumerate(sws)]
        new = body(ids, cs, ids[0])
        for i, v in enumerate(new):
            self.add("NextIteration", [v], nexts[i])
        return [self.add("Exit", [s + ":1"], "%s/exit%d" % (frame, i))
                for i, s in enumerate(sws)]

    def write(self, name, fetch):
        with open(os.path.join(HERE, name), "w") as f:
            doc = {"version": 1, "nodes": self.nodes, "fetch": fetch}
            if getattr(self, "gradients", None):
                doc["gradients"] = self.gradients
            if getattr(self, "train", None):
                doc["train"] = self.train
            json.dump(doc, f, indent=1)
            f.write("\n")


def counter_loop(g, frame, n, x0, step, parallel=None):
    """i = 0, x = x0; while i != n: x = step(x, i, pivot); i += 1."""
    i0 = g.const(0, "int32")
    nc = g.const(n, "int32")

    def cond(v, c):
        return g.add("Equal", [v[0], c[0]])

    def body(v, c, piv):
        one = g.const(1, "int32", ctrl=piv)
        return [g.add("Add", [v[0], one]), step(v[1], v[0], piv, c)]
    return g.loop(frame, [i0, x0], cond, body, consts=[nc],
                  parallel=parallel)


def while_simple():
    g = G()
    x0 = g.const(1.0)
    ex = counter_loop(g, "L", 5, x0,
                      lambda x, i, p, c: g.add("Mul", [x, g.const(2.0,
                                                                  ctrl=p)]))
    g.add("Identity", [ex[0]], "i")
    g.add("Identity", [ex[1]], "x")
    g.write("while_simple.json", ["i", "x"])
    g.gradients = [{"name": "g", "ys": ["x"], "xs": [x0]}]
    g.write("while_grad.json", ["x", "g/" + x0])


def rnn(g, train):
    """The RNN cell of while_rnn_grad / while_train: returns (loss over
    the loop, loss unrolled)."""
    g.add("Variable", [], "W", dtype="float32", shape=[3, 3],
          init=[[0.5, -0.3, 0.2], [0.1, 0.4, -0.6], [-0.2, 0.3, 0.7]])
    g.add("Variable", [], "b", dtype="float32", shape=[3],
          init=[0.1, -0.2, 0.05])
    h0 = g.const([[0.5, -0.25, 0.1], [0.3, 0.2, -0.4]], name="h0")
    tgt = g.const([[0.3, -0.1, 0.2], [-0.4, 0.5, 0.1]], name="target")
    steps = 4

    def cell(h, w, b, fi1, piv):
        z = g.add("Add", [g.add("MatMul", [h, w]), g.add("Mul", [b, fi1])])
        return g.add("Tanh", [z])

    def body(v, c, piv):
        fi = g.add("Cast", [v[0]], dtype="float32")
        fi1 = g.add("Add", [fi, g.const(1.0, ctrl=piv)])
        return [g.add("Add", [v[0], g.const(1, "int32", ctrl=piv)]),
                cell(v[1], c[1], c[2], fi1, piv)]
    ex = g.loop("R", [g.const(0, "int32"), h0],
                lambda v, c: g.add("Equal", [v[0], c[0]]), body,
                consts=[g.const(steps, "int32"), "W", "b"])
    g.add("Identity", [ex[1]], "h_loop")
    h = h0
    for t in range(steps):
        h = cell(h, "W", "b", g.const(float(t + 1)), None)
    g.add("Identity", [h], "h_unrolled")
    out = []
    for src, name in (("h_loop", "loss"), ("h_unrolled", "loss_u")):
        d = g.add("Sub", [src, tgt]) if train else src
        out.append(g.add("Sum", [g.add("Square", [d])], name))
    return out


def while_grads():
    g = G()
    g.add("Variable", [], "w", dtype="float32", shape=[3],
          init=[0.9, -1.1, 1.05])
    x0 = g.const([0.5, 1.5, -2.0], name="x0")
    n = g.add("Placeholder", [], "n", dtype="int32", shape=[])

    def body(v, c, piv):
        return [g.add("Add", [v[0], g.const(1, "int32", ctrl=piv)]),
                g.add("Mul", [v[1], c[1]])]
    ex = g.loop("P", [g.const(0, "int32"), x0],
                lambda v, c: g.add("Equal", [v[0], c[0]]), body,
                consts=[n, "w"])
    g.add("Sum", [g.add("Sin", [ex[1]])], "loss")
    g.gradients = [{"name": "g", "ys": ["loss"], "xs": ["w", x0]}]
    g.write("while_pow_grad.json", ["loss", "g/w", "g/x0"])

    g = G()
    rnn(g, False)
    g.gradients = [{"name": "g", "ys": ["loss"], "xs": ["W", "b", "h0"]},
                   {"name": "gu", "ys": ["loss_u"], "xs": ["W", "b", "h0"]}]
    g.write("while_rnn_grad.json", ["loss", "loss_u", "g/W", "gu/W", "g/b",
                                    "gu/b", "g/h0", "gu/h0"])
    for unrolled in (False, True):
        g = G()
        loss, loss_u = rnn(g, True)
        g.train = {"loss": loss_u if unrolled else loss,
                   "optimizer": {"type": "sgd", "learning_rate": 0.02},
                   "steps": 200, "log_every": 100}
        g.write("while_train%s.json" % ("_unrolled" if unrolled else ""),
                ["loss", "loss_u"])


def while_cond_grad():
    g = G()
    g.add("Variable", [], "w", dtype="float32", shape=[3],
          init=[0.8, -0.6, 0.4])
    x0 = g.const([0.3, -0.7, 0.5], name="x0")

    def body(v, c, piv):
        p = g.add("Equal", [v[0], c[2]], "C/p")
        sx = g.add("Switch", [v[1], p], "C/sx")
        sw = g.add("Switch", [c[1], p], "C/sw")
        f = g.add("Sin", [g.add("Mul", [sx + ":0", sw + ":0"])], "C/false")
        t = g.add("Mul", [sx + ":1", sw + ":1"], "C/true")
        m = g.add("Merge", [f, t], "C/merge")
        return [g.add("Add", [v[0], g.const(1, "int32", ctrl=piv)]),
                m + ":0"]
    ex = g.loop("W", [g.const(0, "int32"), x0],
                lambda v, c: g.add("Equal", [v[0], c[0]]), body,
                consts=[g.const(4, "int32"), "w", g.const(2, "int32")])
    g.add("Sum", [g.add("Square", [ex[1]])], "loss")
    g.gradients = [{"name": "g", "ys": ["loss"], "xs": ["w", x0]}]
    g.write("while_cond_grad.json", ["loss", "g/w", "g/x0"])


def nested_rnn_grad():
    g = G()
    g.add("Variable", [], "w", dtype="float32", shape=[3],
          init=[0.8, -0.6, 0.4])
    h0 = g.const([0.3, -0.7, 0.5], name="h0")

    def obody(v, c, piv):
        one = g.const(1, "int32", ctrl=piv)
        s_ = g.add("Tanh", [g.add("Mul", [v[1], c[1]])], "O/s")
        m = g.add("Add", [v[0], one], "O/m")

        def ibody(w, cc, ipiv):
            a = g.add("Add", [g.add("Mul", [g.add("Sin", [w[1]]), cc[1]]),
                              cc[2]])
            return [g.add("Add", [w[0], g.const(1, "int32", ctrl=ipiv)]), a]
        ex = g.loop("I", [g.const(0, "int32", ctrl=piv), v[1]],
                    lambda w, cc: g.add("Equal", [w[0], cc[0]]), ibody,
                    consts=[m, s_, c[1]])
        return [m, g.add("Add", [ex[1], s_])]
    ex = g.loop("O", [g.const(0, "int32"), h0],
                lambda v, c: g.add("Equal", [v[0], c[0]]), obody,
                consts=[g.const(3, "int32"), "w"])
    g.add("Sum", [g.add("Square", [ex[1]])], "loss")
    g.gradients = [{"name": "g", "ys": ["loss"], "xs": ["w", h0]}]
    g.write("nested_rnn_grad.json", ["loss", "g/w", "g/h0"])


def cond():
    g = G()
    x = g.const([1.0, 2.0, 3.0], name="x")
    p = g.add("Placeholder", [], "p", dtype="bool", shape=[])
    sw = g.add("Switch", [x, p], "sw")
    f = g.add("Add", [g.add("Print", [sw + ":0"], "false_print",
                            message="FALSE BRANCH RAN"),
                      g.const(10.0, ctrl=sw)])
    t = g.add("Mul", [sw + ":1", g.const(2.0)])
    g.add("Merge", [f, t], "m")
    g.add("Identity", ["m:0"], "y")
    g.add("Identity", ["m:1"], "branch")
    g.write("cond.json", ["y", "branch"])


def nested():
    g = G()
    x = g.const([1.0, -2.0, 0.5], name="x")
    zeros = g.const([0.0, 0.0, 0.0])

    i0 = g.const(0, "int32")
    n3 = g.const(3, "int32")

    def ocond(v, c):
        return g.add("Equal", [v[0], c[0]])

    def obody(v, c, piv):
        one = g.const(1, "int32", ctrl=piv)
        j0 = g.const(0, "int32", ctrl=piv)
        n4 = g.const(4, "int32", ctrl=piv)
        half = g.const(0.5, ctrl=piv)

        def icond(w, cc):
            return g.add("Equal", [w[0], cc[0]])

        def ibody(w, cc, ipiv):
            one_i = g.const(1, "int32", ctrl=ipiv)
            a = g.add("Add", [g.add("Mul", [w[1], cc[1]]), cc[2]])
            return [g.add("Add", [w[0], one_i]), a]
        ex = g.loop("inner", [j0, v[1]], icond, ibody,
                    consts=[n4, half, c[1]])
        fi = g.add("Cast", [v[0]], dtype="float32")
        return [g.add("Add", [v[0], one]), g.add("Add", [ex[1], fi])]
    ex = g.loop("outer", [i0, zeros], ocond, obody, consts=[n3, x])
    g.add("Identity", [ex[1]], "y")
    g.write("nested.json", ["y"])
    g.gradients = [{"name": "g", "ys": ["y"], "xs": [x]}]
    g.write("nested_grad.json", ["y", "g/x"])


def parallel():
    g = G()
    x0 = g.const([[0.5, -0.25], [0.125, 1.0]], name="x0")
    w = g.const([[0.9, 0.1], [-0.2, 0.8]], name="w")
    for par in (1, 8):
        def step(x, i, p, c):
            # work that does not feed the next iteration's counter, so
            # iterations may overlap
            h = x
            for _ in range(4):
                h = g.add("Tanh", [g.add("MatMul", [h, c[1]])])
            return h
        i0 = g.const(0, "int32")
        nc = g.const(6, "int32")
        ex = g.loop("P%d" % par, [i0, x0],
                    lambda v, c: g.add("Equal", [v[0], c[0]]),
                    lambda v, c, piv: [g.add("Add", [v[0], g.const(
                        1, "int32", ctrl=piv)]), step(v[1], v[0], piv, c)],
                    consts=[nc, w], parallel=par)
        g.add("Identity", [ex[1]], "out%d" % par)
    g.write("parallel.json", ["out1", "out8"])


def dead_loop():
    g = G()
    x = g.const([1.0, 2.0], name="x")
    p = g.add("Placeholder", [], "p", dtype="bool", shape=[])
    sw = g.add("Switch", [x, p], "sw")
    # false branch: a loop doubling x 3 times
    ex = counter_loop(g, "DL", 3, sw + ":0",
                      lambda v, i, piv, c: g.add("Mul", [v, g.const(
                          2.0, ctrl=piv)]))
    t = g.add("Neg", [sw + ":1"], "t")
    g.add("Merge", [ex[1], t], "m")
    g.add("Identity", ["m:0"], "y")
    g.write("dead_loop.json", ["y"])


def tensorarray():
    g = G()
    size = g.const(3, "int32", name="size")
    xs = g.const([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="xs")
    idx = g.const([0, 1, 2], "int32", name="idx")
    ta_in = g.add("TensorArrayV3", [size], "ta_in", dtype="float32",
                  element_shape=[2])
    ta_out = g.add("TensorArrayV3", [size], "ta_out", dtype="float32",
                   element_shape=[2])
    sc = g.add("TensorArrayScatterV3", ["ta_in:0", idx, xs, "ta_in:1"],
               "scatter")
    stack = g.add("StackV2", [g.const(-1, "int32")], "stack",
                  elem_type="float32")
    i0 = g.const(0, "int32")

    def cond(v, c):
        return g.add("Equal", [v[0], c[0]])

    def body(v, c, piv):
        r = g.add("TensorArrayReadV3", [c[1], v[0], c[2]], "read",
                  dtype="float32", element_shape=[2])
        y = g.add("Mul", [r, g.const(2.0, ctrl=piv)])
        push = g.add("StackPushV2", [c[4], y], "push")
        wr = g.add("TensorArrayWriteV3", [c[3], v[0], push, v[1]], "write")
        return [g.add("Add", [v[0], g.const(1, "int32", ctrl=piv)]), wr]
    ex = g.loop("T", [i0, "ta_out:1"], cond, body,
                consts=[size, "ta_in:0", sc, "ta_out:0", stack], parallel=1)
    g.add("TensorArrayGatherV3", ["ta_out:0", idx, ex[1]], "gather",
          dtype="float32", element_shape=[2])
    g.add("TensorArraySizeV3", ["ta_out:0", ex[1]], "ta_size")
    g.add("StackPopV2", [stack, "^" + ex[1]], "pop1", elem_type="float32",
          element_shape=[2])
    g.add("StackPopV2", [stack, "^pop1"], "pop2", elem_type="float32",
          element_shape=[2])
    g.write("tensorarray.json", ["gather", "ta_size", "pop1", "pop2"])


def cond_grad():
    g = G()
    g.add("Variable", [], "w", dtype="float32", shape=[3],
          init=[0.5, -1.0, 2.0])
    x = g.const([1.0, 2.0, 3.0], name="x")
    p = g.add("Placeholder", [], "p", dtype="bool", shape=[])
    sw = g.add("Switch", ["w", p], "sw")
    f = g.add("Square", [sw + ":0"], "f")
    t = g.add("Mul", [sw + ":1", x], "t")
    g.add("Merge", [f, t], "m")
    g.add("Sum", ["m:0"], "loss")
    g.gradients = [{"name": "g", "ys": ["loss"], "xs": ["w"]}]
    g.write("cond_grad.json", ["loss", "g/w"])


def bad():
    g = G()
    g.add("Exit", [g.const(1.0)], "lonely_exit")
    g.write("bad_exit.json", ["lonely_exit"])
    g = G()
    s = g.add("StackV2", [g.const(-1, "int32")], "stack", elem_type="float32")
    g.add("StackPopV2", [s], "pop", elem_type="float32", element_shape=[])
    g.write("bad_pop.json", ["pop"])


if __name__ == "__main__":
    while_simple()
    while_grads()
    nested_rnn_grad()
    while_cond_grad()
    cond()
    nested()
    parallel()
    dead_loop()
    tensorarray()
    cond_grad()
    bad()
