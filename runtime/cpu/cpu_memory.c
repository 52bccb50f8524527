/*
 * cpu_memory.c -- the CPU backend's memory: a caching allocator of host
 * blocks and the copies between them and host memory.
 *
 * CPU buffers are one block:
 * the dgr_buffer header followed by 64-byte aligned data.  Blocks up to
 * CPU_MAX_CLASS bytes come in power-of-two size classes and are cached on
 * release: first in a per-thread free list (no lock, no atomics: the
 * executor's hot path), spilling half of it to a process-wide list under a
 * mutex when it grows past its limit, and refilling from that list in
 * batches.  The cache is process-wide (blocks do not belong to a device), so
 * a buffer freed on another thread or by another session is reused too.  A
 * thread's list returns to the global list when the thread exits.  The
 * global list keeps at most CPU_GLOBAL_CAP bytes; beyond that blocks are
 * freed.  While a block is in a free list its `mem` field links the list.
 */
#include "cpu_backend.h"
#include "dg_alloc.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* Cached blocks' data is poisoned so ASan still sees use after release. */
#define POISON(b, n) ASAN_POISON_MEMORY_REGION((b)->host, (n))
#define UNPOISON(b, n) ASAN_UNPOISON_MEMORY_REGION((b)->host, (n))
#else
#define POISON(b, n) ((void)(b), (void)(n))
#define UNPOISON(b, n) ((void)(b), (void)(n))
#endif

/* ---- the CPU block cache -------------------------------------------------- */

#define CPU_ALIGN 64
#define CPU_MIN_SHIFT 6                      /* smallest class: 64 bytes */
#define CPU_N_CLASSES 24                     /* 64 B .. 512 MiB */
#define CPU_TCACHE_MAX_CLASS 15              /* thread lists: up to 2 MiB */
#define CPU_TCACHE_BYTES ((size_t)4 << 20)   /* per class per thread */
#define CPU_TCACHE_MAX_COUNT 64
#define CPU_GLOBAL_CAP ((size_t)2048 << 20)
#define CPU_BATCH 32
/* pool_class of a CPU block that is not cached (larger than any class) */
#define CPU_UNPOOLED ((size_t)-1)

typedef struct tcache {
    dgr_buffer *head[CPU_N_CLASSES];
    uint32_t n[CPU_N_CLASSES];
    int registered;
} tcache;

static _Thread_local tcache tc;

static struct {
    pthread_mutex_t mu;
    dgr_buffer *head[CPU_N_CLASSES];
    uint32_t n[CPU_N_CLASSES];
    size_t bytes;
} global = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}, 0};

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t tc_key;
static int key_ok;

static inline size_t class_bytes(int c)
{
    return (size_t)1 << (c + CPU_MIN_SHIFT);
}

static inline uint32_t tcache_limit(int c)
{
    size_t n = CPU_TCACHE_BYTES / class_bytes(c);
    return n > CPU_TCACHE_MAX_COUNT ? CPU_TCACHE_MAX_COUNT : (uint32_t)n;
}

/* Smallest class holding n bytes, -1 if none. */
static inline int class_of(size_t n)
{
    if (n <= class_bytes(0))
        return 0;
    if (n > class_bytes(CPU_N_CLASSES - 1))
        return -1;
    int c = (int)(sizeof(unsigned long long) * 8) -
            __builtin_clzll((unsigned long long)(n - 1)) - CPU_MIN_SHIFT;
    return c;
}

static inline dgr_buffer *link_next(const dgr_buffer *b)
{
    return (dgr_buffer *)b->mem;
}

/* Header and data in one dg_malloc block; data 64-byte aligned. */
static dgr_buffer *block_new(size_t data_bytes)
{
    size_t hdr = (sizeof(dgr_buffer) + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1);
    /* dg_malloc gives 16-byte alignment: reserve room to align the data */
    dgr_buffer *b = dg_malloc(hdr + CPU_ALIGN + data_bytes);
    if (!b)
        return NULL;
    uintptr_t d = (uintptr_t)b + sizeof(dgr_buffer);
    d = (d + CPU_ALIGN - 1) & ~(uintptr_t)(CPU_ALIGN - 1);
    memset(b, 0, sizeof *b);
    b->host = (void *)d;
    return b;
}

/* Put a chain of n blocks of class c on the global list (or free them
 * beyond the cap). */
static void global_put(int c, dgr_buffer *head, uint32_t n)
{
    dgr_buffer *drop = NULL;
    pthread_mutex_lock(&global.mu);
    while (head) {
        dgr_buffer *nx = link_next(head);
        if (global.bytes + class_bytes(c) <= CPU_GLOBAL_CAP) {
            head->mem = global.head[c];
            global.head[c] = head;
            global.n[c]++;
            global.bytes += class_bytes(c);
        } else {
            head->mem = drop;
            drop = head;
        }
        head = nx;
    }
    pthread_mutex_unlock(&global.mu);
    (void)n;
    while (drop) {
        dgr_buffer *nx = link_next(drop);
        dg_free(drop);
        drop = nx;
    }
}

/* Take up to `want` blocks of class c from the global list into the
 * thread list; returns one of them (or NULL). */
static dgr_buffer *global_take(int c, uint32_t want, int to_thread)
{
    dgr_buffer *got = NULL;
    pthread_mutex_lock(&global.mu);
    if (global.head[c]) {
        got = global.head[c];
        global.head[c] = link_next(got);
        global.n[c]--;
        global.bytes -= class_bytes(c);
        while (to_thread && want > 1 && global.head[c]) {
            dgr_buffer *b = global.head[c];
            global.head[c] = link_next(b);
            global.n[c]--;
            global.bytes -= class_bytes(c);
            b->mem = tc.head[c];
            tc.head[c] = b;
            tc.n[c]++;
            want--;
        }
    }
    pthread_mutex_unlock(&global.mu);
    return got;
}

static void tcache_flush(tcache *t)
{
    for (int c = 0; c < CPU_N_CLASSES; c++) {
        if (t->head[c])
            global_put(c, t->head[c], t->n[c]);
        t->head[c] = NULL;
        t->n[c] = 0;
    }
}

static void tcache_destroy(void *arg)
{
    tcache_flush((tcache *)arg);
}

static void make_key(void)
{
    key_ok = pthread_key_create(&tc_key, tcache_destroy) == 0;
}

/* Register the thread's list so it is flushed when the thread exits. */
static void tcache_register(void)
{
    tc.registered = 1;
    pthread_once(&key_once, make_key);
    if (key_ok)
        pthread_setspecific(tc_key, &tc);
}

static dgr_buffer *cpu_block_get(size_t nbytes)
{
    int c = class_of(nbytes);
    if (c < 0) {
        dgr_buffer *b = block_new(nbytes);
        if (b)
            b->pool_class = CPU_UNPOOLED;
        return b;
    }
    dgr_buffer *b = NULL;
    if (c <= CPU_TCACHE_MAX_CLASS) {
        b = tc.head[c];
        if (b) {
            tc.head[c] = link_next(b);
            tc.n[c]--;
        } else {
            if (!tc.registered)
                tcache_register();
            b = global_take(c, CPU_BATCH, 1);
        }
    } else {
        b = global_take(c, 1, 0);
    }
    if (!b) {
        b = block_new(class_bytes(c));
        if (!b)
            return NULL;
    }
    UNPOISON(b, class_bytes(c));
    b->mem = NULL;
    b->pool_class = (size_t)c + 1;
    return b;
}

static void cpu_block_put(dgr_buffer *b)
{
    if (b->pool_class == CPU_UNPOOLED) {
        dg_free(b);
        return;
    }
    int c = (int)b->pool_class - 1;
    POISON(b, class_bytes(c));
    if (c > CPU_TCACHE_MAX_CLASS) {
        b->mem = NULL;
        global_put(c, b, 1);
        return;
    }
    if (!tc.registered)
        tcache_register();
    b->mem = tc.head[c];
    tc.head[c] = b;
    if (++tc.n[c] > tcache_limit(c)) {
        /* spill the older half to the global list */
        uint32_t keep = tc.n[c] / 2;
        dgr_buffer *p = tc.head[c];
        for (uint32_t i = 1; i < keep; i++)
            p = link_next(p);
        dgr_buffer *spill = link_next(p);
        p->mem = NULL;
        global_put(c, spill, tc.n[c] - keep);
        tc.n[c] = keep;
    }
}

void dgr_cpu_cache_trim(void)
{
    tcache_flush(&tc);
    pthread_mutex_lock(&global.mu);
    dgr_buffer *all[CPU_N_CLASSES];
    for (int c = 0; c < CPU_N_CLASSES; c++) {
        all[c] = global.head[c];
        global.head[c] = NULL;
        global.n[c] = 0;
    }
    global.bytes = 0;
    pthread_mutex_unlock(&global.mu);
    for (int c = 0; c < CPU_N_CLASSES; c++)
        while (all[c]) {
            dgr_buffer *nx = link_next(all[c]);
            dg_free(all[c]);
            all[c] = nx;
        }
}

/* ---- the backend's memory functions ---------------------------------------- */

dgr_buffer *dgr_cpu_buffer_get(dgr_device *d, size_t nbytes, int stream,
                               dg_error *err)
{
    (void)stream;
    dgr_buffer *b = cpu_block_get(nbytes);
    if (!b)
        dg_err(err, DG_E_NOMEM, "out of memory: %zu bytes on %s", nbytes,
               d->info.name);
    return b;
}

void dgr_cpu_buffer_put(dgr_device *d, dgr_buffer *b)
{
    (void)d;
    cpu_block_put(b);
}

dg_status dgr_cpu_read(dgr_device *d, const dgr_buffer *src, void *dst,
                       size_t n, dg_error *err)
{
    (void)d;
    (void)err;
    if (n)
        memcpy(dst, src->host, n);
    return DG_OK;
}

dg_status dgr_cpu_write(dgr_device *d, dgr_buffer *dst, const void *src,
                        size_t n, dg_error *err)
{
    (void)d;
    (void)err;
    if (n)
        memcpy(dst->host, src, n);
    return DG_OK;
}

/* ---- Const values made once per device ------------------------------------ */

/* A Const node's output is the same every run: the first run's buffer is
 * kept (one reference) and later runs alias it instead of allocating and
 * copying the value again (issue 23: 31% of a batch-1 ResNet run's
 * instructions were these copies).  Keyed by (device, node, value data):
 * a session's graph and its devices live and die together, and entries
 * are dropped when the device closes. */
#define CONST_BUCKETS 1024

typedef struct cconst {
    const dgr_device *dev;
    const void *node, *data;
    dgr_value v;
    struct cconst *next;
} cconst;

static struct {
    pthread_mutex_t mu;
    cconst *b[CONST_BUCKETS];
} consts = {PTHREAD_MUTEX_INITIALIZER, {0}};

static unsigned const_hash(const void *node)
{
    uintptr_t p = (uintptr_t)node;
    return (unsigned)((p >> 4) ^ (p >> 14)) % CONST_BUCKETS;
}

int dgr_cpu_const_get(const dgr_device *d, const void *node,
                      const void *data, dgr_value *out)
{
    int found = 0;
    if (!DGR_CPU_KEEPS(d))
        return 0;
    pthread_mutex_lock(&consts.mu);
    for (cconst *c = consts.b[const_hash(node)]; c; c = c->next)
        if (c->dev == d && c->node == node && c->data == data) {
            *out = c->v;
            if (out->buf)
                dgr_buffer_retain(out->buf);
            found = 1;
            break;
        }
    pthread_mutex_unlock(&consts.mu);
    return found;
}

void dgr_cpu_const_put(const dgr_device *d, const void *node,
                       const void *data, const dgr_value *v)
{
    if (!DGR_CPU_KEEPS(d))
        return;
    cconst *c = dg_calloc(1, sizeof *c);
    if (!c)
        return; /* not kept: the next run makes it again */
    c->dev = d;
    c->node = node;
    c->data = data;
    c->v = *v;
    unsigned h = const_hash(node);
    pthread_mutex_lock(&consts.mu);
    for (cconst *o = consts.b[h]; o; o = o->next)
        if (o->dev == d && o->node == node && o->data == data) {
            pthread_mutex_unlock(&consts.mu); /* another run was first */
            dg_free(c);
            return;
        }
    if (c->v.buf)
        dgr_buffer_retain(c->v.buf);
    c->next = consts.b[h];
    consts.b[h] = c;
    pthread_mutex_unlock(&consts.mu);
}

void dgr_cpu_const_close(const dgr_device *d)
{
    cconst *drop = NULL;
    pthread_mutex_lock(&consts.mu);
    for (int h = 0; h < CONST_BUCKETS; h++)
        for (cconst **pp = &consts.b[h]; *pp;) {
            cconst *c = *pp;
            if (c->dev == d) {
                *pp = c->next;
                c->next = drop;
                drop = c;
            } else {
                pp = &c->next;
            }
        }
    pthread_mutex_unlock(&consts.mu);
    while (drop) {
        cconst *nx = drop->next;
        if (drop->v.buf)
            dgr_buffer_release(drop->v.buf);
        dg_free(drop);
        drop = nx;
    }
}
