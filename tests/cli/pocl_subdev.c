/*
 * pocl_subdev.c -- the minimal reproducer of PoCL 3.1's sub-device
 * ownership (the e2e_diff segfaults on virtual GPUs), kept next to the
 * check that guards dgrun against it (clshim.c's holdq mode,
 * e2e_clproto.py subdev).  A context made on a sub-device holds the
 * parent device and a command queue does not retain its device, so the
 * application's reference is a sub-device's only one; an event still holds
 * its queue.  Releasing the sub-device while an event of a queue on it
 * lives, then releasing the event (what a PoCL driver thread does last,
 * after signalling the command's completion), reads the freed sub-device
 * (event->queue->device->ops).  With MALLOC_PERTURB_ (meson test sets it)
 * the freed memory is garbage and the read crashes at once:
 *
 *   POCL_DEVICES=pthread MALLOC_PERTURB_=165 build/tests/pocl_subdev
 *       (releases the sub-device first, as dgr_cl_shutdown did: SIGSEGV)
 *   POCL_DEVICES=pthread MALLOC_PERTURB_=165 build/tests/pocl_subdev keep
 *       (keeps it, as dgrun now does: "ok", exit 0)
 *
 * valgrind without MALLOC_PERTURB_ shows the invalid read in
 * POclReleaseEvent of a block freed by POclReleaseDevice.  Exit 77 when the
 * device cannot split in two.
 */
#include <CL/cl.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int keep = argc > 1 && strcmp(argv[1], "keep") == 0;
    cl_platform_id plat;
    cl_device_id dev, subs[2];
    cl_uint cu = 0, got = 0;
    if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 77;
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY,
                                            (cl_device_partition_property)(cu / 2),
                                            0};
    if (cu < 2 || cu % 2 ||
        clCreateSubDevices(dev, props, 2, subs, &got) != CL_SUCCESS || got != 2)
        return 77;
    cl_int e;
    cl_context ctx = clCreateContext(NULL, 1, &subs[0], NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueue(ctx, subs[0], 0, &e);
    cl_event ev = NULL;
    if (!ctx || !q ||
        clEnqueueMarkerWithWaitList(q, 0, NULL, &ev) != CL_SUCCESS)
        return 1;
    clFinish(q);
    /* dgrun's shutdown order: queue, context, then the sub-device */
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    if (!keep)
        clReleaseDevice(subs[0]);
    clReleaseEvent(ev); /* the event's last reference: reads its device */
    puts("ok");
    return 0;
}
