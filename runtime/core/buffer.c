/*
 * buffer.c -- reference-counted device buffers.
 *
 * dgr_buffer_new asks the device's backend for memory and accounts for it
 * against the device's cap (mem_cap) and peak; the last dgr_buffer_release
 * hands it back.  in_use/peak count the bytes asked, whatever the backend's
 * allocator keeps cached.
 */
#include "backend.h"

dgr_buffer *dgr_buffer_new(dgr_device *d, size_t nbytes, int stream,
                           dg_error *err)
{
    size_t used = atomic_fetch_add_explicit(&d->in_use, nbytes,
                                            memory_order_relaxed) + nbytes;
    if (d->mem_cap && used > d->mem_cap) {
        atomic_fetch_sub(&d->in_use, nbytes);
        dg_err(err, DG_E_NOMEM,
               "out of memory on %s: asked %zu bytes with %zu in use of %zu",
               d->info.name, nbytes, used - nbytes, d->mem_cap);
        return NULL;
    }
    size_t peak = atomic_load_explicit(&d->peak, memory_order_relaxed);
    while (used > peak &&
           !atomic_compare_exchange_weak_explicit(&d->peak, &peak, used,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
    dgr_buffer *b = d->be->buffer_get(d, nbytes, stream, err);
    if (!b) {
        atomic_fetch_sub(&d->in_use, nbytes);
        return NULL;
    }
    b->dev = d;
    b->nbytes = nbytes;
    atomic_init(&b->refs, 1);
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
    atomic_fetch_sub_explicit(&d->in_use, b->nbytes, memory_order_relaxed);
    d->be->buffer_put(d, b);
}
