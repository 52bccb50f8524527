/*
 * kernels_cpu_collective.c -- the CPU kernels of the replication ops
 * (issue 13, SPEC 8.4): ReplicaIndex (attr "replica", set per copy by the
 * replication pass; 0 when the graph is not replicated), and AllReduce /
 * Broadcast: the identity with one replica (attr "replicas" <= 1), else a
 * call of the session's collective runtime (dgr_kenv.collective, the MPI
 * layer's), an error naming the node when there is none.  Offered a
 * deferred completion (dgr_kctx.defer), the kernel returns at once and
 * the collective runtime finishes it: no worker thread waits on the
 * network, so collectives ready in any order on the replicas cannot
 * starve each other of workers.
 */
#include "kernels_cpu.h"
#include "dg_error.h"

#include <string.h>

dg_status dgr_k_replica_index(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    *(int32_t *)dgr_cpu_ptr(&k->out[0]) =
        (int32_t)dgc_attr_i(k->node, DGC_AT_replica);
    return DG_OK;
}
DGR_KERNEL(ReplicaIndex, dgr_k_replica_index);

dg_status dgr_k_collective(dgr_kctx *k)
{
    dgr_collective c;
    int w = dgr_collective_describe(k, &c);
    if (w <= 1)
        return dgr_k_identity(k); /* one replica: nothing to combine */
    if (!k->env || !k->env->collective)
        return dgr_collective_missing(k, w);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    c.in = dgr_cpu_ptr(&k->in[0]);
    c.out = dgr_cpu_ptr(&k->out[0]);
    c.done = k->defer; /* the executor's worker need not wait */
    st = k->env->collective(k->env->ctx, &c, k->err);
    if (st == DG_OK && c.done)
        k->deferred = 1;
    return st;
}
DGR_KERNEL(AllReduce, dgr_k_collective);
DGR_KERNEL(Broadcast, dgr_k_collective);
