/*
 * test_plan.c -- dgc_plan_build: pruning through data and control edges,
 * topological order, one transfer per (producer output, consumer device),
 * per-consumer Variable transfers waiting for the consumer's control inputs,
 * pending counts, slot use counts and errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "plan.h"
#include "ops.h"
#include "dg_alloc.h"

static dg_device_info dev_infos[2];
static dg_device_list devs = {dev_infos, 2};

/* Add a node of op on device dev with data inputs (node ids, output 0). */
static int32_t add(dgc_graph *g, const char *name, const char *op, int dev,
                   int n_in, const int32_t *in)
{
    dg_error err;
    int32_t id = dgc_graph_add_node(g, name, dgc_op_find(op), &err);
    assert_true(id >= 0);
    for (int i = 0; i < n_in; i++) {
        dgc_ref r = {in[i], 0};
        assert_int_equal(dgc_node_add_input(g, id, r), 0);
    }
    dgc_node *n = &g->nodes[id];
    n->device_id = dev;
    int no = dgc_ops[n->op].n_out;
    n->n_outputs = no;
    n->outputs = no ? dg_calloc((size_t)no, sizeof *n->outputs) : NULL;
    return id;
}

static const dgc_step *op_step(const dgc_plan *p, int32_t node)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].kind == DGC_STEP_OP && p->steps[i].node == node)
            return &p->steps[i];
    return NULL;
}

static int step_index(const dgc_plan *p, const dgc_step *s)
{
    return (int)(s - p->steps);
}

static int n_transfers(const dgc_plan *p)
{
    int n = 0;
    for (int32_t i = 0; i < p->n_steps; i++)
        n += p->steps[i].kind == DGC_STEP_TRANSFER;
    return n;
}

static int has_succ(const dgc_plan *p, int from, int to)
{
    const dgc_step *s = &p->steps[from];
    for (int i = 0; i < s->n_succ; i++)
        if (p->succ[s->succ_off + i] == to)
            return 1;
    return 0;
}

/* Every edge goes forward and pending equals the number of predecessors. */
static void check_consistent(const dgc_plan *p)
{
    int32_t *pend = calloc((size_t)p->n_steps + 1, sizeof *pend);
    for (int32_t s = 0; s < p->n_steps; s++)
        for (int i = 0; i < p->steps[s].n_succ; i++) {
            int32_t t = p->succ[p->steps[s].succ_off + i];
            assert_true(t > s);
            pend[t]++;
        }
    int roots = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        assert_int_equal(pend[s], p->steps[s].pending);
        roots += pend[s] == 0;
        for (int i = 0; i < p->steps[s].n_in; i++) {
            int32_t sl = p->in_slots[p->steps[s].in_off + i];
            assert_true(p->slots[sl].step < s);
            assert_int_equal(p->slots[sl].device, p->steps[s].src_device);
            assert_true(has_succ(p, p->slots[sl].step, s));
        }
    }
    assert_int_equal(roots, p->n_roots);
    free(pend);
}

static void test_prune(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("t.json");
    int32_t a = add(g, "a", "Const", 0, 0, NULL);
    int32_t b = add(g, "b", "Const", 0, 0, NULL);
    int32_t ab[2] = {a, b};
    int32_t c = add(g, "c", "Add", 0, 2, ab);
    int32_t d = add(g, "d", "Neg", 0, 1, &a);     /* not needed */
    int32_t f = add(g, "f", "Const", 0, 0, NULL);
    int32_t e = add(g, "e", "Neg", 0, 1, &f);     /* needed through ^e */
    int32_t h = add(g, "h", "Identity", 0, 1, &c);
    assert_int_equal(dgc_node_add_ctrl(g, h, e), 0);
    dg_error err;
    dgc_ref fetch = {h, 0};
    dgc_plan *p = dgc_plan_build(g, &devs, &fetch, 1, NULL, 0, &err);
    assert_non_null(p);
    assert_int_equal(p->n_steps, 6);
    assert_null(op_step(p, d));
    assert_non_null(op_step(p, e));
    assert_non_null(op_step(p, f));
    assert_int_equal(n_transfers(p), 0);
    const dgc_step *sh = op_step(p, h);
    assert_int_equal(sh->pending, 2); /* c and ^e */
    assert_true(has_succ(p, step_index(p, op_step(p, e)), step_index(p, sh)));
    /* a's slot: read once by c; h's slot fetched: one extra use. */
    assert_int_equal(p->slots[op_step(p, a)->out_slot].uses, 1);
    assert_int_equal(p->slots[sh->out_slot].uses, 1);
    assert_int_equal(p->fetch_slots[0], sh->out_slot);
    assert_int_equal(p->n_roots, 3);
    check_consistent(p);
    dgc_plan_free(p);
    dgc_graph_free(g);
}

static void test_duplicate_input_edges(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("t.json");
    int32_t a = add(g, "a", "Const", 0, 0, NULL);
    int32_t aa[2] = {a, a};
    int32_t s = add(g, "s", "Add", 0, 2, aa);
    dg_error err;
    dgc_ref fetch[2] = {{s, 0}, {a, 0}};
    dgc_plan *p = dgc_plan_build(g, &devs, fetch, 2, NULL, 0, &err);
    assert_non_null(p);
    assert_int_equal(op_step(p, s)->pending, 1);
    assert_int_equal(op_step(p, a)->n_succ, 1);
    assert_int_equal(p->slots[op_step(p, a)->out_slot].uses, 3); /* 2 + fetch */
    check_consistent(p);
    dgc_plan_free(p);
    dgc_graph_free(g);
}

static void test_transfers_shared(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("t.json");
    int32_t x = add(g, "x", "Const", 1, 0, NULL);   /* GPU */
    int32_t y = add(g, "y", "Neg", 0, 1, &x);       /* CPU */
    int32_t z = add(g, "z", "Sin", 0, 1, &x);       /* CPU */
    int32_t w = add(g, "w", "Cos", 1, 1, &x);       /* GPU */
    int32_t yz[2] = {y, z};
    int32_t o = add(g, "o", "Add", 0, 2, yz);
    int32_t ow[2] = {o, w};
    int32_t q = add(g, "q", "Add", 1, 2, ow);       /* GPU: o goes back */
    dg_error err;
    dgc_ref fetch = {q, 0};
    dgc_plan *p = dgc_plan_build(g, &devs, &fetch, 1, NULL, 0, &err);
    assert_non_null(p);
    assert_int_equal(n_transfers(p), 2); /* x -> CPU once, o -> GPU */
    const dgc_step *t = NULL;
    for (int32_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].kind == DGC_STEP_TRANSFER && p->steps[i].node == x)
            t = &p->steps[i];
    assert_non_null(t);
    assert_int_equal(t->device, 0);
    assert_int_equal(t->src_device, 1);
    assert_int_equal(t->pending, 1);
    assert_int_equal(p->slots[t->out_slot].uses, 2);                /* y, z */
    assert_int_equal(p->slots[op_step(p, x)->out_slot].uses, 2);    /* t, w */
    assert_true(step_index(p, t) < step_index(p, op_step(p, y)));
    check_consistent(p);
    dgc_plan_free(p);
    dgc_graph_free(g);
}

static void test_variable_transfer_waits_for_ctrl(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("t.json");
    int32_t v = add(g, "v", "Variable", 0, 0, NULL);
    int32_t one = add(g, "one", "Const", 0, 0, NULL);
    int32_t vo[2] = {v, one};
    int32_t inc = add(g, "inc", "AssignAdd", 0, 2, vo);
    int32_t r = add(g, "r", "Identity", 1, 1, &v);   /* GPU */
    assert_int_equal(dgc_node_add_ctrl(g, r, inc), 0);
    int32_t r2 = add(g, "r2", "Neg", 1, 1, &v);      /* GPU, no ctrl */
    dg_error err;
    dgc_ref fetch[2] = {{r, 0}, {r2, 0}};
    dgc_plan *p = dgc_plan_build(g, &devs, fetch, 2, NULL, 0, &err);
    assert_non_null(p);
    assert_int_equal(n_transfers(p), 2); /* one per consumer */
    const dgc_step *sr = op_step(p, r);
    int32_t tslot = p->in_slots[sr->in_off];
    int tr = p->slots[tslot].step;
    assert_int_equal(p->steps[tr].kind, DGC_STEP_TRANSFER);
    assert_int_equal(p->steps[tr].pending, 2); /* v and inc */
    assert_true(has_succ(p, step_index(p, op_step(p, inc)), tr));
    const dgc_step *sr2 = op_step(p, r2);
    int tr2 = p->slots[p->in_slots[sr2->in_off]].step;
    assert_int_not_equal(tr, tr2);
    assert_int_equal(p->steps[tr2].pending, 1);
    check_consistent(p);
    dgc_plan_free(p);
    dgc_graph_free(g);
}

static void test_targets_and_errors(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("t.json");
    int32_t a = add(g, "a", "Const", 0, 0, NULL);
    int32_t b = add(g, "b", "Neg", 0, 1, &a);
    int32_t n = add(g, "n", "NoOp", 0, 0, NULL);
    assert_int_equal(dgc_node_add_ctrl(g, n, b), 0);
    dg_error err;
    dgc_plan *p = dgc_plan_build(g, &devs, NULL, 0, &n, 1, &err);
    assert_non_null(p);
    assert_int_equal(p->n_steps, 3);
    assert_int_equal(p->n_fetch, 0);
    /* b's output is read by nobody: uses 0 (freed at once). */
    assert_int_equal(p->slots[op_step(p, b)->out_slot].uses, 0);
    check_consistent(p);
    dgc_plan_free(p);

    dgc_ref bad = {a, 1};
    p = dgc_plan_build(g, &devs, &bad, 1, NULL, 0, &err);
    assert_null(p);
    assert_int_equal(err.code, DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "'a'"));

    /* a cycle through control edges */
    assert_int_equal(dgc_node_add_ctrl(g, a, n), 0);
    dgc_ref fb = {b, 0};
    p = dgc_plan_build(g, &devs, &fb, 1, NULL, 0, &err);
    assert_null(p);
    assert_int_equal(err.code, DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "cycle"));
    dgc_graph_free(g);
}

static void test_nomem(void **state)
{
    (void)state;
    dgc_graph *g = dgc_graph_new("t.json");
    int32_t x = add(g, "x", "Const", 1, 0, NULL);
    int32_t y = add(g, "y", "Neg", 0, 1, &x);
    dgc_ref fetch = {y, 0};
    for (long k = 0; k < 40; k++) {
        dg_error err;
        dg_alloc_fail_after(k);
        dgc_plan *p = dgc_plan_build(g, &devs, &fetch, 1, NULL, 0, &err);
        dg_alloc_fail_after(-1);
        if (p) {
            dgc_plan_free(p);
            break;
        }
        assert_int_equal(err.code, DG_E_NOMEM);
    }
    dgc_graph_free(g);
}

int main(void)
{
    dev_infos[0].type = DG_DEV_CPU;
    dev_infos[1].type = DG_DEV_GPU;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_duplicate_input_edges),
        cmocka_unit_test(test_transfers_shared),
        cmocka_unit_test(test_variable_transfer_waits_for_ctrl),
        cmocka_unit_test(test_targets_and_errors),
        cmocka_unit_test(test_nomem),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
