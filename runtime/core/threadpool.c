/*
 * threadpool.c -- inter-op worker pools (a ring buffer of ready items per
 * device, mutex + condvar) and the intra-op pool behind dgr_parallel_for
 * (jobs live on the caller's stack; helpers grab chunks atomically).
 * One thread budget: inter-op workers sharing an intra-op pool count
 * themselves busy while they run a task, and a parallel_for started by one
 * of them takes at most threads / busy threads (itself included), so the
 * two levels never oversubscribe the cores.  dgr_parallel_blocks cuts a
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

struct dgr_pool {
    int threads;
    pthread_t *tids;
    int n_tids;
    pthread_mutex_t mu;
    pthread_cond_t work_cv;
    pthread_cond_t done_cv;
    pf_job *head;
    int stop;
    atomic_int busy;     /* inter-op workers running a task (the budget) */
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

static int32_t run_chunks(pf_job *j)
{
    int32_t mine = 0;
    for (;;) {
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
    struct dgr_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        pf_job *j = NULL;
        while (!p->stop && !(j = open_job(p)))
            pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop)
            break;
        j->users++;
        pthread_mutex_unlock(&p->mu);
        int32_t mine = run_chunks(j);
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
    atomic_init(&p->busy, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (threads > 1) {
        p->tids = dg_calloc((size_t)threads, sizeof *p->tids);
        if (!p->tids) {
            dgr_pool_free(p);
            dg_err_nomem(err, "intra-op pool");
            return NULL;
        }
        for (int i = 0; i < threads - 1; i++) {
            if (pthread_create(&p->tids[i], NULL, intra_main, p) != 0) {
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
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_tids; i++)
        pthread_join(p->tids[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    dg_free(p->tids);
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
    pthread_cond_broadcast(&pool->work_cv);
    pthread_mutex_unlock(&pool->mu);

    int32_t mine = run_chunks(&j);

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
    int32_t cap, head, count;
    int idle;  /* workers waiting on cv */
    int stop;
};

static void *inter_main(void *arg)
{
    worker_fast_math();
    worker_arg *wa = arg;
    dgr_ipool *p = wa->p;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->count == 0) {
            p->idle++;
            pthread_cond_wait(&p->cv, &p->mu);
            p->idle--;
        }
        if (p->count == 0 && p->stop)
            break;
        ipool_item it = p->ring[p->head];
        p->head = p->head + 1 == p->cap ? 0 : p->head + 1;
        p->count--;
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
    if (p->idle > 0)
        pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}
