/*
 * load_graphdef_init.c -- constant subgraphs of a TensorFlow GraphDef that
 * dgrun turns into attributes: a VariableV2's initial value (read from the
 * `<var>/Assign` initializer TF builds: a Const (or a float Const times a
 * constant scalar), or a scaled and shifted
 * RandomUniform / RandomNormal / TruncatedNormal as
 * tf.glorot_uniform_initializer, tf.random_uniform_initializer,
 * tf.random_normal_initializer and tf.truncated_normal_initializer emit) and
 * Fill(dims, value) of Consts (large tf.zeros / tf.ones), which becomes a
 * Const.
 */
#include "load_graphdef.h"
#include "ops.h"
#include "dg_alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GE(...) dg_err(err, DG_E_GRAPH, __VA_ARGS__)

static int op_is(const dgc_node *n, const char *name)
{
    return strcmp(dgc_op_name(n->op), name) == 0;
}

static const dg_tensor *const_tensor(const dgc_node *n)
{
    const dgc_attr *v = dgc_node_attr(n, "value");
    return (op_is(n, "Const") && v && v->tensor) ? v->tensor : NULL;
}

/* Value of a constant scalar expression (Const, Identity, Neg, Add, Sub,
 * Mul of such) at output 0 of node id.  0 ok, -1 not one. */
static int scalar_of(const dgc_graph *g, int32_t id, int depth, double *out)
{
    const dgc_node *n = &g->nodes[id];
    if (depth > 8)
        return -1;
    const dg_tensor *t = const_tensor(n);
    if (t)
        return dg_shape_numel(&t->shape) == 1 ? (*out = dg_tensor_elem(t, 0), 0)
                                              : -1;
    double a, b;
    if (n->n_inputs == 1 && (op_is(n, "Identity") || op_is(n, "Neg"))) {
        if (scalar_of(g, n->inputs[0].node, depth + 1, &a))
            return -1;
        *out = op_is(n, "Neg") ? -a : a;
        return 0;
    }
    if (n->n_inputs != 2 || scalar_of(g, n->inputs[0].node, depth + 1, &a) ||
        scalar_of(g, n->inputs[1].node, depth + 1, &b))
        return -1;
    if (op_is(n, "Add"))
        *out = a + b;
    else if (op_is(n, "Sub"))
        *out = a - b;
    else if (op_is(n, "Mul"))
        *out = a * b;
    else
        return -1;
    return 0;
}

/* A float random op whose shape is known at load (a source). */
static int is_random(const dgc_node *n)
{
    return dgc_op_has(n->op, DGC_OP_RANDOM) && n->n_inputs == 0;
}

/* v = R, R*s, s*R, R+o, o+R, (R*s)+o, o+(R*s) with R a random op: *r = R's
 * node, scale and offset.  0 ok, -1 not that shape. */
static int affine_random(const dgc_graph *g, int32_t v, int32_t *r,
                         double *scale, double *offset)
{
    const dgc_node *n = &g->nodes[v];
    *scale = 1.0;
    *offset = 0.0;
    if (op_is(n, "Add") && n->n_inputs == 2) {
        int k = scalar_of(g, n->inputs[1].node, 0, offset) == 0 ? 0 :
                scalar_of(g, n->inputs[0].node, 0, offset) == 0 ? 1 : -1;
        if (k < 0)
            return -1;
        v = n->inputs[k].node;
        n = &g->nodes[v];
    }
    if (op_is(n, "Mul") && n->n_inputs == 2) {
        int k = scalar_of(g, n->inputs[1].node, 0, scale) == 0 ? 0 :
                scalar_of(g, n->inputs[0].node, 0, scale) == 0 ? 1 : -1;
        if (k < 0)
            return -1;
        v = n->inputs[k].node;
        n = &g->nodes[v];
    }
    if (!is_random(n))
        return -1;
    *r = v;
    return 0;
}

/* v = C or C * s, s * C with C a Const tensor and s a constant scalar
 * expression (tf.compat.v1.train.FtrlOptimizer's accumulator initializer:
 * ones * initial_accumulator_value): C's node, and the scale (1 for a bare
 * Const; a scale only on a float C).  0 ok, -1 not that shape. */
static int scaled_const(const dgc_graph *g, int32_t v, int32_t *c,
                        double *scale)
{
    const dgc_node *n = &g->nodes[v];
    *scale = 1.0;
    *c = v;
    if (const_tensor(n))
        return 0;
    if (!op_is(n, "Mul") || n->n_inputs != 2)
        return -1;
    for (int k = 0; k < 2; k++) {
        const dg_tensor *t = const_tensor(&g->nodes[n->inputs[k].node]);
        if (t && (t->dtype == DG_F32 || t->dtype == DG_F64) &&
            scalar_of(g, n->inputs[1 - k].node, 0, scale) == 0) {
            *c = n->inputs[k].node;
            return 0;
        }
    }
    return -1;
}

static void shape_text(const dg_shape *s, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < s->rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "",
                              (long long)s->dims[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
}

static int attr_shape(const dgc_node *n, dg_shape *s)
{
    const dgc_attr *a = dgc_node_attr(n, "shape");
    memset(s, 0, sizeof *s);
    if (!a || a->n > DG_MAX_RANK)
        return 0;
    s->rank = a->n;
    memcpy(s->dims, a->ints, sizeof(int64_t) * (size_t)a->n);
    return 1;
}

/* The initial value's dtype and shape must be the Variable's. */
static dg_status check_like(const dgc_node *n, const dgc_node *src,
                            dg_dtype t, const dg_shape *s, dg_error *err)
{
    const dgc_attr *dt = dgc_node_attr(n, "dtype");
    dg_shape vs;
    if (dt && (dg_dtype)dt->i != t)
        return GE("node '%s': its initial value '%s' is %s but the variable "
                  "is %s", n->name, src->name, dg_dtype_name(t),
                  dg_dtype_name((dg_dtype)dt->i));
    if (attr_shape(n, &vs) && (vs.rank != s->rank ||
                               memcmp(vs.dims, s->dims,
                                      sizeof(int64_t) * (size_t)s->rank))) {
        char x[200], y[200];
        shape_text(s, x, sizeof x);
        shape_text(&vs, y, sizeof y);
        return GE("node '%s': its initial value '%s' has shape %s but the "
                  "variable has shape %s", n->name, src->name, x, y);
    }
    return DG_OK;
}

dg_status dgc_gd_variable_init(dgc_graph *g, int32_t id, dg_error *err)
{
    dgc_node *n = &g->nodes[id];
    dgc_attr a;
    memset(&a, 0, sizeof a);
    a.key = "init";
    a.kind = DGC_A_INIT;
    a.init.kind = DGC_INIT_ZEROS;
    dg_dtype vt = DG_F32;
    dg_shape vs;
    int have = 0; /* the initial value gave dtype and shape */
    char an[1024];
    snprintf(an, sizeof an, "%s/Assign", n->name);
    int32_t as = dgc_graph_find(g, an);
    const dgc_node *asn = as >= 0 ? &g->nodes[as] : NULL;
    if (asn && op_is(asn, "Assign") && asn->n_inputs == 2 &&
        asn->inputs[0].node == id) {
        int32_t v = asn->inputs[1].node, r, c;
        const dgc_node *src = &g->nodes[v];
        double scale, offset;
        const dg_tensor *t = scaled_const(g, v, &c, &scale) == 0
                                 ? const_tensor(&g->nodes[c])
                                 : NULL;
        dg_status st = DG_OK;
        if (t) {
            if (!(st = check_like(n, src, t->dtype, &t->shape, err))) {
                dg_tensor *cp = dg_tensor_new(t->dtype, &t->shape);
                if (!cp)
                    return dg_err_nomem(err, "init");
                int64_t ne = dg_shape_numel(&t->shape);
                memcpy(cp->data, t->data, (size_t)ne * dg_dtype_size(t->dtype));
                for (int64_t i = 0; i < ne && scale != 1.0; i++) {
                    if (t->dtype == DG_F32)
                        ((float *)cp->data)[i] *= (float)scale;
                    else
                        ((double *)cp->data)[i] *= scale;
                }
                a.init.kind = DGC_INIT_VALUE;
                a.init.value = cp;
                vt = t->dtype;
                vs = t->shape;
                have = 1;
            }
        } else if (affine_random(g, v, &r, &scale, &offset) == 0) {
            const dgc_node *rn = &g->nodes[r];
            const dgc_attr *rd = dgc_node_attr(rn, "dtype");
            vt = rd ? (dg_dtype)rd->i : DG_F32;
            have = attr_shape(rn, &vs);
            if (have && !(st = check_like(n, src, vt, &vs, err))) {
                if (op_is(rn, "RandomUniform")) {
                    a.init.kind = DGC_INIT_RANDOM_UNIFORM;
                    a.init.a = scale < 0 ? offset + scale : offset;
                    a.init.b = scale < 0 ? offset : offset + scale;
                } else {
                    a.init.kind = op_is(rn, "TruncatedNormal")
                                      ? DGC_INIT_TRUNCATED_NORMAL
                                      : DGC_INIT_RANDOM_NORMAL;
                    a.init.a = offset;
                    a.init.b = fabs(scale);
                }
            }
        }
        if (st)
            return st;
    }
    if (!have && !dgc_node_attr(n, "shape"))
        return GE("node '%s': VariableV2 needs a fully known 'shape' (or an "
                  "initial value assigned by '%s')", n->name, an);
    if (have && !dgc_node_attr(n, "shape") && dgc_node_set_shape(n, "shape", &vs))
        goto nomem;
    if (!dgc_node_attr(n, "dtype") && dgc_node_set_dtype(n, "dtype", vt))
        goto nomem;
    if (dgc_node_set_attr(n, &a))
        goto nomem;
    return DG_OK;
nomem:
    dg_tensor_free(a.init.value);
    return dg_err_nomem(err, "init");
}

dg_status dgc_gd_fill(dgc_graph *g, int32_t id, dgc_ref dims, dgc_ref value,
                      int *folded, dg_error *err)
{
    *folded = 0;
    dgc_node *n = &g->nodes[id];
    const dgc_node *dn = &g->nodes[dims.node], *vn = &g->nodes[value.node];
    const dg_tensor *d = const_tensor(dn), *v = const_tensor(vn);
    if (!d || !v)
        return GE("node '%s': Fill is supported only with Const inputs (dims "
                  "'%s', value '%s')", n->name, dn->name, vn->name);
    if ((d->dtype != DG_I32 && d->dtype != DG_I64) || d->shape.rank != 1 ||
        d->shape.dims[0] > DG_MAX_RANK)
        return GE("node '%s': Fill dims '%s' must be an int vector of at most "
                  "%d entries", n->name, dn->name, DG_MAX_RANK);
    if (dg_shape_numel(&v->shape) != 1 || v->shape.rank != 0)
        return GE("node '%s': Fill value '%s' must be a scalar", n->name,
                  vn->name);
    dg_shape s;
    memset(&s, 0, sizeof s);
    s.rank = (int)d->shape.dims[0];
    int64_t numel = 1;
    for (int i = 0; i < s.rank; i++) {
        s.dims[i] = (int64_t)dg_tensor_elem(d, i);
        if (s.dims[i] < 0 || (s.dims[i] > 0 && numel > (1ll << 31) / s.dims[i]))
            return GE("node '%s': Fill dims '%s': invalid or too large shape",
                      n->name, dn->name);
        numel *= s.dims[i];
    }
    size_t es = dg_dtype_size(v->dtype);
    if ((uint64_t)numel * es > DGC_GD_FILL_FOLD_BYTES)
        return DG_OK; /* too big to hold in the graph: filled at run time */
    dg_tensor *t = dg_tensor_new(v->dtype, &s);
    if (!t)
        return dg_err_nomem(err, "Fill");
    for (int64_t i = 0; i < numel; i++)
        memcpy((char *)t->data + (size_t)i * es, v->data, es);
    if (dgc_node_set_tensor(n, "value", t))
        return dg_err_nomem(err, "Fill");
    *folded = 1;
    return DG_OK;
}
