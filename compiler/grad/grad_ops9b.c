/*
 * grad_ops9b.c -- gradient rules of issue 22's ops9b group, following TF's
 * python gradients: MatrixBandPart (array_grad.py: the band of dy) and
 * Roll (manip_grad.py: dy rolled back by -shift).  Their integer inputs
 * get no gradient.
 */
#include "grad_rule.h"

DGC_GRAD(MatrixBandPart)
{
    DGC_GRAD_LOCALS;
    dx[0] = MK("MatrixBandPart", MatrixBandPart, dy, FWD->inputs[1],
               FWD->inputs[2]);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(Roll)
{
    DGC_GRAD_LOCALS;
    dgc_ref back = MK("RollShift", Neg, FWD->inputs[1]);
    CHK(back);
    dx[0] = MK("Roll", Roll, dy, back, FWD->inputs[2]);
    CHK(dx[0]);
    return DG_OK;
}
