/*
 * infer_cflow.c -- inference of the control-flow ops (infer_cflow.h).
 * Ops whose output shape only the run knows (a TensorArray read, a stack
 * pop) take it from an `output_shape` attr (the GraphDef importer sets it
 * from TF's `_output_shapes`) or from `element_shape`.
 */
#include "infer_cflow.h"

#include <stdio.h>
#include <string.h>

#define FAIL(...) do { snprintf(msg, msgsz, __VA_ARGS__); return -1; } while (0)

static void scalar(dgc_ttype *t, dg_dtype d)
{
    memset(t, 0, sizeof *t);
    t->dtype = d;
    t->shape.rank = 0;
}

static int is_scalar_of(const dgc_ttype *t, dg_dtype d)
{
    int64_t n = dg_shape_numel(&t->shape);
    return t->dtype == d && (n == 1 || n < 0);
}

int dgc_infer_switch(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 2)
        FAIL("Switch needs 2 inputs (data, pred), got %d", n_in);
    if (!is_scalar_of(&in[1], DG_BOOL))
        FAIL("pred must be a bool scalar, got %s", dg_dtype_name(in[1].dtype));
    out[0] = in[0];
    out[1] = in[0];
    return 0;
}

int dgc_infer_merge(DGC_INFER_ARGS)
{
    (void)n;
    int first = -1;
    for (int i = 0; i < n_in && first < 0; i++)
        if (in[i].shape.rank >= 0)
            first = i;
    if (first < 0)
        FAIL("Merge needs an input that is not a loop's back edge");
    out[0] = in[first];
    for (int i = 0; i < n_in; i++) {
        if (in[i].shape.rank < 0 || i == first)
            continue;
        if (in[i].dtype != out[0].dtype)
            FAIL("inputs have different dtypes: %s and %s",
                 dg_dtype_name(out[0].dtype), dg_dtype_name(in[i].dtype));
        /* branches of different shapes: the dims that differ are unknown
         * until the run */
        if (in[i].shape.rank != out[0].shape.rank)
            FAIL("inputs have different ranks: %d and %d",
                 out[0].shape.rank, in[i].shape.rank);
        for (int k = 0; k < out[0].shape.rank; k++)
            if (in[i].shape.dims[k] != out[0].shape.dims[k])
                out[0].shape.dims[k] = -1;
    }
    scalar(&out[1], DG_I32);
    return 0;
}

int dgc_infer_loop_cond(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 1 || !is_scalar_of(&in[0], DG_BOOL))
        FAIL("LoopCond needs a bool scalar");
    scalar(&out[0], DG_BOOL);
    return 0;
}

static int handle_in(const dgc_ttype *in, int n_in, char *msg, size_t msgsz)
{
    if (n_in < 1 || !is_scalar_of(&in[0], DGC_HANDLE_DTYPE))
        FAIL("input 0 must be a resource handle (int64 scalar), got %s",
             n_in < 1 ? "none" : dg_dtype_name(in[0].dtype));
    return 0;
}

int dgc_infer_ta(DGC_INFER_ARGS)
{
    if (!is_scalar_of(&in[0], DG_I32) || n_in != 1)
        FAIL("size must be an int32 scalar");
    if (!dgc_node_attr(n, "dtype"))
        FAIL("needs attr dtype");
    scalar(&out[0], DGC_HANDLE_DTYPE);
    scalar(&out[1], DG_F32);
    return 0;
}

/* Output 0's type from attrs: dtype key dk, then output_shape, else
 * lead (if >= 0 a leading dim, -2 none) + element_shape. */
static int typed_from_attrs(const dgc_node *n, const char *dk, int64_t lead,
                            dgc_ttype *out, char *msg, size_t msgsz)
{
    const dgc_attr *dt = dgc_node_attr(n, dk);
    if (!dt || dt->kind != DGC_A_DTYPE)
        FAIL("needs attr %s", dk);
    memset(out, 0, sizeof *out);
    out->dtype = (dg_dtype)dt->i;
    const dgc_attr *os = dgc_node_attr(n, "output_shape");
    const dgc_attr *es = dgc_node_attr(n, "element_shape");
    const dgc_attr *s = os ? os : es;
    if (!s || s->kind != DGC_A_SHAPE)
        FAIL("needs attr element_shape (or output_shape): the element "
             "shape is not known before the run");
    int r = 0;
    if (!os && lead != -2)
        out->shape.dims[r++] = lead;
    if (r + s->n > DG_MAX_RANK)
        FAIL("rank %d is above %d", r + s->n, DG_MAX_RANK);
    for (int i = 0; i < s->n; i++)
        out->shape.dims[r++] = s->ints[i];
    out->shape.rank = r;
    return 0;
}

int dgc_infer_ta_read(DGC_INFER_ARGS)
{
    if (handle_in(in, n_in, msg, msgsz))
        return -1;
    if (!is_scalar_of(&in[1], DG_I32))
        FAIL("index must be an int32 scalar");
    return typed_from_attrs(n, "dtype", -2, out, msg, msgsz);
}

int dgc_infer_ta_gather(DGC_INFER_ARGS)
{
    if (handle_in(in, n_in, msg, msgsz))
        return -1;
    if (in[1].dtype != DG_I32 || in[1].shape.rank != 1)
        FAIL("indices must be an int32 vector");
    return typed_from_attrs(n, "dtype", in[1].shape.dims[0], out, msg,
                            msgsz);
}

int dgc_infer_ta_flow(DGC_INFER_ARGS)
{
    (void)n;
    if (handle_in(in, n_in, msg, msgsz))
        return -1;
    if (in[1].dtype != DG_I32)
        FAIL("index must be int32");
    scalar(&out[0], DG_F32);
    return 0;
}

int dgc_infer_ta_size(DGC_INFER_ARGS)
{
    (void)n;
    if (handle_in(in, n_in, msg, msgsz))
        return -1;
    scalar(&out[0], DG_I32);
    return 0;
}

int dgc_infer_ta_grad(DGC_INFER_ARGS)
{
    (void)n;
    if (handle_in(in, n_in, msg, msgsz))
        return -1;
    scalar(&out[0], DGC_HANDLE_DTYPE);
    scalar(&out[1], DG_F32);
    return 0;
}

int dgc_infer_stack(DGC_INFER_ARGS)
{
    (void)n;
    if (n_in != 1 || !is_scalar_of(&in[0], DG_I32))
        FAIL("max_size must be an int32 scalar");
    scalar(&out[0], DGC_HANDLE_DTYPE);
    return 0;
}

int dgc_infer_stack_push(DGC_INFER_ARGS)
{
    (void)n;
    if (handle_in(in, n_in, msg, msgsz))
        return -1;
    out[0] = in[1];
    return 0;
}

int dgc_infer_stack_pop(DGC_INFER_ARGS)
{
    if (handle_in(in, n_in, msg, msgsz))
        return -1;
    return typed_from_attrs(n, "elem_type", -2, out, msg, msgsz);
}
