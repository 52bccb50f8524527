/*
 * test_oom_session.c -- allocation-failure sweep over the runtime: compile a
 * small CPU graph (MatMul, gradients, an Adam train section), then make the
 * k-th allocation (and every later one) fail while a session is created,
 * runs its fetches twice and trains three steps, for k = 0, 1, 2, ... until
 * the whole pipeline succeeds.  Every failing k must give DG_E_NOMEM (never
 * another status, never a crash or a hang); leaks are caught by the ASan
 * build's LeakSanitizer.  The same for control-flow graphs (issue 11).  One inter-op and one intra-op thread keep the
 * order of allocations the same from run to run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dgrun.h"
#include "dg_alloc.h"
#include "cpu_backend.h" /* dgr_cpu_cache_trim: each pass starts cold */

static const char GRAPH[] =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"x\", \"op\": \"Const\", \"attrs\": {\"value\": [[1, 2, 3], [4, 5, 6]]}},"
    "{\"name\": \"w\", \"op\": \"Variable\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [3, 2],"
    " \"init\": {\"random_uniform\": {\"min\": -0.5, \"max\": 0.5}}}},"
    "{\"name\": \"mm\", \"op\": \"MatMul\", \"inputs\": [\"x\", \"w\"]},"
    "{\"name\": \"act\", \"op\": \"Tanh\", \"inputs\": [\"mm\"]},"
    "{\"name\": \"sq\", \"op\": \"Square\", \"inputs\": [\"act\"]},"
    "{\"name\": \"loss\", \"op\": \"Sum\", \"inputs\": [\"sq\"]}"
    "],"
    "\"gradients\": [{\"name\": \"g\", \"ys\": [\"loss\"], \"xs\": [\"w\"]}],"
    "\"fetch\": [\"loss\", \"g/w\"],"
    "\"train\": {\"loss\": \"loss\","
    " \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01}, \"steps\": 3}"
    "}";

static dg_status run_all(const dg_program *p, const dg_options *o,
                         int train, dg_error *err)
{
    dg_session *s = dg_session_new(p, o, err);
    if (!s)
        return err->code;
    dg_fetch_result *res = NULL;
    int n = 0;
    dg_status st = dg_session_run(s, &res, &n, err);
    if (st == DG_OK && !train)
        dg_fetch_results_free(res, n);
    else if (st == DG_OK) {
        dg_fetch_results_free(res, n);
        dg_train_result tr;
        memset(&tr, 0, sizeof tr);
        st = dg_session_train(s, NULL, NULL, &tr, err);
        if (st == DG_OK)
            dg_train_result_free(&tr);
    }
    dg_session_free(s);
    return st;
}

/* Sweep graph text `graph` (training it when `train`). */
static void sweep(const char *graph, size_t len, int train)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_options o;
    dg_options_init(&o);
    o.inter_op_threads = 1;
    o.intra_op_threads = 1;
    o.repeat = 2;
    o.opencl_devices = "none";
    dg_graph *g = dg_graph_load("oom.json", graph, len, &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    dg_device_list *devs = NULL;
    assert_int_equal(dg_devices_assume(0, &devs, &err), DG_OK);
    dg_program *p = dg_compile(g, &o, devs, &err);
    if (!p)
        fail_msg("compile: %s", err.msg);
    assert_int_equal(run_all(p, &o, train, &err), DG_OK);
    long k;
    for (k = 0; k < 100000; k++) {
        memset(&err, 0, sizeof err);
        dgr_cpu_cache_trim();
        dg_alloc_fail_after(k);
        dg_status st = run_all(p, &o, train, &err);
        dg_alloc_fail_after(-1);
        if (st == DG_OK)
            break;
        if (st != DG_E_NOMEM)
            fail_msg("k=%ld: status %d, not DG_E_NOMEM: %s", k, (int)st,
                     err.msg);
    }
    print_message("session sweep: succeeded at k=%ld\n", k);
    assert_true(k > 10);
    assert_true(k < 100000);
    dg_program_free(p);
    dg_devices_free(devs);
}

static void test_oom_session(void **state)
{
    (void)state;
    sweep(GRAPH, sizeof GRAPH - 1, 1);
}

/* Control flow (issue 11): a loop with TensorArrays and a stack, and
 * nested loops, from tests/data/cflow. */
static void test_oom_cflow(void **state)
{
    (void)state;
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    if (!root)
        skip();
    const char *files[] = {"tensorarray.json", "nested.json"};
    for (int i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tests/data/cflow/%s", root, files[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static char text[1 << 16];
        size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        assert_true(n > 0 && n < sizeof text);
        sweep(text, n, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oom_session),
        cmocka_unit_test(test_oom_cflow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
