/*
 * fuse_pool.c -- MaxPoolGrad + ReluGrad fused (issue 23): in a CNN's
 * gradient `Relu -> MaxPool` becomes `ReluGrad(MaxPoolGrad(r, y, dy), r)`
 * with r the Relu's output (after fuse_conv.c, the fused convolution's):
 * two passes over the largest activations of the step (LeNet's conv1
 * output, 6.4 MB at batch 64).  The ReluGrad node becomes one
 * `_FusedMaxPoolGrad` (MaxPoolGrad's inputs and attrs) whose kernel sends
 * dy to each window's first maximum only where that maximum is > 0 --
 * the same bits as the two ops (a position that gets no dy is 0 either
 * way; where it gets dy, ReluGrad keeps it iff r > 0, and r there is the
 * maximum).  As in fuse.c the ReluGrad keeps its name, device,
 * consumers and control inputs (`_user_op` ReluGrad), the MaxPoolGrad
 * stays in the graph unread.  Only where the device has the fused
 * kernel (the CPU), the MaxPoolGrad is read by the ReluGrad alone and
 * reads the same tensor as the ReluGrad's features.
 */
#include "fuse.h"
#include "ops.h"

/* MaxPoolGrad's attrs, onto the fused node. */
static const char *const pool_attrs[] = {"ksize", "strides", "padding",
                                         "data_format"};

/* Rewrite ReluGrad r into _FusedMaxPoolGrad of MaxPoolGrad p.  0 ok, -1
 * nomem. */
static int rewrite(dgc_fuse_ctx *c, int32_t r, int32_t p)
{
    dgc_graph *g = c->g;
    const dgc_node *pn = &g->nodes[p];
    dgc_ref in[3] = {pn->inputs[0], pn->inputs[1], pn->inputs[2]};
    dgc_node *n = &g->nodes[r];
    for (int i = 0; i < n->n_attrs; i++)
        dgc_attr_clear(&n->attrs[i]);
    n->n_attrs = 0;
    int bad = 0;
    for (size_t i = 0; i < sizeof pool_attrs / sizeof *pool_attrs; i++) {
        const dgc_attr *a = dgc_node_attr(&g->nodes[p], pool_attrs[i]);
        n = &g->nodes[r];
        if (a && a->kind == DGC_A_INTS)
            bad |= dgc_node_set_ints(n, a->key, a->ints, a->n);
        else if (a && a->kind == DGC_A_STR)
            bad |= dgc_node_set_str(n, a->key, a->s);
    }
    n = &g->nodes[r];
    bad |= dgc_node_set_str(n, "_user_op", dgc_node_op_name(n));
    for (int i = 0; !bad && i < 3; i++) {
        n = &g->nodes[r];
        if (i < n->n_inputs)
            n->inputs[i] = in[i];
        else
            bad = dgc_node_add_input(g, r, in[i]) != 0;
    }
    if (bad)
        return -1;
    n = &g->nodes[r];
    n->n_inputs = 3;
    n->op = DGC_OPID__FusedMaxPoolGrad;
    n->op_alias = 0;
    n->flags |= DGC_NODE_FUSED;
    dgc_fuse_absorb(c, &p, 1, r);
    return 0;
}

dg_status dgc_fuse_pools(dgc_fuse_ctx *c, dg_error *err)
{
    dgc_graph *g = c->g;
    for (int32_t r = 0; r < c->n; r++) {
        const dgc_node *n = &g->nodes[r];
        if (n->op != DGC_OPID_ReluGrad || n->n_inputs != 2 ||
            !dgc_fuse_is_op(g, n->inputs[0], DGC_OPID_MaxPoolGrad))
            continue;
        int32_t p = n->inputs[0].node;
        const dgc_node *pn = &g->nodes[p];
        if (pn->n_inputs != 3 || pn->inputs[0].node != n->inputs[1].node ||
            pn->inputs[0].index != n->inputs[1].index ||
            !dgc_fuse_dev_has(c, n, DGC_OPID__FusedMaxPoolGrad) ||
            !dgc_fuse_absorbable(c, p, 1, n))
            continue;
        if (rewrite(c, r, p))
            return dg_err_nomem(err, "fusion (MaxPoolGrad + ReluGrad)");
    }
    return DG_OK;
}
