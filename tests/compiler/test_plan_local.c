/*
 * test_plan_local.c -- dgc_plan_localize (SPEC 8.3): each rank's part of a
 * cluster's plan.  Every op step lands on exactly one rank; a transfer
 * between ranks becomes one SEND and one RECV with the same tag and
 * opposite peers; control edges between ranks become zero-byte pairs;
 * tags are dense and agree on every rank; RECVs are roots; use counts
 * count only local reads and local fetches; allocation failures return
 * NULL with DG_E_NOMEM and leak nothing.  No MPI needed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "program.h"
#include "plan.h"
#include "dg_alloc.h"

/* the graph of tests/data/cluster/small.json: a value worker:1 ->
 * worker:0, a Variable read on worker:1 after ps's AssignAdd (control
 * edge between tasks), a large Variable summed on worker:1 */
static const char GRAPH[] =
    "{\"version\": 1, \"cluster\": {\"ps\": 1, \"worker\": 2}, \"nodes\": ["
    "{\"name\": \"v\", \"op\": \"Variable\", \"device\": \"/job:ps/task:0\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [3], \"init\": [1, 2, 3]}},"
    "{\"name\": \"one\", \"op\": \"Const\", \"device\": \"/job:ps/task:0\","
    " \"attrs\": {\"value\": [1.0, 1.0, 1.0]}},"
    "{\"name\": \"inc\", \"op\": \"AssignAdd\", \"inputs\": [\"v\", \"one\"],"
    " \"device\": \"/job:ps/task:0\"},"
    "{\"name\": \"x\", \"op\": \"Placeholder\", \"device\": \"/job:worker/task:1\","
    " \"attrs\": {\"dtype\": \"float32\", \"shape\": [3]}},"
    "{\"name\": \"two\", \"op\": \"Const\", \"device\": \"/job:worker/task:1\","
    " \"attrs\": {\"value\": 2.0}},"
    "{\"name\": \"a\", \"op\": \"Mul\", \"inputs\": [\"x\", \"two\"],"
    " \"device\": \"/job:worker/task:1\"},"
    "{\"name\": \"b\", \"op\": \"Const\", \"device\": \"/job:worker/task:0\","
    " \"attrs\": {\"value\": 10.0}},"
    "{\"name\": \"c\", \"op\": \"Add\", \"inputs\": [\"a\", \"b\"],"
    " \"device\": \"/job:worker/task:0\"},"
    "{\"name\": \"d\", \"op\": \"Identity\", \"inputs\": [\"v\", \"^inc\"],"
    " \"device\": \"/job:worker/task:1\"}]}";

typedef struct fixture {
    dg_program *p;
    dgc_plan *plan;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    dg_error err;
    dg_graph *g = dg_graph_load("t.json", GRAPH, strlen(GRAPH), &err);
    assert_non_null(g);
    dg_options o;
    dg_options_init(&o);
    const dg_cluster *c = dg_graph_cluster(g, &o);
    assert_non_null(c);
    dg_device_list *local = NULL, *all = NULL;
    assert_int_equal(dg_devices_assume(0, &local, &err), DG_OK);
    const dg_device_list *per[3] = {local, local, local};
    assert_int_equal(dg_devices_for_cluster(c, per, &all, &err), DG_OK);
    f->p = dg_compile(g, &o, all, &err);
    assert_non_null(f->p);
    dg_devices_free(local);
    dg_devices_free(all);
    dgc_ref fetch[2] = {{dgc_graph_find(f->p->g, "c"), 0},
                        {dgc_graph_find(f->p->g, "d"), 0}};
    f->plan = dgc_plan_build(f->p->g, &f->p->devs, fetch, 2, NULL, 0, &err);
    assert_non_null(f->plan);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dgc_plan_free(f->plan);
    dg_program_free(f->p);
    free(f);
    return 0;
}

static int rank_of(const dg_program *p, int32_t dev)
{
    return p->devs.devs[dev].rank;
}

static void test_split(void **state)
{
    fixture *f = *state;
    const dgc_plan *g = f->plan;
    dg_error err;
    dgc_plan *l[3];
    for (int r = 0; r < 3; r++) {
        l[r] = dgc_plan_localize(g, &f->p->devs, r, &err);
        assert_non_null(l[r]);
        assert_int_equal(l[r]->n_edges, l[0]->n_edges);
    }
    /* op steps: each on exactly the rank of its device */
    int ops = 0, local_ops = 0;
    for (int32_t s = 0; s < g->n_steps; s++)
        ops += g->steps[s].kind == DGC_STEP_OP;
    /* tags: each exactly one SEND and one RECV, peers opposite */
    int nt = l[0]->n_edges;
    assert_true(nt >= 3); /* a -> c, v -> d, inc -> (v's read) */
    int *sends = calloc((size_t)nt, sizeof *sends);
    int *recvs = calloc((size_t)nt, sizeof *recvs);
    int *from = calloc((size_t)nt, sizeof *from);
    int *to = calloc((size_t)nt, sizeof *to);
    int *peer_s = calloc((size_t)nt, sizeof *peer_s);
    int *peer_r = calloc((size_t)nt, sizeof *peer_r);
    for (int r = 0; r < 3; r++) {
        const dgc_plan *q = l[r];
        int roots = 0;
        for (int32_t s = 0; s < q->n_steps; s++) {
            const dgc_step *st = &q->steps[s];
            assert_int_equal(rank_of(f->p, st->device), r);
            roots += st->pending == 0;
            switch (st->kind) {
            case DGC_STEP_OP:
                local_ops++;
                break;
            case DGC_STEP_SEND:
                assert_true(st->tag >= 0 && st->tag < nt);
                sends[st->tag]++;
                from[st->tag] = r;
                peer_s[st->tag] = st->peer;
                assert_int_equal(st->n_out, 0);
                break;
            case DGC_STEP_RECV:
                assert_true(st->tag >= 0 && st->tag < nt);
                recvs[st->tag]++;
                to[st->tag] = r;
                peer_r[st->tag] = st->peer;
                assert_int_equal(st->n_in, 0);
                assert_int_equal(st->pending, 0); /* a root */
                break;
            default: /* a transfer inside one rank stays one */
                assert_int_equal(rank_of(f->p, st->src_device), r);
            }
            /* successors are local step numbers */
            for (int32_t k = 0; k < st->n_succ; k++)
                assert_true(q->succ[st->succ_off + k] < q->n_steps);
        }
        assert_int_equal(roots, q->n_roots);
        /* uses: local reads and fetches held here */
        for (int32_t i = 0; i < q->n_slots; i++) {
            int u = 0;
            for (int32_t s = 0; s < q->n_steps; s++)
                for (int32_t k = 0; k < q->steps[s].n_in; k++)
                    u += q->in_slots[q->steps[s].in_off + k] == i;
            for (int k = 0; k < q->n_fetch; k++)
                u += q->fetch_slots[k] == i &&
                     rank_of(f->p, q->slots[i].device) == r;
            assert_int_equal(q->slots[i].uses, u);
        }
    }
    assert_int_equal(local_ops, ops);
    for (int t = 0; t < nt; t++) {
        assert_int_equal(sends[t], 1);
        assert_int_equal(recvs[t], 1);
        assert_int_not_equal(from[t], to[t]);
        assert_int_equal(peer_s[t], to[t]);
        assert_int_equal(peer_r[t], from[t]);
    }
    free(sends);
    free(recvs);
    free(from);
    free(to);
    free(peer_s);
    free(peer_r);
    for (int r = 0; r < 3; r++)
        dgc_plan_free(l[r]);
}

static void test_oom(void **state)
{
    fixture *f = *state;
    for (int r = 0; r < 3; r++) {
        long k;
        for (k = 0; k < 10000; k++) {
            dg_error err;
            memset(&err, 0, sizeof err);
            dg_alloc_fail_after(k);
            dgc_plan *q = dgc_plan_localize(f->plan, &f->p->devs, r, &err);
            dg_alloc_fail_after(-1);
            if (q) {
                dgc_plan_free(q);
                break;
            }
            assert_int_equal(err.code, DG_E_NOMEM);
        }
        assert_true(k > 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_split, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oom, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
