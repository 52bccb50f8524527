/*
 * rt.h -- the runtime's shared vocabulary: devices, buffers, values, the
 * kernel call context and the kernel registry.
 *
 * The runtime reads the compiler's plan (compiler/plan.h) and never changes
 * the graph.  Devices are CPU:0 (host memory, C kernels on thread pools) and
 * OpenCL devices (cl_mem buffers, kernels from opencl_kernels/, clBLAST).
 * Kernels are looked up in one registry (kernels.c) indexed by op and device
 * type; the op table (compiler/ops.c) says which must exist.
 */
#ifndef DGR_RT_H
#define DGR_RT_H

#include <stdatomic.h>
#include <stdint.h>

#include "dgrun.h"
#include "dg_error.h"
#include "../compiler/ir.h"
#include "../compiler/ops.h"

struct dgr_device;
struct dgr_session;
struct dgr_pool;

/* ---- buffers and values -------------------------------------------------- */

typedef struct dgr_buffer {
    struct dgr_device *dev;
    size_t nbytes;
    void *host;        /* CPU:0 buffers (and mapped host views) */
    void *mem;         /* cl_mem for OpenCL buffers */
    size_t pool_class; /* allocator bookkeeping */
    atomic_int refs;
} dgr_buffer;

/* A concrete tensor on a device. */
typedef struct dgr_value {
    dg_dtype dtype;
    dg_shape shape;    /* all dims >= 0 */
    dgr_buffer *buf;   /* NULL for an empty value */
} dgr_value;

/* ---- devices ------------------------------------------------------------- */

typedef struct dgr_device_ops {
    /* Allocate nbytes on the device into b->host or b->mem. */
    dg_status (*alloc)(struct dgr_device *d, dgr_buffer *b, dg_error *err);
    void (*release)(struct dgr_device *d, dgr_buffer *b);
    /* Copy device buffer -> host memory; blocks until the data is there
     * (waits for every command that writes src). */
    dg_status (*read)(struct dgr_device *d, const dgr_buffer *src, void *dst,
                      size_t n, dg_error *err);
    /* Copy host memory -> device buffer (host memory reusable on return). */
    dg_status (*write)(struct dgr_device *d, dgr_buffer *dst, const void *src,
                       size_t n, dg_error *err);
    /* Wait for all work queued on the device. */
    dg_status (*sync)(struct dgr_device *d, dg_error *err);
} dgr_device_ops;

typedef struct dgr_device {
    dg_device_info info;   /* name, type, index, ... */
    int id;                /* index in the session's device list */
    const dgr_device_ops *ops;
    void *impl;            /* backend state (cl_device.c's struct) */
    size_t mem_cap;        /* allocator cap in bytes (0 = unlimited) */
    atomic_size_t in_use;
    atomic_size_t peak;
} dgr_device;

/* Allocate a buffer of nbytes on d with refs = 1.  DG_E_NOMEM names the
 * bytes asked and in use.  (buffer.c) */
dgr_buffer *dgr_buffer_new(dgr_device *d, size_t nbytes, dg_error *err);
void dgr_buffer_retain(dgr_buffer *b);
void dgr_buffer_release(dgr_buffer *b); /* frees at refs == 0 */
/* CPU buffers are cached per size class for reuse (buffer.c); this frees
 * the calling thread's cached blocks and the process-wide cache.  Safe at
 * any time; buffers in use are not touched. */
void dgr_cpu_cache_trim(void);

/* Host device (CPU:0) ops, buffer.c. */
extern const dgr_device_ops dgr_cpu_device_ops;

/* ---- kernels ------------------------------------------------------------- */

typedef struct dgr_kctx {
    struct dgr_session *sess;
    dgr_device *dev;
    const dgc_graph *g;
    const dgc_node *node;
    int32_t node_id;
    const dgr_value *in;   /* n_in concrete inputs on dev */
    int n_in;
    dgr_value *out;        /* n_out outputs: the kernel fills them */
    int n_out;
    const dgc_ttype *out_types; /* concrete output types from infer */
    int64_t step;          /* training / repeat step, for tracing & RNG */
    struct dgr_pool *intra;/* CPU intra-op pool (NULL = run inline) */
    void *cl_event;        /* OpenCL kernels: the cl_event of the last
                              command they enqueued (retained), for tracing */
    dg_error *err;
} dgr_kctx;

/* Kernel contract: read k->in, produce k->out[0..n_out) on k->dev.  On an
 * OpenCL device a kernel only enqueues (no host wait).  Returns DG_OK or an
 * error naming the node. */
typedef dg_status (*dgr_kernel_fn)(dgr_kctx *k);

/* Allocate output i with k->out_types[i] on k->dev (kernels.c). */
dg_status dgr_kctx_alloc_output(dgr_kctx *k, int i);
/* Make output i share the buffer of v (retained), with type out_types[i]
 * (Identity, Reshape, Variable reads). */
void dgr_kctx_alias_output(dgr_kctx *k, int i, const dgr_value *v);

/* The registry (kernels.c): kernel for op on device type, NULL if none. */
dgr_kernel_fn dgr_kernel_find(int op, dg_devtype t);

/* CPU kernels (kernels_cpu*.c) and OpenCL kernels (cl_kernels.c) register
 * through these tables, indexed by op id (dgc_ops order). */
dgr_kernel_fn dgr_cpu_kernel(int op);
dgr_kernel_fn dgr_cl_kernel(int op);

/* ---- intra-op parallelism ------------------------------------------------ */

typedef void (*dgr_range_fn)(void *arg, int64_t begin, int64_t end);
/* Split [0, n) into chunks of at least `grain` and run fn on the intra-op
 * pool (inline when pool is NULL or n is small); returns when all are done.
 * (threadpool.c) */
void dgr_parallel_for(struct dgr_pool *pool, int64_t n, int64_t grain,
                      dgr_range_fn fn, void *arg);
/* Number of threads of the pool (1 if NULL). */
int dgr_pool_threads(const struct dgr_pool *pool);

/* ---- session state kernels need (session.c) ------------------------------ */

/* The persistent value of Variable node_id (on its device). */
dgr_value *dgr_session_variable(struct dgr_session *s, int32_t node_id);
/* The fed value of Placeholder node_id, NULL if not fed. */
const dgr_value *dgr_session_feed(struct dgr_session *s, int32_t node_id);
/* Seed for a random op: derived from --seed, the node (its `seed` attr
 * when it has one, else its name) and a per-session counter, so the same
 * seed gives the same numbers. */
uint64_t dgr_session_rng_seed(struct dgr_session *s, int32_t node_id);
/* Serialises Print output (stderr is the CLI's, but Print is an op whose
 * contract is to print; it writes through this hook). */
void dgr_session_print(struct dgr_session *s, const char *text);

/* ---- random numbers (rng.c) ---------------------------------------------- */
typedef struct dgr_rng { uint64_t s[4]; } dgr_rng;
void dgr_rng_seed(dgr_rng *r, uint64_t seed);
uint64_t dgr_rng_next(dgr_rng *r);
double dgr_rng_uniform(dgr_rng *r);           /* [0, 1) */
double dgr_rng_normal(dgr_rng *r);            /* N(0, 1) */
/* Fill a host tensor per a Variable initializer (glorot uses fan in/out). */
dg_status dgr_init_fill(const dgc_init *init, dg_tensor *t, dgr_rng *r,
                        dg_error *err);

#endif
