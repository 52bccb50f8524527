/*
 * fileio.c -- atomic output files for the CLI: write to a temporary file in
 * the target's directory, then rename it into place so nothing is ever
 * half-written.
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
