/*
 * cl_kernels_ops10b.c -- OpenCL launches of the ops10b ops (issue 22)
 * whose kernels are no generic shape: ApproximateEqual (float in, bool
 * out; opencl_kernels/ops10b.cl; its unary special functions need no C:
 * the unary launcher).
 */
#include "cl_internal.h"
#include "attr_get.h"
#include "dg_util.h"

/* |x - y| < tolerance, x and y of one shape (checked at compile time) */
dg_status dgr_cl_k_approximate_equal(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    cl_long n = dg_shape_numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    cl_float tol = (cl_float)dgc_attr_f(k->node, DGC_AT_tolerance);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->in[1]),
           z = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(z), DGR_ARG(n),
                      DGR_ARG(tol)};
    return dgr_cl_launch1d(k, "ops10b", dt, "approximate_equal", (size_t)n,
                           a, 5);
}
DGR_KERNEL(ApproximateEqual, dgr_cl_k_approximate_equal);
