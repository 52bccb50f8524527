/*
 * fileio.c -- the CLI's files: GRAPH read from standard input (bounded,
 * refused early when it is no graph), and atomic output files: write to a
 * temporary file in the target's directory, then rename it into place so
 * nothing is ever half-written.
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dg_alloc.h"
#include "dg_error.h"
#include "dg_io.h"

dg_status cli_read_graph_stdin(char **text, size_t *len, dg_error *err)
{
    size_t max = DG_STREAM_MAX;
    const char *e = getenv("DGRUN_STDIN_MAX");
    if (e && *e) {
        char *end;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end || v == 0)
            return dg_err(err, DG_E_USAGE, "DGRUN_STDIN_MAX must be a "
                          "positive number of bytes, got '%s'", e);
        max = (size_t)v;
    }
    const char *what = "standard input";
    int bad = -1;
    dg_status st = dg_read_json_stream(stdin, max, text, len, &bad);
    if (st == DG_E_GRAPH && bad < 0)
        return dg_err(err, DG_E_GRAPH, "%s is larger than %zu bytes "
                      "(DGRUN_STDIN_MAX); give the graph as a file", what, max);
    if (st == DG_E_GRAPH && bad >= 0x20 && bad < 0x7f)
        return dg_err(err, DG_E_GRAPH, "%s is not a graph: neither JSON nor "
                      "a binary GraphDef (it starts with '%c')", what, bad);
    if (st == DG_E_GRAPH)
        return dg_err(err, DG_E_GRAPH, "%s is not a graph: neither JSON nor "
                      "a binary GraphDef (it starts with byte 0x%02x)", what,
                      bad);
    if (st == DG_E_NOMEM)
        return dg_err(err, DG_E_NOMEM, "out of memory reading %s", what);
    if (st)
        return dg_err(err, DG_E_IO, "cannot read %s: %s", what,
                      strerror(errno ? errno : EIO));
    return DG_OK;
}

dg_status cli_write_atomic(const char *path, const char *data, size_t len,
                           dg_error *err)
{
    size_t pl = strlen(path);
    char *tmp = dg_malloc(pl + 32);
    if (!tmp)
        return dg_err(err, DG_E_NOMEM, "out of memory writing '%s'", path);
    /* Same directory as the target so rename() stays on one file system. */
    snprintf(tmp, pl + 32, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        dg_free(tmp);
        return dg_err(err, DG_E_IO, "cannot write '%s': %s", path, strerror(e));
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
        return dg_err(err, DG_E_IO, "cannot write '%s': %s", path, strerror(e));
    }
    dg_free(tmp);
    return DG_OK;
}
