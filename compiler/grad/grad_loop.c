/*
 * grad_loop.c -- gradients through while loops (issue 11), as TF's
 * control_flow_grad / GradLoopState build them:
 *
 * - The loops of a graph are found statically (grad_loop_find.c).  The
 *   sweep of gradients.c sees a top-level loop as one node whose inputs
 *   are its Enters' inputs.
 * - A forward loop variable is Enter -> Merge(enter, next) -> Switch(merge,
 *   LoopCond) -> body -> NextIteration -> the Merge; its Exit takes the
 *   Switch's other output.  Loop-invariant inputs are is_constant Enters.
 * - The backward loop runs the forward loop's iteration count in reverse:
 *   a counter (a new variable of the forward loop, incremented once per
 *   iteration) leaves the forward loop, enters the backward one and counts
 *   down to 0.  Each differentiable forward variable has a backward
 *   variable starting at the gradient of its Exit (zeros without one);
 *   one backward iteration runs the gradient rules over the forward body
 *   (seeded at the NextIteration inputs, read at the Switch outputs) and
 *   its Exit is the gradient of the variable's initial value.  Each
 *   loop-invariant float input has an accumulator (zeros + the gradient of
 *   its Enter in each iteration) whose Exit is the input's gradient.
 * - Forward values the rules read are pushed on a stack (StackV2 /
 *   StackPushV2) in every forward iteration and popped (StackPopV2) in the
 *   backward iteration, last pushed first.  The forward counter's
 *   increment waits for the iteration's pushes and the pushes wait for the
 *   iteration's counter (so pushes happen in iteration order, all before
 *   the counter leaves the loop); the backward counter's decrement waits
 *   for the iteration's pops likewise.  Outer values the rules read enter
 *   the backward frame through is_constant Enters; nodes without an input
 *   in the backward frame get a control input from its counter.
 *
 * - Nested loops: a loop inside the differentiated loop's body is one node
 *   of the body's sweep; its backward loop is built inside the enclosing
 *   backward frame (its count and the values it reads from the enclosing
 *   body go through the enclosing loop's stacks; its stacks enter both
 *   frames), and the enclosing counters wait for its counters' Exits.
 *
 * - tf.cond in the body: every body value has a guard, the (Switch, output)
 *   it depends on (nested conds: a chain).  A guarded value's push is dead
 *   when its branch is not taken; its pop's stack handle goes through a
 *   Switch on the popped predicate, so it is dead in the same backward
 *   iterations.  The counters wait for pushes and pops through
 *   ControlTriggers, which fire for dead ones too.  As in TF, tensors a
 *   branch reads from outside must enter it through a Switch on the
 *   predicate (tf.cond makes these).
 *
 * Not supported (a graph error naming the node): a Merge in the body that
 * does not join the two outputs of one Switch, a y or an x inside a loop.
 */
#include "grad.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <string.h>

/* ---- the backward loop --------------------------------------------------- */

typedef struct lvar {       /* a forward loop variable */
    int32_t enter, merge, sw, next, exit; /* exit -1: none */
    int carried;            /* has a backward variable */
    int32_t bmerge, bsw, bbody;
} lvar;

typedef struct lgrad {
    struct lgrad *parent;   /* the loop around this one, NULL: top level */
    dgc_gsweep *s;
    dgc_gctx *c;
    dgc_graph *g;
    const dgc_gloops *l;
    const dgc_gloop *lp;
    int32_t cond;           /* the forward LoopCond */
    char fframe[512];       /* the forward frame's name */
    char bframe[600];       /* the backward frame's name */
    int64_t parallel;
    int ep;                 /* the Switch output that exits */
    int32_t base;           /* first node made for this loop */
    uint8_t *inb;           /* [id - base]: set_flag's flags */
    int32_t cap_inb;
    int32_t fpivot, fadd;   /* forward counter: body value, increment */
    int32_t blc, bpivot, bsub; /* backward LoopCond, counter, decrement */
    int32_t bexit;          /* the backward counter's Exit */
    dgc_ref *mfrom, *mto;   /* memo: forward/outer ref -> backward ref */
    int32_t n_memo, cap_memo;
    int32_t *push, *pop;    /* what the counters' steps wait for */
    int n_push, n_pop;
    /* tf.conds in the body: a guard is a (Switch, output) a value depends
     * on, inside its parent guard */
    int32_t *guard;         /* per forward node: its innermost guard, -1 */
    int32_t *gsw, *gport, *gparent;
    int n_guard;
} lgrad;

static dg_status to_backward(lgrad *lg, dgc_ref r, dgc_ref *out);
static dg_status grad_loop(dgc_gsweep *s, const dgc_gloops *l, int L,
                           lgrad *parent);

/* The status of a failed step: every failure that is not an allocation's
 * has filled err. */
static dg_status lfail(lgrad *lg)
{
    if (lg->c->err->code != DG_OK)
        return lg->c->err->code;
    return dg_err_nomem(lg->c->err, "loop gradient");
}

/* Flags of the nodes made for this loop: 1 = output in the backward
 * frame, 2 = in the forward frame (an inner loop's counter Exit). */
static int set_flag(lgrad *lg, int32_t id, uint8_t flag)
{
    int32_t k = id - lg->base;
    if (k >= lg->cap_inb) {
        int32_t cap = lg->cap_inb;
        uint8_t *p = dg_grow(lg->inb, &cap, k + 1, 1, 256);
        if (!p)
            return -1;
        memset(p + lg->cap_inb, 0, (size_t)(cap - lg->cap_inb));
        lg->inb = p;
        lg->cap_inb = cap;
    }
    lg->inb[k] |= flag;
    return 0;
}

static int set_inb(lgrad *lg, int32_t id)
{
    return set_flag(lg, id, 1);
}

static int has_flag(const lgrad *lg, int32_t id, uint8_t flag)
{
    int32_t k = id - lg->base;
    return k >= 0 && k < lg->cap_inb && (lg->inb[k] & flag);
}

static int in_b(const lgrad *lg, int32_t id)
{
    return has_flag(lg, id, 1);
}

/* A node for forward node fwd (not wired, not typed); -1 on error. */
static int32_t raw(lgrad *lg, int32_t fwd, const char *suffix, int op,
                   const dgc_ref *in, int n_in)
{
    struct dgc_lgrad *saved = lg->c->loop;
    lg->c->loop = NULL;
    int32_t id = dgc_grad_node_raw(lg->c, fwd, suffix, op, in, n_in);
    lg->c->loop = saved;
    return id;
}

static int32_t typed(lgrad *lg, int32_t id)
{
    if (id < 0 || dgc_infer_node(lg->g, id, lg->c->err) != DG_OK)
        return -1;
    return id;
}

/* A typed node with an optional control input; in the backward frame when
 * inb. */
static int32_t mk(lgrad *lg, int32_t fwd, const char *suffix, int op,
                  const dgc_ref *in, int n_in, int32_t ctrl, int inb)
{
    int32_t id = raw(lg, fwd, suffix, op, in, n_in);
    if (id < 0)
        return -1;
    if ((ctrl >= 0 && dgc_node_add_ctrl(lg->g, id, ctrl)) ||
        (inb && set_inb(lg, id))) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    return typed(lg, id);
}

static dgc_ref R(int32_t node, int32_t index)
{
    dgc_ref r = {node, index};
    return r;
}

/* The version of r (a value of the frame around the loop) in the
 * backward frame around the backward loop. */
static dg_status outer_b(lgrad *lg, dgc_ref r, dgc_ref *out)
{
    if (!lg->parent || in_b(lg->parent, r.node)) {
        *out = r;
        return DG_OK;
    }
    return to_backward(lg->parent, r, out);
}

/* A typed node of the backward frame around the loop (its inputs wired
 * there by the enclosing loop's gradient). */
static int32_t mk_outer(lgrad *lg, int32_t fwd, const char *suffix, int op,
                        dgc_ref in)
{
    struct dgc_lgrad *saved = lg->c->loop;
    lg->c->loop = (struct dgc_lgrad *)lg->parent;
    int32_t id = dgc_grad_node(lg->c, fwd, suffix, op, &in, 1);
    lg->c->loop = saved;
    return id;
}

/* Enter(v) into frame (backward when inb). */
static int32_t enter(lgrad *lg, int32_t fwd, const char *suffix, dgc_ref v,
                     int inb, int is_const)
{
    int32_t id = raw(lg, fwd, suffix, DGC_OPID_Enter, &v, 1);
    if (id < 0)
        return -1;
    dgc_node *n = &lg->g->nodes[id];
    if (dgc_node_set_str(n, "frame_name", inb ? lg->bframe : lg->fframe) ||
        dgc_node_set_int(n, "parallel_iterations", lg->parallel) ||
        (is_const && dgc_node_set_bool(n, "is_constant", 1)) ||
        (inb && set_inb(lg, id))) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    return typed(lg, id);
}

/* A scalar constant, in the frame of ctrl (outer when ctrl < 0). */
static int32_t konst(lgrad *lg, int32_t fwd, const char *suffix, double v,
                     dg_dtype t, int32_t ctrl)
{
    struct dgc_lgrad *saved = lg->c->loop;
    lg->c->loop = NULL;
    int32_t id = dgc_grad_const(lg->c, fwd, suffix, v, t);
    lg->c->loop = saved;
    if (id >= 0 && ctrl >= 0 && dgc_node_add_ctrl(lg->g, id, ctrl)) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    if (id >= 0 && in_b(lg, ctrl) && set_inb(lg, id)) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    return id;
}

/* Merge(init) -> Switch(merge, lc) -> Identity(body output): a loop
 * variable's head; the caller adds the NextIteration. */
static int var_head(lgrad *lg, int32_t fwd, const char *what, int32_t init,
                    int32_t lc, int body_port, int inb, int32_t *merge,
                    int32_t *sw, int32_t *body)
{
    char sfx[96];
    snprintf(sfx, sizeof sfx, "%s_merge", what);
    *merge = mk(lg, fwd, sfx, DGC_OPID_Merge, (dgc_ref[]){R(init, 0)}, 1,
                -1, inb);
    if (*merge < 0)
        return -1;
    snprintf(sfx, sizeof sfx, "%s_switch", what);
    *sw = mk(lg, fwd, sfx, DGC_OPID_Switch,
             (dgc_ref[]){R(*merge, 0), R(lc, 0)}, 2, -1, inb);
    if (*sw < 0)
        return -1;
    snprintf(sfx, sizeof sfx, "%s_body", what);
    *body = mk(lg, fwd, sfx, DGC_OPID_Identity,
               (dgc_ref[]){R(*sw, body_port)}, 1, -1, inb);
    return *body < 0 ? -1 : 0;
}

/* NextIteration(v) back into merge. */
static int var_next(lgrad *lg, int32_t fwd, const char *what, dgc_ref v,
                    int32_t merge, int inb)
{
    char sfx[96];
    snprintf(sfx, sizeof sfx, "%s_next", what);
    int32_t nx = mk(lg, fwd, sfx, DGC_OPID_NextIteration, &v, 1, -1, inb);
    if (nx < 0)
        return -1;
    if (dgc_node_add_input(lg->g, merge, R(nx, 0))) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    return 0;
}

/* The forward counter: a new variable of the forward loop counting its
 * iterations; returns its Exit. */
static int32_t forward_counter(lgrad *lg)
{
    int32_t f = lg->cond;
    int32_t zero = konst(lg, f, "count_init", 0, DG_I32,
                         lg->parent ? lg->parent->fpivot : -1);
    if (zero < 0)
        return -1;
    int32_t en = enter(lg, f, "count_enter", R(zero, 0), 0, 0);
    int32_t m, sw;
    if (en < 0 || var_head(lg, f, "count", en, lg->cond, 1 - lg->ep, 0, &m,
                           &sw, &lg->fpivot))
        return -1;
    int32_t one = konst(lg, f, "count_one", 1, DG_I32, lg->fpivot);
    if (one < 0)
        return -1;
    lg->fadd = mk(lg, f, "count_add", DGC_OPID_Add,
                  (dgc_ref[]){R(lg->fpivot, 0), R(one, 0)}, 2, -1, 0);
    if (lg->fadd < 0 || var_next(lg, f, "count", R(lg->fadd, 0), m, 0))
        return -1;
    return mk(lg, f, "count_exit", DGC_OPID_Exit, (dgc_ref[]){R(sw, lg->ep)},
              1, -1, 0);
}

/* The backward counter: from the forward count down to 0. */
static int backward_counter(lgrad *lg, int32_t fexit)
{
    int32_t f = lg->cond;
    dgc_ref cnt;
    if (outer_b(lg, R(fexit, 0), &cnt) != DG_OK)
        return -1;
    int32_t en = enter(lg, f, "grad_count_enter", cnt, 1, 0);
    if (en < 0)
        return -1;
    int32_t m = mk(lg, f, "grad_count_merge", DGC_OPID_Merge,
                   (dgc_ref[]){R(en, 0)}, 1, -1, 1);
    if (m < 0)
        return -1;
    int32_t zero = konst(lg, f, "grad_count_zero", 0, DG_I32, m);
    if (zero < 0)
        return -1;
    int32_t done = mk(lg, f, "grad_count_done", DGC_OPID_Equal,
                      (dgc_ref[]){R(m, 0), R(zero, 0)}, 2, -1, 1);
    if (done < 0)
        return -1;
    lg->blc = mk(lg, f, "grad_cond", DGC_OPID_LoopCond,
                 (dgc_ref[]){R(done, 0)}, 1, -1, 1);
    if (lg->blc < 0)
        return -1;
    int32_t sw = mk(lg, f, "grad_count_switch", DGC_OPID_Switch,
                    (dgc_ref[]){R(m, 0), R(lg->blc, 0)}, 2, -1, 1);
    if (sw < 0)
        return -1;
    lg->bpivot = mk(lg, f, "grad_count_body", DGC_OPID_Identity,
                    (dgc_ref[]){R(sw, 0)}, 1, -1, 1);
    if (lg->bpivot < 0)
        return -1;
    int32_t one = konst(lg, f, "grad_count_one", 1, DG_I32, lg->bpivot);
    if (one < 0)
        return -1;
    lg->bsub = mk(lg, f, "grad_count_sub", DGC_OPID_Sub,
                  (dgc_ref[]){R(lg->bpivot, 0), R(one, 0)}, 2, -1, 1);
    if (lg->bsub < 0)
        return -1;
    if (var_next(lg, f, "grad_count", R(lg->bsub, 0), m, 1))
        return -1;
    lg->bexit = mk(lg, f, "grad_count_exit", DGC_OPID_Exit,
                   (dgc_ref[]){R(sw, 1)}, 1, -1, 0);
    if (lg->bexit < 0 || (lg->parent && set_inb(lg->parent, lg->bexit))) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    return 0;
}

/* A stack handle (a root-frame value) entered into this loop's forward
 * (inb 0) or backward (inb 1) frame through the frames around it. */
static int32_t chain(lgrad *lg, int32_t fwd, int32_t st, int inb)
{
    int32_t r = lg->parent ? chain(lg->parent, fwd, st, inb) : st;
    if (r < 0)
        return -1;
    return enter(lg, fwd, inb ? "stack_grad_enter" : "stack_enter", R(r, 0),
                 inb, 1);
}

static int is_fwd_enter(const lgrad *lg, int32_t v)
{
    for (int i = 0; i < lg->lp->n_enters; i++)
        if (lg->lp->enters[i] == v)
            return 1;
    return 0;
}

/* A Switch of the body that is not a loop variable's: a tf.cond's. */
static int is_cond_switch(const lgrad *lg, int32_t v)
{
    return v < lg->l->n && lg->g->nodes[v].op == DGC_OPID_Switch &&
           lg->l->frame[v] == lg->lp->frame &&
           lg->g->nodes[v].inputs[1].node != lg->cond;
}

/* The guard of output `port` of cond Switch sw, added if new; -2 nomem. */
static int guard_at(lgrad *lg, int32_t sw, int port)
{
    for (int i = 0; i < lg->n_guard; i++)
        if (lg->gsw[i] == sw && lg->gport[i] == port)
            return i;
    int n = lg->n_guard, n1 = n, n2 = n;
    if (dgc_ids_push(&lg->gsw, &n, sw) ||
        dgc_ids_push(&lg->gport, &n1, port) ||
        dgc_ids_push(&lg->gparent, &n2, lg->guard[sw]))
        return -2;
    return lg->n_guard++;
}

/* The guard of a forward value: -1 none, -2 nomem. */
static int guard_of(lgrad *lg, dgc_ref r)
{
    if (r.node >= lg->l->n)
        return -1;
    if (is_cond_switch(lg, r.node))
        return guard_at(lg, r.node, r.index);
    return lg->guard[r.node];
}

static int guard_depth(const lgrad *lg, int gd)
{
    int d = 0;
    for (; gd >= 0; gd = lg->gparent[gd])
        d++;
    return d;
}

/* Guards of the body nodes (order: inputs first): a Merge of a tf.cond
 * is guarded by its Switch's guard, any other node by its innermost
 * input's (data or control). */
static dg_status find_guards(lgrad *lg, const int32_t *order, int n_order)
{
    const dgc_graph *g = lg->g;
    for (int oi = 0; oi < n_order; oi++) {
        int32_t x = order[oi];
        const dgc_node *d = &g->nodes[x];
        if (dgc_gloops_within(lg->l, x, lg->lp->frame) > 0)
            continue; /* a loop inside: its guard is its Enters' */
        int best = -1;
        int gin[2] = {-1, -1};
        for (int k = 0; k < d->n_inputs + d->n_ctrl; k++) {
            int gd = k < d->n_inputs ? guard_of(lg, d->inputs[k])
                                     : (d->ctrl[k - d->n_inputs] < lg->l->n
                                            ? lg->guard[d->ctrl[k - d->n_inputs]]
                                            : -1);
            if (gd == -2)
                return dg_err_nomem(lg->c->err, "loop gradient");
            if (k < 2)
                gin[k] = gd;
            if (guard_depth(lg, gd) > guard_depth(lg, best))
                best = gd;
        }
        if (d->op == DGC_OPID_Merge && d->n_inputs == 2) {
            /* the branches of one Switch meet: the guard around it */
            best = -3;
            for (int a = gin[0]; a >= 0 && best == -3; a = lg->gparent[a])
                for (int b = gin[1]; b >= 0; b = lg->gparent[b])
                    if (lg->gsw[a] == lg->gsw[b] && lg->gport[a] != lg->gport[b]) {
                        best = lg->gparent[a];
                        break;
                    }
            if (best == -3)
                return dg_err(lg->c->err, DG_E_GRAPH, "node '%s': gradients "
                              "through a Merge in a while loop body that "
                              "does not join the two outputs of one Switch",
                              d->name);
        }
        lg->guard[x] = best;
    }
    return DG_OK;
}

/* Stack handle h in the backward frame, dead in the backward iterations
 * whose forward iteration did not take guard gd: routed through Switches
 * on the popped predicates (TF's cond-in-while gradient). */
static int32_t guarded(lgrad *lg, int32_t h, int gd)
{
    if (gd < 0)
        return h;
    h = guarded(lg, h, lg->gparent[gd]);
    if (h < 0)
        return -1;
    dgc_ref pred;
    int32_t sw = lg->gsw[gd];
    if (to_backward(lg, lg->g->nodes[sw].inputs[1], &pred) != DG_OK)
        return -1;
    int32_t b = mk(lg, sw, "grad_guard", DGC_OPID_Switch,
                   (dgc_ref[]){R(h, 0), pred}, 2, -1, 1);
    if (b < 0)
        return -1;
    return mk(lg, sw, "grad_guard_out", DGC_OPID_Identity,
              (dgc_ref[]){R(b, lg->gport[gd])}, 1, -1, 1);
}

/* The forward value r (in the forward frame) for the backward iteration:
 * pushed in every forward iteration, popped in the backward one. */
static int32_t stacked(lgrad *lg, dgc_ref r)
{
    const dgc_ttype *t = &lg->g->nodes[r.node].outputs[r.index];
    if (t->shape.rank < 0) {
        dg_err(lg->c->err, DG_E_GRAPH, "node '%s': gradients through the "
               "while loop need its value of unknown rank (not supported)",
               lg->g->nodes[r.node].name);
        return -1;
    }
    int32_t ms = konst(lg, r.node, "stack_size", -1, DG_I32, -1);
    if (ms < 0)
        return -1;
    int32_t st = raw(lg, r.node, "stack", DGC_OPID_StackV2,
                     (dgc_ref[]){R(ms, 0)}, 1);
    if (st < 0)
        return -1;
    if (dgc_node_set_dtype(&lg->g->nodes[st], "elem_type", t->dtype)) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    if (typed(lg, st) < 0)
        return -1;
    int32_t ef = chain(lg, r.node, st, 0);
    if (ef < 0)
        return -1;
    int32_t push = mk(lg, r.node, "push", DGC_OPID_StackPushV2,
                      (dgc_ref[]){R(ef, 0), r}, 2, lg->fpivot, 0);
    int gd = guard_of(lg, r);
    if (gd == -2) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    int32_t eb = chain(lg, r.node, st, 1);
    if (push < 0 || eb < 0 || (eb = guarded(lg, eb, gd)) < 0)
        return -1;
    if (dgc_ids_push(&lg->push, &lg->n_push, push)) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    int32_t pop = raw(lg, r.node, "pop", DGC_OPID_StackPopV2,
                      (dgc_ref[]){R(eb, 0)}, 1);
    if (pop < 0)
        return -1;
    dgc_node *n = &lg->g->nodes[pop];
    if (dgc_node_set_dtype(n, "elem_type", t->dtype) ||
        dgc_node_set_shape(n, "output_shape", &t->shape) ||
        dgc_node_add_ctrl(lg->g, pop, lg->bpivot) || set_inb(lg, pop) ||
        dgc_ids_push(&lg->pop, &lg->n_pop, pop)) {
        dg_err_nomem(lg->c->err, "loop gradient");
        return -1;
    }
    return typed(lg, pop);
}

/* The backward frame's version of r (a forward-frame value, a
 * loop-invariant Enter or an outer value), made once. */
static dg_status to_backward(lgrad *lg, dgc_ref r, dgc_ref *out)
{
    for (int i = 0; i < lg->n_memo; i++)
        if (lg->mfrom[i].node == r.node && lg->mfrom[i].index == r.index) {
            *out = lg->mto[i];
            return DG_OK;
        }
    const dgc_graph *g = lg->g;
    int32_t id;
    dg_status st;
    dgc_ref o;
    if ((r.node < lg->l->n && lg->l->frame[r.node] == lg->lp->frame) ||
        has_flag(lg, r.node, 2)) {
        id = stacked(lg, r);
    } else if (is_fwd_enter(lg, r.node)) {
        if (!dgc_attr_bool(&g->nodes[r.node], "is_constant", 0))
            return dg_err(lg->c->err, DG_E_GRAPH, "node '%s': the gradient "
                          "reads a loop variable's Enter", g->nodes[r.node].name);
        if ((st = outer_b(lg, g->nodes[r.node].inputs[0], &o)) != DG_OK)
            return st;
        id = enter(lg, r.node, "grad_enter", o, 1, 1);
    } else {
        if ((st = outer_b(lg, r, &o)) != DG_OK)
            return st;
        id = enter(lg, r.node, "grad_enter", o, 1, 1);
    }
    if (id < 0)
        return lfail(lg);
    if (lg->n_memo == lg->cap_memo) {
        int32_t cap = lg->cap_memo;
        dgc_ref *a = dg_grow(lg->mfrom, &cap, lg->n_memo + 1, sizeof *a, 16);
        if (!a)
            return dg_err_nomem(lg->c->err, "loop gradient");
        lg->mfrom = a;
        cap = lg->cap_memo;
        dgc_ref *b = dg_grow(lg->mto, &cap, lg->n_memo + 1, sizeof *b, 16);
        if (!b)
            return dg_err_nomem(lg->c->err, "loop gradient");
        lg->mto = b;
        lg->cap_memo = cap;
    }
    lg->mfrom[lg->n_memo] = r;
    lg->mto[lg->n_memo++] = R(id, 0);
    *out = R(id, 0);
    return DG_OK;
}

dg_status dgc_grad_loop_wire(dgc_gctx *c, int32_t id)
{
    lgrad *lg = (lgrad *)c->loop;
    int any = 0;
    for (int k = 0; k < lg->g->nodes[id].n_inputs; k++) {
        dgc_ref r = lg->g->nodes[id].inputs[k];
        if (in_b(lg, r.node)) {
            any = 1;
            continue;
        }
        dgc_ref b;
        dg_status st = to_backward(lg, r, &b);
        if (st != DG_OK)
            return st;
        lg->g->nodes[id].inputs[k] = b;
        any = 1;
    }
    for (int k = 0; k < lg->g->nodes[id].n_ctrl; k++)
        if (!in_b(lg, lg->g->nodes[id].ctrl[k]))
            return dg_err(c->err, DG_E_GRAPH, "node '%s': a control input "
                          "from outside the backward loop",
                          lg->g->nodes[id].name);
    if ((!any && dgc_node_add_ctrl(lg->g, id, lg->bpivot)) ||
        set_inb(lg, id))
        return dg_err_nomem(c->err, "loop gradient");
    return DG_OK;
}

/* ---- the loop's structure ------------------------------------------------ */

static int is_float(const dgc_ttype *t)
{
    return t->dtype == DG_F32 || t->dtype == DG_F64;
}

/* Node p as the body sees it: a loop inside this one is one node (its
 * first Exit); -1 outside the loop's frame. */
static int32_t body_of(const lgrad *lg, int32_t p)
{
    int cl = dgc_gloops_within(lg->l, p, lg->lp->frame);
    if (cl > 0)
        return dgc_gloops_rep(lg->l, cl);
    return lg->l->frame[p] == lg->lp->frame ? p : -1;
}

/* Input k of body node x (a loop inside: its Enters' inputs) as the body
 * sees it; -2 past the last. */
static int32_t body_input(const lgrad *lg, int32_t x, int k)
{
    const dgc_graph *g = lg->g;
    int cl = dgc_gloops_within(lg->l, x, lg->lp->frame);
    if (cl > 0) {
        const int32_t *en;
        int n = dgc_gloops_enters(lg->l, cl, &en);
        return k < n ? body_of(lg, g->nodes[en[k]].inputs[0].node) : -2;
    }
    return k < g->nodes[x].n_inputs ? body_of(lg, g->nodes[x].inputs[k].node)
                                    : -2;
}

/* The loop's variables, LoopCond and body (forward nodes between the
 * Switches and the NextIterations, in an order with inputs first). */
static dg_status structure(lgrad *lg, lvar **vars, int *n_vars,
                           int32_t **body, int *n_body)
{
    const dgc_graph *g = lg->g;
    const dgc_gloops *l = lg->l;
    const dgc_gloop *lp = lg->lp;
    const char *fname = l->fname[lp->frame];
    int32_t n = l->n;
    lvar *v = NULL;
    int nv = 0;
    lg->cond = -1;
    lg->ep = -1;
    for (int32_t i = 0; i < n; i++) {
        if (l->frame[i] != lp->frame)
            continue;
        int op = g->nodes[i].op;
        if (op == DGC_OPID_LoopCond) {
            if (lg->cond >= 0)
                return dg_err(lg->c->err, DG_E_GRAPH, "while loop '%s': two "
                              "LoopConds ('%s', '%s')", fname,
                              g->nodes[lg->cond].name, g->nodes[i].name);
            lg->cond = i;
        }
        if (op != DGC_OPID_Merge)
            continue;
        lvar x = {-1, i, -1, -1, -1, 0, -1, -1, -1};
        for (int k = 0; k < g->nodes[i].n_inputs; k++) {
            int32_t p = g->nodes[i].inputs[k].node;
            if (g->nodes[p].op == DGC_OPID_Enter && is_fwd_enter(lg, p))
                x.enter = p;
            else if (g->nodes[p].op == DGC_OPID_NextIteration)
                x.next = p;
        }
        if (x.enter < 0 && x.next < 0)
            continue; /* a tf.cond's Merge in the body */
        if (x.enter < 0 || x.next < 0 || g->nodes[i].n_inputs != 2) {
            dg_free(v);
            return dg_err(lg->c->err, DG_E_GRAPH, "node '%s': a loop "
                          "variable's Merge needs an Enter and a "
                          "NextIteration", g->nodes[i].name);
        }
        lvar *nvv = dg_realloc(v, sizeof *nvv * (size_t)(nv + 1));
        if (!nvv) {
            dg_free(v);
            return dg_err_nomem(lg->c->err, "loop gradient");
        }
        v = nvv;
        v[nv++] = x;
    }
    *vars = v;
    *n_vars = nv;
    if (lg->cond < 0)
        return dg_err(lg->c->err, DG_E_GRAPH, "while loop '%s': no LoopCond",
                      fname);
    for (int32_t i = 0; i < n; i++) {
        if (l->frame[i] != lp->frame)
            continue;
        const dgc_node *d = &g->nodes[i];
        if (d->op == DGC_OPID_Switch && d->inputs[1].node == lg->cond) {
            int j = 0;
            while (j < nv && v[j].merge != d->inputs[0].node)
                j++;
            if (j == nv)
                return dg_err(lg->c->err, DG_E_GRAPH, "node '%s': a Switch "
                              "on the loop's LoopCond that is not a loop "
                              "variable's", d->name);
            v[j].sw = i;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        const dgc_node *d = &g->nodes[i];
        if (d->op != DGC_OPID_Exit || l->frame[i] != lp->frame)
            continue;
        for (int j = 0; j < nv; j++)
            if (v[j].sw == d->inputs[0].node) {
                v[j].exit = i;
                lg->ep = d->inputs[0].index;
            }
    }
    for (int j = 0; j < nv; j++)
        if (v[j].sw < 0)
            return dg_err(lg->c->err, DG_E_GRAPH, "node '%s': a loop "
                          "variable without a Switch", g->nodes[v[j].merge].name);
    if (lg->ep < 0)
        return dg_err(lg->c->err, DG_E_GRAPH, "while loop '%s': no Exit "
                      "after a Switch", fname);
    for (int i = 0; i < lp->n_enters; i++) {
        const dgc_node *e = &g->nodes[lp->enters[i]];
        int var = 0;
        for (int j = 0; j < nv; j++)
            var |= v[j].enter == lp->enters[i];
        if (!var && !dgc_attr_bool(e, "is_constant", 0))
            return dg_err(lg->c->err, DG_E_GRAPH, "node '%s': an Enter that "
                          "is neither a loop variable nor is_constant",
                          e->name);
    }
    snprintf(lg->fframe, sizeof lg->fframe, "%s", fname);
    lg->parallel = dgc_attr_int(&g->nodes[lp->enters[0]],
                                "parallel_iterations", 10);

    /* the body: post-order from the NextIteration inputs */
    int32_t *order = dg_malloc(sizeof *order * (size_t)(n + 1));
    int32_t *stk = dg_malloc(sizeof *stk * (size_t)(n + 1) * 2);
    uint8_t *seen = dg_calloc((size_t)n + 1, 1);
    if (!order || !stk || !seen) {
        dg_free(order);
        dg_free(stk);
        dg_free(seen);
        return dg_err_nomem(lg->c->err, "loop gradient");
    }
    int no = 0;
    for (int j = 0; j < nv; j++) {
        seen[v[j].merge] = seen[v[j].sw] = seen[v[j].next] = 1;
        if (v[j].exit >= 0)
            seen[v[j].exit] = 1;
    }
    seen[lg->cond] = 1;
    for (int j = 0; j < nv; j++) {
        int32_t b = body_of(lg, g->nodes[v[j].next].inputs[0].node);
        if (b < 0 || seen[b])
            continue;
        int sp = 0;
        seen[b] = 1;
        stk[sp++] = b;
        stk[sp++] = 0;
        while (sp > 0) {
            int32_t x = stk[sp - 2], k = stk[sp - 1];
            int32_t p = body_input(lg, x, k);
            if (p != -2) {
                stk[sp - 1] = k + 1;
                if (p >= 0 && !seen[p]) {
                    seen[p] = 1;
                    stk[sp++] = p;
                    stk[sp++] = 0;
                }
            } else {
                order[no++] = x;
                sp -= 2;
            }
        }
    }
    dg_free(stk);
    dg_free(seen);
    *body = order;
    *n_body = no;
    lg->guard = dg_malloc(sizeof *lg->guard * (size_t)(n + 1));
    if (!lg->guard)
        return dg_err_nomem(lg->c->err, "loop gradient");
    for (int32_t i = 0; i < n; i++)
        lg->guard[i] = -1;
    return find_guards(lg, order, no);
}

/* ---- the loop's gradient ------------------------------------------------- */

/* Node `step` waits for every node of on[] through a ControlTrigger,
 * which fires when they ran or were dead (pushes and pops in an untaken
 * branch of a tf.cond). */
static dg_status wait_all(lgrad *lg, int32_t step, const int32_t *on, int n,
                          const char *what)
{
    if (n == 0)
        return DG_OK;
    int32_t t = raw(lg, lg->cond, what, DGC_OPID_ControlTrigger, NULL, 0);
    if (t < 0)
        return lfail(lg);
    for (int i = 0; i < n; i++)
        if (dgc_node_add_ctrl(lg->g, t, on[i]))
            return dg_err_nomem(lg->c->err, "loop gradient");
    if (typed(lg, t) < 0)
        return lfail(lg);
    if (dgc_node_add_ctrl(lg->g, step, t))
        return dg_err_nomem(lg->c->err, "loop gradient");
    return DG_OK;
}

static dg_status build(lgrad *lg, lvar *v, int nv, const int32_t *body,
                       int n_body)
{
    dgc_gsweep *s = lg->s;
    const dgc_gloop *lp = lg->lp;
    const dgc_graph *g = lg->g;
    int32_t fexit = forward_counter(lg);
    if (fexit >= 0 && lg->parent && set_flag(lg->parent, fexit, 2))
        return dg_err_nomem(lg->c->err, "loop gradient");
    if (fexit < 0 || backward_counter(lg, fexit))
        return lfail(lg);
    /* backward variables: the Exits' gradients */
    for (int j = 0; j < nv; j++) {
        const dgc_ttype *t = &g->nodes[v[j].sw].outputs[0];
        if (!is_float(t) || !dgc_gsweep_on(s, v[j].sw))
            continue;
        dgc_ref d = {-1, 0};
        dg_status st;
        if (v[j].exit >= 0 &&
            (st = dgc_gsweep_sum(s, R(v[j].exit, 0), &d)) != DG_OK)
            return st;
        if (d.node < 0) {
            int32_t like = v[j].exit >= 0 ? v[j].exit
                                          : g->nodes[v[j].enter].inputs[0].node;
            d.node = mk_outer(lg, v[j].merge, "grad_zeros",
                              DGC_OPID_ZerosLike, R(like, 0));
            if (d.node < 0)
                return lfail(lg);
        }
        int32_t en = enter(lg, v[j].merge, "grad_enter", d, 1, 0);
        if (en < 0 || var_head(lg, v[j].merge, "grad", en, lg->blc, 0, 1,
                               &v[j].bmerge, &v[j].bsw, &v[j].bbody))
            return lfail(lg);
        v[j].carried = 1;
        st = dgc_gsweep_add(s, g->nodes[v[j].next].inputs[0],
                            R(v[j].bbody, 0));
        if (st != DG_OK)
            return st;
    }
    /* accumulators of the loop-invariant inputs */
    int32_t *acc = dg_malloc(sizeof *acc * (size_t)lp->n_enters * 3 + 1);
    if (!acc)
        return dg_err_nomem(lg->c->err, "loop gradient");
    for (int i = 0; i < lp->n_enters; i++) {
        int32_t e = lp->enters[i];
        acc[3 * i] = -1;
        if (!dgc_attr_bool(&g->nodes[e], "is_constant", 0) ||
            !is_float(&g->nodes[e].outputs[0]) || !dgc_gsweep_on(s, e))
            continue;
        int32_t z = mk_outer(lg, e, "grad_acc_init", DGC_OPID_ZerosLike,
                             g->nodes[e].inputs[0]);
        int32_t en = z < 0 ? -1 : enter(lg, e, "grad_acc_enter", R(z, 0), 1,
                                        0);
        if (en < 0 || var_head(lg, e, "grad_acc", en, lg->blc, 0, 1,
                               &acc[3 * i], &acc[3 * i + 1], &acc[3 * i + 2])) {
            dg_free(acc);
            return lfail(lg);
        }
    }
    /* one backward iteration: the rules over the body, consumers first */
    dg_status st = DG_OK;
    struct dgc_lgrad *outer = lg->c->loop;
    lg->c->loop = (struct dgc_lgrad *)lg;
    lg->c->wire = dgc_grad_loop_wire;
    for (int k = n_body - 1; k >= 0 && st == DG_OK; k--) {
        int cl = dgc_gloops_within(lg->l, body[k], lp->frame);
        if (cl < 0)
            st = dgc_gsweep_node(s, body[k]);
        else if (dgc_gsweep_on(s, body[k]))
            st = grad_loop(s, lg->l, cl, lg);
    }
    for (int j = 0; j < nv && st == DG_OK; j++) {
        if (!v[j].carried)
            continue;
        dgc_ref d;
        if ((st = dgc_gsweep_sum(s, R(v[j].sw, 1 - lg->ep), &d)) != DG_OK)
            break;
        if (d.node < 0) {
            d.node = mk(lg, v[j].merge, "grad_none", DGC_OPID_ZerosLike,
                        (dgc_ref[]){R(v[j].bbody, 0)}, 1, -1, 1);
            if (d.node < 0) {
                st = lfail(lg);
                break;
            }
        }
        if (var_next(lg, v[j].merge, "grad", d, v[j].bmerge, 1))
            st = lfail(lg);
    }
    for (int i = 0; i < lp->n_enters && st == DG_OK; i++) {
        if (acc[3 * i] < 0)
            continue;
        int32_t e = lp->enters[i];
        dgc_ref d, sum = R(acc[3 * i + 2], 0);
        if ((st = dgc_gsweep_sum(s, R(e, 0), &d)) != DG_OK)
            break;
        if (d.node >= 0) {
            sum.node = mk(lg, e, "grad_acc_add", DGC_OPID_Add,
                          (dgc_ref[]){sum, d}, 2, -1, 1);
            if (sum.node < 0) {
                st = lfail(lg);
                break;
            }
        }
        if (var_next(lg, e, "grad_acc", sum, acc[3 * i], 1))
            st = lfail(lg);
    }
    lg->c->loop = outer;
    /* the Exits: gradients of the initial values and invariant inputs */
    for (int j = 0; j < nv && st == DG_OK; j++) {
        if (!v[j].carried)
            continue;
        int32_t x = mk(lg, v[j].merge, "grad_exit", DGC_OPID_Exit,
                       (dgc_ref[]){R(v[j].bsw, 1)}, 1, -1, 0);
        if (x >= 0 && lg->parent && set_inb(lg->parent, x))
            x = -1;
        st = x < 0 ? lfail(lg)
                   : dgc_gsweep_add(s, g->nodes[v[j].enter].inputs[0],
                                    R(x, 0));
    }
    for (int i = 0; i < lp->n_enters && st == DG_OK; i++) {
        if (acc[3 * i] < 0)
            continue;
        int32_t e = lp->enters[i];
        int32_t x = mk(lg, e, "grad_acc_exit", DGC_OPID_Exit,
                       (dgc_ref[]){R(acc[3 * i + 1], 1)}, 1, -1, 0);
        if (x >= 0 && lg->parent && set_inb(lg->parent, x))
            x = -1;
        st = x < 0 ? lfail(lg)
                   : dgc_gsweep_add(s, g->nodes[e].inputs[0], R(x, 0));
    }
    dg_free(acc);
    /* order the stacks: pushes before the forward increment, pops before
     * the backward decrement */
    if (st == DG_OK)
        st = wait_all(lg, lg->fadd, lg->push, lg->n_push, "pushed");
    if (st == DG_OK)
        st = wait_all(lg, lg->bsub, lg->pop, lg->n_pop, "popped");
    /* a loop inside another: the enclosing counters wait for it */
    if (st == DG_OK && lg->parent &&
        (dgc_ids_push(&lg->parent->push, &lg->parent->n_push, fexit) ||
         dgc_ids_push(&lg->parent->pop, &lg->parent->n_pop, lg->bexit)))
        st = dg_err_nomem(lg->c->err, "loop gradient");
    return st;
}

static dg_status grad_loop(dgc_gsweep *s, const dgc_gloops *l, int L,
                           lgrad *parent)
{
    dgc_gctx *c = dgc_gsweep_ctx(s);
    const dgc_gloop *lp = &l->loops[L];
    struct dgc_lgrad *saved = c->loop;
    lgrad lg;
    memset(&lg, 0, sizeof lg);
    lg.parent = parent;
    lg.s = s;
    lg.c = c;
    lg.g = c->g;
    lg.l = l;
    lg.lp = lp;
    lg.base = c->g->n_nodes;
    lvar *vars = NULL;
    int32_t *body = NULL;
    int nv = 0, nb = 0;
    dg_status st = structure(&lg, &vars, &nv, &body, &nb);
    if (st == DG_OK) {
        snprintf(lg.bframe, sizeof lg.bframe, "%s/%s/grad", c->set,
                 lg.fframe);
        st = build(&lg, vars, nv, body, nb);
    }
    c->loop = saved;
    dg_free(vars);
    dg_free(body);
    dg_free(lg.inb);
    dg_free(lg.mfrom);
    dg_free(lg.mto);
    dg_free(lg.push);
    dg_free(lg.pop);
    dg_free(lg.guard);
    dg_free(lg.gsw);
    dg_free(lg.gport);
    dg_free(lg.gparent);
    return st;
}

dg_status dgc_grad_loop(dgc_gsweep *s, const dgc_gloops *l, int L)
{
    return grad_loop(s, l, L, NULL);
}
