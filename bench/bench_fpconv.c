/*
 * bench_fpconv.c -- number text throughput (issue 19 item 7): MB/s of
 * float32 text written and read, libc's retry loops (what dgrun did) against
 * common/dg_fpconv, on N values (default 2,000,000) of two kinds: values like
 * trained weights (uniform in [-0.1, 0.1)) and random bit patterns (finite).
 *
 *   format, shortest: the first %.{p}g that strtof reads back (cli/output.c's
 *       JSON numbers) vs dg_fp_format_shortest;
 *   format, %.6g/%.9g: TensorFlow's Print text (%.6g, %.9g when that does not
 *       read back) vs dg_fp_format_g_widen;
 *   parse: strtod / strtof vs dg_strtod / dg_strtof over the shortest texts
 *       (the .csv reader parses with strtod).
 *
 * MB/s counts the text bytes (with one separator a number) per second of
 * process CPU time; each figure is the best of REPS runs.  Output texts are compared byte for byte and parsed
 * values bit for bit, so a mismatch fails the bench (exit 1).
 *
 * usage: bench_fpconv [N] [REPS]
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dg_fpconv.h"

/* CPU time of this (single-threaded) process: steadier than the wall
 * clock on a machine shared with other jobs. */
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x2545F4914F6CDD1Du;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- the libc way (the code dg_fpconv replaced) ---------------------------- */

static size_t libc_shortest(char *out, float f)
{
    int n = 0;
    for (int p = 1; p <= 9; p++) {
        n = snprintf(out, 32, "%.*g", p, (double)f);
        if (strtof(out, NULL) == f)
            break;
    }
    return (size_t)n;
}

static size_t libc_widen(char *out, float f)
{
    int n = snprintf(out, 32, "%.6g", (double)f);
    if (isfinite(f) && strtof(out, NULL) != f)
        n = snprintf(out, 32, "%.9g", (double)f);
    return (size_t)n;
}

static size_t new_shortest(char *out, float f)
{
    return dg_fp_format_shortest(out, (double)f, 1);
}

static size_t new_widen(char *out, float f)
{
    return dg_fp_format_g_widen(out, (double)f, 1, 6, 9);
}

typedef size_t (*fmt_fn)(char *, float);

/* Write all values, one ',' after each, into text; returns the bytes. */
static size_t format_all(fmt_fn fn, const float *v, size_t n, char *text)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        len += fn(text + len, v[i]);
        text[len++] = ',';
    }
    text[len] = 0;
    return len;
}

/* Parse the ','-separated text; the checksum keeps the work alive. */
static uint64_t parse_all(int how, const char *text, size_t n, float *out)
{
    const char *p = text;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        char *end;
        float f;
        switch (how) {
        case 0: f = (float)strtod(p, &end); break;
        case 1: f = (float)dg_strtod(p, &end); break;
        case 2: f = strtof(p, &end); break;
        default: f = dg_strtof(p, &end); break;
        }
        out[i] = f;
        uint32_t u;
        memcpy(&u, &f, 4);
        sum += u;
        p = end + 1;
    }
    return sum;
}

static double best_format(fmt_fn fn, const float *v, size_t n, char *text,
                          int reps, size_t *bytes)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        *bytes = format_all(fn, v, n, text);
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static double best_parse(int how, const char *text, size_t n, float *out,
                         int reps)
{
    double best = 1e30;
    volatile uint64_t sink = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        sink += parse_all(how, text, n, out);
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    (void)sink;
    return best;
}

static int run(const char *kind, const float *v, size_t n, int reps)
{
    char *a = malloc(n * 32 + 1), *b = malloc(n * 32 + 1);
    float *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb);
    if (!a || !b || !pa || !pb) {
        fprintf(stderr, "bench_fpconv: out of memory\n");
        return 1;
    }
    int bad = 0;
    size_t la, lb;
    double t_old = best_format(libc_shortest, v, n, a, reps, &la);
    double t_new = best_format(new_shortest, v, n, b, reps, &lb);
    if (la != lb || memcmp(a, b, la) != 0) {
        fprintf(stderr, "bench_fpconv: %s: shortest texts differ\n", kind);
        bad = 1;
    }
    double mb = (double)la / 1e6;
    printf("%-8s format shortest   %6.1f MB  libc retries %8.1f MB/s (%6.0f ns/number)  "
           "dg_fpconv %8.1f MB/s (%5.0f ns/number)  %5.1fx\n", kind, mb,
           mb / t_old, t_old / (double)n * 1e9, mb / t_new, t_new / (double)n * 1e9,
           t_old / t_new);
    /* parse the shortest text: strtod (as the .csv reader) and strtof */
    const char *names[2] = {"strtod", "strtof"};
    for (int k = 0; k < 2; k++) {
        double p_old = best_parse(2 * k, a, n, pa, reps);
        double p_new = best_parse(2 * k + 1, a, n, pb, reps);
        /* strtod then (float) may round twice (as the .csv reader does):
         * only strtof must give the values back */
        if (memcmp(pa, pb, n * sizeof *pa) != 0 ||
            (k == 1 && memcmp(pa, v, n * sizeof *pa) != 0)) {
            fprintf(stderr, "bench_fpconv: %s: %s values differ\n", kind, names[k]);
            bad = 1;
        }
        printf("%-8s parse (%s)      %6.1f MB  libc         %8.1f MB/s (%6.0f ns/number)  "
               "dg_fpconv %8.1f MB/s (%5.0f ns/number)  %5.1fx\n", kind, names[k], mb,
               mb / p_old, p_old / (double)n * 1e9, mb / p_new, p_new / (double)n * 1e9,
               p_old / p_new);
    }
    t_old = best_format(libc_widen, v, n, a, reps, &la);
    t_new = best_format(new_widen, v, n, b, reps, &lb);
    if (la != lb || memcmp(a, b, la) != 0) {
        fprintf(stderr, "bench_fpconv: %s: %%.6g/%%.9g texts differ\n", kind);
        bad = 1;
    }
    mb = (double)la / 1e6;
    printf("%-8s format %%.6g/%%.9g   %6.1f MB  libc         %8.1f MB/s (%6.0f ns/number)  "
           "dg_fpconv %8.1f MB/s (%5.0f ns/number)  %5.1fx\n", kind, mb,
           mb / t_old, t_old / (double)n * 1e9, mb / t_new, t_new / (double)n * 1e9,
           t_old / t_new);
    free(a);
    free(b);
    free(pa);
    free(pb);
    return bad;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 2000000;
    int reps = argc > 2 ? atoi(argv[2]) : 3;
    if (n == 0 || reps <= 0) {
        fprintf(stderr, "usage: bench_fpconv [N] [REPS]\n");
        return 2;
    }
    float *v = malloc(n * sizeof *v);
    if (!v)
        return 1;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((double)(next_rand() >> 11) / 9007199254740992.0 - 0.5) * 0.2f;
    int bad = run("weights", v, n, reps);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        do
            u = (uint32_t)next_rand();
        while ((u & 0x7F800000u) == 0x7F800000u);
        memcpy(&v[i], &u, 4);
    }
    bad |= run("bits", v, n, reps);
    free(v);
    return bad;
}
