/*
 * feeds.h -- reading tensors from .npy and .csv files (--feed, train feeds)
 * and writing .npy.
 */
#ifndef DGR_FEEDS_H
#define DGR_FEEDS_H

#include "dgrun.h"

/* Load a .npy (NumPy format 1.0-3.0, little-endian, C order; dtypes f4 f8
 * i4 i8 b1) or .csv file (numbers, no header; rows x columns).  The result
 * is converted to `want` and checked against `shape` (a Placeholder's, -1 =
 * any): a CSV row fills the trailing dimensions in C order.  Errors name
 * the file: DG_E_IO if unreadable, DG_E_GRAPH if malformed or the shape does
 * not fit. */
dg_status dgr_tensor_load_file(const char *path, dg_dtype want,
                               const dg_shape *shape, dg_tensor **out,
                               dg_error *err);

/* Write a .npy file (used by tests and checkpoints' debugging). */
dg_status dgr_tensor_save_npy(const char *path, const dg_tensor *t,
                              dg_error *err);

#endif
