/*
 * pending.h -- inputs that name generated nodes (pending.c): the loader
 * keeps them aside, the gradient and training passes check they close no
 * cycle, dgc_pass_resolve_pending (passes/) resolves them.
 */
#ifndef DGC_PENDING_H
#define DGC_PENDING_H

#include "ir.h"
#include "dg_error.h"

/* Inputs naming nodes that do not exist yet (pending.c): node id's input
 * names (len bytes at names, n_in of them) are kept aside and its inputs
 * emptied; the node is marked DGC_NODE_PENDING and err cleared. */
dg_status dgc_pending_stash(dgc_graph *g, int32_t id, const char *names,
                            size_t len, int n_in, dg_error *err);
/* After the sections are loaded: reject pending inputs no pass can
 * generate (the original "names unknown node" error) and mark every
 * consumer of a pending node DGC_NODE_AFTER (shape inference skips both
 * until dgc_pass_resolve_pending). */
dg_status dgc_pending_check_load(dgc_graph *g, dg_error *err);
/* The "names unknown node" error of the first pending node up to node
 * `before` (file order; its inputs come before its later fields), DG_OK if
 * none: when the load fails anyway on that node, errors keep their order. */
dg_status dgc_pending_first_error(const dgc_graph *g, int32_t before,
                                  dg_error *err);
/* DG_E_GRAPH naming the nodes when ys depend on a node that waits for a
 * generated input (a cycle through generated nodes); set = gradient set
 * name or "train". */
dg_status dgc_pending_check_deps(const dgc_graph *g, const int32_t *ys,
                                 int n_ys, const char *set, dg_error *err);

#endif
