/*
 * fuzz_feeds.c -- libFuzzer target for the feed readers: built twice, as
 * fuzz_npy (FUZZ_SUFFIX "npy") and fuzz_csv ("csv").  The input is the
 * file; the wanted dtype and whether a Placeholder shape constrains it come
 * from the input's length, so every file is tried against several.  Each
 * input is read twice: normally, then with one allocation failing (which
 * one is derived from the input): the reader must report DG_E_NOMEM or
 * succeed, and free everything.
 */
#include "feeds.h"
#include "fuzz_util.h"
#include "dg_alloc.h"

#ifndef FUZZ_SUFFIX
#error "define FUZZ_SUFFIX"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_once(const char *path, size_t size)
{
    dg_dtype want = (dg_dtype)(size % DG_DTYPE_COUNT);
    dg_shape any2 = {2, {-1, -1}};
    const dg_shape *shape = size / DG_DTYPE_COUNT % 2 ? &any2 : NULL;
    dg_tensor *t = NULL;
    dg_error err = {0};
    dg_status st = dgr_tensor_load_file(path, want, shape, &t, &err);
    if (st == DG_OK) {
        if (!t || t->dtype != want)
            abort();
        dg_tensor_free(t);
    } else if (t || !err.msg[0]) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch(data, size, FUZZ_SUFFIX);
    unsigned long before = dg_alloc_count();
    read_once(path, size);
    unsigned long n = dg_alloc_count() - before;
    if (n > 0) {
        unsigned long h = size;
        for (size_t i = 0; i < size && i < 64; i++)
            h = h * 31 + data[i];
        dg_alloc_fail_once((long)(h % n));
        read_once(path, size);
        dg_alloc_fail_once(-1);
    }
    return 0;
}
