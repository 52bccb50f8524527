/*
 * kernels_cpu_ops10b.c -- CPU kernels of the ops10b special functions
 * (issue 22): Lgamma, Digamma, Erfinv, Ndtri, BesselI0e, BesselI1e
 * (unary) and Polygamma, Zeta, Igamma, Igammac (broadcasting), with TF's
 * values: Eigen's algorithms (the Cephes ones), evaluated in double for
 * float32 and float64 alike.
 */
#include "kernels_cpu.h"
#include "special_math.h"
#include "attr_get.h"

#include <math.h>

ZUNF(lgamma, dgr_sf_lgammaf, lgamma)
DGR_KERNEL(Lgamma, dgr_k_lgamma);
ZUNF(digamma, dgr_sf_digammaf, dgr_sf_digamma)
DGR_KERNEL(Digamma, dgr_k_digamma);
ZUNF(erfinv, dgr_sf_erfinvf, dgr_sf_erfinv)
DGR_KERNEL(Erfinv, dgr_k_erfinv);
ZUNF(ndtri, dgr_sf_ndtrif, dgr_sf_ndtri)
DGR_KERNEL(Ndtri, dgr_k_ndtri);
ZUNF(bessel_i0e, dgr_sf_i0ef, dgr_sf_i0e)
DGR_KERNEL(BesselI0e, dgr_k_bessel_i0e);
ZUNF(bessel_i1e, dgr_sf_i1ef, dgr_sf_i1e)
DGR_KERNEL(BesselI1e, dgr_k_bessel_i1e);

/* the broadcasting ones: float32 through double, rounded once */
#define SFBIN(OP, F)                                                         \
    ZBIN(OP##_f32, float, (float)F((double)x, (double)y))                    \
    ZBIN(OP##_f64, double, F(x, y))                                          \
    BINF(OP)                                                                 \
    dg_status dgr_k_##OP(dgr_kctx *k) { return dgr_cpu_binary(k, OP##_fns); }
SFBIN(polygamma, dgr_sf_polygamma)
DGR_KERNEL(Polygamma, dgr_k_polygamma);
SFBIN(zeta, dgr_sf_zeta)
DGR_KERNEL(Zeta, dgr_k_zeta);
SFBIN(igamma, dgr_sf_igamma)
DGR_KERNEL(Igamma, dgr_k_igamma);
SFBIN(igammac, dgr_sf_igammac)
DGR_KERNEL(Igammac, dgr_k_igammac);

/* ---- ApproximateEqual: |x - y| < tolerance, bool ------------------------ */

dg_status dgr_k_approximate_equal(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    double tol = dgc_attr_f(k->node, DGC_AT_tolerance);
    uint8_t *y = dgr_cpu_ptr(&k->out[0]);
    if (k->in[0].dtype == DG_F32) {
        const float *a = dgr_cpu_ptr(&k->in[0]), *b = dgr_cpu_ptr(&k->in[1]);
        float t = (float)tol;
        for (int64_t i = 0; i < n; i++)
            y[i] = fabsf(a[i] - b[i]) < t;
    } else {
        const double *a = dgr_cpu_ptr(&k->in[0]), *b = dgr_cpu_ptr(&k->in[1]);
        for (int64_t i = 0; i < n; i++)
            y[i] = fabs(a[i] - b[i]) < tol;
    }
    return DG_OK;
}
DGR_KERNEL(ApproximateEqual, dgr_k_approximate_equal);

/* ---- the bitwise ops: int32 / int64, broadcasting ------------------------ */

/* an integer binary table OP##_fns of OP##_i32 and OP##_i64 and its
 * kernel */
#define IBIN(OP, EXPR32, EXPR64)                                             \
    ZBIN(OP##_i32, int32_t, EXPR32)                                          \
    ZBIN(OP##_i64, int64_t, EXPR64)                                          \
    static const dgr_cpu_bin_fn OP##_fns[DG_DTYPE_COUNT] = {                 \
        NULL, NULL, OP##_i32, OP##_i64, NULL};                               \
    dg_status dgr_k_##OP(dgr_kctx *k) { return dgr_cpu_binary(k, OP##_fns); }
IBIN(bitwise_and, x & y, x & y)
DGR_KERNEL(BitwiseAnd, dgr_k_bitwise_and);
IBIN(bitwise_or, x | y, x | y)
DGR_KERNEL(BitwiseOr, dgr_k_bitwise_or);
IBIN(bitwise_xor, x ^ y, x ^ y)
DGR_KERNEL(BitwiseXor, dgr_k_bitwise_xor);
/* TF's shifts: y clamped to [0, bits - 1]; the left shift in unsigned (a
 * negative x's bits, as TF's two's complement), the right one arithmetic */
#define CLAMP_SHIFT(y, bits) ((y) < 0 ? 0 : (y) > (bits) - 1 ? (bits) - 1 : (y))
IBIN(left_shift, (int32_t)((uint32_t)x << CLAMP_SHIFT(y, 32)),
     (int64_t)((uint64_t)x << CLAMP_SHIFT(y, 64)))
DGR_KERNEL(LeftShift, dgr_k_left_shift);
IBIN(right_shift, x >> CLAMP_SHIFT(y, 32), x >> CLAMP_SHIFT(y, 64))
DGR_KERNEL(RightShift, dgr_k_right_shift);

ZUN(invert_i32, int32_t, ~x)
ZUN(invert_i64, int64_t, ~x)
dg_status dgr_k_invert(dgr_kctx *k)
{
    static const dgr_cpu_un_fn fns[DG_DTYPE_COUNT] = {NULL, NULL, invert_i32,
                                                      invert_i64, NULL};
    return dgr_cpu_unary(k, fns);
}
DGR_KERNEL(Invert, dgr_k_invert);
