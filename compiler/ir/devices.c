/*
 * devices.c -- device lists (CPU:0 plus GPUs, real or assumed) and device
 * specifications: parsing every spelling SPEC 3 accepts, merging partial
 * specs (SPEC 4.1, 4.2), printing them canonically and matching them
 * against devices.
 *
 * Accepted spellings: components separated by '/', leading '/' optional:
 *   job:NAME  replica:N  task:N  device:TYPE[:ID]  TYPE[:ID] (legacy)
 * in any order and any subset, each at most once, where TYPE is CPU or GPU
 * (legacy components also cpu / gpu), ID a decimal number or '*', and a
 * missing ID means "any"; "job:*", "replica:*" and "task:*" are "any"
 * too, as in TF's DeviceNameUtils::ParseFullName.  In the full form
 * /device:TYPE:ID, TYPE may also be another upper-case device type (TPU,
 * XLA_GPU, ...), as TF accepts: no dgrun device has it, so such a request
 * fails with SPEC's "available devices are [...]" error (or falls back
 * under soft placement), exactly as TF on a machine without that device.
 */
#include "devices.h"
#include "cluster.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void dgc_device_cpu_info(dg_device_info *d, const dg_kernel_set *ks)
{
    memset(d, 0, sizeof *d);
    dgc_device_fullname(DG_DEV_CPU, 0, d->name, sizeof d->name);
    d->type = DG_DEV_CPU;
    d->index = 0;
    d->fp64 = 1;
    d->physical = -1;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0)
        d->mem_bytes = (uint64_t)pages * (uint64_t)psz;
    d->kernels = ks;
}

dg_device_list *dgc_devices_new(void)
{
    return dg_calloc(1, sizeof(dg_device_list));
}

dg_device_list *dgc_devices_new_cpu_only(const dg_kernel_set *cpu)
{
    dg_device_list *l = dgc_devices_new();
    if (!l)
        return NULL;
    dg_device_info d;
    dgc_device_cpu_info(&d, cpu);
    if (dgc_devices_append(l, &d)) {
        dg_free(l);
        return NULL;
    }
    return l;
}

int dgc_devices_append(dg_device_list *l, const dg_device_info *d)
{
    dg_device_info *nd = dg_realloc(l->devs, sizeof *nd * (size_t)(l->n + 1));
    if (!nd)
        return -1;
    l->devs = nd;
    l->devs[l->n++] = *d;
    return 0;
}

void dgc_device_fullname(dg_devtype t, int index, char *buf, size_t n)
{
    dgc_device_fullname_at("localhost", 0, t, index, buf, n);
}

void dgc_device_fullname_at(const char *job, int task, dg_devtype t,
                            int index, char *buf, size_t n)
{
    snprintf(buf, n, "/job:%s/replica:0/task:%d/device:%s:%d", job, task,
             t == DG_DEV_GPU ? "GPU" : "CPU", index);
}

const char *dgc_device_job(const dg_device_info *d)
{
    return d->job[0] ? d->job : "localhost";
}

#define MAX_CLUSTER_DEVICES 65536

dg_status dg_devices_for_cluster(const dg_cluster *c,
                                 const dg_device_list *const *per_task,
                                 dg_device_list **out, dg_error *err)
{
    *out = NULL;
    if (!c || c->n_tasks < 1 || !per_task)
        return dg_err(err, DG_E_USAGE, "no cluster to list devices for");
    long long total = 0;
    for (int r = 0; r < c->n_tasks; r++) {
        if (!per_task[r] || per_task[r]->n < 1)
            return dg_err(err, DG_E_USAGE, "task %d has no devices", r);
        total += per_task[r]->n;
    }
    if (total > MAX_CLUSTER_DEVICES)
        return dg_err(err, DG_E_USAGE, "a cluster of %d tasks with these "
                      "devices has %lld devices in all (at most %d)",
                      c->n_tasks, total, MAX_CLUSTER_DEVICES);
    dg_device_list *l = dg_calloc(1, sizeof *l);
    if (l)
        l->devs = dg_malloc(sizeof *l->devs * (size_t)total);
    if (!l || !l->devs) {
        dg_devices_free(l);
        return dg_err_nomem(err, "device list");
    }
    for (int r = 0; r < c->n_tasks; r++) {
        int task;
        int j = dg_cluster_task_of(c, r, &task);
        for (int i = 0; i < per_task[r]->n; i++) {
            dg_device_info *d = &l->devs[l->n++];
            *d = per_task[r]->devs[i];
            memcpy(d->job, c->jobs[j].name, sizeof d->job);
            d->task = task;
            d->rank = r;
            dgc_device_fullname_at(d->job, task, d->type, d->index, d->name,
                                   sizeof d->name);
        }
    }
    *out = l;
    return DG_OK;
}

int dgc_devices_chief(const dg_device_list *l, dgc_devspec *out)
{
    dgc_devspec_clear(out);
    if (!l || l->n < 1 || !l->devs[0].job[0])
        return 0;
    /* task 0 of "chief", else of "worker", else of the first job (the job
     * of rank 0, whose devices come first) */
    const char *job = l->devs[0].job;
    for (int pass = 0; pass < 2; pass++) {
        const char *want = pass == 0 ? "chief" : "worker";
        int found = 0;
        for (int i = 0; i < l->n && !found; i++)
            found = strcmp(l->devs[i].job, want) == 0;
        if (found) {
            job = want;
            break;
        }
    }
    out->has_job = 1;
    snprintf(out->job, sizeof out->job, "%s", job);
    out->replica = 0;
    out->task = 0;
    return 1;
}

void dgc_devspec_complete(dgc_devspec *s, const dgc_devspec *chief)
{
    if (s->has_job)
        return;
    s->has_job = 1;
    memcpy(s->job, chief->job, sizeof s->job);
    if (s->task < 0)
        s->task = chief->task;
}

dg_status dgc_devices_assume(int n_gpus, const dg_kernel_set *cpu,
                             const dg_kernel_set *gpu, dg_device_list **out,
                             dg_error *err)
{
    *out = NULL;
    if (n_gpus < 0 || n_gpus > 4096)
        return dg_err(err, DG_E_USAGE,
                      "--assume-gpus: %d is not a GPU count (0 to 4096)",
                      n_gpus);
    dg_device_list *l = dgc_devices_new_cpu_only(cpu);
    if (!l)
        return dg_err_nomem(err, "device list");
    for (int i = 0; i < n_gpus; i++) {
        dg_device_info d;
        memset(&d, 0, sizeof d);
        dgc_device_fullname(DG_DEV_GPU, i, d.name, sizeof d.name);
        d.type = DG_DEV_GPU;
        d.index = i;
        d.fp64 = 1;
        d.physical = i;
        snprintf(d.cl_name, sizeof d.cl_name, "assumed GPU %d", i);
        snprintf(d.platform, sizeof d.platform, "none (--assume-gpus)");
        d.kernels = gpu;
        if (dgc_devices_append(l, &d)) {
            dg_devices_free(l);
            return dg_err_nomem(err, "device list");
        }
    }
    *out = l;
    return DG_OK;
}

int dg_devices_count(const dg_device_list *l)
{
    return l ? l->n : 0;
}

const dg_device_info *dg_devices_get(const dg_device_list *l, int i)
{
    if (!l || i < 0 || i >= l->n)
        return NULL;
    return &l->devs[i];
}

void dg_devices_free(dg_device_list *l)
{
    if (!l)
        return;
    dg_free(l->devs);
    dg_free(l);
}

/* ---- specifications ------------------------------------------------------ */

void dgc_devspec_clear(dgc_devspec *s)
{
    memset(s, 0, sizeof *s);
    s->replica = -1;
    s->task = -1;
    s->type = DGC_TYPE_ANY;
    s->id = -1;
}

/* Parse a non-negative decimal number of len bytes; -1 if not one. */
static long parse_num(const char *p, size_t len)
{
    if (len == 0 || len > 9)
        return -1;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

/* ID text: digits or '*' (any).  0 ok, -1 malformed. */
static int parse_id(const char *p, size_t len, int *id)
{
    if (len == 1 && p[0] == '*') {
        *id = -1;
        return 0;
    }
    long v = parse_num(p, len);
    if (v < 0)
        return -1;
    *id = (int)v;
    return 0;
}

static int type_of(const char *p, size_t len, int legacy)
{
    if (len == 3 && memcmp(p, "CPU", 3) == 0)
        return DG_DEV_CPU;
    if (len == 3 && memcmp(p, "GPU", 3) == 0)
        return DG_DEV_GPU;
    if (legacy && len == 3 && memcmp(p, "cpu", 3) == 0)
        return DG_DEV_CPU;
    if (legacy && len == 3 && memcmp(p, "gpu", 3) == 0)
        return DG_DEV_GPU;
    return -2;
}

/* An upper-case device type other than CPU/GPU: [A-Z][A-Z0-9_]*.  Stores
 * it in o and returns 1, or 0 if the text is not such a name. */
static int other_type(dgc_devspec *o, const char *p, size_t len)
{
    if (len == 0 || len >= sizeof o->type_name || p[0] < 'A' || p[0] > 'Z')
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= '0' && p[i] <= '9') ||
              p[i] == '_'))
            return 0;
    memcpy(o->type_name, p, len);
    o->type_name[len] = '\0';
    o->type = DGC_TYPE_OTHER;
    return 1;
}

static int valid_job(const char *p, size_t len)
{
    if (len == 0 || len >= 64)
        return 0;
    if (!((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z')))
        return 0;
    for (size_t i = 1; i < len; i++) {
        char c = p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_'))
            return 0;
    }
    return 1;
}

/* One component [p, p+len).  0 ok, -1 malformed. */
static int parse_component(const char *p, size_t len, dgc_devspec *o,
                           int *seen_type)
{
    const char *c1 = memchr(p, ':', len);
    if (!c1)
        goto legacy;
    size_t klen = (size_t)(c1 - p);
    const char *v = c1 + 1;
    size_t vlen = len - klen - 1;
    if (klen == 3 && memcmp(p, "job", 3) == 0) {
        if (vlen == 1 && v[0] == '*') /* TF: "/job:*" is any job */
            return 0;
        if (o->has_job || !valid_job(v, vlen))
            return -1;
        memcpy(o->job, v, vlen);
        o->job[vlen] = '\0';
        o->has_job = 1;
        return 0;
    }
    if ((klen == 7 && memcmp(p, "replica", 7) == 0) ||
        (klen == 4 && memcmp(p, "task", 4) == 0)) {
        int *dst = klen == 7 ? &o->replica : &o->task;
        if (vlen == 1 && v[0] == '*') /* any, as in TF */
            return 0;
        long n = parse_num(v, vlen);
        if (*dst >= 0 || n < 0)
            return -1;
        *dst = (int)n;
        return 0;
    }
    if (klen == 6 && memcmp(p, "device", 6) == 0) {
        if (*seen_type)
            return -1;
        *seen_type = 1;
        const char *c2 = memchr(v, ':', vlen);
        size_t tlen = c2 ? (size_t)(c2 - v) : vlen;
        if (tlen == 1 && v[0] == '*')
            o->type = DGC_TYPE_ANY;
        else if ((o->type = type_of(v, tlen, 0)) < -1 &&
                 !other_type(o, v, tlen))
            return -1;
        if (c2)
            return parse_id(c2 + 1, vlen - tlen - 1, &o->id);
        return 0;
    }
legacy:
    if (*seen_type)
        return -1;
    *seen_type = 1;
    {
        size_t tlen = c1 ? (size_t)(c1 - p) : len;
        if ((o->type = type_of(p, tlen, 1)) < -1)
            return -1;
        if (c1)
            return parse_id(c1 + 1, len - tlen - 1, &o->id);
    }
    return 0;
}

int dgc_devspec_parse(const char *s, dgc_devspec *out)
{
    dgc_devspec_clear(out);
    if (!s || !*s)
        return 0;
    const char *p = s;
    if (*p == '/')
        p++;
    int seen_type = 0;
    if (!*p) /* "/" alone */
        goto bad;
    for (;;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0 || parse_component(p, len, out, &seen_type))
            goto bad;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
bad:
    dgc_devspec_clear(out);
    return -1;
}

int dgc_devspec_is_empty(const dgc_devspec *s)
{
    return !s->has_job && s->replica < 0 && s->task < 0 &&
           s->type == DGC_TYPE_ANY && s->id < 0;
}

void dgc_devspec_merge_over(dgc_devspec *inner, const dgc_devspec *outer)
{
    if (!inner->has_job && outer->has_job) {
        inner->has_job = 1;
        memcpy(inner->job, outer->job, sizeof inner->job);
    }
    if (inner->replica < 0)
        inner->replica = outer->replica;
    if (inner->task < 0)
        inner->task = outer->task;
    if (inner->type == DGC_TYPE_ANY) {
        inner->type = outer->type;
        memcpy(inner->type_name, outer->type_name, sizeof inner->type_name);
    }
    if (inner->id < 0)
        inner->id = outer->id;
}

int dgc_devspec_merge_compatible(dgc_devspec *a, const dgc_devspec *b,
                                 const char **what)
{
    const char *w = NULL;
    if (a->has_job && b->has_job && strcmp(a->job, b->job) != 0)
        w = "jobs";
    else if (a->replica >= 0 && b->replica >= 0 && a->replica != b->replica)
        w = "replicas";
    else if (a->task >= 0 && b->task >= 0 && a->task != b->task)
        w = "tasks";
    else if (a->type != DGC_TYPE_ANY && b->type != DGC_TYPE_ANY &&
             (a->type != b->type ||
              (a->type == DGC_TYPE_OTHER &&
               strcmp(a->type_name, b->type_name) != 0)))
        w = "types";
    else if (a->id >= 0 && b->id >= 0 && a->id != b->id)
        w = "ids";
    if (w) {
        if (what)
            *what = w;
        return -1;
    }
    dgc_devspec_merge_over(a, b);
    return 0;
}

void dgc_devspec_str(const dgc_devspec *s, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
#define PUT(...)                                                         \
    do {                                                                 \
        int k_ = snprintf(buf + off, off < n ? n - off : 0, __VA_ARGS__); \
        if (k_ > 0)                                                      \
            off += (size_t)k_;                                           \
        if (off >= n)                                                    \
            off = n - 1;                                                 \
    } while (0)
    if (s->has_job)
        PUT("/job:%s", s->job);
    if (s->replica >= 0)
        PUT("/replica:%d", s->replica);
    if (s->task >= 0)
        PUT("/task:%d", s->task);
    if (s->type != DGC_TYPE_ANY) {
        const char *tn = s->type == DG_DEV_GPU   ? "GPU"
                         : s->type == DG_DEV_CPU ? "CPU"
                                                 : s->type_name;
        if (s->id >= 0)
            PUT("/device:%s:%d", tn, s->id);
        else
            PUT("/device:%s:*", tn);
    } else if (s->id >= 0) {
        PUT("/device:*:%d", s->id);
    }
#undef PUT
}

int dgc_devspec_matches(const dgc_devspec *s, const dg_device_info *d)
{
    if (s->has_job && strcmp(s->job, dgc_device_job(d)) != 0)
        return 0;
    if (s->replica > 0 || (s->task >= 0 && s->task != d->task))
        return 0;
    if (s->type != DGC_TYPE_ANY && s->type != (int)d->type)
        return 0;
    if (s->id >= 0 && s->id != d->index)
        return 0;
    return 1;
}
