/*
 * mpi_collective.c -- the collective runtime of replicated graphs (SPEC
 * 8.4, issue 13): dgr_kenv.collective over MPI.  AllReduce (sum, mean,
 * max, min), its rooted form (MPI_Reduce: Broadcast's gradient) and
 * Broadcast become MPI_Iallreduce / MPI_Ireduce / MPI_Ibcast on a
 * communicator of the replicas' ranks (rank = replica index).
 *
 * Order.  MPI needs every rank to start its collectives in one order, but
 * the replicas' executors finish the collectives' inputs in any order (two
 * inter-op workers, a different schedule per process).  Replica 0
 * coordinates, as Horovod's rank 0 does, without a round of negotiation:
 * each collective it has ready it announces to the others (a small
 * message naming the keys: the op's replica-independent name, hashed) and
 * starts; the others start the announced collectives in announcement
 * order, each when it is ready locally too.  Replica 0 announces only
 * what it has ready, so every announced collective's inputs (even those
 * that depend on earlier collectives) become ready everywhere: no cycle,
 * whatever the schedules.  Kernels never block a worker: they hand the
 * call over with a completion (dgr_collective.done, the executor's
 * deferred steps), so the backward pass goes on while gradients travel.
 *
 * Blocking or not.  The engine thread's own calls may block: with
 * `blocking` (a program whose tasks exchange no messages, as strategy
 * allreduce) it makes blocking MPI_Allreduce/Reduce/Bcast calls, several
 * times faster than the non-blocking forms' progress by MPI_Test on an
 * oversubscribed machine (docs/PERFORMANCE.md); workers still never wait.
 * Otherwise a blocking call holding the MPI lock could keep this rank's
 * transport from sending what another rank needs to reach the same
 * collective, so it uses MPI_Iallreduce/Ireduce/Ibcast and polls.
 *
 * Fusion.  What replica 0 finds ready together (same kind, reduction,
 * dtype; tensors under DGR_FUSE_ALONE, up to DGR_FUSE_BYTES, at most
 * DGR_FUSE_MAX of them) travels as one group: packed into one buffer, one
 * MPI call, unpacked (Horovod's tensor fusion).  One engine thread per
 * process makes these MPI calls under the transport's lock
 * (MPI_THREAD_SERIALIZED).
 */
#include "mpi_layer.h"
#include "dg_alloc.h"

#include <sched.h>
#include <string.h>
#include <time.h>

#define DGR_FUSE_BYTES ((size_t)64 << 20)
#define DGR_FUSE_ALONE ((size_t)1 << 20)
#define DGR_FUSE_MAX 128
#define TAG_ANNOUNCE 1

typedef struct citem {
    dgr_collective c;
    uint64_t h;          /* key hash */
    int scaled;          /* a mean already scaled by 1/W (prescale) */
    int finished;        /* blocking callers: done */
    dg_status st;
    dg_error err;
    struct citem *next;
} citem;

typedef struct cgroup {
    int n, bound;
    uint64_t h[DGR_FUSE_MAX];
    citem *it[DGR_FUSE_MAX];
    void *buf;           /* fusion buffer (n > 1) */
    MPI_Request rq;      /* MPI_REQUEST_NULL after a blocking call */
    struct cgroup *next;
} cgroup;

static struct {
    int on, replica, replicas;
    int blocking;              /* blocking MPI calls (see start) */
    MPI_Comm comm, ctl;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv, donecv;
    citem *ready, *ready_tail; /* submitted (mu) */
    int stop;
    /* the engine thread's own */
    citem *pend, *pend_tail;   /* ready here, in no group yet */
    cgroup *sched, *sched_tail; /* announced, in order, not started */
    cgroup *flight, *flight_tail; /* started, in order */
    int have_thread;
} E;

static uint64_t key_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static void mlock(void)
{
    while (!dgr_mpi_lock(0))
        sched_yield();
}

static MPI_Datatype mpi_type(dg_dtype t)
{
    switch (t) {
    case DG_F32: return MPI_FLOAT;
    case DG_F64: return MPI_DOUBLE;
    case DG_I32: return MPI_INT32_T;
    case DG_I64: return MPI_INT64_T;
    default: return MPI_UINT8_T;
    }
}

static MPI_Op mpi_op(dgr_coll_reduction r)
{
    switch (r) {
    case DGR_COLL_MAX: return MPI_MAX;
    case DGR_COLL_MIN: return MPI_MIN;
    default: return MPI_SUM;
    }
}

static size_t item_bytes(const citem *it)
{
    return (size_t)it->c.n * dg_dtype_size(it->c.dtype);
}

/* Whether a float sum over 3 or more replicas could change bits with
 * the group it travels in: MPI's allreduce algorithms (recursive
 * doubling, ring, Rabenseifner: chosen by message size) add an element's
 * W contributions in an order that follows the message's size and the
 * element's offset, and which tensors replica 0 finds ready together
 * depends on timing.  Alone, a tensor's call has the same size and
 * offsets every run.  With 2 replicas a sum is one addition (a + b ==
 * b + a); max and min and integers do not round.  (Issue 19.) */
static int order_sensitive(const citem *a)
{
    return E.replicas > 2 &&
           (a->c.dtype == DG_F32 || a->c.dtype == DG_F64) &&
           (a->c.reduction == DGR_COLL_SUM || a->c.reduction == DGR_COLL_MEAN);
}

/* Whether b may travel in a's group: small allreduces of one reduction
 * and dtype (a large tensor goes alone, in place: copying it into a
 * fusion buffer would cost more than the latency it saves), and not
 * float sums over 3 or more replicas (order_sensitive: deterministic
 * results). */
static int fusable(const citem *a, const citem *b)
{
    return a->c.kind == DGR_COLL_ALLREDUCE && b->c.kind == DGR_COLL_ALLREDUCE &&
           a->c.reduction == b->c.reduction && a->c.dtype == b->c.dtype &&
           item_bytes(a) < DGR_FUSE_ALONE && item_bytes(b) < DGR_FUSE_ALONE &&
           !order_sensitive(a);
}

/* out / W for a mean (floats: times 1/W). */
static void scale_mean(void *p, int64_t n, dg_dtype t, int w)
{
    switch (t) {
    case DG_F32: { /* times 1/W: one vectorised pass (exact for W = 2^k) */
        float *v = p, r = 1.0f / (float)w;
        for (int64_t i = 0; i < n; i++)
            v[i] *= r;
        break;
    }
    case DG_F64: {
        double *v = p, r = 1.0 / (double)w;
        for (int64_t i = 0; i < n; i++)
            v[i] *= r;
        break;
    }
    case DG_I32: {
        int32_t *v = p;
        for (int64_t i = 0; i < n; i++)
            v[i] /= w;
        break;
    }
    case DG_I64: {
        int64_t *v = p;
        for (int64_t i = 0; i < n; i++)
            v[i] /= w;
        break;
    }
    default: break;
    }
}

/* A float mean is scaled before the sum: dst = src * 1/W in the pass that
 * copies the input anyway (into the output or the fusion buffer), then an
 * in-place MPI sum; exact for W = 2^k, one float rounding otherwise, and
 * the same bits on every replica.  1 if done (float mean), else 0. */
static int prescale(void *dst, const citem *it)
{
    if (it->c.kind != DGR_COLL_ALLREDUCE || it->c.reduction != DGR_COLL_MEAN)
        return 0;
    int64_t n = it->c.n;
    if (it->c.dtype == DG_F32) {
        const float *a = it->c.in;
        float *d = dst, r = 1.0f / (float)E.replicas;
        for (int64_t i = 0; i < n; i++)
            d[i] = a[i] * r;
        return 1;
    }
    if (it->c.dtype == DG_F64) {
        const double *a = it->c.in;
        double *d = dst, r = 1.0 / (double)E.replicas;
        for (int64_t i = 0; i < n; i++)
            d[i] = a[i] * r;
        return 1;
    }
    return 0;
}

static void finish_item(citem *it, dg_status st, const dg_error *err)
{
    if (it->c.done) {
        dgr_kdone *d = it->c.done;
        dg_free(it);
        d->fn(d, st, err);
        return;
    }
    pthread_mutex_lock(&E.mu);
    it->st = st;
    if (err)
        it->err = *err;
    it->finished = 1;
    pthread_cond_broadcast(&E.donecv);
    pthread_mutex_unlock(&E.mu);
}

static void fail_group(cgroup *g, const char *why)
{
    for (int i = 0; i < g->n; i++) {
        dg_error e;
        dg_err(&e, DG_E_RUNTIME, "collective '%s' over %d replicas: %s",
               g->it[i]->c.key, E.replicas, why);
        finish_item(g->it[i], DG_E_RUNTIME, &e);
    }
    dg_free(g->buf);
    dg_free(g);
}

/* Start group g's MPI call.  0 ok, else g failed (and is freed). */
static int start_group(cgroup *g)
{
    citem *a = g->it[0];
    MPI_Datatype t = mpi_type(a->c.dtype);
    int rc;
    if (g->n > 1) {
        size_t total = 0;
        for (int i = 0; i < g->n; i++)
            total += item_bytes(g->it[i]);
        if (!(g->buf = dg_malloc(total ? total : 1))) {
            fail_group(g, "out of memory for the fusion buffer");
            return -1;
        }
        size_t off = 0;
        for (int i = 0; i < g->n; i++) {
            char *dst = (char *)g->buf + off;
            if (!(g->it[i]->scaled = prescale(dst, g->it[i])))
                memcpy(dst, g->it[i]->c.in, item_bytes(g->it[i]));
            off += item_bytes(g->it[i]);
        }
        size_t cnt = total / dg_dtype_size(a->c.dtype);
        if (cnt > INT32_MAX) {
            fail_group(g, "too many elements for one MPI call");
            return -1;
        }
        mlock();
        if (E.blocking)
            rc = MPI_Allreduce(MPI_IN_PLACE, g->buf, (int)cnt, t,
                               mpi_op(a->c.reduction), E.comm);
        else
            rc = MPI_Iallreduce(MPI_IN_PLACE, g->buf, (int)cnt, t,
                                mpi_op(a->c.reduction), E.comm, &g->rq);
        dgr_mpi_unlock();
    } else {
        if (a->c.n > INT32_MAX) {
            fail_group(g, "too many elements for one MPI call");
            return -1;
        }
        int n = (int)a->c.n;
        if (a->c.in != a->c.out && (a->scaled = prescale(a->c.out, a)))
            a->c.in = a->c.out; /* scaled into out: sum in place */
        const void *in = a->c.in == a->c.out ? MPI_IN_PLACE : a->c.in;
        mlock();
        const void *rin = E.replica == a->c.root ? in : a->c.in;
        MPI_Op op = mpi_op(a->c.reduction);
        if (a->c.kind == DGR_COLL_BROADCAST && E.replica == a->c.root &&
            a->c.in != a->c.out)
            memcpy(a->c.out, a->c.in, item_bytes(a));
        switch (a->c.kind) {
        case DGR_COLL_BROADCAST:
            rc = E.blocking ? MPI_Bcast(a->c.out, n, t, a->c.root, E.comm)
                            : MPI_Ibcast(a->c.out, n, t, a->c.root, E.comm,
                                         &g->rq);
            break;
        case DGR_COLL_REDUCE:
            rc = E.blocking ? MPI_Reduce(rin, a->c.out, n, t, op, a->c.root,
                                         E.comm)
                            : MPI_Ireduce(rin, a->c.out, n, t, op, a->c.root,
                                          E.comm, &g->rq);
            break;
        default:
            rc = E.blocking ? MPI_Allreduce(in, a->c.out, n, t, op, E.comm)
                            : MPI_Iallreduce(in, a->c.out, n, t, op, E.comm,
                                             &g->rq);
            break;
        }
        dgr_mpi_unlock();
    }
    if (rc != MPI_SUCCESS) {
        fail_group(g, "the MPI call failed");
        return -1;
    }
    return 0;
}

/* Group g's call completed: results to the items' outputs, completions. */
static void end_group(cgroup *g)
{
    size_t off = 0;
    for (int i = 0; i < g->n; i++) {
        citem *it = g->it[i];
        if (g->buf) {
            memcpy(it->c.out, (char *)g->buf + off, item_bytes(it));
            off += item_bytes(it);
        }
        if (it->c.kind == DGR_COLL_REDUCE && E.replica != it->c.root)
            memset(it->c.out, 0, item_bytes(it));
        else if (it->c.kind != DGR_COLL_BROADCAST &&
                 it->c.reduction == DGR_COLL_MEAN)
            if (!it->scaled)
                scale_mean(it->c.out, it->c.n, it->c.dtype, E.replicas);
        finish_item(it, DG_OK, NULL);
    }
    dg_free(g->buf);
    dg_free(g);
}

static void sched_push(cgroup *g)
{
    g->next = NULL;
    if (E.sched_tail)
        E.sched_tail->next = g;
    else
        E.sched = g;
    E.sched_tail = g;
}

/* Replica 0: everything pending becomes announced groups. */
static int announce(void)
{
    int any = 0;
    while (E.pend) {
        cgroup *g = dg_calloc(1, sizeof *g);
        if (!g)
            return any; /* retried on the next round */
        g->rq = MPI_REQUEST_NULL;
        size_t bytes = 0;
        citem **pp = &E.pend;
        /* the first pending item and the fusable ones after it */
        while (*pp && g->n < DGR_FUSE_MAX) {
            citem *it = *pp;
            if (g->n == 0 || (fusable(g->it[0], it) &&
                              bytes + item_bytes(it) <= DGR_FUSE_BYTES)) {
                *pp = it->next;
                g->it[g->n] = it;
                g->h[g->n++] = it->h;
                bytes += item_bytes(it);
                if (g->it[0]->c.kind != DGR_COLL_ALLREDUCE)
                    break;
                continue;
            }
            pp = &it->next;
        }
        E.pend_tail = NULL;
        for (citem *it = E.pend; it; it = it->next)
            E.pend_tail = it;
        g->bound = g->n;
        uint64_t msg[DGR_FUSE_MAX + 1];
        msg[0] = (uint64_t)g->n;
        memcpy(msg + 1, g->h, sizeof *g->h * (size_t)g->n);
        int rc = MPI_SUCCESS;
        mlock();
        for (int r = 1; r < E.replicas && rc == MPI_SUCCESS; r++)
            rc = MPI_Send(msg, g->n + 1, MPI_UINT64_T, r, TAG_ANNOUNCE,
                          E.ctl);
        dgr_mpi_unlock();
        if (rc != MPI_SUCCESS) {
            fail_group(g, "announcing it failed");
            continue;
        }
        sched_push(g);
        any = 1;
    }
    return any;
}

/* The others: receive replica 0's announcements. */
static int receive_announcements(void)
{
    int any = 0;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        mlock();
        int rc = MPI_Iprobe(0, TAG_ANNOUNCE, E.ctl, &flag, &st);
        uint64_t msg[DGR_FUSE_MAX + 1];
        if (rc == MPI_SUCCESS && flag)
            rc = MPI_Recv(msg, DGR_FUSE_MAX + 1, MPI_UINT64_T, 0,
                          TAG_ANNOUNCE, E.ctl, MPI_STATUS_IGNORE);
        dgr_mpi_unlock();
        if (rc != MPI_SUCCESS || !flag)
            return any;
        cgroup *g = dg_calloc(1, sizeof *g);
        if (!g)
            return any; /* (the job cannot go on: every rank waits) */
        g->rq = MPI_REQUEST_NULL;
        g->n = msg[0] <= DGR_FUSE_MAX ? (int)msg[0] : DGR_FUSE_MAX;
        memcpy(g->h, msg + 1, sizeof *g->h * (size_t)g->n);
        sched_push(g);
        any = 1;
    }
}

/* Bind pending items to the head group's keys. */
static void bind(cgroup *g)
{
    for (int i = g->bound; i < g->n; i++) {
        citem **pp = &E.pend;
        while (*pp && (*pp)->h != g->h[i])
            pp = &(*pp)->next;
        if (!*pp)
            return;
        citem *it = *pp;
        *pp = it->next;
        if (E.pend_tail == it) {
            E.pend_tail = NULL;
            for (citem *p = E.pend; p; p = p->next)
                E.pend_tail = p;
        }
        g->it[i] = it;
        g->bound = i + 1;
    }
}

/* Start the scheduled groups in order while the head is complete. */
static int start_ready(void)
{
    int any = 0;
    while (E.sched) {
        cgroup *g = E.sched;
        bind(g);
        if (g->bound < g->n)
            return any;
        E.sched = g->next;
        if (!E.sched)
            E.sched_tail = NULL;
        any = 1;
        if (start_group(g) != 0)
            continue;
        g->next = NULL;
        if (E.flight_tail)
            E.flight_tail->next = g;
        else
            E.flight = g;
        E.flight_tail = g;
    }
    return any;
}

static int test_flight(void)
{
    int any = 0;
    cgroup **pp = &E.flight;
    E.flight_tail = NULL;
    while (*pp) {
        cgroup *g = *pp;
        int flag = 0;
        mlock();
        int rc = MPI_Test(&g->rq, &flag, MPI_STATUS_IGNORE);
        dgr_mpi_unlock();
        if (rc != MPI_SUCCESS || flag) {
            *pp = g->next;
            any = 1;
            if (rc != MPI_SUCCESS)
                fail_group(g, "the MPI call failed");
            else
                end_group(g);
            continue;
        }
        E.flight_tail = g;
        pp = &g->next;
    }
    return any;
}

static void *engine_main(void *arg)
{
    (void)arg;
    int idle = 0;
    for (;;) {
        pthread_mutex_lock(&E.mu);
        while (!E.stop && !E.ready && !E.pend && !E.flight)
            pthread_cond_wait(&E.cv, &E.mu);
        citem *in = E.ready;
        E.ready = E.ready_tail = NULL;
        int stop = E.stop && !in && !E.pend && !E.flight;
        pthread_mutex_unlock(&E.mu);
        if (stop)
            return NULL;
        int progressed = in != NULL;
        for (citem *it = in, *n; it; it = n) {
            n = it->next;
            it->next = NULL;
            if (E.pend_tail)
                E.pend_tail->next = it;
            else
                E.pend = it;
            E.pend_tail = it;
        }
        if (E.replica == 0)
            progressed |= announce();
        else if (E.pend)
            progressed |= receive_announcements();
        progressed |= start_ready();
        if (E.flight)
            progressed |= test_flight();
        if (progressed) {
            idle = 0;
        } else if (++idle > 2000) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

dg_status dgr_mpi_collective(void *ctx, const dgr_collective *c,
                             dg_error *err)
{
    (void)ctx;
    if (!E.on || E.replica < 0)
        return dg_err(err, DG_E_RUNTIME, "collective '%s': this process "
                      "runs no replica", c->key);
    if (c->replicas != E.replicas || c->replica != E.replica)
        return dg_err(err, DG_E_RUNTIME, "collective '%s' of replica %d of "
                      "%d runs on the process of replica %d of %d", c->key,
                      c->replica, c->replicas, E.replica, E.replicas);
    if (c->kind != DGR_COLL_ALLREDUCE && (c->root < 0 || c->root >= E.replicas))
        return dg_err(err, DG_E_RUNTIME, "collective '%s': root %d is not a "
                      "replica", c->key, c->root);
    citem *it = dg_calloc(1, sizeof *it);
    if (!it)
        return dg_err_nomem(err, "collective");
    it->c = *c;
    it->h = key_hash(c->key);
    dgr_kdone *done = c->done;
    pthread_mutex_lock(&E.mu);
    if (E.ready_tail)
        E.ready_tail->next = it;
    else
        E.ready = it;
    E.ready_tail = it;
    pthread_cond_signal(&E.cv);
    if (done) { /* `it` belongs to the engine now */
        pthread_mutex_unlock(&E.mu);
        return DG_OK;
    }
    while (!it->finished)
        pthread_cond_wait(&E.donecv, &E.mu);
    pthread_mutex_unlock(&E.mu);
    dg_status st = it->st;
    if (st != DG_OK && err)
        *err = it->err;
    dg_free(it);
    return st;
}

dg_status dgr_mpi_collective_start(int replica, int replicas, int blocking,
                                   dg_error *err)
{
    if (E.on)
        return DG_OK;
    memset(&E, 0, sizeof E);
    E.blocking = blocking;
    E.comm = E.ctl = MPI_COMM_NULL;
    E.replica = replica;
    E.replicas = replicas;
    MPI_Comm comm = MPI_COMM_NULL;
    mlock();
    int rc = MPI_Comm_split(MPI_COMM_WORLD, replica >= 0 ? 0 : MPI_UNDEFINED,
                            replica >= 0 ? replica : 0, &comm);
    if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
        rc = MPI_Comm_dup(comm, &E.ctl);
    int size = 0;
    if (rc == MPI_SUCCESS && comm != MPI_COMM_NULL)
        MPI_Comm_size(comm, &size);
    dgr_mpi_unlock();
    if (rc != MPI_SUCCESS)
        return dg_err(err, DG_E_RUNTIME, "MPI_Comm_split for the replicas "
                      "failed");
    E.comm = comm;
    pthread_mutex_init(&E.mu, NULL);
    pthread_cond_init(&E.cv, NULL);
    pthread_cond_init(&E.donecv, NULL);
    E.on = 1;
    if (replica < 0)
        return DG_OK;
    if (size != replicas)
        return dg_err(err, DG_E_RUNTIME, "the replicas' communicator has %d "
                      "ranks, expected %d", size, replicas);
    if (pthread_create(&E.th, NULL, engine_main, NULL) != 0)
        return dg_err(err, DG_E_RUNTIME, "cannot start the collective "
                      "thread");
    E.have_thread = 1;
    return DG_OK;
}

void dgr_mpi_collective_stop(void)
{
    if (!E.on)
        return;
    if (E.have_thread) {
        pthread_mutex_lock(&E.mu);
        E.stop = 1;
        pthread_cond_signal(&E.cv);
        pthread_mutex_unlock(&E.mu);
        pthread_join(E.th, NULL);
    }
    mlock();
    if (E.comm != MPI_COMM_NULL)
        MPI_Comm_free(&E.comm);
    if (E.ctl != MPI_COMM_NULL)
        MPI_Comm_free(&E.ctl);
    dgr_mpi_unlock();
    pthread_mutex_destroy(&E.mu);
    pthread_cond_destroy(&E.cv);
    pthread_cond_destroy(&E.donecv);
    E.on = 0;
}
