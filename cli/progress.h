/*
 * progress.h -- what run/train/profile show while they work, on stderr:
 * the training progress (an updating line on a terminal, one line every
 * log_every steps otherwise) with a rate measured over a recent window that
 * leaves out start-up, the first step and kernel builds (no time left until
 * that rate means something); the one-time line, on a terminal, that
 * OpenCL kernels are being built; and Ctrl-C / SIGTERM, which only raise the library's stop
 * flag (dg_options.stop) so that the step in progress ends cleanly.
 */
#ifndef DG_CLI_PROGRESS_H
#define DG_CLI_PROGRESS_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "dgrun.h"

#define CLI_RATE_SAMPLES 64

typedef struct cli_progress {
    pthread_mutex_t mu;  /* stderr writes of the progress and the notices */
    int tty;             /* stderr is a terminal: one updating line */
    int64_t log_every;   /* plain lines: every log_every steps and the last */
    int open;            /* an updating line is shown without its newline */
    int drawn;
    double last_draw;
    /* the rate window: (step, time) samples after the first step of this
     * process and after the last kernel build */
    int64_t ws[CLI_RATE_SAMPLES];
    double wt[CLI_RATE_SAMPLES];
    int wn, wh;          /* samples held, index of the oldest */
    int64_t origin_step; /* first sample of the whole measured stretch */
    double origin_t;
    int have_origin;
    int64_t first_step;  /* step of the first report (-1 = none yet) */
    double t0;           /* when the command started */
    /* kernel builds (dg_options.on_build), watched by a thread that says
     * "building OpenCL kernels" once they have taken a second (and that a
     * stop signal will end the command after the step in progress) */
    pthread_t th;
    pthread_cond_t cv;
    int th_started, quit;
    int building;        /* builds in progress */
    double build_start;  /* when the current builds started */
    double build_total;  /* seconds of finished builds */
    double notice_after; /* seconds of building before the notice: 1, or
                            $DGRUN_BUILD_NOTICE_AFTER (tests: 0 = at once) */
    int builds_seen;     /* builds ended (the window restarts after one) */
    int builds_used;     /* builds_seen when the window last restarted */
    int announced;
    char device[128];
    char cache_dir[256];
    /* the watcher's and build messages go to a duplicate of stderr: while a
     * kernel build runs, fd 2 itself is captured by the library (issue 19) */
    FILE *err;
    int debug_opencl;    /* DGRUN_DEBUG names "opencl": show build output */
} cli_progress;

/* Set up progress for a command and hook it into o (on_build).  `tty`:
 * stderr is a terminal; log_every: the graph's train.log_every. */
void cli_progress_init(cli_progress *p, int tty, int64_t log_every,
                       dg_options *o);
/* dg_progress_fn for dg_session_train (user = the cli_progress). */
void cli_progress_step(const dg_train_progress *tp, void *user);
/* End an open updating line (before an error or a final message). */
void cli_progress_close_line(cli_progress *p);
/* Stop the build watcher; call before the session is freed. */
void cli_progress_done(cli_progress *p);


/* Whether DGRUN_DEBUG (a comma list, "all" for everything) names topic
 * ("opencl": what the device compiler printed for each build). */
int cli_debug(const char *topic);

/* Catch SIGINT and SIGTERM: the handler sets the flag o->stop points to.
 * A second signal, or a step still running DGRUN_STOP_GRACE seconds
 * (default 10; 0 = wait forever) after the first, ends the process at
 * once with 128 + the signal, saying on stderr what was not saved (issue
 * 25: a hung device ignored SIGTERM).  Under an MPI launcher nothing is
 * installed: the launcher owns the job's signals. */
void cli_interrupt_install(dg_options *o);
/* What a forced stop leaves unsaved, for its message ("no results were
 * printed"); copied. */
void cli_interrupt_unsaved(const char *what);
/* The step in progress when the signal came has ended: no forced stop. */
void cli_interrupt_step_ended(void);
/* The signal caught (0 = none) and its exit code, 128 + signal. */
int cli_interrupt_signal(void);
int cli_interrupt_exit_code(void);

#endif
