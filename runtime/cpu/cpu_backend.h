/*
 * cpu_backend.h -- the CPU backend (CPU:0: host memory, C kernels run by
 * the inter-op workers, split over the device's intra-op pool) as its own
 * files share it.  Everything else reaches it through dgr_backend_cpu
 * (core/backend.h).
 */
#ifndef DGR_CPU_BACKEND_H
#define DGR_CPU_BACKEND_H

#include "backend.h"

/* Memory (cpu_memory.c): cached host blocks, header and data in one. */
dgr_buffer *dgr_cpu_buffer_get(dgr_device *d, size_t nbytes, int stream,
                               dg_error *err);
void dgr_cpu_buffer_put(dgr_device *d, dgr_buffer *b);
dg_status dgr_cpu_read(dgr_device *d, const dgr_buffer *src, void *dst,
                       size_t n, dg_error *err);
dg_status dgr_cpu_write(dgr_device *d, dgr_buffer *dst, const void *src,
                        size_t n, dg_error *err);
/* Free the calling thread's cached blocks and the process-wide cache.  Safe
 * at any time; buffers in use are not touched (tests: a cold cache). */
void dgr_cpu_cache_trim(void);

/* The backend itself (its function table and kernel registry). */
extern const dgr_backend dgr_backend_cpu;

#endif
