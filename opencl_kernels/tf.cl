/* tf.cl -- kernels of the TF graph ops of issue 10 that are no elementwise
 * math: Tile (a gather with wrap-around), ConcatV2 (one strided block copy
 * per input), GatherV2 (row copies by index) and L2Loss (a two-stage
 * work-group tree reduction in local memory).  Compiled once per dtype
 * with -DT=float|double. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* y[i] = x[coords of i modulo the input dims]: odims / xdims / xstr of the
 * (rank <= 8) output, input and input strides. */
__kernel void tile(__global const T *x, __global T *y, long n, int rank,
                   long8 od8, long8 xd8, long8 xs8)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long od[8], xd[8], xs[8];
    vstore8(od8, 0, od);
    vstore8(xd8, 0, xd);
    vstore8(xs8, 0, xs);
    long q = i, off = 0;
    for (int k = rank - 1; k >= 0; k--) {
        long c = q % od[k];
        q /= od[k];
        off += (c % xd[k]) * xs[k];
    }
    y[i] = x[off];
}

/* One input of a concatenation: rows of `row` elements per outer index,
 * written at column `at` of output rows of `orow` elements.  2-D range:
 * dim 0 over the row (coalesced), dim 1 over outer. */
__kernel void concat_copy(__global const T *x, __global T *y, long outer,
                          long row, long orow, long at)
{
    long c = get_global_id(0), a = get_global_id(1);
    if (c < row && a < outer)
        y[a * orow + at + c] = x[a * row + c];
}

/* GatherV2: y[a, j, c] = x[a, idx[(a / nbo) * ni + j], c] (outer a, ni
 * indices of a batch, rows of `inner`; nbo rows a per batch of the
 * batch_dims, nbo = outer without them); dim 0 over c (coalesced), dim 1
 * over (a, j).  Out-of-range indices give 0 (the host checks them when it
 * can). */
#define GATHER(name, IDX)                                                    \
__kernel void name(__global const T *x, __global const IDX *idx,            \
                   __global T *y, long outer, long ni, long dim, long inner, \
                   long nbo)                                                 \
{                                                                            \
    long c = get_global_id(0), aj = get_global_id(1);                        \
    if (c >= inner || aj >= outer * ni) return;                              \
    long a = aj / ni, j = aj % ni;                                           \
    long v = (long)idx[(a / nbo) * ni + j];                                  \
    y[aj * inner + c] = (v >= 0 && v < dim) ? x[(a * dim + v) * inner + c]   \
                                            : (T)0;                          \
}
GATHER(gather_rows_i32, int)
GATHER(gather_rows_i64, long)

/* L2Loss stage 1: each work-group sums the squares of a strided share of x
 * into part[group]; stage 2 (one group) sums the parts and halves. */
__kernel void l2_partial(__global const T *x, __global T *part, long n,
                         __local T *s)
{
    int lid = get_local_id(0), ls = get_local_size(0);
    long stride = (long)get_global_size(0);
    T acc = 0;
    for (long i = get_global_id(0); i < n; i += stride) {
        T v = x[i];
        acc += v * v;
    }
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = ls / 2; h > 0; h >>= 1) {
        if (lid < h)
            s[lid] += s[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        part[get_group_id(0)] = s[0];
}

__kernel void l2_final(__global const T *part, __global T *y, long n,
                       __local T *s)
{
    int lid = get_local_id(0), ls = get_local_size(0);
    T acc = 0;
    for (long i = lid; i < n; i += ls)
        acc += part[i];
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = ls / 2; h > 0; h >>= 1) {
        if (lid < h)
            s[lid] += s[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        y[0] = s[0] / (T)2;
}

/* A strided view of x (StridedSlice, Slice, Split, Unpack): output index i
 * enumerates len8 (rank dims, C order); the input offset is base + sum of
 * coordinate * step8 (step = slice stride * input stride). */
__kernel void slice_nd(__global const T *x, __global T *y, long n, int rank,
                       long8 len8, long8 step8, long base)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long len[8], step[8];
    vstore8(len8, 0, len);
    vstore8(step8, 0, step);
    long q = i, off = base;
    for (int k = rank - 1; k >= 0; k--) {
        off += (q % len[k]) * step[k];
        q /= len[k];
    }
    y[i] = x[off];
}

/* Pad: y[i] = x[coords - lo] inside, v outside (odims, lo8, xdims). */
__kernel void pad_nd(__global const T *x, __global T *y, long n, int rank,
                     long8 od8, long8 lo8, long8 xd8, T v)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long od[8], lo[8], xd[8];
    vstore8(od8, 0, od);
    vstore8(lo8, 0, lo);
    vstore8(xd8, 0, xd);
    long q = i, off = 0, s = 1;
    int in = 1;
    for (int k = rank - 1; k >= 0; k--) {
        long c = q % od[k] - lo[k];
        q /= od[k];
        in = in && c >= 0 && c < xd[k];
        off += c * s;
        s *= xd[k];
    }
    y[i] = in ? x[off] : v;
}

/* LogSoftmax over rows of C: one work-group per row, max and sum of
 * exponentials by tree reductions in local memory. */
__kernel void log_softmax(__global const T *x, __global T *y, long C,
                          __local T *s)
{
    long r = get_group_id(0);
    int lid = get_local_id(0), ls = get_local_size(0);
    __global const T *xr = x + r * C;
    T m = -INFINITY;
    for (long c = lid; c < C; c += ls)
        m = fmax(m, xr[c]);
    s[lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = ls / 2; h > 0; h >>= 1) {
        if (lid < h)
            s[lid] = fmax(s[lid], s[lid + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    T acc = 0;
    for (long c = lid; c < C; c += ls)
        acc += exp(xr[c] - m);
    s[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int h = ls / 2; h > 0; h >>= 1) {
        if (lid < h)
            s[lid] += s[lid + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T lse = m + log(s[0]);
    for (long c = lid; c < C; c += ls)
        y[r * C + c] = xr[c] - lse;
}
