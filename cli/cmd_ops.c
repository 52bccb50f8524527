/*
 * cmd_ops.c -- `dgrun ops`: the op table with dtypes and kernel devices.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_ops(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    char *text = dg_ops_render_as(a->json ? "json"
                                  : a->markdown ? "markdown" : "text");
    if (!text) {
        dg_err(&err, DG_E_NOMEM, "out of memory listing the ops");
        return cli_report(a, &err);
    }
    dg_status st = cli_stdout(text, strlen(text), &err);
    free(text);
    return st ? cli_report(a, &err) : 0;
}
