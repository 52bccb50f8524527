/*
 * dg_io.h -- reading a whole stream or file into memory, shared by the
 * graph loader, feed files, checkpoints and the CLI (each words its own
 * errors).
 */
#ifndef DG_IO_H
#define DG_IO_H

#include <stddef.h>
#include <stdio.h>

#include "dgrun.h"

/* Read the rest of f into a NUL-terminated dg_malloc'd buffer: *buf, with
 * *len bytes before the NUL.  A regular file is read into one block of its
 * size; anything else grows as it comes.  Returns DG_OK, DG_E_NOMEM, or
 * DG_E_IO (errno of the failed read kept); fills no dg_error, since the
 * callers word their own messages.  f stays open; *buf is untouched on
 * failure. */
dg_status dg_read_stream(FILE *f, char **buf, size_t *len);

/* Open path, read it whole with dg_read_stream and close it: the same
 * results, with DG_E_IO (errno of the failed fopen or read kept) also when
 * the file cannot be opened.  Fills no dg_error. */
dg_status dg_read_file(const char *path, char **buf, size_t *len);

/* The same for a graph (JSON text, an object or an array, or a binary
 * TensorFlow GraphDef) from a stream that may never end (a pipe, a FIFO,
 * /dev/zero): stops as soon as the first byte after blanks and a UTF-8 BOM
 * is not '{' or '[' (unless the stream starts with a GraphDef field tag),
 * and when more than max bytes arrive.  Both return
 * DG_E_GRAPH with *bad set to that first byte (0..255) or to -1 (too
 * long); otherwise as dg_read_stream. */
dg_status dg_read_json_stream(FILE *f, size_t max, char **buf, size_t *len,
                              int *bad);

/* The bound callers use for streams (1 GiB). */
#define DG_STREAM_MAX ((size_t)1 << 30)

#endif
