/*
 * cl_kernels_nn.c -- OpenCL kernels for the row-wise ops (Softmax, the two
 * cross-entropy ops, SoftmaxGrad), BatchNorm and its gradient, ArgMax, the
 * state ops that update a Variable in place (Assign*, Apply*, the
 * SparseApply* TF has GPU kernels for, AssignMovingAvg) and the source ops
 * (Const uploads, Random* generate on the host exactly like the CPU kernel
 * and upload).
 */
#include "cl_internal.h"
#include "dg_alloc.h"

#include <string.h>

static int64_t numel(const dg_shape *s) { return dg_shape_numel(s); }

static dg_status alloc_outs(dgr_kctx *k, dg_dtype dt)
{
    dg_status st = dgr_cl_need_float(k, dt);
    for (int i = 0; i < k->n_out && st == DG_OK; i++)
        st = dgr_kctx_alloc_output(k, i);
    return st;
}

/* T-typed scalar kernel argument */
typedef struct targ {
    cl_float f;
    cl_double d;
} targ;

static dgr_cl_arg targ_of(targ *t, dg_dtype dt, double v)
{
    t->f = (cl_float)v;
    t->d = v;
    return dt == DG_F64 ? DGR_ARG(t->d) : DGR_ARG(t->f);
}

/* ---- row-wise ------------------------------------------------------------ */

static void rows_cols(const dg_shape *s, cl_long *rows, cl_long *C)
{
    *C = s->rank > 0 ? s->dims[s->rank - 1] : 1;
    int64_t n = numel(s);
    *rows = *C ? n / *C : 0;
}

/* launch one work-group per item (a row, or a channel) of `groups` items,
 * each reducing over `len` elements; args end with the local buffer */
static dg_status group_launch(dgr_kctx *k, dg_dtype dt, const char *name,
                              cl_long groups, cl_long len, dgr_cl_arg *args,
                              int n_args)
{
    if (groups == 0)
        return DG_OK;
    size_t es = dg_dtype_size(dt), l;
    dg_status st = dgr_cl_reduce_wg(k, "nn", dt, name,
                                    (size_t)(len > 0 ? len : 1), es, &l);
    if (st != DG_OK)
        return st;
    args[n_args - 1] = DGR_LOCAL(l * es);
    size_t g = (size_t)groups * l;
    return dgr_cl_launch(k, "nn", dt, name, 1, &g, &l, args, n_args);
}

/* one work-group per row of C elements */
static dg_status row_launch(dgr_kctx *k, dg_dtype dt, const char *name,
                            cl_long rows, cl_long C, dgr_cl_arg *args,
                            int n_args)
{
    return group_launch(k, dt, name, rows, C, args, n_args);
}

dg_status dgr_cl_k_softmax(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = alloc_outs(k, dt);
    if (st != DG_OK)
        return st;
    cl_long rows, C;
    rows_cols(&k->in[0].shape, &rows, &C);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(C), {0, NULL}};
    return row_launch(k, dt, "softmax", rows, C, a, 4);
}
DGR_KERNEL(Softmax, dgr_cl_k_softmax);

dg_status dgr_cl_k_xent(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = alloc_outs(k, dt);
    if (st != DG_OK)
        return st;
    cl_long rows, C;
    rows_cols(&k->in[0].shape, &rows, &C);
    cl_mem x = dgr_cl_mem(&k->in[0]), lab = dgr_cl_mem(&k->in[1]),
           loss = dgr_cl_mem(&k->out[0]), bp = dgr_cl_mem(&k->out[1]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(lab), DGR_ARG(loss),
                      DGR_ARG(bp), DGR_ARG(C),   {0, NULL}};
    return row_launch(k, dt, "xent", rows, C, a, 6);
}
DGR_KERNEL(SoftmaxCrossEntropyWithLogits, dgr_cl_k_xent);

dg_status dgr_cl_k_sparse_xent(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = alloc_outs(k, dt);
    if (st != DG_OK)
        return st;
    if (k->in[1].dtype != DG_I32 && k->in[1].dtype != DG_I64)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': labels must be int32 or int64",
                      k->node->name);
    cl_long rows, C;
    rows_cols(&k->in[0].shape, &rows, &C);
    cl_int is64 = k->in[1].dtype == DG_I64;
    cl_mem x = dgr_cl_mem(&k->in[0]), lab = dgr_cl_mem(&k->in[1]),
           loss = dgr_cl_mem(&k->out[0]), bp = dgr_cl_mem(&k->out[1]);
    dgr_cl_arg a[] = {DGR_ARG(x),  DGR_ARG(lab), DGR_ARG(is64), DGR_ARG(loss),
                      DGR_ARG(bp), DGR_ARG(C),   {0, NULL}};
    return row_launch(k, dt, "sparse_xent", rows, C, a, 7);
}
DGR_KERNEL(SparseSoftmaxCrossEntropyWithLogits, dgr_cl_k_sparse_xent);

dg_status dgr_cl_k_softmax_grad(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = alloc_outs(k, dt);
    if (st != DG_OK)
        return st;
    cl_long rows, C;
    rows_cols(&k->in[0].shape, &rows, &C);
    cl_mem y = dgr_cl_mem(&k->in[0]), dy = dgr_cl_mem(&k->in[1]),
           dx = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(y), DGR_ARG(dy), DGR_ARG(dx), DGR_ARG(C),
                      {0, NULL}};
    return row_launch(k, dt, "softmax_grad", rows, C, a, 5);
}
DGR_KERNEL(SoftmaxGrad, dgr_cl_k_softmax_grad);

/* ---- batch norm ---------------------------------------------------------- */

/* one work-group per channel over `rows` rows */
static dg_status chan_launch(dgr_kctx *k, dg_dtype dt, const char *name,
                             cl_long rows, cl_long C, dgr_cl_arg *args,
                             int n_args)
{
    return group_launch(k, dt, name, C, rows, args, n_args);
}

dg_status dgr_cl_k_batchnorm(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = alloc_outs(k, dt);
    if (st != DG_OK)
        return st;
    cl_long rows, C;
    rows_cols(&k->in[0].shape, &rows, &C);
    cl_long n = rows * C;
    cl_mem x = dgr_cl_mem(&k->in[0]), sc = dgr_cl_mem(&k->in[1]),
           of = dgr_cl_mem(&k->in[2]), y = dgr_cl_mem(&k->out[0]),
           mean = dgr_cl_mem(&k->out[1]), var = dgr_cl_mem(&k->out[2]);
    dgr_cl_arg a[] = {DGR_ARG(x),    DGR_ARG(mean), DGR_ARG(var),
                      DGR_ARG(rows), DGR_ARG(C),    {0, NULL}};
    if ((st = chan_launch(k, dt, "bn_stats", rows, C, a, 6)) != DG_OK)
        return st;
    targ te;
    dgr_cl_arg b[] = {DGR_ARG(x),   DGR_ARG(sc), DGR_ARG(of), DGR_ARG(mean),
                      DGR_ARG(var), DGR_ARG(y),  DGR_ARG(n),  DGR_ARG(C),
                      targ_of(&te, dt, dgc_attr_f(k->node, DGC_AT_epsilon))};
    return dgr_cl_launch1d(k, "nn", dt, "bn_apply", (size_t)n, b, 9);
}
DGR_KERNEL(BatchNorm, dgr_cl_k_batchnorm);

dg_status dgr_cl_k_batchnorm_grad(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = alloc_outs(k, dt);
    if (st != DG_OK)
        return st;
    cl_long rows, C;
    rows_cols(&k->in[1].shape, &rows, &C);
    cl_long n = rows * C;
    cl_mem dy = dgr_cl_mem(&k->in[0]), x = dgr_cl_mem(&k->in[1]),
           sc = dgr_cl_mem(&k->in[2]), mean = dgr_cl_mem(&k->in[3]),
           var = dgr_cl_mem(&k->in[4]), dx = dgr_cl_mem(&k->out[0]),
           dsc = dgr_cl_mem(&k->out[1]), dof = dgr_cl_mem(&k->out[2]);
    targ te;
    dgr_cl_arg eps = targ_of(&te, dt, dgc_attr_f(k->node, DGC_AT_epsilon));
    dgr_cl_arg a[] = {DGR_ARG(dy),   DGR_ARG(x),   DGR_ARG(mean),
                      DGR_ARG(var),  DGR_ARG(dsc), DGR_ARG(dof),
                      DGR_ARG(rows), DGR_ARG(C),   eps,
                      {0, NULL}};
    if ((st = chan_launch(k, dt, "bn_grad_reduce", rows, C, a, 10)) != DG_OK)
        return st;
    dgr_cl_arg b[] = {DGR_ARG(dy),  DGR_ARG(x),   DGR_ARG(sc),  DGR_ARG(mean),
                      DGR_ARG(var), DGR_ARG(dsc), DGR_ARG(dof), DGR_ARG(dx),
                      DGR_ARG(n),   DGR_ARG(C),   DGR_ARG(rows), eps};
    return dgr_cl_launch1d(k, "nn", dt, "bn_grad_apply", (size_t)n, b, 12);
}
DGR_KERNEL(BatchNormGrad, dgr_cl_k_batchnorm_grad);

/* ---- ArgMax -------------------------------------------------------------- */

dg_status dgr_cl_k_argmax(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    dg_dtype ot = k->out_types[0].dtype;
    if (ot != DG_I64 && ot != DG_I32)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': ArgMax produces int32 or int64, not %s",
                      k->node->name, dg_dtype_name(ot));
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK)
        return st;
    const dg_shape *s = &k->in[0].shape;
    int64_t ax = dgc_attr_i(k->node, DGC_AT_axis);
    if (ax < 0)
        ax += s->rank;
    if (s->rank == 0)
        ax = 0;
    else if (ax < 0 || ax >= s->rank)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': axis out of range for rank %d",
                      k->node->name, s->rank);
    cl_long outer = 1, n = s->rank ? s->dims[ax] : 1, inner = 1;
    for (int i = 0; i < ax && i < s->rank; i++)
        outer *= s->dims[i];
    for (int i = (int)ax + 1; i < s->rank; i++)
        inner *= s->dims[i];
    if (n == 0)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': ArgMax over an empty axis", k->node->name);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x), DGR_ARG(y), DGR_ARG(outer), DGR_ARG(n),
                      DGR_ARG(inner)};
    int mn = k->node->op == DGC_OPID_ArgMin;
    return dgr_cl_launch1d(k, "reduce", dt,
                           ot == DG_I32 ? (mn ? "argmin_i32" : "argmax_i32")
                                        : (mn ? "argmin" : "argmax"),
                           (size_t)(outer * inner),
                           a, 5);
}
DGR_KERNEL(ArgMax, dgr_cl_k_argmax);
DGR_KERNEL(ArgMin, dgr_cl_k_argmax);

/* ---- state ops ----------------------------------------------------------- */

/* output 0 = the variable (input 0), updated in place */
static dg_status state_prep(dgr_kctx *k, int n_same)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    if (!k->in[0].buf)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': variable has no value",
                      k->node->name);
    int64_t n = numel(&k->in[0].shape);
    for (int i = 1; i < n_same; i++)
        if (numel(&k->in[i].shape) != n)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': input %d has %lld elements, the variable "
                          "%lld", k->node->name, i,
                          (long long)numel(&k->in[i].shape), (long long)n);
    k->out[0].dtype = k->in[0].dtype;
    k->out[0].shape = k->in[0].shape;
    k->out[0].buf = k->in[0].buf;
    dgr_buffer_retain(k->in[0].buf);
    return DG_OK;
}

dg_status dgr_cl_k_assign(dgr_kctx *k)
{
    dg_status st = state_prep(k, 2);
    if (st != DG_OK)
        return st;
    size_t bytes = (size_t)numel(&k->in[0].shape) * dg_dtype_size(k->in[0].dtype);
    cl_mem dst = dgr_cl_mem(&k->in[0]), src = dgr_cl_mem(&k->in[1]);
    if (!bytes || dst == src)
        return DG_OK;
    cl_event ev = NULL;
    const cl_event *wl;
    cl_uint nw = dgr_cl_take_waits(k, &wl);
    cl_int e = clEnqueueCopyBuffer(dgr_cl_queue(k), src, dst, 0, 0, bytes,
                                   nw, wl, dgr_cl_want_event(k) ? &ev : NULL);
    return dgr_cl_enqueued(k, "clEnqueueCopyBuffer", e, wl, nw, ev);
}
DGR_KERNEL(Assign, dgr_cl_k_assign);

static dg_status assign_add(dgr_kctx *k, double sign)
{
    dg_status st = state_prep(k, 2);
    if (st != DG_OK)
        return st;
    dg_dtype dt = k->in[0].dtype;
    cl_mem v = dgr_cl_mem(&k->in[0]), x = dgr_cl_mem(&k->in[1]);
    cl_long n = numel(&k->in[0].shape);
    targ t;
    dgr_cl_arg a[] = {DGR_ARG(v), DGR_ARG(x), DGR_ARG(n), targ_of(&t, dt, sign)};
    return dgr_cl_launch1d(k, "train", dt, "assign_add", (size_t)n, a, 4);
}

dg_status dgr_cl_k_assign_add(dgr_kctx *k) { return assign_add(k, 1.0); }
DGR_KERNEL(AssignAdd, dgr_cl_k_assign_add);
dg_status dgr_cl_k_assign_sub(dgr_kctx *k) { return assign_add(k, -1.0); }
DGR_KERNEL(AssignSub, dgr_cl_k_assign_sub);

dg_status dgr_cl_k_apply_gd(dgr_kctx *k)
{
    dg_status st = state_prep(k, 1);
    if (st != DG_OK)
        return st;
    dg_dtype dt = k->in[0].dtype;
    cl_long n = numel(&k->in[0].shape);
    if (numel(&k->in[2].shape) != n)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': gradient shape does not match the variable",
                      k->node->name);
    cl_mem v = dgr_cl_mem(&k->in[0]), lr = dgr_cl_mem(&k->in[1]),
           g = dgr_cl_mem(&k->in[2]);
    dgr_cl_arg a[] = {DGR_ARG(v), DGR_ARG(lr), DGR_ARG(g), DGR_ARG(n)};
    return dgr_cl_launch1d(k, "train", dt, "apply_gd", (size_t)n, a, 4);
}
DGR_KERNEL(ApplyGradientDescent, dgr_cl_k_apply_gd);

dg_status dgr_cl_k_apply_momentum(dgr_kctx *k)
{
    dg_status st = state_prep(k, 2);
    if (st != DG_OK)
        return st;
    dg_dtype dt = k->in[0].dtype;
    cl_long n = numel(&k->in[0].shape);
    cl_int nest = dgc_attr_b(k->node, DGC_AT_use_nesterov);
    cl_mem v = dgr_cl_mem(&k->in[0]), acc = dgr_cl_mem(&k->in[1]),
           lr = dgr_cl_mem(&k->in[2]), g = dgr_cl_mem(&k->in[3]),
           mom = dgr_cl_mem(&k->in[4]);
    dgr_cl_arg a[] = {DGR_ARG(v),   DGR_ARG(acc), DGR_ARG(lr), DGR_ARG(g),
                      DGR_ARG(mom), DGR_ARG(n),   DGR_ARG(nest)};
    return dgr_cl_launch1d(k, "train", dt, "apply_momentum", (size_t)n, a, 7);
}
DGR_KERNEL(ApplyMomentum, dgr_cl_k_apply_momentum);

dg_status dgr_cl_k_apply_adam(dgr_kctx *k)
{
    dg_status st = state_prep(k, 3);
    if (st != DG_OK)
        return st;
    dg_dtype dt = k->in[0].dtype;
    cl_long n = numel(&k->in[0].shape);
    cl_int nest = dgc_attr_b(k->node, DGC_AT_use_nesterov);
    cl_mem m[10];
    for (int i = 0; i < 10; i++)
        m[i] = dgr_cl_mem(&k->in[i]);
    dgr_cl_arg a[] = {DGR_ARG(m[0]), DGR_ARG(m[1]), DGR_ARG(m[2]),
                      DGR_ARG(m[3]), DGR_ARG(m[4]), DGR_ARG(m[5]),
                      DGR_ARG(m[6]), DGR_ARG(m[7]), DGR_ARG(m[8]),
                      DGR_ARG(m[9]), DGR_ARG(n),    DGR_ARG(nest)};
    return dgr_cl_launch1d(k, "train", dt, "apply_adam", (size_t)n, a, 12);
}
DGR_KERNEL(ApplyAdam, dgr_cl_k_apply_adam);

/* The other tf.compat.v1.train updates TF has GPU kernels for (issue 22):
 * kernels_cpu_state.c's dgr_k_apply_opt as train.cl's apply_opt, by the
 * dense formula's K_* code there. */
static const int opt_codes[][2] = {
    {DGC_OPID_ApplyAdagrad, 0},     {DGC_OPID_ApplyRMSProp, 1},
    {DGC_OPID_ApplyCenteredRMSProp, 2}, {DGC_OPID_ApplyAdadelta, 3},
    {DGC_OPID_ApplyAdaMax, 4},      {DGC_OPID_ApplyFtrl, 5},
    {DGC_OPID_ApplyFtrlV2, 6},      {DGC_OPID_ApplyProximalAdagrad, 7},
};

dg_status dgr_cl_k_apply_opt(dgr_kctx *k)
{
    int op = k->node->op, dense = dgc_op_apply_dense(op), refs, ixi;
    cl_int code = -1;
    for (size_t c = 0; c < sizeof opt_codes / sizeof opt_codes[0]; c++)
        if (opt_codes[c][0] == dense)
            code = opt_codes[c][1];
    refs = dgc_op_n_refs(op);
    int gi = dgc_op_apply_layout(op, k->n_in, &ixi);
    if (code < 0 || refs > 4)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no OpenCL kernel "
                      "for %s", k->node->name, dgc_op_name(op));
    dg_status st = state_prep(k, refs);
    if (st != DG_OK)
        return st;
    const dg_shape *vs = &k->in[0].shape;
    cl_long rows = 1, inner = numel(vs), cnt = 1;
    cl_int has_ix = ixi >= 0;
    if (has_ix) {
        rows = vs->rank > 0 ? vs->dims[0] : 0;
        inner = rows > 0 ? inner / rows : 0;
        cnt = numel(&k->in[ixi].shape);
    }
    if (numel(&k->in[gi].shape) != cnt * inner || vs->rank < has_ix)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': gradient has %lld "
                      "elements, not %lld", k->node->name,
                      (long long)numel(&k->in[gi].shape),
                      (long long)(cnt * inner));
    if (cnt == 0 || inner == 0)
        return DG_OK;
    cl_mem m[4], h[5], g = dgr_cl_mem(&k->in[gi]);
    for (int i = 0; i < 4; i++)
        m[i] = dgr_cl_mem(&k->in[i < refs ? i : 0]);
    int n_h = 0;
    for (int i = refs; i < k->n_in && n_h < 5; i++)
        if (i != gi && i != ixi)
            h[n_h++] = dgr_cl_mem(&k->in[i]);
    for (int i = n_h; i < 5; i++)
        h[i] = n_h ? h[0] : g; /* unread */
    cl_mem ix = has_ix ? dgr_cl_mem(&k->in[ixi]) : g;
    cl_int slots = dense != DGC_OPID_ApplyAdagrad ||
                   dgc_attr_b(k->node, DGC_AT_update_slots);
    cl_int mul_lr = (dense == DGC_OPID_ApplyFtrl ||
                     dense == DGC_OPID_ApplyFtrlV2) &&
                    dgc_attr_b(k->node, DGC_AT_multiply_linear_by_lr);
    dgr_cl_arg a[] = {DGR_ARG(code), DGR_ARG(m[0]), DGR_ARG(m[1]),
                      DGR_ARG(m[2]), DGR_ARG(m[3]), DGR_ARG(g), DGR_ARG(ix),
                      DGR_ARG(has_ix), DGR_ARG(cnt), DGR_ARG(inner),
                      DGR_ARG(rows), DGR_ARG(h[0]), DGR_ARG(h[1]),
                      DGR_ARG(h[2]), DGR_ARG(h[3]), DGR_ARG(h[4]),
                      DGR_ARG(slots), DGR_ARG(mul_lr)};
    return dgr_cl_launch1d(k, "train", k->in[0].dtype,
                           has_ix && k->in[ixi].dtype == DG_I64
                               ? "apply_opt_i64"
                               : "apply_opt_i32",
                           (size_t)inner, a, 18);
}
DGR_KERNEL(ApplyAdagrad, dgr_cl_k_apply_opt);
DGR_KERNEL(ApplyRMSProp, dgr_cl_k_apply_opt);
DGR_KERNEL(ApplyCenteredRMSProp, dgr_cl_k_apply_opt);
DGR_KERNEL(ApplyAdadelta, dgr_cl_k_apply_opt);
DGR_KERNEL(ApplyAdaMax, dgr_cl_k_apply_opt);
DGR_KERNEL(ApplyProximalAdagrad, dgr_cl_k_apply_opt);
DGR_KERNEL(ApplyFtrl, dgr_cl_k_apply_opt);
DGR_KERNEL(ApplyFtrlV2, dgr_cl_k_apply_opt);
DGR_KERNEL(SparseApplyAdagrad, dgr_cl_k_apply_opt);
DGR_KERNEL(SparseApplyAdadelta, dgr_cl_k_apply_opt);
DGR_KERNEL(SparseApplyFtrl, dgr_cl_k_apply_opt);
DGR_KERNEL(SparseApplyFtrlV2, dgr_cl_k_apply_opt);
DGR_KERNEL(SparseApplyProximalAdagrad, dgr_cl_k_apply_opt);

dg_status dgr_cl_k_moving_avg(dgr_kctx *k)
{
    dg_status st = state_prep(k, 2);
    if (st != DG_OK)
        return st;
    dg_dtype dt = k->in[0].dtype;
    cl_long n = numel(&k->in[0].shape);
    cl_mem v = dgr_cl_mem(&k->in[0]), x = dgr_cl_mem(&k->in[1]);
    targ t;
    dgr_cl_arg a[] = {DGR_ARG(v), DGR_ARG(x), DGR_ARG(n),
                      targ_of(&t, dt, dgc_attr_f(k->node, DGC_AT_decay))};
    return dgr_cl_launch1d(k, "train", dt, "moving_avg", (size_t)n, a, 4);
}
DGR_KERNEL(AssignMovingAvg, dgr_cl_k_moving_avg);

/* ---- sources ------------------------------------------------------------- */

static double host_load(const void *p, dg_dtype t, int64_t i)
{
    switch (t) {
    case DG_F32: return ((const float *)p)[i];
    case DG_F64: return ((const double *)p)[i];
    case DG_I32: return ((const int32_t *)p)[i];
    case DG_I64: return (double)((const int64_t *)p)[i];
    case DG_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

static void host_store(void *p, dg_dtype t, int64_t i, double v)
{
    switch (t) {
    case DG_F32: ((float *)p)[i] = (float)v; break;
    case DG_F64: ((double *)p)[i] = v; break;
    case DG_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case DG_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case DG_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}

/* Enqueue a write of `bytes` from host memory; blocking unless the memory
 * outlives the command (keep = 1). */
static dg_status upload(dgr_kctx *k, dgr_value *out, const void *src,
                        size_t bytes, int keep)
{
    if (!bytes)
        return DG_OK;
    cl_event ev = NULL;
    const cl_event *wl;
    cl_uint nw = dgr_cl_take_waits(k, &wl);
    cl_int e = clEnqueueWriteBuffer(dgr_cl_queue(k), dgr_cl_mem(out),
                                    keep ? CL_FALSE : CL_TRUE, 0, bytes, src,
                                    nw, wl, dgr_cl_want_event(k) ? &ev : NULL);
    return dgr_cl_enqueued(k, "clEnqueueWriteBuffer", e, wl, nw, ev);
}

dg_status dgr_cl_k_const(dgr_kctx *k)
{
    const dgc_attr *a = dgc_attr_at(k->node, DGC_AT_value);
    if (!a || !a->tensor)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': Const has no value",
                      k->node->name);
    const dg_tensor *t = a->tensor;
    dg_dtype to = k->out_types[0].dtype;
    dg_status st = dgr_cl_float_output(k, to);
    if (st != DG_OK)
        return st;
    int64_t n = numel(&k->out[0].shape), tn = numel(&t->shape);
    size_t bytes = (size_t)n * dg_dtype_size(to);
    if (t->dtype == to && tn == n)
        return upload(k, &k->out[0], t->data, bytes, 1); /* graph-owned */
    if (tn != n && tn != 1)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': value has %lld elements, shape needs %lld",
                      k->node->name, (long long)tn, (long long)n);
    void *tmp = dg_malloc(bytes ? bytes : 1);
    if (!tmp)
        return dg_err_nomem(k->err, "Const upload");
    for (int64_t i = 0; i < n; i++)
        host_store(tmp, to, i, host_load(t->data, t->dtype, tn == 1 ? 0 : i));
    st = upload(k, &k->out[0], tmp, bytes, 0);
    dg_free(tmp);
    return st;
}
DGR_KERNEL(Const, dgr_cl_k_const);

dg_status dgr_cl_k_random(dgr_kctx *k)
{
    dg_dtype to = k->out_types[0].dtype;
    dg_status st = dgr_cl_float_output(k, to);
    if (st != DG_OK)
        return st;
    int64_t n = numel(&k->out[0].shape);
    size_t bytes = (size_t)n * dg_dtype_size(to);
    void *tmp = dg_malloc(bytes ? bytes : 1);
    if (!tmp)
        return dg_err_nomem(k->err, "random numbers");
    dgr_rng r;
    dgr_rng_seed(&r, k->env->rng_seed(k->env->ctx, k->node_id));
    /* drawn on the host as the CPU kernel does: the same numbers */
    dgr_rng_fill_node(&r, k->node, tmp, to, n);
    st = upload(k, &k->out[0], tmp, bytes, 0);
    dg_free(tmp);
    return st;
}
/* issue 21: the random ops drawn on the host (rng.c, the CPU's numbers)
 * and uploaded, as TF has GPU kernels for them (RandomUniformInt in
 * int32/int64, its shape, minval and maxval in host memory; Multinomial
 * reads its logits back) */
DGR_KERNEL(RandomNormal, dgr_cl_k_random);
DGR_KERNEL(RandomUniform, dgr_cl_k_random);
DGR_KERNEL(TruncatedNormal, dgr_cl_k_random);

/* A scalar int input's value, read back when it lives on the device. */
static dg_status int_scalar(dgr_kctx *k, int i, int64_t *v)
{
    const dgr_value *x = &k->in[i];
    unsigned char tmp[8] = {0};
    dg_status st = x->buf->host ? (memcpy(tmp, x->buf->host,
                                          dg_dtype_size(x->dtype)), DG_OK)
                                : k->dev->be->read(k->dev, x->buf, tmp,
                                                   dg_dtype_size(x->dtype),
                                                   k->err);
    if (x->dtype == DG_I32) {
        int32_t a;
        memcpy(&a, tmp, sizeof a);
        *v = a;
    } else {
        memcpy(v, tmp, sizeof *v);
    }
    return st;
}

/* RandomUniformInt (issue 21): TF's GPU kernel (int32/int64, shape in host
 * memory); drawn on the host as on the CPU and uploaded. */
dg_status dgr_cl_k_random_uniform_int(dgr_kctx *k)
{
    int64_t lo, hi;
    dg_status st = int_scalar(k, 1, &lo);
    if (st == DG_OK)
        st = int_scalar(k, 2, &hi);
    if (st != DG_OK)
        return st;
    int64_t n = numel(&k->out_types[0].shape);
    if (n > 0 && lo >= hi)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': RandomUniformInt: Need minval < maxval: "
                      "%lld >= %lld", k->node->name, (long long)lo,
                      (long long)hi);
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK)
        return st;
    dg_dtype to = k->out[0].dtype;
    size_t bytes = (size_t)n * dg_dtype_size(to);
    void *tmp = dg_malloc(bytes ? bytes : 1);
    if (!tmp)
        return dg_err_nomem(k->err, "random numbers");
    dgr_rng r;
    dgr_rng_seed(&r, k->env->rng_seed(k->env->ctx, k->node_id));
    dgr_rng_fill_int(&r, lo, hi, tmp, to, n);
    st = upload(k, &k->out[0], tmp, bytes, 0);
    dg_free(tmp);
    return st;
}
DGR_KERNEL_DT(RandomUniformInt, dgr_cl_k_random_uniform_int, DGR_CL_KDT_INT);

/* Multinomial (issue 21): the logits read back, sampled on the host as on
 * the CPU (the same indices), the indices uploaded. */
dg_status dgr_cl_k_multinomial(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st != DG_OK)
        return st;
    const dgr_value *x = &k->in[0];
    int64_t rows = x->shape.dims[0], classes = x->shape.dims[1];
    int64_t samples = k->out[0].shape.dims[1];
    size_t lb = (size_t)(rows * classes) * dg_dtype_size(x->dtype);
    size_t ob = (size_t)(rows * samples) * dg_dtype_size(k->out[0].dtype);
    void *lg = dg_malloc(lb ? lb : 1), *o = dg_malloc(ob ? ob : 1);
    double *cdf = dg_malloc(sizeof *cdf * (size_t)(classes > 0 ? classes : 1));
    if (!lg || !o || !cdf) {
        dg_free(lg); dg_free(o); dg_free(cdf);
        return dg_err_nomem(k->err, "Multinomial");
    }
    if (lb)
        st = k->dev->be->read(k->dev, x->buf, lg, lb, k->err);
    if (st == DG_OK) {
        dgr_rng r;
        dgr_rng_seed(&r, k->env->rng_seed(k->env->ctx, k->node_id));
        dgr_rng_multinomial(&r, lg, x->dtype, rows, classes, samples, o,
                            k->out[0].dtype, cdf);
        st = upload(k, &k->out[0], o, ob, 0);
    }
    dg_free(lg); dg_free(o); dg_free(cdf);
    return st;
}
DGR_KERNEL(Multinomial, dgr_cl_k_multinomial);
