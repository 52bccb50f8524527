/*
 * ckpt_slices.h -- partitioned variables in checkpoints (issue 24): which
 * slice of which full variable each part Variable holds, and copying
 * boxes between slices.  tf.compat.v1's `partitioner=` makes Variables
 * `w/part_0..N-1`; TF's checkpoint stores them as one tensor `w` in
 * slices (tf_bundle.h).  A part's slice comes from the graph
 * (dgc_graph_save_slice: a MetaGraphDef's SaveSliceInfoDef), else from
 * the names: Variables `X/part_0..N-1` (N >= 2, contiguous, no Variable X, one
 * dtype and rank, shapes that differ along at most one axis) are the
 * parts of X concatenated along that axis (axis 0 when all shapes are
 * equal: TF's partitioners' default; `guessed`, which a restore corrects
 * from the checkpoint's own slices).  A Variable "P/S" of the shape of
 * a part P named so (an optimizer's slot: "X/part_1/Adam") is that part
 * of "X/S" ("X/Adam"), as TF's slot_creator makes a slot of a part.
 */
#ifndef DGR_CKPT_SLICES_H
#define DGR_CKPT_SLICES_H

#include <stddef.h>
#include <stdint.h>

#include "dg_error.h"
#include "ir.h"

typedef struct dgr_ckpt_part {
    const char *var;        /* the part Variable's (original) name */
    const char *full;       /* the full variable's name: its checkpoint key */
    int rank;
    int64_t full_dims[DG_MAX_RANK];
    int64_t start[DG_MAX_RANK];
    int64_t len[DG_MAX_RANK];    /* the part's shape */
    int index, count;       /* part `index` of `count` (names), else 0, 1 */
    int guessed;            /* the axis was guessed (equal shapes) */
} dgr_ckpt_part;

typedef struct dgr_ckpt_parts {
    dgr_ckpt_part *p;       /* sorted by var */
    int32_t n;
    char *names;            /* storage of the guessed full names */
} dgr_ckpt_parts;

/* Every part Variable of g (replica 0's, by original name), from
 * g->save_slices and the names.  DG_E_NOMEM only. */
dg_status dgr_ckpt_parts_find(const dgc_graph *g, dgr_ckpt_parts *out,
                              dg_error *err);
/* The part Variable `var` is, or NULL (binary search). */
const dgr_ckpt_part *dgr_ckpt_part_of(const dgr_ckpt_parts *ps,
                                      const char *var);
void dgr_ckpt_parts_free(dgr_ckpt_parts *ps);

/* Copy the intersection of two boxes of one rank-`rank` tensor: dst holds
 * the box [dstart, dstart + dlen), src the box [sstart, sstart + slen),
 * both C order, elements of esz bytes.  Returns the elements copied (0
 * when they do not meet). */
int64_t dgr_copy_box(char *dst, const int64_t *dstart, const int64_t *dlen,
                     const char *src, const int64_t *sstart,
                     const int64_t *slen, int rank, size_t esz);

#endif
