/*
 * kernels_cpu_dnnl.h -- the CPU backend's use of oneDNN (kernels_cpu_dnnl.c):
 * float32 convolution (forward, backward data, backward weights; depthwise
 * as a grouped convolution) and pooling (max, average, their backward
 * passes) directly on TF's NHWC / NCHW tensors and HWIO filters.  oneDNN
 * stays inside runtime/cpu/.
 */
#ifndef DGR_KERNELS_CPU_DNNL_H
#define DGR_KERNELS_CPU_DNNL_H

#include "infer_nn.h"
#include "kernel.h"
#include "threadpool.h"

enum {
    DGR_DNNL_CONV_FWD,   /* a = x, b = filter, out = y */
    DGR_DNNL_CONV_BWD_D, /* a = dy, b = filter, out = dx */
    DGR_DNNL_CONV_BWD_W, /* a = x, b = dy, out = dfilter */
    DGR_DNNL_MAXPOOL,    /* a = x, out = y */
    DGR_DNNL_AVGPOOL,    /* a = x, out = y */
    DGR_DNNL_MAXPOOL_BWD,/* a = x, b = dy, out = dx (first max, as TF) */
    DGR_DNNL_AVGPOOL_BWD,/* a = dy, out = dx (padding not counted) */
    DGR_DNNL_GELU,       /* rows: 0.5 x erfc(-x / sqrt 2), elementwise */
    DGR_DNNL_SOFTMAX     /* rows: softmax of each row */
};

/* The epilogue of a fused forward convolution (_FusedConv2D, issue 23):
 * y = act(conv + bias [+ side]); the kind is part of a primitive's key. */
enum { DGR_ACT_NONE, DGR_ACT_RELU, DGR_ACT_RELU6, DGR_ACT_ELU,
       DGR_ACT_LEAKY, DGR_ACT_SIGMOID, DGR_ACT_SWISH };
typedef struct dgr_post {
    int bias, sum, act; /* has a bias, adds side (dst's old value), DGR_ACT_* */
    float alpha;        /* LeakyRelu's slope, swish's beta */
} dgr_post;

typedef struct dgr_fused {
    dgr_post kind;
    const float *bias;  /* [OC] */
    const float *side;  /* the output's shape, or NULL */
} dgr_fused;

/* Run operation `what` of geometry g (depthwise: grouped by channel) on
 * float32 host buffers.  The mini-batch is cut into blocks of a fixed
 * number of images (chosen from g alone), each block one single-threaded
 * primitive call, the blocks run on `pool` (NULL: inline); backward
 * weights adds the blocks' partial filters in block order.  The result is
 * the same bits whatever the pool's size (issue 19).  Primitives are
 * built once per (what, geometry) and cached for the process.  0 done, 1
 * oneDNN is not available or does not take this case (the caller falls
 * back to its own loops), -1 out of memory. */
int dgr_dnnl_run(struct dgr_pool *pool, int what, const dgc_nn_geom *g,
                 int depthwise, const float *a, const float *b, float *out);

/* `what` (DGR_DNNL_GELU, DGR_DNNL_SOFTMAX) of a [rows, cols] float32
 * tensor x into y by oneDNN's JIT kernels (vectorised erf and exp, where
 * libm's are scalar calls).  The rows are cut into blocks of a fixed
 * number (a function of cols), each block one single-threaded primitive
 * call on `pool`: the same bits for every thread count.  0 done, 1 oneDNN
 * is not available (the caller computes it), -1 out of memory. */
int dgr_dnnl_rows(struct dgr_pool *pool, int what, int64_t rows,
                  int64_t cols, const float *x, float *y);

/* A convolution (what: DGR_DNNL_CONV_*) of kernel k's node, as
 * dgr_dnnl_run on k's intra-op pool; when the
 * filter (input 1 of the forward and backward-data ops) is a Const, its
 * copy in the primitive's layout is made once and kept until the device
 * closes.  f (forward only, else NULL): bias, residual and activation as
 * oneDNN post-ops, in the order of the unfused ops.  Same return codes. */
int dgr_dnnl_conv(dgr_kctx *k, int what, const dgc_nn_geom *g, int depthwise,
                  const float *a, const float *b, float *out,
                  const dgr_fused *f);

/* Drop what was kept for device d (its Const filters); the device is
 * closing. */
void dgr_dnnl_close(const dgr_device *d);

/* Whether oneDNN runs here: this build has it and libdnnl.so.2 loads
 * (loading it on the first call; for `dgrun ops` docs and tests). */
int dgr_dnnl_available(void);

/* Load oneDNN (cpu_lazy.c): 1, or 0 when it cannot be loaded and the
 * kernels use their own loops.  Only in builds with oneDNN. */
int dgr_dnnl_lib_open(void);

#endif
