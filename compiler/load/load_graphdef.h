/*
 * load_graphdef.h -- internals of the TensorFlow GraphDef (proto3 JSON)
 * and binary loaders shared by load_graphdef.c (nodes, inputs, colocation,
 * variable initializers) and load_graphdef_attr.c (AttrValue /
 * TensorProto), which read either through the value view (gview.h).
 * Not part of any other module's interface.
 */
#ifndef DGC_LOAD_GRAPHDEF_H
#define DGC_LOAD_GRAPHDEF_H

#include "gview.h"
#include "load_priv.h"
#include "strpool.h"

/* A DataType enum ("DT_FLOAT", "DT_FLOAT_REF", or its number) -> dg_dtype.
 * 0 ok, -1 a type dgrun does not support (name in *what). */
int dgc_gd_dtype(dgc_gv x, dg_dtype *out, const char **what);

/* A TensorShapeProto ({"dim": [{"size": "2"}, ...]} / {"unknownRank":
 * true}) -> shape.  0 ok, 1 unknown rank, -1 malformed (reason in msg). */
int dgc_gd_shape(const dgc_jdoc *doc, dgc_gv x, dg_shape *s,
                 char *msg, size_t msgsz);

/* A TensorProto -> a new tensor: typed *Val lists (a shorter list is
 * padded with its last value, as TF does; none = zeros) or tensorContent
 * (base64, little-endian).  0 ok, -1 reason in msg, -2 nomem. */
int dgc_gd_tensor(const dgc_jdoc *doc, dgc_gv x, dg_tensor **out,
                  char *msg, size_t msgsz);

/* Convert the `attr` map of graph node id (whose op is already resolved;
 * `tf_op` is the op as the GraphDef spelled it) into dgrun attributes.
 * Ignores attrs dgrun does not need and rejects ones it cannot honour.
 * `_class` colocation names (loc:@x -> "x") are appended to `cls` in
 * order, for dgc_gd_resolve_class once every node is in the graph. */
/* TF's _FusedConv2D / _FusedDepthwiseConv2dNative / _FusedMatMul
 * (load_graphdef_fused.c): is n one; is k an attr TF's op (n's) has; and
 * the attrs that are not the convolution's (the MatMul's): 1 when k is one
 * of those (*st: DG_OK or the error), 0 when the caller handles k. */
int dgc_gd_is_fused_conv(const dgc_node *n);
int dgc_gd_fused_conv_tf_attr(const dgc_node *n, const char *k);
int dgc_gd_fused_conv_attr(dgc_node *n, const char *k, dgc_gv v,
                           dg_error *err, dg_status *st);

dg_status dgc_gd_attrs(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                       const char *tf_op, dgc_gv attr, dgc_strpool *cls,
                       dg_error *err);

/* Resolve node id's n_cls `_class` names at *s (advanced past them) into
 * its coloc list (duplicates once); an unknown name is the error
 * "_class colocates with unknown node". */
dg_status dgc_gd_resolve_class(dgc_graph *g, int32_t id, const char **s,
                               int n_cls, dg_error *err);

/* Initial value of Variable node id (load_graphdef_init.c), from TF's
 * initializer pattern: the node `<var>/Assign` = Assign(<var>, value) where
 * value is a Const (its value), or R, R * scale, R + offset or
 * R * scale + offset with R a RandomUniform / RandomNormal and scale,
 * offset constant scalar expressions (random_uniform {offset, offset +
 * scale} / random_normal {offset, |scale|}); otherwise zeros.  Sets `init`,
 * and `dtype` / `shape` when the VariableV2 left them open. */
dg_status dgc_gd_variable_init(dgc_graph *g, int32_t id, dg_error *err);

/* Largest Fill folded into a Const at load time (Grappler's limit for a
 * folded constant is 10 MiB too); a bigger one stays a Fill op and is
 * filled at run time, so a small file cannot make the loader allocate
 * gigabytes. */
#define DGC_GD_FILL_FOLD_BYTES (10u << 20)

/* Fold TF's Fill(dims, value) with Const inputs into node id, a Const:
 * sets its `value` to `value` broadcast to `dims` and *folded = 1; a
 * result over DGC_GD_FILL_FOLD_BYTES is left alone (*folded = 0, DG_OK).
 * Errors name the node. */
dg_status dgc_gd_fill(dgc_graph *g, int32_t id, dgc_ref dims, dgc_ref value,
                      int *folded, dg_error *err);

#endif
