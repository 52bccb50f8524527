/*
 * infer_ops9b.c -- shape functions of the structure and matrix ops of
 * issue 22's ops9b group: MatrixBandPart and Roll keep their input's type;
 * their integer inputs (bands, shifts, axes) are checked here when their
 * values are known at compile time.  ReverseSequence too (its attributes
 * and seq_lengths' length checked).
 */
#include "infer.h"
#include "attr_get.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

static int is_int_upto(const dgc_ttype *t, int rank)
{
    return (t->dtype == DG_I32 || t->dtype == DG_I64) && t->shape.rank <= rank;
}

int dgc_band_check(int64_t rows, int64_t cols, int64_t lo, int64_t up,
                   char *msg, size_t msgsz)
{
    if (rows >= 0 && lo > rows)
        FAIL("num_lower %lld is larger than the matrix's %lld rows",
             (long long)lo, (long long)rows);
    if (cols >= 0 && up > cols)
        FAIL("num_upper %lld is larger than the matrix's %lld columns",
             (long long)up, (long long)cols);
    return 0;
}

int dgc_infer_band_part(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 3)
        FAIL("needs the input, num_lower and num_upper");
    const dg_shape *s = &in[0].shape;
    if (s->rank < 2)
        FAIL("needs an input of rank >= 2, got rank %d", s->rank);
    int64_t b[2] = {-1, -1};
    for (int i = 1; i < 3; i++) {
        if (!is_int_upto(&in[i], 0) || in[i].shape.rank != 0)
            FAIL("%s must be an int32 or int64 scalar",
                 i == 1 ? "num_lower" : "num_upper");
        if (in[i].value)
            dgc_ttype_ints(&in[i], &b[i - 1], 1);
    }
    if (dgc_band_check(s->dims[s->rank - 2], s->dims[s->rank - 1], b[0], b[1],
                       msg, msgsz))
        return -1;
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_infer_roll(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 3)
        FAIL("needs the input, shift and axis");
    if (!is_int_upto(&in[1], 1) || !is_int_upto(&in[2], 1))
        FAIL("shift and axis must be int32 or int64 scalars or vectors");
    if (in[1].shape.rank != in[2].shape.rank ||
        (in[1].shape.rank == 1 && in[1].shape.dims[0] >= 0 &&
         in[2].shape.dims[0] >= 0 &&
         in[1].shape.dims[0] != in[2].shape.dims[0]))
        FAIL("shift and axis must have the same shape");
    int64_t ax[DG_MAX_RANK];
    int na;
    if (in[2].value && (na = dgc_ttype_ints(&in[2], ax, DG_MAX_RANK)) >= 0) {
        for (int i = 0; i < na; i++)
            if (ax[i] < -in[0].shape.rank || ax[i] >= in[0].shape.rank)
                FAIL("axis %lld is out of range for rank %d",
                     (long long)ax[i], in[0].shape.rank);
    }
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_roll_shifts(const dg_shape *s, const int64_t *shift,
                    const int64_t *axis, int n, int64_t *sh)
{
    for (int d = 0; d < s->rank; d++)
        sh[d] = 0;
    for (int i = 0; i < n; i++) {
        int64_t a = axis[i] < 0 ? axis[i] + s->rank : axis[i];
        if (a < 0 || a >= s->rank)
            return i;
        int64_t d = s->dims[a];
        if (d > 0)
            sh[a] = ((sh[a] + shift[i] % d) % d + d) % d;
    }
    return -1;
}

int dgc_infer_reverse_sequence(DGC_INFER_ARGS)
{
    if (n_in != 2)
        FAIL("needs the input and seq_lengths");
    const dg_shape *s = &in[0].shape;
    int64_t sd = dgc_attr_i(n, DGC_AT_seq_dim);
    int64_t bd = dgc_attr_i(n, DGC_AT_batch_dim);
    if (sd < 0 || sd >= s->rank || bd < 0 || bd >= s->rank || sd == bd)
        FAIL("seq_dim %lld and batch_dim %lld must be two axes of rank %d",
             (long long)sd, (long long)bd, s->rank);
    if (!is_int_upto(&in[1], 1) || in[1].shape.rank != 1)
        FAIL("seq_lengths must be an int32 or int64 vector");
    if (in[1].shape.dims[0] >= 0 && s->dims[bd] >= 0 &&
        in[1].shape.dims[0] != s->dims[bd])
        FAIL("seq_lengths has %lld entries for batch_dim %lld of size %lld",
             (long long)in[1].shape.dims[0], (long long)bd,
             (long long)s->dims[bd]);
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_bcast_args(const int64_t *a, int na, const int64_t *b, int nb,
                   int64_t *r)
{
    int rank = na > nb ? na : nb;
    for (int i = 0; i < rank; i++) {
        int ia = i - (rank - na), ib = i - (rank - nb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1 - i;
        r[i] = da == 1 ? db : da;
    }
    return rank;
}

int dgc_infer_bcast_args(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    int64_t a[DG_MAX_RANK], b[DG_MAX_RANK], r[DG_MAX_RANK];
    int na = dgc_ttype_ints(&in[0], a, DG_MAX_RANK);
    int nb = dgc_ttype_ints(&in[1], b, DG_MAX_RANK);
    if (in[0].shape.rank != 1 || in[1].shape.rank != 1 ||
        !is_int_upto(&in[0], 1) || in[0].dtype != in[1].dtype)
        FAIL("needs two int32/int64 shape vectors of one dtype");
    if (na == -2 || nb == -2)
        FAIL("shapes of rank above %d are not supported", DG_MAX_RANK);
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = na < 0 || nb < 0 ? -1 : na > nb ? na : nb;
    int rc;
    if (in[0].value && in[1].value && na >= 0 && nb >= 0 &&
        (rc = dgc_bcast_args(a, na, b, nb, r)) < 0)
        FAIL("shapes of ranks %d and %d are incompatible at dimension %d",
             na, nb, -1 - rc);
    return 0;
}

int dgc_infer_linspace(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    if (in[0].shape.rank != 0 || in[1].shape.rank != 0 ||
        in[0].dtype != in[1].dtype ||
        !(in[0].dtype == DG_F32 || in[0].dtype == DG_F64))
        FAIL("start and stop must be float scalars of one dtype");
    int64_t num = -1;
    if (!is_int_upto(&in[2], 0))
        FAIL("num must be an int32 or int64 scalar");
    if (in[2].value && dgc_ttype_ints(&in[2], &num, 1) == 1 && num <= 0)
        FAIL("num must be positive, got %lld", (long long)num);
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = in[2].value ? num : -1;
    return 0;
}

/* StridedSliceGrad (shape, begin, end, strides, dy): dy's dtype, the shape
 * input's values; the slice and dy's size are the kernel's to check */
int dgc_infer_strided_slice_grad(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 5)
        FAIL("needs shape, begin, end, strides and dy");
    int64_t sv[DG_MAX_RANK];
    int r = dgc_ttype_ints(&in[0], sv, DG_MAX_RANK);
    if (r < 0)
        FAIL("shape must be an int32/int64 vector of at most %d elements",
             DG_MAX_RANK);
    for (int i = 1; i < 4; i++)
        if (!is_int_upto(&in[i], 1) || in[i].shape.rank != 1)
            FAIL("begin, end and strides must be int32/int64 vectors");
    out[0].dtype = in[4].dtype;
    out[0].value = NULL;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = r;
    for (int d = 0; d < r; d++)
        out[0].shape.dims[d] = in[0].value ? sv[d] : -1;
    return 0;
}

int dgc_diag_k(const dgc_ttype *t, int64_t *k, char *msg, size_t msgsz)
{
    int64_t v[2];
    int nk = dgc_ttype_ints(t, v, 2);
    if (t->dtype != DG_I32 || nk < 1 || nk > 2)
        FAIL("k must be an int32 scalar or a pair [lo, hi]");
    if (!t->value)
        return 1;
    if (nk == 2 && v[0] != v[1])
        FAIL("a range of diagonals k = [%lld, %lld] is not supported (one "
             "diagonal only)", (long long)v[0], (long long)v[1]);
    *k = v[0];
    return 0;
}

/* the diagonal k of an [rows, cols] matrix: its length (<= 0: none) */
static int64_t diag_len(int64_t rows, int64_t cols, int64_t k)
{
    int64_t a = rows + (k < 0 ? k : 0), b = cols - (k > 0 ? k : 0);
    return a < b ? a : b;
}

int dgc_infer_matrix_diag(DGC_INFER_ARGS)
{
    (void)n_in;
    int op = n->op, ki = op == DGC_OPID_MatrixSetDiagV3 ? 2 : 1;
    const dg_shape *s = &in[0].shape;
    int64_t k = 0;
    int rc = dgc_diag_k(&in[ki], &k, msg, msgsz);
    if (rc < 0)
        return -1;
    out[0] = in[0];
    out[0].value = NULL;
    if (op == DGC_OPID_MatrixDiagV3) {
        if (s->rank < 1 || s->rank >= DG_MAX_RANK)
            FAIL("diagonal must have a rank from 1 to %d", DG_MAX_RANK - 1);
        int64_t nr = -1, nc = -1;
        if (in[2].value)
            dgc_ttype_ints(&in[2], &nr, 1);
        if (in[3].value)
            dgc_ttype_ints(&in[3], &nc, 1);
        int64_t len = s->dims[s->rank - 1];
        int64_t mr = len + (k < 0 ? -k : 0), mc = len + (k > 0 ? k : 0);
        /* TF: square when neither is given; at least one the least */
        if (nr == -1 && nc == -1)
            nr = nc = mr > mc ? mr : mc;
        nr = nr == -1 ? mr : nr;
        nc = nc == -1 ? mc : nc;
        if (!rc && len >= 0 && (nr < mr || nc < mc || (nr != mr && nc != mc)))
            FAIL("num_rows %lld and num_cols %lld do not fit diagonal %lld "
                 "of length %lld", (long long)nr, (long long)nc,
                 (long long)k, (long long)len);
        out[0].shape.rank = s->rank + 1;
        out[0].shape.dims[s->rank - 1] = rc || len < 0 ? -1 : nr;
        out[0].shape.dims[s->rank] = rc || len < 0 ? -1 : nc;
        return 0;
    }
    if (s->rank < 2)
        FAIL("input must have a rank of at least 2");
    int64_t rows = s->dims[s->rank - 2], cols = s->dims[s->rank - 1];
    int64_t len = rc || rows < 0 || cols < 0 ? -1 : diag_len(rows, cols, k);
    if (!rc && rows >= 0 && cols >= 0 && len <= 0 && (rows || cols))
        FAIL("diagonal %lld is outside the %lld x %lld matrices",
             (long long)k, (long long)rows, (long long)cols);
    if (op == DGC_OPID_MatrixDiagPartV3) {
        out[0].shape.rank = s->rank - 1;
        out[0].shape.dims[s->rank - 2] = len < 0 ? -1 : len;
    } else if (in[1].shape.rank != s->rank - 1 ||
               (len >= 0 && in[1].shape.dims[s->rank - 2] >= 0 &&
                in[1].shape.dims[s->rank - 2] != len)) {
        FAIL("diagonal must be input's batch dims and the diagonal's "
             "length %lld", (long long)len);
    }
    return 0;
}
