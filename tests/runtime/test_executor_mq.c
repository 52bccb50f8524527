/*
 * test_executor_mq.c -- several OpenCL compute queues per device
 * (DGRUN_CL_QUEUES): random DAGs with wide fan-out over 1 MiB tensors run
 * on GPU:0 with 1, 2 and 4 queues (and split over two virtual GPUs) give
 * the CPU's results, repeatedly -- reusing a buffer before every queue that
 * used it finished, or a missing cross-queue wait, shows up as wrong
 * numbers (also carving buffers from a small reserved arena); and a trace of two independent chains shows them on two queues
 * ("OpenCL queue 0" / "OpenCL queue 1").  Skipped without OpenCL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <unistd.h>
#include <cmocka.h>
#include <cJSON.h>

#include "dgrun.h"
#include "dg_alloc.h"
#include "dag_testlib.h"

#define N_ELEMS (1 << 18) /* 1 MiB of float32 per tensor */

/* A random graph of n_ops ops over two 1 MiB Variables. */
static char *random_graph(uint64_t seed, int n_ops, int window,
                          const char *rules)
{
    dag_spec sp = {seed, n_ops, window, N_ELEMS, NULL, 0, rules};
    return dag_graph(&sp);
}

static void base_options(dg_options *o)
{
    dg_options_init(o);
    o->opencl_devices = "all";
    o->inter_op_threads = 2;
    o->intra_op_threads = 1;
    o->seed = 7;
}

/* Discovered devices, or NULL (skip) with fewer than `need` entries. */
static dg_device_list *devices(const dg_options *o, int need)
{
    dg_error err;
    dg_device_list *dl = NULL;
    if (dg_devices_discover(o, &dl, &err) != DG_OK ||
        dg_devices_count(dl) < need) {
        dg_devices_free(dl);
        return NULL;
    }
    return dl;
}

/* Each random graph on CPU:0, then on GPU:0 with 1, 2 and 4 queues. */
static void test_random_dags_one_gpu(void **state)
{
    (void)state;
    dg_options o;
    base_options(&o);
    dg_device_list *dl = devices(&o, 2);
    if (!dl)
        skip();
    for (int gi = 0; gi < 3; gi++) {
        char *text = random_graph(100 + (uint64_t)gi, 40, 3 + gi * 3, NULL);
        o.device_scope = "/cpu:0";
        dag_results want = dag_run(text, &o, dl, 1);
        o.device_scope = "/gpu:0";
        static const int qs[] = {1, 2, 4};
        for (int k = 0; k < 3; k++) {
            dag_set_queues(qs[k]);
            dag_results got = dag_run(text, &o, dl, 3);
            char what[64];
            snprintf(what, sizeof what, "graph %d, %d queue(s)", gi, qs[k]);
            dag_compare(&got, &want, what);
            dag_results_free(&got);
        }
        /* a reserved arena of ~48 MiB (allow_growth off): ranges go back
         * to the arena only after every queue finished with them */
        const dg_device_info *gi0 = dg_devices_get(dl, 1);
        if (gi0->mem_bytes > ((uint64_t)48 << 20)) {
            dg_options oa = o;
            oa.allow_growth = 0;
            oa.gpu_memory_fraction =
                (double)(48 << 20) / (double)gi0->mem_bytes;
            dag_set_queues(4);
            dag_results got = dag_run(text, &oa, dl, 3);
            dag_compare(&got, &want, "4 queues, reserved arena");
            dag_results_free(&got);
        }
        dag_results_free(&want);
        free(text);
    }
    dag_set_queues(0);
    dg_devices_free(dl);
}

/* Ops dealt round-robin over two virtual GPUs (transfers between them and
 * cross-device waits), 1 and 2 queues each. */
static void test_random_dags_two_gpus(void **state)
{
    (void)state;
    dg_options o;
    base_options(&o);
    o.virtual_gpus = 2;
    dg_device_list *dl = devices(&o, 3);
    if (!dl)
        skip();
    const char *rr = "[{\"devices\": [\"/gpu:0\", \"/gpu:1\"], "
                     "\"strategy\": \"round_robin\"}]";
    char *text = random_graph(7, 30, 5, rr);
    dg_options oc = o;
    oc.device_scope = "/cpu:0";
    oc.placement_file = NULL;
    char *cpu_text = random_graph(7, 30, 5, NULL);
    dag_results want = dag_run(cpu_text, &oc, dl, 1);
    static const int qs[] = {1, 2};
    for (int k = 0; k < 2; k++) {
        dag_set_queues(qs[k]);
        dag_results got = dag_run(text, &o, dl, 2);
        char what[64];
        snprintf(what, sizeof what, "two GPUs, %d queue(s)", qs[k]);
        dag_compare(&got, &want, what);
        dag_results_free(&got);
    }
    dag_set_queues(0);
    dag_results_free(&want);
    free(text);
    free(cpu_text);
    dg_devices_free(dl);
}

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

/* Two independent chains of K ops from one Variable: with 2 queues their
 * ops are on two lanes of GPU:0, named "OpenCL queue 0" and "OpenCL queue
 * 1"; prints how much their device intervals overlapped. */
static void test_trace_two_queues(void **state)
{
    (void)state;
    dg_options o;
    base_options(&o);
    dg_device_list *dl = devices(&o, 2);
    if (!dl)
        skip();
    enum { K = 6 };
    char *s = NULL;
    size_t len = 0, cap = 0;
    dag_cat(&s, &len, &cap,
        "{\"version\": 1, \"nodes\": [{\"name\": \"x\", \"op\": \"Variable\","
        " \"attrs\": {\"dtype\": \"float32\", \"shape\": [%d], \"init\": 0.5}}",
        N_ELEMS * 4);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < K; i++) {
            if (i == 0)
                dag_cat(&s, &len, &cap, ", {\"name\": \"%c0\", \"op\": \"Sin\", "
                    "\"inputs\": [\"x\"]}", 'a' + c);
            else
                dag_cat(&s, &len, &cap, ", {\"name\": \"%c%d\", \"op\": \"Sin\", "
                    "\"inputs\": [\"%c%d\"]}", 'a' + c, i, 'a' + c, i - 1);
        }
    dag_cat(&s, &len, &cap, "], \"fetch\": [\"a%d\", \"b%d\"]}", K - 1, K - 1);
    char path[] = "/tmp/dgrun_test_mq_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    dag_set_queues(2);
    o.device_scope = "/gpu:0";
    o.trace_path = path;
    o.repeat = 3;
    dg_error err;
    dg_graph *g = dg_graph_load("mq.json", s, strlen(s), &err);
    assert_non_null(g);
    dg_program *p = dg_compile(g, &o, dl, &err);
    assert_non_null(p);
    dg_session *ss = dg_session_new(p, &o, &err);
    if (!ss)
        fail_msg("%s", err.msg);
    dg_fetch_result *r = NULL;
    int n = 0;
    assert_int_equal(dg_session_run(ss, &r, &n, &err), DG_OK);
    dg_fetch_results_free(r, n);
    assert_int_equal(dg_session_write_trace(ss, &err), DG_OK);
    dg_session_free(ss);
    dg_program_free(p);
    dag_set_queues(0);

    char *txt = slurp(path);
    unlink(path);
    cJSON *root = cJSON_Parse(txt);
    assert_non_null(root);
    const cJSON *ev = cJSON_GetObjectItem(root, "traceEvents"), *e;
    /* lanes of the chains' ops, last step; lane names of GPU:0 (pid of
     * the "a0" event) */
    int tid[2] = {-1, -1}, pid = -1, mixed = 0;
    double lo[2] = {1e300, 1e300}, hi[2] = {0, 0};
    cJSON_ArrayForEach(e, ev) {
        const cJSON *ph = cJSON_GetObjectItem(e, "ph");
        const cJSON *args = cJSON_GetObjectItem(e, "args");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") || !args)
            continue;
        const cJSON *nm = cJSON_GetObjectItem(args, "name");
        const cJSON *st = cJSON_GetObjectItem(args, "step");
        if (!cJSON_IsString(nm) || !cJSON_IsNumber(st) ||
            (nm->valuestring[0] != 'a' && nm->valuestring[0] != 'b') ||
            strlen(nm->valuestring) > 3 || (int)st->valuedouble != 2)
            continue;
        int c = nm->valuestring[0] - 'a';
        int t = cJSON_GetObjectItem(e, "tid")->valueint;
        pid = cJSON_GetObjectItem(e, "pid")->valueint;
        if (tid[c] < 0)
            tid[c] = t;
        else if (tid[c] != t)
            mixed = 1;
        double ts = cJSON_GetObjectItem(e, "ts")->valuedouble;
        double end = ts + cJSON_GetObjectItem(e, "dur")->valuedouble;
        if (ts < lo[c])
            lo[c] = ts;
        if (end > hi[c])
            hi[c] = end;
    }
    assert_false(mixed);              /* a chain stays on one queue */
    assert_true(tid[0] >= 0 && tid[1] >= 0);
    assert_int_not_equal(tid[0], tid[1]); /* branches on two queues */
    int named = 0;
    cJSON_ArrayForEach(e, ev) {
        const cJSON *ph = cJSON_GetObjectItem(e, "ph");
        const cJSON *nm = cJSON_GetObjectItem(e, "name");
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "M") ||
            !cJSON_IsString(nm) || strcmp(nm->valuestring, "thread_name") ||
            cJSON_GetObjectItem(e, "pid")->valueint != pid)
            continue;
        const char *ln = cJSON_GetObjectItem(
            cJSON_GetObjectItem(e, "args"), "name")->valuestring;
        int t = cJSON_GetObjectItem(e, "tid")->valueint;
        for (int c = 0; c < 2; c++)
            if (t == tid[c] && strncmp(ln, "OpenCL queue ", 13) == 0)
                named++;
    }
    assert_int_equal(named, 2);
    double ov = (hi[0] < hi[1] ? hi[0] : hi[1]) -
                (lo[0] > lo[1] ? lo[0] : lo[1]);
    fprintf(stderr, "chains: a %.0f..%.0f us, b %.0f..%.0f us, overlap %.0f "
            "us\n", lo[0], hi[0], lo[1], hi[1], ov > 0 ? ov : 0);
    cJSON_Delete(root);
    free(txt);
    free(s);
    dg_devices_free(dl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_dags_one_gpu),
        cmocka_unit_test(test_random_dags_two_gpus),
        cmocka_unit_test(test_trace_two_queues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
