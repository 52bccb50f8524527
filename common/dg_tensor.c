/*
 * dg_tensor.c -- dtypes, shapes and host tensors (the public dg_tensor).
 */
#include "dgrun.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <stdint.h>
#include <string.h>

static const char *const dtype_names[DG_DTYPE_COUNT] = {
    "float32", "float64", "int32", "int64", "bool"};
static const size_t dtype_sizes[DG_DTYPE_COUNT] = {4, 8, 4, 8, 1};

const char *dg_dtype_name(dg_dtype t)
{
    return (unsigned)t < DG_DTYPE_COUNT ? dtype_names[t] : "invalid";
}

int dg_dtype_parse(const char *s, dg_dtype *out)
{
    for (int i = 0; i < DG_DTYPE_COUNT; i++)
        if (strcmp(s, dtype_names[i]) == 0) {
            *out = (dg_dtype)i;
            return 0;
        }
    return -1;
}

size_t dg_dtype_size(dg_dtype t)
{
    return (unsigned)t < DG_DTYPE_COUNT ? dtype_sizes[t] : 0;
}

int64_t dg_shape_numel(const dg_shape *s)
{
    int64_t n = 1;
    int over = 0;
    for (int i = 0; i < s->rank; i++) {
        if (s->dims[i] < 0)
            return -1;
        /* saturate instead of overflowing (a hostile checkpoint or .npy
         * header can claim any dims): no allocation of INT64_MAX elements
         * succeeds, so the caller reports it */
        if (s->dims[i] == 0)
            n = 0;
        else if (n > INT64_MAX / s->dims[i])
            over = 1;
        else
            n *= s->dims[i];
    }
    return over && n != 0 ? INT64_MAX : n;
}

dg_tensor *dg_tensor_new(dg_dtype t, const dg_shape *s)
{
    int64_t n = dg_shape_numel(s);
    size_t es = dg_dtype_size(t);
    if (n < 0 || es == 0 || (uint64_t)n > SIZE_MAX / es)
        return NULL; /* unknown, invalid dtype, or more bytes than exist */
    dg_tensor *x = dg_calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->dtype = t;
    x->shape = *s;
    x->data = dg_calloc((size_t)n ? (size_t)n : 1, es);
    if (!x->data) {
        dg_free(x);
        return NULL;
    }
    return x;
}

void dg_tensor_free(dg_tensor *t)
{
    if (!t)
        return;
    dg_free(t->data);
    dg_free(t);
}

double dg_tensor_elem(const dg_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DG_F32: return ((const float *)t->data)[i];
    case DG_F64: return ((const double *)t->data)[i];
    case DG_I32: return ((const int32_t *)t->data)[i];
    case DG_I64: return (double)((const int64_t *)t->data)[i];
    case DG_BOOL: return ((const uint8_t *)t->data)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}
