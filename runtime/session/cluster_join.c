/*
 * cluster_join.c -- dg_cluster_join: the one check `run`, `train` and
 * `profile` make before running a cluster graph (SPEC 8.1): started under
 * MPI, with as many processes as the cluster has tasks?
 *
 * The MPI runtime does not exist yet, so this never succeeds: outside MPI
 * (and under a launcher with the wrong process count, as the launcher's
 * environment tells) it says how to start the cluster; with the right
 * count it says that running clusters is not implemented.  The MPI runtime
 * replaces this file: MPI_Init_thread, compare MPI_Comm_size with the task
 * count, return MPI_Comm_rank.  No MPI header is needed here.
 */
#include "dgrun.h"
#include "dg_error.h"

#include <stdlib.h>

/* Process count from the launcher's environment (Open MPI's mpirun, or a
 * PMI launcher: MPICH's hydra, Slurm's srun --mpi=pmi2); 0 if none. */
static long launcher_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long n = v && *v ? strtol(v, &end, 10) : 0;
        if (n > 0 && !*end)
            return n;
    }
    return 0;
}

dg_status dg_cluster_join(const dg_cluster *c, int *rank, dg_error *err)
{
    if (rank)
        *rank = -1;
    char cs[256];
    dg_cluster_str(c, cs, sizeof cs);
    int n = dg_cluster_task_count(c);
    long size = launcher_size();
    if (size == 0)
        return dg_err(err, DG_E_USAGE,
                      "this graph declares a cluster of %d task%s (%s): "
                      "start it with mpirun -np %d", n, n == 1 ? "" : "s",
                      cs, n);
    if (size != n)
        return dg_err(err, DG_E_USAGE,
                      "started as %ld MPI processes but the cluster %s has "
                      "%d task%s: start it with mpirun -np %d", size, cs, n,
                      n == 1 ? "" : "s", n);
    return dg_err(err, DG_E_USAGE,
                  "this dgrun cannot run a cluster yet (%s): running under "
                  "MPI is not implemented; 'dgrun place' and 'dgrun check' "
                  "compile it", cs);
}
