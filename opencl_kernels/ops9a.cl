/* ops9a.cl -- OpenCL kernels of the ops9a ops (issue 22): the inverse
 * hyperbolic functions (dgk_unary_<Op>: the generic unary launcher) and
 * ClipByValue and CheckNumerics (their own launches, cl_kernels_ops9a.c).
 * One work-item per element, guarded by n.  Compiled per dtype with
 * -DT=float|double. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define O9UNARY(name, expr)                                                  \
__kernel void name(__global const T *x, __global T *y, long n)              \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i < n) { T v = x[i]; y[i] = (expr); }                                \
}
O9UNARY(dgk_unary_Asinh, asinh(v))
O9UNARY(dgk_unary_Acosh, acosh(v))
O9UNARY(dgk_unary_Atanh, atanh(v))

/* y = max(min(t, hi), lo) in TF's order (lo wins where hi < lo); a
 * bound's step 0: a scalar, 1: of t's shape (NaN in t stays NaN: both
 * comparisons are false) */
__kernel void clip_by_value(__global const T *t, __global const T *lo,
                            __global const T *hi, __global T *y, long n,
                            long sl, long sh)
{
    long i = get_global_id(0);
    if (i < n) {
        T v = t[i], l = lo[i * sl], h = hi[i * sh];
        v = v > h ? h : v;
        y[i] = v < l ? l : v;
    }
}

/* CheckNumerics: flag[0] = 0 (one work-item), then each element ORs 1 into
 * it for a NaN, 2 for an Inf (atomics: no race among the work-items) */
__kernel void check_numerics_init(__global int *flag)
{
    if (get_global_id(0) == 0)
        flag[0] = 0;
}

__kernel void check_numerics(__global const T *x, long n,
                             __global int *flag)
{
    long i = get_global_id(0);
    if (i < n) {
        T v = x[i];
        if (isnan(v))
            atomic_or(flag, 1);
        else if (isinf(v))
            atomic_or(flag, 2);
    }
}
