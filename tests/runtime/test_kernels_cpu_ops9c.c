/*
 * test_kernels_cpu_ops9c.c -- CPU kernels of the ops9c ops of issue 22 on
 * what the TF-recorded e2e cases cannot show: the errors of bad input
 * (unsorted or negative Segment* ids, an UnsortedSegment* id past
 * num_segments, a SparseSegment* index out of range, a SparseToDense index
 * out of bounds, out of order or repeated, a negative Bincount value), each
 * one line naming the node.
 */
#include "kernels_cpu_harness.h"

static void test_segment_errors(void **s)
{
    (void)s;
    kt t;
    int64_t d4[1] = {4}, d0[1] = {0};
    kt_init(&t, "SegmentSum");
    kt_in(&t, DG_F32, 1, d4, (double[]){1, 2, 3, 4});
    kt_in(&t, DG_I32, 1, d4, (double[]){0, 2, 1, 2});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "are not sorted"));
    assert_non_null(strstr(t.err.msg, "id 1 at 2"));
    kt_free(&t);

    kt_init(&t, "SegmentMax");
    kt_in(&t, DG_F64, 1, d4, (double[]){1, 2, 3, 4});
    kt_in(&t, DG_I64, 1, d4, (double[]){-1, 0, 0, 1});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "id -1 at 0"));
    kt_free(&t);

    kt_init(&t, "UnsortedSegmentProd");
    kt_in(&t, DG_I32, 1, d4, (double[]){1, 2, 3, 4});
    kt_in(&t, DG_I32, 1, d4, (double[]){0, 3, -1, 1});
    kt_in(&t, DG_I32, 0, d0, (double[]){3});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "segment id 3 is not in [0, 3)"));
    kt_free(&t);

    /* a sorted run with repeats and a gap: the gap's row is 0 (max) */
    kt_init(&t, "SegmentMax");
    kt_in(&t, DG_I64, 1, d4, (double[]){5, -7, 2, 9});
    kt_in(&t, DG_I32, 1, d4, (double[]){0, 0, 2, 2});
    assert_int_equal(kt_run(&t), DG_OK);
    double want[] = {5, 0, 9};
    for (int i = 0; i < 3; i++)
        assert_close(kt_out(&t, 0, i), want[i], 0, "segment max");
    kt_free(&t);
}

static void test_sparse_segment_errors(void **s)
{
    (void)s;
    kt t;
    int64_t d32[2] = {3, 2}, d3[1] = {3};
    kt_init(&t, "SparseSegmentMean");
    kt_in(&t, DG_F32, 2, d32, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_I32, 1, d3, (double[]){0, 3, 1});
    kt_in(&t, DG_I32, 1, d3, (double[]){0, 0, 1});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "index 3 is not in [0, 3)"));
    kt_free(&t);

    kt_init(&t, "SparseSegmentSqrtN");
    kt_in(&t, DG_F64, 2, d32, (double[]){1, 2, 3, 4, 5, 6});
    kt_in(&t, DG_I64, 1, d3, (double[]){0, 2, 1});
    kt_in(&t, DG_I64, 1, d3, (double[]){1, 0, 0});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "are not sorted"));
    kt_free(&t);
}

static void sparse_to_dense(const double *ix, int validate, const char *want)
{
    kt t;
    int64_t d2[1] = {2}, d22[2] = {2, 2}, d0[1] = {0};
    kt_init(&t, "SparseToDense");
    kt_in(&t, DG_I64, 2, d22, ix);
    kt_in(&t, DG_I32, 1, d2, (double[]){2, 3});
    kt_in(&t, DG_F32, 1, d2, (double[]){7, 8});
    kt_in(&t, DG_F32, 0, d0, (double[]){0});
    if (!validate)
        assert_int_equal(
            dgc_node_set_bool(NODE(&t), "validate_indices", 0), 0);
    dg_status st = kt_run(&t);
    if (want && !strstr(t.err.msg, want))
        fprintf(stderr, "got: %s\n", t.err.msg);
    assert_int_equal(st, want ? DG_E_RUNTIME : DG_OK);
    if (want)
        assert_non_null(strstr(t.err.msg, want));
    else /* the later of a repeat wins */
        assert_close(kt_out(&t, 0, 4), 8, 0, "sparse to dense");
    kt_free(&t);
}

static void test_sparse_to_dense_errors(void **s)
{
    (void)s;
    sparse_to_dense((double[]){0, 1, 2, 0}, 1,
                    "sparse_indices[1] = 2 is out of bounds of dimension 0");
    sparse_to_dense((double[]){1, 0, 0, 2}, 1,
                    "sparse_indices[1] is out of order");
    sparse_to_dense((double[]){1, 1, 1, 1}, 1,
                    "sparse_indices[1] is repeated");
    sparse_to_dense((double[]){1, 1, 1, 1}, 0, NULL);
}

static void test_bincount_errors(void **s)
{
    (void)s;
    kt t;
    int64_t d3[1] = {3}, d0[1] = {0};
    kt_init(&t, "DenseBincount");
    kt_in(&t, DG_I64, 1, d3, (double[]){1, -2, 0});
    kt_in(&t, DG_I64, 0, d0, (double[]){4});
    kt_in(&t, DG_F32, 1, d0, (double[]){0});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "non-negative (-2 at 1)"));
    kt_free(&t);

    kt_init(&t, "Bincount");
    kt_in(&t, DG_I32, 1, d3, (double[]){1, 2, 0});
    kt_in(&t, DG_I32, 0, d0, (double[]){4});
    kt_in(&t, DG_F64, 1, (int64_t[]){2}, (double[]){1, 1});
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "one per input (2 for 3)"));
    kt_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segment_errors),
        cmocka_unit_test(test_sparse_segment_errors),
        cmocka_unit_test(test_sparse_to_dense_errors),
        cmocka_unit_test(test_bincount_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
