/*
 * test_pbjson.c -- the generic proto3 JSON reader (load_pbjson.c, issue
 * 22): scalars, int64 strings, base64 bytes, enums by name and number,
 * NaN/Infinity, repeated and nested messages, maps, oneofs, camelCase and
 * original names; bad input is an error naming the field's path.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <cJSON.h>

#include "dgrun.h"
#include "dg_alloc.h"
#include "pbjson.h"
#include "tf_graph.pb-c.h"

static void *t_alloc(void *d, size_t n) { (void)d; return dg_malloc(n); }
static void t_free(void *d, void *p) { (void)d; dg_free(p); }
static ProtobufCAllocator A = {t_alloc, t_free, NULL};

static dg_status rd(const char *json, const ProtobufCMessageDescriptor *d,
                    ProtobufCMessage **m, dg_error *err)
{
    cJSON *j = cJSON_Parse(json);
    assert_non_null(j);
    memset(err, 0, sizeof *err);
    dg_status st = dgc_pbjson_read(j, d, NULL, &A, m, err);
    cJSON_Delete(j);
    return st;
}

static void test_types(void **state)
{
    (void)state;
    ProtobufCMessage *m;
    dg_error err;
    assert_int_equal(rd("{\"dtype\":\"DT_FLOAT\",\"tensorShape\":{\"dim\":"
                        "[{\"size\":\"3\"}]},\"floatVal\":[1.5,\"NaN\","
                        "\"-Infinity\"],\"int64Val\":[\"-9007199254740993\","
                        "7],\"tensor_content\":\"AAEC/w==\",\"bool_val\":"
                        "[true],\"uint64Val\":[\"18446744073709551615\"],"
                        "\"version_number\":null}",
                        &dgtf__tensor_proto__descriptor, &m, &err), DG_OK);
    Dgtf__TensorProto *t = (Dgtf__TensorProto *)m;
    assert_int_equal(t->dtype, DGTF__DATA_TYPE__DT_FLOAT);
    assert_int_equal(t->tensor_shape->n_dim, 1);
    assert_int_equal(t->tensor_shape->dim[0]->size, 3);
    assert_int_equal(t->n_float_val, 3);
    assert_true(t->float_val[0] == 1.5f && isnan(t->float_val[1]) &&
                isinf(t->float_val[2]) && t->float_val[2] < 0);
    assert_true(t->n_int64_val == 2 &&
                t->int64_val[0] == -9007199254740993LL &&
                t->int64_val[1] == 7);
    assert_int_equal(t->tensor_content.len, 4);
    assert_memory_equal(t->tensor_content.data, "\x00\x01\x02\xff", 4);
    assert_true(t->n_bool_val == 1 && t->bool_val[0]);
    assert_true(t->uint64_val[0] == UINT64_MAX);
    protobuf_c_message_free_unpacked(m, &A);
}

static void test_map_oneof(void **state)
{
    (void)state;
    ProtobufCMessage *m;
    dg_error err;
    assert_int_equal(rd("{\"name\":\"c\",\"op\":\"Const\",\"input\":[\"a\","
                        "\"^b\"],\"attr\":{\"dtype\":{\"type\":1},\"T\":"
                        "{\"list\":{\"i\":[\"1\",2]}},\"s\":{\"s\":\"aGk=\"}}}",
                        &dgtf__node_def__descriptor, &m, &err), DG_OK);
    Dgtf__NodeDef *n = (Dgtf__NodeDef *)m;
    assert_string_equal(n->name, "c");
    assert_true(n->n_input == 2 && !strcmp(n->input[1], "^b"));
    assert_int_equal(n->n_attr, 3);
    assert_string_equal(n->attr[0]->key, "dtype");
    assert_int_equal(n->attr[0]->value->value_case,
                     DGTF__ATTR_VALUE__VALUE_TYPE);
    assert_int_equal(n->attr[0]->value->type, DGTF__DATA_TYPE__DT_FLOAT);
    assert_int_equal(n->attr[1]->value->value_case,
                     DGTF__ATTR_VALUE__VALUE_LIST);
    assert_int_equal(n->attr[1]->value->list->n_i, 2);
    assert_int_equal(n->attr[1]->value->list->i[1], 2);
    assert_int_equal(n->attr[2]->value->s.len, 2);
    assert_memory_equal(n->attr[2]->value->s.data, "hi", 2);
    protobuf_c_message_free_unpacked(m, &A);
}

/* Each bad input is refused with its field path in the message, and
 * nothing leaks (the allocator's checks, under ASan). */
static void test_bad(void **state)
{
    (void)state;
    static const struct { const char *json, *msg; } cases[] = {
        {"{\"name\":\"a\",\"bogus\":1}", "bogus: unknown field"},
        {"{\"attr\":{\"x\":{\"i\":\"12z\"}}}", "attr['x'].i: not an integer"},
        {"{\"attr\":{\"x\":{\"type\":\"DT_NOPE\"}}}",
         "attr['x'].type: unknown enum value"},
        {"{\"attr\":{\"x\":{\"s\":\"a*b\"}}}", "attr['x'].s: invalid base64"},
        {"{\"attr\":{\"x\":{\"i\":1,\"f\":2}}}",
         "attr['x'].f: a second field of the same oneof"},
        {"{\"input\":[\"a\",3]}", "input[1]: expected a string"},
        {"{\"input\":\"a\"}", "input: expected an array"},
        {"{\"attr\":[]}", "attr: expected an object (a map)"},
        {"{\"name\":\"a\",\"name\":\"b\"}", "name: field given twice"},
        {"{\"attr\":{\"x\":{\"list\":{\"i\":[1e30]}}}}",
         "attr['x'].list.i[0]: not an integer in range"},
        {"[]", "(root): expected an object"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ProtobufCMessage *m = (ProtobufCMessage *)&k;
        dg_error err;
        assert_int_equal(rd(cases[k].json, &dgtf__node_def__descriptor, &m,
                            &err), DG_E_GRAPH);
        assert_null(m);
        if (!strstr(err.msg, cases[k].msg))
            fail_msg("case %zu: '%s' lacks '%s'", k, err.msg, cases[k].msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_map_oneof),
        cmocka_unit_test(test_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
