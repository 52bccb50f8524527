/*
 * grad_ops10c.c -- gradient rules of issue 22's ops10c group, following
 * TF's python gradients: Diag / DiagPart (array_grad.py: each other's of
 * dy), SpaceToBatch (array_grad.py: BatchToSpace of dy, here
 * BatchToSpaceND with block_shape [block_size, block_size]) and
 * NthElement (nn_grad.py: dy shared evenly by the entries equal to the
 * output), and the linear-algebra ops (linalg_grad.py: MatrixInverse,
 * MatrixDeterminant, LogMatrixDeterminant, Cholesky, MatrixSolve,
 * MatrixTriangularSolve, SelfAdjointEigV2, Qr, Svd; TF's adjoints of
 * real matrices are transposes).
 * Integer inputs get no gradient.
 */
#include "grad.h"
#include "grad_rule.h"
#include "attr_get.h"

DGC_GRAD(Diag)
{
    DGC_GRAD_LOCALS;
    dx[0] = op == OP(Diag) ? MK("DiagPart", DiagPart, dy)
                           : MK("Diag", Diag, dy);
    CHK(dx[0]);
    return DG_OK;
}
DGC_GRAD_AS(DiagPart, Diag);

DGC_GRAD(SpaceToBatch)
{
    DGC_GRAD_LOCALS;
    int64_t b = dgc_attr_i(FWD, DGC_AT_block_size), bs[2] = {b, b};
    dgc_ref pads = FWD->inputs[1];
    dgc_ref bv = dgc_grad_ints(c, fwd, "block_shape", bs, 2); CHK(bv);
    dx[0] = MK("BatchToSpaceND", BatchToSpaceND, dy, bv, pads); CHK(dx[0]);
    return DG_OK;
}

/* ExpandDims(r, -1) */
static dgc_ref expand_last(dgc_gctx *c, int32_t fwd, const char *suffix,
                           dgc_ref r)
{
    return dgc_grad_mk_attrs(c, fwd, suffix, OP(ExpandDims), &r, 1, "axis",
                             -1, NULL, 0);
}

DGC_GRAD(NthElement)
{
    DGC_GRAD_LOCALS;
    /* indicators = Cast(Equal(ExpandDims(z, -1), x)); dx = indicators /
     * ExpandDims(Sum(indicators, -1), -1) * ExpandDims(dy, -1) */
    dgc_ref ze = expand_last(c, fwd, "ExpandDims_out", z); CHK(ze);
    dgc_ref eq = MK("Equal", Equal, ze, x); CHK(eq);
    dgc_ref ind = dgc_grad_cast(c, fwd, eq, dgc_grad_type(c, dy)->dtype);
    CHK(ind);
    dgc_ref ns = dgc_grad_mk_attrs(c, fwd, "Sum", OP(Sum), &ind, 1, "axis",
                                   -1, NULL, 0);
    CHK(ns);
    dgc_ref ne = expand_last(c, fwd, "ExpandDims_sum", ns); CHK(ne);
    dgc_ref q = MK("Div", Div, ind, ne); CHK(q);
    dgc_ref de = expand_last(c, fwd, "ExpandDims_dy", dy); CHK(de);
    dx[0] = MK("Mul", Mul, q, de); CHK(dx[0]);
    return DG_OK;
}

/* ---- linear algebra ------------------------------------------------------ */

/* Two bool attributes of a generated node (k NULL: none). */
typedef struct bool_attrs {
    const char *k1;
    int v1;
    const char *k2;
    int v2;
} bool_attrs;

static int set_bools(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)c, (void)fwd;
    const bool_attrs *a = arg;
    return (a->k1 && dgc_node_set_bool(n, a->k1, a->v1)) ||
           (a->k2 && dgc_node_set_bool(n, a->k2, a->v2));
}

static dgc_ref mk_bools(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                        const dgc_ref *in, int n_in, bool_attrs a)
{
    return dgc_grad_mk_set(c, fwd, suffix, op, in, n_in, set_bools, &a);
}

/* TF's math_ops.matmul of batches: BatchMatMulV2(a, b, adj_x, adj_y) */
static dgc_ref bmm(dgc_gctx *c, int32_t fwd, const char *suffix, dgc_ref a,
                   dgc_ref b, int adj_x, int adj_y)
{
    return mk_bools(c, fwd, suffix, OP(BatchMatMulV2), (dgc_ref[]){a, b}, 2,
                    (bool_attrs){"adj_x", adj_x, "adj_y", adj_y});
}

/* MatrixInverse(x, adjoint) */
static dgc_ref inverse(dgc_gctx *c, int32_t fwd, dgc_ref x, int adjoint)
{
    return mk_bools(c, fwd, "MatrixInverse", OP(MatrixInverse), &x, 1,
                    (bool_attrs){"adjoint", adjoint, NULL, 0});
}

DGC_GRAD(MatrixInverse)
{
    DGC_GRAD_LOCALS;
    int adj = dgc_attr_b(FWD, DGC_AT_adjoint);
    dgc_ref in = bmm(c, fwd, "MatMul", dy, z, adj, !adj); CHK(in);
    dgc_ref p = bmm(c, fwd, "MatMul_1", z, in, !adj, 0); CHK(p);
    dx[0] = MK("Neg", Neg, p); CHK(dx[0]);
    return DG_OK;
}

/* g (the batch's shape) times MatrixInverse(x, adjoint=True), g expanded
 * twice: the determinants' rules */
static dg_status det_grad(dgc_gctx *c, int32_t fwd, dgc_ref g, dgc_ref *dx)
{
    dgc_ref x = FWD->inputs[0];
    dgc_ref inv = inverse(c, fwd, x, 1); CHK(inv);
    dgc_ref e1 = expand_last(c, fwd, "ExpandDims", g); CHK(e1);
    dgc_ref e2 = expand_last(c, fwd, "ExpandDims_1", e1); CHK(e2);
    dx[0] = MK("Mul", Mul, e2, inv); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(MatrixDeterminant)
{
    DGC_GRAD_LOCALS;
    dgc_ref m = MK("mul", Mul, dy, z); CHK(m);
    return det_grad(c, fwd, m, dx);
}

DGC_GRAD_N(LogMatrixDeterminant)
{
    /* the sign's gradient is none (TF: only log |det| flows) */
    if (dys[1].node < 0)
        return DG_OK;
    return det_grad(c, fwd, dys[1], dx);
}

/* MatrixBandPart(x, lo, up) */
static dgc_ref band(dgc_gctx *c, int32_t fwd, const char *suffix, dgc_ref x,
                    int lo, int up)
{
    dgc_ref l = {dgc_grad_const(c, fwd, "num_lower", lo, DG_I64), 0};
    if (l.node < 0)
        return l;
    dgc_ref u = {dgc_grad_const(c, fwd, "num_upper", up, DG_I64), 0};
    if (u.node < 0)
        return u;
    return dgc_grad_mk(c, fwd, suffix, OP(MatrixBandPart),
                       (dgc_ref[]){x, l, u}, 3);
}

/* x with its innermost two axes swapped */
static int set_swap_perm(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)c, (void)fwd;
    int rank = *(const int *)arg;
    int64_t p[DG_MAX_RANK];
    for (int i = 0; i < rank; i++)
        p[i] = i;
    p[rank - 2] = rank - 1;
    p[rank - 1] = rank - 2;
    return dgc_node_set_ints(n, "perm", p, rank);
}

/* x^T over its innermost two axes (x of rank `rank`) */
static dgc_ref adjoint_of(dgc_gctx *c, int32_t fwd, const char *suffix,
                          dgc_ref x, int rank)
{
    return dgc_grad_mk_set(c, fwd, suffix, OP(Transpose), &x, 1,
                           set_swap_perm, &rank);
}

DGC_GRAD(Cholesky)
{
    DGC_GRAD_LOCALS;
    /* TF's _CholeskyGrad: l_inverse = L^-1; middle = L^T dy with its
     * diagonal halved, lower part; g = l_inverse^T middle l_inverse;
     * dx = (g + g^T) / 2 */
    int rank = dgc_grad_type(c, z)->shape.rank;
    dgc_ref linv = inverse(c, fwd, z, 0); CHK(linv);
    dgc_ref mid = bmm(c, fwd, "MatMul", z, dy, 1, 0); CHK(mid);
    dgc_ref low = band(c, fwd, "MatrixBandPart", mid, -1, 0); CHK(low);
    dgc_ref dia = band(c, fwd, "MatrixBandPart_diag", mid, 0, 0); CHK(dia);
    dgc_ref half = dgc_grad_cst(c, fwd, "half", 0.5, dy); CHK(half);
    dgc_ref hd = MK("mul", Mul, dia, half); CHK(hd);
    dgc_ref m2 = MK("sub", Sub, low, hd); CHK(m2);
    dgc_ref t = bmm(c, fwd, "MatMul_1", linv, m2, 1, 0); CHK(t);
    dgc_ref g = bmm(c, fwd, "MatMul_2", t, linv, 0, 0); CHK(g);
    dgc_ref gt = adjoint_of(c, fwd, "adjoint", g, rank); CHK(gt);
    dgc_ref s = MK("add", Add, g, gt); CHK(s);
    dx[0] = MK("mul_1", Mul, s, half); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(MatrixSolve)
{
    DGC_GRAD_LOCALS;
    /* TF's _MatrixSolveGrad / _MatrixTriangularSolveGrad: grad_b solves
     * the adjoint system for dy; grad_a = -grad_b c^T (c grad_b^T with
     * adjoint), the triangle of A the forward read */
    int adj = dgc_attr_b(FWD, DGC_AT_adjoint);
    int tri = op == OP(MatrixTriangularSolve);
    int lower = tri && dgc_attr_b(FWD, DGC_AT_lower);
    dgc_ref a = FWD->inputs[0];
    dgc_ref gb = mk_bools(c, fwd, tri ? "MatrixTriangularSolve"
                                      : "MatrixSolve", op,
                          (dgc_ref[]){a, dy}, 2,
                          (bool_attrs){"adjoint", !adj,
                                       tri ? "lower" : NULL, lower});
    CHK(gb);
    /* (a triangular solve's batch dims broadcast: summed back, as TF) */
    if (NEED(1)) {
        dx[1] = dgc_grad_sum_to(c, fwd, gb, FWD->inputs[1]);
        CHK(dx[1]);
    }
    if (!NEED(0))
        return DG_OK;
    dgc_ref p = adj ? bmm(c, fwd, "MatMul", z, gb, 0, 1)
                    : bmm(c, fwd, "MatMul", gb, z, 0, 1);
    CHK(p);
    dgc_ref ga = MK("Neg", Neg, p); CHK(ga);
    if (tri) {
        ga = band(c, fwd, "MatrixBandPart", ga, lower ? -1 : 0,
                  lower ? 0 : -1);
        CHK(ga);
    }
    dx[0] = dgc_grad_sum_to(c, fwd, ga, FWD->inputs[0]);
    CHK(dx[0]);
    return DG_OK;
}
DGC_GRAD_AS(MatrixTriangularSolve, MatrixSolve);

/* MatrixSetDiagV3(x, d, k = 0) */
static dgc_ref set_diag(dgc_gctx *c, int32_t fwd, const char *suffix,
                        dgc_ref x, dgc_ref d)
{
    dgc_ref k = {dgc_grad_const(c, fwd, "k", 0, DG_I32), 0};
    if (k.node < 0)
        return k;
    return dgc_grad_mk(c, fwd, suffix, OP(MatrixSetDiagV3),
                       (dgc_ref[]){x, d, k}, 3);
}

/* TF's _SafeReciprocal: x / (x^2 + 1e-20) (0 at 0) */
static dgc_ref safe_recip(dgc_gctx *c, int32_t fwd, dgc_ref x)
{
    dgc_ref x2 = MK("mul", Mul, x, x);
    if (x2.node < 0)
        return x2;
    dgc_ref eps = dgc_grad_cst(c, fwd, "epsilon", 1e-20, x);
    if (eps.node < 0)
        return eps;
    dgc_ref den = MK("add", Add, x2, eps);
    if (den.node < 0)
        return den;
    dgc_ref rec = MK("Reciprocal", Reciprocal, den);
    if (rec.node < 0)
        return rec;
    return MK("mul_1", Mul, x, rec);
}

DGC_GRAD_N(SelfAdjointEigV2)
{
    /* TF's _SelfAdjointEigV2Grad: with f[i, j] = 1 / (e[j] - e[i]) (0 on
     * the diagonal, TF's _SafeReciprocal), grad_a = v (diag(ge) + f *
     * (v^T gv)) v^T; then the lower triangle of grad_a + grad_a^T with the
     * diagonal halved.  A missing output gradient counts as zeros. */
    dgc_ref x = FWD->inputs[0], ge = dys[0], gv = dys[1], v;
    int rank = dgc_grad_type(c, x)->shape.rank;
    if (dgc_attr_b(FWD, DGC_AT_compute_v)) {
        v = R(fwd, 1);
    } else { /* TF: self_adjoint_eig(a) again, for its vectors */
        v = mk_bools(c, fwd, "SelfAdjointEigV2", OP(SelfAdjointEigV2), &x, 1,
                     (bool_attrs){"compute_v", 1, NULL, 0});
        CHK(v);
        v = R(v.node, 1);
        gv.node = -1;
    }
    dgc_ref mid;
    if (gv.node >= 0) {
        dgc_ref e = R(fwd, 0);
        dgc_ref er = expand_last(c, fwd, "ExpandDims", e); CHK(er);
        dgc_ref ec = dgc_grad_mk_attrs(c, fwd, "ExpandDims_1",
                                       OP(ExpandDims), &e, 1, "axis", -2,
                                       NULL, 0);
        CHK(ec);
        dgc_ref d = MK("sub", Sub, ec, er); CHK(d);
        dgc_ref f = safe_recip(c, fwd, d); CHK(f);
        dgc_ref vg = bmm(c, fwd, "MatMul", v, gv, 1, 0); CHK(vg);
        mid = MK("mul_2", Mul, f, vg); CHK(mid);
    } else {
        mid = MK("zeros", ZerosLike, v); CHK(mid);
    }
    if (ge.node >= 0) {
        mid = set_diag(c, fwd, "MatrixSetDiag", mid, ge);
        CHK(mid);
    }
    dgc_ref t = bmm(c, fwd, "MatMul_1", mid, v, 0, 1); CHK(t);
    dgc_ref ga = bmm(c, fwd, "MatMul_2", v, t, 0, 0); CHK(ga);
    dgc_ref gt = adjoint_of(c, fwd, "adjoint", ga, rank); CHK(gt);
    dgc_ref sum = MK("add_1", Add, ga, gt); CHK(sum);
    dgc_ref low = band(c, fwd, "MatrixBandPart", sum, -1, 0); CHK(low);
    dgc_ref zero = dgc_grad_cst(c, fwd, "pad", 0, low); CHK(zero);
    dgc_ref k = {dgc_grad_const(c, fwd, "k_part", 0, DG_I32), 0}; CHK(k);
    dgc_ref dp = dgc_grad_mk(c, fwd, "MatrixDiagPart", OP(MatrixDiagPartV3),
                             (dgc_ref[]){low, k, zero}, 3);
    CHK(dp);
    dgc_ref half = dgc_grad_cst(c, fwd, "half", 0.5, low); CHK(half);
    dgc_ref hd = MK("mul_3", Mul, dp, half); CHK(hd);
    dx[0] = set_diag(c, fwd, "MatrixSetDiag_1", low, hd); CHK(dx[0]);
    return DG_OK;
}

/* ---- Qr (TF's _QrGrad, arXiv 2009.10071) --------------------------------- */

typedef struct mat_ctx {
    dgc_gctx *c;
    int32_t fwd;
    int rank;
} mat_ctx;

/* x r^-T for an upper triangular r: TF's _TriangularSolve */
static dgc_ref qr_trisolve(const mat_ctx *q, const char *suffix, dgc_ref x,
                           dgc_ref r)
{
    dgc_gctx *c = q->c;
    int32_t fwd = q->fwd;
    dgc_ref xt = adjoint_of(c, fwd, "adjoint_x", x, q->rank);
    if (xt.node < 0)
        return xt;
    dgc_ref s = mk_bools(c, fwd, suffix, OP(MatrixTriangularSolve),
                         (dgc_ref[]){r, xt}, 2,
                         (bool_attrs){"lower", 0, "adjoint", 0});
    if (s.node < 0)
        return s;
    return adjoint_of(c, fwd, "adjoint_s", s, q->rank);
}

/* TF's _QrGradSquareAndDeepMatrices (rows >= cols, q [M, N]) */
static dgc_ref qr_grad_deep(const mat_ctx *q, dgc_ref qq, dgc_ref r,
                            dgc_ref dq, dgc_ref dr)
{
    dgc_gctx *c = q->c;
    int32_t fwd = q->fwd;
    dgc_ref bad = {-1, 0};
#define QCHK(x) do { if ((x).node < 0) return bad; } while (0)
    dgc_ref qdq = bmm(c, fwd, "MatMul", qq, dq, 1, 0); QCHK(qdq);
    dgc_ref qdqt = adjoint_of(c, fwd, "adjoint", qdq, q->rank); QCHK(qdqt);
    dgc_ref qdq_ = MK("sub", Sub, qdq, qdqt); QCHK(qdq_);
    dgc_ref rdr = bmm(c, fwd, "MatMul_1", r, dr, 0, 1); QCHK(rdr);
    dgc_ref rdrt = adjoint_of(c, fwd, "adjoint_1", rdr, q->rank); QCHK(rdrt);
    dgc_ref rdr_ = MK("sub_1", Sub, rdr, rdrt); QCHK(rdr_);
    dgc_ref sum = MK("add", Add, qdq_, rdr_); QCHK(sum);
    dgc_ref tril = band(c, fwd, "MatrixBandPart", sum, -1, 0); QCHK(tril);
    dgc_ref t1 = qr_trisolve(q, "MatrixTriangularSolve", tril, r); QCHK(t1);
    dgc_ref a1 = MK("add_1", Add, dr, t1); QCHK(a1);
    dgc_ref ga = bmm(c, fwd, "MatMul_2", qq, a1, 0, 0); QCHK(ga);
    dgc_ref qq2 = bmm(c, fwd, "MatMul_3", qq, qdq, 0, 0); QCHK(qq2);
    dgc_ref b1 = MK("sub_2", Sub, dq, qq2); QCHK(b1);
    dgc_ref gb = qr_trisolve(q, "MatrixTriangularSolve_1", b1, r); QCHK(gb);
    return MK("add_2", Add, ga, gb);
#undef QCHK
}

/* x[..., :, from:from + len] (len -1: to the end) */
static dgc_ref cols_of(const mat_ctx *q, const char *suffix, dgc_ref x,
                       int64_t from, int64_t len)
{
    int64_t b[DG_MAX_RANK], z[DG_MAX_RANK];
    for (int i = 0; i < q->rank; i++)
        b[i] = 0, z[i] = -1;
    b[q->rank - 1] = from;
    z[q->rank - 1] = len;
    dgc_ref bv = dgc_grad_ints(q->c, q->fwd, "begin", b, q->rank);
    dgc_ref zv = dgc_grad_ints(q->c, q->fwd, "size", z, q->rank);
    if (bv.node < 0 || zv.node < 0)
        return bv.node < 0 ? bv : zv;
    return dgc_grad_mk(q->c, q->fwd, suffix, OP(Slice),
                       (dgc_ref[]){x, bv, zv}, 3);
}

DGC_GRAD_N(Qr)
{
    dgc_ref qq = R(fwd, 0), r = R(fwd, 1), dq = dys[0], dr = dys[1];
    const dg_shape *qs = &dgc_grad_type(c, qq)->shape;
    const dg_shape *rs = &dgc_grad_type(c, r)->shape;
    mat_ctx q = {c, fwd, qs->rank};
    int64_t M = qs->dims[qs->rank - 2], P = qs->dims[qs->rank - 1];
    int64_t N = rs->dims[rs->rank - 1];
    if (M < 0 || N < 0 || P < 0)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': the gradient of Qr "
                      "needs its matrix size known when the graph is "
                      "compiled", FWD->name);
    if (M > N && P == M)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': the gradient of Qr "
                      "with full_matrices and more rows than columns is not "
                      "implemented (as in TF)", FWD->name);
    if (dq.node < 0) { /* a missing output gradient counts as zeros */
        dq = MK("zeros_q", ZerosLike, qq); CHK(dq);
    }
    if (dr.node < 0) {
        dr = MK("zeros_r", ZerosLike, r); CHK(dr);
    }
    if (M >= N) {
        dx[0] = qr_grad_deep(&q, qq, r, dq, dr); CHK(dx[0]);
        return DG_OK;
    }
    /* wide: a = [x, y], r = [u, v], reduced to the square case */
    dgc_ref y = cols_of(&q, "y", FWD->inputs[0], M, -1); CHK(y);
    dgc_ref u = cols_of(&q, "u", r, 0, M); CHK(u);
    dgc_ref dv = cols_of(&q, "dv", dr, M, -1); CHK(dv);
    dgc_ref du = cols_of(&q, "du", dr, 0, M); CHK(du);
    dgc_ref gy = bmm(c, fwd, "MatMul_dy", qq, dv, 0, 0); CHK(gy);
    dgc_ref ydv = bmm(c, fwd, "MatMul_ydv", y, dv, 0, 1); CHK(ydv);
    dgc_ref dq2 = MK("add_dq", Add, dq, ydv); CHK(dq2);
    dgc_ref gx = qr_grad_deep(&q, qq, u, dq2, du); CHK(gx);
    dx[0] = dgc_grad_mk_attrs(c, fwd, "concat", OP(ConcatV2),
                              (dgc_ref[]){gx, gy}, 2, "axis", -1, NULL, 0);
    CHK(dx[0]);
    return DG_OK;
}

/* ---- Svd (TF's _SvdGrad) ------------------------------------------------- */

/* MatrixDiagV3(x): square matrices with x on the diagonal */
static dgc_ref mdiag(dgc_gctx *c, int32_t fwd, const char *suffix, dgc_ref x)
{
    dgc_ref k = {dgc_grad_const(c, fwd, "k", 0, DG_I32), 0};
    dgc_ref nr = {dgc_grad_const(c, fwd, "num_rows", -1, DG_I32), 0};
    dgc_ref nc = {dgc_grad_const(c, fwd, "num_cols", -1, DG_I32), 0};
    dgc_ref pad = dgc_grad_cst(c, fwd, "padding", 0, x);
    if (k.node < 0 || nr.node < 0 || nc.node < 0 || pad.node < 0)
        return (dgc_ref){-1, 0};
    return dgc_grad_mk(c, fwd, suffix, OP(MatrixDiagV3),
                       (dgc_ref[]){x, k, nr, nc, pad}, 5);
}

/* the other outputs' gradient: zeros where none flows (as TF) */
static dgc_ref or_zeros(dgc_gctx *c, int32_t fwd, dgc_ref g, dgc_ref like)
{
    return g.node >= 0 ? g : MK("zeros", ZerosLike, like);
}

DGC_GRAD_N(Svd)
{
    dgc_ref a = FWD->inputs[0];
    const dg_shape *as = &dgc_grad_type(c, a)->shape;
    mat_ctx q = {c, fwd, as->rank};
    int64_t m = as->dims[as->rank - 2], n = as->dims[as->rank - 1];
    int full = dgc_attr_b(FWD, DGC_AT_full_matrices);
    if (m < 0 || n < 0)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': the gradient of Svd "
                      "needs its matrix size known when the graph is "
                      "compiled", FWD->name);
    dgc_ref s = R(fwd, 0), u = R(fwd, 1), v = R(fwd, 2);
    dgc_ref gs = or_zeros(c, fwd, dys[0], s); CHK(gs);
    dgc_ref gsm = mdiag(c, fwd, "MatrixDiag", gs); CHK(gsm);
    if (!dgc_attr_b(FWD, DGC_AT_compute_uv)) { /* TF: svd(a) again */
        dgc_ref sv = mk_bools(c, fwd, "Svd", OP(Svd), &a, 1,
                              (bool_attrs){"compute_uv", 1, NULL, 0});
        CHK(sv);
        dgc_ref t = bmm(c, fwd, "MatMul", gsm, R(sv.node, 2), 0, 1); CHK(t);
        dx[0] = bmm(c, fwd, "MatMul_1", R(sv.node, 1), t, 0, 0);
        CHK(dx[0]);
        return DG_OK;
    }
    dgc_ref gu = or_zeros(c, fwd, dys[1], u); CHK(gu);
    dgc_ref gv = or_zeros(c, fwd, dys[2], v); CHK(gv);
    int adj = m > n;
    if (adj) { /* the transpose's decomposition: u and v swap */
        int64_t t = m;
        m = n, n = t;
        dgc_ref r = u;
        u = v, v = r, r = gu, gu = gv, gv = r;
    }
    if (full && n - m > 1)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': the gradient of Svd "
                      "with full_matrices is not implemented for matrices "
                      "whose sizes differ by more than 1 (as in TF)",
                      FWD->name);
    dgc_ref sm = mdiag(c, fwd, "MatrixDiag_s", s); CHK(sm);
    dgc_ref s2 = MK("Square", Square, s); CHK(s2);
    dgc_ref er = expand_last(c, fwd, "ExpandDims", s2); CHK(er);
    dgc_ref ec = dgc_grad_mk_attrs(c, fwd, "ExpandDims_1", OP(ExpandDims),
                                   &s2, 1, "axis", -2, NULL, 0);
    CHK(ec);
    dgc_ref d = MK("sub", Sub, ec, er); CHK(d);
    dgc_ref f = safe_recip(c, fwd, d); CHK(f);
    int sliced = full && n > m; /* v [n, n]: its first m columns */
    dgc_ref v1 = sliced ? cols_of(&q, "v1", v, 0, m) : v; CHK(v1);
    dgc_ref gv1 = sliced ? cols_of(&q, "grad_v1", gv, 0, m) : gv; CHK(gv1);
    dgc_ref ugu = bmm(c, fwd, "MatMul", u, gu, 1, 0); CHK(ugu);
    dgc_ref vgv = bmm(c, fwd, "MatMul_1", v1, gv1, 1, 0); CHK(vgv);
    dgc_ref fu = MK("mul_u", Mul, f, ugu); CHK(fu);
    dgc_ref fv = MK("mul_v", Mul, f, vgv); CHK(fv);
    dgc_ref fut = adjoint_of(c, fwd, "adjoint_u", fu, q.rank); CHK(fut);
    dgc_ref fvt = adjoint_of(c, fwd, "adjoint_v", fv, q.rank); CHK(fvt);
    dgc_ref su = MK("add_u", Add, fu, fut); CHK(su);
    dgc_ref sv = MK("add_v", Add, fv, fvt); CHK(sv);
    dgc_ref t1 = bmm(c, fwd, "MatMul_2", su, sm, 0, 0); CHK(t1);
    dgc_ref t2 = bmm(c, fwd, "MatMul_3", sm, sv, 0, 0); CHK(t2);
    dgc_ref n1 = MK("add", Add, gsm, t1); CHK(n1);
    dgc_ref n2 = MK("add_1", Add, n1, t2); CHK(n2);
    dgc_ref in = bmm(c, fwd, "MatMul_4", n2, v1, 0, 1); CHK(in);
    dgc_ref g = bmm(c, fwd, "MatMul_5", u, in, 0, 0); CHK(g);
    if (m != n) {
        dgc_ref gt = adjoint_of(c, fwd, "adjoint_gv1", gv1, q.rank); CHK(gt);
        dgc_ref gtv = bmm(c, fwd, "MatMul_6", gt, v1, 0, 0); CHK(gtv);
        dgc_ref p = bmm(c, fwd, "MatMul_7", gtv, v1, 0, 1); CHK(p);
        dgc_ref t2n = MK("sub_1", Sub, gt, p); CHK(t2n);
        if (full) {
            dgc_ref v2 = cols_of(&q, "v2", v, m, n - m); CHK(v2);
            dgc_ref gv2 = cols_of(&q, "grad_v2", gv, m, n - m); CHK(gv2);
            dgc_ref vg2 = bmm(c, fwd, "MatMul_8", v1, gv2, 1, 0); CHK(vg2);
            dgc_ref p2 = bmm(c, fwd, "MatMul_9", vg2, v2, 0, 1); CHK(p2);
            t2n = MK("sub_2", Sub, t2n, p2); CHK(t2n);
        }
        dgc_ref rs = safe_recip(c, fwd, s); CHK(rs);
        dgc_ref sim = mdiag(c, fwd, "MatrixDiag_inv", rs); CHK(sim);
        dgc_ref us = bmm(c, fwd, "MatMul_10", u, sim, 0, 0); CHK(us);
        dgc_ref term2 = bmm(c, fwd, "MatMul_11", us, t2n, 0, 0); CHK(term2);
        g = MK("add_2", Add, g, term2); CHK(g);
    }
    dx[0] = adj ? adjoint_of(c, fwd, "adjoint", g, q.rank) : g;
    CHK(dx[0]);
    return DG_OK;
}
