/*
 * test_feeds.c -- .npy and .csv feed files: round trips through
 * dgr_tensor_save_npy, header versions and dtypes, conversions, shape
 * checks, and every malformed-file error (including random garbage, which
 * must be reported, never crash).
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

#include "feeds.h"
#include "dg_alloc.h"

static char dir[256];

static const char *path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_file(const char *p, const void *data, size_t n)
{
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void write_text(const char *p, const char *s)
{
    write_file(p, s, strlen(s));
}

/* A .npy file with the given version, header dict and data. */
static void write_npy(const char *p, int major, const char *dict,
                      const void *data, size_t n)
{
    unsigned char buf[4096];
    size_t hl = strlen(dict);
    size_t off;
    buf[0] = 0x93;
    memcpy(buf + 1, "NUMPY", 5);
    buf[6] = (unsigned char)major;
    buf[7] = 0;
    if (major == 1) {
        buf[8] = (unsigned char)(hl & 0xff);
        buf[9] = (unsigned char)(hl >> 8);
        off = 10;
    } else {
        buf[8] = (unsigned char)(hl & 0xff);
        buf[9] = (unsigned char)(hl >> 8);
        buf[10] = 0;
        buf[11] = 0;
        off = 12;
    }
    memcpy(buf + off, dict, hl);
    off += hl;
    memcpy(buf + off, data, n);
    write_file(p, buf, off + n);
}

static dg_shape shp(int rank, int64_t a, int64_t b, int64_t c)
{
    dg_shape s = {rank, {a, b, c}};
    return s;
}

static void expect_error(const char *p, dg_dtype want, const dg_shape *s,
                         dg_status code, const char *needle)
{
    dg_tensor *t = (dg_tensor *)0x1;
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_status rc = dgr_tensor_load_file(p, want, s, &t, &err);
    if (rc != code)
        fail_msg("%s: got status %d (%s), want %d", p, rc, err.msg, code);
    assert_null(t);
    assert_non_null(strstr(err.msg, p));
    if (needle && !strstr(err.msg, needle))
        fail_msg("'%s' not in '%s'", needle, err.msg);
    assert_null(strchr(err.msg, '\n'));
}

static void test_npy_round_trip(void **state)
{
    (void)state;
    for (int dt = 0; dt < DG_DTYPE_COUNT; dt++) {
        dg_shape s = shp(2, 3, 5, 0);
        dg_tensor *t = dg_tensor_new((dg_dtype)dt, &s);
        unsigned char *d = t->data;
        for (size_t i = 0; i < 15 * dg_dtype_size((dg_dtype)dt); i++)
            d[i] = (unsigned char)(i * 7 + 1);
        if (dt == DG_BOOL)
            for (int i = 0; i < 15; i++)
                d[i] = (unsigned char)(i % 2);
        if (dt == DG_F32)
            for (int i = 0; i < 15; i++)
                ((float *)d)[i] = (float)i * 0.5f - 2.0f;
        if (dt == DG_F64)
            for (int i = 0; i < 15; i++)
                ((double *)d)[i] = (double)i * 0.25 - 1.0;
        dg_error err;
        const char *p = path("rt.npy");
        assert_int_equal(dgr_tensor_save_npy(p, t, &err), DG_OK);
        dg_shape want = shp(2, -1, 5, 0);
        dg_tensor *u = NULL;
        assert_int_equal(dgr_tensor_load_file(p, (dg_dtype)dt, &want, &u, &err),
                         DG_OK);
        assert_int_equal(u->dtype, dt);
        assert_int_equal(u->shape.rank, 2);
        assert_int_equal(u->shape.dims[0], 3);
        assert_int_equal(u->shape.dims[1], 5);
        assert_memory_equal(u->data, t->data, 15 * dg_dtype_size((dg_dtype)dt));
        dg_tensor_free(u);
        dg_tensor_free(t);
    }
    /* scalar and rank 1, and conversion int32 -> float32 */
    dg_shape s0 = shp(0, 0, 0, 0);
    dg_tensor *t = dg_tensor_new(DG_I32, &s0);
    *(int32_t *)t->data = -7;
    dg_error err;
    assert_int_equal(dgr_tensor_save_npy(path("s.npy"), t, &err), DG_OK);
    dg_tensor *u = NULL;
    assert_int_equal(dgr_tensor_load_file(path("s.npy"), DG_F32, &s0, &u, &err),
                     DG_OK);
    assert_true(*(float *)u->data == -7.0f);
    dg_tensor_free(u);
    dg_tensor_free(t);
    dg_shape s1 = shp(1, 4, 0, 0);
    t = dg_tensor_new(DG_F64, &s1);
    for (int i = 0; i < 4; i++)
        ((double *)t->data)[i] = i + 0.75;
    assert_int_equal(dgr_tensor_save_npy(path("v.npy"), t, &err), DG_OK);
    dg_shape any = shp(1, -1, 0, 0);
    assert_int_equal(dgr_tensor_load_file(path("v.npy"), DG_I64, &any, &u, &err),
                     DG_OK);
    assert_int_equal(((int64_t *)u->data)[3], 3);
    dg_tensor_free(u);
    dg_tensor_free(t);
}

static void test_npy_versions_and_dtypes(void **state)
{
    (void)state;
    float f[4] = {1, 2, 3, 4};
    write_npy(path("v2.npy"), 2,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n",
              f, sizeof f);
    write_npy(path("v3.npy"), 3,
              "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (4,)}\n",
              f, sizeof f);
    unsigned char u8[3] = {0, 200, 255};
    write_npy(path("u1.npy"), 1,
              "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }\n",
              u8, sizeof u8);
    dg_error err;
    dg_tensor *t = NULL;
    dg_shape s22 = shp(2, 2, 2, 0);
    assert_int_equal(dgr_tensor_load_file(path("v2.npy"), DG_F64, &s22, &t, &err),
                     DG_OK);
    assert_true(((double *)t->data)[3] == 4.0);
    dg_tensor_free(t);
    dg_shape any = shp(1, -1, 0, 0);
    assert_int_equal(dgr_tensor_load_file(path("v3.npy"), DG_F32, &any, &t, &err),
                     DG_OK);
    assert_int_equal(t->shape.dims[0], 4);
    dg_tensor_free(t);
    assert_int_equal(dgr_tensor_load_file(path("u1.npy"), DG_I32, &any, &t, &err),
                     DG_OK);
    assert_int_equal(((int32_t *)t->data)[1], 200);
    assert_int_equal(((int32_t *)t->data)[2], 255);
    dg_tensor_free(t);
}

static void test_npy_errors(void **state)
{
    (void)state;
    float f[4] = {1, 2, 3, 4};
    dg_shape any = shp(1, -1, 0, 0);
    dg_shape s22 = shp(2, 2, 2, 0);
    write_npy(path("fo.npy"), 1,
              "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }\n",
              f, sizeof f);
    /* Fortran order (np.save of a transposed array) is read into C order. */
    dg_error ferr;
    dg_tensor *ft = NULL;
    assert_int_equal(dgr_tensor_load_file(path("fo.npy"), DG_F32, &s22, &ft, &ferr),
                     DG_OK);
    assert_true(((float *)ft->data)[1] == 3.0f && ((float *)ft->data)[2] == 2.0f);
    dg_tensor_free(ft);
    write_npy(path("be.npy"), 1,
              "{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }\n",
              f, sizeof f);
    expect_error(path("be.npy"), DG_F32, &any, DG_E_GRAPH, ">f4");
    write_npy(path("tr.npy"), 1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }\n",
              f, sizeof f);
    expect_error(path("tr.npy"), DG_F32, &any, DG_E_GRAPH, "truncated");
    write_npy(path("nokey.npy"), 1, "{'descr': '<f4', 'shape': (4,), }\n", f,
              sizeof f);
    expect_error(path("nokey.npy"), DG_F32, &any, DG_E_GRAPH, "fortran_order");
    write_npy(path("ver.npy"), 9, "{}", f, sizeof f);
    expect_error(path("ver.npy"), DG_F32, &any, DG_E_GRAPH, "version");
    write_npy(path("shape.npy"), 1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n",
              f, sizeof f);
    dg_shape s3 = shp(2, -1, 3, 0);
    expect_error(path("shape.npy"), DG_F32, &s3, DG_E_GRAPH, "[2, 2]");
    write_text(path("magic.npy"), "hello, world\n");
    expect_error(path("magic.npy"), DG_F32, &any, DG_E_GRAPH, "magic");
    expect_error(path("missing.npy"), DG_F32, &any, DG_E_GRAPH, "cannot open");
    /* header length beyond the file */
    unsigned char hdr[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0x7f};
    write_file(path("hl.npy"), hdr, sizeof hdr);
    expect_error(path("hl.npy"), DG_F32, &any, DG_E_GRAPH, "header");
    /* garbage after the magic: always an error, never a crash */
    srand(7);
    for (int it = 0; it < 300; it++) {
        unsigned char g[200];
        memcpy(g, hdr, 8);
        size_t n = 8 + (size_t)(rand() % 190);
        for (size_t i = 8; i < n; i++)
            g[i] = (unsigned char)(rand() % 4 == 0 ? "{}'():,0123 "[rand() % 12]
                                                    : rand());
        if (n > 9) {
            g[8] = (unsigned char)(rand() % 200);
            g[9] = 0;
        }
        write_file(path("fuzz.npy"), g, n);
        dg_tensor *t = NULL;
        dg_error err;
        if (dgr_tensor_load_file(path("fuzz.npy"), DG_F32, &any, &t, &err) ==
            DG_OK)
            dg_tensor_free(t);
    }
}

static void test_csv(void **state)
{
    (void)state;
    dg_error err;
    dg_tensor *t = NULL;
    write_text(path("col.csv"), "1.5\n-2\n3e1\n\n");
    dg_shape any = shp(1, -1, 0, 0);
    assert_int_equal(dgr_tensor_load_file(path("col.csv"), DG_F32, &any, &t, &err),
                     DG_OK);
    assert_int_equal(t->shape.rank, 1);
    assert_int_equal(t->shape.dims[0], 3);
    assert_true(((float *)t->data)[2] == 30.0f);
    dg_tensor_free(t);

    write_text(path("rows.csv"), "1,2,3,4\r\n5, 6, 7, 8\r\n");
    dg_shape m4 = shp(2, -1, 4, 0);
    assert_int_equal(dgr_tensor_load_file(path("rows.csv"), DG_I64, &m4, &t, &err),
                     DG_OK);
    assert_int_equal(t->shape.dims[0], 2);
    assert_int_equal(((int64_t *)t->data)[5], 6);
    dg_tensor_free(t);
    dg_shape m22 = shp(3, -1, 2, 2);
    assert_int_equal(dgr_tensor_load_file(path("rows.csv"), DG_F64, &m22, &t, &err),
                     DG_OK);
    assert_int_equal(t->shape.rank, 3);
    assert_true(((double *)t->data)[7] == 8.0);
    dg_tensor_free(t);
    /* an unknown trailing dimension takes the row length */
    dg_shape mm = shp(2, -1, -1, 0);
    assert_int_equal(dgr_tensor_load_file(path("rows.csv"), DG_F32, &mm, &t, &err),
                     DG_OK);
    assert_int_equal(t->shape.dims[1], 4);
    dg_tensor_free(t);
    /* big int64 values stay exact */
    write_text(path("big.csv"), "9007199254740993\n");
    assert_int_equal(dgr_tensor_load_file(path("big.csv"), DG_I64, &any, &t, &err),
                     DG_OK);
    assert_true(((int64_t *)t->data)[0] == 9007199254740993LL);
    dg_tensor_free(t);
    /* scalar */
    write_text(path("one.csv"), "42\n");
    dg_shape s0 = shp(0, 0, 0, 0);
    assert_int_equal(dgr_tensor_load_file(path("one.csv"), DG_I32, &s0, &t, &err),
                     DG_OK);
    assert_int_equal(*(int32_t *)t->data, 42);
    dg_tensor_free(t);
}

static void test_csv_errors(void **state)
{
    (void)state;
    dg_shape any = shp(1, -1, 0, 0);
    dg_shape m4 = shp(2, -1, 4, 0);
    write_text(path("ragged.csv"), "1,2,3,4\n5,6,7,8\n9,10\n");
    expect_error(path("ragged.csv"), DG_F32, &m4, DG_E_GRAPH, ":3:");
    write_text(path("nan.csv"), "1,2,3,4\nfoo,6,7,8\n");
    expect_error(path("nan.csv"), DG_F32, &m4, DG_E_GRAPH, ":2: 'foo'");
    write_text(path("empty.csv"), "\n\n");
    expect_error(path("empty.csv"), DG_F32, &any, DG_E_GRAPH, "no data");
    write_text(path("wide.csv"), "1,2,3\n4,5,6\n");
    expect_error(path("wide.csv"), DG_F32, &m4, DG_E_GRAPH, "per row");
    expect_error(path("wide.csv"), DG_F32, &any, DG_E_GRAPH, "per row");
    write_text(path("rows3.csv"), "1,2,3,4\n1,2,3,4\n1,2,3,4\n");
    dg_shape fixed = shp(2, 2, 4, 0);
    expect_error(path("rows3.csv"), DG_F32, &fixed, DG_E_GRAPH, "[3, 4]");
    write_text(path("emptyfield.csv"), "1,,3,4\n");
    expect_error(path("emptyfield.csv"), DG_F32, &m4, DG_E_GRAPH, ":1:");
    expect_error(path("nofile.csv"), DG_F32, &any, DG_E_GRAPH, "cannot open");
}

/* Fuzzing found (issue 15): a float out of an integer Placeholder's range
 * (or NaN) was converted with a plain C cast, which is undefined.  It now
 * saturates, NaN giving 0, in both readers. */
static void test_float_to_int_saturates(void **state)
{
    (void)state;
    double d[5] = {1e30, -1e30, 0.0 / 0.0, -3.7, 2147483647.9};
    write_npy(path("big.npy"), 1,
              "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }\n",
              d, sizeof d);
    write_text(path("big.csv"), "1e30\n-1e30\nnan\n-3.7\n2147483647.9\n");
    dg_shape any = shp(1, -1, 0, 0);
    const char *files[2] = {path("big.npy"), path("big.csv")};
    for (int k = 0; k < 2; k++) {
        dg_error err;
        dg_tensor *t = NULL;
        assert_int_equal(dgr_tensor_load_file(files[k], DG_I32, k ? NULL : &any,
                                              &t, &err), DG_OK);
        const int32_t *i = t->data;
        assert_int_equal(i[0], INT32_MAX);
        assert_int_equal(i[1], INT32_MIN);
        assert_int_equal(i[2], 0);
        assert_int_equal(i[3], -3);
        assert_int_equal(i[4], INT32_MAX);
        dg_tensor_free(t);
        assert_int_equal(dgr_tensor_load_file(files[k], DG_I64, k ? NULL : &any,
                                              &t, &err), DG_OK);
        const int64_t *l = t->data;
        assert_true(l[0] == INT64_MAX && l[1] == INT64_MIN && l[2] == 0);
        assert_true(l[3] == -3 && l[4] == 2147483647);
        dg_tensor_free(t);
        /* NaN and Inf flow through to float Placeholders unchanged */
        assert_int_equal(dgr_tensor_load_file(files[k], DG_F32, k ? NULL : &any,
                                              &t, &err), DG_OK);
        const float *f = t->data;
        assert_true(f[0] == 1e30f && f[1] == -1e30f);
        assert_true(f[2] != f[2]);
        dg_tensor_free(t);
    }
}

/* Every allocation of the CSV and .npy readers failing in turn: DG_E_NOMEM
 * or success, never a crash (issue 15: the CSV reader crashed), no leak
 * (the ASan build checks). */
static void test_readers_out_of_memory(void **state)
{
    (void)state;
    char big[20000];
    size_t n = 0;
    for (int r = 0; r < 600; r++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%d,%d.5,-%d\n", r, r, r);
    write_text(path("oom.csv"), big);
    float f[6] = {1, 2, 3, 4, 5, 6};
    write_npy(path("oom.npy"), 1,
              "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n",
              f, sizeof f);
    const char *files[2] = {path("oom.csv"), path("oom.npy")};
    for (int k = 0; k < 2; k++) {
        int ok = 0;
        for (long fail = 0; fail < 64 && !ok; fail++) {
            dg_error err;
            dg_tensor *t = NULL;
            dg_alloc_fail_after(fail);
            dg_status st = dgr_tensor_load_file(files[k], DG_F64, NULL, &t, &err);
            dg_alloc_fail_after(-1);
            if (st == DG_OK) {
                ok = 1;
                dg_tensor_free(t);
            } else {
                assert_int_equal(st, DG_E_NOMEM);
                assert_null(t);
            }
        }
        assert_true(ok);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/dgrun_feeds_XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_round_trip),
        cmocka_unit_test(test_npy_versions_and_dtypes),
        cmocka_unit_test(test_npy_errors),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_float_to_int_saturates),
        cmocka_unit_test(test_readers_out_of_memory),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 0;
    return rc;
}
