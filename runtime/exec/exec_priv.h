/*
 * exec_priv.h -- the executor's private state shared by its two halves:
 * the runner a plan is bound to (exec_runner.c builds and frees it) and the
 * hot path that runs it (executor.c).  Not for other files.
 */
#ifndef DGR_EXEC_PRIV_H
#define DGR_EXEC_PRIV_H

#include "exec.h"

typedef struct wscratch {
    dgr_value *in;
    void **evs;          /* max_waits events to wait for */
    dgc_ttype *tout;
    /* DGC_OP_HOST_IN inputs read back from a device without host memory
     * (DGR_HOST_IN_MAX elements each, for up to max_in inputs) */
    int64_t *hostin;
    dg_error err;
} wscratch;

/* Largest parameter tensor (elements) whose value a DGC_OP_HOST_IN op's
 * run-time inference reads. */
#define DGR_HOST_IN_MAX 64

/* The values of a DGC_OP_HOST_IN op's small integer inputs in[0..n_in) for
 * its run-time inference, into tin[i].value: host memory as it is, a device
 * buffer read back into hostin (DGR_HOST_IN_MAX elements per input; a
 * blocking read of the few elements TF keeps in host memory).  Inputs
 * that are not small integer tensors are left alone. */
dg_status dgr_exec_host_inputs(dgr_device *dev, const dgr_value *in,
                               int n_in, int64_t *hostin, dgc_ttype *tin,
                               dg_error *err);

/* Per-step facts the hot path needs, precomputed by dgr_runner_new. */
enum {
    XS_VARIABLE = 1,  /* reads a Variable's storage */
    XS_FEED = 2,      /* reads a fed Placeholder */
    XS_STATIC = 4,    /* input and output types fully known at compile time:
                         the run-time inference is skipped */
    XS_NOTIFY = 8,    /* step on a device with streams, with successors on
                         other devices: they wait for its completion, not
                         its enqueue */
    XS_MQ = 16,       /* OP step on a device with several streams */
    XS_EVENT = 32     /* makes a completion event (qev) for successors on
                         other queues of its device or transfers out */
};

/* Completion notice of an XS_NOTIFY step (the backend calls fn). */
typedef struct xnotify {
    dgr_notify base;
    dgr_runner *r;
    int32_t s;
} xnotify;

/* Per-step stream facts of a runner (exec_queues.c); arrays dg_calloc'd,
 * n_steps + 1 entries except waits; the caller frees them. */
typedef struct dgr_exec_queues {
    int8_t *qidx;               /* stream of each op on a device with
                                   streams */
    int32_t *wait_off, *wait_n; /* into waits */
    int32_t *waits;             /* steps whose event a step waits for */
    int max_waits;
    void **qev;                 /* per step, for the run's events; NULL
                                   when no device has several streams */
} dgr_exec_queues;

/* Assign streams and wait lists for plan p on x's devices; sets f_mq in
 * xflags[s] for ops on devices with several streams and f_event for steps
 * others wait for.  Arrays are allocated (zeroed) in every case.  0 ok,
 * -1 nomem (what was allocated is in *out). */
int dgr_exec_assign_queues(dgr_exec *x, const dgc_plan *p, uint8_t *xflags,
                           uint8_t f_mq, uint8_t f_event,
                           dgr_exec_queues *out);

struct dgr_runner {
    dgr_exec *s;
    dgc_plan *plan;
    dgr_kernel_fn *kern;     /* per step (OP steps with a kernel) */
    uint8_t *xflags;         /* per step: XS_* */
    int32_t *n_local;        /* per step: successors signalled at once (the
                                first n_local of its succ list); the rest
                                wait for an XS_NOTIFY step's completion */
    xnotify *notify;         /* per step (used for XS_NOTIFY steps) */
    void **notify_ev;        /* per step: marker event of this run */
    int8_t *qidx;            /* per step: stream (ops on devices with
                                streams) */
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
    struct dgr_fx *fx;       /* issue 11: the plan has control flow and runs
                                on the executor with frames (exec_frames.c);
                                NULL: this static executor */
};

/* Release event ev of a step on device dev (NULL does nothing). */
static inline void dgr_exec_event_release(const dgr_exec *x, int dev,
                                          void *ev)
{
    if (ev)
        x->devs[dev].be->streams->event_release(ev);
}

/* Completion callback of an XS_NOTIFY step's marker (executor.c): signal
 * its successors on other devices (or record the failure, ok = 0) and
 * release the unit of outstanding work it holds. */
void dgr_exec_notify_done(dgr_notify *base, int ok);

#endif
