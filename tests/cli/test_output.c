/*
 * test_output.c -- unit tests of the CLI's NumPy-like tensor printing, JSON
 * values and argument parsing (cli/output.c, cli/args.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <float.h>

#include "args.h"
#include "dgrun.h"
#include "output.h"

static dg_tensor *make(dg_dtype t, int rank, const int64_t *dims, const double *v)
{
    dg_shape s;
    s.rank = rank;
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    dg_tensor *x = dg_tensor_new(t, &s);
    assert_non_null(x);
    int64_t n = dg_shape_numel(&s);
    for (int64_t i = 0; i < n; i++) {
        switch (t) {
        case DG_F32: ((float *)x->data)[i] = (float)v[i]; break;
        case DG_F64: ((double *)x->data)[i] = v[i]; break;
        case DG_I32: ((int32_t *)x->data)[i] = (int32_t)v[i]; break;
        case DG_I64: ((int64_t *)x->data)[i] = (int64_t)v[i]; break;
        default: ((uint8_t *)x->data)[i] = v[i] != 0; break;
        }
    }
    return x;
}

static void expect_text(dg_dtype t, int rank, const int64_t *dims, const double *v,
                        const char *want)
{
    dg_tensor *x = make(t, rank, dims, v);
    dg_sbuf b;
    dg_sbuf_init(&b);
    cli_tensor_text(&b, x);
    assert_false(b.oom);
    assert_string_equal(b.s, want);
    dg_sbuf_free(&b);
    dg_tensor_free(x);
}

static void expect_json(dg_dtype t, int rank, const int64_t *dims, const double *v,
                        const char *want)
{
    dg_tensor *x = make(t, rank, dims, v);
    dg_sbuf b;
    dg_sbuf_init(&b);
    cli_tensor_json(&b, x);
    assert_string_equal(b.s, want);
    dg_sbuf_free(&b);
    dg_tensor_free(x);
}

static void test_scalars(void **state)
{
    (void)state;
    double v;
    v = 0.5403023;
    expect_text(DG_F32, 0, NULL, &v, "0.5403023");
    v = 1.0;
    expect_text(DG_F32, 0, NULL, &v, "1.0");
    v = 1e-5;
    expect_text(DG_F32, 0, NULL, &v, "1e-05");
    v = 1.0 / 3.0;
    expect_text(DG_F64, 0, NULL, &v, "0.3333333333333333");
    v = 7;
    expect_text(DG_I64, 0, NULL, &v, "7");
    v = 1;
    expect_text(DG_BOOL, 0, NULL, &v, "True");
    v = 0;
    expect_text(DG_BOOL, 0, NULL, &v, "False");
}

static void test_arrays(void **state)
{
    (void)state;
    int64_t d22[] = {2, 2}, d2[] = {2}, d3[] = {3};
    double m[] = {19, 22, 43, 50};
    expect_text(DG_F32, 2, d22, m, "[[19. 22.]\n [43. 50.]]");
    double h[] = {0.5, 0.25};
    expect_text(DG_F32, 1, d2, h, "[0.5  0.25]");
    double e[] = {1e-5, 1.0};
    expect_text(DG_F32, 1, d2, e, "[1.e-05 1.e+00]");
    double i[] = {1, -20, 300};
    expect_text(DG_I32, 1, d3, i, "[  1 -20 300]");
    double bo[] = {1, 0};
    expect_text(DG_BOOL, 1, d2, bo, "[ True False]");
    double nan[] = {NAN, 1.0, -INFINITY};
    expect_text(DG_F32, 1, d3, nan, "[ nan   1. -inf]");
    int64_t d222[] = {2, 2, 2};
    double c[] = {0, 1, 2, 3, 4, 5, 6, 7};
    expect_text(DG_I64, 3, d222, c, "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
    int64_t d03[] = {0, 3};
    expect_text(DG_F32, 2, d03, NULL, "[]");
}

static void test_wrap_and_summary(void **state)
{
    (void)state;
    int64_t d[] = {30};
    double v[30];
    for (int k = 0; k < 30; k++)
        v[k] = k;
    expect_text(DG_I32, 1, d, v,
                "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
                " 24 25 26 27 28 29]");
    int64_t big[] = {2000};
    double *w = malloc(2000 * sizeof *w);
    for (int k = 0; k < 2000; k++)
        w[k] = k;
    expect_text(DG_F32, 1, big, w, "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
    free(w);
}

static void test_json(void **state)
{
    (void)state;
    int64_t d22[] = {2, 2}, d2[] = {2};
    double m[] = {19, 22, 43, 50};
    expect_json(DG_F32, 2, d22, m,
                "{\"dtype\": \"float32\", \"shape\": [2, 2], \"value\": [[19.0, 22.0], [43.0, 50.0]]}");
    double s = 0.1;
    expect_json(DG_F32, 0, NULL, &s, "{\"dtype\": \"float32\", \"shape\": [], \"value\": 0.1}");
    expect_json(DG_F64, 0, NULL, &s, "{\"dtype\": \"float64\", \"shape\": [], \"value\": 0.1}");
    double nf[] = {NAN, INFINITY};
    expect_json(DG_F32, 1, d2, nf, "{\"dtype\": \"float32\", \"shape\": [2], \"value\": [null, null]}");
    double b[] = {1, 0};
    expect_json(DG_BOOL, 1, d2, b, "{\"dtype\": \"bool\", \"shape\": [2], \"value\": [true, false]}");
    double big = 9007199254740993.0;
    expect_json(DG_I64, 0, NULL, &big, "{\"dtype\": \"int64\", \"shape\": [], \"value\": 9007199254740992}");
}

/* Edge values keep the text the printf retry loops gave (common/dg_fpconv
 * computes it now): positional integers below 1e16, exponents above, -0,
 * the extreme float32s, a power of two whose lopsided rounding interval
 * makes the loop take 9 digits; integers without printf. */
static void test_json_numbers(void **state)
{
    (void)state;
    int64_t d10[] = {10};
    double f[] = {50, -0.0, ldexp(1.0, 90), 1e-45, FLT_MAX, 123456789.0,
                  1e16, 0.3, -2.5e-7, 16777216.0};
    expect_json(DG_F32, 1, d10, f,
                "{\"dtype\": \"float32\", \"shape\": [10], \"value\": [50.0, -0.0, "
                "1.23794004e+27, 1e-45, 3.4028235e+38, 123456792.0, 1e+16, 0.3, "
                "-2.5e-07, 16777216.0]}");
    int64_t d3[] = {3};
    double d[] = {0.1, 1e300, 5e-324};
    expect_json(DG_F64, 1, d3, d,
                "{\"dtype\": \"float64\", \"shape\": [3], \"value\": [0.1, 1e+300, 5e-324]}");
    double i[] = {-5, 0, -9223372036854775808.0};
    expect_json(DG_I64, 1, d3, i,
                "{\"dtype\": \"int64\", \"shape\": [3], \"value\": [-5, 0, -9223372036854775808]}");
    dg_sbuf b;
    dg_sbuf_init(&b);
    cli_json_number(&b, 0.25);
    dg_sbuf_add(&b, " ");
    cli_json_number(&b, 0.1); /* not a float32: float64 digits */
    dg_sbuf_add(&b, " ");
    cli_json_number(&b, 3.0);
    assert_string_equal(b.s, "0.25 0.1 3.0");
    dg_sbuf_free(&b);
}

static int parse(const char *line, cli_args *a, char *why)
{
    static char buf[512]; /* argv strings must outlive the parse */
    char *argv[32];
    int argc = 0;
    strcpy(buf, line);
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    return cli_parse(argc, argv, a, why, 256);
}

static void test_args(void **state)
{
    (void)state;
    cli_args a;
    char why[256];
    assert_int_equal(parse("dgrun run g.json --repeat=3 --fetch a,b --fetch c --seed 42", &a, why), 0);
    assert_int_equal(a.cmd, CLI_RUN);
    assert_string_equal(a.graph, "g.json");
    assert_int_equal(a.opt.repeat, 3);
    assert_int_equal(a.opt.n_fetch, 3);
    assert_string_equal(a.opt.fetch[2], "c");
    assert_int_equal(a.opt.seed, 42);
    cli_args_free(&a);
    assert_int_equal(parse("dgrun place - --assume-gpus 2 -o out.txt --format dot", &a, why), 0);
    assert_string_equal(a.graph, "-");
    assert_int_equal(a.opt.assume_gpus, 2);
    assert_string_equal(a.output, "out.txt");
    assert_string_equal(a.format, "dot");
    cli_args_free(&a);
    assert_int_equal(parse("dgrun run g.json --feed x=a.npy --feed y=b.csv", &a, why), 0);
    assert_int_equal(a.opt.n_feeds, 2);
    assert_string_equal(a.opt.feeds[1].name, "y");
    assert_string_equal(a.opt.feeds[1].file, "b.csv");
    cli_args_free(&a);
    assert_int_equal(parse("dgrun run g.json --steps 3", &a, why), -1);
    assert_non_null(strstr(why, "--steps"));
    cli_args_free(&a);
    assert_int_equal(parse("dgrun train g.json --steps 0", &a, why), -1);
    cli_args_free(&a);
    assert_int_equal(parse("dgrun devices --gpu-memory-fraction 1.01", &a, why), -1);
    cli_args_free(&a);
    assert_int_equal(parse("dgrun devices --gpu-memory-fraction=1", &a, why), 0);
    cli_args_free(&a);
    assert_int_equal(parse("dgrun place g.json --json", &a, why), 0);
    assert_string_equal(a.format, "json");
    cli_args_free(&a);
    assert_int_equal(parse("dgrun profile g.json --help", &a, why), 0);
    assert_int_equal(a.action, CLI_ACT_HELP);
    assert_int_equal(a.cmd, CLI_PROFILE);
    cli_args_free(&a);
    setenv("DGRUN_OPENCL_DEVICES", "all", 1);
    assert_int_equal(parse("dgrun devices", &a, why), 0);
    assert_string_equal(a.opt.opencl_devices, "all");
    cli_args_free(&a);
    assert_int_equal(parse("dgrun devices --opencl-devices none", &a, why), 0);
    assert_string_equal(a.opt.opencl_devices, "none");
    cli_args_free(&a);
    unsetenv("DGRUN_OPENCL_DEVICES");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_arrays),
        cmocka_unit_test(test_wrap_and_summary),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
