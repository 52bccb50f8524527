/*
 * infer_table.c -- dgc_op_infer: the `infer` column of ops.def, the shape
 * function of each op by op id.  ir/ops.c builds the rest of each row; this
 * layer (infer/) owns the column, so the op table calls nothing above it.
 */
#include "infer.h"
#include "infer_cflow.h"
#include "infer_nn.h"

const dgc_infer_fn dgc_op_infer[DGC_N_OPS] = {
#define DGC_OP(name, alias, min_in, max_in, n_out, dtypes, flags, attrs, \
               infer, doc)                                              \
    [DGC_OPID_##name] = infer,
#include "ops.def"
#undef DGC_OP
};
