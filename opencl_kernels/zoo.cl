/* zoo.cl -- OpenCL kernels of the op-breadth ops (issue 22): elementwise
 * math and activations with their gradient ops, the broadcasting binary
 * ops (SquaredDifference, DivNoNan: ZBCAST2), ReverseV2, Einsum (one
 * work-item per output element, contraction in a fixed order), the image
 * resizes, UnsortedSegmentSum/Max/Min/Prod and ScatterAdd/Sub (each output
 * element reduces its contributions serially, in input order:
 * deterministic, no atomics).
 * Compiled per dtype with -DT=float|double. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define ZUNARY(name, expr)                                                   \
__kernel void name(__global const T *x, __global T *y, long n)              \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i < n) { T v = x[i]; y[i] = (expr); }                                \
}
#define SELU_SCALE ((T)1.0507009873554804934193349852946)
#define SELU_ALPHA ((T)1.6732632423543772848170429916717)
ZUNARY(dgk_unary_Erf, erf(v))
ZUNARY(dgk_unary_Erfc, erfc(v))
/* _Gelu: the fusion pass's exact gelu (fuse_gelu.c), tf.nn.gelu's formula */
ZUNARY(dgk_unary__Gelu, (T)0.5 * v * erfc(-v * (T)0.70710678118654752))
ZUNARY(dgk_unary_Elu, v > (T)0 ? v : expm1(v))
ZUNARY(dgk_unary_Selu, v > (T)0 ? SELU_SCALE * v : SELU_SCALE * SELU_ALPHA * expm1(v))
ZUNARY(dgk_unary_Softsign, v / ((T)1 + fabs(v)))
ZUNARY(dgk_unary_Sign, v > (T)0 ? (T)1 : v < (T)0 ? (T)-1 : v)
ZUNARY(dgk_unary_Floor, floor(v))
ZUNARY(dgk_unary_Ceil, ceil(v))
ZUNARY(dgk_unary_Rint, rint(v))
ZUNARY(dgk_unary_Log1p, log1p(v))
ZUNARY(dgk_unary_Expm1, expm1(v))
ZUNARY(dgk_unary_Tan, tan(v))
ZUNARY(dgk_unary_Atan, atan(v))
ZUNARY(dgk_unary_Asin, asin(v))
ZUNARY(dgk_unary_Acos, acos(v))
ZUNARY(dgk_unary_Sinh, sinh(v))
ZUNARY(dgk_unary_Cosh, cosh(v))

/* IsNan (which 0), IsInf (1), IsFinite (2): bool out */
__kernel void z_classify(__global const T *x, __global uchar *y, long n,
                         int which)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T v = x[i];
    y[i] = which == 0 ? isnan(v) != 0 : which == 1 ? isinf(v) != 0
                                                   : isfinite(v) != 0;
}

/* TF's Softplus thresholds: log(epsilon) + 2 of the type */
__kernel void z_softplus(__global const T *x, __global T *y, long n, T thr)
{
    long i = get_global_id(0);
    if (i >= n) return;
    T v = x[i];
    y[i] = v > -thr ? v : v < thr ? exp(v) : log1p(exp(v));
}

__kernel void z_leaky(__global const T *x, __global T *y, long n, float a)
{
    long i = get_global_id(0);
    if (i < n) { T v = x[i]; y[i] = v > (T)0 ? v : (T)a * v; }
}

/* gradient pairs (g, v) of the same shape */
#define ZPAIR(name, expr)                                                    \
__kernel void name(__global const T *pg, __global const T *pv,              \
                   __global T *y, long n)                                    \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i < n) { T g = pg[i], v = pv[i]; y[i] = (expr); }                    \
}
ZPAIR(z_elu_grad, v > (T)0 ? g : g * (v + (T)1))
ZPAIR(z_selu_grad, v > (T)0 ? g * SELU_SCALE : g * (v + SELU_SCALE * SELU_ALPHA))
ZPAIR(z_softplus_grad, g / ((T)1 + exp(-v)))
ZPAIR(z_sqrt_grad, v * (T)0.5 / g)
ZPAIR(z_softsign_grad, g / (((T)1 + fabs(v)) * ((T)1 + fabs(v))))

__kernel void z_leaky_grad(__global const T *pg, __global const T *pv,
                           __global T *y, long n, float a)
{
    long i = get_global_id(0);
    if (i < n) { T g = pg[i]; y[i] = pv[i] > (T)0 ? g : (T)a * g; }
}

/* A broadcasting binary kernel (the "bcast2" launch shape, issue 20): the
 * output's dims (rank collapsed), the strides of a and b (0 on broadcast
 * dims); `expr` of a = pa[..], b = pb[..].  Named dgk_bcast2_<Op>, it is
 * the op's OpenCL kernel with no C of its own (tools/gen_registry.py). */
#define ZBCAST2(name, expr)                                                  \
__kernel void name(__global const T *pa, __global const T *pb,               \
                   __global T *y, long n, int rank, long8 d8, long8 sa8,     \
                   long8 sb8)                                                \
{                                                                            \
    long i = get_global_id(0);                                               \
    if (i >= n) return;                                                      \
    long d[8], sa[8], sb[8];                                                 \
    vstore8(d8, 0, d);                                                       \
    vstore8(sa8, 0, sa);                                                     \
    vstore8(sb8, 0, sb);                                                     \
    long ia = 0, ib = 0, r = i;                                              \
    for (int k = rank - 1; k >= 0; k--) {                                    \
        long c = r % d[k];                                                   \
        r /= d[k];                                                           \
        ia += c * sa[k];                                                     \
        ib += c * sb[k];                                                     \
    }                                                                        \
    T a = pa[ia], b = pb[ib];                                                \
    y[i] = (expr);                                                           \
}
ZBCAST2(dgk_bcast2_SquaredDifference, (a - b) * (a - b))
ZBCAST2(dgk_bcast2_DivNoNan, b == (T)0 ? (T)0 : a / b)
ZBCAST2(dgk_bcast2_Xdivy, a == (T)0 ? (T)0 : a / b)
ZBCAST2(dgk_bcast2_Xlogy, a == (T)0 ? (T)0 : a * log(b))

/* ReverseV2: bit k of mask = axis k reversed */
__kernel void z_reverse(__global const T *x, __global T *y, long n, int rank,
                        long8 d8, int mask)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long d[8];
    vstore8(d8, 0, d);
    long src = 0, r = i, s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        long c = r % d[k];
        r /= d[k];
        if (mask & (1 << k))
            c = d[k] - 1 - c;
        src += c * s;
        s *= d[k];
    }
    y[i] = x[src];
}

/* Einsum: no output dims (od, strides oa/ob into the inputs), nc
 * contracted dims (cd, strides ca/cb); two = whether input b is used */
__kernel void z_einsum(__global const T *pa, __global const T *pb,
                       __global T *y, long n, int no, long8 od8, long8 oa8,
                       long8 ob8, int nc, long8 cd8, long8 ca8, long8 cb8,
                       int two)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long od[8], oa[8], ob[8], cd[8], ca[8], cb[8];
    vstore8(od8, 0, od); vstore8(oa8, 0, oa); vstore8(ob8, 0, ob);
    vstore8(cd8, 0, cd); vstore8(ca8, 0, ca); vstore8(cb8, 0, cb);
    long a = 0, b = 0, r = i;
    for (int k = no - 1; k >= 0; k--) {
        long c = r % od[k];
        r /= od[k];
        a += c * oa[k];
        b += c * ob[k];
    }
    long total = 1;
    for (int k = 0; k < nc; k++)
        total *= cd[k];
    T acc = (T)0;
    for (long t = 0; t < total; t++) {
        long ra = a, rb = b, q = t;
        for (int k = nc - 1; k >= 0; k--) {
            long c = q % cd[k];
            q /= cd[k];
            ra += c * ca[k];
            rb += c * cb[k];
        }
        acc += two ? pa[ra] * pb[rb] : pa[ra];
    }
    y[i] = acc;
}

/* resizes (NHWC): TF's scalers */
inline float z_scale(long in, long out, int align)
{
    return (align && out > 1) ? (float)(in - 1) / (float)(out - 1)
                              : (float)in / (float)out;
}

__kernel void z_resize_bilinear(__global const T *x, __global float *y,
                                long n, long ih, long iw, long oh, long ow,
                                long C, int align, int hpc)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = i % C, r = i / C;
    long ox = r % ow; r /= ow;
    long oy = r % oh;
    long b = r / oh;
    float sy = z_scale(ih, oh, align), sx = z_scale(iw, ow, align);
    float vy = hpc ? ((float)oy + 0.5f) * sy - 0.5f : (float)oy * sy;
    float vx = hpc ? ((float)ox + 0.5f) * sx - 0.5f : (float)ox * sx;
    float fy = floor(vy), fx = floor(vx);
    long y0 = max((long)fy, 0L), y1 = min((long)ceil(vy), ih - 1);
    long x0 = max((long)fx, 0L), x1 = min((long)ceil(vx), iw - 1);
    float wy = vy - fy, wx = vx - fx;
    __global const T *p = x + b * ih * iw * C + c;
    float tl = (float)p[(y0 * iw + x0) * C], tr = (float)p[(y0 * iw + x1) * C];
    float bl = (float)p[(y1 * iw + x0) * C], br = (float)p[(y1 * iw + x1) * C];
    float top = tl + (tr - tl) * wx, bot = bl + (br - bl) * wx;
    y[i] = top + (bot - top) * wy;
}

inline long z_nn(long i, float s, int align, int hpc, long in)
{
    float v = hpc ? ((float)i + 0.5f) * s : (float)i * s;
    long r = align ? (long)round(v) : (long)floor(v);
    r = min(r, in - 1);
    return hpc ? max(r, 0L) : r;
}

__kernel void z_resize_nearest(__global const T *x, __global T *y, long n,
                               long ih, long iw, long oh, long ow, long C,
                               int align, int hpc)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = i % C, r = i / C;
    long ox = r % ow; r /= ow;
    long oy = r % oh;
    long b = r / oh;
    long sy = z_nn(oy, z_scale(ih, oh, align), align, hpc, ih);
    long sx = z_nn(ox, z_scale(iw, ow, align), align, hpc, iw);
    y[i] = x[((b * ih + sy) * iw + sx) * C + c];
}

#if DG_F64
#define Z_TMAX DBL_MAX
#else
#define Z_TMAX FLT_MAX
#endif
/* UnsortedSegmentSum/Max/Min/Prod (mode 0..3): out[s, j] = the reduction
 * over i with ids[i] == s, in order; an empty segment is 0, the lowest /
 * highest finite value, 1 (as TF and the CPU kernels) */
#define USS(name, IT)                                                        \
__kernel void name(__global const T *x, __global const IT *ids,             \
                   __global T *y, long n, long cnt, long inner, int mode)    \
{                                                                            \
    long o = get_global_id(0);                                               \
    if (o >= n) return;                                                      \
    long s = o / inner, j = o % inner;                                       \
    T acc = mode == 1 ? (T)-Z_TMAX : mode == 2 ? (T)Z_TMAX                   \
            : mode == 3 ? (T)1 : (T)0;                                       \
    for (long i = 0; i < cnt; i++)                                           \
        if ((long)ids[i] == s) {                                             \
            T v = x[i * inner + j];                                          \
            acc = mode == 1 ? (acc < v ? v : acc)                            \
                  : mode == 2 ? (v < acc ? v : acc)                          \
                  : mode == 3 ? acc * v : acc + v;                           \
        }                                                                    \
    y[o] = acc;                                                              \
}
USS(z_uss_i32, int)
USS(z_uss_i64, long)

/* ScatterAdd/Sub/Update: work-item j of a row applies every update in
 * order (sign 0: ScatterUpdate, the last of equal indices wins); scalar =
 * updates is one value */
#define SCAT(name, IT)                                                       \
__kernel void name(__global T *ref, __global const IT *ix,                  \
                   __global const T *u, long inner, long cnt, long rows,     \
                   T sign, int scalar)                                       \
{                                                                            \
    long j = get_global_id(0);                                               \
    if (j >= inner) return;                                                  \
    for (long i = 0; i < cnt; i++) {                                         \
        long s = (long)ix[i];                                                \
        if (s >= 0 && s < rows) /* TF's GPU kernel skips bad indices */      \
            ref[s * inner + j] = (sign == 0 ? 0 : ref[s * inner + j]) +     \
                                 (sign == 0 ? 1 : sign) *                    \
                                 u[scalar ? 0 : i * inner + j];              \
    }                                                                        \
}
SCAT(z_scatter_i32, int)
SCAT(z_scatter_i64, long)

/* ResizeBilinearGrad as a gather: each image element sums, in output
 * order, the weights every resized pixel gave it (float32 grads) */
inline float z_lerp_w(long o, long i, long in, float s, int hpc)
{
    float v = hpc ? ((float)o + 0.5f) * s - 0.5f : (float)o * s;
    float f = floor(v);
    long lo = max((long)f, 0L), hi = min((long)ceil(v), in - 1);
    float w = v - f, r = 0.0f;
    if (lo == i) r += 1.0f - w;
    if (hi == i) r += w;
    return r;
}

__kernel void z_resize_bilinear_grad(__global const float *g, __global T *dx,
                                     long n, long gh, long gw, long ih,
                                     long iw, long C, int align, int hpc)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = i % C, r = i / C;
    long x = r % iw; r /= iw;
    long y = r % ih;
    long b = r / ih;
    float sy = z_scale(ih, gh, align), sx = z_scale(iw, gw, align);
    float acc = 0.0f;
    for (long oy = 0; oy < gh; oy++) {
        float wy = z_lerp_w(oy, y, ih, sy, hpc);
        if (wy == 0.0f) continue;
        for (long ox = 0; ox < gw; ox++) {
            float wx = z_lerp_w(ox, x, iw, sx, hpc);
            if (wx != 0.0f)
                acc += g[((b * gh + oy) * gw + ox) * C + c] * wy * wx;
        }
    }
    dx[i] = (T)acc;
}

/* ResizeNearestNeighborGrad as a gather over the resized pixels whose
 * source is this pixel */
__kernel void z_resize_nearest_grad(__global const T *g, __global T *dx,
                                    long n, long gh, long gw, long oh,
                                    long ow, long C, int align, int hpc)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = i % C, r = i / C;
    long x = r % ow; r /= ow;
    long y = r % oh;
    long b = r / oh;
    float sy = z_scale(oh, gh, align), sx = z_scale(ow, gw, align);
    T acc = (T)0;
    for (long gy = 0; gy < gh; gy++) {
        if (z_nn(gy, sy, align, hpc, oh) != y) continue;
        for (long gx = 0; gx < gw; gx++)
            if (z_nn(gx, sx, align, hpc, ow) == x)
                acc += g[((b * gh + gy) * gw + gx) * C + c];
    }
    dx[i] = acc;
}

/* SpaceToBatchND (to_batch) / BatchToSpaceND: one work-item per element of
 * the output; m spatial dims (block bs, leading pad / crop pad), inner =
 * elements after them; bd/sd: the batch-side and space-side dims 1..m,
 * B the space-side batch */
__kernel void z_space_batch(__global const T *x, __global T *y, long n,
                            int to_batch, int m, long8 bs8, long8 pad8,
                            long8 bd8, long8 sd8, long B, long inner)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long bs[8], pad[8], bd[8], sd[8];
    vstore8(bs8, 0, bs); vstore8(pad8, 0, pad);
    vstore8(bd8, 0, bd); vstore8(sd8, 0, sd);
    long q = i % inner, e = i / inner;
    if (to_batch) { /* e indexes the batch side */
        long o[8], rem = e;
        for (int d = m - 1; d >= 0; d--) { o[d] = rem % bd[d]; rem /= bd[d]; }
        long b = rem % B, blk = rem / B, off[8];
        for (int d = m - 1; d >= 0; d--) { off[d] = blk % bs[d]; blk /= bs[d]; }
        long s = b;
        for (int d = 0; d < m; d++) {
            long p = o[d] * bs[d] + off[d] - pad[d];
            if (p < 0 || p >= sd[d]) { y[i] = (T)0; return; }
            s = s * sd[d] + p;
        }
        y[i] = x[s * inner + q];
    } else { /* e indexes the space side (the output) */
        long p[8], rem = e;
        for (int d = m - 1; d >= 0; d--) { p[d] = rem % sd[d]; rem /= sd[d]; }
        long b = rem, blk = 0, s = 0;
        for (int d = 0; d < m; d++) {
            long v = p[d] + pad[d];
            blk = blk * bs[d] + v % bs[d];
        }
        s = blk * B + b;
        for (int d = 0; d < m; d++)
            s = s * bd[d] + (p[d] + pad[d]) / bs[d];
        y[i] = x[s * inner + q];
    }
}

/* Cumsum (Cumprod: prod): one work-item per (outer, inner) line, summed
 * (multiplied) serially along the axis (excl: shifted by one; rev: from
 * the end) */
__kernel void z_cumsum(__global const T *x, __global T *y, long outer,
                       long len, long inner, int excl, int rev, int prod)
{
    long w = get_global_id(0);
    if (w >= outer * inner) return;
    long o = w / inner, i = w % inner;
    T acc = prod ? (T)1 : (T)0;
    for (long q = 0; q < len; q++) {
        long j = rev ? len - 1 - q : q;
        long at = (o * len + j) * inner + i;
        T v = x[at];
        if (excl) y[at] = acc;
        acc = prod ? acc * v : acc + v;
        if (!excl) y[at] = acc;
    }
}

/* Select / SelectV2: cond ? t : e, each operand broadcast to the output
 * through its per-dimension strides (0 on broadcast dims) */
__kernel void z_select(__global const uchar *pc, __global const T *pt,
                       __global const T *pe, __global T *y, long n, int rank,
                       long8 d8, long8 sc8, long8 st8, long8 se8)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long d[8], sc[8], st[8], se[8];
    vstore8(d8, 0, d);
    vstore8(sc8, 0, sc);
    vstore8(st8, 0, st);
    vstore8(se8, 0, se);
    long c = 0, t = 0, e = 0, r = i;
    for (int k = rank - 1; k >= 0; k--) {
        long q = r % d[k];
        r /= d[k];
        c += q * sc[k];
        t += q * st[k];
        e += q * se[k];
    }
    y[i] = pc[c] ? pt[t] : pe[e];
}

/* DepthToSpace (dts 1) / SpaceToDepth (dts 0), NHWC: one work-item per
 * element of the space-side tensor, dims sd (N, H, W, C), block b */
__kernel void z_depth_space(__global const T *x, __global T *y, long n4,
                            long sH, long sW, long sC, long b, int dts)
{
    long i = get_global_id(0);
    if (i >= n4) return;
    long c = i % sC, r = i / sC;
    long w = r % sW;
    r /= sW;
    long h = r % sH, n = r / sH;
    long iH = sH / b, iW = sW / b, iC = sC * b * b;
    long j = ((n * iH + h / b) * iW + w / b) * iC +
             ((h % b) * b + w % b) * sC + c;
    if (dts) y[i] = x[j];
    else y[j] = x[i];
}

/* MirrorPad: one work-item per padded element; bd/sd the padded and the
 * unpadded dims, pb the pads before, sym: SYMMETRIC (else REFLECT) */
__kernel void z_mirror_pad(__global const T *x, __global T *y, long n,
                           int rank, long8 bd8, long8 sd8, long8 pb8, int sym)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long bd[8], sd[8], pb[8];
    vstore8(bd8, 0, bd);
    vstore8(sd8, 0, sd);
    vstore8(pb8, 0, pb);
    long q = i, o = 0, s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        long j = q % bd[k] - pb[k];
        q /= bd[k];
        if (j < 0)
            j = sym ? -j - 1 : -j;
        else if (j >= sd[k])
            j = sym ? 2 * sd[k] - 1 - j : 2 * sd[k] - 2 - j;
        o += j * s;
        s *= sd[k];
    }
    y[i] = x[o];
}
