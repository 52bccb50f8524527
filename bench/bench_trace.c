/*
 * bench_trace.c -- tracing overhead: a chain of N elementwise ops on CPU:0
 * (default 20,000) run through the public API (dgrun.h) with and without a
 * trace recorder; prints the median run time of each and their ratio
 * (goal <= 1.15), plus the time to write the trace file.
 *
 * usage: bench_trace [N_OPS] [RUNS] [TRACE_PATH] [INTER_OP_THREADS] [ELEMENTS]
 * (ELEMENTS: float32 values per tensor, default 4)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_check.h"
#include "dgrun.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The graph as JSON text: x = a Variable of `elems` float32 values (so
 * that constant folding cannot remove the chain: bench_check.h), then N
 * ops alternating Neg/Abs. */
static char *chain_graph(int n, int elems)
{
    size_t cap = (size_t)n * 64 + (size_t)elems * 8 + 256, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    len += (size_t)snprintf(s + len, cap - len,
                            "{\"version\": 1, \"nodes\": [\n"
                            "{\"name\": \"n0\", \"op\": \"Variable\", "
                            "\"attrs\": {\"dtype\": \"float32\", "
                            "\"shape\": [%d], \"init\": -2.5}}", elems);
    for (int i = 1; i <= n; i++)
        len += (size_t)snprintf(s + len, cap - len,
                                ",\n{\"name\": \"n%d\", \"op\": \"%s\", "
                                "\"inputs\": [\"n%d\"]}",
                                i, i % 2 ? "Neg" : "Abs", i - 1);
    snprintf(s + len, cap - len, "\n], \"fetch\": [\"n%d\"]}\n", n);
    return s;
}

/* Median seconds per run of the chain; tracing when trace_path != NULL.
 * *write_s gets the time to write the trace. Returns 0 or -1. */
static int inter_op = 0; /* 0 = cores */
static int n_ops;        /* the chain's length, checked after compiling */

static int measure(const char *text, const char *trace_path, int runs,
                   double *median_s, double *write_s)
{
    dg_error err;
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "none";
    o.trace_path = trace_path;
    o.inter_op_threads = inter_op;
    dg_graph *g = dg_graph_load("bench-chain.json", text, strlen(text), &err);
    if (!g) {
        fprintf(stderr, "bench_trace: %s\n", err.msg);
        return -1;
    }
    dg_device_list *devs = NULL;
    if (dg_devices_discover(&o, &devs, &err) != DG_OK) {
        fprintf(stderr, "bench_trace: %s\n", err.msg);
        dg_graph_free(g);
        return -1;
    }
    dg_program *p = dg_compile(g, &o, devs, &err);
    if (!p) {
        fprintf(stderr, "bench_trace: %s\n", err.msg);
        dg_graph_free(g);
        dg_devices_free(devs);
        return -1;
    }
    bench_expect_ops("bench_trace", p, "Neg", (n_ops + 1) / 2);
    bench_expect_ops("bench_trace", p, "Abs", n_ops / 2);
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s) {
        fprintf(stderr, "bench_trace: %s\n", err.msg);
        dg_program_free(p);
        dg_devices_free(devs);
        return -1;
    }
    double *t = calloc((size_t)runs, sizeof *t);
    int rc = t ? 0 : -1;
    for (int r = -1; r < runs && rc == 0; r++) { /* r = -1: warm-up */
        dg_fetch_result *out = NULL;
        int n_out = 0;
        double t0 = now_s();
        if (dg_session_run(s, &out, &n_out, &err) != DG_OK) {
            fprintf(stderr, "bench_trace: %s\n", err.msg);
            rc = -1;
            break;
        }
        double dt = now_s() - t0;
        dg_fetch_results_free(out, n_out);
        if (r >= 0)
            t[r] = dt;
    }
    *write_s = 0;
    if (rc == 0 && trace_path) {
        double t0 = now_s();
        if (dg_session_write_trace(s, &err) != DG_OK) {
            fprintf(stderr, "bench_trace: %s\n", err.msg);
            rc = -1;
        }
        *write_s = now_s() - t0;
    }
    if (rc == 0) {
        qsort(t, (size_t)runs, sizeof *t, cmp_double);
        *median_s = t[runs / 2];
    }
    free(t);
    dg_session_free(s);
    dg_program_free(p);
    dg_devices_free(devs);
    return rc;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    const char *path = argc > 3 ? argv[3] : "/tmp/dgrun_bench_trace.json";
    inter_op = argc > 4 ? atoi(argv[4]) : 0;
    int elems = argc > 5 ? atoi(argv[5]) : 4;
    if (n < 1 || runs < 1 || elems < 1 || elems > 1000000) {
        fprintf(stderr, "usage: bench_trace [N_OPS] [RUNS] [TRACE_PATH] "
                        "[INTER_OP_THREADS] [ELEMENTS]\n");
        return 2;
    }
    n_ops = n;
    char *text = chain_graph(n, elems);
    if (!text)
        return 1;
    double plain = 0, traced = 0, w0 = 0, w1 = 0;
    /* interleave the two configurations to even out machine noise */
    double p1, p2, t1, t2;
    if (measure(text, NULL, runs, &p1, &w0) || measure(text, path, runs, &t1, &w1) ||
        measure(text, NULL, runs, &p2, &w0) || measure(text, path, runs, &t2, &w1)) {
        free(text);
        return 1;
    }
    plain = p1 < p2 ? p1 : p2;
    traced = t1 < t2 ? t1 : t2;
    printf("ops: %d, runs: %d, inter-op threads: %d (median of each, best of "
           "two sessions)\n", n, runs, inter_op);
    printf("untraced: %.3f ms/run (%.1f ns/op)\n", plain * 1e3, plain * 1e9 / n);
    printf("traced:   %.3f ms/run (%.1f ns/op)\n", traced * 1e3, traced * 1e9 / n);
    printf("overhead: %.3fx (goal <= 1.15)\n", plain > 0 ? traced / plain : 0.0);
    printf("trace write: %.3f ms for %d runs x %d ops -> %s\n", w1 * 1e3, runs + 1,
           n, path);
    free(text);
    return 0;
}
