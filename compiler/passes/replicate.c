/*
 * replicate.c -- the replication pass (SPEC 8.4, issue 13): the graph's
 * "replicate" turns the single-replica graph, with its gradients and
 * training ops already built, into one replica per task of the job
 * (between-graph replication, as TF users write it by hand).
 *
 * It runs after the gradient and training passes (TF builds each worker's
 * replica graph including its gradients) and before shape inference of the
 * generated nodes and placement:
 *   - every replicated node n becomes replica_0/n (renamed in place, so ids
 *     stay valid) and gets copies replica_k/n for k = 1..W-1, requested on
 *     /job:<job>/task:k with the node's own device type and index;
 *   - "shared" nodes are not copied: for strategy ps the Variables (dealt
 *     round robin over the ps job's tasks when they name no job, like
 *     replica_device_setter) and, with sync, the whole update side (slots,
 *     Apply*, beta powers, global_step, train/step): a shared node reading a
 *     replicated one reads the replicas' mean ("<n>/replica_mean" =
 *     AddN(replica_k/n) * 1/W, colocated with the reader), and its control
 *     inputs wait for every replica;
 *   - strategy allreduce copies everything (each replica's Variables seeded
 *     by the original name, attr "init_name"), and each replica's update
 *     side reads "replica_k/<g>/AllReduce" (mean) of its gradient g.
 *   - copies of AllReduce, Broadcast and ReplicaIndex get attrs "replica"
 *     (k), "replicas" (W) and "key" (the original name).
 * With training and a replicated train op, a new "train/step" groups every
 * replica's train op.  g->replicate records W, the copy table and each
 * replica's train op for the runtime.
 */
#include "program.h"
#include "cluster.h"
#include "ops.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>

#define GE(...) dg_err(st->err, DG_E_GRAPH, __VA_ARGS__)
#define PREFIX0 "replica_0/"

typedef struct rstate {
    dgc_graph *g;
    dgc_replicate *r;
    dg_error *err;
    int W, P;              /* replicas, ps tasks */
    int32_t n0, U;         /* original node count, update side start */
    uint8_t *shared;       /* [n0] */
    uint8_t *lone;         /* [n0]: a Const without a request read only by
                              nodes bound to shared ones: it follows them */
    int32_t *copy;         /* [W * n0] */
} rstate;

static int32_t cp(const rstate *st, int k, int32_t i)
{
    return st->copy[(size_t)k * (size_t)st->n0 + (size_t)i];
}

/* The original name of node i < n0 (replicated nodes were renamed). */
static const char *orig_name(const rstate *st, int32_t i)
{
    const char *n = st->g->nodes[i].name;
    return (!st->shared[i] && strncmp(n, PREFIX0, strlen(PREFIX0)) == 0)
               ? n + strlen(PREFIX0)
               : n;
}

static int job_index(const dg_cluster *c, const char *job)
{
    for (int j = 0; j < c->n_jobs; j++)
        if (strcmp(c->jobs[j].name, job) == 0)
            return j;
    return -1;
}

static dg_status check_cluster(rstate *st, const dg_cluster *c)
{
    const dgc_replicate *r = st->r;
    if (!c)
        return GE("replicate: the graph declares no cluster (add \"cluster\": "
                  "{\"%s\": N, ...} or --cluster %s=N)", r->job, r->job);
    char cs[256];
    dg_cluster_str(c, cs, sizeof cs);
    int j = job_index(c, r->job);
    if (j < 0)
        return GE("replicate.job '%s' is not a job of the cluster %s", r->job,
                  cs);
    st->W = c->jobs[j].tasks;
    if (r->strategy != DGC_REPL_PS)
        return DG_OK;
    int p = job_index(c, r->ps_job);
    if (p < 0)
        return GE("replicate: strategy \"ps\" needs the job '%s' (ps_job) in "
                  "the cluster %s", r->ps_job, cs);
    if (p == j)
        return GE("replicate: ps_job '%s' is also the replicated job",
                  r->ps_job);
    st->P = c->jobs[p].tasks;
    return DG_OK;
}

static int classify(rstate *st)
{
    const dgc_graph *g = st->g;
    int ps = st->r->strategy == DGC_REPL_PS;
    for (int32_t i = 0; i < st->n0; i++) {
        int var = dgc_op_has(g->nodes[i].op, DGC_OP_VARIABLE);
        st->shared[i] = ps && (var || (st->r->sync && i >= st->U));
    }
    int32_t next = st->n0;
    for (int k = 0; k < st->W; k++)
        for (int32_t i = 0; i < st->n0; i++)
            st->copy[(size_t)k * (size_t)st->n0 + (size_t)i] =
                (k == 0 || st->shared[i]) ? i : next++;
    return 0;
}

/* Rename replicated node i to replica_0/<name>, then rebuild the name map. */
static dg_status rename_replica0(rstate *st)
{
    dgc_graph *g = st->g;
    for (int32_t i = 0; i < st->n0; i++) {
        if (st->shared[i])
            continue;
        dgc_node *n = &g->nodes[i];
        size_t len = strlen(n->name) + sizeof PREFIX0;
        char *nm = dg_malloc(len);
        if (!nm)
            return dg_err_nomem(st->err, "replication pass");
        snprintf(nm, len, PREFIX0 "%s", n->name);
        if (!(n->flags & DGC_NODE_SLAB_NAME))
            dg_free(n->name);
        n->name = nm;
        n->flags &= ~(uint32_t)DGC_NODE_SLAB_NAME;
    }
    dg_strmap_free(&g->names);
    memset(&g->names, 0, sizeof g->names);
    if (dg_strmap_init(&g->names, (size_t)g->n_nodes * 2))
        return dg_err_nomem(st->err, "name map");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int rc = dg_strmap_put(&g->names, g->nodes[i].name, i);
        if (rc < 0)
            return dg_err_nomem(st->err, "name map");
        if (rc == 1)
            return GE("node '%s': duplicate node name after replication",
                      g->nodes[i].name);
    }
    return DG_OK;
}

static dg_tensor *tensor_dup(const dg_tensor *t)
{
    dg_tensor *c = dg_tensor_new(t->dtype, &t->shape);
    int64_t n = dg_shape_numel(&t->shape);
    if (c && n > 0)
        memcpy(c->data, t->data, (size_t)n * dg_dtype_size(t->dtype));
    return c;
}

/* Deep copy of attribute a onto node n; 0 ok, -1 nomem. */
static int attr_copy(dgc_node *n, const dgc_attr *a)
{
    dgc_attr d = *a;
    d.s = NULL;
    d.ints = NULL;
    d.tensor = NULL;
    d.init.value = NULL;
    int bad = 0;
    if (a->s && !(d.s = dg_strdup(a->s)))
        bad = 1;
    if (a->ints && !bad) {
        size_t sz = sizeof *d.ints * (size_t)(a->n > 0 ? a->n : 1);
        if ((d.ints = dg_malloc(sz)))
            memcpy(d.ints, a->ints, sizeof *d.ints * (size_t)a->n);
        else
            bad = 1;
    }
    if (a->tensor && !bad && !(d.tensor = tensor_dup(a->tensor)))
        bad = 1;
    if (a->init.value && !bad && !(d.init.value = tensor_dup(a->init.value)))
        bad = 1;
    if (bad || dgc_node_set_attr(n, &d)) {
        d.key = NULL;
        dgc_attr_clear(&d);
        return -1;
    }
    return 0;
}

static int32_t *map_ids(const rstate *st, int k, const int32_t *v, int n)
{
    int32_t *o = dg_malloc(sizeof *o * (size_t)(n > 0 ? n : 1));
    if (o)
        for (int j = 0; j < n; j++)
            o[j] = (v[j] >= 0 && v[j] < st->n0) ? cp(st, k, v[j]) : v[j];
    return o;
}

/* Replica k's copy of replicated node i (appended with the expected id). */
static dg_status make_copy(rstate *st, int k, int32_t i)
{
    dgc_graph *g = st->g;
    char name[1100];
    snprintf(name, sizeof name, "replica_%d/%s", k, orig_name(st, i));
    int32_t id = dgc_graph_add_node(g, name, g->nodes[i].op, st->err);
    if (id < 0)
        return st->err->code ? st->err->code : DG_E_GRAPH;
    if (id != cp(st, k, i))
        return GE("replication pass: node ids out of step");
    const dgc_node *o = &g->nodes[i];
    dgc_node *n = &g->nodes[id];
    n->op_alias = o->op_alias;
    n->flags = o->flags & (DGC_NODE_GENERATED | DGC_NODE_TRANSFER);
    n->colocate = o->colocate;
    n->forward = o->forward >= 0 && o->forward < st->n0 ? cp(st, k, o->forward)
                                                          : o->forward;
    n->group_hint = o->group_hint >= 0 && o->group_hint < st->n0
                        ? cp(st, k, o->group_hint)
                        : o->group_hint;
    n->inputs = dg_malloc(sizeof *n->inputs * (size_t)(o->n_inputs + 1));
    n->ctrl = map_ids(st, k, o->ctrl, o->n_ctrl);
    n->coloc = map_ids(st, k, o->coloc, o->n_coloc);
    if (!n->inputs || !n->ctrl || !n->coloc ||
        (o->device && !(n->device = dg_strdup(o->device))))
        return dg_err_nomem(st->err, "replication pass");
    n->n_ctrl = o->n_ctrl;
    n->n_coloc = o->n_coloc;
    for (int j = 0; j < o->n_inputs; j++) {
        n->inputs[j] = o->inputs[j];
        if (o->inputs[j].node < st->n0)
            n->inputs[j].node = cp(st, k, o->inputs[j].node);
    }
    n->n_inputs = o->n_inputs;
    for (int a = 0; a < o->n_attrs; a++)
        if (attr_copy(&g->nodes[id], &g->nodes[i].attrs[a]))
            return dg_err_nomem(st->err, "replication pass");
    return DG_OK;
}

/* Whether replicated node i is bound to a shared node's device: a state op
 * updating a shared Variable, or colocated with a shared node. */
static int follows_shared(const rstate *st, int32_t i)
{
    const dgc_node *n = &st->g->nodes[i];
    if (dgc_op_has(n->op, DGC_OP_STATE) && n->n_inputs > 0 &&
        n->inputs[0].node < st->n0 && st->shared[n->inputs[0].node])
        return 1;
    for (int j = 0; j < n->n_coloc; j++)
        if (n->coloc[j] >= 0 && n->coloc[j] < st->n0 && st->shared[n->coloc[j]])
            return 1;
    return 0;
}

/* Mark the replicated Consts without a request whose consumers all follow
 * shared nodes (an async update's learning rate): like TF's consts built
 * under colocate_with(var), they stay with their consumers on the ps. */
static void find_lone_consts(rstate *st)
{
    const dgc_graph *g = st->g;
    for (int32_t i = 0; i < st->n0; i++)
        st->lone[i] = 2 * (g->nodes[i].op == DGC_OPID_Const &&
                           !st->shared[i] &&
                           (!g->nodes[i].device || !g->nodes[i].device[0]));
    for (int32_t j = 0; j < st->n0; j++) {
        const dgc_node *n = &g->nodes[j];
        int follows = !st->shared[j] && follows_shared(st, j);
        for (int k = 0; k < n->n_inputs; k++) {
            int32_t c = n->inputs[k].node;
            if (c < st->n0 && st->lone[c])
                st->lone[c] = follows ? (st->lone[c] == 2 ? 1 : st->lone[c])
                                      : 3;
        }
    }
    for (int32_t i = 0; i < st->n0; i++)
        st->lone[i] = st->lone[i] == 1;
}

/* Set node id's request to `s` with job/task replaced; 0 ok, -1 nomem. */
static int set_request(dgc_node *n, dgc_devspec *s, const char *job, int task)
{
    s->has_job = 1;
    snprintf(s->job, sizeof s->job, "%s", job);
    s->task = task;
    char buf[256];
    dgc_devspec_str(s, buf, sizeof buf);
    char *d = dg_strdup(buf);
    if (!d)
        return -1;
    dg_free(n->device);
    n->device = d;
    return 0;
}

/* Requests of replica k's copy of i: /job:<job>/task:k plus its type and
 * index; a copy bound to a shared node keeps its request. */
static dg_status place_copy(rstate *st, int k, int32_t i)
{
    dgc_node *n = &st->g->nodes[cp(st, k, i)];
    if (n->group_hint >= 0 && n->group_hint < st->n0 &&
        st->shared[n->group_hint])
        n->group_hint = -1; /* a gradient op stays in its replica */
    if (follows_shared(st, i) || st->lone[i])
        return DG_OK;
    dgc_devspec s;
    if (dgc_devspec_parse_as(n->device, &s, st->g->device_syntax))
        return DG_OK; /* placement reports the malformed request */
    if ((s.has_job && strcmp(s.job, st->r->job) != 0) || s.task >= 0)
        return GE("node '%s': its request '%s' names a job or task, but it is "
                  "replicated over the tasks of job '%s' (replicate): a "
                  "replicated node's request may name only a device type "
                  "and index", orig_name(st, i), n->device ? n->device : "",
                  st->r->job);
    if (set_request(n, &s, st->r->job, k))
        return dg_err_nomem(st->err, "replication pass");
    return DG_OK;
}

/* Deal the shared Variables that name no job and follow no other node
 * round robin over the ps tasks (replica_device_setter). */
static dg_status deal_variables(rstate *st)
{
    int d = 0;
    for (int32_t i = 0; i < st->n0; i++) {
        dgc_node *n = &st->g->nodes[i];
        if (!st->shared[i] || !dgc_op_has(n->op, DGC_OP_VARIABLE) ||
            n->n_coloc > 0)
            continue;
        dgc_devspec s;
        if (dgc_devspec_parse_as(n->device, &s, st->g->device_syntax) ||
            s.has_job)
            continue;
        if (set_request(n, &s, st->r->ps_job, d++ % st->P))
            return dg_err_nomem(st->err, "replication pass");
    }
    return DG_OK;
}

static dg_status collective_attrs(rstate *st, int k, int32_t i)
{
    int op = st->g->nodes[i].op;
    if (op != DGC_OPID_AllReduce && op != DGC_OPID_Broadcast &&
        op != DGC_OPID_ReplicaIndex)
        return DG_OK;
    dgc_node *n = &st->g->nodes[cp(st, k, i)];
    if (op != DGC_OPID_ReplicaIndex && dgc_attr_int(n, "root", 0) >= st->W)
        return GE("node '%s': %s root %lld is not a replica (%d "
                  "replicas)", orig_name(st, i), dgc_op_name(op),
                  (long long)dgc_attr_int(n, "root", 0), st->W);
    if (dgc_node_set_int(n, "replica", k) ||
        dgc_node_set_int(n, "replicas", st->W) ||
        (op != DGC_OPID_ReplicaIndex &&
         dgc_node_set_str(&st->g->nodes[cp(st, k, i)], "key",
                          orig_name(st, i))))
        return dg_err_nomem(st->err, "replication pass");
    return DG_OK;
}

/* Name of output r of original node r.node: "n" or "n_k" for output k. */
static void ref_name(const rstate *st, dgc_ref r, char *buf, size_t sz)
{
    if (r.index == 0)
        snprintf(buf, sz, "%s", orig_name(st, r.node));
    else
        snprintf(buf, sz, "%s_%d", orig_name(st, r.node), (int)r.index);
}

static int32_t add_gen(rstate *st, const char *name, int op)
{
    int32_t id = dgc_graph_add_node(st->g, name, op, st->err);
    if (id >= 0)
        st->g->nodes[id].flags |= DGC_NODE_GENERATED;
    return id;
}

/* ps sync: the replicas' mean of original ref r, read by shared node `by`:
 * AddN over the replicas, times a Const 1/W, both colocated with `by`. */
static int32_t replica_mean(rstate *st, dgc_ref r, int32_t by)
{
    dgc_graph *g = st->g;
    dg_dtype t = r.index < g->nodes[r.node].n_outputs
                     ? g->nodes[r.node].outputs[r.index].dtype
                     : DG_F32;
    char base[1100], name[1200];
    ref_name(st, r, base, sizeof base);
    if (t != DG_F32 && t != DG_F64) {
        GE("node '%s': shared node '%s' reads it, so the replicas' values "
           "would be averaged, but its dtype is %s", base, g->nodes[by].name,
           dg_dtype_name(t));
        return -1;
    }
    snprintf(name, sizeof name, "%s/replica_sum", base);
    int32_t sum = add_gen(st, name, DGC_OPID_AddN);
    snprintf(name, sizeof name, "%s/replica_scale", base);
    int32_t sc = sum < 0 ? -1 : add_gen(st, name, DGC_OPID_Const);
    snprintf(name, sizeof name, "%s/replica_mean", base);
    int32_t mean = sc < 0 ? -1 : add_gen(st, name, DGC_OPID_Mul);
    if (mean < 0)
        return -1;
    dg_shape s0;
    memset(&s0, 0, sizeof s0);
    dg_tensor *v = dg_tensor_new(t, &s0);
    if (!v)
        return dg_err_nomem(st->err, "replication pass"), -1;
    if (t == DG_F32)
        *(float *)v->data = 1.0f / (float)st->W;
    else
        *(double *)v->data = 1.0 / (double)st->W;
    int bad = dgc_node_set_tensor(&g->nodes[sc], "value", v) ||
              dgc_node_set_dtype(&g->nodes[sc], "dtype", t);
    for (int k = 0; k < st->W && !bad; k++)
        bad = dgc_node_add_input(g, sum, (dgc_ref){cp(st, k, r.node), r.index});
    bad = bad || dgc_node_add_input(g, mean, (dgc_ref){sum, 0}) ||
          dgc_node_add_input(g, mean, (dgc_ref){sc, 0});
    for (int j = 0; j < 2 && !bad; j++) {
        dgc_node *n = &g->nodes[j ? mean : sum];
        if (!(n->coloc = dg_malloc(sizeof *n->coloc)))
            bad = 1;
        else
            n->coloc[n->n_coloc++] = by;
    }
    if (bad)
        return dg_err_nomem(st->err, "replication pass"), -1;
    return mean;
}

/* ps sync: shared nodes' data inputs from replicas read their mean; their
 * control inputs on a replicated node wait for every replica's copy. */
static dg_status aggregate_shared(rstate *st)
{
    dgc_graph *g = st->g;
    for (int32_t i = 0; i < st->n0; i++) {
        if (!st->shared[i])
            continue;
        for (int j = 0; j < g->nodes[i].n_inputs; j++) {
            dgc_ref r = g->nodes[i].inputs[j];
            if (r.node >= st->n0 || st->shared[r.node])
                continue;
            int32_t m = replica_mean(st, r, i);
            if (m < 0)
                return st->err->code ? st->err->code : DG_E_GRAPH;
            g->nodes[i].inputs[j] = (dgc_ref){m, 0};
        }
        int nc = g->nodes[i].n_ctrl;
        for (int j = 0; j < nc; j++) {
            int32_t c = g->nodes[i].ctrl[j];
            if (c < 0 || c >= st->n0 || st->shared[c])
                continue;
            for (int k = 1; k < st->W; k++)
                if (dgc_node_add_ctrl(g, i, cp(st, k, c)))
                    return dg_err_nomem(st->err, "replication pass");
        }
    }
    return DG_OK;
}

/* allreduce: replica k's update side reads the replicas' mean of each
 * gradient through an AllReduce on its own task.  memo[r.node] caches the
 * AllReduce of output 0 (gradients have one output). */
static dg_status allreduce_gradients(rstate *st, int k, int32_t *memo)
{
    dgc_graph *g = st->g;
    for (int32_t i = st->U; i < st->n0; i++) {
        int32_t ci = cp(st, k, i);
        for (int j = 0; j < g->nodes[ci].n_inputs; j++) {
            dgc_ref r = g->nodes[i].inputs[j];
            if (r.node >= st->U ||
                dgc_op_has(g->nodes[r.node].op, DGC_OP_VARIABLE))
                continue;
            int32_t ar = r.index == 0 ? memo[r.node] : -1;
            if (ar < 0) {
                char base[1100], name[1200];
                ref_name(st, r, base, sizeof base);
                snprintf(name, sizeof name, "replica_%d/%s/AllReduce", k, base);
                ar = add_gen(st, name, DGC_OPID_AllReduce);
                if (ar < 0)
                    return st->err->code ? st->err->code : DG_E_GRAPH;
                snprintf(name, sizeof name, "%s/AllReduce", base);
                dgc_node *n = &g->nodes[ar];
                dgc_devspec s;
                dgc_devspec_clear(&s);
                if (dgc_node_set_str(n, "reduction", "mean") ||
                    dgc_node_set_str(n, "key", name) ||
                    dgc_node_set_int(n, "replica", k) ||
                    dgc_node_set_int(n, "replicas", st->W) ||
                    set_request(n, &s, st->r->job, k) ||
                    dgc_node_add_input(g, ar,
                                       (dgc_ref){cp(st, k, r.node), r.index}))
                    return dg_err_nomem(st->err, "replication pass");
                if (r.index == 0)
                    memo[r.node] = ar;
            }
            g->nodes[ci].inputs[j] = (dgc_ref){ar, 0};
        }
    }
    return DG_OK;
}

/* Every replica's train op, and the cluster-wide one (train/step). */
static dg_status train_ops(rstate *st)
{
    dgc_graph *g = st->g;
    dgc_train *t = &g->train;
    if (t->train_op < 0)
        return DG_OK;
    st->r->step = dg_malloc(sizeof *st->r->step * (size_t)st->W);
    if (!st->r->step)
        return dg_err_nomem(st->err, "replication pass");
    for (int k = 0; k < st->W; k++)
        st->r->step[k] = cp(st, k, t->train_op);
    if (st->shared[t->train_op])
        return DG_OK;
    int32_t all = add_gen(st, orig_name(st, t->train_op), DGC_OPID_NoOp);
    if (all < 0)
        return st->err->code ? st->err->code : DG_E_GRAPH;
    for (int k = 0; k < st->W; k++)
        if (dgc_node_add_ctrl(g, all, st->r->step[k]))
            return dg_err_nomem(st->err, "replication pass");
    t->train_op = all;
    return DG_OK;
}

static dg_status run(rstate *st)
{
    dgc_graph *g = st->g;
    dg_status s;
    find_lone_consts(st);
    if ((s = rename_replica0(st)))
        return s;
    for (int k = 1; k < st->W; k++)
        for (int32_t i = 0; i < st->n0; i++)
            if (!st->shared[i] && (s = make_copy(st, k, i)))
                return s;
    for (int k = 0; k < st->W; k++)
        for (int32_t i = 0; i < st->n0; i++) {
            if (st->shared[i])
                continue;
            if ((s = place_copy(st, k, i)) || (s = collective_attrs(st, k, i)))
                return s;
            if (st->r->strategy == DGC_REPL_ALLREDUCE &&
                dgc_op_has(g->nodes[i].op, DGC_OP_VARIABLE) &&
                dgc_node_set_str(&g->nodes[cp(st, k, i)], "init_name",
                                 orig_name(st, i)))
                return dg_err_nomem(st->err, "replication pass");
        }
    if (st->r->strategy == DGC_REPL_PS) {
        if ((s = deal_variables(st)) ||
            (st->r->sync && (s = aggregate_shared(st))))
            return s;
    } else if (st->U < st->n0) {
        int32_t *memo = dg_malloc(sizeof *memo * (size_t)st->n0);
        if (!memo)
            return dg_err_nomem(st->err, "replication pass");
        /* replica 0 (the originals) last: the copies read its inputs */
        for (int k = st->W - 1; k >= 0 && !s; k--) {
            for (int32_t i = 0; i < st->n0; i++)
                memo[i] = -1;
            s = allreduce_gradients(st, k, memo);
        }
        dg_free(memo);
        if (s)
            return s;
    }
    return train_ops(st);
}

dg_status dgc_pass_replicate(dgc_graph *g, const dg_cluster *cluster,
                             dg_error *err)
{
    dgc_replicate *r = &g->replicate;
    if (!r->present)
        return DG_OK;
    err->code = DG_OK;
    rstate st = {g, r, err, 0, 0, g->n_nodes, g->n_nodes, NULL, NULL, NULL};
    dg_status s = check_cluster(&st, cluster);
    if (s)
        return s;
    if (g->train.present && g->train.train_op >= 0 &&
        g->train.update_begin >= 0)
        st.U = g->train.update_begin;
    st.shared = dg_calloc((size_t)st.n0 + 1, 1);
    st.lone = dg_calloc((size_t)st.n0 + 1, 1);
    st.copy = dg_malloc(sizeof *st.copy * ((size_t)st.W * (size_t)st.n0 + 1));
    if (!st.shared || !st.lone || !st.copy) {
        dg_free(st.shared);
        dg_free(st.lone);
        dg_free(st.copy);
        return dg_err_nomem(err, "replication pass");
    }
    classify(&st);
    s = run(&st);
    dg_free(st.shared);
    dg_free(st.lone);
    if (s) {
        dg_free(st.copy);
        return s;
    }
    r->replicas = st.W;
    r->n_orig = st.n0;
    dg_free(r->copy);
    r->copy = st.copy;
    return DG_OK;
}
