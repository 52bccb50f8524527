/*
 * ops.h -- the op table: one row per op type, read by the loader (arity,
 * attributes), shape inference, placement (kernel availability), the
 * gradient pass, `dgrun ops`, and the runtime's kernel registry, which must
 * provide a kernel for every (op, device type) the table claims (a unit test
 * checks this).  A fact about an op lives here and nowhere else.
 */
#ifndef DGC_OPS_H
#define DGC_OPS_H

#include "ir.h"

/* Op flags. */
enum {
    DGC_OP_STATEFUL   = 1u << 0, /* never pruned/merged; has side effects */
    DGC_OP_VARIABLE   = 1u << 1, /* Variable / VariableV2 */
    DGC_OP_STATE      = 1u << 2, /* first input is a Variable it updates
                                    (Assign*, Apply*, AssignMovingAvg) */
    DGC_OP_CPU_ONLY   = 1u << 3, /* no GPU kernel at all (Print) */
    DGC_OP_SOURCE     = 1u << 4, /* takes no data inputs */
    DGC_OP_NOT_DIFF   = 1u << 5, /* gradient through it is an error */
    DGC_OP_ZERO_GRAD  = 1u << 6, /* differentiable with zero gradient
                                    (ArgMax, Equal: no gradient flows) */
    DGC_OP_FEED       = 1u << 7, /* Placeholder */
    DGC_OP_RANDOM     = 1u << 8  /* RandomNormal / RandomUniform */
};

/* Shape and dtype inference.  `in` are the static types of the inputs (dims
 * may be -1 at compile time; at run time they are concrete and the runtime
 * calls the same function to size outputs).  Writes n_out types to `out`.
 * Returns 0, or -1 with a reason (without the node name) in msg. */
typedef int (*dgc_infer_fn)(const dgc_node *n, const dgc_ttype *in, int n_in,
                            dgc_ttype *out, char *msg, size_t msgsz);

typedef struct dgc_op_def {
    const char *name;
    const char *alias;      /* NULL or alternative name (AddV2, VariableV2) */
    int min_in, max_in;     /* data inputs; max_in < 0 = unbounded */
    int n_out;
    uint32_t dtypes;        /* mask of 1u << dg_dtype the op supports (for its
                               "T", see dgc_op_kernel_dtype) */
    uint32_t flags;         /* DGC_OP_* */
    const char *const *attrs; /* NULL-terminated list of accepted attr keys */
    dgc_infer_fn infer;
    const char *doc;        /* one line for `dgrun ops` */
} dgc_op_def;

extern const dgc_op_def dgc_ops[];
extern const int dgc_n_ops;

/* Op index by name or alias, -1 if unknown. */
int dgc_op_find(const char *name);
/* Canonical op name for index. */
const char *dgc_op_name(int op);
/* The op name to show for a node: as the graph file spelled it (an alias
 * such as VariableV2 stays VariableV2 in logs and outputs). */
const char *dgc_node_op_name(const dgc_node *n);
/* Convenience: flags test. */
int dgc_op_has(int op, uint32_t flag);

/* The dtype that selects a node's kernel ("T"): its first input's dtype
 * when it has inputs (ArgMax, Equal, Cast: the input's), else its output 0
 * dtype (Const, Variable, Placeholder, Random*), or -1 for NoOp. Needs
 * shape inference to have run. */
int dgc_op_kernel_dtype(const dgc_graph *g, const dgc_node *n);

/* Whether device type t has a kernel for node n (SPEC 4.7): CPU always for
 * supported dtypes; GPU for float32, and float64 when fp64, unless the op is
 * CPU only; never for int32 Variable/Const/Assign.  NoOp has both. */
int dgc_op_has_kernel(const dgc_graph *g, const dgc_node *n, dg_devtype t,
                      int fp64);

/* Run the op's infer function on node id (inputs' outputs must be typed);
 * fills node->outputs.  DG_E_GRAPH naming the node on mismatch. */
dg_status dgc_infer_node(dgc_graph *g, int32_t id, dg_error *err);

#endif
