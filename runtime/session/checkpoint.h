/*
 * checkpoint.h -- saving and restoring every Variable of a session (weights,
 * optimizer slots, the global step) to one checksummed file, written
 * atomically.  Format: docs/checkpoints.md.
 */
#ifndef DGR_CHECKPOINT_H
#define DGR_CHECKPOINT_H

#include "session.h"

/* The checkpoint file for `spec`: relative to the graph file's directory
 * when graph_path is non-NULL (graph's "checkpoint.path"), else as given
 * (--checkpoint); an existing directory gets "/model.ckpt" appended.
 * malloc'd (dg_free), NULL on nomem. */
char *dgr_checkpoint_file(const char *graph_path, const char *spec);

/* Write all Variables and `step` to path ("<path>.tmp.<pid>" in the same
 * directory, fsync, rename, fsync of the directory; the first save of a
 * process also removes temporaries of dead writers).  DG_E_IO naming the
 * path on failure; path is then left as it was. */
dg_status dgr_checkpoint_save(dgr_session *s, const char *path, int64_t step,
                              dg_error *err);

/* Read path, verify its checksum, and overwrite every Variable of the
 * graph with its saved value; *step receives the saved step.  A file that
 * cannot be opened or read is DG_E_IO; a truncated or corrupt file, a
 * missing Variable or a dtype/shape mismatch is DG_E_GRAPH (bad input,
 * exit 2), each naming the path; nothing is written to the session unless
 * all checks pass.  (dg_session_train skips the restore when path does not
 * exist: training starts fresh.) */
dg_status dgr_checkpoint_restore(dgr_session *s, const char *path,
                                 int64_t *step, dg_error *err);

#endif
