/*
 * devices.c -- device lists (CPU:0 plus GPUs, real or assumed) and device
 * specifications: parsing every spelling SPEC 3 accepts, merging partial
 * specs (SPEC 4.1, 4.2), printing them canonically and matching them
 * against devices.
 *
 * Accepted spellings: TensorFlow's two parsers, Python's
 * DeviceSpec.from_string for dgrun's own device strings and C++
 * DeviceNameUtils::ParseFullName for a GraphDef's (see "Two syntaxes"
 * below).
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

/* Two syntaxes, both TensorFlow's (issue 21, item 5; the recorded answers
 * of TF 2.21 are tests/compiler/devspec_tf_cases.h), and dgrun's own:
 *
 * DGC_DEVSPEC_DGRUN (dgrun's JSON `device`, placement rules, --device,
 * --expect goldens): every form either of TF's parsers accepts, with
 * Python's meaning where Python accepts it (`with tf.device(s)`), else
 * C++'s; and SPEC 3's "`*` or a missing ID for any" in Python's form
 * ("/task:* /cpu" without the space, "device:GPU").  Malformed only where
 * all three reject.
 *
 * DGC_DEVSPEC_PY, Python's tf.DeviceSpec.from_string: s is split on '/',
 * each piece on ':'; a piece whose first field is empty ("", ":0") is
 * skipped; job:NAME, replica:N, task:N;
 * TYPE or TYPE:N with TYPE any case of CPU, GPU, TPU, CUSTOM, EPU (upper-
 * cased); device:TYPE:N (TYPE as written, but cpu/gpu upper-cased); N '*'
 * for a device index means any; N is Python's int() (spaces around, a
 * sign, '_' between digits); later job/replica/task pieces replace earlier
 * ones, a second device type is an error, anything else is an error.  TF
 * then hands the string DeviceSpec prints to the C++ placer, so what that
 * rejects is malformed here too: a job that is no [A-Za-z][A-Za-z0-9_]*
 * name ('*' is any job), a negative number, a device type that is no such
 * name ('*' is any type).
 *
 * DGC_DEVSPEC_CPP, C++ DeviceNameUtils::ParseFullName (NodeDef `device` of
 * a GraphDef): "" or "/", else a sequence of /job:NAME|*,
 * /replica:DIGITS|*, /task:DIGITS|*, /device:TYPE|*[:DIGITS|*],
 * /cpu:ID, /CPU:ID, /gpu:ID, /GPU:ID (ID digits or '*'), later ones
 * replacing earlier ones; TYPE [A-Za-z][A-Za-z0-9_]* case-sensitive
 * (/device:gpu:0 is a type "gpu" no device has).
 *
 * A type other than CPU and GPU is kept by name (DGC_TYPE_OTHER): no dgrun
 * device has it, so a request for it fails with SPEC's "available devices
 * are [...]" error (or falls back under soft placement), as in TF on a
 * machine without that device. */

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* [A-Za-z][A-Za-z0-9_]*: TF's job names and device types. */
static int tf_name(const char *p, size_t len)
{
    if (len == 0 || !is_alpha(p[0]))
        return 0;
    for (size_t i = 1; i < len; i++)
        if (!is_alpha(p[i]) && !is_digit(p[i]) && p[i] != '_')
            return 0;
    return 1;
}

static int set_job(dgc_devspec *o, const char *p, size_t len)
{
    if (len >= sizeof o->job)
        return -1;
    memcpy(o->job, p, len);
    o->job[len] = '\0';
    o->has_job = 1;
    return 0;
}

/* Type name [p, p+len) (a TF name): CPU, GPU or another one. */
static int set_type(dgc_devspec *o, const char *p, size_t len)
{
    if (len == 3 && memcmp(p, "CPU", 3) == 0) {
        o->type = DG_DEV_CPU;
    } else if (len == 3 && memcmp(p, "GPU", 3) == 0) {
        o->type = DG_DEV_GPU;
    } else {
        if (len >= sizeof o->type_name)
            return -1;
        memcpy(o->type_name, p, len);
        o->type_name[len] = '\0';
        o->type = DGC_TYPE_OTHER;
    }
    return 0;
}

/* ---- C++ DeviceNameUtils::ParseFullName ---- */

static int consume(const char **p, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(*p, prefix, n) != 0)
        return 0;
    *p += n;
    return 1;
}

/* ConsumeLeadingDigits: at least one digit; dgrun's ids are ints. */
static int consume_number(const char **p, int *v)
{
    const char *q = *p;
    long long x = 0;
    if (!is_digit(*q))
        return 0;
    for (; is_digit(*q); q++) {
        x = x * 10 + (*q - '0');
        if (x > 2147483647LL)
            return 0;
    }
    *v = (int)x;
    *p = q;
    return 1;
}

/* [A-Za-z][A-Za-z0-9_]* up to `stop1` / `stop2` or the end: 0 if another
 * character comes first. */
static int consume_name(const char **p, char stop2, const char **b,
                        size_t *len)
{
    const char *q = *p;
    if (!is_alpha(*q))
        return 0;
    for (q++; *q && *q != '/' && *q != stop2; q++)
        if (!is_alpha(*q) && !is_digit(*q) && *q != '_')
            return 0;
    *b = *p;
    *len = (size_t)(q - *p);
    *p = q;
    return 1;
}

static int parse_cpp(const char *s, dgc_devspec *o)
{
    if (strcmp(s, "/") == 0)
        return 0;
    const char *p = s, *b;
    size_t len;
    while (*p) {
        int progress = 0;
        if (consume(&p, "/job:")) {
            if (consume(&p, "*")) {
                o->has_job = 0;
            } else if (!consume_name(&p, '/', &b, &len) ||
                       set_job(o, b, len)) {
                return -1;
            }
            progress = 1;
        }
        if (consume(&p, "/replica:")) {
            o->replica = -1;
            if (!consume(&p, "*") && !consume_number(&p, &o->replica))
                return -1;
            progress = 1;
        }
        if (consume(&p, "/task:")) {
            o->task = -1;
            if (!consume(&p, "*") && !consume_number(&p, &o->task))
                return -1;
            progress = 1;
        }
        if (consume(&p, "/device:")) {
            if (consume(&p, "*")) {
                o->type = DGC_TYPE_ANY;
            } else if (!consume_name(&p, ':', &b, &len) ||
                       set_type(o, b, len)) {
                return -1;
            }
            o->id = -1;
            if (consume(&p, ":") && !consume(&p, "*") &&
                !consume_number(&p, &o->id))
                return -1;
            progress = 1;
        }
        for (int gpu = 0; gpu < 2; gpu++)
            if (consume(&p, gpu ? "/gpu:" : "/cpu:") ||
                consume(&p, gpu ? "/GPU:" : "/CPU:")) {
                o->type = gpu ? DG_DEV_GPU : DG_DEV_CPU;
                o->id = -1;
                if (!consume(&p, "*") && !consume_number(&p, &o->id))
                    return -1;
                progress = 1;
            }
        if (!progress)
            return -1;
    }
    return 0;
}

/* ---- Python's DeviceSpec.from_string ---- */

/* Python's int() of [p, p+len): ASCII whitespace around, an optional sign,
 * digits with single '_' between them.  0 ok (*v; beyond int range is an
 * error), -1 not a number. */
static int py_int(const char *p, size_t len, long long *v)
{
    while (len && strchr(" \t\n\v\f\r", p[0]))
        p++, len--;
    while (len && strchr(" \t\n\v\f\r", p[len - 1]))
        len--;
    int neg = 0;
    if (len && (p[0] == '+' || p[0] == '-')) {
        neg = p[0] == '-';
        p++, len--;
    }
    if (!len || !is_digit(p[0]) || !is_digit(p[len - 1]))
        return -1;
    long long x = 0;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '_' && is_digit(p[i + 1]))
            continue;
        if (!is_digit(p[i]))
            return -1;
        x = x * 10 + (p[i] - '0');
        if (x > 2147483647LL)
            return -1;
    }
    *v = neg ? -x : x;
    return 0;
}

/* A replica, task or device index as Python reads it, then as the C++
 * placer reads the number DeviceSpec prints: 0 ok, -1 malformed. */
static int py_index(const char *p, size_t len, int *dst)
{
    long long v;
    if (py_int(p, len, &v) || v < 0)
        return -1;
    *dst = (int)v;
    return 0;
}

static int upper_is(const char *p, size_t len, const char *name)
{
    if (len != strlen(name))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = p[i] >= 'a' && p[i] <= 'z' ? (char)(p[i] - 32) : p[i];
        if (c != name[i])
            return 0;
    }
    return 1;
}

/* Python's DeviceSpec.from_string; with `any_id` (SPEC 3's own list: "`*`
 * or a missing ID for any" in every component) also replica:* and task:*,
 * and device:TYPE or device:* without an index. */
static int parse_py(const char *s, dgc_devspec *o, int any_id)
{
    static const char *const types[] = {"CPU", "GPU", "TPU", "CUSTOM", "EPU",
                                        NULL};
    const char *job = NULL;
    size_t job_len = 0;
    int have_type = 0;
    for (const char *p = s;;) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        /* the fields of the piece: y[0..ly) */
        const char *y[3] = {p, NULL, NULL};
        size_t yl[3] = {0, 0, 0};
        int ly = 1;
        for (size_t i = 0, st = 0; i <= len; i++) {
            if (i < len && p[i] != ':')
                continue;
            if (ly <= 3)
                yl[ly - 1] = i - st;
            if (i < len) {
                if (ly < 3)
                    y[ly] = p + i + 1;
                ly++;
                st = i + 1;
            }
        }
        int tidx = -1;
        for (int k = 0; types[k] && ly <= 2; k++)
            if (upper_is(y[0], yl[0], types[k]))
                tidx = k;
        if (yl[0] == 0) {
            /* skipped: an empty piece, ":0" */
        } else if (ly == 2 && yl[0] == 3 && memcmp(y[0], "job", 3) == 0) {
            job = y[1];
            job_len = yl[1];
        } else if (ly == 2 && yl[0] == 7 && memcmp(y[0], "replica", 7) == 0) {
            if (!(any_id && yl[1] == 1 && y[1][0] == '*') &&
                py_index(y[1], yl[1], &o->replica))
                return -1;
        } else if (ly == 2 && yl[0] == 4 && memcmp(y[0], "task", 4) == 0) {
            if (!(any_id && yl[1] == 1 && y[1][0] == '*') &&
                py_index(y[1], yl[1], &o->task))
                return -1;
        } else if (tidx >= 0) {
            if (have_type)
                return -1; /* "Multiple device types are not allowed" */
            have_type = 1;
            set_type(o, types[tidx], strlen(types[tidx]));
            if (ly == 2 && !(yl[1] == 1 && y[1][0] == '*') &&
                py_index(y[1], yl[1], &o->id))
                return -1;
        } else if ((ly == 3 || (any_id && ly == 2)) && yl[0] == 6 &&
                   memcmp(y[0], "device", 6) == 0) {
            if (have_type)
                return -1;
            have_type = 1;
            if (yl[1] == 1 && y[1][0] == '*')
                o->type = DGC_TYPE_ANY; /* "/device:*:N": any type */
            else if (yl[1] == 3 && (memcmp(y[1], "cpu", 3) == 0 ||
                                    memcmp(y[1], "gpu", 3) == 0))
                o->type = y[1][0] == 'c' ? DG_DEV_CPU : DG_DEV_GPU;
            else if (!tf_name(y[1], yl[1]) || set_type(o, y[1], yl[1]))
                return -1;
            if (ly == 3 && !(yl[2] == 1 && y[2][0] == '*')) {
                for (size_t i = 0; i < yl[2]; i++) /* str.isdigit() */
                    if (!is_digit(y[2][i]))
                        return -1;
                if (py_index(y[2], yl[2], &o->id))
                    return -1;
            }
        } else {
            return -1; /* "Unknown attribute" */
        }
        if (!e)
            break;
        p = e + 1;
    }
    if (job && !(job_len == 1 && job[0] == '*') &&
        (!tf_name(job, job_len) || set_job(o, job, job_len)))
        return -1;
    return 0;
}

/* One parser over s into a cleared *out; 0 or -1 (then *out is cleared). */
static int parse_one(const char *s, dgc_devspec *out, int syntax)
{
    dgc_devspec_clear(out);
    int rc = syntax == DGC_DEVSPEC_CPP
                 ? parse_cpp(s, out)
                 : parse_py(s, out, syntax != DGC_DEVSPEC_PY);
    if (rc)
        dgc_devspec_clear(out);
    return rc;
}

int dgc_devspec_parse_as(const char *s, dgc_devspec *out, int syntax)
{
    dgc_devspec_clear(out);
    if (!s || !*s)
        return 0;
    if (syntax != DGC_DEVSPEC_DGRUN)
        return parse_one(s, out, syntax);
    /* the union, each form with the meaning of the first that accepts it:
     * Python's, then C++'s, then SPEC 3's '*' / missing ID anywhere */
    if (parse_one(s, out, DGC_DEVSPEC_PY) == 0 ||
        parse_one(s, out, DGC_DEVSPEC_CPP) == 0)
        return 0;
    return parse_one(s, out, DGC_DEVSPEC_DGRUN);
}

int dgc_devspec_parse(const char *s, dgc_devspec *out)
{
    return dgc_devspec_parse_as(s, out, DGC_DEVSPEC_DGRUN);
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
