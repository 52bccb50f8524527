/*
 * tf_bundle.h -- TensorFlow's V2 checkpoint format (the "tensor bundle" of
 * tensorflow/core/util/tensor_bundle): PREFIX.index, a LevelDB table
 * (tf_table.h) mapping each tensor name to a BundleEntryProto (dtype,
 * shape, shard, offset, size, masked CRC-32C of the bytes) with the header
 * (BundleHeaderProto: shard count, endianness, version) under the empty
 * key, and PREFIX.data-SSSSS-of-NNNNN holding the raw little-endian tensor
 * bytes.  Read: any bundle TF writes whose tensors dgrun has dtypes for
 * (others are listed and refused only when asked for); written: one shard,
 * no padding, as tf.compat.v1.train.Saver writes it.  A partitioned
 * variable is a full entry (dtype, full shape, its slices' extents, no
 * bytes) and one entry per slice under TF's ordered-code key of name and
 * extents (dgr_bundle_slice_key; tensor_slice_util / OrderedCode).
 */
#ifndef DGR_TF_BUNDLE_H
#define DGR_TF_BUNDLE_H

#include <stdint.h>
#include <stdio.h>

#include "dg_error.h"

/* TF's DataType numbers of dgrun's dtypes */
enum {
    DGR_TF_FLOAT = 1,
    DGR_TF_DOUBLE = 2,
    DGR_TF_INT32 = 3,
    DGR_TF_INT64 = 9,
    DGR_TF_BOOL = 10
};

/* A slice of a partitioned variable: per dimension its start and length
 * (-1: the whole dimension), TF's TensorSlice. */
typedef struct dgr_bundle_slice {
    int64_t start[DG_MAX_RANK];
    int64_t len[DG_MAX_RANK];
} dgr_bundle_slice;

typedef struct dgr_bundle_entry {
    char *key;          /* the tensor's name (a Variable's node name), or a
                           slice's key (binary: holds NUL bytes) */
    size_t klen;        /* bytes of key */
    char *label;        /* a slice entry's name for messages ("w (slice
                           2,2:0,4)"); NULL: key is printable */
    int tf_dtype;       /* TF DataType */
    int rank;           /* 0..DG_MAX_RANK, or -1: more dims than dgrun has */
    int64_t dims[DG_MAX_RANK];
    int32_t shard;
    int64_t offset, size;
    uint32_t crc;       /* CRC-32C of the bytes (unmasked) */
    int sliced;         /* a partitioned variable's full entry: its slices
                           are entries of their own, it has no bytes */
    int32_t n_slices;
    dgr_bundle_slice *slices; /* the extents of its slices (rank each) */
} dgr_bundle_entry;

typedef struct dgr_bundle {
    char *prefix;
    char *index_path;
    int32_t num_shards;
    int has_step;           /* the header holds dgrun's step (dgrun wrote it) */
    int64_t step;
    dgr_bundle_entry *ents; /* sorted by key, header not included */
    int32_t n;
    int *fds;               /* data shards opened so far (-1: not yet) */
} dgr_bundle;

/* Parse an index file's bytes (index_path names it in errors; prefix is
 * where the data shards are).  verify = 0 skips the table's block
 * checksums (fuzzing).  A damaged table, a missing or unparsable header
 * or entry, a big-endian bundle, a version dgrun cannot read, a negative
 * dimension: DG_E_GRAPH naming index_path (and the entry); DG_E_NOMEM. */
dg_status dgr_bundle_parse_index(const uint8_t *buf, size_t len, int verify,
                                 const char *index_path, const char *prefix,
                                 dgr_bundle *b, dg_error *err);
/* Read PREFIX.index and parse it; DG_E_IO when it cannot be read. */
dg_status dgr_bundle_open(const char *prefix, dgr_bundle *b, dg_error *err);
void dgr_bundle_free(dgr_bundle *b);

/* The entry for key, or NULL (binary search); _n: a key of klen bytes. */
const dgr_bundle_entry *dgr_bundle_find(const dgr_bundle *b, const char *key);
const dgr_bundle_entry *dgr_bundle_find_n(const dgr_bundle *b, const char *key,
                                          size_t klen);

/* The name e is given in messages (its key, or a slice's label). */
const char *dgr_bundle_entry_name(const dgr_bundle_entry *e);

/* The key TF stores slice sl of the rank-`rank` tensor `name` under
 * (checkpoint::EncodeTensorNameSlice: OrderedCode of 0, the name, the
 * rank, then each dimension's start and length, signed): dg_malloc'd,
 * *klen bytes (it holds NULs; NUL-terminated besides); NULL on nomem. */
char *dgr_bundle_slice_key(const char *name, int rank,
                           const dgr_bundle_slice *sl, size_t *klen);

/* dgrun's dtype for a TF DataType (-1: none), and back. */
int dgr_bundle_dg_dtype(int tf_dtype);
int dgr_bundle_tf_dtype(dg_dtype t);
/* TF's name of a DataType ("float", "double", "int32", ...; DataTypeString). */
const char *dgr_bundle_dtype_name(int tf_dtype);

/* The data shard file of entry e: "PREFIX.data-00000-of-00001"
 * (dg_malloc'd; NULL on nomem). */
char *dgr_bundle_shard_path(const char *prefix, int32_t shard, int32_t n);

/* Read entry e's bytes into dst (e->size bytes, which must equal the
 * element count x dtype size) and check their CRC.  DG_E_GRAPH naming the
 * shard file and the key: a size that does not fit the shape, a shard that
 * is missing or shorter than the entry (truncated), a checksum mismatch
 * (TF's words); DG_E_IO when the shard cannot be read. */
dg_status dgr_bundle_read(dgr_bundle *b, const dgr_bundle_entry *e,
                          void *dst, dg_error *err);
/* The same checks without keeping the bytes (read through a 1 MiB
 * buffer): a restore checks every entry first, then reads them one by one
 * through one buffer, so it never holds more than the largest. */
dg_status dgr_bundle_check(dgr_bundle *b, const dgr_bundle_entry *e,
                           dg_error *err);
/* dgr_bundle_read of an entry dgr_bundle_check passed on this bundle: the
 * same open shard file (writers replace files by renaming, never in
 * place), so its CRC is not computed again. */
dg_status dgr_bundle_read_checked(dgr_bundle *b, const dgr_bundle_entry *e,
                                  void *dst, dg_error *err);

/* ---- writing ------------------------------------------------------------ */

typedef struct dgr_bundle_writer {
    char *prefix;
    char *data_tmp, *index_tmp;  /* "<file>.tmp.<pid>" beside the files */
    FILE *data;
    int64_t size;                /* bytes in the data shard so far */
    int64_t step;                /* written in the header; -1: none */
    dgr_bundle_entry *ents;
    int32_t n, cap;
    int bad;                     /* a write failed (errno kept in err_no) */
    int err_no;
} dgr_bundle_writer;

/* Start a bundle at prefix (the data shard's temporary is created; the
 * directory must exist); step >= 0 goes into the header (dgrun's field).
 * DG_E_IO naming the file. */
dg_status dgr_bundle_writer_open(dgr_bundle_writer *w, const char *prefix,
                                 int64_t step, dg_error *err);
/* Append a tensor (C-order bytes of shape's element count x dtype size).
 * Names must be unique and must not be empty. */
dg_status dgr_bundle_writer_add(dgr_bundle_writer *w, const char *name,
                                dg_dtype dtype, const dg_shape *shape,
                                const void *data, dg_error *err);
/* Append slice sl (every length given) of the variable `full` of shape
 * full_shape: as TF's BundleWriter::AddSlice, a slice covering the whole
 * tensor is a plain entry under `full`; else `full`'s entry (dtype, full
 * shape, the slices in the order added) and the slice's bytes (C order,
 * of the slice's shape) under dgr_bundle_slice_key.  DG_E_RUNTIME when
 * the slice does not fit full_shape or full was added with another dtype
 * or shape; DG_E_NOMEM. */
dg_status dgr_bundle_writer_add_slice(dgr_bundle_writer *w, const char *full,
                                      const dg_shape *full_shape,
                                      const dgr_bundle_slice *sl,
                                      dg_dtype dtype, const void *data,
                                      dg_error *err);
/* Write the index, fsync both files, rename the data shard then the index
 * into place and fsync the directory.  A crash between the two renames
 * leaves the complete new index as its temporary, which
 * dgr_bundle_recover puts in place.  On failure the temporaries are
 * removed and the previous files at prefix are untouched. */
dg_status dgr_bundle_writer_finish(dgr_bundle_writer *w, dg_error *err);
/* Give up: remove the temporaries and free w (also after finish). */
void dgr_bundle_writer_free(dgr_bundle_writer *w);

/* Complete or undo the saves to prefix that crashed (their writer process
 * is gone): an index temporary whose data shard was already renamed into
 * place is renamed too (roll forward); the other temporaries of dead
 * writers are removed.  Best effort; call before reading or writing
 * prefix. */
void dgr_bundle_recover(const char *prefix);

/* Remove the files of the bundle at prefix (index and every data shard);
 * best effort. */
void dgr_bundle_remove(const char *prefix);

/* Serialize an index built from these entries (tests and the writer):
 * *out (dg_malloc'd) and *len.  Entries in any order; block_size 0 =
 * TF's; step >= 0 goes into the header. */
dg_status dgr_bundle_build_index(const dgr_bundle_entry *ents, int32_t n,
                                 size_t block_size, int64_t step, char **out,
                                 size_t *len, dg_error *err);

#endif
