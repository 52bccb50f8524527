/*
 * expect.c -- dg_program_expect: compare a placement with a golden file
 * (SPEC 6).  The golden is a JSON object {"<node>": "<device spec>"}; specs
 * are canonicalised before comparing, and a partial golden spec (e.g.
 * "/device:GPU:*") accepts any device it matches.  Differences are reported
 * in golden order as "<node>: expected <dev>, placed on <dev>".  In a
 * cluster (SPEC 8.2) a golden spec naming no job means the chief's task,
 * as a request does ("/gpu:0" is the chief's GPU:0), and "/job:ps/task:0"
 * accepts any device of that task.
 */
#include "program.h"
#include "load_priv.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The golden file's text; a path that does not exist or is a directory is
 * bad usage (exit 2) like a missing graph or rules file, an unreadable one
 * an I/O failure (dgc_read_file). */
static dg_status read_file(const char *path, char **out, dg_error *err)
{
    size_t len = 0;
    dg_error e;
    memset(&e, 0, sizeof e);
    dg_status st = dgc_read_file(path, out, &len, &e);
    if (st) {
        const char *why = strncmp(e.msg, "cannot read: ", 13) == 0
                              ? e.msg + 13 : e.msg;
        return dg_err(err, st, "%s: cannot open golden file: %s", path, why);
    }
    return DG_OK;
}

/* Full canonical name if the spec names one device, else its partial
 * canonical text. */
static void expected_text(const dgc_devspec *s, char *buf, size_t n)
{
    if (s->type != DGC_TYPE_ANY && s->id >= 0 &&
        (!s->has_job || strcmp(s->job, "localhost") == 0) &&
        s->replica <= 0 && s->task <= 0)
        dgc_device_fullname((dg_devtype)s->type, s->id, buf, n);
    else if (s->has_job && s->task >= 0 && s->replica <= 0 && s->id >= 0 &&
             (s->type == DG_DEV_CPU || s->type == DG_DEV_GPU))
        dgc_device_fullname_at(s->job, s->task, (dg_devtype)s->type, s->id,
                               buf, n);
    else
        dgc_devspec_str(s, buf, n);
}

dg_status dg_program_expect(const dg_program *p, const char *golden_path,
                            char **report, dg_error *err)
{
    *report = NULL;
    char *text;
    dg_status st = read_file(golden_path, &text, err);
    if (st)
        return st;
    cJSON *root = cJSON_Parse(text);
    dg_free(text);
    if (!root)
        return dg_err(err, DG_E_GRAPH, "%s: golden file is not valid JSON",
                      golden_path);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return dg_err(err, DG_E_GRAPH,
                      "%s: golden file must be a JSON object "
                      "{\"<node>\": \"<device>\"}", golden_path);
    }
    char dup[512];
    int dr = dgc_json_find_dup(root, "", dup, sizeof dup);
    if (dr) { /* a node listed twice: which device is expected? */
        cJSON_Delete(root);
        if (dr < 0)
            return dg_err_nomem(err, "golden file");
        return dg_err(err, DG_E_GRAPH, "%s: %s", golden_path, dup);
    }
    dgc_devspec chief;
    int cluster = dgc_devices_chief(&p->devs, &chief);
    dg_sbuf b;
    dg_sbuf_init(&b);
    int diffs = 0;
    for (const cJSON *it = root->child; it; it = it->next) {
        if (!cJSON_IsString(it) || !it->valuestring) {
            st = dg_err(err, DG_E_GRAPH,
                        "%s: node '%s': the expected device must be a string",
                        golden_path, it->string ? it->string : "");
            break;
        }
        dgc_devspec s;
        if (dgc_devspec_parse(it->valuestring, &s) ||
            dgc_devspec_is_empty(&s)) {
            st = dg_err(err, DG_E_GRAPH,
                        "%s: node '%s': Malformed device specification '%s'",
                        golden_path, it->string, it->valuestring);
            break;
        }
        if (cluster)
            dgc_devspec_complete(&s, &chief);
        char exp[192];
        expected_text(&s, exp, sizeof exp);
        int32_t id = dgc_graph_find(p->g, it->string);
        if (id < 0) {
            dg_sbuf_addf(&b, "%s: expected %s, not in the graph\n",
                         it->string, exp);
            diffs++;
            continue;
        }
        int32_t d = dgc_node_placed(&p->g->nodes[id]);
        if (d < 0 || d >= p->devs.n) {
            dg_sbuf_addf(&b, "%s: expected %s, placed on nothing\n",
                         it->string, exp);
            diffs++;
            continue;
        }
        if (!dgc_devspec_matches(&s, &p->devs.devs[d])) {
            dg_sbuf_addf(&b, "%s: expected %s, placed on %s\n", it->string,
                         exp, p->devs.devs[d].name);
            diffs++;
        }
    }
    cJSON_Delete(root);
    if (st) {
        dg_sbuf_free(&b);
        return st;
    }
    if (diffs == 0) {
        dg_sbuf_free(&b);
        return DG_OK;
    }
    *report = dg_sbuf_take(&b);
    if (!*report)
        return dg_err_nomem(err, "expect report");
    return dg_err(err, DG_E_MISMATCH,
                  "%s: placement differs from the golden file in %d node%s",
                  golden_path, diffs, diffs == 1 ? "" : "s");
}
