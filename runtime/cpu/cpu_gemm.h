/*
 * cpu_gemm.h -- the CPU backend's one GEMM entry: row-major products of
 * float32/float64 matrices, split into one block per intra-op pool thread
 * (run on the caller's thread budget), each block a single-threaded call of
 * the library measured
 * fastest for its shape (oneDNN's dnnl_sgemm or OpenBLAS; docs/decisions.md).
 */
#ifndef DGR_CPU_GEMM_H
#define DGR_CPU_GEMM_H

#include <stdint.h>

#include "dgrun.h"
#include "threadpool.h"

/* Make the BLAS libraries single-threaded for the process (we split GEMMs
 * ourselves): OpenBLAS's and oneDNN's own threads would spin against our
 * pools; with dnnl != 0, also open oneDNN (dlopen, once per process) so
 * large float32 GEMMs use it from then on.  Idempotent, thread-safe;
 * called when a CPU device opens.  Until oneDNN is open dgr_cpu_gemm uses
 * OpenBLAS only.  DGRUN_NO_DNNL in the environment keeps oneDNN closed. */
void dgr_cpu_gemm_init(int dnnl);

/* C[M,N] = op(A)[M,K] * op(B)[K,N] (+ bias[N] per row when bias, then
 * max(0, .) when relu), op = transpose when ta/tb.  dt DG_F32 or DG_F64
 * (A, B, C, bias all of dt); lda/ldb/ldc are row strides in elements.
 * M, N > 0; K == 0 gives bias (or zeros).  Uses at most
 * dgr_pool_budget(pool) threads. */
void dgr_cpu_gemm(struct dgr_pool *pool, dg_dtype dt, int ta, int tb,
                  int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                  const void *B, int64_t ldb, void *C, int64_t ldc,
                  const void *bias, int relu);

#endif
