/*
 * rowstream.h -- the training loop's batch rows (train_loop.c): a stream
 * of row indices over the feed files, shuffled per epoch by a seeded
 * permutation, epochs wrapping around; and its sharding over the replicas
 * of a replicated graph (SPEC 8.4): at step s, replica k of W with batch b
 * gets rows [k*b, (k+1)*b) of the W*b rows one process would take at step
 * s with batch W*b.  The MPI layer calls dgr_rowstream_shard with its
 * replica index; one process is replica 0 of 1.
 */
#ifndef DGR_ROWSTREAM_H
#define DGR_ROWSTREAM_H

#include <stdint.h>

#include "dgrun.h"

typedef struct dgr_rowstream {
    int64_t rows, cursor, epoch;
    int64_t *perm;
    int shuffle;
    uint64_t seed;
} dgr_rowstream;

/* A stream over `rows` rows (> 0), shuffled with `seed` when `shuffle`,
 * positioned before step 0.  DG_E_NOMEM on failure. */
dg_status dgr_rowstream_init(dgr_rowstream *r, int64_t rows, int shuffle,
                             uint64_t seed, dg_error *err);
void dgr_rowstream_free(dgr_rowstream *r);
/* The next row index (starting a new epoch when one is used up). */
int64_t dgr_rowstream_next(dgr_rowstream *r);
/* Skip n rows. */
void dgr_rowstream_skip(dgr_rowstream *r, int64_t n);
/* The rows of one step for replica `replica` of `replicas` with batch b:
 * the stream advances by replicas*b rows (the whole step's batch) and
 * idx[0..b) receives rows [replica*b, (replica+1)*b) of it. */
void dgr_rowstream_shard(dgr_rowstream *r, int replica, int replicas,
                         int64_t b, int64_t *idx);

#endif
