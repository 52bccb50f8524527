/*
 * cpu_gemm.c -- GEMM for the CPU kernels: the output is cut into row (or,
 * when it is wide and short, column) blocks whose size follows the shape
 * alone, never the thread count (issue 19: deterministic results), run on
 * the caller's thread budget; each block is a single-threaded library
 * call followed by the optional bias/Relu epilogue on the block while it
 * is in cache.  The library is chosen for the whole product.
 *
 * Library per shape (measured single-threaded on this machine, see
 * docs/decisions.md): float32 products of at least 2^20 multiply-adds go
 * to oneDNN's dnnl_sgemm (8-14% faster than OpenBLAS 0.3.21 on the MLP's
 * forward and gradient shapes, 2x on K = 10), smaller ones and float64 to
 * OpenBLAS (lower per-call overhead).  oneDNN is opened with dlopen when
 * a CPU device opens for many steps (train, run --repeat N > 1): its first
 * call costs ~30 ms of CPU (JIT and set-up) that one run of a graph would
 * not win back, and commands that run nothing (check, place) do not load
 * it at all.  Without libdnnl.so.2 every GEMM goes to OpenBLAS.
 */
#include "cpu_gemm.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Fixed blocks (issue 19): at least this many multiply-adds and rows (or
 * columns) per block.  Each extra block costs the library a repack of the
 * other operand: on the 784-1024-1024-10 MLP's shapes single-threaded,
 * 2 blocks of 512 cost +0-3%, 4 of 256 +3-10% (docs/decisions.md). */
#define GEMM_BLOCK_WORK (1 << 24)
#define GEMM_BLOCK_SIDE 512
/* Multiply-adds from which float32 goes to oneDNN. */
#define GEMM_DNNL_MIN (1 << 20)

typedef int (*dnnl_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float,
                             const float *, int64_t, const float *, int64_t,
                             float, float *, int64_t);
typedef void (*omp_threads_fn)(int);
static dnnl_sgemm_fn dnnl_sgemm_p;
static omp_threads_fn omp_set_threads_p;
static pthread_once_t dnnl_once = PTHREAD_ONCE_INIT;

static void dnnl_open(void)
{
    if (getenv("DGRUN_NO_DNNL"))
        return;
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
    omp_set_threads_p = (omp_threads_fn)dlsym(h, "omp_set_num_threads");
    dnnl_sgemm_p = (dnnl_sgemm_fn)dlsym(h, "dnnl_sgemm");
    if (!omp_set_threads_p)
        dnnl_sgemm_p = NULL; /* cannot keep its team at one thread */
}

void dgr_cpu_gemm_init(int dnnl)
{
    openblas_set_num_threads(1);
    if (dnnl)
        pthread_once(&dnnl_once, dnnl_open);
}

typedef struct gemm_job {
    dg_dtype dt;
    int ta, tb, by_rows, relu;
    int dnnl;          /* the library, chosen once for the whole product */
    int64_t M, N, K, lda, ldb, ldc, step, nblk;
    const char *A, *B;
    char *C;
    const char *bias;
} gemm_job;

/* oneDNN (OpenMP build) sizes its team from the calling thread's ICV: keep
 * every thread that calls it at one thread. */
static _Thread_local int dnnl_single;

static void gemm_call(const gemm_job *j, int64_t M, int64_t N,
                      const void *A, const void *B, void *C)
{
    if (j->dt == DG_F32) {
        if (j->dnnl) {
            if (!dnnl_single) {
                omp_set_threads_p(1);
                dnnl_single = 1;
            }
            dnnl_sgemm_p(j->ta ? 'T' : 'N', j->tb ? 'T' : 'N', M, N, j->K,
                         1.0f, A, j->lda, B, j->ldb, 0.0f, C, j->ldc);
            return;
        }
        cblas_sgemm(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans,
                    j->tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                    (int)j->K, 1.0f, A, (int)j->lda, B, (int)j->ldb, 0.0f, C,
                    (int)j->ldc);
    } else {
        cblas_dgemm(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans,
                    j->tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                    (int)j->K, 1.0, A, (int)j->lda, B, (int)j->ldb, 0.0, C,
                    (int)j->ldc);
    }
}

/* C block [M, N] at row stride ldc: += bias[0..N) per row, then relu
 * (NaN stays NaN, as the Relu kernel and TF). */
#define EPILOGUE(T)                                                          \
    for (int64_t r = 0; r < M; r++) {                                       \
        T *c = (T *)C + r * j->ldc;                                         \
        const T *bb = (const T *)bias;                                      \
        if (bb)                                                             \
            for (int64_t q = 0; q < N; q++)                                 \
                c[q] += bb[q];                                              \
        if (j->relu)                                                        \
            for (int64_t q = 0; q < N; q++)                                 \
                c[q] = c[q] < 0 ? 0 : c[q];                                 \
    }

static void gemm_epilogue(const gemm_job *j, int64_t M, int64_t N,
                          const void *bias, void *C)
{
    if (!bias && !j->relu)
        return;
    if (j->dt == DG_F32) {
        EPILOGUE(float)
    } else {
        EPILOGUE(double)
    }
}

static void gemm_block(void *arg, int64_t b, int64_t e)
{
    const gemm_job *j = arg;
    size_t es = j->dt == DG_F32 ? 4 : 8;
    for (int64_t blk = b; blk < e; blk++) {
        int64_t lo = blk * j->step;
        int64_t hi = lo + j->step;
        int64_t total = j->by_rows ? j->M : j->N;
        if (hi > total || blk == j->nblk - 1)
            hi = total; /* the last block takes the remainder */
        if (lo >= hi)
            continue;
        const char *A = j->A, *B = j->B, *bias = j->bias;
        char *C = j->C;
        int64_t M = j->M, N = j->N;
        if (j->by_rows) {
            A += (size_t)(j->ta ? lo : lo * j->lda) * es;
            C += (size_t)(lo * j->ldc) * es;
            M = hi - lo;
        } else {
            B += (size_t)(j->tb ? lo * j->ldb : lo) * es;
            C += (size_t)lo * es;
            if (bias)
                bias += (size_t)lo * es;
            N = hi - lo;
        }
        if (j->K > 0) {
            gemm_call(j, M, N, A, B, C);
        } else {
            for (int64_t r = 0; r < M; r++)
                memset(C + (size_t)(r * j->ldc) * es, 0, (size_t)N * es);
        }
        gemm_epilogue(j, M, N, bias, C);
    }
}

void dgr_cpu_gemm(struct dgr_pool *pool, dg_dtype dt, int ta, int tb,
                  int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                  const void *B, int64_t ldb, void *C, int64_t ldc,
                  const void *bias, int relu)
{
    gemm_job j = {.dt = dt, .ta = ta, .tb = tb, .relu = relu, .M = M,
                  .N = N, .K = K, .lda = lda, .ldb = ldb, .ldc = ldc,
                  .A = A, .B = B, .C = C, .bias = bias};
    int64_t work = M * N * (K > 0 ? K : 1);
    /* the library by the whole product's shape, never by a block's: a
     * block size that follows the thread budget must not switch library
     * (their float32 sums differ; issue 19) */
    j.dnnl = dt == DG_F32 && dnnl_sgemm_p && work >= GEMM_DNNL_MIN;
    /* Blocks fixed by the shape, never by the thread budget: neither
     * library computes an element of C the same way in a call for a block
     * as in a call for the whole (their blocking and kernel choice follow
     * M and N; tests/runtime/test_cpu_gemm.c), so a cut that followed the
     * free threads gave other bits from run to run (issue 19).  The longer
     * side is cut into blocks of a multiple of 16 (the kernels' panels)
     * of at least GEMM_BLOCK_SIDE and GEMM_BLOCK_WORK multiply-adds, the
     * last block taking the remainder; the pool runs them on at most the
     * budget's threads.  So a product uses at most side / 512 threads. */
    j.by_rows = M >= N;
    int64_t side = j.by_rows ? M : N;
    int64_t parts = work / GEMM_BLOCK_WORK;
    if (parts > side / GEMM_BLOCK_SIDE)
        parts = side / GEMM_BLOCK_SIDE;
    if (parts < 1)
        parts = 1;
    int64_t step = side;
    if (parts > 1) {
        step = (side + parts - 1) / parts;
        step = (step + 15) / 16 * 16;
    }
    j.step = step > 0 ? step : 1;
    j.nblk = (side + j.step - 1) / j.step;
    if (j.nblk > 1 && side - (j.nblk - 1) * j.step < 16)
        j.nblk--; /* a sliver joins the block before it */
    if (j.nblk <= 1) {
        j.nblk = 1;
        gemm_block(&j, 0, 1);
    } else {
        dgr_parallel_for(pool, j.nblk, 1, gemm_block, &j);
    }
}
