/*
 * render.c -- placement output: the placement log as text (SPEC 5), the
 * JSON document of `place --format json` (SPEC 6) and a Graphviz graph with
 * one cluster per device (`--format dot`).
 */
#include "program.h"
#include "ops.h"
#include "dg_alloc.h"

#include <string.h>

static void render_text(const dg_program *p, dg_sbuf *b)
{
    for (int i = 0; i < dg_program_node_count(p); i++) {
        dg_node_info ni;
        dg_program_node(p, i, &ni);
        dg_sbuf_addf(b, "%s: (%s): %s\n", ni.name, ni.op, ni.device);
    }
}

static void render_json(const dg_program *p, dg_sbuf *b)
{
    dg_sbuf_add(b, "{\"devices\": [");
    for (int d = 0; d < p->devs.n; d++) {
        dg_sbuf_add(b, d ? ", " : "");
        dg_sbuf_add_json_str(b, p->devs.devs[d].name);
    }
    dg_sbuf_add(b, "],\n \"nodes\": [");
    int n = dg_program_node_count(p);
    for (int i = 0; i < n; i++) {
        dg_node_info ni;
        dg_program_node(p, i, &ni);
        dg_sbuf_add(b, i ? ",\n  {\"name\": " : "\n  {\"name\": ");
        dg_sbuf_add_json_str(b, ni.name);
        dg_sbuf_add(b, ", \"op\": ");
        dg_sbuf_add_json_str(b, ni.op);
        dg_sbuf_add(b, ", \"device\": ");
        dg_sbuf_add_json_str(b, ni.device);
        dg_sbuf_add(b, ", \"requested\": ");
        dg_sbuf_add_json_str(b, ni.requested);
        dg_sbuf_add(b, ", \"reason\": ");
        dg_sbuf_add_json_str(b, dg_reason_name(ni.reason));
        dg_sbuf_add(b, "}");
    }
    dg_sbuf_add(b, n ? "\n ],\n \"transfers\": [" : "],\n \"transfers\": [");
    int nt = dg_program_transfer_count(p);
    for (int i = 0; i < nt; i++) {
        dg_transfer_info ti;
        dg_program_transfer(p, i, &ti);
        dg_sbuf_add(b, i ? ",\n  {\"from\": " : "\n  {\"from\": ");
        dg_sbuf_add_json_str(b, ti.from);
        dg_sbuf_add(b, ", \"to\": ");
        dg_sbuf_add_json_str(b, ti.to);
        dg_sbuf_add(b, ", \"src_device\": ");
        dg_sbuf_add_json_str(b, ti.src_device);
        dg_sbuf_add(b, ", \"dst_device\": ");
        dg_sbuf_add_json_str(b, ti.dst_device);
        dg_sbuf_addf(b, ", \"bytes\": %lld}", (long long)ti.bytes);
    }
    dg_sbuf_add(b, nt ? "\n ]}\n" : "]}\n");
}

/* A DOT string literal (JSON escaping is valid DOT escaping for our
 * names, except that "\n" must stay a DOT line break: callers add those). */
static void dot_str(dg_sbuf *b, const char *s)
{
    dg_sbuf_add(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            dg_sbuf_add(b, "\\");
        dg_sbuf_addn(b, s, 1);
    }
    dg_sbuf_add(b, "\"");
}

static void render_dot(const dg_program *p, dg_sbuf *b)
{
    const dgc_graph *g = p->g;
    dg_sbuf_add(b, "digraph placement {\n"
                   "  rankdir=TB;\n"
                   "  newrank=true;\n"
                   "  node [shape=box, style=\"rounded,filled\", "
                   "fillcolor=white, fontsize=10];\n"
                   "  edge [arrowsize=0.6];\n");
    static const char *const fills[] = {"#eef3fb", "#eefbea", "#fbf3e6",
                                        "#f6ecfb", "#fbeaea", "#eafbfb"};
    for (int d = 0; d < p->devs.n; d++) {
        int any = 0;
        for (int32_t i = 0; i < g->n_nodes && !any; i++)
            any = g->nodes[i].device_id == d;
        if (!any)
            continue;
        dg_sbuf_addf(b, "  subgraph cluster_%d {\n    label=", d);
        dot_str(b, p->devs.devs[d].name);
        dg_sbuf_addf(b, ";\n    style=filled;\n    fillcolor=\"%s\";\n"
                        "    fontsize=12;\n",
                     fills[d % 6]);
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const dgc_node *n = &g->nodes[i];
            if (n->device_id != d)
                continue;
            dg_sbuf_addf(b, "    n%d [label=", (int)i);
            dg_sbuf_add(b, "\"");
            dg_sbuf_add(b, n->name);
            dg_sbuf_add(b, "\\n");
            dg_sbuf_add(b, dgc_node_op_name(n));
            dg_sbuf_add(b, "\"");
            if (n->flags & DGC_NODE_GENERATED)
                dg_sbuf_add(b, ", fillcolor=\"#f4f4f4\"");
            dg_sbuf_add(b, "];\n");
        }
        dg_sbuf_add(b, "  }\n");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            dgc_ref r = n->inputs[k];
            int cross = g->nodes[r.node].device_id != n->device_id;
            dg_sbuf_addf(b, "  n%d -> n%d", (int)r.node, (int)i);
            if (cross || r.index)
                dg_sbuf_add(b, " [");
            if (cross)
                dg_sbuf_add(b, "style=dashed, color=red");
            if (r.index)
                dg_sbuf_addf(b, "%slabel=\"%d\"", cross ? ", " : "",
                             (int)r.index);
            if (cross || r.index)
                dg_sbuf_add(b, "]");
            dg_sbuf_add(b, ";\n");
        }
        for (int k = 0; k < n->n_ctrl; k++)
            dg_sbuf_addf(b, "  n%d -> n%d [style=dotted, color=gray40];\n",
                         (int)n->ctrl[k], (int)i);
    }
    dg_sbuf_add(b, "}\n");
}

char *dg_program_render(const dg_program *p, const char *format)
{
    if (!p)
        return NULL;
    dg_sbuf b;
    dg_sbuf_init(&b);
    if (!format || strcmp(format, "text") == 0)
        render_text(p, &b);
    else if (strcmp(format, "json") == 0)
        render_json(p, &b);
    else if (strcmp(format, "dot") == 0)
        render_dot(p, &b);
    else
        return NULL;
    /* dg_malloc'd memory is plain malloc memory: free() releases it */
    return dg_sbuf_take(&b);
}
