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

/* d->impl of a CPU device opened by cpu_open: values may be kept for the
 * device's later runs (Const outputs, oneDNN's copies of Const filters),
 * dropped by cpu_close.  A device made otherwise (the kernel tests'
 * harness: never opened, never closed) keeps nothing. */
extern char dgr_cpu_keeps;
#define DGR_CPU_KEEPS(d) ((d)->impl == (void *)&dgr_cpu_keeps)

/* Const outputs made once per device (cpu_memory.c), where DGR_CPU_KEEPS.  get: 1 and *out
 * (retained) when the value of Const `node` (attribute data `data`) was
 * kept on d, else 0.  put: keep v (retained) for later runs.  close: drop
 * d's values (the device is closing; called by cpu_close). */
int dgr_cpu_const_get(const dgr_device *d, const void *node,
                      const void *data, dgr_value *out);
void dgr_cpu_const_put(const dgr_device *d, const void *node,
                       const void *data, const dgr_value *v);
void dgr_cpu_const_close(const dgr_device *d);

/* The backend itself (its function table and kernel registry). */
extern const dgr_backend dgr_backend_cpu;

#endif
