/* data.cl -- OpenCL kernels of the data-movement ops TF runs on GPUs
 * (issue 22): Fill, GatherNd, MirrorPadGrad, DynamicStitch, Where,
 * DynamicPartition and TopKV2.  Every output element is written by exactly
 * one work-item (DynamicStitch picks each row's writer with atomic_max
 * first: the last (input, position) naming the row, as TF), sums run in a
 * fixed order, and no work-item reads outside its buffers (out-of-range
 * GatherNd tuples give 0, as TF's GPU kernel).  Compiled per dtype with
 * -DT=float|double. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Fill: y[i] = v[0] (v: the 0-d value on the device) */
__kernel void d_fill(__global const T *v, __global T *y, long n)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = v[0];
}

/* GatherNd: output element i = (tuple t, inner j); the tuple's K indices
 * address params' first K dims (dims pd, strides ps in elements of the
 * inner block of `inner` elements) */
#define GATHER_ND(name, IT)                                                  \
__kernel void name(__global const T *p, __global const IT *ix,              \
                   __global T *y, long n, long inner, int K, long8 pd8,      \
                   long8 ps8)                                                \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i >= n) return;                                                      \
    long pd[8], ps[8];                                                       \
    vstore8(pd8, 0, pd);                                                     \
    vstore8(ps8, 0, ps);                                                     \
    long t = i / inner, j = i % inner, off = 0;                              \
    int ok = 1;                                                              \
    for (int q = 0; q < K; q++) {                                            \
        long v = (long)ix[t * K + q];                                        \
        ok = ok && v >= 0 && v < pd[q];                                      \
        off += v * ps[q];                                                    \
    }                                                                        \
    y[i] = ok ? p[off * inner + j] : (T)0;                                   \
}
GATHER_ND(d_gather_nd_i32, int)
GATHER_ND(d_gather_nd_i64, long)

/* MirrorPadGrad: y (the unpadded shape od) [i] = the sum of dy (the
 * padded shape bd, left pads pl) over the up to 3 positions per dim that
 * reflect onto i's coordinate: itself, its left and its right mirror
 * (sym: SYMMETRIC repeats the edge, else REFLECT) */
__kernel void d_mirror_pad_grad(__global const T *dy, __global T *y, long n,
                                int rank, long8 od8, long8 bd8, long8 pl8,
                                int sym)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long od[8], bd[8], pl[8], pos[8][3], bs[8];
    int cnt[8], at[8];
    vstore8(od8, 0, od);
    vstore8(bd8, 0, bd);
    vstore8(pl8, 0, pl);
    long r = i, s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        long c = r % od[k];
        r /= od[k];
        bs[k] = s;
        s *= bd[k];
        long L = pl[k], N = od[k];
        int m = 0;
        long left = sym ? L - 1 - c : L - c;
        if (left >= 0 && left < L)
            pos[k][m++] = left;
        pos[k][m++] = L + c;
        long right = sym ? L + 2 * N - 1 - c : L + 2 * (N - 1) - c;
        if (right >= L + N && right < bd[k])
            pos[k][m++] = right;
        cnt[k] = m;
        at[k] = 0;
    }
    T acc = (T)0;
    for (;;) {
        long off = 0;
        for (int k = 0; k < rank; k++)
            off += pos[k][at[k]] * bs[k];
        acc += dy[off];
        int k = rank - 1;
        for (; k >= 0; k--) {
            if (++at[k] < cnt[k])
                break;
            at[k] = 0;
        }
        if (k < 0)
            break;
    }
    y[i] = acc;
}

/* DynamicStitch, in three passes over a `win` vector (one int per output
 * row): d_stitch_claim per indices input m (its positions numbered from
 * base on), the row's largest position wins; d_stitch_copy per data input
 * m, the winners' rows copied; d_stitch_unclaimed, rows no index names
 * set to 0.  Indices outside [0, rows) claim nothing. */
__kernel void d_stitch_init(__global int *win, long rows)
{
    long r = get_global_id(0);
    if (r < rows)
        win[r] = -1;
}

__kernel void d_stitch_claim(__global const int *ix, __global int *win,
                             long cnt, long base, long rows)
{
    long t = get_global_id(0);
    if (t >= cnt) return;
    int r = ix[t];
    if (r >= 0 && r < rows)
        atomic_max(&win[r], (int)(base + t));
}

__kernel void d_stitch_copy(__global const int *ix, __global const T *x,
                            __global const int *win, __global T *y, long n,
                            long inner, long base, long rows)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long t = i / inner, j = i % inner;
    int r = ix[t];
    if (r >= 0 && r < rows && win[r] == (int)(base + t))
        y[r * inner + j] = x[i];
}

__kernel void d_stitch_unclaimed(__global const int *win, __global T *y,
                                 long n, long inner)
{
    long i = get_global_id(0);
    if (i < n && win[i / inner] < 0)
        y[i] = (T)0;
}

/* ---- outputs sized by the data: Where, DynamicPartition --------------------
 * Stream compaction in three passes, as TF's GPU kernels count first: the
 * input is cut into G chunks of L work-items x E elements (work-group g,
 * item l: elements [(g L + l) E, +E)); *_count gives each group's count
 * of selected elements per class q (Where: one class, nonzero elements;
 * DynamicPartition: q = the partition, the NDRange's second dimension);
 * d_compact_scan turns the counts into each group's first output position
 * (q-major, then g) and the per-class totals, which the host reads back
 * to size the outputs; *_fill writes the selected elements in input
 * order: the group's first position plus the exclusive prefix of its
 * work-items' counts, a scan in local memory. */

/* Exclusive prefix of v over the work-group (Hillis-Steele in s, one long
 * per work-item); *total gets the group's sum.  Every work-item calls it. */
inline long group_scan(__local long *s, long v, long *total)
{
    int l = get_local_id(0), L = get_local_size(0);
    s[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int o = 1; o < L; o <<= 1) {
        long a = l >= o ? s[l - o] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        s[l] += a;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *total = s[L - 1];
    return s[l] - v;
}

/* the elements [*b, *e) of this work-item */
inline void chunk(long n, long E, long *b, long *e)
{
    *b = ((long)get_group_id(0) * get_local_size(0) + get_local_id(0)) * E;
    *e = min(*b + E, n);
}

/* Where over elements of type ET (T, or uchar for bool inputs) */
#define WHERE(count, fill, ET)                                               \
__kernel void count(__global const ET *x, long n, long E,                   \
                    __global long *cnt, __local long *s)                     \
{                                                                            \
    long b, e, c = 0, tot;                                                   \
    chunk(n, E, &b, &e);                                                     \
    for (long i = b; i < e; i++)                                             \
        c += x[i] != (ET)0; /* NaN is true */                                \
    group_scan(s, c, &tot);                                                  \
    if (get_local_id(0) == 0)                                                \
        cnt[get_group_id(0)] = tot;                                          \
}                                                                            \
/* y [total, rank]: the coordinates (dims d8) of the nonzero elements */    \
__kernel void fill(__global const ET *x, long n, long E,                    \
                   __global const long *offs, __global long *y, int rank,    \
                   long8 d8, __local long *s)                                \
{                                                                            \
    long b, e, c = 0, tot, d[8];                                             \
    vstore8(d8, 0, d);                                                       \
    chunk(n, E, &b, &e);                                                     \
    for (long i = b; i < e; i++)                                             \
        c += x[i] != (ET)0;                                                  \
    long pos = offs[get_group_id(0)] + group_scan(s, c, &tot);               \
    for (long i = b; i < e; i++) {                                           \
        if (x[i] == (ET)0)                                                   \
            continue;                                                        \
        long r = i;                                                          \
        for (int k = rank - 1; k >= 0; k--) {                                \
            y[pos * rank + k] = r % d[k];                                    \
            r /= d[k];                                                       \
        }                                                                    \
        pos++;                                                               \
    }                                                                        \
}
WHERE(d_where_count, d_where_fill, T)
WHERE(d_where_count_b, d_where_fill_b, uchar)

__kernel void d_part_count(__global const int *p, long n, long E,
                           __global long *cnt, __local long *s)
{
    int q = get_group_id(1);
    long b, e, c = 0, tot;
    chunk(n, E, &b, &e);
    for (long i = b; i < e; i++)
        c += p[i] == q;
    group_scan(s, c, &tot);
    if (get_local_id(0) == 0)
        cnt[q * get_num_groups(0) + get_group_id(0)] = tot;
}

/* src [selected]: the input rows of partition 0, then 1, ... in order */
__kernel void d_part_fill(__global const int *p, long n, long E,
                          __global const long *offs, __global long *src,
                          __local long *s)
{
    int q = get_group_id(1);
    long b, e, c = 0, tot;
    chunk(n, E, &b, &e);
    for (long i = b; i < e; i++)
        c += p[i] == q;
    long pos = offs[q * get_num_groups(0) + get_group_id(0)] +
               group_scan(s, c, &tot);
    for (long i = b; i < e; i++)
        if (p[i] == q)
            src[pos++] = i;
}

/* one work-item: cnt [Q][G] -> each group's first position (in place),
 * tot[q] the count of class q, tot[Q] the sum */
__kernel void d_compact_scan(__global long *cnt, long Q, long G,
                             __global long *tot)
{
    if (get_global_id(0) != 0) return;
    long acc = 0;
    for (long q = 0; q < Q; q++) {
        long first = acc;
        for (long g = 0; g < G; g++) {
            long c = cnt[q * G + g];
            cnt[q * G + g] = acc;
            acc += c;
        }
        tot[q] = acc - first;
    }
    tot[Q] = acc;
}

/* partition output rows from src[base..): y[r, j] = x[src[base + r], j] */
__kernel void d_part_gather(__global const T *x, __global const long *src,
                            __global T *y, long n, long inner, long base)
{
    long i = get_global_id(0);
    if (i < n)
        y[i] = x[src[base + i / inner] * inner + i % inner];
}

/* ---- TopKV2: one work-group per row ---------------------------------------
 * Element i's place is the number of elements ranked before it: larger
 * ones (NaN larger than numbers, as the CPU kernel) and equal ones at a
 * lower index (TF's order); the k first places are written, each by the
 * one work-item that holds it.  First a filter: each work-item's largest
 * element (of its strided share); the one of place k-1 among those, thr,
 * has k elements at or before it, so an element ranked after thr cannot be
 * among the k and skips its count.  The row is read from local memory
 * when it fits (cached), from global memory otherwise. */
inline int tk_before(T a, T b)
{
    return (isnan(a) && !isnan(b)) || a > b;
}

/* index_type int32 (d_topk) and int64 (d_topk64): the same kernel */
#define TOPK_KERNEL(NAME, IT)                                                \
__kernel void NAME(__global const T *x, __global T *v, __global IT *ix,      \
                     long len, long kk, int cached, __local T *row,          \
                     __local T *mx, __local int *mv)                         \
{                                                                            \
    __local T thr;                                                           \
    __local int use;                                                         \
    long r = get_group_id(0);                                                \
    int l = get_local_id(0), L = get_local_size(0);                          \
    __global const T *xr = x + r * len;                                      \
    if (cached)                                                              \
        for (long i = l; i < len; i += L)                                    \
            row[i] = xr[i];                                                  \
    if (l == 0)                                                              \
        use = 0;                                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    T m = (T)0;                                                              \
    int has = 0;                                                             \
    for (long i = l; i < len; i += L) {                                      \
        T a = cached ? row[i] : xr[i];                                       \
        if (!has || tk_before(a, m))                                         \
            m = a;                                                           \
        has = 1;                                                             \
    }                                                                        \
    mx[l] = m;                                                               \
    mv[l] = has;                                                             \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    if (has && kk > 0 && kk <= L) {                                          \
        long place = 0;                                                      \
        for (int j = 0; j < L; j++)                                          \
            place += mv[j] && (tk_before(mx[j], m) ||                        \
                               (j < l && !tk_before(m, mx[j])));             \
        if (place == kk - 1) { /* one work-item at most */                   \
            thr = m;                                                         \
            use = 1;                                                         \
        }                                                                    \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    for (long i = l; i < len; i += L) {                                      \
        T a = cached ? row[i] : xr[i];                                       \
        if (use && tk_before(thr, a))                                        \
            continue;                                                        \
        long place = 0;                                                      \
        for (long j = 0; j < len && place < kk; j++) {                       \
            T b = cached ? row[j] : xr[j];                                   \
            place += tk_before(b, a) || (j < i && !tk_before(a, b));         \
        }                                                                    \
        if (place < kk) {                                                    \
            v[r * kk + place] = a;                                           \
            ix[r * kk + place] = (IT)i;                                      \
        }                                                                    \
    }                                                                        \
}

TOPK_KERNEL(d_topk, int)
TOPK_KERNEL(d_topk64, long)
