/*
 * kernels_cpu_state.c -- CPU kernels for Variables and the ops that update
 * them in place: Assign, AssignAdd, AssignSub,
 * ApplyGradientDescent, ApplyMomentum, ApplyAdam (TF's formulas),
 * AssignMovingAvg, and ApplyAdagrad, ApplyRMSProp, ApplyCenteredRMSProp,
 * ApplyAdadelta, ApplyAdaMax, ApplyProximalGradientDescent,
 * ApplyProximalAdagrad.  Input 0 aliases the Variable's storage (the executor
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

static void upd_range(void *arg, int64_t i0, int64_t i1)
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
 * TF's training_ops functors, element by element in index order: s[0..3]
 * the slots (inputs 1..refs-1), h[] the scalar hyper-parameters in input
 * order, g the gradient (the last input). */
#define OPT_LOOP(T, SQRT)                                                    \
    do {                                                                     \
        T *w = dgr_cpu_ptr(&k->in[0]);                                       \
        const T *g = dgr_cpu_ptr(&k->in[k->n_in - 1]);                       \
        T *s0 = refs > 1 ? dgr_cpu_ptr(&k->in[1]) : NULL;                    \
        T *s1 = refs > 2 ? dgr_cpu_ptr(&k->in[2]) : NULL;                    \
        T *s2 = refs > 3 ? dgr_cpu_ptr(&k->in[3]) : NULL;                    \
        T h0 = (T)h[0], h1 = (T)h[1], h2 = (T)h[2], h3 = (T)h[3];            \
        for (int64_t i = 0; i < n; i++) {                                    \
            T gi = g[i];                                                     \
            switch (op) {                                                    \
            case DGC_OPID_ApplyAdagrad: /* lr */                             \
                if (slots)                                                   \
                    s0[i] += gi * gi;                                        \
                w[i] -= gi * h0 / SQRT(s0[i]);                               \
                break;                                                       \
            case DGC_OPID_ApplyRMSProp: /* ms, mom; lr, rho, mom., eps */    \
                s0[i] += (gi * gi - s0[i]) * (1 - h1);                       \
                s1[i] = s1[i] * h2 + gi * h0 / SQRT(s0[i] + h3);             \
                w[i] -= s1[i];                                               \
                break;                                                       \
            case DGC_OPID_ApplyCenteredRMSProp: /* mg, ms, mom; same */      \
                s1[i] += (gi * gi - s1[i]) * (1 - h1);                       \
                s0[i] += (gi - s0[i]) * (1 - h1);                            \
                s2[i] = s2[i] * h2 +                                         \
                        gi * h0 / SQRT(s1[i] - s0[i] * s0[i] + h3);          \
                w[i] -= s2[i];                                               \
                break;                                                       \
            case DGC_OPID_ApplyAdadelta: { /* accum, upd; lr, rho, eps */    \
                s0[i] = s0[i] * h1 + gi * gi * (1 - h1);                     \
                T u = SQRT(s1[i] + h2) / SQRT(s0[i] + h2) * gi;              \
                w[i] -= u * h0;                                              \
                s1[i] = s1[i] * h1 + u * u * (1 - h1);                       \
                break;                                                       \
            }                                                                \
            case DGC_OPID_ApplyAdaMax: { /* m, v; b1p, lr, b1, b2, eps */    \
                s0[i] += (gi - s0[i]) * (1 - (T)h[2]);                       \
                T av = gi < 0 ? -gi : gi, bv = (T)h[3] * s1[i];              \
                s1[i] = bv > av ? bv : av;                                   \
                w[i] -= h1 / (1 - h0) * (s0[i] / (s1[i] + (T)h[4]));         \
                break;                                                       \
            }                                                                \
            default: { /* Proximal GD (alpha, l1, l2), ProximalAdagrad (accum; \
                          lr, l1, l2): its rate lr / sqrt(accum) */          \
                T lr = h0;                                                   \
                if (refs == 2) {                                             \
                    s0[i] += gi * gi;                                        \
                    lr = h0 / SQRT(s0[i]);                                   \
                }                                                            \
                T p = w[i] - gi * lr;                                        \
                if (h1 > 0) {                                                \
                    T a = (p < 0 ? -p : p) - lr * h1;                        \
                    w[i] = (p > 0 ? 1 : p < 0 ? -1 : 0) * (a > 0 ? a : 0) /  \
                           (1 + lr * h2);                                    \
                } else {                                                     \
                    w[i] = p / (1 + lr * h2);                                \
                }                                                            \
            }                                                                \
            }                                                                \
        }                                                                    \
    } while (0)

dg_status dgr_k_apply_opt(dgr_kctx *k)
{
    int op = k->node->op, refs = dgc_op_n_refs(op);
    double h[5] = {0, 0, 0, 0, 0};
    dg_status st;
    for (int i = refs; i < k->n_in - 1 && i - refs < 5; i++)
        if (scalar(k, i, &h[i - refs]))
            return DG_E_RUNTIME;
    for (int i = 1; i < refs; i++)
        if ((st = check_like_var(k, i, 0)))
            return st;
    if ((st = check_like_var(k, k->n_in - 1, 0)))
        return st;
    /* only Adagrad has update_slots (the schema check caught a read for
     * every optimizer here) */
    int slots = k->node->op != DGC_OPID_ApplyAdagrad ||
                dgc_attr_b(k->node, DGC_AT_update_slots);
    int64_t n = dg_shape_numel(&k->in[0].shape);
    switch (k->in[0].dtype) {
    case DG_F32: OPT_LOOP(float, sqrtf); break;
    case DG_F64: OPT_LOOP(double, sqrt); break;
    default:
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "%s", k->node->name, dg_dtype_name(k->in[0].dtype));
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
