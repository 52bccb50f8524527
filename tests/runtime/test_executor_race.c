/*
 * test_executor_race.c -- the executor's concurrency under every shape of
 * parallelism at once, written for ThreadSanitizer (scripts/test.sh runs it
 * in build-tsan/) but checking results too: random DAGs whose nodes are
 * pinned at random to CPU:0, GPU:0 and GPU:1 (two PoCL devices: transfers
 * both ways and between the GPUs, cross-device waits) run with 1-4
 * inter-op threads (1 or 2 intra-op threads) x 1-4 OpenCL queues per
 * device, four steps per session (buffer reuse, the caching allocators),
 * and must equal the same graph run on CPU:0 alone.  Run with POCL_DEVICES="pthread pthread"; skipped with
 * fewer than two OpenCL devices.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dgrun.h"
#include "dag_testlib.h"

static const char *const MIXED[] = {"/cpu:0", "/gpu:0", "/gpu:1"};
static const char *const CPU_ONLY[] = {"/cpu:0"};

static void base_options(dg_options *o)
{
    dg_options_init(o);
    o->opencl_devices = "all";
    o->intra_op_threads = 1;
    o->seed = 11;
}

/* Fail unless the program of text places nodes on all three devices (the
 * pins are honoured, so the test really spans them). */
static void check_spread(const char *text, const dg_options *o,
                         const dg_device_list *dl)
{
    dg_error err;
    dg_graph *g = dg_graph_load("dag.json", text, strlen(text), &err);
    assert_non_null(g);
    dg_program *p = dg_compile(g, o, dl, &err);
    assert_non_null(p);
    int on[3] = {0, 0, 0};
    for (int i = 0; i < dg_program_node_count(p); i++) {
        dg_node_info ni;
        dg_program_node(p, i, &ni);
        on[0] += strstr(ni.device, "CPU:0") != NULL;
        on[1] += strstr(ni.device, "GPU:0") != NULL;
        on[2] += strstr(ni.device, "GPU:1") != NULL;
    }
    assert_true(on[0] > 0 && on[1] > 0 && on[2] > 0);
    dg_program_free(p);
}

/* Every (threads, queues) pair in 1..4 x 1..4, four graphs each covering
 * four pairs (a Latin square: each graph sees every thread count and every
 * queue count once). */
static void test_random_dags_threads_queues_two_gpus(void **state)
{
    (void)state;
    dg_options o;
    base_options(&o);
    dg_error err;
    dg_device_list *dl = NULL;
    if (dg_devices_discover(&o, &dl, &err) != DG_OK ||
        dg_devices_count(dl) < 3) {
        dg_devices_free(dl);
        skip();
    }
    for (int gi = 0; gi < 4; gi++) {
        /* same seed and draws: the same DAG, pinned to CPU:0 only */
        dag_spec sp = {300 + (uint64_t)gi, 40, 2 + 2 * gi, 4096 << gi,
                       CPU_ONLY, 1, NULL};
        char *ref_text = dag_graph(&sp);
        o.inter_op_threads = 2;
        dag_results want = dag_run(ref_text, &o, dl, 1);
        sp.devices = MIXED;
        sp.n_devices = 3;
        char *text = dag_graph(&sp);
        check_spread(text, &o, dl);
        for (int k = 0; k < 4; k++) {
            int threads = 1 + k, queues = 1 + (gi + k) % 4;
            o.inter_op_threads = threads;
            o.intra_op_threads = 1 + k % 2; /* CPU kernels' parallel_for too */
            dag_set_queues(queues);
            dag_results got = dag_run(text, &o, dl, 4);
            char what[96];
            snprintf(what, sizeof what, "graph %d, %d thread(s), %d queue(s)",
                     gi, threads, queues);
            dag_compare(&got, &want, what);
            dag_results_free(&got);
        }
        dag_results_free(&want);
        free(text);
        free(ref_text);
    }
    dag_set_queues(0);
    dg_devices_free(dl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_dags_threads_queues_two_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
