/*
 * feeds.c -- tensors from .npy (format 1.0-3.0, little-endian, C order) and
 * .csv files (numbers, no header; row i = element i of the first dimension),
 * converted to a Placeholder's dtype and checked against its shape; and
 * writing .npy files.  Malformed input is reported, never trusted: header
 * lengths, shapes and data sizes are all bounds-checked.
 */
#include "feeds.h"
#include "dg_alloc.h"
#include "dg_io.h"
#include "dg_util.h"
#include "dg_error.h"
#include "dg_fpconv.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Source element kinds (npy adds unsigned 8-bit). */
typedef enum src_kind { S_F32, S_F64, S_I32, S_I64, S_BOOL, S_U8, S_I8,
                        S_I16, S_U16, S_U32 } src_kind;

static dg_status read_all(const char *path, char **buf, size_t *len,
                          dg_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return dg_err(err, DG_E_GRAPH, "%s: not a regular file", path);
    FILE *f = fopen(path, "rb");
    if (!f)
        /* A feed file that is missing is bad input (exit 2), like a graph
         * that names a node that does not exist; a file that exists but
         * cannot be read is an I/O failure (exit 1). */
        return dg_err(err, errno == ENOENT || errno == ENOTDIR ? DG_E_GRAPH : DG_E_IO,
                      "%s: cannot open: %s", path, strerror(errno));
    struct stat before, after;
    int regular = fstat(fileno(f), &before) == 0 && S_ISREG(before.st_mode);
    dg_status rs = dg_read_stream(f, buf, len);
    regular = regular && fstat(fileno(f), &after) == 0;
    fclose(f);
    if (rs == DG_E_NOMEM)
        return dg_err_nomem(err, path);
    if (rs != DG_OK)
        return dg_err(err, DG_E_IO, "%s: read error", path);
    /* Another process truncating or rewriting the file while it is read
     * leaves a mix of old and new bytes, or a shorter file that may still
     * parse (a .csv cut at a row): an I/O failure, not data.  (Files like
     * /proc's report size 0 and are not compared.) */
    if (regular && (before.st_size != after.st_size ||
                    before.st_mtim.tv_sec != after.st_mtim.tv_sec ||
                    before.st_mtim.tv_nsec != after.st_mtim.tv_nsec ||
                    (before.st_size > 0 && (uint64_t)before.st_size != *len))) {
        uint64_t was = (uint64_t)before.st_size;
        dg_free(*buf);
        *buf = NULL;
        return dg_err(err, DG_E_IO, "%s: the file changed while it was read "
                      "(%llu bytes when opened, %llu read): written or "
                      "truncated by another process", path,
                      (unsigned long long)was, (unsigned long long)*len);
    }
    return DG_OK;
}

static dg_status check_shape(const char *path, const dg_shape *want,
                             const dg_shape *got, dg_error *err)
{
    if (!want)
        return DG_OK;
    int ok = want->rank == got->rank;
    for (int i = 0; ok && i < want->rank; i++)
        if (want->dims[i] >= 0 && want->dims[i] != got->dims[i])
            ok = 0;
    if (ok)
        return DG_OK;
    char a[160], b[160];
    dg_shape_format(got, a, sizeof a);
    dg_shape_format(want, b, sizeof b);
    return dg_err(err, DG_E_GRAPH, "%s: data of shape %s does not fit the "
                  "Placeholder's shape %s", path, a, b);
}

/* ---- element conversion ----------------------------------------------------- */

/* double -> integer saturating (NaN -> 0), as C leaves out-of-range
 * conversions undefined: 1e30 in a .npy or .csv fed to an int32
 * Placeholder gives INT32_MAX. */
static int64_t sat_i64(double d, int64_t lo, int64_t hi)
{
    if (d != d)
        return 0;
    if (d <= (double)lo)
        return lo;
    if (d >= -(double)lo) /* 2^31 or 2^63: hi itself is not a double */
        return hi;
    return (int64_t)d;
}

static void put(dg_tensor *t, int64_t i, double d, int64_t iv, int is_int)
{
    switch (t->dtype) {
    case DG_F32: ((float *)t->data)[i] = is_int ? (float)iv : (float)d; break;
    case DG_F64: ((double *)t->data)[i] = is_int ? (double)iv : d; break;
    case DG_I32: ((int32_t *)t->data)[i] = is_int ? (int32_t)iv : (int32_t)sat_i64(d, INT32_MIN, INT32_MAX); break;
    case DG_I64: ((int64_t *)t->data)[i] = is_int ? iv : sat_i64(d, INT64_MIN, INT64_MAX); break;
    case DG_BOOL: ((uint8_t *)t->data)[i] = is_int ? iv != 0 : d != 0; break;
    default: break;
    }
}

static void convert(dg_tensor *t, const unsigned char *src, src_kind k,
                    int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        switch (k) {
        case S_F32: { float v; memcpy(&v, src + 4 * i, 4); put(t, i, v, 0, 0); break; }
        case S_F64: { double v; memcpy(&v, src + 8 * i, 8); put(t, i, v, 0, 0); break; }
        case S_I32: { int32_t v; memcpy(&v, src + 4 * i, 4); put(t, i, 0, v, 1); break; }
        case S_I64: { int64_t v; memcpy(&v, src + 8 * i, 8); put(t, i, 0, v, 1); break; }
        case S_U32: { uint32_t v; memcpy(&v, src + 4 * i, 4); put(t, i, 0, v, 1); break; }
        case S_I16: { int16_t v; memcpy(&v, src + 2 * i, 2); put(t, i, 0, v, 1); break; }
        case S_U16: { uint16_t v; memcpy(&v, src + 2 * i, 2); put(t, i, 0, v, 1); break; }
        case S_I8: put(t, i, 0, (int8_t)src[i], 1); break;
        case S_BOOL: put(t, i, 0, src[i] != 0, 1); break;
        case S_U8: put(t, i, 0, src[i], 1); break;
        }
    }
}

/* Reorder t's data, read in Fortran (column-major) order as np.save writes
 * a transposed array, into C order.  Fails only when memory runs out. */
static dg_status from_fortran(dg_tensor *t)
{
    int64_t n = dg_shape_numel(&t->shape);
    size_t es = dg_dtype_size(t->dtype);
    unsigned char *src = dg_malloc((size_t)n * es);
    if (!src)
        return DG_E_NOMEM;
    memcpy(src, t->data, (size_t)n * es);
    int r = t->shape.rank;
    int64_t idx[DG_MAX_RANK] = {0}, stride[DG_MAX_RANK];
    int64_t st = 1;
    for (int k = 0; k < r; k++) {
        stride[k] = st;
        st *= t->shape.dims[k];
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t off = 0;
        for (int k = 0; k < r; k++)
            off += idx[k] * stride[k];
        memcpy((unsigned char *)t->data + (size_t)i * es, src + (size_t)off * es, es);
        for (int k = r - 1; k >= 0 && ++idx[k] == t->shape.dims[k]; k--)
            idx[k] = 0;
    }
    dg_free(src);
    return DG_OK;
}


/* ---- .npy ------------------------------------------------------------------- */

typedef struct hdr_parser {
    const char *p, *end;
} hdr_parser;

static void hp_ws(hdr_parser *h)
{
    while (h->p < h->end && isspace((unsigned char)*h->p))
        h->p++;
}

static int hp_eat(hdr_parser *h, char c)
{
    hp_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return 1;
    }
    return 0;
}

/* A quoted Python string into buf; 0 ok. */
static int hp_str(hdr_parser *h, char *buf, size_t n)
{
    hp_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return -1;
    char q = *h->p++;
    size_t k = 0;
    while (h->p < h->end && *h->p != q) {
        if (k + 1 >= n)
            return -1;
        buf[k++] = *h->p++;
    }
    if (h->p >= h->end)
        return -1;
    h->p++;
    buf[k] = 0;
    return 0;
}

static int hp_word(hdr_parser *h, const char *w)
{
    hp_ws(h);
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && strncmp(h->p, w, n) == 0) {
        h->p += n;
        return 1;
    }
    return 0;
}

/* A tuple of non-negative ints: (), (3,), (2, 3) */
static int hp_shape(hdr_parser *h, dg_shape *s)
{
    s->rank = 0;
    if (!hp_eat(h, '('))
        return -1;
    for (;;) {
        if (hp_eat(h, ')'))
            return 0;
        hp_ws(h);
        if (h->p >= h->end || !isdigit((unsigned char)*h->p))
            return -1;
        int64_t v = 0;
        while (h->p < h->end && isdigit((unsigned char)*h->p)) {
            if (v > (INT64_MAX - 9) / 10)
                return -1;
            v = v * 10 + (*h->p++ - '0');
        }
        if (h->p < h->end && *h->p == 'L')
            h->p++;
        if (s->rank >= DG_MAX_RANK)
            return -1;
        s->dims[s->rank++] = v;
        if (!hp_eat(h, ',')) {
            return hp_eat(h, ')') ? 0 : -1;
        }
    }
}

static int parse_descr(const char *d, src_kind *k, size_t *isz)
{
    char e = d[0];
    if (e != '<' && e != '|' && e != '=')
        return -1;
    const char *t = d + 1;
    static const struct { const char *n; src_kind k; size_t sz; int one; } tab[] = {
        {"f4", S_F32, 4, 0}, {"f8", S_F64, 8, 0}, {"i4", S_I32, 4, 0},
        {"i8", S_I64, 8, 0}, {"b1", S_BOOL, 1, 1}, {"u1", S_U8, 1, 1},
        {"i1", S_I8, 1, 1}, {"i2", S_I16, 2, 0}, {"u2", S_U16, 2, 0},
        {"u4", S_U32, 4, 0}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(t, tab[i].n) == 0) {
            if (e == '|' && !tab[i].one)
                return -1;
            *k = tab[i].k;
            *isz = tab[i].sz;
            return 0;
        }
    return -1;
}

static dg_status load_npy(const char *path, const char *buf, size_t len,
                          dg_dtype want, const dg_shape *shape,
                          dg_tensor **out, dg_error *err)
{
    if (len < 10)
        return dg_err(err, DG_E_GRAPH, "%s: truncated .npy header", path);
    unsigned major = (unsigned char)buf[6];
    size_t hlen, off;
    if (major == 1) {
        hlen = (unsigned char)buf[8] | ((size_t)(unsigned char)buf[9] << 8);
        off = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12)
            return dg_err(err, DG_E_GRAPH, "%s: truncated .npy header", path);
        hlen = (unsigned char)buf[8] | ((size_t)(unsigned char)buf[9] << 8) |
               ((size_t)(unsigned char)buf[10] << 16) |
               ((size_t)(unsigned char)buf[11] << 24);
        off = 12;
    } else {
        return dg_err(err, DG_E_GRAPH, "%s: unsupported .npy version %u.%u",
                      path, major, (unsigned char)buf[7]);
    }
    if (hlen > len - off)
        return dg_err(err, DG_E_GRAPH, "%s: truncated .npy header", path);
    hdr_parser h = {buf + off, buf + off + hlen};
    char descr[32] = "";
    int fortran = -1, have_shape = 0;
    dg_shape fs = {0, {0}};
    if (!hp_eat(&h, '{'))
        return dg_err(err, DG_E_GRAPH, "%s: malformed .npy header", path);
    while (!hp_eat(&h, '}')) {
        char key[32];
        if (hp_str(&h, key, sizeof key) || !hp_eat(&h, ':'))
            return dg_err(err, DG_E_GRAPH, "%s: malformed .npy header", path);
        if (strcmp(key, "descr") == 0) {
            if (hp_str(&h, descr, sizeof descr))
                return dg_err(err, DG_E_GRAPH, "%s: unsupported .npy dtype "
                              "(structured or too long)", path);
        } else if (strcmp(key, "fortran_order") == 0) {
            if (hp_word(&h, "True"))
                fortran = 1;
            else if (hp_word(&h, "False"))
                fortran = 0;
            else
                return dg_err(err, DG_E_GRAPH, "%s: malformed .npy header "
                              "(fortran_order)", path);
        } else if (strcmp(key, "shape") == 0) {
            if (hp_shape(&h, &fs))
                return dg_err(err, DG_E_GRAPH, "%s: malformed .npy header "
                              "(shape)", path);
            have_shape = 1;
        } else {
            return dg_err(err, DG_E_GRAPH, "%s: malformed .npy header "
                          "(unknown key '%s')", path, key);
        }
        if (!hp_eat(&h, ',')) {
            if (!hp_eat(&h, '}'))
                return dg_err(err, DG_E_GRAPH, "%s: malformed .npy header",
                              path);
            break;
        }
    }
    if (!descr[0] || fortran < 0 || !have_shape)
        return dg_err(err, DG_E_GRAPH, "%s: .npy header lacks descr, "
                      "fortran_order or shape", path);
    src_kind k;
    size_t isz;
    if (parse_descr(descr, &k, &isz))
        return dg_err(err, DG_E_GRAPH, "%s: unsupported .npy dtype '%s' (want "
                      "little-endian <f4 <f8 <i4 <i8 |b1 |u1)", path, descr);
    int64_t numel = 1;
    for (int i = 0; i < fs.rank; i++) {
        if (fs.dims[i] != 0 && numel > INT64_MAX / 16 / fs.dims[i])
            return dg_err(err, DG_E_GRAPH, "%s: .npy shape too large", path);
        numel *= fs.dims[i];
    }
    size_t data_off = off + hlen;
    if ((uint64_t)numel * isz > len - data_off)
        return dg_err(err, DG_E_GRAPH, "%s: .npy data truncated: %lld elements "
                      "need %llu bytes, file has %zu", path, (long long)numel,
                      (unsigned long long)((uint64_t)numel * isz), len - data_off);
    dg_status rc = check_shape(path, shape, &fs, err);
    if (rc != DG_OK)
        return rc;
    dg_tensor *t = dg_tensor_new(want, &fs);
    if (!t)
        return dg_err_nomem(err, path);
    convert(t, (const unsigned char *)buf + data_off, k, numel);
    if (fortran && fs.rank > 1 && numel > 0 && from_fortran(t) != DG_OK) {
        dg_tensor_free(t);
        return dg_err_nomem(err, path);
    }
    *out = t;
    return DG_OK;
}

/* ---- .csv ------------------------------------------------------------------- */

/* Whether the field [s, e) is a plain decimal with a fraction or exponent
 * ([+-]digits with a '.', 'e' or 'E' after its first digit), which
 * strtoll cannot read to its end. */
static int maybe_noninteger(const char *s, const char *e)
{
    if (s < e && (*s == '+' || *s == '-'))
        s++;
    if (s >= e || *s < '0' || *s > '9')
        return 0;
    for (; s < e; s++)
        if (*s == '.' || *s == 'e' || *s == 'E')
            return 1;
    return 0;
}

static dg_status load_csv(const char *path, char *buf, size_t len,
                          dg_dtype want, const dg_shape *shape,
                          dg_tensor **out, dg_error *err)
{
    /* Pass 1: count rows and columns, validating numbers. */
    int64_t rows = 0, cols = -1, cap = 0;
    double *dv = NULL;
    int64_t *iv = NULL;
    uint8_t *isint = NULL;
    int64_t nv = 0;
    int line = 0;
    char *p = buf, *end = buf + len;
    dg_status rc = DG_OK;
    while (p < end) {
        line++;
        char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        char *q = p;
        char *le = eol;
        if (le > q && le[-1] == '\r')
            le--;
        p = eol + 1;
        const char *t = q;
        while (t < le && isspace((unsigned char)*t))
            t++;
        if (t == le)
            continue; /* blank line */
        int64_t c = 0;
        char save = *le;
        *le = 0;
        char *s = q;
        for (;;) {
            while (*s == ' ' || *s == '\t')
                s++;
            char *fe = s;
            while (*fe && *fe != ',')
                fe++;
            char *te = fe;
            while (te > s && isspace((unsigned char)te[-1]))
                te--;
            char tch = *te;
            *te = 0;
            char *ep = NULL;
            double d = s < te ? dg_strtod(s, &ep) : 0;
            int ok = s < te && ep == te;
            long long ll = 0;
            int is_i = 0;
            /* strtoll reads the whole field only when it is an integer: a
             * '.' or an exponent after a digit rules that out (and the
             * call, for the common case of a float field) */
            if (ok && !maybe_noninteger(s, te)) {
                char *ep2 = NULL;
                errno = 0;
                ll = strtoll(s, &ep2, 10);
                is_i = ep2 == te && errno == 0;
            }
            if (!ok) {
                char tok[40];
                snprintf(tok, sizeof tok, "%s", s);
                *te = tch;
                *le = save;
                rc = dg_err(err, DG_E_GRAPH, "%s:%d: '%s' is not a number",
                            path, line, tok);
                goto fail;
            }
            *te = tch;
            if (nv == cap) {
                int64_t nc = cap ? cap * 2 : 1024;
                double *nd = dg_realloc(dv, sizeof *nd * (size_t)nc);
                if (nd)
                    dv = nd;
                int64_t *ni = nd ? dg_realloc(iv, sizeof *ni * (size_t)nc) : NULL;
                if (ni)
                    iv = ni;
                uint8_t *nb = ni ? dg_realloc(isint, (size_t)nc) : NULL;
                if (!nb) {
                    *le = save;
                    rc = dg_err_nomem(err, path);
                    goto fail;
                }
                isint = nb;
                cap = nc;
            }
            dv[nv] = d;
            iv[nv] = ll;
            isint[nv] = (uint8_t)is_i;
            nv++;
            c++;
            if (!*fe)
                break;
            s = fe + 1;
        }
        *le = save;
        if (cols < 0) {
            cols = c;
        } else if (c != cols) {
            rc = dg_err(err, DG_E_GRAPH, "%s:%d: %lld values, but earlier "
                        "rows have %lld (ragged rows)", path, line,
                        (long long)c, (long long)cols);
            goto fail;
        }
        rows++;
    }
    if (rows == 0) {
        rc = dg_err(err, DG_E_GRAPH, "%s: no data", path);
        goto fail;
    }
    dg_shape fs = {0, {0}};
    if (!shape) {
        fs.rank = 2;
        fs.dims[0] = rows;
        fs.dims[1] = cols;
    } else if (shape->rank == 0) {
        if (nv != 1) {
            rc = dg_err(err, DG_E_GRAPH, "%s: %lld values for a scalar "
                        "Placeholder", path, (long long)nv);
            goto fail;
        }
    } else {
        fs.rank = shape->rank;
        fs.dims[0] = rows;
        int64_t known = 1;
        int unknown = -1, n_unknown = 0;
        for (int i = 1; i < shape->rank; i++) {
            fs.dims[i] = shape->dims[i];
            if (shape->dims[i] < 0) {
                unknown = i;
                n_unknown++;
            } else {
                known *= shape->dims[i];
            }
        }
        if (n_unknown == 1 && known > 0 && cols % known == 0)
            fs.dims[unknown] = cols / known;
        else if (n_unknown > 1 && shape->rank == 2)
            fs.dims[1] = cols;
        int64_t per = 1;
        for (int i = 1; i < fs.rank; i++)
            per *= fs.dims[i] < 0 ? -1 : fs.dims[i];
        if (per != cols) {
            char b[160];
            dg_shape_format(shape, b, sizeof b);
            rc = dg_err(err, DG_E_GRAPH, "%s: rows have %lld values, but the "
                        "Placeholder's shape %s takes %lld per row", path,
                        (long long)cols, b, (long long)per);
            goto fail;
        }
        if ((rc = check_shape(path, shape, &fs, err)) != DG_OK)
            goto fail;
    }
    dg_tensor *t = dg_tensor_new(want, &fs);
    if (!t) {
        rc = dg_err_nomem(err, path);
        goto fail;
    }
    for (int64_t i = 0; i < nv; i++)
        put(t, i, dv[i], iv[i], isint[i] && want != DG_F32 && want != DG_F64);
    *out = t;
fail:
    dg_free(dv);
    dg_free(iv);
    dg_free(isint);
    return rc;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcasecmp(s + a - b, suf) == 0;
}

dg_status dgr_tensor_load_file(const char *path, dg_dtype want,
                               const dg_shape *shape, dg_tensor **out,
                               dg_error *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    dg_status rc = read_all(path, &buf, &len, err);
    if (rc != DG_OK)
        return rc;
    if (len >= 6 && memcmp(buf, "\x93NUMPY", 6) == 0)
        rc = load_npy(path, buf, len, want, shape, out, err);
    else if (ends_with(path, ".npy"))
        rc = dg_err(err, DG_E_GRAPH, "%s: not a .npy file (bad magic)", path);
    else
        rc = load_csv(path, buf, len, want, shape, out, err);
    dg_free(buf);
    return rc;
}

dg_status dgr_tensor_save_npy(const char *path, const dg_tensor *t,
                              dg_error *err)
{
    static const char *const descr[DG_DTYPE_COUNT] = {"<f4", "<f8", "<i4",
                                                      "<i8", "|b1"};
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, "
                     "'shape': (", descr[t->dtype]);
    for (int i = 0; i < t->shape.rank; i++)
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, "%lld%s",
                      (long long)t->shape.dims[i],
                      t->shape.rank == 1 ? "," : (i + 1 < t->shape.rank ? ", " : ""));
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    memset(hdr + n, ' ', (size_t)pad);
    n += pad;
    hdr[n++] = '\n';
    size_t tmplen = strlen(path) + 8;
    char *tmp = dg_malloc(tmplen);
    if (!tmp)
        return dg_err_nomem(err, path);
    snprintf(tmp, tmplen, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        dg_status rc = dg_err(err, DG_E_IO, "%s: cannot write: %s", path,
                              strerror(errno));
        dg_free(tmp);
        return rc;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                             (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
    size_t bytes = (size_t)dg_shape_numel(&t->shape) * dg_dtype_size(t->dtype);
    int ok = fwrite(pre, 1, 10, f) == 10 &&
             fwrite(hdr, 1, (size_t)n, f) == (size_t)n &&
             (bytes == 0 || fwrite(t->data, 1, bytes, f) == bytes);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        dg_free(tmp);
        return dg_err(err, DG_E_IO, "%s: write failed", path);
    }
    dg_free(tmp);
    return DG_OK;
}
