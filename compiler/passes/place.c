/*
 * place.c -- the placement pass (SPEC 4.1-4.5, 4.7, 4.8): requests from a
 * node's own device, the first matching rule and the --device scope;
 * colocation groups by union-find; choice of GPU before CPU, lowest index
 * first; the consumer rule for lone sources; soft placement; errors worded
 * as SPEC 4.7.  Linear in the graph size (times alpha(n) and the number of
 * rules), so a graph of a million nodes places in well under a second.
 */
#include "place.h"
#include "program.h"
#include "ops.h"
#include "dg_alloc.h"
#include "dg_error.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static int32_t add_spec(dgc_placer *p, const dgc_devspec *s)
{
    if (p->n_specs == p->cap_specs) {
        dgc_devspec *ns = dg_grow(p->specs, &p->cap_specs, p->n_specs + 1,
                                  sizeof *ns, 16);
        if (!ns)
            return -1;
        p->specs = ns;
    }
    p->specs[p->n_specs] = *s;
    return p->n_specs++;
}

int32_t dgc_placer_find(dgc_placer *p, int32_t i)
{
    int32_t r = i;
    while (p->parent[r] != r)
        r = p->parent[r];
    while (p->parent[i] != r) {
        int32_t nx = p->parent[i];
        p->parent[i] = r;
        i = nx;
    }
    return r;
}

int dgc_placer_kernel_ok(const dgc_placer *p, uint8_t k, int d)
{
    return (k >> p->dev_class[d]) & 1;
}

void dgc_placer_free(dgc_placer *p)
{
    for (int i = 0; i < p->n_rules; i++) {
        dg_free(p->rules[i].ops);
        dg_free(p->rules[i].devs);
        dg_free(p->rules[i].dev_text);
    }
    dg_free(p->rules);
    dg_strmap_free(&p->spec_ids);
    if (p->reqstr)
        for (int32_t i = 0; i < p->n; i++)
            dg_free(p->reqstr[i]);
    dg_free(p->reqstr);
    dg_free(p->parent);
    dg_free(p->size);
    dg_free(p->specs);
    dg_free(p->req);
    dg_free(p->greq);
    dg_free(p->rule_of);
    dg_free(p->src);
    dg_free(p->kern);
    dg_free(p->dev_class);
    dg_free(p->chosen);
    dg_free(p->reason);
    dg_free(p->order);
    memset(p, 0, sizeof *p);
}

/* ---- setup: rules, scope, device order ----------------------------------- */

static dg_status setup_rules(dgc_placer *p, const dgc_rule *rules, int n,
                             dg_error *err)
{
    if (n <= 0)
        return DG_OK;
    p->rules = dg_calloc((size_t)n, sizeof *p->rules);
    if (!p->rules)
        return dg_err_nomem(err, "placement rules");
    p->n_rules = n;
    for (int r = 0; r < n; r++) {
        const dgc_rule *in = &rules[r];
        dgc_prule *pr = &p->rules[r];
        if (in->n_ops > 0) {
            pr->ops = dg_malloc(sizeof *pr->ops * (size_t)in->n_ops);
            if (!pr->ops)
                return dg_err_nomem(err, "placement rules");
            for (int k = 0; k < in->n_ops; k++)
                pr->ops[k] = dgc_op_find(in->ops[k]);
            pr->n_ops = in->n_ops;
        }
        pr->glob = in->name_glob;
        pr->round_robin = in->round_robin && in->n_devices > 0;
        int nd = pr->round_robin ? in->n_devices : (in->device ? 1 : 0);
        if (!pr->round_robin && !in->device && in->n_devices > 0)
            nd = 1; /* "devices" without a strategy: the first one */
        if (nd == 0)
            continue;
        pr->devs = dg_calloc((size_t)nd, sizeof *pr->devs);
        pr->dev_text = dg_calloc((size_t)nd, sizeof *pr->dev_text);
        if (!pr->devs || !pr->dev_text)
            return dg_err_nomem(err, "placement rules");
        pr->n_devs = nd;
        for (int k = 0; k < nd; k++) {
            const char *t = (pr->round_robin || !in->device) ? in->devices[k]
                                                             : in->device;
            pr->dev_text[k] = t;
            if (dgc_devspec_parse(t, &pr->devs[k]))
                return dg_err(err, DG_E_GRAPH,
                              "placement rule %d: Malformed device "
                              "specification '%s'", r, t ? t : "");
        }
    }
    return DG_OK;
}

static int rule_matches(const dgc_prule *r, const dgc_node *n)
{
    if (r->n_ops > 0) {
        int ok = 0;
        for (int k = 0; k < r->n_ops && !ok; k++)
            ok = r->ops[k] == n->op;
        if (!ok)
            return 0;
    }
    if (r->glob && fnmatch(r->glob, n->name, 0) != 0)
        return 0;
    return 1;
}

/* Preference order (4.4): GPU before CPU, then the lower index, then the
 * list order (tasks in rank order in a cluster): a stable sort. */
static const dg_device_info *order_devs;

static int order_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const dg_device_info *dx = &order_devs[x], *dy = &order_devs[y];
    if (dx->type != dy->type)
        return dx->type == DG_DEV_GPU ? -1 : 1;
    if (dx->index != dy->index)
        return dx->index < dy->index ? -1 : 1;
    return x < y ? -1 : x > y;
}

static dg_status setup_order(dgc_placer *p, dg_error *err)
{
    int nd = p->devs->n;
    p->order = dg_malloc(sizeof *p->order * (size_t)(nd > 0 ? nd : 1));
    if (!p->order)
        return dg_err_nomem(err, "placement");
    for (int i = 0; i < nd; i++)
        p->order[i] = i;
    order_devs = p->devs->devs; /* placement is single-threaded */
    qsort(p->order, (size_t)nd, sizeof *p->order, order_cmp);
    order_devs = NULL;
    return DG_OK;
}

int dgc_placer_request(const dgc_placer *p, int32_t root, dgc_devspec *out)
{
    if (root >= 0 && p->greq[root] >= 0)
        *out = p->specs[p->greq[root]];
    else
        dgc_devspec_clear(out);
    if (!p->has_chief || out->has_job)
        return 0;
    dgc_devspec_complete(out, &p->chief);
    return 1;
}

/* ---- 4.1 requests ----------------------------------------------------------- */

static dg_status compute_requests(dgc_placer *p, dg_error *err)
{
    const dgc_graph *g = p->g;
    const char *last_text = NULL;
    dgc_devspec last_spec;
    dgc_devspec_clear(&last_spec);
    int scope_set = !dgc_devspec_is_empty(&p->scope);
    dgc_devspec last_merged;
    dgc_devspec_clear(&last_merged);
    int32_t last_id = -1, last_node = -1;
    for (int32_t i = 0; i < p->n; i++) {
        const dgc_node *n = &g->nodes[i];
        dgc_devspec s;
        dgc_devspec_clear(&s);
        uint8_t src = 0;
        if (n->device && n->device[0]) {
            if (last_text && strcmp(last_text, n->device) == 0) {
                s = last_spec;
            } else {
                if (dgc_devspec_parse_as(n->device, &s, g->device_syntax))
                    return dg_err(err, DG_E_GRAPH,
                                  "node '%s': Malformed device specification "
                                  "'%s'", n->name, n->device);
                last_text = n->device;
                last_spec = s;
            }
            if (!dgc_devspec_is_empty(&s))
                src |= DGC_SRC_OWN;
        }
        p->rule_of[i] = -1;
        if (!(n->flags & DGC_NODE_GENERATED)) {
            for (int r = 0; r < p->n_rules; r++) {
                dgc_prule *pr = &p->rules[r];
                if (!rule_matches(pr, n))
                    continue;
                p->rule_of[i] = r;
                if (pr->n_devs > 0) {
                    const dgc_devspec *rd =
                        &pr->devs[pr->round_robin
                                      ? (int)(pr->dealt++ % pr->n_devs)
                                      : 0];
                    if (!dgc_devspec_is_empty(rd))
                        src |= DGC_SRC_RULE;
                    dgc_devspec_merge_over(&s, rd);
                }
                break;
            }
            if (scope_set) {
                dgc_devspec_merge_over(&s, &p->scope);
                src |= DGC_SRC_SCOPE;
            }
        }
        p->src[i] = src;
        if (dgc_devspec_is_empty(&s)) {
            p->req[i] = -1;
            continue;
        }
        if (last_id >= 0 && memcmp(&s, &last_merged, sizeof s) == 0) {
            /* same request as the previous node: skip formatting */
            if (!(p->reqstr[i] = dg_strdup(p->reqstr[last_node])))
                return dg_err_nomem(err, "placement");
            p->req[i] = last_id;
            continue;
        }
        char buf[192];
        dgc_devspec_str(&s, buf, sizeof buf);
        p->reqstr[i] = dg_strdup(buf);
        if (!p->reqstr[i])
            return dg_err_nomem(err, "placement");
        int32_t id = dg_strmap_get(&p->spec_ids, buf);
        if (id < 0) {
            id = add_spec(p, &s);
            if (id < 0 || dg_strmap_put(&p->spec_ids, p->reqstr[i], id) < 0)
                return dg_err_nomem(err, "placement");
        }
        p->req[i] = id;
        last_id = id;
        last_node = i;
        last_merged = s;
    }
    return DG_OK;
}

/* ---- 4.2 colocation groups ------------------------------------------------ */

static int32_t link_roots(dgc_placer *p, int32_t a, int32_t b)
{
    if (p->size[a] < p->size[b]) {
        int32_t t = a;
        a = b;
        b = t;
    }
    p->parent[b] = a;
    p->size[a] += p->size[b];
    p->src[a] |= p->src[b] & DGC_SRC_SOFT;
    return a;
}

/* State op `st` joins Variable `var`; its request yields on conflict. */
static dg_status unite_state(dgc_placer *p, int32_t var, int32_t st,
                             dg_error *err)
{
    int32_t rv = dgc_placer_find(p, var), rs = dgc_placer_find(p, st);
    if (rv == rs)
        return DG_OK;
    int32_t gv = p->greq[rv], gs = p->greq[rs], merged = gv;
    if (gs >= 0) {
        if (gv < 0) {
            merged = gs;
        } else {
            dgc_devspec m = p->specs[gv];
            const char *what;
            if (dgc_devspec_merge_compatible(&m, &p->specs[gs], &what) == 0) {
                if ((merged = add_spec(p, &m)) < 0)
                    return dg_err_nomem(err, "placement");
            } else {
                /* the state op's group yields (TF's EnsureCompatibility-
                 * AcrossResourceEdge): mark its members whose own request
                 * is overridden */
                for (int32_t i = 0; p->size[rs] > 1 && i < p->n; i++) {
                    dgc_devspec t = p->specs[gv];
                    if (p->req[i] >= 0 && dgc_placer_find(p, i) == rs &&
                        dgc_devspec_merge_compatible(
                            &t, &p->specs[p->req[i]], &what) != 0)
                        p->src[i] |= DGC_SRC_DROPPED;
                }
                p->src[st] |= DGC_SRC_DROPPED;
            }
        }
    }
    int32_t r = link_roots(p, rv, rs);
    p->greq[r] = merged;
    return DG_OK;
}

/* Node x colocates with y (TF's ColocateNodes(x, y)). */
static dg_status unite(dgc_placer *p, int32_t x, int32_t y, dg_error *err)
{
    int32_t rx = dgc_placer_find(p, x), ry = dgc_placer_find(p, y);
    if (rx == ry)
        return DG_OK;
    int32_t gx = p->greq[rx], gy = p->greq[ry], merged;
    uint8_t soft = 0;
    if (gx < 0 || gy < 0) {
        merged = gx >= 0 ? gx : gy;
    } else {
        dgc_devspec a = p->specs[gx], b = p->specs[gy];
        const char *what = "";
        while (dgc_devspec_merge_compatible(&a, &b, &what) != 0) {
            int typ = strcmp(what, "types") == 0, ids = strcmp(what, "ids") == 0;
            if (!p->allow_soft || (!typ && !ids)) {
                char sa[192], sb[192];
                dgc_devspec_str(&p->specs[gx], sa, sizeof sa);
                dgc_devspec_str(&p->specs[gy], sb, sizeof sb);
                return dg_err(err, DG_E_PLACEMENT,
                              "Cannot colocate nodes '%s' and '%s': Cannot "
                              "merge devices with incompatible %s: '%s' and "
                              "'%s'", p->g->nodes[x].name,
                              p->g->nodes[y].name, what, sa, sb);
            }
            if (typ)
                a.type = b.type = DGC_TYPE_ANY;
            a.id = b.id = -1;
            soft = DGC_SRC_SOFT;
        }
        if ((merged = add_spec(p, &a)) < 0)
            return dg_err_nomem(err, "placement");
    }
    int32_t r = link_roots(p, rx, ry);
    p->greq[r] = merged;
    p->src[r] |= soft;
    return DG_OK;
}

static dg_status build_groups(dgc_placer *p, dg_error *err)
{
    const dgc_graph *g = p->g;
    dg_status st;
    for (int32_t i = 0; i < p->n; i++) {
        p->parent[i] = i;
        p->size[i] = 1;
        p->greq[i] = p->req[i];
    }
    /* reference edges first, as TF does: the variable (input 0) of every
     * state op, and the accumulators it updates in place (ApplyMomentum's
     * accum, ApplyAdam's m and v: dgc_op_n_refs), which are reference
     * inputs in TF too */
    for (int32_t i = 0; i < p->n; i++) {
        const dgc_node *n = &g->nodes[i];
        if (!dgc_op_has(n->op, DGC_OP_STATE) || n->n_inputs < 1)
            continue;
        int n_ref = dgc_op_n_refs(n->op);
        for (int k = 0; k < n_ref && k < n->n_inputs; k++) {
            int32_t v = n->inputs[k].node;
            if (v >= 0 && v < p->n &&
                dgc_op_has(g->nodes[v].op, DGC_OP_VARIABLE) &&
                (st = unite_state(p, v, i, err)))
                return st;
        }
    }
    for (int32_t i = 0; i < p->n; i++) {
        const dgc_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_coloc; k++)
            if (n->coloc[k] >= 0 && n->coloc[k] < p->n &&
                (st = unite(p, i, n->coloc[k], err)))
                return st;
        int on = p->colocate >= 0 ? p->colocate : n->colocate;
        if ((n->flags & DGC_NODE_GENERATED) && on && n->group_hint >= 0 &&
            n->group_hint < p->n && (st = unite(p, i, n->group_hint, err)))
            return st;
    }
    return DG_OK;
}

/* ---- 4.4 / 4.5 / 4.7 choice --------------------------------------------------- */

int dgc_placer_placeable(const dgc_placer *p, int c, const dgc_graph *g,
                         const dgc_node *n)
{
    if (p->cls_gpu[c])
        return dgc_op_gpu_placeable(g, n, p->cls_ks[c], p->cls_fp64[c]);
    return dgc_op_has_kernel(g, n, p->cls_ks[c], p->cls_fp64[c]) ||
           dgc_op_host_mem(g, n);
}

/* First device in preference order matching s with kernels k; -1 none.
 * *first_match: first matching device regardless of kernels, -1 none. */
static int choose(const dgc_placer *p, const dgc_devspec *s, uint8_t k,
                  int *first_match)
{
    *first_match = -1;
    for (int j = 0; j < p->devs->n; j++) {
        int d = p->order[j];
        if (!dgc_devspec_matches(s, &p->devs->devs[d]))
            continue;
        if (*first_match < 0)
            *first_match = d;
        if (dgc_placer_kernel_ok(p, k, d))
            return d;
    }
    return -1;
}

static dg_status placement_error(dgc_placer *p, int32_t root,
                                 const dgc_devspec *s, int first_match,
                                 dg_error *err)
{
    const dgc_graph *g = p->g;
    char spec[192];
    dgc_devspec_str(s, spec, sizeof spec);
    if (first_match >= 0) {
        /* devices exist but lack kernels: name the first member without
         * one for the matching type */
        const dg_device_info *fd = &p->devs->devs[first_match];
        int32_t who = -1, first = -1;
        for (int32_t i = 0; i < p->n && who < 0; i++) {
            if (dgc_placer_find(p, i) != root)
                continue;
            if (first < 0)
                first = i;
            if (!dgc_placer_placeable(p, p->dev_class[first_match], g, &g->nodes[i]))
                who = i;
        }
        if (who < 0)
            who = first;
        return dg_err(err, DG_E_PLACEMENT,
                      "Cannot assign a device for operation '%s': Could not "
                      "satisfy explicit device specification '%s' because no "
                      "supported kernel for %s devices is available.",
                      g->nodes[who].name, spec,
                      fd->type == DG_DEV_GPU ? "GPU" : "CPU");
    }
    /* nothing matches: name the first member whose own request fails */
    int32_t who = -1, first = -1, first_req = -1;
    for (int32_t i = 0; i < p->n && who < 0; i++) {
        if (dgc_placer_find(p, i) != root)
            continue;
        if (first < 0)
            first = i;
        if (p->req[i] < 0)
            continue;
        if (first_req < 0)
            first_req = i;
        int any = 0;
        for (int d = 0; d < p->devs->n && !any; d++)
            any = dgc_devspec_matches(&p->specs[p->req[i]], &p->devs->devs[d]);
        if (!any)
            who = i;
    }
    if (who < 0)
        who = first_req >= 0 ? first_req : first;
    dg_sbuf b;
    dg_sbuf_init(&b);
    for (int d = 0; d < p->devs->n; d++)
        dg_sbuf_addf(&b, "%s%s", d ? ", " : "", p->devs->devs[d].name);
    dg_status st = dg_err(err, DG_E_PLACEMENT,
                          "Cannot assign a device for operation '%s': "
                          "Operation was explicitly assigned to %s but "
                          "available devices are [ %s ]. Make sure the device "
                          "specification refers to a valid device.",
                          g->nodes[who].name, spec, b.s ? b.s : "");
    dg_sbuf_free(&b);
    return st;
}

static dg_status choose_groups(dgc_placer *p, dg_error *err)
{
    const dgc_graph *g = p->g;
    for (int32_t i = 0; i < p->n; i++)
        p->chosen[i] = -1;
    for (int32_t i = 0; i < p->n; i++) {
        int32_t r = dgc_placer_find(p, i);
        if (r != i)
            p->kern[r] &= p->kern[i];
    }
    for (int32_t i = 0; i < p->n; i++) {
        int32_t r = dgc_placer_find(p, i);
        if (p->chosen[r] != -1)
            continue;
        if (p->size[r] == 1 && p->greq[r] < 0 &&
            dgc_op_has(g->nodes[r].op, DGC_OP_SOURCE) &&
            g->nodes[r].n_inputs == 0) {
            p->chosen[r] = -2; /* consumer rule, decided below */
            continue;
        }
        dgc_devspec req;
        dgc_placer_request(p, r, &req);
        const dgc_devspec *s = &req;
        int fm;
        int d = choose(p, s, p->kern[r], &fm);
        if (d < 0 && p->allow_soft) {
            /* drop type and index only: never another job or task */
            dgc_devspec soft = *s;
            soft.type = DGC_TYPE_ANY;
            soft.id = -1;
            int fm2;
            d = choose(p, &soft, p->kern[r], &fm2);
            if (d >= 0)
                p->src[r] |= DGC_SRC_SOFT;
        }
        if (d < 0)
            return placement_error(p, r, s, fm, err);
        p->chosen[r] = d;
    }
    return DG_OK;
}

/* Lone sources without a request follow their data consumers (4.4). */
static dg_status consumer_rule(dgc_placer *p, dg_error *err)
{
    const dgc_graph *g = p->g;
    int32_t *cons = dg_malloc(sizeof *cons * (size_t)(p->n ? p->n : 1));
    if (!cons)
        return dg_err_nomem(err, "placement");
    for (int32_t i = 0; i < p->n; i++)
        cons[i] = -2;
    for (int32_t c = 0; c < p->n; c++) {
        const dgc_node *n = &g->nodes[c];
        for (int k = 0; k < n->n_inputs; k++) {
            int32_t s = n->inputs[k].node;
            if (s < 0 || s >= p->n || p->chosen[s] != -2 || p->parent[s] != s)
                continue;
            int32_t d = p->chosen[dgc_placer_find(p, c)];
            if (cons[s] == -2)
                cons[s] = d;
            else if (cons[s] != d)
                cons[s] = -1;
        }
    }
    dgc_devspec empty; /* the chief's task in a cluster */
    dgc_placer_request(p, -1, &empty);
    dg_status st = DG_OK;
    for (int32_t i = 0; i < p->n; i++) {
        if (p->parent[i] != i || p->chosen[i] != -2)
            continue;
        if (cons[i] >= 0 && dgc_placer_kernel_ok(p, p->kern[i], cons[i])) {
            p->chosen[i] = cons[i];
            p->reason[i] = DG_REASON_CONSUMER;
            continue;
        }
        int fm;
        int d = choose(p, &empty, p->kern[i], &fm);
        if (d < 0) {
            st = placement_error(p, i, &empty, fm, err);
            break;
        }
        p->chosen[i] = d;
        p->reason[i] = DG_REASON_DEFAULT;
    }
    dg_free(cons);
    return st;
}

static void assign_reasons(dgc_placer *p)
{
    for (int32_t i = 0; i < p->n; i++) {
        int32_t r = dgc_placer_find(p, i);
        if (p->size[r] == 1 && p->greq[r] < 0 &&
            (p->reason[i] == DG_REASON_CONSUMER ||
             p->reason[i] == DG_REASON_DEFAULT) &&
            dgc_op_has(p->g->nodes[i].op, DGC_OP_SOURCE) &&
            p->g->nodes[i].n_inputs == 0)
            continue; /* set by consumer_rule */
        uint8_t s = p->src[i];
        dg_reason why;
        if (p->src[r] & DGC_SRC_SOFT)
            why = DG_REASON_SOFT;
        else if (s & DGC_SRC_DROPPED)
            why = DG_REASON_COLOCATION;
        else if (s & DGC_SRC_OWN)
            why = DG_REASON_EXPLICIT;
        else if (s & DGC_SRC_RULE)
            why = DG_REASON_RULE;
        else if ((s & DGC_SRC_SCOPE) && p->req[i] >= 0)
            why = DG_REASON_EXPLICIT;
        else if (p->size[r] > 1 && p->greq[r] >= 0)
            why = DG_REASON_COLOCATION;
        else
            why = DG_REASON_DEFAULT;
        p->reason[i] = (uint8_t)why;
    }
}

dg_status dgc_placer_run(dgc_placer *p, const dgc_graph *g,
                         const dg_device_list *devs, const char *scope,
                         const dgc_rule *rules, int n_rules, int allow_soft,
                         int colocate, dg_error *err)
{
    memset(p, 0, sizeof *p);
    p->g = g;
    p->devs = devs;
    p->allow_soft = allow_soft > 0;
    p->colocate = colocate;
    p->scope_text = scope;
    p->n = g->n_nodes;
    if (!devs || devs->n < 1)
        return dg_err(err, DG_E_PLACEMENT, "no devices to place on");
    p->has_chief = dgc_devices_chief(devs, &p->chief);
    if (dgc_devspec_parse(scope, &p->scope))
        return dg_err(err, DG_E_USAGE,
                      "--device: Malformed device specification '%s'", scope);
    dg_status st;
    if ((st = setup_rules(p, rules, n_rules, err)) ||
        (st = setup_order(p, err)))
        return st;
    size_t n = (size_t)(p->n ? p->n : 1);
    p->parent = dg_malloc(sizeof *p->parent * n);
    p->size = dg_malloc(sizeof *p->size * n);
    p->req = dg_malloc(sizeof *p->req * n);
    p->greq = dg_malloc(sizeof *p->greq * n);
    p->rule_of = dg_malloc(sizeof *p->rule_of * n);
    p->chosen = dg_malloc(sizeof *p->chosen * n);
    p->reqstr = dg_calloc(n, sizeof *p->reqstr);
    p->src = dg_calloc(n, 1);
    p->kern = dg_calloc(n, 1);
    p->reason = dg_calloc(n, 1);
    if (!p->parent || !p->size || !p->req || !p->greq || !p->rule_of ||
        !p->chosen || !p->reqstr || !p->src || !p->kern || !p->reason ||
        dg_strmap_init(&p->spec_ids, 16))
        return dg_err_nomem(err, "placement");
    /* kernel classes: one per distinct (kernel set, fp64, GPU) of the
     * devices */
    p->dev_class = dg_calloc((size_t)p->devs->n + 1, 1);
    if (!p->dev_class)
        return dg_err_nomem(err, "placement");
    for (int d = 0; d < p->devs->n; d++) {
        const dg_device_info *di = &p->devs->devs[d];
        int gpu = di->type == DG_DEV_GPU;
        int c = 0;
        while (c < p->n_cls && (p->cls_ks[c] != di->kernels ||
                                p->cls_fp64[c] != (di->fp64 != 0) ||
                                p->cls_gpu[c] != gpu))
            c++;
        if (c == p->n_cls) {
            if (c == DGC_MAX_KCLASS)
                return dg_err(err, DG_E_USAGE, "placement: more than %d "
                              "kinds of device", DGC_MAX_KCLASS);
            p->cls_ks[c] = di->kernels;
            p->cls_fp64[c] = di->fp64 != 0;
            p->cls_gpu[c] = gpu;
            p->n_cls++;
        }
        p->dev_class[d] = (uint8_t)c;
    }
    /* kernel availability depends on (op, kernel dtype, TF's dtype) only
     * (and a folded value fits anywhere): cache it */
    enum { NDT = DG_DTYPE_COUNT + 1 };
    int16_t(*kcache)[NDT][NDT] = dg_malloc(sizeof *kcache * DGC_N_OPS);
    if (!kcache)
        return dg_err_nomem(err, "placement");
    memset(kcache, 0xff, sizeof *kcache * DGC_N_OPS);
    for (int32_t i = 0; i < p->n; i++) {
        const dgc_node *nd = &g->nodes[i];
        int dt = dgc_op_kernel_dtype(g, nd) + 1;
        int tdt = dgc_op_tf_dtype(g, nd) + 1;
        int cacheable = nd->op >= 0 && nd->op < DGC_N_OPS && !nd->folded_op &&
                        dt >= 0 && dt < NDT && tdt >= 0 && tdt < NDT;
        int16_t k = cacheable ? kcache[nd->op][dt][tdt] : -1;
        if (k < 0) {
            k = 0;
            for (int c = 0; c < p->n_cls; c++)
                if (dgc_placer_placeable(p, c, g, nd))
                    k |= (int16_t)(1 << c);
            if (cacheable)
                kcache[nd->op][dt][tdt] = k;
        }
        p->kern[i] = (uint8_t)k;
        p->reason[i] = DG_REASON_EXPLICIT; /* overwritten */
    }
    dg_free(kcache);
    if ((st = compute_requests(p, err)) || (st = build_groups(p, err)) ||
        (st = choose_groups(p, err)) || (st = consumer_rule(p, err)))
        return st;
    assign_reasons(p);
    return DG_OK;
}

/* The CPU of device di's task (job and task), -1 if the list has none. */
static int task_cpu(const dgc_placer *p, const dg_device_info *di)
{
    for (int c = 0; c < p->devs->n; c++) {
        const dg_device_info *ci = &p->devs->devs[c];
        if (ci->type == DG_DEV_CPU && ci->task == di->task &&
            strcmp(ci->job, di->job) == 0)
            return c;
    }
    return -1;
}

/* Whether node n, on a device with kernel set ks that lacks its kernel,
 * runs in host memory: TF's host-memory ops (dgc_op_host_mem: int32 math,
 * Shape, Size, Rank), a value folded at compile time, and what the
 * device's backend runs in host memory (ks->host: the OpenCL backend's
 * integer and bool kernels, and the float ops it has no kernel for yet).
 * Anything else stays on its device and fails at run time naming op and
 * dtype (SPEC 4.7). */
static int runs_in_host_memory(const dgc_graph *g, const dgc_node *n,
                               const dg_kernel_set *ks)
{
    if (dgc_op_host_mem(g, n) || n->folded_op)
        return 1;
    if (!ks || n->op < 0 || n->op >= DGC_N_OPS)
        return 0;
    int dt = dgc_op_kernel_dtype(g, n);
    return dt < 0 ? ks->host[n->op] != 0 : (ks->host[n->op] >> dt) & 1;
}

/* A node on a device without dgrun's kernel for it that runs in host
 * memory (runs_in_host_memory) runs on the CPU of the device's task, as TF
 * keeps int32 tensors in host memory; it stays placed (and shown) on its
 * device, unless the contract says it has no GPU kernel (dgc_op_no_gpu:
 * an int32 Const on a GPU request is shown on the CPU too). */
static void host_memory(const dgc_placer *p, dgc_graph *g, int32_t i)
{
    dgc_node *n = &g->nodes[i];
    int d = n->device_id;
    if (d < 0)
        return;
    const dg_device_info *di = &p->devs->devs[d];
    int no_gpu = di->type == DG_DEV_GPU && dgc_op_no_gpu(g, n);
    if (!no_gpu && (dgc_op_has_kernel(g, n, di->kernels, di->fp64) ||
                    !runs_in_host_memory(g, n, di->kernels)))
        return;
    int c = task_cpu(p, di);
    if (c >= 0 && dgc_op_has_kernel(g, n, p->devs->devs[c].kernels,
                                    p->devs->devs[c].fp64)) {
        n->device_id = c;
        if (no_gpu) /* the contract's: shown on the CPU too */
            n->placed_id = c;
    }
}

/* A state op (an Apply* update, Assign...) on a GPU whose backend has no
 * kernel for it cannot run in host memory alone: it updates its Variable
 * in place.  Its whole colocation group (the Variable, its slots, the
 * other state ops) then runs in host memory on the CPU of the GPU's task,
 * still placed and shown on the GPU, as one unit (SPEC 4.7: TF has the
 * kernel; dgrun's OpenCL backend does not yet). */
static dg_status state_groups_in_host_memory(dgc_placer *p, dgc_graph *g,
                                             dg_error *err)
{
    uint8_t *host = dg_calloc((size_t)p->n + 1, 1);
    if (!host)
        return dg_err_nomem(err, "placement");
    int any = 0;
    for (int32_t i = 0; i < p->n; i++) {
        const dgc_node *n = &g->nodes[i];
        int d = n->device_id;
        if (d < 0 || d != n->placed_id || !dgc_op_has(n->op, DGC_OP_STATE))
            continue;
        const dg_device_info *di = &p->devs->devs[d];
        if (di->type == DG_DEV_GPU &&
            !dgc_op_has_kernel(g, n, di->kernels, di->fp64)) {
            host[dgc_placer_find(p, i)] = 1;
            any = 1;
        }
    }
    for (int32_t i = 0; any && i < p->n; i++) {
        dgc_node *n = &g->nodes[i];
        if (!host[dgc_placer_find(p, i)] || n->device_id < 0)
            continue;
        int c = task_cpu(p, &p->devs->devs[n->device_id]);
        if (c >= 0)
            n->device_id = c;
    }
    dg_free(host);
    return DG_OK;
}

dg_status dgc_placer_commit(dgc_placer *p, dgc_graph *g, dg_error *err)
{
    for (int32_t i = 0; i < p->n; i++) {
        dgc_node *n = &g->nodes[i];
        char *rq = p->reqstr[i] ? p->reqstr[i] : dg_strdup("");
        if (!rq)
            return dg_err_nomem(err, "placement");
        p->reqstr[i] = NULL;
        dg_free(n->requested);
        n->requested = rq;
        n->device_id = p->chosen[dgc_placer_find(p, i)];
        n->placed_id = n->device_id;
        n->reason = p->reason[i];
        host_memory(p, g, i);
    }
    return state_groups_in_host_memory(p, g, err);
}

dg_status dgc_pass_place(dgc_graph *g, const dg_device_list *devs,
                         const char *device_scope, const dgc_rule *rules,
                         int n_rules, int allow_soft, int colocate,
                         dg_error *err)
{
    dgc_placer p;
    dg_status st = dgc_placer_run(&p, g, devs, device_scope, rules, n_rules,
                                  allow_soft, colocate, err);
    if (!st)
        st = dgc_placer_commit(&p, g, err);
    dgc_placer_free(&p);
    return st;
}
