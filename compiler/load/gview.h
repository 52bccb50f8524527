/*
 * gview.h -- one read-only view of a TensorFlow GraphDef value, whichever
 * reader produced it: a cJSON value of a GraphDef in proto3 JSON, or a
 * protobuf-c message field of a binary GraphDef read through its
 * descriptor (load_gview.c).  The GraphDef -> IR conversion
 * (load_graphdef*.c) reads only this view, so both formats go through
 * one conversion and no JSON tree is made for a binary file.
 *
 * A protobuf-c value answers as json_format.MessageToJson writes it:
 * messages and the `attr` map are objects, repeated fields arrays (absent
 * when empty), int64 strings, int32 numbers, enums their names, NaN and
 * infinities strings, proto3 default values absent (a NodeDef's name and
 * op always present); bytes are strings whose bytes are read raw (no
 * base64).  A key repeated in the `attr` map: the last entry wins.
 */
#ifndef DGC_GVIEW_H
#define DGC_GVIEW_H

#include <cJSON.h>

#include <stddef.h>
#include <stdint.h>

struct dgc_jdoc;
struct ProtobufCFieldDescriptor;

/* What a dgc_gv is (its t). */
enum {
    DGC_GVT_NONE,
    DGC_GVT_JSON,
    DGC_GVT_PB,    /* field fd (i < 0) or element i of it, of message p */
    DGC_GVT_PBOBJ, /* a message: p itself (fd NULL), or what field fd /
                      its element i / map entry i's value holds */
    DGC_GVT_PBMAP  /* the `attr` map field fd of p, as an object */
};

/* A value (or nothing: dgc_gv_ok is 0).  Passed by value; the accessors
 * below are inline for JSON (the streamed GraphDef JSON's hot path) and
 * call load_gview.c for protobuf-c values. */
typedef struct dgc_gv {
    const void *p;  /* JSON: the cJSON value; pb: the message holding fd,
                       or (fd NULL) the object itself */
    const struct ProtobufCFieldDescriptor *fd;
    int32_t i;      /* pb: element of a repeated field / map entry, -1 */
    uint8_t t;      /* DGC_GVT_* */
} dgc_gv;

/* JSON kinds (dgc_gv_type). */
enum { DGC_GV_NONE, DGC_GV_STRING, DGC_GV_NUMBER, DGC_GV_BOOL, DGC_GV_NULL,
       DGC_GV_ARRAY, DGC_GV_OBJECT, DGC_GV_INVALID };

/* The protobuf-c side of the accessors below (load_gview.c). */
int dgc_gv_pb_type(const dgc_gv *v);
int dgc_gv_pb_true(const dgc_gv *v);
dgc_gv dgc_gv_pb_field(const dgc_gv *obj, const char *camel,
                       const char *snake);
dgc_gv dgc_gv_pb_first(const dgc_gv *v);
dgc_gv dgc_gv_pb_next(const dgc_gv *v);
const char *dgc_gv_pb_key(const dgc_gv *v);
int dgc_gv_pb_count(const dgc_gv *v);
const char *dgc_gv_pb_str(const dgc_gv *v);
double dgc_gv_pb_num(const dgc_gv *v);

/* The cJSON value of a JSON v. */
static inline const cJSON *dgc_gv_j(dgc_gv v)
{
    return v.p;
}
#define J(v) dgc_gv_j(v)

/* A cJSON value (NULL: nothing) / a protobuf-c message as an object. */
static inline dgc_gv dgc_gv_json(const cJSON *x)
{
    dgc_gv v = {x, NULL, -1, x ? DGC_GVT_JSON : DGC_GVT_NONE};
    return v;
}
dgc_gv dgc_gv_pb(const void *msg);

/* Whether v is a value; its JSON kind (DGC_GV_*). */
static inline int dgc_gv_ok(dgc_gv v)
{
    return v.t != DGC_GVT_NONE;
}

static inline int dgc_gv_type(dgc_gv v)
{
    if (v.t != DGC_GVT_JSON)
        return dgc_gv_pb_type(&v);
    switch (J(v)->type & 0xFF) {
    case cJSON_String: return DGC_GV_STRING;
    case cJSON_Number: return DGC_GV_NUMBER;
    case cJSON_True:
    case cJSON_False: return DGC_GV_BOOL;
    case cJSON_NULL: return DGC_GV_NULL;
    case cJSON_Array: return DGC_GV_ARRAY;
    case cJSON_Object: return DGC_GV_OBJECT;
    default: return DGC_GV_INVALID;
    }
}

/* The kind as messages say it ("a string", ... "missing": dgc_json_kind's
 * words). */
const char *dgc_gv_kind(dgc_gv v);

static inline int dgc_gv_is_object(dgc_gv v)
{
    return dgc_gv_type(v) == DGC_GV_OBJECT;
}
static inline int dgc_gv_is_array(dgc_gv v)
{
    return dgc_gv_type(v) == DGC_GV_ARRAY;
}
static inline int dgc_gv_is_string(dgc_gv v)
{
    return dgc_gv_type(v) == DGC_GV_STRING;
}
static inline int dgc_gv_is_number(dgc_gv v)
{
    return dgc_gv_type(v) == DGC_GV_NUMBER;
}
static inline int dgc_gv_is_bool(dgc_gv v)
{
    return dgc_gv_type(v) == DGC_GV_BOOL;
}

/* A bool that is true. */
static inline int dgc_gv_is_true(dgc_gv v)
{
    if (v.t == DGC_GVT_JSON)
        return (J(v)->type & 0xFF) == cJSON_True;
    return dgc_gv_pb_true(&v);
}

/* Member of object obj by its lowerCamelCase JSON name or its snake_case
 * proto name (JSON accepts both; protobuf-c is asked for snake, or camel
 * when snake is NULL); nothing if absent or obj is no object. */
static inline dgc_gv dgc_gv_field(dgc_gv obj, const char *camel,
                                  const char *snake)
{
    if (obj.t != DGC_GVT_JSON)
        return dgc_gv_pb_field(&obj, camel, snake);
    if ((J(obj)->type & 0xFF) != cJSON_Object)
        return dgc_gv_json(NULL);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(obj.p, camel);
    if (!x && snake)
        x = cJSON_GetObjectItemCaseSensitive(obj.p, snake);
    return dgc_gv_json(x);
}

/* First member of an object / element of an array (nothing if none or
 * neither), and the one after v. */
static inline dgc_gv dgc_gv_first(dgc_gv v)
{
    if (v.t != DGC_GVT_JSON)
        return dgc_gv_pb_first(&v);
    int t = J(v)->type & 0xFF;
    return dgc_gv_json(t == cJSON_Object || t == cJSON_Array ? J(v)->child
                                                             : NULL);
}

static inline dgc_gv dgc_gv_next(dgc_gv v)
{
    return v.t == DGC_GVT_JSON ? dgc_gv_json(J(v)->next) : dgc_gv_pb_next(&v);
}

/* A member's key (NULL for an array element). */
static inline const char *dgc_gv_key(dgc_gv v)
{
    return v.t == DGC_GVT_JSON ? J(v)->string : dgc_gv_pb_key(&v);
}

/* Elements of an array (0 for anything else). */
static inline int dgc_gv_count(dgc_gv v)
{
    if (v.t != DGC_GVT_JSON)
        return dgc_gv_pb_count(&v);
    return (J(v)->type & 0xFF) == cJSON_Array ? cJSON_GetArraySize(v.p) : 0;
}

/* A string's text ("" when v holds no text: bytes, int64, not a string);
 * an enum's name. */
static inline const char *dgc_gv_str(dgc_gv v)
{
    if (v.t != DGC_GVT_JSON)
        return dgc_gv_pb_str(&v);
    return (J(v)->type & 0xFF) == cJSON_String ? J(v)->valuestring : "";
}

/* An empty JSON string (a binary field is never present empty). */
static inline int dgc_gv_empty_str(dgc_gv v)
{
    return v.t == DGC_GVT_JSON && (J(v)->type & 0xFF) == cJSON_String &&
           !J(v)->valuestring[0];
}

/* A number's value (0 if none). */
static inline double dgc_gv_num(dgc_gv v)
{
    if (v.t != DGC_GVT_JSON)
        return dgc_gv_pb_num(&v);
    return (J(v)->type & 0xFF) == cJSON_Number ? J(v)->valuedouble : 0;
}

/* An int64 as proto3 JSON writes it (a decimal string) or an integer
 * number (doc: the JSON's text, for exact digits).  0 ok, -1 not one. */
int dgc_gv_i64(const struct dgc_jdoc *doc, dgc_gv v, int64_t *out);
/* A float or double: a number, "NaN" / "Infinity" / "-Infinity" or a
 * numeric string.  0 ok, -1 not one. */
int dgc_gv_f64(dgc_gv v, double *out);

/* A bytes value: JSON base64 (standard or URL-safe) decoded into *own
 * (dg_malloc'd, NUL-terminated, the caller frees), or a binary field's
 * bytes in place (*own NULL).  0 ok, -1 not a string or not base64, -2
 * nomem. */
int dgc_gv_bytes(dgc_gv v, const unsigned char **b, size_t *n,
                 unsigned char **own);
/* The same always as a dg_malloc'd NUL-terminated copy in *out. */
int dgc_gv_bytes_dup(dgc_gv v, unsigned char **out, size_t *n);

/* A key twice among obj's members: 1 (*dup names it), else 0 (a binary
 * map keeps its last entry per key: never). */
int dgc_gv_dup_key(dgc_gv obj, const char **dup);

#undef J

/* Standard or URL-safe base64 (padding optional) into a dg_malloc'd
 * NUL-terminated buffer (load_gview.c; also the proto3-JSON reader's).
 * 0 ok, -1 invalid, -2 nomem. */
int dgc_base64(const char *s, unsigned char **out, size_t *n);

#endif
