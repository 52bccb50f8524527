/*
 * registry.c -- the backends of this build and what their kernel
 * registries give the rest of dgrun: kernel sets for device lists
 * (placement, `dgrun ops`), kernel lookup, device discovery and assumed
 * devices (--assume-gpus), and the backends' process-wide teardown
 * (dg_shutdown).
 */
#include "registry.h"
#include "devices.h"
#include "grad.h" /* dgc_grad_has_rule: dgrun ops --json */

#include <pthread.h>
#include <string.h>

extern const dgr_backend dgr_backend_cpu;
#ifdef DG_HAVE_OPENCL
extern const dgr_backend dgr_backend_opencl;
#endif

static const dgr_backend *const backends[] = {
    &dgr_backend_cpu,
#ifdef DG_HAVE_OPENCL
    &dgr_backend_opencl,
#endif
};
#define N_BACKENDS ((int)(sizeof backends / sizeof backends[0]))

static dg_kernel_set sets[N_BACKENDS];
static pthread_once_t sets_once = PTHREAD_ONCE_INIT;

static void build_sets(void)
{
    for (int b = 0; b < N_BACKENDS; b++) {
        sets[b].backend = backends[b]->name;
        for (int op = 0; op < DGC_N_OPS; op++) {
            uint32_t m = backends[b]->kernels[op].dtypes;
            uint32_t h = backends[b]->host_dtypes |
                         (backends[b]->host_ops ? backends[b]->host_ops[op]
                                                : 0);
            sets[b].host[op] = h & dgc_ops[op].dtypes & ~m;
            if (!m)
                continue;
            sets[b].dtypes[op] = DGC_KS_ROW | (m & dgc_ops[op].dtypes);
        }
    }
}

int dgr_backend_count(void)
{
    return N_BACKENDS;
}

const dgr_backend *dgr_backend_at(int i)
{
    return i >= 0 && i < N_BACKENDS ? backends[i] : NULL;
}

const dg_kernel_set *dgr_backend_kernels(const dgr_backend *b)
{
    pthread_once(&sets_once, build_sets);
    for (int i = 0; i < N_BACKENDS; i++)
        if (backends[i] == b)
            return &sets[i];
    return NULL;
}

const dgr_backend *dgr_backend_of(const dg_device_info *info)
{
    pthread_once(&sets_once, build_sets);
    for (int i = 0; i < N_BACKENDS; i++)
        if (info->kernels == &sets[i])
            return backends[i];
    for (int i = 0; i < N_BACKENDS; i++)
        if (backends[i]->type == info->type)
            return backends[i];
    return NULL;
}

dgr_kernel_fn dgr_kernel_find(const dgr_backend *b, int op)
{
    if (!b || op < 0 || op >= DGC_N_OPS)
        return NULL;
    return b->kernels[op].fn;
}

static const dgr_backend *first_of(dg_devtype t)
{
    for (int i = 0; i < N_BACKENDS; i++)
        if (backends[i]->type == t)
            return backends[i];
    return NULL;
}

dg_status dg_devices_discover(const dg_options *o, dg_device_list **out,
                              dg_error *err)
{
    *out = NULL;
    if (o->virtual_gpus < 1)
        return dg_err(err, DG_E_USAGE,
                      "invalid --virtual-gpus %d (must be >= 1)",
                      o->virtual_gpus);
    dg_device_list *l = dgc_devices_new();
    if (!l)
        return dg_err_nomem(err, "device list");
    for (int i = 0; i < N_BACKENDS; i++) {
        int before = l->n;
        dg_status st = backends[i]->discover(o, l, err);
        if (st != DG_OK) {
            dg_devices_free(l);
            return st;
        }
        for (int d = before; d < l->n; d++)
            l->devs[d].kernels = dgr_backend_kernels(backends[i]);
    }
    *out = l;
    return DG_OK;
}

dg_status dg_devices_assume(int n_gpus, dg_device_list **out, dg_error *err)
{
    *out = NULL;
    const dgr_backend *gpu = first_of(DG_DEV_GPU);
    if (n_gpus > 0 && !gpu)
        return dg_err(err, DG_E_USAGE,
                      "--assume-gpus: this dgrun was built without a GPU "
                      "backend (-Dopencl=disabled), so it knows no GPU "
                      "kernels to place against");
    return dgc_devices_assume(n_gpus, dgr_backend_kernels(&dgr_backend_cpu),
                              gpu ? dgr_backend_kernels(gpu) : NULL, out,
                              err);
}

void dg_shutdown(void)
{
    for (int i = N_BACKENDS - 1; i >= 0; i--)
        if (backends[i]->shutdown)
            backends[i]->shutdown();
}

char *dg_ops_render_as(const char *format)
{
    const dgr_backend *gpu = first_of(DG_DEV_GPU);
    const dg_kernel_set *c = dgr_backend_kernels(&dgr_backend_cpu);
    const dg_kernel_set *g = gpu ? dgr_backend_kernels(gpu) : NULL;
    if (strcmp(format, "text") == 0)
        return dgc_ops_render(c, g);
    if (strcmp(format, "json") == 0) {
        uint8_t rule[DGC_N_OPS];
        for (int op = 0; op < DGC_N_OPS; op++)
            rule[op] = (uint8_t)dgc_grad_has_rule(op);
        return dgc_ops_render_json(c, g, rule);
    }
    if (strcmp(format, "markdown") == 0)
        return dgc_ops_render_markdown(c, g);
    return NULL;
}

char *dg_ops_render(void)
{
    const dgr_backend *gpu = first_of(DG_DEV_GPU);
    return dgc_ops_render(dgr_backend_kernels(&dgr_backend_cpu),
                          gpu ? dgr_backend_kernels(gpu) : NULL);
}
