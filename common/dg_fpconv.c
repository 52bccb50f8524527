/*
 * dg_fpconv.c -- binary floating point to decimal text and back without
 * printf/strtod retries (dg_fpconv.h):
 *
 *  - shortest digits: Schubfach (R. Giulietti, "The Schubfach way to render
 *    doubles", 2020): three products with a 64-bit (float32) or 128-bit
 *    (float64) power of ten, rounded to odd, decide the shortest decimal in
 *    the rounding interval and the nearest one among those;
 *  - correctly rounded p-digit decimals and the exact "does this decimal
 *    read back as v" test: big-integer arithmetic (quotient and remainder
 *    of two integers, the classic exact method), used where Schubfach's
 *    answer is not the one printf's retry loops give (powers of two) and
 *    for fixed precision (%.9g);
 *  - text to binary: Clinger's fast path, then Eisel-Lemire (D. Lemire,
 *    "Number parsing at a gigabyte per second", 2021): one 64x128-bit
 *    product with a truncated 5^q; libc's strtod/strtof for whatever these
 *    cannot decide or do not cover.
 *
 * The tables come from tools/gen_fpconv_tables.py (dg_fpconv_tables.h).
 */
#include "dg_fpconv.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dg_fpconv_tables.h"

#ifndef __SIZEOF_INT128__
#error "dg_fpconv.c needs a compiler with unsigned __int128 (GCC, clang on 64-bit targets)"
#endif
__extension__ typedef unsigned __int128 u128;

/* floor(log10(2^e)), floor(log10(3/4 * 2^e)), floor(log2(10^e)): exact for
 * |e| < 1200 (checked by tools/gen_fpconv_tables.py). */
static int flog10_pow2(int e) { return (e * 315653) >> 20; }
static int flog10_34_pow2(int e) { return (e * 315653 - 131237) >> 20; }
static int flog2_pow10(int e) { return (e * 1741647) >> 19; }

static const uint64_t pow10_u64[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
    1000000000u, 10000000000u, 100000000000u, 1000000000000u,
    10000000000000u, 100000000000000u, 1000000000000000u,
    10000000000000000u, 100000000000000000u, 1000000000000000000u,
    10000000000000000000u};

static int ndigits(uint64_t d)
{
    int n = 1;
    while (n < 20 && d >= pow10_u64[n])
        n++;
    return n;
}

/* d * 10^k (d > 0) as a dg_fpdec without trailing zeros. */
static void make_dec(uint64_t d, int k, dg_fpdec *out)
{
    while (d % 10 == 0) {
        d /= 10;
        k++;
    }
    out->d = d;
    out->n = ndigits(d);
    out->e = k + out->n - 1;
}

static void strip_zeros(dg_fpdec *x)
{
    if (x->d == 0) {
        x->n = 1;
        x->e = 0;
        return;
    }
    while (x->d % 10 == 0) {
        x->d /= 10;
        x->n--;
    }
}

/* ---- binary decomposition ------------------------------------------------ */

/* |v| = c * 2^q with the rounding interval's shape: `lopsided` when c is a
 * power of two above the smallest normal (the gap below is half the gap
 * above), `normal` for normal numbers. */
typedef struct fpbin {
    uint64_t c;
    int q;
    int lopsided, normal;
} fpbin;

static void decompose(double v, int single, fpbin *b)
{
    if (single) {
        float f = (float)fabs(v);
        uint32_t u;
        memcpy(&u, &f, 4);
        uint32_t frac = u & 0x7FFFFFu;
        int be = (int)(u >> 23);
        b->c = be ? (frac | 0x800000u) : frac;
        b->q = be ? be - 150 : -149;
        b->lopsided = frac == 0 && be > 1;
        b->normal = be != 0;
    } else {
        double a = fabs(v);
        uint64_t u;
        memcpy(&u, &a, 8);
        uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
        int be = (int)(u >> 52);
        b->c = be ? (frac | (UINT64_C(1) << 52)) : frac;
        b->q = be ? be - 1075 : -1074;
        b->lopsided = frac == 0 && be > 1;
        b->normal = be != 0;
    }
}

/* ---- Schubfach ------------------------------------------------------------ */

/* Round to odd of g * cp / 2^64 (float32) and g * cp / 2^128 (float64):
 * the floor, with the lowest bit set when anything was cut off. */
static uint32_t rto32(uint64_t g, uint32_t cp)
{
    u128 p = (u128)g * cp;
    uint32_t y1 = (uint32_t)(p >> 64), y0 = (uint32_t)(p >> 32);
    return y1 | (y0 > 1);
}

static uint64_t rto64(const uint64_t g[2], uint64_t cp)
{
    u128 x = (u128)g[1] * cp;
    u128 y = (u128)g[0] * cp + (x >> 64);
    uint64_t y1 = (uint64_t)(y >> 64), y0 = (uint64_t)y;
    return y1 | (y0 > 1);
}

/* The shortest decimal s * 10^k in the rounding interval of c * 2^q (c > 0),
 * the nearest to it among those (ties to even s).  Schubfach's core, with
 * one set of integer widths per format. */
static void schubfach32(const fpbin *b, uint64_t *digits, int *k10)
{
    uint32_t c = (uint32_t)b->c;
    int q = b->q;
    int even = (c & 1) == 0;
    uint32_t cbl = 4 * c - 2 + (uint32_t)b->lopsided, cb = 4 * c, cbr = 4 * c + 2;
    int k = b->lopsided ? flog10_34_pow2(q) : flog10_pow2(q);
    int h = q + flog2_pow10(-k) + 1; /* 1..4 */
    uint64_t g = dg_fp_g32[-k - DG_FP_G32_MIN];
    uint32_t vbl = rto32(g, cbl << h), vb = rto32(g, cb << h),
             vbr = rto32(g, cbr << h);
    uint32_t lower = vbl + !even, upper = vbr - !even;
    uint32_t s = vb / 4;
    if (s >= 10) {
        uint32_t sp = s / 10;
        int up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
        if (up_in != wp_in) {
            *digits = sp + (uint32_t)wp_in;
            *k10 = k + 1;
            return;
        }
    }
    int u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
    if (u_in != w_in) {
        *digits = s + (uint32_t)w_in;
        *k10 = k;
        return;
    }
    uint32_t mid = 4 * s + 2;
    int round_up = vb > mid || (vb == mid && (s & 1) != 0);
    *digits = s + (uint32_t)round_up;
    *k10 = k;
}

static void schubfach64(const fpbin *b, uint64_t *digits, int *k10)
{
    uint64_t c = b->c;
    int q = b->q;
    int even = (c & 1) == 0;
    uint64_t cbl = 4 * c - 2 + (uint64_t)b->lopsided, cb = 4 * c, cbr = 4 * c + 2;
    int k = b->lopsided ? flog10_34_pow2(q) : flog10_pow2(q);
    int h = q + flog2_pow10(-k) + 1; /* 1..4 */
    const uint64_t *g = dg_fp_g64[-k - DG_FP_G64_MIN];
    uint64_t vbl = rto64(g, cbl << h), vb = rto64(g, cb << h),
             vbr = rto64(g, cbr << h);
    uint64_t lower = vbl + !even, upper = vbr - !even;
    uint64_t s = vb / 4;
    if (s >= 10) {
        uint64_t sp = s / 10;
        int up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
        if (up_in != wp_in) {
            *digits = sp + (uint64_t)wp_in;
            *k10 = k + 1;
            return;
        }
    }
    int u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
    if (u_in != w_in) {
        *digits = s + (uint64_t)w_in;
        *k10 = k;
        return;
    }
    uint64_t mid = 4 * s + 2;
    int round_up = vb > mid || (vb == mid && (s & 1) != 0);
    *digits = s + (uint64_t)round_up;
    *k10 = k;
}

/* ---- exact arithmetic ------------------------------------------------------
 * Non-negative integers in 32-bit limbs, least significant first.  The
 * largest numbers here are about 1200 bits (a float64 near 2^-1074 scaled
 * by 10^340); BN_LIMBS leaves room. */

#define BN_LIMBS 64

typedef struct bn {
    int n; /* limbs in use; w[n-1] != 0, n == 0 for zero */
    uint32_t w[BN_LIMBS];
} bn;

static void bn_set(bn *a, uint64_t v)
{
    a->n = 0;
    while (v) {
        a->w[a->n++] = (uint32_t)v;
        v >>= 32;
    }
}

static void bn_mul_u32(bn *a, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->w[i] * m + carry;
        a->w[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && a->n < BN_LIMBS)
        a->w[a->n++] = (uint32_t)carry;
}

static void bn_mul_pow5(bn *a, int k)
{
    static const uint32_t p5[14] = {1u, 5u, 25u, 125u, 625u, 3125u, 15625u,
                                    78125u, 390625u, 1953125u, 9765625u,
                                    48828125u, 244140625u, 1220703125u};
    for (; k >= 13; k -= 13)
        bn_mul_u32(a, p5[13]);
    if (k > 0)
        bn_mul_u32(a, p5[k]);
}

static void bn_shl(bn *a, int s)
{
    if (a->n == 0 || s <= 0)
        return;
    int ls = s / 32, bs = s % 32;
    int n = a->n + ls + 1;
    if (n > BN_LIMBS)
        n = BN_LIMBS;
    for (int i = n - 1; i >= 0; i--) {
        int j = i - ls;
        uint64_t hi = j >= 0 && j < a->n ? a->w[j] : 0;
        uint64_t lo = j - 1 >= 0 && j - 1 < a->n ? a->w[j - 1] : 0;
        a->w[i] = bs ? (uint32_t)((hi << bs) | (lo >> (32 - bs))) : (uint32_t)hi;
    }
    a->n = n;
    while (a->n && a->w[a->n - 1] == 0)
        a->n--;
}

static int bn_cmp(const bn *a, const bn *b)
{
    if (a->n != b->n)
        return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->w[i] != b->w[i])
            return a->w[i] < b->w[i] ? -1 : 1;
    return 0;
}

/* a -= b; requires a >= b. */
static void bn_sub(bn *a, const bn *b)
{
    int64_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        int64_t t = (int64_t)a->w[i] - (i < b->n ? b->w[i] : 0) - borrow;
        borrow = t < 0;
        a->w[i] = (uint32_t)(t + (borrow << 32));
    }
    while (a->n && a->w[a->n - 1] == 0)
        a->n--;
}

/* out = a * m */
static void bn_mul_u64(const bn *a, uint64_t m, bn *out)
{
    uint32_t m0 = (uint32_t)m, m1 = (uint32_t)(m >> 32);
    int n = a->n + 2 < BN_LIMBS ? a->n + 2 : BN_LIMBS;
    memset(out->w, 0, sizeof(uint32_t) * (size_t)n);
    for (int i = 0; i < a->n; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 2; j++) {
            int k = i + j;
            if (k >= n)
                break;
            uint64_t t = (uint64_t)a->w[i] * (j ? m1 : m0) + out->w[k] + carry;
            out->w[k] = (uint32_t)t;
            carry = t >> 32;
        }
        for (int k = i + 2; carry && k < n; k++) {
            uint64_t t = (uint64_t)out->w[k] + carry;
            out->w[k] = (uint32_t)t;
            carry = t >> 32;
        }
    }
    out->n = n;
    while (out->n && out->w[out->n - 1] == 0)
        out->n--;
}

static int bn_bitlen(const bn *a)
{
    if (a->n == 0)
        return 0;
    return 32 * (a->n - 1) + 32 - __builtin_clz(a->w[a->n - 1]);
}

/* floor(a / 2^s) mod 2^128 */
static u128 bn_bits(const bn *a, int s)
{
    int ls = s / 32, bs = s % 32;
    u128 r = 0;
    for (int j = 3; j >= 0; j--) {
        int i = ls + j;
        r = (r << 32) | (i < a->n ? a->w[i] : 0);
    }
    if (bs) {
        int i = ls + 4;
        u128 top = i < a->n ? a->w[i] : 0;
        r = (r >> bs) | (top << (128 - bs));
    }
    return r;
}

/* q = floor(n / d), n = n mod d, for a quotient below 2^64. */
static uint64_t bn_divmod(bn *n, const bn *d)
{
    int db = bn_bitlen(d);
    if (db <= 64) {
        u128 nn = bn_bits(n, 0);
        uint64_t dd = (uint64_t)bn_bits(d, 0);
        uint64_t q = (uint64_t)(nn / dd);
        u128 r = nn % dd;
        bn_set(n, (uint64_t)r);
        return q;
    }
    int s = db - 64;
    uint64_t dt = (uint64_t)bn_bits(d, s);
    u128 nt = bn_bits(n, s);
    uint64_t q = (uint64_t)(nt / ((u128)dt + 1)); /* <= the quotient, by at most 2 */
    bn t;
    bn_mul_u64(d, q, &t);
    bn_sub(n, &t);
    while (bn_cmp(n, d) >= 0) {
        bn_sub(n, d);
        q++;
    }
    return q;
}

/* Compare d * 10^x with m * 2^b2. */
static int cmp_dec_bin(uint64_t d, int x, uint64_t m, int b2)
{
    bn a, b;
    bn_set(&a, d);
    bn_set(&b, m);
    if (x >= 0)
        bn_mul_pow5(&a, x);
    else
        bn_mul_pow5(&b, -x);
    int a2 = x, lo = a2 < b2 ? a2 : b2;
    bn_shl(&a, a2 - lo);
    bn_shl(&b, b2 - lo);
    return bn_cmp(&a, &b);
}

/* ---- correctly rounded digits --------------------------------------------- */

static const uint64_t pow5_u64[28] = {
    1u, 5u, 25u, 125u, 625u, 3125u, 15625u, 78125u, 390625u, 1953125u,
    9765625u, 48828125u, 244140625u, 1220703125u, 6103515625u,
    30517578125u, 152587890625u, 762939453125u, 3814697265625u,
    19073486328125u, 95367431640625u, 476837158203125u,
    2384185791015625u, 11920928955078125u, 59604644775390625u,
    298023223876953125u, 1490116119384765625u, 7450580596923828125u};

/* q (p digits, or 10^p after rounding up) * 10^(k-p+1) into out. */
static void finish_round(uint64_t q, int p, int k, dg_fpdec *out)
{
    if (q == pow10_u64[p]) {
        q = pow10_u64[p - 1];
        k++;
    }
    out->d = q;
    out->n = p;
    out->e = k;
}

void dg_fp_round(double v, int p, dg_fpdec *out)
{
    v = fabs(v);
    if (v == 0.0 || !isfinite(v)) {
        out->d = 0;
        out->n = 1;
        out->e = 0;
        return;
    }
    if (p < 1)
        p = 1;
    if (p > 17)
        p = 17;
    fpbin b;
    decompose(v, 0, &b);
    int bl = 64 - __builtin_clzll(b.c) + b.q; /* v in [2^(bl-1), 2^bl) */
    int k = flog10_pow2(bl - 1);              /* floor(log10 v) is k or k+1 */
    for (;;) {
        /* q = floor(v / 10^(k-p+1)) as N / D */
        int s10 = p - 1 - k;
        int t2 = b.q + s10;
        if (s10 >= 0 && s10 <= 27 && t2 < 0 && t2 > -128) {
            /* the common case in 128 bits: c * 5^s10 / 2^-t2 */
            u128 n = (u128)b.c * pow5_u64[s10];
            int m = -t2;
            u128 q = n >> m, rem = n - (q << m), half = (u128)1 << (m - 1);
            if (q >= pow10_u64[p]) {
                k++;
                continue;
            }
            uint64_t q64 = (uint64_t)q;
            if (rem > half || (rem == half && (q64 & 1)))
                q64++;
            finish_round(q64, p, k, out);
            return;
        }
        bn n, d;
        bn_set(&n, b.c);
        bn_set(&d, 1);
        if (s10 >= 0)
            bn_mul_pow5(&n, s10);
        else
            bn_mul_pow5(&d, -s10);
        if (t2 >= 0)
            bn_shl(&n, t2);
        else
            bn_shl(&d, -t2);
        uint64_t q = bn_divmod(&n, &d);
        if (q >= pow10_u64[p]) {
            k++; /* v >= 10^(k+1) */
            continue;
        }
        /* n is the remainder: round half to even */
        bn_shl(&n, 1);
        int c = bn_cmp(&n, &d);
        if (c > 0 || (c == 0 && (q & 1)))
            q++;
        finish_round(q, p, k, out);
        return;
    }
}

int dg_fp_reads_back(double v, int single, const dg_fpdec *dec)
{
    v = fabs(v);
    if (dec->d == 0)
        return v == 0.0;
    if (v == 0.0 || !isfinite(v))
        return 0;
    fpbin b;
    decompose(v, single, &b);
    int x = dec->e - dec->n + 1;
    /* the interval's ends, halfway to the neighbours: (4c - 1 or 2) * 2^(q-2)
     * below, (4c + 2) * 2^(q-2) above; a tie goes to the even c */
    int lo = cmp_dec_bin(dec->d, x, 4 * b.c - (b.lopsided ? 1 : 2), b.q - 2);
    int hi = cmp_dec_bin(dec->d, x, 4 * b.c + 2, b.q - 2);
    if ((b.c & 1) == 0)
        return lo >= 0 && hi <= 0;
    return lo > 0 && hi < 0;
}

/* ---- shortest ---------------------------------------------------------------- */

void dg_fp_shortest(double v, int single, dg_fpdec *out)
{
    v = fabs(v);
    if (v == 0.0 || !isfinite(v)) {
        out->d = 0;
        out->n = 1;
        out->e = 0;
        return;
    }
    fpbin b;
    decompose(v, single, &b);
    uint64_t s;
    int k;
    if (single)
        schubfach32(&b, &s, &k);
    else
        schubfach64(&b, &s, &k);
    make_dec(s, k, out);
    if (!b.lopsided)
        return;
    /* A power of two: printf's loop takes the nearest p-digit number for
     * each p and stops at the first that reads back. */
    int maxp = single ? 9 : 17;
    for (int p = out->n; p <= maxp; p++) {
        dg_fpdec r;
        dg_fp_round(v, p, &r);
        if (p == maxp || dg_fp_reads_back(v, single, &r)) {
            strip_zeros(&r);
            *out = r;
            return;
        }
    }
}

/* ---- text ---------------------------------------------------------------------- */

static size_t nonfinite(char *out, double v)
{
    const char *t = isnan(v) ? (signbit(v) ? "-nan" : "nan") : (v < 0 ? "-inf" : "inf");
    size_t n = strlen(t);
    memcpy(out, t, n + 1);
    return n;
}

size_t dg_fp_write_g(char *out, int neg, const dg_fpdec *dec, int p)
{
    uint64_t d = dec->d;
    int nd = dec->n, e = dec->e;
    if (d == 0) {
        nd = 1;
        e = 0;
    }
    while (d && d % 10 == 0) {
        d /= 10;
        nd--;
    }
    nd = ndigits(d); /* the same, unless dec->n was wrong */
    static const char pairs[201] =
        "0001020304050607080910111213141516171819"
        "2021222324252627282930313233343536373839"
        "4041424344454647484950515253545556575859"
        "6061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    char dig[24];
    int i = nd;
    while (d >= 100) {
        unsigned r = (unsigned)(d % 100);
        d /= 100;
        i -= 2;
        dig[i] = pairs[2 * r];
        dig[i + 1] = pairs[2 * r + 1];
    }
    if (d >= 10) {
        i -= 2;
        dig[i] = pairs[2 * d];
        dig[i + 1] = pairs[2 * d + 1];
    } else {
        dig[--i] = (char)('0' + d);
    }
    if (p < 1)
        p = 1;
    char *o = out;
    if (neg)
        *o++ = '-';
    if (e < -4 || e >= p) {
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++)
                *o++ = dig[i];
        }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int a = e < 0 ? -e : e;
        if (a >= 100)
            *o++ = (char)('0' + a / 100);
        *o++ = (char)('0' + a / 10 % 10);
        *o++ = (char)('0' + a % 10);
    } else if (e >= 0) {
        for (int i = 0; i <= e; i++)
            *o++ = i < nd ? dig[i] : '0';
        if (nd > e + 1) {
            *o++ = '.';
            for (int i = e + 1; i < nd; i++)
                *o++ = dig[i];
        }
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e - 1; i++)
            *o++ = '0';
        for (int i = 0; i < nd; i++)
            *o++ = dig[i];
    }
    *o = 0;
    return (size_t)(o - out);
}

size_t dg_fp_format_g(char *out, double v, int p)
{
    if (!isfinite(v))
        return nonfinite(out, v);
    dg_fpdec r;
    dg_fp_round(v, p, &r);
    return dg_fp_write_g(out, signbit(v) != 0, &r, p);
}

size_t dg_fp_format_shortest(char *out, double v, int single)
{
    if (!isfinite(v))
        return nonfinite(out, v);
    dg_fpdec s;
    dg_fp_shortest(v, single, &s);
    return dg_fp_write_g(out, signbit(v) != 0, &s, s.n);
}

size_t dg_fp_format_g_widen(char *out, double v, int single, int p1, int p2)
{
    if (!isfinite(v))
        return nonfinite(out, v);
    int neg = signbit(v) != 0;
    dg_fpdec s, r;
    dg_fp_shortest(v, single, &s);
    if (s.n <= p1) {
        /* When the interval is narrower than the gap between p1-digit
         * numbers (a normal number off a power of two, p1 <= 6 for float32,
         * <= 15 for float64), it holds only one: the shortest digits padded,
         * which is then also the nearest p1-digit number. */
        fpbin b;
        decompose(v, single, &b);
        if (b.normal && !b.lopsided && p1 <= (single ? 6 : 15))
            return dg_fp_write_g(out, neg, &s, p1);
        dg_fp_round(v, p1, &r);
        if (dg_fp_reads_back(v, single, &r))
            return dg_fp_write_g(out, neg, &r, p1);
    }
    /* p > p1 digits are needed, so %.{p1}g does not read back */
    dg_fp_round(v, p2, &r);
    return dg_fp_write_g(out, neg, &r, p2);
}

/* ---- text to binary ------------------------------------------------------------- */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The fast path's grammar: [+-]digits[.digits][(e|E)[+-]digits] with at
 * least one digit and at most 19 significant ones: value w * 10^q.  0 when
 * s is something else (libc decides). */
static int scan_decimal(const char *s, uint64_t *w_out, int64_t *q_out,
                        int *neg, const char **end)
{
    const char *p = s;
    *neg = 0;
    if (*p == '+' || *p == '-') {
        *neg = *p == '-';
        p++;
    }
    const char *digits = p;
    uint64_t w = 0;
    unsigned dg;
    int64_t nd = 0, q = 0;
    while (*p == '0')
        p++;
    if (p == digits + 1 && (*p == 'x' || *p == 'X'))
        return 0; /* hexadecimal */
    const char *sig = p;
    while ((dg = (unsigned)(unsigned char)*p - '0') <= 9) {
        w = w * 10 + dg;
        p++;
    }
    nd = p - sig;
    int any = p > digits;
    if (*p == '.') {
        const char *frac = ++p;
        if (nd == 0)
            while (*p == '0')
                p++; /* zeros before the first significant digit */
        const char *fsig = p;
        while ((dg = (unsigned)(unsigned char)*p - '0') <= 9) {
            w = w * 10 + dg;
            p++;
        }
        nd += p - fsig;
        q = -(p - frac);
        any |= p > frac;
    }
    if (!any || nd > 19)
        return 0; /* no digits, or w overflowed: libc decides */
    if (*p == 'e' || *p == 'E') {
        const char *t = p + 1;
        int eneg = 0;
        if (*t == '+' || *t == '-') {
            eneg = *t == '-';
            t++;
        }
        if (is_digit(*t)) {
            int64_t ev = 0;
            for (; is_digit(*t); t++)
                if (ev < 1000000)
                    ev = ev * 10 + (*t - '0');
            q += eneg ? -ev : ev;
            p = t;
        }
    }
    *w_out = w;
    *q_out = q;
    *end = p;
    return 1;
}

/* Eisel-Lemire: w * 10^q (w > 0) rounded to the format with `mbits`
 * explicit mantissa bits and exponent bias `bias`, as IEEE bits; 0 when the
 * product is too close to a rounding boundary to decide, or the result is
 * not a normal number. */
static int eisel_lemire(uint64_t w, int64_t q, int mbits, int bias,
                        int tie_lo, int tie_hi, uint64_t *bits)
{
    if (q < DG_FP_P5_MIN || q > DG_FP_P5_MAX)
        return 0;
    int lz = __builtin_clzll(w);
    w <<= lz;
    const uint64_t *t = dg_fp_p5[q - DG_FP_P5_MIN];
    /* w * t, the top 128 of 192 bits; t is 5^q truncated, so the exact
     * product lies in [P, P + 2^64) in units of its lowest bit */
    u128 first = (u128)w * t[0], second = (u128)w * t[1];
    uint64_t hi = (uint64_t)(first >> 64), lo = (uint64_t)first;
    uint64_t add = (uint64_t)(second >> 64);
    lo += add;
    hi += lo < add;
    if (lo == UINT64_MAX)
        return 0; /* a carry from below could reach hi */
    int upper = (int)(hi >> 63);
    int sh = upper + 64 - mbits - 3;
    uint64_t m = hi >> sh; /* mbits + 1 mantissa bits and the rounding bit */
    int64_t be = ((217706 * q) >> 16) + 63 + upper - lz + bias;
    if ((m & 1) && (hi & ((UINT64_C(1) << sh) - 1)) == 0 && lo == 0 &&
        q >= tie_lo && q <= tie_hi)
        return 0; /* perhaps exactly halfway: ties to even need the rest */
    m = (m + 1) >> 1;
    if (m >> (mbits + 1)) {
        m >>= 1;
        be++;
    }
    if (be <= 0 || be >= 2 * bias + 1)
        return 0;
    *bits = ((uint64_t)be << mbits) | (m & ((UINT64_C(1) << mbits) - 1));
    return 1;
}

double dg_strtod(const char *s, char **end)
{
    uint64_t w;
    int64_t q;
    int neg;
    const char *e;
    if (!scan_decimal(s, &w, &q, &neg, &e))
        return strtod(s, end);
    double r;
    if (w == 0) {
        r = 0.0;
    } else if (FLT_EVAL_METHOD == 0 && q >= -22 && q <= 22 &&
               w <= (UINT64_C(1) << 53)) {
        /* Clinger: both operands exact, one rounding */
        static const double p10[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6,
            1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
            1e18, 1e19, 1e20, 1e21, 1e22};
        r = (double)w;
        r = q < 0 ? r / p10[-q] : r * p10[q];
    } else {
        uint64_t bits;
        if (!eisel_lemire(w, q, 52, 1023, -4, 23, &bits))
            return strtod(s, end);
        memcpy(&r, &bits, 8);
    }
    if (end)
        *end = (char *)(uintptr_t)e;
    return neg ? -r : r;
}

float dg_strtof(const char *s, char **end)
{
    uint64_t w;
    int64_t q;
    int neg;
    const char *e;
    if (!scan_decimal(s, &w, &q, &neg, &e))
        return strtof(s, end);
    float r;
    if (w == 0) {
        r = 0.0f;
    } else if (FLT_EVAL_METHOD == 0 && q >= -10 && q <= 10 &&
               w <= (UINT64_C(1) << 24)) {
        static const float p10[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
            1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
        r = (float)w;
        r = q < 0 ? r / p10[-q] : r * p10[q];
    } else {
        uint64_t bits;
        if (!eisel_lemire(w, q, 23, 127, -17, 10, &bits))
            return strtof(s, end);
        uint32_t b32 = (uint32_t)bits;
        memcpy(&r, &b32, 4);
    }
    if (end)
        *end = (char *)(uintptr_t)e;
    return neg ? -r : r;
}
