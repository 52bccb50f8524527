/*
 * kernels_cpu_harness.h -- shared harness of the CPU kernel unit tests:
 * a one-node graph whose inputs are typed Placeholder nodes, host buffers on
 * a CPU dgr_device, the op's infer function for output types, the kernel
 * call, and reference helpers (random values, tolerances, broadcasting).
 */
#ifndef KERNELS_CPU_HARNESS_H
#define KERNELS_CPU_HARNESS_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "cpu_backend.h"
#include "registry.h"
#include "dg_alloc.h"
#include "threadpool.h"
#include "ops.h"
#include "infer.h"

/* ---- harness ------------------------------------------------------------- */

typedef struct kt {
    dgc_graph *g;
    dgr_device dev;
    int32_t id;
    int n_in;
    dgr_value in[12];
    dgr_value out[6];
    dgc_ttype ot[6];
    dg_error err;
    int ran;
} kt;

static struct dgr_pool *g_pool; /* intra-op pool kernels get (NULL = inline) */

#define NODE(t) (&(t)->g->nodes[(t)->id])

/* The environment a session would lend kernels: a fixed seed per node,
 * Print to stderr. */
static uint64_t kt_rng_seed(void *ctx, int32_t node_id)
{
    (void)ctx;
    return 0x5eedULL + (uint64_t)node_id;
}
static void kt_print(void *ctx, const char *text)
{
    (void)ctx;
    fputs(text, stderr);
}
static const dgr_kenv kt_env = {NULL, kt_rng_seed, kt_print, 0, NULL, NULL};
/* The environment kt_run lends (a test may point it at its own). */
static const dgr_kenv *kt_envp = &kt_env;

static inline void kt_init(kt *t, const char *op)
{
    memset(t, 0, sizeof *t);
    t->dev.be = &dgr_backend_cpu;
    t->dev.info.type = DG_DEV_CPU;
    snprintf(t->dev.info.name, sizeof t->dev.info.name,
             "/job:localhost/replica:0/task:0/device:CPU:0");
    t->g = dgc_graph_new("test.json");
    assert_non_null(t->g);
    int opi = dgc_op_find(op);
    assert_true(opi >= 0);
    t->id = dgc_graph_add_node(t->g, "node1", opi, &t->err);
    assert_true(t->id >= 0);
}

static inline dg_shape mkshape(int rank, const int64_t *dims)
{
    dg_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    for (int i = 0; i < rank; i++)
        s.dims[i] = dims[i];
    return s;
}

static inline void set_elem(void *p, dg_dtype t, int64_t i, double v)
{
    switch (t) {
    case DG_F32: ((float *)p)[i] = (float)v; break;
    case DG_F64: ((double *)p)[i] = v; break;
    case DG_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DG_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    default: ((uint8_t *)p)[i] = v != 0; break;
    }
}

static inline double get_elem(const void *p, dg_dtype t, int64_t i)
{
    switch (t) {
    case DG_F32: return ((const float *)p)[i];
    case DG_F64: return ((const double *)p)[i];
    case DG_I32: return ((const int32_t *)p)[i];
    case DG_I64: return (double)((const int64_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

/* Add input: a Placeholder node typed (dt, shape) with host data vals. */
static inline void kt_in(kt *t, dg_dtype dt, int rank, const int64_t *dims,
                  const double *vals)
{
    char name[16];
    snprintf(name, sizeof name, "in%d", t->n_in);
    int32_t p = dgc_graph_add_node(t->g, name, dgc_op_find("Placeholder"),
                                   &t->err);
    assert_true(p >= 0);
    dgc_node *pn = &t->g->nodes[p];
    pn->outputs = dg_calloc(1, sizeof *pn->outputs);
    pn->n_outputs = 1;
    pn->outputs[0].dtype = dt;
    pn->outputs[0].shape = mkshape(rank, dims);
    dgc_ref r = {p, 0};
    assert_int_equal(dgc_node_add_input(t->g, t->id, r), 0);
    dgr_value *v = &t->in[t->n_in++];
    v->dtype = dt;
    v->shape = mkshape(rank, dims);
    int64_t n = dg_shape_numel(&v->shape);
    v->buf = dgr_buffer_new(&t->dev, (size_t)n * dg_dtype_size(dt), 0, &t->err);
    assert_non_null(v->buf);
    for (int64_t i = 0; i < n; i++)
        set_elem(v->buf->host, dt, i, vals ? vals[i] : 0);
}

static inline dg_status kt_run(kt *t)
{
    dg_status st = dgc_infer_node(t->g, t->id, &t->err);
    if (st != DG_OK)
        fail_msg("infer failed: %s", t->err.msg);
    dgc_node *n = NODE(t);
    for (int i = 0; i < n->n_outputs; i++)
        t->ot[i] = n->outputs[i];
    dgr_kernel_fn fn = dgr_kernel_find(&dgr_backend_cpu, n->op);
    assert_non_null(fn);
    dgr_kctx k;
    memset(&k, 0, sizeof k);
    k.dev = &t->dev;
    k.g = t->g;
    k.node = n;
    k.node_id = t->id;
    k.in = t->in;
    k.n_in = t->n_in;
    k.out = t->out;
    k.n_out = n->n_outputs;
    k.out_types = t->ot;
    k.err = &t->err;
    k.env = kt_envp;
    t->dev.intra = g_pool;
    t->ran = 1;
    return fn(&k);
}

static inline double kt_out(kt *t, int i, int64_t j)
{
    return get_elem(t->out[i].buf->host, t->out[i].dtype, j);
}

static inline void kt_free(kt *t)
{
    for (int i = 0; i < 6; i++)
        dgr_buffer_release(t->out[i].buf);
    for (int i = 0; i < t->n_in; i++)
        dgr_buffer_release(t->in[i].buf);
    dgc_graph_free(t->g);
    assert_int_equal((long)atomic_load(&t->dev.in_use), 0);
}

static uint64_t rng_state = 12345;
static inline double urand(void) /* [0, 1) */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* random values: small integers (exact in every dtype) or reals */
static inline void fill_vals(double *v, int64_t n, dg_dtype t, double lo, double hi)
{
    for (int64_t i = 0; i < n; i++) {
        double x = lo + (hi - lo) * urand();
        v[i] = (t == DG_F32 || t == DG_F64) ? x : floor(x);
    }
}

static inline double tol(dg_dtype t)
{
    return t == DG_F32 ? 1e-4 : t == DG_F64 ? 1e-10 : 0;
}

static inline void assert_close(double got, double want, double rtol, const char *what)
{
    double d = fabs(got - want);
    if (isnan(want) && isnan(got))
        return;
    if (!(d <= rtol * (1 + fabs(want))))
        fail_msg("%s: got %.9g, want %.9g", what, got, want);
}

typedef struct shp {
    int rank;
    int64_t d[DG_MAX_RANK];
} shp;


static inline int64_t numel(const shp *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        n *= s->d[i];
    return n;
}

#endif
