/*
 * plan.h -- the executable plan: the last thing the compiler makes and the
 * only thing the executor reads.
 *
 * A plan covers the subgraph needed for a set of fetches and targets (like a
 * TF Session.run call): the ops they depend on through data and control
 * edges, plus one transfer step per (producer output, consumer device).
 * Everything the executor needs on its hot path is precomputed here:
 * successor arrays, initial pending counts, and per-value use counts for
 * freeing buffers after their last consumer (liveness).
 *
 * Values live in slots: step s produces slots out_slot .. out_slot+n_out-1.
 * A step reads the slots listed in in_slots[in_off .. in_off+n_in).
 */
#ifndef DGC_PLAN_H
#define DGC_PLAN_H

#include "ir.h"
#include "devices.h"

typedef enum dgc_step_kind { DGC_STEP_OP = 0, DGC_STEP_TRANSFER = 1 } dgc_step_kind;

typedef struct dgc_step {
    uint8_t kind;       /* dgc_step_kind */
    int32_t node;       /* OP: the IR node; TRANSFER: the producer node */
    int32_t device;     /* where it runs; TRANSFER: destination device */
    int32_t src_device; /* TRANSFER: source device; OP: same as device */
    int32_t in_off, n_in;     /* into plan.in_slots */
    int32_t out_slot, n_out;  /* produced slots (TRANSFER: 1) */
    int32_t succ_off, n_succ; /* into plan.succ: steps that wait on this one */
    int32_t pending;          /* initial count of predecessors (data+control) */
} dgc_step;

typedef struct dgc_slot {
    int32_t step;       /* producing step */
    int32_t device;     /* device holding the value */
    dgc_ttype type;     /* static type (dims may be -1) */
    int32_t uses;       /* reads by steps + fetches: buffer freed after the
                           last one (Variables' buffers are never freed) */
} dgc_slot;

typedef struct dgc_plan {
    dgc_step *steps;     int32_t n_steps; /* topological order */
    int32_t *in_slots;   int32_t n_in_slots;
    int32_t *succ;       int32_t n_succ;
    dgc_slot *slots;     int32_t n_slots;
    int32_t *roots;      int32_t n_roots;  /* steps with pending == 0 */
    int32_t *fetch_slots; int n_fetch;     /* slot of each fetch, in order */
    int n_devices;
} dgc_plan;

/* Build the plan computing `fetch` (output refs) and running `targets`
 * (node ids run for their effect, e.g. a train op), for a placed graph.
 * DG_E_GRAPH if a fetch cannot be computed; DG_E_NOMEM. */
dgc_plan *dgc_plan_build(const dgc_graph *g, const dg_device_list *devs,
                         const dgc_ref *fetch, int n_fetch,
                         const int32_t *targets, int n_targets,
                         dg_error *err);
void dgc_plan_free(dgc_plan *p);

#endif
