/*
 * attr_get.c -- attribute values by id (attr_get.h): the node's attrs
 * compared by id, then the op schema's default, decoded from its text once
 * per process (pthread_once) into a table shared by ops with one schema.
 */
#include "attr_get.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

/* decoded defaults: one dgc_attr per schema row (NULL text: key NULL,
 * absent), ops that share a schema array share their rows */
enum { POOL = 512, INTS_POOL = 512 };
static dgc_attr pool[POOL];
static int64_t ints_pool[INTS_POOL];
static int first[DGC_N_OPS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void die(const char *what, const char *op, const char *attr)
{
    fprintf(stderr, "dgrun: internal error: %s (op %s, attr %s)\n", what, op,
            attr);
    abort();
}

/* Decode default text `t` of type `k` into *a (ints into ints_pool). */
static void decode(dgc_attr *a, dgc_attr_kind k, const char *t, int *n_ints,
                   const char *op, const char *name)
{
    a->kind = k;
    switch (k) {
    case DGC_A_BOOL: a->i = strcmp(t, "true") == 0; break;
    case DGC_A_INT: a->i = strtoll(t, NULL, 10); a->f = (double)a->i; break;
    case DGC_A_FLOAT: a->f = strtod(t, NULL); a->i = (int64_t)a->f; break;
    case DGC_A_STR: a->s = (char *)t; break;
    case DGC_A_DTYPE: {
        dg_dtype d;
        if (dg_dtype_parse(t, &d))
            die("bad dtype default", op, name);
        a->i = d;
        break;
    }
    case DGC_A_INTS: {
        a->ints = &ints_pool[*n_ints];
        for (const char *p = t; *p;) {
            if (*p == '[' || *p == ',' || *p == ']' || *p == ' ') {
                p++;
                continue;
            }
            char *end;
            int64_t v = strtoll(p, &end, 10);
            if (end == p || *n_ints >= INTS_POOL)
                die("bad ints default", op, name);
            ints_pool[(*n_ints)++] = v;
            a->n++;
            p = end;
        }
        a->i = a->n > 0 ? a->ints[0] : 0;
        break;
    }
    case DGC_A_INIT:
        if (strcmp(t, "zeros") != 0)
            die("unsupported init default", op, name);
        a->init.kind = DGC_INIT_ZEROS;
        break;
    default: die("default of an unsupported type", op, name);
    }
}

static void build(void)
{
    int used = 0, n_ints = 0;
    for (int op = 0; op < DGC_N_OPS; op++) {
        const dgc_attr_spec *s = dgc_ops[op].attrs;
        first[op] = -1;
        for (int o = 0; o < op && first[op] < 0; o++)
            if (dgc_ops[o].attrs == s)
                first[op] = first[o];
        if (first[op] >= 0 || !s)
            continue;
        first[op] = used;
        for (int k = 0; s[k].name; k++, used++) {
            if (used >= POOL)
                die("too many schema rows", dgc_ops[op].name, s[k].name);
            dgc_attr *a = &pool[used];
            a->id = s[k].id;
            if (s[k].dflt) {
                a->key = (char *)s[k].name;
                decode(a, s[k].type, s[k].dflt, &n_ints, dgc_ops[op].name,
                       s[k].name);
            }
        }
    }
}

int dgc_op_has_attr(int op, dgc_attr_id id)
{
    if (id == DGC_AT_dtype)
        return 1;
    const dgc_attr_spec *s = op >= 0 && op < DGC_N_OPS ? dgc_ops[op].attrs
                                                       : NULL;
    for (int k = 0; s && s[k].name; k++)
        if (s[k].id == id)
            return 1;
    return 0;
}

#ifdef NDEBUG
#define CHECK(n, id) ((void)0)
#else
#define CHECK(n, id)                                                        \
    (dgc_op_has_attr((n)->op, id)                                           \
         ? (void)0                                                          \
         : die("attribute read that the op's schema lacks",                 \
               dgc_op_name((n)->op), dgc_attr_id_name(id)))
#endif

const dgc_attr *dgc_attr_at(const dgc_node *n, dgc_attr_id id)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].id == id)
            return &n->attrs[i];
    CHECK(n, id);
    return NULL;
}

const dgc_attr *dgc_attr_get(const dgc_node *n, dgc_attr_id id)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].id == id)
            return &n->attrs[i];
    const dgc_attr_spec *s = n->op >= 0 && n->op < DGC_N_OPS
                                 ? dgc_ops[n->op].attrs
                                 : NULL;
    for (int k = 0; s && s[k].name; k++)
        if (s[k].id == id) {
            pthread_once(&once, build);
            const dgc_attr *a = &pool[first[n->op] + k];
            return a->key ? a : NULL;
        }
    CHECK(n, id); /* not in the schema: only "dtype" may be read */
    return NULL;
}

int64_t dgc_attr_i(const dgc_node *n, dgc_attr_id id)
{
    const dgc_attr *a = dgc_attr_get(n, id);
    if (!a)
        return 0;
    return a->kind == DGC_A_FLOAT ? (int64_t)a->f : a->i;
}

int dgc_attr_b(const dgc_node *n, dgc_attr_id id)
{
    const dgc_attr *a = dgc_attr_get(n, id);
    return a ? a->i != 0 : 0;
}

double dgc_attr_f(const dgc_node *n, dgc_attr_id id)
{
    const dgc_attr *a = dgc_attr_get(n, id);
    if (!a)
        return 0.0;
    return a->kind == DGC_A_FLOAT ? a->f : (double)a->i;
}

const char *dgc_attr_str(const dgc_node *n, dgc_attr_id id)
{
    const dgc_attr *a = dgc_attr_get(n, id);
    return a ? a->s : NULL;
}

const int64_t *dgc_attr_ints(const dgc_node *n, dgc_attr_id id, int *count)
{
    const dgc_attr *a = dgc_attr_get(n, id);
    *count = a && a->ints ? a->n : 0;
    return *count ? a->ints : NULL;
}

const dg_tensor *dgc_attr_tensor(const dgc_node *n, dgc_attr_id id)
{
    const dgc_attr *a = dgc_attr_get(n, id);
    return a ? a->tensor : NULL;
}
