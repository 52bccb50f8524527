/*
 * infer_ops9c.c -- shape functions of the sorted-segment reductions of
 * issue 22 (SegmentSum, SegmentMean, SegmentMax, SegmentMin, SegmentProd):
 * data's shape with its first dimension replaced by the segment count,
 * last id + 1, known only when the ids are a constant (else -1; the
 * kernels size the output themselves); SparseSegmentSum/Mean/SqrtN (rows
 * picked by indices, then reduced the same way) and their gradients
 * (output_dim0 rows of grad's row shape); SparseToDense (output_shape's
 * values); InTopKV2 (a bool per row of predictions); Bincount and
 * DenseBincount (size bins, per row of a matrix input).
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

static int is_int(dg_dtype t)
{
    return t == DG_I32 || t == DG_I64;
}

/* Output 0: data's dtype and shape with dims[0] the segment count, last id
 * of the constant sorted ids t + 1 (else -1). */
static void segment_rows(const dgc_ttype *data, const dgc_ttype *t,
                         dgc_ttype *o)
{
    int64_t k = t->shape.dims[0];
    o->dtype = data->dtype;
    o->shape = data->shape;
    o->shape.dims[0] = -1;
    if (t->value && k >= 0) {
        int64_t last = -1;
        if (k > 0)
            last = t->dtype == DG_I32 ? ((const int32_t *)t->value)[k - 1]
                                      : ((const int64_t *)t->value)[k - 1];
        o->shape.dims[0] = last < 0 ? 0 : last + 1;
    }
}

int dgc_infer_segment(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 2)
        FAIL("needs data and segment_ids");
    if (!is_int(in[1].dtype))
        FAIL("segment_ids must be int32 or int64");
    if (in[1].shape.rank != 1 || in[0].shape.rank < 1)
        FAIL("segment_ids must be a vector and data of rank >= 1");
    int64_t d0 = in[0].shape.dims[0], k = in[1].shape.dims[0];
    if (d0 >= 0 && k >= 0 && d0 != k)
        FAIL("segment_ids has %lld ids for %lld rows of data",
             (long long)k, (long long)d0);
    segment_rows(&in[0], &in[1], &out[0]);
    return 0;
}

int dgc_infer_sparse_segment(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 3)
        FAIL("needs data, indices and segment_ids");
    if (!is_int(in[1].dtype) || !is_int(in[2].dtype))
        FAIL("indices and segment_ids must be int32 or int64");
    if (in[1].shape.rank != 1 || in[2].shape.rank != 1 ||
        in[0].shape.rank < 1)
        FAIL("indices and segment_ids must be vectors and data of "
             "rank >= 1");
    int64_t a = in[1].shape.dims[0], b = in[2].shape.dims[0];
    if (a >= 0 && b >= 0 && a != b)
        FAIL("%lld indices for %lld segment_ids", (long long)a,
             (long long)b);
    segment_rows(&in[0], &in[2], &out[0]);
    return 0;
}

int dgc_infer_sparse_segment_grad(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 4)
        FAIL("needs grad, indices, segment_ids and output_dim0");
    if (!is_int(in[1].dtype) || !is_int(in[2].dtype) || !is_int(in[3].dtype))
        FAIL("indices, segment_ids and output_dim0 must be int32 or int64");
    if (in[0].shape.rank < 1 || in[3].shape.rank > 1)
        FAIL("grad must have rank >= 1 and output_dim0 be a scalar");
    int64_t v[1];
    int c = dgc_ttype_ints(&in[3], v, 1);
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    out[0].shape.dims[0] = c == 1 && in[3].value ? v[0] : -1;
    if (c == 1 && in[3].value && v[0] < 0)
        FAIL("output_dim0 %lld is negative", (long long)v[0]);
    return 0;
}

int dgc_infer_sparse_to_dense(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 4)
        FAIL("needs sparse_indices, output_shape, sparse_values and "
             "default_value");
    if (!is_int(in[0].dtype) || in[0].shape.rank > 2)
        FAIL("sparse_indices must be an int32/int64 tensor of rank <= 2");
    if (in[2].dtype != in[3].dtype || in[3].shape.rank != 0 ||
        in[2].shape.rank > 1)
        FAIL("sparse_values (%s) must be a scalar or vector and "
             "default_value a scalar of its dtype (%s)",
             dg_dtype_name(in[2].dtype), dg_dtype_name(in[3].dtype));
    int64_t v[DG_MAX_RANK];
    int cnt = dgc_ttype_ints(&in[1], v, DG_MAX_RANK);
    if (cnt < 0 || in[1].shape.rank > 1)
        FAIL("output_shape must be an int32/int64 vector of at most %d "
             "elements", DG_MAX_RANK);
    out[0].dtype = in[2].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = cnt;
    for (int i = 0; i < cnt; i++) {
        if (in[1].value && v[i] < 0)
            FAIL("output_shape[%d] = %lld is negative", i, (long long)v[i]);
        out[0].shape.dims[i] = in[1].value ? v[i] : -1;
    }
    return 0;
}

int dgc_infer_in_top_k(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 3)
        FAIL("needs predictions, targets and k");
    if (in[0].shape.rank != 2 || in[1].shape.rank != 1 ||
        !is_int(in[1].dtype) || in[2].shape.rank != 0 || !is_int(in[2].dtype))
        FAIL("needs a matrix of predictions, a vector of int targets and "
             "a scalar int k");
    int64_t b = in[0].shape.dims[0], t = in[1].shape.dims[0];
    if (b >= 0 && t >= 0 && b != t)
        FAIL("%lld targets for %lld rows of predictions", (long long)t,
             (long long)b);
    out[0].dtype = DG_BOOL;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = b >= 0 ? b : t;
    return 0;
}

int dgc_infer_bincount(DGC_INFER_ARGS)
{
    int dense = n->op == DGC_OPID_DenseBincount;
    if (n_in != 3)
        FAIL("needs input, size and weights");
    if (!is_int(in[0].dtype) || (dense && in[0].shape.rank > 2) ||
        (dense && in[0].shape.rank < 1))
        FAIL("input must be int32/int64%s", dense ? " of rank 1 or 2" : "");
    int64_t v[1];
    int c = dgc_ttype_ints(&in[1], v, 1);
    if (c != 1 || in[1].shape.rank != 0)
        FAIL("size must be an int scalar");
    if (in[1].value && v[0] < 0)
        FAIL("size %lld is negative", (long long)v[0]);
    out[0].dtype = in[2].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    int two = dense && in[0].shape.rank == 2;
    out[0].shape.rank = 1 + two;
    if (two)
        out[0].shape.dims[0] = in[0].shape.dims[0];
    out[0].shape.dims[two] = in[1].value ? v[0] : -1;
    return 0;
}
