/*
 * infer_ops9a.c -- shape functions of the ops9a ops (issue 22): ClipByValue
 * (shaped as t; each bound a scalar or of t's shape, as TF's kernel
 * requires).
 */
#include "infer.h"
#include "dg_util.h"

#include <stdio.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

int dgc_infer_clip_by_value(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    static const char *const what[3] = {"t", "clip_value_min",
                                        "clip_value_max"};
    for (int i = 1; i < 3; i++) {
        if (in[i].dtype != in[0].dtype)
            FAIL("%s is %s, t %s", what[i], dg_dtype_name(in[i].dtype),
                 dg_dtype_name(in[0].dtype));
        const dg_shape *b = &in[i].shape, *t = &in[0].shape;
        if (b->rank == 0)
            continue;
        int ok = b->rank == t->rank;
        for (int d = 0; ok && d < b->rank; d++)
            ok = b->dims[d] < 0 || t->dims[d] < 0 || b->dims[d] == t->dims[d];
        if (!ok) {
            char ts[128], bs[128];
            dg_shape_format(t, ts, sizeof ts);
            dg_shape_format(b, bs, sizeof bs);
            FAIL("%s must be a scalar or of t's shape %s, got %s", what[i],
                 ts, bs);
        }
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    out[0].value = NULL;
    return 0;
}
