/*
 * cl_kernels_ops9a.c -- OpenCL launches of the ops9a ops (issue 22) whose
 * kernels are no generic shape: ClipByValue (opencl_kernels/ops9a.cl; the
 * inverse hyperbolic functions there need no C: the unary launcher),
 * EnsureShape (its check, then x itself), CheckNumerics (a flag the
 * elements OR into, read back: then x itself).
 */
#include "cl_internal.h"
#include "dg_util.h"
#include "infer.h"

/* t clipped to [lo, hi]; each bound a scalar or of t's shape (TF) */
dg_status dgr_cl_k_clip_by_value(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    int64_t s64[2];
    char msg[512];
    if (dgc_clip_bounds_check(&k->in[0].shape, &k->in[1].shape,
                              &k->in[2].shape, s64, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    cl_long sl = s64[0], sh = s64[1];
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_long n = dg_shape_numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    cl_mem t = dgr_cl_mem(&k->in[0]), lo = dgr_cl_mem(&k->in[1]),
           hi = dgr_cl_mem(&k->in[2]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(t), DGR_ARG(lo), DGR_ARG(hi), DGR_ARG(y),
                      DGR_ARG(n), DGR_ARG(sl), DGR_ARG(sh)};
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

/* x itself, when it has no NaN or Inf: the flag of ops9a.cl's
 * check_numerics, read back (as the CPU kernel's message) */
dg_status dgr_cl_k_check_numerics(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    cl_long n = dg_shape_numel(&k->in[0].shape);
    if (n > 0) {
        dgr_buffer *fb = dgr_buffer_new(k->dev, sizeof(cl_int), k->stream,
                                        k->err);
        if (!fb)
            return k->err->code ? k->err->code : DG_E_NOMEM;
        cl_mem x = dgr_cl_mem(&k->in[0]), f = (cl_mem)fb->mem;
        dgr_cl_arg a0[] = {DGR_ARG(f)};
        dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(n), DGR_ARG(f)};
        cl_int flag = 0;
        dg_status st = dgr_cl_launch1d(k, "ops9a", dt, "check_numerics_init",
                                       1, a0, 1);
        if (st == DG_OK)
            st = dgr_cl_launch1d(k, "ops9a", dt, "check_numerics", (size_t)n,
                                 a, 3);
        if (st == DG_OK)
            st = dgr_cl_read(k->dev, fb, &flag, sizeof flag, k->err);
        dgr_buffer_release(fb);
        if (st != DG_OK)
            return st;
        if (flag)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s : Tensor had "
                          "%s values", k->node->name,
                          dgc_attr_str(k->node, DGC_AT_message),
                          flag & 1 ? "NaN" : "Inf");
    }
    return dgr_cl_k_alias(k);
}
DGR_KERNEL(CheckNumerics, dgr_cl_k_check_numerics);
