/*
 * cl_kernels_zoo.c -- OpenCL kernels of the op-breadth ops (issue 22);
 * their OpenCL C is opencl_kernels/zoo.cl.  The generic launchers
 * (issue 20): unary and bcast2, which run an op's dgk_<shape>_<Op> kernel
 * of any .cl file (the elementwise math of zoo.cl, SquaredDifference,
 * DivNoNan, ...: no C of their own).  Activations (and their gradient
 * ops), ReverseV2, IdentityN, Einsum and
 * BatchMatMulV2, the resizes and their gradients,
 * UnsortedSegmentSum/Max/Min/Prod, ScatterAdd/Sub/Update, SpaceToBatchND/BatchToSpaceND.  Unique (TF
 * keeps its arguments in host memory) has a CPU kernel only; the 3-D
 * convolutions and pools and LRN are cl_kernels_conv3d.c's, the
 * data-movement ops cl_kernels_data.c's.
 */
#include "cl_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "infer.h"

static cl_long8 l8(const int64_t *v, int n)
{
    cl_long8 x;
    memset(&x, 0, sizeof x);
    for (int i = 0; i < n && i < 8; i++)
        x.s[i] = v[i];
    return x;
}

static cl_long numel(const dg_shape *s) { return dg_shape_numel(s); }

/* x -> y elementwise by kernel `name` of program `prog` (ZUNARY's
 * arguments: x, y, n). */
static dg_status unary_in(dgr_kctx *k, const char *prog, const char *name)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_long n = numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n)};
    return dgr_cl_launch1d(k, prog, dt, name, (size_t)n, a, 3);
}

/* The generic launcher of shape "unary": an op whose OpenCL C is
 * `dgk_unary_<Op>(x, y, n)` needs no C (tools/gen_registry.py). */
dg_status dgr_cl_gen_unary(dgr_kctx *k)
{
    const dgr_cl_named *kn = &dgr_cl_named_kernels[k->node->op];
    return unary_in(k, kn->program, kn->kernel);
}

static dg_status pair(dgr_kctx *k, const char *name, int with_alpha)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_long n = numel(&k->out[0].shape);
    if (numel(&k->in[1].shape) != n)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': inputs differ in "
                      "shape", k->node->name);
    if (n == 0)
        return DG_OK;
    cl_mem g = dgr_cl_mem(&k->in[0]), v = dgr_cl_mem(&k->in[1]),
           y = dgr_cl_mem(&k->out[0]);
    cl_float alpha =
        with_alpha ? (cl_float)dgc_attr_f(k->node, DGC_AT_alpha) : 0;
    dgr_cl_arg a[] = {DGR_ARG(g), DGR_ARG(v), DGR_ARG(y), DGR_ARG(n),
                      DGR_ARG(alpha)};
    return dgr_cl_launch1d(k, "zoo", dt, name, (size_t)n, a,
                           with_alpha ? 5 : 4);
}

/* Round: Rint's kernel (halves to even, as TF) */
dg_status dgr_cl_k_round(dgr_kctx *k)
{
    return unary_in(k, "zoo", "dgk_unary_Rint");
}
DGR_KERNEL(Round, dgr_cl_k_round);

/* IsNan, IsInf, IsFinite: float in, bool out */
static dg_status classify(dgr_kctx *k, cl_int which)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_long n = numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n), DGR_ARG(which)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_classify", (size_t)n, a, 4);
}
dg_status dgr_cl_k_is_nan(dgr_kctx *k) { return classify(k, 0); }
DGR_KERNEL(IsNan, dgr_cl_k_is_nan);
dg_status dgr_cl_k_is_inf(dgr_kctx *k) { return classify(k, 1); }
DGR_KERNEL(IsInf, dgr_cl_k_is_inf);
dg_status dgr_cl_k_is_finite(dgr_kctx *k) { return classify(k, 2); }
DGR_KERNEL(IsFinite, dgr_cl_k_is_finite);
#define PAIR(fn, nm, al) dg_status fn(dgr_kctx *k) { return pair(k, nm, al); }
PAIR(dgr_cl_k_elu_grad, "z_elu_grad", 0)
DGR_KERNEL(EluGrad, dgr_cl_k_elu_grad);
PAIR(dgr_cl_k_selu_grad, "z_selu_grad", 0)
DGR_KERNEL(SeluGrad, dgr_cl_k_selu_grad);
PAIR(dgr_cl_k_softplus_grad, "z_softplus_grad", 0)
DGR_KERNEL(SoftplusGrad, dgr_cl_k_softplus_grad);
PAIR(dgr_cl_k_softsign_grad, "z_softsign_grad", 0)
DGR_KERNEL(SoftsignGrad, dgr_cl_k_softsign_grad);
PAIR(dgr_cl_k_sqrt_grad, "z_sqrt_grad", 0) /* (y, dy) */
PAIR(dgr_cl_k_leaky_relu_grad, "z_leaky_grad", 1)
DGR_KERNEL(LeakyReluGrad, dgr_cl_k_leaky_relu_grad);

dg_status dgr_cl_k_softplus(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_long n = numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    if (dt == DG_F64) {
        cl_double thr = log(DBL_EPSILON) + 2;
        dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n), DGR_ARG(thr)};
        return dgr_cl_launch1d(k, "zoo", dt, "z_softplus", (size_t)n, a, 4);
    }
    cl_float thr = logf(FLT_EPSILON) + 2;
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n), DGR_ARG(thr)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_softplus", (size_t)n, a, 4);
}
DGR_KERNEL(Softplus, dgr_cl_k_softplus);
DGR_KERNEL(SqrtGrad, dgr_cl_k_sqrt_grad);

dg_status dgr_cl_k_leaky_relu(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_long n = numel(&k->out[0].shape);
    cl_float alpha = (cl_float)dgc_attr_f(k->node, DGC_AT_alpha);
    if (n == 0)
        return DG_OK;
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n), DGR_ARG(alpha)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_leaky", (size_t)n, a, 4);
}
DGR_KERNEL(LeakyRelu, dgr_cl_k_leaky_relu);

/* Strides of `in` (right-aligned) broadcast to out: 0 on broadcast dims. */
static void bcast_strides(const dg_shape *in, const dg_shape *out,
                          int64_t *st)
{
    int64_t s = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int id = d - (out->rank - in->rank);
        st[d] = (id < 0 || in->dims[id] == 1) ? 0 : s;
        if (id >= 0)
            s *= in->dims[id];
    }
}

/* The generic launcher of shape "bcast2": a, b -> y with NumPy
 * broadcasting through per-dimension strides; an op whose OpenCL C is
 * `dgk_bcast2_<Op>(a, b, y, n, rank, dims, a_strides, b_strides)` needs
 * no C (tools/gen_registry.py). */
dg_status dgr_cl_gen_bcast2(dgr_kctx *k)
{
    const dgr_cl_named *kn = &dgr_cl_named_kernels[k->node->op];
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *os = &k->out[0].shape;
    cl_long n = numel(os);
    if (n == 0)
        return DG_OK;
    if (os->rank > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': rank %d", k->node->name,
                      os->rank);
    int64_t sa[DG_MAX_RANK], sb[DG_MAX_RANK];
    bcast_strides(&k->in[0].shape, os, sa);
    bcast_strides(&k->in[1].shape, os, sb);
    cl_int rank = os->rank;
    cl_long8 d8 = l8(os->dims, os->rank), a8 = l8(sa, os->rank),
             b8 = l8(sb, os->rank);
    cl_mem a = dgr_cl_mem(&k->in[0]), b = dgr_cl_mem(&k->in[1]),
           y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg args[] = {DGR_ARG(a), DGR_ARG(b), DGR_ARG(y), DGR_ARG(n),
                         DGR_ARG(rank), DGR_ARG(d8), DGR_ARG(a8),
                         DGR_ARG(b8)};
    return dgr_cl_launch1d(k, kn->program, dt, kn->kernel, (size_t)n, args,
                           8);
}

/* The elements of small int input i: from its Const producer when it has
 * one (no device read), else a blocking read of its buffer. */
dg_status dgr_cl_small_ints(dgr_kctx *k, int i, int64_t *v, int max, int *n)
{
    const dgr_value *x = &k->in[i];
    int64_t c = numel(&x->shape);
    if (c > max)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': input %d has more "
                      "than %d elements", k->node->name, i, max);
    *n = (int)c;
    /* (a kernel run without its graph's edges, in a unit test: no Const) */
    const dgc_node *p = i < k->node->n_inputs
                            ? &k->g->nodes[k->node->inputs[i].node] : NULL;
    const dgc_attr *a = p && p->op == DGC_OPID_Const
                            ? dgc_attr_at(p, DGC_AT_value) : NULL;
    if (a && a->tensor && a->tensor->dtype == x->dtype &&
        dg_shape_numel(&a->tensor->shape) == c) {
        for (int q = 0; q < c; q++)
            v[q] = x->dtype == DG_I32 ? ((const int32_t *)a->tensor->data)[q]
                                      : ((const int64_t *)a->tensor->data)[q];
        return DG_OK;
    }
    int64_t buf[DG_MAX_RANK * 2];
    if (c > 0) {
        dg_status st = dgr_cl_read(k->dev, x->buf, buf,
                                   (size_t)c * dg_dtype_size(x->dtype), k->err);
        if (st != DG_OK)
            return st;
    }
    for (int q = 0; q < c; q++)
        v[q] = x->dtype == DG_I32 ? ((const int32_t *)buf)[q] : buf[q];
    return DG_OK;
}

dg_status dgr_cl_k_reverse(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *s = &k->in[0].shape;
    int64_t ax[DG_MAX_RANK * 2];
    int na = 0;
    if ((st = dgr_cl_small_ints(k, 1, ax, DG_MAX_RANK * 2, &na)) != DG_OK)
        return st;
    cl_int mask = 0;
    for (int i = 0; i < na; i++) {
        int64_t a = ax[i] < 0 ? ax[i] + s->rank : ax[i];
        if (a < 0 || a >= s->rank)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': axis %lld out of "
                          "range", k->node->name, (long long)ax[i]);
        mask |= 1 << a;
    }
    cl_long n = numel(s);
    if (n == 0)
        return DG_OK;
    cl_int rank = s->rank;
    cl_long8 d8 = l8(s->dims, s->rank);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n), DGR_ARG(rank),
                      DGR_ARG(d8), DGR_ARG(mask)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_reverse", (size_t)n, a, 6);
}
DGR_KERNEL(ReverseV2, dgr_cl_k_reverse);

dg_status dgr_cl_k_identity_n(dgr_kctx *k)
{
    for (int i = 0; i < k->n_out && i < k->n_in; i++)
        dgr_kctx_alias_output(k, i, &k->in[i]);
    return DG_OK;
}
DGR_KERNEL_DT(IdentityN, dgr_cl_k_identity_n, DGR_CL_KDT_FLOAT_INT);

dg_status dgr_cl_k_einsum(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    char eqb[40];
    const char *eq = dgc_einsum_equation(k->node, eqb, sizeof eqb);
    const dg_shape *sh[2] = {&k->in[0].shape,
                             k->n_in > 1 ? &k->in[1].shape : NULL};
    dgc_einsum e;
    char msg[200];
    if (dgc_einsum_parse(eq, sh, k->n_in, &e, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    dgc_einsum_loops l;
    dgc_einsum_loops_of(&e, sh, &l);
    if (l.no > 8 || l.nc > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': the OpenCL Einsum "
                      "takes at most 8 output and 8 summed labels",
                      k->node->name);
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK)
        return st;
    cl_long n = numel(&k->out[0].shape);
    if (n == 0)
        return DG_OK;
    cl_int no = l.no, nc = l.nc, two = k->n_in > 1;
    cl_long8 od = l8(l.odim, no), oa = l8(l.ost[0], no), ob = l8(l.ost[1], no);
    cl_long8 cd = l8(l.cdim, nc), ca = l8(l.cst[0], nc), cb = l8(l.cst[1], nc);
    cl_mem a = dgr_cl_mem(&k->in[0]);
    cl_mem b = two ? dgr_cl_mem(&k->in[1]) : a;
    cl_mem y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg args[] = {DGR_ARG(a),  DGR_ARG(b),  DGR_ARG(y),  DGR_ARG(n),
                         DGR_ARG(no), DGR_ARG(od), DGR_ARG(oa), DGR_ARG(ob),
                         DGR_ARG(nc), DGR_ARG(cd), DGR_ARG(ca), DGR_ARG(cb),
                         DGR_ARG(two)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_einsum", (size_t)n, args, 13);
}
DGR_KERNEL(Einsum, dgr_cl_k_einsum);
DGR_KERNEL(BatchMatMulV2, dgr_cl_k_einsum);

static dg_status resize(dgr_kctx *k, const char *name)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    const dg_shape *is = &k->in[0].shape, *os = &k->out[0].shape;
    cl_long n = numel(os);
    if (n == 0)
        return DG_OK;
    cl_long ih = is->dims[1], iw = is->dims[2], oh = os->dims[1],
            ow = os->dims[2], C = is->dims[3];
    cl_int align = dgc_attr_b(k->node, DGC_AT_align_corners);
    cl_int half = dgc_attr_b(k->node, DGC_AT_half_pixel_centers);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(y),  DGR_ARG(n), DGR_ARG(ih),
                      DGR_ARG(iw), DGR_ARG(oh), DGR_ARG(ow), DGR_ARG(C),
                      DGR_ARG(align), DGR_ARG(half)};
    return dgr_cl_launch1d(k, "zoo", dt, name, (size_t)n, a, 10);
}

dg_status dgr_cl_k_resize_bilinear(dgr_kctx *k)
{
    return resize(k, "z_resize_bilinear");
}
DGR_KERNEL(ResizeBilinear, dgr_cl_k_resize_bilinear);

dg_status dgr_cl_k_resize_nearest(dgr_kctx *k)
{
    return resize(k, "z_resize_nearest");
}
DGR_KERNEL(ResizeNearestNeighbor, dgr_cl_k_resize_nearest);

/* UnsortedSegmentSum/Max/Min/Prod: mode 0..3 of zoo.cl's z_uss_*. */
static dg_status unsorted_segment(dgr_kctx *k, cl_int mode)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_long n = numel(&k->out[0].shape);
    cl_long cnt = numel(&k->in[1].shape);
    cl_long rows = k->out[0].shape.dims[0];
    cl_long inner = rows > 0 ? n / rows : 1;
    if (n == 0)
        return DG_OK;
    cl_mem x = dgr_cl_mem(&k->in[0]), ids = dgr_cl_mem(&k->in[1]),
           y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(ids), DGR_ARG(y), DGR_ARG(n),
                      DGR_ARG(cnt), DGR_ARG(inner), DGR_ARG(mode)};
    return dgr_cl_launch1d(k, "zoo", dt, k->in[1].dtype == DG_I32
                           ? "z_uss_i32" : "z_uss_i64", (size_t)n, a, 7);
}
dg_status dgr_cl_k_unsorted_segment_sum(dgr_kctx *k)
{
    return unsorted_segment(k, 0);
}
DGR_KERNEL(UnsortedSegmentSum, dgr_cl_k_unsorted_segment_sum);
dg_status dgr_cl_k_unsorted_segment_max(dgr_kctx *k)
{
    return unsorted_segment(k, 1);
}
DGR_KERNEL(UnsortedSegmentMax, dgr_cl_k_unsorted_segment_max);
dg_status dgr_cl_k_unsorted_segment_min(dgr_kctx *k)
{
    return unsorted_segment(k, 2);
}
DGR_KERNEL(UnsortedSegmentMin, dgr_cl_k_unsorted_segment_min);
dg_status dgr_cl_k_unsorted_segment_prod(dgr_kctx *k)
{
    return unsorted_segment(k, 3);
}
DGR_KERNEL(UnsortedSegmentProd, dgr_cl_k_unsorted_segment_prod);

static dg_status scatter(dgr_kctx *k, double sign)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    if (!k->in[0].buf)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': variable has no value",
                      k->node->name);
    const dg_shape *rs = &k->in[0].shape;
    cl_long rows = rs->dims[0], inner = rows > 0 ? numel(rs) / rows : 0;
    cl_long cnt = numel(&k->in[1].shape);
    cl_int scalar = k->in[2].shape.rank == 0;
    if (!scalar && numel(&k->in[2].shape) != cnt * inner)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': updates must have "
                      "shape indices.shape + ref.shape[1:]", k->node->name);
    dgr_kctx_alias_output(k, 0, &k->in[0]);
    if (cnt == 0 || inner == 0)
        return DG_OK;
    cl_mem r = dgr_cl_mem(&k->in[0]), ix = dgr_cl_mem(&k->in[1]),
           u = dgr_cl_mem(&k->in[2]);
    const char *name = k->in[1].dtype == DG_I32 ? "z_scatter_i32"
                                                : "z_scatter_i64";
    if (dt == DG_F64) {
        cl_double s = sign;
        dgr_cl_arg a[] = {DGR_ARG(r), DGR_ARG(ix), DGR_ARG(u), DGR_ARG(inner),
                          DGR_ARG(cnt), DGR_ARG(rows), DGR_ARG(s),
                          DGR_ARG(scalar)};
        return dgr_cl_launch1d(k, "zoo", dt, name, (size_t)inner, a, 8);
    }
    cl_float s = (cl_float)sign;
    dgr_cl_arg a[] = {DGR_ARG(r), DGR_ARG(ix), DGR_ARG(u), DGR_ARG(inner),
                      DGR_ARG(cnt), DGR_ARG(rows), DGR_ARG(s),
                      DGR_ARG(scalar)};
    return dgr_cl_launch1d(k, "zoo", dt, name, (size_t)inner, a, 8);
}

dg_status dgr_cl_k_scatter_add(dgr_kctx *k) { return scatter(k, 1.0); }
DGR_KERNEL(ScatterAdd, dgr_cl_k_scatter_add);
dg_status dgr_cl_k_scatter_sub(dgr_kctx *k) { return scatter(k, -1.0); }
dg_status dgr_cl_k_scatter_update(dgr_kctx *k) { return scatter(k, 0.0); }
DGR_KERNEL(ScatterSub, dgr_cl_k_scatter_sub);
DGR_KERNEL(ScatterUpdate, dgr_cl_k_scatter_update);

static dg_status resize_grad(dgr_kctx *k, const char *name)
{
    dg_dtype dt = k->out_types[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    const dg_shape *gs = &k->in[0].shape, *os = &k->out[0].shape;
    cl_long n = numel(os);
    if (n == 0)
        return DG_OK;
    cl_long gh = gs->dims[1], gw = gs->dims[2], oh = os->dims[1],
            ow = os->dims[2], C = os->dims[3];
    cl_int align = dgc_attr_b(k->node, DGC_AT_align_corners);
    cl_int hpc = dgc_attr_b(k->node, DGC_AT_half_pixel_centers);
    cl_mem g = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(g),  DGR_ARG(y),  DGR_ARG(n), DGR_ARG(gh),
                      DGR_ARG(gw), DGR_ARG(oh), DGR_ARG(ow), DGR_ARG(C),
                      DGR_ARG(align), DGR_ARG(hpc)};
    return dgr_cl_launch1d(k, "zoo", dt, name, (size_t)n, a, 10);
}

dg_status dgr_cl_k_resize_bilinear_grad(dgr_kctx *k)
{
    return resize_grad(k, "z_resize_bilinear_grad");
}
DGR_KERNEL(ResizeBilinearGrad, dgr_cl_k_resize_bilinear_grad);

dg_status dgr_cl_k_resize_nearest_grad(dgr_kctx *k)
{
    return resize_grad(k, "z_resize_nearest_grad");
}
DGR_KERNEL(ResizeNearestNeighborGrad, dgr_cl_k_resize_nearest_grad);

static dg_status space_batch(dgr_kctx *k, int to_batch)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    int64_t bs[DG_MAX_RANK * 2], pads[DG_MAX_RANK * 2], pad[8] = {0};
    int m = 0, np = 0;
    /* SpaceToBatch (V1): block_shape [block_size, block_size] */
    int v1 = k->node->op == DGC_OPID_SpaceToBatch;
    if (v1) {
        bs[0] = bs[1] = dgc_attr_i(k->node, DGC_AT_block_size);
        m = 2;
    }
    if ((!v1 && (st = dgr_cl_small_ints(k, 1, bs, DG_MAX_RANK, &m)) != DG_OK) ||
        (st = dgr_cl_small_ints(k, v1 ? 1 : 2, pads, 2 * DG_MAX_RANK, &np)) !=
            DG_OK)
        return st;
    if (m < 1 || m > 7 || np != 2 * m)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': block_shape of %d "
                      "elements", k->node->name, m);
    for (int i = 0; i < m; i++)
        pad[i] = pads[2 * i];
    const dg_shape *bside = to_batch ? &k->out[0].shape : &k->in[0].shape;
    const dg_shape *sside = to_batch ? &k->in[0].shape : &k->out[0].shape;
    cl_long n = numel(&k->out[0].shape), inner = 1, B = sside->dims[0];
    for (int d = 1 + m; d < sside->rank; d++)
        inner *= sside->dims[d];
    if (n == 0 || inner == 0)
        return DG_OK;
    cl_int tb = to_batch, cm = m;
    cl_long8 b8 = l8(bs, m), p8 = l8(pad, m), bd = l8(bside->dims + 1, m),
             sd = l8(sside->dims + 1, m);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(y),  DGR_ARG(n),  DGR_ARG(tb),
                      DGR_ARG(cm), DGR_ARG(b8), DGR_ARG(p8), DGR_ARG(bd),
                      DGR_ARG(sd), DGR_ARG(B),  DGR_ARG(inner)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_space_batch", (size_t)n, a, 11);
}

dg_status dgr_cl_k_space_to_batch(dgr_kctx *k) { return space_batch(k, 1); }
DGR_KERNEL(SpaceToBatchND, dgr_cl_k_space_to_batch);
DGR_KERNEL(SpaceToBatch, dgr_cl_k_space_to_batch);
dg_status dgr_cl_k_batch_to_space(dgr_kctx *k) { return space_batch(k, 0); }
DGR_KERNEL(BatchToSpaceND, dgr_cl_k_batch_to_space);

dg_status dgr_cl_k_cumsum(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    int64_t o64, l64, i64;
    if (dgc_axis_split(&k->in[0].shape, dgc_attr_i(k->node, DGC_AT_axis),
                       &o64, &l64, &i64))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': axis out of range "
                      "for rank %d", k->node->name, k->in[0].shape.rank);
    cl_long outer = o64, len = l64, inner = i64;
    if (outer * inner * len == 0)
        return DG_OK;
    cl_int excl = dgc_attr_b(k->node, DGC_AT_exclusive);
    cl_int rev = dgc_attr_b(k->node, DGC_AT_reverse);
    cl_int prod = k->node->op == DGC_OPID_Cumprod;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),     DGR_ARG(y),    DGR_ARG(outer),
                      DGR_ARG(len),   DGR_ARG(inner), DGR_ARG(excl),
                      DGR_ARG(rev),   DGR_ARG(prod)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_cumsum", (size_t)(outer * inner),
                           a, 8);
}
DGR_KERNEL(Cumsum, dgr_cl_k_cumsum);
DGR_KERNEL(Cumprod, dgr_cl_k_cumsum);

/* Strides of operand shape s broadcast to output shape o (aligned right;
 * 0 on broadcast dims). */
static void bc_str(const dg_shape *s, const dg_shape *o, int64_t *str)
{
    int64_t acc = 1;
    for (int d = o->rank - 1; d >= 0; d--) {
        int sd = d - (o->rank - s->rank);
        int64_t dim = sd >= 0 ? s->dims[sd] : 1;
        str[d] = dim == 1 ? 0 : acc;
        acc *= dim;
    }
}

/* Select (a vector cond picks rows) and SelectV2 (NumPy broadcasting) */
dg_status dgr_cl_k_select(dgr_kctx *k)
{
    dg_dtype dt = k->out_types[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    const dg_shape *os = &k->out[0].shape;
    if (os->rank > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': rank %d is over 8",
                      k->node->name, os->rank);
    dg_shape cs = k->in[0].shape;
    if (k->node->op == DGC_OPID_Select && cs.rank == 1 && os->rank > 1) {
        for (int d = 1; d < os->rank; d++)
            cs.dims[d] = 1;
        cs.rank = os->rank;
    }
    int64_t sc[DG_MAX_RANK], s1[DG_MAX_RANK], s2[DG_MAX_RANK];
    bc_str(&cs, os, sc);
    bc_str(&k->in[1].shape, os, s1);
    bc_str(&k->in[2].shape, os, s2);
    cl_long n = numel(os);
    if (n == 0)
        return DG_OK;
    cl_int rank = os->rank;
    cl_long8 d8 = l8(os->dims, os->rank), c8 = l8(sc, os->rank),
             t8 = l8(s1, os->rank), e8 = l8(s2, os->rank);
    cl_mem c = dgr_cl_mem(&k->in[0]), t = dgr_cl_mem(&k->in[1]),
           e = dgr_cl_mem(&k->in[2]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(c),  DGR_ARG(t),  DGR_ARG(e),  DGR_ARG(y),
                      DGR_ARG(n),  DGR_ARG(rank), DGR_ARG(d8), DGR_ARG(c8),
                      DGR_ARG(t8), DGR_ARG(e8)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_select", (size_t)n, a, 10);
}
DGR_KERNEL(Select, dgr_cl_k_select);
DGR_KERNEL(SelectV2, dgr_cl_k_select);

/* DepthToSpace and SpaceToDepth (NHWC) */
dg_status dgr_cl_k_depth_space(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_int dts = k->node->op == DGC_OPID_DepthToSpace;
    const int64_t *sd = dts ? k->out[0].shape.dims : k->in[0].shape.dims;
    cl_long n4 = numel(&k->out[0].shape);
    if (n4 == 0)
        return DG_OK;
    cl_long sH = sd[1], sW = sd[2], sC = sd[3];
    cl_long b = dgc_attr_i(k->node, DGC_AT_block_size);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(y),  DGR_ARG(n4), DGR_ARG(sH),
                      DGR_ARG(sW), DGR_ARG(sC), DGR_ARG(b),  DGR_ARG(dts)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_depth_space", (size_t)n4, a, 8);
}
DGR_KERNEL(DepthToSpace, dgr_cl_k_depth_space);
DGR_KERNEL(SpaceToDepth, dgr_cl_k_depth_space);

dg_status dgr_cl_k_mirror_pad(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *bs = &k->out[0].shape, *ss = &k->in[0].shape;
    if (bs->rank > 8)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': rank %d is over 8",
                      k->node->name, bs->rank);
    int64_t pads[2 * DG_MAX_RANK], pb[DG_MAX_RANK];
    int np = 0;
    if ((st = dgr_cl_small_ints(k, 1, pads, 2 * DG_MAX_RANK, &np)) != DG_OK)
        return st;
    if (np != 2 * bs->rank)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': paddings of %d "
                      "elements for rank %d", k->node->name, np, bs->rank);
    for (int d = 0; d < bs->rank; d++)
        pb[d] = pads[2 * d];
    const dgc_attr *m = dgc_attr_at(k->node, DGC_AT_mode);
    cl_int sym = m && m->s && strcmp(m->s, "SYMMETRIC") == 0;
    cl_long n = numel(bs);
    if (n == 0)
        return DG_OK;
    cl_int rank = bs->rank;
    cl_long8 b8 = l8(bs->dims, bs->rank), s8 = l8(ss->dims, ss->rank),
             p8 = l8(pb, bs->rank);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(y),  DGR_ARG(n),  DGR_ARG(rank),
                      DGR_ARG(b8), DGR_ARG(s8), DGR_ARG(p8), DGR_ARG(sym)};
    return dgr_cl_launch1d(k, "zoo", dt, "z_mirror_pad", (size_t)n, a, 8);
}
DGR_KERNEL(MirrorPad, dgr_cl_k_mirror_pad);
