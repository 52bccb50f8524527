/*
 * test_train_order.c -- the training pass orders every Apply* after every
 * reader of its Variable in the step (the loss's forward ops and the
 * generated gradient ops), so a multi-threaded step can never see a
 * half-updated weight: a compile-level check for each optimizer, and a
 * runtime check that training with several inter-op threads gives the same
 * numbers every time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "ops.h"
#include "dg_alloc.h"

/* Two layers: the gradient of h (through mm2) reads w2, so w2's update
 * must wait for it; "other" reads w1 but is not part of the step. */
static const char *graph_text(const char *opt, char *buf, size_t n)
{
    snprintf(buf, n,
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Const\", \"attrs\": {\"value\": "
        "[[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]]}},"
        "{\"name\": \"w1\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": [2, 4], \"init\": {\"random_normal\": "
        "{\"mean\": 0, \"stddev\": 0.5}}}},"
        "{\"name\": \"w2\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": [4, 1], \"init\": {\"random_uniform\": "
        "{\"min\": -1, \"max\": 1}}}},"
        "{\"name\": \"mm1\", \"op\": \"MatMul\", \"inputs\": [\"x\", \"w1\"]},"
        "{\"name\": \"h\", \"op\": \"Tanh\", \"inputs\": [\"mm1\"]},"
        "{\"name\": \"mm2\", \"op\": \"MatMul\", \"inputs\": [\"h\", \"w2\"]},"
        "{\"name\": \"sq\", \"op\": \"Square\", \"inputs\": [\"mm2\"]},"
        "{\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"sq\"]},"
        "{\"name\": \"other\", \"op\": \"Neg\", \"inputs\": [\"w1\"]}"
        "], \"fetch\": [\"loss\"],"
        "\"train\": {\"loss\": \"loss\", \"optimizer\": {\"type\": \"%s\","
        " \"learning_rate\": 0.05%s}, \"steps\": 30}}",
        opt, strcmp(opt, "momentum") == 0 ? ", \"momentum\": 0.9" : "");
    return buf;
}

static dg_program *compile(const char *opt, dg_options *o)
{
    char text[4096];
    dg_error err;
    graph_text(opt, text, sizeof text);
    dg_graph *g = dg_graph_load("order.json", text, strlen(text), &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    dg_device_list *devs = NULL;
    assert_int_equal(dg_devices_assume(0, &devs, &err), DG_OK);
    dg_program *p = dg_compile(g, o, devs, &err);
    if (!p)
        fail_msg("compile: %s", err.msg);
    dg_devices_free(devs);
    return p;
}

static int has_ctrl(const dgc_node *n, int32_t c)
{
    for (int i = 0; i < n->n_ctrl; i++)
        if (n->ctrl[i] == c)
            return 1;
    return 0;
}

static void check_order(const char *opt)
{
    dg_options o;
    dg_options_init(&o);
    o.train_mode = 1;
    dg_program *p = compile(opt, &o);
    const dgc_graph *g = p->g;
    int32_t other = dgc_graph_find(g, "other");
    int32_t w2 = dgc_graph_find(g, "w2");
    assert_true(other >= 0 && w2 >= 0);
    int applies = 0, gated_grad_reader = 0;
    for (int32_t a = 0; a < g->n_nodes; a++) {
        const char *op = dgc_op_name(g->nodes[a].op);
        if (strncmp(op, "Apply", 5) != 0)
            continue;
        applies++;
        int32_t var = g->nodes[a].inputs[0].node;
        for (int32_t r = 0; r < g->n_nodes; r++) {
            if (r == a || r == other)
                continue;
            const dgc_node *rn = &g->nodes[r];
            const char *rop = dgc_op_name(rn->op);
            if (strncmp(rop, "Apply", 5) == 0 || strncmp(rop, "Assign", 6) == 0)
                continue;
            for (int k = 0; k < rn->n_inputs; k++)
                if (rn->inputs[k].node == var) {
                    if (!has_ctrl(&g->nodes[a], r))
                        fail_msg("%s: '%s' reads '%s' but '%s' does not wait "
                                 "for it", opt, rn->name, g->nodes[var].name,
                                 g->nodes[a].name);
                    if (var == w2 && strncmp(rn->name, "train/", 6) == 0)
                        gated_grad_reader = 1;
                }
        }
        /* a node outside the step is never pulled into it */
        assert_false(has_ctrl(&g->nodes[a], other));
    }
    assert_int_equal(applies, 2);
    assert_true(gated_grad_reader);
    dg_program_free(p);
}

static void test_order_sgd(void **state)
{
    (void)state;
    check_order("sgd");
}

static void test_order_momentum(void **state)
{
    (void)state;
    check_order("momentum");
}

static void test_order_adam(void **state)
{
    (void)state;
    check_order("adam");
}

/* Train with 4 inter-op threads several times: identical variables. */
static void test_deterministic(void **state)
{
    (void)state;
    float ref[12];
    for (int rep = 0; rep < 5; rep++) {
        dg_options o;
        dg_options_init(&o);
        o.train_mode = 1;
        o.opencl_devices = "none";
        o.inter_op_threads = 4;
        o.intra_op_threads = 1;
        dg_program *p = compile("adam", &o);
        dg_error err;
        dg_session *s = dg_session_new(p, &o, &err);
        if (!s)
            fail_msg("session: %s", err.msg);
        dg_train_result tr;
        memset(&tr, 0, sizeof tr);
        if (dg_session_train(s, NULL, NULL, &tr, &err) != DG_OK)
            fail_msg("train: %s", err.msg);
        assert_int_equal(tr.steps, 30);
        float got[12];
        int n = 0;
        for (int i = 0; i < tr.n_variables; i++) {
            const char *nm = tr.variables[i].name;
            const dg_tensor *t = tr.variables[i].value;
            if (strcmp(nm, "w1") && strcmp(nm, "w2"))
                continue;
            assert_int_equal(t->dtype, DG_F32);
            int64_t k = dg_shape_numel(&t->shape);
            assert_true(n + k <= 12);
            memcpy(got + n, t->data, sizeof(float) * (size_t)k);
            n += (int)k;
        }
        assert_int_equal(n, 12);
        if (rep == 0)
            memcpy(ref, got, sizeof ref);
        else
            assert_memory_equal(ref, got, sizeof ref);
        dg_train_result_free(&tr);
        dg_session_free(s);
        dg_program_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_sgd),
        cmocka_unit_test(test_order_momentum),
        cmocka_unit_test(test_order_adam),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
