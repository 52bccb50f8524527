/*
 * load_cflow.c -- TF 2's functional While and its TensorLists made TF-1
 * control flow (issue 24; load_fn_priv.h, docs/savedmodel.md): what TF's
 * LowerFunctionalOpsPass does for While and If, on the NodeDefs of the inlining
 * (load_function.c), and TensorList ops as the TensorArray ops dgrun runs
 * (a list value is an array's flow; its handle is found by walking the
 * list back to the op that made it and enters each frame on the way).
 */
#include "load_fn_priv.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DT_FLOAT = 1, DT_INT32 = 3, DT_BOOL = 10, DT_RESOURCE = 20,
       DT_VARIANT = 21 };

/* ---- NodeDefs and attrs in the arena ------------------------------------ */

static const Dgtf__AttrValue *attr(const Dgtf__NodeDef *n, const char *key)
{
    for (size_t k = 0; k < n->n_attr; k++)
        if (strcmp(n->attr[k]->key, key) == 0)
            return n->attr[k]->value;
    return NULL;
}

static Dgtf__AttrValue *av(fnctx *c, int kind)
{
    Dgtf__AttrValue *v = dgc_fn_alloc(c, sizeof *v);
    if (v) {
        dgtf__attr_value__init(v);
        v->value_case = kind;
    }
    return v;
}

static Dgtf__AttrValue *av_type(fnctx *c, int t)
{
    Dgtf__AttrValue *v = av(c, DGTF__ATTR_VALUE__VALUE_TYPE);
    if (v)
        v->type = t;
    return v;
}

static Dgtf__AttrValue *av_bool(fnctx *c, int b)
{
    Dgtf__AttrValue *v = av(c, DGTF__ATTR_VALUE__VALUE_B);
    if (v)
        v->b = b;
    return v;
}

static Dgtf__AttrValue *av_int(fnctx *c, int64_t i)
{
    Dgtf__AttrValue *v = av(c, DGTF__ATTR_VALUE__VALUE_I);
    if (v)
        v->i = i;
    return v;
}

static Dgtf__AttrValue *av_str(fnctx *c, const char *s)
{
    Dgtf__AttrValue *v = av(c, DGTF__ATTR_VALUE__VALUE_S);
    if (v) {
        v->s.data = (uint8_t *)s;
        v->s.len = strlen(s);
    }
    return v;
}

/* A shape attr from an int32 Const's values (-1: unknown), or NULL. */
static Dgtf__AttrValue *av_shape_of(fnctx *c, const Dgtf__TensorProto *t)
{
    size_t n = 0;
    const int32_t *iv = NULL;
    if (!t || (int)t->dtype != DT_INT32)
        return NULL;
    if (t->n_int_val) {
        n = t->n_int_val;
        iv = t->int_val;
    } else if (t->tensor_content.len % 4 == 0) {
        n = t->tensor_content.len / 4;
        iv = (const int32_t *)(const void *)t->tensor_content.data;
    }
    int scalar = !t->tensor_shape || t->tensor_shape->n_dim == 0;
    if (scalar) /* -1: unknown rank */
        return NULL;
    Dgtf__AttrValue *v = av(c, DGTF__ATTR_VALUE__VALUE_SHAPE);
    Dgtf__TensorShapeProto *sh = dgc_fn_alloc(c, sizeof *sh);
    Dgtf__TensorShapeProto__Dim **dp = dgc_fn_alloc(c, sizeof *dp * (n + 1));
    if (!v || !sh || !dp)
        return NULL;
    dgtf__tensor_shape_proto__init(sh);
    for (size_t i = 0; i < n; i++) {
        Dgtf__TensorShapeProto__Dim *d = dgc_fn_alloc(c, sizeof *d);
        if (!d)
            return NULL;
        dgtf__tensor_shape_proto__dim__init(d);
        int32_t x;
        memcpy(&x, &iv[i], sizeof x);
        d->size = x;
        dp[i] = d;
    }
    sh->dim = dp;
    sh->n_dim = n;
    v->shape = sh;
    return v;
}

/* A new node (not yet emitted): inputs copied from the NULL-terminated
 * list. */
static Dgtf__NodeDef *node(fnctx *c, const char *name, const char *op,
                           const char *device, const char *const *in)
{
    size_t n = 0;
    while (in && in[n])
        n++;
    Dgtf__NodeDef *d = dgc_fn_alloc(c, sizeof *d);
    char **v = dgc_fn_alloc(c, sizeof *v * (n + 1));
    if (!d || !v)
        return NULL;
    dgtf__node_def__init(d);
    for (size_t k = 0; k < n; k++)
        v[k] = (char *)in[k];
    d->name = (char *)name;
    d->op = (char *)op;
    d->device = (char *)(device ? device : "");
    d->input = v;
    d->n_input = n;
    return d;
}

/* Set attr key of n (replaced when there, else added); 0, -1 nomem. */
static int set_attr(fnctx *c, Dgtf__NodeDef *n, const char *key,
                    Dgtf__AttrValue *v)
{
    if (!v)
        return -1;
    for (size_t k = 0; k < n->n_attr; k++)
        if (strcmp(n->attr[k]->key, key) == 0) {
            Dgtf__NodeDef__AttrEntry *e = dgc_fn_alloc(c, sizeof *e);
            if (!e)
                return -1;
            *e = *n->attr[k];
            e->value = v;
            Dgtf__NodeDef__AttrEntry **at = dgc_fn_alloc(c, sizeof *at *
                                                         (n->n_attr + 1));
            if (!at)
                return -1;
            memcpy(at, n->attr, sizeof *at * n->n_attr);
            at[k] = e;
            n->attr = at;
            return 0;
        }
    Dgtf__NodeDef__AttrEntry **at = dgc_fn_alloc(c, sizeof *at *
                                                 (n->n_attr + 2));
    Dgtf__NodeDef__AttrEntry *e = dgc_fn_alloc(c, sizeof *e);
    if (!at || !e)
        return -1;
    dgtf__node_def__attr_entry__init(e);
    e->key = (char *)key;
    e->value = v;
    if (n->n_attr)
        memcpy(at, n->attr, sizeof *at * n->n_attr);
    at[n->n_attr++] = e;
    n->attr = at;
    return 0;
}

/* Emit an int32 Const (a scalar, or a vector of one value) waiting for
 * ctrl ("^x", or NULL): in the frame of x. */
static dg_status const_i32(fnctx *c, const char *name, int32_t val,
                           int vector, const char *ctrl, const char *device)
{
    const char *in[] = {ctrl, NULL};
    Dgtf__NodeDef *n = node(c, name, "Const", device, in);
    Dgtf__AttrValue *v = av(c, DGTF__ATTR_VALUE__VALUE_TENSOR);
    Dgtf__TensorProto *t = dgc_fn_alloc(c, sizeof *t);
    Dgtf__TensorShapeProto *sh = dgc_fn_alloc(c, sizeof *sh);
    Dgtf__TensorShapeProto__Dim *d = dgc_fn_alloc(c, sizeof *d);
    Dgtf__TensorShapeProto__Dim **dp = dgc_fn_alloc(c, sizeof *dp);
    int32_t *iv = dgc_fn_alloc(c, sizeof *iv);
    if (!n || !v || !t || !sh || !d || !dp || !iv)
        return dgc_fn_nomem(c);
    dgtf__tensor_proto__init(t);
    dgtf__tensor_shape_proto__init(sh);
    dgtf__tensor_shape_proto__dim__init(d);
    d->size = 1;
    dp[0] = d;
    sh->dim = dp;
    sh->n_dim = vector ? 1 : 0;
    *iv = val;
    t->dtype = DGTF__DATA_TYPE__DT_INT32;
    t->tensor_shape = sh;
    t->int_val = iv;
    t->n_int_val = 1;
    v->tensor = t;
    if (set_attr(c, n, "dtype", av_type(c, DT_INT32)) ||
        set_attr(c, n, "value", v))
        return dgc_fn_nomem(c);
    return dgc_fn_emit(c, n);
}

/* ---- While -------------------------------------------------------------- */

/* Whether fn returns its input arg i unchanged as output i. */
static int invariant(const Dgtf__FunctionDef *fn, size_t i)
{
    const Dgtf__OpDef *sig = fn->signature;
    if (!sig || i >= sig->n_input_arg || i >= sig->n_output_arg)
        return 0;
    const char *out = sig->output_arg[i]->name;
    for (size_t r = 0; r < fn->n_ret; r++)
        if (strcmp(fn->ret[r]->key, out) == 0)
            return strcmp(fn->ret[r]->value, sig->input_arg[i]->name) == 0;
    return 0;
}

dg_status dgc_fn_lower_while(fnctx *c, const Dgtf__NodeDef *b,
                             const char *name, char **in, size_t n_in,
                             const char *device, int depth)
{
    int oom1 = 0, oom2 = 0;
    const char *cond = dgc_fn_func_attr(c, b, "cond", &oom1);
    const char *body = dgc_fn_func_attr(c, b, "body", &oom2);
    if (oom1 || oom2)
        return dgc_fn_nomem(c);
    const Dgtf__AttrValue *tv = attr(b, "T");
    const Dgtf__AttrValue *pv = attr(b, "parallel_iterations");
    const Dgtf__FunctionDef *bf = body ? dgc_fn_find(c, body) : NULL;
    if (!cond || !body || !tv || tv->value_case != DGTF__ATTR_VALUE__VALUE_LIST ||
        !tv->list || !bf || !dgc_fn_find(c, cond))
        return dg_err(c->err, DG_E_GRAPH, "node '%s': a %s without its cond, "
                      "body or T (or a function the library does not have)",
                      b->name, b->op);
    size_t nv = tv->list->n_type, nd = 0, nc = 0;
    for (size_t k = 0; k < n_in; k++)
        nd += in[k][0] != '^';
    if (nd != nv)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': %zu inputs for %zu loop "
                      "variables", b->name, nd, nv);
    int64_t par = pv && pv->value_case == DGTF__ATTR_VALUE__VALUE_I ? pv->i : 10;
    const char **ctrl = dgc_fn_alloc(c, sizeof *ctrl * (n_in + 2));
    char **cargs = dgc_fn_alloc(c, sizeof *cargs * (nv + 1));
    char **bargs = dgc_fn_alloc(c, sizeof *bargs * (nv + 1));
    char **exits = dgc_fn_alloc(c, sizeof *exits * (nv + 2));
    char *lc = dgc_fn_printf(c, "%s/LoopCond", name);
    char *cname = dgc_fn_printf(c, "%s/cond", name);
    char *bname = dgc_fn_printf(c, "%s/body", name);
    char *ccond = dgc_fn_printf(c, "%s/cond:0", name);
    if (!ctrl || !cargs || !bargs || !exits || !lc || !cname || !bname || !ccond)
        return dgc_fn_nomem(c);
    /* Enters (the While's control inputs before them) and Merges */
    const char *pivot = NULL; /* a Merge: the cond's frame control */
    for (size_t k = 0; k < n_in; k++)
        if (in[k][0] == '^')
            ctrl[nc++] = in[k];
    dg_status st = DG_OK;
    size_t di = 0;
    for (size_t k = 0; k < n_in && !st; k++) {
        if (in[k][0] == '^')
            continue;
        size_t i = di++;
        int t = (int)tv->list->type[i];
        int inv = invariant(bf, i);
        char *en = dgc_fn_printf(c, "%s/Enter_%zu", name, i);
        char *mn = dgc_fn_printf(c, "%s/Merge_%zu", name, i);
        char *nn = dgc_fn_printf(c, "%s/NextIteration_%zu", name, i);
        if (!en || !mn || !nn)
            return dgc_fn_nomem(c);
        const char **ein = dgc_fn_alloc(c, sizeof *ein * (nc + 2));
        if (!ein)
            return dgc_fn_nomem(c);
        ein[0] = in[k];
        memcpy(ein + 1, ctrl, sizeof *ein * nc);
        Dgtf__NodeDef *e = node(c, en, "Enter", device, ein);
        int ft = t == DT_VARIANT ? DT_FLOAT : t; /* a list: its flow */
        if (!e || set_attr(c, e, "frame_name", av_str(c, name)) ||
            set_attr(c, e, "is_constant", av_bool(c, inv)) ||
            set_attr(c, e, "parallel_iterations", av_int(c, par)) ||
            (t != DT_RESOURCE && set_attr(c, e, "T", av_type(c, ft))))
            return dgc_fn_nomem(c);
        if ((st = dgc_fn_emit(c, e)))
            break;
        if (inv) {
            cargs[i] = bargs[i] = en;
            /* the While's output: its input, unchanged */
            char *key = dgc_fn_printf(c, "%s:%zu", name, i);
            if (!key)
                return dgc_fn_nomem(c);
            st = dgc_fn_alias(c, key, in[k]);
            if (!st && i == 0)
                st = dgc_fn_alias(c, name, in[k]);
            continue;
        }
        const char *min[] = {en, nn, NULL};
        Dgtf__NodeDef *m = node(c, mn, "Merge", device, min);
        if (!m || set_attr(c, m, "N", av_int(c, 2)) ||
            (t != DT_RESOURCE && set_attr(c, m, "T", av_type(c, ft))))
            return dgc_fn_nomem(c);
        st = dgc_fn_emit(c, m);
        cargs[i] = mn;
        if (!pivot && !(pivot = dgc_fn_printf(c, "^%s", mn)))
            return dgc_fn_nomem(c);
    }
    if (st)
        return st;
    if (!pivot)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': a %s whose body "
                      "changes none of its variables (it would never end)",
                      b->name, b->op);
    /* the cond on the Merges, LoopCond, Switches, Exits */
    if ((st = dgc_fn_inline_body(c, b, cond, cname, cargs, nv, device, depth,
                                 pivot)))
        return st;
    const char *lin[] = {ccond, NULL};
    Dgtf__NodeDef *l = node(c, lc, "LoopCond", device, lin);
    if (!l)
        return dgc_fn_nomem(c);
    if ((st = dgc_fn_emit(c, l)))
        return st;
    const char *bpivot = NULL;
    size_t ne = 0;
    for (size_t i = 0; i < nv && !st; i++) {
        if (bargs[i])
            continue; /* invariant */
        int t = (int)tv->list->type[i];
        int ft = t == DT_VARIANT ? DT_FLOAT : t;
        char *sn = dgc_fn_printf(c, "%s/Switch_%zu", name, i);
        char *xn = dgc_fn_printf(c, "%s/Exit_%zu", name, i);
        char *in_ = dgc_fn_printf(c, "%s/Identity_%zu", name, i);
        char *s0 = dgc_fn_printf(c, "%s/Switch_%zu:0", name, i);
        char *s1 = dgc_fn_printf(c, "%s/Switch_%zu:1", name, i);
        char *key = dgc_fn_printf(c, "%s:%zu", name, i);
        if (!sn || !xn || !in_ || !s0 || !s1 || !key)
            return dgc_fn_nomem(c);
        const char *sin[] = {cargs[i], lc, NULL}, *xin[] = {s0, NULL},
                   *iin[] = {s1, NULL};
        Dgtf__NodeDef *sw = node(c, sn, "Switch", device, sin);
        Dgtf__NodeDef *x = node(c, xn, "Exit", device, xin);
        Dgtf__NodeDef *id = node(c, in_, "Identity", device, iin);
        if (!sw || !x || !id ||
            (t != DT_RESOURCE && (set_attr(c, sw, "T", av_type(c, ft)) ||
                                  set_attr(c, x, "T", av_type(c, ft)) ||
                                  set_attr(c, id, "T", av_type(c, ft)))))
            return dgc_fn_nomem(c);
        if ((st = dgc_fn_emit(c, sw)) || (st = dgc_fn_emit(c, x)) ||
            (st = dgc_fn_emit(c, id)))
            return st;
        bargs[i] = in_;
        exits[ne++] = dgc_fn_printf(c, "^%s", xn);
        if (!bpivot && !(bpivot = dgc_fn_printf(c, "^%s", in_)))
            return dgc_fn_nomem(c);
        st = dgc_fn_alias(c, key, xn);
        if (!st && i == 0)
            st = dgc_fn_alias(c, name, xn);
    }
    /* the body on the Switches' true side, NextIterations to the Merges */
    if (!st)
        st = dgc_fn_inline_body(c, b, body, bname, bargs, nv, device, depth,
                                bpivot);
    for (size_t i = 0; i < nv && !st; i++) {
        if (invariant(bf, i))
            continue;
        int t = (int)tv->list->type[i];
        char *nn = dgc_fn_printf(c, "%s/NextIteration_%zu", name, i);
        char *bo = dgc_fn_printf(c, "%s/body:%zu", name, i);
        const char *nin[] = {bo, NULL};
        Dgtf__NodeDef *n = nn && bo ? node(c, nn, "NextIteration", device, nin)
                                    : NULL;
        if (!n || (t != DT_RESOURCE &&
                   set_attr(c, n, "T", av_type(c, t == DT_VARIANT ? DT_FLOAT : t))))
            return dgc_fn_nomem(c);
        st = dgc_fn_emit(c, n);
    }
    /* "^while": after every Exit */
    char *oc = dgc_fn_printf(c, "%s/output_control_node", name);
    char *ockey = dgc_fn_printf(c, "^%s", name);
    char *ocval = oc ? dgc_fn_printf(c, "^%s", oc) : NULL;
    exits[ne] = NULL;
    if (!st && (!oc || !ockey || !ocval))
        return dgc_fn_nomem(c);
    if (!st) {
        Dgtf__NodeDef *n = node(c, oc, "NoOp", device, (const char **)exits);
        st = n ? dgc_fn_emit(c, n) : dgc_fn_nomem(c);
    }
    return st ? st : dgc_fn_alias(c, ockey, ocval);
}

/* ---- If ----------------------------------------------------------------- */

/* An Identity of `in` named name, T t (resources: no T). */
static dg_status ident(fnctx *c, const char *name, const char *in, int t,
                       const char *device)
{
    const char *v[] = {in, NULL};
    Dgtf__NodeDef *n = node(c, name, "Identity", device, v);
    if (!n || (t != DT_RESOURCE && set_attr(c, n, "T", av_type(c, t))))
        return dgc_fn_nomem(c);
    return dgc_fn_emit(c, n);
}

dg_status dgc_fn_lower_if(fnctx *c, const Dgtf__NodeDef *b, const char *name,
                          char **in, size_t n_in, const char *device,
                          int depth)
{
    int oom1 = 0, oom2 = 0;
    const char *thn = dgc_fn_func_attr(c, b, "then_branch", &oom1);
    const char *els = dgc_fn_func_attr(c, b, "else_branch", &oom2);
    if (oom1 || oom2)
        return dgc_fn_nomem(c);
    const Dgtf__AttrValue *tin = attr(b, "Tin"), *tout = attr(b, "Tout");
    size_t nd = 0, nc = 0;
    for (size_t k = 0; k < n_in; k++)
        nd += in[k][0] != '^';
    if (!thn || !els || !dgc_fn_find(c, thn) || !dgc_fn_find(c, els) ||
        !tin || tin->value_case != DGTF__ATTR_VALUE__VALUE_LIST || !tin->list ||
        !tout || tout->value_case != DGTF__ATTR_VALUE__VALUE_LIST ||
        !tout->list || nd != tin->list->n_type + 1)
        return dg_err(c->err, DG_E_GRAPH, "node '%s': a %s without its "
                      "branches, Tin or Tout, or with inputs that do not "
                      "match them", b->name, b->op);
    size_t na = tin->list->n_type, no = tout->list->n_type;
    const char **ctrl = dgc_fn_alloc(c, sizeof *ctrl * (n_in + 1));
    char **ta = dgc_fn_alloc(c, sizeof *ta * (na + 1));
    char **fa = dgc_fn_alloc(c, sizeof *fa * (na + 1));
    char **merges = dgc_fn_alloc(c, sizeof *merges * (no + 1));
    char *sp = dgc_fn_printf(c, "%s/switch_pred", name);
    char *sp0 = dgc_fn_printf(c, "%s/switch_pred:0", name);
    char *sp1 = dgc_fn_printf(c, "%s/switch_pred:1", name);
    char *pt = dgc_fn_printf(c, "%s/pivot_t", name);
    char *pf = dgc_fn_printf(c, "%s/pivot_f", name);
    char *cpt = dgc_fn_printf(c, "^%s/pivot_t", name);
    char *cpf = dgc_fn_printf(c, "^%s/pivot_f", name);
    char *tn = dgc_fn_printf(c, "%s/then", name);
    char *en = dgc_fn_printf(c, "%s/else", name);
    if (!ctrl || !ta || !fa || !merges || !sp || !sp0 || !sp1 || !pt ||
        !pf || !cpt || !cpf || !tn || !en)
        return dgc_fn_nomem(c);
    const char *pred = NULL;
    char **data = dgc_fn_alloc(c, sizeof *data * (nd + 1));
    if (!data)
        return dgc_fn_nomem(c);
    nd = 0;
    for (size_t k = 0; k < n_in; k++) {
        if (in[k][0] == '^')
            ctrl[nc++] = in[k];
        else
            data[nd++] = in[k];
    }
    pred = data[0];
    /* the predicate switched on itself: a pivot per branch, which the
     * branch's nodes without inputs wait for (TF's LowerIfOp) */
    const char **sin = dgc_fn_alloc(c, sizeof *sin * (nc + 3));
    if (!sin)
        return dgc_fn_nomem(c);
    sin[0] = pred;
    sin[1] = pred;
    memcpy(sin + 2, ctrl, sizeof *sin * nc);
    Dgtf__NodeDef *sw = node(c, sp, "Switch", device, sin);
    if (!sw || set_attr(c, sw, "T", av_type(c, DT_BOOL)))
        return dgc_fn_nomem(c);
    dg_status st = dgc_fn_emit(c, sw);
    if (!st)
        st = ident(c, pt, sp1, DT_BOOL, device);
    if (!st)
        st = ident(c, pf, sp0, DT_BOOL, device);
    for (size_t i = 0; i < na && !st; i++) {
        int t = (int)tin->list->type[i];
        char *sn = dgc_fn_printf(c, "%s/Switch_%zu", name, i);
        ta[i] = dgc_fn_printf(c, "%s/Switch_%zu:1", name, i);
        fa[i] = dgc_fn_printf(c, "%s/Switch_%zu:0", name, i);
        const char *v[] = {data[i + 1], pred, NULL};
        Dgtf__NodeDef *n = sn && ta[i] && fa[i] ? node(c, sn, "Switch", device, v)
                                                : NULL;
        if (!n || (t != DT_RESOURCE && set_attr(c, n, "T", av_type(c, t))))
            return dgc_fn_nomem(c);
        st = dgc_fn_emit(c, n);
    }
    if (!st)
        st = dgc_fn_inline_body(c, b, thn, tn, ta, na, device, depth, cpt);
    if (!st)
        st = dgc_fn_inline_body(c, b, els, en, fa, na, device, depth, cpf);
    /* Merge(else, then) per output */
    for (size_t k = 0; k < no && !st; k++) {
        int t = (int)tout->list->type[k];
        char *mn = dgc_fn_printf(c, "%s/Merge_%zu", name, k);
        char *e = dgc_fn_printf(c, "%s/else:%zu", name, k);
        char *th = dgc_fn_printf(c, "%s/then:%zu", name, k);
        char *key = dgc_fn_printf(c, "%s:%zu", name, k);
        merges[k] = dgc_fn_printf(c, "^%s/Merge_%zu", name, k);
        const char *v[] = {e, th, NULL};
        Dgtf__NodeDef *n = mn && e && th && key && merges[k]
                               ? node(c, mn, "Merge", device, v) : NULL;
        if (!n || set_attr(c, n, "N", av_int(c, 2)) ||
            (t != DT_RESOURCE && set_attr(c, n, "T", av_type(c, t))))
            return dgc_fn_nomem(c);
        st = dgc_fn_emit(c, n);
        if (!st)
            st = dgc_fn_alias(c, key, mn);
        if (!st && k == 0)
            st = dgc_fn_alias(c, name, mn);
    }
    /* "^if": after every Merge */
    char *oc = dgc_fn_printf(c, "%s/output_control_node", name);
    char *ockey = dgc_fn_printf(c, "^%s", name);
    char *ocval = oc ? dgc_fn_printf(c, "^%s", oc) : NULL;
    if (!st && (!oc || !ockey || !ocval))
        return dgc_fn_nomem(c);
    if (!st) {
        Dgtf__NodeDef *n = node(c, oc, "NoOp", device, (const char **)merges);
        st = n ? dgc_fn_emit(c, n) : dgc_fn_nomem(c);
    }
    return st ? st : dgc_fn_alias(c, ockey, ocval);
}

/* ---- TensorLists -------------------------------------------------------- */

static int is_op(const Dgtf__NodeDef *n, const char *op)
{
    return strcmp(n->op, op) == 0;
}

/* "^a", "a:1" -> "a" (arena); NULL on nomem. */
static char *base_of(fnctx *c, const char *s)
{
    if (s[0] == '^')
        s++;
    const char *col = strrchr(s, ':');
    return col ? dgc_fn_printf(c, "%.*s", (int)(col - s), s)
               : dgc_fn_printf(c, "%s", s);
}

typedef struct lists {
    fnctx *c;
    dg_strmap idx;          /* node name -> index */
    dg_strmap made;         /* handle Enters made */
    dg_strmap dyn;          /* lists a SetItem may grow (dynamic_size) */
} lists;

static const Dgtf__NodeDef *named(lists *L, const char *tensor)
{
    char *b = base_of(L->c, tensor);
    int32_t j = b ? dg_strmap_get(&L->idx, b) : -1;
    return j >= 0 ? L->c->out->node[j] : NULL;
}

/* The handle of the list `tensor` as seen by a consumer: walk back to the
 * TensorListReserve / FromTensor that made it (through Identity, Enter,
 * Merge's first input, Switch, Exit, NextIteration, SetItem) and enter
 * its array's handle into each frame the consumer is in that the maker is
 * not (an Enter is_constant beside each Enter crossed, once).  NULL with
 * *st set on failure. */
static const char *list_handle(lists *L, const Dgtf__NodeDef *who,
                               const char *tensor, const Dgtf__NodeDef **src,
                               dg_status *st)
{
    fnctx *c = L->c;
    const Dgtf__NodeDef *enters[64];
    int ne = 0, depth = 0;
    const Dgtf__NodeDef *n = named(L, tensor);
    for (int hop = 0; n && hop < 100000; hop++) {
        if (is_op(n, "TensorListReserve") || is_op(n, "TensorListFromTensor"))
            break;
        if (is_op(n, "Exit"))
            depth++;
        else if (is_op(n, "Enter") && depth > 0)
            depth--;
        else if (is_op(n, "Enter") && ne < 64)
            enters[ne++] = n;
        else if (!(is_op(n, "Identity") || is_op(n, "Merge") ||
                   is_op(n, "Switch") || is_op(n, "NextIteration") ||
                   is_op(n, "TensorListSetItem") || is_op(n, "Enter")))
            n = NULL;
        n = n && n->n_input ? named(L, n->input[0]) : NULL;
    }
    if (!n) {
        *st = dg_err(c->err, DG_E_GRAPH, "node '%s': its TensorList does not "
                     "come from a TensorListReserve or TensorListFromTensor "
                     "(dgrun maps lists onto TensorArrays)", who->name);
        return NULL;
    }
    *src = n;
    const char *h = dgc_fn_printf(c, "%s/TensorArray:0", n->name);
    for (int k = ne - 1; k >= 0 && h; k--) {
        const Dgtf__NodeDef *e = enters[k];
        char *hn = dgc_fn_printf(c, "%s/%s/handle", e->name, n->name);
        if (!hn)
            break;
        int r = dg_strmap_put(&L->made, hn, 0);
        if (r < 0)
            break;
        if (r == 0) {
            const char *in[] = {h, NULL};
            Dgtf__NodeDef *d = node(c, hn, "Enter", e->device, in);
            const Dgtf__AttrValue *fr = attr(e, "frame_name");
            const Dgtf__AttrValue *pi = attr(e, "parallel_iterations");
            if (!d || !fr || set_attr(c, d, "frame_name", (Dgtf__AttrValue *)fr) ||
                set_attr(c, d, "is_constant", av_bool(c, 1)) ||
                (pi && set_attr(c, d, "parallel_iterations",
                                (Dgtf__AttrValue *)pi)) ||
                (*st = dgc_fn_emit(c, d)))
                return *st ? NULL : (*st = dgc_fn_nomem(c), NULL);
        }
        h = hn;
    }
    if (!h)
        *st = dgc_fn_nomem(c);
    return h;
}

/* The element dtype attr of a list op (element_dtype). */
static Dgtf__AttrValue *elem_type(const Dgtf__NodeDef *n)
{
    return (Dgtf__AttrValue *)attr(n, "element_dtype");
}

/* The element shape from a list op's element_shape input (a Const), or
 * NULL when unknown. */
static Dgtf__AttrValue *elem_shape(lists *L, const Dgtf__NodeDef *n, size_t k)
{
    if (n->n_input <= k)
        return NULL;
    const Dgtf__NodeDef *s = named(L, n->input[k]);
    const Dgtf__AttrValue *v = s && is_op(s, "Const") ? attr(s, "value") : NULL;
    return v && v->value_case == DGTF__ATTR_VALUE__VALUE_TENSOR
               ? av_shape_of(L->c, v->tensor) : NULL;
}

/* "<n>/TensorArray" of size `size`, with n's element dtype and shape. */
static dg_status make_array(lists *L, const Dgtf__NodeDef *n,
                            const char *size, size_t shape_in)
{
    fnctx *c = L->c;
    char *name = dgc_fn_printf(c, "%s/TensorArray", n->name);
    const char *in[] = {size, NULL};
    Dgtf__NodeDef *d = name ? node(c, name, "TensorArrayV3", n->device, in)
                            : NULL;
    Dgtf__AttrValue *es = elem_shape(L, n, shape_in);
    if (!d || !elem_type(n) || set_attr(c, d, "dtype", elem_type(n)) ||
        (es && set_attr(c, d, "element_shape", es)) ||
        set_attr(c, d, "clear_after_read", av_bool(c, 0)) ||
        set_attr(c, d, "identical_element_shapes", av_bool(c, 1)) ||
        set_attr(c, d, "_tensor_list", av_bool(c, 1)) ||
        (dg_strmap_get(&L->dyn, n->name) >= 0 &&
         set_attr(c, d, "dynamic_size", av_bool(c, 1))))
        return elem_type(n) ? dgc_fn_nomem(c)
                            : dg_err(c->err, DG_E_GRAPH, "node '%s': no "
                                     "element_dtype", n->name);
    return dgc_fn_emit(c, d);
}

/* 0..size-1 as "<name>/range" (int32), in the frame of `ctrl`'s node. */
static dg_status range_to(lists *L, const char *name, const char *size,
                          const char *ctrl, const char *device)
{
    fnctx *c = L->c;
    char *r = dgc_fn_printf(c, "%s/range", name);
    char *r0 = dgc_fn_printf(c, "%s/range/start", name);
    char *r1 = dgc_fn_printf(c, "%s/range/delta", name);
    if (!r || !r0 || !r1)
        return dgc_fn_nomem(c);
    dg_status st = const_i32(c, r0, 0, 0, ctrl, device);
    if (!st)
        st = const_i32(c, r1, 1, 0, ctrl, device);
    const char *in[] = {r0, size, r1, NULL};
    Dgtf__NodeDef *d = st ? NULL : node(c, r, "Range", device, in);
    if (!st && (!d || set_attr(c, d, "Tidx", av_type(c, DT_INT32))))
        return dgc_fn_nomem(c);
    return st ? st : dgc_fn_emit(c, d);
}

/* n's inputs replaced: in (NULL-terminated) then n's control inputs. */
static int set_inputs(fnctx *c, Dgtf__NodeDef *n, const char *const *in)
{
    size_t k = 0, nc = 0;
    while (in[k])
        k++;
    for (size_t i = 0; i < n->n_input; i++)
        nc += n->input[i][0] == '^';
    char **v = dgc_fn_alloc(c, sizeof *v * (k + nc + 1));
    if (!v)
        return -1;
    for (size_t i = 0; i < k; i++)
        v[i] = (char *)in[i];
    for (size_t i = 0; i < n->n_input; i++)
        if (n->input[i][0] == '^')
            v[k++] = n->input[i];
    n->input = v;
    n->n_input = k;
    return 0;
}

/* A list op rewritten as TensorArray ops (h: its list's handle where n
 * is; NULL for makers). */
static dg_status convert(lists *L, Dgtf__NodeDef *n, const char *h)
{
    fnctx *c = L->c;
    Dgtf__AttrValue *dt = elem_type(n);
    char *ctrl = n->n_input ? base_of(c, n->input[0]) : NULL;
    char *cx = ctrl ? dgc_fn_printf(c, "^%s", ctrl) : NULL;
    if (!dt || !n->n_input || n->input[0][0] == '^')
        return dg_err(c->err, DG_E_GRAPH, "node '%s': no element_dtype or "
                      "no list input", n->name);
    if (!cx)
        return dgc_fn_nomem(c);
    dg_status st = DG_OK;
    if (is_op(n, "TensorListReserve")) {
        /* (element_shape, num_elements): the list is the array's flow */
        if (n->n_input < 2)
            return dg_err(c->err, DG_E_GRAPH, "node '%s': 2 inputs needed",
                          n->name);
        if ((st = make_array(L, n, n->input[1], 0)))
            return st;
        char *flow = dgc_fn_printf(c, "%s/TensorArray:1", n->name);
        const char *in[] = {flow, NULL};
        n->op = "Identity";
        n->attr = NULL;
        n->n_attr = 0;
        if (!flow || set_inputs(c, n, in) ||
            set_attr(c, n, "T", av_type(c, DT_FLOAT)))
            return dgc_fn_nomem(c);
        return DG_OK;
    }
    if (is_op(n, "TensorListFromTensor")) {
        /* (tensor, element_shape): an array of dim 0's size, scattered */
        char *shape = dgc_fn_printf(c, "%s/Shape", n->name);
        char *size = dgc_fn_printf(c, "%s/size", n->name);
        char *b0 = dgc_fn_printf(c, "%s/size/begin", n->name);
        char *b1 = dgc_fn_printf(c, "%s/size/end", n->name);
        char *rg = dgc_fn_printf(c, "%s/range", n->name);
        char *ha = dgc_fn_printf(c, "%s/TensorArray:0", n->name);
        char *fl = dgc_fn_printf(c, "%s/TensorArray:1", n->name);
        if (!shape || !size || !b0 || !b1 || !rg || !ha || !fl)
            return dgc_fn_nomem(c);
        const char *sin[] = {n->input[0], NULL};
        Dgtf__NodeDef *sh = node(c, shape, "Shape", n->device, sin);
        if (!sh || set_attr(c, sh, "out_type", av_type(c, DT_INT32)))
            return dgc_fn_nomem(c);
        if ((st = dgc_fn_emit(c, sh)) ||
            (st = const_i32(c, b0, 0, 1, cx, n->device)) ||
            (st = const_i32(c, b1, 1, 1, cx, n->device)))
            return st;
        const char *zin[] = {shape, b0, b1, b1, NULL};
        Dgtf__NodeDef *z = node(c, size, "StridedSlice", n->device, zin);
        if (!z || set_attr(c, z, "T", av_type(c, DT_INT32)) ||
            set_attr(c, z, "Index", av_type(c, DT_INT32)) ||
            set_attr(c, z, "shrink_axis_mask", av_int(c, 1)))
            return dgc_fn_nomem(c);
        if ((st = dgc_fn_emit(c, z)) || (st = make_array(L, n, size, 1)) ||
            (st = range_to(L, n->name, size, cx, n->device)))
            return st;
        const char *in[] = {ha, rg, n->input[0], fl, NULL};
        n->op = "TensorArrayScatterV3";
        n->attr = NULL;
        n->n_attr = 0;
        if (set_inputs(c, n, in) || set_attr(c, n, "T", dt))
            return dgc_fn_nomem(c);
        return DG_OK;
    }
    if (is_op(n, "TensorListGetItem") && n->n_input >= 2) {
        /* the element shape: the array's (TF's ReadV3 has no attr) */
        const char *in[] = {h, n->input[1], n->input[0], NULL};
        n->op = "TensorArrayReadV3";
        n->attr = NULL;
        n->n_attr = 0;
        if (set_inputs(c, n, in) || set_attr(c, n, "dtype", dt))
            return dgc_fn_nomem(c);
        return DG_OK;
    }
    if (is_op(n, "TensorListSetItem") && n->n_input >= 3) {
        const char *in[] = {h, n->input[1], n->input[2], n->input[0], NULL};
        n->op = "TensorArrayWriteV3";
        n->attr = NULL;
        n->n_attr = 0;
        if (set_inputs(c, n, in) || set_attr(c, n, "T", dt))
            return dgc_fn_nomem(c);
        return DG_OK;
    }
    if (is_op(n, "TensorListStack") && n->n_input >= 1) {
        char *size = dgc_fn_printf(c, "%s/size", n->name);
        char *rg = dgc_fn_printf(c, "%s/range", n->name);
        if (!size || !rg)
            return dgc_fn_nomem(c);
        const char *zin[] = {h, n->input[0], NULL};
        Dgtf__NodeDef *z = node(c, size, "TensorArraySizeV3", n->device, zin);
        if (!z)
            return dgc_fn_nomem(c);
        if ((st = dgc_fn_emit(c, z)) ||
            (st = range_to(L, n->name, size, cx, n->device)))
            return st;
        Dgtf__AttrValue *es = elem_shape(L, n, 1);
        const char *in[] = {h, rg, n->input[0], NULL};
        n->op = "TensorArrayGatherV3";
        n->attr = NULL;
        n->n_attr = 0;
        if (set_inputs(c, n, in) || set_attr(c, n, "dtype", dt) ||
            (es && set_attr(c, n, "element_shape", es)))
            return dgc_fn_nomem(c);
        return DG_OK;
    }
    return dg_err(c->err, DG_E_GRAPH, "node '%s': %s with too few inputs",
                  n->name, n->op);
}

dg_status dgc_fn_lists(fnctx *c)
{
    dgc_fn_graph *o = c->out;
    size_t n0 = o->n_node, nl = 0;
    for (size_t i = 0; i < n0; i++)
        nl += strncmp(o->node[i]->op, "TensorList", 10) == 0;
    if (!nl)
        return DG_OK;
    lists L = {c, {0}, {0}, {0}};
    const char **h = dg_calloc(n0 + 1, sizeof *h);
    if (!h || dg_strmap_init(&L.idx, n0 + 1) || dg_strmap_init(&L.made, 16) ||
        dg_strmap_init(&L.dyn, 16)) {
        dg_free(h);
        dg_strmap_free(&L.idx);
        dg_strmap_free(&L.made);
        return dgc_fn_nomem(c);
    }
    dg_status st = DG_OK;
    for (size_t i = 0; i < n0 && !st; i++)
        if (dg_strmap_put(&L.idx, o->node[i]->name, (int32_t)i) < 0)
            st = dgc_fn_nomem(c);
    /* the handles first (the walks read the list ops as TF wrote them) */
    for (size_t i = 0; i < n0 && !st; i++) {
        const Dgtf__NodeDef *n = o->node[i];
        const Dgtf__NodeDef *src = NULL;
        if ((is_op(n, "TensorListGetItem") || is_op(n, "TensorListSetItem") ||
             is_op(n, "TensorListStack")) && n->n_input)
            h[i] = list_handle(&L, n, n->input[0], &src, &st);
        /* a dynamic-size TensorArray's writes may grow it */
        const Dgtf__AttrValue *rs = attr(n, "resize_if_index_out_of_bounds");
        if (!st && src && is_op(n, "TensorListSetItem") && rs &&
            rs->value_case == DGTF__ATTR_VALUE__VALUE_B && rs->b &&
            dg_strmap_put(&L.dyn, src->name, 1) < 0)
            st = dgc_fn_nomem(c);
    }
    for (size_t i = 0; i < n0 && !st; i++) {
        const Dgtf__NodeDef *n = o->node[i];
        /* the others stay, refused as unsupported ops */
        if (is_op(n, "TensorListReserve") || is_op(n, "TensorListFromTensor") ||
            is_op(n, "TensorListGetItem") || is_op(n, "TensorListSetItem") ||
            is_op(n, "TensorListStack"))
            st = convert(&L, o->node[i], h[i]);
    }
    /* the control flow a list passed through carries its flow (float) */
    for (size_t i = 0; i < o->n_node && !st; i++) {
        Dgtf__NodeDef *n = o->node[i];
        const Dgtf__AttrValue *t = attr(n, "T");
        if (t && t->value_case == DGTF__ATTR_VALUE__VALUE_TYPE &&
            (int)t->type == DT_VARIANT && set_attr(c, n, "T", av_type(c, DT_FLOAT)))
            st = dgc_fn_nomem(c);
    }
    dg_free(h);
    dg_strmap_free(&L.idx);
    dg_strmap_free(&L.made);
    dg_strmap_free(&L.dyn);
    return st;
}
