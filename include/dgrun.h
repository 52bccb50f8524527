/*
 * dgrun.h -- the public interface of libdgrun.
 *
 * libdgrun loads a dataflow graph from JSON (SPEC section 2), compiles it
 * (gradients, training updates, placement, transfers, an execution plan) and
 * runs it on the CPU and on OpenCL devices.  The CLI in cli/ is a client of
 * exactly this header.  The library never prints and never exits: every
 * function that can fail returns a dg_status and fills a dg_error whose
 * message is one line without the "dgrun: error: <file>: " prefix, which the
 * caller adds.
 *
 * Flow: dg_graph_load -> dg_devices_discover (or dg_devices_assume) ->
 * dg_compile -> (dg_program_* queries for `place`) -> dg_session_new ->
 * dg_session_run / dg_session_train -> dg_session_free.
 */
#ifndef DGRUN_H
#define DGRUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DG_VERSION_STRING "0.1.0"

/* ---- status and errors ------------------------------------------------ */

/* Every status once: X(enumerator, name, exit code SPEC section 1 gives it).
 * The enum, dg_status_name and dg_status_exit_code are generated from this
 * list; add a status here and nowhere else.
 *   DG_OK           success
 *   DG_E_USAGE      bad option value or combination
 *   DG_E_GRAPH      invalid graph, feed spec, rules file
 *   DG_E_PLACEMENT  placement cannot be satisfied
 *   DG_E_RUNTIME    kernel / OpenCL failure while running
 *   DG_E_NOMEM      out of (host or device) memory
 *   DG_E_IO         I/O failure (read, write, rename)
 *   DG_E_MISMATCH   place --expect found a difference */
#define DG_STATUS_LIST(X)             \
    X(DG_OK, "ok", 0)                 \
    X(DG_E_USAGE, "usage", 2)         \
    X(DG_E_GRAPH, "graph", 2)         \
    X(DG_E_PLACEMENT, "placement", 2) \
    X(DG_E_RUNTIME, "runtime", 1)     \
    X(DG_E_NOMEM, "nomem", 1)         \
    X(DG_E_IO, "io", 1)               \
    X(DG_E_MISMATCH, "mismatch", 3)

typedef enum dg_status {
#define DG_STATUS_ENUM_(id, name, exit_code) id,
    DG_STATUS_LIST(DG_STATUS_ENUM_)
#undef DG_STATUS_ENUM_
} dg_status;

typedef struct dg_error {
    dg_status code;
    char msg[2048];
} dg_error;

/* Exit code SPEC section 1 assigns to a status (0, 1, 2 or 3); 1 for a
 * value outside the enum. */
int dg_status_exit_code(dg_status s);
/* The status's short name ("ok", "usage", "graph", ...); "unknown" for a
 * value outside the enum. */
const char *dg_status_name(dg_status s);

/* ---- tensors on the host ---------------------------------------------- */

typedef enum dg_dtype {
    DG_F32 = 0,
    DG_F64 = 1,
    DG_I32 = 2,
    DG_I64 = 3,
    DG_BOOL = 4,
    DG_DTYPE_COUNT
} dg_dtype;

#define DG_MAX_RANK 8

typedef struct dg_shape {
    int rank;
    int64_t dims[DG_MAX_RANK]; /* -1 = unknown (compile time only) */
} dg_shape;

/* A dense C-order tensor in host memory.  `data` holds
 * dg_shape_numel(&shape) * dg_dtype_size(dtype) bytes. */
typedef struct dg_tensor {
    dg_dtype dtype;
    dg_shape shape;
    void *data;
} dg_tensor;

const char *dg_dtype_name(dg_dtype t);          /* "float32", ... */
int dg_dtype_parse(const char *s, dg_dtype *out); /* 0 ok, -1 unknown */
size_t dg_dtype_size(dg_dtype t);
int64_t dg_shape_numel(const dg_shape *s);       /* -1 if any dim unknown;
                                                    INT64_MAX if it overflows */

/* Allocate a tensor (data zeroed); NULL if memory runs out. */
dg_tensor *dg_tensor_new(dg_dtype t, const dg_shape *s);
void dg_tensor_free(dg_tensor *t);

/* ---- options: every command-line knob the library honours -------------- */

typedef struct dg_feed_arg {
    const char *name; /* Placeholder */
    const char *file; /* .npy or .csv */
} dg_feed_arg;

/* An OpenCL program being built from source (not found in the on-disk
 * cache), or clBLAST compiling its kernels on first use: the library says
 * when it starts and ends so that the caller can tell a user why the first
 * run is slow.  Called from whichever thread builds (a worker), so the
 * callback must be thread-safe and quick. */
typedef struct dg_build_event {
    int begin;             /* 1 = a build starts, 0 = it has ended */
    const char *device;    /* OpenCL device name */
    const char *what;      /* kernel file ("elementwise") or "clBLAST" */
    const char *cache_dir; /* where built programs are kept */
    /* end events: everything the OpenCL implementation printed on the
     * process's stderr while it built (captured: the library keeps it off
     * the terminal) and the program's build log, "" when silent; NULL on
     * begin events.  A failed build's output is in the error instead. */
    const char *output;
} dg_build_event;
typedef void (*dg_build_fn)(const dg_build_event *e, void *user);

typedef struct dg_options {
    int log_device_placement;     /* CLI prints the log; kept for symmetry */
    int allow_soft_placement;     /* -1 = as the graph says, else 0/1 */
    int colocate;                 /* -1 = as the graph says, else 0/1 */
    const char *device_scope;     /* --device, NULL if none */
    const char *placement_file;   /* --placement, NULL if none */
    const char **fetch;           /* --fetch names, NULL = graph's */
    int n_fetch;
    const dg_feed_arg *feeds;     /* --feed */
    int n_feeds;
    int64_t steps;                /* -1 = graph's default */
    int64_t repeat;               /* run: >= 1 */
    int inter_op_threads;         /* 0 = cores */
    int intra_op_threads;         /* 0 = cores */
    const char *opencl_devices;   /* "gpu" (default), "all", "none" */
    const char *visible_devices;  /* NULL = all */
    int virtual_gpus;             /* 1 = no split */
    double gpu_memory_fraction;   /* 0 < f <= 1; 1 default */
    int allow_growth;             /* 1 default */
    int assume_gpus;              /* -1 = discover real devices */
    uint64_t seed;
    const char *trace_path;       /* write a Chrome trace, NULL = none */
    const char *checkpoint_dir;   /* --checkpoint, NULL = graph's */
    int restore;                  /* --restore */
    int train_mode;               /* profile --train, train command */
    int no_fusion;                /* --no-fusion: no fusion pass (0 = fuse
                                     MatMul+BiasAdd(+Relu); docs/decisions.md) */
    const struct dg_cluster *cluster; /* --cluster (caller-owned), NULL =
                                     the graph's "cluster" */
    /* Stop between steps: when non-NULL and *stop becomes non-zero (a
     * signal handler sets it), dg_session_train and dg_session_run finish
     * the step in progress and return early (dg_session_stopped). */
    volatile sig_atomic_t *stop;
    dg_build_fn on_build;         /* OpenCL build notices, NULL = none */
    void *on_build_user;
} dg_options;

/* Fill `o` with the defaults SPEC section 1 gives. */
void dg_options_init(dg_options *o);

/* ---- graphs ------------------------------------------------------------ */

typedef struct dg_graph dg_graph;

/* Parse and validate a graph (SPEC section 2).  `path` names the file in
 * messages and resolves relative feed paths; when `text` is non-NULL it is
 * the file's content (used for "-" = stdin), otherwise the file is read.
 * Returns NULL and fills `err` (DG_E_GRAPH, DG_E_IO, DG_E_NOMEM). */
dg_graph *dg_graph_load(const char *path, const char *text, size_t len,
                        dg_error *err);
/* dg_graph_load, choosing a SavedModel's signature (issue 24): `signature`
 * is --signature KEY (NULL: "serving_default"; a graph that is not a
 * SavedModel ignores it).  GRAPH may be a SavedModel directory. */
dg_graph *dg_graph_load_signature(const char *path, const char *text,
                                  size_t len, const char *signature,
                                  dg_error *err);
void dg_graph_free(dg_graph *g);

/* ---- clusters (SPEC 8.1) ------------------------------------------------ */

/* A cluster: jobs in order, each with its task count (TF's ClusterSpec with
 * counts instead of addresses).  Tasks in job order, then task order, are
 * the MPI ranks: rank 0 is the first job's task 0. */
typedef struct dg_cluster dg_cluster;

#define DG_CLUSTER_MAX_TASKS 4096 /* tasks per job and in all */

/* Parse --cluster text "JOB=N[,JOB=N...]".  DG_E_USAGE with a one-line
 * reason ("--cluster: ...") on bad text, job names, counts or duplicates. */
dg_status dg_cluster_parse(const char *text, dg_cluster **out, dg_error *err);
void dg_cluster_free(dg_cluster *c);
int dg_cluster_job_count(const dg_cluster *c);
const char *dg_cluster_job_name(const dg_cluster *c, int job);
int dg_cluster_job_tasks(const dg_cluster *c, int job);
/* Number of tasks in all jobs (= the MPI processes the cluster needs). */
int dg_cluster_task_count(const dg_cluster *c);
/* The job index and task of a rank; -1 if rank is out of range. */
int dg_cluster_task_of(const dg_cluster *c, int rank, int *task);
/* The rank of (job name, task); -1 if the cluster has no such task. */
int dg_cluster_rank_of(const dg_cluster *c, const char *job, int task);
/* The chief's rank (SPEC 8.2): task 0 of job "chief" if present, else of
 * "worker", else of the first job. */
int dg_cluster_chief(const dg_cluster *c);
/* Canonical text "ps=2,worker=2" into buf. */
void dg_cluster_str(const dg_cluster *c, char *buf, size_t n);

/* The cluster `g` runs as: o->cluster when set, else the graph's
 * "cluster", else NULL (no cluster: one process, /job:localhost). */
const dg_cluster *dg_graph_cluster(const dg_graph *g, const dg_options *o);

/* 1 when a device request of g (nodes, placement rules) or o->device_scope
 * names a GPU (or a device id of any type), so that judging the placement
 * needs the real device list; 0 when CPU:0 alone gives the same verdict
 * (every op has a CPU kernel, SPEC 4.7): `check` then touches no device
 * backend. */
int dg_graph_names_gpu(const dg_graph *g, const dg_options *o);

/* Join the MPI job that runs cluster c as one of its tasks (SPEC 8.1):
 * MPI_Init_thread, then the check that the job has exactly as many
 * processes as c has tasks; *rank receives this process's rank.  Outside
 * an MPI launcher, or in a dgrun built without MPI, DG_E_USAGE "this graph
 * declares a cluster of N tasks (...): start it with mpirun -np N"; with
 * the wrong process count DG_E_USAGE naming both counts (known to every
 * rank: dg_cluster_failed_together).  A second call returns the rank. */
dg_status dg_cluster_join(const dg_cluster *c, int *rank, dg_error *err);
/* 1 when this process was started by a parallel launcher (its environment
 * says so: mpirun, a PMI/PMIx launcher such as srun --mpi=pmi2, or srun of
 * more than one task); 0 for a plain or single srun'd process. */
int dg_cluster_launched(void);
/* This process's rank in the joined cluster, -1 when it joined none. */
int dg_cluster_rank(void);
/* "/job:worker/task:1" of this process, "" when it joined no cluster. */
const char *dg_cluster_task_name(void);
typedef struct dg_device_list dg_device_list;
/* Replace *devs, this process's devices, by the cluster-wide list (SPEC
 * 8.2) made from every rank's devices (exchanged).  Collective. */
dg_status dg_cluster_exchange_devices(const dg_cluster *c,
                                      dg_device_list **devs, dg_error *err);
typedef struct dg_program dg_program;
/* Compare a hash of the compiled program and the options that shape a run
 * across the ranks (collective): DG_E_USAGE naming the first rank that
 * differs from rank 0 (different files or options), on every rank. */
dg_status dg_cluster_check_program(const dg_program *p,
                                   const dg_options *o,
                                   dg_error *err);
/* Non-zero when the last failure of dg_cluster_join or
 * dg_cluster_check_program is the same on every rank: 1 on rank 0, which
 * reports it, 2 on the others, which stay silent; every rank then leaves
 * (dg_cluster_leave) with its exit code.  Any other error after joining
 * ends the job with dg_cluster_abort. */
int dg_cluster_failed_together(void);
/* End every process of the job with exit code `code` (MPI_Abort); returns
 * only when this process joined no cluster. */
void dg_cluster_abort(int code);
/* Leave the job (MPI_Finalize); nothing when this process joined none. */
void dg_cluster_leave(void);

/* ---- devices ----------------------------------------------------------- */

typedef enum dg_devtype { DG_DEV_CPU = 0, DG_DEV_GPU = 1 } dg_devtype;

/* What a kind of device can run: made by the runtime's backends from their
 * kernel registries, carried by every device so that placement (which never
 * touches hardware) knows it; `dgrun ops` prints it. */
typedef struct dg_kernel_set dg_kernel_set;

typedef struct dg_device_info {
    char name[96];       /* canonical /job:localhost/replica:0/task:0/device:GPU:0 */
    dg_devtype type;
    int index;           /* k of GPU:k */
    int fp64;            /* device reports double support */
    char cl_name[128];   /* OpenCL device name ("" for CPU:0) */
    char platform[128];  /* OpenCL platform name */
    char cl_version[64]; /* "OpenCL 3.0 PoCL ..." */
    uint64_t mem_bytes;  /* global memory (after virtual split) */
    int physical;        /* index of the physical OpenCL device */
    const dg_kernel_set *kernels; /* its backend's kernels (never NULL in
                                     a list the library made) */
    /* owner of the device in a cluster (SPEC 8.2); job "" means localhost
     * (no cluster), where task and rank are 0 */
    char job[64];
    int task;
    int rank;            /* MPI rank of (job, task) */
} dg_device_info;

typedef struct dg_device_list dg_device_list;

/* Enumerate CPU:0 and the OpenCL devices the options select (SPEC 3). */
dg_status dg_devices_discover(const dg_options *o, dg_device_list **out,
                              dg_error *err);
/* CPU:0 plus n_gpus GPUs that exist only on paper (--assume-gpus). */
dg_status dg_devices_assume(int n_gpus, dg_device_list **out, dg_error *err);
/* Release what the device backends keep for the whole process (OpenCL
 * contexts, compiled programs, clBLAST's program cache), in an order the
 * device libraries accept.  Call it once every session is freed, before
 * the process exits (dgrun does, on every path); the libraries' own
 * exit-time destructors otherwise run in an order some OpenCL
 * implementations do not survive.  Devices may be opened again after. */
void dg_shutdown(void);
int dg_devices_count(const dg_device_list *l);
const dg_device_info *dg_devices_get(const dg_device_list *l, int i);
void dg_devices_free(dg_device_list *l);
/* The cluster-wide device list (SPEC 8.2): for each task of c in rank
 * order, a copy of per_task[rank]'s devices renamed
 * /job:J/replica:0/task:T/device:TYPE:I (job, task, rank filled).  Outside
 * MPI every entry of per_task is this machine's list; under MPI, the lists
 * the ranks exchanged.  DG_E_USAGE beyond 65536 devices in all. */
dg_status dg_devices_for_cluster(const dg_cluster *c,
                                 const dg_device_list *const *per_task,
                                 dg_device_list **out, dg_error *err);

/* ---- compilation ------------------------------------------------------- */

typedef struct dg_program dg_program;

typedef enum dg_reason {
    DG_REASON_EXPLICIT = 0,
    DG_REASON_RULE,
    DG_REASON_COLOCATION,
    DG_REASON_DEFAULT,
    DG_REASON_CONSUMER,
    DG_REASON_SOFT
} dg_reason;
/* The reason's name in placement logs and JSON: "explicit", "rule",
 * "colocation", "default", "consumer", "soft". */
const char *dg_reason_name(dg_reason r);

/* Compile `g` for the devices in `devs`: gradients, training, placement,
 * transfers.  `g` is consumed into the program (do not free it after a
 * successful call; on failure the caller still owns it). */
dg_program *dg_compile(dg_graph *g, const dg_options *o,
                       const dg_device_list *devs, dg_error *err);
void dg_program_free(dg_program *p);

typedef struct dg_node_info {
    const char *name;
    const char *op;
    const char *device;    /* canonical full name */
    const char *requested; /* merged request as written, "" if none */
    dg_reason reason;
    int generated;         /* created by the compiler */
} dg_node_info;

/* Nodes in log order (graph file order, then generated order). */
int dg_program_node_count(const dg_program *p);
void dg_program_node(const dg_program *p, int i, dg_node_info *out);

typedef struct dg_transfer_info {
    const char *from;       /* producer "node" or "node:k" */
    const char *to;         /* first consumer node on dst_device */
    const char *src_device;
    const char *dst_device;
    int64_t bytes;          /* -1 when the shape is not known statically */
} dg_transfer_info;
int dg_program_transfer_count(const dg_program *p);
void dg_program_transfer(const dg_program *p, int i, dg_transfer_info *out);
const dg_device_list *dg_program_devices(const dg_program *p);
/* Number of fetches the program resolved (options' or graph's); 0 when
 * there is nothing to fetch (a GraphDef has no fetch list). */
int dg_program_fetch_count(const dg_program *p);
/* The cluster the program was compiled for (NULL without one). */
const dg_cluster *dg_program_cluster(const dg_program *p);
/* The graph's train.log_every (default 100): how often a plain-text
 * progress log prints a line. */
int64_t dg_program_log_every(const dg_program *p);

/* Render the placement.  Returns a malloc'd NUL-terminated string (free with
 * free()) or NULL when memory runs out.  format: "text", "json", "dot". */
char *dg_program_render(const dg_program *p, const char *format);

/* The chain of placement decisions for one node (place --explain), malloc'd;
 * NULL with err filled if the node does not exist. */
char *dg_program_explain(const dg_program *p, const char *node, dg_error *err);

/* Compare the placement with a golden file (SPEC 6).  On differences
 * returns DG_E_MISMATCH and sets *report to malloc'd lines
 * "<node>: expected <dev>, placed on <dev>\n".  Errors in the golden file are
 * DG_E_GRAPH/DG_E_IO naming it. */
dg_status dg_program_expect(const dg_program *p, const char *golden_path,
                            char **report, dg_error *err);

/* ---- sessions: running ------------------------------------------------- */

typedef struct dg_session dg_session;

/* Create the runtime for a compiled program: open devices, build kernels,
 * initialise Variables (seeded), load --feed files.  The program must
 * outlive the session. */
dg_session *dg_session_new(const dg_program *p, const dg_options *o,
                           dg_error *err);
void dg_session_free(dg_session *s);

typedef struct dg_fetch_result {
    const char *name;  /* as requested: "c", "g/a", "x:1" */
    dg_tensor *value;  /* owned by the result array */
} dg_fetch_result;

/* Run the fetches (options' or graph's) `repeat` times; return the last
 * results in *out (free with dg_fetch_results_free).  When options.stop is
 * raised it returns DG_OK after the run in progress with *out NULL and
 * *n_out 0 (dg_session_stopped tells how many runs completed). */
dg_status dg_session_run(dg_session *s, dg_fetch_result **out, int *n_out,
                         dg_error *err);
void dg_fetch_results_free(dg_fetch_result *r, int n);

/* Progress of training, reported through a callback so the CLI decides how
 * to print it. */
typedef struct dg_train_progress {
    int64_t step;       /* 1-based step just finished */
    int64_t steps;      /* total */
    double loss;
    double elapsed_s;
    /* a replicated graph (SPEC 8.4): rows per step over all replicas and
     * the replica count (0 and 0 otherwise) */
    int64_t examples;
    int replicas;
} dg_train_progress;
typedef void (*dg_progress_fn)(const dg_train_progress *p, void *user);

typedef struct dg_train_result {
    int64_t steps;      /* steps this call ran */
    int64_t last_step;  /* global step reached (restored steps included) */
    int64_t total;      /* global step the run was going to reach */
    int stopped;        /* options.stop ended the loop early: no eval ran */
    char *checkpoint;   /* checkpoint file written last, NULL if none */
    double loss;
    dg_fetch_result *variables; /* trainable and non-trainable Variables */
    int n_variables;
    dg_fetch_result *eval;      /* eval fetches, NULL if none */
    int n_eval;
    /* a replicated graph (SPEC 8.4): W (0 otherwise); loss is the mean of
     * the replicas' losses and variables are replica 0's under their
     * original names; with allreduce, replica_diff is the largest
     * |difference| of a Variable between replica 0 and another */
    int replicas;
    double replica_diff;
} dg_train_result;

/* Run the graph's train section.  progress may be NULL; it is called after
 * every step.  When options.stop is raised the loop ends after the step in
 * progress, saves a checkpoint when one is configured, skips eval and
 * returns DG_OK with out->stopped set. */
dg_status dg_session_train(dg_session *s, dg_progress_fn progress, void *user,
                           dg_train_result *out, dg_error *err);
void dg_train_result_free(dg_train_result *r);

/* Steps (train) or runs (run) the last call completed when options.stop
 * ended it early; -1 when it ran to the end. */
int64_t dg_session_stopped(const dg_session *s);

/* Restore the Variables a checkpoint holds (docs/checkpoints.md) before
 * running: inference with trained weights.  `path` is a TensorFlow
 * checkpoint prefix (or its .index), a directory whose `checkpoint` state
 * file names one, or a file in dgrun's earlier format.  DG_E_IO when it
 * cannot be read, DG_E_GRAPH when it is damaged or does not fit the graph;
 * *step (may be NULL) gets the step it was saved at. */
dg_status dg_session_restore(dg_session *s, const char *path, int64_t *step,
                             dg_error *err);

/* Profile summary (SPEC 7) of everything run so far in the session, as
 * malloc'd text; NULL if tracing was off. */
char *dg_session_profile_summary(const dg_session *s);

/* Peak bytes allocated on device `device` (index into the program's device
 * list) since the session started; 0 for a bad index.  (run --json) */
int64_t dg_session_peak_bytes(const dg_session *s, int device);

/* Finish and write the trace (options.trace_path) atomically. */
dg_status dg_session_write_trace(dg_session *s, dg_error *err);

/* ---- ops listing --------------------------------------------------------- */

/* `dgrun ops` as malloc'd text: op, dtypes, devices with kernels. */
char *dg_ops_render(void);
/* The same as "text", "json" (one object: {"ops": [{"name", "alias",
 * "dtypes", "cpu", "gpu", "min_inputs", "max_inputs", "attrs", "doc"}]}) or
 * "markdown" (the table of docs/graphdef.md); NULL for another format or
 * out of memory. */
char *dg_ops_render_as(const char *format);

#ifdef __cplusplus
}
#endif
#endif /* DGRUN_H */
