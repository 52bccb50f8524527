/*
 * cl_lazy.c -- the OpenCL ICD loader and clBLAST, loaded on first use
 * (runtime/core/lazylib.h): the OpenCL and clBLAST functions the backend
 * calls, defined here with their headers' exact prototypes, each loading
 * its library on first call.  dgrun does not link either library, so
 * commands that never discover devices (check, place --assume-gpus, ops)
 * do not load them or run their load-time initialisation (clBLAST pulls in
 * libstdc++; docs/decisions.md).  Without an ICD loader, clGetPlatformIDs
 * reports no platform: discovery then lists CPU:0 only.
 *
 * A new OpenCL or clBLAST call in the backend needs its definition here
 * (the link fails until it has one): copy the prototype from CL/cl.h or
 * clblast_c.h, body DGR_LAZY_FN(lib, name) and `return fn_(args);`.
 */
#include <CL/cl.h>
#include <clblast_c.h>

#include "lazylib.h"

/* CL_PLATFORM_NOT_FOUND_KHR (cl_khr_icd) */
#define DGR_CL_PLATFORM_NOT_FOUND (-1001)

static const char *const opencl_names[] = {"libOpenCL.so.1", "libOpenCL.so",
                                           NULL};
static const char *const clblast_names[] = {"libclblast.so.1",
                                            "libclblast.so", NULL};
/* DGRUN_OPENCL_LIBRARY: another ICD loader or OpenCL library (a GPU
 * driver's own libOpenCL outside the loader's path; the tests' clshim) */
static dgr_lazylib opencl_lib = DGR_LAZYLIB_INIT_ENV("the OpenCL ICD loader",
                                                     opencl_names,
                                                     "DGRUN_OPENCL_LIBRARY");
static dgr_lazylib clblast_lib = DGR_LAZYLIB_INIT("clBLAST", clblast_names);

cl_int
clBuildProgram(cl_program program, cl_uint num_devices,
               const cl_device_id *device_list, const char *options,
               void (*pfn_notify)(cl_program program, void *user_data),
               void *user_data)
{
    DGR_LAZY_FN(opencl_lib, clBuildProgram);
    return fn_(program, num_devices, device_list, options, pfn_notify,
        user_data);
}

cl_mem
clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size,
               void *host_ptr, cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateBuffer);
    return fn_(context, flags, size, host_ptr, errcode_ret);
}

cl_command_queue
clCreateCommandQueue(cl_context context, cl_device_id device,
                     cl_command_queue_properties properties,
                     cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateCommandQueue);
    return fn_(context, device, properties, errcode_ret);
}

cl_context
clCreateContext(const cl_context_properties *properties, cl_uint num_devices,
                const cl_device_id *devices,
                void (*pfn_notify)(const char *errinfo, const void *private_info, size_t cb, void *user_data),
                void *user_data, cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateContext);
    return fn_(properties, num_devices, devices, pfn_notify, user_data,
        errcode_ret);
}

cl_kernel
clCreateKernel(cl_program program, const char *kernel_name,
               cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateKernel);
    return fn_(program, kernel_name, errcode_ret);
}

cl_program
clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                          const cl_device_id *device_list,
                          const size_t *lengths,
                          const unsigned char ** binaries,
                          cl_int *binary_status, cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateProgramWithBinary);
    return fn_(context, num_devices, device_list, lengths, binaries,
        binary_status, errcode_ret);
}

cl_program
clCreateProgramWithSource(cl_context context, cl_uint count,
                          const char ** strings, const size_t *lengths,
                          cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateProgramWithSource);
    return fn_(context, count, strings, lengths, errcode_ret);
}

cl_mem
clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                  cl_buffer_create_type buffer_create_type,
                  const void *buffer_create_info, cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateSubBuffer);
    return fn_(buffer, flags, buffer_create_type, buffer_create_info,
        errcode_ret);
}

cl_int
clCreateSubDevices(cl_device_id in_device,
                   const cl_device_partition_property *properties,
                   cl_uint num_devices, cl_device_id *out_devices,
                   cl_uint *num_devices_ret)
{
    DGR_LAZY_FN(opencl_lib, clCreateSubDevices);
    return fn_(in_device, properties, num_devices, out_devices,
        num_devices_ret);
}

cl_int
clEnqueueBarrierWithWaitList(cl_command_queue command_queue,
                             cl_uint num_events_in_wait_list,
                             const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueBarrierWithWaitList);
    return fn_(command_queue, num_events_in_wait_list, event_wait_list, event);
}

cl_int
clEnqueueCopyBuffer(cl_command_queue command_queue, cl_mem src_buffer,
                    cl_mem dst_buffer, size_t src_offset, size_t dst_offset,
                    size_t size, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueCopyBuffer);
    return fn_(command_queue, src_buffer, dst_buffer, src_offset, dst_offset,
        size, num_events_in_wait_list, event_wait_list, event);
}

cl_int
clEnqueueFillBuffer(cl_command_queue command_queue, cl_mem buffer,
                    const void *pattern, size_t pattern_size, size_t offset,
                    size_t size, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueFillBuffer);
    return fn_(command_queue, buffer, pattern, pattern_size, offset, size,
        num_events_in_wait_list, event_wait_list, event);
}

void *
clEnqueueMapBuffer(cl_command_queue command_queue, cl_mem buffer,
                   cl_bool blocking_map, cl_map_flags map_flags, size_t offset,
                   size_t size, cl_uint num_events_in_wait_list,
                   const cl_event *event_wait_list, cl_event *event,
                   cl_int *errcode_ret)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueMapBuffer);
    return fn_(command_queue, buffer, blocking_map, map_flags, offset, size,
        num_events_in_wait_list, event_wait_list, event, errcode_ret);
}

cl_int
clEnqueueMarkerWithWaitList(cl_command_queue command_queue,
                            cl_uint num_events_in_wait_list,
                            const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueMarkerWithWaitList);
    return fn_(command_queue, num_events_in_wait_list, event_wait_list, event);
}

cl_int
clEnqueueNDRangeKernel(cl_command_queue command_queue, cl_kernel kernel,
                       cl_uint work_dim, const size_t *global_work_offset,
                       const size_t *global_work_size,
                       const size_t *local_work_size,
                       cl_uint num_events_in_wait_list,
                       const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueNDRangeKernel);
    return fn_(command_queue, kernel, work_dim, global_work_offset,
        global_work_size, local_work_size, num_events_in_wait_list,
        event_wait_list, event);
}

cl_int
clEnqueueReadBuffer(cl_command_queue command_queue, cl_mem buffer,
                    cl_bool blocking_read, size_t offset, size_t size,
                    void *ptr, cl_uint num_events_in_wait_list,
                    const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueReadBuffer);
    return fn_(command_queue, buffer, blocking_read, offset, size, ptr,
        num_events_in_wait_list, event_wait_list, event);
}

cl_int
clEnqueueUnmapMemObject(cl_command_queue command_queue, cl_mem memobj,
                        void *mapped_ptr, cl_uint num_events_in_wait_list,
                        const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueUnmapMemObject);
    return fn_(command_queue, memobj, mapped_ptr, num_events_in_wait_list,
        event_wait_list, event);
}

cl_int
clEnqueueWriteBuffer(cl_command_queue command_queue, cl_mem buffer,
                     cl_bool blocking_write, size_t offset, size_t size,
                     const void *ptr, cl_uint num_events_in_wait_list,
                     const cl_event *event_wait_list, cl_event *event)
{
    DGR_LAZY_FN(opencl_lib, clEnqueueWriteBuffer);
    return fn_(command_queue, buffer, blocking_write, offset, size, ptr,
        num_events_in_wait_list, event_wait_list, event);
}

cl_int
clFinish(cl_command_queue command_queue)
{
    DGR_LAZY_FN(opencl_lib, clFinish);
    return fn_(command_queue);
}

cl_int
clFlush(cl_command_queue command_queue)
{
    DGR_LAZY_FN(opencl_lib, clFlush);
    return fn_(command_queue);
}

cl_int
clGetDeviceIDs(cl_platform_id platform, cl_device_type device_type,
               cl_uint num_entries, cl_device_id *devices,
               cl_uint *num_devices)
{
    DGR_LAZY_FN(opencl_lib, clGetDeviceIDs);
    return fn_(platform, device_type, num_entries, devices, num_devices);
}

cl_int
clGetDeviceInfo(cl_device_id device, cl_device_info param_name,
                size_t param_value_size, void *param_value,
                size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetDeviceInfo);
    return fn_(device, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clGetEventInfo(cl_event event, cl_event_info param_name,
               size_t param_value_size, void *param_value,
               size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetEventInfo);
    return fn_(event, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clGetEventProfilingInfo(cl_event event, cl_profiling_info param_name,
                        size_t param_value_size, void *param_value,
                        size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetEventProfilingInfo);
    return fn_(event, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                         cl_kernel_work_group_info param_name,
                         size_t param_value_size, void *param_value,
                         size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetKernelWorkGroupInfo);
    return fn_(kernel, device, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clGetMemObjectInfo(cl_mem memobj, cl_mem_info param_name,
                   size_t param_value_size, void *param_value,
                   size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetMemObjectInfo);
    return fn_(memobj, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clGetPlatformIDs(cl_uint num_entries, cl_platform_id *platforms,
                 cl_uint *num_platforms)
{
    /* discovery's first call: no ICD loader is no platform (CPU:0 only) */
    if (!dgr_lazylib_open(&opencl_lib))
        return DGR_CL_PLATFORM_NOT_FOUND;
    DGR_LAZY_FN(opencl_lib, clGetPlatformIDs);
    return fn_(num_entries, platforms, num_platforms);
}

cl_int
clGetPlatformInfo(cl_platform_id platform, cl_platform_info param_name,
                  size_t param_value_size, void *param_value,
                  size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetPlatformInfo);
    return fn_(platform, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clGetProgramBuildInfo(cl_program program, cl_device_id device,
                      cl_program_build_info param_name,
                      size_t param_value_size, void *param_value,
                      size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetProgramBuildInfo);
    return fn_(program, device, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clGetProgramInfo(cl_program program, cl_program_info param_name,
                 size_t param_value_size, void *param_value,
                 size_t *param_value_size_ret)
{
    DGR_LAZY_FN(opencl_lib, clGetProgramInfo);
    return fn_(program, param_name, param_value_size, param_value,
        param_value_size_ret);
}

cl_int
clReleaseCommandQueue(cl_command_queue command_queue)
{
    DGR_LAZY_FN(opencl_lib, clReleaseCommandQueue);
    return fn_(command_queue);
}

cl_int
clReleaseContext(cl_context context)
{
    DGR_LAZY_FN(opencl_lib, clReleaseContext);
    return fn_(context);
}

cl_int
clReleaseDevice(cl_device_id device)
{
    DGR_LAZY_FN(opencl_lib, clReleaseDevice);
    return fn_(device);
}

cl_int
clReleaseEvent(cl_event event)
{
    DGR_LAZY_FN(opencl_lib, clReleaseEvent);
    return fn_(event);
}

cl_int
clReleaseKernel(cl_kernel kernel)
{
    DGR_LAZY_FN(opencl_lib, clReleaseKernel);
    return fn_(kernel);
}

cl_int
clReleaseMemObject(cl_mem memobj)
{
    DGR_LAZY_FN(opencl_lib, clReleaseMemObject);
    return fn_(memobj);
}

cl_int
clReleaseProgram(cl_program program)
{
    DGR_LAZY_FN(opencl_lib, clReleaseProgram);
    return fn_(program);
}

cl_int
clRetainEvent(cl_event event)
{
    DGR_LAZY_FN(opencl_lib, clRetainEvent);
    return fn_(event);
}

cl_int
clSetEventCallback(cl_event event, cl_int command_exec_callback_type,
                   void (*pfn_notify)(cl_event event, cl_int event_command_status, void *user_data),
                   void *user_data)
{
    DGR_LAZY_FN(opencl_lib, clSetEventCallback);
    return fn_(event, command_exec_callback_type, pfn_notify, user_data);
}

cl_int
clSetKernelArg(cl_kernel kernel, cl_uint arg_index, size_t arg_size,
               const void *arg_value)
{
    DGR_LAZY_FN(opencl_lib, clSetKernelArg);
    return fn_(kernel, arg_index, arg_size, arg_value);
}

cl_int
clWaitForEvents(cl_uint num_events, const cl_event *event_list)
{
    DGR_LAZY_FN(opencl_lib, clWaitForEvents);
    return fn_(num_events, event_list);
}

/* ---- clBLAST ---------------------------------------------------------- */

int dgr_cl_blas_loaded(void)
{
    return dgr_lazylib_loaded(&clblast_lib);
}

CLBlastStatusCode
CLBlastClearCache(void)
{
    DGR_LAZY_FN(clblast_lib, CLBlastClearCache);
    return fn_();
}

CLBlastStatusCode
CLBlastSgemm(const CLBlastLayout layout, const CLBlastTranspose a_transpose,
             const CLBlastTranspose b_transpose, const size_t m,
             const size_t n, const size_t k, const float alpha,
             const cl_mem a_buffer, const size_t a_offset, const size_t a_ld,
             const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
             const float beta, cl_mem c_buffer, const size_t c_offset,
             const size_t c_ld, cl_command_queue* queue, cl_event* event)
{
    DGR_LAZY_FN(clblast_lib, CLBlastSgemm);
    return fn_(layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer,
        a_offset, a_ld, b_buffer, b_offset, b_ld, beta, c_buffer, c_offset,
        c_ld, queue, event);
}

CLBlastStatusCode
CLBlastDgemm(const CLBlastLayout layout, const CLBlastTranspose a_transpose,
             const CLBlastTranspose b_transpose, const size_t m,
             const size_t n, const size_t k, const double alpha,
             const cl_mem a_buffer, const size_t a_offset, const size_t a_ld,
             const cl_mem b_buffer, const size_t b_offset, const size_t b_ld,
             const double beta, cl_mem c_buffer, const size_t c_offset,
             const size_t c_ld, cl_command_queue* queue, cl_event* event)
{
    DGR_LAZY_FN(clblast_lib, CLBlastDgemm);
    return fn_(layout, a_transpose, b_transpose, m, n, k, alpha, a_buffer,
        a_offset, a_ld, b_buffer, b_offset, b_ld, beta, c_buffer, c_offset,
        c_ld, queue, event);
}
