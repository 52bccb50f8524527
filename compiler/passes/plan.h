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

typedef enum dgc_step_kind {
    DGC_STEP_OP = 0,
    DGC_STEP_TRANSFER = 1,
    /* only in a plan localized to one rank of a cluster (SPEC 8.3): */
    DGC_STEP_SEND = 2, /* reads in_slots[in_off] (none for a control edge)
                          and sends it to rank `peer` as edge `tag` */
    DGC_STEP_RECV = 3  /* receives edge `tag` from rank `peer` into
                          out_slot (n_out 0 for a control edge) */
} dgc_step_kind;

typedef struct dgc_step {
    uint8_t kind;       /* dgc_step_kind */
    int32_t node;       /* OP: the IR node; TRANSFER: the producer node */
    int32_t device;     /* where it runs; TRANSFER: destination device */
    int32_t src_device; /* TRANSFER: source device; OP: same as device;
                           SEND/RECV: the device at the other end */
    int32_t in_off, n_in;     /* into plan.in_slots */
    int32_t out_slot, n_out;  /* produced slots (TRANSFER: 1) */
    int32_t succ_off, n_succ; /* into plan.succ: steps that wait on this one */
    int32_t pending;          /* initial count of predecessors (data+control) */
    int32_t peer, tag;        /* SEND/RECV: the other rank, the edge */
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
    int32_t n_edges;      /* localized: cross-task edges of the global plan
                             (tags 0 .. n_edges-1) */
} dgc_plan;

/* Build the plan computing `fetch` (output refs) and running `targets`
 * (node ids run for their effect, e.g. a train op), for a placed graph.
 * DG_E_GRAPH if a fetch cannot be computed; DG_E_NOMEM. */
dgc_plan *dgc_plan_build(const dgc_graph *g, const dg_device_list *devs,
                         const dgc_ref *fetch, int n_fetch,
                         const int32_t *targets, int n_targets,
                         dg_error *err);
void dgc_plan_free(dgc_plan *p);

/* The part of global plan p that rank `rank` of a cluster runs (SPEC 8.3),
 * as a new plan: its own steps (devices whose rank is `rank`), every
 * transfer between two ranks split into a SEND on the source rank (reading
 * the producer's slot) and a RECV on the destination rank (producing the
 * transfer's slot), and every other edge between two ranks (control) into
 * a zero-byte SEND/RECV pair.  Pairs are numbered by `tag`, the same on
 * every rank: transfers between ranks in step order, then the control
 * edges in (from, to) order.  Slots keep their global numbers; use counts
 * count this rank's reads and the fetches whose slot is on this rank;
 * pending counts and roots are recomputed (RECVs are roots).  NULL on
 * nomem. */
dgc_plan *dgc_plan_localize(const dgc_plan *p, const dg_device_list *devs,
                            int rank, dg_error *err);
/* Deduplicate the (from, to) pairs of edges[0 .. 2*n) (sorted in place)
 * and fill p's succ lists, pending counts and roots.  0 ok, -1 nomem. */
int dgc_plan_set_edges(dgc_plan *p, int32_t *edges, int32_t n);

#endif
