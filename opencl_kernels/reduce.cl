/* reduce.cl -- Sum / Mean / Max / Prod / Min over any set of axes, SumTo,
 * MaxGrad and ArgMax.  The host splits the input's (collapsed) dims into kept dims (in
 * order; output index o enumerates them in C order) and reduced dims, each
 * with the input strides.  reduce_wg uses one work-group per output and a
 * tree reduction in local memory (local size a power of two); reduce_thread
 * one work-item per output for short reductions. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define OP_SUM 0
#define OP_MAX 1
#define OP_PROD 2
#define OP_MIN 3

inline long nd_off(long i, int rank, long8 d8, long8 s8)
{
    long d[8], s[8];
    vstore8(d8, 0, d);
    vstore8(s8, 0, s);
    long o = 0;
    for (int k = rank - 1; k >= 0; k--) {
        o += (i % d[k]) * s[k];
        i /= d[k];
    }
    return o;
}

/* the identity of op (what an empty reduction gives) */
inline T rinit(int op)
{
    return op == OP_MAX ? (T)(-INFINITY) : op == OP_MIN ? (T)INFINITY
                                         : op == OP_PROD ? (T)1 : (T)0;
}

/* Max and Min propagate NaN (TF) */
inline T comb(int op, T a, T b)
{
    if (op == OP_MAX)
        return (a >= b || isnan(a)) ? a : b;
    if (op == OP_MIN)
        return (a <= b || isnan(a)) ? a : b;
    if (op == OP_PROD)
        return a * b;
    return a + b;
}

__kernel void reduce_wg(__global const T *x, __global T *y, long n_out,
                        long m, int kr, long8 kd, long8 ks, int rr, long8 rd,
                        long8 rs, int op, T scale, __local T *scratch)
{
    long o = get_group_id(0);
    int lid = get_local_id(0);
    int ls = get_local_size(0);
    long base = nd_off(o, kr, kd, ks);
    T acc = rinit(op);
    if (rr == 1) {
        long st = rs.s0;
        for (long r = lid; r < m; r += ls)
            acc = comb(op, acc, x[base + r * st]);
    } else {
        for (long r = lid; r < m; r += ls)
            acc = comb(op, acc, x[base + nd_off(r, rr, rd, rs)]);
    }
    scratch[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = ls / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] = comb(op, scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && o < n_out)
        y[o] = scratch[0] * scale;
}

__kernel void reduce_thread(__global const T *x, __global T *y, long n_out,
                            long m, int kr, long8 kd, long8 ks, int rr,
                            long8 rd, long8 rs, int op, T scale)
{
    long o = get_global_id(0);
    if (o >= n_out) return;
    long base = nd_off(o, kr, kd, ks);
    T acc = rinit(op);
    for (long r = 0; r < m; r++)
        acc = comb(op, acc, x[base + nd_off(r, rr, rd, rs)]);
    y[o] = acc * scale;
}

/* dx = dy routed to the max, shared equally among ties (TF). */
__kernel void max_grad(__global const T *x, __global const T *y,
                       __global const T *dy, __global T *dx, long n_out,
                       long m, int kr, long8 kd, long8 ks, int rr, long8 rd,
                       long8 rs)
{
    long o = get_global_id(0);
    if (o >= n_out) return;
    long base = nd_off(o, kr, kd, ks);
    T yv = y[o];
    long cnt = 0;
    for (long r = 0; r < m; r++)
        cnt += x[base + nd_off(r, rr, rd, rs)] == yv;
    T g = cnt ? dy[o] / (T)cnt : (T)0;
    for (long r = 0; r < m; r++) {
        long off = base + nd_off(r, rr, rd, rs);
        dx[off] = x[off] == yv ? g : (T)0;
    }
}

/* y[o*inner+j] = argmax over the axis of x[o, :, j] (first max); the
 * index type is IDX (long or int) */
#define ARGBEST(name, IDX, BETTER)                                           \
__kernel void name(__global const T *x, __global IDX *y, long outer, long n, \
                   long inner)                                               \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i >= outer * inner) return;                                          \
    long o = i / inner, j = i % inner;                                       \
    __global const T *p = x + o * n * inner + j;                             \
    T best = p[0];                                                           \
    long bi = 0;                                                             \
    for (long k = 1; k < n; k++) {                                           \
        T v = p[k * inner];                                                  \
        if (v BETTER best || (isnan(v) && !isnan(best))) {                   \
            best = v;                                                        \
            bi = k;                                                          \
        }                                                                    \
    }                                                                        \
    y[i] = (IDX)bi;                                                          \
}

ARGBEST(argmax, long, >)
ARGBEST(argmax_i32, int, >)
ARGBEST(argmin, long, <)
ARGBEST(argmin_i32, int, <)
