/*
 * exec_frames.h -- the executor with frames (issue 11): runs the plans of
 * graphs with control flow (Enter/Exit/Switch/Merge/NextIteration/LoopCond,
 * TensorArrays, stacks) as TensorFlow's executor does: frames, iterations
 * counted per frame (up to parallel_iterations of them at once), dead
 * tensors.  The static executor (executor.c) keeps graphs without control
 * flow; dgr_runner_new picks this one when the plan has a control-flow op
 * (the hooks in exec_runner.c and executor.c are marked "issue 11").
 *
 * Private to runtime/exec/.
 */
#ifndef DGR_EXEC_FRAMES_H
#define DGR_EXEC_FRAMES_H

#include "exec_priv.h"

typedef struct dgr_fx dgr_fx;

/* Does plan p (of graph g) hold a control-flow op? */
int dgr_fx_wanted(const dgc_graph *g, const dgc_plan *p);
/* The frame executor's state for runner r (whose plan is built): static
 * frames, edges, per-worker scratch.  NULL + err (DG_E_GRAPH for a graph
 * whose frames are inconsistent, naming the node). */
dgr_fx *dgr_fx_new(dgr_runner *r, dg_error *err);
void dgr_fx_free(dgr_fx *x);
/* dgr_runner_run for a runner with frames. */
dg_status dgr_fx_run(dgr_runner *r, int64_t step, dg_tensor **fetched,
                     dg_error *err);
/* The pools' task for a runner with frames: `item` is a device whose ready
 * queue has work. */
void dgr_fx_task(dgr_runner *r, int32_t item, int lane);

/* ---- resources (exec_resources.c): TensorArrays and stacks ------------- */

typedef struct dgr_fx_res dgr_fx_res;
/* An empty per-run resource table; NULL on nomem. */
dgr_fx_res *dgr_fx_res_new(void);
/* Release every resource (and the tensors they hold). */
void dgr_fx_res_free(dgr_fx_res *t);
/* Run resource op n (DGC_OP_RESOURCE) on host device dev: in[0..n_in),
 * out[0..n_out) (filled; buffers on dev).  Thread-safe. */
dg_status dgr_fx_res_run(dgr_fx_res *t, dgr_device *dev, const dgc_node *n,
                         const dgr_value *in, int n_in, dgr_value *out,
                         int n_out, dg_error *err);

#endif
