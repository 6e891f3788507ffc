/*
 * cli.h - what every subcommand shares: the common options (--jobs, --strict,
 * --quiet, --progress/--no-progress, --help), the exit codes of DESIGN.md, and
 * reading the inputs into a run.
 */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"
#include "ingest.h"

enum tl_exit {
    TL_EXIT_OK = 0,
    TL_EXIT_GATE = 1,      /* a gate failed: compare regression, validate problems, --strict */
    TL_EXIT_USAGE = 2,
    TL_EXIT_NO_INPUT = 3,  /* no usable input */
    TL_EXIT_OUTPUT = 4,    /* an output could not be written */
};

typedef struct tl_cli {
    const char *cmd;
    const char **inputs;
    int ninputs;
    int jobs, strict, quiet, progress; /* progress: -1 auto (only on a terminal) */
    int json;
    const char *output;                /* -o */
    /* Memory bounds per input (0: the defaults of profile.h and discover.h). */
    uint32_t max_names;                /* --max-names N */
    uint64_t max_events;               /* --max-events N */
    uint64_t max_input_bytes;          /* --max-input-size BYTES (K, M, G suffixes) */
} tl_cli;

/* A command-specific option: `name` ("--json"), whether it takes a value, and
 * where to store it (int flag set to 1, or const char * value). */
typedef struct tl_cli_opt {
    const char *name;
    const char *alias;  /* e.g. "-o", or NULL */
    int takes_value;
    int *flag;
    const char **value;
} tl_cli_opt;

/* Parse argv (argv[0] is the subcommand). Returns 0, 1 when --help was
 * printed, or -1 after printing a usage error. */
int tl_cli_parse(tl_cli *cli, int argc, char **argv, const tl_cli_opt *opts, const char *usage);

/* The start of a subcommand that needs at least one input: parse argv and
 * check there is an input. Returns -1 to go on, or the exit code to return
 * with (--help printed: 0; a usage error printed: 2), cli->inputs freed. */
int tl_cli_begin(tl_cli *cli, int argc, char **argv, const tl_cli_opt *opts, const char *usage);

/* Read the inputs into run with the parsed options (on_profile and user as in
 * tl_ingest_options; may be NULL). Prints discovery problems unless --quiet. */
size_t tl_cli_ingest(const tl_cli *cli, tl_run *run, void (*on_profile)(tl_profile *, void *), void *user);

/* Print every warning of the run (unless --quiet), including ranks that were
 * only guessed from the input order; returns how many there are (what
 * --strict turns into an error). */
size_t tl_cli_warnings(const tl_cli *cli, const tl_run *run);

/* Read the inputs and analyze them into a finished aggregate (initialized
 * here; release it either way). Prints warnings unless --quiet and counts them
 * in *warnings. Returns TL_EXIT_OK or TL_EXIT_NO_INPUT (nothing usable). */
int tl_cli_analyze(const tl_cli *cli, const tl_analyze_options *opt, tl_aggregate *agg, size_t *warnings);

/* Close an output stream, reporting write errors (full disk) as DESIGN.md asks. */
int tl_cli_close_output(FILE *f, const char *name);

#endif
