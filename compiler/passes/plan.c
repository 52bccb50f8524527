/*
 * plan.c -- building the execution plan (plan.h) for a set of fetches and
 * targets on a placed graph: pruning to the needed subgraph, topological
 * ordering, one transfer step per (producer output, consumer device) -- per
 * consumer for Variables, whose transfer also waits for the consumer's
 * control inputs (SPEC 4.6) -- and the precomputed successor arrays, pending
 * counts and slot use counts the executor's hot path reads.
 */
#include "plan.h"
#include "ops.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdlib.h>
#include <string.h>

/* A growable int32 array (edges are stored as pairs). */
typedef struct ivec {
    int32_t *v;
    int32_t n, cap;
} ivec;

static int ivec_push(ivec *a, int32_t x)
{
    if (a->n == a->cap) {
        int32_t *nv = dg_grow(a->v, &a->cap, a->n + 1, sizeof *nv, 64);
        if (!nv)
            return -1;
        a->v = nv;
    }
    a->v[a->n++] = x;
    return 0;
}

typedef struct builder {
    const dgc_graph *g;
    dgc_plan *p;
    int32_t cap_steps, cap_slots;
    ivec edges;   /* (from, to) pairs */
    ivec in;      /* in_slots */
    ivec back;    /* (slot, step) pairs: edges from a producer emitted
                     later, a loop's back edge (issue 11) */
    int32_t *node_step; /* node -> op step, -1 */
    int32_t *node_slot; /* node -> first output slot, -1 */
    int32_t *xfer;      /* producer slot * n_devices + dst device -> step */
    int32_t n_xfer_slots;
} builder;

static int node_n_out(const dgc_node *n)
{
    return dgc_node_n_out(n);
}

static int32_t node_device(const dgc_node *n)
{
    return n->device_id < 0 ? 0 : n->device_id;
}

static int add_edge(builder *b, int32_t from, int32_t to)
{
    return ivec_push(&b->edges, from) || ivec_push(&b->edges, to) ? -1 : 0;
}

static int32_t new_step(builder *b)
{
    dgc_plan *p = b->p;
    if (p->n_steps == b->cap_steps) {
        dgc_step *ns = dg_grow(p->steps, &b->cap_steps, p->n_steps + 1,
                               sizeof *ns, 64);
        if (!ns)
            return -1;
        p->steps = ns;
    }
    dgc_step *s = &p->steps[p->n_steps];
    memset(s, 0, sizeof *s);
    return p->n_steps++;
}

static int32_t new_slots(builder *b, int32_t n)
{
    dgc_plan *p = b->p;
    if (p->n_slots + n > b->cap_slots) {
        dgc_slot *ns = dg_grow(p->slots, &b->cap_slots,
                               (int64_t)p->n_slots + n, sizeof *ns, 64);
        if (!ns)
            return -1;
        p->slots = ns;
    }
    int32_t first = p->n_slots;
    if (n > 0) /* a step with no outputs (NoOp) may come before any slot */
        memset(&p->slots[first], 0, sizeof *p->slots * (size_t)n);
    p->n_slots += n;
    return first;
}

/* Mark the nodes the roots depend on (data and control, transitively). */
static int mark_active(const dgc_graph *g, uint8_t *active,
                       const int32_t *roots, int n_roots)
{
    int32_t *stack = dg_malloc(sizeof *stack * (size_t)(g->n_nodes + 1));
    if (!stack)
        return -1;
    int32_t sp = 0;
    for (int i = 0; i < n_roots; i++)
        if (!active[roots[i]]) {
            active[roots[i]] = 1;
            stack[sp++] = roots[i];
        }
    while (sp > 0) {
        const dgc_node *n = &g->nodes[stack[--sp]];
        for (int i = 0; i < n->n_inputs + n->n_ctrl; i++) {
            int32_t q = i < n->n_inputs ? n->inputs[i].node
                                        : n->ctrl[i - n->n_inputs];
            if (!active[q]) {
                active[q] = 1;
                stack[sp++] = q;
            }
        }
    }
    dg_free(stack);
    return 0;
}

/* Kahn's algorithm over the active nodes, FIFO in node order.  Returns the
 * number of ordered nodes (less than the active count on a cycle). */
static int32_t topo_order(const dgc_graph *g, const uint8_t *active,
                          int32_t *order, int32_t *n_active)
{
    int32_t n = g->n_nodes;
    int32_t *indeg = dg_calloc((size_t)n + 1, sizeof *indeg);
    int32_t *cons_off = dg_calloc((size_t)n + 2, sizeof *cons_off);
    if (!indeg || !cons_off) {
        dg_free(indeg);
        dg_free(cons_off);
        return -1;
    }
    int32_t total = 0, act = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!active[i])
            continue;
        act++;
        const dgc_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_inputs + nd->n_ctrl; k++) {
            int32_t q = k < nd->n_inputs ? nd->inputs[k].node
                                         : nd->ctrl[k - nd->n_inputs];
            if (k < nd->n_inputs && dgc_cflow_back_edge(g, nd->inputs[k]))
                continue; /* issue 11: ordered without back edges */
            cons_off[q + 1]++;
            indeg[i]++;
            total++;
        }
    }
    *n_active = act;
    for (int32_t i = 0; i < n; i++)
        cons_off[i + 1] += cons_off[i];
    int32_t *cons = dg_malloc(sizeof *cons * (size_t)(total + 1));
    int32_t *fill = dg_malloc(sizeof *fill * (size_t)(n + 1));
    if (!cons || !fill) {
        dg_free(indeg);
        dg_free(cons_off);
        dg_free(cons);
        dg_free(fill);
        return -1;
    }
    memcpy(fill, cons_off, sizeof *fill * (size_t)n);
    for (int32_t i = 0; i < n; i++) {
        if (!active[i])
            continue;
        const dgc_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_inputs + nd->n_ctrl; k++) {
            int32_t q = k < nd->n_inputs ? nd->inputs[k].node
                                         : nd->ctrl[k - nd->n_inputs];
            if (k < nd->n_inputs && dgc_cflow_back_edge(g, nd->inputs[k]))
                continue;
            cons[fill[q]++] = i;
        }
    }
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n; i++)
        if (active[i] && indeg[i] == 0)
            order[tail++] = i;
    while (head < tail) {
        int32_t q = order[head++];
        for (int32_t e = cons_off[q]; e < cons_off[q + 1]; e++)
            if (--indeg[cons[e]] == 0)
                order[tail++] = cons[e];
    }
    dg_free(indeg);
    dg_free(cons_off);
    dg_free(cons);
    dg_free(fill);
    return tail;
}

/* The transfer step bringing producer slot `src` (of node pn) to device
 * dst for consumer node c; created on first use. */
static int32_t transfer_for(builder *b, int32_t pn, int32_t src, int32_t dst,
                            const dgc_node *c)
{
    dgc_plan *p = b->p;
    int is_var = dgc_op_has(b->g->nodes[pn].op, DGC_OP_VARIABLE);
    size_t key = (size_t)src * (size_t)p->n_devices + (size_t)dst;
    if (!is_var && src < b->n_xfer_slots && b->xfer[key] >= 0)
        return b->xfer[key];
    int32_t s = new_step(b);
    int32_t slot = s < 0 ? -1 : new_slots(b, 1);
    if (slot < 0)
        return -1;
    dgc_step *st = &p->steps[s];
    st->kind = DGC_STEP_TRANSFER;
    st->node = pn;
    st->device = dst;
    st->src_device = p->slots[src].device;
    st->in_off = b->in.n;
    st->n_in = 1;
    st->out_slot = slot;
    st->n_out = 1;
    if (ivec_push(&b->in, src))
        return -1;
    p->slots[src].uses++;
    p->slots[slot].step = s;
    p->slots[slot].device = dst;
    p->slots[slot].type = p->slots[src].type;
    if (b->node_step[pn] < 0 ? (ivec_push(&b->back, src) ||
                                 ivec_push(&b->back, s))
                              : add_edge(b, p->slots[src].step, s))
        return -1;
    if (is_var) {
        /* SPEC 4.6: read the Variable after the consumer's control inputs. */
        for (int k = 0; k < c->n_ctrl; k++)
            if (add_edge(b, b->node_step[c->ctrl[k]], s))
                return -1;
    } else if (src < b->n_xfer_slots) {
        b->xfer[key] = s;
    }
    return s;
}

static int emit_node(builder *b, int32_t id)
{
    const dgc_graph *g = b->g;
    dgc_plan *p = b->p;
    const dgc_node *n = &g->nodes[id];
    int32_t dev = node_device(n);
    /* Inputs first: transfers are emitted (with their own in_slots entry)
     * before the consumer's step, so collect the consumer's slots aside. */
    int32_t small[16];
    int32_t *slots = small;
    if (n->n_inputs > 16 &&
        !(slots = dg_malloc(sizeof *slots * (size_t)n->n_inputs)))
        return -1;
    for (int i = 0; i < n->n_inputs; i++) {
        int32_t pn = n->inputs[i].node;
        int32_t src = b->node_slot[pn] + n->inputs[i].index;
        int32_t slot = src;
        if (p->slots[src].device != dev) {
            /* A Variable read twice by one consumer shares its transfer. */
            int32_t t = -1;
            if (dgc_op_has(g->nodes[pn].op, DGC_OP_VARIABLE))
                for (int j = 0; j < i; j++)
                    if (n->inputs[j].node == pn &&
                        n->inputs[j].index == n->inputs[i].index) {
                        t = p->slots[slots[j]].step;
                        break;
                    }
            if (t < 0)
                t = transfer_for(b, pn, src, dev, n);
            if (t < 0) {
                if (slots != small)
                    dg_free(slots);
                return -1;
            }
            slot = p->steps[t].out_slot;
        }
        slots[i] = slot;
    }
    int32_t in_off = b->in.n;
    for (int i = 0; i < n->n_inputs; i++) {
        if (ivec_push(&b->in, slots[i])) {
            if (slots != small)
                dg_free(slots);
            return -1;
        }
        p->slots[slots[i]].uses++;
    }
    if (slots != small)
        dg_free(slots);
    int32_t s = new_step(b);
    if (s < 0)
        return -1;
    dgc_step *st = &p->steps[s];
    st->kind = DGC_STEP_OP;
    st->node = id;
    st->device = dev;
    st->src_device = dev;
    st->in_off = in_off;
    st->n_in = n->n_inputs;
    st->out_slot = b->node_slot[id];
    st->n_out = node_n_out(n);
    b->node_step[id] = s;
    for (int k = 0; k < st->n_out; k++)
        p->slots[st->out_slot + k].step = s;
    for (int i = 0; i < n->n_inputs; i++) {
        int32_t sl = b->in.v[in_off + i];
        if (sl < b->n_xfer_slots && b->node_step[n->inputs[i].node] < 0) {
            /* a loop's back edge: its producer comes later (issue 11) */
            if (ivec_push(&b->back, sl) || ivec_push(&b->back, s))
                return -1;
        } else if (add_edge(b, p->slots[sl].step, s)) {
            return -1;
        }
    }
    for (int k = 0; k < n->n_ctrl; k++)
        if (add_edge(b, b->node_step[n->ctrl[k]], s))
            return -1;
    return 0;
}

static int cmp_edge(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    if (x[1] != y[1])
        return x[1] < y[1] ? -1 : 1;
    return 0;
}

int dgc_plan_set_edges(dgc_plan *p, int32_t *edges, int32_t ne)
{
    if (ne > 0)
        qsort(edges, (size_t)ne, 2 * sizeof(int32_t), cmp_edge);
    int32_t m = 0;
    for (int32_t e = 0; e < ne; e++) {
        int32_t *x = &edges[2 * e];
        if (m > 0 && edges[2 * (m - 1)] == x[0] &&
            edges[2 * (m - 1) + 1] == x[1])
            continue;
        edges[2 * m] = x[0];
        edges[2 * m + 1] = x[1];
        m++;
    }
    p->succ = dg_malloc(sizeof *p->succ * (size_t)(m + 1));
    p->roots = dg_malloc(sizeof *p->roots * (size_t)(p->n_steps + 1));
    if (!p->succ || !p->roots)
        return -1;
    p->n_succ = m;
    for (int32_t s = 0; s < p->n_steps; s++) {
        p->steps[s].n_succ = 0;
        p->steps[s].pending = 0;
    }
    for (int32_t e = 0; e < m; e++) {
        p->steps[edges[2 * e]].n_succ++;
        p->steps[edges[2 * e + 1]].pending++;
    }
    int32_t off = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        p->steps[s].succ_off = off;
        off += p->steps[s].n_succ;
    }
    /* Edges are sorted by source, so succ lists come out in order. */
    for (int32_t e = 0; e < m; e++)
        p->succ[e] = edges[2 * e + 1];
    p->n_roots = 0;
    for (int32_t s = 0; s < p->n_steps; s++)
        if (p->steps[s].pending == 0)
            p->roots[p->n_roots++] = s;
    return 0;
}

dgc_plan *dgc_plan_build(const dgc_graph *g, const dg_device_list *devs,
                         const dgc_ref *fetch, int n_fetch,
                         const int32_t *targets, int n_targets,
                         dg_error *err)
{
    for (int i = 0; i < n_fetch; i++) {
        if (fetch[i].node < 0 || fetch[i].node >= g->n_nodes)
            return dg_err(err, DG_E_GRAPH, "fetch %d: no such node", i), NULL;
        const dgc_node *n = &g->nodes[fetch[i].node];
        if (fetch[i].index < 0 || fetch[i].index >= node_n_out(n)) {
            dg_err(err, DG_E_GRAPH,
                   "node '%s': cannot fetch output %d of a %s, which has %d "
                   "output%s", n->name, fetch[i].index, dgc_op_name(n->op),
                   node_n_out(n), node_n_out(n) == 1 ? "" : "s");
            return NULL;
        }
    }
    for (int i = 0; i < n_targets; i++)
        if (targets[i] < 0 || targets[i] >= g->n_nodes)
            return dg_err(err, DG_E_GRAPH, "target %d: no such node", i), NULL;

    dgc_plan *p = dg_calloc(1, sizeof *p);
    builder b;
    memset(&b, 0, sizeof b);
    uint8_t *active = dg_calloc((size_t)g->n_nodes + 1, 1);
    int32_t *roots = dg_malloc(sizeof *roots * (size_t)(n_fetch + n_targets + 1));
    int32_t *order = dg_malloc(sizeof *order * (size_t)(g->n_nodes + 1));
    b.node_step = dg_malloc(sizeof *b.node_step * (size_t)(g->n_nodes + 1));
    b.node_slot = dg_malloc(sizeof *b.node_slot * (size_t)(g->n_nodes + 1));
    if (!p || !active || !roots || !order || !b.node_step || !b.node_slot)
        goto nomem;
    p->n_devices = devs && devs->n > 0 ? devs->n : 1;
    b.g = g;
    b.p = p;
    for (int i = 0; i < n_fetch; i++)
        roots[i] = fetch[i].node;
    for (int i = 0; i < n_targets; i++)
        roots[n_fetch + i] = targets[i];
    if (mark_active(g, active, roots, n_fetch + n_targets))
        goto nomem;
    int32_t n_active = 0;
    int32_t n_ord = topo_order(g, active, order, &n_active);
    if (n_ord < 0)
        goto nomem;
    if (n_ord < n_active) {
        int32_t bad = -1;
        uint8_t *done = dg_calloc((size_t)g->n_nodes + 1, 1);
        if (done) {
            for (int32_t i = 0; i < n_ord; i++)
                done[order[i]] = 1;
            for (int32_t i = 0; i < g->n_nodes && bad < 0; i++)
                if (active[i] && !done[i])
                    bad = i;
            dg_free(done);
        }
        dg_err(err, DG_E_GRAPH, "node '%s': the graph has a cycle through it",
               bad >= 0 ? g->nodes[bad].name : "?");
        goto fail;
    }
    /* Output slots of every op step, in topological order. */
    for (int32_t i = 0; i < g->n_nodes; i++) {
        b.node_step[i] = -1;
        b.node_slot[i] = -1;
    }
    for (int32_t i = 0; i < n_ord; i++) {
        const dgc_node *n = &g->nodes[order[i]];
        int no = node_n_out(n);
        int32_t first = new_slots(&b, no);
        if (first < 0)
            goto nomem;
        b.node_slot[order[i]] = first;
        for (int k = 0; k < no; k++) {
            dgc_slot *sl = &p->slots[first + k];
            sl->device = node_device(n);
            if (k < n->n_outputs && n->outputs)
                sl->type = n->outputs[k];
        }
    }
    b.n_xfer_slots = p->n_slots;
    b.xfer = dg_malloc(sizeof *b.xfer * ((size_t)b.n_xfer_slots * (size_t)p->n_devices + 1));
    if (!b.xfer)
        goto nomem;
    for (size_t i = 0; i < (size_t)b.n_xfer_slots * (size_t)p->n_devices; i++)
        b.xfer[i] = -1;
    for (int32_t i = 0; i < n_ord; i++)
        if (emit_node(&b, order[i]))
            goto nomem;
    for (int32_t i = 0; i + 1 < b.back.n; i += 2)
        if (add_edge(&b, p->slots[b.back.v[i]].step, b.back.v[i + 1]))
            goto nomem;
    if (dgc_plan_set_edges(p, b.edges.v, b.edges.n / 2))
        goto nomem;
    p->in_slots = b.in.v;
    p->n_in_slots = b.in.n;
    b.in.v = NULL;
    if (!p->in_slots && !(p->in_slots = dg_malloc(sizeof(int32_t))))
        goto nomem;
    p->fetch_slots = dg_malloc(sizeof *p->fetch_slots * (size_t)(n_fetch + 1));
    if (!p->fetch_slots)
        goto nomem;
    p->n_fetch = n_fetch;
    for (int i = 0; i < n_fetch; i++) {
        int32_t sl = b.node_slot[fetch[i].node] + fetch[i].index;
        p->fetch_slots[i] = sl;
        p->slots[sl].uses++;
    }
    dg_free(active);
    dg_free(roots);
    dg_free(order);
    dg_free(b.node_step);
    dg_free(b.node_slot);
    dg_free(b.xfer);
    dg_free(b.edges.v);
    dg_free(b.back.v);
    return p;
nomem:
    dg_err_nomem(err, "execution plan");
fail:
    dg_free(active);
    dg_free(roots);
    dg_free(order);
    dg_free(b.node_step);
    dg_free(b.node_slot);
    dg_free(b.xfer);
    dg_free(b.edges.v);
    dg_free(b.back.v);
    dg_free(b.in.v);
    dgc_plan_free(p);
    return NULL;
}

void dgc_plan_free(dgc_plan *p)
{
    if (!p)
        return;
    dg_free(p->steps);
    dg_free(p->in_slots);
    dg_free(p->succ);
    dg_free(p->slots);
    dg_free(p->roots);
    dg_free(p->fetch_slots);
    dg_free(p);
}
