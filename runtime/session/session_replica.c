/*
 * session_replica.c -- what a session does for a replicated graph (SPEC
 * 8.4, issue 13; the compiler's replicate.c made the copies): this rank's
 * replica, the collective runtime the kernels call, names as the user
 * wrote them (`loss` is replica 0's `replica_0/loss`), the train section's
 * feeds for every replica's Placeholders, and the Variables reported and
 * saved as replica 0's under their original names.
 */
#include "session.h"
#include "mpi_layer.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

#define PREFIX0 "replica_0/"

/* The replication pass ran (W >= 1): names carry "replica_k/". */
static int replicated(const dgc_graph *g)
{
    return g->replicate.present && g->replicate.replicas > 0;
}

int dgr_replica_count(const dgc_graph *g)
{
    return g->replicate.present && g->replicate.replicas > 1
               ? g->replicate.replicas
               : 1;
}

int dgr_session_replica(dgr_session *s)
{
    dgr_exec *x = dgr_session_exec(s);
    const dgc_graph *g = x->g;
    if (dgr_replica_count(g) <= 1 || !x->xport)
        return 0;
    for (int d = 0; d < x->devlist->n; d++) {
        const dg_device_info *di = &x->devlist->devs[d];
        if (di->rank == x->rank && strcmp(di->job, g->replicate.job) == 0)
            return di->task;
    }
    return -1;
}

int32_t dgr_replica_node(const dgc_graph *g, int32_t id, int k)
{
    const dgc_replicate *r = &g->replicate;
    if (dgr_replica_count(g) <= 1 || !r->copy || id < 0 || id >= r->n_orig ||
        k < 0 || k >= r->replicas)
        return id;
    return r->copy[(size_t)k * (size_t)r->n_orig + (size_t)id];
}

int dgr_replica_parse_ref(const dgc_graph *g, const char *name, int k,
                          dgc_ref *out)
{
    if (dgc_graph_parse_ref(g, name, out) != 0) {
        if (!replicated(g))
            return -1;
        size_t n = strlen(name) + sizeof PREFIX0;
        char *p = dg_malloc(n);
        if (!p)
            return -1;
        snprintf(p, n, PREFIX0 "%s", name);
        int rc = dgc_graph_parse_ref(g, p, out);
        dg_free(p);
        if (rc != 0)
            return -1;
    }
    out->node = dgr_replica_node(g, out->node, k);
    return 0;
}

const char *dgr_replica_orig_name(const dgc_graph *g, int32_t id, int *copy)
{
    const char *n = g->nodes[id].name;
    if (copy)
        *copy = 0;
    if (!replicated(g) || strncmp(n, "replica_", 8) != 0)
        return n;
    const char *sl = strchr(n, '/');
    if (!sl)
        return n;
    /* copies of replicas 1.. are appended after the single-replica graph */
    if (copy)
        *copy = id >= g->replicate.n_orig &&
                strncmp(n, PREFIX0, strlen(PREFIX0)) != 0;
    return sl + 1;
}

dgc_feed *dgr_replica_feeds(const dgc_graph *g, const dgc_feed *f, int n,
                            int all, int *n_out)
{
    int w = all ? dgr_replica_count(g) : 1;
    dgc_feed *o = dg_calloc((size_t)n * (size_t)w + 1, sizeof *o);
    *n_out = 0;
    if (!o)
        return NULL;
    for (int i = 0; i < n; i++) {
        dgc_ref r;
        int found = replicated(g) &&
                    dgr_replica_parse_ref(g, f[i].placeholder, 0, &r) == 0;
        for (int k = 0; k < (found ? w : 1); k++) {
            o[*n_out] = f[i];
            if (found)
                o[*n_out].placeholder =
                    g->nodes[dgr_replica_node(g, r.node, k)].name;
            (*n_out)++;
        }
    }
    return o;
}

/* ---- the collective runtime --------------------------------------------- */

static dg_status collective_cb(void *ctx, const dgr_collective *c,
                               dg_error *err)
{
    return dgr_mpi_collective(ctx, c, err);
}

static int rank_of(const dgr_exec *x, int32_t id)
{
    int32_t d = x->g->nodes[id].device_id;
    return d >= 0 && d < x->devlist->n ? x->devlist->devs[d].rank : -1;
}

/* Whether a collective (AllReduce, Broadcast) depends, through data or
 * control edges, on a message between tasks: then a blocking collective
 * could keep this rank's transport from delivering what another rank
 * needs to reach it.  (Allreduce training sends only its replicas' "done"
 * to train/step: no collective depends on a message.)  -1 nomem. */
static int collective_after_message(const dgr_exec *x)
{
    const dgc_graph *g = x->g;
    uint8_t *m = dg_calloc((size_t)g->n_nodes + 1, 1);
    if (!m)
        return -1;
    for (int changed = 1; changed;) { /* to the fixed point */
        changed = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const dgc_node *n = &g->nodes[i];
            for (int j = 0; !m[i] && j < n->n_inputs + n->n_ctrl; j++) {
                int32_t p = j < n->n_inputs ? n->inputs[j].node
                                            : n->ctrl[j - n->n_inputs];
                if (p >= 0 && p < g->n_nodes &&
                    (m[p] || rank_of(x, p) != rank_of(x, i)))
                    changed = m[i] = 1;
            }
        }
    }
    int hit = 0;
    for (int32_t i = 0; i < g->n_nodes && !hit; i++)
        hit = m[i] && (g->nodes[i].op == DGC_OPID_AllReduce ||
                       g->nodes[i].op == DGC_OPID_Broadcast);
    dg_free(m);
    return hit;
}

dg_status dgr_session_replica_start(dgr_session *s, dgr_kenv *env,
                                    dg_error *err)
{
    dgr_exec *x = dgr_session_exec(s);
    int w = dgr_replica_count(x->g);
    if (w <= 1 || !x->xport)
        return DG_OK;
    int after = collective_after_message(x);
    if (after < 0)
        return dg_err_nomem(err, "replicas");
    dg_status st = dgr_mpi_collective_start(dgr_session_replica(s), w,
                                            !after, err);
    if (st == DG_OK)
        env->collective = collective_cb;
    return st;
}

void dgr_session_replica_stop(dgr_session *s)
{
    dgr_exec *x = dgr_session_exec(s);
    if (dgr_replica_count(x->g) > 1 && x->xport)
        dgr_mpi_collective_stop();
}

/* ---- Variables: replica 0's, and whether the others agree ---------------- */

static double max_abs_diff(const dg_tensor *a, const dg_tensor *b)
{
    int64_t n = dg_shape_numel(&a->shape);
    if (!b || b->dtype != a->dtype || dg_shape_numel(&b->shape) != n)
        return 1e300;
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double d;
        switch (a->dtype) {
        case DG_F32: d = (double)((const float *)a->data)[i] -
                         (double)((const float *)b->data)[i]; break;
        case DG_F64: d = ((const double *)a->data)[i] -
                         ((const double *)b->data)[i]; break;
        case DG_I32: d = (double)((const int32_t *)a->data)[i] -
                         (double)((const int32_t *)b->data)[i]; break;
        case DG_I64: d = (double)((const int64_t *)a->data)[i] -
                         (double)((const int64_t *)b->data)[i]; break;
        default: d = (double)((const uint8_t *)a->data)[i] -
                     (double)((const uint8_t *)b->data)[i]; break;
        }
        if (d < 0)
            d = -d;
        if (d > m || d != d)
            m = d != d ? 1e300 : d;
    }
    return m;
}

dg_status dgr_session_replica_diff(dgr_session *s, double *diff,
                                   dg_error *err)
{
    dgr_exec *x = dgr_session_exec(s);
    const dgc_graph *g = x->g;
    *diff = 0;
    int w = dgr_replica_count(g);
    if (w <= 1 || g->replicate.strategy != DGC_REPL_ALLREDUCE)
        return DG_OK;
    for (int32_t i = 0; i < g->replicate.n_orig; i++) {
        if (g->nodes[i].op != DGC_OPID_Variable)
            continue;
        dg_tensor *v0 = NULL;
        dg_status st = dgr_session_gather_variable(s, i, &v0, err);
        for (int k = 1; k < w && st == DG_OK; k++) {
            dg_tensor *vk = NULL;
            st = dgr_session_gather_variable(s, dgr_replica_node(g, i, k),
                                             &vk, err);
            if (st == DG_OK && v0) {
                double d = max_abs_diff(v0, vk);
                if (d > *diff)
                    *diff = d;
            }
            dg_tensor_free(vk);
        }
        dg_tensor_free(v0);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}
