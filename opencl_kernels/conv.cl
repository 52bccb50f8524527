/* conv.cl -- TF's CNN ops on OpenCL devices, NHWC or NCHW.
 *
 * Conv2D and its two backprops are GEMMs on clBLAST: im2col writes the
 * patches of a slice of the batch as rows [n*OH*OW, KH*KW*C] (zero where
 * the window hangs over the padding), col2im gathers the patch gradients
 * back (no atomics: each input element sums the patch entries it appears
 * in), and rows<->NCHW reorders dy / y when the layout is NCHW.
 * Depthwise convolution is one work-item per output (forward, backprop
 * input: adjacent work-items share input reads through the cache) and one
 * work-group per filter element reducing over the batch in local memory
 * (backprop filter).  Pools are one work-item per output (forward) or per
 * input element (gradients, gathered).  Fused batch norm is one work-group
 * per channel for the statistics, one work-item per element to apply. */
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* the geometry (infer_nn.h's dgc_nn_geom, as longs) */
typedef struct geom {
    long N, H, W, C, KH, KW, OH, OW, OC, mult, sh, sw, dh, dw, pt, pl, nchw;
} geom;

inline long off(const geom g, long n, long h, long w, long c, long H, long W,
                long C)
{
    return g.nchw ? ((n * C + c) * H + h) * W + w : ((n * H + h) * W + w) * C + c;
}

inline T lsum(__local T *s, T v)
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

/* decompose i into (n, h, w, c) of a H x W x C layout */
inline void at4(const geom g, long i, long H, long W, long C, long *n,
                long *h, long *w, long *c)
{
    if (g.nchw) {
        *w = i % W; *h = (i / W) % H; *c = (i / W / H) % C; *n = i / W / H / C;
    } else {
        *c = i % C; *w = (i / C) % W; *h = (i / C / W) % H; *n = i / C / W / H;
    }
}

/* ---- GEMM-based convolution ---------------------------------------------- */

/* col[(r, (kh*KW + kw)*C + c)] for rows r of examples n0.. (nb of them) */
__kernel void im2col(__global const T *x, __global T *col, const geom g,
                     long n0, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long K = g.KH * g.KW * g.C;
    long r = i / K, q = i % K;
    long c = q % g.C, kw = (q / g.C) % g.KW, kh = q / g.C / g.KW;
    long ow = r % g.OW, oh = (r / g.OW) % g.OH, n = n0 + r / g.OW / g.OH;
    long ih = oh * g.sh - g.pt + kh * g.dh, iw = ow * g.sw - g.pl + kw * g.dw;
    col[i] = (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W)
                 ? (T)0 : x[off(g, n, ih, iw, c, g.H, g.W, g.C)];
}

/* dx of examples n0.. from the patch gradients dcol */
__kernel void col2im(__global const T *dcol, __global T *dx, const geom g,
                     long n0, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long c = i % g.C, iw = (i / g.C) % g.W, ih = (i / g.C / g.W) % g.H,
         nl = i / g.C / g.W / g.H;
    long K = g.KH * g.KW * g.C;
    T acc = 0;
    for (long kh = 0; kh < g.KH; kh++) {
        long th = ih + g.pt - kh * g.dh;
        if (th < 0 || th % g.sh || th / g.sh >= g.OH) continue;
        for (long kw = 0; kw < g.KW; kw++) {
            long tw = iw + g.pl - kw * g.dw;
            if (tw < 0 || tw % g.sw || tw / g.sw >= g.OW) continue;
            long r = (nl * g.OH + th / g.sh) * g.OW + tw / g.sw;
            acc += dcol[r * K + (kh * g.KW + kw) * g.C + c];
        }
    }
    dx[off(g, n0 + nl, ih, iw, c, g.H, g.W, g.C)] = acc;
}

/* rows [n*OH*OW, OC] (of examples n0..) <-> an NCHW output tensor */
__kernel void rows_to_nchw(__global const T *rows, __global T *y,
                           const geom g, long n0, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long oc = i % g.OC, p = i / g.OC, hw = g.OH * g.OW;
    long n = n0 + p / hw, s = p % hw;
    y[(n * g.OC + oc) * hw + s] = rows[i];
}

__kernel void nchw_to_rows(__global const T *y, __global T *rows,
                           const geom g, long n0, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long oc = i % g.OC, p = i / g.OC, hw = g.OH * g.OW;
    long n = n0 + p / hw, s = p % hw;
    rows[i] = y[(n * g.OC + oc) * hw + s];
}

/* ---- depthwise ----------------------------------------------------------- */

/* grouped Conv2D (filter [KH, KW, C / groups, OC]; issue 22): output
 * channel oc sums its group's C / groups input channels.  A depthwise
 * convolution is the case groups = C (filter [KH, KW, C, mult], OC = C *
 * mult): the same sums in the same order */
__kernel void grouped_fwd(__global const T *x, __global const T *w,
                          __global T *y, const geom g, long groups,
                          long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long oc, ow, oh, n;
    at4(g, i, g.OH, g.OW, g.OC, &n, &oh, &ow, &oc);
    long fc = g.C / groups, c0 = oc / (g.OC / groups) * fc;
    T acc = 0;
    for (long kh = 0; kh < g.KH; kh++) {
        long ih = oh * g.sh - g.pt + kh * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        for (long kw = 0; kw < g.KW; kw++) {
            long iw = ow * g.sw - g.pl + kw * g.dw;
            if (iw < 0 || iw >= g.W) continue;
            for (long c = 0; c < fc; c++)
                acc += x[off(g, n, ih, iw, c0 + c, g.H, g.W, g.C)] *
                       w[((kh * g.KW + kw) * fc + c) * g.OC + oc];
        }
    }
    y[i] = acc;
}

/* its backprops: dx[n, ih, iw, ic] from dy and w (ic's group's outputs) */
__kernel void grouped_bwd_data(__global const T *dy, __global const T *w,
                               __global T *dx, const geom g, long groups,
                               long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long ic, iw, ih, n;
    at4(g, i, g.H, g.W, g.C, &n, &ih, &iw, &ic);
    long fc = g.C / groups, og = g.OC / groups, o0 = ic / fc * og;
    T acc = 0;
    for (long kh = 0; kh < g.KH; kh++) {
        long th = ih + g.pt - kh * g.dh;
        if (th < 0 || th % g.sh || th / g.sh >= g.OH) continue;
        for (long kw = 0; kw < g.KW; kw++) {
            long tw = iw + g.pl - kw * g.dw;
            if (tw < 0 || tw % g.sw || tw / g.sw >= g.OW) continue;
            for (long oc = o0; oc < o0 + og; oc++)
                acc += dy[off(g, n, th / g.sh, tw / g.sw, oc, g.OH, g.OW,
                              g.OC)] *
                       w[((kh * g.KW + kw) * fc + ic % fc) * g.OC + oc];
        }
    }
    dx[i] = acc;
}

/* dfilter[kh, kw, j, oc] from x and dy (the input channel of oc's group) */
__kernel void grouped_bwd_filter(__global const T *x, __global const T *dy,
                                 __global T *dw, const geom g, long groups,
                                 long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long fc = g.C / groups, oc = i % g.OC, j = i / g.OC % fc;
    long kw = i / g.OC / fc % g.KW, kh = i / g.OC / fc / g.KW;
    long ic = oc / (g.OC / groups) * fc + j;
    T acc = 0;
    for (long n = 0; n < g.N; n++)
        for (long oh = 0; oh < g.OH; oh++) {
            long ih = oh * g.sh - g.pt + kh * g.dh;
            if (ih < 0 || ih >= g.H) continue;
            for (long ow = 0; ow < g.OW; ow++) {
                long iw = ow * g.sw - g.pl + kw * g.dw;
                if (iw < 0 || iw >= g.W) continue;
                acc += x[off(g, n, ih, iw, ic, g.H, g.W, g.C)] *
                       dy[off(g, n, oh, ow, oc, g.OH, g.OW, g.OC)];
            }
        }
    dw[i] = acc;
}

/* one work-group per filter element (kh, kw, oc) */
__kernel void dw_bwd_filter(__global const T *x, __global const T *dy,
                            __global T *dw, const geom g, __local T *s)
{
    long e = get_group_id(0);
    long oc = e % g.OC, kw = (e / g.OC) % g.KW, kh = e / g.OC / g.KW;
    long c = oc / g.mult, P = g.N * g.OH * g.OW;
    T acc = 0;
    for (long p = get_local_id(0); p < P; p += get_local_size(0)) {
        long ow = p % g.OW, oh = (p / g.OW) % g.OH, n = p / g.OW / g.OH;
        long ih = oh * g.sh - g.pt + kh * g.dh;
        long iw = ow * g.sw - g.pl + kw * g.dw;
        if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
        acc += x[off(g, n, ih, iw, c, g.H, g.W, g.C)] *
               dy[off(g, n, oh, ow, oc, g.OH, g.OW, g.OC)];
    }
    T r = lsum(s, acc);
    if (get_local_id(0) == 0) dw[e] = r;
}

/* ---- pooling ------------------------------------------------------------- */

inline void win(const geom g, long oh, long ow, long *h0, long *h1, long *w0,
                long *w1)
{
    *h0 = oh * g.sh - g.pt; *w0 = ow * g.sw - g.pl;
    *h1 = min(*h0 + g.KH, g.H); *w1 = min(*w0 + g.KW, g.W);
    *h0 = max(*h0, 0L); *w0 = max(*w0, 0L);
}

__kernel void pool_fwd(__global const T *x, __global T *y, const geom g,
                       int is_max, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long n, oh, ow, c, h0, h1, w0, w1;
    at4(g, i, g.OH, g.OW, g.C, &n, &oh, &ow, &c);
    win(g, oh, ow, &h0, &h1, &w0, &w1);
    T acc = is_max ? -INFINITY : 0;
    for (long h = h0; h < h1; h++)
        for (long w = w0; w < w1; w++) {
            T v = x[off(g, n, h, w, c, g.H, g.W, g.C)];
            acc = is_max ? (v > acc ? v : acc) : acc + v;
        }
    long cnt = (h1 - h0) * (w1 - w0);
    y[i] = is_max ? acc : (cnt > 0 ? acc / (T)cnt : (T)0);
}

/* dx[i]: the outputs whose window holds input i give it dy (max: only when
 * i is their first maximum, as TF) */
__kernel void pool_grad(__global const T *x, __global const T *dy,
                        __global T *dx, const geom g, int is_max, long total)
{
    long i = get_global_id(0);
    if (i >= total) return;
    long n, ih, iw, c;
    at4(g, i, g.H, g.W, g.C, &n, &ih, &iw, &c);
    long ohs = (ih + g.pt - g.KH + g.sh) / g.sh, ows = (iw + g.pl - g.KW + g.sw) / g.sw;
    T acc = 0;
    for (long oh = max(ohs, 0L); oh < g.OH; oh++) {
        if (oh * g.sh - g.pt > ih) break;
        for (long ow = max(ows, 0L); ow < g.OW; ow++) {
            if (ow * g.sw - g.pl > iw) break;
            long h0, h1, w0, w1;
            win(g, oh, ow, &h0, &h1, &w0, &w1);
            if (ih < h0 || ih >= h1 || iw < w0 || iw >= w1) continue;
            T d = dy[off(g, n, oh, ow, c, g.OH, g.OW, g.C)];
            if (!is_max) {
                acc += d / (T)((h1 - h0) * (w1 - w0));
                continue;
            }
            long best = -1;
            T bv = 0;
            for (long h = h0; h < h1; h++)
                for (long w = w0; w < w1; w++) {
                    T v = x[off(g, n, h, w, c, g.H, g.W, g.C)];
                    if (best < 0 || v > bv) { bv = v; best = h * g.W + w; }
                }
            if (best == ih * g.W + iw) acc += d;
        }
    }
    dx[i] = acc;
}

/* ---- fused batch norm ---------------------------------------------------- */

inline long bn_at(long nchw, long HW, long C, long c, long r)
{
    return nchw ? ((r / HW) * C + c) * HW + r % HW : r * C + c;
}

/* one work-group per channel: mean / variance of the batch (train) or the
 * given ones; writes batch_mean, batch_variance (unbiased, averaged with
 * factor), reserve 1 (mean) and 2 (variance) */
__kernel void fbn_stats(__global const T *x, __global const T *pmean,
                        __global const T *pvar, __global T *bmean,
                        __global T *bvar, __global T *r1, __global T *r2,
                        long rows, long HW, long C, long nchw, int train,
                        T factor, __local T *s)
{
    long c = get_group_id(0);
    T mu, var;
    if (train) {
        T acc = 0;
        for (long r = get_local_id(0); r < rows; r += get_local_size(0))
            acc += x[bn_at(nchw, HW, C, c, r)];
        mu = rows > 0 ? lsum(s, acc) / (T)rows : (T)0;
        acc = 0;
        for (long r = get_local_id(0); r < rows; r += get_local_size(0)) {
            T d = x[bn_at(nchw, HW, C, c, r)] - mu;
            acc += d * d;
        }
        var = rows > 0 ? lsum(s, acc) / (T)rows : (T)0;
    } else {
        mu = pmean[c];
        var = pvar[c];
    }
    if (get_local_id(0) != 0) return;
    T bm = mu, bv = var;
    if (train) {
        bv = rows > 1 ? var * (T)rows / (T)(rows - 1) : var;
        if (factor != (T)1) {
            bm = ((T)1 - factor) * pmean[c] + factor * mu;
            bv = ((T)1 - factor) * pvar[c] + factor * bv;
        }
    }
    bmean[c] = bm; bvar[c] = bv; r1[c] = mu; r2[c] = var;
}

__kernel void fbn_apply(__global const T *x, __global const T *scale,
                        __global const T *offset, __global const T *mean,
                        __global const T *var, __global T *y, long n,
                        long HW, long C, long nchw, T eps)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = nchw ? (i / HW) % C : i % C;
    y[i] = (x[i] - mean[c]) * rsqrt(var[c] + eps) * scale[c] + offset[c];
}

/* one work-group per channel: dscale = sum(dy * xhat), doffset = sum(dy) */
__kernel void fbn_grad_reduce(__global const T *dy, __global const T *x,
                              __global const T *mean, __global const T *var,
                              __global T *dscale, __global T *doffset,
                              long rows, long HW, long C, long nchw, T eps,
                              __local T *s)
{
    long c = get_group_id(0);
    T rstd = rsqrt(var[c] + eps), mu = mean[c], a = 0, b = 0;
    for (long r = get_local_id(0); r < rows; r += get_local_size(0)) {
        long at = bn_at(nchw, HW, C, c, r);
        a += dy[at];
        b += dy[at] * (x[at] - mu) * rstd;
    }
    a = lsum(s, a);
    b = lsum(s, b);
    if (get_local_id(0) == 0) { doffset[c] = a; dscale[c] = b; }
}

__kernel void fbn_grad_apply(__global const T *dy, __global const T *x,
                             __global const T *scale, __global const T *mean,
                             __global const T *var, __global const T *dscale,
                             __global const T *doffset, __global T *dx,
                             long n, long rows, long HW, long C, long nchw,
                             int train, T eps)
{
    long i = get_global_id(0);
    if (i >= n) return;
    long c = nchw ? (i / HW) % C : i % C;
    T rstd = rsqrt(var[c] + eps), d = dy[i];
    if (train && rows > 0)
        d = d - doffset[c] / (T)rows -
            (x[i] - mean[c]) * rstd * dscale[c] / (T)rows;
    dx[i] = scale[c] * rstd * d;
}
