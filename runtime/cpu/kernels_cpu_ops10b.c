/*
 * kernels_cpu_ops10b.c -- CPU kernels of the ops10b special functions
 * (issue 22): Lgamma, Digamma, Erfinv, Ndtri, BesselI0e, BesselI1e
 * (unary) and Polygamma, Zeta, Igamma, Igammac (broadcasting), with TF's
 * values: Eigen's algorithms (the Cephes ones), evaluated in double for
 * float32 and float64 alike.
 */
#include "kernels_cpu.h"
#include "special_math.h"

#include <math.h>

ZUNF(lgamma, dgr_sf_lgammaf, lgamma)
DGR_KERNEL(Lgamma, dgr_k_lgamma);
ZUNF(digamma, dgr_sf_digammaf, dgr_sf_digamma)
DGR_KERNEL(Digamma, dgr_k_digamma);
ZUNF(erfinv, dgr_sf_erfinvf, dgr_sf_erfinv)
DGR_KERNEL(Erfinv, dgr_k_erfinv);
ZUNF(ndtri, dgr_sf_ndtrif, dgr_sf_ndtri)
DGR_KERNEL(Ndtri, dgr_k_ndtri);
ZUNF(bessel_i0e, dgr_sf_i0ef, dgr_sf_i0e)
DGR_KERNEL(BesselI0e, dgr_k_bessel_i0e);
ZUNF(bessel_i1e, dgr_sf_i1ef, dgr_sf_i1e)
DGR_KERNEL(BesselI1e, dgr_k_bessel_i1e);

/* the broadcasting ones: float32 through double, rounded once */
#define SFBIN(OP, F)                                                         \
    ZBIN(OP##_f32, float, (float)F((double)x, (double)y))                    \
    ZBIN(OP##_f64, double, F(x, y))                                          \
    BINF(OP)                                                                 \
    dg_status dgr_k_##OP(dgr_kctx *k) { return dgr_cpu_binary(k, OP##_fns); }
SFBIN(polygamma, dgr_sf_polygamma)
DGR_KERNEL(Polygamma, dgr_k_polygamma);
SFBIN(zeta, dgr_sf_zeta)
DGR_KERNEL(Zeta, dgr_k_zeta);
SFBIN(igamma, dgr_sf_igamma)
DGR_KERNEL(Igamma, dgr_k_igamma);
SFBIN(igammac, dgr_sf_igammac)
DGR_KERNEL(Igammac, dgr_k_igammac);
