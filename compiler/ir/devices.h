/*
 * devices.h -- device names and the device list placement works from.
 *
 * The compiler never talks to hardware: it gets a dg_device_list either
 * from the runtime (dg_devices_discover) or made up (dg_devices_assume for
 * --assume-gpus), and places nodes on indices into it.  Index 0 is always
 * CPU:0.  This file also parses and merges device specifications
 * (SPEC section 3 and 4.1).
 */
#ifndef DGC_DEVICES_H
#define DGC_DEVICES_H

#include "dgrun.h"

struct dg_device_list {
    dg_device_info *devs;
    int n;
};

/* An empty list; NULL on nomem. */
dg_device_list *dgc_devices_new(void);
/* Fill d with CPU:0 (host memory size, fp64) running kernel set ks. */
void dgc_device_cpu_info(dg_device_info *d, const dg_kernel_set *ks);
/* Create a list holding only CPU:0 with kernel set cpu; NULL on nomem. */
dg_device_list *dgc_devices_new_cpu_only(const dg_kernel_set *cpu);
/* CPU:0 (kernel set cpu) plus n_gpus GPUs that exist only on paper
 * (--assume-gpus; kernel set gpu, fp64).  DG_E_USAGE for a count outside
 * 0..4096.  The runtime's dg_devices_assume passes its backends' sets. */
dg_status dgc_devices_assume(int n_gpus, const dg_kernel_set *cpu,
                             const dg_kernel_set *gpu, dg_device_list **out,
                             dg_error *err);
/* Append a device (info copied); 0 ok, -1 nomem. */
int dgc_devices_append(dg_device_list *l, const dg_device_info *d);
/* Canonical full name into buf: /job:localhost/replica:0/task:0/device:T:i */
void dgc_device_fullname(dg_devtype t, int index, char *buf, size_t n);
/* The same for a device of /job:JOB/task:TASK. */
void dgc_device_fullname_at(const char *job, int task, dg_devtype t,
                            int index, char *buf, size_t n);
/* The device's job: its `job`, "localhost" when that is empty. */
const char *dgc_device_job(const dg_device_info *d);

/* A parsed, possibly partial device specification.  Unset fields: job NULL
 * (has_job 0), replica/task/id -1, type DGC_TYPE_ANY. */
#define DGC_TYPE_ANY (-1)
#define DGC_TYPE_OTHER 2 /* a type no dgrun device has (TPU, XLA_GPU, ...) */
typedef struct dgc_devspec {
    int has_job;
    char job[64];
    int replica;
    int task;
    int type;   /* dg_devtype, DGC_TYPE_OTHER or DGC_TYPE_ANY */
    char type_name[32]; /* the name when type is DGC_TYPE_OTHER */
    int id;     /* -1 = any */
} dgc_devspec;

/* The device-string syntaxes (SPEC 3, issue 21; devices.c says what each
 * accepts): DGC_DEVSPEC_DGRUN, dgrun's own strings (JSON `device`,
 * placement rules, --device, goldens): the union of Python's and C++'s
 * with Python's meaning first, plus SPEC 3's `*` or missing ID anywhere;
 * DGC_DEVSPEC_CPP, C++ DeviceNameUtils::ParseFullName, for the `device` of
 * a GraphDef's NodeDefs; DGC_DEVSPEC_PY, Python's tf.DeviceSpec.from_string
 * alone (tests compare it with TF's). */
enum { DGC_DEVSPEC_DGRUN = 0, DGC_DEVSPEC_CPP = 1, DGC_DEVSPEC_PY = 2 };
/* Parse s in `syntax` ("" and NULL give the empty spec).  Returns 0, or -1
 * if malformed (then *out is the empty spec). */
int dgc_devspec_parse_as(const char *s, dgc_devspec *out, int syntax);
/* dgc_devspec_parse_as(s, out, DGC_DEVSPEC_DGRUN): dgrun's own strings. */
int dgc_devspec_parse(const char *s, dgc_devspec *out);
/* The empty specification (no replica, task, type or id): matches every
 * device. */
void dgc_devspec_clear(dgc_devspec *s);

/* Merge `inner` over `outer` field by field (inner wins). */
void dgc_devspec_merge_over(dgc_devspec *inner, const dgc_devspec *outer);

/* Merge two specs of one colocation group; if they conflict return -1 and
 * set *what to "types", "ids", "jobs", "replicas" or "tasks". */
int dgc_devspec_merge_compatible(dgc_devspec *a, const dgc_devspec *b,
                                 const char **what);

/* Canonical text of a (partial) spec, e.g. "/job:localhost/device:GPU:0",
 * "" for the empty spec. */
void dgc_devspec_str(const dgc_devspec *s, char *buf, size_t n);

/* Whether device d satisfies spec s: job, replica (always 0) and task
 * when given must be the device's ("localhost" and task 0 without a
 * cluster), then type and index. */
int dgc_devspec_matches(const dgc_devspec *s, const dg_device_info *d);

/* Whether the spec is empty (no field set). */
int dgc_devspec_is_empty(const dgc_devspec *s);

/* The chief of a cluster-wide device list (SPEC 8.2) as the spec
 * "/job:J/replica:0/task:0": J is "chief" if a device has that job, else
 * "worker", else the job of the first device (rank 0).  Returns 1, or 0
 * (and the empty spec) when the list is not a cluster's (job localhost). */
int dgc_devices_chief(const dg_device_list *l, dgc_devspec *out);

/* Complete a request with the chief's job and task (SPEC 8.2): a spec
 * without a job gets the chief's job, and also its task when it names no
 * task either ("/gpu:0" -> chief's GPU:0, "/task:1" -> task 1 of the
 * chief's job); a spec naming a job is left alone ("/job:ps" = any ps
 * task). */
void dgc_devspec_complete(dgc_devspec *s, const dgc_devspec *chief);

#endif
