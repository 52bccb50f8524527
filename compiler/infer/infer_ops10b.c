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

/* seed input 1 (of n_in == want): an int32/int64 [2] */
static int seed_ok(const dgc_ttype *in, int n_in, int want, char *msg,
                   size_t msgsz)
{
    if (n_in != want) {
        snprintf(msg, msgsz, "needs %d inputs, got %d", want, n_in);
        return 0;
    }
    const dgc_ttype *s = &in[1];
    if ((s->dtype != DG_I32 && s->dtype != DG_I64) || s->shape.rank != 1 ||
        (s->shape.dims[0] >= 0 && s->shape.dims[0] != 2)) {
        snprintf(msg, msgsz, "seed must be an int32/int64 vector of 2 "
                 "elements");
        return 0;
    }
    return 1;
}

int dgc_infer_stateless_random(DGC_INFER_ARGS)
{
    if (!seed_ok(in, n_in, 2, msg, msgsz))
        return -1;
    return dgc_infer_random(n, in, 1, out, msg, msgsz);
}

int dgc_infer_stateless_random_int(DGC_INFER_ARGS)
{
    if (!seed_ok(in, n_in, 4, msg, msgsz))
        return -1;
    dgc_ttype rest[3] = {in[0], in[2], in[3]};
    return dgc_infer_random_int(n, rest, 3, out, msg, msgsz);
}
