/*
 * trace_write.c -- dgr_trace_write: stream the recorded events as Trace
 * Event Format JSON (SPEC section 7) to a temporary file next to the
 * destination, fsync it and rename it into place.
 *
 * Order: sorted metadata (process names/sort indices by pid, then thread
 * names/sort indices by pid, tid), complete events lane by lane in start
 * order, flow events, then memory counters by device and time.  Times are
 * integer nanoseconds printed as microseconds with three decimals, so the
 * file is exact.  Flow points are moved into the slice they belong to, so
 * viewers bind the arrows to the producer and consumer slices.
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
    if (r->dev < 0 || r->dev >= c->t->n_devs)
        return;
    if (r->kind == DGR_TREC_FLOW && (r->dev2 < 0 || r->dev2 >= c->t->n_devs))
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
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    if (a->t1 != b->t1)
        return a->t1 < b->t1 ? -1 : 1;
    return a < b ? -1 : (a > b);
}

/* Index range [*lo, *hi) of lane (dev, lane) in the sorted X events. */
static void lane_range(const wctx *w, int dev, int lane, size_t *lo,
                       size_t *hi)
{
    size_t a = 0, b = w->nx;
    while (a < b) { /* first element >= (dev, lane) */
        size_t m = a + (b - a) / 2;
        int d, l = dgr_trec_lane(w->x[m], &d);
        if (d < dev || (d == dev && l < lane))
            a = m + 1;
        else
            b = m;
    }
    *lo = a;
    b = w->nx;
    while (a < b) { /* first element > (dev, lane) */
        size_t m = a + (b - a) / 2;
        int d, l = dgr_trec_lane(w->x[m], &d);
        if (d < dev || (d == dev && l <= lane))
            a = m + 1;
        else
            b = m;
    }
    *hi = a;
}

/* Whether slice r belongs to the producer of `tensor` ("node" or
 * "node:k"): an op slice of that node or a transfer of that tensor. */
static int produces(const dgr_trec *r, const char *tensor)
{
    if (r->kind == DGR_TREC_MEMCPY)
        return strcmp(r->a, tensor) == 0;
    size_t n = strlen(r->a);
    return strncmp(r->a, tensor, n) == 0 &&
           (tensor[n] == '\0' || tensor[n] == ':');
}

/* The slice of lane (dev, lane) a flow point at ns binds to, NULL if the
 * lane has none.  Producer side: the nearest slice of the producing node
 * (OpenCL slices carry device times while ns is a host time), else the
 * innermost slice containing ns, else the last one before it.  Consumer
 * side: the innermost slice containing ns, else the next one after it. */
static const dgr_trec *bind_slice(const wctx *w, int dev, int lane,
                                  uint64_t ns, const char *tensor,
                                  int consumer)
{
    size_t lo, hi;
    lane_range(w, dev, lane, &lo, &hi);
    if (lo == hi)
        return NULL;
    /* a = one past the last slice with t0 <= ns */
    size_t a = lo, b = hi;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (w->x[m]->t0 <= ns)
            a = m + 1;
        else
            b = m;
    }
    if (!consumer) {
        const dgr_trec *best = NULL;
        uint64_t best_d = UINT64_MAX;
        size_t from = a > lo + 64 ? a - 64 : lo, to = a + 64 < hi ? a + 64 : hi;
        for (size_t i = from; i < to; i++) {
            const dgr_trec *s = w->x[i];
            if (!produces(s, tensor))
                continue;
            uint64_t d = ns < s->t0 ? s->t0 - ns : ns > s->t1 ? ns - s->t1 : 0;
            if (d < best_d) {
                best_d = d;
                best = s;
            }
        }
        if (best)
            return best;
    }
    /* Slices on a lane are nested or disjoint: walk back over those that
     * start before ns to find the innermost one that contains it. */
    for (size_t i = a; i > lo && i + 8 > a; i--) {
        const dgr_trec *s = w->x[i - 1];
        if (ns < s->t1 || (ns == s->t1 && !consumer))
            return s;
    }
    if (!consumer)
        return w->x[a > lo ? a - 1 : lo];
    return w->x[a < hi ? a : hi - 1];
}

/* Range of times inside slice s where a flow point binds: [t0, t1) since
 * viewers close a slice at its end; a zero-length slice gives its start. */
static void bind_range(const dgr_trec *s, uint64_t ns, uint64_t *lo,
                       uint64_t *hi)
{
    if (!s) {
        *lo = *hi = ns;
        return;
    }
    *lo = s->t0;
    *hi = s->t1 > s->t0 ? s->t1 - 1 : s->t0;
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
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
                lanes[i].lane);
        put_json_str(f, name);
        fputs("}}", f);
        sep(w);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,"
                   "\"tid\":%d,\"args\":{\"sort_index\":%d}}",
                lanes[i].dev + 1, lanes[i].lane, lanes[i].lane);
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
        put_i64(f, lane);
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
            PUTS("}}", f);
        }
    }
}

/* One end of a flow arrow: phase ph ("s" start, "t" end) of flow `id`
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
    put_i64(f, lane);
    PUTS(",\"ts\":", f);
    put_us(f, dgr_trace_rel(w->t, ns));
    PUTS(tail, f);
}

static void write_flows(wctx *w)
{
    uint64_t origin = atomic_load(&((dgr_trace *)w->t)->origin);
    uint64_t id = 0;
    for (size_t i = 0; i < w->nflows; i++) {
        const dgr_trec *r = w->flows[i];
        uint64_t src = r->t0 < origin ? origin : r->t0;
        uint64_t dst = r->t1 < origin ? origin : r->t1;
        const dgr_trec *ps = bind_slice(w, r->dev, r->lane, src, r->a, 0);
        const dgr_trec *cs = bind_slice(w, r->dev2, r->lane2, dst, r->a, 1);
        uint64_t slo, shi, tlo, thi;
        bind_range(ps, src, &slo, &shi);
        bind_range(cs, dst, &tlo, &thi);
        uint64_t s = clamp_u64(src, slo, shi), e = clamp_u64(dst, tlo, thi);
        /* The arrow never points back in time: move both points within
         * their slices; if the slices themselves are in the wrong order
         * (host and device clocks disagree) the arrow is left out. */
        if (e < s)
            s = slo > e ? slo : e;
        if (e < s)
            e = thi < s ? thi : s;
        if (e < s) {
            w->flows_left_out++;
            continue;
        }
        id++;
        flow_event(w, "s", r->a, id, r->dev, r->lane, s, "}");
        flow_event(w, "t", r->a, id, r->dev2, r->lane2, e, ",\"bp\":\"e\"}");
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

/* Lanes used by X and flow events, sorted and unique. */
static int used_lanes(const wctx *w, lane_key **out, size_t *n)
{
    size_t cap = w->nx + 2 * w->nflows;
    lane_key *v = dg_malloc((cap ? cap : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < w->nx; i++) {
        v[k].lane = dgr_trec_lane(w->x[i], &v[k].dev);
        if (k == 0 || v[k].dev != v[k - 1].dev || v[k].lane != v[k - 1].lane)
            k++;
    }
    for (size_t i = 0; i < w->nflows; i++) {
        v[k].dev = w->flows[i]->dev;
        v[k++].lane = w->flows[i]->lane;
        v[k].dev = w->flows[i]->dev2;
        v[k++].lane = w->flows[i]->lane2;
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
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"dgrun_version\":", f);
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
        used_lanes(&w, &lanes, &nl)) {
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
    return st;
}
