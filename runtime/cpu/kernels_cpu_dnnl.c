/*
 * kernels_cpu_dnnl.c -- oneDNN primitives for the CPU convolution and
 * pooling kernels (see kernels_cpu_dnnl.h).
 *
 * Memory descriptors are made by strides straight from TF's layouts (NHWC
 * or NCHW activations, HWIO filters, HW I M depthwise filters as groups), so
 * activations are never reordered.  Each (operation, geometry) gets its
 * primitive once, kept in a process-wide list; a filter that is a Const is
 * reordered into the primitive's layout once per device (session) and
 * kept; streams, scratchpads and memory objects (their data handles set
 * per call) are per thread, made once (issue 23).
 *
 * Threads and determinism (issue 19): oneDNN's multi-threaded primitives
 * split their work by the OpenMP team size, and their float results change
 * with it (backward weights sums per-thread partial filters; MobileNetV2's
 * batch-1 forward output differs in its last bits between teams of 1 and
 * 2).  So every primitive call runs on one OpenMP thread (the team of a
 * thread outside these calls is 1 too: cpu_gemm.c's dnnl_sgemm blocks
 * rely on it), and the mini-batch is cut into blocks of a fixed number of
 * images, a function of the geometry alone, spread over dgrun's intra-op
 * pool; backward weights writes one partial filter per block and adds them
 * in block order.  The results are the same bits for every thread count.
 * OpenMP waits passively (cpu_lazy.c).
 */
#include "kernels_cpu_dnnl.h"
#include "cpu_backend.h"
#include "dg_alloc.h"
#include "threadpool.h"

#include <pthread.h>
#include <string.h>

#ifdef DGR_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

typedef struct prim {
    int what, dw;
    dgc_nn_geom g;
    dgr_post post;               /* CONV_FWD's epilogue (zero: none) */
    dnnl_primitive_t p, fwd;     /* fwd: MaxPoolGrad's forward with workspace */
    dnnl_memory_desc_t md[4];    /* a, b, out, workspace */
    dnnl_memory_desc_t bmd;      /* the fused bias [OC] */
    size_t scratch, scratch_fwd, ws;
    /* convolutions: the filter layout oneDNN chose (format "any", so its
     * fast jit/brgemm kernels apply) when it is not TF's; ro reorders
     * between TF's layout (wmd) and it (pmd) on every call */
    dnnl_primitive_t ro;
    dnnl_memory_desc_t wmd, pmd;
    size_t wbytes;
    struct prim *next;
} prim;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static dnnl_engine_t engine;
static prim *cache;

static void engine_init(void)
{
    if (!dgr_dnnl_lib_open() ||
        dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        engine = NULL;
}

int dgr_dnnl_available(void)
{
    pthread_once(&once, engine_init);
    return engine != NULL;
}

/* activation md: logical {N, C, H, W} */
static void act_md(dnnl_memory_desc_t *md, const dgc_nn_geom *g, int64_t H,
                   int64_t W, int64_t C)
{
    dnnl_dims_t d = {g->N, C, H, W}, s;
    if (g->nchw) {
        s[0] = C * H * W; s[1] = H * W; s[2] = W; s[3] = 1;
    } else {
        s[0] = H * W * C; s[1] = 1; s[2] = W * C; s[3] = C;
    }
    dnnl_memory_desc_init_by_strides(md, 4, d, dnnl_f32, s);
}

/* filter md from TF's [KH, KW, C, OC] or depthwise [KH, KW, C, mult] */
static void wei_md(dnnl_memory_desc_t *md, const dgc_nn_geom *g, int dw)
{
    if (dw) {
        dnnl_dims_t d = {g->C, g->mult, 1, g->KH, g->KW};
        dnnl_dims_t s = {g->mult, 1, g->mult, g->KW * g->C * g->mult,
                         g->C * g->mult};
        dnnl_memory_desc_init_by_strides(md, 5, d, dnnl_f32, s);
    } else {
        dnnl_dims_t d = {g->OC, g->C, g->KH, g->KW};
        dnnl_dims_t s = {1, g->OC, g->KW * g->C * g->OC, g->C * g->OC};
        dnnl_memory_desc_init_by_strides(md, 4, d, dnnl_f32, s);
    }
}

static size_t scratch_of(dnnl_primitive_desc_t pd)
{
    const dnnl_memory_desc_t *m =
        dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    return m ? dnnl_memory_desc_get_size(m) : 0;
}

/* Create primitive of pd (destroyed after). 0 ok. */
static int make(dnnl_primitive_desc_t pd, dnnl_primitive_t *out, size_t *sc)
{
    *sc = scratch_of(pd);
    int rc = dnnl_primitive_create(out, pd) == dnnl_success ? 0 : -1;
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/* After a convolution primitive P->p is made: when its filter (diff
 * filter for BWD_W) layout is not TF's, a reorder between the two.  0 ok. */
static int filter_reorder(prim *P)
{
    const_dnnl_primitive_desc_t pd;
    if (dnnl_primitive_get_primitive_desc(P->p, &pd) != dnnl_success)
        return -1;
    int bwd_w = P->what == DGR_DNNL_CONV_BWD_W;
    const dnnl_memory_desc_t *m = dnnl_primitive_desc_query_md(
        pd, bwd_w ? dnnl_query_diff_weights_md : dnnl_query_weights_md, 0);
    if (!m)
        return -1;
    if (dnnl_memory_desc_equal(m, &P->wmd))
        return 0;
    P->pmd = *m;
    P->wbytes = dnnl_memory_desc_get_size(m);
    dnnl_primitive_desc_t rpd;
    if (dnnl_reorder_primitive_desc_create(
            &rpd, bwd_w ? &P->pmd : &P->wmd, engine,
            bwd_w ? &P->wmd : &P->pmd, engine, NULL) != dnnl_success)
        return -1;
    size_t sc;
    return make(rpd, &P->ro, &sc);
}

/* The sum and eltwise post-ops of a fused convolution on attr.  0 ok. */
static int set_post(dnnl_primitive_attr_t attr, const dgr_post *p)
{
    if (!p->sum && !p->act)
        return 0;
    dnnl_post_ops_t po;
    if (dnnl_post_ops_create(&po) != dnnl_success)
        return -1;
    int bad = p->sum && dnnl_post_ops_append_sum(po, 1.0f) != dnnl_success;
    static const dnnl_alg_kind_t alg[] = {
        dnnl_alg_kind_undef, dnnl_eltwise_relu,     dnnl_eltwise_bounded_relu,
        dnnl_eltwise_elu,    dnnl_eltwise_relu,     dnnl_eltwise_logistic,
        dnnl_eltwise_swish};
    float a = p->act == DGR_ACT_RELU6 ? 6.0f
              : p->act == DGR_ACT_ELU ? 1.0f
              : p->act == DGR_ACT_LEAKY || p->act == DGR_ACT_SWISH ? p->alpha
                                                                   : 0.0f;
    if (!bad && p->act)
        bad = dnnl_post_ops_append_eltwise(po, 1.0f, alg[p->act], a, 0.0f) !=
              dnnl_success;
    if (!bad)
        bad = dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success;
    dnnl_post_ops_destroy(po);
    return bad ? -1 : 0;
}

static int build(prim *P)
{
    const dgc_nn_geom *g = &P->g;
    dnnl_primitive_attr_t attr;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success)
        return -1;
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (set_post(attr, &P->post)) {
        dnnl_primitive_attr_destroy(attr);
        return -1;
    }
    dnnl_memory_desc_t x, y, w;
    if (P->what == DGR_DNNL_GELU || P->what == DGR_DNNL_SOFTMAX) {
        /* rows x cols, row-major (g->N, g->C) */
        dnnl_dims_t d = {g->N, g->C};
        dnnl_memory_desc_init_by_tag(&x, 2, d, dnnl_f32, dnnl_ab);
        dnnl_eltwise_desc_t ed;
        dnnl_softmax_desc_t sd;
        dnnl_primitive_desc_t rpd = NULL;
        int ok = P->what == DGR_DNNL_GELU
                     ? dnnl_eltwise_forward_desc_init(
                           &ed, dnnl_forward_inference, dnnl_eltwise_gelu_erf,
                           &x, 0.0f, 0.0f) == dnnl_success &&
                           dnnl_primitive_desc_create(&rpd, &ed, attr, engine,
                                                      NULL) == dnnl_success
                     : dnnl_softmax_forward_desc_init(
                           &sd, dnnl_forward_inference, &x, 1) ==
                               dnnl_success &&
                           dnnl_primitive_desc_create(&rpd, &sd, attr, engine,
                                                      NULL) == dnnl_success;
        P->md[0] = P->md[2] = x;
        int rc = ok ? make(rpd, &P->p, &P->scratch) : -1;
        dnnl_primitive_attr_destroy(attr);
        return rc;
    }
    act_md(&x, g, g->H, g->W, g->C);
    act_md(&y, g, g->OH, g->OW, g->OC);
    dnnl_dims_t st = {g->sh, g->sw}, dil = {g->dh - 1, g->dw - 1},
                pl = {g->pt, g->pl}, pr = {g->pb, g->pr},
                ker = {g->KH, g->KW}, nodil = {0, 0};
    dnnl_primitive_desc_t fpd = NULL, pd = NULL;
    int rc = -1;
    if (P->what <= DGR_DNNL_CONV_BWD_W) {
        wei_md(&P->wmd, g, P->dw);
        dnnl_memory_desc_init_by_tag(&w, P->wmd.ndims, P->wmd.dims, dnnl_f32,
                                     dnnl_format_tag_any);
        dnnl_convolution_desc_t fd, bd;
        dnnl_dims_t bd_dims = {g->OC};
        dnnl_memory_desc_init_by_tag(&P->bmd, 1, bd_dims, dnnl_f32, dnnl_a);
        /* a fused convolution runs forward only (inference); the plain
         * one is the backward passes' hint too */
        if (dnnl_dilated_convolution_forward_desc_init(
                &fd, P->post.bias ? dnnl_forward_inference
                                  : dnnl_forward_training,
                dnnl_convolution_direct, &x, &w,
                P->post.bias ? &P->bmd : NULL, &y, st, dil, pl, pr) !=
                dnnl_success ||
            dnnl_primitive_desc_create(&fpd, &fd, attr, engine, NULL) !=
                dnnl_success)
            goto out;
        if (P->what == DGR_DNNL_CONV_FWD) {
            P->md[0] = x; P->md[1] = P->wmd; P->md[2] = y;
            rc = make(fpd, &P->p, &P->scratch) || filter_reorder(P);
            fpd = NULL;
            goto out;
        }
        if (P->what == DGR_DNNL_CONV_BWD_D) {
            P->md[0] = y; P->md[1] = P->wmd; P->md[2] = x;
            if (dnnl_dilated_convolution_backward_data_desc_init(
                    &bd, dnnl_convolution_direct, &x, &w, &y, st, dil, pl,
                    pr) != dnnl_success)
                goto out;
        } else {
            P->md[0] = x; P->md[1] = y; P->md[2] = P->wmd;
            if (dnnl_dilated_convolution_backward_weights_desc_init(
                    &bd, dnnl_convolution_direct, &x, &w, NULL, &y, st, dil,
                    pl, pr) != dnnl_success)
                goto out;
        }
        if (dnnl_primitive_desc_create(&pd, &bd, attr, engine, fpd) !=
            dnnl_success)
            goto out;
        rc = make(pd, &P->p, &P->scratch) || filter_reorder(P);
        goto out;
    }
    int max = P->what == DGR_DNNL_MAXPOOL || P->what == DGR_DNNL_MAXPOOL_BWD;
    dnnl_alg_kind_t alg = max ? dnnl_pooling_max
                              : dnnl_pooling_avg_exclude_padding;
    int bwd = P->what == DGR_DNNL_MAXPOOL_BWD ||
              P->what == DGR_DNNL_AVGPOOL_BWD;
    dnnl_pooling_v2_desc_t fd, bd;
    if (dnnl_pooling_v2_forward_desc_init(
            &fd, bwd ? dnnl_forward_training : dnnl_forward_inference, alg,
            &x, &y, st, ker, nodil, pl, pr) != dnnl_success ||
        dnnl_primitive_desc_create(&fpd, &fd, attr, engine, NULL) !=
            dnnl_success)
        goto out;
    if (!bwd) {
        P->md[0] = x; P->md[2] = y;
        rc = make(fpd, &P->p, &P->scratch);
        fpd = NULL;
        goto out;
    }
    if (max) {
        const dnnl_memory_desc_t *ws =
            dnnl_primitive_desc_query_md(fpd, dnnl_query_workspace_md, 0);
        if (!ws)
            goto out;
        P->md[3] = *ws;
        P->ws = dnnl_memory_desc_get_size(ws);
        dnnl_primitive_desc_t c;
        if (dnnl_primitive_desc_clone(&c, fpd) != dnnl_success ||
            make(c, &P->fwd, &P->scratch_fwd))
            goto out;
        P->md[0] = x; P->md[1] = y; P->md[2] = x;
    } else {
        P->md[0] = y; P->md[2] = x;
    }
    if (dnnl_pooling_v2_backward_desc_init(&bd, alg, &x, &y, st, ker, nodil,
                                           pl, pr) != dnnl_success ||
        dnnl_primitive_desc_create(&pd, &bd, attr, engine, fpd) !=
            dnnl_success)
        goto out;
    rc = make(pd, &P->p, &P->scratch);
out:
    if (fpd)
        dnnl_primitive_desc_destroy(fpd);
    dnnl_primitive_attr_destroy(attr);
    return rc;
}

/* The cached primitive for (what, g, dw); NULL when oneDNN has none.  The
 * calling thread's OpenMP team size must be 1 (oneDNN sizes the
 * primitive's work split by it). */
static prim *lookup(int what, const dgc_nn_geom *g, int dw,
                    const dgr_post *post, int *nomem)
{
    static const dgr_post none;
    if (!post)
        post = &none;
    pthread_mutex_lock(&lock);
    prim *P;
    for (P = cache; P; P = P->next)
        if (P->what == what && P->dw == dw && !memcmp(&P->g, g, sizeof *g) &&
            !memcmp(&P->post, post, sizeof *post))
            break;
    if (!P) {
        P = dg_calloc(1, sizeof *P);
        if (!P) {
            *nomem = 1;
        } else {
            P->what = what;
            P->dw = dw;
            P->g = *g;
            P->post = *post;
            if (build(P)) { /* remembered as unsupported: p stays NULL */
                if (P->p)
                    dnnl_primitive_destroy(P->p);
                if (P->fwd)
                    dnnl_primitive_destroy(P->fwd);
                if (P->ro)
                    dnnl_primitive_destroy(P->ro);
                P->p = P->fwd = P->ro = NULL;
            }
            P->next = cache;
            cache = P;
        }
    }
    pthread_mutex_unlock(&lock);
    return P && P->p ? P : NULL;
}

/* ---- per-thread stream, scratchpad and memory objects -------------------- */

/* A memory object of this thread for operand `slot` of primitive p; its
 * data handle is set to the operand's buffer on each call (creating one per
 * call cost ~5% of a batch-1 run's instructions). */
typedef struct tmem {
    const void *p;
    int slot;
    dnnl_memory_t m;
} tmem;

typedef struct tstate {
    dnnl_stream_t stream;
    void *scratch;
    size_t scratch_n;
    tmem *mem;           /* open addressing, n_mem slots (a power of 2) */
    size_t n_mem, used;
} tstate;

static pthread_key_t ts_key;
static int ts_key_ok;
static pthread_once_t ts_once = PTHREAD_ONCE_INIT;

static void ts_free(void *arg)
{
    tstate *t = arg;
    for (size_t i = 0; i < t->n_mem; i++)
        if (t->mem[i].m)
            dnnl_memory_destroy(t->mem[i].m);
    dg_free(t->mem);
    if (t->stream)
        dnnl_stream_destroy(t->stream);
    dg_free(t->scratch);
    dg_free(t);
}

static void ts_key_init(void)
{
    ts_key_ok = pthread_key_create(&ts_key, ts_free) == 0;
}

/* The calling thread's state (stream made), NULL when out of memory. */
static tstate *ts_get(void)
{
    pthread_once(&ts_once, ts_key_init);
    if (!ts_key_ok)
        return NULL;
    tstate *t = pthread_getspecific(ts_key);
    if (t)
        return t;
    if (!(t = dg_calloc(1, sizeof *t)))
        return NULL;
    if (dnnl_stream_create(&t->stream, engine, dnnl_stream_default_flags) !=
            dnnl_success ||
        pthread_setspecific(ts_key, t)) {
        ts_free(t);
        return NULL;
    }
    return t;
}

static size_t tm_hash(const void *p, int slot, size_t n)
{
    uintptr_t h = (uintptr_t)p * 0x9E3779B97F4A7C15ull + (uintptr_t)slot;
    return (size_t)(h ^ (h >> 29)) & (n - 1);
}

/* The thread's memory object for (p, slot) with descriptor md (the same
 * for a given p and slot), pointing at ptr.  NULL when out of memory. */
static dnnl_memory_t tm(tstate *t, const void *p, int slot,
                        const dnnl_memory_desc_t *md, void *ptr)
{
    if (2 * (t->used + 1) > t->n_mem) { /* grow: rehash */
        size_t n = t->n_mem ? 2 * t->n_mem : 64;
        tmem *nm = dg_calloc(n, sizeof *nm);
        if (!nm)
            return NULL;
        for (size_t i = 0; i < t->n_mem; i++)
            if (t->mem[i].m) {
                size_t j = tm_hash(t->mem[i].p, t->mem[i].slot, n);
                while (nm[j].m)
                    j = (j + 1) & (n - 1);
                nm[j] = t->mem[i];
            }
        dg_free(t->mem);
        t->mem = nm;
        t->n_mem = n;
    }
    size_t j = tm_hash(p, slot, t->n_mem);
    while (t->mem[j].m && (t->mem[j].p != p || t->mem[j].slot != slot))
        j = (j + 1) & (t->n_mem - 1);
    tmem *e = &t->mem[j];
    if (e->m)
        return dnnl_memory_set_data_handle(e->m, ptr) == dnnl_success ? e->m
                                                                       : NULL;
    if (dnnl_memory_create(&e->m, md, engine, ptr) != dnnl_success) {
        e->m = NULL;
        return NULL;
    }
    e->p = p;
    e->slot = slot;
    t->used++;
    return e->m;
}

/* Execute p on the thread's stream, with a scratchpad of `scratch` bytes
 * from the thread's buffer (args has room for it).  0 ok. */
static int exec(tstate *t, dnnl_primitive_t p, dnnl_exec_arg_t *args, int n,
                size_t scratch)
{
    if (scratch) {
        if (scratch > t->scratch_n) {
            dg_free(t->scratch);
            t->scratch_n = 0;
            if (!(t->scratch = dg_malloc(scratch)))
                return -1;
            t->scratch_n = scratch;
        }
        const_dnnl_primitive_desc_t pd;
        dnnl_primitive_get_primitive_desc(p, &pd);
        dnnl_memory_t sm = tm(t, p, 9, dnnl_primitive_desc_query_md(
                                  pd, dnnl_query_scratchpad_md, 0),
                              t->scratch);
        if (!sm)
            return -1;
        args[n].arg = DNNL_ARG_SCRATCHPAD;
        args[n++].memory = sm;
    }
    if (dnnl_primitive_execute(p, t->stream, n, args) != dnnl_success ||
        dnnl_stream_wait(t->stream) != dnnl_success)
        return -1;
    return 0;
}

/* ---- Const filters reordered once per device ----------------------------- */

/* A Const filter's reordered copy for primitive P, kept until the device
 * closes: keyed by (device, consumer node, P); the node's filter is the
 * same Const value every run. */
typedef struct wkeep {
    const void *dev, *node;
    const prim *P;
    void *w;
    struct wkeep *next;
} wkeep;

static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static wkeep *wkept;

static void *wkeep_get(const void *dev, const void *node, const prim *P)
{
    void *w = NULL;
    pthread_mutex_lock(&wlock);
    for (wkeep *e = wkept; e; e = e->next)
        if (e->dev == dev && e->node == node && e->P == P) {
            w = e->w;
            break;
        }
    pthread_mutex_unlock(&wlock);
    return w;
}

/* Keep w for later calls: 1 when the list owns it from now on, 0 when
 * not (out of memory, or another thread kept a copy first): the caller
 * frees it after the call. */
static int wkeep_put(const void *dev, const void *node, const prim *P,
                     void *w)
{
    wkeep *e = dg_calloc(1, sizeof *e);
    if (!e)
        return 0;
    pthread_mutex_lock(&wlock);
    for (wkeep *o = wkept; o; o = o->next)
        if (o->dev == dev && o->node == node && o->P == P) {
            pthread_mutex_unlock(&wlock);
            dg_free(e);
            return 0;
        }
    e->dev = dev;
    e->node = node;
    e->P = P;
    e->w = w;
    e->next = wkept;
    wkept = e;
    pthread_mutex_unlock(&wlock);
    return 1;
}

void dgr_dnnl_close(const dgr_device *d)
{
    wkeep *drop = NULL;
    pthread_mutex_lock(&wlock);
    for (wkeep **pp = &wkept; *pp;) {
        wkeep *e = *pp;
        if (e->dev == d) {
            *pp = e->next;
            e->next = drop;
            drop = e;
        } else {
            pp = &e->next;
        }
    }
    pthread_mutex_unlock(&wlock);
    while (drop) {
        wkeep *nx = drop->next;
        dg_free(drop->w);
        dg_free(drop);
        drop = nx;
    }
}

/* ---- running ------------------------------------------------------------- */

/* One primitive call on one OpenMP thread; (kdev, knode): where a Const
 * filter's reordered copy is kept, or NULL. */
static int run_one(int what, const dgc_nn_geom *g, int depthwise,
                   const float *a, const float *b, float *out,
                   const void *kdev, const void *knode, const dgr_fused *f)
{
    pthread_once(&once, engine_init);
    if (!engine)
        return 1;
    tstate *t = ts_get();
    if (!t)
        return -1;
    /* one thread for making and running the primitive (the header
     * comment); set on every call since a library may change it */
    omp_set_num_threads(1);
    int nomem = 0;
    prim *P = lookup(what, g, depthwise, f ? &f->kind : NULL, &nomem);
    if (!P)
        return nomem ? -1 : 1;
    dnnl_memory_t m[4] = {NULL, NULL, NULL, NULL};
    void *ws = NULL;
    int rc = -1;
    int has_b = what <= DGR_DNNL_CONV_BWD_W || what == DGR_DNNL_MAXPOOL_BWD;
    /* the filter operand in the primitive's layout: b for FWD / BWD_D
     * reordered in (or the kept copy of a Const b), out for BWD_W
     * reordered out after */
    void *wb = NULL, *wkeep = NULL;
    dnnl_memory_t wm = NULL;
    if (P->ro) {
        if (knode && what != DGR_DNNL_CONV_BWD_W)
            wkeep = wkeep_get(kdev, knode, P);
        if (wkeep) {
            if (!(wm = tm(t, P, 4, &P->pmd, wkeep)))
                goto done;
        } else {
            if (!(wb = dg_malloc(P->wbytes + 1)) ||
                !(wm = tm(t, P, 4, &P->pmd, wb)))
                goto done;
            if (what != DGR_DNNL_CONV_BWD_W) {
                dnnl_memory_t um = tm(t, P, 5, &P->wmd, (void *)b);
                if (!um)
                    goto done;
                dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, um},
                                         {DNNL_ARG_TO, wm}};
                int rrc = exec(t, P->ro, ra, 2, 0);
                if (rrc)
                    goto done;
                if (knode && wkeep_put(kdev, knode, P, wb))
                    wb = NULL; /* the list owns it now */
            }
        }
    }
    if (!(m[0] = tm(t, P, 0, &P->md[0], (void *)a)) ||
        (has_b && !(m[1] = tm(t, P, 1, &P->md[1], (void *)b))) ||
        !(m[2] = tm(t, P, 2, &P->md[2], out)))
        goto done;
    dnnl_exec_arg_t args[6];
    int n = 0;
    switch (what) {
    case DGR_DNNL_CONV_FWD:
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, m[0]};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, wm ? wm : m[1]};
        args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, m[2]};
        n = 3;
        if (f && f->kind.bias) {
            dnnl_memory_t bm = tm(t, P, 7, &P->bmd, (void *)f->bias);
            if (!bm)
                goto done;
            args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, bm};
        }
        /* the sum post-op adds what dst holds: the residual */
        if (f && f->kind.sum && f->side != out)
            memcpy(out, f->side,
                   sizeof *out * (size_t)(g->N * g->OH * g->OW * g->OC));
        break;
    case DGR_DNNL_CONV_BWD_D:
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, m[0]};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, wm ? wm : m[1]};
        args[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_SRC, m[2]};
        n = 3;
        break;
    case DGR_DNNL_CONV_BWD_W:
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, m[0]};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, m[1]};
        args[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_WEIGHTS, wm ? wm : m[2]};
        n = 3;
        break;
    case DGR_DNNL_MAXPOOL:
    case DGR_DNNL_AVGPOOL:
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC, m[0]};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_DST, m[2]};
        n = 2;
        break;
    case DGR_DNNL_AVGPOOL_BWD:
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, m[0]};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_SRC, m[2]};
        n = 2;
        break;
    case DGR_DNNL_MAXPOOL_BWD: {
        /* the forward pass again, for its workspace (the argmax) */
        float *y = dg_malloc(sizeof *y * (size_t)(g->N * g->OH * g->OW *
                                                  g->C) + 1);
        dnnl_memory_t ym = NULL;
        ws = dg_malloc(P->ws + 1);
        if (!y || !ws || !(ym = tm(t, P, 6, &P->md[1], y)) ||
            !(m[3] = tm(t, P, 3, &P->md[3], ws))) {
            dg_free(y);
            goto done;
        }
        dnnl_exec_arg_t fa[4] = {{DNNL_ARG_SRC, m[0]}, {DNNL_ARG_DST, ym},
                                 {DNNL_ARG_WORKSPACE, m[3]}};
        int frc = exec(t, P->fwd, fa, 3, P->scratch_fwd);
        dg_free(y);
        if (frc)
            goto done;
        args[0] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, m[1]};
        args[1] = (dnnl_exec_arg_t){DNNL_ARG_WORKSPACE, m[3]};
        args[2] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_SRC, m[2]};
        n = 3;
        break;
    }
    default:
        goto done;
    }
    rc = exec(t, P->p, args, n, P->scratch);
    if (!rc && wm && what == DGR_DNNL_CONV_BWD_W) {
        dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, wm}, {DNNL_ARG_TO, m[2]}};
        rc = exec(t, P->ro, ra, 2, 0);
    }
done:
    dg_free(wb);
    dg_free(ws);
    return rc == 0 ? 0 : 1;
}

/* ---- fixed mini-batch blocks (issue 19) --------------------------------
 * oneDNN's multi-threaded primitives split their work by the thread count
 * (backward weights sums per-thread partial filters), so their float
 * results change with --intra-op-threads.  Instead the mini-batch is cut
 * into blocks of a fixed number of images (a function of the geometry
 * only), each block one primitive call on one thread, the blocks spread
 * over the intra-op pool; backward weights writes one partial filter per
 * block and the partials are added in block order. */

typedef struct mb_job {
    int what, dw;
    const dgc_nn_geom *g;
    const float *a, *b;
    float *out;
    int64_t a_img, b_img, out_img; /* floats per image (0: not per image) */
    float *part;                   /* BWD_W: one filter per block */
    const void *kdev, *knode;      /* a Const filter's keeper, or NULL */
    const dgr_fused *f;            /* CONV_FWD's epilogue, or NULL */
    int64_t wsize;
    int *rc;                       /* per block */
} mb_job;

static void mb_block(void *arg, int64_t blk, int64_t n0, int64_t n1)
{
    const mb_job *j = arg;
    dgc_nn_geom gb = *j->g;
    gb.N = n1 - n0;
    float *o = j->part ? j->part + blk * j->wsize : j->out + n0 * j->out_img;
    dgr_fused f;
    if (j->f) { /* the block's residual */
        f = *j->f;
        if (f.side)
            f.side += n0 * j->out_img;
    }
    j->rc[blk] = run_one(j->what, &gb, j->dw, j->a + n0 * j->a_img,
                         j->b ? j->b + n0 * j->b_img : NULL, o, j->kdev,
                         j->knode, j->f ? &f : NULL);
}

/* Multiply-adds per block below which a block does not pay its call, and
 * the most blocks (each call reorders the filter and runs a smaller
 * problem: LeNet at batch 64 single-threaded cost +15-20% CPU with
 * blocks of 2^21 multiply-adds, 16-64 calls per op). */
#define MB_BLOCK_WORK (1 << 22)
#define MB_MAX_BLOCKS 4

/* dgr_dnnl_run with a Const filter's keeper (kdev, knode) or NULL. */
static int run_blocks(struct dgr_pool *pool, int what, const dgc_nn_geom *g,
                      int depthwise, const float *a, const float *b,
                      float *out, const void *kdev, const void *knode,
                      const dgr_fused *f)
{
    if (g->groups > 1) /* grouped Conv2D: the callers' loops */
        return 1;
    int64_t x_img = g->H * g->W * g->C, y_img = g->OH * g->OW * g->OC;
    int conv = what <= DGR_DNNL_CONV_BWD_W;
    int64_t per_img = g->OH * g->OW * g->KH * g->KW *
                      (conv ? g->OC * (depthwise ? 1 : g->C) : g->C);
    int64_t blk = per_img > 0 ? (MB_BLOCK_WORK + per_img - 1) / per_img : 1;
    if (blk < (g->N + MB_MAX_BLOCKS - 1) / MB_MAX_BLOCKS)
        blk = (g->N + MB_MAX_BLOCKS - 1) / MB_MAX_BLOCKS;
    if (blk > g->N)
        blk = g->N;
    int64_t nb = dgr_blocks(g->N, blk);
    if (nb <= 1)
        return run_one(what, g, depthwise, a, b, out, kdev, knode, f);
    mb_job j = {.what = what, .dw = depthwise, .g = g, .a = a, .b = b,
                .out = out, .kdev = kdev, .knode = knode, .f = f};
    switch (what) {
    case DGR_DNNL_CONV_FWD: /* x, filter -> y */
        j.a_img = x_img; j.out_img = y_img; break;
    case DGR_DNNL_CONV_BWD_D: /* dy, filter -> dx */
        j.a_img = y_img; j.out_img = x_img; break;
    case DGR_DNNL_CONV_BWD_W: /* x, dy -> dfilter */
        j.a_img = x_img; j.b_img = y_img; break;
    case DGR_DNNL_MAXPOOL: case DGR_DNNL_AVGPOOL: /* x -> y */
        j.a_img = x_img; j.out_img = y_img; break;
    case DGR_DNNL_MAXPOOL_BWD: /* x, dy -> dx */
        j.a_img = x_img; j.b_img = y_img; j.out_img = x_img; break;
    case DGR_DNNL_AVGPOOL_BWD: /* dy -> dx */
        j.a_img = y_img; j.out_img = x_img; break;
    default:
        return 1;
    }
    int rcs_local[64];
    int *rcs = nb <= 64 ? rcs_local : dg_malloc(sizeof *rcs * (size_t)nb);
    if (!rcs)
        return -1;
    j.rc = rcs;
    if (what == DGR_DNNL_CONV_BWD_W) {
        j.wsize = g->KH * g->KW * g->C * (depthwise ? g->mult : g->OC);
        j.part = dg_malloc(sizeof *j.part * (size_t)(j.wsize * nb) + 1);
        if (!j.part) {
            if (rcs != rcs_local)
                dg_free(rcs);
            return -1;
        }
    }
    dgr_parallel_blocks(pool, g->N, blk, mb_block, &j);
    int rc = 0;
    for (int64_t i = 0; i < nb; i++)
        if (rcs[i] != 0 && (rc == 0 || rcs[i] < 0))
            rc = rcs[i];
    if (rc == 0 && j.part) { /* partial filters in block order */
        memcpy(out, j.part, sizeof *out * (size_t)j.wsize);
        for (int64_t i = 1; i < nb; i++) {
            const float *p = j.part + i * j.wsize;
            for (int64_t e = 0; e < j.wsize; e++)
                out[e] += p[e];
        }
    }
    dg_free(j.part);
    if (rcs != rcs_local)
        dg_free(rcs);
    return rc;
}

int dgr_dnnl_run(struct dgr_pool *pool, int what, const dgc_nn_geom *g,
                 int depthwise, const float *a, const float *b, float *out)
{
    return run_blocks(pool, what, g, depthwise, a, b, out, NULL, NULL, NULL);
}

/* ---- rows: eltwise gelu, softmax --------------------------------------- */

typedef struct rows_job {
    int what;
    int64_t rows, cols, block;
    const float *x;
    float *y;
    int rc;              /* a failure (atomic stores: blocks run on any thread) */
} rows_job;

static void rows_block(void *arg, int64_t blk, int64_t r0, int64_t r1)
{
    (void)blk;
    rows_job *j = arg;
    tstate *t = ts_get();
    if (!t) {
        __atomic_store_n(&j->rc, -1, __ATOMIC_RELAXED);
        return;
    }
    omp_set_num_threads(1);
    dgc_nn_geom g;
    memset(&g, 0, sizeof g);
    g.N = r1 - r0;
    g.C = j->cols;
    int nomem = 0;
    prim *P = lookup(j->what, &g, 0, NULL, &nomem);
    if (!P) {
        __atomic_store_n(&j->rc, nomem ? -1 : 1, __ATOMIC_RELAXED);
        return;
    }
    dnnl_exec_arg_t args[3];
    args[0].arg = DNNL_ARG_SRC;
    args[0].memory = tm(t, P->p, 0, &P->md[0], (void *)(j->x + r0 * j->cols));
    args[1].arg = DNNL_ARG_DST;
    args[1].memory = tm(t, P->p, 2, &P->md[2], j->y + r0 * j->cols);
    if (!args[0].memory || !args[1].memory ||
        exec(t, P->p, args, 2, P->scratch))
        __atomic_store_n(&j->rc, -1, __ATOMIC_RELAXED);
}

int dgr_dnnl_rows(struct dgr_pool *pool, int what, int64_t rows,
                  int64_t cols, const float *x, float *y)
{
    pthread_once(&once, engine_init);
    if (!engine)
        return 1;
    if (rows <= 0 || cols <= 0)
        return 0;
    rows_job j = {what, rows, cols, 0, x, y, 0};
    j.block = (1 << 16) / cols + 1; /* ~64K elements: the shape's alone */
    dgr_parallel_blocks(pool, rows, j.block, rows_block, &j);
    return j.rc;
}

/* The Const node whose value input i of n is (through Identity), or NULL. */
static const dgc_node *const_input(const dgc_graph *G, const dgc_node *n,
                                   int i)
{
    for (int hops = 0; hops < 8 && i < n->n_inputs; hops++) {
        int32_t id = n->inputs[i].node;
        if (id < 0 || id >= G->n_nodes)
            return NULL;
        const dgc_node *p = &G->nodes[id];
        if (p->op == DGC_OPID_Const)
            return p;
        if (p->op != DGC_OPID_Identity)
            return NULL;
        n = p;
        i = 0;
    }
    return NULL;
}

int dgr_dnnl_conv(dgr_kctx *k, int what, const dgc_nn_geom *g, int depthwise,
                  const float *a, const float *b, float *out,
                  const dgr_fused *f)
{
    /* the filter is input 1 of Conv2D / DepthwiseConv2dNative and of their
     * BackpropInput ops */
    const void *knode = NULL;
    if (what != DGR_DNNL_CONV_BWD_W && DGR_CPU_KEEPS(k->dev) && k->g &&
        const_input(k->g, k->node, 1))
        knode = k->node;
    return run_blocks(k->dev->intra, what, g, depthwise, a, b, out, k->dev,
                      knode, what == DGR_DNNL_CONV_FWD ? f : NULL);
}

#else /* no oneDNN in this build: the callers use their own loops */

int dgr_dnnl_available(void) { return 0; }

int dgr_dnnl_run(struct dgr_pool *pool, int what, const dgc_nn_geom *g,
                 int depthwise, const float *a, const float *b, float *out)
{
    (void)pool; (void)what; (void)g; (void)depthwise; (void)a; (void)b;
    (void)out;
    return 1;
}

int dgr_dnnl_conv(dgr_kctx *k, int what, const dgc_nn_geom *g, int depthwise,
                  const float *a, const float *b, float *out,
                  const dgr_fused *f)
{
    (void)k; (void)what; (void)g; (void)depthwise; (void)a; (void)b;
    (void)out;
    return 1;
}

int dgr_dnnl_rows(struct dgr_pool *pool, int what, int64_t rows,
                  int64_t cols, const float *x, float *y)
{
    (void)pool; (void)what; (void)rows; (void)cols; (void)x; (void)y;
    return 1;
}

void dgr_dnnl_close(const dgr_device *d) { (void)d; }

#endif
