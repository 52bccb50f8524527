/*
 * pbjson.h -- a generic proto3 JSON reader into protobuf-c messages
 * (load_pbjson.c; issue 22: GraphDef JSON with a function library).
 */
#ifndef DGC_PBJSON_H
#define DGC_PBJSON_H

#include "dgrun.h"
#include <cJSON.h>

#include <protobuf-c/protobuf-c.h>

/* What a reduced .proto (tf_graph.proto, tf_meta.proto) changes: a
 * `bytes` field that holds a message (read from a JSON object with msg's
 * descriptor, then packed), and TF fields it leaves out (skipped as the
 * binary path skips unknown fields; any other unknown field is an error). */
typedef struct dgc_pbjson_sub {
    const ProtobufCFieldDescriptor *field;
    const ProtobufCMessageDescriptor *msg;
} dgc_pbjson_sub;
typedef struct dgc_pbjson_ignore {
    const ProtobufCMessageDescriptor *msg;
    const char *name; /* the field's original (snake_case) name */
} dgc_pbjson_ignore;
typedef struct dgc_pbjson_opts {
    const dgc_pbjson_sub *sub;
    size_t n_sub;
    const dgc_pbjson_ignore *ignore;
    size_t n_ignore;
} dgc_pbjson_opts;

/* Read obj (proto3 JSON as json_format.MessageToJson writes it) into a new
 * message of descriptor d, allocated through a (dg_malloc-based:
 * base64 is decoded by dgc_base64): *out is freed with
 * protobuf_c_message_free_unpacked(*out, a).  Errors (DG_E_GRAPH: an
 * unknown field, a value of the wrong kind or out of range, bad base64, an
 * unknown enum name, a field given twice, nesting over 64 deep; DG_E_NOMEM)
 * name the field's path, e.g. "library.function[0].nodeDef[2].attr['T']";
 * *out is then NULL.  opts may be NULL. */
dg_status dgc_pbjson_read(const cJSON *obj,
                          const ProtobufCMessageDescriptor *d,
                          const dgc_pbjson_opts *opts, ProtobufCAllocator *a,
                          ProtobufCMessage **out, dg_error *err);

#endif
