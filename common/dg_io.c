/*
 * dg_io.c -- dg_read_stream / dg_read_file: a whole stream or file into
 * one NUL-terminated buffer (see dg_io.h).
 */
#include "dg_io.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

/* The first byte that is not blank or part of a UTF-8 BOM, -1 if none in
 * b[0..n). */
static int first_char(const char *b, size_t n)
{
    size_t i = n >= 3 && memcmp(b, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    return i < n ? (unsigned char)b[i] : -1;
}

/* max 0 = unbounded; json: check the first byte. */
static dg_status read_stream(FILE *f, size_t max, int json, char **buf,
                             size_t *len, int *bad)
{
    struct stat sb;
    size_t cap = 65536, n = 0;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (uint64_t)sb.st_size < (uint64_t)SIZE_MAX / 2)
        cap = (size_t)sb.st_size + 2;
    char *b = dg_malloc(cap);
    if (!b)
        return DG_E_NOMEM;
    dg_mem_hint_huge(b, cap);
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = dg_realloc(b, cap * 2);
            if (!nb) {
                dg_free(b);
                return DG_E_NOMEM;
            }
            b = nb;
            cap *= 2;
        }
        size_t r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        /* a binary GraphDef starts with the tag of one of its fields
         * (node 0x0a, library 0x12, version 0x18, versions 0x22): read it,
         * still bounded; the loader tells JSON from protobuf */
        if (json && r && n == r && (b[0] == 0x0a || b[0] == 0x12 ||
                                    b[0] == 0x18 || b[0] == 0x22))
            json = 0;
        int c = json && r ? first_char(b, n) : -1;
        int not_json = c >= 0 && c != '{' && c != '[';
        if (not_json || (max && n > max)) {
            dg_free(b);
            *bad = not_json ? c : -1;
            return DG_E_GRAPH;
        }
        if (c >= 0)
            json = 0; /* checked */
        if (r == 0) {
            if (ferror(f)) {
                int e = errno;
                dg_free(b);
                errno = e ? e : EIO;
                return DG_E_IO;
            }
            break;
        }
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return DG_OK;
}

dg_status dg_read_stream(FILE *f, char **buf, size_t *len)
{
    int bad;
    return read_stream(f, 0, 0, buf, len, &bad);
}

dg_status dg_read_json_stream(FILE *f, size_t max, char **buf, size_t *len,
                              int *bad)
{
    return read_stream(f, max, 1, buf, len, bad);
}

dg_status dg_read_file(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return DG_E_IO;
    dg_status rs = dg_read_stream(f, buf, len);
    int e = errno;
    fclose(f);
    errno = e;
    return rs;
}
