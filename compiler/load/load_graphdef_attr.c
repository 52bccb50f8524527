/*
 * load_graphdef_attr.c -- the pieces of TensorFlow's proto3 JSON a GraphDef
 * node carries besides its name, op and inputs: AttrValue maps (types,
 * bools, ints, strings as base64, shapes, tensors, lists), TensorProto
 * literals and `_class` colocation, turned into dgrun attributes.
 */
#include "load_graphdef.h"
#include "ops.h"
#include "dg_alloc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cJSON *dgc_gd_field(const cJSON *obj, const char *camel,
                          const char *snake)
{
    if (!cJSON_IsObject(obj))
        return NULL;
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj, camel);
    if (!x && snake)
        x = cJSON_GetObjectItemCaseSensitive(obj, snake);
    return x;
}

static int b64_val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

int dgc_gd_base64(const char *s, unsigned char **out, size_t *n)
{
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -1;
    unsigned char *b = dg_malloc(len / 4 * 3 + 3);
    if (!b)
        return -2;
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) {
            dg_free(b);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b[k++] = (unsigned char)(acc >> bits);
        }
    }
    b[k] = 0;
    *out = b;
    *n = k;
    return 0;
}

int dgc_gd_dtype(const cJSON *x, dg_dtype *out, const char **what)
{
    static const struct { const char *name; int num; dg_dtype t; } map[] = {
        {"DT_FLOAT", 1, DG_F32}, {"DT_DOUBLE", 2, DG_F64},
        {"DT_INT32", 3, DG_I32}, {"DT_INT64", 9, DG_I64},
        {"DT_BOOL", 10, DG_BOOL}};
    *what = "?";
    if (cJSON_IsString(x)) {
        *what = x->valuestring;
        size_t l = strlen(x->valuestring);
        if (l > 4 && strcmp(x->valuestring + l - 4, "_REF") == 0)
            l -= 4;
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (strlen(map[i].name) == l &&
                strncmp(map[i].name, x->valuestring, l) == 0) {
                *out = map[i].t;
                return 0;
            }
        return -1;
    }
    if (cJSON_IsNumber(x)) {
        /* enum values are small integers; check the range before the cast
         * (fuzzing found -9223372036854775809 here: the cast was UB) */
        double d = x->valuedouble;
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

/* An int64 written as a JSON string (proto3) or a number.  0 ok. */
static int json_i64(const dgc_jdoc *doc, const cJSON *x, int64_t *out)
{
    if (cJSON_IsString(x)) {
        const char *s = x->valuestring;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*s || *end || errno)
            return -1;
        *out = (int64_t)v;
        return 0;
    }
    return dgc_json_int64(doc, x, out) ? -1 : 0;
}

/* A float or double: a number, or "NaN" / "Infinity" / "-Infinity" or a
 * numeric string.  0 ok. */
static int json_f64(const cJSON *x, double *out)
{
    if (cJSON_IsNumber(x)) {
        *out = x->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(x))
        return -1;
    const char *s = x->valuestring;
    if (strcmp(s, "NaN") == 0) { *out = NAN; return 0; }
    if (strcmp(s, "Infinity") == 0) { *out = INFINITY; return 0; }
    if (strcmp(s, "-Infinity") == 0) { *out = -INFINITY; return 0; }
    char *end;
    *out = strtod(s, &end);
    return (*s && !*end) ? 0 : -1;
}

int dgc_gd_shape(const dgc_jdoc *doc, const cJSON *x, dg_shape *s,
                 char *msg, size_t msgsz)
{
    memset(s, 0, sizeof *s);
    if (x && !cJSON_IsObject(x)) {
        snprintf(msg, msgsz, "a TensorShapeProto must be an object, got %s",
                 dgc_json_kind(x));
        return -1;
    }
    if (cJSON_IsTrue(dgc_gd_field(x, "unknownRank", "unknown_rank")))
        return 1;
    const cJSON *dims = dgc_gd_field(x, "dim", NULL);
    if (dims && !cJSON_IsArray(dims)) {
        snprintf(msg, msgsz, "'dim' must be a list, got %s",
                 dgc_json_kind(dims));
        return -1;
    }
    for (const cJSON *d = dims ? dims->child : NULL; d; d = d->next) {
        if (s->rank == DG_MAX_RANK) {
            snprintf(msg, msgsz, "more than %d dimensions", DG_MAX_RANK);
            return -1;
        }
        const cJSON *sz = dgc_gd_field(d, "size", NULL);
        int64_t v = 0; /* proto3 omits a zero size */
        if (!cJSON_IsObject(d) || (sz && json_i64(doc, sz, &v)) || v < -1) {
            snprintf(msg, msgsz, "malformed dimension (want {\"size\": "
                     "\"<int>\"})");
            return -1;
        }
        s->dims[s->rank++] = v;
    }
    return 0;
}

/* Store value k of a *Val list into element i of t. */
static int put_val(const dgc_jdoc *doc, const cJSON *x, dg_tensor *t,
                   int64_t i, char *msg, size_t msgsz)
{
    double d;
    int64_t v;
    switch (t->dtype) {
    case DG_F32:
    case DG_F64:
        if (json_f64(x, &d))
            break;
        if (t->dtype == DG_F32)
            ((float *)t->data)[i] = (float)d;
        else
            ((double *)t->data)[i] = d;
        return 0;
    case DG_I32:
    case DG_I64:
        if (json_i64(doc, x, &v))
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
        if (!cJSON_IsBool(x))
            break;
        ((uint8_t *)t->data)[i] = cJSON_IsTrue(x) ? 1 : 0;
        return 0;
    default:
        break;
    }
    snprintf(msg, msgsz, "bad element (%s) for dtype %s", dgc_json_kind(x),
             dg_dtype_name(t->dtype));
    return -1;
}

/* The bytes of tensorContent (little-endian) into t. */
static int put_content(const cJSON *c, dg_tensor *t, char *msg, size_t msgsz)
{
    unsigned char *b;
    size_t n;
    if (!cJSON_IsString(c)) {
        snprintf(msg, msgsz, "tensorContent must be a base64 string");
        return -1;
    }
    int raw = (c->type & DGC_JSON_RAWBYTES) != 0;
    int rc = 0;
    if (raw) {
        b = (unsigned char *)c->valuestring;
        n = (size_t)c->valuedouble;
    } else {
        rc = dgc_gd_base64(c->valuestring, &b, &n);
    }
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
        if (!raw)
            dg_free(b);
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
    if (!raw)
        dg_free(b);
    return 0;
}

int dgc_gd_tensor(const dgc_jdoc *doc, const cJSON *x, dg_tensor **out,
                  char *msg, size_t msgsz)
{
    *out = NULL;
    if (!cJSON_IsObject(x)) {
        snprintf(msg, msgsz, "a TensorProto must be an object, got %s",
                 dgc_json_kind(x));
        return -1;
    }
    dg_dtype t;
    const char *what;
    if (dgc_gd_dtype(dgc_gd_field(x, "dtype", NULL), &t, &what)) {
        snprintf(msg, msgsz, "unsupported tensor dtype %s (float32, float64, "
                 "int32, int64, bool)", what);
        return -1;
    }
    dg_shape s;
    int rc = dgc_gd_shape(doc, dgc_gd_field(x, "tensorShape", "tensor_shape"),
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
    const cJSON *list = dgc_gd_field(x, vals[t][0], vals[t][1]);
    const cJSON *content = dgc_gd_field(x, "tensorContent", "tensor_content");
    dg_tensor *tn = dg_tensor_new(t, &s);
    if (!tn)
        return -2;
    int64_t numel = dg_shape_numel(&s);
    int empty = cJSON_IsString(content) && !content->valuestring[0] &&
                !(content->type & DGC_JSON_RAWBYTES);
    if (content && !empty) {
        rc = put_content(content, tn, msg, msgsz);
        if (rc) {
            dg_tensor_free(tn);
            return rc;
        }
    } else if (list) {
        if (!cJSON_IsArray(list)) {
            snprintf(msg, msgsz, "%s must be a list", vals[t][0]);
            dg_tensor_free(tn);
            return -1;
        }
        int64_t cnt = cJSON_GetArraySize(list);
        if (cnt > numel) {
            snprintf(msg, msgsz, "%s has %lld values but the shape holds "
                     "%lld", vals[t][0], (long long)cnt, (long long)numel);
            dg_tensor_free(tn);
            return -1;
        }
        int64_t i = 0;
        for (const cJSON *e = list->child; e; e = e->next, i++)
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
    "use_cudnn_on_gpu", "Index", NULL};

/* A type parameter: an attr named T<Name> whose value is a type or a list
 * of types ("Tparams": {"type": "DT_FLOAT"}, "Tin": {"list": {"type":
 * [...]}}); inference derives the types from the inputs. */
static int type_param(const char *k, const cJSON *v)
{
    if (k[0] != 'T' || !((k[1] >= 'A' && k[1] <= 'Z') ||
                         (k[1] >= 'a' && k[1] <= 'z')))
        return 0;
    const cJSON *l = dgc_gd_field(v, "list", NULL);
    return dgc_gd_field(v, "type", NULL) != NULL ||
           (l && dgc_gd_field(l, "type", NULL) != NULL);
}

/* `explicit_paddings` (Conv2D, MaxPool, ...): an empty list is TF's
 * default and means nothing. */
static int empty_list(const cJSON *v)
{
    const cJSON *l = dgc_gd_field(v, "list", NULL);
    if (!cJSON_IsObject(v) || (v->child && !l) || (l && !cJSON_IsObject(l)))
        return 0;
    for (const cJSON *e = l ? l->child : NULL; e; e = e->next)
        if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) > 0)
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
static const char *attr_kind(const cJSON *v)
{
    static const char *const m[][2] = {
        {"b", "a bool"}, {"i", "an int"}, {"f", "a float"}, {"s", "a string"},
        {"type", "a type"}, {"shape", "a shape"}, {"tensor", "a tensor"},
        {"list", "a list"}, {"func", "a function"},
        {"placeholder", "a placeholder"}};
    if (!cJSON_IsObject(v))
        return dgc_json_kind(v);
    if (!v->child)
        return "an empty value";
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
        if (v->child->string && strcmp(v->child->string, m[k][0]) == 0)
            return m[k][1];
    return "an unknown AttrValue";
}

/* Whether AttrValue v holds the field `kind` of TF's OpDef (or nothing:
 * proto3 JSON writes a default value as {}). */
static int attr_value_is(const cJSON *v, const char *kind)
{
    if (!cJSON_IsObject(v))
        return 0;
    if (!v->child)
        return 1;
    return v->child->string && !v->child->next &&
           (strcmp(v->child->string, kind) == 0 ||
            strcmp(v->child->string, "placeholder") == 0);
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
                           const char *what, const cJSON *v)
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
                          const cJSON *v, int *out)
{
    const cJSON *b = dgc_gd_field(v, "b", NULL);
    if (!cJSON_IsObject(v) || (!b && v->child))
        return want_type(err, n, key, "a bool ({\"b\": true|false})", v);
    if (b && !cJSON_IsBool(b))
        return want(err, n, key, "a bool ({\"b\": true|false})");
    *out = cJSON_IsTrue(b);
    return DG_OK;
}

static dg_status get_int(const dgc_jdoc *doc, dg_error *err,
                         const dgc_node *n, const char *key, const cJSON *v,
                         int64_t *out)
{
    const cJSON *i = dgc_gd_field(v, "i", NULL);
    *out = 0;
    if (!cJSON_IsObject(v) || (!i && v->child))
        return want_type(err, n, key, "an int ({\"i\": \"<int>\"})", v);
    if (i && json_i64(doc, i, out))
        return want(err, n, key, "an int ({\"i\": \"<int>\"})");
    return DG_OK;
}

/* {"list": {"i": [...]}} -> attr `axis` (ints) of n. */
static dg_status get_int_list(const dgc_jdoc *doc, dg_error *err,
                              dgc_node *n, const char *key, const cJSON *v)
{
    const cJSON *l = dgc_gd_field(v, "list", NULL);
    const cJSON *is = dgc_gd_field(l, "i", NULL);
    if (!cJSON_IsObject(v) || (l && !cJSON_IsObject(l)) ||
        (is && !cJSON_IsArray(is)))
        return want_type(err, n, key, "a list of ints ({\"list\": "
                         "{\"i\": [...]}})", v);
    int64_t vals[DG_MAX_RANK];
    int cnt = 0;
    for (const cJSON *e = is ? is->child : NULL; e; e = e->next) {
        if (cnt == DG_MAX_RANK || json_i64(doc, e, &vals[cnt]))
            return want(err, n, key, "a short list of ints");
        cnt++;
    }
    if (dgc_node_set_ints(n, "axis", vals, cnt))
        return nomem(err);
    return DG_OK;
}

/* {"s": base64} -> a dg_malloc'd string. */
static dg_status get_str(dg_error *err, const dgc_node *n, const char *key,
                         const cJSON *v, char **out)
{
    const cJSON *s = dgc_gd_field(v, "s", NULL);
    unsigned char *b = NULL;
    size_t len;
    if (!cJSON_IsObject(v) || (!s && v->child))
        return want_type(err, n, key, "a string ({\"s\": \"<base64>\"})", v);
    if (s && !cJSON_IsString(s))
        return want(err, n, key, "a string ({\"s\": \"<base64>\"})");
    int rc = dgc_gd_base64(s ? s->valuestring : "", &b, &len);
    if (rc == -2)
        return nomem(err);
    if (rc)
        return want(err, n, key, "base64 text in \"s\"");
    *out = (char *)b;
    return DG_OK;
}

static dg_status get_type(dg_error *err, const dgc_node *n, const char *key,
                          const cJSON *v, dg_dtype *out)
{
    const char *what;
    if (!cJSON_IsObject(v) || !dgc_gd_field(v, "type", NULL))
        return want_type(err, n, key, "a type ({\"type\": \"DT_FLOAT\"})", v);
    if (dgc_gd_dtype(dgc_gd_field(v, "type", NULL), out, &what))
        return AERR("node '%s': attr '%s': unsupported dtype %s (float32, "
                    "float64, int32, int64, bool)", n->name, key, what);
    return DG_OK;
}

/* {"f": 0.001}; an empty AttrValue is 0. */
static dg_status get_float(dg_error *err, const dgc_node *n, const char *key,
                           const cJSON *v, double *out)
{
    const cJSON *f = dgc_gd_field(v, "f", NULL);
    *out = 0;
    if (!cJSON_IsObject(v) || (!f && v->child))
        return want_type(err, n, key, "a float ({\"f\": <number>})", v);
    if (f && json_f64(f, out))
        return want(err, n, key, "a float ({\"f\": <number>})");
    return DG_OK;
}

/* {"list": {"i": ["1", "2", ...]}} -> the node's ints attr `key`. */
static dg_status set_int_list(const dgc_jdoc *doc, dg_error *err,
                              dgc_node *n, const char *key, const cJSON *v)
{
    const cJSON *l = dgc_gd_field(v, "list", NULL);
    const cJSON *is = dgc_gd_field(l, "i", NULL);
    int64_t vals[16];
    int cnt = 0;
    if (!cJSON_IsObject(v) || (l && !cJSON_IsObject(l)) ||
        (is && !cJSON_IsArray(is)))
        return want_type(err, n, key, "a list of ints ({\"list\": "
                         "{\"i\": [...]}})", v);
    for (const cJSON *e = is ? is->child : NULL; e; e = e->next) {
        if (cnt == 16 || json_i64(doc, e, &vals[cnt]))
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
static dg_status colocation(dgc_graph *g, int32_t id, const cJSON *v,
                            dgc_strpool *cls, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    const cJSON *l = dgc_gd_field(v, "list", NULL);
    const cJSON *ss = dgc_gd_field(l, "s", NULL);
    if (!cJSON_IsObject(v) || (l && !cJSON_IsObject(l)) ||
        (ss && !cJSON_IsArray(ss)))
        return want(err, n, "_class", "a list of strings ({\"list\": "
                    "{\"s\": [...]}})");
    for (const cJSON *e = ss ? ss->child : NULL; e; e = e->next) {
        unsigned char *b;
        size_t len;
        int rc = cJSON_IsString(e) ? dgc_gd_base64(e->valuestring, &b, &len)
                                   : -1;
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
                            const cJSON *v, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    const cJSON *t = dgc_gd_field(v, "tensor", NULL);
    if (!is_op(n, "Const"))
        return AERR("node '%s': attr 'value' is not supported on op %s",
                    n->name, dgc_op_name(n->op));
    if (!cJSON_IsObject(v) || !t)
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

/* `shape` of a Placeholder or Variable. */
static dg_status shape_attr(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                            const cJSON *v, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    int feed = dgc_op_has(n->op, DGC_OP_FEED);
    if (!feed && !dgc_op_has(n->op, DGC_OP_VARIABLE))
        return AERR("node '%s': attr 'shape' is not supported on op %s",
                    n->name, dgc_op_name(n->op));
    const cJSON *s = dgc_gd_field(v, "shape", NULL);
    if (!cJSON_IsObject(v) || (!s && v->child))
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
                      const char *k, const cJSON *v, dg_error *err,
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
        const cJSON *ty = dgc_gd_field(v, "type", NULL);
        if (cJSON_IsString(ty) && strcmp(ty->valuestring, "DT_RESOURCE") == 0)
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
        const cJSON *x = dgc_gd_field(v, "shape", NULL);
        if (out) {
            const cJSON *l = dgc_gd_field(v, "list", NULL);
            x = dgc_gd_field(l, "shape", NULL);
            x = cJSON_IsArray(x) ? x->child : NULL;
        }
        dg_shape sh;
        char msg[200];
        int rc = x ? dgc_gd_shape(doc, x, &sh, msg, sizeof msg) : 1;
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
                             const char *k, const cJSON *v, const char *tf_op)
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
                       const char *tf_op, const cJSON *attr, dgc_strpool *cls,
                       dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    if (attr && !cJSON_IsObject(attr))
        return AERR("node '%s': 'attr' must be an object, got %s", n->name,
                    dgc_json_kind(attr));
    const char *dup;
    if (attr && dgc_json_dup_key(attr, &dup))
        return AERR("node '%s': duplicate attr '%s'", n->name, dup);
    dg_status st = DG_OK;
    for (const cJSON *v = attr ? attr->child : NULL; v && !st; v = v->next) {
        const char *k = v->string;
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
                    n->op == DGC_OPID_Multinomial)) {
            if (!(st = get_type(err, n, k, v, &t)) &&
                dgc_node_set_dtype(n, k[0] == 'T' ? "dtype" : k, t))
                st = nomem(err);
        } else if (strcmp(k, "T") == 0 && n->op == DGC_OPID_IdentityN) {
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
