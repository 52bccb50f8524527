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

#include <stdio.h>
#include <string.h>

int dgr_session_replica(dgr_session *s, int *replicas)
{
    dgr_exec *x = dgr_session_exec(s);
    const dgc_replicate *r = &x->g->replicate;
    if (!r->present || r->replicas <= 0 || !x->xport) {
        *replicas = 1;
        return 0;
    }
    *replicas = r->replicas;
    for (int d = 0; d < x->devlist->n; d++) {
        const dg_device_info *di = &x->devlist->devs[d];
        if (di->rank == x->rank)
            return strcmp(di->job, r->job) == 0 ? di->task : -1;
    }
    return -1;
}

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
