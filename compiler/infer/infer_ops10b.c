/*
 * infer_ops10b.c -- shape functions of issue 22's ops10b group:
 * ApproximateEqual (x and y of one shape, as TF: no broadcasting; bool).
 */
#include "infer.h"

int dgc_infer_approximate_equal(DGC_INFER_ARGS)
{
    if (dgc_infer_grad_pair(n, in, n_in, out, msg, msgsz))
        return -1;
    out[0].dtype = DG_BOOL;
    return 0;
}
