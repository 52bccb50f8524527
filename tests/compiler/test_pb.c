/*
 * test_pb.c -- unit tests of the binary GraphDef (.pb) reader: small
 * GraphDefs built with the protobuf-c API generated from tf_graph.proto,
 * packed and loaded through dg_graph_load, give the IR their proto3 JSON
 * twins give (nodes, inputs, devices, `_class`, Const tensors from
 * tensor_content and from each typed repeated field, shapes, hint attrs);
 * truncated, corrupted and garbage bytes are one-line DG_E_GRAPH errors,
 * never crashes; failing allocations are DG_E_NOMEM.
 */
#include <math.h>
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
#include "tf_graph.pb-c.h"

/* ---- building GraphDefs ---------------------------------------------------- */

#define MAXN 16
#define MAXA 8

typedef struct gbuild {
    Dgtf__GraphDef gd;
    Dgtf__NodeDef nodes[MAXN], *np[MAXN];
    Dgtf__NodeDef__AttrEntry ent[MAXN][MAXA], *ep[MAXN][MAXA];
    Dgtf__AttrValue val[MAXN][MAXA];
} gbuild;

static void gb_init(gbuild *b)
{
    memset(b, 0, sizeof *b);
    dgtf__graph_def__init(&b->gd);
    b->gd.node = b->np;
}

static Dgtf__NodeDef *gb_node(gbuild *b, const char *name, const char *op,
                              char **inputs, size_t n_inputs)
{
    size_t i = b->gd.n_node++;
    Dgtf__NodeDef *n = &b->nodes[i];
    dgtf__node_def__init(n);
    n->name = (char *)name;
    n->op = (char *)op;
    n->input = inputs;
    n->n_input = n_inputs;
    n->attr = b->ep[i];
    b->np[i] = n;
    return n;
}

/* A new attr `key` of the last node; the caller fills the AttrValue. */
static Dgtf__AttrValue *gb_attr(gbuild *b, const char *key)
{
    size_t i = b->gd.n_node - 1;
    Dgtf__NodeDef *n = &b->nodes[i];
    size_t k = n->n_attr++;
    Dgtf__NodeDef__AttrEntry *e = &b->ent[i][k];
    dgtf__node_def__attr_entry__init(e);
    Dgtf__AttrValue *v = &b->val[i][k];
    dgtf__attr_value__init(v);
    e->key = (char *)key;
    e->value = v;
    b->ep[i][k] = e;
    return v;
}

static void gb_type(gbuild *b, const char *key, Dgtf__DataType t)
{
    Dgtf__AttrValue *v = gb_attr(b, key);
    v->value_case = DGTF__ATTR_VALUE__VALUE_TYPE;
    v->type = t;
}

/* The shape [n]. */
typedef struct vec_shape {
    Dgtf__TensorShapeProto__Dim d, *dp;
    Dgtf__TensorShapeProto s;
} vec_shape;

static void vec_shape_init(vec_shape *v, int64_t n)
{
    dgtf__tensor_shape_proto__dim__init(&v->d);
    v->d.size = n;
    v->dp = &v->d;
    dgtf__tensor_shape_proto__init(&v->s);
    v->s.dim = &v->dp;
    v->s.n_dim = 1;
}

static uint8_t *gb_pack(gbuild *b, size_t *len)
{
    *len = dgtf__graph_def__get_packed_size(&b->gd);
    uint8_t *buf = malloc(*len + 1);
    assert_non_null(buf);
    assert_int_equal(dgtf__graph_def__pack(&b->gd, buf), *len);
    return buf;
}

static dgc_graph *load_bytes(const uint8_t *buf, size_t len, dg_error *err)
{
    memset(err, 0, sizeof *err);
    return dg_graph_load("t.pb", (const char *)buf, len, err);
}

static const dgc_node *node(const dgc_graph *g, const char *name)
{
    int32_t id = dgc_graph_find(g, name);
    if (id < 0)
        fail_msg("no node '%s'", name);
    return &g->nodes[id];
}

static const dg_tensor *value(const dgc_graph *g, const char *name)
{
    const dgc_attr *a = dgc_node_attr(node(g, name), "value");
    assert_non_null(a);
    assert_non_null(a->tensor);
    return a->tensor;
}

/* ---- a small graph with the pieces TF writes ------------------------------- */

static float wvals[6] = {1.5f, -2.0f, 0.25f, 4.0f, -0.5f, 3.0f};
static char *in_mm[] = {"x", "w/read"};
static char *in_read[] = {"w"};
static char *in_assign[] = {"w", "w/initial_value"};
static char *in_add[] = {"mm", "b", "^w/Assign"};

/* x: Placeholder [-1, 2]; w/initial_value: Const [2, 3] (tensor_content);
 * w: VariableV2 with w/Assign and w/read (colocated with w through
 * `_class`); b: Const int64-free float from float_val (one value, padded);
 * mm = MatMul(x, w/read) with hint attrs on /device:CPU:0; out =
 * Add(mm, b) with a control input. */
static void small_graph(gbuild *b, Dgtf__TensorProto *t, Dgtf__TensorProto *bt,
                        Dgtf__TensorShapeProto *shapes,
                        Dgtf__TensorShapeProto__Dim *dims, Dgtf__TensorShapeProto__Dim **dp,
                        Dgtf__AttrValue__ListValue *cls, ProtobufCBinaryData *loc)
{
    gb_init(b);
    /* shapes[0] = [-1, 2] (Placeholder), shapes[1] = [2, 3], shapes[2] = [3] */
    int64_t sz[] = {-1, 2, 2, 3, 3};
    for (int i = 0; i < 5; i++) {
        dgtf__tensor_shape_proto__dim__init(&dims[i]);
        dims[i].size = sz[i];
        dp[i] = &dims[i];
    }
    for (int i = 0; i < 3; i++)
        dgtf__tensor_shape_proto__init(&shapes[i]);
    shapes[0].dim = dp, shapes[0].n_dim = 2;
    shapes[1].dim = dp + 2, shapes[1].n_dim = 2;
    shapes[2].dim = dp + 4, shapes[2].n_dim = 1;

    gb_node(b, "x", "Placeholder", NULL, 0);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_FLOAT);
    Dgtf__AttrValue *v = gb_attr(b, "shape");
    v->value_case = DGTF__ATTR_VALUE__VALUE_SHAPE;
    v->shape = &shapes[0];

    gb_node(b, "w/initial_value", "Const", NULL, 0);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_FLOAT);
    dgtf__tensor_proto__init(t);
    t->dtype = DGTF__DATA_TYPE__DT_FLOAT;
    t->tensor_shape = &shapes[1];
    t->tensor_content.data = (uint8_t *)wvals; /* little-endian host */
    t->tensor_content.len = sizeof wvals;
    v = gb_attr(b, "value");
    v->value_case = DGTF__ATTR_VALUE__VALUE_TENSOR;
    v->tensor = t;

    gb_node(b, "w", "VariableV2", NULL, 0);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_FLOAT);
    v = gb_attr(b, "shape");
    v->value_case = DGTF__ATTR_VALUE__VALUE_SHAPE;
    v->shape = &shapes[1];
    v = gb_attr(b, "container");
    v->value_case = DGTF__ATTR_VALUE__VALUE_S;
    b->nodes[2].device = "/device:CPU:0";

    gb_node(b, "w/Assign", "Assign", in_assign, 2);
    gb_type(b, "T", DGTF__DATA_TYPE__DT_FLOAT);

    Dgtf__NodeDef *rd = gb_node(b, "w/read", "Identity", in_read, 1);
    (void)rd;
    gb_type(b, "T", DGTF__DATA_TYPE__DT_FLOAT);
    dgtf__attr_value__list_value__init(cls);
    loc->data = (uint8_t *)"loc:@w";
    loc->len = 6;
    cls->s = loc;
    cls->n_s = 1;
    v = gb_attr(b, "_class");
    v->value_case = DGTF__ATTR_VALUE__VALUE_LIST;
    v->list = cls;

    gb_node(b, "b", "Const", NULL, 0);
    dgtf__tensor_proto__init(bt);
    bt->dtype = DGTF__DATA_TYPE__DT_FLOAT;
    bt->tensor_shape = &shapes[2];
    static float one[] = {0.5f};
    bt->float_val = one;
    bt->n_float_val = 1;
    v = gb_attr(b, "value");
    v->value_case = DGTF__ATTR_VALUE__VALUE_TENSOR;
    v->tensor = bt;

    Dgtf__NodeDef *mm = gb_node(b, "mm", "MatMul", in_mm, 2);
    mm->device = "/device:CPU:0";
    gb_type(b, "T", DGTF__DATA_TYPE__DT_FLOAT);
    v = gb_attr(b, "transpose_a");
    v->value_case = DGTF__ATTR_VALUE__VALUE_B; /* false, but set */
    v = gb_attr(b, "grad_b");
    v->value_case = DGTF__ATTR_VALUE__VALUE_B;
    v->b = 1;

    gb_node(b, "out", "AddV2", in_add, 3);
    gb_type(b, "T", DGTF__DATA_TYPE__DT_FLOAT);
}

static void test_small_graph(void **state)
{
    (void)state;
    gbuild *b = calloc(1, sizeof *b);
    Dgtf__TensorProto t, bt;
    Dgtf__TensorShapeProto shapes[3];
    Dgtf__TensorShapeProto__Dim dims[5], *dp[5];
    Dgtf__AttrValue__ListValue cls;
    ProtobufCBinaryData loc;
    small_graph(b, &t, &bt, shapes, dims, dp, &cls, &loc);
    size_t len;
    uint8_t *buf = gb_pack(b, &len);
    dg_error err;
    dgc_graph *g = load_bytes(buf, len, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(g->n_nodes, 8);
    const dgc_node *x = node(g, "x");
    assert_string_equal(dgc_op_name(x->op), "Placeholder");
    assert_int_equal(x->outputs[0].shape.rank, 2);
    assert_int_equal(x->outputs[0].shape.dims[0], -1);
    const dg_tensor *w = value(g, "w/initial_value");
    assert_int_equal(w->dtype, DG_F32);
    assert_int_equal(w->shape.rank, 2);
    assert_int_equal(w->shape.dims[1], 3);
    assert_memory_equal(w->data, wvals, sizeof wvals);
    const dg_tensor *bv = value(g, "b");
    for (int i = 0; i < 3; i++)
        assert_true(((const float *)bv->data)[i] == 0.5f);
    const dgc_node *rd = node(g, "w/read");
    assert_int_equal(rd->n_coloc, 1);
    assert_int_equal(rd->coloc[0], dgc_graph_find(g, "w"));
    const dgc_node *mm = node(g, "mm");
    assert_string_equal(mm->device, "/device:CPU:0");
    assert_null(dgc_node_attr(mm, "grad_b"));
    assert_int_equal(dgc_attr_bool(mm, "transpose_a", 1), 0);
    assert_int_equal(mm->inputs[1].node, dgc_graph_find(g, "w/read"));
    const dgc_node *out = node(g, "out");
    assert_int_equal(out->n_inputs, 2);
    assert_int_equal(out->n_ctrl, 1);
    assert_int_equal(out->outputs[0].shape.dims[1], 3);
    const dgc_attr *init = dgc_node_attr(node(g, "w"), "init");
    assert_non_null(init);
    assert_int_equal(init->init.kind, DGC_INIT_VALUE);
    dg_graph_free(g);

    /* the same graph at any prefix length and with bytes flipped: an
     * error (or a smaller graph), never a crash; errors are one line */
    for (size_t n = 0; n < len; n++) {
        g = load_bytes(buf, n, &err);
        if (g)
            dg_graph_free(g);
        else
            assert_null(strchr(err.msg, '\n'));
        assert_true(g || err.code == DG_E_GRAPH);
    }
    for (size_t i = 0; i < len; i++) {
        uint8_t *c = malloc(len);
        memcpy(c, buf, len);
        c[i] ^= (uint8_t)(0x41 + i % 7);
        g = load_bytes(c, len, &err);
        if (g)
            dg_graph_free(g);
        assert_true(g || err.code == DG_E_GRAPH);
        free(c);
    }
    /* failing allocations are DG_E_NOMEM */
    for (long k = 0;; k++) {
        dg_alloc_fail_after(k);
        g = load_bytes(buf, len, &err);
        dg_alloc_fail_after(-1);
        if (g) {
            dg_graph_free(g);
            break;
        }
        if (err.code != DG_E_NOMEM)
            fail_msg("allocation %ld failing: %d %s", k, err.code, err.msg);
    }
    free(buf);
    free(b);
}

/* Each typed repeated field of a TensorProto, padding with the last value. */
static void test_typed_values(void **state)
{
    (void)state;
    gbuild *b = calloc(1, sizeof *b);
    gb_init(b);
    vec_shape v3;
    vec_shape_init(&v3, 3);
    Dgtf__TensorProto t[5];
    double dv[] = {1e300, -2.5};
    int32_t iv[] = {-7, 9};
    int64_t lv[] = {INT64_C(1) << 50, -3};
    protobuf_c_boolean bv[] = {1, 0};
    const char *names[] = {"d", "i", "l", "bo", "z"};
    Dgtf__DataType types[] = {DGTF__DATA_TYPE__DT_DOUBLE,
                              DGTF__DATA_TYPE__DT_INT32,
                              DGTF__DATA_TYPE__DT_INT64,
                              DGTF__DATA_TYPE__DT_BOOL,
                              DGTF__DATA_TYPE__DT_INT32};
    for (int k = 0; k < 5; k++) {
        dgtf__tensor_proto__init(&t[k]);
        t[k].dtype = types[k];
        t[k].tensor_shape = &v3.s;
        gb_node(b, names[k], "Const", NULL, 0);
        Dgtf__AttrValue *v = gb_attr(b, "value");
        v->value_case = DGTF__ATTR_VALUE__VALUE_TENSOR;
        v->tensor = &t[k];
    }
    t[0].double_val = dv, t[0].n_double_val = 2;
    t[1].int_val = iv, t[1].n_int_val = 2;
    t[2].int64_val = lv, t[2].n_int64_val = 2;
    t[3].bool_val = bv, t[3].n_bool_val = 2;
    /* z: no values = zeros */
    size_t len;
    uint8_t *buf = gb_pack(b, &len);
    dg_error err;
    dgc_graph *g = load_bytes(buf, len, &err);
    if (!g)
        fail_msg("%s", err.msg);
    const double *D = value(g, "d")->data;
    assert_true(D[0] == 1e300 && D[1] == -2.5 && D[2] == -2.5);
    const int32_t *I = value(g, "i")->data;
    assert_true(I[0] == -7 && I[1] == 9 && I[2] == 9);
    const int64_t *L = value(g, "l")->data;
    assert_true(L[0] == (INT64_C(1) << 50) && L[1] == -3 && L[2] == -3);
    const uint8_t *B = value(g, "bo")->data;
    assert_true(B[0] == 1 && B[1] == 0 && B[2] == 0);
    const int32_t *Z = value(g, "z")->data;
    assert_true(Z[0] == 0 && Z[2] == 0);
    dg_graph_free(g);
    free(buf);
    free(b);
}

static void expect_error(const uint8_t *buf, size_t len, const char *frag)
{
    dg_error err;
    dgc_graph *g = load_bytes(buf, len, &err);
    if (g || err.code != DG_E_GRAPH || !strstr(err.msg, frag))
        print_error("expected '%s', got %d '%s'\n", frag, err.code, err.msg);
    assert_null(g);
    assert_int_equal(err.code, DG_E_GRAPH);
    assert_non_null(strstr(err.msg, frag));
    assert_null(strchr(err.msg, '\n'));
}

static void expect_built(gbuild *b, const char *frag)
{
    size_t len;
    uint8_t *buf = gb_pack(b, &len);
    expect_error(buf, len, frag);
    free(buf);
}

/* Errors of the GraphDef loader read the same for binary input. */
static void test_errors(void **state)
{
    (void)state;
    gbuild *b = calloc(1, sizeof *b);
    gb_init(b);
    gb_node(b, "a", "CropAndResize", NULL, 0);
    gb_node(b, "b", "Dilation2D", NULL, 0);
    gb_node(b, "c", "CropAndResize", NULL, 0);
    expect_built(b, "unsupported ops: CropAndResize (2 nodes), Dilation2D "
                 "(1 node)");

    gb_init(b);
    gb_node(b, "x", "Placeholder", NULL, 0);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_HALF);
    expect_built(b, "node 'x': attr 'dtype': unsupported dtype DT_HALF");

    gb_init(b);
    gb_node(b, "x", "NoOp", NULL, 0);
    Dgtf__FunctionDefLibrary lib;
    dgtf__function_def_library__init(&lib);
    ProtobufCBinaryData fn = {2, (uint8_t *)"\x0a\x00"};
    lib.function = &fn;
    lib.n_function = 1;
    b->gd.library = &lib;
    expect_built(b, "library function 0 has no name"); /* inlined: issue 24 */

    /* a Const whose bytes do not fill its shape */
    gb_init(b);
    gb_node(b, "c", "Const", NULL, 0);
    Dgtf__TensorProto t;
    dgtf__tensor_proto__init(&t);
    t.dtype = DGTF__DATA_TYPE__DT_FLOAT;
    vec_shape v2;
    vec_shape_init(&v2, 2);
    t.tensor_shape = &v2.s;
    t.tensor_content.data = (uint8_t *)"\0\0\0\0";
    t.tensor_content.len = 4;
    Dgtf__AttrValue *v = gb_attr(b, "value");
    v->value_case = DGTF__ATTR_VALUE__VALUE_TENSOR;
    v->tensor = &t;
    expect_built(b, "node 'c': attr 'value': tensorContent has 4 bytes");

    /* bytes that are no GraphDef */
    static const uint8_t junk[] = {0x0a, 0x05, 0x12, 0x01};      /* truncated */
    expect_error(junk, sizeof junk, "neither JSON nor a binary TensorFlow "
                 "GraphDef");
    static const uint8_t unknown[] = {0x78, 0x01, 0x78, 0x02};  /* field 15 */
    expect_error(unknown, sizeof unknown, "neither JSON nor a binary");
    static const uint8_t wrongwire[] = {0x08, 0x01};  /* node as a varint */
    expect_error(wrongwire, sizeof wrongwire, "neither JSON nor a binary");
    free(b);
}

/* The binary GraphDef b and its proto3 JSON twin give the same error,
 * byte for byte (one conversion reads both, gview.h), containing frag. */
static void same_error(gbuild *b, const char *json, const char *frag)
{
    size_t len;
    uint8_t *buf = gb_pack(b, &len);
    dg_error eb, ej;
    dgc_graph *gb = load_bytes(buf, len, &eb);
    dgc_graph *gj = load_bytes((const uint8_t *)json, strlen(json), &ej);
    if (gb || gj || strcmp(eb.msg, ej.msg) != 0 || !strstr(eb.msg, frag))
        print_error("want '%s'\nbinary: '%s'\nJSON:   '%s'\n", frag, eb.msg,
                    ej.msg);
    assert_null(gb);
    assert_null(gj);
    assert_int_equal(eb.code, ej.code);
    assert_string_equal(eb.msg, ej.msg);
    assert_non_null(strstr(eb.msg, frag));
    free(buf);
}

/* A graph of one float Placeholder "x" (gb_x), and its JSON up to the
 * next node (JX). */
static void gb_x(gbuild *b)
{
    gb_init(b);
    gb_node(b, "x", "Placeholder", NULL, 0);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_FLOAT);
}

#define JX "{\"node\": [{\"name\": \"x\", \"op\": \"Placeholder\", \"attr\": " \
           "{\"dtype\": {\"type\": \"DT_FLOAT\"}}}, "

static char *in_x[] = {"x"};
static char *in_xx[] = {"x", "x"};

/* Attribute values of the wrong kind, empty ones, map and list members,
 * repeated int64s and bytes: the binary reader answers as its JSON twin. */
static void test_same_errors(void **state)
{
    (void)state;
    gbuild *b = calloc(1, sizeof *b);
    Dgtf__AttrValue *v;

    /* an int where a bool belongs */
    gb_x(b);
    gb_node(b, "m", "MatMul", in_xx, 2);
    v = gb_attr(b, "transpose_a");
    v->value_case = DGTF__ATTR_VALUE__VALUE_I;
    v->i = 3;
    same_error(b, JX "{\"name\": \"m\", \"op\": \"MatMul\", \"input\": "
               "[\"x\", \"x\"], \"attr\": {\"transpose_a\": {\"i\": \"3\"}}}]}",
               "node 'm': attr 'transpose_a' must be a bool ({\"b\": "
               "true|false}), got an int");

    /* an empty AttrValue where a type belongs */
    gb_init(b);
    gb_node(b, "x", "Placeholder", NULL, 0);
    gb_attr(b, "dtype");
    same_error(b, "{\"node\": [{\"name\": \"x\", \"op\": \"Placeholder\", "
               "\"attr\": {\"dtype\": {}}}]}",
               "got an empty value");

    /* an attr TF's op does not have, after a good one */
    gb_x(b);
    v = gb_attr(b, "frob");
    v->value_case = DGTF__ATTR_VALUE__VALUE_B;
    v->b = 1;
    same_error(b, "{\"node\": [{\"name\": \"x\", \"op\": \"Placeholder\", "
               "\"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}, \"frob\": "
               "{\"b\": true}}}]}",
               "TensorFlow's Placeholder has no attr 'frob'");

    /* `_class` names (bytes in a list), resolved after every node */
    gb_x(b);
    gb_node(b, "r", "Relu", in_x, 1);
    ProtobufCBinaryData loc = {7, (uint8_t *)"loc:@zz"};
    Dgtf__AttrValue__ListValue l;
    dgtf__attr_value__list_value__init(&l);
    l.s = &loc;
    l.n_s = 1;
    v = gb_attr(b, "_class");
    v->value_case = DGTF__ATTR_VALUE__VALUE_LIST;
    v->list = &l;
    same_error(b, JX "{\"name\": "
               "\"r\", \"op\": \"Relu\", \"input\": [\"x\"], \"attr\": "
               "{\"_class\": {\"list\": {\"s\": [\"bG9jOkB6eg==\"]}}}}]}",
               "node 'r': _class colocates with unknown node 'zz'");

    /* a Placeholder of unknown rank */
    gb_x(b);
    Dgtf__TensorShapeProto unk;
    dgtf__tensor_shape_proto__init(&unk);
    unk.unknown_rank = 1;
    v = gb_attr(b, "shape");
    v->value_case = DGTF__ATTR_VALUE__VALUE_SHAPE;
    v->shape = &unk;
    same_error(b, "{\"node\": [{\"name\": \"x\", \"op\": \"Placeholder\", "
               "\"attr\": {\"dtype\": {\"type\": \"DT_FLOAT\"}, \"shape\": "
               "{\"shape\": {\"unknownRank\": true}}}}]}",
               "a Placeholder of unknown rank is not supported");

    /* more int64 values than the shape holds */
    gb_init(b);
    gb_node(b, "c", "Const", NULL, 0);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_INT64);
    Dgtf__TensorProto t;
    dgtf__tensor_proto__init(&t);
    t.dtype = DGTF__DATA_TYPE__DT_INT64;
    vec_shape v2;
    vec_shape_init(&v2, 2);
    t.tensor_shape = &v2.s;
    int64_t i3[] = {7, -8, 9};
    t.int64_val = i3;
    t.n_int64_val = 3;
    v = gb_attr(b, "value");
    v->value_case = DGTF__ATTR_VALUE__VALUE_TENSOR;
    v->tensor = &t;
    same_error(b, "{\"node\": [{\"name\": \"c\", \"op\": \"Const\", \"attr\": "
               "{\"dtype\": {\"type\": \"DT_INT64\"}, \"value\": {\"tensor\": "
               "{\"dtype\": \"DT_INT64\", \"tensorShape\": {\"dim\": "
               "[{\"size\": \"2\"}]}, \"int64Val\": [\"7\", \"-8\", "
               "\"9\"]}}}}]}",
               "int64Val has 3 values but the shape holds 2");

    /* a NaN float where an int belongs (proto3 JSON writes "NaN") */
    gb_x(b);
    gb_node(b, "s", "Sum", in_xx, 2);
    v = gb_attr(b, "keep_dims");
    v->value_case = DGTF__ATTR_VALUE__VALUE_F;
    v->f = NAN;
    same_error(b, JX "{\"name\": "
               "\"s\", \"op\": \"Sum\", \"input\": [\"x\", \"x\"], \"attr\": "
               "{\"keep_dims\": {\"f\": \"NaN\"}}}]}",
               "attr 'keep_dims' must be a bool");

    /* an empty node name */
    gb_init(b);
    gb_node(b, "", "NoOp", NULL, 0);
    same_error(b, "{\"node\": [{\"name\": \"\", \"op\": \"NoOp\"}]}",
               "invalid name ''");
    free(b);
}

/* A repeated attr key in the map: the last value wins, as in protobuf. */
static void test_repeated_attr(void **state)
{
    (void)state;
    gbuild *b = calloc(1, sizeof *b);
    gb_init(b);
    gb_node(b, "x", "Placeholder", NULL, 0);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_INT32);
    gb_type(b, "dtype", DGTF__DATA_TYPE__DT_DOUBLE);
    Dgtf__TensorShapeProto scalar;
    dgtf__tensor_shape_proto__init(&scalar);
    Dgtf__AttrValue *v = gb_attr(b, "shape");
    v->value_case = DGTF__ATTR_VALUE__VALUE_SHAPE;
    v->shape = &scalar;
    size_t len;
    uint8_t *buf = gb_pack(b, &len);
    dg_error err;
    dgc_graph *g = load_bytes(buf, len, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(node(g, "x")->outputs[0].dtype, DG_F64);
    dg_graph_free(g);
    free(buf);
    free(b);
}

/* A binary GraphDef whose first node is 123 bytes long starts with "\n{",
 * like JSON after a newline: content still tells it apart. */
static void test_brace_start(void **state)
{
    (void)state;
    gbuild *b = calloc(1, sizeof *b);
    gb_init(b);
    char name[116];
    memset(name, 'a', 115);
    name[115] = 0;
    gb_node(b, name, "NoOp", NULL, 0);
    size_t len;
    uint8_t *buf = gb_pack(b, &len);
    assert_int_equal(buf[0], '\n');
    assert_int_equal(buf[1], '{');
    dg_error err;
    dgc_graph *g = load_bytes(buf, len, &err);
    if (!g)
        fail_msg("%s", err.msg);
    assert_int_equal(g->n_nodes, 1);
    dg_graph_free(g);
    free(buf);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_graph),
        cmocka_unit_test(test_typed_values),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_same_errors),
        cmocka_unit_test(test_repeated_attr),
        cmocka_unit_test(test_brace_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
