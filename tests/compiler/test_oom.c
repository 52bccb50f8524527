/*
 * test_oom.c -- allocation-failure sweep over the compiler: load a small
 * graph with a gradients entry, a train section (adam, update_ops bound by
 * control edges, colocated gradients), nodes consuming generated ones
 * (g/b, an Adam slot, the train op) and a device request, assume a GPU,
 * compile and render; make the k-th allocation (and every later one) fail
 * for k = 0, 1, 2, ... until the whole pipeline succeeds.  Every failing k
 * must report DG_E_NOMEM (never another code, never a crash), both when
 * every later allocation fails too and when only the k-th fails; leaks are
 * caught by the ASan build's LeakSanitizer.  The same sweep runs over
 * gradients through (nested) while loops and training over a loop.
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

static const char GRAPH[] =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"x\", \"op\": \"Placeholder\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [-1, 3]}},"
    "{\"name\": \"y\", \"op\": \"Placeholder\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [-1, 2]}},"
    "{\"name\": \"w\", \"op\": \"Variable\", \"device\": \"/cpu:0\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [3, 2],"
    " \"init\": {\"random_normal\": {\"mean\": 0, \"stddev\": 0.1}}}},"
    "{\"name\": \"b\", \"op\": \"Variable\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [2], \"init\": [0.5, -0.5]}},"
    "{\"name\": \"steps\", \"op\": \"Variable\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 0,"
    " \"trainable\": false}},"
    "{\"name\": \"one\", \"op\": \"Const\", \"attrs\": {\"value\": 1.0}},"
    "{\"name\": \"count\", \"op\": \"AssignAdd\", \"inputs\": [\"steps\", \"one\"]},"
    "{\"name\": \"mm\", \"op\": \"MatMul\", \"inputs\": [\"x\", \"w\"],"
    " \"device\": \"/gpu:0\"},"
    "{\"name\": \"logits\", \"op\": \"BiasAdd\", \"inputs\": [\"mm\", \"b\"]},"
    "{\"name\": \"act\", \"op\": \"Tanh\", \"inputs\": [\"logits\"]},"
    "{\"name\": \"xent\", \"op\": \"SoftmaxCrossEntropyWithLogits\","
    " \"inputs\": [\"act\", \"y\"]},"
    "{\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"xent\"]},"
    "{\"name\": \"sq\", \"op\": \"Square\", \"inputs\": [\"w\"]},"
    "{\"name\": \"reg\", \"op\": \"Sum\", \"inputs\": [\"sq\"],"
    " \"attrs\": {\"axis\": [0, 1]}},"
    /* nodes consuming generated ones (compiler/pending.c) */
    "{\"name\": \"gsum\", \"op\": \"Add\", \"inputs\": [\"g/b\", \"b\"]},"
    "{\"name\": \"slot\", \"op\": \"Identity\", \"inputs\": [\"b/Adam\","
    " \"^gsum\", \"^train/step\"]}"
    "],"
    "\"gradients\": [{\"name\": \"g\", \"ys\": [\"loss\", \"reg\"],"
    " \"xs\": [\"w\", \"b\"], \"colocate\": true}],"
    "\"collections\": {\"UPDATE_OPS\": [\"count\"]},"
    "\"placement\": {\"rules\": [{\"match\": {\"op\": [\"Tanh\"]},"
    " \"device\": \"/cpu:0\"}]},"
    "\"fetch\": [\"loss\", \"g/w\"],"
    "\"train\": {\"loss\": \"loss\","
    " \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01},"
    " \"steps\": 3, \"update_ops\": \"UPDATE_OPS\", \"colocate_gradients\": true}"
    "}";

/* The graph the sweep compiles: GRAPH unless a test sets it. */
static const char *graph_text = GRAPH;
static size_t graph_len = sizeof GRAPH - 1;

/* One pass of the pipeline; returns the first failing status. */
static dg_status pipeline(const char *format, int train_mode, dg_error *err)
{
    dg_options o;
    dg_options_init(&o);
    o.train_mode = train_mode;
    dg_graph *g = dg_graph_load("oom.json", graph_text, graph_len, err);
    if (!g)
        return err->code;
    dg_device_list *devs = NULL;
    dg_status st = dg_devices_assume(1, &devs, err);
    if (st != DG_OK) {
        dg_graph_free(g);
        return st;
    }
    dg_program *p = dg_compile(g, &o, devs, err);
    if (!p) {
        dg_graph_free(g);
        dg_devices_free(devs);
        return err->code;
    }
    char *text = dg_program_render(p, format);
    if (!text) {
        st = DG_E_NOMEM;
    } else {
        st = DG_OK;
        free(text);
    }
    dg_program_free(p);
    dg_devices_free(devs);
    return st;
}

/* once = 0: the k-th allocation and all later ones fail; once = 1: only
 * the k-th fails, so the code runs on past the failure. */
static void sweep(const char *format, int train_mode, int once)
{
    dg_error err;
    dg_alloc_fail_after(-1);
    memset(&err, 0, sizeof err);
    unsigned long before = dg_alloc_count();
    assert_int_equal(pipeline(format, train_mode, &err), DG_OK);
    long total = (long)(dg_alloc_count() - before);
    long k;
    for (k = 0; k < 200000; k++) {
        memset(&err, 0, sizeof err);
        if (once)
            dg_alloc_fail_once(k);
        else
            dg_alloc_fail_after(k);
        dg_status st = pipeline(format, train_mode, &err);
        dg_alloc_fail_after(-1);
        if (st == DG_OK)
            break;
        if (st != DG_E_NOMEM)
            fail_msg("k=%ld (%s, train=%d, once=%d): status %d, not "
                     "DG_E_NOMEM: %s", k, format, train_mode, once, (int)st,
                     err.msg);
    }
    print_message("%s train=%d once=%d: succeeded at k=%ld\n", format,
                  train_mode, once, k);
    assert_true(k > 10); /* the pipeline really allocates */
    /* no allocation failure is swallowed: success only once k passes the
     * number of allocations a clean run makes */
    assert_int_equal(k, total);
    assert_true(k < 200000);
}

static void test_oom_compile_train(void **state)
{
    (void)state;
    sweep("json", 1, 0);
}

static void test_oom_once(void **state)
{
    (void)state;
    sweep("json", 1, 1);
}

static void test_oom_compile_run(void **state)
{
    (void)state;
    sweep("dot", 0, 0);
}

static void test_oom_compile_text(void **state)
{
    (void)state;
    sweep("text", 1, 0);
}

/* Gradients through while loops (compiler/grad_loop.c): nested loops,
 * training over a loop, a tf.cond in a loop body. */
static void test_oom_loops(void **state)
{
    (void)state;
    static char buf[3][1 << 17];
    const char *files[3] = {"nested_rnn_grad.json", "while_train.json",
                            "while_cond_grad.json"};
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    for (int i = 0; i < 3; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/tests/data/cflow/%s",
                 root ? root : ".", files[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t n = fread(buf[i], 1, sizeof buf[i], f);
        fclose(f);
        graph_text = buf[i];
        graph_len = n;
        sweep("json", i == 1, 0);
        if (i == 0) /* (the suite's time: one graph in both modes) */
            sweep("json", i == 1, 1);
    }
    graph_text = GRAPH;
    graph_len = sizeof GRAPH - 1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oom_compile_train),
        cmocka_unit_test(test_oom_compile_run),
        cmocka_unit_test(test_oom_compile_text),
        cmocka_unit_test(test_oom_once),
        cmocka_unit_test(test_oom_loops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
