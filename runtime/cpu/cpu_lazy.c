/*
 * cpu_lazy.c -- OpenBLAS and oneDNN, loaded on first use
 * (runtime/core/lazylib.h): the BLAS, oneDNN and OpenMP functions the CPU
 * kernels call, defined here with their headers' exact prototypes, each
 * loading its library on first call.  dgrun does not link these
 * libraries, so commands that run no kernel (check, place, ops, devices)
 * neither load them nor run their load-time initialisation (OpenBLAS
 * starts its thread pool, oneDNN and libgomp theirs; docs/decisions.md).
 *
 * A new call into one of these libraries needs its definition here (the
 * link fails until it has one): copy the prototype from the header, body
 * DGR_LAZY_FN(lib, name) and the call of fn_.
 */
#include <cblas.h>
#include <stdlib.h>

#include "lazylib.h"
#include "cpu_lapack.h"

/* oneDNN's OpenMP team threads wait passively between parallel regions
 * (issue 23): libgomp's default spins up to 300,000 rounds first, and a
 * spinning team thread takes the core that dgrun's own threads (the
 * intra-op pool, the other inter-op worker) or another process need; on a
 * loaded 2-core machine a 40 us convolution took 5-10 ms.  libgomp reads
 * its settings once, when it is loaded (with oneDNN, lazily), and has no
 * call to change them after, so this is set in the environment at start-up
 * -- only when the user set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT. */
__attribute__((constructor)) static void quiet_math_threads(void)
{
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
        setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    /* OpenBLAS (pthread build) starts ncores - 1 server threads when it is
     * loaded, and each spins in sched_yield for ~2^28 cycles (~0.1 s)
     * before it sleeps: a core taken for ~0.1 s from every run that
     * reaches a small GEMM (issue 23, session 8: found with perf; the
     * benchmark's CPU per run at 1 thread was up to 2x its wall).  dgrun
     * calls it single-threaded anyway (cpu_gemm.c sets 1 thread before its
     * first call), so it is told at load: no server threads at all.  Only
     * when the user set no OpenBLAS thread count. */
    if (!getenv("OPENBLAS_NUM_THREADS") && !getenv("GOTO_NUM_THREADS"))
        setenv("OPENBLAS_NUM_THREADS", "1", 0);
}

/* DGR_OPENBLAS_PATH: the library the build found (meson.build) */
static const char *const openblas_names[] = {
#ifdef DGR_OPENBLAS_PATH
    DGR_OPENBLAS_PATH,
#endif
    "libopenblas.so.0", "libopenblas.so", NULL};
static dgr_lazylib openblas_lib = DGR_LAZYLIB_INIT("OpenBLAS", openblas_names);

void
cblas_sgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
            const enum CBLAS_TRANSPOSE TransB, const blasint M,
            const blasint N, const blasint K, const float alpha,
            const float *A, const blasint lda, const float *B,
            const blasint ldb, const float beta, float *C, const blasint ldc)
{
    DGR_LAZY_FN(openblas_lib, cblas_sgemm);
    fn_(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void
cblas_dgemm(const enum CBLAS_ORDER Order, const enum CBLAS_TRANSPOSE TransA,
            const enum CBLAS_TRANSPOSE TransB, const blasint M,
            const blasint N, const blasint K, const double alpha,
            const double *A, const blasint lda, const double *B,
            const blasint ldb, const double beta, double *C, const blasint ldc)
{
    DGR_LAZY_FN(openblas_lib, cblas_dgemm);
    fn_(Order, TransA, TransB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void
openblas_set_num_threads(int num_threads)
{
    DGR_LAZY_FN(openblas_lib, openblas_set_num_threads);
    fn_(num_threads);
}


#ifdef DGR_HAVE_DNNL
/* ---- oneDNN (and the OpenMP runtime it brings) ---------------------------- */

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

static const char *const dnnl_names[] = {"libdnnl.so.2", "libdnnl.so", NULL};
/* DGRUN_DNNL_LIBRARY: the one path to load instead (tests: a missing one) */
static dgr_lazylib dnnl_lib =
    DGR_LAZYLIB_INIT_ENV("oneDNN", dnnl_names, "DGRUN_DNNL_LIBRARY");

/* oneDNN is optional at run time: where libdnnl.so.2 cannot be loaded the
 * convolution and pooling kernels use dgrun's own loops (as cpu_gemm.c
 * uses OpenBLAS), instead of aborting on the first call. */
int dgr_dnnl_lib_open(void) { return dgr_lazylib_open(&dnnl_lib) != NULL; }

dnnl_status_t
dnnl_dilated_convolution_backward_data_desc_init(dnnl_convolution_desc_t *conv_desc,
                                                 dnnl_alg_kind_t alg_kind,
                                                 const dnnl_memory_desc_t *diff_src_desc,
                                                 const dnnl_memory_desc_t *weights_desc,
                                                 const dnnl_memory_desc_t *diff_dst_desc,
                                                 const dnnl_dims_t strides,
                                                 const dnnl_dims_t dilates,
                                                 const dnnl_dims_t padding_l,
                                                 const dnnl_dims_t padding_r)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_dilated_convolution_backward_data_desc_init);
    return fn_(conv_desc, alg_kind, diff_src_desc, weights_desc, diff_dst_desc,
        strides, dilates, padding_l, padding_r);
}

dnnl_status_t
dnnl_dilated_convolution_backward_weights_desc_init(dnnl_convolution_desc_t *conv_desc,
                                                    dnnl_alg_kind_t alg_kind,
                                                    const dnnl_memory_desc_t *src_desc,
                                                    const dnnl_memory_desc_t *diff_weights_desc,
                                                    const dnnl_memory_desc_t *diff_bias_desc,
                                                    const dnnl_memory_desc_t *diff_dst_desc,
                                                    const dnnl_dims_t strides,
                                                    const dnnl_dims_t dilates,
                                                    const dnnl_dims_t padding_l,
                                                    const dnnl_dims_t padding_r)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_dilated_convolution_backward_weights_desc_init);
    return fn_(conv_desc, alg_kind, src_desc, diff_weights_desc,
        diff_bias_desc, diff_dst_desc, strides, dilates, padding_l, padding_r);
}

dnnl_status_t
dnnl_dilated_convolution_forward_desc_init(dnnl_convolution_desc_t *conv_desc,
                                           dnnl_prop_kind_t prop_kind,
                                           dnnl_alg_kind_t alg_kind,
                                           const dnnl_memory_desc_t *src_desc,
                                           const dnnl_memory_desc_t *weights_desc,
                                           const dnnl_memory_desc_t *bias_desc,
                                           const dnnl_memory_desc_t *dst_desc,
                                           const dnnl_dims_t strides,
                                           const dnnl_dims_t dilates,
                                           const dnnl_dims_t padding_l,
                                           const dnnl_dims_t padding_r)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_dilated_convolution_forward_desc_init);
    return fn_(conv_desc, prop_kind, alg_kind, src_desc, weights_desc,
        bias_desc, dst_desc, strides, dilates, padding_l, padding_r);
}

dnnl_status_t
dnnl_engine_create(dnnl_engine_t *engine, dnnl_engine_kind_t kind,
                   size_t index)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_engine_create);
    return fn_(engine, kind, index);
}

dnnl_status_t
dnnl_memory_create(dnnl_memory_t *memory,
                   const dnnl_memory_desc_t *memory_desc, dnnl_engine_t engine,
                   void *handle)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_memory_create);
    return fn_(memory, memory_desc, engine, handle);
}

size_t
dnnl_memory_desc_get_size(const dnnl_memory_desc_t *memory_desc)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_memory_desc_get_size);
    return fn_(memory_desc);
}

dnnl_status_t
dnnl_memory_desc_init_by_strides(dnnl_memory_desc_t *memory_desc, int ndims,
                                 const dnnl_dims_t dims,
                                 dnnl_data_type_t data_type,
                                 const dnnl_dims_t strides)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_memory_desc_init_by_strides);
    return fn_(memory_desc, ndims, dims, data_type, strides);
}

int
dnnl_memory_desc_equal(const dnnl_memory_desc_t *lhs,
                       const dnnl_memory_desc_t *rhs)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_memory_desc_equal);
    return fn_(lhs, rhs);
}

dnnl_status_t
dnnl_memory_desc_init_by_tag(dnnl_memory_desc_t *memory_desc, int ndims,
                             const dnnl_dims_t dims,
                             dnnl_data_type_t data_type,
                             dnnl_format_tag_t tag)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_memory_desc_init_by_tag);
    return fn_(memory_desc, ndims, dims, data_type, tag);
}

dnnl_status_t
dnnl_reorder_primitive_desc_create(dnnl_primitive_desc_t *reorder_primitive_desc,
                                   const dnnl_memory_desc_t *src_desc,
                                   dnnl_engine_t src_engine,
                                   const dnnl_memory_desc_t *dst_desc,
                                   dnnl_engine_t dst_engine,
                                   const_dnnl_primitive_attr_t attr)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_reorder_primitive_desc_create);
    return fn_(reorder_primitive_desc, src_desc, src_engine, dst_desc,
               dst_engine, attr);
}

dnnl_status_t
dnnl_memory_set_data_handle(dnnl_memory_t memory, void *handle)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_memory_set_data_handle);
    return fn_(memory, handle);
}

dnnl_status_t
dnnl_memory_destroy(dnnl_memory_t memory)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_memory_destroy);
    return fn_(memory);
}

dnnl_status_t
dnnl_pooling_v2_backward_desc_init(dnnl_pooling_v2_desc_t *pool_desc,
                                   dnnl_alg_kind_t alg_kind,
                                   const dnnl_memory_desc_t *diff_src_desc,
                                   const dnnl_memory_desc_t *diff_dst_desc,
                                   const dnnl_dims_t strides,
                                   const dnnl_dims_t kernel,
                                   const dnnl_dims_t dilation,
                                   const dnnl_dims_t padding_l,
                                   const dnnl_dims_t padding_r)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_pooling_v2_backward_desc_init);
    return fn_(pool_desc, alg_kind, diff_src_desc, diff_dst_desc, strides,
        kernel, dilation, padding_l, padding_r);
}

dnnl_status_t
dnnl_eltwise_forward_desc_init(dnnl_eltwise_desc_t *eltwise_desc,
                               dnnl_prop_kind_t prop_kind,
                               dnnl_alg_kind_t alg_kind,
                               const dnnl_memory_desc_t *data_desc,
                               float alpha, float beta)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_eltwise_forward_desc_init);
    return fn_(eltwise_desc, prop_kind, alg_kind, data_desc, alpha, beta);
}

dnnl_status_t
dnnl_softmax_forward_desc_init(dnnl_softmax_desc_t *softmax_desc,
                               dnnl_prop_kind_t prop_kind,
                               const dnnl_memory_desc_t *data_desc,
                               int softmax_axis)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_softmax_forward_desc_init);
    return fn_(softmax_desc, prop_kind, data_desc, softmax_axis);
}

dnnl_status_t
dnnl_pooling_v2_forward_desc_init(dnnl_pooling_v2_desc_t *pool_desc,
                                  dnnl_prop_kind_t prop_kind,
                                  dnnl_alg_kind_t alg_kind,
                                  const dnnl_memory_desc_t *src_desc,
                                  const dnnl_memory_desc_t *dst_desc,
                                  const dnnl_dims_t strides,
                                  const dnnl_dims_t kernel,
                                  const dnnl_dims_t dilation,
                                  const dnnl_dims_t padding_l,
                                  const dnnl_dims_t padding_r)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_pooling_v2_forward_desc_init);
    return fn_(pool_desc, prop_kind, alg_kind, src_desc, dst_desc, strides,
        kernel, dilation, padding_l, padding_r);
}

dnnl_status_t
dnnl_primitive_attr_create(dnnl_primitive_attr_t *attr)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_attr_create);
    return fn_(attr);
}

dnnl_status_t
dnnl_primitive_attr_destroy(dnnl_primitive_attr_t attr)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_attr_destroy);
    return fn_(attr);
}

dnnl_status_t
dnnl_primitive_attr_set_post_ops(dnnl_primitive_attr_t attr,
                                 const_dnnl_post_ops_t post_ops)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_attr_set_post_ops);
    return fn_(attr, post_ops);
}

dnnl_status_t
dnnl_post_ops_create(dnnl_post_ops_t *post_ops)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_post_ops_create);
    return fn_(post_ops);
}

dnnl_status_t
dnnl_post_ops_destroy(dnnl_post_ops_t post_ops)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_post_ops_destroy);
    return fn_(post_ops);
}

dnnl_status_t
dnnl_post_ops_append_sum(dnnl_post_ops_t post_ops, float scale)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_post_ops_append_sum);
    return fn_(post_ops, scale);
}

dnnl_status_t
dnnl_post_ops_append_eltwise(dnnl_post_ops_t post_ops, float scale,
                             dnnl_alg_kind_t alg_kind, float alpha, float beta)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_post_ops_append_eltwise);
    return fn_(post_ops, scale, alg_kind, alpha, beta);
}

dnnl_status_t
dnnl_primitive_attr_set_scratchpad_mode(dnnl_primitive_attr_t attr,
                                        dnnl_scratchpad_mode_t mode)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_attr_set_scratchpad_mode);
    return fn_(attr, mode);
}

dnnl_status_t
dnnl_primitive_create(dnnl_primitive_t *primitive,
                      const_dnnl_primitive_desc_t primitive_desc)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_create);
    return fn_(primitive, primitive_desc);
}

dnnl_status_t
dnnl_primitive_desc_clone(dnnl_primitive_desc_t *primitive_desc,
                          const_dnnl_primitive_desc_t existing_primitive_desc)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_desc_clone);
    return fn_(primitive_desc, existing_primitive_desc);
}

dnnl_status_t
dnnl_primitive_desc_create(dnnl_primitive_desc_t *primitive_desc,
                           const_dnnl_op_desc_t op_desc,
                           const_dnnl_primitive_attr_t attr,
                           dnnl_engine_t engine,
                           const_dnnl_primitive_desc_t hint_forward_primitive_desc)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_desc_create);
    return fn_(primitive_desc, op_desc, attr, engine,
        hint_forward_primitive_desc);
}

dnnl_status_t
dnnl_primitive_desc_destroy(dnnl_primitive_desc_t primitive_desc)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_desc_destroy);
    return fn_(primitive_desc);
}

const dnnl_memory_desc_t *
dnnl_primitive_desc_query_md(const_dnnl_primitive_desc_t primitive_desc,
                             dnnl_query_t what, int index)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_desc_query_md);
    return fn_(primitive_desc, what, index);
}

dnnl_status_t
dnnl_primitive_destroy(dnnl_primitive_t primitive)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_destroy);
    return fn_(primitive);
}

dnnl_status_t
dnnl_primitive_execute(const_dnnl_primitive_t primitive, dnnl_stream_t stream,
                       int nargs, const dnnl_exec_arg_t *args)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_execute);
    return fn_(primitive, stream, nargs, args);
}

dnnl_status_t
dnnl_primitive_get_primitive_desc(const_dnnl_primitive_t primitive,
                                  const_dnnl_primitive_desc_t *primitive_desc)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_primitive_get_primitive_desc);
    return fn_(primitive, primitive_desc);
}

dnnl_status_t
dnnl_stream_create(dnnl_stream_t *stream, dnnl_engine_t engine, unsigned flags)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_stream_create);
    return fn_(stream, engine, flags);
}

dnnl_status_t
dnnl_stream_destroy(dnnl_stream_t stream)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_stream_destroy);
    return fn_(stream);
}

dnnl_status_t
dnnl_stream_wait(dnnl_stream_t stream)
{
    DGR_LAZY_FN(dnnl_lib, dnnl_stream_wait);
    return fn_(stream);
}

void
omp_set_num_threads(int n)
{
    DGR_LAZY_FN(dnnl_lib, omp_set_num_threads);
    fn_(n);
}

#endif

/* LAPACK (cpu_lapack.h: OpenBLAS installs no header for them) */
void sgetrf_(const blasint *m, const blasint *n, float *a, const blasint *lda,
             blasint *ipiv, blasint *info)
{
    DGR_LAZY_FN(openblas_lib, sgetrf_);
    fn_(m, n, a, lda, ipiv, info);
}

void dgetrf_(const blasint *m, const blasint *n, double *a,
             const blasint *lda, blasint *ipiv, blasint *info)
{
    DGR_LAZY_FN(openblas_lib, dgetrf_);
    fn_(m, n, a, lda, ipiv, info);
}

void sgetrs_(const char *trans, const blasint *n, const blasint *nrhs,
             const float *a, const blasint *lda, const blasint *ipiv,
             float *b, const blasint *ldb, blasint *info, size_t trans_len)
{
    DGR_LAZY_FN(openblas_lib, sgetrs_);
    fn_(trans, n, nrhs, a, lda, ipiv, b, ldb, info, trans_len);
}

void dgetrs_(const char *trans, const blasint *n, const blasint *nrhs,
             const double *a, const blasint *lda, const blasint *ipiv,
             double *b, const blasint *ldb, blasint *info, size_t trans_len)
{
    DGR_LAZY_FN(openblas_lib, dgetrs_);
    fn_(trans, n, nrhs, a, lda, ipiv, b, ldb, info, trans_len);
}

void spotrf_(const char *uplo, const blasint *n, float *a,
             const blasint *lda, blasint *info, size_t uplo_len)
{
    DGR_LAZY_FN(openblas_lib, spotrf_);
    fn_(uplo, n, a, lda, info, uplo_len);
}

void dpotrf_(const char *uplo, const blasint *n, double *a,
             const blasint *lda, blasint *info, size_t uplo_len)
{
    DGR_LAZY_FN(openblas_lib, dpotrf_);
    fn_(uplo, n, a, lda, info, uplo_len);
}

void cblas_strsm(const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side,
                 const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE TransA,
                 const enum CBLAS_DIAG Diag, const blasint M, const blasint N,
                 const float alpha, const float *A, const blasint lda,
                 float *B, const blasint ldb)
{
    DGR_LAZY_FN(openblas_lib, cblas_strsm);
    fn_(Order, Side, Uplo, TransA, Diag, M, N, alpha, A, lda, B, ldb);
}

void cblas_dtrsm(const enum CBLAS_ORDER Order, const enum CBLAS_SIDE Side,
                 const enum CBLAS_UPLO Uplo, const enum CBLAS_TRANSPOSE TransA,
                 const enum CBLAS_DIAG Diag, const blasint M, const blasint N,
                 const double alpha, const double *A, const blasint lda,
                 double *B, const blasint ldb)
{
    DGR_LAZY_FN(openblas_lib, cblas_dtrsm);
    fn_(Order, Side, Uplo, TransA, Diag, M, N, alpha, A, lda, B, ldb);
}

void sgeqrf_(const blasint *m, const blasint *n, float *a, const blasint *lda,
             float *tau, float *work, const blasint *lwork, blasint *info)
{
    DGR_LAZY_FN(openblas_lib, sgeqrf_);
    fn_(m, n, a, lda, tau, work, lwork, info);
}

void dgeqrf_(const blasint *m, const blasint *n, double *a,
             const blasint *lda, double *tau, double *work,
             const blasint *lwork, blasint *info)
{
    DGR_LAZY_FN(openblas_lib, dgeqrf_);
    fn_(m, n, a, lda, tau, work, lwork, info);
}

void sorgqr_(const blasint *m, const blasint *n, const blasint *k, float *a,
             const blasint *lda, const float *tau, float *work,
             const blasint *lwork, blasint *info)
{
    DGR_LAZY_FN(openblas_lib, sorgqr_);
    fn_(m, n, k, a, lda, tau, work, lwork, info);
}

void dorgqr_(const blasint *m, const blasint *n, const blasint *k, double *a,
             const blasint *lda, const double *tau, double *work,
             const blasint *lwork, blasint *info)
{
    DGR_LAZY_FN(openblas_lib, dorgqr_);
    fn_(m, n, k, a, lda, tau, work, lwork, info);
}

void sgesdd_(const char *jobz, const blasint *m, const blasint *n, float *a,
             const blasint *lda, float *s, float *u, const blasint *ldu,
             float *vt, const blasint *ldvt, float *work,
             const blasint *lwork, blasint *iwork, blasint *info,
             size_t jobz_len)
{
    DGR_LAZY_FN(openblas_lib, sgesdd_);
    fn_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info,
        jobz_len);
}

void dgesdd_(const char *jobz, const blasint *m, const blasint *n, double *a,
             const blasint *lda, double *s, double *u, const blasint *ldu,
             double *vt, const blasint *ldvt, double *work,
             const blasint *lwork, blasint *iwork, blasint *info,
             size_t jobz_len)
{
    DGR_LAZY_FN(openblas_lib, dgesdd_);
    fn_(jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info,
        jobz_len);
}

void ssyevd_(const char *jobz, const char *uplo, const blasint *n, float *a,
             const blasint *lda, float *w, float *work, const blasint *lwork,
             blasint *iwork, const blasint *liwork, blasint *info,
             size_t jobz_len, size_t uplo_len)
{
    DGR_LAZY_FN(openblas_lib, ssyevd_);
    fn_(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, jobz_len,
        uplo_len);
}

void dsyevd_(const char *jobz, const char *uplo, const blasint *n, double *a,
             const blasint *lda, double *w, double *work,
             const blasint *lwork, blasint *iwork, const blasint *liwork,
             blasint *info, size_t jobz_len, size_t uplo_len)
{
    DGR_LAZY_FN(openblas_lib, dsyevd_);
    fn_(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info, jobz_len,
        uplo_len);
}
