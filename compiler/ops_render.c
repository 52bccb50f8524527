/*
 * ops_render.c -- dgrun ops listing
 * (placeholder: being written)
 */
#include "ops.h"
#include "dg_alloc.h"
char *dg_ops_render(void) { return dg_strdup("not implemented\n"); }
