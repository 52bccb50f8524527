/*
 * exec_resources.c -- TensorArrays and stacks (issue 11), CPU-resident as
 * in TensorFlow: a per-run table of resources, owned by the run of the
 * executor with frames; a handle is an int64 scalar holding the resource's
 * index in that table (+ 1), so it flows through Enter/Exit/Identity like
 * any tensor and is only meaningful within its run.  The elements are
 * host buffers (the ops are placed on host-memory devices; values from
 * other devices arrive through transfers).
 *
 * TensorArray: a vector of optional elements of one dtype; Write stores
 * (a gradient array, made by TensorArrayGradV3 once per (array, source),
 * adds writes to an index written before: TF's accumulation), Read
 * returns the element (zeros of the element shape for an index a gradient
 * array never had written), Scatter/Gather split and stack along axis 0,
 * dynamic_size grows on writes; a TF 2 TensorList's array (attr
 * _tensor_list, issue 24) replaces an element written before.  Stack:
 * push and pop.
 */
#include "exec_frames.h"
#include "dg_util.h"
#include "ops.h"
#include "attr_get.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

typedef struct fx_resource {
    int kind;                 /* 1 TensorArray, 2 stack */
    dg_dtype dtype;
    int dynamic, is_grad;
    int is_list;              /* a TF 2 TensorList: writes replace */
    dg_shape elem;            /* element shape, rank -1 unknown */
    dgr_value *v;             /* elements (buf NULL: not written) */
    int64_t n, cap;
    char *source;             /* gradient arrays: the source they are for */
    int64_t grad_of;          /* index of the forward array, -1 */
} fx_resource;

struct dgr_fx_res {
    pthread_mutex_t mu;
    fx_resource *r;
    int64_t n, cap;
};

dgr_fx_res *dgr_fx_res_new(void)
{
    dgr_fx_res *t = dg_calloc(1, sizeof *t);
    if (t)
        pthread_mutex_init(&t->mu, NULL);
    return t;
}

static void res_clear(fx_resource *r)
{
    for (int64_t i = 0; i < r->n; i++)
        if (r->v[i].buf)
            dgr_buffer_release(r->v[i].buf);
    dg_free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}

void dgr_fx_res_free(dgr_fx_res *t)
{
    if (!t)
        return;
    for (int64_t i = 0; i < t->n; i++) {
        res_clear(&t->r[i]);
        dg_free(t->r[i].source);
    }
    dg_free(t->r);
    pthread_mutex_destroy(&t->mu);
    dg_free(t);
}

#define RERR(...) dg_err(err, DG_E_RUNTIME, __VA_ARGS__)

static int64_t scalar_i(const dgr_value *v)
{
    if (!v->buf)
        return 0;
    if (v->dtype == DG_I64)
        return *(const int64_t *)v->buf->host;
    return *(const int32_t *)v->buf->host;
}

static dg_status new_value(dgr_device *dev, dgr_value *o, dg_dtype dt,
                           const dg_shape *s, dg_error *err)
{
    o->dtype = dt;
    o->shape = *s;
    size_t nb = (size_t)dg_shape_numel(s) * dg_dtype_size(dt);
    o->buf = dgr_buffer_new(dev, nb, 0, err);
    return o->buf ? DG_OK : err->code;
}

static dg_status scalar_out(dgr_device *dev, dgr_value *o, dg_dtype dt,
                            int64_t x, dg_error *err)
{
    dg_shape s;
    memset(&s, 0, sizeof s);
    dg_status rc = new_value(dev, o, dt, &s, err);
    if (rc != DG_OK)
        return rc;
    if (dt == DG_I64)
        *(int64_t *)o->buf->host = x;
    else if (dt == DG_I32)
        *(int32_t *)o->buf->host = (int32_t)x;
    else
        *(float *)o->buf->host = (float)x;
    return DG_OK;
}

/* A new resource; its index, or -1 on nomem. */
static int64_t res_add(dgr_fx_res *t, int kind)
{
    if (t->n == t->cap) {
        int64_t nc = t->cap ? t->cap * 2 : 8;
        fx_resource *nr = dg_realloc(t->r, sizeof *nr * (size_t)nc);
        if (!nr)
            return -1;
        t->r = nr;
        t->cap = nc;
    }
    fx_resource *r = &t->r[t->n];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->elem.rank = -1;
    r->grad_of = -1;
    return t->n++;
}

static fx_resource *res_get(dgr_fx_res *t, const dgc_node *n,
                            const dgr_value *h, int kind, dg_error *err)
{
    int64_t i = scalar_i(h) - 1;
    if (i < 0 || i >= t->n || t->r[i].kind != kind) {
        RERR("node '%s': input 0 is not a %s handle of this run", n->name,
             kind == 1 ? "TensorArray" : "stack");
        return NULL;
    }
    return &t->r[i];
}

static int ensure(fx_resource *r, int64_t n)
{
    if (n <= r->cap) {
        if (n > r->n)
            r->n = n;
        return 0;
    }
    int64_t nc = r->cap ? r->cap : 4;
    while (nc < n)
        nc *= 2;
    dgr_value *nv = dg_realloc(r->v, sizeof *nv * (size_t)nc);
    if (!nv)
        return -1;
    memset(nv + r->cap, 0, sizeof *nv * (size_t)(nc - r->cap));
    r->v = nv;
    r->cap = nc;
    r->n = n;
    return 0;
}

/* Store v (retained, or added to what is there in a gradient array) at
 * index i. */
static dg_status ta_put(fx_resource *r, dgr_device *dev, const dgc_node *n,
                        int64_t i, const dgr_value *v, dg_error *err)
{
    if (i < 0 || (i >= r->n && !r->dynamic))
        return RERR("node '%s': index %lld is outside the TensorArray of "
                    "size %lld", n->name, (long long)i, (long long)r->n);
    if (v->dtype != r->dtype)
        return RERR("node '%s': writing %s to a TensorArray of %s", n->name,
                    dg_dtype_name(v->dtype), dg_dtype_name(r->dtype));
    if (r->elem.rank >= 0) {
        for (int d = 0; d < r->elem.rank && d < v->shape.rank; d++)
            if (r->elem.dims[d] >= 0 && r->elem.dims[d] != v->shape.dims[d])
                return RERR("node '%s': element shape does not match the "
                            "TensorArray's", n->name);
    }
    if (ensure(r, i + 1 > r->n ? i + 1 : r->n))
        return dg_err_nomem(err, "TensorArray");
    dgr_value *e = &r->v[i];
    if (e->buf && r->is_grad) {
        if (!dg_shape_same(&e->shape, &v->shape))
            return RERR("node '%s': gradient writes of different shapes to "
                        "index %lld", n->name, (long long)i);
        dgr_value sum;
        dg_status rc = new_value(dev, &sum, v->dtype, &v->shape, err);
        if (rc != DG_OK)
            return rc;
        int64_t m = dg_shape_numel(&v->shape);
        if (v->dtype == DG_F32) {
            const float *a = e->buf->host, *b = v->buf->host;
            float *o = sum.buf->host;
            for (int64_t k = 0; k < m; k++)
                o[k] = a[k] + b[k];
        } else if (v->dtype == DG_F64) {
            const double *a = e->buf->host, *b = v->buf->host;
            double *o = sum.buf->host;
            for (int64_t k = 0; k < m; k++)
                o[k] = a[k] + b[k];
        } else {
            dgr_buffer_release(sum.buf);
            return RERR("node '%s': gradient TensorArray of %s", n->name,
                        dg_dtype_name(v->dtype));
        }
        dgr_buffer_release(e->buf);
        *e = sum;
        return DG_OK;
    }
    if (e->buf && !r->is_grad && !r->is_list)
        return RERR("node '%s': index %lld of the TensorArray was already "
                    "written", n->name, (long long)i);
    if (e->buf) /* a TensorList's SetItem replaces the element */
        dgr_buffer_release(e->buf);
    *e = *v;
    dgr_buffer_retain(v->buf);
    if (r->elem.rank < 0 || dg_shape_numel(&r->elem) < 0)
        r->elem = v->shape;
    return DG_OK;
}

static dg_status ta_get(fx_resource *r, dgr_device *dev, const dgc_node *n,
                        int64_t i, dgr_value *o, dg_error *err)
{
    if (i < 0 || i >= r->n)
        return RERR("node '%s': index %lld is outside the TensorArray of "
                    "size %lld", n->name, (long long)i, (long long)r->n);
    if (r->v && r->v[i].buf) {
        *o = r->v[i];
        dgr_buffer_retain(o->buf);
        return DG_OK;
    }
    if (r->elem.rank < 0 || dg_shape_numel(&r->elem) < 0)
        return RERR("node '%s': index %lld of the TensorArray was never "
                    "written", n->name, (long long)i);
    dg_status rc = new_value(dev, o, r->dtype, &r->elem, err);
    if (rc == DG_OK)
        memset(o->buf->host, 0, o->buf->nbytes);
    return rc;
}

static void shape_attr(const dgc_node *n, dg_shape *s)
{
    const dgc_attr *a = dgc_attr_at(n, DGC_AT_element_shape);
    s->rank = -1;
    if (!a || a->kind != DGC_A_SHAPE || a->n > DG_MAX_RANK)
        return;
    s->rank = a->n;
    for (int i = 0; i < a->n; i++)
        s->dims[i] = a->ints[i];
}

static dg_status ta_scatter(fx_resource *r, dgr_device *dev,
                            const dgc_node *n, const dgr_value *idx,
                            const dgr_value *v, dg_error *err)
{
    int64_t k = dg_shape_numel(&idx->shape);
    if (v->shape.rank < 1 || v->shape.dims[0] != k)
        return RERR("node '%s': %lld indices for a value of %lld rows",
                    n->name, (long long)k,
                    (long long)(v->shape.rank ? v->shape.dims[0] : 0));
    dg_shape es = v->shape;
    es.rank--;
    memmove(es.dims, es.dims + 1, sizeof es.dims[0] * (size_t)es.rank);
    size_t row = (size_t)dg_shape_numel(&es) * dg_dtype_size(v->dtype);
    for (int64_t j = 0; j < k; j++) {
        int64_t i = idx->dtype == DG_I64 ? ((const int64_t *)idx->buf->host)[j]
                                         : ((const int32_t *)idx->buf->host)[j];
        dgr_value e;
        dg_status rc = new_value(dev, &e, v->dtype, &es, err);
        if (rc != DG_OK)
            return rc;
        memcpy(e.buf->host, (const char *)v->buf->host + row * (size_t)j, row);
        rc = ta_put(r, dev, n, i, &e, err);
        dgr_buffer_release(e.buf);
        if (rc != DG_OK)
            return rc;
    }
    return DG_OK;
}

static dg_status ta_gather(fx_resource *r, dgr_device *dev,
                           const dgc_node *n, const dgr_value *idx,
                           dgr_value *o, dg_error *err)
{
    int64_t k = dg_shape_numel(&idx->shape);
    dgr_value *el = dg_calloc((size_t)k + 1, sizeof *el);
    if (!el)
        return dg_err_nomem(err, "TensorArray gather");
    dg_status rc = DG_OK;
    for (int64_t j = 0; j < k && rc == DG_OK; j++) {
        int64_t i = idx->dtype == DG_I64 ? ((const int64_t *)idx->buf->host)[j]
                                         : ((const int32_t *)idx->buf->host)[j];
        rc = ta_get(r, dev, n, i, &el[j], err);
        if (rc == DG_OK && j > 0 && !dg_shape_same(&el[j].shape, &el[0].shape))
            rc = RERR("node '%s': elements of different shapes", n->name);
    }
    dg_shape s;
    memset(&s, 0, sizeof s);
    if (rc == DG_OK) {
        dg_shape es = k > 0 ? el[0].shape : r->elem;
        if (es.rank < 0 || es.rank + 1 > DG_MAX_RANK)
            rc = RERR("node '%s': gathering an empty TensorArray of unknown "
                      "element shape", n->name);
        s.rank = es.rank + 1;
        s.dims[0] = k;
        for (int d = 0; d < es.rank; d++)
            s.dims[d + 1] = es.dims[d];
    }
    if (rc == DG_OK)
        rc = new_value(dev, o, r->dtype, &s, err);
    if (rc == DG_OK) {
        size_t row = k > 0 ? el[0].buf->nbytes : 0;
        for (int64_t j = 0; j < k; j++)
            memcpy((char *)o->buf->host + row * (size_t)j, el[j].buf->host,
                   row);
    }
    for (int64_t j = 0; j < k; j++)
        if (el[j].buf)
            dgr_buffer_release(el[j].buf);
    dg_free(el);
    return rc;
}

static dg_status run_locked(dgr_fx_res *t, dgr_device *dev,
                            const dgc_node *n, const dgr_value *in,
                            dgr_value *out, dg_error *err)
{
    fx_resource *r;
    dg_status rc;
    switch (n->op) {
    case DGC_OPID_TensorArrayV3: {
        int64_t size = scalar_i(&in[0]);
        if (size < 0)
            return RERR("node '%s': negative size %lld", n->name,
                        (long long)size);
        int64_t i = res_add(t, 1);
        if (i < 0)
            return dg_err_nomem(err, "TensorArray");
        r = &t->r[i];
        r->dtype = (dg_dtype)dgc_attr_i(n, DGC_AT_dtype);
        r->dynamic = dgc_attr_b(n, DGC_AT_dynamic_size);
        r->is_list = dgc_attr_b(n, DGC_AT__tensor_list);
        shape_attr(n, &r->elem);
        if (ensure(r, size))
            return dg_err_nomem(err, "TensorArray");
        r->n = size;
        if ((rc = scalar_out(dev, &out[0], DG_I64, i + 1, err)) != DG_OK)
            return rc;
        return scalar_out(dev, &out[1], DG_F32, 0, err);
    }
    case DGC_OPID_TensorArrayGradV3: {
        if (!(r = res_get(t, n, &in[0], 1, err)))
            return err->code;
        int64_t fwd = r - t->r;
        const dgc_attr *sa = dgc_attr_at(n, DGC_AT_source);
        const char *src = sa && sa->kind == DGC_A_STR && sa->s ? sa->s : "";
        int64_t g = -1;
        for (int64_t i = 0; i < t->n && g < 0; i++)
            if (t->r[i].grad_of == fwd && strcmp(t->r[i].source, src) == 0)
                g = i;
        if (g < 0) {
            g = res_add(t, 1);
            if (g < 0)
                return dg_err_nomem(err, "TensorArray");
            fx_resource *f = &t->r[fwd], *gr = &t->r[g];
            gr->dtype = f->dtype;
            gr->elem = f->elem;
            gr->is_grad = 1;
            gr->dynamic = f->dynamic;
            gr->grad_of = fwd;
            if (!(gr->source = dg_strdup(src)) || ensure(gr, f->n))
                return dg_err_nomem(err, "TensorArray");
            gr->n = f->n;
        }
        if ((rc = scalar_out(dev, &out[0], DG_I64, g + 1, err)) != DG_OK)
            return rc;
        return scalar_out(dev, &out[1], DG_F32, 0, err);
    }
    case DGC_OPID_TensorArrayWriteV3:
        if (!(r = res_get(t, n, &in[0], 1, err)))
            return err->code;
        if ((rc = ta_put(r, dev, n, scalar_i(&in[1]), &in[2], err)) != DG_OK)
            return rc;
        return scalar_out(dev, &out[0], DG_F32, 0, err);
    case DGC_OPID_TensorArrayScatterV3:
        if (!(r = res_get(t, n, &in[0], 1, err)))
            return err->code;
        if ((rc = ta_scatter(r, dev, n, &in[1], &in[2], err)) != DG_OK)
            return rc;
        return scalar_out(dev, &out[0], DG_F32, 0, err);
    case DGC_OPID_TensorArrayReadV3:
        if (!(r = res_get(t, n, &in[0], 1, err)))
            return err->code;
        return ta_get(r, dev, n, scalar_i(&in[1]), &out[0], err);
    case DGC_OPID_TensorArrayGatherV3:
        if (!(r = res_get(t, n, &in[0], 1, err)))
            return err->code;
        return ta_gather(r, dev, n, &in[1], &out[0], err);
    case DGC_OPID_TensorArraySizeV3:
        if (!(r = res_get(t, n, &in[0], 1, err)))
            return err->code;
        return scalar_out(dev, &out[0], DG_I32, r->n, err);
    case DGC_OPID_TensorArrayCloseV3:
        if (!(r = res_get(t, n, &in[0], 1, err)))
            return err->code;
        res_clear(r);
        return DG_OK;
    case DGC_OPID_StackV2: {
        int64_t i = res_add(t, 2);
        if (i < 0)
            return dg_err_nomem(err, "stack");
        t->r[i].dtype = (dg_dtype)dgc_attr_i(n, DGC_AT_elem_type);
        return scalar_out(dev, &out[0], DG_I64, i + 1, err);
    }
    case DGC_OPID_StackPushV2:
        if (!(r = res_get(t, n, &in[0], 2, err)))
            return err->code;
        if (ensure(r, r->n + 1))
            return dg_err_nomem(err, "stack");
        r->v[r->n - 1] = in[1];
        dgr_buffer_retain(in[1].buf);
        out[0] = in[1];
        dgr_buffer_retain(in[1].buf);
        return DG_OK;
    case DGC_OPID_StackPopV2:
        if (!(r = res_get(t, n, &in[0], 2, err)))
            return err->code;
        if (r->n == 0)
            return RERR("node '%s': pop from an empty stack", n->name);
        out[0] = r->v[--r->n];
        memset(&r->v[r->n], 0, sizeof r->v[r->n]);
        return DG_OK;
    case DGC_OPID_StackCloseV2:
        if (!(r = res_get(t, n, &in[0], 2, err)))
            return err->code;
        res_clear(r);
        return DG_OK;
    default:
        return RERR("node '%s': %s is not a resource op", n->name,
                    dgc_node_op_name(n));
    }
}

dg_status dgr_fx_res_run(dgr_fx_res *t, dgr_device *dev, const dgc_node *n,
                         const dgr_value *in, int n_in, dgr_value *out,
                         int n_out, dg_error *err)
{
    (void)n_out;
    for (int i = 0; i < n_in; i++)
        if (!in[i].buf && dg_shape_numel(&in[i].shape) != 0)
            return RERR("node '%s': input %d is empty", n->name, i);
    pthread_mutex_lock(&t->mu);
    dg_status rc = run_locked(t, dev, n, in, out, err);
    pthread_mutex_unlock(&t->mu);
    return rc;
}
