/*
 * load.c -- JSON graph loader
 * (placeholder: being written)
 */
#include "ir.h"
#include "dg_error.h"
dg_graph *dg_graph_load(const char *path, const char *text, size_t len, dg_error *err) { (void)path; (void)text; (void)len; dg_err(err, DG_E_GRAPH, "not implemented"); return NULL; }
void dg_graph_free(dg_graph *g) { dgc_graph_free(g); }
