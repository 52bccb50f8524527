/*
 * test_cl.c -- every OpenCL kernel against a reference computed here (in
 * double, NumPy semantics) and against the CPU kernel (tn_run): random and
 * odd shapes, broadcasting, every reduction axis set, all MatMul transpose
 * flags, float32 and float64.  Skips when there is no OpenCL platform.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_testlib.h"

/* ---- reference broadcasting ---------------------------------------------- */

static int64_t bidx(int64_t i, const dg_shape *out, const dg_shape *in)
{
    int64_t off = 0, st = 1;
    for (int k = out->rank - 1; k >= 0; k--) {
        int64_t c = i % out->dims[k];
        i /= out->dims[k];
        int ik = k - (out->rank - in->rank);
        if (ik >= 0) {
            if (in->dims[ik] != 1)
                off += c * st;
            st *= in->dims[ik];
        }
    }
    return off;
}

static double ref_bin(const char *op, double a, double b)
{
    if (!strcmp(op, "Add") || !strcmp(op, "BiasAdd")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) return a / b;
    if (!strcmp(op, "Pow")) return pow(a, b);
    if (!strcmp(op, "Maximum")) return a > b ? a : b;
    if (!strcmp(op, "Minimum")) return a < b ? a : b;
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "ReluGrad")) return b > 0 ? a : 0;
    if (!strcmp(op, "SigmoidGrad")) return b * a * (1 - a);
    if (!strcmp(op, "TanhGrad")) return b * (1 - a * a);
    return NAN;
}

static double ref_un(const char *op, double v)
{
    if (!strcmp(op, "Neg")) return -v;
    if (!strcmp(op, "Abs")) return fabs(v);
    if (!strcmp(op, "Sin")) return sin(v);
    if (!strcmp(op, "Cos")) return cos(v);
    if (!strcmp(op, "Exp")) return exp(v);
    if (!strcmp(op, "Log")) return log(v);
    if (!strcmp(op, "Sqrt")) return sqrt(v);
    if (!strcmp(op, "Square")) return v * v;
    if (!strcmp(op, "Tanh")) return tanh(v);
    if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-v));
    if (!strcmp(op, "Relu")) return v > 0 ? v : 0;
    if (!strcmp(op, "Identity")) return v;
    return NAN;
}

static double tol_of(dg_dtype t) { return t == DG_F64 ? 1e-12 : 2e-5; }

static int fp64(void) { return g_dev.info.fp64; }

/* ---- tests: elementwise -------------------------------------------------- */

static void run_unary(const char *op, dg_dtype dt, dg_shape s)
{
    tnode t;
    tn_init(&t, op);
    int64_t n = ne(&s);
    int pos = !strcmp(op, "Log") || !strcmp(op, "Sqrt");
    double *x = rnd(n, pos ? 0.1 : -3, 3);
    tn_in(&t, dt, s, x);
    tn_out(&t, dt, s);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++)
        w[i] = ref_un(op, (dt == DG_F32 ? (double)(float)x[i] : x[i]));
    check_out(&t, 0, w, tol_of(dt), op);
    free(x);
    free(w);
    tn_free(&t);
}

static void test_unary(void **state)
{
    (void)state;
    NEED_CL();
    const char *ops[] = {"Neg", "Abs", "Sin", "Cos", "Exp", "Log", "Sqrt",
                         "Square", "Tanh", "Sigmoid", "Relu", "Identity"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        run_unary(ops[i], DG_F32, shp(2, 7, 37));
        run_unary(ops[i], DG_F32, shp(0));
        if (fp64())
            run_unary(ops[i], DG_F64, shp(1, 1001));
    }
}

static void run_binary(const char *op, dg_dtype dt, dg_shape sa, dg_shape sb,
                       dg_shape so)
{
    tnode t;
    tn_init(&t, op);
    int64_t na = ne(&sa), nb = ne(&sb), no = ne(&so);
    int pw = !strcmp(op, "Pow");
    double *a = rnd(na, pw ? 0.5 : -2, 2), *b = rnd(nb, -2, 2);
    if (!strcmp(op, "Div"))
        for (int64_t i = 0; i < nb; i++)
            b[i] = b[i] < 0 ? b[i] - 0.5 : b[i] + 0.5;
    if (!strcmp(op, "Equal"))
        for (int64_t i = 0; i < na; i++)
            a[i] = (i % 3 == 0 && nb) ? b[bidx(i, &sa, &sb) % nb] : a[i];
    if (dt == DG_F32) {
        for (int64_t i = 0; i < na; i++) a[i] = (float)a[i];
        for (int64_t i = 0; i < nb; i++) b[i] = (float)b[i];
    }
    tn_in(&t, dt, sa, a);
    tn_in(&t, dt, sb, b);
    dg_dtype odt = !strcmp(op, "Equal") ? DG_BOOL : dt;
    tn_out(&t, odt, so);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(no + 1));
    for (int64_t i = 0; i < no; i++)
        w[i] = ref_bin(op, a[bidx(i, &so, &sa)], b[bidx(i, &so, &sb)]);
    check_out(&t, 0, w, tol_of(dt), op);
    free(a);
    free(b);
    free(w);
    tn_free(&t);
}

static void test_binary(void **state)
{
    (void)state;
    NEED_CL();
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Maximum",
                         "Minimum", "Equal", "ReluGrad", "SigmoidGrad",
                         "TanhGrad"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        run_binary(ops[i], DG_F32, shp(2, 13, 29), shp(2, 13, 29), shp(2, 13, 29));
        run_binary(ops[i], DG_F32, shp(3, 3, 1, 5), shp(2, 4, 5), shp(3, 3, 4, 5));
        run_binary(ops[i], DG_F32, shp(0), shp(2, 3, 7), shp(2, 3, 7));
        run_binary(ops[i], DG_F32, shp(2, 5, 1), shp(0), shp(2, 5, 1));
        run_binary(ops[i], DG_F32, shp(4, 2, 1, 3, 1), shp(4, 1, 6, 1, 5),
                   shp(4, 2, 6, 3, 5));
        if (fp64())
            run_binary(ops[i], DG_F64, shp(2, 300, 1), shp(1, 7), shp(2, 300, 7));
    }
    run_binary("BiasAdd", DG_F32, shp(3, 2, 9, 11), shp(1, 11), shp(3, 2, 9, 11));
}

/* Replication ops (issue 13): the identity with one replica, and an error
 * (no collective runtime) with more, as on the CPU. */
static void test_collectives(void **state)
{
    (void)state;
    NEED_CL();
    dg_shape s = shp(2, 5, 3);
    double *x = rnd(15, -1, 1);
    for (int j = 0; j < 15; j++) x[j] = (float)x[j];
    const char *ops[] = {"AllReduce", "Broadcast"};
    for (int o = 0; o < 2; o++)
        for (int w = 1; w <= 2; w++) {
            tnode t;
            tn_init(&t, ops[o]);
            if (o == 0)
                dgc_node_set_str(t.n, "reduction", "mean");
            dgc_node_set_int(t.n, "replicas", w);
            tn_in(&t, DG_F32, s, x);
            tn_out(&t, DG_F32, s);
            if (w == 1) {
                assert_int_equal(tn_run(&t), DG_OK);
                check_out(&t, 0, x, 0, ops[o]);
            } else {
                assert_int_equal(tn_run(&t), DG_E_RUNTIME);
            }
            tn_free(&t);
        }
    free(x);
}

static void test_addn_fill_cast(void **state)
{
    (void)state;
    NEED_CL();
    dg_shape s = shp(2, 17, 3);
    tnode t;
    tn_init(&t, "AddN");
    double *x[4];
    for (int i = 0; i < 4; i++) {
        x[i] = rnd(51, -1, 1);
        for (int j = 0; j < 51; j++) x[i][j] = (float)x[i][j];
        tn_in(&t, DG_F32, s, x[i]);
    }
    tn_out(&t, DG_F32, s);
    assert_int_equal(tn_run(&t), DG_OK);
    double w[51];
    for (int j = 0; j < 51; j++)
        w[j] = x[0][j] + x[1][j] + x[2][j] + x[3][j];
    check_out(&t, 0, w, 1e-5, "AddN");
    tn_free(&t);

    const char *fills[] = {"ZerosLike", "OnesLike"};
    for (int f = 0; f < 2; f++) {
        tn_init(&t, fills[f]);
        tn_in(&t, DG_F32, s, x[0]);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        for (int j = 0; j < 51; j++) w[j] = f;
        check_out(&t, 0, w, 0, fills[f]);
        tn_free(&t);
    }
    for (int j = 0; j < 51; j++)
        x[0][j] = (float)(x[0][j] * 10 - (j % 4 == 0 ? x[0][j] * 10 : 0));
    for (int to = 0; to < DG_DTYPE_COUNT; to++) {
        tn_init(&t, "Cast");
        dgc_node_set_dtype(t.n, "dtype", (dg_dtype)to);
        tn_in(&t, DG_F32, s, x[0]);
        tn_out(&t, (dg_dtype)to, s);
        assert_int_equal(tn_run(&t), DG_OK);
        for (int j = 0; j < 51; j++)
            w[j] = to == DG_BOOL ? x[0][j] != 0
                 : to >= DG_I32 ? trunc(x[0][j]) : x[0][j];
        check_out(&t, 0, w, 1e-6, "Cast");
        tn_free(&t);
    }
    for (int i = 0; i < 4; i++)
        free(x[i]);
}

/* ---- tests: reductions --------------------------------------------------- */

static void ref_reduce(const double *x, const dg_shape *s, const int *mask,
                       int op, double *out, int64_t n_out)
{
    /* op: 0 Sum, 1 Mean, 2 Max, 3 Prod, 4 Min */
    for (int64_t o = 0; o < n_out; o++)
        out[o] = op == 2 ? -INFINITY : op == 4 ? INFINITY : op == 3 ? 1 : 0;
    int64_t cnt = 1;
    for (int d = 0; d < s->rank; d++)
        if (mask[d]) cnt *= s->dims[d];
    for (int64_t i = 0; i < ne(s); i++) {
        int64_t rem = i, o = 0, mul = 1;
        for (int d = s->rank - 1; d >= 0; d--) {
            int64_t c = rem % s->dims[d];
            rem /= s->dims[d];
            if (!mask[d]) {
                o += c * mul;
                mul *= s->dims[d];
            }
        }
        if (op == 2)
            out[o] = x[i] > out[o] ? x[i] : out[o];
        else if (op == 4)
            out[o] = x[i] < out[o] ? x[i] : out[o];
        else if (op == 3)
            out[o] *= x[i];
        else
            out[o] += x[i];
    }
    if (op == 1)
        for (int64_t o = 0; o < n_out; o++) out[o] /= (double)cnt;
}

static void run_reduce(const char *op, dg_dtype dt, dg_shape s, int bits,
                       int keep)
{
    int opi = !strcmp(op, "Sum") ? 0 : !strcmp(op, "Mean") ? 1
              : !strcmp(op, "Max") ? 2 : !strcmp(op, "Prod") ? 3 : 4;
    tnode t;
    tn_init(&t, op);
    int64_t axes[8], na = 0;
    int mask[8];
    dg_shape os = {0, {0}};
    for (int d = 0; d < s.rank; d++) {
        mask[d] = (bits >> d) & 1;
        if (mask[d])
            axes[na++] = d - (d % 2 ? s.rank : 0); /* some negative */
        if (!mask[d])
            os.dims[os.rank++] = s.dims[d];
        else if (keep)
            os.dims[os.rank++] = 1;
    }
    if (bits >= 0) {
        dgc_node_set_ints(t.n, "axis", axes, (int)na);
    } else {
        for (int d = 0; d < s.rank; d++) mask[d] = 1;
        os.rank = 0;
    }
    int64_t n = ne(&s), no = ne(&os);
    /* (Prod: factors near 1, so that 1000 of them stay finite) */
    double *x = opi == 3 ? rnd(n, 0.9, 1.1) : rnd(n, -2, 2);
    if (dt == DG_F32)
        for (int64_t i = 0; i < n; i++) x[i] = (float)x[i];
    tn_in(&t, dt, s, x);
    tn_out(&t, dt, os);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(no + 1));
    ref_reduce(x, &s, mask, opi, w, no);
    check_out(&t, 0, w, dt == DG_F32 ? 1e-5 : 1e-12, op);
    free(x);
    free(w);
    tn_free(&t);
}

static void test_reduce(void **state)
{
    (void)state;
    NEED_CL();
    const char *ops[] = {"Sum", "Mean", "Max", "Prod", "Min"};
    for (int o = 0; o < 5; o++) {
        for (int bits = 0; bits < 16; bits++)
            run_reduce(ops[o], DG_F32, shp(4, 3, 4, 5, 2), bits, bits & 1);
        run_reduce(ops[o], DG_F32, shp(2, 3, 1000), 2, 0);
        run_reduce(ops[o], DG_F32, shp(2, 777, 3), 1, 1);
        run_reduce(ops[o], DG_F32, shp(3, 2, 300, 5), -1, 0);
        if (fp64())
            run_reduce(ops[o], DG_F64, shp(3, 40, 3, 41), 5, 0);
    }
}

static void test_sum_to_broadcast_like_max_grad(void **state)
{
    (void)state;
    NEED_CL();
    /* SumTo: [4, 3, 5] -> like [3, 1] */
    dg_shape xs = shp(3, 4, 3, 5), ls = shp(2, 3, 1);
    tnode t;
    tn_init(&t, "SumTo");
    double *x = rnd(60, -1, 1), like[3] = {0, 0, 0};
    for (int i = 0; i < 60; i++) x[i] = (float)x[i];
    tn_in(&t, DG_F32, xs, x);
    tn_in(&t, DG_F32, ls, like);
    tn_out(&t, DG_F32, ls);
    assert_int_equal(tn_run(&t), DG_OK);
    double w[60];
    int mask[3] = {1, 0, 1};
    ref_reduce(x, &xs, mask, 0, w, 3);
    check_out(&t, 0, w, 1e-5, "SumTo");
    tn_free(&t);

    /* BroadcastLike: [3] (reduced over axes 0, 2 of [4, 3, 5]), mean */
    tn_init(&t, "BroadcastLike");
    int64_t ax[2] = {0, -1};
    dgc_node_set_ints(t.n, "axis", ax, 2);
    dgc_node_set_bool(t.n, "mean", 1);
    double r[3] = {1, 2, 3};
    tn_in(&t, DG_F32, shp(1, 3), r);
    tn_in(&t, DG_F32, xs, x);
    tn_out(&t, DG_F32, xs);
    assert_int_equal(tn_run(&t), DG_OK);
    for (int i = 0; i < 60; i++) w[i] = r[(i / 5) % 3] / 20.0;
    check_out(&t, 0, w, 1e-6, "BroadcastLike");
    tn_free(&t);

    /* MaxGrad over axis 1 of [4, 3, 5] with ties */
    for (int i = 0; i < 60; i += 7) x[i] = 5;
    double y[20], dy[20];
    int m1[3] = {0, 1, 0};
    ref_reduce(x, &xs, m1, 2, y, 20);
    for (int i = 0; i < 20; i++) dy[i] = i + 1;
    tn_init(&t, "MaxGrad");
    dgc_node_set_int(t.n, "axis", 1);
    tn_in(&t, DG_F32, xs, x);
    tn_in(&t, DG_F32, shp(2, 4, 5), y);
    tn_in(&t, DG_F32, shp(2, 4, 5), dy);
    tn_out(&t, DG_F32, xs);
    assert_int_equal(tn_run(&t), DG_OK);
    for (int o = 0; o < 20; o++) {
        int a = o / 5, c = o % 5, cnt = 0;
        for (int b = 0; b < 3; b++) cnt += x[a * 15 + b * 5 + c] == y[o];
        for (int b = 0; b < 3; b++) {
            int i = a * 15 + b * 5 + c;
            w[i] = x[i] == y[o] ? dy[o] / cnt : 0;
        }
    }
    check_out(&t, 0, w, 1e-6, "MaxGrad");
    tn_free(&t);
    free(x);
}

/* ---- tests: shape ops ---------------------------------------------------- */

static void run_transpose(dg_shape s, const int64_t *perm)
{
    tnode t;
    tn_init(&t, "Transpose");
    dgc_node_set_ints(t.n, "perm", perm, s.rank);
    int64_t n = ne(&s);
    double *x = rnd(n, -1, 1);
    for (int64_t i = 0; i < n; i++) x[i] = (float)x[i];
    dg_shape os = s;
    for (int d = 0; d < s.rank; d++) os.dims[d] = s.dims[perm[d]];
    tn_in(&t, DG_F32, s, x);
    tn_out(&t, DG_F32, os);
    assert_int_equal(tn_run(&t), DG_OK);
    double *w = malloc(sizeof *w * (size_t)(n + 1));
    int64_t st[8], acc = 1;
    for (int d = s.rank - 1; d >= 0; d--) { st[d] = acc; acc *= s.dims[d]; }
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, off = 0;
        for (int d = s.rank - 1; d >= 0; d--) {
            off += (rem % os.dims[d]) * st[perm[d]];
            rem /= os.dims[d];
        }
        w[i] = x[off];
    }
    check_out(&t, 0, w, 0, "Transpose");
    free(w);
    free(x);
    tn_free(&t);
}

static void test_transpose_reshape(void **state)
{
    (void)state;
    NEED_CL();
    int64_t p2[] = {1, 0};
    run_transpose(shp(2, 33, 65), p2);
    run_transpose(shp(2, 1, 7), p2);
    int64_t perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                           {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int i = 0; i < 6; i++)
        run_transpose(shp(3, 3, 17, 5), perms[i]);
    int64_t p4[] = {3, 1, 0, 2};
    run_transpose(shp(4, 2, 3, 4, 5), p4);

    /* Reshape / Identity alias the input: no copy */
    tnode t;
    tn_init(&t, "Reshape");
    double x[6] = {1, 2, 3, 4, 5, 6};
    tn_in(&t, DG_F32, shp(2, 2, 3), x);
    tn_out(&t, DG_F32, shp(1, 6));
    assert_int_equal(tn_run(&t), DG_OK);
    assert_ptr_equal(t.out[0].buf, t.in[0].buf);
    assert_int_equal(t.out[0].shape.rank, 1);
    check_out(&t, 0, x, 0, "Reshape");
    tn_free(&t);
}

/* ---- tests: nn ----------------------------------------------------------- */

static void test_softmax_xent(void **state)
{
    (void)state;
    NEED_CL();
    int shapes[][2] = {{5, 7}, {3, 1000}, {1, 1}};
    for (int si = 0; si < 3; si++) {
        int N = shapes[si][0], C = shapes[si][1];
        dg_shape s = shp(2, N, C);
        double *x = rnd(N * C, -4, 4), *lab = rnd(N * C, 0, 1);
        double *sm = malloc(sizeof *sm * (size_t)(N * C)), loss[8];
        double *bp = malloc(sizeof *bp * (size_t)(N * C));
        double sl[8], sbp_dummy = 0;
        (void)sbp_dummy;
        double ilab[8];
        for (int i = 0; i < N * C; i++) x[i] = (float)x[i], lab[i] = (float)lab[i];
        for (int r = 0; r < N; r++) {
            double m = -INFINITY, sum = 0;
            for (int j = 0; j < C; j++) m = fmax(m, x[r * C + j]);
            for (int j = 0; j < C; j++) sum += exp(x[r * C + j] - m);
            double lse = m + log(sum);
            loss[r] = 0;
            for (int j = 0; j < C; j++) {
                sm[r * C + j] = exp(x[r * C + j] - lse);
                loss[r] += lab[r * C + j] * (lse - x[r * C + j]);
                bp[r * C + j] = sm[r * C + j] - lab[r * C + j];
            }
            ilab[r] = (r * 3) % C;
            sl[r] = lse - x[r * C + (int)ilab[r]];
        }
        tnode t;
        tn_init(&t, "Softmax");
        tn_in(&t, DG_F32, s, x);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        check_out(&t, 0, sm, 1e-5, "Softmax");
        tn_free(&t);

        tn_init(&t, "SoftmaxCrossEntropyWithLogits");
        tn_in(&t, DG_F32, s, x);
        tn_in(&t, DG_F32, s, lab);
        tn_out(&t, DG_F32, shp(1, N));
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        check_out(&t, 0, loss, 1e-5, "xent loss");
        check_out(&t, 1, bp, 1e-5, "xent backprop");
        tn_free(&t);

        for (int l64 = 0; l64 < 2; l64++) {
            tn_init(&t, "SparseSoftmaxCrossEntropyWithLogits");
            tn_in(&t, DG_F32, s, x);
            tn_in(&t, l64 ? DG_I64 : DG_I32, shp(1, N), ilab);
            tn_out(&t, DG_F32, shp(1, N));
            tn_out(&t, DG_F32, s);
            assert_int_equal(tn_run(&t), DG_OK);
            check_out(&t, 0, sl, 1e-5, "sparse xent loss");
            for (int r = 0; r < N; r++)
                for (int j = 0; j < C; j++)
                    bp[r * C + j] = sm[r * C + j] - (j == (int)ilab[r]);
            check_out(&t, 1, bp, 1e-5, "sparse xent backprop");
            tn_free(&t);
        }

        /* SoftmaxGrad(y, dy) */
        tn_init(&t, "SoftmaxGrad");
        tn_in(&t, DG_F32, s, sm);
        tn_in(&t, DG_F32, s, lab);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        for (int r = 0; r < N; r++) {
            double acc = 0;
            for (int j = 0; j < C; j++)
                acc += (float)sm[r * C + j] * lab[r * C + j];
            for (int j = 0; j < C; j++)
                bp[r * C + j] = (lab[r * C + j] - acc) * (float)sm[r * C + j];
        }
        check_out(&t, 0, bp, 1e-5, "SoftmaxGrad");
        tn_free(&t);

        /* ArgMax over axis 1 and 0 */
        for (int ax = 0; ax < 3; ax++) {
            tn_init(&t, "ArgMax");
            dgc_node_set_int(t.n, "axis", ax == 2 ? -1 : ax);
            if (ax == 2)
                dgc_node_set_dtype(t.n, "output_type", DG_I32);
            tn_in(&t, DG_F32, s, x);
            int no = ax ? N : C;
            tn_out(&t, ax == 2 ? DG_I32 : DG_I64, shp(1, no));
            assert_int_equal(tn_run(&t), DG_OK);
            double am[1000];
            for (int o = 0; o < no; o++) {
                int best = 0, cnt = ax ? C : N;
                for (int q = 1; q < cnt; q++) {
                    double v = ax ? x[o * C + q] : x[q * C + o];
                    double b = ax ? x[o * C + best] : x[best * C + o];
                    if (v > b) best = q;
                }
                am[o] = best;
            }
            check_out(&t, 0, am, 0, "ArgMax");
            tn_free(&t);
        }
        free(x);
        free(lab);
        free(sm);
        free(bp);
    }
}

static void test_batchnorm(void **state)
{
    (void)state;
    NEED_CL();
    int R = 37, C = 6;
    dg_shape s = shp(3, 37, 1, 6), cs = shp(1, 6);
    double *x = rnd(R * C, -2, 3), *dy = rnd(R * C, -1, 1);
    double *sc = rnd(C, 0.5, 1.5), *of = rnd(C, -1, 1);
    for (int i = 0; i < R * C; i++) x[i] = (float)x[i], dy[i] = (float)dy[i];
    for (int i = 0; i < C; i++) sc[i] = (float)sc[i], of[i] = (float)of[i];
    double mean[6] = {0}, var[6] = {0}, y[222], dx[222], dsc[6] = {0}, dof[6] = {0};
    double eps = 1e-3;
    for (int c = 0; c < C; c++) {
        for (int r = 0; r < R; r++) mean[c] += x[r * C + c] / R;
        for (int r = 0; r < R; r++)
            var[c] += (x[r * C + c] - mean[c]) * (x[r * C + c] - mean[c]) / R;
        double rs = 1 / sqrt(var[c] + eps);
        for (int r = 0; r < R; r++) {
            double xh = (x[r * C + c] - mean[c]) * rs;
            y[r * C + c] = xh * sc[c] + of[c];
            dof[c] += dy[r * C + c];
            dsc[c] += dy[r * C + c] * xh;
        }
        for (int r = 0; r < R; r++) {
            double xh = (x[r * C + c] - mean[c]) * rs;
            dx[r * C + c] = sc[c] * rs / R * (R * dy[r * C + c] - dof[c] - xh * dsc[c]);
        }
    }
    tnode t;
    tn_init(&t, "BatchNorm");
    tn_in(&t, DG_F32, s, x);
    tn_in(&t, DG_F32, cs, sc);
    tn_in(&t, DG_F32, cs, of);
    tn_out(&t, DG_F32, s);
    tn_out(&t, DG_F32, cs);
    tn_out(&t, DG_F32, cs);
    assert_int_equal(tn_run(&t), DG_OK);
    check_out(&t, 0, y, 1e-4, "BatchNorm y");
    check_out(&t, 1, mean, 1e-5, "BatchNorm mean");
    check_out(&t, 2, var, 1e-5, "BatchNorm var");
    tn_free(&t);

    tn_init(&t, "BatchNormGrad");
    tn_in(&t, DG_F32, s, dy);
    tn_in(&t, DG_F32, s, x);
    tn_in(&t, DG_F32, cs, sc);
    tn_in(&t, DG_F32, cs, mean);
    tn_in(&t, DG_F32, cs, var);
    tn_out(&t, DG_F32, s);
    tn_out(&t, DG_F32, cs);
    tn_out(&t, DG_F32, cs);
    assert_int_equal(tn_run(&t), DG_OK);
    check_out(&t, 0, dx, 1e-4, "BatchNormGrad dx");
    check_out(&t, 1, dsc, 1e-4, "BatchNormGrad dscale");
    check_out(&t, 2, dof, 1e-4, "BatchNormGrad doffset");
    tn_free(&t);
    free(x); free(dy); free(sc); free(of);
}

/* ---- tests: state ops ---------------------------------------------------- */

static void test_state_ops(void **state)
{
    (void)state;
    NEED_CL();
    int n = 301;
    dg_shape s = shp(1, n), sc = shp(0);
    double *v = rnd(n, -1, 1), *g = rnd(n, -1, 1), *m = rnd(n, -1, 1),
           *vv = rnd(n, 0, 1), w[301];
    for (int i = 0; i < n; i++)
        v[i] = (float)v[i], g[i] = (float)g[i], m[i] = (float)m[i], vv[i] = (float)vv[i];
    double lr = 0.125, mom = 0.5;
    const char *ops[] = {"Assign", "AssignAdd", "AssignSub",
                         "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam",
                         "AssignMovingAvg"};
    for (int o = 0; o < 7; o++) {
        tnode t;
        tn_init(&t, ops[o]);
        tn_in(&t, DG_F32, s, v);
        double lrv[1] = {lr}, momv[1] = {mom};
        double b1p[1] = {0.9 * 0.9}, b2p[1] = {0.999 * 0.999}, b1[1] = {0.9},
               b2[1] = {0.999}, ep[1] = {1e-7};
        switch (o) {
        case 0: case 1: case 2: case 6: tn_in(&t, DG_F32, s, g); break;
        case 3: tn_in(&t, DG_F32, sc, lrv); tn_in(&t, DG_F32, s, g); break;
        case 4:
            tn_in(&t, DG_F32, s, m); tn_in(&t, DG_F32, sc, lrv);
            tn_in(&t, DG_F32, s, g); tn_in(&t, DG_F32, sc, momv);
            break;
        default:
            tn_in(&t, DG_F32, s, m); tn_in(&t, DG_F32, s, vv);
            tn_in(&t, DG_F32, sc, b1p); tn_in(&t, DG_F32, sc, b2p);
            tn_in(&t, DG_F32, sc, lrv); tn_in(&t, DG_F32, sc, b1);
            tn_in(&t, DG_F32, sc, b2); tn_in(&t, DG_F32, sc, ep);
            tn_in(&t, DG_F32, s, g);
        }
        if (o == 6)
            dgc_node_set_float(t.n, "decay", 0.9);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        assert_ptr_equal(t.out[0].buf, t.in[0].buf);
        double acc[301];
        for (int i = 0; i < n; i++) {
            switch (o) {
            case 0: w[i] = g[i]; break;
            case 1: w[i] = v[i] + g[i]; break;
            case 2: w[i] = v[i] - g[i]; break;
            case 3: w[i] = v[i] - lr * g[i]; break;
            case 4: acc[i] = m[i] * mom + g[i]; w[i] = v[i] - lr * acc[i]; break;
            case 5: {
                double lrt = lr * sqrt(1 - b2p[0]) / (1 - b1p[0]);
                double mi = m[i] + (g[i] - m[i]) * 0.1;
                double vi = vv[i] + (g[i] * g[i] - vv[i]) * (1 - 0.999);
                acc[i] = mi;
                w[i] = v[i] - lrt * mi / (sqrt(vi) + 1e-7);
                break;
            }
            default: w[i] = v[i] - (v[i] - g[i]) * (1 - 0.9);
            }
        }
        check_out(&t, 0, w, 1e-5, ops[o]);
        if (o == 4 || o == 5) {
            double *got = down(&g_dev, &t.in[1]);
            check_close(got, acc, n, 1e-5, "accumulator");
            free(got);
        }
        tn_free(&t);
    }
    /* AssignMovingAvg without a decay: the schema's default, 0.99, on
     * every device (the OpenCL kernel used to read 0.999, the CPU's 0.99) */
    {
        tnode t;
        tn_init(&t, "AssignMovingAvg");
        tn_in(&t, DG_F32, s, v);
        tn_in(&t, DG_F32, s, g);
        tn_out(&t, DG_F32, s);
        assert_int_equal(tn_run(&t), DG_OK);
        for (int i = 0; i < n; i++)
            w[i] = v[i] - (v[i] - g[i]) * (1 - 0.99);
        check_out(&t, 0, w, 1e-5, "AssignMovingAvg (default decay)");
        tn_free(&t);
    }
    free(v); free(g); free(m); free(vv);
}

/* ---- tests: sources ------------------------------------------------------ */

static void test_const(void **state)
{
    (void)state;
    NEED_CL();
    dg_shape s = shp(2, 2, 3);
    dg_tensor *v = dg_tensor_new(DG_F64, &s);
    for (int i = 0; i < 6; i++) ((double *)v->data)[i] = i * 0.5 - 1;
    tnode t;
    tn_init(&t, "Const");
    dgc_node_set_tensor(t.n, "value", v);
    tn_out(&t, DG_F32, s);
    assert_int_equal(tn_run(&t), DG_OK);
    double w[6];
    for (int i = 0; i < 6; i++) w[i] = i * 0.5 - 1;
    check_out(&t, 0, w, 0, "Const");
    tn_free(&t);

    dg_shape one = shp(0);
    v = dg_tensor_new(DG_F32, &one);
    ((float *)v->data)[0] = 2.5f;
    tn_init(&t, "Const");
    dgc_node_set_tensor(t.n, "value", v);
    tn_out(&t, DG_F32, one);
    assert_int_equal(tn_run(&t), DG_OK);
    w[0] = 2.5;
    check_out(&t, 0, w, 0, "Const scalar");
    tn_free(&t);
}

static void test_matmul(void **state)
{
    (void)state;
    NEED_CL();
    int M = 5, K = 7, N = 3;
    double *a = rnd(M * K, -1, 1), *b = rnd(K * N, -1, 1), w[15];
    for (int i = 0; i < M * K; i++) a[i] = (float)a[i];
    for (int i = 0; i < K * N; i++) b[i] = (float)b[i];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            w[i * N + j] = 0;
            for (int q = 0; q < K; q++) w[i * N + j] += a[i * K + q] * b[q * N + j];
        }
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            double at[35], bt[21];
            for (int i = 0; i < M; i++)
                for (int q = 0; q < K; q++)
                    at[ta ? q * M + i : i * K + q] = a[i * K + q];
            for (int q = 0; q < K; q++)
                for (int j = 0; j < N; j++)
                    bt[tb ? j * K + q : q * N + j] = b[q * N + j];
            tnode t;
            tn_init(&t, "MatMul");
            dgc_node_set_bool(t.n, "transpose_a", ta);
            dgc_node_set_bool(t.n, "transpose_b", tb);
            tn_in(&t, DG_F32, ta ? shp(2, K, M) : shp(2, M, K), at);
            tn_in(&t, DG_F32, tb ? shp(2, N, K) : shp(2, K, N), bt);
            tn_out(&t, DG_F32, shp(2, M, N));
            assert_int_equal(tn_run(&t), DG_OK);
            check_out(&t, 0, w, 1e-5, "MatMul");
            tn_free(&t);
        }
    free(a);
    free(b);
}

/* _FusedMatMul (the fusion pass's MatMul + BiasAdd [+ Relu], issue 16)
 * against the unfused ops run one after the other on the device (and,
 * through tn_run, against the CPU's fused kernel): every transpose, with
 * and without the Relu, odd shapes, values around 0 so the Relu bites. */
static double *run_unfused(const char *op, const double *x, dg_shape xs,
                           const double *y, dg_shape ys, dg_shape os,
                           int ta, int tb)
{
    tnode t;
    tn_init(&t, op);
    if (!strcmp(op, "MatMul")) {
        dgc_node_set_bool(t.n, "transpose_a", ta);
        dgc_node_set_bool(t.n, "transpose_b", tb);
    }
    tn_in(&t, DG_F32, xs, x);
    if (y)
        tn_in(&t, DG_F32, ys, y);
    tn_out(&t, DG_F32, os);
    assert_int_equal(tn_run(&t), DG_OK);
    double *got = down(&g_dev, &t.out[0]);
    tn_free(&t);
    return got;
}

static void test_fused_matmul(void **state)
{
    (void)state;
    NEED_CL();
    int M = 9, K = 13, N = 11;
    double *a = rnd(M * K, -1, 1), *b = rnd(K * N, -1, 1);
    double *bias = rnd(N, -1, 1);
    for (int i = 0; i < M * K; i++) a[i] = (float)a[i];
    for (int i = 0; i < K * N; i++) b[i] = (float)b[i];
    for (int i = 0; i < N; i++) bias[i] = (float)bias[i];
    dg_shape os = shp(2, M, N);
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int relu = 0; relu < 2; relu++) {
                dg_shape as = ta ? shp(2, K, M) : shp(2, M, K);
                dg_shape bs = tb ? shp(2, N, K) : shp(2, K, N);
                double *mm = run_unfused("MatMul", a, as, b, bs, os, ta, tb);
                double *want = run_unfused("BiasAdd", mm, os, bias, shp(1, N),
                                           os, 0, 0);
                if (relu) {
                    double *r = run_unfused("Relu", want, os, NULL, os, os,
                                            0, 0);
                    free(want);
                    want = r;
                }
                tnode t;
                tn_init(&t, "_FusedMatMul");
                dgc_node_set_bool(t.n, "transpose_a", ta);
                dgc_node_set_bool(t.n, "transpose_b", tb);
                dgc_node_set_str(t.n, "fused_ops",
                                 relu ? "BiasAdd,Relu" : "BiasAdd");
                tn_in(&t, DG_F32, as, a);
                tn_in(&t, DG_F32, bs, b);
                tn_in(&t, DG_F32, shp(1, N), bias);
                tn_out(&t, DG_F32, os);
                assert_int_equal(tn_run(&t), DG_OK);
                check_out(&t, 0, want, 1e-6, "_FusedMatMul");
                tn_free(&t);
                free(mm);
                free(want);
            }
    /* a bias that does not match the columns is an error on both */
    tnode t;
    tn_init(&t, "_FusedMatMul");
    tn_in(&t, DG_F32, shp(2, M, K), a);
    tn_in(&t, DG_F32, shp(2, K, N), b);
    tn_in(&t, DG_F32, shp(1, N - 1), bias);
    tn_out(&t, DG_F32, os);
    assert_int_equal(tn_run(&t), DG_E_RUNTIME);
    tn_free(&t);
    free(a);
    free(b);
    free(bias);
}

/* float64 variants, checked against the CPU kernels (tn_run compares) */
static void run_cmp(const char *op, int n_in, const dg_shape *is,
                    const dg_dtype *it, int n_out, const dg_shape *os,
                    const dg_dtype *ot, double lo, double hi)
{
    tnode t;
    tn_init(&t, op);
    double *v[12];
    for (int i = 0; i < n_in; i++) {
        v[i] = rnd(ne(&is[i]), lo, hi);
        if (it[i] == DG_I32 || it[i] == DG_I64)
            for (int64_t j = 0; j < ne(&is[i]); j++) v[i][j] = (int)(v[i][j] * 3) % 5;
        tn_in(&t, it[i], is[i], v[i]);
    }
    for (int i = 0; i < n_out; i++)
        tn_out(&t, ot[i], os[i]);
    assert_int_equal(tn_run(&t), DG_OK);
    for (int i = 0; i < n_in; i++)
        free(v[i]);
    tn_free(&t);
}

/* issue 22: train.cl's apply_opt against the CPU's dgr_k_apply_opt
 * (tn_run compares them), dense and sparse (4 gradient rows onto rows of
 * a [6, 37] variable; indices 0..2, so repeated ones), inputs in
 * [0.1, 1) (positive accumulators; lr_power in (-1, -0.1]). */
static void test_opt_updates(void **state)
{
    (void)state;
    NEED_CL();
    const dg_dtype F = DG_F32, I = DG_I64;
    dg_shape x = shp(2, 6, 37), rows = shp(2, 4, 37), ix = shp(1, 4),
             sc = shp(0);
    run_cmp("ApplyAdagrad", 4, (dg_shape[]){x, x, sc, x},
            (dg_dtype[]){F, F, F, F}, 1, &x, &F, 0.1, 1);
    run_cmp("ApplyCenteredRMSProp", 9,
            (dg_shape[]){x, x, x, x, sc, sc, sc, sc, x},
            (dg_dtype[]){F, F, F, F, F, F, F, F, F}, 1, &x, &F, 0.1, 1);
    run_cmp("ApplyFtrlV2", 9, (dg_shape[]){x, x, x, x, sc, sc, sc, sc, sc},
            (dg_dtype[]){F, F, F, F, F, F, F, F, F}, 1, &x, &F, 0.1, 1);
    run_cmp("SparseApplyAdagrad", 5, (dg_shape[]){x, x, sc, rows, ix},
            (dg_dtype[]){F, F, F, F, I}, 1, &x, &F, 0.1, 1);
    run_cmp("SparseApplyAdadelta", 8,
            (dg_shape[]){x, x, x, sc, sc, sc, rows, ix},
            (dg_dtype[]){F, F, F, F, F, F, F, DG_I32}, 1, &x, &F, 0.1, 1);
    run_cmp("SparseApplyFtrl", 9, (dg_shape[]){x, x, x, rows, ix, sc, sc, sc,
                                               sc},
            (dg_dtype[]){F, F, F, F, I, F, F, F, F}, 1, &x, &F, 0.1, 1);
    run_cmp("SparseApplyProximalAdagrad", 7,
            (dg_shape[]){x, x, sc, sc, sc, rows, ix},
            (dg_dtype[]){F, F, F, F, F, F, I}, 1, &x, &F, 0.1, 1);
}

static void test_float64(void **state)
{
    (void)state;
    NEED_CL();
    if (!fp64())
        skip();
    const dg_dtype D = DG_F64;
    dg_shape x = shp(2, 9, 5), r = shp(1, 9), c = shp(1, 5), sc = shp(0);
    run_cmp("Softmax", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){x},
            (dg_dtype[]){D}, -3, 3);
    run_cmp("SoftmaxCrossEntropyWithLogits", 2, (dg_shape[]){x, x},
            (dg_dtype[]){D, D}, 2, (dg_shape[]){r, x}, (dg_dtype[]){D, D}, 0, 1);
    run_cmp("SparseSoftmaxCrossEntropyWithLogits", 2, (dg_shape[]){x, r},
            (dg_dtype[]){D, DG_I64}, 2, (dg_shape[]){r, x}, (dg_dtype[]){D, D},
            0, 1);
    run_cmp("SoftmaxGrad", 2, (dg_shape[]){x, x}, (dg_dtype[]){D, D}, 1,
            (dg_shape[]){x}, (dg_dtype[]){D}, -1, 1);
    run_cmp("BatchNorm", 3, (dg_shape[]){x, c, c}, (dg_dtype[]){D, D, D}, 3,
            (dg_shape[]){x, c, c}, (dg_dtype[]){D, D, D}, 0.5, 2);
    run_cmp("BatchNormGrad", 5, (dg_shape[]){x, x, c, c, c},
            (dg_dtype[]){D, D, D, D, D}, 3, (dg_shape[]){x, c, c},
            (dg_dtype[]){D, D, D}, 0.5, 2);
    run_cmp("ApplyMomentum", 5, (dg_shape[]){x, x, sc, x, sc},
            (dg_dtype[]){D, D, D, D, D}, 1, (dg_shape[]){x}, (dg_dtype[]){D},
            0.1, 0.9);
    run_cmp("ApplyAdam", 10,
            (dg_shape[]){x, x, x, sc, sc, sc, sc, sc, sc, x},
            (dg_dtype[]){D, D, D, D, D, D, D, D, D, D}, 1, (dg_shape[]){x},
            (dg_dtype[]){D}, 0.1, 0.9);
    run_cmp("ArgMax", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){c},
            (dg_dtype[]){DG_I64}, -1, 1);
    run_cmp("Cast", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){x},
            (dg_dtype[]){DG_F32}, -1, 1);
    run_cmp("OnesLike", 1, (dg_shape[]){x}, (dg_dtype[]){D}, 1, (dg_shape[]){x},
            (dg_dtype[]){D}, -1, 1);
}

/* ---- tests: TF graph ops (issue 10), each against the CPU kernel -------- */

static void tf_unary(const char *op, dg_dtype dt, dg_shape s, double lo,
                     double hi)
{
    tnode t;
    tn_init(&t, op);
    int64_t n = ne(&s);
    double *x = rnd(n, lo, hi);
    tn_in(&t, dt, s, x);
    tn_out(&t, dt, s);
    assert_int_equal(tn_run(&t), DG_OK);
    free(x);
    tn_free(&t);
}

static void tf_binary(const char *op, dg_dtype dt, dg_shape sa, dg_shape sb,
                      dg_shape so, dg_dtype odt)
{
    tnode t;
    tn_init(&t, op);
    double *a = rnd(ne(&sa), -7, 7), *b = rnd(ne(&sb), -3, 3);
    for (int64_t i = 0; i < ne(&sb); i++) /* divisors away from 0 */
        b[i] = b[i] < 0 ? b[i] - 0.25 : b[i] + 0.25;
    for (int64_t i = 0; i < ne(&sa) && ne(&sb); i += 3) /* ties */
        a[i] = b[i % ne(&sb)];
    tn_in(&t, dt, sa, a);
    tn_in(&t, dt, sb, b);
    tn_out(&t, odt, so);
    assert_int_equal(tn_run(&t), DG_OK);
    free(a);
    free(b);
    tn_free(&t);
}

static void test_tf_elementwise(void **state)
{
    (void)state;
    NEED_CL();
    tf_unary("Rsqrt", DG_F32, shp(2, 9, 70), 0.1, 5);
    tf_unary("Reciprocal", DG_F32, shp(2, 9, 70), 0.5, 5);
    tf_unary("Relu6", DG_F32, shp(2, 9, 70), -3, 9);
    const char *bin[] = {"FloorMod", "FloorDiv", "Relu6Grad", "RsqrtGrad",
                         "ReciprocalGrad"};
    for (size_t i = 0; i < sizeof bin / sizeof *bin; i++) {
        tf_binary(bin[i], DG_F32, shp(2, 13, 29), shp(2, 13, 29),
                  shp(2, 13, 29), DG_F32);
        tf_binary(bin[i], DG_F32, shp(3, 3, 1, 5), shp(2, 4, 5),
                  shp(3, 3, 4, 5), DG_F32);
        if (fp64())
            tf_binary(bin[i], DG_F64, shp(2, 30, 1), shp(1, 7), shp(2, 30, 7),
                      DG_F64);
    }
    const char *cmp[] = {"Less", "LessEqual", "Greater", "GreaterEqual",
                         "NotEqual"};
    for (size_t i = 0; i < sizeof cmp / sizeof *cmp; i++) {
        tf_binary(cmp[i], DG_F32, shp(2, 13, 29), shp(2, 13, 29),
                  shp(2, 13, 29), DG_BOOL);
        tf_binary(cmp[i], DG_F32, shp(2, 5, 1), shp(0), shp(2, 5, 1),
                  DG_BOOL);
    }
}

static void tf_tile(dg_shape xs, const int64_t *m, dg_dtype dt)
{
    tnode t;
    tn_init(&t, "Tile");
    assert_int_equal(dgc_node_set_ints(t.n, "multiples", m, xs.rank), 0);
    double *x = rnd(ne(&xs), -1, 1);
    tn_in(&t, dt, xs, x);
    dg_shape os = xs;
    for (int i = 0; i < xs.rank; i++)
        os.dims[i] *= m[i];
    tn_out(&t, dt, os);
    assert_int_equal(tn_run(&t), DG_OK);
    /* and against the definition */
    double *w = malloc(sizeof *w * (size_t)(ne(&os) + 1));
    for (int64_t i = 0; i < ne(&os); i++) {
        int64_t q = i, off = 0, str = 1;
        for (int d = os.rank - 1; d >= 0; d--) {
            off += (q % os.dims[d]) % xs.dims[d] * str;
            q /= os.dims[d];
            str *= xs.dims[d];
        }
        w[i] = dt == DG_F32 ? (float)x[off] : x[off];
    }
    check_out(&t, 0, w, 0, "Tile");
    free(w);
    free(x);
    tn_free(&t);
}

static void test_tf_shaping(void **state)
{
    (void)state;
    NEED_CL();
    tf_tile(shp(2, 3, 5), (const int64_t[]){2, 3}, DG_F32);
    tf_tile(shp(1, 7), (const int64_t[]){40}, DG_F32);
    tf_tile(shp(3, 2, 1, 3), (const int64_t[]){1, 4, 2}, DG_F32);
    if (fp64())
        tf_tile(shp(2, 1, 9), (const int64_t[]){33, 1}, DG_F64);

    /* ConcatV2 of three inputs along the middle axis */
    tnode t;
    tn_init(&t, "ConcatV2");
    assert_int_equal(dgc_node_set_int(t.n, "axis", 1), 0);
    int64_t widths[3] = {2, 65, 1};
    for (int i = 0; i < 3; i++) {
        dg_shape s = shp(3, 4, (int)widths[i], 3);
        double *x = rnd(ne(&s), -1, 1);
        tn_in(&t, DG_F32, s, x);
        free(x);
    }
    tn_out(&t, DG_F32, shp(3, 4, 68, 3));
    assert_int_equal(tn_run(&t), DG_OK);
    tn_free(&t);

    /* GatherV2 of rows (int32 and int64 indices) and along axis 1 */
    for (int axis = 0; axis < 2; axis++)
        for (int it = 0; it < 2; it++) {
            tn_init(&t, "GatherV2");
            assert_int_equal(dgc_node_set_int(t.n, "axis", axis), 0);
            double *p = rnd(6 * 70, -1, 1);
            double idx[5] = {5, 0, 3, 3, 1};
            tn_in(&t, DG_F32, shp(2, 6, 70), p);
            tn_in(&t, it ? DG_I64 : DG_I32, shp(1, 5), idx);
            tn_out(&t, DG_F32, axis ? shp(2, 6, 5) : shp(2, 5, 70));
            assert_int_equal(tn_run(&t), DG_OK);
            free(p);
            tn_free(&t);
        }

    /* ExpandDims / Squeeze alias their input */
    tn_init(&t, "ExpandDims");
    double x[6] = {1, 2, 3, 4, 5, 6};
    tn_in(&t, DG_F32, shp(2, 2, 3), x);
    tn_out(&t, DG_F32, shp(3, 2, 1, 3));
    assert_int_equal(dgc_node_set_int(t.n, "axis", 1), 0);
    assert_int_equal(tn_run(&t), DG_OK);
    assert_ptr_equal(t.out[0].buf, t.in[0].buf);
    tn_free(&t);
}

static void test_tf_reductions(void **state)
{
    (void)state;
    NEED_CL();
    int64_t sizes[] = {1, 5, 1000, 100003};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        tnode t;
        tn_init(&t, "L2Loss");
        double *x = rnd(sizes[i], -1, 1);
        tn_in(&t, DG_F32, shp(1, (int)sizes[i]), x);
        tn_out(&t, DG_F32, shp(0));
        assert_int_equal(tn_run(&t), DG_OK);
        double want = 0;
        for (int64_t j = 0; j < sizes[i]; j++)
            want += (double)(float)x[j] * (float)x[j];
        want /= 2;
        check_out(&t, 0, &want, 1e-5, "L2Loss");
        free(x);
        tn_free(&t);
    }
    dg_shape bs[] = {shp(2, 300, 7), shp(3, 3, 50, 11), shp(1, 9)};
    for (size_t i = 0; i < sizeof bs / sizeof *bs; i++) {
        tnode t;
        tn_init(&t, "BiasAddGrad");
        double *x = rnd(ne(&bs[i]), -1, 1);
        tn_in(&t, DG_F32, bs[i], x);
        tn_out(&t, DG_F32, shp(1, (int)bs[i].dims[bs[i].rank - 1]));
        assert_int_equal(tn_run(&t), DG_OK);
        free(x);
        tn_free(&t);
    }
}

static void tf_view(const char *op, dg_shape xs, dg_shape os,
                    const double *p1, dg_shape s1, const double *p2,
                    dg_shape s2, const double *p3, dg_shape s3)
{
    tnode t;
    tn_init(&t, op);
    double *x = rnd(ne(&xs), -1, 1);
    tn_in(&t, DG_F32, xs, x);
    if (p1)
        tn_in(&t, DG_I32, s1, p1);
    if (p2)
        tn_in(&t, DG_I32, s2, p2);
    if (p3)
        tn_in(&t, DG_I32, s3, p3);
    tn_out(&t, DG_F32, os);
    assert_int_equal(tn_run(&t), DG_OK);
    free(x);
    tn_free(&t);
}

static void test_tf_views(void **state)
{
    (void)state;
    NEED_CL();
    /* x[1:, ::-2, 0] of [4, 5, 3] -> [3, 3] */
    tnode t;
    tn_init(&t, "StridedSlice");
    assert_int_equal(dgc_node_set_int(t.n, "shrink_axis_mask", 4), 0);
    assert_int_equal(dgc_node_set_int(t.n, "end_mask", 2), 0);
    double *x = rnd(60, -1, 1);
    tn_in(&t, DG_F32, shp(3, 4, 5, 3), x);
    tn_in(&t, DG_I32, shp(1, 3), (double[]){1, -1, 0});
    tn_in(&t, DG_I32, shp(1, 3), (double[]){4, 0, 1});
    tn_in(&t, DG_I32, shp(1, 3), (double[]){1, -2, 1});
    tn_out(&t, DG_F32, shp(2, 3, 3));
    assert_int_equal(tn_run(&t), DG_OK);
    double w[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            w[i * 3 + j] = (float)x[((1 + i) * 5 + (4 - 2 * j)) * 3];
    check_out(&t, 0, w, 0, "StridedSlice");
    free(x);
    tn_free(&t);
    tf_view("Slice", shp(3, 4, 5, 3), shp(3, 2, 5, 1),
            (double[]){1, 0, 2}, shp(1, 3), (double[]){2, -1, 1}, shp(1, 3),
            NULL, shp(0));
    tf_view("BroadcastTo", shp(2, 1, 3), shp(3, 2, 4, 3),
            (double[]){2, 4, 3}, shp(1, 3), NULL, shp(0), NULL, shp(0));
    tf_view("Pad", shp(2, 3, 4), shp(2, 4, 7),
            (double[]){1, 0, 2, 1}, shp(2, 2, 2), NULL, shp(0), NULL, shp(0));

    /* Unpack / Split / SplitV: several outputs */
    const char *ops[] = {"Unpack", "Split", "SplitV"};
    for (int o = 0; o < 3; o++) {
        tn_init(&t, ops[o]);
        assert_int_equal(dgc_node_set_int(t.n, "num", o == 2 ? 2 : 3), 0);
        assert_int_equal(dgc_node_set_int(t.n, "axis", 1), 0);
        x = rnd(2 * 3 * 70, -1, 1);
        tn_in(&t, DG_F32, shp(3, 2, 3, 70), x);
        if (o == 2) {
            tn_in(&t, DG_I32, shp(1, 2), (double[]){1, 2});
            tn_out(&t, DG_F32, shp(3, 2, 1, 70));
            tn_out(&t, DG_F32, shp(3, 2, 2, 70));
        } else {
            for (int i = 0; i < 3; i++)
                tn_out(&t, DG_F32, o ? shp(3, 2, 1, 70) : shp(2, 2, 70));
        }
        assert_int_equal(tn_run(&t), DG_OK);
        free(x);
        tn_free(&t);
    }

    /* Pack of three along axis 1 */
    tn_init(&t, "Pack");
    assert_int_equal(dgc_node_set_int(t.n, "axis", 1), 0);
    for (int i = 0; i < 3; i++) {
        x = rnd(4 * 33, -1, 1);
        tn_in(&t, DG_F32, shp(2, 4, 33), x);
        free(x);
    }
    tn_out(&t, DG_F32, shp(3, 4, 3, 33));
    assert_int_equal(tn_run(&t), DG_OK);
    tn_free(&t);

    /* LogSoftmax: short and long rows */
    int64_t cols[] = {3, 1000};
    for (int i = 0; i < 2; i++) {
        tn_init(&t, "LogSoftmax");
        x = rnd(5 * cols[i], -5, 5);
        tn_in(&t, DG_F32, shp(2, 5, (int)cols[i]), x);
        tn_out(&t, DG_F32, shp(2, 5, (int)cols[i]));
        assert_int_equal(tn_run(&t), DG_OK);
        free(x);
        tn_free(&t);
    }
}

/* ---- tests: the data-movement ops (issue 22) ------------------------------
 * Fill, GatherNd, MirrorPadGrad, DynamicStitch, Where, DynamicPartition and
 * TopKV2 against their CPU kernels (tn_run), float32 and float64: the
 * outputs sized by the data (Where, DynamicPartition, a DynamicStitch whose
 * rows inference left open) and several work-groups per compaction. */

/* Run t's OpenCL kernel, which must succeed and agree with the CPU kernel;
 * free t. */
static void run_moved(tnode *t)
{
    assert_int_equal(tn_run(t), DG_OK);
    tn_free(t);
}

static void data_movement(dg_dtype dt)
{
    tnode t;
    double dims[] = {3, 700}, v = -1.5;
    tn_init(&t, "Fill");
    tn_in(&t, DG_I32, shp(1, 2), dims);
    tn_in(&t, dt, shp(0), &v);
    tn_out(&t, dt, shp(2, 3, 700));
    run_moved(&t);

    double *p = rnd(60, -1, 1);
    double ix[] = {4, 3, 0, 0, 2, 1, 4, 0, 1, 2, 3, 3, 0, 1};
    for (int it = 0; it < 2; it++) {
        tn_init(&t, "GatherNd");
        tn_in(&t, dt, shp(3, 5, 4, 3), p);
        tn_in(&t, it ? DG_I64 : DG_I32, shp(2, 7, 2), ix);
        tn_out(&t, dt, shp(2, 7, 3));
        run_moved(&t);
    }
    free(p);

    double pads[] = {1, 2, 0, 1, 2, 2};
    double *g = rnd(6 * 5 * 9, -1, 1);
    for (int sym = 0; sym < 2; sym++) {
        tn_init(&t, "MirrorPadGrad");
        dgc_node_set_str(t.n, "mode", sym ? "SYMMETRIC" : "REFLECT");
        tn_in(&t, dt, shp(3, 6, 5, 9), g);
        tn_in(&t, DG_I32, shp(2, 3, 2), pads);
        tn_out(&t, dt, shp(3, 3, 4, 5));
        run_moved(&t);
    }
    free(g);

    /* duplicates (the last wins), rows known or left to the kernel */
    double i0[] = {0, 4, 2, 4}, i1[] = {1, 3, 2};
    double *d0 = rnd(12, -1, 1), *d1 = rnd(9, -1, 1);
    for (int open = 0; open < 2; open++) {
        tn_init(&t, "DynamicStitch");
        tn_in(&t, DG_I32, shp(1, 4), i0);
        tn_in(&t, DG_I32, shp(1, 3), i1);
        tn_in(&t, dt, shp(2, 4, 3), d0);
        tn_in(&t, dt, shp(2, 3, 3), d1);
        tn_out(&t, dt, shp(2, open ? -1 : 5, 3));
        run_moved(&t);
    }
    free(d0);
    free(d1);

    /* Where over 2100 elements: about half zero, a NaN (true) */
    double *x = rnd(2100, -1, 1);
    for (int i = 0; i < 2100; i++)
        x[i] = x[i] < 0 ? 0 : x[i];
    x[5] = NAN;
    for (int b = 0; b < (dt == DG_F32 ? 2 : 1); b++) { /* and bool */
        tn_init(&t, "Where");
        tn_in(&t, b ? DG_BOOL : dt, shp(2, 7, 300), x);
        tn_out(&t, DG_I64, shp(2, -1, 2));
        run_moved(&t);
    }

    /* DynamicPartition of 600 rows into 3, partition 1 empty */
    double *pp = malloc(sizeof *pp * 600);
    for (int i = 0; i < 600; i++)
        pp[i] = i % 5 == 0 ? 2 : 0;
    tn_init(&t, "DynamicPartition");
    dgc_node_set_int(t.n, "num_partitions", 3);
    tn_in(&t, dt, shp(2, 600, 2), x);
    tn_in(&t, DG_I32, shp(1, 600), pp);
    for (int q = 0; q < 3; q++)
        tn_out(&t, dt, shp(2, -1, 2));
    run_moved(&t);
    free(pp);

    /* TopKV2: rows of 700 with ties, and of 5000 (read from global memory
     * where local memory is small) */
    for (int i = 100; i < 110; i++)
        x[i] = x[7];
    double k7 = 7, k3 = 3;
    tn_init(&t, "TopKV2");
    tn_in(&t, dt, shp(2, 3, 700), x);
    tn_in(&t, DG_I32, shp(0), &k7);
    tn_out(&t, dt, shp(2, 3, 7));
    tn_out(&t, DG_I32, shp(2, 3, 7));
    run_moved(&t);
    free(x);
    x = rnd(10000, -1, 1);
    tn_init(&t, "TopKV2");
    tn_in(&t, dt, shp(2, 2, 5000), x);
    tn_in(&t, DG_I32, shp(0), &k3);
    tn_out(&t, dt, shp(2, 2, 3));
    tn_out(&t, DG_I32, shp(2, 2, 3));
    run_moved(&t);
    free(x);
}

static void test_data_movement(void **state)
{
    (void)state;
    NEED_CL();
    data_movement(DG_F32);
    if (fp64())
        data_movement(DG_F64);
}

static void test_table(void **state)
{
    (void)state;
    /* the registry is the one source of GPU kernels: every row runs (or
     * the executor runs the op itself), and SPEC 4.7's facts hold */
    const dg_kernel_set *ks = dgr_backend_kernels(&dgr_backend_opencl);
    for (int op = 0; op < DGC_N_OPS; op++) {
        const dgr_kernel_row *row = &dgr_backend_opencl.kernels[op];
        if (!row->dtypes)
            continue;
        int exec_run = dgc_op_has(op, DGC_OP_VARIABLE | DGC_OP_FEED |
                                          DGC_OP_CONTROL_FLOW); /* issue 11 */
        if (!row->fn && !exec_run)
            fprintf(stderr, "no OpenCL kernel for %s\n", dgc_ops[op].name);
        assert_true(row->fn != NULL || exec_run);
        assert_true(exec_run ? row->fn == NULL : 1);
    }
    assert_int_equal(ks->dtypes[DGC_OPID_Print], 0);
    assert_true(ks->dtypes[DGC_OPID_Sin] & (1u << DG_F32));
    assert_true(ks->dtypes[DGC_OPID_NoOp] & DGC_KS_ROW);
    int int32_state[] = {DGC_OPID_Variable, DGC_OPID_Const, DGC_OPID_Assign};
    for (int i = 0; i < 3; i++) {
        assert_true(ks->dtypes[int32_state[i]] & (1u << DG_F32));
        assert_false(ks->dtypes[int32_state[i]] & (1u << DG_I32));
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_addn_fill_cast),
        cmocka_unit_test(test_collectives),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_sum_to_broadcast_like_max_grad),
        cmocka_unit_test(test_transpose_reshape),
        cmocka_unit_test(test_softmax_xent),
        cmocka_unit_test(test_batchnorm),
        cmocka_unit_test(test_state_ops),
        cmocka_unit_test(test_const),
        cmocka_unit_test(test_float64),
        cmocka_unit_test(test_opt_updates),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_fused_matmul),
        cmocka_unit_test(test_tf_elementwise),
        cmocka_unit_test(test_tf_shaping),
        cmocka_unit_test(test_tf_reductions),
        cmocka_unit_test(test_tf_views),
        cmocka_unit_test(test_data_movement),
    };
    return cmocka_run_group_tests(tests, cl_test_setup, cl_test_teardown);
}
