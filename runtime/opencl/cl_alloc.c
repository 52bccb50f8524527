/*
 * cl_alloc.c -- the caching allocator of an OpenCL logical device.
 *
 * Requests are rounded up to size classes (multiples of a quarter of their
 * power of two, at least 256 bytes).  A released buffer goes back to a free
 * list and is handed out again for the same class without clCreateBuffer.
 * With one in-order queue that is always safe: a later command using the
 * memory runs after every earlier command on it.  With several compute
 * queues a buffer's pool_class records in its low bits which queues used it
 * (the executor marks inputs, an allocation marks its queue): a buffer used
 * by one queue only is tagged with that queue and reused at once only by
 * allocations for that queue; any other goes to a deferred list.  An
 * allocation that finds nothing checks the fences (marker events on every
 * compute queue) non-blockingly, and turns the deferred and other queues'
 * blocks into a new fence; blocks behind a completed fence are reusable
 * anywhere.  dgr_cl_alloc_drain (after clFinish of every queue) makes all of
 * them reusable.  When the device is out of room the cache is flushed and
 * the request retried (releasing a cl_mem with commands pending is safe in
 * OpenCL; an arena's ranges are reused only after the queues finished).  With allow_growth 0 the whole cap is reserved at open as one
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

static void release_list(dgr_cl_alloc *a, dgr_cl_freeblk *f)
{
    while (f) {
        dgr_cl_freeblk *nx = f->next;
        release_mem(a, f->mem, f->size);
        dg_free(f);
        f = nx;
    }
}

/* Append list l to the free list with tag DGR_CL_TAG_ANY. */
static void make_ready(dgr_cl_alloc *a, dgr_cl_freeblk *l)
{
    while (l) {
        dgr_cl_freeblk *nx = l->next;
        l->tag = DGR_CL_TAG_ANY;
        l->next = a->free_list;
        a->free_list = l;
        l = nx;
    }
}

static void fence_free(dgr_cl_fence *f)
{
    for (int i = 0; i < f->n_ev; i++)
        clReleaseEvent(f->ev[i]);
    dg_free(f);
}

/* Every queue is idle: all deferred blocks become ready (lock held). */
static void drain_locked(dgr_cl_alloc *a)
{
    make_ready(a, a->deferred);
    a->deferred = NULL;
    while (a->fences) {
        dgr_cl_fence *f = a->fences;
        a->fences = f->next;
        make_ready(a, f->blocks);
        fence_free(f);
    }
    for (dgr_cl_freeblk *f = a->free_list; f; f = f->next)
        f->tag = DGR_CL_TAG_ANY;
}

/* Release every cached buffer (caller holds the lock).  Arena ranges are
 * handed out again at once, so with several queues wait for them first. */
static void flush_cache(dgr_cl_dev *cd)
{
    dgr_cl_alloc *a = &cd->alloc;
    if (a->arena && cd->nq > 1 &&
        (a->deferred || a->fences || a->free_list)) {
        for (int i = 0; i < cd->nq; i++)
            clFinish(cd->qs[i]);
        drain_locked(a);
    }
    release_list(a, a->free_list);
    release_list(a, a->deferred);
    while (a->fences) {
        dgr_cl_fence *f = a->fences;
        a->fences = f->next;
        release_list(a, f->blocks);
        fence_free(f);
    }
    a->free_list = NULL;
    a->deferred = NULL;
    a->cached_bytes = 0;
}

/* Move the blocks of completed fences to the free list (lock held; no
 * waiting). */
static void reclaim(dgr_cl_alloc *a)
{
    dgr_cl_fence **pp = &a->fences;
    while (*pp) {
        dgr_cl_fence *f = *pp;
        int done = 1;
        for (int i = 0; i < f->n_ev && done; i++) {
            cl_int st = CL_QUEUED;
            if (clGetEventInfo(f->ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS,
                               sizeof st, &st, NULL) != CL_SUCCESS)
                st = CL_COMPLETE; /* errors: the run fails anyway */
            done = st == CL_COMPLETE || st < 0;
        }
        if (!done) {
            pp = &f->next;
            continue;
        }
        *pp = f->next;
        make_ready(a, f->blocks);
        fence_free(f);
    }
}

/* Put the deferred blocks and the blocks tagged for queues other than q
 * behind a new fence: a marker on every compute queue (lock held).  Only
 * when one of them has class cls (else nothing would be gained). */
static void fence_new(dgr_cl_dev *cd, int q, size_t cls)
{
    dgr_cl_alloc *a = &cd->alloc;
    int useful = 0;
    for (dgr_cl_freeblk *f = a->deferred; f && !useful; f = f->next)
        useful = f->size == cls;
    for (dgr_cl_freeblk *f = a->free_list; f && !useful; f = f->next)
        useful = f->size == cls && f->tag != DGR_CL_TAG_ANY && f->tag != q;
    if (!useful)
        return;
    dgr_cl_fence *fe = dg_calloc(1, sizeof *fe);
    if (!fe)
        return;
    for (int i = 0; i < cd->nq; i++) {
        if (clEnqueueMarkerWithWaitList(cd->qs[i], 0, NULL,
                                        &fe->ev[fe->n_ev]) != CL_SUCCESS) {
            fence_free(fe);
            return;
        }
        fe->n_ev++;
        clFlush(cd->qs[i]);
    }
    fe->blocks = a->deferred;
    a->deferred = NULL;
    dgr_cl_freeblk **pp = &a->free_list;
    while (*pp) {
        dgr_cl_freeblk *f = *pp;
        if (f->tag != DGR_CL_TAG_ANY && f->tag != q) {
            *pp = f->next;
            f->next = fe->blocks;
            fe->blocks = f;
        } else {
            pp = &f->next;
        }
    }
    fe->next = a->fences;
    a->fences = fe;
}

/* A cached block of class cls usable on queue q (q < 0: only ready ones);
 * unlinked, NULL if none (lock held). */
static dgr_cl_freeblk *take(dgr_cl_alloc *a, size_t cls, int q)
{
    dgr_cl_freeblk **pp = &a->free_list;
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->size == cls &&
            ((*pp)->tag == DGR_CL_TAG_ANY || ((*pp)->tag == q && q >= 0))) {
            dgr_cl_freeblk *f = *pp;
            *pp = f->next;
            return f;
        }
    return NULL;
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
    flush_cache(cd);
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

/* The queue bit of compute queue q in pool_class (0 for a transfer). */
static size_t qbit(int q)
{
    return q >= 0 && q < DGR_CL_MAXQ ? (size_t)1 << q : 0;
}

dg_status dgr_cl_alloc_get(dgr_cl_dev *cd, dgr_buffer *b, int q, dg_error *err)
{
    dgr_cl_alloc *a = &cd->alloc;
    size_t cls = dgr_cl_alloc_class(b->nbytes);
    if (cd->nq <= 1)
        q = 0;
    if (q >= cd->nq)
        q = 0;
    size_t mark = cd->nq > 1 ? qbit(q) : 0;
    pthread_mutex_lock(&a->lock);
    dgr_cl_freeblk *f = take(a, cls, q);
    if (!f && cd->nq > 1 && (a->fences || a->deferred || a->free_list)) {
        reclaim(a);
        f = take(a, cls, q);
        if (!f)
            fence_new(cd, q, cls); /* reusable on a later request */
    }
    if (f) {
        b->mem = f->mem;
        b->pool_class = cls | mark;
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
        flush_cache(cd);
    cl_int e = CL_SUCCESS;
    cl_mem m = create(cd, cls, &e);
    if (!m && (a->free_list || a->deferred || a->fences)) {
        flush_cache(cd);
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
    b->pool_class = cls | mark;
    return DG_OK;
}

void dgr_cl_alloc_put(dgr_cl_dev *cd, dgr_buffer *b)
{
    if (!b->mem)
        return;
    dgr_cl_alloc *a = &cd->alloc;
    size_t pc = __atomic_load_n(&b->pool_class, __ATOMIC_ACQUIRE);
    size_t cls = pc & ~DGR_CL_QMASK, mask = pc & DGR_CL_QMASK;
    pthread_mutex_lock(&a->lock);
    dgr_cl_freeblk *f = a->spare;
    if (f)
        a->spare = f->next;
    else
        f = dg_malloc(sizeof *f);
    a->live_bytes -= cls;
    if (!f) {
        /* no list node: with several queues wait before an arena range
         * can be reused */
        if (a->arena && cd->nq > 1)
            for (int i = 0; i < cd->nq; i++)
                clFinish(cd->qs[i]);
        release_mem(a, (cl_mem)b->mem, cls);
    } else {
        f->mem = (cl_mem)b->mem;
        f->size = cls;
        a->cached_bytes += f->size;
        if (cd->nq <= 1 || mask == 0) {
            f->tag = DGR_CL_TAG_ANY;
        } else if ((mask & (mask - 1)) == 0) {
            f->tag = __builtin_ctzl((unsigned long)mask);
        } else {
            f->next = a->deferred; /* several queues used it */
            a->deferred = f;
            f = NULL;
        }
        if (f) {
            f->next = a->free_list;
            a->free_list = f;
        }
    }
    pthread_mutex_unlock(&a->lock);
    b->mem = NULL;
}

void dgr_cl_alloc_mark(dgr_buffer *b, int q)
{
    if (b && b->mem)
        __atomic_fetch_or(&b->pool_class, qbit(q), __ATOMIC_RELEASE);
}

void dgr_cl_alloc_drain(dgr_cl_dev *cd)
{
    pthread_mutex_lock(&cd->alloc.lock);
    drain_locked(&cd->alloc);
    pthread_mutex_unlock(&cd->alloc.lock);
}

size_t dgr_cl_alloc_creates(dgr_device *d)
{
    dgr_cl_dev *cd = (dgr_cl_dev *)d->impl;
    pthread_mutex_lock(&cd->alloc.lock);
    size_t n = cd->alloc.n_creates;
    pthread_mutex_unlock(&cd->alloc.lock);
    return n;
}
