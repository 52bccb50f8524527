/*
 * dg_alloc.c -- allocation wrappers with failure injection for tests.
 */
#include "dg_alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_long fail_countdown = -1;
static atomic_int fail_sticky = 1;
static atomic_ulong alloc_count;

static int should_fail(void)
{
    atomic_fetch_add(&alloc_count, 1);
    long c = atomic_load(&fail_countdown);
    if (c < 0)
        return 0;
    if (c == 0) {
        if (!atomic_load(&fail_sticky))
            atomic_store(&fail_countdown, -1);
        return 1;
    }
    atomic_fetch_sub(&fail_countdown, 1);
    return 0;
}

void *dg_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *dg_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    if (count == 0 || size == 0)
        return calloc(1, 1);
    return calloc(count, size);
}

void *dg_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void dg_free(void *p) { free(p); }

void *dg_grow(void *arr, int32_t *cap, int64_t need, size_t elem,
              int32_t first)
{
    int64_t nc = *cap > 0 ? *cap : (first > 0 ? first : 1);
    while (nc < need)
        nc *= 2;
    if (nc > INT32_MAX || (elem && (uint64_t)nc > SIZE_MAX / elem))
        return NULL;
    void *na = dg_realloc(arr, (size_t)nc * elem);
    if (na)
        *cap = (int32_t)nc;
    return na;
}

char *dg_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    char *d = dg_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *dg_strdup(const char *s) { return s ? dg_strndup(s, strlen(s)) : NULL; }

void dg_alloc_fail_after(long n)
{
    atomic_store(&fail_sticky, 1);
    atomic_store(&fail_countdown, n);
}

void dg_alloc_fail_once(long n)
{
    atomic_store(&fail_sticky, 0);
    atomic_store(&fail_countdown, n);
}

unsigned long dg_alloc_count(void) { return atomic_load(&alloc_count); }
