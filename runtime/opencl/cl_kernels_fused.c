/*
 * cl_kernels_fused.c -- OpenCL kernels of the fusion pass's ops (issue 16):
 * _FusedMatMul = the clBLAST GEMM of MatMul (dgr_cl_matmul, same checks and
 * transposes) followed by one epilogue kernel adding the bias and applying
 * the Relu in place (fused.cl), on the same in-order queue.
 */
#include "cl_internal.h"

#include <string.h>

dg_status dgr_cl_fused_matmul(dgr_kctx *k)
{
    const dgr_value *bv = &k->in[2];
    dg_dtype dt = k->in[0].dtype;
    if (bv->shape.rank != 1 || bv->dtype != dt)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': _FusedMatMul needs a rank-1 bias of the "
                      "operands' dtype", k->node->name);
    int tb = dgc_attr_b(k->node, DGC_AT_transpose_b);
    const dg_shape *bs = &k->in[1].shape;
    if (bs->rank == 2 && bs->dims[tb ? 0 : 1] != bv->shape.dims[0])
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': bias has %lld elements for %lld columns",
                      k->node->name, (long long)bv->shape.dims[0],
                      (long long)bs->dims[tb ? 0 : 1]);
    dg_status st = dgr_cl_matmul(k);
    if (st != DG_OK)
        return st;
    const dg_shape *os = &k->out[0].shape;
    cl_long n = dg_shape_numel(os), cols = bv->shape.dims[0];
    if (n == 0)
        return DG_OK;
    const dgc_attr *f = dgc_attr_at(k->node, DGC_AT_fused_ops);
    cl_int relu = f && f->s && strstr(f->s, "Relu") != NULL;
    cl_mem y = dgr_cl_mem(&k->out[0]), b = dgr_cl_mem(bv);
    dgr_cl_arg a[] = {DGR_ARG(y), DGR_ARG(b), DGR_ARG(n), DGR_ARG(cols),
                      DGR_ARG(relu)};
    return dgr_cl_launch1d(k, "fused", dt, "bias_relu", (size_t)n, a, 5);
}
DGR_KERNEL(_FusedMatMul, dgr_cl_fused_matmul);
