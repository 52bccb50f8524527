/*
 * load_function.h -- TF 2 graphs made loadable (issue 24): function calls
 * inlined as Grappler's function inliner does and resource-variable ops
 * turned into dgrun's reference-variable ops (load_function.c).  Used by
 * load_metagraph.c only.
 */
#ifndef DGC_LOAD_FUNCTION_H
#define DGC_LOAD_FUNCTION_H

#include "dgrun.h"
#include "tf_meta.pb-c.h"

#include <stddef.h>

typedef struct dgc_fn_arena dgc_fn_arena;

/* The graph after inlining: `node` (for dgc_graphdef_load_pb through a copy
 * of the GraphDef with these nodes and no library), and what the calls'
 * outputs became (dgc_fn_resolve). */
typedef struct dgc_fn_graph {
    Dgtf__NodeDef **node;
    size_t n_node;
    dgc_fn_arena *arena;     /* everything allocated for it */
    void *alias;             /* "call:k" / "^call" -> what replaced it */
} dgc_fn_graph;

/* Inline every call of gd (StatefulPartitionedCall / PartitionedCall with
 * an `f` of gd's library, or an op named like a library function), nested
 * calls too: the body's nodes are named "<call>/<node>", take the call's
 * device when they have none, read the call's inputs in place of the
 * function's arguments, wait for the call's control inputs (a NoOp
 * "<call>/input_control_node"), and "^<call>" becomes a NoOp
 * "<call>/output_control_node" after the function's control outputs.
 * Resource-variable ops become reference-variable ops: VarHandleOp ->
 * VariableV2, ReadVariableOp -> Identity, AssignVariableOp /
 * AssignAddVariableOp / AssignSubVariableOp -> Assign / AssignAdd /
 * AssignSub, ResourceGather -> GatherV2 (axis 0), ResourceApply<X> ->
 * Apply<X>.  Then, when `roots` is given (n_roots > 0: tensor names
 * before inlining, e.g. a signature's outputs and inputs), only what they
 * depend on is kept.  Errors (a missing function, an argument count that
 * does not match, recursion, a body input that names nothing) name the
 * call and the function.  Free with dgc_fn_free (also after an error). */
dg_status dgc_fn_inline(const Dgtf__GraphDef *gd, const char *const *roots,
                        int n_roots, dgc_fn_graph *out, dg_error *err);

/* What the tensor name `t` of the graph before inlining ("call:0",
 * "x:0") is after it; `t` itself when nothing replaced it. */
const char *dgc_fn_resolve(const dgc_fn_graph *f, const char *t);

void dgc_fn_free(dgc_fn_graph *f);

#endif
