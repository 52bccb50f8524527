/*
 * train.c -- training pass
 * (placeholder: being written)
 */
#include "program.h"
dg_status dgc_pass_train(dgc_graph *g, int c, dg_error *err) { (void)g; (void)c; (void)err; return DG_OK; }
