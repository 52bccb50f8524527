/*
 * cmd_devices.c -- `dgrun devices`: one line per device this process would
 * use (SPEC 3), or a JSON array with --json.
 *
 * GPU lines follow SPEC exactly:
 *   <full name> -> device: <physical>, name: <OpenCL name>,
 *   platform: <platform>, memory: <MiB> MiB, opencl: <version>
 * CPU:0's line (dgrun's choice):
 *   /job:localhost/replica:0/task:0/device:CPU:0 -> device: 0, name: host,
 *   platform: host, memory: <MiB> MiB, cores: <online cores>
 * A GPU's memory is what this process would use: its share after
 * --virtual-gpus, times --gpu-memory-fraction.  With --cluster, every
 * task's devices, each task having this machine's (what `place` compiles
 * against outside MPI).
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

static uint64_t host_memory(const dg_device_info *d)
{
    if (d->mem_bytes)
        return d->mem_bytes;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    return (pages > 0 && psz > 0) ? (uint64_t)pages * (uint64_t)psz : 0;
}

static long cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* A GPU's memory as this process would use it: after the virtual split
 * and the --gpu-memory-fraction cap (as TF logs "with N MB memory"). */
static uint64_t gpu_memory(const dg_device_info *d, double frac)
{
    if (!(frac > 0 && frac <= 1))
        frac = 1.0;
    return (uint64_t)((double)d->mem_bytes * frac);
}

static void text_line(dg_sbuf *b, const dg_device_info *d, double frac)
{
    const uint64_t mib = 1024 * 1024;
    if (d->type == DG_DEV_CPU) {
        dg_sbuf_addf(b, "%s -> device: %d, name: %s, platform: host, memory: %llu MiB, cores: %ld\n",
                     d->name, d->index, d->cl_name[0] ? d->cl_name : "host",
                     (unsigned long long)(host_memory(d) / mib), cores());
        return;
    }
    dg_sbuf_addf(b, "%s -> device: %d, name: %s, platform: %s, memory: %llu MiB, opencl: %s\n",
                 d->name, d->physical, d->cl_name, d->platform,
                 (unsigned long long)(gpu_memory(d, frac) / mib), d->cl_version);
}

static void json_obj(dg_sbuf *b, const dg_device_info *d, double frac)
{
    const uint64_t mib = 1024 * 1024;
    int cpu = d->type == DG_DEV_CPU;
    uint64_t mem = cpu ? host_memory(d) : gpu_memory(d, frac);
    dg_sbuf_add(b, "{\"device\": ");
    dg_sbuf_add_json_str(b, d->name);
    dg_sbuf_addf(b, ", \"type\": \"%s\", \"index\": %d, \"physical\": %d, \"name\": ",
                 cpu ? "CPU" : "GPU", d->index, cpu ? 0 : d->physical);
    dg_sbuf_add_json_str(b, cpu && !d->cl_name[0] ? "host" : d->cl_name);
    dg_sbuf_add(b, ", \"platform\": ");
    dg_sbuf_add_json_str(b, cpu ? "host" : d->platform);
    /* "memory" is the text line's "memory: <MiB> MiB" */
    dg_sbuf_addf(b, ", \"memory\": %llu, \"memory_mib\": %llu, \"memory_bytes\": %llu",
                 (unsigned long long)(mem / mib), (unsigned long long)(mem / mib),
                 (unsigned long long)mem);
    if (cpu) {
        dg_sbuf_addf(b, ", \"cores\": %ld}", cores());
    } else {
        dg_sbuf_add(b, ", \"opencl\": ");
        dg_sbuf_add_json_str(b, d->cl_version);
        dg_sbuf_addf(b, ", \"fp64\": %s}", d->fp64 ? "true" : "false");
    }
}

int cmd_devices(const cli_args *a)
{
    dg_error err;
    memset(&err, 0, sizeof err);
    dg_device_list *l = NULL;
    dg_sbuf b;
    dg_sbuf_init(&b);
    int code = 0;
    if (dg_devices_discover(&a->opt, &l, &err))
        goto fail;
    /* --cluster under an MPI launcher: every task's own devices,
     * exchanged (SPEC 8.2); outside MPI every task as if it ran on this
     * machine */
    if (a->opt.cluster && dg_cluster_launched()) {
        if (dg_cluster_join(a->opt.cluster, NULL, &err) ||
            dg_cluster_exchange_devices(a->opt.cluster, &l, &err))
            goto fail;
    } else if (a->opt.cluster &&
               cli_cluster_devices(a->opt.cluster, &l, &err)) {
        goto fail;
    }
    int n = dg_devices_count(l);
    if (a->json)
        dg_sbuf_add(&b, "[");
    for (int i = 0; i < n; i++) {
        const dg_device_info *d = dg_devices_get(l, i);
        if (a->json) {
            dg_sbuf_add(&b, i ? ",\n " : "");
            json_obj(&b, d, a->opt.gpu_memory_fraction);
        } else {
            text_line(&b, d, a->opt.gpu_memory_fraction);
        }
    }
    if (a->json)
        dg_sbuf_add(&b, "]\n");
    if (cli_sbuf_print(&b, "listing devices", &err))
        goto fail;
    goto done;
fail:
    code = cli_fail(a, &err, DG_E_RUNTIME);
done:
    dg_sbuf_free(&b);
    if (l)
        dg_devices_free(l);
    return code;
}
