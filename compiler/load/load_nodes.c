/*
 * load_nodes.c -- the elements of a graph file's `nodes` array -> IR nodes.
 *
 * Nodes arrive one cJSON object at a time (the caller may free each object
 * right after dgc_nodes_add), so everything a node needs later is copied
 * out: inputs and colocate_with names go to one string pool and are
 * resolved by dgc_nodes_finish once every name is known (inputs may refer
 * forward).  Error order is that of two passes over the file: first every
 * node's fields, name and op; then, node by node, inputs, device,
 * colocate_with and attrs.  The first error of the second kind is kept
 * aside ("deferred") while the first kind is still checked for later nodes.
 */
#include "load_priv.h"
#include "ops.h"
#include "devices.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

/* Deferred error stages, in the order dgc_nodes_finish checks them. */
enum { ST_INPUTS, ST_DEVICE, ST_COLOC, ST_ATTRS };

static dg_status bad_node(dg_error *err, int i, const char *name,
                          const char *fmt, const char *a)
{
    char what[300];
    snprintf(what, sizeof what, fmt, a);
    if (name)
        return dg_err(err, DG_E_GRAPH, "node '%s': %s", name, what);
    return dg_err(err, DG_E_GRAPH, "node #%d: %s", i, what);
}

dg_status dgc_nodes_begin(dgc_nodeload *L, dgc_graph *g, const dgc_jdoc *doc,
                          int cnt, dg_error *err)
{
    memset(L, 0, sizeof *L);
    L->g = g;
    L->doc = doc;
    L->def_node = -1;
    /* size the node array and name map for the whole file at once */
    dg_strmap_free(&g->names);
    if (dg_strmap_init(&g->names, (size_t)cnt + 64))
        return dg_err_nomem(err, "name map");
    if (cnt > 0) {
        g->nodes = dg_calloc((size_t)cnt, sizeof *g->nodes);
        if (!g->nodes)
            return dg_err_nomem(err, "graph nodes");
        dg_mem_hint_huge(g->nodes, (size_t)cnt * sizeof *g->nodes);
        g->cap_nodes = cnt;
    }
    if (dgc_strpool_reserve(&L->pool, 4096) ||
        dg_strmap_init(&L->ops, (size_t)dgc_n_ops * 2))
        return dg_err_nomem(err, "loader");
    for (int i = 0; i < dgc_n_ops; i++)
        if (dg_strmap_put(&L->ops, dgc_ops[i].name, i) < 0 ||
            (dgc_ops[i].alias && dg_strmap_put(&L->ops, dgc_ops[i].alias, i) < 0))
            return dg_err_nomem(err, "loader");
    return DG_OK;
}

void dgc_nodes_end(dgc_nodeload *L)
{
    dg_strmap_free(&L->ops);
    dgc_strpool_free(&L->pool);
}

/* Index of a node field (name, op, inputs, device, colocate_with, attrs)
 * or -1. */
static int field_of(const char *k)
{
    switch (k[0]) {
    case 'n': return strcmp(k, "name") == 0 ? 0 : -1;
    case 'o': return strcmp(k, "op") == 0 ? 1 : -1;
    case 'i': return strcmp(k, "inputs") == 0 ? 2 : -1;
    case 'd': return strcmp(k, "device") == 0 ? 3 : -1;
    case 'c': return strcmp(k, "colocate_with") == 0 ? 4 : -1;
    case 'a': return strcmp(k, "attrs") == 0 ? 5 : -1;
    default: return -1;
    }
}

/* Check a node's fields, name and op; add it to the graph. */
static dg_status add_node(dgc_nodeload *L, const cJSON *x, int i,
                          const cJSON **fields, dg_error *err)
{
    dgc_graph *g = L->g;
    if (!cJSON_IsObject(x))
        return dg_err(err, DG_E_GRAPH, "node #%d: must be an object, got %s",
                      i, dgc_json_kind(x));
    /* one pass: the fields, the last "name" (error messages use it) and
     * the first unknown or repeated field */
    const cJSON *name = NULL, *bad = NULL;
    int bad_dup = 0;
    memset(fields, 0, 6 * sizeof *fields);
    for (const cJSON *k = x->child; k; k = k->next) {
        int f = field_of(k->string);
        if (f == 0)
            name = k;
        if (bad)
            continue;
        if (f < 0)
            bad = k;
        else if (fields[f])
            bad = k, bad_dup = 1;
        else
            fields[f] = k;
    }
    const char *nm = (name && cJSON_IsString(name)) ? name->valuestring : NULL;
    if (bad)
        return bad_node(err, i, nm, bad_dup ? "duplicate field '%s'"
                                            : "unknown field '%s'", bad->string);
    const cJSON *op = fields[1];
    if (!name)
        return bad_node(err, i, NULL, "missing 'name'%s", "");
    if (!nm)
        return bad_node(err, i, NULL, "'name' must be a string, got %s",
                        dgc_json_kind(name));
    if (!dgc_valid_name(nm))
        return bad_node(err, i, nm, "invalid name '%s' (must match "
                        "[A-Za-z0-9.][A-Za-z0-9_./-]*)", nm);
    if (!op)
        return bad_node(err, i, nm, "missing 'op'%s", "");
    if (!cJSON_IsString(op))
        return bad_node(err, i, nm, "'op' must be a string, got %s",
                        dgc_json_kind(op));
    int32_t opi = dg_strmap_get(&L->ops, op->valuestring);
    if (opi < 0)
        return bad_node(err, i, nm, "unknown op '%s' (see `dgrun ops`)",
                        op->valuestring);
    /* like dgc_graph_add_node, but the node array was sized for the whole
     * file and the name goes into the map a few nodes later (insert_one),
     * once its slot has been prefetched: the map is far bigger than the
     * caches, and each put would otherwise wait for memory */
    size_t nl = strlen(nm);
    dgc_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    if (!(n->name = dgc_graph_slab_alloc(g, nl + 1)))
        return dg_err_nomem(err, "node name");
    memcpy(n->name, nm, nl + 1);
    n->flags |= DGC_NODE_SLAB_NAME;
    n->op = opi;
    n->op_alias = dgc_ops[opi].alias &&
                  strcmp(op->valuestring, dgc_ops[opi].alias) == 0;
    n->forward = -1;
    n->group_hint = -1;
    n->device_id = -1;
    n->placed_id = -1;
    uint32_t h = dg_strmap_hash(nm, nl);
    dg_strmap_prefetch(&g->names, h);
    L->ring_h[g->n_nodes % DGC_LOAD_RING] = h;
    g->n_nodes++;
    return DG_OK;
}

/* Put the oldest waiting node name into the map. */
static dg_status insert_one(dgc_nodeload *L, dg_error *err)
{
    dgc_graph *g = L->g;
    int32_t id = L->inserted;
    const char *nm = g->nodes[id].name;
    int rc = dg_strmap_put_h(&g->names, nm, strlen(nm),
                             L->ring_h[id % DGC_LOAD_RING], id);
    if (rc < 0)
        return dg_err_nomem(err, "name map");
    if (rc > 0)
        return dg_err(err, DG_E_GRAPH, "node '%s': duplicate node name", nm);
    L->inserted++;
    return DG_OK;
}

/* Insert every waiting name (0, or the first error: a duplicate name of an
 * earlier node comes before any error of later nodes). */
static dg_status flush(dgc_nodeload *L, dg_error *err)
{
    dg_status st = DG_OK;
    while (!st && L->inserted < L->g->n_nodes)
        st = insert_one(L, err);
    return st;
}

/* Copy a node's input names to the pool, checking their JSON types. */
static dg_status collect_inputs(dgc_nodeload *L, int32_t id,
                                const cJSON *inputs, dg_error *err)
{
    const char *nm = L->g->nodes[id].name;
    if (!inputs)
        return DG_OK;
    if (!cJSON_IsArray(inputs))
        return dg_err(err, DG_E_GRAPH, "node '%s': 'inputs' must be a list "
                      "of strings, got %s", nm, dgc_json_kind(inputs));
    for (const cJSON *e = inputs->child; e; e = e->next)
        if (!cJSON_IsString(e))
            return dg_err(err, DG_E_GRAPH, "node '%s': 'inputs' must be a "
                          "list of strings, got %s in it", nm, dgc_json_kind(e));
    for (const cJSON *e = inputs->child; e; e = e->next) {
        if (dgc_strpool_add(&L->pool, e->valuestring))
            return dg_err_nomem(err, "inputs");
        L->g->nodes[id].n_inputs++; /* raw count until dgc_nodes_finish */
    }
    return DG_OK;
}

static dg_status parse_device(dgc_graph *g, int32_t id, const cJSON *device,
                              dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    if (!device || cJSON_IsNull(device))
        return DG_OK;
    if (!cJSON_IsString(device))
        return dg_err(err, DG_E_GRAPH, "node '%s': 'device' must be a "
                      "string, got %s", n->name, dgc_json_kind(device));
    dgc_devspec ds;
    if (dgc_devspec_parse(device->valuestring, &ds))
        return dg_err(err, DG_E_GRAPH, "node '%s': Malformed device "
                      "specification '%s'", n->name, device->valuestring);
    if (device->valuestring[0] && !(n->device = dg_strdup(device->valuestring)))
        return dg_err_nomem(err, "device");
    return DG_OK;
}

/* colocate_with: a name or a list of names, copied to the pool. */
static dg_status collect_coloc(dgc_nodeload *L, int32_t id, const cJSON *x,
                               dg_error *err)
{
    if (!x)
        return DG_OK;
    dgc_node *n = &L->g->nodes[id];
    n->n_coloc = 0;
    int ok = cJSON_IsString(x) || cJSON_IsArray(x);
    for (const cJSON *e = cJSON_IsArray(x) ? x->child : NULL; e; e = e->next)
        if (!cJSON_IsString(e))
            ok = 0;
    if (!ok)
        return dg_err(err, DG_E_GRAPH, "node '%s': 'colocate_with' must be "
                      "a list of node names", L->g->nodes[id].name);
    if (cJSON_IsString(x)) {
        if (dgc_strpool_add(&L->pool, x->valuestring))
            return dg_err_nomem(err, "colocate_with");
        n->n_coloc = 1;
        return DG_OK;
    }
    for (const cJSON *e = x->child; e; e = e->next) {
        if (dgc_strpool_add(&L->pool, e->valuestring))
            return dg_err_nomem(err, "colocate_with");
        n->n_coloc++;
    }
    return DG_OK;
}

/* Keep the first second-pass error aside; nomem is returned at once. */
static dg_status defer(dgc_nodeload *L, int32_t id, int stage, dg_status st,
                       const dg_error *e, dg_error *err)
{
    if (st == DG_E_NOMEM) {
        *err = *e;
        return st;
    }
    L->def_node = id;
    L->def_stage = stage;
    L->def_err = *e;
    return DG_OK;
}

static dg_status add_rest(dgc_nodeload *L, const cJSON *const *f,
                          dg_error *err)
{
    if (L->def_node >= 0)
        return DG_OK;
    int32_t id = L->g->n_nodes - 1;
    dg_status st;
    dg_error e;
    L->g->nodes[id].n_coloc = -1;
    if ((st = collect_inputs(L, id, f[2], &e)))
        return defer(L, id, ST_INPUTS, st, &e, err);
    if ((st = parse_device(L->g, id, f[3], &e)))
        return defer(L, id, ST_DEVICE, st, &e, err);
    if ((st = collect_coloc(L, id, f[4], &e)))
        return defer(L, id, ST_COLOC, st, &e, err);
    if ((st = dgc_load_attrs(L->g, L->doc, id, f[5], &e)))
        return defer(L, id, ST_ATTRS, st, &e, err);
    return DG_OK;
}

dg_status dgc_nodes_add(dgc_nodeload *L, const cJSON *x, int i, dg_error *err)
{
    const cJSON *f[6];
    dg_status st = add_node(L, x, i, f, err);
    if (!st)
        st = add_rest(L, f, err);
    if (!st && L->g->n_nodes - L->inserted >= DGC_LOAD_RING)
        st = insert_one(L, err);
    if (st) {
        dg_status fs = flush(L, err);
        if (fs)
            return fs;
    }
    return st;
}

dg_status dgc_resolve_inputs(dgc_graph *g, int32_t id, const char **s,
                             int n_in, int32_t *mark, int *unknown,
                             dg_error *err)
{
    if (unknown)
        *unknown = 0;
    dgc_node *n = &g->nodes[id];
    const dgc_op_def *d = &dgc_ops[n->op];
    int cnt = 0, n_ctrl = 0;
    const char *p0 = *s;
    for (int k = 0; k < n_in; k++) {
        if (p0[0] == '^')
            n_ctrl++;
        else
            cnt++;
        p0 += strlen(p0) + 1;
    }
    if (cnt > 0) {
        n->inputs = dgc_graph_slab_alloc(g, sizeof *n->inputs * (size_t)cnt);
        if (!n->inputs)
            return dg_err_nomem(err, "inputs");
        n->flags |= DGC_NODE_SLAB_INPUTS;
    }
    if (n_ctrl > 0 && !(n->ctrl = dg_malloc(sizeof *n->ctrl * (size_t)n_ctrl)))
        return dg_err_nomem(err, "inputs");
    const char *first_ctrl = NULL;
    for (int k = 0; k < n_in; k++) {
        const char *str = *s;
        size_t len = strlen(str);
        *s += len + 1;
        if (str[0] == '^') {
            int32_t c = dg_strmap_getn(&g->names, str + 1, len - 1);
            if (c < 0 && unknown)
                *unknown = 1;
            if (c < 0)
                return dg_err(err, DG_E_GRAPH, "node '%s': control input '%s' "
                              "names unknown node '%s'", n->name, str, str + 1);
            if (!first_ctrl)
                first_ctrl = str;
            if (mark[c] != id + 1) {
                mark[c] = id + 1;
                n->ctrl[n->n_ctrl++] = c;
            }
            continue;
        }
        if (first_ctrl)
            return dg_err(err, DG_E_GRAPH, "node '%s': control input '%s' "
                          "before data input '%s' (control inputs come last)",
                          n->name, first_ctrl, str);
        const char *colon = memchr(str, ':', len);
        size_t nl = colon ? (size_t)(colon - str) : len;
        long long kk = 0;
        if (colon) {
            const char *p = colon + 1;
            if (!*p)
                return dg_err(err, DG_E_GRAPH, "node '%s': malformed input "
                              "'%s'", n->name, str);
            for (; *p; p++) {
                if (*p < '0' || *p > '9' || kk > 100000000)
                    return dg_err(err, DG_E_GRAPH, "node '%s': malformed input "
                                  "'%s'", n->name, str);
                kk = kk * 10 + (*p - '0');
            }
        }
        int32_t p = dg_strmap_getn(&g->names, str, nl);
        if (p < 0 && unknown)
            *unknown = 1;
        if (p < 0)
            return dg_err(err, DG_E_GRAPH, "node '%s': input '%s' names unknown "
                          "node '%.*s'", n->name, str, (int)nl, str);
        int nout = dgc_ops[g->nodes[p].op].n_out;
        if (nout >= 0 && kk >= nout) /* variadic: checked by inference */
            return dg_err(err, DG_E_GRAPH, "node '%s': input '%s' refers to "
                          "output %lld of '%s', which has %d output%s", n->name,
                          str, kk, g->nodes[p].name, nout, nout == 1 ? "" : "s");
        n->inputs[n->n_inputs].node = p;
        n->inputs[n->n_inputs].index = (int32_t)kk;
        n->n_inputs++;
    }
    if (n->n_inputs < d->min_in ||
        (d->max_in != DGC_IN_ANY && n->n_inputs > d->max_in)) {
        char want[64];
        if (d->min_in == d->max_in)
            snprintf(want, sizeof want, "%d", d->min_in);
        else if (d->max_in == DGC_IN_ANY)
            snprintf(want, sizeof want, "at least %d", d->min_in);
        else
            snprintf(want, sizeof want, "%d to %d", d->min_in, d->max_in);
        return dg_err(err, DG_E_GRAPH, "node '%s': op %s expects %s data "
                      "input%s, got %d", n->name, d->name, want,
                      (d->min_in == 1 && d->max_in == 1) ? "" : "s",
                      n->n_inputs);
    }
    return DG_OK;
}

static dg_status resolve_coloc(dgc_graph *g, int32_t id, const char **s,
                               int n_co, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    n->coloc = dg_malloc(sizeof *n->coloc * (size_t)(n_co > 0 ? n_co : 1));
    if (!n->coloc)
        return dg_err_nomem(err, "colocate_with");
    for (int k = 0; k < n_co; k++) {
        const char *t = *s;
        *s += strlen(t) + 1;
        if (strncmp(t, "loc:@", 5) == 0) /* TF's _class spelling */
            t += 5;
        int32_t c = dg_strmap_get(&g->names, t);
        if (c < 0)
            return dg_err(err, DG_E_GRAPH, "node '%s': colocate_with names "
                          "unknown node '%s'", n->name, t);
        n->coloc[n->n_coloc++] = c;
    }
    return DG_OK;
}

/* Prefetch the map slots of the input names at *s (node id's, resolved a
 * few nodes later, by which time the slots are in the cache); advance *s
 * past the node's names. */
#define PREFETCH_AHEAD 8

static void prefetch_inputs(const dgc_nodeload *L, int32_t id, const char **s)
{
    const dgc_node *n = &L->g->nodes[id];
    for (int k = 0; k < n->n_inputs; k++) {
        const char *p = *s;
        size_t len = strlen(p);
        const char *name = p + (p[0] == '^');
        size_t rest = len - (size_t)(name - p);
        const char *colon = memchr(name, ':', rest);
        size_t nl = colon ? (size_t)(colon - name) : rest;
        dg_strmap_prefetch(&L->g->names, dg_strmap_hash(name, nl));
        *s += len + 1;
    }
    for (int k = 0; k < n->n_coloc; k++)
        *s += strlen(*s) + 1;
}

dg_status dgc_nodes_finish(dgc_nodeload *L, dg_error *err)
{
    dgc_graph *g = L->g;
    dg_status st = flush(L, err);
    if (st)
        return st;
    g->n_file_nodes = g->n_nodes;
    int32_t *mark = dg_calloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1),
                              sizeof *mark);
    if (!mark)
        return dg_err_nomem(err, "loader");
    /* the pool holds each node's names in node order: two cursors walk it,
     * one resolving, one prefetching PREFETCH_AHEAD nodes ahead */
    const char *s = L->pool.buf, *ps = L->pool.buf;
    int32_t pi = 0;
    for (int32_t i = 0; i < g->n_nodes && !st; i++) {
        for (; pi < g->n_nodes && pi <= i + PREFETCH_AHEAD; pi++)
            prefetch_inputs(L, pi, &ps);
        int def = i == L->def_node;
        if (def && L->def_stage == ST_INPUTS)
            break;
        dgc_node *n = &g->nodes[i];
        int n_in = n->n_inputs, n_co = n->n_coloc;
        n->n_inputs = 0;
        n->n_coloc = 0;
        const char *names = s;
        int unknown = 0;
        st = dgc_resolve_inputs(g, i, &s, n_in, mark, &unknown, err);
        if (st && unknown) {
            /* maybe a node a compiler pass generates (g/a, train/...):
             * kept aside until dg_compile has run those passes (pending.c)
             * or rejected with this message once the sections are known */
            s = names;
            for (int k = 0; k < n_in; k++)
                s += strlen(s) + 1;
            st = dgc_pending_stash(g, i, names, (size_t)(s - names), n_in,
                                   err);
        }
        if (st || (def && L->def_stage <= ST_COLOC))
            break;
        if (n_co >= 0)
            st = resolve_coloc(g, i, &s, n_co, err);
        if (def)
            break;
    }
    dg_free(mark);
    if (!st && L->def_node >= 0 &&
        !(st = dgc_pending_first_error(g, L->def_node, err))) {
        *err = L->def_err;
        st = err->code;
    }
    return st;
}
