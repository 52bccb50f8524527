/*
 * dg_error.c -- dg_error formatting and the status tables (name, exit
 * code) generated from DG_STATUS_LIST.
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

/* Both tables are generated from DG_STATUS_LIST (dgrun.h), indexed by the
 * enum value (which starts at 0 and counts up). */
#define DG_STATUS_EXIT_(id, name, exit_code) [id] = exit_code,
static const int EXIT_CODES[] = {DG_STATUS_LIST(DG_STATUS_EXIT_)};
#undef DG_STATUS_EXIT_
#define DG_STATUS_NAME_(id, name, exit_code) [id] = name,
static const char *const NAMES[] = {DG_STATUS_LIST(DG_STATUS_NAME_)};
#undef DG_STATUS_NAME_
#define N_STATUS (sizeof NAMES / sizeof NAMES[0])

int dg_status_exit_code(dg_status s)
{
    return (unsigned)s < N_STATUS ? EXIT_CODES[s] : 1;
}

const char *dg_status_name(dg_status s)
{
    return (unsigned)s < N_STATUS ? NAMES[s] : "unknown";
}
