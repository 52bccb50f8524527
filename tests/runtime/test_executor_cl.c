/*
 * test_executor_cl.c -- the executor across OpenCL (PoCL) and CPU devices:
 * a step that depends on an OpenCL op only through a control edge starts
 * after that op has finished on the device, not when it was enqueued
 * (checked with the trace's timestamps: device profiling times for the
 * OpenCL ops, host times for CPU ops), Variable reads across devices after a
 * GPU AssignAdd see the new value on every repeat, and the CPU caching
 * allocator makes a warmed-up run allocate nothing.  Skipped without an
 * OpenCL device (the CPU allocator test always runs).
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
#include <cJSON.h>

#include "session.h"
#include "cpu_backend.h"
#include "program.h"
#include "dg_alloc.h"

/* ---- graphs by hand ------------------------------------------------------- */

static int32_t node(dgc_graph *g, const char *name, const char *op, int n_in,
                    const int32_t *in, int dev)
{
    dg_error err;
    int32_t id = dgc_graph_add_node(g, name, dgc_op_find(op), &err);
    assert_true(id >= 0);
    for (int i = 0; i < n_in; i++) {
        dgc_ref r = {in[i], 0};
        assert_int_equal(dgc_node_add_input(g, id, r), 0);
    }
    g->nodes[id].device_id = dev;
    return id;
}

static void infer(dgc_graph *g, int32_t id)
{
    dg_error err;
    if (dgc_infer_node(g, id, &err) != DG_OK)
        fail_msg("%s", err.msg);
}

static int32_t op(dgc_graph *g, const char *name, const char *opname, int n_in,
                  const int32_t *in, int dev)
{
    int32_t id = node(g, name, opname, n_in, in, dev);
    infer(g, id);
    return id;
}

static int32_t scalar_const(dgc_graph *g, const char *name, float v, int dev)
{
    int32_t id = node(g, name, "Const", 0, NULL, dev);
    dg_shape s = {0, {0}};
    dg_tensor *t = dg_tensor_new(DG_F32, &s);
    *(float *)t->data = v;
    assert_int_equal(dgc_node_set_tensor(&g->nodes[id], "value", t), 0);
    infer(g, id);
    return id;
}

static int32_t variable(dgc_graph *g, const char *name, int64_t n, int dev)
{
    int32_t id = node(g, name, "Variable", 0, NULL, dev);
    dg_shape s = {1, {n}};
    assert_int_equal(dgc_node_set_dtype(&g->nodes[id], "dtype", DG_F32), 0);
    assert_int_equal(dgc_node_set_shape(&g->nodes[id], "shape", &s), 0);
    infer(g, id); /* zeros */
    return id;
}

static void base_options(dg_options *o)
{
    memset(o, 0, sizeof *o);
    o->allow_soft_placement = -1;
    o->colocate = -1;
    o->steps = -1;
    o->virtual_gpus = 1;
    o->gpu_memory_fraction = 1.0;
    o->allow_growth = 1;
    o->assume_gpus = -1;
    o->intra_op_threads = 1;
    o->repeat = 1;
}

static dg_program *program(dgc_graph *g, const dg_device_list *dl,
                           const char *const *fetch, int n)
{
    dg_program *p = dg_calloc(1, sizeof *p);
    p->g = g;
    if (dl) {
        p->devs.n = dl->n;
        p->devs.devs = dg_calloc((size_t)dl->n, sizeof(dg_device_info));
        memcpy(p->devs.devs, dl->devs, sizeof(dg_device_info) * (size_t)dl->n);
    } else {
        p->devs.n = 1;
        p->devs.devs = dg_calloc(1, sizeof(dg_device_info));
        p->devs.devs[0].type = DG_DEV_CPU;
        strcpy(p->devs.devs[0].name,
               "/job:localhost/replica:0/task:0/device:CPU:0");
    }
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

/* Discover OpenCL devices as GPUs ("all": PoCL counts); NULL when none. */
static dg_device_list *gpus(dg_options *o)
{
    o->opencl_devices = "all";
    dg_error err;
    dg_device_list *dl = NULL;
    if (dg_devices_discover(o, &dl, &err) != DG_OK || dg_devices_count(dl) < 2) {
        dg_devices_free(dl);
        return NULL;
    }
    return dl;
}

/* ---- trace reading ---------------------------------------------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* The complete event of node `name` in step `step`: its ts and end. */
static int find_op(const cJSON *events, const char *name, int step,
                   double *ts, double *end)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        const cJSON *ph = cJSON_GetObjectItem(e, "ph");
        const cJSON *cat = cJSON_GetObjectItem(e, "cat");
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0 ||
            !cJSON_IsString(cat) || strcmp(cat->valuestring, "Op") != 0 || !args)
            continue;
        const cJSON *nm = cJSON_GetObjectItem(args, "name");
        const cJSON *st = cJSON_GetObjectItem(args, "step");
        if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name) != 0 ||
            !cJSON_IsNumber(st) || (int)st->valuedouble != step)
            continue;
        *ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        *end = *ts + cJSON_GetObjectItem(e, "dur")->valuedouble;
        return 1;
    }
    return 0;
}

/* ---- a CPU op behind a GPU op through a control edge only ----------------- */

/*
 * GPU:0 (device 1): v (Variable, N floats), a chain of K Sin ops over v
 * (tens of ms of device work on PoCL), then inc = AssignAdd(v, OnesLike(v))
 * after the chain (control edge).  On device `other` (CPU:0, or GPU:1):
 * sum = Sum(v) ^inc (v read through a transfer) and late = Neg(c) ^inc (no
 * data from GPU:0 at all).  Repeated 3 times: sum is k*N after run k, and
 * in every run `late` starts after `inc` finished on the device.  Without
 * waiting for completion, `late` starts when inc is enqueued, i.e. while the
 * Sin chain is still running.
 */
static void ctrl_edge_case(int other, int inter)
{
    dg_options o;
    base_options(&o);
    o.inter_op_threads = inter;
    o.repeat = 3;
    dg_device_list *dl = gpus(&o);
    if (!dl || dg_devices_count(dl) <= other) {
        dg_devices_free(dl);
        skip();
    }
    char path[] = "/tmp/dgrun_exec_cl_trace_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    o.trace_path = path;

    const int64_t N = 1 << 20;
    const int K = 8;
    dgc_graph *g = dgc_graph_new("ctrl_gpu.json");
    int32_t v = variable(g, "v", N, 1);
    int32_t prev = v;
    char nm[32];
    for (int i = 0; i < K; i++) {
        snprintf(nm, sizeof nm, "sin%d", i);
        prev = op(g, nm, "Sin", 1, &prev, 1);
    }
    int32_t ones = op(g, "ones", "OnesLike", 1, &v, 1);
    int32_t vo[2] = {v, ones};
    int32_t inc = node(g, "inc", "AssignAdd", 2, vo, 1);
    assert_int_equal(dgc_node_add_ctrl(g, inc, prev), 0);
    infer(g, inc);
    int32_t sum = node(g, "sum", "Sum", 1, &v, other);
    assert_int_equal(dgc_node_add_ctrl(g, sum, inc), 0);
    infer(g, sum);
    int32_t c = scalar_const(g, "c", 2.0f, other);
    int32_t late = node(g, "late", "Neg", 1, &c, other);
    assert_int_equal(dgc_node_add_ctrl(g, late, inc), 0);
    infer(g, late);

    const char *fetch[] = {"sum", "late"};
    dg_program *p = program(g, dl, fetch, 2);
    dg_error err;
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fail_msg("%s", err.msg);
    dg_fetch_result *res;
    int n;
    if (dg_session_run(s, &res, &n, &err) != DG_OK)
        fail_msg("%s", err.msg);
    assert_true(*(float *)res[0].value->data == (float)(3 * N));
    assert_true(*(float *)res[1].value->data == -2.0f);
    dg_fetch_results_free(res, n);
    assert_int_equal(dg_session_write_trace(s, &err), DG_OK);
    dg_session_free(s);
    program_free(p);
    dg_devices_free(dl);

    char *text = slurp(path);
    unlink(path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
    assert_non_null(events);
    for (int step = 0; step < 3; step++) {
        double inc_ts, inc_end, s0_ts, s0_end, late_ts, late_end;
        assert_true(find_op(events, "inc", step, &inc_ts, &inc_end));
        assert_true(find_op(events, "sin0", step, &s0_ts, &s0_end));
        assert_true(find_op(events, "late", step, &late_ts, &late_end));
        assert_true(inc_end > s0_ts);
        /* A device clock is mapped to the host clock with an offset whose
         * error (a clFinish's wake-up latency, large on a loaded machine)
         * shifts that device's events.  So allow half of the GPU work
         * before inc as tolerance: started at enqueue time, `late` would
         * start within the first few percent of that work. */
        double tol = 0.5 * (inc_end - s0_ts);
        if (tol < 1000.0)
            tol = 1000.0;
        if (late_ts + tol < inc_end)
            fail_msg("run %d: 'late' started at %.1f us, before 'inc' ended "
                     "on the device at %.1f us (GPU chain from %.1f us)", step,
                     late_ts, inc_end, s0_ts);
    }
    cJSON_Delete(root);
}

static void test_ctrl_edge_waits_for_gpu(void **state)
{
    (void)state;
    ctrl_edge_case(0, 2); /* CPU:0 after GPU:0 */
}

/* GPU:1 after GPU:0: needs two OpenCL devices (POCL_DEVICES="pthread
 * pthread"), skipped otherwise. */
static void test_ctrl_edge_between_gpus(void **state)
{
    (void)state;
    ctrl_edge_case(2, 1);
}

/* ---- CPU caching allocator --------------------------------------------------- */

/* A warmed-up run of a chain on CPU:0 allocates nothing: the outputs come
 * from the block cache; in_use goes back to the Variables' and constants'
 * bytes and the peak is unchanged by the cache. */
static void test_cpu_run_allocates_nothing(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("chain.json");
    int32_t prev = scalar_const(g, "x0", 0.0f, 0);
    int32_t one = scalar_const(g, "one", 1.0f, 0);
    char nm[32];
    for (int i = 1; i < 500; i++) {
        snprintf(nm, sizeof nm, "x%d", i);
        int32_t in[2] = {prev, one};
        prev = op(g, nm, "Add", 2, in, 0);
    }
    const char *fetch[] = {"x499"};
    dg_program *p = program(g, NULL, fetch, 1);
    dg_options o;
    base_options(&o);
    o.inter_op_threads = 1;
    o.repeat = 2;
    dg_error err;
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fail_msg("%s", err.msg);
    dg_fetch_result *res;
    int n;
    assert_int_equal(dg_session_run(s, &res, &n, &err), DG_OK); /* warm */
    assert_true(*(float *)res[0].value->data == 499.0f);
    dg_fetch_results_free(res, n);
    dgr_session *rs = (dgr_session *)(void *)s;
    int64_t peak = dg_session_peak_bytes(s, 0);
    assert_true(peak > 0);
    dgr_runner *r = dgr_runner_new(dgr_session_exec(rs), &(dgc_ref){prev, 0}, 1, NULL, 0, &err);
    assert_non_null(r);
    /* The fetched value is released by this thread at the end of each run,
     * so one block a run moves from the worker's cache to this thread's,
     * which spills to the process-wide list the worker refills from: after
     * that cycle is primed, runs allocate nothing. */
    for (int k = 0; k < 100; k++)
        assert_int_equal(dgr_runner_run(r, k, NULL, &err), DG_OK);
    unsigned long before = dg_alloc_count();
    for (int k = 0; k < 5; k++)
        assert_int_equal(dgr_runner_run(r, k, NULL, &err), DG_OK);
    unsigned long after = dg_alloc_count();
    assert_int_equal(after - before, 0);
    /* what stays in use: the two Const values, kept for later runs */
    assert_int_equal(atomic_load(&dgr_session_device(rs, 0)->in_use),
                     2 * sizeof(float));
    assert_true(dg_session_peak_bytes(s, 0) == peak);
    dgr_runner_free(r);
    dg_session_free(s);
    program_free(p);
    dgr_cpu_cache_trim();
}

/* Buffers released on one thread are reused by another; sizes round to
 * classes but in_use counts the bytes asked. */
static void test_cpu_cache_accounting(void **state)
{
    (void)state;
    dgr_device d;
    memset(&d, 0, sizeof d);
    d.be = &dgr_backend_cpu;
    strcpy(d.info.name, "/job:localhost/replica:0/task:0/device:CPU:0");
    dg_error err;
    dgr_buffer *b[64];
    for (int i = 0; i < 64; i++) {
        b[i] = dgr_buffer_new(&d, (size_t)(i * 100 + 1), 0, &err);
        assert_non_null(b[i]);
        assert_true(((uintptr_t)b[i]->host & 63) == 0);
        memset(b[i]->host, i, (size_t)(i * 100 + 1));
    }
    size_t want = 0;
    for (int i = 0; i < 64; i++)
        want += (size_t)(i * 100 + 1);
    assert_int_equal(atomic_load(&d.in_use), want);
    assert_int_equal(atomic_load(&d.peak), want);
    for (int i = 0; i < 64; i++)
        dgr_buffer_release(b[i]);
    assert_int_equal(atomic_load(&d.in_use), 0);
    /* same sizes again: served from the cache */
    unsigned long before = dg_alloc_count();
    for (int i = 0; i < 64; i++)
        b[i] = dgr_buffer_new(&d, (size_t)(i * 100 + 1), 0, &err);
    assert_int_equal(dg_alloc_count() - before, 0);
    for (int i = 0; i < 64; i++)
        dgr_buffer_release(b[i]);
    /* a large buffer beyond the classes is not cached */
    dgr_buffer *big = dgr_buffer_new(&d, (size_t)80 << 20, 0, &err);
    assert_non_null(big);
    ((char *)big->host)[((size_t)80 << 20) - 1] = 1;
    dgr_buffer_release(big);
    assert_int_equal(atomic_load(&d.in_use), 0);
    assert_int_equal(atomic_load(&d.peak), (size_t)80 << 20);
    /* the cap still applies to the bytes asked */
    d.mem_cap = 1000;
    assert_null(dgr_buffer_new(&d, 1001, 0, &err));
    assert_int_equal(err.code, DG_E_NOMEM);
    dgr_cpu_cache_trim();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_cache_accounting),
        cmocka_unit_test(test_cpu_run_allocates_nothing),
        cmocka_unit_test(test_ctrl_edge_waits_for_gpu),
        cmocka_unit_test(test_ctrl_edge_between_gpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
