/*
 * train_loop.c -- dg_session_train: the training loop of a graph's "train"
 * section (SPEC 1, 2).  Loads the feed files, deals out batches (rows of all
 * files advance together; a seeded shuffle permutes them alike every epoch;
 * epochs wrap around so every batch has `batch` rows; a replica takes its
 * shard of the W*batch rows of the step, rowstream.h), runs the train op
 * and fetches the loss each step, evaluates on the eval feeds, saves and
 * restores checkpoints, and reports every Variable's final value.
 */
#include "session.h"
#include "feeds.h"
#include "checkpoint.h"
#include "rowstream.h"
#include "rng.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Replicas whose losses a step fetches (the mean is reported). */
#define DGR_MAX_LOSSES 64

/* One section's feeds (train or eval), loaded whole. */
typedef struct feedset {
    int n;
    int32_t *node;      /* Placeholder ids */
    dg_tensor **data;   /* whole files */
    int64_t *batch;     /* 0 = whole file */
    const char **file;  /* as written */
    int shuffle;
    int64_t rows;       /* common row count (-1: no batched feed) */
    int64_t b;          /* batch size of the batched feeds */
    int static_set;     /* whole-file feeds currently fed */
} feedset;

static void feedset_free(feedset *f)
{
    for (int i = 0; i < f->n; i++)
        dg_tensor_free(f->data ? f->data[i] : NULL);
    dg_free(f->node);
    dg_free(f->data);
    dg_free(f->batch);
    dg_free(f->file);
    memset(f, 0, sizeof *f);
}

/* path relative to the graph file's directory (unless absolute). */
static char *resolve(const char *graph_path, const char *file)
{
    if (file[0] == '/' || !graph_path)
        return dg_strdup(file);
    const char *slash = strrchr(graph_path, '/');
    if (!slash || strcmp(graph_path, "-") == 0)
        return dg_strdup(file);
    size_t dl = (size_t)(slash - graph_path) + 1, fl = strlen(file);
    char *p = dg_malloc(dl + fl + 1);
    if (!p)
        return NULL;
    memcpy(p, graph_path, dl);
    memcpy(p + dl, file, fl + 1);
    return p;
}

static dg_status feedset_load(dgr_session *s, const dgc_graph *g,
                              const dgc_feed *feeds, int n, int use_batch,
                              feedset *f, dg_error *err)
{
    memset(f, 0, sizeof *f);
    f->rows = -1;
    if (n == 0)
        return DG_OK;
    f->node = dg_calloc((size_t)n, sizeof *f->node);
    f->data = dg_calloc((size_t)n, sizeof *f->data);
    f->batch = dg_calloc((size_t)n, sizeof *f->batch);
    f->file = dg_calloc((size_t)n, sizeof *f->file);
    if (!f->node || !f->data || !f->batch || !f->file)
        return dg_err_nomem(err, "feeds");
    f->n = n;
    const char *first_file = NULL;
    for (int i = 0; i < n; i++) {
        const dgc_feed *fd = &feeds[i];
        int32_t id = dgc_graph_find(g, fd->placeholder);
        if (id < 0 || !dgc_op_has(g->nodes[id].op, DGC_OP_FEED))
            return dg_err(err, DG_E_GRAPH, "node '%s': a feed must name a "
                          "Placeholder", fd->placeholder);
        f->node[i] = id;
        f->file[i] = fd->file;
        if (!dgr_session_is_local(s, id))
            continue; /* the task that runs it reads it (SPEC 8.3) */
        f->batch[i] = use_batch ? fd->batch : 0;
        f->shuffle |= use_batch && fd->shuffle;
        dg_shape want = g->nodes[id].outputs[0].shape;
        if (f->batch[i] > 0 && want.rank > 0)
            want.dims[0] = -1;
        char *path = resolve(g->path, fd->file);
        if (!path)
            return dg_err_nomem(err, "feeds");
        dg_status st = dgr_tensor_load_file(path, g->nodes[id].outputs[0].dtype,
                                            &want, &f->data[i], err);
        dg_free(path);
        if (st != DG_OK) { /* name the Placeholder, not only the file */
            if (err) {
                char why[sizeof err->msg];
                memcpy(why, err->msg, sizeof why);
                dg_err(err, st, "node '%s': %s", g->nodes[id].name, why);
            }
            return st;
        }
        if (f->batch[i] <= 0)
            continue;
        const dg_tensor *t = f->data[i];
        if (t->shape.rank < 1)
            return dg_err(err, DG_E_GRAPH, "%s: a batched feed needs at least "
                          "one dimension", fd->file);
        if (f->rows < 0) {
            f->rows = t->shape.dims[0];
            f->b = f->batch[i];
            first_file = fd->file;
        } else if (t->shape.dims[0] != f->rows) {
            return dg_err(err, DG_E_GRAPH, "%s: has %lld rows but %s has %lld; "
                          "the feeds of a section must have the same number "
                          "of rows", fd->file, (long long)t->shape.dims[0],
                          first_file, (long long)f->rows);
        } else if (f->batch[i] != f->b) {
            return dg_err(err, DG_E_GRAPH, "%s: batch %lld differs from %s's "
                          "batch %lld", fd->file, (long long)f->batch[i],
                          first_file, (long long)f->b);
        }
        if (f->rows == 0)
            return dg_err(err, DG_E_GRAPH, "%s: has no rows", fd->file);
    }
    /* whole-file feeds advance with the others: same row count required
     * (with no batched feed, the first whole-file feed with rows sets it) */
    int64_t rows = f->rows;
    for (int i = 0; i < n; i++) {
        if (!f->data[i] || f->batch[i] > 0 || f->data[i]->shape.rank < 1)
            continue;
        if (rows < 0) {
            rows = f->data[i]->shape.dims[0];
            first_file = f->file[i];
        } else if (f->data[i]->shape.dims[0] != rows) {
            return dg_err(err, DG_E_GRAPH, "%s: has %lld rows but %s has %lld; "
                          "the feeds of a section must have the same number "
                          "of rows", f->file[i],
                          (long long)f->data[i]->shape.dims[0], first_file,
                          (long long)rows);
        }
    }
    if (f->b > f->rows)
        f->b = f->rows;
    return DG_OK;
}

/* 1 if --feed names Placeholder `ph` (as "ph" or TF's "ph:0"). */
static int fed_by_option(const dg_options *o, const char *ph)
{
    size_t pl = strlen(ph);
    for (int i = 0; i < o->n_feeds; i++) {
        const char *nm = o->feeds[i].name;
        if (strcmp(nm, ph) == 0 ||
            (strncmp(nm, ph, pl) == 0 && strcmp(nm + pl, ":0") == 0))
            return 1;
    }
    return 0;
}

/* Feed the whole-file feeds (once, until something else overwrites them). */
static dg_status feed_static(dgr_session *s, feedset *f, dg_error *err)
{
    if (f->static_set)
        return DG_OK;
    for (int i = 0; i < f->n; i++)
        if (f->batch[i] <= 0 && f->data[i]) {
            dg_status st = dgr_session_set_feed(s, f->node[i], f->data[i], err);
            if (st != DG_OK)
                return st;
        }
    f->static_set = 1;
    return DG_OK;
}

/* ---- the row stream (rowstream.h) ---------------------------------------- */

dg_status dgr_rowstream_init(dgr_rowstream *r, int64_t rows, int shuffle,
                             uint64_t seed, dg_error *err)
{
    memset(r, 0, sizeof *r);
    r->rows = rows;
    r->cursor = rows; /* the first row starts epoch 0 */
    r->shuffle = shuffle;
    r->seed = seed;
    r->perm = dg_malloc(sizeof *r->perm * (size_t)(rows > 0 ? rows : 1));
    return r->perm ? DG_OK : dg_err_nomem(err, "batches");
}

void dgr_rowstream_free(dgr_rowstream *r)
{
    dg_free(r->perm);
    r->perm = NULL;
}

static void new_epoch(dgr_rowstream *r)
{
    for (int64_t i = 0; i < r->rows; i++)
        r->perm[i] = i;
    if (r->shuffle) {
        dgr_rng rng;
        dgr_rng_seed(&rng, r->seed * 0x9E3779B97F4A7C15ull +
                               (uint64_t)r->epoch * 0xD1B54A32D192ED03ull + 1);
        for (int64_t i = r->rows - 1; i > 0; i--) {
            int64_t j = (int64_t)(dgr_rng_next(&rng) % (uint64_t)(i + 1));
            int64_t t = r->perm[i];
            r->perm[i] = r->perm[j];
            r->perm[j] = t;
        }
    }
    r->cursor = 0;
    r->epoch++;
}

int64_t dgr_rowstream_next(dgr_rowstream *r)
{
    if (r->cursor >= r->rows)
        new_epoch(r);
    return r->perm[r->cursor++];
}

void dgr_rowstream_skip(dgr_rowstream *r, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        (void)dgr_rowstream_next(r);
}

void dgr_rowstream_shard(dgr_rowstream *r, int replica, int replicas,
                         int64_t b, int64_t *idx)
{
    dgr_rowstream_skip(r, (int64_t)replica * b);
    for (int64_t i = 0; i < b; i++)
        idx[i] = dgr_rowstream_next(r);
    dgr_rowstream_skip(r, (int64_t)(replicas - replica - 1) * b);
}

/* Gather rows idx[0..b) of every batched feed and feed them. */
static dg_status feed_batch(dgr_session *s, feedset *f, const int64_t *idx,
                            int64_t b, dg_error *err)
{
    for (int i = 0; i < f->n; i++) {
        if (f->batch[i] <= 0 || !f->data[i])
            continue;
        const dg_tensor *src = f->data[i];
        dg_shape sh = src->shape;
        int64_t numel = dg_shape_numel(&sh);
        size_t row = (size_t)(numel / sh.dims[0]) * dg_dtype_size(src->dtype);
        sh.dims[0] = b;
        dg_tensor *t = dg_tensor_new(src->dtype, &sh);
        if (!t)
            return dg_err_nomem(err, "batch");
        for (int64_t k = 0; k < b; k++)
            memcpy((char *)t->data + (size_t)k * row,
                   (const char *)src->data + (size_t)idx[k] * row, row);
        dg_status st = dgr_session_set_feed(s, f->node[i], t, err);
        dg_tensor_free(t);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}

/* A training step's feeds: the whole-file ones, then this replica's shard
 * of the batch (SPEC 8.4; replica 0 of 1 without replication). */
typedef struct step_feeds {
    dgr_session *s;
    feedset *tf;
    dgr_rowstream *rs;
    int64_t *idx;
    int replica, replicas;
} step_feeds;

static dg_status feed_step(void *user, int64_t step, dg_error *err)
{
    step_feeds *f = user;
    (void)step;
    dg_status st = feed_static(f->s, f->tf, err);
    if (st == DG_OK && f->tf->rows > 0) {
        dgr_rowstream_shard(f->rs, f->replica < 0 ? 0 : f->replica,
                            f->replicas, f->tf->b, f->idx);
        st = feed_batch(f->s, f->tf, f->idx, f->tf->b, err);
    }
    return st;
}

static double scalar_value(const dg_tensor *t)
{
    if (!t || dg_shape_numel(&t->shape) < 1)
        return 0.0;
    switch (t->dtype) {
    case DG_F32: return *(const float *)t->data;
    case DG_F64: return *(const double *)t->data;
    case DG_I32: return *(const int32_t *)t->data;
    case DG_I64: return (double)*(const int64_t *)t->data;
    default: return *(const uint8_t *)t->data;
    }
}

/* Free n results whose names and values this file allocated. */
static void free_results(dg_fetch_result *r, int n)
{
    for (int i = 0; r && i < n; i++) {
        dg_free((char *)r[i].name);
        dg_tensor_free(r[i].value);
    }
    dg_free(r);
}

/* Run the eval section: its own feeds and runner. */
static dg_status run_eval(dgr_session *s, const dgc_graph *g, feedset *ef,
                          feedset *tf, int64_t step, dg_train_result *out,
                          dg_error *err)
{
    const dgc_train *t = &g->train;
    int n = t->n_eval_fetch;
    dgc_ref *refs = dg_calloc((size_t)n + 1, sizeof *refs);
    dg_tensor **vals = dg_calloc((size_t)n + 1, sizeof *vals);
    dg_status st = DG_OK;
    dgr_runner *r = NULL;
    if (!refs || !vals) {
        st = dg_err_nomem(err, "eval");
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (dgr_replica_parse_ref(g, t->eval_fetch[i], 0, &refs[i]) != 0) {
            st = dg_err(err, DG_E_GRAPH, "node '%s': eval fetch names a node "
                        "that does not exist", t->eval_fetch[i]);
            goto done;
        }
    /* eval feeds: the whole files */
    for (int i = 0; i < ef->n; i++)
        if (ef->data[i] && (st = dgr_session_set_feed(s, ef->node[i], ef->data[i], err)) != DG_OK)
            goto done;
    tf->static_set = 0; /* train's whole-file feeds may have been replaced */
    /* every replica evaluates (as `run` runs every replica: collectives
     * in the eval path need them all); replica 0's values are reported */
    int w = dgr_replica_count(g), nt = 0;
    int32_t *tg = dg_calloc((size_t)n * (size_t)w + 1, sizeof *tg);
    if (!tg) {
        st = dg_err_nomem(err, "eval");
        goto done;
    }
    for (int i = 0; i < n; i++)
        for (int k = 1; k < w; k++)
            if (dgr_replica_node(g, refs[i].node, k) != refs[i].node)
                tg[nt++] = dgr_replica_node(g, refs[i].node, k);
    r = dgr_session_runner(s, refs, n, tg, nt, err);
    dg_free(tg);
    if (!r) {
        st = err->code != DG_OK ? err->code : DG_E_RUNTIME;
        goto done;
    }
    if ((st = dgr_runner_run(r, step, vals, err)) != DG_OK)
        goto done;
    free_results(out->eval, out->n_eval);
    out->n_eval = 0;
    out->eval = dg_calloc((size_t)n + 1, sizeof *out->eval);
    if (!out->eval) {
        st = dg_err_nomem(err, "eval");
        goto done;
    }
    out->n_eval = n;
    for (int i = 0; i < n; i++) {
        out->eval[i].name = dg_strdup(t->eval_fetch[i]);
        out->eval[i].value = vals[i];
        vals[i] = NULL;
        if (!out->eval[i].name) {
            st = dg_err_nomem(err, "eval");
            goto done;
        }
    }
done:
    for (int i = 0; vals && i < n; i++)
        dg_tensor_free(vals[i]);
    dg_free(vals);
    dg_free(refs);
    if (r)
        dgr_runner_free(r);
    return st;
}

/* After k steps of a training that ends at `end`: the eval of every
 * eval_every steps (not at the end: the final eval follows) and the
 * checkpoint of every checkpoint_every steps. */
static dg_status periodic(dgr_session *s, const dgc_graph *g, feedset *ef,
                          feedset *tf, const char *ckpt, int64_t k,
                          int64_t end, dg_train_result *out, dg_error *err)
{
    const dgc_train *t = &g->train;
    dg_status st = DG_OK;
    if (t->n_eval_fetch > 0 && t->eval_every > 0 && k % t->eval_every == 0 &&
        k < end)
        st = run_eval(s, g, ef, tf, k, out, err);
    if (st == DG_OK && ckpt && t->checkpoint_every > 0 &&
        k % t->checkpoint_every == 0)
        st = dgr_checkpoint_save(s, ckpt, k, NULL, err);
    return st;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static dg_status read_variables(dgr_session *s, const dgc_graph *g,
                                dg_train_result *out, dg_error *err)
{
    int vop = DGC_OPID_Variable, n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        n += g->nodes[i].op == vop;
    out->variables = dg_calloc((size_t)n + 1, sizeof *out->variables);
    if (!out->variables)
        return dg_err_nomem(err, "variables");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int copy = 0; /* replicas 1..: replica 0 speaks for them (SPEC 8.4) */
        const char *name = dgr_replica_orig_name(g, i, &copy);
        if (g->nodes[i].op != vop || copy)
            continue;
        dg_fetch_result *r = &out->variables[out->n_variables];
        dg_status st = dgr_session_gather_variable(s, i, &r->value, err);
        if (st != DG_OK)
            return st;
        out->n_variables++;
        if (!(r->name = dg_strdup(name)))
            return dg_err_nomem(err, "variables");
    }
    if (dgr_replica_count(g) > 1) {
        out->replicas = dgr_replica_count(g);
        return dgr_session_replica_diff(s, &out->replica_diff, err);
    }
    return DG_OK;
}

dg_status dg_session_train(dg_session *sess, dg_progress_fn progress,
                           void *user, dg_train_result *out, dg_error *err)
{
    dgr_session *s = (dgr_session *)sess;
    const dg_program *p = dgr_session_program(s);
    const dg_options *o = dgr_session_options(s);
    const dgc_graph *g = p->g;
    const dgc_train *t = &g->train;
    memset(out, 0, sizeof *out);
    if (!t->present || t->train_op < 0)
        return dg_err(err, DG_E_USAGE, "the graph has no \"train\" section");
    int64_t steps = o->steps > 0 ? o->steps : (t->steps > 0 ? t->steps : 1);

    feedset tf, ef;
    dgr_rowstream rs;
    memset(&rs, 0, sizeof rs);
    /* this process's replica and the replica count: one process is replica
     * 0 of 1; under MPI each rank runs replica k of W (SPEC 8.4 sharded
     * feeds; a rank without a replica feeds nothing) */
    const int replicas = dgr_replica_count(g);
    const int replica = dgr_session_replica(s) > 0 ? dgr_session_replica(s) : 0;
    int64_t *idx = NULL;
    dgr_runner *runner = NULL;
    dg_tensor *loss[DGR_MAX_LOSSES];
    memset(loss, 0, sizeof loss);
    /* --feed overrides the train section's feed of the same Placeholder (as
     * a feed_dict entry overrides any tensor in TF); eval keeps its own. */
    dgc_feed *own = dg_calloc((size_t)t->n_feeds + 1, sizeof *own);
    int n_own = 0;
    for (int i = 0; own && i < t->n_feeds; i++)
        if (!fed_by_option(o, t->feeds[i].placeholder))
            own[n_own++] = t->feeds[i];
    /* replicated: each replica's copy of a Placeholder takes its feed
     * (the rank of that replica reads the file); every replica evaluates
     * on the whole eval files, replica 0's results are reported */
    int n_tfd = 0, n_efd = 0;
    dgc_feed *tfd = own ? dgr_replica_feeds(g, own, n_own, 1, &n_tfd) : NULL;
    dgc_feed *efd = dgr_replica_feeds(g, t->eval_feeds, t->n_eval_feeds, 1,
                                      &n_efd);
    dg_status st = tfd && efd ? feedset_load(s, g, tfd, n_tfd, 1, &tf, err)
                       : (memset(&tf, 0, sizeof tf), dg_err_nomem(err, "feeds"));
    dg_free(own);
    dg_free(tfd);
    memset(&ef, 0, sizeof ef);
    if (st == DG_OK)
        st = feedset_load(s, g, efd, n_efd, 0, &ef, err);
    dg_free(efd);
    if (st != DG_OK)
        goto done;
    if (tf.rows > 0) {
        idx = dg_malloc(sizeof *idx * (size_t)(tf.b + 1));
        if ((st = dgr_rowstream_init(&rs, tf.rows, tf.shuffle, o->seed,
                                     err)) != DG_OK)
            goto done;
        if (!idx) {
            st = dg_err_nomem(err, "batches");
            goto done;
        }
    }

    /* checkpoint: where, how often, and restore */
    char *ckpt = NULL;
    const char *ck_src = o->checkpoint_dir ? o->checkpoint_dir : t->checkpoint_path;
    if (ck_src) {
        ckpt = o->checkpoint_dir ? dgr_checkpoint_file(NULL, ck_src)
                                 : dgr_checkpoint_file(g->path, ck_src);
        if (!ckpt) {
            st = dg_err_nomem(err, "checkpoint path");
            goto done;
        }
    }
    int64_t first = 0;
    if (o->restore) {
        if (!ckpt) {
            st = dg_err(err, DG_E_USAGE, "--restore needs a checkpoint "
                        "(--checkpoint or train.checkpoint.path)");
            goto ckdone;
        }
        /* No checkpoint yet (a first run, or one killed before its first
         * save): start fresh, like TF's MonitoredTrainingSession. */
        /* in a cluster rank 0 decides and reads (SPEC 8.3) */
        int64_t absent = dgr_session_rank(s) == 0 && !dgr_checkpoint_exists(ckpt);
        if ((st = dgr_session_bcast(s, &absent, 1, err)) != DG_OK)
            goto ckdone;
        if (!absent &&
            (st = dgr_checkpoint_restore(s, ckpt, &first, err)) != DG_OK)
            goto ckdone;
        /* continue the shuffled stream where it stopped */
        if (tf.rows > 0)
            dgr_rowstream_skip(&rs, first * (int64_t)replicas * tf.b);
    }

    /* the loss of every replica (their mean is the loss of the W*b batch
     * when the loss is a mean over rows) */
    dgc_ref lref[DGR_MAX_LOSSES];
    int n_loss = replicas < DGR_MAX_LOSSES ? replicas : DGR_MAX_LOSSES;
    if (t->loss_node < 0) /* a given train op without a loss (issue 24) */
        n_loss = 0;
    for (int k = 0; k < n_loss; k++)
        lref[k] = (dgc_ref){dgr_replica_node(g, t->loss_node, k), 0};
    int async = dgr_session_ps_async(s); /* SPEC 8.4: session_ps.c */
    runner = async ? NULL
                   : dgr_session_runner(s, lref, n_loss, &t->train_op, 1,
                                        err);
    if (!runner && !async) {
        st = err->code != DG_OK ? err->code : DG_E_RUNTIME;
        goto ckdone;
    }
    uint64_t t0 = dg_now_ns();
    int64_t end = first + steps; /* global step reached */
    out->total = first + steps;
    out->last_step = first;
    dgr_session_set_stopped(s, -1);
    step_feeds sf = {s, &tf, &rs, idx, replica, replicas};
    /* async ps: the replicas run at their own pace between the periodic
     * evals and checkpoints, which every rank takes together */
    for (int64_t k = first; async && k < first + steps;) {
        int64_t e = first + steps;
        if (t->n_eval_fetch > 0 && t->eval_every > 0)
            e = min64(e, (k / t->eval_every + 1) * t->eval_every);
        if (ckpt && t->checkpoint_every > 0)
            e = min64(e, (k / t->checkpoint_every + 1) * t->checkpoint_every);
        dgr_async_args aa = {k, e - k, first + steps, t0, feed_step, &sf,
                             progress, user};
        if ((st = dgr_session_train_async(s, &aa, &out->loss, err)) != DG_OK)
            goto ckdone;
        k = e;
        out->steps = k - first;
        out->last_step = k;
        if ((st = periodic(s, g, &ef, &tf, ckpt, k, first + steps, out,
                           err)) != DG_OK)
            goto ckdone;
    }
    for (int64_t k = first; !async && k < first + steps; k++) {
        if (dgr_session_stop_requested(s)) { /* between steps only */
            end = k;
            out->stopped = 1;
            dgr_session_set_stopped(s, k - first);
            break;
        }
        if ((st = feed_step(&sf, k, err)) != DG_OK ||
            (st = dgr_runner_run(runner, k, loss, err)) != DG_OK)
            goto ckdone;
        out->loss = 0;
        int f32 = 1;
        for (int j = 0; j < n_loss; j++) {
            out->loss += scalar_value(loss[j]) / n_loss;
            f32 = f32 && loss[j] && loss[j]->dtype == DG_F32;
            dg_tensor_free(loss[j]);
            loss[j] = NULL;
        }
        if (f32) /* the replicas' mean in the loss's own precision */
            out->loss = (double)(float)out->loss;
        if (n_loss == 0)
            out->loss = NAN;
        out->steps = k + 1 - first;
        out->last_step = k + 1;
        if (progress) {
            dg_train_progress pr = {k + 1, first + steps, out->loss,
                                    (double)(dg_now_ns() - t0) * 1e-9,
                                    replicas > 1 ? replicas * tf.b : 0,
                                    replicas > 1 ? replicas : 0};
            progress(&pr, user);
        }
        if ((st = periodic(s, g, &ef, &tf, ckpt, k + 1, first + steps, out,
                           err)) != DG_OK)
            goto ckdone;
    }
    /* an early stop saves what this process trained (nothing if it ran no
     * step: the checkpoint, if any, already holds that state) */
    if (ckpt && end > first) {
        if ((st = dgr_checkpoint_save(s, ckpt, end, &out->checkpoint,
                                      err)) != DG_OK)
            goto ckdone;
        if (!out->checkpoint) { /* not rank 0: where rank 0 saved */
            out->checkpoint = ckpt;
            ckpt = NULL;
        }
    }
    if (!out->stopped && t->n_eval_fetch > 0 &&
        (st = run_eval(s, g, &ef, &tf, end, out, err)) != DG_OK)
        goto ckdone;
    st = read_variables(s, g, out, err);
ckdone:
    dg_free(ckpt);
done:
    if (runner)
        dgr_runner_free(runner);
    for (int j = 0; j < DGR_MAX_LOSSES; j++)
        dg_tensor_free(loss[j]);
    dgr_rowstream_free(&rs);
    dg_free(idx);
    feedset_free(&tf);
    feedset_free(&ef);
    if (st != DG_OK)
        dg_train_result_free(out);
    return st;
}

void dg_train_result_free(dg_train_result *r)
{
    if (!r)
        return;
    free_results(r->variables, r->n_variables);
    free_results(r->eval, r->n_eval);
    dg_free(r->checkpoint);
    memset(r, 0, sizeof *r);
}
