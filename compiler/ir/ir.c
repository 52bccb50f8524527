/*
 * ir.c -- construction, lookup and destruction of the graph IR (ir.h).
 */
#include "ir.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Slab chunks: geometric sizes (64 KiB doubling to 16 MiB), bump
 * allocation in steps of 8 bytes (IR arrays hold pointers, int64 and
 * double at most), zeroed by dg_calloc (fresh pages for big chunks). */
typedef struct dgc_slab_chunk {
    struct dgc_slab_chunk *next;
    size_t used, cap;
    max_align_t data[];
} dgc_slab_chunk;

dgc_graph *dgc_graph_new(const char *path)
{
    dgc_graph *g = dg_calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->path = dg_strdup(path ? path : "<graph>");
    g->allow_soft_placement = -1;
    g->version = 1;
    g->train.n_var_list = -1;
    g->train.colocate_gradients = -1;
    g->train.log_every = 100;
    g->train.train_op = -1;
    g->train.loss_node = -1;
    g->train.global_step = -1;
    if (!g->path || dg_strmap_init(&g->names, 64)) {
        dgc_graph_free(g);
        return NULL;
    }
    return g;
}

void dgc_attr_clear(dgc_attr *a)
{
    dg_free(a->key);
    dg_free(a->s);
    dg_free(a->ints);
    dg_tensor_free(a->tensor);
    dg_tensor_free(a->init.value);
    memset(a, 0, sizeof *a);
}

static void free_strv(char **v, int n)
{
    for (int i = 0; i < n; i++)
        dg_free(v[i]);
    dg_free(v);
}

static void free_feeds(dgc_feed *f, int n)
{
    for (int i = 0; i < n; i++) {
        dg_free(f[i].placeholder);
        dg_free(f[i].file);
    }
    dg_free(f);
}

void dgc_graph_free(dgc_graph *g)
{
    if (!g)
        return;
    dg_cluster_free(g->cluster);
    dg_free(g->replicate.copy);
    dg_free(g->replicate.step);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        dgc_node *n = &g->nodes[i];
        if (!(n->flags & DGC_NODE_SLAB_NAME))
            dg_free(n->name);
        if (!(n->flags & DGC_NODE_SLAB_INPUTS))
            dg_free(n->inputs);
        dg_free(n->ctrl);
        dg_free(n->device);
        dg_free(n->coloc);
        for (int k = 0; k < n->n_attrs; k++)
            dgc_attr_clear(&n->attrs[k]);
        dg_free(n->attrs);
        if (!(n->flags & DGC_NODE_SLAB_OUTPUTS))
            dg_free(n->outputs);
        dg_free(n->requested);
    }
    dg_free(g->nodes);
    dg_strmap_free(&g->names);
    for (int i = 0; i < g->n_gradsets; i++) {
        dg_free(g->gradsets[i].name);
        dg_free(g->gradsets[i].ys);
        dg_free(g->gradsets[i].xs);
        dg_free(g->gradsets[i].grad_ys);
    }
    dg_free(g->gradsets);
    for (int i = 0; i < g->n_collections; i++) {
        dg_free(g->collections[i].name);
        dg_free(g->collections[i].nodes);
    }
    dg_free(g->collections);
    for (int i = 0; i < g->n_rules; i++) {
        free_strv(g->rules[i].ops, g->rules[i].n_ops);
        dg_free(g->rules[i].name_glob);
        dg_free(g->rules[i].device);
        free_strv(g->rules[i].devices, g->rules[i].n_devices);
    }
    dg_free(g->rules);
    free_strv(g->fetch, g->n_fetch);
    dgc_train *t = &g->train;
    dg_free(t->loss);
    if (t->n_var_list > 0)
        free_strv(t->var_list, t->n_var_list);
    else
        dg_free(t->var_list);
    free_feeds(t->feeds, t->n_feeds);
    dg_free(t->update_ops);
    free_feeds(t->eval_feeds, t->n_eval_feeds);
    free_strv(t->eval_fetch, t->n_eval_fetch);
    dg_free(t->checkpoint_path);
    dg_free(t->given_train_op);
    dg_free(t->given_global_step);
    for (int i = 0; i < g->n_aliases; i++) {
        dg_free(g->aliases[i].key);
        dg_free(g->aliases[i].tensor);
    }
    dg_free(g->aliases);
    for (int i = 0; i < g->n_ckpt_keys; i++) {
        dg_free(g->ckpt_keys[i].key);
        dg_free(g->ckpt_keys[i].tensor);
    }
    dg_free(g->ckpt_keys);
    for (int i = 0; i < g->n_save_slices; i++) {
        dg_free(g->save_slices[i].var);
        dg_free(g->save_slices[i].full);
    }
    dg_free(g->save_slices);
    dg_free(g->variables_path);
    for (int i = 0; i < g->n_pending; i++)
        dg_free(g->pending[i].names);
    dg_free(g->pending);
    dg_free(g->path);
    for (struct dgc_slab_chunk *c = g->slab; c;) {
        struct dgc_slab_chunk *next = c->next;
        dg_free(c);
        c = next;
    }
    dg_free(g);
}

void *dgc_graph_slab_alloc(dgc_graph *g, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    dgc_slab_chunk *c = g->slab;
    if (!c || c->cap - c->used < n) {
        size_t cap = c ? c->cap * 2 : ((size_t)64 << 10);
        if (cap > ((size_t)16 << 20))
            cap = (size_t)16 << 20;
        if (cap < n)
            cap = n;
        dgc_slab_chunk *nc = dg_calloc(1, sizeof *nc + cap);
        if (!nc)
            return NULL;
        dg_mem_hint_huge(nc, sizeof *nc + cap);
        nc->cap = cap;
        nc->next = c;
        g->slab = c = nc;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

int dgc_graph_reserve(dgc_graph *g, int32_t extra, dg_error *err)
{
    if (g->cap_nodes - g->n_nodes >= extra)
        return 0;
    dgc_node *nn = dg_grow(g->nodes, &g->cap_nodes, g->n_nodes + extra,
                           sizeof *nn, 64);
    if (!nn) {
        dg_err_nomem(err, "graph nodes");
        return -1;
    }
    g->nodes = nn;
    return 0;
}

int32_t dgc_graph_add_node(dgc_graph *g, const char *name, int op,
                           dg_error *err)
{
    if (g->n_nodes == g->cap_nodes) {
        dgc_node *nn = dg_grow(g->nodes, &g->cap_nodes, g->n_nodes + 1,
                               sizeof *nn, 64);
        if (!nn) {
            dg_err_nomem(err, "graph nodes");
            return -1;
        }
        /* names map borrows node names: they are separate allocations, so
         * moving the node array does not invalidate them. */
        g->nodes = nn;
    }
    if (dg_strmap_get(&g->names, name) >= 0) {
        dg_err(err, DG_E_GRAPH, "node '%s': duplicate node name", name);
        return -1;
    }
    dgc_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = dg_strdup(name);
    if (!n->name) {
        dg_err_nomem(err, "node name");
        return -1;
    }
    n->op = op;
    n->forward = -1;
    n->group_hint = -1;
    n->device_id = -1;
    n->placed_id = -1;
    if (dg_strmap_put(&g->names, n->name, g->n_nodes) < 0) {
        dg_free(n->name);
        dg_err_nomem(err, "name map");
        return -1;
    }
    return g->n_nodes++;
}

int32_t dgc_graph_find(const dgc_graph *g, const char *name)
{
    return dg_strmap_get(&g->names, name);
}

static int parse_ref(const dgc_graph *g, const char *s, dgc_ref *out);

const char *dgc_graph_ckpt_key(const dgc_graph *g, const char *var)
{
    for (int i = 0; i < g->n_ckpt_keys; i++)
        if (strcmp(g->ckpt_keys[i].key, var) == 0)
            return g->ckpt_keys[i].tensor;
    return var;
}

const dgc_save_slice *dgc_graph_save_slice(const dgc_graph *g,
                                           const char *var)
{
    for (int i = 0; i < g->n_save_slices; i++)
        if (strcmp(g->save_slices[i].var, var) == 0)
            return &g->save_slices[i];
    return NULL;
}

int dgc_graph_parse_ref(const dgc_graph *g, const char *s, dgc_ref *out)
{
    if (parse_ref(g, s, out) == 0)
        return 0;
    /* a SavedModel signature key (issue 24): names come first */
    for (int i = 0; i < g->n_aliases; i++)
        if (strcmp(g->aliases[i].key, s) == 0)
            return parse_ref(g, g->aliases[i].tensor, out);
    return -1;
}

static int parse_ref(const dgc_graph *g, const char *s, dgc_ref *out)
{
    int32_t id = dg_strmap_get(&g->names, s);
    if (id >= 0) {
        out->node = id;
        out->index = 0;
        return 0;
    }
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return -1;
    char *end;
    long k = strtol(colon + 1, &end, 10);
    if (*end || k < 0 || k > 1000000)
        return -1;
    for (const char *p = colon + 1; *p; p++)
        if (*p < '0' || *p > '9')
            return -1;
    id = dg_strmap_getn(&g->names, s, (size_t)(colon - s));
    if (id < 0)
        return -1;
    out->node = id;
    out->index = (int32_t)k;
    return 0;
}

int dgc_node_add_input(dgc_graph *g, int32_t n, dgc_ref r)
{
    dgc_node *nd = &g->nodes[n];
    if (nd->flags & DGC_NODE_SLAB_INPUTS) { /* copy out of the slab */
        dgc_ref *own = dg_malloc((size_t)(nd->n_inputs + 1) * sizeof *own);
        if (!own)
            return -1;
        if (nd->n_inputs > 0)
            memcpy(own, nd->inputs, (size_t)nd->n_inputs * sizeof *own);
        own[nd->n_inputs++] = r;
        nd->inputs = own;
        nd->flags &= ~(uint32_t)DGC_NODE_SLAB_INPUTS;
        return 0;
    }
    dgc_ref *in = dg_realloc(nd->inputs, (size_t)(nd->n_inputs + 1) * sizeof *in);
    if (!in)
        return -1;
    in[nd->n_inputs++] = r;
    nd->inputs = in;
    return 0;
}

int dgc_node_add_ctrl(dgc_graph *g, int32_t n, int32_t c)
{
    dgc_node *nd = &g->nodes[n];
    for (int i = 0; i < nd->n_ctrl; i++)
        if (nd->ctrl[i] == c)
            return 0;
    int32_t *v = dg_realloc(nd->ctrl, (size_t)(nd->n_ctrl + 1) * sizeof *v);
    if (!v)
        return -1;
    v[nd->n_ctrl++] = c;
    nd->ctrl = v;
    return 0;
}

static const char *const attr_names[DGC_N_ATTR_IDS] = {
    "?",
#define DGC_ATTR(name) #name,
#include "attr_names.def"
#undef DGC_ATTR
};

dgc_attr_id dgc_attr_id_of(const char *name)
{
    int lo = 1, hi = DGC_N_ATTR_IDS - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(name, attr_names[mid]);
        if (c == 0)
            return (dgc_attr_id)mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return DGC_AT_NONE;
}

const char *dgc_attr_id_name(dgc_attr_id id)
{
    return id > DGC_AT_NONE && id < DGC_N_ATTR_IDS ? attr_names[id] : "?";
}

const dgc_attr *dgc_node_attr(const dgc_node *n, const char *key)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].key, key) == 0)
            return &n->attrs[i];
    return NULL;
}

int64_t dgc_attr_int(const dgc_node *n, const char *key, int64_t dflt)
{
    const dgc_attr *a = dgc_node_attr(n, key);
    if (!a)
        return dflt;
    if (a->kind == DGC_A_FLOAT)
        return (int64_t)a->f;
    return a->i;
}

double dgc_attr_float(const dgc_node *n, const char *key, double dflt)
{
    const dgc_attr *a = dgc_node_attr(n, key);
    if (!a)
        return dflt;
    if (a->kind == DGC_A_FLOAT)
        return a->f;
    return (double)a->i;
}

int dgc_attr_bool(const dgc_node *n, const char *key, int dflt)
{
    const dgc_attr *a = dgc_node_attr(n, key);
    return a ? (a->i != 0) : dflt;
}

int dgc_node_set_attr(dgc_node *n, const dgc_attr *a)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].key, a->key) == 0) {
            char *key = n->attrs[i].key;
            dgc_attr_id id = n->attrs[i].id;
            n->attrs[i].key = NULL;
            dgc_attr_clear(&n->attrs[i]);
            n->attrs[i] = *a;
            n->attrs[i].key = key;
            n->attrs[i].id = id;
            return 0;
        }
    char *key = dg_strdup(a->key);
    if (!key)
        return -1;
    dgc_attr *v = dg_realloc(n->attrs, (size_t)(n->n_attrs + 1) * sizeof *v);
    if (!v) {
        dg_free(key);
        return -1;
    }
    n->attrs = v;
    v[n->n_attrs] = *a;
    v[n->n_attrs].key = key;
    v[n->n_attrs].id = dgc_attr_id_of(key);
    n->n_attrs++;
    return 0;
}

static int set_simple(dgc_node *n, const char *key, dgc_attr_kind k,
                      int64_t i, double f)
{
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = (char *)key;
    a.kind = k;
    a.i = i;
    a.f = f;
    return dgc_node_set_attr(n, &a);
}

int dgc_node_set_int(dgc_node *n, const char *key, int64_t v)
{
    return set_simple(n, key, DGC_A_INT, v, (double)v);
}

int dgc_node_set_bool(dgc_node *n, const char *key, int v)
{
    return set_simple(n, key, DGC_A_BOOL, v != 0, 0);
}

int dgc_node_set_float(dgc_node *n, const char *key, double v)
{
    return set_simple(n, key, DGC_A_FLOAT, (int64_t)v, v);
}

int dgc_node_set_dtype(dgc_node *n, const char *key, dg_dtype t)
{
    return set_simple(n, key, DGC_A_DTYPE, t, 0);
}

int dgc_node_set_str(dgc_node *n, const char *key, const char *v)
{
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = (char *)key;
    a.kind = DGC_A_STR;
    if (!(a.s = dg_strdup(v)))
        return -1;
    if (dgc_node_set_attr(n, &a)) {
        dg_free(a.s);
        return -1;
    }
    return 0;
}

static int set_ints(dgc_node *n, const char *key, dgc_attr_kind k,
                    const int64_t *v, int n_v)
{
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = (char *)key;
    a.kind = k;
    a.n = n_v;
    a.ints = dg_malloc(sizeof(int64_t) * (size_t)(n_v > 0 ? n_v : 1));
    if (!a.ints)
        return -1;
    if (n_v > 0)
        memcpy(a.ints, v, sizeof(int64_t) * (size_t)n_v);
    a.i = n_v > 0 ? v[0] : 0;
    if (dgc_node_set_attr(n, &a)) {
        dg_free(a.ints);
        return -1;
    }
    return 0;
}

int dgc_node_set_ints(dgc_node *n, const char *key, const int64_t *v, int n_v)
{
    return set_ints(n, key, DGC_A_INTS, v, n_v);
}

int dgc_node_set_shape(dgc_node *n, const char *key, const dg_shape *s)
{
    return set_ints(n, key, DGC_A_SHAPE, s->dims, s->rank);
}

int dgc_node_set_tensor(dgc_node *n, const char *key, dg_tensor *t)
{
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = (char *)key;
    a.kind = DGC_A_TENSOR;
    a.tensor = t;
    if (dgc_node_set_attr(n, &a)) {
        dg_tensor_free(t);
        return -1;
    }
    return 0;
}
