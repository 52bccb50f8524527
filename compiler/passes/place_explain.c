/*
 * place_explain.c -- `place --explain NODE`: re-runs the placement analysis
 * on a placed graph and writes the chain of decisions for one node: the
 * request as written, the rule matched, the scope, the merged request, the
 * colocation group and its request, the candidate devices with the reason
 * each other device was rejected, and the choice with its reason.
 */
#include "place.h"
#include "program.h"
#include "ops.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>

/* Public (dgrun.h): a placement reason's name. */
const char *dg_reason_name(dg_reason r)
{
    switch (r) {
    case DG_REASON_EXPLICIT: return "explicit";
    case DG_REASON_RULE: return "rule";
    case DG_REASON_COLOCATION: return "colocation";
    case DG_REASON_DEFAULT: return "default";
    case DG_REASON_CONSUMER: return "consumer";
    case DG_REASON_SOFT: return "soft";
    }
    return "?";
}

static void spec_text(const dgc_placer *p, int32_t idx, char *buf, size_t n)
{
    if (idx < 0)
        snprintf(buf, n, "(none)");
    else {
        char t[192];
        dgc_devspec_str(&p->specs[idx], t, sizeof t);
        snprintf(buf, n, "'%s'", t);
    }
}

static void explain_rule(const dgc_graph *g, const dgc_placer *p, int32_t node,
                         dg_sbuf *b)
{
    int r = p->rule_of[node];
    if (g->nodes[node].flags & DGC_NODE_GENERATED) {
        dg_sbuf_add(b, "  rule:            (generated node: rules do not apply)\n");
        return;
    }
    if (r < 0) {
        dg_sbuf_addf(b, "  rule:            %s\n",
                     p->n_rules ? "(no rule matched)" : "(no rules)");
        return;
    }
    const dgc_rule *ru = &g->rules[r];
    dg_sbuf_addf(b, "  rule:            #%d (match", r);
    if (ru->n_ops > 0) {
        dg_sbuf_add(b, " op in [");
        for (int k = 0; k < ru->n_ops; k++)
            dg_sbuf_addf(b, "%s%s", k ? ", " : "", ru->ops[k]);
        dg_sbuf_add(b, "]");
    }
    if (ru->name_glob)
        dg_sbuf_addf(b, " name '%s'", ru->name_glob);
    if (ru->n_ops <= 0 && !ru->name_glob)
        dg_sbuf_add(b, " every node");
    dg_sbuf_add(b, ")");
    const dgc_prule *pr = &p->rules[r];
    if (pr->round_robin) {
        dg_sbuf_add(b, " round robin over [");
        for (int k = 0; k < pr->n_devs; k++)
            dg_sbuf_addf(b, "%s'%s'", k ? ", " : "", pr->dev_text[k]);
        dg_sbuf_add(b, "]");
    } else if (pr->n_devs > 0) {
        dg_sbuf_addf(b, " -> '%s'", pr->dev_text[0]);
    }
    dg_sbuf_add(b, "\n");
}

dg_status dgc_place_explain(const dgc_graph *g, const dg_device_list *devs,
                            const char *scope, const dgc_rule *rules,
                            int n_rules, int allow_soft, int colocate,
                            int32_t node, dg_sbuf *b, dg_error *err)
{
    dgc_placer p;
    dg_status st = dgc_placer_run(&p, g, devs, scope, rules, n_rules,
                                  allow_soft, colocate, err);
    if (st) {
        dgc_placer_free(&p);
        return st;
    }
    const dgc_node *n = &g->nodes[node];
    char t[256];
    dg_sbuf_addf(b, "%s (%s)%s\n", n->name, dgc_node_user_op_name(n),
                 (n->flags & DGC_NODE_GENERATED) ? ", generated" : "");
    if (n->device && n->device[0])
        dg_sbuf_addf(b, "  device field:    '%s'\n", n->device);
    else
        dg_sbuf_add(b, "  device field:    (none)\n");
    explain_rule(g, &p, node, b);
    if (n->flags & DGC_NODE_GENERATED)
        dg_sbuf_add(b, "  scope:           (generated node: the scope does not apply)\n");
    else
        dg_sbuf_addf(b, "  scope:           %s%s%s\n", scope ? "'" : "",
                     scope ? scope : "(none)", scope ? "'" : "");
    spec_text(&p, p.req[node], t, sizeof t);
    dg_sbuf_addf(b, "  request:         %s\n", t);
    if (p.src[node] & DGC_SRC_DROPPED)
        dg_sbuf_add(b, "                   (dropped: a state op's request "
                       "yields to its Variable's)\n");
    int32_t r = dgc_placer_find(&p, node);
    dg_sbuf_addf(b, "  group:           %d member%s", (int)p.size[r],
                 p.size[r] == 1 ? "" : "s");
    if (p.size[r] > 1) {
        dg_sbuf_add(b, ":");
        int shown = 0;
        for (int32_t i = 0; i < p.n && shown < 20; i++)
            if (dgc_placer_find(&p, i) == r) {
                dg_sbuf_addf(b, " %s", g->nodes[i].name);
                shown++;
            }
        if (p.size[r] > shown)
            dg_sbuf_addf(b, " ... (%d more)", (int)(p.size[r] - shown));
    }
    dg_sbuf_add(b, "\n");
    spec_text(&p, p.greq[r], t, sizeof t);
    dg_sbuf_addf(b, "  group request:   %s%s\n", t,
                 (p.src[r] & DGC_SRC_SOFT) ? " (softened: type and index "
                                             "dropped, soft placement)"
                                           : "");
    dgc_devspec req, soft;
    if (dgc_placer_request(&p, r, &req)) {
        dgc_devspec_str(&req, t, sizeof t);
        dg_sbuf_addf(b, "  chief:           '%s' (a request naming no job "
                        "runs on the cluster's chief)\n", t);
    }
    soft = req;
    soft.type = DGC_TYPE_ANY; /* soft placement keeps job and task */
    soft.id = -1;
    const dgc_devspec *s = (p.src[r] & DGC_SRC_SOFT) ? &soft : &req;
    int chosen = p.chosen[r];
    dg_sbuf_add(b, "  candidates (GPU before CPU, lowest index first):\n");
    for (int j = 0; j < devs->n; j++) {
        int d = p.order[j];
        const dg_device_info *di = &devs->devs[d];
        dg_sbuf_addf(b, "    %s: ", di->name);
        int match = dgc_devspec_matches(s, di);
        int kern = dgc_placer_kernel_ok(&p, p.kern[r], d);
        if (d == chosen)
            dg_sbuf_add(b, "chosen");
        else if (n->reason == DG_REASON_CONSUMER)
            dg_sbuf_add(b, "not chosen: the consumers run elsewhere");
        else if (!match)
            dg_sbuf_add(b, "rejected: does not match the request");
        else if (!kern) {
            const char *who = n->name;
            for (int32_t i = 0; i < p.n; i++)
                if (dgc_placer_find(&p, i) == r &&
                    !dgc_placer_placeable(&p, p.dev_class[d], g,
                                          &g->nodes[i])) {
                    who = g->nodes[i].name;
                    break;
                }
            dg_sbuf_addf(b, "rejected: no kernel for '%s'", who);
        } else
            dg_sbuf_add(b, "not chosen: a preferred device qualifies");
        dg_sbuf_add(b, "\n");
    }
    if (n->reason == DG_REASON_CONSUMER)
        dg_sbuf_add(b, "  consumer rule:   a source without a request or group "
                       "goes where all its data consumers run\n");
    else if (n->reason == DG_REASON_SOFT)
        dg_sbuf_add(b, "  soft placement:  no device satisfied the request; "
                       "its type and index were dropped\n");
    int32_t pd = dgc_node_placed(n);
    dg_sbuf_addf(b, "  placed on:       %s (reason: %s)\n",
                 pd >= 0 && pd < devs->n ? devs->devs[pd].name : "(nothing)",
                 dg_reason_name((dg_reason)n->reason));
    if (n->device_id >= 0 && n->device_id < devs->n && n->device_id != pd)
        dg_sbuf_addf(b, "  runs on:         %s (in host memory: dgrun has no "
                        "OpenCL kernel for it; TF keeps such tensors in host "
                        "memory or has a device kernel)\n",
                     devs->devs[n->device_id].name);
    dgc_placer_free(&p);
    return DG_OK;
}

char *dg_program_explain(const dg_program *p, const char *node, dg_error *err)
{
    int32_t id = p ? dgc_graph_find(p->g, node) : -1;
    if (id < 0) {
        dg_err(err, DG_E_USAGE, "--explain: no node named '%s'",
               node ? node : "");
        return NULL;
    }
    dg_sbuf b;
    dg_sbuf_init(&b);
    if (dgc_place_explain(p->g, &p->devs, p->device_scope, p->g->rules,
                          p->g->n_rules, p->allow_soft, p->colocate, id, &b,
                          err)) {
        dg_sbuf_free(&b);
        return NULL;
    }
    char *s = dg_sbuf_take(&b);
    if (!s)
        dg_err_nomem(err, "explain");
    return s;
}
