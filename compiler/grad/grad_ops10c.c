/*
 * grad_ops10c.c -- gradient rules of issue 22's ops10c group, following
 * TF's python gradients: Diag / DiagPart (array_grad.py: each other's of
 * dy), SpaceToBatch (array_grad.py: BatchToSpace of dy, here
 * BatchToSpaceND with block_shape [block_size, block_size]) and
 * NthElement (nn_grad.py: dy shared evenly by the entries equal to the
 * output).  Integer inputs get no gradient.
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
