/*
 * ckpt_slices.c -- the parts of partitioned variables and the box copies
 * that restore a slice from other slices (see ckpt_slices.h).
 */
#include "ckpt_slices.h"
#include "session.h"
#include "dg_alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_part(const void *a, const void *b)
{
    return strcmp(((const dgr_ckpt_part *)a)->var,
                  ((const dgr_ckpt_part *)b)->var);
}

/* "X/part_K": the length of X and K (K without leading zeros), else -1. */
static long part_number(const char *name, size_t *xlen)
{
    const char *p = strrchr(name, '/');
    if (!p || p == name || strncmp(p + 1, "part_", 5) != 0)
        return -1;
    const char *k = p + 6;
    if (!*k || (k[0] == '0' && k[1]) || strlen(k) > 6)
        return -1;
    long v = 0;
    for (; *k; k++) {
        if (*k < '0' || *k > '9')
            return -1;
        v = v * 10 + (*k - '0');
    }
    *xlen = (size_t)(p - name);
    return v;
}

typedef struct cand {
    const char *name;
    size_t xlen;
    long k;
    int32_t node;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    size_t n = x->xlen < y->xlen ? x->xlen : y->xlen;
    int c = memcmp(x->name, y->name, n);
    if (c)
        return c;
    if (x->xlen != y->xlen)
        return x->xlen < y->xlen ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* Parts named X/part_0..n-1 (c[0..n), sorted): their slices of X into
 * out (appended), when they form a partition along one axis. */
static int group(const dgc_graph *g, const cand *c, int32_t n,
                 dgr_ckpt_part *out, int32_t *no, char *names, size_t *nl)
{
    const dgc_ttype *t0 = &g->nodes[c[0].node].outputs[0];
    int rank = t0->shape.rank, axis = -1;
    /* a lone X/part_0 may be a Variable named so: only groups count */
    if (n < 2 || rank < 1 || rank > DG_MAX_RANK)
        return 0;
    for (int32_t j = 0; j < n; j++) {
        const dgc_ttype *t = &g->nodes[c[j].node].outputs[0];
        if (c[j].k != j || t->dtype != t0->dtype || t->shape.rank != rank)
            return 0;
        for (int d = 0; d < rank; d++) {
            if (t->shape.dims[d] < 0)
                return 0;
            if (t->shape.dims[d] != t0->shape.dims[d]) {
                if (axis >= 0 && axis != d)
                    return 0;
                axis = d;
            }
        }
    }
    int guessed = axis < 0;
    if (guessed)
        axis = 0;
    /* X itself must not be a Variable (then these are not its parts) */
    char *full = names + *nl;
    memcpy(full, c[0].name, c[0].xlen);
    full[c[0].xlen] = '\0';
    int32_t id = dgc_graph_find(g, full);
    if (id >= 0 && g->nodes[id].op == DGC_OPID_Variable)
        return 0;
    *nl += c[0].xlen + 1;
    int64_t at = 0;
    for (int32_t j = 0; j < n; j++) {
        const dgc_ttype *t = &g->nodes[c[j].node].outputs[0];
        dgr_ckpt_part *p = &out[(*no)++];
        memset(p, 0, sizeof *p);
        p->var = c[j].name;
        p->full = full;
        p->rank = rank;
        p->index = j;
        p->count = n;
        p->guessed = guessed;
        for (int d = 0; d < rank; d++) {
            p->len[d] = t->shape.dims[d];
            p->full_dims[d] = t0->shape.dims[d];
        }
        p->start[axis] = at;
        at += t->shape.dims[axis];
    }
    for (int32_t j = 0; j < n; j++)
        out[*no - n + j].full_dims[axis] = at;
    return 1;
}

dg_status dgr_ckpt_parts_find(const dgc_graph *g, dgr_ckpt_parts *out,
                              dg_error *err)
{
    memset(out, 0, sizeof *out);
    int32_t nv = 0;
    size_t chars = 1;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == DGC_OPID_Variable) {
            nv++;
            chars += strlen(g->nodes[i].name) + 1;
        }
    cand *c = dg_malloc(sizeof *c * ((size_t)nv + 1));
    out->p = dg_calloc((size_t)nv + 1, sizeof *out->p);
    out->names = dg_malloc(2 * chars);
    if (!c || !out->p || !out->names) {
        dg_free(c);
        dgr_ckpt_parts_free(out);
        return dg_err_nomem(err, "checkpoint");
    }
    int32_t nc = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op != DGC_OPID_Variable)
            continue;
        int copy = 0;
        const char *name = dgr_replica_orig_name(g, i, &copy);
        if (copy)
            continue;
        const dgc_save_slice *s = dgc_graph_save_slice(g, name);
        const dgc_ttype *t = &g->nodes[i].outputs[0];
        if (s) { /* the file said which slice */
            dgr_ckpt_part *p = &out->p[out->n++];
            p->var = name;
            p->full = s->full;
            p->rank = s->rank;
            p->count = 1;
            memcpy(p->full_dims, s->full_dims, sizeof p->full_dims);
            memcpy(p->start, s->start, sizeof p->start);
            for (int d = 0; d < s->rank && d < t->shape.rank; d++)
                p->len[d] = t->shape.dims[d];
            continue;
        }
        size_t xl;
        long k = part_number(name, &xl);
        if (k >= 0)
            c[nc++] = (cand){name, xl, k, i};
    }
    qsort(c, (size_t)nc, sizeof *c, cmp_cand);
    size_t nl = 0;
    for (int32_t a = 0, b; a < nc; a = b) {
        for (b = a + 1; b < nc && c[b].xlen == c[a].xlen &&
                        memcmp(c[b].name, c[a].name, c[a].xlen) == 0; b++)
            ;
        group(g, c + a, b - a, out->p, &out->n, out->names, &nl);
    }
    dg_free(c);
    qsort(out->p, (size_t)out->n, sizeof *out->p, cmp_part);
    /* an optimizer's slot of a part ("X/part_1/Adam", its shape) is that
     * part of the slot of X ("X/Adam"), as TF's slot_creator names it */
    int32_t np = out->n;
    dgr_ckpt_parts sorted = {out->p, np, NULL}; /* lookups: the sorted ones */
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op != DGC_OPID_Variable)
            continue;
        int copy = 0;
        const char *name = dgr_replica_orig_name(g, i, &copy);
        const char *sl = strrchr(name, '/');
        if (copy || !sl || dgr_ckpt_part_of(&sorted, name))
            continue;
        char *owner = dg_strndup(name, (size_t)(sl - name));
        if (!owner) {
            dgr_ckpt_parts_free(out);
            return dg_err_nomem(err, "checkpoint");
        }
        const dgr_ckpt_part *pt = dgr_ckpt_part_of(&sorted, owner);
        dg_free(owner);
        const dgc_ttype *t = &g->nodes[i].outputs[0];
        size_t fl = pt ? strlen(pt->full) + strlen(sl) + 1 : 0;
        int same = pt && pt->var != name && t->shape.rank == pt->rank &&
                   nl + fl <= 2 * chars;
        for (int d = 0; same && d < pt->rank; d++)
            same = t->shape.dims[d] == pt->len[d];
        if (!same)
            continue;
        dgr_ckpt_part *q = &out->p[out->n++];
        *q = *pt;
        q->var = name;
        q->full = out->names + nl;
        snprintf(out->names + nl, fl, "%s%s", pt->full, sl);
        nl += fl;
    }
    if (out->n > np)
        qsort(out->p, (size_t)out->n, sizeof *out->p, cmp_part);
    return DG_OK;
}

const dgr_ckpt_part *dgr_ckpt_part_of(const dgr_ckpt_parts *ps,
                                      const char *var)
{
    int32_t lo = 0, hi = ps->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ps->p[mid].var, var);
        if (c == 0)
            return &ps->p[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

void dgr_ckpt_parts_free(dgr_ckpt_parts *ps)
{
    dg_free(ps->p);
    dg_free(ps->names);
    memset(ps, 0, sizeof *ps);
}

int64_t dgr_copy_box(char *dst, const int64_t *dstart, const int64_t *dlen,
                     const char *src, const int64_t *sstart,
                     const int64_t *slen, int rank, size_t esz)
{
    int64_t lo[DG_MAX_RANK], hi[DG_MAX_RANK], idx[DG_MAX_RANK];
    int64_t dstr[DG_MAX_RANK + 1], sstr[DG_MAX_RANK + 1];
    if (rank == 0) {
        memcpy(dst, src, esz);
        return 1;
    }
    dstr[rank] = sstr[rank] = 1;
    for (int d = rank - 1; d >= 0; d--) {
        lo[d] = dstart[d] > sstart[d] ? dstart[d] : sstart[d];
        int64_t de = dstart[d] + dlen[d], se = sstart[d] + slen[d];
        hi[d] = de < se ? de : se;
        if (lo[d] >= hi[d])
            return 0;
        dstr[d] = dstr[d + 1] * dlen[d];
        sstr[d] = sstr[d + 1] * slen[d];
        idx[d] = lo[d];
    }
    /* strides of dimension d are dstr[d + 1] (elements) */
    int last = rank - 1;
    int64_t run = hi[last] - lo[last], total = 0;
    for (;;) {
        int64_t doff = 0, soff = 0;
        for (int d = 0; d < rank; d++) {
            doff += (idx[d] - dstart[d]) * dstr[d + 1];
            soff += (idx[d] - sstart[d]) * sstr[d + 1];
        }
        memcpy(dst + (size_t)doff * esz, src + (size_t)soff * esz,
               (size_t)run * esz);
        total += run;
        int d = last - 1;
        while (d >= 0 && ++idx[d] == hi[d]) {
            idx[d] = lo[d];
            d--;
        }
        if (d < 0)
            break;
    }
    return total;
}
