/*
 * tf_bundle.c -- TensorFlow's V2 checkpoint (tensor bundle) reader and
 * writer (see tf_bundle.h).  Facts from TF's tensor_bundle.cc: the header
 * is the entry under the empty key (num_shards, endianness LITTLE = 0,
 * version {producer 1, min_consumer 0}); each entry's crc32c is the masked
 * CRC-32C of exactly the tensor's bytes; data shards are named
 * "%s.data-%05d-of-%05d"; the index is an uncompressed table.  The
 * messages are protobuf (tf_bundle.proto, protobuf-c).
 */
#include "tf_bundle.h"
#include "tf_table.h"
#include "tf_bundle.pb-c.h"
#include "dg_alloc.h"
#include "dg_crc32c.h"
#include "dg_io.h"
#include "dg_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- protobuf-c allocation through dg_alloc ---------------------------- */

static void *pb_alloc(void *data, size_t n)
{
    (void)data;
    return dg_malloc(n);
}

static void pb_free(void *data, void *p)
{
    (void)data;
    dg_free(p);
}

static ProtobufCAllocator pb_allocator = {pb_alloc, pb_free, NULL};

/* ---- dtypes ------------------------------------------------------------- */

int dgr_bundle_dg_dtype(int tf_dtype)
{
    switch (tf_dtype) {
    case DGR_TF_FLOAT: return DG_F32;
    case DGR_TF_DOUBLE: return DG_F64;
    case DGR_TF_INT32: return DG_I32;
    case DGR_TF_INT64: return DG_I64;
    case DGR_TF_BOOL: return DG_BOOL;
    default: return -1;
    }
}

int dgr_bundle_tf_dtype(dg_dtype t)
{
    static const int map[DG_DTYPE_COUNT] = {DGR_TF_FLOAT, DGR_TF_DOUBLE,
                                            DGR_TF_INT32, DGR_TF_INT64,
                                            DGR_TF_BOOL};
    return (int)t >= 0 && t < DG_DTYPE_COUNT ? map[t] : 0;
}

const char *dgr_bundle_dtype_name(int tf_dtype)
{
    static const char *names[] = {
        "INVALID", "float", "double", "int32", "uint8", "int16", "int8",
        "string", "complex64", "int64", "bool", "qint8", "quint8", "qint32",
        "bfloat16", "qint16", "quint16", "uint16", "complex128", "half",
        "resource", "variant", "uint32", "uint64"};
    if (tf_dtype >= 0 && tf_dtype < (int)(sizeof names / sizeof names[0]))
        return names[tf_dtype];
    if (tf_dtype > 100 && tf_dtype - 100 < (int)(sizeof names / sizeof names[0]))
        return "a reference type";
    return "an unknown dtype";
}

char *dgr_bundle_shard_path(const char *prefix, int32_t shard, int32_t n)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "%s.data-%05d-of-%05d", prefix, (int)shard, (int)n);
    return dg_sbuf_take(&b);
}

/* ---- reading ------------------------------------------------------------ */

void dgr_bundle_free(dgr_bundle *b)
{
    if (!b)
        return;
    for (int32_t i = 0; b->ents && i < b->n; i++) {
        dg_free(b->ents[i].key);
        dg_free(b->ents[i].label);
        dg_free(b->ents[i].slices);
    }
    dg_free(b->ents);
    for (int32_t i = 0; b->fds && i < b->num_shards; i++)
        if (b->fds[i] >= 0)
            close(b->fds[i]);
    dg_free(b->fds);
    dg_free(b->prefix);
    dg_free(b->index_path);
    memset(b, 0, sizeof *b);
}

/* e's slices from p (e's rank known); NULL, or the reason they are
 * unusable.  *nomem set when out of memory. */
static const char *slices_from(dgr_bundle_entry *e,
                               const Dgtfb__BundleEntryProto *p, int *nomem)
{
    if (e->rank < 0)
        return NULL; /* refused when read (more dims than dgrun has) */
    e->slices = dg_calloc(p->n_slices, sizeof *e->slices);
    if (!e->slices) {
        *nomem = 1;
        return "out of memory";
    }
    for (size_t k = 0; k < p->n_slices; k++) {
        const Dgtfb__TensorSliceProto *sp = p->slices[k];
        dgr_bundle_slice *sl = &e->slices[k];
        if (sp->n_extent != (size_t)e->rank)
            return "a slice of another rank than the tensor";
        for (int d = 0; d < e->rank; d++) {
            const Dgtfb__TensorSliceProto__Extent *x = sp->extent[d];
            int has = x->has_length_case ==
                      DGTFB__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
            sl->start[d] = x->start;
            sl->len[d] = has ? x->length : -1;
            if (x->start < 0 || (has && (x->length < 0 ||
                                         x->length > e->dims[d] - x->start)) ||
                (!has && x->start != 0))
                return "a slice outside the tensor";
        }
    }
    e->n_slices = (int32_t)p->n_slices;
    return NULL;
}

/* Fill e from a BundleEntryProto; NULL, or the reason it is unusable. */
static const char *entry_from(dgr_bundle_entry *e, const Dgtfb__BundleEntryProto *p,
                              int32_t num_shards, int *nomem)
{
    e->tf_dtype = p->dtype;
    e->shard = p->shard_id;
    e->offset = p->offset;
    e->size = p->size;
    e->crc = dg_crc32c_unmask(p->crc32c);
    e->sliced = p->n_slices > 0;
    e->rank = 0;
    if (p->shape) {
        if (p->shape->unknown_rank)
            return "Invalid tensor shape (unknown rank)";
        if (p->shape->n_dim > DG_MAX_RANK)
            e->rank = -1;
        for (size_t d = 0; d < p->shape->n_dim; d++) {
            int64_t v = p->shape->dim[d]->size;
            if (v < 0)
                return "Invalid tensor shape (a negative dimension)";
            if (e->rank >= 0)
                e->dims[d] = v;
        }
        if (e->rank >= 0)
            e->rank = (int)p->shape->n_dim;
    }
    if (e->sliced)
        return slices_from(e, p, nomem);
    if (!e->sliced && (e->shard < 0 || e->shard >= num_shards))
        return "shard_id outside the bundle's shards";
    if (!e->sliced && (e->offset < 0 || e->size < 0))
        return "negative offset or size";
    return NULL;
}

/* TF's TensorSlice::DebugString of sl: "2,2:-" ("-": a whole dimension). */
static void slice_text(dg_sbuf *o, int rank, const dgr_bundle_slice *sl)
{
    for (int d = 0; d < rank; d++) {
        if (d)
            dg_sbuf_add(o, ":");
        if (sl->len[d] < 0)
            dg_sbuf_add(o, "-");
        else
            dg_sbuf_addf(o, "%lld,%lld", (long long)sl->start[d],
                         (long long)sl->len[d]);
    }
}

/* Every slice a full entry lists must have its entry (with the full
 * entry's dtype and the slice's shape); those entries get their labels. */
static dg_status label_slices(dgr_bundle *b, dg_error *err)
{
    for (int32_t i = 0; i < b->n; i++) {
        const dgr_bundle_entry *f = &b->ents[i];
        for (int32_t k = 0; k < f->n_slices; k++) {
            const dgr_bundle_slice *sl = &f->slices[k];
            size_t kl = 0;
            char *key = dgr_bundle_slice_key(f->key, f->rank, sl, &kl);
            dg_sbuf lb;
            dg_sbuf_init(&lb);
            dg_sbuf_addf(&lb, "%s (slice ", f->key);
            slice_text(&lb, f->rank, sl);
            dg_sbuf_add(&lb, ")");
            char *label = dg_sbuf_take(&lb);
            if (!key || !label) {
                dg_free(key);
                dg_free(label);
                return dg_err_nomem(err, "checkpoint index");
            }
            dgr_bundle_entry *e =
                (dgr_bundle_entry *)dgr_bundle_find_n(b, key, kl);
            dg_free(key);
            int same = e && !e->sliced && e->tf_dtype == f->tf_dtype &&
                       e->rank == f->rank;
            for (int d = 0; same && d < f->rank; d++)
                same = e->dims[d] == (sl->len[d] < 0 ? f->dims[d] : sl->len[d]);
            if (!same) {
                dg_status st = dg_err(err, DG_E_GRAPH, "%s: checkpoint index "
                                      "is corrupt: %s: %s", b->index_path,
                                      label, e ? "its entry has another dtype "
                                      "or shape" : "no entry for it");
                dg_free(label);
                return st;
            }
            dg_free(e->label);
            e->label = label;
        }
    }
    return DG_OK;
}

dg_status dgr_bundle_parse_index(const uint8_t *buf, size_t len, int verify,
                                 const char *index_path, const char *prefix,
                                 dgr_bundle *b, dg_error *err)
{
    memset(b, 0, sizeof *b);
    dgr_table_kv *kvs = NULL;
    int32_t n = 0;
    dg_status st = dgr_table_parse(buf, len, verify, index_path, &kvs, &n, err);
    if (st != DG_OK)
        return st;
    b->prefix = dg_strdup(prefix);
    b->index_path = dg_strdup(index_path);
    if (!b->prefix || !b->index_path) {
        st = dg_err_nomem(err, "checkpoint index");
        goto done;
    }
    if (n == 0 || kvs[0].klen != 0) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint index is corrupt: no "
                    "header entry", index_path);
        goto done;
    }
    Dgtfb__BundleHeaderProto *h =
        dgtfb__bundle_header_proto__unpack(&pb_allocator, kvs[0].vlen, kvs[0].val);
    if (!h) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint index is corrupt: "
                    "unable to parse header", index_path);
        goto done;
    }
    int32_t shards = h->num_shards, endian = h->endianness;
    b->has_step = h->dgrun != NULL;
    b->step = h->dgrun ? h->dgrun->step : 0;
    int producer = h->version ? h->version->producer : 0;
    int min_consumer = h->version ? h->version->min_consumer : 0;
    dgtfb__bundle_header_proto__free_unpacked(h, &pb_allocator);
    if (endian != 0) {
        st = dg_err(err, DG_E_GRAPH, "%s: a big-endian checkpoint (dgrun "
                    "reads little-endian bundles)", index_path);
        goto done;
    }
    /* kTensorBundleVersion 1, kTensorBundleMinProducer 0 */
    if (min_consumer > 1 || producer < 0) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint version: producer %d, "
                    "min_consumer %d; dgrun reads version 1", index_path,
                    producer, min_consumer);
        goto done;
    }
    if (shards < 1 || shards > 100000) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint index is corrupt: "
                    "num_shards %d", index_path, (int)shards);
        goto done;
    }
    b->num_shards = shards;
    b->fds = dg_malloc(sizeof *b->fds * (size_t)shards);
    b->ents = dg_calloc((size_t)n, sizeof *b->ents);
    if (!b->fds || !b->ents) {
        st = dg_err_nomem(err, "checkpoint index");
        goto done;
    }
    for (int32_t i = 0; i < shards; i++)
        b->fds[i] = -1;
    for (int32_t i = 1; i < n; i++) {
        dgr_bundle_entry *e = &b->ents[b->n];
        Dgtfb__BundleEntryProto *p =
            dgtfb__bundle_entry_proto__unpack(&pb_allocator, kvs[i].vlen, kvs[i].val);
        int nomem = 0;
        const char *why = p ? entry_from(e, p, shards, &nomem) : "not parseable";
        if (p)
            dgtfb__bundle_entry_proto__free_unpacked(p, &pb_allocator);
        e->key = kvs[i].key; /* freed with b from here */
        e->klen = kvs[i].klen;
        kvs[i].key = NULL;
        b->n++;
        if (nomem) {
            st = dg_err_nomem(err, "checkpoint index");
            goto done;
        }
        if (why) {
            st = dg_err(err, DG_E_GRAPH, "%s: checkpoint index is corrupt: "
                        "entry for key %s: %s", index_path, e->key, why);
            goto done;
        }
    }
    st = label_slices(b, err);
done:
    dgr_table_free(kvs, n);
    if (st != DG_OK)
        dgr_bundle_free(b);
    return st;
}

dg_status dgr_bundle_open(const char *prefix, dgr_bundle *b, dg_error *err)
{
    memset(b, 0, sizeof *b);
    dg_sbuf p;
    dg_sbuf_init(&p);
    dg_sbuf_addf(&p, "%s.index", prefix);
    char *path = dg_sbuf_take(&p);
    if (!path)
        return dg_err_nomem(err, "checkpoint path");
    char *buf = NULL;
    size_t len = 0;
    dg_status rs = dg_read_file(path, &buf, &len), st;
    if (rs == DG_E_NOMEM)
        st = dg_err_nomem(err, "checkpoint index");
    else if (rs != DG_OK)
        st = dg_err(err, DG_E_IO, "%s: cannot read checkpoint: %s", path,
                    strerror(errno));
    else
        st = dgr_bundle_parse_index((const uint8_t *)buf, len, 1, path, prefix,
                                    b, err);
    dg_free(buf);
    dg_free(path);
    return st;
}

/* Bytewise order of keys, the table's. */
static int key_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : al < bl ? -1 : al > bl;
}

const char *dgr_bundle_entry_name(const dgr_bundle_entry *e)
{
    return e->label ? e->label : e->key;
}

const dgr_bundle_entry *dgr_bundle_find(const dgr_bundle *b, const char *key)
{
    return dgr_bundle_find_n(b, key, strlen(key));
}

const dgr_bundle_entry *dgr_bundle_find_n(const dgr_bundle *b, const char *key,
                                          size_t klen)
{
    int32_t lo = 0, hi = b->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = key_cmp(b->ents[mid].key, b->ents[mid].klen, key, klen);
        if (c == 0)
            return &b->ents[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Read entry e's bytes into dst, or with dst NULL only checksum them
 * (through a 1 MiB buffer), and check size and CRC (see dgr_bundle_read). */
static dg_status read_entry(dgr_bundle *b, const dgr_bundle_entry *e,
                            void *dst, int crc_check, dg_error *err)
{
    int dt = dgr_bundle_dg_dtype(e->tf_dtype);
    char *path = dgr_bundle_shard_path(b->prefix, e->shard, b->num_shards);
    if (!path)
        return dg_err_nomem(err, "checkpoint path");
    dg_status st = DG_OK;
    char *chunk = NULL;
    const char *name = dgr_bundle_entry_name(e);
    dg_shape sh = {e->rank, {0}};
    if (e->rank >= 0)
        memcpy(sh.dims, e->dims, sizeof sh.dims);
    int64_t numel = e->rank >= 0 ? dg_shape_numel(&sh) : -1;
    if (dt < 0 || e->rank < 0 || e->sliced) {
        st = dg_err(err, DG_E_GRAPH, "%s: %s: dgrun cannot read this entry",
                    b->index_path, name);
        goto done;
    }
    uint64_t want = (uint64_t)numel * dg_dtype_size((dg_dtype)dt);
    if (numel < 0 || numel > INT64_MAX / 8 || (uint64_t)e->size != want) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt: Invalid size "
                    "in bundle entry: key %s; stored size %lld; expected size "
                    "%llu", b->index_path, name, (long long)e->size,
                    (unsigned long long)want);
        goto done;
    }
    int *fd = &b->fds[e->shard];
    if (*fd < 0) {
        *fd = open(path, O_RDONLY | O_CLOEXEC);
        if (*fd < 0) {
            st = errno == ENOENT
                     ? dg_err(err, DG_E_GRAPH, "%s: checkpoint is incomplete: "
                              "the data shard of %s is missing", path, name)
                     : dg_err(err, DG_E_IO, "%s: cannot read checkpoint: %s",
                              path, strerror(errno));
            goto done;
        }
    }
    struct stat sb;
    if (fstat(*fd, &sb) != 0 || (uint64_t)sb.st_size < (uint64_t)e->offset ||
        (uint64_t)sb.st_size - (uint64_t)e->offset < (uint64_t)e->size) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt: truncated "
                    "shard: %s needs bytes %llu..%llu of a %lld-byte file",
                    path, name, (unsigned long long)e->offset,
                    (unsigned long long)e->offset + (unsigned long long)e->size,
                    (long long)sb.st_size);
        goto done;
    }
    size_t n = (size_t)e->size, cn = (size_t)1 << 20;
    if (!dst && !(chunk = dg_malloc(cn))) {
        st = dg_err_nomem(err, "checkpoint");
        goto done;
    }
    uint32_t crc = 0;
    for (size_t got = 0; got < n;) {
        char *to = dst ? (char *)dst + got : chunk;
        size_t ask = dst ? n - got : (n - got < cn ? n - got : cn);
        ssize_t r = pread(*fd, to, ask, (off_t)(e->offset + (int64_t)got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            st = r == 0 ? dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt: "
                                 "truncated shard: %s: Read less bytes than "
                                 "requested", path, name)
                        : dg_err(err, DG_E_IO, "%s: cannot read checkpoint: %s",
                                 path, strerror(errno));
            goto done;
        }
        if (crc_check)
            crc = dg_crc32c(crc, to, (size_t)r);
        got += (size_t)r;
    }
    if (crc_check && crc != e->crc) {
        st = dg_err(err, DG_E_GRAPH, "%s: checkpoint is corrupt: %s (%lld "
                    "bytes): Checksum does not match: stored %08u vs. "
                    "calculated on the restored bytes %u", path, name,
                    (long long)e->size, e->crc, crc);
        goto done;
    }
done:
    dg_free(chunk);
    dg_free(path);
    return st;
}

dg_status dgr_bundle_read(dgr_bundle *b, const dgr_bundle_entry *e,
                          void *dst, dg_error *err)
{
    return read_entry(b, e, dst, 1, err);
}

dg_status dgr_bundle_check(dgr_bundle *b, const dgr_bundle_entry *e,
                           dg_error *err)
{
    return read_entry(b, e, NULL, 1, err);
}

dg_status dgr_bundle_read_checked(dgr_bundle *b, const dgr_bundle_entry *e,
                                  void *dst, dg_error *err)
{
    return read_entry(b, e, dst, 0, err);
}

/* ---- slice keys (TF's OrderedCode) --------------------------------------- */

/* OrderedCode::WriteNumIncreasing: the byte count, then big-endian bytes. */
static void oc_num(dg_sbuf *o, uint64_t v)
{
    unsigned char b[9];
    int n = 0;
    for (uint64_t x = v; x; x >>= 8)
        n++;
    b[0] = (unsigned char)n;
    for (int i = 0; i < n; i++)
        b[1 + i] = (unsigned char)(v >> (8 * (n - 1 - i)));
    dg_sbuf_addn(o, (const char *)b, (size_t)n + 1);
}

/* OrderedCode::WriteString: 0x00 -> 00 ff, 0xff -> ff 00, then 00 01. */
static void oc_string(dg_sbuf *o, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == 0xff)
            dg_sbuf_addn(o, "\xff\x00", 2);
        else
            dg_sbuf_addn(o, (const char *)p, 1);
    }
    dg_sbuf_addn(o, "\x00\x01", 2);
}

/* OrderedCode::WriteSignedNumIncreasing: len = bits / 7 + 1 bytes of the
 * value (sign-extended, big-endian), the first len bits of the first two
 * bytes flipped as the length header. */
static void oc_signed(dg_sbuf *o, int64_t v)
{
    static const unsigned char hdr[11][2] = {
        {0, 0}, {0x80, 0}, {0xc0, 0}, {0xe0, 0}, {0xf0, 0}, {0xf8, 0},
        {0xfc, 0}, {0xfe, 0}, {0xff, 0}, {0xff, 0x80}, {0xff, 0xc0}};
    uint64_t x = v < 0 ? ~(uint64_t)v : (uint64_t)v;
    int bits = 0;
    for (uint64_t t = x; t; t >>= 1)
        bits++;
    int len = bits / 7 + 1;
    unsigned char buf[10];
    unsigned char sign = v < 0 ? 0xff : 0;
    buf[0] = buf[1] = sign;
    for (int i = 0; i < 8; i++)
        buf[2 + i] = (unsigned char)((uint64_t)v >> (8 * (7 - i)));
    unsigned char *b = buf + 10 - len;
    b[0] ^= hdr[len][0];
    if (len > 1)
        b[1] ^= hdr[len][1];
    dg_sbuf_addn(o, (const char *)b, (size_t)len);
}

char *dgr_bundle_slice_key(const char *name, int rank,
                           const dgr_bundle_slice *sl, size_t *klen)
{
    dg_sbuf o;
    dg_sbuf_init(&o);
    oc_num(&o, 0);
    oc_string(&o, name);
    oc_num(&o, (uint64_t)rank);
    for (int d = 0; d < rank; d++) {
        oc_signed(&o, sl->len[d] < 0 ? 0 : sl->start[d]);
        oc_signed(&o, sl->len[d]);
    }
    *klen = o.len;
    return dg_sbuf_take(&o);
}

/* ---- writing ------------------------------------------------------------ */

static char *tmp_name(const char *file)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "%s.tmp.%ld", file, (long)getpid());
    return dg_sbuf_take(&b);
}

static char *index_name(const char *prefix)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_addf(&b, "%s.index", prefix);
    return dg_sbuf_take(&b);
}

dg_status dgr_bundle_writer_open(dgr_bundle_writer *w, const char *prefix,
                                 int64_t step, dg_error *err)
{
    memset(w, 0, sizeof *w);
    w->step = step;
    char *data = dgr_bundle_shard_path(prefix, 0, 1);
    char *index = index_name(prefix);
    w->prefix = dg_strdup(prefix);
    w->data_tmp = data ? tmp_name(data) : NULL;
    w->index_tmp = index ? tmp_name(index) : NULL;
    dg_free(data);
    dg_free(index);
    if (!w->prefix || !w->data_tmp || !w->index_tmp) {
        dgr_bundle_writer_free(w);
        return dg_err_nomem(err, "checkpoint");
    }
    w->data = fopen(w->data_tmp, "wb");
    if (!w->data) {
        dg_status st = dg_err(err, DG_E_IO, "%s: cannot write checkpoint: %s",
                              prefix, strerror(errno));
        dgr_bundle_writer_free(w);
        return st;
    }
    return DG_OK;
}

/* A new entry of w under key (klen bytes, copied); NULL on nomem. */
static dgr_bundle_entry *new_entry(dgr_bundle_writer *w, const char *key,
                                   size_t klen)
{
    dgr_bundle_entry *ents = dg_grow(w->ents, &w->cap, (int64_t)w->n + 1,
                                     sizeof *ents, 16);
    if (!ents)
        return NULL;
    w->ents = ents;
    dgr_bundle_entry *e = &ents[w->n];
    memset(e, 0, sizeof *e);
    if (!(e->key = dg_malloc(klen + 1)))
        return NULL;
    memcpy(e->key, key, klen);
    e->key[klen] = '\0';
    e->klen = klen;
    w->n++;
    return e;
}

/* dgr_bundle_writer_add under a key of klen bytes. */
static dg_status add_n(dgr_bundle_writer *w, const char *key, size_t klen,
                       dg_dtype dtype, const dg_shape *shape, const void *data,
                       dg_error *err)
{
    int64_t numel = dg_shape_numel(shape);
    size_t nb = (size_t)(numel < 0 ? 0 : numel) * dg_dtype_size(dtype);
    dgr_bundle_entry *e = new_entry(w, key, klen);
    if (!e)
        return dg_err_nomem(err, "checkpoint");
    e->tf_dtype = dgr_bundle_tf_dtype(dtype);
    e->rank = shape->rank;
    memcpy(e->dims, shape->dims, sizeof e->dims);
    e->offset = w->size;
    e->size = (int64_t)nb;
    e->crc = dg_crc32c(0, data, nb);
    if (nb && fwrite(data, 1, nb, w->data) != nb && !w->bad) {
        w->bad = 1;
        w->err_no = errno;
    }
    w->size += (int64_t)nb;
    return DG_OK;
}

dg_status dgr_bundle_writer_add(dgr_bundle_writer *w, const char *name,
                                dg_dtype dtype, const dg_shape *shape,
                                const void *data, dg_error *err)
{
    return add_n(w, name, strlen(name), dtype, shape, data, err);
}

dg_status dgr_bundle_writer_add_slice(dgr_bundle_writer *w, const char *full,
                                      const dg_shape *full_shape,
                                      const dgr_bundle_slice *sl,
                                      dg_dtype dtype, const void *data,
                                      dg_error *err)
{
    int rank = full_shape->rank, whole = 1;
    dg_shape part = {rank, {0}};
    for (int d = 0; d < rank; d++) {
        if (sl->start[d] < 0 || sl->len[d] < 0 ||
            sl->len[d] > full_shape->dims[d] - sl->start[d])
            return dg_err(err, DG_E_RUNTIME, "%s: a slice outside the "
                          "variable's shape", full);
        part.dims[d] = sl->len[d];
        whole = whole && sl->start[d] == 0 && sl->len[d] == full_shape->dims[d];
    }
    if (whole)
        return dgr_bundle_writer_add(w, full, dtype, full_shape, data, err);
    dgr_bundle_entry *f = NULL;
    size_t fl = strlen(full);
    for (int32_t i = 0; i < w->n && !f; i++)
        if (w->ents[i].klen == fl && memcmp(w->ents[i].key, full, fl) == 0)
            f = &w->ents[i];
    if (!f) {
        if (!(f = new_entry(w, full, fl)))
            return dg_err_nomem(err, "checkpoint");
        f->tf_dtype = dgr_bundle_tf_dtype(dtype);
        f->rank = rank;
        memcpy(f->dims, full_shape->dims, sizeof f->dims);
        f->sliced = 1;
    }
    int same = f->sliced && f->tf_dtype == dgr_bundle_tf_dtype(dtype) &&
               f->rank == rank;
    for (int d = 0; same && d < rank; d++)
        same = f->dims[d] == full_shape->dims[d];
    if (!same)
        return dg_err(err, DG_E_RUNTIME, "%s: its slices disagree on dtype "
                      "or full shape", full);
    dgr_bundle_slice *ns = dg_realloc(f->slices, sizeof *ns *
                                      (size_t)(f->n_slices + 1));
    if (!ns)
        return dg_err_nomem(err, "checkpoint");
    f->slices = ns;
    ns[f->n_slices++] = *sl;
    size_t kl = 0;
    char *key = dgr_bundle_slice_key(full, rank, sl, &kl);
    if (!key)
        return dg_err_nomem(err, "checkpoint");
    dg_status st = add_n(w, key, kl, dtype, &part, data, err);
    dg_free(key);
    return st;
}

static int cmp_ent(const void *a, const void *b)
{
    const dgr_bundle_entry *x = a, *y = b;
    return key_cmp(x->key, x->klen, y->key, y->klen);
}

dg_status dgr_bundle_build_index(const dgr_bundle_entry *ents, int32_t n,
                                 size_t block_size, int64_t step, char **out,
                                 size_t *len, dg_error *err)
{
    *out = NULL;
    *len = 0;
    dgr_bundle_entry *sorted = dg_malloc(sizeof *sorted * (size_t)(n + 1));
    if (!sorted)
        return dg_err_nomem(err, "checkpoint index");
    if (n)
        memcpy(sorted, ents, sizeof *sorted * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_ent);
    dgr_table_builder tb;
    dgr_table_builder_init(&tb, block_size);
    /* the header under "" */
    Dgtfb__VersionDef ver = DGTFB__VERSION_DEF__INIT;
    ver.producer = 1;
    Dgtfb__BundleHeaderProto h = DGTFB__BUNDLE_HEADER_PROTO__INIT;
    h.num_shards = 1;
    h.version = &ver;
    Dgtfb__DgrunStep ds = DGTFB__DGRUN_STEP__INIT;
    ds.step = step;
    h.dgrun = step >= 0 ? &ds : NULL;
    uint8_t small[64];
    size_t hl = dgtfb__bundle_header_proto__pack(&h, small);
    dgr_table_add(&tb, "", 0, small, hl);
    dg_status st = DG_OK;
    uint8_t *buf = NULL;
    for (int32_t i = 0; i < n && st == DG_OK; i++) {
        const dgr_bundle_entry *e = &sorted[i];
        Dgtfb__TensorShapeProto__Dim dims[DG_MAX_RANK], *dp[DG_MAX_RANK];
        Dgtfb__TensorShapeProto sh = DGTFB__TENSOR_SHAPE_PROTO__INIT;
        int rank = e->rank < 0 ? 0 : e->rank > DG_MAX_RANK ? DG_MAX_RANK : e->rank;
        for (int d = 0; d < rank; d++) {
            Dgtfb__TensorShapeProto__Dim di = DGTFB__TENSOR_SHAPE_PROTO__DIM__INIT;
            dims[d] = di;
            dims[d].size = e->dims[d];
            dp[d] = &dims[d];
        }
        sh.n_dim = (size_t)rank;
        sh.dim = rank ? dp : NULL;
        Dgtfb__BundleEntryProto p = DGTFB__BUNDLE_ENTRY_PROTO__INIT;
        p.dtype = e->tf_dtype;
        p.shape = &sh;
        p.shard_id = e->shard;
        p.offset = e->offset;
        p.size = e->size;
        /* a full entry of slices has no bytes and no checksum (TF) */
        p.crc32c = e->sliced ? 0 : dg_crc32c_mask(e->crc);
        /* a partitioned variable's slices (TensorSlice::AsProto: every
         * extent given here has its length; proto3 leaves start 0 out) */
        int32_t ns = e->n_slices;
        Dgtfb__TensorSliceProto *sps = dg_calloc((size_t)ns + 1, sizeof *sps);
        Dgtfb__TensorSliceProto **spp = dg_calloc((size_t)ns + 1, sizeof *spp);
        Dgtfb__TensorSliceProto__Extent *ex =
            dg_calloc((size_t)ns * DG_MAX_RANK + 1, sizeof *ex);
        Dgtfb__TensorSliceProto__Extent **exp =
            dg_calloc((size_t)ns * DG_MAX_RANK + 1, sizeof *exp);
        if (!sps || !spp || !ex || !exp) {
            dg_free(sps);
            dg_free(spp);
            dg_free(ex);
            dg_free(exp);
            st = dg_err_nomem(err, "checkpoint index");
            break;
        }
        for (int32_t k = 0; k < ns; k++) {
            Dgtfb__TensorSliceProto si = DGTFB__TENSOR_SLICE_PROTO__INIT;
            Dgtfb__TensorSliceProto__Extent *xk = ex + (size_t)k * DG_MAX_RANK;
            for (int d = 0; d < rank; d++) {
                Dgtfb__TensorSliceProto__Extent xi =
                    DGTFB__TENSOR_SLICE_PROTO__EXTENT__INIT;
                xk[d] = xi;
                if (e->slices[k].len[d] >= 0) {
                    xk[d].start = e->slices[k].start[d];
                    xk[d].has_length_case =
                        DGTFB__TENSOR_SLICE_PROTO__EXTENT__HAS_LENGTH_LENGTH;
                    xk[d].length = e->slices[k].len[d];
                }
                exp[(size_t)k * DG_MAX_RANK + (size_t)d] = &xk[d];
            }
            sps[k] = si;
            sps[k].n_extent = (size_t)rank;
            sps[k].extent = exp + (size_t)k * DG_MAX_RANK;
            spp[k] = &sps[k];
        }
        p.n_slices = (size_t)ns;
        p.slices = spp;
        size_t pl = dgtfb__bundle_entry_proto__get_packed_size(&p);
        uint8_t *nb = dg_realloc(buf, pl ? pl : 1);
        if (nb)
            dgtfb__bundle_entry_proto__pack(&p, nb);
        dg_free(sps);
        dg_free(spp);
        dg_free(ex);
        dg_free(exp);
        if (!nb) {
            st = dg_err_nomem(err, "checkpoint index");
            break;
        }
        buf = nb;
        dgr_table_add(&tb, e->key, e->klen, buf, pl);
    }
    dg_free(buf);
    if (st == DG_OK)
        st = dgr_table_finish(&tb, out, len, err);
    dgr_table_builder_free(&tb);
    dg_free(sorted);
    return st;
}

/* fsync the directory holding path (best effort). */
static void sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = !slash ? dg_strdup(".") : slash == path ? dg_strdup("/")
                                         : dg_strndup(path, (size_t)(slash - path));
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    dg_free(dir);
}

dg_status dgr_bundle_writer_finish(dgr_bundle_writer *w, dg_error *err)
{
    dg_status st = DG_OK;
    char *idx = NULL, *data = NULL, *index = NULL;
    size_t il = 0;
    if (fflush(w->data) != 0 || fsync(fileno(w->data)) != 0) {
        if (!w->bad)
            w->err_no = errno;
        w->bad = 1;
    }
    if (fclose(w->data) != 0 && !w->bad) {
        w->bad = 1;
        w->err_no = errno;
    }
    w->data = NULL;
    if (w->bad) {
        st = dg_err(err, DG_E_IO, "%s: writing the checkpoint failed: %s",
                    w->prefix, strerror(w->err_no));
        goto done;
    }
    if ((st = dgr_bundle_build_index(w->ents, w->n, 0, w->step, &idx, &il, err)) != DG_OK)
        goto done;
    FILE *f = fopen(w->index_tmp, "wb");
    int ok = f != NULL;
    if (f) {
        ok = fwrite(idx, 1, il, f) == il;
        ok = fflush(f) == 0 && ok;
        ok = fsync(fileno(f)) == 0 && ok;
        ok = fclose(f) == 0 && ok;
    }
    if (!ok) {
        st = dg_err(err, DG_E_IO, "%s: writing the checkpoint failed: %s",
                    w->prefix, strerror(errno));
        goto done;
    }
    data = dgr_bundle_shard_path(w->prefix, 0, 1);
    index = index_name(w->prefix);
    if (!data || !index) {
        st = dg_err_nomem(err, "checkpoint");
        goto done;
    }
    /* data first: from here the index temporary is complete, and
     * dgr_bundle_recover rolls forward a save that dies between the two */
    if (rename(w->data_tmp, data) != 0 || rename(w->index_tmp, index) != 0) {
        st = dg_err(err, DG_E_IO, "%s: cannot rename the checkpoint into "
                    "place: %s", w->prefix, strerror(errno));
        goto done;
    }
    sync_dir_of(index);
done:
    if (st != DG_OK) {
        unlink(w->data_tmp);
        unlink(w->index_tmp);
    }
    dg_free(idx);
    dg_free(data);
    dg_free(index);
    return st;
}

void dgr_bundle_writer_free(dgr_bundle_writer *w)
{
    if (!w)
        return;
    if (w->data) {
        fclose(w->data);
        unlink(w->data_tmp);
    }
    for (int32_t i = 0; w->ents && i < w->n; i++) {
        dg_free(w->ents[i].key);
        dg_free(w->ents[i].slices);
    }
    dg_free(w->ents);
    dg_free(w->prefix);
    dg_free(w->data_tmp);
    dg_free(w->index_tmp);
    memset(w, 0, sizeof *w);
}

/* ---- recovery and removal ----------------------------------------------- */

static int pid_dead(long pid)
{
    return pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 &&
           errno == ESRCH;
}

void dgr_bundle_recover(const char *prefix)
{
    const char *slash = strrchr(prefix, '/');
    char *dir = !slash ? dg_strdup(".") : slash == prefix ? dg_strdup("/")
                                         : dg_strndup(prefix, (size_t)(slash - prefix));
    const char *base = slash ? slash + 1 : prefix;
    char *index = index_name(prefix), *data = dgr_bundle_shard_path(prefix, 0, 1);
    if (!dir || !index || !data)
        goto done;
    DIR *d = opendir(dir);
    struct dirent *e;
    /* "<base>.index.tmp.<pid>" of a dead writer whose data temporary is
     * gone: its data shard is in place, so its index goes in place too */
    while (d && (e = readdir(d)) != NULL) {
        size_t bl = strlen(base);
        const char *n = e->d_name;
        if (strncmp(n, base, bl) != 0 || strncmp(n + bl, ".index.tmp.", 11) != 0)
            continue;
        char *end;
        long pid = strtol(n + bl + 11, &end, 10);
        if (*end || !pid_dead(pid))
            continue;
        dg_sbuf t, dt;
        dg_sbuf_init(&t);
        dg_sbuf_init(&dt);
        dg_sbuf_addf(&t, "%s/%s", dir, n);
        dg_sbuf_addf(&dt, "%s.tmp.%s", data, n + bl + 11);
        struct stat sb;
        if (!t.oom && !dt.oom && stat(dt.s, &sb) != 0 && errno == ENOENT)
            (void)rename(t.s, index);
        dg_sbuf_free(&t);
        dg_sbuf_free(&dt);
    }
    if (d)
        closedir(d);
    sync_dir_of(index);
    slash = strrchr(index, '/');
    dg_remove_dead_temps(dir, slash ? slash + 1 : index);
    slash = strrchr(data, '/');
    dg_remove_dead_temps(dir, slash ? slash + 1 : data);
done:
    dg_free(dir);
    dg_free(index);
    dg_free(data);
}

void dgr_bundle_remove(const char *prefix)
{
    const char *slash = strrchr(prefix, '/');
    char *dir = !slash ? dg_strdup(".") : slash == prefix ? dg_strdup("/")
                                         : dg_strndup(prefix, (size_t)(slash - prefix));
    const char *base = slash ? slash + 1 : prefix;
    char *index = index_name(prefix);
    if (index)
        unlink(index);
    DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *e;
    size_t bl = strlen(base);
    while (d && (e = readdir(d)) != NULL) {
        const char *n = e->d_name;
        unsigned a, b;
        char tail;
        /* "<base>.data-SSSSS-of-NNNNN" exactly */
        if (strncmp(n, base, bl) != 0 || strncmp(n + bl, ".data-", 6) != 0 ||
            sscanf(n + bl + 6, "%5u-of-%5u%c", &a, &b, &tail) != 2 ||
            strlen(n + bl + 6) != 14)
            continue;
        dg_sbuf f;
        dg_sbuf_init(&f);
        dg_sbuf_addf(&f, "%s/%s", dir, n);
        if (!f.oom)
            unlink(f.s);
        dg_sbuf_free(&f);
    }
    if (d)
        closedir(d);
    dg_free(index);
    dg_free(dir);
}
