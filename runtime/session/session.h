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


#endif
