/*
 * test_savedmodel.c -- unit tests of the MetaGraphDef / SavedModel reader
 * (compiler/load/load_metagraph.c, load_function.c, pbtext.c) on the
 * TF-made seeds of tests/fuzz/corpus/savedmodel and fixtures of
 * tests/data/tf_meta: each format is told by content (a GraphDef stays a
 * GraphDef); a .meta's collections set up training; a SavedModel's
 * signature keys, fetches, variables path and TF 2 checkpoint keys; every
 * prefix of a file is an error with a message or a graph, never a crash;
 * every failing allocation is DG_E_NOMEM.
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
#include "ir.h"
#include "ops.h"
#include "dg_alloc.h"

static char *path_of(const char *rel)
{
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", root ? root : ".", rel);
    return buf;
}

static char *slurp(const char *rel, size_t *len)
{
    FILE *f = fopen(path_of(rel), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return b;
}

static dg_graph *load(const char *rel, const char *sig, dg_error *err)
{
    memset(err, 0, sizeof *err);
    return dg_graph_load_signature(path_of(rel), NULL, 0, sig, err);
}

static int has_node(dg_graph *g, const char *name)
{
    return dgc_graph_find(g, name) >= 0;
}

static void test_detect(void **state)
{
    (void)state;
    dg_error err;
    /* a binary GraphDef is still one */
    dg_graph *g = load("tests/data/tf/mlp/graph.pb", NULL, &err);
    assert_non_null(g);
    assert_false(g->train.given_train_op);
    dg_graph_free(g);
    /* a .meta: the Saver dropped, collections kept, trainable */
    g = load("tests/fuzz/corpus/savedmodel/tiny.meta", NULL, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_true(has_node(g, "w") && has_node(g, "y"));
    assert_false(has_node(g, "save/Const") || has_node(g, "save/SaveV2"));
    assert_true(g->train.present);
    assert_string_equal(g->train.given_train_op, "train");
    assert_string_equal(g->train.loss, "loss");
    assert_int_equal(g->n_aliases, 0);
    dg_graph_free(g);
    /* the same as text */
    g = load("tests/fuzz/corpus/savedmodel/tiny_text.meta", NULL, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_string_equal(g->train.given_train_op, "train");
    dg_graph_free(g);
    /* a SavedModel: signature keys and default fetches */
    g = load("tests/data/tf_meta/sm_tf1/model", NULL, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(g->n_fetch, 2);
    assert_string_equal(g->fetch[0], "logits");
    assert_string_equal(g->fetch[1], "probs");
    dgc_ref r;
    assert_int_equal(dgc_graph_parse_ref(g, "x", &r), 0);
    assert_int_equal(r.node, dgc_graph_find(g, "x"));
    assert_int_equal(dgc_graph_parse_ref(g, "probs", &r), 0);
    assert_non_null(g->variables_path);
    assert_non_null(strstr(g->variables_path, "model/variables/variables"));
    assert_int_equal(g->n_ckpt_keys, 0);
    dg_graph_free(g);
    /* partitioned variables: each part's SaveSliceInfoDef */
    g = load("tests/data/tf_ckpt/part/model.ckpt-2.meta", NULL, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(g->n_save_slices, 8); /* w, v: 3 parts, e: 2 */
    const dgc_save_slice *ss = dgc_graph_save_slice(g, "v/part_1");
    assert_non_null(ss);
    assert_string_equal(ss->full, "v");
    assert_int_equal(ss->rank, 2);
    assert_true(ss->full_dims[0] == 4 && ss->full_dims[1] == 7);
    assert_true(ss->start[0] == 0 && ss->start[1] == 3);
    assert_null(dgc_graph_save_slice(g, "b"));
    dg_graph_free(g);
    /* a missing signature */
    g = load("tests/data/tf_meta/sm_tf1/model", "predict", &err);
    assert_null(g);
    assert_int_equal(err.code, DG_E_USAGE);
    assert_non_null(strstr(err.msg, "no signature 'predict'"));
}

static void test_tf2(void **state)
{
    (void)state;
    dg_error err;
    dg_graph *g = load("tests/data/tf_meta/keras_mlp/model", NULL, &err);
    if (!g)
        fail_msg("%s", err.msg);
    /* the save / restore / init functions and their variables pruned */
    assert_false(has_node(g, "Variable_3") || has_node(g, "saver_filename"));
    assert_int_equal(g->nodes[dgc_graph_find(g, "sequential/dense/kernel")].op,
                     DGC_OPID_Variable);
    assert_int_equal(g->n_ckpt_keys, 4);
    assert_string_equal(dgc_graph_ckpt_key(g, "sequential/dense/kernel"),
                        "_layers/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE");
    assert_string_equal(dgc_graph_ckpt_key(g, "sequential/dense_1/bias"),
                        "_layers/2/bias/.ATTRIBUTES/VARIABLE_VALUE");
    assert_string_equal(dgc_graph_ckpt_key(g, "other"), "other");
    dgc_ref r;
    assert_int_equal(dgc_graph_parse_ref(g, "output_0", &r), 0);
    assert_int_equal(g->nodes[r.node].op, DGC_OPID_Identity);
    assert_non_null(strstr(g->nodes[r.node].name, "StatefulPartitionedCall/"));
    dg_graph_free(g);
    /* the text SavedModel of a tf.Module: inlined alike */
    g = load("tests/data/tf_meta/tf2_module/model_text", NULL, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(g->n_ckpt_keys, 3);
    assert_string_equal(dgc_graph_ckpt_key(g, "w"),
                        "w/.ATTRIBUTES/VARIABLE_VALUE");
    int found = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == DGC_OPID_MatMul) {
            found = 1;
            assert_non_null(strstr(g->nodes[i].device ? g->nodes[i].device
                                                      : "", "CPU:0"));
        }
    assert_true(found);
    dg_graph_free(g);
}

/* TF 2's functional While and TensorLists made TF-1 frames and
 * TensorArrays (load_cflow.c). */
static void test_cflow(void **state)
{
    (void)state;
    dg_error err;
    const char *models[] = {"tests/data/tf_meta/keras_lstm/model",
                            "tests/data/tf_meta/tf2_while/model"};
    for (int m = 0; m < 2; m++) {
        dg_graph *g = load(models[m], NULL, &err);
        if (!g)
            fail_msg("%s: %s", models[m], err.msg);
        int enter = 0, exits = 0, loopcond = 0, arrays = 0, lists = 0;
        for (int i = 0; i < g->n_nodes; i++) {
            const dgc_node *n = &g->nodes[i];
            enter += n->op == DGC_OPID_Enter;
            exits += n->op == DGC_OPID_Exit;
            loopcond += n->op == DGC_OPID_LoopCond;
            if (n->op == DGC_OPID_TensorArrayV3) {
                arrays++;
                lists += dgc_attr_bool(n, "_tensor_list", 0);
                assert_false(dgc_attr_bool(n, "clear_after_read", 1));
            }
            assert_null(strstr(n->name, "/while:")); /* no While left */
        }
        assert_int_equal(loopcond, 1);
        assert_true(enter >= 4 && exits >= 2);
        assert_true(arrays >= 2 && lists == arrays);
        /* the body's nodes are named under the loop */
        assert_true(has_node(g, m == 0
            ? "StatefulPartitionedCall/StatefulPartitionedCall/sequential_2_1/"
              "lstm_1/while/body/sequential_2_1/lstm_1/while/lstm_cell_1/MatMul"
            : "StatefulPartitionedCall/StatefulPartitionedCall/while/LoopCond"));
        dg_graph_free(g);
    }
}

/* Every prefix of a file: an error with a message, or a graph. */
static void prefixes(const char *rel, size_t stride)
{
    size_t len;
    char *b = slurp(rel, &len);
    for (size_t n = 0; n < len; n += stride) {
        dg_error err = {0};
        dg_graph *g = dg_graph_load_signature("t/saved_model.pb", b, n, NULL,
                                              &err);
        if (g)
            dg_graph_free(g);
        else if (err.code == DG_OK || !err.msg[0])
            fail_msg("%s cut at %zu: no error message", rel, n);
    }
    free(b);
}

static void test_prefixes(void **state)
{
    (void)state;
    prefixes("tests/fuzz/corpus/savedmodel/tiny_saved_model.pb", 1);
    prefixes("tests/fuzz/corpus/savedmodel/tiny.meta", 1);
    prefixes("tests/fuzz/corpus/savedmodel/tiny_text.meta", 7);
    prefixes("tests/data/tf_meta/keras_cnn/model/saved_model.pb", 13);
    prefixes("tests/data/tf_meta/keras_lstm/model/saved_model.pb", 61);
    prefixes("tests/data/tf_meta/tf2_while/model/saved_model.pb", 67);
}

/* Allocation k failing, for every k until the load succeeds. */
static void nomem(const char *rel, long stride)
{
    size_t len;
    char *b = slurp(rel, &len);
    for (long k = 0;; k += stride) {
        dg_error err = {0};
        dg_alloc_fail_after(k);
        dg_graph *g = dg_graph_load_signature("t/saved_model.pb", b, len,
                                              NULL, &err);
        dg_alloc_fail_after(-1);
        if (g) {
            dg_graph_free(g);
            break;
        }
        if (err.code != DG_E_NOMEM)
            fail_msg("%s, allocation %ld failing: %d %s", rel, k, err.code,
                     err.msg);
    }
    free(b);
}

static void test_nomem(void **state)
{
    (void)state;
    nomem("tests/fuzz/corpus/savedmodel/tiny.meta", 1);
    nomem("tests/fuzz/corpus/savedmodel/tiny_text.meta", 1);
    nomem("tests/fuzz/corpus/savedmodel/tiny_saved_model.pb", 1);
    nomem("tests/data/tf_meta/tf2_module/model/saved_model.pb", 3);
    nomem("tests/data/tf_meta/keras_lstm/model/saved_model.pb", 7);
    nomem("tests/data/tf_meta/tf2_while/model/saved_model.pb", 5);
    nomem("tests/data/tf_meta/tf2_cond/model/saved_model.pb", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_tf2),
        cmocka_unit_test(test_cflow),
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
