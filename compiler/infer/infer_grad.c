/*
 * infer_grad.c -- shape and dtype inference for the ops the gradient and
 * training passes generate (SumTo, BroadcastLike, ReluGrad, ApplyAdam,
 * BatchNorm, ...).  Contracts in infer.h; semantics in ops.c's doc strings.
 * Dims may be -1 (unknown) at compile time; -1 is compatible with anything.
 */
#include "infer.h"
#include "dg_util.h"

#include <stdio.h>
#include <string.h>

/* Whether two dims may be equal (either unknown, or the same). */
static int dim_ok(int64_t a, int64_t b)
{
    return a < 0 || b < 0 || a == b;
}

/* Whether shapes a and b may be equal. */
static int shapes_match(const dg_shape *a, const dg_shape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!dim_ok(a->dims[i], b->dims[i]))
            return 0;
    return 1;
}

static int mismatch(const char *what, const dg_shape *a, const dg_shape *b,
                    char *msg, size_t msgsz)
{
    char sa[160], sb[160];
    dg_shape_format(a, sa, sizeof sa);
    dg_shape_format(b, sb, sizeof sb);
    snprintf(msg, msgsz, "%s: shapes %s and %s do not match", what, sa, sb);
    return -1;
}

static int need_inputs(int n_in, int want, char *msg, size_t msgsz)
{
    if (n_in != want) {
        snprintf(msg, msgsz, "expected %d inputs, got %d", want, n_in);
        return -1;
    }
    return 0;
}

static int is_float(dg_dtype t)
{
    return t == DG_F32 || t == DG_F64;
}

int dgc_infer_sum_to(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 2, msg, msgsz))
        return -1;
    /* like's shape must broadcast to x's shape (trailing alignment) */
    const dg_shape *x = &in[0].shape, *l = &in[1].shape;
    if (l->rank > x->rank)
        return mismatch("cannot sum down to a higher rank", x, l, msg, msgsz);
    for (int i = 0; i < l->rank; i++) {
        int64_t ld = l->dims[l->rank - 1 - i];
        int64_t xd = x->dims[x->rank - 1 - i];
        if (ld != 1 && !dim_ok(ld, xd))
            return mismatch("cannot sum down", x, l, msg, msgsz);
    }
    out[0].dtype = in[0].dtype;
    out[0].shape = *l;
    return 0;
}

int dgc_infer_broadcast_like(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 2, msg, msgsz))
        return -1;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[1].shape;
    return 0;
}

int dgc_infer_reshape_like(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 2, msg, msgsz))
        return -1;
    int64_t a = dg_shape_numel(&in[0].shape), b = dg_shape_numel(&in[1].shape);
    if (a >= 0 && b >= 0 && a != b)
        return mismatch("element counts differ", &in[0].shape, &in[1].shape,
                        msg, msgsz);
    out[0].dtype = in[0].dtype;
    out[0].shape = in[1].shape;
    return 0;
}

int dgc_infer_grad_pair(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 2, msg, msgsz))
        return -1;
    if (in[0].dtype != in[1].dtype) {
        snprintf(msg, msgsz, "dtypes %s and %s differ",
                 dg_dtype_name(in[0].dtype), dg_dtype_name(in[1].dtype));
        return -1;
    }
    if (!shapes_match(&in[0].shape, &in[1].shape))
        return mismatch("inputs", &in[0].shape, &in[1].shape, msg, msgsz);
    out[0] = in[0];
    /* fill unknown dims from the other input */
    for (int i = 0; i < out[0].shape.rank; i++)
        if (out[0].shape.dims[i] < 0)
            out[0].shape.dims[i] = in[1].shape.dims[i];
    return 0;
}

int dgc_infer_max_grad(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 3, msg, msgsz))
        return -1;
    if (in[0].dtype != in[2].dtype) {
        snprintf(msg, msgsz, "dtypes %s and %s differ",
                 dg_dtype_name(in[0].dtype), dg_dtype_name(in[2].dtype));
        return -1;
    }
    if (!shapes_match(&in[1].shape, &in[2].shape))
        return mismatch("y and dy", &in[1].shape, &in[2].shape, msg, msgsz);
    out[0] = in[0];
    return 0;
}

/* var (input 0) must be float; `grad` must match it; scalars must be
 * scalars of the var's dtype. */
static int check_apply(const dgc_ttype *in, int n_in, int grad, const int *scal,
                       int n_scal, const int *slots, int n_slots, char *msg,
                       size_t msgsz)
{
    if (!is_float(in[0].dtype)) {
        snprintf(msg, msgsz, "variable dtype %s is not a float type",
                 dg_dtype_name(in[0].dtype));
        return -1;
    }
    for (int i = 0; i < n_in; i++)
        if (in[i].dtype != in[0].dtype) {
            snprintf(msg, msgsz, "input %d has dtype %s, variable has %s", i,
                     dg_dtype_name(in[i].dtype), dg_dtype_name(in[0].dtype));
            return -1;
        }
    if (!shapes_match(&in[0].shape, &in[grad].shape))
        return mismatch("variable and gradient", &in[0].shape,
                        &in[grad].shape, msg, msgsz);
    for (int i = 0; i < n_slots; i++)
        if (!shapes_match(&in[0].shape, &in[slots[i]].shape))
            return mismatch("variable and slot", &in[0].shape,
                            &in[slots[i]].shape, msg, msgsz);
    for (int i = 0; i < n_scal; i++) {
        int64_t ne = dg_shape_numel(&in[scal[i]].shape);
        if (ne >= 0 && ne != 1) {
            snprintf(msg, msgsz, "input %d must be a scalar", scal[i]);
            return -1;
        }
    }
    return 0;
}

int dgc_infer_apply_momentum(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 5, msg, msgsz))
        return -1;
    static const int scal[] = {2, 4}, slots[] = {1};
    if (check_apply(in, n_in, 3, scal, 2, slots, 1, msg, msgsz))
        return -1;
    out[0] = in[0];
    return 0;
}

/* A sparse update's row indices (vector, int) and gradient rows
 * (indices.shape + var.shape[1:]); AdagradDA's global_step (int64 scalar).
 * Rewrites them in t (a copy of the inputs) as check_apply's dense
 * gradient and scalar of the variable's dtype. */
static int check_sparse_apply(const dgc_node *n, dgc_ttype *t, int n_in,
                              int grad, int ix, char *msg, size_t msgsz)
{
    if (dgc_op_apply_dense(n->op) == DGC_OPID_ApplyAdagradDA) {
        int step = n_in - 1;
        if (t[step].dtype != DG_I64) {
            snprintf(msg, msgsz, "global_step (input %d) must be int64", step);
            return -1;
        }
        t[step].dtype = t[0].dtype;
    }
    if (ix < 0)
        return 0;
    const dg_shape *v = &t[0].shape, *g = &t[grad].shape, *i = &t[ix].shape;
    if (t[ix].dtype != DG_I32 && t[ix].dtype != DG_I64) {
        snprintf(msg, msgsz, "indices (input %d) must be int32 or int64", ix);
        return -1;
    }
    if (i->rank != 1 || v->rank < 1 || g->rank != v->rank ||
        !dim_ok(g->dims[0], i->dims[0])) {
        snprintf(msg, msgsz, "needs a variable of rank >= 1, a vector of "
                 "indices and gradient rows indices.shape + var.shape[1:]");
        return -1;
    }
    t[grad].shape.dims[0] = v->dims[0]; /* rows checked above */
    t[ix].dtype = t[0].dtype;
    t[ix].shape.rank = 0;
    return 0;
}

int dgc_infer_apply_opt(DGC_INFER_ARGS)
{
    /* the variable, its slots, scalar hyper-parameters, the gradient
     * (dgc_op_apply_layout: where it is, and a sparse update's indices) */
    int refs = dgc_op_n_refs(n->op), scal[DGC_MAX_APPLY], slots[4], ix;
    if (n_in < refs + 1 || n_in - refs - 1 > DGC_MAX_APPLY ||
        n_in > DGC_MAX_APPLY + 6) {
        snprintf(msg, msgsz, "has %d inputs", n_in);
        return -1;
    }
    int grad = dgc_op_apply_layout(n->op, n_in, &ix), n_scal = 0;
    dgc_ttype t[DGC_MAX_APPLY + 6];
    memcpy(t, in, (size_t)n_in * sizeof *t);
    if (check_sparse_apply(n, t, n_in, grad, ix, msg, msgsz))
        return -1;
    for (int i = 1; i < refs; i++)
        slots[i - 1] = i;
    for (int i = refs; i < n_in; i++)
        if (i != grad)
            scal[n_scal++] = i; /* ix: made a scalar above */
    if (check_apply(t, n_in, grad, scal, n_scal, slots, refs - 1, msg,
                    msgsz))
        return -1;
    out[0] = in[0];
    return 0;
}

int dgc_infer_apply_adam(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 10, msg, msgsz))
        return -1;
    static const int scal[] = {3, 4, 5, 6, 7, 8}, slots[] = {1, 2};
    if (check_apply(in, n_in, 9, scal, 6, slots, 2, msg, msgsz))
        return -1;
    out[0] = in[0];
    return 0;
}

/* x [..., C]; vectors [C] at the given inputs. */
static int check_bn(const dgc_ttype *in, int n_in, int x, const int *vec,
                    int n_vec, char *msg, size_t msgsz)
{
    const dg_shape *xs = &in[x].shape;
    if (xs->rank < 1) {
        snprintf(msg, msgsz, "x must have rank >= 1");
        return -1;
    }
    if (!is_float(in[x].dtype)) {
        snprintf(msg, msgsz, "x dtype %s is not a float type",
                 dg_dtype_name(in[x].dtype));
        return -1;
    }
    for (int i = 0; i < n_in; i++)
        if (in[i].dtype != in[x].dtype) {
            snprintf(msg, msgsz, "input %d has dtype %s, x has %s", i,
                     dg_dtype_name(in[i].dtype), dg_dtype_name(in[x].dtype));
            return -1;
        }
    int64_t c = xs->dims[xs->rank - 1];
    for (int i = 0; i < n_vec; i++) {
        const dg_shape *v = &in[vec[i]].shape;
        if (v->rank != 1 || !dim_ok(v->dims[0], c)) {
            dg_shape want = {.rank = 1, .dims = {c}};
            return mismatch("channel vector", v, &want, msg, msgsz);
        }
    }
    return 0;
}

static void vec_type(dgc_ttype *o, const dgc_ttype *x)
{
    o->dtype = x->dtype;
    memset(&o->shape, 0, sizeof o->shape);
    o->shape.rank = 1;
    o->shape.dims[0] = x->shape.dims[x->shape.rank - 1];
}

int dgc_infer_batchnorm(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 3, msg, msgsz))
        return -1;
    static const int vec[] = {1, 2};
    if (check_bn(in, n_in, 0, vec, 2, msg, msgsz))
        return -1;
    out[0] = in[0];
    vec_type(&out[1], &in[0]);
    vec_type(&out[2], &in[0]);
    return 0;
}

int dgc_infer_batchnorm_grad(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 5, msg, msgsz))
        return -1;
    static const int vec[] = {2, 3, 4};
    if (check_bn(in, n_in, 1, vec, 3, msg, msgsz))
        return -1;
    if (!shapes_match(&in[0].shape, &in[1].shape))
        return mismatch("dy and x", &in[0].shape, &in[1].shape, msg, msgsz);
    out[0] = in[1];
    vec_type(&out[1], &in[1]);
    vec_type(&out[2], &in[1]);
    return 0;
}

int dgc_infer_assign_moving_avg(DGC_INFER_ARGS)
{
    (void)n;
    if (need_inputs(n_in, 2, msg, msgsz))
        return -1;
    if (in[0].dtype != in[1].dtype) {
        snprintf(msg, msgsz, "variable has dtype %s, value has %s",
                 dg_dtype_name(in[0].dtype), dg_dtype_name(in[1].dtype));
        return -1;
    }
    if (!shapes_match(&in[0].shape, &in[1].shape))
        return mismatch("variable and value", &in[0].shape, &in[1].shape,
                        msg, msgsz);
    out[0] = in[0];
    return 0;
}
