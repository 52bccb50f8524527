/*
 * infer_zoo.c -- shape functions of the op-breadth ops (issue 22):
 * ReverseV2, IdentityN, Einsum (and its equation parser, shared with the
 * kernels and the gradient rule), the image resizes and their gradients,
 * Unique (and UniqueWithCounts), UnsortedSegmentSum, ScatterAdd/Sub and
 * DynamicPartition.  Ops
 * whose output size depends on data (Unique, DynamicPartition) give -1
 * there; their kernels size the outputs themselves.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

static int is_int(dg_dtype t)
{
    return t == DG_I32 || t == DG_I64;
}

static void shape0(dg_shape *s, int rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
}

int dgc_infer_reverse(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 2)
        FAIL("needs tensor and axis");
    if (!is_int(in[1].dtype) || in[1].shape.rank > 1)
        FAIL("axis must be an int32/int64 vector");
    int64_t v[DG_MAX_RANK];
    int c = dgc_ttype_ints(&in[1], v, DG_MAX_RANK);
    if (c > 0 && in[1].value)
        for (int i = 0; i < c; i++)
            if (v[i] < -in[0].shape.rank || v[i] >= in[0].shape.rank)
                FAIL("axis %lld is out of range for rank %d",
                     (long long)v[i], in[0].shape.rank);
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_infer_identity_n(DGC_INFER_ARGS)
{
    (void)n;
    (void)msg;
    (void)msgsz;
    for (int i = 0; i < n_in; i++) {
        out[i] = in[i];
        out[i].value = NULL;
    }
    return 0;
}

/* ---- Einsum -------------------------------------------------------------- */

/* One input's (or the output's) labels: explicit letters, and where "..."
 * stands (-1 none). */
typedef struct es_term {
    char lab[DGC_EINSUM_MAX_LABELS];
    int n, ell;
} es_term;

static int es_term_parse(const char *s, size_t len, es_term *t)
{
    t->n = 0;
    t->ell = -1;
    for (size_t i = 0; i < len; i++) {
        char ch = s[i];
        if (ch == ' ')
            continue;
        if (ch == '.') {
            if (t->ell >= 0 || i + 2 >= len + 0 || s[i + 1] != '.' ||
                s[i + 2] != '.')
                return -1;
            t->ell = t->n;
            i += 2;
            continue;
        }
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')) ||
            t->n >= DGC_EINSUM_MAX_LABELS)
            return -1;
        t->lab[t->n++] = ch;
    }
    return 0;
}

int dgc_einsum_parse(const char *eq, const dg_shape *const *shapes, int n_in,
                     dgc_einsum *e, char *msg, size_t msgsz)
{
    memset(e, 0, sizeof *e);
    if (!eq)
        FAIL("attr equation is missing");
    if (n_in < 1 || n_in > 2)
        FAIL("takes one or two inputs, not %d", n_in);
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    es_term t[3];
    int terms = 0;
    const char *p = eq;
    while (terms < 3) {
        const char *comma = memchr(p, ',', lhs_len - (size_t)(p - eq));
        size_t l = comma ? (size_t)(comma - p) : lhs_len - (size_t)(p - eq);
        if (es_term_parse(p, l, &t[terms]))
            FAIL("equation '%s': bad term", eq);
        terms++;
        if (!comma)
            break;
        p = comma + 1;
    }
    if (terms != n_in)
        FAIL("equation '%s' has %d inputs, the node %d", eq, terms, n_in);
    /* ellipsis dims per input; label ids: letters first, then the
     * ellipsis dims (right-aligned), '0' + k for the k-th from the right */
    int ell_n[2] = {0, 0}, ell_max = 0;
    for (int i = 0; i < n_in; i++) {
        int r = shapes[i]->rank;
        if (t[i].ell < 0 && r != t[i].n)
            FAIL("equation '%s': input %d has rank %d, the term %d labels",
                 eq, i, r, t[i].n);
        if (t[i].ell >= 0) {
            ell_n[i] = r - t[i].n;
            if (ell_n[i] < 0)
                FAIL("equation '%s': input %d has rank %d, fewer than its "
                     "labels", eq, i, r);
        }
        if (ell_n[i] > ell_max)
            ell_max = ell_n[i];
    }
    char names[DGC_EINSUM_MAX_LABELS];
    int nl = 0;
#define LABEL_ID(ch, id)                                                     \
    do {                                                                     \
        id = -1;                                                             \
        for (int q_ = 0; q_ < nl; q_++)                                      \
            if (names[q_] == (ch))                                           \
                id = q_;                                                     \
        if (id < 0) {                                                        \
            if (nl >= DGC_EINSUM_MAX_LABELS)                                 \
                FAIL("equation '%s': too many labels", eq);                  \
            names[nl] = (ch);                                                \
            e->dim[nl] = -2;                                                 \
            id = nl++;                                                       \
        }                                                                    \
    } while (0)
    int count[DGC_EINSUM_MAX_LABELS] = {0};
    for (int i = 0; i < n_in; i++) {
        int r = shapes[i]->rank, d = 0;
        if (r > DG_MAX_RANK)
            FAIL("input %d: rank %d", i, r);
        for (int j = 0; j <= t[i].n; j++) {
            if (j == t[i].ell)
                for (int k = 0; k < ell_n[i]; k++) {
                    int id;
                    LABEL_ID((char)('0' + (ell_n[i] - 1 - k)), id);
                    e->in[i][d++] = id;
                }
            if (j < t[i].n) {
                int id;
                LABEL_ID(t[i].lab[j], id);
                e->in[i][d++] = id;
            }
        }
        e->rank[i] = r;
        for (d = 0; d < r; d++) {
            int id = e->in[i][d];
            int64_t s = shapes[i]->dims[d];
            count[id]++;
            if (e->dim[id] == -2 || e->dim[id] == 1 ||
                (e->dim[id] == -1 && s > 1))
                e->dim[id] = s;
            else if (s >= 0 && s != 1 && e->dim[id] >= 0 && e->dim[id] != s)
                FAIL("equation '%s': label '%c' is %lld and %lld", eq,
                     names[id], (long long)e->dim[id], (long long)s);
        }
    }
    e->n_in = n_in;
    /* the output */
    if (arrow) {
        if (es_term_parse(arrow + 2, strlen(arrow + 2), &t[2]))
            FAIL("equation '%s': bad output term", eq);
        int d = 0;
        for (int j = 0; j <= t[2].n; j++) {
            if (j == t[2].ell)
                for (int k = 0; k < ell_max; k++) {
                    int id = -1;
                    for (int q = 0; q < nl; q++)
                        if (names[q] == (char)('0' + (ell_max - 1 - k)))
                            id = q;
                    if (id < 0)
                        FAIL("equation '%s': bad ellipsis", eq);
                    e->out[d++] = id;
                }
            if (j < t[2].n) {
                int id = -1;
                for (int q = 0; q < nl; q++)
                    if (names[q] == t[2].lab[j])
                        id = q;
                if (id < 0)
                    FAIL("equation '%s': output label '%c' is in no input",
                         eq, t[2].lab[j]);
                e->out[d++] = id;
            }
        }
        /* an output without "..." sums the ellipsis dims (numpy refuses
         * it; the gradient rule of a broadcast input uses it) */
        e->out_rank = d;
    } else { /* implicit: the ellipsis, then labels seen once, sorted */
        int d = 0;
        for (int k = 0; k < ell_max; k++)
            for (int q = 0; q < nl; q++)
                if (names[q] == (char)('0' + (ell_max - 1 - k)))
                    e->out[d++] = q;
        for (char ch = 'A'; ch <= 'z'; ch++)
            for (int q = 0; q < nl; q++)
                if (names[q] == ch && count[q] == 1)
                    e->out[d++] = q;
        e->out_rank = d;
    }
    if (e->out_rank > DG_MAX_RANK)
        FAIL("equation '%s': output rank %d", eq, e->out_rank);
    e->n_labels = nl;
    memcpy(e->names, names, sizeof names);
    for (int q = 0; q < nl; q++)
        if (e->dim[q] == -2)
            e->dim[q] = -1;
    return 0;
#undef LABEL_ID
}

void dgc_einsum_loops_of(const dgc_einsum *e, const dg_shape *const *sh,
                         dgc_einsum_loops *l)
{
    int64_t lst[2][DGC_EINSUM_MAX_LABELS];
    memset(lst, 0, sizeof lst);
    memset(l, 0, sizeof *l);
    for (int i = 0; i < e->n_in; i++) {
        int64_t s = 1;
        for (int d = e->rank[i] - 1; d >= 0; d--) {
            int64_t w = sh[i]->dims[d];
            if (w != 1 || e->dim[e->in[i][d]] == 1)
                lst[i][e->in[i][d]] += s;
            s *= w;
        }
    }
    int in_out[DGC_EINSUM_MAX_LABELS] = {0};
    l->no = e->out_rank;
    for (int d = 0; d < e->out_rank; d++) {
        int id = e->out[d];
        l->odim[d] = e->dim[id];
        l->ost[0][d] = lst[0][id];
        l->ost[1][d] = lst[1][id];
        in_out[id] = 1;
    }
    for (int q = 0; q < e->n_labels; q++) {
        if (in_out[q])
            continue;
        l->cdim[l->nc] = e->dim[q];
        l->cst[0][l->nc] = lst[0][q];
        l->cst[1][l->nc] = lst[1][q];
        l->nc++;
    }
}

const char *dgc_einsum_equation(const dgc_node *n, char *buf, size_t size)
{
    if (n->op == DGC_OPID_BatchMatMulV2) {
        snprintf(buf, size, "...%s,...%s->...ik",
                 dgc_attr_bool(n, "adj_x", 0) ? "ji" : "ij",
                 dgc_attr_bool(n, "adj_y", 0) ? "kj" : "jk");
        return buf;
    }
    const dgc_attr *a = dgc_node_attr(n, "equation");
    return a && a->kind == DGC_A_STR ? a->s : NULL;
}

int dgc_infer_einsum(DGC_INFER_ARGS)
{
    char eqb[40];
    const char *eq = dgc_einsum_equation(n, eqb, sizeof eqb);
    const dg_shape *sh[2] = {&in[0].shape, n_in > 1 ? &in[1].shape : NULL};
    dgc_einsum e;
    if (n->op == DGC_OPID_BatchMatMulV2 &&
        (in[0].shape.rank < 2 || in[1].shape.rank < 2))
        FAIL("inputs must have rank >= 2");
    if (dgc_einsum_parse(eq, sh, n_in, &e, msg, msgsz))
        return -1;
    if (n_in > 1 && in[1].dtype != in[0].dtype)
        FAIL("inputs are %s and %s", dg_dtype_name(in[0].dtype),
             dg_dtype_name(in[1].dtype));
    out[0].dtype = in[0].dtype;
    shape0(&out[0].shape, e.out_rank);
    for (int d = 0; d < e.out_rank; d++)
        out[0].shape.dims[d] = e.dim[e.out[d]];
    return 0;
}

/* ---- image resizes (NHWC) ------------------------------------------------ */

int dgc_infer_resize(DGC_INFER_ARGS)
{
    if (n_in != 2)
        FAIL("needs images and size");
    if (in[0].shape.rank != 4)
        FAIL("images must be rank 4 (NHWC), not rank %d", in[0].shape.rank);
    int64_t v[2] = {-1, -1};
    int c = dgc_ttype_ints(&in[1], v, 2);
    if (c != 2)
        FAIL("size must be an int32 vector of 2 elements");
    if (!in[1].value)
        v[0] = v[1] = -1;
    if ((in[1].value) && (v[0] < 0 || v[1] < 0))
        FAIL("size must not be negative");
    out[0].dtype = n->op == DGC_OPID_ResizeBilinear ? DG_F32 : in[0].dtype;
    out[0].shape = in[0].shape;
    out[0].shape.dims[1] = v[0];
    out[0].shape.dims[2] = v[1];
    return 0;
}

int dgc_infer_resize_grad(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 2)
        FAIL("needs grads and the original image");
    if (in[0].shape.rank != 4 || in[1].shape.rank != 4)
        FAIL("grads and image must be rank 4 (NHWC)");
    out[0].dtype = in[1].dtype;
    out[0].shape = in[1].shape;
    out[0].value = NULL;
    if (in[0].dtype != DG_F32) /* TF: grads are ResizeBilinear's float32 */
        FAIL("grads must be float32, not %s", dg_dtype_name(in[0].dtype));
    if (out[0].dtype != DG_F32 && out[0].dtype != DG_F64)
        FAIL("the image must be float32 or float64");
    return 0;
}

/* ---- Unique, segments, scatter, partitions ------------------------------- */

int dgc_infer_unique(DGC_INFER_ARGS)
{
    (void)n_in;
    if (in[0].shape.rank != 1)
        FAIL("x must be a vector, not rank %d", in[0].shape.rank);
    const dgc_attr *a = dgc_node_attr(n, "out_idx");
    dg_dtype it = a ? (dg_dtype)a->i : DG_I32;
    if (!is_int(it))
        FAIL("out_idx must be int32 or int64");
    out[0].dtype = in[0].dtype;
    shape0(&out[0].shape, 1);
    out[0].shape.dims[0] = in[0].shape.dims[0] == 0 ? 0 : -1;
    out[1].dtype = it;
    out[1].shape = in[0].shape;
    if (n->n_outputs == 3) { /* UniqueWithCounts: each value's count */
        out[2].dtype = it;
        out[2].shape = out[0].shape;
    }
    return 0;
}

/* ids' shape must be a prefix of data's. */
static int prefix_of(const dg_shape *p, const dg_shape *s)
{
    if (p->rank > s->rank)
        return 0;
    for (int d = 0; d < p->rank; d++)
        if (p->dims[d] >= 0 && s->dims[d] >= 0 && p->dims[d] != s->dims[d])
            return 0;
    return 1;
}

int dgc_infer_unsorted_segment(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 3)
        FAIL("needs data, segment_ids and num_segments");
    if (!is_int(in[1].dtype) || !is_int(in[2].dtype))
        FAIL("segment_ids and num_segments must be int32 or int64");
    if (!prefix_of(&in[1].shape, &in[0].shape))
        FAIL("segment_ids' shape must be a prefix of data's");
    if (in[2].shape.rank != 0)
        FAIL("num_segments must be a scalar");
    int64_t v = -1;
    if (in[2].value)
        v = in[2].dtype == DG_I32 ? *(const int32_t *)in[2].value
                                  : *(const int64_t *)in[2].value;
    if (in[2].value && v < 0)
        FAIL("num_segments must not be negative");
    int ir = in[1].shape.rank;
    out[0].dtype = in[0].dtype;
    shape0(&out[0].shape, 1 + in[0].shape.rank - ir);
    out[0].shape.dims[0] = v;
    for (int d = ir; d < in[0].shape.rank; d++)
        out[0].shape.dims[1 + d - ir] = in[0].shape.dims[d];
    return 0;
}

int dgc_infer_scatter(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 3)
        FAIL("needs ref, indices and updates");
    if (!is_int(in[1].dtype))
        FAIL("indices must be int32 or int64");
    if (in[2].dtype != in[0].dtype)
        FAIL("updates are %s, ref %s", dg_dtype_name(in[2].dtype),
             dg_dtype_name(in[0].dtype));
    if (in[0].shape.rank < 1)
        FAIL("ref must have rank >= 1");
    const dg_shape *r = &in[0].shape, *ix = &in[1].shape, *u = &in[2].shape;
    if (u->rank != 0) {
        if (u->rank != ix->rank + r->rank - 1)
            FAIL("updates must have shape indices.shape + ref.shape[1:]");
        for (int d = 0; d < u->rank; d++) {
            int64_t w = d < ix->rank ? ix->dims[d] : r->dims[d - ix->rank + 1];
            if (w >= 0 && u->dims[d] >= 0 && w != u->dims[d])
                FAIL("updates must have shape indices.shape + ref.shape[1:]");
        }
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    out[0].value = NULL;
    return 0;
}

int dgc_infer_dynamic_partition(DGC_INFER_ARGS)
{
    (void)n_in;
    int np = (int)dgc_attr_int(n, "num_partitions", 0);
    if (np < 1)
        FAIL("num_partitions must be at least 1");
    if (in[1].dtype != DG_I32 && in[1].dtype != DG_I64)
        FAIL("partitions must be int32");
    if (!prefix_of(&in[1].shape, &in[0].shape))
        FAIL("partitions' shape must be a prefix of data's");
    int pr = in[1].shape.rank;
    for (int i = 0; i < np; i++) {
        out[i].dtype = in[0].dtype;
        shape0(&out[i].shape, 1 + in[0].shape.rank - pr);
        out[i].shape.dims[0] = -1;
        for (int d = pr; d < in[0].shape.rank; d++)
            out[i].shape.dims[1 + d - pr] = in[0].shape.dims[d];
    }
    return 0;
}

/* ---- SpaceToBatchND / BatchToSpaceND -------------------------------------- */

int dgc_infer_space_batch(DGC_INFER_ARGS)
{
    (void)n_in;
    int to_batch = n->op != DGC_OPID_BatchToSpaceND; /* or SpaceToBatch */
    int64_t bs[DG_MAX_RANK], pad[2 * DG_MAX_RANK];
    int m = dgc_ttype_ints(&in[1], bs, DG_MAX_RANK);
    if (m < 1)
        FAIL("block_shape must be an int vector of 1 to %d elements",
             DG_MAX_RANK);
    if (in[2].shape.rank != 2 || in[2].shape.dims[0] != m ||
        in[2].shape.dims[1] != 2)
        FAIL("%s must have shape [%d, 2]", to_batch ? "paddings" : "crops", m);
    const dg_shape *x = &in[0].shape;
    if (x->rank < 1 + m)
        FAIL("input must have rank >= %d", 1 + m);
    int known = in[1].value && in[2].value;
    if (known) {
        for (int i = 0; i < 2 * m; i++)
            pad[i] = in[2].dtype == DG_I32 ? ((const int32_t *)in[2].value)[i]
                                           : ((const int64_t *)in[2].value)[i];
        for (int i = 0; i < m; i++)
            if (bs[i] < 1 || pad[2 * i] < 0 || pad[2 * i + 1] < 0)
                FAIL("block sizes must be >= 1 and %s >= 0",
                     to_batch ? "paddings" : "crops");
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = *x;
    int64_t prod = 1;
    for (int i = 0; i < m; i++)
        prod *= known ? bs[i] : 1;
    for (int i = 0; i < m; i++) {
        int64_t d = x->dims[1 + i];
        if (!known || d < 0) {
            out[0].shape.dims[1 + i] = -1;
            continue;
        }
        if (to_batch) {
            int64_t p = d + pad[2 * i] + pad[2 * i + 1];
            if (p % bs[i])
                FAIL("padded dim %d (%lld) is not a multiple of block %lld",
                     1 + i, (long long)p, (long long)bs[i]);
            out[0].shape.dims[1 + i] = p / bs[i];
        } else {
            int64_t o = d * bs[i] - pad[2 * i] - pad[2 * i + 1];
            if (o < 0)
                FAIL("crops exceed dim %d", 1 + i);
            out[0].shape.dims[1 + i] = o;
        }
    }
    int64_t b = x->dims[0];
    if (!known || b < 0)
        out[0].shape.dims[0] = -1;
    else if (to_batch)
        out[0].shape.dims[0] = b * prod;
    else if (b % prod)
        FAIL("batch %lld is not a multiple of the block size %lld",
             (long long)b, (long long)prod);
    else
        out[0].shape.dims[0] = b / prod;
    return 0;
}

/* ---- Conv3D, MaxPool3D (NDHWC) -------------------------------------------- */

int64_t dgc_win3d(int64_t in, int64_t k, int64_t s, int64_t dil, int same,
                  int64_t *pad_before)
{
    *pad_before = 0;
    if (in < 0)
        return -1;
    int64_t ek = (k - 1) * dil + 1, out;
    if (same) {
        out = (in + s - 1) / s;
        int64_t tot = (out - 1) * s + ek - in;
        *pad_before = tot > 0 ? tot / 2 : 0;
    } else {
        out = in >= ek ? (in - ek) / s + 1 : 0;
    }
    return out;
}

int dgc_infer_ndhwc_padding(const dgc_node *n, int *same, char *msg,
                            size_t msgsz)
{
    const dgc_attr *fmt = dgc_node_attr(n, "data_format");
    if (fmt && fmt->s && strcmp(fmt->s, "NDHWC") != 0)
        FAIL("only data_format NDHWC is supported");
    const dgc_attr *pa = dgc_node_attr(n, "padding");
    if (!pa || !pa->s || (strcmp(pa->s, "SAME") && strcmp(pa->s, "VALID")))
        FAIL("padding must be SAME or VALID");
    if (same)
        *same = strcmp(pa->s, "SAME") == 0;
    return 0;
}

int dgc_infer_conv3d(DGC_INFER_ARGS)
{
    int conv = n->op == DGC_OPID_Conv3D;
    const dg_shape *x = &in[0].shape;
    if (x->rank != 5)
        FAIL("input must be rank 5 (NDHWC)");
    int same;
    if (dgc_infer_ndhwc_padding(n, &same, msg, msgsz))
        return -1;
    const dgc_attr *st = dgc_node_attr(n, "strides");
    const dgc_attr *ks = conv ? NULL : dgc_node_attr(n, "ksize");
    const dgc_attr *dl = dgc_node_attr(n, "dilations");
    if (!st || st->n != 5 || (!conv && (!ks || ks->n != 5)))
        FAIL("strides%s must have 5 elements", conv ? "" : " and ksize");
    if (conv) {
        if (n_in != 2 || in[1].shape.rank != 5)
            FAIL("filter must be rank 5 [kd, kh, kw, in, out]");
        if (in[1].dtype != in[0].dtype)
            FAIL("filter and input dtypes differ");
        if (x->dims[4] >= 0 && in[1].shape.dims[3] >= 0 &&
            x->dims[4] != in[1].shape.dims[3])
            FAIL("input has %lld channels, the filter %lld",
                 (long long)x->dims[4], (long long)in[1].shape.dims[3]);
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = *x;
    for (int d = 0; d < 3; d++) {
        int64_t k = conv ? in[1].shape.dims[d] : ks->ints[1 + d], pb;
        int64_t dil = conv && dl && dl->n == 5 ? dl->ints[1 + d] : 1;
        if (st->ints[1 + d] < 1 || dil < 1)
            FAIL("strides and dilations must be >= 1");
        out[0].shape.dims[1 + d] =
            k < 0 ? -1 : dgc_win3d(x->dims[1 + d], k, st->ints[1 + d], dil,
                                   same, &pb);
    }
    if (conv)
        out[0].shape.dims[4] = in[1].shape.dims[4];
    return 0;
}

int dgc_infer_is_initialized(DGC_INFER_ARGS)
{
    (void)n;
    (void)in;
    (void)n_in;
    (void)msg;
    (void)msgsz;
    out[0].dtype = DG_BOOL;
    shape0(&out[0].shape, 0);
    return 0;
}

int dgc_infer_is_finite(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 1)
        FAIL("needs one input");
    if (in[0].dtype != DG_F32 && in[0].dtype != DG_F64)
        FAIL("needs a float input, got %s", dg_dtype_name(in[0].dtype));
    out[0] = in[0];
    out[0].value = NULL;
    out[0].dtype = DG_BOOL;
    return 0;
}

int dgc_infer_cumsum(DGC_INFER_ARGS)
{
    if (n_in != 1)
        FAIL("needs one input (TF's axis input becomes attrs.axis)");
    int64_t ax = dgc_attr_int(n, "axis", 0);
    int r = in[0].shape.rank;
    if (ax < -r || ax >= r)
        FAIL("axis %lld is out of range for rank %d", (long long)ax, r);
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_infer_one_hot(DGC_INFER_ARGS)
{
    if (n_in != 4)
        FAIL("needs indices, depth, on_value and off_value");
    if (!is_int(in[0].dtype) || in[1].dtype != DG_I32 ||
        in[1].shape.rank != 0)
        FAIL("needs int32/int64 indices and an int32 scalar depth");
    if (in[2].dtype != in[3].dtype || in[2].shape.rank != 0 ||
        in[3].shape.rank != 0)
        FAIL("on_value and off_value must be scalars of one dtype");
    int r = in[0].shape.rank;
    int64_t ax = dgc_attr_int(n, "axis", -1);
    if (ax < -1 || ax > r || r + 1 > DG_MAX_RANK)
        FAIL("axis %lld is out of range for indices of rank %d",
             (long long)ax, r);
    if (ax == -1)
        ax = r;
    int64_t depth = -1;
    if (in[1].value && dgc_ttype_ints(&in[1], &depth, 1) == 1 && depth < 0)
        FAIL("depth %lld is negative", (long long)depth);
    shape0(&out[0].shape, r + 1);
    for (int i = 0, o = 0; o < r + 1; o++)
        out[0].shape.dims[o] = o == ax ? depth : in[0].shape.dims[i++];
    out[0].dtype = in[2].dtype;
    out[0].value = NULL;
    return 0;
}

int dgc_infer_depth_space(DGC_INFER_ARGS)
{
    if (n_in != 1)
        FAIL("needs one input");
    const dgc_attr *df = dgc_node_attr(n, "data_format");
    if (df && df->s && strcmp(df->s, "NHWC") != 0)
        FAIL("data_format %s is not supported (NHWC only)", df->s);
    int64_t b = dgc_attr_int(n, "block_size", 0);
    if (b < 2)
        FAIL("block_size must be at least 2, got %lld", (long long)b);
    const dg_shape *s = &in[0].shape;
    if (s->rank != 4)
        FAIL("needs an NHWC input of rank 4, got rank %d", s->rank);
    out[0] = in[0];
    out[0].value = NULL;
    int64_t *o = out[0].shape.dims;
    if (n->op == DGC_OPID_DepthToSpace) {
        if (s->dims[3] >= 0 && s->dims[3] % (b * b) != 0)
            FAIL("depth %lld is not divisible by block_size^2 = %lld",
                 (long long)s->dims[3], (long long)(b * b));
        o[1] = s->dims[1] < 0 ? -1 : s->dims[1] * b;
        o[2] = s->dims[2] < 0 ? -1 : s->dims[2] * b;
        o[3] = s->dims[3] < 0 ? -1 : s->dims[3] / (b * b);
    } else {
        for (int d = 1; d <= 2; d++)
            if (s->dims[d] >= 0 && s->dims[d] % b != 0)
                FAIL("dimension %d (%lld) is not divisible by block_size "
                     "%lld", d, (long long)s->dims[d], (long long)b);
        o[1] = s->dims[1] < 0 ? -1 : s->dims[1] / b;
        o[2] = s->dims[2] < 0 ? -1 : s->dims[2] / b;
        o[3] = s->dims[3] < 0 ? -1 : s->dims[3] * b * b;
    }
    return 0;
}

int dgc_infer_mirror_pad(DGC_INFER_ARGS)
{
    if (n_in != 2)
        FAIL("needs the tensor and paddings");
    const dgc_attr *m = dgc_node_attr(n, "mode");
    int sym = m && m->s && strcmp(m->s, "SYMMETRIC") == 0;
    if (!m || !m->s || (!sym && strcmp(m->s, "REFLECT") != 0))
        FAIL("mode must be REFLECT or SYMMETRIC");
    int grad = n->op == DGC_OPID_MirrorPadGrad;
    const dg_shape *x = &in[0].shape;
    const dgc_ttype *p = &in[1];
    if (!is_int(p->dtype) || p->shape.rank != 2 || p->shape.dims[1] != 2 ||
        (p->shape.dims[0] >= 0 && p->shape.dims[0] != x->rank))
        FAIL("paddings must be an int32/int64 [%d, 2] matrix", x->rank);
    int64_t pv[2 * DG_MAX_RANK];
    int have = p->value && p->shape.dims[0] == x->rank;
    for (int i = 0; have && i < 2 * x->rank; i++)
        pv[i] = p->dtype == DG_I32 ? ((const int32_t *)p->value)[i]
                                   : ((const int64_t *)p->value)[i];
    out[0] = in[0];
    out[0].value = NULL;
    for (int d = 0; d < x->rank; d++) {
        if (!have || x->dims[d] < 0) {
            out[0].shape.dims[d] = -1;
            continue;
        }
        int64_t a = pv[2 * d], b = pv[2 * d + 1];
        int64_t lim = grad ? (x->dims[d] - a - b) : x->dims[d];
        if (a < 0 || b < 0 || a > lim - !sym || b > lim - !sym)
            FAIL("paddings %lld, %lld of dimension %d do not fit a size of "
                 "%lld in mode %s", (long long)a, (long long)b, d,
                 (long long)lim, m->s);
        out[0].shape.dims[d] = grad ? lim : x->dims[d] + a + b;
    }
    return 0;
}

/* bad_indices_policy: dgrun's kernels fail on a bad index (TF's default) */
static int nd_policy(const dgc_node *n, char *msg, size_t msgsz)
{
    const dgc_attr *a = dgc_node_attr(n, "bad_indices_policy");
    if (a && a->s && a->s[0] && strcmp(a->s, "DEFAULT") != 0 &&
        strcmp(a->s, "ERROR") != 0)
        FAIL("bad_indices_policy %s is not supported (an out-of-range "
             "index is an error)", a->s);
    return 0;
}

/* indices' tuple length *kk (its known last dim, at most `rank`, the
 * rank of the tensor it indexes, `what`): 0, or -1 with msg */
static int nd_tuple_len(const dgc_ttype *ind, int rank, const char *what,
                        int64_t *kk, char *msg, size_t msgsz)
{
    const dg_shape *is = &ind->shape;
    if (!is_int(ind->dtype) || is->rank < 1 || is->dims[is->rank - 1] < 0)
        FAIL("indices must be int32/int64 of rank >= 1 with a known last "
             "dimension");
    *kk = is->dims[is->rank - 1];
    if (*kk > rank)
        FAIL("index tuples of %lld elements for %s of rank %d",
             (long long)*kk, what, rank);
    return 0;
}

int dgc_infer_gather_nd(DGC_INFER_ARGS)
{
    if (nd_policy(n, msg, msgsz))
        return -1;
    if (n_in != 2)
        FAIL("needs params and indices");
    const dg_shape *ps = &in[0].shape, *is = &in[1].shape;
    int64_t kk;
    if (nd_tuple_len(&in[1], ps->rank, "params", &kk, msg, msgsz))
        return -1;
    int r = is->rank - 1 + ps->rank - (int)kk;
    if (r > DG_MAX_RANK)
        FAIL("the output's rank %d is over %d", r, DG_MAX_RANK);
    out[0].dtype = in[0].dtype;
    out[0].value = NULL;
    shape0(&out[0].shape, r);
    int o = 0;
    for (int d = 0; d < is->rank - 1; d++)
        out[0].shape.dims[o++] = is->dims[d];
    for (int d = (int)kk; d < ps->rank; d++)
        out[0].shape.dims[o++] = ps->dims[d];
    return 0;
}

int dgc_infer_scatter_nd(DGC_INFER_ARGS)
{
    if (nd_policy(n, msg, msgsz))
        return -1;
    if (n_in != 3)
        FAIL("needs indices, updates and shape");
    const dg_shape *is = &in[0].shape;
    if (!is_int(in[0].dtype) || is->rank < 1 || is->dims[is->rank - 1] < 0)
        FAIL("indices must be int32/int64 of rank >= 1 with a known last "
             "dimension");
    int64_t sv[DG_MAX_RANK];
    int r = dgc_ttype_ints(&in[2], sv, DG_MAX_RANK);
    if (r < 0)
        FAIL("shape must be an int32/int64 vector of at most %d elements",
             DG_MAX_RANK);
    out[0].dtype = in[1].dtype;
    out[0].value = NULL;
    shape0(&out[0].shape, r);
    for (int d = 0; d < r; d++)
        out[0].shape.dims[d] = in[2].value ? sv[d] : -1;
    if (in[2].value && is->dims[is->rank - 1] > r)
        FAIL("index tuples of %lld elements for a shape of rank %d",
             (long long)is->dims[is->rank - 1], r);
    return 0;
}

/* TensorScatterUpdate/Add/Sub (tensor, indices, updates): updates must
 * be indices' leading dims and then tensor's dims past the tuples' K */
int dgc_infer_tensor_scatter(DGC_INFER_ARGS)
{
    if (nd_policy(n, msg, msgsz))
        return -1;
    if (n_in != 3)
        FAIL("needs tensor, indices and updates");
    const dg_shape *ts = &in[0].shape, *is = &in[1].shape, *us = &in[2].shape;
    int64_t kk;
    if (nd_tuple_len(&in[1], ts->rank, "a tensor", &kk, msg, msgsz))
        return -1;
    if (in[2].dtype != in[0].dtype)
        FAIL("updates are %s for a %s tensor", dg_dtype_name(in[2].dtype),
             dg_dtype_name(in[0].dtype));
    int ur = is->rank - 1 + ts->rank - (int)kk, bad = us->rank != ur;
    for (int d = 0; !bad && d < ur; d++) {
        int64_t want = d < is->rank - 1 ? is->dims[d]
                                        : ts->dims[kk + d - (is->rank - 1)];
        bad = want >= 0 && us->dims[d] >= 0 && us->dims[d] != want;
    }
    if (bad)
        FAIL("updates' shape must be indices' leading dims and then the "
             "tensor's dims past the %lld indexed ones", (long long)kk);
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_axis_split(const dg_shape *s, int64_t axis, int64_t *outer,
                   int64_t *len, int64_t *inner)
{
    if (axis < 0)
        axis += s->rank;
    if (axis < 0 || axis >= s->rank)
        return -1;
    *outer = 1;
    *inner = 1;
    *len = s->dims[axis];
    for (int d = 0; d < axis; d++)
        *outer *= s->dims[d];
    for (int d = (int)axis + 1; d < s->rank; d++)
        *inner *= s->dims[d];
    return 0;
}

int dgc_infer_topk(DGC_INFER_ARGS)
{
    if (n_in != 2)
        FAIL("needs the input and k");
    const dgc_attr *it = dgc_node_attr(n, "index_type");
    dg_dtype ix = it && it->kind == DGC_A_DTYPE ? (dg_dtype)it->i : DG_I32;
    if (ix != DG_I32 && ix != DG_I64)
        FAIL("index_type %s is not supported (int32 or int64)",
             dg_dtype_name(ix));
    const dg_shape *s = &in[0].shape;
    if (s->rank < 1)
        FAIL("needs an input of rank >= 1");
    if ((in[1].dtype != DG_I32 && in[1].dtype != DG_I64) ||
        in[1].shape.rank != 0)
        FAIL("k must be an int32 or int64 scalar");
    int64_t k = -1;
    if (in[1].value && dgc_ttype_ints(&in[1], &k, 1) == 1) {
        if (k < 0)
            FAIL("k %lld is negative", (long long)k);
        if (s->dims[s->rank - 1] >= 0 && k > s->dims[s->rank - 1])
            FAIL("k %lld is larger than the last dimension %lld",
                 (long long)k, (long long)s->dims[s->rank - 1]);
    }
    out[0] = in[0];
    out[0].value = NULL;
    out[0].shape.dims[s->rank - 1] = k;
    out[1] = out[0];
    out[1].dtype = ix;
    return 0;
}
