/*
 * bench_mpi.c -- a transfer between the tasks of a cluster against raw MPI
 * in the same job.  Run it under `mpirun -np 2`: the graph is a round trip
 * (a Variable of n bytes on /job:worker/task:0, Identity on task 1,
 * Identity back on task 0; Identity aliases, so the runs are the two
 * transfers and the executor), run many times through a session runner;
 * the baseline is a ping-pong of the same bytes with MPI_Send/MPI_Recv.
 * Prints per size: microseconds per round trip for both, bandwidth (2n
 * bytes per round trip), the ratio, and the overhead per transfer.
 *
 *   mpirun -np 2 bench_mpi [BYTES ...]   (default 1 KiB .. 64 MiB)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"
#include "bench_mpi_util.h"
#include "program.h"
#include "dg_util.h"

static void die(const char *what, const dg_error *e)
{
    fprintf(stderr, "bench_mpi: %s: %s\n", what, e ? e->msg : "");
    exit(1);
}

static double timed(iter_fn fn, void *ctx, int reps)
{
    return bench_timed(fn, ctx, reps, 5);
}

typedef struct ctx {
    dgr_runner *r;
    char *buf;
    int n, rank;
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
    if (c->rank == 0) {
        MPI_Send(c->buf, c->n, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(c->buf, c->n, MPI_BYTE, 1, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(c->buf, c->n, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(c->buf, c->n, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    dg_error err;
    dg_cluster *cl;
    if (dg_cluster_parse("worker=2", &cl, &err))
        die("cluster", &err);
    int rank;
    if (dg_cluster_join(cl, &rank, &err))
        die("join (run it with mpirun -np 2)", &err);
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "none";
    o.inter_op_threads = 1;
    o.intra_op_threads = 1;
    long sizes[16] = {1024, 16384, 262144, 1 << 20, 16 << 20, 64 << 20};
    int ns = 6;
    if (argc > 1) {
        ns = 0;
        for (int i = 1; i < argc && ns < 16; i++)
            sizes[ns++] = atol(argv[i]);
    }
    if (rank == 0)
        printf("%10s %12s %12s %10s %10s %7s %12s\n", "bytes", "dgrun us",
               "raw us", "dgrun GB/s", "raw GB/s", "ratio", "overhead us");
    for (int si = 0; si < ns; si++) {
        long n = sizes[si] / 4 * 4;
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"version\": 1, \"cluster\": {\"worker\": 2}, \"nodes\": ["
                 "{\"name\": \"v\", \"op\": \"Variable\", \"device\": "
                 "\"/job:worker/task:0\", \"attrs\": {\"dtype\": \"float32\", "
                 "\"shape\": [%ld], \"init\": {\"zeros\": {}}}},"
                 "{\"name\": \"a\", \"op\": \"Identity\", \"inputs\": [\"v\"],"
                 " \"device\": \"/job:worker/task:1\"},"
                 "{\"name\": \"b\", \"op\": \"Identity\", \"inputs\": [\"a\"],"
                 " \"device\": \"/job:worker/task:0\"}]}", n / 4);
        dg_graph *g = dg_graph_load("bench_mpi", text, strlen(text), &err);
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
        int32_t b = dgc_graph_find(p->g, "b");
        ctx c = {NULL, malloc((size_t)n), (int)n, rank};
        memset(c.buf, 1, (size_t)n);
        c.r = dgr_session_runner((dgr_session *)(void *)s, NULL, 0, &b, 1,
                                 &err);
        if (!c.r)
            die("runner", &err);
        int reps = (int)(256l * 1024 * 1024 / n);
        reps = reps < 4 ? 4 : reps > 2000 ? 2000 : reps;
        for (int k = 0; k < 3; k++) { /* warm up both */
            run_dgrun(&c, k);
            run_raw(&c, k);
        }
        double td = timed(run_dgrun, &c, reps);
        double tr = timed(run_raw, &c, reps);
        if (rank == 0)
            printf("%10ld %12.2f %12.2f %10.3f %10.3f %7.3f %12.2f\n", n, td,
                   tr, 2.0 * n / td / 1e3, 2.0 * n / tr / 1e3, tr / td,
                   (td - tr) / 2);
        fflush(stdout);
        dgr_runner_free(c.r);
        free(c.buf);
        dg_session_free(s);
        dg_program_free(p);
        dg_devices_free(devs);
    }
    dg_cluster_free(cl);
    dg_cluster_leave();
    return 0;
}
