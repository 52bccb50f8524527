/*
 * grad_loop_find.c -- the while loops of a graph for the gradient pass
 * (grad.h): every node's frame, found by walking data and control edges
 * from the graph's sources as the executor does (Enter opens the frame its
 * frame_name names under the current one, Exit leaves it), and per frame
 * the Enters opening it and the Exits leaving it.  grad_loop.c builds the
 * backward loops; train.c orders Variable updates after loops.
 */
#include "grad.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <string.h>

static const char *frame_name(const dgc_node *n)
{
    const dgc_attr *a = dgc_node_attr(n, "frame_name");
    return a && a->kind == DGC_A_STR && a->s ? a->s : n->name;
}

/* The frame named after Enter n under parent: found or added; -1 nomem. */
static int32_t child_frame(dgc_gloops *l, int32_t parent, const dgc_node *n)
{
    const char *name = frame_name(n);
    for (int32_t f = 1; f < l->n_frames; f++)
        if (l->fparent[f] == parent && strcmp(l->fname[f], name) == 0)
            return f;
    int32_t k = l->n_frames;
    int32_t *np = dg_realloc(l->fparent, sizeof *np * (size_t)(k + 1));
    if (!np)
        return -1;
    l->fparent = np;
    const char **nn = dg_realloc(l->fname, sizeof *nn * (size_t)(k + 1));
    if (!nn)
        return -1;
    l->fname = nn;
    np[k] = parent;
    nn[k] = name;
    return l->n_frames++;
}

void dgc_gloops_free(dgc_gloops *l)
{
    if (!l)
        return;
    for (int32_t i = 0; l->loops && i < l->n_frames; i++) {
        dg_free(l->loops[i].enters);
        dg_free(l->loops[i].exits);
    }
    dg_free(l->loops);
    dg_free(l->frame);
    dg_free(l->child);
    dg_free(l->fparent);
    dg_free(l->fname);
    dg_free(l);
}

int dgc_ids_push(int32_t **a, int *n, int32_t v)
{
    int32_t *na = dg_realloc(*a, sizeof *na * (size_t)(*n + 1));
    if (!na)
        return -1;
    na[(*n)++] = v;
    *a = na;
    return 0;
}

/* Frames of every node by a walk over data and control edges from the
 * sources (conflicts are the executor's to report). */
static int walk_frames(const dgc_graph *g, dgc_gloops *l)
{
    int32_t n = l->n;
    size_t nn = (size_t)n + 1;
    int *off = dg_calloc(nn + 1, sizeof *off);
    int32_t *queue = dg_malloc(sizeof *queue * nn);
    int rc = -1;
    int *cons = NULL, *fill = NULL;
    if (!off || !queue)
        goto out;
    int ne = 0;
    for (int32_t i = 0; i < n; i++) {
        const dgc_node *d = &g->nodes[i];
        for (int k = 0; k < d->n_inputs; k++)
            off[d->inputs[k].node + 1]++;
        for (int k = 0; k < d->n_ctrl; k++)
            off[d->ctrl[k] + 1]++;
        ne += d->n_inputs + d->n_ctrl;
    }
    for (int32_t i = 0; i < n; i++)
        off[i + 1] += off[i];
    cons = dg_malloc(sizeof *cons * (size_t)(ne + 1));
    fill = dg_calloc(nn, sizeof *fill);
    if (!cons || !fill)
        goto out;
    for (int32_t i = 0; i < n; i++) {
        const dgc_node *d = &g->nodes[i];
        for (int k = 0; k < d->n_inputs; k++) {
            int32_t p = d->inputs[k].node;
            cons[off[p] + fill[p]++] = i;
        }
        for (int k = 0; k < d->n_ctrl; k++)
            cons[off[d->ctrl[k]] + fill[d->ctrl[k]]++] = i;
    }
    int32_t head = 0, tail = 0;
    for (int32_t i = 0; i < n; i++) {
        l->frame[i] = -1;
        l->child[i] = -1;
        if (g->nodes[i].n_inputs == 0 && g->nodes[i].n_ctrl == 0) {
            l->frame[i] = 0;
            queue[tail++] = i;
        }
    }
    while (head < tail) {
        int32_t v = queue[head++];
        const dgc_node *d = &g->nodes[v];
        int32_t of = l->frame[v];
        if (d->op == DGC_OPID_Enter) {
            if ((l->child[v] = child_frame(l, l->frame[v], d)) < 0)
                goto out;
            of = l->child[v];
        } else if (d->op == DGC_OPID_Exit) {
            of = of > 0 ? l->fparent[of] : 0;
        }
        for (int e = off[v]; e < off[v + 1]; e++)
            if (l->frame[cons[e]] < 0) {
                l->frame[cons[e]] = of;
                queue[tail++] = cons[e];
            }
    }
    for (int32_t i = 0; i < n; i++)
        if (l->frame[i] < 0)
            l->frame[i] = 0;
    rc = 0;
out:
    dg_free(off);
    dg_free(queue);
    dg_free(cons);
    dg_free(fill);
    return rc;
}

dg_status dgc_gloops_find(const dgc_graph *g, int32_t n, dgc_gloops **out,
                          dg_error *err)
{
    *out = NULL;
    int any = 0;
    for (int32_t i = 0; i < n && !any; i++)
        any = g->nodes[i].op == DGC_OPID_Enter;
    if (!any)
        return DG_OK;
    dgc_gloops *l = dg_calloc(1, sizeof *l);
    if (!l)
        return dg_err_nomem(err, "loops");
    size_t nn = (size_t)n + 1;
    l->n = n;
    l->frame = dg_malloc(sizeof *l->frame * nn);
    l->child = dg_malloc(sizeof *l->child * nn);
    l->fparent = dg_malloc(sizeof *l->fparent);
    l->fname = dg_malloc(sizeof *l->fname);
    if (!l->frame || !l->child || !l->fparent || !l->fname)
        goto nomem;
    l->fparent[0] = -1;
    l->fname[0] = "";
    l->n_frames = 1;
    if (walk_frames(g, l))
        goto nomem;
    l->loops = dg_calloc((size_t)l->n_frames, sizeof *l->loops);
    if (!l->loops)
        goto nomem;
    for (int32_t i = 0; i < n; i++) {
        const dgc_node *d = &g->nodes[i];
        int32_t f = l->frame[i];
        l->loops[f].frame = f;
        if (l->child[i] > 0 &&
            dgc_ids_push(&l->loops[l->child[i]].enters,
                    &l->loops[l->child[i]].n_enters, i))
            goto nomem;
        if (d->op == DGC_OPID_Exit && f > 0 &&
            dgc_ids_push(&l->loops[f].exits, &l->loops[f].n_exits, i))
            goto nomem;
    }
    *out = l;
    return DG_OK;
nomem:
    dgc_gloops_free(l);
    return dg_err_nomem(err, "loops");
}

int dgc_gloops_within(const dgc_gloops *l, int32_t v, int32_t f)
{
    if (v < 0 || v >= l->n)
        return -1;
    int32_t x = l->child[v] > 0 ? l->child[v] : l->frame[v];
    while (x > 0 && l->fparent[x] != f)
        x = l->fparent[x];
    /* a loop without an Exit is on no path: its nodes stand for
     * themselves */
    return x > 0 && l->loops[x].n_exits > 0 ? x : -1;
}

int dgc_gloops_of(const dgc_gloops *l, int32_t v)
{
    return dgc_gloops_within(l, v, 0);
}

int dgc_gloops_left(const dgc_gloops *l, int32_t v)
{
    return v >= 0 && v < l->n && l->frame[v] > 0 ? l->frame[v] : -1;
}

int32_t dgc_gloops_rep(const dgc_gloops *l, int L)
{
    return l->loops[L].exits[0];
}

int dgc_gloops_exits(const dgc_gloops *l, int L, const int32_t **exits)
{
    *exits = l->loops[L].exits;
    return l->loops[L].n_exits;
}

int dgc_gloops_enters(const dgc_gloops *l, int L, const int32_t **enters)
{
    *enters = l->loops[L].enters;
    return l->loops[L].n_enters;
}
