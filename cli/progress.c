/*
 * progress.c -- training progress and the kernel-build notice on stderr
 * (see progress.h).  The rate is (steps, seconds) over the last samples of
 * a window that starts after the first step of this process (start-up,
 * lazy kernel builds, first allocations) and restarts after every kernel
 * build; until it spans 20 steps or a second no time left is shown, and
 * before a step was measured the line says "measuring speed".
 */
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dg_alloc.h"
#include "cli.h"

#define SAMPLE_EVERY 0.1  /* seconds between window samples */
#define MEANINGFUL_STEPS 20
#define MEANINGFUL_SECONDS 1.0
#define BUILD_NOTICE_AFTER 1.0 /* default seconds of building before the notice */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- kernel builds --------------------------------------------------------- */

static void announce_locked(cli_progress *p)
{
    if (p->open)
        fputc('\n', p->err);
    p->open = 0;
    p->drawn = 0;
    fprintf(p->err, "building OpenCL kernels for %s (first run only: they "
            "are cached in %s afterwards)...\n", p->device, p->cache_dir);
    fflush(p->err);
    p->announced = 1;
}

/* The watcher: says that kernels are being built once they have taken a
 * second, and, when a stop signal has not ended the command within half a
 * second (a long step, a kernel build), that it will stop after the step
 * in progress.  Wakes at least every 0.1 s. */
static void *watch(void *arg)
{
    cli_progress *p = arg;
    double stop_seen = 0;
    int stop_said = 0;
    pthread_mutex_lock(&p->mu);
    while (!p->quit) {
        double wait = 0.1;
        /* the notice is for a person waiting at a terminal: on a pipe,
         * stderr stays what scripts expect (a cold cache is no error) */
        if (p->building && !p->announced && p->tty) {
            double spent = p->build_total + (now_s() - p->build_start);
            if (spent >= p->notice_after)
                announce_locked(p);
            else if (p->notice_after - spent < wait)
                wait = p->notice_after - spent + 0.001;
        }
        if (cli_interrupt_signal() && !stop_said) {
            if (stop_seen == 0) {
                stop_seen = now_s();
            } else if (now_s() - stop_seen >= 0.5) {
                if (p->open)
                    fputc('\n', p->err);
                p->open = 0;
                p->drawn = 0;
                fputs("dgrun: stopping after the step in progress (send the "
                      "signal again to stop at once)\n", p->err);
                fflush(p->err);
                stop_said = 1;
            }
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double wake = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + wait;
        ts.tv_sec = (time_t)wake;
        ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void on_build(const dg_build_event *e, void *user)
{
    cli_progress *p = user;
    pthread_mutex_lock(&p->mu);
    if (e->begin) {
        if (p->building++ == 0)
            p->build_start = now_s();
        snprintf(p->device, sizeof p->device, "%s", e->device);
        snprintf(p->cache_dir, sizeof p->cache_dir, "%s", e->cache_dir);
        if (p->notice_after <= 0 && !p->announced && p->tty)
            announce_locked(p); /* no threshold: say it at the first build */
    } else if (p->building > 0 && --p->building == 0) {
        p->build_total += now_s() - p->build_start;
    }
    if (!e->begin)
        p->builds_seen++;
    if (!e->begin && p->debug_opencl) {
        /* DGRUN_DEBUG=opencl: what the device compiler said */
        const char *out = e->output && *e->output ? e->output : "(nothing)\n";
        if (p->open)
            fputc('\n', p->err);
        p->open = 0;
        p->drawn = 0;
        fprintf(p->err, "dgrun: debug: OpenCL build of %s for %s:\n%s%s",
                e->what, e->device, out,
                out[strlen(out) - 1] == '\n' ? "" : "\n");
        fflush(p->err);
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void cli_progress_init(cli_progress *p, int tty, int64_t log_every,
                       dg_options *o)
{
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->tty = tty && !cli_follower();
    p->log_every = log_every > 0 ? log_every : 100;
    p->first_step = -1;
    p->t0 = now_s();
    p->notice_after = BUILD_NOTICE_AFTER;
    const char *na = getenv("DGRUN_BUILD_NOTICE_AFTER");
    if (na && *na) {
        char *end;
        double v = strtod(na, &end);
        if (!*end && v >= 0 && v < 1e6)
            p->notice_after = v;
    }
    int efd = dup(STDERR_FILENO);
    p->err = efd >= 0 ? fdopen(efd, "w") : NULL;
    if (!p->err) {
        if (efd >= 0)
            close(efd);
        p->err = stderr;
    }
    p->debug_opencl = cli_debug("opencl");
    o->on_build = on_build;
    o->on_build_user = p;
    p->th_started = pthread_create(&p->th, NULL, watch, p) == 0;
}

void cli_progress_done(cli_progress *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->cv);
    int started = p->th_started;
    pthread_mutex_unlock(&p->mu);
    if (started)
        pthread_join(p->th, NULL);
    p->th_started = 0;
    if (p->err && p->err != stderr)
        fclose(p->err);
    p->err = stderr;
}

void cli_progress_close_line(cli_progress *p)
{
    pthread_mutex_lock(&p->mu);
    if (p->err)
        fflush(p->err);
    if (p->open)
        fputc('\n', stderr);
    p->open = 0;
    fflush(stderr);
    pthread_mutex_unlock(&p->mu);
}

/* ---- the rate ---------------------------------------------------------------- */

static void window_restart(cli_progress *p, int64_t step, double t)
{
    p->wn = 1;
    p->wh = 0;
    p->ws[0] = step;
    p->wt[0] = t;
    p->origin_step = step;
    p->origin_t = t;
    p->have_origin = 1;
}

static void window_add(cli_progress *p, int64_t step, double t)
{
    int last = (p->wh + p->wn - 1) % CLI_RATE_SAMPLES;
    if (t - p->wt[last] < SAMPLE_EVERY)
        return;
    if (p->wn < CLI_RATE_SAMPLES) {
        int at = (p->wh + p->wn) % CLI_RATE_SAMPLES;
        p->ws[at] = step;
        p->wt[at] = t;
        p->wn++;
    } else { /* overwrite the oldest */
        p->ws[p->wh] = step;
        p->wt[p->wh] = t;
        p->wh = (p->wh + 1) % CLI_RATE_SAMPLES;
    }
}

/* Steps per second at (step, t) into *rate.  Returns 2 when the window
 * is meaningful (time left may be shown), 1 when a rate was measured but
 * over too little to predict from, 0 when nothing was measured yet (the
 * first step; at the last step the plain average is given then, 1).  At
 * the last step the whole measured stretch counts. */
static int rate_at(cli_progress *p, int64_t step, double t, int last,
                   double *rate)
{
    *rate = 0.0;
    if (!p->have_origin || step <= p->origin_step || t <= p->origin_t) {
        /* nothing measured after the first step: the plain average */
        double el = t - p->t0;
        int64_t ran = step - p->first_step + 1;
        *rate = el > 0 ? (double)ran / el : 0.0;
        return last ? 2 : 0;
    }
    if (last) {
        *rate = (double)(step - p->origin_step) / (t - p->origin_t);
        return 2;
    }
    int64_t s0 = p->ws[p->wh];
    double t0 = p->wt[p->wh];
    if (t <= t0)
        return 0;
    *rate = (double)(step - s0) / (t - t0);
    return step - p->origin_step >= MEANINGFUL_STEPS ||
                   t - p->origin_t >= MEANINGFUL_SECONDS
               ? 2
               : 1;
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

void cli_progress_step(const dg_train_progress *tp, void *user)
{
    cli_progress *p = user;
    cli_interrupt_step_ended();
    if (cli_follower()) /* a cluster's progress comes from rank 0 */
        return;
    double t = now_s();
    pthread_mutex_lock(&p->mu);
    if (p->first_step < 0) {
        /* the first step of this process (after --restore the steps are
         * numbered on from the checkpoint) is start-up: not measured */
        p->first_step = tp->step;
        p->builds_used = p->builds_seen;
        window_restart(p, tp->step, t);
    } else if (p->building || p->builds_seen != p->builds_used) {
        /* a kernel build ran during this step: measure from here */
        p->builds_used = p->builds_seen;
        window_restart(p, tp->step, t);
    } else {
        window_add(p, tp->step, t);
    }
    int last = tp->step >= tp->steps;
    double rate;
    int known = rate_at(p, tp->step, t, last, &rate);
    if (p->tty) {
        if (!last && p->drawn && t - p->last_draw < 0.1)
            goto out;
        p->last_draw = t;
        p->drawn = 1;
        if (known == 2) {
            char left[32];
            fmt_left(rate > 0 ? (double)(tp->steps - tp->step) / rate : 0,
                     left, sizeof left);
            char ex[64] = ""; /* global rates of replicas (SPEC 8.4) */
            if (tp->replicas > 1)
                snprintf(ex, sizeof ex, ", %.0f examples/s",
                         rate * (double)tp->examples);
            fprintf(stderr, "\rstep %lld/%lld loss %.4f (%.1f steps/s%s, %s "
                    "left)\033[K", (long long)tp->step, (long long)tp->steps,
                    tp->loss, rate, ex, left);
        } else if (known == 1) { /* a rate, but no prediction from it */
            fprintf(stderr, "\rstep %lld/%lld loss %.4f (%.1f steps/s, "
                    "measuring)\033[K", (long long)tp->step,
                    (long long)tp->steps, tp->loss, rate);
        } else {
            fprintf(stderr, "\rstep %lld/%lld loss %.4f (measuring speed)"
                    "\033[K", (long long)tp->step, (long long)tp->steps,
                    tp->loss);
        }
        p->open = !last;
        if (last)
            fputc('\n', stderr);
        fflush(stderr);
        goto out;
    }
    if (tp->step % p->log_every == 0 || last) {
        if (known && tp->replicas > 1) /* global rates (SPEC 8.4) */
            fprintf(stderr, "step %lld/%lld loss %.4f (%.1f steps/s, %.0f "
                    "examples/s over %d replicas)\n", (long long)tp->step,
                    (long long)tp->steps, tp->loss, rate,
                    rate * (double)tp->examples, tp->replicas);
        else if (known)
            fprintf(stderr, "step %lld/%lld loss %.4f (%.1f steps/s)\n",
                    (long long)tp->step, (long long)tp->steps, tp->loss, rate);
        else
            fprintf(stderr, "step %lld/%lld loss %.4f (measuring speed)\n",
                    (long long)tp->step, (long long)tp->steps, tp->loss);
        fflush(stderr);
    }
out:
    pthread_mutex_unlock(&p->mu);
}

/* ---- DGRUN_DEBUG ---------------------------------------------------------------- */

int cli_debug(const char *topic)
{
    const char *d = getenv("DGRUN_DEBUG");
    size_t n = strlen(topic);
    while (d && *d) {
        size_t l = strcspn(d, ",");
        if ((l == n && strncmp(d, topic, n) == 0) ||
            (l == 3 && strncmp(d, "all", 3) == 0))
            return 1;
        d += l + (d[l] == ',');
    }
    return 0;
}

/* ---- signals ------------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;
static unsigned stop_grace = 10; /* seconds a step may run on after it */
static char unsaved[256] = "the work in progress was not finished";

/* write(2) of a NUL-terminated string: async-signal-safe */
static int say_fd = STDERR_FILENO; /* a dup: fd 2 may be captured then */

static void say(const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(say_fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void on_signal(int sig)
{
    if (stop_flag) { /* a second one: stop now, with SPEC's exit code */
        say("\ndgrun: stopped at once by a second signal; ");
        say(unsaved);
        say("\n");
        _exit(128 + sig);
    }
    stop_flag = sig;
    /* a step that never ends (a hung device) must not keep the process:
     * SIGALRM ends it after the grace period (issue 25) */
    if (stop_grace)
        alarm(stop_grace);
}

static void on_alarm(int sig)
{
    (void)sig;
    if (!stop_flag)
        return;
    char secs[16]; /* stop_grace in decimal, by hand: no stdio here */
    unsigned v = stop_grace;
    int i = (int)sizeof secs - 1;
    secs[i] = '\0';
    do {
        secs[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    say("\ndgrun: the step in progress did not end within ");
    say(secs + i);
    say(" s of the signal: stopped without finishing it; ");
    say(unsaved);
    say("\n");
    _exit(128 + stop_flag);
}

void cli_interrupt_unsaved(const char *what)
{
    snprintf(unsaved, sizeof unsaved, "%s", what);
}

void cli_interrupt_step_ended(void)
{
    if (stop_flag)
        alarm(0); /* the step ended: the command finishes by itself */
}

/* Started by an MPI launcher (mpirun, srun): the launcher owns signals.
 * It forwards Ctrl-C as SIGTERM and, when one rank aborts, terminates the
 * others: a rank must then die at once, not finish its step waiting for a
 * peer that is gone (SPEC 8.3: no rank hangs). */
void cli_interrupt_install(dg_options *o)
{
    if (dg_cluster_launched())
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    int fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd >= 0)
        say_fd = fd;
    const char *g = getenv("DGRUN_STOP_GRACE");
    if (g && *g) {
        char *end;
        long v = strtol(g, &end, 10);
        if (!*end && v >= 0 && v <= 86400)
            stop_grace = (unsigned)v;
    }
    o->stop = &stop_flag;
}

int cli_interrupt_signal(void)
{
    return stop_flag;
}

int cli_interrupt_exit_code(void)
{
    cli_interrupt_step_ended();
    return stop_flag ? 128 + stop_flag : 0;
}
