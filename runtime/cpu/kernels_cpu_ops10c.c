/*
 * kernels_cpu_ops10c.c -- CPU kernels of issue 22's ops10c group, the
 * small array ops of real exports: Diag / DiagPart (element moves by
 * element size, every dtype), UnravelIndex, the layout optimizer's
 * DataFormatVecPermute / DataFormatDimMap (formats through dgc_fmt_perm,
 * shared with inference) and NthElement.  SpaceToBatch runs
 * SpaceToBatchND's kernel (kernels_cpu_zoo.c).
 */
#include "kernels_cpu.h"
#include "infer.h"
#include "dg_alloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- Diag / DiagPart ----------------------------------------------------- */

/* Diag: y (x.shape + x.shape) zeros, y[i, i] = x[i] over the flat index i
 * of x; DiagPart: y[i] = x[i, i]. */
static dg_status diag(dgr_kctx *k, int part)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dgr_value *small = part ? &k->out[0] : &k->in[0];
    int64_t n = dg_shape_numel(&small->shape);
    size_t es = dg_dtype_size(k->in[0].dtype);
    const char *x = dgr_cpu_ptr(&k->in[0]);
    char *y = dgr_cpu_ptr(&k->out[0]);
    if (!part && n > 0)
        memset(y, 0, (size_t)(n * n) * es);
    for (int64_t i = 0; i < n; i++) {
        size_t big = (size_t)(i * n + i) * es, s = (size_t)i * es;
        memcpy(y + (part ? s : big), x + (part ? big : s), es);
    }
    return DG_OK;
}

dg_status dgr_k_diag(dgr_kctx *k) { return diag(k, 0); }
DGR_KERNEL(Diag, dgr_k_diag);
dg_status dgr_k_diag_part(dgr_kctx *k) { return diag(k, 1); }
DGR_KERNEL(DiagPart, dgr_k_diag_part);

/* ---- UnravelIndex -------------------------------------------------------- */

/* y[d, j] = the d-th coordinate of indices[j] in an array of shape dims
 * (row-major); an index outside [0, prod(dims)), a dim <= 0 or no
 * indices at all are errors, as in TF. */
dg_status dgr_k_unravel_index(dgr_kctx *k)
{
    int64_t ni = dg_shape_numel(&k->in[0].shape);
    int nd = (int)dg_shape_numel(&k->in[1].shape);
    int64_t prod = 1;
    if (ni == 0) /* as TF's kernel */
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': indices is empty",
                      k->node->name);
    for (int d = 0; d < nd; d++) {
        int64_t v = dgr_cpu_iat(&k->in[1], d);
        if (v <= 0)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': dims[%d] = %lld "
                          "is not positive", k->node->name, d, (long long)v);
        prod *= v;
    }
    for (int64_t j = 0; j < ni; j++) {
        int64_t v = dgr_cpu_iat(&k->in[0], j);
        if (v < 0 || v >= prod)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': index %lld is "
                          "outside [0, %lld) (the array's size)",
                          k->node->name, (long long)v, (long long)prod);
    }
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    for (int64_t j = 0; j < ni; j++) {
        int64_t v = dgr_cpu_iat(&k->in[0], j);
        for (int d = nd - 1; d >= 0; d--) {
            int64_t dim = dgr_cpu_iat(&k->in[1], d);
            dgr_cpu_iput(&k->out[0], d * ni + j, v % dim);
            v /= dim;
        }
    }
    return DG_OK;
}
DGR_KERNEL(UnravelIndex, dgr_k_unravel_index);

/* ---- DataFormatVecPermute / DataFormatDimMap ------------------------------ */

/* VecPermute: y[i, c] = x[from[i], c] (c over 1 or 2 columns); DimMap:
 * y = the position in dst_format of src_format's letter x mod n. */
static dg_status fmt_perm(dgr_kctx *k, int dim_map)
{
    const dg_shape *s = &k->in[0].shape;
    int from[8], len;
    char msg[160];
    if (dgc_fmt_perm(k->node, dim_map ? -1 : s->dims[0], from, &len, msg,
                     sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(s);
    if (dim_map) {
        int to[8];
        for (int i = 0; i < len; i++)
            to[from[i]] = i;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = dgr_cpu_iat(&k->in[0], i) % len;
            dgr_cpu_iput(&k->out[0], i, to[v < 0 ? v + len : v]);
        }
        return DG_OK;
    }
    int64_t cols = s->rank == 2 ? s->dims[1] : 1;
    for (int64_t i = 0; i < n; i++)
        dgr_cpu_iput(&k->out[0], i,
                     dgr_cpu_iat(&k->in[0],
                                 from[i / cols] * cols + i % cols));
    return DG_OK;
}

dg_status dgr_k_fmt_vec_permute(dgr_kctx *k) { return fmt_perm(k, 0); }
DGR_KERNEL(DataFormatVecPermute, dgr_k_fmt_vec_permute);
dg_status dgr_k_fmt_dim_map(dgr_kctx *k) { return fmt_perm(k, 1); }
DGR_KERNEL(DataFormatDimMap, dgr_k_fmt_dim_map);

/* ---- NthElement ---------------------------------------------------------- */

#define NTH_CMP(NAME, T)                                                     \
    static int NAME(const void *a, const void *b)                            \
    {                                                                        \
        T x = *(const T *)a, y = *(const T *)b;                              \
        return (x > y) - (x < y);                                            \
    }
NTH_CMP(cmp_f32, float)
NTH_CMP(cmp_f64, double)
NTH_CMP(cmp_i32, int32_t)
NTH_CMP(cmp_i64, int64_t)

/* Each last-axis row sorted in a scratch copy; its n-th entry (from the
 * end with reverse) is the row's output. */
dg_status dgr_k_nth_element(dgr_kctx *k)
{
    const dg_shape *s = &k->in[0].shape;
    int64_t cols = s->dims[s->rank - 1], nth = dgr_cpu_iat(&k->in[1], 0);
    if (nth < 0 || nth >= cols)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': n = %lld is outside "
                      "[0, %lld) (the last dimension)", k->node->name,
                      (long long)nth, (long long)cols);
    if (dgc_attr_b(k->node, DGC_AT_reverse))
        nth = cols - 1 - nth;
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dg_dtype t = k->in[0].dtype;
    int (*cmp)(const void *, const void *) =
        t == DG_F32 ? cmp_f32 : t == DG_F64 ? cmp_f64
                                : t == DG_I32 ? cmp_i32 : cmp_i64;
    size_t es = dg_dtype_size(t);
    int64_t rows = dg_shape_numel(&k->out[0].shape);
    char *row = dg_malloc((size_t)cols * es);
    if (!row)
        return dg_err(k->err, DG_E_NOMEM, "node '%s': out of memory",
                      k->node->name);
    const char *x = dgr_cpu_ptr(&k->in[0]);
    char *y = dgr_cpu_ptr(&k->out[0]);
    for (int64_t r = 0; r < rows; r++) {
        memcpy(row, x + (size_t)(r * cols) * es, (size_t)cols * es);
        qsort(row, (size_t)cols, es, cmp);
        memcpy(y + (size_t)r * es, row + (size_t)nth * es, es);
    }
    dg_free(row);
    return DG_OK;
}
DGR_KERNEL(NthElement, dgr_k_nth_element);
