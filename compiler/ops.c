/*
 * ops.c -- the op table (see ops.h) and the queries built on it: lookup by
 * name, kernel availability per device type (SPEC 4.7), and running an op's
 * inference function on a node.
 */
#include "ops.h"
#include "infer.h"
#include "dg_error.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

#define F32 (1u << DG_F32)
#define F64 (1u << DG_F64)
#define I32 (1u << DG_I32)
#define I64 (1u << DG_I64)
#define BOOL (1u << DG_BOOL)
#define FLOAT (F32 | F64)
#define NUM (F32 | F64 | I32 | I64)
#define ALL (NUM | BOOL)

static const char *const a_none[] = {NULL};
static const char *const a_const[] = {"value", "shape", NULL};
static const char *const a_var[] = {"shape", "init", "trainable", NULL};
static const char *const a_ph[] = {"shape", NULL};
static const char *const a_rand[] = {"shape", "mean", "stddev", "min", "max", "seed", NULL};
static const char *const a_matmul[] = {"transpose_a", "transpose_b", NULL};
static const char *const a_reduce[] = {"axis", "keepdims", NULL};
static const char *const a_reshape[] = {"shape", NULL};
static const char *const a_perm[] = {"perm", NULL};
static const char *const a_argmax[] = {"axis", "output_type", NULL};
static const char *const a_assign[] = {"validate_shape", "use_locking", NULL};
static const char *const a_print[] = {"message", "summarize", NULL};
static const char *const a_momentum[] = {"use_locking", "use_nesterov", NULL};
static const char *const a_bcast[] = {"axis", "keepdims", "mean", NULL};
static const char *const a_bn[] = {"epsilon", NULL};
static const char *const a_decay[] = {"decay", NULL};

#define SRC DGC_OP_SOURCE
#define NODIFF DGC_OP_NOT_DIFF
#define STATE (DGC_OP_STATE | DGC_OP_STATEFUL | DGC_OP_NOT_DIFF)

/* name, alias, min_in, max_in, n_out, dtypes, flags, attrs, infer, doc.
 * "dtype" is accepted on every op (the output dtype where it matters). */
const dgc_op_def dgc_ops[] = {
    {"Const", NULL, 0, 0, 1, ALL, SRC, a_const, dgc_infer_const, "a literal tensor"},
    {"Variable", "VariableV2", 0, 0, 1, ALL, SRC | DGC_OP_VARIABLE | DGC_OP_STATEFUL, a_var, dgc_infer_variable, "mutable state, initialised once per session"},
    {"Placeholder", NULL, 0, 0, 1, ALL, SRC | DGC_OP_FEED | DGC_OP_STATEFUL, a_ph, dgc_infer_placeholder, "a value fed from a file"},
    {"RandomNormal", NULL, 0, 0, 1, FLOAT, SRC | DGC_OP_RANDOM | DGC_OP_STATEFUL | NODIFF, a_rand, dgc_infer_random, "normal samples, seeded by --seed"},
    {"RandomUniform", NULL, 0, 0, 1, FLOAT, SRC | DGC_OP_RANDOM | DGC_OP_STATEFUL | NODIFF, a_rand, dgc_infer_random, "uniform samples in [min, max), seeded by --seed"},
    {"Identity", NULL, 1, 1, 1, ALL, 0, a_none, dgc_infer_unary, "x"},
    {"Neg", NULL, 1, 1, 1, NUM, 0, a_none, dgc_infer_unary, "-x"},
    {"Abs", NULL, 1, 1, 1, NUM, 0, a_none, dgc_infer_unary, "|x|"},
    {"Sin", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "sin(x)"},
    {"Cos", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "cos(x)"},
    {"Exp", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "exp(x)"},
    {"Log", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "log(x)"},
    {"Sqrt", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "sqrt(x)"},
    {"Square", NULL, 1, 1, 1, NUM, 0, a_none, dgc_infer_unary, "x*x"},
    {"Tanh", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "tanh(x)"},
    {"Sigmoid", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "1/(1+exp(-x))"},
    {"Relu", NULL, 1, 1, 1, NUM, 0, a_none, dgc_infer_unary, "max(x, 0)"},
    {"Add", "AddV2", 2, 2, 1, NUM, 0, a_none, dgc_infer_binary, "x + y (broadcasting)"},
    {"Sub", NULL, 2, 2, 1, NUM, 0, a_none, dgc_infer_binary, "x - y (broadcasting)"},
    {"Mul", NULL, 2, 2, 1, NUM, 0, a_none, dgc_infer_binary, "x * y (broadcasting)"},
    {"Div", NULL, 2, 2, 1, NUM, 0, a_none, dgc_infer_binary, "x / y (broadcasting; integer division truncates)"},
    {"Pow", NULL, 2, 2, 1, NUM, 0, a_none, dgc_infer_binary, "x ** y (broadcasting)"},
    {"Maximum", NULL, 2, 2, 1, NUM, 0, a_none, dgc_infer_binary, "max(x, y) (broadcasting)"},
    {"Minimum", NULL, 2, 2, 1, NUM, 0, a_none, dgc_infer_binary, "min(x, y) (broadcasting)"},
    {"AddN", NULL, 1, -1, 1, NUM, 0, a_none, dgc_infer_addn, "x1 + ... + xn (same shapes)"},
    {"MatMul", NULL, 2, 2, 1, FLOAT, 0, a_matmul, dgc_infer_matmul, "matrix product (OpenBLAS / clBLAST)"},
    {"BiasAdd", NULL, 2, 2, 1, NUM, 0, a_none, dgc_infer_biasadd, "x + bias along the last axis"},
    {"Sum", NULL, 1, 1, 1, NUM, 0, a_reduce, dgc_infer_reduce, "sum over axis"},
    {"Mean", NULL, 1, 1, 1, NUM, 0, a_reduce, dgc_infer_reduce, "mean over axis"},
    {"Max", NULL, 1, 1, 1, NUM, 0, a_reduce, dgc_infer_reduce, "max over axis"},
    {"Reshape", NULL, 1, 1, 1, ALL, 0, a_reshape, dgc_infer_reshape, "new shape, one -1 allowed"},
    {"Transpose", NULL, 1, 1, 1, ALL, 0, a_perm, dgc_infer_transpose, "permute axes"},
    {"Cast", NULL, 1, 1, 1, ALL, 0, a_none, dgc_infer_cast, "convert to attrs.dtype"},
    {"Softmax", NULL, 1, 1, 1, FLOAT, 0, a_none, dgc_infer_unary_float, "softmax over the last axis"},
    {"SoftmaxCrossEntropyWithLogits", NULL, 2, 2, 2, FLOAT, 0, a_none, dgc_infer_xent, "per-example loss (output 1: backprop)"},
    {"SparseSoftmaxCrossEntropyWithLogits", NULL, 2, 2, 2, FLOAT, 0, a_none, dgc_infer_sparse_xent, "per-example loss, int labels (output 1: backprop)"},
    {"ArgMax", NULL, 1, 1, 1, NUM, DGC_OP_ZERO_GRAD, a_argmax, dgc_infer_argmax, "index of the max along axis (int64)"},
    {"Equal", NULL, 2, 2, 1, ALL, DGC_OP_ZERO_GRAD, a_none, dgc_infer_equal, "x == y (bool, broadcasting)"},
    {"Assign", NULL, 2, 2, 1, ALL, STATE, a_assign, dgc_infer_assign, "variable = value"},
    {"AssignAdd", NULL, 2, 2, 1, NUM, STATE, a_assign, dgc_infer_assign, "variable += value"},
    {"AssignSub", NULL, 2, 2, 1, NUM, STATE, a_assign, dgc_infer_assign, "variable -= value"},
    {"ApplyGradientDescent", NULL, 3, 3, 1, FLOAT, STATE, a_assign, dgc_infer_apply_gd, "var -= lr * grad"},
    {"Print", NULL, 1, -1, 1, ALL, DGC_OP_CPU_ONLY | DGC_OP_STATEFUL, a_print, dgc_infer_unary, "print x to stderr, pass it through"},
    {"NoOp", NULL, 0, 0, 0, 0, 0, a_none, dgc_infer_noop, "groups control inputs"},
    /* ops the gradient and training passes generate */
    {"ZerosLike", NULL, 1, 1, 1, ALL, NODIFF, a_none, dgc_infer_unary, "zeros shaped like x"},
    {"OnesLike", NULL, 1, 1, 1, ALL, NODIFF, a_none, dgc_infer_unary, "ones shaped like x"},
    {"SumTo", NULL, 2, 2, 1, NUM, NODIFF, a_none, dgc_infer_sum_to, "sum x over broadcast axes down to like's shape (x, like)"},
    {"BroadcastLike", NULL, 2, 2, 1, NUM, NODIFF, a_bcast, dgc_infer_broadcast_like, "expand a reduction result to like's shape (x, like)"},
    {"ReshapeLike", NULL, 2, 2, 1, ALL, NODIFF, a_none, dgc_infer_reshape_like, "reshape x to like's shape (x, like)"},
    {"ReluGrad", NULL, 2, 2, 1, NUM, NODIFF, a_none, dgc_infer_grad_pair, "dy * (x > 0) (dy, x)"},
    {"SigmoidGrad", NULL, 2, 2, 1, FLOAT, NODIFF, a_none, dgc_infer_grad_pair, "dy * y * (1 - y) (y, dy)"},
    {"TanhGrad", NULL, 2, 2, 1, FLOAT, NODIFF, a_none, dgc_infer_grad_pair, "dy * (1 - y*y) (y, dy)"},
    {"SoftmaxGrad", NULL, 2, 2, 1, FLOAT, NODIFF, a_none, dgc_infer_grad_pair, "(dy - sum(dy*y)) * y (y, dy)"},
    {"MaxGrad", NULL, 3, 3, 1, NUM, NODIFF, a_reduce, dgc_infer_max_grad, "dy routed to the max (x, y, dy)"},
    {"ApplyMomentum", NULL, 5, 5, 1, FLOAT, STATE, a_momentum, dgc_infer_apply_momentum, "momentum update (var, accum, lr, grad, momentum)"},
    {"ApplyAdam", NULL, 10, 10, 1, FLOAT, STATE, a_momentum, dgc_infer_apply_adam, "Adam update (var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad)"},
    {"BatchNorm", NULL, 3, 3, 3, FLOAT, 0, a_bn, dgc_infer_batchnorm, "batch normalisation over all but the last axis (x, scale, offset) -> y, mean, variance"},
    {"BatchNormGrad", NULL, 5, 5, 3, FLOAT, NODIFF, a_bn, dgc_infer_batchnorm_grad, "(dy, x, scale, mean, variance) -> dx, dscale, doffset"},
    {"AssignMovingAvg", NULL, 2, 2, 1, FLOAT, STATE, a_decay, dgc_infer_assign_moving_avg, "variable -= (variable - value) * (1 - decay)"},
};
const int dgc_n_ops = (int)(sizeof dgc_ops / sizeof dgc_ops[0]);

int dgc_op_find(const char *name)
{
    for (int i = 0; i < dgc_n_ops; i++)
        if (strcmp(dgc_ops[i].name, name) == 0 ||
            (dgc_ops[i].alias && strcmp(dgc_ops[i].alias, name) == 0))
            return i;
    return -1;
}

const char *dgc_op_name(int op)
{
    return (op >= 0 && op < dgc_n_ops) ? dgc_ops[op].name : "?";
}

const char *dgc_node_op_name(const dgc_node *n)
{
    if (n->op_alias && n->op >= 0 && n->op < dgc_n_ops && dgc_ops[n->op].alias)
        return dgc_ops[n->op].alias;
    return dgc_op_name(n->op);
}

int dgc_op_has(int op, uint32_t flag)
{
    return (op >= 0 && op < dgc_n_ops) && (dgc_ops[op].flags & flag) != 0;
}

int dgc_op_kernel_dtype(const dgc_graph *g, const dgc_node *n)
{
    if (n->n_inputs > 0) {
        const dgc_node *p = &g->nodes[n->inputs[0].node];
        if (n->inputs[0].index < p->n_outputs)
            return (int)p->outputs[n->inputs[0].index].dtype;
        return -1;
    }
    if (n->n_outputs > 0)
        return (int)n->outputs[0].dtype;
    return -1;
}

int dgc_op_has_kernel(const dgc_graph *g, const dgc_node *n, dg_devtype t,
                      int fp64)
{
    const dgc_op_def *d = &dgc_ops[n->op];
    int dt = dgc_op_kernel_dtype(g, n);
    if (dt < 0) /* NoOp */
        return 1;
    if (!(d->dtypes & (1u << dt)))
        return 0;
    if (t == DG_DEV_CPU)
        return 1;
    if (d->flags & DGC_OP_CPU_ONLY)
        return 0;
    if (dt == DG_F32)
        return 1;
    if (dt == DG_F64)
        return fp64;
    return 0; /* int32 Variable/Const/Assign etc.: no GPU kernel (SPEC 4.7) */
}

dg_status dgc_infer_node(dgc_graph *g, int32_t id, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    const dgc_op_def *d = &dgc_ops[n->op];
    dgc_ttype in_small[8];
    dgc_ttype *in = in_small;
    if (n->n_inputs > 8) {
        in = dg_malloc(sizeof *in * (size_t)n->n_inputs);
        if (!in)
            return dg_err_nomem(err, "shape inference");
    }
    for (int i = 0; i < n->n_inputs; i++) {
        const dgc_node *p = &g->nodes[n->inputs[i].node];
        if (n->inputs[i].index >= p->n_outputs) {
            if (in != in_small)
                dg_free(in);
            return dg_err(err, DG_E_GRAPH,
                          "node '%s': input %d refers to output %d of '%s', "
                          "which has %d output%s",
                          n->name, i, n->inputs[i].index, p->name,
                          p->n_outputs, p->n_outputs == 1 ? "" : "s");
        }
        in[i] = p->outputs[n->inputs[i].index];
    }
    if (!n->outputs && d->n_out > 0) {
        n->outputs = dg_calloc((size_t)d->n_out, sizeof *n->outputs);
        if (!n->outputs) {
            if (in != in_small)
                dg_free(in);
            return dg_err_nomem(err, "shape inference");
        }
    }
    n->n_outputs = d->n_out;
    char msg[512] = "";
    int rc = d->infer(n, in, n->n_inputs, n->outputs, msg, sizeof msg);
    if (in != in_small)
        dg_free(in);
    if (rc)
        return dg_err(err, DG_E_GRAPH, "node '%s': %s: %s", n->name, d->name,
                      msg[0] ? msg : "invalid inputs");
    int dt = dgc_op_kernel_dtype(g, n);
    /* On an op with inputs (other than Cast) a `dtype` attr is TF's T, the
     * input type: it must agree with the inputs, as TF checks. */
    const dgc_attr *da = dgc_node_attr(n, "dtype");
    if (da && da->kind == DGC_A_DTYPE && n->n_inputs > 0 && dt >= 0 &&
        strcmp(d->name, "Cast") != 0 && da->i != dt)
        return dg_err(err, DG_E_GRAPH, "node '%s': %s: attr dtype %s does not "
                      "match its input's dtype %s", n->name, d->name,
                      dg_dtype_name((dg_dtype)da->i), dg_dtype_name((dg_dtype)dt));
    if (dt >= 0 && !(d->dtypes & (1u << dt)))
        return dg_err(err, DG_E_GRAPH, "node '%s': %s does not support dtype %s",
                      n->name, d->name, dg_dtype_name((dg_dtype)dt));
    return DG_OK;
}
