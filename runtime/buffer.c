/*
 * buffer.c -- reference-counted device buffers and the host device (CPU:0).
 *
 * dgr_buffer_new asks the device's allocator for memory and accounts for it
 * against the device's cap (mem_cap) and peak; the last dgr_buffer_release
 * hands it back.  CPU:0 memory is 64-byte aligned host memory.
 */
#include "rt.h"
#include "dg_alloc.h"

#include <stdlib.h>
#include <string.h>

static dg_status cpu_alloc(dgr_device *d, dgr_buffer *b, dg_error *err)
{
    (void)d;
    size_t n = (b->nbytes + 63) & ~(size_t)63;
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64) != 0 || !p)
        return dg_err(err, DG_E_NOMEM, "out of memory: %zu bytes on %s",
                      b->nbytes, d->info.name);
    b->host = p;
    return DG_OK;
}

static void cpu_release(dgr_device *d, dgr_buffer *b)
{
    (void)d;
    free(b->host);
    b->host = NULL;
}

static dg_status cpu_read(dgr_device *d, const dgr_buffer *src, void *dst,
                          size_t n, dg_error *err)
{
    (void)d;
    (void)err;
    if (n)
        memcpy(dst, src->host, n);
    return DG_OK;
}

static dg_status cpu_write(dgr_device *d, dgr_buffer *dst, const void *src,
                           size_t n, dg_error *err)
{
    (void)d;
    (void)err;
    if (n)
        memcpy(dst->host, src, n);
    return DG_OK;
}

static dg_status cpu_sync(dgr_device *d, dg_error *err)
{
    (void)d;
    (void)err;
    return DG_OK;
}

const dgr_device_ops dgr_cpu_device_ops = {
    cpu_alloc, cpu_release, cpu_read, cpu_write, cpu_sync};

dgr_buffer *dgr_buffer_new(dgr_device *d, size_t nbytes, dg_error *err)
{
    size_t used = atomic_fetch_add(&d->in_use, nbytes) + nbytes;
    if (d->mem_cap && used > d->mem_cap) {
        atomic_fetch_sub(&d->in_use, nbytes);
        dg_err(err, DG_E_NOMEM,
               "out of memory on %s: asked %zu bytes with %zu in use of %zu",
               d->info.name, nbytes, used - nbytes, d->mem_cap);
        return NULL;
    }
    size_t peak = atomic_load(&d->peak);
    while (used > peak && !atomic_compare_exchange_weak(&d->peak, &peak, used))
        ;
    dgr_buffer *b = dg_calloc(1, sizeof *b);
    if (!b) {
        atomic_fetch_sub(&d->in_use, nbytes);
        dg_err_nomem(err, "buffer header");
        return NULL;
    }
    b->dev = d;
    b->nbytes = nbytes;
    atomic_init(&b->refs, 1);
    if (d->ops->alloc(d, b, err) != DG_OK) {
        atomic_fetch_sub(&d->in_use, nbytes);
        dg_free(b);
        return NULL;
    }
    return b;
}

void dgr_buffer_retain(dgr_buffer *b)
{
    if (b)
        atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}

void dgr_buffer_release(dgr_buffer *b)
{
    if (!b)
        return;
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) != 1)
        return;
    dgr_device *d = b->dev;
    d->ops->release(d, b);
    atomic_fetch_sub(&d->in_use, b->nbytes);
    dg_free(b);
}
