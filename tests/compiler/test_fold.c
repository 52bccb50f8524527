/*
 * test_fold.c -- the constant-folding pass (compiler/fold.c) and the shape
 * inference of tensor parameters (dgc_ttype.value): TF-built shape
 * arithmetic over a static shape becomes Consts that keep their device
 * and _class; over a -1 batch it stays and inference leaves -1 dims.
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

/* x [B, 2, 3] -> Shape -> StridedSlice [0] (shrink) -> Pack(b, -1) ->
 * Reshape; Size(x) + 1 under /device:GPU:0 colocated with x. */
static const char *graph_text(const char *batch)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
        "{\"node\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": "
        "{\"type\": \"DT_FLOAT\"}, \"shape\": {\"shape\": {\"dim\": "
        "[{\"size\": \"%s\"}, {\"size\": \"2\"}, {\"size\": \"3\"}]}}}},"
        "{\"name\": \"shape\", \"op\": \"Shape\", \"input\": [\"x\"]},"
        "{\"name\": \"b0\", \"op\": \"Const\", \"attr\": {\"value\": "
        "{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\": "
        "[{\"size\": \"1\"}]}, \"intVal\": [0]}}}},"
        "{\"name\": \"b1\", \"op\": \"Const\", \"attr\": {\"value\": "
        "{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {\"dim\": "
        "[{\"size\": \"1\"}]}, \"intVal\": [1]}}}},"
        "{\"name\": \"m1\", \"op\": \"Const\", \"attr\": {\"value\": "
        "{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {}, "
        "\"intVal\": [-1]}}}},"
        "{\"name\": \"one\", \"op\": \"Const\", \"attr\": {\"value\": "
        "{\"tensor\": {\"dtype\": \"DT_INT32\", \"tensorShape\": {}, "
        "\"intVal\": [1]}}}},"
        "{\"name\": \"batch\", \"op\": \"StridedSlice\", \"input\": "
        "[\"shape\", \"b0\", \"b1\", \"b1\"], \"attr\": "
        "{\"shrink_axis_mask\": {\"i\": \"1\"}}},"
        "{\"name\": \"newshape\", \"op\": \"Pack\", \"input\": [\"batch\", "
        "\"m1\"]},"
        "{\"name\": \"flat\", \"op\": \"Reshape\", \"input\": [\"x\", "
        "\"newshape\"]},"
        "{\"name\": \"size\", \"op\": \"Size\", \"input\": [\"x\"], "
        "\"device\": \"/device:GPU:0\"},"
        "{\"name\": \"size1\", \"op\": \"AddV2\", \"input\": [\"size\", "
        "\"one\"], \"device\": \"/device:GPU:0\", \"attr\": {\"_class\": "
        "{\"list\": {\"s\": [\"bG9jOkB4\"]}}}}"
        "]}", batch);
    return buf;
}

/* Compile g for CPU:0 and `gpus` assumed GPUs. */
static dg_program *compile_graph(dg_graph *g, int gpus)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_device_list *l;
    assert_int_equal(dg_devices_assume(gpus, &l, &err), DG_OK);
    dg_options o;
    dg_options_init(&o);
    dg_program *p = dg_compile(g, &o, l, &err);
    if (!p)
        fail_msg("compile: %s", err.msg);
    dg_devices_free(l);
    return p;
}

static dg_program *compile(const char *batch, dg_graph **gp)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    const char *t = graph_text(batch);
    dg_graph *g = dg_graph_load("t.json", t, strlen(t), &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    *gp = g;
    return compile_graph(g, 1);
}

static const dgc_node *node(const dgc_graph *g, const char *name)
{
    int32_t id = dgc_graph_find(g, name);
    assert_true(id >= 0);
    return &g->nodes[id];
}

static int64_t ival(const dgc_node *n, int64_t i)
{
    const dgc_attr *a = dgc_node_attr(n, "value");
    assert_non_null(a);
    return a->tensor->dtype == DG_I32 ? ((int32_t *)a->tensor->data)[i]
                                      : ((int64_t *)a->tensor->data)[i];
}

static void test_static_shape_folds(void **s)
{
    (void)s;
    dg_graph *g;
    dg_program *p = compile("4", &g);
    const dgc_graph *cg = g;
    const char *folded[] = {"shape", "batch", "newshape", "size", "size1"};
    for (size_t i = 0; i < sizeof folded / sizeof *folded; i++)
        assert_int_equal(node(cg, folded[i])->op, DGC_OPID_Const);
    assert_int_equal(ival(node(cg, "shape"), 0), 4);
    assert_int_equal(ival(node(cg, "shape"), 2), 3);
    assert_int_equal(ival(node(cg, "batch"), 0), 4);
    assert_int_equal(ival(node(cg, "newshape"), 1), -1);
    assert_int_equal(ival(node(cg, "size1"), 0), 25);
    /* the folded node keeps its device request and _class */
    const dgc_node *s1 = node(cg, "size1");
    assert_string_equal(s1->device, "/device:GPU:0");
    assert_int_equal(s1->n_coloc, 1);
    /* Reshape sees the folded value: fully static */
    const dgc_node *f = node(cg, "flat");
    assert_int_equal(f->outputs[0].shape.rank, 2);
    assert_int_equal(f->outputs[0].shape.dims[0], 4);
    assert_int_equal(f->outputs[0].shape.dims[1], 6);
    /* the folded int32 value is placed and shown where TF's placer puts
     * its op (an AddV2 on GPU:0: TF has the kernel, in host memory) and
     * runs in host memory (CPU:0, device 0) */
    dg_node_info ni;
    dg_program_node(p, dgc_graph_find(cg, "size1"), &ni);
    assert_non_null(strstr(ni.device, "GPU:0"));
    assert_string_equal(ni.op, "AddV2");
    assert_int_equal(s1->device_id, 0);
    dg_program_free(p);
}

static void test_dynamic_batch_stays(void **s)
{
    (void)s;
    dg_graph *g;
    dg_program *p = compile("-1", &g);
    const dgc_graph *cg = g;
    assert_int_equal(node(cg, "shape")->op, DGC_OPID_Shape);
    assert_int_equal(node(cg, "batch")->op, DGC_OPID_StridedSlice);
    assert_int_equal(node(cg, "newshape")->op, DGC_OPID_Pack);
    /* the batch is unknown; the rank and the trailing -1's meaning not */
    const dgc_node *f = node(cg, "flat");
    assert_int_equal(f->outputs[0].shape.rank, 2);
    assert_int_equal(f->outputs[0].shape.dims[0], -1);
    assert_int_equal(node(cg, "batch")->outputs[0].shape.rank, 0);
    assert_int_equal(node(cg, "newshape")->outputs[0].shape.dims[0], 2);
    dg_program_free(p);
}

/* Float arithmetic on Consts folds where the kernels' result is exact to
 * the bit (issue 16): a chain of float32 Adds/Muls on Consts becomes one
 * Const holding the float32 result; a Div, or an Add reading a
 * Placeholder, stays. */
static void test_float_chain_folds(void **s)
{
    (void)s;
    const char *t =
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"v0\", \"op\": \"Const\", \"attrs\": {\"value\": 0.1, "
        "\"dtype\": \"float32\"}},"
        "{\"name\": \"c\", \"op\": \"Const\", \"attrs\": {\"value\": 0.7, "
        "\"dtype\": \"float32\"}},"
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": "
        "\"float32\", \"shape\": []}},"
        "{\"name\": \"v1\", \"op\": \"Add\", \"inputs\": [\"v0\", \"c\"]},"
        "{\"name\": \"v2\", \"op\": \"Mul\", \"inputs\": [\"v1\", \"c\"]},"
        "{\"name\": \"v3\", \"op\": \"Sub\", \"inputs\": [\"v2\", \"v0\"]},"
        "{\"name\": \"d\", \"op\": \"Div\", \"inputs\": [\"v3\", \"c\"]},"
        "{\"name\": \"y\", \"op\": \"Add\", \"inputs\": [\"v3\", \"x\"]}],"
        "\"fetch\": [\"d\", \"y\"]}";
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_graph *g = dg_graph_load("t.json", t, strlen(t), &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    dg_device_list *l;
    assert_int_equal(dg_devices_assume(0, &l, &err), DG_OK);
    dg_program *p = dg_compile(g, NULL, l, &err);
    if (!p)
        fail_msg("compile: %s", err.msg);
    dg_devices_free(l);
    const dgc_graph *cg = p->g;
    const dgc_node *v3 = node(cg, "v3");
    assert_int_equal(v3->op, DGC_OPID_Const);
    const dg_tensor *val = dgc_node_attr(v3, "value")->tensor;
    assert_int_equal(val->dtype, DG_F32);
    float a = 0.1f, c = 0.7f;
    float want = (a + c) * c - a; /* three float32 operations */
    assert_memory_equal(val->data, &want, sizeof want);
    assert_int_equal(node(cg, "d")->op, DGC_OPID_Div);
    assert_int_equal(node(cg, "y")->op, DGC_OPID_Add);
    dg_program_free(p);
}

/* TF's gradient of Mean(x, [1, 2]) over x [B, 2, 3]: the reshape target
 * is a DynamicStitch of Range / FloorMod of Consts (indices) and Shape(x)
 * / Fill (data), so its length is known only by evaluating the indices. */
static const char *ci(const char *name, const char *shape, const char *vals)
{
    static char b[4][400];
    static int k;
    char *o = b[k++ % 4];
    snprintf(o, 400, "{\"name\": \"%s\", \"op\": \"Const\", \"attr\": "
             "{\"value\": {\"tensor\": {\"dtype\": \"DT_INT32\", "
             "\"tensorShape\": {%s}, \"intVal\": [%s]}}}},", name, shape,
             vals);
    return o;
}

static dg_graph *stitch_graph(const char *batch, dg_error *err)
{
    static char buf[4096];
    const char *vec2 = "\"dim\": [{\"size\": \"2\"}]";
    int n = snprintf(buf, sizeof buf,
        "{\"node\": ["
        "{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": {\"dtype\": "
        "{\"type\": \"DT_FLOAT\"}, \"shape\": {\"shape\": {\"dim\": "
        "[{\"size\": \"%s\"}, {\"size\": \"2\"}, {\"size\": \"3\"}]}}}},"
        "%s%s", batch, ci("ri", vec2, "1, 2"), ci("size", "", "3"));
    n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s",
                  ci("zero", "", "0"), ci("one", "", "1"));
    snprintf(buf + n, sizeof buf - (size_t)n,
        "%s"
        "{\"name\": \"m\", \"op\": \"Mean\", \"input\": [\"x\", \"ri\"]},"
        "{\"name\": \"add\", \"op\": \"AddV2\", \"input\": [\"ri\", \"size\"]},"
        "{\"name\": \"mod\", \"op\": \"FloorMod\", \"input\": [\"add\", "
        "\"size\"]},"
        "{\"name\": \"range\", \"op\": \"Range\", \"input\": [\"zero\", "
        "\"size\", \"one\"]},"
        "{\"name\": \"ones\", \"op\": \"Fill\", \"input\": [\"two\", \"one\"]},"
        "{\"name\": \"shp\", \"op\": \"Shape\", \"input\": [\"x\"]},"
        "{\"name\": \"ds\", \"op\": \"DynamicStitch\", \"input\": [\"range\", "
        "\"mod\", \"shp\", \"ones\"]},"
        "{\"name\": \"r\", \"op\": \"Reshape\", \"input\": [\"m\", \"ds\"]}"
        "]}", ci("two", "\"dim\": [{\"size\": \"1\"}]", "2"));
    return dg_graph_load("t.json", buf, strlen(buf), err);
}

static void test_stitch_length_known(void **s)
{
    (void)s;
    dg_error err;
    memset(&err, 0, sizeof err);
    /* -1 batch: ds has 3 elements (indices evaluated), values at run time */
    dg_graph *g = stitch_graph("-1", &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    const dgc_graph *cg = g;
    assert_int_equal(node(cg, "ds")->outputs[0].shape.rank, 1);
    assert_int_equal(node(cg, "ds")->outputs[0].shape.dims[0], 3);
    const dgc_node *r = node(cg, "r");
    assert_int_equal(r->outputs[0].shape.rank, 3);
    assert_int_equal(r->outputs[0].shape.dims[0], -1);
    dg_graph_free(g);
    /* static batch: the stitch is evaluated, Reshape fully known, and the
     * folding pass turns it into a Const [4, 1, 1] */
    g = stitch_graph("4", &err);
    if (!g)
        fail_msg("load: %s", err.msg);
    cg = g;
    r = node(cg, "r");
    assert_int_equal(r->outputs[0].shape.rank, 3);
    assert_int_equal(r->outputs[0].shape.dims[0], 4);
    assert_int_equal(r->outputs[0].shape.dims[2], 1);
    dg_program *p = compile_graph(g, 0);
    const dgc_node *ds = node(cg, "ds");
    assert_int_equal(ds->op, DGC_OPID_Const);
    assert_int_equal(ival(ds, 0), 4);
    assert_int_equal(ival(ds, 1), 1);
    assert_int_equal(ival(ds, 2), 1);
    dg_program_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_shape_folds),
        cmocka_unit_test(test_dynamic_batch_stays),
        cmocka_unit_test(test_float_chain_folds),
        cmocka_unit_test(test_stitch_length_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
