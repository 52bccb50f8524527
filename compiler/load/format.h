/*
 * format.h -- the loader interface: one table of input formats
 * (format.c), each row {name, kind, detect, load}.  dg_graph_load and
 * dgc_rules_load_file read a file, then ask the rows of their kind in
 * order: the first whose detect says "mine" loads it; one that says
 * "maybe" tries and may decline (the next row is then asked).
 *
 * Adding a format is one file (its detect and load, and the row's value
 * `const dgc_format dgc_format_<name>`) plus its line in format.c's table
 * (and in compiler/meson.build).  JSON formats share one reading of the
 * text (the JSON front, load.c): the scan of its top-level members, or a
 * whole-document parse, made once by whichever JSON row asks first.
 */
#ifndef DGC_FORMAT_H
#define DGC_FORMAT_H

#include "load_priv.h"

#include <stddef.h>

/* What a format reads into: a graph (dgc_graph *) or placement rules
 * (dgc_rules_out *). */
enum { DGC_FMT_GRAPH, DGC_FMT_RULES };
/* detect's answers */
enum { DGC_DETECT_NO, DGC_DETECT_MAYBE, DGC_DETECT_YES };

/* One input being loaded, and what the rows learnt reading it. */
typedef struct dgc_probe {
    const char *path;         /* for messages; may be NULL */
    const char *text;
    size_t len;
    int declined;             /* a "maybe" row's load: not mine after all */
    const char *dir;          /* a SavedModel directory given as GRAPH (the
                                 text is its saved_model.pb), else NULL */
    const char *signature;    /* --signature KEY, NULL = serving_default */
    int json_read;            /* json holds the JSON front's reading */
    dgc_jfront json;          /* (load.c, load_priv.h) */
} dgc_probe;

typedef struct dgc_rules_out {
    dgc_rule *rules;
    int n;
} dgc_rules_out;

typedef struct dgc_format {
    const char *name;   /* "graphdef-binary", "graphdef-json", ... */
    int kind;           /* DGC_FMT_GRAPH or DGC_FMT_RULES */
    /* DGC_DETECT_NO / MAYBE / YES: whether p's bytes are this format. */
    int (*detect)(dgc_probe *p);
    /* Load p into out (per kind).  A row that answered MAYBE may set
     * p->declined and return DG_OK to pass the input on. */
    dg_status (*load)(dgc_probe *p, void *out, dg_error *err);
} dgc_format;

/* The rows (format.c), each defined by its format's file as
 * `const dgc_format dgc_format_<name>`; NULL-terminated. */
extern const dgc_format *const dgc_formats[];

/* Load p with the first row of `kind` that takes it (see above); the name
 * of that row in *name when name != NULL.  Frees what the rows kept in p
 * before it returns. */
dg_status dgc_format_load(int kind, dgc_probe *p, void *out,
                          const char **name, dg_error *err);

/* Free the JSON front's reading of p (dgc_format_load does). */
void dgc_probe_json_free(dgc_probe *p);

#endif
