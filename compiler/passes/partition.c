/*
 * partition.c -- cross-device transfers (SPEC 4.6): one per (producer
 * output, consumer device), listed in consumer graph order.  Control edges
 * are ordering only and need no transfer.
 */
#include "partition.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <string.h>

/* open-addressing set of (node, index, device) keys */
typedef struct tset {
    uint64_t *keys; /* 0 = empty; stored key + 1 */
    uint32_t *hi;   /* device part */
    size_t cap;
} tset;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* 1 if inserted, 0 if present. */
static int tset_put(tset *s, uint64_t key, uint32_t dev)
{
    size_t mask = s->cap - 1;
    size_t h = (size_t)(mix(key ^ ((uint64_t)dev * 0x9e3779b97f4a7c15ULL)) & mask);
    for (;;) {
        if (s->keys[h] == 0) {
            s->keys[h] = key + 1;
            s->hi[h] = dev;
            return 1;
        }
        if (s->keys[h] == key + 1 && s->hi[h] == dev)
            return 0;
        h = (h + 1) & mask;
    }
}

dg_status dgc_partition(const dgc_graph *g, const uint8_t *active,
                        dgc_transfer **out, int *n_out, dg_error *err)
{
    *out = NULL;
    *n_out = 0;
    /* count cross-device edges to size the table */
    size_t n_cross = 0;
    for (int32_t c = 0; c < g->n_nodes; c++) {
        const dgc_node *n = &g->nodes[c];
        if (active && !active[c])
            continue;
        for (int k = 0; k < n->n_inputs; k++) {
            int32_t p = n->inputs[k].node;
            if ((!active || active[p]) &&
                g->nodes[p].device_id != n->device_id)
                n_cross++;
        }
    }
    if (n_cross == 0)
        return DG_OK;
    tset s;
    s.cap = 16;
    while (s.cap < n_cross * 2)
        s.cap <<= 1;
    s.keys = dg_calloc(s.cap, sizeof *s.keys);
    s.hi = dg_calloc(s.cap, sizeof *s.hi);
    dgc_transfer *t = dg_malloc(sizeof *t * n_cross);
    if (!s.keys || !s.hi || !t) {
        dg_free(s.keys);
        dg_free(s.hi);
        dg_free(t);
        return dg_err_nomem(err, "transfers");
    }
    int nt = 0;
    for (int32_t c = 0; c < g->n_nodes; c++) {
        const dgc_node *n = &g->nodes[c];
        if (active && !active[c])
            continue;
        for (int k = 0; k < n->n_inputs; k++) {
            dgc_ref r = n->inputs[k];
            if ((active && !active[r.node]) ||
                g->nodes[r.node].device_id == n->device_id)
                continue;
            uint64_t key = ((uint64_t)(uint32_t)r.node << 32) |
                           (uint32_t)r.index;
            if (!tset_put(&s, key, (uint32_t)n->device_id))
                continue;
            t[nt].src = r;
            t[nt].src_device = g->nodes[r.node].device_id;
            t[nt].dst_device = n->device_id;
            t[nt].first_consumer = c;
            nt++;
        }
    }
    dg_free(s.keys);
    dg_free(s.hi);
    *out = t;
    *n_out = nt;
    return DG_OK;
}
