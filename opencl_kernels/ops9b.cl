/*
 * ops9b.cl -- OpenCL C of issue 22's ops9b group (structure and matrix
 * ops; launches in runtime/opencl/cl_kernels_ops9b.c).  One work-item per
 * output element; T is the build's float type.
 */

/* MatrixBandPart: x[..., r, c] inside the band (lo / up < 0: unbounded),
 * else 0 */
__kernel void o9_band_part(__global const T *x, __global T *y, long n,
                           long rows, long cols, long lo, long up)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = i % cols, r = (i / cols) % rows;
    y[i] = ((lo < 0 || r - c <= lo) && (up < 0 || c - r <= up)) ? x[i]
                                                                : (T)0;
}

/* Roll: y[i] = x[i's index minus sh along each dim, mod the dim]
 * (sh[d] in [0, dims[d])) */
__kernel void o9_roll(__global const T *x, __global T *y, long n, int rank,
                      long8 d8, long8 s8)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long d[8], sh[8];
    vstore8(d8, 0, d);
    vstore8(s8, 0, sh);
    long rem = i, src = 0, stride = 1;
    for (int q = rank - 1; q >= 0; q--) {
        long c = rem % d[q];
        rem /= d[q];
        src += ((c - sh[q] + d[q]) % d[q]) * stride;
        stride *= d[q];
    }
    y[i] = x[src];
}

/* ReverseSequence: y[i] = x[i with its seq_dim coordinate q mirrored to
 * len - 1 - q] where q < len = L[i's batch_dim coordinate], else x[i]
 * (L's entries checked on the host: in [0, sdim]) */
#define REVERSE_SEQUENCE(NAME, L)                                            \
__kernel void NAME(__global const T *x, __global const L *lens,             \
                   __global T *y, long n, long sdim, long sstride,          \
                   long bdim, long bstride)                                 \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i >= n) return;                                                      \
    long q = (i / sstride) % sdim, len = lens[(i / bstride) % bdim];         \
    y[i] = x[q < len ? i + (len - 1 - 2 * q) * sstride : i];                 \
}
REVERSE_SEQUENCE(o9_reverse_sequence_i32, int)
REVERSE_SEQUENCE(o9_reverse_sequence_i64, long)
