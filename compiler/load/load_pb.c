/*
 * load_pb.c -- binary TensorFlow GraphDef (`.pb`) input.
 *
 * protobuf-c parses the file with the message descriptors protoc-c
 * generates from tf_graph.proto; the parsed GraphDef is then written out as
 * the proto3 JSON tree json_format.MessageToJson would give for it (int64 as
 * decimal strings, bytes as base64, enums by name, default values left out;
 * only tensor_content stays raw bytes, marked DGC_JSON_RAWBYTES) and handed to the GraphDef JSON loader (load_graphdef*.c).  So both
 * formats go through one conversion of nodes, attributes, tensors, devices
 * and `_class` colocation into the IR, and behave alike by construction.
 *
 * The format is told by content (dgc_input_kind): JSON text has no control
 * bytes, a binary GraphDef always has some (every NodeDef's `op` field
 * starts with the byte 0x12).
 */
#include "format.h"
#include "load_function.h"
#include "dg_alloc.h"
#include "tf_graph.pb-c.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define BRACE_SCAN 65536

int dgc_input_kind(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                       text[i] == '\r'))
        i++;
    int brace = i < len && text[i] == '{';
    /* a binary GraphDef that starts with '{' (a first node of 123 bytes)
     * has a control byte within its first node's first fields (name, op):
     * large JSON graphs need not be read twice */
    size_t end = brace && len > BRACE_SCAN ? BRACE_SCAN : len;
    for (size_t k = 0; k < end; k++) {
        unsigned char c = (unsigned char)text[k];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
            return brace ? DGC_INPUT_EITHER : DGC_INPUT_BINARY;
    }
    return DGC_INPUT_JSON;
}

/* ---- protobuf-c allocation through dg_alloc ---------------------------- */

static int pb_oom; /* an allocation of this unpack failed */

static void *pb_alloc(void *data, size_t n)
{
    (void)data;
    void *p = dg_malloc(n);
    pb_oom |= !p;
    return p;
}

static void pb_free(void *data, void *p)
{
    (void)data;
    dg_free(p);
}

static ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, NULL};

/* ---- building the JSON tree --------------------------------------------- */

typedef struct jb {
    int oom;
} jb;

/* Attach item (NULL: allocation failed) to an object under key, or to an
 * array when key is NULL.  Returns item, NULL on failure. */
static cJSON *put(jb *b, cJSON *parent, const char *key, cJSON *item)
{
    if (!item || !parent) {
        cJSON_Delete(item);
        b->oom = 1;
        return NULL;
    }
    cJSON_bool ok = key ? cJSON_AddItemToObject(parent, key, item)
                        : cJSON_AddItemToArray(parent, item);
    if (!ok) {
        cJSON_Delete(item);
        b->oom = 1;
        return NULL;
    }
    return item;
}

static void put_i64(jb *b, cJSON *parent, const char *key, int64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)v);
    put(b, parent, key, cJSON_CreateString(s));
}

static void put_u64(jb *b, cJSON *parent, const char *key, uint64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%llu", (unsigned long long)v);
    put(b, parent, key, cJSON_CreateString(s));
}

/* A float or double: a number, or "NaN" / "Infinity" / "-Infinity". */
static void put_f64(jb *b, cJSON *parent, const char *key, double v)
{
    if (isnan(v))
        put(b, parent, key, cJSON_CreateString("NaN"));
    else if (isinf(v))
        put(b, parent, key, cJSON_CreateString(v > 0 ? "Infinity"
                                                     : "-Infinity"));
    else
        put(b, parent, key, cJSON_CreateNumber(v));
}

static void put_b64(jb *b, cJSON *parent, const char *key,
                    const ProtobufCBinaryData *d)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *s = dg_malloc(d->len / 3 * 4 + 5);
    if (!s) {
        b->oom = 1;
        return;
    }
    size_t k = 0, i = 0;
    for (; i + 2 < d->len; i += 3) {
        uint32_t v = (uint32_t)d->data[i] << 16 |
                     (uint32_t)d->data[i + 1] << 8 | d->data[i + 2];
        s[k++] = tab[v >> 18];
        s[k++] = tab[(v >> 12) & 63];
        s[k++] = tab[(v >> 6) & 63];
        s[k++] = tab[v & 63];
    }
    if (i < d->len) {
        uint32_t v = (uint32_t)d->data[i] << 16;
        if (i + 1 < d->len)
            v |= (uint32_t)d->data[i + 1] << 8;
        s[k++] = tab[v >> 18];
        s[k++] = tab[(v >> 12) & 63];
        s[k++] = i + 1 < d->len ? tab[(v >> 6) & 63] : '=';
        s[k++] = '=';
    }
    s[k] = 0;
    put(b, parent, key, cJSON_CreateString(s));
    dg_free(s);
}

/* tensor_content as raw bytes (DGC_JSON_RAWBYTES), not base64: the
 * loader copies them into the tensor as they are. */
static void put_raw(jb *b, cJSON *parent, const char *key,
                    const ProtobufCBinaryData *d)
{
    cJSON *s = put(b, parent, key, cJSON_CreateString(""));
    char *copy = dg_malloc(d->len + 1);
    if (!s || !copy) {
        dg_free(copy);
        b->oom = 1;
        return;
    }
    memcpy(copy, d->data, d->len);
    copy[d->len] = 0;
    dg_free(s->valuestring);
    s->valuestring = copy;
    s->valuedouble = (double)d->len;
    s->type |= DGC_JSON_RAWBYTES;
}

/* A DataType by name ("DT_FLOAT_REF"), or its number if this file's enum
 * does not know it. */
static void put_dtype(jb *b, cJSON *parent, const char *key, int v)
{
    const ProtobufCEnumValue *e =
        protobuf_c_enum_descriptor_get_value(&dgtf__data_type__descriptor, v);
    put(b, parent, key, e ? cJSON_CreateString(e->name)
                          : cJSON_CreateNumber(v));
}

static cJSON *put_obj(jb *b, cJSON *parent, const char *key)
{
    return put(b, parent, key, cJSON_CreateObject());
}

static cJSON *put_arr(jb *b, cJSON *parent, const char *key, size_t n)
{
    return n ? put(b, parent, key, cJSON_CreateArray()) : NULL;
}

/* A repeated field as a JSON list: `n` elements of `arr`, each written by
 * the statement `one` with `a` the list and `x` the element. */
#define LIST(b, parent, key, n, arr, one)                                  \
    do {                                                                   \
        cJSON *a = put_arr(b, parent, key, n);                             \
        for (size_t k_ = 0; a && k_ < (n); k_++) {                         \
            __typeof__((arr)[0]) x = (arr)[k_];                            \
            one;                                                           \
        }                                                                  \
    } while (0)

static void put_shape(jb *b, cJSON *parent, const char *key,
                      const Dgtf__TensorShapeProto *s)
{
    cJSON *o = put_obj(b, parent, key);
    if (!o || !s)
        return;
    LIST(b, o, "dim", s->n_dim, s->dim, {
        cJSON *d = put_obj(b, a, NULL);
        if (x->size)
            put_i64(b, d, "size", x->size);
        if (x->name && x->name[0])
            put(b, d, "name", cJSON_CreateString(x->name));
    });
    if (s->unknown_rank)
        put(b, o, "unknownRank", cJSON_CreateTrue());
}

static void put_tensor(jb *b, cJSON *parent, const char *key,
                       const Dgtf__TensorProto *t)
{
    cJSON *o = put_obj(b, parent, key);
    if (!o)
        return;
    if (t->dtype)
        put_dtype(b, o, "dtype", t->dtype);
    if (t->tensor_shape)
        put_shape(b, o, "tensorShape", t->tensor_shape);
    if (t->version_number)
        put(b, o, "versionNumber", cJSON_CreateNumber(t->version_number));
    if (t->tensor_content.len)
        put_raw(b, o, "tensorContent", &t->tensor_content);
    LIST(b, o, "halfVal", t->n_half_val, t->half_val,
         put(b, a, NULL, cJSON_CreateNumber(x)));
    LIST(b, o, "floatVal", t->n_float_val, t->float_val, put_f64(b, a, NULL, x));
    LIST(b, o, "doubleVal", t->n_double_val, t->double_val,
         put_f64(b, a, NULL, x));
    LIST(b, o, "intVal", t->n_int_val, t->int_val,
         put(b, a, NULL, cJSON_CreateNumber(x)));
    LIST(b, o, "stringVal", t->n_string_val, t->string_val,
         put_b64(b, a, NULL, &x));
    LIST(b, o, "scomplexVal", t->n_scomplex_val, t->scomplex_val,
         put_f64(b, a, NULL, x));
    LIST(b, o, "int64Val", t->n_int64_val, t->int64_val, put_i64(b, a, NULL, x));
    LIST(b, o, "boolVal", t->n_bool_val, t->bool_val,
         put(b, a, NULL, cJSON_CreateBool(x)));
    LIST(b, o, "dcomplexVal", t->n_dcomplex_val, t->dcomplex_val,
         put_f64(b, a, NULL, x));
    LIST(b, o, "resourceHandleVal", t->n_resource_handle_val,
         t->resource_handle_val, (void)x; put_obj(b, a, NULL));
    LIST(b, o, "variantVal", t->n_variant_val, t->variant_val,
         (void)x; put_obj(b, a, NULL));
    LIST(b, o, "uint32Val", t->n_uint32_val, t->uint32_val,
         put(b, a, NULL, cJSON_CreateNumber(x)));
    LIST(b, o, "uint64Val", t->n_uint64_val, t->uint64_val,
         put_u64(b, a, NULL, x));
    if (t->float8_val.len)
        put_b64(b, o, "float8Val", &t->float8_val);
}

static void put_list(jb *b, cJSON *parent, const Dgtf__AttrValue__ListValue *l)
{
    cJSON *o = put_obj(b, parent, "list");
    if (!o)
        return;
    LIST(b, o, "s", l->n_s, l->s, put_b64(b, a, NULL, &x));
    LIST(b, o, "i", l->n_i, l->i, put_i64(b, a, NULL, x));
    LIST(b, o, "f", l->n_f, l->f, put_f64(b, a, NULL, x));
    LIST(b, o, "b", l->n_b, l->b, put(b, a, NULL, cJSON_CreateBool(x)));
    LIST(b, o, "type", l->n_type, l->type, put_dtype(b, a, NULL, x));
    LIST(b, o, "shape", l->n_shape, l->shape, put_shape(b, a, NULL, x));
    LIST(b, o, "tensor", l->n_tensor, l->tensor, put_tensor(b, a, NULL, x));
    LIST(b, o, "func", l->n_func, l->func, (void)x; put_obj(b, a, NULL));
}

static void put_attr(jb *b, cJSON *parent, const char *key,
                     const Dgtf__AttrValue *v)
{
    /* a key repeated in the map: the last one wins, as in protobuf */
    cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
    cJSON *o = put_obj(b, parent, key);
    if (!o || !v)
        return;
    switch (v->value_case) {
    case DGTF__ATTR_VALUE__VALUE_S: put_b64(b, o, "s", &v->s); break;
    case DGTF__ATTR_VALUE__VALUE_I: put_i64(b, o, "i", v->i); break;
    case DGTF__ATTR_VALUE__VALUE_F: put_f64(b, o, "f", v->f); break;
    case DGTF__ATTR_VALUE__VALUE_B: put(b, o, "b", cJSON_CreateBool(v->b)); break;
    case DGTF__ATTR_VALUE__VALUE_TYPE: put_dtype(b, o, "type", v->type); break;
    case DGTF__ATTR_VALUE__VALUE_SHAPE: put_shape(b, o, "shape", v->shape); break;
    case DGTF__ATTR_VALUE__VALUE_TENSOR:
        put_tensor(b, o, "tensor", v->tensor);
        break;
    case DGTF__ATTR_VALUE__VALUE_LIST: put_list(b, o, v->list); break;
    case DGTF__ATTR_VALUE__VALUE_FUNC: put_obj(b, o, "func"); break;
    case DGTF__ATTR_VALUE__VALUE_PLACEHOLDER:
        put(b, o, "placeholder", cJSON_CreateString(v->placeholder));
        break;
    default:
        break;
    }
}

static void put_node(jb *b, cJSON *arr, const Dgtf__NodeDef *n)
{
    cJSON *o = put_obj(b, arr, NULL);
    if (!o)
        return;
    put(b, o, "name", cJSON_CreateString(n->name));
    put(b, o, "op", cJSON_CreateString(n->op));
    LIST(b, o, "input", n->n_input, n->input,
         put(b, a, NULL, cJSON_CreateString(x)));
    if (n->device && n->device[0])
        put(b, o, "device", cJSON_CreateString(n->device));
    cJSON *at = n->n_attr ? put_obj(b, o, "attr") : NULL;
    for (size_t k = 0; at && k < n->n_attr; k++)
        put_attr(b, at, n->attr[k]->key, n->attr[k]->value);
}

static cJSON *to_json(jb *b, const Dgtf__GraphDef *gd)
{
    cJSON *root = cJSON_CreateObject();
    if (!root) {
        b->oom = 1;
        return NULL;
    }
    cJSON *nodes = put(b, root, "node", cJSON_CreateArray());
    for (size_t i = 0; nodes && i < gd->n_node && !b->oom; i++)
        put_node(b, nodes, gd->node[i]);
    if (gd->versions) {
        const Dgtf__VersionDef *v = gd->versions;
        cJSON *o = put_obj(b, root, "versions");
        if (o && v->producer)
            put(b, o, "producer", cJSON_CreateNumber(v->producer));
        if (o && v->min_consumer)
            put(b, o, "minConsumer", cJSON_CreateNumber(v->min_consumer));
        LIST(b, o, "badConsumers", v->n_bad_consumers, v->bad_consumers,
             put(b, a, NULL, cJSON_CreateNumber(x)));
    }
    if (gd->library) {
        const Dgtf__FunctionDefLibrary *l = gd->library;
        cJSON *o = put_obj(b, root, "library");
        LIST(b, o, "function", l->n_function, l->function,
             (void)x; put_obj(b, a, NULL));
        LIST(b, o, "gradient", l->n_gradient, l->gradient,
             (void)x; put_obj(b, a, NULL));
    }
    return root;
}

/* cJSON allocates through dg_alloc while a tree of ours is built or freed
 * (the hooks are global: loading is single-threaded). */
static void hooks_on(void)
{
    cJSON_Hooks h = {dg_malloc, dg_free};
    cJSON_InitHooks(&h);
}

int dgc_pb_to_json(const char *text, size_t len, cJSON **root, dg_error *err)
{
    *root = NULL;
    pb_oom = 0;
    Dgtf__GraphDef *gd = dgtf__graph_def__unpack(&pb_allocator, len,
                                                 (const uint8_t *)text);
    if (!gd)
        return pb_oom ? -1 : 1; /* malformed or truncated */
    if (gd->n_node == 0 && gd->base.n_unknown_fields > 0) {
        /* bytes that happen to parse, with nothing of a GraphDef in them */
        dgtf__graph_def__free_unpacked(gd, &pb_allocator);
        return 1;
    }
    /* a function library (a tf.function's graph, a frozen TF 2 model):
     * calls inlined, While / If lowered, TensorLists as TensorArrays */
    dgc_fn_graph fg;
    Dgtf__GraphDef flat = *gd;
    memset(&fg, 0, sizeof fg);
    if (gd->library && gd->library->n_function > 0) {
        dg_status st = dgc_fn_inline(gd, NULL, 0, &fg, err);
        if (st != DG_OK) {
            dgc_fn_free(&fg);
            dgtf__graph_def__free_unpacked(gd, &pb_allocator);
            return st == DG_E_NOMEM ? -1 : 2;
        }
        flat.node = fg.node;
        flat.n_node = fg.n_node;
        flat.library = NULL;
    }
    jb b = {0};
    hooks_on();
    cJSON *r = to_json(&b, &flat);
    if (b.oom) {
        cJSON_Delete(r);
        r = NULL;
    }
    cJSON_InitHooks(NULL);
    dgc_fn_free(&fg);
    dgtf__graph_def__free_unpacked(gd, &pb_allocator);
    if (!r)
        return -1;
    *root = r;
    return 0;
}

int dgc_pb_graph_json(const void *graphdef, cJSON **root)
{
    jb b = {0};
    hooks_on();
    cJSON *r = to_json(&b, graphdef);
    if (b.oom) {
        cJSON_Delete(r);
        r = NULL;
    }
    cJSON_InitHooks(NULL);
    *root = r;
    return r ? 0 : -1;
}

void dgc_pb_json_free(cJSON *root)
{
    hooks_on();
    cJSON_Delete(root);
    cJSON_InitHooks(NULL);
}

/* ---- the format's row (format.c) --------------------------------------- */

static int pb_detect(dgc_probe *p)
{
    switch (dgc_input_kind(p->text, p->len)) {
    case DGC_INPUT_BINARY: return DGC_DETECT_YES;
    case DGC_INPUT_EITHER: return DGC_DETECT_MAYBE; /* or JSON with stray
                                                       control bytes */
    default: return DGC_DETECT_NO;
    }
}

/* The binary GraphDef becomes the JSON tree the GraphDef JSON loader
 * reads (load_graphdef.c). */
static dg_status pb_load(dgc_probe *p, void *out, dg_error *err)
{
    dgc_graph *g = out;
    cJSON *pb = NULL;
    dg_status st = DG_OK;
    int rc = dgc_pb_to_json(p->text, p->len, &pb, err);
    if (rc < 0) {
        st = dg_err_nomem(err, "GraphDef");
    } else if (rc == 2) {
        st = err->code ? err->code : DG_E_GRAPH;
    } else if (rc == 0) {
        dgc_jdoc doc;
        memset(&doc, 0, sizeof doc);
        doc.root = pb;
        st = dgc_graphdef_load(g, &doc, pb, err);
    } else if (dgc_input_kind(p->text, p->len) == DGC_INPUT_BINARY) {
        st = dg_err(err, DG_E_GRAPH, "not a graph: neither JSON nor a "
                    "binary TensorFlow GraphDef (malformed or truncated "
                    "protobuf)");
    } else {
        p->declined = 1; /* JSON with control bytes: the JSON rows' */
    }
    dgc_pb_json_free(pb);
    return st;
}

const dgc_format dgc_format_graphdef_binary = {
    "graphdef-binary", DGC_FMT_GRAPH, pb_detect, pb_load};
