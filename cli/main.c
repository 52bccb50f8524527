/*
 * main.c -- dgrun's entry point: parse the command line, print help or the
 * version, or dispatch to the command.  Only this layer prints and exits.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"

int main(int argc, char **argv)
{
    cli_args a;
    char why[512];
    if (cli_parse(argc, argv, &a, why, sizeof why)) {
        fprintf(stderr, "dgrun: error: %s\n", why);
        cli_args_free(&a);
        return 2;
    }
    int code = 0;
    switch (a.action) {
    case CLI_ACT_HELP:
        fputs(cli_help_text(a.cmd), stdout);
        break;
    case CLI_ACT_VERSION:
        printf("dgrun %s\n", DG_VERSION_STRING);
        break;
    case CLI_ACT_COMMAND:
        switch (a.cmd) {
        case CLI_RUN: code = cmd_run(&a); break;
        case CLI_TRAIN: code = cmd_train(&a); break;
        case CLI_PROFILE: code = cmd_profile(&a); break;
        case CLI_PLACE: code = cmd_place(&a); break;
        case CLI_CHECK: code = cmd_check(&a); break;
        case CLI_DEVICES: code = cmd_devices(&a); break;
        case CLI_OPS: code = cmd_ops(&a); break;
        default: code = 2; break;
        }
        break;
    }
    if (a.action != CLI_ACT_COMMAND && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "dgrun: error: cannot write standard output\n");
        code = 1;
    }
    cli_args_free(&a);
    dg_shutdown(); /* OpenCL objects and clBLAST's cache, in order */
    dg_cluster_leave(); /* MPI_Finalize when this process ran a cluster */
    return code;
}
