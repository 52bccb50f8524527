/*
 * load_metagraph.c -- TensorFlow MetaGraphDefs (`.meta`, binary) and TF-1
 * SavedModels (`saved_model.pb` of a SavedModel directory) as graphs
 * (issue 24; docs/savedmodel.md).
 *
 * Both are parsed with protobuf-c from tf_meta.proto.  The MetaGraphDef's
 * graph_def goes through the binary GraphDef conversion (load_pb.c ->
 * load_graphdef.c), less the Saver's subgraph (saver_def's name scope and
 * the string ops that save and restore: dgrun saves and restores itself).
 * Its collections are kept as dgrun collections (`train_op`, `update_ops`,
 * `summaries`, `losses`, `variables`, `trainable_variables`,
 * `global_step`); `train_op` makes the graph trainable as TF built it (the
 * training pass runs that op: passes/train.c given_train_op), `losses`
 * names the loss reported, `global_step` the step counter.  A SavedModel
 * takes its "serve" MetaGraphDef (else the first), maps the chosen
 * signature's input and output keys to tensors (g->aliases; the outputs
 * are the default fetches) and names DIR/variables/variables as the
 * checkpoint a session restores (g->variables_path).
 *
 * TF 2 graphs (a function library, resource variables) go through
 * load_function.c first: calls inlined, resource ops renamed, and for a
 * SavedModel only what its signature needs kept; each Variable's
 * checkpoint key comes from the SavedObjectGraph (g->ckpt_keys).
 * Text-format files (a text .meta, saved_model.pbtxt) are encoded as
 * binary by pbtext.c and loaded the same way.
 *
 * The formats are told by content: a SavedModel starts with field 1 as a
 * varint or field 2 (meta_graphs); a MetaGraphDef has at most one field 1
 * (meta_info_def) at its top level, a GraphDef one per node, and a
 * MetaGraphDef does not parse as a GraphDef with real op names.
 */
#include "format.h"
#include "load_priv.h"
#include "dg_alloc.h"
#include "dg_util.h"
#include "tf_meta.pb-c.h"
#include "load_function.h"
#include "pbtext.h"
#include "ops.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* ---- protobuf-c allocation through dg_alloc ---------------------------- */

static int mg_oom;

static void *mg_alloc(void *data, size_t n)
{
    (void)data;
    void *p = dg_malloc(n);
    mg_oom |= !p;
    return p;
}

static void mg_free(void *data, void *p)
{
    (void)data;
    dg_free(p);
}

static ProtobufCAllocator mg_allocator = {mg_alloc, mg_free, NULL};

/* ---- telling the formats apart ----------------------------------------- */

/* Read a varint at *i (< len); 0 ok, -1 malformed. */
static int varint(const unsigned char *b, size_t len, size_t *i, uint64_t *v)
{
    *v = 0;
    for (int s = 0; s < 64 && *i < len; s += 7) {
        unsigned char c = b[(*i)++];
        *v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80))
            return 0;
    }
    return -1;
}

/* Walk the top-level fields: how often field 1 occurs and whether field 1
 * is a varint; -1 if the bytes are not a protobuf message. */
static int top_fields(const char *text, size_t len, int *n1, int *f1_varint)
{
    const unsigned char *b = (const unsigned char *)text;
    size_t i = 0;
    *n1 = 0;
    *f1_varint = 0;
    while (i < len) {
        uint64_t tag, v;
        if (varint(b, len, &i, &tag) || tag >> 3 == 0)
            return -1;
        switch (tag & 7) {
        case 0:
            if (varint(b, len, &i, &v))
                return -1;
            break;
        case 1:
            if (len - i < 8)
                return -1;
            i += 8;
            break;
        case 2:
            if (varint(b, len, &i, &v) || v > len - i)
                return -1;
            i += (size_t)v;
            break;
        case 5:
            if (len - i < 4)
                return -1;
            i += 4;
            break;
        default:
            return -1;
        }
        if (tag >> 3 == 1) {
            (*n1)++;
            *f1_varint |= (tag & 7) == 0;
        }
    }
    return 0;
}

/* A plausible TF op name ("MatMul", "_Retval"). */
static int op_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
              (*s >= '0' && *s <= '9') || *s == '_' || *s == '>'))
            return 0;
    return 1;
}

/* Whether the bytes also read as a GraphDef whose nodes have op names:
 * then they are one, not a MetaGraphDef. */
static int is_graphdef(const char *text, size_t len)
{
    Dgtf__GraphDef *gd = dgtf__graph_def__unpack(&mg_allocator, len,
                                                 (const uint8_t *)text);
    if (!gd)
        return 0;
    int ok = gd->n_node > 0;
    for (size_t i = 0; ok && i < gd->n_node; i++)
        ok = op_name(gd->node[i]->op);
    dgtf__graph_def__free_unpacked(gd, &mg_allocator);
    return ok;
}

static int binary(const dgc_probe *p)
{
    return p->len > 0 && dgc_input_kind(p->text, p->len) != DGC_INPUT_JSON;
}

static int meta_detect(dgc_probe *p)
{
    int n1, v1;
    if (!binary(p) || top_fields(p->text, p->len, &n1, &v1) || n1 > 1 || v1)
        return DGC_DETECT_NO;
    return DGC_DETECT_MAYBE;
}

static int sm_detect(dgc_probe *p)
{
    int n1, v1;
    if (!binary(p) || top_fields(p->text, p->len, &n1, &v1) || n1 > 1 ||
        (n1 == 1 && !v1))
        return DGC_DETECT_NO;
    return DGC_DETECT_MAYBE;
}

/* ---- the MetaGraphDef into the graph ------------------------------------ */

/* "a:0" / "^a" -> "a" in buf. */
static const char *node_of(const char *s, char *buf, size_t sz)
{
    if (s[0] == '^')
        s++;
    snprintf(buf, sz, "%s", s);
    char *c = strrchr(buf, ':');
    if (c && c != buf && c[1] >= '0' && c[1] <= '9')
        *c = 0;
    return buf;
}

static int saver_op(const char *op)
{
    static const char *const ops[] = {
        "SaveV2", "RestoreV2", "Save", "SaveSlices", "Restore",
        "RestoreSlice", "MergeV2Checkpoints", "ShardedFilename",
        "ShardedFilespec", "StringJoin", NULL};
    for (int i = 0; ops[i]; i++)
        if (strcmp(op, ops[i]) == 0)
            return 1;
    return 0;
}

/* The Saver's part of the graph: nodes under saver_def's name scope
 * ("save/") or under the top-level scope of any save/restore op, those
 * ops, and whatever consumes them. */
static dg_status drop_saver(const Dgtf__MetaGraphDef *m,
                            const Dgtf__GraphDef *gd, char *drop,
                            dg_error *err)
{
    char scope[256] = "";
    if (m->saver_def && m->saver_def->restore_op_name) {
        const char *r = m->saver_def->restore_op_name;
        const char *sl = strrchr(r, '/');
        if (sl && (size_t)(sl - r) + 2 < sizeof scope)
            snprintf(scope, (size_t)(sl - r) + 2, "%s", r);
    }
    size_t sl = strlen(scope);
    dg_strmap names;
    if (dg_strmap_init(&names, gd->n_node + 1))
        return dg_err_nomem(err, "MetaGraphDef");
    /* every Saver's top-level scope ("save/", "save_1/": a graph may hold
     * several, saver_def names one): the scopes of the save/restore ops,
     * as offsets of those ops' names (few) */
    size_t *sc = dg_malloc(sizeof *sc * (gd->n_node + 1));
    size_t nsc = 0;
    if (!sc) {
        dg_strmap_free(&names);
        return dg_err_nomem(err, "MetaGraphDef");
    }
    for (size_t i = 0; i < gd->n_node; i++) {
        const char *nm = gd->node[i]->name, *s = strchr(nm, '/');
        int known = !s;
        for (size_t k = 0; k < nsc && !known; k++)
            known = strncmp(gd->node[sc[k]]->name, nm, (size_t)(s - nm) + 1)
                    == 0;
        if (saver_op(gd->node[i]->op) && !known)
            sc[nsc++] = i;
    }
    for (size_t i = 0; i < gd->n_node; i++) {
        const Dgtf__NodeDef *n = gd->node[i];
        const char *s = strchr(n->name, '/');
        drop[i] = (sl && strncmp(n->name, scope, sl) == 0) ||
                  saver_op(n->op);
        for (size_t k = 0; s && k < nsc && !drop[i]; k++) {
            const char *o = gd->node[sc[k]]->name;
            size_t ol = (size_t)(strchr(o, '/') - o) + 1;
            drop[i] = (size_t)(s - n->name) + 1 == ol &&
                      strncmp(n->name, o, ol) == 0;
        }
        if (dg_strmap_put(&names, n->name, (int32_t)i) < 0) {
            dg_free(sc);
            dg_strmap_free(&names);
            return dg_err_nomem(err, "MetaGraphDef");
        }
    }
    dg_free(sc);
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < gd->n_node; i++) {
            const Dgtf__NodeDef *n = gd->node[i];
            for (size_t k = 0; !drop[i] && k < n->n_input; k++) {
                char buf[1024];
                int32_t j = dg_strmap_get(&names, node_of(n->input[k], buf,
                                                          sizeof buf));
                if (j >= 0 && drop[j])
                    drop[i] = changed = 1;
            }
        }
    }
    dg_strmap_free(&names);
    return DG_OK;
}

/* The collection named `key`, or NULL. */
static const Dgtf__CollectionDef *collection(const Dgtf__MetaGraphDef *m,
                                             const char *key)
{
    for (size_t i = 0; i < m->n_collection_def; i++)
        if (m->collection_def[i]->key &&
            strcmp(m->collection_def[i]->key, key) == 0)
            return m->collection_def[i]->value;
    return NULL;
}

/* The node names of collection c: a node_list's values, or a bytes_list
 * of serialized VariableDefs' variable_name.  Calls fn(name) for each
 * (as "node", without ":k"); stops at an error. */
typedef dg_status (*name_fn)(void *ctx, const char *name, dg_error *err);

static dg_status each_name(const Dgtf__CollectionDef *c, const char *key,
                           name_fn fn, void *ctx, dg_error *err)
{
    char buf[1024];
    dg_status st = DG_OK;
    if (c->kind_case == DGTF__COLLECTION_DEF__KIND_NODE_LIST) {
        for (size_t i = 0; !st && i < c->node_list->n_value; i++)
            st = fn(ctx, node_of(c->node_list->value[i], buf, sizeof buf),
                    err);
    } else if (c->kind_case == DGTF__COLLECTION_DEF__KIND_BYTES_LIST) {
        for (size_t i = 0; !st && i < c->bytes_list->n_value; i++) {
            const ProtobufCBinaryData *d = &c->bytes_list->value[i];
            mg_oom = 0;
            Dgtf__VariableDef *v =
                dgtf__variable_def__unpack(&mg_allocator, d->len, d->data);
            if (!v)
                return mg_oom ? dg_err_nomem(err, "MetaGraphDef")
                              : dg_err(err, DG_E_GRAPH, "collection '%s': "
                                       "entry %zu is not a VariableDef", key,
                                       i);
            st = fn(ctx, node_of(v->variable_name ? v->variable_name : "",
                                 buf, sizeof buf), err);
            dgtf__variable_def__free_unpacked(v, &mg_allocator);
        }
    }
    return st;
}

typedef struct coll_ctx {
    dgc_graph *g;
    const char *key;
    dgc_collection *c;
    char *first;         /* the first name (train_op, losses, global_step) */
    int n;
} coll_ctx;

static dg_status add_name(void *vctx, const char *name, dg_error *err)
{
    coll_ctx *x = vctx;
    int32_t id = dgc_graph_find(x->g, name);
    if (id < 0) /* a node of the Saver's part, or of a part TF pruned */
        return DG_OK;
    for (int i = 0; i < x->c->n_nodes; i++)
        if (x->c->nodes[i] == id) /* named twice (TF adds a minimize's op) */
            return DG_OK;
    if (x->n++ == 0 && !(x->first = dg_strdup(name)))
        return dg_err_nomem(err, "MetaGraphDef collections");
    int32_t *nn = dg_realloc(x->c->nodes, sizeof *nn *
                             (size_t)(x->c->n_nodes + 1));
    if (!nn)
        return dg_err_nomem(err, "MetaGraphDef collections");
    x->c->nodes = nn;
    nn[x->c->n_nodes++] = id;
    return DG_OK;
}

/* The collections dgrun uses, as dgrun collections; train_op, losses and
 * global_step set up the training (passes/train.c given_train_op). */
static dg_status collections(dgc_graph *g, const Dgtf__MetaGraphDef *m,
                             dg_error *err)
{
    static const char *const keys[] = {
        "train_op", "losses", "global_step", "update_ops", "summaries",
        "variables", "trainable_variables", NULL};
    int nk = 0;
    while (keys[nk])
        nk++;
    g->collections = dg_calloc((size_t)nk, sizeof *g->collections);
    if (!g->collections)
        return dg_err_nomem(err, "MetaGraphDef collections");
    for (int k = 0; keys[k]; k++) {
        const Dgtf__CollectionDef *c = collection(m, keys[k]);
        if (!c)
            continue;
        dgc_collection *dc = &g->collections[g->n_collections++];
        if (!(dc->name = dg_strdup(keys[k])))
            return dg_err_nomem(err, "MetaGraphDef collections");
        coll_ctx x = {g, keys[k], dc, NULL, 0};
        dg_status st = each_name(c, keys[k], add_name, &x, err);
        if (st) {
            dg_free(x.first);
            return st;
        }
        if (x.n > 1 && k == 0) {
            dg_free(x.first);
            return dg_err(err, DG_E_GRAPH, "collection 'train_op': %d train "
                          "ops (dgrun runs one; group them with tf.group)",
                          x.n);
        }
        if (k == 0)
            g->train.given_train_op = x.first;
        else if (k == 1)
            g->train.loss = x.first;
        else if (k == 2)
            g->train.given_global_step = x.first;
        else
            dg_free(x.first);
    }
    if (g->train.given_train_op)
        g->train.present = 1;
    return DG_OK;
}

/* The parts of partitioned variables: each VariableDef of the
 * `variables` collection with a save_slice_info_def whose Variable the
 * graph has becomes a g->save_slices entry (the checkpoint key, full
 * shape and offset the restore and the save use). */
static dg_status save_slices(dgc_graph *g, const Dgtf__MetaGraphDef *m,
                             dg_error *err)
{
    const Dgtf__CollectionDef *c = collection(m, "variables");
    if (!c || c->kind_case != DGTF__COLLECTION_DEF__KIND_BYTES_LIST)
        return DG_OK;
    char buf[1024];
    dg_status st = DG_OK;
    for (size_t i = 0; !st && i < c->bytes_list->n_value; i++) {
        const ProtobufCBinaryData *d = &c->bytes_list->value[i];
        mg_oom = 0;
        Dgtf__VariableDef *v =
            dgtf__variable_def__unpack(&mg_allocator, d->len, d->data);
        if (!v) /* each_name said why already; here only out of memory */
            return mg_oom ? dg_err_nomem(err, "MetaGraphDef") : DG_OK;
        const Dgtf__SaveSliceInfoDef *si = v->save_slice_info_def;
        const char *name = node_of(v->variable_name ? v->variable_name : "",
                                   buf, sizeof buf);
        int32_t id = dgc_graph_find(g, name);
        if (si && si->full_name && si->full_name[0] && id >= 0 &&
            g->nodes[id].op == DGC_OPID_Variable) {
            size_t r = si->n_full_shape;
            int ok = r <= DG_MAX_RANK && si->n_var_offset == r &&
                     si->n_var_shape == r;
            for (size_t k = 0; ok && k < r; k++)
                ok = si->full_shape[k] >= 0 && si->var_offset[k] >= 0 &&
                     si->var_shape[k] >= 0 &&
                     si->var_offset[k] <= si->full_shape[k] - si->var_shape[k];
            dgc_save_slice *ns = ok ? dg_realloc(g->save_slices, sizeof *ns *
                                                 (size_t)(g->n_save_slices + 1))
                                    : NULL;
            if (!ok) {
                st = dg_err(err, DG_E_GRAPH, "collection 'variables': %s: its "
                            "save_slice_info_def does not fit its full shape",
                            name);
            } else if (!ns) {
                st = dg_err_nomem(err, "MetaGraphDef");
            } else {
                g->save_slices = ns;
                dgc_save_slice *x = &ns[g->n_save_slices];
                memset(x, 0, sizeof *x);
                x->var = dg_strdup(name);
                x->full = dg_strdup(si->full_name);
                x->rank = (int)r;
                for (size_t k = 0; k < r; k++) {
                    x->full_dims[k] = si->full_shape[k];
                    x->start[k] = si->var_offset[k];
                }
                g->n_save_slices++;
                if (!x->var || !x->full)
                    st = dg_err_nomem(err, "MetaGraphDef");
            }
        }
        dgtf__variable_def__free_unpacked(v, &mg_allocator);
    }
    return st;
}

/* Whether gd needs load_function.c: functions to inline or resource
 * variables to rename. */
static int tf2(const Dgtf__GraphDef *gd)
{
    if (gd->library && gd->library->n_function > 0)
        return 1;
    for (size_t i = 0; i < gd->n_node; i++)
        if (strcmp(gd->node[i]->op, "VarHandleOp") == 0)
            return 1;
    return 0;
}

/* graph_def (TF 2's calls inlined, less the Saver) and the collections of
 * m into g.  With a TF 2 function library and a signature `sig`, only what
 * the signature's tensors need is kept (the rest are the SavedModel's save,
 * restore and initialisation functions).  fg: the inlining's result
 * (dgc_fn_resolve maps the signature's names), freed by the caller. */
static dg_status load_meta(dgc_graph *g, const Dgtf__MetaGraphDef *m,
                           const Dgtf__SignatureDef *sig, dgc_fn_graph *fg,
                           dg_error *err)
{
    const Dgtf__GraphDef *gd = m->graph_def;
    Dgtf__GraphDef src = *gd;
    dg_status st = DG_OK;
    if (tf2(gd)) {
        const char **roots = NULL;
        int nr = 0;
        if (sig && gd->library && gd->library->n_function > 0) {
            roots = dg_malloc(sizeof *roots * (sig->n_inputs +
                                               sig->n_outputs + 1));
            if (!roots)
                return dg_err_nomem(err, "SavedModel");
            for (size_t i = 0; i < sig->n_inputs; i++)
                if (sig->inputs[i]->value && sig->inputs[i]->value->name)
                    roots[nr++] = sig->inputs[i]->value->name;
            for (size_t i = 0; i < sig->n_outputs; i++)
                if (sig->outputs[i]->value && sig->outputs[i]->value->name)
                    roots[nr++] = sig->outputs[i]->value->name;
        }
        st = dgc_fn_inline(gd, roots, nr, fg, err);
        dg_free(roots);
        if (st)
            return st;
        src.node = fg->node;
        src.n_node = fg->n_node;
        src.library = NULL;
    }
    char *drop = dg_calloc(src.n_node + 1, 1);
    Dgtf__NodeDef **kept = dg_malloc(sizeof *kept * (src.n_node + 1));
    if (!drop || !kept) {
        st = dg_err_nomem(err, "MetaGraphDef");
        goto done;
    }
    if ((st = drop_saver(m, &src, drop, err)))
        goto done;
    Dgtf__GraphDef copy = src;
    copy.node = kept;
    copy.n_node = 0;
    for (size_t i = 0; i < src.n_node; i++)
        if (!drop[i])
            kept[copy.n_node++] = src.node[i];
    st = dgc_graphdef_load_pb(g, &copy, err);
    if (!st)
        st = collections(g, m, err);
    if (!st)
        st = save_slices(g, m, err);
done:
    dg_free(drop);
    dg_free(kept);
    return st;
}

static dg_status meta_bytes(dgc_probe *p, void *out, dg_error *err);

static dg_status meta_load(dgc_probe *p, void *out, dg_error *err)
{
    if (is_graphdef(p->text, p->len)) {
        p->declined = 1;
        return DG_OK;
    }
    return meta_bytes(p, out, err);
}

/* p's bytes as a MetaGraphDef (declined when they are not one). */
static dg_status meta_bytes(dgc_probe *p, void *out, dg_error *err)
{
    mg_oom = 0;
    Dgtf__MetaGraphDef *m = dgtf__meta_graph_def__unpack(
        &mg_allocator, p->len, (const uint8_t *)p->text);
    if (!m && mg_oom)
        return dg_err_nomem(err, "MetaGraphDef");
    if (!m || !m->graph_def || m->graph_def->n_node == 0 ||
        !(m->meta_info_def || m->saver_def || m->n_collection_def ||
          m->n_signature_def)) {
        if (m)
            dgtf__meta_graph_def__free_unpacked(m, &mg_allocator);
        p->declined = 1;
        return DG_OK;
    }
    dgc_fn_graph fg;
    memset(&fg, 0, sizeof fg);
    dg_status st = load_meta(out, m, NULL, &fg, err);
    dgc_fn_free(&fg);
    dgtf__meta_graph_def__free_unpacked(m, &mg_allocator);
    return st;
}

const dgc_format dgc_format_metagraph = {
    "metagraph", DGC_FMT_GRAPH, meta_detect, meta_load};

/* ---- SavedModel ---------------------------------------------------------- */

static int has_tag(const Dgtf__MetaGraphDef *m, const char *tag)
{
    if (!m->meta_info_def)
        return 0;
    for (size_t i = 0; i < m->meta_info_def->n_tags; i++)
        if (strcmp(m->meta_info_def->tags[i], tag) == 0)
            return 1;
    return 0;
}

static dg_status add_alias(dgc_graph *g, const char *key, const char *tensor,
                           dg_error *err)
{
    dgc_alias *a = dg_realloc(g->aliases, sizeof *a *
                              (size_t)(g->n_aliases + 1));
    if (!a)
        return dg_err_nomem(err, "SavedModel signature");
    g->aliases = a;
    a[g->n_aliases].key = dg_strdup(key);
    a[g->n_aliases].tensor = dg_strdup(tensor);
    if (!a[g->n_aliases].key || !a[g->n_aliases].tensor) {
        dg_free(a[g->n_aliases].key);
        dg_free(a[g->n_aliases].tensor);
        return dg_err_nomem(err, "SavedModel signature");
    }
    g->n_aliases++;
    return DG_OK;
}

/* The signature `want` (NULL: serving_default) of m in *out; NULL with
 * DG_OK when m has none and none was asked for. */
static dg_status find_signature(const Dgtf__MetaGraphDef *m, const char *want,
                                const Dgtf__SignatureDef **out, dg_error *err)
{
    const char *key = want ? want : "serving_default";
    const Dgtf__SignatureDef *s = NULL;
    for (size_t i = 0; i < m->n_signature_def && !s; i++)
        if (m->signature_def[i]->key &&
            strcmp(m->signature_def[i]->key, key) == 0)
            s = m->signature_def[i]->value;
    *out = s;
    if (s || (!want && m->n_signature_def == 0))
        return DG_OK; /* no signature: feeds and fetches by tensor names */
    dg_sbuf b;
    dg_sbuf_init(&b);
    for (size_t i = 0; i < m->n_signature_def; i++)
        dg_sbuf_addf(&b, "%s'%s'", i ? ", " : "",
                     m->signature_def[i]->key ? m->signature_def[i]->key : "");
    dg_status st = dg_err(err, DG_E_USAGE, "no signature '%s' in the "
                          "SavedModel (it has %s)", key,
                          b.len ? b.s : "none");
    dg_sbuf_free(&b);
    return st;
}

/* Map the signature's keys (to the tensors after inlining, fg); its
 * outputs (in key order, as TF stores the map) become the graph's fetch
 * list. */
static dg_status signature(dgc_graph *g, const char *key,
                           const Dgtf__SignatureDef *s, const dgc_fn_graph *fg,
                           dg_error *err)
{
    dg_status st = DG_OK;
    for (int side = 0; side < 2 && !st; side++) {
        size_t n = side ? s->n_outputs : s->n_inputs;
        Dgtf__SignatureDef__InputsEntry **ins = s->inputs;
        Dgtf__SignatureDef__OutputsEntry **outs = s->outputs;
        for (size_t i = 0; i < n && !st; i++) {
            const char *k = side ? outs[i]->key : ins[i]->key;
            const Dgtf__TensorInfo *ti = side ? outs[i]->value : ins[i]->value;
            if (!k)
                k = "";
            if (!ti || ti->encoding_case != DGTF__TENSOR_INFO__ENCODING_NAME)
                return dg_err(err, DG_E_GRAPH, "signature '%s': %s '%s': "
                              "unsupported SavedModel feature: a sparse or "
                              "composite tensor", key,
                              side ? "output" : "input", k);
            const char *t = dgc_fn_resolve(fg, ti->name);
            dgc_ref r;
            if (dgc_graph_parse_ref(g, t, &r) < 0)
                return dg_err(err, DG_E_GRAPH, "signature '%s': %s '%s' maps "
                              "to '%s', which the graph does not have", key,
                              side ? "output" : "input", k, ti->name);
            st = add_alias(g, k, t, err);
            if (!st && side) {
                char **f = dg_realloc(g->fetch, sizeof *f *
                                      (size_t)(g->n_fetch + 1));
                if (!f || !(f[g->n_fetch] = dg_strdup(k)))
                    st = dg_err_nomem(err, "SavedModel signature");
                if (f) {
                    g->fetch = f;
                    if (!st)
                        g->n_fetch++;
                }
            }
        }
    }
    return st;
}

/* "." -> "..", "/" -> ".S" (TF's escape of a local name in a checkpoint
 * key, trackable_utils.escape_local_name) */
static void escape_name(dg_sbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '.')
            dg_sbuf_add(b, "..");
        else if (*s == '/')
            dg_sbuf_add(b, ".S");
        else
            dg_sbuf_addn(b, s, 1);
    }
}

/* TF 2: each Variable's checkpoint key, from the SavedObjectGraph: the
 * path of local names from the root object to the variable, the first one
 * a breadth-first walk finds (TF's ObjectGraphView), escaped, then
 * "/.ATTRIBUTES/VARIABLE_VALUE". */
static dg_status object_keys(dgc_graph *g, const Dgtf__MetaGraphDef *m,
                             dg_error *err)
{
    if (!m->object_graph_def.len)
        return DG_OK;
    mg_oom = 0;
    Dgtf__SavedObjectGraph *og = dgtf__saved_object_graph__unpack(
        &mg_allocator, m->object_graph_def.len, m->object_graph_def.data);
    if (!og)
        return mg_oom ? dg_err_nomem(err, "SavedModel")
                      : dg_err(err, DG_E_GRAPH, "object_graph_def: not a "
                               "SavedObjectGraph (malformed protobuf)");
    size_t n = og->n_nodes;
    int32_t *parent = dg_malloc(sizeof *parent * (n + 1));
    const char **local = dg_calloc(n + 1, sizeof *local);
    int32_t *queue = dg_malloc(sizeof *queue * (n + 1));
    dg_status st = DG_OK;
    if (!parent || !local || !queue) {
        st = dg_err_nomem(err, "SavedModel");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        parent[i] = -2; /* not reached */
    size_t qh = 0, qt = 0;
    if (n) {
        parent[0] = -1;
        queue[qt++] = 0;
    }
    while (qh < qt) {
        const Dgtf__SavedObject *o = og->nodes[queue[qh++]];
        for (size_t k = 0; k < o->n_children; k++) {
            int32_t c = o->children[k]->node_id;
            if (c < 0 || (size_t)c >= n || parent[c] != -2)
                continue;
            parent[c] = queue[qh - 1];
            local[c] = o->children[k]->local_name ? o->children[k]->local_name
                                                  : "";
            queue[qt++] = c;
        }
    }
    for (size_t i = 0; i < n && !st; i++) {
        const Dgtf__SavedVariable *v = og->nodes[i]->variable;
        if (!v || !v->name || !v->name[0] || parent[i] < -1)
            continue;
        int32_t id = dgc_graph_find(g, v->name);
        if (id < 0 || g->nodes[id].op != DGC_OPID_Variable)
            continue; /* not used by the signature */
        /* the path, root first: walk up, then write in reverse */
        int32_t chain[64];
        int depth = 0;
        for (int32_t x = (int32_t)i; x > 0 && depth < 64; x = parent[x])
            chain[depth++] = x;
        dg_sbuf b;
        dg_sbuf_init(&b);
        for (int d = depth - 1; d >= 0; d--) {
            escape_name(&b, local[chain[d]]);
            dg_sbuf_add(&b, "/");
        }
        dg_sbuf_add(&b, ".ATTRIBUTES/VARIABLE_VALUE");
        dgc_alias *a = b.oom ? NULL : dg_realloc(g->ckpt_keys, sizeof *a *
                                                 (size_t)(g->n_ckpt_keys + 1));
        if (!a) {
            dg_sbuf_free(&b);
            st = dg_err_nomem(err, "SavedModel");
            break;
        }
        g->ckpt_keys = a;
        a[g->n_ckpt_keys].key = dg_strdup(v->name);
        a[g->n_ckpt_keys].tensor = dg_sbuf_take(&b);
        if (!a[g->n_ckpt_keys].key || !a[g->n_ckpt_keys].tensor) {
            dg_free(a[g->n_ckpt_keys].key);
            dg_free(a[g->n_ckpt_keys].tensor);
            st = dg_err_nomem(err, "SavedModel");
            break;
        }
        g->n_ckpt_keys++;
    }
done:
    dg_free(parent);
    dg_free(local);
    dg_free(queue);
    dgtf__saved_object_graph__free_unpacked(og, &mg_allocator);
    return st;
}

/* DIR/variables/variables when its .index is there. */
static dg_status variables_path(dgc_graph *g, const dgc_probe *p,
                                dg_error *err)
{
    const char *dir = p->dir;
    char buf[4096];
    if (!dir) { /* the saved_model.pb itself: its directory */
        const char *sl = p->path ? strrchr(p->path, '/') : NULL;
        if (!p->path || strcmp(p->path, "<stdin>") == 0)
            return DG_OK; /* from standard input: no directory */
        if (sl)
            snprintf(buf, sizeof buf, "%.*s/variables/variables",
                     (int)(sl - p->path), p->path);
        else
            snprintf(buf, sizeof buf, "variables/variables");
    } else {
        snprintf(buf, sizeof buf, "%s/variables/variables", dir);
    }
    char idx[4200];
    snprintf(idx, sizeof idx, "%s.index", buf);
    struct stat sb;
    if (stat(idx, &sb) != 0)
        return DG_OK; /* a model without variables */
    if (!(g->variables_path = dg_strdup(buf)))
        return dg_err_nomem(err, "SavedModel");
    return DG_OK;
}

static dg_status sm_load(dgc_probe *p, void *out, dg_error *err)
{
    dgc_graph *g = out;
    mg_oom = 0;
    Dgtf__SavedModel *sm = dgtf__saved_model__unpack(
        &mg_allocator, p->len, (const uint8_t *)p->text);
    if (!sm && mg_oom)
        return dg_err_nomem(err, "SavedModel");
    int ok = sm && sm->n_meta_graphs > 0;
    for (size_t i = 0; ok && i < sm->n_meta_graphs; i++)
        ok = sm->meta_graphs[i]->graph_def != NULL;
    if (!ok) {
        if (sm)
            dgtf__saved_model__free_unpacked(sm, &mg_allocator);
        p->declined = 1;
        return DG_OK;
    }
    const Dgtf__MetaGraphDef *m = sm->meta_graphs[0];
    for (size_t i = 0; i < sm->n_meta_graphs; i++)
        if (has_tag(sm->meta_graphs[i], "serve")) {
            m = sm->meta_graphs[i];
            break;
        }
    const Dgtf__SignatureDef *sig = NULL;
    dgc_fn_graph fg;
    memset(&fg, 0, sizeof fg);
    dg_status st = find_signature(m, p->signature, &sig, err);
    if (!st)
        st = load_meta(g, m, sig, &fg, err);
    if (!st && sig)
        st = signature(g, p->signature ? p->signature : "serving_default",
                       sig, &fg, err);
    if (!st)
        st = object_keys(g, m, err);
    if (!st)
        st = variables_path(g, p, err);
    dgc_fn_free(&fg);
    /* a SavedModel is for serving: its train_op collection, if any, is
     * kept, but nothing else of the training is assumed */
    dgtf__saved_model__free_unpacked(sm, &mg_allocator);
    return st;
}

const dgc_format dgc_format_savedmodel = {
    "savedmodel", DGC_FMT_GRAPH, sm_detect, sm_load};

/* ---- text format: recognised, refused ----------------------------------- */

static int text_detect(dgc_probe *p)
{
    static const char *const first[] = {
        "meta_info_def", "graph_def", "saver_def", "collection_def",
        "signature_def", "saved_model_schema_version", "meta_graphs", NULL};
    if (dgc_input_kind(p->text, p->len) != DGC_INPUT_JSON)
        return DGC_DETECT_NO;
    size_t i = 0;
    while (i < p->len && (p->text[i] == ' ' || p->text[i] == '\n' ||
                          p->text[i] == '\t' || p->text[i] == '\r'))
        i++;
    for (int k = 0; first[k]; k++) {
        size_t n = strlen(first[k]);
        if (p->len - i > n && strncmp(p->text + i, first[k], n) == 0 &&
            (p->text[i + n] == ' ' || p->text[i + n] == '{' ||
             p->text[i + n] == ':'))
            return DGC_DETECT_YES;
    }
    return DGC_DETECT_NO;
}

/* The text, encoded as binary, through the binary rows' loads. */
static dg_status text_load(dgc_probe *p, void *out, dg_error *err)
{
    size_t i = 0;
    while (i < p->len && (p->text[i] == ' ' || p->text[i] == '\n' ||
                          p->text[i] == '\t' || p->text[i] == '\r'))
        i++;
    int sm = (p->len - i >= 11 && strncmp(p->text + i, "meta_graphs", 11) == 0) ||
             (p->len - i >= 26 &&
              strncmp(p->text + i, "saved_model_schema_version", 26) == 0);
    uint8_t *bin = NULL;
    size_t n = 0;
    char why[300];
    int rc = dgc_pbtext_encode(p->text, p->len,
                               sm ? &dgtf__saved_model__descriptor
                                  : &dgtf__meta_graph_def__descriptor,
                               &bin, &n, why, sizeof why);
    if (rc == -2)
        return dg_err_nomem(err, "text-format protobuf");
    if (rc)
        return dg_err(err, DG_E_GRAPH, "not a text-format %s: %s",
                      sm ? "SavedModel" : "MetaGraphDef", why);
    dgc_probe b = *p;
    b.text = (const char *)bin;
    b.len = n;
    b.declined = 0;
    b.json_read = 0;
    dg_status st = sm ? sm_load(&b, out, err) : meta_bytes(&b, out, err);
    if (!st && b.declined)
        st = dg_err(err, DG_E_GRAPH, "a text-format %s without a graph_def",
                    sm ? "SavedModel" : "MetaGraphDef");
    dg_free(bin);
    return st;
}

const dgc_format dgc_format_metagraph_text = {
    "metagraph-text", DGC_FMT_GRAPH, text_detect, text_load};
