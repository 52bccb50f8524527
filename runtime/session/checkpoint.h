/*
 * checkpoint.h -- saving and restoring every Variable of a session (weights,
 * optimizer slots, the global step): TensorFlow's V2 checkpoint format,
 * written atomically, with TF's `checkpoint` state file; dgrun's earlier
 * single-file format is still read.  Docs: docs/checkpoints.md.
 */
#ifndef DGR_CHECKPOINT_H
#define DGR_CHECKPOINT_H

#include "session.h"

/* Where checkpoints go for `spec`: relative to the graph file's directory
 * when graph_path is non-NULL (graph's "checkpoint.path"), else as given
 * (--checkpoint).  A directory (spec ending in '/', or an existing one)
 * is a checkpoint_dir and comes back with a trailing '/'; anything else is
 * a checkpoint prefix.  dg_malloc'd (dg_free), NULL on nomem. */
char *dgr_checkpoint_file(const char *graph_path, const char *spec);

/* Write all Variables and `step` as TF's checkpoint: at the prefix loc,
 * or in the checkpoint_dir loc as loc/model.ckpt-STEP keeping the newest 5
 * (older ones listed in the state file are deleted).  Then the state file
 * `checkpoint` in that directory names it.  Each file goes through
 * "<file>.tmp.<pid>", fsync, rename, fsync of the directory; missing
 * directories are made.  *saved (may be NULL) receives the prefix written
 * (dg_malloc'd).  DG_E_IO naming the path on failure; the previous
 * checkpoint is then left as it was.  Collective in a cluster (rank 0
 * writes). */
dg_status dgr_checkpoint_save(dgr_session *s, const char *loc, int64_t step,
                              char **saved, dg_error *err);

/* Whether loc holds a checkpoint to restore (a prefix with its .index, a
 * dgrun checkpoint file, a checkpoint_dir with a state file or model.ckpt);
 * completes a save that crashed between its renames first. */
int dgr_checkpoint_exists(const char *loc);

/* Read the checkpoint at loc (for a checkpoint_dir, the newest its state
 * file names), check it, and overwrite every Variable of the graph with its
 * saved value; *step receives the saved step.  A file that cannot be
 * opened or read is DG_E_IO; a damaged checkpoint (corrupt index, checksum
 * mismatch, truncated shard), a missing Variable or a dtype/shape mismatch
 * is DG_E_GRAPH (bad input, exit 2), naming the file and the variable in
 * TF's words; nothing is written to the session unless all checks pass.
 * Entries the graph has no Variable for are ignored, as TF's Saver
 * does. */
dg_status dgr_checkpoint_restore(dgr_session *s, const char *loc,
                                 int64_t *step, dg_error *err);

#endif
