/*
 * cnn_cases.h -- the convolution and pooling cases shared by the CPU kernel
 * test (against naive references) and the OpenCL kernel test (against the
 * CPU kernels), and the attrs that describe them: NHWC and NCHW, strides,
 * dilations, SAME / VALID / EXPLICIT padding, odd sizes, depthwise, and a
 * batch big enough for the OpenCL GEMM path to work in slices.
 */
#ifndef CNN_CASES_H
#define CNN_CASES_H

#include <string.h>

#include "ir.h"

typedef struct ccase {
    int64_t N, H, W, C, KH, KW, OC; /* OC: multiplier when depthwise */
    int64_t sh, sw, dh, dw;
    const char *pad;                /* SAME, VALID, EXPLICIT */
    int64_t pads[4];                /* top, bottom, left, right (EXPLICIT) */
    int nchw, depthwise;
} ccase;

static const ccase cases[] = {
    {2, 7, 5, 3, 3, 3, 4, 1, 1, 1, 1, "SAME", {0}, 0, 0},
    {1, 8, 9, 2, 3, 2, 5, 2, 3, 1, 1, "SAME", {0}, 0, 0},
    {2, 9, 7, 3, 3, 3, 2, 2, 2, 1, 1, "VALID", {0}, 0, 0},
    {1, 10, 8, 2, 3, 3, 3, 1, 1, 2, 2, "VALID", {0}, 0, 0},
    {2, 6, 7, 3, 2, 3, 4, 2, 1, 1, 2, "SAME", {0}, 1, 0},
    {1, 5, 6, 2, 3, 3, 3, 1, 2, 1, 1, "EXPLICIT", {1, 2, 0, 1}, 0, 0},
    {2, 5, 6, 2, 3, 3, 3, 2, 1, 1, 1, "EXPLICIT", {2, 0, 1, 1}, 1, 0},
    {24, 32, 32, 16, 5, 5, 4, 1, 1, 1, 1, "SAME", {0}, 0, 0}, /* slices */
    {2, 7, 6, 3, 3, 3, 2, 1, 1, 1, 1, "SAME", {0}, 0, 1},
    {1, 9, 8, 4, 3, 2, 1, 2, 2, 1, 1, "VALID", {0}, 0, 1},
    {2, 6, 7, 2, 3, 3, 3, 2, 1, 2, 1, "SAME", {0}, 1, 1},
    {1, 6, 5, 3, 2, 2, 2, 1, 1, 1, 1, "EXPLICIT", {1, 1, 0, 2}, 0, 1},
};

static const ccase pools[] = {
    {2, 7, 6, 3, 2, 2, 0, 2, 2, 1, 1, "VALID", {0}, 0, 0},
    {1, 7, 5, 2, 3, 3, 0, 2, 2, 1, 1, "SAME", {0}, 0, 0},
    {2, 6, 7, 3, 3, 2, 0, 1, 2, 1, 1, "SAME", {0}, 1, 0},
    {1, 8, 5, 2, 2, 3, 0, 3, 1, 1, 1, "VALID", {0}, 1, 0},
    {1, 5, 5, 2, 3, 3, 0, 2, 2, 1, 1, "EXPLICIT", {1, 1, 0, 1}, 0, 0},
    /* more channels than the CPU max-pool loop's 64-lane chunk, windows
     * overlapping (stride 1 in h) */
    {3, 6, 5, 70, 3, 3, 0, 1, 2, 1, 1, "SAME", {0}, 0, 0},
    /* 2x2 windows tiling the image, as LeNet's */
    {2, 8, 6, 70, 2, 2, 0, 2, 2, 1, 1, "SAME", {0}, 0, 0},
};

static inline void cc_set_str(dgc_node *n, const char *k, const char *v)
{
    assert_int_equal(dgc_node_set_str(n, k, v), 0);
}

/* attr `key` = (1, h, w, 1) in the case's layout */
static inline void cc_set_win(dgc_node *n, const ccase *c, const char *key,
                              int64_t h, int64_t w)
{
    int64_t v[4] = {1, 1, 1, 1};
    v[c->nchw ? 2 : 1] = h;
    v[c->nchw ? 3 : 2] = w;
    assert_int_equal(dgc_node_set_ints(n, key, v, 4), 0);
}

/* strides, dilations (or ksize for a pool), padding, data_format and
 * explicit_paddings of case c on node n */
static inline void cc_attrs(dgc_node *n, const ccase *c, int pool)
{
    cc_set_win(n, c, "strides", c->sh, c->sw);
    if (pool)
        cc_set_win(n, c, "ksize", c->KH, c->KW);
    else
        cc_set_win(n, c, "dilations", c->dh, c->dw);
    cc_set_str(n, "padding", c->pad);
    cc_set_str(n, "data_format", c->nchw ? "NCHW" : "NHWC");
    if (strcmp(c->pad, "EXPLICIT") == 0) {
        int64_t e[8] = {0};
        int hi = c->nchw ? 2 : 1;
        for (int i = 0; i < 4; i++)
            e[2 * hi + i] = c->pads[i];
        assert_int_equal(dgc_node_set_ints(n, "explicit_paddings", e, 8), 0);
    }
}

#endif
