/*
 * test_replicate.c -- the replication pass (SPEC 8.4, compiler/replicate.c)
 * on small graphs: replica copies and their requests, shared Variables
 * dealt over the ps tasks, the sync mean (one update, one global_step
 * increment), async per-replica updates, allreduce copies seeded by the
 * original name with an AllReduce(mean) per gradient, the collective attrs
 * of AllReduce / Broadcast / ReplicaIndex copies, their gradients, fetches
 * of replica 0, and every "replicate" error (exit 2).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "cluster.h"
#include "ops.h"
#include "dg_alloc.h"

/* "GPU" when every task has an assumed GPU, "CPU" in a CPU-only build. */
static const char *dt = "GPU";

/* Compile text with a GPU per task (if the build has a GPU backend) of its
 * cluster (or one process). */
static dg_program *build(const char *json, dg_error *err)
{
    memset(err, 0, sizeof *err);
    dg_graph *g = dg_graph_load("r.json", json, strlen(json), err);
    if (!g)
        return NULL;
    const dg_cluster *c = dg_graph_cluster(g, NULL);
    dg_device_list *local = NULL, *all = NULL;
    dg_status st = dg_devices_assume(strcmp(dt, "GPU") == 0, &local, err);
    if (st == DG_E_USAGE) { /* a CPU-only build */
        dt = "CPU";
        st = dg_devices_assume(0, &local, err);
    }
    if (!st && c) {
        const dg_device_list *per[16];
        for (int r = 0; r < dg_cluster_task_count(c); r++)
            per[r] = local;
        st = dg_devices_for_cluster(c, per, &all, err);
    }
    dg_program *p = st ? NULL : dg_compile(g, NULL, all ? all : local, err);
    if (!p)
        dg_graph_free(g);
    dg_devices_free(local);
    dg_devices_free(all);
    return p;
}

static const dgc_node *node(const dg_program *p, const char *name)
{
    int32_t id = dgc_graph_find(p->g, name);
    if (id < 0)
        fail_msg("no node '%s'", name);
    return &p->g->nodes[id];
}

static const char *dev(const dg_program *p, const char *name)
{
    return p->devs.devs[node(p, name)->device_id].name;
}

static const char *ps_dev(int task)
{
    static char buf[2][64];
    snprintf(buf[task], sizeof buf[task], "/job:ps/replica:0/task:%d/device:%s:0",
             task, dt);
    return buf[task];
}

static const char *in_name(const dg_program *p, const char *name, int k)
{
    const dgc_node *n = node(p, name);
    assert_true(k < n->n_inputs);
    return p->g->nodes[n->inputs[k].node].name;
}

static int count_op(const dg_program *p, int op)
{
    int c = 0;
    for (int32_t i = 0; i < p->g->n_nodes; i++)
        c += p->g->nodes[i].op == op;
    return c;
}

/* y = w * x, loss = Sum(y); SGD; a ReplicaIndex and a user AllReduce. */
#define GRAPH(cluster, repl)                                                   \
    "{\"cluster\": " cluster ", \"replicate\": " repl ", \"nodes\": ["        \
    "{\"name\": \"x\", \"op\": \"Const\", \"attrs\": {\"value\": [1, 2]}},"    \
    "{\"name\": \"w\", \"op\": \"Variable\", \"attrs\": {\"shape\": [2],"     \
    " \"init\": {\"random_normal\": {\"mean\": 0, \"stddev\": 1}}}},"         \
    "{\"name\": \"v\", \"op\": \"Variable\", \"attrs\": {\"shape\": [2],"     \
    " \"init\": {\"zeros\": {}}}},"                                           \
    "{\"name\": \"y\", \"op\": \"Mul\", \"inputs\": [\"w\", \"x\"]},"         \
    "{\"name\": \"z\", \"op\": \"Mul\", \"inputs\": [\"v\", \"y\"]},"         \
    "{\"name\": \"r\", \"op\": \"ReplicaIndex\"},"                             \
    "{\"name\": \"loss\", \"op\": \"Sum\", \"inputs\": [\"z\"]},"             \
    "{\"name\": \"s\", \"op\": \"AllReduce\", \"inputs\": [\"loss\"],"        \
    " \"attrs\": {\"reduction\": \"sum\"}}],"                                 \
    "\"fetch\": [\"loss\"],"                                                  \
    "\"train\": {\"loss\": \"loss\", \"optimizer\": {\"type\": \"sgd\","      \
    " \"learning_rate\": 0.1}, \"steps\": 1}}"

static void test_ps_sync(void **state)
{
    (void)state;
    dg_error err;
    dg_program *p = build(GRAPH("{\"ps\": 2, \"worker\": 3}",
                                "{\"job\": \"worker\", \"strategy\": \"ps\"}"),
                          &err);
    if (!p)
        fail_msg("%s", err.msg);
    /* Variables shared, dealt round robin over the ps tasks */
    assert_string_equal(dev(p, "w"), ps_dev(0));
    assert_string_equal(dev(p, "v"), ps_dev(1));
    assert_int_equal(dgc_graph_find(p->g, "replica_1/w"), -1);
    /* replicas on their tasks, replica 0 renamed */
    assert_int_equal(dgc_graph_find(p->g, "y"), -1);
    for (int k = 0; k < 3; k++) {
        char nm[64], want[96];
        snprintf(nm, sizeof nm, "replica_%d/y", k);
        snprintf(want, sizeof want, "/job:worker/replica:0/task:%d/device:%s:0", k, dt);
        assert_string_equal(dev(p, nm), want);
        snprintf(nm, sizeof nm, "replica_%d/r", k);
        assert_int_equal(dgc_attr_int(node(p, nm), "replica", -1), k);
        assert_int_equal(dgc_attr_int(node(p, nm), "replicas", -1), 3);
    }
    /* one update per Variable, reading the replicas' mean on its task */
    assert_int_equal(count_op(p, DGC_OPID_ApplyGradientDescent), 2);
    assert_string_equal(in_name(p, "train/update_w/ApplyGradientDescent", 2),
                        "train/w/replica_mean");
    assert_int_equal(node(p, "train/w/replica_sum")->n_inputs, 3);
    assert_string_equal(in_name(p, "train/w/replica_sum", 2), "replica_2/train/w");
    assert_string_equal(dev(p, "train/w/replica_mean"),
                        ps_dev(0));
    assert_string_equal(dev(p, "train/v/replica_sum"),
                        ps_dev(1));
    /* one global_step increment per step, the train op shared */
    assert_int_equal(count_op(p, DGC_OPID_AssignAdd), 1);
    assert_int_equal(p->g->train.train_op, dgc_graph_find(p->g, "train/step"));
    assert_int_equal(p->g->replicate.replicas, 3);
    for (int k = 0; k < 3; k++)
        assert_int_equal(p->g->replicate.step[k], p->g->train.train_op);
    /* the fetch "loss" is replica 0's */
    assert_string_equal(p->fetch[0], "replica_0/loss");
    dg_program_free(p);
}

static void test_ps_async(void **state)
{
    (void)state;
    dg_error err;
    dg_program *p = build(GRAPH("{\"ps\": 1, \"worker\": 2}",
                                "{\"job\": \"worker\", \"strategy\": \"ps\","
                                " \"sync\": false}"),
                          &err);
    if (!p)
        fail_msg("%s", err.msg);
    /* each replica applies its own gradient to the shared Variable */
    assert_int_equal(count_op(p, DGC_OPID_ApplyGradientDescent), 4);
    assert_string_equal(in_name(p, "replica_1/train/update_w/ApplyGradientDescent", 0), "w");
    assert_string_equal(in_name(p, "replica_1/train/update_w/ApplyGradientDescent", 2),
                        "replica_1/train/w");
    assert_string_equal(dev(p, "replica_1/train/update_w/ApplyGradientDescent"),
                        ps_dev(0));
    /* global_step grows per replica step */
    assert_int_equal(count_op(p, DGC_OPID_AssignAdd), 2);
    assert_string_equal(in_name(p, "replica_1/train/global_step/AssignAdd", 0),
                        "global_step");
    /* every replica's train op, grouped by train/step */
    const dgc_node *all = node(p, "train/step");
    assert_int_equal(p->g->train.train_op, dgc_graph_find(p->g, "train/step"));
    assert_int_equal(all->n_ctrl, 2);
    assert_int_equal(p->g->replicate.step[1],
                     dgc_graph_find(p->g, "replica_1/train/step"));
    /* no mean nodes: nothing waits for the other replica */
    assert_int_equal(dgc_graph_find(p->g, "train/w/replica_mean"), -1);
    dg_program_free(p);
}

static void test_allreduce(void **state)
{
    (void)state;
    dg_error err;
    dg_program *p = build(GRAPH("{\"worker\": 2}",
                                "{\"job\": \"worker\", \"strategy\": \"allreduce\"}"),
                          &err);
    if (!p)
        fail_msg("%s", err.msg);
    for (int k = 0; k < 2; k++) {
        char nm[96], want[96];
        snprintf(nm, sizeof nm, "replica_%d/w", k);
        const dgc_attr *a = dgc_node_attr(node(p, nm), "init_name");
        assert_non_null(a);
        assert_string_equal(a->s, "w"); /* seeded like the unreplicated w */
        snprintf(want, sizeof want, "/job:worker/replica:0/task:%d/device:%s:0", k, dt);
        assert_string_equal(dev(p, nm), want);
        snprintf(nm, sizeof nm, "replica_%d/train/update_w/ApplyGradientDescent", k);
        char ar[96];
        snprintf(ar, sizeof ar, "replica_%d/train/w/AllReduce", k);
        assert_string_equal(in_name(p, nm, 2), ar);
        const dgc_node *n = node(p, ar);
        assert_string_equal(dgc_node_attr(n, "reduction")->s, "mean");
        assert_string_equal(dgc_node_attr(n, "key")->s, "train/w/AllReduce");
        assert_int_equal(dgc_attr_int(n, "replica", -1), k);
        assert_int_equal(dgc_attr_int(n, "replicas", -1), 2);
        assert_string_equal(dev(p, ar), want);
        /* the user's AllReduce: key = its original name */
        snprintf(nm, sizeof nm, "replica_%d/s", k);
        assert_string_equal(dgc_node_attr(node(p, nm), "key")->s, "s");
    }
    /* 2 replicas x 2 gradients */
    assert_int_equal(count_op(p, DGC_OPID_AllReduce), 4 + 2);
    assert_int_equal(count_op(p, DGC_OPID_AssignAdd), 2);
    /* no data crosses tasks: the collectives carry the gradients */
    for (int i = 0; i < p->n_transfers; i++)
        assert_int_equal(p->devs.devs[p->transfers[i].src_device].task,
                         p->devs.devs[p->transfers[i].dst_device].task);
    dg_program_free(p);
}

/* Gradients of the collectives, built before replication (grad_collective.c). */
static void test_collective_gradients(void **state)
{
    (void)state;
    static const char G[] =
        "{\"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Variable\", \"attrs\": {\"shape\": [3], \"init\": 1.5}},"
        "{\"name\": \"a\", \"op\": \"AllReduce\", \"inputs\": [\"x\"], \"attrs\": {\"reduction\": \"mean\"}},"
        "{\"name\": \"m\", \"op\": \"AllReduce\", \"inputs\": [\"a\"], \"attrs\": {\"reduction\": \"max\"}},"
        "{\"name\": \"b\", \"op\": \"Broadcast\", \"inputs\": [\"m\"], \"attrs\": {\"root\": 1}},"
        "{\"name\": \"l\", \"op\": \"Sum\", \"inputs\": [\"b\"]}],"
        "\"gradients\": [{\"name\": \"g\", \"ys\": [\"l\"], \"xs\": [\"x\"]}]}";
    dg_error err;
    dg_program *p = build(G, &err);
    if (!p)
        fail_msg("%s", err.msg);
    /* broadcast: a sum-reduce to the root */
    assert_string_equal(dgc_node_attr(node(p, "g/b/AllReduce"), "reduction")->s, "sum");
    assert_int_equal(dgc_attr_int(node(p, "g/b/AllReduce"), "root", -1), 1);
    /* max: the summed gradient over the ties' count, where x == max */
    assert_string_equal(in_name(p, "g/m/Div", 0), "g/m/AllReduce");
    assert_string_equal(in_name(p, "g/m/Div", 1), "g/m/AllReduce_1");
    assert_string_equal(in_name(p, "g/m/Mul", 1), "g/m/Cast");
    /* mean: a mean-allreduce */
    assert_string_equal(dgc_node_attr(node(p, "g/a/AllReduce"), "reduction")->s, "mean");
    dg_program_free(p);
}

static void bad(const char *json, const char *frag)
{
    dg_error err;
    dg_program *p = build(json, &err);
    if (p)
        fail_msg("compiled, expected an error with '%s'", frag);
    assert_int_equal(err.code, DG_E_GRAPH);
    if (!strstr(err.msg, frag))
        fail_msg("message '%s' lacks '%s'", err.msg, frag);
    assert_null(strchr(err.msg, '\n'));
}

static void test_errors(void **state)
{
    (void)state;
    bad("{\"replicate\": {\"job\": \"worker\", \"strategy\": \"allreduce\"},"
        " \"nodes\": []}", "the graph declares no cluster");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"trainer\", \"strategy\": \"allreduce\"}"),
        "replicate.job 'trainer' is not a job of the cluster worker=2");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"worker\", \"strategy\": \"ps\"}"),
        "needs the job 'ps' (ps_job)");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"worker\", \"strategy\": \"ps\","
              " \"ps_job\": \"worker\"}"), "is also the replicated job");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"worker\", \"strategy\": \"mirror\"}"),
        "replicate.strategy must be \"ps\" or \"allreduce\", got \"mirror\"");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"worker\"}"), "missing 'strategy'");
    bad(GRAPH("{\"worker\": 2}", "{\"strategy\": \"ps\"}"), "missing 'job'");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": 3, \"strategy\": \"ps\"}"),
        "replicate.job must be a job name");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"worker\", \"strategy\": "
              "\"allreduce\", \"sync\": false}"), "is synchronous");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"worker\", \"strategy\": "
              "\"allreduce\", \"ps_job\": \"ps\"}"), "applies only to strategy");
    bad(GRAPH("{\"worker\": 2}", "{\"job\": \"worker\", \"strategy\": "
              "\"allreduce\", \"replicas\": 2}"), "unknown key 'replicas'");
    bad(GRAPH("{\"worker\": 2}", "[]"), "'replicate' must be an object");
    bad("{\"cluster\": {\"worker\": 2}, \"replicate\": {\"job\": \"worker\","
        " \"strategy\": \"allreduce\"}, \"nodes\": [{\"name\": \"c\", \"op\":"
        " \"Const\", \"attrs\": {\"value\": 1}, \"device\": \"/job:worker/task:1\"}]}",
        "node 'c': its request '/job:worker/task:1' names a job or task");
    bad("{\"cluster\": {\"worker\": 2}, \"replicate\": {\"job\": \"worker\","
        " \"strategy\": \"allreduce\"}, \"nodes\": [{\"name\": \"c\", \"op\":"
        " \"Const\", \"attrs\": {\"value\": 1}}, {\"name\": \"b\", \"op\":"
        " \"Broadcast\", \"inputs\": [\"c\"], \"attrs\": {\"root\": 2}}]}",
        "node 'b': Broadcast root 2 is not a replica (2 replicas)");
    bad("{\"nodes\": [{\"name\": \"c\", \"op\": \"Const\", \"attrs\": {\"value\": 1}},"
        " {\"name\": \"a\", \"op\": \"AllReduce\", \"inputs\": [\"c\"],"
        " \"attrs\": {\"reduction\": \"prod\"}}]}", "(got \"prod\")");
}

/* Allocation failures anywhere in a replicated compile are DG_E_NOMEM,
 * never another code or a crash (leaks: the ASan build). */
static void oom_sweep(const char *json, int once)
{
    dg_error err;
    long k;
    for (k = 0; k < 100000; k++) {
        if (once)
            dg_alloc_fail_once(k);
        else
            dg_alloc_fail_after(k);
        dg_program *p = build(json, &err);
        dg_alloc_fail_after(-1);
        if (p) {
            dg_program_free(p);
            break;
        }
        if (err.code != DG_E_NOMEM)
            fail_msg("k=%ld once=%d: status %d, not DG_E_NOMEM: %s", k, once,
                     (int)err.code, err.msg);
    }
    assert_true(k > 100 && k < 100000);
}

static void test_oom(void **state)
{
    (void)state;
    for (int once = 0; once < 2; once++) {
        oom_sweep(GRAPH("{\"worker\": 2}",
                        "{\"job\": \"worker\", \"strategy\": \"allreduce\"}"), once);
        oom_sweep(GRAPH("{\"ps\": 2, \"worker\": 2}",
                        "{\"job\": \"worker\", \"strategy\": \"ps\"}"), once);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ps_sync),
        cmocka_unit_test(test_ps_async),
        cmocka_unit_test(test_allreduce),
        cmocka_unit_test(test_collective_gradients),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
