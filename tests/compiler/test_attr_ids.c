/*
 * test_attr_ids.c -- attributes by id (issue 20): every name of
 * attr_names.def maps to its id and back (so the list is in the order the
 * binary search needs), stored attrs carry their id (set directly and by
 * both loaders), the id accessors return the node's value or the op
 * schema's default decoded to its type, every schema default decodes, and
 * reading an attribute the op's schema lacks aborts.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "dgrun.h"
#include "ir.h"
#include "ops.h"
#include "attr_get.h"

static const char *src_root(void)
{
    const char *r = getenv("DGRUN_SOURCE_ROOT");
    return r ? r : ".";
}

static void test_names_round_trip(void **state)
{
    (void)state;
    for (int id = DGC_AT_NONE + 1; id < DGC_N_ATTR_IDS; id++) {
        const char *name = dgc_attr_id_name((dgc_attr_id)id);
        if ((int)dgc_attr_id_of(name) != id)
            fail_msg("attr '%s' (id %d) looks up as %d", name, id,
                     dgc_attr_id_of(name));
    }
    assert_int_equal(dgc_attr_id_of("axis"), DGC_AT_axis);
    assert_int_equal(dgc_attr_id_of("T"), DGC_AT_NONE);
    assert_int_equal(dgc_attr_id_of("axes"), DGC_AT_NONE);
    assert_int_equal(dgc_attr_id_of(""), DGC_AT_NONE);
    assert_string_equal(dgc_attr_id_name(DGC_AT_NONE), "?");
    assert_string_equal(dgc_attr_id_name(DGC_N_ATTR_IDS), "?");
}

/* A one-node graph of op `op` (freed by the caller). */
static dgc_graph *one(int op)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    dgc_graph *g = dgc_graph_new("t.json");
    assert_non_null(g);
    assert_int_equal(dgc_graph_add_node(g, "n", op, &err), 0);
    return g;
}

static void test_set_resolves_id(void **state)
{
    (void)state;
    dgc_graph *g = one(DGC_OPID_FusedBatchNormV3);
    dgc_node *n = &g->nodes[0];
    assert_int_equal(dgc_node_set_float(n, "epsilon", 0.5), 0);
    assert_int_equal(dgc_node_set_str(n, "T", "float"), 0); /* not ours */
    assert_int_equal(n->attrs[0].id, DGC_AT_epsilon);
    assert_int_equal(n->attrs[1].id, DGC_AT_NONE);
    assert_int_equal(dgc_node_set_float(n, "epsilon", 0.25), 0); /* replace */
    assert_int_equal(n->n_attrs, 2);
    assert_int_equal(n->attrs[0].id, DGC_AT_epsilon);
    assert_true(dgc_attr_f(n, DGC_AT_epsilon) == 0.25);
    assert_ptr_equal(dgc_attr_at(n, DGC_AT_epsilon), &n->attrs[0]);
    dgc_graph_free(g);
}

static void test_defaults_typed(void **state)
{
    (void)state;
    dgc_graph *g = one(DGC_OPID_FusedBatchNormV3);
    dgc_node *n = &g->nodes[0];
    assert_true(dgc_attr_f(n, DGC_AT_epsilon) == 0.0001);
    assert_int_equal(dgc_attr_b(n, DGC_AT_is_training), 1);
    assert_true(dgc_attr_f(n, DGC_AT_exponential_avg_factor) == 1.0);
    assert_string_equal(dgc_attr_str(n, DGC_AT_data_format), "NHWC");
    assert_null(dgc_attr_at(n, DGC_AT_epsilon)); /* no default applied */
    assert_int_equal(dgc_attr_i(n, DGC_AT_dtype), 0); /* every op's */
    dgc_graph_free(g);

    g = one(DGC_OPID_Conv2D);
    n = &g->nodes[0];
    int c;
    const int64_t *d = dgc_attr_ints(n, DGC_AT_dilations, &c);
    assert_int_equal(c, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(d[i], 1);
    assert_null(dgc_attr_ints(n, DGC_AT_strides, &c)); /* required: none */
    assert_int_equal(c, 0);
    assert_null(dgc_attr_str(n, DGC_AT_padding));
    assert_non_null(dgc_attr_get(n, DGC_AT_explicit_paddings));
    assert_int_equal(dgc_attr_get(n, DGC_AT_explicit_paddings)->n, 0);
    dgc_graph_free(g);

    g = one(DGC_OPID_ArgMax);
    n = &g->nodes[0];
    assert_int_equal(dgc_attr_i(n, DGC_AT_output_type), DG_I64);
    assert_int_equal(dgc_attr_i(n, DGC_AT_axis), 0);
    assert_int_equal(dgc_node_set_float(n, "axis", 2.0), 0);
    assert_int_equal(dgc_attr_i(n, DGC_AT_axis), 2); /* float -> int */
    dgc_graph_free(g);

    g = one(DGC_OPID_Print);
    n = &g->nodes[0];
    assert_int_equal(dgc_attr_i(n, DGC_AT_first_n), -1);
    assert_int_equal(dgc_attr_i(n, DGC_AT_summarize), 3);
    assert_true(dgc_attr_f(n, DGC_AT_summarize) == 3.0); /* int -> float */
    assert_string_equal(dgc_attr_str(n, DGC_AT_message), "");
    dgc_graph_free(g);

    g = one(DGC_OPID_Variable);
    n = &g->nodes[0];
    assert_int_equal(dgc_attr_get(n, DGC_AT_init)->init.kind,
                     DGC_INIT_ZEROS);
    assert_int_equal(dgc_attr_b(n, DGC_AT_trainable), 1);
    assert_null(dgc_attr_tensor(n, DGC_AT_shape));
    dgc_graph_free(g);
}

/* Every schema row of every op: its default decodes to its type (or is
 * absent when the schema gives none). */
static void test_every_default(void **state)
{
    (void)state;
    int rows = 0;
    for (int op = 0; op < dgc_n_ops; op++) {
        dgc_graph *g = one(op);
        const dgc_attr_spec *s = dgc_ops[op].attrs;
        for (int k = 0; s && s[k].name; k++, rows++) {
            assert_true(dgc_op_has_attr(op, s[k].id));
            assert_string_equal(dgc_attr_id_name(s[k].id), s[k].name);
            const dgc_attr *a = dgc_attr_get(&g->nodes[0], s[k].id);
            if (!s[k].dflt != !a || (a && a->kind != s[k].type))
                fail_msg("%s.%s: default '%s' decoded as %s (kind %d)",
                         dgc_ops[op].name, s[k].name,
                         s[k].dflt ? s[k].dflt : "(none)",
                         a ? "a value" : "nothing", a ? (int)a->kind : -1);
        }
        dgc_graph_free(g);
    }
    assert_true(rows > 100);
}

/* Every attr the loaders store carries dgc_attr_id_of(its key). */
static void check_ids(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", src_root(), file);
    dg_error err;
    memset(&err, 0, sizeof err);
    dgc_graph *g = dg_graph_load(path, NULL, 0, &err);
    if (!g)
        fail_msg("%s: %s", file, err.msg);
    int named = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attrs; a++) {
            const dgc_attr *at = &g->nodes[i].attrs[a];
            assert_int_equal(at->id, dgc_attr_id_of(at->key));
            named += at->id != DGC_AT_NONE;
        }
    assert_true(named > 0);
    dgc_graph_free(g);
}

static void test_loaders_set_ids(void **state)
{
    (void)state;
    check_ids("graphs/bn_mlp.json");
    check_ids("tests/data/graphdef/mlp.json");
}

/* Reading an attribute the op's schema lacks is a programming error: the
 * accessors abort (in a child, so the test goes on). */
static void test_unknown_read_aborts(void **state)
{
    (void)state;
    assert_false(dgc_op_has_attr(DGC_OPID_Conv3D, DGC_AT_ksize));
    assert_true(dgc_op_has_attr(DGC_OPID_MaxPool3D, DGC_AT_ksize));
    assert_true(dgc_op_has_attr(DGC_OPID_Conv3D, DGC_AT_dtype));
#ifdef NDEBUG
    skip();
#else
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dgc_graph *g = one(DGC_OPID_Conv3D);
        int null_stderr = freopen("/dev/null", "w", stderr) != NULL;
        (void)null_stderr;
        (void)dgc_attr_i(&g->nodes[0], DGC_AT_ksize);
        _exit(0);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGABRT);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_set_resolves_id),
        cmocka_unit_test(test_defaults_typed),
        cmocka_unit_test(test_every_default),
        cmocka_unit_test(test_loaders_set_ids),
        cmocka_unit_test(test_unknown_read_aborts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
