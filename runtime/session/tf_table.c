/*
 * tf_table.c -- reading and writing the LevelDB table format of
 * TensorFlow's checkpoint index (see tf_table.h).  Written from the format
 * as TF's table_builder.cc, block_builder.cc and format.cc define it:
 *
 *   file    = data blocks, metaindex block, index block, footer (48 bytes)
 *   block   = entries, restarts (uint32 each), num_restarts (uint32), then
 *             a trailer: type (1 byte, 0 = uncompressed) and the masked
 *             CRC-32C of the block and its type byte (uint32)
 *   entry   = shared, non_shared, value_len (varint32 each), the key's
 *             non-shared bytes, the value
 *   index   = one entry per data block: a key >= its keys and < the next
 *             block's, value = block handle (offset, size: varint64 each)
 *   footer  = metaindex handle, index handle, zero padding to 40 bytes,
 *             magic 0xdb4775248b80fb57 (low word first)
 *
 * Every integer is little-endian.  The reader bounds every length by the
 * bytes that remain (fuzzed: tests/fuzz/fuzz_tf_index.c).
 */
#include "tf_table.h"
#include "dg_alloc.h"
#include "dg_crc32c.h"

#include <string.h>

#define FOOTER_LEN 48
#define TRAILER_LEN 5
#define MAGIC_LO 0x8b80fb57u
#define MAGIC_HI 0xdb477524u
#define DEFAULT_BLOCK (256u * 1024u)

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void put32(dg_sbuf *b, uint32_t v)
{
    char c[4] = {(char)(v & 0xff), (char)((v >> 8) & 0xff),
                 (char)((v >> 16) & 0xff), (char)(v >> 24)};
    dg_sbuf_addn(b, c, 4);
}

static void put_varint(dg_sbuf *b, uint64_t v)
{
    char c[10];
    int n = 0;
    while (v >= 0x80) {
        c[n++] = (char)(v | 0x80);
        v >>= 7;
    }
    c[n++] = (char)v;
    dg_sbuf_addn(b, c, (size_t)n);
}

/* Decode a varint of at most maxb bytes from *p (< end); 0 on failure. */
static int get_varint(const uint8_t **p, const uint8_t *end, int maxb,
                      uint64_t *v)
{
    uint64_t r = 0;
    for (int i = 0; i < maxb && *p < end; i++) {
        uint8_t c = *(*p)++;
        r |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            if (maxb == 5 && r > 0xffffffffu)
                return 0;
            *v = r;
            return 1;
        }
    }
    return 0;
}

/* ---- reading ------------------------------------------------------------ */

typedef struct reader {
    const uint8_t *buf;
    size_t len;
    int verify;
    dgr_table_kv *kvs;
    int32_t n, cap;
    int oom;
} reader;

/* The contents of the block at handle (off, size), checked; NULL and *why
 * on damage. */
static const uint8_t *read_block(reader *r, uint64_t off, uint64_t size,
                                 const char **why)
{
    if (off > r->len || size > r->len - off ||
        TRAILER_LEN > r->len - off - size) {
        *why = "truncated block read";
        return NULL;
    }
    const uint8_t *p = r->buf + off;
    if (r->verify &&
        dg_crc32c_unmask(le32(p + size + 1)) != dg_crc32c(0, p, (size_t)size + 1)) {
        *why = "block checksum mismatch";
        return NULL;
    }
    if (p[size] == 1) {
        *why = "snappy-compressed block (dgrun reads uncompressed tables, "
               "which TF writes for checkpoints)";
        return NULL;
    }
    if (p[size] != 0) {
        *why = "bad block type";
        return NULL;
    }
    return p;
}

/* Call fn(r, key, klen, val, vlen, why) for every entry of a block (key
 * NUL-terminated, valid until the next entry).  0, or -1 with *why (or
 * r->oom). */
typedef int (*entry_fn)(reader *r, const char *key, size_t klen,
                        const uint8_t *val, size_t vlen, const char **why);

static int each_entry(reader *r, const uint8_t *blk, size_t n, entry_fn fn,
                      const char **why)
{
    if (n < 4) {
        *why = "bad block contents";
        return -1;
    }
    uint32_t nr = le32(blk + n - 4);
    if (nr > (n - 4) / 4) {
        *why = "bad block contents";
        return -1;
    }
    if (nr == 0) /* LevelDB: an empty block */
        return 0;
    const uint8_t *p = blk, *end = blk + (n - 4 - 4 * (size_t)nr);
    size_t klen = 0, cap = 0;
    char *cur = NULL; /* the key being assembled */
    int rc = 0;
    while (p < end && rc == 0) {
        uint64_t shared, non_shared, vlen;
        if (!get_varint(&p, end, 5, &shared) ||
            !get_varint(&p, end, 5, &non_shared) ||
            !get_varint(&p, end, 5, &vlen) || shared > klen ||
            non_shared > (uint64_t)(end - p) ||
            vlen > (uint64_t)(end - p) - non_shared) {
            *why = "bad entry in block";
            rc = -1;
            break;
        }
        size_t need = (size_t)shared + (size_t)non_shared + 1;
        if (need > cap) {
            size_t nc = need < 64 ? 64 : need * 2;
            char *c = dg_realloc(cur, nc);
            if (!c) {
                r->oom = 1;
                rc = -1;
                break;
            }
            cur = c;
            cap = nc;
        }
        memcpy(cur + shared, p, (size_t)non_shared);
        klen = (size_t)(shared + non_shared);
        cur[klen] = '\0';
        p += non_shared;
        rc = fn(r, cur, klen, p, (size_t)vlen, why);
        p += vlen;
    }
    dg_free(cur);
    return rc;
}

/* memcmp order, a prefix first (LevelDB's BytewiseComparator) */
static int keycmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

static int data_entry(reader *r, const char *cur, size_t klen,
                      const uint8_t *val, size_t vlen, const char **why)
{
    if (r->n > 0) {
        const dgr_table_kv *prev = &r->kvs[r->n - 1];
        if (keycmp(prev->key, prev->klen, cur, klen) >= 0) {
            *why = "keys out of order";
            return -1;
        }
    }
    dgr_table_kv *kvs = dg_grow(r->kvs, &r->cap, (int64_t)r->n + 1,
                                sizeof *kvs, 16);
    char *key = kvs ? dg_malloc(klen + 1) : NULL;
    if (kvs)
        r->kvs = kvs;
    if (!key) {
        r->oom = 1;
        return -1;
    }
    memcpy(key, cur, klen + 1);
    r->kvs[r->n++] = (dgr_table_kv){key, klen, val, vlen};
    return 0;
}

static int index_entry(reader *r, const char *key, size_t klen,
                       const uint8_t *val, size_t vlen, const char **why)
{
    (void)key;
    (void)klen;
    const uint8_t *p = val, *end = val + vlen;
    uint64_t off, size;
    if (!get_varint(&p, end, 10, &off) || !get_varint(&p, end, 10, &size)) {
        *why = "bad block handle";
        return -1;
    }
    const uint8_t *blk = read_block(r, off, size, why);
    if (!blk)
        return -1;
    /* keys are checked for order as they come; the index keys are only
     * for seeking, which a reader of the whole table does not need */
    return each_entry(r, blk, (size_t)size, data_entry, why);
}

void dgr_table_free(dgr_table_kv *kvs, int32_t n)
{
    for (int32_t i = 0; kvs && i < n; i++)
        dg_free(kvs[i].key);
    dg_free(kvs);
}

dg_status dgr_table_parse(const uint8_t *buf, size_t len, int verify,
                          const char *what, dgr_table_kv **kvs, int32_t *n,
                          dg_error *err)
{
    *kvs = NULL;
    *n = 0;
    const char *why = NULL;
    reader r = {buf, len, verify, NULL, 0, 0, 0};
    if (len < FOOTER_LEN) {
        why = "file too short to be an sstable";
    } else {
        const uint8_t *f = buf + len - FOOTER_LEN;
        if (le32(f + 40) != MAGIC_LO || le32(f + 44) != MAGIC_HI) {
            why = "not an sstable (bad magic number)";
        } else {
            const uint8_t *p = f, *end = f + 40;
            uint64_t moff, msize, ioff, isize;
            if (!get_varint(&p, end, 10, &moff) ||
                !get_varint(&p, end, 10, &msize) ||
                !get_varint(&p, end, 10, &ioff) ||
                !get_varint(&p, end, 10, &isize)) {
                why = "bad block handle";
            } else {
                const uint8_t *ib = read_block(&r, ioff, isize, &why);
                if (ib)
                    each_entry(&r, ib, (size_t)isize, index_entry, &why);
            }
        }
    }
    if (r.oom || why) {
        dgr_table_free(r.kvs, r.n);
        if (r.oom)
            return dg_err_nomem(err, "checkpoint index");
        return dg_err(err, DG_E_GRAPH, "%s: checkpoint index is corrupt: %s",
                      what, why);
    }
    *kvs = r.kvs;
    *n = r.n;
    return DG_OK;
}

/* ---- writing ------------------------------------------------------------ */

static void block_init(dgr_table_block *k, int interval)
{
    memset(k, 0, sizeof *k);
    dg_sbuf_init(&k->buf);
    dg_sbuf_init(&k->last);
    k->interval = interval;
}

static int block_restart(dgr_table_block *k, uint32_t off)
{
    uint32_t *r = dg_grow(k->restarts, &k->cap_restarts,
                          (int64_t)k->n_restarts + 1, sizeof *r, 16);
    if (!r)
        return -1;
    k->restarts = r;
    r[k->n_restarts++] = off;
    k->counter = 0;
    return 0;
}

static int block_add(dgr_table_block *k, const char *key, size_t klen,
                     const void *val, size_t vlen)
{
    size_t shared = 0;
    if (k->buf.len == 0 && k->n_restarts == 0) {
        if (block_restart(k, 0))
            return -1;
    } else if (k->counter >= k->interval) {
        if (block_restart(k, (uint32_t)k->buf.len))
            return -1;
    } else {
        size_t m = k->last.len < klen ? k->last.len : klen;
        while (shared < m && k->last.s[shared] == key[shared])
            shared++;
    }
    put_varint(&k->buf, shared);
    put_varint(&k->buf, klen - shared);
    put_varint(&k->buf, vlen);
    dg_sbuf_addn(&k->buf, key + shared, klen - shared);
    dg_sbuf_addn(&k->buf, val, vlen);
    k->last.len = 0;
    dg_sbuf_addn(&k->last, key, klen);
    k->counter++;
    return k->buf.oom || k->last.oom ? -1 : 0;
}

static size_t block_estimate(const dgr_table_block *k)
{
    return k->buf.len + 4 * (size_t)(k->n_restarts + 1);
}

/* Append the block's restarts, write it with its trailer to out, reset
 * it; *off, *size: its handle. */
static int block_write(dgr_table_block *k, dg_sbuf *out, uint64_t *off,
                       uint64_t *size)
{
    if (k->n_restarts == 0 && block_restart(k, 0))
        return -1;
    for (int32_t i = 0; i < k->n_restarts; i++)
        put32(&k->buf, k->restarts[i]);
    put32(&k->buf, (uint32_t)k->n_restarts);
    if (k->buf.oom)
        return -1;
    *off = out->len;
    *size = k->buf.len;
    dg_sbuf_addn(out, k->buf.s, k->buf.len);
    char type = 0;
    uint32_t crc = dg_crc32c(dg_crc32c(0, k->buf.s, k->buf.len), &type, 1);
    dg_sbuf_addn(out, &type, 1);
    put32(out, dg_crc32c_mask(crc));
    k->buf.len = 0;
    k->last.len = 0;
    k->n_restarts = 0;
    k->counter = 0;
    return out->oom ? -1 : 0;
}

static void block_free(dgr_table_block *k)
{
    dg_sbuf_free(&k->buf);
    dg_sbuf_free(&k->last);
    dg_free(k->restarts);
    memset(k, 0, sizeof *k);
}

void dgr_table_builder_init(dgr_table_builder *b, size_t block_size)
{
    memset(b, 0, sizeof *b);
    dg_sbuf_init(&b->out);
    dg_sbuf_init(&b->last);
    block_init(&b->data, 16);
    block_init(&b->index, 1);
    b->block_size = block_size ? block_size : DEFAULT_BLOCK;
}

/* The index key of the block that ended with key last (shortened in
 * place, as LevelDB does, so TF's and dgrun's files are the same bytes):
 * with next (the next block's first key), a short key in [last, next);
 * without, a short key >= last. */
static void short_key(dg_sbuf *last, const char *next, size_t nl)
{
    unsigned char *k = (unsigned char *)last->s;
    if (!k)
        return;
    if (next) {
        size_t m = last->len < nl ? last->len : nl, i = 0;
        while (i < m && k[i] == (unsigned char)next[i])
            i++;
        if (i < m && k[i] < 0xff && k[i] + 1 < (unsigned char)next[i]) {
            k[i]++;
            last->len = i + 1;
            last->s[last->len] = '\0';
        }
        return;
    }
    for (size_t i = 0; i < last->len; i++)
        if (k[i] != 0xff) {
            k[i]++;
            last->len = i + 1;
            last->s[last->len] = '\0';
            return;
        }
}

/* The index entry of the block written last; next: the first key of the
 * block after it (NULL at the end).  Changes b->last. */
static void add_pending_index(dgr_table_builder *b, const char *next,
                              size_t nl)
{
    dg_sbuf h;
    dg_sbuf_init(&h);
    put_varint(&h, b->pend_off);
    put_varint(&h, b->pend_size);
    short_key(&b->last, next, nl);
    if (h.oom || block_add(&b->index, b->last.s ? b->last.s : "", b->last.len,
                           h.s, h.len))
        b->bad = 1;
    dg_sbuf_free(&h);
    b->pending = 0;
}

static void flush(dgr_table_builder *b)
{
    if (b->bad || b->data.buf.len == 0)
        return;
    if (block_write(&b->data, &b->out, &b->pend_off, &b->pend_size))
        b->bad = 1;
    else
        b->pending = 1;
}

void dgr_table_add(dgr_table_builder *b, const char *key, size_t klen,
                   const void *val, size_t vlen)
{
    if (b->bad)
        return;
    if (b->entries > 0 && keycmp(b->last.s, b->last.len, key, klen) >= 0) {
        b->bad = 2;
        return;
    }
    if (b->pending)
        add_pending_index(b, key, klen);
    if (b->bad || block_add(&b->data, key, klen, val, vlen)) {
        b->bad = b->bad ? b->bad : 1;
        return;
    }
    b->last.len = 0;
    dg_sbuf_addn(&b->last, key, klen);
    if (b->last.oom)
        b->bad = 1;
    b->entries++;
    if (block_estimate(&b->data) >= b->block_size)
        flush(b);
}

dg_status dgr_table_finish(dgr_table_builder *b, char **out, size_t *len,
                           dg_error *err)
{
    *out = NULL;
    *len = 0;
    flush(b);
    uint64_t moff = 0, msize = 0, ioff = 0, isize = 0;
    dgr_table_block meta;
    block_init(&meta, 16);
    if (!b->bad && block_write(&meta, &b->out, &moff, &msize))
        b->bad = 1;
    block_free(&meta);
    if (!b->bad && b->pending)
        add_pending_index(b, NULL, 0);
    if (!b->bad && block_write(&b->index, &b->out, &ioff, &isize))
        b->bad = 1;
    if (!b->bad) {
        size_t start = b->out.len;
        put_varint(&b->out, moff);
        put_varint(&b->out, msize);
        put_varint(&b->out, ioff);
        put_varint(&b->out, isize);
        static const char zeros[40];
        dg_sbuf_addn(&b->out, zeros, 40 - (b->out.len - start));
        put32(&b->out, MAGIC_LO);
        put32(&b->out, MAGIC_HI);
        if (b->out.oom)
            b->bad = 1;
    }
    if (b->bad == 2)
        return dg_err(err, DG_E_RUNTIME, "checkpoint index: keys added out "
                      "of order");
    if (b->bad)
        return dg_err_nomem(err, "checkpoint index");
    *len = b->out.len;
    *out = dg_sbuf_take(&b->out);
    return DG_OK;
}

void dgr_table_builder_free(dgr_table_builder *b)
{
    dg_sbuf_free(&b->out);
    dg_sbuf_free(&b->last);
    block_free(&b->data);
    block_free(&b->index);
}
