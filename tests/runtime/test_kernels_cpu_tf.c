/*
 * test_kernels_cpu_tf.c -- CPU kernels of the TF graph ops (issue 10) on
 * the integer cases the float e2e checks do not reach: Python-style
 * FloorMod / FloorDiv signs, integer division by zero, Prod, GatherV2's
 * index check, Tile and ConcatV2 of int32, comparisons.
 */
#include "kernels_cpu_harness.h"

static void binary_i32(const char *op, const double *a, const double *b,
                       int n, const double *want)
{
    kt t;
    kt_init(&t, op);
    int64_t d[1] = {n};
    kt_in(&t, DG_I32, 1, d, a);
    kt_in(&t, DG_I32, 1, d, b);
    assert_int_equal(kt_run(&t), DG_OK);
    for (int i = 0; i < n; i++)
        assert_close(kt_out(&t, 0, i), want[i], 0, op);
    kt_free(&t);
}

static void test_floor_ops(void **s)
{
    (void)s;
    double a[] = {7, -7, 7, -7, 0, 6};
    double b[] = {3, 3, -3, -3, 5, -3};
    binary_i32("FloorMod", a, b, 6, (double[]){1, 2, -2, -1, 0, 0});
    binary_i32("FloorDiv", a, b, 6, (double[]){2, -3, -3, 2, 0, -2});
    binary_i32("Less", a, b, 6, (double[]){0, 1, 0, 1, 1, 0});
    binary_i32("GreaterEqual", a, b, 6, (double[]){1, 0, 1, 0, 0, 1});
    /* float FloorMod takes the divisor's sign too */
    kt t;
    kt_init(&t, "FloorMod");
    int64_t d[1] = {2};
    kt_in(&t, DG_F32, 1, d, (double[]){-7.5, 7.5});
    kt_in(&t, DG_F32, 1, d, (double[]){2, -2});
    assert_int_equal(kt_run(&t), DG_OK);
    assert_close(kt_out(&t, 0, 0), 0.5, 1e-6, "fmod");
    assert_close(kt_out(&t, 0, 1), -0.5, 1e-6, "fmod");
    kt_free(&t);
    /* integer division by zero is an error naming the node */
    kt_init(&t, "FloorMod");
    kt_in(&t, DG_I32, 1, d, (double[]){1, 2});
    kt_in(&t, DG_I32, 1, d, (double[]){1, 0});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "node1"));
    kt_free(&t);
}

static void test_prod_gather_tile_concat(void **s)
{
    (void)s;
    kt t;
    kt_init(&t, "Prod");
    int64_t d2[2] = {2, 3};
    assert_int_equal(dgc_node_set_ints(NODE(&t), "axis", (int64_t[]){1}, 1),
                     0);
    kt_in(&t, DG_I64, 2, d2, (double[]){1, 2, 3, -4, 5, 6});
    assert_int_equal(kt_run(&t), DG_OK);
    assert_close(kt_out(&t, 0, 0), 6, 0, "prod");
    assert_close(kt_out(&t, 0, 1), -120, 0, "prod");
    kt_free(&t);

    kt_init(&t, "GatherV2");
    int64_t d1[1] = {3};
    kt_in(&t, DG_I32, 2, d2, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_I32, 1, d1, (double[]){2, 0, 2});
    assert_int_equal(dgc_node_set_int(NODE(&t), "axis", 1), 0);
    assert_int_equal(kt_run(&t), DG_OK);
    double gw[] = {3, 1, 3, 6, 4, 6};
    for (int i = 0; i < 6; i++)
        assert_close(kt_out(&t, 0, i), gw[i], 0, "gather");
    kt_free(&t);

    kt_init(&t, "GatherV2");
    kt_in(&t, DG_I32, 2, d2, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_I32, 1, d1, (double[]){2, 3, 0});
    assert_int_equal(dgc_node_set_int(NODE(&t), "axis", 1), 0);
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "indices[1] = 3"));
    kt_free(&t);

    kt_init(&t, "Tile");
    assert_int_equal(dgc_node_set_ints(NODE(&t), "multiples",
                                       (int64_t[]){2, 1}, 2), 0);
    kt_in(&t, DG_I32, 2, d2, (double[]){1, 2, 3, 4, 5, 6});
    assert_int_equal(kt_run(&t), DG_OK);
    for (int i = 0; i < 12; i++)
        assert_close(kt_out(&t, 0, i), 1 + i % 6, 0, "tile");
    kt_free(&t);

    kt_init(&t, "ConcatV2");
    assert_int_equal(dgc_node_set_int(NODE(&t), "axis", -1), 0);
    kt_in(&t, DG_I32, 2, d2, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_I32, 2, (int64_t[]){2, 1}, (double[]){7, 8});
    assert_int_equal(kt_run(&t), DG_OK);
    double cw[] = {1, 2, 3, 7, 4, 5, 6, 8};
    for (int i = 0; i < 8; i++)
        assert_close(kt_out(&t, 0, i), cw[i], 0, "concat");
    kt_free(&t);
}

/* issue 22: a sparse update applies its gradient rows to the indexed rows
 * in index order (a repeated index twice, as TF's CPU kernel); ScatterUpdate
 * keeps the last of equal indices; an index out of range is an error */
static void test_sparse_updates(void **s)
{
    (void)s;
    kt t;
    int64_t d32[2] = {3, 2}, d1[1] = {3}, d0[1] = {0};
    kt_init(&t, "SparseApplyAdagrad"); /* var, accum, lr, grad, indices */
    kt_in(&t, DG_F32, 2, d32, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_F32, 2, d32, (double[]){1, 1, 1, 1, 1, 1});
    kt_in(&t, DG_F32, 0, d0, (double[]){0.5});
    kt_in(&t, DG_F32, 2, d32, (double[]){1, 1, 2, 2, 3, 3});
    kt_in(&t, DG_I64, 1, d1, (double[]){2, 0, 2});
    assert_int_equal(kt_run(&t), DG_OK);
    double r2 = 5 - 0.5 / sqrt(2.0) - 1.5 / sqrt(11.0);
    double want[] = {1 - 1 / sqrt(5.0), 2 - 1 / sqrt(5.0), 3, 4, r2, r2 + 1};
    for (int i = 0; i < 6; i++)
        assert_close(kt_out(&t, 0, i), want[i], 1e-6, "sparse adagrad");
    kt_free(&t);

    kt_init(&t, "SparseApplyProximalGradientDescent");
    kt_in(&t, DG_F64, 2, d32, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_F64, 0, d0, (double[]){0.5});
    kt_in(&t, DG_F64, 0, d0, (double[]){0});
    kt_in(&t, DG_F64, 0, d0, (double[]){0});
    kt_in(&t, DG_F64, 2, d32, (double[]){1, 1, 2, 2, 3, 3});
    kt_in(&t, DG_I32, 1, d1, (double[]){0, 3, 1});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "index 3 is not in [0, 3)"));
    kt_free(&t);

    kt_init(&t, "ScatterUpdate");
    kt_in(&t, DG_I32, 2, d32, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_I32, 1, d1, (double[]){1, 0, 1});
    kt_in(&t, DG_I32, 2, d32, (double[]){7, 8, 9, 10, 11, 12});
    assert_int_equal(kt_run(&t), DG_OK);
    double su[] = {9, 10, 11, 12, 5, 6};
    for (int i = 0; i < 6; i++)
        assert_close(kt_out(&t, 0, i), su[i], 0, "scatter update");
    kt_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floor_ops),
        cmocka_unit_test(test_prod_gather_tile_concat),
        cmocka_unit_test(test_sparse_updates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
