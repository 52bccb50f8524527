/*
 * cmd_run.c -- `dgrun run GRAPH`: compile, restore Variables from
 * --checkpoint (inference with trained weights), run the fetches (--repeat
 * times) and print them NumPy-style or as one JSON object (--json).
 * Nothing to fetch is a usage error; SIGINT/SIGTERM stop between runs.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "progress.h"

int cmd_run(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    cli_ctx c;
    dg_session *s = NULL;
    dg_fetch_result *r = NULL;
    int n = 0, code = 0;
    dg_sbuf b;
    dg_sbuf_init(&b);
    memset(&c, 0, sizeof c);

    dg_options o = a->opt;
    cli_progress pr; /* only the kernel-build notice */
    cli_progress_init(&pr, isatty(STDERR_FILENO), 100, &o);
    cli_interrupt_install(&o);
    cli_interrupt_unsaved("no results were printed");
    cli_args a2 = *a;
    a2.opt = o;
    if (cli_compile(&a2, &c, &err) || cli_log_placement(a, &c, &err))
        goto fail;
    if (dg_program_fetch_count(c.prog) == 0) {
        dg_err(&err, DG_E_USAGE, "nothing to fetch: give --fetch NAME[,NAME...] "
                "(the graph has no \"fetch\" list; a GraphDef never has one)");
        goto fail;
    }
    s = dg_session_new(c.prog, &o, &err);
    if (!s)
        goto fail;
    /* --checkpoint: the Variables a training saved, before running (the
     * checkpoint's step is not needed: run has no global step to set) */
    if (o.checkpoint_dir && dg_session_restore(s, o.checkpoint_dir, NULL, &err))
        goto fail;
    if (dg_session_run(s, &r, &n, &err))
        goto fail;
    if (o.trace_path && dg_session_write_trace(s, &err))
        goto fail;
    if (dg_session_stopped(s) >= 0) {
        fprintf(stderr, "dgrun: interrupted after %lld of %lld runs\n",
                (long long)dg_session_stopped(s),
                (long long)(o.repeat > 0 ? o.repeat : 1));
        goto done;
    }
    if (a->json) {
        dg_sbuf_add(&b, "{");
        for (int i = 0, first = 1; i < n; i++) {
            int seen = 0; /* a repeated fetch is one key (same value) */
            for (int j = 0; j < i && !seen; j++)
                seen = strcmp(r[j].name, r[i].name) == 0;
            if (seen)
                continue;
            if (!first)
                dg_sbuf_add(&b, ", ");
            first = 0;
            dg_sbuf_add_json_str(&b, r[i].name);
            dg_sbuf_add(&b, ": ");
            cli_tensor_json(&b, r[i].value);
        }
        cli_memory_json(a, &c, s, n == 0, &b);
        dg_sbuf_add(&b, "}\n");
    } else {
        for (int i = 0; i < n; i++) {
            dg_sbuf_addf(&b, "%s = ", r[i].name);
            cli_tensor_text(&b, r[i].value);
            dg_sbuf_add(&b, "\n");
        }
    }
    cli_memory_report(a, &c, s);
    if (cli_sbuf_print(&b, "formatting the results", &err))
        goto fail;
    goto done;
fail:
    code = cli_fail(a, &err, DG_E_RUNTIME);
done:
    cli_progress_done(&pr);
    if (!code)
        code = cli_interrupt_exit_code();
    dg_sbuf_free(&b);
    if (r)
        dg_fetch_results_free(r, n);
    if (s)
        dg_session_free(s);
    cli_ctx_free(&c);
    return code;
}
