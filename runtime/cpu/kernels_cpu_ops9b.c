/*
 * kernels_cpu_ops9b.c -- CPU kernels of issue 22's ops9b group, structure
 * and matrix ops of TF-2 models: MatrixBandPart (transformers' causal
 * masks), Roll, ReverseSequence (TF-1's bidirectional RNNs), which move
 * elements without arithmetic (one kernel serves every dtype by element
 * size), and the host-side BroadcastArgs and LinSpace (tf.linspace).
 */
#include "kernels_cpu.h"
#include "infer.h"

#include <string.h>

/* element i of a small int32/int64 input */
static int64_t int_in(const dgr_kctx *k, int in, int64_t i)
{
    return (int64_t)dgr_cpu_get(dgr_cpu_ptr(&k->in[in]), k->in[in].dtype, i);
}

/* An element-moving kernel's output 0 (input 0's shape and dtype): n
 * elements of es bytes, x the input's bytes, y the output's. */
typedef struct move_io {
    int64_t n;
    size_t es;
    const char *x;
    char *y;
} move_io;

static dg_status out_like_in(dgr_kctx *k, move_io *m)
{
    m->n = dg_shape_numel(&k->in[0].shape);
    m->es = dg_dtype_size(k->in[0].dtype);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    m->x = dgr_cpu_ptr(&k->in[0]);
    m->y = dgr_cpu_ptr(&k->out[0]);
    return st;
}

/* ---- MatrixBandPart ------------------------------------------------------ */

/* Each innermost [M, N] matrix keeps x[m, n] where (lower < 0 or
 * m - n <= lower) and (upper < 0 or n - m <= upper), zeros elsewhere;
 * a band larger than the matrix is an error, as in TF. */
dg_status dgr_k_band_part(dgr_kctx *k)
{
    const dg_shape *s = &k->in[0].shape;
    int64_t rows = s->dims[s->rank - 2], cols = s->dims[s->rank - 1];
    int64_t lo = int_in(k, 1, 0), up = int_in(k, 2, 0);
    char msg[128];
    if (dgc_band_check(rows, cols, lo, up, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    move_io m;
    dg_status st = out_like_in(k, &m);
    if (st)
        return st;
    for (int64_t i = 0; i < m.n; i++) {
        int64_t c = i % cols, r = (i / cols) % rows;
        if ((lo < 0 || r - c <= lo) && (up < 0 || c - r <= up))
            memcpy(m.y + (size_t)i * m.es, m.x + (size_t)i * m.es, m.es);
        else
            memset(m.y + (size_t)i * m.es, 0, m.es);
    }
    return DG_OK;
}
DGR_KERNEL(MatrixBandPart, dgr_k_band_part);

/* ---- Roll ---------------------------------------------------------------- */

/* y[(i + shift) mod dim] = x[i] along every rolled axis: each output
 * element reads its source through the per-dimension shifts. */
dg_status dgr_k_roll(dgr_kctx *k)
{
    const dg_shape *s = &k->in[0].shape;
    int64_t ns = dg_shape_numel(&k->in[1].shape);
    if (ns != dg_shape_numel(&k->in[2].shape) || ns > DG_MAX_RANK * 2)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': shift and axis have "
                      "%lld and %lld elements (the same count, at most %d)",
                      k->node->name, (long long)ns,
                      (long long)dg_shape_numel(&k->in[2].shape),
                      DG_MAX_RANK * 2);
    int64_t shift[DG_MAX_RANK * 2], axis[DG_MAX_RANK * 2], sh[DG_MAX_RANK];
    for (int64_t i = 0; i < ns; i++) {
        shift[i] = int_in(k, 1, i);
        axis[i] = int_in(k, 2, i);
    }
    int bad = dgc_roll_shifts(s, shift, axis, (int)ns, sh);
    if (bad >= 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': axis %lld is out of "
                      "range for rank %d", k->node->name,
                      (long long)axis[bad], s->rank);
    move_io m;
    dg_status st = out_like_in(k, &m);
    if (st)
        return st;
    for (int64_t i = 0; i < m.n; i++) {
        int64_t rem = i, src = 0, stride = 1;
        for (int d = s->rank - 1; d >= 0; d--) {
            int64_t dim = s->dims[d], c = rem % dim;
            rem /= dim;
            src += ((c - sh[d] + dim) % dim) * stride;
            stride *= dim;
        }
        memcpy(m.y + (size_t)i * m.es, m.x + (size_t)src * m.es, m.es);
    }
    return DG_OK;
}
DGR_KERNEL(Roll, dgr_k_roll);

/* ---- ReverseSequence ----------------------------------------------------- */

/* Checks seq_lengths (each in [0, dim(seq_dim)], as TF's CPU kernel): -1
 * with k->err set, or 0. */
static int revseq_lengths(dgr_kctx *k, int64_t seq)
{
    int64_t nb = dg_shape_numel(&k->in[1].shape);
    for (int64_t b = 0; b < nb; b++) {
        int64_t l = int_in(k, 1, b);
        if (l < 0 || l > seq) {
            dg_err(k->err, DG_E_RUNTIME, "node '%s': seq_lengths[%lld] = "
                   "%lld is outside [0, %lld]", k->node->name, (long long)b,
                   (long long)l, (long long)seq);
            return -1;
        }
    }
    return 0;
}

/* y[.., b, .., s, ..] = x[.., b, .., len[b] - 1 - s, ..] for s < len[b]
 * (b along batch_dim, s along seq_dim), else x's element */
dg_status dgr_k_reverse_sequence(dgr_kctx *k)
{
    const dg_shape *s = &k->in[0].shape;
    int sd = (int)dgc_attr_i(k->node, DGC_AT_seq_dim);
    int bd = (int)dgc_attr_i(k->node, DGC_AT_batch_dim);
    if (revseq_lengths(k, s->dims[sd]))
        return DG_E_RUNTIME;
    int64_t sstride = 1, bstride = 1;
    move_io m;
    dg_status st = out_like_in(k, &m);
    if (st)
        return st;
    for (int d = s->rank - 1; d > sd; d--)
        sstride *= s->dims[d];
    for (int d = s->rank - 1; d > bd; d--)
        bstride *= s->dims[d];
    for (int64_t i = 0; i < m.n; i++) {
        int64_t q = (i / sstride) % s->dims[sd];
        int64_t len = int_in(k, 1, (i / bstride) % s->dims[bd]), src = i;
        if (q < len)
            src = i + (len - 1 - 2 * q) * sstride;
        memcpy(m.y + (size_t)i * m.es, m.x + (size_t)src * m.es, m.es);
    }
    return DG_OK;
}
DGR_KERNEL(ReverseSequence, dgr_k_reverse_sequence);

/* ---- BroadcastArgs, LinSpace ---------------------------------------------- */

dg_status dgr_k_bcast_args(dgr_kctx *k)
{
    int64_t a[DG_MAX_RANK], b[DG_MAX_RANK], r[DG_MAX_RANK];
    int64_t na = dg_shape_numel(&k->in[0].shape);
    int64_t nb = dg_shape_numel(&k->in[1].shape);
    if (na > DG_MAX_RANK || nb > DG_MAX_RANK)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': shapes of rank above "
                      "%d are not supported", k->node->name, DG_MAX_RANK);
    for (int64_t i = 0; i < na; i++)
        a[i] = int_in(k, 0, i);
    for (int64_t i = 0; i < nb; i++)
        b[i] = int_in(k, 1, i);
    int rank = dgc_bcast_args(a, (int)na, b, (int)nb, r);
    if (rank < 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': shapes of ranks %lld "
                      "and %lld are incompatible at dimension %d",
                      k->node->name, (long long)na, (long long)nb, -1 - rank);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dgr_cpu_convert(r, DG_I64, dgr_cpu_ptr(&k->out[0]), k->out[0].dtype, rank);
    return DG_OK;
}
DGR_KERNEL(BroadcastArgs, dgr_k_bcast_args);

/* TF's CPU kernel: start + i * step for i < num - 1, then stop itself,
 * step = (stop - start) / (num - 1) in the dtype's precision */
#define LINSPACE(T)                                                          \
    do {                                                                     \
        T a = *(const T *)dgr_cpu_ptr(&k->in[0]);                            \
        T b = *(const T *)dgr_cpu_ptr(&k->in[1]);                            \
        T *y = dgr_cpu_ptr(&k->out[0]);                                      \
        if (num == 1) {                                                      \
            y[0] = a;                                                        \
            break;                                                           \
        }                                                                    \
        T step = (b - a) / (T)(num - 1);                                     \
        for (int64_t i = 0; i < num - 1; i++)                                \
            y[i] = a + step * (T)i;                                          \
        y[num - 1] = b;                                                      \
    } while (0)

dg_status dgr_k_linspace(dgr_kctx *k)
{
    int64_t num = int_in(k, 2, 0);
    if (num <= 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': num must be "
                      "positive, got %lld", k->node->name, (long long)num);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    if (k->out[0].dtype == DG_F32)
        LINSPACE(float);
    else
        LINSPACE(double);
    return DG_OK;
}
DGR_KERNEL(LinSpace, dgr_k_linspace);

/* ---- MatrixDiagV3, MatrixDiagPartV3, MatrixSetDiagV3 ---------------------- */

/* One diagonal k (inference refuses a range): element i of each batch's
 * diagonal sits at row i + max(-k, 0), column i + max(k, 0) of its
 * [rows, cols] matrix.  MatrixDiagV3 pads with padding_value. */
dg_status dgr_k_matrix_diag(dgr_kctx *k)
{
    int op = k->node->op, diag = op == DGC_OPID_MatrixDiagV3;
    int part = op == DGC_OPID_MatrixDiagPartV3;
    int64_t d = int_in(k, op == DGC_OPID_MatrixSetDiagV3 ? 2 : 1, 0);
    const dg_shape *ms = diag ? &k->out_types[0].shape : &k->in[0].shape;
    int64_t rows = ms->dims[ms->rank - 2], cols = ms->dims[ms->rank - 1];
    int64_t r0 = d < 0 ? -d : 0, c0 = d > 0 ? d : 0;
    int64_t len = rows - r0 < cols - c0 ? rows - r0 : cols - c0;
    if (diag && len > k->in[0].shape.dims[k->in[0].shape.rank - 1])
        len = k->in[0].shape.dims[k->in[0].shape.rank - 1];
    int64_t mat = rows * cols, batch = mat ? dg_shape_numel(ms) / mat : 0;
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    size_t es = dg_dtype_size(k->out[0].dtype);
    char *y = dgr_cpu_ptr(&k->out[0]);
    const char *x = dgr_cpu_ptr(&k->in[0]);
    const char *v = op == DGC_OPID_MatrixSetDiagV3 ? dgr_cpu_ptr(&k->in[1])
                                                   : x;
    if (diag)
        for (int64_t i = 0; i < batch * mat; i++)
            memcpy(y + (size_t)i * es, dgr_cpu_ptr(&k->in[4]), es);
    else if (!part)
        memcpy(y, x, (size_t)(batch * mat) * es);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < len; i++) {
            size_t at = (size_t)(b * mat + (i + r0) * cols + i + c0) * es;
            size_t di = (size_t)(b * len + i) * es;
            if (part)
                memcpy(y + di, x + at, es);
            else
                memcpy(y + at, v + di, es);
        }
    return DG_OK;
}
DGR_KERNEL(MatrixDiagV3, dgr_k_matrix_diag);
DGR_KERNEL(MatrixDiagPartV3, dgr_k_matrix_diag);
DGR_KERNEL(MatrixSetDiagV3, dgr_k_matrix_diag);
