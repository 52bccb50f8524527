/*
 * fold_value.c -- compile-time evaluation of small constant values (issue
 * 10, as TF's shape refiner and Grappler do for shape arithmetic), which
 * the constant-folding pass (passes/fold.c) turns into Consts, so most of
 * a TF-built graph's shape computations never run.  Known means: Shape /
 * Size / Rank of a tensor whose shape inference fully knows, or an integer
 * op of the small set below whose data inputs are all Consts.  Shape
 * inference uses the same evaluation (dgc_fold_value) for the value inputs
 * of DGC_OP_HOST_IN ops, so a DynamicStitch of Ranges and FloorMods of
 * Consts has a known length before the pass turns anything into a Const.
 * The compiler never includes the runtime (docs/decisions.md): this file
 * evaluates shape arithmetic itself,
 * in int64, on small tensors only (<= FOLD_MAX elements).  Float math
 * folds only where the result is the kernels' to the bit: Identity, and
 * Add / Sub / Mul of small float Consts, computed in the tensor's own
 * precision (one IEEE operation, as the CPU kernels do; issue 16: chains
 * of constant arithmetic, as Grappler folds them).
 */
#include "infer.h"

#include <string.h>

#define FOLD_MAX DGC_FOLD_MAX
/* how many producers up shape inference evaluates an input (dgc_fold_value) */
#define FOLD_DEPTH 8
#define FOLD_BUDGET 256

/* A known value: up to FOLD_MAX elements, C order (infer.h). */
typedef dgc_kval kval;

static int is_int(dg_dtype t)
{
    return t == DG_I32 || t == DG_I64;
}

static int is_float(dg_dtype t)
{
    return t == DG_F32 || t == DG_F64;
}

static int evaluate(const dgc_graph *g, const dgc_node *n, kval *o,
                    int depth);

/* Producer evaluations left to one dgc_fold_value call: a Const-derived
 * DAG of shape arithmetic with wide fan-in cannot blow up (each node
 * visited once per path otherwise). */
static _Thread_local int eval_budget;

/* The value of output r if it is a small int Const, or (depth > 0) the
 * output of a node evaluate() computes from such values, up to `depth`
 * producers up. */
static int known(const dgc_graph *g, dgc_ref r, kval *k, int depth)
{
    const dgc_node *p = &g->nodes[r.node];
    if (p->op != DGC_OPID_Const) {
        if (depth <= 0 || eval_budget-- <= 0 || r.index != 0 ||
            !p->outputs || p->n_outputs != 1 ||
            dgc_ops[p->op].n_out != 1 ||
            dgc_op_has(p->op, DGC_OP_STATEFUL | DGC_OP_SOURCE))
            return 0;
        return evaluate(g, p, k, depth - 1);
    }
    if (r.index != 0 || p->n_outputs < 1)
        return 0;
    const dgc_attr *a = dgc_node_attr(p, "value");
    const dg_tensor *t = a ? a->tensor : NULL;
    const dgc_ttype *ot = &p->outputs[0];
    if (!t || !(is_int(t->dtype) || is_float(t->dtype) ||
                t->dtype == DG_BOOL) || /* bool: Select's condition */
        t->dtype != ot->dtype)
        return 0;
    int64_t n = dg_shape_numel(&ot->shape), m = dg_shape_numel(&t->shape);
    if (n < 0 || n > FOLD_MAX || (m != n && m != 1))
        return 0;
    k->dtype = ot->dtype;
    k->shape = ot->shape;
    k->n = n;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = m == 1 ? 0 : i;
        switch (t->dtype) {
        case DG_I32: k->v[i] = ((const int32_t *)t->data)[j]; break;
        case DG_I64: k->v[i] = ((const int64_t *)t->data)[j]; break;
        case DG_BOOL: k->v[i] = ((const uint8_t *)t->data)[j] != 0; break;
        case DG_F32: k->f[i] = ((const float *)t->data)[j]; break;
        default: k->f[i] = ((const double *)t->data)[j]; break;
        }
    }
    return 1;
}

static int64_t floordiv(int64_t x, int64_t y)
{
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

/* Elementwise binary op with a scalar or same-shape operand. */
static int binary(int op, const kval *a, const kval *b, kval *o)
{
    if (a->n != o->n && a->n != 1)
        return 0;
    if (b->n != o->n && b->n != 1)
        return 0;
    for (int64_t i = 0; i < o->n; i++) {
        int64_t x = a->v[a->n == 1 ? 0 : i], y = b->v[b->n == 1 ? 0 : i];
        switch (op) {
        case DGC_OPID_Add: o->v[i] = x + y; break;
        case DGC_OPID_Sub: o->v[i] = x - y; break;
        case DGC_OPID_Mul: o->v[i] = x * y; break;
        case DGC_OPID_Maximum: o->v[i] = x > y ? x : y; break;
        case DGC_OPID_Minimum: o->v[i] = x < y ? x : y; break;
        case DGC_OPID_FloorDiv:
        case DGC_OPID_FloorMod:
            if (y == 0)
                return 0; /* the kernel reports it at run time */
            o->v[i] = op == DGC_OPID_FloorDiv ? floordiv(x, y)
                                              : x - floordiv(x, y) * y;
            break;
        default: return 0;
        }
    }
    return 1;
}

/* Float Identity / Add / Sub / Mul of known same-dtype inputs (scalar or
 * same-shape), one operation in the dtype's precision.  1 folded. */
static int evaluate_float(const dgc_graph *g, const dgc_node *n, kval *o,
                          int depth)
{
    int op = n->op;
    int arity = op == DGC_OPID_Identity ? 1
                : (op == DGC_OPID_Add || op == DGC_OPID_Sub ||
                   op == DGC_OPID_Mul) ? 2 : 0;
    if (!arity || n->n_inputs != arity)
        return 0;
    kval in[2];
    for (int i = 0; i < arity; i++)
        if (!known(g, n->inputs[i], &in[i], depth) || in[i].dtype != o->dtype ||
            (in[i].n != o->n && in[i].n != 1))
            return 0;
    for (int64_t i = 0; i < o->n; i++) {
        double x = in[0].f[in[0].n == 1 ? 0 : i];
        double y = arity > 1 ? in[1].f[in[1].n == 1 ? 0 : i] : 0;
        if (o->dtype == DG_F32) {
            float a = (float)x, b = (float)y;
            o->f[i] = op == DGC_OPID_Identity ? a
                      : op == DGC_OPID_Add   ? a + b
                      : op == DGC_OPID_Sub   ? a - b : a * b;
        } else {
            o->f[i] = op == DGC_OPID_Identity ? x
                      : op == DGC_OPID_Add   ? x + y
                      : op == DGC_OPID_Sub   ? x - y : x * y;
        }
    }
    return 1;
}

/* DynamicStitch(indices[N], data[N]) of int vectors / scalars:
 * out[indices[m][i]] = data[m][i], every slot written (as TF requires). */
static int stitch(const dgc_node *n, const kval *in, kval *o)
{
    int nn = n->n_inputs / 2;
    char set[FOLD_MAX] = {0};
    for (int m = 0; m < nn; m++) {
        const kval *ix = &in[m], *d = &in[nn + m];
        if (ix->n != d->n || d->shape.rank != ix->shape.rank)
            return 0; /* rows of more than one element: not folded */
        for (int64_t i = 0; i < ix->n; i++) {
            int64_t j = ix->v[i];
            if (j < 0 || j >= o->n)
                return 0;
            o->v[j] = d->v[i];
            set[j] = 1;
        }
    }
    for (int64_t j = 0; j < o->n; j++)
        if (!set[j])
            return 0;
    return 1;
}

/* Evaluate node n (outputs already inferred, type `ot`) into o, its
 * inputs known up to `depth` producers up; 1 folded. */
static int evaluate(const dgc_graph *g, const dgc_node *n, kval *o,
                    int depth)
{
    const dgc_ttype *ot = &n->outputs[0];
    if (!is_float(ot->dtype) && !is_int(ot->dtype))
        return 0;
    int64_t numel = dg_shape_numel(&ot->shape);
    if (numel < 0 || numel > FOLD_MAX)
        return 0;
    o->dtype = ot->dtype;
    o->shape = ot->shape;
    o->n = numel;
    if (is_float(ot->dtype))
        return evaluate_float(g, n, o, depth);
    int op = n->op;
    if (op == DGC_OPID_Shape || op == DGC_OPID_Size || op == DGC_OPID_Rank) {
        const dgc_node *p = &g->nodes[n->inputs[0].node];
        const dg_shape *s = &p->outputs[n->inputs[0].index].shape;
        int64_t cnt = dg_shape_numel(s);
        if (op != DGC_OPID_Rank && cnt < 0)
            return 0;
        if (op == DGC_OPID_Shape)
            for (int d = 0; d < s->rank; d++)
                o->v[d] = s->dims[d];
        else
            o->v[0] = op == DGC_OPID_Size ? cnt : s->rank;
        return 1;
    }
    kval in[8];
    if (n->n_inputs < 1 || n->n_inputs > 8)
        return 0;
    for (int i = 0; i < n->n_inputs; i++)
        if (!known(g, n->inputs[i], &in[i], depth))
            return 0;
    switch (op) {
    case DGC_OPID_Range: /* length already inferred from the same values */
        if (n->n_inputs != 3 || in[0].n != 1 || in[2].n != 1)
            return 0;
        for (int64_t i = 0; i < o->n; i++)
            o->v[i] = in[0].v[0] + i * in[2].v[0];
        return 1;
    case DGC_OPID_DynamicStitch:
        return n->n_inputs % 2 == 0 && stitch(n, in, o);
    case DGC_OPID_Select: case DGC_OPID_SelectV2: /* scalar or same-size */
        for (int i = 0; i < 3; i++)
            if (in[i].n != 1 && in[i].n != o->n)
                return 0;
        if (in[0].dtype != DG_BOOL || !is_int(in[1].dtype))
            return 0;
        for (int64_t i = 0; i < o->n; i++)
            o->v[i] = in[0].v[in[0].n == 1 ? 0 : i]
                          ? in[1].v[in[1].n == 1 ? 0 : i]
                          : in[2].v[in[2].n == 1 ? 0 : i];
        return 1;
    case DGC_OPID_BroadcastArgs:
        return in[0].n <= DG_MAX_RANK && in[1].n <= DG_MAX_RANK &&
               dgc_bcast_args(in[0].v, (int)in[0].n, in[1].v, (int)in[1].n,
                              o->v) == o->n;
    case DGC_OPID_Identity: case DGC_OPID_Reshape: case DGC_OPID_ExpandDims:
    case DGC_OPID_Squeeze: case DGC_OPID_Cast:
        if (!is_int(in[0].dtype) || in[0].n != o->n)
            return 0;
        memcpy(o->v, in[0].v, sizeof o->v[0] * (size_t)o->n);
        return 1;
    case DGC_OPID_Pack: case DGC_OPID_ConcatV2: {
        int ai = dgc_node_axis_input(n); /* a run-time axis: its value */
        int nv = ai >= 0 ? ai : n->n_inputs;
        int64_t ax = ai >= 0 ? (in[ai].n == 1 ? in[ai].v[0] : -9)
                             : dgc_attr_int(n, "axis", 0);
        if (in[0].shape.rank > 1 || (ax != 0 && !(ax == -1 && op ==
                                                   DGC_OPID_ConcatV2)))
            return 0;
        int64_t at = 0;
        for (int i = 0; i < nv; i++)
            for (int64_t j = 0; j < in[i].n && at < o->n; j++)
                o->v[at++] = in[i].v[j];
        return at == o->n;
    }
    case DGC_OPID_Fill:
        for (int64_t i = 0; i < o->n; i++)
            o->v[i] = in[1].v[0];
        return 1;
    case DGC_OPID_Prod: /* over every axis, or axis 0 of a vector */
        if (in[0].shape.rank > 1 || o->n != 1)
            return 0;
        o->v[0] = 1;
        for (int64_t i = 0; i < in[0].n; i++)
            o->v[0] *= in[0].v[i];
        return 1;
    case DGC_OPID_GatherV2:
        if (in[0].shape.rank != 1 || dgc_attr_int(n, "axis", 0) != 0 ||
            n->n_inputs != 2)
            return 0;
        for (int64_t i = 0; i < o->n; i++) {
            int64_t j = in[1].v[i];
            if (j < 0 || j >= in[0].n)
                return 0;
            o->v[i] = in[0].v[j];
        }
        return 1;
    case DGC_OPID_StridedSlice: case DGC_OPID_Slice: {
        if (in[0].shape.rank != 1)
            return 0;
        dgc_slice sp;
        char msg[128];
        int64_t ones[FOLD_MAX];
        for (int i = 0; i < FOLD_MAX; i++)
            ones[i] = 1;
        int rc = op == DGC_OPID_Slice
                     ? dgc_slice_simple(&in[0].shape, in[1].v, in[2].v, &sp,
                                        msg, sizeof msg)
                     : dgc_slice_spec(n, &in[0].shape, in[1].v, in[2].v,
                                      n->n_inputs > 3 ? in[3].v : ones,
                                      (int)in[1].n, &sp, msg, sizeof msg);
        if (rc || sp.len[0] != o->n)
            return 0;
        for (int64_t i = 0; i < o->n; i++)
            o->v[i] = in[0].v[sp.start[0] + i * sp.stride[0]];
        return 1;
    }
    default:
        if (n->n_inputs == 2 && is_int(in[0].dtype))
            return binary(op, &in[0], &in[1], o);
        return 0;
    }
}

int dgc_fold_eval(const dgc_graph *g, const dgc_node *n, dgc_kval *o)
{
    return evaluate(g, n, o, 0);
}

int dgc_fold_value(const dgc_graph *g, dgc_ref r, void *buf, int max)
{
    kval k;
    eval_budget = FOLD_BUDGET;
    if (!known(g, r, &k, FOLD_DEPTH) || k.n > max || !is_int(k.dtype))
        return 0;
    for (int64_t i = 0; i < k.n; i++) {
        if (k.dtype == DG_I32)
            ((int32_t *)buf)[i] = (int32_t)k.v[i];
        else
            ((int64_t *)buf)[i] = k.v[i];
    }
    return 1;
}
