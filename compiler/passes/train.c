/*
 * train.c -- the training pass (SPEC 2, "train"): differentiate the loss
 * with respect to the trainable Variables ("train/<var>"), then add TF1-style
 * optimizer state and one update op per Variable (ApplyGradientDescent,
 * ApplyMomentum with a "<var>/Momentum" slot, or ApplyAdam with
 * "<var>/Adam", "<var>/Adam_1" slots and shared beta1_power/beta2_power),
 * a global_step counter, and the train op "train/step": a NoOp with control
 * inputs on every update and on the update_ops collection.
 */
#include "grad.h"
#include "program.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>

/* Name `base` made unique with _1, _2, ... */
static void unique(const dgc_graph *g, const char *base, char *buf, size_t sz)
{
    snprintf(buf, sz, "%s", base);
    size_t len = strlen(buf);
    for (int k = 1; dgc_graph_find(g, buf) >= 0; k++)
        snprintf(buf + len, sz - len, "_%d", k);
}

/* A generated node (not typed yet); -1 with err on failure. */
static int32_t add(dgc_graph *g, const char *base, const char *op,
                   const dgc_ref *in, int n_in, dg_error *err)
{
    char name[1024];
    unique(g, base, name, sizeof name);
    int32_t id = dgc_graph_add_node(g, name, dgc_op_find(op), err);
    if (id < 0)
        return -1;
    for (int i = 0; i < n_in; i++)
        if (dgc_node_add_input(g, id, in[i])) {
            dg_err_nomem(err, "training pass");
            return -1;
        }
    g->nodes[id].flags |= DGC_NODE_GENERATED;
    return id;
}

static dg_status infer(dgc_graph *g, int32_t id, dg_error *err)
{
    return dgc_infer_node(g, id, err);
}

static dg_tensor *scalar(dg_dtype t, double v)
{
    dg_shape s;
    memset(&s, 0, sizeof s);
    dg_tensor *x = dg_tensor_new(t, &s);
    if (!x)
        return NULL;
    switch (t) {
    case DG_F32: *(float *)x->data = (float)v; break;
    case DG_F64: *(double *)x->data = v; break;
    case DG_I32: *(int32_t *)x->data = (int32_t)v; break;
    case DG_I64: *(int64_t *)x->data = (int64_t)v; break;
    default: *(uint8_t *)x->data = v != 0; break;
    }
    return x;
}

static int32_t add_const(dgc_graph *g, const char *base, dg_dtype t, double v,
                         dg_error *err)
{
    dg_tensor *x = scalar(t, v);
    if (!x) {
        dg_err_nomem(err, "training constant");
        return -1;
    }
    int32_t id = add(g, base, "Const", NULL, 0, err);
    if (id < 0) {
        dg_tensor_free(x);
        return -1;
    }
    if (dgc_node_set_tensor(&g->nodes[id], "value", x) ||
        dgc_node_set_dtype(&g->nodes[id], "dtype", t)) {
        dg_err_nomem(err, "training constant");
        return -1;
    }
    return infer(g, id, err) == DG_OK ? id : -1;
}

/* A non-trainable Variable initialised to zeros (value < 0 sentinel not
 * used) or to the scalar `value` when has_value. */
static int32_t add_variable(dgc_graph *g, const char *base, dg_dtype t,
                            const dg_shape *shape, int has_value, double value,
                            int32_t coloc, const char *device, dg_error *err)
{
    int32_t id = add(g, base, "Variable", NULL, 0, err);
    if (id < 0)
        return -1;
    dgc_node *n = &g->nodes[id];
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = (char *)"init";
    a.kind = DGC_A_INIT;
    if (has_value) {
        a.init.kind = DGC_INIT_VALUE;
        a.init.value = scalar(t, value);
        if (!a.init.value)
            return dg_err_nomem(err, "training variable"), -1;
    } else {
        a.init.kind = DGC_INIT_ZEROS;
    }
    /* a.init.value is moved into the node only when set_attr succeeds */
    if (dgc_node_set_dtype(n, "dtype", t) || dgc_node_set_shape(n, "shape", shape) ||
        dgc_node_set_attr(n, &a)) {
        dg_tensor_free(a.init.value);
        dg_err_nomem(err, "training variable");
        return -1;
    }
    if (dgc_node_set_bool(n, "trainable", 0)) {
        dg_err_nomem(err, "training variable");
        return -1;
    }
    if (coloc >= 0) {
        n->coloc = dg_malloc(sizeof *n->coloc);
        if (!n->coloc)
            return dg_err_nomem(err, "training variable"), -1;
        n->coloc[0] = coloc;
        n->n_coloc = 1;
    }
    if (device && !(n->device = dg_strdup(device)))
        return dg_err_nomem(err, "training variable"), -1;
    return infer(g, id, err) == DG_OK ? id : -1;
}

static int is_float(dg_dtype t)
{
    return t == DG_F32 || t == DG_F64;
}

/* Collect the Variables to train into *vars. */
static dg_status var_list(dgc_graph *g, int32_t **vars, int *n_vars,
                          dg_error *err)
{
    const dgc_train *t = &g->train;
    int vop = DGC_OPID_Variable;
    int cap = t->n_var_list >= 0 ? t->n_var_list : g->n_nodes;
    int32_t *v = dg_malloc(sizeof *v * (size_t)(cap + 1));
    if (!v)
        return dg_err_nomem(err, "training pass");
    int n = 0;
    if (t->n_var_list >= 0) {
        for (int i = 0; i < t->n_var_list; i++) {
            int32_t id = dgc_graph_find(g, t->var_list[i]);
            if (id < 0 || g->nodes[id].op != vop) {
                dg_free(v);
                if (id < 0)
                    return dg_err(err, DG_E_GRAPH,
                                  "node '%s': train.var_list names a node "
                                  "that does not exist", t->var_list[i]);
                return dg_err(err, DG_E_GRAPH,
                              "node '%s': train.var_list entry is not a "
                              "Variable (op '%s')", t->var_list[i],
                              dgc_op_name(g->nodes[id].op));
            }
            if (!is_float(g->nodes[id].outputs[0].dtype)) {
                dg_free(v);
                return dg_err(err, DG_E_GRAPH,
                              "node '%s': cannot train a Variable of dtype %s",
                              t->var_list[i],
                              dg_dtype_name(g->nodes[id].outputs[0].dtype));
            }
            v[n++] = id;
        }
    } else {
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const dgc_node *nd = &g->nodes[i];
            if (nd->op == vop && dgc_attr_bool(nd, "trainable", 1) &&
                nd->n_outputs > 0 && is_float(nd->outputs[0].dtype))
                v[n++] = i;
        }
    }
    *vars = v;
    *n_vars = n;
    return DG_OK;
}

typedef struct tstate {
    dgc_graph *g;
    dg_error *err;
    int32_t *updates; int n_updates;
} tstate;

#define FAIL(st) ((st)->err->code != DG_OK ? (st)->err->code : DG_E_GRAPH)

static int32_t scal_const(tstate *s, const char *vname, const char *what,
                          dg_dtype t, double v)
{
    char base[1024];
    snprintf(base, sizeof base, "train/update_%s/%s", vname, what);
    return add_const(s->g, base, t, v, s->err);
}

/* Cast a scalar ref to dtype t if needed. */
static dgc_ref cast_to(tstate *s, const char *vname, dgc_ref r, dg_dtype t)
{
    if (s->g->nodes[r.node].outputs[r.index].dtype == t)
        return r;
    char base[1024];
    snprintf(base, sizeof base, "train/update_%s/Cast", vname);
    dgc_ref o = {add(s->g, base, "Cast", &r, 1, s->err), 0};
    if (o.node < 0 || dgc_node_set_dtype(&s->g->nodes[o.node], "dtype", t) ||
        infer(s->g, o.node, s->err) != DG_OK)
        o.node = -1;
    return o;
}

static dg_status add_update(tstate *s, int32_t var, int32_t grad,
                            int32_t b1p, int32_t b2p)
{
    dgc_graph *g = s->g;
    const dgc_optimizer *o = &g->train.opt;
    char vname[900], base[1024];
    snprintf(vname, sizeof vname, "%s", g->nodes[var].name);
    dg_dtype t = g->nodes[var].outputs[0].dtype;
    dg_shape shape = g->nodes[var].outputs[0].shape;
    dgc_ref V = {var, 0}, G = {grad, 0};
    int32_t lr = scal_const(s, vname, "learning_rate", t, o->learning_rate);
    if (lr < 0)
        return FAIL(s);
    dgc_ref LR = {lr, 0};
    int32_t up;
    if (o->kind == DGC_OPT_SGD) {
        snprintf(base, sizeof base, "train/update_%s/ApplyGradientDescent", vname);
        up = add(g, base, "ApplyGradientDescent", (const dgc_ref[]){V, LR, G}, 3,
                 s->err);
    } else if (o->kind == DGC_OPT_MOMENTUM) {
        snprintf(base, sizeof base, "%s/Momentum", vname);
        int32_t acc = add_variable(g, base, t, &shape, 0, 0, var, NULL, s->err);
        int32_t mom = scal_const(s, vname, "momentum", t, o->momentum);
        if (acc < 0 || mom < 0)
            return FAIL(s);
        snprintf(base, sizeof base, "train/update_%s/ApplyMomentum", vname);
        up = add(g, base, "ApplyMomentum",
                 (const dgc_ref[]){V, {acc, 0}, LR, G, {mom, 0}}, 5, s->err);
        if (up >= 0 && o->use_nesterov &&
            dgc_node_set_bool(&g->nodes[up], "use_nesterov", 1))
            return dg_err_nomem(s->err, "training pass");
    } else {
        snprintf(base, sizeof base, "%s/Adam", vname);
        int32_t m = add_variable(g, base, t, &shape, 0, 0, var, NULL, s->err);
        if (m < 0)
            return FAIL(s);
        snprintf(base, sizeof base, "%s/Adam_1", vname);
        int32_t v = add_variable(g, base, t, &shape, 0, 0, var, NULL, s->err);
        int32_t b1 = scal_const(s, vname, "beta1", t, o->beta1);
        int32_t b2 = scal_const(s, vname, "beta2", t, o->beta2);
        int32_t ep = scal_const(s, vname, "epsilon", t, o->epsilon);
        if (v < 0 || b1 < 0 || b2 < 0 || ep < 0)
            return FAIL(s);
        dgc_ref B1P = cast_to(s, vname, (dgc_ref){b1p, 0}, t);
        dgc_ref B2P = cast_to(s, vname, (dgc_ref){b2p, 0}, t);
        if (B1P.node < 0 || B2P.node < 0)
            return FAIL(s);
        snprintf(base, sizeof base, "train/update_%s/ApplyAdam", vname);
        up = add(g, base, "ApplyAdam",
                 (const dgc_ref[]){V, {m, 0}, {v, 0}, B1P, B2P, LR, {b1, 0},
                                   {b2, 0}, {ep, 0}, G},
                 10, s->err);
    }
    if (up < 0 || infer(g, up, s->err) != DG_OK)
        return FAIL(s);
    s->updates[s->n_updates++] = up;
    return DG_OK;
}

/* Make node id colocated with node with (colocate_with); 0 ok, -1 nomem. */
static int colocate(dgc_graph *g, int32_t id, int32_t with)
{
    dgc_node *n = &g->nodes[id];
    int32_t *c = dg_realloc(n->coloc, sizeof *c * (size_t)(n->n_coloc + 1));
    if (!c)
        return -1;
    c[n->n_coloc++] = with;
    n->coloc = c;
    return 0;
}

/* beta_power := beta_power * beta, after every ApplyAdam.  As TF1 builds it
 * under colocate_with(beta_power), the update stays with the power
 * variable (no round trip to another device every step). */
static int32_t power_update(tstate *s, int32_t pw, int n_adam, double beta)
{
    dgc_graph *g = s->g;
    char base[1024];
    dg_dtype t = g->nodes[pw].outputs[0].dtype;
    snprintf(base, sizeof base, "train/%s/beta", g->nodes[pw].name);
    int32_t b = add_const(g, base, t, beta, s->err);
    if (b < 0)
        return -1;
    snprintf(base, sizeof base, "train/%s/Mul", g->nodes[pw].name);
    int32_t mul = add(g, base, "Mul", (const dgc_ref[]){{pw, 0}, {b, 0}}, 2,
                      s->err);
    if (mul < 0)
        return -1;
    if (colocate(g, b, pw) || colocate(g, mul, pw))
        return dg_err_nomem(s->err, "training pass"), -1;
    for (int i = 0; i < n_adam; i++)
        if (dgc_node_add_ctrl(g, mul, s->updates[i]))
            return dg_err_nomem(s->err, "training pass"), -1;
    if (infer(g, mul, s->err) != DG_OK)
        return -1;
    snprintf(base, sizeof base, "train/%s/Assign", g->nodes[pw].name);
    int32_t as = add(g, base, "Assign", (const dgc_ref[]){{pw, 0}, {mul, 0}}, 2,
                     s->err);
    if (as < 0 || infer(g, as, s->err) != DG_OK)
        return -1;
    return as;
}

/* Order each update after every reader of its Variable in the step.  A
 * Variable is read when its consumer runs (SPEC 4.6), so without these
 * control edges an Apply* could change `var` while a gradient op (e.g. the
 * MatMul gradient that reads the next layer's weights) or a forward op of
 * the loss still has to read it, and training would depend on thread timing.
 * Readers: the loss's ancestors among the graph's own nodes (< first_gen)
 * and the gradient ops generated for training ([first_gen, end_gen)). */
static dg_status gate_updates(dgc_graph *g, int32_t loss, const int32_t *vars,
                              const int32_t *updates, int nv,
                              int32_t first_gen, int32_t end_gen,
                              dg_error *err)
{
    int32_t n = g->n_nodes;
    int32_t *slot = dg_calloc((size_t)n, sizeof *slot);  /* var -> j+1 */
    char *in_step = dg_calloc((size_t)n, 1);
    int32_t *stack = dg_malloc(sizeof *stack * (size_t)n);
    dgc_gloops *loops = NULL;
    dg_status st = DG_OK;
    if (!slot || !in_step || !stack) {
        st = dg_err_nomem(err, "training pass");
        goto done;
    }
    for (int j = 0; j < nv; j++)
        slot[vars[j]] = j + 1;
    /* ancestors of the loss (data and control edges) */
    int sp = 0;
    stack[sp++] = loss;
    in_step[loss] = 1;
    while (sp > 0) {
        const dgc_node *nd = &g->nodes[stack[--sp]];
        for (int k = 0; k < nd->n_inputs + nd->n_ctrl; k++) {
            int32_t a = k < nd->n_inputs ? nd->inputs[k].node
                                         : nd->ctrl[k - nd->n_inputs];
            if (a >= 0 && a < n && !in_step[a]) {
                in_step[a] = 1;
                stack[sp++] = a;
            }
        }
    }
    for (int32_t i = first_gen; i < end_gen && i < n; i++)
        in_step[i] = 1;
    for (int32_t i = 0; i < n; i++) {
        if (!in_step[i])
            continue;
        const dgc_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_inputs; k++) {
            int32_t v = nd->inputs[k].node;
            if (v < 0 || v >= n || !slot[v] || v == i)
                continue;
            /* a while loop reads the Variable through an Enter, in every
             * iteration: the update waits for the loop's Exits
             * (grad_loop.c) */
            const int32_t *after = &i;
            int n_after = 1;
            if (nd->op == DGC_OPID_Enter) {
                if (!loops &&
                    (st = dgc_gloops_find(g, n, &loops, err)) != DG_OK)
                    goto done;
                int L = loops ? dgc_gloops_of(loops, i) : -1;
                if (L >= 0)
                    n_after = dgc_gloops_exits(loops, L, &after);
            }
            int32_t up = updates[slot[v] - 1];
            for (int a = 0; a < n_after; a++) {
                const dgc_node *un = &g->nodes[up];
                int dup = 0;
                for (int c = 0; c < un->n_ctrl && !dup; c++)
                    dup = un->ctrl[c] == after[a];
                if (!dup && dgc_node_add_ctrl(g, up, after[a])) {
                    st = dg_err_nomem(err, "training pass");
                    goto done;
                }
            }
        }
    }
done:
    dgc_gloops_free(loops);
    dg_free(slot);
    dg_free(in_step);
    dg_free(stack);
    return st;
}

/* issue 24: the graph's own train op (a MetaGraphDef's `train_op`
 * collection): nothing is generated; the loop runs that op, fetches the
 * loss (the `losses` collection's first, when there is one) and the
 * checkpoint's step is the graph's global_step. */
static dg_status given_train_op(dgc_graph *g, dg_error *err)
{
    dgc_train *t = &g->train;
    int32_t op = dgc_graph_find(g, t->given_train_op);
    if (op < 0)
        return dg_err(err, DG_E_GRAPH, "node '%s': the train_op collection "
                      "names a node that does not exist", t->given_train_op);
    if (t->loss) {
        dgc_ref r;
        if (dgc_graph_parse_ref(g, t->loss, &r) < 0 || r.node < 0)
            return dg_err(err, DG_E_GRAPH, "node '%s': the losses collection "
                          "names a node that does not exist", t->loss);
        const dgc_node *ln = &g->nodes[r.node];
        if (r.index >= ln->n_outputs || !is_float(ln->outputs[r.index].dtype))
            return dg_err(err, DG_E_GRAPH, "node '%s': the loss must be a "
                          "float tensor", ln->name);
        t->loss_node = r.node;
    }
    if (t->given_global_step)
        t->global_step = dgc_graph_find(g, t->given_global_step);
    t->train_op = op;
    t->update_begin = g->n_nodes;
    return DG_OK;
}

dg_status dgc_pass_train(dgc_graph *g, int colocate_override, dg_error *err)
{
    dgc_train *t = &g->train;
    t->train_op = -1;
    t->update_begin = -1;
    t->loss_node = -1;
    t->global_step = -1;
    if (!t->present)
        return DG_OK;
    err->code = DG_OK;
    if (t->given_train_op)
        return given_train_op(g, err);
    int32_t loss = t->loss ? dgc_graph_find(g, t->loss) : -1;
    if (loss < 0)
        return dg_err(err, DG_E_GRAPH, "node '%s': train.loss names a node "
                      "that does not exist", t->loss ? t->loss : "");
    dg_status pst = dgc_pending_check_deps(g, &loss, 1, "train", err);
    if (pst != DG_OK)
        return pst;
    const dgc_node *ln = &g->nodes[loss];
    if (ln->n_outputs < 1)
        return dg_err(err, DG_E_GRAPH, "node '%s': the loss has no output",
                      ln->name);
    const dg_shape *ls = &ln->outputs[0].shape;
    for (int i = 0; i < ls->rank; i++)
        if (ls->dims[i] != 1)
            return dg_err(err, DG_E_GRAPH, "node '%s': the loss must be a "
                          "scalar, but has rank %d", ln->name, ls->rank);
    if (!is_float(ln->outputs[0].dtype))
        return dg_err(err, DG_E_GRAPH, "node '%s': the loss must be float, "
                      "not %s", ln->name, dg_dtype_name(ln->outputs[0].dtype));
    t->loss_node = loss;

    int32_t *vars = NULL;
    int nv = 0;
    dg_status st = var_list(g, &vars, &nv, err);
    if (st != DG_OK)
        return st;
    tstate s = {g, err, NULL, 0};
    int32_t *grads = dg_malloc(sizeof *grads * (size_t)(nv + 1));
    s.updates = dg_malloc(sizeof *s.updates * (size_t)(nv + 1));
    if (!grads || !s.updates) {
        st = dg_err_nomem(err, "training pass");
        goto done;
    }
    if (nv == 0) {
        st = dg_err(err, DG_E_GRAPH, "node '%s': no trainable Variables to "
                    "minimize the loss over", ln->name);
        goto done;
    }
    int coloc = colocate_override >= 0 ? colocate_override
                                       : (t->colocate_gradients > 0 ? 1 : 0);
    int32_t first_gen = g->n_nodes;
    st = dgc_grad_build(g, "train", &loss, 1, NULL, 0, vars, nv, coloc, grads,
                        err);
    if (st != DG_OK)
        goto done;
    int32_t end_gen = g->n_nodes;
    t->update_begin = end_gen;
    int zl = DGC_OPID_ZerosLike, any = 0;
    for (int i = 0; i < nv; i++)
        any |= g->nodes[grads[i]].op != zl;
    if (!any) {
        st = dg_err(err, DG_E_GRAPH, "node '%s': the loss does not depend on "
                    "any trainable Variable", g->nodes[loss].name);
        goto done;
    }

    /* Adam's shared beta powers (TF1: colocated with the first variable) */
    int32_t b1p = -1, b2p = -1;
    if (t->opt.kind == DGC_OPT_ADAM) {
        dg_dtype dt = g->nodes[vars[0]].outputs[0].dtype;
        dg_shape sc;
        memset(&sc, 0, sizeof sc);
        b1p = add_variable(g, "beta1_power", dt, &sc, 1, t->opt.beta1, vars[0],
                           NULL, err);
        b2p = b1p < 0 ? -1 : add_variable(g, "beta2_power", dt, &sc, 1,
                                          t->opt.beta2, vars[0], NULL, err);
        if (b2p < 0) {
            st = FAIL(&s);
            goto done;
        }
    }
    for (int i = 0; i < nv; i++)
        if ((st = add_update(&s, vars[i], grads[i], b1p, b2p)) != DG_OK)
            goto done;
    int n_apply = s.n_updates;
    st = gate_updates(g, loss, vars, s.updates, nv, first_gen, end_gen, err);
    if (st != DG_OK)
        goto done;

    int32_t extra[3];
    int n_extra = 0;
    if (t->opt.kind == DGC_OPT_ADAM) {
        int32_t a1 = power_update(&s, b1p, n_apply, t->opt.beta1);
        int32_t a2 = a1 < 0 ? -1 : power_update(&s, b2p, n_apply, t->opt.beta2);
        if (a2 < 0) {
            st = FAIL(&s);
            goto done;
        }
        extra[n_extra++] = a1;
        extra[n_extra++] = a2;
    }

    /* global step, incremented after the updates */
    dg_shape sc;
    memset(&sc, 0, sizeof sc);
    int32_t gs = add_variable(g, "global_step", DG_I64, &sc, 0, 0, -1,
                              "/cpu:0", err);
    int32_t one = gs < 0 ? -1 : add_const(g, "train/global_step/one", DG_I64, 1, err);
    int32_t inc = one < 0 ? -1 : add(g, "train/global_step/AssignAdd", "AssignAdd",
                                     (const dgc_ref[]){{gs, 0}, {one, 0}}, 2, err);
    if (inc < 0) {
        st = FAIL(&s);
        goto done;
    }
    for (int i = 0; i < n_apply; i++)
        if (dgc_node_add_ctrl(g, inc, s.updates[i])) {
            st = dg_err_nomem(err, "training pass");
            goto done;
        }
    if ((st = infer(g, inc, err)) != DG_OK)
        goto done;
    extra[n_extra++] = inc;
    t->global_step = gs;

    /* the train op */
    int32_t op = add(g, "train/step", "NoOp", NULL, 0, err);
    if (op < 0) {
        st = FAIL(&s);
        goto done;
    }
    for (int i = 0; i < n_apply; i++)
        if (dgc_node_add_ctrl(g, op, s.updates[i]))
            st = dg_err_nomem(err, "training pass");
    for (int i = 0; i < n_extra; i++)
        if (dgc_node_add_ctrl(g, op, extra[i]))
            st = dg_err_nomem(err, "training pass");
    if (st != DG_OK)
        goto done;
    if (t->update_ops) {
        const dgc_collection *col = NULL;
        for (int i = 0; i < g->n_collections; i++)
            if (strcmp(g->collections[i].name, t->update_ops) == 0)
                col = &g->collections[i];
        if (!col) {
            st = dg_err(err, DG_E_GRAPH, "train.update_ops: no collection "
                        "named '%s'", t->update_ops);
            goto done;
        }
        for (int i = 0; i < col->n_nodes; i++)
            if (dgc_node_add_ctrl(g, op, col->nodes[i])) {
                st = dg_err_nomem(err, "training pass");
                goto done;
            }
    }
    if ((st = infer(g, op, err)) != DG_OK)
        goto done;
    t->train_op = op;
done:
    dg_free(vars);
    dg_free(grads);
    dg_free(s.updates);
    return st;
}
