/*
 * kernels_cpu_stateless.c -- CPU kernels of TF's stateless random ops
 * (issue 22, ops10b): StatelessRandomUniform and StatelessRandomNormal
 * (V1: shape, seed int32/int64 [2]), TF's numbers bit for bit: Philox
 * blocks from the seed's key and counter (philox.h), each block 4 float
 * or 2 double samples, the last block's tail dropped, as TF's CPU fill.
 */
#include "kernels_cpu.h"
#include "philox.h"

/* the generator seed input 1 selects: an int32/int64 pair */
static dg_status seed_gen(dgr_kctx *k, dgr_philox *p)
{
    const dgr_value *s = &k->in[1];
    if ((s->dtype != DG_I32 && s->dtype != DG_I64) || s->shape.rank != 1 ||
        s->shape.dims[0] != 2)
        return dg_err(k->err, DG_E_RUNTIME, "node '%s': seed must be an "
                      "int32/int64 vector of 2 elements", k->node->name);
    /* an int32 seed sign-extends, as TF's uint64 copy of it */
    dgr_philox_from_seed(p, (uint64_t)dgr_cpu_iat(s, 0),
                         (uint64_t)dgr_cpu_iat(s, 1));
    return DG_OK;
}

dg_status dgr_k_stateless_random(dgr_kctx *k)
{
    dgr_philox p;
    dg_status st = seed_gen(k, &p);
    if (st == DG_OK)
        st = dgr_kctx_alloc_output(k, 0);
    if (st)
        return st;
    int normal = k->node->op == DGC_OPID_StatelessRandomNormal;
    int64_t n = dg_shape_numel(&k->out[0].shape);
    uint32_t b[4];
    if (k->out[0].dtype == DG_F32) {
        float *y = dgr_cpu_ptr(&k->out[0]), v[4];
        for (int64_t i = 0; i < n; i += 4) {
            dgr_philox_next(&p, b);
            if (normal) {
                dgr_philox_box_muller_f32(b[0], b[1], &v[0], &v[1]);
                dgr_philox_box_muller_f32(b[2], b[3], &v[2], &v[3]);
            } else {
                for (int j = 0; j < 4; j++)
                    v[j] = dgr_philox_u32_to_f32(b[j]);
            }
            for (int j = 0; j < 4 && i + j < n; j++)
                y[i + j] = v[j];
        }
    } else {
        double *y = dgr_cpu_ptr(&k->out[0]), v[2];
        for (int64_t i = 0; i < n; i += 2) {
            dgr_philox_next(&p, b);
            if (normal) {
                dgr_philox_box_muller_f64(b, &v[0], &v[1]);
            } else {
                v[0] = dgr_philox_u64_to_f64(b[0], b[1]);
                v[1] = dgr_philox_u64_to_f64(b[2], b[3]);
            }
            for (int j = 0; j < 2 && i + j < n; j++)
                y[i + j] = v[j];
        }
    }
    return DG_OK;
}
DGR_KERNEL(StatelessRandomUniform, dgr_k_stateless_random);
DGR_KERNEL(StatelessRandomNormal, dgr_k_stateless_random);
