/*
 * kernels_cpu_einsum.c -- the CPU Einsum and BatchMatMulV2 kernels.
 *
 * A two-input equation whose labels split into batch (in both inputs and
 * the output), free (in one input and the output) and contracted (in both
 * inputs only) labels is a batch of matrix products, as TF's EinsumOp and
 * BatchMatMul run it: per batch index, C[M, N] = A[M, K] B[K, N], where M
 * is the first input's free labels, N the second's and K the contracted
 * ones, each group flattened.  Each product is one dgr_cpu_gemm call
 * (oneDNN / OpenBLAS), straight on the operands when a group's labels lie
 * in memory as one strided run (the transformers' "BTNH,BSNH->BNTS" and
 * "BNTS,BSNH->BTNH", every BatchMatMulV2), else on a packed copy; a
 * batch broadcast against an operand without it folds into M (Keras'
 * Dense on a [B, T, F] input is one GEMM of B*T rows).  Everything else
 * (one input, a label summed in one input only) runs the strided loop
 * with a double accumulator.
 *
 * Determinism (issue 19): each product is one call whose blocks follow the
 * shape only; batches run one call each on the pool, so the bits do not
 * depend on the thread count.
 */
#include "kernels_cpu.h"
#include "cpu_gemm.h"
#include "infer.h"
#include "dg_alloc.h"

#include <string.h>

/* ---- the strided loop (any equation) ------------------------------------- */

typedef struct es_job {
    dg_dtype t;
    int ni;
    const void *x[2];
    void *o;
    int no, nc;               /* output labels, contracted labels */
    int64_t odim[DG_MAX_RANK], ost[2][DG_MAX_RANK];
    int64_t cdim[DGC_EINSUM_MAX_LABELS], cst[2][DGC_EINSUM_MAX_LABELS];
} es_job;

static void es_range(void *arg, int64_t o0, int64_t o1)
{
    es_job *j = arg;
    for (int64_t o = o0; o < o1; o++) {
        int64_t base[2] = {0, 0}, rem = o;
        for (int d = j->no - 1; d >= 0; d--) {
            int64_t c = rem % j->odim[d];
            rem /= j->odim[d];
            base[0] += c * j->ost[0][d];
            base[1] += c * j->ost[1][d];
        }
        double acc = 0;
        int64_t idx[DGC_EINSUM_MAX_LABELS] = {0};
        int64_t off[2] = {base[0], base[1]};
        for (;;) {
            double v = j->t == DG_F32 ? ((const float *)j->x[0])[off[0]]
                                      : ((const double *)j->x[0])[off[0]];
            if (j->ni > 1)
                v *= j->t == DG_F32 ? ((const float *)j->x[1])[off[1]]
                                    : ((const double *)j->x[1])[off[1]];
            acc += v;
            int d = j->nc - 1;
            for (; d >= 0; d--) {
                off[0] += j->cst[0][d];
                off[1] += j->cst[1][d];
                if (++idx[d] < j->cdim[d])
                    break;
                off[0] -= j->cst[0][d] * j->cdim[d];
                off[1] -= j->cst[1][d] * j->cdim[d];
                idx[d] = 0;
            }
            if (d < 0)
                break;
        }
        if (j->t == DG_F32)
            ((float *)j->o)[o] = (float)acc;
        else
            ((double *)j->o)[o] = acc;
    }
}

static void es_loops(dgr_kctx *k, const dgc_einsum_loops *l, int64_t n)
{
    es_job j;
    memset(&j, 0, sizeof j);
    j.t = k->in[0].dtype;
    j.ni = k->n_in;
    j.no = l->no;
    j.nc = l->nc;
    memcpy(j.odim, l->odim, sizeof j.odim);
    memcpy(j.ost, l->ost, sizeof j.ost);
    memcpy(j.cdim, l->cdim, sizeof j.cdim);
    memcpy(j.cst, l->cst, sizeof j.cst);
    j.x[0] = dgr_cpu_ptr(&k->in[0]);
    j.x[1] = k->n_in > 1 ? dgr_cpu_ptr(&k->in[1]) : NULL;
    j.o = dgr_cpu_ptr(&k->out[0]);
    int64_t work = 1;
    for (int d = 0; d < j.nc; d++)
        work *= j.cdim[d];
    if (work == 0) { /* an empty sum */
        memset(j.o, 0, (size_t)n * dg_dtype_size(j.t));
        return;
    }
    int64_t grain = DGR_CPU_PAR_MIN / (work > 0 ? work : 1);
    if (n * work >= DGR_CPU_PAR_MIN)
        dgr_parallel_for(k->dev->intra, n, grain > 0 ? grain : 1, es_range,
                         &j);
    else
        es_range(&j, 0, n);
}

/* ---- batched GEMM -------------------------------------------------------- */

/* A group of labels (outermost first): sizes and each operand's element
 * strides (operands 0 = A, 1 = B, 2 = C). */
typedef struct grp {
    int n;
    int64_t dim[DGC_EINSUM_MAX_LABELS], st[3][DGC_EINSUM_MAX_LABELS];
} grp;

static int64_t grp_size(const grp *g)
{
    int64_t s = 1;
    for (int i = 0; i < g->n; i++)
        s *= g->dim[i];
    return s;
}

/* The group as one strided run in operand o: 1 and *stride, or 0.  Size-1
 * labels do not count; an empty run has stride 1. */
static int grp_run(const grp *g, int o, int64_t *stride)
{
    int64_t s = -1, next = 0;
    for (int i = g->n - 1; i >= 0; i--) {
        if (g->dim[i] == 1)
            continue;
        if (g->st[o][i] == 0)
            return 0; /* broadcast: not a matrix */
        if (s < 0)
            s = g->st[o][i];
        else if (g->st[o][i] != next)
            return 0;
        next = g->st[o][i] * g->dim[i];
    }
    *stride = s < 0 ? 1 : s;
    return 1;
}

/* Offsets of every flat index of g in operand o (mixed radix, last label
 * fastest) into tab[grp_size]. */
static void grp_offsets(const grp *g, int o, int64_t *tab)
{
    int64_t n = grp_size(g), idx[DGC_EINSUM_MAX_LABELS] = {0}, off = 0;
    for (int64_t f = 0; f < n; f++) {
        tab[f] = off;
        for (int i = g->n - 1; i >= 0; i--) {
            off += g->st[o][i];
            if (++idx[i] < g->dim[i])
                break;
            off -= g->st[o][i] * g->dim[i];
            idx[i] = 0;
        }
    }
}

/* How one matrix operand reaches the GEMM: straight (trans, ld), or packed
 * into a rows x cols row-major copy through offset tables. */
typedef struct mat {
    int direct, trans;
    int64_t ld;
    const int64_t *roff, *coff; /* packed: offsets of rows and columns */
} mat;

/* A rows x cols matrix at row stride r and column stride c: straight if
 * one stride is 1 and the other spans the row (BLAS' lda). */
static void mat_plan(mat *m, int64_t rows, int64_t cols, int ok, int64_t r,
                     int64_t c)
{
    memset(m, 0, sizeof *m);
    if (!ok)
        return;
    if (cols == 1)
        c = 1;
    if (rows == 1)
        r = 1;
    if (c == 1 && (rows == 1 || r >= cols)) {
        m->direct = 1;
        m->ld = rows == 1 ? (cols > 0 ? cols : 1) : r;
    } else if (r == 1 && (cols == 1 || c >= rows)) {
        m->direct = 1;
        m->trans = 1;
        m->ld = cols == 1 ? (rows > 0 ? rows : 1) : c;
    }
}

typedef struct bg_job {
    dg_dtype t;
    size_t es;
    int64_t M, N, K, nb;
    const char *a, *b;
    char *c;
    mat ma, mb;
    int c_direct, c_swap; /* C straight (swap: computed as C^T = B^T A^T) */
    int64_t ldc;
    const int64_t *boff[3];          /* per batch: A, B, C offsets */
    const int64_t *aM, *aK, *bK, *bN, *cM, *cN; /* packing / scatter tables */
    struct dgr_pool *pool;           /* one batch: the GEMM's own blocks */
    int nomem;
} bg_job;

static void pack(size_t es, const char *src, const int64_t *roff,
                 int64_t rows, const int64_t *coff, int64_t cols, char *dst)
{
    if (es == 4) {
        const float *s = (const float *)src;
        float *d = (float *)dst;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t q = 0; q < cols; q++)
                d[r * cols + q] = s[roff[r] + coff[q]];
    } else {
        const double *s = (const double *)src;
        double *d = (double *)dst;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t q = 0; q < cols; q++)
                d[r * cols + q] = s[roff[r] + coff[q]];
    }
}

static void scatter(size_t es, const char *src, int64_t rows, int64_t cols,
                    const int64_t *roff, const int64_t *coff, char *dst)
{
    if (es == 4) {
        const float *s = (const float *)src;
        float *d = (float *)dst;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t q = 0; q < cols; q++)
                d[roff[r] + coff[q]] = s[r * cols + q];
    } else {
        const double *s = (const double *)src;
        double *d = (double *)dst;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t q = 0; q < cols; q++)
                d[roff[r] + coff[q]] = s[r * cols + q];
    }
}

static void bg_range(void *arg, int64_t b0, int64_t b1)
{
    bg_job *j = arg;
    size_t es = j->es;
    char *pa = NULL, *pb = NULL, *pc = NULL;
    if (!j->ma.direct)
        pa = dg_malloc((size_t)(j->M * j->K) * es + 1);
    if (!j->mb.direct)
        pb = dg_malloc((size_t)(j->K * j->N) * es + 1);
    if (!j->c_direct)
        pc = dg_malloc((size_t)(j->M * j->N) * es + 1);
    if ((!j->ma.direct && !pa) || (!j->mb.direct && !pb) ||
        (!j->c_direct && !pc)) {
        __atomic_store_n(&j->nomem, 1, __ATOMIC_RELAXED);
        goto out;
    }
    for (int64_t bi = b0; bi < b1; bi++) {
        const char *A = j->a + (size_t)j->boff[0][bi] * es;
        const char *B = j->b + (size_t)j->boff[1][bi] * es;
        char *C = j->c + (size_t)j->boff[2][bi] * es;
        int ta = j->ma.trans, tb = j->mb.trans;
        int64_t lda = j->ma.ld, ldb = j->mb.ld;
        if (pa) {
            pack(es, A, j->aM, j->M, j->aK, j->K, pa);
            A = pa, ta = 0, lda = j->K > 0 ? j->K : 1;
        }
        if (pb) {
            pack(es, B, j->bK, j->K, j->bN, j->N, pb);
            B = pb, tb = 0, ldb = j->N > 0 ? j->N : 1;
        }
        if (!j->c_direct) {
            dgr_cpu_gemm(j->pool, j->t, ta, tb, j->M, j->N, j->K, A, lda, B,
                         ldb, pc, j->N, NULL, 0);
            scatter(es, pc, j->M, j->N, j->cM, j->cN, C);
        } else if (j->c_swap) {
            /* C^T [N, M] = B^T A^T: B as the left operand, transposed */
            dgr_cpu_gemm(j->pool, j->t, !tb, !ta, j->N, j->M, j->K, B, ldb, A,
                         lda, C, j->ldc, NULL, 0);
        } else {
            dgr_cpu_gemm(j->pool, j->t, ta, tb, j->M, j->N, j->K, A, lda, B,
                         ldb, C, j->ldc, NULL, 0);
        }
    }
out:
    dg_free(pa);
    dg_free(pb);
    dg_free(pc);
}

/* The equation as a batch of GEMMs, when it is one: 1 done, 0 not a batch
 * of products (the caller runs the loops), -1 out of memory. */
static int es_gemm(dgr_kctx *k, const dgc_einsum *e, const dgc_einsum_loops *l)
{
    if (e->n_in != 2)
        return 0;
    grp g[4]; /* batch, M, N, K */
    memset(g, 0, sizeof g);
    /* the output's strides per label: row-major over the output dims */
    int64_t cst[DG_MAX_RANK], s = 1;
    for (int d = l->no - 1; d >= 0; d--) {
        cst[d] = s;
        s *= l->odim[d];
    }
    for (int d = 0; d < l->no; d++) {
        int64_t sa = l->ost[0][d], sb = l->ost[1][d];
        int which = sa && sb ? 0 : sa ? 1 : sb ? 2 : 0;
        grp *q = &g[which];
        q->dim[q->n] = l->odim[d];
        q->st[0][q->n] = sa;
        q->st[1][q->n] = sb;
        q->st[2][q->n] = cst[d];
        q->n++;
    }
    for (int c = 0; c < l->nc; c++) {
        if (l->cdim[c] == 1)
            continue;
        if (!l->cst[0][c] || !l->cst[1][c])
            return 0; /* summed in one input only */
        grp *q = &g[3];
        q->dim[q->n] = l->cdim[c];
        q->st[0][q->n] = l->cst[0][c];
        q->st[1][q->n] = l->cst[1][c];
        q->st[2][q->n] = 0;
        q->n++;
    }
    bg_job j;
    memset(&j, 0, sizeof j);
    j.t = k->in[0].dtype;
    j.es = dg_dtype_size(j.t);
    j.nb = grp_size(&g[0]);
    j.M = grp_size(&g[1]);
    j.N = grp_size(&g[2]);
    j.K = grp_size(&g[3]);
    int64_t sAM = 0, sAK = 0, sBK = 0, sBN = 0, sCM = 0, sCN = 0;
    int okA = grp_run(&g[1], 0, &sAM) & grp_run(&g[3], 0, &sAK);
    int okB = grp_run(&g[3], 1, &sBK) & grp_run(&g[2], 1, &sBN);
    int okC = grp_run(&g[1], 2, &sCM) & grp_run(&g[2], 2, &sCN);
    mat_plan(&j.ma, j.M, j.K, okA, sAM, sAK);
    mat_plan(&j.mb, j.K, j.N, okB, sBK, sBN);
    mat cm, ct;
    mat_plan(&cm, j.M, j.N, okC, sCM, sCN);
    mat_plan(&ct, j.N, j.M, okC, sCN, sCM);
    if (cm.direct && !cm.trans) {
        j.c_direct = 1;
        j.ldc = cm.ld;
    } else if (ct.direct && !ct.trans && j.ma.direct && j.mb.direct) {
        j.c_direct = 1;
        j.c_swap = 1;
        j.ldc = ct.ld;
    }
    /* offset tables: batch per operand, and those the packing needs */
    int64_t need = 3 * j.nb;
    if (!j.ma.direct)
        need += j.M + j.K;
    if (!j.mb.direct)
        need += j.K + j.N;
    if (!j.c_direct)
        need += j.M + j.N;
    int64_t *tab = dg_malloc((size_t)need * sizeof *tab + 1), *p = tab;
    if (!tab)
        return -1;
    for (int o = 0; o < 3; o++) {
        grp_offsets(&g[0], o, p);
        j.boff[o] = p;
        p += j.nb;
    }
    if (!j.ma.direct) {
        grp_offsets(&g[1], 0, p), j.aM = p, p += j.M;
        grp_offsets(&g[3], 0, p), j.aK = p, p += j.K;
    }
    if (!j.mb.direct) {
        grp_offsets(&g[3], 1, p), j.bK = p, p += j.K;
        grp_offsets(&g[2], 1, p), j.bN = p, p += j.N;
    }
    if (!j.c_direct) {
        grp_offsets(&g[1], 2, p), j.cM = p, p += j.M;
        grp_offsets(&g[2], 2, p), j.cN = p, p += j.N;
    }
    j.a = dgr_cpu_ptr(&k->in[0]);
    j.b = dgr_cpu_ptr(&k->in[1]);
    j.c = dgr_cpu_ptr(&k->out[0]);
    if (j.nb == 1) {
        j.pool = k->dev->intra; /* one product: its own fixed blocks */
        bg_range(&j, 0, 1);
    } else {
        int64_t per = j.M * j.N * (j.K > 0 ? j.K : 1);
        int64_t grain = DGR_CPU_PAR_MIN / (per > 0 ? per : 1);
        if (j.nb * per >= DGR_CPU_PAR_MIN)
            dgr_parallel_for(k->dev->intra, j.nb, grain > 0 ? grain : 1,
                             bg_range, &j);
        else
            bg_range(&j, 0, j.nb);
    }
    dg_free(tab);
    return j.nomem ? -1 : 1;
}

/* ---- the kernel ---------------------------------------------------------- */

dg_status dgr_k_einsum(dgr_kctx *k)
{
    dg_dtype t = k->in[0].dtype;
    if (t != DG_F32 && t != DG_F64)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': no CPU kernel for "
                      "dtype %s", k->node->name, dg_dtype_name(t));
    if (k->n_in > 1 && k->in[1].dtype != t)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': inputs of dtypes %s "
                      "and %s", k->node->name, dg_dtype_name(t),
                      dg_dtype_name(k->in[1].dtype));
    dgc_einsum e;
    char eqb[40];
    const char *eq = dgc_einsum_equation(k->node, eqb, sizeof eqb);
    const dg_shape *sh[2] = {&k->in[0].shape,
                             k->n_in > 1 ? &k->in[1].shape : NULL};
    char msg[200];
    if (dgc_einsum_parse(eq, sh, k->n_in, &e, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    dgc_einsum_loops l;
    dgc_einsum_loops_of(&e, sh, &l);
    dg_status st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    if (n <= 0)
        return DG_OK;
    int r = es_gemm(k, &e, &l);
    if (r < 0)
        return dg_err_nomem(k->err, k->node->name);
    if (r == 0)
        es_loops(k, &l, n);
    return DG_OK;
}
DGR_KERNEL(Einsum, dgr_k_einsum);
DGR_KERNEL(BatchMatMulV2, dgr_k_einsum);
