/*
 * dg_error.h -- filling dg_error and small helpers shared by every layer.
 *
 * Messages are one line, without the "dgrun: error: <file>: " prefix the CLI
 * adds.  Conventions: name the node as "node '<name>': ", a feed or rules
 * file by its path, then the reason.
 */
#ifndef DG_ERROR_H
#define DG_ERROR_H

#include "dgrun.h"

#if defined(__GNUC__)
#define DG_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DG_PRINTF(a, b)
#endif

/* Set err (may be NULL) to code and a formatted message; returns code so a
 * caller can write `return dg_err(err, DG_E_GRAPH, "...")`.  Newlines in the
 * message are replaced by spaces so it stays one line. */
dg_status dg_err(dg_error *err, dg_status code, const char *fmt, ...)
    DG_PRINTF(3, 4);

/* Out-of-memory shorthand: "out of memory (<what>)". */
dg_status dg_err_nomem(dg_error *err, const char *what);

#endif
