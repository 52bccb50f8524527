/*
 * test_cl_conv3d.c -- the OpenCL kernels of the 3-D CNN ops and LRN (issue
 * 22: Conv3D, Conv3DBackpropInputV2, Conv3DBackpropFilterV2, MaxPool3D,
 * AvgPool3D, AvgPool3DGrad, MaxPool3DGrad, MaxPool3DGradGrad, LRN,
 * LRNGrad) against the CPU
 * kernels on the same inputs (tn_run; the harness e2e_ops checks both
 * against TensorFlow): strides, dilations, SAME / VALID, odd sizes, a
 * batch > 1, ties in max pools, shape inputs as int32 vectors and as the
 * tensors themselves, float32 and float64, and a batch big enough for the
 * GEMM path to work in slices (left out under DGRUN_TEST_SMALL, as
 * Oclgrind runs it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_testlib.h"
#include "infer.h"

typedef struct c3case {
    int64_t N, D, H, W, C, K[3], OC, S[3], Dl[3];
    const char *pad;
} c3case;

static const c3case convs[] = {
    {2, 4, 5, 3, 3, {2, 3, 2}, 4, {1, 1, 1}, {1, 1, 1}, "SAME"},
    {1, 5, 6, 7, 2, {3, 2, 3}, 3, {2, 1, 2}, {1, 1, 1}, "VALID"},
    {2, 5, 5, 6, 2, {2, 2, 3}, 2, {1, 2, 1}, {2, 1, 2}, "SAME"},
    {1, 7, 4, 5, 3, {3, 1, 2}, 2, {2, 2, 3}, {1, 2, 1}, "VALID"},
    {3, 3, 4, 4, 1, {1, 1, 1}, 5, {1, 1, 1}, {1, 1, 1}, "VALID"},
    {12, 16, 16, 16, 8, {3, 3, 3}, 8, {1, 1, 1}, {1, 1, 1}, "SAME"},
};

static const c3case pools[] = {
    {2, 4, 5, 6, 3, {2, 2, 2}, 0, {2, 2, 2}, {1, 1, 1}, "VALID"},
    {1, 5, 4, 7, 2, {3, 2, 3}, 0, {2, 1, 2}, {1, 1, 1}, "SAME"},
    {2, 3, 6, 5, 70, {2, 3, 3}, 0, {1, 2, 1}, {1, 1, 1}, "SAME"},
    {1, 6, 5, 4, 2, {3, 3, 2}, 0, {3, 2, 1}, {1, 1, 1}, "VALID"},
};

static void set5(dgc_node *n, const char *key, const int64_t *v3)
{
    int64_t v[5] = {1, v3[0], v3[1], v3[2], 1};
    assert_int_equal(dgc_node_set_ints(n, key, v, 5), 0);
}

static void attrs(dgc_node *n, const c3case *c, int pool)
{
    set5(n, "strides", c->S);
    set5(n, pool ? "ksize" : "dilations", pool ? c->K : c->Dl);
    assert_int_equal(dgc_node_set_str(n, "padding", c->pad), 0);
}

/* output i of node t's op from its inference (inputs' types as given) */
static dgc_ttype infer_out(tnode *t)
{
    dgc_ttype in[8], out[2];
    for (int i = 0; i < t->n_in; i++) {
        in[i].dtype = t->in[i].dtype;
        in[i].shape = t->in[i].shape;
        in[i].value = NULL;
    }
    char msg[256] = "";
    if (dgc_op_infer[t->n->op](t->n, in, t->n_in, out, msg, sizeof msg))
        fail_msg("%s: infer: %s", dgc_op_name(t->n->op), msg);
    return out[0];
}

/* run t (output shaped `os`, or inferred when os is NULL) on OpenCL and
 * the CPU; returns the OpenCL output (malloc'd) when keep, and frees t */
static double *run(tnode *t, const dg_shape *os, dg_dtype dt, int keep)
{
    if (os) {
        tn_out(t, dt, *os);
    } else {
        dgc_ttype o = infer_out(t);
        tn_out(t, o.dtype, o.shape);
    }
    assert_int_equal(tn_run(t), DG_OK);
    double *r = keep ? down(&g_dev, &t->out[0]) : NULL;
    tn_free(t);
    return r;
}

/* the int32 vector of shape s's dims */
static void dims_of(const dg_shape *s, double *v)
{
    for (int i = 0; i < s->rank; i++)
        v[i] = (double)s->dims[i];
}

static void conv_case(const c3case *c, dg_dtype dt, int int_sizes)
{
    dg_shape xs = shp(5, (int)c->N, (int)c->D, (int)c->H, (int)c->W,
                      (int)c->C);
    dg_shape ws = shp(5, (int)c->K[0], (int)c->K[1], (int)c->K[2],
                      (int)c->C, (int)c->OC);
    double *x = rnd(ne(&xs), -1, 1), *w = rnd(ne(&ws), -1, 1), sz[5];
    tnode t;
    tn_init(&t, "Conv3D");
    attrs(t.n, c, 0);
    tn_in(&t, dt, xs, x);
    tn_in(&t, dt, ws, w);
    dg_shape ys = infer_out(&t).shape;
    double *dy = rnd(ne(&ys), -1, 1);
    run(&t, NULL, dt, 0);

    tn_init(&t, "Conv3DBackpropInputV2");
    attrs(t.n, c, 0);
    dims_of(&xs, sz);
    if (int_sizes)
        tn_in(&t, DG_I32, shp(1, 5), sz);
    else
        tn_in(&t, dt, xs, x);
    tn_in(&t, dt, ws, w);
    tn_in(&t, dt, ys, dy);
    run(&t, &xs, dt, 0);

    tn_init(&t, "Conv3DBackpropFilterV2");
    attrs(t.n, c, 0);
    tn_in(&t, dt, xs, x);
    dims_of(&ws, sz);
    if (int_sizes)
        tn_in(&t, DG_I32, shp(1, 5), sz);
    else
        tn_in(&t, dt, ws, w);
    tn_in(&t, dt, ys, dy);
    run(&t, &ws, dt, 0);
    free(x); free(w); free(dy);
}

static void test_conv3d(void **s)
{
    (void)s;
    NEED_CL();
    /* DGRUN_TEST_SMALL: a simulator (Oclgrind) runs the small cases only */
    const char *small = getenv("DGRUN_TEST_SMALL");
    for (size_t i = 0; i < sizeof convs / sizeof *convs; i++) {
        if (small && *small && convs[i].N >= 8)
            continue;
        conv_case(&convs[i], DG_F32, (int)(i % 2));
        if (g_dev.info.fp64 && convs[i].N < 8)
            conv_case(&convs[i], DG_F64, (int)((i + 1) % 2));
    }
}

static void pool_case(const c3case *c, dg_dtype dt, int max)
{
    dg_shape xs = shp(5, (int)c->N, (int)c->D, (int)c->H, (int)c->W,
                      (int)c->C);
    double *x = rnd(ne(&xs), -1, 1), sz[5];
    for (int64_t i = 0; i < ne(&xs); i += 5)
        x[i] = 0.25; /* ties: every maximum takes dy (TF's CPU kernel) */
    tnode t;
    tn_init(&t, max ? "MaxPool3D" : "AvgPool3D");
    attrs(t.n, c, 1);
    tn_in(&t, dt, xs, x);
    dg_shape ys = infer_out(&t).shape;
    double *y = run(&t, NULL, dt, 1), *dy = rnd(ne(&ys), -1, 1);
    tn_init(&t, max ? "MaxPool3DGrad" : "AvgPool3DGrad");
    attrs(t.n, c, 1);
    dims_of(&xs, sz);
    if (max) {
        tn_in(&t, dt, xs, x);
        tn_in(&t, dt, ys, y);
    } else if (c->C % 2) {
        tn_in(&t, DG_I32, shp(1, 5), sz);
    } else {
        tn_in(&t, dt, xs, x); /* the input itself */
    }
    tn_in(&t, dt, ys, dy);
    run(&t, &xs, dt, 0);
    if (max) { /* MaxPool3DGradGrad: a gradient shaped as x, out as y */
        double *gx = rnd(ne(&xs), -1, 1);
        tn_init(&t, "MaxPool3DGradGrad");
        attrs(t.n, c, 1);
        tn_in(&t, dt, xs, x);
        tn_in(&t, dt, ys, y);
        tn_in(&t, dt, xs, gx);
        run(&t, NULL, dt, 0);
        free(gx);
    }
    free(x); free(y); free(dy);
}

static void test_pool3d(void **s)
{
    (void)s;
    NEED_CL();
    for (size_t i = 0; i < sizeof pools / sizeof *pools; i++)
        for (int max = 0; max < 2; max++) {
            pool_case(&pools[i], DG_F32, max);
            if (g_dev.info.fp64 && max)
                pool_case(&pools[i], DG_F64, max);
        }
}

static void lrn_attrs(tnode *t, int64_t r, double bias, double alpha,
                      double beta)
{
    assert_int_equal(dgc_node_set_int(t->n, "depth_radius", r), 0);
    assert_int_equal(dgc_node_set_float(t->n, "bias", bias), 0);
    assert_int_equal(dgc_node_set_float(t->n, "alpha", alpha), 0);
    assert_int_equal(dgc_node_set_float(t->n, "beta", beta), 0);
}

/* LRN of x, then LRNGrad (dy, x, that output) */
static void lrn_case(dg_shape xs, int64_t r, double bias, double alpha,
                     double beta)
{
    double *x = rnd(ne(&xs), -2, 2), *dy = rnd(ne(&xs), -1, 1);
    tnode t;
    tn_init(&t, "LRN");
    lrn_attrs(&t, r, bias, alpha, beta);
    tn_in(&t, DG_F32, xs, x);
    double *y = run(&t, &xs, DG_F32, 1);
    tn_init(&t, "LRNGrad");
    lrn_attrs(&t, r, bias, alpha, beta);
    tn_in(&t, DG_F32, xs, dy);
    tn_in(&t, DG_F32, xs, x);
    tn_in(&t, DG_F32, xs, y);
    run(&t, &xs, DG_F32, 0);
    free(x); free(dy); free(y);
}

static void test_lrn(void **s)
{
    (void)s;
    NEED_CL();
    lrn_case(shp(4, 2, 3, 4, 8), 5, 1.0, 1.0, 0.5);
    lrn_case(shp(4, 1, 2, 3, 7), 2, 2.0, 0.1, 0.75);
    lrn_case(shp(4, 1, 1, 2, 3), 0, 0.5, 1.0, 1.0);
    lrn_case(shp(4, 2, 3, 2, 70), 3, 1.5, 0.3, 0.6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv3d),
        cmocka_unit_test(test_pool3d),
        cmocka_unit_test(test_lrn),
    };
    return cmocka_run_group_tests(tests, cl_test_setup, cl_test_teardown);
}
