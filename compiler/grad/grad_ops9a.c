/*
 * grad_ops9a.c -- the gradient rules of the ops9a ops (issue 22), as TF
 * registers them (math_grad.py): ClipByValue (_ClipByValueGrad: dy where
 * t is within the bounds, else to the bound it was clipped to, summed to
 * the bound's shape), Asinh (dy / cosh(y)), Acosh (dy / sinh(y)), Atanh
 * (dy / (1 - x^2)); EnsureShape (dy: _EnsureShapeGrad), CheckNumerics (dy
 * checked too, as array_grad.py's _CheckNumericsGrad).
 */
#include "grad.h"
#include "grad_rule.h"
#include "attr_get.h"
#include "dg_util.h"

#include "dg_alloc.h"

DGC_GRAD(ClipByValue)
{
    DGC_GRAD_LOCALS;
    dgc_ref lo = FWD->inputs[1], hi = FWD->inputs[2];
    dgc_ref zero = MK("ZerosLike", ZerosLike, dy); CHK(zero);
    dgc_ref below = MK("Less", Less, x, lo); CHK(below);
    dgc_ref above = MK("Greater", Greater, x, hi); CHK(above);
    if (NEED(0)) {
        dgc_ref out = MK("LogicalOr", LogicalOr, below, above); CHK(out);
        dx[0] = MK("Select", Select, out, zero, dy); CHK(dx[0]);
    }
    if (NEED(1)) {
        dgc_ref g = MK("SelectLo", Select, below, dy, zero); CHK(g);
        dx[1] = dgc_grad_sum_to(c, fwd, g, lo); CHK(dx[1]);
    }
    if (NEED(2)) {
        dgc_ref g = MK("SelectHi", Select, above, dy, zero); CHK(g);
        dx[2] = dgc_grad_sum_to(c, fwd, g, hi); CHK(dx[2]);
    }
    return DG_OK;
}

DGC_GRAD(Asinh)
{
    DGC_GRAD_LOCALS;
    dgc_ref d = op == OP(Asinh) ? MK("Cosh", Cosh, z) : MK("Sinh", Sinh, z);
    CHK(d);
    dx[0] = MK("Div", Div, dy, d); CHK(dx[0]);
    return DG_OK;
}
DGC_GRAD_AS(Acosh, Asinh);

DGC_GRAD(Atanh)
{
    DGC_GRAD_LOCALS;
    dgc_ref one = dgc_grad_cst(c, fwd, "one", 1.0, x); CHK(one);
    dgc_ref sq = MK("Square", Square, x); CHK(sq);
    dgc_ref df = MK("Sub", Sub, one, sq); CHK(df);
    dgc_ref inv = MK("Reciprocal", Reciprocal, df); CHK(inv);
    dx[0] = MK("Mul", Mul, dy, inv); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD_AS(EnsureShape, Identity);

/* TF's message for the gradient's check */
static int set_grad_message(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)arg;
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "Not a number (NaN) or infinity (Inf) values detected "
                 "in gradient. %s", dgc_attr_str(FWD, DGC_AT_message));
    char *m = dg_sbuf_take(&b);
    int rc = !m || dgc_node_set_str(n, "message", m);
    dg_free(m);
    return rc;
}

DGC_GRAD(CheckNumerics)
{
    dx[0] = dgc_grad_mk_set(c, fwd, "CheckNumerics", OP(CheckNumerics),
                            &dy, 1, set_grad_message, NULL);
    CHK(dx[0]);
    return DG_OK;
}
