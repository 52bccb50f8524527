/*
 * output.h -- how dgrun shows tensors and JSON (appended to a dg_sbuf):
 * NumPy-like tensor printing (`c = [[19. 22.]\n [43. 50.]]`) and the JSON
 * tensor object of SPEC section 1 ({"dtype", "shape", "value"}).
 */
#ifndef DG_CLI_OUTPUT_H
#define DG_CLI_OUTPUT_H

#include <stddef.h>

#include "dg_util.h"
#include "dgrun.h"

/* Shortest decimal text that reads back as the same value: float32 when
 * `single` (at most 9 significant digits), else float64 (at most 17).
 * Writes "nan", "inf" or "-inf" for non-finite values.  `out` >= 32 bytes. */
void cli_fmt_shortest(double v, int single, char *out, size_t n);

/* Append a tensor NumPy-style: scalars as numpy scalars print ("0.5403023",
 * "True", "7"), arrays like str(ndarray) (common width, "19." for integral
 * floats, scientific notation by numpy's rules, lines wrapped at 75 columns,
 * arrays over 1000 elements summarised with "...").  NULL (a fetched op
 * without outputs, e.g. NoOp) prints "None" like TF's sess.run. */
void cli_tensor_text(dg_sbuf *b, const dg_tensor *t);

/* Append a tensor's value as JSON: a number for a scalar, nested arrays
 * otherwise.  Floats round-trip (shortest form, integral values as "19.0");
 * NaN and infinities become null.  Bool -> true/false.  NULL -> null. */
void cli_tensor_json_value(dg_sbuf *b, const dg_tensor *t);

/* Append {"dtype": ..., "shape": [...], "value": ...}; null for NULL. */
void cli_tensor_json(dg_sbuf *b, const dg_tensor *t);

/* Append a double as a JSON number, shortest float32 form when the value is
 * exactly a float32, null when not finite. */
void cli_json_number(dg_sbuf *b, double v);

#endif
