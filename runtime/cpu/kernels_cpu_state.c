/*
 * kernels_cpu_state.c -- CPU kernels for Variables and the ops that update
 * them in place: Assign, AssignAdd, AssignSub,
 * ApplyGradientDescent, ApplyMomentum, ApplyAdam (TF's formulas),
 * AssignMovingAvg, and ApplyAdagrad, ApplyRMSProp, ApplyCenteredRMSProp,
 * ApplyAdadelta, ApplyAdaMax, ApplyProximalGradientDescent,
 * ApplyProximalAdagrad, ApplyFtrl(V2), ApplyAdagradDA and the SparseApply*
 * updates.  Input 0 aliases the Variable's storage (the executor
 * reads Variables itself); updates write into it and output 0 aliases it.
 */
#include "kernels_cpu.h"

#include <math.h>
#include <string.h>

/* Check input i has the variable's dtype and its numel (or 1 if scalar_ok). */
static dg_status check_like_var(dgr_kctx *k, int i, int scalar_ok)
{
    const dgr_value *var = &k->in[0], *v = &k->in[i];
    int64_t n = dg_shape_numel(&var->shape), m = dg_shape_numel(&v->shape);
    if (v->dtype != var->dtype || !(m == n || (scalar_ok && m == 1)))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': input %d (%s, %lld elements) does not match "
                      "the variable (%s, %lld elements)",
                      k->node->name, i, dg_dtype_name(v->dtype), (long long)m,
                      dg_dtype_name(var->dtype), (long long)n);
    if (!var->buf && n > 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': variable has no storage",
                      k->node->name);
    return DG_OK;
}

static dg_status done(dgr_kctx *k)
{
    dgr_kctx_alias_output(k, 0, &k->in[0]);
    return DG_OK;
}

dg_status dgr_k_assign(dgr_kctx *k)
{
    dg_status st = check_like_var(k, 1, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->in[0].shape);
    void *d = dgr_cpu_ptr(&k->in[0]);
    const void *s = dgr_cpu_ptr(&k->in[1]);
    if (n > 0 && d != s)
        memcpy(d, s, (size_t)n * dg_dtype_size(k->in[0].dtype));
    return done(k);
}
DGR_KERNEL(Assign, dgr_k_assign);

/* ---- elementwise updates ------------------------------------------------- */

enum { U_ADD, U_SUB, U_GD, U_MOM, U_ADAM, U_MAVG };

typedef struct upd_job {
    int kind;
    dg_dtype t;
    void *var, *a, *b;     /* accum / m, v */
    const void *val;       /* value / grad */
    int64_t val_stride;    /* 0 when val is a broadcast scalar */
    double lr, mom, b1, b2, eps, decay;
    int nesterov;
} upd_job;

/* Adam's element update, gradient element GX (in a UPD(T) case). */
#define ADAM_LOOP(T, GX)                                                     \
    do {                                                                     \
    for (int64_t i = i0; i < i1; i++) {                                      \
        T gi = (GX);                                                         \
        T mi = m[i] + (gi - m[i]) * (1 - b1);                                \
        T vi = v[i] + (gi * gi - v[i]) * (1 - b2);                           \
        m[i] = mi;                                                           \
        v[i] = vi;                                                           \
        w[i] -= lr * mi / (SQRT(vi) + eps);                                  \
    }                                                                        \
    } while (0)

#define UPD(T)                                                               \
    do {                                                                     \
        T *restrict w = j->var;                                              \
        const T *restrict g = j->val;                                        \
        int64_t gs = j->val_stride;                                          \
        switch (j->kind) {                                                   \
        case U_ADD:                                                          \
            for (int64_t i = i0; i < i1; i++)                                \
                w[i] += g[i * gs];                                           \
            break;                                                           \
        case U_SUB:                                                          \
            for (int64_t i = i0; i < i1; i++)                                \
                w[i] -= g[i * gs];                                           \
            break;                                                           \
        case U_GD: {                                                         \
            T lr = (T)j->lr;                                                 \
            for (int64_t i = i0; i < i1; i++)                                \
                w[i] -= lr * g[i * gs];                                      \
            break;                                                           \
        }                                                                    \
        case U_MOM: {                                                        \
            T *restrict acc = j->a;                                          \
            T lr = (T)j->lr, mom = (T)j->mom;                                \
            for (int64_t i = i0; i < i1; i++) {                              \
                acc[i] = acc[i] * mom + g[i * gs];                           \
                if (j->nesterov)                                             \
                    w[i] -= lr * g[i * gs] + lr * mom * acc[i];              \
                else                                                         \
                    w[i] -= lr * acc[i];                                     \
            }                                                                \
            break;                                                           \
        }                                                                    \
        case U_ADAM: {                                                       \
            T *restrict m = j->a;                                            \
            T *restrict v = j->b;                                            \
            T lr = (T)j->lr, b1 = (T)j->b1, b2 = (T)j->b2, eps = (T)j->eps;  \
            if (gs == 1) /* contiguous: one vectorised pass */               \
                ADAM_LOOP(T, g[i]);                                             \
            else                                                             \
                ADAM_LOOP(T, g[0]);                                             \
            break;                                                           \
        }                                                                    \
        case U_MAVG: {                                                       \
            T f = (T)(1 - j->decay);                                         \
            for (int64_t i = i0; i < i1; i++)                                \
                w[i] -= (w[i] - g[i * gs]) * f;                              \
            break;                                                           \
        }                                                                    \
        }                                                                    \
    } while (0)

DGR_HOT static void upd_range(void *arg, int64_t i0, int64_t i1)
{
    upd_job *j = arg;
    switch (j->t) {
#define SQRT sqrtf
    case DG_F32: UPD(float); break;
#undef SQRT
#define SQRT sqrt
    case DG_F64: UPD(double); break;
    case DG_I32: UPD(int32_t); break;
    case DG_I64: UPD(int64_t); break;
#undef SQRT
    default: break;
    }
}

/* Run update j over the variable (input 0); grad/value is input gi. */
static dg_status update(dgr_kctx *k, upd_job *j, int gi, int scalar_ok)
{
    dg_status st = check_like_var(k, gi, scalar_ok);
    if (st)
        return st;
    const dgr_value *var = &k->in[0];
    if (var->dtype == DG_BOOL)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for bool",
                      k->node->name);
    int64_t n = dg_shape_numel(&var->shape);
    j->t = var->dtype;
    j->var = dgr_cpu_ptr(var);
    j->val = dgr_cpu_ptr(&k->in[gi]);
    j->val_stride = dg_shape_numel(&k->in[gi].shape) == n ? 1 : 0;
    if (n >= DGR_CPU_PAR_MIN)
        dgr_parallel_for(k->dev->intra, n, DGR_CPU_PAR_MIN / 2, upd_range, j);
    else if (n > 0)
        upd_range(j, 0, n);
    return done(k);
}

/* A scalar operand (learning rate, momentum, ...) as a double. */
static int scalar(dgr_kctx *k, int i, double *out)
{
    const dgr_value *v = &k->in[i];
    if (dg_shape_numel(&v->shape) < 1 || !v->buf) {
        dg_err(k->err, DG_E_RUNTIME, "node '%s': input %d must be a scalar",
               k->node->name, i);
        return -1;
    }
    *out = dgr_cpu_get(dgr_cpu_ptr(v), v->dtype, 0);
    return 0;
}

dg_status dgr_k_assign_add(dgr_kctx *k)
{
    upd_job j = {.kind = U_ADD};
    return update(k, &j, 1, 1);
}
DGR_KERNEL(AssignAdd, dgr_k_assign_add);

dg_status dgr_k_assign_sub(dgr_kctx *k)
{
    upd_job j = {.kind = U_SUB};
    return update(k, &j, 1, 1);
}
DGR_KERNEL(AssignSub, dgr_k_assign_sub);

dg_status dgr_k_apply_gd(dgr_kctx *k)
{
    upd_job j = {.kind = U_GD};
    if (scalar(k, 1, &j.lr))
        return DG_E_RUNTIME;
    return update(k, &j, 2, 0);
}
DGR_KERNEL(ApplyGradientDescent, dgr_k_apply_gd);

dg_status dgr_k_apply_momentum(dgr_kctx *k)
{
    upd_job j = {.kind = U_MOM};
    dg_status st;
    if (scalar(k, 2, &j.lr) || scalar(k, 4, &j.mom))
        return DG_E_RUNTIME;
    if ((st = check_like_var(k, 1, 0)))
        return st;
    j.a = dgr_cpu_ptr(&k->in[1]);
    j.nesterov = dgc_attr_b(k->node, DGC_AT_use_nesterov);
    return update(k, &j, 3, 0);
}
DGR_KERNEL(ApplyMomentum, dgr_k_apply_momentum);

dg_status dgr_k_apply_adam(dgr_kctx *k)
{
    upd_job j = {.kind = U_ADAM};
    double b1p, b2p, lr;
    dg_status st;
    if (scalar(k, 3, &b1p) || scalar(k, 4, &b2p) || scalar(k, 5, &lr) ||
        scalar(k, 6, &j.b1) || scalar(k, 7, &j.b2) || scalar(k, 8, &j.eps))
        return DG_E_RUNTIME;
    if ((st = check_like_var(k, 1, 0)) || (st = check_like_var(k, 2, 0)))
        return st;
    j.lr = lr * sqrt(1 - b2p) / (1 - b1p);
    j.a = dgr_cpu_ptr(&k->in[1]);
    j.b = dgr_cpu_ptr(&k->in[2]);
    return update(k, &j, 9, 0);
}
DGR_KERNEL(ApplyAdam, dgr_k_apply_adam);

dg_status dgr_k_assign_moving_avg(dgr_kctx *k)
{
    upd_job j = {.kind = U_MAVG};
    j.decay = dgc_attr_f(k->node, DGC_AT_decay);
    return update(k, &j, 1, 0);
}
DGR_KERNEL(AssignMovingAvg, dgr_k_assign_moving_avg);

/* ---- the other tf.compat.v1.train optimizers (issue 22) ------------------
 * TF's training_ops functors, element by element in index order over n
 * elements: w the variable, s0..s2 the slots (inputs 1..refs-1), g the
 * gradient, h[] the scalar hyper-parameters in input order.  A sparse
 * update (SparseApply*) runs its dense formula (j->op) on each indexed row,
 * in index order (a repeated index is updated twice, as TF's CPU kernels
 * do). */
typedef struct opt_job {
    int op, refs, slots, nesterov, mul_lr;
    double h[5];
} opt_job;

#define OPT_FN(NAME, T, SQRT, POW)                                           \
DGR_HOT static void NAME(const opt_job *j, T *w, T *s0, T *s1, T *s2, const T *g,    \
                 int64_t n)                                                  \
{                                                                            \
    const double *h = j->h;                                                  \
    T h0 = (T)h[0], h1 = (T)h[1], h2 = (T)h[2], h3 = (T)h[3];                \
    for (int64_t i = 0; i < n; i++) {                                        \
        T gi = g[i];                                                         \
        switch (j->op) {                                                     \
        case DGC_OPID_ApplyMomentum: /* lr, momentum */                      \
            s0[i] = s0[i] * h1 + gi;                                         \
            if (j->nesterov)                                                 \
                w[i] -= gi * h0 + s0[i] * h1 * h0;                           \
            else                                                             \
                w[i] -= s0[i] * h0;                                          \
            break;                                                           \
        case DGC_OPID_ApplyAdagrad: /* lr */                                 \
            if (j->slots)                                                    \
                s0[i] += gi * gi;                                            \
            w[i] -= gi * h0 / SQRT(s0[i]);                                   \
            break;                                                           \
        case DGC_OPID_ApplyRMSProp: /* ms, mom; lr, rho, mom., eps */        \
            s0[i] += (gi * gi - s0[i]) * (1 - h1);                           \
            s1[i] = s1[i] * h2 + gi * h0 / SQRT(s0[i] + h3);                 \
            w[i] -= s1[i];                                                   \
            break;                                                           \
        case DGC_OPID_ApplyCenteredRMSProp: /* mg, ms, mom; same */          \
            s1[i] += (gi * gi - s1[i]) * (1 - h1);                           \
            s0[i] += (gi - s0[i]) * (1 - h1);                                \
            s2[i] = s2[i] * h2 + gi * h0 / SQRT(s1[i] - s0[i] * s0[i] + h3); \
            w[i] -= s2[i];                                                   \
            break;                                                           \
        case DGC_OPID_ApplyAdadelta: { /* accum, upd; lr, rho, eps */        \
            s0[i] = s0[i] * h1 + gi * gi * (1 - h1);                         \
            T u = SQRT(s1[i] + h2) / SQRT(s0[i] + h2) * gi;                  \
            w[i] -= u * h0;                                                  \
            s1[i] = s1[i] * h1 + u * u * (1 - h1);                           \
            break;                                                           \
        }                                                                    \
        case DGC_OPID_ApplyAdaMax: { /* m, v; b1p, lr, b1, b2, eps */        \
            s0[i] += (gi - s0[i]) * (1 - h2);                                \
            T av = gi < 0 ? -gi : gi, bv = h3 * s1[i];                       \
            s1[i] = bv > av ? bv : av;                                       \
            w[i] -= h1 / (1 - h0) * (s0[i] / (s1[i] + (T)h[4]));             \
            break;                                                           \
        }                                                                    \
        case DGC_OPID_ApplyFtrl:                                             \
        case DGC_OPID_ApplyFtrlV2: { /* accum, linear; lr, l1, l2,           \
                                        [l2_shrinkage,] lr_power */          \
            int v2 = j->op == DGC_OPID_ApplyFtrlV2;                          \
            T p = v2 ? (T)h[4] : h3, gs = v2 ? gi + 2 * h3 * w[i] : gi;      \
            T na = s0[i] + gi * gi;                                          \
            T pn = p == (T)-0.5 ? SQRT(na) : POW(na, -p);                    \
            T po = p == (T)-0.5 ? SQRT(s0[i]) : POW(s0[i], -p);              \
            T l1 = h1, y;                                                    \
            if (j->mul_lr) {                                                 \
                s1[i] += gs * h0 - (pn - po) * w[i];                         \
                l1 = h1 * h0;                                                \
                y = pn + 2 * h2 * h0;                                        \
            } else {                                                         \
                s1[i] += gs - (pn - po) / h0 * w[i];                         \
                y = pn / h0 + 2 * h2;                                        \
            }                                                                \
            T lin = s1[i];                                                   \
            w[i] = (lin < 0 ? -lin : lin) > l1                               \
                       ? ((lin > 0 ? l1 : -l1) - lin) / y                    \
                       : 0;                                                  \
            s0[i] = na;                                                      \
            break;                                                           \
        }                                                                    \
        case DGC_OPID_ApplyAdagradDA: { /* g acc, g^2 acc; lr, l1, l2, step */ \
            s0[i] += gi;                                                     \
            s1[i] += gi * gi;                                                \
            T den = h2 * h3 * h0 + SQRT(s1[i]), a = s0[i];                   \
            if (h1 > 0) {                                                    \
                T m = (a < 0 ? -a : a) - h1 * h3;                            \
                w[i] = (a > 0 ? -h0 : a < 0 ? h0 : 0) * (m > 0 ? m : 0) / den; \
            } else {                                                         \
                w[i] = -h0 * a / den;                                        \
            }                                                                \
            break;                                                           \
        }                                                                    \
        default: { /* Proximal GD (alpha, l1, l2), ProximalAdagrad (accum;   \
                      lr, l1, l2): its rate lr / sqrt(accum) */              \
            T lr = h0;                                                       \
            if (j->refs == 2) {                                              \
                s0[i] += gi * gi;                                            \
                lr = h0 / SQRT(s0[i]);                                       \
            }                                                                \
            T p = w[i] - gi * lr;                                            \
            if (h1 > 0) {                                                    \
                T a = (p < 0 ? -p : p) - lr * h1;                            \
                w[i] = (p > 0 ? 1 : p < 0 ? -1 : 0) * (a > 0 ? a : 0) /      \
                       (1 + lr * h2);                                        \
            } else {                                                         \
                w[i] = p / (1 + lr * h2);                                    \
            }                                                                \
        }                                                                    \
        }                                                                    \
    }                                                                        \
}

OPT_FN(opt_f32, float, sqrtf, powf)
OPT_FN(opt_f64, double, sqrt, pow)

/* Run j on n elements from element offset wo of the variable and its slots
 * and go of the gradient (input gi). */
static void opt_run(dgr_kctx *k, const opt_job *j, int gi, int64_t wo,
                    int64_t go, int64_t n)
{
    void *p[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < j->refs && i < 4; i++)
        p[i] = dgr_cpu_ptr(&k->in[i]);
    const void *g = dgr_cpu_ptr(&k->in[gi]);
    if (k->in[0].dtype == DG_F32) {
        float *f[4];
        for (int i = 0; i < 4; i++)
            f[i] = p[i] ? (float *)p[i] + wo : NULL;
        opt_f32(j, f[0], f[1], f[2], f[3], (const float *)g + go, n);
    } else {
        double *f[4];
        for (int i = 0; i < 4; i++)
            f[i] = p[i] ? (double *)p[i] + wo : NULL;
        opt_f64(j, f[0], f[1], f[2], f[3], (const double *)g + go, n);
    }
}

/* A sparse update: gradient rows (input gi) onto the rows indices (input
 * ix) of the variable and its slots. */
static dg_status opt_sparse(dgr_kctx *k, const opt_job *j, int gi, int ix)
{
    const dgr_value *var = &k->in[0], *g = &k->in[gi], *idx = &k->in[ix];
    if (var->shape.rank < 1 || idx->shape.rank != 1 ||
        (idx->dtype != DG_I32 && idx->dtype != DG_I64))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': needs a variable of "
                      "rank >= 1 and a vector of int32 or int64 indices",
                      k->node->name);
    int64_t rows = var->shape.dims[0], cnt = idx->shape.dims[0];
    int64_t inner = rows > 0 ? dg_shape_numel(&var->shape) / rows : 0;
    if (g->dtype != var->dtype || dg_shape_numel(&g->shape) != cnt * inner)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': gradient (%s, %lld "
                      "elements) is not %lld rows of the variable's %lld "
                      "(%s)", k->node->name, dg_dtype_name(g->dtype),
                      (long long)dg_shape_numel(&g->shape), (long long)cnt,
                      (long long)inner, dg_dtype_name(var->dtype));
    const void *ip = dgr_cpu_ptr(idx);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t r = idx->dtype == DG_I32 ? ((const int32_t *)ip)[i]
                                         : ((const int64_t *)ip)[i];
        if (r < 0 || r >= rows)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': index %lld is "
                          "not in [0, %lld)", k->node->name, (long long)r,
                          (long long)rows);
        opt_run(k, j, gi, r * inner, i * inner, inner);
    }
    return DG_OK;
}

dg_status dgr_k_apply_opt(dgr_kctx *k)
{
    int op = k->node->op, ix, n_h = 0;
    opt_job j = {.op = dgc_op_apply_dense(op), .refs = dgc_op_n_refs(op)};
    int gi = dgc_op_apply_layout(op, k->n_in, &ix);
    dg_status st;
    for (int i = j.refs; i < k->n_in && n_h < 5; i++)
        if (i != gi && i != ix && scalar(k, i, &j.h[n_h++]))
            return DG_E_RUNTIME;
    for (int i = 1; i < j.refs; i++)
        if ((st = check_like_var(k, i, 0)))
            return st;
    if (ix < 0 && (st = check_like_var(k, gi, 0)))
        return st;
    if (k->in[0].dtype != DG_F32 && k->in[0].dtype != DG_F64)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "%s", k->node->name, dg_dtype_name(k->in[0].dtype));
    /* attrs by the schema of each op (a read outside it is an error) */
    j.slots = j.op != DGC_OPID_ApplyAdagrad ||
              dgc_attr_b(k->node, DGC_AT_update_slots);
    j.nesterov = j.op == DGC_OPID_ApplyMomentum &&
                 dgc_attr_b(k->node, DGC_AT_use_nesterov);
    j.mul_lr = (j.op == DGC_OPID_ApplyFtrl || j.op == DGC_OPID_ApplyFtrlV2) &&
               dgc_attr_b(k->node, DGC_AT_multiply_linear_by_lr);
    if (ix >= 0) {
        if ((st = opt_sparse(k, &j, gi, ix)))
            return st;
    } else {
        opt_run(k, &j, gi, 0, 0, dg_shape_numel(&k->in[0].shape));
    }
    return done(k);
}
DGR_KERNEL(ApplyAdagrad, dgr_k_apply_opt);
DGR_KERNEL(ApplyRMSProp, dgr_k_apply_opt);
DGR_KERNEL(ApplyCenteredRMSProp, dgr_k_apply_opt);
DGR_KERNEL(ApplyAdadelta, dgr_k_apply_opt);
DGR_KERNEL(ApplyAdaMax, dgr_k_apply_opt);
DGR_KERNEL(ApplyProximalGradientDescent, dgr_k_apply_opt);
DGR_KERNEL(ApplyProximalAdagrad, dgr_k_apply_opt);
DGR_KERNEL(ApplyFtrl, dgr_k_apply_opt);
DGR_KERNEL(ApplyFtrlV2, dgr_k_apply_opt);
DGR_KERNEL(ApplyAdagradDA, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyMomentum, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyAdagrad, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyAdagradDA, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyAdadelta, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyRMSProp, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyCenteredRMSProp, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyFtrl, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyFtrlV2, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyProximalGradientDescent, dgr_k_apply_opt);
DGR_KERNEL(SparseApplyProximalAdagrad, dgr_k_apply_opt);
