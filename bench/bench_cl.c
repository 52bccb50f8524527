/*
 * bench_cl.c -- OpenCL backend speed through the public API (dgrun.h)
 * against raw OpenCL / clBLAST baselines measured in the same process on
 * the same OpenCL device (the first device `--opencl-devices all` finds,
 * i.e. GPU:0):
 *
 *   chain     N small float ops (x_{i+1} = Add(x_i, c), scalars, x_0 a
 *             Variable so that constant folding cannot remove them) on GPU:0:
 *             µs per op in steady state (difference between sessions with
 *             --repeat R and --repeat 1) vs raw async clEnqueueNDRangeKernel
 *             of an equivalent kernel followed by one clFinish;
 *   matmul    MatMul 1024x1024 float32 on GPU:0 (inputs are Variables,
 *             the product is fetched) vs raw CLBlastSgemm + a blocking read
 *             of the product;
 *   transfer  a 64 MiB float32 Variable on CPU:0 copied to GPU:0 (Identity
 *             there) and fetched back vs raw blocking clEnqueueWriteBuffer +
 *             clEnqueueReadBuffer of 64 MiB;
 *   fanout    B independent branches of L elementwise ops over one GPU:0
 *             Variable (small tensors: launch-bound; large: compute-bound)
 *             with DGRUN_CL_QUEUES = 1, 2 and 4: ms per run, and the
 *             speed-up of several compute queues over one.
 *
 * Every figure is the median of several runs after warm-up, dgrun and raw
 * runs interleaved.  Ratios are raw time / dgrun time (1.0 = as fast as raw;
 * the targets are >= 0.9 for MatMul and >= 0.8 for transfers) except the
 * chain, whose target is an absolute <= 5 µs per op.
 *
 *   bench_cl [--reps R] [--chain N] [--size M] [--mib B] [--only WHAT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CL/cl.h>
#include <clblast_c.h>

#include "bench_check.h"
#include "dgrun.h"

static int g_reps = 7;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_cl: %s: %s\n", what, msg ? msg : "");
    exit(1);
}

static void cl_check(cl_int e, const char *what)
{
    if (e != CL_SUCCESS) {
        fprintf(stderr, "bench_cl: %s failed: %d\n", what, (int)e);
        exit(1);
    }
}

/* ---- growing string ------------------------------------------------------ */

typedef struct sbuf { char *p; size_t n, cap; } sbuf;

static void sb_add(sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void sb_add(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0,
                          fmt, ap);
        va_end(ap);
        if (w < 0)
            die("format", "vsnprintf");
        if (b->p && b->n + (size_t)w < b->cap) {
            b->n += (size_t)w;
            return;
        }
        size_t nc = (b->cap + (size_t)w + 1) * 2;
        b->p = realloc(b->p, nc);
        if (!b->p)
            die("memory", "realloc");
        b->cap = nc;
    }
}

/* ---- dgrun side ---------------------------------------------------------- */

typedef struct dgr {
    dg_program *prog;
    dg_device_list *devs;
    dg_options o;
} dgr;

static void dgr_open(dgr *d, const char *json, const char *name)
{
    dg_error err;
    dg_options_init(&d->o);
    d->o.opencl_devices = "all";
    if (dg_devices_discover(&d->o, &d->devs, &err) != DG_OK)
        die("devices", err.msg);
    if (dg_devices_count(d->devs) < 2)
        die("devices", "no OpenCL device (GPU:0) found");
    dg_graph *g = dg_graph_load(name, json, strlen(json), &err);
    if (!g)
        die("load", err.msg);
    d->prog = dg_compile(g, &d->o, d->devs, &err);
    if (!d->prog)
        die("compile", err.msg);
}

static void dgr_close(dgr *d)
{
    dg_program_free(d->prog);
    dg_devices_free(d->devs);
}

static dg_session *sess_new(dgr *d, int64_t repeat)
{
    dg_error err;
    dg_options o = d->o;
    o.repeat = repeat;
    dg_session *s = dg_session_new(d->prog, &o, &err);
    if (!s)
        die("session", err.msg);
    return s;
}

/* Run the fetches once (the session's --repeat times); seconds. Returns the
 * first float of the first fetch in *first when non-NULL. */
static double sess_run(dg_session *s, float *first)
{
    dg_error err;
    dg_fetch_result *r = NULL;
    int n = 0;
    uint64_t t0 = now_ns();
    if (dg_session_run(s, &r, &n, &err) != DG_OK)
        die("run", err.msg);
    uint64_t t1 = now_ns();
    if (first && n > 0 && r[0].value)
        *first = *(const float *)r[0].value->data;
    dg_fetch_results_free(r, n);
    return (double)(t1 - t0) * 1e-9;
}

/* ---- raw OpenCL side ----------------------------------------------------- */

typedef struct raw {
    cl_platform_id plat;
    cl_device_id dev;
    cl_context ctx;
    cl_command_queue q;
} raw;

/* The device GPU:0 is under --opencl-devices all: the first device of any
 * type in platform order. */
static void raw_open(raw *r)
{
    cl_uint np = 0;
    cl_check(clGetPlatformIDs(0, NULL, &np), "clGetPlatformIDs");
    cl_platform_id plats[16];
    if (np > 16)
        np = 16;
    cl_check(clGetPlatformIDs(np, plats, NULL), "clGetPlatformIDs");
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 1, &r->dev, &nd) ==
                CL_SUCCESS && nd > 0) {
            r->plat = plats[p];
            break;
        }
    }
    if (!r->plat)
        die("raw", "no OpenCL device");
    cl_int e;
    r->ctx = clCreateContext(NULL, 1, &r->dev, NULL, NULL, &e);
    cl_check(e, "clCreateContext");
    r->q = clCreateCommandQueue(r->ctx, r->dev, 0, &e);
    cl_check(e, "clCreateCommandQueue");
    char name[256] = "";
    clGetDeviceInfo(r->dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    name[sizeof name - 1] = 0;
    printf("device: %s\n", name);
}

static void raw_close(raw *r)
{
    clReleaseCommandQueue(r->q);
    clReleaseContext(r->ctx);
}

/* ---- chain --------------------------------------------------------------- */

static const char *chain_src =
    "__kernel void add(__global const float *a, __global float *y, float c,"
    " long n) { long i = get_global_id(0); if (i < n) y[i] = a[i] + c; }\n";

/* Raw: n enqueues ping-ponging between two 1-float buffers, one clFinish. */
static double raw_chain(raw *r, cl_kernel k, cl_mem *b, int n)
{
    float zero = 0.0f;
    cl_check(clEnqueueWriteBuffer(r->q, b[0], CL_TRUE, 0, sizeof zero, &zero,
                                  0, NULL, NULL), "write");
    float c = 1.0f;
    cl_long one = 1;
    size_t g = 1;
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        clSetKernelArg(k, 0, sizeof(cl_mem), &b[i & 1]);
        clSetKernelArg(k, 1, sizeof(cl_mem), &b[(i + 1) & 1]);
        clSetKernelArg(k, 2, sizeof c, &c);
        clSetKernelArg(k, 3, sizeof one, &one);
        cl_check(clEnqueueNDRangeKernel(r->q, k, 1, NULL, &g, NULL, 0, NULL,
                                        NULL), "enqueue");
    }
    clFinish(r->q);
    uint64_t t1 = now_ns();
    float out = 0;
    clEnqueueReadBuffer(r->q, b[n & 1], CL_TRUE, 0, sizeof out, &out, 0, NULL,
                        NULL);
    if (out != (float)n)
        fprintf(stderr, "bench_cl: raw chain gave %g, expected %d\n", out, n);
    return (double)(t1 - t0) * 1e-9;
}

static void bench_chain(raw *r, int n, int repeat)
{
    sbuf j = {0};
    sb_add(&j, "{\"version\": 1, \"nodes\": [\n"
               "{\"name\": \"x0\", \"op\": \"Variable\", \"attrs\": "
               "{\"dtype\": \"float32\", \"shape\": [], \"init\": 0.0},"
               " \"device\": \"/gpu:0\"},\n"
               "{\"name\": \"c\", \"op\": \"Const\", \"attrs\": {\"value\": 1.0},"
               " \"device\": \"/gpu:0\"}");
    for (int i = 1; i <= n; i++)
        sb_add(&j, ",\n{\"name\": \"x%d\", \"op\": \"Add\", \"inputs\": "
                   "[\"x%d\", \"c\"], \"device\": \"/gpu:0\"}", i, i - 1);
    sb_add(&j, "], \"fetch\": [\"x%d\"]}\n", n);
    dgr d;
    dgr_open(&d, j.p, "chain.json");
    free(j.p);
    bench_expect_ops("bench_cl chain", d.prog, "Add", n);
    dg_session *s1 = sess_new(&d, 1), *sr = sess_new(&d, repeat + 1);

    cl_int e;
    cl_program p = clCreateProgramWithSource(r->ctx, 1, &chain_src, NULL, &e);
    cl_check(e, "clCreateProgramWithSource");
    cl_check(clBuildProgram(p, 1, &r->dev, "", NULL, NULL), "clBuildProgram");
    cl_kernel k = clCreateKernel(p, "add", &e);
    cl_check(e, "clCreateKernel");
    cl_mem b[2];
    for (int i = 0; i < 2; i++) {
        b[i] = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, 256, NULL, &e);
        cl_check(e, "clCreateBuffer");
    }
    /* warm up */
    float got = 0;
    sess_run(s1, &got);
    if (got != (float)n) {
        fprintf(stderr, "bench_cl: FAILED: dgrun chain gave %g, expected %d\n",
                got, n);
        exit(1);
    }
    sess_run(sr, NULL);
    raw_chain(r, k, b, n);

    double *t1 = calloc((size_t)g_reps, sizeof *t1);
    double *tr = calloc((size_t)g_reps, sizeof *tr);
    double *tb = calloc((size_t)g_reps, sizeof *tb);
    for (int i = 0; i < g_reps; i++) {
        t1[i] = sess_run(s1, NULL);
        tr[i] = sess_run(sr, NULL);
        tb[i] = raw_chain(r, k, b, n);
    }
    double m1 = median(t1, g_reps), mr = median(tr, g_reps);
    double mb = median(tb, g_reps);
    double steady = (mr - m1) / repeat / n * 1e6;
    double single = m1 / n * 1e6;
    double rawop = mb / n * 1e6;
    printf("chain    %d Add ops on GPU:0, median of %d:\n"
           "  dgrun steady state   %7.2f us/op  (target <= 5)  %s\n"
           "  dgrun one run        %7.2f us/op  (with runner setup and fetch)\n"
           "  raw async enqueue    %7.2f us/op  -> dgrun / raw = %.2f\n",
           n, g_reps, steady, steady <= 5.0 ? "MET" : "NOT MET", single,
           rawop, steady / rawop);
    free(t1);
    free(tr);
    free(tb);
    clReleaseMemObject(b[0]);
    clReleaseMemObject(b[1]);
    clReleaseKernel(k);
    clReleaseProgram(p);
    dg_session_free(s1);
    dg_session_free(sr);
    dgr_close(&d);
}

/* ---- matmul -------------------------------------------------------------- */

static double raw_gemm(raw *r, cl_mem a, cl_mem b, cl_mem c, size_t m,
                       float *host)
{
    uint64_t t0 = now_ns();
    CLBlastStatusCode s = CLBlastSgemm(CLBlastLayoutRowMajor,
                                       CLBlastTransposeNo, CLBlastTransposeNo,
                                       m, m, m, 1.0f, a, 0, m, b, 0, m, 0.0f,
                                       c, 0, m, &r->q, NULL);
    if (s != CLBlastSuccess) {
        fprintf(stderr, "bench_cl: CLBlastSgemm: %d\n", (int)s);
        exit(1);
    }
    cl_check(clEnqueueReadBuffer(r->q, c, CL_TRUE, 0, m * m * sizeof(float),
                                 host, 0, NULL, NULL), "read");
    return (double)(now_ns() - t0) * 1e-9;
}

static void bench_matmul(raw *r, int m)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"version\": 1, \"nodes\": [\n"
             "{\"name\": \"a\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
             "\"float32\", \"shape\": [%d, %d], \"init\": 0.5}, \"device\": "
             "\"/gpu:0\"},\n"
             "{\"name\": \"b\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
             "\"float32\", \"shape\": [%d, %d], \"init\": 2.0}, \"device\": "
             "\"/gpu:0\"},\n"
             "{\"name\": \"c\", \"op\": \"MatMul\", \"inputs\": [\"a\", \"b\"],"
             " \"device\": \"/gpu:0\"}], \"fetch\": [\"c\"]}\n",
             m, m, m, m);
    dgr d;
    dgr_open(&d, json, "matmul.json");
    bench_expect_ops("bench_cl matmul", d.prog, "MatMul", 1);
    dg_session *s = sess_new(&d, 1);
    size_t n = (size_t)m * (size_t)m;
    float *host = malloc(n * sizeof *host);
    for (size_t i = 0; i < n; i++)
        host[i] = 0.5f;
    cl_int e;
    cl_mem a = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              n * sizeof(float), host, &e);
    cl_check(e, "clCreateBuffer");
    for (size_t i = 0; i < n; i++)
        host[i] = 2.0f;
    cl_mem b = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              n * sizeof(float), host, &e);
    cl_check(e, "clCreateBuffer");
    cl_mem c = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, n * sizeof(float),
                              NULL, &e);
    cl_check(e, "clCreateBuffer");
    /* warm up: clBLAST compiles its kernels on first use (slow when its
     * cache is cold) */
    uint64_t w0 = now_ns();
    float got = 0;
    sess_run(s, &got);
    raw_gemm(r, a, b, c, (size_t)m, host);
    printf("matmul   warm-up (kernel builds) %.1f s\n",
           (double)(now_ns() - w0) * 1e-9);
    if (got != (float)m || host[0] != (float)m)
        fprintf(stderr, "bench_cl: matmul gave %g / %g, expected %d\n", got,
                host[0], m);
    sess_run(s, NULL);
    raw_gemm(r, a, b, c, (size_t)m, host);
    double *td = calloc((size_t)g_reps, sizeof *td);
    double *tb = calloc((size_t)g_reps, sizeof *tb);
    for (int i = 0; i < g_reps; i++) {
        td[i] = sess_run(s, NULL);
        tb[i] = raw_gemm(r, a, b, c, (size_t)m, host);
    }
    double md = median(td, g_reps), mb = median(tb, g_reps);
    double fl = 2.0 * m * (double)m * m;
    printf("matmul   %dx%d float32 on GPU:0 (+ fetch of the product), median "
           "of %d:\n"
           "  dgrun %8.2f ms (%6.1f GFLOP/s)   raw clBLAST %8.2f ms (%6.1f "
           "GFLOP/s)\n"
           "  ratio raw/dgrun = %.3f  (target >= 0.9)  %s\n",
           m, m, g_reps, md * 1e3, fl / md * 1e-9, mb * 1e3, fl / mb * 1e-9,
           mb / md, mb / md >= 0.9 ? "MET" : "NOT MET");
    free(td);
    free(tb);
    free(host);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    dg_session_free(s);
    dgr_close(&d);
}

/* ---- transfers ----------------------------------------------------------- */

static void bench_transfer(raw *r, int mib)
{
    size_t bytes = (size_t)mib << 20, n = bytes / sizeof(float);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"version\": 1, \"nodes\": [\n"
             "{\"name\": \"x\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
             "\"float32\", \"shape\": [%zu], \"init\": 3.0}, \"device\": "
             "\"/cpu:0\"},\n"
             "{\"name\": \"y\", \"op\": \"Identity\", \"inputs\": [\"x\"], "
             "\"device\": \"/gpu:0\"}], \"fetch\": [\"y\"]}\n", n);
    dgr d;
    dgr_open(&d, json, "transfer.json");
    bench_expect_ops("bench_cl transfer", d.prog, "Identity", 1);
    dg_session *s = sess_new(&d, 1);
    /* the same round trip without a fetch: back on CPU:0 into a runtime
     * buffer, run for a NoOp's control input */
    snprintf(json, sizeof json,
             "{\"version\": 1, \"nodes\": [\n"
             "{\"name\": \"x\", \"op\": \"Variable\", \"attrs\": {\"dtype\": "
             "\"float32\", \"shape\": [%zu], \"init\": 3.0}, \"device\": "
             "\"/cpu:0\"},\n"
             "{\"name\": \"y\", \"op\": \"Identity\", \"inputs\": [\"x\"], "
             "\"device\": \"/gpu:0\"},\n"
             "{\"name\": \"z\", \"op\": \"Identity\", \"inputs\": [\"y\"], "
             "\"device\": \"/cpu:0\"},\n"
             "{\"name\": \"done\", \"op\": \"NoOp\", \"inputs\": [\"^z\"], "
             "\"device\": \"/cpu:0\"}], \"fetch\": [\"done\"]}\n", n);
    dgr d2;
    dgr_open(&d2, json, "transfer2.json");
    bench_expect_ops("bench_cl transfer", d2.prog, "Identity", 1);
    dg_session *s2 = sess_new(&d2, 1);
    float *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst)
        die("memory", "transfer buffers");
    /* real data in every page of the raw source, like the Variable: gcc
     * folds malloc + memset(0) into calloc, whose untouched pages all map
     * the kernel's zero page -- a cache-resident source that made the raw
     * write ~1.4 ms faster than any real 64 MiB copy */
    for (size_t i = 0; i < n; i++)
        src[i] = 3.0f;
    memset(dst, 0, bytes);
    cl_int e;
    cl_mem buf = clCreateBuffer(r->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    cl_check(e, "clCreateBuffer");
    float got = 0;
    sess_run(s, &got);
    sess_run(s, NULL);
    if (got != 3.0f)
        fprintf(stderr, "bench_cl: transfer gave %g, expected 3\n", got);
    double *td = calloc((size_t)g_reps, sizeof *td);
    double *tw = calloc((size_t)g_reps, sizeof *tw);
    double *tr = calloc((size_t)g_reps, sizeof *tr);
    double *tf = calloc((size_t)g_reps, sizeof *tf);
    double *tn = calloc((size_t)g_reps, sizeof *tn);
    sess_run(s2, NULL);
    for (int i = -1; i < g_reps; i++) {
        uint64_t t0 = now_ns();
        cl_check(clEnqueueWriteBuffer(r->q, buf, CL_TRUE, 0, bytes, src, 0,
                                      NULL, NULL), "write");
        uint64_t t1 = now_ns();
        cl_check(clEnqueueReadBuffer(r->q, buf, CL_TRUE, 0, bytes, dst, 0,
                                     NULL, NULL), "read");
        uint64_t t2 = now_ns();
        double t = sess_run(s, NULL);
        double t_nofetch = sess_run(s2, NULL);
        /* raw round trip reading into a fresh zeroed buffer each time, as
         * a fetch API that returns new tensors must */
        uint64_t t3 = now_ns();
        cl_check(clEnqueueWriteBuffer(r->q, buf, CL_TRUE, 0, bytes, src, 0,
                                      NULL, NULL), "write");
        float *fresh = calloc(1, bytes);
        if (!fresh)
            die("memory", "fresh buffer");
        cl_check(clEnqueueReadBuffer(r->q, buf, CL_TRUE, 0, bytes, fresh, 0,
                                     NULL, NULL), "read");
        free(fresh);
        uint64_t t4 = now_ns();
        if (i < 0)
            continue; /* warm-up round */
        tf[i] = (double)(t4 - t3) * 1e-9;
        tn[i] = t_nofetch;
        tw[i] = (double)(t1 - t0) * 1e-9;
        tr[i] = (double)(t2 - t1) * 1e-9;
        td[i] = t;
    }
    double md = median(td, g_reps), mw = median(tw, g_reps);
    double mr = median(tr, g_reps), mf = median(tf, g_reps);
    double mn = median(tn, g_reps);
    double gb = (double)bytes * 1e-9;
    printf("transfer %d MiB CPU:0 -> GPU:0 -> host (fetch), median of %d:\n"
           "  dgrun round trip %7.2f ms (%5.2f GB/s each way)\n"
           "  raw write %7.2f ms (%5.2f GB/s)  raw read %7.2f ms (%5.2f GB/s)"
           "  raw round trip %7.2f ms\n"
           "  ratio raw/dgrun = %.3f  (target >= 0.8)  %s\n"
           "  raw round trip into a fresh calloc'd buffer %7.2f ms -> ratio "
           "%.3f\n"
           "  dgrun round trip without a fetch (GPU:0 -> CPU:0 buffer) %7.2f ms"
           " (%5.2f GB/s each way) -> ratio raw/dgrun = %.3f  %s\n",
           mib, g_reps, md * 1e3, 2 * gb / md, mw * 1e3, gb / mw, mr * 1e3,
           gb / mr, (mw + mr) * 1e3, (mw + mr) / md,
           (mw + mr) / md >= 0.8 ? "MET" : "NOT MET", mf * 1e3, mf / md,
           mn * 1e3, 2 * gb / mn, (mw + mr) / mn,
           (mw + mr) / mn >= 0.8 ? "MET" : "NOT MET");
    free(td);
    free(tw);
    free(tr);
    free(tf);
    free(tn);
    free(src);
    free(dst);
    clReleaseMemObject(buf);
    dg_session_free(s);
    dg_session_free(s2);
    dgr_close(&d);
    dgr_close(&d2);
}

/* ---- fan-out over several queues ---------------------------------------- */

static void bench_fanout_one(int branches, int len, int elems)
{
    sbuf j = {0};
    sb_add(&j, "{\"version\": 1, \"nodes\": [\n"
               "{\"name\": \"x\", \"op\": \"Variable\", \"attrs\": "
               "{\"dtype\": \"float32\", \"shape\": [%d], \"init\": 0.5},"
               " \"device\": \"/gpu:0\"}", elems);
    for (int b = 0; b < branches; b++)
        for (int i = 0; i < len; i++) {
            char in[32];
            if (i == 0)
                snprintf(in, sizeof in, "x");
            else
                snprintf(in, sizeof in, "b%d_%d", b, i - 1);
            sb_add(&j, ",\n{\"name\": \"b%d_%d\", \"op\": \"%s\", "
                       "\"inputs\": [\"%s\"], \"device\": \"/gpu:0\"}",
                   b, i, i % 2 ? "Cos" : "Sin", in);
        }
    sb_add(&j, "], \"fetch\": [");
    for (int b = 0; b < branches; b++)
        sb_add(&j, "%s\"b%d_%d\"", b ? ", " : "", b, len - 1);
    sb_add(&j, "]}\n");
    double ms[3] = {0, 0, 0};
    static const char *qs[] = {"1", "2", "4"};
    for (int k = 0; k < 3; k++) {
        setenv("DGRUN_CL_QUEUES", qs[k], 1);
        dgr d;
        dgr_open(&d, j.p, "fanout.json");
        bench_expect_ops("bench_cl fanout", d.prog, "Sin",
                         branches * ((len + 1) / 2));
        bench_expect_ops("bench_cl fanout", d.prog, "Cos",
                         branches * (len / 2));
        dg_session *s = sess_new(&d, 1);
        sess_run(s, NULL);
        double *t = calloc((size_t)g_reps, sizeof *t);
        for (int i = 0; i < g_reps; i++)
            t[i] = sess_run(s, NULL);
        ms[k] = median(t, g_reps) * 1e3;
        free(t);
        dg_session_free(s);
        dgr_close(&d);
    }
    unsetenv("DGRUN_CL_QUEUES");
    free(j.p);
    printf("  %2d branches x %3d ops, %8d floats: %8.2f / %8.2f / %8.2f ms"
           "  (x%.2f, x%.2f)\n", branches, len, elems, ms[0], ms[1], ms[2],
           ms[0] / ms[1], ms[0] / ms[2]);
}

static void bench_fanout(void)
{
    printf("fanout   independent branches on GPU:0, median of %d, "
           "1 / 2 / 4 queues (speed-up over 1 queue):\n", g_reps);
    bench_fanout_one(8, 50, 256);
    bench_fanout_one(8, 8, 1 << 20);
    bench_fanout_one(2, 8, 1 << 22);
}

int main(int argc, char **argv)
{
    int chain = 2000, size = 1024, mib = 64, repeat = 5;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            g_reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--chain") == 0 && i + 1 < argc)
            chain = atoi(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = atoi(argv[++i]);
        else if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc)
            mib = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else {
            fprintf(stderr, "usage: bench_cl [--reps R] [--chain N] [--size M]"
                            " [--mib B] [--only chain|matmul|transfer|"
                            "fanout]\n");
            return 2;
        }
    }
    if (g_reps < 1)
        g_reps = 1;
    raw r;
    memset(&r, 0, sizeof r);
    raw_open(&r);
    if (!only || strcmp(only, "chain") == 0)
        bench_chain(&r, chain, repeat);
    if (!only || strcmp(only, "matmul") == 0)
        bench_matmul(&r, size);
    if (!only || strcmp(only, "transfer") == 0)
        bench_transfer(&r, mib);
    if (!only || strcmp(only, "fanout") == 0)
        bench_fanout();
    raw_close(&r);
    return 0;
}
