/*
 * test_trace.c -- unit tests of the Chrome trace recorder (runtime/trace*.c)
 * through its API directly: traces for CPU-only, OpenCL-like and mixed
 * device lists, concurrent recording, JSON escaping, overlap trimming,
 * atomic writes that fail cleanly, the profile summary; every written trace
 * is validated with tools/check_trace.py, and the checker itself is shown
 * to reject broken traces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dg_alloc.h"
#include "dg_util.h"
#include "dgrun.h"
#include "trace.h"

#define MS 1000000ull /* ns */

static char tmpdir[256];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dgrun_test_trace.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

static const char *python(void)
{
    return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3"
                                                 : "python3";
}

/* Run the checker on path with extra args; returns its exit status. */
static int run_checker(const char *path, const char *extra)
{
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s '%s/tools/check_trace.py' '%s' %s", python(),
             root ? root : ".", path, extra ? extra : "");
    int rc = system(cmd);
    if (rc == -1 || !WIFEXITED(rc))
        return -1;
    return WEXITSTATUS(rc);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = '\0';
    fclose(f);
    return s;
}

static int count_str(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static dg_device_list *devices(int gpus)
{
    dg_device_list *l = NULL;
    dg_error err;
    assert_int_equal(dg_devices_assume(gpus, &l, &err), DG_OK);
    return l;
}

static void write_ok(dgr_trace *t, const char *path)
{
    dg_error err;
    dg_status st = dgr_trace_write(t, path, &err);
    if (st != DG_OK)
        fail_msg("write failed: %s", err.msg);
}

/* ---- CPU only --------------------------------------------------------- */

static void test_cpu_only(void **state)
{
    (void)state;
    dg_device_list *l = devices(0);
    dgr_trace *t = dgr_trace_new(l, "graphs/x.json");
    assert_non_null(t);
    uint64_t o = 1000 * MS;
    dgr_trace_set_origin(t, o);
    static const char *const in_c[] = {"a", "b:1"};
    dgr_trace_op(t, 0, 0, "a", "Const", 0, o + 1 * MS, o + 2 * MS, NULL, 0, 0);
    dgr_trace_op(t, 0, 1, "b", "Sin", 0, o + 1 * MS, o + 3 * MS, NULL, 0, 0);
    dgr_trace_op(t, 0, 0, "c", "Add", 0, o + 3 * MS, o + 4 * MS, in_c, 2, 0);
    /* before the origin: clamps to 0 */
    dgr_trace_op(t, 0, 2, "early", "NoOp", 0, o - 5 * MS, o - 4 * MS, NULL, 0, 0);
    dgr_trace_memory(t, 0, o + 2 * MS, 4096);
    dgr_trace_lane_name(t, 0, 1, "worker one");
    char path[300];
    path_in(path, sizeof path, "cpu.json");
    write_ok(t, path);
    assert_int_equal(run_checker(path, "--expect-devices 1 --expect-ops 4"), 0);
    char *s = slurp(path);
    assert_non_null(s);
    assert_non_null(strstr(s, "\"displayTimeUnit\":\"ns\""));
    assert_non_null(strstr(s, "\"dgrun_version\":\"" DG_VERSION_STRING "\""));
    assert_non_null(strstr(s, "\"graph\":\"graphs/x.json\""));
    assert_non_null(strstr(s, "\"name\":\"inter-op 0\""));
    assert_non_null(strstr(s, "\"name\":\"worker one\""));
    assert_non_null(strstr(s, "\"input0\":\"a\",\"input1\":\"b:1\""));
    assert_non_null(strstr(s, "\"ts\":1000.000,\"dur\":1000.000"));
    assert_non_null(strstr(s, "\"ts\":0.000,\"dur\":0.000"));
    assert_non_null(strstr(s, "\"bytes_in_use\":4096"));
    assert_int_equal(count_str(s, "\"ph\":\"X\""), 4);
    /* metadata first */
    assert_true(strstr(s, "\"ph\":\"M\"") < strstr(s, "\"ph\":\"X\""));
    free(s);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* ---- OpenCL-like: skewed queue timestamps, transfers, flows ----------- */

static void test_opencl_like(void **state)
{
    (void)state;
    dg_device_list *l = devices(1);
    dgr_trace *t = dgr_trace_new(l, "g.json");
    uint64_t o = 50 * MS;
    dgr_trace_set_origin(t, o);
    static const char *const in_a[] = {"a"};
    dgr_trace_op(t, 0, 0, "a", "Variable", 0, o + 0, o + MS / 10, NULL, 0, 1);
    dgr_trace_memcpy(t, 0, 1, "a", 4, 0, o + MS / 5, o + MS / 2, 2);
    /* partially overlapping kernels on one queue (mapped clock skew) */
    dgr_trace_op(t, 1, 0, "b", "Sin", 0, o + 1 * MS, o + 3 * MS, in_a, 1, 3);
    dgr_trace_op(t, 1, 0, "b2", "Cos", 0, o + 2 * MS, o + 4 * MS, NULL, 0, 4);
    dgr_trace_op(t, 1, 0, "b3", "Exp", 0, o + 2 * MS + 1, o + 5 * MS, NULL, 0, 5);
    dgr_trace_memcpy(t, 1, 0, "b3", 4, 0, o + 5 * MS, o + 6 * MS, 6);
    dgr_trace_op(t, 0, 0, "c", "Cos", 0, o + 6 * MS, o + 7 * MS, NULL, 0, 7);
    /* flows name their slices by key: Variable -> copy -> kernel, and
     * kernel -> copy back */
    dgr_trace_flow(t, 1, 2, "a");
    dgr_trace_flow(t, 2, 3, "a");
    dgr_trace_flow(t, 5, 6, "b3");
    dgr_trace_memory(t, 1, o + MS, 1 << 20);
    dgr_trace_memory(t, 1, o + 5 * MS, 0);
    char path[300];
    path_in(path, sizeof path, "ocl.json");
    write_ok(t, path);
    assert_int_equal(run_checker(path, "--expect-devices 2 --expect-ops 5 "
                                       "--expect-memcpy 2 --expect-flows 3"),
                     0);
    char *s = slurp(path);
    assert_non_null(strstr(s, "\"name\":\"MemcpyHtoD\""));
    assert_non_null(strstr(s, "\"name\":\"MemcpyDtoH\""));
    assert_non_null(strstr(s, "\"name\":\"OpenCL queue 0\""));
    assert_non_null(strstr(s, "\"name\":\"copy\""));
    /* lanes: tid (device + 1) * 10000 + lane, never a pid */
    assert_non_null(strstr(s, "\"pid\":2,\"tid\":21000"));
    assert_null(strstr(s, "\"tid\":0,"));
    /* flow ends in the middle of their slices before any other begins */
    assert_non_null(strstr(s, "\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":"
                              "\"a\",\"id\":1,\"pid\":1,\"tid\":10000,"
                              "\"ts\":50.000}"));
    assert_non_null(strstr(s, "\"ph\":\"f\",\"cat\":\"DataFlow\",\"name\":"
                              "\"a\",\"id\":1,\"pid\":2,\"tid\":21000,"
                              "\"ts\":350.000,\"bp\":\"e\"}"));
    assert_non_null(strstr(s, "\"name\":\"a\",\"id\":2,\"pid\":2,"
                              "\"tid\":20000,\"ts\":1500.000,\"bp\":\"e\"}"));
    assert_non_null(strstr(s, "\"name\":\"b3\",\"id\":3,\"pid\":2,"
                              "\"tid\":20000,\"ts\":3500.000}"));
    assert_null(strstr(s, "\"ph\":\"t\""));
    /* b trimmed to b2's start, b2 to b3's start */
    assert_non_null(strstr(s, "\"ts\":1000.000,\"dur\":1000.000"));
    assert_non_null(strstr(s, "\"ts\":2000.000,\"dur\":0.001"));
    assert_non_null(strstr(s, "\"src_device\":\"/job:localhost/replica:0/"
                              "task:0/device:CPU:0\""));
    free(s);
    /* writing twice gives the same, valid file */
    write_ok(t, path);
    assert_int_equal(run_checker(path, "--expect-ops 5"), 0);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* ---- mixed: CPU + 2 GPUs, device-to-device ---------------------------- */

static void test_mixed(void **state)
{
    (void)state;
    dg_device_list *l = devices(2);
    dgr_trace *t = dgr_trace_new(l, "mixed.json");
    uint64_t o = 7 * MS;
    dgr_trace_set_origin(t, o);
    for (int step = 0; step < 3; step++) {
        uint64_t b = o + (uint64_t)step * 10 * MS;
        static const char *const in_x[] = {"x"}, *const in_y[] = {"y:0"};
        uint32_t k = dgr_trace_keys(t, 5);
        dgr_trace_op(t, 0, step % 2, "x", "Const", step, b, b + MS, NULL, 0, k);
        dgr_trace_memcpy(t, 0, 1, "x", 16, step, b + MS, b + 2 * MS, k + 1);
        dgr_trace_op(t, 1, 0, "y", "Square", step, b + 2 * MS, b + 3 * MS,
                     in_x, 1, k + 2);
        dgr_trace_memcpy(t, 1, 2, "y", 16, step, b + 3 * MS, b + 4 * MS, k + 3);
        dgr_trace_op(t, 2, 1, "z", "Neg", step, b + 4 * MS, b + 5 * MS, in_y,
                     1, k + 4);
        for (uint32_t j = 0; j < 4; j++)
            dgr_trace_flow(t, k + j, k + j + 1, j < 2 ? "x" : "y");
        dgr_trace_memory(t, 2, b + 4 * MS, 64);
    }
    char path[300];
    path_in(path, sizeof path, "mixed.json");
    write_ok(t, path);
    assert_int_equal(run_checker(path, "--expect-devices 3 --expect-ops 9 "
                                       "--expect-memcpy 6 --expect-flows 12"),
                     0);
    char *s = slurp(path);
    assert_int_equal(count_str(s, "\"name\":\"MemcpyDtoD\""), 3);
    assert_non_null(strstr(s, "\"pid\":3,\"args\":{\"name\":\"/job:localhost/"
                              "replica:0/task:0/device:GPU:1\"}"));
    assert_non_null(strstr(s, "\"name\":\"process_sort_index\",\"pid\":1,"
                              "\"args\":{\"sort_index\":0}"));
    free(s);

    char *sum = dgr_trace_summary(t);
    assert_non_null(sum);
    assert_non_null(strstr(sum, "/job:localhost/replica:0/task:0/device:GPU:1"));
    assert_non_null(strstr(sum, "CPU:0 -> GPU:0"));
    assert_non_null(strstr(sum, "GPU:0 -> GPU:1"));
    assert_non_null(strstr(sum, "Profile: 9 ops, 3 steps"));
    free(sum);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* ---- flows bind to their slices by key; impossible arrows are left out */

static void test_flow_binding(void **state)
{
    (void)state;
    dg_device_list *l = devices(1);
    dgr_trace *t = dgr_trace_new(l, "f.json");
    dgr_trace_set_origin(t, 0);
    static const char *const in_p[] = {"p"}, *const in_r[] = {"r"},
                             *const in_o[] = {"outer"};
    /* the consumer binds by key, not by time: q also ran on the queue */
    dgr_trace_op(t, 1, 0, "q", "Sin", 0, 5 * MS, 6 * MS, NULL, 0, 1);
    dgr_trace_op(t, 1, 0, "p", "Cos", 0, 10 * MS, 11 * MS, NULL, 0, 2);
    dgr_trace_op(t, 0, 0, "cons", "Neg", 0, 12 * MS, 13 * MS, in_p, 1, 3);
    dgr_trace_op(t, 0, 0, "other", "Neg", 0, 13 * MS, 14 * MS, NULL, 0, 4);
    dgr_trace_flow(t, 2, 3, "p:0");
    /* consumer slice entirely before the producer's: no arrow */
    dgr_trace_op(t, 1, 1, "r", "Exp", 0, 20 * MS, 21 * MS, NULL, 0, 5);
    dgr_trace_op(t, 0, 1, "early", "Abs", 0, 15 * MS, 16 * MS, in_r, 1, 6);
    dgr_trace_flow(t, 5, 6, "r");
    /* consumer starts before the producer ends: still an arrow */
    dgr_trace_op(t, 0, 2, "late", "Abs", 0, 20 * MS + 500, 30 * MS, in_r, 1, 7);
    dgr_trace_flow(t, 5, 7, "r");
    /* a slice with a child: the point lies before the child begins */
    dgr_trace_op(t, 0, 0, "outer", "Neg", 0, 40 * MS, 50 * MS, NULL, 0, 8);
    dgr_trace_op(t, 0, 0, "inner", "Neg", 0, 41 * MS, 42 * MS, NULL, 0, 9);
    dgr_trace_op(t, 1, 0, "use", "Neg", 0, 60 * MS, 61 * MS, in_o, 1, 10);
    dgr_trace_flow(t, 8, 10, "outer");
    /* a read that waited for its kernel starts when the kernel ends */
    dgr_trace_op(t, 1, 0, "k", "Exp", 0, 70 * MS, 75 * MS, NULL, 0, 11);
    dgr_trace_memcpy(t, 1, 0, "k", 4, 0, 72 * MS, 80 * MS, 12);
    dgr_trace_flow(t, 11, 12, "k");
    /* a consumer slice starting before its producer's: no arrow */
    dgr_trace_op(t, 1, 2, "host", "Identity", 0, 69 * MS, 90 * MS, in_r, 1, 13);
    dgr_trace_flow(t, 11, 13, "k");
    /* a slice never recorded (key 99), and one lane: no arrow */
    dgr_trace_flow(t, 99, 10, "outer");
    dgr_trace_flow(t, 3, 4, "cons");
    char path[300];
    path_in(path, sizeof path, "flows.json");
    write_ok(t, path);
    assert_int_equal(run_checker(path, "--expect-flows 4"), 0);
    char *s = slurp(path);
    assert_non_null(strstr(s, "\"ts\":75000.000,\"dur\":5000.000,\"args\":"
                              "{\"bytes\":4"));
    assert_non_null(strstr(s, "\"name\":\"p:0\",\"id\":1,\"pid\":2,"
                              "\"tid\":20000,\"ts\":10500.000}"));
    assert_non_null(strstr(s, "\"name\":\"p:0\",\"id\":1,\"pid\":1,"
                              "\"tid\":10000,\"ts\":12500.000,\"bp\":\"e\"}"));
    assert_non_null(strstr(s, "\"flows_left_out\":3"));
    assert_non_null(strstr(s, "\"name\":\"r\",\"id\":2,\"pid\":2,"
                              "\"tid\":20001,\"ts\":20500.000}"));
    assert_non_null(strstr(s, "\"name\":\"r\",\"id\":2,\"pid\":1,"
                              "\"tid\":10002,\"ts\":25000.250,\"bp\":\"e\"}"));
    assert_non_null(strstr(s, "\"name\":\"outer\",\"id\":3,\"pid\":1,"
                              "\"tid\":10000,\"ts\":40500.000}"));
    free(s);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* ---- concurrency --------------------------------------------------------- */

#define THREADS 4
#define PER_THREAD 5000

typedef struct worker_arg {
    dgr_trace *t;
    int lane;
} worker_arg;

static void *worker(void *p)
{
    worker_arg *a = p;
    uint64_t base = 1000 * MS;
    for (int i = 0; i < PER_THREAD; i++) {
        uint64_t s = base + (uint64_t)i * 1000;
        dgr_trace_op(a->t, 0, a->lane, "n", "Add", i, s, s + 900, NULL, 0, 0);
        if (i % 100 == 0)
            dgr_trace_memory(a->t, 0, s, (uint64_t)i);
    }
    return NULL;
}

static void test_concurrent(void **state)
{
    (void)state;
    dg_device_list *l = devices(0);
    dgr_trace *t = dgr_trace_new(l, "c.json");
    dgr_trace_set_origin(t, 1000 * MS);
    pthread_t th[THREADS];
    worker_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i].t = t;
        args[i].lane = i;
        assert_int_equal(pthread_create(&th[i], NULL, worker, &args[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    char path[300];
    path_in(path, sizeof path, "conc.json");
    write_ok(t, path);
    char expect[64];
    snprintf(expect, sizeof expect, "--expect-ops %d", THREADS * PER_THREAD);
    assert_int_equal(run_checker(path, expect), 0);
    char *sum = dgr_trace_summary(t);
    assert_non_null(sum);
    snprintf(expect, sizeof expect, "Profile: %d ops", THREADS * PER_THREAD);
    assert_non_null(strstr(sum, expect));
    free(sum);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* Two traces recorded alternately from one thread keep their events apart. */
static void test_two_traces_one_thread(void **state)
{
    (void)state;
    dg_device_list *l = devices(0);
    dgr_trace *a = dgr_trace_new(l, "a.json");
    dgr_trace *b = dgr_trace_new(l, "b.json");
    for (int i = 0; i < 10; i++) {
        uint64_t s = dg_now_ns();
        dgr_trace_op(a, 0, 0, "x", "Neg", i, s, s + 1, NULL, 0, 0);
        if (i % 2)
            dgr_trace_op(b, 0, 0, "y", "Abs", i, s, s + 1, NULL, 0, 0);
    }
    char *sa = dgr_trace_summary(a), *sb = dgr_trace_summary(b);
    assert_non_null(strstr(sa, "Profile: 10 ops"));
    assert_non_null(strstr(sb, "Profile: 5 ops"));
    free(sa);
    free(sb);
    dgr_trace_free(a);
    dgr_trace_free(b);
    /* a new trace may reuse the address: the thread cache must not */
    dgr_trace *c = dgr_trace_new(l, "c.json");
    dgr_trace_op(c, 0, 0, "z", "Neg", 0, 1, 2, NULL, 0, 0);
    char *sc = dgr_trace_summary(c);
    assert_non_null(strstr(sc, "Profile: 1 ops"));
    free(sc);
    dgr_trace_free(c);
    dg_devices_free(l);
}

/* ---- escaping ------------------------------------------------------------ */

static void test_escaping(void **state)
{
    (void)state;
    dg_device_list *l = devices(1);
    dgr_trace *t = dgr_trace_new(l, "dir with \"quotes\"\\and\ttab.json");
    static const char *const odd_in[] = {"q\"uote", "back\\slash", "\x01"};
    uint64_t o = dg_now_ns();
    dgr_trace_set_origin(t, o);
    dgr_trace_op(t, 0, 0, "a\"b\\c\nd\x7f", "Op\"Type", 0, o + 10, o + 20,
                 odd_in, 3, 1);
    dgr_trace_op(t, 0, 0, "caf\xc3\xa9/\xe2\x82\xac", "Sin", 0, o + 30, o + 40,
                 NULL, 0, 0);
    dgr_trace_op(t, 0, 0, "bad\xff\xfe utf8", "Cos", 0, o + 50, o + 60, NULL,
                 0, 0);
    dgr_trace_memcpy(t, 0, 1, "a\"b\\c\nd\x7f:1", 8, 0, o + 70, o + 80, 2);
    dgr_trace_flow(t, 1, 2, "a\"b\\c\nd\x7f:1");
    dgr_trace_lane_name(t, 0, 0, "lane \"zero\"\n");
    char path[300];
    path_in(path, sizeof path, "esc.json");
    write_ok(t, path);
    assert_int_equal(run_checker(path, "--expect-ops 3 --expect-flows 1"), 0);
    char *s = slurp(path);
    assert_non_null(strstr(s, "\"name\":\"a\\\"b\\\\c\\nd\\u007f\""));
    assert_non_null(strstr(s, "\"input2\":\"\\u0001\""));
    assert_non_null(strstr(s, "caf\xc3\xa9/\xe2\x82\xac"));
    assert_non_null(strstr(s, "bad\\ufffd\\ufffd utf8"));
    assert_non_null(strstr(s, "\"tensor\":\"a\\\"b\\\\c\\nd\\u007f:1\""));
    assert_non_null(strstr(s, "\"graph\":\"dir with \\\"quotes\\\"\\\\and\\ttab.json\""));
    assert_non_null(strstr(s, "\"name\":\"lane \\\"zero\\\"\\n\""));
    free(s);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* ---- write failures leave nothing behind -------------------------------- */

static void test_write_failures(void **state)
{
    (void)state;
    dg_device_list *l = devices(0);
    dgr_trace *t = dgr_trace_new(l, "g.json");
    dgr_trace_op(t, 0, 0, "a", "Neg", 0, dg_now_ns(), dg_now_ns() + 5, NULL, 0, 0);
    dg_error err;
    char path[600], sub[300];

    /* missing directory */
    path_in(path, sizeof path, "no/such/dir/t.json");
    assert_int_equal(dgr_trace_write(t, path, &err), DG_E_IO);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(access(path, F_OK), -1);

    /* destination is a directory: the temporary is created, the rename
     * fails, and the temporary must be gone */
    path_in(sub, sizeof sub, "wf");
    assert_int_equal(mkdir(sub, 0755), 0);
    snprintf(path, sizeof path, "%s/out.json", sub);
    assert_int_equal(mkdir(path, 0755), 0);
    assert_int_equal(dgr_trace_write(t, path, &err), DG_E_IO);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(dir_entries(sub), 1);
    assert_int_equal(rmdir(path), 0);

    /* read-only directory (meaningless as root, which bypasses modes) */
    if (geteuid() != 0) {
        assert_int_equal(chmod(sub, 0555), 0);
        assert_int_equal(dgr_trace_write(t, path, &err), DG_E_IO);
        assert_int_equal(dir_entries(sub), 0);
        assert_int_equal(chmod(sub, 0755), 0);
    }

    /* a parent that is a file */
    snprintf(path, sizeof path, "%s/file", sub);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/file/t.json", sub);
    assert_int_equal(dgr_trace_write(t, path, &err), DG_E_IO);

    /* out of memory while preparing: no file either */
    snprintf(path, sizeof path, "%s/oom.json", sub);
    dg_alloc_fail_after(0);
    dg_status st = dgr_trace_write(t, path, &err);
    dg_alloc_fail_after(-1);
    assert_int_equal(st, DG_E_NOMEM);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(dir_entries(sub), 1);

    /* an existing file is replaced atomically by a good write */
    snprintf(path, sizeof path, "%s/file", sub);
    write_ok(t, path);
    assert_int_equal(run_checker(path, "--expect-ops 1"), 0);
    assert_int_equal(dir_entries(sub), 1);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* Recording survives allocation failure: events are dropped, not crashed. */
static void test_record_nomem(void **state)
{
    (void)state;
    dg_device_list *l = devices(0);
    dgr_trace *t = dgr_trace_new(l, "g.json");
    dgr_trace_op(t, 0, 0, "a", "Neg", 0, 10, 20, NULL, 0, 0);
    dg_alloc_fail_after(0);
    for (int i = 0; i < 3000; i++) /* crosses chunk boundaries */
        dgr_trace_op(t, 0, 0, "b", "Neg", 0, 30 + i, 31 + i, NULL, 0, 0);
    dg_alloc_fail_after(-1);
    char *s = dgr_trace_summary(t);
    assert_non_null(s);
    assert_non_null(strstr(s, "not recorded"));
    free(s);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* ---- summary numbers ---------------------------------------------------- */

static void test_summary(void **state)
{
    (void)state;
    dg_device_list *l = devices(1);
    dgr_trace *t = dgr_trace_new(l, "s.json");
    uint64_t o = 0;
    dgr_trace_set_origin(t, 0);
    /* CPU: two lanes overlapping [0,10] and [5,15] ms -> busy 15 ms */
    dgr_trace_op(t, 0, 0, "big", "MatMul", 0, o, o + 10 * MS, NULL, 0, 0);
    dgr_trace_op(t, 0, 1, "small", "Add", 0, o + 5 * MS, o + 15 * MS, NULL, 0, 0);
    dgr_trace_op(t, 0, 0, "big", "MatMul", 1, o + 20 * MS, o + 30 * MS, NULL, 0, 0);
    /* GPU: 5 ms busy of a 40 ms run */
    dgr_trace_op(t, 1, 0, "g", "Sin", 0, o + 30 * MS, o + 35 * MS, NULL, 0, 0);
    dgr_trace_memcpy(t, 0, 1, "big", 1000, 0, o + 35 * MS, o + 40 * MS, 0);
    for (int i = 0; i < 12; i++)
        dgr_trace_op(t, 0, 2, "tiny", "Neg", i, o + 40 * MS, o + 40 * MS, NULL,
                     0, 0);
    char *s = dgr_trace_summary(t);
    assert_non_null(s);
    assert_non_null(strstr(s, "Profile: 16 ops, 12 steps, wall time 40.000 ms"));
    assert_non_null(strstr(s, "25.000")); /* CPU busy: 15 + 10 */
    assert_non_null(strstr(s, "62.5%"));
    assert_non_null(strstr(s, "12.5%"));   /* GPU 5 / 40 */
    assert_non_null(strstr(s, "CPU:0 -> GPU:0"));
    assert_non_null(strstr(s, "1000"));
    /* top nodes: big (20 ms, 2 calls) before small (10 ms) */
    char *big = strstr(s, "  big "), *small = strstr(s, "  small ");
    assert_non_null(big);
    assert_non_null(small);
    assert_true(big < small);
    assert_non_null(strstr(s, "MatMul"));
    free(s);
    dgr_trace_free(t);
    dg_devices_free(l);
}

/* ---- the checker rejects broken traces ---------------------------------- */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#define META "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":" \
             "\"/job:localhost/replica:0/task:0/device:CPU:0\"}}," \
             "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":0," \
             "\"args\":{\"name\":\"inter-op 0\"}}"
#define OP(ts, dur) "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"Neg\",\"pid\":1," \
                    "\"tid\":0,\"ts\":" #ts ",\"dur\":" #dur ",\"args\":" \
                    "{\"name\":\"n\",\"op\":\"Neg\",\"step\":0}}"
/* a second lane (tid 2) with op `name` at ts (dur 5), args extra `in` */
#define TNAME(tid, name) "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1," \
                         "\"tid\":" #tid ",\"args\":{\"name\":\"" name "\"}}"
#define META2 META "," TNAME(2, "inter-op 2")
#define IN_N ",\"input0\":\"n:0\""
#define OPL(tid, ts, name, in) "{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"Neg\"," \
    "\"pid\":1,\"tid\":" #tid ",\"ts\":" #ts ",\"dur\":5,\"args\":" \
    "{\"name\":\"" name "\",\"op\":\"Neg\",\"step\":0" in "}}"
/* flow "n" from lane 0 at s_ts to lane 2 at e_ts, end phase ph (open) */
#define FLOW(ph, s_ts, s_tid, e_ts) \
    "{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"n\",\"id\":1,\"pid\":1," \
    "\"tid\":" #s_tid ",\"ts\":" #s_ts "},{\"ph\":\"" ph "\",\"cat\":" \
    "\"DataFlow\",\"name\":\"n\",\"id\":1,\"pid\":1,\"tid\":2,\"ts\":" #e_ts
#define FLOW_E ",\"bp\":\"e\"}"
#define WRAP(ev) "{\"traceEvents\":[" ev "],\"displayTimeUnit\":\"ns\"," \
                 "\"otherData\":{\"dgrun_version\":\"0\",\"graph\":\"g\"}}"

static void test_checker_rejects(void **state)
{
    (void)state;
    char path[300];
    path_in(path, sizeof path, "bad.json");
    static const char *const bad[] = {
        WRAP(META "," OP(0, 10) "," OP(5, 10)),                 /* overlap */
        WRAP(OP(0, 1)),                                        /* no meta */
        WRAP(META "," OP(-1, 1)),                              /* negative */
        WRAP(META "," OP(0, 1) ","
             "{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"n\",\"id\":1,"
             "\"pid\":1,\"tid\":0,\"ts\":0.5}"),                 /* no f */
        WRAP(OP(0, 1) "," META),                               /* order */
        WRAP(META ",{\"ph\":\"C\",\"cat\":\"Memory\",\"name\":\"m\","
             "\"pid\":1,\"ts\":1,\"args\":{\"bytes_in_use\":\"7\"}}"),
        WRAP(META ",{\"ph\":\"X\",\"cat\":\"Memcpy\",\"name\":\"MemcpyHtoD\","
             "\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":1,\"args\":{\"bytes\":4}}"),
        "{\"traceEvents\":[" META "]}",                        /* top level */
        "{\"traceEvents\":[" META "],\"displayTimeUnit\":\"ms\",\"otherData\":"
        "{\"dgrun_version\":\"0\",\"graph\":\"g\"}}",       /* us rounding */
        WRAP(META "," OP(0, 1) ","
             "{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"x\",\"id\":1,"
             "\"pid\":1,\"tid\":0,\"ts\":1},"
             "{\"ph\":\"f\",\"cat\":\"DataFlow\",\"name\":\"x\",\"id\":1,"
             "\"pid\":1,\"tid\":0,\"ts\":0.5,\"bp\":\"e\"}"), /* backwards */
        WRAP(META2 "," OP(0, 10) "," OPL(2, 20, "m", IN_N) "," FLOW("t", 5, 0, 22) FLOW_E),    /* t end */
        WRAP(META2 "," OP(0, 10) "," OPL(2, 20, "m", IN_N) ","
             FLOW("f", 5, 0, 22) "}"),                     /* f without bp */
        WRAP(META2 "," OP(0, 10) "," OPL(2, 20, "m", IN_N) ","
             OPL(2, 30, "k", "") "," FLOW("f", 5, 0, 32) FLOW_E), /* wrong */
        WRAP(META2 "," OP(0, 10) "," OPL(2, 20, "m", "") ","
             FLOW("f", 5, 0, 22) FLOW_E),                  /* no consumer */
        WRAP(META2 "," OP(0, 10) "," OPL(2, 20, "m", IN_N) ","
             FLOW("f", 15, 0, 22) FLOW_E),                 /* s outside */
        WRAP(META "," TNAME(1, "inter-op 1") "," OPL(1, 0, "m", "")), /* merge */
        WRAP(META "," TNAME(2, "OpenCL queue 0") "," OPL(2, 0, "m", "") ","
             OPL(2, 0, "v", "")),                   /* nested in a kernel */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_text(path, bad[i]);
        if (run_checker(path, "2>/dev/null") != 1)
            fail_msg("checker accepted bad trace %zu", i);
    }
    write_text(path, WRAP(META2 "," OP(0, 10) "," OPL(2, 20, "m", IN_N) ","
                          OPL(2, 30, "k", "") "," FLOW("f", 5, 0, 22) FLOW_E));
    assert_int_equal(run_checker(path, ">/dev/null --expect-flows 1"), 0);
    write_text(path, WRAP(META "," OP(0, 10) "," OP(2, 3) "," OP(10, 1)));
    assert_int_equal(run_checker(path, ">/dev/null --expect-ops 3"), 0);
    assert_int_equal(run_checker(path, "2>/dev/null --expect-ops 2"), 1);
}

/* ---- a real run through the public API (CPU:0 + PoCL as GPU:0) -------- */

static void run_profile(int colocate, const char *out)
{
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    char graph[512];
    snprintf(graph, sizeof graph, "%s/graphs/colocate.json", root ? root : ".");
    dg_error err;
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "all";
    o.colocate = colocate;
    o.trace_path = out;
    o.repeat = 3;
    dg_graph *g = dg_graph_load(graph, NULL, 0, &err);
    if (!g)
        fail_msg("%s", err.msg);
    dg_device_list *devs = NULL;
    if (dg_devices_discover(&o, &devs, &err) != DG_OK)
        fail_msg("%s", err.msg);
    if (dg_devices_count(devs) < 2) {
        dg_graph_free(g);
        dg_devices_free(devs);
        skip(); /* no OpenCL device here */
    }
    dg_program *p = dg_compile(g, &o, devs, &err);
    if (!p)
        fail_msg("%s", err.msg);
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fail_msg("%s", err.msg);
    dg_fetch_result *res = NULL;
    int n = 0;
    if (dg_session_run(s, &res, &n, &err) != DG_OK)
        fail_msg("%s", err.msg);
    dg_fetch_results_free(res, n);
    if (dg_session_write_trace(s, &err) != DG_OK)
        fail_msg("%s", err.msg);
    char *sum = dg_session_profile_summary(s);
    assert_non_null(sum);
    assert_non_null(strstr(sum, "CPU:0 -> GPU:0"));
    assert_non_null(strstr(sum, "GPU:0 -> CPU:0"));
    assert_non_null(strstr(sum, "3 steps"));
    free(sum);
    dg_session_free(s);
    dg_program_free(p);
    dg_devices_free(devs);
}

static void test_real_run(void **state)
{
    (void)state;
    char path[300];
    for (int colocate = 0; colocate <= 1; colocate++) {
        path_in(path, sizeof path, colocate ? "real_co.json" : "real_noco.json");
        run_profile(colocate, path);
        assert_int_equal(run_checker(path, "--expect-devices 2"), 0);
        char *s = slurp(path);
        assert_non_null(s);
        assert_non_null(strstr(s, "\"name\":\"MemcpyHtoD\""));
        assert_non_null(strstr(s, "\"name\":\"MemcpyDtoH\""));
        assert_non_null(strstr(s, "\"args\":{\"name\":\"b\",\"op\":\"Sin\""));
        assert_non_null(strstr(s, "\"args\":{\"name\":\"g/a\""));
        assert_non_null(strstr(s, "\"cat\":\"DataFlow\""));
        assert_non_null(strstr(s, "\"cat\":\"Memory\""));
        assert_non_null(strstr(s, "\"name\":\"OpenCL queue 0\""));
        assert_non_null(strstr(s, "\"step\":2"));
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_only),
        cmocka_unit_test(test_opencl_like),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_flow_binding),
        cmocka_unit_test(test_concurrent),
        cmocka_unit_test(test_two_traces_one_thread),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_write_failures),
        cmocka_unit_test(test_record_nomem),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_checker_rejects),
        cmocka_unit_test(test_real_run),
    };
    return cmocka_run_group_tests(tests, setup_dir, teardown_dir);
}
