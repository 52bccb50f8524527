/*
 * test_common.c -- unit tests for the shared helpers in common/: array
 * growth (dg_grow), whole-stream reading (dg_read_stream), shape text for
 * messages (dg_shape_format) and the FNV-1a checksum (dg_fnv1a).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "dg_alloc.h"
#include "dg_error.h"
#include "dg_io.h"
#include "dg_util.h"

static void test_grow_doubles(void **state)
{
    (void)state;
    int32_t cap = 0;
    int *a = dg_grow(NULL, &cap, 1, sizeof *a, 4);
    assert_non_null(a);
    assert_int_equal(cap, 4);
    for (int i = 0; i < 4; i++)
        a[i] = i;
    a = dg_grow(a, &cap, 5, sizeof *a, 4);
    assert_non_null(a);
    assert_int_equal(cap, 8);
    a = dg_grow(a, &cap, 33, sizeof *a, 4);
    assert_non_null(a);
    assert_int_equal(cap, 64);
    for (int i = 0; i < 4; i++)
        assert_int_equal(a[i], i); /* contents kept */
    dg_free(a);
}

static void test_grow_failure_keeps_state(void **state)
{
    (void)state;
    int32_t cap = 0;
    int *a = dg_grow(NULL, &cap, 2, sizeof *a, 2);
    assert_non_null(a);
    a[1] = 7;
    dg_alloc_fail_after(0);
    int *b = dg_grow(a, &cap, 3, sizeof *a, 2);
    dg_alloc_fail_after(-1);
    assert_null(b);
    assert_int_equal(cap, 2);
    assert_int_equal(a[1], 7);
    /* a capacity past int32 range is refused, not wrapped */
    assert_null(dg_grow(a, &cap, (int64_t)INT32_MAX + 1, sizeof *a, 2));
    assert_int_equal(cap, 2);
    dg_free(a);
}

static void test_read_stream(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    /* larger than the first block of a non-regular stream */
    for (int i = 0; i < 100000; i++)
        fputc('a' + i % 26, f);
    rewind(f);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(dg_read_stream(f, &buf, &len), DG_OK);
    assert_int_equal(len, 100000);
    assert_int_equal(buf[0], 'a');
    assert_int_equal(buf[99999], 'a' + 99999 % 26);
    assert_int_equal(buf[len], '\0');
    dg_free(buf);
    rewind(f);
    buf = NULL;
    dg_alloc_fail_after(0);
    assert_int_equal(dg_read_stream(f, &buf, &len), DG_E_NOMEM);
    dg_alloc_fail_after(-1);
    assert_null(buf);
    fclose(f);
}

/* A message longer than dg_error's buffer keeps its head and tail, where
 * the reason is (issue 15: a 100 KB node name hid "unknown op"). */
static void test_err_long_message(void **state)
{
    (void)state;
    static char name[100001];
    memset(name, 'n', sizeof name - 1);
    dg_error err;
    dg_err(&err, DG_E_GRAPH, "node '%s': unknown op '%s'", name, "Nope");
    assert_int_equal(err.code, DG_E_GRAPH);
    assert_true(strlen(err.msg) == sizeof err.msg - 1);
    assert_memory_equal(err.msg, "node 'nnn", 9);
    assert_non_null(strstr(err.msg, "nnn ... nnn"));
    assert_non_null(strstr(err.msg, "': unknown op 'Nope'"));
    /* arguments may point into the message itself */
    dg_err(&err, DG_E_IO, "x: %s", err.msg);
    assert_memory_equal(err.msg, "x: node 'nnn", 12);
}

/* dg_shape_numel saturates instead of overflowing (issue 15: a checkpoint
 * claiming dims [2^40, 2^40, 2^40] was signed overflow, UB). */
static void test_numel_saturates(void **state)
{
    (void)state;
    dg_shape big = {3, {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40}};
    assert_true(dg_shape_numel(&big) == INT64_MAX);
    dg_shape zero = {3, {(int64_t)1 << 40, (int64_t)1 << 40, 0}};
    assert_true(dg_shape_numel(&zero) == 0);
    dg_shape unk = {2, {INT64_MAX, -1}};
    assert_true(dg_shape_numel(&unk) == -1);
    dg_shape fits = {2, {(int64_t)1 << 31, (int64_t)1 << 31}};
    assert_true(dg_shape_numel(&fits) == (int64_t)1 << 62);
    assert_null(dg_tensor_new(DG_F32, &big));
}

static void test_shape_format_and_fnv(void **state)
{
    (void)state;
    dg_shape s = {2, {2, 3}};
    char b[32];
    dg_shape_format(&s, b, sizeof b);
    assert_string_equal(b, "[2, 3]");
    s.rank = 0;
    dg_shape_format(&s, b, sizeof b);
    assert_string_equal(b, "[]");
    s.rank = 3;
    s.dims[2] = 123456;
    dg_shape_format(&s, b, 6);
    assert_int_equal(strlen(b), 5); /* truncated, terminated */
    /* FNV-1a 64 reference values; chaining equals hashing the whole */
    assert_true(dg_fnv1a(DG_FNV1A_INIT, "", 0) == 0xcbf29ce484222325ull);
    assert_true(dg_fnv1a(DG_FNV1A_INIT, "a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(dg_fnv1a(dg_fnv1a(DG_FNV1A_INIT, "ab", 2), "c", 1) ==
                dg_fnv1a(DG_FNV1A_INIT, "abc", 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_doubles),
        cmocka_unit_test(test_grow_failure_keeps_state),
        cmocka_unit_test(test_read_stream),
        cmocka_unit_test(test_shape_format_and_fnv),
        cmocka_unit_test(test_numel_saturates),
        cmocka_unit_test(test_err_long_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
