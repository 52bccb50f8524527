/*
 * kernels_cpu_reduce.c -- CPU reductions and their gradient helpers: Sum,
 * Mean, Max over any axis set (dgr_cpu_reduce: dims are collapsed into
 * runs of kept/reduced axes, then either contiguous rows are reduced or
 * rows are accumulated column-block-wise), SumTo, BroadcastLike, MaxGrad,
 * ArgMax.  Every output element is summed by one thread in a fixed order,
 * and a reduction to one number sums fixed-size blocks whose partials are
 * added in block order, so results do not depend on the thread count or
 * on timing (issue 19).
 */
#include "kernels_cpu.h"
#include "dg_alloc.h"

#include <math.h>
#include <string.h>

#define BLK 256
#define MAX_PART 64
/* Row blocks of a column reduction of [R, L], L <= BLK (BiasAddGrad, a Sum
 * over the batch): at most COL_PARTS partial rows, combined in block order */
#define COL_PARTS 16
/* Elements per block of a full reduction (at least; at most MAX_PART
 * blocks).  A constant: the block cut must not depend on the threads. */
#define FULL_BLK (DGR_CPU_PAR_MIN / 2)

typedef struct red_job {
    const void *x;
    void *out;
    int kind;
    int64_t L;             /* case A: contiguous reduced run; B: kept run K */
    int nk, nr;
    int64_t kd[DG_MAX_RANK], ks[DG_MAX_RANK]; /* kept dims (outer) + strides */
    int64_t rd[DG_MAX_RANK], rs[DG_MAX_RANK]; /* reduced dims + strides */
    int64_t count;         /* reduced elements per output */
    int64_t nblk;          /* case B column blocks */
    int64_t nch;           /* full reduction chunks */
    double pd[MAX_PART];
    int64_t pi[MAX_PART];
    union { /* column reduction: one partial row of L per block */
        double d[COL_PARTS * BLK];
        int64_t i[COL_PARTS * BLK];
    } cp;
} red_job;

static int64_t kept_offset(const red_job *j, int64_t q)
{
    int64_t off = 0;
    for (int d = j->nk - 1; d >= 0; d--) {
        off += (q % j->kd[d]) * j->ks[d];
        q /= j->kd[d];
    }
    return off;
}

/* Advance an odometer over the reduced dims; returns the offset delta. */
static inline int64_t red_next(const red_job *j, int64_t *idx)
{
    int64_t delta = 0;
    for (int d = j->nr - 1; d >= 0; d--) {
        delta += j->rs[d];
        if (++idx[d] < j->rd[d])
            return delta;
        delta -= j->rs[d] * j->rd[d];
        idx[d] = 0;
    }
    return delta;
}

/* max(v, m) propagating NaN as TF's Max does (an integer's is never) */
#define RMAX(v, m) ((v) > (m) || (v) != (v) ? (v) : (m))

#define RED_IMPL(SUF, T, A, LOWEST)                                          \
    DGR_ROWSUM_DEF(rowsum_##SUF, T, A)                                       \
    static A rowmax_##SUF(const T *restrict p, int64_t n, A m)               \
    {                                                                        \
        for (int64_t i = 0; i < n; i++)                                      \
            m = RMAX((A)p[i], m);                                            \
        return m;                                                            \
    }                                                                        \
    static T fin_##SUF(const red_job *j, A acc)                              \
    {                                                                        \
        if (j->kind == DGR_RED_MEAN)                                         \
            return (T)(acc / (A)j->count);                                   \
        return (T)acc;                                                       \
    }                                                                        \
    DGR_HOT static void caseA_##SUF(void *arg, int64_t o0, int64_t o1)               \
    {                                                                        \
        red_job *j = arg;                                                    \
        const T *x = j->x;                                                   \
        T *out = j->out;                                                     \
        for (int64_t o = o0; o < o1; o++) {                                  \
            int64_t idx[DG_MAX_RANK] = {0};                                  \
            int64_t off = kept_offset(j, o);                                 \
            int64_t nrows = j->count / j->L;                                 \
            A acc = j->kind == DGR_RED_MAX ? (A)(LOWEST) : 0;                \
            for (int64_t r = 0; r < nrows; r++) {                            \
                if (j->kind == DGR_RED_MAX)                                  \
                    acc = rowmax_##SUF(x + off, j->L, acc);                  \
                else                                                         \
                    acc += rowsum_##SUF(x + off, j->L);                      \
                off += red_next(j, idx);                                     \
            }                                                                \
            out[o] = fin_##SUF(j, acc);                                      \
        }                                                                    \
    }                                                                        \
    DGR_HOT static void caseB_##SUF(void *arg, int64_t i0, int64_t i1)               \
    {                                                                        \
        red_job *j = arg;                                                    \
        const T *x = j->x;                                                   \
        T *out = j->out;                                                     \
        A acc[BLK];                                                          \
        for (int64_t it = i0; it < i1; it++) {                               \
            int64_t p = it / j->nblk, b = it % j->nblk;                      \
            int64_t c0 = b * BLK;                                            \
            int64_t len = j->L - c0 < BLK ? j->L - c0 : BLK;                 \
            int64_t idx[DG_MAX_RANK] = {0};                                  \
            int64_t off = kept_offset(j, p) + c0;                            \
            A init = j->kind == DGR_RED_MAX ? (A)(LOWEST) : 0;               \
            for (int64_t c = 0; c < len; c++)                                \
                acc[c] = init;                                               \
            for (int64_t r = 0; r < j->count; r++) {                         \
                const T *restrict row = x + off;                             \
                if (j->kind == DGR_RED_MAX) {                                \
                    for (int64_t c = 0; c < len; c++)                        \
                        acc[c] = RMAX((A)row[c], acc[c]);                    \
                } else {                                                     \
                    for (int64_t c = 0; c < len; c++)                        \
                        acc[c] += (A)row[c];                                 \
                }                                                            \
                off += red_next(j, idx);                                     \
            }                                                                \
            for (int64_t c = 0; c < len; c++)                                \
                out[p * j->L + c0 + c] = fin_##SUF(j, acc[c]);               \
        }                                                                    \
    }                                                                        \
    /* rows [r0, r1) of [R, L] (L <= BLK) into block blk's partial row:  \
     * read as rows of W = k * L (k rows at once, so short rows vectorise) \
     * and folded back to L, a fixed order for given R and L */            \
    DGR_HOT static void cols_##SUF(void *arg, int64_t blk, int64_t r0, int64_t r1)  \
    {                                                                        \
        red_job *j = arg;                                                    \
        const int64_t L = j->L, k = BLK / L, W = k * L;                      \
        const T *restrict x = (const T *)j->x + r0 * L;                      \
        const int mx = j->kind == DGR_RED_MAX;                               \
        A acc[BLK];                                                          \
        for (int64_t c = 0; c < W; c++)                                      \
            acc[c] = mx ? (A)(LOWEST) : 0;                                   \
        int64_t rows = r1 - r0;                                              \
        for (; rows >= k; rows -= k, x += W) {                               \
            if (mx)                                                          \
                for (int64_t c = 0; c < W; c++)                              \
                    acc[c] = RMAX((A)x[c], acc[c]);                          \
            else                                                             \
                for (int64_t c = 0; c < W; c++)                              \
                    acc[c] += (A)x[c];                                       \
        }                                                                    \
        for (; rows > 0; rows--, x += L)                                     \
            for (int64_t c = 0; c < L; c++)                                  \
                acc[c] = mx ? RMAX((A)x[c], acc[c]) : acc[c] + (A)x[c];      \
        A *part = (A *)(void *)&j->cp + blk * BLK;                           \
        for (int64_t c = 0; c < L; c++) {                                    \
            A v = acc[c];                                                    \
            for (int64_t g = 1; g < k; g++)                                  \
                v = mx ? RMAX(acc[g * L + c], v) : v + acc[g * L + c];       \
            part[c] = v;                                                     \
        }                                                                    \
    }                                                                        \
    static void cols_fin_##SUF(red_job *j)                                   \
    {                                                                        \
        const A *part = (const A *)(const void *)&j->cp;                     \
        const int mx = j->kind == DGR_RED_MAX;                               \
        T *out = j->out;                                                     \
        for (int64_t c = 0; c < j->L; c++) {                                 \
            A v = part[c];                                                   \
            for (int64_t b = 1; b < j->nch; b++)                             \
                v = mx ? RMAX(part[b * BLK + c], v) : v + part[b * BLK + c]; \
            out[c] = fin_##SUF(j, v);                                        \
        }                                                                    \
    }                                                                        \
    DGR_HOT static void full_##SUF(void *arg, int64_t c, int64_t b, int64_t e)      \
    {                                                                        \
        red_job *j = arg;                                                    \
        const T *x = j->x;                                                   \
        A acc = j->kind == DGR_RED_MAX                                       \
                    ? rowmax_##SUF(x + b, e - b, (A)(LOWEST))                \
                    : rowsum_##SUF(x + b, e - b);                            \
        if (sizeof(A) == sizeof(double) && (A)0.5 != 0)                      \
            j->pd[c] = (double)acc;                                          \
        else                                                                 \
            j->pi[c] = (int64_t)acc;                                         \
    }                                                                        \
    static void full_fin_##SUF(red_job *j)                                   \
    {                                                                        \
        A acc = j->kind == DGR_RED_MAX ? (A)(LOWEST) : 0;                    \
        int isf = (A)0.5 != 0;                                               \
        for (int64_t c = 0; c < j->nch; c++) {                               \
            A v = isf ? (A)j->pd[c] : (A)j->pi[c];                           \
            if (j->kind == DGR_RED_MAX)                                      \
                acc = RMAX(v, acc);                                          \
            else                                                             \
                acc += v;                                                    \
        }                                                                    \
        ((T *)j->out)[0] = fin_##SUF(j, acc);                                \
    }

RED_IMPL(f32, float, double, -INFINITY)
RED_IMPL(f64, double, double, -INFINITY)
RED_IMPL(i32, int32_t, int64_t, INT32_MIN)
RED_IMPL(i64, int64_t, int64_t, INT64_MIN)

static void fill_empty(void *out, dg_dtype t, int64_t n, int kind)
{
    for (int64_t i = 0; i < n; i++) {
        switch (t) {
        case DG_F32:
            ((float *)out)[i] = kind == DGR_RED_SUM ? 0.0f
                                : kind == DGR_RED_MEAN ? NAN : -INFINITY;
            break;
        case DG_F64:
            ((double *)out)[i] = kind == DGR_RED_SUM ? 0.0
                                 : kind == DGR_RED_MEAN ? NAN : -INFINITY;
            break;
        case DG_I32:
            ((int32_t *)out)[i] = kind == DGR_RED_MAX ? INT32_MIN : 0;
            break;
        case DG_I64:
            ((int64_t *)out)[i] = kind == DGR_RED_MAX ? INT64_MIN : 0;
            break;
        default:
            break;
        }
    }
}

void dgr_cpu_reduce(dgr_kctx *k, const void *x, const dg_shape *xs,
                    dg_dtype t, uint32_t mask, int kind, void *out)
{
    int64_t cd[DG_MAX_RANK];
    int red[DG_MAX_RANK];
    int m = 0;
    int64_t nout = 1, count = 1, total = 1;
    for (int d = 0; d < xs->rank; d++) {
        int64_t v = xs->dims[d];
        int r = (mask >> d) & 1;
        total *= v;
        if (r)
            count *= v;
        else
            nout *= v;
        if (v == 1)
            continue;
        if (m > 0 && red[m - 1] == r) {
            cd[m - 1] *= v;
            continue;
        }
        cd[m] = v;
        red[m] = r;
        m++;
    }
    if (nout == 0)
        return;
    if (total == 0) {
        fill_empty(out, t, nout, kind);
        return;
    }
    if (count == 1) { /* nothing to reduce */
        dgr_cpu_convert(x, t, out, t, nout);
        return;
    }
    red_job j;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.out = out;
    j.kind = kind;
    j.count = count;
    int64_t st = 1, strides[DG_MAX_RANK];
    for (int d = m - 1; d >= 0; d--) {
        strides[d] = st;
        st *= cd[d];
    }
    int last_red = red[m - 1];
    for (int d = 0; d < m; d++) {
        if (d == m - 1 && last_red)
            break;
        if (red[d]) {
            j.rd[j.nr] = cd[d];
            j.rs[j.nr++] = strides[d];
        } else if (d < m - 1) {
            j.kd[j.nk] = cd[d];
            j.ks[j.nk++] = strides[d];
        }
    }
    j.L = cd[m - 1];
    int par = total >= DGR_CPU_PAR_MIN;
    dgr_range_fn fa = NULL, fb = NULL;
    dgr_block_fn ff = NULL, fc = NULL;
    void (*ffin)(red_job *) = NULL, (*fcfin)(red_job *) = NULL;
#define RED_PICK(SUF)                                                        \
    (fa = caseA_##SUF, fb = caseB_##SUF, ff = full_##SUF,                    \
     ffin = full_fin_##SUF, fc = cols_##SUF, fcfin = cols_fin_##SUF)
    switch (t) {
    case DG_F32: RED_PICK(f32); break;
    case DG_F64: RED_PICK(f64); break;
    case DG_I32: RED_PICK(i32); break;
    case DG_I64: RED_PICK(i64); break;
    default: return;
    }
#undef RED_PICK
    if (last_red && nout == 1 && j.nr == 0) {
        /* fixed blocks (a function of L only), partials combined in block
         * order: the same bits whatever the threads (issue 19) */
        int64_t blk = (j.L + MAX_PART - 1) / MAX_PART;
        if (blk < FULL_BLK)
            blk = FULL_BLK;
        j.nch = dgr_blocks(j.L, blk);
        if (par)
            dgr_parallel_blocks(k->dev->intra, j.L, blk, ff, &j);
        else
            for (int64_t c = 0; c < j.nch; c++)
                ff(&j, c, c * blk, c + 1 < j.nch ? (c + 1) * blk : j.L);
        ffin(&j);
    } else if (last_red) {
        if (par) {
            int64_t grain = DGR_CPU_PAR_MIN / 2 / count;
            dgr_parallel_for(k->dev->intra, nout, grain > 0 ? grain : 1, fa, &j);
        } else {
            fa(&j, 0, nout);
        }
    } else if (j.nk == 0 && j.nr == 1 && j.L <= BLK) {
        /* [R, L] down to [L] with short rows (BiasAddGrad): row blocks
         * (a function of R and L only) in parallel, partials in order */
        int64_t R = count;
        int64_t rb = (R + COL_PARTS - 1) / COL_PARTS;
        int64_t least = (FULL_BLK + j.L - 1) / j.L;
        if (rb < least)
            rb = least;
        j.nch = dgr_blocks(R, rb);
        if (par && j.nch > 1)
            dgr_parallel_blocks(k->dev->intra, R, rb, fc, &j);
        else
            for (int64_t c = 0; c < j.nch; c++)
                fc(&j, c, c * rb, c + 1 < j.nch ? (c + 1) * rb : R);
        fcfin(&j);
    } else {
        j.nblk = (j.L + BLK - 1) / BLK;
        int64_t items = nout / j.L * j.nblk;
        if (par)
            dgr_parallel_for(k->dev->intra, items, 1, fb, &j);
        else
            fb(&j, 0, items);
    }
}

static dg_status reduce_kernel(dgr_kctx *k, int kind)
{
    const dgr_value *x = &k->in[0];
    uint32_t mask;
    if (x->dtype == DG_BOOL)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for bool",
                      k->node->name);
    if (dgr_cpu_axes(k, DGC_AT_axis, x->shape.rank, &mask))
        return DG_E_RUNTIME;
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dgr_cpu_reduce(k, dgr_cpu_ptr(x), &x->shape, x->dtype, mask, kind,
                   dgr_cpu_ptr(&k->out[0]));
    return DG_OK;
}

dg_status dgr_k_sum(dgr_kctx *k) { return reduce_kernel(k, DGR_RED_SUM); }
DGR_KERNEL(Sum, dgr_k_sum);
dg_status dgr_k_mean(dgr_kctx *k) { return reduce_kernel(k, DGR_RED_MEAN); }
DGR_KERNEL(Mean, dgr_k_mean);
dg_status dgr_k_max(dgr_kctx *k) { return reduce_kernel(k, DGR_RED_MAX); }
DGR_KERNEL(Max, dgr_k_max);

dg_status dgr_k_sum_to(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    const dg_shape *ls = &k->out_types[0].shape;
    uint32_t mask = 0;
    int xr = x->shape.rank, off = xr - ls->rank;
    if (off < 0)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': SumTo target has a higher rank than x",
                      k->node->name);
    for (int d = 0; d < xr; d++) {
        int64_t xd = x->shape.dims[d];
        int64_t ld = d >= off ? ls->dims[d - off] : 1;
        if (ld == xd)
            continue;
        if (ld != 1)
            return dg_err(k->err, DG_E_RUNTIME,
                          "node '%s': cannot sum dimension %d of size %lld to %lld",
                          k->node->name, d, (long long)xd, (long long)ld);
        mask |= 1u << d;
    }
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    dgr_cpu_reduce(k, dgr_cpu_ptr(x), &x->shape, x->dtype, mask, DGR_RED_SUM,
                   dgr_cpu_ptr(&k->out[0]));
    return DG_OK;
}
DGR_KERNEL(SumTo, dgr_k_sum_to);

/* ---- broadcast iteration over a collapsed dgr_bcast --------------------- */

typedef struct bc_iter {
    const dgr_bcast *bc;
    int64_t idx[DG_MAX_RANK];
    int64_t oa, ob;
} bc_iter;

static void bc_next_row(bc_iter *it)
{
    const dgr_bcast *bc = it->bc;
    for (int d = bc->rank - 2; d >= 0; d--) {
        it->oa += bc->sa[d];
        it->ob += bc->sb[d];
        if (++it->idx[d] < bc->dims[d])
            return;
        it->oa -= bc->sa[d] * bc->dims[d];
        it->ob -= bc->sb[d] * bc->dims[d];
        it->idx[d] = 0;
    }
}

/* keepdims form of a reduced shape: like's dims with reduced axes = 1 */
static void keep_shape(const dg_shape *like, uint32_t mask, dg_shape *ks)
{
    *ks = *like;
    for (int d = 0; d < like->rank; d++)
        if ((mask >> d) & 1)
            ks->dims[d] = 1;
}

#define BCAST_COPY(T)                                                        \
    do {                                                                     \
        const T *xs_ = xp;                                                   \
        T *os_ = op;                                                         \
        int64_t o_ = 0;                                                      \
        for (int64_t r = 0; r < rows; r++) {                                 \
            for (int64_t i = 0; i < inner; i++) {                            \
                T v_ = xs_[it.ob + i * sbi];                                 \
                os_[o_ + i] = mean ? (T)(v_ / (T)cnt) : v_;                  \
            }                                                                \
            o_ += inner;                                                     \
            bc_next_row(&it);                                                \
        }                                                                    \
    } while (0)

dg_status dgr_k_broadcast_like(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    const dg_shape *os = &k->out_types[0].shape;
    uint32_t mask;
    if (dgr_cpu_axes(k, DGC_AT_axis, os->rank, &mask))
        return DG_E_RUNTIME;
    dg_shape ks;
    keep_shape(os, mask, &ks);
    int64_t cnt = 1;
    for (int d = 0; d < os->rank; d++)
        if ((mask >> d) & 1)
            cnt *= os->dims[d];
    if (dg_shape_numel(&ks) != dg_shape_numel(&x->shape))
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': BroadcastLike input does not match the "
                      "reduced shape", k->node->name);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(os);
    if (n <= 0)
        return DG_OK;
    int mean = dgc_attr_b(k->node, DGC_AT_mean) && cnt > 0;
    dgr_bcast bc;
    if (dgr_bcast_init(&bc, os, &ks, os))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': bad broadcast", k->node->name);
    bc_iter it = {&bc, {0}, 0, 0};
    int64_t inner = bc.rank ? bc.dims[bc.rank - 1] : 1;
    int64_t sbi = bc.rank ? bc.sb[bc.rank - 1] : 0;
    int64_t rows = n / inner;
    const void *xp = dgr_cpu_ptr(x);
    void *op = dgr_cpu_ptr(&k->out[0]);
    switch (x->dtype) {
    case DG_F32: BCAST_COPY(float); break;
    case DG_F64: BCAST_COPY(double); break;
    case DG_I32: BCAST_COPY(int32_t); break;
    case DG_I64: BCAST_COPY(int64_t); break;
    default:
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for %s",
                      k->node->name, dg_dtype_name(x->dtype));
    }
    return DG_OK;
}
DGR_KERNEL(BroadcastLike, dgr_k_broadcast_like);

/* MaxGrad: count ties per reduced slot, then route dy / count to them. */
#define MAXGRAD(T)                                                           \
    do {                                                                     \
        const T *xv = dgr_cpu_ptr(&k->in[0]);                                \
        const T *yv = dgr_cpu_ptr(&k->in[1]);                                \
        const T *dv = dgr_cpu_ptr(&k->in[2]);                                \
        T *ov = dgr_cpu_ptr(&k->out[0]);                                     \
        bc_iter it = {&bc, {0}, 0, 0};                                       \
        for (int64_t r = 0; r < rows; r++) {                                 \
            for (int64_t i = 0; i < inner; i++)                              \
                cnt[it.ob + i * sbi] +=                                      \
                    xv[it.oa + i] == yv[it.ob + i * sbi];                    \
            bc_next_row(&it);                                                \
        }                                                                    \
        bc_iter it2 = {&bc, {0}, 0, 0};                                      \
        for (int64_t r = 0; r < rows; r++) {                                 \
            for (int64_t i = 0; i < inner; i++) {                            \
                int64_t q = it2.ob + i * sbi;                                \
                ov[it2.oa + i] = xv[it2.oa + i] == yv[q]                     \
                                     ? (T)(dv[q] / (T)cnt[q]) : (T)0;        \
            }                                                                \
            bc_next_row(&it2);                                               \
        }                                                                    \
    } while (0)

dg_status dgr_k_max_grad(dgr_kctx *k)
{
    const dgr_value *x = &k->in[0];
    uint32_t mask;
    if (dgr_cpu_axes(k, DGC_AT_axis, x->shape.rank, &mask))
        return DG_E_RUNTIME;
    dg_shape ks;
    keep_shape(&x->shape, mask, &ks);
    int64_t nr = dg_shape_numel(&ks);
    if (dg_shape_numel(&k->in[1].shape) != nr ||
        dg_shape_numel(&k->in[2].shape) != nr)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': MaxGrad y/dy do not match the reduced shape",
                      k->node->name);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&x->shape);
    if (n <= 0)
        return DG_OK;
    int64_t *cnt = dg_calloc((size_t)nr, sizeof *cnt);
    if (!cnt)
        return dg_err_nomem(k->err, "MaxGrad");
    dgr_bcast bc;
    dgr_bcast_init(&bc, &x->shape, &ks, &x->shape);
    int64_t inner = bc.rank ? bc.dims[bc.rank - 1] : 1;
    int64_t sbi = bc.rank ? bc.sb[bc.rank - 1] : 0;
    int64_t rows = n / inner;
    switch (x->dtype) {
    case DG_F32: MAXGRAD(float); break;
    case DG_F64: MAXGRAD(double); break;
    case DG_I32: MAXGRAD(int32_t); break;
    case DG_I64: MAXGRAD(int64_t); break;
    default: break;
    }
    dg_free(cnt);
    return DG_OK;
}
DGR_KERNEL(MaxGrad, dgr_k_max_grad);

/* ---- ArgMax -------------------------------------------------------------- */

#define ARGBEST(T, BETTER)                                                   \
    do {                                                                     \
        const T *xv = dgr_cpu_ptr(x);                                        \
        for (int64_t o = 0; o < outer; o++)                                  \
            for (int64_t i = 0; i < inner; i++) {                            \
                const T *p = xv + o * len * inner + i;                       \
                int64_t best = 0;                                            \
                T bv = p[0];                                                 \
                for (int64_t q = 1; q < len; q++)                            \
                    if (p[q * inner] BETTER bv) {                            \
                        bv = p[q * inner];                                   \
                        best = q;                                            \
                    }                                                        \
                if (o64)                                                     \
                    o64[o * inner + i] = best;                               \
                else                                                         \
                    o32[o * inner + i] = (int32_t)best;                      \
            }                                                                \
    } while (0)

#define ARGMAX(T) ARGBEST(T, >)
#define ARGMIN(T) ARGBEST(T, <)

static dg_status argbest(dgr_kctx *k, int min)
{
    const dgr_value *x = &k->in[0];
    int rank = x->shape.rank;
    int64_t ax = dgc_attr_i(k->node, DGC_AT_axis);
    if (ax < 0)
        ax += rank;
    if (rank == 0 || ax < 0 || ax >= rank)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': axis %lld is out of range for rank %d",
                      k->node->name,
                      (long long)dgc_attr_i(k->node, DGC_AT_axis), rank);
    int64_t outer = 1, inner = 1, len = x->shape.dims[ax];
    for (int d = 0; d < ax; d++)
        outer *= x->shape.dims[d];
    for (int d = (int)ax + 1; d < rank; d++)
        inner *= x->shape.dims[d];
    if (len == 0 && outer * inner > 0)
        return dg_err(k->err, DG_E_RUNTIME,
                      "node '%s': reduction axis %lld is empty",
                      k->node->name, (long long)ax);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    if (outer * inner == 0)
        return DG_OK;
    int64_t *o64 = k->out[0].dtype == DG_I64 ? dgr_cpu_ptr(&k->out[0]) : NULL;
    int32_t *o32 = o64 ? NULL : dgr_cpu_ptr(&k->out[0]);
    switch (x->dtype) {
    case DG_F32: if (min) ARGMIN(float); else ARGMAX(float); break;
    case DG_F64: if (min) ARGMIN(double); else ARGMAX(double); break;
    case DG_I32: if (min) ARGMIN(int32_t); else ARGMAX(int32_t); break;
    case DG_I64: if (min) ARGMIN(int64_t); else ARGMAX(int64_t); break;
    default:
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for bool",
                      k->node->name);
    }
    return DG_OK;
}

dg_status dgr_k_argmax(dgr_kctx *k) { return argbest(k, 0); }
DGR_KERNEL(ArgMax, dgr_k_argmax);
dg_status dgr_k_argmin(dgr_kctx *k) { return argbest(k, 1); }
DGR_KERNEL(ArgMin, dgr_k_argmin);
