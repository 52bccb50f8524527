/*
 * kernels_cpu_elementwise.c -- CPU kernels for elementwise ops: unary math,
 * binary ops with NumPy broadcasting (a flat fast path for same-shape and
 * scalar operands, a collapsed strided path otherwise), Equal, the
 * elementwise gradient ops, AddN and BiasAdd.  Large ops are split over the
 * intra-op pool.
 */
#include "kernels_cpu.h"

#include <math.h>
#include <string.h>

/* ---- binary inner loops -------------------------------------------------- */

/* o[i] = f(a[i*sa], b[i*sb]) for i < n, sa and sb in {0, 1}. */
typedef void (*bin_fn)(const void *a, int64_t sa, const void *b, int64_t sb,
                       void *o, int64_t n);

#define BIN_DEF(NAME, T, OT, EXPR)                                           \
    DGR_HOT static void NAME(const void *av, int64_t sa, const void *bv, int64_t sb, \
                     void *ov, int64_t n)                                    \
    {                                                                        \
        const T *restrict a = av;                                            \
        const T *restrict b = bv;                                            \
        OT *restrict o = ov;                                                 \
        if (sa && sb) {                                                      \
            for (int64_t i = 0; i < n; i++) {                                \
                T x = a[i], y = b[i];                                        \
                o[i] = (OT)(EXPR);                                           \
            }                                                                \
        } else if (sa) {                                                     \
            T y = b[0];                                                      \
            for (int64_t i = 0; i < n; i++) {                                \
                T x = a[i];                                                  \
                o[i] = (OT)(EXPR);                                           \
            }                                                                \
        } else if (sb) {                                                     \
            T x = a[0];                                                      \
            for (int64_t i = 0; i < n; i++) {                                \
                T y = b[i];                                                  \
                o[i] = (OT)(EXPR);                                           \
            }                                                                \
        } else {                                                             \
            T x = a[0], y = b[0];                                            \
            OT r = (OT)(EXPR);                                               \
            for (int64_t i = 0; i < n; i++)                                  \
                o[i] = r;                                                    \
        }                                                                    \
    }

#define BIN_NUM(OP, EXPR)                                                    \
    BIN_DEF(OP##_f32, float, float, EXPR)                                    \
    BIN_DEF(OP##_f64, double, double, EXPR)                                  \
    BIN_DEF(OP##_i32, int32_t, int32_t, EXPR)                                \
    BIN_DEF(OP##_i64, int64_t, int64_t, EXPR)                                \
    static const bin_fn OP##_fns[DG_DTYPE_COUNT] = {                         \
        OP##_f32, OP##_f64, OP##_i32, OP##_i64, NULL};

#define BIN_FLOAT(OP, EXPR)                                                  \
    BIN_DEF(OP##_f32, float, float, EXPR)                                    \
    BIN_DEF(OP##_f64, double, double, EXPR)                                  \
    static const bin_fn OP##_fns[DG_DTYPE_COUNT] = {OP##_f32, OP##_f64, NULL, \
                                                    NULL, NULL};

static inline int64_t ipow(int64_t x, int64_t y)
{
    int64_t r = 1;
    if (y < 0)
        return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
    uint64_t ux = (uint64_t)x, ur = 1;
    while (y) {
        if (y & 1)
            ur *= ux;
        ux *= ux;
        y >>= 1;
    }
    memcpy(&r, &ur, sizeof r);
    return r;
}

/* Integer division truncating like C; x / -1 wraps instead of trapping. */
#define IDIV(T, x, y) ((y) == -1 ? (T)(0 - (uint64_t)(x)) : (T)((x) / (y)))

BIN_NUM(add, x + y)
BIN_NUM(sub, x - y)
BIN_NUM(mul, x * y)
/* NaN propagates as in TF (isnan of an integer, as double, is false) */
/* NaN wins (TF); x != x rather than isnan((double)x), which kept gcc from
 * vectorising (a branch per element) */
BIN_NUM(maximum, x > y || x != x ? x : y)
BIN_NUM(minimum, x < y || x != x ? x : y)
BIN_FLOAT(sigmoid_grad, y * x * (1 - x))
BIN_FLOAT(tanh_grad, y * (1 - x * x))

BIN_DEF(div_f32, float, float, x / y)
BIN_DEF(div_f64, double, double, x / y)
BIN_DEF(div_i32, int32_t, int32_t, IDIV(int32_t, x, y))
BIN_DEF(div_i64, int64_t, int64_t, IDIV(int64_t, x, y))
static const bin_fn div_fns[DG_DTYPE_COUNT] = {div_f32, div_f64, div_i32,
                                               div_i64, NULL};

BIN_DEF(pow_f32, float, float, powf(x, y))
BIN_DEF(pow_f64, double, double, pow(x, y))
BIN_DEF(pow_i32, int32_t, int32_t, ipow(x, y))
BIN_DEF(pow_i64, int64_t, int64_t, ipow(x, y))
static const bin_fn pow_fns[DG_DTYPE_COUNT] = {pow_f32, pow_f64, pow_i32,
                                               pow_i64, NULL};

/* ReluGrad(dy, x) = x > 0 ? dy : 0 */
BIN_DEF(rgrad_f32, float, float, y > 0 ? x : 0)
BIN_DEF(rgrad_f64, double, double, y > 0 ? x : 0)
BIN_DEF(rgrad_i32, int32_t, int32_t, y > 0 ? x : 0)
BIN_DEF(rgrad_i64, int64_t, int64_t, y > 0 ? x : 0)
static const bin_fn rgrad_fns[DG_DTYPE_COUNT] = {rgrad_f32, rgrad_f64,
                                                 rgrad_i32, rgrad_i64, NULL};

BIN_DEF(eq_f32, float, dgr_bool_t, x == y)
BIN_DEF(eq_f64, double, dgr_bool_t, x == y)
BIN_DEF(eq_i32, int32_t, dgr_bool_t, x == y)
BIN_DEF(eq_i64, int64_t, dgr_bool_t, x == y)
BIN_DEF(eq_b, dgr_bool_t, dgr_bool_t, (x != 0) == (y != 0))
static const bin_fn eq_fns[DG_DTYPE_COUNT] = {eq_f32, eq_f64, eq_i32, eq_i64,
                                              eq_b};

/* ---- binary driver ------------------------------------------------------- */

typedef struct bin_job {
    bin_fn fn;
    const char *a, *b;
    char *o;
    size_t ea, eb, eo;
    const dgr_bcast *bc;
    int64_t inner, sai, sbi;
} bin_job;

static void bin_flat(void *arg, int64_t i0, int64_t i1)
{
    bin_job *j = arg;
    j->fn(j->a + (size_t)(i0 * j->sai) * j->ea, j->sai,
          j->b + (size_t)(i0 * j->sbi) * j->eb, j->sbi,
          j->o + (size_t)i0 * j->eo, i1 - i0);
}

static void bin_rows(void *arg, int64_t r0, int64_t r1)
{
    bin_job *j = arg;
    const dgr_bcast *bc = j->bc;
    int outer = bc->rank - 1;
    int64_t idx[DG_MAX_RANK];
    int64_t oa = 0, ob = 0, rem = r0;
    for (int d = outer - 1; d >= 0; d--) {
        idx[d] = rem % bc->dims[d];
        rem /= bc->dims[d];
        oa += idx[d] * bc->sa[d];
        ob += idx[d] * bc->sb[d];
    }
    for (int64_t r = r0; r < r1; r++) {
        j->fn(j->a + (size_t)oa * j->ea, j->sai, j->b + (size_t)ob * j->eb,
              j->sbi, j->o + (size_t)(r * j->inner) * j->eo, j->inner);
        for (int d = outer - 1; d >= 0; d--) {
            oa += bc->sa[d];
            ob += bc->sb[d];
            if (++idx[d] < bc->dims[d])
                break;
            oa -= bc->sa[d] * bc->dims[d];
            ob -= bc->sb[d] * bc->dims[d];
            idx[d] = 0;
        }
    }
}

/* Run fn over a (shape as) and b (shape bs) broadcast into out (shape os). */
static dg_status bin_run(dgr_kctx *k, bin_fn fn, const dgr_value *a,
                         const dgr_value *b, dgr_value *out)
{
    int64_t n = dg_shape_numel(&out->shape);
    if (n <= 0)
        return DG_OK;
    dgr_bcast bc;
    if (dgr_bcast_init(&bc, &a->shape, &b->shape, &out->shape))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': input shapes do not broadcast to the output",
                      k->node->name);
    bin_job j = {fn, dgr_cpu_ptr(a), dgr_cpu_ptr(b), dgr_cpu_ptr(out),
                 dg_dtype_size(a->dtype), dg_dtype_size(b->dtype),
                 dg_dtype_size(out->dtype), &bc, 1, 0, 0};
    if (bc.rank <= 1) {
        j.sai = bc.rank ? bc.sa[0] : 0;
        j.sbi = bc.rank ? bc.sb[0] : 0;
        if (n >= DGR_CPU_PAR_MIN)
            dgr_parallel_for(k->dev->intra, n, DGR_CPU_PAR_MIN / 2, bin_flat, &j);
        else
            bin_flat(&j, 0, n);
        return DG_OK;
    }
    j.inner = bc.dims[bc.rank - 1];
    j.sai = bc.sa[bc.rank - 1];
    j.sbi = bc.sb[bc.rank - 1];
    int64_t rows = n / j.inner;
    if (n >= DGR_CPU_PAR_MIN) {
        int64_t grain = (DGR_CPU_PAR_MIN / 2) / j.inner;
        dgr_parallel_for(k->dev->intra, rows, grain > 0 ? grain : 1, bin_rows, &j);
    } else {
        bin_rows(&j, 0, rows);
    }
    return DG_OK;
}

static dg_status binary(dgr_kctx *k, const bin_fn *fns)
{
    dg_dtype t = k->in[0].dtype;
    bin_fn fn = (unsigned)t < DG_DTYPE_COUNT ? fns[t] : NULL;
    if (!fn || k->in[1].dtype != t)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': no CPU kernel for dtypes %s, %s",
                      k->node->name, dg_dtype_name(t),
                      dg_dtype_name(k->in[1].dtype));
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    return bin_run(k, fn, &k->in[0], &k->in[1], &k->out[0]);
}

dg_status dgr_k_add(dgr_kctx *k) { return binary(k, add_fns); }
DGR_KERNEL(Add, dgr_k_add);
dg_status dgr_k_sub(dgr_kctx *k) { return binary(k, sub_fns); }
DGR_KERNEL(Sub, dgr_k_sub);
dg_status dgr_k_mul(dgr_kctx *k) { return binary(k, mul_fns); }
DGR_KERNEL(Mul, dgr_k_mul);
dg_status dgr_k_maximum(dgr_kctx *k) { return binary(k, maximum_fns); }
DGR_KERNEL(Maximum, dgr_k_maximum);
dg_status dgr_k_minimum(dgr_kctx *k) { return binary(k, minimum_fns); }
DGR_KERNEL(Minimum, dgr_k_minimum);
dg_status dgr_k_equal(dgr_kctx *k) { return binary(k, eq_fns); }
DGR_KERNEL(Equal, dgr_k_equal);
dg_status dgr_k_relu_grad(dgr_kctx *k) { return binary(k, rgrad_fns); }
DGR_KERNEL(ReluGrad, dgr_k_relu_grad);
dg_status dgr_k_sigmoid_grad(dgr_kctx *k) { return binary(k, sigmoid_grad_fns); }
DGR_KERNEL(SigmoidGrad, dgr_k_sigmoid_grad);
dg_status dgr_k_tanh_grad(dgr_kctx *k) { return binary(k, tanh_grad_fns); }
DGR_KERNEL(TanhGrad, dgr_k_tanh_grad);
dg_status dgr_k_bias_add(dgr_kctx *k) { return binary(k, add_fns); }
DGR_KERNEL(BiasAdd, dgr_k_bias_add);

/* For integer Div and Pow: reject zero divisors / negative exponents. */
static int any_int(const dgr_value *v, int neg)
{
    int64_t n = dg_shape_numel(&v->shape);
    const void *p = dgr_cpu_ptr(v);
    if (n <= 0 || !p)
        return 0;
    if (v->dtype == DG_I32) {
        const int32_t *x = p;
        for (int64_t i = 0; i < n; i++)
            if (neg ? x[i] < 0 : x[i] == 0)
                return 1;
    } else if (v->dtype == DG_I64) {
        const int64_t *x = p;
        for (int64_t i = 0; i < n; i++)
            if (neg ? x[i] < 0 : x[i] == 0)
                return 1;
    }
    return 0;
}

int dgr_cpu_int_has(const dgr_value *v, int neg) { return any_int(v, neg); }

dg_status dgr_k_div(dgr_kctx *k)
{
    if (dg_shape_numel(&k->out_types[0].shape) > 0 && any_int(&k->in[1], 0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': integer division by zero",
                      k->node->name);
    return binary(k, div_fns);
}
DGR_KERNEL(Div, dgr_k_div);

dg_status dgr_k_pow(dgr_kctx *k)
{
    if (dg_shape_numel(&k->out_types[0].shape) > 0 && any_int(&k->in[1], 1))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': integers to negative integer powers are not "
                      "allowed", k->node->name);
    return binary(k, pow_fns);
}
DGR_KERNEL(Pow, dgr_k_pow);

/* ---- unary --------------------------------------------------------------- */

typedef void (*un_fn)(const void *a, void *o, int64_t n);

#define UN_DEF(NAME, T, EXPR)                                                \
    DGR_HOT static void NAME(const void *av, void *ov, int64_t n)                    \
    {                                                                        \
        const T *restrict a = av;                                            \
        T *restrict o = ov;                                                  \
        for (int64_t i = 0; i < n; i++) {                                    \
            T x = a[i];                                                      \
            o[i] = (T)(EXPR);                                                \
        }                                                                    \
    }

#define UN_NUM(OP, EXPR)                                                     \
    UN_DEF(OP##_f32, float, EXPR)                                            \
    UN_DEF(OP##_f64, double, EXPR)                                           \
    UN_DEF(OP##_i32, int32_t, EXPR)                                          \
    UN_DEF(OP##_i64, int64_t, EXPR)                                          \
    static const un_fn OP##_fns[DG_DTYPE_COUNT] = {OP##_f32, OP##_f64,       \
                                                   OP##_i32, OP##_i64, NULL};

#define UN_FLOAT(OP, FEXPR, DEXPR)                                           \
    UN_DEF(OP##_f32, float, FEXPR)                                           \
    UN_DEF(OP##_f64, double, DEXPR)                                          \
    static const un_fn OP##_fns[DG_DTYPE_COUNT] = {OP##_f32, OP##_f64, NULL, \
                                                   NULL, NULL};

UN_NUM(neg, -x)
UN_NUM(abs, x < 0 ? -x : x)
UN_NUM(square, x * x)
/* Relu(NaN) = NaN (TF); one compare, so gcc vectorises it (the form
 * x > 0 || isnan(x) ran a mispredicted branch per element: 1.8 ms for a
 * 32x32x32x16 batch, now ~0.1 ms) */
UN_NUM(relu, x < 0 ? 0 : x)
UN_FLOAT(sin, sinf(x), sin(x))
UN_FLOAT(cos, cosf(x), cos(x))
UN_FLOAT(exp, expf(x), exp(x))
UN_FLOAT(log, logf(x), log(x))
UN_FLOAT(sqrt, sqrtf(x), sqrt(x))
UN_FLOAT(tanh, tanhf(x), tanh(x))
UN_FLOAT(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + exp(-x)))

typedef struct un_job {
    un_fn fn;
    const char *a;
    char *o;
    size_t es;
} un_job;

static void un_range(void *arg, int64_t i0, int64_t i1)
{
    un_job *j = arg;
    j->fn(j->a + (size_t)i0 * j->es, j->o + (size_t)i0 * j->es, i1 - i0);
}

static dg_status unary(dgr_kctx *k, const un_fn *fns)
{
    dg_dtype t = k->in[0].dtype;
    un_fn fn = (unsigned)t < DG_DTYPE_COUNT ? fns[t] : NULL;
    if (!fn)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for dtype %s",
                      k->node->name, dg_dtype_name(t));
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    if (n <= 0)
        return DG_OK;
    un_job j = {fn, dgr_cpu_ptr(&k->in[0]), dgr_cpu_ptr(&k->out[0]),
                dg_dtype_size(t)};
    if (n >= DGR_CPU_PAR_MIN)
        dgr_parallel_for(k->dev->intra, n, DGR_CPU_PAR_MIN / 2, un_range, &j);
    else
        fn(j.a, j.o, n);
    return DG_OK;
}

dg_status dgr_k_neg(dgr_kctx *k) { return unary(k, neg_fns); }
DGR_KERNEL(Neg, dgr_k_neg);
dg_status dgr_k_abs(dgr_kctx *k) { return unary(k, abs_fns); }
DGR_KERNEL(Abs, dgr_k_abs);
dg_status dgr_k_square(dgr_kctx *k) { return unary(k, square_fns); }
DGR_KERNEL(Square, dgr_k_square);
dg_status dgr_k_relu(dgr_kctx *k) { return unary(k, relu_fns); }
DGR_KERNEL(Relu, dgr_k_relu);
dg_status dgr_k_sin(dgr_kctx *k) { return unary(k, sin_fns); }
DGR_KERNEL(Sin, dgr_k_sin);
dg_status dgr_k_cos(dgr_kctx *k) { return unary(k, cos_fns); }
DGR_KERNEL(Cos, dgr_k_cos);
dg_status dgr_k_exp(dgr_kctx *k) { return unary(k, exp_fns); }
DGR_KERNEL(Exp, dgr_k_exp);
dg_status dgr_k_log(dgr_kctx *k) { return unary(k, log_fns); }
DGR_KERNEL(Log, dgr_k_log);
dg_status dgr_k_sqrt(dgr_kctx *k) { return unary(k, sqrt_fns); }
DGR_KERNEL(Sqrt, dgr_k_sqrt);
dg_status dgr_k_tanh(dgr_kctx *k) { return unary(k, tanh_fns); }
DGR_KERNEL(Tanh, dgr_k_tanh);
dg_status dgr_k_sigmoid(dgr_kctx *k) { return unary(k, sigmoid_fns); }
DGR_KERNEL(Sigmoid, dgr_k_sigmoid);

/* ---- AddN ---------------------------------------------------------------- */

typedef struct addn_job {
    dgr_kctx *k;
    char *o;
    size_t es;
} addn_job;

#define ADDN_ACC(T)                                                          \
    do {                                                                     \
        T *restrict o_ = (T *)o;                                             \
        const T *restrict s_ = (const T *)s;                                 \
        for (int64_t i = 0; i < n; i++)                                      \
            o_[i] += s_[i];                                                  \
    } while (0)

DGR_HOT static void addn_range(void *arg, int64_t i0, int64_t i1)
{
    addn_job *j = arg;
    dgr_kctx *k = j->k;
    int64_t n = i1 - i0;
    char *o = j->o + (size_t)i0 * j->es;
    memcpy(o, (char *)dgr_cpu_ptr(&k->in[0]) + (size_t)i0 * j->es,
           (size_t)n * j->es);
    for (int m = 1; m < k->n_in; m++) {
        const char *s = (const char *)dgr_cpu_ptr(&k->in[m]) + (size_t)i0 * j->es;
        switch (k->in[0].dtype) {
        case DG_F32: ADDN_ACC(float); break;
        case DG_F64: ADDN_ACC(double); break;
        case DG_I32: ADDN_ACC(int32_t); break;
        case DG_I64: ADDN_ACC(int64_t); break;
        default: break;
        }
    }
}

dg_status dgr_k_addn(dgr_kctx *k)
{
    dg_dtype t = k->in[0].dtype;
    if (t == DG_BOOL)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for dtype bool",
                      k->node->name);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    for (int m = 0; m < k->n_in; m++)
        if (k->in[m].dtype != t || dg_shape_numel(&k->in[m].shape) != n)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': AddN input %d does not match input 0",
                          k->node->name, m);
    if (n <= 0)
        return DG_OK;
    addn_job j = {k, dgr_cpu_ptr(&k->out[0]), dg_dtype_size(t)};
    if (n >= DGR_CPU_PAR_MIN)
        dgr_parallel_for(k->dev->intra, n, DGR_CPU_PAR_MIN / 2, addn_range, &j);
    else
        addn_range(&j, 0, n);
    return DG_OK;
}
DGR_KERNEL(AddN, dgr_k_addn);

/* ---- TF graph ops (issue 10): floor division, comparisons, Relu6,
 * Rsqrt, Reciprocal and their gradient ops ------------------------------- */

/* Python-style floor division and modulo; x / 0 is 0 for integers (the
 * kernel rejects it first), IEEE for floats. */
#define IFLOORDIV(T, x, y)                                                   \
    ((y) == 0 ? (T)0 : (y) == -1 ? (T)(0 - (uint64_t)(x))                    \
     : (T)((x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0)))))
#define IFLOORMOD(T, x, y)                                                   \
    ((y) == 0 || (y) == -1 ? (T)0                                            \
     : (T)((((x) % (y)) + (((x) % (y) != 0) && (((x) < 0) != ((y) < 0))     \
                            ? (y) : 0))))

BIN_DEF(fdiv_f32, float, float, floorf(x / y))
BIN_DEF(fdiv_f64, double, double, floor(x / y))
BIN_DEF(fdiv_i32, int32_t, int32_t, IFLOORDIV(int32_t, x, y))
BIN_DEF(fdiv_i64, int64_t, int64_t, IFLOORDIV(int64_t, x, y))
static const bin_fn fdiv_fns[DG_DTYPE_COUNT] = {fdiv_f32, fdiv_f64, fdiv_i32,
                                                fdiv_i64, NULL};
/* TF's float FloorMod: fmod, shifted by y when the signs differ */
#define FFLOORMOD(F, x, y)                                                   \
    (F(x, y) != 0 && ((F(x, y) < 0) != (y < 0)) ? F(x, y) + y : F(x, y))
BIN_DEF(fmod_f32, float, float, FFLOORMOD(fmodf, x, y))
BIN_DEF(fmod_f64, double, double, FFLOORMOD(fmod, x, y))
BIN_DEF(fmod_i32, int32_t, int32_t, IFLOORMOD(int32_t, x, y))
BIN_DEF(fmod_i64, int64_t, int64_t, IFLOORMOD(int64_t, x, y))
static const bin_fn fmod_fns[DG_DTYPE_COUNT] = {fmod_f32, fmod_f64, fmod_i32,
                                                fmod_i64, NULL};

#define CMP(OP, EXPR)                                                        \
    BIN_DEF(OP##_f32, float, dgr_bool_t, EXPR)                               \
    BIN_DEF(OP##_f64, double, dgr_bool_t, EXPR)                              \
    BIN_DEF(OP##_i32, int32_t, dgr_bool_t, EXPR)                             \
    BIN_DEF(OP##_i64, int64_t, dgr_bool_t, EXPR)                             \
    BIN_DEF(OP##_b, dgr_bool_t, dgr_bool_t, EXPR)                            \
    static const bin_fn OP##_fns[DG_DTYPE_COUNT] = {                         \
        OP##_f32, OP##_f64, OP##_i32, OP##_i64, OP##_b};
CMP(lt, x < y)
CMP(le, x <= y)
CMP(gt, x > y)
CMP(ge, x >= y)
CMP(ne, x != y)

/* Relu6Grad(dy, x) = 0 < x < 6 ? dy : 0 */
BIN_NUM(r6grad, y > 0 && y < 6 ? x : 0)
/* RsqrtGrad(y, dy) = dy * -y^3 / 2; ReciprocalGrad(y, dy) = dy * -y*y */
BIN_FLOAT(rsqrt_grad, (x * x * x) * y * (-0.5f))
BIN_FLOAT(recip_grad, -(x * x) * y)

UN_NUM(relu6, x < 0 ? 0 : x > 6 ? 6 : x) /* NaN stays NaN */
UN_FLOAT(rsqrt, 1.0f / sqrtf(x), 1.0 / sqrt(x))
UN_FLOAT(recip, 1.0f / x, 1.0 / x)

dg_status dgr_k_floor_div(dgr_kctx *k)
{
    if (dg_shape_numel(&k->out_types[0].shape) > 0 && any_int(&k->in[1], 0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': integer division by "
                      "zero", k->node->name);
    return binary(k, fdiv_fns);
}
DGR_KERNEL(FloorDiv, dgr_k_floor_div);

dg_status dgr_k_floor_mod(dgr_kctx *k)
{
    if (dg_shape_numel(&k->out_types[0].shape) > 0 && any_int(&k->in[1], 0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': integer modulo by "
                      "zero", k->node->name);
    return binary(k, fmod_fns);
}
DGR_KERNEL(FloorMod, dgr_k_floor_mod);

dg_status dgr_k_less(dgr_kctx *k) { return binary(k, lt_fns); }
DGR_KERNEL(Less, dgr_k_less);
dg_status dgr_k_less_equal(dgr_kctx *k) { return binary(k, le_fns); }
DGR_KERNEL(LessEqual, dgr_k_less_equal);
dg_status dgr_k_greater(dgr_kctx *k) { return binary(k, gt_fns); }
DGR_KERNEL(Greater, dgr_k_greater);
dg_status dgr_k_greater_equal(dgr_kctx *k) { return binary(k, ge_fns); }
DGR_KERNEL(GreaterEqual, dgr_k_greater_equal);
dg_status dgr_k_not_equal(dgr_kctx *k) { return binary(k, ne_fns); }
DGR_KERNEL(NotEqual, dgr_k_not_equal);
dg_status dgr_k_relu6_grad(dgr_kctx *k) { return binary(k, r6grad_fns); }
DGR_KERNEL(Relu6Grad, dgr_k_relu6_grad);
dg_status dgr_k_rsqrt_grad(dgr_kctx *k) { return binary(k, rsqrt_grad_fns); }
DGR_KERNEL(RsqrtGrad, dgr_k_rsqrt_grad);
dg_status dgr_k_reciprocal_grad(dgr_kctx *k) { return binary(k, recip_grad_fns); }
DGR_KERNEL(ReciprocalGrad, dgr_k_reciprocal_grad);
dg_status dgr_k_relu6(dgr_kctx *k) { return unary(k, relu6_fns); }
DGR_KERNEL(Relu6, dgr_k_relu6);
dg_status dgr_k_rsqrt(dgr_kctx *k) { return unary(k, rsqrt_fns); }
DGR_KERNEL(Rsqrt, dgr_k_rsqrt);
dg_status dgr_k_reciprocal(dgr_kctx *k) { return unary(k, recip_fns); }
DGR_KERNEL(Reciprocal, dgr_k_reciprocal);

BIN_DEF(land_b, dgr_bool_t, dgr_bool_t, x && y)
BIN_DEF(lor_b, dgr_bool_t, dgr_bool_t, x || y)
static const bin_fn land_fns[DG_DTYPE_COUNT] = {NULL, NULL, NULL, NULL,
                                                land_b};
static const bin_fn lor_fns[DG_DTYPE_COUNT] = {NULL, NULL, NULL, NULL, lor_b};
UN_DEF(lnot_b, dgr_bool_t, !x)
static const un_fn lnot_fns[DG_DTYPE_COUNT] = {NULL, NULL, NULL, NULL, lnot_b};
dg_status dgr_k_logical_and(dgr_kctx *k) { return binary(k, land_fns); }
DGR_KERNEL(LogicalAnd, dgr_k_logical_and);
dg_status dgr_k_logical_or(dgr_kctx *k) { return binary(k, lor_fns); }
DGR_KERNEL(LogicalOr, dgr_k_logical_or);
dg_status dgr_k_logical_not(dgr_kctx *k) { return unary(k, lnot_fns); }
DGR_KERNEL(LogicalNot, dgr_k_logical_not);

/* ---- drivers for other family files (issue 22) --------------------------- */

dg_status dgr_cpu_unary(dgr_kctx *k, const dgr_cpu_un_fn *fns)
{
    return unary(k, fns);
}

dg_status dgr_cpu_binary(dgr_kctx *k, const dgr_cpu_bin_fn *fns)
{
    return binary(k, fns);
}
