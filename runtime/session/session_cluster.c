/*
 * session_cluster.c -- what a session does differently as one rank of a
 * cluster (SPEC 8.3): which nodes are this rank's, and the collective
 * moves of whole values between runs through the executor's transport:
 * a Variable's value to rank 0 (fetches of `train`, checkpoints) and from
 * rank 0 (restoring a checkpoint), and small numbers rank 0 decides.
 * Every rank calls these in the same order; without a cluster they are
 * the plain local operations.
 */
#include "session.h"
#include "dg_alloc.h"

#include <string.h>

/* Tags of the between-runs channel (exec_net.c uses 1 for fetches). */
#define TAG_VAR 2
#define TAG_BCAST 3

static int owner_of(dgr_session *s, int32_t node_id)
{
    dgr_exec *x = dgr_session_exec(s);
    int32_t d = x->g->nodes[node_id].device_id;
    if (d < 0 || d >= x->n_dev)
        d = 0;
    return x->devlist->devs[d].rank;
}

int dgr_session_is_local(dgr_session *s, int32_t node_id)
{
    dgr_exec *x = dgr_session_exec(s);
    return !x->xport || owner_of(s, node_id) == x->rank;
}

int dgr_session_rank(dgr_session *s)
{
    return dgr_session_exec(s)->rank;
}

dg_status dgr_session_gather_variable(dgr_session *s, int32_t node_id,
                                      dg_tensor **out, dg_error *err)
{
    dgr_exec *x = dgr_session_exec(s);
    *out = NULL;
    if (!x->xport)
        return dgr_session_read_variable(s, node_id, out, err);
    int owner = owner_of(s, node_id);
    if (owner == x->rank) {
        dg_status st = dgr_session_read_variable(s, node_id, out, err);
        if (st != DG_OK || owner == 0)
            return st;
        st = dgr_xport_send_tensor(x->xport, 0, TAG_VAR, *out, err);
        dg_tensor_free(*out);
        *out = NULL;
        return st;
    }
    if (x->rank == 0)
        return dgr_xport_recv_tensor(x->xport, owner, TAG_VAR, out, err);
    return DG_OK;
}

dg_status dgr_session_scatter_variable(dgr_session *s, int32_t node_id,
                                       const dg_tensor *value, dg_error *err)
{
    dgr_exec *x = dgr_session_exec(s);
    if (!x->xport)
        return dgr_session_write_variable(s, node_id, value, err);
    int owner = owner_of(s, node_id);
    if (x->rank == 0 && owner == 0)
        return dgr_session_write_variable(s, node_id, value, err);
    if (x->rank == 0)
        return dgr_xport_send_tensor(x->xport, owner, TAG_VAR, value, err);
    if (x->rank != owner)
        return DG_OK;
    dg_tensor *t = NULL;
    dg_status st = dgr_xport_recv_tensor(x->xport, 0, TAG_VAR, &t, err);
    if (st == DG_OK && !t)
        st = dg_err(err, DG_E_RUNTIME, "rank 0 sent no value for '%s'",
                    x->g->nodes[node_id].name);
    if (st == DG_OK)
        st = dgr_session_write_variable(s, node_id, t, err);
    dg_tensor_free(t);
    return st;
}

dg_status dgr_session_bcast(dgr_session *s, int64_t *v, int n,
                            dg_error *err)
{
    dgr_exec *x = dgr_session_exec(s);
    if (!x->xport)
        return DG_OK;
    size_t bytes = sizeof *v * (size_t)n;
    if (x->rank != 0)
        return x->xport->recv_msg(x->xport, 0, TAG_BCAST, v, bytes, err);
    for (int r = 1; r < x->xport->size; r++) {
        dg_status st = x->xport->send_msg(x->xport, r, TAG_BCAST, v, bytes,
                                          err);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}
