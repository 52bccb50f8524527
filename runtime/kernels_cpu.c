/*
 * kernels_cpu.c -- the CPU kernel table behind dgr_cpu_kernel(op), built by
 * op name (dgc_op_find) so it never depends on the row order of dgc_ops,
 * plus helpers shared by the kernel family files (dtype conversion, axis
 * attributes, broadcast collapsing).
 */
#include "kernels_cpu.h"

#include <pthread.h>
#include <string.h>

/* ---- the table ----------------------------------------------------------- */

static const struct {
    const char *name;
    dgr_kernel_fn fn;
} entries[] = {
    {"Const", dgr_k_const},
    {"Variable", dgr_k_variable},
    {"Placeholder", dgr_k_placeholder},
    {"RandomNormal", dgr_k_random_normal},
    {"RandomUniform", dgr_k_random_uniform},
    {"Identity", dgr_k_identity},
    {"Neg", dgr_k_neg},
    {"Abs", dgr_k_abs},
    {"Sin", dgr_k_sin},
    {"Cos", dgr_k_cos},
    {"Exp", dgr_k_exp},
    {"Log", dgr_k_log},
    {"Sqrt", dgr_k_sqrt},
    {"Square", dgr_k_square},
    {"Tanh", dgr_k_tanh},
    {"Sigmoid", dgr_k_sigmoid},
    {"Relu", dgr_k_relu},
    {"Add", dgr_k_add},
    {"Sub", dgr_k_sub},
    {"Mul", dgr_k_mul},
    {"Div", dgr_k_div},
    {"Pow", dgr_k_pow},
    {"Maximum", dgr_k_maximum},
    {"Minimum", dgr_k_minimum},
    {"AddN", dgr_k_addn},
    {"MatMul", dgr_k_matmul},
    {"BiasAdd", dgr_k_bias_add},
    {"Sum", dgr_k_sum},
    {"Mean", dgr_k_mean},
    {"Max", dgr_k_max},
    {"Reshape", dgr_k_reshape},
    {"Transpose", dgr_k_transpose},
    {"Cast", dgr_k_cast},
    {"Softmax", dgr_k_softmax},
    {"SoftmaxCrossEntropyWithLogits", dgr_k_xent},
    {"SparseSoftmaxCrossEntropyWithLogits", dgr_k_sparse_xent},
    {"ArgMax", dgr_k_argmax},
    {"Equal", dgr_k_equal},
    {"Assign", dgr_k_assign},
    {"AssignAdd", dgr_k_assign_add},
    {"AssignSub", dgr_k_assign_sub},
    {"ApplyGradientDescent", dgr_k_apply_gd},
    {"Print", dgr_k_print},
    {"NoOp", dgr_k_noop},
    {"ZerosLike", dgr_k_zeros_like},
    {"OnesLike", dgr_k_ones_like},
    {"SumTo", dgr_k_sum_to},
    {"BroadcastLike", dgr_k_broadcast_like},
    {"ReshapeLike", dgr_k_reshape},
    {"ReluGrad", dgr_k_relu_grad},
    {"SigmoidGrad", dgr_k_sigmoid_grad},
    {"TanhGrad", dgr_k_tanh_grad},
    {"SoftmaxGrad", dgr_k_softmax_grad},
    {"MaxGrad", dgr_k_max_grad},
    {"ApplyMomentum", dgr_k_apply_momentum},
    {"ApplyAdam", dgr_k_apply_adam},
    {"BatchNorm", dgr_k_batchnorm},
    {"BatchNormGrad", dgr_k_batchnorm_grad},
    {"AssignMovingAvg", dgr_k_assign_moving_avg},
};

#define TABLE_MAX 512
static dgr_kernel_fn table[TABLE_MAX];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_build(void)
{
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        int op = dgc_op_find(entries[i].name);
        if (op >= 0 && op < TABLE_MAX)
            table[op] = entries[i].fn;
    }
}

dgr_kernel_fn dgr_cpu_kernel(int op)
{
    pthread_once(&table_once, table_build);
    if (op < 0 || op >= dgc_n_ops || op >= TABLE_MAX)
        return NULL;
    return table[op];
}

/* ---- dtype conversion ---------------------------------------------------- */

#define CONV_LOOP(ST, DT)                                                    \
    do {                                                                     \
        const ST *restrict s_ = src;                                         \
        DT *restrict d_ = dst;                                               \
        for (int64_t i = 0; i < n; i++)                                      \
            d_[i] = (DT)s_[i];                                               \
    } while (0)

#define CONV_TO_BOOL(ST)                                                     \
    do {                                                                     \
        const ST *restrict s_ = src;                                         \
        dgr_bool_t *restrict d_ = dst;                                       \
        for (int64_t i = 0; i < n; i++)                                      \
            d_[i] = s_[i] != 0;                                              \
    } while (0)

#define CONV_FROM(ST)                                                        \
    switch (dt) {                                                            \
    case DG_F32: CONV_LOOP(ST, float); break;                                \
    case DG_F64: CONV_LOOP(ST, double); break;                               \
    case DG_I32: CONV_LOOP(ST, int32_t); break;                              \
    case DG_I64: CONV_LOOP(ST, int64_t); break;                              \
    case DG_BOOL: CONV_TO_BOOL(ST); break;                                   \
    default: break;                                                          \
    }

void dgr_cpu_convert(const void *src, dg_dtype st, void *dst, dg_dtype dt,
                     int64_t n)
{
    if (n <= 0)
        return;
    if (st == dt) {
        if (src != dst)
            memcpy(dst, src, (size_t)n * dg_dtype_size(st));
        return;
    }
    switch (st) {
    case DG_F32: CONV_FROM(float); break;
    case DG_F64: CONV_FROM(double); break;
    case DG_I32: CONV_FROM(int32_t); break;
    case DG_I64: CONV_FROM(int64_t); break;
    case DG_BOOL: CONV_FROM(dgr_bool_t); break;
    default: break;
    }
}

double dgr_cpu_get(const void *p, dg_dtype t, int64_t i)
{
    switch (t) {
    case DG_F32: return ((const float *)p)[i];
    case DG_F64: return ((const double *)p)[i];
    case DG_I32: return ((const int32_t *)p)[i];
    case DG_I64: return (double)((const int64_t *)p)[i];
    case DG_BOOL: return ((const dgr_bool_t *)p)[i] != 0;
    default: return 0;
    }
}

/* ---- axes ---------------------------------------------------------------- */

int dgr_cpu_axes(dgr_kctx *k, const char *key, int rank, uint32_t *mask)
{
    const dgc_attr *a = dgc_node_attr(k->node, key);
    *mask = 0;
    if (!a) {
        *mask = rank > 0 ? (uint32_t)((1u << rank) - 1) : 0;
        return 0;
    }
    int64_t one = a->i;
    const int64_t *v = &one;
    int n = 1;
    if (a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE) {
        v = a->ints;
        n = a->n;
    }
    for (int i = 0; i < n; i++) {
        int64_t ax = v[i] < 0 ? v[i] + rank : v[i];
        if (ax < 0 || ax >= rank) {
            dg_err(k->err, DG_E_RUNTIME,
                   "node '%s': axis %lld is out of range for rank %d",
                   k->node->name, (long long)v[i], rank);
            return -1;
        }
        *mask |= 1u << ax;
    }
    return 0;
}

/* ---- broadcasting -------------------------------------------------------- */

int dgr_bcast_init(dgr_bcast *bc, const dg_shape *a, const dg_shape *b,
                   const dg_shape *out)
{
    int r = out->rank;
    int64_t dims[DG_MAX_RANK];
    int fa[DG_MAX_RANK], fb[DG_MAX_RANK]; /* 1 = operand varies along dim */
    int m = 0;
    if (a->rank > r || b->rank > r)
        return -1;
    for (int d = 0; d < r; d++) {
        int64_t od = out->dims[d];
        int ia = d - (r - a->rank), ib = d - (r - b->rank);
        int64_t ad = ia >= 0 ? a->dims[ia] : 1;
        int64_t bd = ib >= 0 ? b->dims[ib] : 1;
        if ((ad != od && ad != 1) || (bd != od && bd != 1))
            return -1;
        if (od == 1)
            continue;
        int va = ad == od, vb = bd == od;
        if (m > 0 && fa[m - 1] == va && fb[m - 1] == vb) {
            dims[m - 1] *= od;
            continue;
        }
        dims[m] = od;
        fa[m] = va;
        fb[m] = vb;
        m++;
    }
    bc->rank = m;
    int64_t pa = 1, pb = 1;
    for (int d = m - 1; d >= 0; d--) {
        bc->dims[d] = dims[d];
        bc->sa[d] = fa[d] ? pa : 0;
        bc->sb[d] = fb[d] ? pb : 0;
        if (fa[d])
            pa *= dims[d];
        if (fb[d])
            pb *= dims[d];
    }
    return 0;
}
