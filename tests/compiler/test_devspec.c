/*
 * test_devspec.c -- device specifications (SPEC 3, 4.1, 4.2): every accepted
 * spelling, malformed ones, canonical text, merging over scopes, colocation
 * merge conflicts, matching, and the assumed device list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "devices.h"

static void canon(const char *in, const char *want)
{
    dgc_devspec s;
    char buf[192];
    if (dgc_devspec_parse(in, &s) != 0)
        fail_msg("'%s' did not parse", in);
    dgc_devspec_str(&s, buf, sizeof buf);
    if (strcmp(buf, want) != 0)
        fail_msg("'%s' -> '%s', want '%s'", in, buf, want);
}

static void test_spellings(void **state)
{
    (void)state;
    canon("/job:localhost/replica:0/task:0/device:GPU:0",
          "/job:localhost/replica:0/task:0/device:GPU:0");
    canon("/device:GPU:0/task:0/job:localhost/replica:0",
          "/job:localhost/replica:0/task:0/device:GPU:0");
    canon("/job:worker", "/job:worker");
    canon("/job:worker/task:3", "/job:worker/task:3");
    canon("/replica:1", "/replica:1");
    canon("/cpu:0", "/device:CPU:0");
    canon("/CPU:0", "/device:CPU:0");
    canon("/gpu:1", "/device:GPU:1");
    canon("/GPU:1", "/device:GPU:1");
    canon("CPU:0", "/device:CPU:0");
    canon("GPU:1", "/device:GPU:1");
    canon("/gpu:*", "/device:GPU:*");
    canon("/gpu", "/device:GPU:*");
    canon("/device:GPU:*", "/device:GPU:*");
    canon("cpu/:0", "/device:CPU:*"); /* the seed's tf.device('cpu/:0') */
    canon("/device:CPU:12", "/device:CPU:12");
    canon("/device:*:3", "/device:*:3");
    canon("/job:localhost/replica:0/task:0/cpu:0",
          "/job:localhost/replica:0/task:0/device:CPU:0");
    canon("/device:GPU:10", "/device:GPU:10");
    canon("/job:localhost/gpu:2", "/job:localhost/device:GPU:2");
    canon("job:localhost/device:CPU:0", "/job:localhost/device:CPU:0");
    /* SPEC 3's "`*` or a missing ID for any": C++'s forms, and Python's
     * form with them where neither of TF's parsers has it */
    canon("/device:GPU", "/device:GPU:*");
    canon("GPU", "/device:GPU:*");
    canon("/task:*", "");
    canon("/replica:*/task:*/device:CPU:0", "/device:CPU:0");
    canon("/job:localhost/replica:*/task:*/device:GPU:1",
          "/job:localhost/device:GPU:1");
    canon("/task:*/cpu", "/device:CPU:*");
    canon("device:GPU/task:*", "/device:GPU:*");
    canon("/device:*", "");
    canon("", "");
    canon(NULL, "");
}

static void test_parsed_fields(void **state)
{
    (void)state;
    dgc_devspec s;
    assert_int_equal(dgc_devspec_parse("/job:w/replica:2/task:3/device:GPU:4", &s), 0);
    assert_true(s.has_job);
    assert_string_equal(s.job, "w");
    assert_int_equal(s.replica, 2);
    assert_int_equal(s.task, 3);
    assert_int_equal(s.type, DG_DEV_GPU);
    assert_int_equal(s.id, 4);
    assert_int_equal(dgc_devspec_parse("/gpu:*", &s), 0);
    assert_int_equal(s.type, DG_DEV_GPU);
    assert_int_equal(s.id, -1);
    assert_false(s.has_job);
    assert_int_equal(dgc_devspec_parse("", &s), 0);
    assert_true(dgc_devspec_is_empty(&s));
    assert_int_equal(dgc_devspec_parse("/cpu:0", &s), 0);
    assert_false(dgc_devspec_is_empty(&s));
}

static void test_malformed(void **state)
{
    (void)state;
    /* malformed for both of TF's parsers */
    static const char *const bad[] = {
        "/gpu:x", "/device:T-PU:0", "/job:", "/job:1abc", "/replica:x", "/task:-1", "/task:", "gpu 0",
        "/device:", "/device:GPU:0:1", "/foo:1", "/device", "/gpu:-1",
        "/gpu:99999999999", "/device::0", "/job:w-1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dgc_devspec s;
        for (int syn = 0; syn < 3; syn++) /* dgrun's, C++'s, Python's */
            if (dgc_devspec_parse_as(bad[i], &s, syn) != -1)
                fail_msg("'%s' should be malformed (syntax %d)", bad[i], syn);
    }
    /* only C++ ParseFullName (a GraphDef's) rejects these: a component
     * without its '/', a trailing '/', a lower-case type in legacy form;
     * dgrun's own syntax accepts them as Python does */
    static const char *const py_only[] = {
        "cpu/:0", "cpu:0", "/gpu:0/", "//gpu:0", ":0", "/Gpu:0", "/tpu:0",
        "/gpu:0 ", "/cpu", "job:localhost/cpu:0",
    };
    for (size_t i = 0; i < sizeof py_only / sizeof py_only[0]; i++) {
        dgc_devspec s;
        if (dgc_devspec_parse_as(py_only[i], &s, DGC_DEVSPEC_PY) != 0)
            fail_msg("'%s' should parse as Python's", py_only[i]);
        if (dgc_devspec_parse(py_only[i], &s) != 0)
            fail_msg("'%s' should parse as dgrun's", py_only[i]);
        if (dgc_devspec_parse_as(py_only[i], &s, DGC_DEVSPEC_CPP) != -1)
            fail_msg("'%s' should be malformed for C++", py_only[i]);
    }
    /* only Python's DeviceSpec rejects these; dgrun's syntax reads them
     * as C++ does (the later type wins) */
    static const char *const cpp_only[][2] = {
        {"/device:GPU", "/device:GPU:*"},
        {"/device:*", ""},
        {"/task:*", ""},
        {"/replica:*", ""},
        {"/cpu:0/gpu:0", "/device:GPU:0"},
        {"/device:GPU:0/gpu:1", "/device:GPU:1"},
        {"/replica:*/task:*/device:CPU:0", "/device:CPU:0"},
        {"/job:*/replica:*/task:*/device:GPU:*", "/device:GPU:*"},
    };
    for (size_t i = 0; i < sizeof cpp_only / sizeof cpp_only[0]; i++) {
        dgc_devspec s, d;
        char a[192], b[192];
        if (dgc_devspec_parse_as(cpp_only[i][0], &s, DGC_DEVSPEC_PY) != -1)
            fail_msg("'%s' should be malformed for Python", cpp_only[i][0]);
        if (dgc_devspec_parse_as(cpp_only[i][0], &s, DGC_DEVSPEC_CPP) != 0)
            fail_msg("'%s' should parse as C++'s", cpp_only[i][0]);
        if (dgc_devspec_parse(cpp_only[i][0], &d) != 0)
            fail_msg("'%s' should parse as dgrun's", cpp_only[i][0]);
        dgc_devspec_str(&s, a, sizeof a);
        dgc_devspec_str(&d, b, sizeof b);
        if (strcmp(a, cpp_only[i][1]) != 0 || strcmp(b, a) != 0)
            fail_msg("'%s': C++ '%s', dgrun '%s', want '%s'", cpp_only[i][0],
                     a, b, cpp_only[i][1]);
    }
    /* both of TF's parsers reject these; SPEC 3's list has them (Python's
     * form with '*' or a missing ID), so dgrun's own syntax accepts them */
    static const char *const spec_only[][2] = {
        {"/task:*/cpu", "/device:CPU:*"},
        {"device:GPU", "/device:GPU:*"},
        {"/gpu:1/replica:*/", "/device:GPU:1"},
        {"job:localhost/task:*/device:CPU", "/job:localhost/device:CPU:*"},
    };
    for (size_t i = 0; i < sizeof spec_only / sizeof spec_only[0]; i++) {
        dgc_devspec s;
        char a[192];
        for (int syn = DGC_DEVSPEC_CPP; syn <= DGC_DEVSPEC_PY; syn++)
            if (dgc_devspec_parse_as(spec_only[i][0], &s, syn) != -1)
                fail_msg("'%s' should be malformed (syntax %d)",
                         spec_only[i][0], syn);
        if (dgc_devspec_parse(spec_only[i][0], &s) != 0)
            fail_msg("'%s' should parse as dgrun's", spec_only[i][0]);
        dgc_devspec_str(&s, a, sizeof a);
        if (strcmp(a, spec_only[i][1]) != 0)
            fail_msg("'%s': dgrun '%s', want '%s'", spec_only[i][0], a,
                     spec_only[i][1]);
    }
}

/* TF 2.21's answers, recorded by tools/tf_devspec/record.py: each spelling
 * in TF's two syntaxes, and in dgrun's own (their union: accepted where
 * either accepts, with Python's meaning where it accepts, else C++'s).  Python's (JSON, rules, --device): malformed
 * exactly where `with tf.device(s)` and a run fail as malformed (Python's
 * ValueError, or the C++ placer's "Malformed device specification" of the
 * string DeviceSpec prints); otherwise dgrun prints what DeviceSpec prints
 * ("/job:*" being any job), and matches this host's CPU:0 exactly where TF
 * placed the node without soft placement.  C++'s (GraphDef): malformed
 * exactly where TF says "Malformed device specification" for the NodeDef,
 * matching CPU:0 exactly where TF placed it without soft placement. */
static const char *const tf_cases[][6] = {
#include "devspec_tf_cases.h"
};

static void test_tf_table(void **state)
{
    (void)state;
    dg_device_info cpu;
    dgc_device_cpu_info(&cpu, NULL);
    int n = (int)(sizeof tf_cases / sizeof tf_cases[0]);
    assert_true(n >= 60);
    for (int i = 0; i < n; i++) {
        const char *const *c = tf_cases[i];
        dgc_devspec s;
        char buf[192];
        /* Python's DeviceSpec, then the C++ placer on its string */
        int py_bad = c[1][0] == '!' || strcmp(c[2], "!Malformed") == 0;
        int rc = dgc_devspec_parse_as(c[0], &s, DGC_DEVSPEC_PY);
        if (rc != (py_bad ? -1 : 0))
            fail_msg("'%s' (Python syntax): dgrun %s, TF %s / %s", c[0],
                     rc ? "rejects" : "accepts", c[1], c[2]);
        if (!py_bad) {
            char want[192];
            const char *j = strstr(c[1], "/job:*");
            snprintf(want, sizeof want, "%s", c[1]);
            if (j)
                memmove(want + (j - c[1]), want + (j - c[1]) + 6,
                        strlen(want + (j - c[1]) + 6) + 1);
            dgc_devspec_str(&s, buf, sizeof buf);
            if (strcmp(buf, want) != 0)
                fail_msg("'%s' (Python syntax): dgrun '%s', TF '%s'", c[0],
                         buf, c[1]);
            int on_cpu = dgc_devspec_matches(&s, &cpu);
            if (on_cpu != (strcmp(c[3], "ok") == 0))
                fail_msg("'%s' (Python syntax): CPU:0 %s, TF %s", c[0],
                         on_cpu ? "matches" : "does not match", c[3]);
        }
        /* C++ ParseFullName */
        int cpp_bad = strcmp(c[4], "!Malformed") == 0;
        rc = dgc_devspec_parse_as(c[0], &s, DGC_DEVSPEC_CPP);
        if (rc != (cpp_bad ? -1 : 0))
            fail_msg("'%s' (C++ syntax): dgrun %s, TF %s", c[0],
                     rc ? "rejects" : "accepts", c[4]);
        if (!cpp_bad) {
            int on_cpu = dgc_devspec_matches(&s, &cpu);
            if (on_cpu != (strcmp(c[5], "ok") == 0))
                fail_msg("'%s' (C++ syntax): CPU:0 %s, TF %s", c[0],
                         on_cpu ? "matches" : "does not match", c[5]);
        }
        /* dgrun's own: the union, Python's meaning first */
        dgc_devspec u, w;
        char ub[192], wb[192];
        rc = dgc_devspec_parse(c[0], &u);
        if (rc != (py_bad && cpp_bad ? -1 : 0))
            fail_msg("'%s' (dgrun syntax): dgrun %s, TF %s / %s", c[0],
                     rc ? "rejects" : "accepts", c[1], c[4]);
        if (rc)
            continue;
        dgc_devspec_parse_as(c[0], &w, py_bad ? DGC_DEVSPEC_CPP
                                              : DGC_DEVSPEC_PY);
        dgc_devspec_str(&u, ub, sizeof ub);
        dgc_devspec_str(&w, wb, sizeof wb);
        if (strcmp(ub, wb) != 0 ||
            dgc_devspec_matches(&u, &cpu) != dgc_devspec_matches(&w, &cpu))
            fail_msg("'%s' (dgrun syntax): '%s', want %s's '%s'", c[0], ub,
                     py_bad ? "C++" : "Python", wb);
    }
}

/* A well-formed device type that no dgrun device has (TF accepts any
 * upper-case TYPE): parsed, printed back, matching no device. */
static void test_other_type(void **state)
{
    (void)state;
    dgc_devspec s, g;
    char buf[128];
    assert_int_equal(dgc_devspec_parse("/device:TPU:1", &s), 0);
    assert_int_equal(s.type, DGC_TYPE_OTHER);
    assert_int_equal(s.id, 1);
    dgc_devspec_str(&s, buf, sizeof buf);
    assert_string_equal(buf, "/device:TPU:1");
    dg_device_list *l = NULL;
    assert_int_equal(dg_devices_assume(2, &l, NULL), DG_OK);
    for (int i = 0; i < dg_devices_count(l); i++)
        assert_false(dgc_devspec_matches(&s, dg_devices_get(l, i)));
    dg_devices_free(l);
    assert_int_equal(dgc_devspec_parse("/device:GPU:1", &g), 0);
    const char *what = NULL;
    assert_int_equal(dgc_devspec_merge_compatible(&g, &s, &what), -1);
    assert_string_equal(what, "types");
    assert_int_equal(dgc_devspec_parse("/device:XLA_GPU:0", &g), 0);
    assert_int_equal(dgc_devspec_merge_compatible(&g, &s, &what), -1);
}

static void test_merge_over(void **state)
{
    (void)state;
    dgc_devspec in, out;
    char buf[192];
    /* SPEC 4.1 example: /job:worker then /device:GPU:0 */
    dgc_devspec_parse("/device:GPU:0", &in);
    dgc_devspec_parse("/job:worker", &out);
    dgc_devspec_merge_over(&in, &out);
    dgc_devspec_str(&in, buf, sizeof buf);
    assert_string_equal(buf, "/job:worker/device:GPU:0");
    /* inner wins field by field */
    dgc_devspec_parse("/gpu:1", &in);
    dgc_devspec_parse("/job:localhost/device:CPU:0", &out);
    dgc_devspec_merge_over(&in, &out);
    dgc_devspec_str(&in, buf, sizeof buf);
    assert_string_equal(buf, "/job:localhost/device:GPU:1");
    /* an id-less inner keeps its type, takes the outer id */
    dgc_devspec_parse("/device:GPU:*", &in);
    dgc_devspec_parse("/device:GPU:3", &out);
    dgc_devspec_merge_over(&in, &out);
    dgc_devspec_str(&in, buf, sizeof buf);
    assert_string_equal(buf, "/device:GPU:3");
}

static void conflict(const char *a, const char *b, const char *what)
{
    dgc_devspec x, y;
    const char *w = NULL;
    assert_int_equal(dgc_devspec_parse(a, &x), 0);
    assert_int_equal(dgc_devspec_parse(b, &y), 0);
    assert_int_equal(dgc_devspec_merge_compatible(&x, &y, &w), -1);
    assert_non_null(w);
    assert_string_equal(w, what);
}

static void test_merge_compatible(void **state)
{
    (void)state;
    conflict("/gpu:0", "/cpu:0", "types");
    conflict("/gpu:0", "/gpu:1", "ids");
    conflict("/job:a", "/job:b", "jobs");
    conflict("/task:0", "/task:1", "tasks");
    conflict("/replica:0", "/replica:2", "replicas");
    conflict("/job:a/gpu:0", "/job:b/cpu:0", "jobs"); /* TF's order */
    dgc_devspec x, y;
    char buf[192];
    const char *w = NULL;
    dgc_devspec_parse("/job:localhost", &x);
    dgc_devspec_parse("/gpu:1", &y);
    assert_int_equal(dgc_devspec_merge_compatible(&x, &y, &w), 0);
    dgc_devspec_str(&x, buf, sizeof buf);
    assert_string_equal(buf, "/job:localhost/device:GPU:1");
    dgc_devspec_parse("/gpu:*", &x);
    dgc_devspec_parse("/gpu:2", &y);
    assert_int_equal(dgc_devspec_merge_compatible(&x, &y, &w), 0);
    dgc_devspec_str(&x, buf, sizeof buf);
    assert_string_equal(buf, "/device:GPU:2");
}

static void test_matches_and_assume(void **state)
{
    (void)state;
    dg_device_list *l = NULL;
    dg_error err;
    assert_int_equal(dg_devices_assume(12, &l, &err), DG_OK);
    assert_int_equal(dg_devices_count(l), 13);
    const dg_device_info *cpu = dg_devices_get(l, 0);
    const dg_device_info *g10 = dg_devices_get(l, 11);
    assert_string_equal(cpu->name, "/job:localhost/replica:0/task:0/device:CPU:0");
    assert_string_equal(g10->name, "/job:localhost/replica:0/task:0/device:GPU:10");
    assert_int_equal(g10->type, DG_DEV_GPU);
    assert_int_equal(g10->index, 10);
    assert_true(g10->fp64);
    assert_null(dg_devices_get(l, 13));
    dgc_devspec s;
    dgc_devspec_parse("/gpu:10", &s);
    assert_true(dgc_devspec_matches(&s, g10));
    assert_false(dgc_devspec_matches(&s, cpu));
    dgc_devspec_parse("/job:localhost/replica:0/task:0", &s);
    assert_true(dgc_devspec_matches(&s, g10));
    dgc_devspec_parse("/job:worker", &s);
    assert_false(dgc_devspec_matches(&s, cpu));
    dgc_devspec_parse("/task:1", &s);
    assert_false(dgc_devspec_matches(&s, cpu));
    dgc_devspec_parse("/gpu:*", &s);
    assert_true(dgc_devspec_matches(&s, g10));
    assert_false(dgc_devspec_matches(&s, cpu));
    dg_devices_free(l);
    l = NULL;
    assert_int_equal(dg_devices_assume(0, &l, &err), DG_OK);
    assert_int_equal(dg_devices_count(l), 1);
    dg_devices_free(l);
    l = NULL;
    assert_int_equal(dg_devices_assume(-1, &l, &err), DG_E_USAGE);
    assert_null(l);
}

static void test_fullname(void **state)
{
    (void)state;
    char buf[96];
    dgc_device_fullname(DG_DEV_GPU, 3, buf, sizeof buf);
    assert_string_equal(buf, "/job:localhost/replica:0/task:0/device:GPU:3");
    dg_device_list *l = dgc_devices_new_cpu_only(NULL);
    assert_non_null(l);
    dg_device_info d = l->devs[0];
    d.type = DG_DEV_GPU;
    d.index = 0;
    assert_int_equal(dgc_devices_append(l, &d), 0);
    assert_int_equal(dg_devices_count(l), 2);
    dg_devices_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_parsed_fields),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_tf_table),
        cmocka_unit_test(test_other_type),
        cmocka_unit_test(test_merge_over),
        cmocka_unit_test(test_merge_compatible),
        cmocka_unit_test(test_matches_and_assume),
        cmocka_unit_test(test_fullname),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
