/*
 * cl_kernels_data.c -- OpenCL kernels of the data-movement ops TensorFlow
 * runs on GPUs that dgrun ran in host memory before (issue 22): Fill,
 * GatherNd, MirrorPadGrad, DynamicStitch, Where, DynamicPartition and
 * TopKV2; their OpenCL C is opencl_kernels/data.cl.  The integer
 * arguments TF keeps in host memory (Fill's dims, MirrorPadGrad's
 * paddings, TopKV2's k, DynamicStitch's indices when inference could not
 * size the output) are read back, a few elements, and so are the counts
 * that size Where's and DynamicPartition's outputs (count on the device,
 * read the totals, allocate, fill: TF's GPU kernels' way); the data never
 * leaves the device.
 */
#include "cl_internal.h"
#include "dg_alloc.h"

#include <string.h>

static cl_long numel(const dg_shape *s) { return dg_shape_numel(s); }

/* Fill: the output's shape comes from dims (inferred at run time); the
 * value, a 0-d tensor on the device, is copied to every element. */
dg_status dgr_cl_k_fill(dgr_kctx *k)
{
    dg_dtype dt = k->out_types[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_long n = numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    if (numel(&k->in[1].shape) != 1)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': value must be a "
                      "scalar", k->node->name);
    cl_mem v = dgr_cl_mem(&k->in[1]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(v), DGR_ARG(y), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "data", dt, "d_fill", (size_t)n, a, 3);
}
DGR_KERNEL(Fill, dgr_cl_k_fill);

/* GatherNd (params, indices): indices' last axis K addresses params' first
 * K dims; an out-of-range tuple gives zeros, as TF's GPU kernel (the CPU
 * kernel fails naming it). */
dg_status dgr_cl_k_gather_nd(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *ps = &k->in[0].shape, *is = &k->in[1].shape;
    int K = is->rank > 0 ? (int)is->dims[is->rank - 1] : 0;
    if (is->rank < 1 || K > ps->rank || K > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': index tuples of %d "
                      "elements for params of rank %d", k->node->name, K,
                      ps->rank);
    int64_t pd[8], pstr[8], inner = 1;
    for (int d = ps->rank - 1; d >= K; d--)
        inner *= ps->dims[d];
    int64_t acc = 1;
    for (int d = K - 1; d >= 0; d--) {
        pd[d] = ps->dims[d];
        pstr[d] = acc;
        acc *= ps->dims[d];
    }
    cl_long n = numel(&k->out[0].shape), cin = inner;
    if (n == 0)
        return DG_OK;
    cl_int ck = K;
    cl_long8 pd8 = dgr_cl_long8(pd, K), ps8 = dgr_cl_long8(pstr, K);
    cl_mem p = dgr_cl_mem(&k->in[0]), ix = dgr_cl_mem(&k->in[1]),
           y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(p), DGR_ARG(ix), DGR_ARG(y), DGR_ARG(n),
                      DGR_ARG(cin), DGR_ARG(ck), DGR_ARG(pd8), DGR_ARG(ps8)};
    return dgr_cl_launch1d(k, "data", dt, k->in[1].dtype == DG_I64
                           ? "d_gather_nd_i64" : "d_gather_nd_i32",
                           (size_t)n, a, 8);
}
DGR_KERNEL(GatherNd, dgr_cl_k_gather_nd);

/* MirrorPadGrad (dy, paddings): each output element sums the up to 3^rank
 * entries of dy that mirror onto it. */
dg_status dgr_cl_k_mirror_pad_grad(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *bs = &k->in[0].shape, *os = &k->out[0].shape;
    if (bs->rank > 8 || os->rank != bs->rank)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': rank %d (at most 8)",
                      k->node->name, bs->rank);
    int64_t pads[2 * DG_MAX_RANK], pl[DG_MAX_RANK];
    int np = 0;
    if ((st = dgr_cl_small_ints(k, 1, pads, 2 * DG_MAX_RANK, &np)) != DG_OK)
        return st;
    if (np != 2 * bs->rank)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': paddings of %d "
                      "elements for rank %d", k->node->name, np, bs->rank);
    for (int d = 0; d < bs->rank; d++) {
        pl[d] = pads[2 * d];
        if (pl[d] < 0 || pads[2 * d + 1] < 0 ||
            os->dims[d] + pl[d] + pads[2 * d + 1] != bs->dims[d])
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': paddings do not "
                          "fit dimension %d", k->node->name, d);
    }
    const dgc_attr *m = dgc_attr_at(k->node, DGC_AT_mode);
    cl_int sym = m && m->s && strcmp(m->s, "SYMMETRIC") == 0;
    cl_long n = numel(os);
    if (n == 0)
        return DG_OK;
    cl_int rank = bs->rank;
    cl_long8 o8 = dgr_cl_long8(os->dims, rank),
             b8 = dgr_cl_long8(bs->dims, rank), p8 = dgr_cl_long8(pl, rank);
    cl_mem dy = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(dy), DGR_ARG(y),  DGR_ARG(n),  DGR_ARG(rank),
                      DGR_ARG(o8), DGR_ARG(b8), DGR_ARG(p8), DGR_ARG(sym)};
    return dgr_cl_launch1d(k, "data", dt, "d_mirror_pad_grad", (size_t)n, a,
                           8);
}
DGR_KERNEL(MirrorPadGrad, dgr_cl_k_mirror_pad_grad);

/* The output rows of a DynamicStitch whose inference could not tell them
 * (more indices than run-time inference reads): the largest index + 1,
 * from the indices read back (TF keeps them in host memory). */
static dg_status stitch_rows(dgr_kctx *k, int nn, int64_t *rows)
{
    int64_t max = -1;
    for (int m = 0; m < nn; m++) {
        int64_t c = numel(&k->in[m].shape);
        if (c == 0)
            continue;
        int32_t *h = dg_malloc((size_t)c * sizeof *h);
        if (!h)
            return dg_err_nomem(k->err, "DynamicStitch indices");
        dg_status st = dgr_cl_read(k->dev, k->in[m].buf, h,
                                   (size_t)c * sizeof *h, k->err);
        for (int64_t i = 0; i < c && st == DG_OK; i++)
            max = h[i] > max ? h[i] : max;
        dg_free(h);
        if (st != DG_OK)
            return st;
    }
    *rows = max + 1;
    return DG_OK;
}

/* DynamicStitch (indices 0..N-1, data N..2N-1): out[indices[m][i]] =
 * data[m][i], the last (m, i) naming a row winning (TF); rows none names
 * are 0.  Three passes on the device over a vector of winners (int32 per
 * output row), no host copy of the data. */
dg_status dgr_cl_k_dynamic_stitch(dgr_kctx *k)
{
    dg_dtype dt = k->out_types[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    int nn = k->n_in / 2;
    for (int m = 0; m < nn; m++)
        if (k->in[m].dtype != DG_I32)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': indices %d are "
                          "%s, not int32", k->node->name, m,
                          dg_dtype_name(k->in[m].dtype));
    dgc_ttype t = k->out_types[0];
    if (t.shape.rank < 1)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': the output has "
                      "rank 0", k->node->name);
    if (t.shape.dims[0] < 0) {
        if ((st = stitch_rows(k, nn, &t.shape.dims[0])) != DG_OK)
            return st;
        for (int d = 1; d < t.shape.rank; d++)
            if (t.shape.dims[d] < 0) /* data 0's, past its indices' dims */
                t.shape.dims[d] =
                    k->in[nn].shape.dims[k->in[0].shape.rank + d - 1];
    }
    dgr_kctx kk = *k;
    kk.out_types = &t;
    if ((st = dgr_kctx_alloc_output(&kk, 0)) != DG_OK)
        return st;
    cl_long rows = t.shape.dims[0], n = numel(&t.shape);
    cl_long inner = rows > 0 ? n / rows : 0;
    if (n == 0)
        return DG_OK;
    dgr_buffer *wb = dgr_buffer_new(k->dev, (size_t)rows * sizeof(cl_int),
                                    k->stream, k->err);
    if (!wb)
        return k->err->code ? k->err->code : DG_E_NOMEM;
    cl_mem win = (cl_mem)wb->mem, y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg ai[] = {DGR_ARG(win), DGR_ARG(rows)};
    st = dgr_cl_launch1d(k, "data", dt, "d_stitch_init", (size_t)rows, ai, 2);
    cl_long base = 0;
    for (int m = 0; m < nn && st == DG_OK; m++) {
        cl_long cnt = numel(&k->in[m].shape);
        cl_mem ix = dgr_cl_mem(&k->in[m]);
        dgr_cl_arg a[] = {DGR_ARG(ix), DGR_ARG(win), DGR_ARG(cnt),
                          DGR_ARG(base), DGR_ARG(rows)};
        st = dgr_cl_launch1d(k, "data", dt, "d_stitch_claim", (size_t)cnt,
                             a, 5);
        base += cnt;
    }
    base = 0;
    for (int m = 0; m < nn && st == DG_OK; m++) {
        cl_long cnt = numel(&k->in[m].shape), ne = cnt * inner;
        if (numel(&k->in[nn + m].shape) != ne) {
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': data %d has %lld "
                        "elements, its indices name %lld rows of %lld",
                        k->node->name, m,
                        (long long)numel(&k->in[nn + m].shape),
                        (long long)cnt, (long long)inner);
            break;
        }
        cl_mem ix = dgr_cl_mem(&k->in[m]), x = dgr_cl_mem(&k->in[nn + m]);
        dgr_cl_arg a[] = {DGR_ARG(ix), DGR_ARG(x), DGR_ARG(win), DGR_ARG(y),
                          DGR_ARG(ne), DGR_ARG(inner), DGR_ARG(base),
                          DGR_ARG(rows)};
        st = dgr_cl_launch1d(k, "data", dt, "d_stitch_copy", (size_t)ne, a,
                             8);
        base += cnt;
    }
    if (st == DG_OK) {
        dgr_cl_arg a[] = {DGR_ARG(win), DGR_ARG(y), DGR_ARG(n),
                          DGR_ARG(inner)};
        st = dgr_cl_launch1d(k, "data", dt, "d_stitch_unclaimed", (size_t)n,
                             a, 4);
    }
    /* reused only after the commands above on this in-order queue */
    dgr_buffer_release(wb);
    return st;
}
DGR_KERNEL(DynamicStitch, dgr_cl_k_dynamic_stitch);

/* ---- Where, DynamicPartition: outputs sized by the data ------------------ */

/* Output i of shape s and dtype t, allocated here (the kernel sizes it). */
static dg_status alloc_shaped(dgr_kctx *k, int i, dg_dtype t,
                              const dg_shape *s)
{
    dgr_value *v = &k->out[i];
    v->dtype = t;
    v->shape = *s;
    v->buf = dgr_buffer_new(k->dev, (size_t)numel(s) * dg_dtype_size(t),
                            k->stream, k->err);
    return v->buf ? DG_OK : (k->err->code ? k->err->code : DG_E_NOMEM);
}

/* Most work-groups a compaction's input is cut into (d_compact_scan runs
 * their counts serially). */
#define COMPACT_GROUPS 1024

/* A compaction (data.cl) of the n elements of `in` into Q classes by its
 * kernels `count` and `fill`; L, E, G its work-group size, elements per
 * work-item and work-groups; cnt the groups' counts (then their first
 * positions), tot the classes' totals (Q + 1). */
typedef struct compaction {
    const char *count, *fill;
    cl_mem in;
    cl_long n;
    int Q;
    size_t L;
    cl_long E, G;
    dgr_buffer *cnt, *tot;
} compaction;

/* Pass 1 and 2: the per-group counts, their scan, and the totals read back
 * into tot[0..Q] (host). */
static dg_status compact_count(dgr_kctx *k, dg_dtype dt, compaction *c,
                               int64_t *tot)
{
    size_t l1, l2;
    dg_status st;
    if ((st = dgr_cl_reduce_wg(k, "data", dt, c->count, (size_t)c->n,
                               sizeof(cl_long), &l1)) != DG_OK ||
        (st = dgr_cl_reduce_wg(k, "data", dt, c->fill, (size_t)c->n,
                               sizeof(cl_long), &l2)) != DG_OK)
        return st;
    c->L = l1 < l2 ? l1 : l2;
    cl_long per = (cl_long)c->L * COMPACT_GROUPS;
    c->E = c->n > per ? (c->n + per - 1) / per : 1;
    c->G = (c->n + (cl_long)c->L * c->E - 1) / ((cl_long)c->L * c->E);
    if (c->G < 1)
        c->G = 1;
    c->cnt = dgr_buffer_new(k->dev, (size_t)(c->Q * c->G) * sizeof(cl_long),
                            k->stream, k->err);
    c->tot = c->cnt ? dgr_buffer_new(k->dev, (size_t)(c->Q + 1) *
                                     sizeof(cl_long), k->stream, k->err)
                    : NULL;
    if (!c->tot)
        return k->err->code ? k->err->code : DG_E_NOMEM;
    cl_mem cm = (cl_mem)c->cnt->mem, tm = (cl_mem)c->tot->mem;
    size_t g[2] = {(size_t)c->G * c->L, (size_t)c->Q}, l[2] = {c->L, 1};
    dgr_cl_arg a[] = {DGR_ARG(c->in), DGR_ARG(c->n), DGR_ARG(c->E),
                      DGR_ARG(cm), DGR_LOCAL(c->L * sizeof(cl_long))};
    st = dgr_cl_launch(k, "data", dt, c->count, 2, g, l, a, 5);
    cl_long Q = c->Q;
    size_t one = 1;
    dgr_cl_arg as[] = {DGR_ARG(cm), DGR_ARG(Q), DGR_ARG(c->G), DGR_ARG(tm)};
    if (st == DG_OK)
        st = dgr_cl_launch(k, "data", dt, "d_compact_scan", 1, &one, &one,
                           as, 4);
    if (st == DG_OK)
        st = dgr_cl_read(k->dev, c->tot, tot,
                         (size_t)(c->Q + 1) * sizeof(cl_long), k->err);
    return st;
}

/* Pass 3: the fill kernel with the offsets and fargs. */
static dg_status compact_fill(dgr_kctx *k, dg_dtype dt, compaction *c,
                              const dgr_cl_arg *fargs, int n_fargs)
{
    cl_mem cm = (cl_mem)c->cnt->mem;
    dgr_cl_arg a[8] = {DGR_ARG(c->in), DGR_ARG(c->n), DGR_ARG(c->E),
                       DGR_ARG(cm)};
    int na = 4;
    for (int i = 0; i < n_fargs && na < 7; i++)
        a[na++] = fargs[i];
    a[na++] = DGR_LOCAL(c->L * sizeof(cl_long));
    size_t g[2] = {(size_t)c->G * c->L, (size_t)c->Q}, l[2] = {c->L, 1};
    return dgr_cl_launch(k, "data", dt, c->fill, 2, g, l, a, na);
}

static void compact_free(compaction *c)
{
    if (c->cnt)
        dgr_buffer_release(c->cnt);
    if (c->tot)
        dgr_buffer_release(c->tot);
}

/* Where (one input): the int64 coordinates [n, rank] of the nonzero
 * elements (NaN counts), in row-major order; float or bool input (the
 * bool kernels are in every dtype's program: built as float32's). */
dg_status dgr_cl_k_where(dgr_kctx *k)
{
    int b = k->in[0].dtype == DG_BOOL;
    dg_dtype dt = b ? DG_F32 : k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *xs = &k->in[0].shape;
    if (xs->rank > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': rank %d (at most 8)",
                      k->node->name, xs->rank);
    dg_shape ys;
    memset(&ys, 0, sizeof ys);
    ys.rank = 2;
    ys.dims[1] = xs->rank;
    compaction c = {b ? "d_where_count_b" : "d_where_count",
                    b ? "d_where_fill_b" : "d_where_fill",
                    dgr_cl_mem(&k->in[0]), numel(xs), 1, 0, 0, 0, NULL, NULL};
    int64_t tot[2] = {0, 0};
    if (c.n > 0)
        st = compact_count(k, dt, &c, tot);
    ys.dims[0] = tot[0];
    if (st == DG_OK)
        st = alloc_shaped(k, 0, DG_I64, &ys);
    if (st == DG_OK && tot[0] * xs->rank > 0) {
        cl_mem y = dgr_cl_mem(&k->out[0]);
        cl_int rank = xs->rank;
        cl_long8 d8 = dgr_cl_long8(xs->dims, xs->rank);
        dgr_cl_arg f[] = {DGR_ARG(y), DGR_ARG(rank), DGR_ARG(d8)};
        st = compact_fill(k, dt, &c, f, 3);
    }
    compact_free(&c);
    return st;
}
DGR_KERNEL_DT(Where, dgr_cl_k_where, DGR_CL_KDT_FLOAT | (1u << DG_BOOL));

/* DynamicPartition (data, partitions): output q holds the rows of data
 * whose partition is q, in order; partitions outside [0, num_partitions)
 * fail the op (TF's CPU kernel's check; their count is read back). */
dg_status dgr_cl_k_dynamic_partition(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0], *p = &k->in[1];
    dg_dtype dt = x->dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    if (p->dtype != DG_I32)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': partitions are %s, "
                      "not int32", k->node->name, dg_dtype_name(p->dtype));
    int np = k->n_out, pr = p->shape.rank;
    cl_long cnt = numel(&p->shape), inner = 1;
    for (int d = pr; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    int64_t *tot = dg_calloc((size_t)np + 1, sizeof *tot);
    if (!tot)
        return dg_err_nomem(k->err, "DynamicPartition");
    compaction c = {"d_part_count", "d_part_fill", dgr_cl_mem(p), cnt, np,
                    0, 0, 0, NULL, NULL};
    if (cnt > 0 && np > 0)
        st = compact_count(k, dt, &c, tot);
    if (st == DG_OK && tot[np] != cnt)
        st = dg_err(k->err, DG_E_RUNTIME, "node '%s': %lld partitions are "
                    "not in [0, %d)", k->node->name,
                    (long long)(cnt - tot[np]), np);
    dgr_buffer *src = NULL;
    if (st == DG_OK && cnt > 0 && np > 0) {
        src = dgr_buffer_new(k->dev, (size_t)cnt * sizeof(cl_long),
                             k->stream, k->err);
        if (!src)
            st = k->err->code ? k->err->code : DG_E_NOMEM;
    }
    if (src) {
        cl_mem sm = (cl_mem)src->mem;
        dgr_cl_arg f[] = {DGR_ARG(sm)};
        st = compact_fill(k, dt, &c, f, 1);
    }
    cl_long base = 0;
    for (int q = 0; q < np && st == DG_OK; q++) {
        dg_shape s;
        memset(&s, 0, sizeof s);
        s.rank = 1 + x->shape.rank - pr;
        s.dims[0] = tot[q];
        for (int d = pr; d < x->shape.rank; d++)
            s.dims[1 + d - pr] = x->shape.dims[d];
        if ((st = alloc_shaped(k, q, dt, &s)) != DG_OK)
            break;
        cl_long ne = tot[q] * inner;
        cl_mem xm = dgr_cl_mem(x), ym = dgr_cl_mem(&k->out[q]),
               sm = src ? (cl_mem)src->mem : NULL;
        dgr_cl_arg a[] = {DGR_ARG(xm), DGR_ARG(sm), DGR_ARG(ym), DGR_ARG(ne),
                          DGR_ARG(inner), DGR_ARG(base)};
        if (ne > 0)
            st = dgr_cl_launch1d(k, "data", dt, "d_part_gather", (size_t)ne,
                                 a, 6);
        base += tot[q];
    }
    if (src)
        dgr_buffer_release(src);
    compact_free(&c);
    dg_free(tot);
    return st;
}
DGR_KERNEL(DynamicPartition, dgr_cl_k_dynamic_partition);

/* TopKV2 (input, k): each last-axis row's k largest, largest first, ties
 * by lower index (sorted=True; TF's order), and their indices (index_type
 * int32 or int64); one work-group per row, the row in local memory when it
 * fits (in half of it: the filter's L maxima need room too). */
dg_status dgr_cl_k_topk(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    /* index_type int32 or int64 (inference refuses others) */
    const char *kn = k->out_types[1].dtype == DG_I64 ? "d_topk64" : "d_topk";
    const dg_shape *s = &k->in[0].shape;
    int64_t kv[2 * DG_MAX_RANK];
    int nk = 0;
    if ((st = dgr_cl_small_ints(k, 1, kv, 1, &nk)) != DG_OK)
        return st;
    cl_long len = s->rank > 0 ? s->dims[s->rank - 1] : 0, kk = nk ? kv[0] : -1;
    if (s->rank < 1 || kk < 0 || kk > len)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': k %lld is out of "
                      "range for rows of %lld", k->node->name, (long long)kk,
                      (long long)len);
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK ||
        (st = dgr_kctx_alloc_output(k, 1)) != DG_OK)
        return st;
    cl_long rows = len ? numel(s) / len : 0;
    if (rows == 0 || kk == 0)
        return DG_OK;
    size_t l, es = dg_dtype_size(dt);
    if ((st = dgr_cl_reduce_wg(k, "data", dt, kn, (size_t)len,
                               es + sizeof(cl_int), &l)) != DG_OK)
        return st;
    cl_int cached = (size_t)len * es <= dgr_cl_devof(k)->c->local_mem / 2;
    size_t g = (size_t)rows * l;
    cl_mem x = dgr_cl_mem(&k->in[0]), v = dgr_cl_mem(&k->out[0]),
           ix = dgr_cl_mem(&k->out[1]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(v),      DGR_ARG(ix),
                      DGR_ARG(len), DGR_ARG(kk),    DGR_ARG(cached),
                      DGR_LOCAL(cached ? (size_t)len * es : es),
                      DGR_LOCAL(l * es), DGR_LOCAL(l * sizeof(cl_int))};
    return dgr_cl_launch(k, "data", dt, kn, 1, &g, &l, a, 9);
}
DGR_KERNEL(TopKV2, dgr_cl_k_topk);
