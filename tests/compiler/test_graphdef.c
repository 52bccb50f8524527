/*
 * test_graphdef.c -- unit and end-to-end tests of the TensorFlow GraphDef
 * (proto3 JSON) loader: the IR the files in tests/data/graphdef give
 * (colocation from _class, devices, folded Const inputs, Variable
 * initializers, control inputs), their placement and their results through
 * the public API, TensorProto details, and the one-line errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>
#include <cJSON.h>

#include "dgrun.h"
#include "ir.h"
#include "ops.h"
#include "dg_alloc.h"

static const char *src_root(void)
{
    const char *r = getenv("DGRUN_SOURCE_ROOT");
    return r ? r : ".";
}

static char *data_path(const char *name)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/tests/data/graphdef/%s", src_root(), name);
    return buf;
}

static dgc_graph *load_file(const char *name)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    dgc_graph *g = dg_graph_load(data_path(name), NULL, 0, &err);
    if (!g)
        fail_msg("%s: %s", name, err.msg);
    return g;
}

static dgc_graph *load_text(const char *json, dg_error *err)
{
    memset(err, 0, sizeof *err);
    return dg_graph_load("t.json", json, strlen(json), err);
}

static const dgc_node *node(const dgc_graph *g, const char *name)
{
    int32_t id = dgc_graph_find(g, name);
    if (id < 0)
        fail_msg("no node '%s'", name);
    return &g->nodes[id];
}

/* ---- running through the public API ------------------------------------- */

typedef struct run_out {
    dg_fetch_result *r;
    int n;
} run_out;

static dg_program *compile(dgc_graph *g, int assume_gpus, int soft,
                           dg_options *o)
{
    dg_options_init(o);
    o->opencl_devices = "none";
    o->allow_soft_placement = soft;
    o->inter_op_threads = 2;
    o->intra_op_threads = 1;
    dg_error err;
    dg_device_list *devs = NULL;
    dg_status st = assume_gpus >= 0 ? dg_devices_assume(assume_gpus, &devs, &err)
                                    : dg_devices_discover(o, &devs, &err);
    if (st)
        fail_msg("devices: %s", err.msg);
    dg_program *p = dg_compile(g, o, devs, &err);
    dg_devices_free(devs);
    if (!p)
        fail_msg("compile: %s", err.msg);
    return p;
}

static const char *placed(const dg_program *p, const char *name)
{
    for (int i = 0; i < dg_program_node_count(p); i++) {
        dg_node_info ni;
        dg_program_node(p, i, &ni);
        if (strcmp(ni.name, name) == 0)
            return ni.device;
    }
    fail_msg("node '%s' not placed", name);
    return NULL;
}

static run_out run(const char *file, const char **fetch, int n_fetch)
{
    dg_options o;
    dg_program *p = compile(load_file(file), -1, 1, &o);
    o.fetch = fetch;
    o.n_fetch = n_fetch;
    dg_error err;
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fail_msg("session: %s", err.msg);
    run_out out = {NULL, 0};
    if (dg_session_run(s, &out.r, &out.n, &err))
        fail_msg("run: %s", err.msg);
    dg_session_free(s);
    dg_program_free(p);
    assert_int_equal(out.n, n_fetch);
    return out;
}

static double elem(const dg_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DG_F32: return ((float *)t->data)[i];
    case DG_F64: return ((double *)t->data)[i];
    case DG_I32: return ((int32_t *)t->data)[i];
    case DG_I64: return (double)((int64_t *)t->data)[i];
    default: return ((uint8_t *)t->data)[i];
    }
}

/* ---- the sin/cos seed graph ---------------------------------------------- */

static void test_sincos_ir(void **state)
{
    (void)state;
    dgc_graph *g = load_file("sincos.json");
    assert_int_equal(g->n_nodes, 7);
    assert_int_equal(g->n_file_nodes, 7);
    const dgc_node *a = node(g, "a");
    assert_true(dgc_op_has(a->op, DGC_OP_VARIABLE));
    assert_string_equal(dgc_node_op_name(a), "VariableV2");
    const dgc_attr *init = dgc_node_attr(a, "init");
    assert_non_null(init);
    assert_int_equal(init->init.kind, DGC_INIT_VALUE);
    assert_int_equal(init->init.value->dtype, DG_F32);
    assert_int_equal(init->init.value->shape.rank, 0);
    assert_true(*(float *)init->init.value->data == 1.0f);
    assert_null(dgc_node_attr(a, "container"));
    const dgc_node *as = node(g, "a/Assign");
    assert_int_equal(as->n_coloc, 1);
    assert_int_equal(as->coloc[0], dgc_graph_find(g, "a"));
    assert_int_equal(as->n_inputs, 2);
    assert_int_equal(as->inputs[1].node, dgc_graph_find(g, "a/initial_value"));
    assert_string_equal(node(g, "b")->device, "/device:GPU:0");
    assert_string_equal(node(g, "c")->device, "/device:CPU:0");
    const dgc_node *in = node(g, "init");
    assert_int_equal(in->n_inputs, 0);
    assert_int_equal(in->n_ctrl, 1);
    assert_int_equal(in->ctrl[0], dgc_graph_find(g, "a/Assign"));
    assert_int_equal(node(g, "c")->outputs[0].dtype, DG_F32);
    dg_graph_free(g);
}

static void test_sincos_place(void **state)
{
    (void)state;
    dg_options o;
    dg_program *p = compile(load_file("sincos.json"), 1, 0, &o);
    const char *cpu = "/job:localhost/replica:0/task:0/device:CPU:0";
    const char *gpu = "/job:localhost/replica:0/task:0/device:GPU:0";
    assert_string_equal(placed(p, "a"), cpu);
    assert_string_equal(placed(p, "a/Assign"), cpu);
    assert_string_equal(placed(p, "a/read"), cpu);
    assert_string_equal(placed(p, "b"), gpu);
    assert_string_equal(placed(p, "c"), cpu);
    assert_true(dg_program_transfer_count(p) >= 2);
    dg_program_free(p);

    /* without GPUs the explicit /device:GPU:0 of b cannot be met */
    dg_device_list *devs;
    dg_error err;
    dg_options_init(&o);
    assert_int_equal(dg_devices_assume(0, &devs, &err), DG_OK);
    dgc_graph *g = load_file("sincos.json");
    assert_null(dg_compile(g, &o, devs, &err));
    assert_non_null(strstr(err.msg, "'b'"));
    dg_graph_free(g);
    dg_devices_free(devs);
}

static void test_sincos_run(void **state)
{
    (void)state;
    const char *f[] = {"c", "a/read"};
    run_out r = run("sincos.json", f, 2);
    assert_float_equal(elem(r.r[0].value, 0), cos(sin(1.0)), 1e-6);
    assert_float_equal(elem(r.r[1].value, 0), 1.0, 0);
    dg_fetch_results_free(r.r, r.n);
}

/* ---- MLP forward pass: tensorContent weights, folded Const inputs -------- */

static void test_mlp_ir(void **state)
{
    (void)state;
    dgc_graph *g = load_file("mlp.json");
    const dgc_node *mean = node(g, "Mean");
    assert_int_equal(mean->n_inputs, 1);
    const dgc_attr *ax = dgc_node_attr(mean, "axis");
    assert_non_null(ax);
    assert_int_equal(ax->n, 1);
    assert_int_equal(ax->ints[0], 0);
    assert_int_equal(dgc_attr_bool(mean, "keepdims", 1), 0);
    assert_int_equal(dgc_attr_bool(node(g, "Sum"), "keepdims", 0), 1);
    const dgc_attr *sh = dgc_node_attr(node(g, "Reshape"), "shape");
    assert_int_equal(sh->n, 1);
    assert_int_equal(sh->ints[0], -1);
    assert_int_equal(node(g, "Reshape")->outputs[0].shape.dims[0], 4);
    const dgc_attr *perm = dgc_node_attr(node(g, "transpose"), "perm");
    assert_int_equal(perm->n, 2);
    assert_int_equal(perm->ints[0], 1);
    assert_int_equal(dgc_attr_int(node(g, "ArgMax"), "axis", -9), 1);
    assert_int_equal(node(g, "ArgMax")->outputs[0].dtype, DG_I64);
    const dgc_attr *w1 = dgc_node_attr(node(g, "w1"), "value");
    assert_int_equal(w1->tensor->shape.rank, 2);
    assert_int_equal(w1->tensor->shape.dims[0], 4);
    assert_int_equal(w1->tensor->shape.dims[1], 3);
    /* "b2": one floatVal broadcast over shape [2] */
    const dgc_attr *b2 = dgc_node_attr(node(g, "b2"), "value");
    assert_true(((float *)b2->tensor->data)[1] == 0.5f);
    const dgc_node *x = node(g, "x");
    assert_int_equal(x->outputs[0].shape.dims[0], -1);
    assert_int_equal(x->outputs[0].shape.dims[1], 4);
    assert_string_equal(dgc_node_op_name(node(g, "logits")), "AddV2");
    dg_graph_free(g);
}

static void test_mlp_run(void **state)
{
    (void)state;
    const char *f[] = {"logits", "Mean", "ArgMax", "Reshape", "transpose", "Sum"};
    run_out r = run("mlp.json", f, 6);
    FILE *fp = fopen(data_path("mlp_expected.json"), "r");
    assert_non_null(fp);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    cJSON *exp = cJSON_Parse(buf);
    assert_non_null(exp);
    for (int i = 0; i < r.n; i++) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(exp, f[i]);
        assert_non_null(e);
        /* flatten the expected nested list */
        double vals[64];
        int k = 0;
        const cJSON *stack[8];
        int sp = 0;
        stack[sp++] = e->child;
        while (sp > 0) {
            const cJSON *c = stack[--sp];
            if (!c)
                continue;
            stack[sp++] = c->next;
            if (cJSON_IsArray(c))
                stack[sp++] = c->child;
            else
                vals[k++] = c->valuedouble;
        }
        const dg_tensor *t = r.r[i].value;
        assert_int_equal(dg_shape_numel(&t->shape), k);
        for (int j = 0; j < k; j++)
            assert_float_equal(elem(t, j), vals[j], 1e-5);
    }
    assert_int_equal(r.r[2].value->dtype, DG_I64);
    assert_int_equal(r.r[5].value->shape.rank, 2);
    cJSON_Delete(exp);
    dg_fetch_results_free(r.r, r.n);
}

/* ---- Variables, initializers, control inputs, Print, Cast --------------- */

static void test_variables(void **state)
{
    (void)state;
    dgc_graph *g = load_file("variables.json");
    const dgc_attr *zi = dgc_node_attr(node(g, "z"), "init");
    assert_int_equal(zi->init.kind, DGC_INIT_ZEROS);
    const dgc_attr *si = dgc_node_attr(node(g, "step"), "init");
    assert_int_equal(si->init.kind, DGC_INIT_VALUE);
    assert_int_equal(si->init.value->dtype, DG_I64);
    const dgc_node *p = node(g, "Print");
    const dgc_attr *m = dgc_node_attr(p, "message");
    assert_string_equal(m->s, "step: ");
    assert_int_equal(dgc_attr_int(p, "summarize", 0), 3);
    assert_int_equal(dgc_node_attr(node(g, "Cast"), "dtype")->i, DG_F32);
    /* the axis Const is defined after its consumer */
    assert_int_equal(dgc_node_attr(node(g, "zsum"), "axis")->ints[0], 0);
    dg_graph_free(g);

    const char *f[] = {"after", "z", "step", "Print", "zsum"};
    run_out r = run("variables.json", f, 5);
    const double want[] = {0.5, 1.5, 2.5, 3.5};
    for (int i = 0; i < 4; i++)
        assert_float_equal(elem(r.r[0].value, i), want[i], 1e-6);
    assert_float_equal(elem(r.r[1].value, 1), 0.0, 0);
    assert_int_equal(r.r[2].value->dtype, DG_I64);
    assert_int_equal(*(int64_t *)r.r[2].value->data, 7);
    assert_float_equal(elem(r.r[3].value, 0), 7.0, 0);
    assert_float_equal(elem(r.r[4].value, 0), 0.0, 0);
    dg_fetch_results_free(r.r, r.n);
}

/* tf.get_variable initializers: glorot uniform, random normal, Fill zeros */
static void test_initializers(void **state)
{
    (void)state;
    dgc_graph *g = load_file("initializers.json");
    const dgc_attr *w = dgc_node_attr(node(g, "w"), "init");
    assert_int_equal(w->init.kind, DGC_INIT_RANDOM_UNIFORM);
    assert_float_equal(w->init.a, -0.92582, 1e-4);
    assert_float_equal(w->init.b, 0.92582, 1e-4);
    const dgc_attr *v = dgc_node_attr(node(g, "v"), "init");
    assert_int_equal(v->init.kind, DGC_INIT_RANDOM_NORMAL);
    assert_float_equal(v->init.a, 3.0, 1e-6);
    assert_float_equal(v->init.b, 0.5, 1e-6);
    const dgc_node *rn = node(g, "v/Initializer/random_normal/RandomStandardNormal");
    assert_string_equal(dgc_op_name(rn->op), "RandomNormal");
    assert_int_equal(rn->n_inputs, 0);
    const dgc_node *fill = node(g, "b/Initializer/zeros");
    assert_string_equal(dgc_op_name(fill->op), "Const");
    assert_int_equal(fill->outputs[0].shape.dims[0], 40);
    assert_int_equal(fill->outputs[0].shape.dims[1], 30);
    const dgc_attr *b = dgc_node_attr(node(g, "b"), "init");
    assert_int_equal(b->init.kind, DGC_INIT_VALUE);
    assert_int_equal(dg_shape_numel(&b->init.value->shape), 1200);
    dg_graph_free(g);

    /* w's initializer is on /device:GPU:0 and colocated with w; its int32
     * shape Const only became an attribute, so it does not pin the group */
    dg_options o;
    dg_program *p = compile(load_file("initializers.json"), 1, 0, &o);
    const char *gpu = "/job:localhost/replica:0/task:0/device:GPU:0";
    assert_string_equal(placed(p, "w"), gpu);
    assert_string_equal(placed(p, "w/Initializer/random_uniform/RandomUniform"),
                        gpu);
    assert_string_equal(placed(p, "w/Initializer/random_uniform/shape"),
                        "/job:localhost/replica:0/task:0/device:CPU:0");
    dg_program_free(p);

    const char *f[] = {"w/read", "vmean", "b/read"};
    run_out r = run("initializers.json", f, 3);
    int distinct = 0;
    for (int i = 0; i < 12; i++) {
        double x = elem(r.r[0].value, i);
        assert_true(x >= -0.92583 && x < 0.92583);
        distinct += x != elem(r.r[0].value, 0);
    }
    assert_true(distinct > 0);
    assert_float_equal(elem(r.r[1].value, 0), 3.0, 0.1);
    assert_float_equal(elem(r.r[2].value, 1199), 0.0, 0);
    dg_fetch_results_free(r.r, r.n);
}

/* ---- TensorProto details ------------------------------------------------- */

static dg_tensor *const_value(const char *tensor)
{
    char json[4096];
    snprintf(json, sizeof json, "{\"node\": [{\"name\": \"c\", \"op\": "
             "\"Const\", \"attr\": {\"value\": {\"tensor\": %s}}}]}", tensor);
    dg_error err;
    dgc_graph *g = load_text(json, &err);
    if (!g)
        fail_msg("%s: %s", tensor, err.msg);
    const dgc_attr *v = dgc_node_attr(node(g, "c"), "value");
    dg_tensor *t = dg_tensor_new(v->tensor->dtype, &v->tensor->shape);
    memcpy(t->data, v->tensor->data, (size_t)dg_shape_numel(&t->shape) *
                                      dg_dtype_size(t->dtype));
    dg_graph_free(g);
    return t;
}

static void test_tensor_proto(void **state)
{
    (void)state;
    dg_tensor *t = const_value("{\"dtype\": \"DT_INT64\", \"tensorShape\": "
                               "{\"dim\": [{\"size\": \"3\"}]}, \"int64Val\": "
                               "[\"9007199254740993\", \"-2\"]}");
    assert_int_equal(t->dtype, DG_I64);
    assert_true(((int64_t *)t->data)[0] == 9007199254740993ll);
    assert_true(((int64_t *)t->data)[2] == -2); /* last value repeated */
    dg_tensor_free(t);
    t = const_value("{\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": "
                    "[{\"size\": \"3\"}]}, \"floatVal\": [\"NaN\", "
                    "\"-Infinity\", 2.5]}");
    assert_true(isnan(((float *)t->data)[0]));
    assert_true(isinf(((float *)t->data)[1]) && ((float *)t->data)[1] < 0);
    assert_true(((float *)t->data)[2] == 2.5f);
    dg_tensor_free(t);
    t = const_value("{\"dtype\": \"DT_DOUBLE\", \"tensorShape\": {\"dim\": "
                    "[{\"size\": \"2\"}, {}]}}"); /* size 0 omitted */
    assert_int_equal(t->shape.rank, 2);
    assert_int_equal(t->shape.dims[1], 0);
    dg_tensor_free(t);
    t = const_value("{\"dtype\": \"DT_BOOL\", \"tensorShape\": {\"dim\": "
                    "[{\"size\": \"2\"}]}, \"boolVal\": [true, false]}");
    assert_int_equal(t->dtype, DG_BOOL);
    assert_int_equal(((uint8_t *)t->data)[0], 1);
    assert_int_equal(((uint8_t *)t->data)[1], 0);
    dg_tensor_free(t);
    /* no values: zeros; snake_case field names are accepted too */
    t = const_value("{\"dtype\": \"DT_INT32\", \"tensor_shape\": {\"dim\": "
                    "[{\"size\": \"2\"}]}}");
    assert_int_equal(((int32_t *)t->data)[1], 0);
    dg_tensor_free(t);
    /* tensorContent: int32 [1, 256] little-endian = AQAAAAABAAA= */
    t = const_value("{\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\": "
                    "[{\"size\": \"2\"}]}, \"tensorContent\": \"AQAAAAABAAA=\"}");
    assert_int_equal(((int32_t *)t->data)[0], 1);
    assert_int_equal(((int32_t *)t->data)[1], 256);
    dg_tensor_free(t);
}

/* ---- errors -------------------------------------------------------------- */

static void expect_error(const char *json, const char *frag)
{
    dg_error err;
    dgc_graph *g = load_text(json, &err);
    if (g || err.code != DG_E_GRAPH || !strstr(err.msg, frag))
        print_error("json: %s\nexpected '%s', got %d '%s'\n", json, frag,
                    err.code, err.msg);
    assert_null(g);
    assert_int_equal(err.code, DG_E_GRAPH);
    assert_non_null(strstr(err.msg, frag));
    assert_null(strchr(err.msg, '\n'));
}

#define FC "{\"name\": \"f\", \"op\": \"Const\", \"attr\": {\"value\": " \
           "{\"tensor\": {\"dtype\": \"DT_FLOAT\", \"floatVal\": [1.0]}}}}"
#define IC "{\"name\": \"i\", \"op\": \"Const\", \"attr\": {\"value\": " \
           "{\"tensor\": {\"dtype\": \"DT_INT32\", \"intVal\": [0]}}}}"

/* issue 20: a GraphDef attr of the wrong type names the node, the attr,
 * the type it must have and the one it has. */
static void test_attr_types(void **state)
{
    (void)state;
    expect_error("{\"node\": [" FC ", {\"name\": \"m\", \"op\": \"MatMul\", "
                 "\"input\": [\"f\", \"f\"], \"attr\": {\"transpose_a\": "
                 "{\"i\": \"1\"}}}]}",
                 "node 'm': attr 'transpose_a' must be a bool ({\"b\": "
                 "true|false}), got an int");
    expect_error("{\"node\": [" FC ", {\"name\": \"p\", \"op\": \"Print\", "
                 "\"input\": [\"f\"], \"attr\": {\"summarize\": "
                 "{\"f\": 2.5}}}]}",
                 "node 'p': attr 'summarize' must be an int ({\"i\": "
                 "\"<int>\"}), got a float");
    /* TF attrs dgrun does not use are accepted and ignored */
    dg_error err;
    dgc_graph *g = load_text("{\"node\": [" FC ", {\"name\": \"e\", "
                             "\"op\": \"Equal\", \"input\": [\"f\", \"f\"], "
                             "\"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}, "
                             "\"incompatible_shape_error\": {\"b\": true}}}]}",
                             &err);
    if (!g)
        print_error("%s\n", err.msg);
    assert_non_null(g);
    dgc_graph_free(g);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("{\"node\": [], \"fetch\": []}", "unknown top-level key 'fetch'");
    expect_error("{\"node\": [], \"nodes\": []}", "unknown top-level key 'node'");
    expect_error("{\"node\": {}}", "'node' must be an array");
    /* issue 22: a library loads as the .pb's does: the inliner's error */
    expect_error("{\"node\": [], \"library\": {\"function\": [{}]}}",
                 "library function 0 has no name");
    expect_error("{\"node\": [{\"name\": \"s\", \"op\": \"CropAndResize\"}]}",
                 "unsupported ops: CropAndResize (1 node)");
    expect_error("{\"node\": [{\"name\": \"s\", \"op\": \"SumTo\"}]}",
                 "unsupported ops: SumTo (1 node)");
    /* every unsupported op type at once, counted, in file order */
    expect_error("{\"node\": [{\"name\": \"a\", \"op\": \"CropAndResize\"}, "
                 "{\"name\": \"b\", \"op\": \"Dilation2D\"}, {\"name\": "
                 "\"c\", \"op\": \"CropAndResize\"}, {\"name\": \"d\", \"op\": "
                 "\"NoOp\"}, {\"name\": \"e\", \"op\": \"CropAndResize\"}]}",
                 "unsupported ops: CropAndResize (3 nodes), Dilation2D (1 node)");
    expect_error("{\"node\": [" FC ", {\"name\": \"m\", \"op\": \"Mean\", "
                 "\"input\": [\"f\", \"f\"]}]}",
                 "node 'm': reduction_indices 'f' must be int32 or int64");
    expect_error("{\"node\": [" IC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"i\"]}, {\"name\": \"m\", \"op\": \"Mean\", "
                 "\"input\": [\"i\", \"n\"]}]}",
                 /* issue 21: run-time reduction indices are fine; these
                  * are one axis too many for a scalar */
                 "node 'm': Mean: 1 reduction axes for a tensor of rank 0");
    expect_error("{\"node\": [" FC ", {\"name\": \"m\", \"op\": \"Mean\", "
                 "\"input\": [\"f\"]}]}", "node 'm': op Mean needs its "
                 "reduction_indices input");
    expect_error("{\"node\": [" FC ", " IC ", {\"name\": \"m\", \"op\": "
                 "\"Reshape\", \"input\": [\"f\", \"i\"]}]}",
                 "node 'm': shape 'i' must be a vector");
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"], \"attr\": {\"foo\": {\"b\": true}}}]}",
                 "node 'n': attr 'foo' of op Neg is not supported");
    expect_error("{\"node\": [{\"name\": \"p\", \"op\": \"Placeholder\", "
                 "\"attr\": {\"dtype\": {\"type\": \"DT_HALF\"}}}]}",
                 "node 'p': attr 'dtype': unsupported dtype DT_HALF");
    expect_error("{\"node\": [{\"name\": \"p\", \"op\": \"Placeholder\", "
                 "\"attr\": {\"shape\": {\"shape\": {\"unknownRank\": "
                 "true}}}}]}", "node 'p': attr 'shape': a Placeholder of "
                 "unknown rank");
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"], \"attr\": {\"_class\": {\"list\": "
                 "{\"s\": [\"bG9jOkB6\"]}}}}]}",
                 "node 'n': _class colocates with unknown node 'z'");
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"], \"attr\": {\"_class\": {\"list\": "
                 "{\"s\": [\"!!\"]}}}}]}", "node 'n': attr '_class'");
    /* first_n: TF's (issue 21); of the wrong kind it is an error */
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Print\", "
                 "\"input\": [\"f\"], \"attr\": {\"first_n\": {\"s\": "
                 "\"eA==\"}}}]}", "node 'n': attr 'first_n' must be an int");
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"BiasAdd\", "
                 "\"input\": [\"f\", \"f\"], \"attr\": {\"data_format\": "
                 "{\"s\": \"TkNIVw==\"}}}]}", "'data_format' = 'NCHW'");
    expect_error("{\"node\": [{\"name\": \"x\", \"op\": \"NoOp\", "
                 "\"inputs\": []}]}", "node 'x': unknown field 'inputs'");
    expect_error("{\"node\": [{\"name\": \"x\", \"op\": \"NoOp\", "
                 "\"op\": \"NoOp\"}]}", "duplicate key 'op' in node[0]");
    /* numeric DataTypes out of int range or fractional (fuzzing: the
     * double -> int cast was UB) */
    expect_error("{\"node\": [{\"name\": \"p\", \"op\": \"Placeholder\", "
                 "\"attr\": {\"dtype\": {\"type\": -9223372036854775809}}}]}",
                 "node 'p': attr 'dtype': unsupported dtype a numeric DataType");
    expect_error("{\"node\": [{\"name\": \"p\", \"op\": \"Placeholder\", "
                 "\"attr\": {\"dtype\": {\"type\": 1.5}}}]}",
                 "unsupported dtype a numeric DataType");
    expect_error("{\"node\": [{\"name\": \"x\", \"op\": \"Neg\", "
                 "\"input\": [\"y\"]}]}", "node 'x': input 'y' names unknown "
                 "node 'y'");
    expect_error("{\"node\": [" FC ", {\"name\": \"x\", \"op\": \"Neg\", "
                 "\"input\": [\"^f\", \"f\"]}]}", "control input '^f' before "
                 "data input 'f'");
    expect_error("{\"node\": [" FC ", {\"name\": \"x\", \"op\": \"Neg\", "
                 "\"input\": [\"f:1\"]}]}", "refers to output 1 of 'f'");
    expect_error("{\"node\": [" FC ", {\"name\": \"x\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"], \"device\": \"/gpu:zero\"}]}",
                 "node 'x': Malformed device specification '/gpu:zero'");
    expect_error("{\"node\": [" FC ", " FC "]}", "node 'f': duplicate node "
                 "name");
    expect_error("{\"node\": [{\"name\": \"c\", \"op\": \"Const\", \"attr\": "
                 "{\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", "
                 "\"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}, "
                 "\"tensorContent\": \"AAAAAA==\"}}}}]}",
                 "node 'c': attr 'value': tensorContent has 4 bytes");
    expect_error("{\"node\": [{\"name\": \"c\", \"op\": \"Const\", \"attr\": "
                 "{\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", "
                 "\"floatVal\": [1, 2]}}}}]}", "floatVal has 2 values");
    expect_error("{\"node\": [{\"name\": \"c\", \"op\": \"Const\", \"attr\": "
                 "{\"dtype\": {\"type\": \"DT_INT32\"}, \"value\": {\"tensor\": "
                 "{\"dtype\": \"DT_FLOAT\", \"floatVal\": [1]}}}}]}",
                 "node 'c': attr 'dtype' is int32 but its value is float32");
    expect_error("{\"node\": [{\"name\": \"c\", \"op\": \"Const\"}]}",
                 "node 'c': Const needs attr 'value'");
    expect_error("{\"node\": [{\"name\": \"n\", \"op\": \"MatMul\", \"attr\": "
                 "{\"transpose_a\": {\"i\": \"1\"}}}]}",
                 "node 'n': attr 'transpose_a' must be a bool");
    /* Variable initializers */
    expect_error("{\"node\": [{\"name\": \"v\", \"op\": \"VariableV2\", "
                 "\"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}, \"shape\": "
                 "{\"shape\": {\"dim\": [{\"size\": \"2\"}]}}}}, "
                 "{\"name\": \"v/Assign\", \"op\": \"Assign\", \"input\": "
                 "[\"v\", \"f\"]}, " FC "]}",
                 "node 'v': its initial value 'f' has shape [] but the "
                 "variable has shape [2]");
    expect_error("{\"node\": [{\"name\": \"v\", \"op\": \"VariableV2\", "
                 "\"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}}}]}",
                 "node 'v': VariableV2 needs a fully known 'shape'");
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"]}, {\"name\": \"z\", \"op\": \"Fill\", "
                 "\"input\": [\"n\", \"f\"]}]}", "node 'z': Fill: dims must "
                 "be an int32/int64 vector");
    /* inference runs after loading: a shape mismatch names the node */
    expect_error("{\"node\": [" FC ", {\"name\": \"m\", \"op\": \"MatMul\", "
                 "\"input\": [\"f\", \"f\"]}]}", "node 'm'");
}

/* Attrs that only hint TF's own kernels or tools load and are ignored;
 * explicit paddings that say something are refused. */
/* issue 21: the gradient blockers and TF-1's random ops load as dgrun
 * ops: a Const shape folds into attr shape, a computed one stays input 0;
 * seed / seed2 / Tout / output_dtype / message are kept. */
#define SHP "{\"name\": \"shp\", \"op\": \"Const\", \"attr\": {\"value\": " \
            "{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": " \
            "{\"dim\": [{\"size\": \"2\"}]}, \"intVal\": [2, 3]}}}}"
static void test_issue21_ops(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load_text(
        "{\"node\": [" FC ", " IC ", " SHP ", "
        "{\"name\": \"id\", \"op\": \"Identity\", \"input\": [\"shp\"]}, "
        "{\"name\": \"s\", \"op\": \"StopGradient\", \"input\": [\"f\"]}, "
        "{\"name\": \"p\", \"op\": \"PreventGradient\", \"input\": [\"f\"], "
        "\"attr\": {\"message\": {\"s\": \"bm8=\"}}}, "
        "{\"name\": \"t\", \"op\": \"TruncatedNormal\", \"input\": [\"shp\"], "
        "\"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}, \"seed\": {\"i\": \"7\"}, "
        "\"seed2\": {\"i\": \"9\"}, \"T\": {\"type\": \"DT_INT32\"}}}, "
        "{\"name\": \"t2\", \"op\": \"TruncatedNormal\", \"input\": [\"id\"], "
        "\"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}}}, "
        "{\"name\": \"u\", \"op\": \"RandomUniformInt\", "
        "\"input\": [\"shp\", \"i\", \"i\"], \"attr\": {\"Tout\": {\"type\": "
        "\"DT_INT32\"}}}, "
        "{\"name\": \"lg\", \"op\": \"Const\", \"attr\": {\"value\": "
        "{\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": "
        "[{\"size\": \"1\"}, {\"size\": \"2\"}]}, \"floatVal\": [1.0]}}}}, "
        "{\"name\": \"m\", \"op\": \"Multinomial\", \"input\": [\"lg\", \"i\"], "
        "\"attr\": {\"output_dtype\": {\"type\": \"DT_INT32\"}}}]}", &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_string_equal(dgc_op_name(node(g, "s")->op), "StopGradient");
    assert_string_equal(dgc_node_attr(node(g, "p"), "message")->s, "no");
    const dgc_node *t = node(g, "t");
    assert_string_equal(dgc_op_name(t->op), "TruncatedNormal");
    assert_int_equal(t->n_inputs, 0); /* the Const shape folded */
    assert_int_equal(dgc_node_attr(t, "shape")->n, 2);
    assert_int_equal(dgc_attr_int(t, "seed", 0), 7);
    assert_int_equal(dgc_attr_int(t, "seed2", 0), 9);
    assert_int_equal(node(g, "t2")->n_inputs, 1); /* a run-time shape */
    assert_int_equal(dgc_node_attr(node(g, "u"), "dtype")->i, DG_I32);
    assert_int_equal(dgc_node_attr(node(g, "m"), "output_dtype")->i, DG_I32);
    dgc_graph_free(g);
}

static void test_hint_attrs(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load_text(
        "{\"node\": [" FC ", {\"name\": \"m\", \"op\": \"MatMul\", "
        "\"input\": [\"r\", \"r\"], \"attr\": {\"T\": {\"type\": "
        "\"DT_FLOAT\"}, \"grad_a\": {\"b\": true}, \"grad_b\": {}, "
        "\"_output_shapes\": {\"list\": {\"shape\": [{}]}}, "
        "\"_user_specified_name\": {\"s\": \"eA==\"}}}, "
        "{\"name\": \"r\", \"op\": \"Reshape\", \"input\": [\"f\", \"s\"]}, "
        "{\"name\": \"s\", \"op\": \"Const\", \"attr\": {\"value\": "
        "{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\": "
        "[{\"size\": \"2\"}]}, \"intVal\": [1]}}}}]}", &err);
    if (!g)
        fail_msg("%s", err.msg);
    const dgc_node *m = node(g, "m");
    assert_null(dgc_node_attr(m, "grad_a"));
    assert_null(dgc_node_attr(m, "Tparams"));
    assert_int_equal(m->outputs[0].shape.rank, 2);
    dg_graph_free(g);
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"], \"attr\": {\"explicit_paddings\": "
                 "{\"list\": {\"i\": [\"1\"]}}}}]}",
                 "node 'n': attr 'explicit_paddings' of op Neg is not "
                 "supported");
    /* a name that is not a type parameter is still checked */
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"], \"attr\": {\"Tx\": {\"i\": \"1\"}}}]}",
                 "node 'n': attr 'Tx' of op Neg is not supported");
    /* issue 21: an attr TF's OpDef of the op lacks is TF's error too, even
     * one that dgrun ignores on other ops (Conv2D's use_cudnn_on_gpu) */
    expect_error("{\"node\": [" FC ", {\"name\": \"m\", \"op\": \"MatMul\", "
                 "\"input\": [\"f\", \"f\"], \"attr\": {\"use_cudnn_on_gpu\": "
                 "{\"b\": true}}}]}",
                 "node 'm': attr 'use_cudnn_on_gpu' of op MatMul is not "
                 "supported by dgrun: TensorFlow's MatMul has no attr "
                 "'use_cudnn_on_gpu'");
    expect_error("{\"node\": [" FC ", {\"name\": \"n\", \"op\": \"Neg\", "
                 "\"input\": [\"f\"], \"attr\": {\"seed\": {\"i\": \"1\"}}}]}",
                 "TensorFlow's Neg has no attr 'seed'");
    /* and one of the wrong kind is TF's error */
    expect_error("{\"node\": [" FC ", {\"name\": \"m\", \"op\": \"MatMul\", "
                 "\"input\": [\"f\", \"f\"], \"attr\": {\"grad_a\": "
                 "{\"i\": \"1\"}}}]}",
                 "node 'm': attr 'grad_a' must be a bool ({\"b\": true|false}), "
                 "got an int");
}

/* issue 21: every attr of TF's OpDef is accepted (tf_attrs.def), those
 * dgrun has no use for ignored: ConcatOffset's shape_type (TF 2.x) */
static void test_tf_opdef_attrs(void **state)
{
    (void)state;
    const char *kind = NULL;
    assert_int_equal(dgc_tf_attr_kind("ConcatOffset", "shape_type", &kind), 1);
    assert_string_equal(kind, "type");
    assert_int_equal(dgc_tf_attr_kind("MatMul", "grad_b", &kind), 1);
    assert_string_equal(kind, "b");
    assert_int_equal(dgc_tf_attr_kind("MatMul", "use_cudnn_on_gpu", &kind), 0);
    assert_int_equal(dgc_tf_attr_kind("SumTo", "T", &kind), -1);
    assert_int_equal(dgc_tf_attr_kind("Conv2D", "use_cudnn_on_gpu", &kind), 1);
    dg_error err;
    dgc_graph *g = load_text(
        "{\"node\": [" IC ", {\"name\": \"sh\", \"op\": \"Const\", "
        "\"attr\": {\"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", "
        "\"tensorShape\": {\"dim\": [{\"size\": \"2\"}]}, "
        "\"intVal\": [2, 3]}}}}, "
        "{\"name\": \"co\", \"op\": \"ConcatOffset\", \"input\": "
        "[\"i\", \"sh\", \"sh\"], \"attr\": {\"N\": {\"i\": \"2\"}, "
        "\"shape_type\": {\"type\": \"DT_INT32\"}}}]}", &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_null(dgc_node_attr(node(g, "co"), "shape_type"));
    dgc_graph_free(g);
}

/* TF's CNN attrs: strides / dilations / ksize / explicit_paddings lists,
 * padding and data_format strings (NCHW accepted on these ops only),
 * epsilon, exponential_avg_factor and is_training. */
#define SHAPE4(a, b, c, d) "{\"shape\": {\"dim\": [{\"size\": \"" #a "\"}, " \
    "{\"size\": \"" #b "\"}, {\"size\": \"" #c "\"}, {\"size\": \"" #d "\"}]}}"
#define CT(name, sh) "{\"name\": \"" name "\", \"op\": \"Const\", \"attr\": " \
    "{\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": " \
    sh ", \"floatVal\": [0.5]}}}}"
#define VEC4 "{\"dim\": [{\"size\": \"4\"}]}"
#define LIST(...) "{\"list\": {\"i\": [" __VA_ARGS__ "]}}"
static void test_cnn_attrs(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load_text(
        "{\"node\": [{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": "
        "{\"dtype\": {\"type\": \"DT_FLOAT\"}, \"shape\": "
        SHAPE4(-1, 3, 8, 9) "}}, "
        CT("w", "{\"dim\": [{\"size\": \"3\"}, {\"size\": \"3\"}, "
                "{\"size\": \"3\"}, {\"size\": \"4\"}]}") ", "
        "{\"name\": \"c\", \"op\": \"Conv2D\", \"input\": [\"x\", \"w\"], "
        "\"attr\": {\"T\": {\"type\": \"DT_FLOAT\"}, \"data_format\": {\"s\": "
        "\"TkNIVw==\"}, \"strides\": " LIST("\"1\", \"1\", \"2\", \"2\"") ", "
        "\"dilations\": " LIST("\"1\", \"1\", \"1\", \"1\"") ", \"padding\": "
        "{\"s\": \"RVhQTElDSVQ=\"}, \"explicit_paddings\": "
        LIST("\"0\", \"0\", \"0\", \"0\", \"1\", \"1\", \"2\", \"0\"") ", "
        "\"use_cudnn_on_gpu\": {\"b\": true}}}, "
        CT("s", VEC4) ", " "{\"name\": \"e\", \"op\": \"Const\", \"attr\": "
        "{\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", "
        "\"tensorShape\": {\"dim\": [{\"size\": \"0\"}]}}}}}, "
        "{\"name\": \"bn\", \"op\": \"FusedBatchNormV3\", \"input\": [\"c\", "
        "\"s\", \"s\", \"e\", \"e\"], \"attr\": {\"U\": {\"type\": "
        "\"DT_FLOAT\"}, \"data_format\": {\"s\": \"TkNIVw==\"}, \"epsilon\": "
        "{\"f\": 0.001}, \"exponential_avg_factor\": {\"f\": 1.0}, "
        "\"is_training\": {\"b\": true}}}, "
        "{\"name\": \"p\", \"op\": \"MaxPool\", \"input\": [\"bn\"], \"attr\": "
        "{\"data_format\": {\"s\": \"TkNIVw==\"}, \"ksize\": "
        LIST("\"1\", \"1\", \"2\", \"2\"") ", \"strides\": "
        LIST("\"1\", \"1\", \"2\", \"2\"") ", \"padding\": {\"s\": "
        "\"U0FNRQ==\"}, \"explicit_paddings\": {\"list\": {}}}}]}", &err);
    if (!g)
        fail_msg("%s", err.msg);
    const dgc_node *c = node(g, "c");
    /* H: (8 + 1 + 1 - 3) / 2 + 1 = 4; W: (9 + 2 - 3) / 2 + 1 = 5 */
    int64_t want[4] = {-1, 4, 4, 5};
    for (int i = 0; i < 4; i++)
        assert_int_equal(c->outputs[0].shape.dims[i], want[i]);
    const dgc_node *bn = node(g, "bn");
    assert_true(dgc_attr_bool(bn, "is_training", 0));
    assert_true(fabs(dgc_attr_float(bn, "epsilon", 0) - 0.001) < 1e-9);
    assert_int_equal(bn->n_outputs, 6);
    assert_int_equal(bn->outputs[1].shape.dims[0], 4);
    const dgc_node *p = node(g, "p");
    int64_t pw[4] = {-1, 4, 2, 3};
    for (int i = 0; i < 4; i++)
        assert_int_equal(p->outputs[0].shape.dims[i], pw[i]);
    dg_graph_free(g);
    /* NCHW stays an error where dgrun has no layout for it (BiasAdd) */
    expect_error("{\"node\": [" FC ", {\"name\": \"b\", \"op\": \"BiasAdd\", "
                 "\"input\": [\"f\", \"f\"], \"attr\": {\"data_format\": "
                 "{\"s\": \"TkNIVw==\"}}}]}", "only NHWC");
    /* a Conv2D without padding: TF requires it */
    expect_error("{\"node\": [" FC ", {\"name\": \"c\", \"op\": \"Conv2D\", "
                 "\"input\": [\"f\", \"f\"]}]}", "node 'c'");
}

/* A Variable without a shape attr takes its initial value's shape. */
static void test_variable_shape_from_init(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load_text(
        "{\"node\": [{\"name\": \"v\", \"op\": \"VariableV2\", \"attr\": "
        "{\"dtype\": {\"type\": \"DT_FLOAT\"}, \"shape\": {\"shape\": "
        "{\"unknownRank\": true}}}}, {\"name\": \"v/Assign\", \"op\": "
        "\"Assign\", \"input\": [\"v\", \"v/initial_value\"], \"attr\": "
        "{\"validate_shape\": {\"b\": false}}}, {\"name\": "
        "\"v/initial_value\", \"op\": \"Const\", \"attr\": {\"value\": "
        "{\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": {\"dim\": "
        "[{\"size\": \"3\"}]}, \"floatVal\": [2]}}}}], \"versions\": "
        "{\"producer\": 27}}", &err);
    if (!g)
        fail_msg("%s", err.msg);
    const dgc_node *v = node(g, "v");
    assert_int_equal(v->outputs[0].shape.rank, 1);
    assert_int_equal(v->outputs[0].shape.dims[0], 3);
    assert_int_equal(dgc_attr_bool(node(g, "v/Assign"), "validate_shape", 1), 0);
    dg_graph_free(g);
}

/* issue 22: tf.compat.v1.train.FtrlOptimizer's accumulator starts at
 * ones * initial_accumulator_value (a Mul, either order); a product of two
 * tensors is no such initializer (zeros, as any other). */
#define VAR23(n) "{\"name\": \"" n "\", \"op\": \"VariableV2\", \"attr\": " \
    "{\"dtype\": {\"type\": \"DT_FLOAT\"}, \"shape\": {\"shape\": {\"dim\": " \
    "[{\"size\": \"2\"}, {\"size\": \"3\"}]}}}}"
#define ONES23(n) "{\"name\": \"" n "\", \"op\": \"Const\", \"attr\": " \
    "{\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"tensorShape\": " \
    "{\"dim\": [{\"size\": \"2\"}, {\"size\": \"3\"}]}, \"floatVal\": [1]}}}}"
#define MUL_ASSIGN(v, x, y) "{\"name\": \"" v "/mul\", \"op\": \"Mul\", " \
    "\"input\": [\"" x "\", \"" y "\"]}, {\"name\": \"" v "/Assign\", " \
    "\"op\": \"Assign\", \"input\": [\"" v "\", \"" v "/mul\"]}"
static void test_scaled_const_init(void **state)
{
    (void)state;
    dg_error err;
    dgc_graph *g = load_text(
        "{\"node\": [" VAR23("a") ", " VAR23("b") ", " VAR23("c") ", "
        ONES23("ones") ", {\"name\": \"s\", \"op\": \"Const\", \"attr\": "
        "{\"value\": {\"tensor\": {\"dtype\": \"DT_FLOAT\", \"floatVal\": "
        "[0.1]}}}}, " MUL_ASSIGN("a", "ones", "s") ", "
        MUL_ASSIGN("b", "s", "ones") ", " MUL_ASSIGN("c", "ones", "ones")
        "]}", &err);
    if (!g)
        fail_msg("%s", err.msg);
    const char *scaled[] = {"a", "b"};
    for (int k = 0; k < 2; k++) {
        const dgc_attr *i = dgc_node_attr(node(g, scaled[k]), "init");
        assert_int_equal(i->init.kind, DGC_INIT_VALUE);
        assert_int_equal(i->init.value->dtype, DG_F32);
        for (int e = 0; e < 6; e++)
            assert_true(((float *)i->init.value->data)[e] == 0.1f);
    }
    assert_int_equal(dgc_node_attr(node(g, "c"), "init")->init.kind,
                     DGC_INIT_ZEROS);
    dg_graph_free(g);
}

/* Allocation-failure sweep over loading every test GraphDef: each failing
 * allocation is DG_E_NOMEM, never another error or a crash (leaks: run
 * under valgrind / ASan). */
static void test_oom(void **state)
{
    (void)state;
    const char *files[] = {"sincos.json", "mlp.json", "variables.json",
                           "initializers.json"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        for (int once = 0; once < 2; once++) {
            for (long k = 0;; k++) {
                if (once)
                    dg_alloc_fail_once(k);
                else
                    dg_alloc_fail_after(k);
                dg_error err;
                memset(&err, 0, sizeof err);
                dgc_graph *g = dg_graph_load(data_path(files[f]), NULL, 0,
                                             &err);
                dg_alloc_fail_after(-1);
                if (g) {
                    dg_graph_free(g);
                    break;
                }
                if (err.code != DG_E_NOMEM)
                    fail_msg("%s, allocation %ld failing%s: %d %s", files[f],
                             k, once ? " once" : "", err.code, err.msg);
                assert_true(k < 100000);
            }
        }
    }
}

/* A Fill of Const dims folds into a Const only up to 10 MiB (fuzz_graphdef
 * found a 9 KB file whose Fill made the loader allocate 4.3 GB): a bigger
 * one stays a Fill op, filled at run time. */
static void test_big_fill_not_folded(void **s)
{
    (void)s;
    static const char *fmt =
        "{\"node\": [{\"name\": \"d\", \"op\": \"Const\", \"attr\": "
        "{\"dtype\": {\"type\": \"DT_INT32\"}, \"value\": {\"tensor\": "
        "{\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\": [{\"size\": "
        "\"2\"}]}, \"intVal\": [%d, 1024]}}}}, "
        "{\"name\": \"v\", \"op\": \"Const\", \"attr\": {\"dtype\": "
        "{\"type\": \"DT_FLOAT\"}, \"value\": {\"tensor\": {\"dtype\": "
        "\"DT_FLOAT\", \"tensorShape\": {}, \"floatVal\": [1.5]}}}}, "
        "{\"name\": \"z\", \"op\": \"Fill\", \"input\": [\"d\", \"v\"]}]}";
    char text[1024];
    dg_error err;
    /* 4 x 1024 floats: folded */
    snprintf(text, sizeof text, fmt, 4);
    dgc_graph *g = load_text(text, &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    assert_int_equal(node(g, "z")->op, DGC_OPID_Const);
    dg_graph_free(g);
    /* 1M x 1024 floats (4 GiB): a Fill op, nothing allocated */
    snprintf(text, sizeof text, fmt, 1 << 20);
    g = load_text(text, &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    const dgc_node *z = node(g, "z");
    assert_int_equal(z->op, DGC_OPID_Fill);
    assert_int_equal(z->outputs[0].shape.dims[0], 1 << 20);
    dg_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sincos_ir),
        cmocka_unit_test(test_sincos_place),
        cmocka_unit_test(test_sincos_run),
        cmocka_unit_test(test_mlp_ir),
        cmocka_unit_test(test_mlp_run),
        cmocka_unit_test(test_variables),
        cmocka_unit_test(test_initializers),
        cmocka_unit_test(test_tensor_proto),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_issue21_ops),
        cmocka_unit_test(test_attr_types),
        cmocka_unit_test(test_variable_shape_from_init),
        cmocka_unit_test(test_hint_attrs),
        cmocka_unit_test(test_tf_opdef_attrs),
        cmocka_unit_test(test_cnn_attrs),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_big_fill_not_folded),
        cmocka_unit_test(test_scaled_const_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
