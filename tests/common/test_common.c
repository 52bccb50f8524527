/*
 * test_common.c -- unit tests for the shared helpers in common/: array
 * growth (dg_grow), whole-stream and file reading (dg_read_stream,
 * dg_read_file), status names and exit codes (dg_status_name,
 * dg_status_exit_code), tensor elements as doubles (dg_tensor_elem), shape
 * text for
 * messages (dg_shape_format) and the FNV-1a checksum (dg_fnv1a).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static void test_read_file(void **state)
{
    (void)state;
    char path[] = "/tmp/dg_test_read_file.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "abc\n", 4), 4);
    close(fd);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(dg_read_file(path, &buf, &len), DG_OK);
    assert_int_equal(len, 4);
    assert_string_equal(buf, "abc\n");
    dg_free(buf);
    buf = NULL;
    dg_alloc_fail_after(0);
    assert_int_equal(dg_read_file(path, &buf, &len), DG_E_NOMEM);
    dg_alloc_fail_after(-1);
    assert_null(buf);
    unlink(path);
    /* missing file: DG_E_IO with fopen's errno kept; a directory opens but
     * cannot be read */
    assert_int_equal(dg_read_file(path, &buf, &len), DG_E_IO);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(dg_read_file("/tmp", &buf, &len), DG_E_IO);
    assert_int_equal(errno, EISDIR);
    assert_null(buf);
}

static void test_status_table(void **state)
{
    (void)state;
    /* SPEC section 1: 2 invalid graphs/usage, 1 runtime/I-O, 3 mismatch */
    static const struct { dg_status s; const char *name; int code; } want[] = {
        {DG_OK, "ok", 0},           {DG_E_USAGE, "usage", 2},
        {DG_E_GRAPH, "graph", 2},   {DG_E_PLACEMENT, "placement", 2},
        {DG_E_RUNTIME, "runtime", 1}, {DG_E_NOMEM, "nomem", 1},
        {DG_E_IO, "io", 1},         {DG_E_MISMATCH, "mismatch", 3},
    };
    size_t n = sizeof want / sizeof want[0];
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(dg_status_exit_code(want[i].s), want[i].code);
        assert_string_equal(dg_status_name(want[i].s), want[i].name);
    }
    /* the list has exactly these entries, in enum order from 0 */
#define COUNT_(id, name, code) +1
    assert_int_equal(0 DG_STATUS_LIST(COUNT_), n);
#undef COUNT_
    assert_int_equal(DG_OK, 0);
    assert_int_equal(DG_E_MISMATCH, n - 1);
    /* out of range: exit 1 (a failure), "unknown" */
    assert_int_equal(dg_status_exit_code((dg_status)n), 1);
    assert_int_equal(dg_status_exit_code((dg_status)-1), 1);
    assert_string_equal(dg_status_name((dg_status)n), "unknown");
    assert_string_equal(dg_status_name((dg_status)-1), "unknown");
}

static void test_tensor_elem(void **state)
{
    (void)state;
    dg_shape s = {1, {3}};
    static const double want[DG_DTYPE_COUNT][3] = {
        {0.5, -2, 3}, {0.25, -1e300, 7}, {-7, 0, 2147483647},
        {-9007199254740992.0, 1, 5}, {1, 0, 1}};
    for (int d = 0; d < DG_DTYPE_COUNT; d++) {
        dg_tensor *t = dg_tensor_new((dg_dtype)d, &s);
        assert_non_null(t);
        for (int i = 0; i < 3; i++) {
            double v = want[d][i];
            switch (d) {
            case DG_F32: ((float *)t->data)[i] = (float)v; break;
            case DG_F64: ((double *)t->data)[i] = v; break;
            case DG_I32: ((int32_t *)t->data)[i] = (int32_t)v; break;
            case DG_I64: ((int64_t *)t->data)[i] = (int64_t)v; break;
            default: ((uint8_t *)t->data)[i] = (uint8_t)(i == 2 ? 5 : v);
            }
        }
        for (int i = 0; i < 3; i++)
            assert_true(dg_tensor_elem(t, i) == want[d][i]);
        dg_tensor_free(t);
    }
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

/* An empty buffer taken is "" (it was an unterminated allocation: the
 * OpenCL build output of a silent build printed heap garbage). */
static void test_sbuf_take_empty(void **state)
{
    (void)state;
    dg_sbuf b;
    dg_sbuf_init(&b);
    char *s = dg_sbuf_take(&b);
    assert_non_null(s);
    assert_string_equal(s, "");
    dg_free(s);
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
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_status_table),
        cmocka_unit_test(test_tensor_elem),
        cmocka_unit_test(test_shape_format_and_fnv),
        cmocka_unit_test(test_numel_saturates),
        cmocka_unit_test(test_err_long_message),
        cmocka_unit_test(test_sbuf_take_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
