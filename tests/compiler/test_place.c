/*
 * test_place.c -- the placement pass (SPEC 4.1-4.8): defaults, explicit
 * requests, rules and round robin, the --device scope, numeric device
 * order, the consumer rule, colocation groups and each conflict kind, soft
 * placement, kernel availability errors, state ops following their
 * Variable, generated gradient ops with and without colocation, transfers,
 * speed on a large graph, and dg_compile + render + expect end to end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "program.h"
#include "registry.h" /* the CPU backend's kernel set */
#include "ops.h"
#include "dg_alloc.h"

static dg_device_list *devs_n(int n)
{
    dg_device_list *l = NULL;
    dg_error err;
    assert_int_equal(dg_devices_assume(n, &l, &err), DG_OK);
    return l;
}

/* Add a typed node; inputs by name ("" ends), "^x" = control input. */
static int32_t add(dgc_graph *g, const char *name, const char *op,
                   const char *dev, dg_dtype dt, const char *in0,
                   const char *in1)
{
    dg_error err;
    int opi = dgc_op_find(op);
    assert_true(opi >= 0);
    int32_t id = dgc_graph_add_node(g, name, opi, &err);
    assert_true(id >= 0);
    dgc_node *n = &g->nodes[id];
    if (dev)
        n->device = dg_strdup(dev);
    const char *ins[2] = {in0, in1};
    for (int k = 0; k < 2; k++) {
        if (!ins[k])
            continue;
        if (ins[k][0] == '^') {
            int32_t c = dgc_graph_find(g, ins[k] + 1);
            assert_true(c >= 0);
            assert_int_equal(dgc_node_add_ctrl(g, id, c), 0);
        } else {
            int32_t p = dgc_graph_find(g, ins[k]);
            assert_true(p >= 0);
            assert_int_equal(dgc_node_add_input(g, id, (dgc_ref){p, 0}), 0);
        }
    }
    n = &g->nodes[id];
    int no = dgc_ops[opi].n_out;
    if (no > 0) {
        n->outputs = dg_calloc((size_t)no, sizeof *n->outputs);
        for (int k = 0; k < no; k++) {
            n->outputs[k].dtype = dt;
            n->outputs[k].shape.rank = 1;
            n->outputs[k].shape.dims[0] = 4;
        }
        n->n_outputs = no;
    }
    g->n_file_nodes = g->n_nodes;
    return id;
}

/* A generated node (gradient op) joining `hint` when colocation is on. */
static int32_t add_gen(dgc_graph *g, const char *name, const char *op,
                       const char *in0, const char *hint, int colocate)
{
    int32_t keep = g->n_file_nodes;
    int32_t id = add(g, name, op, NULL, DG_F32, in0, NULL);
    g->n_file_nodes = keep;
    dgc_node *n = &g->nodes[id];
    n->flags |= DGC_NODE_GENERATED;
    n->group_hint = n->forward = dgc_graph_find(g, hint);
    n->colocate = colocate;
    return id;
}

static void coloc(dgc_graph *g, const char *who, const char *with)
{
    dgc_node *n = &g->nodes[dgc_graph_find(g, who)];
    n->coloc = dg_realloc(n->coloc, sizeof *n->coloc * (size_t)(n->n_coloc + 1));
    n->coloc[n->n_coloc++] = dgc_graph_find(g, with);
}

static dg_status place(dgc_graph *g, const dg_device_list *l,
                       const char *scope, const dgc_rule *rules, int n_rules,
                       int soft, int colocate, dg_error *err)
{
    memset(err, 0, sizeof *err);
    return dgc_pass_place(g, l, scope, rules, n_rules, soft, colocate, err);
}

static const char *dev(const dgc_graph *g, const dg_device_list *l,
                       const char *name)
{
    int32_t id = dgc_graph_find(g, name);
    assert_true(id >= 0);
    int d = g->nodes[id].device_id;
    assert_true(d >= 0 && d < l->n);
    /* short form for readable asserts: "CPU:0", "GPU:3" */
    static char buf[8][32];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, 32, "%s:%d", l->devs[d].type == DG_DEV_GPU ? "GPU" : "CPU",
             l->devs[d].index);
    return b;
}

static const char *why(const dgc_graph *g, const char *name)
{
    return dg_reason_name((dg_reason)g->nodes[dgc_graph_find(g, name)].reason);
}

#define CHECK(g, l, name, d, r)                         \
    do {                                                \
        assert_string_equal(dev(g, l, name), d);        \
        assert_string_equal(why(g, name), r);           \
    } while (0)

static void test_defaults_and_explicit(void **state)
{
    (void)state;
    dg_device_list *l2 = devs_n(2), *l0 = devs_n(0);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "a", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "b", "Sin", "/gpu:1", DG_F32, "a", NULL);
    add(g, "c", "Cos", "/cpu:0", DG_F32, "b", NULL);
    add(g, "d", "Exp", NULL, DG_F32, "c", NULL);
    add(g, "p", "Print", NULL, DG_F32, "d", NULL);
    add(g, "any", "Neg", "/device:GPU:*", DG_F32, "d", NULL);
    assert_int_equal(place(g, l2, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l2, "b", "GPU:1", "explicit");
    CHECK(g, l2, "c", "CPU:0", "explicit");
    CHECK(g, l2, "d", "GPU:0", "default");
    CHECK(g, l2, "p", "CPU:0", "default"); /* no GPU kernel for Print */
    CHECK(g, l2, "any", "GPU:0", "explicit");
    CHECK(g, l2, "a", "GPU:1", "consumer");
    assert_string_equal(g->nodes[dgc_graph_find(g, "b")].requested, "/device:GPU:1");
    assert_string_equal(g->nodes[dgc_graph_find(g, "d")].requested, "");
    dgc_graph_free(g);

    g = dgc_graph_new("t.json");
    add(g, "x", "Const", NULL, DG_F32, NULL, NULL);
    add(g, "y", "Neg", NULL, DG_F64, "x", NULL);
    assert_int_equal(place(g, l0, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l0, "x", "CPU:0", "consumer");
    CHECK(g, l0, "y", "CPU:0", "default");
    dgc_graph_free(g);
    dg_devices_free(l2);
    dg_devices_free(l0);
}

static void test_numeric_order(void **state)
{
    (void)state;
    dg_device_list *l = dgc_devices_new_cpu_only(
        dgr_backend_kernels(dgr_backend_at(0)));
    dg_device_info d = l->devs[0];
    d.type = DG_DEV_GPU;
    d.fp64 = 1;
    int idx[] = {10, 2, 11};
    for (int i = 0; i < 3; i++) {
        d.index = idx[i];
        dgc_device_fullname(DG_DEV_GPU, idx[i], d.name, sizeof d.name);
        assert_int_equal(dgc_devices_append(l, &d), 0);
    }
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "v", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "a", "Sin", "/gpu:*", DG_F32, "v", NULL);
    add(g, "b", "Sin", NULL, DG_F32, "v", NULL);
    add(g, "c", "Sin", "/gpu:10", DG_F32, "v", NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l, "a", "GPU:2", "explicit");
    CHECK(g, l, "b", "GPU:2", "default");
    CHECK(g, l, "c", "GPU:10", "explicit");
    CHECK(g, l, "v", "GPU:2", "default"); /* consumers disagree */
    dgc_graph_free(g);
    dg_devices_free(l);

    /* with 12 GPUs a request for any GPU lands on GPU:0, GPU:11 exists */
    l = devs_n(12);
    g = dgc_graph_new("t.json");
    add(g, "v", "Variable", "/gpu:11", DG_F32, NULL, NULL);
    add(g, "w", "Variable", "/gpu", DG_F32, NULL, NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l, "v", "GPU:11", "explicit");
    CHECK(g, l, "w", "GPU:0", "explicit");
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void test_rules(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(2);
    dg_error err;
    /* "Variables on CPU:0, everything else on GPU:0" as rules */
    char *vops[] = {"Variable"};
    dgc_rule rules[2];
    memset(rules, 0, sizeof rules);
    rules[0].ops = vops;
    rules[0].n_ops = 1;
    rules[0].device = "/cpu:0";
    rules[1].device = "/gpu:0";
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "w", "VariableV2", NULL, DG_F32, NULL, NULL);
    add(g, "x", "Const", NULL, DG_F32, NULL, NULL);
    add(g, "m", "Mul", NULL, DG_F32, "w", "x");
    add(g, "e", "Exp", "/gpu:1", DG_F32, "m", NULL);
    add(g, "f", "Exp", "/job:localhost", DG_F32, "m", NULL);
    assert_int_equal(place(g, l, NULL, rules, 2, 0, -1, &err), DG_OK);
    CHECK(g, l, "w", "CPU:0", "rule");
    CHECK(g, l, "x", "GPU:0", "rule");
    CHECK(g, l, "m", "GPU:0", "rule");
    CHECK(g, l, "e", "GPU:1", "explicit"); /* own device wins */
    CHECK(g, l, "f", "GPU:0", "explicit"); /* merged over the rule */
    assert_string_equal(g->nodes[dgc_graph_find(g, "f")].requested,
                        "/job:localhost/device:GPU:0");
    dgc_graph_free(g);

    /* round robin in graph order, name globs */
    char *rr[] = {"/gpu:0", "/gpu:1"};
    dgc_rule r2[2];
    memset(r2, 0, sizeof r2);
    r2[0].name_glob = "tower_1/*";
    r2[0].device = "/cpu:0";
    r2[1].ops = vops;
    r2[1].n_ops = 1;
    r2[1].devices = rr;
    r2[1].n_devices = 2;
    r2[1].round_robin = 1;
    g = dgc_graph_new("t.json");
    add(g, "v0", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "v1", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "tower_1/v", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "tower_1/a/s", "Sin", NULL, DG_F32, "v0", NULL);
    add(g, "v2", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "v3", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "s", "Sin", NULL, DG_F32, "v3", NULL);
    assert_int_equal(place(g, l, NULL, r2, 2, 0, -1, &err), DG_OK);
    CHECK(g, l, "v0", "GPU:0", "rule");
    CHECK(g, l, "v1", "GPU:1", "rule");
    CHECK(g, l, "tower_1/v", "CPU:0", "rule");
    CHECK(g, l, "tower_1/a/s", "CPU:0", "rule");
    CHECK(g, l, "v2", "GPU:0", "rule");
    CHECK(g, l, "v3", "GPU:1", "rule");
    CHECK(g, l, "s", "GPU:0", "default");
    dgc_graph_free(g);

    /* a malformed rule device */
    dgc_rule bad;
    memset(&bad, 0, sizeof bad);
    bad.device = "/gpu:x";
    g = dgc_graph_new("t.json");
    add(g, "v0", "Variable", NULL, DG_F32, NULL, NULL);
    assert_int_equal(place(g, l, NULL, &bad, 1, 0, -1, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "Malformed device specification '/gpu:x'"));
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void test_scope(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(2);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "a", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "b", "Sin", "/cpu:0", DG_F32, "a", NULL);
    add(g, "c", "Sin", "/device:GPU:*", DG_F32, "a", NULL);
    add_gen(g, "g/c", "Cos", "c", "c", 0);
    assert_int_equal(place(g, l, "/job:localhost/device:GPU:1", NULL, 0, 0,
                           -1, &err), DG_OK);
    CHECK(g, l, "a", "GPU:1", "explicit");
    CHECK(g, l, "b", "CPU:0", "explicit");
    CHECK(g, l, "c", "GPU:1", "explicit");
    CHECK(g, l, "g/c", "GPU:0", "default"); /* generated: no scope */
    assert_string_equal(g->nodes[1].requested, "/job:localhost/device:CPU:0");
    dgc_graph_free(g);

    g = dgc_graph_new("t.json");
    add(g, "a", "Variable", NULL, DG_F32, NULL, NULL);
    assert_int_equal(place(g, l, "/gpu:zz", NULL, 0, 0, -1, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "Malformed device specification '/gpu:zz'"));
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void test_colocation(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(4);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "a", "Variable", "/gpu:2", DG_F32, NULL, NULL);
    add(g, "b", "Sin", NULL, DG_F32, "a", NULL);
    add(g, "c", "Cos", "/job:localhost", DG_F32, "b", NULL);
    add(g, "d", "Cos", NULL, DG_F32, "b", NULL);
    coloc(g, "b", "a");
    coloc(g, "c", "b");
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l, "a", "GPU:2", "explicit");
    CHECK(g, l, "b", "GPU:2", "colocation");
    CHECK(g, l, "c", "GPU:2", "explicit");
    CHECK(g, l, "d", "GPU:0", "default");
    dgc_graph_free(g);

    /* merge of partial requests: /gpu:* + /device:*:3 style pieces */
    g = dgc_graph_new("t.json");
    add(g, "a", "Variable", "/gpu", DG_F32, NULL, NULL);
    add(g, "b", "Sin", "/gpu:3", DG_F32, "a", NULL);
    coloc(g, "a", "b");
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l, "a", "GPU:3", "explicit");
    CHECK(g, l, "b", "GPU:3", "explicit");
    dgc_graph_free(g);

    /* a member without a GPU kernel pulls the group to the CPU */
    g = dgc_graph_new("t.json");
    add(g, "a", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "p", "Print", NULL, DG_F32, "a", NULL);
    add(g, "s", "Sin", NULL, DG_F32, "p", NULL);
    coloc(g, "s", "p");
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l, "s", "CPU:0", "default");
    CHECK(g, l, "p", "CPU:0", "default");
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void conflict_case(const char *da, const char *db, const char *msg)
{
    dg_device_list *l = devs_n(2);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "a", "Variable", da, DG_F32, NULL, NULL);
    add(g, "b", "Sin", db, DG_F32, "a", NULL);
    coloc(g, "b", "a");
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_E_PLACEMENT);
    assert_string_equal(err.msg, msg);
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void test_conflicts(void **state)
{
    (void)state;
    conflict_case("/gpu:0", "/gpu:1",
                  "Cannot colocate nodes 'b' and 'a': Cannot merge devices "
                  "with incompatible ids: '/device:GPU:1' and '/device:GPU:0'");
    conflict_case("/gpu:0", "/cpu:0",
                  "Cannot colocate nodes 'b' and 'a': Cannot merge devices "
                  "with incompatible types: '/device:CPU:0' and '/device:GPU:0'");
    conflict_case("/job:ps", "/job:worker",
                  "Cannot colocate nodes 'b' and 'a': Cannot merge devices "
                  "with incompatible jobs: '/job:worker' and '/job:ps'");
    conflict_case("/task:0/gpu:0", "/task:1",
                  "Cannot colocate nodes 'b' and 'a': Cannot merge devices "
                  "with incompatible tasks: '/task:1' and '/task:0/device:GPU:0'");

    /* soft placement keeps the group together */
    dg_device_list *l = devs_n(2);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "a", "Variable", "/gpu:0", DG_F32, NULL, NULL);
    add(g, "b", "Sin", "/cpu:0", DG_F32, "a", NULL);
    add(g, "c", "Sin", "/gpu:1", DG_F32, "a", NULL);
    add(g, "d", "Sin", "/gpu:1", DG_F32, "a", NULL);
    coloc(g, "b", "a");
    coloc(g, "d", "c");
    add(g, "e", "Sin", "/gpu:0", DG_F32, "a", NULL);
    coloc(g, "d", "e");
    assert_int_equal(place(g, l, NULL, NULL, 0, 1, -1, &err), DG_OK);
    assert_string_equal(dev(g, l, "a"), dev(g, l, "b"));
    CHECK(g, l, "a", "GPU:0", "soft");
    CHECK(g, l, "b", "GPU:0", "soft");
    assert_string_equal(dev(g, l, "c"), dev(g, l, "e"));
    CHECK(g, l, "d", "GPU:0", "soft");
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void test_kernels_and_soft(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(1);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "i", "Variable", "/device:GPU:0", DG_I32, NULL, NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_E_PLACEMENT);
    assert_string_equal(err.msg,
        "Cannot assign a device for operation 'i': Could not satisfy explicit "
        "device specification '/device:GPU:0' because no supported kernel for "
        "GPU devices is available.");
    assert_int_equal(place(g, l, NULL, NULL, 0, 1, -1, &err), DG_OK);
    CHECK(g, l, "i", "CPU:0", "soft");
    dgc_graph_free(g);

    g = dgc_graph_new("t.json");
    add(g, "a", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "b", "Sin", "/gpu:3", DG_F32, "a", NULL);
    add(g, "p", "Print", "/gpu:3", DG_F32, "a", NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_E_PLACEMENT);
    assert_string_equal(err.msg,
        "Cannot assign a device for operation 'b': Operation was explicitly "
        "assigned to /device:GPU:3 but available devices are [ "
        "/job:localhost/replica:0/task:0/device:CPU:0, "
        "/job:localhost/replica:0/task:0/device:GPU:0 ]. Make sure the device "
        "specification refers to a valid device.");
    assert_int_equal(place(g, l, NULL, NULL, 0, 1, -1, &err), DG_OK);
    CHECK(g, l, "b", "GPU:0", "soft");
    CHECK(g, l, "p", "CPU:0", "soft");
    assert_string_equal(g->nodes[1].requested, "/device:GPU:3");
    dgc_graph_free(g);

    /* Print on a GPU, a job that does not exist */
    g = dgc_graph_new("t.json");
    add(g, "a", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "p", "Print", "/gpu:0", DG_F32, "a", NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_E_PLACEMENT);
    assert_non_null(strstr(err.msg, "operation 'p': Could not satisfy explicit "
                                    "device specification '/device:GPU:0'"));
    dgc_graph_free(g);
    g = dgc_graph_new("t.json");
    add(g, "a", "Variable", "/job:worker/gpu:0", DG_F32, NULL, NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 1, -1, &err), DG_E_PLACEMENT);
    assert_non_null(strstr(err.msg, "explicitly assigned to /job:worker/device:GPU:0"));
    dgc_graph_free(g);

    /* malformed own device */
    g = dgc_graph_new("t.json");
    add(g, "x", "Variable", "cpu:0:1", DG_F32, NULL, NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 1, -1, &err), DG_E_GRAPH);
    assert_string_equal(err.msg, "node 'x': Malformed device specification 'cpu:0:1'");
    dgc_graph_free(g);

    /* int32 Variable and its Assign with no request: CPU (no GPU kernel) */
    g = dgc_graph_new("t.json");
    add(g, "n", "Variable", NULL, DG_I32, NULL, NULL);
    add(g, "one", "Const", NULL, DG_I32, NULL, NULL);
    add(g, "inc", "AssignAdd", NULL, DG_I32, "n", "one");
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l, "n", "CPU:0", "default");
    CHECK(g, l, "inc", "CPU:0", "default");
    CHECK(g, l, "one", "CPU:0", "consumer");
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void test_state_ops(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(2);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "v", "Variable", "/cpu:0", DG_F32, NULL, NULL);
    add(g, "x", "Const", NULL, DG_F32, NULL, NULL);
    add(g, "asg", "Assign", "/gpu:0", DG_F32, "v", "x");
    add(g, "w", "Variable", NULL, DG_F32, NULL, NULL);
    add(g, "upd", "AssignSub", "/gpu:1", DG_F32, "w", "x");
    add(g, "r", "Identity", NULL, DG_F32, "w", "^asg");
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    CHECK(g, l, "v", "CPU:0", "explicit");
    CHECK(g, l, "asg", "CPU:0", "colocation");
    CHECK(g, l, "w", "GPU:1", "colocation");
    CHECK(g, l, "upd", "GPU:1", "explicit");
    CHECK(g, l, "r", "GPU:0", "default");
    dgc_graph_free(g);
    dg_devices_free(l);
}

static void test_generated(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(2);
    dg_error err;
    for (int on = 0; on <= 1; on++) {
        dgc_graph *g = dgc_graph_new("t.json");
        add(g, "a", "Variable", "/cpu:0", DG_F32, NULL, NULL);
        add(g, "b", "Sin", "/gpu:1", DG_F32, "a", NULL);
        add(g, "c", "Cos", "/cpu:0", DG_F32, "b", NULL);
        add_gen(g, "g/c/grad", "Sin", "c", "c", on);
        add_gen(g, "g/b/grad", "Cos", "b", "b", on);
        g->nodes[3].device = dg_strdup(""); /* empty = none */
        assert_int_equal(place(g, l, "/gpu:0", NULL, 0, 0, -1, &err), DG_OK);
        if (on) {
            CHECK(g, l, "g/c/grad", "CPU:0", "colocation");
            CHECK(g, l, "g/b/grad", "GPU:1", "colocation");
        } else {
            CHECK(g, l, "g/c/grad", "GPU:0", "default");
            CHECK(g, l, "g/b/grad", "GPU:0", "default");
        }
        /* the compile-wide override beats the per-set flag */
        assert_int_equal(place(g, l, NULL, NULL, 0, 0, !on, &err), DG_OK);
        assert_string_equal(dev(g, l, "g/b/grad"), on ? "GPU:0" : "GPU:1");
        dgc_graph_free(g);
    }
    dg_devices_free(l);
}

static void test_transfers(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(2);
    dg_error err;
    dgc_graph *g = dgc_graph_new("t.json");
    add(g, "a", "Variable", "/cpu:0", DG_F32, NULL, NULL);
    add(g, "b", "Sin", "/gpu:0", DG_F32, "a", NULL);
    add(g, "c", "Cos", "/gpu:0", DG_F32, "a", NULL);
    add(g, "d", "Add", "/gpu:1", DG_F32, "a", "b");
    add(g, "e", "Neg", "/gpu:1", DG_F32, "d", "^c");
    add(g, "f", "Neg", "/cpu:0", DG_F32, "a", NULL);
    assert_int_equal(place(g, l, NULL, NULL, 0, 0, -1, &err), DG_OK);
    dgc_transfer *t = NULL;
    int n = 0;
    assert_int_equal(dgc_partition(g, NULL, &t, &n, &err), DG_OK);
    assert_int_equal(n, 3); /* a->GPU:0, a->GPU:1, b->GPU:1; ^c none */
    assert_int_equal(t[0].src.node, 0);
    assert_int_equal(t[0].first_consumer, 1);
    assert_int_equal(t[0].dst_device, 1);
    assert_int_equal(t[1].src.node, 0);
    assert_int_equal(t[1].first_consumer, 3);
    assert_int_equal(t[2].src.node, 1);
    assert_int_equal(t[2].src_device, 1);
    assert_int_equal(t[2].dst_device, 2);
    dg_free(t);
    uint8_t active[6] = {1, 1, 0, 0, 0, 1};
    assert_int_equal(dgc_partition(g, active, &t, &n, &err), DG_OK);
    assert_int_equal(n, 1);
    dg_free(t);
    dgc_graph_free(g);
    dg_devices_free(l);
}

/* every allocation failure in placement and partitioning is DG_E_NOMEM */
static void test_out_of_memory(void **state)
{
    (void)state;
    dg_device_list *l = devs_n(2);
    char *vops[] = {"Variable"};
    dgc_rule rule;
    memset(&rule, 0, sizeof rule);
    rule.ops = vops;
    rule.n_ops = 1;
    rule.device = "/cpu:0";
    int ok = 0;
    for (long k = 0; k < 200 && !ok; k++) {
        dgc_graph *g = dgc_graph_new("t.json");
        add(g, "a", "Variable", NULL, DG_F32, NULL, NULL);
        add(g, "b", "Sin", "/gpu:1", DG_F32, "a", NULL);
        add(g, "c", "Cos", "/job:localhost", DG_F32, "b", NULL);
        add(g, "d", "Cos", NULL, DG_F32, "b", NULL);
        coloc(g, "d", "c");
        dg_error err;
        memset(&err, 0, sizeof err);
        dg_alloc_fail_after(k);
        dg_status st = dgc_pass_place(g, l, "/job:localhost", &rule, 1, 0,
                                      -1, &err);
        dgc_transfer *t = NULL;
        int n = 0;
        if (st == DG_OK)
            st = dgc_partition(g, NULL, &t, &n, &err);
        dg_alloc_fail_after(-1);
        if (st == DG_OK) {
            ok = 1;
            assert_int_equal(n, 2);
            assert_string_equal(dev(g, l, "d"), "GPU:0");
        } else {
            assert_int_equal(st, DG_E_NOMEM);
        }
        dg_free(t);
        dgc_graph_free(g);
    }
    assert_true(ok);
    dg_devices_free(l);
}

/* This thread's CPU time: what placement itself costs, whatever else the
 * machine is doing (a wall clock made this test fail under load). */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* SPEC 4.7: every op and dtype that TF places on a GPU and dgrun's CPU runs
 * has an OpenCL kernel or runs in host memory on the GPU's behalf
 * (dg_kernel_set.host), so a graph that ran before TF's GPU table decided
 * placement still runs (fails naming each op and dtype left out). */
static void test_tf_gpu_kernels_covered(void **state)
{
    (void)state;
    if (dgr_backend_count() < 2)
        skip();
    const dg_kernel_set *cpu = dgr_backend_kernels(dgr_backend_at(0));
    const dg_kernel_set *cl = dgr_backend_kernels(dgr_backend_at(1));
    char missing[4096] = "";
    int n = 0, rows = 0;
    for (int op = 0; op < DGC_N_OPS; op++) {
        const char *dts;
        if (dgc_op_tf_gpu_row(op, &dts, NULL, NULL) < 0 || !*dts ||
            dgc_op_has(op, DGC_OP_STATE)) /* state ops: their group moves */
            continue;
        rows++;
        for (int dt = 0; dt < DG_DTYPE_COUNT; dt++) {
            const char *name = dg_dtype_name((dg_dtype)dt);
            const char *at = strstr(dts, name);
            int listed = strcmp(dts, "*") == 0 ||
                         (at && (at[strlen(name)] == ',' ||
                                 at[strlen(name)] == 0));
            uint32_t bit = 1u << dt;
            if (!listed || !(cpu->dtypes[op] & bit) ||
                (cl->dtypes[op] & bit) || (cl->host[op] & bit))
                continue;
            size_t l = strlen(missing);
            snprintf(missing + l, sizeof missing - l, " %s(%s)",
                     dgc_op_name(op), name);
            n++;
        }
    }
    assert_true(rows > 100);
    if (n)
        fail_msg("%d op/dtype pairs TF places on GPUs that dgrun's OpenCL "
                 "backend neither runs nor runs in host memory:%s", n,
                 missing);
}

static void test_large_graph_is_fast(void **state)
{
    (void)state;
    const char *env = getenv("DGRUN_PLACE_NODES"); /* e.g. 1000000 */
    const int N = env ? atoi(env) : 200000;
    dg_device_list *l = devs_n(12);
    dg_error err;
    dgc_graph *g = dgc_graph_new("big.json");
    char name[32], prev[32];
    add(g, "v", "Variable", NULL, DG_F32, NULL, NULL);
    strcpy(prev, "v");
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "n%d", i);
        int32_t id = add(g, name, (i % 3) ? "Sin" : "Neg",
                         (i % 7 == 0) ? "/gpu:3" : NULL, DG_F32, prev, NULL);
        if (i % 5 == 0)
            coloc(g, name, "v");
        (void)id;
        strcpy(prev, name);
    }
    double t0 = now_s();
    assert_int_equal(place(g, l, "/job:localhost", NULL, 0, 1, -1, &err), DG_OK);
    double dt = now_s() - t0;
    /* about 0.1-0.3 s of CPU on the 2-core CI machine; the bound catches
     * a superlinear placer (a quadratic one takes minutes), not noise */
    if (dt > 2.0 * (N / 200000.0 > 1 ? N / 200000.0 : 1))
        fail_msg("placing %d nodes took %.3f s of CPU", N, dt);
    if (env)
        print_message("placed %d nodes in %.3f s\n", N, dt);
    dgc_graph_free(g);
    dg_devices_free(l);
}

/* ---- end to end through the loader, dg_compile, render, expect ---------- */

static const char *seed_graph =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [2], \"init\": 1.0}},"
    "{\"name\": \"b\", \"op\": \"Sin\", \"inputs\": [\"a\"], \"device\": \"/gpu:0\"},"
    "{\"name\": \"c\", \"op\": \"Cos\", \"inputs\": [\"b\"], \"device\": \"/cpu:0\"}"
    "], \"placement\": {\"rules\": [{\"match\": {\"op\": [\"Variable\"]}, \"device\": \"/cpu:0\"}]},"
    " \"fetch\": [\"c\"]}";

static void test_compile_render_expect(void **state)
{
    (void)state;
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_graph *g = dg_graph_load("seed.json", seed_graph, strlen(seed_graph), &err);
    if (!g)
        skip(); /* loader not available in this build */
    dg_device_list *l = devs_n(1);
    dg_options o;
    memset(&o, 0, sizeof o);
    o.allow_soft_placement = -1;
    o.colocate = -1;
    o.assume_gpus = 1;
    o.repeat = 1;
    o.steps = -1;
    dg_program *p = dg_compile(g, &o, l, &err);
    if (!p)
        fail_msg("compile: %s", err.msg);
    char *text = dg_program_render(p, "text");
    assert_string_equal(text,
        "a: (Variable): /job:localhost/replica:0/task:0/device:CPU:0\n"
        "b: (Sin): /job:localhost/replica:0/task:0/device:GPU:0\n"
        "c: (Cos): /job:localhost/replica:0/task:0/device:CPU:0\n");
    free(text);
    char *json = dg_program_render(p, "json");
    assert_non_null(strstr(json, "{\"name\": \"a\", \"op\": \"Variable\", "
        "\"device\": \"/job:localhost/replica:0/task:0/device:CPU:0\", "
        "\"requested\": \"/device:CPU:0\", \"reason\": \"rule\"}"));
    assert_non_null(strstr(json, "{\"from\": \"a\", \"to\": \"b\", "
        "\"src_device\": \"/job:localhost/replica:0/task:0/device:CPU:0\", "
        "\"dst_device\": \"/job:localhost/replica:0/task:0/device:GPU:0\", "
        "\"bytes\": 8}"));
    free(json);
    char *dot = dg_program_render(p, "dot");
    assert_non_null(strstr(dot, "subgraph cluster_1"));
    assert_non_null(strstr(dot, "style=dashed"));
    free(dot);
    assert_int_equal(dg_program_transfer_count(p), 2);
    char *ex = dg_program_explain(p, "a", &err);
    assert_non_null(ex);
    assert_non_null(strstr(ex, "rule:            #0"));
    free(ex);
    assert_null(dg_program_explain(p, "nope", &err));

    char path[] = "/tmp/dgrun_golden_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"a\": \"/cpu:0\", \"b\": \"/job:localhost/replica:0/task:0/device:GPU:0\","
          " \"c\": \"/gpu:0\", \"zz\": \"CPU:0\"}", f);
    fclose(f);
    char *report = NULL;
    assert_int_equal(dg_program_expect(p, path, &report, &err), DG_E_MISMATCH);
    assert_string_equal(report,
        "c: expected /job:localhost/replica:0/task:0/device:GPU:0, placed on "
        "/job:localhost/replica:0/task:0/device:CPU:0\n"
        "zz: expected /job:localhost/replica:0/task:0/device:CPU:0, not in the graph\n");
    free(report);
    f = fopen(path, "w");
    fputs("{\"a\": \"/cpu:0\", \"b\": \"/gpu:*\"}", f);
    fclose(f);
    report = NULL;
    assert_int_equal(dg_program_expect(p, path, &report, &err), DG_OK);
    assert_null(report);
    f = fopen(path, "w");
    fputs("[1, 2]", f);
    fclose(f);
    assert_int_equal(dg_program_expect(p, path, &report, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, path));
    remove(path);
    dg_program_free(p);
    dg_devices_free(l);
}

static void test_compile_fetch_errors(void **state)
{
    (void)state;
    dg_error err;
    dg_graph *g = dg_graph_load("seed.json", seed_graph, strlen(seed_graph), &err);
    if (!g)
        skip();
    dg_device_list *l = devs_n(0);
    dg_options o;
    memset(&o, 0, sizeof o);
    o.allow_soft_placement = -1;
    o.colocate = -1;
    const char *fetch[] = {"nope"};
    o.fetch = fetch;
    o.n_fetch = 1;
    o.allow_soft_placement = 1;
    assert_null(dg_compile(g, &o, l, &err));
    assert_string_equal(err.msg, "fetch 'nope': no such node");
    dg_graph_free(g);
    o.allow_soft_placement = -1;
    /* without soft placement the explicit /gpu:0 fails on a CPU-only list */
    g = dg_graph_load("seed.json", seed_graph, strlen(seed_graph), &err);
    o.fetch = NULL;
    o.n_fetch = 0;
    assert_null(dg_compile(g, &o, l, &err));
    assert_int_equal(err.code, DG_E_PLACEMENT);
    dg_graph_free(g);
    g = dg_graph_load("seed.json", seed_graph, strlen(seed_graph), &err);
    o.allow_soft_placement = 1;
    dg_program *p = dg_compile(g, &o, l, &err);
    assert_non_null(p);
    dg_node_info ni;
    dg_program_node(p, 1, &ni);
    assert_string_equal(ni.name, "b");
    assert_string_equal(dg_reason_name(ni.reason), "soft");
    dg_program_free(p);
    dg_devices_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_explicit),
        cmocka_unit_test(test_numeric_order),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_scope),
        cmocka_unit_test(test_colocation),
        cmocka_unit_test(test_conflicts),
        cmocka_unit_test(test_kernels_and_soft),
        cmocka_unit_test(test_state_ops),
        cmocka_unit_test(test_generated),
        cmocka_unit_test(test_transfers),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_large_graph_is_fast),
        cmocka_unit_test(test_tf_gpu_kernels_covered),
        cmocka_unit_test(test_compile_render_expect),
        cmocka_unit_test(test_compile_fetch_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
