/*
 * cl_backend.c -- the OpenCL backend's function table: discovery, opening a
 * logical GPU, memory and copies (cl_copy.c), streams (cl_streams.c) and
 * the kernel registry (generated: cl_kernels_gen.c).  Only runtime/opencl/ knows OpenCL.
 */
#include "cl_internal.h"

const dgr_backend dgr_backend_opencl = {
    .name = "opencl",
    .type = DG_DEV_GPU,
    .host_memory = 0,
    .stream_label = "OpenCL queue",
    .kernels = dgr_cl_kernel_rows,
    .host_dtypes = (1u << DG_I32) | (1u << DG_I64) | (1u << DG_BOOL),
    .host_ops = dgr_cl_host_ops,
    .discover = dgr_cl_discover,
    .open = dgr_cl_device_open,
    .close = dgr_cl_device_close,
    .buffer_get = dgr_cl_buffer_get,
    .buffer_put = dgr_cl_buffer_put,
    .read = dgr_cl_read,
    .write = dgr_cl_write,
    .sync = dgr_cl_sync,
    .streams = &dgr_cl_stream_ops,
    .shutdown = dgr_cl_shutdown,
};
