/*
 * mpi_analyze.h - tally-mpi's distributed analysis (see mpi_analyze.c): the
 * hook that replaces tl_cli_analyze in every process of an MPI job.
 */
#ifndef TALLY_MPI_ANALYZE_H
#define TALLY_MPI_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* Install the hook for this process (rank of size, MPI already initialized).
 * On processes other than 0, stderr is held back until the analysis starts,
 * so argument errors are printed once. */
void tl_mpi_setup(int rank, int size);
/* Give a worker its stderr back (done by the analysis; also at exit). */
void tl_mpi_restore_stderr(void);
/* The shares: owner[i] is the process that reads item i of n, largest items
 * first to the process with the fewest bytes so far. Deterministic. */
void tl_mpi_shares(const int64_t *bytes, size_t n, int nprocs, int *owner);

#endif
