/*
 * kernels_cpu_tf.c -- CPU kernels of the TF graph ops of issue 10 that are
 * no elementwise math: Shape, Size, Rank, ExpandDims/Squeeze (views), Tile,
 * Prod, GatherV2, BiasAddGrad, L2Loss, ConcatV2.  Output shapes come from
 * inference (k->out_types), which already saw the parameter values.
 */
#include "kernels_cpu.h"
#include "infer.h"

#include <math.h>
#include <string.h>

/* Element i of an int32/int64 host tensor. */
static int64_t iget(const void *p, dg_dtype t, int64_t i)
{
    return t == DG_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
}

static void iset(void *p, dg_dtype t, int64_t i, int64_t v)
{
    if (t == DG_I32)
        ((int32_t *)p)[i] = (int32_t)v;
    else
        ((int64_t *)p)[i] = v;
}

dg_status dgr_k_shape(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *s = &k->in[0].shape;
    for (int d = 0; d < s->rank; d++)
        iset(dgr_cpu_ptr(&k->out[0]), k->out[0].dtype, d, s->dims[d]);
    return DG_OK;
}
DGR_KERNEL(Shape, dgr_k_shape);

dg_status dgr_k_size(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    iset(dgr_cpu_ptr(&k->out[0]), k->out[0].dtype, 0,
         dg_shape_numel(&k->in[0].shape));
    return DG_OK;
}
DGR_KERNEL(Size, dgr_k_size);

dg_status dgr_k_rank(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    iset(dgr_cpu_ptr(&k->out[0]), DG_I32, 0, k->in[0].shape.rank);
    return DG_OK;
}
DGR_KERNEL(Rank, dgr_k_rank);

/* ExpandDims, Squeeze: the input's buffer under the inferred shape. */
dg_status dgr_k_view(dgr_kctx *k)
{
    if (dg_shape_numel(&k->out_types[0].shape) !=
        dg_shape_numel(&k->in[0].shape))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %lld elements do not "
                      "fit the inferred shape", k->node->name,
                      (long long)dg_shape_numel(&k->in[0].shape));
    dgr_kctx_alias_output(k, 0, &k->in[0]);
    return DG_OK;
}
DGR_KERNEL(ExpandDims, dgr_k_view);
DGR_KERNEL(Squeeze, dgr_k_view);

/* Tile: out[i0..ir] = x[i0 % d0, ..., ir % dr]; rows of the last axis are
 * copied whole, then repeated. */
dg_status dgr_k_tile(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *xs = &k->in[0].shape, *os = &k->out[0].shape;
    int64_t n = dg_shape_numel(os);
    if (n <= 0)
        return DG_OK;
    size_t es = dg_dtype_size(k->in[0].dtype);
    const char *x = dgr_cpu_ptr(&k->in[0]);
    char *o = dgr_cpu_ptr(&k->out[0]);
    int r = xs->rank;
    if (r == 0) {
        memcpy(o, x, es);
        return DG_OK;
    }
    int64_t xin = xs->dims[r - 1], oin = os->dims[r - 1];
    int64_t rows = n / oin;
    int64_t idx[DG_MAX_RANK] = {0};
    int64_t xstr[DG_MAX_RANK];
    xstr[r - 1] = 1;
    for (int d = r - 2; d >= 0; d--)
        xstr[d] = xstr[d + 1] * xs->dims[d + 1];
    for (int64_t row = 0; row < rows; row++) {
        int64_t off = 0;
        for (int d = 0; d < r - 1; d++)
            off += (idx[d] % xs->dims[d]) * xstr[d];
        char *dst = o + (size_t)(row * oin) * es;
        for (int64_t c = 0; c < oin; c += xin)
            memcpy(dst + (size_t)c * es, x + (size_t)off * es,
                   (size_t)xin * es);
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < os->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return DG_OK;
}
DGR_KERNEL(Tile, dgr_k_tile);

/* Prod (and Min, Any, All) over the axes of attr `axis`: each output
 * combines the inputs whose kept coordinates are its own, in input order:
 * o = INIT, then o = COMBINE(o, v) for each. */
#define SREDUCE(T, INIT, COMBINE)                                            \
    do {                                                                     \
        const T *x = xp;                                                     \
        T *o = op;                                                           \
        for (int64_t q = 0; q < nout; q++)                                   \
            o[q] = INIT;                                                     \
        for (int64_t i = 0; i < n; i++) {                                    \
            T v = x[i], a = o[oi];                                           \
            o[oi] = COMBINE;                                                 \
            for (int d = r - 1; d >= 0; d--) {                               \
                oi += ostr[d];                                               \
                if (++idx[d] < xs->dims[d])                                  \
                    break;                                                   \
                oi -= ostr[d] * xs->dims[d];                                 \
                idx[d] = 0;                                                  \
            }                                                                \
        }                                                                    \
    } while (0)

#define PROD(T) SREDUCE(T, 1, a * v)
/* TF's Min: NaN wins */
#define MIN(T, HI) SREDUCE(T, HI, v < a || v != v ? v : a)

enum { SR_PROD, SR_MIN, SR_ANY, SR_ALL };

static dg_status simple_reduce(dgr_kctx *k, int kind)
{
    const dg_shape *xs = &k->in[0].shape;
    int r = xs->rank;
    uint32_t mask;
    if (dgr_cpu_axes(k, DGC_AT_axis, r, &mask))
        return k->err->code;
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t ostr[DG_MAX_RANK], idx[DG_MAX_RANK] = {0}, s = 1, oi = 0;
    for (int d = r - 1; d >= 0; d--) {
        ostr[d] = (mask >> d) & 1 ? 0 : s;
        if (!((mask >> d) & 1))
            s *= xs->dims[d];
    }
    int64_t n = dg_shape_numel(xs), nout = dg_shape_numel(&k->out[0].shape);
    const void *xp = dgr_cpu_ptr(&k->in[0]);
    void *op = dgr_cpu_ptr(&k->out[0]);
    dg_dtype t = k->in[0].dtype;
    if (kind == SR_ANY && t == DG_BOOL) {
        SREDUCE(uint8_t, 0, (uint8_t)(a || v));
        return DG_OK;
    }
    if (kind == SR_ALL && t == DG_BOOL) {
        SREDUCE(uint8_t, 1, (uint8_t)(a && v));
        return DG_OK;
    }
    switch (kind == SR_PROD || kind == SR_MIN ? t : DG_DTYPE_COUNT) {
    case DG_F32:
        if (kind == SR_MIN) MIN(float, INFINITY); else PROD(float);
        break;
    case DG_F64:
        if (kind == SR_MIN) MIN(double, INFINITY); else PROD(double);
        break;
    case DG_I32:
        if (kind == SR_MIN) MIN(int32_t, INT32_MAX); else PROD(int32_t);
        break;
    case DG_I64:
        if (kind == SR_MIN) MIN(int64_t, INT64_MAX); else PROD(int64_t);
        break;
    default:
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "dtype %s", k->node->name,
                      dg_dtype_name(k->in[0].dtype));
    }
    return DG_OK;
}

dg_status dgr_k_prod(dgr_kctx *k) { return simple_reduce(k, SR_PROD); }
DGR_KERNEL(Prod, dgr_k_prod);
dg_status dgr_k_min(dgr_kctx *k) { return simple_reduce(k, SR_MIN); }
DGR_KERNEL(Min, dgr_k_min);
dg_status dgr_k_any(dgr_kctx *k) { return simple_reduce(k, SR_ANY); }
DGR_KERNEL(Any, dgr_k_any);
dg_status dgr_k_all(dgr_kctx *k) { return simple_reduce(k, SR_ALL); }
DGR_KERNEL(All, dgr_k_all);

/* The axis of a GatherV2 / ConcatV2 / Split / SplitV node for rank r
 * (attr, or input `idx` when the node has it: host memory). */
static int64_t node_axis(dgr_kctx *k, int idx, int r)
{
    int64_t ax = dgc_attr_i(k->node, DGC_AT_axis);
    if (idx >= 0 && k->n_in > idx)
        ax = iget(dgr_cpu_ptr(&k->in[idx]), k->in[idx].dtype, 0);
    return ax < 0 ? ax + r : ax;
}

/* GatherV2: out[b, a, j, inner] = params[b, a, indices[b, j], inner] over
 * the batch_dims leading dimensions b (one batch when batch_dims is 0),
 * the dimensions a before the axis and the indices j of a batch. */
dg_status dgr_k_gather(dgr_kctx *k)
{
    const dgr_value *p = &k->in[0], *ix = &k->in[1];
    int64_t ax = node_axis(k, 2, p->shape.rank);
    int64_t nb = dgc_attr_i(k->node, DGC_AT_batch_dims);
    if (nb < 0)
        nb += ix->shape.rank;
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t batch = 1, outer = 1, inner = 1, dim = p->shape.dims[ax];
    for (int d = 0; d < nb; d++)
        batch *= p->shape.dims[d];
    for (int d = (int)nb; d < ax; d++)
        outer *= p->shape.dims[d];
    for (int d = (int)ax + 1; d < p->shape.rank; d++)
        inner *= p->shape.dims[d];
    int64_t nix = dg_shape_numel(&ix->shape);
    int64_t ni = batch ? nix / batch : 0;
    size_t es = dg_dtype_size(p->dtype), row = (size_t)inner * es;
    const char *src = dgr_cpu_ptr(p);
    char *o = dgr_cpu_ptr(&k->out[0]);
    const void *iv = dgr_cpu_ptr(ix);
    for (int64_t j = 0; j < nix; j++) {
        int64_t v = iget(iv, ix->dtype, j);
        if (v < 0 || v >= dim)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': indices[%lld] = "
                          "%lld is not in [0, %lld)", k->node->name,
                          (long long)j, (long long)v, (long long)dim);
    }
    for (int64_t b = 0; b < batch; b++)
        for (int64_t a = 0; a < outer; a++)
            for (int64_t j = 0; j < ni; j++) {
                int64_t v = iget(iv, ix->dtype, b * ni + j);
                memcpy(o + (size_t)((b * outer + a) * ni + j) * row,
                       src + (size_t)((b * outer + a) * dim + v) * row, row);
            }
    return DG_OK;
}
DGR_KERNEL(GatherV2, dgr_k_gather);

dg_status dgr_k_bias_add_grad(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    uint32_t mask = (uint32_t)((1u << (x->shape.rank - 1)) - 1);
    dgr_cpu_reduce(k, dgr_cpu_ptr(x), &x->shape, x->dtype, mask, DGR_RED_SUM,
                   dgr_cpu_ptr(&k->out[0]));
    return DG_OK;
}
DGR_KERNEL(BiasAddGrad, dgr_k_bias_add_grad);

dg_status dgr_k_l2loss(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->in[0].shape);
    const void *x = dgr_cpu_ptr(&k->in[0]);
    double acc = 0;
    if (k->in[0].dtype == DG_F32) {
        for (int64_t i = 0; i < n; i++) {
            double v = ((const float *)x)[i];
            acc += v * v;
        }
        *(float *)dgr_cpu_ptr(&k->out[0]) = (float)(acc / 2);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double v = ((const double *)x)[i];
            acc += v * v;
        }
        *(double *)dgr_cpu_ptr(&k->out[0]) = acc / 2;
    }
    return DG_OK;
}
DGR_KERNEL(L2Loss, dgr_k_l2loss);

/* ConcatV2: each input contributes a block of rows(axis..) per outer
 * index. */
dg_status dgr_k_concat(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *os = &k->out[0].shape;
    int ai = dgc_node_axis_input(k->node); /* issue 21: a run-time axis */
    int64_t ax = node_axis(k, ai, os->rank);
    int nv = ai >= 0 ? ai : k->n_in;
    int64_t outer = 1;
    for (int d = 0; d < ax; d++)
        outer *= os->dims[d];
    size_t es = dg_dtype_size(k->out[0].dtype);
    size_t orow = (size_t)(dg_shape_numel(os) / (outer ? outer : 1)) * es;
    char *o = dgr_cpu_ptr(&k->out[0]);
    size_t at = 0;
    for (int m = 0; m < nv; m++) {
        int64_t numel = dg_shape_numel(&k->in[m].shape);
        size_t row = outer ? (size_t)(numel / outer) * es : 0;
        const char *src = dgr_cpu_ptr(&k->in[m]);
        for (int64_t a = 0; a < outer && row; a++)
            memcpy(o + (size_t)a * orow + at, src + (size_t)a * row, row);
        at += row;
    }
    return DG_OK;
}
DGR_KERNEL(ConcatV2, dgr_k_concat);
DGR_KERNEL(Pack, dgr_k_concat);

/* ---- StridedSlice, Slice, Pack, Fill ------------------------------------- */

/* Copy the slice sp of x (shape xs) into o, element size es (back: o
 * into the slice of x). */
static void slice_copy(char *x, const dg_shape *xs, const dgc_slice *sp,
                       char *o, size_t es, int back)
{
    int r = sp->rank;
    int64_t n = 1, xstr[DG_MAX_RANK], idx[DG_MAX_RANK] = {0}, off = 0;
    int64_t acc = 1;
    for (int d = r - 1; d >= 0; d--) {
        xstr[d] = acc;
        acc *= xs->dims[d];
    }
    for (int d = 0; d < r; d++) {
        n *= sp->len[d];
        off += sp->start[d] * xstr[d];
    }
    for (int64_t i = 0; i < n; i++) {
        if (back) /* StridedSliceGrad: o into x's slice */
            memcpy(x + (size_t)off * es, o + (size_t)i * es, es);
        else
            memcpy(o + (size_t)i * es, x + (size_t)off * es, es);
        for (int d = r - 1; d >= 0; d--) {
            off += sp->stride[d] * xstr[d];
            if (++idx[d] < sp->len[d])
                break;
            off -= sp->stride[d] * xstr[d] * sp->len[d];
            idx[d] = 0;
        }
    }
}

/* Elements of int vector input i into v; its length. */
static int ivec(dgr_kctx *k, int i, int64_t *v)
{
    int64_t n = dg_shape_numel(&k->in[i].shape);
    for (int64_t j = 0; j < n && j < DG_MAX_RANK; j++)
        v[j] = iget(dgr_cpu_ptr(&k->in[i]), k->in[i].dtype, j);
    return (int)n;
}

dg_status dgr_k_slice_any(dgr_kctx *k)
{
    int64_t b[DG_MAX_RANK], e[DG_MAX_RANK], s[DG_MAX_RANK];
    dgc_slice sp;
    char msg[256];
    int rc, m = ivec(k, 1, b);
    if (k->node->op == DGC_OPID_Slice) {
        ivec(k, 2, e);
        rc = dgc_slice_simple(&k->in[0].shape, b, e, &sp, msg, sizeof msg);
    } else {
        ivec(k, 2, e);
        for (int i = 0; i < m; i++)
            s[i] = 1;
        if (k->n_in > 3)
            ivec(k, 3, s);
        rc = dgc_slice_spec(k->node, &k->in[0].shape, b, e, s, m, &sp, msg,
                            sizeof msg);
    }
    if (rc)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    if (dg_shape_numel(&k->out[0].shape) > 0)
        slice_copy(dgr_cpu_ptr(&k->in[0]), &k->in[0].shape, &sp,
                   dgr_cpu_ptr(&k->out[0]), dg_dtype_size(k->in[0].dtype), 0);
    return DG_OK;
}
DGR_KERNEL(StridedSlice, dgr_k_slice_any);
DGR_KERNEL(Slice, dgr_k_slice_any);

/* StridedSliceGrad (shape, begin, end, strides, dy; StridedSlice's masks):
 * zeros of `shape` with dy written at the slice StridedSlice takes */
dg_status dgr_k_strided_slice_grad(dgr_kctx *k)
{
    int64_t b[DG_MAX_RANK], e[DG_MAX_RANK], s[DG_MAX_RANK];
    dg_shape xs = k->out_types[0].shape;
    dgc_slice sp;
    char msg[256];
    int m = ivec(k, 1, b);
    ivec(k, 2, e);
    ivec(k, 3, s);
    if (dgc_slice_spec(k->node, &xs, b, e, s, m, &sp, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    int64_t n = dg_shape_numel(&sp.out);
    if (n != dg_shape_numel(&k->in[4].shape))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': dy has %lld elements "
                      "for a slice of %lld", k->node->name,
                      (long long)dg_shape_numel(&k->in[4].shape),
                      (long long)n);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    size_t es = dg_dtype_size(k->out[0].dtype);
    memset(dgr_cpu_ptr(&k->out[0]), 0, (size_t)dg_shape_numel(&xs) * es);
    if (n > 0)
        slice_copy(dgr_cpu_ptr(&k->out[0]), &xs, &sp,
                   dgr_cpu_ptr(&k->in[4]), es, 1);
    return DG_OK;
}
DGR_KERNEL(StridedSliceGrad, dgr_k_strided_slice_grad);

dg_status dgr_k_fill(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    size_t es = dg_dtype_size(k->out[0].dtype);
    char *o = dgr_cpu_ptr(&k->out[0]);
    for (int64_t i = 0; i < n; i++)
        memcpy(o + (size_t)i * es, dgr_cpu_ptr(&k->in[1]), es);
    return DG_OK;
}
DGR_KERNEL(Fill, dgr_k_fill);

/* ---- ShapeN, Unpack, Split, SplitV --------------------------------------- */

dg_status dgr_k_shape_n(dgr_kctx *k)
{
    for (int i = 0; i < k->n_out; i++) {
        dg_status st = dgr_kctx_alloc_output(k, i);
        if (st)
            return st;
        const dg_shape *s = &k->in[i].shape;
        for (int d = 0; d < s->rank; d++)
            iset(dgr_cpu_ptr(&k->out[i]), k->out[i].dtype, d, s->dims[d]);
    }
    return DG_OK;
}
DGR_KERNEL(ShapeN, dgr_k_shape_n);

/* Output i is the block of rows [at, at + its size) of every outer index
 * of the input along the split axis. */
dg_status dgr_k_split_any(dgr_kctx *k)
{
    const dg_shape *xs = &k->in[0].shape;
    int64_t ax = node_axis(k, dgc_node_axis_input(k->node), xs->rank);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++)
        outer *= xs->dims[d];
    for (int d = (int)ax + 1; d < xs->rank; d++)
        inner *= xs->dims[d];
    size_t es = dg_dtype_size(k->in[0].dtype);
    size_t irow = (size_t)(xs->dims[ax] * inner) * es, at = 0;
    const char *x = dgr_cpu_ptr(&k->in[0]);
    for (int i = 0; i < k->n_out; i++) {
        dg_status st = dgr_kctx_alloc_output(k, i);
        if (st)
            return st;
        int64_t numel = dg_shape_numel(&k->out[i].shape);
        size_t row = outer ? (size_t)(numel / outer) * es : 0;
        char *o = dgr_cpu_ptr(&k->out[i]);
        for (int64_t a = 0; a < outer && row; a++)
            memcpy(o + (size_t)a * row, x + (size_t)a * irow + at, row);
        at += row;
    }
    return DG_OK;
}
DGR_KERNEL(Unpack, dgr_k_split_any);
DGR_KERNEL(Split, dgr_k_split_any);
DGR_KERNEL(SplitV, dgr_k_split_any);

/* ---- Range, DynamicStitch, BroadcastTo, BroadcastGradientArgs,
 *      ConcatOffset ------------------------------------------------------- */

dg_status dgr_k_range(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dg_dtype t = k->in[0].dtype;
    int64_t s = iget(dgr_cpu_ptr(&k->in[0]), t, 0),
            d = iget(dgr_cpu_ptr(&k->in[2]), t, 0);
    int64_t n = dg_shape_numel(&k->out[0].shape);
    for (int64_t i = 0; i < n; i++)
        iset(dgr_cpu_ptr(&k->out[0]), t, i, s + i * d);
    return DG_OK;
}
DGR_KERNEL(Range, dgr_k_range);

dg_status dgr_k_dynamic_stitch(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int nn = k->n_in / 2;
    const dg_shape *os = &k->out[0].shape;
    int64_t rows = os->dims[0];
    size_t es = dg_dtype_size(k->out[0].dtype);
    size_t row = rows ? (size_t)(dg_shape_numel(os) / rows) * es : 0;
    char *o = dgr_cpu_ptr(&k->out[0]);
    memset(o, 0, (size_t)dg_shape_numel(os) * es);
    for (int m = 0; m < nn; m++) {
        const dgr_value *ix = &k->in[m], *dt = &k->in[nn + m];
        int64_t c = dg_shape_numel(&ix->shape);
        for (int64_t i = 0; i < c; i++) {
            int64_t v = iget(dgr_cpu_ptr(ix), ix->dtype, i);
            if (v < 0 || v >= rows)
                return dg_err(k->err, DG_E_RUNTIME, "node '%s': index %lld "
                              "is not in [0, %lld)", k->node->name,
                              (long long)v, (long long)rows);
            memcpy(o + (size_t)v * row,
                   (const char *)dgr_cpu_ptr(dt) + (size_t)i * row, row);
        }
    }
    return DG_OK;
}

/* BroadcastTo: Tile's wrap-around copy with the input right-aligned. */
dg_status dgr_k_broadcast_to(dgr_kctx *k)
{
    dgr_value x = k->in[0];
    x.shape = dgr_shape_right_align(&x.shape, k->out_types[0].shape.rank);
    dgr_kctx kk = *k;
    kk.in = &x;
    return dgr_k_tile(&kk);
}
DGR_KERNEL(BroadcastTo, dgr_k_broadcast_to);

dg_status dgr_k_bcast_grad_args(dgr_kctx *k)
{
    int64_t a[DG_MAX_RANK], b[DG_MAX_RANK], ra[DG_MAX_RANK], rb[DG_MAX_RANK];
    int na = ivec(k, 0, a), nb = ivec(k, 1, b), nra, nrb;
    if (dgc_bcast_grad_args(a, na, b, nb, ra, &nra, rb, &nrb))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': incompatible shapes",
                      k->node->name);
    for (int o = 0; o < 2; o++) {
        dg_status st = dgr_kctx_alloc_output(k, o);
        if (st)
            return st;
        const int64_t *r = o ? rb : ra;
        for (int i = 0; i < (o ? nrb : nra); i++)
            iset(dgr_cpu_ptr(&k->out[o]), k->out[o].dtype, i, r[i]);
    }
    return DG_OK;
}
DGR_KERNEL(BroadcastGradientArgs, dgr_k_bcast_grad_args);

dg_status dgr_k_concat_offset(dgr_kctx *k)
{
    int64_t ax = iget(dgr_cpu_ptr(&k->in[0]), k->in[0].dtype, 0), at = 0;
    for (int o = 0; o < k->n_out; o++) {
        dg_status st = dgr_kctx_alloc_output(k, o);
        if (st)
            return st;
        int64_t s[DG_MAX_RANK];
        int r = ivec(k, o + 1, s);
        int64_t a = ax < 0 ? ax + r : ax;
        for (int d = 0; d < r; d++)
            iset(dgr_cpu_ptr(&k->out[o]), k->out[o].dtype, d, d == a ? at : 0);
        if (a >= 0 && a < r)
            at += s[a];
    }
    return DG_OK;
}
DGR_KERNEL(ConcatOffset, dgr_k_concat_offset);

/* ---- Pad, Select, LogSoftmax, summaries ---------------------------------- */

/* TF's summary ops: on purpose nothing, an empty int32 [0] out. */
dg_status dgr_k_summary(dgr_kctx *k)
{
    return dgr_kctx_alloc_output(k, 0);
}
DGR_KERNEL(ScalarSummary, dgr_k_summary);
DGR_KERNEL(HistogramSummary, dgr_k_summary);
DGR_KERNEL(ImageSummary, dgr_k_summary);
DGR_KERNEL(AudioSummary, dgr_k_summary);
DGR_KERNEL(TensorSummary, dgr_k_summary);
DGR_KERNEL(MergeSummary, dgr_k_summary);

dg_status dgr_k_pad(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *xs = &k->in[0].shape, *os = &k->out[0].shape;
    size_t es = dg_dtype_size(k->in[0].dtype);
    int64_t no = dg_shape_numel(os), nx = dg_shape_numel(xs);
    char *o = dgr_cpu_ptr(&k->out[0]);
    if (k->n_in > 2 && no > 0) { /* constant: one element, then doubling */
        memcpy(o, dgr_cpu_ptr(&k->in[2]), es);
        for (int64_t have = 1; have < no; have *= 2)
            memcpy(o + (size_t)have * es, o,
                   (size_t)(have < no - have ? have : no - have) * es);
    } else {
        memset(o, 0, (size_t)no * es);
    }
    int r = xs->rank;
    if (r == 0 || nx == 0) {
        if (nx)
            memcpy(o, dgr_cpu_ptr(&k->in[0]), es);
        return DG_OK;
    }
    int64_t ostr[DG_MAX_RANK], idx[DG_MAX_RANK] = {0}, off = 0, acc = 1;
    for (int d = r - 1; d >= 0; d--) {
        ostr[d] = acc;
        acc *= os->dims[d];
    }
    for (int d = 0; d < r; d++)
        off += iget(dgr_cpu_ptr(&k->in[1]), k->in[1].dtype, 2 * d) * ostr[d];
    /* one memcpy per innermost row of x */
    const char *x = dgr_cpu_ptr(&k->in[0]);
    int64_t row = xs->dims[r - 1];
    size_t rb = (size_t)row * es;
    for (int64_t i = 0; i < nx; i += row) {
        memcpy(o + (size_t)off * es, x + (size_t)i * es, rb);
        for (int d = r - 2; d >= 0; d--) {
            off += ostr[d];
            if (++idx[d] < xs->dims[d])
                break;
            off -= ostr[d] * xs->dims[d];
            idx[d] = 0;
        }
    }
    return DG_OK;
}
DGR_KERNEL(Pad, dgr_k_pad);

/* Select / SelectV2: out[i] = cond[.] ? t[.] : e[.] with broadcasting
 * (TF1 Select's per-row vector condition as a [rows, 1, ...] shape). */
dg_status dgr_k_select(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *os = &k->out[0].shape;
    dg_shape cs = k->in[0].shape;
    if (k->node->op == DGC_OPID_Select && cs.rank == 1 && os->rank > 1) {
        for (int d = 1; d < os->rank; d++)
            cs.dims[d] = 1;
        cs.rank = os->rank;
    }
    const dg_shape *ss[3] = {&cs, &k->in[1].shape, &k->in[2].shape};
    int r = os->rank;
    int64_t str[3][DG_MAX_RANK];
    for (int m = 0; m < 3; m++) {
        int64_t acc = 1;
        for (int d = r - 1; d >= 0; d--) {
            int sd = d - (r - ss[m]->rank);
            int64_t dim = sd >= 0 ? ss[m]->dims[sd] : 1;
            str[m][d] = dim == 1 ? 0 : acc;
            acc *= dim;
        }
    }
    size_t es = dg_dtype_size(k->out[0].dtype);
    int64_t n = dg_shape_numel(os), idx[DG_MAX_RANK] = {0}, off[3] = {0};
    const uint8_t *c = dgr_cpu_ptr(&k->in[0]);
    const char *t = dgr_cpu_ptr(&k->in[1]), *e = dgr_cpu_ptr(&k->in[2]);
    char *o = dgr_cpu_ptr(&k->out[0]);
    for (int64_t i = 0; i < n; i++) {
        memcpy(o + (size_t)i * es, c[off[0]] ? t + (size_t)off[1] * es
                                             : e + (size_t)off[2] * es, es);
        for (int d = r - 1; d >= 0; d--) {
            for (int m = 0; m < 3; m++)
                off[m] += str[m][d];
            if (++idx[d] < os->dims[d])
                break;
            for (int m = 0; m < 3; m++)
                off[m] -= str[m][d] * os->dims[d];
            idx[d] = 0;
        }
    }
    return DG_OK;
}
DGR_KERNEL(Select, dgr_k_select);
DGR_KERNEL(SelectV2, dgr_k_select);

#define LOGSM(T, EXP, LOG)                                                   \
    do {                                                                     \
        const T *xv = dgr_cpu_ptr(&k->in[0]);                                \
        T *yv = dgr_cpu_ptr(&k->out[0]);                                     \
        for (int64_t r = 0; r < rows; r++) {                                 \
            const T *x = xv + r * C;                                         \
            T *y = yv + r * C;                                               \
            T m = x[0];                                                      \
            for (int64_t c = 1; c < C; c++)                                  \
                m = x[c] > m ? x[c] : m;                                     \
            double s = 0;                                                    \
            for (int64_t c = 0; c < C; c++)                                  \
                s += EXP(x[c] - m);                                          \
            T lse = (T)LOG(s);                                               \
            for (int64_t c = 0; c < C; c++)                                  \
                y[c] = x[c] - m - lse;                                       \
        }                                                                    \
    } while (0)

dg_status dgr_k_log_softmax(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *s = &k->in[0].shape;
    int64_t C = s->rank ? s->dims[s->rank - 1] : 1;
    int64_t rows = C ? dg_shape_numel(s) / C : 0;
    if (k->in[0].dtype == DG_F32)
        LOGSM(float, expf, log);
    else
        LOGSM(double, exp, log);
    return DG_OK;
}
DGR_KERNEL(LogSoftmax, dgr_k_log_softmax);
