/*
 * cl_device.c -- OpenCL device discovery (the backend's discover, SPEC 3),
 * the process-wide registry of OpenCL contexts, opening and closing a
 * logical GPU (DGRUN_CL_QUEUES compute queues plus a copy queue, clock
 * offset, allocator), the
 * device-to-host clock mapping of profiling times, and OpenCL error naming.
 */
#include "cl_internal.h"
#include "dg_alloc.h"
#include "devices.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>

/* ---- error names --------------------------------------------------------- */

const char *dgr_cl_errname(cl_int e)
{
    switch (e) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE)
    E(CL_COMPILER_NOT_AVAILABLE) E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP)
    E(CL_IMAGE_FORMAT_MISMATCH) E(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE)
    E(CL_LINK_PROGRAM_FAILURE) E(CL_DEVICE_PARTITION_FAILED)
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE)
    E(CL_INVALID_CONTEXT) E(CL_INVALID_QUEUE_PROPERTIES)
    E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
    E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    E(CL_INVALID_IMAGE_SIZE) E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY)
    E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
    E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL)
    E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
    E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION)
    E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
    E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
    E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT)
    E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_MIP_LEVEL)
    E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
    E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS)
    E(CL_INVALID_LINKER_OPTIONS) E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_UNKNOWN_ERROR";
    }
}

dg_status dgr_cl_fail(dg_error *err, const char *node, const char *call,
                      cl_int e)
{
    if (node)
        return dg_err(err, DG_E_RUNTIME, "node '%s': %s failed: %s (%d)",
                      node, call, dgr_cl_errname(e), (int)e);
    return dg_err(err, DG_E_RUNTIME, "%s failed: %s (%d)", call,
                  dgr_cl_errname(e), (int)e);
}

/* ---- discovery ----------------------------------------------------------- */

typedef struct phys_dev {
    cl_platform_id platform;
    cl_device_id dev;
} phys_dev;

/* The physical OpenCL devices (all: CPU devices too), in platform then
 * device order.  *n = 0 with no platform at all. */
static dg_status enumerate_physical(int all, phys_dev **out, int *n,
                                    dg_error *err)
{
    *out = NULL;
    *n = 0;
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e != CL_SUCCESS || np == 0)
        return DG_OK; /* no OpenCL at all: CPU:0 only */
    cl_platform_id *plats = dg_calloc(np, sizeof *plats);
    if (!plats)
        return dg_err_nomem(err, "OpenCL platforms");
    if (clGetPlatformIDs(np, plats, NULL) != CL_SUCCESS)
        np = 0;
    phys_dev *list = NULL;
    int cnt = 0, cap = 0;
    /* DGRUN_OPENCL_PLATFORM: only platforms whose name or vendor contains
     * it (any case): one driver of several installed (a GPU's next to
     * PoCL: "nvidia", "amd", "intel", "pocl") */
    const char *only = getenv("DGRUN_OPENCL_PLATFORM");
    for (cl_uint p = 0; p < np; p++) {
        if (only && *only) {
            char pn[256] = "", pv[256] = "";
            clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pn - 1, pn,
                              NULL);
            clGetPlatformInfo(plats[p], CL_PLATFORM_VENDOR, sizeof pv - 1, pv,
                              NULL);
            if (!strcasestr(pn, only) && !strcasestr(pv, only))
                continue;
        }
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) !=
                CL_SUCCESS || nd == 0)
            continue;
        cl_device_id *ids = dg_calloc(nd, sizeof *ids);
        if (!ids) {
            dg_free(plats);
            dg_free(list);
            return dg_err_nomem(err, "OpenCL devices");
        }
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, ids, NULL);
        for (cl_uint d = 0; d < nd; d++) {
            cl_device_type t = 0;
            clGetDeviceInfo(ids[d], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            int ok = (t & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) ||
                     (all && (t & CL_DEVICE_TYPE_CPU));
            if (!ok)
                continue;
            if (cnt == cap) {
                cap = cap ? cap * 2 : 4;
                phys_dev *nl = dg_realloc(list, sizeof *nl * (size_t)cap);
                if (!nl) {
                    dg_free(ids);
                    dg_free(plats);
                    dg_free(list);
                    return dg_err_nomem(err, "OpenCL devices");
                }
                list = nl;
            }
            list[cnt].platform = plats[p];
            list[cnt].dev = ids[d];
            cnt++;
        }
        dg_free(ids);
    }
    dg_free(plats);
    *out = list;
    *n = cnt;
    return DG_OK;
}

/* Enumeration runs once per process for each selection (gpu, all): the
 * platform and device ids stay valid for the process. */
static pthread_mutex_t phys_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int done, n;
    phys_dev *list;
} phys_cache[2];

/* The physical OpenCL devices `which` ("gpu", "all", "none") selects, in
 * platform then device order (a copy in *out).  *n = 0 with no platform at
 * all. */
static dg_status list_physical(const char *which, phys_dev **out, int *n,
                               dg_error *err)
{
    *out = NULL;
    *n = 0;
    if (!which)
        which = "gpu";
    int all;
    if (strcmp(which, "gpu") == 0)
        all = 0;
    else if (strcmp(which, "all") == 0)
        all = 1;
    else if (strcmp(which, "none") == 0)
        return DG_OK;
    else
        return dg_err(err, DG_E_USAGE,
                      "invalid --opencl-devices '%s' (expected gpu, all or "
                      "none)", which);
    dg_status st = DG_OK;
    pthread_mutex_lock(&phys_mu);
    if (!phys_cache[all].done) {
        st = enumerate_physical(all, &phys_cache[all].list,
                                &phys_cache[all].n, err);
        phys_cache[all].done = st == DG_OK;
    }
    int cnt = phys_cache[all].done ? phys_cache[all].n : 0;
    if (!st && cnt > 0) {
        *out = dg_malloc(sizeof **out * (size_t)cnt);
        if (*out) {
            memcpy(*out, phys_cache[all].list, sizeof **out * (size_t)cnt);
            *n = cnt;
        } else {
            st = dg_err_nomem(err, "OpenCL devices");
        }
    }
    pthread_mutex_unlock(&phys_mu);
    return st;
}

/* Parse --visible-devices against n physical devices into idx (cap n). */
static dg_status parse_visible(const char *s, int n, int *idx, int *n_idx,
                               dg_error *err)
{
    *n_idx = 0;
    if (!s) {
        for (int i = 0; i < n; i++)
            idx[i] = i;
        *n_idx = n;
        return DG_OK;
    }
    const char *p = s;
    while (*p == ' ')
        p++;
    if (*p == '\0')
        return DG_OK; /* "" hides all */
    while (*p) {
        while (*p == ' ')
            p++;
        char *end = NULL;
        if (*p < '0' || *p > '9')
            return dg_err(err, DG_E_USAGE, "invalid visible devices list '%s'",
                          s);
        long v = strtol(p, &end, 10);
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',' && p[1] != '\0')
            p++;
        else if (*p != '\0')
            return dg_err(err, DG_E_USAGE, "invalid visible devices list '%s'",
                          s);
        if (v < 0 || v >= n)
            return dg_err(err, DG_E_USAGE,
                          "invalid visible devices list '%s': device %ld does "
                          "not exist (%d OpenCL device%s)",
                          s, v, n, n == 1 ? "" : "s");
        for (int j = 0; j < *n_idx; j++)
            if (idx[j] == (int)v)
                return dg_err(err, DG_E_USAGE,
                              "invalid visible devices list '%s': device %ld "
                              "listed twice", s, v);
        if (*n_idx >= n)
            return dg_err(err, DG_E_USAGE, "invalid visible devices list '%s'",
                          s);
        idx[(*n_idx)++] = (int)v;
    }
    return DG_OK;
}

/* Copy src into buf of n bytes, truncating (no -Wformat-truncation). */
static void copy_str(char *buf, size_t n, const char *src)
{
    if (!n)
        return;
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(buf, src, l);
    buf[l] = '\0';
}

static void dev_str(cl_device_id d, cl_device_info what, char *buf, size_t n)
{
    char tmp[1024];
    if (clGetDeviceInfo(d, what, sizeof tmp, tmp, NULL) != CL_SUCCESS)
        tmp[0] = '\0';
    tmp[sizeof tmp - 1] = '\0';
    /* trim trailing blanks, truncate to the caller's buffer */
    size_t l = strlen(tmp);
    while (l && (tmp[l - 1] == ' ' || tmp[l - 1] == '\n'))
        tmp[--l] = '\0';
    /* PoCL appends a long "HSTR: <triple>" to its version; keep the
     * readable part, and cut at a word boundary when too long */
    char *h = strstr(tmp, " HSTR:");
    if (h)
        *h = '\0';
    l = strlen(tmp);
    if (l >= n) {
        tmp[n - 1] = '\0';
        char *sp = strrchr(tmp, ' ');
        if (sp && sp > tmp)
            *sp = '\0';
    }
    copy_str(buf, n, tmp);
}

static int dev_fp64(cl_device_id d)
{
    cl_device_fp_config c = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof c, &c, NULL) !=
        CL_SUCCESS)
        return 0;
    return c != 0;
}

/* Whether float division and sqrt can be built correctly rounded (OpenCL
 * allows 2.5 ulp for float division otherwise; a CPU and TF's CUDA
 * kernels divide correctly rounded). */
static int dev_cr_div(cl_device_id d)
{
    cl_device_fp_config c = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_SINGLE_FP_CONFIG, sizeof c, &c, NULL) !=
        CL_SUCCESS)
        return 0;
    return (c & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
}

dg_status dgr_cl_discover(const dg_options *o, dg_device_list *l,
                          dg_error *err)
{
    int vgpus = o->virtual_gpus;
    if (vgpus < 1)
        return dg_err(err, DG_E_USAGE, "invalid --virtual-gpus %d (must be >= 1)",
                      vgpus);
    phys_dev *phys = NULL;
    int n_phys = 0;
    dg_status st = list_physical(o->opencl_devices, &phys, &n_phys, err);
    if (st != DG_OK)
        return st;
    int *vis = dg_calloc((size_t)n_phys + 1, sizeof *vis);
    if (!vis) {
        dg_free(phys);
        return dg_err_nomem(err, "device list");
    }
    int n_vis = 0;
    st = parse_visible(o->visible_devices, n_phys, vis, &n_vis, err);
    if (st != DG_OK)
        goto fail;
    int gpu = 0; /* GPUs other backends listed before */
    for (int i = 0; i < l->n; i++)
        gpu += l->devs[i].type == DG_DEV_GPU;
    for (int v = 0; v < n_vis; v++) {
        phys_dev *p = &phys[vis[v]];
        dg_device_info g;
        memset(&g, 0, sizeof g);
        g.type = DG_DEV_GPU;
        g.fp64 = dev_fp64(p->dev);
        dev_str(p->dev, CL_DEVICE_NAME, g.cl_name, sizeof g.cl_name);
        dev_str(p->dev, CL_DEVICE_VERSION, g.cl_version, sizeof g.cl_version);
        char pname[1024] = "";
        if (clGetPlatformInfo(p->platform, CL_PLATFORM_NAME, sizeof pname,
                              pname, NULL) != CL_SUCCESS)
            pname[0] = '\0';
        pname[sizeof pname - 1] = '\0';
        copy_str(g.platform, sizeof g.platform, pname);
        cl_ulong mem = 0;
        clGetDeviceInfo(p->dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem,
                        NULL);
        g.mem_bytes = (uint64_t)mem / (uint64_t)vgpus;
        g.physical = vis[v];
        for (int s = 0; s < vgpus; s++) {
            g.index = gpu++;
            dgc_device_fullname(DG_DEV_GPU, g.index, g.name, sizeof g.name);
            if (dgc_devices_append(l, &g)) {
                st = dg_err_nomem(err, "device list");
                goto fail;
            }
        }
    }
    dg_free(vis);
    dg_free(phys);
    return DG_OK;
fail:
    dg_free(vis);
    dg_free(phys);
    return st;
}

/* ---- context registry ---------------------------------------------------- */

typedef struct reg_entry {
    cl_device_id parent;
    int n;               /* virtual split */
    dgr_cl_ctx **ctx;    /* n slots (may repeat one context) */
} reg_entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_entry *reg;
static int n_reg;

static dg_status ctx_new(cl_platform_id plat, cl_device_id dev,
                         dgr_cl_ctx **out, dg_error *err)
{
    dgr_cl_ctx *c = dg_calloc(1, sizeof *c);
    if (!c)
        return dg_err_nomem(err, "OpenCL context");
    cl_int e;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     (cl_context_properties)plat, 0};
    c->ctx = clCreateContext(props, 1, &dev, NULL, NULL, &e);
    if (!c->ctx) {
        dg_free(c);
        return dgr_cl_fail(err, NULL, "clCreateContext", e);
    }
    c->platform = plat;
    c->dev = dev;
    c->fp64 = dev_fp64(dev);
    c->cr_div = dev_cr_div(dev);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof c->max_wg,
                    &c->max_wg, NULL);
    if (c->max_wg < 1)
        c->max_wg = 1;
    cl_ulong lm = 0;
    clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lm, &lm, NULL);
    c->local_mem = (size_t)lm;
    clGetDeviceInfo(dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof c->global_mem,
                    &c->global_mem, NULL);
    cl_uint bits = 0;
    clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits,
                    NULL);
    c->base_align = bits >= 8 ? bits / 8 : 128;
    dev_str(dev, CL_DEVICE_NAME, c->dev_name, sizeof c->dev_name);
    dev_str(dev, CL_DRIVER_VERSION, c->driver, sizeof c->driver);
    dev_str(dev, CL_DEVICE_VERSION, c->dev_version, sizeof c->dev_version);
    size_t items[3] = {0, 0, 0};
    if (clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items,
                        items, NULL) == CL_SUCCESS)
        memcpy(c->max_item, items, sizeof items);
    char pn[128] = "", pv[128] = "";
    clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pn - 1, pn, NULL);
    clGetPlatformInfo(plat, CL_PLATFORM_VERSION, sizeof pv - 1, pv, NULL);
    copy_str(c->plat_name, sizeof c->plat_name, pn);
    copy_str(c->plat_version, sizeof c->plat_version, pv);
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->map_lock, NULL);
    *out = c;
    return DG_OK;
}

/* Release a context and everything built on it: kernels, programs, the
 * context (a sub-device it was made for stays: split_device). */
static void ctx_free(dgr_cl_ctx *c)
{
    for (int i = 0; i < c->n_kernels; i++) {
        clReleaseKernel(c->kernels[i].k);
        dg_free((char *)c->kernels[i].name);
    }
    dg_free(c->kernels);
    for (int s = 0; s < DGR_CL_MAX_SOURCES; s++)
        for (int d = 0; d < 2; d++)
            if (c->progs[s][d])
                clReleaseProgram(c->progs[s][d]);
    clReleaseContext(c->ctx);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->map_lock);
    dg_free(c);
}

void dgr_cl_shutdown(void)
{
    /* clBLAST's cached programs first: they hold our contexts, and
     * clBLAST would otherwise release them from a C++ static destructor
     * after the OpenCL implementation has torn itself down */
    dgr_cl_blas_clear();
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < n_reg; i++)
        for (int s = 0; s < reg[i].n; s++) {
            dgr_cl_ctx *c = reg[i].ctx[s];
            if (!c)
                continue;
            /* a context may fill several slots and entries: free it once */
            for (int j = i; j < n_reg; j++)
                for (int t = j == i ? s : 0; t < reg[j].n; t++)
                    if (reg[j].ctx[t] == c)
                        reg[j].ctx[t] = NULL;
            ctx_free(c);
        }
    for (int i = 0; i < n_reg; i++)
        dg_free(reg[i].ctx);
    dg_free(reg);
    reg = NULL;
    n_reg = 0;
    pthread_mutex_unlock(&reg_lock);
}

/* Sub-devices of --virtual-gpus: made once per process for each physical
 * device and split, and never released, not even by dgr_cl_shutdown (like
 * the physical device ids, they stay valid for the process; a later open
 * after a shutdown reuses them).  Releasing them is not safe: PoCL (3.1)
 * command queues do not retain their device and a context made on a
 * sub-device holds the parent device instead, so our reference is the
 * sub-device's only one -- while PoCL's driver threads go on using the
 * freed device after a command's completion was signalled
 * (pocl_update_event_finished wakes clFinish and clWaitForEvents first,
 * then unmaps, runs callbacks and releases the event, reading
 * event->queue->device; the last release of the queue, held by that
 * event, calls through queue->device->ops).  dgr_cl_shutdown released the
 * sub-device right after the last clFinish: on a loaded machine a driver
 * thread still finishing the run's last command then read freed memory,
 * the intermittent segfaults (exit -11) of e2e_diff under virt2q2 and
 * pocl2virt2 (tests/cli/clshim.c's holdq mode checks the rule).  Under
 * reg_lock. */
typedef struct kept_split {
    cl_device_id parent;
    int n;
    cl_device_id *subs;      /* n sub-devices */
} kept_split;
static kept_split *kept;
static int n_kept;

/* The n sub-devices of physical device dev split n ways
 * (CL_DEVICE_PARTITION_EQUALLY): the kept ones, or new ones kept from now
 * on; NULL when the device cannot split evenly (or no memory).  Under
 * reg_lock. */
static const cl_device_id *split_device(cl_device_id dev, int n)
{
    for (int i = 0; i < n_kept; i++)
        if (kept[i].parent == dev && kept[i].n == n)
            return kept[i].subs;
    cl_uint cu = 0;
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    if (cu < (cl_uint)n || cu % (cl_uint)n != 0)
        return NULL;
    cl_device_partition_property props[] = {
        CL_DEVICE_PARTITION_EQUALLY,
        (cl_device_partition_property)(cu / (cl_uint)n), 0};
    cl_device_id *subs = dg_calloc((size_t)n, sizeof *subs);
    kept_split *nk = dg_realloc(kept, sizeof *nk * (size_t)(n_kept + 1));
    if (nk)
        kept = nk;
    cl_uint got = 0;
    if (!subs || !nk ||
        clCreateSubDevices(dev, props, (cl_uint)n, subs, &got) != CL_SUCCESS ||
        got != (cl_uint)n) {
        /* nothing used them yet: these may go */
        for (cl_uint s = 0; subs && s < got && s < (cl_uint)n; s++)
            clReleaseDevice(subs[s]);
        dg_free(subs);
        return NULL;
    }
    kept[n_kept++] = (kept_split){dev, n, subs};
    return subs;
}

/* The context for slot `slot` of physical device p split n ways: sub-devices
 * (split_device) where the device can split evenly, else n queues sharing
 * one context. */
static dg_status registry_get(const phys_dev *p, int n, int slot,
                              dgr_cl_ctx **out, dg_error *err)
{
    pthread_mutex_lock(&reg_lock);
    dg_status st = DG_OK;
    for (int i = 0; i < n_reg; i++)
        if (reg[i].parent == p->dev && reg[i].n == n) {
            *out = reg[i].ctx[slot];
            pthread_mutex_unlock(&reg_lock);
            return DG_OK;
        }
    reg_entry ent = {p->dev, n, dg_calloc((size_t)n, sizeof(dgr_cl_ctx *))};
    reg_entry *nr = dg_realloc(reg, sizeof *nr * (size_t)(n_reg + 1));
    if (!ent.ctx || !nr) {
        dg_free(ent.ctx);
        if (nr)
            reg = nr;
        pthread_mutex_unlock(&reg_lock);
        return dg_err_nomem(err, "OpenCL context registry");
    }
    reg = nr;
    const cl_device_id *subs = n > 1 ? split_device(p->dev, n) : NULL;
    if (subs) {
        for (int s = 0; s < n && st == DG_OK; s++)
            st = ctx_new(p->platform, subs[s], &ent.ctx[s], err);
    } else {
        /* one context (reused from the unsplit entry when there is one) */
        dgr_cl_ctx *c = NULL;
        for (int i = 0; i < n_reg; i++)
            if (reg[i].parent == p->dev && reg[i].n == 1)
                c = reg[i].ctx[0];
        if (!c)
            st = ctx_new(p->platform, p->dev, &c, err);
        for (int s = 0; s < n; s++)
            ent.ctx[s] = c;
    }
    if (st != DG_OK) {
        for (int s = 0; s < n; s++) {
            int shared = 0; /* the unsplit entry's context stays */
            for (int i = 0; i < n_reg; i++)
                for (int j = 0; j < reg[i].n; j++)
                    shared |= reg[i].ctx[j] == ent.ctx[s];
            for (int t = 0; t < s; t++)
                shared |= ent.ctx[t] == ent.ctx[s];
            if (ent.ctx[s] && !shared)
                ctx_free(ent.ctx[s]);
        }
        dg_free(ent.ctx);
        pthread_mutex_unlock(&reg_lock);
        return st;
    }
    reg[n_reg++] = ent;
    *out = ent.ctx[slot];
    pthread_mutex_unlock(&reg_lock);
    return DG_OK;
}

static dgr_cl_dev *cdev(const dgr_device *d) { return (dgr_cl_dev *)d->impl; }

/* ---- open / close -------------------------------------------------------- */

int dgr_cl_queue_count(void)
{
    const char *v = getenv("DGRUN_CL_QUEUES");
    if (v && *v) {
        char *end = NULL;
        long n = strtol(v, &end, 10);
        if (end && *end == '\0' && n >= 1 && n <= DGR_CL_MAXQ)
            return (int)n;
    }
    return 2;
}

static void release_queues(dgr_cl_dev *cd)
{
    if (cd->copyq && cd->copyq != cd->qs[0])
        clReleaseCommandQueue(cd->copyq);
    for (int i = 0; i < cd->nq; i++)
        clReleaseCommandQueue(cd->qs[i]);
    cd->copyq = cd->q = NULL;
    cd->nq = 0;
}

dg_status dgr_cl_device_open(dgr_device *d, const dg_options *o, dg_error *err)
{
    phys_dev *phys = NULL;
    int n_phys = 0;
    const char *which = o->opencl_devices ? o->opencl_devices : "gpu";
    if (strcmp(which, "none") == 0)
        which = "all"; /* a list made elsewhere may still name a device */
    dg_status st = list_physical(which, &phys, &n_phys, err);
    if (st != DG_OK)
        return st;
    if (d->info.physical < 0 || d->info.physical >= n_phys) {
        dg_free(phys);
        return dg_err(err, DG_E_RUNTIME,
                      "%s: OpenCL device %d does not exist (%d found)",
                      d->info.name, d->info.physical, n_phys);
    }
    int nv = o->virtual_gpus > 1 ? o->virtual_gpus : 1;
    int slot = d->info.index % nv;
    dgr_cl_ctx *c = NULL;
    st = registry_get(&phys[d->info.physical], nv, slot, &c, err);
    dg_free(phys);
    if (st != DG_OK)
        return st;
    dgr_cl_dev *cd = dg_calloc(1, sizeof *cd);
    if (!cd)
        return dg_err_nomem(err, "OpenCL device");
    cd->c = c;
    pthread_mutex_lock(&c->lock);
    c->on_build = o->on_build;
    c->on_build_user = o->on_build_user;
    pthread_mutex_unlock(&c->lock);
    cl_int e;
    /* profiling timestamps cost PoCL four clock reads per command: only
     * when the session records a trace (events are read only then) */
    cd->profiling = o->trace_path != NULL;
    cl_command_queue_properties qp =
        cd->profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
    int nq = dgr_cl_queue_count();
    e = CL_SUCCESS;
    for (int i = 0; i < nq && e == CL_SUCCESS; i++) {
        cd->qs[i] = clCreateCommandQueue(c->ctx, c->dev, qp, &e);
        if (cd->qs[i])
            cd->nq = i + 1;
    }
    if (e == CL_SUCCESS && nq > 1)
        cd->copyq = clCreateCommandQueue(c->ctx, c->dev, qp, &e);
    if (e != CL_SUCCESS || cd->nq < 1) {
        release_queues(cd);
        dg_free(cd);
        return dgr_cl_fail(err, NULL, "clCreateCommandQueue", e);
    }
    cd->q = cd->qs[0];
    if (!cd->copyq)
        cd->copyq = cd->q;
    pthread_mutex_init(&cd->clock_lock, NULL);
    cl_bool uni = CL_FALSE;
    if (clGetDeviceInfo(c->dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof uni,
                        &uni, NULL) == CL_SUCCESS)
        cd->unified = uni == CL_TRUE;
    if (cd->profiling) {
        pthread_mutex_lock(&cd->clock_lock);
        dgr_cl_clock_sync(cd);
        pthread_mutex_unlock(&cd->clock_lock);
    }
    double f = o->gpu_memory_fraction;
    if (!(f > 0 && f <= 1))
        f = 1.0;
    uint64_t mem = d->info.mem_bytes ? d->info.mem_bytes
                                     : (uint64_t)c->global_mem / (uint64_t)nv;
    d->mem_cap = (size_t)((double)mem * f);
    d->impl = cd;
    d->be = &dgr_backend_opencl;
    st = dgr_cl_alloc_init(cd, o->allow_growth ? 0 : d->mem_cap, err);
    if (st != DG_OK) {
        release_queues(cd);
        pthread_mutex_destroy(&cd->clock_lock);
        dg_free(cd);
        d->impl = NULL;
        return st;
    }
    return DG_OK;
}

void dgr_cl_device_close(dgr_device *d)
{
    dgr_cl_dev *cd = cdev(d);
    if (!cd)
        return;
    dgr_cl_finish_all(cd);
    dgr_cl_alloc_destroy(cd);
    release_queues(cd);
    pthread_mutex_destroy(&cd->clock_lock);
    dg_free(cd);
    d->impl = NULL;
}

/* ---- device clock -> host clock ---------------------------------------- */

#define SYNC_TRIES 7
#define RESYNC_NS 20000000ull /* re-measure when the last sync is older */

int dgr_cl_clock_sync(dgr_cl_dev *cd)
{
    int64_t best_w = INT64_MAX, best_off = 0;
    uint64_t best_dev = 0;
    for (int i = 0; i < SYNC_TRIES; i++) {
        cl_event ev = NULL;
        uint64_t h0 = dg_now_ns();
        cl_int e = clEnqueueMarkerWithWaitList(cd->q, 0, NULL, &ev);
        uint64_t h1 = dg_now_ns();
        if (e != CL_SUCCESS || !ev)
            break;
        cl_ulong qd = 0;
        if (clWaitForEvents(1, &ev) == CL_SUCCESS &&
            clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED,
                                    sizeof qd, &qd, NULL) == CL_SUCCESS &&
            qd) {
            int64_t w = (int64_t)(h1 - h0);
            if (w < best_w) {
                best_w = w;
                best_off = (int64_t)(h0 + (uint64_t)w / 2) - (int64_t)qd;
                best_dev = (uint64_t)qd;
            }
        }
        clReleaseEvent(ev);
    }
    if (best_w == INT64_MAX)
        return -1;
    if (cd->clock_synced) {
        cd->prev_offset = cd->clock_offset;
        cd->prev_dev = cd->clock_dev;
    }
    cd->clock_offset = best_off;
    cd->clock_dev = best_dev;
    cd->clock_err = best_w / 2 + 1;
    cd->clock_synced = dg_now_ns();
    return 0;
}

/* Offset for device time t: interpolated between the last two syncs when
 * t lies between them (the two clocks drift apart: PoCL's profiling clock
 * is CLOCK_MONOTONIC_RAW, dg_now_ns is CLOCK_MONOTONIC, which NTP slews),
 * else the latest. */
static int64_t offset_at(const dgr_cl_dev *cd, uint64_t t)
{
    if (cd->prev_dev && cd->clock_dev > cd->prev_dev && t >= cd->prev_dev &&
        t <= cd->clock_dev) {
        double f = (double)(t - cd->prev_dev) /
                   (double)(cd->clock_dev - cd->prev_dev);
        return cd->prev_offset +
               (int64_t)(f * (double)(cd->clock_offset - cd->prev_offset));
    }
    return cd->clock_offset;
}

int dgr_cl_event_times(dgr_device *d, void *cl_event_, uint64_t *start_ns,
                       uint64_t *end_ns)
{
    cl_event ev = (cl_event)cl_event_;
    dgr_cl_dev *cd = cdev(d);
    if (!ev || !cd || !cd->profiling)
        return 0;
    cl_ulong s = 0, e = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s,
                                NULL) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e,
                                NULL) != CL_SUCCESS)
        return 0;
    pthread_mutex_lock(&cd->clock_lock);
    /* re-sync after the event when the last sync is old, so the event
     * lies between two syncs */
    if (!cd->clock_synced || dg_now_ns() - cd->clock_synced > RESYNC_NS ||
        (uint64_t)e > cd->clock_dev + RESYNC_NS)
        dgr_cl_clock_sync(cd);
    int64_t os = offset_at(cd, (uint64_t)s), oe = offset_at(cd, (uint64_t)e);
    pthread_mutex_unlock(&cd->clock_lock);
    *start_ns = (uint64_t)((int64_t)s + os);
    *end_ns = (uint64_t)((int64_t)e + oe);
    if (*end_ns < *start_ns)
        *end_ns = *start_ns;
    return 1;
}

void dgr_cl_event_release(void *cl_event_)
{
    if (cl_event_)
        clReleaseEvent((cl_event)cl_event_);
}
