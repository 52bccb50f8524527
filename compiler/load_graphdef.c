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
 */
#include "load_graphdef.h"
#include "ops.h"
#include "devices.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

#define GE(...) dg_err(err, DG_E_GRAPH, __VA_ARGS__)

/* How a folded Const input becomes an attribute. */
enum { F_NONE, F_AXES, F_AXIS, F_SHAPE, F_PERM, F_FILL };

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
    {"Sum", "Sum", 1, F_AXES, "axis", "reduction_indices", 0},
    {"Mean", "Mean", 1, F_AXES, "axis", "reduction_indices", 0},
    {"Max", "Max", 1, F_AXES, "axis", "reduction_indices", 0},
    {"Reshape", "Reshape", 1, F_SHAPE, "shape", "shape", 1},
    {"Transpose", "Transpose", 1, F_PERM, "perm", "perm", 0},
    {"ArgMax", "ArgMax", 1, F_AXIS, "axis", "dimension", 0},
    {"RandomStandardNormal", "RandomNormal", 0, F_SHAPE, "shape", "shape", 0},
    {"RandomUniform", "RandomUniform", 0, F_SHAPE, "shape", "shape", 0},
    {"Fill", "Const", -1, F_FILL, "value", "dims and value", 0},
    {"RealDiv", "Div", -1, F_NONE, NULL, NULL, 0},
    {"Snapshot", "Identity", -1, F_NONE, NULL, NULL, 0},
    {"BiasAddV1", "BiasAdd", -1, F_NONE, NULL, NULL, 0},
    /* TF graph ops (issue 10) */
    {"Prod", "Prod", 1, F_AXES, "axis", "reduction_indices", 0},
    {"Tile", "Tile", 1, F_PERM, "multiples", "multiples", 1},
    {"ExpandDims", "ExpandDims", 1, F_AXIS, "axis", "dim", 1},
    {"GatherV2", "GatherV2", 2, F_AXIS, "axis", "axis", 1},
    {"ConcatV2", "ConcatV2", FOLD_LAST, F_AXIS, "axis", "axis", 0},
    {"Split", "Split", 0, F_AXIS, "axis", "split_dim", 0},
    {"SplitV", "SplitV", 2, F_AXIS, "axis", "axis", 0},
};

/* TF ops with a dgrun look-alike whose semantics differ. */
static const struct { const char *tf, *why; } rejected[] = {
    {"StopGradient", "it blocks gradients, which no dgrun op does"},
    {"PreventGradient", "it blocks gradients, which no dgrun op does"},
    {"TruncatedNormal", "dgrun has no truncated normal sampler"},
};

/* dgrun ops the compiler generates: never valid TF op names. */
static const char *const internal_ops[] = {
    "SumTo", "BroadcastLike", "ReshapeLike", "MaxGrad", "SoftmaxGrad",
    "BatchNorm", "BatchNormGrad", "AssignMovingAvg", NULL};

static const char *const root_keys[] = {"node", "versions", "library", NULL};

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
    for (size_t k = 0; k < sizeof rejected / sizeof rejected[0]; k++)
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

/* Every op type of the file dgrun does not run, with its node count, in
 * one error: "unsupported ops: Conv2D (3 nodes), MaxPool (2 nodes)" (in
 * order of first appearance; a known reason follows the count). */
static dg_status unsupported_ops(const cJSON *arr, dg_error *err)
{
    struct { const char *op, *why; int n; } *u = NULL;
    int nu = 0, cap = 0;
    for (const cJSON *x = arr->child; x; x = x->next) {
        const cJSON *o = dgc_gd_field(x, "op", NULL);
        const tf_map *m;
        int opi;
        const char *why = cJSON_IsString(o) ? op_support(o->valuestring, &m,
                                                         &opi) : NULL;
        if (!why)
            continue;
        int k = 0;
        while (k < nu && strcmp(u[k].op, o->valuestring) != 0)
            k++;
        if (k == nu) {
            if (nu == cap) {
                cap = cap ? cap * 2 : 8;
                void *nv = dg_realloc(u, sizeof *u * (size_t)cap);
                if (!nv) {
                    dg_free(u);
                    return dg_err_nomem(err, "loader");
                }
                u = nv;
            }
            u[nu].op = o->valuestring;
            u[nu].why = why;
            u[nu++].n = 0;
        }
        u[k].n++;
    }
    if (!nu)
        return DG_OK;
    char buf[1800];
    size_t len = 0;
    for (int k = 0; k < nu && len < sizeof buf; k++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s (%d node%s"
                                "%s%s)", k ? ", " : "", u[k].op, u[k].n,
                                u[k].n == 1 ? "" : "s", *u[k].why ? ": " : "",
                                u[k].why);
    if (len >= sizeof buf)
        memcpy(buf + sizeof buf - 5, "...", 4);
    dg_free(u);
    return GE("unsupported ops: %s", buf);
}

/* One NodeDef's fields. */
typedef struct gd_node {
    const cJSON *name, *op, *input, *device, *attr;
    const tf_map *map;
    int folded, used;  /* times its output was folded into an attribute /
                          used otherwise (data or control input) */
    int strc;          /* a DT_STRING Const: loaded as a NoOp, only summary
                          ops may take it (and drop it) */
} gd_node;

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

/* Fields, name and op of element i; adds the node to g. */
static dg_status add_node(dgc_graph *g, const cJSON *x, int i, gd_node *nd,
                          dg_error *err)
{
    memset(nd, 0, sizeof *nd);
    if (!cJSON_IsObject(x))
        return GE("node #%d: must be an object, got %s", i, dgc_json_kind(x));
    const cJSON *f[6] = {NULL};
    const cJSON *bad = NULL;
    int dup = 0;
    const cJSON *name = NULL; /* the last one: messages use it */
    for (const cJSON *k = x->child; k; k = k->next) {
        int s = field_slot(k->string);
        if (s == 0)
            name = k;
        if (bad)
            continue;
        if (s < 0)
            bad = k;
        else if (s < 5 && f[s])
            bad = k, dup = 1;
        else
            f[s] = k;
    }
    const char *nm = cJSON_IsString(name) ? name->valuestring : NULL;
    char who[300];
    if (nm)
        snprintf(who, sizeof who, "node '%s'", nm);
    else
        snprintf(who, sizeof who, "node #%d", i);
    if (bad)
        return GE("%s: %s field '%s' (a NodeDef has name, op, input, device, "
                  "attr)", who, dup ? "duplicate" : "unknown", bad->string);
    if (!f[0])
        return GE("%s: missing 'name'", who);
    if (!nm)
        return GE("%s: 'name' must be a string, got %s", who,
                  dgc_json_kind(f[0]));
    if (!dgc_valid_name(nm))
        return GE("%s: invalid name '%s' (must match "
                  "[A-Za-z0-9.][A-Za-z0-9_./-]*)", who, nm);
    if (!f[1])
        return GE("%s: missing 'op'", who);
    if (!cJSON_IsString(f[1]))
        return GE("%s: 'op' must be a string, got %s", who,
                  dgc_json_kind(f[1]));
    const char *op = f[1]->valuestring;
    int opi;
    const char *why = op_support(op, &nd->map, &opi);
    if (why) /* unsupported_ops reports these first: only a fallback */
        return GE("%s: TensorFlow op '%s' is not supported by dgrun%s%s",
                  who, op, *why ? ": " : "", why);
    int32_t id = dgc_graph_add_node(g, nm, opi, err);
    if (id < 0)
        return err->code;
    g->nodes[id].op_alias = dgc_ops[opi].alias &&
                            strcmp(op, dgc_ops[opi].alias) == 0;
    nd->name = f[0];
    nd->op = f[1];
    nd->input = f[2];
    nd->device = f[3];
    nd->attr = f[4];
    /* summaries: their tags and text are DT_STRING Consts, a dtype dgrun
     * has not; such a Const becomes a NoOp that only they may take */
    const cJSON *dt = dgc_gd_field(dgc_gd_field(f[4], "dtype", NULL), "type",
                                   NULL);
    if (opi == DGC_OPID_Const && cJSON_IsString(dt) &&
        strcmp(dt->valuestring, "DT_STRING") == 0) {
        nd->strc = 1;
        g->nodes[id].op = DGC_OPID_NoOp;
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
        ((m->kind == F_SHAPE || m->kind == F_PERM) && t->shape.rank != 1))
        return GE("node '%s': %s '%s' must be a %s", n->name, m->what, in,
                  m->kind == F_AXIS ? "scalar" :
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
    } else if (m->kind == F_AXIS) {
        rc = dgc_node_set_int(n, m->attr, vals[0]);
    } else {
        rc = dgc_node_set_ints(n, m->attr, vals, (int)cnt);
    }
    return rc ? dg_err_nomem(err, "attrs") : DG_OK;
}

/* `input`: data inputs "x" / "x:k", then control inputs "^x". */
static dg_status add_inputs(dgc_graph *g, int32_t id, gd_node *all,
                            dg_error *err)
{
    const gd_node *nd = &all[id];
    dgc_node *n = &g->nodes[id];
    const cJSON *in = nd->input;
    if (in && !cJSON_IsArray(in))
        return GE("node '%s': 'input' must be a list of strings, got %s",
                  n->name, dgc_json_kind(in));
    const char *first_ctrl = NULL;
    int data = 0, n_data = 0;
    dgc_ref fill[2];
    for (const cJSON *e = in ? in->child : NULL; e; e = e->next)
        n_data += cJSON_IsString(e) && e->valuestring[0] != '^';
    int fold_at = !nd->map ? -1 : nd->map->fold == FOLD_LAST ? n_data - 1
                                                           : nd->map->fold;
    for (const cJSON *e = in ? in->child : NULL; e; e = e->next) {
        if (!cJSON_IsString(e))
            return GE("node '%s': 'input' must be a list of strings, got %s "
                      "in it", n->name, dgc_json_kind(e));
        const char *s = e->valuestring;
        if (s[0] == '^') {
            int32_t c = dg_strmap_get(&g->names, s + 1);
            if (c < 0)
                return GE("node '%s': control input '%s' names unknown node "
                          "'%s'", n->name, s, s + 1);
            if (!first_ctrl)
                first_ctrl = s;
            all[c].used++;
            if (dgc_node_add_ctrl(g, id, c))
                return dg_err_nomem(err, "inputs");
            continue;
        }
        if (first_ctrl)
            return GE("node '%s': control input '%s' before data input '%s' "
                      "(control inputs come last)", n->name, first_ctrl, s);
        const char *colon = strrchr(s, ':');
        size_t nl = colon ? (size_t)(colon - s) : strlen(s);
        long long k = 0;
        if (colon) {
            const char *p = colon + 1;
            if (!*p)
                return GE("node '%s': malformed input '%s'", n->name, s);
            for (; *p; p++) {
                if (*p < '0' || *p > '9' || k > 100000000)
                    return GE("node '%s': malformed input '%s'", n->name, s);
                k = k * 10 + (*p - '0');
            }
        }
        int32_t p = dg_strmap_getn(&g->names, s, nl);
        if (p < 0)
            return GE("node '%s': input '%s' names unknown node '%.*s'",
                      n->name, s, (int)nl, s);
        if (all[p].strc) { /* a string: summary ops drop it (docs) */
            if (!dgc_op_has(n->op, DGC_OP_SUMMARY))
                return GE("node '%s': input '%s' is a string tensor, which "
                          "dgrun has no dtype for (only summary ops may take "
                          "one)", n->name, s);
            all[p].used++;
            continue;
        }
        int nout = dgc_ops[g->nodes[p].op].n_out;
        if (nout >= 0 && k >= nout) /* variadic: checked by inference */
            return GE("node '%s': input '%s' refers to output %lld of '%s', "
                      "which has %d output%s", n->name, s, k, g->nodes[p].name,
                      nout, nout == 1 ? "" : "s");
        dgc_ref r = {p, (int32_t)k};
        dg_status st = DG_OK;
        int fold = nd->map && (nd->map->kind == F_FILL || fold_at == data);
        if (fold && nd->map->opt &&
            strcmp(dgc_op_name(g->nodes[p].op), "Const") != 0)
            fold = 0; /* a tensor parameter: stays an input */
        all[p].folded += fold;
        all[p].used += !fold;
        if (nd->map && nd->map->kind == F_FILL) {
            if (data < 2)
                fill[data] = r;
        } else if (fold) {
            st = fold_const(g, id, nd->map, s, r, err);
        } else if (dgc_node_add_input(g, id, r)) {
            st = dg_err_nomem(err, "inputs");
        }
        if (st)
            return st;
        n = &g->nodes[id];
        data++;
    }
    const dgc_op_def *d = &dgc_ops[n->op];
    if (nd->map && nd->map->kind == F_FILL) {
        if (data != 2)
            return GE("node '%s': op Fill expects 2 data inputs (dims, value), "
                      "got %d", n->name, data);
        if (strcmp(dgc_op_name(g->nodes[fill[0].node].op), "Const") == 0 &&
            strcmp(dgc_op_name(g->nodes[fill[1].node].op), "Const") == 0)
            return dgc_gd_fill(g, id, fill[0], fill[1], err);
        /* dims computed at run time: the Fill op (issue 10) */
        all[fill[0].node].folded--, all[fill[0].node].used++;
        all[fill[1].node].folded--, all[fill[1].node].used++;
        n->op = DGC_OPID_Fill;
        if (dgc_node_add_input(g, id, fill[0]) ||
            dgc_node_add_input(g, id, fill[1]))
            return dg_err_nomem(err, "inputs");
        return DG_OK;
    }
    if (nd->map && fold_at >= 0 && data <= fold_at)
        return GE("node '%s': op %s needs its %s input", n->name,
                  nd->map->tf, nd->map->what);
    int folded = nd->map && fold_at >= 0 && n->n_inputs < data;
    if (n->n_inputs < d->min_in || (d->max_in >= 0 && n->n_inputs > d->max_in)) {
        char want[64];
        if (d->min_in == d->max_in)
            snprintf(want, sizeof want, "%d", d->min_in);
        else if (d->max_in < 0)
            snprintf(want, sizeof want, "at least %d", d->min_in);
        else
            snprintf(want, sizeof want, "%d to %d", d->min_in, d->max_in);
        return GE("node '%s': op %s expects %s data input%s, got %d", n->name,
                  nd->op->valuestring, want,
                  (d->min_in == 1 && d->max_in == 1) ? "" : "s",
                  n->n_inputs + folded);
    }
    return DG_OK;
}

static dg_status add_device(dgc_graph *g, int32_t id, const cJSON *dev,
                            dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    if (!dev)
        return DG_OK;
    if (!cJSON_IsString(dev))
        return GE("node '%s': 'device' must be a string, got %s", n->name,
                  dgc_json_kind(dev));
    dgc_devspec ds;
    if (dgc_devspec_parse(dev->valuestring, &ds))
        return GE("node '%s': Malformed device specification '%s'", n->name,
                  dev->valuestring);
    if (dev->valuestring[0] && !(n->device = dg_strdup(dev->valuestring)))
        return dg_err_nomem(err, "device");
    return DG_OK;
}

static dg_status check_root(const cJSON *root, dg_error *err)
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
    const cJSON *fn = dgc_gd_field(lib, "function", NULL);
    if (cJSON_GetArraySize(fn) > 0)
        return GE("'library' has functions, which dgrun does not support");
    return DG_OK;
}

dg_status dgc_graphdef_load(dgc_graph *g, const dgc_jdoc *doc,
                            const cJSON *root, dg_error *err)
{
    dg_status st = check_root(root, err);
    if (st)
        return st;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "node");
    if ((st = unsupported_ops(arr, err)))
        return st;
    int cnt = cJSON_GetArraySize(arr);
    gd_node *nd = dg_calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *nd);
    if (!nd)
        return dg_err_nomem(err, "loader");
    int i = 0;
    for (const cJSON *x = arr->child; x && !st; x = x->next, i++)
        st = add_node(g, x, i, &nd[i], err);
    /* attrs first: folding reads Const values of nodes defined later */
    for (int32_t id = 0; id < g->n_nodes && !st; id++)
        st = dgc_gd_attrs(g, doc, id, nd[id].op->valuestring,
                          nd[id].strc || dgc_op_has(g->nodes[id].op,
                                                    DGC_OP_SUMMARY)
                              ? NULL : nd[id].attr, /* attrs: all ignored */
                          err);
    /* Fill becomes a Const: fold those first, other folds may read them */
    for (int pass = 0; pass < 2; pass++)
        for (int32_t id = 0; id < g->n_nodes && !st; id++) {
            int fill = nd[id].map && nd[id].map->kind == F_FILL;
            if (fill != (pass == 0))
                continue;
            st = add_inputs(g, id, nd, err);
            if (!st)
                st = add_device(g, id, nd[id].device, err);
        }
    /* a Const that only became attributes keeps its device and _class
     * colocation (issue 10): TF runs int32 ones in host memory, which
     * placement does too (DGC_OP_HOST_OK) */
    for (int32_t id = 0; id < g->n_nodes && !st; id++)
        if (dgc_op_has(g->nodes[id].op, DGC_OP_VARIABLE))
            st = dgc_gd_variable_init(g, id, err);
    g->n_file_nodes = g->n_nodes;
    dg_free(nd);
    return st;
}
