/*
 * load_sections.c -- the graph file's sections other than `nodes`:
 * gradients, collections, placement, fetch and train (SPEC section 2),
 * cluster and replicate (SPEC 8.1, 8.4).
 * Names of file nodes must exist; fetches may name generated nodes, so only
 * their syntax is checked here.
 */
#include "load_priv.h"
#include "ops.h"
#include "load.h"
#include "cluster.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

#define GE(...) dg_err(err, DG_E_GRAPH, __VA_ARGS__)

/* A list of existing node names -> ids.  `what` names the field. */
static dg_status node_list(const dgc_graph *g, const cJSON *x,
                           const char *what, int32_t **out, int *n,
                           dg_error *err)
{
    char **v;
    int cnt;
    int rc = dgc_json_strlist(x, &v, &cnt);
    if (rc == -2)
        return dg_err_nomem(err, what);
    if (rc)
        return GE("%s must be a list of node names, got %s", what,
                  dgc_json_kind(x));
    int32_t *ids = dg_malloc(sizeof *ids * (size_t)(cnt > 0 ? cnt : 1));
    if (!ids) {
        dgc_strv_free(v, cnt);
        return dg_err_nomem(err, what);
    }
    for (int i = 0; i < cnt; i++) {
        const char *s = v[i];
        size_t l = strlen(s);
        if (l > 2 && s[l - 2] == ':' && s[l - 1] == '0') /* "x:0" = "x" */
            l -= 2;
        ids[i] = dg_strmap_getn(&g->names, s, l);
        if (ids[i] < 0) {
            GE("%s names unknown node '%s'", what, s);
            dg_free(ids);
            dgc_strv_free(v, cnt);
            return DG_E_GRAPH;
        }
    }
    dgc_strv_free(v, cnt);
    *out = ids;
    *n = cnt;
    return DG_OK;
}

static dg_status need_bool(const cJSON *x, const char *what, int *out,
                           dg_error *err)
{
    if (!cJSON_IsBool(x))
        return GE("%s must be true or false, got %s", what, dgc_json_kind(x));
    *out = cJSON_IsTrue(x) ? 1 : 0;
    return DG_OK;
}

static dg_status need_int(const dgc_jdoc *doc, const cJSON *x,
                          const char *what, int64_t min, int64_t *out,
                          dg_error *err)
{
    int64_t v;
    if (dgc_json_int64(doc, x, &v) || v < min)
        return GE("%s must be an integer >= %lld", what, (long long)min);
    *out = v;
    return DG_OK;
}

static dg_status need_num(const cJSON *x, const char *what, double *out,
                          dg_error *err)
{
    if (!cJSON_IsNumber(x))
        return GE("%s must be a number, got %s", what, dgc_json_kind(x));
    *out = x->valuedouble;
    return DG_OK;
}

static dg_status load_gradients(dgc_graph *g, const cJSON *x, dg_error *err)
{
    if (!cJSON_IsArray(x))
        return GE("'gradients' must be an array, got %s", dgc_json_kind(x));
    int cnt = cJSON_GetArraySize(x);
    g->gradsets = dg_calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *g->gradsets);
    if (!g->gradsets)
        return dg_err_nomem(err, "gradients");
    int i = 0;
    for (const cJSON *e = x->child; e; e = e->next, i++) {
        dgc_gradset *gs = &g->gradsets[g->n_gradsets++];
        gs->colocate = -1;
        char what[160];
        if (!cJSON_IsObject(e))
            return GE("gradients[%d] must be an object, got %s", i,
                      dgc_json_kind(e));
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (!cJSON_IsString(name) || !dgc_valid_name(name->valuestring))
            return GE("gradients[%d]: 'name' must be a valid name", i);
        for (int k = 0; k < i; k++)
            if (strcmp(g->gradsets[k].name, name->valuestring) == 0)
                return GE("gradients[%d]: duplicate gradient set name '%s'", i,
                          name->valuestring);
        if (!(gs->name = dg_strdup(name->valuestring)))
            return dg_err_nomem(err, "gradients");
        const cJSON *ys = NULL, *xs = NULL;
        for (const cJSON *k = e->child; k; k = k->next) {
            snprintf(what, sizeof what, "gradients '%s': '%s'", gs->name,
                     k->string);
            dg_status st = DG_OK;
            if (strcmp(k->string, "name") == 0)
                continue;
            else if (strcmp(k->string, "ys") == 0) {
                ys = k;
                st = node_list(g, k, what, &gs->ys, &gs->n_ys, err);
            } else if (strcmp(k->string, "xs") == 0) {
                xs = k;
                st = node_list(g, k, what, &gs->xs, &gs->n_xs, err);
            } else if (strcmp(k->string, "grad_ys") == 0) {
                if (!cJSON_IsNull(k))
                    st = node_list(g, k, what, &gs->grad_ys, &gs->n_grad_ys,
                                   err);
            } else if (strcmp(k->string, "colocate") == 0)
                st = need_bool(k, what, &gs->colocate, err);
            else
                return GE("gradients '%s': unknown key '%s'", gs->name,
                          k->string);
            if (st)
                return st;
        }
        if (!ys || gs->n_ys == 0)
            return GE("gradients '%s': 'ys' must name at least one node",
                      gs->name);
        if (!xs || gs->n_xs == 0)
            return GE("gradients '%s': 'xs' must name at least one node",
                      gs->name);
        if (gs->n_grad_ys && gs->n_grad_ys != gs->n_ys)
            return GE("gradients '%s': 'grad_ys' has %d entries but 'ys' has "
                      "%d", gs->name, gs->n_grad_ys, gs->n_ys);
    }
    return DG_OK;
}

static dg_status load_collections(dgc_graph *g, const cJSON *x, dg_error *err)
{
    if (!cJSON_IsObject(x))
        return GE("'collections' must be an object, got %s", dgc_json_kind(x));
    int cnt = cJSON_GetArraySize(x);
    g->collections = dg_calloc((size_t)(cnt > 0 ? cnt : 1),
                               sizeof *g->collections);
    if (!g->collections)
        return dg_err_nomem(err, "collections");
    const char *dup;
    if (dgc_json_dup_key(x, &dup))
        return GE("duplicate collection '%s'", dup);
    for (const cJSON *e = x->child; e; e = e->next) {
        dgc_collection *c = &g->collections[g->n_collections++];
        if (!(c->name = dg_strdup(e->string)))
            return dg_err_nomem(err, "collections");
        char what[160];
        snprintf(what, sizeof what, "collection '%s'", e->string);
        dg_status st = node_list(g, e, what, &c->nodes, &c->n_nodes, err);
        if (st)
            return st;
    }
    return DG_OK;
}

static dg_status load_placement(dgc_graph *g, const cJSON *x, dg_error *err)
{
    if (!cJSON_IsObject(x))
        return GE("'placement' must be an object, got %s", dgc_json_kind(x));
    for (const cJSON *k = x->child; k; k = k->next) {
        if (strcmp(k->string, "allow_soft_placement") == 0) {
            dg_status st = need_bool(k, "placement.allow_soft_placement",
                                     &g->allow_soft_placement, err);
            if (st)
                return st;
        } else if (strcmp(k->string, "rules") == 0) {
            dgc_rules_free(g->rules, g->n_rules);
            g->rules = NULL;
            g->n_rules = 0;
            dg_status st = dgc_rules_parse(k, "", &g->rules, &g->n_rules, err);
            if (st)
                return st;
            g->rules_present = 1;
        } else {
            return GE("placement: unknown key '%s'", k->string);
        }
    }
    return DG_OK;
}

static dg_status fetch_list(const cJSON *x, const char *what, char ***out,
                            int *n, dg_error *err)
{
    int rc = dgc_json_strlist(x, out, n);
    if (rc == -2)
        return dg_err_nomem(err, what);
    if (rc)
        return GE("'%s' must be a list of names, got %s", what,
                  dgc_json_kind(x));
    for (int i = 0; i < *n; i++)
        if (!dgc_valid_ref((*out)[i]))
            return GE("%s: malformed name '%s'", what, (*out)[i]);
    return DG_OK;
}

static dg_status load_feeds(const dgc_graph *g, const dgc_jdoc *doc,
                            const cJSON *x, const char *what, dgc_feed **out,
                            int *n, dg_error *err)
{
    if (!cJSON_IsObject(x))
        return GE("%s must be an object {placeholder: {file, batch, shuffle}}, "
                  "got %s", what, dgc_json_kind(x));
    int cnt = cJSON_GetArraySize(x);
    *out = dg_calloc((size_t)(cnt > 0 ? cnt : 1), sizeof **out);
    if (!*out)
        return dg_err_nomem(err, what);
    for (const cJSON *e = x->child; e; e = e->next) {
        dgc_feed *f = &(*out)[(*n)++];
        int32_t id = dg_strmap_get(&g->names, e->string);
        size_t kl = strlen(e->string);
        if (id < 0 && kl > 2 && strcmp(e->string + kl - 2, ":0") == 0) {
            /* TF's tensor name "x:0" for Placeholder x */
            if (!(f->placeholder = dg_strdup(e->string)))
                return dg_err_nomem(err, what);
            f->placeholder[kl - 2] = '\0';
            id = dg_strmap_get(&g->names, f->placeholder);
        }
        if (id < 0)
            return GE("%s names unknown node '%s'", what, e->string);
        const char *ph = g->nodes[id].name;
        if (!dgc_op_has(g->nodes[id].op, DGC_OP_FEED))
            return GE("node '%s': %s: only a Placeholder can be fed (it is a "
                      "%s)", ph, what, dgc_op_name(g->nodes[id].op));
        for (int k = 0; k < *n - 1; k++)
            if (strcmp((*out)[k].placeholder, ph) == 0)
                return GE("%s: '%s' fed twice", what, ph);
        if (!f->placeholder && !(f->placeholder = dg_strdup(ph)))
            return dg_err_nomem(err, what);
        const cJSON *file = NULL;
        if (cJSON_IsString(e)) {
            file = e;
        } else if (cJSON_IsObject(e)) {
            for (const cJSON *k = e->child; k; k = k->next) {
                dg_status st = DG_OK;
                if (strcmp(k->string, "file") == 0)
                    file = k;
                else if (strcmp(k->string, "batch") == 0)
                    st = need_int(doc, k, "feed 'batch'", 1, &f->batch, err);
                else if (strcmp(k->string, "shuffle") == 0)
                    st = need_bool(k, "feed 'shuffle'", &f->shuffle, err);
                else
                    return GE("%s '%s': unknown key '%s'", what, e->string,
                              k->string);
                if (st)
                    return st;
            }
        } else {
            return GE("%s '%s' must be an object, got %s", what, e->string,
                      dgc_json_kind(e));
        }
        if (!cJSON_IsString(file) || !file->valuestring[0])
            return GE("%s '%s': 'file' must be a file name", what, e->string);
        if (!(f->file = dg_strdup(file->valuestring)))
            return dg_err_nomem(err, what);
    }
    return DG_OK;
}

static dg_status load_optimizer(const cJSON *x, dgc_optimizer *o,
                                dg_error *err)
{
    if (!cJSON_IsObject(x))
        return GE("train.optimizer must be an object, got %s",
                  dgc_json_kind(x));
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(x, "type");
    if (!cJSON_IsString(type))
        return GE("train.optimizer.type must be \"sgd\", \"momentum\" or "
                  "\"adam\"");
    const char *t = type->valuestring;
    if (strcmp(t, "sgd") == 0)
        o->kind = DGC_OPT_SGD;
    else if (strcmp(t, "momentum") == 0)
        o->kind = DGC_OPT_MOMENTUM;
    else if (strcmp(t, "adam") == 0)
        o->kind = DGC_OPT_ADAM;
    else
        return GE("train.optimizer: unknown type '%s' (sgd, momentum, adam)",
                  t);
    o->learning_rate = -1;
    o->momentum = 0.9;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->epsilon = 1e-8;
    for (const cJSON *k = x->child; k; k = k->next) {
        const char *key = k->string;
        dg_status st = DG_OK;
        int ok_key = 1;
        if (strcmp(key, "type") == 0)
            continue;
        if (strcmp(key, "learning_rate") == 0)
            st = need_num(k, "train.optimizer.learning_rate",
                          &o->learning_rate, err);
        else if (strcmp(key, "momentum") == 0 && o->kind == DGC_OPT_MOMENTUM)
            st = need_num(k, "train.optimizer.momentum", &o->momentum, err);
        else if (strcmp(key, "use_nesterov") == 0 && o->kind == DGC_OPT_MOMENTUM)
            st = need_bool(k, "train.optimizer.use_nesterov", &o->use_nesterov,
                           err);
        else if (strcmp(key, "beta1") == 0 && o->kind == DGC_OPT_ADAM)
            st = need_num(k, "train.optimizer.beta1", &o->beta1, err);
        else if (strcmp(key, "beta2") == 0 && o->kind == DGC_OPT_ADAM)
            st = need_num(k, "train.optimizer.beta2", &o->beta2, err);
        else if (strcmp(key, "epsilon") == 0 && o->kind == DGC_OPT_ADAM)
            st = need_num(k, "train.optimizer.epsilon", &o->epsilon, err);
        else
            ok_key = 0;
        if (!ok_key)
            return GE("train.optimizer: unknown key '%s' for type '%s'", key, t);
        if (st)
            return st;
    }
    if (o->learning_rate < 0) {
        if (o->kind != DGC_OPT_ADAM)
            return GE("train.optimizer: 'learning_rate' is required (a number "
                      ">= 0)");
        o->learning_rate = 0.001;
    }
    return DG_OK;
}

static dg_status load_train(dgc_graph *g, const dgc_jdoc *doc, const cJSON *x,
                            dg_error *err)
{
    dgc_train *t = &g->train;
    if (!cJSON_IsObject(x))
        return GE("'train' must be an object, got %s", dgc_json_kind(x));
    t->present = 1;
    t->steps = 1;
    const cJSON *loss = NULL, *opt = NULL;
    for (const cJSON *k = x->child; k; k = k->next) {
        const char *key = k->string;
        dg_status st = DG_OK;
        if (strcmp(key, "loss") == 0) {
            loss = k;
        } else if (strcmp(key, "optimizer") == 0) {
            opt = k;
        } else if (strcmp(key, "var_list") == 0) {
            int32_t *ids;
            int n;
            st = node_list(g, k, "train.var_list", &ids, &n, err);
            if (st)
                return st;
            for (int i = 0; i < n && !st; i++)
                if (!dgc_op_has(g->nodes[ids[i]].op, DGC_OP_VARIABLE))
                    st = GE("node '%s': train.var_list: not a Variable",
                            g->nodes[ids[i]].name);
            if (!st) {
                t->var_list = dg_calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
                if (!t->var_list)
                    st = dg_err_nomem(err, "train");
                for (int i = 0; i < n && !st; i++, t->n_var_list = i)
                    if (!(t->var_list[i] = dg_strdup(g->nodes[ids[i]].name)))
                        st = dg_err_nomem(err, "train");
                if (!st)
                    t->n_var_list = n;
            }
            dg_free(ids);
        } else if (strcmp(key, "steps") == 0) {
            st = need_int(doc, k, "train.steps", 0, &t->steps, err);
        } else if (strcmp(key, "feeds") == 0) {
            st = load_feeds(g, doc, k, "train.feeds", &t->feeds, &t->n_feeds,
                            err);
        } else if (strcmp(key, "update_ops") == 0) {
            if (!cJSON_IsString(k))
                return GE("train.update_ops must be a collection name");
            if (!(t->update_ops = dg_strdup(k->valuestring)))
                return dg_err_nomem(err, "train");
        } else if (strcmp(key, "colocate_gradients") == 0) {
            st = need_bool(k, "train.colocate_gradients",
                           &t->colocate_gradients, err);
        } else if (strcmp(key, "log_every") == 0) {
            st = need_int(doc, k, "train.log_every", 1, &t->log_every, err);
        } else if (strcmp(key, "eval_every") == 0) {
            st = need_int(doc, k, "train.eval_every", 0, &t->eval_every, err);
        } else if (strcmp(key, "eval") == 0) {
            if (!cJSON_IsObject(k))
                return GE("train.eval must be an object {feeds, fetch}");
            for (const cJSON *e = k->child; e && !st; e = e->next) {
                if (strcmp(e->string, "feeds") == 0)
                    st = load_feeds(g, doc, e, "train.eval.feeds",
                                    &t->eval_feeds, &t->n_eval_feeds, err);
                else if (strcmp(e->string, "fetch") == 0)
                    st = fetch_list(e, "train.eval.fetch", &t->eval_fetch,
                                    &t->n_eval_fetch, err);
                else
                    return GE("train.eval: unknown key '%s'", e->string);
            }
        } else if (strcmp(key, "checkpoint") == 0) {
            if (!cJSON_IsObject(k))
                return GE("train.checkpoint must be an object {path, every}");
            for (const cJSON *e = k->child; e && !st; e = e->next) {
                if (strcmp(e->string, "path") == 0) {
                    if (!cJSON_IsString(e) || !e->valuestring[0])
                        return GE("train.checkpoint.path must be a path");
                    dg_free(t->checkpoint_path);
                    if (!(t->checkpoint_path = dg_strdup(e->valuestring)))
                        return dg_err_nomem(err, "train");
                } else if (strcmp(e->string, "every") == 0) {
                    st = need_int(doc, e, "train.checkpoint.every", 0,
                                  &t->checkpoint_every, err);
                } else {
                    return GE("train.checkpoint: unknown key '%s'", e->string);
                }
            }
        } else {
            return GE("train: unknown key '%s'", key);
        }
        if (st)
            return st;
    }
    if (!loss)
        return GE("train: missing 'loss'");
    if (!cJSON_IsString(loss))
        return GE("train.loss must be a node name, got %s",
                  dgc_json_kind(loss));
    dgc_ref r;
    if (dgc_graph_parse_ref(g, loss->valuestring, &r))
        return GE("train.loss names unknown node '%s'", loss->valuestring);
    if (!(t->loss = dg_strdup(loss->valuestring)))
        return dg_err_nomem(err, "train");
    if (!opt)
        return GE("train: missing 'optimizer'");
    return load_optimizer(opt, &t->opt, err);
}

/* "cluster": {"ps": 1, "worker": 2}, jobs in key order (SPEC 8.1). */
static dg_status load_cluster(dgc_graph *g, const dgc_jdoc *doc,
                              const cJSON *x, dg_error *err)
{
    if (!cJSON_IsObject(x))
        return GE("'cluster' must be an object {\"<job>\": <tasks>, ...}, "
                  "got %s", dgc_json_kind(x));
    if (!x->child)
        return GE("cluster: lists no job");
    dg_cluster *c = dgc_cluster_new();
    if (!c)
        return dg_err_nomem(err, "cluster");
    dg_status st = DG_OK;
    for (const cJSON *k = x->child; k && !st; k = k->next) {
        int64_t v;
        if (dgc_json_int64(doc, k, &v) == 0)
            st = dgc_cluster_add(c, k->string, strlen(k->string),
                                 (long long)v, "cluster", DG_E_GRAPH, err);
        else if (cJSON_IsNumber(k))
            st = GE("cluster: job '%.40s' needs a task count from 1 to %d, "
                    "got %g", k->string, DG_CLUSTER_MAX_TASKS,
                    k->valuedouble);
        else
            st = GE("cluster: job '%.40s' needs a task count from 1 to %d, "
                    "got %s", k->string, DG_CLUSTER_MAX_TASKS,
                    dgc_json_kind(k));
    }
    if (st) {
        dg_cluster_free(c);
        return st;
    }
    g->cluster = c;
    return DG_OK;
}

/* A job name for "replicate.<what>" into buf[64]. */
static dg_status repl_job(const cJSON *k, const char *what, char *buf,
                          dg_error *err)
{
    if (!cJSON_IsString(k) || !k->valuestring[0] ||
        strlen(k->valuestring) > 63)
        return GE("replicate.%s must be a job name, got %s", what,
                  dgc_json_kind(k));
    snprintf(buf, 64, "%s", k->valuestring);
    return DG_OK;
}

/* "replicate": {"job": "worker", "strategy": "ps" | "allreduce",
 * "sync": true, "ps_job": "ps"} (SPEC 8.4).  The jobs are checked against
 * the cluster by the replication pass (--cluster may change it). */
static dg_status load_replicate(dgc_graph *g, const cJSON *x, dg_error *err)
{
    dgc_replicate *r = &g->replicate;
    if (!cJSON_IsObject(x))
        return GE("'replicate' must be an object {\"job\": ..., "
                  "\"strategy\": \"ps\" | \"allreduce\", ...}, got %s",
                  dgc_json_kind(x));
    r->present = 1;
    r->sync = 1;
    snprintf(r->ps_job, sizeof r->ps_job, "ps");
    int has_job = 0, has_strategy = 0, has_ps = 0, has_sync = 0;
    dg_status st = DG_OK;
    for (const cJSON *k = x->child; k && !st; k = k->next) {
        if (strcmp(k->string, "job") == 0) {
            st = repl_job(k, "job", r->job, err);
            has_job = 1;
        } else if (strcmp(k->string, "ps_job") == 0) {
            st = repl_job(k, "ps_job", r->ps_job, err);
            has_ps = 1;
        } else if (strcmp(k->string, "sync") == 0) {
            st = need_bool(k, "replicate.sync", &r->sync, err);
            has_sync = 1;
        } else if (strcmp(k->string, "strategy") == 0) {
            const char *v = cJSON_IsString(k) ? k->valuestring : NULL;
            if (v && strcmp(v, "ps") == 0)
                r->strategy = DGC_REPL_PS;
            else if (v && strcmp(v, "allreduce") == 0)
                r->strategy = DGC_REPL_ALLREDUCE;
            else if (v)
                st = GE("replicate.strategy must be \"ps\" or "
                        "\"allreduce\", got \"%.40s\"", v);
            else
                st = GE("replicate.strategy must be \"ps\" or "
                        "\"allreduce\", got %s", dgc_json_kind(k));
            has_strategy = 1;
        } else {
            st = GE("replicate: unknown key '%.40s' (expected job, strategy, "
                    "sync, ps_job)", k->string);
        }
    }
    if (st)
        return st;
    if (!has_job)
        return GE("replicate: missing 'job' (the job whose tasks run the "
                  "replicas)");
    if (!has_strategy)
        return GE("replicate: missing 'strategy' (\"ps\" or \"allreduce\")");
    if (r->strategy == DGC_REPL_ALLREDUCE && has_sync && !r->sync)
        return GE("replicate: strategy \"allreduce\" is synchronous; "
                  "\"sync\": false needs strategy \"ps\"");
    if (r->strategy == DGC_REPL_ALLREDUCE && has_ps)
        return GE("replicate: 'ps_job' applies only to strategy \"ps\"");
    return DG_OK;
}

dg_status dgc_load_sections(dgc_graph *g, const dgc_jdoc *doc,
                            const cJSON *root, dg_error *err)
{
    dg_status st = DG_OK;
    for (const cJSON *k = root->child; k && !st; k = k->next) {
        if (strcmp(k->string, "gradients") == 0)
            st = load_gradients(g, k, err);
        else if (strcmp(k->string, "collections") == 0)
            st = load_collections(g, k, err);
        else if (strcmp(k->string, "placement") == 0)
            st = load_placement(g, k, err);
        else if (strcmp(k->string, "fetch") == 0)
            st = fetch_list(k, "fetch", &g->fetch, &g->n_fetch, err);
        else if (strcmp(k->string, "train") == 0)
            st = load_train(g, doc, k, err);
        else if (strcmp(k->string, "cluster") == 0)
            st = load_cluster(g, doc, k, err);
        else if (strcmp(k->string, "replicate") == 0)
            st = load_replicate(g, k, err);
    }
    return st;
}
