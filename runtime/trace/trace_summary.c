/*
 * trace_summary.c -- dgr_trace_summary: the text `dgrun profile` prints
 * (SPEC section 7): per device the op count, busy time (union of its op
 * intervals) and utilisation over the run's wall time; transfers per
 * direction (count, bytes, time); the ten nodes and the ten op types with
 * the most total time.  Columns are aligned; times are milliseconds except
 * the per-call averages (microseconds).
 */
#include "trace_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_alloc.h"
#include "dg_util.h"

typedef struct agg {
    const char *key;   /* node name or op type */
    const char *op;    /* op type (node table) */
    int dev;           /* device of the node's first call */
    int64_t calls;
    uint64_t total_ns;
} agg;

typedef struct ival {
    uint64_t t0, t1;
} ival;

static int ival_cmp(const void *pa, const void *pb)
{
    const ival *a = pa, *b = pb;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    return (a->t1 > b->t1) - (a->t1 < b->t1);
}

static int agg_cmp(const void *pa, const void *pb)
{
    const agg *a = pa, *b = pb;
    if (a->total_ns != b->total_ns)
        return a->total_ns > b->total_ns ? -1 : 1;
    return strcmp(a->key, b->key);
}

/* Union length of sorted intervals. */
static uint64_t union_ns(const ival *v, size_t n)
{
    uint64_t busy = 0, cs = 0, ce = 0;
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        if (!open || v[i].t0 > ce) {
            if (open)
                busy += ce - cs;
            cs = v[i].t0;
            ce = v[i].t1;
            open = 1;
        } else if (v[i].t1 > ce) {
            ce = v[i].t1;
        }
    }
    if (open)
        busy += ce - cs;
    return busy;
}

static void add_ms(dg_sbuf *b, int width, uint64_t ns)
{
    dg_sbuf_addf(b, "%*.3f", width, (double)ns / 1e6);
}

/* Short device label "CPU:0" / "GPU:1" for the transfer table. */
static void short_dev(const dgr_trace *t, int d, char *buf, size_t n)
{
    const char *p = strstr(t->devs[d].name, "device:");
    snprintf(buf, n, "%s", p ? p + 7 : t->devs[d].name);
}

/* Aggregate into a map-indexed table; returns 0, -1 nomem. */
static int agg_add(dg_strmap *m, agg *v, size_t *n, const char *key,
                   const char *op, int dev, uint64_t ns)
{
    int32_t i = dg_strmap_get(m, key);
    if (i < 0) {
        i = (int32_t)*n;
        if (dg_strmap_put(m, key, i) < 0)
            return -1;
        v[i].key = key;
        v[i].op = op;
        v[i].dev = dev;
        v[i].calls = 0;
        v[i].total_ns = 0;
        (*n)++;
    }
    v[i].calls++;
    v[i].total_ns += ns;
    return 0;
}

static void top_table(dg_sbuf *b, const dgr_trace *t, const char *title,
                      agg *v, size_t n, int by_node)
{
    qsort(v, n, sizeof *v, agg_cmp);
    size_t show = n < 10 ? n : 10;
    int wk = by_node ? 4 : 2, wo = 2;
    for (size_t i = 0; i < show; i++) {
        int l = (int)strlen(v[i].key);
        if (l > wk)
            wk = l;
        l = (int)strlen(v[i].op);
        if (l > wo)
            wo = l;
    }
    dg_sbuf_addf(b, "\n%s\n", title);
    if (by_node)
        dg_sbuf_addf(b, "  %-*s  %-*s  %-7s", wk, "node", wo, "op", "device");
    else
        dg_sbuf_addf(b, "  %-*s", wk, "op");
    dg_sbuf_addf(b, "  %8s  %12s  %10s\n", "calls", "total ms", "avg us");
    char dev[96];
    for (size_t i = 0; i < show; i++) {
        if (by_node) {
            short_dev(t, v[i].dev, dev, sizeof dev);
            dg_sbuf_addf(b, "  %-*s  %-*s  %-7s", wk, v[i].key, wo, v[i].op,
                         dev);
        } else {
            dg_sbuf_addf(b, "  %-*s", wk, v[i].key);
        }
        dg_sbuf_addf(b, "  %8" PRId64 "  ", v[i].calls);
        add_ms(b, 12, v[i].total_ns);
        dg_sbuf_add(b, "  ");
        dg_sbuf_addf(b, "%10.1f",
                     v[i].calls ? (double)v[i].total_ns / 1e3 /
                                      (double)v[i].calls
                                : 0.0);
        dg_sbuf_add(b, "\n");
    }
}

char *dgr_trace_summary(const dgr_trace *t)
{
    if (!t)
        return NULL;
    dgr_trec **x = NULL;
    size_t nx = 0;
    if (dgr_trace_sorted_x(t, &x, &nx))
        return NULL;
    int nd = t->n_devs;
    size_t npairs = (size_t)nd * (size_t)nd;
    ival *iv = dg_malloc((nx ? nx : 1) * sizeof *iv);
    agg *nodes = dg_malloc((nx ? nx : 1) * sizeof *nodes);
    agg *types = dg_malloc((nx ? nx : 1) * sizeof *types);
    int64_t *xc = dg_calloc(npairs, sizeof *xc);
    int64_t *xb = dg_calloc(npairs, sizeof *xb);
    uint64_t *xt = dg_calloc(npairs, sizeof *xt);
    dg_strmap mn = {0}, mt = {0};
    int map_ok = dg_strmap_init(&mn, 64) == 0;
    map_ok = (dg_strmap_init(&mt, 32) == 0) && map_ok;
    char *out = NULL;
    dg_sbuf b;
    dg_sbuf_init(&b);
    if (!iv || !nodes || !types || !xc || !xb || !xt || !map_ok)
        goto done;

    uint64_t first = UINT64_MAX, last = 0;
    size_t n_nodes = 0, n_types = 0, n_ops = 0;
    int64_t step_lo = INT64_MAX, step_hi = INT64_MIN;
    for (size_t i = 0; i < nx; i++) {
        const dgr_trec *r = x[i];
        if (r->t0 < first)
            first = r->t0;
        if (r->t1 > last)
            last = r->t1;
        if (r->kind == DGR_TREC_OP) {
            n_ops++;
            if (r->step < step_lo)
                step_lo = r->step;
            if (r->step > step_hi)
                step_hi = r->step;
            if (agg_add(&mn, nodes, &n_nodes, r->a, r->b, r->dev,
                        r->t1 - r->t0) ||
                agg_add(&mt, types, &n_types, r->b, r->b, r->dev,
                        r->t1 - r->t0))
                goto done;
        } else {
            size_t k = (size_t)r->dev * (size_t)nd + (size_t)r->dev2;
            if (r->dev >= 0 && r->dev < nd) {
                xc[k]++;
                xb[k] += r->bytes > 0 ? r->bytes : 0;
                xt[k] += r->t1 - r->t0;
            }
        }
    }
    uint64_t wall = nx ? last - first : 0;

    int64_t steps = n_ops ? step_hi - step_lo + 1 : 0;
    dg_sbuf_addf(&b, "Profile: %zu ops, %" PRId64 " step%s", n_ops, steps,
                 steps == 1 ? "" : "s");
    dg_sbuf_add(&b, ", wall time ");
    add_ms(&b, 0, wall);
    dg_sbuf_add(&b, " ms\n\n");

    int wn = 6;
    for (int d = 0; d < nd; d++) {
        int l = (int)strlen(t->devs[d].name);
        if (l > wn)
            wn = l;
    }
    dg_sbuf_addf(&b, "%-*s  %8s  %12s  %7s\n", wn, "device", "ops", "busy ms",
                 "util");
    for (int d = 0; d < nd; d++) {
        size_t k = 0;
        for (size_t i = 0; i < nx; i++)
            if (x[i]->kind == DGR_TREC_OP && x[i]->dev == d) {
                iv[k].t0 = x[i]->t0;
                iv[k].t1 = x[i]->t1;
                k++;
            }
        qsort(iv, k, sizeof *iv, ival_cmp);
        uint64_t busy = union_ns(iv, k);
        double util = wall ? 100.0 * (double)busy / (double)wall : 0.0;
        dg_sbuf_addf(&b, "%-*s  %8zu  ", wn, t->devs[d].name, k);
        add_ms(&b, 12, busy);
        dg_sbuf_addf(&b, "  %6.1f%%\n", util);
    }

    int64_t tc = 0, tb = 0;
    uint64_t tt = 0;
    dg_sbuf_addf(&b, "\n%-*s  %8s  %12s  %12s\n", 16, "transfers", "count",
                 "bytes", "time ms");
    char s1[96], s2[96], lab[200];
    for (int s = 0; s < nd; s++)
        for (int d = 0; d < nd; d++) {
            size_t k = (size_t)s * (size_t)nd + (size_t)d;
            if (!xc[k])
                continue;
            short_dev(t, s, s1, sizeof s1);
            short_dev(t, d, s2, sizeof s2);
            snprintf(lab, sizeof lab, "%s -> %s", s1, s2);
            dg_sbuf_addf(&b, "%-*s  %8" PRId64 "  %12" PRId64 "  ", 16, lab,
                         xc[k], xb[k]);
            add_ms(&b, 12, xt[k]);
            dg_sbuf_add(&b, "\n");
            tc += xc[k];
            tb += xb[k];
            tt += xt[k];
        }
    dg_sbuf_addf(&b, "%-*s  %8" PRId64 "  %12" PRId64 "  ", 16, "total", tc,
                 tb);
    add_ms(&b, 12, tt);
    dg_sbuf_add(&b, "\n");

    if (n_nodes) {
        top_table(&b, t, "top ops by total time (per node)", nodes, n_nodes, 1);
        top_table(&b, t, "top op types by total time", types, n_types, 0);
    }
    unsigned long dropped = atomic_load(&((dgr_trace *)t)->dropped);
    if (dropped)
        dg_sbuf_addf(&b, "\nwarning: %lu events were not recorded (out of "
                         "memory)\n", dropped);
    out = dg_sbuf_take(&b);
done:
    if (!out)
        dg_sbuf_free(&b);
    dg_strmap_free(&mn);
    dg_strmap_free(&mt);
    dg_free(x);
    dg_free(iv);
    dg_free(nodes);
    dg_free(types);
    dg_free(xc);
    dg_free(xb);
    dg_free(xt);
    return out;
}
