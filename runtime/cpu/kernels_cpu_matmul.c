/*
 * kernels_cpu_matmul.c -- the CPU MatMul kernel: 2-D float32/float64
 * products through OpenBLAS (cblas_sgemm / cblas_dgemm) honouring
 * transpose_a / transpose_b; empty operands give zeros.
 */
#include "kernels_cpu.h"

#include <cblas.h>
#include <string.h>

dg_status dgr_k_matmul(dgr_kctx *k)
{
    const dgr_value *a = &k->in[0], *b = &k->in[1];
    int ta = dgc_attr_bool(k->node, "transpose_a", 0);
    int tb = dgc_attr_bool(k->node, "transpose_b", 0);
    if (a->shape.rank != 2 || b->shape.rank != 2)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MatMul needs rank-2 inputs, got ranks %d and %d",
                      k->node->name, a->shape.rank, b->shape.rank);
    int64_t M = ta ? a->shape.dims[1] : a->shape.dims[0];
    int64_t K = ta ? a->shape.dims[0] : a->shape.dims[1];
    int64_t K2 = tb ? b->shape.dims[1] : b->shape.dims[0];
    int64_t N = tb ? b->shape.dims[0] : b->shape.dims[1];
    if (K != K2)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MatMul inner dimensions differ (%lld vs %lld)",
                      k->node->name, (long long)K, (long long)K2);
    if (a->dtype != b->dtype || (a->dtype != DG_F32 && a->dtype != DG_F64))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': no CPU MatMul kernel for %s x %s",
                      k->node->name, dg_dtype_name(a->dtype),
                      dg_dtype_name(b->dtype));
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    if (dg_shape_numel(&k->out[0].shape) != M * N)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MatMul output shape mismatch", k->node->name);
    if (M == 0 || N == 0)
        return DG_OK;
    void *c = dgr_cpu_ptr(&k->out[0]);
    if (K == 0) {
        memset(c, 0, (size_t)(M * N) * dg_dtype_size(a->dtype));
        return DG_OK;
    }
    int lda = (int)a->shape.dims[1], ldb = (int)b->shape.dims[1];
    enum CBLAS_TRANSPOSE tra = ta ? CblasTrans : CblasNoTrans;
    enum CBLAS_TRANSPOSE trb = tb ? CblasTrans : CblasNoTrans;
    if (a->dtype == DG_F32)
        cblas_sgemm(CblasRowMajor, tra, trb, (int)M, (int)N, (int)K, 1.0f,
                    dgr_cpu_ptr(a), lda, dgr_cpu_ptr(b), ldb, 0.0f, c, (int)N);
    else
        cblas_dgemm(CblasRowMajor, tra, trb, (int)M, (int)N, (int)K, 1.0,
                    dgr_cpu_ptr(a), lda, dgr_cpu_ptr(b), ldb, 0.0, c, (int)N);
    return DG_OK;
}
