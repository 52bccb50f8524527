/*
 * attr_get.h -- a node's attribute values by id (DGC_AT_*, attr_names.def):
 * what kernels and executors read while running.  Each call scans the
 * node's few attrs comparing ids (no string compare) and falls back to the
 * default of the node's op schema (ops.c), decoded once per process.
 * Asking for an attribute the op's schema does not declare ("dtype"
 * aside, which every op takes) is a programming error: it aborts naming
 * node, op and attribute unless NDEBUG is defined.
 */
#ifndef DGC_ATTR_GET_H
#define DGC_ATTR_GET_H

#include "ir.h"

/* The node's own attr `id`, NULL when the graph left it out (no default
 * applied: for "is it set" tests). */
const dgc_attr *dgc_attr_at(const dgc_node *n, dgc_attr_id id);
/* The node's attr `id`, else its op schema's default decoded into a
 * dgc_attr, NULL when neither exists. */
const dgc_attr *dgc_attr_get(const dgc_node *n, dgc_attr_id id);
/* Typed reads of dgc_attr_get, 0 / 0.0 / NULL when it is NULL.  _i of a
 * float attr truncates, _f of an int attr converts (as dgc_attr_int and
 * dgc_attr_float do); _i of an ints attr is its first element. */
int64_t dgc_attr_i(const dgc_node *n, dgc_attr_id id);
int dgc_attr_b(const dgc_node *n, dgc_attr_id id);
double dgc_attr_f(const dgc_node *n, dgc_attr_id id);
const char *dgc_attr_str(const dgc_node *n, dgc_attr_id id);
/* The ints of attr `id` (*count of them), NULL with *count 0 if none. */
const int64_t *dgc_attr_ints(const dgc_node *n, dgc_attr_id id, int *count);
const dg_tensor *dgc_attr_tensor(const dgc_node *n, dgc_attr_id id);

/* Whether op's schema declares `id` ("dtype" counts for every op). */
int dgc_op_has_attr(int op, dgc_attr_id id);

#endif
