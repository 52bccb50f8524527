/*
 * cl_streams.c -- the OpenCL backend's streams (backend.h): a stream is one
 * of a logical GPU's in-order compute queues.  Barriers for wait lists no
 * command took, marking the buffers a queue uses for the allocator, a
 * step's completion event for successors on other queues, device-to-host
 * reads ordered after given events, completion notices (a marker's
 * CL_COMPLETE callback, so the device's worker never blocks) and profiling
 * times.
 */
#include "cl_internal.h"

static dgr_cl_dev *cdev(dgr_device *d) { return (dgr_cl_dev *)d->impl; }

static int cl_count(dgr_device *d)
{
    return cdev(d) ? cdev(d)->nq : 1;
}

static dg_status cl_barrier(dgr_device *d, int q, void *const *waits, int n,
                            dg_error *err)
{
    if (n <= 0)
        return DG_OK;
    /* nothing consumed the wait list (no command, or an error): a barrier
     * keeps later steps on q ordered after those producers */
    cl_int e = clEnqueueBarrierWithWaitList(
        dgr_cl_stream_queue(cdev(d), q), (cl_uint)n, (const cl_event *)waits,
        NULL);
    if (e != CL_SUCCESS)
        return dgr_cl_fail(err, NULL, "clEnqueueBarrierWithWaitList", e);
    return DG_OK;
}

static dg_status cl_step_event(dgr_device *d, int q, void *last, void **ev,
                          dg_error *err)
{
    cl_command_queue cq = dgr_cl_stream_queue(cdev(d), q);
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

static void cl_event_release(void *ev)
{
    if (ev)
        clReleaseEvent((cl_event)ev);
}

static dg_status cl_read_after(dgr_device *d, const dgr_buffer *src,
                               void *dst, size_t n, void *const *waits,
                               int n_waits, dg_error *err)
{
    if (cdev(d)->nq <= 1)
        return dgr_cl_read(d, src, dst, n, err);
    return dgr_cl_read_after(d, src, dst, n, (const cl_event *)waits,
                             n_waits, err);
}

static void cl_idle(dgr_device *d)
{
    dgr_cl_dev *cd = cdev(d);
    if (cd && cd->nq > 1)
        dgr_cl_alloc_drain(cd);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    dgr_notify *n = arg;
    n->fn(n, status == CL_COMPLETE);
}

static int cl_notify(dgr_device *d, int q, dgr_notify *n, void **ev)
{
    dgr_cl_dev *cd = cdev(d);
    if (!cd || !cd->q)
        return -1;
    cl_command_queue cq = dgr_cl_stream_queue(cd, q);
    cl_event m = NULL;
    if (clEnqueueMarkerWithWaitList(cq, 0, NULL, &m) != CL_SUCCESS || !m)
        return -1;
    /* *ev (the caller's: runner memory) is set before the callback is
     * registered: once it is, the callback may run at any moment on a
     * driver thread, complete the run, and let the runner be freed, so
     * nothing of the caller's may be touched after (a segfault seen once
     * in e2e_diff with 2 PoCL devices x 2 virtual GPUs).  On a failed
     * registration *ev keeps m, released with the runner's other events. */
    if (*ev)
        clReleaseEvent((cl_event)*ev);
    *ev = m;
    /* The callback is registered before the flush (issue 25): an
     * implementation may run the commands inside clFlush (Oclgrind does),
     * and one that never calls a callback registered on an event already
     * complete (Oclgrind again) would then never call it.  Registered on
     * an event that has not been flushed, it fires on every driver; the
     * callback may run inside clFlush, on this thread. */
    if (clSetEventCallback(m, CL_COMPLETE, on_complete, n) != CL_SUCCESS)
        return -1;
    /* the marker must reach the device before anyone waits for it; the
     * callback is set, so a failed flush cannot be undone into the
     * caller's fallback: finish the queue instead (the callback then
     * reports the failure).  cq is the device's, which outlives runs. */
    if (clFlush(cq) != CL_SUCCESS)
        clFinish(cq);
    return 0;
}

const dgr_stream_ops dgr_cl_stream_ops = {
    .count = cl_count,
    .barrier = cl_barrier,
    .mark = dgr_cl_alloc_mark,
    .event = cl_step_event,
    .event_release = cl_event_release,
    .notify = cl_notify,
    .read_after = cl_read_after,
    .idle = cl_idle,
    .event_times = dgr_cl_event_times,
};
