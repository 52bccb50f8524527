/*
 * exec_cl.c -- the executor's direct uses of OpenCL: choosing the compute
 * queue a step enqueues on (its first command waiting for the events of
 * producers on other queues), marking the buffers a queue uses for the allocator,
 * making a step's completion event for successors on other queues,
 * device-to-host reads ordered after given events, and learning when a
 * step has finished so that steps on other devices that depend on it start
 * after its completion rather than its enqueue (a marker's CL_COMPLETE
 * callback delivers the notice, so the device's worker never blocks).
 */
#include "executor.h"
#include "cl_internal.h"

static dgr_cl_dev *cdev(dgr_device *d) { return (dgr_cl_dev *)d->impl; }

static cl_command_queue queue_of(dgr_cl_dev *cd, int q)
{
    return q > 0 && q < cd->nq ? cd->qs[q] : cd->q;
}

int dgr_exec_cl_queues(dgr_device *d)
{
    if (d->info.type == DG_DEV_CPU || !d->impl)
        return 1;
    return cdev(d)->nq;
}

void dgr_exec_cl_begin(int q, void *const *waits, int n_waits)
{
    dgr_cl_set_cur_queue(q);
    dgr_cl_set_waits((const cl_event *)waits, n_waits);
}

dg_status dgr_exec_cl_end(dgr_device *d, int q, dg_error *err)
{
    const cl_event *wl;
    cl_uint nw = dgr_cl_take_waits(&wl);
    if (!nw)
        return DG_OK;
    /* nothing consumed the wait list (no command, or an error): a barrier
     * keeps later steps on q ordered after those producers */
    cl_int e = clEnqueueBarrierWithWaitList(queue_of(cdev(d), q), nw, wl,
                                            NULL);
    if (e != CL_SUCCESS)
        return dgr_cl_fail(err, NULL, "clEnqueueBarrierWithWaitList", e);
    return DG_OK;
}

void dgr_exec_cl_mark(dgr_buffer *b, int q)
{
    dgr_cl_alloc_mark(b, q);
}

void dgr_exec_cl_set_queue(int q)
{
    dgr_cl_set_cur_queue(q);
}

void dgr_exec_cl_want_event(int on)
{
    dgr_cl_set_want_event(on);
}

dg_status dgr_exec_cl_event(dgr_device *d, int q, void *last, void **ev,
                            dg_error *err)
{
    cl_command_queue cq = queue_of(cdev(d), q);
    cl_event m = (cl_event)last;
    if (m) {
        /* the step's last command: on an in-order queue its completion
         * is the step's */
        cl_int e = clRetainEvent(m);
        if (e != CL_SUCCESS)
            return dgr_cl_fail(err, NULL, "clRetainEvent", e);
    } else {
        cl_int e = clEnqueueMarkerWithWaitList(cq, 0, NULL, &m);
        if (e != CL_SUCCESS)
            return dgr_cl_fail(err, NULL, "clEnqueueMarkerWithWaitList", e);
    }
    /* another queue will wait for it: it must reach the device */
    clFlush(cq);
    if (*ev)
        clReleaseEvent((cl_event)*ev);
    *ev = m;
    return DG_OK;
}

dg_status dgr_exec_cl_read(dgr_device *d, const dgr_buffer *src, void *dst,
                           size_t n, void *const *waits, int n_waits,
                           dg_error *err)
{
    if (cdev(d)->nq <= 1)
        return d->ops->read(d, src, dst, n, err);
    return dgr_cl_read_after(d, src, dst, n, (const cl_event *)waits,
                             n_waits, err);
}

void dgr_exec_cl_idle(dgr_device *d)
{
    dgr_cl_dev *cd = cdev(d);
    if (cd && cd->nq > 1)
        dgr_cl_alloc_drain(cd);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    dgr_cl_notify *n = arg;
    n->fn(n, status == CL_COMPLETE);
}

int dgr_exec_cl_notify(dgr_device *d, int q, dgr_cl_notify *n, void **ev)
{
    dgr_cl_dev *cd = cdev(d);
    if (!cd || !cd->q)
        return -1;
    cl_command_queue cq = queue_of(cd, q);
    cl_event m = NULL;
    if (clEnqueueMarkerWithWaitList(cq, 0, NULL, &m) != CL_SUCCESS || !m)
        return -1;
    /* the marker must reach the device before anyone waits for it */
    if (clFlush(cq) != CL_SUCCESS ||
        clSetEventCallback(m, CL_COMPLETE, on_complete, n) != CL_SUCCESS) {
        clReleaseEvent(m);
        return -1;
    }
    if (*ev)
        clReleaseEvent((cl_event)*ev);
    *ev = m;
    return 0;
}
