/*
 * test_cl.c -- the OpenCL backend: discovery options, device open, every
 * OpenCL kernel against a reference (NumPy-like semantics computed here in
 * double) on random and odd shapes, broadcasting, every reduction axis set,
 * all MatMul transpose flags, two devices and virtual GPUs exchanging
 * buffers, the caching allocator (reuse, cap, out of memory, reserved
 * arena) and the on-disk program cache across processes.  Skips when there
 * is no OpenCL platform.  Run with POCL_DEVICES="pthread pthread".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cl_internal.h"
#include "dg_alloc.h"
#include "../compiler/devices.h"

extern char **environ;

/* Defaults (SPEC 1) in case the library's definition is not linked in; the
 * library's strong symbol wins when it is. */
__attribute__((weak)) void dg_options_init(dg_options *o)
{
    memset(o, 0, sizeof *o);
    o->allow_soft_placement = -1;
    o->colocate = -1;
    o->steps = -1;
    o->repeat = 1;
    o->opencl_devices = "gpu";
    o->virtual_gpus = 1;
    o->gpu_memory_fraction = 1.0;
    o->allow_growth = 1;
    o->assume_gpus = -1;
}

static dg_device_list *g_list;
static dgr_device g_dev;   /* GPU:0 */
static int g_have;
static dg_options g_opts;
static uint64_t g_rng = 12345;

static double urand(void)
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

static int setup(void **state)
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
    if (dgr_cl_device_open(&g_dev, &g_opts, &err) != DG_OK) {
        fprintf(stderr, "open: %s\n", err.msg);
        return -1;
    }
    g_have = 1;
    return 0;
}

static int g_cpu_checked, g_cpu_missing;

static int teardown(void **state)
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
    return 0;
}

#define NEED_CL() do { if (!g_have) skip(); } while (0)

/* ---- host <-> device values ------------------------------------------- */

static dg_shape shp(int rank, ...)
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

static int64_t ne(const dg_shape *s) { return dg_shape_numel(s); }

static void store(void *p, dg_dtype t, int64_t i, double v)
{
    switch (t) {
    case DG_F32: ((float *)p)[i] = (float)v; break;
    case DG_F64: ((double *)p)[i] = v; break;
    case DG_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DG_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: ((uint8_t *)p)[i] = v != 0; break;
    }
}

static double load(const void *p, dg_dtype t, int64_t i)
{
    switch (t) {
    case DG_F32: return ((const float *)p)[i];
    case DG_F64: return ((const double *)p)[i];
    case DG_I32: return ((const int32_t *)p)[i];
    case DG_I64: return (double)((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

static dgr_value up(dgr_device *d, dg_dtype t, dg_shape s, const double *v)
{
    dgr_value r = {t, s, NULL};
    dg_error err;
    size_t n = (size_t)ne(&s), bytes = n * dg_dtype_size(t);
    r.buf = dgr_buffer_new(d, bytes, &err);
    assert_non_null(r.buf);
    void *h = malloc(bytes + 8);
    for (size_t i = 0; i < n; i++)
        store(h, t, (int64_t)i, v[i]);
    assert_int_equal(d->ops->write(d, r.buf, h, bytes, &err), DG_OK);
    free(h);
    return r;
}

static double *down(dgr_device *d, const dgr_value *v)
{
    size_t n = (size_t)ne(&v->shape), bytes = n * dg_dtype_size(v->dtype);
    void *h = malloc(bytes + 8);
    dg_error err;
    assert_int_equal(d->ops->read(d, v->buf, h, bytes, &err), DG_OK);
    double *r = malloc(sizeof *r * (n + 1));
    for (size_t i = 0; i < n; i++)
        r[i] = load(h, v->dtype, (int64_t)i);
    free(h);
    return r;
}

static double *rnd(int64_t n, double lo, double hi)
{
    double *v = malloc(sizeof *v * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = lo + (hi - lo) * urand();
    return v;
}

/* ---- running one node ---------------------------------------------------- */

typedef struct tnode {
    dgc_graph *g;
    dgc_node *n;
    dgr_value in[12];
    int n_in;
    dgr_value out[3];
    dgc_ttype ot[3];
    int n_out;
    dg_error err;
} tnode;

static void tn_init(tnode *t, const char *op)
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

static void tn_in(tnode *t, dg_dtype dt, dg_shape s, const double *v)
{
    t->in[t->n_in++] = up(&g_dev, dt, s, v);
}

static void tn_out(tnode *t, dg_dtype dt, dg_shape s)
{
    t->ot[t->n_out].dtype = dt;
    t->ot[t->n_out].shape = s;
    t->n_out++;
}

static dgr_device g_cpu; /* CPU:0 for running the CPU kernel alongside */

static void check_close(const double *got, const double *want, int64_t n,
                        double tol, const char *what);

static dgr_kctx make_ctx(tnode *t, dgr_device *d, dgr_value *in,
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
static dg_status tn_run(tnode *t)
{
    dgr_kernel_fn fn = dgr_cl_kernel(t->n->op);
    assert_non_null(fn);
    dgr_kernel_fn cpu = dgr_cpu_kernel(t->n->op);
    dgr_value cin[12], cout[3];
    memset(cout, 0, sizeof cout);
    if (cpu) {
        g_cpu.ops = &dgr_cpu_device_ops;
        snprintf(g_cpu.info.name, sizeof g_cpu.info.name, "CPU:0");
        for (int i = 0; i < t->n_in; i++) {
            cin[i] = t->in[i];
            size_t bytes = (size_t)ne(&t->in[i].shape) *
                           dg_dtype_size(t->in[i].dtype);
            dg_error err;
            cin[i].buf = dgr_buffer_new(&g_cpu, bytes, &err);
            assert_non_null(cin[i].buf);
            assert_int_equal(g_dev.ops->read(&g_dev, t->in[i].buf,
                                             cin[i].buf->host, bytes, &err),
                             DG_OK);
        }
    }
    dgr_kctx k = make_ctx(t, &g_dev, t->in, t->out);
    dg_status st = fn(&k);
    if (st != DG_OK)
        fprintf(stderr, "kernel %s: %s\n", dgc_op_name(t->n->op), t->err.msg);
    if (k.cl_event)
        dgr_cl_event_release(k.cl_event);
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

static void tn_free(tnode *t)
{
    for (int i = 0; i < t->n_in; i++)
        dgr_buffer_release(t->in[i].buf);
    for (int i = 0; i < t->n_out; i++)
        dgr_buffer_release(t->out[i].buf);
    dgc_graph_free(t->g);
}

/* normalised error: max |a-b| / (1 + max |b|) */
static void check_close(const double *got, const double *want, int64_t n,
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

static void check_out(tnode *t, int i, const double *want, double tol,
                      const char *what)
{
    double *got = down(&g_dev, &t->out[i]);
    check_close(got, want, ne(&t->out[i].shape), tol, what);
    free(got);
}

/* ---- reference broadcasting ---------------------------------------------- */

static int64_t bidx(int64_t i, const dg_shape *out, const dg_shape *in)
{
    int64_t off = 0, st = 1;
    for (int k = out->rank - 1; k >= 0; k--) {
        int64_t c = i % out->dims[k];
        i /= out->dims[k];
        int ik = k - (out->rank - in->rank);
        if (ik >= 0) {
            if (in->dims[ik] != 1)
                off += c * st;
            st *= in->dims[ik];
        }
    }
    return off;
}

static double ref_bin(const char *op, double a, double b)
{
    if (!strcmp(op, "Add") || !strcmp(op, "BiasAdd")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) return a / b;
    if (!strcmp(op, "Pow")) return pow(a, b);
    if (!strcmp(op, "Maximum")) return a > b ? a : b;
    if (!strcmp(op, "Minimum")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "ReluGrad")) return b > 0 ? a : 0;
    if (!strcmp(op, "SigmoidGrad")) return b * a * (1 - a);
    if (!strcmp(op, "TanhGrad")) return b * (1 - a * a);
    return NAN;
}

static double ref_un(const char *op, double v)
{
    if (!strcmp(op, "Neg")) return -v;
    if (!strcmp(op, "Abs")) return fabs(v);
    if (!strcmp(op, "Sin")) return sin(v);
    if (!strcmp(op, "Cos")) return cos(v);
    if (!strcmp(op, "Exp")) return exp(v);
    if (!strcmp(op, "Log")) return log(v);
    if (!strcmp(op, "Sqrt")) return sqrt(v);
    if (!strcmp(op, "Square")) return v * v;
    if (!strcmp(op, "Tanh")) return tanh(v);
    if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-v));
    if (!strcmp(op, "Relu")) return v > 0 ? v : 0;
    if (!strcmp(op, "Identity")) return v;
    return NAN;
}

static double tol_of(dg_dtype t) { return t == DG_F64 ? 1e-12 : 2e-5; }

static int fp64(void) { return g_dev.info.fp64; }

/* ---- tests: discovery ---------------------------------------------------- */

static void test_discover(void **state)
{
    (void)state;
    NEED_CL();
    dg_options o;
    dg_options_init(&o);
    dg_device_list *l;
    dg_error err;
    o.opencl_devices = "none";
    assert_int_equal(dg_devices_discover(&o, &l, &err), DG_OK);
    assert_int_equal(dg_devices_count(l), 1);
    assert_string_equal(dg_devices_get(l, 0)->name,
                        "/job:localhost/replica:0/task:0/device:CPU:0");
    dg_devices_free(l);

    o.opencl_devices = "all";
    assert_int_equal(dg_devices_discover(&o, &l, &err), DG_OK);
    int n_all = dg_devices_count(l) - 1;
    assert_true(n_all >= 1);
    const dg_device_info *g = dg_devices_get(l, 1);
    assert_string_equal(g->name, "/job:localhost/replica:0/task:0/device:GPU:0");
    assert_int_equal(g->type, DG_DEV_GPU);
    assert_true(g->mem_bytes > 0);
    assert_true(strlen(g->cl_name) > 0);
    if (strncmp(g->cl_version, "OpenCL", 6) != 0)
        fprintf(stderr, "cl_version '%s' name '%s' platform '%s'\n", g->cl_version, g->cl_name, g->platform);
    assert_true(strncmp(g->cl_version, "OpenCL", 6) == 0);
    uint64_t mem = g->mem_bytes;
    dg_devices_free(l);

    o.visible_devices = "";
    assert_int_equal(dg_devices_discover(&o, &l, &err), DG_OK);
    assert_int_equal(dg_devices_count(l), 1);
    dg_devices_free(l);

    o.visible_devices = "0";
    o.virtual_gpus = 2;
    assert_int_equal(dg_devices_discover(&o, &l, &err), DG_OK);
    assert_int_equal(dg_devices_count(l), 3);
    assert_int_equal(dg_devices_get(l, 2)->index, 1);
    assert_int_equal(dg_devices_get(l, 2)->physical, 0);
    assert_true(dg_devices_get(l, 2)->mem_bytes == mem / 2);
    dg_devices_free(l);
    o.virtual_gpus = 1;

    if (n_all >= 2) {
        o.visible_devices = "1,0";
        assert_int_equal(dg_devices_discover(&o, &l, &err), DG_OK);
        assert_int_equal(dg_devices_count(l), 3);
        assert_int_equal(dg_devices_get(l, 1)->physical, 1);
        assert_int_equal(dg_devices_get(l, 1)->index, 0);
        assert_int_equal(dg_devices_get(l, 2)->physical, 0);
        dg_devices_free(l);
    }
    const char *bad[] = {"7", "x", "0,0", "0,", "-1", "0;1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.visible_devices = bad[i];
        assert_int_equal(dg_devices_discover(&o, &l, &err), DG_E_USAGE);
    }
    o.visible_devices = NULL;
    o.opencl_devices = "gpus";
    assert_int_equal(dg_devices_discover(&o, &l, &err), DG_E_USAGE);
}

/* ---- tests: elementwise -------------------------------------------------- */

static void run_unary(const char *op, dg_dtype dt, dg_shape s)
{
    tnode t;
    tn_init(&t, op);
    int64_t n = ne(&s);
    int pos = !strcmp(op, "Log") || !strcmp(op, "Sqrt");
    double *x = rnd(n, pos ? 0.1 : -3, 3);
    tn_in(&t, dt, s, x);
    tn_out(&t, dt, s);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        w[i] = ref_un(op, (dt == DG_F32 ? (double)(float)x[i] : x[i]));
    check_out(&t, 0, w, tol_of(dt), op);
    free(x);
    free(w);
    tn_free(&t);
}

static void test_unary(void **state)
{
    (void)state;
    NEED_CL();
    const char *ops[] = {"Neg", "Abs", "Sin", "Cos", "Exp", "Log", "Sqrt",
                         "Square", "Tanh", "Sigmoid", "Relu", "Identity"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        run_unary(ops[i], DG_F32, shp(2, 7, 37));
        run_unary(ops[i], DG_F32, shp(0));
        if (fp64())
            run_unary(ops[i], DG_F64, shp(1, 1001));
    }
}

static void run_binary(const char *op, dg_dtype dt, dg_shape sa, dg_shape sb,
                       dg_shape so)
{
    tnode t;
    tn_init(&t, op);
    int64_t na = ne(&sa), nb = ne(&sb), no = ne(&so);
    int pw = !strcmp(op, "Pow");
    double *a = rnd(na, pw ? 0.5 : -2, 2), *b = rnd(nb, -2, 2);
    if (!strcmp(op, "Div"))
        for (int64_t i = 0; i < nb; i++)
            b[i] = b[i] < 0 ? b[i] - 0.5 : b[i] + 0.5;
    if (!strcmp(op, "Equal"))
        for (int64_t i = 0; i < na; i++)
            a[i] = (i % 3 == 0 && nb) ? b[bidx(i, &sa, &sb) % nb] : a[i];
    if (dt == DG_F32) {
        for (int64_t i = 0; i < na; i++) a[i] = (float)a[i];
        for (int64_t i = 0; i < nb; i++) b[i] = (float)b[i];
    }
    tn_in(&t, dt, sa, a);
    tn_in(&t, dt, sb, b);
    dg_dtype odt = !strcmp(op, "Equal") ? DG_BOOL : dt;
    tn_out(&t, odt, so);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(no + 1));
    for (int64_t i = 0; i < no; i++)
        w[i] = ref_bin(op, a[bidx(i, &so, &sa)], b[bidx(i, &so, &sb)]);
    check_out(&t, 0, w, tol_of(dt), op);
    free(a);
    free(b);
    free(w);
    tn_free(&t);
}

static void test_binary(void **state)
{
    (void)state;
    NEED_CL();
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Maximum",
                         "Minimum", "Equal", "ReluGrad", "SigmoidGrad",
                         "TanhGrad"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        run_binary(ops[i], DG_F32, shp(2, 13, 29), shp(2, 13, 29), shp(2, 13, 29));
        run_binary(ops[i], DG_F32, shp(3, 3, 1, 5), shp(2, 4, 5), shp(3, 3, 4, 5));
        run_binary(ops[i], DG_F32, shp(0), shp(2, 3, 7), shp(2, 3, 7));
        run_binary(ops[i], DG_F32, shp(2, 5, 1), shp(0), shp(2, 5, 1));
        run_binary(ops[i], DG_F32, shp(4, 2, 1, 3, 1), shp(4, 1, 6, 1, 5),
                   shp(4, 2, 6, 3, 5));
        if (fp64())
            run_binary(ops[i], DG_F64, shp(2, 300, 1), shp(1, 7), shp(2, 300, 7));
    }
    run_binary("BiasAdd", DG_F32, shp(3, 2, 9, 11), shp(1, 11), shp(3, 2, 9, 11));
}

static void test_addn_fill_cast(void **state)
{
    (void)state;
    NEED_CL();
    dg_shape s = shp(2, 17, 3);
    tnode t;
    tn_init(&t, "AddN");
    double *x[4];
    for (int i = 0; i < 4; i++) {
        x[i] = rnd(51, -1, 1);
        for (int j = 0; j < 51; j++) x[i][j] = (float)x[i][j];
        tn_in(&t, DG_F32, s, x[i]);
    }
    tn_out(&t, DG_F32, s);
    assert_int_equal(tn_run(&t), DG_OK);
    double w[51];
    for (int j = 0; j < 51; j++)
        w[j] = x[0][j] + x[1][j] + x[2][j] + x[3][j];
    check_out(&t, 0, w, 1e-5, "AddN");
    tn_free(&t);

    const char *fills[] = {"ZerosLike", "OnesLike"};
    for (int f = 0; f < 2; f++) {
        tn_init(&t, fills[f]);
        tn_in(&t, DG_F32, s, x[0]);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        for (int j = 0; j < 51; j++) w[j] = f;
        check_out(&t, 0, w, 0, fills[f]);
        tn_free(&t);
    }
    for (int j = 0; j < 51; j++)
        x[0][j] = (float)(x[0][j] * 10 - (j % 4 == 0 ? x[0][j] * 10 : 0));
    for (int to = 0; to < DG_DTYPE_COUNT; to++) {
        tn_init(&t, "Cast");
        dgc_node_set_dtype(t.n, "dtype", (dg_dtype)to);
        tn_in(&t, DG_F32, s, x[0]);
        tn_out(&t, (dg_dtype)to, s);
        assert_int_equal(tn_run(&t), DG_OK);
        for (int j = 0; j < 51; j++)
            w[j] = to == DG_BOOL ? x[0][j] != 0
                 : to >= DG_I32 ? trunc(x[0][j]) : x[0][j];
        check_out(&t, 0, w, 1e-6, "Cast");
        tn_free(&t);
    }
    for (int i = 0; i < 4; i++)
        free(x[i]);
}

/* ---- tests: reductions --------------------------------------------------- */

static void ref_reduce(const double *x, const dg_shape *s, const int *mask,
                       int op, double *out, int64_t n_out)
{
    for (int64_t o = 0; o < n_out; o++)
        out[o] = op == 2 ? -INFINITY : 0;
    int64_t cnt = 1;
    for (int d = 0; d < s->rank; d++)
        if (mask[d]) cnt *= s->dims[d];
    for (int64_t i = 0; i < ne(s); i++) {
        int64_t rem = i, o = 0, mul = 1;
        for (int d = s->rank - 1; d >= 0; d--) {
            int64_t c = rem % s->dims[d];
            rem /= s->dims[d];
            if (!mask[d]) {
                o += c * mul;
                mul *= s->dims[d];
            }
        }
        if (op == 2)
            out[o] = x[i] > out[o] ? x[i] : out[o];
        else
            out[o] += x[i];
    }
    if (op == 1)
        for (int64_t o = 0; o < n_out; o++) out[o] /= (double)cnt;
}

static void run_reduce(const char *op, dg_dtype dt, dg_shape s, int bits,
                       int keep)
{
    int opi = !strcmp(op, "Sum") ? 0 : !strcmp(op, "Mean") ? 1 : 2;
    tnode t;
    tn_init(&t, op);
    int64_t axes[8], na = 0;
    int mask[8];
    dg_shape os = {0, {0}};
    for (int d = 0; d < s.rank; d++) {
        mask[d] = (bits >> d) & 1;
        if (mask[d])
            axes[na++] = d - (d % 2 ? s.rank : 0); /* some negative */
        if (!mask[d])
            os.dims[os.rank++] = s.dims[d];
        else if (keep)
            os.dims[os.rank++] = 1;
    }
    if (bits >= 0) {
        dgc_node_set_ints(t.n, "axis", axes, (int)na);
    } else {
        for (int d = 0; d < s.rank; d++) mask[d] = 1;
        os.rank = 0;
    }
    int64_t n = ne(&s), no = ne(&os);
    double *x = rnd(n, -2, 2);
    if (dt == DG_F32)
        for (int64_t i = 0; i < n; i++) x[i] = (float)x[i];
    tn_in(&t, dt, s, x);
    tn_out(&t, dt, os);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(no + 1));
    ref_reduce(x, &s, mask, opi, w, no);
    check_out(&t, 0, w, dt == DG_F32 ? 1e-5 : 1e-12, op);
    free(x);
    free(w);
    tn_free(&t);
}

static void test_reduce(void **state)
{
    (void)state;
    NEED_CL();
    const char *ops[] = {"Sum", "Mean", "Max"};
    for (int o = 0; o < 3; o++) {
        for (int bits = 0; bits < 16; bits++)
            run_reduce(ops[o], DG_F32, shp(4, 3, 4, 5, 2), bits, bits & 1);
        run_reduce(ops[o], DG_F32, shp(2, 3, 1000), 2, 0);
        run_reduce(ops[o], DG_F32, shp(2, 777, 3), 1, 1);
        run_reduce(ops[o], DG_F32, shp(3, 2, 300, 5), -1, 0);
        if (fp64())
            run_reduce(ops[o], DG_F64, shp(3, 40, 3, 41), 5, 0);
    }
}

static void test_sum_to_broadcast_like_max_grad(void **state)
{
    (void)state;
    NEED_CL();
    /* SumTo: [4, 3, 5] -> like [3, 1] */
    dg_shape xs = shp(3, 4, 3, 5), ls = shp(2, 3, 1);
    tnode t;
    tn_init(&t, "SumTo");
    double *x = rnd(60, -1, 1), like[3] = {0, 0, 0};
    for (int i = 0; i < 60; i++) x[i] = (float)x[i];
    tn_in(&t, DG_F32, xs, x);
    tn_in(&t, DG_F32, ls, like);
    tn_out(&t, DG_F32, ls);
    assert_int_equal(tn_run(&t), DG_OK);
    double w[60];
    int mask[3] = {1, 0, 1};
    ref_reduce(x, &xs, mask, 0, w, 3);
    check_out(&t, 0, w, 1e-5, "SumTo");
    tn_free(&t);

    /* BroadcastLike: [3] (reduced over axes 0, 2 of [4, 3, 5]), mean */
    tn_init(&t, "BroadcastLike");
    int64_t ax[2] = {0, -1};
    dgc_node_set_ints(t.n, "axis", ax, 2);
    dgc_node_set_bool(t.n, "mean", 1);
    double r[3] = {1, 2, 3};
    tn_in(&t, DG_F32, shp(1, 3), r);
    tn_in(&t, DG_F32, xs, x);
    tn_out(&t, DG_F32, xs);
    assert_int_equal(tn_run(&t), DG_OK);
    for (int i = 0; i < 60; i++) w[i] = r[(i / 5) % 3] / 20.0;
    check_out(&t, 0, w, 1e-6, "BroadcastLike");
    tn_free(&t);

    /* MaxGrad over axis 1 of [4, 3, 5] with ties */
    for (int i = 0; i < 60; i += 7) x[i] = 5;
    double y[20], dy[20];
    int m1[3] = {0, 1, 0};
    ref_reduce(x, &xs, m1, 2, y, 20);
    for (int i = 0; i < 20; i++) dy[i] = i + 1;
    tn_init(&t, "MaxGrad");
    dgc_node_set_int(t.n, "axis", 1);
    tn_in(&t, DG_F32, xs, x);
    tn_in(&t, DG_F32, shp(2, 4, 5), y);
    tn_in(&t, DG_F32, shp(2, 4, 5), dy);
    tn_out(&t, DG_F32, xs);
    assert_int_equal(tn_run(&t), DG_OK);
    for (int o = 0; o < 20; o++) {
        int a = o / 5, c = o % 5, cnt = 0;
        for (int b = 0; b < 3; b++) cnt += x[a * 15 + b * 5 + c] == y[o];
        for (int b = 0; b < 3; b++) {
            int i = a * 15 + b * 5 + c;
            w[i] = x[i] == y[o] ? dy[o] / cnt : 0;
        }
    }
    check_out(&t, 0, w, 1e-6, "MaxGrad");
    tn_free(&t);
    free(x);
}

/* ---- tests: shape ops ---------------------------------------------------- */

static void run_transpose(dg_shape s, const int64_t *perm)
{
    tnode t;
    tn_init(&t, "Transpose");
    dgc_node_set_ints(t.n, "perm", perm, s.rank);
    int64_t n = ne(&s);
    double *x = rnd(n, -1, 1);
    for (int64_t i = 0; i < n; i++) x[i] = (float)x[i];
    dg_shape os = s;
    for (int d = 0; d < s.rank; d++) os.dims[d] = s.dims[perm[d]];
    tn_in(&t, DG_F32, s, x);
    tn_out(&t, DG_F32, os);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(n + 1));
    int64_t st[8], acc = 1;
    for (int d = s.rank - 1; d >= 0; d--) { st[d] = acc; acc *= s.dims[d]; }
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, off = 0;
        for (int d = s.rank - 1; d >= 0; d--) {
            off += (rem % os.dims[d]) * st[perm[d]];
            rem /= os.dims[d];
        }
        w[i] = x[off];
    }
    check_out(&t, 0, w, 0, "Transpose");
    free(w);
    free(x);
    tn_free(&t);
}

static void test_transpose_reshape(void **state)
{
    (void)state;
    NEED_CL();
    int64_t p2[] = {1, 0};
    run_transpose(shp(2, 33, 65), p2);
    run_transpose(shp(2, 1, 7), p2);
    int64_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                           {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int i = 0; i < 6; i++)
        run_transpose(shp(3, 3, 17, 5), perms[i]);
    int64_t p4[] = {3, 1, 0, 2};
    run_transpose(shp(4, 2, 3, 4, 5), p4);

    /* Reshape / Identity alias the input: no copy */
    tnode t;
    tn_init(&t, "Reshape");
    double x[6] = {1, 2, 3, 4, 5, 6};
    tn_in(&t, DG_F32, shp(2, 2, 3), x);
    tn_out(&t, DG_F32, shp(1, 6));
    assert_int_equal(tn_run(&t), DG_OK);
    assert_ptr_equal(t.out[0].buf, t.in[0].buf);
    assert_int_equal(t.out[0].shape.rank, 1);
    check_out(&t, 0, x, 0, "Reshape");
    tn_free(&t);
}

/* ---- tests: nn ----------------------------------------------------------- */

static void test_softmax_xent(void **state)
{
    (void)state;
    NEED_CL();
    int shapes[][2] = {{5, 7}, {3, 1000}, {1, 1}};
    for (int si = 0; si < 3; si++) {
        int N = shapes[si][0], C = shapes[si][1];
        dg_shape s = shp(2, N, C);
        double *x = rnd(N * C, -4, 4), *lab = rnd(N * C, 0, 1);
        double *sm = malloc(sizeof *sm * (size_t)(N * C)), loss[8];
        double *bp = malloc(sizeof *bp * (size_t)(N * C));
        double sl[8], sbp_dummy = 0;
        (void)sbp_dummy;
        double ilab[8];
        for (int i = 0; i < N * C; i++) x[i] = (float)x[i], lab[i] = (float)lab[i];
        for (int r = 0; r < N; r++) {
            double m = -INFINITY, sum = 0;
            for (int j = 0; j < C; j++) m = fmax(m, x[r * C + j]);
            for (int j = 0; j < C; j++) sum += exp(x[r * C + j] - m);
            double lse = m + log(sum);
            loss[r] = 0;
            for (int j = 0; j < C; j++) {
                sm[r * C + j] = exp(x[r * C + j] - lse);
                loss[r] += lab[r * C + j] * (lse - x[r * C + j]);
                bp[r * C + j] = sm[r * C + j] - lab[r * C + j];
            }
            ilab[r] = (r * 3) % C;
            sl[r] = lse - x[r * C + (int)ilab[r]];
        }
        tnode t;
        tn_init(&t, "Softmax");
        tn_in(&t, DG_F32, s, x);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        check_out(&t, 0, sm, 1e-5, "Softmax");
        tn_free(&t);

        tn_init(&t, "SoftmaxCrossEntropyWithLogits");
        tn_in(&t, DG_F32, s, x);
        tn_in(&t, DG_F32, s, lab);
        tn_out(&t, DG_F32, shp(1, N));
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        check_out(&t, 0, loss, 1e-5, "xent loss");
        check_out(&t, 1, bp, 1e-5, "xent backprop");
        tn_free(&t);

        for (int l64 = 0; l64 < 2; l64++) {
            tn_init(&t, "SparseSoftmaxCrossEntropyWithLogits");
            tn_in(&t, DG_F32, s, x);
            tn_in(&t, l64 ? DG_I64 : DG_I32, shp(1, N), ilab);
            tn_out(&t, DG_F32, shp(1, N));
            tn_out(&t, DG_F32, s);
            assert_int_equal(tn_run(&t), DG_OK);
            check_out(&t, 0, sl, 1e-5, "sparse xent loss");
            for (int r = 0; r < N; r++)
                for (int j = 0; j < C; j++)
                    bp[r * C + j] = sm[r * C + j] - (j == (int)ilab[r]);
            check_out(&t, 1, bp, 1e-5, "sparse xent backprop");
            tn_free(&t);
        }

        /* SoftmaxGrad(y, dy) */
        tn_init(&t, "SoftmaxGrad");
        tn_in(&t, DG_F32, s, sm);
        tn_in(&t, DG_F32, s, lab);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        for (int r = 0; r < N; r++) {
            double acc = 0;
            for (int j = 0; j < C; j++)
                acc += (float)sm[r * C + j] * lab[r * C + j];
            for (int j = 0; j < C; j++)
                bp[r * C + j] = (lab[r * C + j] - acc) * (float)sm[r * C + j];
        }
        check_out(&t, 0, bp, 1e-5, "SoftmaxGrad");
        tn_free(&t);

        /* ArgMax over axis 1 and 0 */
        for (int ax = 0; ax < 3; ax++) {
            tn_init(&t, "ArgMax");
            dgc_node_set_int(t.n, "axis", ax == 2 ? -1 : ax);
            if (ax == 2)
                dgc_node_set_dtype(t.n, "output_type", DG_I32);
            tn_in(&t, DG_F32, s, x);
            int no = ax ? N : C;
            tn_out(&t, ax == 2 ? DG_I32 : DG_I64, shp(1, no));
            assert_int_equal(tn_run(&t), DG_OK);
            double am[1000];
            for (int o = 0; o < no; o++) {
                int best = 0, cnt = ax ? C : N;
                for (int q = 1; q < cnt; q++) {
                    double v = ax ? x[o * C + q] : x[q * C + o];
                    double b = ax ? x[o * C + best] : x[best * C + o];
                    if (v > b) best = q;
                }
                am[o] = best;
            }
            check_out(&t, 0, am, 0, "ArgMax");
            tn_free(&t);
        }
        free(x);
        free(lab);
        free(sm);
        free(bp);
    }
}

static void test_batchnorm(void **state)
{
    (void)state;
    NEED_CL();
    int R = 37, C = 6;
    dg_shape s = shp(3, 37, 1, 6), cs = shp(1, 6);
    double *x = rnd(R * C, -2, 3), *dy = rnd(R * C, -1, 1);
    double *sc = rnd(C, 0.5, 1.5), *of = rnd(C, -1, 1);
    for (int i = 0; i < R * C; i++) x[i] = (float)x[i], dy[i] = (float)dy[i];
    for (int i = 0; i < C; i++) sc[i] = (float)sc[i], of[i] = (float)of[i];
    double mean[6] = {0}, var[6] = {0}, y[222], dx[222], dsc[6] = {0}, dof[6] = {0};
    double eps = 1e-3;
    for (int c = 0; c < C; c++) {
        for (int r = 0; r < R; r++) mean[c] += x[r * C + c] / R;
        for (int r = 0; r < R; r++)
            var[c] += (x[r * C + c] - mean[c]) * (x[r * C + c] - mean[c]) / R;
        double rs = 1 / sqrt(var[c] + eps);
        for (int r = 0; r < R; r++) {
            double xh = (x[r * C + c] - mean[c]) * rs;
            y[r * C + c] = xh * sc[c] + of[c];
            dof[c] += dy[r * C + c];
            dsc[c] += dy[r * C + c] * xh;
        }
        for (int r = 0; r < R; r++) {
            double xh = (x[r * C + c] - mean[c]) * rs;
            dx[r * C + c] = sc[c] * rs / R * (R * dy[r * C + c] - dof[c] - xh * dsc[c]);
        }
    }
    tnode t;
    tn_init(&t, "BatchNorm");
    tn_in(&t, DG_F32, s, x);
    tn_in(&t, DG_F32, cs, sc);
    tn_in(&t, DG_F32, cs, of);
    tn_out(&t, DG_F32, s);
    tn_out(&t, DG_F32, cs);
    tn_out(&t, DG_F32, cs);
    assert_int_equal(tn_run(&t), DG_OK);
    check_out(&t, 0, y, 1e-4, "BatchNorm y");
    check_out(&t, 1, mean, 1e-5, "BatchNorm mean");
    check_out(&t, 2, var, 1e-5, "BatchNorm var");
    tn_free(&t);

    tn_init(&t, "BatchNormGrad");
    tn_in(&t, DG_F32, s, dy);
    tn_in(&t, DG_F32, s, x);
    tn_in(&t, DG_F32, cs, sc);
    tn_in(&t, DG_F32, cs, mean);
    tn_in(&t, DG_F32, cs, var);
    tn_out(&t, DG_F32, s);
    tn_out(&t, DG_F32, cs);
    tn_out(&t, DG_F32, cs);
    assert_int_equal(tn_run(&t), DG_OK);
    check_out(&t, 0, dx, 1e-4, "BatchNormGrad dx");
    check_out(&t, 1, dsc, 1e-4, "BatchNormGrad dscale");
    check_out(&t, 2, dof, 1e-4, "BatchNormGrad doffset");
    tn_free(&t);
    free(x); free(dy); free(sc); free(of);
}

/* ---- tests: state ops ---------------------------------------------------- */

static void test_state_ops(void **state)
{
    (void)state;
    NEED_CL();
    int n = 301;
    dg_shape s = shp(1, n), sc = shp(0);
    double *v = rnd(n, -1, 1), *g = rnd(n, -1, 1), *m = rnd(n, -1, 1),
           *vv = rnd(n, 0, 1), w[301];
    for (int i = 0; i < n; i++)
        v[i] = (float)v[i], g[i] = (float)g[i], m[i] = (float)m[i], vv[i] = (float)vv[i];
    double lr = 0.125, mom = 0.5;
    const char *ops[] = {"Assign", "AssignAdd", "AssignSub",
                         "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam",
                         "AssignMovingAvg"};
    for (int o = 0; o < 7; o++) {
        tnode t;
        tn_init(&t, ops[o]);
        tn_in(&t, DG_F32, s, v);
        double lrv[1] = {lr}, momv[1] = {mom};
        double b1p[1] = {0.9 * 0.9}, b2p[1] = {0.999 * 0.999}, b1[1] = {0.9},
               b2[1] = {0.999}, ep[1] = {1e-7};
        switch (o) {
        case 0: case 1: case 2: case 6: tn_in(&t, DG_F32, s, g); break;
        case 3: tn_in(&t, DG_F32, sc, lrv); tn_in(&t, DG_F32, s, g); break;
        case 4:
            tn_in(&t, DG_F32, s, m); tn_in(&t, DG_F32, sc, lrv);
            tn_in(&t, DG_F32, s, g); tn_in(&t, DG_F32, sc, momv);
            break;
        default:
            tn_in(&t, DG_F32, s, m); tn_in(&t, DG_F32, s, vv);
            tn_in(&t, DG_F32, sc, b1p); tn_in(&t, DG_F32, sc, b2p);
            tn_in(&t, DG_F32, sc, lrv); tn_in(&t, DG_F32, sc, b1);
            tn_in(&t, DG_F32, sc, b2); tn_in(&t, DG_F32, sc, ep);
            tn_in(&t, DG_F32, s, g);
        }
        if (o == 6)
            dgc_node_set_float(t.n, "decay", 0.9);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        assert_ptr_equal(t.out[0].buf, t.in[0].buf);
        double acc[301];
        for (int i = 0; i < n; i++) {
            switch (o) {
            case 0: w[i] = g[i]; break;
            case 1: w[i] = v[i] + g[i]; break;
            case 2: w[i] = v[i] - g[i]; break;
            case 3: w[i] = v[i] - lr * g[i]; break;
            case 4: acc[i] = m[i] * mom + g[i]; w[i] = v[i] - lr * acc[i]; break;
            case 5: {
                double lrt = lr * sqrt(1 - b2p[0]) / (1 - b1p[0]);
                double mi = m[i] + (g[i] - m[i]) * 0.1;
                double vi = vv[i] + (g[i] * g[i] - vv[i]) * (1 - 0.999);
                acc[i] = mi;
                w[i] = v[i] - lrt * mi / (sqrt(vi) + 1e-7);
                break;
            }
            default: w[i] = v[i] - (v[i] - g[i]) * (1 - 0.9);
            }
        }
        check_out(&t, 0, w, 1e-5, ops[o]);
        if (o == 4 || o == 5) {
            double *got = down(&g_dev, &t.in[1]);
            check_close(got, acc, n, 1e-5, "accumulator");
            free(got);
        }
        tn_free(&t);
    }
    free(v); free(g); free(m); free(vv);
}

/* ---- tests: sources ------------------------------------------------------ */

static void test_const(void **state)
{
    (void)state;
    NEED_CL();
    dg_shape s = shp(2, 2, 3);
    dg_tensor *v = dg_tensor_new(DG_F64, &s);
    for (int i = 0; i < 6; i++) ((double *)v->data)[i] = i * 0.5 - 1;
    tnode t;
    tn_init(&t, "Const");
    dgc_node_set_tensor(t.n, "value", v);
    tn_out(&t, DG_F32, s);
    assert_int_equal(tn_run(&t), DG_OK);
    double w[6];
    for (int i = 0; i < 6; i++) w[i] = i * 0.5 - 1;
    check_out(&t, 0, w, 0, "Const");
    tn_free(&t);

    dg_shape one = shp(0);
    v = dg_tensor_new(DG_F32, &one);
    ((float *)v->data)[0] = 2.5f;
    tn_init(&t, "Const");
    dgc_node_set_tensor(t.n, "value", v);
    tn_out(&t, DG_F32, one);
    assert_int_equal(tn_run(&t), DG_OK);
    w[0] = 2.5;
    check_out(&t, 0, w, 0, "Const scalar");
    tn_free(&t);
}

static void test_matmul(void **state)
{
    (void)state;
    NEED_CL();
    int M = 5, K = 7, N = 3;
    double *a = rnd(M * K, -1, 1), *b = rnd(K * N, -1, 1), w[15];
    for (int i = 0; i < M * K; i++) a[i] = (float)a[i];
    for (int i = 0; i < K * N; i++) b[i] = (float)b[i];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            w[i * N + j] = 0;
            for (int q = 0; q < K; q++) w[i * N + j] += a[i * K + q] * b[q * N + j];
        }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            double at[35], bt[21];
            for (int i = 0; i < M; i++)
                for (int q = 0; q < K; q++)
                    at[ta ? q * M + i : i * K + q] = a[i * K + q];
            for (int q = 0; q < K; q++)
                for (int j = 0; j < N; j++)
                    bt[tb ? j * K + q : q * N + j] = b[q * N + j];
            tnode t;
            tn_init(&t, "MatMul");
            dgc_node_set_bool(t.n, "transpose_a", ta);
            dgc_node_set_bool(t.n, "transpose_b", tb);
            tn_in(&t, DG_F32, ta ? shp(2, K, M) : shp(2, M, K), at);
            tn_in(&t, DG_F32, tb ? shp(2, N, K) : shp(2, K, N), bt);
            tn_out(&t, DG_F32, shp(2, M, N));
            assert_int_equal(tn_run(&t), DG_OK);
            check_out(&t, 0, w, 1e-5, "MatMul");
            tn_free(&t);
        }
    free(a);
    free(b);
}

/* float64 variants, checked against the CPU kernels (tn_run compares) */
static void run_cmp(const char *op, int n_in, const dg_shape *is,
                    const dg_dtype *it, int n_out, const dg_shape *os,
                    const dg_dtype *ot, double lo, double hi)
{
    tnode t;
    tn_init(&t, op);
    double *v[12];
    for (int i = 0; i < n_in; i++) {
        v[i] = rnd(ne(&is[i]), lo, hi);
        if (it[i] == DG_I32 || it[i] == DG_I64)
            for (int64_t j = 0; j < ne(&is[i]); j++) v[i][j] = (int)(v[i][j] * 3) % 5;
        tn_in(&t, it[i], is[i], v[i]);
    }
    for (int i = 0; i < n_out; i++)
        tn_out(&t, ot[i], os[i]);
    assert_int_equal(tn_run(&t), DG_OK);
    for (int i = 0; i < n_in; i++)
        free(v[i]);
    tn_free(&t);
}

static void test_float64(void **state)
{
    (void)state;
    NEED_CL();
    if (!fp64())
        skip();
    const dg_dtype D = DG_F64;
    dg_shape x = shp(2, 9, 5), r = shp(1, 9), c = shp(1, 5), sc = shp(0);
    run_cmp("Softmax", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){x},
            (dg_dtype[]){D}, -3, 3);
    run_cmp("SoftmaxCrossEntropyWithLogits", 2, (dg_shape[]){x, x},
            (dg_dtype[]){D, D}, 2, (dg_shape[]){r, x}, (dg_dtype[]){D, D}, 0, 1);
    run_cmp("SparseSoftmaxCrossEntropyWithLogits", 2, (dg_shape[]){x, r},
            (dg_dtype[]){D, DG_I64}, 2, (dg_shape[]){r, x}, (dg_dtype[]){D, D},
            0, 1);
    run_cmp("SoftmaxGrad", 2, (dg_shape[]){x, x}, (dg_dtype[]){D, D}, 1,
            (dg_shape[]){x}, (dg_dtype[]){D}, -1, 1);
    run_cmp("BatchNorm", 3, (dg_shape[]){x, c, c}, (dg_dtype[]){D, D, D}, 3,
            (dg_shape[]){x, c, c}, (dg_dtype[]){D, D, D}, 0.5, 2);
    run_cmp("BatchNormGrad", 5, (dg_shape[]){x, x, c, c, c},
            (dg_dtype[]){D, D, D, D, D}, 3, (dg_shape[]){x, c, c},
            (dg_dtype[]){D, D, D}, 0.5, 2);
    run_cmp("ApplyMomentum", 5, (dg_shape[]){x, x, sc, x, sc},
            (dg_dtype[]){D, D, D, D, D}, 1, (dg_shape[]){x}, (dg_dtype[]){D},
            0.1, 0.9);
    run_cmp("ApplyAdam", 10,
            (dg_shape[]){x, x, x, sc, sc, sc, sc, sc, sc, x},
            (dg_dtype[]){D, D, D, D, D, D, D, D, D, D}, 1, (dg_shape[]){x},
            (dg_dtype[]){D}, 0.1, 0.9);
    run_cmp("ArgMax", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){c},
            (dg_dtype[]){DG_I64}, -1, 1);
    run_cmp("Cast", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){x},
            (dg_dtype[]){DG_F32}, -1, 1);
    run_cmp("OnesLike", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){x},
            (dg_dtype[]){D}, -1, 1);
}

/* ---- tests: allocator ---------------------------------------------------- */

static void test_alloc(void **state)
{
    (void)state;
    NEED_CL();
    dg_error err;
    assert_int_equal(dgr_cl_alloc_class(1), 256);
    assert_true(dgr_cl_alloc_class(1000) >= 1000);
    assert_true(dgr_cl_alloc_class(100000) < 100000 * 5 / 4);
    /* reuse: a released buffer comes back without a new allocation */
    dgr_buffer *b = dgr_buffer_new(&g_dev, 10000, &err);
    assert_non_null(b);
    void *mem = b->mem;
    dgr_buffer_release(b);
    size_t c0 = dgr_cl_alloc_creates(&g_dev);
    b = dgr_buffer_new(&g_dev, 9990, &err);
    assert_non_null(b);
    assert_ptr_equal(b->mem, mem);
    assert_int_equal(dgr_cl_alloc_creates(&g_dev), c0);
    dgr_buffer_release(b);

    /* cap and out of memory: a device with a 1 MiB cap, reserved up front */
    for (int growth = 0; growth < 2; growth++) {
        dg_options o = g_opts;
        o.gpu_memory_fraction = (double)(1 << 20) / (double)g_list->devs[1].mem_bytes;
        o.allow_growth = growth;
        dgr_device d;
        memset(&d, 0, sizeof d);
        d.info = g_list->devs[1];
        assert_int_equal(dgr_cl_device_open(&d, &o, &err), DG_OK);
        assert_true(d.mem_cap >= (1 << 20) - 4096 && d.mem_cap <= (1 << 20) + 4096);
        dgr_buffer *x = dgr_buffer_new(&d, 600000, &err);
        assert_non_null(x);
        dgr_buffer *y = dgr_buffer_new(&d, 600000, &err);
        assert_null(y);
        assert_int_equal(err.code, DG_E_NOMEM);
        assert_non_null(strstr(err.msg, "out of memory"));
        dgr_buffer_release(x);
        y = dgr_buffer_new(&d, 300000, &err);
        assert_non_null(y);
        x = dgr_buffer_new(&d, 300000, &err);
        assert_non_null(x);
        double v[4] = {1, 2, 3, 4};
        dgr_value vx = {DG_F32, shp(1, 4), x};
        assert_int_equal(d.ops->write(&d, x, (float[]){1, 2, 3, 4}, 16, &err), DG_OK);
        double *got = down(&d, &vx);
        check_close(got, v, 4, 0, "arena data");
        free(got);
        dgr_buffer_release(x);
        dgr_buffer_release(y);
        assert_int_equal(atomic_load(&d.in_use), 0);
        dgr_cl_device_close(&d);
    }
}

/* ---- tests: two devices, virtual GPUs ------------------------------------ */

static void exchange(dgr_device *d0, dgr_device *d1)
{
    dg_error err;
    int n = 1000;
    double *x = rnd(n, -1, 1);
    for (int i = 0; i < n; i++) x[i] = (float)x[i];
    dgr_value a = up(d0, DG_F32, shp(1, n), x);
    double *h = down(d0, &a);
    dgr_value b = up(d1, DG_F32, shp(1, n), h);
    free(h);
    /* compute on d1, bring back to d0 */
    dgr_device *save = g_dev.impl ? NULL : NULL;
    (void)save;
    tnode t;
    tn_init(&t, "Square");
    t.in[0] = b;
    t.n_in = 1;
    tn_out(&t, DG_F32, shp(1, n));
    dgr_kctx k;
    memset(&k, 0, sizeof k);
    k.dev = d1;
    k.node = t.n;
    k.g = t.g;
    k.in = t.in;
    k.n_in = 1;
    k.out = t.out;
    k.n_out = 1;
    k.out_types = t.ot;
    k.err = &err;
    assert_int_equal(dgr_cl_kernel(t.n->op)(&k), DG_OK);
    dgr_cl_event_release(k.cl_event);
    double *r = down(d1, &t.out[0]);
    dgr_value c = up(d0, DG_F32, shp(1, n), r);
    double *back = down(d0, &c);
    for (int i = 0; i < n; i++) x[i] = x[i] * x[i];
    check_close(back, x, n, 1e-6, "exchange");
    free(back);
    free(r);
    free(x);
    dgr_buffer_release(a.buf);
    dgr_buffer_release(c.buf);
    tn_free(&t);
}

static void test_two_devices(void **state)
{
    (void)state;
    NEED_CL();
    dg_error err;
    for (int virt = 0; virt < 2; virt++) {
        dg_options o = g_opts;
        dg_device_list *l;
        if (virt)
            o.virtual_gpus = 2, o.visible_devices = "0";
        assert_int_equal(dg_devices_discover(&o, &l, &err), DG_OK);
        if (dg_devices_count(l) < 3) {
            dg_devices_free(l);
            continue; /* one physical device: only the virtual case */
        }
        dgr_device d0, d1;
        memset(&d0, 0, sizeof d0);
        memset(&d1, 0, sizeof d1);
        d0.info = l->devs[1];
        d1.info = l->devs[2];
        assert_int_equal(dgr_cl_device_open(&d0, &o, &err), DG_OK);
        assert_int_equal(dgr_cl_device_open(&d1, &o, &err), DG_OK);
        if (virt)
            assert_true(d1.mem_cap <= l->devs[0].mem_bytes &&
                        d1.mem_cap == (size_t)l->devs[2].mem_bytes);
        exchange(&d0, &d1);
        exchange(&d1, &d0);
        /* event times are on the host clock */
        uint64_t t0 = dg_now_ns();
        tnode t;
        tn_init(&t, "Neg");
        double x[3] = {1, 2, 3};
        t.in[0] = up(&d1, DG_F32, shp(1, 3), x);
        t.n_in = 1;
        tn_out(&t, DG_F32, shp(1, 3));
        dgr_kctx k;
        memset(&k, 0, sizeof k);
        k.dev = &d1; k.node = t.n; k.g = t.g; k.in = t.in; k.n_in = 1;
        k.out = t.out; k.n_out = 1; k.out_types = t.ot; k.err = &err;
        assert_int_equal(dgr_cl_kernel(t.n->op)(&k), DG_OK);
        assert_int_equal(d1.ops->sync(&d1, &err), DG_OK);
        uint64_t t1 = dg_now_ns(), s, e;
        assert_true(dgr_cl_event_times(&d1, k.cl_event, &s, &e));
        assert_true(s <= e);
        assert_true(s + 5000000 >= t0 && e <= t1 + 5000000);
        dgr_cl_event_release(k.cl_event);
        tn_free(&t);
        dgr_cl_device_close(&d0);
        dgr_cl_device_close(&d1);
        dg_devices_free(l);
    }
}

/* ---- tests: program cache across processes ------------------------------- */

typedef struct dgr_cl_source { const char *name; const char *text; } dgr_cl_source;
extern const dgr_cl_source dgr_cl_sources[];

/* child: build elementwise.cl through the cache, exit 10 if it came from the
 * cache, 11 if built from source, 1 on error */
static int cache_child(void)
{
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "all";
    dg_device_list *l;
    dg_error err;
    if (dg_devices_discover(&o, &l, &err) != DG_OK || l->n < 2)
        return 1;
    dgr_device d;
    memset(&d, 0, sizeof d);
    d.info = l->devs[1];
    if (dgr_cl_device_open(&d, &o, &err) != DG_OK)
        return 1;
    dgr_cl_dev *cd = d.impl;
    cl_program p;
    int fc = 0;
    if (dgr_cl_build(cd->c, "elementwise", dgr_cl_sources[0].text,
                     "-cl-std=CL1.2 -DT=float -DDG_F64=0 -DDG_TEST_CACHE=1",
                     &p, &fc, &err) != DG_OK) {
        fprintf(stderr, "child: %s\n", err.msg);
        return 1;
    }
    cl_int e;
    cl_kernel k = clCreateKernel(p, "u_neg", &e);
    if (!k)
        return 1;
    clReleaseKernel(k);
    clReleaseProgram(p);
    return fc ? 10 : 11;
}

static int spawn_child(const char *cache)
{
    char *argv[] = {(char *)"/proc/self/exe", (char *)"--cache-child", NULL};
    char env_x[1100];
    snprintf(env_x, sizeof env_x, "XDG_CACHE_HOME=%s", cache);
    int n = 0;
    while (environ[n]) n++;
    char **env = calloc((size_t)n + 2, sizeof *env);
    int j = 0;
    for (int i = 0; i < n; i++)
        if (strncmp(environ[i], "XDG_CACHE_HOME=", 15) != 0)
            env[j++] = environ[i];
    env[j++] = env_x;
    env[j] = NULL;
    char self[1024];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(len > 0);
    self[len] = '\0';
    argv[0] = self;
    pid_t pid;
    int rc = posix_spawn(&pid, self, NULL, NULL, argv, env);
    free(env);
    assert_int_equal(rc, 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int find_entry(const char *dir, char *path, size_t n)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "ls %s/dgrun/elementwise-*.clbin 2>/dev/null", dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    int ok = fgets(path, (int)n, p) != NULL;
    pclose(p);
    if (ok)
        path[strcspn(path, "\n")] = '\0';
    return ok;
}

static void test_program_cache(void **state)
{
    (void)state;
    NEED_CL();
    char dir[] = "/tmp/dgrun-cl-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(spawn_child(dir), 11);      /* cold: built */
    char path[1200];
    assert_true(find_entry(dir, path, sizeof path));
    uint64_t t0 = dg_now_ns();
    assert_int_equal(spawn_child(dir), 10);      /* warm: from the cache */
    uint64_t warm = dg_now_ns() - t0;
    (void)warm;
    /* corrupt the entry: flip bytes in the payload */
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 40, SEEK_SET);
    fputs("garbage-garbage", f);
    fclose(f);
    assert_int_equal(spawn_child(dir), 11);      /* corrupt: rebuilt */
    assert_int_equal(spawn_child(dir), 10);      /* and rewritten */
    /* truncated entry */
    assert_int_equal(truncate(path, 30), 0);
    assert_int_equal(spawn_child(dir), 11);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_build_error(void **state)
{
    (void)state;
    NEED_CL();
    dgr_cl_dev *cd = g_dev.impl;
    cl_program p;
    dg_error err;
    dg_status st = dgr_cl_build(cd->c, "broken", "__kernel void f(void) { x = ; }",
                                "", &p, NULL, &err);
    assert_int_equal(st, DG_E_RUNTIME);
    assert_non_null(strstr(err.msg, "broken.cl"));
    assert_non_null(strstr(err.msg, "CL_BUILD_PROGRAM_FAILURE"));
    assert_null(strchr(err.msg, '\n'));
}

static void test_table(void **state)
{
    (void)state;
    /* every op the table claims a GPU kernel for has one */
    for (int op = 0; op < dgc_n_ops; op++) {
        int want = !(dgc_ops[op].flags & DGC_OP_CPU_ONLY) &&
                   (dgc_ops[op].dtypes & (1u << DG_F32 | 1u << DG_F64) ||
                    !strcmp(dgc_ops[op].name, "NoOp"));
        if (want && !dgr_cl_kernel(op))
            fprintf(stderr, "no OpenCL kernel for %s\n", dgc_ops[op].name);
        assert_true(!want || dgr_cl_kernel(op));
        if (dgc_ops[op].flags & DGC_OP_CPU_ONLY)
            assert_null(dgr_cl_kernel(op));
    }
}

/* ---- end to end: the same graph on GPU:0 and on CPU:0 -------------------- */

static const char *e2e_graph =
    "{\"version\": 1, \"nodes\": ["
    "{\"name\": \"rn\", \"op\": \"RandomNormal\", \"device\": \"/gpu:0\","
    " \"attrs\": {\"shape\": [50], \"mean\": 1.0, \"stddev\": 2.0}},"
    "{\"name\": \"ru\", \"op\": \"RandomUniform\", \"device\": \"/gpu:0\","
    " \"attrs\": {\"shape\": [3, 7], \"min\": -1.0, \"max\": 3.0, \"dtype\": \"float64\"}},"
    "{\"name\": \"v\", \"op\": \"Variable\", \"device\": \"/gpu:0\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [4], \"init\": {\"random_normal\": {\"mean\": 0, \"stddev\": 1}}}},"
    "{\"name\": \"c\", \"op\": \"Const\", \"device\": \"/gpu:0\", \"attrs\": {\"value\": [1, 2, 3, 4]}},"
    "{\"name\": \"inc\", \"op\": \"AssignAdd\", \"inputs\": [\"v\", \"c\"]},"
    "{\"name\": \"read\", \"op\": \"Identity\", \"inputs\": [\"v\", \"^inc\"], \"device\": \"/gpu:0\"},"
    "{\"name\": \"s\", \"op\": \"Sum\", \"inputs\": [\"ru\"], \"device\": \"/gpu:0\", \"attrs\": {\"axis\": 1}}"
    "], \"fetch\": [\"rn\", \"ru\", \"read\", \"s\"]}";

static dg_fetch_result *e2e_run(const char *which, int *n, char *first_dev)
{
    dg_options o = g_opts;
    o.opencl_devices = which;
    o.allow_soft_placement = 1;
    o.seed = 7;
    o.repeat = 2;
    dg_error err;
    dg_graph *g = dg_graph_load("e2e.json", e2e_graph, strlen(e2e_graph), &err);
    if (!g)
        fprintf(stderr, "load: %s\n", err.msg);
    assert_non_null(g);
    dg_device_list *l;
    assert_int_equal(dg_devices_discover(&o, &l, &err), DG_OK);
    dg_program *p = dg_compile(g, &o, l, &err);
    if (!p)
        fprintf(stderr, "compile: %s\n", err.msg);
    assert_non_null(p);
    dg_node_info ni;
    dg_program_node(p, 0, &ni);
    snprintf(first_dev, 96, "%s", ni.device);
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fprintf(stderr, "session: %s\n", err.msg);
    assert_non_null(s);
    dg_fetch_result *r;
    dg_status st = dg_session_run(s, &r, n, &err);
    if (st != DG_OK)
        fprintf(stderr, "run: %s\n", err.msg);
    assert_int_equal(st, DG_OK);
    dg_session_free(s);
    dg_program_free(p);
    dg_devices_free(l);
    return r;
}

static void test_end_to_end(void **state)
{
    (void)state;
    NEED_CL();
    int ng, nc;
    char dg[96], dc[96];
    dg_fetch_result *rg = e2e_run("all", &ng, dg);
    dg_fetch_result *rc = e2e_run("none", &nc, dc);
    assert_non_null(strstr(dg, "GPU:0"));
    assert_non_null(strstr(dc, "CPU:0"));
    assert_int_equal(ng, 4);
    assert_int_equal(nc, 4);
    for (int i = 0; i < ng; i++) {
        dg_tensor *a = rg[i].value, *b = rc[i].value;
        assert_int_equal(a->dtype, b->dtype);
        int64_t n = dg_shape_numel(&a->shape);
        assert_int_equal(n, dg_shape_numel(&b->shape));
        double *x = malloc(sizeof *x * (size_t)n), *y = malloc(sizeof *y * (size_t)n);
        for (int64_t j = 0; j < n; j++) {
            x[j] = load(a->data, a->dtype, j);
            y[j] = load(b->data, b->dtype, j);
        }
        /* random numbers: identical on both devices */
        check_close(x, y, n, i < 2 ? 0 : 1e-6, rg[i].name);
        free(x);
        free(y);
    }
    /* the variable was incremented twice (repeat 2) */
    dg_fetch_results_free(rg, ng);
    dg_fetch_results_free(rc, nc);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--cache-child") == 0)
        return cache_child();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_discover),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_addn_fill_cast),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_sum_to_broadcast_like_max_grad),
        cmocka_unit_test(test_transpose_reshape),
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_state_ops),
        cmocka_unit_test(test_const),
        cmocka_unit_test(test_float64),
        cmocka_unit_test(test_alloc),
        cmocka_unit_test(test_two_devices),
        cmocka_unit_test(test_build_error),
        cmocka_unit_test(test_program_cache),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_end_to_end),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
