/*
 * test_executor.c -- the session and executor on CPU:0: random DAGs of
 * cheap ops run with 1 and 2 inter-op threads equal a sequential reference;
 * control dependencies order Variable updates before reads; errors stop
 * the run and name the node; repeat keeps Variable state; feeds; targets.
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

#include "session.h"
#include "threadpool.h"
#include "program.h"
#include "dg_alloc.h"

/* ---- building graphs by hand (no loader, no placement: all on CPU:0) ---- */

static int32_t node(dgc_graph *g, const char *name, const char *op, int n_in,
                    const int32_t *in)
{
    dg_error err;
    int32_t id = dgc_graph_add_node(g, name, dgc_op_find(op), &err);
    assert_true(id >= 0);
    for (int i = 0; i < n_in; i++) {
        dgc_ref r = {in[i], 0};
        assert_int_equal(dgc_node_add_input(g, id, r), 0);
    }
    g->nodes[id].device_id = 0;
    return id;
}

static void infer(dgc_graph *g, int32_t id)
{
    dg_error err;
    dg_status rc = dgc_infer_node(g, id, &err);
    if (rc != DG_OK)
        fail_msg("%s", err.msg);
}

static int32_t konst(dgc_graph *g, const char *name, double v)
{
    int32_t id = node(g, name, "Const", 0, NULL);
    dg_shape s = {0, {0}};
    dg_tensor *t = dg_tensor_new(DG_F64, &s);
    *(double *)t->data = v;
    assert_int_equal(dgc_node_set_tensor(&g->nodes[id], "value", t), 0);
    infer(g, id);
    return id;
}

static int32_t variable(dgc_graph *g, const char *name, double init)
{
    int32_t id = node(g, name, "Variable", 0, NULL);
    dg_shape s = {0, {0}};
    dgc_node *n = &g->nodes[id];
    assert_int_equal(dgc_node_set_dtype(n, "dtype", DG_F64), 0);
    assert_int_equal(dgc_node_set_shape(n, "shape", &s), 0);
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = "init";
    a.kind = DGC_A_INIT;
    a.init.kind = DGC_INIT_VALUE;
    a.init.value = dg_tensor_new(DG_F64, &s);
    *(double *)a.init.value->data = init;
    assert_int_equal(dgc_node_set_attr(n, &a), 0);
    infer(g, id);
    return id;
}

static int32_t op(dgc_graph *g, const char *name, const char *opname, int n_in,
                  const int32_t *in)
{
    int32_t id = node(g, name, opname, n_in, in);
    infer(g, id);
    return id;
}

static dg_program *program(dgc_graph *g, const char *const *fetch, int n)
{
    dg_program *p = dg_calloc(1, sizeof *p);
    p->g = g;
    p->devs.n = 1;
    p->devs.devs = dg_calloc(1, sizeof(dg_device_info));
    p->devs.devs[0].type = DG_DEV_CPU;
    strcpy(p->devs.devs[0].name, "/job:localhost/replica:0/task:0/device:CPU:0");
    p->n_fetch = n;
    p->fetch = dg_calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++)
        p->fetch[i] = dg_strdup(fetch[i]);
    return p;
}

static void program_free(dg_program *p)
{
    for (int i = 0; i < p->n_fetch; i++)
        dg_free(p->fetch[i]);
    dg_free(p->fetch);
    dg_free(p->devs.devs);
    dgc_graph_free(p->g);
    dg_free(p);
}

static dg_session *session(const dg_program *p, int inter, int64_t repeat)
{
    dg_options o;
    memset(&o, 0, sizeof o);
    o.allow_soft_placement = -1;
    o.colocate = -1;
    o.steps = -1;
    o.virtual_gpus = 1;
    o.gpu_memory_fraction = 1.0;
    o.allow_growth = 1;
    o.assume_gpus = -1;
    o.inter_op_threads = inter;
    o.intra_op_threads = 1;
    o.repeat = repeat;
    dg_error err;
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fail_msg("%s", err.msg);
    return s;
}

static double scalar(const dg_fetch_result *r)
{
    assert_non_null(r->value);
    assert_int_equal(r->value->dtype, DG_F64);
    assert_int_equal(r->value->shape.rank, 0);
    return *(double *)r->value->data;
}

/* ---- random DAGs ----------------------------------------------------------- */

static void random_dag(unsigned seed, int n_nodes, int inter)
{
    srand(seed);
    dgc_graph *g = dgc_graph_new("dag.json");
    double *ref = calloc((size_t)n_nodes, sizeof *ref);
    char name[32];
    const char *fetch[64];
    char fnames[64][32];
    int n_fetch = 0;
    int n_src = 4;
    for (int i = 0; i < n_nodes; i++) {
        snprintf(name, sizeof name, "n%d", i);
        if (i < n_src) {
            ref[i] = (double)(rand() % 7) - 3.0 + 0.5;
            konst(g, name, ref[i]);
            continue;
        }
        int32_t a = rand() % i, b = rand() % i;
        int k = rand() % 4;
        int32_t in[2] = {a, b};
        int32_t id;
        switch (k) {
        case 0: id = op(g, name, "Add", 2, in); ref[i] = ref[a] + ref[b]; break;
        case 1: id = op(g, name, "Mul", 2, in);
                ref[i] = ref[a] * ref[b];
                break;
        case 2: id = op(g, name, "Sub", 2, in); ref[i] = ref[a] - ref[b]; break;
        default: id = op(g, name, "Identity", 1, in); ref[i] = ref[a]; break;
        }
        if (rand() % 3 == 0) /* a control edge from any earlier node */
            assert_int_equal(dgc_node_add_ctrl(g, id, rand() % i), 0);
        /* keep values bounded: products of big numbers overflow nothing in
         * double over 200 nodes, but keep them tame for readability */
        if (rand() % 5 == 0 && n_fetch < 64) {
            snprintf(fnames[n_fetch], 32, "%s", name);
            fetch[n_fetch] = fnames[n_fetch];
            n_fetch++;
        }
    }
    snprintf(fnames[n_fetch], 32, "n%d", n_nodes - 1);
    fetch[n_fetch] = fnames[n_fetch];
    n_fetch++;
    dg_program *p = program(g, fetch, n_fetch);
    dg_session *s = session(p, inter, 3);
    dg_fetch_result *res = NULL;
    int n_res = 0;
    dg_error err;
    dg_status rc = dg_session_run(s, &res, &n_res, &err);
    if (rc != DG_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n_res, n_fetch);
    for (int i = 0; i < n_res; i++) {
        int idx = atoi(res[i].name + 1);
        assert_string_equal(res[i].name, fetch[i]);
        double got = scalar(&res[i]);
        if (!(got == ref[idx] || (got != got && ref[idx] != ref[idx])))
            fail_msg("node %s: got %g, want %g", res[i].name, got, ref[idx]);
    }
    dg_fetch_results_free(res, n_res);
    dg_session_free(s);
    program_free(p);
    free(ref);
}

static void test_random_dags_1_thread(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 10; seed++)
        random_dag(seed, 150, 1);
}

static void test_random_dags_2_threads(void **state)
{
    (void)state;
    for (unsigned seed = 11; seed <= 30; seed++)
        random_dag(seed, 150, 2);
}

/* ---- control dependencies and Variable state ---------------------------- */

static void test_control_deps_and_repeat(void **state)
{
    (void)state;
    for (int inter = 1; inter <= 2; inter++) {
        dgc_graph *g = dgc_graph_new("ctrl.json");
        int32_t v = variable(g, "v", 10.0);
        int32_t one = konst(g, "one", 1.0);
        int32_t zero = konst(g, "zero", 0.0);
        int32_t vo[2] = {v, one};
        int32_t inc = op(g, "inc", "AssignAdd", 2, vo);
        /* read after the increment: Add(v, 0) with ^inc */
        int32_t vz[2] = {v, zero};
        int32_t r = node(g, "r", "Add", 2, vz);
        assert_int_equal(dgc_node_add_ctrl(g, r, inc), 0);
        infer(g, r);
        const char *fetch[] = {"r"};
        dg_program *p = program(g, fetch, 1);
        dg_session *s = session(p, inter, 4);
        dg_fetch_result *res;
        int n;
        dg_error err;
        assert_int_equal(dg_session_run(s, &res, &n, &err), DG_OK);
        assert_int_equal(n, 1);
        /* 4 runs: 11, 12, 13, 14 */
        assert_true(scalar(&res[0]) == 14.0);
        dg_fetch_results_free(res, n);
        /* Variable state persists across dg_session_run calls. */
        assert_int_equal(dg_session_run(s, &res, &n, &err), DG_OK);
        assert_true(scalar(&res[0]) == 18.0);
        dg_fetch_results_free(res, n);
        dg_tensor *t = NULL;
        assert_int_equal(dgr_session_read_variable((dgr_session *)(void *)s, v,
                                                   &t, &err), DG_OK);
        assert_true(*(double *)t->data == 18.0);
        dg_tensor_free(t);
        assert_true(dg_session_peak_bytes(s, 0) > 0);
        dg_session_free(s);
        program_free(p);
    }
}

static void test_targets_and_noop_fetch(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("noop.json");
    int32_t v = variable(g, "v", 0.0);
    int32_t one = konst(g, "one", 1.0);
    int32_t vo[2] = {v, one};
    int32_t inc = op(g, "inc", "AssignAdd", 2, vo);
    int32_t grp = node(g, "grp", "NoOp", 0, NULL);
    assert_int_equal(dgc_node_add_ctrl(g, grp, inc), 0);
    infer(g, grp);
    const char *fetch[] = {"grp"};
    dg_program *p = program(g, fetch, 1);
    dg_session *s = session(p, 2, 3);
    dg_fetch_result *res;
    int n;
    dg_error err;
    assert_int_equal(dg_session_run(s, &res, &n, &err), DG_OK);
    assert_int_equal(n, 1);
    assert_null(res[0].value);
    dg_fetch_results_free(res, n);
    dg_tensor *t = NULL;
    assert_int_equal(dgr_session_read_variable((dgr_session *)(void *)s, v, &t,
                                               &err), DG_OK);
    assert_true(*(double *)t->data == 3.0);
    dg_tensor_free(t);
    dg_session_free(s);
    program_free(p);
}

/* ---- errors ---------------------------------------------------------------- */

static void test_error_names_node(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("err.json");
    int32_t a = konst(g, "a", 2.0);
    int32_t ph = node(g, "ph", "Placeholder", 0, NULL);
    dg_shape s0 = {0, {0}};
    assert_int_equal(dgc_node_set_dtype(&g->nodes[ph], "dtype", DG_F64), 0);
    assert_int_equal(dgc_node_set_shape(&g->nodes[ph], "shape", &s0), 0);
    infer(g, ph);
    /* a long independent chain runs beside the failing branch */
    int32_t prev = a;
    char name[32];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "c%d", i);
        int32_t in[2] = {prev, a};
        prev = op(g, name, "Add", 2, in);
    }
    int32_t in[2] = {prev, ph};
    op(g, "sum", "Add", 2, in);
    const char *fetch[] = {"sum", "c10"};
    dg_program *p = program(g, fetch, 2);
    for (int inter = 1; inter <= 2; inter++) {
        dg_session *s = session(p, inter, 1);
        dg_fetch_result *res = NULL;
        int n = -1;
        dg_error err;
        memset(&err, 0, sizeof err);
        dg_status rc = dg_session_run(s, &res, &n, &err);
        assert_int_not_equal(rc, DG_OK);
        assert_null(res);
        assert_non_null(strstr(err.msg, "'ph'"));
        /* Feeding it makes the same session work. */
        dg_tensor *t = dg_tensor_new(DG_F64, &s0);
        *(double *)t->data = 0.25;
        assert_int_equal(dgr_session_set_feed((dgr_session *)(void *)s, ph, t,
                                              &err), DG_OK);
        /* wrong dtype is refused */
        dg_tensor *bad = dg_tensor_new(DG_F32, &s0);
        assert_int_equal(dgr_session_set_feed((dgr_session *)(void *)s, ph,
                                              bad, &err), DG_E_GRAPH);
        dg_tensor_free(bad);
        dg_tensor_free(t);
        assert_int_equal(dg_session_run(s, &res, &n, &err), DG_OK);
        assert_true(scalar(&res[0]) == 2.0 + 50 * 2.0 + 0.25);
        assert_true(scalar(&res[1]) == 2.0 + 11 * 2.0);
        dg_fetch_results_free(res, n);
        dg_session_free(s);
    }
    program_free(p);
}

static void test_bad_fetch(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("bad.json");
    konst(g, "a", 1.0);
    const char *fetch[] = {"nope"};
    dg_program *p = program(g, fetch, 1);
    dg_session *s = session(p, 1, 1);
    dg_fetch_result *res;
    int n;
    dg_error err;
    assert_int_equal(dg_session_run(s, &res, &n, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "nope"));
    dg_session_free(s);
    program_free(p);
}

/* ---- intra-op pool --------------------------------------------------------- */

static void add_range(void *arg, int64_t b, int64_t e)
{
    int *v = arg;
    for (int64_t i = b; i < e; i++)
        v[i] += 1;
}

static void test_parallel_for(void **state)
{
    (void)state;
    dg_error err;
    struct dgr_pool *pool = dgr_pool_new(3, &err);
    assert_non_null(pool);
    assert_int_equal(dgr_pool_threads(pool), 3);
    int *v = calloc(100000, sizeof *v);
    for (int rep = 0; rep < 50; rep++)
        dgr_parallel_for(pool, 100000, 100, add_range, v);
    for (int i = 0; i < 100000; i++)
        assert_int_equal(v[i], 50);
    dgr_parallel_for(NULL, 10, 1, add_range, v);
    assert_int_equal(v[9], 51);
    free(v);
    dgr_pool_free(pool);
}


/* ---- across devices (PoCL as GPU:0 when present) ---------------------- */

static int32_t konst32(dgc_graph *g, const char *name, float v, int dev)
{
    int32_t id = node(g, name, "Const", 0, NULL);
    dg_shape s = {1, {2}};
    dg_tensor *t = dg_tensor_new(DG_F32, &s);
    ((float *)t->data)[0] = v;
    ((float *)t->data)[1] = 2 * v;
    assert_int_equal(dgc_node_set_tensor(&g->nodes[id], "value", t), 0);
    g->nodes[id].device_id = dev;
    infer(g, id);
    return id;
}

static void test_cross_device_variable_read(void **state)
{
    (void)state;
    dg_options o;
    memset(&o, 0, sizeof o);
    o.opencl_devices = "all";
    o.virtual_gpus = 1;
    o.gpu_memory_fraction = 1.0;
    o.allow_growth = 1;
    o.assume_gpus = -1;
    o.repeat = 3;
    o.inter_op_threads = 2;
    o.intra_op_threads = 1;
    dg_error err;
    dg_device_list *dl = NULL;
    if (dg_devices_discover(&o, &dl, &err) != DG_OK || dg_devices_count(dl) < 2) {
        dg_devices_free(dl);
        skip();
    }
    dgc_graph *g = dgc_graph_new("xdev.json");
    int32_t v = node(g, "v", "Variable", 0, NULL);
    dg_shape s = {1, {2}};
    assert_int_equal(dgc_node_set_dtype(&g->nodes[v], "dtype", DG_F32), 0);
    assert_int_equal(dgc_node_set_shape(&g->nodes[v], "shape", &s), 0);
    infer(g, v); /* zeros */
    int32_t one = konst32(g, "one", 1.0f, 0);
    int32_t vo[2] = {v, one};
    int32_t inc = op(g, "inc", "AssignAdd", 2, vo);
    int32_t zero = konst32(g, "zero", 0.0f, 1);
    int32_t vz[2] = {v, zero};
    int32_t r = node(g, "r", "Add", 2, vz);          /* GPU, after inc */
    g->nodes[r].device_id = 1;
    assert_int_equal(dgc_node_add_ctrl(g, r, inc), 0);
    infer(g, r);
    int32_t back = op(g, "back", "Neg", 1, &r);      /* CPU again */
    (void)back;
    const char *fetch[] = {"r", "back"};
    dg_program *p = program(g, fetch, 2);
    dg_free(p->devs.devs);
    p->devs.n = dl->n;
    p->devs.devs = dg_calloc((size_t)dl->n, sizeof(dg_device_info));
    memcpy(p->devs.devs, dl->devs, sizeof(dg_device_info) * (size_t)dl->n);
    dg_session *ss = dg_session_new(p, &o, &err);
    if (!ss)
        fail_msg("%s", err.msg);
    dg_fetch_result *res;
    int n;
    if (dg_session_run(ss, &res, &n, &err) != DG_OK)
        fail_msg("%s", err.msg);
    /* three runs: v = (3, 6) read after the third increment */
    assert_true(((float *)res[0].value->data)[0] == 3.0f);
    assert_true(((float *)res[0].value->data)[1] == 6.0f);
    assert_true(((float *)res[1].value->data)[1] == -6.0f);
    dg_fetch_results_free(res, n);
    dg_session_free(ss);
    program_free(p);
    dg_devices_free(dl);
}

/* ---- tracing hooks ---------------------------------------------------------- */

static void test_trace_hooks(void **state)
{
    (void)state;
    char path[] = "/tmp/dgrun_exec_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    dgc_graph *g = dgc_graph_new("trace.json");
    int32_t a = konst(g, "a", 1.0);
    int32_t b = konst(g, "b", 2.0);
    int32_t ab[2] = {a, b};
    int32_t c = op(g, "c_add", "Add", 2, ab);
    op(g, "d_neg", "Neg", 1, &c);
    const char *fetch[] = {"d_neg"};
    dg_program *p = program(g, fetch, 1);
    dg_options o;
    memset(&o, 0, sizeof o);
    o.repeat = 2;
    o.inter_op_threads = 2;
    o.intra_op_threads = 1;
    o.trace_path = path;
    dg_error err;
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fail_msg("%s", err.msg);
    dg_fetch_result *res;
    int n;
    assert_int_equal(dg_session_run(s, &res, &n, &err), DG_OK);
    assert_true(scalar(&res[0]) == -3.0);
    dg_fetch_results_free(res, n);
    assert_int_equal(dg_session_write_trace(s, &err), DG_OK);
    char *sum = dg_session_profile_summary(s);
    assert_non_null(sum);
    free(sum);
    dg_session_free(s);
    program_free(p);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = 0;
    fclose(f);
    unlink(path);
    assert_non_null(strstr(buf, "d_neg"));
    assert_non_null(strstr(buf, "c_add"));
    assert_non_null(strstr(buf, "Memory"));
    assert_non_null(strstr(buf, "bytes_in_use"));
    /* one op event per executed op per run: 4 ops x 2 runs */
    int count = 0;
    for (const char *q = buf; (q = strstr(q, "\"c_add\"")) != NULL; q++)
        count++;
    assert_true(count >= 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_dags_1_thread),
        cmocka_unit_test(test_random_dags_2_threads),
        cmocka_unit_test(test_control_deps_and_repeat),
        cmocka_unit_test(test_targets_and_noop_fetch),
        cmocka_unit_test(test_error_names_node),
        cmocka_unit_test(test_bad_fetch),
        cmocka_unit_test(test_parallel_for),
        cmocka_unit_test(test_trace_hooks),
        cmocka_unit_test(test_cross_device_variable_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
