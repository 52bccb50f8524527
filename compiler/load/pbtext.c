/*
 * pbtext.c -- protobuf text format (what TF writes for `.pbtxt` and
 * export_meta_graph(as_text=True)) turned into the binary wire format,
 * guided by protobuf-c's message descriptors (pbtext.h; issue 24).
 *
 * The text is read once, field by field: a field the descriptor knows is
 * encoded with its number and wire type (scalars, enums by name or
 * number, strings with C / octal / hex escapes and adjacent literals
 * joined, nested messages and map entries as `{ ... }` or `< ... >`, lists
 * `[a, b]`); a field it does not know, or a message our .proto keeps as
 * bytes (OpList, Any, ...), is skipped, as the binary parser skips
 * unknown fields.  Three bytes fields that hold messages dgrun reads
 * (FunctionDefLibrary.function, AttrValue.func, MetaGraphDef.
 * object_graph_def) are encoded with their message's descriptor.  The
 * result goes to the binary readers, so both spellings load alike.
 */
#include "pbtext.h"
#include "dg_alloc.h"
#include "tf_meta.pb-c.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DEPTH 100

typedef struct buf {
    uint8_t *p;
    size_t len, cap;
    int oom;
} buf;

static void put(buf *b, const void *s, size_t n)
{
    if (b->oom || n == 0) /* n == 0: s may be NULL (an empty string) */
        return;
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        uint8_t *p = dg_realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void put_varint(buf *b, uint64_t v)
{
    uint8_t t[10];
    int n = 0;
    do {
        t[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            t[n] |= 0x80;
        n++;
    } while (v);
    put(b, t, (size_t)n);
}

static void put_tag(buf *b, unsigned field, int wire)
{
    put_varint(b, (uint64_t)field << 3 | (unsigned)wire);
}

typedef struct rd {
    const char *s, *end;
    int line;
    char *msg;
    size_t msgsz;
    int failed;
} rd;

static int fail(rd *r, const char *fmt, ...)
{
    if (!r->failed) {
        char why[200];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof why, fmt, ap);
        va_end(ap);
        snprintf(r->msg, r->msgsz, "line %d: %s", r->line, why);
    }
    r->failed = 1;
    return -1;
}

static void skip_ws(rd *r)
{
    while (r->s < r->end) {
        char c = *r->s;
        if (c == '\n') {
            r->line++;
            r->s++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == ',' ||
                   c == ';') {
            r->s++;
        } else if (c == '#') {
            while (r->s < r->end && *r->s != '\n')
                r->s++;
        } else {
            break;
        }
    }
}

static int peek(rd *r)
{
    skip_ws(r);
    return r->s < r->end ? (unsigned char)*r->s : -1;
}

static int ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
           c == '+';
}

/* An identifier or number token into t (NUL-terminated); -1 if none. */
static int token(rd *r, char *t, size_t tsz)
{
    skip_ws(r);
    size_t n = 0;
    while (r->s < r->end && ident_char(*r->s)) {
        if (n + 1 >= tsz)
            return fail(r, "token too long");
        t[n++] = *r->s++;
    }
    t[n] = 0;
    return n ? 0 : fail(r, "expected a name or a value");
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* One or more adjacent quoted strings, unescaped, into out. */
static int string_lit(rd *r, buf *out)
{
    int any = 0;
    while (peek(r) == '"' || peek(r) == '\'') {
        char q = *r->s++;
        any = 1;
        for (;;) {
            if (r->s >= r->end || *r->s == '\n')
                return fail(r, "unterminated string");
            char c = *r->s++;
            if (c == q)
                break;
            if (c != '\\') {
                put(out, &c, 1);
                continue;
            }
            if (r->s >= r->end)
                return fail(r, "unterminated string");
            c = *r->s++;
            uint8_t v;
            switch (c) {
            case 'a': v = 7; break;
            case 'b': v = 8; break;
            case 'f': v = 12; break;
            case 'n': v = 10; break;
            case 'r': v = 13; break;
            case 't': v = 9; break;
            case 'v': v = 11; break;
            case 'x': {
                int h = r->s < r->end ? hexval(*r->s) : -1;
                if (h < 0)
                    return fail(r, "bad \\x escape");
                r->s++;
                int h2 = r->s < r->end ? hexval(*r->s) : -1;
                if (h2 >= 0) {
                    h = h * 16 + h2;
                    r->s++;
                }
                v = (uint8_t)h;
                break;
            }
            default:
                if (c >= '0' && c <= '7') {
                    int o = c - '0';
                    for (int k = 0; k < 2 && r->s < r->end && *r->s >= '0' &&
                                    *r->s <= '7'; k++)
                        o = o * 8 + (*r->s++ - '0');
                    v = (uint8_t)o;
                } else {
                    v = (uint8_t)c; /* \\ \' \" \? */
                }
            }
            put(out, &v, 1);
        }
    }
    return any ? 0 : fail(r, "expected a string");
}

static int skip_value(rd *r, int depth);

/* Skip a `{ ... }` / `< ... >` block (after its opening bracket). */
static int skip_block(rd *r, char close, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(r, "nested more than %d deep", MAX_DEPTH);
    for (;;) {
        int c = peek(r);
        if (c < 0)
            return fail(r, "missing '%c'", close);
        if (c == close) {
            r->s++;
            return 0;
        }
        char t[512];
        if (c == '[') { /* an Any's [type.googleapis.com/...] */
            while (r->s < r->end && *r->s != ']')
                r->s++;
            if (r->s >= r->end)
                return fail(r, "missing ']'");
            r->s++;
        } else if (token(r, t, sizeof t)) {
            return -1;
        }
        if (peek(r) == ':')
            r->s++;
        if (skip_value(r, depth + 1))
            return -1;
    }
}

static int skip_value(rd *r, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(r, "nested more than %d deep", MAX_DEPTH);
    int c = peek(r);
    char t[512];
    if (c == '{' || c == '<') {
        r->s++;
        return skip_block(r, c == '{' ? '}' : '>', depth);
    }
    if (c == '[') {
        r->s++;
        while (peek(r) != ']') {
            if (peek(r) < 0)
                return fail(r, "missing ']'");
            if (skip_value(r, depth + 1))
                return -1;
        }
        r->s++;
        return 0;
    }
    if (c == '"' || c == '\'') {
        buf tmp = {0};
        int rc = string_lit(r, &tmp);
        dg_free(tmp.p);
        return rc;
    }
    return token(r, t, sizeof t);
}

static int message(rd *r, const ProtobufCMessageDescriptor *d, buf *out,
                   int close, int depth);

/* The message a bytes field really holds, for the ones dgrun reads. */
static const ProtobufCMessageDescriptor *bytes_as(const ProtobufCMessageDescriptor *d,
                                                 const ProtobufCFieldDescriptor *f)
{
    if (d == &dgtf__function_def_library__descriptor &&
        strcmp(f->name, "function") == 0)
        return &dgtf__function_def__descriptor;
    if ((d == &dgtf__attr_value__descriptor ||
         d == &dgtf__attr_value__list_value__descriptor) &&
        strcmp(f->name, "func") == 0)
        return &dgtf__name_attr_list__descriptor;
    if (d == &dgtf__meta_graph_def__descriptor &&
        strcmp(f->name, "object_graph_def") == 0)
        return &dgtf__saved_object_graph__descriptor;
    return NULL;
}

/* One scalar value of field f. */
static int scalar(rd *r, const ProtobufCFieldDescriptor *f, buf *out)
{
    char t[512];
    if (f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES) {
        buf s = {0};
        int rc = string_lit(r, &s);
        if (!rc) {
            put_tag(out, f->id, 2);
            put_varint(out, s.len);
            put(out, s.p, s.len);
            out->oom |= s.oom;
        }
        dg_free(s.p);
        return rc;
    }
    if (token(r, t, sizeof t))
        return -1;
    char *e = NULL;
    errno = 0;
    switch (f->type) {
    case PROTOBUF_C_TYPE_FLOAT:
    case PROTOBUF_C_TYPE_DOUBLE: {
        double v;
        const char *p = t + (t[0] == '-' || t[0] == '+');
        if (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0)
            v = t[0] == '-' ? -INFINITY : INFINITY;
        else if (strcasecmp(p, "nan") == 0)
            v = NAN;
        else {
            v = strtod(t, &e);
            if (*e == 'f' || *e == 'F')
                e++;
            if (*e)
                return fail(r, "field '%s': bad number '%s'", f->name, t);
        }
        if (f->type == PROTOBUF_C_TYPE_FLOAT) {
            float x = (float)v;
            put_tag(out, f->id, 5);
            put(out, &x, 4);
        } else {
            put_tag(out, f->id, 1);
            put(out, &v, 8);
        }
        return 0;
    }
    case PROTOBUF_C_TYPE_BOOL:
        if (strcmp(t, "true") == 0 || strcmp(t, "True") == 0 ||
            strcmp(t, "t") == 0 || strcmp(t, "1") == 0) {
            put_tag(out, f->id, 0);
            put_varint(out, 1);
        } else if (strcmp(t, "false") == 0 || strcmp(t, "False") == 0 ||
                   strcmp(t, "f") == 0 || strcmp(t, "0") == 0) {
            put_tag(out, f->id, 0);
            put_varint(out, 0);
        } else {
            return fail(r, "field '%s': bad bool '%s'", f->name, t);
        }
        return 0;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumDescriptor *ed = f->descriptor;
        const ProtobufCEnumValue *v =
            protobuf_c_enum_descriptor_get_value_by_name(ed, t);
        long long n = v ? v->value : strtoll(t, &e, 0);
        if (!v && (*e || errno))
            return fail(r, "field '%s': unknown value '%s'", f->name, t);
        put_tag(out, f->id, 0);
        put_varint(out, (uint64_t)n);
        return 0;
    }
    case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FIXED64: {
        unsigned long long n = strtoull(t, &e, 0);
        if (*e || errno || t[0] == '-')
            return fail(r, "field '%s': bad number '%s'", f->name, t);
        if (f->type == PROTOBUF_C_TYPE_FIXED32) {
            uint32_t x = (uint32_t)n;
            put_tag(out, f->id, 5);
            put(out, &x, 4);
        } else if (f->type == PROTOBUF_C_TYPE_FIXED64) {
            uint64_t x = n;
            put_tag(out, f->id, 1);
            put(out, &x, 8);
        } else {
            put_tag(out, f->id, 0);
            put_varint(out, n);
        }
        return 0;
    }
    default: { /* int32, int64, sint*, sfixed* */
        long long n = strtoll(t, &e, 0);
        if (*e || errno)
            return fail(r, "field '%s': bad number '%s'", f->name, t);
        if (f->type == PROTOBUF_C_TYPE_SINT32 ||
            f->type == PROTOBUF_C_TYPE_SINT64) {
            put_tag(out, f->id, 0);
            put_varint(out, ((uint64_t)n << 1) ^ (uint64_t)(n >> 63));
        } else if (f->type == PROTOBUF_C_TYPE_SFIXED32) {
            int32_t x = (int32_t)n;
            put_tag(out, f->id, 5);
            put(out, &x, 4);
        } else if (f->type == PROTOBUF_C_TYPE_SFIXED64) {
            int64_t x = n;
            put_tag(out, f->id, 1);
            put(out, &x, 8);
        } else {
            put_tag(out, f->id, 0);
            put_varint(out, (uint64_t)n);
        }
        return 0;
    }
    }
}

/* One value (or a [list] of them) of field f of message d. */
static int value(rd *r, const ProtobufCMessageDescriptor *d,
                 const ProtobufCFieldDescriptor *f, buf *out, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(r, "nested more than %d deep", MAX_DEPTH);
    int c = peek(r);
    if (c == '[') {
        r->s++;
        while (peek(r) != ']') {
            if (peek(r) < 0)
                return fail(r, "missing ']'");
            if (value(r, d, f, out, depth + 1))
                return -1;
        }
        r->s++;
        return 0;
    }
    const ProtobufCMessageDescriptor *md =
        f->type == PROTOBUF_C_TYPE_MESSAGE ? f->descriptor
        : f->type == PROTOBUF_C_TYPE_BYTES ? bytes_as(d, f) : NULL;
    if (c == '{' || c == '<') {
        r->s++;
        if (!md) /* a message our .proto keeps as bytes: skipped */
            return skip_block(r, c == '{' ? '}' : '>', depth + 1);
        buf sub = {0};
        int rc = message(r, md, &sub, c == '{' ? '}' : '>', depth + 1);
        if (!rc) {
            put_tag(out, f->id, 2);
            put_varint(out, sub.len);
            put(out, sub.p, sub.len);
            out->oom |= sub.oom;
        }
        dg_free(sub.p);
        return rc;
    }
    if (f->type == PROTOBUF_C_TYPE_MESSAGE)
        return fail(r, "field '%s': expected '{'", f->name);
    return scalar(r, f, out);
}

static int message(rd *r, const ProtobufCMessageDescriptor *d, buf *out,
                   int close, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(r, "nested more than %d deep", MAX_DEPTH);
    for (;;) {
        int c = peek(r);
        if (c < 0) {
            if (close)
                return fail(r, "missing '%c'", close);
            return 0;
        }
        if (c == close) {
            r->s++;
            return 0;
        }
        char name[512];
        if (c == '[') { /* an extension or Any's type URL: skipped */
            while (r->s < r->end && *r->s != ']')
                r->s++;
            if (r->s >= r->end)
                return fail(r, "missing ']'");
            r->s++;
            snprintf(name, sizeof name, "[...]");
        } else if (token(r, name, sizeof name)) {
            return -1;
        }
        int colon = peek(r) == ':';
        if (colon)
            r->s++;
        const ProtobufCFieldDescriptor *f =
            name[0] == '[' ? NULL
                           : protobuf_c_message_descriptor_get_field_by_name(
                                 d, name);
        if (!f) {
            if (skip_value(r, depth + 1))
                return -1;
            continue;
        }
        if (!colon && f->type != PROTOBUF_C_TYPE_MESSAGE &&
            !(peek(r) == '{' || peek(r) == '<'))
            return fail(r, "field '%s': expected ':'", name);
        if (value(r, d, f, out, depth))
            return -1;
    }
}

int dgc_pbtext_encode(const char *text, size_t len,
                      const ProtobufCMessageDescriptor *d, uint8_t **out,
                      size_t *out_len, char *msg, size_t msgsz)
{
    rd r = {text, text + len, 1, msg, msgsz, 0};
    buf b = {0};
    *out = NULL;
    *out_len = 0;
    int rc = message(&r, d, &b, 0, 0);
    if (!rc && b.oom)
        rc = -2;
    if (rc) {
        dg_free(b.p);
        return rc == -2 || b.oom ? -2 : -1;
    }
    if (!b.p) { /* an empty message */
        b.p = dg_malloc(1);
        if (!b.p)
            return -2;
    }
    *out = b.p;
    *out_len = b.len;
    return 0;
}
