/*
 * cl.h -- the OpenCL backend as the rest of the runtime sees it.
 *
 * cl_device.c enumerates OpenCL devices (dg_devices_discover) and opens a
 * dgr_device for GPU:k: context, in-order compute queues (DGRUN_CL_QUEUES,
 * 1..8, default 2) and a copy queue, caching allocator, programs.  Kernels (cl_kernels.c) enqueue without host waits;
 * the device ops' read() is what waits.
 */
#ifndef DGR_CL_H
#define DGR_CL_H

#include "rt.h"

/* Open device d (d->info filled from the compile's device list; info.physical
 * names the OpenCL device in discovery order under the same options).
 * The queue records profiling times (for dgr_cl_event_times) only when
 * o->trace_path is set.
 * Sets d->ops, d->impl, d->mem_cap (gpu_memory_fraction, virtual split);
 * with allow_growth 0 reserves the cap.  DG_E_RUNTIME naming the OpenCL call
 * and error on failure. */
dg_status dgr_cl_device_open(dgr_device *d, const dg_options *o, dg_error *err);
/* Wait for all the device's queues, release everything it holds. */
void dgr_cl_device_close(dgr_device *d);

/* Host-clock time (dg_now_ns) of an event's start and end, from the
 * device's profiling counters mapped through a measured clock offset
 * (re-measured when stale, interpolated between syncs); 0 on failure or
 * when the device was opened without tracing.  Releases nothing. */
int dgr_cl_event_times(dgr_device *d, void *cl_event, uint64_t *start_ns,
                       uint64_t *end_ns);
void dgr_cl_event_release(void *cl_event);

#endif
