/*
 * oclgrind_mt.c -- the minimal reproducer of Oclgrind 21.10's
 * thread-unsafety (issue 25), kept next to the harness that works around it
 * (e2e_oclgrind.py, clshim.c's serialize mode).  Two host threads, one
 * context, one in-order queue each; each thread loops: enqueue a kernel,
 * blocking read of its output.  Legal OpenCL (the specification makes every
 * API call but clSetKernelArg on a shared kernel thread-safe); PoCL runs it.
 * Oclgrind runs commands on the thread that flushes or blocks, and its
 * Context holds one current kernel invocation, so the second thread aborts
 * it: `Context.cpp:221: notifyKernelBegin: Assertion m_kernelInvocation ==
 * NULL failed`.
 *
 *   echo /usr/lib/oclgrind/liboclgrind-rt-icd.so > DIR/oclgrind.icd
 *   OCL_ICD_VENDORS=DIR build/tests/oclgrind_mt     (aborts: exit 134)
 *   build/tests/oclgrind_mt                          (PoCL: "ok", exit 0)
 */
#include <CL/cl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src =
    "__kernel void k(__global float *y) { y[get_global_id(0)] += 1.0f; }";
static cl_context ctx;
static cl_device_id dev;
static cl_program prog;

static void *worker(void *arg)
{
    (void)arg;
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    cl_kernel k = clCreateKernel(prog, "k", &e);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(float),
                              NULL, &e);
    float zero[64] = {0}, out[64];
    clEnqueueWriteBuffer(q, b, CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL);
    clSetKernelArg(k, 0, sizeof b, &b);
    size_t g = 64;
    for (int i = 0; i < 200; i++) {
        clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL);
        clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL);
    }
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseCommandQueue(q);
    return out[0] == 200.0f ? NULL : (void *)1;
}

int main(void)
{
    cl_platform_id plat;
    cl_int e = clGetPlatformIDs(1, &plat, NULL);
    if (e != CL_SUCCESS ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 77;
    }
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "build failed\n");
        return 1;
    }
    pthread_t t[2];
    void *r[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], &r[i]);
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    if (r[0] || r[1]) {
        fprintf(stderr, "wrong results\n");
        return 1;
    }
    puts("ok");
    return 0;
}
