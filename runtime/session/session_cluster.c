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
#include "dg_io.h"
#include "dg_util.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- profile summaries ------------------------------------------------------ */

#define TAG_SUMMARY 6

/* "/job:J/task:T" of rank r, from the device list. */
static void task_name(const dgr_exec *x, int r, char *buf, size_t n)
{
    snprintf(buf, n, "rank %d", r);
    for (int d = 0; d < x->devlist->n; d++)
        if (x->devlist->devs[d].rank == r) {
            snprintf(buf, n, "/job:%s/task:%d", x->devlist->devs[d].job,
                     x->devlist->devs[d].task);
            return;
        }
}

char *dgr_session_cluster_summary(dgr_session *s, char *mine)
{
    dgr_exec *x = dgr_session_exec(s);
    dgr_transport *t = x->xport;
    dg_error err;
    int64_t len = mine ? (int64_t)strlen(mine) : 0;
    if (x->rank != 0) {
        if (t->send_msg(t, 0, TAG_SUMMARY, &len, sizeof len, &err) ==
                DG_OK && len > 0)
            t->send_msg(t, 0, TAG_SUMMARY, mine, (size_t)len, &err);
        dg_free(mine);
        return NULL;
    }
    dg_sbuf b;
    dg_sbuf_init(&b);
    for (int r = 0; r < t->size; r++) {
        char *txt = NULL;
        int64_t n = 0;
        if (r == 0) {
            txt = mine;
            n = len;
        } else if (t->recv_msg(t, r, TAG_SUMMARY, &n, sizeof n, &err) ==
                       DG_OK && n > 0 && (txt = dg_malloc((size_t)n))) {
            if (t->recv_msg(t, r, TAG_SUMMARY, txt, (size_t)n, &err) != DG_OK)
                n = 0;
        }
        char head[160];
        task_name(x, r, head, sizeof head);
        dg_sbuf_addf(&b, "%s== %s ==\n", r ? "\n" : "", head);
        if (txt && n > 0)
            dg_sbuf_addn(&b, txt, (size_t)n);
        if (r > 0)
            dg_free(txt);
    }
    dg_free(mine);
    return dg_sbuf_take(&b);
}

/* ---- one trace for the whole cluster ------------------------------------- */

#define TAG_CLOCK 4
#define TAG_TRACE 5

dg_status dgr_session_clock_offsets(dgr_session *s, int64_t **out,
                                    dg_error *err)
{
    dgr_exec *x = dgr_session_exec(s);
    dgr_transport *t = x->xport;
    *out = NULL;
    if (!t)
        return DG_OK;
    int64_t *off = x->rank == 0 ? dg_calloc((size_t)t->size, sizeof *off)
                                : NULL;
    if (x->rank == 0 && !off)
        return dg_err_nomem(err, "clock offsets");
    /* rank 0 pings each rank; the reply with the least round trip gives
     * that rank's clock minus rank 0's (NTP's estimate).  Processes on one
     * host share its monotonic clock: offset 0. */
    char host[256] = "", host0[256] = "";
    gethostname(host, sizeof host - 1);
    for (int r = 1; r < t->size; r++) {
        if (x->rank != 0 && x->rank != r)
            continue;
        /* rank r tells its host; rank 0 answers whether it is its own */
        int64_t same = 0;
        dg_status hs;
        if (x->rank == 0) {
            hs = t->recv_msg(t, r, TAG_CLOCK, host0, sizeof host0, err);
            same = strcmp(host, host0) == 0;
            if (hs == DG_OK)
                hs = t->send_msg(t, r, TAG_CLOCK, &same, sizeof same, err);
        } else {
            hs = t->send_msg(t, 0, TAG_CLOCK, host, sizeof host, err);
            if (hs == DG_OK)
                hs = t->recv_msg(t, 0, TAG_CLOCK, &same, sizeof same, err);
        }
        if (hs != DG_OK) {
            dg_free(off);
            return hs;
        }
        if (same)
            continue; /* off[r] stays 0 */
        uint64_t best = UINT64_MAX;
        for (int k = 0; k < 8; k++) {
            uint64_t t1 = dg_now_ns(), tr = 0;
            dg_status st;
            if (x->rank == 0) {
                st = t->send_msg(t, r, TAG_CLOCK, &t1, sizeof t1, err);
                if (st == DG_OK)
                    st = t->recv_msg(t, r, TAG_CLOCK, &tr, sizeof tr, err);
                uint64_t t2 = dg_now_ns();
                if (st == DG_OK && t2 - t1 < best) {
                    best = t2 - t1;
                    off[r] = (int64_t)tr - (int64_t)(t1 / 2 + t2 / 2);
                }
            } else {
                st = t->recv_msg(t, 0, TAG_CLOCK, &t1, sizeof t1, err);
                tr = dg_now_ns();
                if (st == DG_OK)
                    st = t->send_msg(t, 0, TAG_CLOCK, &tr, sizeof tr, err);
            }
            if (st != DG_OK) {
                dg_free(off);
                return st;
            }
        }
    }
    *out = off;
    return DG_OK;
}

static char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    if (!f)
        return NULL;
    if (dg_read_stream(f, &buf, len) != DG_OK)
        buf = NULL;
    fclose(f);
    return buf;
}

/* This rank's trace as JSON text (through a temporary file). */
static dg_status own_trace(dgr_trace *tr, char **text, size_t *len,
                           dg_error *err)
{
    char tmp[] = "/tmp/dgrun-trace-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0)
        return dg_err(err, DG_E_IO, "cannot create a temporary trace file");
    close(fd);
    dg_status st = dgr_trace_write(tr, tmp, err);
    if (st == DG_OK && !(*text = read_whole(tmp, len)))
        st = dg_err(err, DG_E_IO, "%s: cannot read the trace back", tmp);
    unlink(tmp);
    return st;
}

typedef struct remote_end {
    cJSON *ev;
    const char *key;
    double ts, dur;
    int send;
} remote_end;

static int end_cmp(const void *a, const void *b)
{
    const remote_end *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    if (x->send != y->send)
        return x->send ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static void add_flow(cJSON *evs, const char *ph, const char *name, double id,
                     const cJSON *slice, double ts)
{
    cJSON *e = cJSON_CreateObject();
    if (!e)
        return;
    cJSON_AddStringToObject(e, "ph", ph);
    cJSON_AddStringToObject(e, "cat", "DataFlow");
    cJSON_AddStringToObject(e, "name", name);
    cJSON_AddNumberToObject(e, "id", id);
    cJSON_AddNumberToObject(e, "pid",
                            cJSON_GetObjectItem(slice, "pid")->valuedouble);
    cJSON_AddNumberToObject(e, "tid",
                            cJSON_GetObjectItem(slice, "tid")->valuedouble);
    cJSON_AddNumberToObject(e, "ts", ts);
    if (ph[0] == 'f')
        cJSON_AddStringToObject(e, "bp", "e");
    cJSON_AddItemToArray(evs, e);
}

/* Flows between the two ends of each transfer between tasks: the ends of
 * one tensor between two devices in one step pair up in time order. */
static void remote_flows(cJSON *evs)
{
    int n = 0, cap = 0;
    remote_end *v = NULL;
    char **keys = NULL;
    cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        const cJSON *nm = cJSON_GetObjectItem(e, "name");
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        if (!cJSON_IsString(nm) || strcmp(nm->valuestring, "MemcpyRemote") ||
            !args)
            continue;
        const char *tn = cJSON_GetStringValue(cJSON_GetObjectItem(args, "tensor"));
        const char *sd = cJSON_GetStringValue(cJSON_GetObjectItem(args, "src_device"));
        const char *dd = cJSON_GetStringValue(cJSON_GetObjectItem(args, "dst_device"));
        const cJSON *stp = cJSON_GetObjectItem(args, "step");
        const cJSON *snd = cJSON_GetObjectItem(args, "end");
        if (!tn || !sd || !dd || !stp || !cJSON_IsString(snd))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            remote_end *nv = dg_realloc(v, sizeof *v * (size_t)cap);
            char **nk = dg_realloc(keys, sizeof *keys * (size_t)cap);
            if (nv)
                v = nv;
            if (nk)
                keys = nk;
            if (!nv || !nk)
                break;
        }
        size_t kl = strlen(tn) + strlen(sd) + strlen(dd) + 48;
        if (!(keys[n] = dg_malloc(kl)))
            break;
        snprintf(keys[n], kl, "%s|%s|%s|%.0f", tn, sd, dd, stp->valuedouble);
        v[n].ev = e;
        v[n].key = keys[n];
        v[n].ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        v[n].dur = cJSON_GetObjectItem(e, "dur")->valuedouble;
        v[n].send = strcmp(snd->valuestring, "send") == 0;
        n++;
    }
    if (n > 1)
        qsort(v, (size_t)n, sizeof *v, end_cmp);
    double id = 1e14; /* above every rank's own flow ids (r * 1e9 + k) */
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !strcmp(v[j].key, v[i].key))
            j++;
        int ns = 0;
        while (i + ns < j && v[i + ns].send)
            ns++;
        for (int k = 0; k < ns && i + ns + k < j; k++) {
            const remote_end *a = &v[i + k], *b = &v[i + ns + k];
            /* the middles, else early in the sending slice and late in
             * the receiving one (never on a slice's edge) */
            double s = a->ts + a->dur / 2, f = b->ts + b->dur / 2;
            if (f < s) {
                s = a->ts + a->dur / 4;
                f = b->ts + b->dur * 3 / 4;
            }
            if (f < s || b->ts < a->ts)
                continue; /* never back in time: viewers order a flow by
                             its slices' starts */
            const char *tn = cJSON_GetStringValue(cJSON_GetObjectItem(
                cJSON_GetObjectItem(a->ev, "args"), "tensor"));
            id += 1;
            add_flow(evs, "s", tn, id, a->ev, s);
            add_flow(evs, "f", tn, id, b->ev, f);
        }
        i = j;
    }
    for (int i = 0; i < n; i++)
        dg_free(keys[i]);
    dg_free(keys);
    dg_free(v);
}

typedef struct meta_ev {
    cJSON *ev;
    double pid, tid;
    int thread, idx;
} meta_ev;

static int meta_cmp(const void *a, const void *b)
{
    const meta_ev *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread - y->thread;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->idx - y->idx;
}

/* Metadata first: process metadata by pid, then thread metadata by (pid,
 * tid), as one process's writer orders them. */
static void sort_metadata(cJSON *evs)
{
    int n = 0, i = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph"));
        n += ph && ph[0] == 'M';
    }
    meta_ev *v = dg_malloc(sizeof *v * (size_t)(n + 1));
    if (!v)
        return;
    int k = 0;
    for (e = evs->child; e;) {
        cJSON *next = e->next;
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph"));
        if (ph && ph[0] == 'M') {
            const cJSON *tid = cJSON_GetObjectItem(e, "tid");
            v[k].ev = cJSON_DetachItemViaPointer(evs, e);
            v[k].pid = cJSON_GetObjectItem(e, "pid")->valuedouble;
            v[k].tid = tid ? tid->valuedouble : -1;
            v[k].thread = tid != NULL;
            v[k].idx = i;
            k++;
        }
        i++;
        e = next;
    }
    qsort(v, (size_t)k, sizeof *v, meta_cmp);
    for (int j = k - 1; j >= 0; j--)
        cJSON_InsertItemInArray(evs, 0, v[j].ev);
    dg_free(v);
}

/* Append rank r's events to evs: times moved to rank 0's clock by
 * shift_us, flow ids made unique, metadata rank 0 has already dropped. */
static void merge_rank(cJSON *evs, cJSON *doc, int r, double shift_us)
{
    cJSON *src = cJSON_GetObjectItem(doc, "traceEvents");
    cJSON *e;
    while (src && (e = cJSON_DetachItemFromArray(src, 0))) {
        const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph"));
        if (ph && ph[0] == 'M') {
            /* process names come from every rank: keep the first */
            const char *nm = cJSON_GetStringValue(cJSON_GetObjectItem(e, "name"));
            const cJSON *pid = cJSON_GetObjectItem(e, "pid");
            const cJSON *tid = cJSON_GetObjectItem(e, "tid");
            int dup = 0;
            cJSON *o;
            cJSON_ArrayForEach(o, evs) {
                const char *oph = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ph"));
                if (!oph || oph[0] != 'M')
                    continue;
                const cJSON *op = cJSON_GetObjectItem(o, "pid");
                const cJSON *ot = cJSON_GetObjectItem(o, "tid");
                const char *on = cJSON_GetStringValue(cJSON_GetObjectItem(o, "name"));
                if (nm && on && !strcmp(nm, on) && op && pid &&
                    op->valuedouble == pid->valuedouble &&
                    (!tid) == (!ot) &&
                    (!tid || tid->valuedouble == ot->valuedouble)) {
                    dup = 1;
                    break;
                }
            }
            if (dup) {
                cJSON_Delete(e);
                continue;
            }
            cJSON_AddItemToArray(evs, e); /* sort_metadata orders it */
            continue;
        }
        cJSON *ts = cJSON_GetObjectItem(e, "ts");
        if (ts)
            cJSON_SetNumberValue(ts, ts->valuedouble + shift_us);
        cJSON *id = cJSON_GetObjectItem(e, "id");
        if (id)
            cJSON_SetNumberValue(id, id->valuedouble + (double)r * 1e9);
        cJSON_AddItemToArray(evs, e);
    }
}

/* Write n bytes to path atomically (temporary file, fsync, rename). */
static dg_status write_atomic(const char *path, const char *p, size_t n,
                              dg_error *err)
{
    size_t pl = strlen(path) + 32;
    char *tmp = dg_malloc(pl);
    if (!tmp)
        return dg_err_nomem(err, "trace");
    snprintf(tmp, pl, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int bad = !f || fwrite(p, 1, n, f) != n || fflush(f) != 0 ||
              fsync(fileno(f)) != 0;
    if (f && fclose(f) != 0)
        bad = 1;
    if (!bad && rename(tmp, path) != 0)
        bad = 1;
    dg_status st = DG_OK;
    if (bad) {
        unlink(tmp);
        st = dg_err(err, DG_E_IO, "%s: cannot write the trace", path);
    }
    dg_free(tmp);
    return st;
}

dg_status dgr_session_cluster_trace(dgr_session *s, dgr_trace *tr,
                                    uint64_t origin, const int64_t *offs,
                                    const char *path, dg_error *err)
{
    dgr_exec *x = dgr_session_exec(s);
    dgr_transport *t = x->xport;
    char *text = NULL;
    size_t len = 0;
    dg_status st = own_trace(tr, &text, &len, err);
    /* a rank that failed here still takes part (length -1) */
    int64_t hdr[2] = {st == DG_OK ? (int64_t)len : -1, (int64_t)origin};
    if (x->rank != 0) {
        dg_status st2 = t->send_msg(t, 0, TAG_TRACE, hdr, sizeof hdr, err);
        if (st == DG_OK && st2 == DG_OK && len)
            st2 = t->send_msg(t, 0, TAG_TRACE, text, len, err);
        dg_free(text);
        return st != DG_OK ? st : st2;
    }
    cJSON *doc = st == DG_OK ? cJSON_ParseWithLength(text, len) : NULL;
    dg_free(text);
    cJSON *evs = doc ? cJSON_GetObjectItem(doc, "traceEvents") : NULL;
    if (st == DG_OK && !evs)
        st = dg_err(err, DG_E_IO, "%s: cannot merge the cluster's traces",
                    path);
    for (int r = 1; r < t->size; r++) {
        int64_t h[2] = {0, 0};
        dg_status st2 = t->recv_msg(t, r, TAG_TRACE, h, sizeof h, err);
        char *rt = NULL;
        if (st2 == DG_OK && h[0] > 0) {
            if (!(rt = dg_malloc((size_t)h[0] + 1)))
                st2 = dg_err_nomem(err, "trace");
            else
                st2 = t->recv_msg(t, r, TAG_TRACE, rt, (size_t)h[0], err);
        }
        if (st2 == DG_OK && h[0] < 0)
            st2 = dg_err(err, DG_E_IO, "rank %d could not write its trace", r);
        if (st == DG_OK)
            st = st2;
        if (st == DG_OK && rt) {
            cJSON *d = cJSON_ParseWithLength(rt, (size_t)h[0]);
            /* rank r's clock minus rank 0's is offs[r]: its origin on
             * rank 0's clock is h[1] - offs[r] */
            double shift = ((double)(h[1] - (offs ? offs[r] : 0)) -
                            (double)origin) / 1000.0;
            if (d)
                merge_rank(evs, d, r, shift);
            else
                st = dg_err(err, DG_E_IO, "rank %d sent a trace that does not "
                            "parse", r);
            cJSON_Delete(d);
        }
        dg_free(rt);
    }
    if (st == DG_OK) {
        sort_metadata(evs);
        remote_flows(evs);
        cJSON *od = cJSON_GetObjectItem(doc, "otherData");
        cJSON *arr = cJSON_CreateArray();
        for (int r = 0; arr && r < t->size; r++)
            cJSON_AddItemToArray(arr, cJSON_CreateNumber(
                                          offs ? (double)offs[r] : 0.0));
        if (od && arr)
            cJSON_AddItemToObject(od, "clock_offsets_ns", arr);
        else
            cJSON_Delete(arr);
        char *out = cJSON_PrintUnformatted(doc);
        if (!out)
            st = dg_err_nomem(err, "trace");
        else
            st = write_atomic(path, out, strlen(out), err);
        free(out);
    }
    cJSON_Delete(doc);
    return st;
}
