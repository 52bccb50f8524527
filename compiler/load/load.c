/*
 * load.c -- the JSON front and the two JSON formats of the format table
 * (format.h): GraphDef JSON (a root object with `node` and no `nodes`; its
 * nodes are converted by load_graphdef*.c) and dgrun's JSON (SPEC section
 * 2; nodes: load_nodes.c, other sections: load_sections.c).
 *
 * The raw text is read once for both (probe_json): scanned (load_scan.c)
 * for the top-level members and the extent of every node object; each node
 * is then parsed by cJSON on its own and turned into IR before the next,
 * so memory stays proportional to the graph, not to a DOM of the file.
 * Other sections are small and parsed whole.  Text the scan does not
 * understand goes through one cJSON parse of the whole document instead
 * (exact error positions, or the same load from a DOM).  Invalid JSON
 * anywhere is reported before any other error.
 */
#include "format.h"
#include "ops.h"
#include "devices.h"
#include "dg_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const top_keys[] = {
    "version", "nodes", "gradients", "collections", "placement", "fetch",
    "train", "cluster", "replicate", NULL};

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

/* dgrun's JSON (SPEC section 2) from its root object: nodes (names first,
 * so inputs may refer forward), then the other sections
 * (load_sections.c). */
static dg_status load_root(dgc_graph *g, const cJSON *root, node_src *S,
                           dg_error *err)
{
    const dgc_jdoc *doc = S->doc;
    const cJSON *nodes = NULL;
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
            st = dgc_gd_add(L, dgc_gv_json(x), (int)i, err);
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

/* ---- the JSON front: one reading of the text for both dialects -------- */

/* Streaming reading of a scanned document: parse the keys and the values
 * of the top-level members (the streamed nodes array only as an empty
 * placeholder) into a small root object.  Errors that must wait (invalid
 * JSON: bad_first; a duplicated key: dup) are kept for the dialect's
 * load. */
static void front_scanned(dgc_jfront *F, const char *text, size_t len)
{
    const dgc_jscan *sc = &F->sc;
    dgc_jdoc *doc = &F->doc;
    node_src *S = &F->S;
    dg_error *err = &F->err;
    memset(doc, 0, sizeof *doc);
    doc->text = text;
    doc->len = len;
    doc->num_off = sc->num_off;
    doc->num_int = sc->num_int;
    doc->n_num = sc->n_num;
    memset(S, 0, sizeof *S);
    S->doc = doc;
    S->sc = sc;
    S->base = "nodes";
    dg_status st = DG_OK;
    F->bad_first = SIZE_MAX;
    F->dup_at = 0;
    F->node_at = 0;
    F->dup[0] = '\0';
    char *dup = F->dup;
    /* a TensorFlow GraphDef (`node`, no `nodes`) streams its `node` array */
    int gd = 1;
    for (size_t i = 0; i < sc->n_members; i++)
        if (sc->members[i].key_len == 7 &&
            memcmp(text + sc->members[i].key_off, "\"nodes\"", 7) == 0)
            gd = 0;
    cJSON *root = dgc_json_new_item(&doc->arena, cJSON_Object);
    if (!root)
        st = dg_err_nomem(err, "JSON");
    for (size_t i = 0; i < sc->n_members && !st; i++) {
        const dgc_jmember *m = &sc->members[i];
        cJSON *key, *v = NULL;
        size_t bad;
        int rc = dgc_json_parse_slice(doc, &doc->arena, m->key_off, m->key_len,
                                      m->num_first, 0, &key, &bad, "", dup,
                                      sizeof F->dup);
        if (rc == 0 && !S->nodes && m->is_array &&
            (strcmp(key->valuestring, "nodes") == 0 ||
             (gd && strcmp(key->valuestring, "node") == 0))) {
            if (!(v = dgc_json_new_item(&doc->arena, cJSON_Array)))
                rc = -1;
            S->nodes = m;
            S->base = key->valuestring[4] ? "nodes" : "node";
            F->node_at = i;
            S->placeholder = v;
            S->num_next = m->num_first;
        } else if (rc == 0) {
            rc = dgc_json_parse_slice(doc, &doc->arena, m->val_off, m->val_len,
                                      m->num_first, m->n_num, &v, &bad,
                                      key->valuestring, S->dup, sizeof S->dup);
        }
        if (rc < 0)
            st = dg_err_nomem(err, "JSON");
        else if (rc == 2 && !dup[0]) {
            memcpy(dup, S->dup, sizeof F->dup);
            F->dup_at = i;
        }
        else if (rc == 1 && bad < F->bad_first)
            F->bad_first = bad;
        else if (rc == 0) {
            v->string = key->valuestring;
            link_child(root, v);
        }
    }
    F->root = root;
    F->st = st;
}

/* Read p's text once (first JSON row to ask): the streaming scan, or where
 * the scan does not understand the text, one cJSON parse of it all. */
static dgc_jfront *probe_json(dgc_probe *p)
{
    dgc_jfront *F = &p->json;
    if (p->json_read)
        return F;
    p->json_read = 1;
    memset(F, 0, sizeof *F);
    int rc = dgc_json_scan(p->text, p->len, &F->sc);
    if (rc < 0) {
        F->st = dg_err_nomem(&F->err, "JSON");
    } else if (rc == 0) {
        F->streaming = 1;
        front_scanned(F, p->text, p->len);
    } else {
        /* not understood by the scan: one cJSON parse of everything */
        F->st = dgc_json_parse(&F->doc, p->text, p->len, "", &F->err);
        if (!F->st) {
            F->root = F->doc.root;
            F->S.doc = &F->doc;
        }
    }
    return F;
}

void dgc_probe_json_free(dgc_probe *p)
{
    if (!p->json_read)
        return;
    dgc_jfront *F = &p->json;
    dgc_json_arena_free(&F->S.arena);
    dgc_json_free(&F->doc);
    if (F->streaming)
        dgc_jscan_free(&F->sc);
    p->json_read = 0;
}

/* The errors a streaming reading kept, in a whole-document parse's order:
 * invalid JSON (node slices before it come first), then a duplicated
 * key. */
static dg_status front_errors(dgc_jfront *F, const char *text, dg_error *err)
{
    node_src *S = &F->S;
    const dgc_jscan *sc = &F->sc;
    size_t bad_first = F->bad_first;
    dg_status st = DG_OK;
    if (bad_first != SIZE_MAX) {
        /* an error in a section: node slices before it come first */
        while (!st && S->nodes && S->next < S->nodes->n_elem &&
               sc->elems[S->nodes->elem_first + S->next].off < bad_first) {
            cJSON *x;
            size_t bad;
            int rc = next_slice(S, &x, &bad);
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
    if (!st && F->dup[0]) /* after invalid JSON, as a whole-document parse */
        st = dg_err(err, DG_E_GRAPH, "%s", F->dup);
    return st;
}

/* ---- GraphDef JSON: a root object with `node` and no `nodes` ----------- */

static int gd_json_detect(dgc_probe *p)
{
    dgc_jfront *F = probe_json(p);
    if (F->st)
        return DGC_DETECT_NO; /* dgrun-json reports it */
    if (F->streaming && F->S.nodes && F->S.base[4] == 0)
        return DGC_DETECT_YES; /* its `node` array streams */
    return dgc_graphdef_detect(F->root) ? DGC_DETECT_YES : DGC_DETECT_NO;
}

static dg_status gd_json_load(dgc_probe *p, void *out, dg_error *err)
{
    dgc_graph *g = out;
    dgc_jfront *F = probe_json(p);
    const cJSON *lib = F->root ? cJSON_GetObjectItemCaseSensitive(
                                     F->root, "library")
                               : NULL;
    dg_status lst;
    if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(lib, "function")) >
            0 &&
        !dgc_graphdef_load_json_lib(g, p->text, p->len, &lst, err))
        return lst; /* issue 22: a function library, the binary file's path */
    if (!F->streaming)
        return dgc_graphdef_load(g, &F->doc, F->root, err);
    if (F->S.nodes && F->S.base[4] == 0)
        return load_gd_stream(g, F->root, &F->S, F->bad_first, F->dup,
                              F->dup_at, F->node_at, err);
    dg_status st = front_errors(F, p->text, err);
    if (!st)
        st = dgc_graphdef_load(g, &F->doc, F->root, err);
    return st;
}

/* ---- dgrun's JSON (SPEC section 2): any other text --------------------- */

static int dgrun_json_detect(dgc_probe *p)
{
    (void)p;
    return DGC_DETECT_YES; /* the last graph row: its errors are the JSON's */
}

static dg_status dgrun_json_load(dgc_probe *p, void *out, dg_error *err)
{
    dgc_graph *g = out;
    dgc_jfront *F = probe_json(p);
    if (F->st) {
        *err = F->err;
        return F->st;
    }
    if (!F->streaming)
        return load_root(g, F->root, &F->S, err);
    dg_status st = front_errors(F, p->text, err);
    if (!st)
        st = load_root(g, F->root, &F->S, err);
    return st;
}

/* the rows (format.c) */
const dgc_format dgc_format_graphdef_json = {
    "graphdef-json", DGC_FMT_GRAPH, gd_json_detect,
    gd_json_load};
const dgc_format dgc_format_dgrun_json = {
    "dgrun-json", DGC_FMT_GRAPH, dgrun_json_detect,
    dgrun_json_load};
