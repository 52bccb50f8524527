/*
 * dag_testlib.c -- random DAG graphs, running them and comparing results,
 * shared by the executor tests (see dag_testlib.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "dag_testlib.h"

/* The generator's LCG (kept so the graphs of a seed never change). */
static uint32_t rnd(uint64_t *st, uint32_t n)
{
    *st = *st * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*st >> 33) % n;
}

void dag_cat(char **s, size_t *len, size_t *cap, const char *fmt, ...)
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

/* `, "device": "<d>"` for a pinned node, else nothing. */
static void device_attr(char **s, size_t *len, size_t *cap,
                        const dag_spec *sp, uint64_t *st)
{
    if (sp->n_devices > 0)
        dag_cat(s, len, cap, ", \"device\": \"%s\"",
            sp->devices[rnd(st, (uint32_t)sp->n_devices)]);
}

char *dag_graph(const dag_spec *sp)
{
    static const char *un[] = {"Sin", "Cos", "Tanh", "Sigmoid", "Neg", "Abs"};
    static const char *bin[] = {"Add", "Sub", "Mul", "Maximum", "Minimum"};
    uint64_t st = sp->seed;
    char *s = NULL;
    size_t len = 0, cap = 0;
    int total = sp->n_ops + 2;
    int *used = calloc((size_t)total, sizeof *used);
    assert_non_null(used);
    dag_cat(&s, &len, &cap, "{\"version\": 1, \"nodes\": [");
    for (int v = 0; v < 2; v++) {
        dag_cat(&s, &len, &cap,
            "{\"name\": \"n%d\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
            "\"float32\", \"shape\": [%lld], \"init\": {\"random_uniform\": "
            "{\"min\": -2, \"max\": 2}}}", v, (long long)sp->n_elems);
        device_attr(&s, &len, &cap, sp, &st);
        dag_cat(&s, &len, &cap, "},");
    }
    for (int i = 2; i < total; i++) {
        int lo = i - sp->window < 0 ? 0 : i - sp->window;
        int a = lo + (int)rnd(&st, (uint32_t)(i - lo));
        if (rnd(&st, 2)) {
            int b = lo + (int)rnd(&st, (uint32_t)(i - lo));
            dag_cat(&s, &len, &cap,
                "{\"name\": \"n%d\", \"op\": \"%s\", \"inputs\": [\"n%d\", "
                "\"n%d\"]", i, bin[rnd(&st, 5)], a, b);
            used[b] = 1;
        } else {
            dag_cat(&s, &len, &cap,
                "{\"name\": \"n%d\", \"op\": \"%s\", \"inputs\": [\"n%d\"]",
                i, un[rnd(&st, 6)], a);
        }
        device_attr(&s, &len, &cap, sp, &st);
        used[a] = 1;
        dag_cat(&s, &len, &cap, i + 1 < total ? "}," : "}");
    }
    dag_cat(&s, &len, &cap, "], \"fetch\": [");
    int first = 1;
    for (int i = 2; i < total; i++)
        if (!used[i] || i % 7 == 0) {
            dag_cat(&s, &len, &cap, "%s\"n%d\"", first ? "" : ", ", i);
            first = 0;
        }
    dag_cat(&s, &len, &cap, "]");
    if (sp->rules)
        dag_cat(&s, &len, &cap, ", \"placement\": {\"rules\": %s}", sp->rules);
    dag_cat(&s, &len, &cap, "}");
    free(used);
    return s;
}

static size_t value_bytes(const dg_tensor *t)
{
    return (size_t)dg_shape_numel(&t->shape) * dg_dtype_size(t->dtype);
}

dag_results dag_run(const char *text, const dg_options *o,
                    const dg_device_list *dl, int runs)
{
    dg_error err;
    dg_graph *g = dg_graph_load("dag.json", text, strlen(text), &err);
    if (!g)
        fail_msg("%s", err.msg);
    dg_program *p = dg_compile(g, o, dl, &err);
    if (!p)
        fail_msg("%s", err.msg);
    dg_session *s = dg_session_new(p, o, &err);
    if (!s)
        fail_msg("%s", err.msg);
    dag_results first = {NULL, 0};
    for (int k = 0; k < runs; k++) {
        dag_results cur = {NULL, 0};
        if (dg_session_run(s, &cur.r, &cur.n, &err) != DG_OK)
            fail_msg("run %d: %s", k, err.msg);
        if (k == 0) {
            first = cur;
            continue;
        }
        assert_int_equal(cur.n, first.n);
        for (int i = 0; i < cur.n; i++) {
            size_t nb = value_bytes(first.r[i].value);
            assert_int_equal(value_bytes(cur.r[i].value), nb);
            if (memcmp(cur.r[i].value->data, first.r[i].value->data, nb))
                fail_msg("run %d: %s differs from run 0", k, cur.r[i].name);
        }
        dg_fetch_results_free(cur.r, cur.n);
    }
    dg_session_free(s);
    dg_program_free(p);
    return first;
}

void dag_compare(const dag_results *got, const dag_results *want,
                 const char *what)
{
    assert_int_equal(got->n, want->n);
    for (int i = 0; i < got->n; i++) {
        const dg_tensor *ta = got->r[i].value, *tb = want->r[i].value;
        assert_int_equal(ta->dtype, DG_F32);
        assert_int_equal(tb->dtype, DG_F32);
        int64_t n = dg_shape_numel(&tb->shape);
        assert_int_equal(dg_shape_numel(&ta->shape), n);
        const float *a = ta->data, *b = tb->data;
        double worst = 0, scale = 1;
        for (int64_t j = 0; j < n; j++) {
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

void dag_results_free(dag_results *r)
{
    dg_fetch_results_free(r->r, r->n);
    r->r = NULL;
    r->n = 0;
}

void dag_set_queues(int q)
{
    if (q <= 0) {
        unsetenv("DGRUN_CL_QUEUES");
        return;
    }
    char buf[16];
    snprintf(buf, sizeof buf, "%d", q);
    setenv("DGRUN_CL_QUEUES", buf, 1);
}
