/*
 * test_load_stream.c -- unit tests of the loader's streaming path (one scan
 * of the raw text, then one cJSON parse per node): the graphs it builds
 * equal those of the whole-document fallback (forced here with a UTF-8 BOM,
 * which the scan leaves to cJSON), invalid JSON is reported at the right
 * line and column wherever it is and before any other error, the two-pass
 * error order survives, escapes in strings and keys are handled, and
 * slab-backed node storage can still be extended by compiler passes.
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

static dgc_graph *load_text(const char *text, size_t len, dg_error *err)
{
    memset(err, 0, sizeof *err);
    return dg_graph_load("s.json", text, len, err);
}

/* The same text through the fallback: a BOM in front makes the scan give
 * up, cJSON skips it. */
static dgc_graph *load_dom(const char *text, dg_error *err)
{
    size_t n = strlen(text);
    char *b = malloc(n + 4);
    assert_non_null(b);
    memcpy(b, "\xEF\xBB\xBF", 3);
    memcpy(b + 3, text, n + 1);
    dgc_graph *g = load_text(b, n + 3, err);
    free(b);
    return g;
}

static void same_attrs(const dgc_node *a, const dgc_node *b)
{
    assert_int_equal(a->n_attrs, b->n_attrs);
    for (int k = 0; k < a->n_attrs; k++) {
        const dgc_attr *x = &a->attrs[k], *y = &b->attrs[k];
        assert_string_equal(x->key, y->key);
        assert_int_equal(x->kind, y->kind);
        assert_true(x->i == y->i);
        assert_true(x->f == y->f || (x->f != x->f && y->f != y->f));
        assert_int_equal(x->n, y->n);
        for (int j = 0; j < x->n; j++)
            assert_true(x->ints[j] == y->ints[j]);
        if (x->s || y->s)
            assert_string_equal(x->s, y->s);
        const dg_tensor *tx = x->tensor ? x->tensor : x->init.value;
        const dg_tensor *ty = y->tensor ? y->tensor : y->init.value;
        assert_true((tx == NULL) == (ty == NULL));
        if (tx) {
            assert_int_equal(tx->dtype, ty->dtype);
            assert_int_equal(tx->shape.rank, ty->shape.rank);
            size_t bytes = (size_t)dg_shape_numel(&tx->shape) *
                           dg_dtype_size(tx->dtype);
            assert_memory_equal(tx->data, ty->data, bytes);
        }
    }
}

static void same_graph(const dgc_graph *a, const dgc_graph *b)
{
    assert_int_equal(a->n_nodes, b->n_nodes);
    assert_int_equal(a->n_file_nodes, b->n_file_nodes);
    for (int32_t i = 0; i < a->n_nodes; i++) {
        const dgc_node *x = &a->nodes[i], *y = &b->nodes[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->op, y->op);
        assert_int_equal(x->op_alias, y->op_alias);
        assert_int_equal(x->n_inputs, y->n_inputs);
        for (int k = 0; k < x->n_inputs; k++) {
            assert_int_equal(x->inputs[k].node, y->inputs[k].node);
            assert_int_equal(x->inputs[k].index, y->inputs[k].index);
        }
        assert_int_equal(x->n_ctrl, y->n_ctrl);
        for (int k = 0; k < x->n_ctrl; k++)
            assert_int_equal(x->ctrl[k], y->ctrl[k]);
        assert_int_equal(x->n_coloc, y->n_coloc);
        for (int k = 0; k < x->n_coloc; k++)
            assert_int_equal(x->coloc[k], y->coloc[k]);
        assert_true((x->device == NULL) == (y->device == NULL));
        if (x->device)
            assert_string_equal(x->device, y->device);
        assert_int_equal(x->n_outputs, y->n_outputs);
        for (int k = 0; k < x->n_outputs; k++) {
            assert_int_equal(x->outputs[k].dtype, y->outputs[k].dtype);
            assert_int_equal(x->outputs[k].shape.rank, y->outputs[k].shape.rank);
            for (int d = 0; d < x->outputs[k].shape.rank; d++)
                assert_true(x->outputs[k].shape.dims[d] ==
                            y->outputs[k].shape.dims[d]);
        }
        same_attrs(x, y);
    }
    assert_int_equal(a->n_gradsets, b->n_gradsets);
    assert_int_equal(a->n_collections, b->n_collections);
    assert_int_equal(a->n_rules, b->n_rules);
    assert_int_equal(a->n_fetch, b->n_fetch);
    assert_int_equal(a->allow_soft_placement, b->allow_soft_placement);
    assert_int_equal(a->train.present, b->train.present);
    assert_true(a->train.steps == b->train.steps);
    assert_int_equal(a->train.n_feeds, b->train.n_feeds);
}

static void expect_same(const char *text)
{
    dg_error e1, e2;
    dgc_graph *a = load_text(text, strlen(text), &e1);
    dgc_graph *b = load_dom(text, &e2);
    if (!a || !b)
        print_error("stream: %s\ndom: %s\n", a ? "ok" : e1.msg,
                    b ? "ok" : e2.msg);
    assert_non_null(a);
    assert_non_null(b);
    same_graph(a, b);
    dg_graph_free(a);
    dg_graph_free(b);
}

static const char *mixed =
    "{\"fetch\": [\"y:0\"],\n"
    " \"train\": {\"loss\": \"loss\", \"optimizer\": {\"type\": \"sgd\", "
    "\"learning_rate\": 0.5}, \"steps\": 9007199254740993},\n"
    " \"version\": 1, \"nodes\": [\n"
    "  {\"name\": \"y\", \"op\": \"AddV2\", \"inputs\": [\"x\", \"c:0\", \"^v\"]},\n"
    "  {\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"shape\": [-1, 4], "
    "\"dtype\": \"float32\"}},\n"
    "  {\"name\": \"c\", \"op\": \"Const\", \"attrs\": {\"value\": [1, 2.5, 3e0, -4], "
    "\"dtype\": \"float32\"}},\n"
    "  {\"name\": \"big\", \"op\": \"Const\", \"attrs\": {\"value\": [9007199254740993, 1],"
    " \"dtype\": \"int64\"}},\n"
    "  {\"name\": \"v\", \"op\": \"VariableV2\", \"device\": \"/cpu:0\", "
    "\"attrs\": {\"shape\": [4], \"init\": {\"random_normal\": {\"mean\": 0, "
    "\"stddev\": 1e-1}}}},\n"
    "  {\"n\\u0061me\": \"w\", \"op\": \"Variable\", \"colocate_with\": \"loc:@v\", "
    "\"attrs\": {\"init\": [[1, 2], [3, 4]]}},\n"
    "  {\"name\": \"p\", \"op\": \"Print\", \"inputs\": [\"y\"], \"attrs\": "
    "{\"message\": \"a \\\"quoted\\\" [brace} \\\\\"}},\n"
    "  {\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"y\"]}\n"
    " ],\n"
    " \"collections\": {\"C\": [\"w\", \"v\"]},\n"
    " \"placement\": {\"allow_soft_placement\": false}}\n";

static void test_same_as_dom(void **state)
{
    (void)state;
    expect_same(mixed);
    expect_same("{\"nodes\": []}");
    expect_same("{\"\\u006eodes\": [{\"name\": \"a\", \"op\": \"NoOp\"}]}");
    expect_same("  {\"nodes\":[{\"name\":\"a\",\"op\":\"Const\",\"attrs\":"
                "{\"value\":[[1,2],[3,4]]}},{\"name\":\"b\",\"op\":\"Neg\","
                "\"inputs\":[\"a\"]}]}  \n");
    /* the repository's example graphs */
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    static const char *files[] = {"digits_mlp.json", "bn_mlp.json",
                                  "control_deps.json", "colocate.json",
                                  "gradient_sin.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/graphs/%s", root ? root : ".", files[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        expect_same(buf);
    }
}

static void test_exact_numbers(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load_text(mixed, strlen(mixed), &err);
    if (!g)
        print_error("%s\n", err.msg);
    assert_non_null(g);
    assert_true(g->train.steps == 9007199254740993ll);
    const dgc_node *big = &g->nodes[dgc_graph_find(g, "big")];
    const dg_tensor *t = dgc_node_attr(big, "value")->tensor;
    assert_true(((int64_t *)t->data)[0] == 9007199254740993ll);
    const dgc_node *w = &g->nodes[dgc_graph_find(g, "w")];
    assert_int_equal(w->outputs[0].dtype, DG_I32); /* integer literals */
    assert_int_equal(w->coloc[0], dgc_graph_find(g, "v"));
    const dgc_node *p = &g->nodes[dgc_graph_find(g, "p")];
    assert_string_equal(dgc_node_attr(p, "message")->s, "a \"quoted\" [brace} \\");
    assert_string_equal(dgc_node_op_name(&g->nodes[0]), "AddV2");
    assert_string_equal(dgc_node_op_name(&g->nodes[dgc_graph_find(g, "w")]),
                        "Variable");
    dg_graph_free(g);
}

static void expect_err(const char *text, const char *frag)
{
    dg_error err;
    dgc_graph *g = load_text(text, strlen(text), &err);
    if (g || !strstr(err.msg, frag))
        print_error("json: %s\nexpected '%s', got '%s'\n", text, frag,
                    g ? "success" : err.msg);
    assert_null(g);
    assert_int_equal(err.code, DG_E_GRAPH);
    assert_non_null(strstr(err.msg, frag));
}

/* Same message as the whole-document parse (the BOM only shifts line 1). */
static void expect_err_as_dom(const char *text, const char *frag)
{
    dg_error e1, e2;
    dgc_graph *a = load_text(text, strlen(text), &e1);
    dgc_graph *b = load_dom(text, &e2);
    assert_null(a);
    assert_null(b);
    if (strcmp(e1.msg, e2.msg) || !strstr(e1.msg, frag))
        print_error("json: %s\nstream '%s'\ndom '%s'\nwant '%s'\n", text,
                    e1.msg, e2.msg, frag);
    assert_string_equal(e1.msg, e2.msg);
    assert_non_null(strstr(e1.msg, frag));
}

/* Strict JSON (issue 15): a key twice in any object is an error naming the
 * key and where it is, the same on both paths, after invalid JSON. */
static void test_duplicate_keys(void **state)
{
    (void)state;
#define NODES "\"nodes\": [{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": " \
    "{\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}}, " \
    "{\"name\": \"b\", \"op\": \"Sin\", \"inputs\": [\"a\"]}]"
    /* the fuzzer's leak: "ys" twice in a gradients entry */
    expect_err_as_dom("{" NODES ", \"gradients\": [{\"name\": \"g\", \"ys\": [\"b\"], "
                      "\"ys\": [\"a\"], \"xs\": [\"a\"]}]}",
                      "duplicate key 'ys' in gradients[0]");
    expect_err_as_dom("{" NODES ", \"train\": {\"loss\": \"b\", \"optimizer\": "
                      "{\"type\": \"sgd\", \"type\": \"adam\"}}}",
                      "duplicate key 'type' in train.optimizer");
    expect_err_as_dom("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"}, "
                      "{\"name\": \"b\", \"name\": \"c\", \"op\": \"NoOp\"}]}",
                      "duplicate key 'name' in nodes[1]");
    expect_err_as_dom("{\"version\": 1, " NODES ", \"version\": 1}",
                      "duplicate top-level key 'version'");
    /* an object with many keys (sorted check) */
    char big[8192];
    int n = snprintf(big, sizeof big, "{\"nodes\": [{\"name\": \"a\", \"op\": "
                     "\"Const\", \"attrs\": {");
    for (int i = 0; i < 100; i++)
        n += snprintf(big + n, sizeof big - (size_t)n, "\"k%d\": 1, ", i);
    snprintf(big + n, sizeof big - (size_t)n, "\"k57\": 2}}]}");
    expect_err_as_dom(big, "duplicate key 'k57' in nodes[0].attrs");
    /* invalid JSON later in the text is reported first */
    expect_err_as_dom("{\"nodes\": [{\"name\": \"a\", \"name\": \"a\"},\n{]}",
                      "invalid JSON at line 2, column 3");
    /* same key in different objects is fine */
    dg_error e;
    const char *ok = "{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"}, "
                     "{\"name\": \"b\", \"op\": \"NoOp\"}]}";
    dgc_graph *g = load_text(ok, strlen(ok), &e);
    assert_non_null(g);
    dgc_graph_free(g);
#undef NODES
}

/* TensorFlow GraphDef JSON streams its `node` array too (issue 16): the
 * same graph as the whole-document parse, the same first error. */
#define GD_C(n) "{\"name\": \"" n "\", \"op\": \"Const\", \"attr\": {\"dtype\": " \
    "{\"type\": \"DT_FLOAT\"}, \"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", " \
    "\"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}, \"floatVal\": [1, 2]}}}}"
#define GD_AXIS "{\"name\": \"ax\", \"op\": \"Const\", \"attr\": {\"dtype\": " \
    "{\"type\": \"DT_INT32\"}, \"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", " \
    "\"tensorShape\": {}, \"intVal\": [0]}}}}"

static void test_graphdef_stream(void **state)
{
    (void)state;
    /* forward inputs, a folded Const defined later, _class, control
     * inputs, devices, versions and library */
    expect_same("{\"node\": [{\"name\": \"s\", \"op\": \"Sum\", \"input\": "
                "[\"y\", \"ax\", \"^a\"], \"device\": \"/cpu:0\"},\n"
                "{\"name\": \"y\", \"op\": \"Sin\", \"input\": [\"a\"], \"attr\": "
                "{\"T\": {\"type\": \"DT_FLOAT\"}, \"_class\": {\"list\": {\"s\": "
                "[\"bG9jOkBh\"]}}}},\n" GD_C("a") ",\n" GD_AXIS "],\n"
                "\"versions\": {\"producer\": 1087}, \"library\": {}}");
    expect_same("{\"library\": {}, \"node\": []}");
    /* the repository's GraphDef fixtures */
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    static const char *files[] = {"tests/data/graphdef/mlp.json",
                                  "tests/data/graphdef/sincos.json",
                                  "tests/data/tf/mlp_devices/graph.json",
                                  "tests/data/tf/lenet/graph.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", root ? root : ".", files[i]);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        static char buf[1 << 22];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        expect_same(buf);
    }
    /* errors: each the whole-document load's first */
    expect_err_as_dom("{\"node\": [" GD_C("a") ", {\"name\": \"b\", \"name\": "
                      "\"c\", \"op\": \"NoOp\"}]}",
                      "duplicate key 'name' in node[1]");
    expect_err_as_dom("{\"node\": [{\"name\": \"a\", \"op\": \"NoOp\", "
                      "\"bogus\": 1},\n{]}", "invalid JSON at line 2");
    expect_err_as_dom("{\"node\": [{\"name\": \"a\", \"op\": \"NoOp\"}], "
                      "\"versions\": {\"producer\": 1, \"producer\": 2}}",
                      "duplicate key 'producer' in versions");
    expect_err_as_dom("{\"node\": [{\"name\": \"a\", \"op\": \"NoOp\", "
                      "\"bogus\": 1}, {\"name\": \"b\", \"op\": \"CropAndResize\"}]}",
                      "unsupported ops: CropAndResize (1 node)");
    expect_err_as_dom("{\"node\": [{\"name\": \"a\", \"op\": \"NoOp\", \"attr\": "
                      "{\"_class\": {\"list\": {\"s\": [\"bG9jOkB6\"]}}}}, "
                      "{\"name\": \"b\", \"op\": \"NoOp\", \"attr\": {\"x\": {}}}]}",
                      "_class colocates with unknown node 'z'");
    expect_err_as_dom("{\"node\": [{\"name\": \"a\", \"op\": \"NoOp\", \"input\": "
                      "[\"b\", 5]}, {\"name\": \"b\", \"op\": \"NoOp\", \"attr\": "
                      "{\"x\": {}}}]}",
                      "node 'b': attr 'x' of op NoOp is not supported");
    expect_err_as_dom("{\"node\": [{\"name\": \"a\", \"op\": \"NoOp\", \"attr\": "
                      "{\"x\": {}}}, {\"name\": \"a\", \"op\": \"NoOp\"}]}",
                      "node 'a': duplicate node name");
    expect_err_as_dom("{\"node\": [{\"name\": \"a\", \"op\": \"NoOp\", \"input\": "
                      "[\"^zz\", 5]}]}", "control input '^zz' names unknown node");
    expect_err_as_dom("{\"node\": [{\"name\": \"b\", \"op\": \"Sin\", \"input\": "
                      "[\"a\", 5]}, " GD_C("a") "]}",
                      "'input' must be a list of strings, got a number in it");
    expect_err_as_dom("{\"node\": [" GD_C("a") ", {\"name\": \"b\", \"op\": "
                      "\"Sin\", \"input\": [\"a\"], \"device\": 7}]}",
                      "node 'b': 'device' must be a string, got a number");
    expect_err_as_dom("{\"node\": [" GD_C("a") "], \"bogus\": {}}",
                      "unknown top-level key 'bogus'");
}
#undef GD_C
#undef GD_AXIS

static void test_json_errors(void **state)
{
    (void)state;
    /* inside a node object: position of the slice + position inside it */
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"NoOp\"},\n"
                      "  {\"name\": \"b\" \"op\": \"NoOp\"}]}",
                      "invalid JSON at line 3, column 16");
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"NoOp\"},\n"
                      "{\"name\": \"b\", \"op\": tru}]}",
                      "invalid JSON at line 3, column 21");
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"NoOp\", "
                      "\"attrs\": {\"x\": [1,]}}]}",
                      "invalid JSON at line 2, column");
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\\q\", \"op\": \"NoOp\"}]}",
                      "invalid JSON at line 2");
    /* structure the scan rejects: the whole-document parse reports it */
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"NoOp\"}\n"
                      "{\"name\": \"b\", \"op\": \"NoOp\"}]}",
                      "invalid JSON at line 3, column 1");
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"NoOp\"},\n]}",
                      "invalid JSON at line 3, column 1");
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"NoOp\"]}\n]}",
                      "invalid JSON at line 2");
    expect_err_as_dom("{\"nodes\": []}\nx", "invalid JSON at line 2, column 1");
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"NoOp\"}",
                      "invalid JSON at line 2");
    expect_err_as_dom("{\"nodes\": [\n{\"name\": \"a\", \"op\": \"No",
                      "invalid JSON at line 2");
    /* in a section after the nodes */
    expect_err_as_dom("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"}],\n"
                      "\"fetch\": [\"a\" \"a\"]}", "invalid JSON at line 2, column 15");
    /* invalid JSON wins over any other error, wherever each is */
    expect_err_as_dom("{\"nodes\": [{\"name\": \"a\", \"op\": \"Nope\"},\n"
                      "{\"name\": \"b\", \"op\": \"NoOp\",}]}",
                      "invalid JSON at line 2, column 29");
    expect_err_as_dom("{\"bogus\": 1, \"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"},\n"
                      "{\"name\": \"b\" : \"NoOp\"}]}",
                      "invalid JSON at line 2, column 14");
    expect_err_as_dom("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"},\n"
                      "{\"name\": \"b\" : \"NoOp\"}], \"fetch\": [1,,]}",
                      "invalid JSON at line 2, column 14");
    expect_err_as_dom("{\n\"fetch\": [1,,], \"nodes\": [{\"name\": \"a\", \"op\": "
                      "\"NoOp\"},\n{\"name\": \"b\" : \"NoOp\"}]}",
                      "invalid JSON at line 2, column 13");
    expect_err_as_dom("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\", \"inputs\": "
                      "[\"zz\"]}],\n\"train\": {\"loss\": tru}}",
                      "invalid JSON at line 2, column 19");
    /* nesting deeper than the scan follows */
    char deep[3000];
    size_t n = (size_t)sprintf(deep, "{\n\"nodes\": [{\"name\": \"a\", \"op\": "
                               "\"Const\", \"attrs\": {\"value\": ");
    for (int i = 0; i < 1100; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    expect_err_as_dom(deep, "invalid JSON at line 2");
}

static void test_error_order(void **state)
{
    (void)state;
    /* name/op errors of any node come before input/attr errors */
    expect_err("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\", \"inputs\": [\"zz\"]},"
               "{\"name\": \"b\", \"op\": \"Const\", \"attrs\": {\"bad\": 1}},"
               "{\"name\": \"c\", \"op\": \"Nope\"}]}", "node 'c': unknown op 'Nope'");
    expect_err("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"},"
               "{\"name\": \"b\", \"op\": \"Const\", \"attrs\": {\"bad\": 1}},"
               "{\"name\": \"a\", \"op\": \"NoOp\"},"
               "{\"name\": \"c\", \"op\": \"Nope\"}]}",
               "node 'a': duplicate node name");
    /* a duplicate just before the end, and right before another error */
    expect_err("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"},"
               "{\"name\": \"a\", \"op\": \"NoOp\"}]}", "node 'a': duplicate node name");
    expect_err("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"},"
               "{\"name\": \"a\", \"op\": \"NoOp\"}, {\"op\": \"NoOp\"}]}",
               "node 'a': duplicate node name");
    /* then node by node: inputs, device, colocate_with, attrs */
    expect_err("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": {\"bad\": 1}},"
               "{\"name\": \"b\", \"op\": \"Neg\", \"inputs\": [\"zz\"]}]}",
               "node 'a': unknown attr 'bad'");
    expect_err("{\"nodes\": [{\"name\": \"b\", \"op\": \"Neg\", \"inputs\": [\"zz\"]},"
               "{\"name\": \"a\", \"op\": \"Const\", \"attrs\": {\"bad\": 1}}]}",
               "node 'b': input 'zz' names unknown node 'zz'");
    expect_err("{\"nodes\": [{\"name\": \"b\", \"op\": \"Neg\", \"inputs\": [\"zz\"], "
               "\"device\": \"/cpu:0:1:2\"}]}", "names unknown node 'zz'");
    expect_err("{\"nodes\": [{\"name\": \"b\", \"op\": \"NoOp\", \"device\": "
               "\"/cpu:0:1:2\", \"colocate_with\": [\"zz\"]}]}",
               "node 'b': Malformed device specification");
    expect_err("{\"nodes\": [{\"name\": \"b\", \"op\": \"Const\", \"colocate_with\": "
               "[\"zz\"], \"attrs\": {\"bad\": 1}}]}",
               "node 'b': colocate_with names unknown node 'zz'");
    expect_err("{\"nodes\": [{\"name\": \"b\", \"op\": \"Const\", \"colocate_with\": "
               "7, \"inputs\": [\"^zz\"]}]}",
               "node 'b': control input '^zz' names unknown node 'zz'");
    expect_err("{\"nodes\": [{\"name\": \"b\", \"op\": \"NoOp\", \"inputs\": 3},"
               "{\"name\": \"c\", \"op\": \"Nope\"}]}", "unknown op 'Nope'");
    expect_err("{\"nodes\": [{\"name\": \"b\", \"op\": \"NoOp\", \"inputs\": 3},"
               "{\"name\": \"c\", \"op\": \"Neg\", \"inputs\": [\"zz\"]}]}",
               "node 'b': 'inputs' must be a list of strings, got a number");
    /* top-level errors, sections, inference last */
    expect_err("{\"nodes\": [{\"name\": \"a\", \"op\": \"NoOp\"}], \"nodes\": []}",
               "duplicate top-level key 'nodes'");
    expect_err("{\"nodes\": {}}", "'nodes' must be an array, got an object");
    expect_err("{\"nodes\": [5]}", "node #0: must be an object, got a number");
    expect_err("{\"nodes\": [{\"name\": \"a\", \"op\": \"Neg\", \"inputs\": [\"a\"]}],"
               " \"fetch\": [\"a\"]}", "cycle");
}

/* Passes may extend a loaded node's inputs (slab-backed arrays). */
static void test_slab_nodes(void **state)
{
    (void)state;
    dg_error err;
    const char *t = "{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                    "{\"value\": 1.0}}, {\"name\": \"b\", \"op\": \"AddN\", "
                    "\"inputs\": [\"a\", \"a\"]}]}";
    dgc_graph *g = load_text(t, strlen(t), &err);
    if (!g)
        print_error("%s\n", err.msg);
    assert_non_null(g);
    int32_t b = dgc_graph_find(g, "b");
    for (int i = 0; i < 5; i++)
        assert_int_equal(dgc_node_add_input(g, b, (dgc_ref){0, 0}), 0);
    assert_int_equal(g->nodes[b].n_inputs, 7);
    assert_int_equal(g->nodes[b].inputs[1].node, 0);
    assert_int_equal(dgc_graph_add_node(g, "c", dgc_op_find("NoOp"), &err), 2);
    assert_non_null(dgc_graph_slab_alloc(g, (size_t)40 << 20)); /* big */
    assert_non_null(dgc_graph_slab_alloc(g, 3));
    dg_graph_free(g);
}

/* Scales linearly: a graph 8x larger costs about 8x, not 64x. */
static void test_scaling(void **state)
{
    (void)state;
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "valgrind"))
        skip();
    double t[2];
    int sizes[2] = {20000, 160000};
    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        size_t cap = (size_t)n * 96 + 64, len = 0;
        char *text = malloc(cap);
        assert_non_null(text);
        len += (size_t)sprintf(text, "{\"nodes\": [");
        for (int i = 0; i < n; i++)
            len += (size_t)(i == 0 ? sprintf(text + len, "{\"name\": \"n0\", \"op\": "
                                             "\"Const\", \"attrs\": {\"value\": 1}}")
                                   : sprintf(text + len, ",{\"name\": \"n%d\", \"op\": "
                                             "\"Neg\", \"inputs\": [\"n%d\"]}", i, i - 1));
        len += (size_t)sprintf(text + len, "]}");
        double best = 1e9;
        for (int r = 0; r < 2; r++) {
            dg_error err;
            uint64_t t0 = dg_now_ns();
            dgc_graph *g = load_text(text, len, &err);
            double dt = (double)(dg_now_ns() - t0) / 1e9;
            assert_non_null(g);
            assert_int_equal(g->n_nodes, n);
            dg_graph_free(g);
            if (dt < best)
                best = dt;
        }
        t[s] = best;
        free(text);
    }
    /* generous: a loaded machine makes timings noisy */
    if (t[1] > 0.05)
        assert_true(t[1] / t[0] < 8 * 3.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_dom),
        cmocka_unit_test(test_exact_numbers),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_graphdef_stream),
        cmocka_unit_test(test_error_order),
        cmocka_unit_test(test_slab_nodes),
        cmocka_unit_test(test_scaling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
