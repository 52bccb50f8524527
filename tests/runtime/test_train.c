/*
 * test_train.c -- dg_session_train end to end on CPU:0: a tiny linear
 * regression (y = 3x + 2, fed from CSV files in batches with shuffle)
 * converges with sgd, momentum and adam; Adam's first steps equal TF1's
 * formula computed by hand; the same seed gives the same result; feeds
 * with different row counts are refused naming the file; checkpoints
 * round-trip and a corrupt one is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dgrun.h"

static char dir[256];

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/dgrun_test_train_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    char x[4096] = "", y[4096] = "";
    for (int i = 0; i < 32; i++) {
        double v = -1.0 + 2.0 * i / 31.0;
        size_t o = strlen(x);
        snprintf(x + o, sizeof x - o, "%.6f\n", v);
        o = strlen(y);
        snprintf(y + o, sizeof y - o, "%.6f\n", 3.0 * v + 2.0);
    }
    write_file("x.csv", x);
    write_file("y.csv", y);
    write_file("y_short.csv", "1\n2\n3\n");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *LINREG =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"x\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [-1, 1]}},"
    "{\"name\": \"y\", \"op\": \"Placeholder\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [-1, 1]}},"
    "{\"name\": \"w\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [1, 1], \"init\": 0.5}},"
    "{\"name\": \"b\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [1], \"init\": 0.0}},"
    "{\"name\": \"mm\", \"op\": \"MatMul\", \"inputs\": [\"x\", \"w\"]},"
    "{\"name\": \"pred\", \"op\": \"BiasAdd\", \"inputs\": [\"mm\", \"b\"]},"
    "{\"name\": \"d\", \"op\": \"Sub\", \"inputs\": [\"pred\", \"y\"]},"
    "{\"name\": \"sq\", \"op\": \"Square\", \"inputs\": [\"d\"]},"
    "{\"name\": \"loss\", \"op\": \"Mean\", \"inputs\": [\"sq\"]}],"
    "\"train\": {\"loss\": \"loss\", \"steps\": %d, \"optimizer\": %s,"
    " \"feeds\": {\"x\": {\"file\": \"x.csv\", \"batch\": 8, \"shuffle\": true},"
    "             \"y\": {\"file\": \"%s\", \"batch\": 8, \"shuffle\": true}},"
    " \"eval\": {\"feeds\": {\"x\": {\"file\": \"x.csv\"}, \"y\": {\"file\": \"y.csv\"}},"
    "           \"fetch\": [\"loss\"]}%s}}";

typedef struct run_out {
    dg_status st;
    dg_error err;
    dg_train_result res;
    int64_t calls;
    double first_loss;
} run_out;

static void progress(const dg_train_progress *p, void *user)
{
    run_out *o = user;
    if (o->calls++ == 0)
        o->first_loss = p->loss;
}

/* Write graph text to dir/name, compile for CPU:0 and train. */
static void train(const char *name, const char *text, const dg_options *opt_in,
                  run_out *out)
{
    memset(out, 0, sizeof *out);
    write_file(name, text);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    dg_graph *g = dg_graph_load(path, NULL, 0, &out->err);
    if (!g)
        fail_msg("load: %s", out->err.msg);
    dg_device_list *devs = NULL;
    assert_int_equal(dg_devices_assume(0, &devs, &out->err), DG_OK);
    dg_options o;
    if (opt_in) {
        o = *opt_in;
    } else {
        dg_options_init(&o);
    }
    o.opencl_devices = "none";
    o.train_mode = 1;
    dg_program *p = dg_compile(g, &o, devs, &out->err);
    if (!p)
        fail_msg("compile: %s", out->err.msg);
    dg_session *s = dg_session_new(p, &o, &out->err);
    if (!s)
        fail_msg("session: %s", out->err.msg);
    out->st = dg_session_train(s, progress, out, &out->res, &out->err);
    dg_session_free(s);
    dg_program_free(p);
    dg_devices_free(devs);
}

static const dg_tensor *var(const dg_train_result *r, const char *name)
{
    for (int i = 0; i < r->n_variables; i++)
        if (strcmp(r->variables[i].name, name) == 0)
            return r->variables[i].value;
    fail_msg("variable '%s' not in the result", name);
    return NULL;
}

static float f0(const dg_tensor *t)
{
    return *(const float *)t->data;
}

static void converge(const char *opt, int steps)
{
    char text[8192];
    snprintf(text, sizeof text, LINREG, steps, opt, "y.csv", "");
    run_out o;
    train("linreg.json", text, NULL, &o);
    if (o.st != DG_OK)
        fail_msg("train (%s): %s", opt, o.err.msg);
    assert_int_equal(o.res.steps, steps);
    assert_int_equal(o.calls, steps);
    float w = f0(var(&o.res, "w")), b = f0(var(&o.res, "b"));
    if (fabsf(w - 3.0f) > 0.05f || fabsf(b - 2.0f) > 0.05f)
        fail_msg("%s: w = %g, b = %g (want 3, 2)", opt, w, b);
    assert_true(o.res.loss < 1e-2);
    assert_true(o.first_loss > o.res.loss);
    assert_int_equal(o.res.n_eval, 1);
    assert_string_equal(o.res.eval[0].name, "loss");
    assert_true(f0(o.res.eval[0].value) < 1e-2);
    assert_int_equal(*(const int64_t *)var(&o.res, "global_step")->data, steps);
    dg_train_result_free(&o.res);
}

static void test_sgd(void **s)
{
    (void)s;
    converge("{\"type\": \"sgd\", \"learning_rate\": 0.2}", 300);
}

static void test_momentum(void **s)
{
    (void)s;
    converge("{\"type\": \"momentum\", \"learning_rate\": 0.05, \"momentum\": 0.9}", 300);
}

static void test_adam(void **s)
{
    (void)s;
    converge("{\"type\": \"adam\", \"learning_rate\": 0.1}", 400);
}

/* loss = w^2 from w = 1: three Adam steps by TF1's formula. */
static void test_adam_formula(void **state)
{
    (void)state;
    const char *text =
        "{\"version\": 1, \"nodes\": ["
        "{\"name\": \"w\", \"op\": \"Variable\", \"attrs\": {\"dtype\": \"float32\", \"shape\": [], \"init\": 1.0}},"
        "{\"name\": \"loss\", \"op\": \"Square\", \"inputs\": [\"w\"]}],"
        "\"train\": {\"loss\": \"loss\", \"steps\": 3, \"optimizer\": {\"type\": \"adam\", "
        "\"learning_rate\": 0.1, \"beta1\": 0.9, \"beta2\": 0.999, \"epsilon\": 1e-8}}}";
    run_out o;
    train("adam.json", text, NULL, &o);
    if (o.st != DG_OK)
        fail_msg("train: %s", o.err.msg);
    double w = 1.0, m = 0, v = 0, b1 = 0.9, b2 = 0.999, lr = 0.1, eps = 1e-8;
    double b1p = b1, b2p = b2, last_loss = 0;
    for (int t = 1; t <= 3; t++) {
        double g = 2 * w;
        last_loss = w * w;
        double lr_t = lr * sqrt(1 - b2p) / (1 - b1p);
        m = b1 * m + (1 - b1) * g;
        v = b2 * v + (1 - b2) * g * g;
        w -= lr_t * m / (sqrt(v) + eps);
        b1p *= b1;
        b2p *= b2;
    }
    assert_float_equal(f0(var(&o.res, "w")), w, 1e-5);
    assert_float_equal(f0(var(&o.res, "w/Adam")), m, 1e-5);
    assert_float_equal(f0(var(&o.res, "w/Adam_1")), v, 1e-6);
    assert_float_equal(f0(var(&o.res, "beta1_power")), b1p, 1e-6);
    assert_float_equal(f0(var(&o.res, "beta2_power")), b2p, 1e-6);
    assert_float_equal(o.res.loss, last_loss, 1e-5);
    dg_train_result_free(&o.res);
}

static void test_deterministic_and_seed(void **state)
{
    (void)state;
    char text[8192];
    snprintf(text, sizeof text, LINREG, 7,
             "{\"type\": \"sgd\", \"learning_rate\": 0.1}", "y.csv", "");
    dg_options opt;
    dg_options_init(&opt);
    float w[3];
    for (int i = 0; i < 3; i++) {
        opt.seed = i < 2 ? 5 : 6;
        run_out o;
        train("det.json", text, &opt, &o);
        assert_int_equal(o.st, DG_OK);
        w[i] = f0(var(&o.res, "w"));
        dg_train_result_free(&o.res);
    }
    assert_true(w[0] == w[1]);
    assert_true(w[0] != w[2]); /* another shuffle order */
}

static void test_row_mismatch(void **state)
{
    (void)state;
    char text[8192];
    snprintf(text, sizeof text, LINREG, 3,
             "{\"type\": \"sgd\", \"learning_rate\": 0.1}", "y_short.csv", "");
    run_out o;
    train("bad.json", text, NULL, &o);
    assert_int_equal(o.st, DG_E_GRAPH);
    assert_non_null(strstr(o.err.msg, "y_short.csv"));
    assert_non_null(strstr(o.err.msg, "rows"));
}

static void test_checkpoint(void **state)
{
    (void)state;
    char text[8192];
    snprintf(text, sizeof text, LINREG, 5,
             "{\"type\": \"adam\", \"learning_rate\": 0.1}", "y.csv",
             ", \"checkpoint\": {\"path\": \"ck.bin\", \"every\": 2}");
    run_out a, b;
    train("ck.json", text, NULL, &a); /* steps 1..5, saved at 5 */
    assert_int_equal(a.st, DG_OK);
    dg_options opt;
    dg_options_init(&opt);
    opt.restore = 1;
    train("ck.json", text, &opt, &b); /* steps 6..10 from the checkpoint */
    if (b.st != DG_OK)
        fail_msg("restore: %s", b.err.msg);
    assert_int_equal(*(const int64_t *)var(&b.res, "global_step")->data, 10);
    assert_true(b.res.loss < a.res.loss);
    dg_train_result_free(&a.res);
    dg_train_result_free(&b.res);

    /* TF's format: the bundle at the prefix and the state file */
    char path[512];
    snprintf(path, sizeof path, "%s/ck.bin.index", dir);
    assert_true(access(path, F_OK) == 0);
    snprintf(path, sizeof path, "%s/checkpoint", dir);
    assert_true(access(path, F_OK) == 0);
    /* flip one byte of the data shard: refused */
    snprintf(path, sizeof path, "%s/ck.bin.data-00000-of-00001", dir);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 6, SEEK_SET);
    int ch = fgetc(f);
    fseek(f, 6, SEEK_SET);
    fputc(ch ^ 0x5a, f);
    fclose(f);
    train("ck.json", text, &opt, &b);
    assert_int_equal(b.st, DG_E_GRAPH); /* bad input: exit 2 */
    assert_non_null(strstr(b.err.msg, "Checksum does not match"));
    assert_non_null(strstr(b.err.msg, "ck.bin.data-00000-of-00001"));

    /* --restore without a checkpoint yet: starts fresh at step 0 */
    snprintf(text, sizeof text, LINREG, 5,
             "{\"type\": \"adam\", \"learning_rate\": 0.1}", "y.csv",
             ", \"checkpoint\": {\"path\": \"ck_none.bin\", \"every\": 2}");
    train("ck_none.json", text, &opt, &b);
    if (b.st != DG_OK)
        fail_msg("restore without a checkpoint: %s", b.err.msg);
    assert_int_equal(*(const int64_t *)var(&b.res, "global_step")->data, 5);
    dg_train_result_free(&b.res);

    /* a checkpoint of another model: refused naming the variable */
    run_out c;
    snprintf(text, sizeof text, LINREG, 2,
             "{\"type\": \"sgd\", \"learning_rate\": 0.1}", "y.csv",
             ", \"checkpoint\": {\"path\": \"ck2.bin\"}");
    train("ck2.json", text, NULL, &c);
    assert_int_equal(c.st, DG_OK);
    dg_train_result_free(&c.res);
    snprintf(text, sizeof text, LINREG, 2,
             "{\"type\": \"adam\", \"learning_rate\": 0.1}", "y.csv",
             ", \"checkpoint\": {\"path\": \"ck2.bin\"}");
    train("ck3.json", text, &opt, &c);
    assert_int_equal(c.st, DG_E_GRAPH);
    assert_non_null(strstr(c.err.msg, "not found in checkpoint"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgd),
        cmocka_unit_test(test_momentum),
        cmocka_unit_test(test_adam),
        cmocka_unit_test(test_adam_formula),
        cmocka_unit_test(test_deterministic_and_seed),
        cmocka_unit_test(test_row_mismatch),
        cmocka_unit_test(test_checkpoint),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
