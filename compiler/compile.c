/*
 * compile.c -- dg_compile: resolve the options against the graph, run the
 * passes in order (gradients, training, replication, inference of the
 * generated nodes, placement, fusion, transfers), resolve the fetches; plus the dg_program accessors
 * of dgrun.h.
 */
#include "program.h"
#include "cluster.h"
#include "load.h"
#include "ops.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>

static void free_program_parts(dg_program *p)
{
    for (int i = 0; i < p->n_fetch; i++)
        dg_free(p->fetch[i]);
    dg_free(p->fetch);
    if (p->transfer_from)
        for (int i = 0; i < p->n_transfers; i++)
            dg_free(p->transfer_from[i]);
    dg_free(p->transfer_from);
    dg_free(p->transfers);
    dg_free(p->devs.devs);
    dg_free(p->device_scope);
    dg_cluster_free(p->cluster);
}

void dg_program_free(dg_program *p)
{
    if (!p)
        return;
    free_program_parts(p);
    dgc_graph_free(p->g);
    dg_free(p);
}

/* Check one fetch name: "x" or "x:k" with k < outputs. */
static dg_status check_fetch(const dgc_graph *g, const char *name,
                             dg_error *err)
{
    dgc_ref r;
    if (!name || !*name || dgc_graph_parse_ref(g, name, &r) < 0 || r.node < 0)
        return dg_err(err, DG_E_GRAPH, "fetch '%s': no such node",
                      name ? name : "");
    const dgc_node *n = &g->nodes[r.node];
    int n_out = n->n_outputs > 0 ? n->n_outputs : dgc_ops[n->op].n_out;
    if (strchr(name, ':') && (r.index < 0 || r.index >= n_out))
        return dg_err(err, DG_E_GRAPH,
                      "fetch '%s': node '%s' has %d output%s", name, n->name,
                      n_out, n_out == 1 ? "" : "s");
    return DG_OK;
}

static dg_status resolve_fetch(dg_program *p, const dg_options *o,
                               dg_error *err)
{
    const dgc_graph *g = p->g;
    const char *const *names = (const char *const *)g->fetch;
    int n = g->n_fetch;
    if (o && o->fetch && o->n_fetch > 0) {
        names = o->fetch;
        n = o->n_fetch;
    }
    if (n <= 0)
        return DG_OK;
    p->fetch = dg_calloc((size_t)n, sizeof *p->fetch);
    if (!p->fetch)
        return dg_err_nomem(err, "fetch list");
    for (int i = 0; i < n; i++) {
        /* in a replicated graph, `n` is replica 0's replica_0/n (SPEC 8.4) */
        char r0[1100];
        const char *nm = names[i];
        if (g->replicate.replicas > 0 && nm && *nm && strlen(nm) < 1000) {
            snprintf(r0, sizeof r0, "replica_0/%s", nm);
            dgc_ref ref;
            if (dgc_graph_parse_ref(g, nm, &ref) < 0 &&
                dgc_graph_parse_ref(g, r0, &ref) >= 0)
                nm = r0;
        }
        dg_status st = check_fetch(g, nm, err);
        if (st)
            return st;
        p->fetch[i] = dg_strdup(nm);
        p->n_fetch = i + 1;
        if (!p->fetch[i])
            return dg_err_nomem(err, "fetch list");
    }
    return DG_OK;
}

static dg_status make_transfer_names(dg_program *p, dg_error *err)
{
    if (p->n_transfers == 0)
        return DG_OK;
    p->transfer_from = dg_calloc((size_t)p->n_transfers, sizeof(char *));
    if (!p->transfer_from)
        return dg_err_nomem(err, "transfers");
    for (int i = 0; i < p->n_transfers; i++) {
        const dgc_transfer *t = &p->transfers[i];
        const char *nm = p->g->nodes[t->src.node].name;
        if (t->src.index == 0)
            continue; /* the node name itself */
        size_t len = strlen(nm) + 16;
        p->transfer_from[i] = dg_malloc(len);
        if (!p->transfer_from[i])
            return dg_err_nomem(err, "transfers");
        snprintf(p->transfer_from[i], len, "%s:%d", nm, (int)t->src.index);
    }
    return DG_OK;
}

const dg_cluster *dg_graph_cluster(const dg_graph *g, const dg_options *o)
{
    if (o && o->cluster)
        return o->cluster;
    return g ? g->cluster : NULL;
}

int dg_program_fetch_count(const dg_program *p)
{
    return p ? p->n_fetch : 0;
}

/* Does device request s need the real device list to be judged: a GPU,
 * or any type with an id (an unparsable one is judged the same either
 * way)? */
static int spec_needs_devices(const char *s, int syntax)
{
    dgc_devspec d;
    if (!s || !*s || dgc_devspec_parse_as(s, &d, syntax) != 0)
        return 0;
    return d.type == DG_DEV_GPU || (d.type == DGC_TYPE_ANY && d.id >= 0);
}

int dg_graph_names_gpu(const dg_graph *g, const dg_options *o)
{
    if (o && spec_needs_devices(o->device_scope, DGC_DEVSPEC_DGRUN))
        return 1;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (spec_needs_devices(g->nodes[i].device, g->device_syntax))
            return 1;
    for (int r = 0; r < g->n_rules; r++) {
        const dgc_rule *ru = &g->rules[r];
        if (spec_needs_devices(ru->device, DGC_DEVSPEC_DGRUN))
            return 1;
        for (int k = 0; k < ru->n_devices; k++)
            if (spec_needs_devices(ru->devices[k], DGC_DEVSPEC_DGRUN))
                return 1;
    }
    return 0;
}

const dg_cluster *dg_program_cluster(const dg_program *p)
{
    return p ? p->cluster : NULL;
}

/* The devices must be the cluster's (dg_devices_for_cluster), or all
 * /job:localhost without one. */
static dg_status check_devices(const dg_cluster *c, const dg_device_list *l,
                               dg_error *err)
{
    char cs[256];
    dg_cluster_str(c, cs, sizeof cs);
    int last = -1;
    for (int i = 0; i < l->n; i++) {
        const dg_device_info *d = &l->devs[i];
        int local = !d->job[0] || strcmp(d->job, "localhost") == 0;
        if (!c && !local)
            return dg_err(err, DG_E_USAGE, "device '%s' belongs to a cluster "
                          "but the graph declares none", d->name);
        if (!c)
            continue;
        int r = local ? -1 : dg_cluster_rank_of(c, d->job, d->task);
        if (r < 0 || r != d->rank || (r != last && r != last + 1))
            return dg_err(err, DG_E_USAGE, "device '%s' is not one of the "
                          "cluster %s's tasks (in rank order)", d->name, cs);
        last = r;
    }
    if (c && (l->devs[l->n - 1].rank != c->n_tasks - 1))
        return dg_err(err, DG_E_USAGE, "the device list does not cover every "
                      "task of the cluster %s", cs);
    return DG_OK;
}

dg_program *dg_compile(dg_graph *g, const dg_options *o,
                       const dg_device_list *devs, dg_error *err)
{
    if (!g || !devs || devs->n < 1) {
        dg_err(err, DG_E_USAGE, "dg_compile: no graph or no devices");
        return NULL;
    }
    const dg_cluster *cluster = dg_graph_cluster(g, o);
    if (check_devices(cluster, devs, err))
        return NULL;
    int colocate = (o && o->colocate >= 0) ? (o->colocate != 0) : -1;
    int allow_soft = (o && o->allow_soft_placement >= 0)
                         ? (o->allow_soft_placement != 0)
                         : (g->allow_soft_placement > 0);
    const char *scope = (o && o->device_scope && o->device_scope[0])
                            ? o->device_scope
                            : NULL;
    dg_status st;
    if (o && o->placement_file) {
        dgc_rule *rules = NULL;
        int n_rules = 0;
        if (dgc_rules_load_file(o->placement_file, &rules, &n_rules, err))
            return NULL;
        dgc_rules_free(g->rules, g->n_rules);
        g->rules = rules;
        g->n_rules = n_rules;
        g->rules_present = 1;
    }
    int32_t first_new = g->n_nodes;
    if ((st = dgc_pass_gradients(g, colocate, err)) ||
        (st = dgc_pass_train(g, colocate, err)) ||
        (st = dgc_pass_replicate(g, cluster, err)) ||
        (st = dgc_pass_infer(g, first_new, err)) ||
        (st = dgc_pass_resolve_pending(g, err)) ||
        (st = dgc_pass_fold(g, err)) ||
        (st = dgc_pass_place(g, devs, scope, g->rules, g->n_rules,
                             allow_soft, colocate, err)))
        return NULL;
    /* after placement: fused nodes keep their device (fuse.c) */
    if ((!o || !o->no_fusion) &&
        dgc_pass_fuse(g, devs, o ? o->fetch : NULL, o ? o->n_fetch : 0, err))
        return NULL;

    dg_program *p = dg_calloc(1, sizeof *p);
    if (!p) {
        dg_err_nomem(err, "program");
        return NULL;
    }
    p->g = g;
    if (cluster && !(p->cluster = dgc_cluster_copy(cluster))) {
        dg_err_nomem(err, "program");
        goto fail;
    }
    p->allow_soft = allow_soft;
    p->colocate = colocate;
    p->devs.devs = dg_malloc(sizeof *p->devs.devs * (size_t)devs->n);
    if (!p->devs.devs) {
        dg_err_nomem(err, "program");
        goto fail;
    }
    memcpy(p->devs.devs, devs->devs, sizeof *p->devs.devs * (size_t)devs->n);
    p->devs.n = devs->n;
    if (scope && !(p->device_scope = dg_strdup(scope))) {
        dg_err_nomem(err, "program");
        goto fail;
    }
    if (dgc_partition(g, NULL, &p->transfers, &p->n_transfers, err) ||
        make_transfer_names(p, err) || resolve_fetch(p, o, err))
        goto fail;
    return p;
fail:
    free_program_parts(p);
    dg_free(p); /* the caller still owns g */
    return NULL;
}

int dg_program_node_count(const dg_program *p)
{
    return p ? (int)p->g->n_nodes : 0;
}

void dg_program_node(const dg_program *p, int i, dg_node_info *out)
{
    const dgc_node *n = &p->g->nodes[i];
    out->name = n->name;
    const char *user = dgc_fused_user_op(n); /* shown as the user's op */
    out->op = user ? user : dgc_node_user_op_name(n);
    int32_t d = dgc_node_placed(n);
    out->device = (d >= 0 && d < p->devs.n) ? p->devs.devs[d].name : "";
    out->requested = n->requested ? n->requested : "";
    out->reason = (dg_reason)n->reason;
    out->generated = (n->flags & DGC_NODE_GENERATED) != 0;
}

int dg_program_transfer_count(const dg_program *p)
{
    return p ? p->n_transfers : 0;
}

void dg_program_transfer(const dg_program *p, int i, dg_transfer_info *out)
{
    const dgc_transfer *t = &p->transfers[i];
    out->from = (p->transfer_from && p->transfer_from[i])
                    ? p->transfer_from[i]
                    : p->g->nodes[t->src.node].name;
    out->to = p->g->nodes[t->first_consumer].name;
    out->src_device = p->devs.devs[t->src_device].name;
    out->dst_device = p->devs.devs[t->dst_device].name;
    const dgc_node *src = &p->g->nodes[t->src.node];
    out->bytes = -1;
    if (t->src.index < src->n_outputs) {
        const dgc_ttype *tt = &src->outputs[t->src.index];
        int64_t numel = dg_shape_numel(&tt->shape);
        if (numel >= 0)
            out->bytes = numel * (int64_t)dg_dtype_size(tt->dtype);
    }
}

const dg_device_list *dg_program_devices(const dg_program *p)
{
    return p ? &p->devs : NULL;
}

int64_t dg_program_log_every(const dg_program *p)
{
    return p ? p->g->train.log_every : 100;
}
