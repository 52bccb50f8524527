/*
 * cmd_check.c -- `dgrun check GRAPH`: load and compile without touching a
 * device; print nothing on success, one error line otherwise.
 */
#include "cli.h"

#include <string.h>

int cmd_check(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    cli_ctx c;
    int code = 0;
    if (cli_compile(a, &c, &err) || cli_log_placement(a, &c, &err)) {
        code = cli_fail(a, &err, DG_E_GRAPH);
    }
    cli_ctx_free(&c);
    return code;
}
