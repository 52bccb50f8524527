/*
 * tf_table.h -- the LevelDB table format TensorFlow keeps its checkpoint
 * index in (tensorflow/core/lib/io: table_builder, block_builder, format):
 * sorted key/value pairs in prefix-compressed blocks with restart points,
 * each block followed by a type byte and a masked CRC-32C, an index block
 * of block handles, an (empty) metaindex block and a 48-byte footer ending
 * in the table magic.  Only uncompressed blocks (what TF's checkpoints
 * use) are read and written.
 */
#ifndef DGR_TF_TABLE_H
#define DGR_TF_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "dg_error.h"
#include "dg_util.h"

/* One pair of a parsed table; the key is copied (NUL-terminated, a table
 * key may hold NUL bytes: klen counts them), the value points into the
 * buffer given to dgr_table_parse. */
typedef struct dgr_table_kv {
    char *key;
    size_t klen;
    const uint8_t *val;
    size_t vlen;
} dgr_table_kv;

/* Parse the whole table in buf[0..len): every pair of every data block in
 * key order into *kvs (dg_malloc'd, *n pairs; free with dgr_table_free).
 * verify = 0 skips the block checksums (fuzzing).  Damage -- a bad magic,
 * a block handle outside the file, a checksum mismatch, a compressed
 * block, a malformed block or entry, keys out of order -- is DG_E_GRAPH
 * "<what>: checkpoint index is corrupt: <reason>" (TF's wording for the
 * reason); nothing is allocated then. */
dg_status dgr_table_parse(const uint8_t *buf, size_t len, int verify,
                          const char *what, dgr_table_kv **kvs, int32_t *n,
                          dg_error *err);
void dgr_table_free(dgr_table_kv *kvs, int32_t n);

/* Build a table in memory.  Add keys in strictly increasing byte order
 * (memcmp, shorter first); block_size 0 means TF's 256 KiB. */
/* A block being filled (prefix-compressed entries, restart points every
 * `interval` entries). */
typedef struct dgr_table_block {
    dg_sbuf buf;
    dg_sbuf last;         /* the block's last key */
    uint32_t *restarts;
    int32_t n_restarts, cap_restarts;
    int counter, interval;
} dgr_table_block;

typedef struct dgr_table_builder {
    dg_sbuf out;          /* the file so far */
    dgr_table_block data, index;
    dg_sbuf last;         /* the table's last key */
    size_t block_size;
    int64_t entries;
    int pending;          /* a written data block waits for its index entry */
    uint64_t pend_off, pend_size;
    int bad;              /* 1 out of memory, 2 keys out of order */
} dgr_table_builder;

void dgr_table_builder_init(dgr_table_builder *b, size_t block_size);
void dgr_table_add(dgr_table_builder *b, const char *key, size_t klen,
                   const void *val, size_t vlen);
/* Finish the table: *out (dg_malloc'd) and *len are the file's bytes.
 * DG_E_NOMEM, or DG_E_RUNTIME for keys added out of order. */
dg_status dgr_table_finish(dgr_table_builder *b, char **out, size_t *len,
                           dg_error *err);
void dgr_table_builder_free(dgr_table_builder *b);

#endif
