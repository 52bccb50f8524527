/*
 * kernels_cpu_ops9a.c -- CPU kernels of the ops9a ops (issue 22): the
 * simple ops of TF-1 frozen models and TF-2 exports: ClipByValue, Asinh,
 * Acosh, Atanh, EnsureShape, CheckNumerics, Assert, TruncateMod.
 */
#include "kernels_cpu.h"
#include "dg_util.h"
#include "infer.h"

#include <math.h>
#include <string.h>

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
    dg_dtype dt = k->in[0].dtype;
    clip_fn fn = (unsigned)dt < DG_DTYPE_COUNT ? fns[dt] : NULL;
    if (!fn)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "dtype %s", k->node->name, dg_dtype_name(dt));
    int64_t step[2];
    char msg[512];
    if (dgc_clip_bounds_check(&k->in[0].shape, &k->in[1].shape,
                              &k->in[2].shape, step, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    if (n > 0)
        fn(dgr_cpu_ptr(&k->in[0]), dgr_cpu_ptr(&k->in[1]), step[0],
           dgr_cpu_ptr(&k->in[2]), step[1], dgr_cpu_ptr(&k->out[0]), n);
    return DG_OK;
}
DGR_KERNEL(ClipByValue, dgr_k_clip_by_value);

/* ---- the inverse hyperbolic functions ------------------------------------ */

ZUNF(asinh, asinhf, asinh)
DGR_KERNEL(Asinh, dgr_k_asinh);
ZUNF(acosh, acoshf, acosh)
DGR_KERNEL(Acosh, dgr_k_acosh);
ZUNF(atanh, atanhf, atanh)
DGR_KERNEL(Atanh, dgr_k_atanh);

/* ---- EnsureShape, CheckNumerics, Assert: checks that pass x on ----------- */

/* x itself, when its shape fits attr shape (-1: any dim; no attr: any
 * shape) */
dg_status dgr_k_ensure_shape(dgr_kctx *k)
{
    char msg[512];
    if (dgc_ensure_shape_check(k->node, &k->in[0].shape, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': EnsureShape: %s",
                      k->node->name, msg);
    return dgr_k_identity(k);
}
DGR_KERNEL(EnsureShape, dgr_k_ensure_shape);

/* x itself, when no element is NaN or Inf (TF's message: NaN first) */
dg_status dgr_k_check_numerics(dgr_kctx *k)
{
    int64_t n = dg_shape_numel(&k->in[0].shape);
    int nan = 0, inf = 0;
    if (k->in[0].dtype == DG_F32) {
        const float *x = dgr_cpu_ptr(&k->in[0]);
        for (int64_t i = 0; i < n; i++)
            nan |= isnan(x[i]), inf |= isinf(x[i]);
    } else {
        const double *x = dgr_cpu_ptr(&k->in[0]);
        for (int64_t i = 0; i < n; i++)
            nan |= isnan(x[i]), inf |= isinf(x[i]);
    }
    if (nan || inf)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s : Tensor had %s "
                      "values", k->node->name,
                      dgc_attr_str(k->node, DGC_AT_message),
                      nan ? "NaN" : "Inf");
    return dgr_k_identity(k);
}
DGR_KERNEL(CheckNumerics, dgr_k_check_numerics);

/* The first `max` elements of v as "[a b ...]" (TF's summarize) into sb */
static void put_values(dg_sbuf *sb, const dgr_value *v, int64_t max)
{
    int64_t n = dg_shape_numel(&v->shape);
    dg_sbuf_add(sb, "[");
    const void *p = dgr_cpu_ptr(v);
    for (int64_t i = 0; i < n && i < max; i++) {
        if (i)
            dg_sbuf_add(sb, " ");
        switch (v->dtype) {
        case DG_F32: dg_sbuf_addf(sb, "%g", ((const float *)p)[i]); break;
        case DG_F64: dg_sbuf_addf(sb, "%g", ((const double *)p)[i]); break;
        case DG_I32:
            dg_sbuf_addf(sb, "%d", (int)((const int32_t *)p)[i]);
            break;
        case DG_I64:
            dg_sbuf_addf(sb, "%lld", (long long)((const int64_t *)p)[i]);
            break;
        default:
            dg_sbuf_add(sb, ((const uint8_t *)p)[i] ? "1" : "0");
            break;
        }
    }
    if (n > max)
        dg_sbuf_add(sb, "...");
    dg_sbuf_add(sb, "]");
}

/* nothing, when the condition holds; else the run fails showing the data */
dg_status dgr_k_assert(dgr_kctx *k)
{
    if (dg_shape_numel(&k->in[0].shape) != 1)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': Assert: condition "
                      "must be a scalar", k->node->name);
    if (*(const uint8_t *)dgr_cpu_ptr(&k->in[0]))
        return DG_OK;
    int64_t max = dgc_attr_i(k->node, DGC_AT_summarize);
    dg_sbuf sb;
    dg_sbuf_init(&sb);
    for (int i = 1; i < k->n_in; i++) {
        dg_sbuf_add(&sb, " ");
        put_values(&sb, &k->in[i], max);
    }
    dg_status st = dg_err(k->err, DG_E_RUNTIME, "node '%s': assertion "
                          "failed:%s", k->node->name,
                          sb.s ? sb.s : "");
    dg_sbuf_free(&sb);
    return st;
}
DGR_KERNEL(Assert, dgr_k_assert);

/* ---- TruncateMod: C's remainder ------------------------------------------ */

ZBIN(tmod_f32, float, fmodf(x, y))
ZBIN(tmod_f64, double, fmod(x, y))
/* (y == -1: 0, where INT_MIN % -1 would trap) */
ZBIN(tmod_i32, int32_t, y == -1 ? 0 : x % y)
ZBIN(tmod_i64, int64_t, y == -1 ? 0 : x % y)

dg_status dgr_k_truncate_mod(dgr_kctx *k)
{
    static const dgr_cpu_bin_fn fns[DG_DTYPE_COUNT] = {
        tmod_f32, tmod_f64, tmod_i32, tmod_i64, NULL};
    if (dg_shape_numel(&k->out_types[0].shape) > 0 &&
        dgr_cpu_int_has(&k->in[1], 0))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': integer division by "
                      "zero", k->node->name);
    return dgr_cpu_binary(k, fns);
}
DGR_KERNEL(TruncateMod, dgr_k_truncate_mod);
