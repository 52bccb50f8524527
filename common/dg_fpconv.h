/*
 * dg_fpconv.h -- float32/float64 values to decimal text and back, at
 * tens of nanoseconds a number: the digits printf's "retry until strtof
 * reads it back" loops produce, computed directly (Schubfach, with exact
 * big-integer arithmetic for the rare cases it does not decide), and a
 * strtod/strtof replacement (Eisel-Lemire, libc for the rare hard cases).
 * Text is byte-identical to what glibc's printf writes for the same
 * request; values are identical to glibc's strtod/strtof ("C" locale).
 * docs/decisions.md ("Number text") says why our own code.
 */
#ifndef DG_FPCONV_H
#define DG_FPCONV_H

#include <stddef.h>
#include <stdint.h>

/* A decimal: the n significant digits d (n in 1..17, leading digit not 0
 * unless the value is zero: d = 0, n = 1, e = 0) and the decimal exponent e
 * of the first digit, value = d * 10^(e - n + 1).  No sign. */
typedef struct dg_fpdec {
    uint64_t d;
    int n;
    int e;
} dg_fpdec;

/* Room for any text the writers below produce, NUL included. */
#define DG_FP_BUFSIZE 40

/* The shortest digits of finite |v| as printf round-trip retries find them:
 * the smallest p (<= 9 when `single`, else <= 17) such that |v| correctly
 * rounded to p significant digits reads back as |v| -- as a float32 when
 * `single` (v must then hold a float32 value), else as a float64.  The same
 * digits as `for p: snprintf("%.*e", p - 1, v) until strtof/strtod gives v`;
 * no trailing zeros (n == p).  This is shortest-and-nearest (Schubfach)
 * except at powers of two, whose rounding interval is lopsided: there the
 * nearest p-digit number can miss it while a farther one hits it, and the
 * retry loop, which only tries the nearest, goes on to p + 1. */
void dg_fp_shortest(double v, int single, dg_fpdec *out);

/* Finite |v| correctly rounded to p significant digits (1 <= p <= 17), ties
 * to even, as printf's %.{p-1}e does in the default rounding mode; n == p
 * (trailing zeros kept, d = 0 for zero). */
void dg_fp_round(double v, int p, dg_fpdec *out);

/* Whether the decimal `dec` reads back (round to nearest, ties to even) as
 * finite |v|: as a float32 when `single` (v a float32 value), else a
 * float64.  Exact. */
int dg_fp_reads_back(double v, int single, const dg_fpdec *dec);

/* Write `dec` (a value already rounded to at most p significant digits),
 * negative when `neg`, as printf's %.{p}g writes it: positional when
 * -4 <= e < p, else d.ddde+XX; trailing zeros and a bare '.' dropped.
 * `out` holds DG_FP_BUFSIZE bytes; returns the length. */
size_t dg_fp_write_g(char *out, int neg, const dg_fpdec *dec, int p);

/* printf("%.{p}g", v) for 1 <= p <= 17, any v ("nan", "-nan", "inf",
 * "-inf" as glibc spells them).  Returns the length. */
size_t dg_fp_format_g(char *out, double v, int p);

/* The text of the loop `for p = 1..9 (17): snprintf("%.*g", p, v) until it
 * reads back as v` (float32 when `single`): %.{p}g of dg_fp_shortest's p
 * digits; non-finite values as dg_fp_format_g.  Returns the length. */
size_t dg_fp_format_shortest(char *out, double v, int single);

/* printf("%.{p1}g", v) when that reads back as v (a float32 value when
 * `single`), else printf("%.{p2}g", v) -- TensorFlow's way of printing a
 * float (6 then 9 digits; 15 then 17 for float64).  p1 <= p2 <= 17.
 * Returns the length. */
size_t dg_fp_format_g_widen(char *out, double v, int single, int p1, int p2);

/* strtod(s, end) / strtof(s, end): the same value, end and errno, in the
 * "C" locale.  Plain decimals ([+-]digits[.digits][e[+-]digits], up to 19
 * significant digits, normal results) take the fast path; anything else
 * (spaces, inf, nan, hex, long mantissas, overflow, subnormals, and the
 * rare products too close to a rounding boundary to decide) goes to libc. */
double dg_strtod(const char *s, char **end);
float dg_strtof(const char *s, char **end);

#endif
