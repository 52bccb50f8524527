/*
 * load_rules.c -- placement rules (SPEC 4.3), shared by the graph's
 * `placement.rules` and the --placement FILE (a JSON array of rules).
 * Op names in `match.op` are stored canonical (VariableV2 -> Variable).
 */
#include "format.h"
#include "load.h"
#include "ops.h"
#include "devices.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

void dgc_rules_free(dgc_rule *rules, int n)
{
    if (!rules)
        return;
    for (int i = 0; i < n; i++) {
        dgc_strv_free(rules[i].ops, rules[i].n_ops);
        dg_free(rules[i].name_glob);
        dg_free(rules[i].device);
        dgc_strv_free(rules[i].devices, rules[i].n_devices);
    }
    dg_free(rules);
}

static dg_status check_device(const char *pre, int i, const char *dev,
                              dg_error *err)
{
    dgc_devspec ds;
    if (dgc_devspec_parse(dev, &ds))
        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: Malformed device "
                      "specification '%s'", pre, i, dev);
    return DG_OK;
}

static dg_status parse_rule(const cJSON *r, const char *pre, int i,
                            dgc_rule *out, dg_error *err)
{
    if (!cJSON_IsObject(r))
        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: must be an "
                      "object, got %s", pre, i, dgc_json_kind(r));
    const cJSON *strategy = NULL, *devices = NULL, *device = NULL;
    for (const cJSON *k = r->child; k; k = k->next) {
        if (strcmp(k->string, "match") == 0) {
            if (cJSON_IsNull(k))
                continue;
            if (!cJSON_IsObject(k))
                return dg_err(err, DG_E_GRAPH, "%splacement rule %d: 'match' "
                              "must be an object, got %s", pre, i,
                              dgc_json_kind(k));
            for (const cJSON *m = k->child; m; m = m->next) {
                if (strcmp(m->string, "op") == 0) {
                    if (out->ops)
                        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: "
                                      "duplicate 'op'", pre, i);
                    int rc = dgc_json_strlist(m, &out->ops, &out->n_ops);
                    if (rc == -2)
                        return dg_err_nomem(err, "rules");
                    if (rc)
                        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: "
                                      "match.op must be an op name or a list "
                                      "of op names", pre, i);
                    /* SPEC 4.3: op types are compared as strings, as a
                     * TF device function compares node_def.op: a type
                     * dgrun does not know (AutoReloadVariable) is kept as
                     * written and matches no node.  Known types (and
                     * aliases: VariableV2) become their canonical name,
                     * once. */
                    int kept = 0;
                    for (int j = 0; j < out->n_ops; j++) {
                        int op = dgc_op_find(out->ops[j]);
                        if (op >= 0) {
                            char *c = dg_strdup(dgc_op_name(op));
                            if (!c)
                                return dg_err_nomem(err, "rules");
                            dg_free(out->ops[j]);
                            out->ops[j] = c;
                        }
                        int dup = 0;
                        for (int q = 0; q < kept && !dup; q++)
                            dup = strcmp(out->ops[q], out->ops[j]) == 0;
                        if (dup) {
                            dg_free(out->ops[j]);
                        } else {
                            out->ops[kept++] = out->ops[j];
                        }
                        out->ops[j] = j < kept ? out->ops[j] : NULL;
                    }
                    out->n_ops = kept;
                } else if (strcmp(m->string, "name") == 0) {
                    if (!cJSON_IsString(m))
                        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: "
                                      "match.name must be a glob string, got "
                                      "%s", pre, i, dgc_json_kind(m));
                    if (!dgc_valid_glob(m->valuestring))
                        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: "
                                      "malformed glob '%s'", pre, i,
                                      m->valuestring);
                    dg_free(out->name_glob);
                    if (!(out->name_glob = dg_strdup(m->valuestring)))
                        return dg_err_nomem(err, "rules");
                } else {
                    return dg_err(err, DG_E_GRAPH, "%splacement rule %d: "
                                  "unknown key '%s' in match", pre, i,
                                  m->string);
                }
            }
        } else if (strcmp(k->string, "device") == 0) {
            device = k;
        } else if (strcmp(k->string, "devices") == 0) {
            devices = k;
        } else if (strcmp(k->string, "strategy") == 0) {
            strategy = k;
        } else {
            return dg_err(err, DG_E_GRAPH, "%splacement rule %d: unknown key "
                          "'%s'", pre, i, k->string);
        }
    }
    if (device && devices)
        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: give either "
                      "'device' or 'devices', not both", pre, i);
    if (!device && !devices)
        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: needs 'device' "
                      "or 'devices'", pre, i);
    if (device) {
        if (!cJSON_IsString(device))
            return dg_err(err, DG_E_GRAPH, "%splacement rule %d: 'device' "
                          "must be a string, got %s", pre, i,
                          dgc_json_kind(device));
        if (strategy)
            return dg_err(err, DG_E_GRAPH, "%splacement rule %d: 'strategy' "
                          "needs 'devices'", pre, i);
        dg_status st = check_device(pre, i, device->valuestring, err);
        if (st)
            return st;
        if (!(out->device = dg_strdup(device->valuestring)))
            return dg_err_nomem(err, "rules");
        return DG_OK;
    }
    if (!cJSON_IsArray(devices) || cJSON_GetArraySize(devices) == 0)
        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: 'devices' must "
                      "be a non-empty list of device strings", pre, i);
    int rc = dgc_json_strlist(devices, &out->devices, &out->n_devices);
    if (rc == -2)
        return dg_err_nomem(err, "rules");
    if (rc)
        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: 'devices' must be "
                      "a non-empty list of device strings", pre, i);
    for (int j = 0; j < out->n_devices; j++) {
        dg_status st = check_device(pre, i, out->devices[j], err);
        if (st)
            return st;
    }
    if (strategy && (!cJSON_IsString(strategy) ||
                     strcmp(strategy->valuestring, "round_robin") != 0))
        return dg_err(err, DG_E_GRAPH, "%splacement rule %d: unknown strategy "
                      "%s%s%s (only \"round_robin\")", pre, i,
                      cJSON_IsString(strategy) ? "'" : "",
                      cJSON_IsString(strategy) ? strategy->valuestring
                                               : dgc_json_kind(strategy),
                      cJSON_IsString(strategy) ? "'" : "");
    out->round_robin = 1;
    return DG_OK;
}

dg_status dgc_rules_parse(const cJSON *arr, const char *pre,
                          dgc_rule **rules, int *n, dg_error *err)
{
    *rules = NULL;
    *n = 0;
    if (!pre)
        pre = "";
    if (!cJSON_IsArray(arr))
        return dg_err(err, DG_E_GRAPH, "%splacement rules must be an array, "
                      "got %s", pre, dgc_json_kind(arr));
    int cnt = cJSON_GetArraySize(arr);
    dgc_rule *r = dg_calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *r);
    if (!r)
        return dg_err_nomem(err, "rules");
    int i = 0;
    for (const cJSON *e = arr->child; e; e = e->next, i++) {
        dg_status st = parse_rule(e, pre, i, &r[i], err);
        if (st) {
            dgc_rules_free(r, cnt);
            return st;
        }
    }
    *rules = r;
    *n = cnt;
    return DG_OK;
}

/* ---- the format's row (format.c) --------------------------------------- */

static int rules_detect(dgc_probe *p)
{
    (void)p;
    return DGC_DETECT_YES; /* the one rules format */
}

/* A JSON array of rules, or {"rules": [...]} (the graph's placement
 * object); errors start with the file's path. */
static dg_status rules_load(dgc_probe *p, void *out, dg_error *err)
{
    dgc_rules_out *o = out;
    char pre[1100];
    snprintf(pre, sizeof pre, "%s: ", p->path);
    dgc_jdoc doc;
    dg_status st = dgc_json_parse(&doc, p->text, p->len, pre, err);
    if (!st) {
        const cJSON *arr = doc.root;
        /* also accept {"rules": [...]} (the graph's placement object) */
        if (cJSON_IsObject(arr)) {
            for (const cJSON *k = arr->child; k; k = k->next)
                if (strcmp(k->string, "rules") != 0) {
                    st = dg_err(err, DG_E_GRAPH, "%sunknown key '%s' (expected "
                                "a JSON array of rules)", pre, k->string);
                    break;
                }
            arr = cJSON_GetObjectItemCaseSensitive(arr, "rules");
        }
        if (!st)
            st = dgc_rules_parse(arr, pre, &o->rules, &o->n, err);
        dgc_json_free(&doc);
    }
    return st;
}

const dgc_format dgc_format_placement_rules = {
    "placement-rules", DGC_FMT_RULES, rules_detect,
    rules_load};
