/*
 * special_math.c -- TF's special functions in double precision (Eigen's
 * Cephes algorithms, written anew in C): digamma, ndtri / erfinv, the
 * scaled Bessel functions i0e / i1e (those from opencl_kernels/ops10b.cl,
 * shared with the OpenCL kernels), Hurwitz zeta, polygamma and the
 * regularized incomplete gamma functions.
 */
#include "special_math.h"

#include <float.h>
#include <math.h>

#define SF_MACHEP (DBL_EPSILON / 2)
#define SF_BIG (1.0 / DBL_EPSILON)
#define SF_MAXLOG 7.09782712893383996843E2

/* digamma, ndtri and the Bessel functions: opencl_kernels/ops10b.cl's
 * (one source for both backends), compiled here as C in double */
#define T double
#define O10_TAB static const double
#define O10_CTAB const double
#include "ops10b.cl"
#undef T

double dgr_sf_digamma(double x) { return o10_digamma(x); }
double dgr_sf_ndtri(double p) { return o10_ndtri(p); }
double dgr_sf_erfinv(double x) { return o10_ndtri(0.5 * x + 0.5) * M_SQRT1_2; }
double dgr_sf_i0e(double x) { return o10_i0e(x); }
double dgr_sf_i1e(double x) { return o10_i1e(x); }

double dgr_sf_zeta(double x, double q)
{
    static const double A[] = {
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0,
        -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
        1.1646782814350067249e14, -4.5979787224074726105e15,
        1.8152105401943546773e17, -7.1661652561756670113e18};
    if (x == 1)
        return INFINITY;
    if (x < 1)
        return NAN;
    if (q <= 0) {
        if (q == floor(q))
            return rint(0.5 * x) == 0.5 * x ? INFINITY : NAN;
        if (x != floor(x))
            return NAN;
    }
    double s = pow(q, -x), a = q, b = 0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i++;
        a += 1;
        b = pow(a, -x);
        s += b;
        if (fabs(b / s) < SF_MACHEP)
            return s;
    }
    if (b == 0)
        return s;
    double w = a, k = 0, t;
    s += b * w / (x - 1);
    s -= 0.5 * b;
    a = 1;
    for (i = 0; i < 12; i++) {
        a *= x + k;
        b /= w;
        t = a * b / A[i];
        s = s + t;
        if (fabs(t / s) < SF_MACHEP)
            break;
        k += 1;
        a *= x + k;
        b /= w;
        k += 1;
    }
    return s;
}

double dgr_sf_polygamma(double n, double x)
{
    if (floor(n) != n || n < 0)
        return NAN;
    if (n == 0)
        return dgr_sf_digamma(x);
    double np1 = n + 1;
    return pow(-1.0, np1) * exp(lgamma(np1)) * dgr_sf_zeta(np1, x);
}

/* a log x - x - lgamma(a), the incomplete gamma functions' prefactor's
 * log */
static double igam_logax(double a, double x)
{
    return a * log(x) - x - lgamma(a);
}

/* P(a, x) by its power series (x <= 1 or x <= a) */
static double igam_series(double a, double x)
{
    double ax = igam_logax(a, x);
    if (ax < -SF_MAXLOG)
        return 0;
    ax = exp(ax);
    double r = a, c = 1, ans = 1;
    for (int i = 0; i < 2000; i++) {
        r += 1;
        c *= x / r;
        ans += c;
        if (c <= ans * SF_MACHEP)
            break;
    }
    return ans * ax / a;
}

/* Q(a, x) by its continued fraction (x > 1 and x > a) */
static double igamc_cf(double a, double x)
{
    if (isinf(x))
        return 0;
    double ax = igam_logax(a, x);
    if (ax < -SF_MAXLOG)
        return 0;
    ax = exp(ax);
    double y = 1 - a, z = x + y + 1, c = 0;
    double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
    double ans = pkm1 / qkm1, t;
    for (int i = 0; i < 2000; i++) {
        c += 1;
        y += 1;
        z += 2;
        double yc = y * c;
        double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
        if (qk != 0) {
            double r = pk / qk;
            t = fabs((ans - r) / r);
            ans = r;
        } else {
            t = 1;
        }
        pkm2 = pkm1;
        pkm1 = pk;
        qkm2 = qkm1;
        qkm1 = qk;
        if (fabs(pk) > SF_BIG) {
            pkm2 *= DBL_EPSILON;
            pkm1 *= DBL_EPSILON;
            qkm2 *= DBL_EPSILON;
            qkm1 *= DBL_EPSILON;
        }
        if (t <= SF_MACHEP)
            break;
    }
    return ans * ax;
}

double dgr_sf_igamma(double a, double x)
{
    if (x == 0)
        return 0;
    if (x < 0 || a <= 0 || isnan(a) || isnan(x))
        return NAN;
    if (x > 1 && x > a)
        return 1 - igamc_cf(a, x);
    return igam_series(a, x);
}

double dgr_sf_igammac(double a, double x)
{
    if (x < 0 || a <= 0 || isnan(a) || isnan(x))
        return NAN;
    if (x < 1 || x < a)
        return 1 - igam_series(a, x);
    return igamc_cf(a, x);
}

float dgr_sf_lgammaf(float x) { return (float)lgamma(x); }
float dgr_sf_digammaf(float x) { return (float)dgr_sf_digamma(x); }
float dgr_sf_ndtrif(float x) { return (float)dgr_sf_ndtri(x); }
float dgr_sf_erfinvf(float x) { return (float)dgr_sf_erfinv(x); }
float dgr_sf_i0ef(float x) { return (float)dgr_sf_i0e(x); }
float dgr_sf_i1ef(float x) { return (float)dgr_sf_i1e(x); }
