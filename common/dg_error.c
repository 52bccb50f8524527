/*
 * dg_error.c -- dg_error formatting and the status -> exit code map.
 */
#include "dg_error.h"

#include <stdarg.h>
#include <stdio.h>

dg_status dg_err(dg_error *err, dg_status code, const char *fmt, ...)
{
    if (!err)
        return code;
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
