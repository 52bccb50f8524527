/*
 * test_kernels_cpu.c -- unit tests of the CPU kernels, part 1: the kernel
 * table, elementwise ops with broadcasting of general shapes, every
 * reduction axis set, MatMul with all transpose flags, Cast between all
 * dtypes, Transpose, ArgMax, Reshape, AddN, BiasAdd, Const and empty
 * tensors, against reference values computed here.
 */
#include "kernels_cpu_harness.h"

/* ---- the table ----------------------------------------------------------- */

static void test_table_complete(void **state)
{
    (void)state;
    /* SPEC 4.7: every op has a CPU kernel for every dtype it supports
     * (Variable reads, feeds and control flow are the executor's own) */
    const dg_kernel_set *ks = dgr_backend_kernels(&dgr_backend_cpu);
    for (int op = 0; op < dgc_n_ops; op++) {
        int exec_run = dgc_op_has(op, DGC_OP_VARIABLE | DGC_OP_FEED |
                                          DGC_OP_CONTROL_FLOW); /* issue 11 */
        if (!exec_run && !dgr_kernel_find(&dgr_backend_cpu, op))
            fail_msg("no CPU kernel for %s", dgc_op_name(op));
        assert_int_equal(ks->dtypes[op], DGC_KS_ROW | dgc_ops[op].dtypes);
    }
    assert_null(dgr_kernel_find(&dgr_backend_cpu, -1));
    assert_null(dgr_kernel_find(&dgr_backend_cpu, dgc_n_ops));
}

/* ---- broadcasting binary ops --------------------------------------------- */

static const struct {
    shp a, b, o;
} bshapes[] = {
    {{3, {2, 3, 4}}, {3, {2, 3, 4}}, {3, {2, 3, 4}}},
    {{3, {2, 3, 4}}, {0, {0}}, {3, {2, 3, 4}}},
    {{0, {0}}, {3, {2, 3, 4}}, {3, {2, 3, 4}}},
    {{3, {2, 1, 4}}, {2, {3, 1}}, {3, {2, 3, 4}}},
    {{1, {4}}, {3, {2, 3, 4}}, {3, {2, 3, 4}}},
    {{4, {2, 3, 1, 5}}, {4, {1, 3, 4, 1}}, {4, {2, 3, 4, 5}}},
    {{2, {1, 1}}, {1, {1}}, {2, {1, 1}}},
    {{2, {5, 1}}, {2, {1, 6}}, {2, {5, 6}}},
    {{3, {1, 3, 1}}, {3, {2, 1, 4}}, {3, {2, 3, 4}}},
    {{2, {0, 3}}, {1, {3}}, {2, {0, 3}}},
    {{5, {2, 1, 2, 1, 3}}, {3, {2, 2, 1}}, {5, {2, 1, 2, 2, 3}}},
    {{4, {3, 1, 4, 1}}, {4, {1, 2, 1, 5}}, {4, {3, 2, 4, 5}}},
};

static int64_t bidx(const shp *s, const shp *o, int64_t flat)
{
    int64_t idx[DG_MAX_RANK], r = flat;
    for (int d = o->rank - 1; d >= 0; d--) {
        idx[d] = r % o->d[d];
        r /= o->d[d];
    }
    int64_t off = 0;
    for (int d = 0; d < s->rank; d++) {
        int od = d + (o->rank - s->rank);
        off = off * s->d[d] + (s->d[d] == 1 ? 0 : idx[od]);
    }
    return off;
}


static double ref_bin(const char *op, double x, double y, dg_dtype t)
{
    int isint = t == DG_I32 || t == DG_I64;
    if (!strcmp(op, "Add")) return x + y;
    if (!strcmp(op, "Sub")) return x - y;
    if (!strcmp(op, "Mul")) return x * y;
    if (!strcmp(op, "Div")) return isint ? (double)((int64_t)x / (int64_t)y) : x / y;
    if (!strcmp(op, "Pow")) return pow(x, y);
    if (!strcmp(op, "Maximum")) return x > y ? x : y;
    if (!strcmp(op, "Minimum")) return x < y ? x : y;
    if (!strcmp(op, "Equal")) return x == y;
    return NAN;
}

static void test_binary_broadcast(void **state)
{
    (void)state;
    const char *ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Maximum",
                         "Minimum", "Equal"};
    double va[256], vb[256];
    for (size_t s = 0; s < sizeof bshapes / sizeof bshapes[0]; s++)
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
            for (int t = 0; t < DG_BOOL; t++) {
                const shp *sa = &bshapes[s].a, *sb = &bshapes[s].b,
                          *so = &bshapes[s].o;
                int pw = !strcmp(ops[o], "Pow"), dv = !strcmp(ops[o], "Div");
                fill_vals(va, numel(sa), (dg_dtype)t, pw ? 1 : -9, pw ? 4 : 9);
                fill_vals(vb, numel(sb), (dg_dtype)t, pw ? 0 : dv ? 1 : -9,
                          pw ? 4 : 9);
                if (!strcmp(ops[o], "Equal"))
                    for (int64_t i = 0; i < numel(sb); i++)
                        vb[i] = floor(vb[i] / 4); /* make some equal */
                kt t1;
                kt_init(&t1, ops[o]);
                kt_in(&t1, (dg_dtype)t, sa->rank, sa->d, va);
                kt_in(&t1, (dg_dtype)t, sb->rank, sb->d, vb);
                assert_int_equal(kt_run(&t1), DG_OK);
                assert_int_equal(t1.out[0].shape.rank, so->rank);
                int64_t n = numel(so);
                assert_int_equal(dg_shape_numel(&t1.out[0].shape), n);
                for (int64_t i = 0; i < n; i++) {
                    double x = get_elem(t1.in[0].buf->host, (dg_dtype)t, bidx(sa, so, i));
                    double y = get_elem(t1.in[1].buf->host, (dg_dtype)t, bidx(sb, so, i));
                    char what[96];
                    snprintf(what, sizeof what, "%s %s shapes#%zu elem %lld",
                             ops[o], dg_dtype_name((dg_dtype)t), s, (long long)i);
                    assert_close(kt_out(&t1, 0, i), ref_bin(ops[o], x, y, (dg_dtype)t),
                                 tol((dg_dtype)t), what);
                }
                kt_free(&t1);
            }
}

static void test_binary_large(void **state)
{
    (void)state;
    /* above the parallel threshold, general strided path */
    int64_t da[3] = {64, 1, 700}, db[2] = {3, 1};
    int64_t na = 64 * 700;
    double *va = dg_malloc(sizeof(double) * (size_t)na);
    fill_vals(va, na, DG_F32, -1, 1);
    double vb[3] = {1, 2, 3};
    kt t1;
    kt_init(&t1, "Mul");
    kt_in(&t1, DG_F32, 3, da, va);
    kt_in(&t1, DG_F32, 2, db, vb);
    assert_int_equal(kt_run(&t1), DG_OK);
    for (int64_t i = 0; i < 64; i++)
        for (int64_t j = 0; j < 3; j++)
            for (int64_t c = 0; c < 700; c++)
                assert_close(kt_out(&t1, 0, (i * 3 + j) * 700 + c),
                             (double)(float)va[i * 700 + c] * (double)(j + 1),
                             1e-6, "large mul");
    kt_free(&t1);
    dg_free(va);
}

static void test_int_div(void **state)
{
    (void)state;
    for (int t = DG_I32; t <= DG_I64; t++) {
        int64_t d4[1] = {4};
        double a[4] = {-7, 7, -7, 7}, b[4] = {2, 2, -2, -2};
        kt t1;
        kt_init(&t1, "Div");
        kt_in(&t1, (dg_dtype)t, 1, d4, a);
        kt_in(&t1, (dg_dtype)t, 1, d4, b);
        assert_int_equal(kt_run(&t1), DG_OK);
        double want[4] = {-3, 3, 3, -3};
        for (int i = 0; i < 4; i++)
            assert_true(kt_out(&t1, 0, i) == want[i]);
        kt_free(&t1);

        double z[4] = {1, 0, 1, 1};
        kt_init(&t1, "Div");
        kt_in(&t1, (dg_dtype)t, 1, d4, a);
        kt_in(&t1, (dg_dtype)t, 1, d4, z);
        assert_int_equal(kt_run(&t1), DG_E_RUNTIME);
        assert_non_null(strstr(t1.err.msg, "node 'node1'"));
        assert_non_null(strstr(t1.err.msg, "division by zero"));
        kt_free(&t1);
    }
}

/* ---- unary --------------------------------------------------------------- */

static double ref_un(const char *op, double x)
{
    if (!strcmp(op, "Neg")) return -x;
    if (!strcmp(op, "Abs")) return fabs(x);
    if (!strcmp(op, "Sin")) return sin(x);
    if (!strcmp(op, "Cos")) return cos(x);
    if (!strcmp(op, "Exp")) return exp(x);
    if (!strcmp(op, "Log")) return log(x);
    if (!strcmp(op, "Sqrt")) return sqrt(x);
    if (!strcmp(op, "Square")) return x * x;
    if (!strcmp(op, "Tanh")) return tanh(x);
    if (!strcmp(op, "Sigmoid")) return 1 / (1 + exp(-x));
    if (!strcmp(op, "Relu")) return x > 0 ? x : 0;
    if (!strcmp(op, "Identity")) return x;
    if (!strcmp(op, "ZerosLike")) return 0;
    if (!strcmp(op, "OnesLike")) return 1;
    return NAN;
}

static void test_unary(void **state)
{
    (void)state;
    const char *ops[] = {"Neg", "Abs", "Sin", "Cos", "Exp", "Log", "Sqrt",
                         "Square", "Tanh", "Sigmoid", "Relu", "Identity",
                         "ZerosLike", "OnesLike"};
    double v[40];
    int64_t dims[2] = {5, 8};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int t = 0; t < DG_BOOL; t++) {
            int op = dgc_op_find(ops[o]);
            if (!(dgc_ops[op].dtypes & (1u << t)))
                continue;
            int pos = !strcmp(ops[o], "Log") || !strcmp(ops[o], "Sqrt");
            fill_vals(v, 40, (dg_dtype)t, pos ? 0.1 : -5, 5);
            kt t1;
            kt_init(&t1, ops[o]);
            kt_in(&t1, (dg_dtype)t, 2, dims, v);
            assert_int_equal(kt_run(&t1), DG_OK);
            for (int i = 0; i < 40; i++) {
                double x = get_elem(t1.in[0].buf->host, (dg_dtype)t, i);
                assert_close(kt_out(&t1, 0, i), ref_un(ops[o], x),
                             tol((dg_dtype)t), ops[o]);
            }
            kt_free(&t1);
        }
}

/* ---- reductions ---------------------------------------------------------- */

static void run_reduce(const char *op, dg_dtype t, const shp *xs, uint32_t mask,
                       int keep, int absent)
{
    int64_t n = numel(xs);
    double *v = dg_malloc(sizeof(double) * (size_t)(n ? n : 1));
    fill_vals(v, n, t, -20, 20);
    kt t1;
    kt_init(&t1, op);
    kt_in(&t1, t, xs->rank, xs->d, v);
    if (!absent) {
        int64_t ax[DG_MAX_RANK];
        int na = 0;
        for (int d = 0; d < xs->rank; d++)
            if ((mask >> d) & 1) {
                ax[na] = (na & 1) ? d - xs->rank : d; /* mix negatives */
                na++;
            }
        assert_int_equal(dgc_node_set_ints(NODE(&t1), "axis", ax, na), 0);
    }
    dgc_node_set_bool(NODE(&t1), "keepdims", keep);
    assert_int_equal(kt_run(&t1), DG_OK);
    /* reference */
    shp os = {0, {0}};
    for (int d = 0; d < xs->rank; d++)
        os.d[os.rank++] = ((mask >> d) & 1) ? 1 : xs->d[d];
    int64_t no = numel(&os), cnt = no ? n / no : 0;
    assert_int_equal(dg_shape_numel(&t1.out[0].shape), no);
    double *acc = dg_calloc((size_t)(no ? no : 1), sizeof(double));
    int mx = !strcmp(op, "Max");
    for (int64_t i = 0; i < no; i++)
        acc[i] = mx ? -INFINITY : 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = i, o = 0, mul = 1;
        for (int d = xs->rank - 1; d >= 0; d--) {
            int64_t id = r % xs->d[d];
            r /= xs->d[d];
            if (!((mask >> d) & 1))
                o += id * mul;
            mul *= os.d[d];
        }
        double x = get_elem(t1.in[0].buf->host, t, i);
        acc[o] = mx ? (x > acc[o] ? x : acc[o]) : acc[o] + x;
    }
    for (int64_t i = 0; i < no; i++) {
        double want = acc[i];
        if (!strcmp(op, "Mean")) {
            want = (t == DG_I32 || t == DG_I64)
                       ? (double)((int64_t)acc[i] / cnt) : acc[i] / (double)cnt;
        }
        char what[64];
        snprintf(what, sizeof what, "%s %s mask %u keep %d", op,
                 dg_dtype_name(t), mask, keep);
        assert_close(kt_out(&t1, 0, i), want, tol(t) * 10, what);
    }
    dg_free(acc);
    dg_free(v);
    kt_free(&t1);
}

static void test_reduce_axis_sets(void **state)
{
    (void)state;
    const char *ops[] = {"Sum", "Mean", "Max"};
    shp shapes[] = {{3, {2, 3, 4}}, {4, {3, 1, 5, 2}}, {1, {7}}, {2, {3, 600}}};
    for (size_t s = 0; s < 4; s++)
        for (uint32_t m = 0; m < (1u << shapes[s].rank); m++)
            for (int o = 0; o < 3; o++)
                for (int t = 0; t < DG_BOOL; t++) {
                    run_reduce(ops[o], (dg_dtype)t, &shapes[s], m, (int)(m & 1), 0);
                    run_reduce(ops[o], (dg_dtype)t, &shapes[s], m, (int)(~m & 1), 0);
                }
    for (int o = 0; o < 3; o++) {
        shp s = {3, {2, 3, 4}};
        run_reduce(ops[o], DG_F32, &s, 7, 0, 1); /* axis absent = all */
        shp big = {2, {300, 257}};
        run_reduce(ops[o], DG_F64, &big, 1, 0, 0);
        run_reduce(ops[o], DG_F64, &big, 2, 0, 0);
        run_reduce(ops[o], DG_F64, &big, 3, 0, 0);
        /* column sums of short rows (BiasAddGrad): row blocks, rows read
         * k at a time, the remainder one by one, L = 1..BLK */
        shp cols[] = {{2, {20000, 7}}, {2, {1001, 3}}, {4, {7, 13, 11, 3}},
                      {2, {129, 255}}, {2, {300, 256}}, {2, {5, 2}}};
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
            for (int t = 0; t < DG_BOOL; t++)
                run_reduce(ops[o], (dg_dtype)t, &cols[c],
                           (1u << (cols[c].rank - 1)) - 1, 0, 0);
        shp e = {2, {0, 3}};
        run_reduce("Sum", DG_F32, &e, 1, 0, 0);
        run_reduce("Sum", DG_I32, &e, 2, 0, 0);
    }
}

/* Issue 19: a reduction's bits do not depend on the intra-op pool's size.
 * Sum and Mean of float32 and float64 (whose double sums show any change
 * of order; float32's are summed in double and rarely do) to one number (fixed-size blocks, partials added
 * in block order) and over either axis of a matrix, inline and on pools
 * of 2, 3 and 5 threads: the outputs must be byte-identical. */
static void test_reduce_any_pool(void **state)
{
    (void)state;
    int64_t n = 300001;
    double *v = dg_malloc(sizeof *v * (size_t)n);
    uint32_t s = 99;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        /* a wide range of exponents, so that even double sums round */
        double m = (double)(s >> 8) / (1 << 23) - 1.0;
        v[i] = (double)(float)ldexp(m, (int)((s >> 3) % 61) - 30);
    }
    struct { int rank; int64_t d[2]; int axis; } cases[] = {
        {1, {300001, 0}, -1}, {2, {600, 500}, -1}, {2, {600, 500}, 0},
        {2, {600, 500}, 1}, {2, {50000, 6}, 0}, {2, {1500, 200}, 0}};
    const char *ops[] = {"Sum", "Mean"};
    int threads[] = {0, 2, 3, 5};
    struct dgr_pool *saved = g_pool;
    for (int dt = DG_F32; dt <= DG_F64; dt++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int o = 0; o < 2; o++) {
            void *first = NULL;
            size_t bytes = 0;
            for (int p = 0; p < 4; p++) {
                dg_error err;
                g_pool = threads[p] ? dgr_pool_new(threads[p], &err) : NULL;
                kt t1;
                kt_init(&t1, ops[o]);
                kt_in(&t1, (dg_dtype)dt, cases[c].rank, cases[c].d, v);
                if (cases[c].axis >= 0) {
                    int64_t ax = cases[c].axis;
                    assert_int_equal(dgc_node_set_ints(NODE(&t1), "axis", &ax, 1), 0);
                }
                assert_int_equal(kt_run(&t1), DG_OK);
                size_t b = (size_t)dg_shape_numel(&t1.out[0].shape) *
                           dg_dtype_size((dg_dtype)dt);
                if (!first) {
                    first = dg_malloc(b);
                    memcpy(first, t1.out[0].buf->host, b);
                    bytes = b;
                } else if (b != bytes ||
                           memcmp(first, t1.out[0].buf->host, b) != 0) {
                    fail_msg("%s %s case %zu: %d threads differ from inline",
                             ops[o], dg_dtype_name((dg_dtype)dt), c,
                             threads[p]);
                }
                kt_free(&t1);
                dgr_pool_free(g_pool);
            }
            dg_free(first);
        }
    g_pool = saved;
    dg_free(v);
}

/* ---- MatMul -------------------------------------------------------------- */

static void test_matmul(void **state)
{
    (void)state;
    const int64_t M = 3, K = 4, N = 5;
    double a[12], b[20];
    for (int t = DG_F32; t <= DG_F64; t++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                fill_vals(a, 12, (dg_dtype)t, -2, 2);
                fill_vals(b, 20, (dg_dtype)t, -2, 2);
                int64_t da[2] = {ta ? K : M, ta ? M : K};
                int64_t db[2] = {tb ? N : K, tb ? K : N};
                kt t1;
                kt_init(&t1, "MatMul");
                kt_in(&t1, (dg_dtype)t, 2, da, a);
                kt_in(&t1, (dg_dtype)t, 2, db, b);
                dgc_node_set_bool(NODE(&t1), "transpose_a", ta);
                dgc_node_set_bool(NODE(&t1), "transpose_b", tb);
                assert_int_equal(kt_run(&t1), DG_OK);
                assert_int_equal(t1.out[0].shape.dims[0], M);
                assert_int_equal(t1.out[0].shape.dims[1], N);
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double s = 0;
                        for (int64_t q = 0; q < K; q++) {
                            double x = ta ? a[q * M + i] : a[i * K + q];
                            double y = tb ? b[j * K + q] : b[q * N + j];
                            s += (double)(t == DG_F32 ? (float)x : x) *
                                 (t == DG_F32 ? (float)y : y);
                        }
                        assert_close(kt_out(&t1, 0, i * N + j), s, tol((dg_dtype)t), "matmul");
                    }
                kt_free(&t1);
            }
    /* K = 0 gives zeros */
    int64_t da[2] = {2, 0}, db[2] = {0, 3};
    kt t1;
    kt_init(&t1, "MatMul");
    kt_in(&t1, DG_F32, 2, da, NULL);
    kt_in(&t1, DG_F32, 2, db, NULL);
    assert_int_equal(kt_run(&t1), DG_OK);
    for (int i = 0; i < 6; i++)
        assert_true(kt_out(&t1, 0, i) == 0);
    kt_free(&t1);
}

/* ---- Cast ---------------------------------------------------------------- */

static void test_cast(void **state)
{
    (void)state;
    double v[6] = {-2.7, -0.5, 0, 1.9, 3, 1};
    int64_t d[1] = {6};
    for (int s = 0; s < DG_DTYPE_COUNT; s++)
        for (int t = 0; t < DG_DTYPE_COUNT; t++) {
            kt t1;
            kt_init(&t1, "Cast");
            kt_in(&t1, (dg_dtype)s, 1, d, v);
            dgc_node_set_dtype(NODE(&t1), "dtype", (dg_dtype)t);
            assert_int_equal(kt_run(&t1), DG_OK);
            assert_int_equal(t1.out[0].dtype, t);
            for (int i = 0; i < 6; i++) {
                double x = get_elem(t1.in[0].buf->host, (dg_dtype)s, i);
                double want = t == DG_BOOL ? (x != 0)
                              : (t == DG_I32 || t == DG_I64) ? trunc(x)
                              : t == DG_F32 ? (float)x : x;
                assert_close(kt_out(&t1, 0, i), want, 1e-7, "cast");
            }
            kt_free(&t1);
        }
}

/* ---- Transpose, ArgMax, Reshape ------------------------------------------ */

static void test_transpose(void **state)
{
    (void)state;
    int64_t d[3] = {2, 3, 4};
    double v[24];
    for (int i = 0; i < 24; i++)
        v[i] = i % 2 ? i : 0;
    const int64_t perms[7][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0},
                                 {2, 0, 1}, {2, 1, 0}, {-1, -1, -1}};
    for (int p = 0; p < 7; p++)
        for (int t = 0; t < DG_DTYPE_COUNT; t++) {
            kt t1;
            kt_init(&t1, "Transpose");
            kt_in(&t1, (dg_dtype)t, 3, d, v);
            int64_t pr[3] = {2, 1, 0};
            if (perms[p][0] >= 0) {
                memcpy(pr, perms[p], sizeof pr);
                dgc_node_set_ints(NODE(&t1), "perm", pr, 3);
            }
            assert_int_equal(kt_run(&t1), DG_OK);
            int64_t od[3] = {d[pr[0]], d[pr[1]], d[pr[2]]};
            for (int i = 0; i < 3; i++)
                assert_int_equal(t1.out[0].shape.dims[i], od[i]);
            for (int64_t i = 0; i < od[0]; i++)
                for (int64_t j = 0; j < od[1]; j++)
                    for (int64_t q = 0; q < od[2]; q++) {
                        int64_t id[3];
                        id[pr[0]] = i;
                        id[pr[1]] = j;
                        id[pr[2]] = q;
                        double want = get_elem(t1.in[0].buf->host, (dg_dtype)t,
                                               (id[0] * 3 + id[1]) * 4 + id[2]);
                        assert_true(kt_out(&t1, 0, (i * od[1] + j) * od[2] + q) == want);
                    }
            kt_free(&t1);
        }
}

static void test_argmax_reshape(void **state)
{
    (void)state;
    int64_t d[2] = {3, 4};
    double v[12] = {1, 5, 5, 0, 9, 2, 9, 1, -1, -3, -2, -1};
    for (int t = 0; t < DG_BOOL; t++) {
        for (int ax = -2; ax < 2; ax++) {
            kt t1;
            kt_init(&t1, "ArgMax");
            kt_in(&t1, (dg_dtype)t, 2, d, v);
            dgc_node_set_int(NODE(&t1), "axis", ax);
            assert_int_equal(kt_run(&t1), DG_OK);
            assert_int_equal(t1.out[0].dtype, DG_I64);
            int a = ax < 0 ? ax + 2 : ax;
            if (a == 1) {
                double want[3] = {1, 0, 0};
                for (int i = 0; i < 3; i++)
                    assert_true(kt_out(&t1, 0, i) == want[i]);
            } else {
                double want[4] = {1, 0, 1, 1};
                for (int i = 0; i < 4; i++)
                    assert_true(kt_out(&t1, 0, i) == want[i]);
            }
            kt_free(&t1);
        }
    }
    kt t1;
    kt_init(&t1, "Reshape");
    kt_in(&t1, DG_F32, 2, d, v);
    int64_t ns[2] = {-1, 6};
    dgc_node_set_ints(NODE(&t1), "shape", ns, 2);
    assert_int_equal(kt_run(&t1), DG_OK);
    assert_ptr_equal(t1.out[0].buf, t1.in[0].buf);
    assert_int_equal(t1.out[0].shape.dims[0], 2);
    assert_int_equal(t1.out[0].shape.dims[1], 6);
    kt_free(&t1);
}

/* ---- AddN, BiasAdd, Const ------------------------------------------------ */

static void test_addn_biasadd_const(void **state)
{
    (void)state;
    int64_t d[2] = {2, 3}, db[1] = {3};
    double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60},
           c[6] = {-1, -1, -1, -2, -2, -2};
    for (int t = 0; t < DG_BOOL; t++) {
        kt t1;
        kt_init(&t1, "AddN");
        kt_in(&t1, (dg_dtype)t, 2, d, a);
        kt_in(&t1, (dg_dtype)t, 2, d, b);
        kt_in(&t1, (dg_dtype)t, 2, d, c);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int i = 0; i < 6; i++)
            assert_true(kt_out(&t1, 0, i) == a[i] + b[i] + c[i]);
        kt_free(&t1);
        kt_init(&t1, "BiasAdd");
        kt_in(&t1, (dg_dtype)t, 2, d, a);
        kt_in(&t1, (dg_dtype)t, 1, db, b);
        assert_int_equal(kt_run(&t1), DG_OK);
        for (int i = 0; i < 6; i++)
            assert_true(kt_out(&t1, 0, i) == a[i] + b[i % 3]);
        kt_free(&t1);
    }
    kt t1;
    kt_init(&t1, "Const");
    dg_shape s = mkshape(2, d);
    dg_tensor *tv = dg_tensor_new(DG_F64, &s);
    memcpy(tv->data, a, sizeof a);
    dgc_node_set_tensor(NODE(&t1), "value", tv);
    assert_int_equal(kt_run(&t1), DG_OK);
    for (int i = 0; i < 6; i++)
        assert_true(kt_out(&t1, 0, i) == a[i]);
    kt_free(&t1);
}

/* ---- empty tensors ------------------------------------------------------- */

static void test_empty(void **state)
{
    (void)state;
    int64_t d[2] = {0, 3};
    const char *ops[] = {"Softmax", "Relu", "Transpose", "Cast"};
    for (int o = 0; o < 4; o++) {
        kt t1;
        kt_init(&t1, ops[o]);
        kt_in(&t1, DG_F32, 2, d, NULL);
        if (o == 3)
            dgc_node_set_dtype(NODE(&t1), "dtype", DG_I32);
        assert_int_equal(kt_run(&t1), DG_OK);
        assert_int_equal(dg_shape_numel(&t1.out[0].shape), 0);
        kt_free(&t1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_complete),
        cmocka_unit_test(test_binary_broadcast),
        cmocka_unit_test(test_binary_large),
        cmocka_unit_test(test_int_div),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_reduce_axis_sets),
        cmocka_unit_test(test_reduce_any_pool),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_argmax_reshape),
        cmocka_unit_test(test_addn_biasadd_const),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
