/*
 * bench_check.h -- a benchmark must time the work it names.  Since the
 * constant-folding pass (compiler/fold.c) a chain of ops over Consts
 * compiles to one Const, and a benchmark timing it measured nothing while
 * printing a figure (bench_cl's chain once reported -0.01 us/op, "MET").
 * Every benchmark graph therefore starts from state folding cannot remove
 * (a Variable or a fed Placeholder), and each benchmark calls
 * bench_expect_ops() on its compiled program: it exits non-zero, loudly,
 * when fewer nodes of the timed op type survived compilation than the
 * benchmark means to time.  Header-only: each benchmark is one executable.
 */
#ifndef DGRUN_BENCH_CHECK_H
#define DGRUN_BENCH_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dgrun.h"

/* Count the nodes of op type `op` in the compiled program `p` (graph nodes
 * and generated ones, after folding and fusion). */
static inline int bench_count_ops(const dg_program *p, const char *op)
{
    int n = 0, total = dg_program_node_count(p);
    for (int i = 0; i < total; i++) {
        dg_node_info ni;
        dg_program_node(p, i, &ni);
        if (ni.op && strcmp(ni.op, op) == 0)
            n++;
    }
    return n;
}

/* Exit(1) with a message naming the benchmark unless `p` runs at least
 * `want` nodes of op type `op`. */
static inline void bench_expect_ops(const char *bench, const dg_program *p,
                                    const char *op, int want)
{
    int got = bench_count_ops(p, op);
    if (got < want) {
        fprintf(stderr,
                "%s: FAILED: the compiled graph runs %d %s op%s where the "
                "benchmark times %d (did the compiler fold or fuse them "
                "away?): no figure printed\n",
                bench, got, op, got == 1 ? "" : "s", want);
        exit(1);
    }
}

#endif
