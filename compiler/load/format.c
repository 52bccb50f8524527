/*
 * format.c -- the table of input formats (format.h) and the two entry
 * points that use it: dg_graph_load (any graph format: binary GraphDef,
 * GraphDef JSON, dgrun's JSON, SPEC section 2) and dgc_rules_load_file
 * (placement rules, `--placement FILE`).  After a graph
 * format loaded the nodes: pending inputs are checked and, with the text
 * freed, shape/dtype inference runs over the whole graph (infer/shape.c),
 * which also rejects cycles.
 */
#include "format.h"
#include "load_priv.h"
#include "infer.h"
#include "load.h"
#include "dg_alloc.h"

#include <stdio.h>

/* Rows of one kind are asked in this order. */
extern const dgc_format dgc_format_graphdef_binary; /* load_pb.c */
extern const dgc_format dgc_format_graphdef_json;   /* load.c */
extern const dgc_format dgc_format_dgrun_json;      /* load.c */
extern const dgc_format dgc_format_placement_rules; /* load_rules.c */
const dgc_format *const dgc_formats[] = {
    &dgc_format_graphdef_binary,
    &dgc_format_graphdef_json,
    &dgc_format_dgrun_json,
    &dgc_format_placement_rules,
    NULL,
};

dg_status dgc_format_load(int kind, dgc_probe *p, void *out,
                          const char **name, dg_error *err)
{
    dg_status st = DG_OK;
    int done = 0;
    for (int i = 0; dgc_formats[i] && !done; i++) {
        const dgc_format *f = dgc_formats[i];
        if (f->kind != kind || f->detect(p) == DGC_DETECT_NO)
            continue;
        p->declined = 0;
        st = f->load(p, out, err);
        if (!st && p->declined)
            continue;
        done = 1;
        if (name)
            *name = f->name;
    }
    dgc_probe_json_free(p);
    if (!done && !st) /* unreachable: dgrun-json takes any text */
        st = dg_err(err, DG_E_GRAPH, "not a graph");
    return st;
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
    dgc_probe p = {.path = path, .text = text, .len = len};
    dg_status st = dgc_format_load(DGC_FMT_GRAPH, &p, g, NULL, err);
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

dg_status dgc_rules_load_file(const char *path, dgc_rule **rules, int *n,
                              dg_error *err)
{
    *rules = NULL;
    *n = 0;
    char *text;
    size_t len;
    dg_status st = dgc_read_file(path, &text, &len, err);
    if (st) {
        /* the CLI prefixes the graph's path: name the rules file here */
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        return dg_err(err, st, "--placement %s: %s", path, why);
    }
    dgc_probe p = {.path = path, .text = text, .len = len};
    dgc_rules_out o = {NULL, 0};
    st = dgc_format_load(DGC_FMT_RULES, &p, &o, NULL, err);
    *rules = o.rules;
    *n = o.n;
    dg_free(text);
    return st;
}

void dg_graph_free(dg_graph *g)
{
    dgc_graph_free(g);
}
