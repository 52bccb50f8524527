/*
 * exec_step.c -- what running one op takes in both schedulers, the plain
 * executor (executor.c) and the executor with frames (exec_frames.c): the
 * op's output types at run time (its shape function on the inputs'
 * concrete types, with the values of small integer inputs read to the
 * host), the kernel context (dgr_exec_kctx, exec_priv.h), waiting for the
 * devices at the end of a run, and the names and flows of traced steps
 * (also exec_net.c's).  The schedulers call it; it calls neither.
 */
#include "exec_priv.h"
#include "infer.h"

dgr_kernel_fn dgr_exec_kernel(const dgc_graph *g, const dgc_node *n,
                              const dgr_device *dev, dg_error *err)
{
    dgr_kernel_fn fn = dev->be->kernels[n->op].fn;
    if (fn && (!dev->info.kernels ||
               dgc_op_has_kernel(g, n, dev->info.kernels, dev->info.fp64)))
        return fn;
    int dt = dgc_op_kernel_dtype(g, n);
    if (!fn || dt < 0)
        dg_err(err, DG_E_RUNTIME, "node '%s': no %s kernel for %s",
               n->name, dgc_node_op_name(n), dev->info.name);
    else
        dg_err(err, DG_E_RUNTIME, "node '%s': no %s kernel for dtype %s on "
               "%s (placed there because TensorFlow has one, SPEC 4.7)",
               n->name, dgc_node_op_name(n), dg_dtype_name((dg_dtype)dt),
               dev->info.name);
    return NULL;
}

const char *dgr_exec_slot_name(const dgr_runner *r, int32_t slot)
{
    const dgc_plan *p = r->plan;
    const dgc_step *ps = &p->steps[p->slots[slot].step];
    if (ps->kind == DGC_STEP_TRANSFER)
        return dgr_exec_slot_name(r, p->in_slots[ps->in_off]);
    int k = slot - ps->out_slot;
    if (r->s->out_names && r->s->out_names[ps->node])
        return r->s->out_names[ps->node][k];
    return r->s->g->nodes[ps->node].name;
}

/* Flows into step st (on `lane`) from its producers on other lanes, named
 * by slice key: the writer binds them to the producer's and this step's
 * slices whatever their clocks. */
void dgr_exec_trace_flows(dgr_runner *r, const dgc_step *st, int lane)
{
    const dgc_plan *p = r->plan;
    int32_t s = (int32_t)(st - p->steps);
    for (int i = 0; i < st->n_in; i++) {
        int32_t sl = p->in_slots[st->in_off + i];
        int32_t ps = p->slots[sl].step;
        const dgc_step *pst = &p->steps[ps];
        if (pst->device != st->device || r->lane[ps] != lane)
            dgr_trace_flow(r->s->trace, r->key_base + (uint32_t)ps,
                           r->key_base + (uint32_t)s, dgr_exec_slot_name(r, sl));
    }
}

dg_status dgr_exec_sync_devices(dgr_exec *S, dg_status rc, dg_error *err)
{
    for (int d = 0; d < S->n_dev; d++) {
        if (!S->devs[d].be->streams)
            continue;
        dg_error e2;
        if (S->devs[d].be->sync(&S->devs[d], &e2) != DG_OK && rc == DG_OK) {
            rc = e2.code;
            if (err)
                *err = e2;
        }
    }
    return rc;
}

dg_status dgr_exec_host_inputs(dgr_device *dev, const dgr_value *in,
                               int n_in, int64_t *hostin, dgc_ttype *tin,
                               dg_error *err)
{
    for (int i = 0; i < n_in; i++) {
        const dgr_value *v = &in[i];
        int64_t cnt = dg_shape_numel(&v->shape);
        if ((v->dtype != DG_I32 && v->dtype != DG_I64) || !v->buf ||
            cnt > DGR_HOST_IN_MAX)
            continue;
        if (v->buf->host) {
            tin[i].value = v->buf->host;
            continue;
        }
        int64_t *dst = hostin + (size_t)i * DGR_HOST_IN_MAX;
        dg_status rc = dev->be->read(dev, v->buf, dst,
                                     (size_t)cnt * dg_dtype_size(v->dtype),
                                     err);
        if (rc != DG_OK)
            return rc;
        tin[i].value = dst;
    }
    return DG_OK;
}

dg_status dgr_exec_run_types(dgr_device *dev, const dgc_node *n,
                             const dgr_value *in, int n_in, int64_t *hostin,
                             dgc_ttype *tin, dgc_ttype *to, dg_error *err)
{
    const dgc_op_def *od = &dgc_ops[n->op];
    for (int i = 0; i < n_in; i++) {
        tin[i].dtype = in[i].dtype;
        tin[i].shape = in[i].shape;
        tin[i].value = NULL;
    }
    /* ops whose output shape depends on input values (Reshape's shape,
     * Fill's dims) get those values */
    if (od->flags & DGC_OP_HOST_IN) {
        dg_status rc = dgr_exec_host_inputs(dev, in, n_in, hostin, tin, err);
        if (rc != DG_OK)
            return rc;
    }
    char msg[256];
    msg[0] = 0;
    if (dgc_op_infer[n->op](n, tin, n_in, to, msg, sizeof msg) != 0)
        return dg_err(err, DG_E_RUNTIME, "node '%s': %s: %s", n->name,
                      od->name, msg[0] ? msg : "invalid inputs at run time");
    return DG_OK;
}
