/*
 * cli.h -- what dgrun's command files share: error reporting with the
 * "dgrun: error: <file>: " prefix, the GRAPH (a path or "-" for stdin)
 * load -> devices -> compile pipeline, atomic file output, and the
 * entry point of each command.
 */
#ifndef DG_CLI_H
#define DG_CLI_H

#include <stddef.h>

#include "args.h"
#include "dg_error.h"
#include "dg_util.h"
#include "dgrun.h"

/* Print `dgrun: error: <graph>: <err->msg>` (or without the graph part when
 * the command has none) on stderr and return the exit code for err->code. */
int cli_report(const cli_args *a, const dg_error *err);
/* cli_report after giving err the code dflt when nothing set one (a step
 * that failed without filling err); returns the exit code. */
int cli_fail(const cli_args *a, dg_error *err, dg_status dflt);

/* The graph's display name: the path, or "<stdin>" for "-". */
const char *cli_graph_name(const cli_args *a);

/* The GRAPH text on standard input, which may never end (`yes | dgrun
 * check -`): text that does not start like JSON ('{' or '[' after blanks
 * and a UTF-8 BOM) is refused as soon as its first bytes arrive, and more than
 * $DGRUN_STDIN_MAX bytes (default 1 GiB) is refused when reached; both
 * DG_E_GRAPH (exit 2).  Other read failures: DG_E_NOMEM / DG_E_IO. */
dg_status cli_read_graph_stdin(char **text, size_t *len, dg_error *err);

/* Write `len` bytes to `path` atomically: a temporary file in the same
 * directory, flushed and renamed over `path`; on any failure the temporary
 * is removed and `path` is untouched (DG_E_IO naming the path). */
dg_status cli_write_atomic(const char *path, const char *data, size_t len,
                           dg_error *err);

/* 1 in a cluster process other than rank 0, whose output rank 0 prints
 * (SPEC 8.3): results, the placement log, progress, memory reports. */
int cli_follower(void);

/* Write n bytes to stdout and flush; DG_E_IO when that fails (nothing on
 * a follower). */
dg_status cli_stdout(const char *s, size_t n, dg_error *err);
/* Write a command's output buffer to stdout (cli_stdout); DG_E_NOMEM
 * "out of memory <doing>" when the buffer latched an allocation failure. */
dg_status cli_sbuf_print(const dg_sbuf *b, const char *doing,
                         dg_error *err);

/* Everything a compiling command holds. */
typedef struct cli_ctx {
    char *text;            /* graph text read from stdin (or NULL) */
    size_t text_len;
    dg_device_list *devs;
    dg_program *prog;
} cli_ctx;

/* Load GRAPH, pick devices (dg_devices_assume with --assume-gpus, otherwise
 * dg_devices_discover) and compile.  For a cluster graph (SPEC 8), run,
 * train and profile first dg_cluster_join (the MPI job; outside one the
 * exit-2 "start it with mpirun -np N"), compile against the ranks'
 * exchanged devices and compare the program across ranks; place and check
 * use cli_cluster_devices'.  On
 * failure err is filled and whatever was built is released by
 * cli_ctx_free. */
dg_status cli_compile(const cli_args *a, cli_ctx *c, dg_error *err);
void cli_ctx_free(cli_ctx *c);

/* Append to a placement error (SPEC 4.7's text stays as it is) a hint in
 * the same line, " (hint: ...)", naming the flag that would help
 * (cli_compile does it when stderr is a terminal: scripts and the SPEC's
 * acceptance tests read the exact text):
 * --allow-soft-placement, --opencl-devices all (run/train/profile with no
 * GPU found) or --assume-gpus N (place/check). */
void cli_placement_hint(const cli_args *a, const dg_device_list *devs,
                        dg_error *err);

/* Replace *devs, this machine's devices, by the cluster-wide list of c
 * with every task having them (SPEC 8.1: how place/check compile a whole
 * cluster on one machine).  *devs is freed either way on success; on
 * failure it is left as it was. */
dg_status cli_cluster_devices(const dg_cluster *c, dg_device_list **devs,
                              dg_error *err);

/* Print the placement log (SPEC 5) on stderr if --log-device-placement. */
dg_status cli_log_placement(const cli_args *a, const cli_ctx *c,
                            dg_error *err);

/* --memory in text mode (not --json): one stderr line per device of the
 * program, `peak memory <device>: <bytes> bytes (<MiB> MiB)`, from
 * dg_session_peak_bytes.  Does nothing without --memory or with --json. */
void cli_memory_report(const cli_args *a, const cli_ctx *c,
                       const dg_session *s);

/* --memory with --json: append `"_memory": {"<device>": {"peak_bytes": n},
 * ...}` to b, preceded by ", " unless `first` (the key opens the object).
 * Does nothing without both --memory and --json. */
void cli_memory_json(const cli_args *a, const cli_ctx *c, const dg_session *s,
                     int first, dg_sbuf *b);

/* train's results on stdout (text, or SPEC's JSON with --json) into b;
 * profile --train prints the same text. */
void cli_train_render(const cli_args *a, const cli_ctx *c, const dg_session *s,
                      const dg_train_result *r, struct dg_sbuf *b);
/* The stderr line of a training ended by SIGINT/SIGTERM: the step reached,
 * the checkpoint written and the command that resumes (--restore). */
void cli_train_interrupted(const cli_args *a, const dg_train_result *r);

/* Commands: each returns the process exit code and prints its own errors. */
int cmd_run(const cli_args *a);
int cmd_train(const cli_args *a);
int cmd_profile(const cli_args *a);
int cmd_place(const cli_args *a);
int cmd_check(const cli_args *a);
int cmd_devices(const cli_args *a);
int cmd_ops(const cli_args *a);

#endif
