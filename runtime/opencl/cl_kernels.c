/*
 * cl_kernels.c -- the OpenCL backend's kernel registry (dgr_cl_kernels) and the
 * shape-generic kernels:
 * elementwise unary/binary ops with NumPy broadcasting, AddN, BiasAdd,
 * reductions (Sum/Mean/Max/Prod/Min, SumTo, MaxGrad), BroadcastLike, Transpose,
 * Cast, ZerosLike/OnesLike, the aliasing ops and NoOp.  Kernels only
 * enqueue; the device's read() is what waits.
 */
#include "cl_internal.h"
#include "dg_alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- shape helpers ------------------------------------------------------- */

static int64_t numel(const dg_shape *s) { return dg_shape_numel(s); }

static dg_dtype kdt(dgr_kctx *k)
{
    return k->n_in > 0 ? k->in[0].dtype : k->out_types[0].dtype;
}

/* Strides of `in` (right-aligned) broadcast to out (rank r): 0 where the
 * input dim is 1 or missing. */
static void bcast_strides(const dg_shape *in, const dg_shape *out,
                          int64_t *st)
{
    int64_t s = 1;
    for (int k = out->rank - 1; k >= 0; k--) {
        int ik = k - (out->rank - in->rank);
        if (ik < 0 || in->dims[ik] == 1) {
            st[k] = 0;
        } else {
            st[k] = s;
        }
        if (ik >= 0)
            s *= in->dims[ik];
    }
}

/* Drop size-1 dims and merge neighbours contiguous in every operand. */
static int collapse(int rank, int64_t *d, int64_t *s0, int64_t *s1)
{
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (d[k] == 1)
            continue;
        if (r > 0 && s0[r - 1] == s0[k] * d[k] &&
            (!s1 || s1[r - 1] == s1[k] * d[k])) {
            d[r - 1] *= d[k];
            s0[r - 1] = s0[k];
            if (s1)
                s1[r - 1] = s1[k];
            continue;
        }
        d[r] = d[k];
        s0[r] = s0[k];
        if (s1)
            s1[r] = s1[k];
        r++;
    }
    return r;
}

static cl_long8 l8(const int64_t *v, int n)
{
    cl_long8 x;
    memset(&x, 0, sizeof x);
    for (int i = 0; i < n && i < 8; i++)
        x.s[i] = v[i];
    return x;
}

/* ---- elementwise --------------------------------------------------------- */

static dg_status unary(dgr_kctx *k, const char *name)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_long n = numel(&k->out[0].shape);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "elementwise", dt, name, (size_t)n, a, 3);
}

/* name = base + suffix (truncated to n - 1 bytes). */
static void kname(char *name, size_t n, const char *base, const char *suffix)
{
    size_t lb = strlen(base), ls = strlen(suffix);
    if (lb >= n)
        lb = n - 1;
    if (lb + ls >= n)
        ls = n - 1 - lb;
    memcpy(name, base, lb);
    memcpy(name + lb, suffix, ls);
    name[lb + ls] = '\0';
}

/* out = a (op) b with broadcasting; base e.g. "b_add" */
static dg_status binary_on(dgr_kctx *k, const char *base, const dgr_value *va,
                           const dgr_value *vb, dgr_value *out)
{
    dg_dtype dt = va->dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *os = &out->shape;
    int64_t d[DG_MAX_RANK], sa[DG_MAX_RANK], sb[DG_MAX_RANK];
    for (int i = 0; i < os->rank; i++)
        d[i] = os->dims[i];
    bcast_strides(&va->shape, os, sa);
    bcast_strides(&vb->shape, os, sb);
    int r = collapse(os->rank, d, sa, sb);
    cl_mem a = dgr_cl_mem(va), b = dgr_cl_mem(vb), y = dgr_cl_mem(out);
    cl_long n = numel(os);
    char name[64];
    int64_t na = numel(&va->shape), nb = numel(&vb->shape);
    if (n == 0)
        return DG_OK;
    cl_int mode = -1;
    if (na == n && nb == n)
        mode = 0;
    else if (na == 1 && nb == n)
        mode = 1;
    else if (nb == 1 && na == n)
        mode = 2;
    if (mode >= 0) {
        kname(name, sizeof name, base, "_flat");
        dgr_cl_arg args[] = {DGR_ARG(a), DGR_ARG(b), DGR_ARG(y), DGR_ARG(n),
                             DGR_ARG(mode)};
        return dgr_cl_launch1d(k, "elementwise", dt, name, (size_t)n, args, 5);
    }
    cl_int rank = r;
    cl_long8 dd = l8(d, r), a8 = l8(sa, r), b8 = l8(sb, r);
    kname(name, sizeof name, base, "_bc");
    dgr_cl_arg args[] = {DGR_ARG(a),    DGR_ARG(b),  DGR_ARG(y), DGR_ARG(n),
                         DGR_ARG(rank), DGR_ARG(dd), DGR_ARG(a8), DGR_ARG(b8)};
    return dgr_cl_launch1d(k, "elementwise", dt, name, (size_t)n, args, 8);
}

static dg_status binary(dgr_kctx *k, const char *base)
{
    dg_status st = dgr_cl_need_float(k, kdt(k));
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    return binary_on(k, base, &k->in[0], &k->in[1], &k->out[0]);
}

#define UN(fn, nm) dg_status fn(dgr_kctx *k) { return unary(k, nm); }
UN(dgr_cl_k_neg, "u_neg")
DGR_KERNEL(Neg, dgr_cl_k_neg);
UN(dgr_cl_k_abs, "u_abs")
DGR_KERNEL(Abs, dgr_cl_k_abs);
UN(dgr_cl_k_sin, "u_sin")
DGR_KERNEL(Sin, dgr_cl_k_sin);
UN(dgr_cl_k_cos, "u_cos")
DGR_KERNEL(Cos, dgr_cl_k_cos);
UN(dgr_cl_k_exp, "u_exp")
DGR_KERNEL(Exp, dgr_cl_k_exp);
UN(dgr_cl_k_log, "u_log")
DGR_KERNEL(Log, dgr_cl_k_log);
UN(dgr_cl_k_sqrt, "u_sqrt")
DGR_KERNEL(Sqrt, dgr_cl_k_sqrt);
UN(dgr_cl_k_square, "u_square")
DGR_KERNEL(Square, dgr_cl_k_square);
UN(dgr_cl_k_tanh, "u_tanh")
DGR_KERNEL(Tanh, dgr_cl_k_tanh);
UN(dgr_cl_k_sigmoid, "u_sigmoid")
DGR_KERNEL(Sigmoid, dgr_cl_k_sigmoid);
UN(dgr_cl_k_relu, "u_relu")
DGR_KERNEL(Relu, dgr_cl_k_relu);
#define BI(fn, nm) dg_status fn(dgr_kctx *k) { return binary(k, nm); }
BI(dgr_cl_k_add, "b_add")
DGR_KERNEL(Add, dgr_cl_k_add);
BI(dgr_cl_k_sub, "b_sub")
DGR_KERNEL(Sub, dgr_cl_k_sub);
BI(dgr_cl_k_mul, "b_mul")
DGR_KERNEL(Mul, dgr_cl_k_mul);
BI(dgr_cl_k_div, "b_div")
DGR_KERNEL(Div, dgr_cl_k_div);
BI(dgr_cl_k_pow, "b_pow")
DGR_KERNEL(Pow, dgr_cl_k_pow);
BI(dgr_cl_k_maximum, "b_max")
DGR_KERNEL(Maximum, dgr_cl_k_maximum);
BI(dgr_cl_k_minimum, "b_min")
DGR_KERNEL(Minimum, dgr_cl_k_minimum);
BI(dgr_cl_k_equal, "b_equal")
DGR_KERNEL(Equal, dgr_cl_k_equal);
BI(dgr_cl_k_atan2, "b_atan2")
DGR_KERNEL(Atan2, dgr_cl_k_atan2);
BI(dgr_cl_k_relu_grad, "b_relu_grad")
DGR_KERNEL(ReluGrad, dgr_cl_k_relu_grad);
BI(dgr_cl_k_sigmoid_grad, "b_sigmoid_grad")
DGR_KERNEL(SigmoidGrad, dgr_cl_k_sigmoid_grad);
BI(dgr_cl_k_tanh_grad, "b_tanh_grad")
DGR_KERNEL(TanhGrad, dgr_cl_k_tanh_grad);
BI(dgr_cl_k_bias_add, "b_add")
DGR_KERNEL(BiasAdd, dgr_cl_k_bias_add);

dg_status dgr_cl_k_addn(dgr_kctx *k)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    if (k->n_in == 1) {
        cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
        cl_long n = numel(&k->out[0].shape);
        dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n)};
        return dgr_cl_launch1d(k, "elementwise", dt, "u_copy", (size_t)n, a, 3);
    }
    st = binary_on(k, "b_add", &k->in[0], &k->in[1], &k->out[0]);
    for (int i = 2; i < k->n_in && st == DG_OK; i++)
        st = binary_on(k, "b_add", &k->out[0], &k->in[i], &k->out[0]);
    return st;
}
DGR_KERNEL(AddN, dgr_cl_k_addn);

static dg_status fill_value(dgr_kctx *k, dgr_value *out, double v)
{
    cl_mem y = dgr_cl_mem(out);
    cl_long n = numel(&out->shape);
    if (out->dtype == DG_F64) {
        cl_double x = v;
        dgr_cl_arg a[] = {DGR_ARG(y), DGR_ARG(n), DGR_ARG(x)};
        return dgr_cl_launch1d(k, "elementwise", DG_F64, "fill", (size_t)n, a,
                               3);
    }
    cl_float x = (cl_float)v;
    dgr_cl_arg a[] = {DGR_ARG(y), DGR_ARG(n), DGR_ARG(x)};
    return dgr_cl_launch1d(k, "elementwise", DG_F32, "fill", (size_t)n, a, 3);
}

static dg_status fill_like(dgr_kctx *k, double v)
{
    dg_status st = dgr_cl_float_output(k, k->out_types[0].dtype);
    if (st != DG_OK)
        return st;
    return fill_value(k, &k->out[0], v);
}

dg_status dgr_cl_k_zeros_like(dgr_kctx *k) { return fill_like(k, 0.0); }
DGR_KERNEL(ZerosLike, dgr_cl_k_zeros_like);
dg_status dgr_cl_k_ones_like(dgr_kctx *k) { return fill_like(k, 1.0); }
DGR_KERNEL(OnesLike, dgr_cl_k_ones_like);

dg_status dgr_cl_k_alias(dgr_kctx *k)
{
    dgr_kctx_alias_output(k, 0, &k->in[0]);
    return DG_OK;
}
DGR_KERNEL(Identity, dgr_cl_k_alias);
DGR_KERNEL(Reshape, dgr_cl_k_alias);
DGR_KERNEL(ReshapeLike, dgr_cl_k_alias);
DGR_KERNEL(ExpandDims, dgr_cl_k_alias);
DGR_KERNEL(Squeeze, dgr_cl_k_alias);
/* issue 21: the gradient blockers as Identity */
DGR_KERNEL(StopGradient, dgr_cl_k_alias);
DGR_KERNEL(PreventGradient, dgr_cl_k_alias);

dg_status dgr_cl_k_noop(dgr_kctx *k)
{
    (void)k;
    return DG_OK;
}
DGR_KERNEL(NoOp, dgr_cl_k_noop);

/* AllReduce / Broadcast: the identity with one replica.  With more, the
 * session's collective runtime (MPI) works on host memory: the input is
 * read back (after everything queued before it), the call made (this
 * worker waits for it), and the result written to the output. */
dg_status dgr_cl_k_collective(dgr_kctx *k)
{
    dgr_collective c;
    int w = dgr_collective_describe(k, &c);
    if (w <= 1)
        return dgr_cl_k_alias(k);
    if (!k->env || !k->env->collective)
        return dgr_collective_missing(k, w);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    size_t n = (size_t)c.n * dg_dtype_size(c.dtype);
    void *in = dg_malloc(n ? n : 1), *out = dg_malloc(n ? n : 1);
    if (!in || !out) {
        dg_free(in);
        dg_free(out);
        return dg_err_nomem(k->err, "collective staging");
    }
    st = dgr_cl_read(k->dev, k->in[0].buf, in, n, k->err);
    c.in = in;
    c.out = out;
    if (st == DG_OK)
        st = k->env->collective(k->env->ctx, &c, k->err);
    if (st == DG_OK)
        st = dgr_cl_write(k->dev, k->out[0].buf, out, n, k->err);
    dg_free(in);
    dg_free(out);
    return st;
}
DGR_KERNEL(AllReduce, dgr_cl_k_collective);
DGR_KERNEL(Broadcast, dgr_cl_k_collective);

dg_status dgr_cl_k_cast(dgr_kctx *k)
{
    dg_dtype dt = kdt(k), to = k->out_types[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    if (to == dt)
        return dgr_cl_k_alias(k);
    static const char *const names[DG_DTYPE_COUNT] = {
        "cast_f32", "cast_f64", "cast_i32", "cast_i64", "cast_bool"};
    if (to == DG_F64 && !dgr_cl_devof(k)->c->fp64)
        return dgr_cl_need_float(k, DG_F64);
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK)
        return st;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_long n = numel(&k->out[0].shape);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "elementwise", dt, names[to], (size_t)n, a, 3);
}
DGR_KERNEL(Cast, dgr_cl_k_cast);

/* ---- gather: Transpose, BroadcastLike ----------------------------------- */

/* y (shape os) [i] = x[offset by istr] * scale */
static dg_status gather(dgr_kctx *k, const dg_shape *os, int64_t *istr,
                        double scale)
{
    dg_dtype dt = kdt(k);
    int64_t d[DG_MAX_RANK];
    for (int i = 0; i < os->rank; i++)
        d[i] = os->dims[i];
    int r = collapse(os->rank, d, istr, NULL);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    cl_long n = numel(os);
    if (n == 0)
        return DG_OK;
    if (r == 2 && istr[0] == 1 && istr[1] == d[0] && scale == 1.0 &&
        dgr_cl_kernel_wg(k, "elementwise", dt, "transpose_2d") >= 256) {
        /* a plain 2-D transpose of an input [d1, d0]: tiled */
        cl_long rows = d[1], cols = d[0];
        size_t l[2] = {16, 16};
        size_t g[2] = {((size_t)cols + 15) / 16 * 16,
                       ((size_t)rows + 15) / 16 * 16};
        dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(rows), DGR_ARG(cols)};
        return dgr_cl_launch(k, "elementwise", dt, "transpose_2d", 2, g, l, a,
                             4);
    }
    cl_int rank = r;
    cl_long8 dd = l8(d, r), s8 = l8(istr, r);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(n), DGR_ARG(rank),
                      DGR_ARG(dd), DGR_ARG(s8), {0, NULL}};
    cl_float sf = (cl_float)scale;
    cl_double sd = scale;
    a[6] = dt == DG_F64 ? DGR_ARG(sd) : DGR_ARG(sf);
    return dgr_cl_launch1d(k, "elementwise", dt, "gather_nd", (size_t)n, a, 7);
}

/* The elements of int32/int64 input i (a small run-time parameter: a
 * perm, reduction axes) into v[0..max): from host memory, or read back
 * from the device.  *n their count. */
static dg_status int_input(dgr_kctx *k, int i, int64_t *v, int max, int *n)
{
    const dgr_value *x = &k->in[i];
    int64_t cnt = numel(&x->shape);
    size_t es = dg_dtype_size(x->dtype);
    unsigned char raw[64 * 8];
    if (cnt > max || cnt > 64 || (x->dtype != DG_I32 && x->dtype != DG_I64))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': input %d must be an "
                      "int32/int64 vector of at most %d elements",
                      k->node->name, i, max < 64 ? max : 64);
    if (cnt > 0) {
        if (x->buf->host) {
            memcpy(raw, x->buf->host, (size_t)cnt * es);
        } else {
            dg_status st = k->dev->be->read(k->dev, x->buf, raw,
                                            (size_t)cnt * es, k->err);
            if (st != DG_OK)
                return st;
        }
    }
    for (int64_t j = 0; j < cnt; j++) {
        if (x->dtype == DG_I32) {
            int32_t a;
            memcpy(&a, raw + j * 4, 4);
            v[j] = a;
        } else {
            memcpy(&v[j], raw + j * 8, 8);
        }
    }
    *n = (int)cnt;
    return DG_OK;
}

dg_status dgr_cl_k_transpose(dgr_kctx *k)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *is = &k->in[0].shape;
    int64_t s[DG_MAX_RANK], istr[DG_MAX_RANK];
    int64_t acc = 1;
    for (int i = is->rank - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= is->dims[i];
    }
    const dgc_attr *pa = dgc_attr_at(k->node, DGC_AT_perm);
    int64_t pv[DG_MAX_RANK];
    int pn = -1;
    if (pa && pa->n == is->rank) {
        pn = pa->n;
        for (int i = 0; i < pn; i++)
            pv[i] = pa->ints[i];
    } else if (!pa && k->n_in == 2) { /* a run-time perm (issue 21) */
        if ((st = int_input(k, 1, pv, DG_MAX_RANK, &pn)) != DG_OK)
            return st;
        if (pn != is->rank)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': perm has %d "
                          "entries for rank %d", k->node->name, pn, is->rank);
    }
    for (int i = 0; i < is->rank; i++) {
        int p = is->rank - 1 - i;
        if (pn >= 0)
            p = (int)(pv[i] < 0 ? pv[i] + is->rank : pv[i]);
        if (p < 0 || p >= is->rank)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': invalid perm",
                          k->node->name);
        istr[i] = s[p];
    }
    return gather(k, &k->out[0].shape, istr, 1.0);
}
DGR_KERNEL(Transpose, dgr_cl_k_transpose);

/* The reduced-axis mask of a node's "axis" attr over rank r (absent =
 * all). */
static dg_status axis_mask(dgr_kctx *k, int r, int *mask)
{
    const dgc_attr *a = dgc_attr_at(k->node, DGC_AT_axis);
    int op = k->node->op;
    if (!a && k->n_in == 2 &&
        (op == DGC_OPID_Sum || op == DGC_OPID_Mean || op == DGC_OPID_Max ||
         op == DGC_OPID_Prod || op == DGC_OPID_Min)) {
        /* TF's reduction_indices as a run-time tensor (issue 21), read
         * from host memory or back from the device; empty: no axis */
        int64_t v[64];
        int n;
        dg_status st = int_input(k, 1, v, 64, &n);
        if (st != DG_OK)
            return st;
        for (int i = 0; i < r; i++)
            mask[i] = 0;
        for (int i = 0; i < n; i++) {
            int64_t d = v[i] < 0 ? v[i] + r : v[i];
            if (d < 0 || d >= r)
                return dg_err(k->err, DG_E_RUNTIME,
                              "node '%s': axis %lld out of range for rank %d",
                              k->node->name, (long long)v[i], r);
            mask[d] = 1;
        }
        return DG_OK;
    }
    for (int i = 0; i < r; i++)
        mask[i] = a ? 0 : 1;
    if (!a)
        return DG_OK;
    int n = a->kind == DGC_A_INTS ? a->n : 1;
    for (int j = 0; j < n; j++) {
        int64_t ax = a->kind == DGC_A_INTS ? a->ints[j] : a->i;
        if (ax < 0)
            ax += r;
        if (ax < 0 || ax >= r)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': axis %lld out of range for rank %d",
                          k->node->name,
                          (long long)(a->kind == DGC_A_INTS ? a->ints[j] : a->i),
                          r);
        mask[ax] = 1;
    }
    return DG_OK;
}

dg_status dgr_cl_k_broadcast_like(dgr_kctx *k)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *os = &k->out[0].shape;
    const dg_shape *xs = &k->in[0].shape;
    int64_t istr[DG_MAX_RANK];
    int64_t nx = numel(xs), no = numel(os);
    if (dgc_attr_at(k->node, DGC_AT_axis) && nx != 1) {
        int mask[DG_MAX_RANK];
        if ((st = axis_mask(k, os->rank, mask)) != DG_OK)
            return st;
        int64_t acc = 1;
        for (int i = os->rank - 1; i >= 0; i--) {
            istr[i] = mask[i] ? 0 : acc;
            if (!mask[i])
                acc *= os->dims[i];
        }
        if (acc != nx)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': BroadcastLike input has %lld elements, "
                          "expected %lld", k->node->name, (long long)nx,
                          (long long)acc);
    } else {
        bcast_strides(xs, os, istr);
    }
    double scale = 1.0;
    if (dgc_attr_b(k->node, DGC_AT_mean) && no > 0)
        scale = (double)nx / (double)no;
    return gather(k, os, istr, scale);
}
DGR_KERNEL(BroadcastLike, dgr_cl_k_broadcast_like);

/* ---- reductions ---------------------------------------------------------- */

/* reduce.cl's OP_* */
enum { OP_SUM = 0, OP_MAX = 1, OP_PROD = 2, OP_MIN = 3 };

typedef struct red_layout {
    int kr, rr;
    int64_t kd[DG_MAX_RANK], ks[DG_MAX_RANK], rd[DG_MAX_RANK], rs[DG_MAX_RANK];
    int64_t n_out, m;
} red_layout;

static void layout(const dg_shape *xs, const int *mask, red_layout *L)
{
    int64_t st[DG_MAX_RANK], acc = 1;
    for (int i = xs->rank - 1; i >= 0; i--) {
        st[i] = acc;
        acc *= xs->dims[i];
    }
    L->kr = L->rr = 0;
    L->n_out = L->m = 1;
    int prev = -1; /* class of the previous non-1 dim */
    for (int i = 0; i < xs->rank; i++) {
        int64_t d = xs->dims[i];
        if (d == 1)
            continue;
        int red = mask[i];
        int64_t *D = red ? L->rd : L->kd, *S = red ? L->rs : L->ks;
        int *n = red ? &L->rr : &L->kr;
        if (prev == red && *n > 0 && S[*n - 1] == st[i] * d) {
            D[*n - 1] *= d;
            S[*n - 1] = st[i];
        } else {
            D[*n] = d;
            S[*n] = st[i];
            (*n)++;
        }
        prev = red;
        if (red)
            L->m *= d;
        else
            L->n_out *= d;
    }
}

static dg_status reduce_run(dgr_kctx *k, const dgr_value *x, dgr_value *y,
                            const int *mask, int op, int mean)
{
    dg_dtype dt = x->dtype;
    red_layout L;
    layout(&x->shape, mask, &L);
    if (numel(&x->shape) == 0) {
        static const double empty[] = {0.0, -INFINITY, 1.0, INFINITY};
        double v = mean ? NAN : empty[op];
        return L.n_out ? fill_value(k, y, v) : DG_OK;
    }
    cl_mem xm = dgr_cl_mem(x), ym = dgr_cl_mem(y);
    cl_long n_out = L.n_out, m = L.m;
    cl_int kr = L.kr, rr = L.rr, cop = op;
    cl_long8 kd = l8(L.kd, L.kr), ks = l8(L.ks, L.kr), rd = l8(L.rd, L.rr),
             rs = l8(L.rs, L.rr);
    double scale = mean ? 1.0 / (double)L.m : 1.0;
    cl_float sf = (cl_float)scale;
    cl_double sd = scale;
    dgr_cl_arg sc = dt == DG_F64 ? DGR_ARG(sd) : DGR_ARG(sf);
    size_t es = dg_dtype_size(dt);
    if (L.m >= 32) {
        size_t l;
        dg_status st = dgr_cl_reduce_wg(k, "reduce", dt, "reduce_wg",
                                        (size_t)L.m, es, &l);
        if (st != DG_OK)
            return st;
        size_t g = (size_t)L.n_out * l;
        dgr_cl_arg a[] = {DGR_ARG(xm), DGR_ARG(ym), DGR_ARG(n_out), DGR_ARG(m),
                          DGR_ARG(kr), DGR_ARG(kd), DGR_ARG(ks), DGR_ARG(rr),
                          DGR_ARG(rd), DGR_ARG(rs), DGR_ARG(cop), sc,
                          DGR_LOCAL(l * es)};
        return dgr_cl_launch(k, "reduce", dt, "reduce_wg", 1, &g, &l, a, 13);
    }
    dgr_cl_arg a[] = {DGR_ARG(xm), DGR_ARG(ym), DGR_ARG(n_out), DGR_ARG(m),
                      DGR_ARG(kr), DGR_ARG(kd), DGR_ARG(ks), DGR_ARG(rr),
                      DGR_ARG(rd), DGR_ARG(rs), DGR_ARG(cop), sc};
    return dgr_cl_launch1d(k, "reduce", dt, "reduce_thread", (size_t)L.n_out,
                           a, 12);
}

static dg_status reduce_op(dgr_kctx *k, int op, int mean)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    int mask[DG_MAX_RANK];
    if ((st = axis_mask(k, k->in[0].shape.rank, mask)) != DG_OK)
        return st;
    return reduce_run(k, &k->in[0], &k->out[0], mask, op, mean);
}

dg_status dgr_cl_k_sum(dgr_kctx *k) { return reduce_op(k, OP_SUM, 0); }
DGR_KERNEL(Sum, dgr_cl_k_sum);
dg_status dgr_cl_k_mean(dgr_kctx *k) { return reduce_op(k, OP_SUM, 1); }
DGR_KERNEL(Mean, dgr_cl_k_mean);
dg_status dgr_cl_k_max(dgr_kctx *k) { return reduce_op(k, OP_MAX, 0); }
DGR_KERNEL(Max, dgr_cl_k_max);
/* Prod and Min (issue 22): the same launchers; reduction_indices read
 * back as Sum's (TF keeps them in host memory) */
dg_status dgr_cl_k_prod(dgr_kctx *k) { return reduce_op(k, OP_PROD, 0); }
DGR_KERNEL(Prod, dgr_cl_k_prod);
dg_status dgr_cl_k_min(dgr_kctx *k) { return reduce_op(k, OP_MIN, 0); }
DGR_KERNEL(Min, dgr_cl_k_min);

dg_status dgr_cl_k_sum_to(dgr_kctx *k)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *xs = &k->in[0].shape, *ls = &k->out[0].shape;
    int mask[DG_MAX_RANK];
    int off = xs->rank - ls->rank;
    for (int i = 0; i < xs->rank; i++) {
        int li = i - off;
        mask[i] = li < 0 || (ls->dims[li] == 1 && xs->dims[i] != 1);
    }
    return reduce_run(k, &k->in[0], &k->out[0], mask, OP_SUM, 0);
}
DGR_KERNEL(SumTo, dgr_cl_k_sum_to);

dg_status dgr_cl_k_max_grad(dgr_kctx *k)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    int mask[DG_MAX_RANK];
    if ((st = axis_mask(k, k->in[0].shape.rank, mask)) != DG_OK)
        return st;
    red_layout L;
    layout(&k->in[0].shape, mask, &L);
    if (numel(&k->in[0].shape) == 0)
        return DG_OK;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->in[1]),
           dy = dgr_cl_mem(&k->in[2]), dx = dgr_cl_mem(&k->out[0]);
    cl_long n_out = L.n_out, m = L.m;
    cl_int kr = L.kr, rr = L.rr;
    cl_long8 kd = l8(L.kd, L.kr), ks = l8(L.ks, L.kr), rd = l8(L.rd, L.rr),
             rs = l8(L.rs, L.rr);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(y),  DGR_ARG(dy), DGR_ARG(dx),
                      DGR_ARG(n_out), DGR_ARG(m), DGR_ARG(kr), DGR_ARG(kd),
                      DGR_ARG(ks), DGR_ARG(rr), DGR_ARG(rd), DGR_ARG(rs)};
    return dgr_cl_launch1d(k, "reduce", dt, "max_grad", (size_t)L.n_out, a, 12);
}
DGR_KERNEL(MaxGrad, dgr_cl_k_max_grad);

/* ---- TF graph ops (issue 10): elementwise, BiasAddGrad ------------------- */

UN(dgr_cl_k_rsqrt, "u_rsqrt")
DGR_KERNEL(Rsqrt, dgr_cl_k_rsqrt);
UN(dgr_cl_k_reciprocal, "u_reciprocal")
DGR_KERNEL(Reciprocal, dgr_cl_k_reciprocal);
UN(dgr_cl_k_relu6, "u_relu6")
DGR_KERNEL(Relu6, dgr_cl_k_relu6);
BI(dgr_cl_k_floor_div, "b_floor_div")
DGR_KERNEL(FloorDiv, dgr_cl_k_floor_div);
BI(dgr_cl_k_floor_mod, "b_floor_mod")
DGR_KERNEL(FloorMod, dgr_cl_k_floor_mod);
BI(dgr_cl_k_less, "b_less")
DGR_KERNEL(Less, dgr_cl_k_less);
BI(dgr_cl_k_less_equal, "b_less_equal")
DGR_KERNEL(LessEqual, dgr_cl_k_less_equal);
BI(dgr_cl_k_greater, "b_greater")
DGR_KERNEL(Greater, dgr_cl_k_greater);
BI(dgr_cl_k_greater_equal, "b_greater_equal")
DGR_KERNEL(GreaterEqual, dgr_cl_k_greater_equal);
BI(dgr_cl_k_not_equal, "b_not_equal")
DGR_KERNEL(NotEqual, dgr_cl_k_not_equal);
BI(dgr_cl_k_relu6_grad, "b_relu6_grad")
DGR_KERNEL(Relu6Grad, dgr_cl_k_relu6_grad);
BI(dgr_cl_k_rsqrt_grad, "b_rsqrt_grad")
DGR_KERNEL(RsqrtGrad, dgr_cl_k_rsqrt_grad);
BI(dgr_cl_k_reciprocal_grad, "b_reciprocal_grad")
DGR_KERNEL(ReciprocalGrad, dgr_cl_k_reciprocal_grad);

/* BiasAddGrad: dy summed over every axis but the last. */
dg_status dgr_cl_k_bias_add_grad(dgr_kctx *k)
{
    dg_dtype dt = kdt(k);
    dg_status st = dgr_cl_float_output(k, dt);
    if (st != DG_OK)
        return st;
    int mask[DG_MAX_RANK];
    int r = k->in[0].shape.rank;
    for (int i = 0; i < r; i++)
        mask[i] = i < r - 1;
    return reduce_run(k, &k->in[0], &k->out[0], mask, OP_SUM, 0);
}
DGR_KERNEL(BiasAddGrad, dgr_cl_k_bias_add_grad);

/* ---- the registry ---------------------------------------------------------- */

/* The registry (dgr_cl_kernel_rows, cl_kernels_gen.c) is generated by
 * tools/gen_registry.py from the DGR_KERNEL lines next to the kernels of
 * this folder and the dgk_<shape>_<Op> kernels of the .cl files
 * (opencl_kernels/).
 * A kernel runs float32 everywhere and float64 where the device has fp64
 * (DGR_CL_KDT_FLOAT; placement masks float64 off on devices without it);
 * no int32 or bool kernels, so an int32 Variable, Const or Assign stays on
 * the CPU (SPEC 4.7); Print has no row.  The ops whose first input is a
 * shape tensor (input_sizes, ...) list its integer kernel dtypes too
 * (DGR_CL_KDT_FLOAT_INT): the value lives on the host side of the graph,
 * the kernel only reads the inferred shape.
 *
 * Rows without a kernel: the executor reads Variables and feeds (or a
 * PlaceholderWithDefault's input) itself, and the executor with frames
 * runs the control-flow ops (no OpenCL code; loop counters (int32) and
 * predicates (bool) stay on the CPU as their dtypes have no row here).
 * Shape, Size, Rank and the integer shape arithmetic (int32 Prod, Fill,
 * DynamicStitch) stay on the host as in TF (no rows). */
DGR_KERNEL_EXEC(Variable);
DGR_KERNEL_EXEC(Placeholder);
DGR_KERNEL_EXEC(Enter);
DGR_KERNEL_EXEC(Exit);
DGR_KERNEL_EXEC(Switch);
DGR_KERNEL_EXEC(Merge);
DGR_KERNEL_EXEC(NextIteration);
DGR_KERNEL_EXEC(ControlTrigger);
DGR_KERNEL_EXEC(PlaceholderWithDefault);

/* Host-memory kernels (SPEC 4.7): TensorFlow has GPU kernels for these ops
 * in float dtypes and places them on GPUs; dgrun's OpenCL backend has none
 * yet and runs them in host memory (the CPU kernel on the device's task,
 * the node still placed on the GPU).  Every op's int32, int64 and bool
 * kernels run there too (dgr_backend_opencl.host_dtypes): TF keeps int32
 * tensors in host memory; its int64 and bool GPU kernels give the values
 * the CPU's do.  A float op TF places on a GPU that is in neither table
 * fails at run time naming op and dtype (the place unit test
 * test_tf_gpu_kernels_covered checks that no supported op is left so).
 * State ops (Apply* updates) are not here: one without an OpenCL kernel
 * takes its whole colocation group (its Variable) into host memory
 * (place.c, state_groups_in_host_memory).  Shape, Size, Rank, ShapeN,
 * ConcatOffset, Unique, IsVariableInitialized and ParallelDynamicStitch
 * (DynamicStitch spelt so: its kernel dtype is its int32 indices') stay
 * here for good: TF keeps all their arguments in host memory too. */
#define HOSTF(op) [DGC_OPID_##op] = (1u << DG_F32) | (1u << DG_F64)
const uint32_t dgr_cl_host_ops[DGC_N_OPS] = {
    HOSTF(Shape), HOSTF(Size), HOSTF(Rank), HOSTF(ShapeN),
    HOSTF(ConcatOffset), HOSTF(Unique),
    HOSTF(IsVariableInitialized),
    HOSTF(SegmentSum), HOSTF(SegmentMean),
    HOSTF(SegmentMax), HOSTF(SegmentMin), HOSTF(SegmentProd),
    HOSTF(SparseSegmentSum), HOSTF(SparseSegmentMean),
    HOSTF(SparseSegmentSqrtN), HOSTF(SparseSegmentSumGrad),
    HOSTF(SparseSegmentMeanGrad), HOSTF(SparseSegmentSqrtNGrad),
    HOSTF(SparseToDense), HOSTF(InTopKV2), HOSTF(UniqueWithCounts),
    HOSTF(NonMaxSuppressionV3), HOSTF(NonMaxSuppressionV4),
    HOSTF(NonMaxSuppressionV5),
    HOSTF(Assert), /* TF: a DEFAULT kernel, every argument in host memory */
    HOSTF(LinSpace), /* issue 22 ops9b: a few host values, no kernel yet */
    HOSTF(TensorScatterUpdate), HOSTF(TensorScatterAdd), /* no kernel yet */
    HOSTF(TensorScatterSub), HOSTF(StridedSliceGrad),
    HOSTF(MatrixDiagV3), HOSTF(MatrixDiagPartV3), HOSTF(MatrixSetDiagV3),
    /* ops10c: LAPACK on the host (TF: cuSolver / cuBLAS kernels) */
    HOSTF(MatrixInverse), HOSTF(MatrixDeterminant),
    HOSTF(LogMatrixDeterminant), HOSTF(Cholesky),
    HOSTF(MatrixTriangularSolve), HOSTF(MatrixSolve), HOSTF(Qr), HOSTF(Svd),
    HOSTF(SelfAdjointEigV2),
    HOSTF(Polygamma), HOSTF(Zeta), /* issue 22 ops10b: no kernel yet */
    HOSTF(Igamma), HOSTF(Igammac),
    /* int32 / int64: the OpenCL programs are float / double only */
    HOSTF(BitwiseAnd), HOSTF(BitwiseOr), HOSTF(BitwiseXor),
    HOSTF(LeftShift), HOSTF(RightShift), HOSTF(Invert),
    HOSTF(CumulativeLogsumexp), /* no kernel yet */
    HOSTF(StatelessRandomUniform), HOSTF(StatelessRandomNormal), /* Philox */
    HOSTF(StatelessTruncatedNormal), HOSTF(StatelessRandomUniformInt),
};
