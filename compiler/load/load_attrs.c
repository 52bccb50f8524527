/*
 * load_attrs.c -- a node's `attrs` object into dgc_attr values, decoded
 * as the op's attribute schema (ops.c) types them; keys must be in the
 * schema or be "dtype" (a misspelt one: an error with a did-you-mean), and
 * Variables get their dtype and shape from a literal init the way TF
 * does.
 */
#include "load_priv.h"
#include "ops.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

/* The kind of attr `key` on op: its type in the op's schema (ops.c), or
 * DGC_A_DTYPE for "dtype", which every op takes; -1 when the op has no
 * such attr (or only one a pass sets). */
static int kind_of(const char *key, int op, dgc_attr_kind *k)
{
    if (strcmp(key, "dtype") == 0) {
        *k = DGC_A_DTYPE;
        return 0;
    }
    const dgc_attr_spec *a = dgc_op_attr(op, key);
    if (!a || (a->flags & DGC_AS_INTERNAL))
        return -1;
    *k = a->type;
    return 0;
}

static dg_status bad(dg_error *err, const dgc_node *n, const char *key,
                     const char *what, const cJSON *v)
{
    return dg_err(err, DG_E_GRAPH, "node '%s': attr '%s' must be %s, got %s",
                  n->name, key, what, dgc_json_kind(v));
}

static dg_status parse_shape(const dgc_jdoc *doc, dgc_node *n, const char *key,
                             const cJSON *v, dg_shape *s, dg_error *err)
{
    if (!cJSON_IsArray(v))
        return bad(err, n, key, "a list of dimensions", v);
    memset(s, 0, sizeof *s);
    int allow_unknown = dgc_op_has(n->op, DGC_OP_FEED) ||
                        strcmp(dgc_op_name(n->op), "Reshape") == 0 ||
                        n->op == DGC_OPID_EnsureShape || /* partial dims */
                        dgc_op_has(n->op, DGC_OP_RESOURCE); /* issue 11 */
    int64_t numel = 1;
    for (const cJSON *e = v->child; e; e = e->next) {
        if (s->rank == DG_MAX_RANK)
            return dg_err(err, DG_E_GRAPH, "node '%s': attr '%s' has more "
                          "than %d dimensions", n->name, key, DG_MAX_RANK);
        int64_t d;
        /* null is TF's None ([None, 784] written from Python) = -1 */
        int rc = cJSON_IsNull(e) ? (d = -1, 0) : dgc_json_int64(doc, e, &d);
        if (rc == 1)
            return dg_err(err, DG_E_GRAPH, "node '%s': attr '%s' must be a "
                          "list of integers", n->name, key);
        if (rc == 2 || d > (1ll << 62))
            return dg_err(err, DG_E_GRAPH, "node '%s': attr '%s': dimension "
                          "overflows", n->name, key);
        if (d < -1 || (d == -1 && !allow_unknown))
            return dg_err(err, DG_E_GRAPH, "node '%s': attr '%s': invalid "
                          "dimension %lld (-1 is allowed only for Placeholder, "
                          "Reshape and EnsureShape)", n->name, key, (long long)d);
        if (d > 0) {
            if (numel > INT64_MAX / d)
                return dg_err(err, DG_E_GRAPH, "node '%s': attr '%s': shape "
                              "overflows (too many elements)", n->name, key);
            numel *= d;
        }
        s->dims[s->rank++] = d;
    }
    return DG_OK;
}

static dg_status parse_ints(const dgc_jdoc *doc, dgc_node *n, const char *key,
                            const cJSON *v, dgc_attr *a, dg_error *err)
{
    int cnt = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 1;
    if (!cJSON_IsArray(v) && !cJSON_IsNumber(v))
        return bad(err, n, key, "an integer or a list of integers", v);
    a->ints = dg_malloc(sizeof(int64_t) * (size_t)(cnt > 0 ? cnt : 1));
    if (!a->ints)
        return dg_err_nomem(err, "attrs");
    a->n = cnt;
    const cJSON *e = cJSON_IsArray(v) ? v->child : v;
    for (int i = 0; i < cnt; i++, e = e->next) {
        int64_t x;
        int rc = dgc_json_int64(doc, e, &x);
        if (rc || x > INT32_MAX || x < INT32_MIN)
            return dg_err(err, DG_E_GRAPH, "node '%s': attr '%s' must be an "
                          "integer or a list of integers", n->name, key);
        a->ints[i] = x;
    }
    a->i = cnt > 0 ? a->ints[0] : 0;
    return DG_OK;
}

static dg_status parse_init(const dgc_jdoc *doc, dgc_node *n, const cJSON *v,
                            int dtype, const dg_shape *shape, dgc_attr *a,
                            dg_error *err)
{
    char msg[400];
    if (cJSON_IsObject(v)) {
        const cJSON *k = v->child;
        if (!k || k->next)
            return dg_err(err, DG_E_GRAPH, "node '%s': attr 'init' must have "
                          "exactly one key (random_normal, random_uniform, "
                          "truncated_normal, zeros, glorot_uniform)", n->name);
        if (!cJSON_IsObject(k) && !cJSON_IsNull(k))
            return dg_err(err, DG_E_GRAPH, "node '%s': init '%s' must be an "
                          "object, got %s", n->name, k->string,
                          dgc_json_kind(k));
        const char *p1 = NULL, *p2 = NULL;
        if (strcmp(k->string, "random_normal") == 0) {
            a->init.kind = DGC_INIT_RANDOM_NORMAL;
            p1 = "mean"; p2 = "stddev";
            a->init.a = 0.0; a->init.b = 1.0;
        } else if (strcmp(k->string, "truncated_normal") == 0) {
            a->init.kind = DGC_INIT_TRUNCATED_NORMAL; /* issue 21 */
            p1 = "mean"; p2 = "stddev";
            a->init.a = 0.0; a->init.b = 1.0;
        } else if (strcmp(k->string, "random_uniform") == 0) {
            a->init.kind = DGC_INIT_RANDOM_UNIFORM;
            p1 = "min"; p2 = "max";
            a->init.a = 0.0; a->init.b = 1.0;
        } else if (strcmp(k->string, "zeros") == 0) {
            a->init.kind = DGC_INIT_ZEROS;
        } else if (strcmp(k->string, "glorot_uniform") == 0) {
            a->init.kind = DGC_INIT_GLOROT_UNIFORM;
        } else {
            return dg_err(err, DG_E_GRAPH, "node '%s': unknown initializer "
                          "'%s'", n->name, k->string);
        }
        for (const cJSON *p = cJSON_IsObject(k) ? k->child : NULL; p; p = p->next) {
            int which = (p1 && strcmp(p->string, p1) == 0) ? 1 :
                        (p2 && strcmp(p->string, p2) == 0) ? 2 : 0;
            if (!which)
                return dg_err(err, DG_E_GRAPH, "node '%s': unknown key '%s' "
                              "in initializer '%s'", n->name, p->string,
                              k->string);
            if (!cJSON_IsNumber(p))
                return dg_err(err, DG_E_GRAPH, "node '%s': initializer "
                              "'%s': '%s' must be a number, got %s", n->name,
                              k->string, p->string, dgc_json_kind(p));
            if (which == 1)
                a->init.a = p->valuedouble;
            else
                a->init.b = p->valuedouble;
        }
        if ((a->init.kind == DGC_INIT_RANDOM_NORMAL ||
             a->init.kind == DGC_INIT_TRUNCATED_NORMAL) && a->init.b < 0)
            return dg_err(err, DG_E_GRAPH, "node '%s': %s stddev "
                          "must be >= 0", n->name, k->string);
        if (a->init.kind == DGC_INIT_RANDOM_UNIFORM && a->init.b < a->init.a)
            return dg_err(err, DG_E_GRAPH, "node '%s': random_uniform needs "
                          "min <= max", n->name);
        /* TF: random_normal and glorot_uniform need a float dtype; uniform
         * also takes integers; only zeros fits bool. */
        int fl = dtype < 0 || dtype == DG_F32 || dtype == DG_F64;
        if ((!fl && (a->init.kind == DGC_INIT_RANDOM_NORMAL ||
                     a->init.kind == DGC_INIT_TRUNCATED_NORMAL ||
                     a->init.kind == DGC_INIT_GLOROT_UNIFORM)) ||
            (dtype == DG_BOOL && a->init.kind != DGC_INIT_ZEROS))
            return dg_err(err, DG_E_GRAPH, "node '%s': initializer '%s' "
                          "needs a float dtype, got %s", n->name, k->string,
                          dg_dtype_name((dg_dtype)dtype));
        return DG_OK;
    }
    a->init.kind = DGC_INIT_VALUE;
    int rc = dgc_tensor_from_json(doc, v, dtype, 1, shape, &a->init.value,
                                  msg, sizeof msg);
    if (rc == -2)
        return dg_err_nomem(err, "init literal");
    if (rc)
        return dg_err(err, DG_E_GRAPH, "node '%s': attr 'init': %s", n->name,
                      msg);
    return DG_OK;
}

static dg_status set_attr(dgc_node *n, dgc_attr *a, dg_error *err)
{
    if (dgc_node_set_attr(n, a)) {
        a->key = NULL;
        dgc_attr_clear(a);
        return dg_err_nomem(err, "attrs");
    }
    return DG_OK;
}

static dg_status parse_simple(const dgc_jdoc *doc, dgc_node *n,
                              const cJSON *v, const char *key,
                              dgc_attr_kind kind, dg_error *err)
{
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = (char *)key;
    a.kind = kind;
    dg_status st = DG_OK;
    switch (kind) {
    case DGC_A_BOOL:
        if (!cJSON_IsBool(v))
            return bad(err, n, key, "true or false", v);
        a.i = cJSON_IsTrue(v) ? 1 : 0;
        break;
    case DGC_A_FLOAT:
        if (!cJSON_IsNumber(v))
            return bad(err, n, key, "a number", v);
        a.f = v->valuedouble;
        /* the integer view only of values int64 holds (fuzzing: a decay of
         * 5.6e125 made this cast UB) */
        a.i = a.f > -9.2e18 && a.f < 9.2e18 ? (int64_t)a.f : 0;
        break;
    case DGC_A_INT: {
        int64_t x;
        if (dgc_json_int64(doc, v, &x))
            return bad(err, n, key, "an integer", v);
        a.i = x;
        a.f = (double)x;
        break;
    }
    case DGC_A_STR:
        if (!cJSON_IsString(v))
            return bad(err, n, key, "a string", v);
        if (!(a.s = dg_strdup(v->valuestring)))
            return dg_err_nomem(err, "attrs");
        break;
    case DGC_A_DTYPE: {
        dg_dtype t;
        if (!cJSON_IsString(v))
            return bad(err, n, key, "a dtype name", v);
        if (dg_dtype_parse(v->valuestring, &t))
            return dg_err(err, DG_E_GRAPH, "node '%s': unknown dtype '%s' "
                          "(float32, float64, int32, int64, bool)", n->name,
                          v->valuestring);
        a.i = t;
        break;
    }
    case DGC_A_INTS:
        st = parse_ints(doc, n, key, v, &a, err);
        break;
    case DGC_A_SHAPE: {
        dg_shape s;
        st = parse_shape(doc, n, key, v, &s, err);
        if (st)
            return st;
        if (dgc_node_set_shape(n, key, &s))
            return dg_err_nomem(err, "attrs");
        return DG_OK;
    }
    default:
        return DG_OK;
    }
    if (st) {
        a.key = NULL;
        dgc_attr_clear(&a);
        return st;
    }
    return set_attr(n, &a, err);
}

static int attr_shape(const dgc_node *n, dg_shape *s)
{
    const dgc_attr *a = dgc_node_attr(n, "shape");
    if (!a || a->kind != DGC_A_SHAPE)
        return 0;
    memset(s, 0, sizeof *s);
    s->rank = a->n;
    for (int i = 0; i < a->n; i++)
        s->dims[i] = a->ints[i];
    return 1;
}

dg_status dgc_load_attrs(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                         const cJSON *attrs, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    const dgc_op_def *d = &dgc_ops[n->op];
    if (attrs && !cJSON_IsObject(attrs))
        return dg_err(err, DG_E_GRAPH, "node '%s': attrs must be an object, "
                      "got %s", n->name, dgc_json_kind(attrs));
    const char *dup;
    if (attrs && dgc_json_dup_key(attrs, &dup))
        return dg_err(err, DG_E_GRAPH, "node '%s': duplicate attr '%s'",
                      n->name, dup);
    const cJSON *value = NULL, *init = NULL;
    for (const cJSON *v = attrs ? attrs->child : NULL; v; v = v->next) {
        dgc_attr_kind kind;
        const char *key = v->string;
        /* TF 1's older spelling (tf.reduce_sum(keep_dims=...), and the
         * GraphDef attr name) */
        if (strcmp(key, "keep_dims") == 0 && dgc_op_attr(n->op, "keepdims")) {
            key = "keepdims";
            if (dgc_node_attr(n, key) || cJSON_GetObjectItemCaseSensitive(attrs, key))
                return dg_err(err, DG_E_GRAPH, "node '%s': both keepdims and "
                              "keep_dims given", n->name);
        }
        if (kind_of(key, n->op, &kind)) {
            const char *near = dgc_op_attr_near(n->op, v->string);
            return dg_err(err, DG_E_GRAPH, "node '%s': unknown attr '%s' for "
                          "op %s%s%s%s", n->name, v->string, d->name,
                          near ? " (did you mean '" : "", near ? near : "",
                          near ? "'?)" : "");
        }
        if (kind == DGC_A_TENSOR) {
            value = v;
            continue;
        }
        if (kind == DGC_A_INIT) {
            init = v;
            continue;
        }
        dg_status st = parse_simple(doc, n, v, key, kind, err);
        if (st)
            return st;
        n = &g->nodes[id];
    }
    const dgc_attr *dt = dgc_node_attr(n, "dtype");
    int dtype = dt ? (int)dt->i : -1;
    dg_shape s;
    int has_shape = attr_shape(n, &s);
    char msg[400];
    if (value) {
        dgc_attr a;
        memset(&a, 0, sizeof a);
        a.key = "value";
        a.kind = DGC_A_TENSOR;
        if (has_shape && dg_shape_numel(&s) < 0)
            return dg_err(err, DG_E_GRAPH, "node '%s': a literal's shape "
                          "cannot have -1", n->name);
        int rc = dgc_tensor_from_json(doc, value, dtype, 0,
                                      has_shape ? &s : NULL, &a.tensor, msg,
                                      sizeof msg);
        if (rc == -2)
            return dg_err_nomem(err, "literal value");
        if (rc)
            return dg_err(err, DG_E_GRAPH, "node '%s': attr 'value': %s",
                          n->name, msg);
        dg_status st = set_attr(n, &a, err);
        if (st)
            return st;
    }
    if (dgc_op_has(n->op, DGC_OP_VARIABLE)) {
        dgc_attr a;
        memset(&a, 0, sizeof a);
        a.key = "init";
        a.kind = DGC_A_INIT;
        if (init) {
            dg_status st = parse_init(doc, n, init, dtype,
                                      has_shape ? &s : NULL, &a, err);
            if (st) {
                a.key = NULL;
                dgc_attr_clear(&a);
                return st;
            }
        } else {
            a.init.kind = DGC_INIT_ZEROS;
        }
        dg_tensor *iv = a.init.value;
        dg_status st = set_attr(n, &a, err);
        if (st)
            return st;
        if (dtype < 0 &&
            dgc_node_set_dtype(n, "dtype", iv ? iv->dtype : DG_F32))
            return dg_err_nomem(err, "attrs");
        if (!has_shape) {
            if (!iv)
                return dg_err(err, DG_E_GRAPH, "node '%s': Variable needs a "
                              "shape (attr 'shape' or a literal init)",
                              n->name);
            if (dgc_node_set_shape(n, "shape", &iv->shape))
                return dg_err_nomem(err, "attrs");
        }
    } else if (init) {
        return dg_err(err, DG_E_GRAPH, "node '%s': unknown attr 'init' for "
                      "op %s", n->name, d->name);
    }
    if (n->op == DGC_OPID_Const && !value)
        return dg_err(err, DG_E_GRAPH, "node '%s': Const needs attr 'value'",
                      n->name);
    return DG_OK;
}
