/*
 * cl_kernels_tf.c -- OpenCL kernels of the TF graph ops of issue 10 that
 * are no elementwise math (opencl_kernels/tf.cl): Tile, ConcatV2, GatherV2 and
 * L2Loss.  Output shapes come from inference (k->out_types); these only
 * enqueue.
 */
#include "cl_internal.h"
#include "infer.h"

#include <string.h>

static cl_long8 long8_of(const int64_t *v, int n)
{
    cl_long8 x;
    memset(&x, 0, sizeof x);
    for (int i = 0; i < n && i < 8; i++)
        x.s[i] = v[i];
    return x;
}

dg_status dgr_cl_k_tile(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *xs = &k->in[0].shape, *os = &k->out[0].shape;
    cl_long n = dg_shape_numel(os);
    if (n == 0)
        return DG_OK;
    if (xs->rank > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': Tile of rank %d on "
                      "OpenCL (at most 8)", k->node->name, xs->rank);
    int64_t str[DG_MAX_RANK], acc = 1;
    for (int i = xs->rank - 1; i >= 0; i--) {
        str[i] = acc;
        acc *= xs->dims[i];
    }
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_int rank = xs->rank;
    cl_long8 od = long8_of(os->dims, os->rank), xd = long8_of(xs->dims,
                                                              xs->rank),
             x8 = long8_of(str, xs->rank);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n), DGR_ARG(rank),
                      DGR_ARG(od), DGR_ARG(xd), DGR_ARG(x8)};
    return dgr_cl_launch1d(k, "tf", dt, "tile", (size_t)n, a, 7);
}
DGR_KERNEL(Tile, dgr_cl_k_tile);

/* 2-D range: dim 0 over `cols` in groups of 64, dim 1 over rows. */
/* A 2-D grid of `rows` rows of groups of 64 work-items (fewer when the
 * kernel allows fewer on the device: lim, a CL_KERNEL_WORK_GROUP_SIZE). */
static void grid2(size_t cols, size_t rows, size_t lim, size_t g[2],
                  size_t l[2])
{
    size_t w = 64;
    while (w > 1 && w > lim)
        w /= 2;
    l[0] = w;
    l[1] = 1;
    g[0] = (cols + w - 1) / w * w;
    g[1] = rows;
}

/* The int elements of input i, read back to the host (a blocking read of
 * a few elements: TF keeps these parameters in host memory). */
static dg_status host_ints(dgr_kctx *k, int i, int64_t *v, int *n)
{
    const dgr_value *p = &k->in[i];
    int64_t cnt = dg_shape_numel(&p->shape);
    if (cnt > DG_MAX_RANK * 2 || (p->dtype != DG_I32 && p->dtype != DG_I64))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': input %d must be a "
                      "short int32/int64 vector", k->node->name, i);
    int64_t raw[DG_MAX_RANK * 2];
    size_t bytes = (size_t)cnt * dg_dtype_size(p->dtype);
    if (cnt > 0) {
        dg_status st = k->dev->be->read(k->dev, p->buf, raw, bytes, k->err);
        if (st != DG_OK)
            return st;
    }
    for (int64_t j = 0; j < cnt; j++)
        v[j] = p->dtype == DG_I32 ? ((const int32_t *)raw)[j] : raw[j];
    *n = (int)cnt;
    return DG_OK;
}

/* The axis of a ConcatV2 / Split / SplitV / GatherV2 node for rank r into
 * *ax, >= 0: its attr, or the run-time input dgc_node_axis_input names
 * (issue 21). */
static dg_status node_axis(dgr_kctx *k, int r, int64_t *ax)
{
    int ai = dgc_node_axis_input(k->node), n = 1;
    *ax = dgc_attr_i(k->node, DGC_AT_axis);
    if (ai >= 0) {
        int64_t v[DG_MAX_RANK * 2];
        dg_status st = host_ints(k, ai, v, &n);
        if (st != DG_OK)
            return st;
        *ax = v[0];
    }
    if (n != 1 || *ax < -r || *ax >= r)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': axis %lld is out of "
                      "range for rank %d", k->node->name, (long long)*ax, r);
    if (*ax < 0)
        *ax += r;
    return DG_OK;
}

dg_status dgr_cl_k_concat(dgr_kctx *k)
{
    dg_dtype dt = k->out_types[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *os = &k->out[0].shape;
    int64_t ax;
    if ((st = node_axis(k, os->rank, &ax)) != DG_OK)
        return st;
    int ai = dgc_node_axis_input(k->node);
    int nv = ai >= 0 ? ai : k->n_in; /* a run-time axis is the last input */
    cl_long outer = 1;
    for (int d = 0; d < ax; d++)
        outer *= os->dims[d];
    if (outer == 0 || dg_shape_numel(os) == 0)
        return DG_OK;
    cl_long orow = dg_shape_numel(os) / outer, at = 0;
    cl_mem y = dgr_cl_mem(&k->out[0]);
    for (int m = 0; m < nv && st == DG_OK; m++) {
        cl_long row = dg_shape_numel(&k->in[m].shape) / outer;
        if (row == 0)
            continue;
        cl_mem x = dgr_cl_mem(&k->in[m]);
        size_t g[2], l[2];
        grid2((size_t)row, (size_t)outer,
              dgr_cl_kernel_wg(k, "tf", dt, "concat_copy"), g, l);
        dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(outer),
                          DGR_ARG(row), DGR_ARG(orow), DGR_ARG(at)};
        st = dgr_cl_launch(k, "tf", dt, "concat_copy", 2, g, l, a, 6);
        at += row;
    }
    return st;
}
DGR_KERNEL(ConcatV2, dgr_cl_k_concat);
DGR_KERNEL(Pack, dgr_cl_k_concat);

dg_status dgr_cl_k_gather(dgr_kctx *k)
{
    const dgr_value *p = &k->in[0], *ix = &k->in[1];
    dg_dtype dt = p->dtype;
    int64_t ax;
    dg_status st = node_axis(k, p->shape.rank, &ax); /* attr or input 2 */
    if (st != DG_OK || (st = dgr_cl_float_output(k, dt)) != DG_OK)
        return st;
    int64_t nb = dgc_attr_i(k->node, DGC_AT_batch_dims);
    if (nb < 0)
        nb += ix->shape.rank;
    cl_long batch = 1, outer = 1, inner = 1, dim = p->shape.dims[ax];
    for (int d = 0; d < ax; d++)
        outer *= p->shape.dims[d];
    for (int d = 0; d < nb; d++)
        batch *= p->shape.dims[d];
    for (int d = (int)ax + 1; d < p->shape.rank; d++)
        inner *= p->shape.dims[d];
    if (outer * inner == 0 || dg_shape_numel(&ix->shape) == 0)
        return DG_OK;
    cl_long ni = dg_shape_numel(&ix->shape) / batch, nbo = outer / batch;
    cl_mem x = dgr_cl_mem(p), iv = dgr_cl_mem(ix), y = dgr_cl_mem(&k->out[0]);
    size_t g[2], l[2];
    const char *gname = ix->dtype == DG_I64 ? "gather_rows_i64"
                                            : "gather_rows_i32";
    grid2((size_t)inner, (size_t)(outer * ni), dgr_cl_kernel_wg(k, "tf", dt, gname),
          g, l);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(iv), DGR_ARG(y), DGR_ARG(outer),
                      DGR_ARG(ni), DGR_ARG(dim), DGR_ARG(inner), DGR_ARG(nbo)};
    return dgr_cl_launch(k, "tf", dt, gname, 2, g, l, a, 8);
}
DGR_KERNEL(GatherV2, dgr_cl_k_gather);

dg_status dgr_cl_k_l2loss(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    size_t es = dg_dtype_size(dt);
    cl_long n = dg_shape_numel(&k->in[0].shape);
    size_t l;
    if ((st = dgr_cl_reduce_wg(k, "tf", dt, "l2_partial", (size_t)n, es, &l)))
        return st;
    /* enough groups to fill a device, each with >= 4 items per work-item */
    cl_long groups = (n + (cl_long)l * 4 - 1) / ((cl_long)l * 4);
    if (groups > 256)
        groups = 256;
    if (groups < 1)
        groups = 1;
    dgr_buffer *part = dgr_buffer_new(k->dev, (size_t)groups * es, k->stream,
                                      k->err);
    if (!part)
        return k->err->code;
    cl_mem x = dgr_cl_mem(&k->in[0]), pm = part->mem,
           y = dgr_cl_mem(&k->out[0]);
    size_t g = (size_t)groups * l;
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(pm), DGR_ARG(n), DGR_LOCAL(l * es)};
    st = dgr_cl_launch(k, "tf", dt, "l2_partial", 1, &g, &l, a, 4);
    if (st == DG_OK) {
        size_t l2;
        st = dgr_cl_reduce_wg(k, "tf", dt, "l2_final", (size_t)groups, es,
                              &l2);
        dgr_cl_arg b[] = {DGR_ARG(pm), DGR_ARG(y), DGR_ARG(groups),
                          DGR_LOCAL(l2 * es)};
        if (st == DG_OK)
            st = dgr_cl_launch(k, "tf", dt, "l2_final", 1, &l2, &l2, b, 4);
    }
    /* the stream is in order: the memory is reused only after these */
    dgr_buffer_release(part);
    return st;
}
DGR_KERNEL(L2Loss, dgr_cl_k_l2loss);

/* ---- strided views: StridedSlice, Slice, Unpack, Split, SplitV ----------- */

/* Enqueue out = the slice sp of x. */
static dg_status slice_run(dgr_kctx *k, const dgr_value *x,
                           const dgc_slice *sp, dgr_value *out)
{
    cl_long n = dg_shape_numel(&out->shape);
    if (n == 0)
        return DG_OK;
    int r = sp->rank;
    if (r > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': rank %d on OpenCL "
                      "(at most 8)", k->node->name, r);
    int64_t xs[DG_MAX_RANK], step[DG_MAX_RANK], acc = 1;
    cl_long base = 0;
    for (int d = r - 1; d >= 0; d--) {
        xs[d] = acc;
        acc *= x->shape.dims[d];
    }
    for (int d = 0; d < r; d++) {
        step[d] = sp->stride[d] * xs[d];
        base += sp->start[d] * xs[d];
    }
    cl_mem xm = dgr_cl_mem(x), ym = dgr_cl_mem(out);
    cl_int rank = r;
    cl_long8 l8v = long8_of(sp->len, r), s8 = long8_of(step, r);
    dgr_cl_arg a[] = {DGR_ARG(xm), DGR_ARG(ym), DGR_ARG(n), DGR_ARG(rank),
                      DGR_ARG(l8v), DGR_ARG(s8), DGR_ARG(base)};
    return dgr_cl_launch1d(k, "tf", x->dtype, "slice_nd", (size_t)n, a, 7);
}

dg_status dgr_cl_k_slice(dgr_kctx *k)
{
    int64_t b[DG_MAX_RANK * 2], e[DG_MAX_RANK * 2], s[DG_MAX_RANK * 2];
    int nb, ne, ns = 0;
    dg_status st = host_ints(k, 1, b, &nb);
    if (st == DG_OK)
        st = host_ints(k, 2, e, &ne);
    if (st == DG_OK && k->n_in > 3)
        st = host_ints(k, 3, s, &ns);
    if (st != DG_OK)
        return st;
    if (k->n_in <= 3)
        for (int i = 0; i < nb; i++)
            s[i] = 1;
    dgc_slice sp;
    char msg[256];
    int rc = k->node->op == DGC_OPID_Slice
                 ? dgc_slice_simple(&k->in[0].shape, b, e, &sp, msg, sizeof msg)
                 : dgc_slice_spec(k->node, &k->in[0].shape, b, e, s, nb, &sp,
                                  msg, sizeof msg);
    if (rc)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    if ((st = dgr_cl_float_output(k, k->in[0].dtype)) != DG_OK)
        return st;
    return slice_run(k, &k->in[0], &sp, &k->out[0]);
}
DGR_KERNEL(StridedSlice, dgr_cl_k_slice);
DGR_KERNEL(Slice, dgr_cl_k_slice);

dg_status dgr_cl_k_split(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    dg_status st = dgr_cl_need_float(k, x->dtype);
    if (st != DG_OK)
        return st;
    int unpack = k->node->op == DGC_OPID_Unpack;
    int64_t ax = dgc_attr_i(k->node, DGC_AT_axis);
    if (ax < 0)
        ax += x->shape.rank;
    if (!unpack && (st = node_axis(k, x->shape.rank, &ax)) != DG_OK)
        return st;
    int64_t at = 0;
    for (int i = 0; i < k->n_out && st == DG_OK; i++) {
        if ((st = dgr_kctx_alloc_output(k, i)) != DG_OK)
            return st;
        dgc_slice sp;
        memset(&sp, 0, sizeof sp);
        sp.rank = x->shape.rank;
        for (int d = 0; d < sp.rank; d++) {
            sp.stride[d] = 1;
            sp.len[d] = x->shape.dims[d];
        }
        int64_t len = unpack ? 1 : k->out[i].shape.dims[ax];
        sp.start[ax] = at;
        sp.len[ax] = len;
        at += len;
        st = slice_run(k, x, &sp, &k->out[i]);
    }
    return st;
}
DGR_KERNEL(Unpack, dgr_cl_k_split);
DGR_KERNEL(Split, dgr_cl_k_split);
DGR_KERNEL(SplitV, dgr_cl_k_split);

/* BroadcastTo: Tile's kernel with the input right-aligned. */
dg_status dgr_cl_k_broadcast_to(dgr_kctx *k)
{
    dgr_value x = k->in[0];
    x.shape = dgr_shape_right_align(&x.shape, k->out_types[0].shape.rank);
    dgr_kctx kk = *k;
    kk.in = &x;
    dg_status st = dgr_cl_k_tile(&kk);
    k->event = kk.event;
    k->n_waits = kk.n_waits;
    return st;
}
DGR_KERNEL(BroadcastTo, dgr_cl_k_broadcast_to);

dg_status dgr_cl_k_pad(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    int64_t p[DG_MAX_RANK * 2];
    int np;
    dg_status st = host_ints(k, 1, p, &np);
    if (st != DG_OK)
        return st;
    double v = 0;
    if (k->n_in > 2) {
        unsigned char raw[8];
        if ((st = k->dev->be->read(k->dev, k->in[2].buf, raw,
                                   dg_dtype_size(x->dtype), k->err)))
            return st;
        float f;
        memcpy(&f, raw, sizeof f);
        memcpy(&v, raw, sizeof v);
        if (x->dtype == DG_F32)
            v = f;
    }
    if ((st = dgr_cl_float_output(k, x->dtype)) != DG_OK)
        return st;
    const dg_shape *os = &k->out[0].shape;
    cl_long n = dg_shape_numel(os);
    if (n == 0)
        return DG_OK;
    int64_t lo[DG_MAX_RANK];
    for (int d = 0; d < os->rank; d++)
        lo[d] = p[2 * d];
    cl_mem xm = dgr_cl_mem(x), ym = dgr_cl_mem(&k->out[0]);
    cl_int rank = os->rank;
    cl_long8 od = long8_of(os->dims, os->rank), l8v = long8_of(lo, os->rank),
             xd = long8_of(x->shape.dims, x->shape.rank);
    cl_float vf = (cl_float)v;
    cl_double vd = v;
    dgr_cl_arg a[] = {DGR_ARG(xm), DGR_ARG(ym), DGR_ARG(n), DGR_ARG(rank),
                      DGR_ARG(od), DGR_ARG(l8v), DGR_ARG(xd),
                      x->dtype == DG_F64 ? DGR_ARG(vd) : DGR_ARG(vf)};
    return dgr_cl_launch1d(k, "tf", x->dtype, "pad_nd", (size_t)n, a, 8);
}
DGR_KERNEL(Pad, dgr_cl_k_pad);

dg_status dgr_cl_k_log_softmax(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *s = &k->in[0].shape;
    cl_long C = s->rank ? s->dims[s->rank - 1] : 1;
    size_t rows = C ? (size_t)(dg_shape_numel(s) / C) : 0;
    if (rows == 0)
        return DG_OK;
    size_t es = dg_dtype_size(dt), l;
    if ((st = dgr_cl_reduce_wg(k, "tf", dt, "log_softmax", (size_t)C, es,
                               &l)))
        return st;
    size_t g = rows * l;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(C), DGR_LOCAL(l * es)};
    return dgr_cl_launch(k, "tf", dt, "log_softmax", 1, &g, &l, a, 4);
}
DGR_KERNEL(LogSoftmax, dgr_cl_k_log_softmax);
