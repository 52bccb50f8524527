/* conv3d.cl -- TF's 3-D CNN ops and LRN on OpenCL devices (issue 22), NDHWC
 * (the layout dgrun's CPU kernels and TF's CPU kernels take).
 *
 * Conv3D and its two backprops are clBLAST GEMMs over patch matrices, as
 * Conv2D's (cl_kernels_conv.c): im2col3d writes the patches of a slice of
 * the batch as rows [n*OD*OH*OW, KD*KH*KW*C] (zero where the window hangs
 * over the padding); col3d2im gathers the patch gradients back (each input
 * element sums the patch entries it appears in: no atomics).  The pools
 * are one work-item per output (forward) or per input element (gradients,
 * gathered from the outputs whose window holds it, no atomics;
 * MaxPool3DGradGrad one per output).  LRN is
 * one work-item per element summing its depth window (adjacent work-items
 * share the window's reads through the cache); LRNGrad first writes each
 * element's norm (lrn_norm, scratch), then gathers.
 * Compiled per dtype with -DT=float|double. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* the geometry (cl_kernels_conv3d.c's g3): input N x D x H x W x C, window
 * KD x KH x KW, output OD x OH x OW x OC, strides, dilations, padding
 * before */
typedef struct g3 {
    long N, D, H, W, C, KD, KH, KW, OD, OH, OW, OC;
    long sd, sh, sw, dd, dh, dw, pd, ph, pw;
} g3;

inline long at5(long n, long d, long h, long w, long c, long D, long H,
                long W, long C)
{
    return (((n * D + d) * H + h) * W + w) * C + c;
}

/* ---- GEMM-based convolution ---------------------------------------------- */

/* col[(r, ((kd*KH + kh)*KW + kw)*C + c)] for the output rows r of examples
 * n0.. */
__kernel void im2col3d(__global const T *x, __global T *col, const g3 g,
                       long n0, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long K = g.KD * g.KH * g.KW * g.C;
    long r = i / K, q = i % K;
    long c = q % g.C, kw = (q / g.C) % g.KW, kh = (q / g.C / g.KW) % g.KH,
         kd = q / g.C / g.KW / g.KH;
    long ow = r % g.OW, oh = (r / g.OW) % g.OH, od = (r / g.OW / g.OH) % g.OD,
         n = n0 + r / g.OW / g.OH / g.OD;
    long id = od * g.sd - g.pd + kd * g.dd, ih = oh * g.sh - g.ph + kh * g.dh,
         iw = ow * g.sw - g.pw + kw * g.dw;
    col[i] = (id < 0 || id >= g.D || ih < 0 || ih >= g.H || iw < 0 ||
              iw >= g.W) ? (T)0 : x[at5(n, id, ih, iw, c, g.D, g.H, g.W, g.C)];
}

/* the output position o (and 1) that input position i meets through
 * filter tap k along one dimension: o * s - p + k * dil = i */
inline int tap(long i, long k, long s, long dil, long p, long O, long *o)
{
    long t = i + p - k * dil;
    if (t < 0 || t % s || t / s >= O) return 0;
    *o = t / s;
    return 1;
}

/* dx of examples n0.. from the patch gradients dcol */
__kernel void col3d2im(__global const T *dcol, __global T *dx, const g3 g,
                       long n0, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long c = i % g.C, iw = (i / g.C) % g.W, ih = (i / g.C / g.W) % g.H,
         id = (i / g.C / g.W / g.H) % g.D, nl = i / g.C / g.W / g.H / g.D;
    long K = g.KD * g.KH * g.KW * g.C;
    T acc = 0;
    for (long kd = 0; kd < g.KD; kd++) {
        long od, oh, ow;
        if (!tap(id, kd, g.sd, g.dd, g.pd, g.OD, &od)) continue;
        for (long kh = 0; kh < g.KH; kh++) {
            if (!tap(ih, kh, g.sh, g.dh, g.ph, g.OH, &oh)) continue;
            for (long kw = 0; kw < g.KW; kw++) {
                if (!tap(iw, kw, g.sw, g.dw, g.pw, g.OW, &ow)) continue;
                long r = ((nl * g.OD + od) * g.OH + oh) * g.OW + ow;
                acc += dcol[r * K + ((kd * g.KH + kh) * g.KW + kw) * g.C + c];
            }
        }
    }
    dx[at5(n0 + nl, id, ih, iw, c, g.D, g.H, g.W, g.C)] = acc;
}

/* ---- pooling ------------------------------------------------------------- */

/* the window [*lo, *hi) of output o along one dimension, clipped to [0, I) */
inline void win1(long o, long s, long p, long k, long I, long *lo, long *hi)
{
    *lo = o * s - p;
    *hi = min(*lo + k, I);
    *lo = max(*lo, 0L);
}

/* output i's window (input coordinates, clipped), its output coordinates
 * and channel */
inline void win3(const g3 g, long i, long *n, long *c, long *d0, long *d1,
                 long *h0, long *h1, long *w0, long *w1)
{
    *c = i % g.C;
    long ow = (i / g.C) % g.OW, oh = (i / g.C / g.OW) % g.OH,
         od = (i / g.C / g.OW / g.OH) % g.OD;
    *n = i / g.C / g.OW / g.OH / g.OD;
    win1(od, g.sd, g.pd, g.KD, g.D, d0, d1);
    win1(oh, g.sh, g.ph, g.KH, g.H, h0, h1);
    win1(ow, g.sw, g.pw, g.KW, g.W, w0, w1);
}

/* MaxPool3D (is_max) or AvgPool3D (the mean of the window's cells inside
 * the input: padding not counted) */
__kernel void pool3d_fwd(__global const T *x, __global T *y, const g3 g,
                         int is_max, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long n, c, d0, d1, h0, h1, w0, w1;
    win3(g, i, &n, &c, &d0, &d1, &h0, &h1, &w0, &w1);
    T acc = is_max ? -INFINITY : (T)0;
    for (long d = d0; d < d1; d++)
        for (long h = h0; h < h1; h++)
            for (long w = w0; w < w1; w++) {
                T v = x[at5(n, d, h, w, c, g.D, g.H, g.W, g.C)];
                acc = is_max ? (v > acc ? v : acc) : acc + v;
            }
    long cnt = max(d1 - d0, 0L) * max(h1 - h0, 0L) * max(w1 - w0, 0L);
    y[i] = is_max ? acc : (cnt > 0 ? acc / (T)cnt : (T)0);
}

/* the outputs [*lo, *hi) whose window along one dimension holds input
 * position i: o * s - p <= i < o * s - p + k */
inline void outs1(long i, long s, long p, long k, long O, long *lo, long *hi)
{
    long t = i + p - k;
    *lo = t < 0 ? 0 : t / s + 1;
    *hi = min((i + p) / s + 1, O);
}

/* dx[i] (AvgPool3DGrad: x and y unused, dy / the window's cell count of
 * each output holding i; MaxPool3DGrad (is_max): dy of each output holding
 * i whose value y is within 1e-5 of x[i], as TF's CPU kernel
 * (LaunchMaxPooling3dGradOp<CPUDevice>) selects) */
__kernel void pool3d_grad(__global const T *x, __global const T *y,
                          __global const T *dy, __global T *dx, const g3 g,
                          int is_max, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long c = i % g.C, iw = (i / g.C) % g.W, ih = (i / g.C / g.W) % g.H,
         id = (i / g.C / g.W / g.H) % g.D, n = i / g.C / g.W / g.H / g.D;
    long a0, a1, b0, b1, e0, e1;
    outs1(id, g.sd, g.pd, g.KD, g.OD, &a0, &a1);
    outs1(ih, g.sh, g.ph, g.KH, g.OH, &b0, &b1);
    outs1(iw, g.sw, g.pw, g.KW, g.OW, &e0, &e1);
    T xv = is_max ? x[i] : (T)0, acc = 0;
    for (long od = a0; od < a1; od++)
        for (long oh = b0; oh < b1; oh++)
            for (long ow = e0; ow < e1; ow++) {
                long o = at5(n, od, oh, ow, c, g.OD, g.OH, g.OW, g.C);
                if (is_max) {
                    if (fabs(xv - y[o]) < (T)1e-5) acc += dy[o];
                    continue;
                }
                long d0, d1, h0, h1, w0, w1;
                win1(od, g.sd, g.pd, g.KD, g.D, &d0, &d1);
                win1(oh, g.sh, g.ph, g.KH, g.H, &h0, &h1);
                win1(ow, g.sw, g.pw, g.KW, g.W, &w0, &w1);
                acc += dy[o] / (T)((d1 - d0) * (h1 - h0) * (w1 - w0));
            }
    dx[i] = acc;
}

/* ---- LRN ----------------------------------------------------------------- */

/* bias + alpha * the sum of x^2 over element i's depth window (its row of
 * `depth` elements, radius r) */
inline T lrn_sum(__global const T *x, long i, long depth, long r, T bias,
                 T alpha)
{
    long j = i % depth, row = i - j;
    long b = max(j - r, 0L), e = min(j + r + 1, depth);
    T s = 0;
    for (long q = b; q < e; q++)
        s += x[row + q] * x[row + q];
    return bias + alpha * s;
}

__kernel void lrn_fwd(__global const T *x, __global T *y, long depth,
                      long r, T bias, T alpha, T beta, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    y[i] = x[i] * pow(lrn_sum(x, i, depth, r, bias, alpha), -beta);
}

__kernel void lrn_norm(__global const T *x, __global T *norm, long depth,
                       long r, T bias, T alpha, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    norm[i] = lrn_sum(x, i, depth, r, bias, alpha);
}

/* TF's LRNGradOp, gathered: dx[q] = the sum over the j whose window holds
 * q (ascending, the CPU kernel's order) of dy[j] * (-2 alpha beta x[q]
 * y[j] / norm[j] + (q == j) norm[j]^-beta) */
__kernel void lrn_grad(__global const T *dy, __global const T *x,
                       __global const T *y, __global const T *norm,
                       __global T *dx, long depth, long r, T alpha, T beta,
                       long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long q = i % depth, row = i - q;
    long b = max(q - r, 0L), e = min(q + r + 1, depth);
    T acc = 0;
    for (long j = b; j < e; j++) {
        T nj = norm[row + j];
        T d = (T)-2 * alpha * beta * x[i] * y[row + j] / nj;
        if (j == q) d += pow(nj, -beta);
        acc += d * dy[row + j];
    }
    dx[i] = acc;
}

/* ---- MaxPool3DGradGrad --------------------------------------------------- */

/* output i (shaped as orig_output y) takes g (shaped as orig_input x) at
 * the first cell of its window (d, h, w order) where x equals y[i]
 * exactly, as TF's MaxPooling3dGradGradOp; 0 when none */
__kernel void pool3d_gradgrad(__global const T *x, __global const T *y,
                              __global const T *gr, __global T *out,
                              const g3 g, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long n, c, d0, d1, h0, h1, w0, w1;
    win3(g, i, &n, &c, &d0, &d1, &h0, &h1, &w0, &w1);
    T m = y[i], r = 0;
    int found = 0;
    for (long d = d0; d < d1 && !found; d++)
        for (long h = h0; h < h1 && !found; h++)
            for (long w = w0; w < w1 && !found; w++) {
                long at = at5(n, d, h, w, c, g.D, g.H, g.W, g.C);
                if (x[at] == m) { r = gr[at]; found = 1; }
            }
    out[i] = r;
}
