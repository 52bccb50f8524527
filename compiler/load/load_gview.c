/*
 * load_gview.c -- the GraphDef value view (gview.h): a cJSON value, or a
 * protobuf-c field read through its message descriptor as proto3 JSON
 * (MessageToJson) would show it, without building that JSON.
 */
#include "gview.h"
#include "load_priv.h"
#include "dg_alloc.h"
#include "tf_graph.pb-c.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef ProtobufCFieldDescriptor pbfd;

static const dgc_gv none;

static int is_map(const pbfd *fd)
{
    return fd->type == PROTOBUF_C_TYPE_MESSAGE &&
           fd->descriptor == &dgtf__node_def__attr_entry__descriptor;
}

static size_t pb_count(const ProtobufCMessage *m, const pbfd *fd)
{
    return *(const size_t *)((const char *)m + fd->quantifier_offset);
}

static const char *pb_base(const ProtobufCMessage *m, const pbfd *fd)
{
    return (const char *)m + fd->offset;
}

/* Whether field fd of m holds a value MessageToJson writes. */
static int pb_present(const ProtobufCMessage *m, const pbfd *fd)
{
    const char *p = pb_base(m, fd);
    if (fd->label == PROTOBUF_C_LABEL_REPEATED)
        return pb_count(m, fd) > 0;
    if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
        return *(const uint32_t *)((const char *)m + fd->quantifier_offset) ==
               fd->id;
    if (m->descriptor == &dgtf__node_def__descriptor && fd->id <= 2)
        return 1; /* a NodeDef's name and op: always */
    switch (fd->type) {
    case PROTOBUF_C_TYPE_STRING: {
        const char *s = *(char *const *)p;
        return s && s[0];
    }
    case PROTOBUF_C_TYPE_BYTES:
        return ((const ProtobufCBinaryData *)p)->len > 0;
    case PROTOBUF_C_TYPE_MESSAGE:
        return *(void *const *)p != NULL;
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
        return *(const uint64_t *)p != 0;
    case PROTOBUF_C_TYPE_FLOAT:
        return *(const float *)p != 0;
    case PROTOBUF_C_TYPE_DOUBLE:
        return *(const double *)p != 0;
    case PROTOBUF_C_TYPE_BOOL:
        return *(const protobuf_c_boolean *)p != 0;
    default: /* 32-bit integers, enums */
        return *(const uint32_t *)p != 0;
    }
}

static size_t elem_size(const pbfd *fd)
{
    switch (fd->type) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
        return 8;
    case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_MESSAGE:
        return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES:
        return sizeof(ProtobufCBinaryData);
    case PROTOBUF_C_TYPE_BOOL:
        return sizeof(protobuf_c_boolean);
    default:
        return 4;
    }
}

/* Where a scalar value of v (a field or an element) lies. */
static const void *pb_at(dgc_gv v)
{
    const char *p = pb_base(v.p, v.fd);
    if (v.i < 0)
        return p;
    return *(const char *const *)p + (size_t)v.i * elem_size(v.fd);
}

/* Member fd of m (present). */
static dgc_gv member(const ProtobufCMessage *m, const pbfd *fd)
{
    dgc_gv v = {m, fd, -1, DGC_GVT_PB};
    if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
        if (is_map(fd))
            v.t = DGC_GVT_PBMAP;
    } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        v.t = DGC_GVT_PBOBJ;
    }
    return v;
}

/* Element i of repeated field fd of m. */
static dgc_gv element(const ProtobufCMessage *m, const pbfd *fd, size_t i)
{
    dgc_gv v = {m, fd, (int32_t)i, DGC_GVT_PB};
    if (fd->type == PROTOBUF_C_TYPE_MESSAGE)
        v.t = DGC_GVT_PBOBJ;
    return v;
}

static const Dgtf__NodeDef__AttrEntry *entry(const ProtobufCMessage *m,
                                             const pbfd *fd, size_t k)
{
    return (*(const Dgtf__NodeDef__AttrEntry *const *const *)pb_base(m,
                                                                     fd))[k];
}

static const char *entry_key(const Dgtf__NodeDef__AttrEntry *e)
{
    return e->key ? e->key : "";
}

/* Map entry k of fd in m as a member, when no later entry has its key
 * (the last one wins); else nothing. */
static dgc_gv map_member(const ProtobufCMessage *m, const pbfd *fd, size_t k)
{
    size_t n = pb_count(m, fd);
    const char *key = entry_key(entry(m, fd, k));
    for (size_t j = k + 1; j < n; j++)
        if (strcmp(entry_key(entry(m, fd, j)), key) == 0)
            return none;
    dgc_gv v = {m, fd, (int32_t)k, DGC_GVT_PBOBJ};
    return v;
}

/* The first member of the map at or after entry k. */
static dgc_gv map_from(const ProtobufCMessage *m, const pbfd *fd, size_t k)
{
    for (size_t n = pb_count(m, fd); k < n; k++) {
        dgc_gv v = map_member(m, fd, k);
        if (v.t)
            return v;
    }
    return none;
}

/* The first present field of m at or after its field index k. */
static dgc_gv fields_from(const ProtobufCMessage *m, unsigned k)
{
    for (; m && k < m->descriptor->n_fields; k++)
        if (pb_present(m, &m->descriptor->fields[k]))
            return member(m, &m->descriptor->fields[k]);
    return none;
}

/* The message an object v is (NULL: an empty one). */
static const ProtobufCMessage *pb_obj(const dgc_gv *v)
{
    if (!v->fd)
        return v->p;
    if (is_map(v->fd))
        return (const ProtobufCMessage *)entry(v->p, v->fd,
                                               (size_t)v->i)->value;
    const char *p = pb_base(v->p, v->fd);
    if (v->i < 0)
        return *(const ProtobufCMessage *const *)p;
    return (*(const ProtobufCMessage *const *const *)p)[v->i];
}

dgc_gv dgc_gv_pb(const void *msg)
{
    dgc_gv v = {msg, NULL, -1, DGC_GVT_PBOBJ};
    return v;
}

int dgc_gv_pb_type(const dgc_gv *w)
{
    dgc_gv v = *w;
    if (v.t != DGC_GVT_PB)
        return v.t == DGC_GVT_NONE ? DGC_GV_NONE : DGC_GV_OBJECT;
    if (v.i < 0 && v.fd->label == PROTOBUF_C_LABEL_REPEATED)
        return DGC_GV_ARRAY;
    const void *p = pb_at(v);
    switch (v.fd->type) {
    case PROTOBUF_C_TYPE_ENUM:
        return protobuf_c_enum_descriptor_get_value(v.fd->descriptor,
                                                    *(const int *)p)
                   ? DGC_GV_STRING : DGC_GV_NUMBER;
    case PROTOBUF_C_TYPE_FLOAT:
        return isfinite(*(const float *)p) ? DGC_GV_NUMBER : DGC_GV_STRING;
    case PROTOBUF_C_TYPE_DOUBLE:
        return isfinite(*(const double *)p) ? DGC_GV_NUMBER : DGC_GV_STRING;
    case PROTOBUF_C_TYPE_BOOL:
        return DGC_GV_BOOL;
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_UINT32:
    case PROTOBUF_C_TYPE_FIXED32:
        return DGC_GV_NUMBER;
    default: /* strings, bytes, 64-bit integers */
        return DGC_GV_STRING;
    }
}

const char *dgc_gv_kind(dgc_gv v)
{
    static const char *const k[] = {
        [DGC_GV_NONE] = "missing", [DGC_GV_STRING] = "a string",
        [DGC_GV_NUMBER] = "a number", [DGC_GV_BOOL] = "a bool",
        [DGC_GV_NULL] = "null", [DGC_GV_ARRAY] = "an array",
        [DGC_GV_OBJECT] = "an object", [DGC_GV_INVALID] = "invalid"};
    return k[dgc_gv_type(v)];
}

int dgc_gv_pb_true(const dgc_gv *v)
{
    return v->t == DGC_GVT_PB && dgc_gv_pb_type(v) == DGC_GV_BOOL &&
           *(const protobuf_c_boolean *)pb_at(*v);
}

dgc_gv dgc_gv_pb_field(const dgc_gv *o, const char *camel, const char *snake)
{
    const char *name = snake ? snake : camel;
    if (o->t == DGC_GVT_PBMAP) {
        for (size_t k = pb_count(o->p, o->fd); k-- > 0;)
            if (strcmp(entry_key(entry(o->p, o->fd, k)), name) == 0)
                return map_member(o->p, o->fd, k);
        return none;
    }
    const ProtobufCMessage *m = o->t == DGC_GVT_PBOBJ ? pb_obj(o) : NULL;
    if (!m)
        return none;
    const pbfd *fd =
        protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name);
    return fd && pb_present(m, fd) ? member(m, fd) : none;
}

dgc_gv dgc_gv_pb_first(const dgc_gv *v)
{
    switch (v->t) {
    case DGC_GVT_PBOBJ:
        return fields_from(pb_obj(v), 0);
    case DGC_GVT_PBMAP:
        return map_from(v->p, v->fd, 0);
    case DGC_GVT_PB:
        return dgc_gv_pb_count(v) > 0 ? element(v->p, v->fd, 0) : none;
    default:
        return none;
    }
}

dgc_gv dgc_gv_pb_next(const dgc_gv *v)
{
    if (v->t == DGC_GVT_NONE || !v->fd)
        return none;
    if (is_map(v->fd) && v->i >= 0)
        return map_from(v->p, v->fd, (size_t)v->i + 1);
    if (v->i >= 0)
        return (size_t)v->i + 1 < pb_count(v->p, v->fd)
                   ? element(v->p, v->fd, (size_t)v->i + 1) : none;
    const ProtobufCMessage *m = v->p;
    return fields_from(m, (unsigned)(v->fd - m->descriptor->fields) + 1);
}

const char *dgc_gv_pb_key(const dgc_gv *v)
{
    if (!v->fd)
        return NULL;
    if (v->i < 0)
        return v->fd->name;
    return is_map(v->fd) ? entry_key(entry(v->p, v->fd, (size_t)v->i)) : NULL;
}

int dgc_gv_pb_count(const dgc_gv *v)
{
    return dgc_gv_pb_type(v) == DGC_GV_ARRAY ? (int)pb_count(v->p, v->fd) : 0;
}

const char *dgc_gv_pb_str(const dgc_gv *w)
{
    dgc_gv v = *w;
    if (v.t != DGC_GVT_PB ||
        (v.i < 0 && v.fd->label == PROTOBUF_C_LABEL_REPEATED))
        return "";
    const void *p = pb_at(v);
    if (v.fd->type == PROTOBUF_C_TYPE_STRING)
        return *(char *const *)p ? *(char *const *)p : "";
    if (v.fd->type == PROTOBUF_C_TYPE_ENUM) {
        const ProtobufCEnumValue *e = protobuf_c_enum_descriptor_get_value(
            v.fd->descriptor, *(const int *)p);
        return e ? e->name : "";
    }
    return "";
}

/* A pb scalar's value as int64 (*is_int: it is an integer field). */
static double pb_num(dgc_gv v, int64_t *iv, int *is_int)
{
    const void *p = pb_at(v);
    *is_int = 1;
    switch (v.fd->type) {
    case PROTOBUF_C_TYPE_INT64: case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
        *iv = *(const int64_t *)p;
        return (double)*iv;
    case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_FIXED64: {
        uint64_t u = *(const uint64_t *)p;
        *is_int = u <= INT64_MAX;
        *iv = (int64_t)u;
        return (double)u;
    }
    case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32:
    case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_ENUM:
        *iv = *(const int32_t *)p;
        return (double)*iv;
    case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_FIXED32:
        *iv = *(const uint32_t *)p;
        return (double)*iv;
    case PROTOBUF_C_TYPE_FLOAT:
        *is_int = 0;
        return *(const float *)p;
    case PROTOBUF_C_TYPE_DOUBLE:
        *is_int = 0;
        return *(const double *)p;
    default:
        *is_int = 0;
        return 0;
    }
}

double dgc_gv_pb_num(const dgc_gv *v)
{
    if (dgc_gv_pb_type(v) != DGC_GV_NUMBER)
        return 0;
    int64_t iv;
    int is_int;
    return pb_num(*v, &iv, &is_int);
}

int dgc_gv_i64(const dgc_jdoc *doc, dgc_gv v, int64_t *out)
{
    if (v.t == DGC_GVT_JSON) {
        const cJSON *j = v.p;
        if (cJSON_IsString(j)) {
            const char *s = j->valuestring;
            char *end;
            errno = 0;
            long long x = strtoll(s, &end, 10);
            if (!*s || *end || errno)
                return -1;
            *out = (int64_t)x;
            return 0;
        }
        return dgc_json_int64(doc, j, out) ? -1 : 0;
    }
    int t = dgc_gv_type(v);
    if (v.t != DGC_GVT_PB || (t != DGC_GV_NUMBER && t != DGC_GV_STRING) ||
        v.fd->type == PROTOBUF_C_TYPE_ENUM)
        return -1;
    int64_t iv;
    int is_int;
    pb_num(v, &iv, &is_int);
    if (!is_int)
        return -1;
    *out = iv;
    return 0;
}

int dgc_gv_f64(dgc_gv v, double *out)
{
    int t = dgc_gv_type(v);
    if (t == DGC_GV_NUMBER) {
        *out = dgc_gv_num(v);
        return 0;
    }
    if (t != DGC_GV_STRING)
        return -1;
    if (v.t == DGC_GVT_PB && v.fd->type != PROTOBUF_C_TYPE_STRING &&
        v.fd->type != PROTOBUF_C_TYPE_ENUM &&
        v.fd->type != PROTOBUF_C_TYPE_BYTES) {
        int64_t iv;
        int is_int;
        *out = pb_num(v, &iv, &is_int); /* NaN, infinities, int64 */
        return 0;
    }
    const char *s = dgc_gv_str(v);
    if (strcmp(s, "NaN") == 0) { *out = NAN; return 0; }
    if (strcmp(s, "Infinity") == 0) { *out = INFINITY; return 0; }
    if (strcmp(s, "-Infinity") == 0) { *out = -INFINITY; return 0; }
    char *end;
    *out = strtod(s, &end);
    return (*s && !*end) ? 0 : -1;
}

static int b64_val(int c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

int dgc_base64(const char *s, unsigned char **out, size_t *n)
{
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == '=')
        len--;
    if (len % 4 == 1)
        return -1;
    unsigned char *b = dg_malloc(len / 4 * 3 + 3);
    if (!b)
        return -2;
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        int v = b64_val((unsigned char)s[i]);
        if (v < 0) {
            dg_free(b);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            b[k++] = (unsigned char)(acc >> bits);
        }
    }
    b[k] = 0;
    *out = b;
    *n = k;
    return 0;
}

int dgc_gv_bytes(dgc_gv v, const unsigned char **b, size_t *n,
                 unsigned char **own)
{
    *own = NULL;
    if (v.t == DGC_GVT_JSON) {
        const cJSON *j = v.p;
        if (!cJSON_IsString(j))
            return -1;
        int rc = dgc_base64(j->valuestring, own, n);
        *b = *own;
        return rc;
    }
    if (v.t != DGC_GVT_PB || v.fd->type != PROTOBUF_C_TYPE_BYTES ||
        (v.i < 0 && v.fd->label == PROTOBUF_C_LABEL_REPEATED))
        return -1;
    const ProtobufCBinaryData *d = pb_at(v);
    *b = d->data;
    *n = d->len;
    return 0;
}

int dgc_gv_bytes_dup(dgc_gv v, unsigned char **out, size_t *n)
{
    const unsigned char *b;
    unsigned char *own;
    int rc = dgc_gv_bytes(v, &b, n, &own);
    if (rc || own) {
        *out = own;
        return rc;
    }
    if (!(*out = dg_malloc(*n + 1)))
        return -2;
    if (*n)
        memcpy(*out, b, *n);
    (*out)[*n] = 0;
    return 0;
}

int dgc_gv_dup_key(dgc_gv obj, const char **dup)
{
    return obj.t == DGC_GVT_JSON && dgc_json_dup_key(obj.p, dup);
}
