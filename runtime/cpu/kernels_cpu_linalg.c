/*
 * kernels_cpu_linalg.c -- CPU kernels of the linear-algebra ops of issue
 * 22's ops10c group, on each innermost square matrix of a batch, float32
 * and float64, through OpenBLAS's LAPACK (cpu_lapack.h) and BLAS:
 * MatrixInverse and MatrixSolve (LU: getrf / getrs), MatrixDeterminant
 * and LogMatrixDeterminant (LU's diagonal and pivots), Cholesky (potrf),
 * MatrixTriangularSolve (trsm), and the decompositions Qr (geqrf /
 * orgqr), Svd (gesdd) and SelfAdjointEigV2 (syevd).  dgrun's matrices are
 * row-major, LAPACK's column-major: a row-major A is a column-major A^T,
 * which the calls below take into account.  An exactly singular matrix (a zero pivot) is
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

/* The batch index into v (its batch dims right-aligned with the output's,
 * size-1 dims broadcast) of the output's batch index m. */
static int64_t bcast_batch(const dg_shape *out, const dg_shape *v, int64_t m)
{
    int ro = out->rank - 2, rv = v->rank - 2;
    int64_t idx = 0, stride = 1;
    for (int d = ro - 1; d >= 0; d--) {
        int64_t c = m % out->dims[d];
        m /= out->dims[d];
        int dv = d - (ro - rv);
        if (dv < 0)
            continue;
        idx += (v->dims[dv] == 1 ? 0 : c) * stride;
        stride *= v->dims[dv];
    }
    return idx;
}

/* trsm (row-major, A on the left) on a copy of rhs, batch dims
 * broadcasting as in TF: only A's lower (lower) or upper triangle is
 * read; a zero on its diagonal gives inf / nan as in TF. */
dg_status dgr_k_matrix_triangular_solve(dgr_kctx *k)
{
    const dgr_value *a = &k->in[0], *b = &k->in[1];
    int f64 = a->dtype == DG_F64;
    int lower = dgc_attr_b(k->node, DGC_AT_lower);
    int adj = dgc_attr_b(k->node, DGC_AT_adjoint);
    const dg_shape *os = &k->out[0].shape;
    int64_t nb, n, nk = b->shape.dims[b->shape.rank - 1];
    dg_status st = dgr_kctx_alloc_output(k, 0);
    batch_of(os, &nb, &nk);
    n = a->shape.dims[a->shape.rank - 1];
    if (st || n == 0 || nk == 0 || nb == 0)
        return st;
    size_t es = dg_dtype_size(a->dtype);
    char *y = dgr_cpu_ptr(&k->out[0]);
    const char *x = dgr_cpu_ptr(a), *bx = dgr_cpu_ptr(b);
    enum CBLAS_UPLO up = lower ? CblasLower : CblasUpper;
    enum CBLAS_TRANSPOSE tr = adj ? CblasTrans : CblasNoTrans;
    for (int64_t m = 0; m < nb; m++) {
        const char *am = x + (size_t)(bcast_batch(os, &a->shape, m) * n * n) *
                                 es;
        char *ym = y + (size_t)(m * n * nk) * es;
        memcpy(ym, bx + (size_t)(bcast_batch(os, &b->shape, m) * n * nk) * es,
               (size_t)(n * nk) * es);
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

/* ---- Qr, Svd, SelfAdjointEigV2 (in float64) ------------------------------ */

/* The decompositions run LAPACK's float64 routines for both dtypes (a
 * float32 input is widened, its results rounded back): one code path,
 * values at least as accurate as TF's float32 Eigen kernels. */

/* matrix m of x as column-major float64 (rows x cols, ld rows) in a */
static void to_cm(const dgr_value *x, int64_t m, int64_t rows, int64_t cols,
                  double *a)
{
    const void *p = dgr_cpu_ptr(x);
    int f64 = x->dtype == DG_F64;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            a[j * rows + i] = at(p, f64, m * rows * cols + i * cols + j);
}

/* column-major a (ld lda) of rows x cols into matrix m of output o */
static void from_cm(dgr_value *o, int64_t m, int64_t rows, int64_t cols,
                    const double *a, int64_t lda)
{
    void *p = dgr_cpu_ptr(o);
    int f64 = o->dtype == DG_F64;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            put(p, f64, m * rows * cols + i * cols + j, a[j * lda + i]);
}

/* one scratch allocation of n doubles (at least 1), or an error */
static dg_status scratch(dgr_kctx *k, int64_t n, double **p)
{
    *p = dg_malloc((size_t)(n > 0 ? n : 1) * sizeof **p);
    return *p ? DG_OK : nomem(k);
}

static dg_status alloc_outputs(dgr_kctx *k, int n)
{
    dg_status st = DG_OK;
    for (int i = 0; i < n && !st; i++)
        st = dgr_kctx_alloc_output(k, i);
    return st;
}

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* q r = x: geqrf of x, R from its upper part, Q = orgqr of its first
 * K = min(M, N) reflectors (P columns, P = M with full_matrices) */
dg_status dgr_k_qr(dgr_kctx *k)
{
    const dg_shape *s = &k->in[0].shape;
    int64_t nb, M = s->dims[s->rank - 2], N = s->dims[s->rank - 1];
    batch_of(s, &nb, &N);
    int64_t K = M < N ? M : N;
    int64_t P = dgc_attr_b(k->node, DGC_AT_full_matrices) ? M : K;
    dg_status st = alloc_outputs(k, 2);
    if (st || nb == 0 || M == 0)
        return st;
    blasint bm = (blasint)M, bn = (blasint)N, bp = (blasint)P, bk = (blasint)K;
    blasint lw = (blasint)(64 * imax(1, imax(M, N))), info = 0;
    double *a, *q, *tau, *work;
    if ((st = scratch(k, M * N + M * P + K + lw, &a)))
        return st;
    q = a + M * N;
    tau = q + M * P;
    work = tau + K;
    int f64 = k->in[0].dtype == DG_F64;
    for (int64_t m = 0; m < nb; m++) {
        to_cm(&k->in[0], m, M, N, a);
        if (K > 0)
            dgeqrf_(&bm, &bn, a, &bm, tau, work, &lw, &info);
        char *r = dgr_cpu_ptr(&k->out[1]);
        for (int64_t i = 0; i < P; i++)
            for (int64_t j = 0; j < N; j++)
                put(r, f64, (m * P + i) * N + j, j >= i ? a[j * M + i] : 0);
        memset(q, 0, (size_t)(M * P) * sizeof *q);
        memcpy(q, a, (size_t)(M * (K < P ? K : P)) * sizeof *q);
        if (P > 0)
            dorgqr_(&bm, &bp, &bk, q, &bm, tau, work, &lw, &info);
        from_cm(&k->out[0], m, M, P, q, M);
    }
    dg_free(a);
    return DG_OK;
}
DGR_KERNEL(Qr, dgr_k_qr);

/* x = u diag(s) v^T by gesdd (jobz N, S or A); v is VT transposed */
dg_status dgr_k_svd(dgr_kctx *k)
{
    const dg_shape *s = &k->in[0].shape;
    int64_t nb, M = s->dims[s->rank - 2], N;
    batch_of(s, &nb, &N);
    int64_t P = M < N ? M : N;
    int uv = dgc_attr_b(k->node, DGC_AT_compute_uv);
    int full = uv && dgc_attr_b(k->node, DGC_AT_full_matrices);
    int64_t uc = !uv ? 0 : full ? M : P, vr = !uv ? 0 : full ? N : P;
    dg_status st = alloc_outputs(k, 3);
    if (st || nb == 0)
        return st;
    if (P == 0) { /* no singular values; full u, v: identities */
        for (int o = 1; o < 3 && uv; o++) {
            int64_t d = o == 1 ? M : N, c = o == 1 ? uc : vr;
            for (int64_t i = 0; i < nb * d * c; i++)
                put(dgr_cpu_ptr(&k->out[o]), k->in[0].dtype == DG_F64, i,
                    i % (d * c) / c == i % c);
        }
        return DG_OK;
    }
    blasint bm = (blasint)M, bn = (blasint)N, info = 0, lw = -1;
    blasint ldu = (blasint)imax(1, M), ldvt = (blasint)imax(1, vr);
    const char *job = !uv ? "N" : full ? "A" : "S";
    double *a, q;
    blasint *iw = dg_malloc((size_t)(8 * P) * sizeof *iw);
    if (!iw)
        return nomem(k);
    dgesdd_(job, &bm, &bn, &q, &bm, &q, &q, &ldu, &q, &ldvt, &q, &lw, iw,
            &info, 1);
    lw = (blasint)q + 1;
    if ((st = scratch(k, M * N + P + M * imax(uc, 1) + imax(vr, 1) * N + lw,
                      &a))) {
        dg_free(iw);
        return st;
    }
    double *sv = a + M * N, *u = sv + P, *vt = u + M * imax(uc, 1),
           *work = vt + imax(vr, 1) * N;
    int f64 = k->in[0].dtype == DG_F64;
    for (int64_t m = 0; m < nb && !st; m++) {
        to_cm(&k->in[0], m, M, N, a);
        dgesdd_(job, &bm, &bn, a, &bm, sv, u, &ldu, vt, &ldvt, work, &lw, iw,
                &info, 1);
        if (info != 0) {
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': SVD did not "
                        "converge", k->node->name);
            break;
        }
        for (int64_t i = 0; i < P; i++)
            put(dgr_cpu_ptr(&k->out[0]), f64, m * P + i, sv[i]);
        if (!uv)
            continue;
        from_cm(&k->out[1], m, M, uc, u, ldu);
        /* v[i, j] = VT[j, i] = vt[i * ldvt + j] */
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < vr; j++)
                put(dgr_cpu_ptr(&k->out[2]), f64, (m * N + i) * vr + j,
                    vt[i * ldvt + j]);
    }
    dg_free(a);
    dg_free(iw);
    return st;
}
DGR_KERNEL(Svd, dgr_k_svd);

/* syevd "U" of the column-major view (A^T: its upper triangle is A's
 * lower one, which TF's Eigen solver reads); eigenvectors are columns */
dg_status dgr_k_self_adjoint_eig(dgr_kctx *k)
{
    int64_t nb, N;
    batch_of(&k->in[0].shape, &nb, &N);
    int cv = dgc_attr_b(k->node, DGC_AT_compute_v);
    dg_status st = alloc_outputs(k, 2);
    if (st || nb == 0 || N == 0)
        return st;
    const char *job = cv ? "V" : "N";
    blasint bn = (blasint)N, info = 0, lw = -1, liw = -1, qi;
    double q, *a;
    dsyevd_(job, "U", &bn, &q, &bn, &q, &q, &lw, &qi, &liw, &info, 1, 1);
    lw = (blasint)q + 1;
    liw = qi + 1;
    blasint *iw = dg_malloc((size_t)liw * sizeof *iw);
    if (!iw)
        return nomem(k);
    if ((st = scratch(k, N * N + N + lw, &a))) {
        dg_free(iw);
        return st;
    }
    double *w = a + N * N, *work = w + N;
    int f64 = k->in[0].dtype == DG_F64;
    for (int64_t m = 0; m < nb && !st; m++) {
        /* the row-major matrix read as column-major is A^T */
        for (int64_t i = 0; i < N * N; i++)
            a[i] = at(dgr_cpu_ptr(&k->in[0]), f64, m * N * N + i);
        dsyevd_(job, "U", &bn, a, &bn, w, work, &lw, iw, &liw, &info, 1, 1);
        if (info != 0) {
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': the "
                        "eigen-decomposition did not converge",
                        k->node->name);
            break;
        }
        for (int64_t i = 0; i < N; i++)
            put(dgr_cpu_ptr(&k->out[0]), f64, m * N + i, w[i]);
        if (cv)
            from_cm(&k->out[1], m, N, N, a, N);
    }
    dg_free(a);
    dg_free(iw);
    return st;
}
DGR_KERNEL(SelfAdjointEigV2, dgr_k_self_adjoint_eig);
