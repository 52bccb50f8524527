/*
 * bench_allreduce.c -- the gradient allreduce of a replicated graph (SPEC
 * 8.4) against a raw MPI_Allreduce of the same bytes in the same job.  Run
 * it under `mpirun -np 2` (or N): for each model, a replicated graph
 * ({"worker": N}, strategy allreduce) holds one Variable per parameter
 * tensor of the model and an AllReduce (mean) of each, the way the
 * replication pass averages gradients; a session runner runs every
 * replica's AllReduces many times (the collective runtime: replica 0's
 * announcements, fusion, MPI_Iallreduce, the deferred kernels).  The
 * baseline is one MPI_Allreduce of all the bytes (the best case: one
 * fused buffer, no executor) on MPI_COMM_WORLD.
 *
 *   mpirun -np 2 bench_allreduce
 *
 * Models: the digits MLP (64-128-10: 9,610 parameters) and a 25M-parameter
 * MLP (1024-4096-4096-1024-10: 25,192,458).  Prints microseconds per
 * allreduce for both (medians over interleaved rounds), bandwidth
 * (algorithm bytes / time), and the median of the rounds' ratios raw /
 * dgrun (1.0 = as fast as raw MPI).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "bench_mpi_util.h"
#include "program.h"
#include "dg_alloc.h"
#include "dg_util.h"

static void die(const char *what, const dg_error *e)
{
    fprintf(stderr, "bench_allreduce: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

static double timed(iter_fn fn, void *ctx, int reps)
{
    return bench_timed(fn, ctx, reps, 3);
}

typedef struct ctx {
    dgr_runner *r;
    float *buf;
    long n;
} ctx;

static void run_dgrun(void *p, int k)
{
    ctx *c = p;
    dg_error err;
    if (dgr_runner_run(c->r, k, NULL, &err) != DG_OK)
        die("run", &err);
}

static void run_raw(void *p, int k)
{
    ctx *c = p;
    (void)k;
    MPI_Allreduce(MPI_IN_PLACE, c->buf, (int)c->n, MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
}

/* The graph: per layer a weight and a bias Variable and their AllReduces. */
static char *graph_text(const int *layers, int nl, int w, long *params)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "{\"version\": 1, \"cluster\": {\"worker\": %d}, "
                 "\"replicate\": {\"job\": \"worker\", \"strategy\": "
                 "\"allreduce\"}, \"nodes\": [", w);
    *params = 0;
    for (int i = 1; i < nl; i++) {
        for (int bias = 0; bias < 2; bias++) {
            const char *nm = bias ? "b" : "w";
            if (bias)
                dg_sbuf_addf(&b, "%s{\"name\": \"%s%d\", \"op\": \"Variable\", "
                             "\"attrs\": {\"dtype\": \"float32\", \"shape\": "
                             "[%d], \"init\": {\"zeros\": {}}}}", i > 1 || bias
                             ? ", " : "", nm, i, layers[i]);
            else
                dg_sbuf_addf(&b, "%s{\"name\": \"%s%d\", \"op\": \"Variable\", "
                             "\"attrs\": {\"dtype\": \"float32\", \"shape\": "
                             "[%d, %d], \"init\": {\"zeros\": {}}}}",
                             i > 1 ? ", " : "", nm, i, layers[i - 1],
                             layers[i]);
            dg_sbuf_addf(&b, ", {\"name\": \"g_%s%d\", \"op\": \"AllReduce\", "
                         "\"inputs\": [\"%s%d\"], \"attrs\": {\"reduction\": "
                         "\"mean\"}}", nm, i, nm, i);
            *params += bias ? layers[i] : (long)layers[i - 1] * layers[i];
        }
    }
    dg_sbuf_add(&b, "]}");
    return dg_sbuf_take(&b);
}

static void bench_model(const char *name, const int *layers, int nl,
                        const dg_cluster *cl, int rank, int w)
{
    dg_error err;
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "none";
    long params = 0;
    char *text = graph_text(layers, nl, w, &params);
    dg_graph *g = text ? dg_graph_load("bench_allreduce", text, strlen(text),
                                       &err)
                       : NULL;
    dg_device_list *devs = NULL;
    if (!g || dg_devices_discover(&o, &devs, &err) ||
        dg_cluster_exchange_devices(cl, &devs, &err))
        die("graph", &err);
    dg_program *p = dg_compile(g, &o, devs, &err);
    if (!p)
        die("compile", &err);
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        die("session", &err);
    /* every replica's AllReduces: the targets of this rank's replica */
    int32_t *tg = dg_calloc((size_t)p->g->n_nodes, sizeof *tg);
    int nt = 0;
    for (int32_t i = 0; i < p->g->n_nodes; i++)
        if (p->g->nodes[i].op == DGC_OPID_AllReduce)
            tg[nt++] = i;
    ctx c = {NULL, calloc((size_t)params, sizeof(float)), params};
    c.r = dgr_session_runner((dgr_session *)(void *)s, NULL, 0, tg, nt, &err);
    if (!c.r || !c.buf)
        die("runner", &err);
    double bytes = 4.0 * (double)params;
    int reps = (int)(3e8 / (bytes > 4096 ? bytes : 4096));
    reps = reps < 3 ? 3 : reps > 1000 ? 1000 : reps;
    for (int k = 0; k < 3; k++) { /* warm up both */
        run_dgrun(&c, k);
        run_raw(&c, k);
    }
    /* interleaved rounds (the machine's load drifts): the medians of
     * ROUNDS timings of each, and the median of the per-round ratios */
    enum { ROUNDS = 5 };
    double vd[ROUNDS], vr[ROUNDS], vq[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        vd[i] = timed(run_dgrun, &c, reps);
        vr[i] = timed(run_raw, &c, reps);
        vq[i] = vr[i] / vd[i];
    }
    qsort(vd, ROUNDS, sizeof vd[0], bench_cmp_double);
    qsort(vr, ROUNDS, sizeof vr[0], bench_cmp_double);
    qsort(vq, ROUNDS, sizeof vq[0], bench_cmp_double);
    double td = vd[ROUNDS / 2], tr = vr[ROUNDS / 2];
    /* an allreduce moves 2 (W-1)/W of the bytes per rank (ring) */
    double alg = bytes * 2.0 * (w - 1) / w;
    if (rank == 0)
        printf("%-18s %10ld %2d %8d %12.1f %12.1f %9.3f %9.3f %7.3f\n", name,
               params, nt / w, w, td, tr, alg / td / 1e3, alg / tr / 1e3,
               vq[ROUNDS / 2]);
    fflush(stdout);
    dgr_runner_free(c.r);
    free(c.buf);
    dg_free(tg);
    dg_free(text);
    dg_session_free(s);
    dg_program_free(p); /* (it owns the graph) */
    dg_devices_free(devs);
}

int main(void)
{
    dg_error err;
    const char *env = getenv("OMPI_COMM_WORLD_SIZE");
    if (!env)
        env = getenv("PMI_SIZE");
    int ws = env ? atoi(env) : 1;
    char spec[32];
    snprintf(spec, sizeof spec, "worker=%d", ws);
    dg_cluster *cl;
    if (dg_cluster_parse(spec, &cl, &err))
        die("cluster", &err);
    int rank;
    if (dg_cluster_join(cl, &rank, &err))
        die("join (run it with mpirun -np N)", &err);
    if (rank == 0)
        printf("%-18s %10s %2s %8s %12s %12s %9s %9s %7s\n", "model", "params",
               "T", "replicas", "dgrun us", "raw us", "dgrun GB/s",
               "raw GB/s", "raw/dg");
    static const int digits[] = {64, 128, 10};
    static const int big[] = {1024, 4096, 4096, 1024, 10};
    bench_model("digits MLP", digits, 3, cl, rank, ws);
    bench_model("25M MLP", big, 5, cl, rank, ws);
    dg_cluster_free(cl);
    dg_cluster_leave();
    return 0;
}
