/*
 * dg_error.c -- dg_error formatting and the status -> exit code map.
 */
#include "dg_error.h"
#include "dg_alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

dg_status dg_err(dg_error *err, dg_status code, const char *fmt, ...)
{
    if (!err)
        return code;
    /* Format into a local buffer first (arguments may point into
     * err->msg).  A message longer than err->msg (a 100 KB node name) keeps
     * its head and its tail -- where the reason is -- around " ... ". */
    char m[sizeof err->msg];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    char *big = n >= (int)sizeof m ? dg_malloc((size_t)n + 1) : NULL;
    if (big) {
        vsnprintf(big, (size_t)n + 1, fmt, ap2);
        const size_t head = sizeof m / 2, gap = 5;
        const size_t tail = sizeof m - 1 - head - gap;
        memcpy(m + head, " ... ", gap);
        memcpy(m + head + gap, big + (size_t)n - tail, tail + 1);
        dg_free(big);
    }
    va_end(ap2);
    err->code = code;
    memcpy(err->msg, m, sizeof m);
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return code;
}

dg_status dg_err_nomem(dg_error *err, const char *what)
{
    return dg_err(err, DG_E_NOMEM, "out of memory (%s)", what ? what : "host");
}

int dg_status_exit_code(dg_status s)
{
    switch (s) {
    case DG_OK: return 0;
    case DG_E_USAGE:
    case DG_E_GRAPH:
    case DG_E_PLACEMENT: return 2;
    case DG_E_MISMATCH: return 3;
    case DG_E_RUNTIME:
    case DG_E_NOMEM:
    case DG_E_IO: return 1;
    }
    return 1;
}
