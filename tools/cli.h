/*
 * cli.h - what every subcommand shares: option parsing (getopt_long: -oFILE,
 * -o FILE, --output=FILE, bundled short flags, `--` ends the options, `-` is
 * standard input), the common options (--jobs, --strict, --quiet,
 * --progress/--no-progress, --help, --version), help text generated from the
 * option tables, "did you mean" suggestions, the exit codes of
 * docs/architecture.md, input lists, and the command's outputs (written
 * through common/output.h and committed together at the end). Reading and
 * analyzing the inputs is pipeline.h's.
 */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "aggregate.h"
#include "ingest.h"
#include "output.h"

enum tl_exit {
    TL_EXIT_OK = 0,
    TL_EXIT_GATE = 1, /* a gate failed: compare regression, validate problems, --strict */
    TL_EXIT_USAGE = 2,
    TL_EXIT_NO_INPUT = 3, /* no usable input */
    TL_EXIT_OUTPUT = 4,   /* an output could not be written */
    TL_EXIT_NOMEM = 5,    /* out of memory */
};

/* Outputs one command may write (report: HTML, JSON, Markdown; compare: four). */
#define TL_CLI_MAX_OUTPUTS 8
/* Room for one escaped path or message (longer ones are cut with "..."). */
#define TL_CLI_ESCAPED_MAX 8192

typedef struct tl_cli tl_cli;

/* How a command's inputs become one aggregate, given to the command by its
 * caller (commands.h): NULL in tally (tools/pipeline.c reads and analyzes
 * every input in this process); tally-mpi's spreads the inputs over its MPI
 * processes (tools/mpi/mpi_analyze.c). */
typedef struct tl_engine {
    /* the analysis tl_pipeline_run does: TL_EXIT_WORKER on the processes
     * that write nothing */
    int (*analyze)(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings);
    int shared_argv;    /* several processes parse the same arguments: no input list on standard input */
    int writes_nothing; /* this process writes no output: tl_cli_check_output passes (its node need not
                         * even see the output's directory) */
} tl_engine;
#define TL_EXIT_WORKER 100

/* A command-specific option. The first five fields are what commands have
 * always written ({ "--json", NULL, 1, NULL, &json }); help and arg feed the
 * generated help. */
typedef struct tl_cli_opt {
    const char *name;  /* "--output" */
    const char *alias; /* the short form "-o", or NULL */
    int takes_value;
    int *flag;          /* a flag sets *flag = 1 */
    const char **value; /* an option with a value stores it here */
    const char *help;   /* one line for --help (NULL: listed without one) */
    const char *arg;    /* the value's name in the help (NULL: "VALUE") */
} tl_cli_opt;

/* The option of every command that analyzes, spelled once: --whole-trace
 * sets the analysis option of cli (a tl_cli, declared before the table). */
#define TL_CLI_OPT_WHOLE_TRACE(cli)                                                                                    \
    {                                                                                                                  \
        "--whole-trace", NULL, 0, &(cli).analyze.whole_trace, NULL,                                                    \
            "GPU breakdown over the whole trace, not the ProfilerStep window", NULL                                    \
    }

/* The option of every command that writes the aggregate JSON: past
 * TL_JSON_RANKS_FULL ranks (render.h) it is bounded unless asked for all. */
#define TL_CLI_OPT_JSON_ALL(cli)                                                                                       \
    {                                                                                                                  \
        "--json-all", NULL, 0, &(cli).json_all, NULL,                                                                  \
            "the aggregate JSON with every rank in full (else past 256 ranks: 32 picked)", NULL                        \
    }

/* A subcommand's description: drives parsing, `--help` and `tally help CMD`. */
typedef struct tl_cli_spec {
    const char *name;           /* "report" */
    const char *args;           /* "INPUT..." */
    const char *summary;        /* one line */
    const char *details;        /* paragraphs after the usage line, or NULL */
    const tl_cli_opt *opts;     /* terminated by a zero entry; may be NULL */
    int min_inputs, max_inputs; /* max -1: no limit */
} tl_cli_spec;

struct tl_cli {
    const tl_cli_spec *spec;
    const tl_engine *engine; /* NULL: this process does it all (tally) */
    const char *cmd;
    /* Every input path, in order: the command line's, with each input list
     * (@FILE, --inputs-from FILE: one path a line) replaced by its paths. */
    const char **inputs;
    int ninputs;
    /* The command's arguments: argument k is inputs[arg_start[k] ..
     * arg_start[k + 1]); an input list is one argument (compare's side).
     * --inputs-from lists come first, then the command line's in order. */
    int nargs;
    int *arg_start;
    struct tl_cli_lists *lists;        /* the input lists' text and the arrays' room */
    int jobs, strict, quiet, progress; /* progress: -1 auto (only on a terminal) */
    int json_all;                      /* --json-all: the aggregate JSON holds every rank in full, however many */
    /* every file read as an input, by device and inode: no output may be one
     * (behind a pointer: reading through a const tl_cli records them) */
    struct tl_cli_seen *seen;
    tl_output *outs[TL_CLI_MAX_OUTPUTS];
    size_t nouts;
    /* The analysis options of the command line: their defaults are set by
     * tl_cli_begin before it parses, so a command's option may point into
     * them (--whole-trace: &cli.analyze.whole_trace). */
    tl_analyze_options analyze;
    tl_kernel_classes *kernel_classes; /* owned: analyze.kernel_classes (--kernel-class) */
    /* An analysis option (--kernel-class, --max-names, --max-events,
     * --max-input-size) was given: merge then checks each partial against
     * the command's options, not against the first partial's. */
    int analysis_given;
};

/* The files read as inputs (tl_cli.seen), by device and inode: cli.c makes
 * it, cli_outputs.c records into it and checks each output against it. */
struct tl_cli_seen {
    tl_file_id *ids;
    size_t n, cap;
    int lost; /* out of memory while recording: every output is refused */
};

/* The CPUs this process may use: the CPUs of its affinity mask
 * (sched_getaffinity: taskset, a Slurm or cpuset allocation), bounded by the
 * cgroup v2 CPU quota (tl_cli_cgroup_cpu_limit); at least 1. --jobs defaults
 * to it (at most 64), not to the machine's CPU count. */
int tl_cli_cpus(void);
/* The cgroup v2 CPU quota of the process whose /proc/PID/cgroup is
 * self_cgroup ("0::/PATH"), under the cgroup2 mount cgroup_root: the
 * smallest ceil(QUOTA / PERIOD) of the cpu.max files of its cgroup and every
 * parent ("max": none). 0 when there is none or it cannot be read (cgroup v1). */
int tl_cli_cgroup_cpu_limit(const char *cgroup_root, const char *self_cgroup);

/* Parse argv (argv[0] is the subcommand) by spec; engine is the caller's
 * (commands.h: NULL in tally). Returns -1 to go on, or the
 * exit code to return with: 0 after --help or --version, 2 after a usage
 * error (printed, with a suggestion when an option was misspelled). */
int tl_cli_begin(tl_cli *cli, int argc, char **argv, const tl_cli_spec *spec, const tl_engine *engine);

/* Print the help of spec on f. */
void tl_cli_help(FILE *f, const tl_cli_spec *spec);

/* Free what tl_cli_begin and the outputs hold (outputs not committed are
 * aborted: their temporary files removed, the old files kept). */
void tl_cli_release(tl_cli *cli);

/* The closest of n names to s by edit distance, if close enough to be a
 * likely typo ("reprot" -> "report"); else NULL. */
const char *tl_cli_suggest(const char *s, const char *const *names, size_t n);

/* Before reading anything: fail early on an output path that can never be
 * written (a directory, a missing directory, a read-only file) or that is
 * one of the inputs named on the command line. Prints why. 0 or -1. */
int tl_cli_check_output(const tl_cli *cli, const char *path);

/* Open an output for the command (after the inputs were read: it must not
 * be any of them). Returns it, or NULL after printing why. Kept in cli until
 * tl_cli_commit_outputs. */
tl_output *tl_cli_open_output(tl_cli *cli, const char *path, unsigned flags);

/* Finish every opened output and move all into place together, printing
 * "tally: PATH: why" for each that failed. TL_EXIT_OK or TL_EXIT_OUTPUT. */
int tl_cli_commit_outputs(tl_cli *cli);

/* Record a file read outside tl_pipeline_read (a partial aggregate) as an
 * input, so that no output replaces it; tl_cli_seen_file by its identity. */
void tl_cli_seen_path(const tl_cli *cli, const char *path);
void tl_cli_seen_file(const tl_cli *cli, dev_t dev, ino_t ino);

/* Close a console stream (standard output), reporting write errors (full
 * disk) as docs/architecture.md asks. 0 or -1. */
int tl_cli_close_output(FILE *f, const char *name);

/* ---- what the commands share after parsing ----------------------------------
 * The steps every subcommand takes in the same way, so that a command reads
 * as: parse options, call the stages, write outputs. */

/* tl_cli_check_output for each of paths[0..n) that is not NULL (an output
 * not asked for), before reading anything. Like tl_cli_begin, returns -1 to
 * go on, or the exit code to return with: TL_EXIT_OUTPUT after printing why,
 * cli released. */
int tl_cli_check_outputs(tl_cli *cli, const char *const *paths, size_t n);

/* With none of the outputs paths[0..n) asked for (all NULL), paths[0]
 * becomes name, and stderr says so unless --quiet ("writing the HTML what
 * to name"). */
void tl_cli_default_output(const tl_cli *cli, const char **paths, size_t n, const char *name, const char *what);

/* A percentage option's value ("5%", "5" or "2.5 %") from 0 to 1000 into
 * *pct: 0, or -1 when it is not one (the caller says which option). */
int tl_cli_parse_percent(const char *s, double *pct);
/* A command's outputs, written together: open each of paths[0..n) that is
 * not NULL first (so a bad one fails before a byte is written anywhere,
 * standard output included), then write(o, i, ctx) each (0, or -1 when out
 * of memory), up to `threads` of them at once (write must only read what it
 * shares), then commit them all (tl_cli_commit_outputs). TL_EXIT_OK,
 * TL_EXIT_OUTPUT or TL_EXIT_NOMEM. */
int tl_cli_write_outputs(tl_cli *cli, const char *const *paths, size_t n, int threads,
                         int (*write)(tl_output *o, size_t i, void *ctx), void *ctx);

/* The aggregate as the JSON document of this tally (render.h's
 * tl_aggregate_write, every rank in full when all, or tl_partial_write when
 * partial) into o; write errors are seen at commit. */
void tl_cli_aggregate_json(tl_output *o, const tl_aggregate *agg, int partial, int all);
/* That document as the command's one output at path (tl_cli_write_outputs),
 * every rank in full with cli->json_all. */
int tl_cli_write_aggregate(tl_cli *cli, const char *path, const tl_aggregate *agg, int partial);

/* --strict turns every warning into an error: TL_EXIT_GATE when rc is
 * TL_EXIT_OK, --strict is given and there were warnings; else rc. */
int tl_cli_strict(const tl_cli *cli, int rc, size_t warnings);

/* Whether a command frees what it built before the process exits: the kernel
 * takes a process's memory back at once, while freeing a large aggregate block
 * by block does not (21 % of a run at 10^6 names, issue 33). 1 under a leak
 * checker (a build with AddressSanitizer: make test-sanitize, CI) or when the
 * environment sets TALLY_FREE_AT_EXIT (to anything but "0": valgrind and other
 * leak checkers); else 0, and the aggregate is left to the exit. */
int tl_cli_free_at_exit(void);

#endif
