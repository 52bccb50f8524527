/*
 * cluster.c -- dg_cluster: building and validating a cluster declaration
 * (the graph's "cluster" object and --cluster JOB=N,...), rank <-> (job,
 * task) arithmetic and the chief (SPEC 8.1, 8.2).  Ranks are the tasks in
 * job order: rank 0 is the first job's task 0.
 */
#include "cluster.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dg_cluster *dgc_cluster_new(void)
{
    return dg_calloc(1, sizeof(dg_cluster));
}

void dg_cluster_free(dg_cluster *c)
{
    if (!c)
        return;
    dg_free(c->jobs);
    dg_free(c);
}

static int valid_name(const char *s, size_t len)
{
    if (len == 0 || s[0] < 'a' || s[0] > 'z')
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '_'))
            return 0;
    return 1;
}

dg_status dgc_cluster_add(dg_cluster *c, const char *name, size_t len,
                          long long tasks, const char *what, dg_status code,
                          dg_error *err)
{
    int shown = len > 40 ? 40 : (int)len;
    if (!valid_name(name, len) || len >= sizeof c->jobs->name)
        return dg_err(err, code, "%s: job name '%.*s%s' must match "
                      "[a-z][a-z0-9_]* (at most 63 characters)", what, shown,
                      name, len > 40 ? "..." : "");
    if (len == 9 && memcmp(name, "localhost", 9) == 0)
        return dg_err(err, code, "%s: job name 'localhost' is reserved (it "
                      "names the one process of a graph without a cluster)",
                      what);
    for (int j = 0; j < c->n_jobs; j++)
        if (strlen(c->jobs[j].name) == len &&
            memcmp(c->jobs[j].name, name, len) == 0)
            return dg_err(err, code, "%s: job '%.*s' is listed twice", what,
                          shown, name);
    if (tasks < 1 || tasks > DG_CLUSTER_MAX_TASKS)
        return dg_err(err, code, "%s: job '%.*s' needs a task count from 1 "
                      "to %d, got %lld", what, shown, name,
                      DG_CLUSTER_MAX_TASKS, tasks);
    if (c->n_tasks + tasks > DG_CLUSTER_MAX_TASKS)
        return dg_err(err, code, "%s: more than %d tasks in all", what,
                      DG_CLUSTER_MAX_TASKS);
    dgc_cluster_job *nj =
        dg_realloc(c->jobs, sizeof *nj * (size_t)(c->n_jobs + 1));
    if (!nj)
        return dg_err_nomem(err, "cluster");
    c->jobs = nj;
    dgc_cluster_job *j = &c->jobs[c->n_jobs++];
    memset(j, 0, sizeof *j);
    memcpy(j->name, name, len);
    j->tasks = (int)tasks;
    j->first_rank = c->n_tasks;
    c->n_tasks += (int)tasks;
    return DG_OK;
}

dg_cluster *dgc_cluster_copy(const dg_cluster *c)
{
    if (!c)
        return NULL;
    dg_cluster *d = dgc_cluster_new();
    if (!d)
        return NULL;
    if (c->n_jobs > 0) {
        d->jobs = dg_malloc(sizeof *d->jobs * (size_t)c->n_jobs);
        if (!d->jobs) {
            dg_free(d);
            return NULL;
        }
        memcpy(d->jobs, c->jobs, sizeof *d->jobs * (size_t)c->n_jobs);
    }
    d->n_jobs = c->n_jobs;
    d->n_tasks = c->n_tasks;
    return d;
}

dg_status dg_cluster_parse(const char *text, dg_cluster **out, dg_error *err)
{
    *out = NULL;
    const char *what = "--cluster";
    if (!text || !*text)
        return dg_err(err, DG_E_USAGE, "%s expects JOB=N[,JOB=N...], got ''",
                      what);
    dg_cluster *c = dgc_cluster_new();
    if (!c)
        return dg_err_nomem(err, "cluster");
    const char *p = text;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq || eq == p || eq + 1 == p + len) {
            dg_cluster_free(c);
            return dg_err(err, DG_E_USAGE, "%s expects JOB=N[,JOB=N...], got "
                          "'%.80s'", what, text);
        }
        char num[32];
        size_t nl = (size_t)(p + len - (eq + 1));
        long long v = -1;
        if (nl < sizeof num) {
            memcpy(num, eq + 1, nl);
            num[nl] = '\0';
            char *end;
            errno = 0;
            v = strtoll(num, &end, 10);
            if (errno || *end || num[0] < '0' || num[0] > '9')
                v = -1;
        }
        if (v < 0) {
            dg_cluster_free(c);
            return dg_err(err, DG_E_USAGE, "%s: job '%.*s' needs a task count "
                          "from 1 to %d, got '%.*s'", what,
                          (int)(eq - p > 40 ? 40 : eq - p), p,
                          DG_CLUSTER_MAX_TASKS, (int)(nl > 20 ? 20 : nl),
                          eq + 1);
        }
        dg_status st = dgc_cluster_add(c, p, (size_t)(eq - p), v, what,
                                       DG_E_USAGE, err);
        if (st) {
            dg_cluster_free(c);
            return st;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    *out = c;
    return DG_OK;
}

int dg_cluster_job_count(const dg_cluster *c)
{
    return c ? c->n_jobs : 0;
}

const char *dg_cluster_job_name(const dg_cluster *c, int job)
{
    return c && job >= 0 && job < c->n_jobs ? c->jobs[job].name : NULL;
}

int dg_cluster_job_tasks(const dg_cluster *c, int job)
{
    return c && job >= 0 && job < c->n_jobs ? c->jobs[job].tasks : 0;
}

int dg_cluster_task_count(const dg_cluster *c)
{
    return c ? c->n_tasks : 0;
}

int dg_cluster_task_of(const dg_cluster *c, int rank, int *task)
{
    if (!c || rank < 0 || rank >= c->n_tasks)
        return -1;
    for (int j = 0; j < c->n_jobs; j++)
        if (rank < c->jobs[j].first_rank + c->jobs[j].tasks) {
            if (task)
                *task = rank - c->jobs[j].first_rank;
            return j;
        }
    return -1;
}

int dg_cluster_rank_of(const dg_cluster *c, const char *job, int task)
{
    if (!c || !job)
        return -1;
    for (int j = 0; j < c->n_jobs; j++)
        if (strcmp(c->jobs[j].name, job) == 0)
            return task >= 0 && task < c->jobs[j].tasks
                       ? c->jobs[j].first_rank + task
                       : -1;
    return -1;
}

int dg_cluster_chief(const dg_cluster *c)
{
    if (!c || c->n_jobs == 0)
        return -1;
    int r = dg_cluster_rank_of(c, "chief", 0);
    if (r < 0)
        r = dg_cluster_rank_of(c, "worker", 0);
    return r < 0 ? 0 : r;
}

void dg_cluster_str(const dg_cluster *c, char *buf, size_t n)
{
    size_t off = 0;
    if (n == 0)
        return;
    buf[0] = '\0';
    for (int j = 0; c && j < c->n_jobs && off < n; j++) {
        int k = snprintf(buf + off, n - off, "%s%s=%d", j ? "," : "",
                         c->jobs[j].name, c->jobs[j].tasks);
        if (k < 0)
            break;
        off += (size_t)k;
    }
}
