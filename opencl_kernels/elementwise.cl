/* elementwise.cl -- unary and binary elementwise ops (NumPy broadcasting
 * through per-dimension strides), fills, casts and the grad-pair ops.
 * Compiled once per dtype with -DT=float|double -DDG_F64=0|1.  Every kernel
 * takes its element count and checks bounds, so global sizes may be rounded
 * up to the work-group size. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define HAS_FP64 1
#endif

#define UNARY(name, expr)                                                    \
__kernel void name(__global const T *x, __global T *y, long n)              \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i < n) { T v = x[i]; y[i] = (expr); }                                \
}

UNARY(u_neg, -v)
UNARY(u_abs, fabs(v))
UNARY(u_sin, sin(v))
UNARY(u_cos, cos(v))
UNARY(u_exp, exp(v))
UNARY(u_log, log(v))
UNARY(u_sqrt, sqrt(v))
UNARY(u_square, v * v)
UNARY(u_tanh, tanh(v))
UNARY(u_sigmoid, (T)1 / ((T)1 + exp(-v)))
UNARY(u_relu, v > (T)0 || isnan(v) ? v : (T)0) /* NaN stays (TF) */
UNARY(u_copy, v)

/* Offsets of flat output index i in a and b for a broadcast of rank dims:
 * dims and per-operand strides (0 on broadcast dims). */
inline void bc_offsets(long i, int rank, long8 d8, long8 sa8, long8 sb8,
                       long *oa, long *ob)
{
    long d[8], sa[8], sb[8];
    vstore8(d8, 0, d);
    vstore8(sa8, 0, sa);
    vstore8(sb8, 0, sb);
    long a = 0, b = 0;
    for (int k = rank - 1; k >= 0; k--) {
        long c = i % d[k];
        i /= d[k];
        a += c * sa[k];
        b += c * sb[k];
    }
    *oa = a;
    *ob = b;
}

/* mode 0: same shape, 1: a is a scalar, 2: b is a scalar */
#define BINARY(name, OUT, expr)                                              \
__kernel void name##_flat(__global const T *pa, __global const T *pb,       \
                          __global OUT *y, long n, int mode)                 \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i >= n) return;                                                      \
    T a = pa[mode == 1 ? 0 : i];                                             \
    T b = pb[mode == 2 ? 0 : i];                                             \
    y[i] = (expr);                                                           \
}                                                                            \
__kernel void name##_bc(__global const T *pa, __global const T *pb,         \
                        __global OUT *y, long n, int rank, long8 dims,       \
                        long8 sa, long8 sb)                                  \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i >= n) return;                                                      \
    long oa, ob;                                                             \
    bc_offsets(i, rank, dims, sa, sb, &oa, &ob);                             \
    T a = pa[oa];                                                            \
    T b = pb[ob];                                                            \
    y[i] = (expr);                                                           \
}

BINARY(b_add, T, a + b)
BINARY(b_sub, T, a - b)
BINARY(b_mul, T, a * b)
BINARY(b_div, T, a / b)
BINARY(b_pow, T, pow(a, b))
BINARY(b_max, T, a >= b || isnan(a) ? a : b)
BINARY(b_min, T, a <= b || isnan(a) ? a : b)
BINARY(b_equal, uchar, a == b ? (uchar)1 : (uchar)0)
BINARY(b_atan2, T, atan2(a, b))
/* (dy, x) */
BINARY(b_relu_grad, T, b > (T)0 ? a : (T)0)
/* (y, dy) */
BINARY(b_sigmoid_grad, T, b * a * ((T)1 - a))
BINARY(b_tanh_grad, T, b * ((T)1 - a * a))

__kernel void fill(__global T *y, long n, T v)
{
    long i = get_global_id(0);
    if (i < n) y[i] = v;
}

/* y[i] = x[offset of i] * scale: transposes (istr = input strides in output
 * order) and broadcasts (istr 0 on broadcast dims). */
__kernel void gather_nd(__global const T *x, __global T *y, long n, int rank,
                        long8 odims, long8 istr, T scale)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long o, unused;
    bc_offsets(i, rank, odims, istr, istr, &o, &unused);
    y[i] = x[o] * scale;
}

/* 2-D transpose [rows, cols] -> [cols, rows] through a local tile. */
#define TILE 16
__kernel void transpose_2d(__global const T *x, __global T *y, long rows,
                           long cols)
{
    __local T tile[TILE][TILE + 1];
    long c = get_group_id(0) * TILE + get_local_id(0);
    long r = get_group_id(1) * TILE + get_local_id(1);
    if (r < rows && c < cols)
        tile[get_local_id(1)][get_local_id(0)] = x[r * cols + c];
    barrier(CLK_LOCAL_MEM_FENCE);
    long oc = get_group_id(1) * TILE + get_local_id(0); /* old row */
    long orow = get_group_id(0) * TILE + get_local_id(1); /* old col */
    if (orow < cols && oc < rows)
        y[orow * rows + oc] = tile[get_local_id(0)][get_local_id(1)];
}

__kernel void cast_f32(__global const T *x, __global float *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = (float)x[i];
}
#ifdef HAS_FP64
__kernel void cast_f64(__global const T *x, __global double *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = (double)x[i];
}
#endif
__kernel void cast_i32(__global const T *x, __global int *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = (int)x[i];
}
__kernel void cast_i64(__global const T *x, __global long *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = (long)x[i];
}
__kernel void cast_bool(__global const T *x, __global uchar *y, long n)
{
    long i = get_global_id(0);
    if (i < n) y[i] = x[i] != (T)0 ? (uchar)1 : (uchar)0;
}

/* ---- TF graph ops (issue 10) ---------------------------------------------- */
UNARY(u_rsqrt, rsqrt(v))
UNARY(u_reciprocal, (T)1 / v)
UNARY(u_relu6, v > (T)0 ? (v < (T)6 ? v : (T)6) : isnan(v) ? v : (T)0)
/* FloorDiv is the floor of the correctly rounded quotient, as on the CPU
 * (and in TF).  OpenCL lets float division be 2.5 ulp off unless the
 * program is built with -cl-fp32-correctly-rounded-divide-sqrt (dgrun
 * does where the device can: DG_CR_DIV), and the floor turns such an ulp
 * into 1 (seen on an NVIDIA H100: 0 instead of 1).  Elsewhere the quotient
 * is taken in double where the device has it: a double quotient rounded
 * to float is the correctly rounded float quotient (53 >= 2 * 24 + 2). */
#if DG_F64 || defined(DG_CR_DIV) || !defined(HAS_FP64)
BINARY(b_floor_div, T, floor(a / b))
#else
BINARY(b_floor_div, T, floor((T)((double)a / (double)b)))
#endif
BINARY(b_floor_mod, T, (fmod(a, b) != (T)0 && ((fmod(a, b) < (T)0) != (b < (T)0)))
                       ? fmod(a, b) + b : fmod(a, b))
BINARY(b_less, uchar, a < b ? (uchar)1 : (uchar)0)
BINARY(b_less_equal, uchar, a <= b ? (uchar)1 : (uchar)0)
BINARY(b_greater, uchar, a > b ? (uchar)1 : (uchar)0)
BINARY(b_greater_equal, uchar, a >= b ? (uchar)1 : (uchar)0)
BINARY(b_not_equal, uchar, a != b ? (uchar)1 : (uchar)0)
/* (dy, x) */
BINARY(b_relu6_grad, T, b > (T)0 && b < (T)6 ? a : (T)0)
/* (y, dy) */
BINARY(b_rsqrt_grad, T, a * a * a * b * (T)(-0.5))
BINARY(b_reciprocal_grad, T, -(a * a) * b)
