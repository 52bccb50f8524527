/*
 * mpi_layer.h -- runtime/mpi: the only code that knows MPI.  It joins the
 * MPI job a cluster runs as (SPEC 8.1: dg_cluster_join and friends in
 * dgrun.h), exchanges device lists, compares programs, ends the job on
 * errors, and gives the executor its transport (exec.h: dgr_transport).
 * Layered above exec, below session.  Without MPI in the build the same
 * public functions come from mpi_none.c and refuse to run a cluster.
 */
#ifndef DGR_MPI_LAYER_H
#define DGR_MPI_LAYER_H

#include "exec.h"

/* The transport of the joined job, NULL when this process joined none. */
dgr_transport *dgr_mpi_transport(void);

/* The collective runtime of a replicated graph (mpi_collective.c, SPEC
 * 8.4).  Start it on every rank of the job, in the same order (MPI
 * collective): `replica` is this rank's replica index, -1 for a rank that
 * runs none; `replicas` is W; `blocking`: the program sends no messages
 * between tasks during a run, so the collectives may use blocking MPI
 * calls.  Then dgr_mpi_collective is the kernel environment's `collective`
 * callback (kernel.h).  Stop it (every rank) before the job ends.  Without
 * MPI, start fails. */
dg_status dgr_mpi_collective_start(int replica, int replicas, int blocking,
                                   dg_error *err);
dg_status dgr_mpi_collective(void *ctx, const dgr_collective *c,
                             dg_error *err);
void dgr_mpi_collective_stop(void);

#ifdef DGR_HAVE_MPI
#include <mpi.h>
/* Start the progress thread and the job's communicators (once). */
dgr_transport *dgr_mpi_transport_start(int rank, int size, dg_error *err);
/* Stop the progress thread and free the communicators. */
void dgr_mpi_transport_stop(void);
/* The communicator of blocking calls between runs. */
MPI_Comm dgr_mpi_ctl(void);
/* Take the MPI lock (1), waiting at most wait_ms (0 when it stays held). */
int dgr_mpi_lock(int wait_ms);
void dgr_mpi_unlock(void);
#endif

#endif
