/*
 * grad_rule.h -- the shorthand of the per-op gradient rule files
 * (grad_rules.c, grad_zoo.c, grad_collective.c): the registration of a
 * rule, and macros over grad.h's dgc_grad_* helpers that expect the rule's
 * context `c` and forward node id `fwd` in scope.
 * Include it from a rule file only, after grad.h.
 */
#ifndef DGC_GRAD_RULE_H
#define DGC_GRAD_RULE_H

#include "grad.h"

/* Gradient rule registration (issue 20): a rule is defined as
 *   DGC_GRAD(Op) { ... }     given c, fwd and dy (the first output's
 *                            gradient, never node -1), setting dx[]
 *   DGC_GRAD_N(Op) { ... }   given c, fwd and dys (every output's)
 *   DGC_GRAD_AS(Op, Other);  Op's rule is Other's (a rule shared by ops
 *                            reads the node's op where they differ)
 * in any rule file; tools/gen_registry.py reads these definitions at build
 * time and writes the table dgrun's dgc_grad_rule dispatches through
 * (dgc_grad_rules, by op id) with their prototypes (grad_rules_gen.h).  An
 * op not in ops.def, or a second rule for an op, stops the build. */
#define DGC_GRAD(op)                                                          \
    dg_status dgc_grad_##op(dgc_gctx *c, int32_t fwd, dgc_ref dy, dgc_ref *dx)
#define DGC_GRAD_N(op)                                                        \
    dg_status dgc_grad_##op(dgc_gctx *c, int32_t fwd, const dgc_ref *dys,    \
                            dgc_ref *dx)
#define DGC_GRAD_AS(op, other)                                                \
    _Static_assert(DGC_OPID_##op >= 0 && DGC_OPID_##other >= 0,               \
                   "DGC_GRAD_AS(" #op ", " #other ")")
#include "grad_rules_gen.h"

/* The names a rule's body may use (inside DGC_GRAD): the forward node f
 * (stable while the rule runs: dgc_grad_rule reserves nodes), its op, its
 * inputs x and yv (x again for a unary op) and its output z. */
#define DGC_GRAD_LOCALS                                                       \
    const dgc_node *f = &c->g->nodes[fwd];                                    \
    int op = f->op;                                                           \
    dgc_ref x = f->inputs[0];                                                 \
    dgc_ref yv = f->n_inputs > 1 ? f->inputs[1] : x;                          \
    dgc_ref z = R(fwd, 0);                                                    \
    (void)op, (void)x, (void)yv, (void)z

/* Op ids by name, checked at compile time. */
#define OP(name) DGC_OPID_##name
/* The forward node, looked up at each use: adding generated nodes may move
 * the node array. */
#define FWD (&c->g->nodes[fwd])
/* Whether input i needs a gradient. */
#define NEED(i) (!c->need || c->need[i])
/* Return the failure status when a helper gave node -1. */
#define CHK(r)                                                                \
    do {                                                                      \
        if ((r).node < 0)                                                     \
            return dgc_grad_fail(c);                                          \
    } while (0)
/* A generated, typed node of op `opname` on the listed inputs. */
#define MK(suffix, opname, ...)                                               \
    dgc_grad_mk(c, fwd, suffix, OP(opname), (const dgc_ref[]){__VA_ARGS__},   \
                (int)(sizeof((const dgc_ref[]){__VA_ARGS__}) /                \
                      sizeof(dgc_ref)))
/* The ref to output index of node. */
#define R(node, index) dgc_grad_ref(node, index)

#endif
