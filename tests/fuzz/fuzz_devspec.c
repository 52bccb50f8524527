/*
 * fuzz_devspec.c -- libFuzzer target: the device-name parser (SPEC 3), in
 * dgrun's own syntax and TF's two (Python's DeviceSpec, C++ ParseFullName).
 * A spec that parses must print canonically, and its canonical text must
 * parse in every syntax, back to the same text in TF's two (dgrun's may
 * read C++'s type "gpu" as Python's GPU once, then is stable); merging
 * and matching must not crash.
 */
#include "devices.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    dgc_devspec a, b;
    static const int syns[] = {DGC_DEVSPEC_DGRUN, DGC_DEVSPEC_CPP,
                               DGC_DEVSPEC_PY};
    for (int si = 0; si < 3; si++) {
        int syn = syns[si];
        if (dgc_devspec_parse_as(s, &a, syn) != 0)
            continue;
        char t1[256], t2[256];
        dgc_devspec_str(&a, t1, sizeof t1);
        for (int bi = 0; bi < 3; bi++) {
            int back = syns[bi];
            if (dgc_devspec_parse_as(t1, &b, back) != 0)
                abort(); /* canonical text must parse */
            dgc_devspec_str(&b, t2, sizeof t2);
            if (back == syn && syn != DGC_DEVSPEC_DGRUN && strcmp(t1, t2) != 0)
                abort(); /* and print the same (in the other syntax a
                            type "gpu" of C++'s is Python's GPU) */
            if (back == DGC_DEVSPEC_DGRUN) {
                char t3[256];
                if (dgc_devspec_parse_as(t2, &b, back) != 0)
                    abort();
                dgc_devspec_str(&b, t3, sizeof t3);
                if (strcmp(t2, t3) != 0)
                    abort(); /* stable after one round */
            }
        }
        dg_device_info d;
        memset(&d, 0, sizeof d);
        for (int k = 0; k < 2; k++) {
            d.type = k ? DG_DEV_GPU : DG_DEV_CPU;
            dgc_device_fullname(d.type, 0, d.name, sizeof d.name);
            (void)dgc_devspec_matches(&a, &d);
        }
        const char *what;
        dgc_devspec c = a;
        (void)dgc_devspec_merge_compatible(&c, &b, &what);
        dgc_devspec_merge_over(&b, &a);
        (void)dgc_devspec_is_empty(&b);
    }
    free(s);
    return 0;
}
