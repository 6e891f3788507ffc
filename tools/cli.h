/*
 * cli.h - what every subcommand shares: option parsing (getopt_long: -oFILE,
 * -o FILE, --output=FILE, bundled short flags, `--` ends the options, `-` is
 * standard input), the common options (--jobs, --strict, --quiet,
 * --progress/--no-progress, --help, --version), help text generated from the
 * option tables, "did you mean" suggestions, the exit codes of
 * docs/architecture.md, reading the inputs into a run, and the command's
 * outputs (written through common/output.h and committed together at the end).
 */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"
#include "ingest.h"
#include "output.h"

enum tl_exit {
    TL_EXIT_OK = 0,
    TL_EXIT_GATE = 1,      /* a gate failed: compare regression, validate problems, --strict */
    TL_EXIT_USAGE = 2,
    TL_EXIT_NO_INPUT = 3,  /* no usable input */
    TL_EXIT_OUTPUT = 4,    /* an output could not be written */
    TL_EXIT_NOMEM = 5,     /* out of memory */
};

/* Outputs one command may write (report: HTML, JSON, Markdown; compare: four). */
#define TL_CLI_MAX_OUTPUTS 8

/* A command-specific option. The first five fields are what commands have
 * always written ({ "--json", NULL, 1, NULL, &json }); help and arg feed the
 * generated help. */
typedef struct tl_cli_opt {
    const char *name;   /* "--output" */
    const char *alias;  /* the short form "-o", or NULL */
    int takes_value;
    int *flag;          /* a flag sets *flag = 1 */
    const char **value; /* an option with a value stores it here */
    const char *help;   /* one line for --help (NULL: listed without one) */
    const char *arg;    /* the value's name in the help (NULL: "VALUE") */
} tl_cli_opt;

/* The option of every command that analyzes, spelled once: --whole-trace
 * sets the analysis option of cli (a tl_cli, declared before the table). */
#define TL_CLI_OPT_WHOLE_TRACE(cli)                                                                                 \
    { "--whole-trace", NULL, 0, &(cli).analyze.whole_trace, NULL,                                                   \
      "GPU breakdown over the whole trace, not the ProfilerStep window", NULL }

/* A subcommand's description: drives parsing, `--help` and `tally help CMD`. */
typedef struct tl_cli_spec {
    const char *name;     /* "report" */
    const char *args;     /* "INPUT..." */
    const char *summary;  /* one line */
    const char *details;  /* paragraphs after the usage line, or NULL */
    const tl_cli_opt *opts; /* terminated by a zero entry; may be NULL */
    int min_inputs, max_inputs; /* max -1: no limit */
} tl_cli_spec;

typedef struct tl_cli {
    const tl_cli_spec *spec;
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
    struct tl_cli_lists *lists; /* the input lists' text and the arrays' room */
    int jobs, strict, quiet, progress; /* progress: -1 auto (only on a terminal) */
    /* Memory bounds per input (0: the defaults of profile.h and discover.h). */
    uint32_t max_names;                /* --max-names N */
    uint64_t max_events;               /* --max-events N */
    uint64_t max_input_bytes;          /* --max-input-size BYTES (K, M, G suffixes) */
    /* every file read as an input, by device and inode: no output may be one
     * (behind a pointer: reading through a const tl_cli records them) */
    struct tl_cli_seen *seen;
    tl_output *outs[TL_CLI_MAX_OUTPUTS];
    size_t nouts;
    /* The analysis options of the command line: their defaults are set by
     * tl_cli_begin before it parses, so a command's option may point into
     * them (--whole-trace: &cli.analyze.whole_trace). */
    tl_analyze_options analyze;
} tl_cli;

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

/* Parse argv (argv[0] is the subcommand) by spec. Returns -1 to go on, or the
 * exit code to return with: 0 after --help or --version, 2 after a usage
 * error (printed, with a suggestion when an option was misspelled). */
int tl_cli_begin(tl_cli *cli, int argc, char **argv, const tl_cli_spec *spec);

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

/* Record a file read outside tl_cli_ingest (a partial aggregate) as an
 * input, so that no output replaces it. */
void tl_cli_seen_path(const tl_cli *cli, const char *path);

/* Read the inputs into run with the parsed options (on_profile and user as in
 * tl_ingest_options; may be NULL). Prints discovery problems unless --quiet.
 * Records the identity of every input file in cli for the output check. */
size_t tl_cli_ingest(const tl_cli *cli, tl_run *run, void (*on_profile)(tl_profile *, void *), void *user);

/* Print every problem of the run's inputs (unless --quiet), one
 * "tally: NAME: TEXT" line each, ranks only guessed from the input order
 * included; returns how many there are (what --strict turns into an error).
 * The inputs that could not be read at all were printed by tl_cli_ingest and
 * are counted here. */
size_t tl_cli_warnings(const tl_cli *cli, const tl_run *run);
/* The same for one input's identity: its problems printed (unless --quiet)
 * and counted, those beyond TL_IDENTITY_MAX_PROBLEMS included. */
size_t tl_cli_problems(const tl_cli *cli, const tl_identity *id);

/* Read the inputs and analyze them into a finished aggregate (initialized
 * here; release it either way). Prints warnings unless --quiet and counts them
 * in *warnings. Returns TL_EXIT_OK, TL_EXIT_NO_INPUT (nothing usable) or
 * TL_EXIT_NOMEM. The way of one input: ingest reads it into a profile
 * (ingest.h) and analyze makes its session on the reading thread
 * (tl_session_analyze); once all are read, ingest settles ranks and
 * companions (tl_run_ingest) and the session takes them
 * (tl_identity_take_settled, in tl_cli_sessions); tl_aggregate_finish settles
 * runs over every session and computes across ranks; a command renders. */
int tl_cli_analyze(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings);

/* tally-mpi (tools/mpi) sets this to analyze across MPI processes instead:
 * then tl_cli_analyze returns the hook's result, which is TL_EXIT_WORKER on
 * every process but the one that writes the outputs. NULL in tally. */
#define TL_EXIT_WORKER 100
/* Set by tally-mpi on the processes that write nothing: tl_cli_check_output
 * passes there (their node need not even see the output's directory). */
extern int tl_cli_no_outputs;
extern int (*tl_cli_analyze_hook)(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg,
                                  size_t *warnings);

/* The pieces of tl_cli_analyze, for the hook: the analysis on the ingest
 * worker threads (tl_ingest_options.on_profile with user = the options);
 * the run's results (ranks assigned) into agg's sessions, aggregate inputs'
 * sessions too, whose warnings are printed unless --quiet and counted;
 * and the check that something was usable, then tl_aggregate_finish. */
void tl_cli_analyze_profile(tl_profile *p, void *opt);
/* Whether an input's reading ran out of memory (a problem says so): exit 5. */
int tl_cli_lost_to_memory(const tl_identity *id);
int tl_cli_sessions(const tl_cli *cli, tl_run *run, tl_aggregate *agg, size_t *warnings);
int tl_cli_finish(tl_aggregate *agg, size_t usable);
/* Print the finished aggregate's run-identity notes (inputs of another run
 * left out, missing ranks) as warnings unless --quiet; returns how many
 * (what --strict counts). */
size_t tl_cli_notes(const tl_cli *cli, const tl_aggregate *agg);

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

/* Read one partial aggregate (tally aggregate --partial) at path into agg
 * (initialized, not finished), recorded as an input so that no output
 * replaces it. 0, or -1 after printing "tally: PATH: what is wrong". */
int tl_cli_add_partial(const tl_cli *cli, tl_aggregate *agg, const char *path);

/* A percentage option's value ("5%", "5" or "2.5 %") from 0 to 1000 into
 * *pct: 0, or -1 when it is not one (the caller says which option). */
int tl_cli_parse_percent(const char *s, double *pct);
/* Argument k of the command (a path, or an input list's paths: compare's
 * side, one run of trend) read and analyzed into a finished aggregate
 * (initialized here; release it either way): a partial aggregate
 * (tally aggregate --partial) taken as it is, anything else through
 * tl_cli_analyze. TL_EXIT_OK, TL_EXIT_NO_INPUT or TL_EXIT_NOMEM. */
int tl_cli_analyze_arg(const tl_cli *cli, int k, tl_aggregate *agg, size_t *warnings);
/* A command's outputs, written together: open each of paths[0..n) that is
 * not NULL first (so a bad one fails before a byte is written anywhere,
 * standard output included), then write(o, i, ctx) each (0, or -1 when out
 * of memory), then commit them all (tl_cli_commit_outputs). TL_EXIT_OK,
 * TL_EXIT_OUTPUT or TL_EXIT_NOMEM. */
int tl_cli_write_outputs(tl_cli *cli, const char *const *paths, size_t n,
                         int (*write)(tl_output *o, size_t i, void *ctx), void *ctx);

/* The aggregate as the JSON document of this tally (render.h's
 * tl_aggregate_write, or tl_partial_write when partial) into o; write
 * errors are seen at commit. */
void tl_cli_aggregate_json(tl_output *o, const tl_aggregate *agg, int partial);
/* That document as the command's one output at path (tl_cli_write_outputs). */
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
