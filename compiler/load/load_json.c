/*
 * load_json.c -- JSON plumbing for the loader: reading files, parsing with
 * cJSON while remembering which numbers were integer literals (cJSON keeps
 * only doubles), exact int64 reads, and the name / ref / glob syntax checks.
 */
#include "load_priv.h"
#include "dg_alloc.h"
#include "dg_io.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

dg_status dgc_read_file(const char *path, char **text, size_t *len,
                        dg_error *err)
{
    /* The caller prefixes messages with the path, so they do not repeat
     * it.  A graph path that does not exist (or is a directory) is bad
     * usage, exit 2; a file that cannot be read is an I/O failure. */
    struct stat st0;
    if (stat(path, &st0) == 0 && S_ISDIR(st0.st_mode))
        return dg_err(err, DG_E_USAGE, "cannot read: is a directory");
    FILE *f = fopen(path, "rb");
    if (!f)
        return dg_err(err, errno == ENOENT || errno == ENOTDIR ? DG_E_USAGE
                                                                : DG_E_IO,
                      "cannot read: %s", strerror(errno));
    char *buf;
    size_t n;
    /* a FIFO or device may never end (/dev/zero, `<(yes)`): bounded, and
     * refused at its first byte when that cannot start JSON */
    int bad = -1;
    dg_status rs = fstat(fileno(f), &st0) == 0 && !S_ISREG(st0.st_mode)
                       ? dg_read_json_stream(f, DG_STREAM_MAX, &buf, &n, &bad)
                       : dg_read_stream(f, &buf, &n);
    int e = errno;
    fclose(f);
    if (rs == DG_E_GRAPH && bad < 0)
        return dg_err(err, DG_E_GRAPH, "not a regular file and larger than "
                      "%zu bytes", DG_STREAM_MAX);
    if (rs == DG_E_GRAPH)
        return dg_err(err, DG_E_GRAPH, "not JSON (it starts with byte "
                      "0x%02x)", bad);
    if (rs == DG_E_NOMEM)
        return dg_err_nomem(err, "graph text");
    if (rs != DG_OK)
        return dg_err(err, DG_E_IO, "cannot read: %s", strerror(e));
    *text = buf;
    *len = n;
    return DG_OK;
}

static void line_col(const char *text, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* Whether the error at off is cJSON's nesting limit: the brackets open
 * there (outside strings) reach CJSON_NESTING_LIMIT. */
static int too_deep(const char *text, size_t off)
{
    long depth = 0;
    int in_str = 0;
    for (size_t i = 0; i < off; i++) {
        char c = text[i];
        if (in_str) {
            if (c == '\\' && i + 1 < off)
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return depth >= CJSON_NESTING_LIMIT;
}

dg_status dgc_json_error_at(const char *text, size_t off, const char *prefix,
                            dg_error *err)
{
    int line, col;
    line_col(text, off, &line, &col);
    return dg_err(err, DG_E_GRAPH, "%sinvalid JSON at line %d, column %d%s",
                  prefix ? prefix : "", line, col,
                  too_deep(text, off) ? " (nested too deeply)" : "");
}

static int is_num_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' ||
           c == 'e' || c == 'E';
}

/* Scan the raw text for number tokens outside strings. */
static int scan_numbers(dgc_jdoc *doc, unsigned char **is_int)
{
    size_t cap = 256, n = 0;
    size_t *off = dg_malloc(cap * sizeof *off);
    unsigned char *flag = dg_malloc(cap);
    if (!off || !flag) {
        dg_free(off);
        dg_free(flag);
        return -1;
    }
    const char *t = doc->text;
    size_t len = doc->len;
    for (size_t i = 0; i < len && t[i];) {
        char c = t[i];
        if (c == '"') {
            i++;
            while (i < len && t[i] && t[i] != '"') {
                if (t[i] == '\\' && i + 1 < len)
                    i++;
                i++;
            }
            i++;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (n == cap) {
                cap *= 2;
                size_t *no = dg_realloc(off, cap * sizeof *off);
                if (!no) {
                    dg_free(off);
                    dg_free(flag);
                    return -1;
                }
                off = no;
                unsigned char *nf = dg_realloc(flag, cap);
                if (!nf) {
                    dg_free(off);
                    dg_free(flag);
                    return -1;
                }
                flag = nf;
            }
            off[n] = i;
            int integer = 1;
            while (i < len && is_num_char(t[i])) {
                if (t[i] == '.' || t[i] == 'e' || t[i] == 'E')
                    integer = 0;
                i++;
            }
            flag[n++] = (unsigned char)integer;
        } else {
            i++;
        }
    }
    doc->num_off = off;
    doc->n_num = n;
    doc->owns_nums = 1;
    doc->num_int = flag;
    *is_int = flag;
    return 0;
}

/* Walk the tree in document order, marking numbers: the k-th number of the
 * tree is token base + k of the document (iterative would be nicer, but
 * depth is bounded by cJSON's nesting limit). */
static void mark_numbers(cJSON *x, const unsigned char *is_int, size_t base,
                         size_t n, size_t *k)
{
    for (; x; x = x->next) {
        if (cJSON_IsNumber(x)) {
            if (*k < n) {
                size_t g = base + *k;
                if (is_int[g])
                    x->type |= DGC_JSON_INTLIT;
                x->valueint = (int)(g < (size_t)INT_MAX ? g : (size_t)INT_MAX);
            } else {
                x->valueint = -1;
            }
            (*k)++;
        }
        if (x->child)
            mark_numbers(x->child, is_int, base, n, k);
    }
}

/* cJSON allocates every item and string with malloc; for big graphs that
 * is most of the load time.  While parsing, cJSON's hooks point at a bump
 * arena (chunks from dg_malloc) whose free is a no-op; the tree is released
 * by freeing the chunks, never with cJSON_Delete.  The hooks are global, so
 * they are swapped only for the duration of one parse (the loader is not
 * meant to run concurrently with other cJSON users in the process). */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    max_align_t data[];
} arena_chunk;

static arena_chunk *g_arena;
static int g_arena_oom;
static size_t g_arena_first; /* size of the first chunk (from the text size) */

static void *arena_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!g_arena || g_arena->used + n > g_arena->cap) {
        size_t cap = g_arena_first;
        if (g_arena && g_arena->cap < ((size_t)64 << 20))
            cap = g_arena->cap * 2;
        if (cap < n)
            cap = n;
        arena_chunk *c = dg_malloc(sizeof *c + cap);
        if (!c) {
            g_arena_oom = 1;
            return NULL;
        }
        c->next = g_arena;
        c->used = 0;
        c->cap = cap;
        g_arena = c;
    }
    void *p = (char *)g_arena->data + g_arena->used;
    g_arena->used += n;
    return p;
}

static void arena_free(void *p)
{
    (void)p;
}

static void arena_release(void *a)
{
    for (arena_chunk *c = a; c;) {
        arena_chunk *n = c->next;
        dg_free(c);
        c = n;
    }
}

dg_status dgc_json_parse(dgc_jdoc *doc, const char *text, size_t len,
                         const char *prefix, dg_error *err)
{
    memset(doc, 0, sizeof *doc);
    doc->text = text;
    doc->len = len;
    const char *end = NULL;
    cJSON_Hooks hooks = {arena_alloc, arena_free};
    g_arena = NULL;
    g_arena_oom = 0;
    g_arena_first = len < ((size_t)8 << 20) ? len * 8 : ((size_t)64 << 20);
    if (g_arena_first < 65536)
        g_arena_first = 65536;
    cJSON_InitHooks(&hooks);
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    const char *eptr = cJSON_GetErrorPtr();
    cJSON_InitHooks(NULL);
    doc->arena = g_arena;
    g_arena = NULL;
    if (g_arena_oom) {
        dgc_json_free(doc);
        return dg_err_nomem(err, "JSON");
    }
    size_t bad = (size_t)-1;
    if (!root) {
        const char *e = end ? end : eptr;
        bad = (e && e >= text && e <= text + len) ? (size_t)(e - text) : 0;
    } else {
        size_t i = end ? (size_t)(end - text) : len;
        while (i < len && (text[i] == ' ' || text[i] == '\t' ||
                           text[i] == '\n' || text[i] == '\r'))
            i++;
        if (i < len && text[i] != '\0')
            bad = i;
        else if (i < len) { /* embedded NUL followed by more text */
            size_t j = i;
            while (j < len && text[j] == '\0')
                j++;
            if (j < len)
                bad = i;
        }
    }
    if (bad != (size_t)-1) {
        dgc_json_free(doc);
        return dgc_json_error_at(text, bad, prefix, err);
    }
    doc->root = root;
    unsigned char *is_int = NULL;
    if (scan_numbers(doc, &is_int)) {
        dgc_json_free(doc);
        return dg_err_nomem(err, "JSON numbers");
    }
    size_t k = 0;
    mark_numbers(root, is_int, 0, doc->n_num, &k);
    dg_free(is_int);
    doc->num_int = NULL;
    /* strict JSON: the one place every JSON reader's objects pass */
    char dm[512];
    int dr = dgc_json_find_dup(root, "", dm, sizeof dm);
    if (dr) {
        dgc_json_free(doc);
        if (dr < 0)
            return dg_err_nomem(err, "JSON");
        return dg_err(err, DG_E_GRAPH, "%s%s", prefix ? prefix : "", dm);
    }
    return DG_OK;
}

void dgc_json_free(dgc_jdoc *doc)
{
    arena_release(doc->arena);
    if (doc->owns_nums)
        dg_free(doc->num_off);
    memset(doc, 0, sizeof *doc);
}

/* ---- slices of a scanned document (load.c's streaming path) ------------ */

int dgc_json_parse_slice(const dgc_jdoc *doc, void **arena, size_t off,
                         size_t len, size_t num_first, size_t n_num,
                         cJSON **out, size_t *bad, const char *base,
                         char *dup, size_t dup_n)
{
    const char *s = doc->text + off, *end = NULL;
    cJSON_Hooks hooks = {arena_alloc, arena_free};
    g_arena = *arena;
    g_arena_oom = 0;
    g_arena_first = len < 8192 ? 65536 : len * 8;
    cJSON_InitHooks(&hooks);
    /* One more byte of the document (there always is one: the scanned
     * slices are followed by ',', ']' or '}'): cJSON reports an error past
     * the last byte of its buffer at the last byte, where the whole-document
     * parse would report the byte after; a valid slice stops before it. */
    size_t plen = off + len < doc->len ? len + 1 : len;
    cJSON *x = cJSON_ParseWithLengthOpts(s, plen, &end, 0);
    const char *eptr = x ? NULL : cJSON_GetErrorPtr();
    cJSON_InitHooks(NULL);
    *arena = g_arena;
    g_arena = NULL;
    *out = NULL;
    if (g_arena_oom)
        return -1;
    if (!x) {
        const char *e = end ? end : eptr;
        *bad = off + ((e && e >= s && e <= s + plen) ? (size_t)(e - s) : 0);
        return 1;
    }
    if (end && end != s + len) { /* the scan's extent ends elsewhere */
        *bad = off + (size_t)(end - s);
        return 1;
    }
    size_t k = 0;
    mark_numbers(x, doc->num_int, num_first, n_num, &k);
    int dr = dgc_json_find_dup(x, base, dup, dup_n);
    if (dr)
        return dr < 0 ? -1 : 2;
    *out = x;
    return 0;
}

cJSON *dgc_json_new_item(void **arena, int type)
{
    cJSON_Hooks hooks = {arena_alloc, arena_free};
    g_arena = *arena;
    g_arena_oom = 0;
    g_arena_first = 65536;
    cJSON_InitHooks(&hooks);
    cJSON *x = type == cJSON_Array ? cJSON_CreateArray() : cJSON_CreateObject();
    cJSON_InitHooks(NULL);
    *arena = g_arena;
    g_arena = NULL;
    return g_arena_oom ? NULL : x;
}

void dgc_json_arena_reset(void **arena)
{
    arena_chunk *head = *arena;
    if (!head)
        return;
    arena_release(head->next);
    head->next = NULL;
    head->used = 0;
}

void dgc_json_arena_free(void **arena)
{
    arena_release(*arena);
    *arena = NULL;
}

int dgc_json_is_intlit(const cJSON *x)
{
    return x && cJSON_IsNumber(x) && (x->type & DGC_JSON_INTLIT);
}

int dgc_json_int64(const dgc_jdoc *doc, const cJSON *x, int64_t *out)
{
    if (!x || !cJSON_IsNumber(x))
        return 1;
    if ((x->type & DGC_JSON_INTLIT) && doc && x->valueint >= 0 &&
        (size_t)x->valueint < doc->n_num && x->valueint < INT_MAX) {
        const char *s = doc->text + doc->num_off[x->valueint];
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno == ERANGE)
            return 2;
        *out = (int64_t)v;
        return 0;
    }
    double d = x->valuedouble;
    if (d != d)
        return 1;
    if (d >= 9223372036854775808.0 || d < -9223372036854775808.0)
        return 2;
    if ((double)(int64_t)d != d)
        return 1;
    *out = (int64_t)d;
    return 0;
}

const char *dgc_json_kind(const cJSON *x)
{
    if (!x)
        return "missing";
    if (cJSON_IsString(x))
        return "a string";
    if (cJSON_IsNumber(x))
        return "a number";
    if (cJSON_IsBool(x))
        return "a bool";
    if (cJSON_IsNull(x))
        return "null";
    if (cJSON_IsArray(x))
        return "an array";
    if (cJSON_IsObject(x))
        return "an object";
    return "invalid";
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A duplicated key among obj's members: 1 (sets *dup), 0 none, -1 nomem.
 * Quadratic for the small objects graph files are made of; sorted for big
 * ones (hostile input can have a million keys in one object). */
static int obj_dup(const cJSON *obj, const char **dup)
{
    size_t n = 0;
    for (const cJSON *a = obj->child; a; a = a->next)
        n++;
    if (n <= 32) {
        for (const cJSON *a = obj->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next)
                if (a->string && b->string && strcmp(a->string, b->string) == 0) {
                    *dup = a->string;
                    return 1;
                }
        return 0;
    }
    const char **v = dg_malloc(n * sizeof *v);
    if (!v)
        return -1;
    size_t k = 0;
    for (const cJSON *a = obj->child; a; a = a->next)
        if (a->string)
            v[k++] = a->string;
    qsort(v, k, sizeof *v, cmp_key);
    int found = 0;
    for (size_t i = 1; i < k && !found; i++)
        if (strcmp(v[i - 1], v[i]) == 0) {
            *dup = v[i];
            found = 1;
        }
    dg_free(v);
    return found;
}

int dgc_json_dup_key(const cJSON *obj, const char **dup)
{
    return obj_dup(obj, dup) == 1;
}

/* Depth-first search under x; path[0..len) is x's path (path NULL: no
 * paths, the fast first search).  On a find, path holds the path of the
 * object with the duplicate. */
static int find_dup(const cJSON *x, char *path, size_t cap, size_t len,
                    const char **dup)
{
    if (cJSON_IsObject(x)) {
        int r = obj_dup(x, dup);
        if (r)
            return r;
    }
    int i = 0;
    for (const cJSON *c = x->child; c; c = c->next, i++) {
        if (!c->child)
            continue; /* scalars and empty containers hold no keys */
        if (!path) {
            int r = find_dup(c, NULL, 0, 0, dup);
            if (r)
                return r;
            continue;
        }
        int w = cJSON_IsObject(x)
                    ? snprintf(path + len, cap - len, "%s%s", len ? "." : "",
                               c->string ? c->string : "")
                    : snprintf(path + len, cap - len, "[%d]", i);
        size_t l = len + (w > 0 ? (size_t)w : 0);
        if (l >= cap)
            l = cap - 1;
        int r = find_dup(c, path, cap, l, dup);
        if (r)
            return r;
        path[len] = 0;
    }
    return 0;
}

int dgc_json_find_dup(const cJSON *x, const char *base, char *msg, size_t n)
{
    const char *dup = NULL;
    int r = find_dup(x, NULL, 0, 0, &dup);
    if (r <= 0)
        return r;
    /* found: search again, building the path this time */
    char path[256];
    snprintf(path, sizeof path, "%s", base ? base : "");
    r = find_dup(x, path, sizeof path, strlen(path), &dup);
    if (r > 0 && path[0])
        snprintf(msg, n, "duplicate key '%.200s' in %s", dup, path);
    else if (r > 0)
        snprintf(msg, n, "duplicate top-level key '%.200s'", dup);
    return r;
}

static int name_first(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '.';
}

static int name_rest(char c)
{
    return name_first(c) || c == '_' || c == '/' || c == '-';
}

int dgc_valid_name(const char *s)
{
    if (!s || !name_first(s[0]))
        return 0;
    for (const char *p = s + 1; *p; p++)
        if (!name_rest(*p))
            return 0;
    return 1;
}

int dgc_valid_ref(const char *s)
{
    if (!s || !name_first(s[0]))
        return 0;
    const char *p = s + 1;
    while (*p && name_rest(*p))
        p++;
    if (!*p)
        return 1;
    if (*p != ':' || !p[1])
        return 0;
    for (p++; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

int dgc_valid_glob(const char *s)
{
    if (!s)
        return 0;
    for (const char *p = s; *p; p++) {
        if (*p == '\\') {
            if (!p[1])
                return 0;
            p++;
        } else if (*p == '[') {
            const char *q = p + 1;
            if (*q == '!' || *q == '^')
                q++;
            if (*q == ']')
                q++;
            while (*q && *q != ']')
                q++;
            if (!*q)
                return 0;
            p = q;
        }
    }
    return 1;
}

int dgc_json_strlist(const cJSON *x, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    if (cJSON_IsString(x)) {
        char **v = dg_malloc(sizeof *v);
        if (!v || !(v[0] = dg_strdup(x->valuestring))) {
            dg_free(v);
            return -2;
        }
        *out = v;
        *n = 1;
        return 0;
    }
    if (!cJSON_IsArray(x))
        return -1;
    int cnt = cJSON_GetArraySize(x);
    for (const cJSON *e = x->child; e; e = e->next)
        if (!cJSON_IsString(e))
            return -1;
    char **v = dg_calloc((size_t)(cnt > 0 ? cnt : 1), sizeof *v);
    if (!v)
        return -2;
    int i = 0;
    for (const cJSON *e = x->child; e; e = e->next, i++)
        if (!(v[i] = dg_strdup(e->valuestring))) {
            dgc_strv_free(v, i);
            return -2;
        }
    *out = v;
    *n = cnt;
    return 0;
}

void dgc_strv_free(char **v, int n)
{
    for (int i = 0; i < n; i++)
        dg_free(v[i]);
    dg_free(v);
}
