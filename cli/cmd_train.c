/*
 * cmd_train.c -- `dgrun train GRAPH`: run the graph's train section.
 * Progress goes to stderr (progress.c): on a terminal one updating line
 * (step/total, loss, steps/s, time left), otherwise one plain line every
 * `log_every` steps and at the last step.  SIGINT/SIGTERM end the step in
 * progress, save the checkpoint (when one is configured), say how to
 * resume and exit 130/143.  stdout gets `steps = N`, `loss = L` and
 * each eval fetch as `eval/<name> = <value>`, or with --json SPEC's object
 * {"steps", "loss", "variables": {...}, "eval": {...}}.
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dg_alloc.h"
#include "output.h"
#include "progress.h"

/* Whether `name` is a Variable the graph file declares.  SPEC's
 * "variables" object shows the model as its author wrote it: what the
 * training pass generates (optimizer slots, beta powers, global_step) is
 * left out (checkpoints keep all of it). */
static int model_variable(const dg_program *p, const char *name)
{
    int n = dg_program_node_count(p);
    for (int i = 0; i < n; i++) {
        dg_node_info info;
        dg_program_node(p, i, &info);
        /* a replicated graph reports replica 0's under the original name */
        const char *nm = info.name;
        if (strncmp(nm, "replica_0/", 10) == 0)
            nm += 10;
        if (strcmp(nm, name) == 0)
            return !info.generated;
    }
    return 0;
}

void cli_train_render(const cli_args *a, const cli_ctx *c, const dg_session *s,
                      const dg_train_result *r, dg_sbuf *b)
{
    if (a->json) {
        dg_sbuf_addf(b, "{\"steps\": %lld, \"loss\": ", (long long)r->steps);
        cli_json_number(b, r->loss);
        dg_sbuf_add(b, ", \"variables\": {");
        for (int i = 0, k = 0; i < r->n_variables; i++) {
            if (!model_variable(c->prog, r->variables[i].name))
                continue;
            dg_sbuf_add(b, k++ ? ", " : "");
            dg_sbuf_add_json_str(b, r->variables[i].name);
            dg_sbuf_add(b, ": ");
            cli_tensor_json(b, r->variables[i].value);
        }
        dg_sbuf_add(b, "}");
        if (r->replicas > 1) {
            dg_sbuf_addf(b, ", \"replicas\": %d, \"replica_max_diff\": ",
                         r->replicas);
            cli_json_number(b, r->replica_diff);
        }
        if (r->eval) {
            dg_sbuf_add(b, ", \"eval\": {");
            for (int i = 0; i < r->n_eval; i++) {
                dg_sbuf_add(b, i ? ", " : "");
                dg_sbuf_add_json_str(b, r->eval[i].name);
                dg_sbuf_add(b, ": ");
                cli_tensor_json_value(b, r->eval[i].value);
            }
            dg_sbuf_add(b, "}");
        }
        cli_memory_json(a, c, s, 0, b);
        dg_sbuf_add(b, "}\n");
        return;
    }
    char ls[64];
    cli_fmt_shortest(r->loss, (double)(float)r->loss == r->loss, ls, sizeof ls);
    dg_sbuf_addf(b, "steps = %lld\nloss = %s\n", (long long)r->steps, ls);
    for (int i = 0; i < r->n_eval; i++) {
        dg_sbuf_addf(b, "eval/%s = ", r->eval[i].name);
        cli_tensor_text(b, r->eval[i].value);
        dg_sbuf_add(b, "\n");
    }
}

void cli_train_interrupted(const cli_args *a, const dg_train_result *r)
{
    fprintf(stderr, "dgrun: interrupted at step %lld/%lld", (long long)r->last_step,
            (long long)r->total);
    if (r->checkpoint) {
        /* resume: the same command with --restore (the graph's checkpoint
         * path needs no --checkpoint) */
        fprintf(stderr, "; checkpoint saved to %s (resume with: dgrun train %s%s%s "
                "--restore)\n", r->checkpoint, a->graph,
                a->opt.checkpoint_dir ? " --checkpoint " : "",
                a->opt.checkpoint_dir ? a->opt.checkpoint_dir : "");
    } else if (a->cmd == CLI_PROFILE) {
        fputs("; the trace holds the steps done\n", stderr);
    } else if (r->steps == 0) {
        fputs("; no step ran, nothing to save\n", stderr);
    } else {
        fputs("; no checkpoint is configured, so the trained values are lost "
              "(give --checkpoint FILE to be able to resume with --restore)\n",
              stderr);
    }
    fflush(stderr);
}

int cmd_train(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    cli_ctx c;
    memset(&c, 0, sizeof c);
    dg_session *s = NULL;
    dg_train_result r;
    memset(&r, 0, sizeof r);
    int have_result = 0, code = 0;
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_options o = a->opt;
    o.train_mode = 1;
    cli_progress pr;
    cli_progress_init(&pr, isatty(STDERR_FILENO), 100, &o);
    cli_interrupt_install(&o);
    cli_interrupt_unsaved("no checkpoint was written for the steps since "
                          "the last one, and no results were printed");
    cli_args a2 = *a;
    a2.opt = o;

    if (cli_compile(&a2, &c, &err) || cli_log_placement(a, &c, &err))
        goto fail;
    pr.log_every = dg_program_log_every(c.prog);
    s = dg_session_new(c.prog, &o, &err);
    if (!s)
        goto fail;
    if (dg_session_train(s, cli_progress_step, &pr, &r, &err))
        goto fail;
    have_result = 1;
    cli_progress_close_line(&pr);
    if (o.trace_path && dg_session_write_trace(s, &err))
        goto fail;
    if (r.stopped) {
        cli_train_interrupted(a, &r);
        goto done;
    }
    cli_memory_report(a, &c, s);
    cli_train_render(a, &c, s, &r, &b);
    if (cli_sbuf_print(&b, "formatting the results", &err))
        goto fail;
    goto done;
fail:
    cli_progress_close_line(&pr); /* the error gets its own line */
    code = cli_fail(a, &err, DG_E_RUNTIME);
done:
    cli_progress_done(&pr);
    if (!code)
        code = cli_interrupt_exit_code();
    dg_sbuf_free(&b);
    if (have_result)
        dg_train_result_free(&r);
    if (s)
        dg_session_free(s);
    cli_ctx_free(&c);
    return code;
}
