/*
 * fuzz_util.h -- helpers shared by the libFuzzer targets in tests/fuzz:
 * a per-process scratch file on /dev/shm for readers that take a path, and
 * a NUL-terminated copy of the input for readers that take a C string.
 */
#ifndef DG_FUZZ_UTIL_H
#define DG_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write data to "/dev/shm/dgfuzz.<pid>.<suffix>" (or $TMPDIR when /dev/shm
 * is missing) and return the path (static storage); aborts on I/O failure:
 * a harness that cannot write its scratch file tests nothing. */
static inline const char *fuzz_scratch(const uint8_t *data, size_t len,
                                       const char *suffix)
{
    static char path[256];
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                      : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/dgfuzz.%d.%s", dir, (int)getpid(), suffix);
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
        abort();
    return path;
}

/* A malloc'd NUL-terminated copy of data (free with free()). */
static inline char *fuzz_cstr(const uint8_t *data, size_t len)
{
    char *s = malloc(len + 1);
    if (!s)
        abort();
    memcpy(s, data, len);
    s[len] = 0;
    return s;
}

#endif
