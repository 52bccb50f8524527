/*
 * grad_ops10b.c -- the gradient rules of the ops10b special functions
 * (issue 22), as TF registers them (math_grad.py): Lgamma (dy *
 * digamma(x)), Digamma (dy * polygamma(1, x)), Erfinv (dy * sqrt(pi) / 2 *
 * exp(y^2)), Ndtri (dy * sqrt(2 pi) * exp(y^2 / 2)), BesselI0e (dy *
 * (i1e(x) - sign(x) y)), BesselI1e (dy * (i0e(x) - y (sign(x) + 1 / x)),
 * 1/2 at 0), Polygamma (x only: dy * polygamma(a + 1, x)) and Zeta (q
 * only: -x dy zeta(x + 1, q)); TF gives the other inputs none.
 * CumulativeLogsumexp: TF's _CumulativeLogsumexpGrad (the positive and
 * negative parts of dy through reversed scans, in logs).
 */
#include "grad.h"
#include "grad_rule.h"

#include <float.h>
#include <math.h>

DGC_GRAD(Lgamma)
{
    DGC_GRAD_LOCALS;
    dgc_ref d = MK("Digamma", Digamma, x); CHK(d);
    dx[0] = MK("Mul", Mul, dy, d); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Digamma)
{
    DGC_GRAD_LOCALS;
    dgc_ref one = dgc_grad_cst(c, fwd, "one", 1.0, x); CHK(one);
    dgc_ref p = MK("Polygamma", Polygamma, one, x); CHK(p);
    dx[0] = MK("Mul", Mul, dy, p); CHK(dx[0]);
    return DG_OK;
}

/* dy * k * exp(s * y^2): Erfinv's (k = sqrt(pi) / 2, s = 1) and Ndtri's
 * (k = sqrt(2 pi), s = 1/2) */
DGC_GRAD(Erfinv)
{
    DGC_GRAD_LOCALS;
    int erfinv = op == OP(Erfinv);
    dgc_ref k = dgc_grad_cst(c, fwd, "k", erfinv ? sqrt(M_PI) / 2
                                                 : sqrt(2 * M_PI), x);
    CHK(k);
    dgc_ref s = dgc_grad_cst(c, fwd, "s", erfinv ? 1.0 : 0.5, x); CHK(s);
    dgc_ref sq = MK("Square", Square, z); CHK(sq);
    dgc_ref e = MK("Mul", Mul, sq, s); CHK(e);
    dgc_ref ex = MK("Exp", Exp, e); CHK(ex);
    dgc_ref m = MK("Mul", Mul, ex, k); CHK(m);
    dx[0] = MK("Mul", Mul, dy, m); CHK(dx[0]);
    return DG_OK;
}
DGC_GRAD_AS(Ndtri, Erfinv);

DGC_GRAD(BesselI0e)
{
    DGC_GRAD_LOCALS;
    dgc_ref i1 = MK("BesselI1e", BesselI1e, x); CHK(i1);
    dgc_ref sg = MK("Sign", Sign, x); CHK(sg);
    dgc_ref sy = MK("Mul", Mul, sg, z); CHK(sy);
    dgc_ref d = MK("Sub", Sub, i1, sy); CHK(d);
    dx[0] = MK("Mul", Mul, dy, d); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(BesselI1e)
{
    DGC_GRAD_LOCALS;
    dgc_ref zero = dgc_grad_cst(c, fwd, "zero", 0.0, x); CHK(zero);
    dgc_ref one = dgc_grad_cst(c, fwd, "one", 1.0, x); CHK(one);
    dgc_ref half = dgc_grad_cst(c, fwd, "half", 0.5, x); CHK(half);
    dgc_ref at0 = MK("Equal", Equal, x, zero); CHK(at0);
    dgc_ref sx = MK("SafeX", SelectV2, at0, one, x); CHK(sx);
    dgc_ref i0 = MK("BesselI0e", BesselI0e, sx); CHK(i0);
    dgc_ref sg = MK("Sign", Sign, sx); CHK(sg);
    dgc_ref rx = MK("Reciprocal", Reciprocal, sx); CHK(rx);
    dgc_ref t = MK("Add", Add, sg, rx); CHK(t);
    dgc_ref yt = MK("Mul", Mul, z, t); CHK(yt);
    dgc_ref d = MK("Sub", Sub, i0, yt); CHK(d);
    dgc_ref d0 = MK("Select", SelectV2, at0, half, d); CHK(d0);
    dx[0] = MK("Mul", Mul, dy, d0); CHK(dx[0]);
    return DG_OK;
}

/* Polygamma's x gradient dy * polygamma(a + 1, x) and Zeta's q gradient
 * dy * -x zeta(x + 1, q) */
DGC_GRAD(Polygamma)
{
    DGC_GRAD_LOCALS;
    if (!NEED(1))
        return DG_OK;
    int zeta = op == OP(Zeta);
    dgc_ref one = dgc_grad_cst(c, fwd, "one", 1.0, x); CHK(one);
    dgc_ref a1 = MK("Add", Add, x, one); CHK(a1);
    dgc_ref fz = zeta ? MK("Zeta", Zeta, a1, yv)
                      : MK("Polygamma", Polygamma, a1, yv);
    CHK(fz);
    if (zeta) {
        dgc_ref nx = MK("Neg", Neg, x); CHK(nx);
        fz = MK("Mul", Mul, nx, fz); CHK(fz);
    }
    dgc_ref g = MK("Mul", Mul, dy, fz); CHK(g);
    dx[1] = dgc_grad_sum_to(c, fwd, g, yv); CHK(dx[1]);
    return DG_OK;
}
DGC_GRAD_AS(Zeta, Polygamma);

/* CHK for a helper that returns a ref: r itself when it failed */
#define CHKR(r)                                                              \
    do {                                                                     \
        if ((r).node < 0)                                                    \
            return (r);                                                      \
    } while (0)

/* exp(cumulative_logsumexp(lg - z, exclusive, !reverse) + x): one sign's
 * half of TF's _CumulativeLogsumexpGrad, lg = log(|dy|) where dy has that
 * sign (neg: negative), else the dtype's lowest */
static dgc_ref clse_half(dgc_gctx *c, int32_t fwd, dgc_ref dy, int neg,
                         dgc_ref lowest)
{
    dgc_ref x = FWD->inputs[0], z = R(fwd, 0);
    dgc_ref zero = dgc_grad_cst(c, fwd, "zero", 0.0, x); CHKR(zero);
    dgc_ref sel = neg ? MK("Less", Less, dy, zero)
                      : MK("Greater", Greater, dy, zero);
    CHKR(sel);
    dgc_ref mag = neg ? MK("Neg", Neg, dy) : dy; CHKR(mag);
    dgc_ref lg = MK("Log", Log, mag); CHKR(lg);
    dgc_ref w = MK("Select", SelectV2, sel, lg, lowest); CHKR(w);
    dgc_ref d = MK("Sub", Sub, w, z); CHKR(d);
    dgc_ref s = dgc_grad_mk_set(c, fwd, "CumulativeLogsumexp",
                                OP(CumulativeLogsumexp), &d, 1,
                                dgc_grad_set_cumsum, NULL);
    CHKR(s);
    dgc_ref e = MK("Add", Add, s, x); CHKR(e);
    return MK("Exp", Exp, e);
}

DGC_GRAD(CumulativeLogsumexp)
{
    DGC_GRAD_LOCALS;
    const dgc_ttype *t = dgc_grad_type(c, x);
    dgc_ref lowest = dgc_grad_cst(c, fwd, "lowest", t->dtype == DG_F32
                                  ? -FLT_MAX : -DBL_MAX, x);
    CHK(lowest);
    dgc_ref pos = clse_half(c, fwd, dy, 0, lowest); CHK(pos);
    dgc_ref neg = clse_half(c, fwd, dy, 1, lowest); CHK(neg);
    dx[0] = MK("Sub", Sub, pos, neg); CHK(dx[0]);
    return DG_OK;
}
