/*
 * cl_alloc.c -- the caching allocator of an OpenCL logical device.
 *
 * Requests are rounded up to size classes (multiples of a quarter of their
 * power of two, at least 256 bytes).  A released buffer goes back to a free
 * list and is handed out again for the same class without clCreateBuffer;
 * this is safe because each logical device has one in-order queue, so a
 * later command using the memory runs after every earlier command on it.
 * When the device is out of room the cache is flushed and the request
 * retried.  With allow_growth 0 the whole cap is reserved at open as one
 * arena buffer and buffers are sub-buffers carved from it (first fit).
 * Accounting against mem_cap (in_use, peak) is buffer.c's; this file only
 * provides cl_mem objects.
 */
#include "cl_internal.h"
#include "dg_alloc.h"

#include <string.h>

size_t dgr_cl_alloc_class(size_t n)
{
    if (n <= 256)
        return 256;
    size_t p = 1;
    while (p < n)
        p <<= 1;
    size_t step = p / 8 > 256 ? p / 8 : 256;
    return (n + step - 1) / step * step;
}

/* ---- arena ranges (allow_growth 0) --------------------------------------- */

static int hole_take(dgr_cl_alloc *a, size_t size, size_t align, size_t *off)
{
    for (int i = 0; i < a->n_holes; i++) {
        size_t s = (a->holes[i].off + align - 1) / align * align;
        size_t end = a->holes[i].off + a->holes[i].size;
        if (s + size > end)
            continue;
        /* split: [off, s) stays, [s+size, end) stays */
        size_t pre = s - a->holes[i].off;
        size_t post = end - (s + size);
        if (pre && post) {
            if (a->n_holes == a->cap_holes) {
                int nc = a->cap_holes * 2 + 8;
                void *nh = dg_realloc(a->holes, sizeof *a->holes * (size_t)nc);
                if (!nh)
                    return -1;
                a->holes = nh;
                a->cap_holes = nc;
            }
            memmove(&a->holes[i + 2], &a->holes[i + 1],
                    sizeof *a->holes * (size_t)(a->n_holes - i - 1));
            a->holes[i].size = pre;
            a->holes[i + 1].off = s + size;
            a->holes[i + 1].size = post;
            a->n_holes++;
        } else if (pre) {
            a->holes[i].size = pre;
        } else if (post) {
            a->holes[i].off = s + size;
            a->holes[i].size = post;
        } else {
            memmove(&a->holes[i], &a->holes[i + 1],
                    sizeof *a->holes * (size_t)(a->n_holes - i - 1));
            a->n_holes--;
        }
        *off = s;
        return 0;
    }
    return -1;
}

static void hole_give(dgr_cl_alloc *a, size_t off, size_t size)
{
    int i = 0;
    while (i < a->n_holes && a->holes[i].off < off)
        i++;
    /* merge with previous / next */
    if (i > 0 && a->holes[i - 1].off + a->holes[i - 1].size == off) {
        a->holes[i - 1].size += size;
        if (i < a->n_holes &&
            a->holes[i - 1].off + a->holes[i - 1].size == a->holes[i].off) {
            a->holes[i - 1].size += a->holes[i].size;
            memmove(&a->holes[i], &a->holes[i + 1],
                    sizeof *a->holes * (size_t)(a->n_holes - i - 1));
            a->n_holes--;
        }
        return;
    }
    if (i < a->n_holes && off + size == a->holes[i].off) {
        a->holes[i].off = off;
        a->holes[i].size += size;
        return;
    }
    if (a->n_holes == a->cap_holes) {
        int nc = a->cap_holes * 2 + 8;
        void *nh = dg_realloc(a->holes, sizeof *a->holes * (size_t)nc);
        if (!nh)
            return; /* the range is lost; only capacity suffers */
        a->holes = nh;
        a->cap_holes = nc;
    }
    memmove(&a->holes[i + 1], &a->holes[i],
            sizeof *a->holes * (size_t)(a->n_holes - i));
    a->holes[i].off = off;
    a->holes[i].size = size;
    a->n_holes++;
}

static size_t mem_offset(cl_mem m)
{
    size_t off = 0;
    clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof off, &off, NULL);
    return off;
}

static void release_mem(dgr_cl_alloc *a, cl_mem m, size_t size)
{
    if (a->arena)
        hole_give(a, mem_offset(m), size);
    clReleaseMemObject(m);
}

/* Release every cached buffer (caller holds the lock). */
static void flush_cache(dgr_cl_alloc *a)
{
    dgr_cl_freeblk *f = a->free_list;
    while (f) {
        dgr_cl_freeblk *nx = f->next;
        release_mem(a, f->mem, f->size);
        dg_free(f);
        f = nx;
    }
    a->free_list = NULL;
    a->cached_bytes = 0;
}

/* ---- public -------------------------------------------------------------- */

dg_status dgr_cl_alloc_init(dgr_cl_dev *cd, size_t reserve, dg_error *err)
{
    dgr_cl_alloc *a = &cd->alloc;
    memset(a, 0, sizeof *a);
    pthread_mutex_init(&a->lock, NULL);
    if (reserve) {
        cl_int e;
        a->arena = clCreateBuffer(cd->c->ctx, CL_MEM_READ_WRITE, reserve, NULL,
                                  &e);
        if (!a->arena && e == CL_INVALID_BUFFER_SIZE)
            return DG_OK; /* above the device's largest buffer: the cap is
                             still enforced (buffer.c), memory grows */
        if (!a->arena)
            return dg_err(err, DG_E_NOMEM,
                          "cannot reserve %zu bytes on OpenCL device '%s': "
                          "clCreateBuffer failed: %s (%d)",
                          reserve, cd->c->dev_name, dgr_cl_errname(e), (int)e);
        a->arena_size = reserve;
        hole_give(a, 0, reserve);
        if (a->n_holes != 1) {
            clReleaseMemObject(a->arena);
            a->arena = NULL;
            return dg_err_nomem(err, "allocator arena");
        }
    }
    return DG_OK;
}

void dgr_cl_alloc_destroy(dgr_cl_dev *cd)
{
    dgr_cl_alloc *a = &cd->alloc;
    pthread_mutex_lock(&a->lock);
    flush_cache(a);
    while (a->spare) {
        dgr_cl_freeblk *nx = a->spare->next;
        dg_free(a->spare);
        a->spare = nx;
    }
    pthread_mutex_unlock(&a->lock);
    if (a->arena)
        clReleaseMemObject(a->arena);
    a->arena = NULL;
    dg_free(a->holes);
    a->holes = NULL;
    pthread_mutex_destroy(&a->lock);
}

static cl_mem create(dgr_cl_dev *cd, size_t cls, cl_int *e)
{
    dgr_cl_alloc *a = &cd->alloc;
    if (!a->arena)
        return clCreateBuffer(cd->c->ctx, CL_MEM_READ_WRITE, cls, NULL, e);
    size_t off;
    if (hole_take(a, cls, cd->c->base_align ? cd->c->base_align : 128, &off)) {
        *e = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return NULL;
    }
    cl_buffer_region r = {off, cls};
    cl_mem m = clCreateSubBuffer(a->arena, CL_MEM_READ_WRITE,
                                 CL_BUFFER_CREATE_TYPE_REGION, &r, e);
    if (!m)
        hole_give(a, off, cls);
    return m;
}

dg_status dgr_cl_alloc_get(dgr_cl_dev *cd, dgr_buffer *b, dg_error *err)
{
    dgr_cl_alloc *a = &cd->alloc;
    size_t cls = dgr_cl_alloc_class(b->nbytes);
    pthread_mutex_lock(&a->lock);
    dgr_cl_freeblk **pp = &a->free_list;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->size == cls) {
            dgr_cl_freeblk *f = *pp;
            *pp = f->next;
            b->mem = f->mem;
            b->pool_class = cls;
            a->cached_bytes -= cls;
            a->live_bytes += cls;
            f->next = a->spare; /* keep the node for the next put */
            a->spare = f;
            pthread_mutex_unlock(&a->lock);
            return DG_OK;
        }
    /* keep the real footprint near the cap: drop the cache first */
    size_t cap = b->dev ? b->dev->mem_cap : 0;
    if (!a->arena && cap && a->live_bytes + a->cached_bytes + cls > cap)
        flush_cache(a);
    cl_int e = CL_SUCCESS;
    cl_mem m = create(cd, cls, &e);
    if (!m && a->free_list) {
        flush_cache(a);
        m = create(cd, cls, &e);
    }
    if (!m) {
        pthread_mutex_unlock(&a->lock);
        const char *dn = b->dev ? b->dev->info.name : cd->c->dev_name;
        if (e == CL_MEM_OBJECT_ALLOCATION_FAILURE ||
            e == CL_OUT_OF_RESOURCES || e == CL_OUT_OF_HOST_MEMORY ||
            e == CL_INVALID_BUFFER_SIZE)
            return dg_err(err, DG_E_NOMEM,
                          "out of memory on %s: cannot allocate %zu bytes (%s)",
                          dn, b->nbytes, dgr_cl_errname(e));
        return dg_err(err, DG_E_RUNTIME,
                      "%s: clCreateBuffer failed: %s (%d)", dn,
                      dgr_cl_errname(e), (int)e);
    }
    a->n_creates++;
    a->live_bytes += cls;
    pthread_mutex_unlock(&a->lock);
    b->mem = m;
    b->pool_class = cls;
    return DG_OK;
}

void dgr_cl_alloc_put(dgr_cl_dev *cd, dgr_buffer *b)
{
    if (!b->mem)
        return;
    dgr_cl_alloc *a = &cd->alloc;
    pthread_mutex_lock(&a->lock);
    dgr_cl_freeblk *f = a->spare;
    if (f)
        a->spare = f->next;
    else
        f = dg_malloc(sizeof *f);
    a->live_bytes -= b->pool_class;
    if (!f) {
        release_mem(a, (cl_mem)b->mem, b->pool_class);
    } else {
        f->mem = (cl_mem)b->mem;
        f->size = b->pool_class;
        f->next = a->free_list;
        a->free_list = f;
        a->cached_bytes += f->size;
    }
    pthread_mutex_unlock(&a->lock);
    b->mem = NULL;
}

size_t dgr_cl_alloc_creates(dgr_device *d)
{
    dgr_cl_dev *cd = (dgr_cl_dev *)d->impl;
    pthread_mutex_lock(&cd->alloc.lock);
    size_t n = cd->alloc.n_creates;
    pthread_mutex_unlock(&cd->alloc.lock);
    return n;
}
