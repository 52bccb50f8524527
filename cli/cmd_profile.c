/*
 * cmd_profile.c -- `dgrun profile GRAPH`: run the fetches (or, with
 * --train, the training loop, with train's progress on stderr and its
 * results on stdout) with tracing on, write the Chrome trace to -o FILE
 * (default trace.json, written atomically by the library) and print the
 * summary (per device op count and busy time, transfers).  SIGINT/SIGTERM
 * end the step in progress; the trace of the steps done is written and the
 * exit code is 130/143.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"
#include "progress.h"

int cmd_profile(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    cli_ctx c;
    memset(&c, 0, sizeof c);
    dg_session *s = NULL;
    dg_fetch_result *r = NULL;
    int n = 0, code = 0;
    char *summary = NULL;
    dg_train_result tr;
    memset(&tr, 0, sizeof tr);
    int have_tr = 0;
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_options o = a->opt;
    o.trace_path = a->output ? a->output : "trace.json";
    /* Without --train a step is one run of the fetches. */
    if (!o.train_mode && o.steps >= 1 && o.repeat <= 1)
        o.repeat = o.steps;
    cli_progress pr;
    cli_progress_init(&pr, isatty(STDERR_FILENO), 100, &o);
    cli_interrupt_install(&o);
    cli_interrupt_unsaved("no trace was written");
    cli_args a2 = *a;
    a2.opt = o;

    if (cli_compile(&a2, &c, &err) || cli_log_placement(a, &c, &err))
        goto fail;
    if (!o.train_mode && dg_program_fetch_count(c.prog) == 0) {
        dg_err(&err, DG_E_USAGE, "nothing to fetch: give --fetch NAME[,NAME...] "
                "(the graph has no \"fetch\" list; a GraphDef never has one), "
                "or --train to profile training");
        goto fail;
    }
    pr.log_every = dg_program_log_every(c.prog);
    s = dg_session_new(c.prog, &o, &err);
    if (!s)
        goto fail;
    if (o.train_mode) {
        if (dg_session_train(s, cli_progress_step, &pr, &tr, &err))
            goto fail;
        have_tr = 1;
    } else if (dg_session_run(s, &r, &n, &err)) {
        goto fail;
    }
    cli_progress_close_line(&pr);
    if (dg_session_write_trace(s, &err))
        goto fail;
    cli_memory_report(a, &c, s);
    if (have_tr && !tr.stopped) { /* train's results, then the summary */
        cli_train_render(a, &c, s, &tr, &b);
        dg_sbuf_add(&b, "\n");
        if (cli_sbuf_print(&b, "formatting the results", &err))
            goto fail;
    }
    summary = dg_session_profile_summary(s);
    if (summary) {
        size_t n = strlen(summary);
        if (cli_stdout(summary, n, &err) ||
            (n && summary[n - 1] != '\n' && cli_stdout("\n", 1, &err)))
            goto fail;
    }
    /* Say where the trace went: a first-time user should not have to guess
     * the default (trace.json in the current directory). */
    {
        static const char pre[] = "\ntrace written to ";
        static const char post[] =
            " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
        if (cli_stdout(pre, sizeof pre - 1, &err) ||
            cli_stdout(o.trace_path, strlen(o.trace_path), &err) ||
            cli_stdout(post, sizeof post - 1, &err))
            goto fail;
    }
    if (have_tr && tr.stopped)
        cli_train_interrupted(a, &tr);
    else if (dg_session_stopped(s) >= 0)
        fprintf(stderr, "dgrun: interrupted after %lld of %lld runs; the "
                "trace holds the runs done\n", (long long)dg_session_stopped(s),
                (long long)(o.repeat > 0 ? o.repeat : 1));
    goto done;
fail:
    cli_progress_close_line(&pr);
    code = cli_fail(a, &err, DG_E_RUNTIME);
done:
    cli_progress_done(&pr);
    if (!code)
        code = cli_interrupt_exit_code();
    dg_sbuf_free(&b);
    free(summary);
    if (have_tr)
        dg_train_result_free(&tr);
    if (r)
        dg_fetch_results_free(r, n);
    if (s)
        dg_session_free(s);
    cli_ctx_free(&c);
    return code;
}
