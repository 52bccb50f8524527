/*
 * output.h -- how dgrun shows tensors and JSON: a growable text buffer,
 * NumPy-like tensor printing (`c = [[19. 22.]\n [43. 50.]]`) and the JSON
 * tensor object of SPEC section 1 ({"dtype", "shape", "value"}).
 */
#ifndef DG_CLI_OUTPUT_H
#define DG_CLI_OUTPUT_H

#include <stddef.h>

#include "dgrun.h"

/* Growable NUL-terminated text; `oom` latches the first allocation failure
 * (after which appends are ignored). */
typedef struct cli_buf {
    char *s;
    size_t len, cap;
    int oom;
} cli_buf;

/* An empty buffer / free the text and reset to empty. */
void cli_buf_init(cli_buf *b);
void cli_buf_free(cli_buf *b);
/* Append s / n bytes of s / printf-formatted text. */
void cli_buf_add(cli_buf *b, const char *s);
void cli_buf_addn(cli_buf *b, const char *s, size_t n);
void cli_buf_addf(cli_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal (quotes and escapes). */
void cli_buf_json_str(cli_buf *b, const char *s);

/* Shortest decimal text that reads back as the same value: float32 when
 * `single` (at most 9 significant digits), else float64 (at most 17).
 * Writes "nan", "inf" or "-inf" for non-finite values.  `out` >= 32 bytes. */
void cli_fmt_shortest(double v, int single, char *out, size_t n);

/* Append a tensor NumPy-style: scalars as numpy scalars print ("0.5403023",
 * "True", "7"), arrays like str(ndarray) (common width, "19." for integral
 * floats, scientific notation by numpy's rules, lines wrapped at 75 columns,
 * arrays over 1000 elements summarised with "...").  NULL (a fetched op
 * without outputs, e.g. NoOp) prints "None" like TF's sess.run. */
void cli_tensor_text(cli_buf *b, const dg_tensor *t);

/* Append a tensor's value as JSON: a number for a scalar, nested arrays
 * otherwise.  Floats round-trip (shortest form, integral values as "19.0");
 * NaN and infinities become null.  Bool -> true/false.  NULL -> null. */
void cli_tensor_json_value(cli_buf *b, const dg_tensor *t);

/* Append {"dtype": ..., "shape": [...], "value": ...}; null for NULL. */
void cli_tensor_json(cli_buf *b, const dg_tensor *t);

/* Append a double as a JSON number, shortest float32 form when the value is
 * exactly a float32, null when not finite. */
void cli_json_number(cli_buf *b, double v);

#endif
