/*
 * load_function.c -- TF 2 function calls inlined, resource-variable ops
 * renamed (issue 24; load_function.h, docs/savedmodel.md).
 *
 * Works on the protobuf-c messages before the GraphDef conversion: the
 * result is a new list of NodeDefs (names, inputs and renamed attr tables
 * in an arena; attr values borrowed from the parsed GraphDef and library),
 * which load_metagraph.c hands to the binary GraphDef conversion as the
 * graph's nodes.  Inputs that name a call's outputs are rewritten at the
 * end through an alias table ("call:k" -> the body's returned tensor,
 * "^call" -> the call's output_control_node), so node order never matters
 * and nested calls resolve through chains of aliases.
 */
#include "load_function.h"
#include "load_fn_priv.h"
#include "dg_alloc.h"
#include "dg_error.h"
#include "dg_util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define MAX_DEPTH 32            /* nested calls */
#define MAX_NODES 1000000       /* inlined nodes in all */

/* ---- arena -------------------------------------------------------------- */

typedef struct blk {
    struct blk *next;
    size_t used, cap;
    _Alignas(16) char data[];
} blk;

struct dgc_fn_arena {
    blk *head;
    Dgtf__FunctionDef **fn;     /* the parsed library */
    size_t n_fn;
    dg_strmap fnames;           /* function name -> index */
    dg_strmap amap;             /* alias key -> index into aval */
    const char **aval;
    size_t n_alias, cap_alias;
};

static void *ar_alloc(dgc_fn_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        blk *b = dg_malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    memset(p, 0, n);
    return p;
}

static char *ar_vprintf(dgc_fn_arena *a, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    char *s = n < 0 ? NULL : ar_alloc(a, (size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

static char *ar_printf(dgc_fn_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = ar_vprintf(a, fmt, ap);
    va_end(ap);
    return s;
}

/* ---- protobuf-c allocation through dg_alloc ---------------------------- */

static int fn_oom;

static void *fn_alloc(void *data, size_t n)
{
    (void)data;
    void *p = dg_malloc(n);
    fn_oom |= !p;
    return p;
}

static void fn_free(void *data, void *p)
{
    (void)data;
    dg_free(p);
}

static ProtobufCAllocator fn_allocator = {fn_alloc, fn_free, NULL};

/* ---- state (fnctx, frame: load_fn_priv.h) ------------------------------ */

static dg_status nomem(fnctx *c)
{
    return dg_err_nomem(c->err, "inlining TF 2 functions");
}

static dg_status alias_put(fnctx *c, const char *key, const char *val)
{
    dgc_fn_arena *a = c->a;
    if (a->n_alias == a->cap_alias) {
        size_t cap = a->cap_alias ? a->cap_alias * 2 : 64;
        const char **v = dg_realloc(a->aval, sizeof *v * cap);
        if (!v)
            return nomem(c);
        a->aval = v;
        a->cap_alias = cap;
    }
    int r = dg_strmap_put(&a->amap, key, (int32_t)a->n_alias);
    if (r < 0)
        return nomem(c);
    if (r == 0)
        a->aval[a->n_alias++] = val;
    return DG_OK;
}

static dg_status emit(fnctx *c, Dgtf__NodeDef *n)
{
    dgc_fn_graph *o = c->out;
    if (o->n_node >= MAX_NODES)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': inlining TF 2 "
                      "functions makes more than %d nodes", n->name,
                      MAX_NODES);
    if (o->n_node == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        Dgtf__NodeDef **v = dg_realloc(o->node, sizeof *v * cap);
        if (!v)
            return nomem(c);
        o->node = v;
        c->cap = cap;
    }
    o->node[o->n_node++] = n;
    return DG_OK;
}

/* ---- outputs of ops with several output args ---------------------------- */

/* Index of the first output of arg `arg` of `op` ("y" of FusedBatchNormV3:
 * 0, "batch_mean": 1); 0 for ops whose outputs are one arg (or a list). */
static int arg_base(const char *op, const char *arg)
{
    static const struct {
        const char *op;
        const char *args[7];
    } multi[] = {
        {"FusedBatchNorm", {"y", "batch_mean", "batch_variance",
                            "reserve_space_1", "reserve_space_2", NULL}},
        {"FusedBatchNormV2", {"y", "batch_mean", "batch_variance",
                              "reserve_space_1", "reserve_space_2", NULL}},
        {"FusedBatchNormV3", {"y", "batch_mean", "batch_variance",
                              "reserve_space_1", "reserve_space_2",
                              "reserve_space_3", NULL}},
        {"FusedBatchNormGrad", {"x_backprop", "scale_backprop",
                                "offset_backprop", "reserve_space_3",
                                "reserve_space_4", NULL}},
        {"FusedBatchNormGradV2", {"x_backprop", "scale_backprop",
                                  "offset_backprop", "reserve_space_3",
                                  "reserve_space_4", NULL}},
        {"FusedBatchNormGradV3", {"x_backprop", "scale_backprop",
                                  "offset_backprop", "reserve_space_4",
                                  "reserve_space_5", NULL}},
        {"SoftmaxCrossEntropyWithLogits", {"loss", "backprop", NULL}},
        {"SparseSoftmaxCrossEntropyWithLogits", {"loss", "backprop", NULL}},
        {"Switch", {"output_false", "output_true", NULL}},
        {"Merge", {"output", "value_index", NULL}},
        {"BroadcastGradientArgs", {"r0", "r1", NULL}},
        {"TopKV2", {"values", "indices", NULL}},
        {"Unique", {"y", "idx", NULL}},
    };
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++)
        if (strcmp(multi[i].op, op) == 0)
            for (int k = 0; multi[i].args[k]; k++)
                if (strcmp(multi[i].args[k], arg) == 0)
                    return k;
    return 0;
}

/* ---- resource ops -> reference ops ---------------------------------------- */

static const struct {
    const char *from, *to, *attr_from, *attr_to;
} renames[] = {
    {"VarHandleOp", "VariableV2", NULL, NULL},
    {"ReadVariableOp", "Identity", "dtype", "T"},
    {"AssignVariableOp", "Assign", "dtype", "T"},
    {"AssignAddVariableOp", "AssignAdd", "dtype", "T"},
    {"AssignSubVariableOp", "AssignSub", "dtype", "T"},
    {"ResourceGather", "GatherV2", "dtype", "Tparams"},
    {"ResourceScatterAdd", "ScatterAdd", "dtype", "T"},
    {"ResourceScatterSub", "ScatterSub", "dtype", "T"},
    {"ResourceScatterUpdate", "ScatterUpdate", "dtype", "T"},
};

/* n (a new node in the arena) with its resource op renamed; a
 * ResourceGather gets an axis input, the Const emitted here. */
static dg_status rename_resource(fnctx *c, Dgtf__NodeDef *n)
{
    int r = -1;
    for (size_t i = 0; i < sizeof renames / sizeof renames[0] && r < 0; i++)
        if (strcmp(n->op, renames[i].from) == 0)
            r = (int)i;
    if (r < 0 && strcmp(n->op, "VarIsInitializedOp") == 0) {
        /* dgrun's Variables always hold a value: a Const true */
        Dgtf__NodeDef__AttrEntry **at = ar_alloc(c->a, sizeof *at * 2);
        Dgtf__NodeDef__AttrEntry *e1 = ar_alloc(c->a, sizeof *e1);
        Dgtf__NodeDef__AttrEntry *e2 = ar_alloc(c->a, sizeof *e2);
        Dgtf__AttrValue *dt = ar_alloc(c->a, sizeof *dt);
        Dgtf__AttrValue *val = ar_alloc(c->a, sizeof *val);
        Dgtf__TensorProto *t = ar_alloc(c->a, sizeof *t);
        Dgtf__TensorShapeProto *sh = ar_alloc(c->a, sizeof *sh);
        protobuf_c_boolean *yes = ar_alloc(c->a, sizeof *yes);
        if (!at || !e1 || !e2 || !dt || !val || !t || !sh || !yes)
            return nomem(c);
        dgtf__node_def__attr_entry__init(e1);
        dgtf__node_def__attr_entry__init(e2);
        dgtf__attr_value__init(dt);
        dgtf__attr_value__init(val);
        dgtf__tensor_proto__init(t);
        dgtf__tensor_shape_proto__init(sh);
        *yes = 1;
        dt->value_case = DGTF__ATTR_VALUE__VALUE_TYPE;
        dt->type = DGTF__DATA_TYPE__DT_BOOL;
        t->dtype = DGTF__DATA_TYPE__DT_BOOL;
        t->tensor_shape = sh;
        t->n_bool_val = 1;
        t->bool_val = yes;
        val->value_case = DGTF__ATTR_VALUE__VALUE_TENSOR;
        val->tensor = t;
        e1->key = "dtype";
        e1->value = dt;
        e2->key = "value";
        e2->value = val;
        at[0] = e1;
        at[1] = e2;
        n->op = "Const";
        n->attr = at;
        n->n_attr = 2;
        n->n_input = 0;
        return DG_OK;
    }
    if (r < 0) {
        if (strncmp(n->op, "ResourceApply", 13) == 0 ||
            strncmp(n->op, "ResourceSparseApply", 19) == 0)
            n->op = n->op + 8; /* "ResourceApplyAdam" -> "ApplyAdam" */
        return DG_OK;
    }
    n->op = (char *)renames[r].to;
    if (r == 0) { /* VariableV2 has no allowed_devices, debug_name */
        size_t w = 0;
        Dgtf__NodeDef__AttrEntry **at = ar_alloc(c->a, sizeof *at *
                                                 (n->n_attr + 1));
        if (!at)
            return nomem(c);
        for (size_t k = 0; k < n->n_attr; k++)
            if (strcmp(n->attr[k]->key, "allowed_devices") != 0 &&
                strcmp(n->attr[k]->key, "debug_name") != 0)
                at[w++] = n->attr[k];
        n->attr = at;
        n->n_attr = w;
    }
    int gather = strcmp(renames[r].from, "ResourceGather") == 0;
    if (renames[r].attr_from || gather) {
        size_t na = n->n_attr + (size_t)gather;
        Dgtf__NodeDef__AttrEntry **at = ar_alloc(c->a, sizeof *at * (na + 1));
        if (!at)
            return nomem(c);
        for (size_t k = 0; k < n->n_attr; k++) {
            at[k] = n->attr[k];
            if (renames[r].attr_from &&
                strcmp(n->attr[k]->key, renames[r].attr_from) == 0) {
                Dgtf__NodeDef__AttrEntry *e = ar_alloc(c->a, sizeof *e);
                if (!e)
                    return nomem(c);
                *e = *n->attr[k];
                e->key = (char *)renames[r].attr_to;
                at[k] = e;
            }
        }
        if (gather) {
            Dgtf__NodeDef__AttrEntry *e = ar_alloc(c->a, sizeof *e);
            Dgtf__AttrValue *v = ar_alloc(c->a, sizeof *v);
            if (!e || !v)
                return nomem(c);
            dgtf__node_def__attr_entry__init(e);
            dgtf__attr_value__init(v);
            v->value_case = DGTF__ATTR_VALUE__VALUE_TYPE;
            v->type = DGTF__DATA_TYPE__DT_INT32;
            e->key = "Taxis";
            e->value = v;
            at[n->n_attr] = e;
        }
        n->attr = at;
        n->n_attr = na;
    }
    if (gather) { /* GatherV2(params, indices, axis = 0) */
        Dgtf__NodeDef *ax = ar_alloc(c->a, sizeof *ax);
        Dgtf__AttrValue *dt = ar_alloc(c->a, sizeof *dt);
        Dgtf__AttrValue *val = ar_alloc(c->a, sizeof *val);
        Dgtf__TensorProto *t = ar_alloc(c->a, sizeof *t);
        Dgtf__TensorShapeProto *sh = ar_alloc(c->a, sizeof *sh);
        int32_t *zero = ar_alloc(c->a, sizeof *zero);
        Dgtf__NodeDef__AttrEntry **at = ar_alloc(c->a, sizeof *at * 2);
        Dgtf__NodeDef__AttrEntry *e1 = ar_alloc(c->a, sizeof *e1);
        Dgtf__NodeDef__AttrEntry *e2 = ar_alloc(c->a, sizeof *e2);
        char **in = ar_alloc(c->a, sizeof *in * (n->n_input + 1));
        char *name = ar_printf(c->a, "%s/axis", n->name);
        if (!ax || !dt || !val || !t || !sh || !zero || !at || !e1 || !e2 ||
            !in || !name || n->n_input < 2)
            return n->n_input < 2
                       ? dg_err(c->err, DG_E_GRAPH, "node '%s': "
                                "ResourceGather needs 2 inputs", n->name)
                       : nomem(c);
        dgtf__node_def__init(ax);
        dgtf__attr_value__init(dt);
        dgtf__attr_value__init(val);
        dgtf__tensor_proto__init(t);
        dgtf__tensor_shape_proto__init(sh);
        dgtf__node_def__attr_entry__init(e1);
        dgtf__node_def__attr_entry__init(e2);
        dt->value_case = DGTF__ATTR_VALUE__VALUE_TYPE;
        dt->type = DGTF__DATA_TYPE__DT_INT32;
        t->dtype = DGTF__DATA_TYPE__DT_INT32;
        t->tensor_shape = sh;
        t->n_int_val = 1;
        t->int_val = zero;
        val->value_case = DGTF__ATTR_VALUE__VALUE_TENSOR;
        val->tensor = t;
        e1->key = "dtype";
        e1->value = dt;
        e2->key = "value";
        e2->value = val;
        at[0] = e1;
        at[1] = e2;
        ax->name = name;
        ax->op = "Const";
        ax->device = n->device;
        ax->attr = at;
        ax->n_attr = 2;
        dg_status st = emit(c, ax);
        if (st)
            return st;
        in[0] = n->input[0];
        in[1] = n->input[1];
        in[2] = name;
        for (size_t k = 2; k < n->n_input; k++) /* control inputs */
            in[k + 1] = n->input[k];
        n->input = in;
        n->n_input++;
    }
    return DG_OK;
}

/* ---- inlining ------------------------------------------------------------ */

/* The function node n calls, or NULL. */
static const char *callee(fnctx *c, const Dgtf__NodeDef *n)
{
    if (strcmp(n->op, "StatefulPartitionedCall") == 0 ||
        strcmp(n->op, "PartitionedCall") == 0) {
        int oom = 0;
        const char *f = dgc_fn_func_attr(c, n, "f", &oom);
        for (size_t k = 0; !f && k < n->n_attr; k++)
            if (strcmp(n->attr[k]->key, "f") == 0)
                return NULL; /* malformed (or nomem): not a call */
        return f ? f : "";
    }
    if (c->a->n_fn && dg_strmap_get(&c->a->fnames, n->op) >= 0)
        return n->op;
    return NULL;
}

/* A body's input `s` as a name of the inlined graph. */
static char *map_input(fnctx *c, const frame *f, const char *s)
{
    if (!f->fn)
        return (char *)s;
    const Dgtf__FunctionDef *fn = f->fn;
    if (s[0] == '^')
        return ar_printf(c->a, "^%s/%s", f->prefix, s + 1);
    const char *c1 = strchr(s, ':');
    if (!c1) {
        for (size_t i = 0; fn->signature && i < fn->signature->n_input_arg;
             i++)
            if (strcmp(fn->signature->input_arg[i]->name, s) == 0)
                return f->args[i];
        return ar_printf(c->a, "%s/%s", f->prefix, s);
    }
    const char *c2 = strchr(c1 + 1, ':');
    if (!c2)
        return ar_printf(c->a, "%s/%s", f->prefix, s);
    /* "node:out_arg:i" */
    char *node = ar_printf(c->a, "%.*s", (int)(c1 - s), s);
    char *arg = ar_printf(c->a, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
    if (!node || !arg)
        return NULL;
    int32_t j = dg_strmap_get(&f->body, node);
    int base = j >= 0 ? arg_base(fn->node_def[j]->op, arg) : 0;
    long k = strtol(c2 + 1, NULL, 10);
    if (k < 0 || k > 1000000)
        k = 0;
    return ar_printf(c->a, "%s/%s:%ld", f->prefix, node, base + k);
}

static dg_status inline_body(fnctx *c, const Dgtf__NodeDef *call,
                             const char *fname, const char *name,
                             char **in, size_t n_in, const char *device,
                             int depth, const char *frame_ctrl);

/* Node b of frame f (the top-level graph or a body): inlined when a call,
 * else a copy with its inputs mapped. */
static dg_status one_node(fnctx *c, const frame *f, const Dgtf__NodeDef *b,
                          const char *ictrl, const char *device, int depth)
{
    const char *full = f->fn ? ar_printf(c->a, "%s/%s", f->prefix, b->name)
                             : b->name;
    size_t n_in = b->n_input + (ictrl && b->n_input == 0);
    char **in = ar_alloc(c->a, sizeof *in * (n_in + 1));
    if (!full || !in)
        return nomem(c);
    for (size_t k = 0; k < b->n_input; k++)
        if (!(in[k] = map_input(c, f, b->input[k])))
            return nomem(c);
    if (n_in > b->n_input)
        in[b->n_input] = (char *)ictrl;
    const char *dev = b->device && b->device[0] ? b->device : device;
    if (strcmp(b->op, "While") == 0 || strcmp(b->op, "StatelessWhile") == 0)
        return dgc_fn_lower_while(c, b, full, in, n_in, dev ? dev : "",
                                  depth + 1);
    if (strcmp(b->op, "If") == 0 || strcmp(b->op, "StatelessIf") == 0)
        return dgc_fn_lower_if(c, b, full, in, n_in, dev ? dev : "",
                               depth + 1);
    const char *fname = callee(c, b);
    if (fname)
        return inline_body(c, b, fname, full, in, n_in, dev ? dev : "",
                           depth + 1, NULL);
    Dgtf__NodeDef *n = ar_alloc(c->a, sizeof *n);
    if (!n)
        return nomem(c);
    *n = *b;
    n->name = (char *)full;
    n->input = in;
    n->n_input = n_in;
    n->device = (char *)(dev ? dev : "");
    dg_status st = rename_resource(c, n);
    return st ? st : emit(c, n);
}

static dg_status noop(fnctx *c, const char *name, char **in, size_t n_in,
                      const char *device)
{
    Dgtf__NodeDef *n = ar_alloc(c->a, sizeof *n);
    if (!n)
        return nomem(c);
    dgtf__node_def__init(n);
    n->name = (char *)name;
    n->op = "NoOp";
    n->input = in;
    n->n_input = n_in;
    n->device = (char *)device;
    return emit(c, n);
}

static dg_status inline_body(fnctx *c, const Dgtf__NodeDef *call,
                             const char *fname, const char *name,
                             char **in, size_t n_in, const char *device,
                             int depth, const char *frame_ctrl)
{
    int32_t fi = fname[0] ? dg_strmap_get(&c->a->fnames, fname) : -1;
    if (fi < 0)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': calls function '%s', "
                      "which the graph's library does not have", call->name,
                      fname);
    if (depth > MAX_DEPTH)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': function calls nested "
                      "more than %d deep (recursion?) at '%s'", call->name,
                      MAX_DEPTH, fname);
    const Dgtf__FunctionDef *fn = c->a->fn[fi];
    size_t n_data = 0, n_ctrl = 0;
    for (size_t k = 0; k < n_in; k++) {
        if (in[k][0] == '^')
            n_ctrl++;
        else
            n_data++;
    }
    size_t n_args = fn->signature ? fn->signature->n_input_arg : 0;
    if (n_data != n_args)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': calls '%s' with %zu "
                      "inputs, but it takes %zu", call->name, fname, n_data,
                      n_args);
    frame f = {fn, name, NULL, {0}};
    char **args = ar_alloc(c->a, sizeof *args * (n_data + 1));
    char **ctrl = ar_alloc(c->a, sizeof *ctrl * (n_ctrl + 1));
    if (!args || !ctrl)
        return nomem(c);
    n_data = n_ctrl = 0;
    for (size_t k = 0; k < n_in; k++) {
        if (in[k][0] == '^')
            ctrl[n_ctrl++] = in[k];
        else
            args[n_data++] = in[k];
    }
    f.args = args;
    dg_status st = DG_OK;
    const char *ictrl = frame_ctrl; /* a loop's body: in its frame */
    if (n_ctrl && !ictrl) { /* the call's control inputs: before every body node */
        char *cn = ar_printf(c->a, "%s/input_control_node", name);
        if (!cn || !(ictrl = ar_printf(c->a, "^%s", cn)))
            return nomem(c);
        if ((st = noop(c, cn, ctrl, n_ctrl, device)))
            return st;
    }
    if (dg_strmap_init(&f.body, fn->n_node_def + 1))
        return nomem(c);
    for (size_t k = 0; k < fn->n_node_def; k++)
        if (dg_strmap_put(&f.body, fn->node_def[k]->name, (int32_t)k) < 0) {
            dg_strmap_free(&f.body);
            return nomem(c);
        }
    for (size_t k = 0; k < fn->n_node_def && !st; k++)
        st = one_node(c, &f, fn->node_def[k], ictrl, device, depth);
    /* the call's outputs: what the body returns */
    for (size_t k = 0; !st && fn->signature && k < fn->signature->n_output_arg;
         k++) {
        const char *arg = fn->signature->output_arg[k]->name;
        const char *ret = NULL;
        for (size_t r = 0; r < fn->n_ret && !ret; r++)
            if (strcmp(fn->ret[r]->key, arg) == 0)
                ret = fn->ret[r]->value;
        if (!ret) {
            st = dg_err(c->err, DG_E_GRAPH, "node '%s': function '%s' "
                        "returns nothing for its output '%s'", call->name,
                        fname, arg);
            break;
        }
        char *to = map_input(c, &f, ret);
        char *key = ar_printf(c->a, "%s:%zu", name, k);
        if (!to || !key) {
            st = nomem(c);
            break;
        }
        st = alias_put(c, key, to);
        if (!st && k == 0)
            st = alias_put(c, name, to);
    }
    /* "^call": after the body's control outputs (and its returned nodes) */
    size_t nc = fn->n_control_ret + (fn->signature ?
                                     fn->signature->n_output_arg : 0);
    char **oc = st ? NULL : ar_alloc(c->a, sizeof *oc * (nc + 1));
    char *ocn = st ? NULL : ar_printf(c->a, "%s/output_control_node", name);
    char *ockey = st ? NULL : ar_printf(c->a, "^%s", name);
    char *ocval = ocn ? ar_printf(c->a, "^%s", ocn) : NULL;
    if (!st && (!oc || !ocn || !ockey || !ocval))
        st = nomem(c);
    size_t n_oc = 0;
    for (size_t k = 0; !st && k < fn->n_control_ret; k++)
        if (!(oc[n_oc++] = ar_printf(c->a, "^%s/%s", name,
                                     fn->control_ret[k]->value)))
            st = nomem(c);
    if (!st)
        st = noop(c, ocn, oc, n_oc, device);
    if (!st)
        st = alias_put(c, ockey, ocval);
    dg_strmap_free(&f.body);
    return st;
}

/* ---- for load_cflow.c (load_fn_priv.h) ---------------------------------- */

void *dgc_fn_alloc(fnctx *c, size_t n)
{
    return ar_alloc(c->a, n);
}

char *dgc_fn_printf(fnctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = ar_vprintf(c->a, fmt, ap);
    va_end(ap);
    return s;
}

dg_status dgc_fn_emit(fnctx *c, Dgtf__NodeDef *n)
{
    return emit(c, n);
}

dg_status dgc_fn_alias(fnctx *c, const char *key, const char *val)
{
    return alias_put(c, key, val);
}

dg_status dgc_fn_nomem(fnctx *c)
{
    return nomem(c);
}

const char *dgc_fn_func_attr(fnctx *c, const Dgtf__NodeDef *n,
                             const char *key, int *oom)
{
    *oom = 0;
    for (size_t k = 0; k < n->n_attr; k++) {
        const Dgtf__AttrValue *v = n->attr[k]->value;
        if (strcmp(n->attr[k]->key, key) != 0 || !v ||
            v->value_case != DGTF__ATTR_VALUE__VALUE_FUNC)
            continue;
        fn_oom = 0;
        Dgtf__NameAttrList *l = dgtf__name_attr_list__unpack(
            &fn_allocator, v->func.len, v->func.data);
        *oom = fn_oom;
        if (!l)
            return NULL;
        char *name = ar_printf(c->a, "%s", l->name ? l->name : "");
        dgtf__name_attr_list__free_unpacked(l, &fn_allocator);
        *oom = !name;
        return name;
    }
    return NULL;
}

const Dgtf__FunctionDef *dgc_fn_find(fnctx *c, const char *fname)
{
    int32_t fi = fname[0] ? dg_strmap_get(&c->a->fnames, fname) : -1;
    return fi < 0 ? NULL : c->a->fn[fi];
}

dg_status dgc_fn_inline_body(fnctx *c, const Dgtf__NodeDef *call,
                             const char *fname, const char *name, char **in,
                             size_t n_in, const char *device, int depth,
                             const char *frame_ctrl)
{
    return inline_body(c, call, fname, name, in, n_in, device, depth,
                       frame_ctrl);
}

/* ---- entry points -------------------------------------------------------- */

const char *dgc_fn_resolve(const dgc_fn_graph *f, const char *t)
{
    if (!f->arena)
        return t;
    for (int hop = 0; hop < 4 * MAX_DEPTH; hop++) {
        int32_t i = dg_strmap_get(&f->arena->amap, t);
        if (i < 0)
            break;
        t = f->arena->aval[i];
    }
    return t;
}

/* "^a", "a:1" -> "a" (into the arena) */
static const char *base_name(fnctx *c, const char *s)
{
    if (s[0] == '^')
        s++;
    const char *col = strrchr(s, ':');
    return col ? ar_printf(c->a, "%.*s", (int)(col - s), s) : s;
}

/* Keep only what the roots depend on. */
static dg_status prune(fnctx *c, const char *const *roots, int n_roots)
{
    dgc_fn_graph *o = c->out;
    dg_strmap idx;
    char *keep = dg_calloc(o->n_node + 1, 1);
    int32_t *stack = dg_malloc(sizeof *stack * (o->n_node + 1));
    if (!keep || !stack || dg_strmap_init(&idx, o->n_node + 1)) {
        dg_free(keep);
        dg_free(stack);
        return nomem(c);
    }
    dg_status st = DG_OK;
    for (size_t i = 0; i < o->n_node && !st; i++)
        if (dg_strmap_put(&idx, o->node[i]->name, (int32_t)i) < 0)
            st = nomem(c);
    size_t sp = 0;
    for (int r = 0; r < n_roots && !st; r++) {
        const char *b = base_name(c, dgc_fn_resolve(o, roots[r]));
        int32_t j = b ? dg_strmap_get(&idx, b) : -1;
        if (!b)
            st = nomem(c);
        else if (j >= 0 && !keep[j]) {
            keep[j] = 1;
            stack[sp++] = j;
        }
    }
    while (sp > 0 && !st) {
        const Dgtf__NodeDef *n = o->node[stack[--sp]];
        for (size_t k = 0; k < n->n_input && !st; k++) {
            const char *b = base_name(c, n->input[k]);
            int32_t j = b ? dg_strmap_get(&idx, b) : -1;
            if (!b)
                st = nomem(c);
            else if (j >= 0 && !keep[j]) {
                keep[j] = 1;
                stack[sp++] = j;
            }
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < o->n_node && !st; i++)
        if (keep[i])
            o->node[w++] = o->node[i];
    if (!st)
        o->n_node = w;
    dg_strmap_free(&idx);
    dg_free(keep);
    dg_free(stack);
    return st;
}

dg_status dgc_fn_inline(const Dgtf__GraphDef *gd, const char *const *roots,
                        int n_roots, dgc_fn_graph *out, dg_error *err)
{
    memset(out, 0, sizeof *out);
    dgc_fn_arena *a = dg_calloc(1, sizeof *a);
    if (!a)
        return dg_err_nomem(err, "inlining TF 2 functions");
    out->arena = a;
    fnctx c = {out, a, 0, err};
    size_t nf = gd->library ? gd->library->n_function : 0;
    if (dg_strmap_init(&a->fnames, nf + 1) || dg_strmap_init(&a->amap, 64) ||
        !(a->fn = dg_calloc(nf + 1, sizeof *a->fn)))
        return nomem(&c);
    for (size_t i = 0; i < nf; i++) {
        const ProtobufCBinaryData *d = &gd->library->function[i];
        fn_oom = 0;
        Dgtf__FunctionDef *f = dgtf__function_def__unpack(&fn_allocator,
                                                          d->len, d->data);
        if (!f)
            return fn_oom ? nomem(&c)
                          : dg_err(err, DG_E_GRAPH, "library function %zu: "
                                   "not a FunctionDef (malformed protobuf)",
                                   i);
        a->fn[a->n_fn++] = f;
        if (!f->signature || !f->signature->name || !f->signature->name[0])
            return dg_err(err, DG_E_GRAPH, "library function %zu has no "
                          "name", i);
        if (dg_strmap_put(&a->fnames, f->signature->name, (int32_t)i) < 0)
            return nomem(&c);
    }
    frame top = {NULL, "", NULL, {0}};
    dg_status st = DG_OK;
    for (size_t i = 0; i < gd->n_node && !st; i++)
        st = one_node(&c, &top, gd->node[i], NULL, NULL, 0);
    /* rewrite what named calls */
    for (size_t i = 0; i < out->n_node && !st; i++) {
        Dgtf__NodeDef *n = out->node[i];
        for (size_t k = 0; k < n->n_input; k++)
            n->input[k] = (char *)dgc_fn_resolve(out, n->input[k]);
    }
    /* TensorLists as TensorArrays (load_cflow.c) */
    if (!st)
        st = dgc_fn_lists(&c);
    if (!st && n_roots > 0)
        st = prune(&c, roots, n_roots);
    return st;
}

void dgc_fn_free(dgc_fn_graph *f)
{
    dgc_fn_arena *a = f->arena;
    if (a) {
        for (blk *b = a->head; b;) {
            blk *nx = b->next;
            dg_free(b);
            b = nx;
        }
        for (size_t i = 0; i < a->n_fn; i++)
            dgtf__function_def__free_unpacked(a->fn[i], &fn_allocator);
        dg_free(a->fn);
        dg_strmap_free(&a->fnames);
        dg_strmap_free(&a->amap);
        dg_free(a->aval);
        dg_free(a);
    }
    dg_free(f->node);
    memset(f, 0, sizeof *f);
}
