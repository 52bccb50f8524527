/*
 * checkpoint.c -- training checkpoints (see checkpoint.h and
 * docs/checkpoints.md).  Saves write TensorFlow's V2 checkpoint (a tensor
 * bundle, tf_bundle.h: PREFIX.index + PREFIX.data-00000-of-00001) under
 * TF's variable names, and TF's `checkpoint` state file beside it
 * (ckpt_state.h); a directory works as MonitoredTrainingSession's
 * checkpoint_dir (DIR/model.ckpt-STEP, the newest 5 kept).  Restores read
 * TF's checkpoints and dgrun's earlier single-file format (magic
 * "DGCKPT1\n", FNV-1a 64 checksum), told apart by their content.
 * Every file is written to "<file>.tmp.<pid>" in the same directory,
 * fsync'd and renamed into place, and the directory fsync'd: a crash
 * leaves the previous checkpoint or the new one (tf_bundle.h's recovery
 * completes a bundle whose two renames were cut apart).
 */
#include "checkpoint.h"
#include "ckpt_state.h"
#include "tf_bundle.h"
#include "ckpt_slices.h"
#include "dg_alloc.h"
#include "dg_io.h"
#include "dg_util.h"
#include "dg_error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAGIC "DGCKPT1\n"
#define MAX_TO_KEEP 5 /* tf.compat.v1.train.Saver's default */

char *dgr_checkpoint_file(const char *graph_path, const char *spec)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    if (graph_path && spec[0] != '/' && strcmp(graph_path, "-") != 0) {
        const char *slash = strrchr(graph_path, '/');
        if (slash)
            dg_sbuf_addn(&b, graph_path, (size_t)(slash - graph_path) + 1);
    }
    dg_sbuf_add(&b, spec);
    struct stat st;
    size_t sl = strlen(spec);
    /* "ck/" (made on save) or an existing directory: a checkpoint_dir,
     * marked by the trailing slash */
    if (sl && spec[sl - 1] != '/' && b.s && stat(b.s, &st) == 0 &&
        S_ISDIR(st.st_mode))
        dg_sbuf_add(&b, "/");
    return dg_sbuf_take(&b); /* allocated through dg_alloc */
}

static int is_dir_spec(const char *loc)
{
    size_t n = strlen(loc);
    return n && loc[n - 1] == '/';
}

/* The directory part of path ("." when there is none), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return dg_strdup(".");
    if (slash == path)
        return dg_strdup("/");
    return dg_strndup(path, (size_t)(slash - path));
}

/* Create the directories leading to path ("mkdir -p" of its directory
 * part), as TF's MonitoredTrainingSession creates its checkpoint_dir.
 * Best effort: a failure shows when the file itself cannot be opened. */
static void make_parents(const char *path)
{
    char *dir = dir_of(path);
    if (!dir)
        return;
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            (void)mkdir(dir, 0777);
            *p = c;
            if (!c)
                break;
        }
    }
    dg_free(dir);
}

/* The name Variable i is saved under: its own, or for a replicated graph
 * replica 0's original name; NULL for the other replicas' copies (SPEC
 * 8.4: a checkpoint holds replica 0's values). */
static const char *saved_name(const dgc_graph *g, int32_t i)
{
    int copy = 0;
    const char *n = dgr_replica_orig_name(g, i, &copy);
    return copy ? NULL : n;
}

static int file_exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static char *with_suffix(const char *a, const char *b)
{
    dg_sbuf s;
    dg_sbuf_init(&s);
    dg_sbuf_add(&s, a);
    dg_sbuf_add(&s, b);
    return dg_sbuf_take(&s);
}

/* The directory of a checkpoint_dir location ("ck/" -> "ck"). */
static char *dir_of_loc(const char *loc)
{
    size_t n = strlen(loc);
    while (n > 1 && loc[n - 1] == '/')
        n--;
    return dg_strndup(loc, n);
}

static int same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Update the state file beside prefix after a save: in a checkpoint_dir
 * (keep) the paths it listed stay, the newest MAX_TO_KEEP of them, and the
 * checkpoints that fall out are deleted (MonitoredTrainingSession's Saver,
 * which recovers its list from the state file); for a plain prefix the
 * file names that one checkpoint (a fresh Saver's save). */
static dg_status update_state(const char *prefix, int keep, dg_error *err)
{
    char *dir = dir_of(prefix);
    if (!dir)
        return dg_err_nomem(err, "checkpoint state");
    const char *slash = strrchr(prefix, '/');
    const char *base = slash ? slash + 1 : prefix;
    dgr_ckpt_state old = {0}, st = {0};
    int found = 0;
    dg_error ignored = {0};
    /* an unreadable or damaged state file is replaced, as TF does */
    if (keep && dgr_ckpt_state_read(dir, &old, &found, &ignored) != DG_OK)
        found = 0;
    dg_status rc = DG_OK;
    if (!(st.model = dg_strdup(base)))
        rc = dg_err_nomem(err, "checkpoint state");
    for (int32_t i = 0; found && rc == DG_OK && i < old.n_all; i++) {
        char *p = dgr_ckpt_state_join(dir, old.all[i]);
        char *idx = p ? with_suffix(p, ".index") : NULL;
        /* the same checkpoint again, or one that is gone: not kept */
        int keep_it = idx && strcmp(old.all[i], base) != 0 &&
                      strcmp(p, prefix) != 0 && file_exists(idx);
        if (!p || !idx)
            rc = dg_err_nomem(err, "checkpoint state");
        else if (keep_it && dgr_ckpt_state_push(&st, old.all[i]))
            rc = dg_err_nomem(err, "checkpoint state");
        dg_free(p);
        dg_free(idx);
    }
    if (rc == DG_OK && dgr_ckpt_state_push(&st, base))
        rc = dg_err_nomem(err, "checkpoint state");
    int32_t drop = st.n_all > MAX_TO_KEEP ? st.n_all - MAX_TO_KEEP : 0;
    if (rc == DG_OK) {
        /* the state file first: it never names a deleted checkpoint */
        dgr_ckpt_state tmp = st;
        tmp.all += drop;
        tmp.n_all -= drop;
        rc = dgr_ckpt_state_write(dir, &tmp, err);
    }
    for (int32_t i = 0; rc == DG_OK && i < drop; i++) {
        /* only checkpoints in this directory are deleted (a state file
         * may name others by absolute paths) */
        char *p = dgr_ckpt_state_join(dir, st.all[i]);
        char *pd = p ? dir_of(p) : NULL;
        if (pd && same_dir(pd, dir))
            dgr_bundle_remove(p);
        dg_free(pd);
        dg_free(p);
    }
    dgr_ckpt_state_free(&old);
    dgr_ckpt_state_free(&st);
    dg_free(dir);
    return rc;
}

dg_status dgr_checkpoint_save(dgr_session *s, const char *loc, int64_t step,
                              char **saved, dg_error *err)
{
    if (saved)
        *saved = NULL;
    const dgc_graph *g = dgr_session_program(s)->g;
    int vop = DGC_OPID_Variable;
    if (dgr_session_rank(s) != 0) {
        /* a cluster: rank 0 writes every task's Variables (SPEC 8.3) */
        for (int32_t i = 0; i < g->n_nodes; i++) {
            if (g->nodes[i].op != vop || saved_name(g, i) == NULL)
                continue;
            dg_tensor *t = NULL;
            dg_status st = dgr_session_gather_variable(s, i, &t, err);
            dg_tensor_free(t);
            if (st != DG_OK)
                return st;
        }
        return DG_OK;
    }
    int keep = is_dir_spec(loc);
    dg_sbuf pb;
    dg_sbuf_init(&pb);
    dg_sbuf_add(&pb, loc);
    if (keep)
        dg_sbuf_addf(&pb, "model.ckpt-%lld", (long long)step);
    char *prefix = dg_sbuf_take(&pb);
    if (!prefix)
        return dg_err_nomem(err, "checkpoint");
    make_parents(prefix);
    dgr_bundle_recover(prefix); /* a save of this prefix that crashed */
    dgr_bundle_writer w;
    dgr_ckpt_parts parts;
    dg_status st = dgr_ckpt_parts_find(g, &parts, err);
    if (st != DG_OK) {
        dg_free(prefix);
        return st;
    }
    st = dgr_bundle_writer_open(&w, prefix, step, err);
    for (int32_t i = 0; i < g->n_nodes && st == DG_OK; i++) {
        const char *name = saved_name(g, i);
        if (g->nodes[i].op != vop || !name)
            continue;
        dg_tensor *t = NULL;
        if ((st = dgr_session_gather_variable(s, i, &t, err)) != DG_OK)
            break;
        /* a part of a partitioned variable: a slice of it, as TF saves */
        const dgr_ckpt_part *pt = dgr_ckpt_part_of(&parts, name);
        if (pt && pt->rank == t->shape.rank) {
            dg_shape full = {pt->rank, {0}};
            dgr_bundle_slice sl;
            memcpy(full.dims, pt->full_dims, sizeof full.dims);
            memcpy(sl.start, pt->start, sizeof sl.start);
            memcpy(sl.len, t->shape.dims, sizeof sl.len);
            st = dgr_bundle_writer_add_slice(&w, pt->full, &full, &sl,
                                             t->dtype, t->data, err);
        } else {
            st = dgr_bundle_writer_add(&w, name, t->dtype, &t->shape, t->data,
                                       err);
        }
        dg_tensor_free(t);
    }
    if (st == DG_OK)
        st = dgr_bundle_writer_finish(&w, err);
    dgr_bundle_writer_free(&w);
    dgr_ckpt_parts_free(&parts);
    if (st == DG_OK)
        st = update_state(prefix, keep, err);
    if (st == DG_OK && saved)
        *saved = prefix;
    else
        dg_free(prefix);
    return st;
}

/* ---- restoring TF's checkpoints ----------------------------------------- */

/* TF's rendering of a shape in Assign's message: "[2,3]". */
static void shape_text(char *buf, size_t n, int rank, const int64_t *dims)
{
    size_t at = 0;
    at += (size_t)snprintf(buf + at, n - at, "[");
    for (int d = 0; d < rank && at < n; d++)
        at += (size_t)snprintf(buf + at, n - at, "%s%lld", d ? "," : "",
                               (long long)dims[d]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}

/* The step a TF checkpoint was saved at: dgrun's header field, else the
 * global_step it holds, else the "-N" of its prefix (Saver's naming),
 * else 0.  Values outside [0, 2^53] (a damaged or hostile file) are
 * passed over, so the training loop's step arithmetic cannot overflow. */
#define MAX_STEP ((int64_t)1 << 53)
static int64_t bundle_step(dgr_bundle *b)
{
    if (b->has_step && b->step >= 0 && b->step <= MAX_STEP)
        return b->step;
    const dgr_bundle_entry *e = dgr_bundle_find(b, "global_step");
    if (e && e->rank == 0 && !e->sliced &&
        (e->tf_dtype == DGR_TF_INT64 || e->tf_dtype == DGR_TF_INT32)) {
        int64_t v64 = -1;
        int32_t v32 = -1;
        dg_error ignored = {0};
        if (e->tf_dtype == DGR_TF_INT64 &&
            dgr_bundle_read(b, e, &v64, &ignored) == DG_OK &&
            v64 >= 0 && v64 <= MAX_STEP)
            return v64;
        if (e->tf_dtype == DGR_TF_INT32 &&
            dgr_bundle_read(b, e, &v32, &ignored) == DG_OK && v32 >= 0)
            return v32;
    }
    const char *dash = strrchr(b->prefix, '-');
    if (dash && dash[1] >= '0' && dash[1] <= '9') {
        char *end;
        errno = 0;
        long long v = strtoll(dash + 1, &end, 10);
        if (!*end && errno == 0 && v >= 0 && v <= MAX_STEP)
            return v;
    }
    return 0;
}

/* What Variable i is restored from: entry e, whole (read as it is), or
 * the box [start, start + len) of it (a part of a partitioned variable,
 * or a whole Variable from a sliced entry) assembled from e's slices. */
typedef struct target {
    const dgr_bundle_entry *e;
    int whole;
    int rank;
    int64_t start[DG_MAX_RANK], len[DG_MAX_RANK];
} target;

/* Slice k of entry e with every extent explicit. */
static void slice_box(const dgr_bundle_entry *e, int32_t k, int64_t *start,
                      int64_t *len)
{
    for (int d = 0; d < e->rank; d++) {
        int full = e->slices[k].len[d] < 0;
        start[d] = full ? 0 : e->slices[k].start[d];
        len[d] = full ? e->dims[d] : e->slices[k].len[d];
    }
}

/* The elements boxes a and b share. */
static int64_t box_meet(int rank, const int64_t *as, const int64_t *al,
                        const int64_t *bs, const int64_t *bl)
{
    int64_t v = 1;
    for (int d = 0; d < rank; d++) {
        int64_t lo = as[d] > bs[d] ? as[d] : bs[d];
        int64_t ae = as[d] + al[d], be = bs[d] + bl[d];
        int64_t hi = ae < be ? ae : be;
        v *= hi > lo ? hi - lo : 0;
    }
    return v;
}

/* The entry slice k of e is stored under (label_slices made sure it is). */
static const dgr_bundle_entry *slice_entry(const dgr_bundle *b,
                                           const dgr_bundle_entry *e,
                                           int32_t k)
{
    size_t kl = 0;
    char *key = dgr_bundle_slice_key(e->key, e->rank, &e->slices[k], &kl);
    const dgr_bundle_entry *x = key ? dgr_bundle_find_n(b, key, kl) : NULL;
    dg_free(key);
    return x;
}

/* Pass 0 of a restore for Variable i (original name `name`, type ty):
 * which entry and which box, checked against the graph in TF's words. */
static dg_status find_target(const dgr_bundle *b, const dgc_graph *g,
                             const char *name, const dgc_ttype *ty,
                             const dgr_ckpt_parts *parts, target *tg,
                             dg_error *err)
{
    const dgr_ckpt_part *pt = dgr_ckpt_part_of(parts, name);
    const char *key = pt ? pt->full : dgc_graph_ckpt_key(g, name);
    const dgr_bundle_entry *e = dgr_bundle_find(b, key);
    if (pt && !e && pt->count > 1 && dgr_bundle_find(b, name)) {
        /* named like a part, saved as a Variable of its own */
        pt = NULL;
        e = dgr_bundle_find(b, key = name);
    }
    memset(tg, 0, sizeof *tg);
    tg->e = e;
    if (!e)
        return dg_err(err, DG_E_GRAPH, "%s: checkpoint does not match the "
                      "graph: Key %s not found in checkpoint", b->index_path,
                      key);
    if (e->tf_dtype != dgr_bundle_tf_dtype(ty->dtype))
        return dg_err(err, DG_E_GRAPH, "%s: checkpoint does not match the "
                      "graph: tensor_name = %s; expected dtype %s does not "
                      "equal original dtype %s", b->index_path, key,
                      dgr_bundle_dtype_name(dgr_bundle_tf_dtype(ty->dtype)),
                      dgr_bundle_dtype_name(e->tf_dtype));
    if (e->rank < 0)
        return dg_err(err, DG_E_GRAPH, "%s: %s: a variable of more than %d "
                      "dimensions (dgrun's tensors have at most %d)",
                      b->index_path, key, DG_MAX_RANK, DG_MAX_RANK);
    char lhs[200], rhs[200];
    if (!pt) {
        int same = e->rank == ty->shape.rank;
        for (int d = 0; same && d < ty->shape.rank; d++)
            same = ty->shape.dims[d] < 0 || ty->shape.dims[d] == e->dims[d];
        if (!same) {
            shape_text(lhs, sizeof lhs, ty->shape.rank, ty->shape.dims);
            shape_text(rhs, sizeof rhs, e->rank, e->dims);
            return dg_err(err, DG_E_GRAPH, "%s: checkpoint does not match "
                          "the graph: Variable '%s': Assign requires shapes "
                          "of both tensors to match. lhs shape= %s rhs "
                          "shape= %s", b->index_path, name, lhs, rhs);
        }
        tg->rank = e->rank;
        memcpy(tg->len, e->dims, sizeof tg->len);
    } else {
        tg->rank = pt->rank;
        memcpy(tg->start, pt->start, sizeof tg->start);
        memcpy(tg->len, pt->len, sizeof tg->len);
        int64_t full[DG_MAX_RANK];
        memcpy(full, pt->full_dims, sizeof full);
        if (pt->guessed && e->sliced && e->n_slices == pt->count &&
            e->rank == pt->rank) {
            /* equal parts: the axis is the checkpoint's */
            int64_t ss[DG_MAX_RANK], sl[DG_MAX_RANK];
            slice_box(e, pt->index, ss, sl);
            if (memcmp(sl, pt->len, sizeof(int64_t) * (size_t)e->rank) == 0) {
                memcpy(tg->start, ss, sizeof ss);
                memcpy(full, e->dims, sizeof full);
            }
        }
        int same = e->rank == pt->rank;
        for (int d = 0; same && d < e->rank; d++)
            same = e->dims[d] == full[d];
        if (!same) {
            shape_text(lhs, sizeof lhs, pt->rank, full);
            shape_text(rhs, sizeof rhs, e->rank, e->dims);
            return dg_err(err, DG_E_GRAPH, "%s: checkpoint does not match "
                          "the graph: Variable '%s' is a part of %s of shape "
                          "%s; the checkpoint's %s has shape %s",
                          b->index_path, name, key, lhs, key, rhs);
        }
        same = ty->shape.rank == pt->rank;
        for (int d = 0; same && d < pt->rank; d++)
            same = ty->shape.dims[d] == tg->len[d] && tg->len[d] >= 0 &&
                   tg->len[d] <= full[d] - tg->start[d];
        if (!same)
            return dg_err(err, DG_E_GRAPH, "%s: Variable '%s': its shape does "
                          "not fit its slice of %s", b->index_path, name, key);
    }
    tg->whole = !e->sliced;
    for (int d = 0; tg->whole && d < tg->rank; d++)
        tg->whole = tg->start[d] == 0 && tg->len[d] == e->dims[d];
    if (e->sliced) {
        int64_t want = 1, got = 0, ss[DG_MAX_RANK], sl[DG_MAX_RANK];
        for (int d = 0; d < tg->rank; d++)
            want *= tg->len[d];
        for (int32_t k = 0; k < e->n_slices; k++) {
            slice_box(e, k, ss, sl);
            got += box_meet(tg->rank, tg->start, tg->len, ss, sl);
        }
        if (got != want) {
            shape_text(lhs, sizeof lhs, tg->rank, tg->start);
            shape_text(rhs, sizeof rhs, tg->rank, tg->len);
            return dg_err(err, DG_E_GRAPH, "%s: checkpoint does not match "
                          "the graph: the slices of %s in the checkpoint do "
                          "not cover Variable '%s' (offset %s, shape %s)",
                          b->index_path, key, name, lhs, rhs);
        }
    }
    return DG_OK;
}

/* The sources of a box target: entry e itself (not sliced), or each of
 * its slices that meets the box; fn(source, its box) for each. */
typedef dg_status (*source_fn)(void *ctx, const dgr_bundle_entry *src,
                               const int64_t *start, const int64_t *len,
                               dg_error *err);

static dg_status each_source(const dgr_bundle *b, const target *tg,
                             source_fn fn, void *ctx, dg_error *err)
{
    const dgr_bundle_entry *e = tg->e;
    int64_t ss[DG_MAX_RANK] = {0}, sl[DG_MAX_RANK];
    if (!e->sliced)
        return fn(ctx, e, ss, e->dims, err);
    dg_status st = DG_OK;
    for (int32_t k = 0; k < e->n_slices && st == DG_OK; k++) {
        slice_box(e, k, ss, sl);
        if (box_meet(tg->rank, tg->start, tg->len, ss, sl) > 0)
            st = fn(ctx, slice_entry(b, e, k), ss, sl, err);
    }
    return st;
}

typedef struct src_ctx {
    dgr_bundle *b;
    char *checked;
    const target *tg;
    char *dst;
    size_t esz;
} src_ctx;

static dg_status check_source(void *vctx, const dgr_bundle_entry *src,
                              const int64_t *start, const int64_t *len,
                              dg_error *err)
{
    src_ctx *x = vctx;
    (void)start;
    (void)len;
    int32_t k = (int32_t)(src - x->b->ents);
    if (x->checked[k])
        return DG_OK;
    x->checked[k] = 1;
    return dgr_bundle_check(x->b, src, err);
}

static dg_status copy_source(void *vctx, const dgr_bundle_entry *src,
                             const int64_t *start, const int64_t *len,
                             dg_error *err)
{
    src_ctx *x = vctx;
    char *tmp = dg_malloc(src->size ? (size_t)src->size : 1);
    if (!tmp)
        return dg_err_nomem(err, "checkpoint");
    dg_status st = dgr_bundle_read_checked(x->b, src, tmp, err);
    if (st == DG_OK)
        dgr_copy_box(x->dst, x->tg->start, x->tg->len, tmp, start, len,
                     x->tg->rank, x->esz);
    dg_free(tmp);
    return st;
}

/* Pass 2 for a box target: assembled in its own buffer, then scattered. */
static dg_status restore_box(dgr_session *s, int32_t i, dgr_bundle *b,
                             const target *tg, dg_dtype dt, dg_error *err)
{
    int64_t n = 1;
    for (int d = 0; d < tg->rank; d++)
        n *= tg->len[d];
    size_t esz = dg_dtype_size(dt);
    src_ctx x = {b, NULL, tg, dg_malloc(n ? (size_t)n * esz : 1), esz};
    if (!x.dst)
        return dg_err_nomem(err, "checkpoint");
    dg_status st = each_source(b, tg, copy_source, &x, err);
    dg_tensor t = {dt, {tg->rank, {0}}, x.dst};
    memcpy(t.shape.dims, tg->len, sizeof t.shape.dims);
    if (st == DG_OK)
        st = dgr_session_scatter_variable(s, i, &t, err);
    dg_free(x.dst);
    return st;
}

static dg_status restore_tf(dgr_session *s, const char *prefix, int64_t *step,
                            dg_error *err)
{
    const dgc_graph *g = dgr_session_program(s)->g;
    dgr_bundle b;
    dgr_ckpt_parts parts;
    dg_status st = dgr_bundle_open(prefix, &b, err);
    if (st != DG_OK)
        return st;
    if ((st = dgr_ckpt_parts_find(g, &parts, err)) != DG_OK) {
        dgr_bundle_free(&b);
        return st;
    }
    /* pass 0: names, dtypes and shapes; pass 1: every needed entry's bytes
     * checked (size, CRC) before any Variable changes; pass 2: each read
     * again from the same open files (no second CRC) through one buffer
     * into its Variables, so memory holds at most the largest entry (a
     * part, or a Variable from slices: its box and one slice at a time).
     * Replicas' copies share an entry. */
    char *checked = dg_calloc((size_t)b.n + 1, 1);
    void *buf = NULL;
    int64_t most = 0;
    if (!checked) {
        dgr_ckpt_parts_free(&parts);
        dgr_bundle_free(&b);
        return dg_err_nomem(err, "checkpoint");
    }
    int vop = DGC_OPID_Variable;
    for (int pass = 0; pass < 3 && st == DG_OK; pass++)
        for (int32_t i = 0; i < g->n_nodes && st == DG_OK; i++) {
            const dgc_node *nd = &g->nodes[i];
            if (nd->op != vop)
                continue;
            /* every replica's copy gets replica 0's value (SPEC 8.4) */
            const char *name = dgr_replica_orig_name(g, i, NULL);
            const dgc_ttype *ty = &nd->outputs[0];
            target tg;
            if ((st = find_target(&b, g, name, ty, &parts, &tg, err)) != DG_OK)
                break;
            const dgr_bundle_entry *e = tg.e;
            src_ctx x = {&b, checked, &tg, NULL, 0};
            if (pass == 0) {
                most = tg.whole && e->size > most ? e->size : most;
            } else if (pass == 1) {
                st = each_source(&b, &tg, check_source, &x, err);
            } else if (!tg.whole) {
                st = restore_box(s, i, &b, &tg, ty->dtype, err);
            } else if (!buf && !(buf = dg_malloc(most ? (size_t)most : 1))) {
                st = dg_err_nomem(err, "checkpoint");
            } else {
                dg_tensor t = {ty->dtype, {e->rank, {0}}, buf};
                memcpy(t.shape.dims, e->dims, sizeof t.shape.dims);
                if ((st = dgr_bundle_read_checked(&b, e, buf, err)) == DG_OK)
                    st = dgr_session_scatter_variable(s, i, &t, err);
            }
        }
    if (st == DG_OK)
        *step = bundle_step(&b);
    dg_free(buf);
    dg_free(checked);
    dgr_ckpt_parts_free(&parts);
    dgr_bundle_free(&b);
    return st;
}

/* ---- restoring dgrun's own format (version 1) --------------------------- */

typedef struct rd {
    const unsigned char *p;
    size_t n, off;
} rd;

static int get(rd *r, void *dst, size_t n)
{
    if (r->n - r->off < n)
        return -1;
    memcpy(dst, r->p + r->off, n);
    r->off += n;
    return 0;
}

typedef struct entry {
    const char *name;
    uint32_t nl;
    dg_tensor t; /* data points into the file buffer */
} entry;

static dg_status restore_dgrun(dgr_session *s, const char *path,
                               unsigned char *buf, size_t len, int64_t *step,
                               dg_error *err)
{
    const dgc_graph *g = dgr_session_program(s)->g;
    dg_status st = DG_OK;
    entry *ents = NULL;
    uint32_t n = 0;
    uint64_t h;
    if (len < 8 + 8 + 4 + 8 || memcmp(buf, MAGIC, 8) != 0) {
        st = dg_err(err, DG_E_GRAPH, "%s: not a dgrun checkpoint (truncated "
                    "or another kind of file)", path);
        goto done;
    }
    memcpy(&h, buf + len - 8, 8);
    if (dg_fnv1a(DG_FNV1A_INIT, buf, len - 8) != h) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt (checksum "
                    "mismatch)", path);
        goto done;
    }
    rd r = {buf, len - 8, 8};
    int64_t saved_step;
    if (get(&r, &saved_step, 8) || get(&r, &n, 4) || n > len ||
        saved_step < 0 || saved_step > MAX_STEP) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt", path);
        goto done;
    }
    ents = dg_calloc((size_t)n + 1, sizeof *ents);
    if (!ents) {
        st = dg_err_nomem(err, "checkpoint");
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        entry *e = &ents[i];
        uint8_t dt, rank;
        uint64_t nb;
        if (get(&r, &e->nl, 4) || r.n - r.off < e->nl) {
            st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt", path);
            goto done;
        }
        e->name = (const char *)buf + r.off;
        r.off += e->nl;
        if (get(&r, &dt, 1) || get(&r, &rank, 1) || dt >= DG_DTYPE_COUNT ||
            rank > DG_MAX_RANK || get(&r, e->t.shape.dims, 8 * (size_t)rank) ||
            get(&r, &nb, 8) || r.n - r.off < nb) {
            st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt", path);
            goto done;
        }
        e->t.dtype = (dg_dtype)dt;
        e->t.shape.rank = rank;
        int64_t ne = dg_shape_numel(&e->t.shape);
        if (ne < 0 || (uint64_t)ne * dg_dtype_size(e->t.dtype) != nb) {
            st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt", path);
            goto done;
        }
        e->t.data = buf + r.off;
        r.off += nb;
    }
    /* check every Variable first, then write */
    int vop = DGC_OPID_Variable;
    for (int pass = 0; pass < 2 && st == DG_OK; pass++)
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const dgc_node *nd = &g->nodes[i];
            if (nd->op != vop)
                continue;
            /* every replica's copy gets replica 0's value (SPEC 8.4) */
            const char *name = dgr_replica_orig_name(g, i, NULL);
            size_t nl = strlen(name);
            entry *e = NULL;
            for (uint32_t k = 0; k < n && !e; k++)
                if (ents[k].nl == nl && memcmp(ents[k].name, name, nl) == 0)
                    e = &ents[k];
            if (!e) {
                st = dg_err(err, DG_E_GRAPH, "%s: checkpoint does not match "
                            "the graph: Variable '%s' is missing", path,
                            name);
                break;
            }
            const dgc_ttype *ty = &nd->outputs[0];
            int same = e->t.dtype == ty->dtype && e->t.shape.rank == ty->shape.rank;
            for (int d = 0; same && d < ty->shape.rank; d++)
                same = ty->shape.dims[d] < 0 || ty->shape.dims[d] == e->t.shape.dims[d];
            if (!same) {
                st = dg_err(err, DG_E_GRAPH, "%s: checkpoint does not match "
                            "the graph: Variable '%s' has a different dtype "
                            "or shape", path, name);
                break;
            }
            if (pass == 1 &&
                (st = dgr_session_scatter_variable(s, i, &e->t, err)) != DG_OK)
                break;
        }
    if (st == DG_OK)
        *step = saved_step;
done:
    dg_free(ents);
    return st;
}

/* ---- which checkpoint, which format ------------------------------------- */

/* The checkpoint at loc: *prefix (a TF bundle) or *file (dgrun's format),
 * dg_malloc'd; both NULL (DG_OK) when there is none, and then *named
 * (when not NULL) is set when a state file named a checkpoint that is
 * not there (dg_malloc'd). */
static dg_status resolve(const char *loc, char **prefix, char **file,
                         char **named, dg_error *err)
{
    *prefix = *file = NULL;
    if (named)
        *named = NULL;
    char *base = NULL;
    int stated = 0;
    dg_status st = DG_OK;
    if (is_dir_spec(loc)) {
        /* a checkpoint_dir: the newest checkpoint its state file names;
         * without one, DIR/model.ckpt (dgrun's earlier default) */
        char *dir = dir_of_loc(loc);
        dgr_ckpt_state cs;
        int found = 0;
        if (!dir)
            return dg_err_nomem(err, "checkpoint path");
        st = dgr_ckpt_state_read(dir, &cs, &found, err);
        if (st == DG_OK && found) {
            base = dgr_ckpt_state_join(dir, cs.model);
            stated = 1;
        }
        else if (st == DG_OK)
            base = dgr_ckpt_state_join(dir, "model.ckpt");
        if (st == DG_OK && !base)
            st = dg_err_nomem(err, "checkpoint path");
        if (found)
            dgr_ckpt_state_free(&cs);
        dg_free(dir);
        if (st != DG_OK)
            return st;
    } else if (!(base = dg_strdup(loc))) {
        return dg_err_nomem(err, "checkpoint path");
    }
    dgr_bundle_recover(base);
    char *idx = with_suffix(base, ".index");
    struct stat sb;
    size_t bl = strlen(base);
    if (!idx) {
        st = dg_err_nomem(err, "checkpoint path");
    } else if (file_exists(idx)) {
        *prefix = base;
        base = NULL;
    } else if (stat(base, &sb) == 0 && S_ISREG(sb.st_mode)) {
        /* dgrun's file, or a TF index named directly */
        FILE *f = fopen(base, "rb");
        char head[8] = {0};
        size_t got = f ? fread(head, 1, 8, f) : 0;
        if (f)
            fclose(f);
        if (got == 8 && memcmp(head, MAGIC, 8) == 0) {
            *file = base;
            base = NULL;
        } else if (bl > 6 && strcmp(base + bl - 6, ".index") == 0) {
            base[bl - 6] = '\0';
            *prefix = base;
            base = NULL;
        } else {
            *file = base; /* refused by its reader, naming it */
            base = NULL;
        }
    } else if (stated && named) {
        *named = base;
        base = NULL;
    }
    dg_free(idx);
    dg_free(base);
    return st;
}

int dgr_checkpoint_exists(const char *loc)
{
    char *prefix = NULL, *file = NULL;
    dg_error ignored = {0};
    /* a damaged state file counts as a checkpoint: the restore says why */
    if (resolve(loc, &prefix, &file, NULL, &ignored) != DG_OK)
        return 1;
    int yes = prefix || file;
    dg_free(prefix);
    dg_free(file);
    return yes;
}

dg_status dgr_checkpoint_restore(dgr_session *s, const char *loc,
                                 int64_t *step, dg_error *err)
{
    const dgc_graph *g = dgr_session_program(s)->g;
    if (dgr_session_rank(s) != 0) {
        /* a cluster: rank 0 reads the file and sends each Variable to the
         * task that holds it (SPEC 8.3) */
        for (int32_t i = 0; i < g->n_nodes; i++)
            if (g->nodes[i].op == DGC_OPID_Variable) {
                dg_status st = dgr_session_scatter_variable(s, i, NULL, err);
                if (st != DG_OK)
                    return st;
            }
        return dgr_session_bcast(s, step, 1, err);
    }
    char *prefix = NULL, *file = NULL, *named = NULL;
    dg_status st = resolve(loc, &prefix, &file, &named, err);
    if (st != DG_OK)
        return st;
    if (prefix) {
        st = restore_tf(s, prefix, step, err);
    } else if (file) {
        char *text = NULL;
        size_t len = 0;
        dg_status rs = dg_read_file(file, &text, &len);
        if (rs == DG_E_NOMEM)
            st = dg_err_nomem(err, "checkpoint");
        else if (rs != DG_OK)
            st = dg_err(err, DG_E_IO, "%s: cannot read checkpoint: %s", file,
                        strerror(errno));
        else
            st = restore_dgrun(s, file, (unsigned char *)text, len, step, err);
        dg_free(text);
    } else if (named) {
        st = dg_err(err, DG_E_IO, "%s: cannot read checkpoint: %s.index: %s "
                    "(the checkpoint %scheckpoint names)", named, named,
                    strerror(ENOENT), loc);
    } else if (is_dir_spec(loc)) {
        st = dg_err(err, DG_E_IO, "%s: cannot read checkpoint: no checkpoint "
                    "state file and no model.ckpt in the directory", loc);
    } else {
        st = dg_err(err, DG_E_IO, "%s: cannot read checkpoint: %s.index: %s",
                    loc, loc, strerror(ENOENT));
    }
    dg_free(prefix);
    dg_free(file);
    dg_free(named);
    if (st == DG_OK)
        st = dgr_session_bcast(s, step, 1, err);
    return st;
}

dg_status dg_session_restore(dg_session *ds, const char *path, int64_t *step,
                             dg_error *err)
{
    dgr_session *s = (dgr_session *)(void *)ds;
    char *loc = dgr_checkpoint_file(NULL, path);
    if (!loc)
        return dg_err_nomem(err, "checkpoint path");
    int64_t at = 0;
    dg_status st = dgr_checkpoint_restore(s, loc, &at, err);
    dg_free(loc);
    if (st == DG_OK && step)
        *step = at;
    return st;
}
