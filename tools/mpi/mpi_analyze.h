/*
 * mpi_analyze.h - tally-mpi's distributed analysis (see mpi_analyze.c): the
 * hook that replaces tl_pipeline_run in every process of an MPI job.
 */
#ifndef TALLY_MPI_ANALYZE_H
#define TALLY_MPI_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* Seconds a process waits for another that sends nothing before it ends the
 * job (tally-mpi --timeout, TALLY_MPI_TIMEOUT). A process that stops
 * answering (stopped, swapping, on a hung filesystem) would otherwise hang
 * the job forever. Long enough for a share of big traces to be read. */
#define TL_MPI_TIMEOUT_DEFAULT 1800
extern double tl_mpi_timeout_s;

/* Wait for req to complete without spinning: MPI_Test, then sleeps from
 * 20 us doubling to 1 ms, so a waiting process leaves its core to the
 * readers (OpenMPI's blocking calls busy-poll). After tl_mpi_timeout_s
 * seconds without completion (twice that on a process waiting for process
 * 0, which names the process that stopped first) it prints "tally-mpi: process R: process P
 * sent nothing for S s (WHAT; --timeout) ..." (peer -1: "a process") and
 * ends the job with MPI_Abort (exit 3). */
#ifdef MPI_VERSION /* mpi.h included before this header (shares.c's test builds without MPI) */
void tl_mpi_wait(MPI_Request *req, int peer, const char *what);
#endif

/* The engine the commands run on in this process (rank of size, MPI already
 * initialized; cli.h's tl_engine): the analysis spread over the processes,
 * outputs written by process 0 only. On processes other than 0, stderr is
 * held back until the analysis starts, so argument errors are printed once. */
const tl_engine *tl_mpi_setup(int rank, int size);
/* Collective, once, in every process (tally_mpi.c, before any may return early): the
 * processes of this job on this node; process 0 also learns the CPUs they are bound to, to
 * take once they are done (mpi_analyze.c, take_node_cores). */
int tl_mpi_node_processes(void);
/* Give a worker its stderr back (done by the analysis; also at exit). */
void tl_mpi_restore_stderr(void);
/* The shares: owner[i] is the process that reads item i of n, largest items
 * first to the process with the fewest bytes so far. Deterministic. */
void tl_mpi_shares(const int64_t *bytes, size_t n, int nprocs, int *owner);

#endif
