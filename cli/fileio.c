/*
 * fileio.c -- reading GRAPH text (stdin or a file) and atomic output files
 * for the CLI: write to a temporary file in the target's directory, then
 * rename it into place so nothing is ever half-written.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dg_alloc.h"

dg_status cli_err(dg_error *err, dg_status code, const char *fmt, ...)
{
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return code;
}

/* The first byte that is not blank or part of a UTF-8 BOM, -1 if none in
 * b[0..n). */
static int first_char(const char *b, size_t n)
{
    size_t i = n >= 3 && memcmp(b, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    return i < n ? (unsigned char)b[i] : -1;
}

/* Shared reader: max = 0 unlimited; json_object: refuse early when the
 * text cannot be a JSON object. */
static dg_status read_stream(FILE *fp, const char *what, size_t max,
                             int json_object, char **text, size_t *len,
                             dg_error *err)
{
    size_t cap = 65536, n = 0;
    char *buf = dg_malloc(cap);
    if (!buf)
        return cli_err(err, DG_E_NOMEM, "out of memory reading %s", what);
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = dg_realloc(buf, cap * 2);
            if (!nb) {
                dg_free(buf);
                return cli_err(err, DG_E_NOMEM, "out of memory reading %s", what);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        int c = json_object && got ? first_char(buf, n) : -1;
        if (c >= 0 && c != '{') {
            dg_free(buf);
            if (c >= 0x20 && c < 0x7f)
                return cli_err(err, DG_E_GRAPH, "%s is not a JSON graph (it "
                               "starts with '%c', not '{')", what, c);
            return cli_err(err, DG_E_GRAPH, "%s is not a JSON graph (it "
                           "starts with byte 0x%02x, not '{')", what, c);
        }
        if (c == '{')
            json_object = 0; /* checked */
        if (max && n > max) {
            dg_free(buf);
            return cli_err(err, DG_E_GRAPH, "%s is larger than %zu bytes "
                           "(DGRUN_STDIN_MAX); give the graph as a file", what,
                           max);
        }
        if (got == 0) {
            if (ferror(fp)) {
                int e = errno;
                dg_free(buf);
                return cli_err(err, DG_E_IO, "cannot read %s: %s", what,
                               strerror(e ? e : EIO));
            }
            break;
        }
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return DG_OK;
}

dg_status cli_read_stream(void *stream, const char *what, char **text,
                          size_t *len, dg_error *err)
{
    return read_stream(stream, what, 0, 0, text, len, err);
}

dg_status cli_read_graph_stdin(char **text, size_t *len, dg_error *err)
{
    size_t max = (size_t)1 << 30;
    const char *e = getenv("DGRUN_STDIN_MAX");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end || v == 0)
            return cli_err(err, DG_E_USAGE, "DGRUN_STDIN_MAX must be a "
                           "positive number of bytes, got '%s'", e);
        max = (size_t)v;
    }
    return read_stream(stdin, "standard input", max, 1, text, len, err);
}

dg_status cli_read_file(const char *path, char **text, size_t *len,
                        dg_error *err)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return cli_err(err, DG_E_IO, "cannot open '%s': %s", path, strerror(errno));
    dg_status st = cli_read_stream(fp, path, text, len, err);
    fclose(fp);
    return st;
}

dg_status cli_write_atomic(const char *path, const char *data, size_t len,
                           dg_error *err)
{
    size_t pl = strlen(path);
    char *tmp = dg_malloc(pl + 32);
    if (!tmp)
        return cli_err(err, DG_E_NOMEM, "out of memory writing '%s'", path);
    /* Same directory as the target so rename() stays on one file system. */
    snprintf(tmp, pl + 32, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        dg_free(tmp);
        return cli_err(err, DG_E_IO, "cannot write '%s': %s", path, strerror(e));
    }
    const char *p = data;
    size_t left = len;
    int e = 0;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            e = errno;
            break;
        }
        p += w;
        left -= (size_t)w;
    }
    if (!e && fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (!e) {
        /* mkstemp creates 0600; give the file the usual 0666 & ~umask. */
        mode_t um = umask(0);
        umask(um);
        chmod(tmp, 0666 & ~um);
        if (rename(tmp, path) != 0)
            e = errno;
    }
    if (e) {
        unlink(tmp);
        dg_free(tmp);
        return cli_err(err, DG_E_IO, "cannot write '%s': %s", path, strerror(e));
    }
    dg_free(tmp);
    return DG_OK;
}
