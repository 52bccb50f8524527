/*
 * grad_node.c -- making gradient nodes: the helpers the sweep
 * (gradients.c), the per-op rules (grad_rules.c, grad_collective.c), the
 * loop code (grad_loop.c) and the training pass (passes/train.c) build
 * nodes with.  Inside a backward loop body a new node is wired into its
 * frame through the context's `wire` (grad_loop.c sets it), so this file
 * calls nothing else of grad/.
 */
#include "grad.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>

int32_t dgc_grad_node_named(dgc_gctx *c, int32_t fwd, const char *name,
                            int op, const dgc_ref *in, int n_in)
{
    dgc_graph *g = c->g;
    int32_t id = dgc_graph_add_node(g, name, op, c->err);
    if (id < 0)
        return -1;
    for (int i = 0; i < n_in; i++)
        if (dgc_node_add_input(g, id, in[i])) {
            dg_err_nomem(c->err, "gradient node");
            return -1;
        }
    dgc_node *n = &g->nodes[id];
    n->flags |= DGC_NODE_GENERATED;
    n->forward = fwd;
    n->group_hint = fwd;
    n->colocate = c->colocate;
    if (c->loop && c->wire(c, id) != DG_OK)
        return -1;
    return id;
}

/* Unique "<set>/<fwd>/<suffix>[_k]" into buf. */
static void unique_name(dgc_gctx *c, int32_t fwd, const char *suffix,
                        char *buf, size_t sz)
{
    const char *fname = fwd >= 0 ? c->g->nodes[fwd].name : "";
    snprintf(buf, sz, "%s/%s/%s", c->set, fname, suffix);
    size_t len = strlen(buf);
    for (int k = 1; dgc_graph_find(c->g, buf) >= 0; k++)
        snprintf(buf + len, sz - len, "_%d", k);
}

int32_t dgc_grad_node_raw(dgc_gctx *c, int32_t fwd, const char *suffix,
                          int op, const dgc_ref *in, int n_in)
{
    char name[1024];
    unique_name(c, fwd, suffix, name, sizeof name);
    return dgc_grad_node_named(c, fwd, name, op, in, n_in);
}

int32_t dgc_grad_node(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                      const dgc_ref *in, int n_in)
{
    int32_t id = dgc_grad_node_raw(c, fwd, suffix, op, in, n_in);
    if (id < 0)
        return -1;
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return -1;
    return id;
}

int32_t dgc_grad_const(dgc_gctx *c, int32_t fwd, const char *suffix, double v,
                       dg_dtype t)
{
    dg_shape s;
    memset(&s, 0, sizeof s);
    dg_tensor *tv = dg_tensor_new(t, &s);
    if (!tv) {
        dg_err_nomem(c->err, "gradient constant");
        return -1;
    }
    switch (t) {
    case DG_F32: *(float *)tv->data = (float)v; break;
    case DG_F64: *(double *)tv->data = v; break;
    case DG_I32: *(int32_t *)tv->data = (int32_t)v; break;
    case DG_I64: *(int64_t *)tv->data = (int64_t)v; break;
    default: *(uint8_t *)tv->data = v != 0; break;
    }
    char name[1024];
    unique_name(c, fwd, suffix, name, sizeof name);
    int32_t id = dgc_grad_node_named(c, fwd, name, DGC_OPID_Const, NULL, 0);
    if (id < 0) {
        dg_tensor_free(tv);
        return -1;
    }
    dgc_node *n = &c->g->nodes[id];
    if (dgc_node_set_tensor(n, "value", tv) ||
        dgc_node_set_dtype(n, "dtype", t)) {
        dg_err_nomem(c->err, "gradient constant");
        return -1;
    }
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return -1;
    return id;
}

dgc_ref dgc_grad_ints(dgc_gctx *c, int32_t fwd, const char *suffix,
                      const int64_t *v, int n)
{
    dgc_ref r = {-1, 0};
    dg_shape s;
    memset(&s, 0, sizeof s);
    s.rank = 1;
    s.dims[0] = n;
    dg_tensor *t = dg_tensor_new(DG_I32, &s);
    if (!t) {
        dg_err_nomem(c->err, "gradient");
        return r;
    }
    for (int i = 0; i < n; i++)
        ((int32_t *)t->data)[i] = (int32_t)v[i];
    int32_t id = dgc_grad_node_raw(c, fwd, suffix, DGC_OPID_Const, NULL, 0);
    if (id < 0 || dgc_node_set_tensor(&c->g->nodes[id], "value", t)) {
        if (id >= 0)
            dg_err_nomem(c->err, "gradient");
        dg_tensor_free(t);
        return r;
    }
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return r;
    r.node = id;
    return r;
}

static int set_cast_dtype(dgc_gctx *c, int32_t fwd, dgc_node *n, void *arg)
{
    (void)c;
    (void)fwd;
    return dgc_node_set_dtype(n, "dtype", *(const dg_dtype *)arg);
}

dgc_ref dgc_grad_cast(dgc_gctx *c, int32_t fwd, dgc_ref x, dg_dtype t)
{
    return dgc_grad_mk_set(c, fwd, "Cast", DGC_OPID_Cast, &x, 1,
                           set_cast_dtype, &t);
}

dg_status dgc_grad_fail(const dgc_gctx *c)
{
    return c->err->code != DG_OK ? c->err->code : DG_E_GRAPH;
}

dgc_ref dgc_grad_mk(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                    const dgc_ref *in, int n_in)
{
    dgc_ref r = {dgc_grad_node(c, fwd, suffix, op, in, n_in), 0};
    return r;
}

dgc_ref dgc_grad_mk_set(dgc_gctx *c, int32_t fwd, const char *suffix, int op,
                        const dgc_ref *in, int n_in, dgc_grad_set_fn set,
                        void *arg)
{
    dgc_ref r = {-1, 0};
    int32_t id = dgc_grad_node_raw(c, fwd, suffix, op, in, n_in);
    if (id < 0)
        return r;
    if (set && set(c, fwd, &c->g->nodes[id], arg)) {
        if (c->err->code == DG_OK)
            dg_err_nomem(c->err, "gradient attrs");
        return r;
    }
    if (dgc_infer_node(c->g, id, c->err) != DG_OK)
        return r;
    r.node = id;
    return r;
}

dgc_ref dgc_grad_ref(int32_t node, int32_t index)
{
    dgc_ref r = {node, index};
    return r;
}

const dgc_ttype *dgc_grad_type(const dgc_gctx *c, dgc_ref r)
{
    return &c->g->nodes[r.node].outputs[r.index];
}

dgc_ref dgc_grad_cst(dgc_gctx *c, int32_t fwd, const char *suffix, double v,
                     dgc_ref like)
{
    dgc_ref r = {dgc_grad_const(c, fwd, suffix, v,
                                dgc_grad_type(c, like)->dtype), 0};
    return r;
}

dgc_ref dgc_grad_sum_to(dgc_gctx *c, int32_t fwd, dgc_ref g, dgc_ref like)
{
    if (g.node < 0)
        return g;
    const dg_shape *a = &dgc_grad_type(c, g)->shape;
    const dg_shape *b = &dgc_grad_type(c, like)->shape;
    int same = a->rank == b->rank;
    for (int d = 0; same && d < a->rank; d++)
        same = a->dims[d] >= 0 && a->dims[d] == b->dims[d];
    if (same)
        return g;
    return dgc_grad_mk(c, fwd, "SumTo", DGC_OPID_SumTo,
                       (const dgc_ref[]){g, like}, 2);
}
