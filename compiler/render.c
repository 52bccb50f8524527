/*
 * render.c -- placement output: the placement log as text (SPEC 5), the
 * JSON document of `place --format json` (SPEC 6) and a Graphviz graph with
 * one cluster per device (`--format dot`); for a cluster graph (SPEC 8) the
 * JSON ends with the "cluster" and the DOT nests the device clusters in one
 * cluster per task.
 */
#include "program.h"
#include "cluster.h"
#include "ops.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <string.h>

static void render_text(const dg_program *p, dg_sbuf *b)
{
    for (int i = 0; i < dg_program_node_count(p); i++) {
        dg_node_info ni;
        dg_program_node(p, i, &ni);
        dg_sbuf_addf(b, "%s: (%s): %s\n", ni.name, ni.op, ni.device);
    }
}

static void transfer_json(dg_sbuf *b, int first, const char *from,
                          const char *to, const char *src_dev,
                          const char *dst_dev, int64_t bytes)
{
    dg_sbuf_add(b, first ? "\n  {\"from\": " : ",\n  {\"from\": ");
    dg_sbuf_add_json_str(b, from);
    dg_sbuf_add(b, ", \"to\": ");
    dg_sbuf_add_json_str(b, to);
    dg_sbuf_add(b, ", \"src_device\": ");
    dg_sbuf_add_json_str(b, src_dev);
    dg_sbuf_add(b, ", \"dst_device\": ");
    dg_sbuf_add_json_str(b, dst_dev);
    dg_sbuf_addf(b, ", \"bytes\": %lld}", (long long)bytes);
}

/* The transfers between the devices nodes are *placed* on (SPEC 4.6 over
 * what `place` shows), when some node runs in host memory on its GPU's
 * behalf (placed_id != device_id, SPEC 4.7): a tensor in host memory
 * inside one TF device is no transfer, as in TF; an edge from a node
 * placed on a GPU to one placed on the CPU is, though dgrun copies
 * nothing.  One per (producer output, consumer device), in consumer order.
 * Returns how many were written; out of memory latches b->oom. */
static int placed_transfers_json(const dg_program *p, dg_sbuf *b)
{
    const dgc_graph *g = p->g;
    dg_strmap seen;
    if (dg_strmap_init(&seen, 64)) {
        b->oom = 1;
        return 0;
    }
    int nt = 0;
    for (int32_t c = 0; c < g->n_nodes; c++) {
        const dgc_node *n = &g->nodes[c];
        int32_t cd = dgc_node_placed(n);
        for (int k = 0; k < n->n_inputs && cd >= 0; k++) {
            dgc_ref r = n->inputs[k];
            const dgc_node *src = &g->nodes[r.node];
            int32_t sd = dgc_node_placed(src);
            if (sd < 0 || sd == cd)
                continue;
            char key[48];
            snprintf(key, sizeof key, "%d:%d:%d", (int)r.node, r.index,
                     (int)cd);
            if (dg_strmap_get(&seen, key) >= 0)
                continue;
            if (dg_strmap_put(&seen, key, 1) < 0) {
                dg_strmap_free(&seen);
                b->oom = 1;
                return nt;
            }
            int64_t bytes = -1;
            if (r.index < src->n_outputs) {
                int64_t numel = dg_shape_numel(&src->outputs[r.index].shape);
                if (numel >= 0)
                    bytes = numel *
                            (int64_t)dg_dtype_size(src->outputs[r.index].dtype);
            }
            transfer_json(b, nt == 0, src->name, n->name,
                          p->devs.devs[sd].name, p->devs.devs[cd].name, bytes);
            nt++;
        }
    }
    dg_strmap_free(&seen);
    return nt;
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
    int host_run = 0;
    for (int32_t i = 0; i < p->g->n_nodes && !host_run; i++)
        host_run = p->g->nodes[i].placed_id >= 0 &&
                   p->g->nodes[i].placed_id != p->g->nodes[i].device_id;
    int nt = host_run ? placed_transfers_json(p, b) : -1;
    if (nt < 0) { /* the run's own transfers: between the same devices */
        nt = dg_program_transfer_count(p);
        for (int i = 0; i < nt; i++) {
            dg_transfer_info ti;
            dg_program_transfer(p, i, &ti);
            transfer_json(b, i == 0, ti.from, ti.to, ti.src_device,
                          ti.dst_device, ti.bytes);
        }
    }
    dg_sbuf_add(b, nt ? "\n ]" : "]");
    if (p->cluster) {
        dg_sbuf_add(b, ",\n \"cluster\": {");
        for (int j = 0; j < p->cluster->n_jobs; j++) {
            dg_sbuf_add(b, j ? ", " : "");
            dg_sbuf_add_json_str(b, p->cluster->jobs[j].name);
            dg_sbuf_addf(b, ": %d", p->cluster->jobs[j].tasks);
        }
        dg_sbuf_add(b, "}");
    }
    dg_sbuf_add(b, "}\n");
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

/* One device's cluster with its nodes; `in` indents it inside a task. */
static void dot_device(const dg_program *p, dg_sbuf *b, int d, const char *in)
{
    static const char *const fills[] = {"#eef3fb", "#eefbea", "#fbf3e6",
                                        "#f6ecfb", "#fbeaea", "#eafbfb"};
    const dgc_graph *g = p->g;
    dg_sbuf_addf(b, "%s  subgraph cluster_%d {\n%s    label=", in, d, in);
    dot_str(b, p->devs.devs[d].name);
    dg_sbuf_addf(b, ";\n%s    style=filled;\n%s    fillcolor=\"%s\";\n"
                    "%s    fontsize=12;\n",
                 in, in, fills[d % 6], in);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *n = &g->nodes[i];
        if (dgc_node_placed(n) != d)
            continue;
        dg_sbuf_addf(b, "%s    n%d [label=", in, (int)i);
        dg_sbuf_add(b, "\"");
        dg_sbuf_add(b, n->name);
        dg_sbuf_add(b, "\\n");
        dg_sbuf_add(b, dgc_node_user_op_name(n));
        dg_sbuf_add(b, "\"");
        if (n->flags & DGC_NODE_GENERATED)
            dg_sbuf_add(b, ", fillcolor=\"#f4f4f4\"");
        dg_sbuf_add(b, "];\n");
    }
    dg_sbuf_addf(b, "%s  }\n", in);
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
    int rank = -1; /* the task cluster open, in a cluster graph */
    for (int d = 0; d < p->devs.n; d++) {
        int any = 0;
        for (int32_t i = 0; i < g->n_nodes && !any; i++)
            any = dgc_node_placed(&g->nodes[i]) == d;
        if (!any)
            continue;
        const dg_device_info *di = &p->devs.devs[d];
        if (p->cluster && di->rank != rank) {
            if (rank >= 0)
                dg_sbuf_add(b, "  }\n");
            rank = di->rank;
            dg_sbuf_addf(b, "  subgraph cluster_task_%d {\n    label=\"/job:%s"
                            "/replica:0/task:%d\";\n    style=dashed;\n"
                            "    fontsize=14;\n", rank, di->job, di->task);
        }
        dot_device(p, b, d, p->cluster ? "  " : "");
    }
    if (rank >= 0)
        dg_sbuf_add(b, "  }\n");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const dgc_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            dgc_ref r = n->inputs[k];
            int32_t from = dgc_node_placed(&g->nodes[r.node]);
            int32_t to = dgc_node_placed(n);
            int cross = from != to;
            int remote = cross && p->cluster &&
                         p->devs.devs[from].rank != p->devs.devs[to].rank;
            dg_sbuf_addf(b, "  n%d -> n%d", (int)r.node, (int)i);
            if (cross || r.index)
                dg_sbuf_add(b, " [");
            if (remote) /* between tasks: over MPI (SPEC 8.3) */
                dg_sbuf_add(b, "style=bold, color=purple");
            else if (cross)
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
