/*
 * prepare.c -- the shared front half of every graph command: error lines,
 * GRAPH loading (stdin included), device selection and compilation, and the
 * --log-device-placement output.
 */
#include "cli.h"
#include "output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dg_alloc.h"
#include "dg_io.h"

const char *cli_graph_name(const cli_args *a)
{
    if (!a->graph)
        return NULL;
    return strcmp(a->graph, "-") ? a->graph : "<stdin>";
}

int cli_follower(void)
{
    return dg_cluster_rank() > 0;
}

int cli_report(const cli_args *a, const dg_error *err)
{
    const char *file = cli_graph_name(a);
    const char *msg = err->msg[0] ? err->msg : "unknown error";
    int code = dg_status_exit_code(err->code);
    code = code ? code : 1;
    /* In a cluster (SPEC 8.3) the line names the task; a failure every
     * rank knows is printed once (rank 0) and each leaves with the code;
     * any other ends the whole job with it. */
    int rank = dg_cluster_rank();
    int together = dg_cluster_failed_together();
    char task[128] = "";
    if (rank >= 0)
        snprintf(task, sizeof task, "[%s] ", dg_cluster_task_name());
    if (together != 2) {
        if (file) {
            size_t fl = strlen(file);
            /* Do not repeat the file when the message starts with it. */
            if (!strncmp(msg, file, fl) && msg[fl] == ':' && msg[fl + 1] == ' ')
                msg += fl + 2;
            fprintf(stderr, "dgrun: error: %s%s: %s\n", task, file, msg);
        } else {
            fprintf(stderr, "dgrun: error: %s%s\n", task, msg);
        }
        fflush(stderr);
    }
    if (rank >= 0 && !together)
        dg_cluster_abort(code);
    return code;
}

int cli_fail(const cli_args *a, dg_error *err, dg_status dflt)
{
    if (!err->code)
        err->code = dflt;
    return cli_report(a, err);
}

dg_status cli_compile(const cli_args *a, cli_ctx *c, dg_error *err)
{
    memset(c, 0, sizeof *c);
    dg_graph *g;
    if (!strcmp(a->graph, "-")) {
        dg_status st = cli_read_graph_stdin(&c->text, &c->text_len, err);
        if (st)
            return st;
        g = dg_graph_load_signature("<stdin>", c->text, c->text_len,
                                    a->signature, err);
    } else {
        g = dg_graph_load_signature(a->graph, NULL, 0, a->signature, err);
    }
    if (!g)
        return err->code ? err->code : DG_E_GRAPH;
    dg_status st = DG_OK;
    const dg_cluster *cl = dg_graph_cluster(g, &a->opt);
    int exec = a->cmd == CLI_RUN || a->cmd == CLI_TRAIN ||
               a->cmd == CLI_PROFILE;
    /* run/train/profile of a cluster: one rank of its MPI job, compiling
     * against every rank's devices (SPEC 8.1, 8.2) */
    if (cl && exec)
        st = dg_cluster_join(cl, NULL, err);
    /* check judges a graph that names no GPU against CPU:0 alone: same
     * verdict, no OpenCL start (docs/decisions.md) */
    int cpu_only = a->cmd == CLI_CHECK && !cl && !dg_graph_names_gpu(g, &a->opt);
    if (!st && (a->opt.assume_gpus >= 0 || cpu_only))
        st = dg_devices_assume(cpu_only && a->opt.assume_gpus < 0
                                   ? 0 : a->opt.assume_gpus, &c->devs, err);
    else if (!st)
        st = dg_devices_discover(&a->opt, &c->devs, err);
    if (!st && cl && exec)
        st = dg_cluster_exchange_devices(cl, &c->devs, err);
    else if (!st && cl)
        st = cli_cluster_devices(cl, &c->devs, err);
    if (st) {
        dg_graph_free(g);
        return st;
    }
    c->prog = dg_compile(g, &a->opt, c->devs, err);
    if (!c->prog) {
        dg_graph_free(g);
        /* SPEC 4.7 fixes the error text scripts read: the hint is for a
         * person at a terminal */
        if (err->code == DG_E_PLACEMENT && isatty(STDERR_FILENO))
            cli_placement_hint(a, c->devs, err);
        return err->code ? err->code : DG_E_GRAPH;
    }
    if (cl && exec)
        return dg_cluster_check_program(c->prog, &a->opt, err);
    return DG_OK;
}

/* Whether the spec quoted after `after` in msg asks for a GPU. */
static int asks_gpu(const char *msg, const char *after)
{
    const char *p = strstr(msg, after);
    if (!p)
        return 0;
    p += strlen(after);
    const char *end = strstr(p, " but ");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    for (size_t i = 0; i + 3 <= n; i++)
        if (!strncmp(p + i, "GPU", 3) || !strncmp(p + i, "gpu", 3))
            return 1;
    return 0;
}

void cli_placement_hint(const cli_args *a, const dg_device_list *devs,
                        dg_error *err)
{
    int gpus = 0;
    for (int i = 0; devs && i < dg_devices_count(devs); i++)
        gpus += dg_devices_get(devs, i)->type == DG_DEV_GPU;
    int compile_only = a->cmd == CLI_PLACE || a->cmd == CLI_CHECK;
    const char *hint = "--allow-soft-placement falls back to a device that "
                       "exists and has the kernels";
    if (strstr(err->msg, "Cannot colocate"))
        hint = "--allow-soft-placement keeps the group together on a device "
               "that fits";
    else if (strstr(err->msg, "Operation was explicitly assigned to") &&
             asks_gpu(err->msg, "Operation was explicitly assigned to ") &&
             gpus == 0)
        hint = compile_only
                   ? "--assume-gpus N compiles as if N GPUs existed; "
                     "--allow-soft-placement falls back to the CPU"
               : a->opt.opencl_devices && strcmp(a->opt.opencl_devices, "all")
                   ? "no GPU was found: --opencl-devices all also uses CPU "
                     "OpenCL devices (PoCL) as GPUs; --allow-soft-placement "
                     "falls back to the CPU"
                   : "no GPU was found: --allow-soft-placement falls back to "
                     "the CPU";
    else if (strstr(err->msg, "no supported kernel for"))
        hint = "--allow-soft-placement runs it on a device that has a kernel "
               "(see dgrun ops)";
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, " (hint: %s)", hint);
}

dg_status cli_cluster_devices(const dg_cluster *c, dg_device_list **devs,
                              dg_error *err)
{
    int n = dg_cluster_task_count(c);
    const dg_device_list **per = dg_malloc(sizeof *per * (size_t)(n ? n : 1));
    if (!per)
        return dg_err(err, DG_E_NOMEM, "out of memory listing the cluster's devices");
    for (int r = 0; r < n; r++)
        per[r] = *devs;
    dg_device_list *all = NULL;
    dg_status st = dg_devices_for_cluster(c, per, &all, err);
    dg_free(per);
    if (st)
        return st;
    dg_devices_free(*devs);
    *devs = all;
    return DG_OK;
}

void cli_ctx_free(cli_ctx *c)
{
    if (c->prog)
        dg_program_free(c->prog);
    if (c->devs)
        dg_devices_free(c->devs);
    dg_free(c->text);
    memset(c, 0, sizeof *c);
}

dg_status cli_log_placement(const cli_args *a, const cli_ctx *c,
                            dg_error *err)
{
    if (!a->log_placement || cli_follower())
        return DG_OK;
    char *text = dg_program_render(c->prog, "text");
    if (!text)
        return dg_err(err, DG_E_NOMEM, "out of memory rendering the placement log");
    fputs(text, stderr);
    if (text[0] && text[strlen(text) - 1] != '\n')
        fputc('\n', stderr);
    fflush(stderr);
    free(text);
    return DG_OK;
}

dg_status cli_stdout(const char *s, size_t n, dg_error *err)
{
    if (cli_follower()) /* a cluster's output comes from rank 0 */
        return DG_OK;
    if (n && fwrite(s, 1, n, stdout) != n)
        return dg_err(err, DG_E_IO, "cannot write standard output");
    if (fflush(stdout) != 0 || ferror(stdout))
        return dg_err(err, DG_E_IO, "cannot write standard output");
    return DG_OK;
}

dg_status cli_sbuf_print(const dg_sbuf *b, const char *doing,
                         dg_error *err)
{
    if (b->oom)
        return dg_err(err, DG_E_NOMEM, "out of memory %s", doing);
    return cli_stdout(b->s ? b->s : "", b->len, err);
}
