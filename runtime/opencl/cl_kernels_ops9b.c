/*
 * cl_kernels_ops9b.c -- OpenCL launches of issue 22's ops9b group
 * (opencl_kernels/ops9b.cl): MatrixBandPart, Roll and ReverseSequence,
 * float types (the integer ones run on the CPU).  Their small integer
 * inputs (bands, shifts, axes) are read on the host (dgr_cl_small_ints);
 * ReverseSequence's seq_lengths are read there to be checked, as TF's GPU
 * kernel does.
 */
#include "cl_internal.h"

#include "infer.h"
#include "attr_get.h"
#include "dg_alloc.h"

dg_status dgr_cl_k_band_part(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *s = &k->in[0].shape;
    int64_t b[2];
    int nb;
    for (int i = 0; i < 2; i++)
        if ((st = dgr_cl_small_ints(k, 1 + i, &b[i], 1, &nb)) != DG_OK)
            return st;
    cl_long rows = s->dims[s->rank - 2], cols = s->dims[s->rank - 1];
    cl_long lo = b[0], up = b[1], n = dg_shape_numel(s);
    char msg[128];
    if (dgc_band_check(rows, cols, lo, up, msg, sizeof msg))
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': %s", k->node->name,
                      msg);
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK || n == 0)
        return st;
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),    DGR_ARG(y),  DGR_ARG(n), DGR_ARG(rows),
                      DGR_ARG(cols), DGR_ARG(lo), DGR_ARG(up)};
    return dgr_cl_launch1d(k, "ops9b", dt, "o9_band_part", (size_t)n, a, 7);
}
DGR_KERNEL(MatrixBandPart, dgr_cl_k_band_part);

dg_status dgr_cl_k_roll(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *s = &k->in[0].shape;
    int64_t shift[2 * DG_MAX_RANK], axis[2 * DG_MAX_RANK], sh[DG_MAX_RANK];
    int ns, na;
    if ((st = dgr_cl_small_ints(k, 1, shift, 2 * DG_MAX_RANK, &ns)) ||
        (st = dgr_cl_small_ints(k, 2, axis, 2 * DG_MAX_RANK, &na)))
        return st;
    if (ns != na)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': shift and axis have "
                      "%d and %d elements", k->node->name, ns, na);
    int bad = dgc_roll_shifts(s, shift, axis, ns, sh);
    if (bad >= 0)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': axis %lld is out of "
                      "range for rank %d", k->node->name,
                      (long long)axis[bad], s->rank);
    cl_long n = dg_shape_numel(s);
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK || n == 0)
        return st;
    cl_int rank = s->rank;
    cl_long8 d8 = dgr_cl_long8(s->dims, s->rank), s8 = dgr_cl_long8(sh, s->rank);
    cl_mem x = dgr_cl_mem(&k->in[0]), y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),    DGR_ARG(y),  DGR_ARG(n),
                      DGR_ARG(rank), DGR_ARG(d8), DGR_ARG(s8)};
    return dgr_cl_launch1d(k, "ops9b", dt, "o9_roll", (size_t)n, a, 6);
}
DGR_KERNEL(Roll, dgr_cl_k_roll);

/* ReverseSequence (input, seq_lengths; seq_dim, batch_dim) */
dg_status dgr_cl_k_reverse_sequence(dgr_kctx *k)
{
    dg_dtype dt = k->in[0].dtype, lt = k->in[1].dtype;
    dg_status st = dgr_cl_need_float(k, dt);
    if (st != DG_OK)
        return st;
    const dg_shape *s = &k->in[0].shape;
    int sd = (int)dgc_attr_i(k->node, DGC_AT_seq_dim);
    int bd = (int)dgc_attr_i(k->node, DGC_AT_batch_dim);
    cl_long n = dg_shape_numel(s), nb = s->dims[bd], sdim = s->dims[sd];
    size_t es = dg_dtype_size(lt);
    void *lens = dg_malloc(nb > 0 ? (size_t)nb * es : 1);
    if (!lens)
        return dg_err_nomem(k->err, "ReverseSequence");
    if (nb > 0 && (st = dgr_cl_read(k->dev, k->in[1].buf, lens,
                                    (size_t)nb * es, k->err)) != DG_OK) {
        dg_free(lens);
        return st;
    }
    for (cl_long b = 0; b < nb; b++) {
        int64_t l = lt == DG_I32 ? ((const int32_t *)lens)[b]
                                 : ((const int64_t *)lens)[b];
        if (l < 0 || l > sdim) {
            dg_free(lens);
            return dg_err(k->err, DG_E_RUNTIME, "node '%s': seq_lengths[%lld]"
                          " = %lld is outside [0, %lld]", k->node->name,
                          (long long)b, (long long)l, (long long)sdim);
        }
    }
    dg_free(lens);
    if ((st = dgr_kctx_alloc_output(k, 0)) != DG_OK || n == 0)
        return st;
    cl_long sstride = 1, bstride = 1;
    for (int d = s->rank - 1; d > sd; d--)
        sstride *= s->dims[d];
    for (int d = s->rank - 1; d > bd; d--)
        bstride *= s->dims[d];
    cl_mem x = dgr_cl_mem(&k->in[0]), l = dgr_cl_mem(&k->in[1]),
           y = dgr_cl_mem(&k->out[0]);
    dgr_cl_arg a[] = {DGR_ARG(x),    DGR_ARG(l),       DGR_ARG(y),
                      DGR_ARG(n),    DGR_ARG(sdim),    DGR_ARG(sstride),
                      DGR_ARG(nb),   DGR_ARG(bstride)};
    return dgr_cl_launch1d(k, "ops9b", dt, lt == DG_I64
                           ? "o9_reverse_sequence_i64"
                           : "o9_reverse_sequence_i32", (size_t)n, a, 8);
}
DGR_KERNEL(ReverseSequence, dgr_cl_k_reverse_sequence);
