/*
 * load.c -- dg_graph_load: JSON graph file (SPEC section 2) -> dgc_graph.
 *
 * The raw text is scanned once (load_scan.c) for the top-level members and
 * the extent of every node object; each node is then parsed by cJSON on its
 * own and turned into IR (load_nodes.c) before the next, so memory stays
 * proportional to the graph, not to a DOM of the file.  Other sections are
 * small and parsed whole.  Text the scan does not understand goes through
 * one cJSON parse of the whole document instead (exact error positions, or
 * the same load from a DOM).  Either way: nodes (names first, so inputs may
 * refer forward), the other sections (load_sections.c), then, with the
 * text freed, shape/dtype inference over the whole graph (shape.c), which
 * also rejects cycles.
 * Invalid JSON anywhere is reported before any other error.  Input with
 * control bytes is tried as a binary GraphDef first (load_pb.c).
 */
#include "load_priv.h"
#include "ops.h"
#include "devices.h"
#include "infer.h"
#include "dg_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const top_keys[] = {
    "version", "nodes", "gradients", "collections", "placement", "fetch",
    "train", "cluster", "replicate", NULL};

/* Where node objects come from: a DOM, or slices of the scanned text. */
typedef struct node_src {
    const dgc_jdoc *doc;
    const dgc_jscan *sc;       /* NULL: DOM */
    const dgc_jmember *nodes;  /* streaming: the `nodes` array member */
    const cJSON *placeholder;  /* streaming: its (empty) item in the root */
    void *arena;               /* streaming: the current node's cJSON */
    size_t next;               /* streaming: next element to parse */
    size_t num_next;           /* its first number token */
    const char *base;          /* streaming: "nodes", or "node" (GraphDef) */
    char dup[512];             /* streaming: a duplicate key's message */
} node_src;

static int known(const char *const *l, const char *k)
{
    for (; *l; l++)
        if (strcmp(*l, k) == 0)
            return 1;
    return 0;
}

/* Parse the next node slice into *x.  0 ok, 1 invalid (*bad), 2 duplicate
 * key (S->dup), -1 nomem. */
static int next_slice(node_src *S, cJSON **x, size_t *bad)
{
    const dgc_jelem *e = &S->sc->elems[S->nodes->elem_first + S->next];
    dgc_json_arena_reset(&S->arena);
    char base[40], num[24];
    size_t bl = strlen(S->base), k = sizeof num;
    size_t v = S->next;
    do
        num[--k] = (char)('0' + v % 10);
    while ((v /= 10) > 0); /* base "nodes[12]" without printf's cost */
    memcpy(base, S->base, bl);
    base[bl] = '[';
    memcpy(base + bl + 1, num + k, sizeof num - k);
    memcpy(base + bl + 1 + sizeof num - k, "]", 2);
    int rc = dgc_json_parse_slice(S->doc, &S->arena, e->off, e->len,
                                  S->num_next, e->n_num, x, bad, base,
                                  S->dup, sizeof S->dup);
    S->next++;
    S->num_next += e->n_num;
    return rc;
}

/* Before reporting a non-JSON error st, make sure the node slices not
 * parsed yet are valid JSON: an invalid document is reported as such first,
 * as a whole-document parse would.  Returns st or the JSON error. */
static dg_status json_first(node_src *S, dg_status st, dg_error *err)
{
    if (!S->sc || !S->nodes || st == DG_OK || st == DG_E_NOMEM)
        return st;
    while (S->next < S->nodes->n_elem) {
        cJSON *x;
        size_t bad;
        int rc = next_slice(S, &x, &bad);
        if (rc < 0)
            return dg_err_nomem(err, "JSON");
        if (rc == 1)
            return dgc_json_error_at(S->doc->text, bad, "", err);
    }
    return st;
}

/* Top-level keys and version; finds the nodes array. */
static dg_status check_root(dgc_graph *g, const dgc_jdoc *doc,
                            const cJSON *root, const cJSON **nodes_out,
                            dg_error *err)
{
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
                              "(a TensorFlow GraphDef has 'node' and no "
                              "'nodes'; dgrun graphs use 'nodes')");
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
    *nodes_out = nodes;
    return DG_OK;
}

static dg_status load_root(dgc_graph *g, const cJSON *root, node_src *S,
                           dg_error *err)
{
    const dgc_jdoc *doc = S->doc;
    const cJSON *nodes = NULL;
    if (dgc_graphdef_detect(root)) /* TF GraphDef JSON: load_graphdef.c */
        return dgc_graphdef_load(g, doc, root, err);
    dg_status st = check_root(g, doc, root, &nodes, err);
    if (st)
        return json_first(S, st, err);
    int streaming = S->sc && nodes == S->placeholder;
    size_t cnt = streaming ? S->nodes->n_elem : (size_t)cJSON_GetArraySize(nodes);
    if (cnt > (size_t)INT32_MAX / 2)
        return dg_err(err, DG_E_GRAPH, "too many nodes (%zu)", cnt);
    dgc_nodeload L;
    st = dgc_nodes_begin(&L, g, doc, (int)cnt, err);
    int json_bad = 0;
    const cJSON *x = streaming ? NULL : nodes->child;
    for (size_t i = 0; i < cnt && !st; i++) {
        if (streaming) {
            cJSON *y;
            size_t bad;
            int rc = next_slice(S, &y, &bad);
            if (rc < 0) {
                st = dg_err_nomem(err, "JSON");
                break;
            }
            if (rc == 1) {
                st = dgc_json_error_at(doc->text, bad, "", err);
                json_bad = 1;
                break;
            }
            if (rc == 2) { /* invalid JSON further on is reported first */
                st = dg_err(err, DG_E_GRAPH, "%s", S->dup);
                break;
            }
            x = y;
        }
        st = dgc_nodes_add(&L, x, (int)i, err);
        x = x->next;
    }
    if (st && !json_bad)
        st = json_first(S, st, err);
    dgc_json_arena_free(&S->arena);
    if (!st)
        st = dgc_nodes_finish(&L, err);
    dgc_nodes_end(&L);
    if (st)
        return st;
    return dgc_load_sections(g, doc, root, err);
}

/* Append item to obj's children (cJSON's list layout: child->prev is the
 * last child). */
static void link_child(cJSON *obj, cJSON *item)
{
    if (!obj->child) {
        obj->child = item;
        item->prev = item;
        return;
    }
    cJSON *last = obj->child->prev;
    last->next = item;
    item->prev = last;
    obj->child->prev = item;
}

/* Streaming load of a scanned TensorFlow GraphDef: every element of its
 * `node` array is parsed and handed to the GraphDef loader in turn (one
 * node's cJSON at a time).  Invalid JSON anywhere (bad_first: the first in
 * the other members) comes first, then the first duplicated key (dup, in
 * member dup_at, against the node array's member), then the graph's
 * errors, as a whole-document parse would give. */
static dg_status load_gd_stream(dgc_graph *g, const cJSON *root, node_src *S,
                                size_t bad_first, const char *dup,
                                size_t dup_at, size_t node_at, dg_error *err)
{
    dgc_gdload *L = NULL;
    dg_status st = dgc_gd_begin(&L, g, S->doc, S->nodes->n_elem, err);
    const dgc_jelem *el = S->nodes->n_elem > 0
                              ? &S->sc->elems[S->nodes->elem_first]
                              : NULL; /* an empty `node` array */
    char ndup[512] = "";
    int adding = !dup[0] && bad_first == SIZE_MAX;
    for (size_t i = 0; i < S->nodes->n_elem && !st; i++) {
        if (el[i].off >= bad_first)
            break; /* invalid JSON before it is all that can matter */
        cJSON *x;
        size_t bad;
        int rc = next_slice(S, &x, &bad);
        if (rc < 0) {
            st = dg_err_nomem(err, "JSON");
        } else if (rc == 1) {
            bad_first = bad;
        } else if (rc == 2) {
            if (!ndup[0])
                memcpy(ndup, S->dup, sizeof ndup);
            adding = 0;
        } else if (adding) {
            st = dgc_gd_add(L, x, (int)i, err);
        }
    }
    if (st) {
    } else if (bad_first != SIZE_MAX) {
        st = dgc_json_error_at(S->doc->text, bad_first, "", err);
    } else if (ndup[0] && (!dup[0] || node_at < dup_at)) {
        st = dg_err(err, DG_E_GRAPH, "%s", ndup);
    } else if (dup[0]) {
        st = dg_err(err, DG_E_GRAPH, "%s", dup);
    } else if (!(st = dgc_gd_check_root(root, err))) {
        st = dgc_gd_finish(L, err);
    }
    dgc_gd_end(L);
    return st;
}

/* Streaming load of a scanned document: parse the keys and the values of
 * the top-level members (the nodes array only as an empty placeholder)
 * into a small root object, then load. */
static dg_status load_scanned(dgc_graph *g, const char *text, size_t len,
                              const dgc_jscan *sc, dg_error *err)
{
    dgc_jdoc doc;
    memset(&doc, 0, sizeof doc);
    doc.text = text;
    doc.len = len;
    doc.num_off = sc->num_off;
    doc.num_int = sc->num_int;
    doc.n_num = sc->n_num;
    node_src S;
    memset(&S, 0, sizeof S);
    S.doc = &doc;
    S.sc = sc;
    S.base = "nodes";
    dg_status st = DG_OK;
    size_t bad_first = SIZE_MAX, dup_at = 0, node_at = 0;
    char dup[512] = "";
    /* a TensorFlow GraphDef (`node`, no `nodes`) streams its `node` array */
    int gd = 1;
    for (size_t i = 0; i < sc->n_members; i++)
        if (sc->members[i].key_len == 7 &&
            memcmp(text + sc->members[i].key_off, "\"nodes\"", 7) == 0)
            gd = 0;
    cJSON *root = dgc_json_new_item(&doc.arena, cJSON_Object);
    if (!root)
        st = dg_err_nomem(err, "JSON");
    for (size_t i = 0; i < sc->n_members && !st; i++) {
        const dgc_jmember *m = &sc->members[i];
        cJSON *key, *v = NULL;
        size_t bad;
        int rc = dgc_json_parse_slice(&doc, &doc.arena, m->key_off, m->key_len,
                                      m->num_first, 0, &key, &bad, "", dup,
                                      sizeof dup);
        if (rc == 0 && !S.nodes && m->is_array &&
            (strcmp(key->valuestring, "nodes") == 0 ||
             (gd && strcmp(key->valuestring, "node") == 0))) {
            if (!(v = dgc_json_new_item(&doc.arena, cJSON_Array)))
                rc = -1;
            S.nodes = m;
            S.base = key->valuestring[4] ? "nodes" : "node";
            node_at = i;
            S.placeholder = v;
            S.num_next = m->num_first;
        } else if (rc == 0) {
            rc = dgc_json_parse_slice(&doc, &doc.arena, m->val_off, m->val_len,
                                      m->num_first, m->n_num, &v, &bad,
                                      key->valuestring, S.dup, sizeof S.dup);
        }
        if (rc < 0)
            st = dg_err_nomem(err, "JSON");
        else if (rc == 2 && !dup[0]) {
            memcpy(dup, S.dup, sizeof dup);
            dup_at = i;
        }
        else if (rc == 1 && bad < bad_first)
            bad_first = bad;
        else if (rc == 0) {
            v->string = key->valuestring;
            link_child(root, v);
        }
    }
    if (!st && S.nodes && S.base[4] == 0) {
        st = load_gd_stream(g, root, &S, bad_first, dup, dup_at, node_at, err);
        dgc_json_arena_free(&S.arena);
        dgc_json_free(&doc);
        return st;
    }
    if (!st && bad_first != SIZE_MAX) {
        /* an error in a section: node slices before it come first */
        while (!st && S.nodes && S.next < S.nodes->n_elem &&
               sc->elems[S.nodes->elem_first + S.next].off < bad_first) {
            cJSON *x;
            size_t bad;
            int rc = next_slice(&S, &x, &bad);
            if (rc < 0)
                st = dg_err_nomem(err, "JSON");
            else if (rc == 1)
                bad_first = bad;
            if (rc == 1)
                break;
        }
        if (!st)
            st = dgc_json_error_at(text, bad_first, "", err);
    }
    if (!st && dup[0]) /* after invalid JSON, as a whole-document parse */
        st = dg_err(err, DG_E_GRAPH, "%s", dup);
    if (!st)
        st = load_root(g, root, &S, err);
    dgc_json_arena_free(&S.arena);
    dgc_json_free(&doc);
    return st;
}

/* The JSON tree a binary GraphDef became: the GraphDef JSON loader. */
static dg_status load_pb(dgc_graph *g, const cJSON *root, dg_error *err)
{
    dgc_jdoc doc;
    memset(&doc, 0, sizeof doc);
    doc.root = (cJSON *)root;
    return dgc_graphdef_load(g, &doc, root, err);
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
    dgc_jscan sc;
    int rc, kind = dgc_input_kind(text, len);
    dg_status st;
    cJSON *pb = NULL;
    if (kind != DGC_INPUT_JSON) {
        /* a binary GraphDef (load_pb.c), or JSON with stray control bytes */
        rc = dgc_pb_to_json(text, len, &pb);
        if (rc < 0)
            st = dg_err_nomem(err, "GraphDef");
        else if (rc == 0)
            st = load_pb(g, pb, err);
        else if (kind == DGC_INPUT_BINARY)
            st = dg_err(err, DG_E_GRAPH, "not a graph: neither JSON nor a "
                        "binary TensorFlow GraphDef (malformed or truncated "
                        "protobuf)");
        if (rc <= 0 || kind == DGC_INPUT_BINARY) {
            dgc_pb_json_free(pb);
            goto loaded;
        }
    }
    rc = dgc_json_scan(text, len, &sc);
    if (rc < 0) {
        st = dg_err_nomem(err, "JSON");
    } else if (rc == 0) {
        st = load_scanned(g, text, len, &sc, err);
        dgc_jscan_free(&sc);
    } else {
        /* not understood by the scan: one cJSON parse of everything */
        dgc_jdoc doc;
        st = dgc_json_parse(&doc, text, len, "", err);
        if (!st) {
            node_src S;
            memset(&S, 0, sizeof S);
            S.doc = &doc;
            st = load_root(g, doc.root, &S, err);
            dgc_json_free(&doc);
        }
    }
loaded:
    dg_free(owned);
    /* inference allocates every node's output types: run it once the text
     * and the scan are gone, so their peaks do not add up */
    if (!st)
        st = dgc_pending_check_load(g, err);
    if (!st)
        st = dgc_pass_infer(g, 0, err);
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
