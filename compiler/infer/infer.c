/*
 * infer.c -- shape and dtype inference for the ops of SPEC's appendix, with
 * TensorFlow semantics: NumPy broadcasting, matching dtypes for binary ops,
 * MatMul transposes, reductions with axis/keepdims, Reshape with one -1,
 * Transpose, Cast, softmax cross entropy, ArgMax, Equal, Assign*.  Dims of
 * -1 are unknown at compile time and stay -1 unless the other side decides.
 */
#include "infer.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

static void shape_str(const dg_shape *s, char *buf, size_t sz)
{
    size_t o = 0;
    o += (size_t)snprintf(buf, sz, "[");
    for (int i = 0; i < s->rank && o < sz; i++) {
        if (s->dims[i] < 0)
            o += (size_t)snprintf(buf + o, sz - o, "%s?", i ? "," : "");
        else
            o += (size_t)snprintf(buf + o, sz - o, "%s%lld", i ? "," : "",
                                  (long long)s->dims[i]);
    }
    if (o < sz)
        snprintf(buf + o, sz - o, "]");
}

static const char *opname(const dgc_node *n)
{
    return dgc_op_name(n->op);
}

static int is_float(dg_dtype t)
{
    return t == DG_F32 || t == DG_F64;
}

static int is_int(dg_dtype t)
{
    return t == DG_I32 || t == DG_I64;
}

static int need_inputs(const dgc_node *n, int n_in, int want, char *msg,
                       size_t msgsz)
{
    if (n_in < want)
        FAIL("%s needs %d input%s, got %d", opname(n), want,
             want == 1 ? "" : "s", n_in);
    return 0;
}

static int same_dtype(dg_dtype a, dg_dtype b, char *msg, size_t msgsz)
{
    if (a != b)
        FAIL("dtype mismatch: %s vs %s", dg_dtype_name(a), dg_dtype_name(b));
    return 0;
}

/* Merge two dims that must be equal: -1 yields to a known dim. */
static int merge_dim(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0) {
        *out = b;
        return 0;
    }
    if (b < 0 || a == b) {
        *out = a;
        return 0;
    }
    return -1;
}

static int dims_mismatch(const dgc_node *n, int64_t a, int64_t b,
                         const dg_shape *sa, const dg_shape *sb, char *msg,
                         size_t msgsz)
{
    char x[200], y[200];
    shape_str(sa, x, sizeof x);
    shape_str(sb, y, sizeof y);
    FAIL("Dimensions must be equal, but are %lld and %lld for '%s' (op: '%s') "
         "with input shapes: %s, %s", (long long)a, (long long)b, n->name,
         opname(n), x, y);
}

/* Shapes that must be equal (dims merge). */
static int same_shape(const dgc_node *n, const dg_shape *a, const dg_shape *b,
                      dg_shape *out, char *msg, size_t msgsz)
{
    if (a->rank != b->rank) {
        char x[200], y[200];
        shape_str(a, x, sizeof x);
        shape_str(b, y, sizeof y);
        FAIL("Shapes must be equal rank, but are %d and %d for '%s' (op: '%s') "
             "with input shapes: %s, %s", a->rank, b->rank, n->name, opname(n),
             x, y);
    }
    dg_shape r = *a;
    for (int i = 0; i < a->rank; i++)
        if (merge_dim(a->dims[i], b->dims[i], &r.dims[i]))
            return dims_mismatch(n, a->dims[i], b->dims[i], a, b, msg, msgsz);
    *out = r;
    return 0;
}

/* NumPy broadcasting of a and b into out. */
static int broadcast(const dgc_node *n, const dg_shape *a, const dg_shape *b,
                     dg_shape *out, char *msg, size_t msgsz)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    dg_shape o;
    memset(&o, 0, sizeof o);
    o.rank = r;
    for (int i = 0; i < r; i++) {
        int ia = a->rank - r + i, ib = b->rank - r + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1;
        int64_t db = ib >= 0 ? b->dims[ib] : 1;
        int64_t d;
        if (da == 1)
            d = db;
        else if (db == 1)
            d = da;
        else if (da < 0)
            d = db;
        else if (db < 0 || da == db)
            d = da;
        else
            return dims_mismatch(n, da, db, a, b, msg, msgsz);
        o.dims[i] = d;
    }
    *out = o;
    return 0;
}

static int attr_dtype(const dgc_node *n, const char *key, int dflt)
{
    const dgc_attr *a = dgc_node_attr(n, key);
    return a ? (int)a->i : dflt;
}

static int attr_shape(const dgc_node *n, dg_shape *s)
{
    const dgc_attr *a = dgc_node_attr(n, "shape");
    if (!a || (a->kind != DGC_A_SHAPE && a->kind != DGC_A_INTS) ||
        a->n > DG_MAX_RANK)
        return 0;
    memset(s, 0, sizeof *s);
    s->rank = a->n;
    for (int i = 0; i < a->n; i++)
        s->dims[i] = a->ints[i];
    return 1;
}

int dgc_infer_const(DGC_INFER_ARGS)
{
    (void)in; (void)n_in;
    const dgc_attr *a = dgc_node_attr(n, "value");
    if (!a || !a->tensor)
        FAIL("Const needs attr 'value'");
    out[0].dtype = a->tensor->dtype;
    out[0].shape = a->tensor->shape;
    return 0;
}

int dgc_infer_variable(DGC_INFER_ARGS)
{
    (void)in; (void)n_in;
    const dgc_attr *init = dgc_node_attr(n, "init");
    const dg_tensor *iv = (init && init->kind == DGC_A_INIT &&
                           init->init.kind == DGC_INIT_VALUE) ? init->init.value
                                                              : NULL;
    out[0].dtype = (dg_dtype)attr_dtype(n, "dtype", iv ? (int)iv->dtype : DG_F32);
    if (!attr_shape(n, &out[0].shape)) {
        if (!iv)
            FAIL("Variable needs a shape (attr 'shape' or a literal init)");
        out[0].shape = iv->shape;
    }
    if (dg_shape_numel(&out[0].shape) < 0)
        FAIL("Variable shape must be fully known");
    return 0;
}

int dgc_infer_placeholder(DGC_INFER_ARGS)
{
    (void)in; (void)n_in;
    out[0].dtype = (dg_dtype)attr_dtype(n, "dtype", DG_F32);
    if (!attr_shape(n, &out[0].shape))
        FAIL("Placeholder needs attr 'shape' (use -1 for unknown dimensions)");
    return 0;
}

/* PlaceholderWithDefault: as TF's shape function, its `shape` attr
 * (partial; the input's shape where the attr is absent or of unknown
 * rank), which its input must fit (dims merge); the dtype is the input's
 * (attr `dtype` must agree).  The output keeps the attr's -1 dims even
 * where the default's are known: a fed value may have any size there.
 * At run time the unfed node is its input's value as is (the executor
 * gives it without a kernel or a run-time type). */
int dgc_infer_placeholder_default(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    const dgc_attr *d = dgc_node_attr(n, "dtype");
    if (d && (dg_dtype)d->i != in[0].dtype)
        FAIL("attr 'dtype' is %s but the default input is %s",
             dg_dtype_name((dg_dtype)d->i), dg_dtype_name(in[0].dtype));
    out[0].dtype = in[0].dtype;
    dg_shape s, unused;
    if (!attr_shape(n, &s)) {
        out[0].shape = in[0].shape;
        return 0;
    }
    if (same_shape(n, &in[0].shape, &s, &unused, msg, msgsz))
        return -1;
    out[0].shape = s;
    return 0;
}

/* The sample shape of a random op: attrs.shape, or its shape input
 * `sh` (a run-time vector: -1 dims until its values are known). */
static int random_shape(const dgc_node *n, const dgc_ttype *sh, dg_shape *s,
                        char *msg, size_t msgsz)
{
    if (!sh) {
        if (!attr_shape(n, s))
            FAIL("%s needs attr 'shape' or a shape input", opname(n));
        if (dg_shape_numel(s) < 0)
            FAIL("%s shape must be fully known", opname(n));
        return 0;
    }
    int64_t v[DG_MAX_RANK];
    int cnt = dgc_ttype_ints(sh, v, DG_MAX_RANK);
    if (cnt == -2)
        FAIL("the shape input has more than %d elements", DG_MAX_RANK);
    if (cnt < 0 || sh->shape.rank != 1)
        FAIL("the shape input must be an int32/int64 vector of known length");
    memset(s, 0, sizeof *s);
    s->rank = cnt;
    for (int i = 0; i < cnt; i++) {
        if (sh->value && v[i] < 0)
            FAIL("shape[%d] = %lld is negative", i, (long long)v[i]);
        s->dims[i] = sh->value ? v[i] : -1;
    }
    return 0;
}

int dgc_infer_random(DGC_INFER_ARGS)
{
    out[0].dtype = (dg_dtype)attr_dtype(n, "dtype", DG_F32);
    if (!is_float(out[0].dtype))
        FAIL("%s needs a float dtype, got %s", opname(n),
             dg_dtype_name(out[0].dtype));
    return random_shape(n, n_in > 0 ? &in[0] : NULL, &out[0].shape, msg,
                        msgsz);
}

int dgc_infer_random_int(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 3, msg, msgsz))
        return -1;
    for (int k = 1; k < 3; k++) {
        if (in[k].shape.rank != 0)
            FAIL("%s must be a scalar", k == 1 ? "minval" : "maxval");
        if (in[k].dtype != DG_I32 && in[k].dtype != DG_I64)
            FAIL("%s must be int32 or int64, got %s",
                 k == 1 ? "minval" : "maxval", dg_dtype_name(in[k].dtype));
    }
    if (in[1].dtype != in[2].dtype)
        FAIL("minval is %s, maxval %s", dg_dtype_name(in[1].dtype),
             dg_dtype_name(in[2].dtype));
    int dt = attr_dtype(n, "dtype", (int)in[1].dtype);
    if (dt != (int)in[1].dtype)
        FAIL("minval and maxval are %s, the output dtype %s",
             dg_dtype_name(in[1].dtype), dg_dtype_name((dg_dtype)dt));
    out[0].dtype = (dg_dtype)dt;
    return random_shape(n, &in[0], &out[0].shape, msg, msgsz);
}

int dgc_infer_invert_permutation(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    if (!is_int(in[0].dtype) || in[0].shape.rank != 1)
        FAIL("x must be an int32/int64 vector");
    out[0] = in[0];
    out[0].value = NULL;
    return 0;
}

int dgc_infer_multinomial(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 2, msg, msgsz))
        return -1;
    if (!is_float(in[0].dtype))
        FAIL("logits must be float, got %s", dg_dtype_name(in[0].dtype));
    if (in[0].shape.rank != 2)
        FAIL("logits must be 2-D [batch_size, num_classes], got rank %d",
             in[0].shape.rank);
    if (in[0].shape.dims[1] == 0)
        FAIL("num_classes should be positive, got 0");
    int64_t v[1];
    if (in[1].shape.rank != 0 || dgc_ttype_ints(&in[1], v, 1) != 1)
        FAIL("num_samples must be an int32 scalar");
    if (in[1].value && v[0] < 0)
        FAIL("num_samples should be nonnegative, got %lld", (long long)v[0]);
    int dt = attr_dtype(n, "output_dtype", DG_I64);
    if (dt != DG_I32 && dt != DG_I64)
        FAIL("output_dtype must be int32 or int64");
    out[0].dtype = (dg_dtype)dt;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 2;
    out[0].shape.dims[0] = in[0].shape.dims[0];
    out[0].shape.dims[1] = in[1].value ? v[0] : -1;
    return 0;
}

int dgc_infer_unary(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    out[0] = in[0];
    return 0;
}

int dgc_infer_unary_float(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    if (!is_float(in[0].dtype))
        FAIL("%s needs a float input, got %s", opname(n),
             dg_dtype_name(in[0].dtype));
    if (n->op == DGC_OPID_Softmax && in[0].shape.rank < 1)
        FAIL("Softmax needs logits of rank >= 1, got a scalar");
    out[0] = in[0];
    return 0;
}

int dgc_infer_layernorm(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 3, msg, msgsz))
        return -1;
    const dg_shape *x = &in[0].shape;
    if (!is_float(in[0].dtype) || x->rank < 1)
        FAIL("_LayerNorm needs a float input of rank >= 1, got %s of rank %d",
             dg_dtype_name(in[0].dtype), x->rank);
    int64_t c = x->dims[x->rank - 1];
    for (int i = 1; i < 3; i++) {
        int64_t m = dg_shape_numel(&in[i].shape);
        if (in[i].dtype != in[0].dtype)
            FAIL("%s is %s, x is %s", i == 1 ? "gamma" : "beta",
                 dg_dtype_name(in[i].dtype), dg_dtype_name(in[0].dtype));
        if (c >= 0 && m >= 0 && m != c)
            FAIL("%s has %lld elements, x's last dimension %lld",
                 i == 1 ? "gamma" : "beta", (long long)m, (long long)c);
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = *x;
    return 0;
}

int dgc_infer_binary(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 2, msg, msgsz) ||
        same_dtype(in[0].dtype, in[1].dtype, msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    return broadcast(n, &in[0].shape, &in[1].shape, &out[0].shape, msg, msgsz);
}

int dgc_infer_addn(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    dgc_ttype t = in[0];
    for (int i = 1; i < n_in; i++)
        if (same_dtype(t.dtype, in[i].dtype, msg, msgsz) ||
            same_shape(n, &t.shape, &in[i].shape, &t.shape, msg, msgsz))
            return -1;
    out[0] = t;
    return 0;
}

int dgc_infer_matmul(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 2, msg, msgsz) ||
        same_dtype(in[0].dtype, in[1].dtype, msg, msgsz))
        return -1;
    const dg_shape *a = &in[0].shape, *b = &in[1].shape;
    if (a->rank != 2 || b->rank != 2) {
        char x[200], y[200];
        shape_str(a, x, sizeof x);
        shape_str(b, y, sizeof y);
        FAIL("Shape must be rank 2 but is rank %d for '%s' (op: 'MatMul') "
             "with input shapes: %s, %s", a->rank != 2 ? a->rank : b->rank,
             n->name, x, y);
    }
    int ta = dgc_attr_bool(n, "transpose_a", 0);
    int tb = dgc_attr_bool(n, "transpose_b", 0);
    int64_t m = a->dims[ta ? 1 : 0], ka = a->dims[ta ? 0 : 1];
    int64_t kb = b->dims[tb ? 1 : 0], nn = b->dims[tb ? 0 : 1];
    int64_t k;
    if (merge_dim(ka, kb, &k))
        return dims_mismatch(n, ka, kb, a, b, msg, msgsz);
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 2;
    out[0].shape.dims[0] = m;
    out[0].shape.dims[1] = nn;
    return 0;
}

int dgc_infer_biasadd(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 2, msg, msgsz) ||
        same_dtype(in[0].dtype, in[1].dtype, msg, msgsz))
        return -1;
    const dg_shape *x = &in[0].shape, *b = &in[1].shape;
    if (x->rank < 2)
        FAIL("Shape must be at least rank 2 but is rank %d (BiasAdd value)",
             x->rank);
    if (b->rank != 1)
        FAIL("Shape must be rank 1 but is rank %d (BiasAdd bias)", b->rank);
    out[0] = in[0];
    int64_t d;
    if (merge_dim(x->dims[x->rank - 1], b->dims[0], &d))
        return dims_mismatch(n, x->dims[x->rank - 1], b->dims[0], x, b, msg,
                             msgsz);
    out[0].shape.dims[x->rank - 1] = d;
    return 0;
}

/* Axis attr into a mask over rank r; absent = all.  -1 on a bad axis. */
static int axis_mask(const dgc_node *n, const char *key, int r, int *mask,
                     int all_if_absent, char *msg, size_t msgsz)
{
    const dgc_attr *a = dgc_node_attr(n, key);
    for (int i = 0; i < r; i++)
        mask[i] = (!a && all_if_absent) ? 1 : 0;
    if (!a)
        return 0;
    int cnt = a->kind == DGC_A_INTS ? a->n : 1;
    for (int i = 0; i < cnt; i++) {
        int64_t ax = a->kind == DGC_A_INTS ? a->ints[i] : a->i;
        if (ax < -r || ax >= r)
            FAIL("axis %lld is out of range for a tensor of rank %d",
                 (long long)ax, r);
        if (mask[ax < 0 ? ax + r : ax] && a->kind == DGC_A_INTS)
            FAIL("Invalid reduction arguments: Axes contains duplicate "
                 "dimension: %lld", (long long)(ax < 0 ? ax + r : ax));
        mask[ax < 0 ? ax + r : ax] = 1;
    }
    return 0;
}

/* Reduction axes given as input 1 (TF's reduction_indices computed at run
 * time, issue 21): their values, or, before they are known, the output's
 * rank from keep_dims or from the number of axes. */
static int reduce_runtime_axes(const dgc_node *n, const dgc_ttype *in,
                               int *mask, dgc_ttype *out, char *msg,
                               size_t msgsz)
{
    const dg_shape *x = &in[0].shape;
    int r = x->rank;
    int64_t v[64];
    int cnt = in[1].shape.rank > 1 ? -1 : dgc_ttype_ints(&in[1], v, 64);
    if (cnt == -2)
        FAIL("reduction_indices has more than 64 elements");
    if (!is_int(in[1].dtype) || in[1].shape.rank > 1)
        FAIL("reduction_indices must be an int32/int64 scalar or vector");
    int keep = dgc_attr_bool(n, "keepdims", 0);
    for (int i = 0; i < r; i++)
        mask[i] = 0;
    if (cnt >= 0 && in[1].value) {
        for (int i = 0; i < cnt; i++) {
            int64_t ax = v[i];
            if (ax < -r || ax >= r)
                FAIL("axis %lld is out of range for a tensor of rank %d",
                     (long long)ax, r);
            if (mask[ax < 0 ? ax + r : ax])
                FAIL("Invalid reduction arguments: Axes contains duplicate "
                     "dimension: %lld", (long long)(ax < 0 ? ax + r : ax));
            mask[ax < 0 ? ax + r : ax] = 1;
        }
        return 1; /* known: the caller shapes the output */
    }
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    if (keep) { /* each dim stays or becomes 1 */
        out[0].shape.rank = r;
        for (int i = 0; i < r; i++)
            out[0].shape.dims[i] = x->dims[i] == 1 ? 1 : -1;
        return 0;
    }
    if (cnt < 0)
        FAIL("the number of reduction axes is known only at run time and "
             "keep_dims is false: dgrun needs the output's rank");
    if (cnt > r)
        FAIL("%d reduction axes for a tensor of rank %d", cnt, r);
    out[0].shape.rank = r - cnt; /* at least: duplicates are an error */
    for (int i = 0; i < r - cnt; i++)
        out[0].shape.dims[i] = -1;
    return 0;
}

int dgc_infer_reduce(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    const dg_shape *x = &in[0].shape;
    int mask[DG_MAX_RANK];
    if (n_in >= 2) {
        int rc = reduce_runtime_axes(n, in, mask, out, msg, msgsz);
        if (rc <= 0)
            return rc;
    } else if (axis_mask(n, "axis", x->rank, mask, 1, msg, msgsz)) {
        return -1;
    }
    int keep = dgc_attr_bool(n, "keepdims", 0);
    dg_shape o;
    memset(&o, 0, sizeof o);
    for (int i = 0; i < x->rank; i++) {
        if (!mask[i])
            o.dims[o.rank++] = x->dims[i];
        else if (keep)
            o.dims[o.rank++] = 1;
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = o;
    return 0;
}

int dgc_infer_reshape(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    dg_shape s;
    if (n_in >= 2) { /* TF's shape input: its value, or unknown dims */
        int64_t v[DG_MAX_RANK];
        int cnt = dgc_ttype_ints(&in[1], v, DG_MAX_RANK);
        if (cnt == -2)
            FAIL("the shape input has more than %d elements", DG_MAX_RANK);
        if (cnt < 0 || in[1].shape.rank != 1)
            FAIL("the shape input must be an int32/int64 vector of known "
                 "length");
        memset(&s, 0, sizeof s);
        s.rank = cnt;
        for (int i = 0; i < cnt; i++)
            s.dims[i] = in[1].value ? v[i] : -1;
        if (!in[1].value) {
            out[0].dtype = in[0].dtype;
            out[0].shape = s;
            return 0;
        }
    } else if (!attr_shape(n, &s)) {
        FAIL("Reshape needs attr 'shape' or a shape input");
    }
    int unknown = -1;
    int64_t known = 1;
    for (int i = 0; i < s.rank; i++) {
        if (s.dims[i] == -1) {
            if (unknown >= 0)
                FAIL("only one dimension of the new shape can be -1");
            unknown = i;
        } else if (s.dims[i] < -1) {
            FAIL("invalid dimension %lld in the new shape",
                 (long long)s.dims[i]);
        } else {
            known *= s.dims[i];
        }
    }
    int64_t have = dg_shape_numel(&in[0].shape);
    char x[200], y[200];
    shape_str(&in[0].shape, x, sizeof x);
    shape_str(&s, y, sizeof y);
    if (unknown >= 0) {
        if (have >= 0) {
            if (known == 0 ? have != 0 : have % known != 0)
                FAIL("Cannot reshape a tensor with %lld elements to shape %s",
                     (long long)have, y);
            s.dims[unknown] = known == 0 ? 0 : have / known;
        }
    } else if (have >= 0 && have != known) {
        FAIL("Cannot reshape a tensor with %lld elements to shape %s (%lld "
             "elements)", (long long)have, y, (long long)known);
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = s;
    return 0;
}

int dgc_infer_transpose(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    const dg_shape *x = &in[0].shape;
    int r = x->rank;
    int64_t perm[DG_MAX_RANK];
    const dgc_attr *a = dgc_node_attr(n, "perm");
    if (!a && n_in >= 2) { /* TF's perm input (issue 21) */
        int64_t v[DG_MAX_RANK];
        int cnt = dgc_ttype_ints(&in[1], v, DG_MAX_RANK);
        if (cnt == -2 || (cnt >= 0 && cnt != r))
            FAIL("perm has %d entries but the input has rank %d", cnt, r);
        if (cnt < 0 || in[1].shape.rank != 1)
            FAIL("perm must be an int32/int64 vector of known length");
        out[0].dtype = in[0].dtype;
        out[0].shape = *x;
        int seen[DG_MAX_RANK] = {0};
        for (int i = 0; i < r; i++) {
            if (!in[1].value) { /* known at run time */
                out[0].shape.dims[i] = -1;
                continue;
            }
            int64_t p = v[i] < 0 ? v[i] + r : v[i];
            if (p < 0 || p >= r || seen[p])
                FAIL("perm is not a permutation of 0..%d", r - 1);
            seen[p] = 1;
            out[0].shape.dims[i] = x->dims[p];
        }
        return 0;
    }
    if (a) {
        int cnt = a->kind == DGC_A_INTS ? a->n : 1;
        if (cnt != r)
            FAIL("perm has %d entries but the input has rank %d", cnt, r);
        int seen[DG_MAX_RANK] = {0};
        for (int i = 0; i < r; i++) {
            int64_t p = a->kind == DGC_A_INTS ? a->ints[i] : a->i;
            if (p < 0 || p >= r || seen[p])
                FAIL("perm is not a permutation of 0..%d", r - 1);
            seen[p] = 1;
            perm[i] = p;
        }
    } else {
        for (int i = 0; i < r; i++)
            perm[i] = r - 1 - i;
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = *x;
    for (int i = 0; i < r; i++)
        out[0].shape.dims[i] = x->dims[perm[i]];
    return 0;
}

int dgc_infer_cast(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    const dgc_attr *a = dgc_node_attr(n, "dtype");
    if (!a)
        FAIL("Cast needs attr 'dtype'");
    out[0].dtype = (dg_dtype)a->i;
    out[0].shape = in[0].shape;
    return 0;
}

static int logits_2d(const dgc_node *n, const dgc_ttype *l, char *msg,
                     size_t msgsz)
{
    if (!is_float(l->dtype))
        FAIL("logits must be float, got %s", dg_dtype_name(l->dtype));
    if (l->shape.rank != 2) {
        char x[200];
        shape_str(&l->shape, x, sizeof x);
        FAIL("logits must be rank 2 [batch, classes], got %s for '%s'", x,
             n->name);
    }
    return 0;
}

int dgc_infer_xent(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 2, msg, msgsz) || logits_2d(n, &in[0], msg, msgsz) ||
        same_dtype(in[0].dtype, in[1].dtype, msg, msgsz))
        return -1;
    dg_shape s;
    if (same_shape(n, &in[0].shape, &in[1].shape, &s, msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = s.dims[0];
    out[1].dtype = in[0].dtype;
    out[1].shape = s;
    return 0;
}

int dgc_infer_sparse_xent(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 2, msg, msgsz) || logits_2d(n, &in[0], msg, msgsz))
        return -1;
    if (in[1].dtype != DG_I32 && in[1].dtype != DG_I64)
        FAIL("labels must be int32 or int64, got %s",
             dg_dtype_name(in[1].dtype));
    if (in[1].shape.rank != 1) {
        char x[200], y[200];
        shape_str(&in[0].shape, x, sizeof x);
        shape_str(&in[1].shape, y, sizeof y);
        FAIL("labels must be rank 1 [batch], got logits %s and labels %s", x,
             y);
    }
    int64_t b;
    if (merge_dim(in[0].shape.dims[0], in[1].shape.dims[0], &b))
        return dims_mismatch(n, in[0].shape.dims[0], in[1].shape.dims[0],
                             &in[0].shape, &in[1].shape, msg, msgsz);
    out[0].dtype = in[0].dtype;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    out[0].shape.rank = 1;
    out[0].shape.dims[0] = b;
    out[1].dtype = in[0].dtype;
    out[1].shape = in[0].shape;
    out[1].shape.dims[0] = b;
    return 0;
}

int dgc_infer_argmax(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 1, msg, msgsz))
        return -1;
    const dg_shape *x = &in[0].shape;
    if (x->rank < 1)
        FAIL("ArgMax needs an input of rank >= 1");
    const dgc_attr *axa = dgc_node_attr(n, "axis");
    if (axa && axa->kind == DGC_A_INTS && axa->n != 1)
        FAIL("axis must be a single integer (TF: dim must be a scalar)");
    int64_t ax = dgc_attr_int(n, "axis", 0);
    if (ax < -x->rank || ax >= x->rank)
        FAIL("axis %lld is out of range for a tensor of rank %d",
             (long long)ax, x->rank);
    if (ax < 0)
        ax += x->rank;
    int ot = attr_dtype(n, "output_type", DG_I64);
    if (ot != DG_I32 && ot != DG_I64)
        FAIL("output_type must be int32 or int64");
    out[0].dtype = (dg_dtype)ot;
    memset(&out[0].shape, 0, sizeof out[0].shape);
    for (int i = 0; i < x->rank; i++)
        if (i != ax)
            out[0].shape.dims[out[0].shape.rank++] = x->dims[i];
    return 0;
}

int dgc_infer_equal(DGC_INFER_ARGS)
{
    if (dgc_infer_binary(n, in, n_in, out, msg, msgsz))
        return -1;
    out[0].dtype = DG_BOOL;
    return 0;
}

int dgc_infer_assign(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 2, msg, msgsz) ||
        same_dtype(in[0].dtype, in[1].dtype, msg, msgsz))
        return -1;
    /* Assign with validate_shape=false takes the value's shape (TF) */
    int validate = dgc_attr_bool(n, "validate_shape", 1) ||
                   n->op != DGC_OPID_Assign;
    dg_shape s = in[1].shape;
    if (validate && same_shape(n, &in[0].shape, &in[1].shape, &s, msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    out[0].shape = s;
    return 0;
}

int dgc_infer_apply_gd(DGC_INFER_ARGS)
{
    if (need_inputs(n, n_in, 3, msg, msgsz) ||
        same_dtype(in[0].dtype, in[1].dtype, msg, msgsz) ||
        same_dtype(in[0].dtype, in[2].dtype, msg, msgsz))
        return -1;
    if (in[1].shape.rank != 0)
        FAIL("learning rate must be a scalar");
    dg_shape s;
    if (same_shape(n, &in[0].shape, &in[2].shape, &s, msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    out[0].shape = s;
    return 0;
}

int dgc_infer_noop(DGC_INFER_ARGS)
{
    (void)n; (void)in; (void)n_in; (void)out; (void)msg; (void)msgsz;
    return 0;
}

/* _FusedMatMul (made by the fusion pass, passes/fuse.c): MatMul, then
 * BiasAdd of its result. */
int dgc_infer_fused_matmul(const dgc_node *n, const dgc_ttype *in, int n_in,
                           dgc_ttype *out, char *msg, size_t msgsz)
{
    if (n_in != 3) {
        snprintf(msg, msgsz, "expects 3 inputs (a, b, bias), got %d", n_in);
        return -1;
    }
    dgc_ttype mm, pair[2];
    if (dgc_infer_matmul(n, in, 2, &mm, msg, msgsz))
        return -1;
    pair[0] = mm;
    pair[1] = in[2];
    return dgc_infer_biasadd(n, pair, 2, out, msg, msgsz);
}

/* Shared with infer_tf.c (infer.h). */
int dgc_ttype_ints(const dgc_ttype *t, int64_t *v, int max)
{
    int64_t n = dg_shape_numel(&t->shape);
    if (n < 0 || !(t->dtype == DG_I32 || t->dtype == DG_I64) ||
        t->shape.rank > 1)
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
