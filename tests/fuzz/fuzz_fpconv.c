/*
 * fuzz_fpconv.c -- libFuzzer target, differential: common/dg_fpconv against
 * libc.  The input as a C string must parse with dg_strtod/dg_strtof to the
 * same bits, end and errno as strtod/strtof.  Each 8-byte (4-byte) group of
 * the input, as float64 (float32) bits, must format exactly as printf's
 * retry loop and %.{p}g do, and its shortest text must read back bit for
 * bit.  Any difference aborts.
 */
#include <errno.h>
#include <math.h>

#include "dg_fpconv.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_same(const char *s)
{
    char *e1, *e2;
    errno = 0;
    double a = strtod(s, &e1);
    int er1 = errno;
    errno = 0;
    double b = dg_strtod(s, &e2);
    int er2 = errno;
    if (memcmp(&a, &b, 8) != 0 || e1 != e2 || er1 != er2)
        abort();
    errno = 0;
    float fa = strtof(s, &e1);
    er1 = errno;
    errno = 0;
    float fb = dg_strtof(s, &e2);
    er2 = errno;
    if (memcmp(&fa, &fb, 4) != 0 || e1 != e2 || er1 != er2)
        abort();
}

static void format_same(double v, int single, int p)
{
    char want[64], got[DG_FP_BUFSIZE];
    if (isfinite(v)) {
        for (int k = 1; k <= (single ? 9 : 17); k++) {
            snprintf(want, sizeof want, "%.*g", k, v);
            if (single ? strtof(want, NULL) == (float)v : strtod(want, NULL) == v)
                break;
        }
    } else {
        snprintf(want, sizeof want, "%g", v);
    }
    dg_fp_format_shortest(got, v, single);
    if (strcmp(want, got) != 0)
        abort();
    if (isfinite(v)) {
        char *end;
        if (single) {
            float f = (float)v, r = dg_strtof(got, &end);
            if (memcmp(&f, &r, 4) != 0 || *end)
                abort();
        } else {
            double r = dg_strtod(got, &end);
            if (memcmp(&v, &r, 8) != 0 || *end)
                abort();
        }
    }
    snprintf(want, sizeof want, "%.*g", p, v);
    dg_fp_format_g(got, v, p);
    if (strcmp(want, got) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    parse_same(s);
    free(s);
    for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
        double d;
        memcpy(&d, data + i, 8);
        format_same(d, 0, 1 + data[i] % 17);
        float f;
        memcpy(&f, data + i, 4);
        format_same((double)f, 1, 1 + data[i + 4] % 17);
    }
    return 0;
}
