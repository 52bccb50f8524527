/*
 * ckpt_state.c -- TensorFlow's `checkpoint` state file (see ckpt_state.h):
 * a small reader of protobuf text format (fields `name: value`, strings in
 * single or double quotes with C escapes, adjacent strings joined, `#`
 * comments) for the CheckpointState fields, and its writer.
 */
#include "ckpt_state.h"
#include "dg_alloc.h"
#include "dg_io.h"
#include "dg_util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void dgr_ckpt_state_free(dgr_ckpt_state *s)
{
    if (!s)
        return;
    dg_free(s->model);
    for (int32_t i = 0; i < s->n_all; i++)
        dg_free(s->all[i]);
    dg_free(s->all);
    memset(s, 0, sizeof *s);
}

int dgr_ckpt_state_push(dgr_ckpt_state *s, const char *path)
{
    char **a = dg_grow(s->all, &s->cap_all, (int64_t)s->n_all + 1,
                       sizeof *a, 8);
    if (!a)
        return -1;
    s->all = a;
    if (!(a[s->n_all] = dg_strdup(path)))
        return -1;
    s->n_all++;
    return 0;
}

typedef struct lex {
    const char *p, *end;
} lex;

static void skip_ws(lex *l)
{
    while (l->p < l->end) {
        if (*l->p == '#') {
            while (l->p < l->end && *l->p != '\n')
                l->p++;
        } else if (isspace((unsigned char)*l->p)) {
            l->p++;
        } else {
            break;
        }
    }
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One quoted string (the quote at l->p) appended to b; NULL or a reason. */
static const char *quoted(lex *l, dg_sbuf *b)
{
    char q = *l->p++;
    while (l->p < l->end && *l->p != q) {
        char c = *l->p++;
        if (c == '\n')
            return "a newline inside a string";
        if (c != '\\') {
            dg_sbuf_addn(b, &c, 1);
            continue;
        }
        if (l->p >= l->end)
            break;
        c = *l->p++;
        char v;
        switch (c) {
        case 'n': v = '\n'; break;
        case 't': v = '\t'; break;
        case 'r': v = '\r'; break;
        case 'a': v = '\a'; break;
        case 'b': v = '\b'; break;
        case 'f': v = '\f'; break;
        case 'v': v = '\v'; break;
        case '\\': case '\'': case '"': case '?': v = c; break;
        case 'x': {
            int h = l->p < l->end ? hexval(*l->p) : -1, k = 0;
            if (h < 0)
                return "a bad \\x escape";
            int acc = 0;
            while (k < 2 && l->p < l->end && (h = hexval(*l->p)) >= 0) {
                acc = acc * 16 + h;
                l->p++;
                k++;
            }
            v = (char)acc;
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int acc = c - '0', k = 1;
                while (k < 3 && l->p < l->end && *l->p >= '0' && *l->p <= '7') {
                    acc = acc * 8 + (*l->p++ - '0');
                    k++;
                }
                v = (char)acc;
            } else {
                return "an unknown escape";
            }
        }
        dg_sbuf_addn(b, &v, 1);
    }
    if (l->p >= l->end)
        return "an unterminated string";
    l->p++;
    return NULL;
}

dg_status dgr_ckpt_state_parse(const char *text, size_t len, const char *what,
                               dgr_ckpt_state *s, dg_error *err)
{
    memset(s, 0, sizeof *s);
    lex l = {text, text + len};
    const char *why = NULL;
    dg_sbuf v;
    dg_sbuf_init(&v);
    for (skip_ws(&l); l.p < l.end && !why; skip_ws(&l)) {
        const char *name = l.p;
        while (l.p < l.end && (isalnum((unsigned char)*l.p) || *l.p == '_'))
            l.p++;
        size_t nl = (size_t)(l.p - name);
        if (nl == 0) {
            why = "a field name expected";
            break;
        }
        skip_ws(&l);
        if (l.p < l.end && *l.p == ':')
            l.p++;
        skip_ws(&l);
        int is_model = nl == 21 && memcmp(name, "model_checkpoint_path", 21) == 0;
        int is_all = nl == 26 && memcmp(name, "all_model_checkpoint_paths", 26) == 0;
        int is_num = (nl == 31 && memcmp(name, "all_model_checkpoint_timestamps", 31) == 0) ||
                     (nl == 24 && memcmp(name, "last_preserved_timestamp", 24) == 0);
        if (is_model || is_all) {
            v.len = 0;
            dg_sbuf_addn(&v, "", 0);
            if (l.p >= l.end || (*l.p != '"' && *l.p != '\'')) {
                why = "a string expected";
                break;
            }
            while (!why && l.p < l.end && (*l.p == '"' || *l.p == '\'')) {
                why = quoted(&l, &v);
                skip_ws(&l);
            }
            if (why)
                break;
            if (v.oom || strlen(v.s) != v.len) {
                why = v.oom ? NULL : "a NUL byte in a path";
                if (v.oom)
                    goto nomem;
                break;
            }
            if (is_model) {
                dg_free(s->model);
                if (!(s->model = dg_strdup(v.s)))
                    goto nomem;
            } else if (dgr_ckpt_state_push(s, v.s)) {
                goto nomem;
            }
        } else if (is_num) {
            const char *t = l.p;
            while (l.p < l.end && (isalnum((unsigned char)*l.p) ||
                                   *l.p == '.' || *l.p == '-' || *l.p == '+'))
                l.p++;
            if (l.p == t)
                why = "a number expected";
        } else {
            why = "an unknown field";
        }
        if (l.p < l.end && (*l.p == ',' || *l.p == ';'))
            l.p++;
    }
    dg_sbuf_free(&v);
    if (!why && (!s->model || !s->model[0]))
        why = "no model_checkpoint_path";
    if (why) {
        dgr_ckpt_state_free(s);
        return dg_err(err, DG_E_GRAPH, "%s: not a checkpoint state file: %s "
                      "(at byte %ld)", what, why, (long)(l.p - text));
    }
    return DG_OK;
nomem:
    dg_sbuf_free(&v);
    dgr_ckpt_state_free(s);
    return dg_err_nomem(err, "checkpoint state");
}

char *dgr_ckpt_state_join(const char *dir, const char *path)
{
    if (path[0] == '/')
        return dg_strdup(path);
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_add(&b, dir);
    if (b.len && b.s[b.len - 1] != '/')
        dg_sbuf_add(&b, "/");
    dg_sbuf_add(&b, path);
    return dg_sbuf_take(&b);
}

dg_status dgr_ckpt_state_read(const char *dir, dgr_ckpt_state *s, int *found,
                              dg_error *err)
{
    memset(s, 0, sizeof *s);
    *found = 0;
    char *path = dgr_ckpt_state_join(dir, "checkpoint");
    if (!path)
        return dg_err_nomem(err, "checkpoint state");
    char *buf = NULL;
    size_t len = 0;
    dg_status st = DG_OK, rs = dg_read_file(path, &buf, &len);
    if (rs == DG_E_IO && errno == ENOENT)
        st = DG_OK;
    else if (rs == DG_E_NOMEM)
        st = dg_err_nomem(err, "checkpoint state");
    else if (rs != DG_OK)
        st = dg_err(err, DG_E_IO, "%s: cannot read: %s", path, strerror(errno));
    else if ((st = dgr_ckpt_state_parse(buf, len, path, s, err)) == DG_OK)
        *found = 1;
    dg_free(buf);
    dg_free(path);
    return st;
}

static void add_quoted(dg_sbuf *b, const char *s)
{
    dg_sbuf_add(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '\n': dg_sbuf_add(b, "\\n"); break;
        case '\r': dg_sbuf_add(b, "\\r"); break;
        case '\t': dg_sbuf_add(b, "\\t"); break;
        case '"': dg_sbuf_add(b, "\\\""); break;
        case '\'': dg_sbuf_add(b, "\\'"); break;
        case '\\': dg_sbuf_add(b, "\\\\"); break;
        default:
            if (*p < 0x20 || *p >= 0x7f)
                dg_sbuf_addf(b, "\\%03o", *p);
            else
                dg_sbuf_addn(b, (const char *)p, 1);
        }
    }
    dg_sbuf_add(b, "\"\n");
}

char *dgr_ckpt_state_text(const dgr_ckpt_state *s)
{
    dg_sbuf b;
    dg_sbuf_init(&b);
    dg_sbuf_add(&b, "model_checkpoint_path: ");
    add_quoted(&b, s->model ? s->model : "");
    for (int32_t i = 0; i < s->n_all; i++) {
        dg_sbuf_add(&b, "all_model_checkpoint_paths: ");
        add_quoted(&b, s->all[i]);
    }
    return dg_sbuf_take(&b);
}

dg_status dgr_ckpt_state_write(const char *dir, const dgr_ckpt_state *s,
                               dg_error *err)
{
    char *path = dgr_ckpt_state_join(dir, "checkpoint");
    char *text = dgr_ckpt_state_text(s);
    dg_sbuf t;
    dg_sbuf_init(&t);
    if (path)
        dg_sbuf_addf(&t, "%s.tmp.%ld", path, (long)getpid());
    dg_status st = DG_OK;
    if (!path || !text || t.oom) {
        st = dg_err_nomem(err, "checkpoint state");
        goto done;
    }
    FILE *f = fopen(t.s, "wb");
    int ok = f != NULL;
    if (f) {
        size_t n = strlen(text);
        ok = fwrite(text, 1, n, f) == n;
        ok = fflush(f) == 0 && ok;
        ok = fsync(fileno(f)) == 0 && ok;
        ok = fclose(f) == 0 && ok;
    }
    if (!ok || rename(t.s, path) != 0) {
        st = dg_err(err, DG_E_IO, "%s: cannot write the checkpoint state: %s",
                    path, strerror(errno));
        unlink(t.s);
        goto done;
    }
    int fd = open(dir[0] ? dir : ".", O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    dg_remove_dead_temps(dir[0] ? dir : ".", "checkpoint");
done:
    dg_sbuf_free(&t);
    dg_free(text);
    dg_free(path);
    return st;
}
