/*
 * test_load.c -- unit tests of the graph loader: every bad graph in
 * tests/data/bad (README.md lists the expected message fragments), good
 * graphs exercising forward references, aliases, "x:k" refs, control
 * inputs and every section, literal dtypes, rules files, robustness against
 * wrong JSON types anywhere, and the loader's speed on a large graph.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cJSON.h>

#include "dgrun.h"
#include "ir.h"
#include "ops.h"
#include "load.h"
#include "dg_util.h"
#include "dg_alloc.h"

static const char *src_root(void)
{
    const char *r = getenv("DGRUN_SOURCE_ROOT");
    return r ? r : ".";
}

static dgc_graph *load(const char *json, dg_error *err)
{
    memset(err, 0, sizeof *err);
    return dg_graph_load("t.json", json, strlen(json), err);
}

static void expect_error(const char *json, dg_status code, const char *frag)
{
    dg_error err;
    dgc_graph *g = load(json, &err);
    if (g || err.code != code || !strstr(err.msg, frag))
        print_error("json: %s\nexpected %d '%s', got %d '%s'\n", json, code,
                    frag, err.code, err.msg);
    assert_null(g);
    assert_int_equal(err.code, code);
    assert_non_null(strstr(err.msg, frag));
    assert_null(strchr(err.msg, '\n'));
}

static void test_bad_files(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/bad/README.md", src_root());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[1024];
    int count = 0;
    while (fgets(line, sizeof line, f)) {
        char *bar = strstr(line, " | ");
        if (line[0] == '#' || !bar)
            continue;
        *bar = '\0';
        char *frag = bar + 3;
        frag[strcspn(frag, "\n")] = '\0';
        char file[4096];
        snprintf(file, sizeof file, "%s/tests/data/bad/%s", src_root(), line);
        dg_error err;
        memset(&err, 0, sizeof err);
        dgc_graph *g = dg_graph_load(file, NULL, 0, &err);
        if (g || err.code != DG_E_GRAPH || !strstr(err.msg, frag))
            print_error("%s: expected '%s', got %d '%s'\n", line, frag,
                        err.code, err.msg);
        assert_null(g);
        assert_int_equal(err.code, DG_E_GRAPH);
        assert_non_null(strstr(err.msg, frag));
        count++;
    }
    fclose(f);
    assert_true(count >= 30);
}

static void test_io_error(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = dg_graph_load("/nonexistent/x.json", NULL, 0, &err);
    assert_null(g);
    /* a missing graph file is bad usage (exit 2), not an I/O failure */
    assert_int_equal(err.code, DG_E_USAGE);
    assert_non_null(strstr(err.msg, "cannot read: No such file"));
}

static void test_invalid_json(void **state)
{
    (void)state;
    expect_error("{\"version\": 1,\n \"nodes\": [}", DG_E_GRAPH,
                 "invalid JSON at line 2, column");
    expect_error("{\"nodes\": []} trailing", DG_E_GRAPH,
                 "invalid JSON at line 1, column 15");
    expect_error("", DG_E_GRAPH, "invalid JSON at line 1, column 1");
    expect_error("[1, 2]", DG_E_GRAPH, "must be a JSON object");
}

static void test_inline_errors(void **state)
{
    (void)state;
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Placeholder\", "
                 "\"attrs\": {\"shape\": [-1, 2]}}, {\"name\": \"b\", \"op\": "
                 "\"Neg\", \"inputs\": [\"a:x\"]}]}",
                 DG_E_GRAPH, "node 'b': malformed input 'a:x'");
    expect_error("{\"nodes\": [{\"name\": \"n\", \"op\": \"NoOp\", "
                 "\"inputs\": [\"^n\"]}]}", DG_E_GRAPH,
                 "graph has a cycle through node 'n': n -> n");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": 9223372036854775808, \"dtype\": \"int64\"}}]}",
                 DG_E_GRAPH, "overflows int64");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": [1, true]}}]}", DG_E_GRAPH, "mixes numbers and bools");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": [1, 2, 3], \"shape\": [2, 2]}}]}", DG_E_GRAPH,
                 "node 'a': attr 'value': value of shape [3] has 3 elements");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\"}]}",
                 DG_E_GRAPH, "node 'a': Const needs attr 'value'");
    expect_error("{\"nodes\": [{\"name\": \"v\", \"op\": \"Variable\", \"attrs\": "
                 "{\"shape\": [2], \"init\": {\"ones\": {}}}}]}", DG_E_GRAPH,
                 "node 'v': unknown initializer 'ones'");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": 1.0}}], \"train\": {\"loss\": \"a\", \"optimizer\": "
                 "{\"type\": \"rmsprop\", \"learning_rate\": 1}}}",
                 DG_E_GRAPH, "unknown type 'rmsprop'");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": 1.0}}], \"train\": {\"loss\": \"a\", \"optimizer\": "
                 "{\"type\": \"sgd\", \"learning_rate\": 1}, \"feeds\": {\"a\": "
                 "{\"file\": \"x.npy\"}}}}", DG_E_GRAPH,
                 "node 'a': train.feeds: only a Placeholder can be fed");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": 1.0}}], \"collections\": {\"C\": [\"zz\"]}}",
                 DG_E_GRAPH, "collection 'C' names unknown node 'zz'");
    expect_error("{\"version\": \"1\", \"nodes\": []}", DG_E_GRAPH,
                 "unsupported graph version");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": 1.0, \"value\": 2.0}}]}", DG_E_GRAPH,
                 "duplicate key 'value' in nodes[0].attrs");
    expect_error("{\"nodes\": [{\"name\": \"p\", \"op\": \"Placeholder\"}]}",
                 DG_E_GRAPH, "node 'p': Placeholder: Placeholder needs attr 'shape'");
}

static const char *good =
    "{\"version\": 1, \"nodes\": [\n"
    " {\"name\": \"sum\", \"op\": \"AddV2\", \"inputs\": [\"x\", \"xent:0\", \"^init\"]},\n"
    " {\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [-1]}},\n"
    " {\"name\": \"logits\", \"op\": \"Placeholder\", \"attrs\": {\"shape\": [-1, 10]}},\n"
    " {\"name\": \"labels\", \"op\": \"Placeholder\", \"attrs\": {\"shape\": [-1], \"dtype\": \"int64\"}},\n"
    " {\"name\": \"xent\", \"op\": \"SparseSoftmaxCrossEntropyWithLogits\", \"inputs\": [\"logits\", \"labels\"]},\n"
    " {\"name\": \"bp\", \"op\": \"Identity\", \"inputs\": [\"xent:1\"], \"device\": \"/gpu:0\"},\n"
    " {\"name\": \"w\", \"op\": \"VariableV2\", \"attrs\": {\"shape\": [10, 3], \"init\": {\"glorot_uniform\": {}}, \"trainable\": true}},\n"
    " {\"name\": \"i\", \"op\": \"Variable\", \"attrs\": {\"init\": 3}},\n"
    " {\"name\": \"i64\", \"op\": \"Variable\", \"attrs\": {\"init\": [1, 3000000000]}},\n"
    " {\"name\": \"f\", \"op\": \"Variable\", \"attrs\": {\"init\": [[1, 2.5], [3, 4]]}},\n"
    " {\"name\": \"m\", \"op\": \"Variable\", \"attrs\": {\"init\": [[1, 2], [3, 4]]}, \"colocate_with\": [\"w\"]},\n"
    " {\"name\": \"fill\", \"op\": \"Variable\", \"attrs\": {\"shape\": [2, 3], \"init\": 0.5}},\n"
    " {\"name\": \"big\", \"op\": \"Const\", \"attrs\": {\"value\": 9007199254740993, \"dtype\": \"int64\"}},\n"
    " {\"name\": \"c3\", \"op\": \"Const\", \"attrs\": {\"value\": 3}},\n"
    " {\"name\": \"t\", \"op\": \"Const\", \"attrs\": {\"value\": [true, false]}},\n"
    " {\"name\": \"flat\", \"op\": \"Const\", \"attrs\": {\"value\": [1, 2, 3, 4, 5, 6], \"shape\": [2, 3]}},\n"
    " {\"name\": \"inc\", \"op\": \"AssignAdd\", \"inputs\": [\"i\", \"one\"]},\n"
    " {\"name\": \"one\", \"op\": \"Const\", \"attrs\": {\"value\": 1, \"dtype\": \"int32\"}},\n"
    " {\"name\": \"init\", \"op\": \"NoOp\", \"inputs\": [\"^inc\", \"^one\", \"^inc\"]},\n"
    " {\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"xent\"]},\n"
    " {\"name\": \"mm\", \"op\": \"MatMul\", \"inputs\": [\"logits\", \"w\"], \"attrs\": {\"transpose_b\": false}},\n"
    " {\"name\": \"am\", \"op\": \"ArgMax\", \"inputs\": [\"mm\"], \"attrs\": {\"axis\": 1}}\n"
    "],\n"
    " \"gradients\": [{\"name\": \"g\", \"ys\": [\"loss\"], \"xs\": [\"w\", \"logits\"], \"colocate\": true}],\n"
    " \"collections\": {\"UPDATE_OPS\": [\"inc\"], \"EMPTY\": []},\n"
    " \"placement\": {\"allow_soft_placement\": true, \"rules\": [\n"
    "   {\"match\": {\"op\": [\"VariableV2\"], \"name\": \"w*\"}, \"device\": \"/cpu:0\"},\n"
    "   {\"match\": {\"op\": \"MatMul\"}, \"devices\": [\"/gpu:0\", \"/gpu:1\"], \"strategy\": \"round_robin\"},\n"
    "   {\"device\": \"/job:localhost/device:CPU:0\"}]},\n"
    " \"fetch\": [\"sum\", \"g/w\", \"xent:1\"],\n"
    " \"train\": {\"loss\": \"loss\", \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01, \"beta2\": 0.99},\n"
    "   \"var_list\": [\"w\"], \"steps\": 7, \"feeds\": {\"logits\": {\"file\": \"l.npy\", \"batch\": 32, \"shuffle\": true},\n"
    "   \"labels\": {\"file\": \"y.npy\", \"batch\": 32}}, \"update_ops\": \"UPDATE_OPS\", \"colocate_gradients\": true,\n"
    "   \"log_every\": 5, \"eval\": {\"feeds\": {\"logits\": {\"file\": \"tl.npy\"}}, \"fetch\": [\"am\"]}, \"eval_every\": 2,\n"
    "   \"checkpoint\": {\"path\": \"ckpt\", \"every\": 3}}\n"
    "}\n";

static const dgc_node *node(const dgc_graph *g, const char *name)
{
    int32_t id = dgc_graph_find(g, name);
    assert_true(id >= 0);
    return &g->nodes[id];
}

/* issue 20: attributes are decoded as the op's schema types them; a
 * misspelt one is an error with a did-you-mean. */
static void test_attr_schema(void **state)
{
    (void)state;
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": [[1.0]]}}, {\"name\": \"m\", \"op\": \"MatMul\", "
                 "\"inputs\": [\"a\", \"a\"], \"attrs\": {\"transpose_aa\": true}}]}",
                 DG_E_GRAPH, "node 'm': unknown attr 'transpose_aa' for op "
                 "MatMul (did you mean 'transpose_a'?)");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": 1.0, \"dtyp\": \"float32\"}}]}",
                 DG_E_GRAPH, "unknown attr 'dtyp' for op Const (did you mean "
                 "'dtype'?)");
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": 1.0, \"colour\": 1}}]}",
                 DG_E_GRAPH, "unknown attr 'colour' for op Const");
    /* set by the fusion pass only: not read from a graph file */
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": [[1.0]]}}, {\"name\": \"m\", \"op\": \"_FusedMatMul\", "
                 "\"inputs\": [\"a\", \"a\", \"a\"], \"attrs\": {\"fused_ops\": "
                 "\"BiasAdd\"}}]}", DG_E_GRAPH,
                 "unknown attr 'fused_ops' for op _FusedMatMul");
    /* BroadcastLike's mean is a bool (the type is the op's, not the
     * name's: RandomNormal's mean is a float) */
    expect_error("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", \"attrs\": "
                 "{\"value\": [1.0]}}, {\"name\": \"b\", \"op\": \"BroadcastLike\", "
                 "\"inputs\": [\"a\", \"a\"], \"attrs\": {\"mean\": 0.5}}]}",
                 DG_E_GRAPH, "attr 'mean' must be true or false, got a number");
    /* every schema: names unique, types decodable, defaults only where the
     * attr is optional in TF */
    for (int op = 0; op < dgc_n_ops; op++) {
        const dgc_attr_spec *a = dgc_ops[op].attrs;
        assert_non_null(a);
        for (; a->name; a++) {
            assert_ptr_equal(dgc_op_attr(op, a->name), a);
            assert_true(a->type >= DGC_A_INT && a->type <= DGC_A_INIT);
            if (a->flags & DGC_AS_TF_REQUIRED)
                assert_null(a->dflt);
        }
    }
    assert_null(dgc_op_attr(DGC_OPID_MatMul, "dtype"));
    assert_string_equal(dgc_op_attr_near(DGC_OPID_Conv2D, "stride"),
                        "strides");
    assert_null(dgc_op_attr_near(DGC_OPID_Conv2D, "zzzzzz"));
}

static void test_good_graph(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load(good, &err);
    if (!g)
        print_error("%s\n", err.msg);
    assert_non_null(g);
    assert_int_equal(g->n_nodes, 22);
    assert_int_equal(g->n_file_nodes, 22);
    assert_int_equal(node(g, "i64")->outputs[0].dtype, DG_I64);
    const dgc_node *sum = node(g, "sum");
    assert_string_equal(dgc_op_name(sum->op), "Add");
    assert_int_equal(sum->n_inputs, 2);
    assert_int_equal(sum->inputs[0].node, dgc_graph_find(g, "x"));
    assert_int_equal(sum->inputs[1].node, dgc_graph_find(g, "xent"));
    assert_int_equal(sum->n_ctrl, 1);
    assert_int_equal(sum->ctrl[0], dgc_graph_find(g, "init"));
    assert_int_equal(sum->outputs[0].shape.rank, 1);
    assert_int_equal(sum->outputs[0].shape.dims[0], -1);
    const dgc_node *bp = node(g, "bp");
    assert_int_equal(bp->inputs[0].index, 1);
    assert_string_equal(bp->device, "/gpu:0");
    assert_int_equal(bp->outputs[0].shape.rank, 2);
    assert_int_equal(bp->outputs[0].shape.dims[1], 10);
    const dgc_node *w = node(g, "w");
    assert_string_equal(dgc_op_name(w->op), "Variable");
    assert_int_equal(dgc_node_attr(w, "init")->init.kind, DGC_INIT_GLOROT_UNIFORM);
    assert_int_equal(w->outputs[0].dtype, DG_F32);
    /* TF literal dtypes for Variables */
    assert_int_equal(node(g, "i")->outputs[0].dtype, DG_I32);
    assert_int_equal(node(g, "i")->outputs[0].shape.rank, 0);
    assert_int_equal(node(g, "f")->outputs[0].dtype, DG_F32);
    const dgc_node *m = node(g, "m");
    assert_int_equal(m->outputs[0].dtype, DG_I32);
    assert_int_equal(m->outputs[0].shape.rank, 2);
    assert_int_equal(m->n_coloc, 1);
    assert_int_equal(m->coloc[0], dgc_graph_find(g, "w"));
    const dg_tensor *mv = dgc_node_attr(m, "init")->init.value;
    assert_int_equal(((int32_t *)mv->data)[3], 4);
    const dg_tensor *fv = dgc_node_attr(node(g, "fill"), "init")->init.value;
    assert_int_equal(dg_shape_numel(&fv->shape), 6);
    assert_true(((float *)fv->data)[5] == 0.5f);
    const dg_tensor *big = dgc_node_attr(node(g, "big"), "value")->tensor;
    assert_int_equal(big->dtype, DG_I64);
    assert_true(((int64_t *)big->data)[0] == 9007199254740993ll);
    assert_int_equal(node(g, "c3")->outputs[0].dtype, DG_F32); /* SPEC: Const numbers are float32 */
    assert_int_equal(node(g, "t")->outputs[0].dtype, DG_BOOL);
    const dgc_node *flat = node(g, "flat");
    assert_int_equal(flat->outputs[0].shape.rank, 2);
    assert_int_equal(flat->outputs[0].shape.dims[1], 3);
    assert_true(((float *)dgc_node_attr(flat, "value")->tensor->data)[5] == 6.0f);
    assert_int_equal(node(g, "inc")->outputs[0].dtype, DG_I32);
    assert_int_equal(node(g, "init")->n_outputs, 0);
    assert_int_equal(node(g, "init")->n_ctrl, 2); /* duplicates dropped */
    assert_int_equal(node(g, "loss")->outputs[0].shape.rank, 0);
    const dgc_node *am = node(g, "am");
    assert_int_equal(am->outputs[0].dtype, DG_I64);
    assert_int_equal(am->outputs[0].shape.rank, 1);
    assert_int_equal(node(g, "mm")->outputs[0].shape.dims[1], 3);
    /* sections */
    assert_int_equal(g->n_gradsets, 1);
    assert_string_equal(g->gradsets[0].name, "g");
    assert_int_equal(g->gradsets[0].n_xs, 2);
    assert_int_equal(g->gradsets[0].xs[1], dgc_graph_find(g, "logits"));
    assert_int_equal(g->gradsets[0].colocate, 1);
    assert_int_equal(g->n_collections, 2);
    assert_string_equal(g->collections[0].name, "UPDATE_OPS");
    assert_int_equal(g->collections[0].nodes[0], dgc_graph_find(g, "inc"));
    assert_int_equal(g->collections[1].n_nodes, 0);
    assert_int_equal(g->allow_soft_placement, 1);
    assert_int_equal(g->rules_present, 1);
    assert_int_equal(g->n_rules, 3);
    assert_string_equal(g->rules[0].ops[0], "Variable");
    assert_string_equal(g->rules[0].name_glob, "w*");
    assert_string_equal(g->rules[0].device, "/cpu:0");
    assert_int_equal(g->rules[1].n_ops, 1);
    assert_int_equal(g->rules[1].round_robin, 1);
    assert_int_equal(g->rules[1].n_devices, 2);
    assert_null(g->rules[2].ops);
    assert_null(g->rules[2].name_glob);
    assert_int_equal(g->n_fetch, 3);
    assert_string_equal(g->fetch[1], "g/w");
    const dgc_train *t = &g->train;
    assert_int_equal(t->present, 1);
    assert_string_equal(t->loss, "loss");
    assert_int_equal(t->opt.kind, DGC_OPT_ADAM);
    assert_true(t->opt.learning_rate == 0.01);
    assert_true(t->opt.beta1 == 0.9 && t->opt.beta2 == 0.99 && t->opt.epsilon == 1e-8);
    assert_int_equal(t->n_var_list, 1);
    assert_string_equal(t->var_list[0], "w");
    assert_int_equal(t->steps, 7);
    assert_int_equal(t->n_feeds, 2);
    assert_string_equal(t->feeds[0].placeholder, "logits");
    assert_string_equal(t->feeds[0].file, "l.npy");
    assert_int_equal(t->feeds[0].batch, 32);
    assert_int_equal(t->feeds[0].shuffle, 1);
    assert_int_equal(t->feeds[1].shuffle, 0);
    assert_string_equal(t->update_ops, "UPDATE_OPS");
    assert_int_equal(t->colocate_gradients, 1);
    assert_int_equal(t->log_every, 5);
    assert_int_equal(t->n_eval_feeds, 1);
    assert_int_equal(t->eval_feeds[0].batch, 0);
    assert_string_equal(t->eval_fetch[0], "am");
    assert_int_equal(t->eval_every, 2);
    assert_string_equal(t->checkpoint_path, "ckpt");
    assert_int_equal(t->checkpoint_every, 3);
    dg_graph_free(g);
}

static void test_defaults(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load("{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", "
                        "\"attrs\": {\"value\": 1.0}}], \"train\": {\"loss\": "
                        "\"a\", \"optimizer\": {\"type\": \"momentum\", "
                        "\"learning_rate\": 0.5}}}", &err);
    assert_non_null(g);
    assert_int_equal(g->allow_soft_placement, -1);
    assert_int_equal(g->rules_present, 0);
    assert_int_equal(g->train.opt.kind, DGC_OPT_MOMENTUM);
    assert_true(g->train.opt.momentum == 0.9);
    assert_int_equal(g->train.n_var_list, -1);
    assert_int_equal(g->train.log_every, 100);
    assert_int_equal(g->train.colocate_gradients, -1);
    dg_graph_free(g);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_rules_file(void **state)
{
    (void)state;
    char path[] = "/tmp/dgrun_rules_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    dgc_rule *r;
    int n;
    dg_error err;
    write_file(path, "[{\"match\": {\"op\": [\"Variable\", \"VariableV2\"], "
                     "\"name\": \"tower_1/*\"}, \"device\": \"/cpu:0\"}, "
                     "{\"devices\": [\"/gpu:0\", \"GPU:1\"], \"strategy\": "
                     "\"round_robin\"}]");
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_OK);
    assert_int_equal(n, 2);
    /* VariableV2 is Variable's alias: one entry (explain printed
     * "[Variable, Variable]") */
    assert_int_equal(r[0].n_ops, 1);
    assert_string_equal(r[0].ops[0], "Variable");
    assert_string_equal(r[0].name_glob, "tower_1/*");
    assert_int_equal(r[1].round_robin, 1);
    assert_string_equal(r[1].devices[1], "GPU:1");
    dgc_rules_free(r, n);

    /* SPEC 4.3: an op type dgrun does not know is kept and matches nothing */
    write_file(path, "[{\"match\": {\"op\": [\"AutoReloadVariable\", "
                     "\"VariableV2\", \"Variable\"]}, \"device\": \"/cpu:0\"}]");
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_OK);
    assert_int_equal(r[0].n_ops, 2);
    assert_string_equal(r[0].ops[0], "AutoReloadVariable");
    assert_string_equal(r[0].ops[1], "Variable");
    dgc_rules_free(r, n);

    write_file(path, "[{\"device\": \"/cpu:0\"}, {\"device\": \"/cpu:0\", \"when\": 1}]");
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "placement rule 1: unknown key 'when'"));
    write_file(path, "[{\"device\": \"/cpu:0\"}, {\"devices\": [\"/gpu:0\"], "
                     "\"strategy\": \"random\"}]");
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "placement rule 1: unknown strategy 'random'"));
    write_file(path, "[{\"device\": \"/cpu:0\"}, {\"device\": \"/cpu:0:1:2\"}]");
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "placement rule 1: Malformed device specification"));
    write_file(path, "[{\"device\": ");
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "invalid JSON at line 1"));
    assert_non_null(strstr(err.msg, path));
    write_file(path, "{\"device\": \"/cpu:0\"}");
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_E_GRAPH);
    unlink(path);
    /* a rules file that does not exist is bad usage (exit 2) */
    assert_int_equal(dgc_rules_load_file(path, &r, &n, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, path));
}

/* Replace every value of the good graph, one at a time, by values of other
 * JSON types: the loader must never crash, only fail cleanly or succeed. */
static cJSON *nth(cJSON *x, int *k, cJSON **parent)
{
    for (cJSON *c = x->child; c; c = c->next) {
        if ((*k)-- == 0) {
            *parent = x;
            return c;
        }
        cJSON *r = nth(c, k, parent);
        if (r)
            return r;
    }
    return NULL;
}

static void test_wrong_types_everywhere(void **state)
{
    (void)state;
    static const char *repl[] = {"\"zz\"", "-1", "2.5", "true", "null",
                                 "[]", "{}", "[[1],[2,3]]", "{\"a\":1}"};
    int count = 0;
    for (int i = 0;; i++) {
        int done = 0;
        for (size_t k = 0; k < sizeof repl / sizeof repl[0]; k++) {
            cJSON *root = cJSON_Parse(good), *parent = NULL;
            int idx = i;
            cJSON *item = nth(root, &idx, &parent);
            if (!item) {
                cJSON_Delete(root);
                done = 1;
                break;
            }
            cJSON_ReplaceItemViaPointer(parent, item, cJSON_Parse(repl[k]));
            char *text = cJSON_PrintUnformatted(root);
            dg_error err;
            dgc_graph *g = dg_graph_load("m.json", text, strlen(text), &err);
            if (!g && err.code != DG_E_GRAPH)
                print_error("unexpected code %d: %s\n", err.code, err.msg);
            if (!g)
                assert_int_equal(err.code, DG_E_GRAPH);
            dg_graph_free(g);
            free(text);
            cJSON_Delete(root);
            count++;
        }
        if (done)
            break;
    }
    assert_true(count > 500);
}

static void test_truncations(void **state)
{
    (void)state;
    size_t len = strlen(good);
    for (size_t i = 0; i < len; i += 3) {
        dg_error err;
        dgc_graph *g = dg_graph_load("t.json", good, i, &err);
        assert_null(g);
        assert_int_equal(err.code, DG_E_GRAPH);
    }
}

static void test_large_graph(void **state)
{
    (void)state;
    int n = 200000;
    size_t cap = (size_t)n * 80 + 256, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)sprintf(text + len, "{\"version\": 1, \"nodes\": [");
    /* consumers first: every input is a forward reference */
    for (int i = n - 1; i >= 1; i--)
        len += (size_t)sprintf(text + len, "{\"name\": \"n%d\", \"op\": \"Add\", "
                               "\"inputs\": [\"n%d\", \"n%d\"]},", i, i - 1,
                               i / 2);
    len += (size_t)sprintf(text + len, "{\"name\": \"n0\", \"op\": \"Const\", "
                           "\"attrs\": {\"value\": [1.0, 2.0]}}]}");
    dg_error err;
    uint64_t t0 = dg_now_ns();
    dgc_graph *g = dg_graph_load("big.json", text, len, &err);
    double s = (double)(dg_now_ns() - t0) / 1e9;
    if (!g)
        print_error("%s\n", err.msg);
    assert_non_null(g);
    assert_int_equal(g->n_nodes, n);
    assert_int_equal(g->nodes[0].outputs[0].shape.dims[0], 2);
    /* O(n^2) anywhere would take minutes; skip the clock under valgrind */
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "valgrind"))
        assert_true(s < 3.0);
    dg_graph_free(g);
    free(text);
}

/* Every allocation failure gives DG_E_NOMEM (never a crash or a wrong code). */
static void test_nomem(void **state)
{
    (void)state;
    int ok = 0;
    for (long k = 0; k < 4000 && !ok; k++) {
        dg_error err;
        memset(&err, 0, sizeof err);
        dg_alloc_fail_after(k);
        dgc_graph *g = load(good, &err);
        dg_alloc_fail_after(-1);
        if (g) {
            ok = 1;
            dg_graph_free(g);
        } else {
            if (err.code != DG_E_NOMEM)
                print_error("k=%ld: %d %s\n", k, err.code, err.msg);
            assert_int_equal(err.code, DG_E_NOMEM);
        }
    }
    assert_true(ok);
}

static void test_ops_render(void **state)
{
    (void)state;
    char *s = dg_ops_render();
    assert_non_null(s);
    assert_non_null(strstr(s, "Add (alias AddV2)"));
    assert_non_null(strstr(s, "VariableV2"));
    int lines = 0;
    for (char *p = s; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, dgc_n_ops + 1);
    char *pr = strstr(s, "\nPrint ");
    assert_non_null(pr);
    char *eol = strchr(pr + 1, '\n');
    assert_null(memmem(pr, (size_t)(eol - pr), "GPU(", 4));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_io_error),
        cmocka_unit_test(test_invalid_json),
        cmocka_unit_test(test_inline_errors),
        cmocka_unit_test(test_attr_schema),
        cmocka_unit_test(test_good_graph),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_rules_file),
        cmocka_unit_test(test_wrong_types_everywhere),
        cmocka_unit_test(test_truncations),
        cmocka_unit_test(test_large_graph),
        cmocka_unit_test(test_nomem),
        cmocka_unit_test(test_ops_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
