/*
 * load_tensor.c -- literal tensors from JSON (Const `value`, Variable
 * `init`): nesting gives the shape, a `shape` attr reshapes a flat array or
 * fills from a scalar, the dtype is given or inferred, and every element is
 * range-checked against its dtype.
 */
#include "load_priv.h"
#include "dg_alloc.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

#define MAX_FILL (1ll << 28)

typedef struct leaves {
    const cJSON **v;
    int64_t n, cap;
} leaves;

static int leaves_push(leaves *l, const cJSON *x)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 16;
        const cJSON **nv = dg_realloc((void *)l->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

/* Check x (at depth d) against dims; collect leaves.  Returns 0, -1 ragged,
 * -2 nomem. */
static int collect(const cJSON *x, int d, const dg_shape *s, leaves *l)
{
    if (d == s->rank) {
        if (cJSON_IsArray(x))
            return -1;
        return leaves_push(l, x) ? -2 : 0;
    }
    if (!cJSON_IsArray(x))
        return -1;
    int64_t cnt = 0;
    for (const cJSON *e = x->child; e; e = e->next) {
        int rc = collect(e, d + 1, s, l);
        if (rc)
            return rc;
        cnt++;
    }
    return cnt == s->dims[d] ? 0 : -1;
}

static void shape_text(const dg_shape *s, char *buf, size_t n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int i = 0; i < s->rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? "," : "",
                              (long long)s->dims[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

static int store(const dgc_jdoc *doc, const cJSON *x, dg_dtype t, void *dst,
                 char *msg, size_t msgsz)
{
    if (t == DG_BOOL) {
        if (!cJSON_IsBool(x)) {
            snprintf(msg, msgsz, "expected true or false for dtype bool, got %s",
                     dgc_json_kind(x));
            return -1;
        }
        *(uint8_t *)dst = cJSON_IsTrue(x) ? 1 : 0;
        return 0;
    }
    if (!cJSON_IsNumber(x)) {
        snprintf(msg, msgsz, "expected a number for dtype %s, got %s",
                 dg_dtype_name(t), dgc_json_kind(x));
        return -1;
    }
    double d = x->valuedouble;
    if (t == DG_F64) {
        *(double *)dst = d;
        return 0;
    }
    if (t == DG_F32) {
        if (d > FLT_MAX || d < -FLT_MAX) {
            snprintf(msg, msgsz, "value %g overflows float32", d);
            return -1;
        }
        *(float *)dst = (float)d;
        return 0;
    }
    int64_t v;
    int rc = dgc_json_int64(doc, x, &v);
    if (rc == 1) {
        snprintf(msg, msgsz, "value %g is not an integer (dtype %s)", d,
                 dg_dtype_name(t));
        return -1;
    }
    if (rc == 2 || (t == DG_I32 && (v > INT32_MAX || v < INT32_MIN))) {
        if (rc == 2)
            snprintf(msg, msgsz, "integer literal overflows %s",
                     dg_dtype_name(t));
        else
            snprintf(msg, msgsz, "value %lld overflows %s", (long long)v,
                     dg_dtype_name(t));
        return -1;
    }
    if (t == DG_I32)
        *(int32_t *)dst = (int32_t)v;
    else
        *(int64_t *)dst = v;
    return 0;
}

int dgc_tensor_from_json(const dgc_jdoc *doc, const cJSON *v, int dtype,
                         int int_default, const dg_shape *shape,
                         dg_tensor **out, char *msg, size_t msgsz)
{
    *out = NULL;
    dg_shape s;
    memset(&s, 0, sizeof s);
    if (!cJSON_IsArray(v) && !cJSON_IsNumber(v) && !cJSON_IsBool(v)) {
        snprintf(msg, msgsz, "must be a number, a bool or an array, got %s",
                 dgc_json_kind(v));
        return -1;
    }
    for (const cJSON *x = v; cJSON_IsArray(x); x = x->child) {
        if (s.rank == DG_MAX_RANK) {
            snprintf(msg, msgsz, "nested deeper than %d dimensions",
                     DG_MAX_RANK);
            return -1;
        }
        s.dims[s.rank++] = cJSON_GetArraySize(x);
        if (!x->child)
            break;
    }
    leaves l = {NULL, 0, 0};
    int rc = collect(v, 0, &s, &l);
    if (rc) {
        dg_free((void *)l.v);
        if (rc == -2) {
            snprintf(msg, msgsz, "out of memory");
            return -2;
        }
        snprintf(msg, msgsz, "ragged nested array (every row must have "
                             "the same length and depth)");
        return -1;
    }
    int n_bool = 0, n_num = 0, all_int = 1;
    for (int64_t i = 0; i < l.n; i++) {
        if (cJSON_IsBool(l.v[i])) {
            n_bool++;
        } else if (cJSON_IsNumber(l.v[i])) {
            n_num++;
            if (!dgc_json_is_intlit(l.v[i]))
                all_int = 0;
        } else {
            snprintf(msg, msgsz, "elements must be numbers or bools, got %s",
                     dgc_json_kind(l.v[i]));
            dg_free((void *)l.v);
            return -1;
        }
    }
    dg_dtype t;
    if (dtype >= 0) {
        t = (dg_dtype)dtype;
    } else if (n_bool && n_num) {
        snprintf(msg, msgsz, "mixes numbers and bools");
        dg_free((void *)l.v);
        return -1;
    } else if (n_bool) {
        t = DG_BOOL;
    } else {
        t = (int_default && all_int && n_num) ? DG_I32 : DG_F32;
        /* like TF's convert_to_tensor: int32 unless a literal needs int64 */
        for (int64_t i = 0; t == DG_I32 && i < l.n; i++) {
            int64_t x;
            if (dgc_json_int64(doc, l.v[i], &x) == 0 &&
                (x > INT32_MAX || x < INT32_MIN))
                t = DG_I64;
        }
    }
    dg_shape ts = s;
    int fill = 0;
    if (shape) {
        int64_t want = dg_shape_numel(shape);
        if (s.rank == 0 && want != 1) {
            if (want > MAX_FILL) {
                snprintf(msg, msgsz, "filling %lld elements from a scalar is "
                         "too large", (long long)want);
                dg_free((void *)l.v);
                return -1;
            }
            fill = 1;
        } else if (want != l.n) {
            char a[200], b[200];
            shape_text(&s, a, sizeof a);
            shape_text(shape, b, sizeof b);
            snprintf(msg, msgsz, "value of shape %s has %lld elements but "
                     "shape %s needs %lld", a, (long long)l.n, b,
                     (long long)want);
            dg_free((void *)l.v);
            return -1;
        }
        ts = *shape;
    }
    dg_tensor *tn = dg_tensor_new(t, &ts);
    if (!tn) {
        snprintf(msg, msgsz, "out of memory for a literal");
        dg_free((void *)l.v);
        return -2;
    }
    size_t es = dg_dtype_size(t);
    for (int64_t i = 0; i < l.n; i++)
        if (store(doc, l.v[i], t, (char *)tn->data + (size_t)i * es, msg,
                  msgsz)) {
            dg_tensor_free(tn);
            dg_free((void *)l.v);
            return -1;
        }
    if (fill) {
        int64_t total = dg_shape_numel(&ts);
        for (int64_t i = 1; i < total; i++)
            memcpy((char *)tn->data + (size_t)i * es, tn->data, es);
    }
    dg_free((void *)l.v);
    *out = tn;
    return 0;
}
