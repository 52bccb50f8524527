/*
 * test_kernels_cpu_nn.c -- unit tests of the CPU kernels, part 2: Softmax
 * and the cross entropies (including the out-of-range label error), the
 * state ops (Assign*, Apply*, AssignMovingAvg), gradient helper ops
 * (SumTo, BroadcastLike, MaxGrad, *Grad), BatchNorm against finite
 * differences, and intra-op parallel results equal to inline ones.
 */
#include "kernels_cpu_harness.h"

/* ---- softmax and cross entropy ------------------------------------------- */

static void test_softmax_xent(void **state)
{
    (void)state;
    int64_t d[2] = {3, 4};
    double x[12], lab[12], sm[12];
    for (int t = DG_F32; t <= DG_F64; t++) {
        fill_vals(x, 12, (dg_dtype)t, -3, 3);
        x[0] = 1000; /* stability */
        for (int i = 0; i < 12; i++)
            lab[i] = 0;
        lab[1] = 1;
        lab[4] = 0.25;
        lab[7] = 0.75;
        lab[11] = 1;
        for (int r = 0; r < 3; r++) {
            double m = -INFINITY, s = 0;
            for (int c = 0; c < 4; c++)
                m = fmax(m, x[r * 4 + c]);
            for (int c = 0; c < 4; c++)
                s += exp(x[r * 4 + c] - m);
            for (int c = 0; c < 4; c++)
                sm[r * 4 + c] = exp(x[r * 4 + c] - m) / s;
        }
        kt t1;
        kt_init(&t1, "Softmax");
        kt_in(&t1, (dg_dtype)t, 2, d, x);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int i = 0; i < 12; i++)
            assert_close(kt_out(&t1, 0, i), sm[i], tol((dg_dtype)t), "softmax");
        kt_free(&t1);

        kt_init(&t1, "SoftmaxCrossEntropyWithLogits");
        kt_in(&t1, (dg_dtype)t, 2, d, x);
        kt_in(&t1, (dg_dtype)t, 2, d, lab);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int r = 0; r < 3; r++) {
            double l = 0;
            for (int c = 0; c < 4; c++)
                if (lab[r * 4 + c] != 0)
                    l -= lab[r * 4 + c] * log(sm[r * 4 + c]);
            assert_close(kt_out(&t1, 0, r), l, tol((dg_dtype)t) * 10, "xent loss");
            for (int c = 0; c < 4; c++)
                assert_close(kt_out(&t1, 1, r * 4 + c), sm[r * 4 + c] - lab[r * 4 + c],
                             tol((dg_dtype)t), "xent backprop");
        }
        kt_free(&t1);

        for (int lt = DG_I32; lt <= DG_I64; lt++) {
            int64_t d1[1] = {3};
            double li[3] = {1, 0, 3};
            kt_init(&t1, "SparseSoftmaxCrossEntropyWithLogits");
            kt_in(&t1, (dg_dtype)t, 2, d, x);
            kt_in(&t1, (dg_dtype)lt, 1, d1, li);
            assert_int_equal(kt_run(&t1), DG_OK);
            for (int r = 0; r < 3; r++) {
                assert_close(kt_out(&t1, 0, r), -log(sm[r * 4 + (int)li[r]]),
                             tol((dg_dtype)t) * 10, "sparse loss");
                for (int c = 0; c < 4; c++)
                    assert_close(kt_out(&t1, 1, r * 4 + c),
                                 sm[r * 4 + c] - (c == li[r]), tol((dg_dtype)t),
                                 "sparse backprop");
            }
            kt_free(&t1);
            double bad[3] = {1, 4, 0};
            kt_init(&t1, "SparseSoftmaxCrossEntropyWithLogits");
            kt_in(&t1, (dg_dtype)t, 2, d, x);
            kt_in(&t1, (dg_dtype)lt, 1, d1, bad);
            assert_int_equal(kt_run(&t1), DG_E_RUNTIME);
            assert_non_null(strstr(t1.err.msg, "node 'node1'"));
            assert_non_null(strstr(t1.err.msg, "label value of 4"));
            kt_free(&t1);
        }

        /* SoftmaxGrad(y, dy) */
        double dy[12];
        fill_vals(dy, 12, (dg_dtype)t, -1, 1);
        kt_init(&t1, "SoftmaxGrad");
        kt_in(&t1, (dg_dtype)t, 2, d, sm);
        kt_in(&t1, (dg_dtype)t, 2, d, dy);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int r = 0; r < 3; r++) {
            double s = 0;
            for (int c = 0; c < 4; c++)
                s += dy[r * 4 + c] * sm[r * 4 + c];
            for (int c = 0; c < 4; c++)
                assert_close(kt_out(&t1, 0, r * 4 + c),
                             (dy[r * 4 + c] - s) * sm[r * 4 + c],
                             tol((dg_dtype)t), "softmax grad");
        }
        kt_free(&t1);
    }
}

/* ---- state ops ----------------------------------------------------------- */

static void test_state_ops(void **state)
{
    (void)state;
    int64_t d[1] = {3};
    double w0[3] = {1, -2, 3}, g[3] = {0.5, -1, 2}, acc0[3] = {0.1, 0.2, 0.3};
    for (int t = DG_F32; t <= DG_F64; t++) {
        double e = tol((dg_dtype)t);
        kt t1;
        /* Assign / AssignAdd / AssignSub */
        const char *ops[3] = {"Assign", "AssignAdd", "AssignSub"};
        for (int o = 0; o < 3; o++) {
            kt_init(&t1, ops[o]);
            kt_in(&t1, (dg_dtype)t, 1, d, w0);
            kt_in(&t1, (dg_dtype)t, 1, d, g);
            assert_int_equal(kt_run(&t1), DG_OK);
            assert_ptr_equal(t1.out[0].buf, t1.in[0].buf);
            for (int i = 0; i < 3; i++)
                assert_close(get_elem(t1.in[0].buf->host, (dg_dtype)t, i),
                             o == 0 ? g[i] : o == 1 ? w0[i] + g[i] : w0[i] - g[i],
                             e, ops[o]);
            kt_free(&t1);
        }
        /* ApplyGradientDescent */
        double lr = 0.1;
        kt_init(&t1, "ApplyGradientDescent");
        kt_in(&t1, (dg_dtype)t, 1, d, w0);
        kt_in(&t1, (dg_dtype)t, 0, NULL, &lr);
        kt_in(&t1, (dg_dtype)t, 1, d, g);
        assert_int_equal(kt_run(&t1), DG_OK);
        assert_ptr_equal(t1.out[0].buf, t1.in[0].buf);
        for (int i = 0; i < 3; i++)
            assert_close(kt_out(&t1, 0, i), w0[i] - lr * g[i], e, "gd");
        kt_free(&t1);
        /* ApplyMomentum, plain and Nesterov */
        for (int nes = 0; nes < 2; nes++) {
            double mom = 0.9;
            kt_init(&t1, "ApplyMomentum");
            kt_in(&t1, (dg_dtype)t, 1, d, w0);
            kt_in(&t1, (dg_dtype)t, 1, d, acc0);
            kt_in(&t1, (dg_dtype)t, 0, NULL, &lr);
            kt_in(&t1, (dg_dtype)t, 1, d, g);
            kt_in(&t1, (dg_dtype)t, 0, NULL, &mom);
            dgc_node_set_bool(NODE(&t1), "use_nesterov", nes);
            assert_int_equal(kt_run(&t1), DG_OK);
            for (int i = 0; i < 3; i++) {
                double a = acc0[i] * mom + g[i];
                double w = nes ? w0[i] - (lr * g[i] + lr * mom * a) : w0[i] - lr * a;
                assert_close(get_elem(t1.in[1].buf->host, (dg_dtype)t, i), a, e, "accum");
                assert_close(kt_out(&t1, 0, i), w, e, "momentum");
            }
            kt_free(&t1);
        }
        /* ApplyAdam */
        double m0[3] = {0.1, 0, -0.1}, v0[3] = {0.01, 0.02, 0.03};
        double b1p = 0.81, b2p = 0.998, b1 = 0.9, b2 = 0.999, eps = 1e-8;
        kt_init(&t1, "ApplyAdam");
        kt_in(&t1, (dg_dtype)t, 1, d, w0);
        kt_in(&t1, (dg_dtype)t, 1, d, m0);
        kt_in(&t1, (dg_dtype)t, 1, d, v0);
        kt_in(&t1, (dg_dtype)t, 0, NULL, &b1p);
        kt_in(&t1, (dg_dtype)t, 0, NULL, &b2p);
        kt_in(&t1, (dg_dtype)t, 0, NULL, &lr);
        kt_in(&t1, (dg_dtype)t, 0, NULL, &b1);
        kt_in(&t1, (dg_dtype)t, 0, NULL, &b2);
        kt_in(&t1, (dg_dtype)t, 0, NULL, &eps);
        kt_in(&t1, (dg_dtype)t, 1, d, g);
        assert_int_equal(kt_run(&t1), DG_OK);
        double lrt = lr * sqrt(1 - b2p) / (1 - b1p);
        for (int i = 0; i < 3; i++) {
            double m = b1 * m0[i] + (1 - b1) * g[i];
            double v = b2 * v0[i] + (1 - b2) * g[i] * g[i];
            assert_close(get_elem(t1.in[1].buf->host, (dg_dtype)t, i), m, e, "adam m");
            assert_close(get_elem(t1.in[2].buf->host, (dg_dtype)t, i), v, e, "adam v");
            assert_close(kt_out(&t1, 0, i), w0[i] - lrt * m / (sqrt(v) + eps),
                         e * 10, "adam var");
        }
        kt_free(&t1);
        /* AssignMovingAvg */
        kt_init(&t1, "AssignMovingAvg");
        kt_in(&t1, (dg_dtype)t, 1, d, w0);
        kt_in(&t1, (dg_dtype)t, 1, d, g);
        dgc_node_set_float(NODE(&t1), "decay", 0.9);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int i = 0; i < 3; i++)
            assert_close(kt_out(&t1, 0, i), w0[i] - (w0[i] - g[i]) * 0.1, e, "mavg");
        kt_free(&t1);
    }
}

/* ---- gradient helper ops ------------------------------------------------- */

static void test_grad_helpers(void **state)
{
    (void)state;
    for (int t = 0; t < DG_BOOL; t++) {
        /* SumTo: [2,3,4] -> [3,1] */
        int64_t dx[3] = {2, 3, 4}, dl[2] = {3, 1};
        double x[24];
        fill_vals(x, 24, (dg_dtype)t, -5, 5);
        kt t1;
        kt_init(&t1, "SumTo");
        kt_in(&t1, (dg_dtype)t, 3, dx, x);
        kt_in(&t1, (dg_dtype)t, 2, dl, NULL);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int j = 0; j < 3; j++) {
            double s = 0;
            for (int i = 0; i < 2; i++)
                for (int q = 0; q < 4; q++)
                    s += get_elem(t1.in[0].buf->host, (dg_dtype)t, (i * 3 + j) * 4 + q);
            assert_close(kt_out(&t1, 0, j), s, tol((dg_dtype)t), "SumTo");
        }
        kt_free(&t1);

        /* BroadcastLike: x = reduce over axis 1 of [2,3,4] (no keepdims) */
        for (int mean = 0; mean < 2; mean++) {
            int64_t dr[2] = {2, 4};
            double r[8];
            fill_vals(r, 8, (dg_dtype)t, -9, 9);
            kt_init(&t1, "BroadcastLike");
            kt_in(&t1, (dg_dtype)t, 2, dr, r);
            kt_in(&t1, (dg_dtype)t, 3, dx, NULL);
            dgc_node_set_int(NODE(&t1), "axis", 1);
            dgc_node_set_bool(NODE(&t1), "mean", mean);
            assert_int_equal(kt_run(&t1), DG_OK);
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 3; j++)
                    for (int q = 0; q < 4; q++) {
                        double v = get_elem(t1.in[0].buf->host, (dg_dtype)t, i * 4 + q);
                        double want = !mean ? v
                                      : (t == DG_I32 || t == DG_I64) ? (double)((int64_t)v / 3)
                                      : v / 3;
                        assert_close(kt_out(&t1, 0, (i * 3 + j) * 4 + q), want,
                                     tol((dg_dtype)t), "BroadcastLike");
                    }
            kt_free(&t1);
        }

        /* MaxGrad with ties: x [2,3] max over axis 1 */
        int64_t d2[2] = {2, 3}, d1[1] = {2};
        double xm[6] = {1, 4, 4, 7, 2, 3}, y[2] = {4, 7}, dy[2] = {8, 6};
        kt_init(&t1, "MaxGrad");
        kt_in(&t1, (dg_dtype)t, 2, d2, xm);
        kt_in(&t1, (dg_dtype)t, 1, d1, y);
        kt_in(&t1, (dg_dtype)t, 1, d1, dy);
        dgc_node_set_int(NODE(&t1), "axis", 1);
        assert_int_equal(kt_run(&t1), DG_OK);
        double want[6] = {0, 4, 4, 6, 0, 0};
        for (int i = 0; i < 6; i++)
            assert_close(kt_out(&t1, 0, i), want[i], 1e-12, "MaxGrad");
        kt_free(&t1);

        /* ReluGrad(dy, x) */
        double g6[6] = {1, 2, 3, 4, 5, 6}, x6[6] = {-1, 0, 1, 2, -3, 4};
        kt_init(&t1, "ReluGrad");
        kt_in(&t1, (dg_dtype)t, 2, d2, g6);
        kt_in(&t1, (dg_dtype)t, 2, d2, x6);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int i = 0; i < 6; i++)
            assert_true(kt_out(&t1, 0, i) == (x6[i] > 0 ? g6[i] : 0));
        kt_free(&t1);
    }
    for (int t = DG_F32; t <= DG_F64; t++) {
        int64_t d[1] = {4};
        double y[4] = {0.1, 0.5, -0.3, 0.9}, dy[4] = {1, -2, 0.5, 3};
        for (int o = 0; o < 2; o++) {
            kt t1;
            kt_init(&t1, o ? "TanhGrad" : "SigmoidGrad");
            kt_in(&t1, (dg_dtype)t, 1, d, y);
            kt_in(&t1, (dg_dtype)t, 1, d, dy);
            assert_int_equal(kt_run(&t1), DG_OK);
            for (int i = 0; i < 4; i++) {
                double yy = get_elem(t1.in[0].buf->host, (dg_dtype)t, i);
                double want = o ? dy[i] * (1 - yy * yy) : dy[i] * yy * (1 - yy);
                assert_close(kt_out(&t1, 0, i), want, tol((dg_dtype)t), "act grad");
            }
            kt_free(&t1);
        }
    }
}

/* ---- BatchNorm: forward vs reference, backward vs finite differences ---- */

#define BN_R 4
#define BN_C 3

static void bn_ref(const double *x, const double *sc, const double *of,
                   double eps, double *y, double *mean, double *var)
{
    for (int c = 0; c < BN_C; c++) {
        double m = 0, v = 0;
        for (int r = 0; r < BN_R; r++)
            m += x[r * BN_C + c];
        m /= BN_R;
        for (int r = 0; r < BN_R; r++)
            v += (x[r * BN_C + c] - m) * (x[r * BN_C + c] - m);
        v /= BN_R;
        mean[c] = m;
        var[c] = v;
        for (int r = 0; r < BN_R; r++)
            y[r * BN_C + c] = (x[r * BN_C + c] - m) / sqrt(v + eps) * sc[c] + of[c];
    }
}

static void test_batchnorm(void **state)
{
    (void)state;
    int64_t dx[2] = {BN_R, BN_C}, dc[1] = {BN_C};
    double x[BN_R * BN_C], sc[BN_C] = {1.5, -0.5, 2}, of[BN_C] = {0.1, 0.2, -0.3};
    double dy[BN_R * BN_C], y[BN_R * BN_C], mean[BN_C], var[BN_C];
    double eps = 1e-3;
    fill_vals(x, BN_R * BN_C, DG_F64, -2, 2);
    fill_vals(dy, BN_R * BN_C, DG_F64, -1, 1);
    bn_ref(x, sc, of, eps, y, mean, var);
    kt t1;
    kt_init(&t1, "BatchNorm");
    kt_in(&t1, DG_F64, 2, dx, x);
    kt_in(&t1, DG_F64, 1, dc, sc);
    kt_in(&t1, DG_F64, 1, dc, of);
    assert_int_equal(kt_run(&t1), DG_OK);
    for (int i = 0; i < BN_R * BN_C; i++)
        assert_close(kt_out(&t1, 0, i), y[i], 1e-10, "bn y");
    for (int c = 0; c < BN_C; c++) {
        assert_close(kt_out(&t1, 1, c), mean[c], 1e-10, "bn mean");
        assert_close(kt_out(&t1, 2, c), var[c], 1e-10, "bn var");
    }
    kt_free(&t1);

    kt_init(&t1, "BatchNormGrad");
    kt_in(&t1, DG_F64, 2, dx, dy);
    kt_in(&t1, DG_F64, 2, dx, x);
    kt_in(&t1, DG_F64, 1, dc, sc);
    kt_in(&t1, DG_F64, 1, dc, mean);
    kt_in(&t1, DG_F64, 1, dc, var);
    assert_int_equal(kt_run(&t1), DG_OK);
    /* L = sum(dy * BN(x, scale, offset)); central differences */
    const double h = 1e-6;
    double xp[BN_R * BN_C], sp[BN_C], op[BN_C], yy[BN_R * BN_C], mm[BN_C], vv[BN_C];
    for (int i = 0; i < BN_R * BN_C + 2 * BN_C; i++) {
        double lp = 0, lm = 0;
        for (int s = 0; s < 2; s++) {
            memcpy(xp, x, sizeof x);
            memcpy(sp, sc, sizeof sc);
            memcpy(op, of, sizeof of);
            double dlt = s ? -h : h;
            if (i < BN_R * BN_C)
                xp[i] += dlt;
            else if (i < BN_R * BN_C + BN_C)
                sp[i - BN_R * BN_C] += dlt;
            else
                op[i - BN_R * BN_C - BN_C] += dlt;
            bn_ref(xp, sp, op, eps, yy, mm, vv);
            double l = 0;
            for (int q = 0; q < BN_R * BN_C; q++)
                l += dy[q] * yy[q];
            if (s)
                lm = l;
            else
                lp = l;
        }
        double num = (lp - lm) / (2 * h);
        double got = i < BN_R * BN_C ? kt_out(&t1, 0, i)
                     : i < BN_R * BN_C + BN_C ? kt_out(&t1, 1, i - BN_R * BN_C)
                     : kt_out(&t1, 2, i - BN_R * BN_C - BN_C);
        assert_close(got, num, 1e-5, "bn grad");
    }
    kt_free(&t1);
}

/* ---- intra-op parallelism: pooled results equal inline results -------- */

static void par_case(const char *op, int n_in, int rank, const int64_t *dims,
                     int rank2, const int64_t *dims2, const int64_t *axes,
                     int n_axes)
{
    shp s1 = {rank, {0}}, s2 = {rank2, {0}};
    memcpy(s1.d, dims, sizeof(int64_t) * (size_t)rank);
    if (dims2) /* unary cases pass dims2 = NULL: memcpy(_, NULL, 0) is UB */
        memcpy(s2.d, dims2, sizeof(int64_t) * (size_t)rank2);
    int64_t n1 = numel(&s1), n2 = numel(&s2);
    double *a = dg_malloc(sizeof(double) * (size_t)n1);
    double *b = dg_malloc(sizeof(double) * (size_t)(n2 ? n2 : 1));
    fill_vals(a, n1, DG_F64, 0.5, 2);
    fill_vals(b, n2, DG_F64, 0.5, 2);
    kt r[2];
    for (int p = 0; p < 2; p++) {
        struct dgr_pool *saved = g_pool;
        if (!p)
            g_pool = NULL;
        kt_init(&r[p], op);
        kt_in(&r[p], DG_F64, rank, dims, a);
        if (n_in > 1)
            kt_in(&r[p], DG_F64, rank2, dims2, b);
        if (n_axes)
            dgc_node_set_ints(NODE(&r[p]), "axis", axes, n_axes);
        assert_int_equal(kt_run(&r[p]), DG_OK);
        g_pool = saved;
    }
    int64_t n = dg_shape_numel(&r[0].out[0].shape);
    assert_int_equal(n, dg_shape_numel(&r[1].out[0].shape));
    const dgr_value *o0 = r[0].n_in && !strncmp(op, "Assign", 6) ? &r[0].in[0] : &r[0].out[0];
    const dgr_value *o1 = r[1].n_in && !strncmp(op, "Assign", 6) ? &r[1].in[0] : &r[1].out[0];
    for (int64_t i = 0; i < n; i++)
        assert_close(get_elem(o1->buf->host, DG_F64, i),
                     get_elem(o0->buf->host, DG_F64, i), 1e-12, op);
    kt_free(&r[0]);
    kt_free(&r[1]);
    dg_free(a);
    dg_free(b);
}

static void test_parallel(void **state)
{
    (void)state;
    dg_error err;
    g_pool = dgr_pool_new(4, &err);
    assert_non_null(g_pool);
    int64_t big[3] = {40, 30, 100}, row[1] = {100}, col[3] = {40, 1, 1};
    int64_t ax0[1] = {0}, ax1[1] = {1}, ax2[1] = {2}, ax02[2] = {0, 2};
    par_case("Add", 2, 3, big, 1, row, NULL, 0);
    par_case("Mul", 2, 3, big, 3, col, NULL, 0);
    par_case("Div", 2, 3, big, 3, big, NULL, 0);
    par_case("Exp", 1, 3, big, 0, NULL, NULL, 0);
    par_case("AddN", 2, 3, big, 3, big, NULL, 0);
    par_case("AssignAdd", 2, 3, big, 3, big, NULL, 0);
    par_case("Softmax", 1, 3, big, 0, NULL, NULL, 0);
    par_case("Sum", 1, 3, big, 0, NULL, NULL, 0);
    par_case("Sum", 1, 3, big, 0, NULL, ax0, 1);
    par_case("Mean", 1, 3, big, 0, NULL, ax1, 1);
    par_case("Max", 1, 3, big, 0, NULL, ax2, 1);
    par_case("Sum", 1, 3, big, 0, NULL, ax02, 2);
    par_case("Max", 1, 3, big, 0, NULL, NULL, 0);
    dgr_pool_free(g_pool);
    g_pool = NULL;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_state_ops),
        cmocka_unit_test(test_grad_helpers),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_parallel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
