/*
 * mpi_transport.c -- the executor's transport (exec.h: dgr_transport) over
 * MPI.  One progress thread makes every MPI call of a run: workers post
 * requests into a queue; the thread matches receives with MPI_Improbe
 * (the payload's size is known before it is read, so the receiver
 * allocates exactly, even for shapes known only at run time), reads them
 * with MPI_Imrecv, sends with MPI_Isend, and drives completion with
 * MPI_Testsome, calling each request's done() -- which signals the
 * executor's successors.  A message is the header and the payload in one
 * MPI message (an hindexed datatype over both: no copy).  Between runs the
 * main thread makes blocking calls on a communicator of its own; one mutex
 * keeps MPI calls serialized (MPI_THREAD_SERIALIZED is all it needs).
 */
#include "mpi_layer.h"
#include "dg_alloc.h"

#include <limits.h>
#include <stdint.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

typedef struct mpix {
    dgr_transport base;
    MPI_Comm data, ctl;
    pthread_mutex_t qmu;     /* the incoming queue */
    pthread_cond_t qcv;
    dgr_xreq *incoming;      /* posted, LIFO */
    _Atomic(dgr_xreq *) peek; /* non-NULL when incoming may be non-empty */
    pthread_mutex_t mpimu;   /* every MPI call */
    pthread_t th;
    int started, stop;
    /* the thread's own state */
    dgr_xreq **probe;        /* receives waiting for their message */
    int n_probe, cap_probe;
    MPI_Request *req;        /* active MPI requests */
    dgr_xreq **act;
    int n_act, cap_act;
    int *idx;
    MPI_Status *sts;
} mpix;

static mpix X;

static int grow(void **p, int *cap, int need, size_t elt)
{
    if (need <= *cap)
        return 0;
    int nc = *cap ? *cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    void *np = dg_realloc(*p, elt * (size_t)nc);
    if (!np)
        return -1;
    *p = np;
    *cap = nc;
    return 0;
}

static int add_active(mpix *x, MPI_Request rq, dgr_xreq *q)
{
    int cap = x->cap_act;
    if (grow((void **)&x->req, &cap, x->n_act + 1, sizeof *x->req))
        return -1;
    cap = x->cap_act;
    if (grow((void **)&x->act, &cap, x->n_act + 1, sizeof *x->act))
        return -1;
    cap = x->cap_act;
    if (grow((void **)&x->idx, &cap, x->n_act + 1, sizeof *x->idx))
        return -1;
    cap = x->cap_act;
    if (grow((void **)&x->sts, &cap, x->n_act + 1, sizeof *x->sts))
        return -1;
    x->cap_act = cap;
    x->req[x->n_act] = rq;
    x->act[x->n_act] = q;
    x->n_act++;
    return 0;
}

/* A datatype covering the header and n payload bytes at data. */
static int msg_type(dgr_xhdr *h, void *data, size_t n, MPI_Datatype *t)
{
    if (n > INT_MAX)
        return -1;
    int len[2] = {(int)sizeof *h, (int)n};
    MPI_Aint disp[2];
    MPI_Get_address(h, &disp[0]);
    if (n)
        MPI_Get_address(data, &disp[1]);
    if (MPI_Type_create_hindexed(n ? 2 : 1, len, disp, MPI_BYTE, t) !=
        MPI_SUCCESS)
        return -1;
    return MPI_Type_commit(t) == MPI_SUCCESS ? 0 : -1;
}

/* Payloads up to SPLIT bytes travel with their header in one message (an
 * hindexed datatype over both: no copy, one latency); larger ones as the
 * header and then the payload, contiguous, with the same tag (MPI keeps
 * their order), so the library's fast paths for large contiguous buffers
 * apply.  A request's impl counts its MPI requests still active. */
#define SPLIT (64 * 1024)

static void finished(dgr_xreq **fin, dgr_xreq *q)
{
    q->next = *fin;
    *fin = q;
}

static void start_send(mpix *x, dgr_xreq *q, dgr_xreq **fin)
{
    size_t n = (size_t)q->hdr.bytes;
    MPI_Request rq[2];
    int rc, nrq = 1;
    if (n <= SPLIT) {
        MPI_Datatype t;
        if (msg_type(&q->hdr, (void *)q->data, n, &t)) {
            q->done(q, 0);
            return;
        }
        rc = MPI_Isend(MPI_BOTTOM, 1, t, q->peer, q->tag, x->data, &rq[0]);
        MPI_Type_free(&t);
    } else if (n > INT_MAX) {
        q->done(q, 0);
        return;
    } else {
        nrq = 2;
        rc = MPI_Isend(&q->hdr, (int)sizeof q->hdr, MPI_BYTE, q->peer,
                       q->tag, x->data, &rq[0]);
        if (rc == MPI_SUCCESS)
            rc = MPI_Isend(q->data, (int)n, MPI_BYTE, q->peer, q->tag,
                           x->data, &rq[1]);
    }
    q->impl = (void *)(uintptr_t)nrq;
    for (int i = 0; rc == MPI_SUCCESS && i < nrq; i++)
        if (add_active(x, rq[i], q))
            rc = MPI_ERR_OTHER;
    if (rc != MPI_SUCCESS) {
        (void)fin;
        q->done(q, 0); /* (the job ends: the caller aborts) */
    }
}

/* A receive whose message is there: read it.  1 if matched. */
static int try_recv(mpix *x, dgr_xreq *q, dgr_xreq **fin)
{
    int flag = 0;
    MPI_Message msg;
    MPI_Status st;
    if (MPI_Improbe(q->peer, q->tag, x->data, &flag, &msg, &st) !=
            MPI_SUCCESS ||
        !flag)
        return 0;
    int cnt = 0;
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    if (cnt == (int)sizeof(dgr_xhdr)) {
        /* the header alone: a control edge, or a large payload follows */
        MPI_Mrecv(&q->hdr, cnt, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        size_t n = q->hdr.bytes > 0 ? (size_t)q->hdr.bytes : 0;
        void *dst = q->place(q, n > SPLIT ? n : 0);
        if (n <= SPLIT) {
            finished(fin, q);
            return 1;
        }
        MPI_Request rq;
        if (!dst || n > INT_MAX ||
            MPI_Irecv(dst, (int)n, MPI_BYTE, q->peer, q->tag, x->data,
                      &rq) != MPI_SUCCESS ||
            add_active(x, rq, q)) {
            q->done(q, 0);
            return 1;
        }
        q->impl = (void *)(uintptr_t)1;
        return 1;
    }
    size_t n = cnt > (int)sizeof(dgr_xhdr) ? (size_t)cnt - sizeof(dgr_xhdr)
                                           : 0;
    void *dst = q->place(q, n);
    MPI_Datatype t;
    MPI_Request rq;
    if ((n && !dst) || cnt < (int)sizeof(dgr_xhdr) ||
        msg_type(&q->hdr, dst, n, &t)) {
        char sink[1];
        MPI_Mrecv(sink, 0, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
        q->done(q, 0);
        return 1;
    }
    int rc = MPI_Imrecv(MPI_BOTTOM, 1, t, &msg, &rq);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS || add_active(x, rq, q)) {
        q->done(q, 0);
        return 1;
    }
    q->impl = (void *)(uintptr_t)1;
    return 1;
}

static void *progress_main(void *arg)
{
    mpix *x = arg;
    int idle = 0;
    for (;;) {
        dgr_xreq *in = NULL;
        if (x->n_probe == 0 && x->n_act == 0)
            /* idle: a next request usually follows soon (the next step
             * of a run); look for it a little before sleeping */
            for (int k = 0; k < 4000 && !atomic_load_explicit(
                                            &x->peek, memory_order_acquire);
                 k++)
                if ((k & 255) == 255)
                    sched_yield();
        if (atomic_load_explicit(&x->peek, memory_order_acquire) ||
            (x->n_probe == 0 && x->n_act == 0)) {
            pthread_mutex_lock(&x->qmu);
            while (!x->stop && !x->incoming && x->n_probe == 0 &&
                   x->n_act == 0)
                pthread_cond_wait(&x->qcv, &x->qmu);
            in = x->incoming;
            x->incoming = NULL;
            atomic_store_explicit(&x->peek, NULL, memory_order_release);
            int stop = x->stop && !in && x->n_probe == 0 && x->n_act == 0;
            pthread_mutex_unlock(&x->qmu);
            if (stop)
                return NULL;
        }
        /* posted in LIFO order: restore FIFO (per (peer, tag) order) */
        dgr_xreq *fifo = NULL;
        while (in) {
            dgr_xreq *n = in->next;
            in->next = fifo;
            fifo = in;
            in = n;
        }
        int progressed = fifo != NULL;
        pthread_mutex_lock(&x->mpimu);
        for (dgr_xreq *q = fifo, *n; q; q = n) {
            n = q->next;
            if (q->place) {
                int cap = x->cap_probe;
                if (grow((void **)&x->probe, &cap, x->n_probe + 1,
                         sizeof *x->probe)) {
                    q->done(q, 0);
                    continue;
                }
                x->cap_probe = cap;
                x->probe[x->n_probe++] = q;
            } else {
                start_send(x, q, &in);
            }
        }
        for (int i = 0; i < x->n_probe;) {
            if (try_recv(x, x->probe[i], &in)) {
                x->probe[i] = x->probe[--x->n_probe];
                progressed = 1;
            } else {
                i++;
            }
        }
        int nd = 0;
        if (x->n_act > 0 &&
            MPI_Testsome(x->n_act, x->req, &nd, x->idx, x->sts) ==
                MPI_SUCCESS &&
            nd != MPI_UNDEFINED && nd > 0) {
            progressed = 1;
            /* finished: out of the active set; done() after the lock */
            for (int k = 0; k < nd; k++) {
                dgr_xreq *q = x->act[x->idx[k]];
                x->act[x->idx[k]] = NULL;
                uintptr_t left = (uintptr_t)q->impl - 1;
                q->impl = (void *)left;
                if (left == 0)
                    finished(&in, q);
            }
            int m = 0;
            for (int i = 0; i < x->n_act; i++)
                if (x->act[i]) {
                    x->act[m] = x->act[i];
                    x->req[m] = x->req[i];
                    m++;
                }
            x->n_act = m;
        }
        pthread_mutex_unlock(&x->mpimu);
        while (in) {
            dgr_xreq *n = in->next;
            in->next = NULL;
            in->done(in, 1);
            in = n;
        }
        /* Messages in flight need MPI calls to move (rendezvous
         * fragments): keep calling, yielding the core now and then; only
         * receives whose message has not come yet back off to sleeps. */
        if (progressed) {
            idle = 0;
        } else if (++idle > 20000 && x->n_act == 0) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        } else if (idle > 64) {
            sched_yield();
        }
    }
}

static void post(dgr_transport *t, dgr_xreq *q)
{
    mpix *x = (mpix *)(void *)t;
    pthread_mutex_lock(&x->qmu);
    q->next = x->incoming;
    x->incoming = q;
    atomic_store_explicit(&x->peek, q, memory_order_release);
    pthread_cond_signal(&x->qcv);
    pthread_mutex_unlock(&x->qmu);
}

static void post_send(dgr_transport *t, dgr_xreq *q)
{
    q->place = NULL;
    post(t, q);
}

static void post_recv(dgr_transport *t, dgr_xreq *q)
{
    post(t, q);
}

static dg_status send_msg(dgr_transport *t, int peer, int tag, const void *p,
                          size_t n, dg_error *err)
{
    mpix *x = (mpix *)(void *)t;
    if (n > INT_MAX)
        return dg_err(err, DG_E_RUNTIME, "message of %zu bytes to rank %d "
                      "is too large", n, peer);
    pthread_mutex_lock(&x->mpimu);
    int rc = MPI_Send(p, (int)n, MPI_BYTE, peer, tag, x->ctl);
    pthread_mutex_unlock(&x->mpimu);
    return rc == MPI_SUCCESS ? DG_OK
                             : dg_err(err, DG_E_RUNTIME, "MPI_Send to rank "
                                      "%d failed", peer);
}

static dg_status recv_msg(dgr_transport *t, int peer, int tag, void *p,
                          size_t n, dg_error *err)
{
    mpix *x = (mpix *)(void *)t;
    if (n > INT_MAX)
        return dg_err(err, DG_E_RUNTIME, "message of %zu bytes from rank %d "
                      "is too large", n, peer);
    MPI_Status st;
    pthread_mutex_lock(&x->mpimu);
    int rc = MPI_Recv(p, (int)n, MPI_BYTE, peer, tag, x->ctl, &st);
    int cnt = 0;
    if (rc == MPI_SUCCESS)
        MPI_Get_count(&st, MPI_BYTE, &cnt);
    pthread_mutex_unlock(&x->mpimu);
    if (rc != MPI_SUCCESS || (size_t)cnt != n)
        return dg_err(err, DG_E_RUNTIME, "message from rank %d: expected %zu "
                      "bytes, got %d", peer, n, cnt);
    return DG_OK;
}

dgr_transport *dgr_mpi_transport_start(int rank, int size, dg_error *err)
{
    mpix *x = &X;
    if (x->started)
        return &x->base;
    memset(x, 0, sizeof *x);
    x->base.rank = rank;
    x->base.size = size;
    x->base.post_send = post_send;
    x->base.post_recv = post_recv;
    x->base.send_msg = send_msg;
    x->base.recv_msg = recv_msg;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &x->data) != MPI_SUCCESS ||
        MPI_Comm_dup(MPI_COMM_WORLD, &x->ctl) != MPI_SUCCESS) {
        dg_err(err, DG_E_RUNTIME, "MPI_Comm_dup failed");
        return NULL;
    }
    pthread_mutex_init(&x->qmu, NULL);
    pthread_cond_init(&x->qcv, NULL);
    pthread_mutex_init(&x->mpimu, NULL);
    if (pthread_create(&x->th, NULL, progress_main, x) != 0) {
        dg_err(err, DG_E_RUNTIME, "cannot start the MPI progress thread");
        return NULL;
    }
    x->started = 1;
    return &x->base;
}

dgr_transport *dgr_mpi_transport(void)
{
    return X.started ? &X.base : NULL;
}

MPI_Comm dgr_mpi_ctl(void)
{
    return X.started ? X.ctl : MPI_COMM_WORLD;
}

int dgr_mpi_lock(int wait_ms)
{
    if (!X.started)
        return 1;
    for (int i = 0; i <= wait_ms; i++) {
        if (pthread_mutex_trylock(&X.mpimu) == 0)
            return 1;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

void dgr_mpi_unlock(void)
{
    if (X.started)
        pthread_mutex_unlock(&X.mpimu);
}

void dgr_mpi_transport_stop(void)
{
    mpix *x = &X;
    if (!x->started)
        return;
    pthread_mutex_lock(&x->qmu);
    x->stop = 1;
    pthread_cond_signal(&x->qcv);
    pthread_mutex_unlock(&x->qmu);
    pthread_join(x->th, NULL);
    MPI_Comm_free(&x->data);
    MPI_Comm_free(&x->ctl);
    dg_free(x->probe);
    dg_free(x->req);
    dg_free(x->act);
    dg_free(x->idx);
    dg_free(x->sts);
    x->started = 0;
}
