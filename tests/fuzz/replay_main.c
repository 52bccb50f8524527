/*
 * replay_main.c -- a main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput once over every file named on the command line
 * (directories recursively).  The regular suite (gcc, and the ASan + UBSan
 * build) links each harness with it and replays the committed corpus, so
 * every input that ever crashed stays a test without clang.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static long n_inputs;

static int replay(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: cannot stat\n", path);
        return 1;
    }
    if (S_ISDIR(st.st_mode)) {
        struct dirent **ents;
        int n = scandir(path, &ents, NULL, alphasort);
        if (n < 0)
            return 1;
        int rc = 0;
        for (int i = 0; i < n; i++) {
            if (ents[i]->d_name[0] != '.') {
                char sub[4096];
                snprintf(sub, sizeof sub, "%s/%s", path, ents[i]->d_name);
                rc |= replay(sub);
            }
            free(ents[i]);
        }
        free(ents);
        return rc;
    }
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    uint8_t *buf = malloc((size_t)st.st_size + 1);
    size_t n = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!buf || n != (size_t)st.st_size) {
        free(buf);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    n_inputs++;
    return 0;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= replay(argv[i]);
    printf("replayed %ld inputs\n", n_inputs);
    return rc || n_inputs == 0;
}
