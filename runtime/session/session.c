/*
 * session.c -- dg_session: opening a program's devices, the inter-op and
 * intra-op pools, Variables (initialised once, seeded per node), fed
 * Placeholders, the optional trace recorder, the kernels' environment, and
 * dg_session_run (build a runner for the fetches, run it `repeat` times,
 * return host tensors).  Devices are opened and used through their
 * backends (core/backend.h) only.
 */
#include "session.h"
#include "checkpoint.h"
#include "registry.h"
#include "attr_get.h"
#include "rng.h"
#include "feeds.h"
#include "mpi_layer.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct dgr_session {
    dgr_exec x;               /* the executor's world */
    const dg_program *prog;
    dg_options opts;          /* copy; pointers borrowed from the caller */
    uint8_t *dev_open;        /* device opened (needs closing) */
    struct dgr_pool *intra;   /* intra-op pool of the host devices */
    dgr_kenv env;             /* what kernels get: seeds, Print, tracing */
    pthread_mutex_t print_mu;
    /* Print's stream: a duplicate of stderr taken when the session opens
     * (an OpenCL build captures fd 2 itself meanwhile: issue 19) */
    FILE *print_out;
    uint64_t *print_times;    /* per node: Print calls (env_times) */
    uint64_t t0;              /* session start (trace origin) */
    int64_t stopped;          /* steps done when options.stop ended the
                                 last call early, -1 otherwise */
    int64_t *clock_off;       /* cluster, rank 0: ranks' clock offsets */
};

/* The per-node part of an op's seed: FNV-1a of its name. */
static uint64_t name_hash(const char *s)
{
    return dg_fnv1a(DG_FNV1A_INIT, s, strlen(s));
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- accessors kernels and other runtime files use ---------------------- */

/* The storage of Variable node_id, NULL if it is not a Variable. */
static dgr_value *session_variable(dgr_session *s, int32_t node_id)
{
    if (!s || node_id < 0 || node_id >= s->x.g->n_nodes ||
        !dgc_op_has(s->x.g->nodes[node_id].op, DGC_OP_VARIABLE))
        return NULL;
    return &s->x.vars[node_id];
}

/* The kernels' environment (dgr_kenv): seeds and Print. */
static uint64_t env_rng_seed(void *ctx, int32_t node_id)
{
    dgr_session *s = ctx;
    uint64_t run = atomic_load(&s->x.run_counter);
    const dgc_node *n = &s->x.g->nodes[node_id];
    /* TF's seeds replace the name: `seed` (the graph seed) and `seed2`
     * (the op seed), as tf.compat.v1.get_seed writes them; ops with the
     * same pair give the same numbers, and a pair of zeros (no seed set in
     * TF, which then draws at random) falls back to the node's name. */
    int64_t s1 = dgc_attr_i(n, DGC_AT_seed), s2 = dgc_attr_i(n, DGC_AT_seed2);
    uint64_t who = (s1 || s2)
        ? mix64((uint64_t)s1 ^ 0x5eed5eed5eedULL) ^ (s2 ? mix64((uint64_t)s2) : 0)
        : name_hash(n->name);
    return mix64(s->opts.seed ^ mix64(who ^ mix64(run)));
}

static uint64_t env_times(void *ctx, int32_t node_id)
{
    dgr_session *s = ctx;
    uint64_t t = 0;
    pthread_mutex_lock(&s->print_mu);
    if (!s->print_times)
        s->print_times = dg_calloc((size_t)s->x.g->n_nodes + 1,
                                   sizeof *s->print_times);
    if (s->print_times && node_id >= 0 && node_id < s->x.g->n_nodes)
        t = s->print_times[node_id]++;
    pthread_mutex_unlock(&s->print_mu);
    return t;
}

static void env_print(void *ctx, const char *text)
{
    dgr_session *s = ctx;
    pthread_mutex_lock(&s->print_mu);
    FILE *f = s->print_out ? s->print_out : stderr;
    fputs(text, f);
    fflush(f);
    pthread_mutex_unlock(&s->print_mu);
}

const dg_program *dgr_session_program(const dgr_session *s) { return s->prog; }
const dg_options *dgr_session_options(const dgr_session *s) { return &s->opts; }
dgr_trace *dgr_session_trace(dgr_session *s) { return s->x.trace; }
dgr_exec *dgr_session_exec(dgr_session *s) { return &s->x; }

int dgr_session_stop_requested(const dgr_session *s)
{
    return s->opts.stop && *s->opts.stop != 0;
}

void dgr_session_set_stopped(dgr_session *s, int64_t steps)
{
    s->stopped = steps;
}

int64_t dg_session_stopped(const dg_session *ds)
{
    const dgr_session *s = (const dgr_session *)(const void *)ds;
    return s ? s->stopped : -1;
}

dgr_runner *dgr_session_runner(dgr_session *s, const dgc_ref *fetch,
                               int n_fetch, const int32_t *targets,
                               int n_targets, dg_error *err)
{
    return dgr_runner_new(&s->x, fetch, n_fetch, targets, n_targets, err);
}

dgr_device *dgr_session_device(dgr_session *s, int id)
{
    return id >= 0 && id < s->x.n_dev ? &s->x.devs[id] : NULL;
}

int64_t dg_session_peak_bytes(const dg_session *ds, int device)
{
    const dgr_session *s = (const dgr_session *)(const void *)ds;
    if (!s || device < 0 || device >= s->x.n_dev)
        return 0;
    return (int64_t)atomic_load(&s->x.devs[device].peak);
}

/* ---- values -------------------------------------------------------------- */

static int shape_fits(const dg_shape *want, const dg_shape *got)
{
    if (want->rank != got->rank)
        return 0;
    for (int i = 0; i < want->rank; i++)
        if (want->dims[i] >= 0 && want->dims[i] != got->dims[i])
            return 0;
    return 1;
}

/* Copy a host tensor into a new buffer on device d. */
static dg_status upload(dgr_device *d, const dg_tensor *t, dgr_value *out,
                        dg_error *err)
{
    size_t n = (size_t)dg_shape_numel(&t->shape) * dg_dtype_size(t->dtype);
    dgr_buffer *b = dgr_buffer_new(d, n, -1, err);
    if (!b)
        return err ? err->code : DG_E_NOMEM;
    if (n && d->be->write(d, b, t->data, n, err) != DG_OK) {
        dgr_buffer_release(b);
        return err ? err->code : DG_E_RUNTIME;
    }
    out->dtype = t->dtype;
    out->shape = t->shape;
    out->buf = b;
    return DG_OK;
}

static int32_t node_dev(const dgr_session *s, int32_t id)
{
    int32_t d = s->x.g->nodes[id].device_id;
    return d >= 0 && d < s->x.n_dev ? d : 0;
}

dg_status dgr_session_set_feed(dgr_session *s, int32_t node_id,
                               const dg_tensor *value, dg_error *err)
{
    const dgc_node *n = &s->x.g->nodes[node_id];
    if (!dgc_op_has(n->op, DGC_OP_FEED))
        return dg_err(err, DG_E_GRAPH, "node '%s': only a Placeholder can be "
                      "fed, not a %s", n->name, dgc_op_name(n->op));
    const dgc_ttype *want = &n->outputs[0];
    if (value->dtype != want->dtype)
        return dg_err(err, DG_E_GRAPH, "node '%s': fed a %s value, the "
                      "Placeholder is %s", n->name, dg_dtype_name(value->dtype),
                      dg_dtype_name(want->dtype));
    if (!shape_fits(&want->shape, &value->shape)) {
        char a[128], b[128];
        dg_shape_format(&value->shape, a, sizeof a);
        dg_shape_format(&want->shape, b, sizeof b);
        return dg_err(err, DG_E_GRAPH, "node '%s': fed shape %s does not fit "
                      "the Placeholder's shape %s", n->name, a, b);
    }
    if (!dgr_session_is_local(s, node_id))
        return DG_OK; /* another rank's Placeholder: its feed is there */
    dgr_value v;
    dg_status rc = upload(&s->x.devs[node_dev(s, node_id)], value, &v, err);
    if (rc != DG_OK)
        return rc;
    dgr_buffer_release(s->x.feeds[node_id].buf);
    s->x.feeds[node_id] = v;
    return DG_OK;
}

dg_status dgr_session_read_variable(dgr_session *s, int32_t node_id,
                                    dg_tensor **out, dg_error *err)
{
    dgr_value *v = session_variable(s, node_id);
    if (!v || !v->buf)
        return dg_err(err, DG_E_RUNTIME, "node '%s': not an initialised "
                      "Variable", s->x.g->nodes[node_id].name);
    dg_tensor *t = dg_tensor_new(v->dtype, &v->shape);
    if (!t)
        return dg_err_nomem(err, "variable value");
    size_t n = (size_t)dg_shape_numel(&v->shape) * dg_dtype_size(v->dtype);
    dgr_device *d = v->buf->dev;
    if (n && d->be->read(d, v->buf, t->data, n, err) != DG_OK) {
        dg_tensor_free(t);
        return err ? err->code : DG_E_RUNTIME;
    }
    *out = t;
    return DG_OK;
}

dg_status dgr_session_write_variable(dgr_session *s, int32_t node_id,
                                     const dg_tensor *value, dg_error *err)
{
    dgr_value *v = session_variable(s, node_id);
    const char *name = s->x.g->nodes[node_id].name;
    if (!v || !v->buf)
        return dg_err(err, DG_E_RUNTIME, "node '%s': not an initialised "
                      "Variable", name);
    if (value->dtype != v->dtype || !shape_fits(&v->shape, &value->shape)) {
        char a[128], b[128];
        dg_shape_format(&value->shape, a, sizeof a);
        dg_shape_format(&v->shape, b, sizeof b);
        return dg_err(err, DG_E_GRAPH, "node '%s': cannot assign a %s %s "
                      "value to a %s %s Variable", name,
                      dg_dtype_name(value->dtype), a, dg_dtype_name(v->dtype), b);
    }
    size_t n = (size_t)dg_shape_numel(&v->shape) * dg_dtype_size(v->dtype);
    if (n)
        return v->buf->dev->be->write(v->buf->dev, v->buf, value->data, n,
                                      err);
    return DG_OK;
}

/* ---- creation ------------------------------------------------------------ */

static dg_status init_variable(dgr_session *s, int32_t id, dg_error *err)
{
    const dgc_node *n = &s->x.g->nodes[id];
    if (!n->outputs || n->n_outputs < 1)
        return dg_err(err, DG_E_GRAPH, "node '%s': Variable has no type",
                      n->name);
    const dgc_ttype *ty = &n->outputs[0];
    if (dg_shape_numel(&ty->shape) < 0)
        return dg_err(err, DG_E_GRAPH, "node '%s': a Variable needs a fully "
                      "defined shape", n->name);
    dg_tensor *t = dg_tensor_new(ty->dtype, &ty->shape);
    if (!t)
        return dg_err_nomem(err, "variable initial value");
    dgr_rng rng;
    /* a replica's copy of a Variable (replicate.c) starts as the original
     * would: it is seeded by the original's name, attr "init_name" */
    const dgc_attr *in = dgc_attr_at(n, DGC_AT_init_name);
    dgr_rng_seed(&rng, mix64(s->opts.seed) ^
                           name_hash(in && in->s ? in->s : n->name));
    const dgc_attr *a = dgc_attr_at(n, DGC_AT_init);
    dg_status rc = DG_OK;
    if (a) {
        dgc_init tmp;
        memset(&tmp, 0, sizeof tmp);
        const dgc_init *init = NULL;
        dg_tensor scalar;
        double dv = 0;
        dg_shape s0 = {0, {0}};
        switch (a->kind) {
        case DGC_A_INIT: init = &a->init; break;
        case DGC_A_TENSOR:
            tmp.kind = DGC_INIT_VALUE;
            tmp.value = a->tensor;
            init = &tmp;
            break;
        case DGC_A_FLOAT: case DGC_A_INT: case DGC_A_BOOL:
            dv = a->kind == DGC_A_FLOAT ? a->f : (double)a->i;
            scalar.dtype = DG_F64;
            scalar.shape = s0;
            scalar.data = &dv;
            tmp.kind = DGC_INIT_VALUE;
            tmp.value = &scalar;
            init = &tmp;
            break;
        default: break;
        }
        if (init) {
            rc = dgr_init_fill(init, t, &rng, err);
            if (rc != DG_OK && err) {
                char prev[sizeof err->msg];
                snprintf(prev, sizeof prev, "%s", err->msg);
                dg_err(err, rc, "node '%s': %s", n->name, prev);
            }
        }
    }
    if (rc == DG_OK)
        rc = upload(&s->x.devs[node_dev(s, id)], t, &s->x.vars[id], err);
    dg_tensor_free(t);
    return rc;
}

static dg_status build_names(dgr_session *s, dg_error *err)
{
    const dgc_graph *g = s->x.g;
    s->x.out_names = dg_calloc((size_t)g->n_nodes + 1, sizeof *s->x.out_names);
    s->x.in_names = dg_calloc((size_t)g->n_nodes + 1, sizeof *s->x.in_names);
    if (!s->x.out_names || !s->x.in_names)
        return dg_err_nomem(err, "trace names");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int no = dgc_node_n_out(&g->nodes[i]);
        s->x.out_names[i] = dg_calloc((size_t)no + 1, sizeof(char *));
        if (!s->x.out_names[i])
            return dg_err_nomem(err, "trace names");
        for (int k = 0; k < no; k++) {
            dgc_ref r = {i, k};
            if (!(s->x.out_names[i][k] = dgr_ref_name(g, r)))
                return dg_err_nomem(err, "trace names");
        }
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *n = &g->nodes[i];
        s->x.in_names[i] = dg_calloc((size_t)n->n_inputs + 1, sizeof(char *));
        if (!s->x.in_names[i])
            return dg_err_nomem(err, "trace names");
        for (int k = 0; k < n->n_inputs; k++) {
            dgc_ref r = n->inputs[k];
            int no = dgc_node_n_out(&g->nodes[r.node]);
            s->x.in_names[i][k] = r.index < no ? s->x.out_names[r.node][r.index]
                                             : g->nodes[r.node].name;
        }
    }
    return DG_OK;
}

/* Another rank's device: never opened, no pool; a table with no
 * functions, so that loops over the world's devices see no streams. */
static const dgr_backend remote_backend = {.name = "remote"};

static dg_status open_devices(dgr_session *s, const dg_options *o,
                              dg_error *err)
{
    const dg_device_list *dl = &s->prog->devs;
    s->x.devlist = dl;
    s->x.n_dev = dl->n;
    s->x.devs = dg_calloc((size_t)s->x.n_dev + 1, sizeof *s->x.devs);
    s->dev_open = dg_calloc((size_t)s->x.n_dev + 1, 1);
    s->x.pools = dg_calloc((size_t)s->x.n_dev + 1, sizeof *s->x.pools);
    s->x.lane_base = dg_calloc((size_t)s->x.n_dev + 1, sizeof *s->x.lane_base);
    s->x.mem_seen = dg_calloc((size_t)s->x.n_dev + 1, sizeof *s->x.mem_seen);
    s->x.mem_seen_ns = dg_calloc((size_t)s->x.n_dev + 1,
                                 sizeof *s->x.mem_seen_ns);
    if (!s->x.devs || !s->dev_open || !s->x.pools || !s->x.lane_base ||
        !s->x.mem_seen || !s->x.mem_seen_ns)
        return dg_err_nomem(err, "session devices");
    s->intra = dgr_pool_new(o->intra_op_threads, err);
    if (!s->intra)
        return err ? err->code : DG_E_NOMEM;
    for (int i = 0; i < s->x.n_dev; i++) {
        dgr_device *d = &s->x.devs[i];
        d->info = dl->devs[i];
        d->id = i;
        atomic_init(&d->in_use, 0);
        atomic_init(&d->peak, 0);
        atomic_init(&s->x.mem_seen[i], 0);
        atomic_init(&s->x.mem_seen_ns[i], 0);
        if (s->x.xport && d->info.rank != s->x.rank) {
            d->be = &remote_backend;
            continue;
        }
        d->be = dgr_backend_of(&d->info);
        if (!d->be)
            return dg_err(err, DG_E_RUNTIME, "%s: no backend in this build "
                          "runs this device", d->info.name);
        dg_status rc = d->be->open(d, o, err);
        if (rc != DG_OK)
            return rc;
        s->dev_open[i] = 1;
        /* kernels of host backends split their work over the intra-op
         * pool; devices with streams enqueue from one worker */
        if (d->be->host_memory)
            d->intra = s->intra;
    }
    int n_workers = 0;
    for (int i = 0; i < s->x.n_dev; i++) {
        if (s->x.devs[i].be == &remote_backend) {
            s->x.lane_base[i] = n_workers;
            continue;
        }
        int th = s->x.devs[i].be->streams
                     ? 1
                     : (o->inter_op_threads > 0 ? o->inter_op_threads
                                                : dgr_ncores());
        s->x.lane_base[i] = n_workers;
        s->x.pools[i] = dgr_ipool_new(th, dgr_exec_task, err);
        if (!s->x.pools[i])
            return err ? err->code : DG_E_NOMEM;
        if (s->x.devs[i].intra)
            dgr_ipool_share(s->x.pools[i], s->x.devs[i].intra);
        n_workers += th;
    }
    s->x.lane_base[s->x.n_dev] = n_workers;
    s->x.n_workers = n_workers;
    return DG_OK;
}

static dg_status setup_trace(dgr_session *s, dg_error *err)
{
    s->x.trace = dgr_trace_new(&s->prog->devs, s->x.g->path);
    if (!s->x.trace)
        return dg_err_nomem(err, "trace");
    dgr_trace_set_origin(s->x.trace, s->t0);
    for (int d = 0; d < s->x.n_dev; d++) {
        char nm[64];
        const dgr_backend *be = s->x.devs[d].be;
        if (!s->x.pools[d])
            continue; /* another rank's */
        if (!be->streams) {
            int th = dgr_ipool_threads(s->x.pools[d]);
            for (int k = 0; k < th; k++) {
                snprintf(nm, sizeof nm, "inter-op %d", k);
                dgr_trace_lane_name(s->x.trace, d, k, nm);
            }
        } else {
            snprintf(nm, sizeof nm, "%s 0", be->stream_label);
            dgr_trace_lane_name(s->x.trace, d, 0, nm);
        }
        dgr_trace_lane_name(s->x.trace, d, DGR_LANE_COPY, "copy");
        if (s->x.xport)
            dgr_trace_lane_name(s->x.trace, d, DGR_LANE_NET, "network");
        if (s->x.xport && dgr_replica_count(s->x.g) > 1)
            dgr_trace_lane_name(s->x.trace, d, DGR_LANE_COLL, "collectives");
    }
    return build_names(s, err);
}

static dg_status load_feeds(dgr_session *s, const dg_options *o, dg_error *err)
{
    for (int i = 0; i < o->n_feeds; i++) {
        const dg_feed_arg *f = &o->feeds[i];
        /* replicated (SPEC 8.4): `x` is this rank's replica's replica_k/x */
        int32_t id = dgr_session_replica_node(s, f->name,
                                              dgr_session_replica(s));
        size_t nl = strlen(f->name);
        if (id < 0 && nl > 2 && strcmp(f->name + nl - 2, ":0") == 0) {
            /* TF's tensor name "x:0" (a Placeholder's only output) */
            char base[256];
            if (nl - 2 < sizeof base) {
                memcpy(base, f->name, nl - 2);
                base[nl - 2] = '\0';
                id = dgc_graph_find(s->x.g, base);
            }
        }
        dgc_ref r0;
        if (id < 0 && dgr_replica_parse_ref(s->x.g, f->name, 0, &r0) == 0)
            id = r0.node; /* replica 0's replica_0/x */
        /* a replicated graph: every replica's copy gets the file (each
         * rank reads it for the copy it runs) */
        for (int k = 0; id >= 0 && k < dgr_replica_count(s->x.g); k++)
            if (dgr_session_is_local(s, dgr_replica_node(s->x.g, id, k))) {
                id = dgr_replica_node(s->x.g, id, k);
                break;
            }
        if (id < 0 || !dgc_op_has(s->x.g->nodes[id].op, DGC_OP_FEED))
            return dg_err(err, DG_E_USAGE, "--feed %s=%s: %s", f->name,
                          f->file, id < 0 ? "no such node"
                                          : "the node is not a Placeholder");
        if (!dgr_session_is_local(s, id))
            continue; /* read by the task that runs it (SPEC 8.3) */
        const dgc_ttype *ty = &s->x.g->nodes[id].outputs[0];
        dg_tensor *t = NULL;
        dg_status rc = dgr_tensor_load_file(f->file, ty->dtype, &ty->shape,
                                            &t, err);
        if (rc != DG_OK) { /* name the Placeholder, not only the file */
            if (err) {
                char why[sizeof err->msg];
                memcpy(why, err->msg, sizeof why);
                dg_err(err, rc, "node '%s': %s", s->x.g->nodes[id].name, why);
            }
            return rc;
        }
        rc = dgr_session_set_feed(s, id, t, err);
        dg_tensor_free(t);
        if (rc != DG_OK)
            return rc;
    }
    return DG_OK;
}

dg_session *dg_session_new(const dg_program *p, const dg_options *o,
                           dg_error *err)
{
    /* a cluster program runs only as one rank of its MPI job (SPEC 8.3),
     * never as one process with every task's devices */
    dgr_transport *xport = p->cluster ? dgr_mpi_transport() : NULL;
    if (p->cluster && !xport) {
        dg_cluster_join(p->cluster, NULL, err);
        if (err && err->code == DG_OK)
            dg_err(err, DG_E_USAGE, "this process joined no cluster");
        return NULL;
    }
    dgr_session *s = dg_calloc(1, sizeof *s);
    if (!s) {
        dg_err_nomem(err, "session");
        return NULL;
    }
    s->prog = p;
    s->x.g = p->g;
    s->x.xport = xport;
    s->x.rank = xport ? xport->rank : 0;
    for (int i = 0; xport && i < p->devs.n; i++)
        if (p->devs.devs[i].rank == s->x.rank) {
            s->x.host_dev = i; /* its CPU:0 comes first */
            break;
        }
    if (o) {
        s->opts = *o;
    } else {
        s->opts.repeat = 1;
        s->opts.steps = -1;
    }
    s->opts.trace_path = NULL;
    s->t0 = dg_now_ns();
    s->stopped = -1;
    atomic_init(&s->x.run_counter, 0);
    pthread_mutex_init(&s->print_mu, NULL);
    fflush(stderr);
    int pfd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    s->print_out = pfd >= 0 ? fdopen(pfd, "w") : NULL;
    if (!s->print_out && pfd >= 0)
        close(pfd);
    pthread_mutex_init(&s->x.run_mu, NULL);
    s->env.ctx = s;
    s->env.rng_seed = env_rng_seed;
    s->env.print = env_print;
    s->env.times = env_times;
    s->env.tracing = o && o->trace_path != NULL;
    s->env.collective = NULL; /* no collective runtime without MPI */
    s->x.env = &s->env;
    dg_session *ds = (dg_session *)(void *)s;
    s->x.vars = dg_calloc((size_t)s->x.g->n_nodes + 1, sizeof *s->x.vars);
    s->x.feeds = dg_calloc((size_t)s->x.g->n_nodes + 1, sizeof *s->x.feeds);
    if (!s->x.vars || !s->x.feeds) {
        dg_err_nomem(err, "session");
        goto fail;
    }
    if (o && o->trace_path && !(s->opts.trace_path = dg_strdup(o->trace_path))) {
        dg_err_nomem(err, "session");
        goto fail;
    }
    if (open_devices(s, &s->opts, err) != DG_OK)
        goto fail;
    if (s->opts.trace_path && setup_trace(s, err) != DG_OK)
        goto fail;
    if (s->opts.trace_path && s->x.xport &&
        dgr_session_clock_offsets(s, &s->clock_off, err) != DG_OK)
        goto fail;
    for (int32_t i = 0; i < s->x.g->n_nodes; i++)
        if (dgc_op_has(s->x.g->nodes[i].op, DGC_OP_VARIABLE) &&
            dgr_session_is_local(s, i) && init_variable(s, i, err) != DG_OK)
            goto fail;
    if (load_feeds(s, &s->opts, err) != DG_OK)
        goto fail;
    /* a SavedModel's variables/ (issue 24), unless --checkpoint names the
     * checkpoint to restore */
    int64_t sm_step;
    if (s->x.g->variables_path && !(o && o->checkpoint_dir) &&
        dgr_checkpoint_restore(s, s->x.g->variables_path, &sm_step,
                               err) != DG_OK)
        goto fail;
    /* a replicated graph's collectives (SPEC 8.4) */
    if (dgr_session_replica_start(s, &s->env, err) != DG_OK)
        goto fail;
    return ds;
fail:
    dg_session_free(ds);
    return NULL;
}

void dg_session_free(dg_session *ds)
{
    dgr_session *s = (dgr_session *)(void *)ds;
    if (!s)
        return;
    dgr_session_replica_stop(s);
    if (s->x.pools)
        for (int i = 0; i < s->x.n_dev; i++)
            if (s->x.pools[i])
                dgr_ipool_free(s->x.pools[i]);
    dgr_pool_free(s->intra);
    for (int32_t i = 0; s->x.vars && i < s->x.g->n_nodes; i++)
        dgr_buffer_release(s->x.vars[i].buf);
    for (int32_t i = 0; s->x.feeds && i < s->x.g->n_nodes; i++)
        dgr_buffer_release(s->x.feeds[i].buf);
    if (s->x.devs)
        for (int i = 0; i < s->x.n_dev; i++)
            if (s->dev_open && s->dev_open[i])
                s->x.devs[i].be->close(&s->x.devs[i]);
    dgr_trace_free(s->x.trace);
    for (int32_t i = 0; s->x.out_names && i < s->x.g->n_nodes; i++) {
        if (s->x.out_names[i])
            for (int k = 0; k < dgc_node_n_out(&s->x.g->nodes[i]); k++)
                dg_free(s->x.out_names[i][k]);
        dg_free(s->x.out_names[i]);
    }
    for (int32_t i = 0; s->x.in_names && i < s->x.g->n_nodes; i++)
        dg_free((void *)s->x.in_names[i]);
    dg_free(s->x.out_names);
    dg_free(s->x.in_names);
    dg_free(s->x.vars);
    dg_free(s->x.feeds);
    dg_free(s->x.devs);
    dg_free(s->dev_open);
    dg_free(s->x.pools);
    dg_free(s->x.lane_base);
    dg_free(s->x.mem_seen);
    dg_free(s->x.mem_seen_ns);
    dg_free((void *)s->opts.trace_path);
    dg_free(s->clock_off);
    dg_free(s->print_times);
    pthread_mutex_destroy(&s->print_mu);
    if (s->print_out)
        fclose(s->print_out);
    pthread_mutex_destroy(&s->x.run_mu);
    dg_free(s);
}

/* ---- running fetches ------------------------------------------------------ */

dg_status dg_session_run(dg_session *ds, dg_fetch_result **out, int *n_out,
                         dg_error *err)
{
    dgr_session *s = (dgr_session *)(void *)ds;
    const dg_program *p = s->prog;
    const char *const *names = (const char *const *)p->fetch;
    int n = p->n_fetch;
    if (s->opts.fetch && s->opts.n_fetch > 0 && n == 0) {
        names = s->opts.fetch;
        n = s->opts.n_fetch;
    }
    *out = NULL;
    *n_out = 0;
    dgc_ref *refs = dg_calloc((size_t)n + 1, sizeof *refs);
    int w = dgr_replica_count(s->x.g);
    int32_t *targets = dg_calloc((size_t)n * (size_t)w + 1, sizeof *targets);
    int *slot_of = dg_calloc((size_t)n + 1, sizeof *slot_of);
    dg_tensor **vals = dg_calloc((size_t)n + 1, sizeof *vals);
    dg_fetch_result *res = dg_calloc((size_t)n + 1, sizeof *res);
    dgr_runner *r = NULL;
    dg_status rc = DG_OK;
    if (!refs || !targets || !slot_of || !vals || !res) {
        rc = dg_err_nomem(err, "fetches");
        goto done;
    }
    int nf = 0, nt = 0;
    for (int i = 0; i < n; i++) {
        dgc_ref ref;
        if (dgr_replica_parse_ref(s->x.g, names[i], 0, &ref) != 0) {
            rc = dg_err(err, DG_E_GRAPH, "fetch '%s': no such node", names[i]);
            goto done;
        }
        const dgc_node *nd = &s->x.g->nodes[ref.node];
        int no = dgc_node_n_out(nd);
        if (no == 0 && ref.index == 0) {
            /* Fetching an op without outputs runs it (TF returns None). */
            targets[nt++] = ref.node;
            slot_of[i] = -1;
            continue;
        }
        if (ref.index < 0 || ref.index >= no) {
            rc = dg_err(err, DG_E_GRAPH, "fetch '%s': node '%s' has %d "
                        "output%s", names[i], nd->name, no, no == 1 ? "" : "s");
            goto done;
        }
        slot_of[i] = nf;
        refs[nf++] = ref;
    }
    /* a replicated graph: every replica runs what replica 0 runs (SPEC 8.4) */
    for (int i = 0, n0 = nt; i < nf + n0 && w > 1; i++) {
        int32_t id = i < nf ? refs[i].node : targets[i - nf];
        for (int k = 1; k < w; k++)
            if (dgr_replica_node(s->x.g, id, k) != id)
                targets[nt++] = dgr_replica_node(s->x.g, id, k);
    }
    r = dgr_runner_new(&s->x, refs, nf, targets, nt, err);
    if (!r) {
        rc = err ? err->code : DG_E_RUNTIME;
        goto done;
    }
    int64_t repeat = s->opts.repeat > 0 ? s->opts.repeat : 1;
    s->stopped = -1;
    for (int64_t k = 0; k < repeat && rc == DG_OK; k++) {
        if (dgr_session_stop_requested(s)) { /* between runs only */
            s->stopped = k;
            goto done;
        }
        rc = dgr_runner_run(r, k, k + 1 == repeat ? vals : NULL, err);
    }
    if (rc != DG_OK)
        goto done;
    for (int i = 0; i < n; i++) {
        /* replica 0's value under the name the user wrote (SPEC 8.4) */
        res[i].name = s->x.g->replicate.replicas > 0 &&
                              strncmp(names[i], "replica_0/", 10) == 0
                          ? names[i] + 10
                          : names[i];
        if (slot_of[i] >= 0) {
            res[i].value = vals[slot_of[i]];
            vals[slot_of[i]] = NULL;
        }
    }
    *out = res;
    *n_out = n;
    res = NULL;
done:
    for (int i = 0; vals && i < n; i++)
        dg_tensor_free(vals[i]);
    dgr_runner_free(r);
    dg_free(refs);
    dg_free(targets);
    dg_free(slot_of);
    dg_free(vals);
    dg_free(res);
    return rc;
}

void dg_fetch_results_free(dg_fetch_result *r, int n)
{
    if (!r)
        return;
    for (int i = 0; i < n; i++)
        dg_tensor_free(r[i].value);
    dg_free(r);
}

char *dg_session_profile_summary(const dg_session *ds)
{
    const dgr_session *s = (const dgr_session *)(const void *)ds;
    if (!s || !s->x.trace)
        return NULL;
    char *mine = dgr_trace_summary(s->x.trace);
    if (!s->x.xport)
        return mine;
    /* a cluster: every task's summary, collected by rank 0 */
    return dgr_session_cluster_summary((dgr_session *)(uintptr_t)s, mine);
}

dg_status dg_session_write_trace(dg_session *ds, dg_error *err)
{
    dgr_session *s = (dgr_session *)(void *)ds;
    if (!s->x.trace || !s->opts.trace_path)
        return DG_OK;
    if (s->x.xport) /* one trace of every task, written by rank 0 */
        return dgr_session_cluster_trace(s, s->x.trace, s->t0, s->clock_off,
                                         s->opts.trace_path, err);
    return dgr_trace_write(s->x.trace, s->opts.trace_path, err);
}
