/*
 * test_fuse.c -- the fusion pass (compiler/fuse.c): MatMul -> BiasAdd
 * [-> Relu] becomes one _FusedMatMul node under the last node's name, shown
 * as the user's op; nothing fuses across devices, past a fetch or another
 * consumer, or with fusion off; in a training graph ReluGrad reads the Relu
 * and the optimizer's control edges move to the fused node.  An AddV2 / Add
 * of the MatMul and a vector of its columns is a BiasAdd too (either
 * order), and a Shape of the MatMul then reads the fused node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dgrun.h"
#include "program.h"
#include "ops.h"

#define VAR(n, shape) "{\"name\": \"" n "\", \"op\": \"Variable\", \"attrs\": " \
    "{\"dtype\": \"float32\", \"shape\": " shape ", \"init\": {\"zeros\": {}}}},"

/* x -> mm = MatMul(x, w) -> ba = BiasAdd(mm, b) -> r = Relu(ba) -> loss;
 * `extra` adds nodes; ba_dev is ba's device request (the rest goes to
 * GPU:0 of --assume-gpus 1). */
static const char *graph_text(const char *extra, const char *ba_dev,
                              const char *fetch, int train)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": [-1, 4]}},"
        VAR("w", "[4, 3]") VAR("b", "[3]")
        "{\"name\": \"mm\", \"op\": \"MatMul\", \"inputs\": [\"x\", \"w\"]},"
        "{\"name\": \"ba\", \"op\": \"BiasAdd\", \"inputs\": [\"mm\", \"b\"]%s},"
        "{\"name\": \"r\", \"op\": \"Relu\", \"inputs\": [\"ba\"]},"
        "%s"
        "{\"name\": \"loss\", \"op\": \"Sum\", \"inputs\": [\"r\"]}],"
        "\"fetch\": [%s]%s}",
        ba_dev, extra, fetch,
        train ? ", \"train\": {\"loss\": \"loss\", \"optimizer\": {\"type\": "
                "\"adam\", \"learning_rate\": 0.01}, \"steps\": 1}" : "");
    return buf;
}

static dg_program *compile(const char *text, int no_fusion)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_graph *g = dg_graph_load("t.json", text, strlen(text), &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    dg_device_list *l;
    assert_int_equal(dg_devices_assume(1, &l, &err), DG_OK);
    dg_options o;
    dg_options_init(&o);
    o.no_fusion = no_fusion;
    dg_program *p = dg_compile(g, &o, l, &err);
    if (!p)
        fail_msg("compile: %s", err.msg);
    dg_devices_free(l);
    return p;
}

static int32_t id_of(const dg_program *p, const char *name)
{
    int32_t id = dgc_graph_find(p->g, name);
    assert_true(id >= 0);
    return id;
}

static const dgc_node *node(const dg_program *p, const char *name)
{
    return &p->g->nodes[id_of(p, name)];
}

static void assert_unfused(const dg_program *p)
{
    assert_int_equal(node(p, "mm")->op, DGC_OPID_MatMul);
    assert_int_equal(node(p, "ba")->op, DGC_OPID_BiasAdd);
    assert_int_equal(node(p, "r")->op, DGC_OPID_Relu);
}

static void test_relu_chain(void **state)
{
    (void)state;
    dg_program *p = compile(graph_text("", "", "\"loss\"", 0), 0);
    const dgc_node *r = node(p, "r");
    assert_int_equal(r->op, DGC_OPID__FusedMatMul);
    assert_true(r->flags & DGC_NODE_FUSED);
    assert_int_equal(r->n_inputs, 3);
    assert_int_equal(r->inputs[0].node, id_of(p, "x"));
    assert_int_equal(r->inputs[1].node, id_of(p, "w"));
    assert_int_equal(r->inputs[2].node, id_of(p, "b"));
    assert_string_equal(dgc_node_attr(r, "fused_ops")->s, "BiasAdd,Relu");
    /* the absorbed nodes stay as they were; the log shows the user's op */
    assert_int_equal(node(p, "mm")->op, DGC_OPID_MatMul);
    assert_int_equal(node(p, "ba")->op, DGC_OPID_BiasAdd);
    dg_node_info ni;
    dg_program_node(p, id_of(p, "r"), &ni);
    assert_string_equal(ni.op, "Relu");
    assert_string_equal(ni.name, "r");
    assert_string_equal(dgc_node_op_name(r), "_FusedMatMul");
    dg_program_free(p);
}

static void test_fetch_blocks(void **state)
{
    (void)state;
    /* ba fetched: the Relu stays, MatMul + BiasAdd fuse into ba */
    dg_program *p = compile(graph_text("", "", "\"loss\", \"ba\"", 0), 0);
    assert_int_equal(node(p, "r")->op, DGC_OPID_Relu);
    const dgc_node *ba = node(p, "ba");
    assert_int_equal(ba->op, DGC_OPID__FusedMatMul);
    assert_string_equal(dgc_node_attr(ba, "fused_ops")->s, "BiasAdd");
    dg_node_info ni;
    dg_program_node(p, id_of(p, "ba"), &ni);
    assert_string_equal(ni.op, "BiasAdd");
    dg_program_free(p);
    /* mm fetched: nothing fuses */
    p = compile(graph_text("", "", "\"loss\", \"mm\"", 0), 0);
    assert_unfused(p);
    dg_program_free(p);
}

static void test_other_consumer_device_off(void **state)
{
    (void)state;
    dg_program *p = compile(graph_text(
        "{\"name\": \"s\", \"op\": \"Sum\", \"inputs\": [\"mm\"]},", "",
        "\"loss\", \"s\"", 0), 0);
    assert_unfused(p);
    dg_program_free(p);
    p = compile(graph_text("", ", \"device\": \"/device:CPU:0\"", "\"loss\"",
                           0), 0);
    assert_unfused(p);
    dg_program_free(p);
    p = compile(graph_text("", "", "\"loss\"", 0), 1);
    assert_unfused(p);
    dg_program_free(p);
}

static void test_training(void **state)
{
    (void)state;
    dg_program *p = compile(graph_text("", "", "\"loss\"", 1), 0);
    const dgc_graph *g = p->g;
    int32_t r = id_of(p, "r"), mm = id_of(p, "mm"), ba = id_of(p, "ba");
    assert_int_equal(g->nodes[r].op, DGC_OPID__FusedMatMul);
    int relugrads = 0, ctrl_r = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *q = &g->nodes[i];
        for (int k = 0; k < q->n_inputs; k++) {
            /* nothing reads the absorbed nodes any more */
            assert_true(q->inputs[k].node != ba || i == r);
            assert_true(q->inputs[k].node != mm || i == ba);
        }
        for (int k = 0; k < q->n_ctrl; k++) {
            assert_true(q->ctrl[k] != mm && q->ctrl[k] != ba);
            ctrl_r += q->ctrl[k] == r;
        }
        if (q->op == DGC_OPID_ReluGrad) {
            relugrads++;
            assert_int_equal(q->inputs[1].node, r);
        }
    }
    assert_int_equal(relugrads, 1);
    assert_true(ctrl_r >= 1); /* the updates of w and b wait for r */
    dg_program_free(p);
}

/* x -> mm = MatMul(x, w) -> ad = `op`(first, second) [-> r = Relu(ad)],
 * sh = Shape(mm); b has `bdims` */
static dg_program *add_graph(const char *op, const char *first,
                             const char *second, const char *bdims,
                             int relu)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": [-1, 4]}},"
        VAR("w", "[4, 3]")
        "{\"name\": \"b\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": %s, \"init\": {\"zeros\": {}}}},"
        "{\"name\": \"mm\", \"op\": \"MatMul\", \"inputs\": [\"x\", \"w\"]},"
        "{\"name\": \"ad\", \"op\": \"%s\", \"inputs\": [\"%s\", \"%s\"]},"
        "{\"name\": \"r\", \"op\": \"%s\", \"inputs\": [\"ad\"]},"
        "{\"name\": \"sh\", \"op\": \"Shape\", \"inputs\": [\"mm\"]},"
        "{\"name\": \"loss\", \"op\": \"Sum\", \"inputs\": [\"r\"]}],"
        "\"fetch\": [\"loss\", \"sh\"]}",
        bdims, op, first, second, relu ? "Relu" : "Identity");
    return compile(buf, 0);
}

static void test_bias_semantic_add(void **state)
{
    (void)state;
    const char *ops[] = {"AddV2", "Add"};
    for (int o = 0; o < 2; o++)
        for (int order = 0; order < 2; order++)
            for (int relu = 0; relu < 2; relu++) {
                dg_program *p = add_graph(ops[o], order ? "b" : "mm",
                                          order ? "mm" : "b", "[3]", relu);
                const char *last = relu ? "r" : "ad";
                const dgc_node *f = node(p, last);
                assert_int_equal(f->op, DGC_OPID__FusedMatMul);
                assert_int_equal(f->n_inputs, 3);
                assert_int_equal(f->inputs[0].node, id_of(p, "x"));
                assert_int_equal(f->inputs[1].node, id_of(p, "w"));
                assert_int_equal(f->inputs[2].node, id_of(p, "b"));
                assert_string_equal(dgc_node_attr(f, "fused_ops")->s,
                                    relu ? "BiasAdd,Relu" : "BiasAdd");
                dg_node_info ni;
                dg_program_node(p, id_of(p, last), &ni);
                assert_string_equal(ni.op, relu ? "Relu" : ops[o]);
                /* the Shape of the MatMul reads the fused node */
                assert_int_equal(node(p, "sh")->inputs[0].node,
                                 id_of(p, last));
                dg_program_free(p);
            }
    /* not a vector of the MatMul's columns: no fusion */
    const char *bad[] = {"[1]", "[2, 3]", "[]"};
    for (int i = 0; i < 3; i++) {
        dg_program *p = add_graph("AddV2", "mm", "b", bad[i], 1);
        assert_int_equal(node(p, "mm")->op, DGC_OPID_MatMul);
        assert_int_equal(node(p, "r")->op, DGC_OPID_Relu);
        assert_int_equal(node(p, "sh")->inputs[0].node, id_of(p, "mm"));
        dg_program_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relu_chain),
        cmocka_unit_test(test_fetch_blocks),
        cmocka_unit_test(test_other_consumer_device_off),
        cmocka_unit_test(test_training),
        cmocka_unit_test(test_bias_semantic_add),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
