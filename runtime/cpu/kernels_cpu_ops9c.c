/*
 * kernels_cpu_ops9c.c -- CPU kernels of the segment reductions of issue 22:
 * UnsortedSegmentMax/Min/Prod (num_segments rows; negative ids dropped; an
 * empty segment is the dtype's lowest / highest (finite) / 1, as TF) and the sorted
 * SegmentSum/Mean/Max/Min/Prod (last id + 1 rows; ids must be sorted and
 * >= 0; an empty segment is 0, 1 for SegmentProd).  Each output row is
 * reduced in the order of the data's rows.
 */
#include "kernels_cpu.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum { SEG_SUM, SEG_MEAN, SEG_MAX, SEG_MIN, SEG_PROD };

/* Reduce data rows x[i] (inner elements each) into o[sid[i]] for ids >= 0;
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
            const T *s_ = x_ + i_ * inner;                                  \
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
            }                                                               \
    } while (0)

static void seg_reduce(dg_dtype t, int mode, int empty0, const void *xv,
                       void *ov, const int64_t *sid, const int64_t *cnt,
                       int64_t rows, int64_t ns, int64_t inner)
{
    switch (t) {
    case DG_F32: SEG_RED(float, -FLT_MAX, FLT_MAX); break;
    case DG_F64: SEG_RED(double, -DBL_MAX, DBL_MAX); break;
    case DG_I32: SEG_RED(int32_t, INT32_MIN, INT32_MAX); break;
    case DG_I64: SEG_RED(int64_t, INT64_MIN, INT64_MAX); break;
    default: break;
    }
}

/* The shared kernel: `sorted` for the Segment* ops (output rows last id +
 * 1), else the UnsortedSegment* ops (input 2: num_segments). */
static dg_status segment(dgr_kctx *k, int mode, int sorted)
{
    const dgr_value *x = &k->in[0], *ids = &k->in[1];
    int ir = ids->shape.rank;
    int64_t rows = dg_shape_numel(&ids->shape), inner = 1;
    for (int d = ir; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    int64_t ns = 0;
    if (sorted) {
        for (int64_t i = 0; i < rows; i++) {
            int64_t s = dgr_cpu_iat(ids, i);
            if (s < 0 || s < ns - 1)
                return dg_err(k->err, DG_E_RUNTIME, "node '%s': segment "
                              "ids are not sorted and >= 0 (id %lld at "
                              "%lld)", k->node->name, (long long)s,
                              (long long)i);
            ns = s + 1;
        }
    } else {
        ns = dgr_cpu_iat(&k->in[2], 0);
        if (ns < 0)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': num_segments "
                          "%lld is negative", k->node->name, (long long)ns);
    }
    dg_shape os;
    memset(&os, 0, sizeof os);
    os.rank = 1 + x->shape.rank - ir;
    os.dims[0] = ns;
    for (int d = ir; d < x->shape.rank; d++)
        os.dims[1 + d - ir] = x->shape.dims[d];
    int64_t *sid = dg_malloc(sizeof *sid * (size_t)(rows + 1));
    int64_t *cnt = dg_calloc((size_t)(ns + 1), sizeof *cnt);
    dg_status st = !sid || !cnt ? dg_err_nomem(k->err, k->node->name)
                                : DG_OK;
    for (int64_t i = 0; !st && i < rows; i++) {
        sid[i] = dgr_cpu_iat(ids, i);
        if (sid[i] >= ns)
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': segment id %lld "
                        "is not in [0, %lld)", k->node->name,
                        (long long)sid[i], (long long)ns);
        else if (sid[i] >= 0)
            cnt[sid[i]]++;
    }
    if (!st)
        st = dgr_cpu_alloc_as(k, 0, x->dtype, &os);
    if (!st)
        seg_reduce(x->dtype, mode, sorted, dgr_cpu_ptr(x),
                   dgr_cpu_ptr(&k->out[0]), sid, cnt, rows, ns, inner);
    dg_free(sid);
    dg_free(cnt);
    return st;
}

dg_status dgr_k_unsorted_segment_max(dgr_kctx *k)
{
    return segment(k, SEG_MAX, 0);
}
DGR_KERNEL(UnsortedSegmentMax, dgr_k_unsorted_segment_max);
dg_status dgr_k_unsorted_segment_min(dgr_kctx *k)
{
    return segment(k, SEG_MIN, 0);
}
DGR_KERNEL(UnsortedSegmentMin, dgr_k_unsorted_segment_min);
dg_status dgr_k_unsorted_segment_prod(dgr_kctx *k)
{
    return segment(k, SEG_PROD, 0);
}
DGR_KERNEL(UnsortedSegmentProd, dgr_k_unsorted_segment_prod);
dg_status dgr_k_segment_sum(dgr_kctx *k) { return segment(k, SEG_SUM, 1); }
DGR_KERNEL(SegmentSum, dgr_k_segment_sum);
dg_status dgr_k_segment_mean(dgr_kctx *k) { return segment(k, SEG_MEAN, 1); }
DGR_KERNEL(SegmentMean, dgr_k_segment_mean);
dg_status dgr_k_segment_max(dgr_kctx *k) { return segment(k, SEG_MAX, 1); }
DGR_KERNEL(SegmentMax, dgr_k_segment_max);
dg_status dgr_k_segment_min(dgr_kctx *k) { return segment(k, SEG_MIN, 1); }
DGR_KERNEL(SegmentMin, dgr_k_segment_min);
dg_status dgr_k_segment_prod(dgr_kctx *k) { return segment(k, SEG_PROD, 1); }
DGR_KERNEL(SegmentProd, dgr_k_segment_prod);
