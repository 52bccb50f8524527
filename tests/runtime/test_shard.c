/*
 * test_shard.c -- sharded training feeds (SPEC 8.4, rowstream.h): with W
 * replicas of batch b, concatenating the W replicas' rows of step s gives
 * exactly the W*b rows one process takes at step s with batch W*b (same
 * seed, same shuffle), over many steps and several epochs, including
 * batches that straddle an epoch boundary and a restart from a step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "rowstream.h"

/* Step s's rows of one process with batch W*b vs. the W shards. */
static void check_shards(int64_t rows, int shuffle, int W, int64_t b,
                         int steps, int64_t first)
{
    dg_error err = {DG_OK, ""};
    dgr_rowstream one, rep[8];
    assert_int_equal(dgr_rowstream_init(&one, rows, shuffle, 42, &err), DG_OK);
    dgr_rowstream_skip(&one, first * W * b);
    for (int k = 0; k < W; k++) {
        assert_int_equal(dgr_rowstream_init(&rep[k], rows, shuffle, 42, &err),
                         DG_OK);
        dgr_rowstream_skip(&rep[k], first * W * b); /* a restore at `first` */
    }
    int64_t *all = malloc(sizeof *all * (size_t)(W * b));
    int64_t *part = malloc(sizeof *part * (size_t)b);
    assert_non_null(all);
    assert_non_null(part);
    for (int s = 0; s < steps; s++) {
        dgr_rowstream_shard(&one, 0, 1, W * b, all);
        for (int k = 0; k < W; k++) {
            dgr_rowstream_shard(&rep[k], k, W, b, part);
            assert_memory_equal(part, all + k * b, sizeof *part * (size_t)b);
        }
    }
    /* every replica stream is still in step with the single one */
    for (int k = 0; k < W; k++) {
        assert_int_equal(rep[k].epoch, one.epoch);
        assert_int_equal(rep[k].cursor, one.cursor);
        dgr_rowstream_free(&rep[k]);
    }
    assert_true(one.epoch >= 3); /* the test crossed several epochs */
    dgr_rowstream_free(&one);
    free(all);
    free(part);
}

static void test_shards_equal_big_batch(void **state)
{
    (void)state;
    static const int Ws[] = {1, 2, 3, 4};
    static const int64_t bs[] = {1, 5, 16};
    for (int shuffle = 0; shuffle < 2; shuffle++)
        for (size_t w = 0; w < sizeof Ws / sizeof Ws[0]; w++)
            for (size_t j = 0; j < sizeof bs / sizeof bs[0]; j++) {
                /* 37 rows: batches straddle epoch boundaries */
                int steps = (int)(4 * 37 / (Ws[w] * bs[j])) + 3;
                check_shards(37, shuffle, Ws[w], bs[j], steps, 0);
                check_shards(37, shuffle, Ws[w], bs[j], steps, 5);
            }
}

/* The test above can fail: shards of different steps or replicas differ,
 * and the shuffle permutes each epoch differently. */
static void test_shards_distinct(void **state)
{
    (void)state;
    dg_error err = {DG_OK, ""};
    dgr_rowstream a, b;
    assert_int_equal(dgr_rowstream_init(&a, 100, 1, 7, &err), DG_OK);
    assert_int_equal(dgr_rowstream_init(&b, 100, 1, 7, &err), DG_OK);
    int64_t r0[10], r1[10];
    dgr_rowstream_shard(&a, 0, 2, 10, r0);
    dgr_rowstream_shard(&b, 1, 2, 10, r1);
    assert_memory_not_equal(r0, r1, sizeof r0);
    /* one epoch of 100 rows = 5 steps of 2 x 10; epoch 1 differs */
    int64_t e0[100], e1[100];
    dgr_rowstream_free(&a);
    assert_int_equal(dgr_rowstream_init(&a, 100, 1, 7, &err), DG_OK);
    dgr_rowstream_shard(&a, 0, 1, 100, e0);
    dgr_rowstream_shard(&a, 0, 1, 100, e1);
    assert_memory_not_equal(e0, e1, sizeof e0);
    dgr_rowstream_free(&a);
    dgr_rowstream_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shards_equal_big_batch),
        cmocka_unit_test(test_shards_distinct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
