/*
 * executor.h -- internals shared by session.c and executor.c: the session
 * structure (devices, pools, Variables, feeds, trace) and the executor's
 * worker entry point, which the session's inter-op pools call.
 */
#ifndef DGR_EXECUTOR_H
#define DGR_EXECUTOR_H

#include <pthread.h>
#include <stdatomic.h>

#include "session.h"
#include "threadpool.h"

struct dgr_session {
    const dg_program *prog;
    const dgc_graph *g;
    dg_options opts;          /* copy; pointers borrowed from the caller */
    int n_dev;
    dgr_device *devs;         /* n_dev, index = program device index */
    uint8_t *dev_open;        /* device opened (needs closing) */
    dgr_ipool **pools;        /* inter-op pool per device */
    int *lane_base;           /* first global worker index of each device */
    int n_workers;            /* total inter-op workers */
    struct dgr_pool *intra;   /* CPU intra-op pool */
    dgr_value *vars;          /* per node: Variable storage (buf NULL if none) */
    dgr_value *feeds;         /* per node: fed Placeholder value */
    dgr_trace *trace;         /* NULL when not tracing */
    char ***out_names;        /* per node: output tensor names (tracing) */
    const char ***in_names;   /* per node: its inputs' names (tracing) */
    atomic_size_t *mem_seen;  /* per device: last traced bytes in use */
    _Atomic uint64_t *mem_seen_ns; /* per device: when it was traced */
    atomic_uint_fast64_t run_counter; /* runs started, for RNG streams */
    pthread_mutex_t print_mu;
    pthread_mutex_t run_mu;   /* one run at a time */
    uint64_t t0;              /* session start (trace origin) */
};

/* The inter-op pools' task function: runs plan step `item` of runner `ctx`
 * (a dgr_runner) on worker `lane` of that step's device, then the ready
 * successors. */
void dgr_exec_task(void *ctx, int32_t item, int lane);

/* A completion notice for dgr_exec_cl_notify: fn(self, ok) is called once,
 * ok = 0 when the device reported an error. */
typedef struct dgr_cl_notify {
    void (*fn)(struct dgr_cl_notify *self, int ok);
} dgr_cl_notify;

/* Call n->fn once every command queued so far on compute queue q of
 * OpenCL device d has completed, without blocking the caller: a marker is
 * enqueued and flushed, and fn runs from its completion callback (on an
 * OpenCL thread, or inline if the marker is already complete).  *ev
 * receives the marker event (a previous one is released), which the caller
 * releases (dgr_cl_event_release) once the device is idle.  Returns 0, or
 * -1 if nothing was set up (fn not called; the caller must wait for the
 * device itself).  (exec_cl.c, like the functions below) */
int dgr_exec_cl_notify(dgr_device *d, int q, dgr_cl_notify *n, void **ev);

/* Number of compute queues of device d (1 for CPU:0). */
int dgr_exec_cl_queues(dgr_device *d);
/* Make compute queue q the calling thread's queue for the kernels of the
 * next step, whose first command waits for the events waits[0..n_waits)
 * (producers on other queues; the array lives until dgr_exec_cl_end). */
void dgr_exec_cl_begin(int q, void *const *waits, int n_waits);
/* After the step's kernel (or none) on queue q of d: if no command took the
 * wait list, enqueue a barrier on it.  DG_E_RUNTIME on an OpenCL failure. */
dg_status dgr_exec_cl_end(dgr_device *d, int q, dg_error *err);
/* The calling thread's queue for buffer allocations: a compute queue, or
 * -1 during a host transfer (allocates only buffers no queue still uses). */
void dgr_exec_cl_set_queue(int q);
/* Record that compute queue q reads buffer b (see cl_alloc.c). */
void dgr_exec_cl_mark(dgr_buffer *b, int q);
/* Have the kernels the calling thread runs next return their cl_event
 * (on = 1) or not (0, the default). */
void dgr_exec_cl_want_event(int on);
/* The completion event of the step just enqueued on queue q of d, into
 * *ev (a previous one is released), flushed: `last` (the kernel's last
 * command's event, retained here) or, when NULL, a new marker after
 * everything enqueued so far on q. */
dg_status dgr_exec_cl_event(dgr_device *d, int q, void *last, void **ev,
                            dg_error *err);
/* Device d is idle (synced; nothing enqueued since but blocking reads):
 * every buffer released since is reusable on any queue. */
void dgr_exec_cl_idle(dgr_device *d);
/* Blocking read of n bytes of src into host memory dst after the events
 * waits[0..n_waits) (d's copy queue; d->ops->read when d has one queue). */
dg_status dgr_exec_cl_read(dgr_device *d, const dgr_buffer *src, void *dst,
                           size_t n, void *const *waits, int n_waits,
                           dg_error *err);

/* Per-step queue facts of a runner (exec_queues.c); arrays dg_calloc'd,
 * n_steps + 1 entries except waits; the caller frees them. */
typedef struct dgr_exec_queues {
    int8_t *qidx;               /* compute queue of each GPU op */
    int32_t *wait_off, *wait_n; /* into waits */
    int32_t *waits;             /* steps whose event a step waits for */
    int max_waits;
    void **qev;                 /* per step, for the run's events; NULL
                                   when no device has several queues */
} dgr_exec_queues;

/* Assign queues and wait lists for plan p on session S's devices; sets
 * f_mq in xflags[s] for ops on devices with several queues and f_event
 * for steps others wait for.  Arrays are allocated (zeroed) in every
 * case.  0 ok, -1 nomem (what was allocated is in *out). */
int dgr_exec_assign_queues(dgr_session *S, const dgc_plan *p,
                           uint8_t *xflags, uint8_t f_mq, uint8_t f_event,
                           dgr_exec_queues *out);

/* Name string of output ref r ("x" or "x:k"), dg_malloc'd; NULL on nomem. */
char *dgr_ref_name(const dgc_graph *g, dgc_ref r);

#endif
