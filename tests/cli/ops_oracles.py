"""ops_oracles.py -- the op-conformance cases whose oracle is not a
recorded TensorFlow graph (issue 22 item 3; run by e2e_ops.py).

dgrun's internal ops have no TF op to record: the gradient and shape
helpers its compiler inserts (SumTo, BroadcastLike, ReshapeLike,
SoftmaxGrad, MaxGrad), its own batch norm (BatchNorm, BatchNormGrad,
AssignMovingAvg), the replica collectives (AllReduce, Broadcast,
ReplicaIndex: one replica here; e2e_replicate and e2e_mpi run several).
Their expected values are NumPy's, computed here from the formula each
op's `dgrun ops` row states.  Placeholder needs a feed (the .pb cases
have none).  The random ops have TF counterparts but not TF's numbers
(TF draws from Philox streams, dgrun from its own; docs/graphdef.md):
their oracle is the distribution -- the range, the moments within 6
standard errors, the same numbers on CPU and GPU for one --seed.

ORACLES: one dict per case --
  name, op, dtype     the case, the op it covers, the dtype it runs
  why                 the reason this op has this oracle
  nodes               dgrun's JSON graph; the op's node is named "op"
  want                fetch -> NumPy array (compared like TF's values)
  check               fetch -> function(array) -> None or what is wrong
  feeds               Placeholder -> NumPy array (written as .npy)
  also                other op types the graph covers (node names)
  gradients           the graph's "gradients" entries (fetched as g/<x>)
"""
import numpy as np

RS = np.random.RandomState(322)


def c(name, dtype, value):
    return {"name": name, "op": "Const",
            "attrs": {"dtype": dtype, "value": np.asarray(value).tolist()}}


def node(op, inputs, attrs=None, name="op"):
    return {"name": name, "op": op, "inputs": inputs, "attrs": attrs or {}}


def f(*shape, dt=np.float32):
    return RS.uniform(-2, 2, size=shape).astype(dt)


DTS = (("float32", np.float32), ("float64", np.float64))
ALL = DTS + (("int32", np.int32), ("int64", np.int64))
ORACLES = []
HELPER = ("dgrun-internal (its gradient rules insert it; TF has no such "
          "op): NumPy from the op's formula")


def add(name, op, dtype, why, nodes, want=None, check=None, feeds=None,
        also=(), gradients=()):
    ORACLES.append(dict(name=name, op=op, dtype=dtype, why=why, nodes=nodes,
                        want=want or {}, check=check or {},
                        feeds=feeds or {}, also=list(also),
                        gradients=list(gradients)))


def vals(dt, *shape):
    if np.dtype(dt).kind == "f":
        return f(*shape, dt=dt)
    return RS.randint(-9, 9, size=shape).astype(dt)


# ---- the compiler's shape helpers -------------------------------------------
for dn, dt in ALL:
    x = vals(dt, 2, 3, 4)
    add("SumTo_" + dn, "SumTo", dn, HELPER,
        [c("x", dn, x), c("like", dn, np.zeros((3, 1), dt)),
         node("SumTo", ["x", "like"])],
        {"op": x.sum(axis=(0, 2)).reshape(3, 1).astype(dt)})
    add("SumTo_0d_" + dn, "SumTo", dn, HELPER,
        [c("x", dn, x), c("like", dn, np.zeros((), dt)),
         node("SumTo", ["x", "like"])], {"op": np.asarray(x.sum(), dt)})
    r_ = vals(dt, 2)
    add("BroadcastLike_" + dn, "BroadcastLike", dn, HELPER,
        [c("x", dn, r_), c("like", dn, np.zeros((2, 3), dt)),
         node("BroadcastLike", ["x", "like"], {"axis": [1]})],
        {"op": np.repeat(r_[:, None], 3, axis=1)})
    add("ReshapeLike_" + dn, "ReshapeLike", dn, HELPER,
        [c("x", dn, x), c("like", dn, np.zeros((6, 4), dt)),
         node("ReshapeLike", ["x", "like"])], {"op": x.reshape(6, 4)})
    y = vals(dt, 3, 4)
    mx = y.max(axis=1)
    dy = vals(dt, 3)
    mg = np.where(y == mx[:, None], dy[:, None], 0).astype(dt)
    add("MaxGrad_" + dn, "MaxGrad", dn, HELPER,
        [c("x", dn, y), c("y", dn, mx), c("dy", dn, dy),
         node("MaxGrad", ["x", "y", "dy"], {"axis": [1]})], {"op": mg})
for dn, dt in DTS:
    x = f(3, 4, dt=dt)
    add("BroadcastLike_mean_keepdims_" + dn, "BroadcastLike", dn, HELPER,
        [c("x", dn, x[:1, :]), c("like", dn, np.zeros((3, 4), dt)),
         node("BroadcastLike", ["x", "like"],
              {"axis": [0], "keepdims": True, "mean": True})],
        {"op": np.repeat(x[:1, :] / 3, 3, axis=0)})
    e = np.exp(x - x.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
    dy = f(3, 4, dt=dt)
    add("SoftmaxGrad_" + dn, "SoftmaxGrad", dn, HELPER,
        [c("y", dn, sm), c("dy", dn, dy), node("SoftmaxGrad", ["y", "dy"])],
        {"op": (dy - (dy * sm).sum(axis=1, keepdims=True)) * sm})
    add("ReshapeLike_empty_" + dn, "ReshapeLike", dn, HELPER,
        [c("x", dn, np.zeros((0, 3), dt)),
         c("like", dn, np.zeros((3, 0), dt)),
         node("ReshapeLike", ["x", "like"])], {"op": np.zeros((3, 0), dt)})

# ---- dgrun's fused pooling gradient (fuse_pool.c, issue 23) ------------------
FUSED = ("dgrun-internal (the fusion pass makes it from TF's "
         "ReluGrad(MaxPoolGrad(r, y, dy), r); TF has no such op): NumPy, "
         "MaxPoolGrad's dy to each window's maximum, then kept where the "
         "pool's input is > 0")
for dn, dt in DTS:
    x = f(2, 4, 6, 3, dt=dt)  # distinct values: one maximum per window
    win = x.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 3, 5, 2, 4)
    y = win.reshape(2, 2, 3, 3, 4).max(axis=-1)
    dy = f(2, 2, 3, 3, dt=dt)
    dx = np.zeros_like(x)
    for b in range(2):
        for i in range(2):
            for j in range(3):
                for ch in range(3):
                    w = x[b, 2 * i:2 * i + 2, 2 * j:2 * j + 2, ch]
                    a, k = np.unravel_index(np.argmax(w), w.shape)
                    dx[b, 2 * i + a, 2 * j + k, ch] = dy[b, i, j, ch]
    add("_FusedMaxPoolGrad_" + dn, "_FusedMaxPoolGrad", dn, FUSED,
        [c("x", dn, x), c("y", dn, y), c("dy", dn, dy),
         node("_FusedMaxPoolGrad", ["x", "y", "dy"],
              {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
               "padding": "VALID"})],
        {"op": np.where(x > 0, dx, 0).astype(dt)})

# the tiled path (stride = window): ties (the first maximum in scan order
# takes dy, as TF's CPU kernel), rows and columns no window covers (dx 0),
# with and without the Relu mask, channels past one block of 64 lanes
TILED = ("the tiled gradient path (kernels_cpu_pool.c, windows that do not "
         "overlap): NumPy, dy to each window's first maximum")
for relu, op in ((0, "MaxPoolGrad"), (1, "_FusedMaxPoolGrad")):
    for C in (3, 70):
        x = RS.randint(-2, 3, size=(2, 5, 7, C)).astype(np.float32)  # ties
        y = np.zeros((2, 2, 3, C), np.float32)
        dy = f(2, 2, 3, C)
        dx = np.zeros_like(x)
        for b in range(2):
            for i in range(2):
                for j in range(3):
                    for ch in range(C):
                        w = x[b, 2 * i:2 * i + 2, 2 * j:2 * j + 2, ch]
                        a, k = np.unravel_index(np.argmax(w), w.shape)
                        y[b, i, j, ch] = w[a, k]
                        if not relu or w[a, k] > 0:
                            dx[b, 2 * i + a, 2 * j + k, ch] = dy[b, i, j, ch]
        add("%s_tiled_C%d" % (op, C), op, "float32", TILED,
            [c("x", "float32", x), c("y", "float32", y), c("dy", "float32", dy),
             node(op, ["x", "y", "dy"],
                  {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1],
                   "padding": "VALID"})],
            {"op": dx})

# ---- dgrun's batch norm -------------------------------------------------------
BN = ("dgrun's own batch norm (its Keras-style layer; TF's is "
      "FusedBatchNormV3, recorded in cases.json): NumPy, biased variance")
for dn, dt in DTS:
    x, sc, of = f(4, 2, 3, dt=dt), f(3, dt=dt) + 3, f(3, dt=dt)
    eps = 0.001
    m = x.mean(axis=(0, 1))
    v = x.var(axis=(0, 1))
    xh = (x - m) / np.sqrt(v + eps)
    add("BatchNorm_" + dn, "BatchNorm", dn, BN,
        [c("x", dn, x), c("s", dn, sc), c("o", dn, of),
         node("BatchNorm", ["x", "s", "o"], {"epsilon": eps})],
        {"op": xh * sc + of, "op:1": m, "op:2": v})
    dy = f(4, 2, 3, dt=dt)
    n = 8
    ds = (dy * xh).sum(axis=(0, 1))
    do = dy.sum(axis=(0, 1))
    dx = sc / np.sqrt(v + eps) / n * (n * dy - do - xh * ds)
    add("BatchNormGrad_" + dn, "BatchNormGrad", dn, BN,
        [c("dy", dn, dy), c("x", dn, x), c("s", dn, sc), c("m", dn, m),
         c("v", dn, v), node("BatchNormGrad", ["dy", "x", "s", "m", "v"],
                             {"epsilon": eps})],
        {"op": dx, "op:1": ds, "op:2": do})
    v0, val = f(3, dt=dt), f(3, dt=dt)
    add("AssignMovingAvg_" + dn, "AssignMovingAvg", dn, BN,
        [{"name": "var", "op": "Variable",
          "attrs": {"dtype": dn, "shape": [3], "init": v0.tolist()}},
         c("val", dn, val),
         node("AssignMovingAvg", ["var", "val"], {"decay": 0.9})],
        {"op": v0 - (v0 - val) * (1 - 0.9)}, also=["Variable"])

# ---- Einsum / BatchMatMulV2 operand layouts (kernels_cpu_einsum.c) ------------
def cs(name, dtype, value):
    """A Const with its shape given (an empty one's nested lists lose it)."""
    n = c(name, dtype, value)
    n["attrs"]["shape"] = list(np.shape(value))
    return n


EIN = ("the CPU kernel's batched-GEMM paths (issue 23: each operand used in "
       "place, transposed, packed, the output swapped or scattered); TF's "
       "Einsum and BatchMatMul are NumPy's einsum and matmul, so NumPy's "
       "values are TF's")
for eq, sa, sb, dn in (
        ("bij,jk->bik", (3, 4, 5), (5, 6), "float32"),    # batch folded into M
        ("bij,bkj->bik", (2, 3, 4), (2, 5, 4), "float32"),  # B transposed
        ("bji,bjk->bik", (2, 4, 3), (2, 4, 5), "float64"),  # A transposed
        ("bij,bjk->bki", (2, 3, 4), (2, 4, 5), "float32"),  # C^T = B^T A^T
        ("ikj,jl->lik", (3, 2, 4), (4, 5), "float32"),      # output scattered
        ("abc,bad->cd", (2, 3, 4), (3, 2, 5), "float64"),   # K packed
        ("abc,abd->cd", (2, 3, 4), (2, 3, 5), "float32"),   # K of two labels
        ("i,j->ij", (4,), (3,), "float32"),                 # outer product
        ("i,i->", (7,), (7,), "float32"),                   # dot
        ("bij,bjk->bik", (4, 1, 3), (4, 3, 5), "float32"),  # M = 1
        ("bij,bjk->bik", (8, 16, 32), (8, 32, 16), "float32"),  # on the pool
        ("BTNH,BSNH->BNTS", (2, 3, 2, 5), (2, 4, 2, 5), "float32"),
        ("BNTS,BSNH->BTNH", (2, 2, 3, 4), (2, 4, 2, 5), "float32"),
        ("ij,jk->ki", (3, 4), (4, 5), "float64"),
        ("bij,jk->bik", (2, 0, 3), (3, 4), "float32"),      # empty M
        ("ij,jk->ik", (2, 0), (0, 3), "float32")):          # empty sum
    dt = np.float32 if dn == "float32" else np.float64
    a, b = f(*sa, dt=dt), f(*sb, dt=dt)
    add("Einsum_gemm_%s_%s_%s" % (eq.replace(",", "_").replace("->", "_to_"),
                                  "x".join(map(str, sa)), dn),
        "Einsum", dn, EIN,
        [cs("a", dn, a), cs("b", dn, b),
         node("Einsum", ["a", "b"], {"equation": eq})],
        {"op": np.einsum(eq, a, b).astype(dt)})
for sa, sb, ax, ay in (((2, 1, 3, 4), (5, 4, 2), False, False),  # broadcast
                       ((2, 4, 3), (2, 5, 4), True, True),
                       ((3, 4), (2, 4, 5), False, False),
                       ((2, 3, 4), (4, 5), False, False)):
    a, b = f(*sa), f(*sb)
    want = np.matmul(np.swapaxes(a, -1, -2) if ax else a,
                     np.swapaxes(b, -1, -2) if ay else b)
    add("BatchMatMulV2_gemm_%s_%s%s" % ("x".join(map(str, sa)),
                                        "x".join(map(str, sb)),
                                        "_adj" if ax else ""),
        "BatchMatMulV2", "float32", EIN,
        [c("a", "float32", a), c("b", "float32", b),
         node("BatchMatMulV2", ["a", "b"], {"adj_x": ax, "adj_y": ay})],
        {"op": want.astype(np.float32)})

# ---- Transpose by the identity permutation: the input's buffer, no copy ------
for dn, dt in DTS:
    x = f(2, 3, 4, dt=dt)
    add("Transpose_identity_" + dn, "Transpose", dn,
        "an identity permutation shares the input's buffer (as TF forwards "
        "it); the value is the input's, and an op after it reads it intact",
        [c("x", dn, x), c("p", "int32", [0, 1, 2]),
         node("Transpose", ["x", "p"], name="t"),
         node("AddV2", ["t", "x"], name="op")],
        {"op": (x + x).astype(dt), "t": x}, also=["AddV2"])

# ---- Softmax on oneDNN (float32 of >= 2^14 elements, kernels_cpu_nn.c) -------
x = f(40, 512) * 4
num, den = np.zeros_like(x), np.ones_like(x)  # x + num / den: NaN, +-inf
num[3, 7], den[3, 7] = 0, 0        # a NaN: the row is NaN (TF)
num[5, :], den[5, :] = -1, 0       # all -inf: NaN (0 / 0)
num[6, 9], den[6, 9] = 1, 0        # +inf: NaN (inf - inf)
num[8, 1:], den[8, 1:] = -1, 0     # one finite entry: 1 there
with np.errstate(invalid="ignore", divide="ignore"):
    xs = x + num / den
    e = np.exp(xs - xs.max(axis=1, keepdims=True))
    sm = e / e.sum(axis=1, keepdims=True)
add("Softmax_onednn_float32", "Softmax", "float32",
    "the oneDNN path of large float32 Softmax (TF's values are NumPy's "
    "formula); NaN, -inf rows and +inf as TF",
    [c("x", "float32", x), c("num", "float32", num),
     c("den", "float32", den), node("Div", ["num", "den"], name="q"),
     node("AddV2", ["x", "q"], name="xs"), node("Softmax", ["xs"])],
    {"op": sm.astype(np.float32)}, also=["Div", "AddV2"])

# ---- _Gelu (the fusion pass's exact gelu, fuse_gelu.c) -------------------------
GELU = ("dgrun-internal (the fusion pass makes it from tf.nn.gelu's "
        "0.5 * x * erfc(-x / sqrt 2) or tf_keras' 0.5 * x * (1 + erf(x / "
        "sqrt 2)); TF has no such op): the formula, with math.erfc")
for dn, dt, shape in (("float32", np.float32, (3, 5)),
                      ("float32", np.float32, (64, 300)),  # oneDNN's gelu_erf
                      ("float64", np.float64, (4, 3))):
    import math
    x = (f(*shape, dt=dt) * 3).astype(dt)
    x.ravel()[:3] = (-12.0, 0.0, 9.0)
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2))
                     for v in x.ravel().astype(np.float64)]).reshape(shape)
    add("_Gelu_%s_%d" % (dn, x.size), "_Gelu", dn, GELU,
        [c("x", dn, x), node("_Gelu", ["x"])], {"op": want.astype(dt)})

# ---- _LayerNorm (the fusion pass's Keras LayerNormalization, fuse_norm.c) --
LN = ("dgrun-internal (the fusion pass makes it from Keras' "
      "LayerNormalization subgraph; TF has no such op): NumPy's "
      "(x - mean) / sqrt(var + eps) * gamma + beta over the last axis")
for dn, dt, shape, eps in (("float32", np.float32, (3, 5), 1e-3),
                           ("float32", np.float32, (4, 7, 128), 1e-6),
                           ("float64", np.float64, (2, 1, 6), 1e-3)):
    x = (f(*shape, dt=dt) * 3 + 1).astype(dt)
    gm, bt = f(shape[-1], dt=dt), f(shape[-1], dt=dt)
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
    want = (x64 - mu) / np.sqrt(var + eps) * gm + bt
    add("_LayerNorm_%s_%d" % (dn, x.size), "_LayerNorm", dn, LN,
        [c("x", dn, x), c("gamma", dn, gm), c("beta", dn, bt),
         node("_LayerNorm", ["x", "gamma", "beta"], {"epsilon": eps})],
        {"op": want.astype(dt)})

# ---- the replica collectives, one replica ------------------------------------
REP = ("dgrun's replication collectives (no TF-1 op): with one replica "
       "AllReduce and Broadcast give x, ReplicaIndex 0; e2e_replicate and "
       "e2e_mpi check several replicas")
for dn, dt in ALL:
    x = vals(dt, 2, 3)
    for red in ("sum", "mean", "max", "min"):
        if red == "mean" and dn.startswith("int"):
            continue
        add("AllReduce_%s_%s" % (red, dn), "AllReduce", dn, REP,
            [c("x", dn, x), node("AllReduce", ["x"], {"reduction": red})],
            {"op": x})
    add("Broadcast_" + dn, "Broadcast", dn, REP,
        [c("x", dn, x), node("Broadcast", ["x"])], {"op": x})
add("ReplicaIndex", "ReplicaIndex", "int32", REP,
    [{"name": "op", "op": "ReplicaIndex"}], {"op": np.asarray(0, np.int32)})

# ---- Placeholder (fed from a .npy) ---------------------------------------------
for dn, dt in ALL + (("bool", np.bool_),):
    x = vals(dt, 2, 3) if dt != np.bool_ else RS.rand(2, 3) > 0.5
    add("Placeholder_" + dn, "Placeholder", dn,
        "fed: the .pb cases run without feeds; the value must come back",
        [{"name": "op", "op": "Placeholder",
          "attrs": {"dtype": dn, "shape": [-1, 3]}}],
        {"op": x}, feeds={"op": x})

# ---- random ops: the distribution ---------------------------------------------
RND = ("TF's op, not TF's numbers (Philox streams differ): the range and "
       "moments within 6 standard errors; CPU and GPU equal")
N = 4000


def moments(mean, sd, lo=-np.inf, hi=np.inf):
    def chk(a):
        a = np.asarray(a, np.float64).ravel()
        if a.size != N or a.min() < lo or a.max() >= hi:
            return "size %d range [%g, %g], want %d in [%g, %g)" % (
                a.size, a.min(), a.max(), N, lo, hi)
        if abs(a.mean() - mean) > 6 * sd / np.sqrt(N):
            return "mean %g, want %g" % (a.mean(), mean)
        if abs(a.std() - sd) > 0.1 * sd:
            return "stddev %g, want %g" % (a.std(), sd)
        return None
    return chk


def freqs(p, k):
    def chk(a):
        a = np.asarray(a).ravel()
        if a.size != N or a.min() < 0 or a.max() >= k:
            return "%d samples in [%d, %d], want %d in [0, %d)" % (
                a.size, a.min(), a.max(), N, k)
        got = np.bincount(a.astype(np.int64), minlength=k) / N
        se = np.sqrt(p * (1 - p) / N)
        if np.any(np.abs(got - p) > 6 * se + 1e-12):
            return "frequencies %s, want %s" % (got, p)
        return None
    return chk


for dn, dt in DTS:
    add("RandomUniform_" + dn, "RandomUniform", dn, RND,
        [node("RandomUniform", [], {"dtype": dn, "shape": [N]})],
        check={"op": moments(0.5, np.sqrt(1 / 12.0), 0.0, 1.0)})
    add("RandomNormal_" + dn, "RandomNormal", dn, RND,
        [node("RandomNormal", [], {"dtype": dn, "shape": [40, N // 40],
                                   "mean": 2.0, "stddev": 3.0})],
        check={"op": moments(2.0, 3.0)})
    add("TruncatedNormal_" + dn, "TruncatedNormal", dn, RND,
        [node("TruncatedNormal", [], {"dtype": dn, "shape": [N],
                                      "mean": -1.0, "stddev": 0.5})],
        check={"op": moments(-1.0, 0.5 * 0.87962566, -2.0, 0.0 + 1e-9)})
    lg = np.log(np.array([[0.1, 0.2, 0.7]], dt))
    add("Multinomial_" + dn, "Multinomial", dn, RND,
        [c("l", dn, lg), c("n", "int32", N),
         node("Multinomial", ["l", "n"])],
        check={"op": freqs(np.array([0.1, 0.2, 0.7]), 3)})
for dn, dt in (("int32", np.int32), ("int64", np.int64)):
    add("RandomUniformInt_" + dn, "RandomUniformInt", dn, RND,
        [c("s", "int32", [N]), c("lo", dn, -2), c("hi", dn, 3),
         node("RandomUniformInt", ["s", "lo", "hi"])],
        check={"op": lambda a: freqs(np.full(5, 0.2), 5)(np.asarray(a) + 2)})

# ---- TopKV2 with int64 indices: its gradient --------------------------------
# TF 2.21's own _TopKGrad fails on index_type=int64 (it adds int32 row
# offsets to the int64 indices: "Input 'y' of 'AddV2' Op has type int32
# that does not match type int64"), so there is no TF gradient to record;
# dgrun's rule casts the offsets.  NumPy: dy scattered to the k positions.
for dn, dt in DTS:
    x = f(2, 3, 7, dt=dt)  # distinct values
    dy = f(2, 3, 3, dt=dt)
    idx = np.argsort(-x, axis=-1, kind="stable")[..., :3]
    dx = np.zeros_like(x)
    np.put_along_axis(dx, idx, dy, axis=-1)
    add("TopKV2_idx64_grad_" + dn, "TopKV2", dn,
        "TF has no gradient for index_type=int64 (its rule fails): NumPy",
        [c("x", dn, x), c("k", "int32", 3), c("dy", dn, dy),
         node("TopKV2", ["x", "k"], {"index_type": "int64"})],
        {"op:1": idx.astype(np.int64), "g/x": dx},
        gradients=[{"name": "g", "ys": ["op"], "xs": ["x"],
                    "grad_ys": ["dy"]}])
