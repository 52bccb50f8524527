/*
 * exec_cl.c -- the executor's one direct use of OpenCL: learning when an
 * OpenCL device has finished the commands queued so far, so that steps on
 * other devices that depend on an OpenCL step (control edges) start after
 * its completion rather than its enqueue.  A marker on the device's
 * in-order queue completes after every earlier command; its CL_COMPLETE
 * callback delivers the notice, so the device's worker never blocks.
 */
#include "executor.h"
#include "cl_internal.h"

static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *arg)
{
    (void)ev;
    dgr_cl_notify *n = arg;
    n->fn(n, status == CL_COMPLETE);
}

int dgr_exec_cl_notify(dgr_device *d, dgr_cl_notify *n, void **ev)
{
    dgr_cl_dev *cd = (dgr_cl_dev *)d->impl;
    if (!cd || !cd->q)
        return -1;
    cl_event m = NULL;
    if (clEnqueueMarkerWithWaitList(cd->q, 0, NULL, &m) != CL_SUCCESS || !m)
        return -1;
    /* the marker must reach the device before anyone waits for it */
    if (clFlush(cd->q) != CL_SUCCESS ||
        clSetEventCallback(m, CL_COMPLETE, on_complete, n) != CL_SUCCESS) {
        clReleaseEvent(m);
        return -1;
    }
    if (*ev)
        clReleaseEvent((cl_event)*ev);
    *ev = m;
    return 0;
}
