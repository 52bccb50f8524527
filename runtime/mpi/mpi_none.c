/*
 * mpi_none.c -- the cluster functions of a dgrun built without MPI
 * (-Dmpi=disabled, or no MPI found): a cluster graph still compiles
 * (`place`, `check`), but running one says how it would start and that
 * this build cannot (SPEC 8.1).
 */
#include "mpi_layer.h"

#include <stdlib.h>

dg_status dg_cluster_join(const dg_cluster *c, int *rank, dg_error *err)
{
    if (rank)
        *rank = -1;
    char cs[256];
    dg_cluster_str(c, cs, sizeof cs);
    int n = dg_cluster_task_count(c);
    if (!dg_cluster_launched())
        return dg_err(err, DG_E_USAGE, "this graph declares a cluster of %d "
                      "task%s (%s): start it with mpirun -np %d", n,
                      n == 1 ? "" : "s", cs, n);
    return dg_err(err, DG_E_USAGE, "this dgrun was built without MPI "
                  "(-Dmpi=disabled), so it cannot run the cluster %s; "
                  "'dgrun place' and 'dgrun check' compile it", cs);
}

int dg_cluster_rank(void) { return -1; }
const char *dg_cluster_task_name(void) { return ""; }
int dg_cluster_failed_together(void) { return 0; }
void dg_cluster_abort(int code) { (void)code; }
void dg_cluster_leave(void) {}
dgr_transport *dgr_mpi_transport(void) { return NULL; }

dg_status dg_cluster_exchange_devices(const dg_cluster *c,
                                      dg_device_list **devs, dg_error *err)
{
    (void)devs;
    return dg_cluster_join(c, NULL, err);
}

dg_status dg_cluster_check_program(const dg_program *p, const dg_options *o,
                                   dg_error *err)
{
    (void)p;
    (void)o;
    (void)err;
    return DG_OK;
}

dg_status dgr_mpi_collective_start(int replica, int replicas, int blocking,
                                   dg_error *err)
{
    (void)replica;
    (void)blocking;
    return dg_err(err, DG_E_USAGE, "this dgrun was built without MPI, so it "
                  "cannot run %d replicas", replicas);
}

dg_status dgr_mpi_collective(void *ctx, const dgr_collective *c,
                             dg_error *err)
{
    (void)ctx;
    return dg_err(err, DG_E_RUNTIME, "collective '%s': this dgrun was built "
                  "without MPI", c->key);
}

void dgr_mpi_collective_stop(void) {}
