/*
 * load_scan.c -- one pass over a graph file's raw text that finds the
 * top-level members, the extent of every element of top-level arrays (the
 * node objects) and every number token (for exact integer literals), so the
 * loader can hand cJSON one node at a time instead of building a DOM of the
 * whole document.  The scan follows only the structure it needs (strings
 * with their escapes, brackets, the top-level and array separators); cJSON
 * validates each slice.  Anything unexpected makes it give up (return 1):
 * the loader then parses the whole text with cJSON, which reports the exact
 * error position or, if the text is valid after all, loads it the slow way.
 */
#include "load_priv.h"
#include "dg_alloc.h"

#include <stdint.h>
#include <string.h>

/* Deeper nesting is left to the whole-document parse, which applies
 * cJSON's own limit (CJSON_NESTING_LIMIT) to the whole document. */
#define SCAN_MAX_DEPTH 512

typedef struct scanner {
    const char *t;
    size_t len, i;
    dgc_jscan *s;
} scanner;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *np = dg_realloc(*p, c * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = c;
    return 0;
}

static int is_ws(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static void skip_ws(scanner *sc)
{
    while (sc->i < sc->len && is_ws(sc->t[sc->i]))
        sc->i++;
}

static int is_num_char(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' ||
           c == 'e' || c == 'E';
}

/* A number token at sc->i: record it and skip it.  0 ok, -1 nomem. */
static int number(scanner *sc)
{
    dgc_jscan *s = sc->s;
    if (s->n_num == s->cap_num) {
        size_t cap = s->cap_num;
        if (grow((void **)&s->num_off, &cap, s->n_num + 1, sizeof *s->num_off))
            return -1;
        cap = s->cap_num;
        if (grow((void **)&s->num_int, &cap, s->n_num + 1, 1))
            return -1;
        s->cap_num = cap;
    }
    size_t start = sc->i;
    int integer = 1;
    while (sc->i < sc->len && is_num_char(sc->t[sc->i])) {
        char c = sc->t[sc->i];
        if (c == '.' || c == 'e' || c == 'E')
            integer = 0;
        sc->i++;
    }
    s->num_off[s->n_num] = start;
    s->num_int[s->n_num++] = (unsigned char)integer;
    return 0;
}

/* A string token starting at the '"' at sc->i.  0 ok, 1 unterminated. */
static int string(scanner *sc)
{
    const char *t = sc->t;
    size_t i = sc->i + 1, len = sc->len;
    for (;;) {
        const char *q = memchr(t + i, '"', len - i);
        if (!q)
            return 1;
        size_t j = (size_t)(q - t);
        /* the quote ends the string unless an odd run of backslashes
         * precedes it */
        size_t b = j;
        while (b > i && t[b - 1] == '\\')
            b--;
        if ((j - b) % 2 == 0) {
            sc->i = j + 1;
            return 0;
        }
        i = j + 1;
    }
}

/* Skip one value at sc->i (after whitespace), recording number tokens.
 * 0 ok, 1 unexpected text, -1 nomem. */
static int value(scanner *sc, int depth)
{
    char stack[SCAN_MAX_DEPTH];
    int top = 0;
    const char *t = sc->t;
    if (sc->i >= sc->len)
        return 1;
    char c = t[sc->i];
    if (c != '{' && c != '[') {
        if (c == '"')
            return string(sc);
        if (c == '-' || (c >= '0' && c <= '9'))
            return number(sc) ? -1 : 0;
        size_t start = sc->i;
        while (sc->i < sc->len && t[sc->i] >= 'a' && t[sc->i] <= 'z')
            sc->i++;
        return sc->i == start;
    }
    while (sc->i < sc->len) {
        c = t[sc->i];
        switch (c) {
        case '"':
            if (string(sc))
                return 1;
            continue;
        case '{':
        case '[':
            if (depth + top + 1 >= SCAN_MAX_DEPTH)
                return 1;
            stack[top++] = c == '{' ? '}' : ']';
            break;
        case '}':
        case ']':
            if (top == 0 || stack[top - 1] != c)
                return 1;
            if (--top == 0) {
                sc->i++;
                return 0;
            }
            break;
        default:
            if (c == '-' || (c >= '0' && c <= '9')) {
                if (number(sc))
                    return -1;
                continue;
            }
        }
        sc->i++;
    }
    return 1;
}

/* The elements of the array at sc->i (a '['). */
static int array(scanner *sc, dgc_jmember *m)
{
    dgc_jscan *s = sc->s;
    m->is_array = 1;
    m->elem_first = s->n_elems;
    sc->i++;
    skip_ws(sc);
    if (sc->i < sc->len && sc->t[sc->i] == ']') {
        sc->i++;
        return 0;
    }
    for (;;) {
        skip_ws(sc);
        size_t start = sc->i, nfirst = s->n_num;
        int rc = value(sc, 2);
        if (rc)
            return rc;
        if (sc->i - start > UINT32_MAX || s->n_num - nfirst > UINT32_MAX)
            return 1;
        if (grow((void **)&s->elems, &s->cap_elems, s->n_elems + 1,
                 sizeof *s->elems))
            return -1;
        dgc_jelem *e = &s->elems[s->n_elems++];
        e->off = start;
        e->len = (uint32_t)(sc->i - start);
        e->n_num = (uint32_t)(s->n_num - nfirst);
        m->n_elem++;
        skip_ws(sc);
        if (sc->i >= sc->len)
            return 1;
        if (sc->t[sc->i] == ']') {
            sc->i++;
            return 0;
        }
        if (sc->t[sc->i] != ',')
            return 1;
        sc->i++;
    }
}

static int members(scanner *sc)
{
    dgc_jscan *s = sc->s;
    skip_ws(sc);
    if (sc->i >= sc->len || sc->t[sc->i] != '{')
        return 1;
    sc->i++;
    skip_ws(sc);
    if (sc->i < sc->len && sc->t[sc->i] == '}') {
        sc->i++;
        return 0;
    }
    for (;;) {
        skip_ws(sc);
        if (sc->i >= sc->len || sc->t[sc->i] != '"')
            return 1;
        if (grow((void **)&s->members, &s->cap_members, s->n_members + 1,
                 sizeof *s->members))
            return -1;
        dgc_jmember *m = &s->members[s->n_members];
        memset(m, 0, sizeof *m);
        m->key_off = sc->i;
        if (string(sc))
            return 1;
        m->key_len = sc->i - m->key_off;
        skip_ws(sc);
        if (sc->i >= sc->len || sc->t[sc->i] != ':')
            return 1;
        sc->i++;
        skip_ws(sc);
        m->val_off = sc->i;
        m->num_first = s->n_num;
        int rc = (sc->i < sc->len && sc->t[sc->i] == '[') ? array(sc, m)
                                                           : value(sc, 1);
        if (rc)
            return rc;
        m->val_len = sc->i - m->val_off;
        m->n_num = s->n_num - m->num_first;
        s->n_members++;
        skip_ws(sc);
        if (sc->i >= sc->len)
            return 1;
        if (sc->t[sc->i] == '}') {
            sc->i++;
            return 0;
        }
        if (sc->t[sc->i] != ',')
            return 1;
        sc->i++;
    }
}

int dgc_json_scan(const char *text, size_t len, dgc_jscan *s)
{
    memset(s, 0, sizeof *s);
    scanner sc = {text, len, 0, s};
    int rc = members(&sc);
    if (rc == 0) {
        skip_ws(&sc);
        if (sc.i != len)
            rc = 1;
    }
    if (rc)
        dgc_jscan_free(s);
    return rc;
}

void dgc_jscan_free(dgc_jscan *s)
{
    dg_free(s->members);
    dg_free(s->elems);
    dg_free(s->num_off);
    dg_free(s->num_int);
    memset(s, 0, sizeof *s);
}
