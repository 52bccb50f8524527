/*
 * exec.h -- the executor as the session sees it: the world a plan runs in
 * (devices, their inter-op pools, Variables, feeds, the trace recorder, the
 * kernels' environment), runners (a plan bound to that world, run many
 * times) and the pools' task entry point.
 *
 * The executor talks to devices only through their backends
 * (core/backend.h) and never asks what kind of device it holds: host-memory
 * backends run kernels on the calling worker, backends with streams
 * enqueue and report completion through events.
 */
#ifndef DGR_EXEC_H
#define DGR_EXEC_H

#include <pthread.h>
#include <stdatomic.h>

#include "backend.h"
#include "threadpool.h"
#include "trace.h"
#include "plan.h"

/* The world plans run in; owned and filled by the session. */
typedef struct dgr_exec {
    const dgc_graph *g;
    const dg_device_list *devlist; /* the program's device list */
    int n_dev;
    dgr_device *devs;         /* n_dev opened devices, index = device id */
    dgr_ipool **pools;        /* inter-op pool per device */
    int *lane_base;           /* first global worker index of each device */
    int n_workers;            /* total inter-op workers */
    dgr_value *vars;          /* per node: Variable storage (buf NULL if none) */
    dgr_value *feeds;         /* per node: fed Placeholder value */
    const dgr_kenv *env;      /* what kernels get from the session */
    dgr_trace *trace;         /* NULL when not tracing */
    char ***out_names;        /* per node: output tensor names (tracing) */
    const char ***in_names;   /* per node: its inputs' names (tracing) */
    atomic_size_t *mem_seen;  /* per device: last traced bytes in use */
    _Atomic uint64_t *mem_seen_ns; /* per device: when it was traced */
    atomic_uint_fast64_t run_counter; /* runs started, for RNG streams */
    pthread_mutex_t run_mu;   /* one run at a time */
} dgr_exec;

typedef struct dgr_runner dgr_runner;

/* Bind a plan for (fetch, targets) to the world x.  NULL + err on
 * failure. */
dgr_runner *dgr_runner_new(dgr_exec *x, const dgc_ref *fetch, int n_fetch,
                           const int32_t *targets, int n_targets,
                           dg_error *err);
/* Execute once.  `step` tags trace events and RNG streams.  When fetched is
 * non-NULL it receives n_fetch host tensors (caller frees each with
 * dg_tensor_free). */
dg_status dgr_runner_run(dgr_runner *r, int64_t step, dg_tensor **fetched,
                         dg_error *err);
void dgr_runner_free(dgr_runner *r);

/* The inter-op pools' task function: runs plan step `item` of runner `ctx`
 * (a dgr_runner) on worker `lane` of that step's device, then the ready
 * successors. */
void dgr_exec_task(void *ctx, int32_t item, int lane);

/* Name string of output ref r ("x" or "x:k"), dg_malloc'd; NULL on nomem. */
char *dgr_ref_name(const dgc_graph *g, dgc_ref r);

#endif
