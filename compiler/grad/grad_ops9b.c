/*
 * grad_ops9b.c -- gradient rules of issue 22's ops9b group, following TF's
 * python gradients: MatrixBandPart (array_grad.py: the band of dy) and
 * Roll (manip_grad.py: dy rolled back by -shift), ReverseSequence
 * (array_grad.py: dy reversed the same way), TensorScatterUpdate/Add/Sub
 * (array_grad.py: dy through, or dy with the updated slices zeroed, for
 * the tensor; GatherNd(dy, indices), negated for Sub, for the updates),
 * MatrixDiagV3 / MatrixDiagPartV3 / MatrixSetDiagV3 (array_grad.py).  Their integer inputs
 * get no gradient.
 */
#include "grad_rule.h"
#include "attr_get.h"

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

/* the forward node's seq_dim and batch_dim */
static int set_revseq(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)arg;
    return dgc_node_set_int(n, "seq_dim", dgc_attr_i(FWD, DGC_AT_seq_dim)) ||
                   dgc_node_set_int(n, "batch_dim",
                                    dgc_attr_i(FWD, DGC_AT_batch_dim))
               ? -1
               : 0;
}

DGC_GRAD(ReverseSequence)
{
    DGC_GRAD_LOCALS;
    dx[0] = dgc_grad_mk_set(c, fwd, "ReverseSequence", OP(ReverseSequence),
                            (const dgc_ref[]){dy, FWD->inputs[1]}, 2,
                            set_revseq, NULL);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(TensorScatterUpdate)
{
    DGC_GRAD_LOCALS;
    dgc_ref ind = FWD->inputs[1], upd = FWD->inputs[2];
    if (NEED(0) && op == OP(TensorScatterUpdate)) {
        dgc_ref zu = MK("TensorScatterZeros", ZerosLike, upd);
        CHK(zu);
        dx[0] = MK("TensorScatterUpdate", TensorScatterUpdate, dy, ind, zu);
        CHK(dx[0]);
    } else if (NEED(0)) {
        dx[0] = dy;
    }
    if (NEED(2)) {
        dx[2] = MK("GatherNd", GatherNd, dy, ind);
        CHK(dx[2]);
        if (op == OP(TensorScatterSub)) {
            dx[2] = MK("TensorScatterNeg", Neg, dx[2]);
            CHK(dx[2]);
        }
    }
    return DG_OK;
}
DGC_GRAD_AS(TensorScatterAdd, TensorScatterUpdate);
DGC_GRAD_AS(TensorScatterSub, TensorScatterUpdate);

/* TF's _MatrixDiagV3Grad, _MatrixDiagPartV3Grad, _MatrixSetDiagV3Grad (one
 * diagonal k: align does not matter) */
DGC_GRAD(MatrixDiagV3)
{
    DGC_GRAD_LOCALS;
    dgc_ref zero = dgc_grad_cst(c, fwd, "DiagPad", 0, dy);
    CHK(zero);
    dx[0] = MK("MatrixDiagPartV3", MatrixDiagPartV3, dy, FWD->inputs[1], zero);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(MatrixDiagPartV3)
{
    DGC_GRAD_LOCALS;
    dgc_ref zx = MK("DiagZeros", ZerosLike, x);
    CHK(zx);
    dx[0] = MK("MatrixSetDiagV3", MatrixSetDiagV3, zx, dy, FWD->inputs[1]);
    CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(MatrixSetDiagV3)
{
    DGC_GRAD_LOCALS;
    dgc_ref kk = FWD->inputs[2];
    if (NEED(0)) {
        dgc_ref zd = MK("DiagZeros", ZerosLike, yv);
        CHK(zd);
        dx[0] = MK("MatrixSetDiagV3", MatrixSetDiagV3, dy, zd, kk);
        CHK(dx[0]);
    }
    if (NEED(1)) {
        dgc_ref zero = dgc_grad_cst(c, fwd, "DiagPad", 0, dy);
        CHK(zero);
        dx[1] = MK("MatrixDiagPartV3", MatrixDiagPartV3, dy, kk, zero);
        CHK(dx[1]);
    }
    return DG_OK;
}
