/*
 * cl_kernels_ops10c.c -- OpenCL launches of issue 22's ops10c group
 * (opencl_kernels/ops10c.cl): Diag and DiagPart, float types (the integer
 * ones run on the CPU), over the input's (Diag) or the output's
 * (DiagPart) n elements taken flat.
 */
#include "cl_internal.h"

static dg_status diag(dgr_kctx *k, int part)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK || (st = dgr_kctx_alloc_output(k, 0)) != DG_OK)
        return st;
    cl_long n = dg_shape_numel(part ? &k->out[0].shape : &k->in[0].shape);
    cl_long nn = n * n;
    if (n == 0)
        return DG_OK;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    if (part) {
        dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n)};
        return dgr_cl_launch1d(k, "ops10c", dt, "o10_diag_part", (size_t)n,
                               a, 3);
    }
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(nn), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "ops10c", dt, "o10_diag", (size_t)nn, a, 4);
}

dg_status dgr_cl_k_diag(dgr_kctx *k) { return diag(k, 0); }
DGR_KERNEL(Diag, dgr_cl_k_diag);
dg_status dgr_cl_k_diag_part(dgr_kctx *k) { return diag(k, 1); }
DGR_KERNEL(DiagPart, dgr_cl_k_diag_part);
