/*
 * grad_zoo.c -- the gradient rules of the op-breadth ops (issue 22), as
 * TF registers them (math_grad.py, nn_grad.py, array_grad.py,
 * image_grad.py, data_flow_grad.py), built from dgrun's ops:
 * SquaredDifference, Erf, Erfc, LeakyRelu, Elu, Selu, Softplus, Softsign,
 * ReverseV2, IdentityN, Einsum, the two resizes, UnsortedSegmentSum,
 * DynamicStitch and DynamicPartition; Log1p, Expm1, Tan, Atan, Asin, Acos,
 * Sinh, Cosh, Atan2, Cumsum, DepthToSpace, SpaceToDepth, MirrorPad,
 * GatherNd, ScatterNd, TopKV2, LRN, MaxPool3D and its gradients,
 * AvgPool3DGrad; Conv3D and its two backprops.
 */
#include "grad.h"
#include "grad_rule.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Copy the forward node's bool/float/string/int attrs named in arg
 * (NULL-ended). */
static int copy_attrs(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    const char *const *keys = arg;
    for (int i = 0; keys[i]; i++) {
        const dgc_attr *a = dgc_node_attr(FWD, keys[i]);
        if (!a)
            continue;
        if (a->kind == DGC_A_BOOL ? dgc_node_set_bool(n, keys[i], (int)a->i)
            : a->kind == DGC_A_FLOAT ? dgc_node_set_float(n, keys[i], a->f)
            : a->kind == DGC_A_STR   ? dgc_node_set_str(n, keys[i], a->s)
            : a->kind == DGC_A_INTS  ? dgc_node_set_ints(n, keys[i], a->ints,
                                                         a->n)
                                     : dgc_node_set_int(n, keys[i], a->i))
            return -1;
    }
    return 0;
}

static int set_str(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)c;
    (void)fwd;
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = "equation";
    a.kind = DGC_A_STR;
    a.s = dg_strdup(arg);
    if (!a.s || dgc_node_set_attr(n, &a)) {
        dg_free(a.s);
        return -1;
    }
    return 0;
}

static int set_num_partitions(dgc_gctx *c, int32_t fwd, dgc_node *n,
                              void *arg)
{
    (void)arg;
    return dgc_node_set_int(n, "num_partitions",
                            dgc_attr_int(&c->g->nodes[fwd], "num_partitions",
                                         1));
}

/* Cumsum's gradient: the forward axis and exclusive, reverse flipped */
int dgc_grad_set_cumsum(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)arg;
    const dgc_attr *a = dgc_node_attr(FWD, "axis");
    int64_t ax = a && a->kind == DGC_A_INTS && a->n > 0 ? a->ints[0]
                 : dgc_attr_int(FWD, "axis", 0);
    return dgc_node_set_ints(n, "axis", &ax, 1) ||
           dgc_node_set_bool(n, "exclusive",
                             dgc_attr_bool(FWD, "exclusive", 0)) ||
           dgc_node_set_bool(n, "reverse", !dgc_attr_bool(FWD, "reverse", 0));
}

static dg_status no_grad(dgc_gctx *c, int32_t fwd, const char *why)
{
    return dg_err(c->err, DG_E_GRAPH, "node '%s': the gradient of %s %s",
                  c->g->nodes[fwd].name, dgc_op_name(c->g->nodes[fwd].op),
                  why);
}

/* ---- Einsum -------------------------------------------------------------- */

/* The term of input i (2: the output) of e as text ("..." for the
 * ellipsis dims). */
static void es_term(const dgc_einsum *e, int i, char *buf, size_t n)
{
    int r = i < 2 ? e->rank[i] : e->out_rank;
    const int *lab = i < 2 ? e->in[i] : e->out;
    size_t o = 0;
    int in_ell = 0;
    for (int d = 0; d < r && o + 4 < n; d++) {
        char ch = e->names[lab[d]];
        if (ch >= '0' && ch <= '9') {
            if (!in_ell) {
                memcpy(buf + o, "...", 3);
                o += 3;
            }
            in_ell = 1;
            continue;
        }
        in_ell = 0;
        buf[o++] = ch;
    }
    /* an input whose ellipsis stands for no dims keeps its "..." */
    buf[o] = '\0';
}

static dg_status einsum_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                             dgc_ref *dx)
{
    char eqb[40];
    const char *eqs = dgc_einsum_equation(FWD, eqb, sizeof eqb);
    const dg_shape *sh[2] = {
        &dgc_grad_type(c, FWD->inputs[0])->shape,
        FWD->n_inputs > 1 ? &dgc_grad_type(c, FWD->inputs[1])->shape : NULL};
    dgc_einsum e;
    char msg[200];
    if (dgc_einsum_parse(eqs, sh, FWD->n_inputs, &e, msg,
                         sizeof msg))
        return dg_err(c->err, DG_E_GRAPH, "node '%s': %s", FWD->name, msg);
    char t[3][64];
    for (int i = 0; i < FWD->n_inputs; i++)
        es_term(&e, i, t[i], sizeof t[i]);
    es_term(&e, 2, t[2], sizeof t[2]);
    if (eqs && strstr(eqs, "...") && !strstr(t[2], "..."))
        strcat(t[2], "...");
    for (int i = 0; i < FWD->n_inputs; i++) {
        if (!NEED(i))
            continue;
        /* labels of input i in the output or the other input (the
         * others were summed out of input i alone: broadcast back below) */
        char kept[64];
        size_t nk = 0;
        int missing = 0, in_ell = 0;
        for (int d = 0; d < e.rank[i]; d++) {
            int id = e.in[i][d], found = 0;
            for (int q = 0; q < e.out_rank; q++)
                found |= e.out[q] == id;
            if (FWD->n_inputs > 1)
                for (int q = 0; q < e.rank[1 - i]; q++)
                    found |= e.in[1 - i][q] == id;
            for (int q = 0; q < d; q++)
                if (e.in[i][q] == id)
                    return no_grad(c, fwd, "with a label repeated in one "
                                   "input is not supported");
            char ch = e.names[id];
            if (ch >= '0' && ch <= '9') {
                if (!in_ell && nk + 3 < sizeof kept) {
                    memcpy(kept + nk, "...", 3);
                    nk += 3;
                }
                in_ell = 1;
                continue;
            }
            in_ell = 0;
            if (!found)
                missing = 1;
            else if (nk + 1 < sizeof kept)
                kept[nk++] = ch;
        }
        kept[nk] = '\0';
        if (strstr(t[i], "...") && !strstr(kept, "..."))
            strcat(kept, "...");
        const char *ti = missing ? kept : t[i];
        char eq[512];
        dgc_ref g;
        if (FWD->n_inputs == 1) {
            snprintf(eq, sizeof eq, "%s->%s", t[2], ti);
            g = dgc_grad_mk_set(c, fwd, "Einsum", OP(Einsum), &dy, 1, set_str, eq);
        } else {
            snprintf(eq, sizeof eq, "%s,%s->%s", t[2], t[1 - i], ti);
            g = dgc_grad_mk_set(c, fwd, "Einsum", OP(Einsum),
                       (const dgc_ref[]){dy, FWD->inputs[1 - i]}, 2, set_str,
                       eq);
        }
        CHK(g);
        if (missing) { /* g broadcast over the summed labels: x ones */
            dgc_ref ones = MK("OnesLike", OnesLike, FWD->inputs[i]); CHK(ones);
            snprintf(eq, sizeof eq, "%s,%s->%s", kept, t[i], t[i]);
            g = dgc_grad_mk_set(c, fwd, "Einsum_bcast", OP(Einsum),
                       (const dgc_ref[]){g, ones}, 2, set_str, eq);
        }
        CHK(g);
        dx[i] = dgc_grad_sum_to(c, fwd, g, FWD->inputs[i]);
        CHK(dx[i]);
    }
    return DG_OK;
}

/* ---- DynamicPartition: TF's _DynamicPartitionGrads ----------------------- */

static dg_status dynpart_grad(dgc_gctx *c, int32_t fwd, const dgc_ref *dys,
                              dgc_ref *dx)
{
    if (!NEED(0))
        return DG_OK;
    const dg_shape *ps = &dgc_grad_type(c, FWD->inputs[1])->shape;
    int np = (int)dgc_attr_int(FWD, "num_partitions", 1);
    int64_t cnt = 1, dims[DG_MAX_RANK];
    for (int d = 0; d < ps->rank; d++) {
        if (ps->dims[d] < 0)
            return no_grad(c, fwd, "needs the partitions' shape known when "
                           "the graph is compiled");
        cnt *= ps->dims[d];
        dims[d] = ps->dims[d];
    }
    if (np > 32)
        return no_grad(c, fwd, "over more than 32 partitions is not "
                       "supported");
    int64_t zero = 0, one = 1;
    dgc_ref s0 = dgc_grad_ints(c, fwd, "start", &zero, 1); CHK(s0);
    dgc_ref s1 = dgc_grad_ints(c, fwd, "limit", &cnt, 1); CHK(s1);
    dgc_ref s2 = dgc_grad_ints(c, fwd, "delta", &one, 1); CHK(s2);
    /* scalars for Range: reshape the 1-vectors */
    dgc_ref sc = dgc_grad_ints(c, fwd, "scalar", NULL, 0); CHK(sc);
    dgc_ref a0 = MK("start_s", Reshape, s0, sc); CHK(a0);
    dgc_ref a1 = MK("limit_s", Reshape, s1, sc); CHK(a1);
    dgc_ref a2 = MK("delta_s", Reshape, s2, sc); CHK(a2);
    dgc_ref rg = MK("Range", Range, a0, a1, a2); CHK(rg);
    dgc_ref shp = dgc_grad_ints(c, fwd, "shape", dims, ps->rank); CHK(shp);
    dgc_ref ix = MK("Reshape", Reshape, rg, shp); CHK(ix);
    dgc_ref part = dgc_grad_mk_set(c, fwd, "DynamicPartition", OP(DynamicPartition),
                          (const dgc_ref[]){ix, FWD->inputs[1]}, 2,
                          set_num_partitions, NULL);
    CHK(part);
    dgc_ref in[64];
    for (int i = 0; i < np; i++) {
        in[i] = R(part.node, i);
        in[np + i] = dys[i];
        if (in[np + i].node < 0) {
            in[np + i] = MK("ZerosLike", ZerosLike, R(fwd, i));
            CHK(in[np + i]);
        }
    }
    dgc_ref st = dgc_grad_mk(c, fwd, "DynamicStitch", OP(DynamicStitch), in,
                             2 * np);
    CHK(st);
    dx[0] = MK("ReshapeLike", ReshapeLike, st, FWD->inputs[0]);
    CHK(dx[0]);
    return DG_OK;
}

/* ---- the elementwise math of step 3: TF's math_grad.py ------------------- */

/* dx = dy * f'(x), f' built as TF builds it */
static dg_status unary_math_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                                 dgc_ref *dx)
{
    int op = FWD->op;
    dgc_ref x = FWD->inputs[0], d;
    if (op == OP(Expm1) || op == OP(Sinh) || op == OP(Cosh)) {
        d = op == OP(Expm1) ? MK("Exp", Exp, x)
            : op == OP(Sinh) ? MK("Cosh", Cosh, x) : MK("Sinh", Sinh, x);
    } else if (op == OP(Tan)) { /* sec(x)^2 */
        dgc_ref cs = MK("Cos", Cos, x); CHK(cs);
        dgc_ref rc = MK("Reciprocal", Reciprocal, cs); CHK(rc);
        d = MK("Square", Square, rc);
    } else {
        dgc_ref one = dgc_grad_cst(c, fwd, "one", 1.0, x); CHK(one);
        dgc_ref den;
        if (op == OP(Log1p)) { /* 1 / (1 + x) */
            den = MK("Add", Add, one, x);
        } else {
            dgc_ref sq = MK("Square", Square, x); CHK(sq);
            if (op == OP(Atan)) { /* 1 / (1 + x^2) */
                den = MK("Add", Add, one, sq);
            } else { /* Asin, Acos: (-)1 / sqrt(1 - x^2) */
                dgc_ref df = MK("Sub", Sub, one, sq); CHK(df);
                den = MK("Sqrt", Sqrt, df);
            }
        }
        CHK(den);
        d = MK("Reciprocal", Reciprocal, den);
    }
    CHK(d);
    dx[0] = MK("Mul", Mul, dy, d); CHK(dx[0]);
    if (op == OP(Acos)) {
        dx[0] = MK("Neg", Neg, dx[0]); CHK(dx[0]);
    }
    return DG_OK;
}

/* ---- TopKV2: TF's _TopKGrad --------------------------------------------- */

/* dy scattered to the entries it came from: indices offset by their row's
 * start in the flattened input, ScatterNd into zeros, reshaped back */
static dg_status topk_grad(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx)
{
    if (!NEED(0) || dy.node < 0)
        return DG_OK;
    const dg_shape *s = &dgc_grad_type(c, FWD->inputs[0])->shape;
    const dg_shape *os = &dgc_grad_type(c, R(fwd, 0))->shape;
    int64_t total = dg_shape_numel(s), len = s->dims[s->rank - 1];
    int64_t kk = os->dims[os->rank - 1];
    if (total < 0 || kk < 0 || len <= 0 || total / len > 1 << 20)
        return no_grad(c, fwd, "needs the input's shape and k known when "
                       "the graph is compiled");
    int64_t rows = total / len;
    int64_t *offs = dg_malloc((size_t)rows * sizeof *offs);
    if (!offs)
        return dg_err_nomem(c->err, "gradient");
    for (int64_t r = 0; r < rows; r++)
        offs[r] = r * len;
    dgc_ref ov = dgc_grad_ints(c, fwd, "row_starts", offs, (int)rows);
    dg_free(offs);
    CHK(ov);
    int64_t col[2] = {rows, 1}, flat2[2] = {rows * kk, 1}, flat = rows * kk;
    int64_t rk[2] = {rows, kk};
    dgc_ref cs = dgc_grad_ints(c, fwd, "col_shape", col, 2); CHK(cs);
    dgc_ref oc = MK("row_starts_col", Reshape, ov, cs); CHK(oc);
    if (dgc_grad_type(c, R(fwd, 1))->dtype == DG_I64) { /* index_type */
        oc = dgc_grad_cast(c, fwd, oc, DG_I64);
        CHK(oc);
    }
    dgc_ref rks = dgc_grad_ints(c, fwd, "rows_k", rk, 2); CHK(rks);
    dgc_ref i2 = MK("indices_2d", Reshape, R(fwd, 1), rks); CHK(i2);
    dgc_ref ia = MK("Add", Add, i2, oc); CHK(ia);
    dgc_ref f2 = dgc_grad_ints(c, fwd, "flat_shape", flat2, 2); CHK(f2);
    dgc_ref ind = MK("flat_indices", Reshape, ia, f2); CHK(ind);
    dgc_ref f1 = dgc_grad_ints(c, fwd, "grad_shape", &flat, 1); CHK(f1);
    dgc_ref g = MK("flat_grad", Reshape, dy, f1); CHK(g);
    dgc_ref ts = dgc_grad_ints(c, fwd, "input_size", &total, 1); CHK(ts);
    dgc_ref sc = MK("ScatterNd", ScatterNd, ind, g, ts); CHK(sc);
    dx[0] = MK("ReshapeLike", ReshapeLike, sc, FWD->inputs[0]);
    CHK(dx[0]);
    return DG_OK;
}

/* ---- the rules ----------------------------------------------------------- */

static const char *const k_alpha[] = {"alpha", NULL};
static const char *const k_resize[] = {"align_corners", "half_pixel_centers",
                                       NULL};

DGC_GRAD_N(IdentityN)
{
    for (int i = 0; i < FWD->n_inputs; i++)
        dx[i] = dys[i];
    return DG_OK;
}

DGC_GRAD_N(DynamicPartition)
{
    return dynpart_grad(c, fwd, dys, dx);
}

DGC_GRAD_N(TopKV2)
{
    return topk_grad(c, fwd, dys[0], dx);
}

/* the elementwise math of step 3 */
DGC_GRAD(Log1p)
{
    return unary_math_grad(c, fwd, dy, dx);
}

DGC_GRAD_AS(Expm1, Log1p);

DGC_GRAD_AS(Tan, Log1p);

DGC_GRAD_AS(Atan, Log1p);

DGC_GRAD_AS(Asin, Log1p);

DGC_GRAD_AS(Acos, Log1p);

DGC_GRAD_AS(Sinh, Log1p);

DGC_GRAD_AS(Cosh, Log1p);

DGC_GRAD(DepthToSpace)
{
    DGC_GRAD_LOCALS;
    /* each other's gradient, with the same block_size */
    static const char *const k_block[] = {"block_size", NULL};
    dx[0] = dgc_grad_mk_set(c, fwd, op == OP(DepthToSpace) ? "SpaceToDepth"
                                                  : "DepthToSpace",
                   op == OP(DepthToSpace) ? OP(SpaceToDepth)
                                          : OP(DepthToSpace),
                   &dy, 1, copy_attrs, (void *)k_block);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD_AS(SpaceToDepth, DepthToSpace);

/* dx[i], when needed: op (Conv3D of (a, b), or a backprop of (a, b, d))
 * with the forward node's convolution attrs. */
static dg_status conv3d_mk(dgc_gctx *c, int32_t fwd, int i, int op,
                           dgc_ref a, dgc_ref b, dgc_ref d, dgc_ref *dx)
{
    static const char *const k_conv[] = {"strides", "padding", "dilations",
                                         "data_format", NULL};
    if (!NEED(i))
        return DG_OK;
    dx[i] = dgc_grad_mk_set(c, fwd, dgc_op_name(op), op,
                            (const dgc_ref[]){a, b, d},
                            op == OP(Conv3D) ? 2 : 3, copy_attrs,
                            (void *)k_conv);
    CHK(dx[i]);
    return DG_OK;
}

/* TF's _Conv3DGrad, _Conv3DBackpropInputGrad and _Conv3DBackpropFilterGrad
 * (nn_grad.py); the shape inputs are the tensors themselves ("shaped
 * like", infer_zoo2.c). */
DGC_GRAD(Conv3D)
{
    int op = FWD->op, bi = OP(Conv3DBackpropInputV2),
        bf = OP(Conv3DBackpropFilterV2);
    dgc_ref a = FWD->inputs[0], b = FWD->inputs[1];
    dgc_ref g = FWD->n_inputs > 2 ? FWD->inputs[2] : dy;
    dg_status st;
    if (op == OP(Conv3D)) /* (x, w) */
        return (st = conv3d_mk(c, fwd, 0, bi, a, b, dy, dx))
                   ? st : conv3d_mk(c, fwd, 1, bf, a, b, dy, dx);
    if (op == bi) /* (sizes, w, g): dy is shaped like the input */
        return (st = conv3d_mk(c, fwd, 1, bf, dy, b, g, dx))
                   ? st : conv3d_mk(c, fwd, 2, OP(Conv3D), dy, b, g, dx);
    /* Conv3DBackpropFilterV2 (x, sizes, g): dy is shaped like the filter */
    return (st = conv3d_mk(c, fwd, 0, bi, a, dy, g, dx))
               ? st : conv3d_mk(c, fwd, 2, OP(Conv3D), a, dy, g, dx);
}

DGC_GRAD_AS(Conv3DBackpropInputV2, Conv3D);

DGC_GRAD_AS(Conv3DBackpropFilterV2, Conv3D);

DGC_GRAD(MirrorPad)
{
    DGC_GRAD_LOCALS;
    /* TF: MirrorPadGrad(dy, paddings, mode) */
    static const char *const k_mode[] = {"mode", NULL};
    dx[0] = dgc_grad_mk_set(c, fwd, "MirrorPadGrad", OP(MirrorPadGrad),
                   (const dgc_ref[]){dy, FWD->inputs[1]}, 2, copy_attrs,
                   (void *)k_mode);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(GatherNd)
{
    DGC_GRAD_LOCALS;
    /* TF: ScatterNd(indices, dy, shape(params)) */
    if (!NEED(0))
        return DG_OK;
    const dg_shape *ps = &dgc_grad_type(c, x)->shape;
    for (int d = 0; d < ps->rank; d++)
        if (ps->dims[d] < 0)
            return no_grad(c, fwd, "needs params' shape known when the "
                           "graph is compiled");
    dgc_ref shp = dgc_grad_ints(c, fwd, "shape", ps->dims, ps->rank);
    CHK(shp);
    dx[0] = MK("ScatterNd", ScatterNd, FWD->inputs[1], dy, shp);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(ScatterNd)
{
    DGC_GRAD_LOCALS;
    /* TF: updates get GatherNd(dy, indices) */
    if (NEED(1)) {
        dx[1] = MK("GatherNd", GatherNd, dy, FWD->inputs[0]);
        CHK(dx[1]);
    }
    return DG_OK;
}

DGC_GRAD(Cumsum)
{
    DGC_GRAD_LOCALS;
    /* TF: cumsum(dy, exclusive, !reverse) */
    dx[0] = dgc_grad_mk_set(c, fwd, "Cumsum", OP(Cumsum), &dy, 1, dgc_grad_set_cumsum,
                   NULL);
    CHK(dx[0]);
    return DG_OK;
}

/* TF's _CumprodGrad: div_no_nan(cumsum(z * dy, exclusive, !reverse), x),
 * z the forward output (TF recomputes it) */
DGC_GRAD(Cumprod)
{
    DGC_GRAD_LOCALS;
    dgc_ref zdy = MK("CumprodMul", Mul, z, dy);
    CHK(zdy);
    dgc_ref out = dgc_grad_mk_set(c, fwd, "CumprodSum", OP(Cumsum), &zdy, 1,
                                  dgc_grad_set_cumsum, NULL);
    CHK(out);
    dx[0] = MK("CumprodDiv", DivNoNan, out, x);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Atan2)
{
    DGC_GRAD_LOCALS;
    /* TF: g = dy / (x^2 + y^2); x * g, -y * g */
    dgc_ref y = FWD->inputs[0], xx = FWD->inputs[1];
    dgc_ref sx = MK("Square", Square, xx); CHK(sx);
    dgc_ref sy = MK("Square", Square, y); CHK(sy);
    dgc_ref den = MK("Add", Add, sx, sy); CHK(den);
    dgc_ref g = MK("Div", Div, dy, den); CHK(g);
    if (NEED(0)) {
        dgc_ref a = MK("Mul", Mul, xx, g); CHK(a);
        dx[0] = dgc_grad_sum_to(c, fwd, a, y); CHK(dx[0]);
    }
    if (NEED(1)) {
        dgc_ref ny = MK("Neg", Neg, y); CHK(ny);
        dgc_ref b = MK("Mul", Mul, ny, g); CHK(b);
        dx[1] = dgc_grad_sum_to(c, fwd, b, xx); CHK(dx[1]);
    }
    return DG_OK;
}

DGC_GRAD(SquaredDifference)
{
    DGC_GRAD_LOCALS;
    dgc_ref y = FWD->inputs[1];
    dgc_ref d = MK("Sub", Sub, x, y); CHK(d);
    dgc_ref two = dgc_grad_cst(c, fwd, "two", 2.0, x); CHK(two);
    dgc_ref m = MK("Mul", Mul, d, two); CHK(m);
    dgc_ref g = MK("Mul", Mul, dy, m); CHK(g);
    if (NEED(0)) { dx[0] = dgc_grad_sum_to(c, fwd, g, x); CHK(dx[0]); }
    if (NEED(1)) {
        dgc_ref ng = MK("Neg", Neg, g); CHK(ng);
        dx[1] = dgc_grad_sum_to(c, fwd, ng, y); CHK(dx[1]);
    }
    return DG_OK;
}

DGC_GRAD(Erf)
{
    DGC_GRAD_LOCALS;
    /* d erf(x) = 2/sqrt(pi) * exp(-x^2) */
    dgc_ref k2 = dgc_grad_cst(c, fwd, "two_over_sqrt_pi",
                     op == OP(Erf) ? 2.0 / sqrt(M_PI) : -2.0 / sqrt(M_PI),
                     x);
    CHK(k2);
    dgc_ref sq = MK("Square", Square, x); CHK(sq);
    dgc_ref ns = MK("Neg", Neg, sq); CHK(ns);
    dgc_ref ex = MK("Exp", Exp, ns); CHK(ex);
    dgc_ref m = MK("Mul", Mul, ex, k2); CHK(m);
    dx[0] = MK("Mul", Mul, dy, m); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD_AS(Erfc, Erf);

DGC_GRAD(LeakyRelu)
{
    DGC_GRAD_LOCALS;
    dx[0] = dgc_grad_mk_set(c, fwd, "LeakyReluGrad", OP(LeakyReluGrad),
                   (const dgc_ref[]){dy, x}, 2, copy_attrs,
                   (void *)k_alpha);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(LRN)
{
    DGC_GRAD_LOCALS;
    static const char *const k_lrn[] = {"depth_radius", "bias", "alpha",
                                        "beta", NULL};
    dx[0] = dgc_grad_mk_set(c, fwd, "LRNGrad", OP(LRNGrad),
                   (const dgc_ref[]){dy, x, z}, 3, copy_attrs,
                   (void *)k_lrn);
    CHK(dx[0]);
    return DG_OK;
}

/* TF's _MaxPool3DGrad (nn_grad.py): MaxPool3DGrad (orig_input,
 * orig_output, grad) with the pool's attrs. */
static const char *const k_pool3d[] = {"ksize", "strides", "padding",
                                       "data_format", NULL};

DGC_GRAD(MaxPool3D)
{
    DGC_GRAD_LOCALS;
    dx[0] = dgc_grad_mk_set(c, fwd, "MaxPool3DGrad", OP(MaxPool3DGrad),
                   (const dgc_ref[]){x, z, dy}, 3, copy_attrs,
                   (void *)k_pool3d);
    CHK(dx[0]);
    return DG_OK;
}

/* TF's _MaxPool3DGradGrad and _MaxPool3DGradGradGrad (nn_grad.py): zeros
 * for orig_input and orig_output, MaxPool3DGradGrad (of MaxPool3DGrad) or
 * MaxPool3DGrad (of MaxPool3DGradGrad) of (orig_input, orig_output, dy)
 * for the gradient input. */
DGC_GRAD(MaxPool3DGrad)
{
    DGC_GRAD_LOCALS;
    for (int i = 0; i < 2; i++)
        if (NEED(i)) {
            dx[i] = MK("ZerosLike", ZerosLike, FWD->inputs[i]);
            CHK(dx[i]);
        }
    if (!NEED(2))
        return DG_OK;
    int back = op == OP(MaxPool3DGrad) ? OP(MaxPool3DGradGrad)
                                       : OP(MaxPool3DGrad);
    dx[2] = dgc_grad_mk_set(c, fwd, dgc_op_name(back), back,
                   (const dgc_ref[]){FWD->inputs[0], FWD->inputs[1], dy}, 3,
                   copy_attrs, (void *)k_pool3d);
    CHK(dx[2]);
    return DG_OK;
}

DGC_GRAD_AS(MaxPool3DGradGrad, MaxPool3DGrad);

/* TF's _AvgPool3DGradGrad (nn_grad.py): AvgPool3D of the gradient with
 * the op's attrs; none for orig_input_shape (a stop_gradient in TF). */
DGC_GRAD(AvgPool3DGrad)
{
    if (!NEED(1))
        return DG_OK;
    dx[1] = dgc_grad_mk_set(c, fwd, "AvgPool3D", OP(AvgPool3D), &dy, 1,
                            copy_attrs, (void *)k_pool3d);
    CHK(dx[1]);
    return DG_OK;
}

DGC_GRAD(Elu)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("EluGrad", EluGrad, dy, z); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Selu)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("SeluGrad", SeluGrad, dy, z); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Softplus)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("SoftplusGrad", SoftplusGrad, dy, x); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Softsign)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("SoftsignGrad", SoftsignGrad, dy, x); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(ReverseV2)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("ReverseV2", ReverseV2, dy, FWD->inputs[1]); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(SpaceToBatchND)
{
    DGC_GRAD_LOCALS;
    /* each other's gradient, with the same block_shape and pads */
    int sb = op == OP(SpaceToBatchND);
    dx[0] = sb ? MK("BatchToSpaceND", BatchToSpaceND, dy, FWD->inputs[1],
                    FWD->inputs[2])
               : MK("SpaceToBatchND", SpaceToBatchND, dy, FWD->inputs[1],
                    FWD->inputs[2]);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD_AS(BatchToSpaceND, SpaceToBatchND);

/* A Transpose of x by perm (n entries), for dgc_grad_mk_set. */
typedef struct perm_arg {
    const int64_t *perm;
    int n;
} perm_arg;

static int set_perm(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)c, (void)fwd;
    const perm_arg *p = arg;
    return dgc_node_set_ints(n, "perm", p->perm, p->n);
}

static dgc_ref mk_transpose(dgc_gctx *c, int32_t fwd, const char *suffix,
                            dgc_ref x, const int64_t *perm, int n)
{
    perm_arg a = {perm, n};
    return dgc_grad_mk_set(c, fwd, suffix, OP(Transpose), &x, 1, set_perm,
                           &a);
}

/* TF's _GatherV2Grad / _BatchGatherGrad with every shape known: dy
 * (P[:a] + I[b:] + P[a+1:]) flattened to P[:b] + [N] + P[b:a] + P[a+1:]
 * (the N = |I[b:]| gathered rows moved next to the batch dims), its batches
 * and rows flattened, the indices offset by batch * P[a], summed by
 * UnsortedSegmentSum into B * P[a] rows, then reshaped and transposed back
 * to params' shape. */
static dg_status gather_grad_general(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                                     int64_t a, int64_t b, dgc_ref *dx)
{
    const dg_shape ps = dgc_grad_type(c, FWD->inputs[0])->shape;
    const dgc_ttype *it = dgc_grad_type(c, FWD->inputs[1]);
    const dg_shape is = it->shape;
    dg_dtype idt = it->dtype;
    int r = ps.rank;
    int64_t nb = 1, n = 1, dim = ps.dims[a];
    for (int i = 0; i < r; i++)
        if (ps.dims[i] < 0)
            return no_grad(c, fwd, "needs params' shape known when the "
                           "graph is compiled");
    for (int i = 0; i < is.rank; i++) {
        if (is.dims[i] < 0)
            return no_grad(c, fwd, "needs the indices' shape known when the "
                           "graph is compiled");
        if (i >= b)
            n *= is.dims[i];
    }
    for (int i = 0; i < b; i++)
        nb *= ps.dims[i];
    /* shapes: v1 = P[:a] + [N] + P[a+1:]; moved = P[:b] + [N] + P[b:a] +
     * P[a+1:]; flat = [B*N] + P[b:a] + P[a+1:]; summed rows B*dim */
    int64_t v1[DG_MAX_RANK], perm[DG_MAX_RANK], inv[DG_MAX_RANK];
    int64_t flat[DG_MAX_RANK], back[DG_MAX_RANK];
    int nf = 0, nk = 0;
    for (int i = 0; i < r; i++)
        v1[i] = i == a ? n : ps.dims[i];
    for (int i = 0; i < b; i++)
        perm[nk++] = i;
    perm[nk++] = a;
    for (int i = (int)b; i < r; i++)
        if (i != a)
            perm[nk++] = i;
    for (int i = 0; i < r; i++)
        inv[perm[i]] = i;
    flat[nf++] = nb * n;
    for (int i = (int)b + 1; i < r; i++)
        flat[nf++] = ps.dims[perm[i]];
    for (int i = 0; i < r; i++)
        back[i] = i == b ? dim : ps.dims[perm[i]];
    dgc_ref s1 = dgc_grad_ints(c, fwd, "values_shape", v1, r); CHK(s1);
    dgc_ref g = MK("values", Reshape, dy, s1); CHK(g);
    if (a != b) {
        g = mk_transpose(c, fwd, "values_transpose", g, perm, r); CHK(g);
    }
    dgc_ref s2 = dgc_grad_ints(c, fwd, "flat_values_shape", flat, nf); CHK(s2);
    g = MK("flat_values", Reshape, g, s2); CHK(g);
    dgc_ref ids = FWD->inputs[1];
    if (b > 0) { /* indices + batch * dim, batch over I[:b] */
        int64_t *offs = dg_malloc((size_t)nb * sizeof *offs);
        if (!offs)
            return dg_err_nomem(c->err, "gradient");
        for (int64_t k = 0; k < nb; k++)
            offs[k] = k * dim;
        dgc_ref ov = dgc_grad_ints(c, fwd, "batch_offsets", offs, (int)nb);
        dg_free(offs);
        CHK(ov);
        int64_t os[DG_MAX_RANK];
        for (int i = 0; i < is.rank; i++)
            os[i] = i < b ? is.dims[i] : 1;
        dgc_ref osv = dgc_grad_ints(c, fwd, "offsets_shape", os, is.rank);
        CHK(osv);
        ov = MK("batch_offsets_b", Reshape, ov, osv); CHK(ov);
        if (idt == DG_I64) {
            ov = dgc_grad_cast(c, fwd, ov, DG_I64); CHK(ov);
        }
        ids = MK("batch_indices", Add, ids, ov); CHK(ids);
    }
    int64_t total = nb * n, rows = nb * dim;
    dgc_ref fl = dgc_grad_ints(c, fwd, "indices_size", &total, 1); CHK(fl);
    ids = MK("flat_indices", Reshape, ids, fl); CHK(ids);
    dgc_ref nv = dgc_grad_ints(c, fwd, "num_segments", &rows, 1); CHK(nv);
    dgc_ref sc = dgc_grad_ints(c, fwd, "scalar", NULL, 0); CHK(sc);
    dgc_ref ns = MK("num_segments_s", Reshape, nv, sc); CHK(ns);
    g = MK("UnsortedSegmentSum", UnsortedSegmentSum, g, ids, ns); CHK(g);
    dgc_ref s3 = dgc_grad_ints(c, fwd, "params_grad_shape", back, r); CHK(s3);
    g = MK("params_grad", Reshape, g, s3); CHK(g);
    if (a != b) {
        g = mk_transpose(c, fwd, "params_grad_transpose", g, inv, r); CHK(g);
    }
    *dx = g;
    return DG_OK;
}

DGC_GRAD(GatherV2)
{
    DGC_GRAD_LOCALS;
    /* TF's _GatherV2Grad. Axis 0 (the embedding lookup): the rows of dy
     * summed into params' rows, UnsortedSegmentSum(dy, indices,
     * params.shape[0]); other axes and batch_dims: gather_grad_general.
     * Indices get none. */
    if (!NEED(0))
        return DG_OK;
    int64_t ax = dgc_attr_int(FWD, "axis", 0);
    if (FWD->n_inputs > 2) {
        const dgc_ttype *at = dgc_grad_type(c, FWD->inputs[2]);
        int64_t v[1];
        if (!at->value && !(c->g->nodes[FWD->inputs[2].node].op ==
                            OP(Const)))
            return no_grad(c, fwd, "needs a constant axis");
        const dgc_attr *va = dgc_node_attr(
            &c->g->nodes[FWD->inputs[2].node], "value");
        if (va && va->tensor)
            v[0] = (int64_t)dg_tensor_elem(va->tensor, 0);
        else
            v[0] = 0;
        ax = v[0];
    }
    const dg_shape *ps = &dgc_grad_type(c, x)->shape;
    int64_t b = dgc_attr_int(FWD, "batch_dims", 0);
    if (b < 0)
        b += dgc_grad_type(c, FWD->inputs[1])->shape.rank;
    if (ax < 0)
        ax += ps->rank;
    if (ax != 0 || b != 0)
        return gather_grad_general(c, fwd, dy, ax, b, &dx[0]);
    if (ps->rank < 1 || ps->dims[0] < 0)
        return no_grad(c, fwd, "needs params' first dimension known "
                       "when the graph is compiled");
    int64_t rows = ps->dims[0];
    dgc_ref ids = FWD->inputs[1];
    dgc_ref nv = dgc_grad_ints(c, fwd, "num_segments", &rows, 1); CHK(nv);
    dgc_ref sc = dgc_grad_ints(c, fwd, "scalar", NULL, 0); CHK(sc);
    dgc_ref ns = MK("num_segments_s", Reshape, nv, sc); CHK(ns);
    dx[0] = MK("UnsortedSegmentSum", UnsortedSegmentSum, dy, ids, ns);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(DivNoNan)
{
    DGC_GRAD_LOCALS;
    /* TF: dx = div_no_nan(dy, y); dy_ = dy * div_no_nan(-x / y, y) */
    dgc_ref y = FWD->inputs[1];
    if (NEED(0)) {
        dgc_ref a = MK("DivNoNan", DivNoNan, dy, y); CHK(a);
        dx[0] = dgc_grad_sum_to(c, fwd, a, x); CHK(dx[0]);
    }
    if (NEED(1)) {
        dgc_ref nx = MK("Neg", Neg, x); CHK(nx);
        dgc_ref q = MK("DivNoNan", DivNoNan, nx, y); CHK(q);
        dgc_ref q2 = MK("DivNoNan", DivNoNan, q, y); CHK(q2);
        dgc_ref b = MK("Mul", Mul, dy, q2); CHK(b);
        dx[1] = dgc_grad_sum_to(c, fwd, b, y); CHK(dx[1]);
    }
    return DG_OK;
}

/* sum_to(dy * (x != 0 ? v : 0), x): the gradient of Xdivy's and Xlogy's x
 * (TF: xdivy / xlogy of cast(x != 0) and y); node -1 on failure */
static dgc_ref where_x_nonzero(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                               dgc_ref v)
{
    dgc_ref x = FWD->inputs[0];
    dgc_ref zero = dgc_grad_cst(c, fwd, "zero", 0.0, x);
    if (zero.node < 0)
        return zero;
    dgc_ref nz = MK("NotEqual", NotEqual, x, zero);
    dgc_ref p = nz.node < 0 ? nz : MK("SelectV2", SelectV2, nz, v, zero);
    dgc_ref g = p.node < 0 ? p : MK("Mul", Mul, dy, p);
    return g.node < 0 ? g : dgc_grad_sum_to(c, fwd, g, x);
}

/* TF's _XDivyGrad: dx = dy * (x != 0 ? 1 / y : 0), dy_ = dy * xdivy(-x,
 * y^2), each summed back to its input's shape */
DGC_GRAD(Xdivy)
{
    DGC_GRAD_LOCALS;
    if (NEED(0)) {
        dgc_ref ry = MK("Reciprocal", Reciprocal, yv); CHK(ry);
        dx[0] = where_x_nonzero(c, fwd, dy, ry); CHK(dx[0]);
    }
    if (NEED(1)) {
        dgc_ref nx = MK("Neg", Neg, x); CHK(nx);
        dgc_ref y2 = MK("Square", Square, yv); CHK(y2);
        dgc_ref py = MK("Xdivy", Xdivy, nx, y2); CHK(py);
        dgc_ref b = MK("Mul", Mul, dy, py); CHK(b);
        dx[1] = dgc_grad_sum_to(c, fwd, b, yv); CHK(dx[1]);
    }
    return DG_OK;
}

/* TF's _XLogyGrad: dx = dy * (x != 0 ? log(y) : 0), dy_ = dy * xdivy(x,
 * y), each summed back to its input's shape */
DGC_GRAD(Xlogy)
{
    DGC_GRAD_LOCALS;
    if (NEED(0)) {
        dgc_ref lg = MK("Log", Log, yv); CHK(lg);
        dx[0] = where_x_nonzero(c, fwd, dy, lg); CHK(dx[0]);
    }
    if (NEED(1)) {
        dgc_ref py = MK("Xdivy", Xdivy, x, yv); CHK(py);
        dgc_ref b = MK("Mul", Mul, dy, py); CHK(b);
        dx[1] = dgc_grad_sum_to(c, fwd, b, yv); CHK(dx[1]);
    }
    return DG_OK;
}

DGC_GRAD(Einsum)
{
    return einsum_grad(c, fwd, dy, dx);
}
DGC_GRAD_AS(BatchMatMulV2, Einsum);

DGC_GRAD(ResizeBilinear)
{
    DGC_GRAD_LOCALS;
    dg_dtype t = dgc_grad_type(c, x)->dtype;
    if (t != DG_F32 && t != DG_F64)
        return DG_OK; /* TF: no gradient into integer images */
    dx[0] = dgc_grad_mk_set(c, fwd, "ResizeBilinearGrad", OP(ResizeBilinearGrad),
                   (const dgc_ref[]){dy, x}, 2, copy_attrs,
                   (void *)k_resize);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(ResizeNearestNeighbor)
{
    DGC_GRAD_LOCALS;
    const dg_shape *s = &dgc_grad_type(c, x)->shape;
    if (s->rank != 4 || s->dims[1] < 0 || s->dims[2] < 0)
        return no_grad(c, fwd, "needs the image size known when the "
                       "graph is compiled");
    int64_t hwv[2] = {s->dims[1], s->dims[2]};
    dgc_ref hw = dgc_grad_ints(c, fwd, "size", hwv, 2); CHK(hw);
    dx[0] = dgc_grad_mk_set(c, fwd, "ResizeNearestNeighborGrad",
                   OP(ResizeNearestNeighborGrad),
                   (const dgc_ref[]){dy, hw}, 2, copy_attrs,
                   (void *)k_resize);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(UnsortedSegmentSum)
{
    DGC_GRAD_LOCALS;
    /* TF's _GatherDropNegatives; ids are assumed >= 0 here */
    if (NEED(0)) {
        dx[0] = MK("GatherV2", GatherV2, dy, FWD->inputs[1]); CHK(dx[0]);
    }
    return DG_OK;
}

DGC_GRAD(DynamicStitch)
{
    DGC_GRAD_LOCALS;
    int nn = FWD->n_inputs / 2;
    for (int m = 0; m < nn; m++) {
        if (!NEED(nn + m))
            continue;
        dgc_ref g = MK("GatherV2", GatherV2, dy, FWD->inputs[m]); CHK(g);
        dx[nn + m] = MK("ReshapeLike", ReshapeLike, g, FWD->inputs[nn + m]);
        CHK(dx[nn + m]);
    }
    return DG_OK;
}

