/*
 * grad.h -- internals shared by the gradient pass (gradients.c), the
 * per-op gradient rules (grad_rules.c) and the training pass (train.c).
 *
 * Reverse-mode differentiation appends ordinary IR nodes to the graph.
 * Every generated node is flagged DGC_NODE_GENERATED, records the forward
 * op it differentiates (forward, group_hint) and the set's colocation
 * choice, and is typed by dgc_infer_node as soon as it exists.
 */
#ifndef DGC_GRAD_H
#define DGC_GRAD_H

#include "ir.h"
#include "ops.h"
#include "infer.h"
#include "dg_error.h"

/* The gradient pass (gradients.c): build every `gradients` set of g. */
dg_status dgc_pass_gradients(dgc_graph *g, int colocate_override,
                             dg_error *err);

/* One gradient computation in progress. */
typedef struct dgc_gctx {
    dgc_graph *g;
    const char *set;   /* name prefix: "<set>/<forward>/<suffix>" */
    int colocate;      /* 0/1: copied into every generated node */
    dg_error *err;
    const uint8_t *need; /* during dgc_grad_rule: need[i] = input i wants a
                            gradient (NULL = all); rules may skip others */
    struct dgc_lgrad *loop; /* inside a backward loop body (grad_loop.c):
                               every created node is wired into its frame */
    /* with loop: wires node id into the backward frame (grad_loop.c sets
     * it to dgc_grad_loop_wire; grad_node.c calls it) */
    dg_status (*wire)(struct dgc_gctx *c, int32_t id);
} dgc_gctx;

/* Append a generated node named "<set>/<fwd name>/<suffix>" (made unique
 * with _1, _2, ... if taken) with op `op` and data inputs `in`, and infer
 * its type.  Returns the id, or -1 with c->err filled. */
int32_t dgc_grad_node(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                      const dgc_ref *in, int n_in);
/* Same, but not typed yet: the caller sets attributes, then calls
 * dgc_infer_node. */
int32_t dgc_grad_node_raw(dgc_gctx *c, int32_t fwd, const char *suffix,
                          int op, const dgc_ref *in, int n_in);
/* Same, with an exact full name (no prefixing; fails if taken; not typed). */
int32_t dgc_grad_node_named(dgc_gctx *c, int32_t fwd, const char *name,
                            int op, const dgc_ref *in, int n_in);
/* An int32 vector Const of the n values v, generated (and typed) for
 * forward op fwd.  Node -1 with c->err filled on failure. */
dgc_ref dgc_grad_ints(dgc_gctx *c, int32_t fwd, const char *suffix,
                      const int64_t *v, int n);
/* x cast to dtype t, a Cast node generated (and typed) for forward op fwd.
 * Node -1 with c->err filled on failure. */
dgc_ref dgc_grad_cast(dgc_gctx *c, int32_t fwd, dgc_ref x, dg_dtype t);
/* A scalar Const of dtype t with value v, generated for forward op fwd. */
int32_t dgc_grad_const(dgc_gctx *c, int32_t fwd, const char *suffix, double v,
                       dg_dtype t);

/* ---- small helpers of the per-op rules (grad_rules.c, grad_zoo.c,
 * grad_collective.c; their shorthand macros are in grad_rule.h) ---- */

/* The status to return after a helper gave node -1: c->err's code, or
 * DG_E_GRAPH if none was set. */
dg_status dgc_grad_fail(const dgc_gctx *c);
/* dgc_grad_node's node as a ref to its output 0 (node -1 on error). */
dgc_ref dgc_grad_mk(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                    const dgc_ref *in, int n_in);
/* A generated node's attribute setter for dgc_grad_mk_set: 0 ok, else
 * failure (out of memory unless it set c->err). */
typedef int (*dgc_grad_set_fn)(dgc_gctx *c, int32_t fwd, dgc_node *n,
                               void *arg);
/* dgc_grad_mk, with set(c, fwd, node, arg) (if not NULL) giving the node
 * its attributes before it is typed. */
dgc_ref dgc_grad_mk_set(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                        const dgc_ref *in, int n_in, dgc_grad_set_fn set,
                        void *arg);
/* dgc_grad_mk with int attrs k1 = v1, k2 = v2 (k NULL: none), typed. */
dgc_ref dgc_grad_mk_attrs(dgc_gctx *c, int32_t fwd, const char *suffix,
                          int op, const dgc_ref *in, int n_in, const char *k1,
                          int64_t v1, const char *k2, int64_t v2);
/* The ref to output `index` of node `node`. */
dgc_ref dgc_grad_ref(int32_t node, int32_t index);
/* The (inferred) type of tensor r of c->g; the pointer is valid until the
 * next node is added. */
const dgc_ttype *dgc_grad_type(const dgc_gctx *c, dgc_ref r);
/* The attributes of a scan's gradient scan (a dgc_grad_set_fn): the
 * forward's axis and exclusive, reverse flipped (Cumsum, Cumprod,
 * CumulativeLogsumexp). */
int dgc_grad_set_cumsum(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg);
/* A scalar Const v with the dtype of `like`, generated for forward op fwd
 * (node -1 with c->err filled on failure). */
dgc_ref dgc_grad_cst(dgc_gctx *c, int32_t fwd, const char *suffix, double v,
                     dgc_ref like);
/* The gradient g reduced to the shape of `like` (a broadcast input):
 * SumTo(g, like) named ".../SumTo", or g itself when both shapes are fully
 * known and equal, or when g is node -1 (no gradient). */
dgc_ref dgc_grad_sum_to(dgc_gctx *c, int32_t fwd, dgc_ref g, dgc_ref like);

/* The gradient rule of node `id`: given dy[k] for each output k (node -1 =
 * no gradient flows into that output), set dx[i] for each data input i
 * (node -1 = none).  DG_E_GRAPH if the op has no gradient. */
dg_status dgc_grad_rule(dgc_gctx *c, int32_t id, const dgc_ref *dy,
                        dgc_ref *dx);

/* One op's gradient rule (issue 20): `one` is given the first output's
 * gradient dy (dgc_grad_rule returns before it when none flows there),
 * `all` every output's (dys, dgc_grad_rule's contract).  The rules
 * register themselves (DGC_GRAD / DGC_GRAD_N, grad_rule.h) into
 * dgc_grad_rules[DGC_N_OPS], which tools/gen_registry.py writes at build
 * time (grad_rules_gen.c); an op with neither has no gradient. */
typedef struct dgc_grad_entry {
    dg_status (*one)(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx);
    dg_status (*all)(dgc_gctx *c, int32_t fwd, const dgc_ref *dys,
                     dgc_ref *dx);
} dgc_grad_entry;
/* Whether op has a gradient rule. */
int dgc_grad_has_rule(int op);

/* The rule of AllReduce and Broadcast (grad_collective.c). */
dg_status dgc_grad_collective(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                              dgc_ref *dx);

/* Differentiate sum(ys) with respect to each of xs (output 0 of each).
 * grad_ys (n_grad_ys == n_ys) seeds each y, or NULL for ones shaped like y
 * ("<set>/<y>/grad_ys").  out_ids[j] receives the node "<set>/<xs[j]>"
 * (Identity/AddN of the contributions, or ZerosLike(x) with no path). */
dg_status dgc_grad_build(dgc_graph *g, const char *set, const int32_t *ys,
                         int n_ys, const int32_t *grad_ys, int n_grad_ys,
                         const int32_t *xs, int n_xs, int colocate,
                         int32_t *out_ids, dg_error *err);

/* ---- while loops (grad_loop.c) ------------------------------------------
 * The sweep of gradients.c treats each top-level loop (the nodes of a
 * frame, its Enters and its Exits) as one node whose inputs are its
 * Enters' inputs; grad_loop.c builds the loop's backward loop and drives
 * the same sweep over the forward loop's body. */

/* The gradient sweep in progress (gradients.c). */
typedef struct gstate dgc_gsweep;
dgc_gctx *dgc_gsweep_ctx(dgc_gsweep *s);
/* Add grad to the gradient of tensor `at` if `at` is on a path from an x
 * to a y and is float (otherwise nothing). */
dg_status dgc_gsweep_add(dgc_gsweep *s, dgc_ref at, dgc_ref grad);
/* The sum of the contributions to `at` so far (node -1: none). */
dg_status dgc_gsweep_sum(dgc_gsweep *s, dgc_ref at, dgc_ref *dy);
/* Apply the gradient rule of forward node v to its contributions (nothing
 * if it has none or no input on the path). */
dg_status dgc_gsweep_node(dgc_gsweep *s, int32_t v);
/* 1 if node v is on a path from an x to a y. */
int dgc_gsweep_on(const dgc_gsweep *s, int32_t v);

/* The loops of nodes [0, n) of g, found by walking frames from the graph's
 * sources as the executor does (grad_loop_find.c).  *out = NULL when g has
 * no Enter. */
typedef struct dgc_gloop {  /* the loop of one frame */
    int32_t frame;
    int32_t *enters;    /* the Enters opening it */
    int n_enters;
    int32_t *exits;     /* the Exits leaving it */
    int n_exits;
} dgc_gloop;

typedef struct dgc_gloops {
    int32_t n;          /* nodes covered */
    int32_t *frame;     /* per node: the frame it runs in (0 = root) */
    int32_t *child;     /* per Enter: the frame it opens, else -1 */
    int32_t *fparent;   /* per frame */
    const char **fname; /* per frame */
    int32_t n_frames;
    dgc_gloop *loops;       /* per frame (a loop is named by its frame) */
} dgc_gloops;

/* Append v to the array *a of *n ids; -1 nomem. */
int dgc_ids_push(int32_t **a, int *n, int32_t v);
dg_status dgc_gloops_find(const dgc_graph *g, int32_t n, dgc_gloops **out,
                          dg_error *err);
void dgc_gloops_free(dgc_gloops *l);
/* The loop (named by its frame) among the child frames of frame f that
 * holds node v (its Enters, nodes of it or of frames inside it, its
 * Exits); -1 none. */
int dgc_gloops_within(const dgc_gloops *l, int32_t v, int32_t f);
/* Node v's top-level loop: dgc_gloops_within(l, v, 0). */
int dgc_gloops_of(const dgc_gloops *l, int32_t v);
/* The loop an Exit v leaves, -1 if v is not in a loop. */
int dgc_gloops_left(const dgc_gloops *l, int32_t v);
/* The node standing for loop L in the sweep (its first Exit). */
int32_t dgc_gloops_rep(const dgc_gloops *l, int L);
/* Loop L's Exits (to order something after the loop). */
int dgc_gloops_exits(const dgc_gloops *l, int L, const int32_t **exits);
/* Loop L's Enters from the outer frame: the loop's inputs are theirs. */
int dgc_gloops_enters(const dgc_gloops *l, int L, const int32_t **enters);
/* Differentiate loop L: read the gradients of its Exits from the sweep,
 * build the backward loop, add the gradients of its Enters' inputs. */
dg_status dgc_grad_loop(dgc_gsweep *s, const dgc_gloops *l, int L);
/* Wire node id, just created inside a backward loop body, into the
 * backward frame (called by dgc_grad_node_named). */
dg_status dgc_grad_loop_wire(dgc_gctx *c, int32_t id);

#endif
