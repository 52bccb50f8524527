/*
 * fuzz_args.c -- libFuzzer target: the CLI argument parser.  The input is
 * argv[1..] separated by NUL bytes (at most 64 arguments).
 */
#include "args.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    buf[size] = 0;
    char *argv[66];
    int argc = 0;
    argv[argc++] = "dgrun";
    for (size_t i = 0; i <= size && argc < 65;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    cli_args a;
    char why[512];
    why[0] = 0;
    if (cli_parse(argc, argv, &a, why, sizeof why) != 0 && !why[0])
        abort(); /* a usage error must say why */
    cli_args_free(&a);
    free(buf);
    return 0;
}
