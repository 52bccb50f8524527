/*
 * fuse.h -- what the fusion pass's two halves share (fuse.c: MatMul
 * chains into _FusedMatMul; fuse_conv.c: convolution chains, batch norm
 * folded in, into _FusedConv2D / _FusedDepthwiseConv2dNative; fuse_pool.c:
 * MaxPoolGrad + ReluGrad; fuse_gelu.c: the exact gelu; fuse_norm.c: layer norm; fuse_deps.c: control-only computations skipped): the pass's
 * read counts and the rules for absorbing a node into a chain's last node.
 */
#ifndef DGC_FUSE_H
#define DGC_FUSE_H

#include "program.h"

typedef struct dgc_fuse_ctx {
    dgc_graph *g;
    const dg_device_list *devs;
    int32_t n;       /* nodes the arrays below cover (ids >= n: new Consts) */
    int32_t *reads;  /* data reads of each node's outputs */
    int32_t *ctrls;  /* control edges from each node */
    uint8_t *keep;   /* 1 fetched: never absorbed; DGC_FUSE_ABSORBED */
    int32_t *rg;     /* ReluGrads reading each node's output 0 as x */
    int32_t *shp;    /* reads of each node's output 0 by shape-only nodes
                      * (Shape, Size, Rank, ShapeN; fuse.c) */
} dgc_fuse_ctx;

/* keep[] of a node a chain absorbed: dead, never the last node of a
 * chain (its reader is gone) nor absorbed again */
#define DGC_FUSE_ABSORBED 2

/* The Const node r is (through Identity), or NULL. */
const dgc_node *dgc_fuse_const_node(const dgc_graph *g, dgc_ref r);

/* The float tensor of Const r (through Identity), or NULL. */
const dg_tensor *dgc_fuse_const_tensor(const dgc_graph *g, dgc_ref r);

/* Is r output 0 of a node of op `op`? */
int dgc_fuse_is_op(const dgc_graph *g, dgc_ref r, int op);

/* Has node n's device a kernel of op `fused` for n's (float) dtype? */
int dgc_fuse_dev_has(const dgc_fuse_ctx *c, const dgc_node *n, int fused);

/* May node id be absorbed into `last`, given `reads` expected data reads
 * (not fetched, no control inputs, on last's device, one output; control
 * edges from it can move to last). */
int dgc_fuse_absorbable(const dgc_fuse_ctx *c, int32_t id, int32_t reads,
                        const dgc_node *last);

/* ReluGrad nodes reading output 0 of node b as their x (input 1),
 * counted once per pass (a scan per candidate Relu was quadratic). */
int32_t dgc_fuse_relugrads(const dgc_fuse_ctx *c, int32_t b);

/* ReluGrads reading b's output now read last's (x > 0 iff relu(x) > 0). */
void dgc_fuse_rewire_relugrads(dgc_fuse_ctx *c, int32_t b, int32_t last);

/* The absorbed nodes ids[0..n) lose their reader (last); control edges
 * from them now come from last (a list naming last twice keeps one). */
void dgc_fuse_absorb(dgc_fuse_ctx *c, const int32_t *ids, int n,
                     int32_t last);

/* Convolution chains (fuse_conv.c), run by dgc_pass_fuse before the
 * MatMul chains.  DG_OK, or DG_E_NOMEM (err filled). */
dg_status dgc_fuse_convs(dgc_fuse_ctx *c, dg_error *err);

/* ReluGrad(MaxPoolGrad(r, y, dy), r) into _FusedMaxPoolGrad
 * (fuse_pool.c), run by dgc_pass_fuse after the convolutions.  DG_OK, or
 * DG_E_NOMEM (err filled). */
dg_status dgc_fuse_pools(dgc_fuse_ctx *c, dg_error *err);

/* tf.nn.gelu's and tf_keras' exact gelu subgraphs into _Gelu
 * (fuse_gelu.c), run by dgc_pass_fuse after the pools.  DG_OK, or
 * DG_E_NOMEM (err filled). */
dg_status dgc_fuse_gelus(dgc_fuse_ctx *c, dg_error *err);

/* Keras' LayerNormalization subgraph into _LayerNorm (fuse_norm.c), run
 * by dgc_pass_fuse after the gelus.  DG_OK, or DG_E_NOMEM (err filled). */
dg_status dgc_fuse_norms(dgc_fuse_ctx *c, dg_error *err);

/* Control edges from pure nodes nothing reads (tf.gradients' tuples
 * waiting on an unused gradient) move to those nodes' inputs, so the
 * nodes are not run (fuse_deps.c), run by dgc_pass_fuse last.  DG_OK, or
 * DG_E_NOMEM (err filled). */
dg_status dgc_fuse_deps(dgc_fuse_ctx *c, dg_error *err);

#endif
