/*
 * test_fpconv.c -- unit tests for common/dg_fpconv: float text without
 * printf retries must be byte-identical to what the printf/strtof retry
 * loops it replaced wrote (computed here with libc as the reference), for
 * every float32 class (zeros, subnormals, the extreme normals, powers of two
 * and ten and their neighbours, NaN and infinities, random bit patterns),
 * for float64, and for fixed precision (%.{p}g, TensorFlow's %.6g-then-%.9g);
 * and dg_strtod/dg_strtof must give what strtod/strtof give (value, end,
 * errno), so that text written reads back as the same bits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_fpconv.h"

/* ---- the libc references (the code dg_fpconv replaced) ------------------ */

static int reads_back(const char *s, double v, int single)
{
    if (single)
        return strtof(s, NULL) == (float)v;
    return strtod(s, NULL) == v;
}

/* cli/output.c's old shortest: the first %.{p}g that reads back. */
static void ref_shortest(double v, int single, char *out)
{
    if (!isfinite(v)) {
        snprintf(out, 64, "%g", v);
        return;
    }
    for (int p = 1; p <= (single ? 9 : 17); p++) {
        snprintf(out, 64, "%.*g", p, v);
        if (reads_back(out, v, single))
            return;
    }
}

/* the Print kernel's old element text: %.6g, widened to %.9g (%.15g, %.17g) */
static void ref_widen(double v, int single, char *out)
{
    snprintf(out, 64, single ? "%.6g" : "%.15g", v);
    if (isfinite(v) && !reads_back(out, v, single))
        snprintf(out, 64, single ? "%.9g" : "%.17g", v);
}

static uint64_t rng = 0x9E3779B97F4A7C15u;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double f64_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* Every writer against its reference, and the shortest text read back by
 * dg_strtof/dg_strtod (bit-identical: -0 stays -0). */
static void check_value(double v, int single)
{
    char want[64], got[DG_FP_BUFSIZE];
    ref_shortest(v, single, want);
    dg_fp_format_shortest(got, v, single);
    if (strcmp(want, got) != 0)
        fail_msg("shortest %s %a: printf loop '%s', dg_fp '%s'",
                 single ? "float32" : "float64", v, want, got);
    ref_widen(v, single, want);
    dg_fp_format_g_widen(got, v, single, single ? 6 : 15, single ? 9 : 17);
    if (strcmp(want, got) != 0)
        fail_msg("widen %s %a: printf '%s', dg_fp '%s'",
                 single ? "float32" : "float64", v, want, got);
    if (!isfinite(v))
        return;
    dg_fp_format_shortest(got, v, single);
    char *end = NULL;
    if (single) {
        float f = (float)v, r = dg_strtof(got, &end);
        if (memcmp(&f, &r, 4) != 0 || *end)
            fail_msg("float32 %a: '%s' reads back as %a", v, got, (double)r);
    } else {
        double r = dg_strtod(got, &end);
        if (memcmp(&v, &r, 8) != 0 || *end)
            fail_msg("float64 %a: '%s' reads back as %a", v, got, r);
    }
}

static void check_f32(uint32_t u)
{
    check_value((double)f32_bits(u), 1);
    check_value((double)f32_bits(u ^ 0x80000000u), 1);
}

/* ---- pinned texts ---------------------------------------------------------- */

static void expect_shortest(float f, const char *want)
{
    char got[DG_FP_BUFSIZE];
    dg_fp_format_shortest(got, (double)f, 1);
    assert_string_equal(got, want);
}

static void test_pinned_float32(void **state)
{
    (void)state;
    expect_shortest(0.0f, "0");
    expect_shortest(-0.0f, "-0");
    expect_shortest(f32_bits(1), "1e-45");              /* min subnormal */
    expect_shortest(f32_bits(0x007FFFFF), "1.1754942e-38"); /* max subnormal */
    expect_shortest(FLT_MIN, "1.1754944e-38");
    expect_shortest(FLT_MAX, "3.4028235e+38");
    expect_shortest(-FLT_MAX, "-3.4028235e+38");
    expect_shortest(0.1f, "0.1");
    expect_shortest(1.0f, "1");
    expect_shortest(0.0001f, "0.0001");
    expect_shortest(0.00001f, "1e-05");
    expect_shortest(123456.0f, "123456");
    expect_shortest(1e7f, "1e+07");
    expect_shortest(16777216.0f, "16777216");
    /* powers of two whose nearest 8-digit number misses the lopsided
     * rounding interval while a farther one hits it: printf's loop (and so
     * dgrun) writes 9 digits where shortest-nearest would write 8 */
    expect_shortest(ldexpf(1.0f, 90), "1.23794004e+27");
    expect_shortest(ldexpf(1.0f, 87), "1.54742505e+26");
    expect_shortest(ldexpf(1.0f, -96), "1.26217745e-29");
    char got[DG_FP_BUFSIZE];
    dg_fp_format_shortest(got, ldexp(1.0, -1017), 0);
    assert_string_equal(got, "7.1202363472230444e-307");
}

static void test_nonfinite_spelling(void **state)
{
    (void)state;
    char got[DG_FP_BUFSIZE];
    double nan_pos = f64_bits(0x7FF8000000000000u), nan_neg = -nan_pos;
    dg_fp_format_shortest(got, nan_pos, 1);
    assert_string_equal(got, "nan");
    dg_fp_format_g(got, nan_neg, 6);
    assert_string_equal(got, "-nan"); /* as glibc's printf */
    dg_fp_format_g_widen(got, (double)(-INFINITY), 1, 6, 9);
    assert_string_equal(got, "-inf");
    dg_fp_format_g(got, INFINITY, 17);
    assert_string_equal(got, "inf");
    /* and exactly what printf writes */
    double specials[] = {nan_pos, nan_neg, INFINITY, -INFINITY};
    for (int i = 0; i < 4; i++)
        for (int p = 1; p <= 17; p++) {
            char want[64];
            snprintf(want, sizeof want, "%.*g", p, specials[i]);
            dg_fp_format_g(got, specials[i], p);
            assert_string_equal(got, want);
        }
}

/* ---- float32 classes against the printf loops ------------------------------ */

static void test_float32_classes(void **state)
{
    (void)state;
    /* zeros, subnormals (the smallest, the largest, every power of two),
     * the extreme normals, infinities, NaN */
    uint32_t fixed[] = {0, 1, 2, 3, 0x7FFFFF, 0x7FFFFE, 0x400000, 0x800000,
                        0x800001, 0x7F7FFFFF, 0x7F7FFFFE, 0x7F800000,
                        0x7FC00000, 0x3F800000, 0x3F7FFFFF, 0x3F800001};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_f32(fixed[i]);
    for (int b = 0; b < 23; b++)
        check_f32(1u << b);
    /* every exponent: powers of two (lopsided intervals) and edge mantissas */
    for (uint32_t e = 0; e < 255; e++) {
        uint32_t ms[] = {0, 1, 2, 0x400000, 0x7FFFFE, 0x7FFFFF};
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
            check_f32((e << 23) | ms[i]);
    }
    /* powers of ten and their neighbours */
    for (int k = -45; k <= 38; k++) {
        char t[16];
        snprintf(t, sizeof t, "1e%d", k);
        float f = strtof(t, NULL);
        uint32_t u;
        memcpy(&u, &f, 4);
        for (int d = -3; d <= 3; d++)
            if (u + (uint32_t)d < 0x7F800000u)
                check_f32(u + (uint32_t)d);
    }
    /* integers around 2^24, where float32 stops holding every integer */
    for (int i = 16777200; i < 16777240; i++)
        check_value((double)(float)i, 1);
}

static void test_float32_random(void **state)
{
    (void)state;
    for (int i = 0; i < 150000; i++)
        check_f32((uint32_t)next_rand());
    /* values like trained weights */
    for (int i = 0; i < 50000; i++) {
        float f = (float)((double)(next_rand() >> 11) / 9007199254740992.0 - 0.5) * 0.2f;
        check_value((double)f, 1);
    }
}

static void test_float64(void **state)
{
    (void)state;
    for (uint64_t e = 0; e < 2047; e += 1) {
        uint64_t ms[] = {0, 1, (UINT64_C(1) << 52) - 1};
        for (size_t i = 0; i < 3; i++)
            check_value(f64_bits((e << 52) | ms[i]), 0);
    }
    check_value(DBL_MAX, 0);
    check_value(DBL_MIN, 0);
    check_value(f64_bits(1), 0);
    check_value(-0.0, 0);
    for (int i = 0; i < 30000; i++) {
        double d = f64_bits(next_rand());
        if (isfinite(d))
            check_value(d, 0);
    }
}

/* %.{p}g and the digits of dg_fp_round against printf for every p */
static void test_fixed_precision(void **state)
{
    (void)state;
    for (int i = 0; i < 20000; i++) {
        uint64_t u = next_rand();
        double v = i % 2 ? (double)f32_bits((uint32_t)u) : f64_bits(u);
        if (!isfinite(v))
            continue;
        for (int p = 1; p <= 17; p++) {
            char want[64], got[DG_FP_BUFSIZE];
            snprintf(want, sizeof want, "%.*g", p, v);
            dg_fp_format_g(got, v, p);
            if (strcmp(want, got) != 0)
                fail_msg("%%.%dg of %a: printf '%s', dg_fp '%s'", p, v, want, got);
        }
    }
    /* exact ties round to even, as printf does */
    char got[DG_FP_BUFSIZE];
    dg_fp_format_g(got, 0.125, 2);
    assert_string_equal(got, "0.12");
    dg_fp_format_g(got, 0.375, 2);
    assert_string_equal(got, "0.38");
    dg_fp_format_g(got, 2.5, 1);
    assert_string_equal(got, "2");
    dg_fp_format_g(got, 9.5, 1);
    assert_string_equal(got, "1e+01");
}

/* ---- parsing ------------------------------------------------------------------ */

static void check_parse(const char *s)
{
    char *e1, *e2;
    errno = 0;
    double a = strtod(s, &e1);
    int er1 = errno;
    errno = 0;
    double b = dg_strtod(s, &e2);
    int er2 = errno;
    if (memcmp(&a, &b, 8) != 0 || e1 != e2 || er1 != er2)
        fail_msg("strtod('%s') = %a (end +%d, errno %d), dg_strtod %a (+%d, %d)",
                 s, a, (int)(e1 - s), er1, b, (int)(e2 - s), er2);
    errno = 0;
    float fa = strtof(s, &e1);
    er1 = errno;
    errno = 0;
    float fb = dg_strtof(s, &e2);
    er2 = errno;
    if (memcmp(&fa, &fb, 4) != 0 || e1 != e2 || er1 != er2)
        fail_msg("strtof('%s') = %a (end +%d, errno %d), dg_strtof %a (+%d, %d)",
                 s, (double)fa, (int)(e1 - s), er1, (double)fb, (int)(e2 - s), er2);
}

static void test_parse_like_libc(void **state)
{
    (void)state;
    const char *fixed[] = {
        "0", "-0", "+0", "0.0", "-0.0e5", "1", "-1", "1e", "1e+", "1.e5",
        ".5", "-.5e-3", ".", "-", "", "e5", "inf", "-Infinity", "nan",
        "0x1p3", "0X10", " 1.5", "1.5 ", "1.5,2", "1e400", "1e-400",
        "-1e-400", "4.9e-324", "2.4703282292062328e-324",
        "1.7976931348623157e308", "1.7976931348623159e308", "3.4028235e38",
        "3.40282357e38", "1.17549435e-38", "1.4e-45", "7e-46", "7.1e-46",
        "9007199254740993", "9007199254740995", "4503599627370496.5",
        "16777217", "16777219", "33554435", "0.1", "0.3",
        "123456789012345678901234567890", "1e22", "1e23", "12345678901234567890",
        "1234567890123456789", "18446744073709551615", "0e999999999999",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.1754942e-38", "3.4028234663852886e38", "-2.5e-10", "6.02214076e23"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        check_parse(fixed[i]);
    char buf[128];
    static const char *const fmts[] = {"%.17g", "%.9g", "%.6g", "%.18e",
                                       "%.8e", "%g", "%.3f", "%.25g"};
    for (int i = 0; i < 40000; i++) {
        uint64_t u = next_rand();
        double d = f64_bits(u);
        if (!isfinite(d))
            continue;
        snprintf(buf, sizeof buf, fmts[i % 8], i % 3 ? d : (double)f32_bits((uint32_t)u));
        check_parse(buf);
        /* random digits and exponents, over and under the ranges */
        int k = 0, nd = 1 + (int)(next_rand() % 20);
        if (next_rand() & 1)
            buf[k++] = '-';
        for (int j = 0; j < nd; j++) {
            buf[k++] = (char)('0' + next_rand() % 10);
            if (j == 0 && (next_rand() & 1))
                buf[k++] = '.';
        }
        snprintf(buf + k, sizeof buf - (size_t)k, "e%d", (int)(next_rand() % 700) - 360);
        check_parse(buf);
        /* exact binary values with one bit more than the format holds:
         * halfway cases, ties to even */
        uint64_t odd = (next_rand() >> 39) | (UINT64_C(1) << 24) | 1;
        snprintf(buf, sizeof buf, "%.20g", ldexp((double)odd, (int)(next_rand() % 40) - 5));
        check_parse(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pinned_float32),
        cmocka_unit_test(test_nonfinite_spelling),
        cmocka_unit_test(test_float32_classes),
        cmocka_unit_test(test_float32_random),
        cmocka_unit_test(test_float64),
        cmocka_unit_test(test_fixed_precision),
        cmocka_unit_test(test_parse_like_libc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
