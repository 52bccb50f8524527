/*
 * program.h -- dg_program: a compiled graph, as compile.c builds it and the
 * runtime and the placement renderers read it; and the passes (passes/,
 * with the lower layers' passes this header pulls in).
 */
#ifndef DGC_PROGRAM_H
#define DGC_PROGRAM_H

#include "ir.h"
#include "devices.h"
#include "pending.h"
#include "infer.h"
#include "grad.h"
#include "partition.h"

struct dg_program {
    dgc_graph *g;           /* owned; placed */
    dg_device_list devs;    /* owned copy of the compile's devices */
    dgc_transfer *transfers; /* whole-graph transfers (place output) */
    int n_transfers;
    int allow_soft;         /* resolved: options over graph */
    int colocate;           /* resolved: options over graph (-1 = per set) */
    char **fetch;           /* resolved fetch names (options over graph) */
    int n_fetch;
    /* strings handed out by dg_program_node/transfer */
    char **transfer_from;
    char *device_scope;     /* resolved --device scope, NULL if none (explain) */
    dg_cluster *cluster;    /* the cluster compiled for (--cluster over the
                               graph's), NULL without one (SPEC 8) */
};

/* Passes in the order compile.c runs them (each in its own file).  The
 * gradient pass is grad/'s (grad.h), the inference pass infer/'s
 * (infer.h): dgc_pass_gradients, then */
dg_status dgc_pass_train(dgc_graph *g, int colocate_override,
                         dg_error *err);                     /* train.c */
dg_status dgc_pass_replicate(dgc_graph *g, const dg_cluster *cluster,
                             dg_error *err);                 /* replicate.c */
/* then dgc_pass_infer on the generated nodes, then */
/* Inputs naming generated nodes (ir/pending.c): resolve them once the passes
 * above made those nodes, then infer (and cycle-check) the whole graph. */
dg_status dgc_pass_resolve_pending(dgc_graph *g, dg_error *err);
/* Constant folding (fold.c): nodes whose int value is known at compile
 * time (Shape of a static shape, shape arithmetic on Consts) become
 * Consts, keeping device, _class and control inputs; re-infers. */
dg_status dgc_pass_fold(dgc_graph *g, dg_error *err);
dg_status dgc_pass_place(dgc_graph *g, const dg_device_list *devs,
                         const char *device_scope, const dgc_rule *rules,
                         int n_rules, int allow_soft, int colocate,
                         dg_error *err);                     /* place.c */
/* Fusion (fuse.c), after placement: MatMul -> BiasAdd [-> Relu] chains on
 * one device become _FusedMatMul nodes (the last node of the chain is
 * rewritten; the rest lose their reader).  `fetch`: names the compile
 * knows are fetched (never absorbed), besides the graph's own. */
dg_status dgc_pass_fuse(dgc_graph *g, const dg_device_list *devs,
                        const char *const *fetch, int n_fetch,
                        dg_error *err);
/* The op a node the fusion pass rewrote is shown as ("Relu", "BiasAdd"),
 * NULL for any other node. */
const char *dgc_fused_user_op(const dgc_node *n);

#endif
