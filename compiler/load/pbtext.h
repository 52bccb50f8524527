/*
 * pbtext.h -- protobuf text format to binary (pbtext.c; issue 24: text
 * MetaGraphDefs and saved_model.pbtxt).
 */
#ifndef DGC_PBTEXT_H
#define DGC_PBTEXT_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* Encode text[0..len), a message of descriptor d in protobuf text format,
 * as its binary wire bytes (*out, dg_malloc'd, *out_len bytes).  Fields d
 * does not declare are skipped.  0 ok; -1 not valid text format (msg gets
 * "line N: reason"); -2 nomem. */
int dgc_pbtext_encode(const char *text, size_t len,
                      const ProtobufCMessageDescriptor *d, uint8_t **out,
                      size_t *out_len, char *msg, size_t msgsz);

#endif
