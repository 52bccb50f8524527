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

#endif
