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

/* A run-time axis not yet known (TF's shape functions): the output has
 * the input's rank and no known dimension. */
static void unknown_dims(dg_shape *s, int rank)
{
    memset(s, 0, sizeof *s);
    s->rank = rank;
    for (int d = 0; d < rank; d++)
        s->dims[d] = -1;
}

int dgc_infer_gather(DGC_INFER_ARGS)
{
    const dg_shape *p = &in[0].shape, *ix = &in[1].shape;
    if (!is_int(in[1].dtype))
        FAIL("indices must be int32 or int64, got %s",
             dg_dtype_name(in[1].dtype));
    int64_t b = dgc_attr_int(n, "batch_dims", 0);
    if (b < 0)
        b += ix->rank;
    if (b < 0 || b > ix->rank || b > p->rank)
        FAIL("batch_dims %lld is out of range for indices of rank %d",
             (long long)dgc_attr_int(n, "batch_dims", 0), ix->rank);
    for (int i = 0; i < b; i++)
        if (p->dims[i] >= 0 && ix->dims[i] >= 0 && p->dims[i] != ix->dims[i])
            FAIL("params.shape[%d] = %lld and indices.shape[%d] = %lld "
                 "differ within batch_dims %lld", i, (long long)p->dims[i],
                 i, (long long)ix->dims[i], (long long)b);
    int64_t ax = 0;
    int known = n_in > 2 || dgc_node_attr(n, "axis")
                    ? scalar_param(n, "axis", in, n_in, 2, &ax, msg, msgsz)
                    : 1;
    if (known < 0)
        return -1;
    if (p->rank - 1 + ix->rank - b > DG_MAX_RANK)
        FAIL("the result would have more than %d dimensions", DG_MAX_RANK);
    out[0].dtype = in[0].dtype;
    if (!known) { /* a run-time axis (issue 21): the rank only */
        unknown_dims(&out[0].shape, p->rank - 1 + ix->rank - (int)b);
        return 0;
    }
    if (ax < -p->rank || ax >= p->rank)
        FAIL("axis %lld is out of range for rank %d", (long long)ax, p->rank);
    if (ax < 0)
        ax += p->rank;
    if (ax < b)
        FAIL("batch_dims (%lld) must be less than or equal to axis (%lld)",
             (long long)b, (long long)ax);
    dg_shape o;
    memset(&o, 0, sizeof o);
    for (int i = 0; i < ax; i++)
        o.dims[o.rank++] = p->dims[i];
    for (int i = (int)b; i < ix->rank; i++)
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

/* TF's summary ops (DGC_OP_SUMMARY): whatever the inputs, an empty int32
 * vector stands for TF's serialized Summary string. */
int dgc_infer_summary(DGC_INFER_ARGS)
{
    int rc = dgc_infer_rank_of(n, in, n_in, out, msg, msgsz); /* int32 [] */
    out[0].shape.rank = 1; /* dims[0] = 0 */
    return rc;
}

/* The axis of a ConcatV2 / Split / SplitV node (attr, or the input
 * dgc_node_axis_input names) for rank r, made >= 0: 1 known, 0 unknown
 * until run time, -1 error in msg. */
static int node_axis(const dgc_node *n, const dgc_ttype *in, int n_in, int r,
                     int64_t *ax, char *msg, size_t msgsz)
{
    int ai = dgc_node_axis_input(n);
    int known = 1;
    *ax = 0; /* Split's and SplitV's default */
    if (ai >= 0 || dgc_node_attr(n, "axis") || n->op == DGC_OPID_ConcatV2)
        known = scalar_param(n, "axis", in, ai >= 0 ? n_in : 0,
                             ai >= 0 ? ai : 0, ax, msg, msgsz);
    if (known <= 0)
        return known;
    if (*ax < -r || *ax >= r)
        FAIL("axis %lld is out of range for rank %d", (long long)*ax, r);
    if (*ax < 0)
        *ax += r;
    return 1;
}

int dgc_infer_concat(DGC_INFER_ARGS)
{
    int ai = dgc_node_axis_input(n);
    int nv = ai >= 0 ? ai : n_in; /* the values; the axis input last */
    int64_t ax = 0;
    const dg_shape *f = &in[0].shape;
    int known = node_axis(n, in, n_in, f->rank, &ax, msg, msgsz);
    if (known < 0)
        return -1;
    dg_shape o = *f;
    for (int k = 1; k < nv; k++) {
        const dg_shape *s = &in[k].shape;
        if (in[k].dtype != in[0].dtype)
            FAIL("input %d is %s, input 0 is %s", k,
                 dg_dtype_name(in[k].dtype), dg_dtype_name(in[0].dtype));
        if (s->rank != f->rank)
            FAIL("input %d has rank %d, input 0 rank %d", k, s->rank, f->rank);
        for (int d = 0; d < f->rank; d++) {
            if (!known)
                continue; /* ranks checked; dims once the axis is known */
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
    if (!known)
        unknown_dims(&out[0].shape, f->rank);
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
    int nb = 0, ne_ = 0, ns = 0; /* set by vec_param; zero keeps -O3 quiet */
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

/* ---- ShapeN, Unpack, Split, SplitV (variadic outputs) -------------------- */

int dgc_infer_shape_n(DGC_INFER_ARGS)
{
    for (int k = 0; k < n_in; k++)
        if (dgc_infer_shape_of(n, &in[k], 1, &out[k], msg, msgsz))
            return -1;
    return 0;
}

/* The sizes of the `num` pieces of dimension ax (length dim): size_splits
 * (one -1 allowed) or equal parts.  0, or -1 with a reason. */
static int split_sizes(const dgc_node *n, const dgc_ttype *sz, int64_t dim,
                       int num, int64_t *sizes, char *msg, size_t msgsz)
{
    if (!sz) {
        if (dim >= 0 && dim % num != 0)
            FAIL("dimension of size %lld does not split into %d equal parts",
                 (long long)dim, num);
        for (int k = 0; k < num; k++)
            sizes[k] = dim < 0 ? -1 : dim / num;
        return 0;
    }
    int64_t v[DG_MAX_RANK * 8];
    int cnt = dgc_ttype_ints(sz, v, DG_MAX_RANK * 8);
    if (cnt != num)
        FAIL("size_splits has %d elements for num_split %d", cnt, num);
    (void)n;
    int64_t known = 0;
    int unk = -1;
    for (int k = 0; k < num; k++) {
        sizes[k] = sz->value ? v[k] : -1;
        if (sz->value && v[k] == -1) {
            if (unk >= 0)
                FAIL("size_splits has more than one -1");
            unk = k;
        } else if (sz->value) {
            known += v[k];
        }
    }
    if (unk >= 0 && dim >= 0)
        sizes[unk] = dim - known;
    if (sz->value && dim >= 0 && unk < 0 && known != dim)
        FAIL("size_splits add up to %lld, the dimension is %lld",
             (long long)known, (long long)dim);
    return 0;
}

int dgc_infer_split(DGC_INFER_ARGS)
{
    int num = dgc_node_n_out(n);
    const dgc_ttype *x = &in[0];
    int64_t ax = dgc_attr_int(n, "axis", 0);
    if (num < 1)
        FAIL("needs attr num (num_split) >= 1");
    int unpack = n->op == DGC_OPID_Unpack;
    if (!unpack) {
        int known = node_axis(n, in, n_in, x->shape.rank, &ax, msg, msgsz);
        if (known < 0)
            return -1;
        if (!known) {
            for (int k = 0; k < num; k++) {
                out[k].dtype = x->dtype;
                unknown_dims(&out[k].shape, x->shape.rank);
            }
            return 0;
        }
    } else if (ax < -x->shape.rank || ax >= x->shape.rank) {
        FAIL("axis %lld is out of range for rank %d", (long long)ax,
             x->shape.rank);
    }
    if (ax < 0)
        ax += x->shape.rank;
    int64_t sizes[4096];
    if (num > 4096)
        FAIL("too many outputs");
    if (unpack) {
        if (x->shape.dims[ax] >= 0 && x->shape.dims[ax] != num)
            FAIL("dimension %lld has size %lld, num is %d", (long long)ax,
                 (long long)x->shape.dims[ax], num);
    } else if (split_sizes(n, n->op == DGC_OPID_SplitV ? &in[1] : NULL,
                           x->shape.dims[ax],
                           num, sizes, msg, msgsz)) {
        return -1;
    }
    for (int k = 0; k < num; k++) {
        out[k].dtype = x->dtype;
        out[k].shape = x->shape;
        if (unpack) {
            for (int d = (int)ax; d + 1 < x->shape.rank; d++)
                out[k].shape.dims[d] = x->shape.dims[d + 1];
            out[k].shape.rank--;
        } else {
            out[k].shape.dims[ax] = sizes[k];
        }
    }
    return 0;
}

/* ---- Range, DynamicStitch, BroadcastTo, BroadcastGradientArgs,
 *      ConcatOffset ------------------------------------------------------- */

/* Element 0 of a scalar input as a double, when known. */
static int scalar_value(const dgc_ttype *t, double *v)
{
    if (!t->value || t->shape.rank != 0)
        return 0;
    switch (t->dtype) {
    case DG_I32: *v = *(const int32_t *)t->value; return 1;
    case DG_I64: *v = (double)*(const int64_t *)t->value; return 1;
    default: return 0; /* float scalars: host values only for ints */
    }
}

int dgc_infer_range(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    for (int i = 0; i < 3; i++)
        if (in[i].shape.rank != 0 || in[i].dtype != in[0].dtype)
            FAIL("start, limit and delta must be scalars of one dtype");
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    double s, l, d;
    if (!scalar_value(&in[0], &s) || !scalar_value(&in[1], &l) ||
        !scalar_value(&in[2], &d)) {
        out[0].shape.dims[0] = -1;
        return 0;
    }
    if (d == 0)
        FAIL("delta must not be 0");
    double cnt = (l - s) / d;
    int64_t c = cnt <= 0 ? 0 : (int64_t)cnt;
    if ((double)c < cnt)
        c++;
    out[0].shape.dims[0] = c;
    return 0;
}

int dgc_infer_dynamic_stitch(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in % 2 || n_in < 2)
        FAIL("needs N indices and N data inputs");
    int nn = n_in / 2;
    int64_t max = -1;
    int known = 1;
    for (int k = 0; k < nn; k++) {
        const dgc_ttype *ix = &in[k], *dt = &in[nn + k];
        if (!is_int(ix->dtype))
            FAIL("indices must be int32 or int64");
        if (dt->dtype != in[nn].dtype)
            FAIL("data inputs must share one dtype");
        if (dt->shape.rank < ix->shape.rank)
            FAIL("data %d has a lower rank than its indices", k);
        int64_t v[64];
        int c = ix->shape.rank <= 1 ? dgc_ttype_ints(ix, v, 64) : -1;
        if (c < 0 || !ix->value) {
            known = 0;
            continue;
        }
        for (int i = 0; i < c; i++)
            max = v[i] > max ? v[i] : max;
    }
    const dgc_ttype *d0 = &in[nn];
    int ir = in[0].shape.rank;
    out[0].dtype = d0->dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1 + d0->shape.rank - ir;
    out[0].shape.dims[0] = known ? max + 1 : -1;
    for (int d = ir; d < d0->shape.rank; d++)
        out[0].shape.dims[1 + d - ir] = d0->shape.dims[d];
    return 0;
}

int dgc_infer_broadcast_to(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    int64_t v[DG_MAX_RANK];
    int cnt = dgc_ttype_ints(&in[1], v, DG_MAX_RANK);
    if (cnt < 0 || in[1].shape.rank != 1)
        FAIL("shape must be an int32/int64 vector of at most %d elements",
             DG_MAX_RANK);
    const dg_shape *x = &in[0].shape;
    if (cnt < x->rank)
        FAIL("cannot broadcast rank %d to rank %d", x->rank, cnt);
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = cnt;
    for (int i = 0; i < cnt; i++) {
        int xi = i - (cnt - x->rank);
        int64_t xd = xi >= 0 ? x->dims[xi] : 1;
        if (!in[1].value) {
            out[0].shape.dims[i] = xd > 1 ? xd : -1;
            continue;
        }
        if (xd >= 0 && xd != 1 && xd != v[i])
            FAIL("cannot broadcast dimension %d of size %lld to %lld", i,
                 (long long)xd, (long long)v[i]);
        out[0].shape.dims[i] = v[i];
    }
    return 0;
}

int dgc_bcast_grad_args(const int64_t *a, int na, const int64_t *b, int nb,
                        int64_t *ra, int *nra, int64_t *rb, int *nrb)
{
    int r = na > nb ? na : nb;
    *nra = *nrb = 0;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - na), ib = i - (r - nb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1;
        if (da == 1 && db == 1) { /* TF reduces both */
            ra[(*nra)++] = i;
            rb[(*nrb)++] = i;
        } else if (da == 1) {
            ra[(*nra)++] = i;
        } else if (db == 1) {
            rb[(*nrb)++] = i;
        }
    }
    return 0;
}

int dgc_infer_bcast_grad_args(DGC_INFER_ARGS)
{
    (void)n;
    (void)n_in;
    int64_t a[DG_MAX_RANK], b[DG_MAX_RANK], ra[DG_MAX_RANK], rb[DG_MAX_RANK];
    int na = dgc_ttype_ints(&in[0], a, DG_MAX_RANK);
    int nb = dgc_ttype_ints(&in[1], b, DG_MAX_RANK);
    if (na < 0 || nb < 0 || in[0].shape.rank != 1 || in[1].shape.rank != 1 ||
        in[0].dtype != in[1].dtype)
        FAIL("needs two int32/int64 shape vectors of one dtype");
    for (int k = 0; k < 2; k++) {
        out[k].dtype = in[0].dtype;
        memset(&out[k].shape, 0, sizeof out[k].shape);
        out[k].shape.rank = 1;
        out[k].shape.dims[0] = -1;
    }
    if (!in[0].value || !in[1].value)
        return 0;
    int nra, nrb;
    if (dgc_bcast_grad_args(a, na, b, nb, ra, &nra, rb, &nrb))
        FAIL("incompatible shapes");
    out[0].shape.dims[0] = nra;
    out[1].shape.dims[0] = nrb;
    return 0;
}

int dgc_infer_concat_offset(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in < 2 || in[0].shape.rank != 0)
        FAIL("needs a scalar concat_dim and shape vectors");
    for (int k = 1; k < n_in; k++) {
        if (in[k].shape.rank != 1 || !is_int(in[k].dtype))
            FAIL("shape %d must be an int32/int64 vector", k - 1);
        out[k - 1].dtype = in[k].dtype;
        out[k - 1].shape = in[k].shape;
    }
    return 0;
}

/* ---- Pad, Select, LogicalAnd/Or/Not -------------------------------------- */

int dgc_infer_pad(DGC_INFER_ARGS)
{
    (void)n;
    const dg_shape *x = &in[0].shape;
    const dgc_ttype *p = &in[1];
    if (!is_int(p->dtype) || p->shape.rank != 2 || p->shape.dims[1] != 2 ||
        (p->shape.dims[0] >= 0 && p->shape.dims[0] != x->rank))
        FAIL("paddings must be an int32/int64 [%d, 2] matrix", x->rank);
    if (n_in > 2 && (in[2].shape.rank != 0 || in[2].dtype != in[0].dtype))
        FAIL("constant_values must be a scalar of the input's dtype");
    out[0].dtype = in[0].dtype;
    out[0].shape = *x;
    for (int d = 0; d < x->rank; d++) {
        if (!p->value || x->dims[d] < 0) {
            out[0].shape.dims[d] = -1;
            continue;
        }
        int64_t a = p->dtype == DG_I32 ? ((const int32_t *)p->value)[2 * d]
                                       : ((const int64_t *)p->value)[2 * d];
        int64_t b = p->dtype == DG_I32
                        ? ((const int32_t *)p->value)[2 * d + 1]
                        : ((const int64_t *)p->value)[2 * d + 1];
        if (a < 0 || b < 0)
            FAIL("paddings must not be negative");
        out[0].shape.dims[d] = x->dims[d] + a + b;
    }
    return 0;
}

int dgc_infer_select(DGC_INFER_ARGS)
{
    (void)n_in;
    if (in[0].dtype != DG_BOOL)
        FAIL("the condition must be bool, got %s", dg_dtype_name(in[0].dtype));
    if (in[1].dtype != in[2].dtype)
        FAIL("dtype mismatch: %s vs %s", dg_dtype_name(in[1].dtype),
             dg_dtype_name(in[2].dtype));
    dgc_ttype te;
    if (dgc_infer_binary(n, &in[1], 2, &te, msg, msgsz))
        return -1;
    if (n->op == DGC_OPID_Select && in[0].shape.rank == 1 &&
        te.shape.rank > 1) { /* TF1 Select: a condition per row */
        out[0] = te;
        return 0;
    }
    dgc_ttype pair[2] = {in[0], te};
    pair[0].dtype = te.dtype;
    if (dgc_infer_binary(n, pair, 2, out, msg, msgsz))
        return -1;
    return 0;
}

int dgc_infer_logical(DGC_INFER_ARGS)
{
    for (int i = 0; i < n_in; i++)
        if (in[i].dtype != DG_BOOL)
            FAIL("needs bool inputs, got %s", dg_dtype_name(in[i].dtype));
    if (n_in == 1) {
        out[0] = in[0];
        return 0;
    }
    return dgc_infer_binary(n, in, n_in, out, msg, msgsz);
}
