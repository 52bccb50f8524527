/*
 * trace.h -- recording a run as a Chrome trace (SPEC section 7).
 *
 * The executor calls the dgr_trace_* recorders from worker threads while a
 * plan runs; they append fixed-size records to per-thread chunks (no lock on
 * the hot path, no formatting).  dgr_trace_write streams the records as
 * Trace Event Format JSON to a temporary file and renames it into place.
 * Times are nanoseconds on the dg_now_ns() clock; OpenCL times are mapped to
 * that clock by the caller (device profiling counters plus an offset taken
 * at session start).
 *
 * Lanes: each device has lanes; lane ids are small integers chosen by the
 * executor (CPU: inter-op worker k -> lane k; OpenCL: queue q -> lane q;
 * DGR_LANE_COPY for transfers; DGR_LANE_HOST for host-timed ops of an
 * OpenCL device, which ran no kernel).  dgr_trace_lane_name names them.
 * In the file a lane is (pid = device + 1, tid = DGR_TID(device, lane)):
 * tids are unique across the trace and never equal a pid, so Perfetto keeps
 * every lane its own track (it merges a tid equal to its pid into the
 * process's main thread).
 *
 * Slices (ops and transfers) carry a key, unique in the trace, taken from
 * dgr_trace_keys; a flow names its producer and consumer slices by key, so
 * the writer puts its ends inside exactly those slices, whatever the clocks
 * (OpenCL slices carry device times, flows are recorded on the host).
 */
#ifndef DGR_TRACE_H
#define DGR_TRACE_H

#include <stdint.h>

#include "dgrun.h"

#define DGR_LANE_COPY 1000
#define DGR_LANE_HOST 1001
#define DGR_LANE_NET 1002  /* a cluster's messages (MemcpyRemote) */
#define DGR_LANE_SEND 1003 /* recorder only: a remote memcpy's sending end */
#define DGR_LANE_COLL 1004 /* a replicated graph's collectives in flight */
#define DGR_TID(device, lane) (((device) + 1) * 10000 + (lane))

typedef struct dgr_trace dgr_trace;

/* Create a recorder for devices devs (pids follow the list: CPU first).
 * graph_path goes into otherData. NULL on nomem. */
dgr_trace *dgr_trace_new(const dg_device_list *devs, const char *graph_path);
void dgr_trace_free(dgr_trace *t);

/* Name a lane of a device ("inter-op 0", "OpenCL queue 0", "copy"). */
void dgr_trace_lane_name(dgr_trace *t, int device, int lane, const char *name);

/* Reserve n consecutive slice keys; returns the first (keys are never 0).
 * Thread-safe. */
uint32_t dgr_trace_keys(dgr_trace *t, uint32_t n);

/* An executed op.  node/op strings must outlive the trace (graph-owned).
 * inputs: names of the input tensors ("x", "x:1"), n_inputs of them, also
 * graph-owned (or NULL).  key: the slice's key for flows, 0 for none. */
void dgr_trace_op(dgr_trace *t, int device, int lane, const char *node,
                  const char *op, int64_t step, uint64_t start_ns,
                  uint64_t end_ns, const char *const *inputs, int n_inputs,
                  uint32_t key);

/* The same for an op that ran in iteration `iter` (>= 0) of a loop
 * (issue 11): args carry "iter" beside "step"; iterations at or above
 * 2^24 - 2 show as that. */
void dgr_trace_op_iter(dgr_trace *t, int device, int lane, const char *node,
                       const char *op, int64_t step, int64_t iter,
                       uint64_t start_ns, uint64_t end_ns,
                       const char *const *inputs, int n_inputs, uint32_t key);

/* A transfer of `bytes` of `tensor` from src_device to dst_device (on the
 * destination's copy lane); key as for dgr_trace_op. */
void dgr_trace_memcpy(dgr_trace *t, int src_device, int dst_device,
                      const char *tensor, int64_t bytes, int64_t step,
                      uint64_t start_ns, uint64_t end_ns, uint32_t key);

/* One end of a transfer between the tasks of a cluster ("MemcpyRemote",
 * SPEC 8.3): on the DGR_LANE_NET lane of src_device when on_src (the
 * sending rank's slice) else of dst_device (the receiving rank's). */
void dgr_trace_memcpy_remote(dgr_trace *t, int src_device, int dst_device,
                             int on_src, const char *tensor, int64_t bytes,
                             int64_t step, uint64_t start_ns,
                             uint64_t end_ns, uint32_t key);

/* A data-flow arrow of `tensor` from the producer slice (op or transfer)
 * with key src_key to the consumer slice with key dst_key; the recorder
 * assigns the id.  The writer leaves it out when either slice is missing
 * or both are on one lane. */
void dgr_trace_flow(dgr_trace *t, uint32_t src_key, uint32_t dst_key,
                    const char *tensor);

/* Allocator level of a device. */
void dgr_trace_memory(dgr_trace *t, int device, uint64_t ns,
                      uint64_t bytes_in_use);

/* Set the time origin (ts 0), normally the session start. */
void dgr_trace_set_origin(dgr_trace *t, uint64_t ns);

/* Write the trace to path atomically (temporary file + rename).  DG_E_IO
 * naming the path on failure, leaving no partial file. */
dg_status dgr_trace_write(dgr_trace *t, const char *path, dg_error *err);

/* Summary text for `dgrun profile` (SPEC 7): per device op count, busy time
 * and utilisation; transfers' count, bytes, time; top ten ops by time.
 * malloc'd, NULL on nomem. */
char *dgr_trace_summary(const dgr_trace *t);

#endif
