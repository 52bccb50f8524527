/*
 * ops10c.cl -- OpenCL C of issue 22's ops10c group (launches in
 * runtime/opencl/cl_kernels_ops10c.c).  One work-item per output element;
 * T is the build's float type.
 */

/* Diag: y [n, n] (x's n elements flat) with x on the diagonal, else 0 */
__kernel void o10_diag(__global const T *x, __global T *y, long nn, long n)
{
    long i = get_global_id(0);
    if (i >= nn) return;
    long r = i / n;
    y[i] = r == i % n ? x[r] : (T)0;
}

/* DiagPart: y[i] = x[i, i] of x [n, n] (flat) */
__kernel void o10_diag_part(__global const T *x, __global T *y, long n)
{
    long i = get_global_id(0);
    if (i >= n) return;
    y[i] = x[i * n + i];
}
