/*
 * test_random_ops.c -- the random ops of issue 21 (TruncatedNormal,
 * RandomUniformInt, Multinomial) at the level of their samplers in
 * runtime/core/rng.c, which the CPU and OpenCL kernels share: ranges,
 * moments and class frequencies; and the CPU kernels of TruncatedNormal and
 * StopGradient through the kernel harness.
 */
#include "kernels_cpu_harness.h"
#include "rng.h"

#include <math.h>

static void test_truncated_normal(void **s)
{
    (void)s;
    dgr_rng r;
    dgr_rng_seed(&r, 42);
    double sum = 0, sq = 0;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = dgr_rng_truncated_normal(&r);
        assert_true(x >= -2.0 && x <= 2.0);
        sum += x;
        sq += x * x;
    }
    /* N(0, 1) truncated to [-2, 2]: mean 0, stddev 0.8796 */
    assert_true(fabs(sum / n) < 0.01);
    assert_true(fabs(sqrt(sq / n) - 0.8796) < 0.01);
}

static void test_uniform_int(void **s)
{
    (void)s;
    dgr_rng r;
    dgr_rng_seed(&r, 7);
    int32_t o32[6000];
    int seen[7] = {0};
    dgr_rng_fill_int(&r, -3, 4, o32, DG_I32, 6000);
    for (int i = 0; i < 6000; i++) {
        assert_true(o32[i] >= -3 && o32[i] < 4);
        seen[o32[i] + 3]++;
    }
    for (int k = 0; k < 7; k++) /* each of the 7 values near 6000/7 */
        assert_true(seen[k] > 700 && seen[k] < 1020);
    int64_t o64[100];
    int64_t lo = (int64_t)1 << 40;
    dgr_rng_fill_int(&r, lo, lo + 2, o64, DG_I64, 100);
    for (int i = 0; i < 100; i++)
        assert_true(o64[i] == lo || o64[i] == lo + 1);
}

static void test_multinomial(void **s)
{
    (void)s;
    dgr_rng r;
    dgr_rng_seed(&r, 1);
    /* row 0: p = 1/4, 3/4 (logits 0, log 3); row 1: class 0 is -inf */
    float lg[4] = {0.0f, (float)log(3.0), -INFINITY, 5.0f};
    enum { S = 20000 };
    static int64_t o[2 * S];
    double cdf[2];
    dgr_rng_multinomial(&r, lg, DG_F32, 2, 2, S, o, DG_I64, cdf);
    int ones = 0;
    for (int i = 0; i < S; i++) {
        assert_true(o[i] == 0 || o[i] == 1);
        ones += o[i] == 1;
        assert_int_equal(o[S + i], 1);
    }
    assert_true(fabs(ones / (double)S - 0.75) < 0.015);
}

static void test_kernels(void **s)
{
    (void)s;
    kt t;
    kt_init(&t, "TruncatedNormal");
    assert_int_equal(dgc_node_set_shape(NODE(&t), "shape",
                                        &(dg_shape){.rank = 2,
                                                    .dims = {50, 40}}), 0);
    assert_int_equal(dgc_node_set_float(NODE(&t), "mean", 10.0), 0);
    assert_int_equal(dgc_node_set_float(NODE(&t), "stddev", 0.5), 0);
    assert_int_equal(kt_run(&t), DG_OK);
    for (int i = 0; i < 2000; i++) {
        double v = kt_out(&t, 0, i);
        assert_true(v >= 9.0 && v <= 11.0);
    }
    kt_free(&t);

    kt_init(&t, "StopGradient");
    int64_t d[1] = {3};
    kt_in(&t, DG_F32, 1, d, (double[]){1, -2, 3});
    assert_int_equal(kt_run(&t), DG_OK);
    assert_close(kt_out(&t, 0, 1), -2, 0, "StopGradient");
    kt_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_normal),
        cmocka_unit_test(test_uniform_int),
        cmocka_unit_test(test_multinomial),
        cmocka_unit_test(test_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
