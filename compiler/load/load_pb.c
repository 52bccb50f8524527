/*
 * load_pb.c -- binary TensorFlow GraphDef (`.pb`) input.
 *
 * protobuf-c parses the file with the message descriptors protoc-c
 * generates from tf_graph.proto; the GraphDef loader (load_graphdef*.c)
 * then reads the parsed messages through the value view (gview.h), which
 * answers as the proto3 JSON json_format.MessageToJson would give, so both
 * formats go through one conversion of nodes, attributes, tensors, devices
 * and `_class` colocation into the IR and behave alike by construction; no
 * JSON is made (tensor_content is copied once, from the protobuf buffer
 * into the tensor).
 *
 * The format is told by content (dgc_input_kind): JSON text has no control
 * bytes, a binary GraphDef always has some (every NodeDef's `op` field
 * starts with the byte 0x12).
 */
#include "format.h"
#include "gview.h"
#include "load_function.h"
#include "pbjson.h"
#include "dg_alloc.h"
#include "tf_graph.pb-c.h"

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

dg_status dgc_graphdef_load_pb(dgc_graph *g, const void *graphdef,
                               dg_error *err)
{
    const Dgtf__GraphDef *gd = graphdef;
    if (gd->library && gd->library->n_function > 0) /* as dgc_gd_check_root */
        return dg_err(err, DG_E_GRAPH, "'library' has functions, which dgrun "
                      "does not support");
    dgc_jdoc doc; /* no JSON text: integers are the protobuf's */
    memset(&doc, 0, sizeof doc);
    dgc_gdload *L;
    dg_status st = dgc_gd_begin(&L, g, &doc, gd->n_node, err);
    for (size_t i = 0; i < gd->n_node && !st; i++)
        st = dgc_gd_add(L, dgc_gv_pb(gd->node[i]), (int)i, err);
    if (!st)
        st = dgc_gd_finish(L, err);
    dgc_gd_end(L);
    return st;
}

/* Load gd, a parsed GraphDef, its library's calls inlined first. */
static dg_status load_msg(dgc_graph *g, const Dgtf__GraphDef *gd,
                          dg_error *err)
{
    dg_status st = DG_OK;
    dgc_fn_graph fg;
    Dgtf__GraphDef flat = *gd;
    memset(&fg, 0, sizeof fg);
    if (gd->library && gd->library->n_function > 0) {
        st = dgc_fn_inline((Dgtf__GraphDef *)gd, NULL, 0, &fg, err);
        if (st == DG_E_NOMEM)
            st = dg_err_nomem(err, "GraphDef");
        else if (st)
            st = err->code ? err->code : DG_E_GRAPH;
        flat.node = fg.node;
        flat.n_node = fg.n_node;
        flat.library = NULL;
    }
    if (!st)
        st = dgc_graphdef_load_pb(g, &flat, err);
    dgc_fn_free(&fg);
    return st;
}

#define FIELD(d, name) protobuf_c_message_descriptor_get_field_by_name(&d, name)

int dgc_graphdef_load_json_lib(dgc_graph *g, const char *text, size_t len,
                               dg_status *status, dg_error *err)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root)
        return 1; /* invalid JSON: the JSON path reports it */
    /* tf_graph.proto keeps these messages as bytes; TF's fields that the
     * reduced messages leave out (inlining needs none of them) */
    const dgc_pbjson_sub sub[] = {
        {FIELD(dgtf__function_def_library__descriptor, "function"),
         &dgtf__function_def__descriptor},
        {FIELD(dgtf__attr_value__descriptor, "func"),
         &dgtf__name_attr_list__descriptor},
        {FIELD(dgtf__attr_value__list_value__descriptor, "func"),
         &dgtf__name_attr_list__descriptor},
    };
    static const char *const fn_x[] = {"attr", "arg_attr",
                                       "resource_arg_unique_id"};
    static const char *const op_x[] = {
        "attr", "control_output", "summary", "description", "deprecation",
        "is_commutative", "is_aggregate", "is_stateful",
        "allows_uninitialized_input", "is_distributed_communication"};
    static const char *const arg_x[] = {
        "description", "type_attr", "number_attr", "type_list_attr",
        "handle_data", "is_ref", "experimental_full_type"};
    dgc_pbjson_ignore ign[40];
    size_t n = 0;
    for (size_t k = 0; k < sizeof fn_x / sizeof *fn_x; k++)
        ign[n++] = (dgc_pbjson_ignore){&dgtf__function_def__descriptor,
                                       fn_x[k]};
    for (size_t k = 0; k < sizeof op_x / sizeof *op_x; k++)
        ign[n++] = (dgc_pbjson_ignore){&dgtf__op_def__descriptor, op_x[k]};
    for (size_t k = 0; k < sizeof arg_x / sizeof *arg_x; k++)
        ign[n++] = (dgc_pbjson_ignore){&dgtf__arg_def__descriptor, arg_x[k]};
    ign[n++] = (dgc_pbjson_ignore){&dgtf__name_attr_list__descriptor, "attr"};
    ign[n++] = (dgc_pbjson_ignore){&dgtf__node_def__descriptor,
                                   "experimental_type"};
    ign[n++] = (dgc_pbjson_ignore){&dgtf__node_def__descriptor,
                                   "experimental_debug_info"};
    ign[n++] = (dgc_pbjson_ignore){&dgtf__graph_def__descriptor,
                                   "debug_info"};
    const dgc_pbjson_opts opts = {sub, sizeof sub / sizeof *sub, ign, n};
    ProtobufCMessage *m = NULL;
    dg_status st = dgc_pbjson_read(root, &dgtf__graph_def__descriptor, &opts,
                                   &pb_allocator, &m, err);
    cJSON_Delete(root);
    if (!st)
        st = load_msg(g, (const Dgtf__GraphDef *)m, err);
    if (m)
        protobuf_c_message_free_unpacked(m, &pb_allocator);
    *status = st;
    return 0;
}

/* Parse text[0..len) as a GraphDef and load it into g: 0 done (*st says
 * how), 1 not a binary GraphDef (malformed, truncated, or no nodes and
 * only unknown fields).  A library's calls and TF 2 control flow are
 * inlined and lowered first (load_function.h; issue 24: a tf.function's
 * graph). */
static int pb_graph(const char *text, size_t len, dgc_graph *g,
                    dg_status *st, dg_error *err)
{
    pb_oom = 0;
    *st = DG_OK;
    Dgtf__GraphDef *gd = dgtf__graph_def__unpack(&pb_allocator, len,
                                                 (const uint8_t *)text);
    if (!gd) {
        if (!pb_oom)
            return 1; /* malformed or truncated */
        *st = dg_err_nomem(err, "GraphDef");
        return 0;
    }
    if (gd->n_node == 0 && gd->base.n_unknown_fields > 0) {
        /* bytes that happen to parse, with nothing of a GraphDef in them */
        dgtf__graph_def__free_unpacked(gd, &pb_allocator);
        return 1;
    }
    *st = load_msg(g, gd, err);
    dgtf__graph_def__free_unpacked(gd, &pb_allocator);
    return 0;
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

/* The binary GraphDef, read straight into the IR through the value view
 * (gview.h) by the GraphDef loader (load_graphdef.c). */
static dg_status pb_load(dgc_probe *p, void *out, dg_error *err)
{
    dg_status st = DG_OK;
    if (!pb_graph(p->text, p->len, out, &st, err))
        return st;
    if (dgc_input_kind(p->text, p->len) == DGC_INPUT_BINARY)
        return dg_err(err, DG_E_GRAPH, "not a graph: neither JSON nor a "
                      "binary TensorFlow GraphDef (malformed or truncated "
                      "protobuf)");
    p->declined = 1; /* JSON with control bytes: the JSON rows' */
    return DG_OK;
}

const dgc_format dgc_format_graphdef_binary = {
    "graphdef-binary", DGC_FMT_GRAPH, pb_detect, pb_load};
