/*
 * test_gradcheck.c -- every differentiable op's generated gradient against
 * central finite differences, in float64 on CPU:0, on random inputs and
 * shapes (broadcasting included).  Each case is a graph
 *     f = OP(x0, x1, ...);  L = Sum(Sin(f));  gradients g: d L / d xi
 * compiled and run once for the analytic gradients; then each input
 * element is nudged by +-h through dgr_session_write_variable and L
 * re-evaluated in the same session.  Also gradients through a while loop
 * (an RNN cell run by Enter/Merge/Switch/NextIteration/Exit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dgrun.h"
#include "program.h"
#include "session.h"

#define MAXIN 3

typedef struct gcase {
    const char *op;
    int n_in;
    int rank[MAXIN];
    int64_t dims[MAXIN][4];
    int domain;         /* 0: (-2, 2) away from 0, 1: (0.5, 2), 2: x0 as 0,
                           x1 positive rows summing to 1 (labels) */
    const char *attrs;  /* JSON object text or NULL */
    const char *extra;  /* extra input: a Const node (JSON) named "lab" */
    int n_diff;         /* inputs to differentiate (default n_in) */
} gcase;

static uint64_t rng_state = 0x12345678abcdefull;
static double urand(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static double sample(int domain)
{
    if (domain == 1)
        return 0.5 + 1.5 * urand();
    double v = 0.2 + 1.8 * urand();
    return urand() < 0.5 ? -v : v;
}

static void nested(char *buf, size_t sz, const double *v, int rank,
                   const int64_t *dims, int64_t *pos)
{
    size_t o = strlen(buf);
    if (rank == 0) {
        snprintf(buf + o, sz - o, "%.17g", v[(*pos)++]);
        return;
    }
    snprintf(buf + o, sz - o, "[");
    for (int64_t i = 0; i < dims[0]; i++) {
        if (i)
            strncat(buf, ", ", sz - strlen(buf) - 1);
        nested(buf, sz, v, rank - 1, dims + 1, pos);
    }
    strncat(buf, "]", sz - strlen(buf) - 1);
}

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= dims[i];
    return n;
}

static double scalar_of(const dg_tensor *t)
{
    return t->dtype == DG_F64 ? *(double *)t->data : *(float *)t->data;
}

/* Append Variable x<i> (float64, initialised to v) to json. */
static void add_var(char *json, size_t sz, int i, int rank,
                    const int64_t *dims, const double *v)
{
    size_t o = strlen(json);
    snprintf(json + o, sz - o,
             "{\"name\": \"x%d\", \"op\": \"Variable\", \"attrs\": "
             "{\"dtype\": \"float64\", \"shape\": [", i);
    for (int d = 0; d < rank; d++) {
        o = strlen(json);
        snprintf(json + o, sz - o, "%s%lld", d ? ", " : "",
                 (long long)dims[d]);
    }
    strncat(json, "], \"init\": ", sz - strlen(json) - 1);
    int64_t pos = 0;
    nested(json, sz, v, rank, dims, &pos);
    strncat(json, "}},", sz - strlen(json) - 1);
}

static void check_json(const char *what, const char *json, int n_diff,
                       double (*vals)[256], const int *rank,
                       const int64_t (*dims)[4]);

static void check_case(const gcase *c)
{
    static char json[1 << 16];
    double vals[MAXIN][256]; /* at most 256 elements per input */
    int n_diff = c->n_diff ? c->n_diff : c->n_in;
    json[0] = 0;
    strcat(json, "{\"version\": 1, \"nodes\": [");
    for (int i = 0; i < c->n_in; i++) {
        int64_t n = numel(c->rank[i], c->dims[i]);
        assert_true(n <= 256);
        for (int64_t k = 0; k < n; k++)
            vals[i][k] = sample(c->domain == 2 ? i : c->domain);
        if (c->domain == 2 && i == 1) { /* rows of a distribution */
            int64_t w = c->dims[i][c->rank[i] - 1];
            for (int64_t r0 = 0; r0 < n; r0 += w) {
                double sum = 0;
                for (int64_t k = 0; k < w; k++)
                    sum += vals[i][r0 + k];
                for (int64_t k = 0; k < w; k++)
                    vals[i][r0 + k] /= sum;
            }
        }
        add_var(json, sizeof json, i, c->rank[i], c->dims[i], vals[i]);
    }
    if (c->extra) {
        strcat(json, c->extra);
        strcat(json, ",");
    }
    strcat(json, "{\"name\": \"f\", \"op\": \"");
    strcat(json, c->op);
    strcat(json, "\", \"inputs\": [");
    for (int i = 0; i < c->n_in; i++) {
        size_t o = strlen(json);
        snprintf(json + o, sizeof json - o, "%s\"x%d\"", i ? ", " : "", i);
    }
    if (c->extra) /* FusedBatchNormV3: "lab" is its mean and variance */
        strcat(json, strcmp(c->op, "FusedBatchNormV3") == 0
                         ? ", \"lab\", \"lab\"" : ", \"lab\"");
    strcat(json, "]");
    if (c->attrs) {
        strcat(json, ", \"attrs\": ");
        strcat(json, c->attrs);
    }
    strcat(json, "},"
           "{\"name\": \"s\", \"op\": \"Sin\", \"inputs\": [\"f\"]},"
           "{\"name\": \"L\", \"op\": \"Sum\", \"inputs\": [\"s\"]}],"
           "\"gradients\": [{\"name\": \"g\", \"ys\": [\"L\"], \"xs\": [");
    for (int i = 0; i < n_diff; i++) {
        size_t o = strlen(json);
        snprintf(json + o, sizeof json - o, "%s\"x%d\"", i ? ", " : "", i);
    }
    strcat(json, "]}]}");
    check_json(c->op, json, n_diff, vals, c->rank, c->dims);
}

/* Compile json (loss L, gradient set g over x0..x<n_diff-1> whose values
 * are vals), run it and compare each gradient element with central finite
 * differences. */
static void check_json(const char *what, const char *json, int n_diff,
                       double (*vals)[256], const int *rank,
                       const int64_t (*dims)[4])
{
    dg_error err = {0};
    dg_graph *g = dg_graph_load("gradcheck.json", json, strlen(json), &err);
    if (!g)
        fail_msg("%s: load: %s", what, err.msg);
    dg_device_list *devs = NULL;
    assert_int_equal(dg_devices_assume(0, &devs, &err), DG_OK);
    dg_options o;
    dg_options_init(&o);
    o.opencl_devices = "none";
    o.inter_op_threads = 1;
    o.intra_op_threads = 1;
    const char *fetch[1 + MAXIN] = {"L", "g/x0", "g/x1", "g/x2"};
    o.fetch = fetch;
    o.n_fetch = 1 + n_diff;
    dg_program *p = dg_compile(g, &o, devs, &err);
    if (!p)
        fail_msg("%s: compile: %s", what, err.msg);
    dg_session *s = dg_session_new(p, &o, &err);
    if (!s)
        fail_msg("%s: session: %s", what, err.msg);
    dg_fetch_result *r = NULL;
    int nr = 0;
    if (dg_session_run(s, &r, &nr, &err) != DG_OK)
        fail_msg("%s: run: %s", what, err.msg);
    assert_int_equal(nr, 1 + n_diff);

    /* numeric gradients */
    const double h = 1e-6;
    for (int i = 0; i < n_diff; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        int32_t id = dgc_graph_find(p->g, name);
        dg_shape sh;
        memset(&sh, 0, sizeof sh);
        sh.rank = rank[i];
        for (int d = 0; d < sh.rank; d++)
            sh.dims[d] = dims[i][d];
        dg_tensor *t = dg_tensor_new(DG_F64, &sh);
        int64_t n = numel(rank[i], dims[i]);
        const dg_tensor *ga = r[1 + i].value;
        assert_int_equal(ga->dtype, DG_F64);
        assert_int_equal(dg_shape_numel(&ga->shape), n);
        for (int64_t k = 0; k < n; k++) {
            double L[2];
            for (int sgn = 0; sgn < 2; sgn++) {
                memcpy(t->data, vals[i], sizeof(double) * (size_t)n);
                ((double *)t->data)[k] += sgn ? -h : h;
                assert_int_equal(dgr_session_write_variable(
                                     (dgr_session *)s, id, t, &err), DG_OK);
                dg_fetch_result *r2 = NULL;
                int n2 = 0;
                if (dg_session_run(s, &r2, &n2, &err) != DG_OK)
                    fail_msg("%s: run: %s", what, err.msg);
                L[sgn] = scalar_of(r2[0].value);
                dg_fetch_results_free(r2, n2);
            }
            double fd = (L[0] - L[1]) / (2 * h);
            double an = ((double *)ga->data)[k];
            if (fabs(fd - an) > 1e-5 * fmax(1.0, fabs(fd)))
                fail_msg("%s: d L / d x%d[%lld]: generated %.9g, finite "
                         "differences %.9g", what, i, (long long)k, an, fd);
        }
        memcpy(t->data, vals[i], sizeof(double) * (size_t)n);
        assert_int_equal(dgr_session_write_variable((dgr_session *)s, id, t,
                                                    &err), DG_OK);
        dg_tensor_free(t);
    }
    dg_fetch_results_free(r, nr);
    dg_session_free(s);
    dg_program_free(p);
    dg_devices_free(devs);
}

#define U(op, dom) {op, 1, {2}, {{2, 3}}, dom, NULL, NULL, 0}

static const gcase unary[] = {
    U("Identity", 0), U("Neg", 0), U("Abs", 0), U("Sin", 0), U("Cos", 0),
    U("Exp", 0), U("Log", 1), U("Sqrt", 1), U("Square", 0), U("Tanh", 0),
    U("Sigmoid", 0), U("Relu", 0), U("Softmax", 0),
    /* TF graph ops (issue 10) */
    U("Rsqrt", 1), U("Reciprocal", 1), U("Relu6", 0), U("L2Loss", 0),
    U("LogSoftmax", 0),
};

/* op breadth (issue 22): grad/grad_zoo.c's rules */
static const gcase zoo[] = {
    U("Erf", 0), U("Erfc", 0), U("Elu", 0), U("Selu", 0), U("Softplus", 0),
    U("Softsign", 0),
    /* step 3's math (Tan, Asin, Acos: outside these domains; the harness
     * checks them against TF) */
    U("Log1p", 1), U("Expm1", 0), U("Atan", 0), U("Sinh", 0), U("Cosh", 0),
    {"LeakyRelu", 1, {2}, {{2, 3}}, 0, "{\"alpha\": 0.1}", NULL, 0},
    {"SquaredDifference", 2, {2, 1}, {{2, 3}, {3}}, 0, NULL, NULL, 0},
    {"DivNoNan", 2, {2, 1}, {{2, 3}, {3}}, 1, NULL, NULL, 0},
    {"Atan2", 2, {2, 1}, {{2, 3}, {3}}, 1, NULL, NULL, 0},
    {"Cumsum", 1, {2}, {{2, 3}}, 0, "{\"axis\": 1, \"reverse\": true}", NULL,
     0},
    {"Cumsum", 1, {2}, {{3, 2}}, 0, "{\"exclusive\": true}", NULL, 0},
    {"Einsum", 2, {3, 3}, {{2, 3, 2}, {2, 2, 3}}, 0,
     "{\"equation\": \"abc,cde->abde\"}", NULL, 0},
    {"Einsum", 2, {4, 4}, {{2, 3, 2, 2}, {2, 2, 2, 2}}, 0,
     "{\"equation\": \"aecd,abcd->acbe\"}", NULL, 0},
    {"Einsum", 1, {3}, {{2, 3, 2}}, 0, "{\"equation\": \"bij->bj\"}", NULL,
     0},
    {"Einsum", 2, {3, 2}, {{2, 2, 3}, {3, 2}}, 0,
     "{\"equation\": \"...ij,jk->...ik\"}", NULL, 0},
    {"BatchMatMulV2", 2, {3, 3}, {{2, 2, 3}, {2, 3, 2}}, 0, NULL, NULL, 0},
    {"BatchMatMulV2", 2, {3, 2}, {{2, 3, 2}, {4, 3}}, 0,
     "{\"adj_x\": true, \"adj_y\": true}", NULL, 0},
    {"IdentityN", 2, {2, 1}, {{2, 3}, {3}}, 0, NULL, NULL, 0},
    {"ReverseV2", 1, {3}, {{2, 3, 2}}, 0, NULL,
     "{\"name\": \"lab\", \"op\": \"Const\", \"attrs\": {\"dtype\": "
     "\"int32\", \"value\": [0, 2]}}", 0},
    /* (ResizeBilinear outputs float32 whatever its input, too coarse for
     * finite differences: tests/cli/e2e_ops.py checks its gradient
     * against TF's) */
    {"ResizeNearestNeighbor", 1, {4}, {{1, 3, 2, 2}}, 0, NULL,
     "{\"name\": \"lab\", \"op\": \"Const\", \"attrs\": {\"dtype\": "
     "\"int32\", \"value\": [6, 3]}}", 0},
};

static const gcase binary[] = {
    {"Add", 2, {2, 1}, {{2, 3}, {3}}, 0, NULL, NULL, 0},
    {"Sub", 2, {2, 2}, {{2, 1}, {2, 3}}, 0, NULL, NULL, 0},
    {"Mul", 2, {1, 2}, {{3}, {2, 3}}, 0, NULL, NULL, 0},
    {"Div", 2, {2, 1}, {{2, 3}, {3}}, 0, NULL, NULL, 0},
    {"Pow", 2, {2, 1}, {{2, 3}, {3}}, 1, NULL, NULL, 0},
    {"Maximum", 2, {2, 0}, {{2, 3}, {0}}, 0, NULL, NULL, 0},
    {"Minimum", 2, {2, 2}, {{2, 3}, {2, 3}}, 0, NULL, NULL, 0},
    {"AddN", 3, {2, 2, 2}, {{2, 2}, {2, 2}, {2, 2}}, 0, NULL, NULL, 0},
    {"BiasAdd", 2, {2, 1}, {{4, 3}, {3}}, 0, NULL, NULL, 0},
};

static const gcase linalg[] = {
    {"MatMul", 2, {2, 2}, {{2, 3}, {3, 4}}, 0, NULL, NULL, 0},
    {"MatMul", 2, {2, 2}, {{3, 2}, {3, 4}}, 0, "{\"transpose_a\": true}", NULL, 0},
    {"MatMul", 2, {2, 2}, {{2, 3}, {4, 3}}, 0, "{\"transpose_b\": true}", NULL, 0},
    {"MatMul", 2, {2, 2}, {{3, 2}, {4, 3}}, 0,
     "{\"transpose_a\": true, \"transpose_b\": true}", NULL, 0},
};

static const gcase shaping[] = {
    {"Sum", 1, {2}, {{2, 3}}, 0, "{\"axis\": 1}", NULL, 0},
    {"Sum", 1, {3}, {{2, 3, 2}}, 0, NULL, NULL, 0},
    {"Mean", 1, {2}, {{2, 3}}, 0, "{\"axis\": 0, \"keepdims\": true}", NULL, 0},
    {"Mean", 1, {3}, {{2, 3, 2}}, 0, "{\"axis\": [0, 2]}", NULL, 0},
    {"Max", 1, {2}, {{2, 3}}, 0, "{\"axis\": 1}", NULL, 0},
    {"Reshape", 1, {2}, {{2, 3}}, 0, "{\"shape\": [3, -1]}", NULL, 0},
    {"Transpose", 1, {2}, {{2, 3}}, 0, "{\"perm\": [1, 0]}", NULL, 0},
    {"Transpose", 1, {3}, {{2, 3, 4}}, 0, "{\"perm\": [2, 0, 1]}", NULL, 0},
    {"Cast", 1, {2}, {{2, 3}}, 0, "{\"dtype\": \"float64\"}", NULL, 0},
};

static const gcase nn[] = {
    {"SoftmaxCrossEntropyWithLogits", 1, {2}, {{2, 3}}, 0, NULL,
     "{\"name\": \"lab\", \"op\": \"Const\", \"attrs\": {\"dtype\": \"float64\", "
     "\"value\": [[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]}}", 0},
    {"SoftmaxCrossEntropyWithLogits", 2, {2, 2}, {{3, 4}, {3, 4}}, 2, NULL,
     NULL, 0}, /* labels differentiated too */
    {"SparseSoftmaxCrossEntropyWithLogits", 1, {2}, {{2, 3}}, 0, NULL,
     "{\"name\": \"lab\", \"op\": \"Const\", \"attrs\": {\"dtype\": \"int32\", "
     "\"value\": [2, 0]}}", 0},
    {"BatchNorm", 3, {2, 1, 1}, {{4, 3}, {3}, {3}}, 0, NULL, NULL, 0},
    /* TF graph ops (issue 10) */
    {"ExpandDims", 1, {2}, {{2, 3}}, 0, "{\"axis\": -1}", NULL, 0},
    {"Squeeze", 1, {3}, {{2, 1, 3}}, 0, "{\"axis\": [1]}", NULL, 0},
    {"Squeeze", 1, {3}, {{1, 3, 1}}, 0, NULL, NULL, 0},
    {"Pack", 2, {2, 2}, {{2, 3}, {2, 3}}, 0, "{\"axis\": 1}", NULL, 0},
    {"ConcatV2", 3, {2, 2, 2}, {{2, 3}, {2, 1}, {2, 2}}, 0,
     "{\"axis\": 1}", NULL, 0},
    /* issue 21: the axis a run-time input (TF's ConcatOffset and Slice) */
    {"ConcatV2", 3, {2, 2, 2}, {{2, 3}, {2, 1}, {2, 2}}, 0, NULL,
     "{\"name\": \"lab\", \"op\": \"Const\", \"attrs\": {\"dtype\": \"int32\", "
     "\"value\": -1}}", 0},
    {"Tile", 1, {2}, {{2, 3}}, 0, "{\"multiples\": [2, 3]}", NULL, 0},
};

/* TF's CNN ops (their gradients are the backprop ops) */
#define BN_STATS "{\"name\": \"lab\", \"op\": \"Const\", \"attrs\": " \
    "{\"dtype\": \"float64\", \"value\": [0.3, 0.7, 1.2]}}"
static const gcase cnn[] = {
    {"Conv2D", 2, {4, 4}, {{2, 5, 4, 3}, {3, 2, 3, 2}}, 0,
     "{\"strides\": [1, 2, 1, 1], \"padding\": \"SAME\"}", NULL, 0},
    {"Conv2D", 2, {4, 4}, {{1, 3, 6, 5}, {3, 3, 3, 2}}, 0,
     "{\"padding\": \"VALID\", \"data_format\": \"NCHW\", "
     "\"dilations\": [1, 1, 2, 1]}", NULL, 0},
    {"Conv2D", 2, {4, 4}, {{1, 4, 3, 2}, {2, 2, 2, 3}}, 0,
     "{\"strides\": [1, 2, 2, 1], \"padding\": \"EXPLICIT\", "
     "\"explicit_paddings\": [0, 0, 1, 2, 0, 1, 0, 0]}", NULL, 0},
    {"DepthwiseConv2dNative", 2, {4, 4}, {{2, 4, 5, 2}, {2, 3, 2, 2}}, 0,
     "{\"strides\": [1, 2, 2, 1], \"padding\": \"SAME\"}", NULL, 0},
    {"DepthwiseConv2dNative", 2, {4, 4}, {{1, 2, 5, 4}, {3, 2, 2, 1}}, 0,
     "{\"padding\": \"SAME\", \"data_format\": \"NCHW\"}", NULL, 0},
    {"MaxPool", 1, {4}, {{2, 5, 5, 2}}, 0,
     "{\"ksize\": [1, 3, 3, 1], \"strides\": [1, 2, 2, 1], "
     "\"padding\": \"SAME\"}", NULL, 0},
    {"AvgPool", 1, {4}, {{1, 5, 4, 2}}, 0,
     "{\"ksize\": [1, 2, 3, 1], \"strides\": [1, 2, 2, 1], "
     "\"padding\": \"SAME\"}", NULL, 0},
    {"AvgPool", 1, {4}, {{1, 2, 5, 4}}, 0,
     "{\"ksize\": [1, 1, 2, 2], \"strides\": [1, 1, 1, 2], "
     "\"padding\": \"VALID\", \"data_format\": \"NCHW\"}", NULL, 0},
    {"FusedBatchNormV3", 3, {4, 1, 1}, {{2, 3, 2, 3}, {3}, {3}}, 0,
     "{\"epsilon\": 0.001, \"is_training\": true}", BN_STATS, 0},
    {"FusedBatchNormV3", 3, {4, 1, 1}, {{2, 3, 2, 3}, {3}, {3}}, 0,
     "{\"epsilon\": 0.001, \"is_training\": false}", BN_STATS, 0},
    {"FusedBatchNormV3", 3, {4, 1, 1}, {{2, 3, 2, 2}, {3}, {3}}, 0,
     "{\"is_training\": true, \"data_format\": \"NCHW\"}", BN_STATS, 0},
};

static void run_cases(const gcase *cs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check_case(&cs[i]);
}

/* Unary ops on random shapes: rank 1..3, dims 1..3 (2 shapes per op). */
static void test_unary(void **s)
{
    (void)s;
    for (size_t i = 0; i < sizeof unary / sizeof *unary; i++)
        for (int rep = 0; rep < 2; rep++) {
            gcase c = unary[i];
            c.rank[0] = 1 + (int)(urand() * 3);
            if (strcmp(c.op, "Softmax") == 0 && c.rank[0] < 2)
                c.rank[0] = 2;
            for (int d = 0; d < c.rank[0]; d++)
                c.dims[0][d] = 1 + (int64_t)(urand() * 3);
            check_case(&c);
        }
}
static void test_binary(void **s) { (void)s; run_cases(binary, sizeof binary / sizeof *binary); }
static void test_matmul(void **s) { (void)s; run_cases(linalg, sizeof linalg / sizeof *linalg); }
static void test_shaping(void **s) { (void)s; run_cases(shaping, sizeof shaping / sizeof *shaping); }
static void test_nn(void **s) { (void)s; run_cases(nn, sizeof nn / sizeof *nn); }
static void test_cnn(void **s) { (void)s; run_cases(cnn, sizeof cnn / sizeof *cnn); }
static void test_zoo(void **s) { (void)s; run_cases(zoo, sizeof zoo / sizeof *zoo); }

/* Gradients through a while loop (grad_loop.c): an RNN cell
 *     h = tanh(h x0 + x1 (i + 1)), n times from h = x2;  L = Sum(Sin(h))
 * with x0 and x1 loop-invariant (accumulated) and x2 a loop variable's
 * initial value; n = 0 runs no iteration. */
#define Q "\""
#define LN(name, op, in) "{" Q "name" Q ": " Q name Q ", " Q "op" Q ": " Q op \
    Q ", " Q "inputs" Q ": [" in "]"
#define EN(name, in, k) LN(name, "Enter", Q in Q) ", " Q "attrs" Q ": {" Q \
    "frame_name" Q ": " Q "L" Q k "}},"
#define CONSTANT ", " Q "is_constant" Q ": true"
static void check_loop(int n)
{
    static char json[1 << 16];
    double vals[3][256];
    const int rank[3] = {2, 1, 2};
    const int64_t dims[3][4] = {{3, 3}, {3}, {2, 3}};
    snprintf(json, sizeof json, "{" Q "version" Q ": 1, " Q "nodes" Q ": [");
    for (int i = 0; i < 3; i++) {
        for (int64_t k = 0; k < numel(rank[i], dims[i]); k++)
            vals[i][k] = 0.5 * sample(0);
        add_var(json, sizeof json, i, rank[i], dims[i], vals[i]);
    }
    size_t o = strlen(json);
    snprintf(json + o, sizeof json - o,
        LN("i0", "Const", "") ", " Q "attrs" Q ": {" Q "value" Q ": 0, " Q "dtype" Q ": " Q "int32" Q "}},"
        LN("n", "Const", "") ", " Q "attrs" Q ": {" Q "value" Q ": %d, " Q "dtype" Q ": " Q "int32" Q "}},"
        EN("L/e_i", "i0", "") EN("L/e_h", "x2", "")
        EN("L/c_n", "n", CONSTANT) EN("L/c_W", "x0", CONSTANT) EN("L/c_b", "x1", CONSTANT)
        LN("L/m_i", "Merge", Q "L/e_i" Q ", " Q "L/n_i" Q) "},"
        LN("L/m_h", "Merge", Q "L/e_h" Q ", " Q "L/n_h" Q) "},"
        LN("L/done", "Equal", Q "L/m_i" Q ", " Q "L/c_n" Q) "},"
        LN("L/cond", "LoopCond", Q "L/done" Q) "},"
        LN("L/s_i", "Switch", Q "L/m_i" Q ", " Q "L/cond" Q) "},"
        LN("L/s_h", "Switch", Q "L/m_h" Q ", " Q "L/cond" Q) "},"
        LN("L/b_i", "Identity", Q "L/s_i:0" Q) "},"
        LN("L/b_h", "Identity", Q "L/s_h:0" Q) "},"
        LN("L/one", "Const", Q "^L/b_i" Q) ", " Q "attrs" Q ": {" Q "value" Q ": 1, " Q "dtype" Q ": " Q "int32" Q "}},"
        LN("L/add", "Add", Q "L/b_i" Q ", " Q "L/one" Q) "},"
        LN("L/fi", "Cast", Q "L/b_i" Q) ", " Q "attrs" Q ": {" Q "dtype" Q ": " Q "float64" Q "}},"
        LN("L/onef", "Const", Q "^L/b_i" Q) ", " Q "attrs" Q ": {" Q "value" Q ": 1.0, " Q "dtype" Q ": " Q "float64" Q "}},"
        LN("L/fi1", "Add", Q "L/fi" Q ", " Q "L/onef" Q) "},"
        LN("L/mm", "MatMul", Q "L/b_h" Q ", " Q "L/c_W" Q) "},"
        LN("L/bb", "Mul", Q "L/c_b" Q ", " Q "L/fi1" Q) "},"
        LN("L/z", "Add", Q "L/mm" Q ", " Q "L/bb" Q) "},"
        LN("L/t", "Tanh", Q "L/z" Q) "},"
        LN("L/n_i", "NextIteration", Q "L/add" Q) "},"
        LN("L/n_h", "NextIteration", Q "L/t" Q) "},"
        LN("L/x_h", "Exit", Q "L/s_h:1" Q) "},"
        LN("s", "Sin", Q "L/x_h" Q) "},"
        LN("L", "Sum", Q "s" Q) "}],"
        Q "gradients" Q ": [{" Q "name" Q ": " Q "g" Q ", " Q "ys" Q ": [" Q "L" Q "], "
        Q "xs" Q ": [" Q "x0" Q ", " Q "x1" Q ", " Q "x2" Q "]}]}", n);
    char what[32];
    snprintf(what, sizeof what, "while loop n=%d", n);
    check_json(what, json, 3, vals, rank, dims);
}

static void test_while_loop(void **s)
{
    (void)s;
    check_loop(4);
    check_loop(1);
    check_loop(0);
}

/* SelfAdjointEigV2's gradient through both outputs (ops10c; its recorded
 * TF cases differentiate the eigenvalues only, the vectors' signs being
 * LAPACK's): L = Sum(Sin(v + e)), e broadcast along v's rows.  Only x0's
 * lower triangle is read, so the upper one's gradient is 0 both ways. */
static void test_self_adjoint_eig(void **s)
{
    (void)s;
    static char json[1 << 14];
    double vals[1][256];
    const int rank[1] = {2};
    const int64_t dims[1][4] = {{3, 3}};
    snprintf(json, sizeof json, "{" Q "version" Q ": 1, " Q "nodes" Q ": [");
    for (int64_t k = 0; k < 9; k++)
        vals[0][k] = sample(0);
    add_var(json, sizeof json, 0, rank[0], dims[0], vals[0]);
    size_t o = strlen(json);
    snprintf(json + o, sizeof json - o,
        LN("f", "SelfAdjointEigV2", Q "x0" Q) "},"
        LN("a", "Add", Q "f:1" Q ", " Q "f" Q) "},"
        LN("s", "Sin", Q "a" Q) "},"
        LN("L", "Sum", Q "s" Q) "}],"
        Q "gradients" Q ": [{" Q "name" Q ": " Q "g" Q ", " Q "ys" Q ": [" Q "L" Q "], "
        Q "xs" Q ": [" Q "x0" Q "]}]}");
    check_json("SelfAdjointEigV2", json, 1, vals, rank, dims);
}

/* Svd's gradient through s, u and v (ops10c; its recorded TF cases
 * differentiate s only, the vectors' signs being LAPACK's):
 * L = Sum(Sin(s)) + Sum(Sin(u)) + Sum(Sin(v)). */
static void check_svd(int64_t m, int64_t n, int full)
{
    static char json[1 << 14];
    double vals[1][256];
    const int rank[1] = {2};
    const int64_t dims[1][4] = {{m, n}};
    snprintf(json, sizeof json, "{" Q "version" Q ": 1, " Q "nodes" Q ": [");
    for (int64_t k = 0; k < m * n; k++)
        vals[0][k] = sample(0);
    add_var(json, sizeof json, 0, rank[0], dims[0], vals[0]);
    size_t o = strlen(json);
    snprintf(json + o, sizeof json - o,
        LN("f", "Svd", Q "x0" Q) ", " Q "attrs" Q ": {" Q "full_matrices" Q
            ": %s}},"
        LN("ss", "Sin", Q "f" Q) "}," LN("ls", "Sum", Q "ss" Q) "},"
        LN("su", "Sin", Q "f:1" Q) "}," LN("sv", "Sin", Q "f:2" Q) "},"
        LN("lu", "Sum", Q "su" Q) "}," LN("lv", "Sum", Q "sv" Q) "},"
        LN("L", "AddN", Q "ls" Q ", " Q "lu" Q ", " Q "lv" Q) "}],"
        Q "gradients" Q ": [{" Q "name" Q ": " Q "g" Q ", " Q "ys" Q ": [" Q "L" Q "], "
        Q "xs" Q ": [" Q "x0" Q "]}]}", full ? "true" : "false");
    char what[48];
    snprintf(what, sizeof what, "Svd %lldx%lld%s", (long long)m,
             (long long)n, full ? " full" : "");
    check_json(what, json, 1, vals, rank, dims);
}

static void test_svd(void **s)
{
    (void)s;
    check_svd(3, 3, 0);
    check_svd(3, 2, 0);
    check_svd(2, 4, 0);
    check_svd(3, 2, 1);
    check_svd(2, 3, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_shaping),
        cmocka_unit_test(test_nn),
        cmocka_unit_test(test_zoo),
        cmocka_unit_test(test_cnn),
        cmocka_unit_test(test_while_loop),
        cmocka_unit_test(test_self_adjoint_eig),
        cmocka_unit_test(test_svd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
