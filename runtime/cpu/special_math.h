/*
 * special_math.h -- TF's special functions (Eigen's SpecialFunctionsImpl.h
 * and BesselFunctionsImpl.h: the Cephes algorithms) in double precision,
 * with float wrappers (computed in double, rounded once): the values of
 * the ops10b kernels (issue 22).
 */
#ifndef DGR_SPECIAL_MATH_H
#define DGR_SPECIAL_MATH_H

/* digamma(x): NaN at 0 and the negative integers (as Eigen) */
double dgr_sf_digamma(double x);
/* ndtri(p): the normal quantile; -inf at 0, +inf at 1, NaN outside */
double dgr_sf_ndtri(double p);
/* erfinv(x) = ndtri((x + 1) / 2) / sqrt(2), as TF */
double dgr_sf_erfinv(double x);
/* exp(-|x|) I0(x) and exp(-|x|) I1(x) */
double dgr_sf_i0e(double x);
double dgr_sf_i1e(double x);
/* Hurwitz zeta(x, q): inf at x == 1, NaN for x < 1 (as Eigen) */
double dgr_sf_zeta(double x, double q);
/* polygamma(n, x): NaN unless n is an integer >= 0; digamma at n == 0 */
double dgr_sf_polygamma(double n, double x);
/* the regularized lower / upper incomplete gamma functions P(a, x),
 * Q(a, x): NaN for x < 0 or a <= 0 (P(a, 0) = 0) */
double dgr_sf_igamma(double a, double x);
double dgr_sf_igammac(double a, double x);

float dgr_sf_lgammaf(float x);
float dgr_sf_digammaf(float x);
float dgr_sf_ndtrif(float x);
float dgr_sf_erfinvf(float x);
float dgr_sf_i0ef(float x);
float dgr_sf_i1ef(float x);

#endif
