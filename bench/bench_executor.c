/*
 * bench_executor.c -- executor overhead per op: a chain of N small ops
 * (Add of a scalar and a constant) run through a session runner, compared
 * with a baseline calling the same kernels in a plain loop in the same
 * process.  Reports the median of several runs in microseconds per op and
 * the ratio to the baseline, in wall-clock time and in process CPU time
 * (the latter is what to compare on a loaded machine, where preemption
 * inflates wall times).  With --gpu the chain runs on GPU:0 (OpenCL devices
 * "all", so PoCL counts).
 *
 *   bench_executor [--gpu] [--inter-op N] [--reps R] [N ...]
 *                                                (default N: 2000 20000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry.h"
#include "session.h"
#include "registry.h"
#include "program.h"
#include "dg_alloc.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, const dg_error *e)
{
    fprintf(stderr, "bench_executor: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

static int32_t konst(dgc_graph *g, const char *name, float v, int dev)
{
    dg_error err;
    int32_t id = dgc_graph_add_node(g, name, dgc_op_find("Const"), &err);
    dg_shape s = {0, {0}};
    dg_tensor *t = dg_tensor_new(DG_F32, &s);
    *(float *)t->data = v;
    dgc_node_set_tensor(&g->nodes[id], "value", t);
    g->nodes[id].device_id = dev;
    if (dgc_infer_node(g, id, &err) != DG_OK)
        die("infer", &err);
    return id;
}

/* chain: x0 = Const; x_{i+1} = Add(x_i, c) */
static dgc_graph *chain(int n, int dev, int32_t *last)
{
    dgc_graph *g = dgc_graph_new("bench");
    int32_t prev = konst(g, "x0", 0.0f, dev);
    int32_t c = konst(g, "c", 1.0f, dev);
    char name[32];
    dg_error err;
    for (int i = 1; i < n; i++) {
        snprintf(name, sizeof name, "x%d", i);
        int32_t id = dgc_graph_add_node(g, name, dgc_op_find("Add"), &err);
        dgc_ref a = {prev, 0}, b = {c, 0};
        dgc_node_add_input(g, id, a);
        dgc_node_add_input(g, id, b);
        g->nodes[id].device_id = dev;
        if (dgc_infer_node(g, id, &err) != DG_OK)
            die("infer", &err);
        prev = id;
    }
    *last = prev;
    return g;
}

/* Baseline: the same kernels called in a plain loop on device d. */
static double baseline(dgr_session *s, const dgc_graph *g, int dev, int n,
                       double *cpu_us)
{
    dgr_device *d = dgr_session_device(s, dev);
    dgr_kernel_fn kc = dgr_kernel_find(d->be, DGC_OPID_Const);
    dgr_kernel_fn ka = dgr_kernel_find(d->be, DGC_OPID_Add);
    dg_error err;
    dgr_value vals[3];
    memset(vals, 0, sizeof vals);
    dgr_kctx k;
    memset(&k, 0, sizeof k);
    k.env = dgr_session_exec(s)->env;
    k.dev = d;
    k.g = g;
    k.err = &err;
    k.n_out = 1;
    uint64_t c0 = cpu_ns();
    uint64_t t0 = dg_now_ns();
    /* x0 and c */
    for (int i = 0; i < 2; i++) {
        k.node = &g->nodes[i];
        k.node_id = i;
        k.out = &vals[i];
        k.out_types = g->nodes[i].outputs;
        if (kc(&k) != DG_OK)
            die("baseline const", &err);
    }
    for (int i = 2; i <= n; i++) {
        dgr_value in[2] = {vals[0], vals[1]};
        k.node = &g->nodes[i];
        k.node_id = i;
        k.in = in;
        k.n_in = 2;
        k.out = &vals[2];
        k.out_types = g->nodes[i].outputs;
        k.event = NULL;
        if (ka(&k) != DG_OK)
            die("baseline add", &err);
        if (k.event)
            d->be->streams->event_release(k.event);
        dgr_buffer_release(vals[0].buf);
        vals[0] = vals[2];
    }
    d->be->sync(d, &err);
    uint64_t t1 = dg_now_ns();
    if (cpu_us)
        *cpu_us = (double)(cpu_ns() - c0) / 1e3;
    dgr_buffer_release(vals[0].buf);
    dgr_buffer_release(vals[1].buf);
    return (double)(t1 - t0) / 1e3;
}

static void bench(int n, int gpu, int inter, int reps)
{
    dg_options o;
    memset(&o, 0, sizeof o);
    o.allow_soft_placement = -1;
    o.colocate = -1;
    o.repeat = 1;
    o.steps = -1;
    o.inter_op_threads = inter;
    o.intra_op_threads = 1;
    o.opencl_devices = gpu ? "all" : "none";
    o.virtual_gpus = 1;
    o.gpu_memory_fraction = 1.0;
    o.allow_growth = 1;
    o.assume_gpus = -1;
    dg_error err;
    dg_device_list *dl = NULL;
    if (dg_devices_discover(&o, &dl, &err) != DG_OK)
        die("devices", &err);
    int dev = 0;
    if (gpu) {
        if (dg_devices_count(dl) < 2) {
            printf("no OpenCL device: skipping GPU:0\n");
            dg_devices_free(dl);
            return;
        }
        dev = 1;
    }
    int32_t last;
    dgc_graph *g = chain(n, dev, &last);
    dg_program *p = dg_calloc(1, sizeof *p);
    p->g = g;
    p->devs.n = dl->n;
    p->devs.devs = dg_calloc((size_t)dl->n, sizeof(dg_device_info));
    memcpy(p->devs.devs, dl->devs, sizeof(dg_device_info) * (size_t)dl->n);
    dg_session *ds = dg_session_new(p, &o, &err);
    if (!ds)
        die("session", &err);
    dgr_session *s = (dgr_session *)(void *)ds;
    dgc_ref f = {last, 0};
    dgr_runner *r = dgr_session_runner(s, &f, 1, NULL, 0, &err);
    if (!r)
        die("runner", &err);
    double *te = calloc((size_t)reps, sizeof *te), *tb = calloc((size_t)reps, sizeof *tb);
    double *ce = calloc((size_t)reps, sizeof *ce), *cb = calloc((size_t)reps, sizeof *cb);
    dg_tensor *out = NULL;
    /* warm up (OpenCL kernels compile on first use) */
    if (dgr_runner_run(r, 0, &out, &err) != DG_OK)
        die("run", &err);
    /* The chain bypasses the compiler (no folding), so every Add runs;
     * the result proves it. */
    if (*(float *)out->data != (float)(n - 1)) {
        fprintf(stderr, "bench_executor: FAILED: the chain gave %g, expected "
                        "%d: no figure printed\n", *(float *)out->data, n - 1);
        exit(1);
    }
    dg_tensor_free(out);
    baseline(s, g, dev, n, NULL);
    for (int i = 0; i < reps; i++) {
        uint64_t c0 = cpu_ns();
        uint64_t t0 = dg_now_ns();
        if (dgr_runner_run(r, i + 1, NULL, &err) != DG_OK)
            die("run", &err);
        te[i] = (double)(dg_now_ns() - t0) / 1e3;
        ce[i] = (double)(cpu_ns() - c0) / 1e3;
        tb[i] = baseline(s, g, dev, n, &cb[i]);
    }
    qsort(te, (size_t)reps, sizeof *te, cmp_double);
    qsort(tb, (size_t)reps, sizeof *tb, cmp_double);
    qsort(ce, (size_t)reps, sizeof *ce, cmp_double);
    qsort(cb, (size_t)reps, sizeof *cb, cmp_double);
    double me = te[reps / 2] / n, mb = tb[reps / 2] / n;
    double mce = ce[reps / 2] / n, mcb = cb[reps / 2] / n;
    printf("%-6s chain %6d ops, inter-op %d, median of %d: wall: executor "
           "%.3f us/op, plain loop %.3f us/op, overhead %.3f us/op, ratio "
           "%.2f | cpu: executor %.3f us/op, plain loop %.3f us/op, ratio "
           "%.2f\n",
           gpu ? "GPU:0" : "CPU:0", n, dgr_ipool_threads(dgr_session_exec(s)->pools[dev]), reps,
           me, mb, me - mb, me / mb, mce, mcb, mce / mcb);
    free(te);
    free(tb);
    free(ce);
    free(cb);
    dgr_runner_free(r);
    dg_session_free(ds);
    dg_free(p->devs.devs);
    dg_free(p);
    dgc_graph_free(g);
    dg_devices_free(dl);
}

int main(int argc, char **argv)
{
    int gpu = 0, inter = 1, reps = 9, sizes[8], n_sizes = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gpu") == 0)
            gpu = 1;
        else if (strcmp(argv[i], "--inter-op") == 0 && i + 1 < argc)
            inter = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else if (n_sizes < 8)
            sizes[n_sizes++] = atoi(argv[i]);
    }
    if (n_sizes == 0) {
        sizes[0] = 2000;
        sizes[1] = 20000;
        n_sizes = 2;
    }
    for (int i = 0; i < n_sizes; i++)
        bench(sizes[i], gpu, inter, reps);
    return 0;
}
