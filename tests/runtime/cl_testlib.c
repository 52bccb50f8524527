/*
 * cl_testlib.c -- helpers shared by the OpenCL backend tests: opening GPU:0
 * (POCL "all" devices), host <-> device values, running one node's OpenCL
 * kernel next to its CPU kernel and comparing outputs with a normalised
 * error bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_testlib.h"
#include "dg_alloc.h"
#include "devices.h"


dg_device_list *g_list;
dgr_device g_dev;   /* GPU:0 */
int g_have;
dg_options g_opts;
static uint64_t g_rng = 12345;

double urand(void)
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

int cl_test_setup(void **state)
{
    (void)state;
    dg_options_init(&g_opts);
    g_opts.opencl_devices = "all";
    dg_error err;
    if (dg_devices_discover(&g_opts, &g_list, &err) != DG_OK)
        return -1;
    if (dg_devices_count(g_list) < 2)
        return 0;
    memset(&g_dev, 0, sizeof g_dev);
    g_dev.info = g_list->devs[1];
    g_dev.id = 1;
    dg_options traced = g_opts;
    traced.trace_path = "unused.json"; /* a profiling queue: event times */
    if (dgr_cl_device_open(&g_dev, &traced, &err) != DG_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    g_have = 1;
    return 0;
}

int g_cpu_checked, g_cpu_missing;

int cl_test_teardown(void **state)
{
    (void)state;
    fprintf(stderr, "compared with the CPU kernel: %d runs (%d without one)\n",
            g_cpu_checked, g_cpu_missing);
    if (g_have)
        dgr_cl_device_close(&g_dev);
    if (g_list) {
        dg_free(g_list->devs);
        dg_free(g_list);
    }
    dg_shutdown(); /* contexts, programs, clBLAST's cache (issue 25) */
    return 0;
}


/* ---- host <-> device values ------------------------------------------- */

dg_shape shp(int rank, ...)
{
    dg_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++)
        s.dims[i] = va_arg(ap, int);
    va_end(ap);
    return s;
}

int64_t ne(const dg_shape *s) { return dg_shape_numel(s); }

void store(void *p, dg_dtype t, int64_t i, double v)
{
    switch (t) {
    case DG_F32: ((float *)p)[i] = (float)v; break;
    case DG_F64: ((double *)p)[i] = v; break;
    case DG_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DG_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: ((uint8_t *)p)[i] = v != 0; break;
    }
}

double load(const void *p, dg_dtype t, int64_t i)
{
    switch (t) {
    case DG_F32: return ((const float *)p)[i];
    case DG_F64: return ((const double *)p)[i];
    case DG_I32: return ((const int32_t *)p)[i];
    case DG_I64: return (double)((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

dgr_value up(dgr_device *d, dg_dtype t, dg_shape s, const double *v)
{
    dgr_value r = {t, s, NULL};
    dg_error err;
    size_t n = (size_t)ne(&s), bytes = n * dg_dtype_size(t);
    r.buf = dgr_buffer_new(d, bytes, 0, &err);
    assert_non_null(r.buf);
    void *h = malloc(bytes + 8);
    for (size_t i = 0; i < n; i++)
        store(h, t, (int64_t)i, v[i]);
    assert_int_equal(d->be->write(d, r.buf, h, bytes, &err), DG_OK);
    free(h);
    return r;
}

double *down(dgr_device *d, const dgr_value *v)
{
    size_t n = (size_t)ne(&v->shape), bytes = n * dg_dtype_size(v->dtype);
    void *h = malloc(bytes + 8);
    dg_error err;
    assert_int_equal(d->be->read(d, v->buf, h, bytes, &err), DG_OK);
    double *r = malloc(sizeof *r * (n + 1));
    for (size_t i = 0; i < n; i++)
        r[i] = load(h, v->dtype, (int64_t)i);
    free(h);
    return r;
}

double *rnd(int64_t n, double lo, double hi)
{
    double *v = malloc(sizeof *v * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = lo + (hi - lo) * urand();
    return v;
}

/* ---- running one node ---------------------------------------------------- */


void tn_init(tnode *t, const char *op)
{
    memset(t, 0, sizeof *t);
    t->g = dgc_graph_new("test");
    assert_non_null(t->g);
    int o = dgc_op_find(op);
    assert_true(o >= 0);
    int32_t id = dgc_graph_add_node(t->g, "n", o, &t->err);
    assert_true(id >= 0);
    t->n = &t->g->nodes[id];
}

void tn_in(tnode *t, dg_dtype dt, dg_shape s, const double *v)
{
    t->in[t->n_in++] = up(&g_dev, dt, s, v);
}

void tn_out(tnode *t, dg_dtype dt, dg_shape s)
{
    t->ot[t->n_out].dtype = dt;
    t->ot[t->n_out].shape = s;
    t->n_out++;
}

dgr_device g_cpu; /* CPU:0 for running the CPU kernel alongside */

dgr_kctx make_ctx(tnode *t, dgr_device *d, dgr_value *in,
                         dgr_value *out)
{
    dgr_kctx k;
    memset(&k, 0, sizeof k);
    k.dev = d;
    k.g = t->g;
    k.node = t->n;
    k.node_id = 0;
    k.in = in;
    k.n_in = t->n_in;
    k.out = out;
    k.n_out = t->n_out;
    k.out_types = t->ot;
    k.err = &t->err;
    return k;
}

/* Run the OpenCL kernel, and the CPU kernel (when it exists) on copies of
 * the inputs taken before; every output must agree within a normalised
 * bound. */
dg_status tn_run(tnode *t)
{
    dgr_kernel_fn fn = dgr_kernel_find(&dgr_backend_opencl, t->n->op);
    assert_non_null(fn);
    dgr_kernel_fn cpu = dgr_kernel_find(&dgr_backend_cpu, t->n->op);
    dgr_value cin[12], cout[6];
    memset(cout, 0, sizeof cout);
    if (cpu) {
        g_cpu.be = &dgr_backend_cpu;
        snprintf(g_cpu.info.name, sizeof g_cpu.info.name, "CPU:0");
        for (int i = 0; i < t->n_in; i++) {
            cin[i] = t->in[i];
            size_t bytes = (size_t)ne(&t->in[i].shape) *
                           dg_dtype_size(t->in[i].dtype);
            dg_error err;
            cin[i].buf = dgr_buffer_new(&g_cpu, bytes, 0, &err);
            assert_non_null(cin[i].buf);
            assert_int_equal(g_dev.be->read(&g_dev, t->in[i].buf,
                                             cin[i].buf->host, bytes, &err),
                             DG_OK);
        }
    }
    dgr_kctx k = make_ctx(t, &g_dev, t->in, t->out);
    dg_status st = fn(&k);
    if (st != DG_OK)
        fprintf(stderr, "kernel %s: %s\n", dgc_op_name(t->n->op), t->err.msg);
    if (k.event)
        dgr_cl_event_release(k.event);
    if (!cpu)
        g_cpu_missing++;
    if (cpu && st == DG_OK) {
        g_cpu_checked++;
        dgr_kctx kc = make_ctx(t, &g_cpu, cin, cout);
        dg_status cs = cpu(&kc);
        if (cs != DG_OK)
            fprintf(stderr, "cpu kernel %s: %s\n", dgc_op_name(t->n->op),
                    t->err.msg);
        assert_int_equal(cs, DG_OK);
        for (int i = 0; i < t->n_out; i++) {
            int64_t n = ne(&t->out[i].shape);
            assert_int_equal(n, ne(&cout[i].shape));
            double *a = down(&g_dev, &t->out[i]);
            double *b = malloc(sizeof *b * (size_t)(n + 1));
            for (int64_t j = 0; j < n; j++)
                b[j] = load(cout[i].buf->host, cout[i].dtype, j);
            char what[96];
            snprintf(what, sizeof what, "%s output %d vs CPU kernel",
                     dgc_op_name(t->n->op), i);
            check_close(a, b, n, t->out[i].dtype == DG_F64 ? 1e-10 : 2e-5,
                        what);
            free(a);
            free(b);
        }
    }
    if (cpu) {
        for (int i = 0; i < t->n_in; i++)
            dgr_buffer_release(cin[i].buf);
        for (int i = 0; i < t->n_out; i++)
            dgr_buffer_release(cout[i].buf);
    }
    return st;
}

void tn_free(tnode *t)
{
    for (int i = 0; i < t->n_in; i++)
        dgr_buffer_release(t->in[i].buf);
    for (int i = 0; i < t->n_out; i++)
        dgr_buffer_release(t->out[i].buf);
    dgc_graph_free(t->g);
}

/* normalised error: max |a-b| / (1 + max |b|) */
void check_close(const double *got, const double *want, int64_t n,
                        double tol, const char *what)
{
    double mx = 0, err = 0;
    int64_t worst = -1;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(want[i]) && isnan(got[i]))
            continue;
        if (fabs(want[i]) > mx)
            mx = fabs(want[i]);
        double e = fabs(got[i] - want[i]);
        if (!(e <= err)) {
            err = e;
            worst = i;
        }
    }
    if (!(err / (1 + mx) <= tol)) {
        fprintf(stderr, "%s: error %g at %lld (got %g want %g)\n", what, err,
                (long long)worst, got[worst], want[worst]);
        fail();
    }
}

void check_out(tnode *t, int i, const double *want, double tol,
                      const char *what)
{
    double *got = down(&g_dev, &t->out[i]);
    check_close(got, want, ne(&t->out[i].shape), tol, what);
    free(got);
}

