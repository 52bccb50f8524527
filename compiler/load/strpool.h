/*
 * strpool.h -- the loaders' string pool: NUL-terminated strings appended
 * in order to one growing buffer (input names, devices, `_class` names kept
 * until every node of a file is known), walked back in the same order.
 */
#ifndef DGC_STRPOOL_H
#define DGC_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct dgc_strpool {
    char *buf;
    size_t len, cap;
    int32_t n;      /* strings in it */
} dgc_strpool;

/* Give an empty pool cap bytes now (optional: the first add allocates
 * 4 KiB otherwise).  0 ok, -1 nomem. */
int dgc_strpool_reserve(dgc_strpool *p, size_t cap);
/* Append s with its NUL (the buffer doubles as needed).  0 ok, -1 nomem
 * (p unchanged). */
int dgc_strpool_add(dgc_strpool *p, const char *s);
/* The string at byte offset off (a strpool length taken before adding
 * it); "" while the pool has no buffer. */
const char *dgc_strpool_at(const dgc_strpool *p, size_t off);
/* Free the buffer; the pool is empty again. */
void dgc_strpool_free(dgc_strpool *p);

#endif
