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

/* ---- messages between the tasks of a cluster (SPEC 8.3) ----------------
 * A transport (runtime/mpi/) carries the SEND/RECV steps of a localized
 * plan between ranks; the executor reaches it only through this table, so
 * no MPI symbol appears outside runtime/mpi/.  Every message is a header
 * followed by the value's bytes, in one message. */
typedef struct dgr_xhdr {
    int64_t run;            /* the sender's run counter (lockstep check) */
    int32_t tag;            /* the edge (dgc_step.tag) */
    int32_t dtype;          /* -1: a control edge, no value */
    int32_t rank;           /* the value's shape */
    int32_t from;           /* the sender's rank */
    int64_t bytes;          /* payload bytes after the header */
    int64_t dims[DG_MAX_RANK];
    uint64_t t_send;        /* sender's clock (dg_now_ns) when sent */
} dgr_xhdr;

typedef struct dgr_xreq dgr_xreq;
struct dgr_xreq {
    int peer, tag;
    dgr_xhdr hdr;           /* send: the caller's; recv: the transport's */
    const void *data;       /* send: hdr.bytes bytes */
    /* recv: called on the transport's thread when the message is there,
     * before it is read: where its `bytes` payload bytes go (NULL for 0;
     * NULL with bytes > 0 = cannot take it: the request fails).  hdr is
     * filled when done is called. */
    void *(*place)(dgr_xreq *q, size_t bytes);
    /* completion (ok = 0: failed), on the transport's thread */
    void (*done)(dgr_xreq *q, int ok);
    void *impl;             /* the transport's */
    dgr_xreq *next;         /* the transport's queue link */
};

typedef struct dgr_transport {
    int rank, size;
    /* Post a non-blocking send / receive (any thread); q lives until its
     * done is called. */
    void (*post_send)(struct dgr_transport *t, dgr_xreq *q);
    void (*post_recv)(struct dgr_transport *t, dgr_xreq *q);
    /* Blocking messages of known size between runs, on a channel of their
     * own (fetched values, Variables, trace events); tag orders streams. */
    dg_status (*send_msg)(struct dgr_transport *t, int peer, int tag,
                          const void *p, size_t n, dg_error *err);
    dg_status (*recv_msg)(struct dgr_transport *t, int peer, int tag,
                          void *p, size_t n, dg_error *err);
} dgr_transport;

/* Send / receive a host tensor as two blocking messages (header, data) on
 * the transport's own channel; recv allocates *out. */
dg_status dgr_xport_send_tensor(dgr_transport *t, int peer, int tag,
                                const dg_tensor *v, dg_error *err);
dg_status dgr_xport_recv_tensor(dgr_transport *t, int peer, int tag,
                                dg_tensor **out, dg_error *err);

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
    /* cluster (SPEC 8.3); xport NULL without one */
    dgr_transport *xport;
    int rank;                 /* this process's rank (0 without a cluster) */
    int host_dev;             /* this rank's CPU:0 (staging); 0 without */
    uint64_t net_end;         /* trace: end of the last message slice (the
                                 transport's thread records them in order,
                                 on one lane per device, never overlapping) */
    uint64_t coll_end;        /* the same for deferred collectives (the
                                 collective runtime's thread) */
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

/* Make r's runs asynchronous (SPEC 8.4, ps with "sync": false): they take
 * no run lock, so runs of other async runners go on at the same time (a ps
 * task serving several replicas); their messages carry r's own run count
 * (not the world's lockstep one) and the tag tag_base + edge; fetched
 * values stay on the rank that computed them (no gather); state ops
 * (Assign*, Apply*) run under *state_mu (if non-NULL) so concurrent
 * updates of one Variable never interleave, and a SEND copies its host
 * value under it (a snapshot between updates).  DG_E_RUNTIME if an edge
 * tag is tag_span or more. */
dg_status dgr_runner_set_async(dgr_runner *r, int32_t tag_base,
                               int32_t tag_span, pthread_mutex_t *state_mu,
                               dg_error *err);
/* Whether r's plan has no step on this rank. */
int dgr_runner_is_empty(const dgr_runner *r);

/* The inter-op pools' task function: runs plan step `item` of runner `ctx`
 * (a dgr_runner) on worker `lane` of that step's device, then the ready
 * successors. */
void dgr_exec_task(void *ctx, int32_t item, int lane);

/* Name string of output ref r ("x" or "x:k"), dg_malloc'd; NULL on nomem. */
char *dgr_ref_name(const dgc_graph *g, dgc_ref r);

#endif
