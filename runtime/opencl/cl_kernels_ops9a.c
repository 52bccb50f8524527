/*
 * cl_kernels_ops9a.c -- OpenCL launches of the ops9a ops (issue 22) whose
 * kernels are no generic shape: ClipByValue (opencl_kernels/ops9a.cl; the
 * inverse hyperbolic functions there need no C: the unary launcher),
 * EnsureShape (its check, then x itself).  CheckNumerics runs in host
 * memory (dgr_cl_host_ops).
 */
#include "cl_internal.h"
#include "dg_util.h"
#include "infer.h"

/* t clipped to [lo, hi]; each bound a scalar or of t's shape (TF) */
dg_status dgr_cl_k_clip_by_value(dgr_kctx *k)
{
    static const char *const what[3] = {"t", "clip_value_min",
                                        "clip_value_max"};
    dg_dtype dt = k->in[0].dtype;
    cl_long step[3] = {1, 1, 1};
    for (int i = 1; i < 3; i++) {
        const dg_shape *b = &k->in[i].shape;
        if (b->rank == 0) {
            step[i] = 0;
        } else if (!dg_shape_same(b, &k->in[0].shape)) {
            char ts[128], bs[128];
            dg_shape_format(&k->in[0].shape, ts, sizeof ts);
            dg_shape_format(b, bs, sizeof bs);
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s must be a "
                          "scalar or of t's shape %s, got %s", k->node->name,
                          what[i], ts, bs);
        }
    }
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_long n = dg_shape_numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    cl_mem t = dgr_cl_mem(&k->in[0]), lo = dgr_cl_mem(&k->in[1]),
           hi = dgr_cl_mem(&k->in[2]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(t), DGR_ARG(lo), DGR_ARG(hi), DGR_ARG(y),
                      DGR_ARG(n), DGR_ARG(step[1]), DGR_ARG(step[2])};
    return dgr_cl_launch1d(k, "ops9a", dt, "clip_by_value", (size_t)n, a, 7);
}
DGR_KERNEL(ClipByValue, dgr_cl_k_clip_by_value);

/* x itself, when its shape fits attr shape */
dg_status dgr_cl_k_ensure_shape(dgr_kctx *k)
{
    char msg[512];
    if (dgc_ensure_shape_check(k->node, &k->in[0].shape, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': EnsureShape: %s",
                      k->node->name, msg);
    return dgr_cl_k_alias(k);
}
DGR_KERNEL(EnsureShape, dgr_cl_k_ensure_shape);
