/*
 * backend.h -- the one interface between the runtime and a kind of device.
 *
 * A backend (runtime/cpu/, runtime/opencl/; CUDA, Vulkan or Metal would be
 * more) is a table of functions: discovery, opening and closing a device,
 * memory, copies to and from host memory, and, for an asynchronous device,
 * its streams (in-order command queues), events and completion, plus its
 * kernel registry, the one source of which ops run on it.  The executor and
 * the session call devices only through this table: no backend's types or
 * calls appear outside its folder, and the layers above never ask what kind
 * of device they hold, only what it can do (host memory or not, streams or
 * not).  The registry (registry.h) lists the backends this build has.
 */
#ifndef DGR_BACKEND_H
#define DGR_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "value.h"
#include "kernel.h"

/* A completion notice: fn(self, ok) is called once, from any thread, ok = 0
 * when the device reported an error. */
typedef struct dgr_notify {
    void (*fn)(struct dgr_notify *self, int ok);
} dgr_notify;

/* The streams of an asynchronous backend.  A stream is an in-order queue of
 * commands; an event marks a point in one, and commands on another stream
 * (or a host read) can wait for it.  Events are opaque pointers. */
typedef struct dgr_stream_ops {
    /* Compute streams device d has (>= 1). */
    int (*count)(dgr_device *d);
    /* After a step on stream q whose commands did not take the wait list
     * (waits[0..n)): a barrier so later commands on q still wait for it.
     * n == 0 does nothing. */
    dg_status (*barrier)(dgr_device *d, int q, void *const *waits, int n,
                         dg_error *err);
    /* Record that stream q reads buffer b (before the step releases it),
     * for the allocator's reuse rules. */
    void (*mark)(dgr_buffer *b, int q);
    /* The completion event of the step just enqueued on stream q into *ev
     * (a previous one is released), flushed to the device: `last` (the
     * kernel's last command's event, retained here) or, when NULL, a new
     * marker after everything enqueued so far on q. */
    dg_status (*event)(dgr_device *d, int q, void *last, void **ev,
                       dg_error *err);
    void (*event_release)(void *ev);
    /* Call n->fn once every command enqueued so far on stream q has
     * completed, without blocking the caller; *ev receives the marker event
     * (a previous one is released; the caller releases it when the device
     * is idle).  0, or -1 when nothing was set up (fn not called: the
     * caller must sync the device itself).  fn may run before notify
     * returns, on the calling thread (an implementation that runs commands
     * inside its flush). */
    int (*notify)(dgr_device *d, int q, dgr_notify *n, void **ev);
    /* Blocking copy of n bytes of src to host memory dst after the events
     * waits[0..n_waits) (the producers on other streams). */
    dg_status (*read_after)(dgr_device *d, const dgr_buffer *src, void *dst,
                            size_t n, void *const *waits, int n_waits,
                            dg_error *err);
    /* Device d is idle (synced): what was released is reusable anywhere. */
    void (*idle)(dgr_device *d);
    /* Host-clock times (dg_now_ns) of an event's start and end from the
     * device's profiling counters; 0 when unknown (device opened without
     * tracing), 1 ok. */
    int (*event_times)(dgr_device *d, void *ev, uint64_t *start_ns,
                       uint64_t *end_ns);
} dgr_stream_ops;

typedef struct dgr_backend {
    const char *name;        /* "cpu", "opencl" */
    dg_devtype type;         /* the device type its devices have */
    int host_memory;         /* buffers are host memory (b->host valid) and
                                kernels run on the calling worker */
    const char *stream_label;/* its streams' lanes in traces ("OpenCL
                                queue" -> "OpenCL queue 0"); NULL without */
    /* Its kernel registry: DGC_N_OPS rows indexed by op id. */
    const dgr_kernel_row *kernels;
    /* The kernel dtypes it runs in host memory where it has no kernel
     * (dg_kernel_set.host): host_dtypes for every op, plus host_ops[op]
     * (NULL: none) for the ops named there. */
    uint32_t host_dtypes;
    const uint32_t *host_ops;
    /* Append the devices the options select to l (info only; the
     * caller names them). */
    dg_status (*discover)(const dg_options *o, dg_device_list *l,
                          dg_error *err);
    /* Open device d (d->info filled from the device list): set d->be (to
     * this backend), d->impl and d->mem_cap.  The device records profiling times only when
     * o->trace_path is set.  DG_E_RUNTIME naming the failing call. */
    dg_status (*open)(dgr_device *d, const dg_options *o, dg_error *err);
    /* Wait for the device's work, release everything it holds. */
    void (*close)(dgr_device *d);
    /* A buffer header with memory for nbytes (refs and accounting are the
     * caller's, dgr_buffer_new); `stream` as for dgr_buffer_new.  NULL +
     * DG_E_NOMEM when the device has no room. */
    dgr_buffer *(*buffer_get)(dgr_device *d, size_t nbytes, int stream,
                              dg_error *err);
    /* Take back a buffer dgr_buffer_release has finished with. */
    void (*buffer_put)(dgr_device *d, dgr_buffer *b);
    /* Copy device buffer -> host memory; blocks until the data is there
     * (after every command that writes src). */
    dg_status (*read)(dgr_device *d, const dgr_buffer *src, void *dst,
                      size_t n, dg_error *err);
    /* Copy host memory -> device buffer (host memory reusable on return). */
    dg_status (*write)(dgr_device *d, dgr_buffer *dst, const void *src,
                       size_t n, dg_error *err);
    /* Wait for all work queued on the device. */
    dg_status (*sync)(dgr_device *d, dg_error *err);
    /* NULL for a synchronous backend (kernels finish before they return). */
    const dgr_stream_ops *streams;
    /* Optional: release what the backend keeps for the whole process
     * (contexts, compiled programs, library caches), in an order the
     * device libraries accept, before exit.  Called with no device open;
     * a later open starts afresh. */
    void (*shutdown)(void);
} dgr_backend;

#endif
