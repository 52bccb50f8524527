/*
 * kernels_cpu_matmul.c -- the CPU MatMul kernel: 2-D float32/float64
 * products (int32 / int64 by a plain loop) through dgr_cpu_gemm (oneDNN / OpenBLAS blocks over the
 * intra-op budget) honouring transpose_a / transpose_b; empty operands give
 * zeros.  _FusedMatMul (the fusion pass's MatMul + BiasAdd [+ Relu]) is the
 * same product with dgr_cpu_gemm's bias/Relu epilogue, applied to each
 * block of the output right after its GEMM, while it is in cache.
 */
#include "kernels_cpu.h"
#include "cpu_gemm.h"

#include <string.h>

/* The int32 / int64 product (TF's CPU kernels have them: Eigen's
 * contraction, wrapping on overflow), accumulated in uint64 so that the
 * wrap is defined; a plain triple loop. */
static void int_matmul(dgr_kctx *k, int ta, int tb, int64_t M, int64_t N,
                       int64_t K)
{
    const dgr_value *a = &k->in[0], *b = &k->in[1];
    int64_t lda = a->shape.dims[1], ldb = b->shape.dims[1];
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            uint64_t acc = 0;
            for (int64_t p = 0; p < K; p++)
                acc += (uint64_t)dgr_cpu_iat(a, ta ? p * lda + i : i * lda + p) *
                       (uint64_t)dgr_cpu_iat(b, tb ? j * ldb + p : p * ldb + j);
            dgr_cpu_iput(&k->out[0], i * N + j, (int64_t)acc);
        }
}

/* bias: NULL or n_bias elements (must be N) */
static dg_status matmul(dgr_kctx *k, const void *bias, int64_t n_bias,
                        int relu)
{
    const dgr_value *a = &k->in[0], *b = &k->in[1];
    int ta = dgc_attr_b(k->node, DGC_AT_transpose_a);
    int tb = dgc_attr_b(k->node, DGC_AT_transpose_b);
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
    int ints = !bias && (a->dtype == DG_I32 || a->dtype == DG_I64);
    if (a->dtype != b->dtype ||
        (a->dtype != DG_F32 && a->dtype != DG_F64 && !ints))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': no CPU MatMul kernel for %s x %s",
                      k->node->name, dg_dtype_name(a->dtype),
                      dg_dtype_name(b->dtype));
    if (bias && n_bias != N)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': bias has %lld elements for %lld columns",
                      k->node->name, (long long)n_bias, (long long)N);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    if (dg_shape_numel(&k->out[0].shape) != M * N)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MatMul output shape mismatch", k->node->name);
    if (M == 0 || N == 0)
        return DG_OK;
    if (ints) {
        int_matmul(k, ta, tb, M, N, K);
        return DG_OK;
    }
    dgr_cpu_gemm(k->dev->intra, a->dtype, ta, tb, M, N, K, dgr_cpu_ptr(a),
                 a->shape.dims[1], dgr_cpu_ptr(b), b->shape.dims[1],
                 dgr_cpu_ptr(&k->out[0]), N, bias, relu);
    return DG_OK;
}

dg_status dgr_k_matmul(dgr_kctx *k)
{
    return matmul(k, NULL, 0, 0);
}
DGR_KERNEL(MatMul, dgr_k_matmul);

dg_status dgr_k_fused_matmul(dgr_kctx *k)
{
    const dgr_value *b = &k->in[2];
    const dgc_attr *f = dgc_attr_at(k->node, DGC_AT_fused_ops);
    int relu = f && f->s && strstr(f->s, "Relu") != NULL;
    if (b->shape.rank != 1 || b->dtype != k->in[0].dtype)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': _FusedMatMul needs a rank-1 bias of the "
                      "operands' dtype", k->node->name);
    return matmul(k, dgr_cpu_ptr(b), b->shape.dims[0], relu);
}
DGR_KERNEL(_FusedMatMul, dgr_k_fused_matmul);
