/*
 * infer_cflow.h -- shape and dtype inference of the control-flow ops
 * (issue 11: Enter/Exit/Switch/Merge/NextIteration/LoopCond, TensorArrays,
 * stacks) and the graph facts the passes need about loops: which edges are
 * a loop's back edges (NextIteration -> Merge), and whether a graph has
 * control flow at all.
 */
#ifndef DGC_INFER_CFLOW_H
#define DGC_INFER_CFLOW_H

#include "infer.h"

/* The dtype resource handles have (an int64 scalar naming a per-run
 * TensorArray or stack). */
#define DGC_HANDLE_DTYPE DG_I64

int dgc_infer_switch(DGC_INFER_ARGS);     /* (data, pred) -> data, data */
int dgc_infer_merge(DGC_INFER_ARGS);      /* first typed input, int32 index */
int dgc_infer_loop_cond(DGC_INFER_ARGS);  /* bool scalar */
int dgc_infer_ta(DGC_INFER_ARGS);         /* handle, float32 flow */
int dgc_infer_ta_read(DGC_INFER_ARGS);    /* dtype, output_shape or
                                             element_shape */
int dgc_infer_ta_gather(DGC_INFER_ARGS);  /* [n] + element_shape */
int dgc_infer_ta_flow(DGC_INFER_ARGS);    /* float32 scalar flow */
int dgc_infer_ta_size(DGC_INFER_ARGS);    /* int32 scalar */
int dgc_infer_ta_grad(DGC_INFER_ARGS);    /* handle, flow */
int dgc_infer_stack(DGC_INFER_ARGS);      /* handle */
int dgc_infer_stack_push(DGC_INFER_ARGS); /* type of elem */
int dgc_infer_stack_pop(DGC_INFER_ARGS);  /* elem_type, output_shape or
                                             element_shape */

/* dgc_cflow_back_edge (a loop's back edge) is the op table's: ops.h. */

#endif
