/*
 * test_fuse_conv.c -- the convolution half of the fusion pass
 * (compiler/passes/fuse_conv.c, issue 23): Conv2D -> Keras' frozen batch
 * norm (Mul / AddV2 by Rsqrt-Sub expressions of Consts) [-> residual Add]
 * -> Relu becomes one _FusedConv2D under the last node's name with the
 * batch norm folded into a new filter and bias; FusedBatchNormV3 folds
 * only when it is not training; nothing fuses past a fetch, on a device
 * without the fused kernel (OpenCL) or with fusion off; a zero Pad before
 * a VALID convolution becomes its explicit padding; swish (x *
 * Sigmoid(beta x)) is an activation.
 */
#include <math.h>
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

#define CONST(n, shape, v) "{\"name\": \"" n "\", \"op\": \"Const\", " \
    "\"attrs\": {\"dtype\": \"float32\", \"value\": " v "}},"

/* x [1,3,3,2] -> conv (1x1, w = [[1,2],[3,4]]) -> batch norm `bn` ->
 * `tail` nodes; fetch `fetch`. */
static const char *graph_text(const char *bn, const char *tail,
                              const char *fetch)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": [1, 3, 3, 2]}},"
        "{\"name\": \"x2\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": [1, 3, 3, 2]}},"
        CONST("w", "[1, 1, 2, 2]", "[[[[1, 2], [3, 4]]]]")
        CONST("gamma", "[2]", "[2, 4]") CONST("beta", "[2]", "[0.5, -1]")
        CONST("mean", "[2]", "[1, 2]") CONST("var", "[2]", "[3, 0.25]")
        CONST("eps", "[]", "1")
        "{\"name\": \"conv\", \"op\": \"Conv2D\", \"inputs\": [\"x\", \"w\"], "
        "\"attrs\": {\"strides\": [1, 1, 1, 1], \"padding\": \"VALID\"}},"
        "%s%s"
        "{\"name\": \"out\", \"op\": \"Sum\", \"inputs\": [\"r\"]}],"
        "\"fetch\": [%s]}",
        bn, tail, fetch);
    return buf;
}

/* Keras: s = Rsqrt(var + eps) * gamma; y = conv * s + (beta - mean * s) */
static const char *const keras_bn =
    "{\"name\": \"add\", \"op\": \"AddV2\", \"inputs\": [\"var\", \"eps\"]},"
    "{\"name\": \"rsqrt\", \"op\": \"Rsqrt\", \"inputs\": [\"add\"]},"
    "{\"name\": \"mul\", \"op\": \"Mul\", \"inputs\": [\"rsqrt\", \"gamma\"]},"
    "{\"name\": \"mul_1\", \"op\": \"Mul\", \"inputs\": [\"conv\", \"mul\"]},"
    "{\"name\": \"mul_2\", \"op\": \"Mul\", \"inputs\": [\"mean\", \"mul\"]},"
    "{\"name\": \"sub\", \"op\": \"Sub\", \"inputs\": [\"beta\", \"mul_2\"]},"
    "{\"name\": \"bn\", \"op\": \"AddV2\", \"inputs\": [\"mul_1\", \"sub\"]},";

static const char *fbn(int training)
{
    static char buf[512];
    snprintf(buf, sizeof buf,
             "{\"name\": \"bn\", \"op\": \"FusedBatchNormV3\", \"inputs\": "
             "[\"conv\", \"gamma\", \"beta\", \"mean\", \"var\"], \"attrs\": "
             "{\"epsilon\": 1.0, \"is_training\": %s}},",
             training ? "true" : "false");
    return buf;
}

static const char *const relu =
    "{\"name\": \"r\", \"op\": \"Relu\", \"inputs\": [\"bn\"]},";
static const char *const residual_relu =
    "{\"name\": \"res\", \"op\": \"AddV2\", \"inputs\": [\"bn\", \"x2\"]},"
    "{\"name\": \"r\", \"op\": \"Relu\", \"inputs\": [\"res\"]},";

/* swish as Keras freezes it: bn * Sigmoid(bn * 1.5) */
static const char *const swish =
    CONST("beta15", "[]", "1.5")
    "{\"name\": \"mb\", \"op\": \"Mul\", \"inputs\": [\"bn\", \"beta15\"]},"
    "{\"name\": \"sg\", \"op\": \"Sigmoid\", \"inputs\": [\"mb\"]},"
    "{\"name\": \"r\", \"op\": \"Mul\", \"inputs\": [\"sg\", \"bn\"]},";

/* gpus: --assume-gpus; on_cpu: everything under /device:CPU:0 */
static dg_program *compile(const char *text, int gpus, int on_cpu,
                           int no_fusion)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_graph *g = dg_graph_load("t.json", text, strlen(text), &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    dg_device_list *l;
    assert_int_equal(dg_devices_assume(gpus, &l, &err), DG_OK);
    dg_options o;
    dg_options_init(&o);
    o.no_fusion = no_fusion;
    o.device_scope = on_cpu ? "/device:CPU:0" : NULL;
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

/* The float values of the Const that input i of n is. */
static const float *const_in(const dg_program *p, const dgc_node *n, int i,
                             int64_t want)
{
    const dgc_node *c = &p->g->nodes[n->inputs[i].node];
    assert_int_equal(c->op, DGC_OPID_Const);
    const dgc_attr *a = dgc_node_attr(c, "value");
    assert_non_null(a);
    assert_int_equal(dg_shape_numel(&a->tensor->shape), want);
    return a->tensor->data;
}

/* r is conv + folded batch norm (+ residual) + Relu; the filter and bias
 * are w * s and beta - mean * s, s = gamma / sqrt(var + 1) */
static void assert_folded(const dg_program *p, int residual)
{
    const dgc_node *r = node(p, "r");
    assert_int_equal(r->op, DGC_OPID__FusedConv2D);
    assert_string_equal(dgc_node_attr(r, "fused_ops")->s,
                        residual ? "BiasAdd,Add,Relu" : "BiasAdd,Relu");
    assert_int_equal(r->n_inputs, residual ? 4 : 3);
    assert_int_equal(r->inputs[0].node, id_of(p, "x"));
    if (residual)
        assert_int_equal(r->inputs[3].node, id_of(p, "x2"));
    double s[2] = {2 / sqrt(4.0), 4 / sqrt(1.25)};
    const float *w = const_in(p, r, 1, 4), *b = const_in(p, r, 2, 2);
    const double w0[4] = {1, 2, 3, 4};
    for (int i = 0; i < 4; i++)
        assert_float_equal(w[i], w0[i] * s[i % 2], 1e-6);
    assert_float_equal(b[0], 0.5 - 1 * s[0], 1e-6);
    assert_float_equal(b[1], -1 - 2 * s[1], 1e-6);
    /* shown as the user's op; the absorbed conv is unchanged */
    dg_node_info ni;
    dg_program_node(p, id_of(p, "r"), &ni);
    assert_string_equal(ni.op, "Relu");
    assert_int_equal(node(p, "conv")->op, DGC_OPID_Conv2D);
    assert_int_equal(node(p, "conv")->inputs[1].node, id_of(p, "w"));
}

static void test_keras_bn(void **state)
{
    (void)state;
    dg_program *p = compile(graph_text(keras_bn, relu, "\"out\""), 0, 0, 0);
    assert_folded(p, 0);
    dg_program_free(p);
    p = compile(graph_text(keras_bn, residual_relu, "\"out\""), 0, 0, 0);
    assert_folded(p, 1);
    dg_program_free(p);
}

static void test_swish(void **state)
{
    (void)state;
    dg_program *p = compile(graph_text(keras_bn, swish, "\"out\""), 0, 0, 0);
    const dgc_node *r = node(p, "r");
    assert_int_equal(r->op, DGC_OPID__FusedConv2D);
    assert_string_equal(dgc_node_attr(r, "fused_ops")->s, "BiasAdd,Swish");
    assert_float_equal(dgc_attr_float(r, "swish_beta", 0), 1.5, 1e-12);
    assert_int_equal(r->inputs[0].node, id_of(p, "x"));
    dg_node_info ni;
    dg_program_node(p, id_of(p, "r"), &ni);
    assert_string_equal(ni.op, "Mul");
    dg_program_free(p);
}

static void test_fused_batch_norm(void **state)
{
    (void)state;
    dg_program *p = compile(graph_text(fbn(0), relu, "\"out\""), 0, 0, 0);
    assert_folded(p, 0);
    dg_program_free(p);
    /* training: batch statistics, nothing to fold into the convolution;
     * the Relu runs inside the batch norm (fuse_norm.c), an Identity */
    p = compile(graph_text(fbn(1), relu, "\"out\""), 0, 0, 0);
    assert_int_equal(node(p, "r")->op, DGC_OPID_Identity);
    assert_string_equal(dgc_node_attr(node(p, "r"), "_user_op")->s, "Relu");
    assert_int_equal(node(p, "bn")->op, DGC_OPID_FusedBatchNormV3);
    assert_int_equal(dgc_attr_int(node(p, "bn"), "_relu", 0), 1);
    dg_program_free(p);
}

static void test_fetch_blocks(void **state)
{
    (void)state;
    /* bn fetched: the Relu stays; conv + batch norm fuse into bn */
    dg_program *p = compile(graph_text(keras_bn, relu, "\"out\", \"bn\""), 0,
                            0, 0);
    assert_int_equal(node(p, "r")->op, DGC_OPID_Relu);
    const dgc_node *bn = node(p, "bn");
    assert_int_equal(bn->op, DGC_OPID__FusedConv2D);
    assert_string_equal(dgc_node_attr(bn, "fused_ops")->s, "BiasAdd");
    dg_node_info ni;
    dg_program_node(p, id_of(p, "bn"), &ni);
    assert_string_equal(ni.op, "AddV2");
    dg_program_free(p);
    /* the convolution's product fetched: nothing fuses */
    p = compile(graph_text(keras_bn, relu, "\"out\", \"mul_1\""), 0, 0, 0);
    assert_int_equal(node(p, "r")->op, DGC_OPID_Relu);
    assert_int_equal(node(p, "bn")->op, DGC_OPID_Add);
    assert_int_equal(node(p, "conv")->op, DGC_OPID_Conv2D);
    dg_program_free(p);
}

static void test_device_and_off(void **state)
{
    (void)state;
    /* on the (assumed) OpenCL GPU: no fused kernel there, unfused */
    dg_program *p = compile(graph_text(keras_bn, relu, "\"out\""), 1, 0, 0);
    assert_int_equal(node(p, "r")->op, DGC_OPID_Relu);
    dg_program_free(p);
    /* the same graph on the CPU of that machine fuses */
    p = compile(graph_text(keras_bn, relu, "\"out\""), 1, 1, 0);
    assert_folded(p, 0);
    dg_program_free(p);
    /* --no-fusion */
    p = compile(graph_text(keras_bn, relu, "\"out\""), 0, 0, 1);
    assert_int_equal(node(p, "r")->op, DGC_OPID_Relu);
    assert_int_equal(node(p, "bn")->op, DGC_OPID_Add);
    dg_program_free(p);
}

/* a zero Pad before a VALID convolution becomes its explicit padding;
 * a Pad with a nonzero constant (PadV2) stays */
static void test_pad(void **state)
{
    (void)state;
    static const char *const text =
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": [1, 4, 4, 2]}},"
        "{\"name\": \"p\", \"op\": \"Const\", \"attrs\": {\"dtype\": "
        "\"int32\", \"value\": [[0, 0], [1, 0], [0, 2], [0, 0]]}},"
        "{\"name\": \"c\", \"op\": \"Const\", \"attrs\": {\"dtype\": "
        "\"float32\", \"value\": %s}},"
        "{\"name\": \"pad\", \"op\": \"PadV2\", \"inputs\": [\"x\", \"p\", "
        "\"c\"]},"
        CONST("w", "[3, 3, 2, 2]", "[[[[1, 2], [3, 4]]]]")
        CONST("b", "[2]", "[1, 2]")
        "{\"name\": \"conv\", \"op\": \"Conv2D\", \"inputs\": [\"pad\", "
        "\"w\"], \"attrs\": {\"strides\": [1, 2, 2, 1], \"padding\": "
        "\"VALID\"}},"
        "{\"name\": \"ba\", \"op\": \"BiasAdd\", \"inputs\": [\"conv\", "
        "\"b\"]},"
        "{\"name\": \"r\", \"op\": \"Relu6\", \"inputs\": [\"ba\"]}],"
        "\"fetch\": [\"r\"]}";
    char buf[2048];
    snprintf(buf, sizeof buf, text, "0");
    dg_program *p = compile(buf, 0, 0, 0);
    const dgc_node *r = node(p, "r");
    assert_int_equal(r->op, DGC_OPID__FusedConv2D);
    assert_string_equal(dgc_node_attr(r, "fused_ops")->s, "BiasAdd,Relu6");
    assert_int_equal(r->inputs[0].node, id_of(p, "x"));
    assert_int_equal(r->inputs[1].node, id_of(p, "w"));
    assert_int_equal(r->inputs[2].node, id_of(p, "b"));
    assert_string_equal(dgc_node_attr(r, "padding")->s, "EXPLICIT");
    const dgc_attr *ex = dgc_node_attr(r, "explicit_paddings");
    const int64_t want[8] = {0, 0, 1, 0, 0, 2, 0, 0};
    assert_int_equal(ex->n, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(ex->ints[i], want[i]);
    assert_string_equal(dgc_node_attr(node(p, "conv"), "padding")->s, "VALID");
    dg_program_free(p);
    snprintf(buf, sizeof buf, text, "1");
    p = compile(buf, 0, 0, 0);
    r = node(p, "r");
    assert_int_equal(r->op, DGC_OPID__FusedConv2D);
    assert_int_equal(r->inputs[0].node, id_of(p, "pad"));
    assert_string_equal(dgc_node_attr(r, "padding")->s, "VALID");
    dg_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keras_bn),
        cmocka_unit_test(test_swish),
        cmocka_unit_test(test_fused_batch_norm),
        cmocka_unit_test(test_fetch_blocks),
        cmocka_unit_test(test_device_and_off),
        cmocka_unit_test(test_pad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
