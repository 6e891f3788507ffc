/*
 * mpi_waits.c - an MPI program timed with libtally, for "who waits for whom"
 * on libtally's own output (tests/cluster/mpi_waits.sh).
 *
 *   mpirun -n 4 mpi_waits STEPS SLOW_RANK SLOW_MS
 *
 * Each step, inside tally_iteration "train_step": a "data_loading" section
 * that sleeps SLOW_MS on SLOW_RANK only (-1: none), a "compute" section
 * (COMPUTE_MS asleep on every rank: the test machine may have fewer cores
 * than ranks, and four spinning ranks on two cores would make a balanced
 * run's arrivals the scheduler's), then an "MPI_Allreduce" section around a
 * real MPI_Allreduce of a 1 MiB buffer, the way an HPC user times a
 * collective. libtally writes each rank's report and trace into
 * TALLY_OUTPUT_DIR.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tally/tally.h"

#define COMPUTE_MS 4
#define ELEMS (1 << 18) /* floats: 1 MiB */

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: mpi_waits STEPS SLOW_RANK SLOW_MS\n");
        return 2;
    }
    int steps = atoi(argv[1]), slow = atoi(argv[2]), slow_ms = atoi(argv[3]);
    MPI_Init(&argc, &argv);
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    tally_set_rank(rank, world);
    float *buf = malloc(ELEMS * sizeof *buf), *out = malloc(ELEMS * sizeof *out);
    if (buf == NULL || out == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < ELEMS; i++)
        buf[i] = (float)(rank + i % 7);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < steps; s++) {
        tally_iteration_begin("train_step");
        tally_begin("data_loading");
        if (rank == slow && slow_ms > 0)
            sleep_ms(slow_ms);
        tally_end();
        tally_begin("compute");
        sleep_ms(COMPUTE_MS);
        tally_end();
        tally_begin("MPI_Allreduce");
        MPI_Allreduce(buf, out, ELEMS, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        tally_end();
        tally_iteration_end("train_step");
        tally_step();
    }
    free(buf);
    free(out);
    tally_shutdown();
    MPI_Finalize();
    return 0;
}
