/*
 * trace_impl.h -- internals of the trace recorder shared by trace.c
 * (recording), trace_write.c (JSON output) and trace_summary.c (the
 * `dgrun profile` summary).  Not for use outside runtime/trace*.c.
 *
 * Records are fixed-size and live in per-thread chunk lists; each thread
 * that records into a trace owns one dgr_tbuf (found through a thread-local
 * cache keyed by the trace's unique id) and is its only writer, so the hot
 * path takes no lock.  Readers (write, summary) run after recording ends.
 */
#ifndef DGR_TRACE_IMPL_H
#define DGR_TRACE_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

enum { DGR_TREC_OP = 1, DGR_TREC_MEMCPY, DGR_TREC_FLOW, DGR_TREC_MEM };

/* One recorded event.  OP: dev/lane, a = node, b = op, t0..t1, inputs,
 * key = slice key.  MEMCPY: dev = src, dev2 = dst, a = tensor (arena copy),
 * bytes, t0..t1, key.  FLOW: step = producer slice key, key = consumer
 * slice key, a = tensor (arena copy).  MEM: dev, t0, bytes = bytes in use. */
typedef struct dgr_trec {
    uint64_t t0, t1;
    const char *a;
    const char *b;
    union {
        const char *const *inputs; /* OP */
        int64_t bytes;             /* MEMCPY, MEM */
    };
    int64_t step;
    int32_t lane;
    uint32_t key;              /* OP, MEMCPY: the slice; FLOW: consumer */
    int16_t dev, dev2;
    int16_t n_inputs;
    uint8_t kind;
    uint8_t iter_hi;           /* OP in a loop (issue 11): iteration + 1 =
                                  iter_hi << 16 | (uint16_t)dev2; 0 none */
} dgr_trec; /* 64 bytes: one cache line */

#define DGR_TCHUNK_RECS 1024
typedef struct dgr_tchunk {
    struct dgr_tchunk *next;
    int n;
    dgr_trec recs[DGR_TCHUNK_RECS];
} dgr_tchunk;

/* Byte arena for copied strings. */
#define DGR_TARENA_BYTES 16384
typedef struct dgr_tarena {
    struct dgr_tarena *next;
    size_t used, cap;
    char data[];
} dgr_tarena;

typedef struct dgr_tbuf {
    struct dgr_tbuf *next;     /* the trace's list of buffers */
    pthread_t owner;
    dgr_tchunk *first, *cur;
    dgr_tarena *arena;
} dgr_tbuf;

typedef struct dgr_tlane_name {
    int device, lane;
    char *name;
} dgr_tlane_name;

struct dgr_trace {
    uint64_t uid;                  /* unique per trace (TLS cache key) */
    int n_devs;
    dg_device_info *devs;
    char *graph;
    _Atomic(dgr_tbuf *) bufs;      /* lock-free push */
    atomic_ullong origin;
    atomic_ulong dropped;          /* events lost to allocation failure */
    atomic_uint next_key;          /* dgr_trace_keys */
    pthread_mutex_t lock;          /* lane names, buffer registration */
    dgr_tlane_name *lanes;
    int n_lanes, cap_lanes;
};

/* Visit every record (any order within kinds: per-thread append order). */
typedef void (*dgr_trec_fn)(dgr_trec *r, void *arg);
void dgr_trace_foreach(const dgr_trace *t, dgr_trec_fn fn, void *arg);


/* Name of a lane: the dgr_trace_lane_name one, else the default
 * ("inter-op <k>", "OpenCL queue <k>", "copy") written into buf. */
const char *dgr_trace_lane_label(const dgr_trace *t, int device, int lane,
                                 char *buf, size_t n);

/* Nanoseconds from the origin, clamped at 0. */
uint64_t dgr_trace_rel(const dgr_trace *t, uint64_t ns);

/* The lane a record occupies for X events (memcpy: destination's copy
 * lane); device index in *dev. */
int dgr_trec_lane(const dgr_trec *r, int *dev);

/* "MemcpyHtoD" / "MemcpyDtoH" / "MemcpyDtoD" for a transfer record. */
const char *dgr_trace_memcpy_name(const dgr_trace *t, const dgr_trec *r);

/* Collect the complete (X) events, sorted by (device, lane, start, longer
 * first), start transfers no earlier than the end of the slice they read
 * (the wait for an OpenCL producer is not copy time), and trim partial
 * overlaps on a lane so that events there are nested or disjoint.  *out is dg_malloc'd (free with dg_free).  Returns 0,
 * -1 on nomem. */
int dgr_trace_sorted_x(const dgr_trace *t, dgr_trec ***out, size_t *n);

#endif
