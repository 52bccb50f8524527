/*
 * session_ps.c -- a replicated graph with "strategy": "ps" as one rank of
 * its cluster (SPEC 8.4, docs/cluster.md "Running ps under MPI").
 *
 * Which replica this rank runs and which node a section's feed or fetch
 * means on it (`x` is replica_k/x on replica k's task).  Synchronous ps is
 * the cluster runtime running the replicated program in lockstep; this
 * file adds the asynchronous loop: each worker runs its replica's own
 * train op at its own pace, each ps task serves every replica's reads and
 * updates in a thread per replica (runs without lockstep, exec.h), and
 * rank 0 reports progress from the losses the workers send it.
 */
#include "session.h"
#include "dg_alloc.h"
#include "dg_error.h"
#include "dg_util.h"

#include <stdio.h>
#include <string.h>

int32_t dgr_session_replica_node(dgr_session *s, const char *name, int k)
{
    const dgc_graph *g = dgr_session_exec(s)->g;
    int32_t id = dgc_graph_find(g, name);
    if (id >= 0 || g->replicate.replicas <= 0 || strlen(name) > 1000)
        return id;
    char nm[1100];
    snprintf(nm, sizeof nm, "replica_%d/%s", k < 0 ? 0 : k, name);
    return dgc_graph_find(g, nm);
}

int dgr_session_replica_ref(dgr_session *s, const char *name, dgc_ref *out)
{
    const dgc_graph *g = dgr_session_exec(s)->g;
    if (dgc_graph_parse_ref(g, name, out) >= 0 || g->replicate.replicas <= 0 ||
        strlen(name) > 1000)
        return dgc_graph_parse_ref(g, name, out);
    char nm[1100];
    snprintf(nm, sizeof nm, "replica_0/%s", name);
    return dgc_graph_parse_ref(g, nm, out);
}

/* ---- asynchronous ps ------------------------------------------------------ */

/* Message tags of the async loop on the transport's data channel: replica
 * k's runs use [(k+1) << 16, (k+2) << 16) (their edges), the workers'
 * losses to rank 0 (W+1) << 16.  W <= MAX_REPLICAS keeps them below 2^23,
 * under every MPI's MPI_TAG_UB. */
#define TAG_SPAN (1 << 16)
#define MAX_REPLICAS 120
#define TAG_BARRIER 17 /* between runs (session_cluster.c uses 2..6) */

int dgr_session_ps_async(dgr_session *s)
{
    dgr_exec *x = dgr_session_exec(s);
    const dgc_replicate *r = &x->g->replicate;
    return r->present && r->strategy == DGC_REPL_PS && !r->sync &&
           r->replicas > 0 && r->step && x->xport;
}

/* The rank running replica k (its task k of replicate.job). */
static int replica_rank(const dgr_exec *x, int k)
{
    for (int d = 0; d < x->devlist->n; d++) {
        const dg_device_info *di = &x->devlist->devs[d];
        if (di->task == k && !strcmp(di->job, x->g->replicate.job))
            return di->rank;
    }
    return -1;
}

/* A loss message: {replica step, loss}. */
typedef struct lossmsg {
    dgr_xreq q;            /* first: the transport hands back &q */
    struct async_run *a;
    int replica;
    double v[2];
} lossmsg;

typedef struct server {    /* a ps thread running replica k's part */
    struct async_run *a;
    dgr_runner *r;
    pthread_t th;
    int started;
} server;

typedef struct async_run {
    dgr_session *s;
    dgr_exec *x;
    int W, me, rank;
    int64_t first, steps, total;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t done;          /* replica steps reported to rank 0 */
    int64_t expect;        /* ... in all */
    int busy;              /* servers running, sends in flight */
    double *last;          /* [W] each replica's last loss */
    int failed;
    dg_error err;
    lossmsg *in;           /* rank 0: one posted receive per worker */
    lossmsg out;           /* a worker: its loss to rank 0 */
    server *srv;           /* [W] */
    uint64_t t0;
} async_run;

static pthread_mutex_t state_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(async_run *a, const dg_error *e)
{
    pthread_mutex_lock(&a->mu);
    if (!a->failed) {
        a->failed = 1;
        a->err = *e;
    }
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* One replica step reported: under a->mu. */
static void count_step(async_run *a, int k, double loss)
{
    a->done++;
    if (k >= 0 && k < a->W)
        a->last[k] = loss;
    pthread_cond_broadcast(&a->cv);
}

static void *loss_place(dgr_xreq *q, size_t bytes)
{
    lossmsg *m = (lossmsg *)(void *)q;
    return bytes == sizeof m->v ? m->v : NULL;
}

static void loss_recv_done(dgr_xreq *q, int ok)
{
    lossmsg *m = (lossmsg *)(void *)q;
    async_run *a = m->a;
    if (!ok || q->hdr.bytes != (int64_t)sizeof m->v) {
        dg_error e;
        dg_err(&e, DG_E_RUNTIME, "replica %d: its loss message to rank 0 "
               "failed", m->replica);
        fail(a, &e);
        return;
    }
    pthread_mutex_lock(&a->mu);
    count_step(a, m->replica, m->v[1]);
    int more = (int64_t)m->v[0] + 1 < a->first + a->steps;
    pthread_mutex_unlock(&a->mu);
    if (more)
        a->x->xport->post_recv(a->x->xport, q);
}

static void loss_send_done(dgr_xreq *q, int ok)
{
    lossmsg *m = (lossmsg *)(void *)q;
    async_run *a = m->a;
    if (!ok) {
        dg_error e;
        dg_err(&e, DG_E_RUNTIME, "replica %d: cannot send its loss to rank 0",
               m->replica);
        fail(a, &e);
    }
    pthread_mutex_lock(&a->mu);
    a->busy--;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* Rank 0: a receive for each worker's losses (other than its own). */
static void post_loss_recvs(async_run *a)
{
    for (int k = 0; k < a->W; k++) {
        int rk = replica_rank(a->x, k);
        if (rk <= 0 || a->steps <= 0)
            continue;
        lossmsg *m = &a->in[k];
        memset(m, 0, sizeof *m);
        m->a = a;
        m->replica = k;
        m->q.peer = rk;
        m->q.tag = (a->W + 1) * TAG_SPAN;
        m->q.place = loss_place;
        m->q.done = loss_recv_done;
        a->x->xport->post_recv(a->x->xport, &m->q);
    }
}

/* A worker: send step k's loss to rank 0 (after the previous one left). */
static void send_loss(async_run *a, int64_t k, double loss)
{
    pthread_mutex_lock(&a->mu);
    while (a->busy > 0 && !a->failed)
        pthread_cond_wait(&a->cv, &a->mu);
    a->busy++;
    pthread_mutex_unlock(&a->mu);
    lossmsg *m = &a->out;
    memset(&m->q, 0, sizeof m->q);
    m->a = a;
    m->replica = a->me;
    m->v[0] = (double)k;
    m->v[1] = loss;
    m->q.peer = 0;
    m->q.tag = (a->W + 1) * TAG_SPAN;
    m->q.hdr.tag = m->q.tag;
    m->q.hdr.from = a->rank;
    m->q.hdr.dtype = DG_F64;
    m->q.hdr.rank = 1;
    m->q.hdr.dims[0] = 2;
    m->q.hdr.bytes = (int64_t)sizeof m->v;
    m->q.data = m->v;
    m->q.done = loss_send_done;
    a->x->xport->post_send(a->x->xport, &m->q);
}

static void *serve_main(void *arg)
{
    server *v = arg;
    async_run *a = v->a;
    dg_error e;
    e.code = DG_OK;
    for (int64_t k = a->first; k < a->first + a->steps; k++) {
        pthread_mutex_lock(&a->mu);
        int stop = a->failed;
        pthread_mutex_unlock(&a->mu);
        if (stop || dgr_runner_run(v->r, k, NULL, &e) != DG_OK)
            break;
    }
    if (e.code != DG_OK)
        fail(a, &e);
    pthread_mutex_lock(&a->mu);
    a->busy--;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Replica k's runner: its loss and its own train op, runs of its own. */
static dgr_runner *replica_runner(async_run *a, int k, dg_error *err)
{
    const dgc_graph *g = a->x->g;
    const dgc_replicate *rp = &g->replicate;
    int32_t l = g->train.loss_node;
    dgc_ref lref = {l >= 0 && l < rp->n_orig
                        ? rp->copy[(size_t)k * (size_t)rp->n_orig + (size_t)l]
                        : l,
                    0};
    dgr_runner *r = dgr_session_runner(a->s, &lref, 1, &rp->step[k], 1, err);
    if (r && dgr_runner_set_async(r, (k + 1) * TAG_SPAN, TAG_SPAN, &state_mu,
                                  err) != DG_OK) {
        dgr_runner_free(r);
        r = NULL;
    }
    return r;
}

/* Rank 0's progress for the steps reported since `shown`. */
static void report(async_run *a, int64_t *shown, dg_progress_fn progress,
                   void *user)
{
    pthread_mutex_lock(&a->mu);
    int64_t done = a->done;
    double loss = a->last[0];
    pthread_mutex_unlock(&a->mu);
    for (; progress && *shown < done; (*shown)++) {
        dg_train_progress pr = {a->first * a->W + *shown + 1,
                                a->total * a->W, loss,
                                (double)(dg_now_ns() - a->t0) * 1e-9,
                                0, 0}; /* global steps already */
        progress(&pr, user);
    }
}

/* Every rank waits here until every rank came (rank 0 hears from all,
 * then answers all); between runs, on the blocking channel. */
static dg_status barrier(dgr_transport *t, dg_error *err)
{
    int64_t v = 0;
    dg_status st = DG_OK;
    if (t->rank != 0) {
        st = t->send_msg(t, 0, TAG_BARRIER, &v, sizeof v, err);
        return st ? st : t->recv_msg(t, 0, TAG_BARRIER, &v, sizeof v, err);
    }
    for (int r = 1; r < t->size && st == DG_OK; r++)
        st = t->recv_msg(t, r, TAG_BARRIER, &v, sizeof v, err);
    for (int r = 1; r < t->size && st == DG_OK; r++)
        st = t->send_msg(t, r, TAG_BARRIER, &v, sizeof v, err);
    return st;
}

dg_status dgr_session_train_async(dgr_session *s, const dgr_async_args *aa,
                                  double *loss, dg_error *err)
{
    int64_t first = aa->first, steps = aa->steps;
    dg_progress_fn progress = aa->progress;
    void *user = aa->user;
    int W = dgr_replica_count(dgr_session_exec(s)->g);
    if (W > MAX_REPLICAS)
        return dg_err(err, DG_E_USAGE, "asynchronous ps training runs at most "
                      "%d replicas, the cluster has %d", MAX_REPLICAS, W);
    /* on the heap: after a failure the caller ends the job while threads
     * and messages may still use it, so it is then left alone */
    async_run *a = dg_calloc(1, sizeof *a);
    if (!a)
        return dg_err_nomem(err, "asynchronous training");
    a->s = s;
    a->x = dgr_session_exec(s);
    a->rank = a->x->rank;
    a->me = dgr_session_replica(s);
    a->W = W;
    a->first = first;
    a->steps = steps;
    a->total = aa->total;
    a->t0 = aa->t0;
    *loss = 0.0;
    uint64_t c0 = atomic_load(&a->x->run_counter);
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    a->last = dg_calloc((size_t)a->W, sizeof *a->last);
    a->in = dg_calloc((size_t)a->W, sizeof *a->in);
    a->srv = dg_calloc((size_t)a->W, sizeof *a->srv);
    dg_status st = DG_OK;
    dgr_runner *mine = NULL;
    if (!a->last || !a->in || !a->srv) {
        st = dg_err_nomem(err, "asynchronous training");
        goto out;
    }
    a->expect = a->rank == 0 ? a->W * steps : 0;
    if (a->rank == 0)
        post_loss_recvs(a);
    if (a->me < 0) { /* a ps (or other) task: serve every replica */
        for (int k = 0; k < a->W && st == DG_OK; k++) {
            server *v = &a->srv[k];
            v->a = a;
            if (!(v->r = replica_runner(a, k, err)))
                st = err->code ? err->code : DG_E_RUNTIME;
            else if (dgr_runner_is_empty(v->r) || steps <= 0)
                continue;
            else if (pthread_create(&v->th, NULL, serve_main, v) != 0)
                st = dg_err(err, DG_E_RUNTIME, "cannot start a ps thread");
            else {
                v->started = 1;
                pthread_mutex_lock(&a->mu);
                a->busy++;
                pthread_mutex_unlock(&a->mu);
            }
        }
    } else if (!(mine = replica_runner(a, a->me, err))) {
        st = err->code ? err->code : DG_E_RUNTIME;
    }
    int64_t shown = 0;
    for (int64_t k = first; mine && st == DG_OK && k < first + steps; k++) {
        dg_tensor *lt = NULL;
        if ((st = aa->feed(aa->feed_user, k, err)) != DG_OK ||
            (st = dgr_runner_run(mine, k, &lt, err)) != DG_OK)
            break;
        double l = lt && lt->dtype == DG_F32 ? *(const float *)lt->data
                   : lt && lt->dtype == DG_F64 ? *(const double *)lt->data
                                               : 0.0;
        dg_tensor_free(lt);
        *loss = l;
        if (a->rank != 0) {
            send_loss(a, k, l);
        } else {
            pthread_mutex_lock(&a->mu);
            count_step(a, a->me, l);
            pthread_mutex_unlock(&a->mu);
            report(a, &shown, progress, user);
        }
        pthread_mutex_lock(&a->mu);
        if (a->failed) {
            *err = a->err;
            st = a->err.code ? a->err.code : DG_E_RUNTIME;
        }
        pthread_mutex_unlock(&a->mu);
    }
    /* wait for the servers, the last loss sent, and (rank 0) every loss */
    pthread_mutex_lock(&a->mu);
    while (st == DG_OK && !a->failed && (a->busy > 0 || a->done < a->expect)) {
        pthread_mutex_unlock(&a->mu);
        report(a, &shown, progress, user);
        pthread_mutex_lock(&a->mu);
        if (!a->failed && (a->busy > 0 || a->done < a->expect) &&
            a->done == shown)
            pthread_cond_wait(&a->cv, &a->mu);
    }
    if (st == DG_OK && a->failed) {
        *err = a->err;
        st = a->err.code ? a->err.code : DG_E_RUNTIME;
    }
    pthread_mutex_unlock(&a->mu);
    if (st != DG_OK)
        return st; /* the caller ends the job (SPEC 8.3): threads and
                      messages stay as they are */
    report(a, &shown, progress, user);
    if (a->rank == 0)
        *loss = a->last[0];
    for (int k = 0; k < a->W; k++)
        if (a->srv[k].started)
            pthread_join(a->srv[k].th, NULL);
    st = barrier(a->x->xport, err);
    /* the ranks ran different numbers of runs: agree again (lockstep) */
    atomic_store(&a->x->run_counter, c0 + (uint64_t)(a->W * steps));
out:
    for (int k = 0; a->srv && k < a->W; k++)
        dgr_runner_free(a->srv[k].r);
    dgr_runner_free(mine);
    dg_free(a->srv);
    dg_free(a->in);
    dg_free(a->last);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    dg_free(a);
    return st;
}
