/*
 * dg_io.c -- dg_read_stream / dg_read_file: a whole stream or file into
 * one NUL-terminated buffer (see dg_io.h).
 */
#include "dg_io.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

dg_status dg_read_stream(FILE *f, char **buf, size_t *len)
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
