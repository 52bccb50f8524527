/*
 * kernel.c -- the helpers every backend's kernels use to produce their
 * outputs: allocating an output on the kernel's device and stream, and
 * aliasing an input's buffer; describing a collective call (AllReduce,
 * Broadcast) for the kernel environment's collective runtime.
 */
#include "kernel.h"
#include "infer.h"

#include <stdio.h>
#include <string.h>

dg_status dgr_kctx_alloc_output(dgr_kctx *k, int i)
{
    dgr_value *v = &k->out[i];
    v->dtype = k->out_types[i].dtype;
    v->shape = k->out_types[i].shape;
    int64_t n = dg_shape_numel(&v->shape);
    if (n < 0)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': output %d has an unknown shape at run time",
                      k->node->name, i);
    size_t bytes = (size_t)n * dg_dtype_size(v->dtype);
    v->buf = dgr_buffer_new(k->dev, bytes, k->stream, k->err);
    if (!v->buf) {
        if (k->err && k->err->code == DG_E_NOMEM) {
            char shape[128];
            int off = 0;
            off += snprintf(shape + off, sizeof shape - (size_t)off, "[");
            for (int d = 0; d < v->shape.rank && off < 100; d++)
                off += snprintf(shape + off, sizeof shape - (size_t)off,
                                d ? ", %lld" : "%lld",
                                (long long)v->shape.dims[d]);
            snprintf(shape + off, sizeof shape - (size_t)off, "]");
            char prev[sizeof k->err->msg];
            snprintf(prev, sizeof prev, "%s", k->err->msg);
            dg_err(k->err, DG_E_NOMEM, "node '%s': output shape %s %s: %s",
                   k->node->name, shape, dg_dtype_name(v->dtype), prev);
        }
        return k->err ? k->err->code : DG_E_NOMEM;
    }
    return DG_OK;
}

void dgr_kctx_alias_output(dgr_kctx *k, int i, const dgr_value *v)
{
    dgr_value *o = &k->out[i];
    o->dtype = k->out_types[i].dtype;
    o->shape = k->out_types[i].shape;
    o->buf = v->buf;
    dgr_buffer_retain(v->buf);
}

/* Fill *c from the node's attrs; returns W (the replica count). */
int dgr_collective_describe(const dgr_kctx *k, dgr_collective *c)
{
    const dgc_node *n = k->node;
    memset(c, 0, sizeof *c);
    c->kind = n->op == DGC_OPID_Broadcast  ? DGR_COLL_BROADCAST
              : dgc_attr_at(n, DGC_AT_root) ? DGR_COLL_REDUCE
                                         : DGR_COLL_ALLREDUCE;
    /* Broadcast has no reduction (nor a schema row for one) */
    const dgc_attr *r = c->kind == DGR_COLL_BROADCAST
                            ? NULL
                            : dgc_attr_at(n, DGC_AT_reduction);
    int red = dgc_allreduce_reduction(r ? r->s : NULL);
    c->reduction = (dgr_coll_reduction)(red < 0 ? 0 : red);
    c->root = (int)dgc_attr_i(n, DGC_AT_root);
    const dgc_attr *key = dgc_attr_at(n, DGC_AT_key);
    c->key = key && key->s ? key->s : n->name;
    c->replica = (int)dgc_attr_i(n, DGC_AT_replica);
    c->replicas = (int)dgc_attr_i(n, DGC_AT_replicas);
    c->node_id = k->node_id;
    c->step = k->step;
    c->dtype = k->in[0].dtype;
    c->n = dg_shape_numel(&k->in[0].shape);
    return c->replicas;
}

dg_status dgr_collective_missing(const dgr_kctx *k, int replicas)
{
    return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s over %d replicas "
                  "needs the collective runtime of an MPI job (start the "
                  "cluster with mpirun)", k->node->name,
                  dgc_op_name(k->node->op), replicas);
}

dg_shape dgr_shape_right_align(const dg_shape *s, int rank)
{
    dg_shape r;
    memset(&r, 0, sizeof r);
    r.rank = rank;
    for (int i = 0; i < rank; i++) {
        int si = i - (rank - s->rank);
        r.dims[i] = si >= 0 ? s->dims[si] : 1;
    }
    return r;
}
