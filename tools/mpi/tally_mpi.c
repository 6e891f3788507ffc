/*
 * tally_mpi.c - `tally-mpi`: tally report|summary|aggregate over MPI
 * processes. `mpirun -n 64 tally-mpi report runs/ -o report.html` or
 * `srun tally-mpi ...`: every process reads a share of the inputs, the
 * partial aggregates are merged up a tree, process 0 writes the outputs,
 * which are the bytes `tally` would write (docs/cluster.md).
 *
 * The subcommands are tally's own (tools/cmd_*.c); only the analysis step is
 * replaced (mpi_analyze.c). Every process exits with process 0's code.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "mpi_analyze.h"

#ifndef TALLY_VERSION
#define TALLY_VERSION "unknown"
#endif

/* Threads per process when --jobs is not given: the CPUs this process may
 * use (its affinity mask and cgroup quota, tl_cli_cpus: a Slurm allocation's
 * --cpus-per-task) shared by the processes of this job on its node that
 * share them (mpirun -n 8 on 8 cores: one thread each). */
static int default_jobs(void)
{
    int local = tl_mpi_node_processes();
    long cores = tl_cli_cpus();
    /* processes bound to a CPU each (srun --cpu-bind) see one CPU already */
    long j = cores >= local ? cores / (local > 0 ? local : 1) : cores;
    return j < 1 ? 1 : j > 64 ? 64 : (int)j;
}

static int has_jobs(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            break;
        if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--jobs") || !strncmp(argv[i], "--jobs=", 7))
            return 1;
    }
    return 0;
}

static int usage(FILE *out, int code)
{
    fprintf(out,
            "usage: tally-mpi report|summary|aggregate [--timeout SEC] [options] INPUT...\n"
            "  run under mpirun or srun; options and outputs as in tally (see tally CMD --help).\n"
            "  Process 0 discovers the inputs and writes the outputs; the others read a share each.\n"
            "  --timeout SEC  end the job when a process sends nothing for SEC seconds while\n"
            "                 another waits for it (default %d; TALLY_MPI_TIMEOUT also sets it)\n",
            TL_MPI_TIMEOUT_DEFAULT);
    return code;
}

/* --timeout SEC / --timeout=SEC (tally-mpi's own option) out of argv, into
 * tl_mpi_timeout_s; TALLY_MPI_TIMEOUT gives the default. -1: a bad value. */
static int take_timeout(int *argc, char **argv)
{
    const char *v = getenv("TALLY_MPI_TIMEOUT");
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--")) { /* the rest are inputs */
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        if (!strcmp(argv[i], "--timeout") && i + 1 < *argc)
            v = argv[++i];
        else if (!strncmp(argv[i], "--timeout=", 10))
            v = argv[i] + 10;
        else
            argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    if (v == NULL)
        return 0;
    char *end;
    double t = strtod(v, &end);
    if (end == v || *end || !(t > 0) || t > 1e7)
        return -1;
    tl_mpi_timeout_s = t;
    return 0;
}

static int run(int rank, int argc, char **argv, int jobs_default, const tl_engine *engine)
{
    if (argc < 2)
        return usage(stderr, TL_EXIT_USAGE);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return rank == 0 ? usage(stdout, TL_EXIT_OK) : TL_EXIT_OK;
    if (!strcmp(argv[1], "--version")) {
        if (rank == 0)
            printf("tally-mpi %s\n", TALLY_VERSION);
        return TL_EXIT_OK;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **, const tl_engine *);
    } commands[] = {
        { "report", tl_cmd_report },
        { "summary", tl_cmd_summary },
        { "aggregate", tl_cmd_aggregate },
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        /* --help prints on process 0 only */
        for (int k = 2; k < argc && rank != 0; k++)
            if (!strcmp(argv[k], "-h") || !strcmp(argv[k], "--help"))
                return TL_EXIT_OK;
        char jobs[32];
        char **args = malloc(((size_t)argc + 2) * sizeof *args);
        if (args == NULL)
            return TL_EXIT_NO_INPUT;
        int n = 0;
        for (int k = 1; k < argc; k++) {
            args[n++] = argv[k];
            if (k == 1 && !has_jobs(argc, argv)) {
                snprintf(jobs, sizeof jobs, "--jobs=%d", jobs_default);
                args[n++] = jobs;
            }
        }
        args[n] = NULL;
        int rc = commands[i].fn(n, args, engine);
        free(args);
        return rc;
    }
    if (rank == 0)
        fprintf(stderr,
                "tally-mpi: '%s' is not a tally-mpi command (report, summary, aggregate); "
                "compare the aggregates with tally compare\n",
                argv[1]);
    return TL_EXIT_USAGE;
}

/* Process 0's exit code to every process. The others wait for it while
 * process 0 merges and renders, which can take a while at thousands of
 * ranks: they poll every millisecond instead of spinning in MPI_Bcast, so
 * the CPUs they were bound to are process 0's (mpi_analyze.c, take_node_cores). */
static void final_code(int *rc)
{
    MPI_Request req;
    if (MPI_Ibcast(rc, 1, MPI_INT, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        MPI_Bcast(rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
        return;
    }
    /* process 0's render can take a while: its exit code, not its silence */
    tl_mpi_wait(&req, 0, "its exit code");
}

int main(int argc, char **argv)
{
    int provided, rank = 0, size = 1;
    /* Only the main thread calls MPI; ingest's threads never do. */
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "tally-mpi: MPI could not be initialized\n");
        return TL_EXIT_NO_INPUT;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const tl_engine *engine = tl_mpi_setup(rank, size);
    /* --timeout first: the collective below waits as long as it says */
    int bad_timeout = take_timeout(&argc, argv) != 0;
    /* Collective: every process computes it before any can return early. */
    int jobs_default = default_jobs();
    int rc;
    if (bad_timeout) {
        if (rank == 0)
            fprintf(stderr, "tally-mpi: --timeout (or TALLY_MPI_TIMEOUT) takes seconds, more than 0\n");
        rc = TL_EXIT_USAGE;
    } else {
        rc = run(rank, argc, argv, jobs_default, engine);
    }
    tl_mpi_restore_stderr();
    /* Every process exits with process 0's code, so mpirun's and srun's
     * status is the command's. */
    final_code(&rc);
    MPI_Finalize();
    return rc;
}
