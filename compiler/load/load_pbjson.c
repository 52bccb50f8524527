/*
 * load_pbjson.c -- a generic proto3 JSON reader: a cJSON tree into a
 * protobuf-c message, driven by its ProtobufCMessageDescriptor (issue 22).
 *
 * Reads what google.protobuf.json_format.MessageToJson writes: fields by
 * lowerCamelCase or original name, 64-bit integers as strings or numbers,
 * bytes as base64 (standard or URL-safe), enums by name or number, floats
 * as numbers or "NaN"/"Infinity"/"-Infinity", maps as objects, null as the
 * default.  Unknown fields and values of the wrong kind are errors naming
 * the field's path (as json_format.Parse refuses them).  Used for GraphDef
 * JSON with a function library, which then takes the binary file's path
 * (inlining, load_pb.c).
 */
#include "pbjson.h"
#include "gview.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct pj {
    ProtobufCAllocator *a;
    dg_error *err;
    const dgc_pbjson_opts *o;
    char path[256];
} pj;

static dg_status bad(pj *J, const char *what)
{
    return dg_err(J->err, DG_E_GRAPH, "GraphDef JSON: %s: %s",
                  J->path[0] ? J->path : "(root)", what);
}

/* Append ".name" / "[k]" / "['key']" to the path; returns the old length. */
static size_t push(pj *J, const char *fmt, const char *s, int k)
{
    size_t n = strlen(J->path);
    char tmp[128];
    if (s)
        snprintf(tmp, sizeof tmp, fmt, s);
    else
        snprintf(tmp, sizeof tmp, fmt, k);
    snprintf(J->path + n, sizeof J->path - n, "%s", tmp);
    return n;
}

/* proto3's default json_name: underscores dropped, the next letter upper */
static int camel_eq(const char *name, const char *key)
{
    for (; *name; name++) {
        if (*name == '_' && name[1]) {
            name++;
            char c = *name >= 'a' && *name <= 'z' ? (char)(*name - 32) : *name;
            if (*key++ != c)
                return 0;
        } else if (*key++ != *name) {
            return 0;
        }
    }
    return *key == 0;
}

static const ProtobufCFieldDescriptor *
find_field(const ProtobufCMessageDescriptor *d, const char *key)
{
    for (unsigned i = 0; i < d->n_fields; i++)
        if (strcmp(d->fields[i].name, key) == 0 ||
            camel_eq(d->fields[i].name, key))
            return &d->fields[i];
    return NULL;
}

static int is_map(const ProtobufCFieldDescriptor *f)
{
    const ProtobufCMessageDescriptor *m = f->descriptor;
    return f->type == PROTOBUF_C_TYPE_MESSAGE &&
           f->label == PROTOBUF_C_LABEL_REPEATED && m->n_fields == 2 &&
           strcmp(m->fields[0].name, "key") == 0 &&
           strcmp(m->fields[1].name, "value") == 0 &&
           strlen(m->name) > 5 &&
           strcmp(m->name + strlen(m->name) - 5, "Entry") == 0;
}

static size_t type_size(ProtobufCType t)
{
    switch (t) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
    case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    default: return 4;
    }
}

/* base64 through dgc_base64 (gview.h): dg_malloc'd, as the protobuf-c
 * allocator of every caller (dg_alloc) frees it */
static dg_status read_bytes(pj *J, const char *s, ProtobufCBinaryData *out)
{
    unsigned char *p;
    size_t n;
    int rc = dgc_base64(s, &p, &n);
    if (rc == -2)
        return dg_err_nomem(J->err, "GraphDef JSON");
    if (rc)
        return bad(J, "invalid base64");
    out->data = p;
    out->len = n;
    return DG_OK;
}

/* An integer from a number or a decimal string, in [lo, hi] (unsigned
 * when uns: hi is then read as uint64). */
static dg_status read_int(pj *J, const cJSON *v, int uns, int64_t lo,
                          int64_t hi, uint64_t *out)
{
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d != floor(d) || d < (double)lo ||
            (uns ? d > (double)(uint64_t)hi : d > (double)hi))
            return bad(J, "not an integer in range");
        *out = uns ? (uint64_t)d : (uint64_t)(int64_t)d;
        return DG_OK;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return bad(J, "expected an integer");
    char *end;
    errno = 0;
    if (uns) {
        if (v->valuestring[0] == '-')
            return bad(J, "negative value for an unsigned field");
        unsigned long long u = strtoull(v->valuestring, &end, 10);
        if (*end || errno || u > (uint64_t)hi)
            return bad(J, "not an integer in range");
        *out = u;
    } else {
        long long s = strtoll(v->valuestring, &end, 10);
        if (*end || errno || s < lo || s > hi)
            return bad(J, "not an integer in range");
        *out = (uint64_t)s;
    }
    return DG_OK;
}

static dg_status read_msg(pj *J, const cJSON *obj,
                          const ProtobufCMessageDescriptor *d,
                          ProtobufCMessage **out, int depth);
static dg_status read_packed(pj *J, const ProtobufCMessageDescriptor *d,
                             const cJSON *v, ProtobufCBinaryData *out,
                             int depth);

/* A message kept as `bytes` (a reduced .proto): read, then packed. */
static dg_status read_packed(pj *J, const ProtobufCMessageDescriptor *d,
                             const cJSON *v, ProtobufCBinaryData *out,
                             int depth)
{
    ProtobufCMessage *m = NULL;
    dg_status st = read_msg(J, v, d, &m, depth + 1);
    if (!st) {
        out->len = protobuf_c_message_get_packed_size(m);
        out->data = J->a->alloc(J->a->allocator_data, out->len + 1);
        if (!out->data)
            st = dg_err_nomem(J->err, "GraphDef JSON");
        else
            protobuf_c_message_pack(m, out->data);
    }
    if (m)
        protobuf_c_message_free_unpacked(m, J->a);
    return st;
}

/* A field TF has that the reduced descriptor d leaves out or keeps as
 * unread bytes (skipped, as the binary path skips an unknown field). */
static int ignored(const pj *J, const ProtobufCMessageDescriptor *d,
                   const char *key)
{
    for (size_t k = 0; J->o && k < J->o->n_ignore; k++)
        if (J->o->ignore[k].msg == d &&
            (strcmp(J->o->ignore[k].name, key) == 0 ||
             camel_eq(J->o->ignore[k].name, key)))
            return 1;
    return 0;
}

/* One value of field f's type into slot. */
static dg_status read_value(pj *J, const ProtobufCFieldDescriptor *f,
                            const cJSON *v, void *slot, int depth)
{
    uint64_t u;
    dg_status st;
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32:
        if ((st = read_int(J, v, 0, INT32_MIN, INT32_MAX, &u)))
            return st;
        *(int32_t *)slot = (int32_t)(int64_t)u;
        return DG_OK;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        if ((st = read_int(J, v, 1, 0, UINT32_MAX, &u)))
            return st;
        *(uint32_t *)slot = (uint32_t)u;
        return DG_OK;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        if ((st = read_int(J, v, 0, INT64_MIN, INT64_MAX, &u)))
            return st;
        *(int64_t *)slot = (int64_t)u;
        return DG_OK;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64:
        if ((st = read_int(J, v, 1, 0, (int64_t)UINT64_MAX, &u)))
            return st;
        *(uint64_t *)slot = u;
        return DG_OK;
    case PROTOBUF_C_TYPE_FLOAT: case PROTOBUF_C_TYPE_DOUBLE: {
        double x;
        const char *t = cJSON_IsString(v) ? v->valuestring : "";
        char *end;
        if (cJSON_IsNumber(v))
            x = v->valuedouble;
        else if (!strcmp(t, "NaN"))
            x = NAN;
        else if (!strcmp(t, "Infinity") || !strcmp(t, "-Infinity"))
            x = t[0] == '-' ? -INFINITY : INFINITY;
        else if (!t[0] || (x = strtod(t, &end), *end))
            return bad(J, "expected a number");
        if (f->type == PROTOBUF_C_TYPE_FLOAT)
            *(float *)slot = (float)x;
        else
            *(double *)slot = x;
        return DG_OK;
    }
    case PROTOBUF_C_TYPE_BOOL:
        if (!cJSON_IsBool(v))
            return bad(J, "expected true or false");
        *(protobuf_c_boolean *)slot = cJSON_IsTrue(v);
        return DG_OK;
    case PROTOBUF_C_TYPE_ENUM: {
        const ProtobufCEnumValue *e = NULL;
        if (cJSON_IsString(v))
            e = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor,
                                                              v->valuestring);
        else if (cJSON_IsNumber(v) && v->valuedouble == (int)v->valuedouble)
            e = protobuf_c_enum_descriptor_get_value(f->descriptor,
                                                     (int)v->valuedouble);
        if (!e)
            return bad(J, "unknown enum value");
        *(int *)slot = e->value;
        return DG_OK;
    }
    case PROTOBUF_C_TYPE_STRING: {
        if (!cJSON_IsString(v))
            return bad(J, "expected a string");
        size_t n = strlen(v->valuestring) + 1;
        char *s = J->a->alloc(J->a->allocator_data, n);
        if (!s)
            return dg_err_nomem(J->err, "GraphDef JSON");
        memcpy(s, v->valuestring, n);
        *(char **)slot = s;
        return DG_OK;
    }
    case PROTOBUF_C_TYPE_BYTES:
        for (size_t k = 0; J->o && k < J->o->n_sub; k++)
            if (J->o->sub[k].field == f && cJSON_IsObject(v))
                return read_packed(J, J->o->sub[k].msg, v, slot, depth);
        if (!cJSON_IsString(v))
            return bad(J, "expected a base64 string");
        return read_bytes(J, v->valuestring, slot);
    case PROTOBUF_C_TYPE_MESSAGE:
        return read_msg(J, v, f->descriptor, slot, depth + 1);
    }
    return bad(J, "unsupported field type");
}

/* A map's JSON object: each member one entry message (key, value). */
static dg_status read_map(pj *J, const ProtobufCFieldDescriptor *f,
                          const cJSON *v, void **arr, size_t *n, int depth)
{
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    for (const cJSON *m = v->child; m; m = m->next) {
        /* (an object member always has its key; -O3's format check does
         * not know that) */
        size_t old = push(J, "['%s']", m->string ? m->string : "", 0);
        ProtobufCMessage *e = J->a->alloc(J->a->allocator_data,
                                          ed->sizeof_message);
        if (!e)
            return dg_err_nomem(J->err, "GraphDef JSON");
        protobuf_c_message_init(ed, e);
        ((ProtobufCMessage **)*arr)[(*n)++] = e; /* freed with the message */
        cJSON key = {0};
        key.type = cJSON_String;
        key.valuestring = m->string;
        const ProtobufCFieldDescriptor *kf = &ed->fields[0];
        dg_status st;
        if (kf->type == PROTOBUF_C_TYPE_STRING ||
            kf->type == PROTOBUF_C_TYPE_BOOL) {
            if (kf->type == PROTOBUF_C_TYPE_BOOL) {
                int t = !strcmp(m->string, "true");
                if (!t && strcmp(m->string, "false"))
                    return bad(J, "bad map key");
                key.type = t ? cJSON_True : cJSON_False;
            }
        }
        st = read_value(J, kf, &key, (char *)e + kf->offset, depth);
        if (!st && !cJSON_IsNull(m))
            st = read_value(J, &ed->fields[1], m,
                            (char *)e + ed->fields[1].offset, depth);
        if (st)
            return st;
        J->path[old] = 0;
    }
    return DG_OK;
}

static dg_status read_field(pj *J, ProtobufCMessage *msg,
                            const ProtobufCFieldDescriptor *f,
                            const cJSON *v, int depth)
{
    char *base = (char *)msg;
    if (f->label != PROTOBUF_C_LABEL_REPEATED) {
        int oneof = (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0;
        if (oneof) /* set first: a half-read member is freed with msg */
            *(uint32_t *)(base + f->quantifier_offset) = f->id;
        dg_status st = read_value(J, f, v, base + f->offset, depth);
        if (!st && !oneof && f->label == PROTOBUF_C_LABEL_OPTIONAL &&
            f->quantifier_offset && f->type != PROTOBUF_C_TYPE_MESSAGE &&
            f->type != PROTOBUF_C_TYPE_STRING)
            *(protobuf_c_boolean *)(base + f->quantifier_offset) = 1;
        return st;
    }
    int map = is_map(f);
    if (map ? !cJSON_IsObject(v) : !cJSON_IsArray(v))
        return bad(J, map ? "expected an object (a map)" : "expected an array");
    size_t cnt = (size_t)cJSON_GetArraySize(v);
    size_t *n = (size_t *)(base + f->quantifier_offset);
    void **arr = (void **)(base + f->offset);
    if (cnt == 0)
        return DG_OK;
    if (!(*arr = J->a->alloc(J->a->allocator_data, cnt * type_size(f->type))))
        return dg_err_nomem(J->err, "GraphDef JSON");
    memset(*arr, 0, cnt * type_size(f->type));
    if (map)
        return read_map(J, f, v, arr, n, depth);
    int k = 0;
    for (const cJSON *x = v->child; x; x = x->next, k++) {
        size_t old = push(J, "[%d]", NULL, k);
        void *slot = (char *)*arr + *n * type_size(f->type);
        dg_status st = read_value(J, f, x, slot, depth);
        if (!st || (f->type == PROTOBUF_C_TYPE_MESSAGE && *(void **)slot))
            (*n)++; /* owned by msg from here: freed with it */
        if (st)
            return st;
        J->path[old] = 0;
    }
    return DG_OK;
}

static dg_status read_msg(pj *J, const cJSON *obj,
                          const ProtobufCMessageDescriptor *d,
                          ProtobufCMessage **out, int depth)
{
    if (depth > MAX_DEPTH)
        return bad(J, "nested too deeply");
    if (!cJSON_IsObject(obj))
        return bad(J, "expected an object");
    ProtobufCMessage *msg = J->a->alloc(J->a->allocator_data,
                                        d->sizeof_message);
    if (!msg)
        return dg_err_nomem(J->err, "GraphDef JSON");
    protobuf_c_message_init(d, msg);
    *out = msg; /* the caller frees it, whole, on errors too */
    for (const cJSON *m = obj->child; m; m = m->next) {
        size_t old = push(J, J->path[0] ? ".%s" : "%s", m->string, 0);
        const ProtobufCFieldDescriptor *f = find_field(d, m->string);
        if (ignored(J, d, m->string)) {
            J->path[old] = 0;
            continue;
        }
        if (!f)
            return bad(J, "unknown field");
        if (cJSON_IsNull(m)) {
            J->path[old] = 0;
            continue; /* the default */
        }
        for (const cJSON *q = obj->child; q != m; q = q->next)
            if (find_field(d, q->string) == f)
                return bad(J, "field given twice");
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(uint32_t *)((char *)msg + f->quantifier_offset))
            return bad(J, "a second field of the same oneof");
        dg_status st = read_field(J, msg, f, m, depth);
        if (st)
            return st;
        J->path[old] = 0;
    }
    return DG_OK;
}

dg_status dgc_pbjson_read(const cJSON *obj,
                          const ProtobufCMessageDescriptor *d,
                          const dgc_pbjson_opts *opts, ProtobufCAllocator *a,
                          ProtobufCMessage **out, dg_error *err)
{
    pj J = {a, err, opts, ""};
    *out = NULL;
    dg_status st = read_msg(&J, obj, d, out, 0);
    if (st && *out) {
        protobuf_c_message_free_unpacked(*out, a);
        *out = NULL;
    }
    return st;
}
