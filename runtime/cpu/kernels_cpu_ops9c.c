/*
 * kernels_cpu_ops9c.c -- CPU kernels of issue 22's segment reductions:
 * UnsortedSegmentMax/Min/Prod (num_segments rows; negative ids dropped; an
 * empty segment is the dtype's lowest / highest finite value / 1, as TF),
 * the sorted SegmentSum/Mean/Max/Min/Prod (last id + 1 rows; ids must be
 * sorted and >= 0; an empty segment is 0, 1 for SegmentProd),
 * SparseSegmentSum/Mean/SqrtN (the rows data[indices[i]], reduced as
 * SegmentSum) and their gradient ops, each output row reduced in the order
 * of the rows; SparseToDense, InTopKV2, Bincount and DenseBincount.
 */
#include "kernels_cpu.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum { SEG_SUM, SEG_MEAN, SEG_MAX, SEG_MIN, SEG_PROD, SEG_SQRTN };
enum { UNSORTED, SORTED, SPARSE };

/* Reduce data rows x[xi[i]] (x[i] when xi is NULL; inner elements each)
 * into o[sid[i]] for ids >= 0;
 * cnt[s] counts segment s's rows.  `empty0`: a segment without rows is 0
 * (sorted ops) instead of the reduction's identity. */
#define SEG_RED(T, LO, HI)                                                  \
    do {                                                                    \
        const T *x_ = xv;                                                   \
        T *o_ = ov;                                                         \
        T id_ = mode == SEG_MAX ? (LO) : mode == SEG_MIN ? (HI)             \
                : mode == SEG_PROD ? (T)1 : (T)0;                           \
        for (int64_t q_ = 0; q_ < ns * inner; q_++)                         \
            o_[q_] = id_;                                                   \
        for (int64_t i_ = 0; i_ < rows; i_++) {                             \
            if (sid[i_] < 0)                                                \
                continue;                                                   \
            T *d_ = o_ + sid[i_] * inner;                                   \
            const T *s_ = x_ + (xi ? xi[i_] : i_) * inner;                  \
            for (int64_t q_ = 0; q_ < inner; q_++) {                        \
                T a_ = d_[q_], b_ = s_[q_];                                 \
                d_[q_] = mode == SEG_MAX   ? (a_ < b_ ? b_ : a_)            \
                         : mode == SEG_MIN ? (b_ < a_ ? b_ : a_)            \
                         : mode == SEG_PROD ? (T)(a_ * b_)                  \
                                            : (T)(a_ + b_);                 \
            }                                                               \
        }                                                                   \
        for (int64_t s_ = 0; s_ < ns; s_++)                                 \
            for (int64_t q_ = 0; q_ < inner; q_++) {                        \
                T *d_ = o_ + s_ * inner + q_;                               \
                if (cnt[s_] == 0 && empty0)                                 \
                    *d_ = mode == SEG_PROD ? (T)1 : (T)0;                   \
                else if (mode == SEG_MEAN && cnt[s_] > 0)                   \
                    *d_ = (T)(*d_ / (T)cnt[s_]);                            \
                else if (mode == SEG_SQRTN && cnt[s_] > 0)                  \
                    *d_ = (T)(*d_ / (T)sqrt((double)cnt[s_]));              \
            }                                                               \
    } while (0)

static void seg_reduce(dg_dtype t, int mode, int empty0, const void *xv,
                       void *ov, const int64_t *xi, const int64_t *sid,
                       const int64_t *cnt, int64_t rows, int64_t ns,
                       int64_t inner)
{
    switch (t) {
    case DG_F32: SEG_RED(float, -FLT_MAX, FLT_MAX); break;
    case DG_F64: SEG_RED(double, -DBL_MAX, DBL_MAX); break;
    case DG_I32: SEG_RED(int32_t, INT32_MIN, INT32_MAX); break;
    case DG_I64: SEG_RED(int64_t, INT64_MIN, INT64_MAX); break;
    default: break;
    }
}

/* The segment count of sorted ids (last + 1), or an error naming the node
 * when they are not sorted and >= 0. */
static dg_status sorted_count(dgr_kctx *k, const dgr_value *ids, int64_t *ns)
{
    int64_t rows = dg_shape_numel(&ids->shape);
    *ns = 0;
    for (int64_t i = 0; i < rows; i++) {
        int64_t s = dgr_cpu_iat(ids, i);
        if (s < 0 || s < *ns - 1)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': segment ids "
                          "are not sorted and >= 0 (id %lld at %lld)",
                          k->node->name, (long long)s, (long long)i);
        *ns = s + 1;
    }
    return DG_OK;
}

/* The ids of ids (rows of them) into sid[] (each < ns, else an error) and
 * the rows of each segment into cnt[0..ns); the rows of data they name
 * into xi[] when idx is set (each in [0, nx), else an error). */
static dg_status seg_ids(dgr_kctx *k, const dgr_value *ids,
                         const dgr_value *idx, int64_t nx, int64_t ns,
                         int64_t *sid, int64_t *xi, int64_t *cnt)
{
    int64_t rows = dg_shape_numel(&ids->shape);
    for (int64_t i = 0; i < rows; i++) {
        sid[i] = dgr_cpu_iat(ids, i);
        if (sid[i] >= ns)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': segment id "
                          "%lld is not in [0, %lld)", k->node->name,
                          (long long)sid[i], (long long)ns);
        if (sid[i] >= 0)
            cnt[sid[i]]++;
        if (!idx)
            continue;
        xi[i] = dgr_cpu_iat(idx, i);
        if (xi[i] < 0 || xi[i] >= nx)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': index %lld "
                          "is not in [0, %lld)", k->node->name,
                          (long long)xi[i], (long long)nx);
    }
    return DG_OK;
}

/* The shared kernel of the three kinds: UNSORTED (input 2 num_segments;
 * ids of any rank prefixing data's), SORTED (rows last id + 1), SPARSE
 * (data, indices, sorted segment_ids). */
static dg_status segment(dgr_kctx *k, int mode, int kind)
{
    const dgr_value *x = &k->in[0];
    const dgr_value *ids = &k->in[kind == SPARSE ? 2 : 1];
    const dgr_value *idx = kind == SPARSE ? &k->in[1] : NULL;
    int ir = kind == SPARSE ? 1 : ids->shape.rank;
    int64_t rows = dg_shape_numel(&ids->shape), inner = 1, ns = 0;
    for (int d = ir; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    if (idx && dg_shape_numel(&idx->shape) != rows)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %lld indices for "
                      "%lld segment ids", k->node->name,
                      (long long)dg_shape_numel(&idx->shape),
                      (long long)rows);
    dg_status st = DG_OK;
    if (kind != UNSORTED)
        st = sorted_count(k, ids, &ns);
    else if ((ns = dgr_cpu_iat(&k->in[2], 0)) < 0)
        st = dg_err(k->err, DG_E_RUNTIME, "node '%s': num_segments %lld is "
                    "negative", k->node->name, (long long)ns);
    if (st)
        return st;
    dg_shape os;
    memset(&os, 0, sizeof os);
    os.rank = 1 + x->shape.rank - ir;
    os.dims[0] = ns;
    for (int d = ir; d < x->shape.rank; d++)
        os.dims[1 + d - ir] = x->shape.dims[d];
    int64_t *sid = dg_malloc(sizeof *sid * (size_t)(2 * rows + 1));
    int64_t *cnt = dg_calloc((size_t)(ns + 1), sizeof *cnt);
    st = !sid || !cnt ? dg_err_nomem(k->err, k->node->name) : DG_OK;
    if (!st)
        st = seg_ids(k, ids, idx, x->shape.rank ? x->shape.dims[0] : 0, ns,
                     sid, sid + rows, cnt);
    if (!st)
        st = dgr_cpu_alloc_as(k, 0, x->dtype, &os);
    if (!st)
        seg_reduce(x->dtype, mode, kind != UNSORTED, dgr_cpu_ptr(x),
                   dgr_cpu_ptr(&k->out[0]), idx ? sid + rows : NULL, sid,
                   cnt, rows, ns, inner);
    dg_free(sid);
    dg_free(cnt);
    return st;
}

/* SparseSegment{Sum,Mean,SqrtN}Grad: out[indices[i]] += grad[seg[i]] * w,
 * w 1, 1 / count or 1 / sqrt(count) of the segment (mode). */
#define SSEG_GRAD(T)                                                        \
    do {                                                                    \
        const T *g_ = dgr_cpu_ptr(g);                                       \
        T *o_ = dgr_cpu_ptr(&k->out[0]);                                    \
        memset(o_, 0, sizeof(T) * (size_t)(nx * inner));                    \
        for (int64_t i_ = 0; i_ < rows; i_++) {                             \
            double c_ = (double)cnt[sid[i_]];                               \
            T w_ = (T)(mode == SEG_MEAN ? 1.0 / c_                          \
                       : mode == SEG_SQRTN ? 1.0 / sqrt(c_) : 1.0);         \
            for (int64_t q_ = 0; q_ < inner; q_++)                          \
                o_[xi[i_] * inner + q_] += g_[sid[i_] * inner + q_] * w_;   \
        }                                                                   \
    } while (0)

static dg_status sparse_segment_grad(dgr_kctx *k, int mode)
{
    const dgr_value *g = &k->in[0], *idx = &k->in[1], *ids = &k->in[2];
    int64_t nx = dgr_cpu_iat(&k->in[3], 0), ns = g->shape.dims[0];
    int64_t rows = dg_shape_numel(&ids->shape), inner = 1;
    for (int d = 1; d < g->shape.rank; d++)
        inner *= g->shape.dims[d];
    if (nx < 0 || dg_shape_numel(&idx->shape) != rows)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': needs "
                      "output_dim0 >= 0 and as many indices as segment "
                      "ids", k->node->name);
    dg_shape os = g->shape;
    os.dims[0] = nx;
    int64_t *sid = dg_malloc(sizeof *sid * (size_t)(2 * rows + 1));
    int64_t *cnt = dg_calloc((size_t)(ns + 1), sizeof *cnt);
    dg_status st = !sid || !cnt ? dg_err_nomem(k->err, k->node->name)
                                : DG_OK;
    if (!st)
        st = seg_ids(k, ids, idx, nx, ns, sid, sid + rows, cnt);
    for (int64_t i = 0; !st && i < rows; i++)
        if (sid[i] < 0)
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': segment id %lld "
                        "is negative", k->node->name, (long long)sid[i]);
    if (!st)
        st = dgr_cpu_alloc_as(k, 0, g->dtype, &os);
    if (!st) {
        const int64_t *xi = sid + rows;
        if (g->dtype == DG_F32)
            SSEG_GRAD(float);
        else
            SSEG_GRAD(double);
    }
    dg_free(sid);
    dg_free(cnt);
    return st;
}

dg_status dgr_k_unsorted_segment_max(dgr_kctx *k)
{
    return segment(k, SEG_MAX, UNSORTED);
}
DGR_KERNEL(UnsortedSegmentMax, dgr_k_unsorted_segment_max);
dg_status dgr_k_unsorted_segment_min(dgr_kctx *k)
{
    return segment(k, SEG_MIN, UNSORTED);
}
DGR_KERNEL(UnsortedSegmentMin, dgr_k_unsorted_segment_min);
dg_status dgr_k_unsorted_segment_prod(dgr_kctx *k)
{
    return segment(k, SEG_PROD, UNSORTED);
}
DGR_KERNEL(UnsortedSegmentProd, dgr_k_unsorted_segment_prod);
dg_status dgr_k_segment_sum(dgr_kctx *k)
{
    return segment(k, SEG_SUM, SORTED);
}
DGR_KERNEL(SegmentSum, dgr_k_segment_sum);
dg_status dgr_k_segment_mean(dgr_kctx *k)
{
    return segment(k, SEG_MEAN, SORTED);
}
DGR_KERNEL(SegmentMean, dgr_k_segment_mean);
dg_status dgr_k_segment_max(dgr_kctx *k)
{
    return segment(k, SEG_MAX, SORTED);
}
DGR_KERNEL(SegmentMax, dgr_k_segment_max);
dg_status dgr_k_segment_min(dgr_kctx *k)
{
    return segment(k, SEG_MIN, SORTED);
}
DGR_KERNEL(SegmentMin, dgr_k_segment_min);
dg_status dgr_k_segment_prod(dgr_kctx *k)
{
    return segment(k, SEG_PROD, SORTED);
}
DGR_KERNEL(SegmentProd, dgr_k_segment_prod);
dg_status dgr_k_sparse_segment_sum(dgr_kctx *k)
{
    return segment(k, SEG_SUM, SPARSE);
}
DGR_KERNEL(SparseSegmentSum, dgr_k_sparse_segment_sum);
dg_status dgr_k_sparse_segment_mean(dgr_kctx *k)
{
    return segment(k, SEG_MEAN, SPARSE);
}
DGR_KERNEL(SparseSegmentMean, dgr_k_sparse_segment_mean);
dg_status dgr_k_sparse_segment_sqrtn(dgr_kctx *k)
{
    return segment(k, SEG_SQRTN, SPARSE);
}
DGR_KERNEL(SparseSegmentSqrtN, dgr_k_sparse_segment_sqrtn);
dg_status dgr_k_sparse_segment_sum_grad(dgr_kctx *k)
{
    return sparse_segment_grad(k, SEG_SUM);
}
DGR_KERNEL(SparseSegmentSumGrad, dgr_k_sparse_segment_sum_grad);
dg_status dgr_k_sparse_segment_mean_grad(dgr_kctx *k)
{
    return sparse_segment_grad(k, SEG_MEAN);
}
DGR_KERNEL(SparseSegmentMeanGrad, dgr_k_sparse_segment_mean_grad);
dg_status dgr_k_sparse_segment_sqrtn_grad(dgr_kctx *k)
{
    return sparse_segment_grad(k, SEG_SQRTN);
}
DGR_KERNEL(SparseSegmentSqrtNGrad, dgr_k_sparse_segment_sqrtn_grad);

/* SparseToDense: output_shape filled with default_value, then the values at
 * the indices (a later repeat wins); an index out of range is an error,
 * with validate_indices also one out of lexicographic order or repeated. */
dg_status dgr_k_sparse_to_dense(dgr_kctx *k)
{
    const dgr_value *ix = &k->in[0], *sv = &k->in[2], *dv = &k->in[3];
    dgr_value *o = &k->out[0];
    dg_shape os;
    memset(&os, 0, sizeof os);
    os.rank = (int)dg_shape_numel(&k->in[1].shape);
    for (int d = 0; d < os.rank && os.rank <= DG_MAX_RANK; d++)
        if ((os.dims[d] = dgr_cpu_iat(&k->in[1], d)) < 0)
            os.rank = -1;
    if (os.rank < 0 || os.rank > DG_MAX_RANK)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': output_shape "
                      "must have at most %d dims, none negative",
                      k->node->name, DG_MAX_RANK);
    dg_status st = dgr_cpu_alloc_as(k, 0, sv->dtype, &os);
    if (st)
        return st;
    int rank = o->shape.rank;
    int64_t n = ix->shape.rank == 0 ? 1 : ix->shape.dims[0];
    int64_t r = ix->shape.rank == 2 ? ix->shape.dims[1] : 1;
    if (r != rank || (ix->shape.rank < 2 && rank != 1 && n > 0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': sparse_indices "
                      "of rank %d (%lld per index) do not index an output "
                      "of rank %d", k->node->name, ix->shape.rank,
                      (long long)r, rank);
    int64_t nv = dg_shape_numel(&sv->shape);
    if (sv->shape.rank == 1 && nv != n)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %lld sparse_values "
                      "for %lld indices", k->node->name, (long long)nv,
                      (long long)n);
    size_t es = dg_dtype_size(o->dtype);
    int64_t total = dg_shape_numel(&o->shape);
    char *op = dgr_cpu_ptr(o);
    const char *vp = dgr_cpu_ptr(sv), *dp = dgr_cpu_ptr(dv);
    for (int64_t j = 0; j < total; j++)
        memcpy(op + (size_t)j * es, dp, es);
    int validate = dgc_attr_b(k->node, DGC_AT_validate_indices);
    int64_t prev = -1;
    for (int64_t i = 0; i < n; i++) {
        int64_t flat = 0;
        for (int d = 0; d < rank; d++) {
            int64_t v = dgr_cpu_iat(ix, i * r + d);
            if (v < 0 || v >= o->shape.dims[d])
                return dg_err(k->err, DG_E_RUNTIME, "node '%s': "
                              "sparse_indices[%lld] = %lld is out of "
                              "bounds of dimension %d (size %lld)",
                              k->node->name, (long long)i, (long long)v, d,
                              (long long)o->shape.dims[d]);
            flat = flat * o->shape.dims[d] + v;
        }
        if (validate && flat <= prev)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': "
                          "sparse_indices[%lld] is %s", k->node->name,
                          (long long)i, flat == prev ? "repeated"
                                                     : "out of order");
        prev = flat;
        memcpy(op + (size_t)flat * es,
               vp + (size_t)(sv->shape.rank ? i : 0) * es, es);
    }
    return DG_OK;
}
DGR_KERNEL(SparseToDense, dgr_k_sparse_to_dense);

/* InTopKV2, as TF's kernel: row b's target is in the top k when fewer than
 * k predictions are strictly greater than its own; false when the target
 * is out of range or any prediction of the row is not finite. */
dg_status dgr_k_in_top_k(dgr_kctx *k)
{
    const dgr_value *p = &k->in[0], *tg = &k->in[1];
    int64_t rows = p->shape.dims[0], cls = p->shape.dims[1];
    int64_t kk = dgr_cpu_iat(&k->in[2], 0);
    if (dg_shape_numel(&tg->shape) != rows)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %lld targets for "
                      "%lld rows of predictions", k->node->name,
                      (long long)dg_shape_numel(&tg->shape),
                      (long long)rows);
    dg_shape os = tg->shape;
    dg_status st = dgr_cpu_alloc_as(k, 0, DG_BOOL, &os);
    if (st)
        return st;
    const float *pp = dgr_cpu_ptr(p);
    uint8_t *o = dgr_cpu_ptr(&k->out[0]);
    for (int64_t b = 0; b < rows; b++) {
        const float *row = pp + b * cls;
        int64_t t = dgr_cpu_iat(tg, b), more = 0;
        int ok = t >= 0 && t < cls && isfinite(row[t]);
        for (int64_t j = 0; ok && j < cls; j++) {
            if (!isfinite(row[j]))
                ok = 0;
            else if (row[j] > row[t])
                more++;
        }
        o[b] = (uint8_t)(ok && more < kk);
    }
    return DG_OK;
}
DGR_KERNEL(InTopKV2, dgr_k_in_top_k);

/* Bins o[0..size) of each row (rows of len) of x += w[i] (1 without
 * weights; set to 1 when binary). */
#define BINS(T)                                                             \
    do {                                                                    \
        T *o_ = dgr_cpu_ptr(&k->out[0]);                                    \
        const T *w_ = nw ? dgr_cpu_ptr(w) : NULL;                           \
        memset(o_, 0, sizeof(T) * (size_t)(rows * size));                   \
        for (int64_t i_ = 0; i_ < rows * len; i_++) {                       \
            int64_t v_ = dgr_cpu_iat(x, i_);                                \
            if (v_ >= size)                                                 \
                continue;                                                   \
            T *b_ = o_ + (i_ / len) * size + v_;                            \
            *b_ = binary ? (T)1 : (T)(*b_ + (w_ ? w_[i_] : (T)1));          \
        }                                                                   \
    } while (0)

/* Bincount and DenseBincount (a matrix input: one row of bins per row). */
static dg_status bincount(dgr_kctx *k, int dense)
{
    const dgr_value *x = &k->in[0], *w = &k->in[2];
    int64_t size = dgr_cpu_iat(&k->in[1], 0), n = dg_shape_numel(&x->shape);
    int64_t nw = dg_shape_numel(&w->shape);
    int two = dense && x->shape.rank == 2;
    int64_t rows = two ? x->shape.dims[0] : 1;
    int64_t len = two ? x->shape.dims[1] : n;
    int binary = dense && dgc_attr_b(k->node, DGC_AT_binary_output);
    if (size < 0 || (nw && nw != n))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': needs size >= 0 "
                      "(%lld) and weights empty or one per input (%lld for "
                      "%lld)", k->node->name, (long long)size,
                      (long long)nw, (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (dgr_cpu_iat(x, i) < 0)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': input must be "
                          "non-negative (%lld at %lld)", k->node->name,
                          (long long)dgr_cpu_iat(x, i), (long long)i);
    dg_shape os;
    memset(&os, 0, sizeof os);
    os.rank = 1 + two;
    os.dims[0] = rows;
    os.dims[two] = size;
    dg_status st = dgr_cpu_alloc_as(k, 0, w->dtype, &os);
    if (st)
        return st;
    switch (w->dtype) {
    case DG_F32: BINS(float); break;
    case DG_F64: BINS(double); break;
    case DG_I32: BINS(int32_t); break;
    default: BINS(int64_t); break;
    }
    return DG_OK;
}

dg_status dgr_k_bincount(dgr_kctx *k) { return bincount(k, 0); }
DGR_KERNEL(Bincount, dgr_k_bincount);
dg_status dgr_k_dense_bincount(dgr_kctx *k) { return bincount(k, 1); }
DGR_KERNEL(DenseBincount, dgr_k_dense_bincount);
