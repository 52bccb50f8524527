/*
 * dag_testlib.h -- random dataflow graphs for the executor tests
 * (dag_testlib.c): JSON text of a random DAG of elementwise float32 ops
 * with wide fan-out, compiling and running it through the public API, and
 * comparing two runs' fetches.
 */
#ifndef DAG_TESTLIB_H
#define DAG_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include "dgrun.h"

/* What dag_graph builds: two Variables of n_elems float32 (random uniform
 * in [-2, 2]) and n_ops unary/binary ops, each reading one or two of the
 * last `window` nodes.  Every node without a consumer is fetched, and every
 * 7th.  With n_devices > 0 every node is pinned ("device") to one of
 * devices[] drawn at random; `rules`: a placement rules JSON array or NULL.
 * The same spec always gives the same text. */
typedef struct dag_spec {
    uint64_t seed;
    int n_ops, window;
    int64_t n_elems;
    const char *const *devices;
    int n_devices;
    const char *rules;
} dag_spec;

/* The graph's JSON text, malloc'd (free with free()). */
char *dag_graph(const dag_spec *sp);

typedef struct dag_results {
    dg_fetch_result *r;
    int n;
} dag_results;

/* Load text, compile it under o for dl and run it `runs` times, keeping the
 * first run's results; every later run's results must equal them bit for
 * bit (cmocka failure otherwise, as for any load/compile/run error). */
dag_results dag_run(const char *text, const dg_options *o,
                    const dg_device_list *dl, int runs);

/* Fail the test unless got's fetches equal want's within a relative 1e-4
 * (of the largest magnitude, at least 1); `what` names the case. */
void dag_compare(const dag_results *got, const dag_results *want,
                 const char *what);

void dag_results_free(dag_results *r);

/* Append printf output (under 512 bytes) to the malloc'd string *s of
 * *len characters in *cap bytes, growing it. */
void dag_cat(char **s, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Set DGRUN_CL_QUEUES to q (0: unset it). */
void dag_set_queues(int q);

#endif
