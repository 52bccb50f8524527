/*
 * executor.c -- the executor's hot path: running a plan (passes/plan.h)
 * on a session's devices by dependency counting.  A runner (exec_runner.c)
 * binds a plan to a session and keeps every per-run array (pending counts,
 * slot use counts, values, per-worker scratch) so a run allocates nothing
 * but the kernels' outputs.  Ready steps go to their device's inter-op
 * pool; a worker runs one ready successor on its own device directly.  The
 * first error stops scheduling; the run waits for the steps in flight and
 * returns that error.
 *
 * Devices are reached only through their backends (core/backend.h).  On a
 * device with several streams each op gets a stream once per runner
 * (assign_queues: chains stay on one stream, branches fan out); a step's
 * first command waits for the completion events of its same-device
 * predecessors on other streams, and only steps with such successors (or
 * transfers reading their output) keep an event.
 */
#include "exec_priv.h"
#include "exec_frames.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

/* ---- one step ------------------------------------------------------------ */

/* Sample a device's allocator level into the trace: when it changed, at
 * most once per DGR_MEM_SAMPLE_NS per device (a counter event per op would
 * double the events of a chain of small ops and most of tracing's cost),
 * and always when `force` (the end of a run). */
#define DGR_MEM_SAMPLE_NS 20000u
static void trace_memory(dgr_exec *S, int d, uint64_t ns, int force)
{
    if (!force && ns - atomic_load_explicit(&S->mem_seen_ns[d],
                                            memory_order_relaxed) <
                      DGR_MEM_SAMPLE_NS)
        return;
    size_t now = atomic_load_explicit(&S->devs[d].in_use, memory_order_relaxed);
    size_t old = atomic_exchange_explicit(&S->mem_seen[d], now,
                                          memory_order_relaxed);
    if (old != now) {
        atomic_store_explicit(&S->mem_seen_ns[d], ns, memory_order_relaxed);
        dgr_trace_memory(S->trace, d, ns, now);
    }
}

/* Blocking read of a transfer's source into host memory: after the
 * producers' events on a device with streams. */
static dg_status read_src(dgr_device *sd, const dgr_buffer *src, void *dst,
                          size_t n, void *const *evs, int nev, dg_error *err)
{
    if (sd->be->streams)
        return sd->be->streams->read_after(sd, src, dst, n, evs, nev, err);
    return sd->be->read(sd, src, dst, n, err);
}

static dg_status run_transfer(dgr_runner *r, int32_t s, int lane, wscratch *w)
{
    dgr_exec *S = r->s;
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
        /* the copy allocates only buffers no stream still uses */
        dst->buf = dgr_buffer_new(dd, n, -1, &w->err);
        if (!dst->buf)
            return w->err.code;
        dg_status rc;
        if (sd->be->host_memory) {
            rc = dd->be->write(dd, dst->buf, src->buf->host, n, &w->err);
        } else if (dd->be->host_memory) {
            rc = read_src(sd, src->buf, dst->buf->host, n, evs, nev, &w->err);
        } else {
            /* Device to device through host memory: stage in a CPU:0
             * buffer (the host allocator caches it, no malloc per copy;
             * device 0 is always CPU:0). */
            dgr_buffer *stage = dgr_buffer_new(&S->devs[S->host_dev], n,
                                               -1, &w->err);
            if (!stage)
                return w->err.code;
            rc = read_src(sd, src->buf, stage->host, n, evs, nev, &w->err);
            if (rc == DG_OK)
                rc = dd->be->write(dd, dst->buf, stage->host, n, &w->err);
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
        const char *tn = dgr_exec_slot_name(r, src_slot);
        dgr_trace_memcpy(S->trace, st->src_device, st->device, tn,
                         (int64_t)n, r->step, t0, t1,
                         r->key_base + (uint32_t)s);
        dgr_exec_trace_flows(r, st, DGR_LANE_COPY);
        trace_memory(S, st->device, t1, 0);
    }
    (void)lane;
    dgr_exec_release_inputs(r, st);
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
                        uint64_t *tchain, int *deferred)
{
    dgr_exec *S = r->s;
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
    const dgr_stream_ops *so = dev->be->streams;
    int nev = 0; /* XS_MQ: events of producers on other streams */
    if (xf & XS_MQ) {
        for (int32_t i = 0; i < r->wait_n[s]; i++) {
            void *e = r->qev[r->waits[r->wait_off[s] + i]];
            if (e)
                w->evs[nev++] = e;
        }
        for (int i = 0; i < st->n_in; i++)
            if (w->in[i].buf)
                so->mark(w->in[i].buf, r->qidx[s]);
        if (xf & (XS_VARIABLE | XS_FEED)) {
            /* no kernel: a barrier keeps later steps on the stream after
             * the producers */
            dg_status rc = so->barrier(dev, r->qidx[s], w->evs, nev, &w->err);
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
        if (!v->buf && st->n_in > 0)
            v = &w->in[0]; /* PlaceholderWithDefault not fed: its input */
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
            dg_status rc = dgr_exec_run_types(dev, n, w->in, st->n_in,
                                              w->hostin, w->tout + r->max_out,
                                              to, &w->err);
            if (rc != DG_OK)
                return rc;
            tout = to;
        }
        for (int k = 0; k < st->n_out; k++)
            out[k].buf = NULL;
        dgr_kctx k;
        dgr_exec_kctx(&k, S, dev, g, n, st, w->in, out, tout, r->step,
                      &w->err);
        k.stream = (xf & XS_MQ) ? r->qidx[s] : 0;
        k.waits = w->evs;
        k.n_waits = nev;
        k.want_event = (xf & XS_EVENT) != 0;
        if (xf & XS_DEFER) {
            xdefer *d = &r->defer[s];
            d->t0 = t0;
            d->lane = lane;
            k.defer = &d->base;
        }
        w->err.code = DG_OK;
        /* async ps: one replica's update of a Variable at a time */
        pthread_mutex_t *smu = r->state_mu && dgc_op_has(n->op, DGC_OP_STATE)
                                   ? r->state_mu
                                   : NULL;
        if (smu)
            pthread_mutex_lock(smu);
        dg_status rc = r->kern[s](&k);
        if (smu)
            pthread_mutex_unlock(smu);
        if (rc == DG_OK && k.deferred) {
            /* dgr_exec_defer_done finishes the step (maybe already, and
             * then the run may be over and r freed: no runner memory may
             * be touched from here on, so the flag is the caller's) */
            *deferred = 1;
            *tchain = 0;
            return DG_OK;
        }
        if (k.n_waits > 0) {
            /* no command took the wait list */
            dg_status rc2 = so->barrier(dev, k.stream, k.waits, k.n_waits,
                                        &w->err);
            if (rc == DG_OK)
                rc = rc2;
        }
        if ((xf & XS_EVENT) && rc == DG_OK)
            rc = so->event(dev, r->qidx[s], k.event, &r->qev[s], &w->err);
        if (rc != DG_OK) {
            if (k.event)
                so->event_release(k.event);
            if (strncmp(w->err.msg, "node '", 6) != 0) {
                char prev[sizeof w->err.msg];
                snprintf(prev, sizeof prev, "%s", w->err.msg);
                dg_err(&w->err, rc, "node '%s': %s", n->name,
                       prev[0] ? prev : "kernel failed");
            }
            return rc;
        }
        if (k.event) {
            if (S->trace)
                r->events[s] = k.event;
            else
                so->event_release(k.event);
        }
    }
    if ((xf & (XS_EVENT | XS_VARIABLE | XS_FEED)) ==
        (XS_EVENT | XS_VARIABLE) ||
        (xf & (XS_EVENT | XS_VARIABLE | XS_FEED)) == (XS_EVENT | XS_FEED)) {
        /* no kernel: a marker */
        dg_status rc = so->event(dev, r->qidx[s], NULL, &r->qev[s], &w->err);
        if (rc != DG_OK)
            return rc;
    }
    if (S->trace) {
        uint64_t t1 = dg_now_ns();
        *tchain = t1;
        r->t_start[s] = t0;
        r->t_end[s] = t1;
        /* ops on a device with streams but without a kernel event are
         * host-timed: their own lane, never nested in a stream's kernel
         * slices */
        r->lane[s] = !so ? lane : r->events[s] ? r->qidx[s] : DGR_LANE_HOST;
        if (!so) /* host-run: timed here; streams: from events */
            dgr_trace_op(S->trace, st->device, lane, n->name, dgc_node_op_name(n),
                         r->step, t0, t1, S->in_names[st->node], n->n_inputs,
                         r->key_base + (uint32_t)s);
        dgr_exec_trace_flows(r, st, r->lane[s]);
        trace_memory(S, st->device, t1, 0);
    }
    dgr_exec_release_inputs(r, st);
    for (int k = 0; k < st->n_out; k++)
        if (atomic_load_explicit(&r->uses[st->out_slot + k],
                                 memory_order_relaxed) == 0) {
            dgr_buffer_release(out[k].buf);
            out[k].buf = NULL;
        }
    return DG_OK;
}

/* An XS_NOTIFY step's commands completed (ok = 0 on an OpenCL error): its
 * successors on other devices may start.  Runs on an OpenCL thread or
 * inline; holds one unit of outstanding. */
void dgr_exec_notify_done(dgr_notify *base, int ok)
{
    xnotify *x = (xnotify *)(void *)base;
    dgr_runner *r = x->r;
    const dgc_step *st = &r->plan->steps[x->s];
    if (!ok) {
        dg_error e;
        dg_err(&e, DG_E_RUNTIME, "node '%s': OpenCL command failed on %s",
               r->s->g->nodes[st->node].name, r->s->devs[st->device].info.name);
        dgr_exec_fail(r, &e);
    } else if (!atomic_load_explicit(&r->failed, memory_order_acquire)) {
        int32_t nl = r->n_local[x->s];
        dgr_exec_signal_succ(r, &r->plan->succ[st->succ_off + nl], st->n_succ - nl);
    }
    dgr_exec_finish_one(r);
}

void dgr_exec_defer_done(dgr_kdone *d, dg_status st, const dg_error *err)
{
    xdefer *x = (xdefer *)(void *)d;
    dgr_runner *r = x->r;
    dgr_exec *S = r->s;
    const dgc_step *stp = &r->plan->steps[x->s];
    const dgc_node *n = &S->g->nodes[stp->node];
    if (st != DG_OK) {
        dg_error e;
        if (err && strncmp(err->msg, "node '", 6) == 0)
            e = *err;
        else
            dg_err(&e, st, "node '%s': %s", n->name,
                   err && err->msg[0] ? err->msg : "collective failed");
        dgr_exec_fail(r, &e);
    } else if (!atomic_load_explicit(&r->failed, memory_order_acquire)) {
        if (S->trace) {
            /* the collective's time in flight, on the device's
             * "collectives" lane (the allreduce traffic; the worker went on
             * meanwhile); one thread completes them, in order */
            uint64_t t1 = dg_now_ns(), t0 = x->t0;
            if (t0 < S->coll_end)
                t0 = S->coll_end;
            if (t1 <= t0)
                t1 = t0 + 1;
            S->coll_end = t1;
            r->t_start[x->s] = t0;
            r->t_end[x->s] = t1;
            r->lane[x->s] = DGR_LANE_COLL;
            dgr_trace_op(S->trace, stp->device, DGR_LANE_COLL, n->name,
                         dgc_node_op_name(n), r->step, t0, t1,
                         S->in_names[stp->node], n->n_inputs,
                         r->key_base + (uint32_t)x->s);
            dgr_exec_trace_flows(r, stp, DGR_LANE_COLL);
        }
        dgr_exec_release_inputs(r, stp);
        for (int k = 0; k < stp->n_out; k++)
            if (atomic_load_explicit(&r->uses[stp->out_slot + k],
                                     memory_order_relaxed) == 0) {
                dgr_buffer_release(r->values[stp->out_slot + k].buf);
                r->values[stp->out_slot + k].buf = NULL;
            }
        dgr_exec_signal_succ(r, &r->plan->succ[stp->succ_off], stp->n_succ);
    }
    dgr_exec_finish_one(r);
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
    if (d->be->streams->notify(d, r->qidx[s], &x->base,
                               &r->notify_ev[s]) == 0)
        return;
    dg_error e;
    int ok = d->be->sync(d, &e) == DG_OK;
    x->base.fn(&x->base, ok);
}

void dgr_exec_task(void *ctx, int32_t item, int lane)
{
    dgr_runner *r = ctx;
    if (r->fx) { /* issue 11: control flow */
        dgr_fx_task(r, item, lane);
        return;
    }
    const dgc_plan *p = r->plan;
    int32_t s = item;
    uint64_t tchain = 0;
    /* Each queued step holds one unit of r->outstanding; the successor a
     * worker runs next itself inherits the unit of the step before it. */
    while (s >= 0) {
        const dgc_step *st = &p->steps[s];
        if (st->kind > DGC_STEP_TRANSFER) { /* SEND/RECV: a message holds
                                               the unit */
            dgr_exec_net_task(r, s, lane);
            return;
        }
        wscratch *w = &r->scratch[r->s->lane_base[st->device] + lane];
        int32_t next = -1;
        if (!atomic_load_explicit(&r->failed, memory_order_acquire)) {
            dg_status rc;
            int deferred = 0;
            if (st->kind == DGC_STEP_OP) {
                rc = run_op(r, s, lane, w, &tchain, &deferred);
                if (rc == DG_OK && deferred)
                    return; /* its completion holds the unit */
            } else {
                rc = run_transfer(r, s, lane, w);
                tchain = 0;
            }
            if (rc != DG_OK) {
                if (w->err.code == DG_OK)
                    dg_err(&w->err, rc, "node '%s': failed",
                           r->s->g->nodes[st->node].name);
                dgr_exec_fail(r, &w->err);
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
            dgr_exec_finish_one(r);
        s = next;
    }
}

/* Record the device times of ops on devices with streams once the devices
 * are idle. */
static void trace_stream_events(dgr_runner *r)
{
    dgr_exec *S = r->s;
    const dgc_plan *p = r->plan;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dgc_step *st = &p->steps[i];
        const dgr_stream_ops *so = S->devs[st->device].be->streams;
        if (st->kind != DGC_STEP_OP || !so)
            continue;
        const dgc_node *n = &S->g->nodes[st->node];
        uint64_t a = r->t_start[i], b = r->t_end[i];
        int lane = DGR_LANE_HOST; /* host times unless the device's */
        if (r->events[i]) {
            uint64_t ea = 0, eb = 0;
            if (so->event_times(&S->devs[st->device], r->events[i], &ea,
                                &eb) &&
                ea && eb >= ea) {
                a = ea;
                b = eb;
                lane = r->qidx[i];
            }
            so->event_release(r->events[i]);
            r->events[i] = NULL;
        }
        if (a || b)
            dgr_trace_op(S->trace, st->device, lane, n->name,
                         dgc_node_op_name(n), r->step, a, b,
                         S->in_names[st->node], n->n_inputs,
                         r->key_base + (uint32_t)i);
    }
}

dg_status dgr_runner_run(dgr_runner *r, int64_t step, dg_tensor **fetched,
                         dg_error *err)
{
    if (r->fx) /* issue 11: control flow */
        return dgr_fx_run(r, step, fetched, err);
    dgr_exec *S = r->s;
    const dgc_plan *p = r->plan;
    dg_status rc = DG_OK;
    if (!r->async) /* async runs go on beside each other (exec.h) */
        pthread_mutex_lock(&S->run_mu);
    atomic_fetch_add(&S->run_counter, 1);
    r->runs++;
    r->step = step;
    if (S->trace)
        r->key_base = dgr_trace_keys(S->trace, (uint32_t)p->n_steps);
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
        for (int32_t i = 0; i < p->n_roots; i++) {
            int32_t t = p->roots[i];
            if (p->steps[t].kind == DGC_STEP_RECV)
                dgr_exec_net_start(r, t);
            else
                dgr_ipool_push(S->pools[p->steps[t].device], r, t);
        }
        pthread_mutex_lock(&r->mu);
        while (!r->done)
            pthread_cond_wait(&r->cv, &r->mu);
        pthread_mutex_unlock(&r->mu);
    }
    if (atomic_load(&r->failed)) {
        rc = r->err.code ? r->err.code : DG_E_RUNTIME;
        if (err)
            *err = r->err;
        if (r->xm) {
            /* a cluster run that failed: steps and messages may still be
             * in flight and never complete; the caller ends the job (SPEC
             * 8.3), so leave everything as it is */
            if (!r->async)
                pthread_mutex_unlock(&S->run_mu);
            return rc;
        }
    }
    rc = dgr_exec_sync_devices(S, rc, err);
    if (r->notify_ev)
        for (int32_t i = 0; i < p->n_steps; i++)
            if (r->notify_ev[i]) {
                dgr_exec_event_release(S, p->steps[i].device,
                                       r->notify_ev[i]);
                r->notify_ev[i] = NULL;
            }
    if (r->qev)
        for (int32_t i = 0; i < p->n_steps; i++)
            if (r->qev[i]) {
                dgr_exec_event_release(S, p->steps[i].device, r->qev[i]);
                r->qev[i] = NULL;
            }
    if (S->trace)
        trace_stream_events(r);
    if (fetched)
        for (int i = 0; i < p->n_fetch; i++)
            fetched[i] = NULL;
    if (rc == DG_OK && fetched) {
        for (int i = 0; i < p->n_fetch && rc == DG_OK; i++) {
            int32_t sl = p->fetch_slots[i];
            const dgr_value *v = &r->values[sl];
            if (p->slots[sl].step < 0)
                continue; /* on another rank: dgr_exec_net_gather */
            dg_tensor *t = dg_tensor_new(v->dtype, &v->shape);
            if (!t) {
                rc = dg_err_nomem(err, "fetched tensor");
                break;
            }
            int64_t numel = dg_shape_numel(&v->shape);
            size_t n = (size_t)numel * dg_dtype_size(v->dtype);
            if (n && v->buf) {
                dgr_device *d = &S->devs[p->slots[sl].device];
                rc = d->be->read(d, v->buf, t->data, n, err);
            }
            fetched[i] = t;
        }
        if (rc == DG_OK && r->xm && !r->async)
            rc = dgr_exec_net_gather(r, fetched, err);
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
    /* the devices are idle: what the run released is free for any stream
     * (a transfer of the next run may reuse it at once) */
    for (int d = 0; d < S->n_dev; d++)
        if (S->devs[d].be->streams)
            S->devs[d].be->streams->idle(&S->devs[d]);
    if (S->trace)
        for (int d = 0; d < S->n_dev; d++)
            trace_memory(S, d, dg_now_ns(), 1);
    if (!r->async)
        pthread_mutex_unlock(&S->run_mu);
    return rc;
}
