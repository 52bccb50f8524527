/*
 * session.h -- the runtime's internal session API (behind dg_session_*).
 *
 * A session owns the devices of a compiled program (opened through their
 * backends), the executor's world (exec/exec.h): Variables' storage, fed
 * Placeholder values, (optionally) a trace recorder, and the environment
 * kernels get (seeds, Print).  A runner is a plan bound to the session's
 * world, ready to execute many times: `run` fetches, a training step, an
 * eval pass each get one.
 */
#ifndef DGR_SESSION_H
#define DGR_SESSION_H

#include "exec.h"
#include "program.h"

typedef struct dgr_session dgr_session;

/* dg_session is dgr_session. */
struct dg_session;

/* Bind a plan for (fetch, targets) to the session's world (dgr_runner_new
 * on it).  NULL + err on failure. */
dgr_runner *dgr_session_runner(dgr_session *s, const dgc_ref *fetch,
                               int n_fetch, const int32_t *targets,
                               int n_targets, dg_error *err);

/* Feed Placeholder node_id with a host tensor (copied to its device); the
 * value stays until replaced.  DG_E_GRAPH if dtype/shape do not fit. */
dg_status dgr_session_set_feed(dgr_session *s, int32_t node_id,
                               const dg_tensor *value, dg_error *err);
/* Copy a Variable's current value to a new host tensor. */
dg_status dgr_session_read_variable(dgr_session *s, int32_t node_id,
                                    dg_tensor **out, dg_error *err);
/* Overwrite a Variable's value (checkpoint restore). */
dg_status dgr_session_write_variable(dgr_session *s, int32_t node_id,
                                     const dg_tensor *value, dg_error *err);

/* Accessors: the compiled program, the options the session was made with,
 * its trace recorder (NULL when not tracing), device `id` of the program's
 * device list and the executor's world. */
const dg_program *dgr_session_program(const dgr_session *s);
const dg_options *dgr_session_options(const dgr_session *s);
dgr_trace *dgr_session_trace(dgr_session *s);
dgr_device *dgr_session_device(dgr_session *s, int id);
dgr_exec *dgr_session_exec(dgr_session *s);

/* Whether the caller raised options.stop (checked between steps), and the
 * record of an early end that dg_session_stopped reports (-1 = none). */
int dgr_session_stop_requested(const dgr_session *s);
void dgr_session_set_stopped(dgr_session *s, int64_t steps);

/* ---- as one rank of a cluster (session_cluster.c; SPEC 8.3) -------------
 * Collective: every rank calls them in the same order.  Without a cluster
 * they are the local operations. */
/* Whether node_id runs on this rank (always without a cluster). */
int dgr_session_is_local(dgr_session *s, int32_t node_id);
/* This process's rank (0 without a cluster). */
int dgr_session_rank(dgr_session *s);
/* A Variable's value on rank 0 (*out NULL on the other ranks). */
dg_status dgr_session_gather_variable(dgr_session *s, int32_t node_id,
                                      dg_tensor **out, dg_error *err);
/* Rank 0's `value` (ignored elsewhere) into the Variable, on its rank. */
dg_status dgr_session_scatter_variable(dgr_session *s, int32_t node_id,
                                       const dg_tensor *value, dg_error *err);
/* v[0..n) of rank 0 to every rank. */
dg_status dgr_session_bcast(dgr_session *s, int64_t *v, int n,
                            dg_error *err);
/* Rank 0: each rank's clock minus rank 0's, in ns (*out dg_malloc'd,
 * NULL on other ranks and without a cluster).  Collective. */
dg_status dgr_session_clock_offsets(dgr_session *s, int64_t **out,
                                    dg_error *err);
/* Write one trace of every rank's events to path on rank 0 (the others
 * send theirs): times on rank 0's clock (origin: each rank's trace origin,
 * offs from dgr_session_clock_offsets), flows between the two ends of each
 * transfer between tasks, otherData.clock_offsets_ns.  Collective. */
dg_status dgr_session_cluster_trace(dgr_session *s, dgr_trace *tr,
                                    uint64_t origin, const int64_t *offs,
                                    const char *path, dg_error *err);
/* The profile summaries of every task on rank 0, each headed by its task
 * ("== /job:worker/task:1 =="); takes `mine` (this rank's, malloc'd) and
 * returns malloc'd text on rank 0, NULL elsewhere.  Collective. */
char *dgr_session_cluster_summary(dgr_session *s, char *mine);

/* ---- a replicated graph (session_replica.c; SPEC 8.4) -------------------
 * Without "replicate" these are the plain operations of one replica. */
/* W, the replica count (1 without "replicate"). */
int dgr_replica_count(const dgc_graph *g);
/* This rank's replica index: its task in replicate.job (0 in one process
 * or without replication, -1 on a rank that runs no replica). */
int dgr_session_replica(dgr_session *s);
/* Replica k's copy of node id of the single-replica graph (id itself for
 * shared nodes, replica 0, or nodes the pass generated). */
int32_t dgr_replica_node(const dgc_graph *g, int32_t id, int k);
/* dgc_graph_parse_ref, falling back to replica 0's "replica_0/<name>",
 * then replica k's copy.  0 ok, -1 unknown. */
int dgr_replica_parse_ref(const dgc_graph *g, const char *name, int k,
                          dgc_ref *out);
/* Node id's name as the single-replica graph calls it ("replica_k/"
 * stripped); *copy (may be NULL) = 1 for replica k >= 1's copies. */
const char *dgr_replica_orig_name(const dgc_graph *g, int32_t id, int *copy);
/* The feeds f[0..n) for every replica's copy of each Placeholder (all) or
 * replica 0's (!all): dg_malloc'd, *n_out entries; names borrowed. */
dgc_feed *dgr_replica_feeds(const dgc_graph *g, const dgc_feed *f, int n,
                            int all, int *n_out);
/* Start the collective runtime (every rank, MPI collective) and set
 * env->collective; nothing for one replica or one process. */
dg_status dgr_session_replica_start(dgr_session *s, dgr_kenv *env,
                                    dg_error *err);
void dgr_session_replica_stop(dgr_session *s);
/* allreduce: the largest |difference| between replica 0's Variables and
 * the others' (on rank 0; 0 elsewhere and for other graphs).
 * Collective. */
dg_status dgr_session_replica_diff(dgr_session *s, double *diff,
                                   dg_error *err);
/* ---- replicated graphs, strategy ps (session_ps.c; SPEC 8.4) ------------ */
/* The node `name` means on replica k: itself if it exists, else
 * replica_<k>/name (k < 0: 0); -1 if neither exists. */
int32_t dgr_session_replica_node(dgr_session *s, const char *name, int k);
/* dgc_graph_parse_ref of `name`, else of replica_0/name; -1 if neither. */
int dgr_session_replica_ref(dgr_session *s, const char *name, dgc_ref *out);
/* Whether training runs asynchronously ("strategy": "ps", "sync": false,
 * under MPI): dg_session_train then calls dgr_session_train_async. */
int dgr_session_ps_async(dgr_session *s);
/* Feed the Placeholders of (this rank's replica's) training step `step`. */
typedef dg_status (*dgr_ps_feed_fn)(void *user, int64_t step, dg_error *err);
/* What dgr_session_train_async runs: steps [first, first+steps) of a
 * training of `total` steps per replica that started at t0 (dg_now_ns),
 * feed called before each step, progress (may be NULL) on rank 0. */
typedef struct dgr_async_args {
    int64_t first, steps, total;
    uint64_t t0;
    dgr_ps_feed_fn feed;
    void *feed_user;
    dg_progress_fn progress;
    void *user;
} dgr_async_args;
/* Asynchronous ps training on this rank (collective; SPEC 8.4): a worker
 * runs its replica's loss and train op a->steps times at its own pace
 * (feeding before each) and sends each loss to rank 0; every other task
 * serves each replica's reads and updates on it with a thread per
 * replica.  Rank 0 calls progress for every replica step (global steps:
 * first*W + n of total*W) and gets replica 0's last loss in *loss; every
 * rank returns when all replicas finished (then the ranks are in lockstep
 * again).  An error returns at once: the caller ends the job. */
dg_status dgr_session_train_async(dgr_session *s, const dgr_async_args *aa,
                                  double *loss, dg_error *err);

#endif
