/*
 * bench_compile.c -- compile-only speed (issue: 1,000,000 nodes in <= 2 s).
 *
 * usage: bench_compile GRAPH [GRAPH ...] [--runs N] [--assume-gpus N]
 *
 * For each graph: loads it (dg_graph_load: JSON parse, validation, shape
 * inference) and compiles it (dg_compile: passes, placement, transfers) N
 * times, and prints the median time of each phase in seconds and in µs per
 * node.  Given a small and a 10x larger graph, also prints the scaling
 * ratio of the larger to the smaller total (the goal: at most 12 for 10x).
 * CPU time (this process) is printed too: on a machine shared with other
 * work it is a steadier figure than wall time.
 */
#include "dgrun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_median.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int runs = 3, gpus = 4;
    const char *paths[16];
    int n_paths = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--assume-gpus") && i + 1 < argc)
            gpus = atoi(argv[++i]);
        else if (n_paths < 16)
            paths[n_paths++] = argv[i];
    }
    if (!n_paths || runs < 1 || runs > 100) {
        fprintf(stderr, "usage: bench_compile GRAPH... [--runs N] [--assume-gpus N]\n");
        return 2;
    }
    double totals[16];
    for (int p = 0; p < n_paths; p++) {
        double load[100], comp[100], cload[100], ccomp[100];
        int nodes = 0;
        for (int r = 0; r < runs; r++) {
            dg_error err = {0};
            dg_options o;
            dg_options_init(&o);
            dg_device_list *devs = NULL;
            if (dg_devices_assume(gpus, &devs, &err) != DG_OK) {
                fprintf(stderr, "%s\n", err.msg);
                return 1;
            }
            double c0 = cpu_s(), t0 = now_s();
            dg_graph *g = dg_graph_load(paths[p], NULL, 0, &err);
            double t1 = now_s(), c1 = cpu_s();
            if (!g) {
                fprintf(stderr, "%s: %s\n", paths[p], err.msg);
                return 1;
            }
            dg_program *prog = dg_compile(g, &o, devs, &err);
            double t2 = now_s(), c2 = cpu_s();
            if (!prog) {
                fprintf(stderr, "%s: %s\n", paths[p], err.msg);
                return 1;
            }
            nodes = dg_program_node_count(prog);
            load[r] = t1 - t0;
            comp[r] = t2 - t1;
            cload[r] = c1 - c0;
            ccomp[r] = c2 - c1;
            dg_program_free(prog);
            dg_devices_free(devs);
        }
        double l = bench_median(load, runs), c = bench_median(comp, runs);
        double cl = bench_median(cload, runs), cc = bench_median(ccomp, runs);
        totals[p] = l + c;
        printf("%s: %d nodes: load %.3f s (%.3f us/node), compile+place %.3f s "
               "(%.3f us/node), total %.3f s; cpu: load %.3f s, compile+place "
               "%.3f s\n",
               paths[p], nodes, l, l * 1e6 / nodes, c, c * 1e6 / nodes, l + c,
               cl, cc);
    }
    for (int p = 1; p < n_paths; p++)
        printf("ratio %s / %s: %.2f\n", paths[p], paths[0], totals[p] / totals[0]);
    return 0;
}
