/*
 * fuse_gelu.c -- the exact gelu as one op (issue 23; TF's remapper fuses
 * the same subgraphs into its oneDNN MatMul's "GeluExact" epilogue).
 * Two spellings reach dgrun, five elementwise ops each over a
 * transformer's largest activations, one of them an erf per element:
 *
 *   tf.nn.gelu(approximate=False)   Mul(Mul(0.5, x), Erfc(Mul(Neg(x), c)))
 *   tf_keras' gelu                  Mul(Mul(0.5, x), AddV2(1, Erf(t)))
 *                                   t = Mul(x, c) or Div(x, sqrt 2)
 *
 * with c = 1/sqrt 2 (Mul operands in either order).  The last Mul becomes
 * `_Gelu(x)`: it keeps its name, device, consumers and control inputs
 * (`_user_op` Mul, as fuse_pool.c); the other four nodes stay in the graph
 * unread.  Only where the device has a `_Gelu` kernel for the dtype, the
 * constants are scalars of those values (to float precision), every
 * intermediate is read by the pattern alone and absorbable (fuse.c's rules:
 * not fetched, no control inputs, same device).
 */
#include "fuse.h"
#include "ops.h"

#include <math.h>

/* Is r a float scalar Const (through Identity) equal to v within float
 * rounding? */
static int is_scalar(const dgc_graph *g, dgc_ref r, double v)
{
    const dg_tensor *t = dgc_fuse_const_tensor(g, r);
    if (!t || dg_shape_numel(&t->shape) != 1)
        return 0;
    double x = t->dtype == DG_F32 ? ((const float *)t->data)[0]
                                  : ((const double *)t->data)[0];
    return fabs(x - v) <= 1e-6 * fabs(v);
}

/* Node id if r is output 0 of an `op` node, else -1. */
static int32_t of_op(const dgc_graph *g, dgc_ref r, int op)
{
    return dgc_fuse_is_op(g, r, op) ? r.node : -1;
}

/* A binary node id reading scalar v on one side: the other side in *o.
 * 0 yes, -1 no. */
static int by_scalar(const dgc_graph *g, int32_t id, double v, dgc_ref *o)
{
    const dgc_node *n = &g->nodes[id];
    if (n->n_inputs != 2)
        return -1;
    for (int s = 0; s < 2; s++)
        if (is_scalar(g, n->inputs[s], v)) {
            *o = n->inputs[1 - s];
            return 0;
        }
    return -1;
}

static int same(dgc_ref a, dgc_ref b)
{
    return a.node == b.node && a.index == b.index;
}

/* The erf side of a gelu over x: Erfc(Mul(Neg(x), c)) or AddV2(1,
 * Erf(Mul(x, c) | Div(x, sqrt 2))); its nodes into ids (3 or 4).  Returns
 * how many, 0 when it is not one. */
static int erf_side(const dgc_graph *g, dgc_ref r, dgc_ref x, int32_t *ids)
{
    const double c = M_SQRT1_2;
    dgc_ref o;
    int32_t e = of_op(g, r, DGC_OPID_Erfc);
    if (e >= 0) {
        int32_t m = of_op(g, g->nodes[e].inputs[0], DGC_OPID_Mul);
        if (m < 0 || by_scalar(g, m, c, &o))
            return 0;
        int32_t ng = of_op(g, o, DGC_OPID_Neg);
        if (ng < 0 || !same(g->nodes[ng].inputs[0], x))
            return 0;
        ids[0] = e, ids[1] = m, ids[2] = ng;
        return 3;
    }
    int32_t a = of_op(g, r, DGC_OPID_Add);
    if (a < 0 || by_scalar(g, a, 1.0, &o))
        return 0;
    int32_t f = of_op(g, o, DGC_OPID_Erf);
    if (f < 0)
        return 0;
    dgc_ref t = g->nodes[f].inputs[0];
    int32_t d = of_op(g, t, DGC_OPID_Mul);
    if (d >= 0) {
        if (by_scalar(g, d, c, &o) || !same(o, x))
            return 0;
    } else {
        d = of_op(g, t, DGC_OPID_Div);
        const dgc_node *dn = d >= 0 ? &g->nodes[d] : NULL;
        if (!dn || dn->n_inputs != 2 || !same(dn->inputs[0], x) ||
            !is_scalar(g, dn->inputs[1], M_SQRT2))
            return 0;
    }
    ids[0] = a, ids[1] = f, ids[2] = d;
    return 3;
}

/* Node `last` (a Mul) as _Gelu of x, absorbing ids.  0 ok, -1 nomem. */
static int rewrite(dgc_fuse_ctx *c, int32_t last, dgc_ref x,
                   const int32_t *ids, int n)
{
    dgc_graph *g = c->g;
    dgc_node *m = &g->nodes[last];
    for (int i = 0; i < m->n_attrs; i++)
        dgc_attr_clear(&m->attrs[i]);
    m->n_attrs = 0;
    if (dgc_node_set_str(m, "_user_op", dgc_node_op_name(m)))
        return -1;
    m = &g->nodes[last];
    m->inputs[0] = x;
    m->n_inputs = 1;
    m->op = DGC_OPID__Gelu;
    m->op_alias = 0;
    m->flags |= DGC_NODE_FUSED;
    dgc_fuse_absorb(c, ids, n, last);
    return 0;
}

dg_status dgc_fuse_gelus(dgc_fuse_ctx *c, dg_error *err)
{
    dgc_graph *g = c->g;
    for (int32_t i = 0; i < c->n; i++) {
        const dgc_node *n = &g->nodes[i];
        if (n->op != DGC_OPID_Mul || n->n_inputs != 2 ||
            c->keep[i] == DGC_FUSE_ABSORBED ||
            (n->flags & DGC_NODE_FUSED) ||
            !dgc_fuse_dev_has(c, n, DGC_OPID__Gelu))
            continue;
        for (int s = 0; s < 2; s++) {
            /* one side Mul(0.5, x), the other the erf side over that x */
            int32_t h = of_op(g, n->inputs[s], DGC_OPID_Mul);
            dgc_ref x;
            if (h < 0 || by_scalar(g, h, 0.5, &x) || x.node < 0)
                continue;
            int32_t ids[4];
            int k = erf_side(g, n->inputs[1 - s], x, ids);
            if (!k)
                continue;
            ids[k++] = h;
            int ok = 1;
            for (int q = 0; q < k && ok; q++)
                ok = dgc_fuse_absorbable(c, ids[q], 1, n);
            if (!ok)
                continue;
            if (rewrite(c, i, x, ids, k))
                return dg_err_nomem(err, "fusion (gelu)");
            break;
        }
    }
    return DG_OK;
}
