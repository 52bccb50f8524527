/*
 * checkpoint.c -- training checkpoints (see checkpoint.h and
 * docs/checkpoints.md): a little-endian binary file holding the step and
 * every Variable (name, dtype, shape, raw data), closed by an FNV-1a 64
 * checksum of all preceding bytes.  Written to "<path>.tmp.<pid>" in the
 * same directory, fsync'd, renamed over path and the directory fsync'd, so
 * a crash (even SIGKILL mid-write) leaves the previous complete checkpoint
 * or the new one, never half of one; stale temporaries of dead writers are
 * removed by the next save.
 */
#include "checkpoint.h"
#include "dg_alloc.h"
#include "dg_io.h"
#include "dg_util.h"
#include "dg_error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAGIC "DGCKPT1\n"

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
    if (sl && spec[sl - 1] == '/') /* "ck/": a directory, made on save */
        dg_sbuf_add(&b, "model.ckpt");
    else if (b.s && stat(b.s, &st) == 0 && S_ISDIR(st.st_mode))
        dg_sbuf_add(&b, "/model.ckpt");
    return dg_sbuf_take(&b); /* allocated through dg_alloc */
}

typedef struct wr {
    FILE *f;
    uint64_t h;
    int bad;
} wr;

static void put(wr *w, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        w->bad = 1;
    w->h = dg_fnv1a(w->h, p, n);
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

/* fsync the directory holding path so the rename itself is durable. */
static void sync_dir(const char *path)
{
    char *dir = dir_of(path);
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd); /* best effort: some file systems refuse */
        close(fd);
    }
    dg_free(dir);
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

/* Remove "<base>.tmp.<pid>" files left by writers that were killed (the
 * pid no longer exists).  Best effort; never fails the save. */
static void remove_stale(const char *path)
{
    char *dir = dir_of(path);
    if (!dir)
        return;
    const char *slash = strrchr(path, '/');
    dg_remove_dead_temps(dir, slash ? slash + 1 : path);
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

dg_status dgr_checkpoint_save(dgr_session *s, const char *path, int64_t step,
                              dg_error *err)
{
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
    uint32_t n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        n += g->nodes[i].op == vop && saved_name(g, i) != NULL;
    size_t pl = strlen(path);
    char *tmp = dg_malloc(pl + 32);
    if (!tmp)
        return dg_err_nomem(err, "checkpoint");
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    make_parents(path);
    wr w = {fopen(tmp, "wb"), DG_FNV1A_INIT, 0};
    if (!w.f) {
        dg_status st = dg_err(err, DG_E_IO, "%s: cannot write checkpoint: %s",
                              path, strerror(errno));
        dg_free(tmp);
        return st;
    }
    put(&w, MAGIC, 8);
    put(&w, &step, 8);
    put(&w, &n, 4);
    dg_status st = DG_OK;
    for (int32_t i = 0; i < g->n_nodes && st == DG_OK; i++) {
        const char *name = saved_name(g, i);
        if (g->nodes[i].op != vop || !name)
            continue;
        dg_tensor *t = NULL;
        if ((st = dgr_session_gather_variable(s, i, &t, err)) != DG_OK)
            break;
        uint32_t nl = (uint32_t)strlen(name);
        uint8_t dt = (uint8_t)t->dtype, rank = (uint8_t)t->shape.rank;
        uint64_t nb = (uint64_t)dg_shape_numel(&t->shape) * dg_dtype_size(t->dtype);
        put(&w, &nl, 4);
        put(&w, name, nl);
        put(&w, &dt, 1);
        put(&w, &rank, 1);
        put(&w, t->shape.dims, 8 * (size_t)rank);
        put(&w, &nb, 8);
        put(&w, t->data, (size_t)nb);
        dg_tensor_free(t);
    }
    uint64_t h = w.h;
    put(&w, &h, 8);
    if (fflush(w.f) != 0 || fsync(fileno(w.f)) != 0)
        w.bad = 1;
    if (fclose(w.f) != 0)
        w.bad = 1;
    if (st == DG_OK && w.bad)
        st = dg_err(err, DG_E_IO, "%s: writing the checkpoint failed: %s", tmp,
                    strerror(errno));
    if (st == DG_OK && rename(tmp, path) != 0)
        st = dg_err(err, DG_E_IO, "%s: cannot rename the checkpoint into "
                    "place: %s", path, strerror(errno));
    if (st != DG_OK)
        unlink(tmp);
    else
        sync_dir(path);
    dg_free(tmp);
    static atomic_int cleaned; /* once per process is enough */
    if (st == DG_OK && atomic_exchange(&cleaned, 1) == 0)
        remove_stale(path);
    return st;
}

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

dg_status dgr_checkpoint_restore(dgr_session *s, const char *path,
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
    FILE *f = fopen(path, "rb");
    if (!f)
        return dg_err(err, DG_E_IO, "%s: cannot read checkpoint: %s", path,
                      strerror(errno));
    char *text = NULL;
    size_t len = 0;
    dg_status rs = dg_read_stream(f, &text, &len);
    fclose(f);
    if (rs == DG_E_NOMEM)
        return dg_err_nomem(err, "checkpoint");
    if (rs != DG_OK)
        return dg_err(err, DG_E_IO, "%s: cannot read checkpoint", path);
    unsigned char *buf = (unsigned char *)text;
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
    if (get(&r, &saved_step, 8) || get(&r, &n, 4) || n > len) {
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
    if (st == DG_OK) {
        *step = saved_step;
        st = dgr_session_bcast(s, step, 1, err);
    }
done:
    dg_free(ents);
    dg_free(buf);
    return st;
}

dg_status dg_session_restore(dg_session *ds, const char *path, int64_t *step,
                             dg_error *err)
{
    dgr_session *s = (dgr_session *)(void *)ds;
    char *file = dgr_checkpoint_file(NULL, path);
    if (!file)
        return dg_err_nomem(err, "checkpoint path");
    int64_t at = 0;
    dg_status st = dgr_checkpoint_restore(s, file, &at, err);
    dg_free(file);
    if (st == DG_OK && step)
        *step = at;
    return st;
}
