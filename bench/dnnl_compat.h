/*
 * dnnl_compat.h -- the oneDNN C calls whose form changed between 2.x
 * (Debian 12's libdnnl 2.6) and 3.x (PyPI's onednn-cpu-gomp 3.2, installed
 * by scripts/get_onednn3.sh), as one set of static functions, so that
 * bench_dnnl_conv.c is written once for both (docs/decisions.md, "oneDNN
 * 3.x"; dgrun itself builds against 2.6 only).
 *
 * A memory descriptor is a struct held by value in 2.x and a handle,
 * created and destroyed, in 3.x: dgr_md holds either, DGR_MD(m) passes it
 * where a `const` descriptor is wanted (dgr_cmd).  Operation descriptors
 * are gone in 3.x: primitive descriptors are made from the shapes.
 */
#ifndef DGR_DNNL_COMPAT_H
#define DGR_DNNL_COMPAT_H

#include <oneapi/dnnl/dnnl.h>

#if DNNL_VERSION_MAJOR >= 3
#define DGR_DNNL3 1
typedef dnnl_memory_desc_t dgr_md; /* a handle; NULL: none */
typedef const_dnnl_memory_desc_t dgr_cmd;
#define DGR_MD(m) (m)
#else
#define DGR_DNNL3 0
typedef dnnl_memory_desc_t dgr_md; /* a struct */
typedef const dnnl_memory_desc_t *dgr_cmd;
#define DGR_MD(m) (&(m))
#endif

/* *m := a float32 descriptor of nd dims d with strides s.  0 ok. */
static inline int dgr_md_strides(dgr_md *m, int nd, const dnnl_dims_t d,
                                 const dnnl_dims_t s)
{
#if DGR_DNNL3
    return dnnl_memory_desc_create_with_strides(m, nd, d, dnnl_f32, s) ==
                   dnnl_success ? 0 : -1;
#else
    return dnnl_memory_desc_init_by_strides(m, nd, d, dnnl_f32, s) ==
                   dnnl_success ? 0 : -1;
#endif
}

/* *m := a float32 descriptor of nd dims d in format tag t.  0 ok. */
static inline int dgr_md_tag(dgr_md *m, int nd, const dnnl_dims_t d,
                             dnnl_format_tag_t t)
{
#if DGR_DNNL3
    return dnnl_memory_desc_create_with_tag(m, nd, d, dnnl_f32, t) ==
                   dnnl_success ? 0 : -1;
#else
    return dnnl_memory_desc_init_by_tag(m, nd, d, dnnl_f32, t) ==
                   dnnl_success ? 0 : -1;
#endif
}

/* *m := a copy of src (a queried descriptor, owned by its primitive
 * descriptor), *m owning it.  0 ok. */
static inline int dgr_md_copy(dgr_md *m, dgr_cmd src)
{
#if DGR_DNNL3
    return dnnl_memory_desc_clone(m, src) == dnnl_success ? 0 : -1;
#else
    *m = *src;
    return 0;
#endif
}

/* Frees what dgr_md_strides / _tag / _copy made (nothing in 2.x). */
static inline void dgr_md_free(dgr_md *m)
{
#if DGR_DNNL3
    if (*m)
        dnnl_memory_desc_destroy(*m);
    *m = NULL;
#else
    (void)m;
#endif
}

/* The convolution primitive descriptors: forward (prop, bias b or NULL),
 * then backward data or weights (hint: the forward training one).
 * x / y: src / dst (their diffs for the backward passes), w the filter
 * (its diff for backward weights).  0 ok. */
static inline int dgr_conv_fwd_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t e,
                                  dnnl_prop_kind_t prop, dgr_cmd x,
                                  dgr_cmd w, dgr_cmd b, dgr_cmd y,
                                  const dnnl_dims_t st, const dnnl_dims_t dil,
                                  const dnnl_dims_t pl, const dnnl_dims_t pr,
                                  const_dnnl_primitive_attr_t attr)
{
#if DGR_DNNL3
    return dnnl_convolution_forward_primitive_desc_create(
               pd, e, prop, dnnl_convolution_direct, x, w, b, y, st, dil, pl,
               pr, attr) == dnnl_success ? 0 : -1;
#else
    dnnl_convolution_desc_t d;
    return dnnl_dilated_convolution_forward_desc_init(
               &d, prop, dnnl_convolution_direct, x, w, b, y, st, dil, pl,
               pr) != dnnl_success ||
                   dnnl_primitive_desc_create(pd, &d, attr, e, NULL) !=
                       dnnl_success ? -1 : 0;
#endif
}

/* Backward data (weights 0) or backward weights (weights 1). */
static inline int dgr_conv_bwd_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t e,
                                  int weights, dgr_cmd x, dgr_cmd w,
                                  dgr_cmd y, const dnnl_dims_t st,
                                  const dnnl_dims_t dil, const dnnl_dims_t pl,
                                  const dnnl_dims_t pr,
                                  const_dnnl_primitive_attr_t attr,
                                  const_dnnl_primitive_desc_t hint)
{
    const dnnl_alg_kind_t a = dnnl_convolution_direct;
#if DGR_DNNL3
    dnnl_status_t s =
        weights ? dnnl_convolution_backward_weights_primitive_desc_create(
                      pd, e, a, x, w, NULL, y, st, dil, pl, pr, hint, attr)
                : dnnl_convolution_backward_data_primitive_desc_create(
                      pd, e, a, x, w, y, st, dil, pl, pr, hint, attr);
    return s == dnnl_success ? 0 : -1;
#else
    dnnl_convolution_desc_t d;
    dnnl_status_t s =
        weights ? dnnl_dilated_convolution_backward_weights_desc_init(
                      &d, a, x, w, NULL, y, st, dil, pl, pr)
                : dnnl_dilated_convolution_backward_data_desc_init(
                      &d, a, x, w, y, st, dil, pl, pr);
    return s != dnnl_success ||
                   dnnl_primitive_desc_create(pd, &d, attr, e, hint) !=
                       dnnl_success ? -1 : 0;
#endif
}

/* The pooling primitive descriptors (no dilation); hint: the forward
 * training one.  0 ok. */
static inline int dgr_pool_fwd_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t e,
                                  dnnl_prop_kind_t prop, dnnl_alg_kind_t alg,
                                  dgr_cmd x, dgr_cmd y, const dnnl_dims_t st,
                                  const dnnl_dims_t ker,
                                  const dnnl_dims_t pl, const dnnl_dims_t pr,
                                  const_dnnl_primitive_attr_t attr)
{
    const dnnl_dims_t nodil = {0, 0};
#if DGR_DNNL3
    return dnnl_pooling_forward_primitive_desc_create(
               pd, e, prop, alg, x, y, st, ker, nodil, pl, pr, attr) ==
                   dnnl_success ? 0 : -1;
#else
    dnnl_pooling_v2_desc_t d;
    return dnnl_pooling_v2_forward_desc_init(&d, prop, alg, x, y, st, ker,
                                             nodil, pl, pr) != dnnl_success ||
                   dnnl_primitive_desc_create(pd, &d, attr, e, NULL) !=
                       dnnl_success ? -1 : 0;
#endif
}

static inline int dgr_pool_bwd_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t e,
                                  dnnl_alg_kind_t alg, dgr_cmd x, dgr_cmd y,
                                  const dnnl_dims_t st, const dnnl_dims_t ker,
                                  const dnnl_dims_t pl, const dnnl_dims_t pr,
                                  const_dnnl_primitive_attr_t attr,
                                  const_dnnl_primitive_desc_t hint)
{
    const dnnl_dims_t nodil = {0, 0};
#if DGR_DNNL3
    return dnnl_pooling_backward_primitive_desc_create(
               pd, e, alg, x, y, st, ker, nodil, pl, pr, hint, attr) ==
                   dnnl_success ? 0 : -1;
#else
    dnnl_pooling_v2_desc_t d;
    return dnnl_pooling_v2_backward_desc_init(&d, alg, x, y, st, ker, nodil,
                                              pl, pr) != dnnl_success ||
                   dnnl_primitive_desc_create(pd, &d, attr, e, hint) !=
                       dnnl_success ? -1 : 0;
#endif
}

/* A sum post-op (dst += the primitive's result).  0 ok. */
static inline int dgr_post_sum(dnnl_post_ops_t po)
{
#if DGR_DNNL3
    return dnnl_post_ops_append_sum(po, 1.0f, 0, dnnl_data_type_undef) ==
                   dnnl_success ? 0 : -1;
#else
    return dnnl_post_ops_append_sum(po, 1.0f) == dnnl_success ? 0 : -1;
#endif
}

/* An eltwise post-op; relu6 (DGR_ELT_RELU6) is 2.x's bounded_relu(6) and
 * 3.x's clip(0, 6), the same function.  0 ok. */
#define DGR_ELT_RELU6 ((dnnl_alg_kind_t)-1)
static inline int dgr_post_eltwise(dnnl_post_ops_t po, dnnl_alg_kind_t alg,
                                   float alpha)
{
#if DGR_DNNL3
    if (alg == DGR_ELT_RELU6)
        return dnnl_post_ops_append_eltwise(po, dnnl_eltwise_clip, 0.0f,
                                            6.0f) == dnnl_success ? 0 : -1;
    return dnnl_post_ops_append_eltwise(po, alg, alpha, 0.0f) ==
                   dnnl_success ? 0 : -1;
#else
    if (alg == DGR_ELT_RELU6)
        return dnnl_post_ops_append_eltwise(po, 1.0f,
                                            dnnl_eltwise_bounded_relu, 6.0f,
                                            0.0f) == dnnl_success ? 0 : -1;
    return dnnl_post_ops_append_eltwise(po, 1.0f, alg, alpha, 0.0f) ==
                   dnnl_success ? 0 : -1;
#endif
}

#endif
