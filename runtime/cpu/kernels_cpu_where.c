/*
 * kernels_cpu_where.c -- CPU kernels of issue 22's short round: Where
 * (tf.where with one input: the int64 coordinates of the true elements in
 * row-major order, [n, rank], n counted from the data before the output is
 * allocated, as Unique sizes its own).
 */
#include "kernels_cpu.h"
#include "dg_alloc.h"

#include <string.h>

/* Whether element i of x is true (nonzero; NaN is true, as in TF). */
static int truthy(const dgr_value *x, int64_t i)
{
    const void *p = dgr_cpu_ptr(x);
    switch (x->dtype) {
    case DG_F32: return ((const float *)p)[i] != 0;
    case DG_F64: return ((const double *)p)[i] != 0;
    case DG_I32: return ((const int32_t *)p)[i] != 0;
    case DG_I64: return ((const int64_t *)p)[i] != 0;
    case DG_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return 0;
    }
}

dg_status dgr_k_where(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    const dg_shape *s = &x->shape;
    int64_t numel = dg_shape_numel(s), n = 0;
    for (int64_t i = 0; i < numel; i++)
        n += truthy(x, i);
    dgr_value *y = &k->out[0];
    y->dtype = DG_I64;
    memset(&y->shape, 0, sizeof y->shape);
    y->shape.rank = 2;
    y->shape.dims[0] = n;
    y->shape.dims[1] = s->rank;
    y->buf = dgr_buffer_new(k->dev, (size_t)(n * s->rank) * sizeof(int64_t),
                            k->stream, k->err);
    if (!y->buf)
        return k->err->code ? k->err->code : DG_E_NOMEM;
    int64_t *out = dgr_cpu_ptr(y), row = 0;
    for (int64_t i = 0; i < numel; i++) {
        if (!truthy(x, i))
            continue;
        int64_t rest = i;
        for (int d = s->rank - 1; d >= 0; d--) {
            out[row * s->rank + d] = rest % s->dims[d];
            rest /= s->dims[d];
        }
        row++;
    }
    return DG_OK;
}
