/*
 * place.h -- the placement engine shared by the placement pass (place.c),
 * place --explain (place_explain.c): requests (SPEC 4.1, 4.3), colocation
 * groups (4.2, 4.8), the choice (4.4), soft placement (4.5) and errors (4.7).
 *
 * dgc_placer_run analyses and chooses without touching the graph;
 * dgc_placer_commit writes device_id / reason / requested into the nodes.
 */
#ifndef DGC_PLACE_H
#define DGC_PLACE_H

#include "ir.h"
#include "devices.h"
#include "dg_util.h"

/* per-node request sources (dgc_placer.src) */
enum {
    DGC_SRC_OWN = 1,      /* the node's own `device` */
    DGC_SRC_RULE = 2,     /* a placement rule */
    DGC_SRC_SCOPE = 4,    /* the --device scope */
    DGC_SRC_DROPPED = 8,  /* state op: own request yielded to its Variable */
    DGC_SRC_SOFT = 16     /* (root) group request softened (4.5) */
};

/* Kernel classes: devices with the same kernel set, fp64 support and type
 * can take the same nodes; dgc_placer.kern has bit c set when class c has a
 * kernel for the node (at most DGC_MAX_KCLASS classes in a device list). */
#define DGC_MAX_KCLASS 8

typedef struct dgc_prule {
    int *ops; int n_ops;       /* op indices; n_ops 0 = any */
    const char *glob;          /* NULL = any */
    dgc_devspec *devs; int n_devs; /* 1 device, or the round-robin list */
    const char **dev_text;
    int round_robin;
    int64_t dealt;
} dgc_prule;

typedef struct dgc_placer {
    const dgc_graph *g;
    const dg_device_list *devs;
    int allow_soft, colocate;
    const char *scope_text;
    dgc_devspec scope;
    dgc_prule *rules; int n_rules;

    int32_t n;
    int32_t *parent, *size;    /* union-find over nodes */
    dgc_devspec *specs; int32_t n_specs, cap_specs; /* interned specs */
    dg_strmap spec_ids;        /* canonical text -> spec index */
    int32_t *req;              /* node's merged request (spec idx), -1 */
    char **reqstr;             /* its canonical text, NULL = "" */
    int32_t *greq;             /* root: group request (spec idx), -1 */
    int32_t *rule_of;          /* node: matched rule, -1 */
    uint8_t *src;              /* DGC_SRC_* */
    uint8_t *kern;             /* node, then AND-ed per root: class bits */
    uint8_t *dev_class;        /* device: its kernel class */
    const dg_kernel_set *cls_ks[DGC_MAX_KCLASS]; /* class: kernel set */
    int cls_fp64[DGC_MAX_KCLASS];                /* class: fp64 support */
    int cls_gpu[DGC_MAX_KCLASS];                 /* class: GPU devices */
    int n_cls;
    int32_t *chosen;           /* root: device index, -2 deferred (consumer) */
    uint8_t *reason;           /* node: dg_reason */
    int32_t *order;            /* device indices in preference order */
    int has_chief;             /* a cluster's device list (SPEC 8.2) */
    dgc_devspec chief;         /* its chief "/job:J/replica:0/task:0" */
} dgc_placer;

/* Analyse and choose (everything but writing the nodes).  The graph must
 * have been through shape inference.  Errors per SPEC 4.7 (DG_E_PLACEMENT),
 * malformed specs DG_E_GRAPH (DG_E_USAGE for the --device scope). */
dg_status dgc_placer_run(dgc_placer *p, const dgc_graph *g,
                         const dg_device_list *devs, const char *scope,
                         const dgc_rule *rules, int n_rules, int allow_soft,
                         int colocate, dg_error *err);
/* Write node->device_id, reason, requested (moves the strings). */
dg_status dgc_placer_commit(dgc_placer *p, dgc_graph *g, dg_error *err);
void dgc_placer_free(dgc_placer *p);

/* Whether kernel class c can take node n (SPEC 4.7): on a GPU, whether
 * TensorFlow has a GPU kernel (dgc_op_gpu_placeable); on a CPU, dgrun's
 * kernel, or host memory (TF's HostMemory int tensors fit every device:
 * dgc_placer_commit moves them to their task's CPU where needed). */
int dgc_placer_placeable(const dgc_placer *p, int c, const dgc_graph *g,
                         const dgc_node *n);

/* Union-find root of node i. */
int32_t dgc_placer_find(dgc_placer *p, int32_t i);
/* The request group `root` is placed by: its merged request (empty when
 * none, also for root -1), completed with the chief's job and task in a
 * cluster (dgc_devspec_complete).  Returns 1 if it was completed. */
int dgc_placer_request(const dgc_placer *p, int32_t root, dgc_devspec *out);
/* Whether device index d has kernels for the bits k. */
int dgc_placer_kernel_ok(const dgc_placer *p, uint8_t k, int d);

/* The explanation of one node's placement (place --explain) appended to
 * out; the graph must already be placed with the same inputs. */
dg_status dgc_place_explain(const dgc_graph *g, const dg_device_list *devs,
                            const char *scope, const dgc_rule *rules,
                            int n_rules, int allow_soft, int colocate,
                            int32_t node, dg_sbuf *out, dg_error *err);

#endif
