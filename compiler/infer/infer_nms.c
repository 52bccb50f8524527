/*
 * infer_nms.c -- the shape function of NonMaxSuppressionV3/V4/V5 (TF's
 * image_ops.cc): boxes [n, 4] and scores [n] in float32, scalar
 * max_output_size (int32), iou_threshold, score_threshold (and V5's
 * soft_nms_sigma) scalars.  The selected indices (int32) are a vector whose
 * length the data decides (-1), or max_output_size when V4/V5 pad to it
 * and it is a Const; V5's scores have the boxes' dtype; the count is an
 * int32 scalar.
 */
#include "infer.h"
#include "ops.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

int dgc_infer_nms(DGC_INFER_ARGS)
{
    const dg_shape *b = &in[0].shape, *s = &in[1].shape;
    if (b->rank != 2 || (b->dims[1] >= 0 && b->dims[1] != 4))
        FAIL("boxes must be [num_boxes, 4], got rank %d", b->rank);
    if (s->rank != 1)
        FAIL("scores must be a vector, got rank %d", s->rank);
    if (b->dims[0] >= 0 && s->dims[0] >= 0 && b->dims[0] != s->dims[0])
        FAIL("scores has %lld elements for %lld boxes", (long long)s->dims[0],
             (long long)b->dims[0]);
    if (in[0].dtype != DG_F32 || in[1].dtype != DG_F32)
        FAIL("boxes and scores must be float32 (TF's kernels: half, float), "
             "got %s and %s", dg_dtype_name(in[0].dtype),
             dg_dtype_name(in[1].dtype));
    if (in[2].dtype != DG_I32 || in[2].shape.rank != 0)
        FAIL("max_output_size must be an int32 scalar");
    for (int i = 3; i < n_in; i++)
        if (in[i].shape.rank != 0 ||
            (in[i].dtype != DG_F32 && in[i].dtype != DG_F64))
            FAIL("input %d (a threshold) must be a float scalar", i);
    int64_t len = -1;
    if (n->n_outputs > 1 && dgc_attr_bool(n, "pad_to_max_output_size", 0) &&
        in[2].value) {
        len = *(const int32_t *)in[2].value;
        if (len < 0)
            FAIL("max_output_size must be >= 0, got %lld", (long long)len);
    }
    memset(&out[0], 0, sizeof out[0]);
    out[0].dtype = DG_I32;
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = len;
    if (n->n_outputs == 3) {
        out[1] = out[0];
        out[1].dtype = in[0].dtype;
    }
    if (n->n_outputs > 1) {
        dgc_ttype *c = &out[n->n_outputs - 1];
        memset(c, 0, sizeof *c);
        c->dtype = DG_I32;
    }
    return 0;
}
