/*
 * grad_rules.c -- the gradient rule of every differentiable op (TF's
 * registered gradients, expressed with dgrun's ops): given the gradients
 * flowing into a node's outputs, build the nodes computing the gradients
 * of its inputs.  Broadcasting binary ops reduce back with SumTo.
 */
#include "grad.h"
#include "grad_rule.h"
#include "dg_error.h"
#include "dg_alloc.h"

#include <string.h>

/* Copy the reduction attributes of the forward node onto node id. */
static int copy_reduce_attrs(dgc_gctx *c, int32_t fwd, int32_t id)
{
    const dgc_node *f = &c->g->nodes[fwd];
    dgc_node *n = &c->g->nodes[id];
    const dgc_attr *a = dgc_node_attr(f, "axis");
    if (a) {
        if (a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE) {
            if (dgc_node_set_ints(n, "axis", a->ints, a->n))
                return -1;
        } else if (dgc_node_set_int(n, "axis", a->i)) {
            return -1;
        }
    }
    if (dgc_node_attr(f, "keepdims") &&
        dgc_node_set_bool(n, "keepdims", dgc_attr_bool(f, "keepdims", 0)))
        return -1;
    return 0;
}

/* MatMul's transpose_a/b flags (arg: int[2]) for dgc_grad_mk_set. */
static int set_transposes(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)c, (void)fwd;
    const int *t = arg;
    return (t[0] && dgc_node_set_bool(n, "transpose_a", 1)) ||
           (t[1] && dgc_node_set_bool(n, "transpose_b", 1));
}

/* A MatMul node with transposes ta, tb. */
static dgc_ref mk_mm(dgc_gctx *c, int32_t fwd, dgc_ref a, dgc_ref b, int ta,
                     int tb)
{
    int t[2] = {ta, tb};
    return dgc_grad_mk_set(c, fwd, "MatMul", OP(MatMul),
                           (const dgc_ref[]){a, b}, 2, set_transposes, t);
}


/* MatMul: TF's _MatMulGrad for the four transpose combinations. */
static dg_status matmul_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx)
{
    const dgc_node *f = &c->g->nodes[fwd];
    dgc_ref a = f->inputs[0], b = f->inputs[1];
    int ta = dgc_attr_bool(f, "transpose_a", 0);
    int tb = dgc_attr_bool(f, "transpose_b", 0);
    /* (first, second, transpose_a, transpose_b) for da and db */
    dgc_ref p0[2], p1[2];
    int t0[2], t1[2];
    if (!ta && !tb) {
        p0[0] = dy; p0[1] = b; t0[0] = 0; t0[1] = 1;
        p1[0] = a; p1[1] = dy; t1[0] = 1; t1[1] = 0;
    } else if (!ta && tb) {
        p0[0] = dy; p0[1] = b; t0[0] = 0; t0[1] = 0;
        p1[0] = dy; p1[1] = a; t1[0] = 1; t1[1] = 0;
    } else if (ta && !tb) {
        p0[0] = b; p0[1] = dy; t0[0] = 0; t0[1] = 1;
        p1[0] = a; p1[1] = dy; t1[0] = 0; t1[1] = 0;
    } else {
        p0[0] = b; p0[1] = dy; t0[0] = 1; t0[1] = 1;
        p1[0] = dy; p1[1] = a; t1[0] = 1; t1[1] = 1;
    }
    if (NEED(0)) {
        dx[0] = mk_mm(c, fwd, p0[0], p0[1], t0[0], t0[1]);
        CHK(dx[0]);
    }
    if (NEED(1)) {
        dx[1] = mk_mm(c, fwd, p1[0], p1[1], t1[0], t1[1]);
        CHK(dx[1]);
    }
    return DG_OK;
}

/* issue 21: Transpose's perm and the reductions' axes computed at run time
 * (GraphDefs, which bring TF's own gradients) have no rule here. */
static dg_status runtime_axes(dgc_gctx *c, int32_t fwd)
{
    const dgc_node *f = &c->g->nodes[fwd];
    if (f->n_inputs != 2)
        return DG_OK;
    return dg_err(c->err, DG_E_GRAPH,
                  "node '%s': dgrun's gradient of %s needs its %s as an "
                  "attribute, not a run-time input", f->name,
                  dgc_op_name(f->op),
                  f->op == OP(Transpose) ? "perm" : "axes");
}

/* Sum/Mean: BroadcastLike(dy, x) with the reduction's axis/keepdims. */
static dg_status reduce_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx,
                             int mean)
{
    dgc_ref x = c->g->nodes[fwd].inputs[0];
    int32_t id = dgc_grad_node_raw(c, fwd, "BroadcastLike", OP(BroadcastLike),
                                   (const dgc_ref[]){dy, x}, 2);
    if (id < 0)
        return dgc_grad_fail(c);
    if (copy_reduce_attrs(c, fwd, id) ||
        (mean && dgc_node_set_bool(&c->g->nodes[id], "mean", 1)))
        return dg_err_nomem(c->err, "gradient attrs");
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return dgc_grad_fail(c);
    dx[0] = R(id, 0);
    return DG_OK;
}

static dg_status max_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx)
{
    dgc_ref x = c->g->nodes[fwd].inputs[0];
    int32_t id = dgc_grad_node_raw(c, fwd, "MaxGrad", OP(MaxGrad),
                                   (const dgc_ref[]){x, R(fwd, 0), dy}, 3);
    if (id < 0)
        return dgc_grad_fail(c);
    if (copy_reduce_attrs(c, fwd, id))
        return dg_err_nomem(c->err, "gradient attrs");
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return dgc_grad_fail(c);
    dx[0] = R(id, 0);
    return DG_OK;
}

static dg_status transpose_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                                dgc_ref *dx)
{
    const dgc_attr *a = dgc_node_attr(&c->g->nodes[fwd], "perm");
    int32_t id = dgc_grad_node_raw(c, fwd, "Transpose", OP(Transpose), &dy, 1);
    if (id < 0)
        return dgc_grad_fail(c);
    if (a && a->n > 0) {
        int64_t inv[DG_MAX_RANK];
        int n = a->n > DG_MAX_RANK ? DG_MAX_RANK : a->n;
        for (int i = 0; i < n; i++) {
            int64_t p = a->ints[i] < 0 ? a->ints[i] + n : a->ints[i];
            if (p >= 0 && p < n)
                inv[p] = i;
        }
        if (dgc_node_set_ints(&c->g->nodes[id], "perm", inv, n))
            return dg_err_nomem(c->err, "gradient attrs");
    } /* no perm: reversal, its own inverse */
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return dgc_grad_fail(c);
    dx[0] = R(id, 0);
    return DG_OK;
}

static dg_status cast_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx)
{
    dgc_ref x = c->g->nodes[fwd].inputs[0];
    dg_dtype tin = dgc_grad_type(c, x)->dtype;
    dg_dtype tout = dgc_grad_type(c, R(fwd, 0))->dtype;
    if ((tin != DG_F32 && tin != DG_F64) || (tout != DG_F32 && tout != DG_F64))
        return DG_OK; /* no gradient through integer casts */
    dx[0] = dgc_grad_cast(c, fwd, dy, tin);
    return dx[0].node < 0 ? dgc_grad_fail(c) : DG_OK;
}

/* Cross entropy: dlogits = BroadcastLike(dy, backprop, axis=1) * backprop. */
static dg_status xent_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx)
{
    dgc_ref bp = R(fwd, 1);
    if (!NEED(0) && !NEED(1))
        return DG_OK;
    int32_t id = dgc_grad_node_raw(c, fwd, "BroadcastLike", OP(BroadcastLike),
                                   (const dgc_ref[]){dy, bp}, 2);
    if (id < 0)
        return dgc_grad_fail(c);
    int64_t ax = 1;
    if (dgc_node_set_ints(&c->g->nodes[id], "axis", &ax, 1))
        return dg_err_nomem(c->err, "gradient attrs");
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return dgc_grad_fail(c);
    if (NEED(0)) {
        dx[0] = MK("Mul", Mul, R(id, 0), bp);
        CHK(dx[0]);
    }
    /* dense labels (TF): -dy[:, None] * log_softmax(logits) */
    dgc_ref lab = c->g->nodes[fwd].inputs[1];
    dg_dtype lt = dgc_grad_type(c, lab)->dtype;
    if (NEED(1) && c->g->nodes[fwd].op == OP(SoftmaxCrossEntropyWithLogits) &&
        (lt == DG_F32 || lt == DG_F64)) {
        dgc_ref sm = MK("Softmax", Softmax, c->g->nodes[fwd].inputs[0]); CHK(sm);
        dgc_ref ls = MK("Log", Log, sm); CHK(ls);
        dgc_ref m = MK("Mul", Mul, R(id, 0), ls); CHK(m);
        dx[1] = MK("Neg", Neg, m); CHK(dx[1]);
    }
    return DG_OK;
}

static dg_status batchnorm_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                                dgc_ref *dx)
{
    const dgc_node *f = &c->g->nodes[fwd];
    dgc_ref x = f->inputs[0], scale = f->inputs[1];
    int has_eps = dgc_node_attr(f, "epsilon") != NULL;
    double eps = dgc_attr_float(f, "epsilon", 0.001);
    int32_t id = dgc_grad_node_raw(
        c, fwd, "BatchNormGrad", OP(BatchNormGrad),
        (const dgc_ref[]){dy, x, scale, R(fwd, 1), R(fwd, 2)}, 5);
    if (id < 0)
        return dgc_grad_fail(c);
    if (has_eps && dgc_node_set_float(&c->g->nodes[id], "epsilon", eps))
        return dg_err_nomem(c->err, "gradient attrs");
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return dgc_grad_fail(c);
    dx[0] = R(id, 0);
    dx[1] = R(id, 1);
    dx[2] = R(id, 2);
    return DG_OK;
}

/* ---- control flow (issue 11) ---------------------------------------------
 * TF's _SwitchGrad / _MergeGrad without a cond context (a while loop's
 * Switches and Merges are differentiated whole by grad_loop.c; Enter, Exit
 * and NextIteration are NOT_DIFF).  Merge's
 * gradient reaches input i through Switch(dy, value_index == i):1, dead for
 * the inputs Merge did not take; Switch's is the Merge of its outputs'
 * gradients, zeros for an output without one (dead on the untaken branch,
 * so the live gradient wins). */
static dg_status switch_grad(dgc_gctx *c, int32_t fwd, const dgc_ref *dys,
                             dgc_ref *dx)
{
    dgc_ref g[2];
    for (int k = 0; k < 2; k++) {
        g[k] = dys[k];
        if (g[k].node < 0) {
            g[k] = MK("ZerosLike", ZerosLike, R(fwd, k));
            CHK(g[k]);
        }
    }
    if (NEED(0)) {
        dx[0] = MK("Merge", Merge, g[0], g[1]);
        CHK(dx[0]);
    }
    return DG_OK;
}

static dg_status merge_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx)
{
    const dgc_node *f = &c->g->nodes[fwd];
    for (int i = 0; i < f->n_inputs; i++) {
        if (!NEED(i))
            continue;
        dgc_ref k = {dgc_grad_const(c, fwd, "index", i, DG_I32), 0};
        CHK(k);
        dgc_ref eq = MK("Equal", Equal, R(fwd, 1), k); CHK(eq);
        dgc_ref sw = MK("Switch", Switch, dy, eq); CHK(sw);
        dx[i] = R(sw.node, 1);
    }
    return DG_OK;
}

/* ---- TF graph ops (issue 10) --------------------------------------------- */

/* The static shape of r, or 0 when some dim is unknown. */
static int static_shape(dgc_gctx *c, dgc_ref r, dg_shape *s)
{
    *s = dgc_grad_type(c, r)->shape;
    for (int d = 0; d < s->rank; d++)
        if (s->dims[d] < 0)
            return 0;
    return 1;
}

static dg_status no_static_grad(dgc_gctx *c, int32_t fwd)
{
    return dg_err(c->err, DG_E_GRAPH, "node '%s': the gradient of %s needs "
                  "shapes known when the graph is compiled",
                  c->g->nodes[fwd].name, dgc_op_name(c->g->nodes[fwd].op));
}

/* Up to two int attrs (key NULL: none) for dgc_grad_mk_set. */
typedef struct int_attrs {
    const char *k1;
    int64_t v1;
    const char *k2;
    int64_t v2;
} int_attrs;

static int set_int_attrs(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)c, (void)fwd;
    const int_attrs *a = arg;
    return (a->k1 && dgc_node_set_int(n, a->k1, a->v1)) ||
           (a->k2 && dgc_node_set_int(n, a->k2, a->v2));
}

dgc_ref dgc_grad_mk_attrs(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                        const dgc_ref *in, int n_in, const char *k1,
                        int64_t v1, const char *k2, int64_t v2)
{
    int_attrs a = {k1, v1, k2, v2};
    return dgc_grad_mk_set(c, fwd, suffix, op, in, n_in, set_int_attrs, &a);
}

DGC_GRAD(LogSoftmax)
{
    DGC_GRAD_LOCALS;
    /* dy - exp(z) * sum(dy, -1, keepdims) */
    int32_t id = dgc_grad_node_raw(c, fwd, "Sum", OP(Sum), &dy, 1);
    if (id < 0)
        return dgc_grad_fail(c);
    if (dgc_node_set_int(&c->g->nodes[id], "axis", -1) ||
        dgc_node_set_bool(&c->g->nodes[id], "keepdims", 1))
        return dg_err_nomem(c->err, "gradient attrs");
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return dgc_grad_fail(c);
    dgc_ref e = MK("Exp", Exp, z); CHK(e);
    dgc_ref m = MK("Mul", Mul, e, R(id, 0)); CHK(m);
    dx[0] = MK("Sub", Sub, dy, m); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Select)
{
    DGC_GRAD_LOCALS;
    dgc_ref zero = MK("ZerosLike", ZerosLike, dy); CHK(zero);
    dgc_ref cnd = f->inputs[0];
    dgc_ref a = op == OP(Select) ? MK("Select", Select, cnd, dy, zero)
                                 : MK("SelectV2", SelectV2, cnd, dy, zero);
    CHK(a);
    dgc_ref b = op == OP(Select) ? MK("Select", Select, cnd, zero, dy)
                                 : MK("SelectV2", SelectV2, cnd, zero, dy);
    CHK(b);
    if (NEED(1)) { dx[1] = dgc_grad_sum_to(c, fwd, a, f->inputs[1]); CHK(dx[1]); }
    if (NEED(2)) { dx[2] = dgc_grad_sum_to(c, fwd, b, f->inputs[2]); CHK(dx[2]); }
    return DG_OK;
}

DGC_GRAD_AS(SelectV2, Select);

DGC_GRAD(Pack)
{
    DGC_GRAD_LOCALS;
    dgc_ref u = dgc_grad_mk_attrs(c, fwd, "Unpack", OP(Unpack), &dy, 1, "num",
                         f->n_inputs, "axis",
                         dgc_attr_int(f, "axis", 0));
    CHK(u);
    for (int i = 0; i < f->n_inputs; i++)
        dx[i] = R(u.node, i);
    return DG_OK;
}

/* ConcatV2 with a run-time axis */
static dg_status concat_runtime_axis(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                                     dgc_ref *dx)
{
    DGC_GRAD_LOCALS;
    /* a run-time axis (issue 21): TF's _ConcatGradHelper, each dx the
     * Slice of dy at its ConcatOffset, of its run-time shape */
    int nv = dgc_node_axis_input(f);
    dgc_ref in[65];
    if (nv > 64)
        return no_static_grad(c, fwd);
    in[0] = f->inputs[nv];
    for (int i = 0; i < nv; i++) {
        in[i + 1] = MK("Shape", Shape, c->g->nodes[fwd].inputs[i]);
        CHK(in[i + 1]);
    }
    dgc_ref co = dgc_grad_mk(c, fwd, "ConcatOffset", OP(ConcatOffset), in, nv + 1);
    CHK(co);
    for (int i = 0; i < nv; i++) {
        dx[i] = MK("Slice", Slice, dy, R(co.node, i), in[i + 1]);
        CHK(dx[i]);
    }
    return DG_OK;
}

DGC_GRAD(ConcatV2)
{
    DGC_GRAD_LOCALS;
    if (dgc_node_axis_input(f) >= 0)
        return concat_runtime_axis(c, fwd, dy, dx);
    int64_t ax = dgc_attr_int(f, "axis", 0), sizes[64];
    if (f->n_inputs > 64)
        return no_static_grad(c, fwd);
    for (int i = 0; i < f->n_inputs; i++) {
        const dg_shape *s = &dgc_grad_type(c, f->inputs[i])->shape;
        int64_t a = ax < 0 ? ax + s->rank : ax;
        if (s->dims[a] < 0)
            return no_static_grad(c, fwd);
        sizes[i] = s->dims[a];
    }
    dgc_ref sz = dgc_grad_ints(c, fwd, "sizes", sizes, f->n_inputs); CHK(sz);
    dgc_ref sp = dgc_grad_mk_attrs(c, fwd, "SplitV", OP(SplitV),
                          (const dgc_ref[]){dy, sz}, 2, "num",
                          f->n_inputs, "axis", ax);
    CHK(sp);
    for (int i = 0; i < f->n_inputs; i++)
        dx[i] = R(sp.node, i);
    return DG_OK;
}

DGC_GRAD(Tile)
{
    DGC_GRAD_LOCALS;
    dg_shape xs;
    if (!static_shape(c, x, &xs) || !static_shape(c, z, &xs) ||
        !static_shape(c, x, &xs))
        return no_static_grad(c, fwd);
    const dg_shape *ys = &dgc_grad_type(c, z)->shape;
    int r = xs.rank;
    if (op == OP(Tile)) {
        /* reshape dy to [m0, d0, m1, d1, ...], sum the m axes */
        if (2 * r > DG_MAX_RANK)
            return no_static_grad(c, fwd);
        int64_t shp[DG_MAX_RANK], axes[DG_MAX_RANK];
        for (int d = 0; d < r; d++) {
            shp[2 * d] = xs.dims[d] ? ys->dims[d] / xs.dims[d] : 0;
            shp[2 * d + 1] = xs.dims[d];
            axes[d] = 2 * d;
        }
        dgc_ref sv = dgc_grad_ints(c, fwd, "shape", shp, 2 * r); CHK(sv);
        dgc_ref rs = MK("Reshape", Reshape, dy, sv); CHK(rs);
        int32_t id = dgc_grad_node_raw(c, fwd, "Sum", OP(Sum), &rs, 1);
        if (id < 0)
            return dgc_grad_fail(c);
        if (dgc_node_set_ints(&c->g->nodes[id], "axis", axes, r))
            return dg_err_nomem(c->err, "gradient attrs");
        if (dgc_infer_node(c->g, id, c->err) != DG_OK)
            return dgc_grad_fail(c);
        dx[0] = R(id, 0);
        return DG_OK;
    }
    /* Pad and Slice undo each other: begin = where x sits in y */
    const dgc_ttype *bt = dgc_grad_type(c, f->inputs[1]);
    if (!bt->value && c->g->nodes[f->inputs[1].node].op != OP(Const))
        return no_static_grad(c, fwd);
    const dgc_attr *va = dgc_node_attr(&c->g->nodes[f->inputs[1].node],
                                       "value");
    if (!va || !va->tensor)
        return no_static_grad(c, fwd);
    int64_t beg[DG_MAX_RANK], pads[2 * DG_MAX_RANK];
    for (int d = 0; d < r; d++) {
        const dg_tensor *t = va->tensor;
        int64_t idx = op == OP(Pad) ? 2 * d : d;
        beg[d] = t->dtype == DG_I32 ? ((int32_t *)t->data)[idx]
                                    : ((int64_t *)t->data)[idx];
    }
    if (op == OP(Pad)) {
        dgc_ref b = dgc_grad_ints(c, fwd, "begin", beg, r); CHK(b);
        dgc_ref s = dgc_grad_ints(c, fwd, "size", xs.dims, r); CHK(s);
        dx[0] = MK("Slice", Slice, dy, b, s); CHK(dx[0]);
        return DG_OK;
    }
    for (int d = 0; d < r; d++) {
        pads[2 * d] = beg[d];
        pads[2 * d + 1] = xs.dims[d] - beg[d] - ys->dims[d];
    }
    int32_t pid = dgc_grad_node_raw(c, fwd, "paddings", OP(Const), NULL,
                                    0);
    dg_shape ps;
    memset(&ps, 0, sizeof ps);
    ps.rank = 2;
    ps.dims[0] = r;
    ps.dims[1] = 2;
    dg_tensor *pt = pid >= 0 ? dg_tensor_new(DG_I32, &ps) : NULL;
    if (!pt)
        return pid < 0 ? dgc_grad_fail(c)
                       : dg_err_nomem(c->err, "gradient");
    for (int i = 0; i < 2 * r; i++)
        ((int32_t *)pt->data)[i] = (int32_t)pads[i];
    if (dgc_node_set_tensor(&c->g->nodes[pid], "value", pt)) {
        dg_tensor_free(pt);
        return dg_err_nomem(c->err, "gradient");
    }
    if (dgc_infer_node(c->g, pid, c->err) != DG_OK)
        return dgc_grad_fail(c);
    dx[0] = MK("Pad", Pad, dy, R(pid, 0)); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD_AS(Pad, Tile);
DGC_GRAD_AS(Slice, Tile);


/* ---- convolution, pooling, batch norm (issue 10) ----------------------- */

/* Copy every attr of the forward node (the window, padding, layout,
 * epsilon...) onto generated node id. */
static int copy_all_attrs(dgc_gctx *c, int32_t fwd, int32_t id)
{
    const dgc_node *f = &c->g->nodes[fwd];
    for (int i = 0; i < f->n_attrs; i++) {
        const dgc_attr *a = &f->attrs[i];
        if (a->key[0] == '_')
            continue;
        dgc_attr cp = *a;
        cp.s = NULL;
        cp.ints = NULL;
        cp.tensor = NULL;
        cp.init.value = NULL;
        if (a->kind == DGC_A_STR && !(cp.s = dg_strdup(a->s)))
            return -1;
        if ((a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE) && a->n > 0) {
            if (!(cp.ints = dg_malloc(sizeof *cp.ints * (size_t)a->n))) {
                dg_free(cp.s);
                return -1;
            }
            memcpy(cp.ints, a->ints, sizeof *cp.ints * (size_t)a->n);
        }
        if (a->kind == DGC_A_TENSOR || a->kind == DGC_A_INIT)
            continue;
        if (dgc_node_set_attr(&c->g->nodes[id], &cp)) {
            dg_free(cp.s);
            dg_free(cp.ints);
            return -1;
        }
    }
    return 0;
}

/* A generated CNN gradient op with the forward node's attrs; extra: a bool
 * attr to set (NULL none). */
typedef struct nn_attrs {
    const char *flag;
    int val;
} nn_attrs;

static int set_nn_attrs(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    const nn_attrs *a = arg;
    int32_t id = (int32_t)(n - c->g->nodes);
    return copy_all_attrs(c, fwd, id) ||
           (a->flag && dgc_node_set_bool(&c->g->nodes[id], a->flag, a->val));
}

static dgc_ref mk_nn(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                     const dgc_ref *in, int n_in, const char *flag, int val)
{
    nn_attrs a = {flag, val};
    return dgc_grad_mk_set(c, fwd, suffix, op, in, n_in, set_nn_attrs, &a);
}

/* TF's registered gradients of the CNN ops.  The shape inputs of the
 * backprop ops (input_sizes, filter_sizes, orig_input_shape) are given the
 * forward tensor itself ("shaped like", infer_nn.c), which keeps run-time
 * batch sizes exact without Shape ops. */
static dg_status cnn_grad(dgc_gctx *c, int32_t fwd, const dgc_ref *dys,
                          dgc_ref *dx)
{
    const dgc_node *f = &c->g->nodes[fwd];
    int op = f->op;
    dgc_ref dy = dys[0], x = f->inputs[0];
    dgc_ref w = f->n_inputs > 1 ? f->inputs[1] : x;
    if (op == OP(Conv2D) || op == OP(DepthwiseConv2dNative)) {
        int dw = op == OP(DepthwiseConv2dNative);
        if (NEED(0)) {
            dx[0] = mk_nn(c, fwd, dw ? "DepthwiseConv2dNativeBackpropInput"
                                     : "Conv2DBackpropInput",
                          dw ? OP(DepthwiseConv2dNativeBackpropInput)
                             : OP(Conv2DBackpropInput),
                          (const dgc_ref[]){x, w, dy}, 3, NULL, 0);
            CHK(dx[0]);
        }
        if (NEED(1)) {
            dx[1] = mk_nn(c, fwd, dw ? "DepthwiseConv2dNativeBackpropFilter"
                                     : "Conv2DBackpropFilter",
                          dw ? OP(DepthwiseConv2dNativeBackpropFilter)
                             : OP(Conv2DBackpropFilter),
                          (const dgc_ref[]){x, w, dy}, 3, NULL, 0);
            CHK(dx[1]);
        }
    } else if (op == OP(MaxPool)) {
        dx[0] = mk_nn(c, fwd, "MaxPoolGrad", OP(MaxPoolGrad),
                      (const dgc_ref[]){x, R(fwd, 0), dy}, 3, NULL, 0);
        CHK(dx[0]);
    } else if (op == OP(AvgPool)) {
        dx[0] = mk_nn(c, fwd, "AvgPoolGrad", OP(AvgPoolGrad),
                      (const dgc_ref[]){x, dy}, 2, NULL, 0);
        CHK(dx[0]);
    } else if (op == OP(AvgPool3D)) {
        dx[0] = mk_nn(c, fwd, "AvgPool3DGrad", OP(AvgPool3DGrad),
                      (const dgc_ref[]){x, dy}, 2, NULL, 0);
        CHK(dx[0]);
    } else { /* FusedBatchNormV3: TF's _FusedBatchNormV3Grad */
        int train = dgc_attr_bool(f, "is_training", 1);
        dgc_ref m = train ? R(fwd, 3) : f->inputs[3];
        dgc_ref v = train ? R(fwd, 4) : f->inputs[4];
        dgc_ref g = mk_nn(c, fwd, "FusedBatchNormGradV3",
                          OP(FusedBatchNormGradV3),
                          (const dgc_ref[]){dy, x, w, m, v, R(fwd, 5)}, 6,
                          "is_training", train);
        CHK(g);
        dx[0] = R(g.node, 0);
        dx[1] = R(g.node, 1);
        dx[2] = R(g.node, 2);
    }
    return DG_OK;
}

/* Nodes one rule may add at most: the rules keep pointers to the forward
 * node (`f`) while they add nodes, so the node array must not move during
 * a rule (ASan: ConcatV2's and Pack's rules read f->n_inputs after adding
 * nodes, from a freed array). */
#define DGC_GRAD_RULE_NODES 512

/* TF's _IdGrad */
DGC_GRAD(Identity)
{
    (void)c, (void)fwd;
    dx[0] = dy;
    return DG_OK;
}

DGC_GRAD_AS(Print, Identity);
DGC_GRAD_AS(PlaceholderWithDefault, Identity);

DGC_GRAD(PreventGradient)
{
    DGC_GRAD_LOCALS;
    (void)dy, (void)dx;
    /* as TF's _PreventGradientGrad (issue 21) */
    const dgc_attr *m = dgc_node_attr(f, "message");
    return dg_err(c->err, DG_E_GRAPH,
                  "node '%s': Gradient explicitly disabled. Reason: %s",
                  f->name, m && m->s ? m->s : "");
}

DGC_GRAD(Neg)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("Neg", Neg, dy); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Abs)
{
    DGC_GRAD_LOCALS;
    /* dy * sign(x) = ReluGrad(dy, x) - ReluGrad(dy, -x) */
    dgc_ref p = MK("ReluGrad", ReluGrad, dy, x); CHK(p);
    dgc_ref nx = MK("Neg", Neg, x); CHK(nx);
    dgc_ref q = MK("ReluGrad", ReluGrad, dy, nx); CHK(q);
    dx[0] = MK("Sub", Sub, p, q); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Sin)
{
    DGC_GRAD_LOCALS;
    dgc_ref cs = MK("Cos", Cos, x); CHK(cs);
    dx[0] = MK("Mul", Mul, dy, cs); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Cos)
{
    DGC_GRAD_LOCALS;
    dgc_ref sn = MK("Sin", Sin, x); CHK(sn);
    dgc_ref ns = MK("Neg", Neg, sn); CHK(ns);
    dx[0] = MK("Mul", Mul, dy, ns); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Exp)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("Mul", Mul, dy, z); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Log)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("Div", Div, dy, x); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Sqrt)
{
    DGC_GRAD_LOCALS;
    dgc_ref h = dgc_grad_cst(c, fwd, "half", 0.5, x); CHK(h);
    dgc_ref m = MK("Mul", Mul, dy, h); CHK(m);
    dx[0] = MK("Div", Div, m, z); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Square)
{
    DGC_GRAD_LOCALS;
    dgc_ref two = dgc_grad_cst(c, fwd, "two", 2.0, x); CHK(two);
    dgc_ref m = MK("Mul", Mul, x, two); CHK(m);
    dx[0] = MK("Mul", Mul, dy, m); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Tanh)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("TanhGrad", TanhGrad, z, dy); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Sigmoid)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("SigmoidGrad", SigmoidGrad, z, dy); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Relu)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("ReluGrad", ReluGrad, dy, x); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Softmax)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("SoftmaxGrad", SoftmaxGrad, z, dy); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Add)
{
    DGC_GRAD_LOCALS;
    if (NEED(0)) { dx[0] = dgc_grad_sum_to(c, fwd, dy, x); CHK(dx[0]); }
    if (NEED(1)) { dx[1] = dgc_grad_sum_to(c, fwd, dy, yv); CHK(dx[1]); }
    return DG_OK;
}

DGC_GRAD(Sub)
{
    DGC_GRAD_LOCALS;
    if (NEED(0)) { dx[0] = dgc_grad_sum_to(c, fwd, dy, x); CHK(dx[0]); }
    if (NEED(1)) {
        dgc_ref n = MK("Neg", Neg, dy); CHK(n);
        dx[1] = dgc_grad_sum_to(c, fwd, n, yv); CHK(dx[1]);
    }
    return DG_OK;
}

DGC_GRAD(Mul)
{
    DGC_GRAD_LOCALS;
    if (NEED(0)) {
        dgc_ref a = MK("Mul", Mul, dy, yv); CHK(a);
        dx[0] = dgc_grad_sum_to(c, fwd, a, x); CHK(dx[0]);
    }
    if (NEED(1)) {
        dgc_ref b = MK("Mul", Mul, dy, x); CHK(b);
        dx[1] = dgc_grad_sum_to(c, fwd, b, yv); CHK(dx[1]);
    }
    return DG_OK;
}

DGC_GRAD(Div)
{
    DGC_GRAD_LOCALS;
    if (NEED(0)) {
        dgc_ref a = MK("Div", Div, dy, yv); CHK(a);
        dx[0] = dgc_grad_sum_to(c, fwd, a, x); CHK(dx[0]);
    }
    if (!NEED(1))
        return DG_OK;
    dgc_ref q = MK("Div", Div, z, yv); CHK(q);
    dgc_ref m = MK("Mul", Mul, dy, q); CHK(m);
    dgc_ref n = MK("Neg", Neg, m); CHK(n);
    dx[1] = dgc_grad_sum_to(c, fwd, n, yv); CHK(dx[1]);
    return DG_OK;
}

DGC_GRAD(Pow)
{
    DGC_GRAD_LOCALS;
    /* dx = dy * y * x^(y-1); dy_ = dy * z * log(x) where x > 0 */
    if (NEED(0)) {
        dgc_ref one = dgc_grad_cst(c, fwd, "one", 1.0, x); CHK(one);
        dgc_ref ym1 = MK("Sub", Sub, yv, one); CHK(ym1);
        dgc_ref p = MK("Pow", Pow, x, ym1); CHK(p);
        dgc_ref yp = MK("Mul", Mul, yv, p); CHK(yp);
        dgc_ref a = MK("Mul", Mul, dy, yp); CHK(a);
        dx[0] = dgc_grad_sum_to(c, fwd, a, x); CHK(dx[0]);
    }
    if (!NEED(1))
        return DG_OK;
    dgc_ref tiny = dgc_grad_cst(c, fwd, "tiny", 1e-30, x); CHK(tiny);
    dgc_ref mx = MK("Maximum", Maximum, x, tiny); CHK(mx);
    dgc_ref lg = MK("Log", Log, mx); CHK(lg);
    dgc_ref lgm = MK("ReluGrad", ReluGrad, lg, x); CHK(lgm);
    dgc_ref zl = MK("Mul", Mul, z, lgm); CHK(zl);
    dgc_ref b = MK("Mul", Mul, dy, zl); CHK(b);
    dx[1] = dgc_grad_sum_to(c, fwd, b, yv); CHK(dx[1]);
    return DG_OK;
}

DGC_GRAD(Maximum)
{
    DGC_GRAD_LOCALS;
    /* Maximum: y wins where y > x; x gets the rest (ties to x).
     * Minimum: y wins where x > y. */
    int mx = op == OP(Maximum);
    dgc_ref d = mx ? MK("Sub", Sub, yv, x) : MK("Sub", Sub, x, yv);
    CHK(d);
    dgc_ref gy = MK("ReluGrad", ReluGrad, dy, d); CHK(gy);
    dgc_ref gx = MK("Sub", Sub, dy, gy); CHK(gx);
    dx[0] = dgc_grad_sum_to(c, fwd, gx, x); CHK(dx[0]);
    dx[1] = dgc_grad_sum_to(c, fwd, gy, yv); CHK(dx[1]);
    return DG_OK;
}

DGC_GRAD_AS(Minimum, Maximum);

DGC_GRAD(AddN)
{
    DGC_GRAD_LOCALS;
    for (int i = 0; i < f->n_inputs; i++)
        dx[i] = dy;
    return DG_OK;
}

DGC_GRAD(MatMul)
{
    return matmul_grad(c, fwd, dy, dx);
}

DGC_GRAD(BiasAdd)
{
    DGC_GRAD_LOCALS;
    dx[0] = dy;
    if (NEED(1)) { dx[1] = dgc_grad_sum_to(c, fwd, dy, yv); CHK(dx[1]); }
    return DG_OK;
}

DGC_GRAD(Sum)
{
    dg_status st = runtime_axes(c, fwd);
    return st != DG_OK ? st
                       : reduce_grad(c, fwd, dy, dx, FWD->op == OP(Mean));
}
DGC_GRAD_AS(Mean, Sum);

/* MaxGrad routes dy to the elements equal to y: the extremes */
DGC_GRAD(Max)
{
    dg_status st = runtime_axes(c, fwd);
    return st != DG_OK ? st : max_grad(c, fwd, dy, dx);
}
DGC_GRAD_AS(Min, Max);

DGC_GRAD(Reshape)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("ReshapeLike", ReshapeLike, dy, x); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Transpose)
{
    dg_status st = runtime_axes(c, fwd);
    return st != DG_OK ? st : transpose_grad(c, fwd, dy, dx);
}

DGC_GRAD(Cast)
{
    return cast_grad(c, fwd, dy, dx);
}

DGC_GRAD(SoftmaxCrossEntropyWithLogits)
{
    return xent_grad(c, fwd, dy, dx);
}
DGC_GRAD_AS(SparseSoftmaxCrossEntropyWithLogits, SoftmaxCrossEntropyWithLogits);

DGC_GRAD(BatchNorm)
{
    return batchnorm_grad(c, fwd, dy, dx);
}

/* grad_collective.c */
DGC_GRAD(AllReduce)
{
    return dgc_grad_collective(c, fwd, dy, dx);
}
DGC_GRAD_AS(Broadcast, AllReduce);

/* convolution, pooling, batch norm (issue 10): cnn_grad; only the first
 * output's gradient counts */
DGC_GRAD_N(Conv2D)
{
    return dys[0].node < 0 ? DG_OK : cnn_grad(c, fwd, dys, dx);
}

DGC_GRAD_AS(DepthwiseConv2dNative, Conv2D);

DGC_GRAD_AS(MaxPool, Conv2D);

DGC_GRAD_AS(AvgPool, Conv2D);

DGC_GRAD_AS(AvgPool3D, Conv2D);

DGC_GRAD_AS(FusedBatchNormV3, Conv2D);

DGC_GRAD(Merge) /* issue 11 */
{
    return merge_grad(c, fwd, dy, dx);
}

/* issue 11: either output's gradient counts */
DGC_GRAD_N(Switch)
{
    return switch_grad(c, fwd, dys, dx);
}

/* TF graph ops (issue 10) */
DGC_GRAD_AS(ExpandDims, Reshape);
DGC_GRAD_AS(Squeeze, Reshape);

DGC_GRAD(L2Loss)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("Mul", Mul, x, dy); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Rsqrt)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("RsqrtGrad", RsqrtGrad, z, dy); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Reciprocal)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("ReciprocalGrad", ReciprocalGrad, z, dy); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Relu6)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("Relu6Grad", Relu6Grad, dy, x); CHK(dx[0]);
    return DG_OK;
}

/* The gradient rule of node fwd's op, from the table the rules register
 * into (DGC_GRAD / DGC_GRAD_N; generated by tools/gen_registry.py). */
dg_status dgc_grad_rule(dgc_gctx *c, int32_t fwd, const dgc_ref *dys,
                        dgc_ref *dx)
{
    if (dgc_graph_reserve(c->g, DGC_GRAD_RULE_NODES, c->err))
        return dgc_grad_fail(c);
    const dgc_node *f = &c->g->nodes[fwd];
    const dgc_grad_entry *e = &dgc_grad_rules[f->op];
    if (e->all)
        return e->all(c, fwd, dys, dx);
    if (dys[0].node < 0)
        return DG_OK; /* only secondary outputs got gradients: ignored */
    if (!e->one)
        return dg_err(c->err, DG_E_GRAPH,
                      "node '%s': gradient requested through op '%s' which "
                      "has no gradient", f->name, dgc_op_name(f->op));
    return e->one(c, fwd, dys[0], dx);
}

int dgc_grad_has_rule(int op)
{
    return op >= 0 && op < DGC_N_OPS &&
           (dgc_grad_rules[op].one || dgc_grad_rules[op].all);
}
