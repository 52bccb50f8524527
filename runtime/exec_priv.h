/*
 * exec_priv.h -- the executor's private state shared by its two halves:
 * the runner a plan is bound to (exec_runner.c builds and frees it) and the
 * hot path that runs it (executor.c).  Not for other files.
 */
#ifndef DGR_EXEC_PRIV_H
#define DGR_EXEC_PRIV_H

#include "executor.h"
#include "cl.h"

typedef struct wscratch {
    dgr_value *in;
    void **evs;          /* max_waits events to wait for */
    dgc_ttype *tout;
    dg_error err;
} wscratch;

/* Per-step facts the hot path needs, precomputed by dgr_runner_new. */
enum {
    XS_VARIABLE = 1,  /* reads a Variable's storage */
    XS_FEED = 2,      /* reads a fed Placeholder */
    XS_STATIC = 4,    /* input and output types fully known at compile time:
                         the run-time inference is skipped */
    XS_NOTIFY = 8,    /* OpenCL step with successors on other devices: they
                         wait for its completion, not its enqueue */
    XS_MQ = 16,       /* OP step on an OpenCL device with several queues */
    XS_EVENT = 32     /* makes a completion event (qev) for successors on
                         other queues of its device or transfers out */
};

/* Completion notice of an XS_NOTIFY step (exec_cl.c calls fn). */
typedef struct xnotify {
    dgr_cl_notify base;
    dgr_runner *r;
    int32_t s;
} xnotify;

struct dgr_runner {
    dgr_session *s;
    dgc_plan *plan;
    dgr_kernel_fn *kern;     /* per step (OP steps with a kernel) */
    uint8_t *xflags;         /* per step: XS_* */
    int32_t *n_local;        /* per step: successors signalled at once (the
                                first n_local of its succ list); the rest
                                wait for an XS_NOTIFY step's completion */
    xnotify *notify;         /* per step (used for XS_NOTIFY steps) */
    void **notify_ev;        /* per step: marker event of this run */
    int8_t *qidx;            /* per step: compute queue (GPU ops) */
    int32_t *wait_off, *wait_n; /* per step: into waits */
    int32_t *waits;          /* steps whose qev a step waits for */
    int max_waits;
    void **qev;              /* per XS_EVENT step: event of this run */
    atomic_int *pending;     /* per step */
    atomic_int *uses;        /* per slot */
    dgr_value *values;       /* per slot */
    wscratch *scratch;       /* per global inter-op worker */
    int max_in, max_out;
    atomic_int outstanding;  /* steps queued or running */
    atomic_int failed;
    dg_error err;            /* first error (written by the CAS winner) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int64_t step;
    /* tracing, per step */
    void **events;
    uint64_t *t_start, *t_end;
    int32_t *lane;
    uint32_t key_base;       /* this run's slice keys: key_base + step */
};

/* Completion callback of an XS_NOTIFY step's marker (executor.c): signal
 * its successors on other devices (or record the failure, ok = 0) and
 * release the unit of outstanding work it holds. */
void dgr_exec_notify_done(dgr_cl_notify *base, int ok);

#endif
