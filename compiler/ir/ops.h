/*
 * ops.h -- the op table (ops.def): one row per op type, read by the loader
 * (arity, attributes), shape inference, the gradient pass, `dgrun ops` and
 * the runtime.  Each row also names the op's shape function; that column
 * belongs to infer/ (dgc_op_infer, infer/infer.h), so this layer calls
 * nothing above it.  Which devices can run an op is not here: each runtime
 * backend's kernel registry says so, and reaches placement as the kernel
 * set of each device in the device list (struct dg_kernel_set below).
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
    DGC_OP_SOURCE     = 1u << 4, /* takes no data inputs */
    DGC_OP_NOT_DIFF   = 1u << 5, /* gradient through it is an error */
    DGC_OP_ZERO_GRAD  = 1u << 6, /* differentiable with zero gradient
                                    (ArgMax, Equal: no gradient flows) */
    DGC_OP_FEED       = 1u << 7, /* Placeholder; PlaceholderWithDefault
                                    (an input: when not fed it is that
                                    input, an Identity) */
    DGC_OP_RANDOM     = 1u << 8, /* RandomNormal / RandomUniform /
                                    TruncatedNormal: float samples of a
                                    shape (attr, or input 0 at run time) */
    DGC_OP_HOST_IN    = 1u << 9, /* its output shape depends on the VALUES
                                    of small integer inputs (TF's
                                    HostMemory parameters: Reshape's shape,
                                    Tile's multiples, Fill's dims): the
                                    runtime hands their elements to the
                                    infer function (dgc_ttype.value) */
    DGC_OP_HOST_OK    = 1u << 10, /* TF runs it on GPUs with its integer
                                    tensors in host memory (Shape, int32
                                    shape arithmetic): where a device has
                                    no kernel for a node of it (int dtype,
                                    or Shape/Size/Rank), the node does not
                                    constrain its colocation group and runs
                                    on its task's CPU (dgc_op_host_mem) */
    /* control flow (issue 11) */
    DGC_OP_CONTROL_FLOW = 1u << 12, /* the plan runs on the executor with
                                       frames (runtime/exec/exec_frames.c) */
    DGC_OP_RESOURCE   = 1u << 13, /* TensorArray / stack op: the executor
                                     runs it on a per-run resource */
    DGC_OP_SUMMARY    = 1u << 14, /* TF summary op: loaded without its
                                     string inputs, a CPU no-op giving an
                                     empty int32 [0] (docs/graphdef.md) */
};

/* Shape and dtype inference.  `in` are the static types of the inputs (dims
 * may be -1 at compile time; at run time they are concrete and the runtime
 * calls the same function to size outputs).  Writes n_out types to `out`.
 * Returns 0, or -1 with a reason (without the node name) in msg. */
typedef int (*dgc_infer_fn)(const dgc_node *n, const dgc_ttype *in, int n_in,
                            dgc_ttype *out, char *msg, size_t msgsz);

/* Op ids: DGC_OPID_<Name>, in ops.def order; DGC_N_OPS of them. */
enum dgc_op_id {
#define DGC_OP(name, ...) DGC_OPID_##name,
#include "ops.def"
#undef DGC_OP
    DGC_N_OPS
};

/* One attribute of an op's schema (ops.c): how loaders decode it and the
 * default the passes and kernels use when a graph leaves it out. */
enum {
    DGC_AS_TF_REQUIRED = 1u << 0, /* TF's OpDef has no default for it */
    DGC_AS_INTERNAL    = 1u << 1, /* set by a pass, never read from a file */
};
typedef struct dgc_attr_spec {
    const char *name;       /* NULL ends a schema */
    dgc_attr_id id;         /* DGC_AT_<name> (attr_names.def) */
    dgc_attr_kind type;     /* DGC_A_*: how the loaders decode it */
    const char *dflt;       /* default as text, NULL: none (absent) */
    unsigned flags;         /* DGC_AS_* */
} dgc_attr_spec;

/* Arity kinds: ops.def's max_in and n_out columns name them. */
enum {
    DGC_IN_ANY = -1,                  /* max_in: any number of inputs */
    DGC_OUT_PER_INPUT = -1,           /* n_out: one per data input (ShapeN) */
    DGC_OUT_NUM_ATTR = -2,            /* n_out: attr `num` (Unpack, Split,
                                         SplitV) */
    DGC_OUT_PER_INPUT_BUT_FIRST = -3, /* n_out: one per data input but the
                                         first (ConcatOffset) */
};

typedef struct dgc_op_def {
    const char *name;
    const char *alias;      /* NULL or alternative name (AddV2, VariableV2) */
    int min_in, max_in;     /* data inputs; max_in DGC_IN_ANY: unbounded */
    int n_out;              /* a count, or an arity kind (DGC_OUT_*) */
    uint32_t dtypes;        /* mask of 1u << dg_dtype the op supports (for its
                               "T", see dgc_op_kernel_dtype) */
    uint32_t flags;         /* DGC_OP_* */
    const dgc_attr_spec *attrs; /* its attribute schema ({NULL}-ended); every
                               op also takes "dtype" */
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
/* The op a user sees for n: the op it had before constant folding made it
 * a Const (fold.c), else dgc_node_op_name. */
const char *dgc_node_user_op_name(const dgc_node *n);
/* Outputs of node n: its op's n_out, or what its arity kind says
 * (DGC_OUT_*: per data input, attr `num`, per data input but the
 * first). */
int dgc_node_n_out(const dgc_node *n);
/* The input that gives a ConcatV2 / Split / SplitV / GatherV2 node its
 * axis at run time (a GraphDef's non-Const axis, issue 21): when the node
 * has no `axis` attr, ConcatV2's last input (of at least 2), Split's input
 * 1, SplitV's and GatherV2's input 2; else -1 (the axis is the attr). */
int dgc_node_axis_input(const dgc_node *n);
/* The schema of attr `name` of op, NULL when the op has none of that
 * name ("dtype", which every op takes, is in no schema). */
const dgc_attr_spec *dgc_op_attr(int op, const char *name);
/* The attr of op (or "dtype") closest to a misspelt `name` (at most two
 * edits away), NULL if none: for "did you mean" in errors. */
const char *dgc_op_attr_near(int op, const char *name);
/* Convenience: flags test. */
int dgc_op_has(int op, uint32_t flag);
/* How many leading inputs of a state op are reference inputs it updates
 * in place (the variable, then its slots: ApplyMomentum 2, ApplyAdam 3,
 * ...); 0 for other ops. */
int dgc_op_n_refs(int op);
/* Where an optimizer update op (n_in inputs) takes its gradient: returns
 * the gradient's input index and sets *indices to that of the sparse
 * updates' row indices (SparseApply*), -1 for a dense update.  Every other
 * input from dgc_op_n_refs(op) on is a scalar hyper-parameter. */
int dgc_op_apply_layout(int op, int n_in, int *indices);
/* The dense update whose element formula a SparseApply* op applies to its
 * rows (SparseApplyFtrl -> ApplyFtrl); op itself for any other op. */
int dgc_op_apply_dense(int op);

/* TF's OpDef attributes (compiler/ir/tf_attrs.def, generated from TF's op
 * registry by tools/tf_attrs/gen_tf_attrs.py) of TF op `tf_op` as a
 * GraphDef spells it: -1 when the table has no such op (not a TF op, or a
 * TF-internal one); 0 when TF's OpDef has no attr `attr`; 1 when it has,
 * with *kind the AttrValue field that holds it ("b", "i", "f", "s",
 * "type", "shape", "tensor", "func", "list"). */
int dgc_tf_attr_kind(const char *tf_op, const char *attr, const char **kind);

/* TensorFlow's GPU kernels (compiler/ir/tf_gpu_kernels.def, generated
 * from the CUDA build's kernel registry by
 * tools/tf_gpu_kernels/gen_tf_gpu_kernels.py) for TF op `tf_op`: 1 with
 * *dtypes the dgrun dtypes of its type attr TF has a GPU kernel for
 * ("float32,int64,...", "*" any, "" none) and *host (if host is not NULL)
 * the args TF keeps in host memory per dtype ("int32:x,y;...") and *arg
 * (if not NULL) the node arg whose dtype is the type attr's ("in:K",
 * "out:K", "" none); -1 when
 * the table has no such op.  `dgrun ops` shows it; placement reads it
 * through dgc_op_gpu_placeable (SPEC 4.7). */
int dgc_tf_gpu_kernel(const char *tf_op, const char **dtypes,
                      const char **host, const char **arg);
/* The TF GPU kernel row of dgrun op `op` (looked up by its name, then its
 * alias): 1 with *dtypes / *host as dgc_tf_gpu_kernel gives them, -1 when
 * TF has no op of either name (dgrun's own ops). */
int dgc_op_tf_gpu_row(int op, const char **dtypes, const char **host,
                      const char **arg);

/* The dtype that selects a node's kernel ("T"): its first input's dtype
 * when it has inputs (ArgMax, Equal, Cast: the input's), else its output 0
 * dtype (Const, Variable, Placeholder, Random*), or -1 for NoOp. Needs
 * shape inference to have run. */
int dgc_op_kernel_dtype(const dgc_graph *g, const dgc_node *n);

/* What one kind of device can run (SPEC 4.7), made by a runtime backend
 * from its kernel registry (runtime/core/backend.h), which is the one source
 * of kernel availability: dtypes[op] has bit (1u << dtype) for every kernel
 * dtype ("T", dgc_op_kernel_dtype) the backend runs the op in, and
 * DGC_KS_ROW when the backend has the op at all (what counts for NoOp,
 * which has no dtype).  float64 bits hold only on devices that report fp64.
 * The compiler reads it through the device list it is given
 * (dg_device_info.kernels), so placement never includes the runtime. */
#define DGC_KS_ROW (1u << 31)
struct dg_kernel_set {
    const char *backend;        /* "cpu", "opencl" */
    uint32_t dtypes[DGC_N_OPS];
    /* kernel dtypes of ops the backend has no kernel for and runs in host
     * memory through the host's kernel, on behalf of its device (SPEC 4.7:
     * TF places them there; dgc_placer_commit keeps such a node placed on
     * the device and runs it on the CPU of the device's task) */
    uint32_t host[DGC_N_OPS];
};

/* Whether a device with kernel set ks (and fp64 support as given) has a
 * kernel for node n: a row for its op and, when the node has a kernel
 * dtype, that dtype (float64 only when fp64).  NULL ks: no kernels. */
int dgc_op_has_kernel(const dgc_graph *g, const dgc_node *n,
                      const dg_kernel_set *ks, int fp64);

/* Whether node n can be placed on a GPU (SPEC 4.7): whether TensorFlow
 * registers a GPU kernel for its op and the dtype of TF's type attr
 * (dgc_op_tf_gpu_row; float64 only when fp64), except what the contract
 * fixes (dgc_op_no_gpu); a value folded at compile time fits anywhere.
 * An op TF does not have (dgrun's own) is placeable where dgrun's kernel
 * set ks has it (dgc_op_has_kernel) or it runs in host memory
 * (dgc_op_host_mem).  Where dgrun itself then runs it is the runtime's
 * business (an OpenCL kernel, host memory, or a run-time error). */
int dgc_op_gpu_placeable(const dgc_graph *g, const dgc_node *n,
                         const dg_kernel_set *ks, int fp64);
/* The dtype of node n's TF type attr as tf_gpu_kernels.def locates it
 * (Select's T: its input 1; TensorArrayV3's dtype: its attribute), else
 * its kernel dtype (dgc_op_kernel_dtype); -1 when unknown. */
int dgc_op_tf_dtype(const dgc_graph *g, const dgc_node *n);
/* 1 for the nodes SPEC 4.7 fixes to have no GPU kernel whatever TF has:
 * int32 Variable, Const (not one folded from another op) and Assign,
 * Print and the summary ops.  Those that run in host memory (an int32
 * Const, dgc_op_host_mem) still fit a GPU request, and are shown and run
 * on the CPU of the device's task. */
int dgc_op_no_gpu(const dgc_graph *g, const dgc_node *n);

/* Whether node n runs in host memory wherever its device lacks a kernel
 * (DGC_OP_HOST_OK and an integer kernel dtype, or Shape/Size/Rank, whose
 * outputs are integers). Needs shape inference to have run. */
int dgc_op_host_mem(const dgc_graph *g, const dgc_node *n);

/* `dgrun ops`: one line per op (name, dtypes, CPU and GPU kernels from the
 * kernel sets given, either may be NULL, doc); malloc'd, NULL on nomem. */
char *dgc_ops_render(const dg_kernel_set *cpu, const dg_kernel_set *gpu);
/* The op table as JSON for tools, and as the Markdown table of
 * docs/graphdef.md (issue 22); malloc'd, NULL when out of memory.  The
 * JSON's "grad_rule" is grad_rule[op id] (whether dgrun has a gradient
 * rule for the op; grad/ knows, which ir/ cannot ask), omitted when NULL. */
char *dgc_ops_render_json(const dg_kernel_set *cpu, const dg_kernel_set *gpu,
                          const uint8_t *grad_rule);
char *dgc_ops_render_markdown(const dg_kernel_set *cpu,
                              const dg_kernel_set *gpu);

/* Input ref r of a node is a loop's back edge: it comes from a
 * NextIteration (the passes order the graph without these edges). */
int dgc_cflow_back_edge(const dgc_graph *g, dgc_ref r);

#endif
