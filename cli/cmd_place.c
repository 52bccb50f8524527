/*
 * cmd_place.c -- `dgrun place GRAPH`: compile only and print the placement
 * (text, json or dot; stdout or -o FILE written atomically), explain one
 * node's placement (--explain), or compare with a golden file (--expect,
 * exit 3 on differences).  No device is touched: --assume-gpus uses paper
 * devices, otherwise discovery only enumerates.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_place(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    cli_ctx c;
    int code = 0;
    char *text = NULL;
    dg_status st = cli_compile(a, &c, &err);
    if (!st)
        st = cli_log_placement(a, &c, &err);
    if (st)
        goto fail;
    if (a->expect) {
        char *report = NULL;
        st = dg_program_expect(c.prog, a->expect, &report, &err);
        if (st == DG_E_MISMATCH) {
            const char *r = report ? report : "";
            if (cli_stdout(r, strlen(r), &err)) {
                free(report);
                goto fail;
            }
            free(report);
            code = 3;
            goto done;
        }
        free(report);
        if (st)
            goto fail;
        goto done;
    }
    if (a->explain) {
        text = dg_program_explain(c.prog, a->explain, &err);
        if (!text)
            goto fail;
    } else {
        text = dg_program_render(c.prog, a->format);
        if (!text) {
            dg_err(&err, DG_E_NOMEM, "out of memory rendering the placement");
            goto fail;
        }
    }
    size_t n = strlen(text);
    if (a->output && !a->explain)
        st = cli_write_atomic(a->output, text, n, &err);
    else
        st = cli_stdout(text, n, &err);
    if (st)
        goto fail;
    goto done;
fail:
    code = cli_fail(a, &err, DG_E_GRAPH);
done:
    free(text);
    cli_ctx_free(&c);
    return code;
}
