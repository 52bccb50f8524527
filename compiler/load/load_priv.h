/*
 * load_priv.h -- internals shared by the loader's files (load.c,
 * load_json.c, load_tensor.c, load_attrs.c, load_sections.c, load_rules.c).
 * Not part of any other module's interface.
 */
#ifndef DGC_LOAD_PRIV_H
#define DGC_LOAD_PRIV_H

#include <cJSON.h>

#include "gview.h"
#include "ir.h"
#include "pending.h"
#include "strpool.h"
#include "dg_error.h"

/* Private cJSON type bit: the number was written as an integer literal (no
 * '.', 'e' or 'E').  cJSON_IsNumber masks with 0xFF, so it is invisible to
 * cJSON itself; cJSON_Delete ignores it. */
#define DGC_JSON_INTLIT (1 << 12)

/* A parsed JSON document with the raw text kept for exact integers. */
typedef struct dgc_jdoc {
    cJSON *root;        /* lives in `arena`: never cJSON_Delete it */
    void *arena;
    const char *text;   /* borrowed */
    size_t len;
    size_t *num_off;    /* offset of every number token, document order */
    size_t n_num;
    unsigned char *num_int; /* streaming: token k is an integer literal */
    int owns_nums;      /* dgc_json_free frees num_off */
} dgc_jdoc;

/* Parse text[0..len) into doc (cJSON tree, integer literals marked, each
 * number's valueint replaced by its token index).  Invalid JSON gives
 * DG_E_GRAPH "<prefix>invalid JSON at line L, column C". */
dg_status dgc_json_parse(dgc_jdoc *doc, const char *text, size_t len,
                         const char *prefix, dg_error *err);
void dgc_json_free(dgc_jdoc *doc);

/* "<prefix>invalid JSON at line L, column C" for byte `off` of text. */
dg_status dgc_json_error_at(const char *text, size_t off, const char *prefix,
                            dg_error *err);

/* ---- streaming: one scan of the raw text (load_scan.c) ----------------- */

/* A value inside the text and its number tokens (dgc_jscan.num_off[first,
 * first + n_num)). */
typedef struct dgc_jelem {
    size_t off;
    uint32_t len, n_num;
} dgc_jelem;

typedef struct dgc_jmember {
    size_t key_off, key_len;   /* the key's string token, quotes included */
    size_t val_off, val_len;   /* the value */
    size_t num_first, n_num;   /* the value's number tokens */
    size_t elem_first, n_elem; /* array value: its elements in .elems */
    int is_array;
} dgc_jmember;

typedef struct dgc_jscan {
    dgc_jmember *members;
    size_t n_members, cap_members;
    dgc_jelem *elems;          /* elements of top-level arrays */
    size_t n_elems, cap_elems;
    size_t *num_off;           /* every number token, document order */
    unsigned char *num_int;    /* ... written as an integer literal */
    size_t n_num, cap_num;
} dgc_jscan;

/* Scan text[0..len): a top-level object, its members, the elements of
 * array members, and every number token (strings and escapes skipped).
 * Checks only the structure it walks; element contents are left to cJSON.
 * 0 ok, 1 anything unexpected (the caller parses the whole text with
 * cJSON instead, which gives the exact error), -1 nomem. */
int dgc_json_scan(const char *text, size_t len, dgc_jscan *s);
void dgc_jscan_free(dgc_jscan *s);

/* ---- the JSON front (load.c): one reading of a text, for every JSON
 * format of the table (format.h) ---------------------------------------- */

/* Where node objects come from: a DOM, or slices of the scanned text. */
typedef struct node_src {
    const dgc_jdoc *doc;
    const dgc_jscan *sc;       /* NULL: DOM */
    const dgc_jmember *nodes;  /* streaming: the `nodes` array member */
    const cJSON *placeholder;  /* streaming: its (empty) item in the root */
    void *arena;               /* streaming: the current node's cJSON */
    size_t next;               /* streaming: next element to parse */
    size_t num_next;           /* its first number token */
    const char *base;          /* streaming: "nodes", or "node" (GraphDef) */
    char dup[512];             /* streaming: a duplicate key's message */
} node_src;


typedef struct dgc_jfront {
    dg_status st;        /* the reading failed (nomem; invalid JSON in the
                            whole-document parse): err says why */
    dg_error err;
    int streaming;       /* 1: scanned (sc, root of the members), 0: DOM */
    dgc_jscan sc;
    dgc_jdoc doc;
    node_src S;          /* the streamed nodes array, if any */
    cJSON *root;
    size_t bad_first;    /* streaming: first invalid JSON, SIZE_MAX none */
    size_t dup_at, node_at; /* member of the first duplicate / the nodes */
    char dup[512];       /* streaming: the first duplicated key's message */
} dgc_jfront;


/* Parse the slice text[off, off+len) of doc->text with cJSON into *out,
 * allocating in *arena (created on first use; reset it between slices).
 * Its numbers are tokens [num_first, num_first + n_num) of doc.  0 ok,
 * 1 invalid JSON (*bad = offset of the error in doc->text), 2 a duplicated
 * key (message in dup, the path starting at `base`, e.g. "nodes[3]"),
 * -1 nomem. */
int dgc_json_parse_slice(const dgc_jdoc *doc, void **arena, size_t off,
                         size_t len, size_t num_first, size_t n_num,
                         cJSON **out, size_t *bad, const char *base,
                         char *dup, size_t dup_n);
/* An empty cJSON object or array (type cJSON_Object / cJSON_Array) in
 * *arena; NULL on nomem. */
cJSON *dgc_json_new_item(void **arena, int type);
/* Drop everything in the arena but its largest chunk / free it all. */
void dgc_json_arena_reset(void **arena);
void dgc_json_arena_free(void **arena);

/* Read a whole file into a NUL-terminated dg_malloc'd buffer.  DG_E_IO
 * "cannot read '<path>': <strerror>". */
dg_status dgc_read_file(const char *path, char **text, size_t *len,
                        dg_error *err);

/* Whether x is a number written as an integer literal. */
int dgc_json_is_intlit(const cJSON *x);
/* Integer value of a number: 0 ok, 1 not a number or not integral,
 * 2 outside int64.  Integer literals are read exactly from the text. */
int dgc_json_int64(const dgc_jdoc *doc, const cJSON *x, int64_t *out);
/* Short name of a JSON value's type for messages ("a string", ...). */
const char *dgc_json_kind(const cJSON *x);
/* Whether an object has two members with the same key; sets *dup. */
int dgc_json_dup_key(const cJSON *obj, const char **dup);
/* Strict JSON: find a duplicated key in any object under x (cJSON keeps
 * both members).  Returns 1 and writes "duplicate key 'K' in PATH" (PATH
 * starts with `base`, e.g. "gradients[0]") or "duplicate top-level key 'K'"
 * to msg; 0 if none; -1 on nomem.  dgc_json_parse and dgc_json_parse_slice
 * run it on everything they parse. */
int dgc_json_find_dup(const cJSON *x, const char *base, char *msg, size_t n);

/* Name syntax [A-Za-z0-9.][A-Za-z0-9_./-]* */
int dgc_valid_name(const char *s);
/* Fetch/ref syntax: a name optionally followed by ":k". */
int dgc_valid_ref(const char *s);
/* Glob syntax check ('*', '?', '[...]' closed). */
int dgc_valid_glob(const char *s);

/* Literal tensors (load_tensor.c).  Parses `v` (a number, bool, nested
 * array, or a flat array / scalar shaped by `shape` when shape != NULL).
 * dtype < 0: infer (bool for true/false; numbers: int32 when int_default and
 * every number is an integer literal, else float32).  Returns 0, -1 with
 * a reason in msg, or -2 when memory runs out. */
int dgc_tensor_from_json(const dgc_jdoc *doc, const cJSON *v, int dtype,
                         int int_default, const dg_shape *shape,
                         dg_tensor **out, char *msg, size_t msgsz);

/* Node attributes (load_attrs.c): parse the `attrs` object of node id. */
dg_status dgc_load_attrs(dgc_graph *g, const dgc_jdoc *doc, int32_t id,
                         const cJSON *attrs, dg_error *err);

/* ---- nodes (load_nodes.c) ---------------------------------------------- */

#define DGC_LOAD_RING 8

typedef struct dgc_nodeload {
    dgc_graph *g;
    const dgc_jdoc *doc;
    dg_strmap ops;          /* op name or alias -> op index */
    dgc_strpool pool;       /* names nodes refer to, kept until every
                               name is known: per node in order, its
                               n_inputs input strings then n_coloc
                               colocate_with strings, NUL-terminated (the
                               node's counts hold these raw numbers until
                               dgc_nodes_finish; n_coloc -1 = no field) */
    int32_t inserted;       /* nodes [0, inserted) are in g->names; the
                               rest (< DGC_LOAD_RING) wait while their map
                               slot is prefetched */
    uint32_t ring_h[8];     /* name hash of node id, at id % DGC_LOAD_RING */
    int32_t def_node;       /* node of the deferred error, -1 none */
    int def_stage;
    dg_error def_err;
} dgc_nodeload;

/* Start loading `cnt` nodes into g (sizes its node array and name map). */
dg_status dgc_nodes_begin(dgc_nodeload *L, dgc_graph *g, const dgc_jdoc *doc,
                          int cnt, dg_error *err);
/* Node i of the file (x may be freed once this returns).  Returns errors
 * about the node's fields, name and op; keeps others for dgc_nodes_finish. */
dg_status dgc_nodes_add(dgc_nodeload *L, const cJSON *x, int i, dg_error *err);
/* Resolve inputs and colocate_with of every node added; report the first
 * error in file order. */
dg_status dgc_nodes_finish(dgc_nodeload *L, dg_error *err);
void dgc_nodes_end(dgc_nodeload *L);

/* Resolve node id's n_in pooled input names at *s ("x", "x:k", "^x";
 * NUL-separated) into its inputs and control inputs (it must have none
 * yet).  `mark` (one slot per node, zeroed) deduplicates control inputs in
 * O(1): mark[c] == id + 1 once c is a control input of node id.  *s
 * advances past the names read.  On an unknown name *unknown (may be NULL)
 * is set and the error names it. */
dg_status dgc_resolve_inputs(dgc_graph *g, int32_t id, const char **s,
                             int n_in, int32_t *mark, int *unknown,
                             dg_error *err);

/* Inputs naming nodes that do not exist yet: ir/pending.h. */

/* Sections other than nodes (load_sections.c). */
dg_status dgc_load_sections(dgc_graph *g, const dgc_jdoc *doc,
                            const cJSON *root, dg_error *err);

/* Placement rules (load_rules.c): parse a JSON array of rules.  Messages
 * start with `prefix` (e.g. "rules.json: " or ""), then
 * "placement rule <i>: ". */
dg_status dgc_rules_parse(const cJSON *arr, const char *prefix,
                          dgc_rule **rules, int *n, dg_error *err);

/* Small JSON helpers shared by the section parsers: a list of strings (a
 * single string counts as a one-element list).  0 ok, -1 wrong type, -2
 * nomem. */
int dgc_json_strlist(const cJSON *x, char ***out, int *n);
void dgc_strv_free(char **v, int n);

/* TensorFlow GraphDef proto3 JSON (load_graphdef.c).  detect: the root is
 * an object with `node` and without `nodes`.  load: its nodes into g (the
 * same IR as the dgrun format; inference is left to the caller). */
int dgc_graphdef_detect(const cJSON *root);
dg_status dgc_graphdef_load(dgc_graph *g, const dgc_jdoc *doc,
                            const cJSON *root, dg_error *err);

/* The same load, node by node (what load.c streams from scanned text):
 * begin (cnt: the expected node count, sizes arrays), add every element
 * of `node` in order (a JSON element or a protobuf-c NodeDef through the
 * view, gview.h; x may be freed once dgc_gd_add returns; errors other
 * than nomem are kept for finish), check the root (its `node` may be an
 * empty placeholder), then finish (the first error in the order of the
 * whole-document load), then end (always). */
typedef struct dgc_gdload dgc_gdload;
dg_status dgc_gd_begin(dgc_gdload **L, dgc_graph *g, const dgc_jdoc *doc,
                       size_t cnt, dg_error *err);
dg_status dgc_gd_add(dgc_gdload *L, dgc_gv x, int i, dg_error *err);
dg_status dgc_gd_check_root(const cJSON *root, dg_error *err);
dg_status dgc_gd_finish(dgc_gdload *L, dg_error *err);
void dgc_gd_end(dgc_gdload *L);

/* Binary TensorFlow GraphDef (load_pb.c).  dgc_input_kind: how text looks:
 * DGC_INPUT_JSON (no control bytes: JSON text, or not a graph at all),
 * DGC_INPUT_BINARY (control bytes, not starting with '{'), DGC_INPUT_EITHER
 * (control bytes in the first 64 KiB after a leading '{': try protobuf,
 * then JSON).
 */
enum { DGC_INPUT_JSON, DGC_INPUT_BINARY, DGC_INPUT_EITHER };
int dgc_input_kind(const char *text, size_t len);
/* Load a GraphDef protobuf-c has parsed (a `const Dgtf__GraphDef *`
 * without a function library: a binary file's after inlining, a
 * MetaGraphDef's graph_def) into g, through the GraphDef loader
 * (begin/add/finish above) reading the messages in place (gview.h). */
dg_status dgc_graphdef_load_pb(dgc_graph *g, const void *graphdef,
                               dg_error *err);
/* A GraphDef JSON text whose library has functions (issue 22): read whole
 * into the protobuf-c GraphDef (pbjson.h) and loaded as a binary file is
 * (calls inlined).  0 done (*status says how), 1 not valid JSON (the JSON
 * path's errors then apply). */
int dgc_graphdef_load_json_lib(dgc_graph *g, const char *text, size_t len,
                               dg_status *status, dg_error *err);

#endif
