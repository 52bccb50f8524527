/*
 * grad_collective.c -- gradient rules of the replication ops (issue 13,
 * SPEC 8.4), called from dgc_grad_rule:
 *   AllReduce sum / mean: dx = AllReduce(dy) with the same reduction (every
 *     replica's output depends on every replica's input with weight 1 or
 *     1/W, so the replicas' dy are summed or averaged back);
 *   AllReduce max / min: dx = [x == y] * AllReduce_sum(dy) /
 *     AllReduce_sum([x == y]): the summed gradient goes to the replicas
 *     holding the extreme value, split evenly between ties (TF's reduce_max
 *     rule, over replicas instead of an axis);
 *   Broadcast(root): dx = AllReduce(dy, sum, root): a sum-reduce to the
 *     root (MPI_Reduce), zeros on the other replicas; with one replica the
 *     identity, like the forward op.
 * The gradient nodes are built on the single-replica graph; the
 * replication pass (replicate.c) then copies them into every replica like
 * any other node, so they become collectives too.
 */
#include "grad.h"
#include "grad_rule.h"
#include "infer.h"
#include "dg_error.h"

#include <string.h>

/* AllReduce(x) with `reduction`, for forward op fwd; node -1 on error. */
static dgc_ref allreduce(dgc_gctx *c, int32_t fwd, const char *suffix,
                         dgc_ref x, const char *reduction)
{
    dgc_ref r = {dgc_grad_node_raw(c, fwd, suffix, DGC_OPID_AllReduce, &x, 1),
                 0};
    if (r.node < 0)
        return r;
    if (dgc_node_set_str(&c->g->nodes[r.node], "reduction", reduction)) {
        dg_err_nomem(c->err, "gradient attrs");
        r.node = -1;
    } else if (dgc_infer_node(c->g, r.node, c->err) != DG_OK) {
        r.node = -1;
    }
    return r;
}

/* Cast(b) to dtype t; node -1 on error. */
static dgc_ref cast(dgc_gctx *c, int32_t fwd, dgc_ref b, dg_dtype t)
{
    dgc_ref r = {dgc_grad_node_raw(c, fwd, "Cast", DGC_OPID_Cast, &b, 1), 0};
    if (r.node < 0)
        return r;
    if (dgc_node_set_dtype(&c->g->nodes[r.node], "dtype", t)) {
        dg_err_nomem(c->err, "gradient attrs");
        r.node = -1;
    } else if (dgc_infer_node(c->g, r.node, c->err) != DG_OK) {
        r.node = -1;
    }
    return r;
}

dg_status dgc_grad_collective(dgc_gctx *c, int32_t fwd, dgc_ref dy,
                              dgc_ref *dx)
{
    const dgc_node *f = &c->g->nodes[fwd];
    dgc_ref x = f->inputs[0], y = {fwd, 0};
    dg_dtype t = f->outputs[0].dtype;
    if (f->op == DGC_OPID_AllReduce) {
        const dgc_attr *ra = dgc_node_attr(f, "reduction");
        int red = dgc_allreduce_reduction(ra ? ra->s : NULL);
        if (red == 0 || red == 1) { /* sum, mean */
            dx[0] = allreduce(c, fwd, "AllReduce", dy, ra->s);
            CHK(dx[0]);
            return DG_OK;
        }
        dgc_ref eq = MK("Equal", Equal, x, y); CHK(eq);
        dgc_ref ind = cast(c, fwd, eq, t); CHK(ind);
        dgc_ref s = allreduce(c, fwd, "AllReduce", dy, "sum"); CHK(s);
        dgc_ref n = allreduce(c, fwd, "AllReduce", ind, "sum"); CHK(n);
        dgc_ref q = MK("Div", Div, s, n); CHK(q);
        dx[0] = MK("Mul", Mul, q, ind); CHK(dx[0]);
        return DG_OK;
    }
    /* Broadcast: the replicas' dy summed onto the root (MPI_Reduce) */
    dx[0] = allreduce(c, fwd, "AllReduce", dy, "sum");
    CHK(dx[0]);
    if (dgc_node_set_int(&c->g->nodes[dx[0].node], "root",
                         dgc_attr_int(f, "root", 0)))
        return dg_err_nomem(c->err, "gradient attrs");
    return DG_OK;
}
