/*
 * infer_nn.h -- geometry and shape inference of TF's convolution, pooling
 * and fused batch norm ops (infer_nn.c).  The geometry is shared with the
 * runtime's kernels so that a kernel sees exactly the window, strides and
 * padding inference computed (TF's SAME / VALID / EXPLICIT rules).
 */
#ifndef DGC_INFER_NN_H
#define DGC_INFER_NN_H

#include "ops.h"

/* One convolution or pooling window over an NHWC or NCHW input.  Dims may
 * be -1 at compile time (then derived dims are -1 too). */
typedef struct dgc_nn_geom {
    int nchw;               /* data_format "NCHW" (else NHWC) */
    int64_t N, H, W, C;     /* input */
    int64_t KH, KW;         /* window (filter rows / columns, or ksize) */
    int64_t OH, OW, OC;     /* output; OC = C * mult for depthwise */
    int64_t mult;           /* depthwise channel multiplier; 1 otherwise */
    int64_t groups;         /* grouped Conv2D and backprops (filter [kh, kw,
                               C / groups, OC]; issue 22); 1 otherwise */
    int64_t sh, sw, dh, dw; /* strides, dilations */
    int64_t pt, pb, pl, pr; /* padding top, bottom, left, right */
} dgc_nn_geom;

enum { DGC_NN_CONV, DGC_NN_DWCONV, DGC_NN_POOL };

/* The geometry of node n (attrs strides, dilations, padding,
 * explicit_paddings, data_format, ksize for pools) for input shape x and,
 * for the two convolution kinds, filter shape w ([kh, kw, in, out] or
 * [kh, kw, in, multiplier]; Conv2D's and its backprops' `in` may divide the
 * input's channels: grouped, as TF's).  0, or -1 with a reason in msg. */
int dgc_nn_geom_init(const dgc_node *n, int kind, const dg_shape *x,
                     const dg_shape *w, dgc_nn_geom *g, char *msg,
                     size_t msgsz);

/* For kernels: 0 when the shapes x and w (w may be NULL) are fully known,
 * else -1 with a reason in msg (a backprop whose shape input was computed
 * at run time by ops dgrun does not read at compile time). */
int dgc_nn_geom_check_known(const dg_shape *x, const dg_shape *w, char *msg,
                            size_t msgsz);

/* A rank-4 shape from N, H, W, C in the layout nchw says. */
void dgc_nn_shape4(int nchw, int64_t N, int64_t H, int64_t W, int64_t C,
                   dg_shape *s);

/* The op is one whose input `*idx` is a shape tensor (input_sizes,
 * filter_sizes, orig_input_shape): 1 and *idx set, else 0. */
int dgc_nn_sizes_input(int op, int *idx);

/* Before node id's inference: when its shape-tensor input is an integer
 * tensor whose value is known at compile time (a Const, or Shape / ShapeN
 * of a typed tensor, through Identity), record it as the node's `_sizes`
 * attr (unknown dims -1) for inference to read.  0, or -1 on nomem. */
int dgc_nn_resolve_sizes(dgc_graph *g, int32_t id);

#endif
