/*
 * exec_queues.c -- which stream (compute queue) each step of a runner uses
 * on a device with several, and what it waits for, computed once per runner
 * (dgr_runner_new).  In plan order such an op takes the queue of its first
 * same-device data
 * producer unless that producer already handed it to an earlier successor,
 * else the least recently assigned queue of its device: chains stay on one
 * queue (no events), branches fan out.  A step waits for its same-device
 * predecessors (data or control) on other queues and a transfer out of a
 * device for its producers; only those producers make events.  Waits
 * already implied by a same-queue predecessor's are dropped.
 */
#include "exec_priv.h"
#include "dg_alloc.h"

#include <string.h>

#define MAXQ 8 /* streams per device that get their own queue facts */

#define COV 8 /* completion facts kept per step (assign_queues) */

static int cov_has(const int32_t *c, int n, int32_t s)
{
    for (int i = 0; i < n; i++)
        if (c[i] == s)
            return 1;
    return 0;
}

/* Add s (if >= 0 and new) to the set c of n (<= COV) entries; when full,
 * the oldest is dropped (only an optimisation is lost).  New count. */
static int cov_add(int32_t *c, int n, int32_t s)
{
    if (s < 0 || cov_has(c, n, s))
        return n;
    if (n == COV) {
        memmove(c, c + 1, sizeof *c * (COV - 1));
        c[COV - 1] = s;
        return n;
    }
    c[n] = s;
    return n + 1;
}

int dgr_exec_assign_queues(dgr_exec *S, const dgc_plan *p, uint8_t *xflags,
                           uint8_t f_mq, uint8_t f_event, dgr_exec_queues *r)
{
    size_t ns = (size_t)p->n_steps + 1;
    r->qidx = dg_calloc(ns, sizeof *r->qidx);
    r->wait_off = dg_calloc(ns, sizeof *r->wait_off);
    r->wait_n = dg_calloc(ns, sizeof *r->wait_n);
    int *nq = dg_calloc((size_t)S->n_dev + 1, sizeof *nq);
    if (!r->qidx || !r->wait_off || !r->wait_n || !nq) {
        dg_free(nq);
        return -1;
    }
    int any = 0;
    for (int d = 0; d < S->n_dev; d++) {
        const dgr_stream_ops *so = S->devs[d].be->streams;
        nq[d] = so ? so->count(&S->devs[d]) : 1;
        if (nq[d] > MAXQ)
            nq[d] = MAXQ;
        any |= nq[d] > 1;
    }
    if (!any) {
        dg_free(nq);
        return 0;
    }
    /* predecessors: invert the successor lists */
    int32_t *poff = dg_calloc(ns + 1, sizeof *poff);
    int32_t *pred = dg_calloc((size_t)p->n_succ + 1, sizeof *pred);
    uint8_t *handed = dg_calloc(ns, 1);
    uint64_t *tick = dg_calloc((size_t)S->n_dev * MAXQ + 1,
                               sizeof *tick);
    int32_t *fill = dg_calloc(ns, sizeof *fill);
    int32_t *cov = NULL;
    int rc = -1;
    if (!poff || !pred || !handed || !tick || !fill)
        goto out;
    for (int32_t i = 0; i < p->n_steps; i++)
        for (int32_t k = 0; k < p->steps[i].n_succ; k++)
            poff[p->succ[p->steps[i].succ_off + k] + 1]++;
    for (int32_t i = 0; i < p->n_steps; i++)
        poff[i + 1] += poff[i];
    for (int32_t i = 0; i < p->n_steps; i++)
        for (int32_t k = 0; k < p->steps[i].n_succ; k++) {
            int32_t t = p->succ[p->steps[i].succ_off + k];
            pred[poff[t] + fill[t]++] = i;
        }
    uint64_t clock = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dgc_step *st = &p->steps[i];
        int d = st->device;
        if (st->kind != DGC_STEP_OP || nq[d] <= 1)
            continue;
        xflags[i] |= f_mq;
        int q = -1;
        for (int k = 0; k < st->n_in && q < 0; k++) {
            int32_t ps = p->slots[p->in_slots[st->in_off + k]].step;
            const dgc_step *pst = &p->steps[ps];
            if (pst->kind != DGC_STEP_OP || pst->device != d)
                continue;
            if (!handed[ps]) {
                handed[ps] = 1;
                q = r->qidx[ps];
            }
            break; /* only the first same-device producer */
        }
        if (q < 0) {
            q = 0;
            for (int j = 1; j < nq[d]; j++)
                if (tick[d * MAXQ + j] <
                    tick[d * MAXQ + q])
                    q = j;
        }
        tick[d * MAXQ + q] = ++clock;
        r->qidx[i] = (int8_t)q;
    }
    /* wait lists, in plan order (topological).  cov[s] holds up to COV
     * steps on other queues known to have completed before s starts: the
     * ones s waits for, theirs, and those of its same-queue predecessors
     * (enqueued before s on an in-order queue).  A predecessor already in
     * that set needs no wait -- e.g. a chain reading one constant on
     * another queue waits for it once, not once per op. */
    cov = dg_calloc(ns * COV, sizeof *cov);
    r->waits = dg_calloc((size_t)p->n_succ + 1, sizeof *r->waits);
    if (!cov || !r->waits)
        goto out;
    for (size_t i = 0; i < ns * COV; i++)
        cov[i] = -1;
    int32_t total = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dgc_step *st = &p->steps[i];
        int32_t *ci = &cov[(size_t)i * COV];
        int nci = 0;
        r->wait_off[i] = total;
        /* same-queue predecessors first: what they know */
        if (st->kind == DGC_STEP_OP && (xflags[i] & f_mq))
            for (int32_t k = poff[i]; k < poff[i + 1]; k++) {
                int32_t ps = pred[k];
                if (!(xflags[ps] & f_mq) ||
                    p->steps[ps].device != st->device ||
                    r->qidx[ps] != r->qidx[i])
                    continue;
                for (int j = 0; j < COV; j++)
                    nci = cov_add(ci, nci, cov[(size_t)ps * COV + j]);
            }
        for (int32_t k = poff[i]; k < poff[i + 1]; k++) {
            int32_t ps = pred[k];
            const dgc_step *pst = &p->steps[ps];
            if (pst->kind != DGC_STEP_OP || !(xflags[ps] & f_mq))
                continue;
            int w;
            if (st->kind == DGC_STEP_OP)
                w = pst->device == st->device && r->qidx[ps] != r->qidx[i];
            else /* a transfer (or SEND) reads its source's result */
                w = (st->kind == DGC_STEP_SEND ? st->device
                                               : st->src_device) ==
                    pst->device;
            if (!w || cov_has(ci, nci, ps))
                continue;
            r->waits[total + r->wait_n[i]++] = ps;
            xflags[ps] |= f_event;
            if (st->kind != DGC_STEP_OP)
                continue;
            nci = cov_add(ci, nci, ps);
            for (int j = 0; j < COV; j++)
                nci = cov_add(ci, nci, cov[(size_t)ps * COV + j]);
        }
        if (r->wait_n[i] > r->max_waits)
            r->max_waits = r->wait_n[i];
        total += r->wait_n[i];
    }
    r->qev = dg_calloc(ns, sizeof *r->qev);
    if (!r->qev)
        goto out;
    rc = 0;
out:
    dg_free(nq);
    dg_free(poff);
    dg_free(pred);
    dg_free(handed);
    dg_free(tick);
    dg_free(fill);
    dg_free(cov);
    return rc;
}

