/*
 * dg_util.h -- small containers shared by the compiler and the runtime:
 * a growable string buffer (for rendering text, JSON and DOT) and a string
 * -> int hash map (node names, op names).
 */
#ifndef DG_UTIL_H
#define DG_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "dg_error.h"

/* ---- growable string; `oom` latches the first allocation failure ------- */
typedef struct dg_sbuf {
    char *s;
    size_t len, cap;
    int oom;
} dg_sbuf;

/* An empty buffer (nothing allocated until the first append). */
void dg_sbuf_init(dg_sbuf *b);
/* Free the text and reset to empty. */
void dg_sbuf_free(dg_sbuf *b);
/* Append s / n bytes of s / printf-formatted text; keeps b->s
 * NUL-terminated.  After an allocation failure b->oom is set and further
 * appends do nothing. */
void dg_sbuf_add(dg_sbuf *b, const char *s);
void dg_sbuf_addn(dg_sbuf *b, const char *s, size_t n);
void dg_sbuf_addf(dg_sbuf *b, const char *fmt, ...) DG_PRINTF(2, 3);
/* Append s as a JSON string literal, quotes included. */
void dg_sbuf_add_json_str(dg_sbuf *b, const char *s);
/* Give up ownership of the text (NULL if an allocation failed). */
char *dg_sbuf_take(dg_sbuf *b);

/* ---- open-addressing map from string keys to int32 values ---------------
 * Linear probing over 16-byte slots that keep each key's hash next to the
 * key pointer and value, so a probe compares hashes before it touches the
 * key's characters (one cache line per probe in the common case). */
typedef struct dg_strmap_slot {
    const char *key; /* borrowed: the caller keeps keys alive; NULL = empty */
    uint32_t hash;
    int32_t val;
} dg_strmap_slot;

typedef struct dg_strmap {
    dg_strmap_slot *slots;
    size_t cap, len;
} dg_strmap;

/* Room for `expected` keys without growing.  0 ok, -1 nomem. */
int dg_strmap_init(dg_strmap *m, size_t expected);
void dg_strmap_free(dg_strmap *m);
/* Insert; returns 0, 1 if the key exists (value unchanged), -1 nomem. */
int dg_strmap_put(dg_strmap *m, const char *key, int32_t val);
/* Value for key, or -1. */
int32_t dg_strmap_get(const dg_strmap *m, const char *key);
/* Value for the first n characters of key (key need not end there), or -1. */
int32_t dg_strmap_getn(const dg_strmap *m, const char *key, size_t n);
/* For bulk use with software prefetching: the hash of key[0..n) as the map
 * computes it, a hint to start loading the slot that hash probes first, and
 * put / get with the hash already computed (key[n] must be '\0' for put). */
uint32_t dg_strmap_hash(const char *key, size_t n);
void dg_strmap_prefetch(const dg_strmap *m, uint32_t h);
int dg_strmap_put_h(dg_strmap *m, const char *key, size_t n, uint32_t h,
                    int32_t val);
int32_t dg_strmap_getn_h(const dg_strmap *m, const char *key, size_t n,
                         uint32_t h);

/* Hint that the big block p[0..n) (fresh, untouched) be backed by huge
 * pages: fewer page faults and TLB misses for tables accessed at random.
 * A no-op for small blocks or where the OS has no such hint. */
void dg_mem_hint_huge(void *p, size_t n);

/* Element i of host tensor t as a double (bool: 0 or 1; int64 rounded to
 * the nearest double). */
double dg_tensor_elem(const dg_tensor *t, int64_t i);

/* Write shape s as "[2, 3]" ("[]" for a scalar) into buf (truncated to n
 * bytes, always terminated when n > 0): for error messages. */
void dg_shape_format(const dg_shape *s, char *buf, size_t n);
/* 1 when shapes a and b have the same rank and dims, else 0. */
int dg_shape_same(const dg_shape *a, const dg_shape *b);

/* 64-bit FNV-1a of p[0..n) continuing from h (start with DG_FNV1A_INIT):
 * checksums and cache keys; chain calls to hash several pieces. */
#define DG_FNV1A_INIT 0xcbf29ce484222325ull
uint64_t dg_fnv1a(uint64_t h, const void *p, size_t n);

/* Monotonic clock in nanoseconds. */
uint64_t dg_now_ns(void);

/* Remove the files "<base>.tmp.<pid>" and "<base>.tmp.<pid>.<any>" in dir
 * whose writer process no longer exists (killed while writing a temporary
 * that was to be renamed to <base>).  Best effort: errors are ignored. */
void dg_remove_dead_temps(const char *dir, const char *base);

#endif
