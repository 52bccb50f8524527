/*
 * infer_ops10c.c -- shape functions of issue 22's ops10c group, the small
 * array ops of real exports: Diag / DiagPart, UnravelIndex, the layout
 * optimizer's DataFormatVecPermute / DataFormatDimMap (and the format
 * permutation both backends' kernels share), SpaceToBatch (V1, as
 * SpaceToBatchND) and NthElement.
 */
#include "infer.h"
#include "attr_get.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

static int is_int(dg_dtype t) { return t == DG_I32 || t == DG_I64; }

int dgc_infer_diag(DGC_INFER_ARGS)
{
    (void)n_in;
    const dg_shape *s = &in[0].shape;
    out[0] = in[0];
    out[0].value = NULL;
    if (n->op == DGC_OPID_Diag) {
        if (s->rank < 1 || s->rank > 3)
            FAIL("input must have rank 1 to 3, got rank %d", s->rank);
        out[0].shape.rank = 2 * s->rank;
        for (int i = 0; i < s->rank; i++)
            out[0].shape.dims[s->rank + i] = s->dims[i];
        return 0;
    }
    if (s->rank < 2 || s->rank > 6 || s->rank % 2)
        FAIL("input must have an even rank of 2 to 6, got rank %d", s->rank);
    int h = s->rank / 2;
    for (int i = 0; i < h; i++) {
        int64_t a = s->dims[i], b = s->dims[h + i];
        if (a >= 0 && b >= 0 && a != b)
            FAIL("dimension %d (%lld) differs from dimension %d (%lld)", i,
                 (long long)a, h + i, (long long)b);
        out[0].shape.dims[i] = a >= 0 ? a : b;
    }
    out[0].shape.rank = h;
    return 0;
}

int dgc_infer_unravel_index(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    if (!is_int(in[0].dtype) || in[0].dtype != in[1].dtype)
        FAIL("indices and dims must be int32 or int64 of one dtype");
    if (in[0].shape.rank > 1 || in[1].shape.rank != 1)
        FAIL("indices must be a scalar or a vector and dims a vector");
    out[0].dtype = in[0].dtype;
    out[0].value = NULL;
    out[0].shape.rank = 1 + in[0].shape.rank;
    out[0].shape.dims[0] = in[1].shape.dims[0];
    if (in[0].shape.rank == 1)
        out[0].shape.dims[1] = in[0].shape.dims[0];
    return 0;
}

/* the letters of f other than N and C (its spatial ones) into sp */
static int spatial_of(const char *f, char *sp)
{
    int k = 0;
    for (; *f; f++)
        if (*f != 'N' && *f != 'C')
            sp[k++] = *f;
    sp[k] = 0;
    return k;
}

int dgc_fmt_perm(const dgc_node *n, int64_t size, int *from, int *len,
                 char *msg, size_t msgsz)
{
    const char *src = dgc_attr_str(n, DGC_AT_src_format);
    const char *dst = dgc_attr_str(n, DGC_AT_dst_format);
    int L = (int)strlen(src);
    if ((L != 4 && L != 5) || (int)strlen(dst) != L)
        FAIL("src_format '%s' and dst_format '%s' must both have 4 or 5 "
             "letters", src, dst);
    char ss[8], ds[8];
    if (size >= 0 && size != L && n->op == DGC_OPID_DataFormatVecPermute &&
        size == L - 2) {
        spatial_of(src, ss);
        spatial_of(dst, ds);
        src = ss;
        dst = ds;
        L -= 2;
    } else if (size >= 0 && size != L) {
        FAIL("input has %lld entries for format '%s' (%d letters%s)",
             (long long)size, src, L,
             n->op == DGC_OPID_DataFormatVecPermute ? " or its spatial ones"
                                                    : "");
    }
    for (int i = 0; i < L; i++) {
        const char *p = memchr(src, dst[i], (size_t)L);
        if (!p || memchr(dst, src[i], (size_t)L) == NULL)
            FAIL("dst_format '%s' is no permutation of src_format '%s'",
                 dgc_attr_str(n, DGC_AT_dst_format),
                 dgc_attr_str(n, DGC_AT_src_format));
        from[i] = (int)(p - src);
    }
    *len = L;
    return 0;
}

int dgc_infer_fmt_perm(DGC_INFER_ARGS)
{
    (void)n_in;
    const dg_shape *s = &in[0].shape;
    if (!is_int(in[0].dtype))
        FAIL("input must be int32 or int64");
    if (s->rank < 1 || s->rank > 2 || (s->rank == 2 && s->dims[1] >= 0 &&
                                        s->dims[1] != 2))
        FAIL("input must be a vector or a matrix of 2 columns");
    int from[8], len;
    if (dgc_fmt_perm(n, s->dims[0], from, &len, msg, msgsz))
        return -1;
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_infer_space_batch_v1(DGC_INFER_ARGS)
{
    (void)n_in;
    if (in[0].shape.rank != 4)
        FAIL("input must have rank 4, got rank %d", in[0].shape.rank);
    int64_t b = dgc_attr_i(n, DGC_AT_block_size), bs[2] = {b, b};
    if (b < 2)
        FAIL("block_size must be greater than 1, got %lld", (long long)b);
    dgc_ttype nd[3] = {in[0], {DG_I64, {1, {2}}, bs}, in[1]};
    return dgc_infer_space_batch(n, nd, 3, out, msg, msgsz);
}

int dgc_infer_nth_element(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    const dg_shape *s = &in[0].shape;
    if (s->rank < 1)
        FAIL("input must have rank >= 1");
    if (in[1].dtype != DG_I32 || in[1].shape.rank != 0)
        FAIL("n must be an int32 scalar");
    int64_t k;
    if (in[1].value && dgc_ttype_ints(&in[1], &k, 1) == 1 &&
        (k < 0 || (s->dims[s->rank - 1] >= 0 && k >= s->dims[s->rank - 1])))
        FAIL("n = %lld is outside [0, %lld) (the last dimension)",
             (long long)k, (long long)s->dims[s->rank - 1]);
    out[0] = in[0];
    out[0].value = NULL;
    out[0].shape.rank--;
    return 0;
}

/* ---- linear algebra on the innermost matrices ----------------------------- */

/* MatrixInverse, Cholesky: x's type; the determinants: the batch dims
 * (LogMatrixDeterminant twice: sign, log |det|); the solves: rhs's type
 * (rhs [..., N, K] with the matrix's batch dims). */
int dgc_infer_linalg(DGC_INFER_ARGS)
{
    const dg_shape *s = &in[0].shape;
    if (in[0].dtype != DG_F32 && in[0].dtype != DG_F64)
        FAIL("input must be float32 or float64");
    if (s->rank < 2)
        FAIL("input must have rank >= 2, got rank %d", s->rank);
    int64_t r = s->dims[s->rank - 2], c = s->dims[s->rank - 1];
    if (r >= 0 && c >= 0 && r != c)
        FAIL("input must be square matrices, got %lld x %lld", (long long)r,
             (long long)c);
    out[0] = in[0];
    out[0].value = NULL;
    if (n->op == DGC_OPID_MatrixDeterminant ||
        n->op == DGC_OPID_LogMatrixDeterminant) {
        out[0].shape.rank -= 2;
        out[1] = out[0];
        return 0;
    }
    if (n_in < 2)
        return 0;
    const dg_shape *b = &in[1].shape;
    if (in[1].dtype != in[0].dtype)
        FAIL("rhs must have the matrix's dtype");
    int tri = n->op == DGC_OPID_MatrixTriangularSolve;
    if (b->rank < 2 || (!tri && b->rank != s->rank))
        FAIL("rhs must have the matrix's rank %d%s, got rank %d", s->rank,
             tri ? " or another >= 2" : "", b->rank);
    int64_t rn = b->dims[b->rank - 2];
    if (r >= 0 && rn >= 0 && r != rn)
        FAIL("rhs dimension %d (%lld) differs from the matrix's (%lld)",
             b->rank - 2, (long long)rn, (long long)r);
    /* batch dims: equal (MatrixSolve) or broadcasting (triangular) */
    int ra = s->rank - 2, rb = b->rank - 2, ro = ra > rb ? ra : rb;
    out[0] = in[1];
    out[0].value = NULL;
    out[0].shape.rank = ro + 2;
    for (int i = 0; i < ro; i++) {
        int ia = i - (ro - ra), ib = i - (ro - rb);
        int64_t x = ia >= 0 ? s->dims[ia] : 1, y = ib >= 0 ? b->dims[ib] : 1;
        if (x >= 0 && y >= 0 && x != y && (!tri || (x != 1 && y != 1)))
            FAIL("rhs batch dimension %d (%lld) %s the matrix's (%lld)", ib,
                 (long long)y, tri ? "does not broadcast with" : "differs from",
                 (long long)x);
        out[0].shape.dims[i] = x == 1 ? y : y == 1 ? x : x >= 0 ? x : y;
    }
    out[0].shape.dims[ro] = r >= 0 ? r : rn;
    out[0].shape.dims[ro + 1] = b->dims[b->rank - 1];
    return 0;
}

/* ---- Qr, Svd, SelfAdjointEigV2 ------------------------------------------- */

/* batch dims of s with two more (a, b), or one (a, when b < -1) */
static void batch_plus(dgc_ttype *o, const dgc_ttype *x, int64_t a, int64_t b)
{
    *o = *x;
    o->value = NULL;
    o->shape.rank = x->shape.rank - 2;
    o->shape.dims[o->shape.rank++] = a;
    if (b >= -1)
        o->shape.dims[o->shape.rank++] = b;
}

/* the dimension p = min(m, n) (-1 unknown) */
static int64_t min_dim(int64_t m, int64_t n)
{
    return m < 0 || n < 0 ? -1 : m < n ? m : n;
}

int dgc_infer_decomp(DGC_INFER_ARGS)
{
    (void)n_in;
    const dg_shape *s = &in[0].shape;
    if (in[0].dtype != DG_F32 && in[0].dtype != DG_F64)
        FAIL("input must be float32 or float64");
    if (s->rank < 2)
        FAIL("input must have rank >= 2, got rank %d", s->rank);
    int64_t m = s->dims[s->rank - 2], nn = s->dims[s->rank - 1];
    int64_t p = min_dim(m, nn);
    dgc_ttype empty = in[0];
    empty.value = NULL;
    empty.shape.rank = 1;
    empty.shape.dims[0] = 0;
    if (n->op == DGC_OPID_SelfAdjointEigV2) {
        if (m >= 0 && nn >= 0 && m != nn)
            FAIL("input must be square matrices, got %lld x %lld",
                 (long long)m, (long long)nn);
        batch_plus(&out[0], &in[0], nn, -2);
        if (dgc_attr_b(n, DGC_AT_compute_v))
            out[1] = in[0], out[1].value = NULL;
        else
            out[1] = empty;
        return 0;
    }
    int full = dgc_attr_b(n, DGC_AT_full_matrices);
    if (n->op == DGC_OPID_Qr) {
        int64_t q = full ? m : p;
        batch_plus(&out[0], &in[0], m, q);
        batch_plus(&out[1], &in[0], q, nn);
        return 0;
    }
    batch_plus(&out[0], &in[0], p, -2);
    if (!dgc_attr_b(n, DGC_AT_compute_uv)) {
        out[1] = out[2] = empty;
        return 0;
    }
    batch_plus(&out[1], &in[0], m, full ? m : p);
    batch_plus(&out[2], &in[0], nn, full ? nn : p);
    return 0;
}
