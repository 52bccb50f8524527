/*
 * cluster.h -- the cluster a graph declares (SPEC 8.1): jobs in order with
 * their task counts, validated; shared by the loader (the graph's
 * "cluster"), --cluster (dg_cluster_parse) and the compiler.
 */
#ifndef DGC_CLUSTER_H
#define DGC_CLUSTER_H

#include "dgrun.h"

typedef struct dgc_cluster_job {
    char name[64];
    int tasks;
    int first_rank; /* rank of its task 0 */
} dgc_cluster_job;

struct dg_cluster {
    dgc_cluster_job *jobs;
    int n_jobs;
    int n_tasks;
};

/* An empty cluster; NULL on nomem. */
dg_cluster *dgc_cluster_new(void);
/* Append job `name` (len bytes) with `tasks` tasks, validating the name
 * ([a-z][a-z0-9_]*, not "localhost", not listed before) and the count (1 to
 * DG_CLUSTER_MAX_TASKS, and the total).  Errors are `code` with messages
 * starting with `what` ("cluster" or "--cluster"). */
dg_status dgc_cluster_add(dg_cluster *c, const char *name, size_t len,
                          long long tasks, const char *what, dg_status code,
                          dg_error *err);
/* Deep copy; NULL on nomem (or when c is NULL). */
dg_cluster *dgc_cluster_copy(const dg_cluster *c);

#endif
