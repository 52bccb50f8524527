/*
 * kernel.h -- what a kernel is: the call context every backend's kernels
 * receive, the environment a session lends them (seeds, Print, tracing;
 * Variables and feeds arrive as inputs: the executor reads them) and the
 * rows of a backend's kernel registry.
 *
 * A kernel gets everything it needs in its context and never calls up into
 * the session or the executor; the ordering of an asynchronous backend's
 * commands (its stream, the events to wait for, whether to return an
 * event) travels in the context too, not in thread-local state.
 */
#ifndef DGR_KERNEL_H
#define DGR_KERNEL_H

#include <stdint.h>

#include "value.h"
#include "ir.h"
#include "ops.h"
#include "attr_get.h"

/* One collective call of a replicated graph (issue 13, SPEC 8.4), as the
 * AllReduce and Broadcast kernels hand it to dgr_kenv.collective.  The
 * buffers are in host memory (a GPU kernel stages through the host). */
typedef enum dgr_coll_kind {
    DGR_COLL_ALLREDUCE,  /* out = reduction over the replicas' in */
    DGR_COLL_REDUCE,     /* the same on replica root, zeros elsewhere
                            (AllReduce with attr root: Broadcast's
                            gradient; MPI_Reduce) */
    DGR_COLL_BROADCAST   /* out = replica root's in */
} dgr_coll_kind;

typedef enum dgr_coll_reduction { /* as dgc_allreduce_reduction numbers them */
    DGR_COLL_SUM, DGR_COLL_MEAN, DGR_COLL_MAX, DGR_COLL_MIN
} dgr_coll_reduction;

/* Completion of a call that finishes after it returned (a deferred
 * kernel, a collective with `done`): fn is called exactly once, from any
 * thread, with DG_OK or the error. */
typedef struct dgr_kdone dgr_kdone;
struct dgr_kdone {
    void (*fn)(dgr_kdone *d, dg_status st, const dg_error *err);
};

typedef struct dgr_collective {
    dgr_coll_kind kind;
    dgr_coll_reduction reduction; /* DGR_COLL_ALLREDUCE */
    int root;                     /* DGR_COLL_REDUCE, _BROADCAST */
    const char *key;   /* the op's replica-independent name (attr "key"):
                          the same on every replica, so it matches the
                          calls of one collective across ranks */
    int replica;       /* this replica's index (attr "replica") */
    int replicas;      /* W (attr "replicas"), > 1 */
    int32_t node_id;
    int64_t step;
    dg_dtype dtype;
    int64_t n;         /* elements of in and out */
    const void *in;
    void *out;
    /* NULL: the call returns when out is filled.  Else the runtime may
     * return DG_OK at once and call done->fn when out is filled (in and
     * out stay valid until then); an error return means done is never
     * called. */
    dgr_kdone *done;
} dgr_collective;

/* What a session lends its kernels.  Every callback is safe to call from
 * any worker thread. */
typedef struct dgr_kenv {
    void *ctx;
    /* Seed for a random op: derived from --seed, the node (its `seed` attr
     * when it has one, else its name) and the run, so the same seed gives
     * the same numbers. */
    uint64_t (*rng_seed)(void *ctx, int32_t node_id);
    /* Print's output (serialised; stderr belongs to the CLI, but printing
     * is Print's contract). */
    void (*print)(void *ctx, const char *text);
    int tracing;           /* a trace is recorded: kernels report events */
    /* The collective runtime of a replicated graph (AllReduce, Broadcast
     * across replicas): NULL without one (no MPI), and then those ops are
     * the identity with one replica and an error with more.  The MPI layer
     * sets it (docs/decisions.md, "Collectives through the kernel
     * environment").  Returns DG_OK or an error in err naming the node. */
    dg_status (*collective)(void *ctx, const dgr_collective *c,
                            dg_error *err);
    /* How many times node_id called it before in this session (Print's
     * first_n, issue 21); NULL: no count kept (Print prints every time). */
    uint64_t (*times)(void *ctx, int32_t node_id);
} dgr_kenv;

typedef struct dgr_kctx {
    const dgr_kenv *env;
    dgr_device *dev;
    const dgc_graph *g;
    const dgc_node *node;
    int32_t node_id;
    const dgr_value *in;   /* n_in concrete inputs on dev */
    int n_in;
    dgr_value *out;        /* n_out outputs: the kernel fills them */
    int n_out;
    const dgc_ttype *out_types; /* concrete output types from infer */
    int64_t step;          /* training / repeat step, for tracing & RNG */
    /* asynchronous backends: the stream the kernel enqueues on, the events
     * its first command must wait for (taken: n_waits is zeroed by the
     * command that waits), whether it must return its last command's
     * event, and that event (retained; the caller releases it) */
    int stream;
    void *const *waits;
    int n_waits;
    int want_event;
    void *event;
    dg_error *err;
    /* NULL: the kernel finishes before it returns.  Else (the executor
     * offers it to AllReduce/Broadcast on host-memory devices) the kernel
     * may set `deferred` and return DG_OK before its output is filled;
     * defer->fn is then called once when it is (inputs stay alive). */
    dgr_kdone *defer;
    int deferred;
} dgr_kctx;

/* Kernel contract: read k->in, produce k->out[0..n_out) on k->dev.  On an
 * asynchronous device a kernel only enqueues (no host wait).  Returns DG_OK
 * or an error naming the node. */
typedef dg_status (*dgr_kernel_fn)(dgr_kctx *k);

/* One row of a backend's kernel registry, indexed by op id
 * (DGC_OPID_<Name>): the kernel dtypes ("T") it runs the op in, or
 * DGR_KDT_OP for every dtype the op supports, and the function.  A row
 * with dtypes and no function is an op the executor itself runs on that
 * device (Variable reads, Placeholder feeds): available, no kernel. */
#define DGR_KDT_OP 0xFFFFFFFFu
typedef struct dgr_kernel_row {
    uint32_t dtypes;       /* 0 = no row */
    dgr_kernel_fn fn;
} dgr_kernel_row;

/* Kernel self-registration (issue 20), one line next to the kernel in its
 * own file, as TF's REGISTER_KERNEL_BUILDER:
 *   DGR_KERNEL(Op, fn);             the backend's default kernel dtypes
 *   DGR_KERNEL_DT(Op, fn, DTYPES);  explicit kernel dtypes (an expression)
 *   DGR_KERNEL_EXEC(Op);            a row without a kernel (the executor
 *                                   runs the op: Variable, Enter, ...)
 * tools/gen_registry.py reads these lines from the backend's sources at
 * build time and writes the backend's dgr_kernel_row[DGC_N_OPS] table; an
 * op not in ops.def or registered twice on one backend stops the build.
 * In C a line only checks that the op exists and fn is a kernel. */
#define DGR_KERNEL(op, fn)                                                    \
    _Static_assert(DGC_OPID_##op >= 0 &&                                      \
                       _Generic((fn), dgr_kernel_fn: 1, default: 0),          \
                   "DGR_KERNEL(" #op ", " #fn "): not a kernel")
#define DGR_KERNEL_DT(op, fn, dtypes)                                         \
    _Static_assert(DGC_OPID_##op >= 0 && (dtypes) != 0 &&                     \
                       _Generic((fn), dgr_kernel_fn: 1, default: 0),          \
                   "DGR_KERNEL_DT(" #op ", " #fn "): not a kernel")
#define DGR_KERNEL_EXEC(op)                                                   \
    _Static_assert(DGC_OPID_##op >= 0, "DGR_KERNEL_EXEC(" #op ")")

/* Allocate output i with k->out_types[i] on k->dev (for k->stream);
 * DG_E_NOMEM naming the node, shape and bytes. */
dg_status dgr_kctx_alloc_output(dgr_kctx *k, int i);
/* s with leading 1-dims up to `rank` (NumPy's right alignment; BroadcastTo
 * reads its input through this view). */
dg_shape dgr_shape_right_align(const dg_shape *s, int rank);
/* Make output i share the buffer of v (retained), with type out_types[i]
 * (Identity, Reshape). */
void dgr_kctx_alias_output(dgr_kctx *k, int i, const dgr_value *v);

/* The collective call of AllReduce / Broadcast node k->node from its attrs
 * (reduction, root, key, replica, replicas) and input 0 (dtype, n; in and
 * out left NULL).  Returns W, the replica count (1 when not replicated). */
int dgr_collective_describe(const dgr_kctx *k, dgr_collective *c);
/* The error of a collective over `replicas` > 1 replicas without a
 * collective runtime (no MPI). */
dg_status dgr_collective_missing(const dgr_kctx *k, int replicas);

#endif
