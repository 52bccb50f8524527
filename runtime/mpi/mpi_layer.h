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
