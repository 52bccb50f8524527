/*
 * load_graphdef.c -- the second input format (SPEC 2, "planned"): a
 * TensorFlow GraphDef exported as proto3 JSON (json_format.MessageToJson),
 * i.e. a top-level `node` array of NodeDefs {name, op, input, device, attr}.
 *
 * Nodes become the same IR the dgrun format gives, so validation, inference,
 * placement and running are unchanged.  TF ops whose parameters are inputs
 * in TF but attributes in dgrun (reduction axes, Reshape's shape,
 * Transpose's perm, ArgMax's dimension, random ops' shape) take them from a
 * Const producer; a few TF spellings map onto identical dgrun ops (RealDiv,
 * Snapshot, BiasAddV1, RandomStandardNormal).  A VariableV2 is initialised
 * from the Const its `<var>/Assign` initializer assigns, else zeros
 * (docs/graphdef.md).  Attributes: load_graphdef_attr.c.
 *
 * Nodes stream in one NodeDef at a time (dgc_gd_add), read through the
 * value view (gview.h): a cJSON object (load.c hands it slices of the
 * scanned text) or a protobuf-c message of a binary GraphDef (load_pb.c,
 * load_metagraph.c), so a node's JSON is gone once it is added:
 * its name, op and attributes become IR at once; its input and device
 * strings and `_class` names are copied to pools and resolved by
 * dgc_gd_finish when every name is known.  Errors keep the order of the
 * whole-document passes this replaced: unsupported ops (all nodes), then
 * node fields / names / ops, then attributes, then inputs and devices
 * (Fill nodes first), then variable initializers.
 */
#include "load_graphdef.h"
#include "ops.h"
#include "devices.h"
#include "dg_alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define GE(...) dg_err(err, DG_E_GRAPH, __VA_ARGS__)

/* How a folded Const input becomes an attribute. F_AXIS takes a scalar;
 * F_AXIS1 also a one-element vector: ExpandDims' dim, which TF's shape
 * function and kernel take with NumElements() == 1 (TF 2's functions
 * emit [1]-shaped dims), where the others' shape functions want a scalar. */
enum { F_NONE, F_AXES, F_AXIS, F_AXIS1, F_SHAPE, F_PERM, F_FILL };

typedef struct tf_map {
    const char *tf;      /* op as TF spells it */
    const char *dg;      /* dgrun op */
    int fold;            /* data input taken from a Const, -1 none */
    int kind;            /* F_* */
    const char *attr;    /* the dgrun attribute it becomes */
    const char *what;    /* the TF input's name, for messages */
    int opt;             /* 1: folded when a Const, else a data input
                            (the op takes it as a tensor too) */
} tf_map;

/* fold index of ConcatV2's axis: its last data input */
#define FOLD_LAST 99

static const tf_map maps[] = {
    {"Sum", "Sum", 1, F_AXES, "axis", "reduction_indices", 1},
    {"Mean", "Mean", 1, F_AXES, "axis", "reduction_indices", 1},
    {"Max", "Max", 1, F_AXES, "axis", "reduction_indices", 1},
    {"Reshape", "Reshape", 1, F_SHAPE, "shape", "shape", 1},
    {"Transpose", "Transpose", 1, F_PERM, "perm", "perm", 1},
    {"ArgMax", "ArgMax", 1, F_AXIS, "axis", "dimension", 0},
    {"RandomStandardNormal", "RandomNormal", 0, F_SHAPE, "shape", "shape", 1},
    {"RandomUniform", "RandomUniform", 0, F_SHAPE, "shape", "shape", 1},
    {"TruncatedNormal", "TruncatedNormal", 0, F_SHAPE, "shape", "shape", 1},
    {"Fill", "Const", -1, F_FILL, "value", "dims and value", 0},
    {"RealDiv", "Div", -1, F_NONE, NULL, NULL, 0},
    {"Snapshot", "Identity", -1, F_NONE, NULL, NULL, 0},
    {"BiasAddV1", "BiasAdd", -1, F_NONE, NULL, NULL, 0},
    /* issue 22 ops10b: TF's raw Mod is C's remainder (fmod for floats) */
    {"Mod", "TruncateMod", -1, F_NONE, NULL, NULL, 0},
    /* resource variables (issue 22): a handle is the Variable itself */
    {"VarHandleOp", "Variable", -1, F_NONE, NULL, NULL, 0},
    {"ReadVariableOp", "Identity", -1, F_NONE, NULL, NULL, 0},
    {"AssignVariableOp", "Assign", -1, F_NONE, NULL, NULL, 0},
    {"AssignAddVariableOp", "AssignAdd", -1, F_NONE, NULL, NULL, 0},
    {"AssignSubVariableOp", "AssignSub", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyGradientDescent", "ApplyGradientDescent", -1, F_NONE, NULL,
     NULL, 0},
    {"ResourceApplyMomentum", "ApplyMomentum", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyAdam", "ApplyAdam", -1, F_NONE, NULL, NULL, 0},
    /* TF graph ops (issue 10) */
    {"Prod", "Prod", 1, F_AXES, "axis", "reduction_indices", 1},
    {"Tile", "Tile", 1, F_PERM, "multiples", "multiples", 1},
    {"ExpandDims", "ExpandDims", 1, F_AXIS1, "axis", "dim", 1},
    {"GatherV2", "GatherV2", 2, F_AXIS, "axis", "axis", 1},
    /* issue 21: an axis that is no Const stays an input, read at run time
     * (dgc_node_axis_input); Split's and Concat's, their first, moves last */
    {"ConcatV2", "ConcatV2", FOLD_LAST, F_AXIS, "axis", "axis", 1},
    {"Concat", "ConcatV2", 0, F_AXIS, "axis", "concat_dim", 1},
    {"Split", "Split", 0, F_AXIS, "axis", "split_dim", 1},
    {"SplitV", "SplitV", 2, F_AXIS, "axis", "axis", 1},
    /* issue 22, step 3 */
    {"Min", "Min", 1, F_AXES, "axis", "reduction_indices", 1},
    {"ArgMin", "ArgMin", 1, F_AXIS, "axis", "dimension", 0},
    {"Any", "Any", 1, F_AXES, "axis", "reduction_indices", 1},
    {"All", "All", 1, F_AXES, "axis", "reduction_indices", 1},
    {"Cumsum", "Cumsum", 1, F_AXIS, "axis", "axis", 0},
    {"Cumprod", "Cumprod", 1, F_AXIS, "axis", "axis", 0}, /* ops9b */
    {"CumulativeLogsumexp", "CumulativeLogsumexp", 1, F_AXIS, "axis", "axis",
     0}, /* ops10b */
    {"ResourceApplyAdagrad", "ApplyAdagrad", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyRMSProp", "ApplyRMSProp", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyCenteredRMSProp", "ApplyCenteredRMSProp", -1, F_NONE, NULL,
     NULL, 0},
    {"ResourceApplyAdadelta", "ApplyAdadelta", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyAdaMax", "ApplyAdaMax", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyProximalGradientDescent", "ApplyProximalGradientDescent",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyProximalAdagrad", "ApplyProximalAdagrad", -1, F_NONE,
     NULL, NULL, 0},
    /* the sparse (embedding) updates and FTRL, AdagradDA (issue 22) */
    {"ResourceGather", "GatherV2", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyFtrl", "ApplyFtrl", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyFtrlV2", "ApplyFtrlV2", -1, F_NONE, NULL, NULL, 0},
    {"ResourceApplyAdagradDA", "ApplyAdagradDA", -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyMomentum", "SparseApplyMomentum",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyAdagrad", "SparseApplyAdagrad",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyAdagradDA", "SparseApplyAdagradDA",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyAdadelta", "SparseApplyAdadelta",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyRMSProp", "SparseApplyRMSProp",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyCenteredRMSProp", "SparseApplyCenteredRMSProp",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyFtrl", "SparseApplyFtrl", -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyFtrlV2", "SparseApplyFtrlV2",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyProximalGradientDescent",
     "SparseApplyProximalGradientDescent", -1, F_NONE, NULL, NULL, 0},
    {"ResourceSparseApplyProximalAdagrad", "SparseApplyProximalAdagrad",
     -1, F_NONE, NULL, NULL, 0},
    {"ResourceScatterAdd", "ScatterAdd", -1, F_NONE, NULL, NULL, 0},
    {"ResourceScatterSub", "ScatterSub", -1, F_NONE, NULL, NULL, 0},
    {"ResourceScatterUpdate", "ScatterUpdate", -1, F_NONE, NULL, NULL, 0},
    /* ops9a: TF-1's FusedBatchNorm (V1: no U attr, no reserve_space_3) and
     * its gradients are V3's; MaxPoolV2's ksize and strides inputs */
    {"FusedBatchNorm", "FusedBatchNormV3", -1, F_NONE, NULL, NULL, 0},
    {"FusedBatchNormGrad", "FusedBatchNormGradV3", -1, F_NONE, NULL, NULL, 0},
    /* TF's TruncateDiv is integer-only: dgrun's integer Div truncates */
    {"TruncateDiv", "Div", -1, F_NONE, NULL, NULL, 0},
    {"MaxPoolV2", "MaxPool", 1, F_PERM, "ksize", "ksize", 0},
    {"MaxPoolGradV2", "MaxPoolGrad", 3, F_PERM, "ksize", "ksize", 0},
    /* ops10c: tf.scatter_nd_add's op on tensors is TensorScatterAdd */
    {"ScatterNdNonAliasingAdd", "TensorScatterAdd", -1, F_NONE, NULL, NULL,
     0},
};

/* Maps that fold the input after `fold` too, into a second attribute of
 * the same kind (named by it in messages): MaxPoolV2's strides. */
static const struct {
    const char *tf, *attr;
} fold2s[] = {
    {"MaxPoolV2", "strides"},
    {"MaxPoolGradV2", "strides"},
};

/* The second folded attribute of `m`, or NULL. */
static const char *fold2_attr(const tf_map *m)
{
    for (size_t i = 0; m && i < sizeof fold2s / sizeof fold2s[0]; i++)
        if (strcmp(fold2s[i].tf, m->tf) == 0)
            return fold2s[i].attr;
    return NULL;
}

/* TF ops with a dgrun look-alike whose semantics differ (none since
 * issue 21 gave dgrun StopGradient, PreventGradient and TruncatedNormal). */
static const struct { const char *tf, *why; } rejected[] = {
    {NULL, NULL},
};

/* dgrun ops the compiler generates: never valid TF op names. */
static const char *const internal_ops[] = {
    "SumTo", "BroadcastLike", "ReshapeLike", "MaxGrad", "SoftmaxGrad",
    "BatchNorm", "BatchNormGrad", "AssignMovingAvg", NULL};

static const char *const root_keys[] = {"node", "versions", "library", NULL};

/* Kinds of JSON values a message may name (dgc_json_kind), by index. */
static const char *const kinds[] = {"a string", "a number", "a bool", "null",
                                    "an array", "an object", "invalid",
                                    "missing"};

static uint8_t kind_of(dgc_gv x)
{
    const char *k = dgc_gv_kind(x);
    uint8_t i = 0;
    while (i < 7 && strcmp(kinds[i], k) != 0)
        i++;
    return i;
}

static int listed(const char *const *l, const char *k)
{
    for (; *l; l++)
        if (strcmp(*l, k) == 0)
            return 1;
    return 0;
}

int dgc_graphdef_detect(const cJSON *root)
{
    return cJSON_IsObject(root) &&
           cJSON_GetObjectItemCaseSensitive(root, "node") &&
           !cJSON_GetObjectItemCaseSensitive(root, "nodes");
}

/* Whether dgrun runs TF op `op`: NULL if so (*map its spelling rule or
 * NULL, *opi the dgrun op), else why not ("" = no such dgrun op). */
static const char *op_support(const char *op, const tf_map **map, int *opi)
{
    *map = NULL;
    *opi = -1;
    for (size_t k = 0; rejected[k].tf; k++)
        if (strcmp(op, rejected[k].tf) == 0)
            return rejected[k].why;
    const char *dg = op;
    for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++)
        if (strcmp(op, maps[k].tf) == 0) {
            *map = &maps[k];
            dg = maps[k].dg;
        }
    *opi = listed(internal_ops, op) ? -1 : dgc_op_find(dg);
    return *opi < 0 ? "" : NULL;
}

/* One TF op spelling seen in the file (first appearance order). */
typedef struct gd_op {
    char *tf;
    const tf_map *map;
    int opi;
    const char *why;  /* NULL: supported */
    int n;            /* nodes */
} gd_op;

/* Per node of the file, what the passes after the first need. */
typedef struct gd_rec {
    size_t off;       /* its strings in the pool: the string elements of
                         `input`, then its device */
    int32_t n_in;     /* string elements of `input` */
    int32_t bad_at;   /* index of the first non-string element, -1 none */
    int32_t n_cls;    /* `_class` names in the class pool */
    int16_t op;       /* index in the seen ops */
    uint8_t in_kind;  /* kinds[] of that element, or of `input` itself
                         when it is not an array (bad_at == -2) */
    uint8_t dev;      /* 0 none, 1 a string (in the pool), 2 not one */
    uint8_t dev_kind;
    uint8_t strc;     /* a DT_STRING Const: loaded as a NoOp, only summary
                         ops may take it (and drop it) */
} gd_rec;

struct dgc_gdload {
    dgc_graph *g;
    const dgc_jdoc *doc;
    gd_rec *rec;
    size_t n_rec, cap_rec;
    dgc_strpool pool;     /* inputs and devices, in node order */
    dgc_strpool cls;      /* `_class` names, in node order */
    gd_op *ops;
    int n_ops, cap_ops;
    dg_strmap op_ids;      /* TF op spelling -> index in ops */
    int node_failed;       /* fields / name / op error of a node: e_node */
    dg_error e_node;
    int32_t attr_node;     /* first node whose attrs failed (e_attr), -1 */
    dg_error e_attr;
};

/* The index of TF op spelling `op` in L->ops (added on first sight), -1
 * on nomem. */
static int op_seen(dgc_gdload *L, const char *op)
{
    int32_t k = dg_strmap_get(&L->op_ids, op);
    if (k >= 0)
        return k;
    if (L->n_ops == INT16_MAX)
        return -1;
    if (L->n_ops == L->cap_ops) {
        int cap = L->cap_ops ? L->cap_ops * 2 : 16;
        gd_op *no = dg_realloc(L->ops, sizeof *no * (size_t)cap);
        if (!no)
            return -1;
        L->ops = no;
        L->cap_ops = cap;
    }
    gd_op *o = &L->ops[L->n_ops];
    memset(o, 0, sizeof *o);
    if (!(o->tf = dg_strdup(op)))
        return -1;
    o->why = op_support(op, &o->map, &o->opi);
    if (dg_strmap_put(&L->op_ids, o->tf, L->n_ops) < 0) {
        dg_free(o->tf);
        return -1;
    }
    return L->n_ops++;
}

/* Every op type of the file dgrun does not run, with its node count, in
 * one error: "unsupported ops: Conv2D (3 nodes), MaxPool (2 nodes)" (in
 * order of first appearance; a known reason follows the count). */
static dg_status unsupported_ops(const dgc_gdload *L, dg_error *err)
{
    char buf[1800];
    size_t len = 0;
    int nu = 0;
    for (int k = 0; k < L->n_ops && len < sizeof buf; k++) {
        const gd_op *u = &L->ops[k];
        if (!u->why)
            continue;
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s (%d node%s"
                                "%s%s)", nu++ ? ", " : "", u->tf, u->n,
                                u->n == 1 ? "" : "s", *u->why ? ": " : "",
                                u->why);
    }
    if (!nu)
        return DG_OK;
    if (len >= sizeof buf)
        memcpy(buf + sizeof buf - 5, "...", 4);
    return GE("unsupported ops: %s", buf);
}

static int field_slot(const char *k)
{
    if (strcmp(k, "name") == 0) return 0;
    if (strcmp(k, "op") == 0) return 1;
    if (strcmp(k, "input") == 0) return 2;
    if (strcmp(k, "device") == 0) return 3;
    if (strcmp(k, "attr") == 0) return 4;
    if (strcmp(k, "experimentalDebugInfo") == 0 ||
        strcmp(k, "experimental_debug_info") == 0 ||
        strcmp(k, "experimentalType") == 0 ||
        strcmp(k, "experimental_type") == 0)
        return 5; /* ignored */
    return -1;
}

/* Fields, name and op of element i (op: its index in L->ops); adds the
 * node to the graph; f[] gets its fields. */
static dg_status add_node(dgc_gdload *L, dgc_gv x, int i, int op,
                          dgc_gv *f, uint32_t *hash, dg_error *err)
{
    dgc_graph *g = L->g;
    if (!dgc_gv_is_object(x))
        return GE("node #%d: must be an object, got %s", i, dgc_gv_kind(x));
    const char *bad = NULL;
    int dup = 0;
    dgc_gv name = dgc_gv_json(NULL); /* the last one: messages use it */
    for (int s = 0; s < 6; s++)
        f[s] = name;
    for (dgc_gv k = dgc_gv_first(x); dgc_gv_ok(k); k = dgc_gv_next(k)) {
        int s = field_slot(dgc_gv_key(k));
        if (s == 0)
            name = k;
        if (bad)
            continue;
        if (s < 0)
            bad = dgc_gv_key(k);
        else if (s < 5 && dgc_gv_ok(f[s]))
            bad = dgc_gv_key(k), dup = 1;
        else
            f[s] = k;
    }
    const char *nm = dgc_gv_is_string(name) ? dgc_gv_str(name) : NULL;
    char who[300];
    if (bad || !dgc_gv_ok(f[0]) || !nm || !dgc_valid_name(nm) ||
        !dgc_gv_is_string(f[1]) ||
        L->ops[op].why) { /* an error follows: name the node */
        if (nm)
            snprintf(who, sizeof who, "node '%s'", nm);
        else
            snprintf(who, sizeof who, "node #%d", i);
    }
    if (bad)
        return GE("%s: %s field '%s' (a NodeDef has name, op, input, device, "
                  "attr)", who, dup ? "duplicate" : "unknown", bad);
    if (!dgc_gv_ok(f[0]))
        return GE("%s: missing 'name'", who);
    if (!nm)
        return GE("%s: 'name' must be a string, got %s", who,
                  dgc_gv_kind(f[0]));
    if (!dgc_valid_name(nm))
        return GE("%s: invalid name '%s' (must match "
                  "[A-Za-z0-9.][A-Za-z0-9_./-]*)", who, nm);
    if (!dgc_gv_ok(f[1]))
        return GE("%s: missing 'op'", who);
    if (!dgc_gv_is_string(f[1]))
        return GE("%s: 'op' must be a string, got %s", who,
                  dgc_gv_kind(f[1]));
    const gd_op *o = &L->ops[op];
    if (o->why) /* unsupported_ops reports these first: only a fallback */
        return GE("%s: TensorFlow op '%s' is not supported by dgrun%s%s",
                  who, o->tf, *o->why ? ": " : "", o->why);
    int32_t id = g->n_nodes;
    *hash = 0;
    if (id < g->cap_nodes) {
        /* dgc_graph_add_node with the name in the slab, and its one map
         * probe left to name_in (the slot is prefetched meanwhile: the map
         * is far bigger than the caches) */
        size_t nl = strlen(nm);
        dgc_node *n = &g->nodes[id];
        memset(n, 0, sizeof *n);
        if (!(n->name = dgc_graph_slab_alloc(g, nl + 1)))
            return dg_err_nomem(err, "node name");
        memcpy(n->name, nm, nl + 1);
        n->flags |= DGC_NODE_SLAB_NAME;
        n->op = o->opi;
        n->forward = -1;
        n->group_hint = -1;
        n->device_id = -1;
        n->placed_id = -1;
        *hash = dg_strmap_hash(nm, nl);
        dg_strmap_prefetch(&g->names, *hash);
        g->n_nodes++;
    } else if ((id = dgc_graph_add_node(g, nm, o->opi, err)) < 0) {
        return err->code;
    }
    g->nodes[id].op_alias = dgc_ops[o->opi].alias &&
                            strcmp(o->tf, dgc_ops[o->opi].alias) == 0;
    return DG_OK;
}

/* Put the newest node's name (hash h, 0: already in) into the map. */
static dg_status name_in(dgc_graph *g, uint32_t h, dg_error *err)
{
    int32_t id = g->n_nodes - 1;
    const char *nm = g->nodes[id].name;
    int rc = h ? dg_strmap_put_h(&g->names, nm, strlen(nm), h, id) : 0;
    if (rc < 0)
        return dg_err_nomem(err, "name map");
    if (rc > 0)
        return GE("node '%s': duplicate node name", nm);
    return DG_OK;
}

/* Copy node id's input strings and device to the pool (their JSON types
 * are judged by the inputs pass, in its order). */
static int keep_strings(dgc_gdload *L, gd_rec *r, dgc_gv in, dgc_gv dev)
{
    r->off = L->pool.len;
    r->bad_at = -1;
    if (dgc_gv_ok(in) && !dgc_gv_is_array(in)) {
        r->bad_at = -2;
        r->in_kind = kind_of(in);
    }
    int32_t k = 0;
    for (dgc_gv e = dgc_gv_is_array(in) ? dgc_gv_first(in) : dgc_gv_json(NULL);
         dgc_gv_ok(e); e = dgc_gv_next(e), k++) {
        if (!dgc_gv_is_string(e)) {
            if (r->bad_at == -1) {
                r->bad_at = k;
                r->in_kind = kind_of(e);
            }
            continue;
        }
        if (dgc_strpool_add(&L->pool, dgc_gv_str(e)))
            return -1;
        r->n_in++;
    }
    if (dgc_gv_is_string(dev)) {
        r->dev = 1;
        return dgc_strpool_add(&L->pool, dgc_gv_str(dev));
    }
    if (dgc_gv_ok(dev)) {
        r->dev = 2;
        r->dev_kind = kind_of(dev);
    }
    return 0;
}

dg_status dgc_gd_begin(dgc_gdload **out, dgc_graph *g, const dgc_jdoc *doc,
                       size_t cnt, dg_error *err)
{
    dgc_gdload *L = dg_calloc(1, sizeof *L);
    *out = L;
    if (!L)
        return dg_err_nomem(err, "loader");
    L->g = g;
    g->device_syntax = DGC_DEVSPEC_CPP; /* NodeDef devices: C++ syntax */
    L->doc = doc;
    L->attr_node = -1;
    L->cap_rec = cnt > 0 ? cnt : 1;
    L->rec = dg_calloc(L->cap_rec, sizeof *L->rec);
    if (!L->rec || dg_strmap_init(&L->op_ids, 64))
        return dg_err_nomem(err, "loader");
    /* size the node array and the name map for the whole file at once */
    if (cnt > 0 && !g->n_nodes) {
        dg_strmap_free(&g->names);
        if (dg_strmap_init(&g->names, cnt + 64))
            return dg_err_nomem(err, "name map");
        dg_free(g->nodes);
        if (!(g->nodes = dg_calloc(cnt, sizeof *g->nodes)))
            return dg_err_nomem(err, "graph nodes");
        g->cap_nodes = (int32_t)cnt;
    }
    return DG_OK;
}

/* Keep the first error of a pass; nomem is returned at once. */
static dg_status keep(dg_error *dst, const dg_error *e, dg_status st,
                      dg_error *err)
{
    if (st == DG_E_NOMEM) {
        *err = *e;
        return st;
    }
    *dst = *e;
    return DG_OK;
}

/* Attrs, input and device strings of the newest node (tf_op: its op as
 * spelled, op: its index in L->ops).  An attr error is kept in L->e_attr
 * (the later passes never run then); returns only nomem. */
static dg_status add_rest(dgc_gdload *L, const char *tf_op, int op,
                          const dgc_gv *f, dg_error *err)
{
    int32_t id = L->g->n_nodes - 1;
    if (L->n_rec == L->cap_rec) {
        size_t cap = L->cap_rec * 2;
        gd_rec *nr = dg_realloc(L->rec, sizeof *nr * cap);
        if (!nr)
            return dg_err_nomem(err, "loader");
        L->rec = nr;
        L->cap_rec = cap;
    }
    gd_rec *r = &L->rec[L->n_rec++];
    memset(r, 0, sizeof *r);
    r->op = (int16_t)op;
    /* summaries: their tags and text are DT_STRING Consts, a dtype dgrun
     * has not; such a Const becomes a NoOp that only they may take, and
     * the attrs of both are ignored */
    dgc_node *n = &L->g->nodes[id];
    dgc_gv dt = dgc_gv_field(dgc_gv_field(f[4], "dtype", NULL), "type", NULL);
    if (n->op == DGC_OPID_Const && dgc_gv_is_string(dt) &&
        strcmp(dgc_gv_str(dt), "DT_STRING") == 0) {
        r->strc = 1;
        n->op = DGC_OPID_NoOp;
    }
    dgc_gv attrs = r->strc || dgc_op_has(n->op, DGC_OP_SUMMARY)
                       ? dgc_gv_json(NULL) : f[4];
    int32_t cls0 = L->cls.n;
    dg_error e;
    dg_status st = dgc_gd_attrs(L->g, L->doc, id, tf_op, attrs, &L->cls, &e);
    r->n_cls = L->cls.n - cls0;
    if (st) {
        L->attr_node = id;
        return keep(&L->e_attr, &e, st, err);
    }
    if (keep_strings(L, r, f[2], f[3]))
        return dg_err_nomem(err, "inputs");
    return DG_OK;
}

dg_status dgc_gd_add(dgc_gdload *L, dgc_gv x, int i, dg_error *err)
{
    dgc_gv o = dgc_gv_field(x, "op", NULL);
    int op = -1;
    if (dgc_gv_is_string(o)) {
        if ((op = op_seen(L, dgc_gv_str(o))) < 0)
            return dg_err_nomem(err, "loader");
        L->ops[op].n++;
    }
    if (L->node_failed)
        return DG_OK;
    dgc_gv f[6];
    dg_error e;
    uint32_t h;
    dg_status st = add_node(L, x, i, op, f, &h, &e);
    if (st) {
        L->node_failed = 1;
        return keep(&L->e_node, &e, st, err);
    }
    /* the attrs convert while the name's map slot is fetched */
    if (L->attr_node < 0 && (st = add_rest(L, dgc_gv_str(o), op, f, err)))
        return st;
    if ((st = name_in(L->g, h, &e))) {
        /* a duplicate name is a node error, before any attr error */
        L->node_failed = 1;
        return keep(&L->e_node, &e, st, err);
    }
    return DG_OK;
}

/* The folded Const `c` (output 0 of a Const) as the attribute m->attr. */
static dg_status fold_const(dgc_graph *g, int32_t id, const tf_map *m,
                            const char *in, dgc_ref r, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    const dgc_node *c = &g->nodes[r.node];
    const dgc_attr *v = dgc_node_attr(c, "value");
    if (strcmp(dgc_op_name(c->op), "Const") != 0 || !v || !v->tensor)
        return GE("node '%s': input '%s' (%s of %s) must come from a Const: "
                  "dgrun needs it at compile time", n->name, in, m->what,
                  m->tf);
    const dg_tensor *t = v->tensor;
    if (t->dtype != DG_I32 && t->dtype != DG_I64)
        return GE("node '%s': %s '%s' must be int32 or int64, got %s",
                  n->name, m->what, in, dg_dtype_name(t->dtype));
    int64_t cnt = dg_shape_numel(&t->shape);
    if (t->shape.rank > 1 || (m->kind == F_AXIS && t->shape.rank != 0) ||
        (m->kind == F_AXIS1 && cnt != 1) ||
        ((m->kind == F_SHAPE || m->kind == F_PERM) && t->shape.rank != 1))
        return GE("node '%s': %s '%s' must be a %s", n->name, m->what, in,
                  m->kind == F_AXIS ? "scalar" :
                  m->kind == F_AXIS1 ? "single value" :
                  m->kind == F_AXES ? "scalar or a vector" : "vector");
    if (m->kind == F_SHAPE && cnt > DG_MAX_RANK)
        return GE("node '%s': %s '%s' has more than %d dimensions", n->name,
                  m->what, in, DG_MAX_RANK);
    int64_t vals[DG_MAX_RANK > 64 ? DG_MAX_RANK : 64];
    if (cnt > 64)
        return GE("node '%s': %s '%s' is too long", n->name, m->what, in);
    for (int64_t i = 0; i < cnt; i++)
        vals[i] = t->dtype == DG_I32 ? ((const int32_t *)t->data)[i]
                                     : ((const int64_t *)t->data)[i];
    int rc;
    if (m->kind == F_SHAPE) {
        dg_shape s;
        memset(&s, 0, sizeof s);
        s.rank = (int)cnt;
        for (int64_t i = 0; i < cnt; i++) {
            if (vals[i] < -1 || (vals[i] == -1 && m->fold == 0))
                return GE("node '%s': invalid dimension %lld in %s '%s'",
                          n->name, (long long)vals[i], m->what, in);
            s.dims[i] = vals[i];
        }
        rc = dgc_node_set_shape(n, m->attr, &s);
    } else if (m->kind == F_AXIS || m->kind == F_AXIS1) {
        rc = dgc_node_set_int(n, m->attr, vals[0]);
    } else {
        rc = dgc_node_set_ints(n, m->attr, vals, (int)cnt);
    }
    return rc ? dg_err_nomem(err, "attrs") : DG_OK;
}

/* The op as the file spelled it, for messages. */
static const char *tf_name(const dgc_gdload *L, int32_t id)
{
    return L->ops[L->rec[id].op].tf;
}

/* `input`: data inputs "x" / "x:k", then control inputs "^x" (the
 * strings L->rec[id] kept); then `device`. */
static dg_status add_inputs(dgc_gdload *L, int32_t id, dg_error *err)
{
    dgc_graph *g = L->g;
    const gd_rec *r = &L->rec[id];
    const tf_map *map = L->ops[r->op].map;
    dgc_node *n = &g->nodes[id];
    if (r->bad_at == -2)
        return GE("node '%s': 'input' must be a list of strings, got %s",
                  n->name, kinds[r->in_kind]);
    const char *first_ctrl = NULL;
    int data = 0, n_data = 0;
    dgc_ref fill[2];
    const char *next = dgc_strpool_at(&L->pool, r->off);
    for (int32_t k = 0; k < r->n_in; k++) {
        n_data += next[0] != '^';
        next += strlen(next) + 1;
    }
    int fold_at = !map ? -1 : map->fold == FOLD_LAST ? n_data - 1 : map->fold;
    const char *attr2 = fold2_attr(map);
    next = dgc_strpool_at(&L->pool, r->off);
    for (int32_t k = 0; k < r->n_in || k == r->bad_at; k++) {
        if (k == r->bad_at)
            return GE("node '%s': 'input' must be a list of strings, got %s "
                      "in it", n->name, kinds[r->in_kind]);
        const char *s = next;
        next += strlen(next) + 1;
        if (s[0] == '^') {
            int32_t c = dg_strmap_get(&g->names, s + 1);
            if (c < 0)
                return GE("node '%s': control input '%s' names unknown node "
                          "'%s'", n->name, s, s + 1);
            if (!first_ctrl)
                first_ctrl = s;
            if (dgc_node_add_ctrl(g, id, c))
                return dg_err_nomem(err, "inputs");
            continue;
        }
        if (first_ctrl)
            return GE("node '%s': control input '%s' before data input '%s' "
                      "(control inputs come last)", n->name, first_ctrl, s);
        const char *colon = strrchr(s, ':');
        size_t nl = colon ? (size_t)(colon - s) : strlen(s);
        long long kk = 0;
        if (colon) {
            const char *p = colon + 1;
            if (!*p)
                return GE("node '%s': malformed input '%s'", n->name, s);
            for (; *p; p++) {
                if (*p < '0' || *p > '9' || kk > 100000000)
                    return GE("node '%s': malformed input '%s'", n->name, s);
                kk = kk * 10 + (*p - '0');
            }
        }
        int32_t p = dg_strmap_getn(&g->names, s, nl);
        if (p < 0)
            return GE("node '%s': input '%s' names unknown node '%.*s'",
                      n->name, s, (int)nl, s);
        if (L->rec[p].strc) { /* a string: summary ops, Assert drop it */
            if (!dgc_op_has(n->op, DGC_OP_SUMMARY) &&
                n->op != DGC_OPID_Assert)
                return GE("node '%s': input '%s' is a string tensor, which "
                          "dgrun has no dtype for (only summary ops and "
                          "Assert may take one)", n->name, s);
            continue;
        }
        int nout = dgc_ops[g->nodes[p].op].n_out;
        if (nout >= 0 && kk >= nout) /* variadic: checked by inference */
            return GE("node '%s': input '%s' refers to output %lld of '%s', "
                      "which has %d output%s", n->name, s, kk, g->nodes[p].name,
                      nout, nout == 1 ? "" : "s");
        dgc_ref ref = {p, (int32_t)kk};
        dg_status st = DG_OK;
        int fold = map && (map->kind == F_FILL || fold_at == data);
        if (fold && map->opt &&
            strcmp(dgc_op_name(g->nodes[p].op), "Const") != 0)
            fold = 0; /* a tensor parameter: stays an input */
        if (map && map->kind == F_FILL) {
            if (data < 2)
                fill[data] = ref;
        } else if (fold) {
            st = fold_const(g, id, map, s, ref, err);
        } else if (attr2 && fold_at >= 0 && data == fold_at + 1) {
            tf_map m2 = *map;
            m2.attr = m2.what = attr2;
            st = fold_const(g, id, &m2, s, ref, err);
        } else if (dgc_node_add_input(g, id, ref)) {
            st = dg_err_nomem(err, "inputs");
        }
        if (st)
            return st;
        n = &g->nodes[id];
        data++;
    }
    const dgc_op_def *d = &dgc_ops[n->op];
    if (map && map->kind == F_FILL) {
        if (data != 2)
            return GE("node '%s': op Fill expects 2 data inputs (dims, value), "
                      "got %d", n->name, data);
        int folded = 0;
        if (strcmp(dgc_op_name(g->nodes[fill[0].node].op), "Const") == 0 &&
            strcmp(dgc_op_name(g->nodes[fill[1].node].op), "Const") == 0) {
            dg_status fs = dgc_gd_fill(g, id, fill[0], fill[1], &folded, err);
            if (fs != DG_OK || folded)
                return fs;
        }
        /* dims computed at run time, or a value too big to keep in the
         * graph: the Fill op (issue 10) */
        n->op = DGC_OPID_Fill;
        if (dgc_node_add_input(g, id, fill[0]) ||
            dgc_node_add_input(g, id, fill[1]))
            return dg_err_nomem(err, "inputs");
        return DG_OK;
    }
    if (map && fold_at >= 0 && data <= fold_at + (attr2 != NULL))
        return GE("node '%s': op %s needs its %s input", n->name, map->tf,
                  data <= fold_at ? map->what : attr2);
    int folded = map && fold_at >= 0 ? data - n->n_inputs : 0;
    if (map && (map->kind == F_AXIS || map->kind == F_AXIS1) &&
        fold_at == 0 && !folded && n->n_inputs > 1) { /* a run-time split_dim / concat_dim: last */
        dgc_ref ax = n->inputs[0];
        memmove(n->inputs, n->inputs + 1,
                sizeof *n->inputs * (size_t)(n->n_inputs - 1));
        n->inputs[n->n_inputs - 1] = ax;
    }
    if (n->n_inputs < d->min_in ||
        (d->max_in != DGC_IN_ANY && n->n_inputs > d->max_in)) {
        char want[64];
        if (d->min_in == d->max_in)
            snprintf(want, sizeof want, "%d", d->min_in);
        else if (d->max_in == DGC_IN_ANY)
            snprintf(want, sizeof want, "at least %d", d->min_in);
        else
            snprintf(want, sizeof want, "%d to %d", d->min_in, d->max_in);
        return GE("node '%s': op %s expects %s data input%s, got %d", n->name,
                  tf_name(L, id), want,
                  (d->min_in == 1 && d->max_in == 1) ? "" : "s",
                  n->n_inputs + folded);
    }
    return DG_OK;
}

static dg_status add_device(dgc_gdload *L, int32_t id, dg_error *err)
{
    const gd_rec *r = &L->rec[id];
    dgc_node *n = &L->g->nodes[id];
    if (!r->dev)
        return DG_OK;
    if (r->dev == 2)
        return GE("node '%s': 'device' must be a string, got %s", n->name,
                  kinds[r->dev_kind]);
    const char *dev = dgc_strpool_at(&L->pool, r->off);
    for (int32_t k = 0; k < r->n_in; k++)
        dev += strlen(dev) + 1;
    dgc_devspec ds;
    /* as TF's C++ placer reads a NodeDef's device (issue 21) */
    if (dgc_devspec_parse_as(dev, &ds, DGC_DEVSPEC_CPP))
        return GE("node '%s': Malformed device specification '%s'", n->name,
                  dev);
    if (dev[0] && !(n->device = dg_strdup(dev)))
        return dg_err_nomem(err, "device");
    return DG_OK;
}

dg_status dgc_gd_check_root(const cJSON *root, dg_error *err)
{
    const char *dup;
    if (dgc_json_dup_key(root, &dup))
        return GE("duplicate top-level key '%s'", dup);
    for (const cJSON *k = root->child; k; k = k->next) {
        if (!listed(root_keys, k->string))
            return GE("unknown top-level key '%s' (a TensorFlow GraphDef has "
                      "node, versions, library)", k->string);
        if (strcmp(k->string, "node") == 0 && !cJSON_IsArray(k))
            return GE("'node' must be an array, got %s", dgc_json_kind(k));
        if (strcmp(k->string, "node") != 0 && !cJSON_IsObject(k))
            return GE("'%s' must be an object, got %s", k->string,
                      dgc_json_kind(k));
    }
    const cJSON *lib = cJSON_GetObjectItemCaseSensitive(root, "library");
    const cJSON *fn = cJSON_IsObject(lib)
                          ? cJSON_GetObjectItemCaseSensitive(lib, "function")
                          : NULL;
    if (cJSON_GetArraySize(fn) > 0)
        return GE("'library' has functions, which dgrun does not support");
    return DG_OK;
}

/* Prefetch the map slots of node id's input names (resolved a few nodes
 * later, by which time the slots are in the cache). */
static void prefetch_inputs(const dgc_gdload *L, int32_t id)
{
    const gd_rec *r = &L->rec[id];
    const char *p = dgc_strpool_at(&L->pool, r->off);
    for (int32_t k = 0; k < r->n_in; k++) {
        size_t len = strlen(p);
        const char *name = p + (p[0] == '^');
        const char *colon = strrchr(name, ':');
        size_t nl = colon ? (size_t)(colon - name) : len - (size_t)(name - p);
        dg_strmap_prefetch(&L->g->names, dg_strmap_hash(name, nl));
        p += len + 1;
    }
}

#define PREFETCH_AHEAD 8

/* A TensorArrayReadV3 / GatherV3 without element_shape (TF writes it only
 * on some; the read of dynamic_rnn's input has none) takes the
 * element_shape of the TensorArrayV3 its handle comes from, through
 * Enter / Identity / Switch / Merge and TensorArrayGradV3 (issue 21).
 * 0 ok (or nothing found: inference names the node), -1 nomem. */
static int ta_element_shape(dgc_graph *g, int32_t id)
{
    dgc_node *n = &g->nodes[id];
    if ((n->op != DGC_OPID_TensorArrayReadV3 &&
         n->op != DGC_OPID_TensorArrayGatherV3) || n->n_inputs < 1 ||
        dgc_node_attr(n, "element_shape") || dgc_node_attr(n, "output_shape"))
        return 0;
    int32_t h = n->inputs[0].node;
    for (int step = 0; step < 64 && h >= 0; step++) {
        const dgc_node *p = &g->nodes[h];
        if (p->op == DGC_OPID_TensorArrayV3) {
            const dgc_attr *es = dgc_node_attr(p, "element_shape");
            if (!es || es->kind != DGC_A_SHAPE || es->n > DG_MAX_RANK)
                return 0;
            dg_shape sh;
            memset(&sh, 0, sizeof sh);
            sh.rank = es->n;
            for (int i = 0; i < es->n; i++)
                sh.dims[i] = es->ints[i];
            return dgc_node_set_shape(&g->nodes[id], "element_shape", &sh)
                       ? -1 : 0;
        }
        if (p->n_inputs < 1 ||
            !(p->op == DGC_OPID_Enter || p->op == DGC_OPID_Identity ||
              p->op == DGC_OPID_Switch || p->op == DGC_OPID_Merge ||
              p->op == DGC_OPID_TensorArrayGradV3))
            return 0;
        h = p->inputs[0].node;
    }
    return 0;
}

static int run_time_reduction(const dgc_node *n)
{
    int op = n->op;
    return (op == DGC_OPID_Sum || op == DGC_OPID_Mean || op == DGC_OPID_Max ||
            op == DGC_OPID_Prod) && n->n_inputs == 2 &&
           !dgc_attr_bool(n, "keepdims", 0);
}

/* See dgc_gd_finish.  0 ok, -1 nomem. */
static int keep_reduced_dims(dgc_graph *g)
{
    int any = 0;
    for (int32_t id = 0; id < g->n_nodes && !any; id++)
        any = run_time_reduction(&g->nodes[id]);
    if (!any)
        return 0;
    /* per node: 1 consumed by a Reshape's data input 0, 2 by anything else */
    uint8_t *use = dg_calloc((size_t)g->n_nodes, 1);
    if (!use)
        return -1;
    for (int32_t c = 0; c < g->n_nodes; c++) {
        const dgc_node *m = &g->nodes[c];
        for (int k = 0; k < m->n_inputs; k++) {
            int reshape = m->op == DGC_OPID_Reshape && k == 0 &&
                          m->n_inputs == 2;
            use[m->inputs[k].node] |= reshape ? 1 : 2;
        }
    }
    int rc = 0;
    for (int32_t id = 0; id < g->n_nodes && !rc; id++)
        if (use[id] == 1 && run_time_reduction(&g->nodes[id]))
            rc = dgc_node_set_bool(&g->nodes[id], "keepdims", 1) ? -1 : 0;
    dg_free(use);
    return rc;
}

dg_status dgc_gd_finish(dgc_gdload *L, dg_error *err)
{
    dgc_graph *g = L->g;
    dg_status st = unsupported_ops(L, err);
    if (st)
        return st;
    if (L->node_failed) {
        *err = L->e_node;
        return err->code;
    }
    /* attrs: `_class` names in node order, up to the first attr error
     * (its node's names before the failing attr included) */
    const char *c = L->cls.buf;
    int32_t last = L->attr_node >= 0 ? L->attr_node : g->n_nodes - 1;
    for (int32_t id = 0; id <= last && !st; id++)
        if (L->rec[id].n_cls)
            st = dgc_gd_resolve_class(g, id, &c, L->rec[id].n_cls, err);
    if (st)
        return st;
    if (L->attr_node >= 0) {
        *err = L->e_attr;
        return err->code;
    }
    /* Fill becomes a Const: fold those first, other folds may read them */
    for (int pass = 0; pass < 2; pass++)
        for (int32_t id = 0; id < g->n_nodes && !st; id++) {
            const tf_map *m = L->ops[L->rec[id].op].map;
            int fill = m && m->kind == F_FILL;
            if (pass == 1 && id + PREFETCH_AHEAD < g->n_nodes)
                prefetch_inputs(L, id + PREFETCH_AHEAD);
            if (fill != (pass == 0))
                continue;
            st = add_inputs(L, id, err);
            if (!st)
                st = add_device(L, id, err);
        }
    /* issue 21: a reduction over run-time axes whose every consumer is a
     * Reshape (TF's gradient idiom reshape(reduce_sum(g, rx), sx), rx from
     * BroadcastGradientArgs: how many axes only the run knows) keeps its
     * reduced dims: the same elements in the same order, and a rank
     * dgrun knows */
    if (!st && keep_reduced_dims(g))
        st = dg_err_nomem(err, "attrs");
    for (int32_t id = 0; id < g->n_nodes && !st; id++)
        if (ta_element_shape(g, id))
            st = dg_err_nomem(err, "attrs");
        /* a Const that only became attributes keeps its device and _class
     * colocation (issue 10): TF runs int32 ones in host memory, which
     * placement does too (DGC_OP_HOST_OK) */
    for (int32_t id = 0; id < g->n_nodes && !st; id++)
        if (dgc_op_has(g->nodes[id].op, DGC_OP_VARIABLE))
            st = dgc_gd_variable_init(g, id, err);
    g->n_file_nodes = g->n_nodes;
    return st;
}

void dgc_gd_end(dgc_gdload *L)
{
    if (!L)
        return;
    for (int k = 0; k < L->n_ops; k++)
        dg_free(L->ops[k].tf);
    dg_free(L->ops);
    dg_strmap_free(&L->op_ids);
    dg_free(L->rec);
    dgc_strpool_free(&L->pool);
    dgc_strpool_free(&L->cls);
    dg_free(L);
}

dg_status dgc_graphdef_load(dgc_graph *g, const dgc_jdoc *doc,
                            const cJSON *root, dg_error *err)
{
    dg_status st = dgc_gd_check_root(root, err);
    if (st)
        return st;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "node");
    dgc_gdload *L;
    st = dgc_gd_begin(&L, g, doc, (size_t)cJSON_GetArraySize(arr), err);
    int i = 0;
    for (const cJSON *x = arr->child; x && !st; x = x->next, i++)
        st = dgc_gd_add(L, dgc_gv_json(x), i, err);
    if (!st)
        st = dgc_gd_finish(L, err);
    dgc_gd_end(L);
    return st;
}
