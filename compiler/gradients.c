/*
 * gradients.c -- gradient pass
 * (placeholder: being written)
 */
#include "program.h"
dg_status dgc_pass_gradients(dgc_graph *g, int c, dg_error *err) { (void)g; (void)c; (void)err; return DG_OK; }
