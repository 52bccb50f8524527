/*
 * bench_mpi_util.h -- what the MPI benchmarks (bench_mpi.c,
 * bench_allreduce.c) time with: the median over the ranks' slowest of
 * several timings of an iteration function.
 */
#ifndef DG_BENCH_MPI_UTIL_H
#define DG_BENCH_MPI_UTIL_H

#include <mpi.h>
#include <stdlib.h>

#include "dg_util.h"

typedef void (*iter_fn)(void *ctx, int k);

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of `times` (<= 9) timings of `reps` iterations of fn, in us per
 * iteration, each the slowest rank's.  Collective over MPI_COMM_WORLD. */
static inline double bench_timed(iter_fn fn, void *ctx, int reps, int times)
{
    double t[9];
    if (times > 9)
        times = 9;
    for (int i = 0; i < times; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t t0 = dg_now_ns();
        for (int k = 0; k < reps; k++)
            fn(ctx, k);
        t[i] = (double)(dg_now_ns() - t0) / 1e3 / reps;
        double mx;
        MPI_Allreduce(&t[i], &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[i] = mx;
    }
    qsort(t, (size_t)times, sizeof t[0], bench_cmp_double);
    return t[times / 2];
}

#endif
