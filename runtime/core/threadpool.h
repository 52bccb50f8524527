/*
 * threadpool.h -- the runtime's thread pools.
 *
 * Inter-op pools (dgr_ipool): one per device; each has `threads` workers
 * taking items (ctx, int32 item) from a preallocated ring buffer and calling
 * the pool's task function with the worker's lane (0 .. threads-1).  The
 * executor pushes ready steps; no allocation happens per task.
 *
 * Intra-op pool (struct dgr_pool): helpers for dgr_parallel_for; the
 * calling thread also works on its own loop, so a pool of N threads has
 * N-1 helper threads.
 */
#ifndef DGR_THREADPOOL_H
#define DGR_THREADPOOL_H

#include <stdint.h>

#include "dgrun.h"
#include "dg_error.h"

struct dgr_pool;

/* Number of online processors (at least 1). */
int dgr_ncores(void);

/* ---- intra-op ------------------------------------------------------------ */

/* Create a pool of `threads` threads in total (<= 0: number of cores).
 * NULL + err on failure. */
struct dgr_pool *dgr_pool_new(int threads, dg_error *err);
/* Stop and join the helpers (no parallel_for may be running). */
void dgr_pool_free(struct dgr_pool *pool);

typedef void (*dgr_range_fn)(void *arg, int64_t begin, int64_t end);
/* Split [0, n) into chunks of at least `grain` and run fn on the intra-op
 * pool (inline when pool is NULL or n is small); returns when all are done. */
void dgr_parallel_for(struct dgr_pool *pool, int64_t n, int64_t grain,
                      dgr_range_fn fn, void *arg);
/* Deterministic splits (issue 19): [0, n) cut into dgr_blocks(n, block)
 * blocks of exactly `block` items (the last one shorter).  The cut depends
 * on n and block only -- never on the pool's size or on how many threads
 * are free -- so a reduction that keeps one partial result per block and
 * combines the partials in block order gives the same bits whatever the
 * thread count and the timing.  fn(arg, blk, begin, end) runs once per
 * block, on the pool, blocks in any order and on any thread; returns when
 * all are done.  block < 1 counts as 1. */
typedef void (*dgr_block_fn)(void *arg, int64_t blk, int64_t begin,
                             int64_t end);
int64_t dgr_blocks(int64_t n, int64_t block);
void dgr_parallel_blocks(struct dgr_pool *pool, int64_t n, int64_t block,
                         dgr_block_fn fn, void *arg);
/* Number of threads of the pool (1 if NULL). */
int dgr_pool_threads(const struct dgr_pool *pool);
/* Threads a kernel may use right now (itself included): the pool's threads
 * divided by the inter-op workers busy on it (dgr_ipool_share), at least 1.
 * dgr_parallel_for never uses more.  It depends on timing: a kernel must
 * not cut a sum by it (issue 19: use fixed blocks, dgr_parallel_blocks). */
int dgr_pool_budget(const struct dgr_pool *pool);

/* ---- inter-op ------------------------------------------------------------ */

typedef struct dgr_ipool dgr_ipool;
/* Task function: runs item on worker `lane` of the pool. */
typedef void (*dgr_task_fn)(void *ctx, int32_t item, int lane);

/* Create a pool with `threads` workers calling fn.  NULL + err on failure. */
dgr_ipool *dgr_ipool_new(int threads, dgr_task_fn fn, dg_error *err);
/* Stop and join the workers after they drained nothing more (the queue must
 * be empty and no task running). */
void dgr_ipool_free(dgr_ipool *p);
int dgr_ipool_threads(const dgr_ipool *p);
/* Count this pool's workers busy on `intra` while they run a task (the
 * thread budget of dgr_pool_budget).  Call before the first push. */
void dgr_ipool_share(dgr_ipool *p, struct dgr_pool *intra);
/* Make the ring hold at least `cap` queued items.  Call only while the pool
 * is idle.  0 ok, -1 nomem. */
int dgr_ipool_reserve(dgr_ipool *p, int32_t cap);
/* Queue one item (the ring must have room: reserve enough beforehand). */
void dgr_ipool_push(dgr_ipool *p, void *ctx, int32_t item);

#endif
