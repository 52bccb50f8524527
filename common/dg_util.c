/*
 * dg_util.c -- string buffer, string map (hashes stored in the slots,
 * prefetch hooks for bulk use), the huge-page hint for big tables, and the
 * clock (see dg_util.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "dg_util.h"
#include "dg_alloc.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

void dg_sbuf_init(dg_sbuf *b) { memset(b, 0, sizeof *b); }

void dg_sbuf_free(dg_sbuf *b)
{
    dg_free(b->s);
    memset(b, 0, sizeof *b);
}

static int sbuf_reserve(dg_sbuf *b, size_t extra)
{
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = dg_realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void dg_sbuf_addn(dg_sbuf *b, const char *s, size_t n)
{
    if (sbuf_reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void dg_sbuf_add(dg_sbuf *b, const char *s) { dg_sbuf_addn(b, s, strlen(s)); }

void dg_sbuf_addf(dg_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof tmp) {
        dg_sbuf_addn(b, tmp, (size_t)n);
        return;
    }
    if (sbuf_reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void dg_sbuf_add_json_str(dg_sbuf *b, const char *s)
{
    dg_sbuf_add(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': dg_sbuf_add(b, "\\\""); break;
        case '\\': dg_sbuf_add(b, "\\\\"); break;
        case '\n': dg_sbuf_add(b, "\\n"); break;
        case '\r': dg_sbuf_add(b, "\\r"); break;
        case '\t': dg_sbuf_add(b, "\\t"); break;
        default:
            if (*p < 0x20)
                dg_sbuf_addf(b, "\\u%04x", *p);
            else
                dg_sbuf_addn(b, (const char *)p, 1);
        }
    }
    dg_sbuf_add(b, "\"");
}

char *dg_sbuf_take(dg_sbuf *b)
{
    if (b->oom) {
        dg_sbuf_free(b);
        return NULL;
    }
    if (!b->s) {
        if (sbuf_reserve(b, 0))
            return NULL;
        b->s[0] = '\0'; /* nothing was appended: "" */
    }
    char *s = b->s;
    memset(b, 0, sizeof *b);
    return s;
}

/* FNV-1a, folded to 32 bits (the table index uses the low bits, the
 * stored hash filters out almost every non-matching probe). */
static uint32_t hash_n(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return (uint32_t)(h ^ (h >> 32));
}

void dg_mem_hint_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (!p || n < 2 * huge)
        return;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t b = ((uintptr_t)p + n) & ~(huge - 1);
    if (b > a)
        (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

int dg_strmap_init(dg_strmap *m, size_t expected)
{
    size_t cap = 16;
    while (cap < expected * 2)
        cap *= 2;
    m->slots = dg_calloc(cap, sizeof *m->slots);
    dg_mem_hint_huge(m->slots, cap * sizeof *m->slots);
    m->cap = m->slots ? cap : 0;
    m->len = 0;
    return m->slots ? 0 : -1;
}

void dg_strmap_free(dg_strmap *m)
{
    dg_free(m->slots);
    memset(m, 0, sizeof *m);
}

/* Slot for (key, n, h): the matching one, or the empty one ending its probe
 * sequence.  m->cap must be a nonzero power of two. */
static dg_strmap_slot *find_slot(const dg_strmap *m, const char *key,
                                 size_t n, uint32_t h)
{
    size_t mask = m->cap - 1, i = h & mask;
    for (;;) {
        dg_strmap_slot *s = &m->slots[i];
        if (!s->key || (s->hash == h && strncmp(s->key, key, n) == 0 &&
                        s->key[n] == '\0'))
            return s;
        i = (i + 1) & mask;
    }
}

static int strmap_grow(dg_strmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    dg_strmap_slot *ns = dg_calloc(cap, sizeof *ns);
    if (!ns)
        return -1;
    dg_mem_hint_huge(ns, cap * sizeof *ns);
    for (size_t i = 0; i < m->cap; i++) {
        const dg_strmap_slot *s = &m->slots[i];
        if (!s->key)
            continue;
        size_t j = s->hash & (cap - 1);
        while (ns[j].key)
            j = (j + 1) & (cap - 1);
        ns[j] = *s;
    }
    dg_free(m->slots);
    m->slots = ns;
    m->cap = cap;
    return 0;
}

uint32_t dg_strmap_hash(const char *key, size_t n)
{
    return hash_n(key, n);
}

void dg_strmap_prefetch(const dg_strmap *m, uint32_t h)
{
    if (m->cap)
        __builtin_prefetch(&m->slots[h & (m->cap - 1)]);
}

int dg_strmap_put_h(dg_strmap *m, const char *key, size_t n, uint32_t h,
                    int32_t val)
{
    if ((m->len + 1) * 2 > m->cap && strmap_grow(m))
        return -1;
    dg_strmap_slot *s = find_slot(m, key, n, h);
    if (s->key)
        return 1;
    s->key = key;
    s->hash = h;
    s->val = val;
    m->len++;
    return 0;
}

int dg_strmap_put(dg_strmap *m, const char *key, int32_t val)
{
    size_t n = strlen(key);
    return dg_strmap_put_h(m, key, n, hash_n(key, n), val);
}

int32_t dg_strmap_getn_h(const dg_strmap *m, const char *key, size_t n,
                         uint32_t h)
{
    if (!m->cap)
        return -1;
    const dg_strmap_slot *s = find_slot(m, key, n, h);
    return s->key ? s->val : -1;
}

int32_t dg_strmap_getn(const dg_strmap *m, const char *key, size_t n)
{
    return dg_strmap_getn_h(m, key, n, hash_n(key, n));
}

int32_t dg_strmap_get(const dg_strmap *m, const char *key)
{
    return dg_strmap_getn(m, key, strlen(key));
}

uint64_t dg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t dg_fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void dg_shape_format(const dg_shape *s, char *buf, size_t n)
{
    if (!n)
        return;
    size_t off = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < s->rank && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, i ? ", %lld" : "%lld",
                                (long long)s->dims[i]);
    if (off < n)
        snprintf(buf + off, n - off, "]");
}

int dg_shape_same(const dg_shape *a, const dg_shape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return 1;
}

void dg_remove_dead_temps(const char *dir, const char *base)
{
    size_t bl = strlen(base), dl = strlen(dir);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        if (strncmp(n, base, bl) != 0 || strncmp(n + bl, ".tmp.", 5) != 0)
            continue;
        char *end;
        long pid = strtol(n + bl + 5, &end, 10);
        if ((*end && *end != '.') || pid <= 0 || pid == (long)getpid() ||
            kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        size_t nl = strlen(n);
        char *full = dg_malloc(dl + nl + 2);
        if (!full)
            break;
        memcpy(full, dir, dl);
        full[dl] = '/';
        memcpy(full + dl + 1, n, nl + 1);
        unlink(full);
        dg_free(full);
    }
    if (d)
        closedir(d);
}
