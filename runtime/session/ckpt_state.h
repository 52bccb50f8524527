/*
 * ckpt_state.h -- the `checkpoint` state file TensorFlow keeps in a
 * checkpoint directory (tf.train.get_checkpoint_state,
 * tf.train.latest_checkpoint): a text-format CheckpointState proto,
 *
 *   model_checkpoint_path: "model.ckpt-40"
 *   all_model_checkpoint_paths: "model.ckpt-30"
 *   all_model_checkpoint_paths: "model.ckpt-40"
 *
 * paths relative to the directory (or absolute), oldest first.
 */
#ifndef DGR_CKPT_STATE_H
#define DGR_CKPT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "dg_error.h"

typedef struct dgr_ckpt_state {
    char *model;     /* model_checkpoint_path, as written */
    char **all;      /* all_model_checkpoint_paths, oldest first */
    int32_t n_all, cap_all;
} dgr_ckpt_state;

/* Parse state-file text (what names the file in errors).  Other
 * CheckpointState fields (timestamps) are read and ignored; anything that
 * is not text format, or an unknown field: DG_E_GRAPH "<what>: not a
 * checkpoint state file: <reason>". */
dg_status dgr_ckpt_state_parse(const char *text, size_t len, const char *what,
                               dgr_ckpt_state *s, dg_error *err);
/* Read DIR/checkpoint; *found = 0 (and DG_OK) when there is none. */
dg_status dgr_ckpt_state_read(const char *dir, dgr_ckpt_state *s, int *found,
                              dg_error *err);
/* The state as text (dg_malloc'd), TF's text format with C escapes. */
char *dgr_ckpt_state_text(const dgr_ckpt_state *s);
/* Write DIR/checkpoint atomically (temporary, fsync, rename, fsync of the
 * directory).  DG_E_IO naming the file. */
dg_status dgr_ckpt_state_write(const char *dir, const dgr_ckpt_state *s,
                               dg_error *err);
/* Append a copy of path to s->all; -1 on nomem. */
int dgr_ckpt_state_push(dgr_ckpt_state *s, const char *path);
void dgr_ckpt_state_free(dgr_ckpt_state *s);

/* A state-file path joined to its directory: absolute paths as they are,
 * others as DIR/path (dg_malloc'd). */
char *dgr_ckpt_state_join(const char *dir, const char *path);

#endif
