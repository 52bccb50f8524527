/*
 * kernels_cpu_linalg.c -- CPU kernels of the linear-algebra ops of issue
 * 22's ops10c group, on each innermost square matrix of a batch, float32
 * and float64, through OpenBLAS's LAPACK (cpu_lapack.h) and BLAS:
 * MatrixInverse and MatrixSolve (LU: getrf / getrs), MatrixDeterminant
 * and LogMatrixDeterminant (LU's diagonal and pivots), Cholesky (potrf),
 * MatrixTriangularSolve (trsm).  dgrun's matrices are row-major, LAPACK's
 * column-major: a row-major A is a column-major A^T, which the calls
 * below take into account.  An exactly singular matrix (a zero pivot) is
 * an error for the inverse and the solve, as TF's Eigen kernels check;
 * the determinant of one is 0 (log: -inf with sign 0).
 */
#include "kernels_cpu.h"
#include "cpu_lapack.h"
#include "dg_alloc.h"

#include <math.h>
#include <string.h>

/* The batch of a [..., n, n] input: count and n. */
static void batch_of(const dg_shape *s, int64_t *nb, int64_t *n)
{
    *n = s->dims[s->rank - 1];
    *nb = 1;
    for (int d = 0; d < s->rank - 2; d++)
        *nb *= s->dims[d];
}

static dg_status nomem(dgr_kctx *k)
{
    return dg_err(k->err, DG_E_NOMEM, "node '%s': out of memory",
                  k->node->name);
}

/* element i of a float32 / float64 buffer, and a store */
static double at(const void *p, int f64, int64_t i)
{
    return f64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

static void put(void *p, int f64, int64_t i, double v)
{
    if (f64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

/* LU of the n x n column-major a in place (ipiv: n pivots); LAPACK's info */
static blasint getrf(int f64, blasint n, void *a, blasint *ipiv)
{
    blasint info = 0;
    if (f64)
        dgetrf_(&n, &n, a, &n, ipiv, &info);
    else
        sgetrf_(&n, &n, a, &n, ipiv, &info);
    return info;
}

/* ---- MatrixInverse, MatrixSolve ----------------------------------------- */

/* X = op(A)^-1 B for each matrix (op(A) = A^T with adjoint): getrf of the
 * row-major A (a column-major A^T), getrs with trans "T" (A) or "N" (A^T)
 * on B brought to column-major; B is the identity for MatrixInverse. */
static dg_status lu_solve(dgr_kctx *k, int inverse)
{
    const dgr_value *a = &k->in[0];
    int f64 = a->dtype == DG_F64, adj = dgc_attr_b(k->node, DGC_AT_adjoint);
    int64_t nb, n;
    batch_of(&a->shape, &nb, &n);
    const dg_shape *bs = inverse ? &a->shape : &k->in[1].shape;
    int64_t nk = bs->dims[bs->rank - 1];
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st || n == 0 || nk == 0 || nb == 0)
        return st;
    size_t es = dg_dtype_size(a->dtype);
    char *lu = dg_malloc((size_t)(n * n) * es + (size_t)(n * nk) * es);
    blasint *ipiv = dg_malloc((size_t)n * sizeof *ipiv);
    if (!lu || !ipiv) {
        dg_free(lu);
        dg_free(ipiv);
        return nomem(k);
    }
    char *rhs = lu + (size_t)(n * n) * es;
    const char *x = dgr_cpu_ptr(a);
    char *y = dgr_cpu_ptr(&k->out[0]);
    const char *b = inverse ? NULL : dgr_cpu_ptr(&k->in[1]);
    for (int64_t m = 0; m < nb && st == DG_OK; m++) {
        memcpy(lu, x + (size_t)(m * n * n) * es, (size_t)(n * n) * es);
        if (getrf(f64, (blasint)n, lu, ipiv) > 0) {
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': Input %sis not "
                        "invertible.", k->node->name,
                        inverse ? "" : "matrix ");
            break;
        }
        /* rhs column-major [n x nk]: rhs[c * n + r] = B[r, c] */
        for (int64_t r = 0; r < n; r++)
            for (int64_t c = 0; c < nk; c++)
                put(rhs, f64, c * n + r,
                    inverse ? (r == c) : at(b, f64, m * n * nk + r * nk + c));
        blasint bn = (blasint)n, bk = (blasint)nk, info = 0;
        const char *tr = adj ? "N" : "T";
        if (f64)
            dgetrs_(tr, &bn, &bk, (double *)lu, &bn, ipiv, (double *)rhs,
                    &bn, &info, 1);
        else
            sgetrs_(tr, &bn, &bk, (float *)lu, &bn, ipiv, (float *)rhs, &bn,
                    &info, 1);
        for (int64_t r = 0; r < n; r++)
            for (int64_t c = 0; c < nk; c++)
                put(y, f64, m * n * nk + r * nk + c, at(rhs, f64, c * n + r));
    }
    dg_free(lu);
    dg_free(ipiv);
    return st;
}

dg_status dgr_k_matrix_inverse(dgr_kctx *k) { return lu_solve(k, 1); }
DGR_KERNEL(MatrixInverse, dgr_k_matrix_inverse);
dg_status dgr_k_matrix_solve(dgr_kctx *k) { return lu_solve(k, 0); }
DGR_KERNEL(MatrixSolve, dgr_k_matrix_solve);

/* ---- MatrixDeterminant, LogMatrixDeterminant ----------------------------- */

/* From the LU of A^T (det A^T = det A): the product of U's diagonal, its
 * sign flipped per row swap; log |det| summed in double. */
static dg_status determinant(dgr_kctx *k, int logdet)
{
    const dgr_value *a = &k->in[0];
    int f64 = a->dtype == DG_F64;
    int64_t nb, n;
    batch_of(&a->shape, &nb, &n);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (!st && logdet)
        st = dgr_kctx_alloc_output(k, 1);
    if (st || nb == 0)
        return st;
    size_t es = dg_dtype_size(a->dtype);
    char *lu = dg_malloc((size_t)(n * n) * es + 1);
    blasint *ipiv = dg_malloc((size_t)n * sizeof *ipiv + 1);
    if (!lu || !ipiv) {
        dg_free(lu);
        dg_free(ipiv);
        return nomem(k);
    }
    const char *x = dgr_cpu_ptr(a);
    for (int64_t m = 0; m < nb; m++) {
        double sign = 1, logabs = 0, det = 1;
        if (n > 0) {
            memcpy(lu, x + (size_t)(m * n * n) * es, (size_t)(n * n) * es);
            getrf(f64, (blasint)n, lu, ipiv);
        }
        for (int64_t i = 0; i < n; i++) {
            double u = at(lu, f64, i * n + i);
            if (ipiv[i] != i + 1)
                sign = -sign;
            sign *= u > 0 ? 1 : u < 0 ? -1 : 0;
            logabs += log(fabs(u));
            det *= u;
        }
        if (ipiv && n > 0)
            for (int64_t i = 0; i < n; i++)
                det = ipiv[i] != i + 1 ? -det : det;
        if (logdet) {
            put(dgr_cpu_ptr(&k->out[0]), f64, m, sign);
            put(dgr_cpu_ptr(&k->out[1]), f64, m, sign == 0 ? -INFINITY
                                                           : logabs);
        } else {
            put(dgr_cpu_ptr(&k->out[0]), f64, m, det);
        }
    }
    dg_free(lu);
    dg_free(ipiv);
    return DG_OK;
}

dg_status dgr_k_matrix_determinant(dgr_kctx *k) { return determinant(k, 0); }
DGR_KERNEL(MatrixDeterminant, dgr_k_matrix_determinant);
dg_status dgr_k_log_matrix_determinant(dgr_kctx *k)
{
    return determinant(k, 1);
}
DGR_KERNEL(LogMatrixDeterminant, dgr_k_log_matrix_determinant);

/* ---- Cholesky ------------------------------------------------------------ */

/* potrf "U" of the column-major view (A^T, whose upper triangle is A's
 * lower one): U^T U = A^T, so the row-major result is L = U^T; the part
 * above L's diagonal is zeroed. */
dg_status dgr_k_cholesky(dgr_kctx *k)
{
    const dgr_value *a = &k->in[0];
    int f64 = a->dtype == DG_F64;
    int64_t nb, n;
    batch_of(&a->shape, &nb, &n);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st || n == 0 || nb == 0)
        return st;
    size_t es = dg_dtype_size(a->dtype);
    char *y = dgr_cpu_ptr(&k->out[0]);
    memcpy(y, dgr_cpu_ptr(a), (size_t)(nb * n * n) * es);
    for (int64_t m = 0; m < nb; m++) {
        char *l = y + (size_t)(m * n * n) * es;
        blasint bn = (blasint)n, info = 0;
        if (f64)
            dpotrf_("U", &bn, (double *)l, &bn, &info, 1);
        else
            spotrf_("U", &bn, (float *)l, &bn, &info, 1);
        if (info != 0)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': Cholesky "
                          "decomposition was not successful. The input "
                          "might not be valid.", k->node->name);
        for (int64_t r = 0; r < n; r++)
            for (int64_t c = r + 1; c < n; c++)
                put(l, f64, r * n + c, 0);
    }
    return DG_OK;
}
DGR_KERNEL(Cholesky, dgr_k_cholesky);

/* ---- MatrixTriangularSolve ----------------------------------------------- */

/* trsm (row-major, A on the left) on a copy of rhs: only A's lower
 * (lower) or upper triangle is read; a zero on its diagonal gives inf /
 * nan as in TF. */
dg_status dgr_k_matrix_triangular_solve(dgr_kctx *k)
{
    const dgr_value *a = &k->in[0], *b = &k->in[1];
    int f64 = a->dtype == DG_F64;
    int lower = dgc_attr_b(k->node, DGC_AT_lower);
    int adj = dgc_attr_b(k->node, DGC_AT_adjoint);
    int64_t nb, n, nk = b->shape.dims[b->shape.rank - 1];
    batch_of(&a->shape, &nb, &n);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st || n == 0 || nk == 0 || nb == 0)
        return st;
    size_t es = dg_dtype_size(a->dtype);
    char *y = dgr_cpu_ptr(&k->out[0]);
    const char *x = dgr_cpu_ptr(a);
    memcpy(y, dgr_cpu_ptr(b), (size_t)(nb * n * nk) * es);
    enum CBLAS_UPLO up = lower ? CblasLower : CblasUpper;
    enum CBLAS_TRANSPOSE tr = adj ? CblasTrans : CblasNoTrans;
    for (int64_t m = 0; m < nb; m++) {
        const char *am = x + (size_t)(m * n * n) * es;
        char *ym = y + (size_t)(m * n * nk) * es;
        if (f64)
            cblas_dtrsm(CblasRowMajor, CblasLeft, up, tr, CblasNonUnit,
                        (blasint)n, (blasint)nk, 1.0, (const double *)am,
                        (blasint)n, (double *)ym, (blasint)nk);
        else
            cblas_strsm(CblasRowMajor, CblasLeft, up, tr, CblasNonUnit,
                        (blasint)n, (blasint)nk, 1.0f, (const float *)am,
                        (blasint)n, (float *)ym, (blasint)nk);
    }
    return DG_OK;
}
DGR_KERNEL(MatrixTriangularSolve, dgr_k_matrix_triangular_solve);
