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
} wctx;

static void sep(wctx *w)
{
    fputs(w->first ? "\n" : ",\n", w->f);
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

/* ns clamped into slice s so that s.t0 <= ns < s.t1 (viewers close a slice
 * at its end, so a point there would bind to nothing); a zero-length slice
 * gives its start. */
static uint64_t clamp_into(const dgr_trec *s, uint64_t ns)
{
    if (s->t1 <= s->t0 || ns <= s->t0)
        return s->t0;
    return ns < s->t1 ? ns : s->t1 - 1;
}

/* Move ns into a slice of the lane: the innermost slice containing it if
 * any, else (producer side) the last one starting before it, (consumer
 * side) the first one starting after it.  Unchanged if the lane is empty. */
static uint64_t snap(const wctx *w, int dev, int lane, uint64_t ns,
                     int consumer)
{
    size_t lo, hi;
    lane_range(w, dev, lane, &lo, &hi);
    if (lo == hi)
        return ns;
    /* a = one past the last slice with t0 <= ns */
    size_t a = lo, b = hi;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (w->x[m]->t0 <= ns)
            a = m + 1;
        else
            b = m;
    }
    /* Slices on a lane are nested or disjoint: walk back over those that
     * start before ns to find the innermost one that contains it. */
    for (size_t i = a; i > lo && i + 8 > a; i--) {
        const dgr_trec *s = w->x[i - 1];
        if (ns < s->t1 || (ns == s->t1 && !consumer))
            return clamp_into(s, ns);
    }
    if (!consumer)
        return clamp_into(w->x[a > lo ? a - 1 : lo], ns);
    return clamp_into(w->x[a < hi ? a : hi - 1], ns);
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
    char num[32];
    for (size_t i = 0; i < w->nx; i++) {
        const dgr_trec *r = w->x[i];
        int dev, lane = dgr_trec_lane(r, &dev);
        uint64_t ts = dgr_trace_rel(t, r->t0);
        uint64_t dur = r->t1 > r->t0 ? r->t1 - r->t0 : 0;
        sep(w);
        if (r->kind == DGR_TREC_OP) {
            fputs("{\"ph\":\"X\",\"cat\":\"Op\",\"name\":", f);
            put_json_str(f, r->b);
        } else {
            fprintf(f, "{\"ph\":\"X\",\"cat\":\"Memcpy\",\"name\":\"%s\"",
                    dgr_trace_memcpy_name(t, r));
        }
        fprintf(f, ",\"pid\":%d,\"tid\":%d,\"ts\":", dev + 1, lane);
        put_us(f, ts);
        fputs(",\"dur\":", f);
        put_us(f, dur);
        if (r->kind == DGR_TREC_OP) {
            fputs(",\"args\":{\"name\":", f);
            put_json_str(f, r->a);
            fputs(",\"op\":", f);
            put_json_str(f, r->b);
            fprintf(f, ",\"step\":%" PRId64, r->step);
            for (int k = 0; k < r->n_inputs; k++) {
                snprintf(num, sizeof num, ",\"input%d\":", k);
                fputs(num, f);
                put_json_str(f, r->inputs[k]);
            }
            fputs("}}", f);
        } else {
            fprintf(f, ",\"args\":{\"bytes\":%" PRId64 ",\"src_device\":",
                    r->bytes);
            put_json_str(f, t->devs[r->dev].name);
            fputs(",\"dst_device\":", f);
            put_json_str(f, t->devs[r->dev2].name);
            fputs(",\"tensor\":", f);
            put_json_str(f, r->a);
            fprintf(f, ",\"step\":%" PRId64 "}}", r->step);
        }
    }
}

static void write_flows(wctx *w)
{
    FILE *f = w->f;
    for (size_t i = 0; i < w->nflows; i++) {
        const dgr_trec *r = w->flows[i];
        uint64_t s = dgr_trace_rel(w->t, snap(w, r->dev, r->lane, r->t0, 0));
        uint64_t e = dgr_trace_rel(w->t, snap(w, r->dev2, r->lane2, r->t1, 1));
        if (e < s)
            e = s; /* the arrow never points back in time */
        unsigned long long id = (unsigned long long)i + 1;
        sep(w);
        fputs("{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":", f);
        put_json_str(f, r->a);
        fprintf(f, ",\"id\":%llu,\"pid\":%d,\"tid\":%d,\"ts\":", id,
                r->dev + 1, r->lane);
        put_us(f, s);
        fputs("}", f);
        sep(w);
        fputs("{\"ph\":\"t\",\"cat\":\"DataFlow\",\"name\":", f);
        put_json_str(f, r->a);
        fprintf(f, ",\"id\":%llu,\"pid\":%d,\"tid\":%d,\"ts\":", id,
                r->dev2 + 1, r->lane2);
        put_us(f, e);
        fputs(",\"bp\":\"e\"}", f);
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
    write_all(&w, lanes, nl);
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
