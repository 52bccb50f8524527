/*
 * infer_ops9a.c -- shape functions of the ops9a ops (issue 22): ClipByValue
 * (shaped as t; each bound a scalar or of t's shape, as TF's kernel
 * requires), EnsureShape (x's shape merged with attr shape: its known dims
 * fill x's unknown ones; a known mismatch is an error), Assert (a bool
 * scalar condition, data of any dtypes, no outputs).
 */
#include "infer.h"
#include "dg_util.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

int dgc_clip_bounds_check(const dg_shape *t, const dg_shape *lo,
                          const dg_shape *hi, int64_t step[2], char *msg,
                          size_t msgsz)
{
    const dg_shape *bs[2] = {lo, hi};
    static const char *const what[2] = {"clip_value_min", "clip_value_max"};
    for (int i = 0; i < 2; i++) {
        const dg_shape *b = bs[i];
        step[i] = b->rank != 0;
        int ok = b->rank == 0 || b->rank == t->rank;
        for (int d = 0; b->rank && ok && d < b->rank; d++)
            ok = b->dims[d] < 0 || t->dims[d] < 0 || b->dims[d] == t->dims[d];
        if (!ok) {
            char ts[128], s[128];
            dg_shape_format(t, ts, sizeof ts);
            dg_shape_format(b, s, sizeof s);
            FAIL("%s must be a scalar or of t's shape %s, got %s", what[i],
                 ts, s);
        }
    }
    return 0;
}

int dgc_infer_clip_by_value(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    for (int i = 1; i < 3; i++)
        if (in[i].dtype != in[0].dtype)
            FAIL("%s is %s, t %s", i == 1 ? "clip_value_min" : "clip_value_max",
                 dg_dtype_name(in[i].dtype), dg_dtype_name(in[0].dtype));
    int64_t step[2];
    if (dgc_clip_bounds_check(&in[0].shape, &in[1].shape, &in[2].shape, step,
                              msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    out[0].value = NULL;
    return 0;
}

int dgc_ensure_shape_check(const dgc_node *n, const dg_shape *x, char *msg,
                           size_t msgsz)
{
    const dgc_attr *a = dgc_node_attr(n, "shape");
    if (!a || a->kind != DGC_A_SHAPE || a->n > DG_MAX_RANK)
        return 0; /* unknown rank: anything fits */
    dg_shape want;
    memset(&want, 0, sizeof want);
    want.rank = a->n;
    for (int i = 0; i < a->n; i++)
        want.dims[i] = a->ints[i];
    int ok = x->rank == want.rank;
    for (int d = 0; ok && d < x->rank; d++)
        ok = want.dims[d] < 0 || x->dims[d] < 0 ||
             x->dims[d] == want.dims[d];
    if (!ok) {
        char ws[128], xs[128];
        dg_shape_format(&want, ws, sizeof ws);
        dg_shape_format(x, xs, sizeof xs);
        FAIL("shape of the input %s is not compatible with the expected "
             "shape %s", xs, ws);
    }
    return 0;
}

int dgc_infer_ensure_shape(DGC_INFER_ARGS)
{
    (void)n_in;
    out[0] = in[0];
    out[0].value = NULL;
    if (dgc_ensure_shape_check(n, &in[0].shape, msg, msgsz))
        return -1;
    const dgc_attr *a = dgc_node_attr(n, "shape");
    if (a && a->kind == DGC_A_SHAPE && a->n == in[0].shape.rank)
        for (int d = 0; d < a->n; d++)
            if (a->ints[d] >= 0)
                out[0].shape.dims[d] = a->ints[d];
    return 0;
}

int dgc_infer_assert(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    (void)out;
    if (in[0].dtype != DG_BOOL)
        FAIL("condition must be bool, got %s", dg_dtype_name(in[0].dtype));
    if (in[0].shape.rank != 0)
        FAIL("condition must be a scalar, got rank %d", in[0].shape.rank);
    return 0;
}
