/*
 * bench_dnnl_conv.c -- times oneDNN's float32 convolutions the way dgrun's
 * runtime/cpu/kernels_cpu_dnnl.c calls them, so that one oneDNN version can
 * be set against another (issue 23: is oneDNN 3.x worth a dependency?).
 *
 * Builds against oneDNN 2.x (Debian 12's 2.6) or 3.x (the C API changed:
 * memory descriptors are handles, primitive descriptors are made directly);
 * DNNL_VERSION_MAJOR picks.  As dgrun does: one OpenMP thread per call,
 * NHWC activations given by strides, TF's HWIO (depthwise: HW C 1) filter
 * reordered into the primitive's "any" layout, the forward pass with a bias
 * and a ReLU post-op, the mini-batch cut into dgrun's fixed blocks
 * (run_blocks: >= 2^22 multiply-adds a block, at most 4 blocks) -- one call
 * times one block.
 *
 * Output, one line per (shape, pass):
 *   shape pass mb wall_us cpu_us wall_min_us reorder_us macs impl
 * medians over REPS timed calls after a warm-up (wall_min_us: the
 * fastest call's wall, the figure least touched by a load, to set against
 * ONEDNN_VERBOSE's times of another program); cpu_us is the calling
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID), steadier than the wall on a
 * shared machine; reorder_us the filter reorder dgrun runs per call for a
 * Variable filter (0: the primitive takes TF's layout).
 * bench/bench_dnnl_conv.py builds it twice, runs the builds interleaved and
 * prints the table of docs/PERFORMANCE.md.
 *
 * usage: bench_dnnl_conv [REPS [SUBSTRING]]
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_median.h"
#include "dnnl_compat.h" /* the 2.x / 3.x C API differences */

#define CK(x)                                                              \
    do {                                                                   \
        dnnl_status_t s_ = (x);                                            \
        if (s_ != dnnl_success) {                                          \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, \
                    #x, (int)s_);                                          \
            goto fail;                                                     \
        }                                                                  \
    } while (0)

enum { FWD, BWD_D, BWD_W };
static const char *const pass_name[] = {"fwd", "bwd_d", "bwd_w"};

/* a shape's batch that is one call of 64 images (TF's way), not blocks */
#define ONE_CALL_64 (-64)

typedef struct shape {
    const char *name;
    int batch, H, W, C, OC, K, s, dw;
    int passes; /* 1: forward only (inference), 3: all three */
} shape;

/* LeNet training at batch 64 (blocks of 16), ResNet-50 at a quarter of its
 * width at batch 32 (its stages at 16x16 and 8x8), MobileNetV2 alpha 0.35
 * at 96x96 (depthwise and 1x1 expansions), batch 32 and batch 1. */
static const shape shapes[] = {
    {"lenet_conv2", 64, 14, 14, 32, 64, 5, 1, 0, 3},
    {"lenet_conv1", 64, 28, 28, 1, 32, 5, 1, 0, 3},
    {"lenet_conv2_mb64", ONE_CALL_64, 14, 14, 32, 64, 5, 1, 0, 3},
    {"r50q_16_1x1_64_16", 32, 16, 16, 64, 16, 1, 1, 0, 3},
    {"r50q_16_3x3_16_16", 32, 16, 16, 16, 16, 3, 1, 0, 3},
    {"r50q_16_1x1_16_64", 32, 16, 16, 16, 64, 1, 1, 0, 3},
    {"r50q_8_1x1_128_32", 32, 8, 8, 128, 32, 1, 1, 0, 3},
    {"r50q_8_3x3_32_32", 32, 8, 8, 32, 32, 3, 1, 0, 3},
    {"r50q_8_1x1_32_128", 32, 8, 8, 32, 128, 1, 1, 0, 3},
    {"mnv2_dw_s1_24_48", 32, 24, 24, 48, 48, 3, 1, 1, 3},
    {"mnv2_dw_s2_48_48", 32, 48, 48, 48, 48, 3, 2, 1, 3},
    {"mnv2_dw_s1_12_96", 32, 12, 12, 96, 96, 3, 1, 1, 3},
    {"mnv2_1x1_48_8_48", 32, 48, 48, 8, 48, 1, 1, 0, 3},
    {"mnv2_1x1_12_16_96", 32, 12, 12, 16, 96, 1, 1, 0, 3},
    {"r50q_16_3x3_16_16_b1", 1, 16, 16, 16, 16, 3, 1, 0, 1},
    {"r50q_8_1x1_32_128_b1", 1, 8, 8, 32, 128, 1, 1, 0, 1},
    {"mnv2_dw_s1_24_48_b1", 1, 24, 24, 48, 48, 3, 1, 1, 1},
    {"mnv2_dw_s2_48_48_b1", 1, 48, 48, 48, 48, 3, 2, 1, 1},
    {"mnv2_1x1_48_8_48_b1", 1, 48, 48, 8, 48, 1, 1, 0, 1},
};

static dnnl_engine_t engine;
static dnnl_stream_t stream;

static double now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* activation {N, C, H, W} in NHWC by strides */
static void act_md(dgr_md *m, int64_t N, int64_t C, int64_t H, int64_t W)
{
    dnnl_dims_t d = {N, C, H, W}, s = {H * W * C, 1, W * C, C};
    dgr_md_strides(m, 4, d, s);
}

static float *buf(size_t bytes, unsigned seed)
{
    size_t n = bytes / sizeof(float) + 1;
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (size_t i = 0; i < n; i++) { /* deterministic, in [-0.5, 0.5) */
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

static int mem(dnnl_memory_t *m, dgr_cmd md, void *p)
{
    return dnnl_memory_create(m, md, engine, p) == dnnl_success ? 0 : -1;
}

/* dgrun's block of a batch (kernels_cpu_dnnl.c, run_blocks) */
static int64_t block_of(const shape *S, int64_t OH, int64_t OW)
{
    if (S->batch == ONE_CALL_64)
        return 64;
    int64_t per = OH * OW * S->K * S->K * S->OC * (S->dw ? 1 : S->C);
    int64_t b = (((int64_t)1 << 22) + per - 1) / per;
    if (b < (S->batch + 3) / 4)
        b = (S->batch + 3) / 4;
    return b > S->batch ? S->batch : b;
}

/* Time one pass of S: prints its line.  0 ok. */
static int bench(const shape *S, int pass, int reps)
{
    int rc = -1;
    int64_t OH = (S->H + S->s - 1) / S->s, OW = (S->W + S->s - 1) / S->s;
    int64_t ph = (OH - 1) * S->s + S->K - S->H,
            pw = (OW - 1) * S->s + S->K - S->W;
    if (ph < 0) ph = 0;
    if (pw < 0) pw = 0;
    int64_t N = block_of(S, OH, OW), C = S->C, OC = S->OC, K = S->K;
    dnnl_dims_t st = {S->s, S->s}, dil = {0, 0}, pl = {ph / 2, pw / 2},
                pr = {ph - ph / 2, pw - pw / 2};
    dgr_md x, y, wany, wtf, bmd;
#if DGR_DNNL3
    x = y = wany = wtf = bmd = NULL;
#endif
    act_md(&x, N, C, S->H, S->W);
    act_md(&y, N, OC, OH, OW);
    if (S->dw) { /* TF's [KH, KW, C, 1] as groups {G, 1, 1, KH, KW} */
        dnnl_dims_t d = {C, 1, 1, K, K}, s = {1, 1, 1, K * C, C};
        dgr_md_strides(&wtf, 5, d, s);
        dgr_md_tag(&wany, 5, d, dnnl_format_tag_any);
    } else { /* TF's [KH, KW, C, OC] */
        dnnl_dims_t d = {OC, C, K, K}, s = {1, OC, K * C * OC, C * OC};
        dgr_md_strides(&wtf, 4, d, s);
        dgr_md_tag(&wany, 4, d, dnnl_format_tag_any);
    }
    dnnl_dims_t bd = {OC};
    dgr_md_tag(&bmd, 1, bd, dnnl_a);

    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t hint = NULL, pd = NULL, rpd = NULL;
    dnnl_primitive_t p = NULL, ro = NULL;
    dnnl_memory_t mx = NULL, my = NULL, mw = NULL, mwtf = NULL, mb = NULL,
                  ms = NULL;
    float *bx = NULL, *by = NULL, *bw = NULL, *bwtf = NULL, *bb = NULL,
          *bs = NULL;
    double *tw = NULL, *tc = NULL;
    CK(dnnl_primitive_attr_create(&attr));
    CK(dnnl_primitive_attr_set_scratchpad_mode(attr,
                                               dnnl_scratchpad_mode_user));
    if (pass == FWD) { /* dgrun's _FusedConv2D: bias + relu */
        CK(dnnl_post_ops_create(&po));
        if (dgr_post_eltwise(po, dnnl_eltwise_relu, 0.0f))
            goto fail;
        CK(dnnl_primitive_attr_set_post_ops(attr, po));
    }
    dgr_cmd xm = DGR_MD(x), ym = DGR_MD(y), wa = DGR_MD(wany);
    if (pass == FWD) {
        if (dgr_conv_fwd_pd(&pd, engine, dnnl_forward_inference, xm, wa,
                            DGR_MD(bmd), ym, st, dil, pl, pr, attr))
            goto fail;
    } else {
        if (dgr_conv_fwd_pd(&hint, engine, dnnl_forward_training, xm, wa,
                            NULL, ym, st, dil, pl, pr, NULL) ||
            dgr_conv_bwd_pd(&pd, engine, pass == BWD_W, xm, wa, ym, st, dil,
                            pl, pr, attr, hint))
            goto fail;
    }
    const char *impl = "?";
    CK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
    dgr_cmd wp = dnnl_primitive_desc_query_md(
        pd, pass == BWD_W ? dnnl_query_diff_weights_md : dnnl_query_weights_md,
        0);
    dgr_cmd sp = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t sbytes = sp ? dnnl_memory_desc_get_size(sp) : 0;
    CK(dnnl_primitive_create(&p, pd));
    bx = buf(dnnl_memory_desc_get_size(xm), 1);
    by = buf(dnnl_memory_desc_get_size(ym), 2);
    bwtf = buf(dnnl_memory_desc_get_size(DGR_MD(wtf)), 3);
    bw = buf(dnnl_memory_desc_get_size(wp), 4);
    bb = buf(sizeof(float) * (size_t)OC, 5);
    bs = buf(sbytes + 64, 6);
    if (mem(&mx, xm, bx) || mem(&my, ym, by) || mem(&mw, wp, bw) ||
        mem(&mwtf, DGR_MD(wtf), bwtf) || mem(&mb, DGR_MD(bmd), bb) ||
        (sbytes && mem(&ms, sp, bs)))
        goto fail;
    if (!dnnl_memory_desc_equal(wp, DGR_MD(wtf))) {
        if (pass == BWD_W)
            CK(dnnl_reorder_primitive_desc_create(&rpd, wp, engine, DGR_MD(wtf),
                                                  engine, NULL));
        else
            CK(dnnl_reorder_primitive_desc_create(&rpd, DGR_MD(wtf), engine, wp,
                                                  engine, NULL));
        CK(dnnl_primitive_create(&ro, rpd));
    }
    dnnl_exec_arg_t args[6];
    int n = 0;
    if (pass == FWD) {
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, mx};
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mw};
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, mb};
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DST, my};
    } else if (pass == BWD_D) {
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, my};
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, mw};
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_SRC, mx};
    } else {
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, mx};
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_DST, my};
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DIFF_WEIGHTS, mw};
    }
    if (ms)
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, ms};
    dnnl_exec_arg_t ra[2] = {{DNNL_ARG_FROM, pass == BWD_W ? mw : mwtf},
                             {DNNL_ARG_TO, pass == BWD_W ? mwtf : mw}};
    tw = malloc(sizeof *tw * (size_t)reps);
    tc = malloc(sizeof *tc * (size_t)reps);
    if (!tw || !tc)
        goto fail;
    int warm = reps / 4 < 3 ? 3 : reps / 4;
    for (int i = 0; i < warm; i++)
        CK(dnnl_primitive_execute(p, stream, n, args));
    for (int i = 0; i < reps; i++) {
        double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
        CK(dnnl_primitive_execute(p, stream, n, args));
        CK(dnnl_stream_wait(stream));
        tc[i] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        tw[i] = now(CLOCK_MONOTONIC) - w0;
    }
    double wall = bench_median(tw, reps), cpu = bench_median(tc, reps);
    double rot = 0;
    double wmin = tw[0]; /* sorted by bench_median() */
    if (ro) {
        for (int i = 0; i < warm; i++)
            CK(dnnl_primitive_execute(ro, stream, 2, ra));
        for (int i = 0; i < reps; i++) {
            double c0 = now(CLOCK_THREAD_CPUTIME_ID);
            CK(dnnl_primitive_execute(ro, stream, 2, ra));
            CK(dnnl_stream_wait(stream));
            tc[i] = now(CLOCK_THREAD_CPUTIME_ID) - c0;
        }
        rot = bench_median(tc, reps);
    }
    long long macs = (long long)N * OH * OW * OC * K * K * (S->dw ? 1 : C);
    printf("%s %s %lld %.2f %.2f %.2f %.2f %lld %s\n", S->name,
           pass_name[pass], (long long)N, wall, cpu, wmin, rot, macs, impl);
    fflush(stdout);
    rc = 0;
fail:
    free(tw);
    free(tc);
    if (ro) dnnl_primitive_destroy(ro);
    if (p) dnnl_primitive_destroy(p);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (hint) dnnl_primitive_desc_destroy(hint);
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    dnnl_memory_t ms_[] = {mx, my, mw, mwtf, mb, ms};
    for (size_t i = 0; i < sizeof ms_ / sizeof *ms_; i++)
        if (ms_[i])
            dnnl_memory_destroy(ms_[i]);
    free(bx); free(by); free(bw); free(bwtf); free(bb); free(bs);
    dgr_md_free(&x); dgr_md_free(&y); dgr_md_free(&wany); dgr_md_free(&wtf);
    dgr_md_free(&bmd);
    return rc;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    const char *only = argc > 2 ? argv[2] : NULL;
    if (reps < 1)
        reps = 1;
    omp_set_num_threads(1); /* as dgrun: one OpenMP thread per call */
    const dnnl_version_t *v = dnnl_version();
    printf("# oneDNN %d.%d.%d %s cpu_runtime %u\n", v->major, v->minor,
           v->patch, v->hash, v->cpu_runtime);
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) !=
            dnnl_success) {
        fprintf(stderr, "no oneDNN CPU engine\n");
        return 2;
    }
    int bad = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        if (only && !strstr(shapes[i].name, only))
            continue;
        for (int pass = 0; pass < shapes[i].passes; pass++)
            bad |= bench(&shapes[i], pass, reps) != 0;
    }
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(engine);
    return bad;
}
