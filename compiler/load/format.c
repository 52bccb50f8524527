/*
 * format.c -- the table of input formats (format.h) and the two entry
 * points that use it: dg_graph_load (any graph format: binary GraphDef,
 * GraphDef JSON, dgrun's JSON, SPEC section 2) and, through
 * dgc_rules_load_file (load_rules.c), placement rules.  After a graph
 * format loaded the nodes: pending inputs are checked and, with the text
 * freed, shape/dtype inference runs over the whole graph (infer/shape.c),
 * which also rejects cycles.
 */
#include "format.h"
#include "load_priv.h"
#include "infer.h"
#include "dg_alloc.h"

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

void dg_graph_free(dg_graph *g)
{
    dgc_graph_free(g);
}
