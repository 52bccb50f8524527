/*
 * kernels_cpu_nms.c -- NonMaxSuppressionV3/V4/V5 as TF's CPU kernel
 * (tensorflow/core/kernels/image/non_max_suppression_op.cc,
 * DoNonMaxSuppressionOp): candidates above score_threshold in a max-heap
 * by score, taken best first; each is compared with the boxes already
 * selected, newest first, and dropped when its IoU with one exceeds
 * iou_threshold (hard NMS), or its score decayed by exp(-IoU^2 / (2
 * sigma)) per selected box (soft NMS, V5) and put back while above the
 * threshold.  Equal scores go lower box index first, TF's comparator;
 * the heap below repeats libstdc++'s push_heap / pop_heap (TF's
 * std::priority_queue) step for step, so that a candidate put back after
 * soft suppression meets the same others.  The arithmetic is float, as
 * TF's kernel for float boxes.
 */
#include "kernels_cpu.h"
#include "dg_alloc.h"

#include <math.h>

typedef struct cand {
    int32_t box;
    float score;
    int32_t begin; /* selected boxes below this index already applied */
} cand;

/* TF's comparator: a ranks below b */
static int below(cand a, cand b)
{
    return a.score < b.score || (a.score == b.score && a.box > b.box);
}

/* libstdc++'s std::__push_heap with comp = below */
static void heap_up(cand *h, int64_t hole, int64_t top, cand v)
{
    int64_t parent = (hole - 1) / 2;
    while (hole > top && below(h[parent], v)) {
        h[hole] = h[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    h[hole] = v;
}

static void heap_push(cand *h, int64_t *n, cand v)
{
    h[*n] = v;
    (*n)++;
    heap_up(h, *n - 1, 0, h[*n - 1]);
}

/* libstdc++'s std::pop_heap (its __adjust_heap), then pop_back: the
 * top is returned */
static cand heap_pop(cand *h, int64_t *n)
{
    cand top = h[0];
    int64_t len = *n - 1;
    if (len > 0) {
        cand v = h[len];
        h[len] = h[0];
        int64_t hole = 0, second = 0;
        while (second < (len - 1) / 2) {
            second = 2 * (second + 1);
            if (below(h[second], h[second - 1]))
                second--;
            h[hole] = h[second];
            hole = second;
        }
        if ((len & 1) == 0 && second == (len - 2) / 2) {
            second = 2 * (second + 1);
            h[hole] = h[second - 1];
            hole = second - 1;
        }
        heap_up(h, hole, 0, v);
    }
    *n = len;
    return top;
}

/* TF's IOU(boxes, i, j): corners in either order; 0 for an empty box */
static float iou(const float *b, int32_t i, int32_t j)
{
    const float *p = b + 4 * (int64_t)i, *q = b + 4 * (int64_t)j;
    float ymin_i = fminf(p[0], p[2]), xmin_i = fminf(p[1], p[3]);
    float ymax_i = fmaxf(p[0], p[2]), xmax_i = fmaxf(p[1], p[3]);
    float ymin_j = fminf(q[0], q[2]), xmin_j = fminf(q[1], q[3]);
    float ymax_j = fmaxf(q[0], q[2]), xmax_j = fmaxf(q[1], q[3]);
    float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    float area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if (area_i <= 0 || area_j <= 0)
        return 0.0f;
    float iy0 = fmaxf(ymin_i, ymin_j), ix0 = fmaxf(xmin_i, xmin_j);
    float iy1 = fminf(ymax_i, ymax_j), ix1 = fminf(xmax_i, xmax_j);
    float inter = fmaxf(iy1 - iy0, 0.0f) * fmaxf(ix1 - ix0, 0.0f);
    return inter / (area_i + area_j - inter);
}

static float host_f(const dgr_value *v)
{
    return v->dtype == DG_F64 ? (float)*(const double *)dgr_cpu_ptr(v)
                              : *(const float *)dgr_cpu_ptr(v);
}

dg_status dgr_k_nms(dgr_kctx *k)
{
    const char *nm = k->node->name;
    const float *boxes = dgr_cpu_ptr(&k->in[0]);
    const float *scores = dgr_cpu_ptr(&k->in[1]);
    int64_t nb = k->in[0].shape.dims[0];
    int32_t max_out = *(const int32_t *)dgr_cpu_ptr(&k->in[2]);
    float iou_thr = host_f(&k->in[3]), score_thr = host_f(&k->in[4]);
    float sigma = k->n_in > 5 ? host_f(&k->in[5]) : 0.0f;
    int pad = k->n_out > 1 && dgc_attr_b(k->node, DGC_AT_pad_to_max_output_size);
    if (k->in[1].shape.dims[0] != nb)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': scores has %lld "
                      "elements for %lld boxes", nm,
                      (long long)k->in[1].shape.dims[0], (long long)nb);
    if (max_out < 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': max_output_size "
                      "must be non-negative, got %d", nm, (int)max_out);
    if (!(iou_thr >= 0 && iou_thr <= 1))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': iou_threshold must "
                      "be in [0, 1], got %g", nm, (double)iou_thr);
    if (!(sigma >= 0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': soft_nms_sigma must "
                      "be non-negative, got %g", nm, (double)sigma);
    cand *heap = dg_malloc(sizeof *heap * (size_t)(nb + 1));
    int32_t *sel = dg_malloc(sizeof *sel * (size_t)(max_out + 1));
    float *sel_s = dg_malloc(sizeof *sel_s * (size_t)(max_out + 1));
    if (!heap || !sel || !sel_s) {
        dg_free(heap);
        dg_free(sel);
        dg_free(sel_s);
        return dg_err_nomem(k->err, nm);
    }
    int64_t nh = 0;
    for (int64_t i = 0; i < nb; i++)
        if (scores[i] > score_thr)
            heap_push(heap, &nh, (cand){(int32_t)i, scores[i], 0});
    int soft = sigma > 0.0f;
    float scale = soft ? -0.5f / sigma : 0.0f;
    int32_t ns = 0;
    while (ns < max_out && nh > 0) {
        cand c = heap_pop(heap, &nh);
        float orig = c.score;
        int hard = 0;
        for (int32_t j = ns - 1; j >= c.begin; j--) {
            float sim = iou(boxes, c.box, sel[j]);
            float w = expf(scale * sim * sim);
            c.score *= soft || sim <= iou_thr ? w : 0.0f;
            if (!soft && sim > iou_thr) {
                hard = 1;
                break;
            }
            if (c.score <= score_thr)
                break;
        }
        c.begin = ns;
        if (hard)
            continue;
        if (c.score == orig) {
            sel[ns] = c.box;
            sel_s[ns++] = c.score;
        } else if (c.score > score_thr) {
            heap_push(heap, &nh, c);
        }
    }
    dg_free(heap);
    int64_t len = pad ? max_out : ns;
    dg_shape s = {.rank = 1, .dims = {len}};
    dg_status st = dgr_cpu_alloc_as(k, 0, DG_I32, &s);
    if (!st && k->n_out == 3)
        st = dgr_cpu_alloc_as(k, 1, k->in[0].dtype, &s);
    if (!st && k->n_out > 1) {
        dg_shape sc = {.rank = 0};
        st = dgr_cpu_alloc_as(k, k->n_out - 1, DG_I32, &sc);
    }
    if (!st) {
        int32_t *oi = dgr_cpu_ptr(&k->out[0]);
        float *os = k->n_out == 3 ? dgr_cpu_ptr(&k->out[1]) : NULL;
        for (int64_t i = 0; i < len; i++) {
            oi[i] = i < ns ? sel[i] : 0;
            if (os)
                os[i] = i < ns ? sel_s[i] : 0.0f;
        }
        if (k->n_out > 1)
            *(int32_t *)dgr_cpu_ptr(&k->out[k->n_out - 1]) = ns;
    }
    dg_free(sel);
    dg_free(sel_s);
    return st;
}
DGR_KERNEL(NonMaxSuppressionV3, dgr_k_nms);
DGR_KERNEL(NonMaxSuppressionV4, dgr_k_nms);
DGR_KERNEL(NonMaxSuppressionV5, dgr_k_nms);
