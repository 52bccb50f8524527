/*
 * bench_ckpt.c -- how long a checkpoint restore takes (issue 24):
 *
 *   bench_ckpt GRAPH CHECKPOINT [REPEATS]
 *
 * loads and compiles GRAPH for the CPU, opens a session, then times
 * dg_session_restore(CHECKPOINT) REPEATS times (default 5): reading the
 * index, every variable's bytes with their CRC-32C, and the copy into the
 * Variables.  Prints the best and the mean in milliseconds and the bytes
 * restored.  tools/tf_ckpt/bench_load.py runs it beside TensorFlow's
 * readers.
 */
#include "dgrun.h"
#include "dg_io.h"
#include "dg_util.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_ckpt GRAPH CHECKPOINT [REPEATS]\n");
        return 2;
    }
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    dg_error err = {0};
    char *text = NULL;
    size_t len = 0;
    if (dg_read_file(argv[1], &text, &len) != DG_OK) {
        fprintf(stderr, "bench_ckpt: cannot read %s\n", argv[1]);
        return 1;
    }
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "none";
    dg_device_list *devs = NULL;
    dg_graph *g = dg_graph_load(argv[1], text, len, &err);
    dg_program *p = g && dg_devices_assume(0, &devs, &err) == DG_OK
                        ? dg_compile(g, &o, devs, &err) : NULL;
    dg_session *s = p ? dg_session_new(p, &o, &err) : NULL;
    if (!s) {
        fprintf(stderr, "bench_ckpt: %s\n", err.msg);
        return 1;
    }
    double best = 1e30, sum = 0;
    for (int i = 0; i < reps; i++) {
        uint64_t t0 = dg_now_ns();
        if (dg_session_restore(s, argv[2], NULL, &err) != DG_OK) {
            fprintf(stderr, "bench_ckpt: %s\n", err.msg);
            return 1;
        }
        double ms = (double)(dg_now_ns() - t0) * 1e-6;
        best = ms < best ? ms : best;
        sum += ms;
    }
    printf("{\"best_ms\": %.2f, \"mean_ms\": %.2f, \"repeats\": %d}\n", best,
           sum / reps, reps);
    dg_session_free(s);
    return 0;
}
