/*
 * cmd_train.c -- `dgrun train GRAPH`: run the graph's train section.
 * Progress goes to stderr: on a terminal one updating line (step/total,
 * loss, steps/s, time left), otherwise one plain line every `log_every`
 * steps and at the last step.  stdout gets `steps = N`, `loss = L` and
 * each eval fetch as `eval/<name> = <value>`, or with --json SPEC's object
 * {"steps", "loss", "variables": {...}, "eval": {...}}.
 */
#include "cli.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dg_alloc.h"
#include "output.h"

typedef struct progress {
    int tty;
    int64_t log_every;
    double last_draw;
    int drawn;
    int open;     /* an updating line is on the terminal without its newline */
    int64_t base; /* step before the first one this process ran (restore), -1 = unknown yet */
} progress;

/* train.log_every from the graph text (default 100, like the loader). */
static int64_t log_every_of(const cli_args *a, const cli_ctx *c)
{
    int64_t every = 100;
    char *own = NULL;
    const char *text = c->text;
    size_t len = c->text_len;
    if (!text) {
        dg_error e;
        if (cli_read_file(a->graph, &own, &len, &e))
            return every;
        text = own;
    }
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *tr = root ? cJSON_GetObjectItemCaseSensitive(root, "train") : NULL;
    const cJSON *le = tr ? cJSON_GetObjectItemCaseSensitive(tr, "log_every") : NULL;
    if (cJSON_IsNumber(le) && le->valuedouble >= 1)
        every = (int64_t)le->valuedouble;
    cJSON_Delete(root);
    dg_free(own);
    return every;
}

static void fmt_left(double s, char *out, size_t n)
{
    if (!isfinite(s) || s < 0)
        s = 0;
    if (s < 60)
        snprintf(out, n, "%.1fs", s);
    else if (s < 3600)
        snprintf(out, n, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(out, n, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void on_progress(const dg_train_progress *p, void *user)
{
    progress *pr = user;
    if (cli_follower())
        return;
    /* After --restore the steps are numbered on from the checkpoint; the
     * rate counts only the steps this process ran. */
    if (pr->base < 0)
        pr->base = p->step - 1;
    double ran = (double)(p->step - pr->base);
    double rate = p->elapsed_s > 0 ? ran / p->elapsed_s : 0.0;
    if (pr->tty) {
        int last = p->step >= p->steps;
        if (!last && pr->drawn && p->elapsed_s - pr->last_draw < 0.1)
            return;
        pr->last_draw = p->elapsed_s;
        pr->drawn = 1;
        char left[32];
        fmt_left(rate > 0 ? (double)(p->steps - p->step) / rate : 0, left, sizeof left);
        fprintf(stderr, "\rstep %lld/%lld loss %.4f (%.1f steps/s, %s left)\033[K",
                (long long)p->step, (long long)p->steps, p->loss, rate, left);
        pr->open = !last;
        if (last)
            fputc('\n', stderr);
        fflush(stderr);
        return;
    }
    if (p->step % pr->log_every == 0 || p->step >= p->steps) {
        fprintf(stderr, "step %lld/%lld loss %.4f (%.1f steps/s)\n",
                (long long)p->step, (long long)p->steps, p->loss, rate);
        fflush(stderr);
    }
}

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
        if (strcmp(info.name, name) == 0)
            return !info.generated;
    }
    return 0;
}

static void render(const cli_args *a, const cli_ctx *c, const dg_session *s,
                   const dg_train_result *r, cli_buf *b)
{
    if (a->json) {
        cli_buf_addf(b, "{\"steps\": %lld, \"loss\": ", (long long)r->steps);
        cli_json_number(b, r->loss);
        cli_buf_add(b, ", \"variables\": {");
        for (int i = 0, k = 0; i < r->n_variables; i++) {
            if (!model_variable(c->prog, r->variables[i].name))
                continue;
            cli_buf_add(b, k++ ? ", " : "");
            cli_buf_json_str(b, r->variables[i].name);
            cli_buf_add(b, ": ");
            cli_tensor_json(b, r->variables[i].value);
        }
        cli_buf_add(b, "}");
        if (r->eval) {
            cli_buf_add(b, ", \"eval\": {");
            for (int i = 0; i < r->n_eval; i++) {
                cli_buf_add(b, i ? ", " : "");
                cli_buf_json_str(b, r->eval[i].name);
                cli_buf_add(b, ": ");
                cli_tensor_json_value(b, r->eval[i].value);
            }
            cli_buf_add(b, "}");
        }
        cli_memory_json(a, c, s, 0, b);
        cli_buf_add(b, "}\n");
        return;
    }
    char ls[64];
    cli_fmt_shortest(r->loss, (double)(float)r->loss == r->loss, ls, sizeof ls);
    cli_buf_addf(b, "steps = %lld\nloss = %s\n", (long long)r->steps, ls);
    for (int i = 0; i < r->n_eval; i++) {
        cli_buf_addf(b, "eval/%s = ", r->eval[i].name);
        cli_tensor_text(b, r->eval[i].value);
        cli_buf_add(b, "\n");
    }
}

int cmd_train(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    cli_ctx c;
    dg_session *s = NULL;
    dg_train_result r;
    memset(&r, 0, sizeof r);
    int have_result = 0, code = 0;
    cli_buf b;
    cli_buf_init(&b);
    dg_options o = a->opt;
    o.train_mode = 1;
    cli_args a2 = *a;
    a2.opt = o;
    progress pr;
    memset(&pr, 0, sizeof pr);

    if (cli_compile(&a2, &c, &err) || cli_log_placement(a, &c, &err))
        goto fail;
    pr = (progress){isatty(STDERR_FILENO), log_every_of(a, &c), 0.0, 0, 0, -1};
    s = dg_session_new(c.prog, &o, &err);
    if (!s)
        goto fail;
    if (dg_session_train(s, on_progress, &pr, &r, &err))
        goto fail;
    have_result = 1;
    if (o.trace_path && dg_session_write_trace(s, &err))
        goto fail;
    cli_memory_report(a, &c, s);
    render(a, &c, s, &r, &b);
    if (cli_buf_print(&b, "formatting the results", &err))
        goto fail;
    goto done;
fail:
    if (pr.open) /* end the progress line so the error gets its own */
        fputc('\n', stderr);
    code = cli_fail(a, &err, DG_E_RUNTIME);
done:
    cli_buf_free(&b);
    if (have_result)
        dg_train_result_free(&r);
    if (s)
        dg_session_free(s);
    cli_ctx_free(&c);
    return code;
}
