/*
 * kernels_cpu_conv.h -- the CPU kernels of TF's CNN ops (convolution in
 * kernels_cpu_conv.c, pooling and fused batch norm in kernels_cpu_pool.c)
 * and the helpers they share.
 */
#ifndef DGR_KERNELS_CPU_CONV_H
#define DGR_KERNELS_CPU_CONV_H

#include "kernel.h"
#include "infer_nn.h"

/* a float32 or float64 buffer */
typedef struct dgr_fbuf {
    void *p;
    int f64;
} dgr_fbuf;

static inline double fb_ld(dgr_fbuf b, int64_t i)
{
    return b.f64 ? ((const double *)b.p)[i] : ((const float *)b.p)[i];
}

static inline void fb_st(dgr_fbuf b, int64_t i, double v)
{
    if (b.f64)
        ((double *)b.p)[i] = v;
    else
        ((float *)b.p)[i] = (float)v;
}

/* Element offset of (n, h, w, c) in a tensor of H x W x C per item, in
 * g's layout (NHWC or NCHW). */
int64_t dgr_nn_off(const dgc_nn_geom *g, int64_t n, int64_t h, int64_t w,
                   int64_t c, int64_t H, int64_t W, int64_t C);

/* The geometry of k's node for input shape x (and filter shape w); a
 * DG_E_RUNTIME naming the node when the attrs or shapes do not fit. */
dg_status dgr_nn_geom(dgr_kctx *k, int kind, const dg_shape *x,
                      const dg_shape *w, dgc_nn_geom *g);

dg_status dgr_k_conv2d(dgr_kctx *k);           /* Conv2D, Depthwise... */
dg_status dgr_k_fused_conv(dgr_kctx *k);       /* _FusedConv2D, _FusedDepth.. */
dg_status dgr_k_conv2d_bp_input(dgr_kctx *k);  /* both BackpropInput */
dg_status dgr_k_conv2d_bp_filter(dgr_kctx *k); /* both BackpropFilter */
dg_status dgr_k_pool(dgr_kctx *k);             /* MaxPool, AvgPool */
dg_status dgr_k_max_pool_grad(dgr_kctx *k);
dg_status dgr_k_avg_pool_grad(dgr_kctx *k);
/* _FusedMaxPoolGrad (orig_input, orig_output, dy): MaxPoolGrad's dx where
 * orig_input > 0, else 0 (ReluGrad by the pooled Relu output, fused). */
dg_status dgr_k_fused_max_pool_grad(dgr_kctx *k);
dg_status dgr_k_fused_bn(dgr_kctx *k);
dg_status dgr_k_fused_bn_grad(dgr_kctx *k);

#endif
