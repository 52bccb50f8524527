/*
 * cl_launch.c -- the launch helpers every OpenCL kernel uses: the step's
 * compute queue and pending wait list (from the kernel context), event bookkeeping, kernel
 * argument setting and NDRange enqueue, work-group sizing and the dtype
 * check shared by the kernel files.
 */
#include "cl_internal.h"

#include <pthread.h>
#include <string.h>

dgr_cl_dev *dgr_cl_devof(dgr_kctx *k) { return (dgr_cl_dev *)k->dev->impl; }

cl_uint dgr_cl_take_waits(dgr_kctx *k, const cl_event **waits)
{
    cl_uint n = k->n_waits > 0 ? (cl_uint)k->n_waits : 0;
    *waits = n ? (const cl_event *)k->waits : NULL;
    k->waits = NULL;
    k->n_waits = 0;
    return n;
}

/* Put a wait list no command consumed back for the next command. */
static void untake_waits(dgr_kctx *k, const cl_event *waits, cl_uint n)
{
    k->waits = (void *const *)waits;
    k->n_waits = (int)n;
}

dg_status dgr_cl_flush_waits(dgr_kctx *k)
{
    const cl_event *wl;
    cl_uint nw = dgr_cl_take_waits(k, &wl);
    if (!nw)
        return DG_OK;
    cl_int e = clEnqueueBarrierWithWaitList(dgr_cl_queue(k), nw, wl, NULL);
    if (e != CL_SUCCESS) {
        untake_waits(k, wl, nw);
        return dgr_cl_kfail(k, "clEnqueueBarrierWithWaitList", e);
    }
    return DG_OK;
}

cl_command_queue dgr_cl_stream_queue(dgr_cl_dev *cd, int q)
{
    return q > 0 && q < cd->nq ? cd->qs[q] : cd->q;
}

cl_command_queue dgr_cl_queue(dgr_kctx *k)
{
    return dgr_cl_stream_queue(dgr_cl_devof(k), k->stream);
}

cl_mem dgr_cl_mem(const dgr_value *v)
{
    return v->buf ? (cl_mem)v->buf->mem : NULL;
}

void dgr_cl_set_event(dgr_kctx *k, cl_event ev)
{
    if (!ev)
        return; /* no event asked for (dgr_cl_want_event) */
    if (k->event)
        clReleaseEvent((cl_event)k->event);
    k->event = ev;
}

dg_status dgr_cl_kfail(dgr_kctx *k, const char *call, cl_int e)
{
    return dgr_cl_fail(k->err, k->node ? k->node->name : NULL, call, e);
}

static dg_status node_err(dgr_kctx *k, dg_status st)
{
    /* prefix the node to a message from a helper that did not know it */
    if (k->err && k->node && strncmp(k->err->msg, "node '", 6) != 0) {
        char prev[sizeof k->err->msg];
        memcpy(prev, k->err->msg, sizeof prev);
        dg_err(k->err, st, "node '%s': %s", k->node->name, prev);
    }
    return st;
}

int dgr_cl_want_event(const dgr_kctx *k)
{
    return k->want_event || !k->env || k->env->tracing;
}

dg_status dgr_cl_launch(dgr_kctx *k, const char *src, dg_dtype dt,
                        const char *name, cl_uint dims, const size_t *global,
                        const size_t *local, const dgr_cl_arg *args,
                        int n_args)
{
    dgr_cl_dev *cd = dgr_cl_devof(k);
    cl_kernel kern;
    pthread_mutex_lock(&cd->c->lock);
    size_t kwg = 0;
    dg_status st = dgr_cl_get_kernel_locked(cd->c, src, dt, name, &kern,
                                            &kwg, k->err);
    if (st != DG_OK) {
        pthread_mutex_unlock(&cd->c->lock);
        return node_err(k, st);
    }
    if (local) {
        size_t items = 1;
        for (cl_uint d = 0; d < dims; d++)
            items *= local[d];
        int over = items > kwg;
        for (cl_uint d = 0; d < dims && d < 3; d++)
            over |= cd->c->max_item[d] && local[d] > cd->c->max_item[d];
        if (over) {
            pthread_mutex_unlock(&cd->c->lock);
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': kernel '%s' launched with %zu "
                          "work-items per group, but %s allows it %zu "
                          "(CL_KERNEL_WORK_GROUP_SIZE)",
                          k->node->name, name, items, cd->c->dev_name, kwg);
        }
    }
    cl_int e = CL_SUCCESS;
    for (int i = 0; i < n_args && e == CL_SUCCESS; i++)
        e = clSetKernelArg(kern, (cl_uint)i, args[i].size, args[i].ptr);
    if (e != CL_SUCCESS) {
        pthread_mutex_unlock(&cd->c->lock);
        return dgr_cl_kfail(k, "clSetKernelArg", e);
    }
    cl_event ev = NULL;
    const cl_event *wl;
    cl_uint nw = dgr_cl_take_waits(k, &wl);
    e = clEnqueueNDRangeKernel(dgr_cl_queue(k), kern, dims, NULL, global,
                               local, nw, wl,
                               dgr_cl_want_event(k) ? &ev : NULL);
    if (e != CL_SUCCESS)
        untake_waits(k, wl, nw); /* not consumed */
    pthread_mutex_unlock(&cd->c->lock);
    if (e != CL_SUCCESS)
        return dgr_cl_kfail(k, "clEnqueueNDRangeKernel", e);
    if (ev)
        dgr_cl_set_event(k, ev);
    return DG_OK;
}

size_t dgr_cl_kernel_wg(dgr_kctx *k, const char *src, dg_dtype dt,
                        const char *name)
{
    dgr_cl_dev *cd = dgr_cl_devof(k);
    cl_kernel kern;
    size_t wg = 0;
    pthread_mutex_lock(&cd->c->lock);
    dg_status st = dgr_cl_get_kernel_locked(cd->c, src, dt, name, &kern, &wg,
                                            k->err);
    pthread_mutex_unlock(&cd->c->lock);
    if (st != DG_OK) {
        node_err(k, st);
        return 0;
    }
    return wg;
}

/* Work-group size of a 1-D launch: 256, or the largest power of two the
 * kernel allows on the device when that is less. */
static size_t wg_size(dgr_kctx *k, const char *src, dg_dtype dt,
                      const char *name)
{
    size_t lim = dgr_cl_kernel_wg(k, src, dt, name);
    if (lim == 0)
        return 0;
    size_t w = 1;
    while (w * 2 <= lim && w < 256)
        w *= 2;
    return w;
}

dg_status dgr_cl_launch1d(dgr_kctx *k, const char *src, dg_dtype dt,
                          const char *name, size_t n, const dgr_cl_arg *args,
                          int n_args)
{
    if (n == 0)
        return DG_OK;
    size_t l = wg_size(k, src, dt, name);
    if (l == 0)
        return k->err->code ? k->err->code : DG_E_RUNTIME;
    size_t g = (n + l - 1) / l * l;
    return dgr_cl_launch(k, src, dt, name, 1, &g, &l, args, n_args);
}

dg_status dgr_cl_reduce_wg(dgr_kctx *k, const char *src, dg_dtype dt,
                           const char *name, size_t want, size_t elem,
                           size_t *out)
{
    dgr_cl_dev *cd = dgr_cl_devof(k);
    size_t kmax = dgr_cl_kernel_wg(k, src, dt, name);
    if (!kmax)
        return k->err->code ? k->err->code : DG_E_RUNTIME;
    size_t lim = 256;
    if (kmax < lim)
        lim = kmax;
    if (cd->c->max_wg < lim)
        lim = cd->c->max_wg;
    while (elem && lim > 1 && lim * elem * 2 > cd->c->local_mem)
        lim /= 2;
    /* at least 4 where allowed: PoCL's work-group compiler aborts on some
     * barrier kernels specialised for local sizes 1 and 2 ("Could not find a
     * dominating alternative variable", issue 22: EfficientNet's 1x1
     * batch norms) */
    size_t w = lim >= 4 ? 4 : 1;
    while (w * 2 <= lim && w < want)
        w *= 2;
    *out = w;
    return DG_OK;
}

dg_status dgr_cl_enqueued(dgr_kctx *k, const char *call, cl_int e,
                          const cl_event *waits, cl_uint n_waits, cl_event ev)
{
    if (e != CL_SUCCESS) {
        untake_waits(k, waits, n_waits); /* not consumed */
        return dgr_cl_kfail(k, call, e);
    }
    dgr_cl_set_event(k, ev);
    return DG_OK;
}

dg_status dgr_cl_need_float(dgr_kctx *k, dg_dtype dt)
{
    if (dt == DG_F32 || (dt == DG_F64 && dgr_cl_devof(k)->c->fp64))
        return DG_OK;
    return dg_err(k->err, DG_E_RUNTIME,
                  "node '%s': %s has no OpenCL kernel for %s",
                  k->node->name, dgc_op_name(k->node->op), dg_dtype_name(dt));
}

dg_status dgr_cl_float_output(dgr_kctx *k, dg_dtype dt)
{
    dg_status st = dgr_cl_need_float(k, dt);
    return st == DG_OK ? dgr_kctx_alloc_output(k, 0) : st;
}
