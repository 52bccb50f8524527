/*
 * args.c -- dgrun's argument parser: options table, per-command validity,
 * value validation and environment defaults (SPEC section 1).
 */
#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_alloc.h"

#define M(c) (1u << (c))
#define M_EXEC (M(CLI_RUN) | M(CLI_TRAIN) | M(CLI_PROFILE))
#define M_COMPILE (M_EXEC | M(CLI_PLACE) | M(CLI_CHECK))
#define M_DEVSEL (M_COMPILE | M(CLI_DEVICES))
#define M_MEM (M_EXEC | M(CLI_DEVICES))

typedef enum opt_id {
    O_HELP, O_LOG, O_SOFT, O_COLOCATE, O_NO_COLOCATE, O_DEVICE, O_PLACEMENT,
    O_FETCH, O_FEED, O_STEPS, O_REPEAT, O_INTER, O_INTRA, O_OPENCL,
    O_VISIBLE, O_VGPUS, O_MEMFRAC, O_GROWTH, O_NO_GROWTH, O_ASSUME, O_TRACE,
    O_OUTPUT, O_FORMAT, O_EXPECT, O_SEED, O_JSON, O_EXPLAIN, O_CHECKPOINT,
    O_RESTORE, O_TRAIN, O_MEMORY, O_CLUSTER, O_NO_FUSION, O_SIGNATURE, O_MARKDOWN
} opt_id;

typedef struct opt_def {
    const char *name; /* without the leading "--" */
    char short_name;  /* 0 = none */
    int has_value;
    unsigned cmds;    /* commands it applies to */
    opt_id id;
} opt_def;

static const opt_def OPTS[] = {
    {"help", 'h', 0, ~0u, O_HELP},
    {"log-device-placement", 0, 0, M_COMPILE, O_LOG},
    {"allow-soft-placement", 0, 0, M_COMPILE, O_SOFT},
    {"colocate", 0, 0, M_COMPILE, O_COLOCATE},
    {"no-colocate", 0, 0, M_COMPILE, O_NO_COLOCATE},
    {"device", 0, 1, M_COMPILE, O_DEVICE},
    {"placement", 0, 1, M_COMPILE, O_PLACEMENT},
    {"fetch", 0, 1, M(CLI_RUN) | M(CLI_PROFILE), O_FETCH},
    {"feed", 0, 1, M_EXEC, O_FEED},
    {"steps", 0, 1, M(CLI_TRAIN) | M(CLI_PROFILE), O_STEPS},
    {"repeat", 0, 1, M(CLI_RUN) | M(CLI_PROFILE), O_REPEAT},
    {"inter-op-threads", 0, 1, M_EXEC, O_INTER},
    {"intra-op-threads", 0, 1, M_EXEC, O_INTRA},
    {"opencl-devices", 0, 1, M_DEVSEL, O_OPENCL},
    {"visible-devices", 0, 1, M_DEVSEL, O_VISIBLE},
    {"virtual-gpus", 0, 1, M_DEVSEL, O_VGPUS},
    {"gpu-memory-fraction", 0, 1, M_MEM, O_MEMFRAC},
    {"allow-growth", 0, 0, M_MEM, O_GROWTH},
    {"no-allow-growth", 0, 0, M_MEM, O_NO_GROWTH},
    {"assume-gpus", 0, 1, M(CLI_PLACE) | M(CLI_CHECK), O_ASSUME},
    {"trace", 0, 1, M(CLI_RUN) | M(CLI_TRAIN), O_TRACE},
    {"output", 'o', 1, M(CLI_PROFILE) | M(CLI_PLACE), O_OUTPUT},
    {"format", 0, 1, M(CLI_PLACE), O_FORMAT},
    {"expect", 0, 1, M(CLI_PLACE), O_EXPECT},
    {"seed", 0, 1, M_EXEC, O_SEED},
    {"json", 0, 0, M(CLI_RUN) | M(CLI_TRAIN) | M(CLI_DEVICES) | M(CLI_PLACE) |
     M(CLI_OPS), O_JSON},
    {"markdown", 0, 0, M(CLI_OPS), O_MARKDOWN},
    {"explain", 0, 1, M(CLI_PLACE), O_EXPLAIN},
    {"checkpoint", 0, 1, M(CLI_RUN) | M(CLI_TRAIN), O_CHECKPOINT},
    {"restore", 0, 0, M(CLI_TRAIN), O_RESTORE},
    {"train", 0, 0, M(CLI_PROFILE), O_TRAIN},
    {"memory", 0, 0, M_EXEC, O_MEMORY},
    {"cluster", 0, 1, M_DEVSEL, O_CLUSTER},
    {"no-fusion", 0, 0, M_EXEC, O_NO_FUSION},
    {"signature", 0, 1, M_COMPILE, O_SIGNATURE},
};
#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

static const char *CMD_NAMES[CLI_CMD_COUNT] = {
    "", "run", "train", "profile", "place", "check", "devices", "ops"};

const char *cli_cmd_name(cli_cmd c)
{
    return (c > CLI_NONE && c < CLI_CMD_COUNT) ? CMD_NAMES[c] : "";
}

static int fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Parse a signed decimal integer covering the whole string. */
static int parse_i64(const char *s, long long *out)
{
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_u64(const char *s, unsigned long long *out)
{
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int valid_opencl(const char *v)
{
    return !strcmp(v, "gpu") || !strcmp(v, "all") || !strcmp(v, "none");
}

/* "" or a comma list of non-negative integers. */
static int valid_visible(const char *v)
{
    const char *p = v;
    if (!*p)
        return 1;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
        while (*p == ' ')
            p++;
        if (!*p)
            return 1;
        if (*p != ',')
            return 0;
        p++;
    }
}

static int add_fetch(cli_args *a, const char *list, char *why, size_t n)
{
    size_t old = a->fetch_buf ? strlen(a->fetch_buf) : 0;
    size_t add = strlen(list);
    /* Rebuild: concatenate every --fetch list, separated by commas. */
    char *buf = dg_malloc(old + add + 2);
    if (!buf)
        return fail(why, n, "out of memory");
    buf[0] = 0;
    if (a->fetch_buf) {
        memcpy(buf, a->fetch_buf, old);
        buf[old] = ',';
        memcpy(buf + old + 1, list, add + 1);
    } else {
        memcpy(buf, list, add + 1);
    }
    dg_free(a->fetch_buf);
    a->fetch_buf = buf;
    return 0;
}

static int split_fetch(cli_args *a, char *why, size_t n)
{
    if (!a->fetch_buf)
        return 0;
    size_t count = 1;
    for (const char *p = a->fetch_buf; *p; p++)
        count += *p == ',';
    a->fetch = dg_calloc(count, sizeof *a->fetch);
    if (!a->fetch)
        return fail(why, n, "out of memory");
    int k = 0;
    char *p = a->fetch_buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        while (*p == ' ')
            p++;
        size_t len = strlen(p);
        while (len && p[len - 1] == ' ')
            p[--len] = 0;
        if (!*p)
            return fail(why, n, "--fetch: empty fetch name");
        a->fetch[k++] = p;
        if (!comma)
            break;
        p = comma + 1;
    }
    a->opt.fetch = a->fetch;
    a->opt.n_fetch = k;
    return 0;
}

static int add_feed(cli_args *a, const char *v, char *why, size_t n)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1])
        return fail(why, n, "--feed expects NAME=FILE, got '%s'", v);
    dg_feed_arg *f = dg_realloc(a->feeds, (size_t)(a->opt.n_feeds + 1) * sizeof *f);
    if (!f)
        return fail(why, n, "out of memory");
    a->feeds = f;
    char *name = dg_strndup(v, (size_t)(eq - v));
    if (!name)
        return fail(why, n, "out of memory");
    for (int i = 0; i < a->opt.n_feeds; i++)
        if (!strcmp(f[i].name, name)) {
            fail(why, n, "--feed: Placeholder '%s' fed twice", name);
            dg_free(name);
            return -1;
        }
    f[a->opt.n_feeds].name = name;
    f[a->opt.n_feeds].file = eq + 1;
    a->opt.n_feeds++;
    a->opt.feeds = a->feeds;
    return 0;
}

/* Apply one option with its value (NULL for flags). */
static int apply(cli_args *a, const opt_def *d, const char *v, char *why,
                 size_t n)
{
    long long i;
    unsigned long long u;
    char *end;
    switch (d->id) {
    case O_HELP: a->action = CLI_ACT_HELP; return 0;
    case O_LOG: a->log_placement = 1; a->opt.log_device_placement = 1; return 0;
    case O_SOFT: a->opt.allow_soft_placement = 1; return 0;
    case O_COLOCATE: a->opt.colocate = 1; return 0;
    case O_NO_COLOCATE: a->opt.colocate = 0; return 0;
    case O_DEVICE: a->opt.device_scope = v; return 0;
    case O_PLACEMENT: a->opt.placement_file = v; return 0;
    case O_FETCH: return add_fetch(a, v, why, n);
    case O_NO_FUSION: a->opt.no_fusion = 1; return 0;
    case O_FEED: return add_feed(a, v, why, n);
    case O_STEPS:
        if (parse_i64(v, &i) || i < 1)
            return fail(why, n, "--steps expects an integer >= 1, got '%s'", v);
        a->opt.steps = i;
        return 0;
    case O_REPEAT:
        if (parse_i64(v, &i) || i < 1)
            return fail(why, n, "--repeat expects an integer >= 1, got '%s'", v);
        a->opt.repeat = i;
        return 0;
    case O_INTER:
    case O_INTRA:
        if (parse_i64(v, &i) || i < 0 || i > 4096)
            return fail(why, n, "--%s expects an integer >= 0, got '%s'",
                        d->name, v);
        if (d->id == O_INTER)
            a->opt.inter_op_threads = (int)i;
        else
            a->opt.intra_op_threads = (int)i;
        return 0;
    case O_OPENCL:
        if (!valid_opencl(v))
            return fail(why, n, "--opencl-devices expects gpu, all or none, got '%s'", v);
        a->opt.opencl_devices = v;
        return 0;
    case O_VISIBLE:
        if (!valid_visible(v))
            return fail(why, n, "--visible-devices expects a comma list of device indices, got '%s'", v);
        a->opt.visible_devices = v;
        return 0;
    case O_VGPUS:
        if (parse_i64(v, &i) || i < 1 || i > 1024)
            return fail(why, n, "--virtual-gpus expects an integer >= 1, got '%s'", v);
        a->opt.virtual_gpus = (int)i;
        return 0;
    case O_MEMFRAC: {
        errno = 0;
        double f = *v ? strtod(v, &end) : 0.0;
        if (!*v || errno || *end || !(f > 0.0 && f <= 1.0))
            return fail(why, n, "--gpu-memory-fraction expects a number in (0, 1], got '%s'", v);
        a->opt.gpu_memory_fraction = f;
        return 0;
    }
    case O_GROWTH: a->opt.allow_growth = 1; return 0;
    case O_NO_GROWTH: a->opt.allow_growth = 0; return 0;
    case O_ASSUME:
        if (parse_i64(v, &i) || i < 0 || i > 4096)
            return fail(why, n, "--assume-gpus expects an integer >= 0, got '%s'", v);
        a->opt.assume_gpus = (int)i;
        return 0;
    case O_TRACE:
        if (!*v)
            return fail(why, n, "--trace expects a file name");
        a->opt.trace_path = v;
        return 0;
    case O_OUTPUT:
        if (!*v)
            return fail(why, n, "--output expects a file name");
        a->output = v;
        return 0;
    case O_FORMAT:
        if (strcmp(v, "text") && strcmp(v, "json") && strcmp(v, "dot"))
            return fail(why, n, "--format expects text, json or dot, got '%s'", v);
        a->format = v;
        return 0;
    case O_EXPECT: a->expect = v; return 0;
    case O_SEED:
        if (parse_u64(v, &u))
            return fail(why, n, "--seed expects an unsigned integer, got '%s'", v);
        a->opt.seed = (uint64_t)u;
        return 0;
    case O_JSON: a->json = 1; return 0;
    case O_EXPLAIN: a->explain = v; return 0;
    case O_CHECKPOINT:
        if (!*v)
            return fail(why, n, "--checkpoint expects a file or directory");
        a->opt.checkpoint_dir = v;
        return 0;
    case O_RESTORE: a->opt.restore = 1; return 0;
    case O_SIGNATURE:
        if (!*v)
            return fail(why, n, "--signature expects a signature key");
        a->signature = v;
        return 0;
    case O_TRAIN: a->opt.train_mode = 1; return 0;
    case O_MEMORY: a->memory = 1; return 0;
    case O_MARKDOWN: a->markdown = 1; return 0;
    case O_CLUSTER: {
        dg_error e;
        dg_cluster *c;
        if (dg_cluster_parse(v, &c, &e))
            return fail(why, n, "%s", e.msg);
        dg_cluster_free(a->cluster); /* the last --cluster wins */
        a->cluster = c;
        a->opt.cluster = c;
        return 0;
    }
    }
    return fail(why, n, "internal: unhandled option");
}

/* Edit distance of a[0..na) and b counting a swap of two neighbours as
 * one edit (optimal string alignment), capped at 9 (names are short). */
static int edit_distance(const char *a, size_t na, const char *b)
{
    size_t nb = strlen(b);
    if (na > 40 || nb > 40)
        return 9;
    int d[41][41];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[na][nb] > 9 ? 9 : d[na][nb];
}

/* The closest of names[0..n) (NULL entries skipped) to s[0..len): within
 * one edit for names of up to 4 letters, else a third of the length (2 or
 * 3 edits); NULL if none is that close. */
static const char *closest(const char *s, size_t len, const char *const *names,
                           int n)
{
    int limit = len <= 4 ? 1 : (int)(len / 3);
    if (limit < 2 && len > 4)
        limit = 2;
    if (limit > 3)
        limit = 3;
    const char *best = NULL;
    int bd = limit + 1;
    for (int i = 0; i < n; i++) {
        if (!names[i] || !*names[i])
            continue;
        int d = edit_distance(s, len, names[i]);
        if (d < bd) {
            bd = d;
            best = names[i];
        }
    }
    return best;
}

/* " did you mean '--NAME'?" for an unknown long option (options of the
 * command first), or "" */
static void suggest_option(const char *name, size_t len, cli_cmd cmd,
                           char *out, size_t n)
{
    const char *names[N_OPTS];
    const char *hit = NULL;
    for (int pass = 0; pass < 2 && !hit; pass++) {
        for (size_t k = 0; k < N_OPTS; k++)
            names[k] = pass || (OPTS[k].cmds & M(cmd)) ? OPTS[k].name : NULL;
        hit = closest(name, len, names, (int)N_OPTS);
    }
    if (hit)
        snprintf(out, n, "did you mean '--%s'? ", hit);
    else
        out[0] = '\0';
}

/* "unknown command 'x' (did you mean 'y'? try 'dgrun --help')" */
static int unknown_cmd(const char *s, char *why, size_t n)
{
    const char *hit = closest(s, strlen(s), CMD_NAMES, CLI_CMD_COUNT);
    return fail(why, n, "unknown command '%s' (%s%s%stry 'dgrun --help')", s,
                hit ? "did you mean '" : "", hit ? hit : "", hit ? "'? " : "");
}

static cli_cmd find_cmd(const char *s)
{
    for (int c = CLI_RUN; c < CLI_CMD_COUNT; c++)
        if (!strcmp(s, CMD_NAMES[c]))
            return (cli_cmd)c;
    return CLI_NONE;
}

static const opt_def *find_long(const char *name, size_t len)
{
    for (size_t k = 0; k < N_OPTS; k++)
        if (strlen(OPTS[k].name) == len && !strncmp(OPTS[k].name, name, len))
            return &OPTS[k];
    return NULL;
}

static const opt_def *find_short(char c)
{
    for (size_t k = 0; k < N_OPTS; k++)
        if (OPTS[k].short_name == c)
            return &OPTS[k];
    return NULL;
}

/* Environment defaults for options the command line did not give. */
static int apply_env(cli_args *a, int have_opencl, int have_visible,
                     char *why, size_t n)
{
    unsigned m = M(a->cmd);
    const char *e = getenv("DGRUN_OPENCL_DEVICES");
    if (!have_opencl && e && *e && (m & M_DEVSEL)) {
        if (!valid_opencl(e))
            return fail(why, n, "DGRUN_OPENCL_DEVICES expects gpu, all or none, got '%s'", e);
        a->opt.opencl_devices = e;
    }
    e = getenv("DGRUN_VISIBLE_DEVICES");
    if (!have_visible && e && (m & M_DEVSEL)) {
        if (!valid_visible(e))
            return fail(why, n, "DGRUN_VISIBLE_DEVICES expects a comma list of device indices, got '%s'", e);
        a->opt.visible_devices = e;
    }
    return 0;
}

int cli_parse(int argc, char **argv, cli_args *a, char *why, size_t n)
{
    memset(a, 0, sizeof *a);
    dg_options_init(&a->opt);
    a->format = "text";
    if (argc < 2)
        return fail(why, n, "no command given (try 'dgrun --help')");
    const char *first = argv[1];
    if (!strcmp(first, "--help") || !strcmp(first, "-h") || !strcmp(first, "help")) {
        if (argc > 2 && !strcmp(first, "help")) {
            a->cmd = find_cmd(argv[2]);
            if (a->cmd == CLI_NONE)
                return unknown_cmd(argv[2], why, n);
        }
        a->action = CLI_ACT_HELP;
        return 0;
    }
    if (!strcmp(first, "--version") || !strcmp(first, "-V")) {
        if (argc > 2)
            return fail(why, n, "--version takes no arguments");
        a->action = CLI_ACT_VERSION;
        return 0;
    }
    if (first[0] == '-' && first[1])
        return fail(why, n, "expected a command before '%s' (try 'dgrun --help')", first);
    a->cmd = find_cmd(first);
    if (a->cmd == CLI_NONE)
        return unknown_cmd(first, why, n);
    /* fusion is for running: place and check show the user's graph as is
     * (docs/decisions.md) */
    if (a->cmd == CLI_PLACE || a->cmd == CLI_CHECK)
        a->opt.no_fusion = 1;

    int have_opencl = 0, have_visible = 0, only_pos = 0;
    const char *cmd = CMD_NAMES[a->cmd];
    for (int k = 2; k < argc; k++) {
        const char *s = argv[k];
        if (only_pos || s[0] != '-' || !strcmp(s, "-")) {
            if (a->cmd == CLI_DEVICES || a->cmd == CLI_OPS)
                return fail(why, n, "'%s' takes no GRAPH argument, got '%s'", cmd, s);
            if (a->graph)
                return fail(why, n, "unexpected argument '%s' (GRAPH is already '%s')", s, a->graph);
            a->graph = s;
            continue;
        }
        if (!strcmp(s, "--")) {
            only_pos = 1;
            continue;
        }
        const opt_def *d;
        const char *val = NULL;
        char shown[64];
        if (s[1] == '-') {
            const char *name = s + 2;
            const char *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            d = find_long(name, len);
            snprintf(shown, sizeof shown, "--%.*s", (int)(len > 40 ? 40 : len), name);
            if (!d) {
                char dym[80];
                suggest_option(name, len, a->cmd, dym, sizeof dym);
                return fail(why, n, "unknown option '%s' (%stry 'dgrun %s --help')",
                            shown, dym, cmd);
            }
            if (eq) {
                if (!d->has_value)
                    return fail(why, n, "option '%s' takes no value", shown);
                val = eq + 1;
            }
        } else {
            d = s[2] ? NULL : find_short(s[1]);
            snprintf(shown, sizeof shown, "%.40s", s);
            if (!d)
                return fail(why, n, "unknown option '%s' (try 'dgrun %s --help')", shown, cmd);
        }
        if (d->id == O_HELP) {
            a->action = CLI_ACT_HELP;
            return 0;
        }
        if (!(d->cmds & M(a->cmd)))
            return fail(why, n, "option '--%s' does not apply to '%s'", d->name, cmd);
        if (d->has_value && !val) {
            if (k + 1 >= argc)
                return fail(why, n, "option '%s' needs a value", shown);
            val = argv[++k];
        }
        if (d->id == O_OPENCL)
            have_opencl = 1;
        if (d->id == O_VISIBLE)
            have_visible = 1;
        if (apply(a, d, val, why, n))
            return -1;
    }
    if (split_fetch(a, why, n))
        return -1;
    if (apply_env(a, have_opencl, have_visible, why, n))
        return -1;
    if (a->cmd != CLI_DEVICES && a->cmd != CLI_OPS && !a->graph)
        return fail(why, n, "'%s' needs a GRAPH argument (a file, or - for stdin)", cmd);
    if (a->cmd == CLI_OPS && a->json && a->markdown)
        return fail(why, n, "--json and --markdown cannot be combined");
    if (a->cmd == CLI_PLACE) {
        if (a->json && strcmp(a->format, "text") && strcmp(a->format, "json"))
            return fail(why, n, "--json conflicts with --format %s", a->format);
        if (a->json)
            a->format = "json";
        if (a->explain && a->expect)
            return fail(why, n, "--explain and --expect cannot be combined");
    }
    return 0;
}

void cli_args_free(cli_args *a)
{
    if (!a)
        return;
    for (int i = 0; a->feeds && i < a->opt.n_feeds; i++)
        dg_free((char *)a->feeds[i].name);
    dg_free(a->feeds);
    dg_free(a->fetch);
    dg_free(a->fetch_buf);
    dg_cluster_free(a->cluster);
    a->cluster = NULL;
    a->opt.cluster = NULL;
    a->feeds = NULL;
    a->fetch = NULL;
    a->fetch_buf = NULL;
}
