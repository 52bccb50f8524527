/*
 * kernels_cpu_misc.c -- CPU kernels that move or create data rather than
 * compute on it: Const, RandomNormal/RandomUniform, Identity,
 * Reshape/ReshapeLike (no-copy aliases), Transpose, Cast, Print, NoOp,
 * ZerosLike and OnesLike.
 */
#include "cpu_backend.h"
#include "kernels_cpu.h"
#include "dg_util.h"
#include "dg_fpconv.h"
#include "dg_alloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

dg_status dgr_k_noop(dgr_kctx *k)
{
    (void)k;
    return DG_OK;
}
DGR_KERNEL(NoOp, dgr_k_noop);

dg_status dgr_k_identity(dgr_kctx *k)
{
    k->out[0] = k->in[0];
    dgr_buffer_retain(k->in[0].buf);
    return DG_OK;
}
DGR_KERNEL(Identity, dgr_k_identity);
DGR_KERNEL(StopGradient, dgr_k_identity);
DGR_KERNEL(PreventGradient, dgr_k_identity);

/* Reshape and ReshapeLike: alias input 0 with the inferred shape. */
dg_status dgr_k_reshape(dgr_kctx *k)
{
    int64_t n = dg_shape_numel(&k->in[0].shape);
    dg_shape s = k->out_types[0].shape;
    int64_t known = 1;
    int unk = -1;
    for (int d = 0; d < s.rank; d++) {
        if (s.dims[d] < 0)
            unk = d;
        else
            known *= s.dims[d];
    }
    if (unk >= 0 && known > 0)
        s.dims[unk] = n / known;
    if (dg_shape_numel(&s) != n)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': cannot reshape %lld elements to the requested "
                      "shape", k->node->name, (long long)n);
    k->out[0].dtype = k->in[0].dtype;
    k->out[0].shape = s;
    k->out[0].buf = k->in[0].buf;
    dgr_buffer_retain(k->in[0].buf);
    return DG_OK;
}
DGR_KERNEL(Reshape, dgr_k_reshape);
DGR_KERNEL(ReshapeLike, dgr_k_reshape);

dg_status dgr_k_const(dgr_kctx *k)
{
    const dgc_attr *a = dgc_attr_at(k->node, DGC_AT_value);
    if (!a || a->kind != DGC_A_TENSOR || !a->tensor)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': Const has no value",
                      k->node->name);
    const dg_tensor *t = a->tensor;
    dgr_value kept;
    if (dgr_cpu_const_get(k->dev, k->node, t->data, &kept)) {
        k->out[0] = kept; /* made by an earlier run (cpu_memory.c) */
        return DG_OK;
    }
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    int64_t m = dg_shape_numel(&t->shape);
    dg_dtype ot = k->out[0].dtype;
    char *o = dgr_cpu_ptr(&k->out[0]);
    if (n == m) {
        dgr_cpu_convert(t->data, t->dtype, o, ot, n);
    } else if (m == 1) {
        size_t es = dg_dtype_size(ot);
        if (n > 0)
            dgr_cpu_convert(t->data, t->dtype, o, ot, 1);
        for (int64_t i = 1; i < n; i++)
            memcpy(o + (size_t)i * es, o, es);
    } else {
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': Const value has %lld elements, shape needs %lld",
                      k->node->name, (long long)m, (long long)n);
    }
    dgr_cpu_const_put(k->dev, k->node, t->data, &k->out[0]);
    return DG_OK;
}
DGR_KERNEL(Const, dgr_k_const);

/* RandomNormal, RandomUniform, TruncatedNormal: drawn in C order from the
 * node's stream (rng.c), the same numbers as on an OpenCL device. */
dg_status dgr_k_random(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dgr_rng r;
    dgr_rng_seed(&r, k->env->rng_seed(k->env->ctx, k->node_id));
    dgr_rng_fill_node(&r, k->node, dgr_cpu_ptr(&k->out[0]), k->out[0].dtype,
                      dg_shape_numel(&k->out[0].shape));
    return DG_OK;
}
DGR_KERNEL(RandomNormal, dgr_k_random);
DGR_KERNEL(RandomUniform, dgr_k_random);
DGR_KERNEL(TruncatedNormal, dgr_k_random);

/* A scalar int32/int64 input's value. */
static int64_t in_scalar(const dgr_kctx *k, int i)
{
    const void *p = dgr_cpu_ptr(&k->in[i]);
    return k->in[i].dtype == DG_I32 ? ((const int32_t *)p)[0]
                                    : ((const int64_t *)p)[0];
}

/* RandomUniformInt (shape, minval, maxval). */
dg_status dgr_k_random_uniform_int(dgr_kctx *k)
{
    int64_t lo = in_scalar(k, 1), hi = in_scalar(k, 2);
    int64_t n = dg_shape_numel(&k->out_types[0].shape);
    if (n > 0 && lo >= hi)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': RandomUniformInt: Need minval < maxval: "
                      "%lld >= %lld", k->node->name, (long long)lo,
                      (long long)hi);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dgr_rng r;
    dgr_rng_seed(&r, k->env->rng_seed(k->env->ctx, k->node_id));
    dgr_rng_fill_int(&r, lo, hi, dgr_cpu_ptr(&k->out[0]), k->out[0].dtype, n);
    return DG_OK;
}
DGR_KERNEL(RandomUniformInt, dgr_k_random_uniform_int);

/* InvertPermutation: y[x[i]] = i, x a permutation of 0..n-1 (TF's
 * error otherwise). */
dg_status dgr_k_invert_permutation(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    int64_t n = dg_shape_numel(&x->shape);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    const void *xp = dgr_cpu_ptr(x);
    void *yp = dgr_cpu_ptr(&k->out[0]);
    int i32 = x->dtype == DG_I32;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = -1;
        if (i32)
            ((int32_t *)yp)[i] = (int32_t)v;
        else
            ((int64_t *)yp)[i] = v;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t d = i32 ? ((const int32_t *)xp)[i] : ((const int64_t *)xp)[i];
        int64_t seen = d < 0 || d >= n ? 0
                       : i32 ? ((int32_t *)yp)[d] : ((int64_t *)yp)[d];
        if (d < 0 || d >= n || seen != -1)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': InvertPermutation: %lld is %s", k->node->name,
                          (long long)d, d < 0 || d >= n ? "out of range"
                                                        : "duplicated");
        if (i32)
            ((int32_t *)yp)[d] = (int32_t)i;
        else
            ((int64_t *)yp)[d] = i;
    }
    return DG_OK;
}
DGR_KERNEL(InvertPermutation, dgr_k_invert_permutation);

/* Multinomial (logits [batch, classes], num_samples). */
dg_status dgr_k_multinomial(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t rows = k->in[0].shape.dims[0], classes = k->in[0].shape.dims[1];
    int64_t samples = k->out[0].shape.dims[1];
    double *cdf = dg_malloc(sizeof *cdf * (size_t)(classes > 0 ? classes : 1));
    if (!cdf)
        return dg_err_nomem(k->err, "Multinomial");
    dgr_rng r;
    dgr_rng_seed(&r, k->env->rng_seed(k->env->ctx, k->node_id));
    dgr_rng_multinomial(&r, dgr_cpu_ptr(&k->in[0]), k->in[0].dtype, rows,
                        classes, samples, dgr_cpu_ptr(&k->out[0]),
                        k->out[0].dtype, cdf);
    dg_free(cdf);
    return DG_OK;
}
DGR_KERNEL(Multinomial, dgr_k_multinomial);

typedef struct cast_job {
    const char *src;
    char *dst;
    dg_dtype st, dt;
} cast_job;

static void cast_range(void *arg, int64_t i0, int64_t i1)
{
    cast_job *j = arg;
    dgr_cpu_convert(j->src + (size_t)i0 * dg_dtype_size(j->st), j->st,
                    j->dst + (size_t)i0 * dg_dtype_size(j->dt), j->dt, i1 - i0);
}

dg_status dgr_k_cast(dgr_kctx *k)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->in[0].shape);
    if (n != dg_shape_numel(&k->out[0].shape))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': Cast shape mismatch",
                      k->node->name);
    cast_job j = {dgr_cpu_ptr(&k->in[0]), dgr_cpu_ptr(&k->out[0]),
                  k->in[0].dtype, k->out[0].dtype};
    if (n >= DGR_CPU_PAR_MIN)
        dgr_parallel_for(k->dev->intra, n, DGR_CPU_PAR_MIN / 2, cast_range, &j);
    else
        cast_range(&j, 0, n);
    return DG_OK;
}
DGR_KERNEL(Cast, dgr_k_cast);

static dg_status fill_like(dgr_kctx *k, int one)
{
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    char *o = dgr_cpu_ptr(&k->out[0]);
    size_t es = dg_dtype_size(k->out[0].dtype);
    if (n <= 0)
        return DG_OK;
    memset(o, 0, (size_t)n * es);
    if (one) {
        dgr_bool_t b1 = 1;
        dgr_cpu_convert(&b1, DG_BOOL, o, k->out[0].dtype, 1);
        for (int64_t i = 1; i < n; i++)
            memcpy(o + (size_t)i * es, o, es);
    }
    return DG_OK;
}

dg_status dgr_k_zeros_like(dgr_kctx *k) { return fill_like(k, 0); }
DGR_KERNEL(ZerosLike, dgr_k_zeros_like);
dg_status dgr_k_ones_like(dgr_kctx *k) { return fill_like(k, 1); }
DGR_KERNEL(OnesLike, dgr_k_ones_like);

/* ---- Transpose ----------------------------------------------------------- */

#define TRANSPOSE(T)                                                         \
    do {                                                                     \
        const T *x = src;                                                    \
        T *o = dst;                                                          \
        int64_t idx[DG_MAX_RANK] = {0}, off = 0, q = 0;                      \
        for (int64_t r = 0; r < rows; r++) {                                 \
            for (int64_t i = 0; i < inner; i++)                              \
                o[q++] = x[off + i * si];                                    \
            for (int d = rank - 2; d >= 0; d--) {                            \
                off += st[d];                                                \
                if (++idx[d] < od[d])                                        \
                    break;                                                   \
                off -= st[d] * od[d];                                        \
                idx[d] = 0;                                                  \
            }                                                                \
        }                                                                    \
    } while (0)

dg_status dgr_k_transpose(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    int rank = x->shape.rank;
    int perm[DG_MAX_RANK];
    const dgc_attr *a = dgc_attr_at(k->node, DGC_AT_perm);
    const int64_t *pv = NULL;
    int64_t in_perm[DG_MAX_RANK];
    int pn = 0;
    if (a && (a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE)) {
        pv = a->ints;
        pn = a->n;
    } else if (!a && k->n_in == 2) {
        /* TF's perm input computed at run time (issue 21): host memory */
        const dgr_value *pi = &k->in[1];
        int64_t cnt = dg_shape_numel(&pi->shape);
        pn = cnt > DG_MAX_RANK ? DG_MAX_RANK + 1 : (int)cnt;
        for (int i = 0; i < pn && i < DG_MAX_RANK; i++)
            in_perm[i] = pi->dtype == DG_I32
                             ? ((const int32_t *)dgr_cpu_ptr(pi))[i]
                             : ((const int64_t *)dgr_cpu_ptr(pi))[i];
        pv = in_perm;
    }
    uint32_t seen = 0;
    for (int d = 0; d < rank; d++) {
        int64_t p = rank - 1 - d;
        if (pv) {
            if (pn != rank)
                return dg_err(k->err, DG_E_RUNTIME,
                              "node '%s': perm has %d entries for rank %d",
                              k->node->name, pn, rank);
            p = pv[d] < 0 ? pv[d] + rank : pv[d];
        }
        if (p < 0 || p >= rank || (seen >> p) & 1)
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': invalid perm",
                          k->node->name);
        seen |= 1u << p;
        perm[d] = (int)p;
    }
    int ident = 1;
    for (int d = 0; d < rank; d++)
        ident &= perm[d] == d;
    if (ident) { /* Keras' Tensordot on the last axis: no copy, as TF */
        dgr_kctx_alias_output(k, 0, x);
        return DG_OK;
    }
    int64_t xst[DG_MAX_RANK], s = 1;
    for (int d = rank - 1; d >= 0; d--) {
        xst[d] = s;
        s *= x->shape.dims[d];
    }
    int64_t od[DG_MAX_RANK], st[DG_MAX_RANK];
    for (int d = 0; d < rank; d++) {
        od[d] = x->shape.dims[perm[d]];
        st[d] = xst[perm[d]];
    }
    dg_status e = dgr_kctx_alloc_output(k, 0);
    if (e)
        return e;
    int64_t n = dg_shape_numel(&x->shape);
    if (n != dg_shape_numel(&k->out[0].shape))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': Transpose shape mismatch",
                      k->node->name);
    if (n <= 0)
        return DG_OK;
    for (int d = 0; d < rank; d++)
        k->out[0].shape.dims[d] = od[d];
    int64_t inner = rank ? od[rank - 1] : 1, si = rank ? st[rank - 1] : 0;
    int64_t rows = n / inner;
    const void *src = dgr_cpu_ptr(x);
    void *dst = dgr_cpu_ptr(&k->out[0]);
    switch (dg_dtype_size(x->dtype)) {
    case 1: TRANSPOSE(uint8_t); break;
    case 4: TRANSPOSE(uint32_t); break;
    default: TRANSPOSE(uint64_t); break;
    }
    return DG_OK;
}
DGR_KERNEL(Transpose, dgr_k_transpose);

/* ---- Print --------------------------------------------------------------- */

/* One element as TF's PrintOneElement/StrCat writes it: floats with %.6g
 * (%.15g for float64), widened to %.9g (%.17g) when that does not read back
 * exactly (dg_fp_format_g_widen: the same text without printf/strtof
 * retries); bools as 1/0. */
static void print_elem(dg_sbuf *b, const dgr_value *v, int64_t i)
{
    const void *p = dgr_cpu_ptr(v);
    char buf[DG_FP_BUFSIZE];
    switch (v->dtype) {
    case DG_F32: {
        size_t n = dg_fp_format_g_widen(buf, ((const float *)p)[i], 1, 6, 9);
        dg_sbuf_addn(b, buf, n);
        break;
    }
    case DG_F64: {
        size_t n = dg_fp_format_g_widen(buf, ((const double *)p)[i], 0, 15, 17);
        dg_sbuf_addn(b, buf, n);
        break;
    }
    case DG_I32: dg_sbuf_addf(b, "%" PRId32, ((const int32_t *)p)[i]); break;
    case DG_I64: dg_sbuf_addf(b, "%" PRId64, ((const int64_t *)p)[i]); break;
    default:
        dg_sbuf_add(b, ((const dgr_bool_t *)p)[i] ? "1" : "0");
        break;
    }
}

/* TF's PrintOneDim: dims d.. from element *pos, at most `limit` elements;
 * rows are bracketed without separators ("[1 2][3...]"). */
static void print_dims(dg_sbuf *b, const dgr_value *v, int d, int64_t *pos,
                       int64_t limit)
{
    if (*pos >= limit)
        return;
    int64_t n = v->shape.dims[d];
    if (d == v->shape.rank - 1) {
        for (int64_t i = 0; i < n; i++) {
            if (*pos >= limit) {
                if (d != 0)
                    dg_sbuf_add(b, "...");
                return;
            }
            if (i)
                dg_sbuf_add(b, " ");
            print_elem(b, v, (*pos)++);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int opened = *pos < limit;
        if (opened)
            dg_sbuf_add(b, "[");
        print_dims(b, v, d + 1, pos, limit);
        if (*pos < limit || opened)
            dg_sbuf_add(b, "]");
    }
}

/* Tensor::SummarizeValue wrapped in brackets, as TF's Print writes each
 * tensor: "[1 2 3...]", "[[1 2][3...]...]", "[0.5]" for a scalar. */
static void print_value(dg_sbuf *b, const dgr_value *v, int64_t limit)
{
    int64_t n = dg_shape_numel(&v->shape);
    if (limit < 0 || limit > n)
        limit = n;
    int64_t pos = 0;
    dg_sbuf_add(b, "[");
    if (v->shape.rank == 0) {
        if (limit > 0)
            print_elem(b, v, 0);
    } else {
        print_dims(b, v, 0, &pos, limit);
    }
    if (n > limit)
        dg_sbuf_add(b, "...");
    dg_sbuf_add(b, "]");
}

dg_status dgr_k_print(dgr_kctx *k)
{
    /* first_n >= 0: only the first first_n calls print (TF) */
    int64_t first_n = dgc_attr_i(k->node, DGC_AT_first_n);
    if (first_n >= 0 && k->env->times &&
        k->env->times(k->env->ctx, k->node_id) >= (uint64_t)first_n)
        return dgr_k_identity(k);
    dg_sbuf b;
    dg_sbuf_init(&b);
    const dgc_attr *m = dgc_attr_at(k->node, DGC_AT_message);
    if (m && m->s)
        dg_sbuf_add(&b, m->s);
    int64_t limit = dgc_attr_i(k->node, DGC_AT_summarize);
    for (int i = k->n_in > 1 ? 1 : 0; i < k->n_in; i++) {
        print_value(&b, &k->in[i], limit);
    }
    dg_sbuf_add(&b, "\n");
    if (b.oom) {
        dg_sbuf_free(&b);
        return dg_err_nomem(k->err, "Print");
    }
    k->env->print(k->env->ctx, b.s);
    dg_sbuf_free(&b);
    return dgr_k_identity(k);
}
DGR_KERNEL(Print, dgr_k_print);
