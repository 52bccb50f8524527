/*
 * load_graphdef_fused.c -- TF's own fused convolutions in a GraphDef
 * (issue 23): `_FusedConv2D` / `_FusedDepthwiseConv2dNative` as Grappler's
 * remapper writes them into an optimised export.  Their convolution attrs
 * (strides, padding, ...) load as Conv2D's; this file takes the rest:
 * `fused_ops` (a list of strings, kept as dgrun's comma-joined string:
 * BiasAdd [, Add] [, Relu | Relu6 | Elu | LeakyRelu | Sigmoid], what the
 * CPU kernel runs; TF's FusedBatchNorm forms are refused by name),
 * `leakyrelu_alpha`, `filter_format` (HWIO only), and the attrs dgrun has
 * no use for (epsilon, num_args, num_host_args, TArgs, use_cudnn_on_gpu).
 * TF's `_FusedMatMul` (issue 22 item 3) loads the same way into dgrun's
 * own (the fusion pass's) op: transpose_a/b as MatMul's, fused_ops only
 * BiasAdd [, Relu] (what its kernels run).
 */
#include "load_graphdef.h"
#include "ops.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

int dgc_gd_is_fused_conv(const dgc_node *n)
{
    return n->op == DGC_OPID__FusedConv2D ||
           n->op == DGC_OPID__FusedDepthwiseConv2dNative ||
           n->op == DGC_OPID__FusedMatMul;
}

static const char *const tf_attrs[] = {
    "T", "TArgs", "num_args", "num_host_args", "strides", "padding",
    "explicit_paddings", "data_format", "filter_format", "dilations",
    "use_cudnn_on_gpu", "fused_ops", "epsilon", "leakyrelu_alpha", NULL};
static const char *const tf_matmul_attrs[] = {
    "T", "TArgs", "num_args", "transpose_a", "transpose_b", "fused_ops",
    "epsilon", "leakyrelu_alpha", NULL};

int dgc_gd_fused_conv_tf_attr(const dgc_node *n, const char *k)
{
    const char *const *l =
        n->op == DGC_OPID__FusedMatMul ? tf_matmul_attrs : tf_attrs;
    for (int i = 0; l[i]; i++)
        if (strcmp(l[i], k) == 0)
            return 1;
    return 0;
}

/* The base64 string s decoded into buf (NUL-terminated); 0 ok. */
static int b64(dgc_gv s, char *buf, size_t n)
{
    unsigned char *b;
    size_t len;
    if (dgc_gv_bytes_dup(s, &b, &len))
        return -1;
    int ok = len < n;
    if (ok) {
        memcpy(buf, b, len);
        buf[len] = 0;
    }
    dg_free(b);
    return ok ? 0 : -1;
}

/* fused_ops {"list": {"s": [...]}} -> "BiasAdd[,Add][,act]". */
static dg_status fused_ops(dgc_node *n, dgc_gv v, dg_error *err)
{
    static const char *const acts[] = {"Relu",      "Relu6",  "Elu",
                                       "LeakyRelu", "Sigmoid", NULL};
    dgc_gv l = dgc_gv_field(v, "list", NULL);
    dgc_gv s = dgc_gv_field(l, "s", NULL);
    char ops[128] = "", op[32];
    int i = 0, ok = dgc_gv_is_array(s);
    for (dgc_gv e = dgc_gv_first(s); ok && dgc_gv_ok(e);
         e = dgc_gv_next(e), i++) {
        ok = b64(e, op, sizeof op) == 0;
        if (!ok)
            break;
        int act = 0;
        for (int a = 0; acts[a]; a++)
            act |= strcmp(op, acts[a]) == 0;
        ok = i == 0 ? strcmp(op, "BiasAdd") == 0
             : n->op == DGC_OPID__FusedMatMul
                 ? strcmp(op, "Relu") == 0 && !dgc_gv_ok(dgc_gv_next(e))
                 : (act && !dgc_gv_ok(dgc_gv_next(e))) ||
                       (i == 1 && strcmp(op, "Add") == 0);
        snprintf(ops + strlen(ops), sizeof ops - strlen(ops), "%s%s",
                 i ? "," : "", op);
    }
    if (!ok || i == 0)
        return dg_err(err, DG_E_GRAPH,
                      "node '%s': fused_ops [%s] of %s is not supported by "
                      "dgrun (%s)", n->name, ops, dgc_op_name(n->op),
                      n->op == DGC_OPID__FusedMatMul
                          ? "BiasAdd [, Relu]"
                          : "BiasAdd [, Add] [, Relu | Relu6 | Elu | "
                            "LeakyRelu | Sigmoid]");
    return dgc_node_set_str(n, "fused_ops", ops) ? dg_err_nomem(err, n->name)
                                                 : DG_OK;
}

int dgc_gd_fused_conv_attr(dgc_node *n, const char *k, dgc_gv v,
                           dg_error *err, dg_status *st)
{
    *st = DG_OK;
    if (strcmp(k, "fused_ops") == 0) {
        *st = fused_ops(n, v, err);
    } else if (strcmp(k, "leakyrelu_alpha") == 0 &&
               n->op == DGC_OPID__FusedMatMul) {
        /* only LeakyRelu reads it, which _FusedMatMul refuses */
    } else if (strcmp(k, "leakyrelu_alpha") == 0) {
        dgc_gv f = dgc_gv_field(v, "f", NULL);
        double a = dgc_gv_is_number(f) ? dgc_gv_num(f) : 0;
        if (dgc_gv_ok(f) && !dgc_gv_is_number(f))
            *st = dg_err(err, DG_E_GRAPH, "node '%s': attr 'leakyrelu_alpha' "
                         "must be a float", n->name);
        else if (dgc_node_set_float(n, k, a))
            *st = dg_err_nomem(err, n->name);
    } else if (strcmp(k, "filter_format") == 0) {
        char f[16];
        dgc_gv s = dgc_gv_field(v, "s", NULL);
        if (dgc_gv_ok(s) && (b64(s, f, sizeof f) || strcmp(f, "HWIO") != 0))
            *st = dg_err(err, DG_E_GRAPH, "node '%s': filter_format must be "
                         "HWIO", n->name);
    } else if (strcmp(k, "epsilon") != 0 && strcmp(k, "num_args") != 0 &&
               strcmp(k, "num_host_args") != 0 && strcmp(k, "TArgs") != 0 &&
               strcmp(k, "use_cudnn_on_gpu") != 0) {
        return 0;
    }
    return 1;
}
