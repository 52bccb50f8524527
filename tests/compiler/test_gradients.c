/*
 * test_gradients.c -- the gradient and training passes on small graphs:
 * generated node names, forward/colocation fields, AddN aggregation,
 * SumTo for broadcasting, ZerosLike without a path, optimizer state and
 * the train op, and the errors (non-scalar loss, var_list entry that is not
 * a Variable, gradient through a non-differentiable op), and gradients
 * through while loops (the backward loop's wiring, nested loops, a tf.cond
 * in the body, the unsupported cases).
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
#include "program.h"
#include "ops.h"

static dgc_graph *load(const char *json)
{
    dg_error err = {0};
    dg_graph *g = dg_graph_load("test.json", json, strlen(json), &err);
    if (!g)
        fail_msg("load failed: %s", err.msg);
    return (dgc_graph *)g;
}

static const dgc_node *node(const dgc_graph *g, const char *name)
{
    int32_t id = dgc_graph_find(g, name);
    if (id < 0)
        fail_msg("node '%s' not generated", name);
    return &g->nodes[id];
}

static int has_ctrl(const dgc_node *n, int32_t c)
{
    for (int i = 0; i < n->n_ctrl; i++)
        if (n->ctrl[i] == c)
            return 1;
    return 0;
}

static const char *SINCOS =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}},"
    "{\"name\": \"b\", \"op\": \"Sin\", \"inputs\": [\"a\"]},"
    "{\"name\": \"c\", \"op\": \"Cos\", \"inputs\": [\"b\"]},"
    "{\"name\": \"d\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 2.0}}],"
    "\"gradients\": [{\"name\": \"g\", \"ys\": [\"c\"], \"xs\": [\"a\", \"d\"], \"colocate\": true}]}";

static void test_names_and_fields(void **state)
{
    (void)state;
    dgc_graph *g = load(SINCOS);
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    int32_t b = dgc_graph_find(g, "b"), c = dgc_graph_find(g, "c");
    const dgc_node *gy = node(g, "g/c/grad_ys");
    assert_string_equal(dgc_op_name(gy->op), "OnesLike");
    assert_int_equal(gy->forward, c);
    assert_int_equal(gy->group_hint, c);
    const dgc_node *cs = node(g, "g/b/Cos");
    assert_int_equal(cs->forward, b);
    assert_int_equal(cs->group_hint, b);
    assert_int_equal(cs->colocate, 1);
    assert_true(cs->flags & DGC_NODE_GENERATED);
    node(g, "g/b/Mul");
    node(g, "g/c/Sin");
    node(g, "g/c/Neg");
    node(g, "g/c/Mul");
    const dgc_node *ga = node(g, "g/a");
    assert_string_equal(dgc_op_name(ga->op), "Identity");
    assert_int_equal(ga->n_outputs, 1);
    assert_int_equal(ga->outputs[0].shape.rank, 0);
    /* no path from c to d: zeros */
    assert_string_equal(dgc_op_name(node(g, "g/d")->op), "ZerosLike");
    /* nothing else differentiates d */
    for (int32_t i = 0; i < g->n_nodes; i++)
        assert_true(g->nodes[i].forward != dgc_graph_find(g, "d") ||
                    strcmp(g->nodes[i].name, "g/d") == 0);
    dg_graph_free(g);
}

static void test_colocate_override(void **state)
{
    (void)state;
    dgc_graph *g = load(SINCOS);
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, 0, &err), DG_OK);
    for (int32_t i = g->n_file_nodes; i < g->n_nodes; i++)
        assert_int_equal(g->nodes[i].colocate, 0);
    dg_graph_free(g);
}

static void test_addn_and_sumto(void **state)
{
    (void)state;
    dgc_graph *g = load(
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [3], \"init\": 1.0}},"
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [-1, 3]}},"
        "{\"name\": \"m\", \"op\": \"Mul\", \"inputs\": [\"a\", \"a\"]},"
        "{\"name\": \"s\", \"op\": \"Sin\", \"inputs\": [\"a\"]},"
        "{\"name\": \"p\", \"op\": \"Add\", \"inputs\": [\"m\", \"s\"]},"
        "{\"name\": \"q\", \"op\": \"Add\", \"inputs\": [\"x\", \"p\"]},"
        "{\"name\": \"y\", \"op\": \"Sum\", \"inputs\": [\"q\"]}],"
        "\"gradients\": [{\"name\": \"g\", \"ys\": [\"y\"], \"xs\": [\"a\"]}]}");
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    const dgc_node *ga = node(g, "g/a");
    assert_string_equal(dgc_op_name(ga->op), "AddN");
    assert_int_equal(ga->n_inputs, 3);
    assert_int_equal(ga->colocate, 0);
    assert_int_equal(ga->outputs[0].shape.rank, 1);
    assert_int_equal(ga->outputs[0].shape.dims[0], 3);
    /* q broadcasts p [3] against x [-1,3]: reduced with SumTo */
    const dgc_node *st = node(g, "g/q/SumTo");
    assert_string_equal(dgc_op_name(st->op), "SumTo");
    assert_string_equal(dgc_op_name(node(g, "g/y/BroadcastLike")->op),
                        "BroadcastLike");
    /* the placeholder gets no gradient nodes */
    int32_t x = dgc_graph_find(g, "x");
    for (int32_t i = g->n_file_nodes; i < g->n_nodes; i++)
        assert_int_not_equal(g->nodes[i].forward, x);
    dg_graph_free(g);
}

static void test_not_differentiable(void **state)
{
    (void)state;
    dgc_graph *g = load(
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}},"
        "{\"name\": \"v\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}},"
        "{\"name\": \"s\", \"op\": \"Square\", \"inputs\": [\"a\"]},"
        "{\"name\": \"u\", \"op\": \"AssignAdd\", \"inputs\": [\"v\", \"s\"]},"
        "{\"name\": \"y\", \"op\": \"Neg\", \"inputs\": [\"u\"]}],"
        "\"gradients\": [{\"name\": \"g\", \"ys\": [\"y\"], \"xs\": [\"a\"]}]}");
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "node 'u'"));
    assert_non_null(strstr(err.msg, "'AssignAdd' which has no gradient"));
    dg_graph_free(g);
}

static void test_zero_grad_ops(void **state)
{
    (void)state;
    /* ArgMax contributes nothing: the gradient is zeros, not an error */
    dgc_graph *g = load(
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [2, 3], \"init\": 1.0}},"
        "{\"name\": \"m\", \"op\": \"ArgMax\", \"inputs\": [\"a\"], \"attrs\": {\"axis\": 1}},"
        "{\"name\": \"f\", \"op\": \"Cast\", \"inputs\": [\"m\"], \"attrs\": {\"dtype\": \"float32\"}},"
        "{\"name\": \"y\", \"op\": \"Sum\", \"inputs\": [\"f\"]}],"
        "\"gradients\": [{\"name\": \"g\", \"ys\": [\"y\"], \"xs\": [\"a\"]}]}");
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    assert_string_equal(dgc_op_name(node(g, "g/a")->op), "ZerosLike");
    dg_graph_free(g);
}

#define MLP_HEAD                                                                \
    "{\"version\": 1, \"nodes\": ["                                           \
    "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [-1, 4]}}," \
    "{\"name\": \"w\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [4, 2], \"init\": {\"zeros\": {}}}}," \
    "{\"name\": \"k\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 0.0, \"trainable\": false}}," \
    "{\"name\": \"h\", \"op\": \"MatMul\", \"inputs\": [\"x\", \"w\"]},"      \
    "{\"name\": \"r\", \"op\": \"Square\", \"inputs\": [\"h\"]},"

static void test_train_adam(void **state)
{
    (void)state;
    dgc_graph *g = load(MLP_HEAD
        "{\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"r\"]},"
        "{\"name\": \"bump\", \"op\": \"AssignAdd\", \"inputs\": [\"k\", \"loss\"]}],"
        "\"collections\": {\"UPDATE_OPS\": [\"bump\"]},"
        "\"train\": {\"loss\": \"loss\", \"optimizer\": {\"type\": \"adam\", \"learning_rate\": 0.01},"
        " \"steps\": 3, \"update_ops\": \"UPDATE_OPS\", \"colocate_gradients\": true}}");
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    assert_int_equal(dgc_pass_train(g, -1, &err), DG_OK);
    int32_t w = dgc_graph_find(g, "w");
    const dgc_node *gw = node(g, "train/w");
    assert_int_equal(gw->colocate, 1);
    assert_int_equal(gw->outputs[0].shape.dims[0], 4);
    /* k is not trainable: no gradient */
    assert_int_equal(dgc_graph_find(g, "train/k"), -1);
    const dgc_node *m = node(g, "w/Adam");
    assert_string_equal(dgc_op_name(m->op), "Variable");
    assert_int_equal(m->n_coloc, 1);
    assert_int_equal(m->coloc[0], w);
    assert_false(dgc_attr_bool(m, "trainable", 1));
    node(g, "w/Adam_1");
    node(g, "beta1_power");
    node(g, "beta2_power");
    const dgc_node *up = node(g, "train/update_w/ApplyAdam");
    assert_int_equal(up->inputs[0].node, w);
    assert_int_equal(up->n_inputs, 10);
    assert_int_equal(up->inputs[9].node, dgc_graph_find(g, "train/w"));
    /* beta power updates run after the ApplyAdam */
    const dgc_node *mul = node(g, "train/beta1_power/Mul");
    assert_true(has_ctrl(mul, dgc_graph_find(g, "train/update_w/ApplyAdam")));
    /* the train op */
    assert_true(g->train.train_op >= 0);
    const dgc_node *op = &g->nodes[g->train.train_op];
    assert_string_equal(op->name, "train/step");
    assert_string_equal(dgc_op_name(op->op), "NoOp");
    assert_true(has_ctrl(op, dgc_graph_find(g, "train/update_w/ApplyAdam")));
    assert_true(has_ctrl(op, dgc_graph_find(g, "bump")));
    assert_true(has_ctrl(op, dgc_graph_find(g, "train/beta1_power/Assign")));
    assert_int_equal(g->train.loss_node, dgc_graph_find(g, "loss"));
    assert_true(g->train.global_step >= 0);
    const dgc_node *gs = &g->nodes[g->train.global_step];
    assert_int_equal(gs->outputs[0].dtype, DG_I64);
    dg_graph_free(g);
}

static void test_train_sgd_momentum(void **state)
{
    (void)state;
    const char *opt[] = {"{\"type\": \"sgd\", \"learning_rate\": 0.1}",
                         "{\"type\": \"momentum\", \"learning_rate\": 0.1, \"momentum\": 0.9}"};
    const char *upd[] = {"train/update_w/ApplyGradientDescent",
                         "train/update_w/ApplyMomentum"};
    for (int i = 0; i < 2; i++) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s%s", MLP_HEAD
                 "{\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"r\"]}],"
                 "\"train\": {\"loss\": \"loss\", \"optimizer\": ", opt[i]);
        strcat(buf, "}}");
        dgc_graph *g = load(buf);
        dg_error err = {0};
        assert_int_equal(dgc_pass_train(g, 1, &err), DG_OK);
        const dgc_node *up = node(g, upd[i]);
        assert_int_equal(up->inputs[0].node, dgc_graph_find(g, "w"));
        assert_int_equal(node(g, "train/w")->colocate, 1);
        if (i == 1)
            node(g, "w/Momentum");
        dg_graph_free(g);
    }
}

static void test_train_errors(void **state)
{
    (void)state;
    /* non-scalar loss */
    dgc_graph *g = load(MLP_HEAD
        "{\"name\": \"loss\", \"op\": \"Sum\", \"inputs\": [\"r\"], \"attrs\": {\"axis\": 0}}],"
        "\"train\": {\"loss\": \"loss\", \"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1}}}");
    dg_error err = {0};
    assert_int_equal(dgc_pass_train(g, -1, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "node 'loss'"));
    assert_non_null(strstr(err.msg, "scalar"));
    dg_graph_free(g);

    /* var_list naming a non-Variable: refused (by the loader or the pass) */
    const char *bad = MLP_HEAD
        "{\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"r\"]}],"
        "\"train\": {\"loss\": \"loss\", \"var_list\": [\"h\"], "
        "\"optimizer\": {\"type\": \"sgd\", \"learning_rate\": 0.1}}}";
    memset(&err, 0, sizeof err);
    dg_graph *g2 = dg_graph_load("test.json", bad, strlen(bad), &err);
    if (g2) {
        assert_int_equal(dgc_pass_train((dgc_graph *)g2, -1, &err), DG_E_GRAPH);
        dg_graph_free(g2);
    }
    assert_int_equal(err.code, DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "'h'"));
    assert_non_null(strstr(err.msg, "not a Variable"));
}

/* ---- while loops (grad_loop.c) ------------------------------------------ */

#define N_(name, op) "{\"name\": \"" name "\", \"op\": \"" op "\""
#define ENTER(name, in, extra) N_(name, "Enter") ", \"inputs\": [\"" in \
    "\"], \"attrs\": {\"frame_name\": \"L\"" extra "}},"
/* i = 0, x = x0; while i != 3: x = <body>(x, w); i += 1 */
#define LOOP_HEAD                                                             \
    "{\"version\": 1, \"nodes\": ["                                           \
    N_("w", "Variable") ", \"attrs\": {\"dtype\": \"float32\", \"shape\": [3], \"init\": [1.0, 2.0, 3.0]}}," \
    N_("x0", "Const") ", \"attrs\": {\"value\": [1.0, 1.0, 1.0]}},"          \
    N_("i0", "Const") ", \"attrs\": {\"value\": 0, \"dtype\": \"int32\"}},"  \
    N_("n", "Const") ", \"attrs\": {\"value\": 3, \"dtype\": \"int32\"}},"   \
    ENTER("L/e_i", "i0", "") ENTER("L/e_x", "x0", "")                        \
    ENTER("L/c_n", "n", ", \"is_constant\": true")                           \
    ENTER("L/c_w", "w", ", \"is_constant\": true")                           \
    N_("L/m_i", "Merge") ", \"inputs\": [\"L/e_i\", \"L/n_i\"]},"            \
    N_("L/m_x", "Merge") ", \"inputs\": [\"L/e_x\", \"L/n_x\"]},"            \
    N_("L/done", "Equal") ", \"inputs\": [\"L/m_i\", \"L/c_n\"]},"           \
    N_("L/cond", "LoopCond") ", \"inputs\": [\"L/done\"]},"                  \
    N_("L/s_i", "Switch") ", \"inputs\": [\"L/m_i\", \"L/cond\"]},"          \
    N_("L/s_x", "Switch") ", \"inputs\": [\"L/m_x\", \"L/cond\"]},"          \
    N_("L/b_i", "Identity") ", \"inputs\": [\"L/s_i:0\"]},"                  \
    N_("L/b_x", "Identity") ", \"inputs\": [\"L/s_x:0\"]},"                  \
    N_("L/one", "Const") ", \"inputs\": [\"^L/b_i\"], \"attrs\": {\"value\": 1, \"dtype\": \"int32\"}}," \
    N_("L/add", "Add") ", \"inputs\": [\"L/b_i\", \"L/one\"]},"              \
    N_("L/n_i", "NextIteration") ", \"inputs\": [\"L/add\"]},"               \
    N_("L/n_x", "NextIteration") ", \"inputs\": [\"L/mul\"]},"               \
    N_("L/x_i", "Exit") ", \"inputs\": [\"L/s_i:1\"]},"                      \
    N_("L/x_x", "Exit") ", \"inputs\": [\"L/s_x:1\"]},"                      \
    N_("loss", "Sum") ", \"inputs\": [\"L/x_x\"]},"
#define LOOP_MUL N_("L/mul", "Mul") ", \"inputs\": [\"L/b_x\", \"L/c_w\"]}"
#define LOOP_GRADS(ys) "], \"gradients\": [{\"name\": \"g\", \"ys\": [\"" ys \
    "\"], \"xs\": [\"w\", \"x0\"]}]}"

static int count_op(const dgc_graph *g, const char *op, int32_t *last)
{
    int k = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (strcmp(dgc_op_name(g->nodes[i].op), op) == 0) {
            k++;
            *last = i;
        }
    return k;
}

static void test_while_loop(void **state)
{
    (void)state;
    dgc_graph *g = load(LOOP_HEAD LOOP_MUL LOOP_GRADS("loss"));
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    /* one forward value (L/b_x, read by d/dw) goes through a stack: the
     * loop-invariant w enters the backward loop directly */
    int32_t push = -1, pop = -1;
    assert_int_equal(count_op(g, "StackPushV2", &push), 1);
    assert_int_equal(count_op(g, "StackPopV2", &pop), 1);
    assert_int_equal(g->nodes[push].inputs[1].node, dgc_graph_find(g, "L/b_x"));
    /* pushes in forward iteration order, before the counter moves on;
     * pops likewise in the backward loop */
    int32_t fbody = dgc_graph_find(g, "g/L/cond/count_body");
    int32_t fadd = dgc_graph_find(g, "g/L/cond/count_add");
    int32_t bbody = dgc_graph_find(g, "g/L/cond/grad_count_body");
    int32_t bsub = dgc_graph_find(g, "g/L/cond/grad_count_sub");
    assert_true(fbody >= 0 && fadd >= 0 && bbody >= 0 && bsub >= 0);
    /* (through ControlTriggers, which also fire for the dead pushes and
     * pops of an untaken tf.cond branch) */
    int32_t pushed = dgc_graph_find(g, "g/L/cond/pushed");
    int32_t popped = dgc_graph_find(g, "g/L/cond/popped");
    assert_true(pushed >= 0 && popped >= 0);
    assert_int_equal(g->nodes[pushed].op, DGC_OPID_ControlTrigger);
    assert_true(has_ctrl(&g->nodes[push], fbody));
    assert_true(has_ctrl(&g->nodes[fadd], pushed));
    assert_true(has_ctrl(&g->nodes[pushed], push));
    assert_true(has_ctrl(&g->nodes[pop], bbody));
    assert_true(has_ctrl(&g->nodes[bsub], popped));
    assert_true(has_ctrl(&g->nodes[popped], pop));
    /* the counter is a new variable of the forward loop; the backward
     * loop's Enters name its own frame */
    const dgc_node *ce = node(g, "g/L/cond/count_enter");
    assert_string_equal(dgc_node_attr(ce, "frame_name")->s, "L");
    const dgc_node *ge = node(g, "g/L/cond/grad_count_enter");
    assert_string_equal(dgc_node_attr(ge, "frame_name")->s, "g/L/grad");
    assert_int_equal(ge->inputs[0].node,
                     dgc_graph_find(g, "g/L/cond/count_exit"));
    /* d/dw: the accumulator's Exit; d/dx0: the backward variable's */
    const dgc_node *gw = node(g, "g/w");
    assert_int_equal(gw->inputs[0].node,
                     dgc_graph_find(g, "g/L/c_w/grad_acc_exit"));
    assert_int_equal(gw->outputs[0].shape.dims[0], 3);
    const dgc_node *gx = node(g, "g/x0");
    assert_int_equal(gx->inputs[0].node,
                     dgc_graph_find(g, "g/L/m_x/grad_exit"));
    /* every generated constant of the backward body is in its frame */
    for (int32_t i = g->n_file_nodes; i < g->n_nodes; i++) {
        const dgc_node *n = &g->nodes[i];
        if (n->op == DGC_OPID_Const && strncmp(n->name, "g/L/mul/", 8) == 0)
            assert_true(n->n_ctrl == 1);
    }
    dg_graph_free(g);
}

static void expect_grad_error(const char *json, const char *frag)
{
    dgc_graph *g = load(json);
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_E_GRAPH);
    if (!strstr(err.msg, frag))
        fail_msg("want '%s', got '%s'", frag, err.msg);
    dg_graph_free(g);
}

/* issue 21: StopGradient passes no gradient (d(a * stop(a))/da = a, and
 * a gradient only through it is zeros); PreventGradient is TF's error
 * naming the node and its message. */
#define SG_HEAD "{\"version\": 1, \"nodes\": [" \
    "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 2.0}}," \
    "{\"name\": \"s\", \"op\": \"StopGradient\", \"inputs\": [\"a\"]}," \
    "{\"name\": \"p\", \"op\": \"PreventGradient\", \"inputs\": [\"a\"], \"attrs\": {\"message\": \"no 2nd derivative\"}}," \
    "{\"name\": \"m\", \"op\": \"Mul\", \"inputs\": [\"a\", \"s\"]}," \
    "{\"name\": \"q\", \"op\": \"Mul\", \"inputs\": [\"p\", \"s\"]}],"
static void test_gradient_blockers(void **state)
{
    (void)state;
    dgc_graph *g = load(SG_HEAD "\"gradients\": [{\"name\": \"g\", \"ys\": "
                        "[\"m\"], \"xs\": [\"a\"]}, {\"name\": \"h\", \"ys\": "
                        "[\"s\"], \"xs\": [\"a\"]}]}");
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    /* g/a = Identity(dy * s): one term, no AddN of two */
    const dgc_node *ga = node(g, "g/a");
    if (ga->op == DGC_OPID_Identity)
        ga = &g->nodes[ga->inputs[0].node];
    assert_string_equal(dgc_op_name(ga->op), "Mul");
    assert_string_equal(dgc_op_name(node(g, "h/a")->op), "ZerosLike");
    dg_graph_free(g);
    expect_grad_error(SG_HEAD "\"gradients\": [{\"name\": \"g\", \"ys\": "
                      "[\"q\"], \"xs\": [\"a\"]}]}",
                      "node 'p': Gradient explicitly disabled. Reason: no "
                      "2nd derivative");
    /* Multinomial is TF's NotDifferentiable: no gradient, not an error */
    g = load("{\"version\": 1, \"nodes\": ["
             "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [2, 3], \"init\": 1.0}},"
             "{\"name\": \"k\", \"op\": \"Const\", \"attrs\": {\"value\": 4, \"dtype\": \"int32\"}},"
             "{\"name\": \"m\", \"op\": \"Multinomial\", \"inputs\": [\"a\", \"k\"]},"
             "{\"name\": \"f\", \"op\": \"Cast\", \"inputs\": [\"m\"], \"attrs\": {\"dtype\": \"float32\"}},"
             "{\"name\": \"y\", \"op\": \"Sum\", \"inputs\": [\"f\"]}],"
             "\"gradients\": [{\"name\": \"g\", \"ys\": [\"y\"], \"xs\": [\"a\"]}]}");
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    assert_string_equal(dgc_op_name(node(g, "g/a")->op), "ZerosLike");
    dg_graph_free(g);
}

static void test_while_loop_nested_cond_errors(void **state)
{
    (void)state;
    /* a y inside the loop */
    expect_grad_error(LOOP_HEAD LOOP_MUL LOOP_GRADS("L/mul"),
                      "gradients 'g': y 'L/mul' is inside a while loop");
    /* a tf.cond in the body: the pop of a value of a branch is dead when
     * that branch was not taken (its handle goes through a Switch on the
     * popped predicate) */
    const char *cond_body = LOOP_HEAD
        N_("L/pos", "Equal") ", \"inputs\": [\"L/b_i\", \"L/one\"]},"
        N_("L/sw", "Switch") ", \"inputs\": [\"L/b_x\", \"L/pos\"]},"
        N_("L/sq", "Square") ", \"inputs\": [\"L/sw:1\"]},"
        N_("L/mg", "Merge") ", \"inputs\": [\"L/sw:0\", \"L/sq\"]},"
        N_("L/mul", "Mul") ", \"inputs\": [\"L/mg\", \"L/c_w\"]}"
        LOOP_GRADS("loss");
    dgc_graph *gc = load(cond_body);
    dg_error e2 = {0};
    assert_int_equal(dgc_pass_gradients(gc, -1, &e2), DG_OK);
    const dgc_node *gs = node(gc, "g/L/sw/grad_guard");
    assert_int_equal(gs->op, DGC_OPID_Switch);
    int guarded_pops = 0;
    for (int32_t i = 0; i < gc->n_nodes; i++) {
        const dgc_node *p = &gc->nodes[i];
        if (p->op != DGC_OPID_StackPopV2)
            continue;
        const dgc_node *h = &gc->nodes[p->inputs[0].node];
        if (h->op == DGC_OPID_Identity &&
            gc->nodes[h->inputs[0].node].op == DGC_OPID_Switch) {
            assert_int_equal(h->inputs[0].index, 1); /* the true branch */
            guarded_pops++;
        }
    }
    assert_int_equal(guarded_pops, 1); /* Square's input */
    dg_graph_free(gc);
    /* a Merge that does not join one Switch's outputs */
    expect_grad_error(LOOP_HEAD
        N_("L/mg", "Merge") ", \"inputs\": [\"L/b_x\", \"L/b_x\"]},"
        N_("L/mul", "Mul") ", \"inputs\": [\"L/mg\", \"L/c_w\"]}"
        LOOP_GRADS("loss"),
        "node 'L/mg': gradients through a Merge in a while loop body that "
        "does not join the two outputs of one Switch");
    /* nested loops: supported (tests/data/cflow/nested_rnn_grad.json) */
    char path[1024];
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    snprintf(path, sizeof path, "%s/tests/data/cflow/nested_rnn_grad.json",
             root ? root : ".");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    dgc_graph *g = load(buf);
    dg_error err = {0};
    assert_int_equal(dgc_pass_gradients(g, -1, &err), DG_OK);
    /* the inner loop's stacks enter both frames around it: the pop's
     * handle is Enter(inner backward) of Enter(outer backward) of the
     * stack */
    int32_t pop = -1, found = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op != DGC_OPID_StackPopV2)
            continue;
        const dgc_node *e1 = &g->nodes[g->nodes[i].inputs[0].node];
        const dgc_node *e0 = &g->nodes[e1->inputs[0].node];
        if (strcmp(dgc_node_attr(e1, "frame_name")->s, "g/I/grad") == 0) {
            assert_int_equal(e0->op, DGC_OPID_Enter);
            assert_string_equal(dgc_node_attr(e0, "frame_name")->s,
                                "g/O/grad");
            assert_int_equal(g->nodes[e0->inputs[0].node].op,
                             DGC_OPID_StackV2);
            found++;
        }
        pop = i;
    }
    assert_true(pop >= 0 && found > 0);
    /* the outer counters wait for the inner loops */
    const dgc_node *fw = node(g, "g/O/cond/pushed");
    assert_true(has_ctrl(node(g, "g/O/cond/count_add"),
                         dgc_graph_find(g, "g/O/cond/pushed")));
    assert_true(has_ctrl(fw, dgc_graph_find(g, "g/I/cond/count_exit")));
    const dgc_node *bw = node(g, "g/O/cond/popped");
    assert_true(has_ctrl(bw, dgc_graph_find(g, "g/I/cond/grad_count_exit")));
    dg_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_fields),
        cmocka_unit_test(test_colocate_override),
        cmocka_unit_test(test_addn_and_sumto),
        cmocka_unit_test(test_not_differentiable),
        cmocka_unit_test(test_zero_grad_ops),
        cmocka_unit_test(test_gradient_blockers),
        cmocka_unit_test(test_train_adam),
        cmocka_unit_test(test_train_sgd_momentum),
        cmocka_unit_test(test_train_errors),
        cmocka_unit_test(test_while_loop),
        cmocka_unit_test(test_while_loop_nested_cond_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
