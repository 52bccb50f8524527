/*
 * test_cluster.c -- clusters at compile time (SPEC 8.1, 8.2): parsing and
 * validating --cluster, rank <-> (job, task), the chief, the cluster-wide
 * device list, chief completion of requests, matching job/task specs,
 * soft placement that keeps the task, round-robin rules over ps tasks,
 * --cluster over the graph's cluster, and dg_compile refusing a device
 * list that is not the cluster's.
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
#include "dg_alloc.h"

static dg_cluster *parse_ok(const char *text)
{
    dg_cluster *c = NULL;
    dg_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(dg_cluster_parse(text, &c, &err), DG_OK);
    assert_non_null(c);
    return c;
}

static void parse_bad(const char *text, const char *frag)
{
    dg_cluster *c = (dg_cluster *)1;
    dg_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(dg_cluster_parse(text, &c, &err), DG_E_USAGE);
    assert_null(c);
    if (!strstr(err.msg, frag))
        fail_msg("'%s': message '%s' lacks '%s'", text, err.msg, frag);
    assert_null(strchr(err.msg, '\n'));
}

static void test_parse(void **state)
{
    (void)state;
    dg_cluster *c = parse_ok("ps=2,worker=3,chief_0=1");
    assert_int_equal(dg_cluster_job_count(c), 3);
    assert_string_equal(dg_cluster_job_name(c, 1), "worker");
    assert_int_equal(dg_cluster_job_tasks(c, 1), 3);
    assert_int_equal(dg_cluster_task_count(c), 6);
    int task = -1;
    assert_int_equal(dg_cluster_task_of(c, 0, &task), 0);
    assert_int_equal(task, 0);
    assert_int_equal(dg_cluster_task_of(c, 4, &task), 1);
    assert_int_equal(task, 2);
    assert_int_equal(dg_cluster_task_of(c, 5, &task), 2);
    assert_int_equal(dg_cluster_task_of(c, 6, &task), -1);
    assert_int_equal(dg_cluster_rank_of(c, "worker", 1), 3);
    assert_int_equal(dg_cluster_rank_of(c, "worker", 3), -1);
    assert_int_equal(dg_cluster_rank_of(c, "eval", 0), -1);
    char buf[64];
    dg_cluster_str(c, buf, sizeof buf);
    assert_string_equal(buf, "ps=2,worker=3,chief_0=1");
    dg_cluster_free(c);

    parse_bad("", "expects JOB=N");
    parse_bad("ps=1,", "expects JOB=N");
    parse_bad("ps", "expects JOB=N");
    parse_bad("ps=0", "got 0");
    parse_bad("ps=+1", "got '+1'");
    parse_bad("ps=1x", "got '1x'");
    parse_bad("ps=4097", "from 1 to 4096");
    parse_bad("ps=2048,worker=2049", "more than 4096 tasks");
    parse_bad("Ps=1", "job name 'Ps'");
    parse_bad("_ps=1", "job name '_ps'");
    parse_bad("localhost=1", "reserved");
    parse_bad("ps=1,ps=1", "listed twice");
}

static void test_chief(void **state)
{
    (void)state;
    const char *cases[][2] = {{"ps=1,worker=2", "1"},
                              {"ps=1,chief=1,worker=2", "1"},
                              {"worker=2,chief=1", "2"},
                              {"trainer=2,ps=1", "0"},
                              {"ps=3", "0"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dg_cluster *c = parse_ok(cases[i][0]);
        assert_int_equal(dg_cluster_chief(c), atoi(cases[i][1]));
        dg_cluster_free(c);
    }
}

/* The cluster-wide list of c with n GPUs per task. */
static dg_device_list *cluster_devs(const dg_cluster *c, int n)
{
    dg_device_list *local = NULL, *all = NULL;
    dg_error err;
    assert_int_equal(dg_devices_assume(n, &local, &err), DG_OK);
    const dg_device_list *per[16];
    assert_true(dg_cluster_task_count(c) <= 16);
    for (int r = 0; r < dg_cluster_task_count(c); r++)
        per[r] = local;
    assert_int_equal(dg_devices_for_cluster(c, per, &all, &err), DG_OK);
    dg_devices_free(local);
    return all;
}

static void test_device_list(void **state)
{
    (void)state;
    dg_cluster *c = parse_ok("ps=1,worker=2");
    dg_device_list *l = cluster_devs(c, 2);
    assert_int_equal(dg_devices_count(l), 9);
    const char *want[] = {"/job:ps/replica:0/task:0/device:CPU:0",
                          "/job:ps/replica:0/task:0/device:GPU:0",
                          "/job:ps/replica:0/task:0/device:GPU:1",
                          "/job:worker/replica:0/task:0/device:CPU:0",
                          "/job:worker/replica:0/task:0/device:GPU:0",
                          "/job:worker/replica:0/task:0/device:GPU:1",
                          "/job:worker/replica:0/task:1/device:CPU:0",
                          "/job:worker/replica:0/task:1/device:GPU:0",
                          "/job:worker/replica:0/task:1/device:GPU:1"};
    for (int i = 0; i < 9; i++) {
        const dg_device_info *d = dg_devices_get(l, i);
        assert_string_equal(d->name, want[i]);
        assert_int_equal(d->rank, i / 3);
        assert_int_equal(d->task, i < 3 ? 0 : (i - 3) / 3);
        assert_string_equal(d->job, i < 3 ? "ps" : "worker");
    }
    dgc_devspec chief, s;
    assert_int_equal(dgc_devices_chief(l, &chief), 1);
    char buf[128];
    dgc_devspec_str(&chief, buf, sizeof buf);
    assert_string_equal(buf, "/job:worker/replica:0/task:0");
    /* matching job and task */
    assert_int_equal(dgc_devspec_parse("/job:worker/task:1/gpu:1", &s), 0);
    for (int i = 0; i < 9; i++)
        assert_int_equal(dgc_devspec_matches(&s, dg_devices_get(l, i)), i == 8);
    assert_int_equal(dgc_devspec_parse("/job:localhost", &s), 0);
    for (int i = 0; i < 9; i++)
        assert_false(dgc_devspec_matches(&s, dg_devices_get(l, i)));
    /* too many devices in all */
    dg_device_list *big = NULL, *all = NULL;
    dg_error err;
    assert_int_equal(dg_devices_assume(4096, &big, &err), DG_OK);
    dg_cluster *c20 = parse_ok("worker=20");
    const dg_device_list *per[20];
    for (int r = 0; r < 20; r++)
        per[r] = big;
    assert_int_equal(dg_devices_for_cluster(c20, per, &all, &err), DG_E_USAGE);
    assert_null(all);
    assert_non_null(strstr(err.msg, "at most 65536"));
    dg_devices_free(big);
    dg_cluster_free(c20);
    dg_devices_free(l);
    /* without a cluster: no chief, localhost matches */
    l = NULL;
    assert_int_equal(dg_devices_assume(1, &l, &err), DG_OK);
    assert_int_equal(dgc_devices_chief(l, &chief), 0);
    assert_int_equal(dgc_devspec_parse("/job:localhost/task:0/gpu:0", &s), 0);
    assert_true(dgc_devspec_matches(&s, dg_devices_get(l, 1)));
    dg_devices_free(l);
    dg_cluster_free(c);
}

static void test_complete(void **state)
{
    (void)state;
    dgc_devspec chief, s;
    assert_int_equal(dgc_devspec_parse("/job:worker/replica:0/task:0", &chief), 0);
    const char *cases[][2] = {{"", "/job:worker/task:0"},
                              {"/gpu:1", "/job:worker/task:0/device:GPU:1"},
                              {"/task:2/cpu:0", "/job:worker/task:2/device:CPU:0"},
                              {"/job:ps", "/job:ps"},
                              {"/job:ps/gpu:0", "/job:ps/device:GPU:0"},
                              {"/job:ps/task:1", "/job:ps/task:1"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(dgc_devspec_parse(cases[i][0], &s), 0);
        dgc_devspec_complete(&s, &chief);
        char buf[128];
        dgc_devspec_str(&s, buf, sizeof buf);
        assert_string_equal(buf, cases[i][1]);
    }
}

/* Compile JSON text for `cluster_opt` (NULL: the graph's) with n GPUs per
 * task; returns the program, or NULL with *st and err set. */
static dg_program *compile_text(const char *json, const char *cluster_opt,
                                int n, dg_status *st, dg_error *err)
{
    memset(err, 0, sizeof *err);
    dg_graph *g = dg_graph_load("t.json", json, strlen(json), err);
    assert_non_null(g);
    dg_options o;
    dg_options_init(&o);
    dg_cluster *oc = cluster_opt ? parse_ok(cluster_opt) : NULL;
    o.cluster = oc;
    const dg_cluster *c = dg_graph_cluster(g, &o);
    dg_device_list *l = NULL;
    if (c) {
        l = cluster_devs(c, n);
    } else {
        assert_int_equal(dg_devices_assume(n, &l, err), DG_OK);
    }
    dg_program *p = dg_compile(g, &o, l, err);
    *st = p ? DG_OK : err->code;
    if (!p)
        dg_graph_free(g);
    dg_devices_free(l);
    dg_cluster_free(oc);
    return p;
}

static const char *device_of(const dg_program *p, const char *node)
{
    for (int i = 0; i < dg_program_node_count(p); i++) {
        dg_node_info ni;
        dg_program_node(p, i, &ni);
        if (strcmp(ni.name, node) == 0)
            return ni.device;
    }
    fail_msg("no node %s", node);
    return NULL;
}

static const char PS_GRAPH[] =
    "{\"cluster\": {\"ps\": 2, \"worker\": 2}, \"nodes\": ["
    "{\"name\": \"v0\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}},"
    "{\"name\": \"v1\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}},"
    "{\"name\": \"v2\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}},"
    "{\"name\": \"a\", \"op\": \"Mul\", \"inputs\": [\"v0\", \"v1\"], \"device\": \"/job:worker/task:1\"},"
    "{\"name\": \"b\", \"op\": \"Add\", \"inputs\": [\"a\", \"v2\"]},"
    "{\"name\": \"k\", \"op\": \"Const\", \"attrs\": {\"value\": 2.0}},"
    "{\"name\": \"c\", \"op\": \"Mul\", \"inputs\": [\"k\", \"b\"], \"device\": \"/gpu:0\"}],"
    "\"placement\": {\"rules\": [{\"match\": {\"op\": [\"Variable\"]}, "
    "\"devices\": [\"/job:ps/task:0\", \"/job:ps/task:1\"], \"strategy\": \"round_robin\"}]}}";

static void test_rules_and_chief(void **state)
{
    (void)state;
    dg_status st;
    dg_error err;
    dg_program *p = compile_text(PS_GRAPH, NULL, 1, &st, &err);
    assert_non_null(p);
    assert_string_equal(device_of(p, "v0"), "/job:ps/replica:0/task:0/device:GPU:0");
    assert_string_equal(device_of(p, "v1"), "/job:ps/replica:0/task:1/device:GPU:0");
    assert_string_equal(device_of(p, "v2"), "/job:ps/replica:0/task:0/device:GPU:0");
    assert_string_equal(device_of(p, "a"), "/job:worker/replica:0/task:1/device:GPU:0");
    assert_string_equal(device_of(p, "b"), "/job:worker/replica:0/task:0/device:GPU:0");
    assert_string_equal(device_of(p, "c"), "/job:worker/replica:0/task:0/device:GPU:0");
    assert_string_equal(device_of(p, "k"), "/job:worker/replica:0/task:0/device:GPU:0");
    /* transfers: v0 and v1 go to worker 1, a and v2 to worker 0 */
    int remote = 0;
    for (int i = 0; i < dg_program_transfer_count(p); i++) {
        dg_transfer_info t;
        dg_program_transfer(p, i, &t);
        remote += strncmp(t.src_device, t.dst_device, 28) != 0;
    }
    assert_int_equal(remote, 4);
    assert_int_equal(dg_cluster_task_count(dg_program_cluster(p)), 4);
    char *json = dg_program_render(p, "json");
    assert_non_null(strstr(json, "\"cluster\": {\"ps\": 2, \"worker\": 2}}"));
    free(json);
    dg_program_free(p);

    /* --cluster overrides: a chief job takes the unplaced nodes */
    p = compile_text(PS_GRAPH, "ps=2,chief=1,worker=2", 1, &st, &err);
    assert_non_null(p);
    assert_string_equal(device_of(p, "b"), "/job:chief/replica:0/task:0/device:GPU:0");
    assert_string_equal(device_of(p, "a"), "/job:worker/replica:0/task:1/device:GPU:0");
    dg_program_free(p);
    /* without GPUs "/gpu:0" is the chief's missing GPU:0 */
    p = compile_text(PS_GRAPH, NULL, 0, &st, &err);
    assert_null(p);
    assert_non_null(strstr(err.msg, "'c': Operation was explicitly assigned to "
                                    "/job:worker/task:0/device:GPU:0"));
    dg_program_free(p);
    /* ... and a cluster without ps task 1 fails naming the devices */
    p = compile_text(PS_GRAPH, "ps=1,worker=2", 0, &st, &err);
    assert_null(p);
    (void)p;
    assert_int_equal(st, DG_E_PLACEMENT);
    assert_non_null(strstr(err.msg, "'v1': Operation was explicitly assigned to "
                                    "/job:ps/task:1 but available devices are [ "
                                    "/job:ps/replica:0/task:0/device:CPU:0, "
                                    "/job:worker/replica:0/task:0/device:CPU:0, "
                                    "/job:worker/replica:0/task:1/device:CPU:0 ]"));
}

static void test_soft_keeps_task(void **state)
{
    (void)state;
    static const char G[] =
        "{\"cluster\": {\"ps\": 1, \"worker\": 2}, \"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Const\", \"attrs\": {\"value\": 1.0}},"
        "{\"name\": \"y\", \"op\": \"Sin\", \"inputs\": [\"x\"], \"device\": \"/job:worker/task:1/gpu:5\"},"
        "{\"name\": \"i\", \"op\": \"Variable\", \"device\": \"/job:ps/gpu:0\", "
        "\"attrs\": {\"dtype\": \"int32\", \"shape\": [], \"init\": 0}}],"
        "\"placement\": {\"allow_soft_placement\": true}}";
    dg_status st;
    dg_error err;
    dg_program *p = compile_text(G, NULL, 1, &st, &err);
    assert_non_null(p);
    assert_string_equal(device_of(p, "y"), "/job:worker/replica:0/task:1/device:GPU:0");
    assert_string_equal(device_of(p, "i"), "/job:ps/replica:0/task:0/device:CPU:0");
    dg_program_free(p);
    /* a task that does not exist is not replaced by another one */
    static const char H[] =
        "{\"cluster\": {\"worker\": 2}, \"nodes\": ["
        "{\"name\": \"y\", \"op\": \"Const\", \"device\": \"/job:worker/task:2/cpu:0\", "
        "\"attrs\": {\"value\": 1.0}}],"
        "\"placement\": {\"allow_soft_placement\": true}}";
    p = compile_text(H, NULL, 1, &st, &err);
    assert_null(p);
    assert_int_equal(st, DG_E_PLACEMENT);
    assert_non_null(strstr(err.msg, "available devices are"));
    /* nor is a colocation conflict between tasks softened */
    static const char K[] =
        "{\"cluster\": {\"worker\": 2}, \"nodes\": ["
        "{\"name\": \"x\", \"op\": \"Const\", \"attrs\": {\"value\": 1.0}},"
        "{\"name\": \"a\", \"op\": \"Sin\", \"inputs\": [\"x\"], \"device\": \"/job:worker/task:0\"},"
        "{\"name\": \"b\", \"op\": \"Cos\", \"inputs\": [\"x\"], \"device\": \"/task:1\", "
        "\"colocate_with\": [\"a\"]}], \"placement\": {\"allow_soft_placement\": true}}";
    p = compile_text(K, NULL, 1, &st, &err);
    assert_null(p);
    assert_non_null(strstr(err.msg, "incompatible tasks"));
}

static void test_devices_must_match(void **state)
{
    (void)state;
    dg_error err;
    memset(&err, 0, sizeof err);
    /* a cluster graph compiled against a plain device list */
    dg_graph *g = dg_graph_load("t.json", PS_GRAPH, strlen(PS_GRAPH), &err);
    assert_non_null(g);
    dg_device_list *l = NULL;
    assert_int_equal(dg_devices_assume(1, &l, &err), DG_OK);
    assert_null(dg_compile(g, NULL, l, &err));
    assert_int_equal(err.code, DG_E_USAGE);
    assert_non_null(strstr(err.msg, "is not one of the cluster ps=2,worker=2's tasks"));
    /* ... or another cluster's list */
    dg_cluster *other = parse_ok("ps=2,worker=1");
    dg_device_list *ol = cluster_devs(other, 0);
    assert_null(dg_compile(g, NULL, ol, &err));
    assert_non_null(strstr(err.msg, "does not cover every task"));
    dg_devices_free(ol);
    dg_cluster_free(other);
    dg_graph_free(g);
    dg_devices_free(l);
    /* a plain graph against a cluster's list */
    static const char P[] = "{\"nodes\": [{\"name\": \"x\", \"op\": \"Const\", "
                            "\"attrs\": {\"value\": 1.0}}]}";
    g = dg_graph_load("p.json", P, strlen(P), &err);
    assert_non_null(g);
    dg_cluster *c = parse_ok("worker=1");
    ol = cluster_devs(c, 0);
    assert_null(dg_compile(g, NULL, ol, &err));
    assert_non_null(strstr(err.msg, "the graph declares none"));
    dg_devices_free(ol);
    dg_cluster_free(c);
    dg_graph_free(g);
}

static void test_graph_cluster_errors(void **state)
{
    (void)state;
    const char *cases[][2] = {
        {"{\"cluster\": {\"ps\": 1, \"ps\": 2}, \"nodes\": []}", "duplicate key 'ps' in cluster"},
        {"{\"cluster\": {\"ps\": 0}, \"nodes\": []}", "got 0"},
        {"{\"cluster\": {\"ps\": 2.5}, \"nodes\": []}", "got 2.5"},
        {"{\"cluster\": {\"ps\": true}, \"nodes\": []}", "got a bool"},
        {"{\"cluster\": {\"Ps\": 1}, \"nodes\": []}", "job name 'Ps'"},
        {"{\"cluster\": {\"localhost\": 1}, \"nodes\": []}", "reserved"},
        {"{\"cluster\": {}, \"nodes\": []}", "lists no job"},
        {"{\"cluster\": [\"ps\"], \"nodes\": []}", "'cluster' must be an object"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dg_error err;
        memset(&err, 0, sizeof err);
        dg_graph *g = dg_graph_load("t.json", cases[i][0], strlen(cases[i][0]), &err);
        assert_null(g);
        assert_int_equal(err.code, DG_E_GRAPH);
        if (!strstr(err.msg, cases[i][1]))
            fail_msg("%s: '%s' lacks '%s'", cases[i][0], err.msg, cases[i][1]);
    }
    /* key order is the job order */
    static const char G[] = "{\"cluster\": {\"worker\": 2, \"ps\": 1}, \"nodes\": []}";
    dg_error err;
    dg_graph *g = dg_graph_load("t.json", G, strlen(G), &err);
    assert_non_null(g);
    const dg_cluster *c = dg_graph_cluster(g, NULL);
    assert_string_equal(dg_cluster_job_name(c, 0), "worker");
    assert_int_equal(dg_cluster_rank_of(c, "ps", 0), 2);
    dg_graph_free(g);
}

static void test_join_outside_mpi(void **state)
{
    (void)state;
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMI_SIZE");
    dg_cluster *c = parse_ok("ps=1,worker=2");
    dg_error err;
    int rank = 7;
    assert_int_equal(dg_cluster_join(c, &rank, &err), DG_E_USAGE);
    assert_int_equal(rank, -1);
    assert_non_null(strstr(err.msg, "start it with mpirun -np 3"));
    dg_cluster_free(c);
    /* a library client cannot run a cluster program as one process */
    dg_status st;
    dg_program *p = compile_text(PS_GRAPH, NULL, 1, &st, &err);
    assert_non_null(p);
    memset(&err, 0, sizeof err);
    assert_null(dg_session_new(p, NULL, &err));
    assert_int_equal(err.code, DG_E_USAGE);
    assert_non_null(strstr(err.msg, "start it with mpirun -np 4"));
    dg_program_free(p);
}

/* Parse --cluster, load, build the cluster's devices, compile, render
 * JSON and DOT; the first failing status. */
static dg_status oom_pipeline(dg_error *err)
{
    dg_cluster *c = NULL;
    dg_graph *g = NULL;
    dg_device_list *local = NULL, *all = NULL;
    dg_program *p = NULL;
    dg_options o;
    dg_options_init(&o);
    dg_status st = dg_cluster_parse("ps=2,worker=3", &c, err);
    if (!st && !(g = dg_graph_load("t.json", PS_GRAPH, strlen(PS_GRAPH), err)))
        st = err->code;
    if (!st)
        st = dg_devices_assume(1, &local, err);
    if (!st) {
        const dg_device_list *per[5] = {local, local, local, local, local};
        o.cluster = c;
        st = dg_devices_for_cluster(c, per, &all, err);
    }
    if (!st && !(p = dg_compile(g, &o, all, err)))
        st = err->code;
    if (!st) {
        g = NULL; /* owned by p */
        for (int f = 0; f < 2 && !st; f++) {
            char *t = dg_program_render(p, f ? "dot" : "json");
            st = t ? DG_OK : DG_E_NOMEM;
            free(t);
        }
    }
    dg_program_free(p);
    dg_graph_free(g);
    dg_devices_free(all);
    dg_devices_free(local);
    dg_cluster_free(c);
    return st;
}

/* Every allocation of the pipeline failing (from k on, or only the k-th)
 * gives DG_E_NOMEM, never another status or a crash (leaks: ASan). */
static void test_oom(void **state)
{
    (void)state;
    for (int once = 0; once < 2; once++) {
        dg_error err;
        memset(&err, 0, sizeof err);
        unsigned long before = dg_alloc_count();
        assert_int_equal(oom_pipeline(&err), DG_OK);
        long total = (long)(dg_alloc_count() - before), k;
        for (k = 0; k < 100000; k++) {
            memset(&err, 0, sizeof err);
            if (once)
                dg_alloc_fail_once(k);
            else
                dg_alloc_fail_after(k);
            dg_status st = oom_pipeline(&err);
            dg_alloc_fail_after(-1);
            if (st == DG_OK)
                break;
            if (st != DG_E_NOMEM)
                fail_msg("k=%ld once=%d: status %d: %s", k, once, (int)st,
                         err.msg);
        }
        assert_int_equal(k, total);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_chief),
        cmocka_unit_test(test_device_list),
        cmocka_unit_test(test_complete),
        cmocka_unit_test(test_rules_and_chief),
        cmocka_unit_test(test_soft_keeps_task),
        cmocka_unit_test(test_devices_must_match),
        cmocka_unit_test(test_graph_cluster_errors),
        cmocka_unit_test(test_join_outside_mpi),
        cmocka_unit_test(test_oom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
