/*
 * load_fn_priv.h -- what load_function.c (TF 2 function inlining) shares
 * with load_cflow.c (TF 2 functional control flow and TensorLists made
 * TF-1 frames and TensorArrays).  Private to compiler/load.
 */
#ifndef DGC_LOAD_FN_PRIV_H
#define DGC_LOAD_FN_PRIV_H

#include "load_function.h"
#include "dg_util.h"

typedef struct fnctx {
    dgc_fn_graph *out;
    dgc_fn_arena *a;
    size_t cap;
    dg_error *err;
} fnctx;

/* One function body being inlined. */
typedef struct frame {
    const Dgtf__FunctionDef *fn;  /* NULL: the top-level graph */
    const char *prefix;           /* the call's name */
    char **args;                  /* the call's data inputs, as names */
    dg_strmap body;               /* body node name -> index */
} frame;

/* n zeroed bytes / a formatted string in the inlining's arena (freed with
 * it); NULL on nomem. */
void *dgc_fn_alloc(fnctx *c, size_t n);
char *dgc_fn_printf(fnctx *c, const char *fmt, ...);
/* Append node n (arena-allocated) to the inlined graph. */
dg_status dgc_fn_emit(fnctx *c, Dgtf__NodeDef *n);
/* Inputs naming `key` ("node:k", "^node") will name `val` instead. */
dg_status dgc_fn_alias(fnctx *c, const char *key, const char *val);
dg_status dgc_fn_nomem(fnctx *c);
/* The function an attr of kind func names (While's cond, body; a call's
 * f), in the arena; NULL when n has no such attr or it is malformed, or
 * out of memory (*oom set). */
const char *dgc_fn_func_attr(fnctx *c, const Dgtf__NodeDef *n,
                             const char *key, int *oom);
/* The library function named fname, or NULL. */
const Dgtf__FunctionDef *dgc_fn_find(fnctx *c, const char *fname);
/* Inline function fname as the call `name` with data inputs in[0..n_in)
 * (load_function.c's inline_body): "name:k" becomes an alias of its k-th
 * return.  frame_ctrl (or NULL): a control input ("^x") every body node
 * without inputs gets, so it runs in a loop frame's iterations. */
dg_status dgc_fn_inline_body(fnctx *c, const Dgtf__NodeDef *call,
                             const char *fname, const char *name, char **in,
                             size_t n_in, const char *device, int depth,
                             const char *frame_ctrl);

/* load_cflow.c: a While / StatelessWhile node b (named `name`, inputs in,
 * already mapped) lowered as TF's LowerWhileHelper does: per loop
 * variable Enter -> Merge -> Switch(LoopCond of the inlined cond) ->
 * Exit, the body inlined on the Switch's true side, NextIteration back
 * to the Merge; a variable the body returns unchanged enters once
 * (is_constant) and its output is the While's input. */
dg_status dgc_fn_lower_while(fnctx *c, const Dgtf__NodeDef *b,
                             const char *name, char **in, size_t n_in,
                             const char *device, int depth);
/* load_cflow.c: an If / StatelessIf node b lowered as TF's LowerIfOp
 * does: each input Switched on the predicate, the then branch inlined on
 * the true sides, the else branch on the false sides (their nodes without
 * inputs waiting for a pivot of the predicate's own Switch), a Merge of
 * the two per output. */
dg_status dgc_fn_lower_if(fnctx *c, const Dgtf__NodeDef *b, const char *name,
                          char **in, size_t n_in, const char *device,
                          int depth);
/* load_cflow.c: after the inlining (inputs resolved), TensorList ops as
 * TensorArray ops (TensorListReserve / FromTensor -> TensorArrayV3 (+
 * ScatterV3), GetItem -> ReadV3, SetItem -> WriteV3, Stack -> GatherV3);
 * a list value is the array's flow, its handle enters the frames the
 * list's consumers are in. */
dg_status dgc_fn_lists(fnctx *c);

#endif
