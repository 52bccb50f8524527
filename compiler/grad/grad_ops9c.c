/*
 * grad_ops9c.c -- the gradient rules of the segment reductions of issue 22,
 * as TF's math_grad.py: SegmentSum/Mean/Max/Min/Prod and
 * UnsortedSegmentMax/Min/Prod, built from dgrun's ops (GatherV2 of the
 * output gradient by the segment ids, the segment sums of selection masks).
 * The unsorted ops' rows with negative ids get zeros (TF's
 * _GatherDropNegatives) when the ids' shape is known at compile time; else
 * the ids are taken to be >= 0, as UnsortedSegmentSum's rule does.
 */
#include "grad.h"
#include "grad_rule.h"
#include "dg_error.h"

/* The ids and segment count of a segment node, and how its rule reads its
 * rows: `ids` clipped to >= 0 for the unsorted ops, `pos` (node -1 where
 * none is needed) the mask of rows with ids >= 0 shaped to broadcast
 * against data; `one` and `zero` shaped like data. */
typedef struct {
    int skip, unsorted; /* skip: data needs no gradient */
    dgc_ref ids, ns, pos, one, zero;
} seg_io;

static dg_status seg_io_of(dgc_gctx *c, int32_t fwd, seg_io *s)
{
    DGC_GRAD_LOCALS;
    s->skip = !NEED(0);
    if (s->skip)
        return DG_OK;
    s->unsorted = FWD->n_inputs == 3;
    s->ids = FWD->inputs[1];
    s->ns = s->unsorted ? FWD->inputs[2] : s->ids;
    s->pos = R(-1, 0);
    s->one = MK("ones", OnesLike, x); CHK(s->one);
    s->zero = MK("zeros_x", ZerosLike, x); CHK(s->zero);
    if (!s->unsorted)
        return DG_OK;
    dgc_ref raw = s->ids;
    dgc_ref zi = MK("ids_zeros", ZerosLike, raw); CHK(zi);
    s->ids = MK("ids_clipped", Maximum, raw, zi); CHK(s->ids);
    dg_shape is = dgc_grad_type(c, raw)->shape;
    int xr = dgc_grad_type(c, x)->shape.rank;
    int known = is.rank >= 0 && xr >= is.rank;
    for (int d = 0; known && d < is.rank; d++)
        known = is.dims[d] >= 0;
    if (!known)
        return DG_OK;
    dgc_ref r = raw;
    if (xr > is.rank) {
        int64_t v[DG_MAX_RANK];
        for (int d = 0; d < xr; d++)
            v[d] = d < is.rank ? is.dims[d] : 1;
        dgc_ref sh = dgc_grad_ints(c, fwd, "ids_bshape", v, xr); CHK(sh);
        r = MK("ids_b", Reshape, raw, sh); CHK(r);
    }
    dgc_ref rz = MK("ids_b_zeros", ZerosLike, r); CHK(rz);
    s->pos = MK("ids_positive", GreaterEqual, r, rz); CHK(s->pos);
    return DG_OK;
}

/* The segment sum of v (rows of data's shape) as the forward node's. */
static dgc_ref seg_sum(dgc_gctx *c, int32_t fwd, const seg_io *s, dgc_ref v)
{
    dgc_ref raw = FWD->inputs[1];
    return s->unsorted ? MK("UnsortedSegmentSum", UnsortedSegmentSum, v, raw,
                            s->ns)
                       : MK("SegmentSum", SegmentSum, v, raw);
}

/* Rows of v (one per segment) gathered for each data row; zeros for the
 * rows with negative ids. */
static dgc_ref seg_gather(dgc_gctx *c, int32_t fwd, const seg_io *s,
                          dgc_ref v)
{
    dgc_ref g = MK("GatherV2", GatherV2, v, s->ids);
    if (g.node < 0 || s->pos.node < 0)
        return g;
    dgc_ref z = MK("zeros", ZerosLike, g);
    if (z.node < 0)
        return z;
    return MK("drop_negatives", SelectV2, s->pos, g, z);
}

DGC_GRAD(SegmentSum)
{
    DGC_GRAD_LOCALS;
    if (NEED(0)) {
        dx[0] = MK("GatherV2", GatherV2, dy, FWD->inputs[1]); CHK(dx[0]);
    }
    return DG_OK;
}

DGC_GRAD(SegmentMean)
{
    DGC_GRAD_LOCALS;
    /* TF: gather(dy / segment_sum(ones), ids) */
    if (!NEED(0))
        return DG_OK;
    dgc_ref ids = FWD->inputs[1];
    dgc_ref one = MK("ones", OnesLike, x); CHK(one);
    dgc_ref n = MK("counts", SegmentSum, one, ids); CHK(n);
    dgc_ref q = MK("Div", Div, dy, n); CHK(q);
    dx[0] = MK("GatherV2", GatherV2, q, ids); CHK(dx[0]);
    return DG_OK;
}

DGC_GRAD(SegmentMax)
{
    DGC_GRAD_LOCALS;
    /* TF's _SegmentMinOrMaxGrad / _UnsortedSegmentMinOrMaxGrad: dy of a
     * segment shared evenly by the rows equal to its max (min) */
    seg_io s;
    dg_status st = seg_io_of(c, fwd, &s);
    if (st || s.skip)
        return st;
    dgc_ref go = seg_gather(c, fwd, &s, z); CHK(go);
    dgc_ref sel = MK("is_selected", Equal, x, go); CHK(sel);
    if (s.pos.node >= 0) {
        sel = MK("is_selected_kept", LogicalAnd, sel, s.pos); CHK(sel);
    }
    dgc_ref zero = s.zero;
    dgc_ref self = MK("selected", SelectV2, sel, s.one, zero); CHK(self);
    dgc_ref ns = seg_sum(c, fwd, &s, self); CHK(ns);
    dgc_ref w = MK("weighted", Div, dy, ns); CHK(w);
    dgc_ref gw = MK("GatherV2_weighted", GatherV2, w, s.ids); CHK(gw);
    dx[0] = MK("SelectV2", SelectV2, sel, gw, zero); CHK(dx[0]);
    return DG_OK;
}
DGC_GRAD_AS(SegmentMin, SegmentMax);
DGC_GRAD_AS(UnsortedSegmentMax, SegmentMax);
DGC_GRAD_AS(UnsortedSegmentMin, SegmentMax);

DGC_GRAD(SegmentProd)
{
    DGC_GRAD_LOCALS;
    /* TF's _SegmentProdGrad / _UnsortedSegmentProdGrad: a segment without
     * zeros gives prod / x; with one zero, the zero's row the product of
     * the others (the rest 0); with more, all 0 */
    seg_io s;
    dg_status st = seg_io_of(c, fwd, &s);
    if (st || s.skip)
        return st;
    dgc_ref raw = FWD->inputs[1], zero = s.zero, one = s.one;
    dgc_ref isz = MK("is_zero", Equal, x, zero); CHK(isz);
    dgc_ref zf = MK("zero_count", SelectV2, isz, one, zero); CHK(zf);
    dgc_ref nz = seg_sum(c, fwd, &s, zf); CHK(nz);
    dgc_ref on = MK("ones_seg", OnesLike, nz); CHK(on);
    dgc_ref many = MK("many_zeros", Greater, nz, on); CHK(many);
    dgc_ref zdy = MK("zeros_dy", ZerosLike, dy); CHK(zdy);
    dgc_ref g2 = MK("grad_kept", SelectV2, many, zdy, dy); CHK(g2);
    dgc_ref nzd = MK("non_zero_data", SelectV2, isz, one, x); CHK(nzd);
    dgc_ref nzp = s.unsorted
        ? MK("UnsortedSegmentProd", UnsortedSegmentProd, nzd, raw, s.ns)
        : MK("SegmentProd", SegmentProd, nzd, raw);
    CHK(nzp);
    dgc_ref gp = MK("GatherV2_prod", GatherV2, z, s.ids); CHK(gp);
    dgc_ref gnp = MK("GatherV2_nzprod", GatherV2, nzp, s.ids); CHK(gnp);
    dgc_ref pde = MK("prod_divided", Div, gp, nzd); CHK(pde);
    dgc_ref pd = MK("partial", SelectV2, isz, gnp, pde); CHK(pd);
    dgc_ref gg = seg_gather(c, fwd, &s, g2); CHK(gg);
    dx[0] = MK("Mul", Mul, gg, pd); CHK(dx[0]);
    return DG_OK;
}
DGC_GRAD_AS(UnsortedSegmentProd, SegmentProd);

DGC_GRAD(SparseSegmentSum)
{
    DGC_GRAD_LOCALS;
    /* TF: SparseSegment{Sum,Mean,SqrtN}Grad(dy, indices, segment_ids,
     * data's rows); with sparse_gradient TF gives the same values as
     * IndexedSlices (dgrun's gradient is dense either way) */
    if (!NEED(0))
        return DG_OK;
    const dg_shape *ds = &dgc_grad_type(c, x)->shape;
    if (ds->rank < 1 || ds->dims[0] < 0)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': the gradient of %s "
                      "needs data's first dimension known when the graph "
                      "is compiled", FWD->name, dgc_op_name(op));
    int64_t rows = ds->dims[0];
    dgc_ref d0 = dgc_grad_ints(c, fwd, "output_dim0", &rows, 1); CHK(d0);
    dgc_ref ix = FWD->inputs[1], ids = FWD->inputs[2];
    dx[0] = op == OP(SparseSegmentMean)
        ? MK("SparseSegmentMeanGrad", SparseSegmentMeanGrad, dy, ix, ids, d0)
        : op == OP(SparseSegmentSqrtN)
        ? MK("SparseSegmentSqrtNGrad", SparseSegmentSqrtNGrad, dy, ix, ids,
             d0)
        : MK("SparseSegmentSumGrad", SparseSegmentSumGrad, dy, ix, ids, d0);
    CHK(dx[0]);
    return DG_OK;
}
DGC_GRAD_AS(SparseSegmentMean, SparseSegmentSum);
DGC_GRAD_AS(SparseSegmentSqrtN, SparseSegmentSum);
