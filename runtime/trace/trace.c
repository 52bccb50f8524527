/*
 * trace.c -- the trace recorder: lifecycle, lane names and the lock-free
 * dgr_trace_* recorders called from executor threads (SPEC section 7).
 *
 * Each recording thread appends fixed-size records to its own chunk list
 * (dgr_tbuf), found through a thread-local cache keyed by the trace's unique
 * id; only a full chunk allocates.  The JSON writer is in trace_write.c, the
 * summary in trace_summary.c.
 */
#include "trace_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_alloc.h"
#include "dg_util.h"

_Static_assert(sizeof(dgr_trec) == 64, "trace records are one cache line");

static atomic_ullong next_uid = 1;

static _Thread_local uint64_t tls_uid;
static _Thread_local dgr_tbuf *tls_buf;

dgr_trace *dgr_trace_new(const dg_device_list *devs, const char *graph_path)
{
    dgr_trace *t = dg_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->uid = atomic_fetch_add(&next_uid, 1);
    int n = devs ? dg_devices_count(devs) : 0;
    t->n_devs = n > 0 ? n : 1;
    t->devs = dg_calloc((size_t)t->n_devs, sizeof *t->devs);
    t->graph = dg_strdup(graph_path ? graph_path : "");
    if (!t->devs || !t->graph) {
        dg_free(t->devs);
        dg_free(t->graph);
        dg_free(t);
        return NULL;
    }
    if (n > 0) {
        for (int i = 0; i < n; i++)
            t->devs[i] = *dg_devices_get(devs, i);
    } else {
        snprintf(t->devs[0].name, sizeof t->devs[0].name,
                 "/job:localhost/replica:0/task:0/device:CPU:0");
        t->devs[0].type = DG_DEV_CPU;
    }
    atomic_init(&t->bufs, NULL);
    atomic_init(&t->origin, dg_now_ns());
    atomic_init(&t->dropped, 0);
    atomic_init(&t->next_key, 1);
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void dgr_trace_free(dgr_trace *t)
{
    if (!t)
        return;
    dgr_tbuf *b = atomic_load(&t->bufs);
    while (b) {
        dgr_tbuf *nb = b->next;
        for (dgr_tchunk *c = b->first; c;) {
            dgr_tchunk *nc = c->next;
            dg_free(c);
            c = nc;
        }
        for (dgr_tarena *a = b->arena; a;) {
            dgr_tarena *na = a->next;
            dg_free(a);
            a = na;
        }
        dg_free(b);
        b = nb;
    }
    for (int i = 0; i < t->n_lanes; i++)
        dg_free(t->lanes[i].name);
    dg_free(t->lanes);
    pthread_mutex_destroy(&t->lock);
    dg_free(t->devs);
    dg_free(t->graph);
    dg_free(t);
}

void dgr_trace_lane_name(dgr_trace *t, int device, int lane, const char *name)
{
    if (!t || !name)
        return;
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < t->n_lanes; i++) {
        if (t->lanes[i].device == device && t->lanes[i].lane == lane) {
            char *s = dg_strdup(name);
            if (s) {
                dg_free(t->lanes[i].name);
                t->lanes[i].name = s;
            }
            pthread_mutex_unlock(&t->lock);
            return;
        }
    }
    if (t->n_lanes == t->cap_lanes) {
        int cap = t->cap_lanes ? 2 * t->cap_lanes : 16;
        dgr_tlane_name *nl = dg_realloc(t->lanes, (size_t)cap * sizeof *nl);
        if (!nl) {
            pthread_mutex_unlock(&t->lock);
            return;
        }
        t->lanes = nl;
        t->cap_lanes = cap;
    }
    char *s = dg_strdup(name);
    if (s) {
        t->lanes[t->n_lanes].device = device;
        t->lanes[t->n_lanes].lane = lane;
        t->lanes[t->n_lanes].name = s;
        t->n_lanes++;
    }
    pthread_mutex_unlock(&t->lock);
}

const char *dgr_trace_lane_label(const dgr_trace *t, int device, int lane,
                                 char *buf, size_t n)
{
    for (int i = 0; i < t->n_lanes; i++)
        if (t->lanes[i].device == device && t->lanes[i].lane == lane)
            return t->lanes[i].name;
    if (lane == DGR_LANE_COPY)
        snprintf(buf, n, "copy");
    else if (lane == DGR_LANE_HOST)
        snprintf(buf, n, "host (no kernel)");
    else if (device >= 0 && device < t->n_devs &&
             t->devs[device].type == DG_DEV_GPU)
        snprintf(buf, n, "OpenCL queue %d", lane);
    else
        snprintf(buf, n, "inter-op %d", lane);
    return buf;
}

/* The calling thread's buffer for t, registering a new one if needed. */
static dgr_tbuf *thread_buf(dgr_trace *t)
{
    if (tls_uid == t->uid && tls_buf)
        return tls_buf;
    pthread_t self = pthread_self();
    /* A thread may alternate between traces: look for its buffer first.
     * Buffers of exited threads whose id was reused are safe to adopt. */
    for (dgr_tbuf *b = atomic_load(&t->bufs); b; b = b->next) {
        if (pthread_equal(b->owner, self)) {
            tls_uid = t->uid;
            tls_buf = b;
            return b;
        }
    }
    dgr_tbuf *b = dg_calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->owner = self;
    dgr_tbuf *head = atomic_load(&t->bufs);
    do {
        b->next = head;
    } while (!atomic_compare_exchange_weak(&t->bufs, &head, b));
    tls_uid = t->uid;
    tls_buf = b;
    return b;
}

/* A fresh record slot, or NULL (event dropped and counted). */
static dgr_trec *new_rec(dgr_trace *t, dgr_tbuf **bout)
{
    dgr_tbuf *b = thread_buf(t);
    if (!b) {
        atomic_fetch_add(&t->dropped, 1);
        return NULL;
    }
    *bout = b;
    dgr_tchunk *c = b->cur;
    if (!c || c->n == DGR_TCHUNK_RECS) {
        dgr_tchunk *nc = dg_malloc(sizeof *nc);
        if (!nc) {
            atomic_fetch_add(&t->dropped, 1);
            return NULL;
        }
        nc->next = NULL;
        nc->n = 0;
        if (c)
            c->next = nc;
        else
            b->first = nc;
        b->cur = c = nc;
    }
    dgr_trec *r = &c->recs[c->n];
    memset(r, 0, sizeof *r);
    return r;
}

/* Commit the slot new_rec returned (after it is filled). */
static void commit_rec(dgr_tbuf *b) { b->cur->n++; }

/* Copy s into the thread's arena; NULL on nomem. */
static const char *arena_copy(dgr_tbuf *b, const char *s)
{
    if (!s)
        s = "";
    size_t len = strlen(s) + 1;
    dgr_tarena *a = b->arena;
    if (!a || a->cap - a->used < len) {
        size_t cap = len > DGR_TARENA_BYTES ? len : DGR_TARENA_BYTES;
        dgr_tarena *na = dg_malloc(sizeof *na + cap);
        if (!na)
            return NULL;
        na->used = 0;
        na->cap = cap;
        na->next = a;
        b->arena = a = na;
    }
    char *d = a->data + a->used;
    memcpy(d, s, len);
    a->used += len;
    return d;
}

/* new_rec with `name` copied into the thread's arena as r->a; NULL (event
 * dropped and counted) when either fails. */
static dgr_trec *new_named_rec(dgr_trace *t, dgr_tbuf **bout,
                               const char *name)
{
    dgr_trec *r = new_rec(t, bout);
    if (!r)
        return NULL;
    r->a = arena_copy(*bout, name);
    if (!r->a) {
        atomic_fetch_add(&t->dropped, 1);
        return NULL;
    }
    return r;
}

uint32_t dgr_trace_keys(dgr_trace *t, uint32_t n)
{
    if (!t)
        return 0;
    uint32_t k = atomic_fetch_add(&t->next_key, n);
    if (k == 0 || k + n < k) /* wrapped (4G slices): never hand out 0 */
        k = atomic_fetch_add(&t->next_key, n);
    return k ? k : 1;
}

void dgr_trace_op(dgr_trace *t, int device, int lane, const char *node,
                  const char *op, int64_t step, uint64_t start_ns,
                  uint64_t end_ns, const char *const *inputs, int n_inputs,
                  uint32_t key)
{
    dgr_trace_op_iter(t, device, lane, node, op, step, -1, start_ns, end_ns,
                      inputs, n_inputs, key);
}

void dgr_trace_op_iter(dgr_trace *t, int device, int lane, const char *node,
                       const char *op, int64_t step, int64_t iter,
                       uint64_t start_ns, uint64_t end_ns,
                       const char *const *inputs, int n_inputs, uint32_t key)
{
    if (!t)
        return;
    dgr_tbuf *b;
    dgr_trec *r = new_rec(t, &b);
    if (!r)
        return;
    r->kind = DGR_TREC_OP;
    r->dev = (int16_t)device;
    r->lane = lane;
    r->a = node ? node : "";
    r->b = op ? op : "";
    r->step = step;
    r->t0 = start_ns;
    r->t1 = end_ns < start_ns ? start_ns : end_ns;
    r->inputs = inputs;
    r->key = key;
    r->n_inputs = (int16_t)(inputs && n_inputs > 0
                                ? (n_inputs > 32767 ? 32767 : n_inputs)
                                : 0);
    /* iteration + 1 in 24 bits (saturating) */
    uint32_t it1 = iter < 0 ? 0 : iter >= 0xFFFFFE ? 0xFFFFFF
                                                   : (uint32_t)iter + 1;
    r->iter_hi = (uint8_t)(it1 >> 16);
    r->dev2 = (int16_t)(uint16_t)(it1 & 0xFFFF);
    commit_rec(b);
}

/* A transfer record on `lane` (the copy lane, or a cluster's send/network
 * lane). */
static void memcpy_rec(dgr_trace *t, int src_device, int dst_device, int lane,
                       const char *tensor, int64_t bytes, int64_t step,
                       uint64_t start_ns, uint64_t end_ns, uint32_t key)
{
    if (!t)
        return;
    dgr_tbuf *b;
    dgr_trec *r = new_named_rec(t, &b, tensor);
    if (!r)
        return;
    r->kind = DGR_TREC_MEMCPY;
    r->dev = (int16_t)src_device;
    r->dev2 = (int16_t)dst_device;
    r->lane = lane;
    r->bytes = bytes;
    r->key = key;
    r->step = step;
    r->t0 = start_ns;
    r->t1 = end_ns < start_ns ? start_ns : end_ns;
    commit_rec(b);
}

void dgr_trace_memcpy(dgr_trace *t, int src_device, int dst_device,
                      const char *tensor, int64_t bytes, int64_t step,
                      uint64_t start_ns, uint64_t end_ns, uint32_t key)
{
    memcpy_rec(t, src_device, dst_device, DGR_LANE_COPY, tensor, bytes, step,
               start_ns, end_ns, key);
}

void dgr_trace_memcpy_remote(dgr_trace *t, int src_device, int dst_device,
                             int on_src, const char *tensor, int64_t bytes,
                             int64_t step, uint64_t start_ns,
                             uint64_t end_ns, uint32_t key)
{
    memcpy_rec(t, src_device, dst_device,
               on_src ? DGR_LANE_SEND : DGR_LANE_NET, tensor, bytes, step,
               start_ns, end_ns, key);
}

void dgr_trace_flow(dgr_trace *t, uint32_t src_key, uint32_t dst_key,
                    const char *tensor)
{
    if (!t)
        return;
    dgr_tbuf *b;
    dgr_trec *r = new_named_rec(t, &b, tensor);
    if (!r)
        return;
    r->kind = DGR_TREC_FLOW;
    r->step = src_key;
    r->key = dst_key;
    commit_rec(b);
}

void dgr_trace_memory(dgr_trace *t, int device, uint64_t ns,
                      uint64_t bytes_in_use)
{
    if (!t)
        return;
    dgr_tbuf *b;
    dgr_trec *r = new_rec(t, &b);
    if (!r)
        return;
    r->kind = DGR_TREC_MEM;
    r->dev = (int16_t)device;
    r->t0 = r->t1 = ns;
    r->bytes = (int64_t)bytes_in_use;
    commit_rec(b);
}

void dgr_trace_set_origin(dgr_trace *t, uint64_t ns)
{
    if (t)
        atomic_store(&t->origin, ns);
}

uint64_t dgr_trace_rel(const dgr_trace *t, uint64_t ns)
{
    uint64_t o = atomic_load(&((dgr_trace *)t)->origin);
    return ns > o ? ns - o : 0;
}

void dgr_trace_foreach(const dgr_trace *t, dgr_trec_fn fn, void *arg)
{
    for (dgr_tbuf *b = atomic_load(&((dgr_trace *)t)->bufs); b; b = b->next)
        for (dgr_tchunk *c = b->first; c; c = c->next)
            for (int i = 0; i < c->n; i++)
                fn(&c->recs[i], arg);
}

int dgr_trec_lane(const dgr_trec *r, int *dev)
{
    if (r->kind == DGR_TREC_MEMCPY) {
        *dev = r->lane == DGR_LANE_SEND ? r->dev : r->dev2;
        return r->lane == DGR_LANE_SEND || r->lane == DGR_LANE_NET
                   ? DGR_LANE_NET : DGR_LANE_COPY;
    }
    *dev = r->dev;
    return r->lane;
}

const char *dgr_trace_memcpy_name(const dgr_trace *t, const dgr_trec *r)
{
    if (r->dev >= 0 && r->dev < t->n_devs && r->dev2 >= 0 &&
        r->dev2 < t->n_devs && t->devs[r->dev].rank != t->devs[r->dev2].rank)
        return "MemcpyRemote";
    int s_gpu = r->dev >= 0 && r->dev < t->n_devs &&
                t->devs[r->dev].type == DG_DEV_GPU;
    int d_gpu = r->dev2 >= 0 && r->dev2 < t->n_devs &&
                t->devs[r->dev2].type == DG_DEV_GPU;
    if (!s_gpu && d_gpu)
        return "MemcpyHtoD";
    if (s_gpu && !d_gpu)
        return "MemcpyDtoH";
    return "MemcpyDtoD";
}

/* ---- sorted complete events ------------------------------------------- */

typedef struct xcollect {
    const dgr_trace *t;
    dgr_trec **v;
    size_t n;
} xcollect;

static int x_valid(const dgr_trace *t, const dgr_trec *r)
{
    if (r->kind != DGR_TREC_OP && r->kind != DGR_TREC_MEMCPY)
        return 0;
    int dev;
    dgr_trec_lane(r, &dev);
    return dev >= 0 && dev < t->n_devs;
}

static void x_add(dgr_trec *r, void *arg)
{
    xcollect *c = arg;
    if (x_valid(c->t, r)) {
        if (c->v)
            c->v[c->n] = r;
        c->n++;
    }
}

static int x_cmp(const void *pa, const void *pb)
{
    const dgr_trec *a = *(dgr_trec *const *)pa, *b = *(dgr_trec *const *)pb;
    int da, db;
    int la = dgr_trec_lane(a, &da), lb = dgr_trec_lane(b, &db);
    if (da != db)
        return da < db ? -1 : 1;
    if (la != lb)
        return la < lb ? -1 : 1;
    if (a->t0 != b->t0)
        return a->t0 < b->t0 ? -1 : 1;
    if (a->t1 != b->t1)
        return a->t1 > b->t1 ? -1 : 1; /* longer first: it encloses */
    return a < b ? -1 : (a > b);
}

/* A transfer reading an OpenCL result starts on the host before the
 * producing kernel ends (the read waits for its event): the copy itself
 * starts when its producer's slice ends.  Trimming the wait off keeps the
 * producer's slice starting before its consumer's, which viewers need to
 * draw the arrow the right way (Perfetto orders a flow's ends by their
 * slices' starts). */
typedef struct wait_trim {
    dgr_trec **bykey; /* key -> keyed X record */
    uint32_t nkeys;
} wait_trim;

static void trim_wait(dgr_trec *r, void *arg)
{
    wait_trim *w = arg;
    if (r->kind != DGR_TREC_FLOW)
        return;
    uint32_t pk = (uint32_t)r->step, ck = r->key;
    if (pk >= w->nkeys || ck >= w->nkeys || !w->bykey[pk] || !w->bykey[ck])
        return;
    const dgr_trec *p = w->bykey[pk];
    dgr_trec *c = w->bykey[ck];
    if (c->kind == DGR_TREC_MEMCPY && p->t1 > c->t0 && p->t1 < c->t1)
        c->t0 = p->t1;
}

static void trim_waits(const dgr_trace *t, dgr_trec **v, size_t n)
{
    uint32_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i]->key > max)
            max = v[i]->key;
    if (max == 0)
        return;
    wait_trim w = {dg_calloc((size_t)max + 1, sizeof *w.bykey), max + 1};
    if (!w.bykey)
        return; /* an optional refinement: skip it on nomem */
    for (size_t i = n; i-- > 0;)
        if (v[i]->key)
            w.bykey[v[i]->key] = v[i];
    dgr_trace_foreach(t, trim_wait, &w);
    dg_free(w.bykey);
}

int dgr_trace_sorted_x(const dgr_trace *t, dgr_trec ***out, size_t *n)
{
    xcollect c = {t, NULL, 0};
    dgr_trace_foreach(t, x_add, &c);
    size_t total = c.n;
    c.v = dg_malloc((total ? total : 1) * sizeof *c.v);
    if (!c.v)
        return -1;
    c.n = 0;
    dgr_trace_foreach(t, x_add, &c);
    /* Times below the origin clamp to 0 in the output: clamp here too so
     * that sorting and trimming see what the file will show. */
    uint64_t o = atomic_load(&((dgr_trace *)t)->origin);
    for (size_t i = 0; i < c.n; i++) {
        if (c.v[i]->t0 < o)
            c.v[i]->t0 = o;
        if (c.v[i]->t1 < c.v[i]->t0)
            c.v[i]->t1 = c.v[i]->t0;
    }
    trim_waits(t, c.v, c.n);
    qsort(c.v, c.n, sizeof *c.v, x_cmp);
    /* Nested or disjoint per lane: a stack of open enclosing events; an
     * event that starts inside one but ends after it trims it. */
    enum { DEPTH = 64 };
    dgr_trec *stack[DEPTH];
    int sp = 0, cur_dev = -1, cur_lane = -1;
    for (size_t i = 0; i < c.n; i++) {
        dgr_trec *r = c.v[i];
        int dev, lane = dgr_trec_lane(r, &dev);
        if (dev != cur_dev || lane != cur_lane) {
            sp = 0;
            cur_dev = dev;
            cur_lane = lane;
        }
        while (sp > 0) {
            dgr_trec *p = stack[sp - 1];
            if (p->t1 <= r->t0) {
                sp--; /* disjoint: closed */
            } else if (r->t1 > p->t1) {
                p->t1 = r->t0; /* partial overlap: trim the earlier */
                sp--;
            } else {
                break; /* r nests inside p */
            }
        }
        if (sp < DEPTH)
            stack[sp++] = r;
    }
    *out = c.v;
    *n = c.n;
    return 0;
}
