/*
 * exec_net.c -- the executor's half of a cluster run (SPEC 8.3): SEND and
 * RECV steps of a localized plan (compiler/plan_local.c) as messages of
 * the world's transport (runtime/mpi/ provides it; the executor sees only
 * the dgr_transport table).  Completion drives dependency counting: a SEND
 * holds its unit of outstanding work until its message is sent, a RECV is
 * posted when the run starts and signals its successors when its message
 * has arrived, so no worker ever blocks on the network.  A value for a
 * device without host memory is staged in this rank's CPU:0 memory.
 * Fetched values held by other ranks go to rank 0 after the run.
 */
#include "exec_priv.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <stdio.h>
#include <string.h>

/* Tags of the transport's between-runs channel: fetched value i of a run. */
#define NET_TAG_FETCH 1

static void net_fail(dgr_runner *r, int32_t s, const char *why)
{
    const dgc_step *st = &r->plan->steps[s];
    dg_error e;
    dg_err(&e, DG_E_RUNTIME, "node '%s': %s edge %d %s rank %d: %s",
           r->s->g->nodes[st->node].name,
           st->kind == DGC_STEP_SEND ? "sending" : "receiving", st->tag,
           st->kind == DGC_STEP_SEND ? "to" : "from", st->peer, why);
    dgr_exec_fail(r, &e);
}

/* The slice of a message, [m->t0, now], on the network lane of this
 * rank's device (called on the transport's thread, in completion order:
 * a slice starts no earlier than the previous one ended, so they nest in
 * no one and overlap nothing). */
static void net_times(dgr_runner *r, xmsg *m)
{
    dgr_exec *S = r->s;
    if (!S->trace)
        return;
    uint64_t now = dg_now_ns();
    if (m->t0 < S->net_end)
        m->t0 = S->net_end;
    m->t1 = now > m->t0 ? now : m->t0 + 1;
    S->net_end = m->t1;
}

/* Record the slice ("MemcpyRemote") and the flows into it. */
static void net_trace(dgr_runner *r, int32_t s, xmsg *m, int64_t bytes)
{
    dgr_exec *S = r->s;
    if (!S->trace)
        return;
    const dgc_step *st = &r->plan->steps[s];
    const char *tn = st->kind == DGC_STEP_SEND && st->n_in
                         ? dgr_exec_slot_name(r, r->plan->in_slots[st->in_off])
                         : S->g->nodes[st->node].name;
    /* src_device of a SEND/RECV is the device at the other end */
    int src = st->kind == DGC_STEP_SEND ? st->device : st->src_device;
    int dst = st->kind == DGC_STEP_SEND ? st->src_device : st->device;
    r->t_start[s] = m->t0;
    r->t_end[s] = m->t1;
    r->lane[s] = DGR_LANE_NET;
    dgr_trace_memcpy_remote(S->trace, src, dst, st->kind == DGC_STEP_SEND,
                            tn, bytes, r->step, m->t0, m->t1,
                            r->key_base + (uint32_t)s);
    if (st->kind == DGC_STEP_SEND)
        dgr_exec_trace_flows(r, st, DGR_LANE_NET);
}

/* ---- SEND ------------------------------------------------------------------ */

static void send_done(dgr_xreq *q, int ok)
{
    xmsg *m = (xmsg *)(void *)q;
    dgr_runner *r = m->r;
    const dgc_step *st = &r->plan->steps[m->s];
    if (!ok) {
        net_fail(r, m->s, "the message failed");
    } else if (!atomic_load_explicit(&r->failed, memory_order_acquire)) {
        net_times(r, m);
        net_trace(r, m->s, m, q->hdr.bytes);
        dgr_exec_signal_succ(r, &r->plan->succ[st->succ_off], st->n_succ);
    }
    dgr_buffer_release(m->buf);
    m->buf = NULL;
    dgr_exec_finish_one(r);
}

static void run_send(dgr_runner *r, int32_t s)
{
    dgr_exec *S = r->s;
    const dgc_step *st = &r->plan->steps[s];
    xmsg *m = &r->xm[s];
    dgr_xhdr *h = &m->q.hdr;
    m->t0 = S->trace ? dg_now_ns() : 0;
    memset(h, 0, sizeof *h);
    m->q.peer = st->peer;
    m->q.tag = r->tag_base + st->tag;
    m->q.data = NULL;
    m->q.done = send_done;
    m->buf = NULL;
    h->run = dgr_exec_msg_run(r);
    h->tag = m->q.tag;
    h->from = S->rank;
    h->dtype = -1;
    if (st->n_in == 1) {
        const dgr_value *v = &r->values[r->plan->in_slots[st->in_off]];
        size_t n = v->buf ? v->buf->nbytes : 0;
        int64_t numel = dg_shape_numel(&v->shape);
        if (numel >= 0 && (size_t)numel * dg_dtype_size(v->dtype) < n)
            n = (size_t)numel * dg_dtype_size(v->dtype);
        h->dtype = v->dtype;
        h->rank = v->shape.rank;
        memcpy(h->dims, v->shape.dims, sizeof h->dims);
        h->bytes = (int64_t)n;
        dgr_device *sd = &S->devs[st->device];
        if (n && sd->be->host_memory && !r->state_mu) {
            m->buf = v->buf;
            dgr_buffer_retain(m->buf);
        } else if (n && sd->be->host_memory) {
            /* an async run (SPEC 8.4): a snapshot taken between two
             * replicas' updates, never part of one (a Variable's buffer
             * may be updated while the message is on its way) */
            dg_error e;
            m->buf = dgr_buffer_new(&S->devs[S->host_dev], n, -1, &e);
            if (!m->buf) {
                dgr_exec_fail(r, &e);
                dgr_exec_finish_one(r);
                return;
            }
            pthread_mutex_lock(r->state_mu);
            memcpy(m->buf->host, v->buf->host, n);
            pthread_mutex_unlock(r->state_mu);
        } else if (n) { /* stage through this rank's host memory */
            dg_error e;
            m->buf = dgr_buffer_new(&S->devs[S->host_dev], n, -1, &e);
            if (!m->buf || sd->be->read(sd, v->buf, m->buf->host, n, &e)) {
                dgr_exec_fail(r, &e);
                dgr_exec_finish_one(r);
                return;
            }
        }
        m->q.data = m->buf ? m->buf->host : NULL;
    }
    dgr_exec_release_inputs(r, st);
    h->t_send = dg_now_ns();
    S->xport->post_send(S->xport, &m->q);
}

/* ---- RECV ------------------------------------------------------------------ */

static void *recv_place(dgr_xreq *q, size_t bytes)
{
    xmsg *m = (xmsg *)(void *)q;
    dgr_runner *r = m->r;
    dgr_exec *S = r->s;
    const dgc_step *st = &r->plan->steps[m->s];
    m->buf = NULL;
    if (S->trace) /* the receiving end's slice starts when it is there */
        m->t0 = dg_now_ns();
    if (bytes == 0)
        return NULL;
    dgr_device *dd = &S->devs[st->device];
    dgr_device *hd = dd->be->host_memory ? dd : &S->devs[S->host_dev];
    dg_error e;
    m->buf = dgr_buffer_new(hd, bytes, -1, &e);
    if (!m->buf) {
        dgr_exec_fail(r, &e);
        return NULL;
    }
    return m->buf->host;
}

/* Check a received header against the RECV step: the edge, the run
 * (lockstep), value or control, a consistent dtype/shape/size.  0 ok, else
 * the run failed with a message naming the edge. */
static int recv_check(dgr_runner *r, xmsg *m)
{
    const dgc_step *st = &r->plan->steps[m->s];
    const dgr_xhdr *h = &m->q.hdr;
    char why[160];
    why[0] = 0;
    int want_value = st->n_out > 0;
    dg_shape sh;
    sh.rank = h->rank;
    if (h->rank >= 0 && h->rank <= DG_MAX_RANK)
        memcpy(sh.dims, h->dims, sizeof sh.dims);
    int64_t run = dgr_exec_msg_run(r);
    size_t got = m->buf ? m->buf->nbytes : 0;
    if (h->tag != r->tag_base + st->tag)
        snprintf(why, sizeof why, "got edge %d instead", h->tag);
    else if (h->run != run)
        snprintf(why, sizeof why, "got run %lld while running %lld (the "
                 "ranks are not in lockstep)", (long long)h->run,
                 (long long)run);
    else if (want_value != (h->dtype >= 0))
        snprintf(why, sizeof why, "expected %s", want_value
                 ? "a value, got a control message"
                 : "a control message, got a value");
    else if (want_value &&
             (h->dtype >= DG_DTYPE_COUNT || h->rank < 0 ||
              h->rank > DG_MAX_RANK || h->bytes < 0 ||
              (m->buf && got < (size_t)h->bytes) ||
              (dg_shape_numel(&sh) >= 0 &&
               (uint64_t)dg_shape_numel(&sh) * dg_dtype_size(h->dtype) !=
                   (uint64_t)h->bytes)))
        snprintf(why, sizeof why, "malformed header");
    if (!why[0]) {
        m->v.dtype = want_value ? (dg_dtype)h->dtype : DG_F32;
        m->v.shape = sh;
        return 0;
    }
    net_fail(r, m->s, why);
    return -1;
}

/* Make the received value the RECV's slot and signal its successors. */
static void recv_finish(dgr_runner *r, int32_t s, xmsg *m)
{
    dgr_exec *S = r->s;
    const dgc_step *st = &r->plan->steps[s];
    if (st->n_out > 0) {
        dgr_value *out = &r->values[st->out_slot];
        out->dtype = (dg_dtype)m->q.hdr.dtype;
        out->shape = m->v.shape;
        out->buf = NULL;
        dgr_device *dd = &S->devs[st->device];
        if (m->buf && !dd->be->host_memory) { /* staged: to the device */
            dg_error e;
            size_t n = (size_t)m->q.hdr.bytes;
            out->buf = dgr_buffer_new(dd, n, -1, &e);
            if (!out->buf ||
                dd->be->write(dd, out->buf, m->buf->host, n, &e) != DG_OK) {
                dgr_exec_fail(r, &e);
                dgr_buffer_release(m->buf);
                m->buf = NULL;
                return;
            }
            dgr_buffer_release(m->buf);
        } else {
            out->buf = m->buf;
        }
        m->buf = NULL;
        if (atomic_load_explicit(&r->uses[st->out_slot],
                                 memory_order_relaxed) == 0) {
            dgr_buffer_release(out->buf);
            out->buf = NULL;
        }
    }
    net_trace(r, s, m, m->q.hdr.bytes);
    dgr_exec_signal_succ(r, &r->plan->succ[st->succ_off], st->n_succ);
}

static void recv_done(dgr_xreq *q, int ok)
{
    xmsg *m = (xmsg *)(void *)q;
    dgr_runner *r = m->r;
    const dgc_step *st = &r->plan->steps[m->s];
    if (!ok || atomic_load_explicit(&r->failed, memory_order_acquire) ||
        recv_check(r, m)) {
        if (!ok)
            net_fail(r, m->s, "the message failed");
        dgr_buffer_release(m->buf);
        m->buf = NULL;
        dgr_exec_finish_one(r);
        return;
    }
    net_times(r, m);
    if (st->n_out > 0 && m->buf && !r->s->devs[st->device].be->host_memory) {
        /* the device write runs on the device's worker, not here */
        dgr_ipool_push(r->s->pools[st->device], r, m->s);
        return;
    }
    recv_finish(r, m->s, m);
    dgr_exec_finish_one(r);
}

void dgr_exec_net_start(dgr_runner *r, int32_t s)
{
    const dgc_step *st = &r->plan->steps[s];
    xmsg *m = &r->xm[s];
    m->t0 = r->s->trace ? dg_now_ns() : 0;
    m->q.peer = st->peer;
    m->q.tag = r->tag_base + st->tag;
    m->q.data = NULL;
    m->q.place = recv_place;
    m->q.done = recv_done;
    m->buf = NULL;
    r->s->xport->post_recv(r->s->xport, &m->q);
}

void dgr_exec_net_task(dgr_runner *r, int32_t s, int lane)
{
    (void)lane;
    if (atomic_load_explicit(&r->failed, memory_order_acquire)) {
        dgr_exec_finish_one(r);
        return;
    }
    if (r->plan->steps[s].kind == DGC_STEP_SEND) {
        run_send(r, s);
        return;
    }
    recv_finish(r, s, &r->xm[s]); /* a staged value for its device */
    dgr_exec_finish_one(r);
}

/* ---- between runs --------------------------------------------------------- */

dg_status dgr_xport_send_tensor(dgr_transport *t, int peer, int tag,
                                const dg_tensor *v, dg_error *err)
{
    dgr_xhdr h;
    memset(&h, 0, sizeof h);
    h.tag = tag;
    h.from = t->rank;
    h.dtype = v ? (int32_t)v->dtype : -1;
    if (v) {
        h.rank = v->shape.rank;
        memcpy(h.dims, v->shape.dims, sizeof h.dims);
        h.bytes = dg_shape_numel(&v->shape) * (int64_t)dg_dtype_size(v->dtype);
    }
    dg_status st = t->send_msg(t, peer, tag, &h, sizeof h, err);
    if (st == DG_OK && h.bytes > 0)
        st = t->send_msg(t, peer, tag, v->data, (size_t)h.bytes, err);
    return st;
}

dg_status dgr_xport_recv_tensor(dgr_transport *t, int peer, int tag,
                                dg_tensor **out, dg_error *err)
{
    dgr_xhdr h;
    *out = NULL;
    dg_status st = t->recv_msg(t, peer, tag, &h, sizeof h, err);
    if (st != DG_OK || h.dtype < 0)
        return st;
    dg_shape sh;
    sh.rank = h.rank;
    if (h.dtype >= DG_DTYPE_COUNT || h.rank < 0 || h.rank > DG_MAX_RANK)
        return dg_err(err, DG_E_RUNTIME, "rank %d sent a malformed tensor",
                      peer);
    memcpy(sh.dims, h.dims, sizeof sh.dims);
    dg_tensor *v = dg_tensor_new((dg_dtype)h.dtype, &sh);
    if (!v)
        return dg_err_nomem(err, "received tensor");
    int64_t n = dg_shape_numel(&sh) * (int64_t)dg_dtype_size(v->dtype);
    if (n != h.bytes) {
        dg_tensor_free(v);
        return dg_err(err, DG_E_RUNTIME, "rank %d sent a malformed tensor",
                      peer);
    }
    if (n > 0 && (st = t->recv_msg(t, peer, tag, v->data, (size_t)n, err))) {
        dg_tensor_free(v);
        return st;
    }
    *out = v;
    return DG_OK;
}

dg_status dgr_exec_net_gather(dgr_runner *r, dg_tensor **fetched,
                              dg_error *err)
{
    dgr_exec *S = r->s;
    const dgc_plan *p = r->plan;
    dgr_transport *t = S->xport;
    for (int i = 0; i < p->n_fetch; i++) {
        int owner = S->devlist->devs[p->slots[p->fetch_slots[i]].device].rank;
        if (owner == 0)
            continue;
        dg_status st = DG_OK;
        if (S->rank == owner) {
            st = dgr_xport_send_tensor(t, 0, NET_TAG_FETCH, fetched[i], err);
            dg_tensor_free(fetched[i]);
            fetched[i] = NULL;
        } else if (S->rank == 0) {
            st = dgr_xport_recv_tensor(t, owner, NET_TAG_FETCH, &fetched[i],
                                       err);
        }
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}
