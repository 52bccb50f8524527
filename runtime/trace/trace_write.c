/*
 * trace_write.c -- dgr_trace_write: stream the recorded events as Trace
 * Event Format JSON (SPEC section 7) to a temporary file next to the
 * destination, fsync it and rename it into place.
 *
 * Order: sorted metadata (process names/sort indices by pid, then thread
 * names/sort indices by pid, tid), complete events lane by lane in start
 * order, flow events, then memory counters by device and time.  Times are
 * integer nanoseconds printed as microseconds with three decimals, so the
 * file is exact.  Lanes are written as tid DGR_TID(device, lane).  A flow
 * names its producer and consumer slices by key; its "s" and "f" (bp "e")
 * ends are placed inside exactly those slices (flow_point), so viewers
 * draw the arrow between them.
 */
#include "trace_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dg_alloc.h"
#include "dg_error.h"

#define WRITE_BUF_BYTES (1u << 20)

/* ---- streaming JSON string escaper (valid UTF-8 out) ------------------ */

/* Length of the valid UTF-8 sequence at p, 0 if invalid. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    int n;
    unsigned min;
    if (c < 0x80)
        return 1;
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        min = 0x80;
        c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        min = 0x800;
        c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        min = 0x10000;
        c &= 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    return n;
}

/* The writer owns its stream: unlocked stdio calls (the file is locked
 * once around the whole write). */
#define PUTC(c, f) putc_unlocked((c), (f))
#define PUTS(s, f) fputs_unlocked((s), (f))
#define WRITE(p, n, f) fwrite_unlocked((p), 1, (n), (f))

static void put_json_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    PUTC('"', f);
    while (*p) {
        /* fast path: a run of printable ASCII that needs no escape */
        const unsigned char *q = p;
        while (*q >= 0x20 && *q < 0x7F && *q != '"' && *q != '\\')
            q++;
        if (q > p) {
            WRITE(p, (size_t)(q - p), f);
            p = q;
            continue;
        }
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            PUTC('\\', f);
            PUTC((int)c, f);
            p++;
        } else if (c < 0x20 || c == 0x7F) {
            switch (c) {
            case '\n': PUTS("\\n", f); break;
            case '\r': PUTS("\\r", f); break;
            case '\t': PUTS("\\t", f); break;
            case '\b': PUTS("\\b", f); break;
            case '\f': PUTS("\\f", f); break;
            default: fprintf(f, "\\u%04x", c);
            }
            p++;
        } else {
            int n = utf8_len(p);
            if (n == 0) {
                PUTS("\\ufffd", f); /* invalid byte */
                p++;
            } else {
                WRITE(p, (size_t)n, f);
                p += n;
            }
        }
    }
    PUTC('"', f);
}

static void put_u64(FILE *f, uint64_t v)
{
    char buf[24];
    int i = (int)sizeof buf;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    WRITE(buf + i, sizeof buf - (size_t)i, f);
}

static void put_i64(FILE *f, int64_t v)
{
    if (v < 0) {
        PUTC('-', f);
        put_u64(f, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(f, (uint64_t)v);
    }
}

/* Microseconds with three decimals from integer nanoseconds. */
static void put_us(FILE *f, uint64_t ns)
{
    unsigned frac = (unsigned)(ns % 1000);
    char d[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                 (char)('0' + frac % 10)};
    put_u64(f, ns / 1000);
    WRITE(d, 4, f);
}

/* ---- writer state ----------------------------------------------------- */

typedef struct wctx {
    const dgr_trace *t;
    FILE *f;
    int first; /* no event written yet (comma control) */
    dgr_trec **x;
    size_t nx;
    dgr_trec **flows;
    size_t nflows;
    uint32_t *bykey; /* key -> 1 + index into x (index_keys) */
    size_t nkeys;
    dgr_trec **mems;
    size_t nmems;
    size_t flows_left_out; /* backward arrows (clock disagreement) */
} wctx;

static void sep(wctx *w)
{
    PUTS(w->first ? "\n" : ",\n", w->f);
    w->first = 0;
}

/* ---- lanes in use ----------------------------------------------------- */

typedef struct lane_key {
    int dev, lane;
} lane_key;

static int lane_cmp(const void *pa, const void *pb)
{
    const lane_key *a = pa, *b = pb;
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    return (a->lane > b->lane) - (a->lane < b->lane);
}

/* ---- collecting flows and counters ------------------------------------ */

typedef struct kcollect {
    const dgr_trace *t;
    int kind;
    dgr_trec **v;
    size_t n;
} kcollect;

static void k_add(dgr_trec *r, void *arg)
{
    kcollect *c = arg;
    if (r->kind != c->kind)
        return;
    if (r->kind != DGR_TREC_FLOW && (r->dev < 0 || r->dev >= c->t->n_devs))
        return;
    if (c->v)
        c->v[c->n] = r;
    c->n++;
}

static int collect_kind(const dgr_trace *t, int kind, dgr_trec ***out,
                        size_t *n)
{
    kcollect c = {t, kind, NULL, 0};
    dgr_trace_foreach(t, k_add, &c);
    c.v = dg_malloc((c.n ? c.n : 1) * sizeof *c.v);
    if (!c.v)
        return -1;
    c.n = 0;
    dgr_trace_foreach(t, k_add, &c);
    *out = c.v;
    *n = c.n;
    return 0;
}

static int mem_cmp(const void *pa, const void *pb)
{
    const dgr_trec *a = *(dgr_trec *const *)pa, *b = *(dgr_trec *const *)pb;
    if (a->dev != b->dev)
        return a->dev < b->dev ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    return a < b ? -1 : (a > b);
}

static int flow_cmp(const void *pa, const void *pb)
{
    const dgr_trec *a = *(dgr_trec *const *)pa, *b = *(dgr_trec *const *)pb;
    if (a->step != b->step)
        return a->step < b->step ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a < b ? -1 : (a > b);
}

/* ---- slices by key ------------------------------------------------------ */

/* w->bykey: key -> 1 + index into w->x (0: no slice).  Keys are dense
 * (dgr_trace_keys hands them out consecutively), so a direct table; none
 * when there is no flow to bind. */
static int index_keys(wctx *w)
{
    w->nkeys = 0;
    if (w->nflows == 0)
        return 0;
    uint32_t max = 0;
    for (size_t i = 0; i < w->nx; i++)
        if (w->x[i]->key > max)
            max = w->x[i]->key;
    w->bykey = dg_calloc((size_t)max + 1, sizeof *w->bykey);
    if (!w->bykey)
        return -1;
    w->nkeys = (size_t)max + 1;
    for (size_t i = w->nx; i-- > 0;) /* the first of equal keys wins */
        if (w->x[i]->key)
            w->bykey[w->x[i]->key] = (uint32_t)(i + 1);
    return 0;
}

/* Index in w->x of the slice with `key`, or (size_t)-1. */
static size_t find_key(const wctx *w, uint32_t key)
{
    if (key == 0 || key >= w->nkeys || w->bykey[key] == 0)
        return (size_t)-1;
    return (size_t)w->bykey[key] - 1;
}

/* The time where a flow end binds to slice x[i] in viewers: Perfetto binds
 * a flow event to the slice on top of its lane's stack, i.e. the last one
 * begun (children included, ended or not) before the flow's time;
 * chrome://tracing to the deepest slice containing the time.  Both hold for
 * a point inside the slice before the next slice of the lane begins: the
 * middle of [t0, min(t1, next t0)), at least 2 ns from either end when the
 * gap allows (Perfetto truncates microseconds to integer nanoseconds), else
 * the slice's start (the slice is written before the flow event). */
static uint64_t flow_point(const wctx *w, size_t i)
{
    const dgr_trec *s = w->x[i];
    uint64_t lim = s->t1;
    if (i + 1 < w->nx) {
        int d0, d1;
        int l0 = dgr_trec_lane(s, &d0), l1 = dgr_trec_lane(w->x[i + 1], &d1);
        if (d0 == d1 && l0 == l1 && w->x[i + 1]->t0 < lim)
            lim = w->x[i + 1]->t0;
    }
    return lim > s->t0 + 1 ? s->t0 + (lim - s->t0) / 2 : s->t0;
}

/* ---- sections ----------------------------------------------------------- */

static void write_metadata(wctx *w, const lane_key *lanes, size_t nl)
{
    const dgr_trace *t = w->t;
    FILE *f = w->f;
    for (int d = 0; d < t->n_devs; d++) {
        sep(w);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,"
                   "\"args\":{\"name\":", d + 1);
        put_json_str(f, t->devs[d].name);
        fputs("}}", f);
        sep(w);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,"
                   "\"args\":{\"sort_index\":%d}}", d + 1, d);
    }
    char buf[64];
    for (size_t i = 0; i < nl; i++) {
        const char *name =
            dgr_trace_lane_label(t, lanes[i].dev, lanes[i].lane, buf, sizeof buf);
        sep(w);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,"
                   "\"tid\":%d,\"args\":{\"name\":", lanes[i].dev + 1,
                DGR_TID(lanes[i].dev, lanes[i].lane));
        put_json_str(f, name);
        fputs("}}", f);
        sep(w);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,"
                   "\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                lanes[i].dev + 1, DGR_TID(lanes[i].dev, lanes[i].lane),
                lanes[i].lane);
    }
}

static void write_x(wctx *w)
{
    const dgr_trace *t = w->t;
    FILE *f = w->f;
    for (size_t i = 0; i < w->nx; i++) {
        const dgr_trec *r = w->x[i];
        int dev, lane = dgr_trec_lane(r, &dev);
        uint64_t ts = dgr_trace_rel(t, r->t0);
        uint64_t dur = r->t1 > r->t0 ? r->t1 - r->t0 : 0;
        sep(w);
        if (r->kind == DGR_TREC_OP) {
            PUTS("{\"ph\":\"X\",\"cat\":\"Op\",\"name\":", f);
            put_json_str(f, r->b);
        } else {
            PUTS("{\"ph\":\"X\",\"cat\":\"Memcpy\",\"name\":\"", f);
            PUTS(dgr_trace_memcpy_name(t, r), f);
            PUTC('"', f);
        }
        PUTS(",\"pid\":", f);
        put_i64(f, dev + 1);
        PUTS(",\"tid\":", f);
        put_i64(f, DGR_TID(dev, lane));
        PUTS(",\"ts\":", f);
        put_us(f, ts);
        PUTS(",\"dur\":", f);
        put_us(f, dur);
        if (r->kind == DGR_TREC_OP) {
            PUTS(",\"args\":{\"name\":", f);
            put_json_str(f, r->a);
            PUTS(",\"op\":", f);
            put_json_str(f, r->b);
            PUTS(",\"step\":", f);
            put_i64(f, r->step);
            uint32_t it1 = (uint32_t)r->iter_hi << 16 | (uint16_t)r->dev2;
            if (it1) { /* issue 11 */
                PUTS(",\"iter\":", f);
                put_i64(f, (int64_t)it1 - 1);
            }
            for (int k = 0; k < r->n_inputs; k++) {
                PUTS(",\"input", f);
                put_i64(f, k);
                PUTS("\":", f);
                put_json_str(f, r->inputs[k]);
            }
            PUTS("}}", f);
        } else {
            PUTS(",\"args\":{\"bytes\":", f);
            put_i64(f, r->bytes);
            PUTS(",\"src_device\":", f);
            put_json_str(f, t->devs[r->dev].name);
            PUTS(",\"dst_device\":", f);
            put_json_str(f, t->devs[r->dev2].name);
            PUTS(",\"tensor\":", f);
            put_json_str(f, r->a);
            PUTS(",\"step\":", f);
            put_i64(f, r->step);
            if (t->devs[r->dev].rank != t->devs[r->dev2].rank)
                /* MemcpyRemote: which end of the transfer (SPEC 8.3) */
                PUTS(r->lane == DGR_LANE_SEND ? ",\"end\":\"send\""
                                              : ",\"end\":\"recv\"", f);
            PUTS("}}", f);
        }
    }
}

/* One end of a flow arrow: phase ph ("s" start, "f" end) of flow `id`
 * named `name` at time ns on lane `lane` of device dev; `tail` closes the
 * object. */
static void flow_event(wctx *w, const char *ph, const char *name,
                       uint64_t id, int dev, int lane, uint64_t ns,
                       const char *tail)
{
    FILE *f = w->f;
    sep(w);
    PUTS("{\"ph\":\"", f);
    PUTS(ph, f);
    PUTS("\",\"cat\":\"DataFlow\",\"name\":", f);
    put_json_str(f, name);
    PUTS(",\"id\":", f);
    put_u64(f, id);
    PUTS(",\"pid\":", f);
    put_i64(f, dev + 1);
    PUTS(",\"tid\":", f);
    put_i64(f, DGR_TID(dev, lane));
    PUTS(",\"ts\":", f);
    put_us(f, dgr_trace_rel(w->t, ns));
    PUTS(tail, f);
}

static void write_flows(wctx *w)
{
    uint64_t id = 0;
    for (size_t i = 0; i < w->nflows; i++) {
        const dgr_trec *r = w->flows[i];
        size_t pi = find_key(w, (uint32_t)r->step), ci = find_key(w, r->key);
        if (pi == (size_t)-1 || ci == (size_t)-1) {
            w->flows_left_out++; /* a slice was not recorded */
            continue;
        }
        int pd, cd;
        int pl = dgr_trec_lane(w->x[pi], &pd), cl = dgr_trec_lane(w->x[ci], &cd);
        if (pd == cd && pl == cl)
            continue; /* same lane: the order says it all */
        uint64_t s = flow_point(w, pi), e = flow_point(w, ci);
        /* never back in time: a consumer whose slice starts before the
         * producer's (a host-timed op enqueued before the kernel it
         * consumes ran, or host and device clocks disagree) gets no arrow:
         * Perfetto would draw it from the consumer to the producer */
        if (e < s || w->x[ci]->t0 < w->x[pi]->t0) {
            w->flows_left_out++;
            continue;
        }
        id++;
        flow_event(w, "s", r->a, id, pd, pl, s, "}");
        flow_event(w, "f", r->a, id, cd, cl, e, ",\"bp\":\"e\"}");
    }
}

static void write_counters(wctx *w)
{
    FILE *f = w->f;
    for (size_t i = 0; i < w->nmems; i++) {
        const dgr_trec *r = w->mems[i];
        sep(w);
        fprintf(f, "{\"ph\":\"C\",\"cat\":\"Memory\",\"name\":\"bytes_in_use\","
                   "\"pid\":%d,\"ts\":", r->dev + 1);
        put_us(f, dgr_trace_rel(w->t, r->t0));
        fprintf(f, ",\"args\":{\"bytes_in_use\":%" PRId64 "}}", r->bytes);
    }
}

/* Lanes used by X events (flows bind to them), sorted and unique. */
static int used_lanes(const wctx *w, lane_key **out, size_t *n)
{
    size_t cap = w->nx;
    lane_key *v = dg_malloc((cap ? cap : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < w->nx; i++) {
        v[k].lane = dgr_trec_lane(w->x[i], &v[k].dev);
        if (k == 0 || v[k].dev != v[k - 1].dev || v[k].lane != v[k - 1].lane)
            k++;
    }
    qsort(v, k, sizeof *v, lane_cmp);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || lane_cmp(&v[u - 1], &v[i]) != 0)
            v[u++] = v[i];
    *out = v;
    *n = u;
    return 0;
}

static void write_all(wctx *w, const lane_key *lanes, size_t nl)
{
    FILE *f = w->f;
    fputs("{\"traceEvents\":[", f);
    w->first = 1;
    write_metadata(w, lanes, nl);
    write_x(w);
    write_flows(w);
    write_counters(w);
    /* "ns": chrome://tracing decides nesting at the display unit's
     * precision, and "ms" rounds to 1 us (sub-microsecond ops would nest in
     * their neighbours and lose their flows).  ts stay microseconds. */
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"dgrun_version\":", f);
    put_json_str(f, DG_VERSION_STRING);
    fputs(",\"graph\":", f);
    put_json_str(f, w->t->graph);
    unsigned long dropped = atomic_load(&((dgr_trace *)w->t)->dropped);
    if (dropped)
        fprintf(f, ",\"dropped_events\":%lu", dropped);
    if (w->flows_left_out)
        fprintf(f, ",\"flows_left_out\":%zu", w->flows_left_out);
    fputs("}}\n", f);
}

/* Open a fresh temporary file next to path; returns fd or -1 (errno). */
static int open_temp(const char *path, char *tmp, size_t n)
{
    static atomic_uint counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned c = atomic_fetch_add(&counter, 1);
        int len = snprintf(tmp, n, "%s.tmp.%ld.%u", path, (long)getpid(), c);
        if (len < 0 || (size_t)len >= n) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
}

dg_status dgr_trace_write(dgr_trace *t, const char *path, dg_error *err)
{
    if (!t || !path || !*path)
        return dg_err(err, DG_E_IO, "cannot write trace: no output path");
    wctx w = {0};
    w.t = t;
    lane_key *lanes = NULL;
    size_t nl = 0;
    dg_status st = DG_OK;
    if (dgr_trace_sorted_x(t, &w.x, &w.nx) ||
        collect_kind(t, DGR_TREC_FLOW, &w.flows, &w.nflows) ||
        collect_kind(t, DGR_TREC_MEM, &w.mems, &w.nmems) ||
        used_lanes(&w, &lanes, &nl) || index_keys(&w)) {
        st = dg_err_nomem(err, "writing the trace");
        goto out;
    }
    qsort(w.flows, w.nflows, sizeof *w.flows, flow_cmp);
    qsort(w.mems, w.nmems, sizeof *w.mems, mem_cmp);

    size_t tn = strlen(path) + 64;
    char *tmp = dg_malloc(tn);
    char *iobuf = dg_malloc(WRITE_BUF_BYTES);
    if (!tmp || !iobuf) {
        dg_free(tmp);
        dg_free(iobuf);
        st = dg_err_nomem(err, "writing the trace");
        goto out;
    }
    int fd = open_temp(path, tmp, tn);
    if (fd < 0) {
        st = dg_err(err, DG_E_IO, "cannot write trace '%s': %s", path,
                    strerror(errno));
        dg_free(tmp);
        dg_free(iobuf);
        goto out;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        st = dg_err(err, DG_E_IO, "cannot write trace '%s': %s", path,
                    strerror(e));
        dg_free(tmp);
        dg_free(iobuf);
        goto out;
    }
    setvbuf(f, iobuf, _IOFBF, WRITE_BUF_BYTES);
    w.f = f;
    flockfile(f);
    write_all(&w, lanes, nl);
    funlockfile(f);
    int e = 0;
    if (ferror(f))
        e = errno ? errno : EIO;
    if (!e && fflush(f) != 0)
        e = errno ? errno : EIO;
    if (!e && fsync(fileno(f)) != 0 && errno != EINVAL && errno != EROFS)
        e = errno;
    if (fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e) {
        unlink(tmp);
        st = dg_err(err, DG_E_IO, "cannot write trace '%s': %s", path,
                    strerror(e));
    }
    dg_free(tmp);
    dg_free(iobuf); /* after fclose: the stream no longer uses it */
out:
    dg_free(lanes);
    dg_free(w.x);
    dg_free(w.flows);
    dg_free(w.mems);
    dg_free(w.bykey);
    return st;
}
