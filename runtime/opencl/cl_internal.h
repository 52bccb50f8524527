/*
 * cl_internal.h -- shared state of the OpenCL backend (cl_*.c only).
 *
 * A dgr_cl_ctx is one OpenCL context on one device (a physical device, or a
 * sub-device of one when --virtual-gpus splits it).  Contexts live for the
 * whole process in a registry (cl_device.c) so programs are built once per
 * process per context.  A dgr_cl_dev is an opened logical GPU: a context,
 * nq in-order compute queues (DGRUN_CL_QUEUES, default 2) plus a copy queue
 * for host<->device transfers when nq > 1 (profiling only when the options
 * ask for a trace), a caching allocator and a device-to-host clock offset.
 *
 * Which compute queue (stream) a kernel enqueues on, and the events its
 * first command waits for, come in its context (k->stream, k->waits); kernels
 * ask dgr_cl_queue(k).  A buffer's pool_class keeps, in its low 8 bits, the
 * set of compute queues that used it (DGR_CL_QMASK); the allocator reuses a
 * released buffer at once only on the one queue that used it, and defers
 * the others until marker events on every queue complete (cl_alloc.c).
 */
#ifndef DGR_CL_INTERNAL_H
#define DGR_CL_INTERNAL_H

#include <pthread.h>

#include <CL/cl.h>

#include "backend.h"
#include "rng.h"

#define DGR_CL_MAX_SOURCES 16
#define DGR_CL_KTAB 1024 /* power of two, > kernels per context */

typedef struct dgr_cl_kentry {
    int src;        /* source index */
    int dt;         /* 0 float, 1 double */
    const char *name;
    cl_kernel k;
    size_t wg;      /* work-items per group it may run with on this device:
                       CL_KERNEL_WORK_GROUP_SIZE capped by the device's
                       CL_DEVICE_MAX_WORK_GROUP_SIZE */
} dgr_cl_kentry;

typedef struct dgr_cl_ctx {
    cl_platform_id platform;
    cl_device_id dev;
    cl_context ctx;
    int fp64;
    int cr_div;          /* float / and sqrt can be correctly rounded
                          * (-cl-fp32-correctly-rounded-divide-sqrt) */
    size_t max_wg;       /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
    size_t max_item[3];  /* CL_DEVICE_MAX_WORK_ITEM_SIZES, per dimension */
    char plat_name[128]; /* CL_PLATFORM_NAME and _VERSION, and the device's */
    char plat_version[128];
    char dev_version[128];/* CL_DEVICE_VERSION (program cache key) */
    size_t local_mem;    /* CL_DEVICE_LOCAL_MEM_SIZE */
    cl_ulong global_mem;
    cl_uint base_align;  /* bytes */
    char dev_name[128];
    char driver[128];
    pthread_mutex_t lock; /* programs, kernels and clSetKernelArg */
    /* held from map to unmap of the mapped host copies (cl_copy.c): PoCL
     * can hand out a bad pointer when two threads map one buffer at once */
    pthread_mutex_t map_lock;
    cl_program progs[DGR_CL_MAX_SOURCES][2];
    dgr_cl_kentry *kernels;
    int n_kernels, cap_kernels;
    /* open-addressing index into kernels (entry + 1, 0 = empty), keyed by
     * (src, dt, name); DGR_CL_KTAB slots, rebuilt never (append-only) */
    int ktab[DGR_CL_KTAB];
    /* build notices (dg_options.on_build) of the session that opened the
     * context last; called around builds from source and clBLAST's first
     * call */
    dg_build_fn on_build;
    void *on_build_user;
    int blas_warm;       /* clBLAST has run on this context */
} dgr_cl_ctx;

/* Tell the context's on_build hook that a build begins (1) or ends (0);
 * output: what the build printed (end events; NULL = none). */
void dgr_cl_build_notice(dgr_cl_ctx *c, int begin, const char *what,
                         const char *output);

/* What the OpenCL implementation prints on file descriptor 2 while it
 * builds a program (PoCL's embedded clang: "25 warnings generated.")
 * belongs to dgrun (issue 19): begin redirects fd 2 into an anonymous
 * file under a process-wide lock (builds are serialised by it), end puts
 * fd 2 back, unlocks and returns what was written (malloc'd, NUL-ended, at
 * most 64 KiB; NULL when nothing or when capturing was not possible). */
typedef struct dgr_cl_capture {
    int saved;   /* dup of the original fd 2, -1 = not capturing */
    int fd;      /* the anonymous file */
} dgr_cl_capture;
void dgr_cl_capture_begin(dgr_cl_capture *cap);
char *dgr_cl_capture_end(dgr_cl_capture *cap);

#define DGR_CL_MAXQ 8      /* compute queues per logical device, at most */
#define DGR_CL_QMASK ((size_t)0xFF) /* pool_class bits: queues that used it */
#define DGR_CL_TAG_ANY (-1) /* free block reusable on any queue */

typedef struct dgr_cl_freeblk {
    cl_mem mem;
    size_t size;      /* class size */
    int tag;          /* free list: queue it may be reused on at once, or
                         DGR_CL_TAG_ANY */
    struct dgr_cl_freeblk *next;
} dgr_cl_freeblk;

/* Released buffers used by several queues: reusable once every event is
 * complete (markers on each compute queue, enqueued after the release). */
typedef struct dgr_cl_fence {
    cl_event ev[DGR_CL_MAXQ];
    int n_ev;
    dgr_cl_freeblk *blocks;
    struct dgr_cl_fence *next;
} dgr_cl_fence;

typedef struct dgr_cl_alloc {
    pthread_mutex_t lock;
    dgr_cl_freeblk *free_list; /* cached buffers, any class */
    dgr_cl_freeblk *deferred;  /* released, used by several queues, no
                                  fence yet */
    dgr_cl_fence *fences;      /* deferred blocks waiting for markers */
    size_t cached_bytes;       /* free + deferred + fenced */
    size_t live_bytes;         /* class bytes handed out */
    /* reserved arena (allow_growth 0) */
    cl_mem arena;
    size_t arena_size;
    struct dgr_cl_range { size_t off, size; } *holes;
    int n_holes, cap_holes;
    size_t n_creates;          /* clCreateBuffer/SubBuffer calls, for tests */
    dgr_cl_freeblk *spare;     /* unused list nodes, recycled */
} dgr_cl_alloc;

typedef struct dgr_cl_dev {
    dgr_cl_ctx *c;
    cl_command_queue q;        /* compute queue 0 (== qs[0]) */
    cl_command_queue qs[DGR_CL_MAXQ]; /* compute queues */
    int nq;                    /* 1 .. DGR_CL_MAXQ */
    cl_command_queue copyq;    /* host transfers; == q when nq == 1 */
    int64_t clock_offset;      /* host ns - device ns */
    dgr_cl_alloc alloc;
    cl_mem scratch;            /* small reusable buffer (unused if NULL) */
    pthread_mutex_t clock_lock;/* clock_offset, clock_synced */
    uint64_t clock_synced;     /* dg_now_ns of the last clock sync, 0 = none */
    int64_t clock_err;         /* half-width of the sync bracket, ns */
    uint64_t clock_dev;        /* device time of the last sync */
    int64_t prev_offset;       /* the sync before it (drift interpolation) */
    uint64_t prev_dev;         /* its device time, 0 = none */
    int unified;               /* CL_DEVICE_HOST_UNIFIED_MEMORY */
    int profiling;             /* queue has CL_QUEUE_PROFILING_ENABLE (the
                                  options ask for a trace) */
} dgr_cl_dev;

/* ---- cl_device.c --------------------------------------------------------- */

/* Name of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *dgr_cl_errname(cl_int e);
/* DG_E_RUNTIME "node '<node>': <call> failed: <CL_NAME> (<code>)"; node may be
 * NULL (then no node prefix). */
dg_status dgr_cl_fail(dg_error *err, const char *node, const char *call,
                      cl_int e);

/* Measure clock_offset: host timestamps taken just before and just after
 * enqueueing a marker bracket the marker's CL_PROFILING_COMMAND_QUEUED
 * time (taken by the runtime inside the enqueue call, on the device's
 * profiling clock); the tightest of a few brackets gives the offset.  The
 * queue must be idle or at least usable (the marker is waited for).
 * 0 ok, -1 when profiling info is unavailable (offset unchanged). */
int dgr_cl_clock_sync(dgr_cl_dev *cd);

/* Number of compute queues a device opens: DGRUN_CL_QUEUES (1..8) when set
 * and valid, else 2. */
int dgr_cl_queue_count(void);


/* ---- the backend (cl_backend.c, cl_streams.c) ----------------------------- */

/* Discovery: append the OpenCL devices the options select as GPU:n. */
dg_status dgr_cl_discover(const dg_options *o, dg_device_list *l,
                          dg_error *err);
/* Open device d (d->info filled from the device list; info.physical names
 * the OpenCL device in discovery order under the same options); profiling
 * only when o->trace_path is set.  Sets d->impl and d->mem_cap
 * (gpu_memory_fraction, virtual split); with allow_growth 0 reserves the
 * cap.  DG_E_RUNTIME naming the OpenCL call and error on failure. */
dg_status dgr_cl_device_open(dgr_device *d, const dg_options *o, dg_error *err);
/* Wait for all the device's queues, release everything it holds. */
void dgr_cl_device_close(dgr_device *d);
/* Release everything the backend keeps for the process, in order:
 * clBLAST's program cache (CLBlastClearCache, when clBLAST was loaded),
 * then every context's kernels, programs and the context (issue 25: left
 * to the libraries' static destructors, clBLAST's cache was released after
 * the OpenCL implementation's own teardown and corrupted the heap at exit
 * on Oclgrind).  Sub-devices of --virtual-gpus stay, as the physical
 * device ids do: PoCL's driver threads may still read them (cl_device.c,
 * split_device).  No device may be open; a later open builds new
 * contexts. */
void dgr_cl_shutdown(void);
/* Whether clBLAST was loaded in this process; CLBlastClearCache when it
 * was (cl_lazy.c). */
int dgr_cl_blas_loaded(void);
/* Host-clock time (dg_now_ns) of an event's start and end, from the
 * device's profiling counters mapped through a measured clock offset
 * (re-measured when stale, interpolated between syncs); 0 on failure or
 * when the device was opened without tracing.  Releases nothing. */
int dgr_cl_event_times(dgr_device *d, void *cl_event, uint64_t *start_ns,
                       uint64_t *end_ns);
/* Release an event (NULL does nothing). */
void dgr_cl_event_release(void *cl_event);
/* The backend (cl_backend.c) and its streams (cl_streams.c). */
extern const dgr_backend dgr_backend_opencl;
/* Float kernel dtypes of the ops it runs in host memory (cl_kernels.c). */
extern const uint32_t dgr_cl_host_ops[DGC_N_OPS];
extern const dgr_stream_ops dgr_cl_stream_ops;

/* ---- cl_copy.c ----------------------------------------------------------- */

/* Memory of an OpenCL logical GPU: buffers from the caching allocator for
 * compute queue `stream` (-1: a host transfer), host copies, and sync
 * (finishes every queue, makes deferred buffers reusable). */
dgr_buffer *dgr_cl_buffer_get(dgr_device *d, size_t nbytes, int stream,
                              dg_error *err);
void dgr_cl_buffer_put(dgr_device *d, dgr_buffer *b);
dg_status dgr_cl_read(dgr_device *d, const dgr_buffer *src, void *dst,
                      size_t n, dg_error *err);
dg_status dgr_cl_write(dgr_device *d, dgr_buffer *dst, const void *src,
                       size_t n, dg_error *err);
dg_status dgr_cl_sync(dgr_device *d, dg_error *err);
/* clFinish every queue of cd (compute and copy); the first error. */
cl_int dgr_cl_finish_all(dgr_cl_dev *cd);
/* Blocking copy of n bytes of src to host memory on d's copy queue after
 * the events `waits` (the commands writing src on the compute queues) --
 * the executor's device-to-host transfers.  dgr_cl_read is the same after a
 * marker on every compute queue. */
dg_status dgr_cl_read_after(dgr_device *d, const dgr_buffer *src, void *dst,
                            size_t n, const cl_event *waits, int n_waits,
                            dg_error *err);

/* ---- cl_alloc.c ---------------------------------------------------------- */

/* Initialise the allocator; with reserve > 0 allocate an arena of that many
 * bytes up front and carve buffers from it. */
dg_status dgr_cl_alloc_init(dgr_cl_dev *cd, size_t reserve, dg_error *err);
void dgr_cl_alloc_destroy(dgr_cl_dev *cd);
dg_status dgr_cl_alloc_get(dgr_cl_dev *cd, dgr_buffer *b, int q,
                           dg_error *err);
void dgr_cl_alloc_put(dgr_cl_dev *cd, dgr_buffer *b);
/* Record that compute queue q uses b (an input of a step on q): an atomic
 * or into pool_class's low bits.  Before the step releases b. */
void dgr_cl_alloc_mark(dgr_buffer *b, int q);
/* Every queue of cd is idle (after clFinish of all of them): make every
 * deferred buffer reusable on any queue. */
void dgr_cl_alloc_drain(dgr_cl_dev *cd);
/* Class size for a request (rounded up). */
size_t dgr_cl_alloc_class(size_t n);
/* Number of device allocations the allocator made so far (tests). */
size_t dgr_cl_alloc_creates(dgr_device *d);

/* ---- cl_program.c -------------------------------------------------------- */

/* The kernel `name` of embedded source `src` (file name without .cl) built
 * for dtype dt (DG_F32 or DG_F64) on c; built lazily, cached.  Caller holds
 * nothing; the returned kernel is shared: set args and enqueue under
 * c->lock. */
dg_status dgr_cl_get_kernel(dgr_cl_ctx *c, const char *src, dg_dtype dt,
                            const char *name, cl_kernel *out, dg_error *err);
/* The same with c->lock already held by the caller (hash lookup; builds on
 * a miss); *wg (may be NULL) gets the kernel's work-group limit on c's
 * device (dgr_cl_kentry.wg). */
dg_status dgr_cl_get_kernel_locked(dgr_cl_ctx *c, const char *src,
                                   dg_dtype dt, const char *name,
                                   cl_kernel *out, size_t *wg, dg_error *err);

/* Build `text` with `options` for c, through the on-disk binary cache.
 * *from_cache is set to 1 when the binary came from the cache.  Build
 * failures are DG_E_RUNTIME naming `file` and the first lines of the log. */
dg_status dgr_cl_build(dgr_cl_ctx *c, const char *file, const char *text,
                       const char *options, cl_program *out, int *from_cache,
                       dg_error *err);
/* The cache directory ($XDG_CACHE_HOME/dgrun or ~/.cache/dgrun) into buf. */
void dgr_cl_cache_dir(char *buf, size_t n);

/* ---- cl_blas.c ----------------------------------------------------------- */
/* Empty clBLAST's program cache (CLBlastClearCache) when clBLAST was loaded
 * (dgr_cl_shutdown). */
void dgr_cl_blas_clear(void);
dg_status dgr_cl_matmul(dgr_kctx *k);
/* _FusedMatMul: dgr_cl_matmul + bias (+ Relu) epilogue (cl_kernels_fused.c) */
dg_status dgr_cl_fused_matmul(dgr_kctx *k);
/* Row-major C[coff..] = A * B + beta * C (op(A) m x kk, op(B) kk x n;
 * ta / tb transpose) on k's queue through clBLAST (S or D by dt), after
 * k's pending waits; the event goes to k->event. */
dg_status dgr_cl_gemm(dgr_kctx *k, dg_dtype dt, int ta, int tb, size_t m,
                      size_t n, size_t kk, cl_mem a, size_t aoff, size_t lda,
                      cl_mem b, size_t boff, size_t ldb, double beta, cl_mem c,
                      size_t coff, size_t ldc);

/* ---- launch helpers (cl_launch.c) ---------------------------------------- */

/* Take k's pending wait list (count; *waits set); every enqueue in a
 * kernel passes it to its first command (dgr_cl_enqueued puts it back when
 * the command failed). */
cl_uint dgr_cl_take_waits(dgr_kctx *k, const cl_event **waits);
/* Enqueue a barrier on k's queue for a pending wait list (commands that
 * take no wait list: clBLAST). */
dg_status dgr_cl_flush_waits(dgr_kctx *k);
/* The queue kernels of k enqueue on: compute queue k->stream of k's
 * device (queue 0 when out of range). */
cl_command_queue dgr_cl_queue(dgr_kctx *k);
/* Compute queue q of a device (queue 0 when out of range). */
cl_command_queue dgr_cl_stream_queue(dgr_cl_dev *cd, int q);

typedef struct dgr_cl_arg {
    size_t size;
    const void *ptr;   /* NULL with size = local memory */
} dgr_cl_arg;

#define DGR_ARG(x) ((dgr_cl_arg){sizeof(x), &(x)})
#define DGR_LOCAL(n) ((dgr_cl_arg){(n), NULL})

/* Set args and enqueue kernel `name` of `src` for dtype dt on k's device;
 * global/local sizes of dim dims (local may be NULL).  Stores the event in
 * k->event (previous one released). */
dg_status dgr_cl_launch(dgr_kctx *k, const char *src, dg_dtype dt,
                        const char *name, cl_uint dims, const size_t *global,
                        const size_t *local, const dgr_cl_arg *args,
                        int n_args);
/* Whether a kernel should ask for a cl_event for k->event: only when
 * someone reads it (a tracing session, a caller without an environment such
 * as tests, or the executor's k->want_event); events cost time per command
 * otherwise.  Every command a kernel enqueues asks (the last event is the
 * kernel's completion on its in-order queue). */
int dgr_cl_want_event(const dgr_kctx *k);
/* Replace k->event with ev (takes ownership). */
void dgr_cl_set_event(dgr_kctx *k, cl_event ev);
/* The OpenCL device k's kernel runs on. */
dgr_cl_dev *dgr_cl_devof(dgr_kctx *k);
/* cl_mem of a value's buffer (NULL for an empty value). */
cl_mem dgr_cl_mem(const dgr_value *v);
/* 1-D launch over n items (global rounded up to the work-group size). */
dg_status dgr_cl_launch1d(dgr_kctx *k, const char *src, dg_dtype dt,
                          const char *name, size_t n, const dgr_cl_arg *args,
                          int n_args);
/* The work-group limit of kernel `name` of `src` on k's device (its
 * CL_KERNEL_WORK_GROUP_SIZE, at most CL_DEVICE_MAX_WORK_GROUP_SIZE and
 * CL_DEVICE_MAX_WORK_ITEM_SIZES[0]); 0 with k->err set when the kernel
 * cannot be built.  Launches with a local size above it fail with a clear
 * error (dgr_cl_launch) instead of CL_INVALID_WORK_GROUP_SIZE. */
size_t dgr_cl_kernel_wg(dgr_kctx *k, const char *src, dg_dtype dt,
                        const char *name);
/* Power-of-two work-group size for a local-memory reduction kernel over
 * `want` items: <= 256, <= the kernel's and device's limits, and leaving room
 * for `elem` bytes per work-item of local memory. */
dg_status dgr_cl_reduce_wg(dgr_kctx *k, const char *src, dg_dtype dt,
                           const char *name, size_t want, size_t elem,
                           size_t *out);
/* Error naming k's node. */
dg_status dgr_cl_kfail(dgr_kctx *k, const char *call, cl_int e);
/* Kernel dtypes of the registry's rows (DGR_KERNEL_DT, kernel.h): float32
 * and float64 (DGR_KERNEL's default here), with int32 and int64 too, and
 * the integer dtypes alone. */
#define DGR_CL_KDT_FLOAT ((1u << DG_F32) | (1u << DG_F64))
#define DGR_CL_KDT_FLOAT_INT (DGR_CL_KDT_FLOAT | (1u << DG_I32) | (1u << DG_I64))
#define DGR_CL_KDT_INT ((1u << DG_I32) | (1u << DG_I64))
/* The kernel a generic launcher runs for an op (dgk_<shape>_<Op> in
 * opencl_kernels/<program>.cl; tools/gen_registry.py). */
typedef struct dgr_cl_named {
    const char *program, *kernel;
} dgr_cl_named;
/* The registry (dgr_cl_kernel_rows: one row per op id) and every
 * registered kernel, generated from the DGR_KERNEL lines of this folder
 * and the dgk_<shape>_<Op> kernels of the .cl files; the generic launchers
 * (cl_kernels_zoo.c): unary (x -> y elementwise) and bcast2 (a, b -> y
 * with NumPy broadcasting), running dgr_cl_named_kernels[op]. */
#include "cl_kernels_gen.h"

/* Finish an enqueue that was given the pending wait list (waits, n_waits
 * from dgr_cl_take_waits) and returned e: on failure put the list back for
 * the next command and report `call` for k's node; on success store ev
 * (may be NULL) as k's event. */
dg_status dgr_cl_enqueued(dgr_kctx *k, const char *call, cl_int e,
                          const cl_event *waits, cl_uint n_waits, cl_event ev);
/* DG_OK when k's device has kernels for dt (float32; float64 where the
 * device has fp64), else DG_E_RUNTIME naming the node and op. */
dg_status dgr_cl_need_float(dgr_kctx *k, dg_dtype dt);
/* dgr_cl_need_float, then allocate output 0. */
dg_status dgr_cl_float_output(dgr_kctx *k, dg_dtype dt);
/* The elements of k's small integer input i (int32 or int64, at most max,
 * max <= 2 * DG_MAX_RANK) into v, *n their count: from its Const producer
 * when it has one, else a blocking read of its buffer (cl_kernels_zoo.c). */
dg_status dgr_cl_small_ints(dgr_kctx *k, int i, int64_t *v, int max, int *n);
/* v[0..n) as a kernel's long8 argument (zeros past n; n <= 8). */
static inline cl_long8 dgr_cl_long8(const int64_t *v, int n)
{
    cl_long8 x;
    for (int i = 0; i < 8; i++)
        x.s[i] = i < n ? v[i] : 0;
    return x;
}

/* ---- im2col convolutions (cl_kernels_conv.c: Conv2D, Conv3D) ------------- */

/* One convolution's GEMM shape: the kernels of program `prog` that write a
 * slice of the batch's patches as rows (im2col) and gather patch gradients
 * back (col2im), both called (in, out, geom, n0, n); per example P1 output
 * positions, patches of K elements, in_ex input elements; OC output
 * channels; nchw: 2-D NCHW, y and dy reordered by conv.cl's rows_to_nchw /
 * nchw_to_rows (which take the same geom). */
typedef struct dgr_cl_im2col {
    const char *prog, *im2col, *col2im;
    dgr_cl_arg geom;
    size_t N, P1, K, OC, in_ex;
    int nchw;
} dgr_cl_im2col;
enum { DGR_CONV_FWD, DGR_CONV_BWD_D, DGR_CONV_BWD_W };
/* The convolution c as clBLAST GEMMs over patch matrices of a bounded
 * number of examples at a time: DGR_CONV_FWD (x a, filter b [K, OC]) -> y,
 * DGR_CONV_BWD_D (dy a, filter b) -> dx, DGR_CONV_BWD_W (x a, dy b) ->
 * dfilter; out allocated by the caller. */
dg_status dgr_cl_gemm_conv(dgr_kctx *k, int what, dg_dtype dt,
                           const dgr_cl_im2col *c, cl_mem a, cl_mem b,
                           cl_mem out);

#endif
