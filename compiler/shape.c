/*
 * shape.c -- shape inference pass
 * (placeholder: being written)
 */
#include "program.h"
dg_status dgc_pass_infer(dgc_graph *g, int32_t from, dg_error *err) { (void)g; (void)from; (void)err; return DG_OK; }
