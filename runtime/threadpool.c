/*
 * threadpool.c -- inter-op and intra-op thread pools
 * (placeholder: inline execution until the pools are written).
 */
#include "rt.h"

void dgr_parallel_for(struct dgr_pool *pool, int64_t n, int64_t grain,
                      dgr_range_fn fn, void *arg)
{
    (void)pool;
    (void)grain;
    if (n > 0)
        fn(arg, 0, n);
}

int dgr_pool_threads(const struct dgr_pool *pool)
{
    (void)pool;
    return 1;
}
