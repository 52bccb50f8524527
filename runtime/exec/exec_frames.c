/*
 * exec_frames.c -- the executor with frames (exec_frames.h), after
 * TensorFlow's executor:
 *
 * - Every step runs in a (frame, iteration).  Enter opens the child frame
 *   named by its frame_name (one instance per parent frame and iteration)
 *   and feeds its iteration 0 (an is_constant Enter feeds every
 *   iteration); NextIteration feeds the next iteration of its frame; Exit
 *   feeds the parent frame.  A frame keeps at most parallel_iterations
 *   iterations alive; a NextIteration beyond that waits until the oldest
 *   iteration is done.
 * - Values carry a dead bit.  Switch routes its data to output pred ? 1 : 0
 *   and a dead tensor to the other; a step with a dead input (data or
 *   control) does not run and its outputs are dead; Merge runs on its first
 *   live input and is dead only when all its data inputs are; a dead
 *   NextIteration ends its frame's chain; when a frame is done, its Exits
 *   that never left a live value send a dead one (a loop in an untaken
 *   branch).  ControlTrigger is never dead.
 * - Per-iteration state: each step's inputs, pending counts and dead
 *   counts; a step's inputs are released after it ran.  An iteration is
 *   done when nothing runs in it, no child frame is open in it, iteration
 *   0 has all its Enters, and the iterations before it are done.
 *
 * Scheduling: one lock per run guards every frame; a device's ready steps
 * wait in its queue and at most its pool's thread count of workers take
 * them (so the pool's ring never overflows).  Steps run synchronously:
 * ops on a device with streams are enqueued on stream 0 (in order) and
 * host reads of their values (Switch's predicate, transfers) are blocking
 * backend reads; there are no events.  Resource ops (TensorArrays, stacks)
 * run on the CPU on the run's resource table (exec_resources.c).
 */
#include "exec_frames.h"
#include "ops.h"
#include "attr_get.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    FK_OP, FK_XFER, FK_VAR, FK_FEED, FK_ENTER, FK_EXIT, FK_NEXT, FK_SWITCH,
    FK_MERGE, FK_PASS, FK_TRIGGER, FK_RES
};

typedef struct fx_edge {
    int32_t dst;
    int32_t dst_in;   /* input index, -1 = control edge */
    int32_t src_out;  /* output index (data edges) */
} fx_edge;

typedef struct fx_sframe {     /* a frame of the graph (static) */
    int32_t parent;            /* -1: the root */
    const char *name;
    int32_t n_enters;          /* Enter steps feeding it */
    int32_t *exits;            /* its Exit steps */
    int32_t n_exits;
    int parallel;
} fx_sframe;

typedef struct fx_iter {
    int64_t n;
    dgr_value *in;             /* per plan in_slot */
    uint8_t *st;               /* per in_slot: 0 none, 1 live, 2 dead */
    int32_t *pending;          /* per step */
    int32_t *ndead;            /* per step */
    uint8_t *fired;            /* per step: Merge ran */
    int outstanding;           /* steps ready or running */
    int frames;                /* child frames open */
} fx_iter;

typedef struct fx_defer {      /* a NextIteration value waiting for room */
    struct fx_defer *next;
    int32_t step;
    dgr_value v;
} fx_defer;

typedef struct fx_const {      /* an is_constant Enter's value */
    struct fx_const *next;
    int32_t step;
    dgr_value v;
    int dead;
} fx_const;

typedef struct fx_frame {
    int32_t sid;
    struct fx_frame *parent;
    int64_t parent_iter;
    struct fx_frame *kids, *next_kid;
    int pending_enters;
    fx_iter **iters;           /* by iteration number */
    int64_t cap_iters, oldest, newest;
    fx_defer *deferred, **deferred_tail;
    fx_const *consts;
    uint8_t *exit_live;        /* per exit of the static frame */
} fx_frame;

typedef struct fx_task {
    struct fx_task *next;
    int32_t step;
    fx_frame *f;
    int64_t it;
} fx_task;

typedef struct fx_dq {
    fx_task *head, *tail;
    int active, threads;
} fx_dq;

typedef struct fx_scratch {
    dgr_value *in;
    dgr_value *out;
    uint8_t *dead;
    dgc_ttype *types;          /* max_out outputs then max_in inputs */
    int64_t *hostin;           /* DGC_OP_HOST_IN values read back */
    dg_error err;
} fx_scratch;

struct dgr_fx {
    dgr_runner *r;
    /* static */
    int32_t n_steps;
    uint8_t *kind;
    int32_t *eoff, *ecnt;      /* out edges of each step in edges */
    fx_edge *edges;
    int32_t *n_ctrl_in;
    int32_t *sframe;           /* frame each step runs in */
    int32_t *child;            /* Enter: the frame it feeds */
    int32_t *exit_idx;         /* Exit: its index in its frame's exits */
    uint8_t *is_const;         /* Enter: is_constant */
    fx_sframe *sf;
    int32_t n_sf;
    int8_t *fetched;           /* per slot: fetched */
    int max_in, max_out;
    fx_scratch *scratch;       /* per global worker */
    /* per run */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    fx_dq *dq;                 /* per device */
    int n_active;
    int root_done, failed, finished;
    dg_error err;
    fx_frame *root;
    dgr_value *rootv;          /* per slot: fetched values */
    uint8_t *rootdead;
    fx_task *free_tasks;
    dgr_fx_res *res;
    int64_t step;
};

/* ---- static analysis ------------------------------------------------------ */

int dgr_fx_wanted(const dgc_graph *g, const dgc_plan *p)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].kind == DGC_STEP_OP &&
            dgc_op_has(g->nodes[p->steps[i].node].op, DGC_OP_CONTROL_FLOW))
            return 1;
    return 0;
}

static int kind_of(const dgc_node *n)
{
    switch (n->op) {
    case DGC_OPID_Enter: return FK_ENTER;
    case DGC_OPID_Exit: return FK_EXIT;
    case DGC_OPID_NextIteration: return FK_NEXT;
    case DGC_OPID_Switch: return FK_SWITCH;
    case DGC_OPID_Merge: return FK_MERGE;
    case DGC_OPID_LoopCond: return FK_PASS;
    case DGC_OPID_ControlTrigger: return FK_TRIGGER;
    default: break;
    }
    if (dgc_op_has(n->op, DGC_OP_RESOURCE))
        return FK_RES;
    if (dgc_op_has(n->op, DGC_OP_VARIABLE))
        return FK_VAR;
    if (dgc_op_has(n->op, DGC_OP_FEED))
        return FK_FEED;
    return FK_OP;
}

static int cmp_edge_src(const void *a, const void *b)
{
    const int32_t *x = a, *y = b; /* (src, dst, dst_in, src_out) */
    for (int i = 0; i < 4; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* Out edges in CSR form: data edges from in_slots, control edges are the
 * plan's successors that take no data from the step. */
static int build_edges(dgr_fx *x)
{
    const dgc_plan *p = x->r->plan;
    int32_t n = p->n_steps;
    int64_t cap = (int64_t)p->n_in_slots + p->n_succ + 1;
    int32_t *q = dg_malloc(sizeof *q * 4 * (size_t)cap);
    if (!q)
        return -1;
    int64_t m = 0;
    for (int32_t t = 0; t < n; t++) {
        const dgc_step *st = &p->steps[t];
        for (int i = 0; i < st->n_in; i++) {
            int32_t sl = p->in_slots[st->in_off + i];
            int32_t s = p->slots[sl].step;
            int32_t *e = &q[4 * m++];
            e[0] = s;
            e[1] = t;
            e[2] = i;
            e[3] = sl - p->steps[s].out_slot;
        }
    }
    for (int32_t s = 0; s < n; s++) {
        const dgc_step *st = &p->steps[s];
        for (int32_t k = 0; k < st->n_succ; k++) {
            int32_t t = p->succ[st->succ_off + k];
            const dgc_step *tt = &p->steps[t];
            int data = 0;
            for (int i = 0; i < tt->n_in && !data; i++)
                data = p->slots[p->in_slots[tt->in_off + i]].step == s;
            if (data)
                continue;
            int32_t *e = &q[4 * m++];
            e[0] = s;
            e[1] = t;
            e[2] = -1;
            e[3] = -1;
            x->n_ctrl_in[t]++;
        }
    }
    qsort(q, (size_t)m, 4 * sizeof *q, cmp_edge_src);
    x->edges = dg_malloc(sizeof *x->edges * (size_t)(m + 1));
    if (!x->edges) {
        dg_free(q);
        return -1;
    }
    for (int64_t i = 0; i < m; i++) {
        x->edges[i].dst = q[4 * i + 1];
        x->edges[i].dst_in = q[4 * i + 2];
        x->edges[i].src_out = q[4 * i + 3];
        x->ecnt[q[4 * i]]++;
    }
    for (int32_t s = 1; s < n; s++)
        x->eoff[s] = x->eoff[s - 1] + x->ecnt[s - 1];
    dg_free(q);
    return 0;
}

static const char *sf_name(const dgr_fx *x, int32_t f)
{
    return f == 0 ? "(the root frame)" : x->sf[f].name;
}

static const char *step_name(const dgr_fx *x, int32_t s)
{
    const dgc_plan *p = x->r->plan;
    return x->r->s->g->nodes[p->steps[s].node].name;
}

/* The static frame an Enter step feeds: found or added.  -1 nomem. */
static int32_t child_frame(dgr_fx *x, int32_t parent, const dgc_node *n)
{
    const dgc_attr *a = dgc_attr_at(n, DGC_AT_frame_name);
    const char *name = a && a->kind == DGC_A_STR && a->s ? a->s : n->name;
    for (int32_t i = 1; i < x->n_sf; i++)
        if (x->sf[i].parent == parent && strcmp(x->sf[i].name, name) == 0)
            return i;
    fx_sframe *nf = dg_realloc(x->sf, sizeof *nf * (size_t)(x->n_sf + 1));
    if (!nf)
        return -1;
    x->sf = nf;
    memset(&nf[x->n_sf], 0, sizeof *nf);
    nf[x->n_sf].parent = parent;
    nf[x->n_sf].name = name;
    int64_t pi = dgc_attr_i(n, DGC_AT_parallel_iterations);
    nf[x->n_sf].parallel = pi < 1 ? 1 : pi > 1000000 ? 1000000 : (int)pi;
    return x->n_sf++;
}

/* The frame step s's outputs go to. */
static int32_t out_frame(const dgr_fx *x, int32_t s)
{
    if (x->kind[s] == FK_ENTER)
        return x->child[s];
    if (x->kind[s] == FK_EXIT)
        return x->sf[x->sframe[s]].parent;
    return x->sframe[s];
}

/* Frames of every step by a walk from the plan's roots; frames must agree
 * on every edge (TF's ControlFlowInfo). */
static dg_status build_frames(dgr_fx *x, dg_error *err)
{
    const dgc_plan *p = x->r->plan;
    const dgc_graph *g = x->r->s->g;
    int32_t n = p->n_steps;
    x->sf = dg_calloc(1, sizeof *x->sf);
    int32_t *queue = dg_malloc(sizeof *queue * (size_t)(n + 1));
    if (!x->sf || !queue) {
        dg_free(queue);
        return dg_err_nomem(err, "frames");
    }
    x->sf[0].parent = -1;
    x->sf[0].name = "";
    x->sf[0].parallel = 1;
    x->n_sf = 1;
    int32_t head = 0, tail = 0;
    for (int32_t s = 0; s < n; s++) {
        x->sframe[s] = -1;
        x->child[s] = -1;
        x->exit_idx[s] = -1;
    }
    for (int32_t i = 0; i < p->n_roots; i++) {
        x->sframe[p->roots[i]] = 0;
        queue[tail++] = p->roots[i];
    }
    dg_status rc = DG_OK;
    while (head < tail && rc == DG_OK) {
        int32_t s = queue[head++];
        const dgc_node *nd = &g->nodes[p->steps[s].node];
        if (x->kind[s] == FK_ENTER) {
            x->child[s] = child_frame(x, x->sframe[s], nd);
            if (x->child[s] < 0) {
                rc = dg_err_nomem(err, "frames");
                break;
            }
            x->sf[x->child[s]].n_enters++;
        } else if (x->kind[s] == FK_EXIT) {
            int32_t f = x->sframe[s];
            if (f == 0) {
                rc = dg_err(err, DG_E_GRAPH, "node '%s': Exit outside of a "
                            "loop (no Enter before it)", nd->name);
                break;
            }
            int32_t *ne = dg_realloc(x->sf[f].exits, sizeof *ne *
                                     (size_t)(x->sf[f].n_exits + 1));
            if (!ne) {
                rc = dg_err_nomem(err, "frames");
                break;
            }
            x->sf[f].exits = ne;
            x->exit_idx[s] = x->sf[f].n_exits;
            ne[x->sf[f].n_exits++] = s;
        }
        int32_t of = out_frame(x, s);
        for (int32_t e = x->eoff[s]; e < x->eoff[s] + x->ecnt[s]; e++) {
            int32_t t = x->edges[e].dst;
            if (x->sframe[t] < 0) {
                x->sframe[t] = of;
                queue[tail++] = t;
            } else if (x->sframe[t] != of) {
                rc = dg_err(err, DG_E_GRAPH, "node '%s': its inputs come "
                            "from different frames: %s (from '%s') and %s",
                            step_name(x, t), sf_name(x, of), step_name(x, s),
                            sf_name(x, x->sframe[t]));
                break;
            }
        }
    }
    dg_free(queue);
    return rc;
}

dgr_fx *dgr_fx_new(dgr_runner *r, dg_error *err)
{
    const dgc_plan *p = r->plan;
    dgr_exec *S = r->s;
    dgr_fx *x = dg_calloc(1, sizeof *x);
    if (!x) {
        dg_err_nomem(err, "runner");
        return NULL;
    }
    x->r = r;
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    int32_t n = p->n_steps;
    size_t ns = (size_t)n + 1, nsl = (size_t)p->n_slots + 1;
    x->n_steps = n;
    x->kind = dg_calloc(ns, 1);
    x->eoff = dg_calloc(ns, sizeof *x->eoff);
    x->ecnt = dg_calloc(ns, sizeof *x->ecnt);
    x->n_ctrl_in = dg_calloc(ns, sizeof *x->n_ctrl_in);
    x->sframe = dg_calloc(ns, sizeof *x->sframe);
    x->child = dg_calloc(ns, sizeof *x->child);
    x->exit_idx = dg_calloc(ns, sizeof *x->exit_idx);
    x->is_const = dg_calloc(ns, 1);
    x->fetched = dg_calloc(nsl, 1);
    x->rootv = dg_calloc(nsl, sizeof *x->rootv);
    x->rootdead = dg_calloc(nsl, 1);
    x->dq = dg_calloc((size_t)S->n_dev + 1, sizeof *x->dq);
    x->scratch = dg_calloc((size_t)S->n_workers + 1, sizeof *x->scratch);
    if (!x->kind || !x->eoff || !x->ecnt || !x->n_ctrl_in || !x->sframe ||
        !x->child || !x->exit_idx || !x->is_const || !x->fetched ||
        !x->rootv || !x->rootdead || !x->dq || !x->scratch)
        goto nomem;
    x->max_in = 1;
    x->max_out = 1;
    for (int32_t s = 0; s < n; s++) {
        const dgc_step *st = &p->steps[s];
        if (st->n_in > x->max_in)
            x->max_in = st->n_in;
        if (st->n_out > x->max_out)
            x->max_out = st->n_out;
        if (st->kind == DGC_STEP_TRANSFER) {
            x->kind[s] = FK_XFER;
            continue;
        }
        const dgc_node *nd = &S->g->nodes[st->node];
        x->kind[s] = (uint8_t)kind_of(nd);
        x->is_const[s] = x->kind[s] == FK_ENTER &&
                         dgc_attr_b(nd, DGC_AT_is_constant);
        if (x->kind[s] == FK_OP) {
            r->kern[s] = dgr_exec_kernel(S->g, nd, &S->devs[st->device], err);
            if (!r->kern[s]) {
                dgr_fx_free(x);
                return NULL;
            }
        } else if (x->kind[s] == FK_RES &&
                   !S->devs[st->device].be->host_memory) {
            dg_err(err, DG_E_RUNTIME, "node '%s': %s runs on host-memory "
                   "devices only, not %s", nd->name, dgc_node_op_name(nd),
                   S->devs[st->device].info.name);
            dgr_fx_free(x);
            return NULL;
        }
    }
    for (int i = 0; i < p->n_fetch; i++)
        x->fetched[p->fetch_slots[i]] = 1;
    if (build_edges(x))
        goto nomem;
    if (build_frames(x, err) != DG_OK) {
        dgr_fx_free(x);
        return NULL;
    }
    for (int i = 0; i < p->n_fetch; i++) {
        int32_t s = p->slots[p->fetch_slots[i]].step;
        if (out_frame(x, s) != 0) {
            dg_err(err, DG_E_GRAPH, "node '%s': cannot fetch a value of "
                   "loop frame '%s' (fetch its Exit)", step_name(x, s),
                   sf_name(x, out_frame(x, s)));
            dgr_fx_free(x);
            return NULL;
        }
    }
    for (int d = 0; d < S->n_dev; d++) {
        x->dq[d].threads = dgr_ipool_threads(S->pools[d]);
        if (dgr_ipool_reserve(S->pools[d], x->dq[d].threads + 1))
            goto nomem;
    }
    for (int i = 0; i < S->n_workers; i++) {
        fx_scratch *w = &x->scratch[i];
        w->in = dg_calloc((size_t)x->max_in, sizeof *w->in);
        w->out = dg_calloc((size_t)x->max_out, sizeof *w->out);
        w->dead = dg_calloc((size_t)x->max_out, 1);
        w->types = dg_calloc((size_t)(x->max_in + x->max_out),
                             sizeof *w->types);
        w->hostin = dg_calloc((size_t)x->max_in * DGR_HOST_IN_MAX,
                              sizeof *w->hostin);
        if (!w->in || !w->out || !w->dead || !w->types || !w->hostin)
            goto nomem;
    }
    return x;
nomem:
    dg_err_nomem(err, "runner");
    dgr_fx_free(x);
    return NULL;
}

void dgr_fx_free(dgr_fx *x)
{
    if (!x)
        return;
    if (x->scratch)
        for (int i = 0; i < x->r->s->n_workers; i++) {
            dg_free(x->scratch[i].in);
            dg_free(x->scratch[i].out);
            dg_free(x->scratch[i].dead);
            dg_free(x->scratch[i].types);
            dg_free(x->scratch[i].hostin);
        }
    dg_free(x->scratch);
    for (int32_t i = 0; i < x->n_sf; i++)
        dg_free(x->sf[i].exits);
    dg_free(x->sf);
    while (x->free_tasks) {
        fx_task *t = x->free_tasks;
        x->free_tasks = t->next;
        dg_free(t);
    }
    dg_free(x->kind);
    dg_free(x->eoff);
    dg_free(x->ecnt);
    dg_free(x->edges);
    dg_free(x->n_ctrl_in);
    dg_free(x->sframe);
    dg_free(x->child);
    dg_free(x->exit_idx);
    dg_free(x->is_const);
    dg_free(x->fetched);
    dg_free(x->rootv);
    dg_free(x->rootdead);
    dg_free(x->dq);
    pthread_mutex_destroy(&x->mu);
    pthread_cond_destroy(&x->cv);
    dg_free(x);
}

/* ---- frames and iterations (under x->mu) ---------------------------------- */

static void fail_locked(dgr_fx *x, const dg_error *e)
{
    if (!x->failed) {
        x->failed = 1;
        x->err = *e;
    }
}

static void fail_nomem(dgr_fx *x, const char *what)
{
    dg_error e;
    dg_err_nomem(&e, what);
    fail_locked(x, &e);
}

static void value_drop(dgr_value *v)
{
    if (v->buf)
        dgr_buffer_release(v->buf);
    v->buf = NULL;
}

static fx_iter *iter_new(dgr_fx *x, int64_t n)
{
    const dgc_plan *p = x->r->plan;
    fx_iter *it = dg_calloc(1, sizeof *it);
    if (!it)
        return NULL;
    size_t ni = (size_t)p->n_in_slots + 1, ns = (size_t)p->n_steps + 1;
    it->n = n;
    it->in = dg_calloc(ni, sizeof *it->in);
    it->st = dg_calloc(ni, 1);
    it->pending = dg_malloc(sizeof *it->pending * ns);
    it->ndead = dg_calloc(ns, sizeof *it->ndead);
    it->fired = dg_calloc(ns, 1);
    if (!it->in || !it->st || !it->pending || !it->ndead || !it->fired) {
        dg_free(it->in);
        dg_free(it->st);
        dg_free(it->pending);
        dg_free(it->ndead);
        dg_free(it->fired);
        dg_free(it);
        return NULL;
    }
    for (int32_t s = 0; s < p->n_steps; s++)
        it->pending[s] = x->n_ctrl_in[s] +
                         (x->kind[s] == FK_MERGE ? 0 : p->steps[s].n_in);
    return it;
}

static void iter_free(dgr_fx *x, fx_iter *it)
{
    if (!it)
        return;
    for (int32_t i = 0; i < x->r->plan->n_in_slots; i++)
        value_drop(&it->in[i]);
    dg_free(it->in);
    dg_free(it->st);
    dg_free(it->pending);
    dg_free(it->ndead);
    dg_free(it->fired);
    dg_free(it);
}

static fx_iter *iter_get(fx_frame *f, int64_t n)
{
    return n >= f->oldest && n <= f->newest ? f->iters[n] : NULL;
}

static void enqueue(dgr_fx *x, int32_t t, fx_frame *f, fx_iter *it)
{
    fx_task *k = x->free_tasks;
    if (k)
        x->free_tasks = k->next;
    else if (!(k = dg_malloc(sizeof *k))) {
        fail_nomem(x, "ready step");
        return;
    }
    k->next = NULL;
    k->step = t;
    k->f = f;
    k->it = it->n;
    it->outstanding++;
    int d = x->r->plan->steps[t].device;
    fx_dq *q = &x->dq[d];
    if (q->tail)
        q->tail->next = k;
    else
        q->head = k;
    q->tail = k;
    if (q->active < q->threads) {
        q->active++;
        x->n_active++;
        dgr_ipool_push(x->r->s->pools[d], x->r, d);
    }
}

/* Value v (dead or not) arrives over edge e at iteration it of f. */
static void deliver(dgr_fx *x, fx_frame *f, fx_iter *it, const fx_edge *e,
                    const dgr_value *v, int dead)
{
    const dgc_plan *p = x->r->plan;
    int32_t t = e->dst;
    const dgc_step *st = &p->steps[t];
    if (e->dst_in >= 0) {
        int32_t idx = st->in_off + e->dst_in;
        int keep = !dead && !(x->kind[t] == FK_MERGE && it->fired[t]);
        if (keep && x->kind[t] == FK_MERGE) {
            /* the first live input is the one Merge forwards */
            for (int i = 0; i < st->n_in && keep; i++)
                keep = it->st[st->in_off + i] != 1;
        }
        if (keep) {
            value_drop(&it->in[idx]);
            it->in[idx] = *v;
            if (v->buf)
                dgr_buffer_retain(v->buf);
            it->st[idx] = 1;
        } else if (!it->st[idx]) {
            it->st[idx] = 2;
        }
    }
    if (x->kind[t] == FK_MERGE) {
        if (it->fired[t])
            return;
        if (e->dst_in < 0)
            it->pending[t]--;
        else if (dead)
            it->ndead[t]++;
        int live = 0;
        for (int i = 0; i < st->n_in && !live; i++)
            live = it->st[st->in_off + i] == 1;
        if (it->pending[t] == 0 && (live || it->ndead[t] >= st->n_in)) {
            it->fired[t] = 1;
            enqueue(x, t, f, it);
        }
        return;
    }
    if (dead)
        it->ndead[t]++;
    if (--it->pending[t] == 0)
        enqueue(x, t, f, it);
}

static void deliver_all(dgr_fx *x, fx_frame *f, fx_iter *it, int32_t s,
                        const dgr_value *out, const uint8_t *dead, int sdead)
{
    const dgc_step *st = &x->r->plan->steps[s];
    if (!f->parent) /* the root frame: keep fetched values */
        for (int k = 0; k < st->n_out; k++) {
            int32_t sl = st->out_slot + k;
            if (!x->fetched[sl])
                continue;
            value_drop(&x->rootv[sl]);
            x->rootdead[sl] = dead[k];
            if (!dead[k]) {
                x->rootv[sl] = out[k];
                if (out[k].buf)
                    dgr_buffer_retain(out[k].buf);
            }
        }
    for (int32_t e = x->eoff[s]; e < x->eoff[s] + x->ecnt[s]; e++) {
        const fx_edge *ed = &x->edges[e];
        if (ed->dst_in >= 0)
            deliver(x, f, it, ed, &out[ed->src_out], dead[ed->src_out]);
        else
            deliver(x, f, it, ed, NULL,
                    sdead && x->kind[ed->dst] != FK_TRIGGER);
    }
}

/* Add iteration newest+1 to f and feed it the constant Enters. */
static fx_iter *iter_add(dgr_fx *x, fx_frame *f)
{
    int64_t n = f->newest + 1;
    if (n >= f->cap_iters) {
        int64_t nc = f->cap_iters ? f->cap_iters * 2 : 8;
        while (nc <= n)
            nc *= 2;
        fx_iter **ni = dg_realloc(f->iters, sizeof *ni * (size_t)nc);
        if (!ni)
            return NULL;
        memset(ni + f->cap_iters, 0,
               sizeof *ni * (size_t)(nc - f->cap_iters));
        f->iters = ni;
        f->cap_iters = nc;
    }
    fx_iter *it = iter_new(x, n);
    if (!it)
        return NULL;
    f->iters[n] = it;
    f->newest = n;
    for (fx_const *c = f->consts; c; c = c->next) {
        uint8_t d = (uint8_t)c->dead;
        deliver_all(x, f, it, c->step, &c->v, &d, c->dead);
    }
    return it;
}

static fx_frame *frame_new(dgr_fx *x, int32_t sid, fx_frame *parent,
                           int64_t parent_iter)
{
    fx_frame *f = dg_calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->sid = sid;
    f->parent = parent;
    f->parent_iter = parent_iter;
    f->pending_enters = x->sf[sid].n_enters;
    f->newest = -1;
    f->deferred_tail = &f->deferred;
    f->exit_live = dg_calloc((size_t)x->sf[sid].n_exits + 1, 1);
    if (!f->exit_live || !iter_add(x, f)) {
        dg_free(f->exit_live);
        dg_free(f->iters);
        dg_free(f);
        return NULL;
    }
    if (parent) {
        f->next_kid = parent->kids;
        parent->kids = f;
        parent->iters[parent_iter]->frames++;
    }
    return f;
}

/* Free f and its children (values included): the end of a run. */
static void frame_free(dgr_fx *x, fx_frame *f)
{
    while (f->kids) {
        fx_frame *k = f->kids;
        f->kids = k->next_kid;
        frame_free(x, k);
    }
    for (int64_t i = f->oldest; i <= f->newest; i++)
        iter_free(x, f->iters[i]);
    while (f->deferred) {
        fx_defer *d = f->deferred;
        f->deferred = d->next;
        value_drop(&d->v);
        dg_free(d);
    }
    while (f->consts) {
        fx_const *c = f->consts;
        f->consts = c->next;
        value_drop(&c->v);
        dg_free(c);
    }
    dg_free(f->iters);
    dg_free(f->exit_live);
    dg_free(f);
}

static void frame_cleanup(dgr_fx *x, fx_frame *f);

/* Frame f is done: its Exits that left nothing live send dead values to
 * the parent; the parent iteration may be done. */
static void frame_done(dgr_fx *x, fx_frame *f)
{
    fx_frame *pf = f->parent;
    fx_iter *pit = pf->iters[f->parent_iter];
    const fx_sframe *sf = &x->sf[f->sid];
    dgr_value none[1];
    memset(none, 0, sizeof none);
    for (int32_t i = 0; i < sf->n_exits; i++) {
        if (f->exit_live[i])
            continue;
        uint8_t d = 1;
        deliver_all(x, pf, pit, sf->exits[i], none, &d, 1);
    }
    for (fx_frame **k = &pf->kids; *k; k = &(*k)->next_kid)
        if (*k == f) {
            *k = f->next_kid;
            break;
        }
    f->kids = NULL;
    frame_free(x, f);
    pit->frames--;
    frame_cleanup(x, pf);
}

/* Retire f's done iterations (oldest first), start deferred ones, finish
 * f when nothing is left. */
static void frame_cleanup(dgr_fx *x, fx_frame *f)
{
    for (;;) {
        while (f->oldest <= f->newest) {
            fx_iter *it = f->iters[f->oldest];
            if (it->outstanding || it->frames ||
                (it->n == 0 && f->pending_enters > 0))
                break;
            iter_free(x, it);
            f->iters[f->oldest++] = NULL;
        }
        if (!f->deferred ||
            f->newest - f->oldest + 1 >= x->sf[f->sid].parallel)
            break;
        fx_defer *d = f->deferred;
        f->deferred = NULL;
        f->deferred_tail = &f->deferred;
        fx_iter *it = iter_add(x, f);
        while (d) {
            fx_defer *nx = d->next;
            uint8_t dead = 0;
            if (it)
                deliver_all(x, f, it, d->step, &d->v, &dead, 0);
            value_drop(&d->v);
            dg_free(d);
            d = nx;
        }
        if (!it) {
            fail_nomem(x, "loop iteration");
            return;
        }
    }
    if (f->oldest <= f->newest || f->deferred || f->pending_enters > 0)
        return;
    if (!f->parent) {
        x->root_done = 1;
        return;
    }
    frame_done(x, f);
}

/* Child frame sid of f at iteration n: found or opened. */
static fx_frame *child_get(dgr_fx *x, fx_frame *f, int64_t n, int32_t sid)
{
    for (fx_frame *k = f->kids; k; k = k->next_kid)
        if (k->sid == sid && k->parent_iter == n)
            return k;
    return frame_new(x, sid, f, n);
}

/* Step s ran in (f, it): route its outputs (out/dead) by its kind. */
static void propagate(dgr_fx *x, int32_t s, fx_frame *f, fx_iter *it,
                      const dgr_value *out, const uint8_t *dead, int sdead)
{
    switch (x->kind[s]) {
    case FK_ENTER: {
        fx_frame *c = child_get(x, f, it->n, x->child[s]);
        if (!c) {
            fail_nomem(x, "frame");
            return;
        }
        if (x->is_const[s]) {
            fx_const *k = dg_calloc(1, sizeof *k);
            if (!k) {
                fail_nomem(x, "frame");
                return;
            }
            k->step = s;
            k->dead = dead[0];
            k->v = out[0];
            if (k->v.buf)
                dgr_buffer_retain(k->v.buf);
            k->next = c->consts;
            c->consts = k;
            for (int64_t i = c->oldest; i <= c->newest; i++)
                deliver_all(x, c, c->iters[i], s, out, dead, sdead);
        } else {
            deliver_all(x, c, c->iters[0], s, out, dead, sdead);
        }
        c->pending_enters--;
        frame_cleanup(x, c);
        return;
    }
    case FK_EXIT:
        if (sdead)
            return; /* sent when the frame is done unless a live one left */
        f->exit_live[x->exit_idx[s]] = 1;
        deliver_all(x, f->parent, f->parent->iters[f->parent_iter], s, out,
                    dead, 0);
        return;
    case FK_NEXT: {
        if (sdead)
            return; /* the loop ended on this path */
        fx_iter *nx = iter_get(f, it->n + 1);
        if (!nx && f->newest - f->oldest + 1 < x->sf[f->sid].parallel) {
            nx = iter_add(x, f);
            if (!nx) {
                fail_nomem(x, "loop iteration");
                return;
            }
        }
        if (nx) {
            deliver_all(x, f, nx, s, out, dead, 0);
            return;
        }
        fx_defer *d = dg_calloc(1, sizeof *d);
        if (!d) {
            fail_nomem(x, "loop iteration");
            return;
        }
        d->step = s;
        d->v = out[0];
        if (d->v.buf)
            dgr_buffer_retain(d->v.buf);
        *f->deferred_tail = d;
        f->deferred_tail = &d->next;
        return;
    }
    default:
        deliver_all(x, f, it, s, out, dead, sdead);
    }
}

/* ---- running one step (without the lock) ---------------------------------- */

static dg_status read_host(dgr_device *d, const dgr_value *v, void *dst,
                           size_t n, dg_error *err)
{
    if (d->be->host_memory) {
        memcpy(dst, v->buf->host, n);
        return DG_OK;
    }
    return d->be->read(d, v->buf, dst, n, err);
}

static dg_status run_xfer(dgr_fx *x, int32_t s, fx_scratch *w)
{
    dgr_exec *S = x->r->s;
    const dgc_step *st = &x->r->plan->steps[s];
    const dgr_value *src = &w->in[0];
    dgr_value *dst = &w->out[0];
    dgr_device *sd = &S->devs[st->src_device], *dd = &S->devs[st->device];
    *dst = *src;
    dst->buf = NULL;
    if (!src->buf)
        return DG_OK;
    size_t n = (size_t)dg_shape_numel(&src->shape) * dg_dtype_size(src->dtype);
    if (n > src->buf->nbytes)
        n = src->buf->nbytes;
    /* -1: memory no stream still uses (the copy does not queue behind
     * stream 0's kernels) */
    dst->buf = dgr_buffer_new(dd, n, -1, &w->err);
    if (!dst->buf)
        return w->err.code;
    if (dd->be->host_memory)
        return read_host(sd, src, dst->buf->host, n, &w->err);
    if (sd->be->host_memory)
        return dd->be->write(dd, dst->buf, src->buf->host, n, &w->err);
    void *tmp = dg_malloc(n + 1);
    if (!tmp)
        return dg_err_nomem(&w->err, "transfer");
    dg_status rc = sd->be->read(sd, src->buf, tmp, n, &w->err);
    if (rc == DG_OK)
        rc = dd->be->write(dd, dst->buf, tmp, n, &w->err);
    dg_free(tmp);
    return rc;
}

static dg_status run_kernel(dgr_fx *x, int32_t s, fx_scratch *w)
{
    dgr_runner *r = x->r;
    dgr_exec *S = r->s;
    const dgc_step *st = &r->plan->steps[s];
    const dgc_node *n = &S->g->nodes[st->node];
    dgr_device *dev = &S->devs[st->device];
    const dgc_ttype *tout = n->outputs;
    if (st->n_in > 0) {
        dgc_ttype *to = w->types;
        dg_status tr = dgr_exec_run_types(dev, n, w->in, st->n_in, w->hostin,
                                          w->types + x->max_out, to, &w->err);
        if (tr != DG_OK)
            return tr;
        tout = to;
    }
    if (dev->be->streams) /* stream 0 reads them: no reuse before it ran */
        for (int i = 0; i < st->n_in; i++)
            if (w->in[i].buf)
                dev->be->streams->mark(w->in[i].buf, 0);
    dgr_kctx k;
    dgr_exec_kctx(&k, S, dev, S->g, n, st, w->in, w->out, tout, x->step,
                  &w->err);
    dg_status rc = r->kern[s](&k);
    if (k.event)
        dev->be->streams->event_release(k.event);
    if (rc != DG_OK && strncmp(w->err.msg, "node '", 6) != 0) {
        char prev[sizeof w->err.msg];
        snprintf(prev, sizeof prev, "%s", w->err.msg);
        dg_err(&w->err, rc, "node '%s': %s", n->name,
               prev[0] ? prev : "kernel failed");
    }
    return rc;
}

static void alias(dgr_value *o, const dgr_value *v)
{
    *o = *v;
    if (o->buf)
        dgr_buffer_retain(o->buf);
}

/* Run step s with inputs w->in (st: per input 1 live / 2 dead) into
 * w->out / w->dead; *sdead: the step did not run (dead). */
static dg_status run_step(dgr_fx *x, int32_t s, const uint8_t *st_in,
                          int ndead, fx_scratch *w, int *sdead)
{
    dgr_exec *S = x->r->s;
    const dgc_step *st = &x->r->plan->steps[s];
    const dgc_node *n = &S->g->nodes[st->node];
    dgr_device *dev = &S->devs[st->device];
    int kd = x->kind[s];
    for (int k = 0; k < st->n_out; k++) {
        memset(&w->out[k], 0, sizeof w->out[k]);
        w->dead[k] = 1;
    }
    *sdead = 1;
    if (kd == FK_MERGE) {
        for (int i = 0; i < st->n_in; i++)
            if (st_in[i] == 1) {
                alias(&w->out[0], &w->in[i]);
                w->dead[0] = w->dead[1] = 0;
                *sdead = 0;
                w->out[1].dtype = DG_I32;
                w->out[1].shape.rank = 0;
                w->out[1].buf = dgr_buffer_new(dev, 4, -1, &w->err);
                if (!w->out[1].buf)
                    return w->err.code;
                int32_t idx = i;
                return dev->be->write(dev, w->out[1].buf, &idx, 4, &w->err);
            }
        return DG_OK; /* every input dead */
    }
    if (ndead > 0 && kd != FK_TRIGGER)
        return DG_OK;
    *sdead = 0;
    memset(w->dead, 0, (size_t)st->n_out);
    switch (kd) {
    case FK_XFER:
        return run_xfer(x, s, w);
    case FK_VAR:
    case FK_FEED: {
        const dgr_value *v = kd == FK_VAR ? &S->vars[st->node]
                                          : &S->feeds[st->node];
        if (kd == FK_FEED && !v->buf && st->n_in > 0)
            v = &w->in[0]; /* PlaceholderWithDefault not fed: its input */
        if (!v->buf)
            return dg_err(&w->err, DG_E_RUNTIME, kd == FK_VAR
                          ? "node '%s': Variable is not initialised"
                          : "node '%s': Placeholder must be fed a value",
                          n->name);
        alias(&w->out[0], v);
        return DG_OK;
    }
    case FK_ENTER:
    case FK_EXIT:
    case FK_NEXT:
    case FK_PASS:
        alias(&w->out[0], &w->in[0]);
        return DG_OK;
    case FK_TRIGGER:
        return DG_OK;
    case FK_SWITCH: {
        uint8_t pred = 0;
        if (!w->in[1].buf)
            return dg_err(&w->err, DG_E_RUNTIME, "node '%s': empty pred",
                          n->name);
        dg_status rc = read_host(dev, &w->in[1], &pred, 1, &w->err);
        if (rc != DG_OK)
            return rc;
        int k = pred ? 1 : 0;
        alias(&w->out[k], &w->in[0]);
        w->dead[1 - k] = 1;
        return DG_OK;
    }
    case FK_RES:
        return dgr_fx_res_run(x->res, dev, n, w->in, st->n_in, w->out,
                              st->n_out, &w->err);
    default:
        return run_kernel(x, s, w);
    }
}

static void trace_step(dgr_fx *x, int32_t s, int lane, uint64_t t0,
                       uint64_t t1, int64_t iter, const dgr_value *out)
{
    dgr_exec *S = x->r->s;
    const dgc_step *st = &x->r->plan->steps[s];
    const dgc_node *n = &S->g->nodes[st->node];
    if (st->kind == DGC_STEP_TRANSFER) {
        dgr_trace_memcpy(S->trace, st->src_device, st->device, n->name,
                         out->buf ? (int64_t)out->buf->nbytes : 0, x->step,
                         t0, t1, 0);
        return;
    }
    dgr_trace_op_iter(S->trace, st->device,
                      S->devs[st->device].be->streams ? DGR_LANE_HOST : lane,
                      n->name, dgc_node_op_name(n), x->step, iter, t0, t1,
                      S->in_names[st->node], n->n_inputs, 0);
}

void dgr_fx_task(dgr_runner *r, int32_t dev, int lane)
{
    dgr_fx *x = r->fx;
    dgr_exec *S = r->s;
    fx_scratch *w = &x->scratch[S->lane_base[dev] + lane];
    fx_dq *q = &x->dq[dev];
    pthread_mutex_lock(&x->mu);
    for (;;) {
        fx_task *k = q->head;
        if (!k) {
            q->active--;
            x->n_active--;
            if (x->n_active == 0)
                pthread_cond_signal(&x->cv);
            pthread_mutex_unlock(&x->mu);
            return;
        }
        q->head = k->next;
        if (!q->head)
            q->tail = NULL;
        int32_t s = k->step;
        fx_frame *f = k->f;
        fx_iter *it = f->iters[k->it];
        k->next = x->free_tasks;
        x->free_tasks = k;
        const dgc_step *st = &r->plan->steps[s];
        if (!x->failed) {
            /* the inputs are final: nothing else writes them once the
             * step is ready, except late dead inputs of a Merge */
            uint8_t stin[64];
            uint8_t *sti = st->n_in <= 64 ? stin : dg_malloc((size_t)st->n_in);
            int ndead = it->ndead[s];
            for (int i = 0; sti && i < st->n_in; i++) {
                w->in[i] = it->in[st->in_off + i];
                sti[i] = it->st[st->in_off + i];
                it->in[st->in_off + i].buf = NULL; /* ours now */
            }
            int64_t itn = it->n;
            pthread_mutex_unlock(&x->mu);
            int sdead = 0;
            w->err.code = DG_OK;
            w->err.msg[0] = 0;
            uint64_t t0 = S->trace ? dg_now_ns() : 0;
            dg_status rc = sti ? run_step(x, s, sti, ndead, w, &sdead)
                               : dg_err_nomem(&w->err, "step inputs");
            if (S->trace && !sdead) /* iterations of loops, not the root */
                trace_step(x, s, lane, t0, dg_now_ns(), f->parent ? itn : -1,
                           &w->out[0]);
            for (int i = 0; sti && i < st->n_in; i++)
                value_drop(&w->in[i]);
            if (sti != stin)
                dg_free(sti);
            pthread_mutex_lock(&x->mu);
            if (rc != DG_OK) {
                if (w->err.code == DG_OK)
                    dg_err(&w->err, rc, "node '%s': failed",
                           S->g->nodes[st->node].name);
                fail_locked(x, &w->err);
            } else if (!x->failed) {
                propagate(x, s, f, it, w->out, w->dead, sdead);
            }
            for (int k2 = 0; k2 < st->n_out; k2++)
                value_drop(&w->out[k2]);
        }
        it->outstanding--;
        if (!x->failed)
            frame_cleanup(x, f);
    }
}

/* Nothing runs and nothing is ready: the run is finished, or stuck. */
static int idle_locked(const dgr_fx *x)
{
    if (x->n_active > 0)
        return 0;
    for (int d = 0; d < x->r->s->n_dev; d++)
        if (x->dq[d].head)
            return 0;
    return 1;
}

/* A step of the root frame's iteration that could not run (stuck): the
 * first with inputs pending, to name in the error. */
static const char *stuck_step(const dgr_fx *x)
{
    const fx_frame *f = x->root;
    while (f->kids)
        f = f->kids;
    for (int64_t i = f->oldest; i <= f->newest; i++) {
        const fx_iter *it = f->iters[i];
        for (int32_t s = 0; s < x->n_steps; s++)
            if (x->sframe[s] == f->sid && it->pending[s] > 0 &&
                it->pending[s] < x->n_ctrl_in[s] + x->r->plan->steps[s].n_in)
                return step_name(x, s);
    }
    return "?";
}

dg_status dgr_fx_run(dgr_runner *r, int64_t step, dg_tensor **fetched,
                     dg_error *err)
{
    dgr_fx *x = r->fx;
    dgr_exec *S = r->s;
    const dgc_plan *p = r->plan;
    dg_status rc = DG_OK;
    pthread_mutex_lock(&S->run_mu);
    atomic_fetch_add(&S->run_counter, 1);
    x->step = step;
    x->failed = 0;
    x->root_done = 0;
    x->err.code = DG_OK;
    x->err.msg[0] = 0;
    x->res = dgr_fx_res_new();
    pthread_mutex_lock(&x->mu);
    x->root = x->res ? frame_new(x, 0, NULL, 0) : NULL;
    if (!x->root) {
        pthread_mutex_unlock(&x->mu);
        dgr_fx_res_free(x->res);
        x->res = NULL;
        pthread_mutex_unlock(&S->run_mu);
        return dg_err_nomem(err, "run");
    }
    fx_iter *it0 = x->root->iters[0];
    it0->outstanding++; /* held while the roots are queued */
    for (int32_t i = 0; i < p->n_roots; i++)
        enqueue(x, p->roots[i], x->root, it0);
    it0->outstanding--;
    frame_cleanup(x, x->root);
    while (!idle_locked(x))
        pthread_cond_wait(&x->cv, &x->mu);
    if (!x->failed && !x->root_done)
        dg_err(&x->err, DG_E_RUNTIME, "node '%s': the run cannot finish: "
               "control flow waits for inputs that never come", stuck_step(x)),
            x->failed = 1;
    pthread_mutex_unlock(&x->mu);
    if (x->failed) {
        rc = x->err.code ? x->err.code : DG_E_RUNTIME;
        if (err)
            *err = x->err;
    }
    rc = dgr_exec_sync_devices(S, rc, err);
    if (fetched)
        for (int i = 0; i < p->n_fetch; i++)
            fetched[i] = NULL;
    for (int i = 0; fetched && rc == DG_OK && i < p->n_fetch; i++) {
        int32_t sl = p->fetch_slots[i];
        const dgr_value *v = &x->rootv[sl];
        if (x->rootdead[sl] || !v->buf) {
            const dgc_node *n = &S->g->nodes[p->slots[sl].step >= 0
                                    ? p->steps[p->slots[sl].step].node : 0];
            rc = dg_err(err, DG_E_RUNTIME, "node '%s': the fetched value is "
                        "dead (its branch was not taken)", n->name);
            break;
        }
        dg_tensor *t = dg_tensor_new(v->dtype, &v->shape);
        if (!t) {
            rc = dg_err_nomem(err, "fetched tensor");
            break;
        }
        size_t n = (size_t)dg_shape_numel(&v->shape) * dg_dtype_size(v->dtype);
        if (n) {
            dgr_device *d = &S->devs[p->slots[sl].device];
            rc = d->be->read(d, v->buf, t->data, n, err);
        }
        fetched[i] = t;
    }
    if (rc != DG_OK && fetched)
        for (int i = 0; i < p->n_fetch; i++) {
            dg_tensor_free(fetched[i]);
            fetched[i] = NULL;
        }
    for (int32_t i = 0; i < p->n_slots; i++) {
        value_drop(&x->rootv[i]);
        x->rootdead[i] = 0;
    }
    pthread_mutex_lock(&x->mu);
    frame_free(x, x->root);
    x->root = NULL;
    pthread_mutex_unlock(&x->mu);
    dgr_fx_res_free(x->res);
    x->res = NULL;
    for (int d = 0; d < S->n_dev; d++)
        if (S->devs[d].be->streams)
            S->devs[d].be->streams->idle(&S->devs[d]);
    pthread_mutex_unlock(&S->run_mu);
    return rc;
}
