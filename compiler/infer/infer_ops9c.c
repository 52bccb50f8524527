/*
 * infer_ops9c.c -- shape functions of the sorted-segment reductions of
 * issue 22 (SegmentSum, SegmentMean, SegmentMax, SegmentMin, SegmentProd):
 * data's shape with its first dimension replaced by the segment count,
 * last id + 1, known only when the ids are a constant (else -1; the
 * kernels size the output themselves).
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

int dgc_infer_segment(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 2)
        FAIL("needs data and segment_ids");
    if (in[1].dtype != DG_I32 && in[1].dtype != DG_I64)
        FAIL("segment_ids must be int32 or int64");
    if (in[1].shape.rank != 1 || in[0].shape.rank < 1)
        FAIL("segment_ids must be a vector and data of rank >= 1");
    int64_t d0 = in[0].shape.dims[0], k = in[1].shape.dims[0];
    if (d0 >= 0 && k >= 0 && d0 != k)
        FAIL("segment_ids has %lld ids for %lld rows of data",
             (long long)k, (long long)d0);
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    out[0].shape.dims[0] = -1;
    if (in[1].value && k >= 0) {
        int64_t last = -1;
        if (k > 0)
            last = in[1].dtype == DG_I32
                       ? ((const int32_t *)in[1].value)[k - 1]
                       : ((const int64_t *)in[1].value)[k - 1];
        out[0].shape.dims[0] = last < 0 ? 0 : last + 1;
    }
    return 0;
}
