/*
 * test_tf_bundle.c -- TensorFlow's checkpoint format (issue 24): CRC-32C,
 * the LevelDB table reader and writer (round trips over several blocks,
 * every truncation and byte flip refused or harmless), the tensor bundle
 * against files TF 2.21 wrote (tests/data/tf_ckpt, made by
 * tools/tf_ckpt/make_fixtures.py): its entries and values, dgrun's index
 * of the same entries byte for byte TF's, a bundle written and read back,
 * damaged shards; the `checkpoint` state file read and written;
 * partitioned variables (tests/data/tf_ckpt/part, made by
 * tools/tf_ckpt/make_partitioned.py): TF's slice keys, the full entries'
 * slices, their index byte for byte, slices written and read back, a
 * slice without its entry, box copies between slices.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_slices.h"
#include "ckpt_state.h"
#include "dg_alloc.h"
#include "dg_crc32c.h"
#include "dg_io.h"
#include "tf_bundle.h"
#include "tf_table.h"

static char dir[256];
static char src[512]; /* tests/data/tf_ckpt */

static char *slurp(const char *path, size_t *len)
{
    char *buf = NULL;
    if (dg_read_file(path, &buf, len) != DG_OK)
        fail_msg("cannot read %s", path);
    return buf;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    fclose(f);
}

static void test_crc32c(void **state)
{
    (void)state;
    /* RFC 3720 B.4 and the usual check value */
    assert_int_equal(dg_crc32c(0, "123456789", 9), 0xe3069283u);
    unsigned char z[32] = {0}, ff[32], inc[32];
    memset(ff, 0xff, sizeof ff);
    for (int i = 0; i < 32; i++)
        inc[i] = (unsigned char)i;
    assert_int_equal(dg_crc32c(0, z, 32), 0x8a9136aau);
    assert_int_equal(dg_crc32c(0, ff, 32), 0x62a8ab43u);
    assert_int_equal(dg_crc32c(0, inc, 32), 0x46dd794eu);
    /* chained pieces = the whole, at every split and alignment */
    unsigned char big[1000];
    for (int i = 0; i < 1000; i++)
        big[i] = (unsigned char)(i * 7 + 3);
    uint32_t whole = dg_crc32c(0, big, sizeof big);
    for (size_t k = 0; k < 40; k++)
        assert_int_equal(dg_crc32c(dg_crc32c(0, big, k), big + k, sizeof big - k), whole);
    for (uint32_t v = 0; v < 100000u; v += 997)
        assert_int_equal(dg_crc32c_unmask(dg_crc32c_mask(v * 2654435761u)), v * 2654435761u);
    assert_int_not_equal(dg_crc32c_mask(whole), whole);
}

/* keys "k00000".."k<n>" with values of varying length */
static char *build(int n, size_t block, size_t *len)
{
    dgr_table_builder b;
    dgr_table_builder_init(&b, block);
    char key[32], val[64];
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "k%05d", i);
        memset(val, 'a' + i % 26, sizeof val);
        dgr_table_add(&b, key, strlen(key), val, (size_t)(i % 60));
    }
    char *out = NULL;
    dg_error err = {0};
    assert_int_equal(dgr_table_finish(&b, &out, len, &err), DG_OK);
    dgr_table_builder_free(&b);
    return out;
}

static void test_table_roundtrip(void **state)
{
    (void)state;
    int sizes[] = {0, 1, 17, 1000};
    for (int s = 0; s < 4; s++) {
        size_t len;
        char *t = build(sizes[s], 256, &len); /* small blocks: many */
        dgr_table_kv *kv;
        int32_t n;
        dg_error err = {0};
        assert_int_equal(dgr_table_parse((uint8_t *)t, len, 1, "t", &kv, &n, &err), DG_OK);
        assert_int_equal(n, sizes[s]);
        for (int i = 0; i < n; i++) {
            char key[32];
            snprintf(key, sizeof key, "k%05d", i);
            assert_string_equal(kv[i].key, key);
            assert_int_equal(kv[i].vlen, (size_t)(i % 60));
            for (size_t j = 0; j < kv[i].vlen; j++)
                assert_int_equal(kv[i].val[j], 'a' + i % 26);
        }
        dgr_table_free(kv, n);
        dg_free(t);
    }
    /* keys out of order are refused by the builder */
    dgr_table_builder b;
    dgr_table_builder_init(&b, 0);
    dgr_table_add(&b, "b", 1, "", 0);
    dgr_table_add(&b, "a", 1, "", 0);
    char *out;
    size_t len;
    dg_error err = {0};
    assert_int_equal(dgr_table_finish(&b, &out, &len, &err), DG_E_RUNTIME);
    dgr_table_builder_free(&b);
}

static void test_table_damage(void **state)
{
    (void)state;
    size_t len;
    char *t = build(40, 128, &len);
    uint8_t *c = malloc(len);
    assert_non_null(c);
    dgr_table_kv *kv;
    int32_t n;
    dg_error err = {0};
    /* every truncation: refused (the footer moves) */
    for (size_t k = 0; k < len; k++) {
        memcpy(c, t, k);
        assert_int_equal(dgr_table_parse(c, k, 1, "t.index", &kv, &n, &err), DG_E_GRAPH);
        assert_non_null(strstr(err.msg, "t.index: checkpoint index is corrupt: "));
    }
    /* every byte flipped: refused, except in what no reader looks at:
     * the footer's padding and the (empty) metaindex block */
    const uint8_t *f = (const uint8_t *)t + len - 48;
    uint64_t moff = 0, msize = 0;
    int at = 0;
    for (int sh = 0; f[at] & 0x80; sh += 7)
        moff |= (uint64_t)(f[at++] & 0x7f) << sh;
    moff |= (uint64_t)f[at] << (7 * at);
    msize = f[at + 1];
    int ok = 0;
    for (size_t k = 0; k < len; k++) {
        memcpy(c, t, len);
        c[k] ^= 0x21;
        dg_status st = dgr_table_parse(c, len, 1, "t", &kv, &n, &err);
        if (st == DG_OK) {
            ok++;
            if (!(k >= len - 48 && k < len - 8) && !(k >= moff && k < moff + msize + 5))
                fail_msg("flip at %zu of %zu accepted", k, len);
            dgr_table_free(kv, n);
        } else {
            assert_int_equal(st, DG_E_GRAPH);
        }
        /* without checksums the parser sees the damage itself: no crash,
         * nothing leaked */
        if (dgr_table_parse(c, len, 0, "t", &kv, &n, &err) == DG_OK)
            dgr_table_free(kv, n);
    }
    assert_true(ok > 0);
    memcpy(c, t, len);
    c[3] ^= 1;
    assert_int_equal(dgr_table_parse(c, len, 1, "t", &kv, &n, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "block checksum mismatch"));
    free(c);
    dg_free(t);
}

/* dgrun's index of b's entries is the index TF wrote at prefix. */
static void same_index_as_tf(const dgr_bundle *b, const char *prefix)
{
    char path[700];
    char *mine = NULL;
    size_t ml = 0, tl = 0;
    dg_error err = {0};
    assert_int_equal(dgr_bundle_build_index(b->ents, b->n, 0, -1, &mine, &ml, &err), DG_OK);
    snprintf(path, sizeof path, "%s.index", prefix);
    char *tf = slurp(path, &tl);
    assert_int_equal(ml, tl);
    assert_memory_equal(mine, tf, tl);
    dg_free(mine);
    dg_free(tf);
}

static void test_bundle_tf_file(void **state)
{
    (void)state;
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s/types/model.ckpt", src);
    dgr_bundle b;
    dg_error err = {0};
    if (dgr_bundle_open(prefix, &b, &err) != DG_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(b.num_shards, 1);
    assert_false(b.has_step);
    assert_int_equal(b.n, 6);
    const char *keys[] = {"f32", "f64", "i32", "i64", "i8", "scope/flag"};
    for (int i = 0; i < 6; i++)
        assert_string_equal(b.ents[i].key, keys[i]);
    const dgr_bundle_entry *e = dgr_bundle_find(&b, "f32");
    assert_non_null(e);
    assert_int_equal(e->tf_dtype, DGR_TF_FLOAT);
    assert_int_equal(e->rank, 2);
    assert_int_equal(e->dims[0], 2);
    assert_int_equal(e->dims[1], 3);
    float f[6];
    assert_int_equal(dgr_bundle_read(&b, e, f, &err), DG_OK);
    for (int i = 0; i < 6; i++)
        assert_true(f[i] == i / 4.0f);
    e = dgr_bundle_find(&b, "f64");
    double d;
    assert_int_equal(e->rank, 0);
    assert_int_equal(dgr_bundle_read(&b, e, &d, &err), DG_OK);
    assert_true(d == 2.5);
    int32_t i32[4];
    e = dgr_bundle_find(&b, "i32");
    assert_int_equal(dgr_bundle_read(&b, e, i32, &err), DG_OK);
    assert_int_equal(i32[1], -2);
    assert_int_equal(i32[3], 1 << 30);
    int64_t i64[2];
    e = dgr_bundle_find(&b, "i64");
    assert_int_equal(e->rank, 3);
    assert_int_equal(dgr_bundle_read(&b, e, i64, &err), DG_OK);
    assert_true(i64[0] == (int64_t)1 << 40 && i64[1] == -7);
    unsigned char fl[3];
    e = dgr_bundle_find(&b, "scope/flag");
    assert_int_equal(e->tf_dtype, DGR_TF_BOOL);
    assert_int_equal(dgr_bundle_read(&b, e, fl, &err), DG_OK);
    assert_true(fl[0] == 1 && fl[1] == 0 && fl[2] == 1);
    e = dgr_bundle_find(&b, "i8"); /* a dtype dgrun has not */
    assert_int_equal(e->tf_dtype, 6);
    assert_int_equal(dgr_bundle_read(&b, e, fl, &err), DG_E_GRAPH);
    assert_null(dgr_bundle_find(&b, "nope"));
    assert_string_equal(dgr_bundle_dtype_name(6), "int8");

    /* dgrun's index of the same entries is TF's file, byte for byte */
    same_index_as_tf(&b, prefix);
    dgr_bundle_free(&b);

    /* the MLP's Adam checkpoint: TF's names, TF's global_step as the step */
    snprintf(prefix, sizeof prefix, "%s/mlp/model.ckpt-3", src);
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    const char *names[] = {"b1", "b1/Adam", "b1/Adam_1", "b2", "b2/Adam", "b2/Adam_1",
                           "beta1_power", "beta2_power", "global_step", "w1",
                           "w1/Adam", "w1/Adam_1", "w2", "w2/Adam", "w2/Adam_1"};
    assert_int_equal(b.n, 15);
    for (int i = 0; i < 15; i++)
        assert_string_equal(b.ents[i].key, names[i]);
    int64_t gs = 0;
    assert_int_equal(dgr_bundle_read(&b, dgr_bundle_find(&b, "global_step"), &gs, &err), DG_OK);
    assert_int_equal(gs, 3);
    float b1p;
    assert_int_equal(dgr_bundle_read(&b, dgr_bundle_find(&b, "beta1_power"), &b1p, &err), DG_OK);
    assert_true(b1p > 0.6560f && b1p < 0.6562f); /* 0.9^(3+1) */
    dgr_bundle_free(&b);
}

static void hex(const char *key, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", (unsigned char)key[i]);
}

static void test_bundle_slices(void **state)
{
    (void)state;
    char prefix[600], hx[200];
    snprintf(prefix, sizeof prefix, "%s/part/model.ckpt-2", src);
    dgr_bundle b;
    dg_error err = {0};
    if (dgr_bundle_open(prefix, &b, &err) != DG_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(b.n, 12); /* 7 slices, b, e, v, w */
    const dgr_bundle_entry *w = dgr_bundle_find(&b, "w");
    assert_non_null(w);
    assert_true(w->sliced);
    assert_int_equal(w->n_slices, 3);
    assert_int_equal(w->rank, 2);
    assert_int_equal(w->dims[0], 6);
    assert_true(w->slices[1].start[0] == 2 && w->slices[1].len[0] == 2 &&
                w->slices[1].start[1] == 0 && w->slices[1].len[1] == 4);
    const dgr_bundle_entry *v = dgr_bundle_find(&b, "v");
    assert_true(v->slices[2].start[1] == 5 && v->slices[2].len[1] == 2);
    /* TF's keys (make_partitioned.py's meta.json) */
    size_t kl = 0;
    char *key = dgr_bundle_slice_key("w", 2, &w->slices[1], &kl);
    hex(key, kl, hx);
    assert_string_equal(hx, "00770001010282828084");
    const dgr_bundle_entry *s1 = dgr_bundle_find_n(&b, key, kl);
    dg_free(key);
    assert_non_null(s1);
    assert_string_equal(dgr_bundle_entry_name(s1), "w (slice 2,2:0,4)");
    float part[8];
    assert_int_equal(dgr_bundle_read(&b, s1, part, &err), DG_OK);
    const dgr_bundle_entry *e = dgr_bundle_find(&b, "e");
    key = dgr_bundle_slice_key("e", 2, &e->slices[1], &kl); /* 65: 2 bytes */
    hex(key, kl, hx);
    dg_free(key);
    assert_string_equal(hx, "006500010102c041c0418082");
    /* whole dimensions, big and negative numbers, an 0xff byte */
    dgr_bundle_slice sl = {{0, 100000, -70}, {-1, 5, 1}};
    key = dgr_bundle_slice_key("a", 3, &sl, &kl);
    hex(key, kl, hx);
    dg_free(key);
    assert_string_equal(hx, "006100010103807fe186a0853fba81");
    key = dgr_bundle_slice_key("\xff", 0, &sl, &kl);
    hex(key, kl, hx);
    dg_free(key);
    assert_string_equal(hx, "00ff00000100");

    /* dgrun's index of the same entries is TF's, byte for byte */
    same_index_as_tf(&b, prefix);
    char *mine = NULL;
    size_t ml = 0;

    /* a slice the full entry lists without its entry: corrupt, named */
    dgr_bundle_entry *less = dg_malloc(sizeof *less * (size_t)b.n);
    int32_t nl = 0;
    for (int32_t i = 0; i < b.n; i++)
        if (&b.ents[i] != s1)
            less[nl++] = b.ents[i];
    assert_int_equal(dgr_bundle_build_index(less, nl, 0, -1, &mine, &ml, &err), DG_OK);
    dg_free(less);
    dgr_bundle c;
    assert_int_equal(dgr_bundle_parse_index((const uint8_t *)mine, ml, 1, "x.index",
                                            "x", &c, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "x.index: checkpoint index is corrupt: w "
                           "(slice 2,2:0,4): no entry for it"));
    dg_free(mine);
    dgr_bundle_free(&b);

    /* written: a [4,3] tensor in slices along axis 1, and a slice that is
     * the whole tensor (a plain entry, as TF's AddSlice) */
    snprintf(prefix, sizeof prefix, "%s/sliced", dir);
    dgr_bundle_writer wr;
    assert_int_equal(dgr_bundle_writer_open(&wr, prefix, 7, &err), DG_OK);
    dg_shape full = {2, {4, 3}};
    float all[12];
    for (int i = 0; i < 12; i++)
        all[i] = (float)i;
    float c0[4] = {0, 3, 6, 9}, c12[8] = {1, 2, 4, 5, 7, 8, 10, 11};
    dgr_bundle_slice a0 = {{0, 0}, {4, 1}}, a12 = {{0, 1}, {4, 2}};
    dgr_bundle_slice whole = {{0, 0}, {4, 3}}, out = {{0, 2}, {4, 2}};
    assert_int_equal(dgr_bundle_writer_add_slice(&wr, "m", &full, &a12, DG_F32, c12, &err), DG_OK);
    assert_int_equal(dgr_bundle_writer_add_slice(&wr, "m", &full, &a0, DG_F32, c0, &err), DG_OK);
    assert_int_equal(dgr_bundle_writer_add_slice(&wr, "n", &full, &whole, DG_F32, all, &err), DG_OK);
    assert_int_equal(dgr_bundle_writer_add_slice(&wr, "m", &full, &out, DG_F32, c12, &err),
                     DG_E_RUNTIME);
    dg_shape other = {2, {4, 4}};
    assert_int_equal(dgr_bundle_writer_add_slice(&wr, "m", &other, &a0, DG_F32, c0, &err),
                     DG_E_RUNTIME);
    assert_int_equal(dgr_bundle_writer_finish(&wr, &err), DG_OK);
    dgr_bundle_writer_free(&wr);
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    assert_int_equal(b.n, 4);
    const dgr_bundle_entry *m = dgr_bundle_find(&b, "m");
    assert_true(m->sliced && m->n_slices == 2 && m->size == 0);
    assert_true(m->slices[0].start[1] == 1 && m->slices[1].len[1] == 1);
    const dgr_bundle_entry *n = dgr_bundle_find(&b, "n");
    assert_false(n->sliced);
    float back[12] = {0}, got[8];
    assert_int_equal(dgr_bundle_read(&b, n, back, &err), DG_OK);
    assert_memory_equal(back, all, sizeof all);
    key = dgr_bundle_slice_key("m", 2, &a12, &kl);
    const dgr_bundle_entry *p12 = dgr_bundle_find_n(&b, key, kl);
    dg_free(key);
    assert_non_null(p12);
    assert_int_equal(dgr_bundle_read(&b, p12, got, &err), DG_OK);
    assert_memory_equal(got, c12, sizeof c12);
    dgr_bundle_free(&b);

    /* box copies: the slices put together give the whole tensor; a box
     * across two slices takes its part of each */
    int64_t z[2] = {0, 0}, fl[2] = {4, 3};
    memset(back, 0, sizeof back);
    assert_int_equal(dgr_copy_box((char *)back, z, fl, (const char *)c0,
                                  a0.start, a0.len, 2, 4), 4);
    assert_int_equal(dgr_copy_box((char *)back, z, fl, (const char *)c12,
                                  a12.start, a12.len, 2, 4), 8);
    assert_memory_equal(back, all, sizeof all);
    int64_t bs[2] = {1, 0}, bl[2] = {2, 2}; /* rows 1..2, columns 0..1 */
    float box[4] = {0};
    assert_int_equal(dgr_copy_box((char *)box, bs, bl, (const char *)c0,
                                  a0.start, a0.len, 2, 4), 2);
    assert_int_equal(dgr_copy_box((char *)box, bs, bl, (const char *)c12,
                                  a12.start, a12.len, 2, 4), 2);
    assert_true(box[0] == 3 && box[1] == 4 && box[2] == 6 && box[3] == 7);
    int64_t fs[2] = {0, 5}, fn[2] = {4, 1}; /* meets nothing */
    assert_int_equal(dgr_copy_box((char *)box, fs, fn, (const char *)c0,
                                  a0.start, a0.len, 2, 4), 0);
}

static void test_bundle_write_read(void **state)
{
    (void)state;
    char prefix[300], path[400];
    snprintf(prefix, sizeof prefix, "%s/rt/model.ckpt-7", dir);
    snprintf(path, sizeof path, "%s/rt", dir);
    assert_int_equal(mkdir(path, 0777), 0);
    dgr_bundle_writer w;
    dg_error err = {0};
    assert_int_equal(dgr_bundle_writer_open(&w, prefix, 7, &err), DG_OK);
    float wv[12];
    for (int i = 0; i < 12; i++)
        wv[i] = (float)i - 5.5f;
    dg_shape s34 = {2, {3, 4}}, s0 = {0, {0}}, s5 = {1, {0}};
    int64_t g = 7;
    assert_int_equal(dgr_bundle_writer_add(&w, "z/w", DG_F32, &s34, wv, &err), DG_OK);
    assert_int_equal(dgr_bundle_writer_add(&w, "global_step", DG_I64, &s0, &g, &err), DG_OK);
    assert_int_equal(dgr_bundle_writer_add(&w, "a/empty", DG_F64, &s5, wv, &err), DG_OK);
    /* nothing visible before finish */
    snprintf(path, sizeof path, "%s.index", prefix);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(dgr_bundle_writer_finish(&w, &err), DG_OK);
    dgr_bundle_writer_free(&w);
    assert_int_equal(access(path, F_OK), 0);
    dgr_bundle b;
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    assert_true(b.has_step);
    assert_int_equal(b.step, 7);
    assert_int_equal(b.n, 3);
    assert_string_equal(b.ents[0].key, "a/empty");
    assert_int_equal(b.ents[0].size, 0);
    assert_int_equal(b.ents[0].rank, 1);
    float back[12];
    const dgr_bundle_entry *e = dgr_bundle_find(&b, "z/w");
    assert_int_equal(e->offset, 0); /* data in the order added */
    assert_int_equal(dgr_bundle_read(&b, e, back, &err), DG_OK);
    assert_memory_equal(back, wv, sizeof wv);
    double none;
    assert_int_equal(dgr_bundle_read(&b, dgr_bundle_find(&b, "a/empty"), &none, &err), DG_OK);
    dgr_bundle_free(&b);

    /* damaged shards: named with the entry */
    char data[400];
    snprintf(data, sizeof data, "%s.data-00000-of-00001", prefix);
    size_t dl;
    char *good = slurp(data, &dl);
    assert_int_equal(dl, 48 + 8);
    good[5] ^= 0x40;
    spit(data, good, dl);
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    assert_int_equal(dgr_bundle_read(&b, dgr_bundle_find(&b, "z/w"), back, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "Checksum does not match"));
    assert_non_null(strstr(err.msg, "z/w"));
    assert_non_null(strstr(err.msg, data));
    dgr_bundle_free(&b);
    good[5] ^= 0x40;
    spit(data, good, 50); /* global_step's 8 bytes start at 48 */
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    assert_int_equal(dgr_bundle_read(&b, dgr_bundle_find(&b, "z/w"), back, &err), DG_OK);
    assert_int_equal(dgr_bundle_read(&b, dgr_bundle_find(&b, "global_step"), &g, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "truncated shard"));
    assert_non_null(strstr(err.msg, "global_step"));
    dgr_bundle_free(&b);
    unlink(data);
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    assert_int_equal(dgr_bundle_read(&b, dgr_bundle_find(&b, "z/w"), back, &err), DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "missing"));
    dgr_bundle_free(&b);
    dg_free(good);

    /* a save that died between its two renames is rolled forward: the
     * data in place, the index still a temporary of a dead pid */
    assert_int_equal(dgr_bundle_writer_open(&w, prefix, 9, &err), DG_OK);
    g = 9;
    assert_int_equal(dgr_bundle_writer_add(&w, "global_step", DG_I64, &s0, &g, &err), DG_OK);
    assert_int_equal(dgr_bundle_writer_finish(&w, &err), DG_OK);
    dgr_bundle_writer_free(&w);
    char tmp[500];
    long dead = 999999; /* above pid_max's default: no such process */
    snprintf(tmp, sizeof tmp, "%s.index.tmp.%ld", prefix, dead);
    assert_int_equal(rename(path, tmp), 0);
    dgr_bundle_recover(prefix);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    assert_int_equal(b.step, 9);
    dgr_bundle_free(&b);
    /* ... while one that died before (its data temporary still there) is
     * dropped */
    snprintf(tmp, sizeof tmp, "%s.index.tmp.%ld", prefix, dead);
    spit(tmp, "x", 1);
    snprintf(path, sizeof path, "%s.data-00000-of-00001.tmp.%ld", prefix, dead);
    spit(path, "y", 1);
    dgr_bundle_recover(prefix);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(dgr_bundle_open(prefix, &b, &err), DG_OK);
    assert_int_equal(b.step, 9);
    dgr_bundle_free(&b);
    dgr_bundle_remove(prefix);
    snprintf(path, sizeof path, "%s.index", prefix);
    assert_int_equal(access(path, F_OK), -1);
}

static void test_bundle_bad_index(void **state)
{
    (void)state;
    dgr_bundle b;
    dg_error err = {0};
    char *idx;
    size_t il;
    /* an index without the header entry */
    dgr_table_builder tb;
    dgr_table_builder_init(&tb, 0);
    dgr_table_add(&tb, "w", 1, "\x08\x01", 2);
    assert_int_equal(dgr_table_finish(&tb, &idx, &il, &err), DG_OK);
    dgr_table_builder_free(&tb);
    assert_int_equal(dgr_bundle_parse_index((uint8_t *)idx, il, 1, "x.index", "x", &b, &err),
                     DG_E_GRAPH);
    assert_non_null(strstr(err.msg, "x.index: checkpoint index is corrupt: no header"));
    dg_free(idx);
    /* an entry that is not a BundleEntryProto; a negative dimension */
    const char *vals[] = {"\xff\xff", "\x12\x04\x12\x02\x08\x7f"};
    const char *why[] = {"entry for key w: not parseable", "entry for key w: Invalid tensor shape"};
    for (int i = 0; i < 2; i++) {
        dgr_table_builder_init(&tb, 0);
        dgr_table_add(&tb, "", 0, "\x08\x01", 2);
        dgr_table_add(&tb, "w", 1, vals[i], strlen(vals[i]));
        assert_int_equal(dgr_table_finish(&tb, &idx, &il, &err), DG_OK);
        dgr_table_builder_free(&tb);
        if (i == 1) { /* dims[0] = -1 needs the 10-byte varint */
            dg_free(idx);
            char v[] = "\x12\x0d\x12\x0b\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01";
            dgr_table_builder_init(&tb, 0);
            dgr_table_add(&tb, "", 0, "\x08\x01", 2);
            dgr_table_add(&tb, "w", 1, v, sizeof v - 1);
            assert_int_equal(dgr_table_finish(&tb, &idx, &il, &err), DG_OK);
            dgr_table_builder_free(&tb);
        }
        assert_int_equal(dgr_bundle_parse_index((uint8_t *)idx, il, 1, "x.index", "x", &b, &err),
                         DG_E_GRAPH);
        if (!strstr(err.msg, why[i]))
            fail_msg("%s", err.msg);
        dg_free(idx);
    }
}

static void test_state_file(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/mlp", src);
    dgr_ckpt_state s;
    int found;
    dg_error err = {0};
    assert_int_equal(dgr_ckpt_state_read(path, &s, &found, &err), DG_OK);
    assert_int_equal(found, 1);
    assert_string_equal(s.model, "model.ckpt-3");
    assert_int_equal(s.n_all, 1);
    char *text = dgr_ckpt_state_text(&s);
    size_t tl;
    snprintf(path, sizeof path, "%s/mlp/checkpoint", src);
    char *tf = slurp(path, &tl);
    assert_string_equal(text, tf); /* what TF writes */
    dg_free(text);
    dg_free(tf);
    dgr_ckpt_state_free(&s);
    /* TF 2's fields, escapes, comments, absolute paths */
    const char *t =
        "# written by hand\n"
        "model_checkpoint_path: \"/abs/ck-\\\"2\\\"\\303\\251\"\n"
        "all_model_checkpoint_paths: 'a\\\\b' \"c\"\n"
        "all_model_checkpoint_timestamps: 1700000000.5\n"
        "all_model_checkpoint_paths: \"ck-2\"\n"
        "last_preserved_timestamp: 1.7e9\n";
    assert_int_equal(dgr_ckpt_state_parse(t, strlen(t), "c", &s, &err), DG_OK);
    assert_string_equal(s.model, "/abs/ck-\"2\"\xc3\xa9");
    assert_int_equal(s.n_all, 2);
    assert_string_equal(s.all[0], "a\\bc");
    char *j = dgr_ckpt_state_join("d", s.model);
    assert_string_equal(j, s.model);
    dg_free(j);
    j = dgr_ckpt_state_join("d", s.all[1]);
    assert_string_equal(j, "d/ck-2");
    dg_free(j);
    text = dgr_ckpt_state_text(&s);
    dgr_ckpt_state s2;
    assert_int_equal(dgr_ckpt_state_parse(text, strlen(text), "c", &s2, &err), DG_OK);
    assert_string_equal(s2.model, s.model);
    assert_string_equal(s2.all[0], s.all[0]);
    assert_non_null(strstr(text, "\\303\\251")); /* octal, as TF's text_format */
    dg_free(text);
    dgr_ckpt_state_free(&s);
    dgr_ckpt_state_free(&s2);
    const char *bad[] = {"", "model_checkpoint_path: 3\n", "bogus: \"x\"\n",
                         "model_checkpoint_path: \"x", "model_checkpoint_path: \"\"\n"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(dgr_ckpt_state_parse(bad[i], strlen(bad[i]), "dir/checkpoint", &s, &err),
                         DG_E_GRAPH);
        assert_non_null(strstr(err.msg, "dir/checkpoint: not a checkpoint state file"));
    }
    /* written atomically, read back */
    dgr_ckpt_state w = {0};
    w.model = dg_strdup("model.ckpt-5");
    assert_int_equal(dgr_ckpt_state_push(&w, "model.ckpt-4"), 0);
    assert_int_equal(dgr_ckpt_state_push(&w, "model.ckpt-5"), 0);
    assert_int_equal(dgr_ckpt_state_write(dir, &w, &err), DG_OK);
    assert_int_equal(dgr_ckpt_state_read(dir, &s, &found, &err), DG_OK);
    assert_int_equal(found, 1);
    assert_int_equal(s.n_all, 2);
    assert_string_equal(s.all[1], "model.ckpt-5");
    dgr_ckpt_state_free(&s);
    dgr_ckpt_state_free(&w);
    snprintf(path, sizeof path, "%s/none", dir);
    assert_int_equal(dgr_ckpt_state_read(path, &s, &found, &err), DG_OK);
    assert_int_equal(found, 0);
}

static int setup(void **state)
{
    (void)state;
    const char *root = getenv("DGRUN_SOURCE_ROOT");
    snprintf(src, sizeof src, "%s/tests/data/tf_ckpt", root ? root : ".");
    snprintf(dir, sizeof dir, "/tmp/dgrun_test_tf_bundle_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test(test_table_roundtrip),
        cmocka_unit_test(test_table_damage),
        cmocka_unit_test(test_bundle_tf_file),
        cmocka_unit_test(test_bundle_write_read),
        cmocka_unit_test(test_bundle_slices),
        cmocka_unit_test(test_bundle_bad_index),
        cmocka_unit_test(test_state_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
