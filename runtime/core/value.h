/*
 * value.h -- the runtime's values: reference-counted device buffers, the
 * tensors that live in them, and the device a buffer belongs to.
 *
 * The runtime reads the compiler's plan (compiler/plan.h) and never changes
 * the graph.  A device is an opened instance of a backend (backend.h): the
 * backend allocates its buffers and moves bytes; this layer counts
 * references and the bytes each device has in use.
 */
#ifndef DGR_VALUE_H
#define DGR_VALUE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dgrun.h"
#include "dg_error.h"

struct dgr_backend;
struct dgr_pool;

typedef struct dgr_device dgr_device;

typedef struct dgr_buffer {
    dgr_device *dev;
    size_t nbytes;
    void *host;        /* host-addressable data (host-memory backends), else
                          NULL */
    void *mem;         /* the backend's handle (a device memory object) */
    size_t pool_class; /* the backend allocator's bookkeeping */
    atomic_int refs;
} dgr_buffer;

/* A concrete tensor on a device. */
typedef struct dgr_value {
    dg_dtype dtype;
    dg_shape shape;    /* all dims >= 0 */
    dgr_buffer *buf;   /* NULL for an empty value */
} dgr_value;

struct dgr_device {
    dg_device_info info;   /* name, type, index, ... */
    int id;                /* index in the session's device list */
    const struct dgr_backend *be; /* NULL until opened */
    void *impl;            /* the backend's state for this device */
    struct dgr_pool *intra;/* intra-op pool its kernels may split work over
                              (host backends; NULL = run inline) */
    size_t mem_cap;        /* allocator cap in bytes (0 = unlimited) */
    atomic_size_t in_use;
    atomic_size_t peak;
};

/* A buffer of nbytes on d, refs = 1, for use by stream `stream` of d (the
 * backend's allocator may reuse at once only memory that stream last used;
 * -1 = a host transfer: memory no stream still uses).  Counts the bytes
 * against d's cap and peak; DG_E_NOMEM names the bytes asked and in use. */
dgr_buffer *dgr_buffer_new(dgr_device *d, size_t nbytes, int stream,
                           dg_error *err);
void dgr_buffer_retain(dgr_buffer *b);
/* Drop a reference; the last one hands the memory back to the backend. */
void dgr_buffer_release(dgr_buffer *b);

#endif
