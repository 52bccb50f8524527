/*
 * args.h -- command-line parsing for dgrun (SPEC section 1).
 *
 * cli_parse turns argv into a cli_args: the command, the GRAPH path, the
 * library's dg_options and the CLI-only switches (-o, --format, --json,
 * --expect, --explain).  Every option is checked against the commands it
 * applies to; numbers are validated; DGRUN_OPENCL_DEVICES and
 * DGRUN_VISIBLE_DEVICES fill the device options when the flags are absent.
 */
#ifndef DG_CLI_ARGS_H
#define DG_CLI_ARGS_H

#include <stddef.h>

#include "dgrun.h"

typedef enum cli_cmd {
    CLI_NONE = 0,
    CLI_RUN,
    CLI_TRAIN,
    CLI_PROFILE,
    CLI_PLACE,
    CLI_CHECK,
    CLI_DEVICES,
    CLI_OPS,
    CLI_CMD_COUNT
} cli_cmd;

typedef enum cli_action {
    CLI_ACT_COMMAND = 0, /* run the command */
    CLI_ACT_HELP,        /* --help (global or per command) */
    CLI_ACT_VERSION      /* --version */
} cli_action;

typedef struct cli_args {
    cli_action action;
    cli_cmd cmd;
    const char *graph;       /* GRAPH argument ("-" = stdin), NULL if none */
    dg_options opt;          /* library options */
    const char *output;      /* -o / --output, NULL if absent */
    const char *format;      /* place --format: "text", "json", "dot" */
    const char *expect;      /* place --expect GOLDEN */
    const char *explain;     /* place --explain NODE */
    const char *signature;   /* --signature KEY (SavedModel), NULL if absent */
    int json;                /* --json */
    int markdown;            /* ops --markdown */
    int log_placement;       /* --log-device-placement */
    int memory;              /* --memory: report peak memory per device */
    /* storage owned by the args (freed by cli_args_free) */
    char *fetch_buf;         /* copy of the --fetch lists, split in place */
    const char **fetch;      /* names pointing into fetch_buf */
    dg_feed_arg *feeds;
    dg_cluster *cluster;     /* --cluster, also in opt.cluster */
} cli_args;

/* Parse argv.  Returns 0 on success, or -1 with a one-line reason (without
 * the "dgrun: error: " prefix) written to `why` (size `why_len`); every
 * failure is a usage error (exit 2).  Strings in `a` point into argv or into
 * storage freed by cli_args_free. */
int cli_parse(int argc, char **argv, cli_args *a, char *why, size_t why_len);

/* Release the storage cli_parse allocated (safe on a zeroed struct). */
void cli_args_free(cli_args *a);

/* Name of a command ("run", ...), "" for CLI_NONE. */
const char *cli_cmd_name(cli_cmd c);

/* Help text for a command (CLI_NONE: the global help); static storage. */
const char *cli_help_text(cli_cmd c);

#endif
