/*
 * kernels_cpu_zoo.c -- CPU kernels of the op-breadth ops (issue 22), the
 * ops everyday TF 2.21 models use: SquaredDifference, Erf/Erfc, the
 * activations LeakyRelu/Elu/Selu/Softplus/Softsign and their gradient ops,
 * ReverseV2, IdentityN, the image resizes and their gradients,
 * Unique and UniqueWithCounts, UnsortedSegmentSum,
 * ScatterAdd/ScatterSub/ScatterUpdate, DynamicPartition.
 * Every sum is made in one fixed order (per output element, or serially
 * over the input), never depending on the thread count.
 */
#include "kernels_cpu.h"
#include "infer.h"
#include "dg_alloc.h"
#include "kernels_cpu_dnnl.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ---- elementwise --------------------------------------------------------- */

/* (ZBIN, ZUN: kernels_cpu.h) */
ZBIN(sqd_f32, float, (x - y) * (x - y))
ZBIN(sqd_f64, double, (x - y) * (x - y))
ZBIN(sqd_i32, int32_t, (x - y) * (x - y))
ZBIN(sqd_i64, int64_t, (x - y) * (x - y))
static const dgr_cpu_bin_fn sqd_fns[DG_DTYPE_COUNT] = {sqd_f32, sqd_f64,
                                                       sqd_i32, sqd_i64, NULL};

#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_ALPHA 1.6732632423543772848170429916717
/* TF's Softplus: x above -threshold, exp(x) below threshold, with
 * threshold = log(epsilon) + 2 of the type */
#define SOFTPLUS(T, EPS, LOG, EXP, LOG1P)                                    \
    (x > -(LOG(EPS) + 2) ? x : x < (LOG(EPS) + 2) ? EXP(x) : LOG1P(EXP(x)))

ZUN(erf_f32, float, erff(x))
ZUN(erf_f64, double, erf(x))
ZUN(erfc_f32, float, erfcf(x))
ZUN(erfc_f64, double, erfc(x))
ZUN(elu_f32, float, x > 0 ? x : expm1f(x))
ZUN(elu_f64, double, x > 0 ? x : expm1(x))
ZUN(selu_f32, float, x > 0 ? (float)SELU_SCALE * x
                           : (float)SELU_SCALE * (float)SELU_ALPHA * expm1f(x))
ZUN(selu_f64, double, x > 0 ? SELU_SCALE * x
                            : SELU_SCALE * SELU_ALPHA * expm1(x))
ZUN(softplus_f32, float, SOFTPLUS(float, FLT_EPSILON, logf, expf, log1pf))
ZUN(softplus_f64, double, SOFTPLUS(double, DBL_EPSILON, log, exp, log1p))
ZUN(softsign_f32, float, x / (1 + fabsf(x)))
ZUN(softsign_f64, double, x / (1 + fabs(x)))
UNF(erf) UNF(erfc) UNF(elu) UNF(selu) UNF(softplus) UNF(softsign)

/* gradient pairs: x is the first input, y the second */
ZBIN(elug_f32, float, y > 0 ? x : x * (y + 1))
ZBIN(elug_f64, double, y > 0 ? x : x * (y + 1))
ZBIN(selug_f32, float, y > 0 ? x * (float)SELU_SCALE
                             : x * (y + (float)SELU_SCALE * (float)SELU_ALPHA))
ZBIN(selug_f64, double, y > 0 ? x * SELU_SCALE
                              : x * (y + SELU_SCALE * SELU_ALPHA))
ZBIN(softplusg_f32, float, x / (1 + expf(-y)))
ZBIN(softplusg_f64, double, x / (1 + exp(-y)))
ZBIN(softsigng_f32, float, x / ((1 + fabsf(y)) * (1 + fabsf(y))))
ZBIN(softsigng_f64, double, x / ((1 + fabs(y)) * (1 + fabs(y))))
BINF(elug) BINF(selug) BINF(softplusg) BINF(softsigng)

ZUN(sign_f32, float, x > 0 ? 1.0f : x < 0 ? -1.0f : x)
ZUN(sign_f64, double, x > 0 ? 1.0 : x < 0 ? -1.0 : x)
ZUN(sign_i32, int32_t, x > 0 ? 1 : x < 0 ? -1 : 0)
ZUN(sign_i64, int64_t, x > 0 ? 1 : x < 0 ? -1 : 0)
static const dgr_cpu_un_fn sign_fns[DG_DTYPE_COUNT] = {sign_f32, sign_f64,
                                                       sign_i32, sign_i64,
                                                       NULL};
/* SqrtGrad(y, dy) = dy * 0.5 / y */
ZBIN(sqrtg_f32, float, y * 0.5f / x)
ZBIN(sqrtg_f64, double, y * 0.5 / x)
BINF(sqrtg)
ZBIN(dnn_f32, float, y == 0 ? 0.0f : x / y)
ZBIN(dnn_f64, double, y == 0 ? 0.0 : x / y)
BINF(dnn)
/* the elementwise math of step 3 (Floor ... Cosh); Round of an integer is
 * the integer (TF) */
ZUNF(floor, floorf, floor)
DGR_KERNEL(Floor, dgr_k_floor);
ZUNF(ceil, ceilf, ceil)
DGR_KERNEL(Ceil, dgr_k_ceil);
ZUNF(rint, rintf, rint)
DGR_KERNEL(Rint, dgr_k_rint);
ZUNF(log1p, log1pf, log1p)
DGR_KERNEL(Log1p, dgr_k_log1p);
ZUNF(expm1, expm1f, expm1)
DGR_KERNEL(Expm1, dgr_k_expm1);
ZUNF(tan, tanf, tan)
DGR_KERNEL(Tan, dgr_k_tan);
ZUNF(atan, atanf, atan)
DGR_KERNEL(Atan, dgr_k_atan);
ZUNF(asin, asinf, asin)
DGR_KERNEL(Asin, dgr_k_asin);
ZUNF(acos, acosf, acos)
DGR_KERNEL(Acos, dgr_k_acos);
ZUNF(sinh, sinhf, sinh)
DGR_KERNEL(Sinh, dgr_k_sinh);
ZUNF(cosh, coshf, cosh)
DGR_KERNEL(Cosh, dgr_k_cosh);
ZUN(round_i32, int32_t, x)
ZUN(round_i64, int64_t, x)
static const dgr_cpu_un_fn round_fns[DG_DTYPE_COUNT] = {
    rint_f32, rint_f64, round_i32, round_i64, NULL};
dg_status dgr_k_round(dgr_kctx *k) { return dgr_cpu_unary(k, round_fns); }
DGR_KERNEL(Round, dgr_k_round);

ZBIN(atan2_f32, float, atan2f(x, y))
ZBIN(atan2_f64, double, atan2(x, y))
BINF(atan2)
dg_status dgr_k_atan2(dgr_kctx *k) { return dgr_cpu_binary(k, atan2_fns); }
DGR_KERNEL(Atan2, dgr_k_atan2);

/* IsNan, IsInf, IsFinite: float -> bool */
#define CLASSIFY(T, FN)                                                      \
    do {                                                                     \
        const T *a = dgr_cpu_ptr(&k->in[0]);                                 \
        for (int64_t i = 0; i < n; i++)                                      \
            o[i] = (uint8_t)(FN(a[i]) != 0);                                 \
    } while (0)
static dg_status classify(dgr_kctx *k, int which)
{
    dg_dtype t = k->in[0].dtype;
    if (t != DG_F32 && t != DG_F64)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': needs a float "
                      "input, got %s", k->node->name, dg_dtype_name(t));
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    uint8_t *o = dgr_cpu_ptr(&k->out[0]);
    int64_t n = dg_shape_numel(&k->out[0].shape);
    if (which == 0 && t == DG_F32) CLASSIFY(float, isnan);
    else if (which == 0) CLASSIFY(double, isnan);
    else if (which == 1 && t == DG_F32) CLASSIFY(float, isinf);
    else if (which == 1) CLASSIFY(double, isinf);
    else if (t == DG_F32) CLASSIFY(float, isfinite);
    else CLASSIFY(double, isfinite);
    return DG_OK;
}
dg_status dgr_k_is_nan(dgr_kctx *k) { return classify(k, 0); }
DGR_KERNEL(IsNan, dgr_k_is_nan);
dg_status dgr_k_is_inf(dgr_kctx *k) { return classify(k, 1); }
DGR_KERNEL(IsInf, dgr_k_is_inf);
dg_status dgr_k_is_finite(dgr_kctx *k) { return classify(k, 2); }
DGR_KERNEL(IsFinite, dgr_k_is_finite);

dg_status dgr_k_div_no_nan(dgr_kctx *k) { return dgr_cpu_binary(k, dnn_fns); }
DGR_KERNEL(DivNoNan, dgr_k_div_no_nan);
/* Xdivy: 0 where x == 0, whatever y (0, NaN), as TF */
ZBIN(xdivy_f32, float, x == 0 ? 0.0f : x / y)
ZBIN(xdivy_f64, double, x == 0 ? 0.0 : x / y)
BINF(xdivy)
dg_status dgr_k_xdivy(dgr_kctx *k) { return dgr_cpu_binary(k, xdivy_fns); }
DGR_KERNEL(Xdivy, dgr_k_xdivy);
/* Xlogy: 0 where x == 0, whatever y (0, NaN, negative), as TF */
ZBIN(xlogy_f32, float, x == 0 ? 0.0f : x * logf(y))
ZBIN(xlogy_f64, double, x == 0 ? 0.0 : x * log(y))
BINF(xlogy)
dg_status dgr_k_xlogy(dgr_kctx *k) { return dgr_cpu_binary(k, xlogy_fns); }
DGR_KERNEL(Xlogy, dgr_k_xlogy);
dg_status dgr_k_sign(dgr_kctx *k) { return dgr_cpu_unary(k, sign_fns); }
DGR_KERNEL(Sign, dgr_k_sign);
dg_status dgr_k_sqrt_grad(dgr_kctx *k) { return dgr_cpu_binary(k, sqrtg_fns); }
DGR_KERNEL(SqrtGrad, dgr_k_sqrt_grad);

dg_status dgr_k_squared_difference(dgr_kctx *k) { return dgr_cpu_binary(k, sqd_fns); }
DGR_KERNEL(SquaredDifference, dgr_k_squared_difference);
dg_status dgr_k_erf(dgr_kctx *k) { return dgr_cpu_unary(k, erf_fns); }
DGR_KERNEL(Erf, dgr_k_erf);
dg_status dgr_k_erfc(dgr_kctx *k) { return dgr_cpu_unary(k, erfc_fns); }
DGR_KERNEL(Erfc, dgr_k_erfc);

/* _Gelu (fuse_gelu.c): tf.nn.gelu's formula; float32 tensors of >= 2^14
 * elements on oneDNN's gelu_erf (vectorised erf: libm's erfcf is a scalar
 * call, ~5 ns an element), by the size alone */
ZUN(gelu_f32, float, 0.5f * x * erfcf(-x * 0.70710678118654752f))
ZUN(gelu_f64, double, 0.5 * x * erfc(-x * 0.70710678118654752))
UNF(gelu)
#define DGR_GELU_DNNL_MIN (1 << 14)
dg_status dgr_k_gelu(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    int64_t n = dg_shape_numel(&x->shape);
    if (x->dtype == DG_F32 && n >= DGR_GELU_DNNL_MIN) {
        dg_status st = dgr_kctx_alloc_output(k, 0);
        if (st)
            return st;
        int rc = dgr_dnnl_rows(k->dev->intra, DGR_DNNL_GELU, n, 1,
                               dgr_cpu_ptr(x), dgr_cpu_ptr(&k->out[0]));
        if (rc < 0)
            return dg_err_nomem(k->err, k->node->name);
        if (rc == 1) /* no oneDNN: the formula, into the output made */
            gelu_f32(dgr_cpu_ptr(x), dgr_cpu_ptr(&k->out[0]), n);
        return DG_OK;
    }
    return dgr_cpu_unary(k, gelu_fns);
}
DGR_KERNEL(_Gelu, dgr_k_gelu);
dg_status dgr_k_elu(dgr_kctx *k) { return dgr_cpu_unary(k, elu_fns); }
DGR_KERNEL(Elu, dgr_k_elu);
dg_status dgr_k_selu(dgr_kctx *k) { return dgr_cpu_unary(k, selu_fns); }
DGR_KERNEL(Selu, dgr_k_selu);
dg_status dgr_k_softplus(dgr_kctx *k) { return dgr_cpu_unary(k, softplus_fns); }
DGR_KERNEL(Softplus, dgr_k_softplus);
dg_status dgr_k_softsign(dgr_kctx *k) { return dgr_cpu_unary(k, softsign_fns); }
DGR_KERNEL(Softsign, dgr_k_softsign);
dg_status dgr_k_elu_grad(dgr_kctx *k) { return dgr_cpu_binary(k, elug_fns); }
DGR_KERNEL(EluGrad, dgr_k_elu_grad);
dg_status dgr_k_selu_grad(dgr_kctx *k) { return dgr_cpu_binary(k, selug_fns); }
DGR_KERNEL(SeluGrad, dgr_k_selu_grad);
dg_status dgr_k_softplus_grad(dgr_kctx *k) { return dgr_cpu_binary(k, softplusg_fns); }
DGR_KERNEL(SoftplusGrad, dgr_k_softplus_grad);
dg_status dgr_k_softsign_grad(dgr_kctx *k) { return dgr_cpu_binary(k, softsigng_fns); }
DGR_KERNEL(SoftsignGrad, dgr_k_softsign_grad);

/* LeakyRelu(x) and LeakyReluGrad(dy, x): alpha is TF's float attr. */
static dg_status leaky(dgr_kctx *k, int grad)
{
    dg_dtype t = k->in[0].dtype;
    if (t != DG_F32 && t != DG_F64)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "dtype %s", k->node->name, dg_dtype_name(t));
    float alpha = (float)dgc_attr_f(k->node, DGC_AT_alpha);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    const void *xv = dgr_cpu_ptr(&k->in[grad ? 1 : 0]);
    const void *gv = dgr_cpu_ptr(&k->in[0]);
    if (grad && dg_shape_numel(&k->in[1].shape) != n)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': gradients and "
                      "features differ in shape", k->node->name);
    if (t == DG_F32) {
        const float *x = xv, *g = gv;
        float *o = dgr_cpu_ptr(&k->out[0]);
        for (int64_t i = 0; i < n; i++)
            o[i] = grad ? (x[i] > 0 ? g[i] : alpha * g[i])
                        : (x[i] > 0 ? x[i] : alpha * x[i]);
    } else {
        const double *x = xv, *g = gv;
        double *o = dgr_cpu_ptr(&k->out[0]), a = (double)alpha;
        for (int64_t i = 0; i < n; i++)
            o[i] = grad ? (x[i] > 0 ? g[i] : a * g[i])
                        : (x[i] > 0 ? x[i] : a * x[i]);
    }
    return DG_OK;
}

dg_status dgr_k_leaky_relu(dgr_kctx *k) { return leaky(k, 0); }
DGR_KERNEL(LeakyRelu, dgr_k_leaky_relu);
dg_status dgr_k_leaky_relu_grad(dgr_kctx *k) { return leaky(k, 1); }
DGR_KERNEL(LeakyReluGrad, dgr_k_leaky_relu_grad);

/* ---- helpers ------------------------------------------------------------- */

int64_t dgr_cpu_iat(const dgr_value *v, int64_t i)
{
    const void *p = dgr_cpu_ptr(v);
    return v->dtype == DG_I32 ? ((const int32_t *)p)[i]
                              : ((const int64_t *)p)[i];
}

void dgr_cpu_iput(dgr_value *v, int64_t i, int64_t x)
{
    void *p = dgr_cpu_ptr(v);
    if (v->dtype == DG_I32)
        ((int32_t *)p)[i] = (int32_t)x;
    else
        ((int64_t *)p)[i] = x;
}

/* Allocate output i with dtype t and shape s (a size only the data
 * tells: Unique, DynamicPartition). */
dg_status dgr_cpu_alloc_as(dgr_kctx *k, int i, dg_dtype t,
                           const dg_shape *s)
{
    dgr_value *v = &k->out[i];
    v->dtype = t;
    v->shape = *s;
    size_t bytes = (size_t)dg_shape_numel(s) * dg_dtype_size(t);
    v->buf = dgr_buffer_new(k->dev, bytes, k->stream, k->err);
    return v->buf ? DG_OK : (k->err->code ? k->err->code : DG_E_NOMEM);
}

/* ---- ReverseV2, IdentityN ------------------------------------------------ */

dg_status dgr_k_reverse(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *s = &k->in[0].shape;
    uint32_t mask = 0;
    int64_t na = dg_shape_numel(&k->in[1].shape);
    for (int64_t i = 0; i < na; i++) {
        int64_t a = dgr_cpu_iat(&k->in[1], i);
        if (a < 0)
            a += s->rank;
        if (a < 0 || a >= s->rank)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': axis %lld out of "
                          "range for rank %d", k->node->name,
                          (long long)dgr_cpu_iat(&k->in[1], i), s->rank);
        mask |= 1u << a;
    }
    int64_t n = dg_shape_numel(s);
    size_t es = dg_dtype_size(k->in[0].dtype);
    const char *x = dgr_cpu_ptr(&k->in[0]);
    char *o = dgr_cpu_ptr(&k->out[0]);
    /* copy runs of the trailing axes that are not reversed */
    int inner_from = s->rank;
    int64_t run = 1;
    while (inner_from > 0 && !(mask & (1u << (inner_from - 1))))
        run *= s->dims[--inner_from];
    if (n <= 0)
        return DG_OK;
    int64_t idx[DG_MAX_RANK] = {0};
    for (int64_t r = 0; r < n / run; r++) {
        int64_t src = 0;
        for (int d = 0; d < inner_from; d++) {
            int64_t c = (mask & (1u << d)) ? s->dims[d] - 1 - idx[d] : idx[d];
            src = src * s->dims[d] + c;
        }
        memcpy(o + (size_t)(r * run) * es, x + (size_t)(src * run) * es,
               (size_t)run * es);
        for (int d = inner_from - 1; d >= 0; d--) {
            if (++idx[d] < s->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return DG_OK;
}
DGR_KERNEL(ReverseV2, dgr_k_reverse);

dg_status dgr_k_identity_n(dgr_kctx *k)
{
    for (int i = 0; i < k->n_out && i < k->n_in; i++)
        dgr_kctx_alias_output(k, i, &k->in[i]);
    return DG_OK;
}
DGR_KERNEL(IdentityN, dgr_k_identity_n);

/* ---- image resizes (TF's kernels, NHWC) ---------------------------------- */

static float resize_scale(int64_t in, int64_t out, int align)
{
    return (align && out > 1) ? (float)(in - 1) / (float)(out - 1)
                              : (float)in / (float)out;
}

typedef struct lerp1 {
    int64_t lo, hi;
    float w;
} lerp1;

/* TF's compute_interpolation_weights (HalfPixelScaler / LegacyScaler). */
static void lerps(lerp1 *l, int64_t out, int64_t in, float scale, int half)
{
    for (int64_t i = 0; i < out; i++) {
        float v = half ? ((float)i + 0.5f) * scale - 0.5f : (float)i * scale;
        float f = floorf(v);
        int64_t lo = (int64_t)f, hi = (int64_t)ceilf(v);
        l[i].lo = lo < 0 ? 0 : lo;
        l[i].hi = hi < in - 1 ? hi : in - 1;
        l[i].w = v - f;
    }
}

/* TF's nearest-neighbour source index. */
static int64_t nn_src(int64_t i, float scale, int align, int half,
                      int64_t in)
{
    float v = half ? ((float)i + 0.5f) * scale : (float)i * scale;
    int64_t s = align ? (int64_t)roundf(v) : (int64_t)floorf(v);
    if (s > in - 1)
        s = in - 1;
    if (half && s < 0)
        s = 0;
    return s;
}

static dg_status resize_lerps(dgr_kctx *k, int64_t oh, int64_t ow,
                              int64_t ih, int64_t iw, lerp1 **ly,
                              lerp1 **lx)
{
    int align = dgc_attr_b(k->node, DGC_AT_align_corners);
    int half = dgc_attr_b(k->node, DGC_AT_half_pixel_centers);
    *ly = dg_malloc(sizeof **ly * (size_t)(oh + 1));
    *lx = dg_malloc(sizeof **lx * (size_t)(ow + 1));
    if (!*ly || !*lx) {
        dg_free(*ly);
        dg_free(*lx);
        return dg_err_nomem(k->err, "resize weights");
    }
    lerps(*ly, oh, ih, resize_scale(ih, oh, align), half);
    lerps(*lx, ow, iw, resize_scale(iw, ow, align), half);
    return DG_OK;
}

dg_status dgr_k_resize_bilinear(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *is = &k->in[0].shape, *os = &k->out[0].shape;
    int64_t B = is->dims[0], ih = is->dims[1], iw = is->dims[2],
            C = is->dims[3], oh = os->dims[1], ow = os->dims[2];
    if (dg_shape_numel(os) <= 0)
        return DG_OK;
    lerp1 *ly, *lx;
    if ((st = resize_lerps(k, oh, ow, ih, iw, &ly, &lx)))
        return st;
    const void *x = dgr_cpu_ptr(&k->in[0]);
    dg_dtype t = k->in[0].dtype;
    float *o = dgr_cpu_ptr(&k->out[0]);
#define PX(b, y, xx, c) \
    ((float)dgr_cpu_get(x, t, (((b) * ih + (y)) * iw + (xx)) * C + (c)))
    for (int64_t b = 0; b < B; b++)
        for (int64_t y = 0; y < oh; y++)
            for (int64_t xx = 0; xx < ow; xx++)
                for (int64_t c = 0; c < C; c++) {
                    float tl = PX(b, ly[y].lo, lx[xx].lo, c);
                    float tr = PX(b, ly[y].lo, lx[xx].hi, c);
                    float bl = PX(b, ly[y].hi, lx[xx].lo, c);
                    float br = PX(b, ly[y].hi, lx[xx].hi, c);
                    float top = tl + (tr - tl) * lx[xx].w;
                    float bot = bl + (br - bl) * lx[xx].w;
                    *o++ = top + (bot - top) * ly[y].w;
                }
#undef PX
    dg_free(ly);
    dg_free(lx);
    return DG_OK;
}
DGR_KERNEL(ResizeBilinear, dgr_k_resize_bilinear);

dg_status dgr_k_resize_bilinear_grad(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *gs = &k->in[0].shape, *os = &k->out[0].shape;
    int64_t B = gs->dims[0], gh = gs->dims[1], gw = gs->dims[2],
            C = gs->dims[3], oh = os->dims[1], ow = os->dims[2];
    dg_dtype t = k->out[0].dtype;
    int64_t n = dg_shape_numel(os);
    void *o = dgr_cpu_ptr(&k->out[0]);
    if (n > 0)
        memset(o, 0, (size_t)n * dg_dtype_size(t));
    if (n <= 0 || dg_shape_numel(gs) <= 0)
        return DG_OK;
    lerp1 *ly, *lx; /* the forward's weights: output (gh) from input (oh) */
    if ((st = resize_lerps(k, gh, gw, oh, ow, &ly, &lx)))
        return st;
    const void *g = dgr_cpu_ptr(&k->in[0]);
    for (int64_t b = 0; b < B; b++)
        for (int64_t y = 0; y < gh; y++)
            for (int64_t xx = 0; xx < gw; xx++)
                for (int64_t c = 0; c < C; c++) {
                    int64_t gi = ((b * gh + y) * gw + xx) * C + c;
                    int64_t t0 = (b * oh + ly[y].lo) * ow, b0 = (b * oh + ly[y].hi) * ow;
                    int64_t l = lx[xx].lo, r = lx[xx].hi;
                    if (t == DG_F32) { /* grads are float32 (TF) */
                        float v = ((const float *)g)[gi], *p = o;
                        float wy = ly[y].w, wx = lx[xx].w;
                        float dt = (1.0f - wy) * v, db = wy * v;
                        p[(t0 + l) * C + c] += dt * (1.0f - wx);
                        p[(t0 + r) * C + c] += dt * wx;
                        p[(b0 + l) * C + c] += db * (1.0f - wx);
                        p[(b0 + r) * C + c] += db * wx;
                    } else {
                        double v = ((const float *)g)[gi], *p = o;
                        double wy = ly[y].w, wx = lx[xx].w;
                        double dt = (1.0 - wy) * v, db = wy * v;
                        p[(t0 + l) * C + c] += dt * (1.0 - wx);
                        p[(t0 + r) * C + c] += dt * wx;
                        p[(b0 + l) * C + c] += db * (1.0 - wx);
                        p[(b0 + r) * C + c] += db * wx;
                    }
                }
    dg_free(ly);
    dg_free(lx);
    return DG_OK;
}
DGR_KERNEL(ResizeBilinearGrad, dgr_k_resize_bilinear_grad);

dg_status dgr_k_resize_nearest(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *is = &k->in[0].shape, *os = &k->out[0].shape;
    int64_t B = is->dims[0], ih = is->dims[1], iw = is->dims[2],
            C = is->dims[3], oh = os->dims[1], ow = os->dims[2];
    int align = dgc_attr_b(k->node, DGC_AT_align_corners);
    int half = dgc_attr_b(k->node, DGC_AT_half_pixel_centers);
    float sy = resize_scale(ih, oh, align), sx = resize_scale(iw, ow, align);
    size_t es = dg_dtype_size(k->in[0].dtype), row = (size_t)C * es;
    const char *x = dgr_cpu_ptr(&k->in[0]);
    char *o = dgr_cpu_ptr(&k->out[0]);
    if (dg_shape_numel(os) <= 0)
        return DG_OK;
    for (int64_t b = 0; b < B; b++)
        for (int64_t y = 0; y < oh; y++) {
            int64_t iy = nn_src(y, sy, align, half, ih);
            for (int64_t xx = 0; xx < ow; xx++) {
                int64_t ix = nn_src(xx, sx, align, half, iw);
                memcpy(o, x + (size_t)((b * ih + iy) * iw + ix) * row, row);
                o += row;
            }
        }
    return DG_OK;
}
DGR_KERNEL(ResizeNearestNeighbor, dgr_k_resize_nearest);

dg_status dgr_k_resize_nearest_grad(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *gs = &k->in[0].shape, *os = &k->out[0].shape;
    int64_t B = gs->dims[0], gh = gs->dims[1], gw = gs->dims[2],
            C = gs->dims[3], oh = os->dims[1], ow = os->dims[2];
    int align = dgc_attr_b(k->node, DGC_AT_align_corners);
    int half = dgc_attr_b(k->node, DGC_AT_half_pixel_centers);
    float sy = resize_scale(oh, gh, align), sx = resize_scale(ow, gw, align);
    dg_dtype t = k->out[0].dtype;
    int64_t n = dg_shape_numel(os);
    void *o = dgr_cpu_ptr(&k->out[0]);
    const void *g = dgr_cpu_ptr(&k->in[0]);
    if (n > 0)
        memset(o, 0, (size_t)n * dg_dtype_size(t));
    if (n <= 0)
        return DG_OK;
    for (int64_t b = 0; b < B; b++)
        for (int64_t y = 0; y < gh; y++) {
            int64_t ty = nn_src(y, sy, align, half, oh);
            for (int64_t xx = 0; xx < gw; xx++) {
                int64_t tx = nn_src(xx, sx, align, half, ow);
                int64_t gi = ((b * gh + y) * gw + xx) * C;
                int64_t oi = ((b * oh + ty) * ow + tx) * C;
                for (int64_t c = 0; c < C; c++)
                    switch (t) {
                    case DG_F32: ((float *)o)[oi + c] += ((const float *)g)[gi + c]; break;
                    case DG_F64: ((double *)o)[oi + c] += ((const double *)g)[gi + c]; break;
                    case DG_I32: ((int32_t *)o)[oi + c] += ((const int32_t *)g)[gi + c]; break;
                    case DG_I64: ((int64_t *)o)[oi + c] += ((const int64_t *)g)[gi + c]; break;
                    default: break;
                    }
            }
        }
    return DG_OK;
}
DGR_KERNEL(ResizeNearestNeighborGrad, dgr_k_resize_nearest_grad);

/* ---- Unique -------------------------------------------------------------- */

static uint64_t bits_of(const void *p, dg_dtype t, int64_t i)
{
    switch (t) {
    case DG_F32: {
        float f = ((const float *)p)[i];
        uint32_t u;
        if (f == 0)
            f = 0; /* -0 == 0 */
        memcpy(&u, &f, 4);
        return u;
    }
    case DG_F64: {
        double f = ((const double *)p)[i];
        uint64_t u;
        if (f == 0)
            f = 0;
        memcpy(&u, &f, 8);
        return u;
    }
    case DG_I32: return (uint64_t)(int64_t)((const int32_t *)p)[i];
    default: return (uint64_t)((const int64_t *)p)[i];
    }
}

dg_status dgr_k_unique(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    int64_t n = dg_shape_numel(&x->shape);
    dg_dtype t = x->dtype;
    size_t es = dg_dtype_size(t);
    int64_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    int64_t *slot = dg_malloc(sizeof *slot * (size_t)cap); /* -> first i */
    int64_t *uix = dg_malloc(sizeof *uix * (size_t)(n + 1)); /* unique j */
    int64_t *first = dg_malloc(sizeof *first * (size_t)(n + 1));
    if (!slot || !uix || !first) {
        dg_free(slot);
        dg_free(uix);
        dg_free(first);
        return dg_err_nomem(k->err, "Unique");
    }
    for (int64_t s = 0; s < cap; s++)
        slot[s] = -1;
    int64_t nu = 0;
    const char *xp = dgr_cpu_ptr(x);
    for (int64_t i = 0; i < n; i++) {
        uint64_t b = bits_of(xp, t, i);
        uint64_t h = (b * 0x9E3779B97F4A7C15ull) >> 17;
        int64_t s = (int64_t)(h & (uint64_t)(cap - 1));
        while (slot[s] >= 0 && bits_of(xp, t, first[slot[s]]) != b)
            s = (s + 1) & (cap - 1);
        if (slot[s] < 0) {
            slot[s] = nu;
            first[nu++] = i;
        }
        uix[i] = slot[s];
    }
    dg_shape ys;
    memset(&ys, 0, sizeof ys);
    ys.rank = 1;
    ys.dims[0] = nu;
    const dgc_attr *oi = dgc_attr_at(k->node, DGC_AT_out_idx);
    dg_status st = dgr_cpu_alloc_as(k, 0, t, &ys);
    if (!st)
        st = dgr_cpu_alloc_as(k, 1, oi ? (dg_dtype)oi->i : DG_I32, &x->shape);
    if (!st) {
        char *y = dgr_cpu_ptr(&k->out[0]);
        for (int64_t j = 0; j < nu; j++)
            memcpy(y + (size_t)j * es, xp + (size_t)first[j] * es, es);
        for (int64_t i = 0; i < n; i++)
            dgr_cpu_iput(&k->out[1], i, uix[i]);
    }
    if (!st && k->n_out == 3) { /* UniqueWithCounts */
        st = dgr_cpu_alloc_as(k, 2, k->out[1].dtype, &ys);
        for (int64_t j = 0; !st && j < nu; j++)
            dgr_cpu_iput(&k->out[2], j, 0);
        for (int64_t i = 0; !st && i < n; i++)
            dgr_cpu_iput(&k->out[2], uix[i],
                         dgr_cpu_iat(&k->out[2], uix[i]) + 1);
    }
    dg_free(slot);
    dg_free(uix);
    dg_free(first);
    return st;
}
DGR_KERNEL(Unique, dgr_k_unique);
/* the same kernel: its third output, the counts */
dg_status dgr_k_unique_with_counts(dgr_kctx *k) { return dgr_k_unique(k); }
DGR_KERNEL(UniqueWithCounts, dgr_k_unique_with_counts);

/* ---- segments, scatter, partitions --------------------------------------- */

#define ACC_ROW(T, dst, src, m, sign)                                        \
    do {                                                                     \
        T *d_ = (T *)(dst);                                                  \
        const T *s_ = (const T *)(src);                                      \
        for (int64_t q_ = 0; q_ < (m); q_++)                                 \
            d_[q_] = (T)(d_[q_] + (sign) * s_[q_]);                          \
    } while (0)

/* dst[0..m) += sign * src[0..m) in dtype t (sign +-1). */
static void acc_row(dg_dtype t, void *dst, const void *src, int64_t m,
                    int sign)
{
    switch (t) {
    case DG_F32: ACC_ROW(float, dst, src, m, (float)sign); break;
    case DG_F64: ACC_ROW(double, dst, src, m, (double)sign); break;
    case DG_I32: ACC_ROW(int32_t, dst, src, m, (int32_t)sign); break;
    case DG_I64: ACC_ROW(int64_t, dst, src, m, (int64_t)sign); break;
    default: break;
    }
}

dg_status dgr_k_unsorted_segment_sum(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0], *ids = &k->in[1];
    int64_t ns = dgr_cpu_iat(&k->in[2], 0);
    dg_shape os;
    memset(&os, 0, sizeof os);
    int ir = ids->shape.rank;
    os.rank = 1 + x->shape.rank - ir;
    os.dims[0] = ns;
    for (int d = ir; d < x->shape.rank; d++)
        os.dims[1 + d - ir] = x->shape.dims[d];
    dg_status st = dgr_cpu_alloc_as(k, 0, x->dtype, &os);
    if (st)
        return st;
    int64_t cnt = dg_shape_numel(&ids->shape);
    int64_t inner = 1;
    for (int d = 1; d < os.rank; d++)
        inner *= os.dims[d];
    size_t es = dg_dtype_size(x->dtype);
    char *o = dgr_cpu_ptr(&k->out[0]);
    if (ns * inner > 0)
        memset(o, 0, (size_t)(ns * inner) * es);
    const char *xp = dgr_cpu_ptr(x);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t s = dgr_cpu_iat(ids, i);
        if (s < 0)
            continue; /* TF drops negative ids */
        if (s >= ns)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': segment id %lld "
                          "is not in [0, %lld)", k->node->name, (long long)s,
                          (long long)ns);
        acc_row(x->dtype, o + (size_t)(s * inner) * es,
                xp + (size_t)(i * inner) * es, inner, 1);
    }
    return DG_OK;
}
DGR_KERNEL(UnsortedSegmentSum, dgr_k_unsorted_segment_sum);

static dg_status scatter(dgr_kctx *k, int sign)
{
    const dgr_value *ref = &k->in[0], *ix = &k->in[1], *u = &k->in[2];
    int64_t rows = ref->shape.dims[0], inner = 1;
    for (int d = 1; d < ref->shape.rank; d++)
        inner *= ref->shape.dims[d];
    if (!ref->buf && rows * inner > 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': variable has no "
                      "storage", k->node->name);
    if (u->dtype != ref->dtype)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': updates are %s, the "
                      "variable %s", k->node->name, dg_dtype_name(u->dtype),
                      dg_dtype_name(ref->dtype));
    int64_t cnt = dg_shape_numel(&ix->shape);
    int scalar = u->shape.rank == 0;
    if (!scalar && dg_shape_numel(&u->shape) != cnt * inner)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': updates must have "
                      "shape indices.shape + ref.shape[1:]", k->node->name);
    size_t es = dg_dtype_size(ref->dtype);
    char *r = dgr_cpu_ptr(ref);
    const char *up = dgr_cpu_ptr(u);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t s = dgr_cpu_iat(ix, i);
        if (s < 0 || s >= rows)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': index %lld is "
                          "not in [0, %lld)", k->node->name, (long long)s,
                          (long long)rows);
        for (int64_t q = 0; q < (scalar ? inner : 1); q++) {
            char *dst = r + (size_t)(s * inner + q) * es;
            const char *src = scalar ? up : up + (size_t)(i * inner) * es;
            int64_t m = scalar ? 1 : inner;
            if (sign == 0) /* ScatterUpdate */
                memcpy(dst, src, (size_t)m * es);
            else
                acc_row(ref->dtype, dst, src, m, sign);
        }
    }
    dgr_kctx_alias_output(k, 0, ref);
    return DG_OK;
}

dg_status dgr_k_scatter_add(dgr_kctx *k) { return scatter(k, 1); }
DGR_KERNEL(ScatterAdd, dgr_k_scatter_add);
dg_status dgr_k_scatter_sub(dgr_kctx *k) { return scatter(k, -1); }
dg_status dgr_k_scatter_update(dgr_kctx *k) { return scatter(k, 0); }
DGR_KERNEL(ScatterSub, dgr_k_scatter_sub);
DGR_KERNEL(ScatterUpdate, dgr_k_scatter_update);

dg_status dgr_k_dynamic_partition(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0], *p = &k->in[1];
    int np = k->n_out;
    int64_t cnt = dg_shape_numel(&p->shape), inner = 1;
    int pr = p->shape.rank;
    for (int d = pr; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    int64_t *count = dg_calloc((size_t)np + 1, sizeof *count);
    if (!count)
        return dg_err_nomem(k->err, "DynamicPartition");
    dg_status st = DG_OK;
    for (int64_t i = 0; i < cnt && !st; i++) {
        int64_t q = dgr_cpu_iat(p, i);
        if (q < 0 || q >= np)
            st = dg_err(k->err, DG_E_RUNTIME, "node '%s': partition %lld is "
                        "not in [0, %d)", k->node->name, (long long)q, np);
        else
            count[q]++;
    }
    for (int o = 0; o < np && !st; o++) {
        dg_shape s;
        memset(&s, 0, sizeof s);
        s.rank = 1 + x->shape.rank - pr;
        s.dims[0] = count[o];
        for (int d = pr; d < x->shape.rank; d++)
            s.dims[1 + d - pr] = x->shape.dims[d];
        st = dgr_cpu_alloc_as(k, o, x->dtype, &s);
        count[o] = 0;
    }
    size_t row = (size_t)inner * dg_dtype_size(x->dtype);
    const char *xp = dgr_cpu_ptr(x);
    for (int64_t i = 0; i < cnt && !st; i++) {
        int64_t q = dgr_cpu_iat(p, i);
        memcpy((char *)dgr_cpu_ptr(&k->out[q]) + (size_t)count[q]++ * row,
               xp + (size_t)i * row, row);
    }
    dg_free(count);
    return st;
}
DGR_KERNEL(DynamicPartition, dgr_k_dynamic_partition);

/* ---- SpaceToBatchND / BatchToSpaceND -------------------------------------- */

/* One element copy per (batch-side) element: b = the batch-side batch
 * index, (i_k) its block offsets, (o_k) its spatial position; the space
 * side is input (to_batch) or output. */
static dg_status space_batch(dgr_kctx *k, int to_batch)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dgr_value *x = &k->in[0];
    /* SpaceToBatch (V1): block_shape [block_size, block_size], paddings
     * its input 1 */
    int v1 = k->node->op == DGC_OPID_SpaceToBatch;
    int m = v1 ? 2 : (int)dg_shape_numel(&k->in[1].shape);
    int64_t bs[DG_MAX_RANK], pad[DG_MAX_RANK];
    for (int i = 0; i < m; i++) {
        bs[i] = v1 ? dgc_attr_i(k->node, DGC_AT_block_size)
                   : dgr_cpu_iat(&k->in[1], i);
        /* the leading pad / crop */
        pad[i] = dgr_cpu_iat(&k->in[v1 ? 1 : 2], 2 * i);
    }
    const dg_shape *bside = to_batch ? &k->out[0].shape : &x->shape;
    const dg_shape *sside = to_batch ? &x->shape : &k->out[0].shape;
    int64_t B = sside->dims[0], inner = 1;
    for (int d = 1 + m; d < x->shape.rank; d++)
        inner *= x->shape.dims[d];
    size_t es = dg_dtype_size(x->dtype), row = (size_t)inner * es;
    int64_t nb = dg_shape_numel(bside) / (inner ? inner : 1);
    char *src = dgr_cpu_ptr(x), *dst = dgr_cpu_ptr(&k->out[0]);
    if (to_batch && dg_shape_numel(bside) > 0)
        memset(dst, 0, (size_t)dg_shape_numel(bside) * es);
    for (int64_t e = 0; e < nb && inner > 0; e++) {
        /* e -> (bb, o_1..o_m) on the batch side */
        int64_t rem = e, o[DG_MAX_RANK];
        for (int d = m - 1; d >= 0; d--) {
            o[d] = rem % bside->dims[1 + d];
            rem /= bside->dims[1 + d];
        }
        int64_t bb = rem, b = bb % B, blk = bb / B;
        int64_t s = b, ok = 1;
        int64_t off[DG_MAX_RANK];
        for (int d = m - 1; d >= 0; d--) {
            off[d] = blk % bs[d];
            blk /= bs[d];
        }
        for (int d = 0; d < m; d++) {
            int64_t p = o[d] * bs[d] + off[d] - pad[d];
            if (p < 0 || p >= sside->dims[1 + d])
                ok = 0;
            s = s * sside->dims[1 + d] + p;
        }
        if (!ok)
            continue;
        if (to_batch)
            memcpy(dst + (size_t)e * row, src + (size_t)s * row, row);
        else
            memcpy(dst + (size_t)s * row, src + (size_t)e * row, row);
    }
    return DG_OK;
}

dg_status dgr_k_space_to_batch(dgr_kctx *k) { return space_batch(k, 1); }
DGR_KERNEL(SpaceToBatchND, dgr_k_space_to_batch);
DGR_KERNEL(SpaceToBatch, dgr_k_space_to_batch);
dg_status dgr_k_batch_to_space(dgr_kctx *k) { return space_batch(k, 0); }
DGR_KERNEL(BatchToSpaceND, dgr_k_batch_to_space);

/* ---- Conv3D, MaxPool3D (NDHWC; each output element summed in a fixed
 * order) ------------------------------------------------------------------ */

static double fget(const void *p, dg_dtype t, int64_t i)
{
    return t == DG_F32 ? ((const float *)p)[i] : ((const double *)p)[i];
}

static void fset(void *p, dg_dtype t, int64_t i, double v)
{
    if (t == DG_F32)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

static dg_status win3d(dgr_kctx *k, int conv)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const dg_shape *xs = &k->in[0].shape, *os = &k->out[0].shape;
    dg_dtype t = k->in[0].dtype;
    const dgc_attr *sa = dgc_attr_at(k->node, DGC_AT_strides);
    const dgc_attr *ka = conv ? NULL : dgc_attr_at(k->node, DGC_AT_ksize);
    const dgc_attr *da = conv ? dgc_attr_at(k->node, DGC_AT_dilations) : NULL;
    const dgc_attr *pa = dgc_attr_at(k->node, DGC_AT_padding);
    int same = pa && pa->s && strcmp(pa->s, "SAME") == 0;
    int64_t K[3], S[3], D[3], P[3];
    for (int d = 0; d < 3; d++) {
        K[d] = conv ? k->in[1].shape.dims[d] : ka->ints[1 + d];
        S[d] = sa->ints[1 + d];
        D[d] = conv && da && da->n == 5 ? da->ints[1 + d] : 1;
        dgc_win3d(xs->dims[1 + d], K[d], S[d], D[d], same, &P[d]);
    }
    int64_t N = xs->dims[0], ID = xs->dims[1], IH = xs->dims[2],
            IW = xs->dims[3], C = xs->dims[4];
    int64_t OD = os->dims[1], OH = os->dims[2], OW = os->dims[3],
            OC = os->dims[4];
    const void *x = dgr_cpu_ptr(&k->in[0]);
    const void *w = conv ? dgr_cpu_ptr(&k->in[1]) : NULL;
    void *o = dgr_cpu_ptr(&k->out[0]);
    int64_t oi = 0;
    for (int64_t b = 0; b < N; b++)
        for (int64_t z = 0; z < OD; z++)
            for (int64_t y = 0; y < OH; y++)
                for (int64_t xx = 0; xx < OW; xx++)
                    for (int64_t c = 0; c < OC; c++, oi++) {
                        double acc = conv ? 0 : -HUGE_VAL;
                        for (int64_t a = 0; a < K[0]; a++) {
                            int64_t iz = z * S[0] + a * D[0] - P[0];
                            if (iz < 0 || iz >= ID)
                                continue;
                            for (int64_t bq = 0; bq < K[1]; bq++) {
                                int64_t iy = y * S[1] + bq * D[1] - P[1];
                                if (iy < 0 || iy >= IH)
                                    continue;
                                for (int64_t cq = 0; cq < K[2]; cq++) {
                                    int64_t ix = xx * S[2] + cq * D[2] - P[2];
                                    if (ix < 0 || ix >= IW)
                                        continue;
                                    int64_t base =
                                        (((b * ID + iz) * IH + iy) * IW + ix) * C;
                                    if (!conv) {
                                        double v = fget(x, t, base + c);
                                        acc = v > acc ? v : acc;
                                        continue;
                                    }
                                    int64_t wb =
                                        ((a * K[1] + bq) * K[2] + cq) * C * OC;
                                    for (int64_t ci = 0; ci < C; ci++)
                                        acc += fget(x, t, base + ci) *
                                               fget(w, t, wb + ci * OC + c);
                                }
                            }
                        }
                        fset(o, t, oi, acc);
                    }
    return DG_OK;
}

dg_status dgr_k_conv3d(dgr_kctx *k) { return win3d(k, 1); }
DGR_KERNEL(Conv3D, dgr_k_conv3d);
dg_status dgr_k_max_pool3d(dgr_kctx *k) { return win3d(k, 0); }
DGR_KERNEL(MaxPool3D, dgr_k_max_pool3d);

/* ---- DynamicStitch with many indices (issue 22) ----------------------------
 * Inference knows the output's first dim only from indices of at most 64
 * elements (what the executor hands infer functions); with more (a
 * partitioned embedding over a real batch, DynamicPartition's gradient) the
 * kernel sizes the output from the largest index, then runs the stitch. */
dg_status dgr_k_dynamic_stitch_any(dgr_kctx *k)
{
    if (k->out_types[0].shape.rank > 0 && k->out_types[0].shape.dims[0] < 0) {
        int nn = k->n_in / 2;
        int64_t max = -1;
        for (int m = 0; m < nn; m++) {
            int64_t c = dg_shape_numel(&k->in[m].shape);
            for (int64_t i = 0; i < c; i++) {
                int64_t v = dgr_cpu_iat(&k->in[m], i);
                max = v > max ? v : max;
            }
        }
        dgc_ttype t = k->out_types[0];
        t.shape.dims[0] = max + 1;
        for (int d = 1; d < t.shape.rank; d++)
            if (t.shape.dims[d] < 0) /* from data 0, past its indices' dims */
                t.shape.dims[d] =
                    k->in[nn].shape.dims[k->in[0].shape.rank + d - 1];
        dgr_kctx kk = *k;
        kk.out_types = &t;
        return dgr_k_dynamic_stitch(&kk);
    }
    return dgr_k_dynamic_stitch(k);
}
DGR_KERNEL(DynamicStitch, dgr_k_dynamic_stitch_any);

/* IsVariableInitialized / VarIsInitializedOp: every Variable is. */
dg_status dgr_k_is_initialized(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (!st)
        *(dgr_bool_t *)dgr_cpu_ptr(&k->out[0]) = 1;
    return st;
}
DGR_KERNEL(IsVariableInitialized, dgr_k_is_initialized);

/* ---- Cumsum, OneHot (issue 22, step 3) ------------------------------------ */

/* TF's LogSumExp of a running CumulativeLogsumexp: max + log1p(exp(min -
 * max)), -inf while max is */
static float lse_f32(float a, float b)
{
    float mi = a < b ? a : b, ma = a < b ? b : a;
    return ma < -FLT_MAX ? ma : log1pf(expf(mi - ma)) + ma;
}
static double lse_f64(double a, double b)
{
    double mi = a < b ? a : b, ma = a < b ? b : a;
    return ma < -DBL_MAX ? ma : log1p(exp(mi - ma)) + ma;
}
#define CUM_NO_LSE(a, b) (a)

/* Cumsum (mode 0), Cumprod (1) and CumulativeLogsumexp (2: LSE, from
 * LSE0) along attrs.axis: each (outer, inner) line summed (multiplied,
 * log-sum-exp'd) serially */
#define CUMSUM(T, LSE, LSE0)                                                 \
    do {                                                                     \
        const T *x = dgr_cpu_ptr(&k->in[0]);                                 \
        T *y = dgr_cpu_ptr(&k->out[0]);                                      \
        for (int64_t o = 0; o < outer; o++)                                  \
            for (int64_t i = 0; i < inner; i++) {                            \
                T acc = mode == 1 ? 1 : mode == 2 ? LSE0 : 0;                \
                for (int64_t q = 0; q < len; q++) {                          \
                    int64_t j = rev ? len - 1 - q : q;                       \
                    int64_t at = (o * len + j) * inner + i;                  \
                    if (excl)                                                \
                        y[at] = acc;                                         \
                    acc = mode == 1   ? acc * x[at]                          \
                          : mode == 2 ? LSE(acc, x[at])                      \
                                      : acc + x[at];                         \
                    if (!excl)                                               \
                        y[at] = acc;                                         \
                }                                                            \
            }                                                                \
    } while (0)

dg_status dgr_k_cumsum(dgr_kctx *k)
{
    int64_t outer, len, inner;
    if (dgc_axis_split(&k->in[0].shape, dgc_attr_i(k->node, DGC_AT_axis),
                       &outer, &len, &inner))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': axis out of range "
                      "for rank %d", k->node->name, k->in[0].shape.rank);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int excl = dgc_attr_b(k->node, DGC_AT_exclusive);
    int rev = dgc_attr_b(k->node, DGC_AT_reverse);
    int mode = k->node->op == DGC_OPID_Cumprod                ? 1
               : k->node->op == DGC_OPID_CumulativeLogsumexp ? 2
                                                             : 0;
    switch (k->in[0].dtype) {
    case DG_F32: CUMSUM(float, lse_f32, -INFINITY); break;
    case DG_F64: CUMSUM(double, lse_f64, -INFINITY); break;
    case DG_I32: CUMSUM(int32_t, CUM_NO_LSE, 0); break;
    case DG_I64: CUMSUM(int64_t, CUM_NO_LSE, 0); break;
    default:
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "bool", k->node->name);
    }
    return DG_OK;
}
DGR_KERNEL(Cumsum, dgr_k_cumsum);
DGR_KERNEL(Cumprod, dgr_k_cumsum);
DGR_KERNEL(CumulativeLogsumexp, dgr_k_cumsum);

dg_status dgr_k_one_hot(dgr_kctx *k)
{
    const dg_shape *is = &k->in[0].shape;
    int64_t depth = dgr_cpu_iat(&k->in[1], 0);
    if (depth < 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': depth %lld is "
                      "negative", k->node->name, (long long)depth);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t ax = dgc_attr_i(k->node, DGC_AT_axis);
    if (ax < 0)
        ax = is->rank;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; d++)
        outer *= is->dims[d];
    for (int d = (int)ax; d < is->rank; d++)
        inner *= is->dims[d];
    size_t es = dg_dtype_size(k->out[0].dtype);
    const char *on = dgr_cpu_ptr(&k->in[2]), *off = dgr_cpu_ptr(&k->in[3]);
    char *y = dgr_cpu_ptr(&k->out[0]);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < depth; j++)
            for (int64_t i = 0; i < inner; i++) {
                int64_t id = dgr_cpu_iat(&k->in[0], o * inner + i);
                memcpy(y + (size_t)((o * depth + j) * inner + i) * es,
                       id == j ? on : off, es);
            }
    return DG_OK;
}
DGR_KERNEL(OneHot, dgr_k_one_hot);

/* ---- DepthToSpace, SpaceToDepth (NHWC) ----------------------------------- */

/* The offset in the depth-side tensor of element (n, h, w, c) of the
 * space-side tensor of dims od (N, H, W, C), block b: DepthToSpace reads
 * it, SpaceToDepth writes it. */
static int64_t d2s_in(int64_t n, int64_t h, int64_t w, int64_t c,
                      const int64_t *od, int64_t b)
{
    int64_t ih = h / b, iw = w / b, ic = ((h % b) * b + w % b) * od[3] + c;
    int64_t iW = od[2] / b, iC = od[3] * b * b, iH = od[1] / b;
    return ((n * iH + ih) * iW + iw) * iC + ic;
}

static dg_status depth_space(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t b = dgc_attr_i(k->node, DGC_AT_block_size);
    int dts = k->node->op == DGC_OPID_DepthToSpace;
    /* the space-side tensor's dims: the output of DepthToSpace, the input
     * of SpaceToDepth */
    const int64_t *sd = dts ? k->out[0].shape.dims : k->in[0].shape.dims;
    size_t es = dg_dtype_size(k->out[0].dtype);
    const char *x = dgr_cpu_ptr(&k->in[0]);
    char *y = dgr_cpu_ptr(&k->out[0]);
    int64_t i = 0;
    for (int64_t n = 0; n < sd[0]; n++)
        for (int64_t h = 0; h < sd[1]; h++)
            for (int64_t w = 0; w < sd[2]; w++)
                for (int64_t c = 0; c < sd[3]; c++, i++) {
                    int64_t j = d2s_in(n, h, w, c, sd, b);
                    if (dts)
                        memcpy(y + (size_t)i * es, x + (size_t)j * es, es);
                    else
                        memcpy(y + (size_t)j * es, x + (size_t)i * es, es);
                }
    return DG_OK;
}
dg_status dgr_k_depth_to_space(dgr_kctx *k) { return depth_space(k); }
DGR_KERNEL(DepthToSpace, dgr_k_depth_to_space);
dg_status dgr_k_space_to_depth(dgr_kctx *k) { return depth_space(k); }
DGR_KERNEL(SpaceToDepth, dgr_k_space_to_depth);

/* ---- MirrorPad and MirrorPadGrad ------------------------------------------ */

/* The source index along one dimension of size n for padded index i
 * (pad a before): the reflection without (REFLECT) or with (SYMMETRIC)
 * the edge element. */
static int64_t mirror_src(int64_t i, int64_t a, int64_t n, int sym)
{
    int64_t j = i - a;
    if (j < 0)
        return sym ? -j - 1 : -j;
    if (j >= n)
        return sym ? 2 * n - 1 - j : 2 * n - 2 - j;
    return j;
}

/* The padding of one MirrorPad: the padded (big) and unpadded (small)
 * shapes, pads before, the small tensor's strides, the mode. */
typedef struct mirror_map {
    const dg_shape *bs, *ss;
    int64_t pad[DG_MAX_RANK], sstr[DG_MAX_RANK];
    int sym;
} mirror_map;

/* The offset in the small tensor that padded element i copies. */
static int64_t mirror_off(const mirror_map *mm, int64_t i)
{
    int64_t o = 0;
    for (int d = mm->bs->rank - 1; d >= 0; d--) {
        o += mirror_src(i % mm->bs->dims[d], mm->pad[d], mm->ss->dims[d],
                        mm->sym) * mm->sstr[d];
        i /= mm->bs->dims[d];
    }
    return o;
}

/* dx[source] += dy[i] over the padded elements in order (deterministic) */
#define MIRROR_GRAD(T)                                                       \
    do {                                                                     \
        const T *dy = (const T *)big;                                        \
        T *dx = (T *)small;                                                  \
        for (int64_t i = 0; i < nbig; i++)                                   \
            dx[mirror_off(&mm, i)] += dy[i];                                 \
    } while (0)

static dg_status mirror_pad(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int grad = k->node->op == DGC_OPID_MirrorPadGrad;
    const dgc_attr *m = dgc_attr_at(k->node, DGC_AT_mode);
    mirror_map mm;
    mm.sym = m && m->s && strcmp(m->s, "SYMMETRIC") == 0;
    mm.bs = grad ? &k->in[0].shape : &k->out[0].shape;
    mm.ss = grad ? &k->out[0].shape : &k->in[0].shape;
    int64_t s = 1;
    for (int d = mm.bs->rank - 1; d >= 0; d--) {
        mm.pad[d] = dgr_cpu_iat(&k->in[1], 2 * d);
        mm.sstr[d] = s;
        s *= mm.ss->dims[d];
    }
    int64_t nbig = dg_shape_numel(mm.bs);
    size_t es = dg_dtype_size(k->out[0].dtype);
    char *big = grad ? (char *)dgr_cpu_ptr(&k->in[0])
                     : (char *)dgr_cpu_ptr(&k->out[0]);
    char *small = grad ? (char *)dgr_cpu_ptr(&k->out[0])
                       : (char *)dgr_cpu_ptr(&k->in[0]);
    if (!grad) {
        for (int64_t i = 0; i < nbig; i++)
            memcpy(big + (size_t)i * es,
                   small + (size_t)mirror_off(&mm, i) * es, es);
        return DG_OK;
    }
    memset(small, 0, (size_t)s * es);
    switch (k->out[0].dtype) {
    case DG_F32: MIRROR_GRAD(float); break;
    case DG_F64: MIRROR_GRAD(double); break;
    case DG_I32: MIRROR_GRAD(int32_t); break;
    case DG_I64: MIRROR_GRAD(int64_t); break;
    default:
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "bool", k->node->name);
    }
    return DG_OK;
}
dg_status dgr_k_mirror_pad(dgr_kctx *k) { return mirror_pad(k); }
DGR_KERNEL(MirrorPad, dgr_k_mirror_pad);
dg_status dgr_k_mirror_pad_grad(dgr_kctx *k) { return mirror_pad(k); }
DGR_KERNEL(MirrorPadGrad, dgr_k_mirror_pad_grad);

/* ---- GatherNd, ScatterNd -------------------------------------------------- */

/* The index tuples of an nd gather/scatter: indices [.., K] into a tensor
 * of shape s: count tuples, each addressing a slice of `slice` elements. */
typedef struct nd_map {
    const dgr_value *ind;
    const dg_shape *s;
    int64_t k, count, slice;
} nd_map;

static void nd_map_init(nd_map *m, const dgr_value *ind, const dg_shape *s)
{
    const dg_shape *is = &ind->shape;
    m->ind = ind;
    m->s = s;
    m->k = is->dims[is->rank - 1];
    /* the tuples: indices' leading dims (K = 0: empty tuples, each the
     * whole tensor; numel / K would give 0 of them) */
    m->count = 1;
    for (int d = 0; d < is->rank - 1; d++)
        m->count *= is->dims[d];
    m->slice = 1;
    for (int d = (int)m->k; d < s->rank; d++)
        m->slice *= s->dims[d];
}

/* The first element of tuple t's slice, or -1 when out of range. */
static int64_t nd_offset(const nd_map *m, int64_t t)
{
    int64_t off = 0;
    for (int64_t j = 0; j < m->k; j++) {
        int64_t v = dgr_cpu_iat(m->ind, t * m->k + j), dim = m->s->dims[j];
        if (v < 0 || v >= dim)
            return -1;
        off = off * dim + v;
    }
    return off * m->slice;
}

static dg_status nd_range_err(dgr_kctx *k, int64_t t)
{
    return dg_err(k->err, DG_E_RUNTIME, "node '%s': index tuple %lld is out "
                  "of range", k->node->name, (long long)t);
}

dg_status dgr_k_gather_nd(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    nd_map m;
    nd_map_init(&m, &k->in[1], &k->in[0].shape);
    size_t es = dg_dtype_size(k->out[0].dtype), sl = (size_t)m.slice * es;
    const char *p = dgr_cpu_ptr(&k->in[0]);
    char *y = dgr_cpu_ptr(&k->out[0]);
    for (int64_t t = 0; t < m.count; t++) {
        int64_t off = nd_offset(&m, t);
        if (off < 0)
            return nd_range_err(k, t);
        memcpy(y + (size_t)t * sl, p + (size_t)off * es, sl);
    }
    return DG_OK;
}
DGR_KERNEL(GatherNd, dgr_k_gather_nd);

#define SCATTER_ND(T)                                                        \
    do {                                                                     \
        const T *u = dgr_cpu_ptr(&k->in[1]);                                 \
        T *y = dgr_cpu_ptr(&k->out[0]);                                      \
        for (int64_t t = 0; t < m.count; t++) {                              \
            int64_t off = nd_offset(&m, t);                                  \
            if (off < 0)                                                     \
                return nd_range_err(k, t);                                   \
            for (int64_t i = 0; i < m.slice; i++)                            \
                y[off + i] += u[t * m.slice + i];                            \
        }                                                                    \
    } while (0)

dg_status dgr_k_scatter_nd(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    nd_map m;
    nd_map_init(&m, &k->in[0], &k->out[0].shape);
    memset(dgr_cpu_ptr(&k->out[0]), 0,
           (size_t)dg_shape_numel(&k->out[0].shape) *
               dg_dtype_size(k->out[0].dtype));
    switch (k->out[0].dtype) {
    case DG_F32: SCATTER_ND(float); break;
    case DG_F64: SCATTER_ND(double); break;
    case DG_I32: SCATTER_ND(int32_t); break;
    case DG_I64: SCATTER_ND(int64_t); break;
    default:
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "bool updates", k->node->name);
    }
    return DG_OK;
}
DGR_KERNEL(ScatterNd, dgr_k_scatter_nd);

/* TensorScatterAdd / Sub (sign -1) into the copy of the tensor in y */
#define TENSOR_SCATTER(T)                                                    \
    do {                                                                     \
        const T *u = dgr_cpu_ptr(&k->in[2]);                                 \
        T *y = dgr_cpu_ptr(&k->out[0]);                                      \
        for (int64_t t = 0; t < m.count; t++) {                              \
            int64_t off = nd_offset(&m, t);                                  \
            for (int64_t i = 0; i < m.slice; i++)                            \
                y[off + i] = (T)(y[off + i] + sign * u[t * m.slice + i]);    \
        }                                                                    \
    } while (0)

/* TensorScatterUpdate/Add/Sub (tensor, indices, updates): a copy of the
 * tensor, each tuple's slice set (in tuple order: the last of a repeated
 * tuple wins, as TF's CPU kernel), added or subtracted; every tuple is
 * checked before anything is written */
dg_status dgr_k_tensor_scatter(dgr_kctx *k)
{
    nd_map m;
    nd_map_init(&m, &k->in[1], &k->in[0].shape);
    for (int64_t t = 0; t < m.count; t++)
        if (nd_offset(&m, t) < 0)
            return nd_range_err(k, t);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    size_t es = dg_dtype_size(k->out[0].dtype), sl = (size_t)m.slice * es;
    memcpy(dgr_cpu_ptr(&k->out[0]), dgr_cpu_ptr(&k->in[0]),
           (size_t)dg_shape_numel(&k->in[0].shape) * es);
    int op = k->node->op, sign = op == DGC_OPID_TensorScatterSub ? -1 : 1;
    if (op == DGC_OPID_TensorScatterUpdate) {
        char *y = dgr_cpu_ptr(&k->out[0]);
        const char *u = dgr_cpu_ptr(&k->in[2]);
        for (int64_t t = 0; t < m.count; t++)
            memcpy(y + (size_t)nd_offset(&m, t) * es, u + (size_t)t * sl, sl);
        return DG_OK;
    }
    switch (k->out[0].dtype) {
    case DG_F32: TENSOR_SCATTER(float); break;
    case DG_F64: TENSOR_SCATTER(double); break;
    case DG_I32: TENSOR_SCATTER(int32_t); break;
    case DG_I64: TENSOR_SCATTER(int64_t); break;
    default: break; /* (inference: NUM only) */
    }
    return DG_OK;
}
DGR_KERNEL(TensorScatterUpdate, dgr_k_tensor_scatter);
DGR_KERNEL(TensorScatterAdd, dgr_k_tensor_scatter);
DGR_KERNEL(TensorScatterSub, dgr_k_tensor_scatter);

/* ---- TopKV2 ------------------------------------------------------------------ */

/* Each row's k largest, largest first, an equal value at a lower index
 * first (TF's order): a heap of the k best seen so far, worst at its root
 * (O(len log k) a row, as TF's CPU kernel), then sorted by popping.  NaNs
 * count as larger than numbers and equal to each other; TF's own order of
 * rows with NaNs is no total order (top_k([1, nan, 3, nan], 3) is
 * [nan, 3, 1] there), so theirs may differ.  Indices are written as the
 * output's dtype (index_type int32 or int64). */
#define TK_BEFORE(row, i, j)                                                 \
    (((row)[i] != (row)[i]) != ((row)[j] != (row)[j])                         \
         ? (row)[i] != (row)[i]                                              \
         : ((row)[i] == (row)[i] && (row)[i] != (row)[j])                    \
               ? (row)[i] > (row)[j]                                         \
               : (i) < (j))

/* restore the heap below position p (h entries; the root is the entry
 * every other is TK_BEFORE) */
#define TK_SIFT(row, heap, h, p)                                             \
    do {                                                                     \
        int64_t at_ = (p);                                                   \
        for (;;) {                                                           \
            int64_t c_ = 2 * at_ + 1, w_ = at_;                              \
            if (c_ < (h) && TK_BEFORE(row, heap[w_], heap[c_]))              \
                w_ = c_;                                                     \
            if (c_ + 1 < (h) && TK_BEFORE(row, heap[w_], heap[c_ + 1]))      \
                w_ = c_ + 1;                                                 \
            if (w_ == at_)                                                   \
                break;                                                       \
            int64_t t_ = heap[at_];                                          \
            heap[at_] = heap[w_];                                            \
            heap[w_] = t_;                                                   \
            at_ = w_;                                                        \
        }                                                                    \
    } while (0)

#define TOPK(T)                                                              \
    do {                                                                     \
        const T *x = dgr_cpu_ptr(&k->in[0]);                                 \
        T *v = dgr_cpu_ptr(&k->out[0]);                                      \
        for (int64_t r = 0; r < rows; r++) {                                 \
            const T *row = x + r * len;                                      \
            int64_t h = 0;                                                   \
            for (int64_t i = 0; i < len; i++) {                              \
                if (h < kk) { /* sift up */                                  \
                    int64_t at = h++;                                        \
                    heap[at] = i;                                            \
                    while (at > 0 && TK_BEFORE(row, heap[(at - 1) / 2],      \
                                               heap[at])) {                  \
                        int64_t up = (at - 1) / 2, t = heap[up];             \
                        heap[up] = heap[at];                                 \
                        heap[at] = t;                                        \
                        at = up;                                             \
                    }                                                        \
                } else if (TK_BEFORE(row, i, heap[0])) {                     \
                    heap[0] = i;                                             \
                    TK_SIFT(row, heap, h, 0);                                \
                }                                                            \
            }                                                                \
            for (int64_t q = h - 1; q >= 0; q--) { /* worst last */          \
                v[r * kk + q] = row[heap[0]];                                \
                dgr_cpu_iput(&k->out[1], r * kk + q, heap[0]);               \
                heap[0] = heap[q];                                           \
                TK_SIFT(row, heap, q, 0);                                    \
            }                                                                \
        }                                                                    \
    } while (0)

dg_status dgr_k_topk(dgr_kctx *k)
{
    const dg_shape *s = &k->in[0].shape;
    int64_t kk = dgr_cpu_iat(&k->in[1], 0), len = s->dims[s->rank - 1];
    if (kk < 0 || kk > len)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': k %lld is out of "
                      "range for rows of %lld", k->node->name, (long long)kk,
                      (long long)len);
    dg_status st;
    if ((st = dgr_kctx_alloc_output(k, 0)) || (st = dgr_kctx_alloc_output(k, 1)))
        return st;
    if (kk == 0)
        return DG_OK;
    int64_t rows = dg_shape_numel(s) / len;
    int64_t *heap = dg_malloc((size_t)kk * sizeof *heap);
    if (!heap)
        return dg_err_nomem(k->err, "TopKV2");
    switch (k->in[0].dtype) {
    case DG_F32: TOPK(float); break;
    case DG_F64: TOPK(double); break;
    case DG_I32: TOPK(int32_t); break;
    case DG_I64: TOPK(int64_t); break;
    default: break;
    }
    dg_free(heap);
    return DG_OK;
}
DGR_KERNEL(TopKV2, dgr_k_topk);
