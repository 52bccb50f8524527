/*
 * load.h -- loader entry points other compiler files use.
 */
#ifndef DGC_LOAD_H
#define DGC_LOAD_H

#include "ir.h"

/* Parse a placement rules file (--placement FILE): a JSON array of rules as
 * in SPEC 4.3.  Errors (DG_E_GRAPH / DG_E_IO) name the file and the rule's
 * index.  *rules is dg_malloc'd; free with dgc_rules_free. */
dg_status dgc_rules_load_file(const char *path, dgc_rule **rules, int *n,
                              dg_error *err);
void dgc_rules_free(dgc_rule *rules, int n);

#endif
