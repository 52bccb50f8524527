/*
 * cl_copy.c -- memory of an opened OpenCL logical GPU: allocation
 * through the caching allocator, host<->device copies on the copy queue
 * (mapped copies on host-unified devices such as PoCL; a read waits for the
 * producers' events, a write is complete on return; map to unmap under the
 * context's map_lock), and sync, which
 * finishes every queue and makes deferred buffers reusable.
 */
#include "cl_internal.h"
#include "dg_alloc.h"

#include <string.h>
#include <stdint.h>
#include <sys/mman.h>

static dgr_cl_dev *cdev(const dgr_device *d) { return (dgr_cl_dev *)d->impl; }

dgr_buffer *dgr_cl_buffer_get(dgr_device *d, size_t nbytes, int stream,
                              dg_error *err)
{
    dgr_buffer *b = dg_calloc(1, sizeof *b);
    if (!b) {
        dg_err_nomem(err, "buffer header");
        return NULL;
    }
    b->nbytes = nbytes;
    if (dgr_cl_alloc_get(cdev(d), b, stream, err) != DG_OK) {
        dg_free(b);
        return NULL;
    }
    return b;
}

void dgr_cl_buffer_put(dgr_device *d, dgr_buffer *b)
{
    dgr_cl_alloc_put(cdev(d), b);
    dg_free(b);
}

/* Transfers at least this big go through map/unmap on devices whose memory
 * is the host's (CL_DEVICE_HOST_UNIFIED_MEMORY): one memcpy on the calling
 * thread straight between the caller's memory and the buffer. */
#define MAP_MIN (64u << 10)
/* Reads at least this big ask for transparent huge pages on the
 * destination first: a fresh multi-MiB destination (a fetched tensor)
 * otherwise costs one page fault per 4 KiB, more than the copy itself. */
#define HUGE_MIN (4u << 20)

static void want_huge_pages(void *dst, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)dst + huge - 1) & ~(huge - 1);
    uintptr_t b = ((uintptr_t)dst + n) & ~(huge - 1);
    if (b > a)
        (void)madvise((void *)a, (size_t)(b - a), MADV_HUGEPAGE);
#else
    (void)dst;
    (void)n;
#endif
}

/* Wait for an unmap enqueued on a copy queue (ev) when the device has
 * several queues: later commands on the compute queues must see it done. */
static dg_status unmap_done(const dgr_device *d, cl_int e, cl_event ev,
                            dg_error *err)
{
    if (e == CL_SUCCESS && ev)
        e = clWaitForEvents(1, &ev);
    if (ev)
        clReleaseEvent(ev);
    if (e != CL_SUCCESS)
        return dg_err(err, DG_E_RUNTIME,
                      "%s: clEnqueueUnmapMemObject failed: %s (%d)",
                      d->info.name, dgr_cl_errname(e), (int)e);
    return DG_OK;
}

dg_status dgr_cl_read_after(dgr_device *d, const dgr_buffer *src, void *dst,
                            size_t n, const cl_event *waits, int n_waits,
                            dg_error *err)
{
    if (!n)
        return DG_OK;
    dgr_cl_dev *cd = cdev(d);
    cl_command_queue q = cd->copyq;
    const cl_event *wl = n_waits > 0 ? waits : NULL;
    cl_uint nw = n_waits > 0 ? (cl_uint)n_waits : 0;
    if (n >= HUGE_MIN)
        want_huge_pages(dst, n);
    cl_int e;
    if (cd->unified && n >= MAP_MIN) {
        /* one mapping per context at a time (see map_lock) */
        pthread_mutex_lock(&cd->c->map_lock);
        void *p = clEnqueueMapBuffer(q, (cl_mem)src->mem, CL_TRUE,
                                     CL_MAP_READ, 0, n, nw, wl, NULL, &e);
        if (p) {
            memcpy(dst, p, n);
            cl_event ev = NULL;
            e = clEnqueueUnmapMemObject(q, (cl_mem)src->mem, p, 0, NULL,
                                        cd->nq > 1 ? &ev : NULL);
            pthread_mutex_unlock(&cd->c->map_lock);
            return unmap_done(d, e, ev, err);
        }
        pthread_mutex_unlock(&cd->c->map_lock);
        /* fall back to a plain read */
    }
    e = clEnqueueReadBuffer(q, (cl_mem)src->mem, CL_TRUE, 0, n, dst, nw, wl,
                            NULL);
    if (e != CL_SUCCESS)
        return dg_err(err, DG_E_RUNTIME, "%s: clEnqueueReadBuffer failed: %s (%d)",
                      d->info.name, dgr_cl_errname(e), (int)e);
    return DG_OK;
}

dg_status dgr_cl_read(dgr_device *d, const dgr_buffer *src, void *dst,
                            size_t n, dg_error *err)
{
    dgr_cl_dev *cd = cdev(d);
    if (!n || cd->nq <= 1)
        return dgr_cl_read_after(d, src, dst, n, NULL, 0, err);
    /* the copy queue is not ordered after the compute queues: wait for a
     * marker on each (whatever writes src was enqueued before) */
    cl_event m[DGR_CL_MAXQ];
    int nm = 0;
    dg_status st = DG_OK;
    for (int i = 0; i < cd->nq; i++) {
        cl_int e = clEnqueueMarkerWithWaitList(cd->qs[i], 0, NULL, &m[nm]);
        if (e != CL_SUCCESS) {
            st = dgr_cl_fail(err, NULL, "clEnqueueMarkerWithWaitList", e);
            break;
        }
        nm++;
        /* a command on another queue (the copy queue's read) may wait only
         * for commands that were flushed (OpenCL 1.2, 5.13): a driver that
         * runs commands at flush time otherwise never runs the marker
         * (issue 25; clshim's flushrun hung here) */
        clFlush(cd->qs[i]);
    }
    if (st == DG_OK)
        st = dgr_cl_read_after(d, src, dst, n, m, nm, err);
    for (int i = 0; i < nm; i++)
        clReleaseEvent(m[i]);
    return st;
}

dg_status dgr_cl_write(dgr_device *d, dgr_buffer *dst, const void *src,
                             size_t n, dg_error *err)
{
    if (!n)
        return DG_OK;
    dgr_cl_dev *cd = cdev(d);
    cl_command_queue q = cd->copyq;
    cl_int e;
    if (cd->unified && n >= MAP_MIN) {
        /* whole-buffer writes may discard the old contents */
        cl_map_flags f = n >= dst->nbytes ? CL_MAP_WRITE_INVALIDATE_REGION
                                          : CL_MAP_WRITE;
        pthread_mutex_lock(&cd->c->map_lock);
        void *p = clEnqueueMapBuffer(q, (cl_mem)dst->mem, CL_TRUE, f, 0,
                                     n, 0, NULL, NULL, &e);
        if (p) {
            memcpy(p, src, n);
            /* one in-order queue: later commands see the data after the
             * unmap; with a copy queue, wait for it */
            cl_event ev = NULL;
            e = clEnqueueUnmapMemObject(q, (cl_mem)dst->mem, p, 0, NULL,
                                        cd->nq > 1 ? &ev : NULL);
            pthread_mutex_unlock(&cd->c->map_lock);
            return unmap_done(d, e, ev, err);
        }
        pthread_mutex_unlock(&cd->c->map_lock);
    }
    e = clEnqueueWriteBuffer(q, (cl_mem)dst->mem, CL_TRUE, 0, n, src, 0,
                             NULL, NULL);
    if (e != CL_SUCCESS)
        return dg_err(err, DG_E_RUNTIME,
                      "%s: clEnqueueWriteBuffer failed: %s (%d)", d->info.name,
                      dgr_cl_errname(e), (int)e);
    return DG_OK;
}

cl_int dgr_cl_finish_all(dgr_cl_dev *cd)
{
    cl_int r = CL_SUCCESS;
    for (int i = 0; i < cd->nq; i++) {
        cl_int e = clFinish(cd->qs[i]);
        if (e != CL_SUCCESS && r == CL_SUCCESS)
            r = e;
    }
    if (cd->copyq != cd->q) {
        cl_int e = clFinish(cd->copyq);
        if (e != CL_SUCCESS && r == CL_SUCCESS)
            r = e;
    }
    return r;
}

dg_status dgr_cl_sync(dgr_device *d, dg_error *err)
{
    dgr_cl_dev *cd = cdev(d);
    cl_int e = dgr_cl_finish_all(cd);
    if (cd->nq > 1)
        dgr_cl_alloc_drain(cd);
    if (e != CL_SUCCESS)
        return dg_err(err, DG_E_RUNTIME, "%s: clFinish failed: %s (%d)",
                      d->info.name, dgr_cl_errname(e), (int)e);
    return DG_OK;
}

