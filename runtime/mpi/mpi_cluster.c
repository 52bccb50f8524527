/*
 * mpi_cluster.c -- joining the MPI job a cluster runs as (SPEC 8.1-8.3):
 * MPI_Init_thread (only for a graph with a cluster: a plain graph never
 * gets here), the process count check, the device list exchange, the
 * program hash comparison, and ending the job: MPI_Finalize when all went
 * well or every rank knows the failure, MPI_Abort with the exit code when
 * one rank failed alone.
 */
#include "mpi_layer.h"
#include "registry.h"
#include "devices.h"
#include "program.h"
#include "dg_alloc.h"
#include "dg_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank = -1, g_size, g_init, g_together, g_world = -1;
static char g_task[96];

int dg_cluster_rank(void) { return g_rank; }
const char *dg_cluster_task_name(void) { return g_task; }
int dg_cluster_failed_together(void)
{
    return g_together ? (g_world > 0 ? 2 : 1) : 0;
}

static dg_status start_hint(const dg_cluster *c, dg_error *err)
{
    char cs[256];
    dg_cluster_str(c, cs, sizeof cs);
    int n = dg_cluster_task_count(c);
    return dg_err(err, DG_E_USAGE, "this graph declares a cluster of %d "
                  "task%s (%s): start it with mpirun -np %d", n,
                  n == 1 ? "" : "s", cs, n);
}

dg_status dg_cluster_join(const dg_cluster *c, int *rank, dg_error *err)
{
    if (rank)
        *rank = g_rank;
    g_together = 0;
    if (g_rank >= 0)
        return DG_OK;
    if (!dg_cluster_launched())
        return start_hint(c, err);
    int provided = 0;
    if (!g_init) {
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) !=
            MPI_SUCCESS)
            return dg_err(err, DG_E_RUNTIME, "MPI_Init_thread failed");
        g_init = 1;
        if (provided < MPI_THREAD_SERIALIZED) {
            g_together = 1;
            return dg_err(err, DG_E_RUNTIME, "this MPI library gives no "
                          "MPI_THREAD_SERIALIZED support");
        }
    }
    int r = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_world = r;
    int n = dg_cluster_task_count(c);
    if (size != n) {
        char cs[256];
        dg_cluster_str(c, cs, sizeof cs);
        g_together = 1;
        g_rank = -1;
        return dg_err(err, DG_E_USAGE, "started as %d MPI processes but the "
                      "cluster %s has %d task%s: start it with mpirun -np %d",
                      size, cs, n, n == 1 ? "" : "s", n);
    }
    int task = 0;
    int job = dg_cluster_task_of(c, r, &task);
    snprintf(g_task, sizeof g_task, "/job:%s/task:%d",
             dg_cluster_job_name(c, job), task);
    if (!dgr_mpi_transport_start(r, size, err))
        return err ? err->code : DG_E_RUNTIME;
    g_rank = r;
    g_size = size;
    if (rank)
        *rank = r;
    return DG_OK;
}

dg_status dg_cluster_exchange_devices(const dg_cluster *c,
                                      dg_device_list **devs, dg_error *err)
{
    if (g_rank < 0)
        return start_hint(c, err);
    const dg_device_list *mine = *devs;
    int n = mine->n * (int)sizeof(dg_device_info);
    int *cnt = dg_calloc((size_t)g_size, sizeof *cnt);
    int *off = dg_calloc((size_t)g_size, sizeof *off);
    dg_device_list **per = dg_calloc((size_t)g_size, sizeof *per);
    char *all = NULL;
    dg_status st = DG_OK;
    if (!cnt || !off || !per) {
        st = dg_err_nomem(err, "cluster devices");
        goto done;
    }
    dgr_mpi_lock(1000000);
    int rc = MPI_Allgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, dgr_mpi_ctl());
    long total = 0;
    for (int r = 0; r < g_size; r++) {
        off[r] = (int)total;
        total += cnt[r];
    }
    all = dg_malloc((size_t)total + 1);
    if (rc == MPI_SUCCESS && all)
        rc = MPI_Allgatherv(mine->devs, n, MPI_BYTE, all, cnt, off, MPI_BYTE,
                            dgr_mpi_ctl());
    dgr_mpi_unlock();
    if (!all) {
        st = dg_err_nomem(err, "cluster devices");
        goto done;
    }
    if (rc != MPI_SUCCESS) {
        st = dg_err(err, DG_E_RUNTIME, "exchanging device lists failed");
        goto done;
    }
    for (int r = 0; r < g_size && st == DG_OK; r++) {
        if (!(per[r] = dgc_devices_new())) {
            st = dg_err_nomem(err, "cluster devices");
            break;
        }
        int k = cnt[r] / (int)sizeof(dg_device_info);
        for (int i = 0; i < k; i++) {
            dg_device_info d;
            memcpy(&d, all + off[r] + (size_t)i * sizeof d, sizeof d);
            /* pointers mean nothing here: this build's kernel set */
            d.kernels = NULL;
            const dgr_backend *be = dgr_backend_of(&d);
            if (!be) {
                st = dg_err(err, DG_E_USAGE, "task %d has %s, which this "
                            "dgrun has no backend for", r, d.name);
                break;
            }
            d.kernels = dgr_backend_kernels(be);
            if (dgc_devices_append(per[r], &d)) {
                st = dg_err_nomem(err, "cluster devices");
                break;
            }
        }
    }
    dg_device_list *out = NULL;
    if (st == DG_OK &&
        (st = dg_devices_for_cluster(c, (const dg_device_list *const *)per,
                                     &out, err)) == DG_OK) {
        dg_devices_free(*devs);
        *devs = out;
    }
done:
    for (int r = 0; per && r < g_size; r++)
        if (per[r])
            dg_devices_free(per[r]);
    dg_free(per);
    dg_free(cnt);
    dg_free(off);
    dg_free(all);
    return st;
}

dg_status dg_cluster_check_program(const dg_program *p, const dg_options *o,
                                   dg_error *err)
{
    g_together = 0;
    if (g_rank < 0)
        return DG_OK;
    char *json = dg_program_render(p, "json");
    if (!json)
        return dg_err_nomem(err, "program hash");
    uint64_t h = dg_fnv1a(DG_FNV1A_INIT, json, strlen(json));
    free(json);
    int64_t knobs[4] = {(int64_t)o->seed, o->steps, o->repeat,
                        o->train_mode};
    h = dg_fnv1a(h, knobs, sizeof knobs);
    for (int i = 0; i < o->n_fetch; i++)
        h = dg_fnv1a(h, o->fetch[i], strlen(o->fetch[i]) + 1);
    for (int i = 0; i < o->n_feeds; i++)
        h = dg_fnv1a(h, o->feeds[i].name, strlen(o->feeds[i].name) + 1);
    uint64_t *all = dg_calloc((size_t)g_size, sizeof *all);
    if (!all)
        return dg_err_nomem(err, "program hash");
    dgr_mpi_lock(1000000);
    int rc = MPI_Allgather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T,
                           dgr_mpi_ctl());
    dgr_mpi_unlock();
    dg_status st = DG_OK;
    if (rc != MPI_SUCCESS) {
        st = dg_err(err, DG_E_RUNTIME, "comparing programs failed");
    } else {
        for (int r = 1; r < g_size; r++)
            if (all[r] != all[0]) {
                g_together = 1;
                st = dg_err(err, DG_E_USAGE, "rank %d compiled a different "
                            "program than rank 0 (every process must read "
                            "the same graph with the same options)", r);
                break;
            }
    }
    dg_free(all);
    return st;
}

void dg_cluster_abort(int code)
{
    if (!g_init)
        return;
    fflush(stdout);
    fflush(stderr);
    /* the progress thread may be inside a call: give it a moment */
    dgr_mpi_lock(200);
    MPI_Abort(MPI_COMM_WORLD, code);
}

void dg_cluster_leave(void)
{
    if (!g_init)
        return;
    dgr_mpi_transport_stop();
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin)
        MPI_Finalize();
    g_init = 0;
    g_rank = -1;
}
