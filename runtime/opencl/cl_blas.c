/*
 * cl_blas.c -- MatMul on OpenCL devices through clBLAST (row-major
 * CLBlastSgemm / CLBlastDgemm, every transpose flag).  The first call in a
 * process compiles clBLAST's kernels (slow with a cold cache); clBLAST keeps
 * its own cache afterwards.  Calls are serialised process-wide (clBLAST
 * is not thread-safe; with several queues per device they overlap more).
 */
#include "cl_internal.h"
#include "dg_alloc.h"

#include <clblast_c.h>
#include <pthread.h>

static pthread_mutex_t blas_lock = PTHREAD_MUTEX_INITIALIZER;

dg_status dgr_cl_matmul(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    if (!(dt == DG_F32 || (dt == DG_F64 && dgr_cl_devof(k)->c->fp64)))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MatMul has no OpenCL kernel for %s",
                      k->node->name, dg_dtype_name(dt));
    const dg_shape *as = &k->in[0].shape, *bs = &k->in[1].shape;
    if (as->rank != 2 || bs->rank != 2)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MatMul needs rank-2 inputs", k->node->name);
    int ta = dgc_attr_b(k->node, DGC_AT_transpose_a);
    int tb = dgc_attr_b(k->node, DGC_AT_transpose_b);
    size_t m = (size_t)(ta ? as->dims[1] : as->dims[0]);
    size_t kk = (size_t)(ta ? as->dims[0] : as->dims[1]);
    size_t kb = (size_t)(tb ? bs->dims[1] : bs->dims[0]);
    size_t n = (size_t)(tb ? bs->dims[0] : bs->dims[1]);
    if (kk != kb)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MatMul inner dimensions %zu and %zu differ",
                      k->node->name, kk, kb);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    cl_mem a = dgr_cl_mem(&k->in[0]), b = dgr_cl_mem(&k->in[1]),
           c = dgr_cl_mem(&k->out[0]);
    if (m == 0 || n == 0)
        return DG_OK;
    cl_event ev = NULL;
    cl_command_queue q = dgr_cl_queue(k);
    if (kk == 0) {
        cl_uchar zero = 0;
        const cl_event *wl;
        cl_uint nw = dgr_cl_take_waits(k, &wl);
        cl_int e = clEnqueueFillBuffer(q, c, &zero, 1, 0,
                                       m * n * dg_dtype_size(dt), nw, wl,
                                       dgr_cl_want_event(k) ? &ev : NULL);
        return dgr_cl_enqueued(k, "clEnqueueFillBuffer", e, wl, nw, ev);
    }
    size_t lda = (size_t)as->dims[1], ldb = (size_t)bs->dims[1];
    return dgr_cl_gemm(k, dt, ta, tb, m, n, kk, a, 0, lda, b, 0, ldb, 0.0, c,
                       0, n);
}
DGR_KERNEL(MatMul, dgr_cl_matmul);

void dgr_cl_blas_clear(void)
{
    if (!dgr_cl_blas_loaded())
        return;
    pthread_mutex_lock(&blas_lock);
    CLBlastClearCache();
    pthread_mutex_unlock(&blas_lock);
}

dg_status dgr_cl_gemm(dgr_kctx *k, dg_dtype dt, int ta, int tb, size_t m,
                      size_t n, size_t kk, cl_mem a, size_t aoff, size_t lda,
                      cl_mem b, size_t boff, size_t ldb, double beta, cl_mem c,
                      size_t coff, size_t ldc)
{
    CLBlastTranspose A = ta ? CLBlastTransposeYes : CLBlastTransposeNo;
    CLBlastTranspose B = tb ? CLBlastTransposeYes : CLBlastTransposeNo;
    /* clBLAST takes no wait list: a barrier for producers on other queues */
    dg_status st = dgr_cl_flush_waits(k);
    if (st != DG_OK)
        return st;
    cl_event ev = NULL;
    cl_command_queue q = dgr_cl_queue(k);
    CLBlastStatusCode s;
    /* clBLAST's routine set-up (clblast::Database) is not safe for
     * concurrent calls, even on different contexts (ASan: use after free
     * inside Database::Database); the calls only enqueue: serialise them */
    pthread_mutex_lock(&blas_lock);
    dgr_cl_ctx *cx = dgr_cl_devof(k)->c;
    int bit = dt == DG_F64 ? 2 : 1; /* first call per precision compiles */
    int cold = !(cx->blas_warm & bit);
    /* the first call per precision compiles clBLAST's kernels: what the
     * implementation prints then is captured like our own builds' */
    dgr_cl_capture cap = {-1, -1};
    if (cold) {
        dgr_cl_build_notice(cx, 1, "clBLAST", NULL);
        dgr_cl_capture_begin(&cap);
    }
    if (dt == DG_F64)
        s = CLBlastDgemm(CLBlastLayoutRowMajor, A, B, m, n, kk, 1.0, a, aoff,
                         lda, b, boff, ldb, beta, c, coff, ldc, &q,
                         dgr_cl_want_event(k) ? &ev : NULL);
    else
        s = CLBlastSgemm(CLBlastLayoutRowMajor, A, B, m, n, kk, 1.0f, a, aoff,
                         lda, b, boff, ldb, (float)beta, c, coff, ldc, &q,
                         dgr_cl_want_event(k) ? &ev : NULL);
    if (cold) {
        char *out = dgr_cl_capture_end(&cap);
        cx->blas_warm |= bit;
        dgr_cl_build_notice(cx, 0, "clBLAST", out ? out : "");
        dg_free(out);
    }
    pthread_mutex_unlock(&blas_lock);
    if (s != CLBlastSuccess) {
        if ((int)s < 0 && (int)s > -1000)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': CLBlast%cgemm failed: %s (%d)",
                          k->node->name, dt == DG_F64 ? 'D' : 'S',
                          dgr_cl_errname((cl_int)s), (int)s);
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': CLBlast%cgemm failed: clBLAST status %d",
                      k->node->name, dt == DG_F64 ? 'D' : 'S', (int)s);
    }
    dgr_cl_set_event(k, ev);
    return DG_OK;
}
