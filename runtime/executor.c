/*
 * executor.c -- running a plan (compiler/plan.h) on a session's devices by
 * dependency counting.  A runner binds a plan to a session and keeps every
 * per-run array (pending counts, slot use counts, values, per-worker
 * scratch) so a run allocates nothing but the kernels' outputs.  Ready steps
 * go to their device's inter-op pool; a worker runs one ready successor on
 * its own device directly.  The first error stops scheduling; the run waits
 * for the steps in flight and returns that error.
 *
 * OpenCL devices with several compute queues: each GPU op gets a queue once
 * per runner (assign_queues: chains stay on one queue, branches fan out);
 * a step's first command waits (event wait list) for the completion
 * events of its same-device predecessors on other queues, and only steps
 * with such successors (or transfers reading their output) keep an event.
 */
#include "executor.h"
#include "cl.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

typedef struct wscratch {
    dgr_value *in;
    void **evs;          /* max_waits events to wait for */
    dgc_ttype *tout;
    dg_error err;
} wscratch;

/* Per-step facts the hot path needs, precomputed by dgr_runner_new. */
enum {
    XS_VARIABLE = 1,  /* reads a Variable's storage */
    XS_FEED = 2,      /* reads a fed Placeholder */
    XS_STATIC = 4,    /* input and output types fully known at compile time:
                         the run-time inference is skipped */
    XS_NOTIFY = 8,    /* OpenCL step with successors on other devices: they
                         wait for its completion, not its enqueue */
    XS_MQ = 16,       /* OP step on an OpenCL device with several queues */
    XS_EVENT = 32     /* makes a completion event (qev) for successors on
                         other queues of its device or transfers out */
};

/* Completion notice of an XS_NOTIFY step (exec_cl.c calls fn). */
typedef struct xnotify {
    dgr_cl_notify base;
    dgr_runner *r;
    int32_t s;
} xnotify;

struct dgr_runner {
    dgr_session *s;
    dgc_plan *plan;
    dgr_kernel_fn *kern;     /* per step (OP steps with a kernel) */
    uint8_t *xflags;         /* per step: XS_* */
    int32_t *n_local;        /* per step: successors signalled at once (the
                                first n_local of its succ list); the rest
                                wait for an XS_NOTIFY step's completion */
    xnotify *notify;         /* per step (used for XS_NOTIFY steps) */
    void **notify_ev;        /* per step: marker event of this run */
    int8_t *qidx;            /* per step: compute queue (GPU ops) */
    int32_t *wait_off, *wait_n; /* per step: into waits */
    int32_t *waits;          /* steps whose qev a step waits for */
    int max_waits;
    void **qev;              /* per XS_EVENT step: event of this run */
    atomic_int *pending;     /* per step */
    atomic_int *uses;        /* per slot */
    dgr_value *values;       /* per slot */
    wscratch *scratch;       /* per global inter-op worker */
    int max_in, max_out;
    atomic_int outstanding;  /* steps queued or running */
    atomic_int failed;
    dg_error err;            /* first error (written by the CAS winner) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    int64_t step;
    /* tracing, per step */
    void **events;
    uint64_t *t_start, *t_end;
    int32_t *lane;
};

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

/* ---- one step ------------------------------------------------------------ */

static void trace_memory(dgr_session *S, int d, uint64_t ns)
{
    size_t now = atomic_load_explicit(&S->devs[d].in_use, memory_order_relaxed);
    size_t old = atomic_exchange_explicit(&S->mem_seen[d], now,
                                          memory_order_relaxed);
    if (old != now)
        dgr_trace_memory(S->trace, d, ns, now);
}

static const char *slot_tensor_name(const dgr_runner *r, int32_t slot)
{
    const dgc_plan *p = r->plan;
    const dgc_step *ps = &p->steps[p->slots[slot].step];
    if (ps->kind == DGC_STEP_TRANSFER)
        return slot_tensor_name(r, p->in_slots[ps->in_off]);
    int k = slot - ps->out_slot;
    if (r->s->out_names && r->s->out_names[ps->node])
        return r->s->out_names[ps->node][k];
    return r->s->g->nodes[ps->node].name;
}

static void trace_flows(dgr_runner *r, const dgc_step *st, int lane,
                        uint64_t start)
{
    const dgc_plan *p = r->plan;
    for (int i = 0; i < st->n_in; i++) {
        int32_t sl = p->in_slots[st->in_off + i];
        int32_t ps = p->slots[sl].step;
        const dgc_step *pst = &p->steps[ps];
        if (pst->device != st->device || r->lane[ps] != lane)
            dgr_trace_flow(r->s->trace, pst->device, r->lane[ps], r->t_end[ps],
                           st->device, lane, start, slot_tensor_name(r, sl));
    }
}

static void release_inputs(dgr_runner *r, const dgc_step *st)
{
    const int32_t *ins = &r->plan->in_slots[st->in_off];
    for (int i = 0; i < st->n_in; i++) {
        int32_t sl = ins[i];
        if (atomic_fetch_sub_explicit(&r->uses[sl], 1, memory_order_acq_rel) == 1) {
            dgr_buffer_release(r->values[sl].buf);
            r->values[sl].buf = NULL;
        }
    }
}

static dg_status run_transfer(dgr_runner *r, int32_t s, int lane, wscratch *w)
{
    dgr_session *S = r->s;
    const dgc_step *st = &r->plan->steps[s];
    int32_t src_slot = r->plan->in_slots[st->in_off];
    const dgr_value *src = &r->values[src_slot];
    dgr_value *dst = &r->values[st->out_slot];
    dgr_device *sd = &S->devs[st->src_device];
    dgr_device *dd = &S->devs[st->device];
    uint64_t t0 = S->trace ? dg_now_ns() : 0;
    dst->dtype = src->dtype;
    dst->shape = src->shape;
    dst->buf = NULL;
    /* a multi-queue source: wait for the producers' events (XS_EVENT) */
    void **evs = w->evs;
    int nev = 0;
    for (int32_t i = 0; i < r->wait_n[s]; i++)
        if (r->qev[r->waits[r->wait_off[s] + i]])
            evs[nev++] = r->qev[r->waits[r->wait_off[s] + i]];
    size_t n = src->buf ? src->buf->nbytes : 0;
    int64_t numel = dg_shape_numel(&src->shape);
    if (numel >= 0 && (size_t)numel * dg_dtype_size(src->dtype) < n)
        n = (size_t)numel * dg_dtype_size(src->dtype);
    if (src->buf) {
        /* the copy allocates only buffers no compute queue still uses */
        dgr_exec_cl_set_queue(-1);
        dst->buf = dgr_buffer_new(dd, n, &w->err);
        dgr_exec_cl_set_queue(0);
        if (!dst->buf)
            return w->err.code;
        dg_status rc;
        if (sd->info.type == DG_DEV_CPU) {
            rc = dd->ops->write(dd, dst->buf, src->buf->host, n, &w->err);
        } else if (dd->info.type == DG_DEV_CPU) {
            rc = dgr_exec_cl_read(sd, src->buf, dst->buf->host, n, evs, nev,
                                  &w->err);
        } else {
            /* Device to device through host memory: stage in a CPU:0
             * buffer (the host allocator caches it, no malloc per copy). */
            dgr_buffer *stage = dgr_buffer_new(&S->devs[0], n, &w->err);
            if (!stage)
                return w->err.code;
            rc = dgr_exec_cl_read(sd, src->buf, stage->host, n, evs, nev,
                                  &w->err);
            if (rc == DG_OK)
                rc = dd->ops->write(dd, dst->buf, stage->host, n, &w->err);
            dgr_buffer_release(stage);
        }
        if (rc != DG_OK)
            return rc;
    }
    if (S->trace) {
        uint64_t t1 = dg_now_ns();
        r->t_start[s] = t0;
        r->t_end[s] = t1;
        r->lane[s] = DGR_LANE_COPY;
        const char *tn = slot_tensor_name(r, src_slot);
        dgr_trace_memcpy(S->trace, st->src_device, st->device, tn,
                         (int64_t)n, r->step, t0, t1);
        trace_flows(r, st, DGR_LANE_COPY, t0);
        trace_memory(S, st->device, t1);
    }
    (void)lane;
    release_inputs(r, st);
    if (atomic_load_explicit(&r->uses[st->out_slot], memory_order_relaxed) == 0) {
        dgr_buffer_release(dst->buf);
        dst->buf = NULL;
    }
    return DG_OK;
}

/* tchain: when non-zero, the time this worker finished the step it ran
 * just before, with nothing in between but bookkeeping: it is reused as
 * this step's start so that tracing reads the clock once per op. */
static dg_status run_op(dgr_runner *r, int32_t s, int lane, wscratch *w,
                        uint64_t *tchain)
{
    dgr_session *S = r->s;
    const dgc_plan *p = r->plan;
    const dgc_step *st = &p->steps[s];
    const dgc_graph *g = S->g;
    const dgc_node *n = &g->nodes[st->node];
    dgr_device *dev = &S->devs[st->device];
    dgr_value *out = &r->values[st->out_slot];
    const int32_t *ins = &p->in_slots[st->in_off];
    uint64_t t0 = S->trace ? (*tchain ? *tchain : dg_now_ns()) : 0;

    uint8_t xf = r->xflags[s];
    for (int i = 0; i < st->n_in; i++)
        w->in[i] = r->values[ins[i]];
    int nev = 0; /* XS_MQ: events of producers on other queues */
    if (xf & XS_MQ) {
        for (int32_t i = 0; i < r->wait_n[s]; i++) {
            void *e = r->qev[r->waits[r->wait_off[s] + i]];
            if (e)
                w->evs[nev++] = e;
        }
        for (int i = 0; i < st->n_in; i++)
            dgr_exec_cl_mark(w->in[i].buf, r->qidx[s]);
        if (xf & (XS_VARIABLE | XS_FEED)) {
            /* no kernel: a barrier keeps later steps on the queue after
             * the producers */
            dgr_exec_cl_begin(r->qidx[s], w->evs, nev);
            dg_status rc = dgr_exec_cl_end(dev, r->qidx[s], &w->err);
            if (rc != DG_OK)
                return rc;
        }
    }
    if (xf & XS_VARIABLE) {
        const dgr_value *v = &S->vars[st->node];
        if (!v->buf)
            return dg_err(&w->err, DG_E_RUNTIME,
                          "node '%s': Variable is not initialised", n->name);
        out[0] = *v;
        dgr_buffer_retain(v->buf);
    } else if (xf & XS_FEED) {
        const dgr_value *v = &S->feeds[st->node];
        if (!v->buf)
            return dg_err(&w->err, DG_E_RUNTIME,
                          "node '%s': Placeholder must be fed a value "
                          "(--feed %s=FILE)", n->name, n->name);
        out[0] = *v;
        dgr_buffer_retain(v->buf);
    } else {
        const dgc_ttype *tout = n->outputs;
        if (!(xf & XS_STATIC)) {
            dgc_ttype *to = w->tout;
            dgc_ttype *tin = w->tout + r->max_out;
            for (int i = 0; i < st->n_in; i++) {
                tin[i].dtype = w->in[i].dtype;
                tin[i].shape = w->in[i].shape;
            }
            char msg[256];
            msg[0] = 0;
            const dgc_op_def *od = &dgc_ops[n->op];
            if (od->infer(n, tin, st->n_in, to, msg, sizeof msg) != 0)
                return dg_err(&w->err, DG_E_RUNTIME, "node '%s': %s: %s",
                              n->name, od->name,
                              msg[0] ? msg : "invalid inputs at run time");
            tout = to;
        }
        for (int k = 0; k < st->n_out; k++)
            out[k].buf = NULL;
        dgr_kctx k;
        k.sess = S;
        k.dev = dev;
        k.g = g;
        k.node = n;
        k.node_id = st->node;
        k.in = w->in;
        k.n_in = st->n_in;
        k.out = out;
        k.n_out = st->n_out;
        k.out_types = tout;
        k.step = r->step;
        k.intra = dev->info.type == DG_DEV_CPU ? S->intra : NULL;
        k.cl_event = NULL;
        k.err = &w->err;
        w->err.code = DG_OK;
        if (xf & XS_MQ)
            dgr_exec_cl_begin(r->qidx[s], w->evs, nev);
        if (xf & XS_EVENT)
            dgr_exec_cl_want_event(1);
        dg_status rc = r->kern[s](&k);
        if (xf & XS_MQ) {
            dg_status rc2 = dgr_exec_cl_end(dev, r->qidx[s], &w->err);
            if (rc == DG_OK)
                rc = rc2;
        }
        if (xf & XS_EVENT) {
            dgr_exec_cl_want_event(0);
            if (rc == DG_OK)
                rc = dgr_exec_cl_event(dev, r->qidx[s], k.cl_event,
                                       &r->qev[s], &w->err);
        }
        if (rc != DG_OK) {
            if (k.cl_event)
                dgr_cl_event_release(k.cl_event);
            if (strncmp(w->err.msg, "node '", 6) != 0) {
                char prev[sizeof w->err.msg];
                snprintf(prev, sizeof prev, "%s", w->err.msg);
                dg_err(&w->err, rc, "node '%s': %s", n->name,
                       prev[0] ? prev : "kernel failed");
            }
            return rc;
        }
        if (k.cl_event) {
            if (S->trace)
                r->events[s] = k.cl_event;
            else
                dgr_cl_event_release(k.cl_event);
        }
    }
    if ((xf & (XS_EVENT | XS_VARIABLE | XS_FEED)) ==
        (XS_EVENT | XS_VARIABLE) ||
        (xf & (XS_EVENT | XS_VARIABLE | XS_FEED)) == (XS_EVENT | XS_FEED)) {
        /* no kernel: a marker */
        dg_status rc = dgr_exec_cl_event(dev, r->qidx[s], NULL, &r->qev[s],
                                         &w->err);
        if (rc != DG_OK)
            return rc;
    }
    if (S->trace) {
        uint64_t t1 = dg_now_ns();
        *tchain = t1;
        r->t_start[s] = t0;
        r->t_end[s] = t1;
        r->lane[s] = dev->info.type == DG_DEV_CPU ? lane : r->qidx[s];
        if (dev->info.type == DG_DEV_CPU)
            dgr_trace_op(S->trace, st->device, lane, n->name, dgc_node_op_name(n),
                         r->step, t0, t1, S->in_names[st->node], n->n_inputs);
        trace_flows(r, st, r->lane[s], t0);
        trace_memory(S, st->device, t1);
    }
    release_inputs(r, st);
    for (int k = 0; k < st->n_out; k++)
        if (atomic_load_explicit(&r->uses[st->out_slot + k],
                                 memory_order_relaxed) == 0) {
            dgr_buffer_release(out[k].buf);
            out[k].buf = NULL;
        }
    return DG_OK;
}

static void fail(dgr_runner *r, const dg_error *e)
{
    int expect = 0;
    if (atomic_compare_exchange_strong_explicit(&r->failed, &expect, 1,
                                                memory_order_acq_rel,
                                                memory_order_relaxed))
        r->err = *e;
}

/* One unit of `outstanding` is finished: wake the run at zero. */
static void finish_one(dgr_runner *r)
{
    if (atomic_fetch_sub_explicit(&r->outstanding, 1,
                                  memory_order_acq_rel) == 1) {
        pthread_mutex_lock(&r->mu);
        r->done = 1;
        pthread_cond_signal(&r->cv);
        pthread_mutex_unlock(&r->mu);
    }
}

/* Decrement the pending counts of succ[0..n); queue the ready ones (each
 * adds one unit to outstanding before it is queued). */
static void signal_succ(dgr_runner *r, const int32_t *succ, int32_t n)
{
    const dgc_plan *p = r->plan;
    for (int32_t i = 0; i < n; i++) {
        int32_t t = succ[i];
        if (atomic_fetch_sub_explicit(&r->pending[t], 1,
                                      memory_order_acq_rel) != 1)
            continue;
        atomic_fetch_add_explicit(&r->outstanding, 1, memory_order_relaxed);
        dgr_ipool_push(r->s->pools[p->steps[t].device], r, t);
    }
}

/* An XS_NOTIFY step's commands completed (ok = 0 on an OpenCL error): its
 * successors on other devices may start.  Runs on an OpenCL thread or
 * inline; holds one unit of outstanding. */
static void notify_done(dgr_cl_notify *base, int ok)
{
    xnotify *x = (xnotify *)(void *)base;
    dgr_runner *r = x->r;
    const dgc_step *st = &r->plan->steps[x->s];
    if (!ok) {
        dg_error e;
        dg_err(&e, DG_E_RUNTIME, "node '%s': OpenCL command failed on %s",
               r->s->g->nodes[st->node].name, r->s->devs[st->device].info.name);
        fail(r, &e);
    } else if (!atomic_load_explicit(&r->failed, memory_order_acquire)) {
        int32_t nl = r->n_local[x->s];
        signal_succ(r, &r->plan->succ[st->succ_off + nl], st->n_succ - nl);
    }
    finish_one(r);
}

/* After an XS_NOTIFY step: have its remote successors signalled once the
 * device finished everything queued so far, without blocking this worker
 * (a marker event's completion callback); if that cannot be set up, wait
 * for the device here. */
static void notify_remote(dgr_runner *r, int32_t s)
{
    const dgc_step *st = &r->plan->steps[s];
    dgr_device *d = &r->s->devs[st->device];
    xnotify *x = &r->notify[s];
    atomic_fetch_add_explicit(&r->outstanding, 1, memory_order_relaxed);
    if (dgr_exec_cl_notify(d, r->qidx[s], &x->base, &r->notify_ev[s]) == 0)
        return;
    dg_error e;
    int ok = d->ops->sync(d, &e) == DG_OK;
    x->base.fn(&x->base, ok);
}

void dgr_exec_task(void *ctx, int32_t item, int lane)
{
    dgr_runner *r = ctx;
    const dgc_plan *p = r->plan;
    int32_t s = item;
    uint64_t tchain = 0;
    /* Each queued step holds one unit of r->outstanding; the successor a
     * worker runs next itself inherits the unit of the step before it. */
    while (s >= 0) {
        const dgc_step *st = &p->steps[s];
        wscratch *w = &r->scratch[r->s->lane_base[st->device] + lane];
        int32_t next = -1;
        if (!atomic_load_explicit(&r->failed, memory_order_acquire)) {
            dg_status rc;
            if (st->kind == DGC_STEP_OP) {
                rc = run_op(r, s, lane, w, &tchain);
            } else {
                rc = run_transfer(r, s, lane, w);
                tchain = 0;
            }
            if (rc != DG_OK) {
                if (w->err.code == DG_OK)
                    dg_err(&w->err, rc, "node '%s': failed",
                           r->s->g->nodes[st->node].name);
                fail(r, &w->err);
            } else {
                if (r->xflags[s] & XS_NOTIFY)
                    notify_remote(r, s);
                const int32_t *succ = &p->succ[st->succ_off];
                int32_t nl = r->n_local[s];
                for (int32_t i = 0; i < nl; i++) {
                    int32_t t = succ[i];
                    if (atomic_fetch_sub_explicit(&r->pending[t], 1,
                                                  memory_order_acq_rel) != 1)
                        continue;
                    if (next < 0 && p->steps[t].device == st->device) {
                        next = t;
                        continue;
                    }
                    atomic_fetch_add_explicit(&r->outstanding, 1,
                                              memory_order_relaxed);
                    dgr_ipool_push(r->s->pools[p->steps[t].device], r, t);
                }
            }
        }
        if (next < 0)
            finish_one(r);
        s = next;
    }
}

/* ---- runners ------------------------------------------------------------- */

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
static int classify_steps(dgr_runner *r)
{
    dgr_session *S = r->s;
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
        if (S->devs[st->device].info.type != DG_DEV_CPU) {
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
        r->notify[i].base.fn = notify_done;
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

void dgr_runner_free(dgr_runner *r)
{
    if (!r)
        return;
    if (r->scratch)
        for (int i = 0; i < r->s->n_workers; i++)
            dg_free(r->scratch[i].in), dg_free(r->scratch[i].tout),
                dg_free(r->scratch[i].evs);
    dg_free(r->scratch);
    dg_free(r->kern);
    dg_free(r->xflags);
    dg_free(r->n_local);
    dg_free(r->notify);
    if (r->notify_ev && r->plan)
        for (int32_t i = 0; i < r->plan->n_steps; i++)
            dgr_cl_event_release(r->notify_ev[i]);
    dg_free(r->notify_ev);
    if (r->qev && r->plan)
        for (int32_t i = 0; i < r->plan->n_steps; i++)
            dgr_cl_event_release(r->qev[i]);
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
    dgc_plan_free(r->plan);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    dg_free(r);
}

dgr_runner *dgr_runner_new(dgr_session *s, const dgc_ref *fetch, int n_fetch,
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
    r->plan = dgc_plan_build(s->g, &s->prog->devs, fetch, n_fetch, targets,
                             n_targets, err);
    if (!r->plan) {
        dgr_runner_free(r);
        return NULL;
    }
    const dgc_plan *p = r->plan;
    size_t ns = (size_t)p->n_steps + 1, nsl = (size_t)p->n_slots + 1;
    r->kern = dg_calloc(ns, sizeof *r->kern);
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
        r->kern[i] = dgr_kernel_find(n->op, d->info.type);
        if (!r->kern[i]) {
            dg_err(err, DG_E_RUNTIME, "node '%s': no %s kernel for %s",
                   n->name, dgc_node_op_name(n), d->info.name);
            dg_free(per_dev);
            dgr_runner_free(r);
            return NULL;
        }
    }
    for (int d = 0; d < s->n_dev; d++)
        if (dgr_ipool_reserve(s->pools[d], per_dev[d] + 1)) {
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
        if (!r->scratch[i].in || !r->scratch[i].tout || !r->scratch[i].evs)
            goto nomem;
    }
    return r;
nomem:
    dg_err_nomem(err, "runner");
    dgr_runner_free(r);
    return NULL;
}

/* Record OpenCL ops' device times once the devices are idle. */
static void trace_cl_events(dgr_runner *r)
{
    dgr_session *S = r->s;
    const dgc_plan *p = r->plan;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dgc_step *st = &p->steps[i];
        if (st->kind != DGC_STEP_OP || S->devs[st->device].info.type == DG_DEV_CPU)
            continue;
        const dgc_node *n = &S->g->nodes[st->node];
        uint64_t a = r->t_start[i], b = r->t_end[i];
        if (r->events[i]) {
            uint64_t ea = 0, eb = 0;
            if (dgr_cl_event_times(&S->devs[st->device], r->events[i], &ea, &eb) &&
                ea && eb >= ea) {
                a = ea;
                b = eb;
            }
            dgr_cl_event_release(r->events[i]);
            r->events[i] = NULL;
        }
        if (a || b)
            dgr_trace_op(S->trace, st->device, r->qidx[i], n->name,
                         dgc_node_op_name(n), r->step, a, b,
                         S->in_names[st->node], n->n_inputs);
    }
}

dg_status dgr_runner_run(dgr_runner *r, int64_t step, dg_tensor **fetched,
                         dg_error *err)
{
    dgr_session *S = r->s;
    const dgc_plan *p = r->plan;
    dg_status rc = DG_OK;
    pthread_mutex_lock(&S->run_mu);
    atomic_fetch_add(&S->run_counter, 1);
    r->step = step;
    for (int32_t i = 0; i < p->n_steps; i++)
        atomic_store_explicit(&r->pending[i], p->steps[i].pending,
                              memory_order_relaxed);
    for (int32_t i = 0; i < p->n_slots; i++)
        atomic_store_explicit(&r->uses[i], p->slots[i].uses,
                              memory_order_relaxed);
    atomic_store(&r->failed, 0);
    r->err.code = DG_OK;
    r->err.msg[0] = 0;
    r->done = 0;
    if (p->n_steps > 0) {
        atomic_store(&r->outstanding, p->n_roots);
        for (int32_t i = 0; i < p->n_roots; i++)
            dgr_ipool_push(S->pools[p->steps[p->roots[i]].device], r,
                           p->roots[i]);
        pthread_mutex_lock(&r->mu);
        while (!r->done)
            pthread_cond_wait(&r->cv, &r->mu);
        pthread_mutex_unlock(&r->mu);
    }
    if (atomic_load(&r->failed)) {
        rc = r->err.code ? r->err.code : DG_E_RUNTIME;
        if (err)
            *err = r->err;
    }
    for (int d = 0; d < S->n_dev; d++) {
        if (S->devs[d].info.type == DG_DEV_CPU || !S->devs[d].ops)
            continue;
        dg_error e2;
        if (S->devs[d].ops->sync(&S->devs[d], &e2) != DG_OK && rc == DG_OK) {
            rc = e2.code;
            if (err)
                *err = e2;
        }
    }
    if (r->notify_ev)
        for (int32_t i = 0; i < p->n_steps; i++)
            if (r->notify_ev[i]) {
                dgr_cl_event_release(r->notify_ev[i]);
                r->notify_ev[i] = NULL;
            }
    if (r->qev)
        for (int32_t i = 0; i < p->n_steps; i++)
            if (r->qev[i]) {
                dgr_cl_event_release(r->qev[i]);
                r->qev[i] = NULL;
            }
    if (S->trace)
        trace_cl_events(r);
    if (fetched)
        for (int i = 0; i < p->n_fetch; i++)
            fetched[i] = NULL;
    if (rc == DG_OK && fetched) {
        for (int i = 0; i < p->n_fetch && rc == DG_OK; i++) {
            int32_t sl = p->fetch_slots[i];
            const dgr_value *v = &r->values[sl];
            dg_tensor *t = dg_tensor_new(v->dtype, &v->shape);
            if (!t) {
                rc = dg_err_nomem(err, "fetched tensor");
                break;
            }
            int64_t numel = dg_shape_numel(&v->shape);
            size_t n = (size_t)numel * dg_dtype_size(v->dtype);
            if (n && v->buf) {
                dgr_device *d = &S->devs[p->slots[sl].device];
                rc = d->ops->read(d, v->buf, t->data, n, err);
            }
            fetched[i] = t;
        }
        if (rc != DG_OK)
            for (int i = 0; i < p->n_fetch; i++) {
                dg_tensor_free(fetched[i]);
                fetched[i] = NULL;
            }
    }
    for (int32_t i = 0; i < p->n_slots; i++) {
        if (r->values[i].buf) {
            dgr_buffer_release(r->values[i].buf);
            r->values[i].buf = NULL;
        }
    }
    /* the devices are idle: what the run released is free for any queue
     * (a transfer of the next run may reuse it at once) */
    for (int d = 0; d < S->n_dev; d++)
        if (S->devs[d].info.type != DG_DEV_CPU && S->devs[d].ops)
            dgr_exec_cl_idle(&S->devs[d]);
    if (S->trace)
        for (int d = 0; d < S->n_dev; d++)
            trace_memory(S, d, dg_now_ns());
    pthread_mutex_unlock(&S->run_mu);
    return rc;
}
