/*
 * ir.h -- the in-memory graph IR every compiler pass reads and transforms.
 *
 * A dgc_graph is built by the loader (load.c) from JSON, then transformed in
 * a fixed order by the passes in compiler/ (see compile.c): gradients,
 * training, shape inference (again for generated nodes), placement,
 * partitioning (transfers), and finally the execution plan (plan.h) which the
 * runtime consumes.  Nodes are addressed by index (int32); indices never
 * change once a node exists, passes only append.
 *
 * Memory: every string and array hanging off the graph is owned by it and
 * freed by dgc_graph_free.
 */
#ifndef DGC_IR_H
#define DGC_IR_H

#include <stdint.h>

#include "dgrun.h"
#include "dg_util.h"

/* Static type of one tensor: dtype and shape, dims may be -1 (unknown). */
typedef struct dgc_ttype {
    dg_dtype dtype;
    dg_shape shape;
    /* The tensor's elements in host memory when an infer function may read
     * them (inputs only, NULL otherwise): a Const producer's value at
     * compile time; at run time the value of an input of an op flagged
     * DGC_OP_HOST_IN (Reshape's shape, Tile's multiples, Fill's dims...).
     * Output types always have NULL here. */
    const void *value;
} dgc_ttype;

/* Output `index` of node `node`. */
typedef struct dgc_ref {
    int32_t node;
    int32_t index;
} dgc_ref;

/* ---- attributes ---------------------------------------------------------- */

typedef enum dgc_attr_kind {
    DGC_A_INT,    /* i */
    DGC_A_FLOAT,  /* f */
    DGC_A_BOOL,   /* i (0/1) */
    DGC_A_STR,    /* s */
    DGC_A_INTS,   /* ints[n] (axis, perm); `i` = ints[0] if n > 0 */
    DGC_A_SHAPE,  /* ints[n] = dims (-1 allowed), n = rank */
    DGC_A_DTYPE,  /* i = dg_dtype */
    DGC_A_TENSOR, /* tensor (literal value) */
    DGC_A_INIT    /* init (Variable initializer) */
} dgc_attr_kind;

typedef enum dgc_init_kind {
    DGC_INIT_VALUE,          /* tensor: a number or nested array */
    DGC_INIT_ZEROS,
    DGC_INIT_RANDOM_NORMAL,  /* a = mean, b = stddev */
    DGC_INIT_RANDOM_UNIFORM, /* a = min, b = max */
    DGC_INIT_GLOROT_UNIFORM,
    DGC_INIT_TRUNCATED_NORMAL /* a = mean, b = stddev; redrawn beyond 2b */
} dgc_init_kind;

typedef struct dgc_init {
    dgc_init_kind kind;
    double a, b;
    dg_tensor *value; /* DGC_INIT_VALUE */
} dgc_init;

/* Attribute ids: one per name in attr_names.def, resolved once when an
 * attr is stored (dgc_node_set_attr), so that kernels find attributes by
 * comparing ints (dgc_attr_i and friends, ops.h), never strings.
 * DGC_AT_NONE: a name no schema declares (a TF attr dgrun ignores). */
typedef enum dgc_attr_id {
    DGC_AT_NONE = 0,
#define DGC_ATTR(name) DGC_AT_##name,
#include "attr_names.def"
#undef DGC_ATTR
    DGC_N_ATTR_IDS
} dgc_attr_id;

typedef struct dgc_attr {
    char *key;
    dgc_attr_id id;  /* dgc_attr_id_of(key), set by dgc_node_set_attr */
    dgc_attr_kind kind;
    int64_t i;
    double f;
    char *s;
    int64_t *ints;
    int n;
    dg_tensor *tensor;
    dgc_init init;
} dgc_attr;

/* ---- nodes --------------------------------------------------------------- */

enum {
    DGC_NODE_GENERATED = 1u << 0, /* created by a compiler pass */
    DGC_NODE_TRANSFER = 1u << 1,  /* reserved: transfers live in the plan */
    /* an input names a node a compiler pass generates (g/a): the node has
     * no inputs until dgc_pass_resolve_pending (pending.c) */
    DGC_NODE_PENDING = 1u << 2,
    DGC_NODE_AFTER = 1u << 3,     /* depends on a pending node */
    /* made _FusedMatMul by the fusion pass (fuse.c): shown as the user's
     * op (dgc_fused_user_op) in placement output */
    DGC_NODE_FUSED = 1u << 4
};

/* The input names of a pending node, resolved after gradients/training. */
typedef struct dgc_pending {
    int32_t node;
    int n_in;
    char *names;   /* n_in NUL-terminated names, back to back */
} dgc_pending;

/* The node's name / inputs / outputs were carved from the graph's slab
 * (dgc_graph_slab_alloc, used by the loader and shape inference for big
 * graphs): dgc_graph_free does not dg_free them one by one, and
 * dgc_node_add_input moves slab inputs to their own allocation first. */
enum {
    DGC_NODE_SLAB_NAME = 1u << 8,
    DGC_NODE_SLAB_INPUTS = 1u << 9,
    DGC_NODE_SLAB_OUTPUTS = 1u << 10
};

typedef struct dgc_node {
    char *name;
    int op;                /* index into dgc_ops[] (ops.h) */
    dgc_ref *inputs;       /* data inputs */
    int n_inputs;
    int32_t *ctrl;         /* control inputs (node ids) */
    int n_ctrl;
    char *device;          /* requested device as written, NULL if none */
    int32_t *coloc;        /* colocate_with targets (node ids) */
    int n_coloc;
    dgc_attr *attrs;
    int n_attrs;
    dgc_ttype *outputs;    /* inferred by shape inference */
    int n_outputs;
    int32_t forward;       /* generated gradient op: the forward op it
                              differentiates; -1 otherwise */
    int32_t group_hint;    /* generated op: node whose colocation group it
                              joins when colocation is on (usually forward);
                              -1 none */
    int colocate;          /* generated op: 1 if its set colocates */
    uint32_t flags;        /* DGC_NODE_* */
    int op_alias;          /* 1 if the file spelled the op by its alias
                              (VariableV2, AddV2): shown as written */
    int folded_op;         /* folded into a Const (fold.c): 1 + the op id
                              it had (placement output shows that op, as
                              TF's placer sees the graph before Grappler
                              folds it); 0 otherwise */
    int folded_alias;      /* op_alias before folding */

    /* placement results (place.c) */
    int32_t device_id;     /* index into the compile's device list, -1:
                              where the node runs */
    int32_t placed_id;     /* the device placement chose, as TF would
                              name it (SPEC 4.7): differs from device_id
                              where a GPU node runs in host memory on its
                              task's CPU; -1 before placement */
    int reason;            /* dg_reason */
    char *requested;       /* merged request, canonical partial spec, "" */
} dgc_node;

/* The device a node is shown on (placement log, place --format, --expect):
 * the one placement chose, else (not placed yet) the one it runs on. */
static inline int32_t dgc_node_placed(const dgc_node *n)
{
    return n->placed_id >= 0 ? n->placed_id : n->device_id;
}

/* ---- sections of the graph file ----------------------------------------- */

typedef struct dgc_gradset {
    char *name;
    int32_t *ys;     int n_ys;
    int32_t *xs;     int n_xs;
    int32_t *grad_ys; int n_grad_ys; /* 0 = default ones */
    int colocate;    /* -1 unset, 0, 1 */
} dgc_gradset;

typedef struct dgc_feed {
    char *placeholder;
    char *file;      /* as written; relative to the graph file */
    int64_t batch;   /* 0 = whole file */
    int shuffle;
} dgc_feed;

typedef struct dgc_rule {
    char **ops;      int n_ops;  /* match.op, NULL = any op */
    char *name_glob;             /* match.name, NULL = any name */
    char *device;                /* single device, or NULL */
    char **devices;  int n_devices; /* round robin list */
    int round_robin;
} dgc_rule;

typedef struct dgc_collection {
    char *name;
    int32_t *nodes;
    int n_nodes;
} dgc_collection;

typedef enum dgc_opt_kind { DGC_OPT_SGD, DGC_OPT_MOMENTUM, DGC_OPT_ADAM } dgc_opt_kind;

typedef struct dgc_optimizer {
    dgc_opt_kind kind;
    double learning_rate;
    double momentum;      /* momentum; default 0.9 */
    int use_nesterov;
    double beta1, beta2, epsilon; /* adam: 0.9, 0.999, 1e-8 (TF: 1e-7 in TF2, 1e-8 in TF1) */
} dgc_optimizer;

typedef struct dgc_train {
    int present;
    char *loss;                  /* node name */
    dgc_optimizer opt;
    char **var_list; int n_var_list; /* n_var_list < 0: all trainable */
    int64_t steps;
    dgc_feed *feeds; int n_feeds;
    char *update_ops;            /* collection name or NULL */
    int colocate_gradients;      /* -1 unset */
    int64_t log_every;           /* default 100 */
    dgc_feed *eval_feeds; int n_eval_feeds;
    char **eval_fetch; int n_eval_fetch;
    int64_t eval_every;          /* 0 = only at the end */
    char *checkpoint_path;       /* NULL = none */
    int64_t checkpoint_every;
    /* issue 24: a train op the graph already holds (a MetaGraphDef's
     * `train_op` collection), run as TF built it: no gradient or optimizer
     * is generated; `loss` (its `losses` collection) may then be NULL */
    char *given_train_op;
    char *given_global_step;     /* its `global_step` collection, or NULL */
    /* filled by the training pass */
    int32_t train_op;            /* NoOp grouping all updates, -1 */
    int32_t loss_node;
    int32_t global_step;         /* int64 Variable counting steps, -1 */
    int32_t update_begin;        /* first node of the update side (optimizer
                                    slots, Apply*, global_step, train/step);
                                    the gradients come before it */
} dgc_train;

/* The graph's "replicate" (SPEC 8.4): between-graph replication over the
 * tasks of `job`, done by the replication pass (replicate.c). */
typedef enum dgc_repl_strategy {
    DGC_REPL_PS,        /* shared Variables on the ps job's tasks */
    DGC_REPL_ALLREDUCE  /* a copy of every Variable per replica */
} dgc_repl_strategy;

typedef struct dgc_replicate {
    int present;
    char job[64];
    char ps_job[64];            /* "ps" unless given */
    dgc_repl_strategy strategy;
    int sync;                   /* 1 unless "sync": false */
    /* filled by the pass */
    int replicas;               /* W, 0 before the pass */
    int32_t n_orig;             /* the single-replica graph's node count */
    int32_t *copy;              /* copy[k * n_orig + i]: replica k's node for
                                   node i of the single-replica graph (i
                                   itself for replica 0 and shared nodes) */
    int32_t *step;              /* per replica: the train op it runs, [W];
                                   NULL without training */
} dgc_replicate;

/* issue 24: a SavedModel signature's input or output key, another name
 * of the tensor it maps to (dgc_graph_parse_ref falls back to these). */
typedef struct dgc_alias {
    char *key;
    char *tensor;                /* "x:0" */
} dgc_alias;

/* issue 24: a part of a partitioned variable (tf.compat.v1's
 * `partitioner=`), TF's SaveSliceInfoDef: the Variable `var` holds the
 * slice [start, start + its shape) of the variable `full` of shape
 * full_dims, which a checkpoint stores as one tensor in slices. */
typedef struct dgc_save_slice {
    char *var;
    char *full;
    int rank;
    int64_t full_dims[DG_MAX_RANK];
    int64_t start[DG_MAX_RANK];
} dgc_save_slice;

/* The public dg_graph is this struct. */
typedef struct dg_graph {
    char *path;          /* graph file name, for messages and feed paths */
    int version;

    dgc_node *nodes;
    int32_t n_nodes, cap_nodes;
    int32_t n_file_nodes; /* nodes[0..n_file_nodes) came from the file */
    dg_strmap names;      /* name -> node id */

    dgc_gradset *gradsets; int n_gradsets;
    dgc_collection *collections; int n_collections;
    int allow_soft_placement;   /* -1 unset, 0, 1 */
    int device_syntax;          /* how the nodes' `device` strings parse:
                                   DGC_DEVSPEC_DGRUN (dgrun JSON, 0) or
                                   DGC_DEVSPEC_CPP (GraphDef), devices.h */
    dgc_rule *rules; int n_rules; int rules_present;
    char **fetch; int n_fetch;
    dgc_train train;
    struct dg_cluster *cluster; /* the graph's "cluster", NULL if none */
    dgc_replicate replicate;    /* the graph's "replicate" */
    dgc_pending *pending; int n_pending; /* see DGC_NODE_PENDING */
    /* issue 24 (SavedModel): signature keys, and the checkpoint prefix
     * (DIR/variables/variables) a session restores when no --checkpoint is
     * given; NULL for other formats */
    dgc_alias *aliases; int n_aliases;
    char *variables_path;
    /* TF 2 SavedModel: a Variable's checkpoint key (key = the Variable's
     * name, tensor = "<object path>/.ATTRIBUTES/VARIABLE_VALUE") */
    dgc_alias *ckpt_keys; int n_ckpt_keys;
    /* partitioned variables' parts, from a MetaGraphDef's `variables`
     * collection (VariableDef.save_slice_info_def) */
    dgc_save_slice *save_slices; int n_save_slices;

    struct dgc_slab_chunk *slab; /* see dgc_graph_slab_alloc */
} dgc_graph;

/* Create an empty graph whose messages name `path`.  NULL on nomem. */
dgc_graph *dgc_graph_new(const char *path);
void dgc_graph_free(dgc_graph *g);

/* Make room for `extra` more nodes without moving the node array, so that
 * pointers into g->nodes stay valid while up to `extra` nodes are added
 * (the gradient rules hold the forward node's pointer while they build).
 * 0 ok, -1 nomem (err filled). */
int dgc_graph_reserve(dgc_graph *g, int32_t extra, dg_error *err);

/* Append a node with the given name and op (a copy of name is made).  Fields
 * other than name/op are zero, forward/group_hint/device_id = -1.  Returns
 * the new id, or -1 on nomem or a duplicate name (err says which). */
int32_t dgc_graph_add_node(dgc_graph *g, const char *name, int op,
                           dg_error *err);

/* n bytes of zeroed storage, 8-byte aligned (enough for pointers, int64,
 * double and the IR's structs of them), that lives as long as
 * the graph (freed in bulk by dgc_graph_free; never dg_free it).  For
 * per-node arrays that would otherwise be a million small allocations;
 * mark the node with the matching DGC_NODE_SLAB_* flag.  NULL on nomem. */
void *dgc_graph_slab_alloc(dgc_graph *g, size_t n);

/* The name Variable `var` has in a checkpoint: its TF 2 object-graph key
 * (g->ckpt_keys), else `var` itself. */
const char *dgc_graph_ckpt_key(const dgc_graph *g, const char *var);

/* The slice Variable `var` is of a partitioned variable, as the graph's
 * file gave it (g->save_slices), or NULL. */
const dgc_save_slice *dgc_graph_save_slice(const dgc_graph *g,
                                           const char *var);

/* Node id by name, -1 if absent. */
int32_t dgc_graph_find(const dgc_graph *g, const char *name);

/* Parse "x", "x:k" into a ref (no range check of k); -1 if x is unknown.
 * A string that names nothing may be a SavedModel signature key
 * (g->aliases): it then parses as the tensor the key maps to. */
int dgc_graph_parse_ref(const dgc_graph *g, const char *s, dgc_ref *out);

/* Append a data input / control input to node n (0 ok, -1 nomem). */
int dgc_node_add_input(dgc_graph *g, int32_t n, dgc_ref r);
int dgc_node_add_ctrl(dgc_graph *g, int32_t n, int32_t c);

/* The id of attribute name `name` (binary search of attr_names.def),
 * DGC_AT_NONE when no schema declares it. */
dgc_attr_id dgc_attr_id_of(const char *name);
/* The name of id (attr_names.def), "?" out of range. */
const char *dgc_attr_id_name(dgc_attr_id id);

/* Attribute lookup on a node by name (the compiler's loaders and passes;
 * kernels use the id accessors of ops.h); NULL if absent. */
const dgc_attr *dgc_node_attr(const dgc_node *n, const char *key);
int64_t dgc_attr_int(const dgc_node *n, const char *key, int64_t dflt);
double dgc_attr_float(const dgc_node *n, const char *key, double dflt);
int dgc_attr_bool(const dgc_node *n, const char *key, int dflt);
/* Add or replace an attribute (the value fields of `a` are moved in: the
 * node takes ownership of a->s, a->ints, a->tensor, a->init.value; a->key is
 * copied; a->id is ignored: the stored attr gets dgc_attr_id_of(a->key)).
 * 0 ok, -1 nomem. */
int dgc_node_set_attr(dgc_node *n, const dgc_attr *a);
/* Convenience setters built on dgc_node_set_attr. */
int dgc_node_set_int(dgc_node *n, const char *key, int64_t v);
int dgc_node_set_bool(dgc_node *n, const char *key, int v);
int dgc_node_set_float(dgc_node *n, const char *key, double v);
int dgc_node_set_dtype(dgc_node *n, const char *key, dg_dtype t);
int dgc_node_set_str(dgc_node *n, const char *key, const char *v);
int dgc_node_set_ints(dgc_node *n, const char *key, const int64_t *v, int n_v);
int dgc_node_set_shape(dgc_node *n, const char *key, const dg_shape *s);
/* Takes ownership of t. */
int dgc_node_set_tensor(dgc_node *n, const char *key, dg_tensor *t);

/* Free attribute value storage (not the struct itself). */
void dgc_attr_clear(dgc_attr *a);

#endif
