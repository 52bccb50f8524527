/*
 * load_graphdef_attr.c -- the pieces a GraphDef node carries besides its
 * name, op and inputs: AttrValue maps (types, bools, ints, strings, shapes,
 * tensors, lists), TensorProto literals and `_class` colocation, read
 * through the value view (gview.h: proto3 JSON or binary) and turned into
 * dgrun attributes.
 */
#include "load_graphdef.h"
#include "ops.h"
#include "dg_alloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dgc_gd_dtype(dgc_gv x, dg_dtype *out, const char **what)
{
    static const struct { const char *name; int num; dg_dtype t; } map[] = {
        {"DT_FLOAT", 1, DG_F32}, {"DT_DOUBLE", 2, DG_F64},
        {"DT_INT32", 3, DG_I32}, {"DT_INT64", 9, DG_I64},
        {"DT_BOOL", 10, DG_BOOL}};
    *what = "?";
    if (dgc_gv_is_string(x)) {
        *what = dgc_gv_str(x);
        size_t l = strlen(dgc_gv_str(x));
        if (l > 4 && strcmp(dgc_gv_str(x) + l - 4, "_REF") == 0)
            l -= 4;
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (strlen(map[i].name) == l &&
                strncmp(map[i].name, dgc_gv_str(x), l) == 0) {
                *out = map[i].t;
                return 0;
            }
        return -1;
    }
    if (dgc_gv_is_number(x)) {
        /* enum values are small integers; check the range before the cast
         * (fuzzing found -9223372036854775809 here: the cast was UB) */
        double d = dgc_gv_num(x);
        *what = "a numeric DataType";
        if (!(d >= 0 && d < 1000) || d != (double)(int)d)
            return -1;
        int v = (int)d;
        if (v > 100)
            v -= 100; /* reference types */
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (map[i].num == v) {
                *out = map[i].t;
                return 0;
            }
        *what = "a numeric DataType";
        return -1;
    }
    *what = "no DataType";
    return -1;
}

int dgc_gd_shape(const dgc_jdoc *doc, dgc_gv x, dg_shape *s,
                 char *msg, size_t msgsz)
{
    memset(s, 0, sizeof *s);
    if (dgc_gv_ok(x) && !dgc_gv_is_object(x)) {
        snprintf(msg, msgsz, "a TensorShapeProto must be an object, got %s",
                 dgc_gv_kind(x));
        return -1;
    }
    if (dgc_gv_is_true(dgc_gv_field(x, "unknownRank", "unknown_rank")))
        return 1;
    dgc_gv dims = dgc_gv_field(x, "dim", NULL);
    if (dgc_gv_ok(dims) && !dgc_gv_is_array(dims)) {
        snprintf(msg, msgsz, "'dim' must be a list, got %s",
                 dgc_gv_kind(dims));
        return -1;
    }
    for (dgc_gv d = dgc_gv_first(dims); dgc_gv_ok(d); d = dgc_gv_next(d)) {
        if (s->rank == DG_MAX_RANK) {
            snprintf(msg, msgsz, "more than %d dimensions", DG_MAX_RANK);
            return -1;
        }
        dgc_gv sz = dgc_gv_field(d, "size", NULL);
        int64_t v = 0; /* proto3 omits a zero size */
        if (!dgc_gv_is_object(d) ||
            (dgc_gv_ok(sz) && dgc_gv_i64(doc, sz, &v)) || v < -1) {
            snprintf(msg, msgsz, "malformed dimension (want {\"size\": "
                     "\"<int>\"})");
            return -1;
        }
        s->dims[s->rank++] = v;
    }
    return 0;
}

/* Store value k of a *Val list into element i of t. */
static int put_val(const dgc_jdoc *doc, dgc_gv x, dg_tensor *t,
                   int64_t i, char *msg, size_t msgsz)
{
    double d;
    int64_t v;
    switch (t->dtype) {
    case DG_F32:
    case DG_F64:
        if (dgc_gv_f64(x, &d))
            break;
        if (t->dtype == DG_F32)
            ((float *)t->data)[i] = (float)d;
        else
            ((double *)t->data)[i] = d;
        return 0;
    case DG_I32:
    case DG_I64:
        if (dgc_gv_i64(doc, x, &v))
            break;
        if (t->dtype == DG_I32) {
            if (v > INT32_MAX || v < INT32_MIN) {
                snprintf(msg, msgsz, "value %lld overflows int32",
                         (long long)v);
                return -1;
            }
            ((int32_t *)t->data)[i] = (int32_t)v;
        } else {
            ((int64_t *)t->data)[i] = v;
        }
        return 0;
    case DG_BOOL:
        if (!dgc_gv_is_bool(x))
            break;
        ((uint8_t *)t->data)[i] = dgc_gv_is_true(x) ? 1 : 0;
        return 0;
    default:
        break;
    }
    snprintf(msg, msgsz, "bad element (%s) for dtype %s", dgc_gv_kind(x),
             dg_dtype_name(t->dtype));
    return -1;
}

/* The bytes of tensorContent (little-endian) into t: a binary file's
 * copied once from the protobuf buffer, JSON's decoded from base64. */
static int put_content(dgc_gv c, dg_tensor *t, char *msg, size_t msgsz)
{
    const unsigned char *b;
    unsigned char *own;
    size_t n;
    if (!dgc_gv_is_string(c)) {
        snprintf(msg, msgsz, "tensorContent must be a base64 string");
        return -1;
    }
    int rc = dgc_gv_bytes(c, &b, &n, &own);
    if (rc == -2)
        return -2;
    if (rc) {
        snprintf(msg, msgsz, "tensorContent is not valid base64");
        return -1;
    }
    int64_t numel = dg_shape_numel(&t->shape);
    size_t es = dg_dtype_size(t->dtype);
    if (n != (size_t)numel * es) {
        snprintf(msg, msgsz, "tensorContent has %zu bytes but a %s tensor "
                 "of %lld elements needs %zu", n, dg_dtype_name(t->dtype),
                 (long long)numel, (size_t)numel * es);
        dg_free(own);
        return -1;
    }
    /* little-endian bytes -> host order */
    unsigned char *dst = t->data;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (es > 1) {
        memcpy(dst, b, n);
        numel = 0;
    }
#endif
    for (int64_t i = 0; i < numel; i++) {
        uint64_t v = 0;
        for (size_t k = 0; k < es; k++)
            v |= (uint64_t)b[(size_t)i * es + k] << (8 * k);
        switch (es) {
        case 8: { uint64_t w = v; memcpy(dst + i * 8, &w, 8); break; }
        case 4: { uint32_t w = (uint32_t)v; memcpy(dst + i * 4, &w, 4); break; }
        default: dst[i] = (unsigned char)(v != 0); break;
        }
    }
    dg_free(own);
    return 0;
}

int dgc_gd_tensor(const dgc_jdoc *doc, dgc_gv x, dg_tensor **out,
                  char *msg, size_t msgsz)
{
    *out = NULL;
    if (!dgc_gv_is_object(x)) {
        snprintf(msg, msgsz, "a TensorProto must be an object, got %s",
                 dgc_gv_kind(x));
        return -1;
    }
    dg_dtype t;
    const char *what;
    if (dgc_gd_dtype(dgc_gv_field(x, "dtype", NULL), &t, &what)) {
        snprintf(msg, msgsz, "unsupported tensor dtype %s (float32, float64, "
                 "int32, int64, bool)", what);
        return -1;
    }
    dg_shape s;
    int rc = dgc_gd_shape(doc, dgc_gv_field(x, "tensorShape", "tensor_shape"),
                          &s, msg, msgsz);
    if (rc > 0 || (rc == 0 && dg_shape_numel(&s) < 0)) {
        snprintf(msg, msgsz, "a literal tensor needs a fully known shape");
        return -1;
    }
    if (rc)
        return -1;
    if (dg_shape_numel(&s) > (1ll << 31)) {
        snprintf(msg, msgsz, "literal tensor is too large");
        return -1;
    }
    static const char *const vals[][2] = {
        [DG_F32] = {"floatVal", "float_val"},
        [DG_F64] = {"doubleVal", "double_val"},
        [DG_I32] = {"intVal", "int_val"},
        [DG_I64] = {"int64Val", "int64_val"},
        [DG_BOOL] = {"boolVal", "bool_val"}};
    dgc_gv list = dgc_gv_field(x, vals[t][0], vals[t][1]);
    dgc_gv content = dgc_gv_field(x, "tensorContent", "tensor_content");
    dg_tensor *tn = dg_tensor_new(t, &s);
    if (!tn)
        return -2;
    int64_t numel = dg_shape_numel(&s);
    if (dgc_gv_ok(content) && !dgc_gv_empty_str(content)) {
        rc = put_content(content, tn, msg, msgsz);
        if (rc) {
            dg_tensor_free(tn);
            return rc;
        }
    } else if (dgc_gv_ok(list)) {
        if (!dgc_gv_is_array(list)) {
            snprintf(msg, msgsz, "%s must be a list", vals[t][0]);
            dg_tensor_free(tn);
            return -1;
        }
        int64_t cnt = dgc_gv_count(list);
        if (cnt > numel) {
            snprintf(msg, msgsz, "%s has %lld values but the shape holds "
                     "%lld", vals[t][0], (long long)cnt, (long long)numel);
            dg_tensor_free(tn);
            return -1;
        }
        int64_t i = 0;
        for (dgc_gv e = dgc_gv_first(list); dgc_gv_ok(e);
             e = dgc_gv_next(e), i++)
            if (put_val(doc, e, tn, i, msg, msgsz)) {
                dg_tensor_free(tn);
                return -1;
            }
        /* fewer values than elements: repeat the last one (TF) */
        size_t es = dg_dtype_size(t);
        for (; cnt > 0 && i < numel; i++)
            memcpy((char *)tn->data + (size_t)i * es,
                   (char *)tn->data + (size_t)(cnt - 1) * es, es);
    }
    *out = tn;
    return 0;
}

/* ---- the attr map --------------------------------------------------------- */

/* TF attrs dgrun does not need: type parameters inferred from the inputs,
 * resource names, locking and seeds (dgrun seeds from --seed), and hints
 * for TF's own kernels (MatMul's grad_a / grad_b say which gradient it
 * computes; use_cudnn_on_gpu).  Other type-valued attrs named T... are
 * type parameters too (type_param). */
static const char *const ignored[] = {
    "T", "Tidx", "Tshape", "Tperm", "Tlabels", "Tindices", "N", "SrcT",
    "Truncate", "U", "container", "shared_name", "use_locking", "seed",
    "seed2", "incompatible_shape_error", "index_type", "grad_a", "grad_b",
    "grad_x", "grad_y", "Tout", "allowed_devices", "debug_name",
    "shape_type",
    "use_cudnn_on_gpu", "Index",
    "T_threshold", /* NonMaxSuppressionV3/V4: the thresholds' dtype */
    NULL};

/* A type parameter: an attr named T<Name> whose value is a type or a list
 * of types ("Tparams": {"type": "DT_FLOAT"}, "Tin": {"list": {"type":
 * [...]}}); inference derives the types from the inputs. */
static int type_param(const char *k, dgc_gv v)
{
    if (k[0] != 'T' || !((k[1] >= 'A' && k[1] <= 'Z') ||
                         (k[1] >= 'a' && k[1] <= 'z')))
        return 0;
    dgc_gv l = dgc_gv_field(v, "list", NULL);
    return dgc_gv_ok(dgc_gv_field(v, "type", NULL)) ||
           (dgc_gv_ok(l) && dgc_gv_ok(dgc_gv_field(l, "type", NULL)));
}

/* `explicit_paddings` (Conv2D, MaxPool, ...): an empty list is TF's
 * default and means nothing. */
static int empty_list(dgc_gv v)
{
    dgc_gv l = dgc_gv_field(v, "list", NULL);
    if (!dgc_gv_is_object(v) || (dgc_gv_ok(dgc_gv_first(v)) && !dgc_gv_ok(l)) ||
        (dgc_gv_ok(l) && !dgc_gv_is_object(l)))
        return 0;
    for (dgc_gv e = dgc_gv_first(l); dgc_gv_ok(e); e = dgc_gv_next(e))
        if (!dgc_gv_is_array(e) || dgc_gv_count(e) > 0)
            return 0;
    return 1;
}

static int listed(const char *const *l, const char *k)
{
    for (; *l; l++)
        if (strcmp(*l, k) == 0)
            return 1;
    return 0;
}

#define AERR(...) dg_err(err, DG_E_GRAPH, __VA_ARGS__)

static dg_status want(dg_error *err, const dgc_node *n, const char *key,
                      const char *what)
{
    return AERR("node '%s': attr '%s' must be %s", n->name, key, what);
}

/* What an AttrValue holds, for messages: "a bool", "an int", ...; the
 * JSON kind when it is no object. */
static const char *attr_kind(dgc_gv v)
{
    static const char *const m[][2] = {
        {"b", "a bool"}, {"i", "an int"}, {"f", "a float"}, {"s", "a string"},
        {"type", "a type"}, {"shape", "a shape"}, {"tensor", "a tensor"},
        {"list", "a list"}, {"func", "a function"},
        {"placeholder", "a placeholder"}};
    if (!dgc_gv_is_object(v))
        return dgc_gv_kind(v);
    dgc_gv c = dgc_gv_first(v);
    if (!dgc_gv_ok(c))
        return "an empty value";
    const char *key = dgc_gv_key(c);
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
        if (key && strcmp(key, m[k][0]) == 0)
            return m[k][1];
    return "an unknown AttrValue";
}

/* Whether AttrValue v holds the field `kind` of TF's OpDef (or nothing:
 * proto3 JSON writes a default value as {}). */
static int attr_value_is(dgc_gv v, const char *kind)
{
    if (!dgc_gv_is_object(v))
        return 0;
    dgc_gv c = dgc_gv_first(v);
    if (!dgc_gv_ok(c))
        return 1;
    const char *key = dgc_gv_key(c);
    return key && !dgc_gv_ok(dgc_gv_next(c)) &&
           (strcmp(key, kind) == 0 || strcmp(key, "placeholder") == 0);
}

/* The AttrValue field of a kind, as messages say it. */
static const char *kind_text(const char *kind)
{
    static const char *const m[][2] = {
        {"b", "a bool ({\"b\": true|false})"},
        {"i", "an int ({\"i\": \"<int>\"})"},
        {"f", "a float ({\"f\": <number>})"},
        {"s", "a string ({\"s\": \"<base64>\"})"},
        {"type", "a type ({\"type\": \"DT_FLOAT\"})"},
        {"shape", "a shape ({\"shape\": {...}})"},
        {"tensor", "a tensor ({\"tensor\": {...}})"},
        {"func", "a function ({\"func\": {...}})"},
        {"list", "a list ({\"list\": {...}})"}};
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
        if (strcmp(m[k][0], kind) == 0)
            return m[k][1];
    return kind;
}

/* A wrong type: names the node, the attr, the type it must have and the
 * one it has. */
static dg_status want_type(dg_error *err, const dgc_node *n, const char *key,
                           const char *what, dgc_gv v)
{
    return AERR("node '%s': attr '%s' must be %s, got %s", n->name, key,
                what, attr_kind(v));
}

static dg_status nomem(dg_error *err)
{
    return dg_err_nomem(err, "attrs");
}

/* {"b": true}; an empty AttrValue is false. */
static dg_status get_bool(dg_error *err, const dgc_node *n, const char *key,
                          dgc_gv v, int *out)
{
    dgc_gv b = dgc_gv_field(v, "b", NULL);
    if (!dgc_gv_is_object(v) || (!dgc_gv_ok(b) && dgc_gv_ok(dgc_gv_first(v))))
        return want_type(err, n, key, "a bool ({\"b\": true|false})", v);
    if (dgc_gv_ok(b) && !dgc_gv_is_bool(b))
        return want(err, n, key, "a bool ({\"b\": true|false})");
    *out = dgc_gv_is_true(b);
    return DG_OK;
}

static dg_status get_int(const dgc_jdoc *doc, dg_error *err,
                         const dgc_node *n, const char *key, dgc_gv v,
                         int64_t *out)
{
    dgc_gv i = dgc_gv_field(v, "i", NULL);
    *out = 0;
    if (!dgc_gv_is_object(v) || (!dgc_gv_ok(i) && dgc_gv_ok(dgc_gv_first(v))))
        return want_type(err, n, key, "an int ({\"i\": \"<int>\"})", v);
    if (dgc_gv_ok(i) && dgc_gv_i64(doc, i, out))
        return want(err, n, key, "an int ({\"i\": \"<int>\"})");
    return DG_OK;
}

/* {"list": {"i": [...]}} -> attr `axis` (ints) of n. */
static dg_status get_int_list(const dgc_jdoc *doc, dg_error *err,
                              dgc_node *n, const char *key, dgc_gv v)
{
    dgc_gv l = dgc_gv_field(v, "list", NULL);
    dgc_gv is = dgc_gv_field(l, "i", NULL);
    if (!dgc_gv_is_object(v) || (dgc_gv_ok(l) && !dgc_gv_is_object(l)) ||
        (dgc_gv_ok(is) && !dgc_gv_is_array(is)))
        return want_type(err, n, key, "a list of ints ({\"list\": "
                         "{\"i\": [...]}})", v);
    int64_t vals[DG_MAX_RANK];
    int cnt = 0;
    for (dgc_gv e = dgc_gv_first(is); dgc_gv_ok(e); e = dgc_gv_next(e)) {
        if (cnt == DG_MAX_RANK || dgc_gv_i64(doc, e, &vals[cnt]))
            return want(err, n, key, "a short list of ints");
        cnt++;
    }
    if (dgc_node_set_ints(n, "axis", vals, cnt))
        return nomem(err);
    return DG_OK;
}

/* {"s": base64} -> a dg_malloc'd string. */
static dg_status get_str(dg_error *err, const dgc_node *n, const char *key,
                         dgc_gv v, char **out)
{
    dgc_gv s = dgc_gv_field(v, "s", NULL);
    unsigned char *b = NULL;
    size_t len;
    if (!dgc_gv_is_object(v) || (!dgc_gv_ok(s) && dgc_gv_ok(dgc_gv_first(v))))
        return want_type(err, n, key, "a string ({\"s\": \"<base64>\"})", v);
    if (dgc_gv_ok(s) && !dgc_gv_is_string(s))
        return want(err, n, key, "a string ({\"s\": \"<base64>\"})");
    int rc = dgc_gv_ok(s) ? dgc_gv_bytes_dup(s, &b, &len)
                          : (b = dg_calloc(1, 1)) ? 0 : -2;
    if (rc == -2)
        return nomem(err);
    if (rc)
        return want(err, n, key, "base64 text in \"s\"");
    *out = (char *)b;
    return DG_OK;
}

static dg_status get_type(dg_error *err, const dgc_node *n, const char *key,
                          dgc_gv v, dg_dtype *out)
{
    const char *what;
    if (!dgc_gv_is_object(v) || !dgc_gv_ok(dgc_gv_field(v, "type", NULL)))
        return want_type(err, n, key, "a type ({\"type\": \"DT_FLOAT\"})", v);
    if (dgc_gd_dtype(dgc_gv_field(v, "type", NULL), out, &what))
        return AERR("node '%s': attr '%s': unsupported dtype %s (float32, "
                    "float64, int32, int64, bool)", n->name, key, what);
    return DG_OK;
}

/* {"f": 0.001}; an empty AttrValue is 0. */
static dg_status get_float(dg_error *err, const dgc_node *n, const char *key,
                           dgc_gv v, double *out)
{
    dgc_gv f = dgc_gv_field(v, "f", NULL);
    *out = 0;
    if (!dgc_gv_is_object(v) || (!dgc_gv_ok(f) && dgc_gv_ok(dgc_gv_first(v))))
        return want_type(err, n, key, "a float ({\"f\": <number>})", v);
    if (dgc_gv_ok(f) && dgc_gv_f64(f, out))
        return want(err, n, key, "a float ({\"f\": <number>})");
    return DG_OK;
}

/* {"list": {"i": ["1", "2", ...]}} -> the node's ints attr `key`. */
static dg_status set_int_list(const dgc_jdoc *doc, dg_error *err,
                              dgc_node *n, const char *key, dgc_gv v)
{
    dgc_gv l = dgc_gv_field(v, "list", NULL);
    dgc_gv is = dgc_gv_field(l, "i", NULL);
    int64_t vals[16];
    int cnt = 0;
    if (!dgc_gv_is_object(v) || (dgc_gv_ok(l) && !dgc_gv_is_object(l)) ||
        (dgc_gv_ok(is) && !dgc_gv_is_array(is)))
        return want_type(err, n, key, "a list of ints ({\"list\": "
                         "{\"i\": [...]}})", v);
    for (dgc_gv e = dgc_gv_first(is); dgc_gv_ok(e); e = dgc_gv_next(e)) {
        if (cnt == 16 || dgc_gv_i64(doc, e, &vals[cnt]))
            return want(err, n, key, "a list of at most 16 ints");
        cnt++;
    }
    return dgc_node_set_ints(n, key, vals, cnt) ? nomem(err) : DG_OK;
}

/* The TF CNN ops (convolution, pooling, fused batch norm): the ops whose
 * schema (ops.c) has a layout attr, data_format, which takes NCHW too. */
static int cnn_op(const dgc_node *n)
{
    return dgc_op_attr(n->op, "data_format") != NULL;
}

/* `_class`: {"list": {"s": ["bG9jOkB4"]}} = loc:@x -> colocate with x.
 * The names go to `cls` (resolved once every node is known,
 * dgc_gd_resolve_class). */
static dg_status colocation(dgc_graph *g, int32_t id, dgc_gv v,
                            dgc_strpool *cls, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    dgc_gv l = dgc_gv_field(v, "list", NULL);
    dgc_gv ss = dgc_gv_field(l, "s", NULL);
    if (!dgc_gv_is_object(v) || (dgc_gv_ok(l) && !dgc_gv_is_object(l)) ||
        (dgc_gv_ok(ss) && !dgc_gv_is_array(ss)))
        return want(err, n, "_class", "a list of strings ({\"list\": "
                    "{\"s\": [...]}})");
    for (dgc_gv e = dgc_gv_first(ss); dgc_gv_ok(e); e = dgc_gv_next(e)) {
        unsigned char *b;
        size_t len;
        int rc = dgc_gv_bytes_dup(e, &b, &len);
        if (rc == -2)
            return nomem(err);
        if (rc)
            return want(err, n, "_class", "a list of base64 strings");
        rc = strncmp((char *)b, "loc:@", 5) != 0 ? 0
             : dgc_strpool_add(cls, (char *)b + 5);
        dg_free(b);
        if (rc)
            return nomem(err);
    }
    return DG_OK;
}

dg_status dgc_gd_resolve_class(dgc_graph *g, int32_t id, const char **s,
                               int n_cls, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    for (int k = 0; k < n_cls; k++) {
        const char *t = *s;
        *s += strlen(t) + 1;
        int32_t c = dg_strmap_get(&g->names, t);
        if (c < 0)
            return AERR("node '%s': _class colocates with unknown node '%s'",
                        n->name, t);
        int dup = 0;
        for (int j = 0; j < n->n_coloc; j++)
            dup |= n->coloc[j] == c;
        if (dup)
            continue;
        int32_t *nc = dg_realloc(n->coloc, sizeof *nc * (size_t)(n->n_coloc + 1));
        if (!nc)
            return nomem(err);
        nc[n->n_coloc++] = c;
        n->coloc = nc;
    }
    return DG_OK;
}

static int is_op(const dgc_node *n, const char *name)
{
    return strcmp(dgc_op_name(n->op), name) == 0;
}

/* `value` of a Const. */
static dg_status value_attr(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                            dgc_gv v, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    dgc_gv t = dgc_gv_field(v, "tensor", NULL);
    if (!is_op(n, "Const"))
        return AERR("node '%s': attr 'value' is not supported on op %s",
                    n->name, dgc_op_name(n->op));
    if (!dgc_gv_is_object(v) || !dgc_gv_ok(t))
        return want(err, n, "value", "a tensor ({\"tensor\": {...}})");
    dg_tensor *tn;
    char msg[300];
    int rc = dgc_gd_tensor(doc, t, &tn, msg, sizeof msg);
    if (rc == -2)
        return nomem(err);
    if (rc)
        return AERR("node '%s': attr 'value': %s", n->name, msg);
    if (dgc_node_set_tensor(n, "value", tn))
        return nomem(err);
    return DG_OK;
}

/* `shape` of a Placeholder, Variable or EnsureShape (whose -1 dims and
 * unknown rank are kept as the Placeholder's). */
static dg_status shape_attr(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                            dgc_gv v, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    int feed = dgc_op_has(n->op, DGC_OP_FEED) ||
               n->op == DGC_OPID_EnsureShape;
    if (!feed && !dgc_op_has(n->op, DGC_OP_VARIABLE))
        return AERR("node '%s': attr 'shape' is not supported on op %s",
                    n->name, dgc_op_name(n->op));
    dgc_gv s = dgc_gv_field(v, "shape", NULL);
    if (!dgc_gv_is_object(v) || (!dgc_gv_ok(s) && dgc_gv_ok(dgc_gv_first(v))))
        return want(err, n, "shape", "a shape ({\"shape\": {\"dim\": [...]}})");
    dg_shape sh;
    char msg[200];
    int rc = dgc_gd_shape(doc, s, &sh, msg, sizeof msg);
    if (rc < 0)
        return AERR("node '%s': attr 'shape': %s", n->name, msg);
    if (rc > 0) {
        if (feed && dgc_op_has(n->op, DGC_OP_SOURCE))
            return AERR("node '%s': attr 'shape': a Placeholder of unknown "
                        "rank is not supported (give its rank; -1 dims are "
                        "fine)", n->name);
        return DG_OK; /* a Variable then takes its initial value's shape,
                         a PlaceholderWithDefault its input's */
    }
    for (int i = 0; !feed && i < sh.rank; i++)
        if (sh.dims[i] < 0)
            return DG_OK; /* partially known: from the initial value too */
    if (dgc_node_set_shape(n, "shape", &sh))
        return nomem(err);
    return DG_OK;
}

/* ---- control flow (issue 11) ---------------------------------------------- */

/* Attrs of the control-flow ops: 1 when k was one (*st says how it went),
 * 0 when it is for the general code.  `_output_shapes` on an op whose
 * output shape only the run knows (a TensorArray read or gather, a stack
 * pop) becomes its `output_shape`. */
static int cflow_attr(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                      const char *k, dgc_gv v, dg_error *err,
                      dg_status *st)
{
    static const char *const strs[] = {"frame_name", "source", NULL};
    static const char *const ignored_strs[] = {"tensor_array_name",
                                               "stack_name", NULL};
    static const char *const bools[] = {"is_constant", "dynamic_size",
        "clear_after_read", "identical_element_shapes", "swap_memory",
        "_tensor_list", NULL};
    dgc_node *n = &g->nodes[id];
    if (!dgc_op_has(n->op, DGC_OP_CONTROL_FLOW))
        return 0;
    char *s = NULL;
    int b = 0;
    int64_t i = 0;
    dg_dtype t;
    *st = DG_OK;
    if (strcmp(k, "T") == 0) {
        /* DT_RESOURCE (a TensorArray or stack handle entering a loop) is
         * fine here: inference types the handle */
        dgc_gv ty = dgc_gv_field(v, "type", NULL);
        if (dgc_gv_is_string(ty) && strcmp(dgc_gv_str(ty), "DT_RESOURCE") == 0)
            return 1;
        return 0;
    } else if (listed(strs, k)) {
        if (!(*st = get_str(err, n, k, v, &s))) {
            dgc_attr a;
            memset(&a, 0, sizeof a);
            a.key = (char *)k;
            a.kind = DGC_A_STR;
            a.s = s;
            if (dgc_node_set_attr(n, &a)) {
                dg_free(s);
                *st = nomem(err);
            }
        }
    } else if (listed(ignored_strs, k)) {
        return 1;
    } else if (listed(bools, k)) {
        if (!(*st = get_bool(err, n, k, v, &b)) && dgc_node_set_bool(n, k, b))
            *st = nomem(err);
    } else if (strcmp(k, "parallel_iterations") == 0) {
        if (!(*st = get_int(doc, err, n, k, v, &i)) &&
            dgc_node_set_int(n, k, i))
            *st = nomem(err);
    } else if (strcmp(k, "elem_type") == 0) {
        if (!(*st = get_type(err, n, k, v, &t)) &&
            dgc_node_set_dtype(n, k, t))
            *st = nomem(err);
    } else if (strcmp(k, "element_shape") == 0 ||
               strcmp(k, "_output_shapes") == 0) {
        int out = k[0] == '_';
        if (out && n->op != DGC_OPID_TensorArrayReadV3 &&
            n->op != DGC_OPID_TensorArrayGatherV3 &&
            n->op != DGC_OPID_StackPopV2)
            return 1;
        dgc_gv x = dgc_gv_field(v, "shape", NULL);
        if (out) {
            dgc_gv l = dgc_gv_field(v, "list", NULL);
            x = dgc_gv_field(l, "shape", NULL);
            x = dgc_gv_is_array(x) ? dgc_gv_first(x)
                                   : dgc_gv_json(NULL);
        }
        dg_shape sh;
        char msg[200];
        int rc = dgc_gv_ok(x) ? dgc_gd_shape(doc, x, &sh, msg, sizeof msg) : 1;
        if (rc < 0)
            *st = AERR("node '%s': attr '%s': %s", n->name, k, msg);
        else if (rc == 0 &&
                 dgc_node_set_shape(n, out ? "output_shape" : k, &sh))
            *st = nomem(err);
    } else {
        return 0;
    }
    return 1;
}

/* An attr the op's schema (ops.c) names, decoded by the schema's type
 * (issue 22: ops added after the special cases above). */
static dg_status schema_attr(const dgc_jdoc *doc, dg_error *err, dgc_node *n,
                             const char *k, dgc_gv v, const char *tf_op)
{
    const dgc_attr_spec *sp = dgc_op_attr(n->op, k);
    dg_status st = DG_OK;
    double f;
    int b = 0;
    int64_t i = 0;
    dg_dtype t = DG_F32;
    char *s = NULL;
    switch (sp->type) {
    case DGC_A_FLOAT:
        if (!(st = get_float(err, n, k, v, &f)) && dgc_node_set_float(n, k, f))
            st = nomem(err);
        break;
    case DGC_A_BOOL:
        if (!(st = get_bool(err, n, k, v, &b)) && dgc_node_set_bool(n, k, b))
            st = nomem(err);
        break;
    case DGC_A_INT:
        if (!(st = get_int(doc, err, n, k, v, &i)) &&
            dgc_node_set_int(n, k, i))
            st = nomem(err);
        break;
    case DGC_A_INTS:
        st = set_int_list(doc, err, n, k, v);
        break;
    case DGC_A_DTYPE:
        if (!(st = get_type(err, n, k, v, &t)) && dgc_node_set_dtype(n, k, t))
            st = nomem(err);
        break;
    case DGC_A_STR:
        if (!(st = get_str(err, n, k, v, &s)) && dgc_node_set_str(n, k, s))
            st = nomem(err);
        dg_free(s);
        break;
    default:
        st = AERR("node '%s': attr '%s' of op %s is not supported by dgrun",
                  n->name, k, tf_op);
    }
    return st;
}

dg_status dgc_gd_attrs(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                       const char *tf_op, dgc_gv attr, dgc_strpool *cls,
                       dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    if (dgc_gv_ok(attr) && !dgc_gv_is_object(attr))
        return AERR("node '%s': 'attr' must be an object, got %s", n->name,
                    dgc_gv_kind(attr));
    const char *dup;
    if (dgc_gv_dup_key(attr, &dup))
        return AERR("node '%s': duplicate attr '%s'", n->name, dup);
    dg_status st = DG_OK;
    for (dgc_gv v = dgc_gv_first(attr); dgc_gv_ok(v) && !st;
         v = dgc_gv_next(v)) {
        const char *k = dgc_gv_key(v);
        int b = 0;
        int64_t i = 0;
        dg_dtype t = DG_F32;
        char *s = NULL;
        const char *tk = NULL;
        int fused = dgc_gd_is_fused_conv(n); /* issue 23: not in the table */
        int in_tf = k[0] == '_' ? 1
                    : fused     ? dgc_gd_fused_conv_tf_attr(n, k)
                                : dgc_tf_attr_kind(tf_op, k, &tk);
        if (strcmp(k, "_class") == 0) {
            st = colocation(g, id, v, cls, err);
        } else if (in_tf == 0) {
            /* issue 21: what TF's OpDef does not define, TF rejects */
            st = AERR("node '%s': attr '%s' of op %s is not supported by "
                      "dgrun: TensorFlow's %s has no attr '%s'", n->name, k,
                      tf_op, tf_op, k);
        } else if (in_tf == 1 && tk && !attr_value_is(v, tk)) {
            st = want_type(err, n, k, kind_text(tk), v);
        } else if (cflow_attr(g, doc, id, k, v, err, &st)) { /* issue 11 */
            continue;
        } else if (fused && dgc_gd_fused_conv_attr(n, k, v, err, &st)) {
            continue;
        } else if (k[0] == '_') {
            continue; /* _output_shapes and other annotations */
        } else if ((strcmp(k, "seed") == 0 || strcmp(k, "seed2") == 0) &&
                   dgc_op_attr(n->op, k)) {
            /* random ops (issue 21): TF's graph and op seed pick the
             * stream (runtime/session/session.c) */
            if (!(st = get_int(doc, err, n, k, v, &i)) &&
                dgc_node_set_int(n, k, i))
                st = nomem(err);
        } else if ((strcmp(k, "Tout") == 0 &&
                    n->op == DGC_OPID_RandomUniformInt) ||
                   (strcmp(k, "output_dtype") == 0 &&
                    n->op == DGC_OPID_Multinomial) ||
                   (strcmp(k, "index_type") == 0 &&
                    n->op == DGC_OPID_TopKV2)) {
            if (!(st = get_type(err, n, k, v, &t)) &&
                dgc_node_set_dtype(n, k[0] == 'T' ? "dtype" : k, t))
                st = nomem(err);
        } else if (strcmp(k, "T") == 0 && (n->op == DGC_OPID_IdentityN ||
                                            n->op == DGC_OPID_Assert)) {
            continue; /* a list of types (issue 22): inference derives them */
        } else if (strcmp(k, "T") == 0) {
            /* the input type: inference derives it; only check it exists */
            st = get_type(err, n, k, v, &t);
        } else if (listed(ignored, k) || type_param(k, v) ||
                   (strcmp(k, "explicit_paddings") == 0 && empty_list(v))) {
            continue;
        } else if ((n->op == DGC_OPID_Conv3D || n->op == DGC_OPID_MaxPool3D) &&
                   dgc_op_attr(n->op, k)) { /* issue 22: by the schema */
            st = schema_attr(doc, err, n, k, v, tf_op);
        } else if (strcmp(k, "out_type") == 0) { /* Shape, Size */
            if (!(st = get_type(err, n, k, v, &t)) &&
                dgc_node_set_dtype(n, "out_type", t))
                st = nomem(err);
        } else if (strcmp(k, "batch_dims") == 0 || /* GatherV2 */
                   strcmp(k, "begin_mask") == 0 || /* StridedSlice */
                   strcmp(k, "end_mask") == 0 ||
                   strcmp(k, "ellipsis_mask") == 0 ||
                   strcmp(k, "new_axis_mask") == 0 ||
                   strcmp(k, "shrink_axis_mask") == 0 ||
                   ((strcmp(k, "axis") == 0 || strcmp(k, "num") == 0) &&
                    (strcmp(tf_op, "Pack") == 0 ||
                     strcmp(tf_op, "Unpack") == 0))) {
            if (!(st = get_int(doc, err, n, k, v, &i)) &&
                dgc_node_set_int(n, k, i))
                st = nomem(err);
        } else if (strcmp(k, "num_split") == 0) { /* Split, SplitV */
            if (!(st = get_int(doc, err, n, k, v, &i)) &&
                dgc_node_set_int(n, "num", i))
                st = nomem(err);
        } else if (strcmp(k, "squeeze_dims") == 0) { /* Squeeze */
            st = get_int_list(doc, err, n, k, v);
        } else if (strcmp(k, "dtype") == 0 || strcmp(k, "DstT") == 0 ||
                   strcmp(k, "output_type") == 0) {
            if (!(st = get_type(err, n, k, v, &t)) &&
                dgc_node_set_dtype(n, k[0] == 'o' ? "output_type" : "dtype", t))
                st = nomem(err);
        } else if (strcmp(k, "value") == 0) {
            st = value_attr(g, doc, id, v, err);
        } else if (strcmp(k, "shape") == 0) {
            st = shape_attr(g, doc, id, v, err);
        } else if (strcmp(k, "transpose_a") == 0 ||
                   strcmp(k, "transpose_b") == 0 ||
                   strcmp(k, "validate_shape") == 0 ||
                   strcmp(k, "use_nesterov") == 0 ||
                   strcmp(k, "keep_dims") == 0 || strcmp(k, "keepdims") == 0) {
            if (!(st = get_bool(err, n, k, v, &b)) &&
                dgc_node_set_bool(n, k[0] == 'k' ? "keepdims" : k, b))
                st = nomem(err);
        } else if (strcmp(k, "message") == 0) {
            if (!(st = get_str(err, n, k, v, &s))) {
                dgc_attr a;
                memset(&a, 0, sizeof a);
                a.key = "message";
                a.kind = DGC_A_STR;
                a.s = s;
                if (dgc_node_set_attr(n, &a)) {
                    dg_free(s);
                    st = nomem(err);
                }
            }
        } else if (strcmp(k, "summarize") == 0) {
            if (!(st = get_int(doc, err, n, k, v, &i)) &&
                dgc_node_set_int(n, "summarize", i))
                st = nomem(err);
        } else if (strcmp(k, "first_n") == 0) {
            /* Print prints its first first_n calls only (issue 21) */
            if (!(st = get_int(doc, err, n, k, v, &i)) &&
                dgc_node_set_int(n, "first_n", i))
                st = nomem(err);
        } else if (cnn_op(n) && (strcmp(k, "strides") == 0 ||
                                 strcmp(k, "dilations") == 0 ||
                                 strcmp(k, "ksize") == 0 ||
                                 strcmp(k, "explicit_paddings") == 0)) {
            st = set_int_list(doc, err, n, k, v);
        } else if (cnn_op(n) && (strcmp(k, "padding") == 0 ||
                                 strcmp(k, "data_format") == 0)) {
            if (!(st = get_str(err, n, k, v, &s)) &&
                dgc_node_set_str(n, k, s))
                st = nomem(err);
            dg_free(s);
        } else if (strcmp(k, "epsilon") == 0 ||
                   strcmp(k, "exponential_avg_factor") == 0) {
            double f;
            if (!(st = get_float(err, n, k, v, &f)) &&
                dgc_node_set_float(n, k, f))
                st = nomem(err);
        } else if (strcmp(k, "is_training") == 0) {
            if (!(st = get_bool(err, n, k, v, &b)) &&
                dgc_node_set_bool(n, k, b))
                st = nomem(err);
        } else if (strcmp(k, "data_format") == 0) {
            if (!(st = get_str(err, n, k, v, &s)) && strcmp(s, "NHWC") != 0)
                st = AERR("node '%s': attr 'data_format' = '%s' is not "
                          "supported (only NHWC: bias on the last axis)",
                          n->name, s);
            dg_free(s);
        } else if (dgc_op_attr(n->op, k)) {
            st = schema_attr(doc, err, n, k, v, tf_op);
        } else if (in_tf == 1) {
            continue; /* TF's attr that dgrun has no use for (ConcatOffset's
                         shape_type, summary ops' max_outputs, ...) */
        } else {
            st = AERR("node '%s': attr '%s' of op %s is not supported by "
                      "dgrun", n->name, k, tf_op);
        }
    }
    if (st)
        return st;
    /* a Const's dtype attr must agree with its tensor */
    const dgc_attr *val = dgc_node_attr(n, "value");
    const dgc_attr *dt = dgc_node_attr(n, "dtype");
    if (is_op(n, "Const") && !val && strcmp(tf_op, "Fill") != 0)
        return AERR("node '%s': Const needs attr 'value'", n->name);
    if (val && dt && (dg_dtype)dt->i != val->tensor->dtype)
        return AERR("node '%s': attr 'dtype' is %s but its value is %s",
                    n->name, dg_dtype_name((dg_dtype)dt->i),
                    dg_dtype_name(val->tensor->dtype));
    return DG_OK;
}
