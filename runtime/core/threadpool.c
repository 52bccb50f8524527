/*
 * threadpool.c -- inter-op worker pools (a ring buffer of ready items per
 * device, mutex + condvar) and the intra-op pool behind dgr_parallel_for
 * (jobs live on the caller's stack; helpers grab chunks atomically).
 * One thread budget: inter-op workers sharing an intra-op pool count
 * themselves busy while they run a task, and a parallel_for started by one
 * of them takes at most threads / busy threads (itself included).  Idle
 * workers of those pools are the loops' helpers (back to their own queue
 * as soon as an item waits there); only the intra-op threads beyond them
 * have helper threads of their own, so the two levels never run more
 * threads than the intra-op count.  dgr_parallel_blocks cuts a
 * range into blocks of a fixed size (not a function of the thread count)
 * for reductions that must give the same bits whatever the threads
 * (issue 19).
 */
#include "threadpool.h"
#include "dg_alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

int dgr_ncores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ======================= intra-op pool =================================== */

typedef struct pf_job {
    dgr_range_fn fn;
    void *arg;
    int64_t n, chunk;
    int32_t nchunks;
    atomic_int next;     /* next chunk to take */
    int32_t done;        /* chunks finished (under pool mutex) */
    int32_t users;       /* helpers working on it (under pool mutex) */
    int32_t max_users;   /* helpers allowed on it: the caller's budget - 1 */
    int listed;
    struct pf_job *link;
} pf_job;

#define MAX_SHARERS 8 /* inter-op pools whose idle workers help */

typedef struct helper_arg {
    struct dgr_pool *p;
    int idx;
} helper_arg;

struct dgr_pool {
    int threads;
    pthread_t *tids;
    helper_arg *hargs;
    int n_tids;
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    pthread_cond_t done_cv;
    pthread_cond_t park_cv; /* helpers beyond helpers_active sleep here */
    pf_job *head;
    int stop;
    atomic_int busy;     /* inter-op workers running a task (the budget) */
    atomic_int open;     /* jobs listed (a hint for idle inter-op workers) */
    /* Inter-op pools sharing the budget: their idle workers help listed
     * jobs, so only threads - guests helper threads take jobs (the rest
     * sleep): the two levels together run at most `threads` threads. */
    struct dgr_ipool *sharers[MAX_SHARERS];
    int n_sharers, guests, helpers_active;
};

/* First listed job with chunks left and room for one more helper (under the
 * pool mutex); NULL if none. */
static pf_job *open_job(struct dgr_pool *p)
{
    for (pf_job *j = p->head; j; j = j->link)
        if (j->users < j->max_users &&
            atomic_load_explicit(&j->next, memory_order_relaxed) < j->nchunks)
            return j;
    return NULL;
}

/* Take and run j's chunks until none is left, or (leave non-NULL) until
 * *leave is nonzero: an inter-op worker helping stops when an item waits
 * in its queue.  The number run. */
static int32_t run_chunks(pf_job *j, const atomic_int *leave)
{
    int32_t mine = 0;
    while (!leave || atomic_load_explicit(leave, memory_order_relaxed) == 0) {
        int c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
        if (c >= j->nchunks)
            break;
        int64_t b = (int64_t)c * j->chunk;
        int64_t e = b + j->chunk;
        if (e > j->n)
            e = j->n;
        j->fn(j->arg, b, e);
        mine++;
    }
    return mine;
}

static void unlist(struct dgr_pool *p, pf_job *j)
{
    if (!j->listed)
        return;
    for (pf_job **pp = &p->head; *pp; pp = &(*pp)->link)
        if (*pp == j) {
            *pp = j->link;
            break;
        }
    j->listed = 0;
    atomic_fetch_sub_explicit(&p->open, 1, memory_order_relaxed);
}

static void wake_sharers(struct dgr_pool *p, int n);

/* The helper threads that take loops: the intra-op threads beyond the
 * sharing pools' workers (under p->mu). */
static void set_helpers(struct dgr_pool *p)
{
    int h = p->threads - p->guests;
    p->helpers_active = h < 0 ? 0 : h > p->threads - 1 ? p->threads - 1 : h;
}


/* Flush denormals to zero on a worker thread, as TensorFlow does in its
 * pools: Adam's slots decay into float32 denormals over long runs, and x86
 * arithmetic on denormals is many times slower. */
static void worker_fast_math(void)
{
#if defined(__SSE__) || defined(__x86_64__)
    _mm_setcsr(_mm_getcsr() | 0x8040); /* FTZ | DAZ */
#endif
}

static void *intra_main(void *arg)
{
    worker_fast_math();
    const helper_arg *ha = arg;
    struct dgr_pool *p = ha->p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->stop)
            break;
        if (ha->idx >= p->helpers_active) { /* parked (dgr_ipool_share) */
            pthread_cond_wait(&p->park_cv, &p->mu);
            continue;
        }
        pf_job *j = open_job(p);
        if (!j) {
            pthread_cond_wait(&p->work_cv, &p->mu);
            continue;
        }
        j->users++;
        pthread_mutex_unlock(&p->mu);
        int32_t mine = run_chunks(j, NULL);
        pthread_mutex_lock(&p->mu);
        j->users--;
        j->done += mine;
        unlist(p, j);
        if (j->done == j->nchunks && j->users == 0)
            pthread_cond_broadcast(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct dgr_pool *dgr_pool_new(int threads, dg_error *err)
{
    if (threads <= 0)
        threads = dgr_ncores();
    struct dgr_pool *p = dg_calloc(1, sizeof *p);
    if (!p) {
        dg_err_nomem(err, "intra-op pool");
        return NULL;
    }
    p->threads = threads;
    p->helpers_active = threads - 1;
    atomic_init(&p->busy, 0);
    atomic_init(&p->open, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    pthread_cond_init(&p->park_cv, NULL);
    if (threads > 1) {
        p->tids = dg_calloc((size_t)threads, sizeof *p->tids);
        p->hargs = dg_calloc((size_t)threads, sizeof *p->hargs);
        if (!p->tids || !p->hargs) {
            dgr_pool_free(p);
            dg_err_nomem(err, "intra-op pool");
            return NULL;
        }
        for (int i = 0; i < threads - 1; i++) {
            p->hargs[i].p = p;
            p->hargs[i].idx = i;
            if (pthread_create(&p->tids[i], NULL, intra_main, &p->hargs[i]) !=
                0) {
                dgr_pool_free(p);
                dg_err(err, DG_E_RUNTIME, "cannot create intra-op thread");
                return NULL;
            }
            p->n_tids++;
        }
    }
    return p;
}

void dgr_pool_free(struct dgr_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work_cv);
    pthread_cond_broadcast(&p->park_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_tids; i++)
        pthread_join(p->tids[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    pthread_cond_destroy(&p->park_cv);
    dg_free(p->tids);
    dg_free(p->hargs);
    dg_free(p);
}

void dgr_parallel_for(struct dgr_pool *pool, int64_t n, int64_t grain,
                      dgr_range_fn fn, void *arg)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int budget = dgr_pool_budget(pool);
    if (budget <= 1 || n <= grain) {
        fn(arg, 0, n);
        return;
    }
    int64_t want = (n + grain - 1) / grain;
    int64_t maxc = (int64_t)budget * 4;
    int32_t nchunks = (int32_t)(want < maxc ? want : maxc);
    pf_job j;
    memset(&j, 0, sizeof j);
    j.fn = fn;
    j.arg = arg;
    j.n = n;
    j.max_users = budget - 1;
    j.chunk = (n + nchunks - 1) / nchunks;
    j.nchunks = (int32_t)((n + j.chunk - 1) / j.chunk);
    atomic_init(&j.next, 0);
    pthread_mutex_lock(&pool->mu);
    j.listed = 1;
    j.link = NULL;
    pf_job **pp = &pool->head;
    while (*pp)
        pp = &(*pp)->link;
    *pp = &j;
    atomic_fetch_add_explicit(&pool->open, 1, memory_order_relaxed);
    pthread_cond_broadcast(&pool->work_cv);
    wake_sharers(pool, j.max_users);
    pthread_mutex_unlock(&pool->mu);

    int32_t mine = run_chunks(&j, NULL);

    pthread_mutex_lock(&pool->mu);
    j.done += mine;
    unlist(pool, &j);
    while (j.done < j.nchunks || j.users > 0)
        pthread_cond_wait(&pool->done_cv, &pool->mu);
    pthread_mutex_unlock(&pool->mu);
}

int64_t dgr_blocks(int64_t n, int64_t block)
{
    if (block < 1)
        block = 1;
    return n > 0 ? (n + block - 1) / block : 0;
}

typedef struct blocks_job {
    dgr_block_fn fn;
    void *arg;
    int64_t n, block;
} blocks_job;

static void blocks_range(void *arg, int64_t b0, int64_t b1)
{
    const blocks_job *j = arg;
    for (int64_t b = b0; b < b1; b++) {
        int64_t lo = b * j->block;
        int64_t hi = lo + j->block < j->n ? lo + j->block : j->n;
        j->fn(j->arg, b, lo, hi);
    }
}

void dgr_parallel_blocks(struct dgr_pool *pool, int64_t n, int64_t block,
                         dgr_block_fn fn, void *arg)
{
    if (block < 1)
        block = 1;
    blocks_job j = {fn, arg, n, block};
    int64_t nb = dgr_blocks(n, block);
    if (nb == 1)
        blocks_range(&j, 0, 1);
    else if (nb > 1)
        dgr_parallel_for(pool, nb, 1, blocks_range, &j);
}

int dgr_pool_threads(const struct dgr_pool *pool)
{
    return pool ? pool->threads : 1;
}

int dgr_pool_budget(const struct dgr_pool *pool)
{
    if (!pool || pool->threads <= 1)
        return 1;
    int busy = atomic_load_explicit(&((struct dgr_pool *)pool)->busy,
                                    memory_order_relaxed);
    int b = busy > 1 ? pool->threads / busy : pool->threads;
    return b > 1 ? b : 1;
}

/* ======================= inter-op pools ================================== */

typedef struct ipool_item {
    void *ctx;
    int32_t item;
} ipool_item;

typedef struct worker_arg {
    dgr_ipool *p;
    int lane;
} worker_arg;

struct dgr_ipool {
    int threads;
    dgr_task_fn fn;
    pthread_t *tids;
    worker_arg *args;
    int n_tids;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    ipool_item *ring;
    struct dgr_pool *budget; /* intra-op pool whose busy count we keep */
    int guest;               /* idle workers help budget's listed jobs */
    int32_t cap, head, count;
    atomic_int queued;       /* count, read by a worker helping a job */
    int idle;  /* workers waiting on cv */
    int stop;
};

/* An idle inter-op worker of p helps a job listed on p->budget: chunk by
 * chunk, back to its own queue as soon as an item waits there (the job's
 * caller and other helpers finish it).  0 when it found no job to help. */
static int guest_help(dgr_ipool *p)
{
    struct dgr_pool *q = p->budget;
    pthread_mutex_lock(&q->mu);
    pf_job *j = q->stop ? NULL : open_job(q);
    if (!j) {
        pthread_mutex_unlock(&q->mu);
        return 0;
    }
    j->users++;
    pthread_mutex_unlock(&q->mu);
    int32_t mine = run_chunks(j, &p->queued);
    pthread_mutex_lock(&q->mu);
    j->users--;
    j->done += mine;
    if (atomic_load_explicit(&j->next, memory_order_relaxed) >= j->nchunks)
        unlist(q, j);
    if (j->done == j->nchunks && j->users == 0)
        pthread_cond_broadcast(&q->done_cv);
    pthread_mutex_unlock(&q->mu);
    return 1;
}

static void *inter_main(void *arg)
{
    worker_fast_math();
    worker_arg *wa = arg;
    dgr_ipool *p = wa->p;
    pthread_mutex_lock(&p->mu);
    int tried = 0; /* found no job to help: sleep before looking again */
    for (;;) {
        while (!p->stop && p->count == 0) {
            if (p->guest && !tried &&
                atomic_load_explicit(&p->budget->open, memory_order_relaxed) >
                    0) {
                pthread_mutex_unlock(&p->mu);
                tried = !guest_help(p);
                pthread_mutex_lock(&p->mu);
                continue; /* a stop or an item may have come meanwhile:
                             its signal found no idle worker */
            }
            tried = 0;
            p->idle++;
            pthread_cond_wait(&p->cv, &p->mu);
            p->idle--;
        }
        if (p->count == 0 && p->stop)
            break;
        ipool_item it = p->ring[p->head];
        p->head = p->head + 1 == p->cap ? 0 : p->head + 1;
        p->count--;
        atomic_store_explicit(&p->queued, p->count, memory_order_relaxed);
        pthread_mutex_unlock(&p->mu);
        if (p->budget)
            atomic_fetch_add_explicit(&p->budget->busy, 1, memory_order_relaxed);
        p->fn(it.ctx, it.item, wa->lane);
        if (p->budget)
            atomic_fetch_sub_explicit(&p->budget->busy, 1, memory_order_relaxed);
        pthread_mutex_lock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

dgr_ipool *dgr_ipool_new(int threads, dgr_task_fn fn, dg_error *err)
{
    if (threads <= 0)
        threads = dgr_ncores();
    dgr_ipool *p = dg_calloc(1, sizeof *p);
    if (!p) {
        dg_err_nomem(err, "inter-op pool");
        return NULL;
    }
    p->threads = threads;
    p->fn = fn;
    atomic_init(&p->queued, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->tids = dg_calloc((size_t)threads, sizeof *p->tids);
    p->args = dg_calloc((size_t)threads, sizeof *p->args);
    if (!p->tids || !p->args || dgr_ipool_reserve(p, 64)) {
        dgr_ipool_free(p);
        dg_err_nomem(err, "inter-op pool");
        return NULL;
    }
    for (int i = 0; i < threads; i++) {
        p->args[i].p = p;
        p->args[i].lane = i;
        if (pthread_create(&p->tids[i], NULL, inter_main, &p->args[i]) != 0) {
            dgr_ipool_free(p);
            dg_err(err, DG_E_RUNTIME, "cannot create inter-op thread");
            return NULL;
        }
        p->n_tids++;
    }
    return p;
}

void dgr_ipool_free(dgr_ipool *p)
{
    if (!p)
        return;
    struct dgr_pool *q = p->guest ? p->budget : NULL;
    if (q) { /* no longer woken for loops; helper threads take its place */
        pthread_mutex_lock(&q->mu);
        for (int i = 0; i < q->n_sharers; i++)
            if (q->sharers[i] == p) {
                q->sharers[i] = q->sharers[--q->n_sharers];
                q->guests -= p->threads;
                break;
            }
        set_helpers(q);
        pthread_cond_broadcast(&q->park_cv);
        pthread_mutex_unlock(&q->mu);
    }
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_tids; i++)
        pthread_join(p->tids[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    dg_free(p->ring);
    dg_free(p->tids);
    dg_free(p->args);
    dg_free(p);
}

void dgr_ipool_share(dgr_ipool *p, struct dgr_pool *intra)
{
    p->budget = intra;
    if (!intra || intra->threads <= 1)
        return;
    pthread_mutex_lock(&intra->mu);
    int ok = intra->n_sharers < MAX_SHARERS;
    if (ok) {
        intra->sharers[intra->n_sharers++] = p;
        intra->guests += p->threads;
        set_helpers(intra);
    }
    pthread_mutex_unlock(&intra->mu);
    pthread_mutex_lock(&p->mu); /* (its workers read it under p->mu) */
    p->guest = ok;
    pthread_mutex_unlock(&p->mu);
}

/* Wake up to n idle workers of the pools sharing p's budget: a job that
 * takes n helpers was listed.  Under p->mu (lock order: the intra-op
 * pool's mutex, then an inter-op pool's; nothing takes them the other way
 * round).  A worker reads p->open under its own pool's mutex before it
 * sleeps, so taking that mutex here cannot miss one. */
static void wake_sharers(struct dgr_pool *p, int n)
{
    for (int i = 0; i < p->n_sharers && n > 0; i++) {
        dgr_ipool *ip = p->sharers[i];
        pthread_mutex_lock(&ip->mu);
        for (int k = 0; k < ip->idle && n > 0; k++, n--)
            pthread_cond_signal(&ip->cv);
        pthread_mutex_unlock(&ip->mu);
    }
}

int dgr_ipool_threads(const dgr_ipool *p)
{
    return p ? p->threads : 0;
}

int dgr_ipool_reserve(dgr_ipool *p, int32_t cap)
{
    int rc = 0;
    pthread_mutex_lock(&p->mu);
    if (cap > p->cap) {
        ipool_item *r = dg_malloc(sizeof *r * (size_t)cap);
        if (!r) {
            rc = -1;
        } else {
            for (int32_t i = 0; i < p->count; i++)
                r[i] = p->ring[(p->head + i) % p->cap];
            dg_free(p->ring);
            p->ring = r;
            p->head = 0;
            p->cap = cap;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void dgr_ipool_push(dgr_ipool *p, void *ctx, int32_t item)
{
    pthread_mutex_lock(&p->mu);
    if (p->count == p->cap) {
        /* Not expected (rings are reserved per plan); grow rather than lose
         * a step. */
        int32_t nc = p->cap * 2;
        ipool_item *r = dg_malloc(sizeof *r * (size_t)nc);
        if (r) {
            for (int32_t i = 0; i < p->count; i++)
                r[i] = p->ring[(p->head + i) % p->cap];
            dg_free(p->ring);
            p->ring = r;
            p->head = 0;
            p->cap = nc;
        }
    }
    int32_t tail = p->head + p->count;
    if (tail >= p->cap)
        tail -= p->cap;
    p->ring[tail].ctx = ctx;
    p->ring[tail].item = item;
    p->count++;
    atomic_store_explicit(&p->queued, p->count, memory_order_relaxed);
    if (p->idle > 0)
        pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}
