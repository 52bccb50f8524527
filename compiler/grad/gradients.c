/*
 * gradients.c -- the gradient pass: reverse-mode differentiation of each
 * `gradients` entry of the graph file (SPEC 2, 4.8): the backward sweep
 * (dgc_grad_build), which the training pass (passes/train.c) also runs.
 * Nodes are made by grad_node.c.
 *
 * Only nodes on a data path from an x to a y get gradient nodes.  Several
 * contributions to one tensor are summed with AddN.  The gradient for x is
 * the node "<set>/<x>"; all other generated nodes are "<set>/<fwd>/...".
 */
#include "grad.h"
#include "pending.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>

/* ---- contributions ------------------------------------------------------- */

#define MAX_OUT 4

typedef struct contrib {
    dgc_ref ref;
    int next;
} contrib;

struct gstate {
    dgc_gctx c;
    int32_t n;          /* nodes considered (existing before the call) */
    const uint8_t *mark; /* per node: 1 fwd, 2 bwd, 4 x, 8 seen */
    dgc_gloops *loops;  /* NULL: no loops */
    int *head;          /* [n * MAX_OUT] -> first contrib, -1 */
    int *count;         /* [n * MAX_OUT] */
    contrib *pool;
    int32_t n_pool, cap_pool;
};
typedef struct gstate gstate;

static int add_contrib(gstate *s, int32_t node, int out, dgc_ref r)
{
    if (out >= MAX_OUT)
        return 0;
    if (s->n_pool == s->cap_pool) {
        contrib *p = dg_grow(s->pool, &s->cap_pool, s->n_pool + 1, sizeof *p,
                             64);
        if (!p)
            return -1;
        s->pool = p;
    }
    size_t k = (size_t)node * MAX_OUT + (size_t)out;
    s->pool[s->n_pool].ref = r;
    s->pool[s->n_pool].next = s->head[k];
    s->head[k] = s->n_pool++;
    s->count[k]++;
    return 0;
}

/* Gather the contributions to (node, out) in creation order into refs. */
static int gather(gstate *s, int32_t node, int out, dgc_ref **refs)
{
    size_t k = (size_t)node * MAX_OUT + (size_t)out;
    int m = s->count[k];
    if (m == 0)
        return 0;
    dgc_ref *r = dg_malloc(sizeof *r * (size_t)m);
    if (!r)
        return -1;
    int i = m;
    for (int e = s->head[k]; e >= 0; e = s->pool[e].next)
        r[--i] = s->pool[e].ref;
    *refs = r;
    return m;
}

/* Aggregate the gradient of (node, out): none, the single contribution, or
 * an AddN.  For an x (final_name != NULL) the result is always a node of
 * that name (Identity of one contribution). */
static dg_status aggregate(gstate *s, int32_t node, int out,
                           const char *final_name, dgc_ref *dy)
{
    dy->node = -1;
    dy->index = 0;
    dgc_ref *refs = NULL;
    int m = gather(s, node, out, &refs);
    if (m < 0)
        return dg_err_nomem(s->c.err, "gradient aggregation");
    if (m == 0)
        return DG_OK;
    int32_t id;
    if (final_name) {
        int op = dgc_op_find(m == 1 ? "Identity" : "AddN");
        id = dgc_grad_node_named(&s->c, node, final_name, op, refs, m);
        if (id >= 0 && dgc_infer_node(s->c.g, id, s->c.err) != DG_OK)
            id = -1;
    } else if (m == 1) {
        *dy = refs[0];
        dg_free(refs);
        return DG_OK;
    } else {
        id = dgc_grad_node(&s->c, node, "AddN", DGC_OPID_AddN, refs, m);
    }
    dg_free(refs);
    if (id < 0)
        return s->c.err->code ? s->c.err->code : DG_E_GRAPH;
    dy->node = id;
    return DG_OK;
}

static int is_float_ref(const dgc_graph *g, dgc_ref r)
{
    const dgc_node *p = &g->nodes[r.node];
    if (r.index >= p->n_outputs)
        return 0;
    dg_dtype t = p->outputs[r.index].dtype;
    return t == DG_F32 || t == DG_F64;
}

/* ---- one node of the sweep ---------------------------------------------- */

#define ON(v) ((s->mark[v] & 3) == 3)

dgc_gctx *dgc_gsweep_ctx(dgc_gsweep *s)
{
    return &s->c;
}

int dgc_gsweep_on(const dgc_gsweep *s, int32_t v)
{
    return v >= 0 && v < s->n && ON(v);
}

dg_status dgc_gsweep_add(dgc_gsweep *s, dgc_ref at, dgc_ref grad)
{
    if (grad.node < 0 || !dgc_gsweep_on(s, at.node) ||
        !is_float_ref(s->c.g, at))
        return DG_OK;
    if (add_contrib(s, at.node, at.index, grad))
        return dg_err_nomem(s->c.err, "gradients");
    return DG_OK;
}

dg_status dgc_gsweep_sum(dgc_gsweep *s, dgc_ref at, dgc_ref *dy)
{
    return aggregate(s, at.node, at.index, NULL, dy);
}

/* The rule of node v on its aggregated output gradients; for an x
 * (final != NULL) output 0's gradient is the node named final. */
static dg_status sweep_node(gstate *s, int32_t v, const char *final)
{
    dgc_graph *g = s->c.g;
    dg_error *err = s->c.err;
    dg_status st;
    int n_out = g->nodes[v].n_outputs;
    if (n_out > MAX_OUT)
        n_out = MAX_OUT;
    dgc_ref dy[MAX_OUT];
    int any = 0;
    for (int k = 0; k < n_out; k++) {
        if ((st = aggregate(s, v, k, k == 0 ? final : NULL, &dy[k])) != DG_OK)
            return st;
        any |= dy[k].node >= 0;
    }
    int op = g->nodes[v].op;
    if (!any || g->nodes[v].n_inputs == 0 || dgc_op_has(op, DGC_OP_ZERO_GRAD))
        return DG_OK;
    /* is any input on the path (and float)? */
    int n_in = g->nodes[v].n_inputs, need = 0;
    for (int k = 0; k < n_in; k++) {
        dgc_ref in = g->nodes[v].inputs[k];
        if (ON(in.node) && is_float_ref(g, in))
            need = 1;
    }
    if (!need)
        return DG_OK;
    if (dgc_op_has(op, DGC_OP_NOT_DIFF))
        return dg_err(err, DG_E_GRAPH,
                      "node '%s': gradient requested through op '%s' which "
                      "has no gradient", g->nodes[v].name, dgc_op_name(op));
    dgc_ref *dx = dg_malloc(sizeof *dx * (size_t)n_in);
    uint8_t *need_in = dg_calloc((size_t)n_in, 1);
    if (!dx || !need_in) {
        dg_free(dx);
        dg_free(need_in);
        return dg_err_nomem(err, "gradients");
    }
    for (int k = 0; k < n_in; k++) {
        dgc_ref in = g->nodes[v].inputs[k];
        dx[k].node = -1, dx[k].index = 0;
        need_in[k] = ON(in.node) && is_float_ref(g, in);
    }
    s->c.need = need_in;
    st = dgc_grad_rule(&s->c, v, dy, dx);
    s->c.need = NULL;
    dg_free(need_in);
    for (int k = 0; st == DG_OK && k < n_in; k++)
        st = dgc_gsweep_add(s, g->nodes[v].inputs[k], dx[k]);
    dg_free(dx);
    return st;
}

dg_status dgc_gsweep_node(dgc_gsweep *s, int32_t v)
{
    return sweep_node(s, v, NULL);
}

/* ---- the traversal ------------------------------------------------------- */

/* Node v as the sweep sees it: its loop's representative for a node of a
 * loop, itself otherwise. */
static int32_t eff(const gstate *s, int32_t v)
{
    int L = s->loops ? dgc_gloops_of(s->loops, v) : -1;
    return L < 0 ? v : dgc_gloops_rep(s->loops, L);
}

/* Data input k of v in the sweep's graph (a loop's inputs are its Enters'
 * inputs); -1 past the last. */
static int32_t sweep_input(const gstate *s, int32_t v, int k)
{
    int L = s->loops ? dgc_gloops_of(s->loops, v) : -1;
    if (L >= 0) {
        const int32_t *en;
        int n = dgc_gloops_enters(s->loops, L, &en);
        return k < n ? eff(s, s->c.g->nodes[en[k]].inputs[0].node) : -1;
    }
    return k < s->c.g->nodes[v].n_inputs
               ? eff(s, s->c.g->nodes[v].inputs[k].node)
               : -1;
}

/* A y or an x inside a loop frame: not supported. */
static dg_status check_outside(gstate *s, int32_t v, const char *what)
{
    if (!s->loops || dgc_gloops_of(s->loops, v) < 0)
        return DG_OK;
    return dg_err(s->c.err, DG_E_GRAPH,
                  "gradients '%s': %s '%s' is inside a while loop (take "
                  "the loop's Exit)", s->c.set, what, s->c.g->nodes[v].name);
}

dg_status dgc_grad_build(dgc_graph *g, const char *set, const int32_t *ys,
                         int n_ys, const int32_t *grad_ys, int n_grad_ys,
                         const int32_t *xs, int n_xs, int colocate,
                         int32_t *out_ids, dg_error *err)
{
    dg_status st = DG_OK;
    gstate st_, *s = &st_;
    memset(s, 0, sizeof *s);
    s->c.g = g;
    s->c.set = set;
    s->c.colocate = colocate;
    s->c.err = err;
    err->code = DG_OK;
    if ((st = dgc_pending_check_deps(g, ys, n_ys, set, err)) != DG_OK)
        return st;
    int32_t n = s->n = g->n_nodes;
    size_t nn = (size_t)n;
    uint8_t *mark = dg_calloc(nn ? nn : 1, 1); /* 1 fwd, 2 bwd, 4 x, 8 seen */
    int32_t *stack = dg_malloc(sizeof *stack * (nn + 1) * 2);
    int32_t *order = dg_malloc(sizeof *order * (nn + 1));
    int *cons_off = dg_calloc(nn + 1, sizeof *cons_off);
    int *cons = NULL;
    s->mark = mark;
    s->head = dg_malloc(sizeof *s->head * (nn + 1) * MAX_OUT);
    s->count = dg_calloc((nn + 1) * MAX_OUT, sizeof *s->count);
    if (!mark || !stack || !order || !cons_off || !s->head || !s->count) {
        st = dg_err_nomem(err, "gradients");
        goto done;
    }
    for (size_t i = 0; i < (nn + 1) * MAX_OUT; i++)
        s->head[i] = -1;
    if ((st = dgc_gloops_find(g, n, &s->loops, err)) != DG_OK)
        goto done;
    for (int j = 0; j < n_ys; j++)
        if ((st = check_outside(s, ys[j], "y")) != DG_OK)
            goto done;
    for (int j = 0; j < n_xs; j++)
        if ((st = check_outside(s, xs[j], "x")) != DG_OK)
            goto done;

    /* consumers (CSR over data edges) */
    int n_edges = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int k = 0; k < g->nodes[i].n_inputs; k++)
            cons_off[g->nodes[i].inputs[k].node + 1]++;
        n_edges += g->nodes[i].n_inputs;
    }
    for (int32_t i = 0; i < n; i++)
        cons_off[i + 1] += cons_off[i];
    cons = dg_malloc(sizeof *cons * (size_t)(n_edges + 1));
    int *fill = dg_calloc(nn + 1, sizeof *fill);
    if (!cons || !fill) {
        dg_free(fill);
        st = dg_err_nomem(err, "gradients");
        goto done;
    }
    for (int32_t i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++) {
            int32_t p = g->nodes[i].inputs[k].node;
            cons[cons_off[p] + fill[p]++] = i;
        }
    dg_free(fill);

    /* forward reach from xs, backward reach from ys (through loops) */
    int sp = 0;
    for (int j = 0; j < n_xs; j++) {
        mark[xs[j]] |= 4;
        if (!(mark[xs[j]] & 1)) {
            mark[xs[j]] |= 1;
            stack[sp++] = xs[j];
        }
    }
    while (sp > 0) {
        int32_t v = stack[--sp];
        for (int e = cons_off[v]; e < cons_off[v + 1]; e++)
            if (!(mark[cons[e]] & 1)) {
                mark[cons[e]] |= 1;
                stack[sp++] = cons[e];
            }
    }
    for (int j = 0; j < n_ys; j++)
        if (!(mark[ys[j]] & 2)) {
            mark[ys[j]] |= 2;
            stack[sp++] = ys[j];
        }
    while (sp > 0) {
        int32_t v = stack[--sp];
        for (int k = 0; k < g->nodes[v].n_inputs; k++) {
            int32_t p = g->nodes[v].inputs[k].node;
            if (!(mark[p] & 2)) {
                mark[p] |= 2;
                stack[sp++] = p;
            }
        }
    }

    /* a loop is on the path when one of its Exits is */
    for (int32_t v = 0; s->loops && v < n; v++)
        if (g->nodes[v].op == DGC_OPID_Exit && ON(v) &&
            dgc_gloops_left(s->loops, v) > 0)
            mark[dgc_gloops_rep(s->loops, dgc_gloops_left(s->loops, v))] |= 3;

    /* post-order over on-path nodes from ys (inputs before consumers); a
     * loop is one node (its representative) */
    int n_order = 0;
    for (int j = 0; j < n_ys; j++) {
        if (!ON(ys[j]) || (mark[ys[j]] & 8))
            continue;
        /* iterative DFS: stack holds (node, next input) pairs */
        sp = 0;
        stack[sp++] = ys[j];
        stack[sp++] = 0;
        mark[ys[j]] |= 8;
        while (sp > 0) {
            int32_t v = stack[sp - 2];
            int32_t k = stack[sp - 1];
            int32_t p = sweep_input(s, v, k);
            if (p >= 0) {
                stack[sp - 1] = k + 1;
                if (ON(p) && !(mark[p] & 8)) {
                    mark[p] |= 8;
                    stack[sp++] = p;
                    stack[sp++] = 0;
                }
            } else {
                order[n_order++] = v;
                sp -= 2;
            }
        }
    }

    /* seeds */
    for (int j = 0; j < n_ys; j++) {
        int32_t y = ys[j];
        if (!ON(y))
            continue;
        dgc_ref r = {-1, 0};
        if (grad_ys && j < n_grad_ys && grad_ys[j] >= 0) {
            r.node = grad_ys[j];
        } else {
            dgc_ref in = {y, 0};
            r.node = dgc_grad_node(&s->c, y, "grad_ys", DGC_OPID_OnesLike,
                                   &in, 1);
            if (r.node < 0) {
                st = err->code ? err->code : DG_E_GRAPH;
                goto done;
            }
        }
        if (add_contrib(s, y, 0, r)) {
            st = dg_err_nomem(err, "gradients");
            goto done;
        }
    }

    /* backward sweep: consumers before producers */
    for (int oi = n_order - 1; oi >= 0; oi--) {
        int32_t v = order[oi];
        int L = s->loops ? dgc_gloops_of(s->loops, v) : -1;
        if (L >= 0) {
            if ((st = dgc_grad_loop(s, s->loops, L)) != DG_OK)
                goto done;
            continue;
        }
        char final_name[1024];
        if (mark[v] & 4)
            snprintf(final_name, sizeof final_name, "%s/%s", set,
                     g->nodes[v].name);
        if ((st = sweep_node(s, v, (mark[v] & 4) ? final_name : NULL)) !=
            DG_OK)
            goto done;
    }

    /* results */
    for (int j = 0; j < n_xs; j++) {
        char name[1024];
        snprintf(name, sizeof name, "%s/%s", set, g->nodes[xs[j]].name);
        int32_t id = dgc_graph_find(g, name);
        if (id < 0) {
            dgc_ref in = {xs[j], 0};
            id = dgc_grad_node_named(&s->c, xs[j], name,
                                     DGC_OPID_ZerosLike, &in, 1);
            if (id < 0 || dgc_infer_node(g, id, err) != DG_OK) {
                st = err->code ? err->code : DG_E_GRAPH;
                goto done;
            }
        }
        if (out_ids)
            out_ids[j] = id;
    }
done:
    dgc_gloops_free(s->loops);
    dg_free(mark);
    dg_free(stack);
    dg_free(order);
    dg_free(cons_off);
    dg_free(cons);
    dg_free(s->head);
    dg_free(s->count);
    dg_free(s->pool);
    return st;
}
#undef ON

/* ---- the pass ------------------------------------------------------------ */

dg_status dgc_pass_gradients(dgc_graph *g, int colocate_override,
                             dg_error *err)
{
    for (int i = 0; i < g->n_gradsets; i++) {
        const dgc_gradset *gs = &g->gradsets[i];
        int coloc = colocate_override >= 0 ? colocate_override
                                           : (gs->colocate > 0 ? 1 : 0);
        if (gs->n_grad_ys > 0 && gs->n_grad_ys != gs->n_ys)
            return dg_err(err, DG_E_GRAPH,
                          "gradients '%s': grad_ys has %d entries but ys has %d",
                          gs->name, gs->n_grad_ys, gs->n_ys);
        dg_status st = dgc_grad_build(g, gs->name, gs->ys, gs->n_ys,
                                      gs->n_grad_ys ? gs->grad_ys : NULL,
                                      gs->n_grad_ys, gs->xs, gs->n_xs, coloc,
                                      NULL, err);
        if (st != DG_OK)
            return st;
    }
    return DG_OK;
}
