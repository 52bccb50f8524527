/*
 * plan_local.c -- dgc_plan_localize: the part of a cluster's global plan
 * one rank runs (SPEC 8.3).  Every rank builds the same global plan from
 * the same program and keeps its own steps; an edge between two ranks
 * becomes a SEND on one and a RECV on the other, numbered the same way on
 * every rank so that the pair meets (the edge number is the message tag).
 */
#include "plan.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <string.h>

static int dev_rank(const dg_device_list *devs, int32_t d)
{
    return devs && d >= 0 && d < devs->n ? devs->devs[d].rank : 0;
}

/* The rank running the side of step s that edges leave from (out = 1) or
 * arrive at (out = 0): a transfer reads on its source's rank and produces
 * on its destination's. */
static int side_rank(const dgc_plan *p, const dg_device_list *devs,
                     int32_t s, int out)
{
    const dgc_step *st = &p->steps[s];
    if (st->kind == DGC_STEP_TRANSFER && !out)
        return dev_rank(devs, st->src_device);
    return dev_rank(devs, st->device);
}

typedef struct lbuild {
    dgc_plan *q;
    int32_t cap_steps;
    int32_t *edges;
    int32_t n_edges, cap_edges;
    int32_t *in;
    int32_t n_in, cap_in;
} lbuild;

static int32_t add_step(lbuild *b, const dgc_step *proto)
{
    dgc_plan *q = b->q;
    if (q->n_steps == b->cap_steps) {
        dgc_step *ns = dg_grow(q->steps, &b->cap_steps, q->n_steps + 1,
                               sizeof *ns, 64);
        if (!ns)
            return -1;
        q->steps = ns;
    }
    q->steps[q->n_steps] = *proto;
    return q->n_steps++;
}

static int add_edge(lbuild *b, int32_t from, int32_t to)
{
    if (b->n_edges + 2 > b->cap_edges) {
        int32_t *ne = dg_grow(b->edges, &b->cap_edges, b->n_edges + 2,
                              sizeof *ne, 128);
        if (!ne)
            return -1;
        b->edges = ne;
    }
    b->edges[b->n_edges++] = from;
    b->edges[b->n_edges++] = to;
    return 0;
}

static int add_in(lbuild *b, int32_t slot)
{
    if (b->n_in == b->cap_in) {
        int32_t *ni = dg_grow(b->in, &b->cap_in, b->n_in + 1, sizeof *ni, 64);
        if (!ni)
            return -1;
        b->in = ni;
    }
    b->in[b->n_in++] = slot;
    return 0;
}

/* Copy step s's inputs into the local in_slots. */
static int copy_inputs(lbuild *b, const dgc_plan *p, dgc_step *st,
                       int32_t n)
{
    int32_t off = b->n_in;
    for (int32_t i = 0; i < n; i++)
        if (add_in(b, p->in_slots[st->in_off + i]))
            return -1;
    st->in_off = off;
    st->n_in = n;
    return 0;
}

dgc_plan *dgc_plan_localize(const dgc_plan *p, const dg_device_list *devs,
                            int rank, dg_error *err)
{
    lbuild b;
    memset(&b, 0, sizeof b);
    dgc_plan *q = dg_calloc(1, sizeof *q);
    /* global step -> local step (its side on this rank), -1 if none */
    int32_t *map = dg_malloc(sizeof *map * ((size_t)p->n_steps + 1));
    int32_t *tag = dg_malloc(sizeof *tag * ((size_t)p->n_steps + 1));
    if (!q || !map || !tag)
        goto nomem;
    b.q = q;
    q->n_devices = p->n_devices;
    /* edge numbers: transfers between ranks first, in step order */
    int32_t k = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dgc_step *st = &p->steps[s];
        int cross = st->kind == DGC_STEP_TRANSFER &&
                    dev_rank(devs, st->src_device) != dev_rank(devs, st->device);
        tag[s] = cross ? k++ : -1;
    }
    /* control RECVs first (roots), in edge order */
    int32_t ctrl_first = k;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dgc_step *st = &p->steps[s];
        for (int32_t e = 0; e < st->n_succ; e++) {
            int32_t t = p->succ[st->succ_off + e];
            int from = side_rank(p, devs, s, 1), to = side_rank(p, devs, t, 0);
            if (from == to)
                continue;
            int32_t id = k++;
            if (to != rank)
                continue;
            dgc_step r;
            memset(&r, 0, sizeof r);
            r.kind = DGC_STEP_RECV;
            r.node = st->node;
            r.device = p->steps[t].kind == DGC_STEP_TRANSFER
                           ? p->steps[t].src_device : p->steps[t].device;
            r.src_device = st->device;
            r.out_slot = -1;
            r.peer = from;
            r.tag = id;
            if (add_step(&b, &r) < 0)
                goto nomem;
        }
    }
    q->n_edges = k;
    int32_t n_ctrl_recv = q->n_steps;
    /* this rank's steps in global order */
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dgc_step *st = &p->steps[s];
        dgc_step l = *st;
        map[s] = -1;
        if (tag[s] >= 0) {
            int src = dev_rank(devs, st->src_device);
            int dst = dev_rank(devs, st->device);
            if (src == rank) {
                l.kind = DGC_STEP_SEND;
                l.device = st->src_device;
                l.src_device = st->device; /* the other end */
                l.n_out = 0;
                l.peer = dst;
                if (copy_inputs(&b, p, &l, st->n_in))
                    goto nomem;
            } else if (dst == rank) {
                l.kind = DGC_STEP_RECV;
                l.in_off = 0;
                l.n_in = 0;
                l.peer = src;
            } else {
                continue;
            }
            l.tag = tag[s];
        } else if (dev_rank(devs, st->device) != rank) {
            continue;
        } else if (copy_inputs(&b, p, &l, st->n_in)) {
            goto nomem;
        }
        if ((map[s] = add_step(&b, &l)) < 0)
            goto nomem;
    }
    /* edges: local ones, and control SENDs after their source */
    int32_t id = ctrl_first, next_recv = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dgc_step *st = &p->steps[s];
        for (int32_t e = 0; e < st->n_succ; e++) {
            int32_t t = p->succ[st->succ_off + e];
            int from = side_rank(p, devs, s, 1), to = side_rank(p, devs, t, 0);
            if (from == to) {
                if (from == rank && add_edge(&b, map[s], map[t]))
                    goto nomem;
                continue;
            }
            int32_t eid = id++;
            if (from == rank) {
                dgc_step x;
                memset(&x, 0, sizeof x);
                x.kind = DGC_STEP_SEND;
                x.node = st->node;
                x.device = st->device;
                x.src_device = p->steps[t].kind == DGC_STEP_TRANSFER
                                   ? p->steps[t].src_device
                                   : p->steps[t].device; /* other end */
                x.out_slot = -1;
                x.peer = to;
                x.tag = eid;
                int32_t ls = add_step(&b, &x);
                if (ls < 0 || add_edge(&b, map[s], ls))
                    goto nomem;
            } else if (to == rank) {
                if (add_edge(&b, next_recv++, map[t]))
                    goto nomem;
            }
        }
    }
    if (next_recv != n_ctrl_recv)
        goto nomem; /* cannot happen: both loops walk the same edges */
    q->in_slots = b.in ? b.in : dg_malloc(sizeof(int32_t));
    q->n_in_slots = b.n_in;
    b.in = NULL;
    if (!q->in_slots)
        goto nomem;
    /* slots: global numbering, this rank's uses */
    q->n_slots = p->n_slots;
    q->slots = dg_malloc(sizeof *q->slots * ((size_t)p->n_slots + 1));
    q->fetch_slots = dg_malloc(sizeof *q->fetch_slots * ((size_t)p->n_fetch + 1));
    if (!q->slots || !q->fetch_slots)
        goto nomem;
    memcpy(q->slots, p->slots, sizeof *q->slots * (size_t)p->n_slots);
    for (int32_t i = 0; i < q->n_slots; i++) {
        q->slots[i].uses = 0;
        q->slots[i].step = -1; /* produced on another rank */
    }
    for (int32_t s = 0; s < q->n_steps; s++) {
        const dgc_step *st = &q->steps[s];
        for (int32_t i = 0; i < st->n_in; i++)
            q->slots[q->in_slots[st->in_off + i]].uses++;
        if (st->out_slot >= 0)
            for (int32_t j = 0; j < st->n_out; j++)
                q->slots[st->out_slot + j].step = s;
    }
    q->n_fetch = p->n_fetch;
    for (int i = 0; i < p->n_fetch; i++) {
        int32_t sl = p->fetch_slots[i];
        q->fetch_slots[i] = sl;
        if (dev_rank(devs, p->slots[sl].device) == rank)
            q->slots[sl].uses++;
    }
    if (dgc_plan_set_edges(q, b.edges, b.n_edges / 2))
        goto nomem;
    dg_free(b.edges);
    dg_free(map);
    dg_free(tag);
    return q;
nomem:
    dg_err_nomem(err, "cluster plan");
    dg_free(b.edges);
    dg_free(b.in);
    dg_free(map);
    dg_free(tag);
    dgc_plan_free(q);
    return NULL;
}
