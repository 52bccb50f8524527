/*
 * truncate_preload.c -- an LD_PRELOAD module for tests/cli/e2e_faults.py
 * truncfeed: another process truncating a file while dgrun reads it, made
 * deterministic.  The first fread() from a file whose path ends with
 * $DGRUN_TEST_TRUNCATE (e.g. "/x.csv") first cuts that file to
 * $DGRUN_TEST_TRUNCATE_TO bytes (default: half its size), then reads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int done;

static void maybe_truncate(FILE *f)
{
    const char *suffix = getenv("DGRUN_TEST_TRUNCATE");
    if (done || !suffix || !*suffix)
        return;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fileno(f));
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return;
    path[n] = '\0';
    size_t sl = strlen(suffix);
    if ((size_t)n < sl || strcmp(path + n - sl, suffix) != 0)
        return;
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        return;
    const char *to = getenv("DGRUN_TEST_TRUNCATE_TO");
    off_t len = to ? (off_t)strtoll(to, NULL, 10) : st.st_size / 2;
    done = 1;
    if (truncate(path, len) != 0)
        perror("truncate_preload");
}

size_t fread(void *ptr, size_t size, size_t n, FILE *f)
{
    static size_t (*real)(void *, size_t, size_t, FILE *);
    if (!real)
        real = (size_t (*)(void *, size_t, size_t, FILE *))dlsym(RTLD_NEXT, "fread");
    maybe_truncate(f);
    return real(ptr, size, n, f);
}

/* the fortified entry point (-D_FORTIFY_SOURCE with a known buffer size) */
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f)
{
    static size_t (*real)(void *, size_t, size_t, size_t, FILE *);
    if (!real)
        real = (size_t (*)(void *, size_t, size_t, size_t, FILE *))dlsym(RTLD_NEXT, "__fread_chk");
    maybe_truncate(f);
    return real(ptr, ptrlen, size, n, f);
}
