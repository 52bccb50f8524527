/* nn.cl -- row-wise ops over the last axis (Softmax, the cross-entropy ops,
 * SoftmaxGrad) with one work-group per row, and batch normalisation over all
 * but the last axis with one work-group per channel.  Local sizes are powers
 * of two; reductions go through local memory. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

inline T wg_sum(__local T *s, T v)
{
    int lid = get_local_id(0), ls = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = ls / 2; k > 0; k >>= 1) {
        if (lid < k) s[lid] += s[lid + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T r = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

inline T wg_max(__local T *s, T v)
{
    int lid = get_local_id(0), ls = get_local_size(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    s[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = ls / 2; k > 0; k >>= 1) {
        if (lid < k) s[lid] = fmax(s[lid], s[lid + k]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T r = s[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

inline T row_max(__global const T *x, long C, __local T *s)
{
    T m = (T)(-INFINITY);
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        m = fmax(m, x[j]);
    return wg_max(s, m);
}

__kernel void softmax(__global const T *x, __global T *y, long C,
                      __local T *s)
{
    long r = get_group_id(0);
    x += r * C;
    y += r * C;
    T m = row_max(x, C, s);
    T sum = 0;
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        sum += exp(x[j] - m);
    sum = wg_sum(s, sum);
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        y[j] = exp(x[j] - m) / sum;
}

__kernel void xent(__global const T *x, __global const T *lab,
                   __global T *loss, __global T *bp, long C, __local T *s)
{
    long r = get_group_id(0);
    x += r * C;
    lab += r * C;
    bp += r * C;
    T m = row_max(x, C, s);
    T sum = 0;
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        sum += exp(x[j] - m);
    sum = wg_sum(s, sum);
    T lse = m + log(sum);
    T l = 0;
    for (long j = get_local_id(0); j < C; j += get_local_size(0)) {
        l += lab[j] * (lse - x[j]);
        bp[j] = exp(x[j] - lse) - lab[j];
    }
    l = wg_sum(s, l);
    if (get_local_id(0) == 0) loss[r] = l;
}

/* labels int32 (is64 0) or int64 (is64 1, read as little-endian words) */
__kernel void sparse_xent(__global const T *x, __global const int *lab,
                          int is64, __global T *loss, __global T *bp, long C,
                          __local T *s)
{
    long r = get_group_id(0);
    x += r * C;
    bp += r * C;
    long label;
    if (is64) {
        __global const long *l64 = (__global const long *)lab;
        label = l64[r];
    } else {
        label = lab[r];
    }
    T m = row_max(x, C, s);
    T sum = 0;
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        sum += exp(x[j] - m);
    sum = wg_sum(s, sum);
    T lse = m + log(sum);
    int ok = label >= 0 && label < C;
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        bp[j] = ok ? exp(x[j] - lse) - (j == label ? (T)1 : (T)0) : (T)NAN;
    if (get_local_id(0) == 0)
        loss[r] = ok ? lse - x[label] : (T)NAN;
}

/* (y, dy) -> (dy - sum(dy*y)) * y */
__kernel void softmax_grad(__global const T *y, __global const T *dy,
                           __global T *dx, long C, __local T *s)
{
    long r = get_group_id(0);
    y += r * C;
    dy += r * C;
    dx += r * C;
    T acc = 0;
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        acc += dy[j] * y[j];
    acc = wg_sum(s, acc);
    for (long j = get_local_id(0); j < C; j += get_local_size(0))
        dx[j] = (dy[j] - acc) * y[j];
}

/* per channel c (work-group c): mean and (biased) variance over rows */
__kernel void bn_stats(__global const T *x, __global T *mean,
                       __global T *var, long rows, long C, __local T *s)
{
    long c = get_group_id(0);
    T acc = 0;
    for (long r = get_local_id(0); r < rows; r += get_local_size(0))
        acc += x[r * C + c];
    T mu = wg_sum(s, acc) / (T)rows;
    acc = 0;
    for (long r = get_local_id(0); r < rows; r += get_local_size(0)) {
        T d = x[r * C + c] - mu;
        acc += d * d;
    }
    T v = wg_sum(s, acc) / (T)rows;
    if (get_local_id(0) == 0) {
        mean[c] = mu;
        var[c] = v;
    }
}

__kernel void bn_apply(__global const T *x, __global const T *scale,
                       __global const T *offset, __global const T *mean,
                       __global const T *var, __global T *y, long n, long C,
                       T eps)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = i % C;
    y[i] = (x[i] - mean[c]) * rsqrt(var[c] + eps) * scale[c] + offset[c];
}

__kernel void bn_grad_reduce(__global const T *dy, __global const T *x,
                             __global const T *mean, __global const T *var,
                             __global T *dscale, __global T *doffset,
                             long rows, long C, T eps, __local T *s)
{
    long c = get_group_id(0);
    T rstd = rsqrt(var[c] + eps), mu = mean[c];
    T a = 0, b = 0;
    for (long r = get_local_id(0); r < rows; r += get_local_size(0)) {
        T g = dy[r * C + c];
        a += g;
        b += g * (x[r * C + c] - mu) * rstd;
    }
    a = wg_sum(s, a);
    b = wg_sum(s, b);
    if (get_local_id(0) == 0) {
        doffset[c] = a;
        dscale[c] = b;
    }
}

__kernel void bn_grad_apply(__global const T *dy, __global const T *x,
                            __global const T *scale, __global const T *mean,
                            __global const T *var, __global const T *dscale,
                            __global const T *doffset, __global T *dx, long n,
                            long C, long rows, T eps)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = i % C;
    T rstd = rsqrt(var[c] + eps);
    T xhat = (x[i] - mean[c]) * rstd;
    dx[i] = scale[c] * rstd / (T)rows *
            ((T)rows * dy[i] - doffset[c] - xhat * dscale[c]);
}
