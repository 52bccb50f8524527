/*
 * dg_alloc.h -- the one allocation layer of libdgrun.
 *
 * Every heap allocation in the library goes through these wrappers so that a
 * test can make the Nth allocation fail (dg_alloc_fail_after) and check that
 * each caller reports DG_E_NOMEM cleanly.  They behave like the libc
 * functions they wrap, returning NULL on failure.
 */
#ifndef DG_ALLOC_H
#define DG_ALLOC_H

#include <stddef.h>
#include <stdint.h>

/* malloc/calloc/realloc/free: NULL on failure (or when a test hook makes
 * this allocation fail); a zero size allocates one byte, so NULL always
 * means out of memory.  dg_free(NULL) does nothing. */
void *dg_malloc(size_t n);
void *dg_calloc(size_t count, size_t size);
void *dg_realloc(void *p, size_t n);
void dg_free(void *p);
/* strdup through dg_malloc; NULL in, NULL out.  dg_strndup copies at most
 * n bytes and always terminates. */
char *dg_strdup(const char *s);
char *dg_strndup(const char *s, size_t n);
/* Grow an array of `elem`-byte elements with capacity *cap so it holds at
 * least `need` elements: the capacity doubles, starting from `first`.
 * Returns the reallocated array and updates *cap, or NULL (nomem or
 * overflow) leaving arr and *cap unchanged. */
void *dg_grow(void *arr, int32_t *cap, int64_t need, size_t elem,
              int32_t first);

/* Test hook: allocations after the next `n` fail (n < 0 disables). */
void dg_alloc_fail_after(long n);
/* Test hook: only the allocation after the next `n` fails, later ones
 * succeed again (n < 0 disables; replaces dg_alloc_fail_after). */
void dg_alloc_fail_once(long n);
/* Number of allocations made since the process started (for tests). */
unsigned long dg_alloc_count(void);

#endif
