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

#define N_ELEMS (1 << 18) /* 1 MiB of float32 per tensor */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33) % n;
}

/* Append printf output to a growing string. */
static void cat(char **s, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof tmp);
    if (*len + (size_t)n + 1 > *cap) {
        *cap = (*len + (size_t)n + 1) * 2;
        *s = realloc(*s, *cap);
        assert_non_null(*s);
    }
    memcpy(*s + *len, tmp, (size_t)n + 1);
    *len += (size_t)n;
}

/* A random DAG of n_ops elementwise ops over two Variables: each op reads
 * one or two of the last `window` nodes, so many nodes have several
 * consumers (fan-out) and there are many independent branches.  Every node
 * without a consumer is fetched, and a few more.  `rules`: a placement
 * rules JSON array or NULL. */
static char *random_graph(uint64_t seed, int n_ops, int window,
                          const char *rules)
{
    static const char *un[] = {"Sin", "Cos", "Tanh", "Sigmoid", "Neg", "Abs"};
    static const char *bin[] = {"Add", "Sub", "Mul", "Maximum", "Minimum"};
    rng_state = seed;
    char *s = NULL;
    size_t len = 0, cap = 0;
    int total = n_ops + 2;
    int *used = calloc((size_t)total, sizeof *used);
    cat(&s, &len, &cap, "{\"version\": 1, \"nodes\": [");
    for (int v = 0; v < 2; v++)
        cat(&s, &len, &cap,
            "{\"name\": \"n%d\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
            "\"float32\", \"shape\": [%d], \"init\": {\"random_uniform\": "
            "{\"min\": -2, \"max\": 2}}}},", v, N_ELEMS);
    for (int i = 2; i < total; i++) {
        int lo = i - window < 0 ? 0 : i - window;
        int a = lo + (int)rnd((uint32_t)(i - lo));
        if (rnd(2)) {
            int b = lo + (int)rnd((uint32_t)(i - lo));
            cat(&s, &len, &cap,
                "{\"name\": \"n%d\", \"op\": \"%s\", \"inputs\": [\"n%d\", "
                "\"n%d\"]}", i, bin[rnd(5)], a, b);
            used[b] = 1;
        } else {
            cat(&s, &len, &cap,
                "{\"name\": \"n%d\", \"op\": \"%s\", \"inputs\": [\"n%d\"]}",
                i, un[rnd(6)], a);
        }
        used[a] = 1;
        cat(&s, &len, &cap, i + 1 < total ? "," : "");
    }
    cat(&s, &len, &cap, "], \"fetch\": [");
    int first = 1;
    for (int i = 2; i < total; i++)
        if (!used[i] || i % 7 == 0) {
            cat(&s, &len, &cap, "%s\"n%d\"", first ? "" : ", ", i);
            first = 0;
        }
    cat(&s, &len, &cap, "]");
    if (rules)
        cat(&s, &len, &cap, ", \"placement\": {\"rules\": %s}", rules);
    cat(&s, &len, &cap, "}");
    free(used);
    return s;
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

typedef struct results {
    dg_fetch_result *r;
    int n;
} results;

/* Compile `text` under o and run it `runs` times, keeping the last
 * results; each run's results must equal the first run's. */
static results run_graph(const char *text, const dg_options *o,
                         const dg_device_list *dl, int runs)
{
    dg_error err;
    dg_graph *g = dg_graph_load("mq.json", text, strlen(text), &err);
    if (!g)
        fail_msg("%s", err.msg);
    dg_program *p = dg_compile(g, o, dl, &err);
    if (!p)
        fail_msg("%s", err.msg);
    dg_session *s = dg_session_new(p, o, &err);
    if (!s)
        fail_msg("%s", err.msg);
    results first = {NULL, 0};
    for (int k = 0; k < runs; k++) {
        results cur = {NULL, 0};
        if (dg_session_run(s, &cur.r, &cur.n, &err) != DG_OK)
            fail_msg("run %d: %s", k, err.msg);
        if (k == 0) {
            first = cur;
            continue;
        }
        assert_int_equal(cur.n, first.n);
        for (int i = 0; i < cur.n; i++) {
            size_t nb = (size_t)N_ELEMS * sizeof(float);
            if (memcmp(cur.r[i].value->data, first.r[i].value->data, nb))
                fail_msg("run %d: %s differs from run 0", k,
                         cur.r[i].name);
        }
        dg_fetch_results_free(cur.r, cur.n);
    }
    dg_session_free(s);
    dg_program_free(p);
    return first;
}

static void compare(const results *got, const results *want, const char *what)
{
    assert_int_equal(got->n, want->n);
    for (int i = 0; i < got->n; i++) {
        const float *a = got->r[i].value->data, *b = want->r[i].value->data;
        double worst = 0, scale = 1;
        for (int j = 0; j < N_ELEMS; j++) {
            double d = fabs((double)a[j] - (double)b[j]);
            if (!(d <= worst))
                worst = isnan(d) ? INFINITY : d;
            if (fabs((double)b[j]) > scale)
                scale = fabs((double)b[j]);
        }
        if (!(worst / scale <= 1e-4))
            fail_msg("%s: fetch %d differs from the CPU by %g (scale %g)",
                     what, i, worst, scale);
    }
}

static void set_queues(int q)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%d", q);
    setenv("DGRUN_CL_QUEUES", buf, 1);
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
        results want = run_graph(text, &o, dl, 1);
        o.device_scope = "/gpu:0";
        static const int qs[] = {1, 2, 4};
        for (int k = 0; k < 3; k++) {
            set_queues(qs[k]);
            results got = run_graph(text, &o, dl, 3);
            char what[64];
            snprintf(what, sizeof what, "graph %d, %d queue(s)", gi, qs[k]);
            compare(&got, &want, what);
            dg_fetch_results_free(got.r, got.n);
        }
        /* a reserved arena of ~48 MiB (allow_growth off): ranges go back
         * to the arena only after every queue finished with them */
        const dg_device_info *gi0 = dg_devices_get(dl, 1);
        if (gi0->mem_bytes > ((uint64_t)48 << 20)) {
            dg_options oa = o;
            oa.allow_growth = 0;
            oa.gpu_memory_fraction =
                (double)(48 << 20) / (double)gi0->mem_bytes;
            set_queues(4);
            results got = run_graph(text, &oa, dl, 3);
            compare(&got, &want, "4 queues, reserved arena");
            dg_fetch_results_free(got.r, got.n);
        }
        dg_fetch_results_free(want.r, want.n);
        free(text);
    }
    unsetenv("DGRUN_CL_QUEUES");
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
    results want = run_graph(cpu_text, &oc, dl, 1);
    static const int qs[] = {1, 2};
    for (int k = 0; k < 2; k++) {
        set_queues(qs[k]);
        results got = run_graph(text, &o, dl, 2);
        char what[64];
        snprintf(what, sizeof what, "two GPUs, %d queue(s)", qs[k]);
        compare(&got, &want, what);
        dg_fetch_results_free(got.r, got.n);
    }
    unsetenv("DGRUN_CL_QUEUES");
    dg_fetch_results_free(want.r, want.n);
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
    cat(&s, &len, &cap,
        "{\"version\": 1, \"nodes\": [{\"name\": \"x\", \"op\": \"Variable\","
        " \"attrs\": {\"dtype\": \"float32\", \"shape\": [%d], \"init\": 0.5}}",
        N_ELEMS * 4);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < K; i++) {
            if (i == 0)
                cat(&s, &len, &cap, ", {\"name\": \"%c0\", \"op\": \"Sin\", "
                    "\"inputs\": [\"x\"]}", 'a' + c);
            else
                cat(&s, &len, &cap, ", {\"name\": \"%c%d\", \"op\": \"Sin\", "
                    "\"inputs\": [\"%c%d\"]}", 'a' + c, i, 'a' + c, i - 1);
        }
    cat(&s, &len, &cap, "], \"fetch\": [\"a%d\", \"b%d\"]}", K - 1, K - 1);
    char path[] = "/tmp/dgrun_test_mq_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    set_queues(2);
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
    unsetenv("DGRUN_CL_QUEUES");

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
