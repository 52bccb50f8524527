/*
 * test_collective.c -- the CPU kernels of the replication ops (issue 13):
 * ReplicaIndex reads its per-copy attr; AllReduce and Broadcast are the
 * identity with one replica, an error naming the node with more replicas
 * and no collective runtime, and otherwise hand the collective runtime
 * (dgr_kenv.collective, the MPI layer's) a complete description.
 */
#include "kernels_cpu_harness.h"

static void test_replica_index(void **state)
{
    (void)state;
    for (int k = -1; k < 3; k++) {
        kt t;
        kt_init(&t, "ReplicaIndex");
        if (k >= 0)
            assert_int_equal(dgc_node_set_int(NODE(&t), "replica", k), 0);
        assert_int_equal(kt_run(&t), DG_OK);
        assert_int_equal(t.out[0].dtype, DG_I32);
        assert_int_equal(t.out[0].shape.rank, 0);
        assert_int_equal((int)kt_out(&t, 0, 0), k < 0 ? 0 : k);
        kt_free(&t);
    }
}

static void test_one_replica_identity(void **state)
{
    (void)state;
    static const char *const ops[] = {"AllReduce", "Broadcast"};
    static const char *const reds[] = {"sum", "mean", "max", "min"};
    int64_t d[2] = {2, 3};
    double x[6] = {1, -2, 3.5, 4, 0, -6};
    for (int o = 0; o < 2; o++)
        for (int r = 0; r < 4; r++)
            for (int dt = DG_F32; dt <= DG_I64; dt++) {
                kt t;
                kt_init(&t, ops[o]);
                if (o == 0)
                    assert_int_equal(dgc_node_set_str(NODE(&t), "reduction",
                                                      reds[r]), 0);
                else
                    assert_int_equal(dgc_node_set_int(NODE(&t), "root", r), 0);
                if (r == 3) /* one replica, said explicitly */
                    assert_int_equal(dgc_node_set_int(NODE(&t), "replicas", 1), 0);
                kt_in(&t, (dg_dtype)dt, 2, d, x);
                assert_int_equal(kt_run(&t), DG_OK);
                for (int i = 0; i < 6; i++)
                    assert_close(kt_out(&t, 0, i),
                                 dt >= DG_I32 ? (double)(int64_t)x[i] : x[i],
                                 1e-6, ops[o]);
                kt_free(&t);
            }
}

static void test_no_runtime(void **state)
{
    (void)state;
    kt t;
    kt_init(&t, "AllReduce");
    assert_int_equal(dgc_node_set_str(NODE(&t), "reduction", "sum"), 0);
    assert_int_equal(dgc_node_set_int(NODE(&t), "replicas", 2), 0);
    int64_t d[1] = {2};
    kt_in(&t, DG_F32, 1, d, NULL);
    assert_int_equal(kt_run(&t), DG_E_RUNTIME);
    assert_non_null(strstr(t.err.msg, "node 'node1': AllReduce over 2 replicas "
                                      "needs the collective runtime"));
    kt_free(&t);
}

static dgr_collective seen;
static int calls;

/* A stand-in for the MPI layer: two replicas holding the same x. */
static dg_status fake(void *ctx, const dgr_collective *c, dg_error *err)
{
    (void)ctx;
    (void)err;
    seen = *c;
    calls++;
    const float *in = c->in;
    float *out = c->out;
    for (int64_t i = 0; i < c->n; i++)
        out[i] = c->kind == DGR_COLL_ALLREDUCE ? 2 * in[i] : in[i];
    return DG_OK;
}

static void test_runtime_called(void **state)
{
    (void)state;
    dgr_kenv env = kt_env;
    env.collective = fake;
    kt_envp = &env;
    kt t;
    kt_init(&t, "AllReduce");
    dgc_node *n = NODE(&t);
    assert_int_equal(dgc_node_set_str(n, "reduction", "max"), 0);
    assert_int_equal(dgc_node_set_str(n, "key", "train/w/AllReduce"), 0);
    assert_int_equal(dgc_node_set_int(n, "replica", 1), 0);
    assert_int_equal(dgc_node_set_int(n, "replicas", 2), 0);
    int64_t d[1] = {3};
    double x[3] = {1, 2, 3};
    kt_in(&t, DG_F32, 1, d, x);
    calls = 0;
    assert_int_equal(kt_run(&t), DG_OK);
    assert_int_equal(calls, 1);
    assert_int_equal(seen.kind, DGR_COLL_ALLREDUCE);
    assert_int_equal(seen.reduction, DGR_COLL_MAX);
    assert_string_equal(seen.key, "train/w/AllReduce");
    assert_int_equal(seen.replica, 1);
    assert_int_equal(seen.replicas, 2);
    assert_int_equal(seen.dtype, DG_F32);
    assert_int_equal(seen.n, 3);
    for (int i = 0; i < 3; i++)
        assert_close(kt_out(&t, 0, i), 2 * x[i], 1e-6, "allreduce");
    kt_free(&t);
    /* AllReduce with a root: a reduce (Broadcast's gradient) */
    kt_init(&t, "AllReduce");
    n = NODE(&t);
    assert_int_equal(dgc_node_set_str(n, "reduction", "sum"), 0);
    assert_int_equal(dgc_node_set_int(n, "root", 1), 0);
    assert_int_equal(dgc_node_set_int(n, "replicas", 4), 0);
    kt_in(&t, DG_F32, 1, d, x);
    assert_int_equal(kt_run(&t), DG_OK);
    assert_int_equal(seen.kind, DGR_COLL_REDUCE);
    assert_int_equal(seen.root, 1);
    assert_string_equal(seen.key, "node1"); /* no key: the node's name */
    kt_free(&t);
    kt_init(&t, "Broadcast");
    assert_int_equal(dgc_node_set_int(NODE(&t), "root", 1), 0);
    assert_int_equal(dgc_node_set_int(NODE(&t), "replicas", 2), 0);
    kt_in(&t, DG_F32, 1, d, x);
    assert_int_equal(kt_run(&t), DG_OK);
    assert_int_equal(seen.kind, DGR_COLL_BROADCAST);
    assert_int_equal(seen.root, 1);
    kt_free(&t);
    kt_envp = &kt_env;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replica_index),
        cmocka_unit_test(test_one_replica_identity),
        cmocka_unit_test(test_no_runtime),
        cmocka_unit_test(test_runtime_called),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
