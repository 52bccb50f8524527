/*
 * kernels_cpu_ops9a.c -- CPU kernels of the ops9a ops (issue 22): the
 * simple ops of TF-1 frozen models and TF-2 exports: ClipByValue, Asinh,
 * Acosh, Atanh.
 */
#include "kernels_cpu.h"
#include "dg_util.h"

#include <math.h>

/* ---- ClipByValue --------------------------------------------------------- */

/* y[i] = max(min(t[i], hi[i * sh]), lo[i * sl]) in TF's order (lo wins
 * where hi < lo; a bound's step 0: a scalar); NaN in t stays NaN as in TF
 * (comparisons false) */
#define CLIP(NAME, T)                                                        \
    static void NAME(const void *tv, const void *lv, int64_t sl,            \
                     const void *hv, int64_t sh, void *yv, int64_t n)       \
    {                                                                        \
        const T *t = tv, *lo = lv, *hi = hv;                                 \
        T *y = yv;                                                           \
        for (int64_t i = 0; i < n; i++) {                                    \
            T v = t[i], l = lo[i * sl], h = hi[i * sh];                      \
            v = v > h ? h : v;                                               \
            y[i] = v < l ? l : v;                                            \
        }                                                                    \
    }
CLIP(clip_f32, float)
CLIP(clip_f64, double)
CLIP(clip_i32, int32_t)
CLIP(clip_i64, int64_t)
typedef void (*clip_fn)(const void *, const void *, int64_t, const void *,
                        int64_t, void *, int64_t);

dg_status dgr_k_clip_by_value(dgr_kctx *k)
{
    static const clip_fn fns[DG_DTYPE_COUNT] = {clip_f32, clip_f64, clip_i32,
                                                clip_i64, NULL};
    static const char *const what[3] = {"t", "clip_value_min",
                                        "clip_value_max"};
    dg_dtype dt = k->in[0].dtype;
    clip_fn fn = (unsigned)dt < DG_DTYPE_COUNT ? fns[dt] : NULL;
    if (!fn)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "dtype %s", k->node->name, dg_dtype_name(dt));
    int64_t step[3] = {1, 1, 1};
    for (int i = 1; i < 3; i++) {
        const dg_shape *b = &k->in[i].shape;
        if (b->rank == 0) {
            step[i] = 0;
        } else if (!dg_shape_same(b, &k->in[0].shape)) {
            char ts[128], bs[128];
            dg_shape_format(&k->in[0].shape, ts, sizeof ts);
            dg_shape_format(b, bs, sizeof bs);
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s must be a "
                          "scalar or of t's shape %s, got %s", k->node->name,
                          what[i], ts, bs);
        }
    }
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    if (n > 0)
        fn(dgr_cpu_ptr(&k->in[0]), dgr_cpu_ptr(&k->in[1]), step[1],
           dgr_cpu_ptr(&k->in[2]), step[2], dgr_cpu_ptr(&k->out[0]), n);
    return DG_OK;
}
DGR_KERNEL(ClipByValue, dgr_k_clip_by_value);

/* ---- the inverse hyperbolic functions ------------------------------------ */

#define UN9(NAME, T, F)                                                      \
    static void NAME(const void *av, void *ov, int64_t n)                    \
    {                                                                        \
        const T *a = av;                                                     \
        T *o = ov;                                                           \
        for (int64_t i = 0; i < n; i++)                                      \
            o[i] = F(a[i]);                                                  \
    }
#define UNOP9(OP, F32, F64)                                                  \
    UN9(OP##_f32, float, F32)                                                \
    UN9(OP##_f64, double, F64)                                               \
    static const dgr_cpu_un_fn OP##_fns[DG_DTYPE_COUNT] = {                  \
        OP##_f32, OP##_f64, NULL, NULL, NULL};                               \
    dg_status dgr_k_##OP(dgr_kctx *k) { return dgr_cpu_unary(k, OP##_fns); }
UNOP9(asinh, asinhf, asinh)
DGR_KERNEL(Asinh, dgr_k_asinh);
UNOP9(acosh, acoshf, acosh)
DGR_KERNEL(Acosh, dgr_k_acosh);
UNOP9(atanh, atanhf, atanh)
DGR_KERNEL(Atanh, dgr_k_atanh);
