/*
 * clshim.c -- a test OpenCL layer between dgrun and the real ICD loader
 * (issue 25): dgrun loads it through DGRUN_OPENCL_LIBRARY, it forwards
 * every call to libOpenCL.so.1 (its DT_NEEDED, so what it does not define
 * dgrun finds there) and changes the behaviour of the implementation under
 * it (PoCL in the suite) to what other drivers do, so the host protocol
 * can be tested without their hardware.  CLSHIM (comma-separated):
 *
 *   flushrun  commands run only inside clFlush, clFinish, blocking
 *             transfers and clWaitForEvents, completed before the call
 *             returns (as Oclgrind runs them): each queue waits behind a
 *             barrier on a user event that a flush completes and replaces;
 *             and a callback registered on an event that is already
 *             complete is never called (as Oclgrind).  A cross-queue wait
 *             on a command that was never flushed hangs, as the OpenCL
 *             specification allows.
 *   delay     completion callbacks are called late (0-20 ms) from a shim
 *             thread, in another order than the completions.
 *   hang      no completion callback is ever called (a hung device): what
 *             waits for one never ends.
 *   holdq     the driver keeps every command queue a while after the
 *             application released it, as PoCL (3.1) does: a command's
 *             event holds its queue, and a driver thread still finishing a
 *             command whose completion was already signalled (clFinish and
 *             clWaitForEvents return before PoCL unmaps, runs callbacks and
 *             releases the event) reads the event's queue and the queue's
 *             device.  PoCL's queues do not retain their device and a
 *             context made on a sub-device holds the parent, so releasing a
 *             sub-device's last reference while a queue made on it lives
 *             frees memory the driver reads (the segfaults of e2e_diff on
 *             virtual GPUs at exit): the shim then aborts with "clshim:
 *             sub-device ... released while ...".  The queues are kept to
 *             the end of the process.
 *   noisy     clBuildProgram writes "clshim: 3 warnings generated." on fd 2
 *             first, as PoCL's embedded clang does on a cold cache (issue
 *             19); buildfail: it writes "clshim: error: ..." and fails with
 *             CL_BUILD_PROGRAM_FAILURE.
 *   serialize one process-wide (recursive) lock around every call that may
 *             run commands (flush, finish, waits, blocking transfers,
 *             releasing a queue): Oclgrind 21.10 runs commands on the
 *             calling thread and aborts when two threads do at once
 *             (tests/cli/oclgrind_mt.c); the Oclgrind harness
 *             (e2e_oclgrind.py) runs dgrun through this mode.
 *   smallwg   a GPU's limits: every kernel may run with at most 32
 *             work-items per group (CL_KERNEL_WORK_GROUP_SIZE, as a
 *             register-heavy kernel on a GPU), the device has 32 KiB of
 *             local memory (OpenCL 1.2's minimum for a GPU; with 4 KiB,
 *             below the minimum, clBLAST's GEMM kernels -- which assume
 *             the minimum -- failed with status -2046 where the shim also
 *             answered clBLAST's queries, in the ASan build), and a launch
 *             over those limits fails with
 *             CL_INVALID_WORK_GROUP_SIZE / CL_OUT_OF_RESOURCES.
 *
 * CLSHIM_LOG=FILE: at exit one line "clshim: <counters>" is appended: the
 * contexts, queues, programs, kernels and memory objects dgrun created and
 * did not release, callbacks registered / dropped / delayed, and contexts
 * released while something still held them (clBLAST's cached programs).
 * Objects clBLAST makes go straight to the real library (it links
 * libOpenCL itself) and are not counted.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#include <CL/cl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *real_lib(void)
{
    static void *h;
    if (!h)
        h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libOpenCL.so.1", RTLD_NOW);
    return h;
}

#define REAL(name)                                                       \
    static __typeof__(&name) real_##name;                                \
    if (!real_##name) {                                                  \
        real_##name = (__typeof__(&name))dlsym(real_lib(), #name);       \
        if (!real_##name) {                                              \
            fprintf(stderr, "clshim: no %s in libOpenCL.so.1\n", #name); \
            abort();                                                     \
        }                                                                \
    }

static int mode_flushrun, mode_delay, mode_hang, mode_smallwg, mode_serial,
    mode_noisy, mode_buildfail, mode_holdq, mode_read;
static pthread_mutex_t serial_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
#define SERIAL_BEGIN() do { read_mode(); if (mode_serial) pthread_mutex_lock(&serial_mu); } while (0)
#define SERIAL_END() do { if (mode_serial) pthread_mutex_unlock(&serial_mu); } while (0)
#define SMALL_WG 32
#define SMALL_LOCAL 32768
static atomic_long live_ctx, live_q, live_prog, live_kern, live_mem;
static atomic_long cb_set, cb_dropped, cb_delayed, ctx_held, wg_rejected,
    subdev_q;

static void read_mode(void)
{
    if (mode_read)
        return;
    const char *m = getenv("CLSHIM");
    mode_flushrun = m && strstr(m, "flushrun");
    mode_delay = m && strstr(m, "delay");
    mode_hang = m && strstr(m, "hang");
    mode_smallwg = m && strstr(m, "smallwg");
    mode_serial = m && strstr(m, "serialize");
    mode_noisy = m && strstr(m, "noisy");
    mode_buildfail = m && strstr(m, "buildfail");
    mode_holdq = m && strstr(m, "holdq");
    mode_read = 1;
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("CLSHIM_LOG");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "clshim: contexts=%ld queues=%ld programs=%ld kernels=%ld "
            "mems=%ld callbacks=%ld dropped=%ld delayed=%ld held=%ld "
            "rejected=%ld subdevq=%ld\n",
            atomic_load(&live_ctx), atomic_load(&live_q),
            atomic_load(&live_prog), atomic_load(&live_kern),
            atomic_load(&live_mem), atomic_load(&cb_set),
            atomic_load(&cb_dropped), atomic_load(&cb_delayed),
            atomic_load(&ctx_held), atomic_load(&wg_rejected),
            atomic_load(&subdev_q));
    fclose(f);
}

/* ---- flushrun: a gate per queue ----------------------------------------- */

typedef struct gate {
    cl_command_queue q;
    cl_event ue;          /* the user event the queue waits behind */
    int held;             /* blocking calls in progress: stays open */
    struct gate *next;
} gate;

static pthread_mutex_t gates_mu = PTHREAD_MUTEX_INITIALIZER;
static gate *gates;

static void gate_close(gate *g)
{
    REAL(clCreateUserEvent);
    REAL(clEnqueueBarrierWithWaitList);
    REAL(clGetCommandQueueInfo);
    cl_context ctx = NULL;
    real_clGetCommandQueueInfo(g->q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL);
    cl_int e;
    g->ue = real_clCreateUserEvent(ctx, &e);
    if (g->ue)
        real_clEnqueueBarrierWithWaitList(g->q, 1, &g->ue, NULL);
}

static gate *gate_of(cl_command_queue q)
{
    for (gate *g = gates; g; g = g->next)
        if (g->q == q)
            return g;
    return NULL;
}

/* Run everything enqueued on q so far, before returning.  With hold, the
 * queue stays open for the caller's blocking command (then gate_release);
 * it closes again when no blocking call holds it. */
static void gate_open(cl_command_queue q, int hold)
{
    REAL(clSetUserEventStatus);
    REAL(clReleaseEvent);
    REAL(clFinish);
    pthread_mutex_lock(&gates_mu);
    gate *g = gate_of(q);
    if (g && g->ue) {
        real_clSetUserEventStatus(g->ue, CL_COMPLETE);
        real_clReleaseEvent(g->ue);
        g->ue = NULL;
    }
    if (g && hold)
        g->held++;
    pthread_mutex_unlock(&gates_mu);
    real_clFinish(q);
    if (g && !hold) {
        pthread_mutex_lock(&gates_mu);
        if (!g->ue && !g->held)
            gate_close(g);
        pthread_mutex_unlock(&gates_mu);
    }
}

static void gate_release(cl_command_queue q)
{
    pthread_mutex_lock(&gates_mu);
    gate *g = gate_of(q);
    if (g && --g->held == 0 && !g->ue)
        gate_close(g);
    pthread_mutex_unlock(&gates_mu);
}

/* ---- holdq: the driver's references to queues ------------------------------ */

#define HELD_MAX 1024
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cl_command_queue q;
    cl_device_id dev;         /* the device it was made on */
} held[HELD_MAX];
static int n_held;

/* Whether dev is a sub-device. */
static int is_subdevice(cl_device_id dev)
{
    REAL(clGetDeviceInfo);
    cl_device_id parent = NULL;
    return real_clGetDeviceInfo(dev, CL_DEVICE_PARENT_DEVICE, sizeof parent,
                                &parent, NULL) == CL_SUCCESS && parent;
}

/* Keep q (made on dev) to the end of the process, as a driver thread
 * finishing its last command would keep it a while. */
static void hold_queue(cl_command_queue q, cl_device_id dev)
{
    REAL(clRetainCommandQueue);
    if (is_subdevice(dev))
        atomic_fetch_add(&subdev_q, 1);
    pthread_mutex_lock(&held_mu);
    if (n_held < HELD_MAX && real_clRetainCommandQueue(q) == CL_SUCCESS) {
        held[n_held].q = q;
        held[n_held++].dev = dev;
    }
    pthread_mutex_unlock(&held_mu);
}

/* How many held queues were made on dev. */
static int held_queues(cl_device_id dev)
{
    int n = 0;
    pthread_mutex_lock(&held_mu);
    for (int i = 0; i < n_held; i++)
        n += held[i].dev == dev;
    pthread_mutex_unlock(&held_mu);
    return n;
}

/* holdq: the last release of a sub-device a held queue was made on
 * aborts. */
cl_int clReleaseDevice(cl_device_id d)
{
    REAL(clReleaseDevice);
    REAL(clGetDeviceInfo);
    read_mode();
    cl_uint refs = 0;
    int held = mode_holdq ? held_queues(d) : 0;
    if (held && is_subdevice(d) &&
        real_clGetDeviceInfo(d, CL_DEVICE_REFERENCE_COUNT, sizeof refs, &refs,
                             NULL) == CL_SUCCESS && refs == 1) {
        fprintf(stderr, "clshim: sub-device %p released while the driver "
                "still holds %d queue(s) made on it (PoCL's queues do not "
                "retain their device: the driver reads freed memory)\n",
                (void *)d, held);
        abort();
    }
    return real_clReleaseDevice(d);
}

cl_command_queue clCreateCommandQueue(cl_context context, cl_device_id device,
                                      cl_command_queue_properties properties,
                                      cl_int *errcode_ret)
{
    REAL(clCreateCommandQueue);
    read_mode();
    cl_command_queue q = real_clCreateCommandQueue(context, device, properties, errcode_ret);
    if (q)
        atomic_fetch_add(&live_q, 1);
    if (q && mode_holdq)
        hold_queue(q, device);
    if (q && mode_flushrun) {
        gate *g = calloc(1, sizeof *g);
        g->q = q;
        pthread_mutex_lock(&gates_mu);
        gate_close(g);
        g->next = gates;
        gates = g;
        pthread_mutex_unlock(&gates_mu);
    }
    return q;
}

cl_int clReleaseCommandQueue(cl_command_queue q)
{
    REAL(clReleaseCommandQueue);
    if (mode_flushrun) {
        gate_open(q, 1);
        pthread_mutex_lock(&gates_mu);
        for (gate **p = &gates; *p; p = &(*p)->next)
            if ((*p)->q == q) {
                gate *g = *p;
                *p = g->next;
                free(g);
                break;
            }
        pthread_mutex_unlock(&gates_mu);
    }
    SERIAL_BEGIN();
    cl_int e = real_clReleaseCommandQueue(q);
    SERIAL_END();
    if (e == CL_SUCCESS)
        atomic_fetch_sub(&live_q, 1);
    return e;
}

cl_int clFlush(cl_command_queue q)
{
    REAL(clFlush);
    if (mode_flushrun) {
        gate_open(q, 0);
        return CL_SUCCESS;
    }
    SERIAL_BEGIN();
    cl_int e = real_clFlush(q);
    SERIAL_END();
    return e;
}

cl_int clFinish(cl_command_queue q)
{
    REAL(clFinish);
    if (mode_flushrun) {
        gate_open(q, 0);
        return CL_SUCCESS;
    }
    SERIAL_BEGIN();
    cl_int e = real_clFinish(q);
    SERIAL_END();
    return e;
}

cl_int clWaitForEvents(cl_uint n, const cl_event *evs)
{
    REAL(clWaitForEvents);
    REAL(clGetEventInfo);
    if (mode_flushrun)
        for (cl_uint i = 0; i < n; i++) {
            cl_command_queue q = NULL;
            if (real_clGetEventInfo(evs[i], CL_EVENT_COMMAND_QUEUE, sizeof q,
                                    &q, NULL) == CL_SUCCESS && q)
                gate_open(q, 0);
        }
    SERIAL_BEGIN();
    cl_int e = real_clWaitForEvents(n, evs);
    SERIAL_END();
    return e;
}

cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem buffer,
                           cl_bool blocking, size_t offset, size_t size,
                           void *ptr, cl_uint nw, const cl_event *wl,
                           cl_event *event)
{
    REAL(clEnqueueReadBuffer);
    if (mode_flushrun && blocking) {
        gate_open(q, 1);
        cl_int e = real_clEnqueueReadBuffer(q, buffer, blocking, offset, size, ptr, nw, wl, event);
        gate_release(q);
        return e;
    }
    if (blocking)
        SERIAL_BEGIN();
    cl_int e = real_clEnqueueReadBuffer(q, buffer, blocking, offset, size, ptr, nw, wl, event);
    if (blocking)
        SERIAL_END();
    return e;
}

cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem buffer,
                            cl_bool blocking, size_t offset, size_t size,
                            const void *ptr, cl_uint nw, const cl_event *wl,
                            cl_event *event)
{
    REAL(clEnqueueWriteBuffer);
    if (mode_flushrun && blocking) {
        gate_open(q, 1);
        cl_int e = real_clEnqueueWriteBuffer(q, buffer, blocking, offset, size, ptr, nw, wl, event);
        gate_release(q);
        return e;
    }
    if (blocking)
        SERIAL_BEGIN();
    cl_int e = real_clEnqueueWriteBuffer(q, buffer, blocking, offset, size, ptr, nw, wl, event);
    if (blocking)
        SERIAL_END();
    return e;
}

void *clEnqueueMapBuffer(cl_command_queue q, cl_mem buffer, cl_bool blocking,
                         cl_map_flags flags, size_t offset, size_t size,
                         cl_uint nw, const cl_event *wl, cl_event *event,
                         cl_int *errcode_ret)
{
    REAL(clEnqueueMapBuffer);
    if (mode_flushrun && blocking) {
        gate_open(q, 1);
        void *p = real_clEnqueueMapBuffer(q, buffer, blocking, flags, offset, size, nw, wl,
                        event, errcode_ret);
        gate_release(q);
        return p;
    }
    if (blocking)
        SERIAL_BEGIN();
    void *p = real_clEnqueueMapBuffer(q, buffer, blocking, flags, offset, size,
                                      nw, wl, event, errcode_ret);
    if (blocking)
        SERIAL_END();
    return p;
}

/* ---- callbacks ------------------------------------------------------------ */

typedef void(CL_CALLBACK *cb_fn)(cl_event, cl_int, void *);

typedef struct pending_cb {
    cb_fn fn;
    cl_event ev;
    cl_int status;
    void *user;
    struct pending_cb *next;
} pending_cb;

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cb_cv = PTHREAD_COND_INITIALIZER;
static pending_cb *cb_list;
static int cb_n, cb_thread;

/* The delay thread: waits 0-20 ms, then calls a random pending callback. */
static void *cb_main(void *arg)
{
    (void)arg;
    unsigned seed = (unsigned)getpid();
    for (;;) {
        pthread_mutex_lock(&cb_mu);
        while (!cb_list)
            pthread_cond_wait(&cb_cv, &cb_mu);
        pthread_mutex_unlock(&cb_mu);
        struct timespec ts = {0, (long)(rand_r(&seed) % 20) * 1000000L};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&cb_mu);
        int pick = rand_r(&seed) % cb_n;
        pending_cb **p = &cb_list;
        while (pick-- > 0)
            p = &(*p)->next;
        pending_cb *c = *p;
        *p = c->next;
        cb_n--;
        pthread_mutex_unlock(&cb_mu);
        c->fn(c->ev, c->status, c->user);
        free(c);
    }
    return NULL;
}

typedef struct tramp {
    cb_fn fn;
    void *user;
} tramp;

static void CL_CALLBACK delayed(cl_event ev, cl_int status, void *arg)
{
    tramp *t = arg;
    pending_cb *c = calloc(1, sizeof *c);
    *c = (pending_cb){t->fn, ev, status, t->user, NULL};
    free(t);
    atomic_fetch_add(&cb_delayed, 1);
    pthread_mutex_lock(&cb_mu);
    if (!cb_thread) {
        pthread_t th;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        cb_thread = pthread_create(&th, &a, cb_main, NULL) == 0;
    }
    c->next = cb_list;
    cb_list = c;
    cb_n++;
    pthread_cond_signal(&cb_cv);
    pthread_mutex_unlock(&cb_mu);
}

cl_int clSetEventCallback(cl_event ev, cl_int type, cb_fn fn, void *user)
{
    REAL(clSetEventCallback);
    REAL(clGetEventInfo);
    read_mode();
    atomic_fetch_add(&cb_set, 1);
    if (mode_hang) {
        atomic_fetch_add(&cb_dropped, 1);
        return CL_SUCCESS;
    }
    if (mode_flushrun) {
        cl_int st = CL_QUEUED;
        if (real_clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                sizeof st, &st, NULL) == CL_SUCCESS &&
            st <= type) {
            /* already reached: Oclgrind never calls it */
            atomic_fetch_add(&cb_dropped, 1);
            return CL_SUCCESS;
        }
    }
    if (mode_delay) {
        tramp *t = malloc(sizeof *t);
        *t = (tramp){fn, user};
        return real_clSetEventCallback(ev, type, delayed, t);
    }
    return real_clSetEventCallback(ev, type, fn, user);
}

/* ---- smallwg: a GPU's work-group and local-memory limits ------------------- */

/* clBLAST's kernels (CamelCase: Xgemm, CopyMatrixFast, ...) are exempt:
 * the limits model what a driver reports for dgrun's own kernels
 * (snake_case); clBLAST launches the sizes it was tuned with for the real
 * device.  Where the shim also sees clBLAST's calls (the ASan build) it
 * would otherwise reject those. */
static int clblast_kernel(cl_kernel k)
{
    REAL(clGetKernelInfo);
    char name[128] = "";
    if (real_clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof name, name,
                             NULL) != CL_SUCCESS)
        return 0;
    return name[0] >= 'A' && name[0] <= 'Z';
}

cl_int clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id dev,
                                cl_kernel_work_group_info what, size_t size,
                                void *value, size_t *size_ret)
{
    REAL(clGetKernelWorkGroupInfo);
    read_mode();
    cl_int e = real_clGetKernelWorkGroupInfo(k, dev, what, size, value,
                                             size_ret);
    if (e == CL_SUCCESS && mode_smallwg && value &&
        what == CL_KERNEL_WORK_GROUP_SIZE && size >= sizeof(size_t) &&
        *(size_t *)value > SMALL_WG && !clblast_kernel(k))
        *(size_t *)value = SMALL_WG;
    return e;
}

cl_int clGetDeviceInfo(cl_device_id dev, cl_device_info what, size_t size,
                       void *value, size_t *size_ret)
{
    REAL(clGetDeviceInfo);
    read_mode();
    cl_int e = real_clGetDeviceInfo(dev, what, size, value, size_ret);
    if (e == CL_SUCCESS && mode_smallwg && value &&
        what == CL_DEVICE_LOCAL_MEM_SIZE && size >= sizeof(cl_ulong) &&
        *(cl_ulong *)value > SMALL_LOCAL)
        *(cl_ulong *)value = SMALL_LOCAL;
    return e;
}

/* local-memory bytes set as kernel arguments (NULL value), per kernel:
 * a small table is enough for a test */
static pthread_mutex_t lm_mu = PTHREAD_MUTEX_INITIALIZER;
static struct { cl_kernel k; cl_uint arg; size_t bytes; } lm[4096];
static int n_lm;

cl_int clSetKernelArg(cl_kernel k, cl_uint arg, size_t size, const void *value)
{
    REAL(clSetKernelArg);
    if (mode_smallwg && !value) {
        pthread_mutex_lock(&lm_mu);
        int i = 0;
        while (i < n_lm && !(lm[i].k == k && lm[i].arg == arg))
            i++;
        if (i == n_lm && n_lm < 4096)
            n_lm++;
        if (i < 4096)
            lm[i].k = k, lm[i].arg = arg, lm[i].bytes = size;
        pthread_mutex_unlock(&lm_mu);
    }
    return real_clSetKernelArg(k, arg, size, value);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims,
                              const size_t *offset, const size_t *global,
                              const size_t *local, cl_uint nw,
                              const cl_event *wl, cl_event *event)
{
    REAL(clEnqueueNDRangeKernel);
    if (mode_smallwg && local && !clblast_kernel(k)) {
        size_t items = 1;
        for (cl_uint d = 0; d < dims; d++)
            items *= local[d];
        if (items > SMALL_WG) {
            atomic_fetch_add(&wg_rejected, 1);
            return CL_INVALID_WORK_GROUP_SIZE;
        }
        size_t bytes = 0;
        pthread_mutex_lock(&lm_mu);
        for (int i = 0; i < n_lm; i++)
            if (lm[i].k == k)
                bytes += lm[i].bytes;
        pthread_mutex_unlock(&lm_mu);
        if (bytes > SMALL_LOCAL) {
            atomic_fetch_add(&wg_rejected, 1);
            return CL_OUT_OF_RESOURCES;
        }
    }
    return real_clEnqueueNDRangeKernel(q, k, dims, offset, global, local, nw,
                                       wl, event);
}

/* ---- noisy / buildfail: a device compiler that talks on fd 2 ------------- */

cl_int clBuildProgram(cl_program p, cl_uint nd, const cl_device_id *devs,
                      const char *options,
                      void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
    REAL(clBuildProgram);
    read_mode();
    if (mode_buildfail) {
        static const char msg[] = "clshim: error: the device compiler refused it\n";
        (void)!write(2, msg, sizeof msg - 1);
        return CL_BUILD_PROGRAM_FAILURE;
    }
    if (mode_noisy) {
        static const char msg[] = "clshim: 3 warnings generated.\n";
        (void)!write(2, msg, sizeof msg - 1);
    }
    return real_clBuildProgram(p, nd, devs, options, notify, user);
}

/* ---- object counts ---------------------------------------------------------- */

cl_context clCreateContext(const cl_context_properties *props, cl_uint nd,
                           const cl_device_id *devs,
                           void(CL_CALLBACK *notify)(const char *,
                                                     const void *, size_t,
                                                     void *),
                           void *user, cl_int *errcode_ret)
{
    REAL(clCreateContext);
    cl_context c = real_clCreateContext(props, nd, devs, notify, user, errcode_ret);
    if (c)
        atomic_fetch_add(&live_ctx, 1);
    return c;
}

cl_int clReleaseContext(cl_context c)
{
    REAL(clReleaseContext);
    REAL(clGetContextInfo);
    cl_uint refs = 0;
    if (real_clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs,
                              &refs, NULL) == CL_SUCCESS && refs > 1)
        atomic_fetch_add(&ctx_held, 1);
    cl_int e = real_clReleaseContext(c);
    if (e == CL_SUCCESS)
        atomic_fetch_sub(&live_ctx, 1);
    return e;
}

cl_program clCreateProgramWithSource(cl_context c, cl_uint n,
                                     const char **strings,
                                     const size_t *lengths,
                                     cl_int *errcode_ret)
{
    REAL(clCreateProgramWithSource);
    cl_program p = real_clCreateProgramWithSource(c, n, strings, lengths, errcode_ret);
    if (p)
        atomic_fetch_add(&live_prog, 1);
    return p;
}

cl_program clCreateProgramWithBinary(cl_context c, cl_uint nd,
                                     const cl_device_id *devs,
                                     const size_t *lengths,
                                     const unsigned char **bins,
                                     cl_int *status, cl_int *errcode_ret)
{
    REAL(clCreateProgramWithBinary);
    cl_program p = real_clCreateProgramWithBinary(c, nd, devs, lengths, bins, status, errcode_ret);
    if (p)
        atomic_fetch_add(&live_prog, 1);
    return p;
}

cl_int clReleaseProgram(cl_program p)
{
    REAL(clReleaseProgram);
    cl_int e = real_clReleaseProgram(p);
    if (e == CL_SUCCESS)
        atomic_fetch_sub(&live_prog, 1);
    return e;
}

cl_kernel clCreateKernel(cl_program p, const char *name, cl_int *errcode_ret)
{
    REAL(clCreateKernel);
    cl_kernel k = real_clCreateKernel(p, name, errcode_ret);
    if (k)
        atomic_fetch_add(&live_kern, 1);
    return k;
}

cl_int clReleaseKernel(cl_kernel k)
{
    REAL(clReleaseKernel);
    cl_int e = real_clReleaseKernel(k);
    if (e == CL_SUCCESS)
        atomic_fetch_sub(&live_kern, 1);
    return e;
}

cl_mem clCreateBuffer(cl_context c, cl_mem_flags flags, size_t size,
                      void *host_ptr, cl_int *errcode_ret)
{
    REAL(clCreateBuffer);
    cl_mem m = real_clCreateBuffer(c, flags, size, host_ptr, errcode_ret);
    if (m)
        atomic_fetch_add(&live_mem, 1);
    return m;
}

cl_mem clCreateSubBuffer(cl_mem buffer, cl_mem_flags flags,
                         cl_buffer_create_type type, const void *info,
                         cl_int *errcode_ret)
{
    REAL(clCreateSubBuffer);
    cl_mem m = real_clCreateSubBuffer(buffer, flags, type, info, errcode_ret);
    if (m)
        atomic_fetch_add(&live_mem, 1);
    return m;
}

cl_int clReleaseMemObject(cl_mem m)
{
    REAL(clReleaseMemObject);
    cl_int e = real_clReleaseMemObject(m);
    if (e == CL_SUCCESS)
        atomic_fetch_sub(&live_mem, 1);
    return e;
}
