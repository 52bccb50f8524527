/*
 * infer_tf.c -- shape and dtype inference for the TensorFlow graph ops of
 * issue 10: Shape, Size, Rank, ExpandDims, Squeeze, Tile, GatherV2,
 * BiasAddGrad, L2Loss, ConcatV2, and the shape-parameter helpers they
 * share (a parameter comes from an attribute, or from an input whose
 * elements the caller hands over in dgc_ttype.value: a Const's value at
 * compile time, the run-time value for DGC_OP_HOST_IN ops).  Without the
 * value, dims the parameter decides stay -1 until run time.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

static int is_int(dg_dtype t)
{
    return t == DG_I32 || t == DG_I64;
}

int dgc_ttype_ints(const dgc_ttype *t, int64_t *v, int max)
{
    int64_t n = dg_shape_numel(&t->shape);
    if (n < 0 || !is_int(t->dtype) || t->shape.rank > 1)
        return -1;
    if (n > max)
        return -2;
    if (!t->value)
        return (int)n; /* length known, elements not */
    for (int64_t i = 0; i < n; i++)
        v[i] = t->dtype == DG_I32 ? ((const int32_t *)t->value)[i]
                                  : ((const int64_t *)t->value)[i];
    return (int)n;
}

/* Output dtype from attr out_type (default int32). */
static dg_dtype out_type(const dgc_node *n)
{
    const dgc_attr *a = dgc_node_attr(n, "out_type");
    return a ? (dg_dtype)a->i : DG_I32;
}

int dgc_infer_shape_of(DGC_INFER_ARGS)
{
    (void)n_in;
    out[0].dtype = out_type(n);
    if (!is_int(out[0].dtype))
        FAIL("out_type must be int32 or int64");
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = in[0].shape.rank;
    return 0;
}

int dgc_infer_size_of(DGC_INFER_ARGS)
{
    (void)n_in;
    (void)in;
    out[0].dtype = out_type(n);
    if (!is_int(out[0].dtype))
        FAIL("out_type must be int32 or int64");
    memset(&out[0].shape, 0, sizeof out[0].shape);
    return 0;
}

int dgc_infer_rank_of(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    (void)in;
    (void)msg;
    (void)msgsz;
    out[0].dtype = DG_I32;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    return 0;
}

/* A scalar int parameter: attr `key`, else input `idx` (1 known, 0 value
 * unknown until run time, -1 error in msg). */
static int scalar_param(const dgc_node *n, const char *key,
                        const dgc_ttype *in, int n_in, int idx, int64_t *v,
                        char *msg, size_t msgsz)
{
    const dgc_attr *a = dgc_node_attr(n, key);
    if (n_in <= idx) {
        if (!a)
            FAIL("needs attr '%s' or a %s input", key, key);
        *v = (a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE) && a->n > 0
                 ? a->ints[0] : a->i;
        return 1;
    }
    int64_t e[1];
    int k = dgc_ttype_ints(&in[idx], e, 1);
    if (k != 1 || in[idx].shape.rank > 1)
        FAIL("input %d (%s) must be an int32/int64 scalar", idx, key);
    if (!in[idx].value)
        return 0;
    *v = e[0];
    return 1;
}

int dgc_infer_expand_dims(DGC_INFER_ARGS)
{
    const dg_shape *x = &in[0].shape;
    int64_t ax = 0;
    int known = scalar_param(n, "axis", in, n_in, 1, &ax, msg, msgsz);
    if (known < 0)
        return -1;
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    if (x->rank >= DG_MAX_RANK)
        FAIL("rank %d is the most dgrun supports", DG_MAX_RANK);
    out[0].shape.rank = x->rank + 1;
    if (!known) {
        for (int i = 0; i <= x->rank; i++)
            out[0].shape.dims[i] = -1;
        return 0;
    }
    if (ax < -(x->rank + 1) || ax > x->rank)
        FAIL("axis %lld is out of range for rank %d", (long long)ax, x->rank);
    if (ax < 0)
        ax += x->rank + 1;
    for (int i = 0, j = 0; i <= x->rank; i++)
        out[0].shape.dims[i] = i == ax ? 1 : x->dims[j++];
    return 0;
}

int dgc_infer_squeeze(DGC_INFER_ARGS)
{
    (void)n_in;
    const dg_shape *x = &in[0].shape;
    const dgc_attr *a = dgc_node_attr(n, "axis");
    int drop[DG_MAX_RANK] = {0};
    if (a && !((a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE) &&
               a->n == 0)) {
        int cnt = (a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE) ? a->n : 1;
        for (int i = 0; i < cnt; i++) {
            int64_t ax = cnt == 1 && a->kind != DGC_A_INTS &&
                                 a->kind != DGC_A_SHAPE ? a->i : a->ints[i];
            if (ax < -x->rank || ax >= x->rank)
                FAIL("axis %lld is out of range for rank %d", (long long)ax,
                     x->rank);
            if (ax < 0)
                ax += x->rank;
            if (x->dims[ax] > 1)
                FAIL("cannot squeeze axis %lld of size %lld", (long long)ax,
                     (long long)x->dims[ax]);
            drop[ax] = 1;
        }
    } else {
        for (int i = 0; i < x->rank; i++) {
            if (x->dims[i] < 0)
                FAIL("Squeeze of all 1 dimensions needs known dims (give "
                     "squeeze_dims)");
            drop[i] = x->dims[i] == 1;
        }
    }
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    for (int i = 0; i < x->rank; i++)
        if (!drop[i])
            out[0].shape.dims[out[0].shape.rank++] = x->dims[i];
    return 0;
}

int dgc_infer_tile(DGC_INFER_ARGS)
{
    const dg_shape *x = &in[0].shape;
    int64_t m[DG_MAX_RANK];
    int cnt, known = 1;
    const dgc_attr *a = dgc_node_attr(n, "multiples");
    if (n_in < 2) {
        if (!a || (a->kind != DGC_A_INTS && a->kind != DGC_A_SHAPE))
            FAIL("needs attr 'multiples' or a multiples input");
        cnt = a->n;
        if (cnt > DG_MAX_RANK)
            cnt = DG_MAX_RANK + 1;
        for (int i = 0; i < cnt && i < DG_MAX_RANK; i++)
            m[i] = a->ints[i];
    } else {
        cnt = dgc_ttype_ints(&in[1], m, DG_MAX_RANK);
        if (cnt == -1 || in[1].shape.rank != 1)
            FAIL("multiples must be an int32/int64 vector of known length");
        known = in[1].value != NULL;
    }
    if (cnt != x->rank)
        FAIL("multiples has %d elements for an input of rank %d", cnt,
             x->rank);
    out[0].dtype = in[0].dtype;
    out[0].shape = *x;
    for (int i = 0; i < x->rank; i++) {
        if (known && m[i] < 0)
            FAIL("multiples[%d] = %lld is negative", i, (long long)m[i]);
        out[0].shape.dims[i] = !known || x->dims[i] < 0 ? -1
                                                        : x->dims[i] * m[i];
    }
    return 0;
}

int dgc_infer_gather(DGC_INFER_ARGS)
{
    const dg_shape *p = &in[0].shape, *ix = &in[1].shape;
    if (!is_int(in[1].dtype))
        FAIL("indices must be int32 or int64, got %s",
             dg_dtype_name(in[1].dtype));
    if (dgc_attr_int(n, "batch_dims", 0) != 0)
        FAIL("batch_dims other than 0 is not supported");
    int64_t ax = 0;
    int known = n_in > 2 || dgc_node_attr(n, "axis")
                    ? scalar_param(n, "axis", in, n_in, 2, &ax, msg, msgsz)
                    : 1;
    if (known < 0)
        return -1;
    if (!known)
        FAIL("the axis must be known when the graph is compiled");
    if (ax < -p->rank || ax >= p->rank)
        FAIL("axis %lld is out of range for rank %d", (long long)ax, p->rank);
    if (ax < 0)
        ax += p->rank;
    if (p->rank - 1 + ix->rank > DG_MAX_RANK)
        FAIL("the result would have more than %d dimensions", DG_MAX_RANK);
    out[0].dtype = in[0].dtype;
    dg_shape o;
    memset(&o, 0, sizeof o);
    for (int i = 0; i < ax; i++)
        o.dims[o.rank++] = p->dims[i];
    for (int i = 0; i < ix->rank; i++)
        o.dims[o.rank++] = ix->dims[i];
    for (int i = (int)ax + 1; i < p->rank; i++)
        o.dims[o.rank++] = p->dims[i];
    out[0].shape = o;
    return 0;
}

int dgc_infer_bias_add_grad(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    if (in[0].shape.rank < 1)
        FAIL("needs an input of rank >= 1");
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = in[0].shape.dims[in[0].shape.rank - 1];
    return 0;
}

int dgc_infer_l2loss(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    if (in[0].dtype != DG_F32 && in[0].dtype != DG_F64)
        FAIL("needs a float input, got %s", dg_dtype_name(in[0].dtype));
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    return 0;
}

int dgc_infer_concat(DGC_INFER_ARGS)
{
    int64_t ax = 0;
    if (scalar_param(n, "axis", in, 0, 0, &ax, msg, msgsz) < 0)
        return -1;
    const dg_shape *f = &in[0].shape;
    if (ax < -f->rank || ax >= f->rank)
        FAIL("axis %lld is out of range for rank %d", (long long)ax, f->rank);
    if (ax < 0)
        ax += f->rank;
    dg_shape o = *f;
    for (int k = 1; k < n_in; k++) {
        const dg_shape *s = &in[k].shape;
        if (in[k].dtype != in[0].dtype)
            FAIL("input %d is %s, input 0 is %s", k,
                 dg_dtype_name(in[k].dtype), dg_dtype_name(in[0].dtype));
        if (s->rank != f->rank)
            FAIL("input %d has rank %d, input 0 rank %d", k, s->rank, f->rank);
        for (int d = 0; d < f->rank; d++) {
            if (d == ax) {
                o.dims[d] = o.dims[d] < 0 || s->dims[d] < 0
                                ? -1 : o.dims[d] + s->dims[d];
            } else if (o.dims[d] < 0) {
                o.dims[d] = s->dims[d];
            } else if (s->dims[d] >= 0 && s->dims[d] != o.dims[d]) {
                FAIL("input %d has dimension %d = %lld, input 0 has %lld", k,
                     d, (long long)s->dims[d], (long long)o.dims[d]);
            }
        }
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = o;
    return 0;
}

/* ---- StridedSlice / Slice ------------------------------------------------ */

/* The int vector parameter input idx of a slice op: length into *cnt, the
 * elements into v when known.  1 known, 0 unknown until run time, -1
 * error in msg. */
static int vec_param(const dgc_ttype *in, int n_in, int idx, const char *what,
                     int64_t *v, int *cnt, char *msg, size_t msgsz)
{
    if (idx >= n_in)
        FAIL("needs its %s input", what);
    int k = dgc_ttype_ints(&in[idx], v, DG_MAX_RANK);
    if (k < 0 || in[idx].shape.rank != 1)
        FAIL("%s must be an int32/int64 vector of at most %d elements", what,
             DG_MAX_RANK);
    *cnt = k;
    return in[idx].value != NULL;
}

int dgc_slice_spec(const dgc_node *n, const dg_shape *x, const int64_t *beg,
                   const int64_t *end, const int64_t *str, int m,
                   dgc_slice *sp, char *msg, size_t msgsz)
{
    int64_t bm = dgc_attr_int(n, "begin_mask", 0),
            em = dgc_attr_int(n, "end_mask", 0),
            elm = dgc_attr_int(n, "ellipsis_mask", 0),
            nam = dgc_attr_int(n, "new_axis_mask", 0),
            sam = dgc_attr_int(n, "shrink_axis_mask", 0);
    int r = x->rank;
    memset(sp, 0, sizeof *sp);
    if (elm & (elm - 1))
        FAIL("more than one ellipsis in ellipsis_mask");
    int ell = elm ? 1 : 0;
    /* entries: >= 0 a dense input dim kept, -1 a new axis */
    int ent[2 * DG_MAX_RANK + 2], ne_ = 0;
    int d = 0;
    int64_t b[DG_MAX_RANK], e[DG_MAX_RANK], s[DG_MAX_RANK];
    int bmk[DG_MAX_RANK], emk[DG_MAX_RANK], shr[DG_MAX_RANK];
    for (int i = 0; i < m || (!ell && d < r && i >= m); i++) {
        if (i >= m) { /* implicit ellipsis at the end: full ranges */
            b[d] = 0, e[d] = 0, s[d] = 1, bmk[d] = emk[d] = 1, shr[d] = 0;
            ent[ne_++] = d++;
            continue;
        }
        if ((elm >> i) & 1) {
            int after = 0; /* sparse dims after the ellipsis that take an
                              input dim */
            for (int j = i + 1; j < m; j++)
                after += !((nam >> j) & 1);
            int upto = r - after;
            for (; d < upto; d++) {
                b[d] = 0, e[d] = 0, s[d] = 1, bmk[d] = emk[d] = 1, shr[d] = 0;
                ent[ne_++] = d;
            }
            continue;
        }
        if ((nam >> i) & 1) {
            if (ne_ >= 2 * DG_MAX_RANK)
                FAIL("too many new axes");
            ent[ne_++] = -1;
            continue;
        }
        if (d >= r)
            FAIL("index %d of the slice spec is past the input's rank %d", i,
                 r);
        b[d] = beg[i], e[d] = end[i], s[d] = str[i];
        bmk[d] = (bm >> i) & 1, emk[d] = (em >> i) & 1, shr[d] = (sam >> i) & 1;
        if (!shr[d])
            ent[ne_++] = d;
        d++;
    }
    if (d != r)
        FAIL("the slice spec covers %d of the input's %d dims", d, r);
    for (d = 0; d < r; d++) {
        int64_t dim = x->dims[d], st = s[d];
        if (st == 0)
            FAIL("strides[%d] is 0", d);
        sp->stride[d] = st;
        if (dim < 0) {
            sp->start[d] = 0;
            sp->len[d] = shr[d] ? 1 : -1;
            continue;
        }
        if (shr[d]) {
            int64_t v = b[d] < 0 ? b[d] + dim : b[d];
            if (v < 0 || v >= dim)
                FAIL("slice index %lld of dimension %d is out of bounds",
                     (long long)b[d], d);
            sp->start[d] = v;
            sp->len[d] = 1;
            sp->stride[d] = 1;
            continue;
        }
        int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? dim : dim - 1;
        int64_t bb = bmk[d] ? (st > 0 ? lo : hi)
                            : (b[d] < 0 ? b[d] + dim : b[d]);
        int64_t ee = emk[d] ? (st > 0 ? hi : lo)
                            : (e[d] < 0 ? e[d] + dim : e[d]);
        bb = bb < lo ? lo : bb > hi ? hi : bb;
        ee = ee < lo ? lo : ee > hi ? hi : ee;
        int64_t len = st > 0 ? (ee - bb + st - 1) / st : (bb - ee - st - 1) / -st;
        sp->start[d] = bb;
        sp->len[d] = len > 0 ? len : 0;
    }
    sp->rank = r;
    memset(&sp->out, 0, sizeof sp->out);
    if (ne_ > DG_MAX_RANK)
        FAIL("the result would have more than %d dimensions", DG_MAX_RANK);
    for (int k = 0; k < ne_; k++)
        sp->out.dims[sp->out.rank++] = ent[k] < 0 ? 1 : sp->len[ent[k]];
    return 0;
}

int dgc_infer_strided_slice(DGC_INFER_ARGS)
{
    int64_t b[DG_MAX_RANK], e[DG_MAX_RANK], s[DG_MAX_RANK];
    int nb, ne_, ns;
    int kb = vec_param(in, n_in, 1, "begin", b, &nb, msg, msgsz);
    int ke = vec_param(in, n_in, 2, "end", e, &ne_, msg, msgsz);
    int ks = n_in > 3 ? vec_param(in, n_in, 3, "strides", s, &ns, msg, msgsz)
                      : 1;
    if (kb < 0 || ke < 0 || ks < 0)
        return -1;
    if (n_in <= 3) {
        ns = nb;
        for (int i = 0; i < nb; i++)
            s[i] = 1;
    }
    if (nb != ne_ || nb != ns)
        FAIL("begin, end and strides have %d, %d and %d elements", nb, ne_,
             ns);
    out[0].dtype = in[0].dtype;
    if (!kb || !ke || !ks) { /* rank known only without new/shrink axes */
        if (dgc_attr_int(n, "new_axis_mask", 0) ||
            dgc_attr_int(n, "shrink_axis_mask", 0) ||
            dgc_attr_int(n, "ellipsis_mask", 0))
            FAIL("begin, end and strides must be known when the graph is "
                 "compiled when a mask adds, drops or skips dims");
        out[0].shape = in[0].shape;
        for (int i = 0; i < out[0].shape.rank; i++)
            out[0].shape.dims[i] = -1;
        return 0;
    }
    dgc_slice sp;
    if (dgc_slice_spec(n, &in[0].shape, b, e, s, nb, &sp, msg, msgsz))
        return -1;
    out[0].shape = sp.out;
    return 0;
}

int dgc_slice_simple(const dg_shape *x, const int64_t *beg,
                     const int64_t *size, dgc_slice *sp, char *msg,
                     size_t msgsz)
{
    memset(sp, 0, sizeof *sp);
    sp->rank = x->rank;
    sp->out.rank = x->rank;
    for (int d = 0; d < x->rank; d++) {
        int64_t dim = x->dims[d];
        sp->start[d] = beg[d];
        sp->stride[d] = 1;
        int64_t len = size[d] == -1 && dim >= 0 ? dim - beg[d] : size[d];
        if (beg[d] < 0 || (dim >= 0 && (len < 0 || beg[d] + len > dim)))
            FAIL("begin %lld, size %lld out of bounds for dimension %d of "
                 "size %lld", (long long)beg[d], (long long)size[d], d,
                 (long long)dim);
        sp->len[d] = dim < 0 ? -1 : len;
        sp->out.dims[d] = sp->len[d];
    }
    return 0;
}

int dgc_infer_slice(DGC_INFER_ARGS)
{
    (void)n;
    int64_t b[DG_MAX_RANK], sz[DG_MAX_RANK];
    int nb, ns;
    int kb = vec_param(in, n_in, 1, "begin", b, &nb, msg, msgsz);
    int ks = vec_param(in, n_in, 2, "size", sz, &ns, msg, msgsz);
    if (kb < 0 || ks < 0)
        return -1;
    if (nb != in[0].shape.rank || ns != nb)
        FAIL("begin and size need %d elements, have %d and %d",
             in[0].shape.rank, nb, ns);
    out[0].dtype = in[0].dtype;
    if (!kb || !ks) {
        out[0].shape = in[0].shape;
        for (int i = 0; i < out[0].shape.rank; i++)
            out[0].shape.dims[i] = -1;
        return 0;
    }
    dgc_slice sp;
    if (dgc_slice_simple(&in[0].shape, b, sz, &sp, msg, msgsz))
        return -1;
    out[0].shape = sp.out;
    return 0;
}

/* ---- Pack, Fill ---------------------------------------------------------- */

int dgc_infer_pack(DGC_INFER_ARGS)
{
    const dg_shape *f = &in[0].shape;
    int64_t ax = dgc_attr_int(n, "axis", 0);
    if (ax < -(f->rank + 1) || ax > f->rank)
        FAIL("axis %lld is out of range for rank %d", (long long)ax, f->rank);
    if (ax < 0)
        ax += f->rank + 1;
    if (f->rank >= DG_MAX_RANK)
        FAIL("rank %d is the most dgrun supports", DG_MAX_RANK);
    dg_shape s = *f;
    for (int k = 1; k < n_in; k++) {
        if (in[k].dtype != in[0].dtype)
            FAIL("input %d is %s, input 0 is %s", k,
                 dg_dtype_name(in[k].dtype), dg_dtype_name(in[0].dtype));
        if (in[k].shape.rank != f->rank)
            FAIL("input %d has rank %d, input 0 rank %d", k,
                 in[k].shape.rank, f->rank);
        for (int d = 0; d < f->rank; d++) {
            int64_t a = s.dims[d], b = in[k].shape.dims[d];
            if (a >= 0 && b >= 0 && a != b)
                FAIL("input %d has dimension %d = %lld, input 0 has %lld", k,
                     d, (long long)b, (long long)a);
            if (a < 0)
                s.dims[d] = b;
        }
    }
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = f->rank + 1;
    for (int d = 0, j = 0; d <= f->rank; d++)
        out[0].shape.dims[d] = d == ax ? n_in : s.dims[j++];
    return 0;
}

int dgc_infer_fill(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    int64_t v[DG_MAX_RANK];
    int cnt = dgc_ttype_ints(&in[0], v, DG_MAX_RANK);
    if (cnt < 0 || in[0].shape.rank != 1)
        FAIL("dims must be an int32/int64 vector of at most %d elements",
             DG_MAX_RANK);
    if (in[1].shape.rank != 0)
        FAIL("value must be a scalar");
    out[0].dtype = in[1].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = cnt;
    for (int i = 0; i < cnt; i++) {
        if (in[0].value && v[i] < 0)
            FAIL("dims[%d] = %lld is negative", i, (long long)v[i]);
        out[0].shape.dims[i] = in[0].value ? v[i] : -1;
    }
    return 0;
}
