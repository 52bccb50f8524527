/*
 * output.c -- tensor printing for dgrun into a dg_sbuf: NumPy-like layout
 * (numpy's default print options: precision 8, maxprec float mode, line width
 * 75, summary over 1000 elements with 3 edge items) and JSON values.
 */
#include "output.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_alloc.h"
#include "dg_fpconv.h"

/* ---- element access ------------------------------------------------------ */

static long long elem_i(const dg_tensor *t, int64_t i)
{
    if (t->dtype == DG_I64)
        return (long long)((const int64_t *)t->data)[i];
    if (t->dtype == DG_I32)
        return ((const int32_t *)t->data)[i];
    return (long long)dg_tensor_elem(t, i);
}

static int is_float(dg_dtype d) { return d == DG_F32 || d == DG_F64; }

/* ---- shortest decimal digits -------------------------------------------- */

typedef struct digits {
    char d[24]; /* significant digits, no trailing zeros (at least one) */
    int exp;    /* decimal exponent of the first digit */
    int neg;
} digits;

/* Shortest digits identifying v in its dtype (dg_fp_shortest: the digits of
 * the first "%.*e" that reads back, without retrying through libc). */
static void shortest(double v, int single, digits *out)
{
    dg_fpdec s;
    dg_fp_shortest(v, single, &s);
    out->neg = signbit(v) != 0;
    out->exp = s.e;
    uint64_t d = s.d;
    for (int i = s.n - 1; i >= 0; i--) {
        out->d[i] = (char)('0' + d % 10);
        d /= 10;
    }
    out->d[s.n] = 0;
}

/* cli_fmt_shortest into out[DG_FP_BUFSIZE]; returns the length. */
static size_t fmt_shortest(double v, int single, char *out)
{
    if (isnan(v) || isinf(v)) {
        const char *t = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
        size_t l = strlen(t);
        memcpy(out, t, l + 1);
        return l;
    }
    /* %.{p}g of the first p that reads back (dg_fp_shortest's p digits) */
    dg_fpdec s;
    dg_fp_shortest(v, single, &s);
    double a = fabs(v);
    if (s.e >= s.n && a >= 1.0 && a < 1e16) {
        /* %g switches to an exponent once p digits do not reach the decimal
         * point ("5e+01"); write such mid-sized values positionally: they
         * are integers (their rounding interval holds a multiple of 10, so
         * it is at least 1 wide), written exactly as %.0f would. */
        char tmp[24];
        int k = 0;
        for (uint64_t i = (uint64_t)a; i; i /= 10)
            tmp[k++] = (char)('0' + i % 10);
        size_t l = 0;
        if (v < 0)
            out[l++] = '-';
        while (k)
            out[l++] = tmp[--k];
        out[l] = 0;
        return l;
    }
    return dg_fp_write_g(out, signbit(v) != 0, &s, s.n);
}

void cli_fmt_shortest(double v, int single, char *out, size_t n)
{
    char buf[DG_FP_BUFSIZE];
    size_t l = fmt_shortest(v, single, buf);
    if (n == 0)
        return;
    if (l >= n)
        l = n - 1;
    memcpy(out, buf, l);
    out[l] = 0;
}

/* Positional form split into integer and fraction parts; maxfrac < 0 means
 * no cap.  Integer part carries the sign. */
static void positional(double v, int single, int maxfrac, char *ip, char *fp)
{
    digits g;
    shortest(v, single, &g);
    int nd = (int)strlen(g.d);
    char *o = ip;
    if (g.neg)
        *o++ = '-';
    if (g.exp >= 0) {
        for (int i = 0; i <= g.exp; i++)
            *o++ = i < nd ? g.d[i] : '0';
        *o = 0;
        int f = 0;
        for (int i = g.exp + 1; i < nd; i++)
            fp[f++] = g.d[i];
        fp[f] = 0;
    } else {
        *o++ = '0';
        *o = 0;
        int f = 0;
        for (int i = 0; i < -g.exp - 1 && f < 300; i++)
            fp[f++] = '0';
        for (int i = 0; i < nd && f < 330; i++)
            fp[f++] = g.d[i];
        fp[f] = 0;
    }
    if (g.d[0] == '0' && nd == 1) {
        snprintf(ip, 4, "%s0", g.neg ? "-" : "");
        fp[0] = 0;
    }
    if (maxfrac >= 0 && (int)strlen(fp) > maxfrac) {
        char buf[400];
        snprintf(buf, sizeof buf, "%.*f", maxfrac, v);
        char *dot = strchr(buf, '.');
        if (dot) {
            *dot = 0;
            size_t fl = strlen(dot + 1);
            while (fl && dot[fl] == '0')
                dot[fl--] = 0;
            strcpy(fp, dot + 1);
        } else {
            fp[0] = 0;
        }
        strcpy(ip, buf);
    }
}

/* Scientific: mantissa fraction digits (capped at maxfrac) and exponent. */
static void scientific(double v, int single, int maxfrac, char *ip, char *fp,
                       int *exp)
{
    digits g;
    shortest(v, single, &g);
    int nd = (int)strlen(g.d);
    if (nd - 1 > maxfrac) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.*e", maxfrac, v);
        char *e = strchr(buf, 'e');
        *exp = atoi(e + 1);
        *e = 0;
        char *dot = strchr(buf, '.');
        *dot = 0;
        size_t fl = strlen(dot + 1);
        while (fl && dot[fl] == '0')
            dot[fl--] = 0;
        strcpy(ip, buf);
        strcpy(fp, dot + 1);
        return;
    }
    snprintf(ip, 4, "%s%c", g.neg ? "-" : "", g.d[0]);
    strcpy(fp, g.d + 1);
    *exp = g.exp;
}

static void fmt_exp(char *out, size_t n, int exp, int width)
{
    snprintf(out, n, "e%c%0*d", exp < 0 ? '-' : '+', width, exp < 0 ? -exp : exp);
}

/* ---- scalars ------------------------------------------------------------- */

static void scalar_text(dg_sbuf *b, const dg_tensor *t)
{
    if (t->dtype == DG_BOOL) {
        dg_sbuf_add(b, dg_tensor_elem(t, 0) != 0.0 ? "True" : "False");
        return;
    }
    if (!is_float(t->dtype)) {
        dg_sbuf_addf(b, "%lld", elem_i(t, 0));
        return;
    }
    double v = dg_tensor_elem(t, 0);
    int single = t->dtype == DG_F32;
    char ip[400], fp[400];
    if (isnan(v) || isinf(v)) {
        dg_sbuf_add(b, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
    } else if (v == 0.0 || (fabs(v) >= 1e-4 && fabs(v) < 1e16)) {
        positional(v, single, -1, ip, fp);
        dg_sbuf_addf(b, "%s.%s", ip, fp[0] ? fp : "0");
    } else {
        int e;
        char es[16];
        scientific(v, single, 20, ip, fp, &e);
        fmt_exp(es, sizeof es, e, 2);
        dg_sbuf_addf(b, "%s%s%s%s", ip, fp[0] ? "." : "", fp, es);
    }
}

/* ---- arrays --------------------------------------------------------------- */

typedef struct afmt {
    const dg_tensor *t;
    int summary;         /* summarise: only edge items per axis */
    /* float formatting */
    int exp_mode, pad_left, pad_right, precision, exp_size;
    int width;           /* ints and bools: common width */
} afmt;

#define EDGE 3

static int shown(const afmt *f, int64_t flat)
{
    if (!f->summary)
        return 1;
    const dg_shape *s = &f->t->shape;
    for (int ax = s->rank - 1; ax >= 0; ax--) {
        int64_t d = s->dims[ax], i = flat % d;
        flat /= d;
        if (d > 2 * EDGE && i >= EDGE && i < d - EDGE)
            return 0;
    }
    return 1;
}

static void float_setup(afmt *f, int64_t n)
{
    const dg_tensor *t = f->t;
    int single = t->dtype == DG_F32;
    double mx = 0, mn = INFINITY;
    int any_finite = 0, any_nonfinite = 0, neg_inf = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!shown(f, i))
            continue;
        double v = dg_tensor_elem(t, i);
        if (!isfinite(v)) {
            any_nonfinite = 1;
            neg_inf |= isinf(v) && v < 0;
            continue;
        }
        any_finite = 1;
        double a = fabs(v);
        if (a != 0.0) {
            mx = a > mx ? a : mx;
            mn = a < mn ? a : mn;
        }
    }
    f->exp_mode = mx != 0 && (mx >= 1e8 || mn < 1e-4 || mx / mn > 1e3);
    f->pad_left = f->pad_right = 0;
    f->precision = 0;
    f->exp_size = 2;
    char ip[400], fp[400];
    if (any_finite) {
        for (int64_t i = 0; i < n; i++) {
            if (!shown(f, i))
                continue;
            double v = dg_tensor_elem(t, i);
            if (!isfinite(v))
                continue;
            int e = 0;
            if (f->exp_mode)
                scientific(v, single, 8, ip, fp, &e);
            else
                positional(v, single, 8, ip, fp);
            int il = (int)strlen(ip), fl = (int)strlen(fp);
            f->pad_left = il > f->pad_left ? il : f->pad_left;
            f->precision = fl > f->precision ? fl : f->precision;
            if (f->exp_mode && (e >= 100 || e <= -100))
                f->exp_size = 3;
        }
        f->pad_right = f->exp_mode ? f->exp_size + 2 + f->precision : f->precision;
    }
    if (any_nonfinite) {
        int offset = f->pad_right + 1;
        int inflen = 3 + neg_inf;
        if (3 - offset > f->pad_left)
            f->pad_left = 3 - offset;
        if (inflen - offset > f->pad_left)
            f->pad_left = inflen - offset;
    }
}

/* out = spaces + ip (right-aligned in pad_left) + "." + fp + suffix, then
 * spaces up to pad_right fraction characters. */
static void join(char *out, size_t n, int pad_left, const char *ip,
                 const char *fp, const char *suffix, int pad_right)
{
    size_t k = 0, il = strlen(ip), fl = strlen(fp), sl = strlen(suffix);
    for (int i = (int)il; i < pad_left && k + 1 < n; i++)
        out[k++] = ' ';
    for (size_t i = 0; i < il && k + 1 < n; i++)
        out[k++] = ip[i];
    if (k + 1 < n)
        out[k++] = '.';
    for (size_t i = 0; i < fl && k + 1 < n; i++)
        out[k++] = fp[i];
    for (size_t i = 0; i < sl && k + 1 < n; i++)
        out[k++] = suffix[i];
    for (int i = (int)fl; i < pad_right && k + 1 < n; i++)
        out[k++] = ' ';
    out[k] = 0;
}

static void format_elem(const afmt *f, int64_t i, char *out, size_t n)
{
    const dg_tensor *t = f->t;
    if (t->dtype == DG_BOOL) {
        snprintf(out, n, "%*s", f->width, dg_tensor_elem(t, i) != 0.0 ? "True" : "False");
        return;
    }
    if (!is_float(t->dtype)) {
        snprintf(out, n, "%*lld", f->width, elem_i(t, i));
        return;
    }
    double v = dg_tensor_elem(t, i);
    int single = t->dtype == DG_F32;
    if (!isfinite(v)) {
        const char *r = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
        snprintf(out, n, "%*s", f->pad_left + f->pad_right + 1, r);
        return;
    }
    char ip[400], fp[400];
    if (f->exp_mode) {
        int e;
        char es[16];
        /* numpy fills the common precision with the value's own digits */
        char buf[64];
        snprintf(buf, sizeof buf, "%.*e", f->precision, v);
        char *ep = strchr(buf, 'e');
        e = atoi(ep + 1);
        *ep = 0;
        char *dot = strchr(buf, '.');
        if (dot)
            *dot = 0;
        snprintf(ip, sizeof ip, "%s", buf);
        snprintf(fp, sizeof fp, "%s", dot ? dot + 1 : "");
        fmt_exp(es, sizeof es, e, f->exp_size);
        join(out, n, f->pad_left, ip, fp, es, 0);
    } else {
        positional(v, single, 8, ip, fp);
        join(out, n, f->pad_left, ip, fp, "", f->pad_right);
    }
}

/* One word onto the current line, wrapping like numpy's _extendLine. */
static void extend_line(dg_sbuf *s, dg_sbuf *line, const char *word,
                        int width, const char *indent)
{
    int needs_wrap = (int)(line->len + strlen(word)) > width;
    if ((int)line->len <= (int)strlen(indent))
        needs_wrap = 0;
    if (needs_wrap) {
        size_t l = line->len;
        while (l && line->s[l - 1] == ' ')
            l--;
        dg_sbuf_addn(s, line->s, l);
        dg_sbuf_add(s, "\n");
        line->len = 0;
        if (line->s)
            line->s[0] = 0;
        dg_sbuf_add(line, indent);
    }
    dg_sbuf_add(line, word);
}

/* Render the sub-array starting at flat offset `base` along axis `axis`. */
static void recurse(const afmt *f, dg_sbuf *out, int axis, int64_t base,
                    const char *indent, int width)
{
    const dg_shape *sh = &f->t->shape;
    int rank = sh->rank;
    int64_t d = sh->dims[axis];
    int64_t stride = 1;
    for (int k = axis + 1; k < rank; k++)
        stride *= sh->dims[k];
    int summ = f->summary && d > 2 * EDGE;
    int64_t lead = summ ? EDGE : d;
    size_t il = strlen(indent);
    char *next = dg_malloc(il + 2);
    if (!next) {
        out->oom = 1;
        return;
    }
    memcpy(next, indent, il);
    next[il] = ' ';
    next[il + 1] = 0;
    dg_sbuf s;
    dg_sbuf_init(&s);
    if (rank - axis == 1) {
        dg_sbuf line;
        dg_sbuf_init(&line);
        dg_sbuf_add(&line, indent);
        int ew = width - 1;
        char word[512];
        for (int64_t i = 0; i < d; i++) {
            if (summ && i == lead) {
                extend_line(&s, &line, "...", ew, indent);
                dg_sbuf_add(&line, " ");
                i = d - EDGE - 1;
                continue;
            }
            format_elem(f, base + i * stride, word, sizeof word);
            extend_line(&s, &line, word, ew, indent);
            if (i != d - 1)
                dg_sbuf_add(&line, " ");
        }
        if (line.s)
            dg_sbuf_add(&s, line.s);
        if (line.oom)
            s.oom = 1;
        dg_sbuf_free(&line);
    } else {
        char sep[16] = "";
        for (int k = 0; k < rank - axis - 1 && k < 15; k++)
            sep[k] = '\n';
        for (int64_t i = 0; i < d; i++) {
            if (summ && i == lead) {
                dg_sbuf_add(&s, indent);
                dg_sbuf_add(&s, "...");
                dg_sbuf_add(&s, sep);
                i = d - EDGE - 1;
                continue;
            }
            dg_sbuf_add(&s, indent);
            recurse(f, &s, axis + 1, base + i * stride, next, width - 1);
            if (i != d - 1)
                dg_sbuf_add(&s, sep);
        }
    }
    dg_sbuf_add(out, "[");
    if (s.s && s.len >= il)
        dg_sbuf_add(out, s.s + il);
    dg_sbuf_add(out, "]");
    if (s.oom)
        out->oom = 1;
    dg_sbuf_free(&s);
    dg_free(next);
}

void cli_tensor_text(dg_sbuf *b, const dg_tensor *t)
{
    if (!t) { /* a fetched op without outputs (NoOp): TF's sess.run gives None */
        dg_sbuf_add(b, "None");
        return;
    }
    if (t->shape.rank == 0) {
        scalar_text(b, t);
        return;
    }
    int64_t n = dg_shape_numel(&t->shape);
    if (n <= 0) {
        dg_sbuf_add(b, "[]");
        return;
    }
    afmt f;
    memset(&f, 0, sizeof f);
    f.t = t;
    f.summary = n > 1000;
    if (is_float(t->dtype)) {
        float_setup(&f, n);
    } else if (t->dtype == DG_BOOL) {
        f.width = 5;
    } else {
        char tmp[32];
        for (int64_t i = 0; i < n; i++) {
            if (!shown(&f, i))
                continue;
            int w = snprintf(tmp, sizeof tmp, "%lld", elem_i(t, i));
            f.width = w > f.width ? w : f.width;
        }
    }
    recurse(&f, b, 0, 0, " ", 75);
}

/* ---- JSON ------------------------------------------------------------------ */

/* An integer as "%lld" writes it, without printf. */
static void json_int(dg_sbuf *b, long long v)
{
    char tmp[24];
    int k = sizeof tmp;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--k] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--k] = '-';
    dg_sbuf_addn(b, tmp + k, sizeof tmp - (size_t)k);
}

/* A finite float as its shortest text, integral values with ".0". */
static void json_float(dg_sbuf *b, double v, int single)
{
    char s[DG_FP_BUFSIZE + 2];
    size_t l = fmt_shortest(v, single, s);
    size_t k = 0;
    while (k < l && s[k] != '.' && s[k] != 'e')
        k++;
    if (k == l) {
        memcpy(s + l, ".0", 3);
        l += 2;
    }
    dg_sbuf_addn(b, s, l);
}

void cli_json_number(dg_sbuf *b, double v)
{
    if (!isfinite(v)) {
        dg_sbuf_add(b, "null");
        return;
    }
    json_float(b, v, (double)(float)v == v);
}

static void json_elem(dg_sbuf *b, const dg_tensor *t, int64_t i)
{
    switch (t->dtype) {
    case DG_F32:
    case DG_F64: {
        double v = dg_tensor_elem(t, i);
        if (!isfinite(v)) {
            dg_sbuf_add(b, "null");
            return;
        }
        json_float(b, v, t->dtype == DG_F32);
        return;
    }
    case DG_BOOL: dg_sbuf_add(b, dg_tensor_elem(t, i) != 0.0 ? "true" : "false"); return;
    default: json_int(b, elem_i(t, i)); return;
    }
}

static void json_rec(dg_sbuf *b, const dg_tensor *t, int axis, int64_t base)
{
    int64_t d = t->shape.dims[axis], stride = 1;
    for (int k = axis + 1; k < t->shape.rank; k++)
        stride *= t->shape.dims[k];
    dg_sbuf_add(b, "[");
    for (int64_t i = 0; i < d; i++) {
        if (i)
            dg_sbuf_add(b, ", ");
        if (axis == t->shape.rank - 1)
            json_elem(b, t, base + i);
        else
            json_rec(b, t, axis + 1, base + i * stride);
    }
    dg_sbuf_add(b, "]");
}

void cli_tensor_json_value(dg_sbuf *b, const dg_tensor *t)
{
    if (!t)
        dg_sbuf_add(b, "null");
    else if (t->shape.rank == 0)
        json_elem(b, t, 0);
    else
        json_rec(b, t, 0, 0);
}

void cli_tensor_json(dg_sbuf *b, const dg_tensor *t)
{
    if (!t) {
        dg_sbuf_add(b, "null");
        return;
    }
    dg_sbuf_add(b, "{\"dtype\": ");
    dg_sbuf_add_json_str(b, dg_dtype_name(t->dtype));
    dg_sbuf_add(b, ", \"shape\": [");
    for (int k = 0; k < t->shape.rank; k++)
        dg_sbuf_addf(b, "%s%lld", k ? ", " : "", (long long)t->shape.dims[k]);
    dg_sbuf_add(b, "], \"value\": ");
    cli_tensor_json_value(b, t);
    dg_sbuf_add(b, "}");
}
