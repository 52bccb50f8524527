/*
 * strpool.c -- the loaders' string pool (strpool.h), shared by the dgrun
 * JSON node loader (load_nodes.c) and the GraphDef loader
 * (load_graphdef.c, load_graphdef_attr.c).
 */
#include "strpool.h"
#include "dg_alloc.h"

#include <string.h>

int dgc_strpool_reserve(dgc_strpool *p, size_t cap)
{
    char *nb = dg_realloc(p->buf, cap);
    if (!nb)
        return -1;
    p->buf = nb;
    p->cap = cap;
    return 0;
}

int dgc_strpool_add(dgc_strpool *p, const char *s)
{
    size_t n = strlen(s) + 1;
    if (p->len + n > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (p->len + n > cap)
            cap *= 2;
        if (dgc_strpool_reserve(p, cap))
            return -1;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->n++;
    return 0;
}

const char *dgc_strpool_at(const dgc_strpool *p, size_t off)
{
    return p->buf ? p->buf + off : "";
}

void dgc_strpool_free(dgc_strpool *p)
{
    dg_free(p->buf);
    memset(p, 0, sizeof *p);
}
