/*
 * kernels_cpu.c -- helpers shared by the CPU kernel family files (dtype
 * conversion, axis attributes, broadcast collapsing).  The kernel registry
 * is cpu_backend.c.
 */
#include "kernels_cpu.h"

#include <string.h>

/* ---- dtype conversion ---------------------------------------------------- */

#define CONV_LOOP(ST, DT)                                                    \
    do {                                                                     \
        const ST *restrict s_ = src;                                         \
        DT *restrict d_ = dst;                                               \
        for (int64_t i = 0; i < n; i++)                                      \
            d_[i] = (DT)s_[i];                                               \
    } while (0)

#define CONV_TO_BOOL(ST)                                                     \
    do {                                                                     \
        const ST *restrict s_ = src;                                         \
        dgr_bool_t *restrict d_ = dst;                                       \
        for (int64_t i = 0; i < n; i++)                                      \
            d_[i] = s_[i] != 0;                                              \
    } while (0)

#define CONV_FROM(ST)                                                        \
    switch (dt) {                                                            \
    case DG_F32: CONV_LOOP(ST, float); break;                                \
    case DG_F64: CONV_LOOP(ST, double); break;                               \
    case DG_I32: CONV_LOOP(ST, int32_t); break;                              \
    case DG_I64: CONV_LOOP(ST, int64_t); break;                              \
    case DG_BOOL: CONV_TO_BOOL(ST); break;                                   \
    default: break;                                                          \
    }

void dgr_cpu_convert(const void *src, dg_dtype st, void *dst, dg_dtype dt,
                     int64_t n)
{
    if (n <= 0)
        return;
    if (st == dt) {
        if (src != dst)
            memcpy(dst, src, (size_t)n * dg_dtype_size(st));
        return;
    }
    switch (st) {
    case DG_F32: CONV_FROM(float); break;
    case DG_F64: CONV_FROM(double); break;
    case DG_I32: CONV_FROM(int32_t); break;
    case DG_I64: CONV_FROM(int64_t); break;
    case DG_BOOL: CONV_FROM(dgr_bool_t); break;
    default: break;
    }
}

double dgr_cpu_get(const void *p, dg_dtype t, int64_t i)
{
    switch (t) {
    case DG_F32: return ((const float *)p)[i];
    case DG_F64: return ((const double *)p)[i];
    case DG_I32: return ((const int32_t *)p)[i];
    case DG_I64: return (double)((const int64_t *)p)[i];
    case DG_BOOL: return ((const dgr_bool_t *)p)[i] != 0;
    default: return 0;
    }
}

/* ---- axes ---------------------------------------------------------------- */

int dgr_cpu_axes(dgr_kctx *k, dgc_attr_id key, int rank, uint32_t *mask)
{
    const dgc_attr *a = dgc_attr_at(k->node, key);
    *mask = 0;
    int op = k->node->op;
    if (!a && k->n_in == 2 &&
        (op == DGC_OPID_Sum || op == DGC_OPID_Mean || op == DGC_OPID_Max ||
         op == DGC_OPID_Prod)) {
        /* TF's reduction_indices as a run-time tensor (issue 21): host
         * memory on the CPU; empty means no axis */
        const dgr_value *ax = &k->in[1];
        int64_t n = dg_shape_numel(&ax->shape);
        const void *p = dgr_cpu_ptr(ax);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = ax->dtype == DG_I32 ? ((const int32_t *)p)[i]
                                            : ((const int64_t *)p)[i];
            int64_t d = v < 0 ? v + rank : v;
            if (d < 0 || d >= rank) {
                dg_err(k->err, DG_E_RUNTIME,
                       "node '%s': axis %lld is out of range for rank %d",
                       k->node->name, (long long)v, rank);
                return -1;
            }
            *mask |= 1u << d;
        }
        return 0;
    }
    if (!a) {
        *mask = rank > 0 ? (uint32_t)((1u << rank) - 1) : 0;
        return 0;
    }
    int64_t one = a->i;
    const int64_t *v = &one;
    int n = 1;
    if (a->kind == DGC_A_INTS || a->kind == DGC_A_SHAPE) {
        v = a->ints;
        n = a->n;
    }
    for (int i = 0; i < n; i++) {
        int64_t ax = v[i] < 0 ? v[i] + rank : v[i];
        if (ax < 0 || ax >= rank) {
            dg_err(k->err, DG_E_RUNTIME,
                   "node '%s': axis %lld is out of range for rank %d",
                   k->node->name, (long long)v[i], rank);
            return -1;
        }
        *mask |= 1u << ax;
    }
    return 0;
}

/* ---- broadcasting -------------------------------------------------------- */

int dgr_bcast_init(dgr_bcast *bc, const dg_shape *a, const dg_shape *b,
                   const dg_shape *out)
{
    int r = out->rank;
    int64_t dims[DG_MAX_RANK];
    int fa[DG_MAX_RANK], fb[DG_MAX_RANK]; /* 1 = operand varies along dim */
    int m = 0;
    if (a->rank > r || b->rank > r)
        return -1;
    for (int d = 0; d < r; d++) {
        int64_t od = out->dims[d];
        int ia = d - (r - a->rank), ib = d - (r - b->rank);
        int64_t ad = ia >= 0 ? a->dims[ia] : 1;
        int64_t bd = ib >= 0 ? b->dims[ib] : 1;
        if ((ad != od && ad != 1) || (bd != od && bd != 1))
            return -1;
        if (od == 1)
            continue;
        int va = ad == od, vb = bd == od;
        if (m > 0 && fa[m - 1] == va && fb[m - 1] == vb) {
            dims[m - 1] *= od;
            continue;
        }
        dims[m] = od;
        fa[m] = va;
        fb[m] = vb;
        m++;
    }
    bc->rank = m;
    int64_t pa = 1, pb = 1;
    for (int d = m - 1; d >= 0; d--) {
        bc->dims[d] = dims[d];
        bc->sa[d] = fa[d] ? pa : 0;
        bc->sb[d] = fb[d] ? pb : 0;
        if (fa[d])
            pa *= dims[d];
        if (fb[d])
            pb *= dims[d];
    }
    return 0;
}
