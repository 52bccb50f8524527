/*
 * cpu_lapack.h -- the LAPACK routines of OpenBLAS the linear-algebra
 * kernels call (kernels_cpu_linalg.c), with the Fortran calling convention
 * (every argument by pointer, a hidden length after the arguments for each
 * character argument).  OpenBLAS exports them but installs no header for
 * them; they are defined, loading OpenBLAS on first call, in cpu_lazy.c.
 * Matrices are column-major.
 */
#ifndef DGR_CPU_LAPACK_H
#define DGR_CPU_LAPACK_H

#include <cblas.h>
#include <stddef.h>

/* LU with partial pivoting: A = P L U; info > 0: U(info, info) is 0 */
void sgetrf_(const blasint *m, const blasint *n, float *a, const blasint *lda,
             blasint *ipiv, blasint *info);
void dgetrf_(const blasint *m, const blasint *n, double *a,
             const blasint *lda, blasint *ipiv, blasint *info);
/* op(A) X = B through getrf's factors (trans "N" or "T") */
void sgetrs_(const char *trans, const blasint *n, const blasint *nrhs,
             const float *a, const blasint *lda, const blasint *ipiv,
             float *b, const blasint *ldb, blasint *info, size_t trans_len);
void dgetrs_(const char *trans, const blasint *n, const blasint *nrhs,
             const double *a, const blasint *lda, const blasint *ipiv,
             double *b, const blasint *ldb, blasint *info, size_t trans_len);
/* Cholesky: info > 0 when not positive definite */
void spotrf_(const char *uplo, const blasint *n, float *a,
             const blasint *lda, blasint *info, size_t uplo_len);
void dpotrf_(const char *uplo, const blasint *n, double *a,
             const blasint *lda, blasint *info, size_t uplo_len);

/* QR: geqrf leaves R above the diagonal and Householder vectors below
 * (tau their scales); orgqr forms Q's first n columns from k of them.
 * lwork -1: the optimal lwork into work[0]. */
void sgeqrf_(const blasint *m, const blasint *n, float *a, const blasint *lda,
             float *tau, float *work, const blasint *lwork, blasint *info);
void dgeqrf_(const blasint *m, const blasint *n, double *a,
             const blasint *lda, double *tau, double *work,
             const blasint *lwork, blasint *info);
void sorgqr_(const blasint *m, const blasint *n, const blasint *k, float *a,
             const blasint *lda, const float *tau, float *work,
             const blasint *lwork, blasint *info);
void dorgqr_(const blasint *m, const blasint *n, const blasint *k, double *a,
             const blasint *lda, const double *tau, double *work,
             const blasint *lwork, blasint *info);
/* SVD by divide and conquer (jobz "N", "S" or "A") */
void sgesdd_(const char *jobz, const blasint *m, const blasint *n, float *a,
             const blasint *lda, float *s, float *u, const blasint *ldu,
             float *vt, const blasint *ldvt, float *work,
             const blasint *lwork, blasint *iwork, blasint *info,
             size_t jobz_len);
void dgesdd_(const char *jobz, const blasint *m, const blasint *n, double *a,
             const blasint *lda, double *s, double *u, const blasint *ldu,
             double *vt, const blasint *ldvt, double *work,
             const blasint *lwork, blasint *iwork, blasint *info,
             size_t jobz_len);
/* symmetric eigen-decomposition (jobz "N" or "V"), ascending */
void ssyevd_(const char *jobz, const char *uplo, const blasint *n, float *a,
             const blasint *lda, float *w, float *work, const blasint *lwork,
             blasint *iwork, const blasint *liwork, blasint *info,
             size_t jobz_len, size_t uplo_len);
void dsyevd_(const char *jobz, const char *uplo, const blasint *n, double *a,
             const blasint *lda, double *w, double *work,
             const blasint *lwork, blasint *iwork, const blasint *liwork,
             blasint *info, size_t jobz_len, size_t uplo_len);

#endif
