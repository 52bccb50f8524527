/*
 * grad_rule.h -- the shorthand of the per-op gradient rule files
 * (grad_rules.c, grad_zoo.c, grad_collective.c): macros over grad.h's
 * dgc_grad_* helpers that expect the rule's context `c` and forward node
 * id `fwd` in scope.
 * Include it from a rule file only, after grad.h.
 */
#ifndef DGC_GRAD_RULE_H
#define DGC_GRAD_RULE_H

#include "grad.h"

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
