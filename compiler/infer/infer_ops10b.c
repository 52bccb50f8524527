/*
 * infer_ops10b.c -- shape functions of issue 22's ops10b group:
 * ApproximateEqual (x and y of one shape, as TF: no broadcasting; bool)
 * and the stateless random ops (RandomUniform's shape input, a seed pair).
 */
#include "infer.h"

#include <stdio.h>

int dgc_infer_approximate_equal(DGC_INFER_ARGS)
{
    if (dgc_infer_grad_pair(n, in, n_in, out, msg, msgsz))
        return -1;
    out[0].dtype = DG_BOOL;
    return 0;
}

int dgc_infer_stateless_random(DGC_INFER_ARGS)
{
    if (n_in != 2) {
        snprintf(msg, msgsz, "needs 2 inputs (shape, seed), got %d", n_in);
        return -1;
    }
    const dgc_ttype *s = &in[1];
    if ((s->dtype != DG_I32 && s->dtype != DG_I64) || s->shape.rank != 1 ||
        (s->shape.dims[0] >= 0 && s->shape.dims[0] != 2)) {
        snprintf(msg, msgsz, "seed must be an int32/int64 vector of 2 "
                 "elements");
        return -1;
    }
    return dgc_infer_random(n, in, 1, out, msg, msgsz);
}
