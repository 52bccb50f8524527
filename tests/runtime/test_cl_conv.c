/*
 * test_cl_conv.c -- every OpenCL kernel of TF's CNN ops (Conv2D and
 * DepthwiseConv2dNative with their backprops, MaxPool / AvgPool and their
 * gradients, FusedBatchNormV3 and its gradient) against the CPU kernel on
 * the same inputs (tn_run), which test_kernels_cpu_conv checks against
 * naive references: NHWC and NCHW, strides, dilations, SAME / VALID /
 * EXPLICIT padding, odd sizes, float32 and float64, and a batch big enough
 * for the GEMM path to work in slices.
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
#include "dg_alloc.h"
#include "infer.h"
#include "infer_nn.h"
#include "cnn_cases.h"

static dg_shape s4(const ccase *c, int64_t N, int64_t H, int64_t W, int64_t C)
{
    dg_shape s;
    dgc_nn_shape4(c->nchw, N, H, W, C, &s);
    return s;
}

/* output types from the op's own inference, then run and compare */
static void run(tnode *t)
{
    dgc_ttype in[8], out[6];
    for (int i = 0; i < t->n_in; i++) {
        in[i].dtype = t->in[i].dtype;
        in[i].shape = t->in[i].shape;
    }
    char msg[256] = "";
    const dgc_op_def *d = &dgc_ops[t->n->op];
    if (dgc_op_infer[t->n->op](t->n, in, t->n_in, out, msg, sizeof msg))
        fail_msg("%s: infer: %s", d->name, msg);
    for (int i = 0; i < d->n_out; i++)
        tn_out(t, out[i].dtype, out[i].shape);
    assert_int_equal(tn_run(t), DG_OK);
    tn_free(t);
}

static void conv_case(const ccase *c, dg_dtype dt, int int_sizes)
{
    dgc_nn_geom g;
    char msg[200];
    dg_shape xs = s4(c, c->N, c->H, c->W, c->C);
    dg_shape ws = shp(4, (int)c->KH, (int)c->KW, (int)c->C, (int)c->OC);
    tnode t;
    const char *ops[3][2] = {
        {"Conv2D", "DepthwiseConv2dNative"},
        {"Conv2DBackpropInput", "DepthwiseConv2dNativeBackpropInput"},
        {"Conv2DBackpropFilter", "DepthwiseConv2dNativeBackpropFilter"}};
    tn_init(&t, ops[0][c->depthwise]);
    cc_attrs(t.n, c, 0);
    assert_int_equal(dgc_nn_geom_init(t.n, c->depthwise ? DGC_NN_DWCONV
                                                         : DGC_NN_CONV,
                                      &xs, &ws, &g, msg, sizeof msg), 0);
    dg_shape ys = s4(c, c->N, g.OH, g.OW, g.OC);
    double *x = rnd(ne(&xs), -1, 1), *w = rnd(ne(&ws), -1, 1),
           *dy = rnd(ne(&ys), -1, 1);
    tn_in(&t, dt, xs, x);
    tn_in(&t, dt, ws, w);
    run(&t);

    double sz[4];
    tn_init(&t, ops[1][c->depthwise]);
    cc_attrs(t.n, c, 0);
    if (int_sizes) {
        for (int i = 0; i < 4; i++)
            sz[i] = (double)xs.dims[i];
        assert_int_equal(dgc_node_set_shape(t.n, "_sizes", &xs), 0);
        tn_in(&t, DG_I32, shp(1, 4), sz);
    } else {
        tn_in(&t, dt, xs, x);
    }
    tn_in(&t, dt, ws, w);
    tn_in(&t, dt, ys, dy);
    run(&t);

    tn_init(&t, ops[2][c->depthwise]);
    cc_attrs(t.n, c, 0);
    tn_in(&t, dt, xs, x);
    if (int_sizes) {
        for (int i = 0; i < 4; i++)
            sz[i] = (double)ws.dims[i];
        assert_int_equal(dgc_node_set_shape(t.n, "_sizes", &ws), 0);
        tn_in(&t, DG_I32, shp(1, 4), sz);
    } else {
        tn_in(&t, dt, ws, w);
    }
    tn_in(&t, dt, ys, dy);
    run(&t);
    free(x); free(w); free(dy);
}

static void test_conv(void **s)
{
    (void)s;
    NEED_CL();
    /* DGRUN_TEST_SMALL: a simulator (Oclgrind) runs the small cases only */
    const char *small = getenv("DGRUN_TEST_SMALL");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (small && *small && cases[i].N >= 8)
            continue;
        conv_case(&cases[i], DG_F32, (int)(i % 2));
        if (g_dev.info.fp64 && cases[i].N < 8)
            conv_case(&cases[i], DG_F64, (int)((i + 1) % 2));
    }
}

static void pool_case(const ccase *c, dg_dtype dt, int max)
{
    dg_shape xs = s4(c, c->N, c->H, c->W, c->C);
    dgc_nn_geom g;
    char msg[200];
    tnode t;
    tn_init(&t, max ? "MaxPool" : "AvgPool");
    cc_attrs(t.n, c, 1);
    assert_int_equal(dgc_nn_geom_init(t.n, DGC_NN_POOL, &xs, NULL, &g, msg,
                                      sizeof msg), 0);
    dg_shape ys = s4(c, c->N, g.OH, g.OW, c->C);
    double *x = rnd(ne(&xs), -1, 1), *dy = rnd(ne(&ys), -1, 1);
    for (int64_t i = 0; i < ne(&xs); i += 5)
        x[i] = 0.25; /* ties: the first maximum takes dy */
    tn_in(&t, dt, xs, x);
    run(&t);
    /* the forward output for MaxPoolGrad, from the CPU's definition */
    double *y = rnd(ne(&ys), -1, 1);
    tn_init(&t, max ? "MaxPoolGrad" : "AvgPoolGrad");
    cc_attrs(t.n, c, 1);
    tn_in(&t, dt, xs, x);
    if (max)
        tn_in(&t, dt, ys, y); /* not read by either kernel */
    tn_in(&t, dt, ys, dy);
    run(&t);
    free(x); free(dy); free(y);
}

static void test_pool(void **s)
{
    (void)s;
    NEED_CL();
    for (size_t i = 0; i < sizeof pools / sizeof *pools; i++)
        for (int max = 0; max < 2; max++) {
            if (!max && strcmp(pools[i].pad, "EXPLICIT") == 0)
                continue;
            pool_case(&pools[i], DG_F32, max);
            if (g_dev.info.fp64)
                pool_case(&pools[i], DG_F64, max);
        }
}

static void bn_case(int nchw, int train, double factor, dg_dtype dt)
{
    ccase lay;
    memset(&lay, 0, sizeof lay);
    lay.nchw = nchw;
    int C = 5;
    dg_shape xs = s4(&lay, 3, 4, 3, C), cs = shp(1, C), es = shp(1, 0);
    double *x = rnd(ne(&xs), -2, 2), *dy = rnd(ne(&xs), -1, 1),
           *sc = rnd(C, 0.5, 1.5), *of = rnd(C, -1, 1), *m = rnd(C, -1, 1),
           *v = rnd(C, 0.5, 2);
    tnode t;
    tn_init(&t, "FusedBatchNormV3");
    cc_set_str(t.n, "data_format", nchw ? "NCHW" : "NHWC");
    assert_int_equal(dgc_node_set_bool(t.n, "is_training", train), 0);
    assert_int_equal(dgc_node_set_float(t.n, "epsilon", 1e-3), 0);
    assert_int_equal(dgc_node_set_float(t.n, "exponential_avg_factor",
                                        factor), 0);
    tn_in(&t, dt, xs, x);
    tn_in(&t, dt, cs, sc);
    tn_in(&t, dt, cs, of);
    int empty = train && factor == 1.0; /* TF passes empty mean / variance */
    tn_in(&t, dt, empty ? es : cs, m);
    tn_in(&t, dt, empty ? es : cs, v);
    run(&t);
    tn_init(&t, "FusedBatchNormGradV3");
    cc_set_str(t.n, "data_format", nchw ? "NCHW" : "NHWC");
    assert_int_equal(dgc_node_set_bool(t.n, "is_training", train), 0);
    assert_int_equal(dgc_node_set_float(t.n, "epsilon", 1e-3), 0);
    tn_in(&t, dt, xs, dy);
    tn_in(&t, dt, xs, x);
    tn_in(&t, dt, cs, sc);
    tn_in(&t, dt, cs, m);
    tn_in(&t, dt, cs, v);
    tn_in(&t, dt, es, NULL);
    run(&t);
    free(x); free(dy); free(sc); free(of); free(m); free(v);
}

static void test_fused_bn(void **s)
{
    (void)s;
    NEED_CL();
    for (int nchw = 0; nchw < 2; nchw++)
        for (int train = 0; train < 2; train++) {
            bn_case(nchw, train, 1.0, DG_F32);
            if (train)
                bn_case(nchw, train, 0.25, DG_F32);
            if (g_dev.info.fp64)
                bn_case(nchw, train, 1.0, DG_F64);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_fused_bn),
    };
    return cmocka_run_group_tests(tests, cl_test_setup, cl_test_teardown);
}
