/*
 * fuzz_rules.c -- libFuzzer target: the placement rules file (--placement
 * FILE, SPEC 4.3), read from a scratch file as the CLI reads it.
 */
#include "load.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_scratch(data, size, "rules.json");
    dgc_rule *rules = NULL;
    int n = 0;
    dg_error err = {0};
    if (dgc_rules_load_file(path, &rules, &n, &err) == DG_OK)
        dgc_rules_free(rules, n);
    else if (!err.msg[0])
        abort();
    return 0;
}
