/*
 * exec_runner.c -- binding a plan to the executor's world: dgr_runner_new
 * precomputes the per-step facts the hot path needs (kernels, XS_* flags,
 * local vs remote successors, streams and wait lists) and allocates every
 * per-run array once; dgr_runner_free; output names (dgr_ref_name).
 */
#include "exec_priv.h"
#include "exec_frames.h"
#include "attr_get.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

char *dgr_ref_name(const dgc_graph *g, dgc_ref r)
{
    const char *nm = g->nodes[r.node].name;
    if (r.index == 0)
        return dg_strdup(nm);
    size_t n = strlen(nm) + 16;
    char *s = dg_malloc(n);
    if (s)
        snprintf(s, n, "%s:%d", nm, r.index);
    return s;
}

static int type_known(const dgc_ttype *t)
{
    return t->shape.rank >= 0 && dg_shape_numel(&t->shape) >= 0;
}

/* Must successor t of step `from` wait for from's device to finish, not
 * just enqueue?  Steps on the same device follow in its in-order queue, and
 * a transfer out of that device reads through the same queue. */
static int needs_completion(const dgc_plan *p, const dgc_step *from,
                            int32_t t)
{
    const dgc_step *to = &p->steps[t];
    if (to->device == from->device)
        return 0;
    if (to->kind == DGC_STEP_TRANSFER && to->src_device == from->device)
        return 0;
    return 1;
}

/* Fill xflags and n_local (reordering each XS_NOTIFY step's successors:
 * local ones first); allocate the notices.  0 ok, -1 nomem. */
/* XS_DEFER: the collectives over several replicas on host-memory devices
 * finish through the collective runtime's callback (exec_priv.h: xdefer).
 * 0 ok, -1 nomem. */
static int defer_steps(dgr_runner *r)
{
    dgr_exec *S = r->s;
    const dgc_plan *p = r->plan;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dgc_step *st = &p->steps[i];
        if (st->kind != DGC_STEP_OP)
            continue;
        const dgc_node *n = &S->g->nodes[st->node];
        const dgr_device *d = &S->devs[st->device];
        if ((n->op != DGC_OPID_AllReduce && n->op != DGC_OPID_Broadcast) ||
            dgc_attr_i(n, DGC_AT_replicas) <= 1 || !d->be->host_memory ||
            d->be->streams)
            continue;
        if (!r->defer &&
            !(r->defer = dg_calloc((size_t)p->n_steps + 1, sizeof *r->defer)))
            return -1;
        r->xflags[i] |= XS_DEFER;
        r->defer[i].base.fn = dgr_exec_defer_done;
        r->defer[i].r = r;
        r->defer[i].s = i;
    }
    return 0;
}

static int classify_steps(dgr_runner *r)
{
    dgr_exec *S = r->s;
    dgc_plan *p = r->plan;
    int any_notify = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        dgc_step *st = &p->steps[i];
        uint8_t f = 0;
        r->n_local[i] = st->n_succ;
        if (st->kind == DGC_STEP_OP) {
            const dgc_node *n = &S->g->nodes[st->node];
            if (dgc_op_has(n->op, DGC_OP_VARIABLE))
                f |= XS_VARIABLE;
            else if (dgc_op_has(n->op, DGC_OP_FEED))
                f |= XS_FEED;
            int stat = n->outputs && n->n_outputs >= st->n_out;
            for (int k = 0; stat && k < st->n_out; k++)
                stat = type_known(&n->outputs[k]);
            for (int k = 0; stat && k < st->n_in; k++)
                stat = type_known(&p->slots[p->in_slots[st->in_off + k]].type);
            if (stat)
                f |= XS_STATIC;
        }
        if (S->devs[st->device].be->streams) {
            int32_t *succ = &p->succ[st->succ_off];
            int32_t nl = 0;
            for (int32_t k = 0; k < st->n_succ; k++)
                if (!needs_completion(p, st, succ[k])) {
                    int32_t t = succ[nl];
                    succ[nl] = succ[k];
                    succ[k] = t;
                    nl++;
                }
            if (nl < st->n_succ) {
                f |= XS_NOTIFY;
                r->n_local[i] = nl;
                any_notify = 1;
            }
        }
        r->xflags[i] = f;
    }
    if (!any_notify)
        return 0;
    r->notify = dg_calloc((size_t)p->n_steps + 1, sizeof *r->notify);
    r->notify_ev = dg_calloc((size_t)p->n_steps + 1, sizeof *r->notify_ev);
    if (!r->notify || !r->notify_ev)
        return -1;
    for (int32_t i = 0; i < p->n_steps; i++) {
        r->notify[i].base.fn = dgr_exec_notify_done;
        r->notify[i].r = r;
        r->notify[i].s = i;
    }
    return 0;
}

/* Queues and wait lists (exec_queues.c); 0 ok, -1 nomem. */
static int assign_queues(dgr_runner *r)
{
    dgr_exec_queues qp;
    memset(&qp, 0, sizeof qp);
    int rc = dgr_exec_assign_queues(r->s, r->plan, r->xflags, XS_MQ,
                                    XS_EVENT, &qp);
    r->qidx = qp.qidx;
    r->wait_off = qp.wait_off;
    r->wait_n = qp.wait_n;
    r->waits = qp.waits;
    r->max_waits = qp.max_waits;
    r->qev = qp.qev;
    return rc;
}

dg_status dgr_runner_set_async(dgr_runner *r, int32_t tag_base,
                               int32_t tag_span, pthread_mutex_t *state_mu,
                               dg_error *err)
{
    if (r->fx)
        return dg_err(err, DG_E_RUNTIME, "asynchronous replicas cannot run "
                      "control flow (Switch/Merge, while loops) yet");
    for (int32_t i = 0; i < r->plan->n_steps; i++) {
        const dgc_step *st = &r->plan->steps[i];
        if ((st->kind == DGC_STEP_SEND || st->kind == DGC_STEP_RECV) &&
            st->tag >= tag_span)
            return dg_err(err, DG_E_RUNTIME, "a replica's step has more than "
                          "%d edges between tasks", (int)tag_span);
    }
    r->async = 1;
    r->tag_base = tag_base;
    r->state_mu = state_mu;
    return DG_OK;
}

int dgr_runner_is_empty(const dgr_runner *r)
{
    return r->plan->n_steps == 0;
}

void dgr_runner_free(dgr_runner *r)
{
    if (!r)
        return;
    /* A cluster run that failed left receives posted and steps queued
     * that still point here; the process is about to end the job (SPEC
     * 8.3), so the runner stays (freeing it crashed the transport's
     * thread when a peer's message came in before MPI_Abort). */
    if (r->xm && atomic_load(&r->failed))
        return;
    dgr_fx_free(r->fx); /* issue 11 */
    if (r->scratch)
        for (int i = 0; i < r->s->n_workers; i++)
            dg_free(r->scratch[i].in), dg_free(r->scratch[i].tout),
                dg_free(r->scratch[i].evs), dg_free(r->scratch[i].hostin);
    dg_free(r->scratch);
    dg_free(r->kern);
    dg_free(r->xflags);
    dg_free(r->n_local);
    dg_free(r->notify);
    if (r->notify_ev && r->plan)
        for (int32_t i = 0; i < r->plan->n_steps; i++)
            dgr_exec_event_release(r->s, r->plan->steps[i].device,
                                   r->notify_ev[i]);
    dg_free(r->notify_ev);
    if (r->qev && r->plan)
        for (int32_t i = 0; i < r->plan->n_steps; i++)
            dgr_exec_event_release(r->s, r->plan->steps[i].device,
                                   r->qev[i]);
    dg_free(r->qev);
    dg_free(r->qidx);
    dg_free(r->wait_off);
    dg_free(r->wait_n);
    dg_free(r->waits);
    dg_free(r->pending);
    dg_free(r->uses);
    dg_free(r->values);
    dg_free(r->events);
    dg_free(r->t_start);
    dg_free(r->t_end);
    dg_free(r->lane);
    dg_free(r->xm);
    dg_free(r->defer);
    dgc_plan_free(r->plan);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    dg_free(r);
}

dgr_runner *dgr_runner_new(dgr_exec *s, const dgc_ref *fetch, int n_fetch,
                           const int32_t *targets, int n_targets,
                           dg_error *err)
{
    dgr_runner *r = dg_calloc(1, sizeof *r);
    if (!r) {
        dg_err_nomem(err, "runner");
        return NULL;
    }
    r->s = s;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->plan = dgc_plan_build(s->g, s->devlist, fetch, n_fetch, targets,
                             n_targets, err);
    if (r->plan && s->xport) {
        /* a cluster: this rank's part, messages for the rest (SPEC 8.3) */
        dgc_plan *l = dgc_plan_localize(r->plan, s->devlist, s->rank, err);
        dgc_plan_free(r->plan);
        r->plan = l;
    }
    if (!r->plan) {
        dgr_runner_free(r);
        return NULL;
    }
    const dgc_plan *p = r->plan;
    size_t ns = (size_t)p->n_steps + 1, nsl = (size_t)p->n_slots + 1;
    r->kern = dg_calloc(ns, sizeof *r->kern);
    /* issue 11: a plan with control flow runs on the executor with frames */
    if (r->kern && dgr_fx_wanted(s->g, p)) {
        if (!(r->fx = dgr_fx_new(r, err))) {
            dgr_runner_free(r);
            return NULL;
        }
        return r;
    }
    r->xflags = dg_calloc(ns, sizeof *r->xflags);
    r->n_local = dg_calloc(ns, sizeof *r->n_local);
    if (!r->xflags || !r->n_local)
        goto nomem;
    r->pending = dg_calloc(ns, sizeof *r->pending);
    r->uses = dg_calloc(nsl, sizeof *r->uses);
    r->values = dg_calloc(nsl, sizeof *r->values);
    r->scratch = dg_calloc((size_t)s->n_workers + 1, sizeof *r->scratch);
    if (!r->kern || !r->pending || !r->uses || !r->values || !r->scratch)
        goto nomem;
    if (s->trace) {
        r->events = dg_calloc(ns, sizeof *r->events);
        r->t_start = dg_calloc(ns, sizeof *r->t_start);
        r->t_end = dg_calloc(ns, sizeof *r->t_end);
        r->lane = dg_calloc(ns, sizeof *r->lane);
        if (!r->events || !r->t_start || !r->t_end || !r->lane)
            goto nomem;
    }
    if (classify_steps(r) != 0 || assign_queues(r) != 0)
        goto nomem;
    if (defer_steps(r) != 0)
        goto nomem;
    if (s->xport) {
        if (!(r->xm = dg_calloc(ns, sizeof *r->xm)))
            goto nomem;
        for (int32_t i = 0; i < p->n_steps; i++) {
            r->xm[i].r = r;
            r->xm[i].s = i;
        }
    }
    int32_t *per_dev = dg_calloc((size_t)s->n_dev + 1, sizeof *per_dev);
    if (!per_dev)
        goto nomem;
    r->max_in = 1;
    r->max_out = 1;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dgc_step *st = &p->steps[i];
        per_dev[st->device]++;
        if (st->n_in > r->max_in)
            r->max_in = st->n_in;
        if (st->n_out > r->max_out)
            r->max_out = st->n_out;
        if (st->kind != DGC_STEP_OP)
            continue;
        const dgc_node *n = &s->g->nodes[st->node];
        if (dgc_op_has(n->op, DGC_OP_VARIABLE | DGC_OP_FEED))
            continue;
        const dgr_device *d = &s->devs[st->device];
        r->kern[i] = dgr_exec_kernel(s->g, n, d, err);
        if (!r->kern[i]) {
            dg_free(per_dev);
            dgr_runner_free(r);
            return NULL;
        }
    }
    for (int d = 0; d < s->n_dev; d++)
        if (s->pools[d] && /* (none for another rank's device) */
            dgr_ipool_reserve(s->pools[d], per_dev[d] + 1)) {
            dg_free(per_dev);
            goto nomem;
        }
    dg_free(per_dev);
    for (int i = 0; i < s->n_workers; i++) {
        r->scratch[i].in = dg_calloc((size_t)r->max_in, sizeof(dgr_value));
        /* tout holds max_out output types followed by max_in input types */
        r->scratch[i].tout = dg_calloc((size_t)(r->max_out + r->max_in),
                                       sizeof(dgc_ttype));
        r->scratch[i].evs = dg_calloc((size_t)r->max_waits + 1,
                                      sizeof(void *));
        r->scratch[i].hostin = dg_calloc((size_t)r->max_in * DGR_HOST_IN_MAX,
                                         sizeof(int64_t));
        if (!r->scratch[i].in || !r->scratch[i].tout || !r->scratch[i].evs ||
            !r->scratch[i].hostin)
            goto nomem;
    }
    return r;
nomem:
    dg_err_nomem(err, "runner");
    dgr_runner_free(r);
    return NULL;
}
