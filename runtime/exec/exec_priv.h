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

/* ---- one op, in both schedulers (exec_step.c) --------------------------- */

/* The kernel that runs node n (of graph g) on device dev, or NULL with
 * *err set (DG_E_RUNTIME naming node, op, dtype and device) when dev's
 * backend has none for its op and kernel dtype: an op placed on a GPU
 * because TensorFlow has a GPU kernel for it, which dgrun's OpenCL backend
 * lacks, fails here and is never moved silently (SPEC 4.7). */
dgr_kernel_fn dgr_exec_kernel(const dgc_graph *g, const dgc_node *n,
                              const dgr_device *dev, dg_error *err);

/* End of a run: wait for every device with streams.  Returns rc, or the
 * first sync failure when rc is DG_OK (then also copied into *err). */
dg_status dgr_exec_sync_devices(dgr_exec *S, dg_status rc, dg_error *err);

/* The values of a DGC_OP_HOST_IN op's small integer inputs in[0..n_in) for
 * its run-time inference, into tin[i].value: host memory as it is, a device
 * buffer read back into hostin (DGR_HOST_IN_MAX elements per input; a
 * blocking read of the few elements TF keeps in host memory).  Inputs
 * that are not small integer tensors are left alone. */
dg_status dgr_exec_host_inputs(dgr_device *dev, const dgr_value *in,
                               int n_in, int64_t *hostin, dgc_ttype *tin,
                               dg_error *err);

/* Run-time shapes: node n's output types into to[] from its inputs'
 * concrete types (tin: n_in scratch types, hostin as for
 * dgr_exec_host_inputs), by its op's shape function.  DG_E_RUNTIME naming
 * the node when the inputs do not fit. */
dg_status dgr_exec_run_types(dgr_device *dev, const dgc_node *n,
                             const dgr_value *in, int n_in, int64_t *hostin,
                             dgc_ttype *tin, dgc_ttype *to, dg_error *err);

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
    XS_EVENT = 32,    /* makes a completion event (qev) for successors on
                         other queues of its device or transfers out */
    XS_DEFER = 64     /* a collective (AllReduce, Broadcast over replicas)
                         on a host-memory device: its kernel may finish
                         after returning (dgr_kctx.defer, xdefer) */
};

/* The deferred completion of an XS_DEFER step: the collective runtime
 * calls base.fn (dgr_exec_defer_done) when the output is there; it holds
 * the step's unit of outstanding work. */
typedef struct xdefer {
    dgr_kdone base;
    struct dgr_runner *r;
    int32_t s;
    int lane;
    uint64_t t0;
} xdefer;

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

/* A SEND or RECV step's message (exec_net.c). */
typedef struct xmsg {
    dgr_xreq q;              /* first member: the transport hands back &q */
    dgr_runner *r;
    int32_t s;
    dgr_buffer *buf;         /* send: the value read; recv: the payload's
                                buffer (device or host staging) */
    uint64_t t0, t1;         /* trace: the message's slice */
    dgr_value v;             /* recv: the value being received */
} xmsg;

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
    /* cluster (SPEC 8.3): per step messages, NULL without a transport */
    xmsg *xm;
    /* per step deferred completions, NULL without XS_DEFER steps */
    xdefer *defer;
    /* asynchronous runs (dgr_runner_set_async, SPEC 8.4 ps async) */
    int async;
    int64_t runs;             /* this runner's runs (its messages' run) */
    int32_t tag_base;         /* added to every edge tag */
    pthread_mutex_t *state_mu; /* held around state ops, NULL: none */
};

/* The run number a message of r carries: the world's run counter (every
 * rank runs the same runs in lockstep), or r's own for async runs. */
static inline int64_t dgr_exec_msg_run(const dgr_runner *r)
{
    return r->async ? r->runs
                    : (int64_t)atomic_load(&r->s->run_counter);
}

/* Release event ev of a step on device dev (NULL does nothing). */
static inline void dgr_exec_event_release(const dgr_exec *x, int dev,
                                          void *ev)
{
    if (ev)
        x->devs[dev].be->streams->event_release(ev);
}

/* Record the first error of a run (the CAS winner's); in a cluster run
 * also wake the run at once: its posted receives may never complete once a
 * rank failed, and the process is about to end the job. */
static inline void dgr_exec_fail(dgr_runner *r, const dg_error *e)
{
    int expect = 0;
    if (atomic_compare_exchange_strong_explicit(&r->failed, &expect, 1,
                                                memory_order_acq_rel,
                                                memory_order_relaxed)) {
        r->err = *e;
        if (r->xm) {
            pthread_mutex_lock(&r->mu);
            r->done = 1;
            pthread_cond_signal(&r->cv);
            pthread_mutex_unlock(&r->mu);
        }
    }
}

/* One unit of `outstanding` is finished: wake the run at zero. */
static inline void dgr_exec_finish_one(dgr_runner *r)
{
    if (atomic_fetch_sub_explicit(&r->outstanding, 1,
                                  memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&r->mu);
        r->done = 1;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
}

/* Decrement the pending counts of succ[0..n); queue the ready ones (each
 * adds one unit to outstanding before it is queued). */
static inline void dgr_exec_signal_succ(dgr_runner *r, const int32_t *succ,
                                        int32_t n)
{
    const dgc_plan *p = r->plan;
    for (int32_t i = 0; i < n; i++) {
        int32_t t = succ[i];
        if (atomic_fetch_sub_explicit(&r->pending[t], 1,
                                      memory_order_acq_rel) != 1)
            continue;
        atomic_fetch_add_explicit(&r->outstanding, 1, memory_order_relaxed);
        dgr_ipool_push(r->s->pools[p->steps[t].device], r, t);
    }
}

/* Drop one use of each input slot of st; free a value after its last. */
static inline void dgr_exec_release_inputs(dgr_runner *r, const dgc_step *st)
{
    const int32_t *ins = &r->plan->in_slots[st->in_off];
    for (int i = 0; i < st->n_in; i++) {
        int32_t sl = ins[i];
        if (atomic_fetch_sub_explicit(&r->uses[sl], 1,
                                      memory_order_acq_rel) == 1) {
            dgr_buffer_release(r->values[sl].buf);
            r->values[sl].buf = NULL;
        }
    }
}

/* exec_net.c: a SEND step (post it) or a received RECV step (finish it)
 * run by a pool worker; it holds one unit of outstanding, released when
 * its message completes. */
void dgr_exec_net_task(dgr_runner *r, int32_t s, int lane);
/* At the start of a run: post every RECV root (one unit each). */
void dgr_exec_net_start(dgr_runner *r, int32_t s);
/* After a run: the fetched values owned by other ranks to rank 0 (and
 * NULL on every rank but 0 for values it does not hold). */
dg_status dgr_exec_net_gather(dgr_runner *r, dg_tensor **fetched,
                              dg_error *err);
/* Trace flows into step st (on `lane`) from its producers on other
 * lanes. */
void dgr_exec_trace_flows(dgr_runner *r, const dgc_step *st, int lane);
/* The name of the tensor slot `slot` holds (trace). */
const char *dgr_exec_slot_name(const dgr_runner *r, int32_t slot);

/* Completion of an XS_DEFER step (xdefer.base.fn): trace its slice,
 * release its inputs, signal its successors (or record the failure), and
 * release its unit of outstanding work. */
void dgr_exec_defer_done(dgr_kdone *d, dg_status st, const dg_error *err);

/* Completion callback of an XS_NOTIFY step's marker (executor.c): signal
 * its successors on other devices (or record the failure, ok = 0) and
 * release the unit of outstanding work it holds. */
void dgr_exec_notify_done(dgr_notify *base, int ok);

/* The kernel context of step st (node n on dev): inputs, outputs, their
 * types, the session's environment; no stream, waits, event or deferred
 * completion (the caller sets those it offers). */
static inline void dgr_exec_kctx(dgr_kctx *k, dgr_exec *S, dgr_device *dev,
                                 const dgc_graph *g, const dgc_node *n,
                                 const dgc_step *st, const dgr_value *in,
                                 dgr_value *out, const dgc_ttype *tout,
                                 int64_t step, dg_error *err)
{
    /* every field, one store each (no zeroing first: this is the hot
     * path); a field added to dgr_kctx gets its line here */
    k->env = S->env;
    k->dev = dev;
    k->g = g;
    k->node = n;
    k->node_id = st->node;
    k->in = in;
    k->n_in = st->n_in;
    k->out = out;
    k->n_out = st->n_out;
    k->out_types = tout;
    k->step = step;
    k->stream = 0;
    k->waits = NULL;
    k->n_waits = 0;
    k->want_event = 0;
    k->event = NULL;
    k->err = err;
    k->defer = NULL;
    k->deferred = 0;
}

#endif
