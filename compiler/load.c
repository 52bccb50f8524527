/*
 * load.c -- dg_graph_load: JSON graph file (SPEC section 2) -> dgc_graph.
 * Two passes over `nodes` (names first, so inputs may refer forward), then
 * the other sections (load_sections.c), then shape/dtype inference over the
 * whole graph (shape.c), which also rejects cycles.  Every error names the
 * node and the reason.
 */
#include "load_priv.h"
#include "ops.h"
#include "devices.h"
#include "program.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

static const char *const top_keys[] = {
    "version", "nodes", "gradients", "collections", "placement", "fetch",
    "train", NULL};

typedef struct node_json {
    const cJSON *inputs, *device, *coloc, *attrs;
} node_json;

static int known(const char *const *l, const char *k)
{
    for (; *l; l++)
        if (strcmp(*l, k) == 0)
            return 1;
    return 0;
}

static dg_status bad_node(dg_error *err, int i, const char *name,
                          const char *fmt, const char *a)
{
    char what[300];
    snprintf(what, sizeof what, fmt, a);
    if (name)
        return dg_err(err, DG_E_GRAPH, "node '%s': %s", name, what);
    return dg_err(err, DG_E_GRAPH, "node #%d: %s", i, what);
}

/* Pass 1: check a node's fields, name and op; add it to the graph. */
static dg_status add_node(dgc_graph *g, const dg_strmap *ops, const cJSON *x,
                          int i, node_json *nj, dg_error *err)
{
    if (!cJSON_IsObject(x))
        return dg_err(err, DG_E_GRAPH, "node #%d: must be an object, got %s",
                      i, dgc_json_kind(x));
    const cJSON *name = NULL, *op = NULL;
    memset(nj, 0, sizeof *nj);
    for (const cJSON *k = x->child; k; k = k->next)
        if (strcmp(k->string, "name") == 0)
            name = k;
    const char *nm = (name && cJSON_IsString(name)) ? name->valuestring : NULL;
    for (const cJSON *k = x->child; k; k = k->next) {
        const cJSON **slot = NULL;
        if (strcmp(k->string, "name") == 0) slot = &name;
        else if (strcmp(k->string, "op") == 0) slot = &op;
        else if (strcmp(k->string, "inputs") == 0) slot = &nj->inputs;
        else if (strcmp(k->string, "device") == 0) slot = &nj->device;
        else if (strcmp(k->string, "colocate_with") == 0) slot = &nj->coloc;
        else if (strcmp(k->string, "attrs") == 0) slot = &nj->attrs;
        else
            return bad_node(err, i, nm, "unknown field '%s'", k->string);
        if (*slot && *slot != k)
            return bad_node(err, i, nm, "duplicate field '%s'", k->string);
        *slot = k;
    }
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
    int32_t opi = dg_strmap_get(ops, op->valuestring);
    if (opi < 0)
        return bad_node(err, i, nm, "unknown op '%s' (see `dgrun ops`)",
                        op->valuestring);
    /* like dgc_graph_add_node, with one map probe instead of two (the node
     * array was sized for the whole file) */
    dgc_node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    if (!(n->name = dg_strdup(nm)))
        return dg_err_nomem(err, "node name");
    n->op = opi;
    n->forward = -1;
    n->group_hint = -1;
    n->device_id = -1;
    int rc = dg_strmap_put(&g->names, n->name, g->n_nodes);
    if (rc) {
        dg_free(n->name);
        n->name = NULL;
        if (rc < 0)
            return dg_err_nomem(err, "name map");
        return dg_err(err, DG_E_GRAPH, "node '%s': duplicate node name", nm);
    }
    g->n_nodes++;
    return DG_OK;
}

/* `mark` (one slot per node, zeroed) deduplicates control inputs in O(1):
 * mark[c] == id + 1 once c is a control input of node id. */
static dg_status parse_inputs(dgc_graph *g, int32_t id, const cJSON *inputs,
                              int32_t *mark, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    const dgc_op_def *d = &dgc_ops[n->op];
    int cnt = 0, n_ctrl = 0;
    if (inputs) {
        if (!cJSON_IsArray(inputs))
            return dg_err(err, DG_E_GRAPH, "node '%s': 'inputs' must be a list "
                          "of strings, got %s", n->name, dgc_json_kind(inputs));
        for (const cJSON *e = inputs->child; e; e = e->next) {
            if (!cJSON_IsString(e))
                return dg_err(err, DG_E_GRAPH, "node '%s': 'inputs' must be a "
                              "list of strings, got %s in it", n->name,
                              dgc_json_kind(e));
            if (e->valuestring[0] == '^')
                n_ctrl++;
            else
                cnt++;
        }
    }
    if (cnt > 0 && !(n->inputs = dg_malloc(sizeof *n->inputs * (size_t)cnt)))
        return dg_err_nomem(err, "inputs");
    if (n_ctrl > 0 && !(n->ctrl = dg_malloc(sizeof *n->ctrl * (size_t)n_ctrl)))
        return dg_err_nomem(err, "inputs");
    const char *first_ctrl = NULL;
    for (const cJSON *e = inputs ? inputs->child : NULL; e; e = e->next) {
        const char *s = e->valuestring;
        if (s[0] == '^') {
            int32_t c = dg_strmap_get(&g->names, s + 1);
            if (c < 0)
                return dg_err(err, DG_E_GRAPH, "node '%s': control input '%s' "
                              "names unknown node '%s'", n->name, s, s + 1);
            if (!first_ctrl)
                first_ctrl = s;
            if (mark[c] != id + 1) {
                mark[c] = id + 1;
                n->ctrl[n->n_ctrl++] = c;
            }
            continue;
        }
        if (first_ctrl)
            return dg_err(err, DG_E_GRAPH, "node '%s': control input '%s' "
                          "before data input '%s' (control inputs come last)",
                          n->name, first_ctrl, s);
        const char *colon = strchr(s, ':');
        size_t nl = colon ? (size_t)(colon - s) : strlen(s);
        long long k = 0;
        if (colon) {
            const char *p = colon + 1;
            if (!*p)
                return dg_err(err, DG_E_GRAPH, "node '%s': malformed input "
                              "'%s'", n->name, s);
            for (; *p; p++) {
                if (*p < '0' || *p > '9' || k > 100000000)
                    return dg_err(err, DG_E_GRAPH, "node '%s': malformed input "
                                  "'%s'", n->name, s);
                k = k * 10 + (*p - '0');
            }
        }
        int32_t p = dg_strmap_getn(&g->names, s, nl);
        if (p < 0)
            return dg_err(err, DG_E_GRAPH, "node '%s': input '%s' names unknown "
                          "node '%.*s'", n->name, s, (int)nl, s);
        int nout = dgc_ops[g->nodes[p].op].n_out;
        if (k >= nout)
            return dg_err(err, DG_E_GRAPH, "node '%s': input '%s' refers to "
                          "output %lld of '%s', which has %d output%s", n->name,
                          s, k, g->nodes[p].name, nout, nout == 1 ? "" : "s");
        n->inputs[n->n_inputs].node = p;
        n->inputs[n->n_inputs].index = (int32_t)k;
        n->n_inputs++;
    }
    if (n->n_inputs < d->min_in || (d->max_in >= 0 && n->n_inputs > d->max_in)) {
        char want[64];
        if (d->min_in == d->max_in)
            snprintf(want, sizeof want, "%d", d->min_in);
        else if (d->max_in < 0)
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

static dg_status parse_device_coloc(dgc_graph *g, int32_t id,
                                    const node_json *nj, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    if (nj->device && !cJSON_IsNull(nj->device)) {
        if (!cJSON_IsString(nj->device))
            return dg_err(err, DG_E_GRAPH, "node '%s': 'device' must be a "
                          "string, got %s", n->name, dgc_json_kind(nj->device));
        dgc_devspec ds;
        if (dgc_devspec_parse(nj->device->valuestring, &ds))
            return dg_err(err, DG_E_GRAPH, "node '%s': Malformed device "
                          "specification '%s'", n->name,
                          nj->device->valuestring);
        if (nj->device->valuestring[0] &&
            !(n->device = dg_strdup(nj->device->valuestring)))
            return dg_err_nomem(err, "device");
    }
    if (nj->coloc) {
        char **v;
        int cnt;
        int rc = dgc_json_strlist(nj->coloc, &v, &cnt);
        if (rc == -2)
            return dg_err_nomem(err, "colocate_with");
        if (rc)
            return dg_err(err, DG_E_GRAPH, "node '%s': 'colocate_with' must be "
                          "a list of node names", n->name);
        n->coloc = dg_malloc(sizeof *n->coloc * (size_t)(cnt > 0 ? cnt : 1));
        if (!n->coloc) {
            dgc_strv_free(v, cnt);
            return dg_err_nomem(err, "colocate_with");
        }
        for (int i = 0; i < cnt; i++) {
            const char *t = v[i];
            if (strncmp(t, "loc:@", 5) == 0) /* TF's _class spelling */
                t += 5;
            int32_t c = dg_strmap_get(&g->names, t);
            if (c < 0) {
                dg_err(err, DG_E_GRAPH, "node '%s': colocate_with names unknown "
                       "node '%s'", n->name, t);
                dgc_strv_free(v, cnt);
                return DG_E_GRAPH;
            }
            n->coloc[n->n_coloc++] = c;
        }
        dgc_strv_free(v, cnt);
    }
    return DG_OK;
}

static dg_status load_root(dgc_graph *g, const dgc_jdoc *doc, dg_error *err)
{
    const cJSON *root = doc->root;
    if (!cJSON_IsObject(root))
        return dg_err(err, DG_E_GRAPH, "the graph must be a JSON object, got %s",
                      dgc_json_kind(root));
    const char *dup;
    if (dgc_json_dup_key(root, &dup))
        return dg_err(err, DG_E_GRAPH, "duplicate top-level key '%s'", dup);
    const cJSON *nodes = NULL, *version = NULL;
    for (const cJSON *k = root->child; k; k = k->next) {
        if (!known(top_keys, k->string)) {
            if (strcmp(k->string, "node") == 0)
                return dg_err(err, DG_E_GRAPH, "unknown top-level key 'node' "
                              "(TensorFlow GraphDef JSON is not supported yet; "
                              "dgrun graphs use 'nodes')");
            return dg_err(err, DG_E_GRAPH, "unknown top-level key '%s'",
                          k->string);
        }
        if (strcmp(k->string, "nodes") == 0)
            nodes = k;
        else if (strcmp(k->string, "version") == 0)
            version = k;
    }
    if (version) {
        int64_t v;
        if (dgc_json_int64(doc, version, &v) || v != 1) {
            if (cJSON_IsNumber(version))
                return dg_err(err, DG_E_GRAPH, "unsupported graph version %g "
                              "(only version 1 is supported)",
                              version->valuedouble);
            return dg_err(err, DG_E_GRAPH, "unsupported graph version (%s; "
                          "only version 1 is supported)",
                          dgc_json_kind(version));
        }
        g->version = 1;
    }
    if (!nodes)
        return dg_err(err, DG_E_GRAPH, "missing 'nodes'");
    if (!cJSON_IsArray(nodes))
        return dg_err(err, DG_E_GRAPH, "'nodes' must be an array, got %s",
                      dgc_json_kind(nodes));
    int cnt = cJSON_GetArraySize(nodes);
    /* size the node array and name map for the whole file at once */
    dg_strmap_free(&g->names);
    if (dg_strmap_init(&g->names, (size_t)cnt + 64))
        return dg_err_nomem(err, "name map");
    if (cnt > 0) {
        g->nodes = dg_calloc((size_t)cnt, sizeof *g->nodes);
        if (!g->nodes)
            return dg_err_nomem(err, "graph nodes");
        g->cap_nodes = cnt;
    }
    node_json *nj = dg_calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *nj);
    int32_t *mark = dg_calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *mark);
    dg_strmap ops;
    if (!nj || !mark || dg_strmap_init(&ops, (size_t)dgc_n_ops * 2)) {
        dg_free(nj);
        dg_free(mark);
        return dg_err_nomem(err, "loader");
    }
    dg_status st = DG_OK;
    for (int i = 0; i < dgc_n_ops && !st; i++)
        if (dg_strmap_put(&ops, dgc_ops[i].name, i) < 0 ||
            (dgc_ops[i].alias && dg_strmap_put(&ops, dgc_ops[i].alias, i) < 0))
            st = dg_err_nomem(err, "loader");
    int i = 0;
    for (const cJSON *x = nodes->child; x && !st; x = x->next, i++)
        st = add_node(g, &ops, x, i, &nj[i], err);
    dg_strmap_free(&ops);
    g->n_file_nodes = g->n_nodes;
    for (i = 0; i < g->n_nodes && !st; i++) {
        st = parse_inputs(g, i, nj[i].inputs, mark, err);
        if (!st)
            st = parse_device_coloc(g, i, &nj[i], err);
        if (!st)
            st = dgc_load_attrs(g, doc, i, nj[i].attrs, err);
    }
    dg_free(nj);
    dg_free(mark);
    if (st)
        return st;
    st = dgc_load_sections(g, doc, root, err);
    if (st)
        return st;
    return dgc_pass_infer(g, 0, err);
}

dg_graph *dg_graph_load(const char *path, const char *text, size_t len,
                        dg_error *err)
{
    char *owned = NULL;
    if (!text) {
        if (!path) {
            dg_err(err, DG_E_USAGE, "no graph file given");
            return NULL;
        }
        if (dgc_read_file(path, &owned, &len, err))
            return NULL;
        text = owned;
    }
    dgc_graph *g = dgc_graph_new(path);
    if (!g) {
        dg_free(owned);
        dg_err_nomem(err, "graph");
        return NULL;
    }
    dgc_jdoc doc;
    dg_status st = dgc_json_parse(&doc, text, len, "", err);
    if (!st) {
        st = load_root(g, &doc, err);
        dgc_json_free(&doc);
    }
    dg_free(owned);
    if (st) {
        dgc_graph_free(g);
        return NULL;
    }
    return g;
}

void dg_graph_free(dg_graph *g)
{
    dgc_graph_free(g);
}
