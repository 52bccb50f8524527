/*
 * pbjson.h -- a generic proto3 JSON reader into protobuf-c messages
 * (load_pbjson.c; issue 22: GraphDef JSON with a function library).
 */
#ifndef DGC_PBJSON_H
#define DGC_PBJSON_H

#include "dgrun.h"
#include <cJSON.h>

#include <protobuf-c/protobuf-c.h>

/* Read obj (proto3 JSON as json_format.MessageToJson writes it) into a new
 * message of descriptor d, allocated through a: *out is freed with
 * protobuf_c_message_free_unpacked(*out, a).  Errors (DG_E_GRAPH: an
 * unknown field, a value of the wrong kind or out of range, bad base64, an
 * unknown enum name, a field given twice, nesting over 64 deep; DG_E_NOMEM)
 * name the field's path, e.g. "library.function[0].nodeDef[2].attr['T']";
 * *out is then NULL. */
dg_status dgc_pbjson_read(const cJSON *obj,
                          const ProtobufCMessageDescriptor *d,
                          ProtobufCAllocator *a, ProtobufCMessage **out,
                          dg_error *err);

#endif
