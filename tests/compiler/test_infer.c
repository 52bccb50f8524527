/*
 * test_infer.c -- unit tests of the shape/dtype inference functions
 * (compiler/infer.c): broadcasting with -1 dims, MatMul transposes, BiasAdd,
 * reductions, Reshape, Transpose, Cast, cross entropies, ArgMax, Equal,
 * Assign, ApplyGradientDescent, AddN, sources, and the infer pass
 * (dgc_pass_infer) on generated nodes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dgrun.h"
#include "ir.h"
#include "ops.h"
#include "infer.h"
#include "program.h"

static dgc_ttype T(dg_dtype t, int rank, ...)
{
    dgc_ttype x;
    memset(&x, 0, sizeof x);
    x.dtype = t;
    x.shape.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++)
        x.shape.dims[i] = va_arg(ap, int);
    va_end(ap);
    return x;
}

static void assert_type(const dgc_ttype *x, dg_dtype t, int rank, ...)
{
    assert_int_equal(x->dtype, t);
    assert_int_equal(x->shape.rank, rank);
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(x->shape.dims[i], va_arg(ap, int));
    va_end(ap);
}

typedef struct fixture {
    dgc_graph *g;
    int32_t id;
} fixture;

static dgc_node *mk(fixture *f, const char *op)
{
    if (!f->g)
        f->g = dgc_graph_new("t.json");
    char name[32];
    snprintf(name, sizeof name, "n%d", f->g->n_nodes);
    f->id = dgc_graph_add_node(f->g, name, dgc_op_find(op), NULL);
    assert_true(f->id >= 0);
    return &f->g->nodes[f->id];
}

static int run(dgc_infer_fn fn, const dgc_node *n, const dgc_ttype *in,
               int n_in, dgc_ttype *out, char *msg)
{
    msg[0] = '\0';
    return fn(n, in, n_in, out, msg, 512);
}

static void test_binary_broadcast(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "Add");
    dgc_ttype in[2], out[1];
    char msg[512];
    in[0] = T(DG_F32, 2, 2, 3);
    in[1] = T(DG_F32, 1, 3);
    assert_int_equal(run(dgc_infer_binary, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, 2, 3);
    in[0] = T(DG_F32, 3, 4, 1, 5);
    in[1] = T(DG_F32, 2, 3, 1);
    assert_int_equal(run(dgc_infer_binary, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 3, 4, 3, 5);
    in[0] = T(DG_F32, 2, -1, 3);
    in[1] = T(DG_F32, 2, 5, 1);
    assert_int_equal(run(dgc_infer_binary, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, 5, 3);
    in[0] = T(DG_F32, 1, -1);
    in[1] = T(DG_F32, 1, -1);
    assert_int_equal(run(dgc_infer_binary, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 1, -1);
    in[0] = T(DG_F32, 1, -1);
    in[1] = T(DG_F32, 0);
    assert_int_equal(run(dgc_infer_binary, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 1, -1);
    in[0] = T(DG_F32, 2, 2, 3);
    in[1] = T(DG_F32, 1, 2);
    assert_int_equal(run(dgc_infer_binary, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "Dimensions must be equal, but are 3 and 2"));
    assert_non_null(strstr(msg, "[2,3], [2]"));
    in[1] = T(DG_I32, 0);
    assert_int_equal(run(dgc_infer_binary, n, in, 2, out, msg), -1);
    assert_string_equal(msg, "dtype mismatch: float32 vs int32");
    /* Equal: bool out */
    n = mk(&f, "Equal");
    in[0] = T(DG_I64, 2, 3, 1);
    in[1] = T(DG_I64, 1, 4);
    assert_int_equal(run(dgc_infer_equal, n, in, 2, out, msg), 0);
    assert_type(out, DG_BOOL, 2, 3, 4);
    dgc_graph_free(f.g);
}

static void test_matmul(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "MatMul");
    dgc_ttype in[2], out[1];
    char msg[512];
    in[0] = T(DG_F32, 2, 2, 3);
    in[1] = T(DG_F32, 2, 3, 4);
    assert_int_equal(run(dgc_infer_matmul, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, 2, 4);
    in[1] = T(DG_F32, 2, 2, 3);
    assert_int_equal(run(dgc_infer_matmul, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "Dimensions must be equal, but are 3 and 2 for 'n0' "
                                "(op: 'MatMul') with input shapes: [2,3], [2,3]"));
    dgc_node_set_bool(n, "transpose_b", 1);
    assert_int_equal(run(dgc_infer_matmul, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, 2, 2);
    dgc_node_set_bool(n, "transpose_a", 1);
    dgc_node_set_bool(n, "transpose_b", 0);
    assert_int_equal(run(dgc_infer_matmul, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, 3, 3);
    in[0] = T(DG_F32, 2, -1, 5);
    in[1] = T(DG_F32, 2, -1, 7);
    assert_int_equal(run(dgc_infer_matmul, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, 5, 7);
    in[0] = T(DG_F32, 1, 3);
    assert_int_equal(run(dgc_infer_matmul, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "rank 2"));
    dgc_graph_free(f.g);
}

static void test_biasadd_addn(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "BiasAdd");
    dgc_ttype in[3], out[1];
    char msg[512];
    in[0] = T(DG_F32, 2, -1, 4);
    in[1] = T(DG_F32, 1, 4);
    assert_int_equal(run(dgc_infer_biasadd, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, -1, 4);
    in[1] = T(DG_F32, 1, 5);
    assert_int_equal(run(dgc_infer_biasadd, n, in, 2, out, msg), -1);
    in[1] = T(DG_F32, 2, 1, 4);
    assert_int_equal(run(dgc_infer_biasadd, n, in, 2, out, msg), -1);
    n = mk(&f, "AddN");
    in[0] = T(DG_F32, 2, -1, 4);
    in[1] = T(DG_F32, 2, 3, 4);
    in[2] = T(DG_F32, 2, 3, -1);
    assert_int_equal(run(dgc_infer_addn, n, in, 3, out, msg), 0);
    assert_type(out, DG_F32, 2, 3, 4);
    in[2] = T(DG_F32, 2, 3, 5);
    assert_int_equal(run(dgc_infer_addn, n, in, 3, out, msg), -1);
    in[2] = T(DG_F64, 2, 3, 4);
    assert_int_equal(run(dgc_infer_addn, n, in, 3, out, msg), -1);
    dgc_graph_free(f.g);
}

static void test_reduce(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "Sum");
    dgc_ttype in[1], out[1];
    char msg[512];
    in[0] = T(DG_F32, 3, 2, -1, 4);
    assert_int_equal(run(dgc_infer_reduce, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 0);
    dgc_node_set_bool(n, "keepdims", 1);
    assert_int_equal(run(dgc_infer_reduce, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 3, 1, 1, 1);
    int64_t ax[] = {-1, 0};
    dgc_node_set_ints(n, "axis", ax, 2);
    assert_int_equal(run(dgc_infer_reduce, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 3, 1, -1, 1);
    dgc_node_set_bool(n, "keepdims", 0);
    assert_int_equal(run(dgc_infer_reduce, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 1, -1);
    int64_t one = 1;
    dgc_node_set_ints(n, "axis", &one, 1);
    assert_int_equal(run(dgc_infer_reduce, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 2, 2, 4);
    int64_t bad = 3;
    dgc_node_set_ints(n, "axis", &bad, 1);
    assert_int_equal(run(dgc_infer_reduce, n, in, 1, out, msg), -1);
    assert_non_null(strstr(msg, "axis 3 is out of range"));
    dgc_node_set_ints(n, "axis", NULL, 0); /* axis: [] reduces nothing */
    assert_int_equal(run(dgc_infer_reduce, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 3, 2, -1, 4);
    dgc_graph_free(f.g);
}

/* issue 21: parameters known only at run time -- reduction axes, a
 * Transpose perm, a random op's shape -- as inputs: partial shapes before
 * their values exist, the exact shape once they do (the run). */
static void test_runtime_params(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "Sum");
    dgc_ttype in[3], out[1];
    char msg[512];
    in[0] = T(DG_F32, 3, -1, 1, 4);
    in[1] = T(DG_I32, 1, -1); /* BroadcastGradientArgs: length unknown */
    assert_int_equal(run(dgc_infer_reduce, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "keep_dims is false"));
    dgc_node_set_bool(n, "keepdims", 1);
    assert_int_equal(run(dgc_infer_reduce, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 3, -1, 1, -1);
    dgc_node_set_bool(n, "keepdims", 0);
    in[1] = T(DG_I32, 1, 2); /* two axes, values unknown */
    assert_int_equal(run(dgc_infer_reduce, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 1, -1);
    int32_t axv[2] = {0, -1};
    in[0] = T(DG_F32, 3, 5, 1, 4);
    in[1].value = axv; /* at run time */
    assert_int_equal(run(dgc_infer_reduce, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 1, 1);
    in[1] = T(DG_I32, 1, 0); /* no axis: nothing reduced */
    in[1].value = axv;
    assert_int_equal(run(dgc_infer_reduce, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 3, 5, 1, 4);

    n = mk(&f, "Transpose");
    in[0] = T(DG_F32, 3, -1, 5, 3);
    in[1] = T(DG_I32, 1, 3);
    assert_int_equal(run(dgc_infer_transpose, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 3, -1, -1, -1);
    int32_t perm[3] = {1, 0, 2};
    in[0] = T(DG_F32, 3, 4, 5, 3);
    in[1].value = perm;
    assert_int_equal(run(dgc_infer_transpose, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 3, 5, 4, 3);
    int32_t dup[3] = {1, 1, 2};
    in[1].value = dup;
    assert_int_equal(run(dgc_infer_transpose, n, in, 2, out, msg), -1);

    n = mk(&f, "TruncatedNormal");
    in[0] = T(DG_I32, 1, 2);
    assert_int_equal(run(dgc_infer_random, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 2, -1, -1);
    int32_t sh[2] = {3, 7};
    in[0].value = sh;
    assert_int_equal(run(dgc_infer_random, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 2, 3, 7);

    n = mk(&f, "Multinomial");
    in[0] = T(DG_F32, 2, -1, 5);
    in[1] = T(DG_I32, 0);
    assert_int_equal(run(dgc_infer_multinomial, n, in, 2, out, msg), 0);
    assert_type(out, DG_I64, 2, -1, -1);
    dgc_graph_free(f.g);
}

static void test_reshape_transpose_cast(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "Reshape");
    dgc_ttype in[1], out[1];
    char msg[512];
    dg_shape s = {2, {-1, 3}};
    dgc_node_set_shape(n, "shape", &s);
    in[0] = T(DG_F32, 2, 2, 6);
    assert_int_equal(run(dgc_infer_reshape, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 2, 4, 3);
    in[0] = T(DG_F32, 2, -1, 6);
    assert_int_equal(run(dgc_infer_reshape, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 2, -1, 3);
    in[0] = T(DG_F32, 1, 7);
    assert_int_equal(run(dgc_infer_reshape, n, in, 1, out, msg), -1);
    assert_non_null(strstr(msg, "Cannot reshape a tensor with 7 elements"));
    dg_shape s2 = {2, {2, 2}};
    dgc_node_set_shape(n, "shape", &s2);
    assert_int_equal(run(dgc_infer_reshape, n, in, 1, out, msg), -1);
    dg_shape s3 = {2, {-1, -1}};
    dgc_node_set_shape(n, "shape", &s3);
    assert_int_equal(run(dgc_infer_reshape, n, in, 1, out, msg), -1);
    assert_non_null(strstr(msg, "only one"));

    n = mk(&f, "Transpose");
    in[0] = T(DG_I32, 3, 2, 3, -1);
    assert_int_equal(run(dgc_infer_transpose, n, in, 1, out, msg), 0);
    assert_type(out, DG_I32, 3, -1, 3, 2);
    int64_t perm[] = {1, 0, 2};
    dgc_node_set_ints(n, "perm", perm, 3);
    assert_int_equal(run(dgc_infer_transpose, n, in, 1, out, msg), 0);
    assert_type(out, DG_I32, 3, 3, 2, -1);
    int64_t bad[] = {1, 1, 2};
    dgc_node_set_ints(n, "perm", bad, 3);
    assert_int_equal(run(dgc_infer_transpose, n, in, 1, out, msg), -1);
    dgc_node_set_ints(n, "perm", perm, 2);
    assert_int_equal(run(dgc_infer_transpose, n, in, 1, out, msg), -1);

    n = mk(&f, "Cast");
    assert_int_equal(run(dgc_infer_cast, n, in, 1, out, msg), -1);
    dgc_node_set_dtype(n, "dtype", DG_F64);
    assert_int_equal(run(dgc_infer_cast, n, in, 1, out, msg), 0);
    assert_type(out, DG_F64, 3, 2, 3, -1);
    dgc_graph_free(f.g);
}

static void test_xent_argmax_softmax(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "SoftmaxCrossEntropyWithLogits");
    dgc_ttype in[2], out[2];
    char msg[512];
    in[0] = T(DG_F32, 2, -1, 10);
    in[1] = T(DG_F32, 2, 32, 10);
    assert_int_equal(run(dgc_infer_xent, n, in, 2, out, msg), 0);
    assert_type(&out[0], DG_F32, 1, 32);
    assert_type(&out[1], DG_F32, 2, 32, 10);
    in[1] = T(DG_F32, 2, 32, 9);
    assert_int_equal(run(dgc_infer_xent, n, in, 2, out, msg), -1);
    n = mk(&f, "SparseSoftmaxCrossEntropyWithLogits");
    in[0] = T(DG_F32, 2, -1, 10);
    in[1] = T(DG_I32, 1, -1);
    assert_int_equal(run(dgc_infer_sparse_xent, n, in, 2, out, msg), 0);
    assert_type(&out[0], DG_F32, 1, -1);
    assert_type(&out[1], DG_F32, 2, -1, 10);
    in[1] = T(DG_F32, 1, -1);
    assert_int_equal(run(dgc_infer_sparse_xent, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "int32 or int64"));
    in[1] = T(DG_I64, 2, 4, 1);
    assert_int_equal(run(dgc_infer_sparse_xent, n, in, 2, out, msg), -1);

    n = mk(&f, "ArgMax");
    in[0] = T(DG_F32, 2, 5, 10);
    assert_int_equal(run(dgc_infer_argmax, n, in, 1, out, msg), 0);
    assert_type(&out[0], DG_I64, 1, 10);
    int64_t ax = -1;
    dgc_node_set_ints(n, "axis", &ax, 1);
    assert_int_equal(run(dgc_infer_argmax, n, in, 1, out, msg), 0);
    assert_type(&out[0], DG_I64, 1, 5);

    n = mk(&f, "Softmax");
    assert_int_equal(run(dgc_infer_unary_float, n, in, 1, out, msg), 0);
    assert_type(&out[0], DG_F32, 2, 5, 10);
    in[0] = T(DG_F32, 0);
    assert_int_equal(run(dgc_infer_unary_float, n, in, 1, out, msg), -1);
    in[0] = T(DG_I32, 1, 3);
    assert_int_equal(run(dgc_infer_unary_float, n, in, 1, out, msg), -1);
    dgc_graph_free(f.g);
}

static void test_state_ops(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "Assign");
    dgc_ttype in[3], out[1];
    char msg[512];
    in[0] = T(DG_F32, 2, 2, 3);
    in[1] = T(DG_F32, 2, 2, 3);
    assert_int_equal(run(dgc_infer_assign, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, 2, 3);
    in[1] = T(DG_I32, 2, 2, 3);
    assert_int_equal(run(dgc_infer_assign, n, in, 2, out, msg), -1);
    in[1] = T(DG_F32, 1, 3);
    assert_int_equal(run(dgc_infer_assign, n, in, 2, out, msg), -1);
    n = mk(&f, "ApplyGradientDescent");
    in[0] = T(DG_F32, 1, 3);
    in[1] = T(DG_F32, 0);
    in[2] = T(DG_F32, 1, 3);
    assert_int_equal(run(dgc_infer_apply_gd, n, in, 3, out, msg), 0);
    assert_type(out, DG_F32, 1, 3);
    in[1] = T(DG_F32, 1, 1);
    assert_int_equal(run(dgc_infer_apply_gd, n, in, 3, out, msg), -1);
    n = mk(&f, "NoOp");
    assert_int_equal(run(dgc_infer_noop, n, in, 0, out, msg), 0);
    dgc_graph_free(f.g);
}

/* issue 22: the sparse optimizer updates (var, slots, scalars, gradient
 * rows indices.shape + var.shape[1:], int indices) and AdagradDA's int64
 * global_step, each where dgc_op_apply_layout says */
static void test_sparse_apply(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_node *n = mk(&f, "SparseApplyAdagrad"); /* var, accum, lr, grad, ix */
    dgc_ttype in[9], out[1];
    char msg[512];
    in[0] = T(DG_F32, 2, 5, 3);
    in[1] = T(DG_F32, 2, 5, 3);
    in[2] = T(DG_F32, 0);
    in[3] = T(DG_F32, 2, 4, 3);
    in[4] = T(DG_I64, 1, 4);
    assert_int_equal(run(dgc_infer_apply_opt, n, in, 5, out, msg), 0);
    assert_type(out, DG_F32, 2, 5, 3);
    in[3] = T(DG_F32, 2, 2, 3); /* 2 rows for 4 indices */
    assert_int_equal(run(dgc_infer_apply_opt, n, in, 5, out, msg), -1);
    assert_non_null(strstr(msg, "indices.shape + var.shape[1:]"));
    in[3] = T(DG_F32, 2, 4, 2); /* rows of the wrong width */
    assert_int_equal(run(dgc_infer_apply_opt, n, in, 5, out, msg), -1);
    in[3] = T(DG_F32, 2, 4, 3);
    in[4] = T(DG_F32, 1, 4);
    assert_int_equal(run(dgc_infer_apply_opt, n, in, 5, out, msg), -1);
    assert_non_null(strstr(msg, "indices (input 4) must be int32 or int64"));
    /* AdagradDA: var, g acc, g^2 acc, grad, lr, l1, l2, global_step */
    n = mk(&f, "ApplyAdagradDA");
    for (int i = 0; i < 4; i++)
        in[i] = T(DG_F64, 1, 3);
    for (int i = 4; i < 7; i++)
        in[i] = T(DG_F64, 0);
    in[7] = T(DG_I64, 0);
    assert_int_equal(run(dgc_infer_apply_opt, n, in, 8, out, msg), 0);
    assert_type(out, DG_F64, 1, 3);
    in[7] = T(DG_F64, 0);
    assert_int_equal(run(dgc_infer_apply_opt, n, in, 8, out, msg), -1);
    assert_non_null(strstr(msg, "global_step (input 7) must be int64"));
    /* the layouts: gradient and indices inputs */
    int ix;
    assert_int_equal(dgc_op_apply_layout(DGC_OPID_SparseApplyMomentum, 6, &ix),
                     3);
    assert_int_equal(ix, 4);
    assert_int_equal(dgc_op_apply_layout(DGC_OPID_SparseApplyFtrlV2, 10, &ix),
                     3);
    assert_int_equal(ix, 4);
    assert_int_equal(dgc_op_apply_layout(DGC_OPID_SparseApplyRMSProp, 9, &ix),
                     7);
    assert_int_equal(ix, 8);
    assert_int_equal(dgc_op_apply_layout(DGC_OPID_ApplyFtrl, 8, &ix), 3);
    assert_int_equal(ix, -1);
    assert_int_equal(dgc_op_apply_layout(DGC_OPID_ApplyRMSProp, 8, &ix), 7);
    assert_int_equal(ix, -1);
    dgc_graph_free(f.g);
}

/* PlaceholderWithDefault: TF's shape function (the shape attr, which the
 * default must fit; the default's dtype) */
static void test_placeholder_default(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_ttype in[1], out[1];
    char msg[512];
    dgc_node *n = mk(&f, "PlaceholderWithDefault");
    in[0] = T(DG_F32, 2, 2, 3);
    assert_int_equal(run(dgc_infer_placeholder_default, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 2, 2, 3); /* no shape attr: the input's */
    dg_shape s = {2, {-1, 3}};
    dgc_node_set_shape(n, "shape", &s);
    assert_int_equal(run(dgc_infer_placeholder_default, n, in, 1, out, msg), 0);
    assert_type(out, DG_F32, 2, -1, 3); /* the attr's -1 stays */
    in[0] = T(DG_F32, 2, 2, 4);
    assert_int_equal(run(dgc_infer_placeholder_default, n, in, 1, out, msg), -1);
    assert_non_null(strstr(msg, "Dimensions must be equal"));
    in[0] = T(DG_F32, 1, 3);
    assert_int_equal(run(dgc_infer_placeholder_default, n, in, 1, out, msg), -1);
    in[0] = T(DG_F32, 2, 5, 3);
    dgc_node_set_dtype(n, "dtype", DG_BOOL);
    assert_int_equal(run(dgc_infer_placeholder_default, n, in, 1, out, msg), -1);
    assert_non_null(strstr(msg, "attr 'dtype' is bool"));
    dgc_graph_free(f.g);
}

static void test_sources(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_ttype out[1];
    char msg[512];
    dgc_node *n = mk(&f, "Placeholder");
    assert_int_equal(run(dgc_infer_placeholder, n, NULL, 0, out, msg), -1);
    dg_shape s = {2, {-1, 3}};
    dgc_node_set_shape(n, "shape", &s);
    dgc_node_set_dtype(n, "dtype", DG_I64);
    assert_int_equal(run(dgc_infer_placeholder, n, NULL, 0, out, msg), 0);
    assert_type(out, DG_I64, 2, -1, 3);
    n = mk(&f, "RandomNormal");
    dg_shape s2 = {1, {4}};
    dgc_node_set_shape(n, "shape", &s2);
    assert_int_equal(run(dgc_infer_random, n, NULL, 0, out, msg), 0);
    assert_type(out, DG_F32, 1, 4);
    dgc_node_set_dtype(n, "dtype", DG_I32);
    assert_int_equal(run(dgc_infer_random, n, NULL, 0, out, msg), -1);
    n = mk(&f, "Const");
    assert_int_equal(run(dgc_infer_const, n, NULL, 0, out, msg), -1);
    dg_shape s3 = {2, {2, 2}};
    dgc_node_set_tensor(n, "value", dg_tensor_new(DG_F64, &s3));
    assert_int_equal(run(dgc_infer_const, n, NULL, 0, out, msg), 0);
    assert_type(out, DG_F64, 2, 2, 2);
    n = mk(&f, "Variable");
    assert_int_equal(run(dgc_infer_variable, n, NULL, 0, out, msg), -1);
    dgc_node_set_shape(n, "shape", &s3);
    assert_int_equal(run(dgc_infer_variable, n, NULL, 0, out, msg), 0);
    assert_type(out, DG_F32, 2, 2, 2);
    dgc_graph_free(f.g);
}

/* The pass: generated nodes appended after the file's, in any order. */
/* op breadth (issue 22): Einsum's equations (the MHA ones, ellipsis,
 * implicit output, errors), BatchMatMulV2, the resizes, segments. */
static void test_zoo_ops(void **state)
{
    (void)state;
    fixture f = {0};
    dgc_ttype in[3], out[3];
    char msg[512];
    dgc_node *n = mk(&f, "Einsum");
    static const struct {
        const char *eq;
        int r0, d0[4], r1, d1[4], ro, dout[5];
    } ok[] = {
        {"abc,cde->abde", 3, {2, 3, 4}, 3, {4, 2, 5}, 4, {2, 3, 2, 5}},
        {"aecd,abcd->acbe", 4, {2, 3, 2, 4}, 4, {2, 5, 2, 4}, 4, {2, 2, 5, 3}},
        {"acbe,aecd->abcd", 4, {2, 2, 5, 3}, 4, {2, 3, 2, 4}, 4, {2, 5, 2, 4}},
        {"abcd,cde->abe", 4, {2, 3, 2, 4}, 3, {2, 4, 5}, 3, {2, 3, 5}},
        {"...ij,...jk->...ik", 3, {2, 3, 4}, 3, {1, 4, 2}, 3, {2, 3, 2}},
        {"ij,jk", 2, {3, 4}, 2, {4, 2}, 2, {3, 2}}, /* implicit: ik */
        {"ba,ac", 2, {3, 4}, 2, {4, 2}, 2, {3, 2}}, /* implicit: bc */
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        dgc_node_set_str(n, "equation", ok[i].eq);
        in[0] = T(DG_F32, 0);
        in[1] = T(DG_F32, 0);
        in[0].shape.rank = ok[i].r0;
        in[1].shape.rank = ok[i].r1;
        for (int d = 0; d < 4; d++) {
            in[0].shape.dims[d] = ok[i].d0[d];
            in[1].shape.dims[d] = ok[i].d1[d];
        }
        if (run(dgc_infer_einsum, n, in, 2, out, msg))
            fail_msg("%s: %s", ok[i].eq, msg);
        assert_int_equal(out[0].shape.rank, ok[i].ro);
        for (int d = 0; d < ok[i].ro; d++)
            assert_int_equal(out[0].shape.dims[d], ok[i].dout[d]);
    }
    /* unknown dims stay unknown; a known one fills them */
    dgc_node_set_str(n, "equation", "ij,jk->ik");
    in[0] = T(DG_F32, 2, -1, 4);
    in[1] = T(DG_F32, 2, -1, 2);
    assert_int_equal(run(dgc_infer_einsum, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 2, -1, 2);
    /* errors: mismatched label sizes, wrong rank, a label in no input */
    in[0] = T(DG_F32, 2, 3, 4);
    in[1] = T(DG_F32, 2, 5, 2);
    assert_int_equal(run(dgc_infer_einsum, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "label 'j' is 4 and 5"));
    in[1] = T(DG_F32, 3, 4, 2, 1);
    assert_int_equal(run(dgc_infer_einsum, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "input 1 has rank 3"));
    dgc_node_set_str(n, "equation", "ij,jk->iz");
    in[1] = T(DG_F32, 2, 4, 2);
    assert_int_equal(run(dgc_infer_einsum, n, in, 2, out, msg), -1);
    assert_non_null(strstr(msg, "output label 'z' is in no input"));
    dgc_node_set_str(n, "equation", "ij,jk,kl->il");
    assert_int_equal(run(dgc_infer_einsum, n, in, 2, out, msg), -1);
    /* BatchMatMulV2: broadcasting batch dims, adjoints */
    n = mk(&f, "BatchMatMulV2");
    in[0] = T(DG_F32, 4, 2, 1, 3, 4);
    in[1] = T(DG_F32, 3, 5, 4, 2);
    assert_int_equal(run(dgc_infer_einsum, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 4, 2, 5, 3, 2);
    dgc_node_set_bool(n, "adj_x", 1);
    dgc_node_set_bool(n, "adj_y", 1);
    in[0] = T(DG_F32, 3, 2, 4, 3);
    in[1] = T(DG_F32, 3, 2, 5, 4);
    assert_int_equal(run(dgc_infer_einsum, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 3, 2, 3, 5);
    /* resizes: size from input 1's value; ResizeBilinear is float32 */
    n = mk(&f, "ResizeBilinear");
    int32_t size[2] = {5, 7};
    in[0] = T(DG_F64, 4, 2, 3, 4, 2);
    in[1] = T(DG_I32, 1, 2);
    in[1].value = size;
    assert_int_equal(run(dgc_infer_resize, n, in, 2, out, msg), 0);
    assert_type(out, DG_F32, 4, 2, 5, 7, 2);
    n = mk(&f, "ResizeNearestNeighbor");
    assert_int_equal(run(dgc_infer_resize, n, in, 2, out, msg), 0);
    assert_type(out, DG_F64, 4, 2, 5, 7, 2);
    in[1].value = NULL;
    assert_int_equal(run(dgc_infer_resize, n, in, 2, out, msg), 0);
    assert_type(out, DG_F64, 4, 2, -1, -1, 2);
    /* UnsortedSegmentSum: num_segments' value; Unique and DynamicPartition:
     * sizes only the data tells */
    n = mk(&f, "UnsortedSegmentSum");
    int32_t ns = 4;
    in[0] = T(DG_F32, 2, 6, 3);
    in[1] = T(DG_I32, 1, 6);
    in[2] = T(DG_I32, 0);
    in[2].value = &ns;
    assert_int_equal(run(dgc_infer_unsorted_segment, n, in, 3, out, msg), 0);
    assert_type(out, DG_F32, 2, 4, 3);
    in[1] = T(DG_I32, 1, 5);
    assert_int_equal(run(dgc_infer_unsorted_segment, n, in, 3, out, msg), -1);
    n = mk(&f, "Unique");
    in[0] = T(DG_I64, 1, 9);
    assert_int_equal(run(dgc_infer_unique, n, in, 1, out, msg), 0);
    assert_type(&out[0], DG_I64, 1, -1);
    assert_type(&out[1], DG_I32, 1, 9);
    n = mk(&f, "DynamicPartition");
    dgc_node_set_int(n, "num_partitions", 2);
    in[0] = T(DG_F32, 3, 4, 2, 3);
    in[1] = T(DG_I32, 2, 4, 2);
    assert_int_equal(run(dgc_infer_dynamic_partition, n, in, 2, out, msg), 0);
    assert_type(&out[0], DG_F32, 2, -1, 3);
    assert_type(&out[1], DG_F32, 2, -1, 3);
    dgc_graph_free(f.g);
}

static void test_pass_from(void **state)
{
    (void)state;
    const char *json = "{\"nodes\": [{\"name\": \"a\", \"op\": \"Const\", "
                       "\"attrs\": {\"value\": [[1.0, 2.0]]}}]}";
    dg_error err;
    dgc_graph *g = dg_graph_load("t.json", json, strlen(json), &err);
    assert_non_null(g);
    int32_t b = dgc_graph_add_node(g, "b", dgc_op_find("Transpose"), &err);
    int32_t c = dgc_graph_add_node(g, "c", dgc_op_find("MatMul"), &err);
    dgc_ref ra = {0, 0}, rb = {b, 0}, rc = {c, 0};
    /* b = Transpose(c) is defined before c = MatMul(a, t) */
    int32_t t = dgc_graph_add_node(g, "t", dgc_op_find("Transpose"), &err);
    dgc_ref rt = {t, 0};
    assert_int_equal(dgc_node_add_input(g, b, rc), 0);
    assert_int_equal(dgc_node_add_input(g, c, ra), 0);
    assert_int_equal(dgc_node_add_input(g, c, rt), 0);
    assert_int_equal(dgc_node_add_input(g, t, ra), 0);
    assert_int_equal(dgc_pass_infer(g, 1, &err), DG_OK);
    assert_type(&g->nodes[c].outputs[0], DG_F32, 2, 1, 1);
    assert_type(&g->nodes[b].outputs[0], DG_F32, 2, 1, 1);
    /* a cycle among generated nodes */
    assert_int_equal(dgc_node_add_ctrl(g, t, b), 0);
    (void)rb;
    assert_int_equal(dgc_pass_infer(g, 1, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "graph has a cycle through node"));
    dg_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binary_broadcast),
        cmocka_unit_test(test_placeholder_default),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_biasadd_addn),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_runtime_params),
        cmocka_unit_test(test_reshape_transpose_cast),
        cmocka_unit_test(test_xent_argmax_softmax),
        cmocka_unit_test(test_state_ops),
        cmocka_unit_test(test_sparse_apply),
        cmocka_unit_test(test_sources),
        cmocka_unit_test(test_pass_from),
        cmocka_unit_test(test_zoo_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
