/*
 * dg_launch.c -- whether this process was started by a parallel launcher
 * (mpirun, srun, a PMI launcher).  One answer for the MPI layer (join a
 * cluster or say how to start one) and for the CLI (a launcher owns the
 * signals, SPEC 8.3).
 */
#include "dgrun.h"

#include <stdlib.h>

int dg_cluster_launched(void)
{
    /* Open MPI's mpirun, PMI-1/2 launchers (MPICH's hydra, srun
     * --mpi=pmi2) and PMIx ones (srun --mpi=pmix, prterun) */
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                       "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return 1;
    }
    /* srun of several tasks without a PMI plug-in; SLURM_PROCID alone is
     * also set for one srun'd process, which is an ordinary run */
    const char *n = getenv("SLURM_NTASKS");
    return n && atoi(n) > 1;
}
