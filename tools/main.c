/*
 * main.c - the `tally` command: a table of subcommands, each in its own
 * tools/cmd_<name>.c (git's builtin/, perf's builtin-*.c).
 *
 * Standard output and standard error are replaced first by streams that
 * escape control characters (term.h): whatever an input holds, what tally
 * prints on a terminal is text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "term.h"

#ifndef TALLY_VERSION
#define TALLY_VERSION "unknown"
#endif

struct command {
    const char *name;
    int (*fn)(int argc, char **argv, const tl_engine *engine);
    const char *help;
};

static const struct command commands[] = {
    { "report", tl_cmd_report, "one self-contained HTML report (and optionally JSON and Markdown) of a run" },
    { "aggregate", tl_cmd_aggregate, "every analysis as JSON: per rank, across ranks, stragglers, recommendations" },
    { "merge", tl_cmd_merge, "merge partial aggregates (tally aggregate --partial) into one" },
    { "compare", tl_cmd_compare, "a baseline run against a candidate: per-name deltas, significance, regressions" },
    { "trend", tl_cmd_trend, "N runs in order: step time, throughput, GPU, memory, stage shares, change points" },
    { "watch", tl_cmd_watch, "follow a running program's flushed libtally report: steps/s, stages, GPU telemetry" },
    { "summary", tl_cmd_summary, "console tables: top names by total time, per rank and across ranks" },
    { "validate", tl_cmd_validate, "check inputs against their format; report every problem" },
    { "inspect", tl_cmd_inspect, "what each file is: format, rank, session, events, time span" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: tally <command> [options] INPUT...\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\n'tally help <command>' or 'tally <command> --help' describes one command.\n"
                 "options: --help, --version; see tally(1)\n");
}

static const struct command *find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

static int unknown(const char *name)
{
    const char *names[NCOMMANDS];
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].name;
    const char *s = tl_cli_suggest(name, names, NCOMMANDS);
    fprintf(stderr, "tally: '%s' is not a tally command", name);
    if (s)
        fprintf(stderr, "; did you mean '%s'?", s);
    fprintf(stderr, "\nsee 'tally --help'\n");
    return TL_EXIT_USAGE;
}

static FILE *plain_stdout, *plain_stderr;

/* Replace stdout/stderr by escaping streams over the same descriptors. */
static void escape_terminal_streams(void)
{
    FILE *out = tl_term_wrap(STDOUT_FILENO, 0), *err = tl_term_wrap(STDERR_FILENO, 1);
    plain_stdout = stdout;
    plain_stderr = stderr;
    if (out != NULL)
        stdout = out;
    if (err != NULL)
        stderr = err;
    /* colour by default on a terminal (NO_COLOR, TERM=dumb: none); a
     * command's --color=WHEN decides again (tl_cli_begin) */
    tl_term_set_color(stderr,
                      tl_term_color_wanted(TL_COLOR_AUTO, getenv("NO_COLOR"), getenv("TERM"), isatty(STDERR_FILENO)));
}

/* Close the escaping streams (their last bytes written) and put the plain
 * ones back. Returns -1 when standard output could not be written. */
static int close_terminal_streams(void)
{
    int rc = 0;
    if (stdout != plain_stdout) {
        rc = fclose(stdout) == 0 ? 0 : -1;
        stdout = plain_stdout;
    }
    if (stderr != plain_stderr) {
        fclose(stderr);
        stderr = plain_stderr;
    }
    return rc;
}

int main(int argc, char **argv)
{
    escape_terminal_streams();
    int rc;
    if (argc < 2) {
        usage(stderr);
        rc = TL_EXIT_USAGE;
    } else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || (!strcmp(argv[1], "help") && argc == 2)) {
        usage(stdout);
        rc = TL_EXIT_OK;
    } else if (!strcmp(argv[1], "help")) {
        const struct command *c = find(argv[2]);
        char *help_argv[] = { argv[2], "--help", NULL };
        rc = c ? c->fn(2, help_argv, NULL) : unknown(argv[2]);
    } else if (!strcmp(argv[1], "--version")) {
        printf("tally %s\n", TALLY_VERSION);
        rc = TL_EXIT_OK;
    } else if (argv[1][0] == '-') {
        fprintf(stderr, "tally: '%s': a command comes first; see 'tally --help'\n", argv[1]);
        rc = TL_EXIT_USAGE;
    } else {
        const struct command *c = find(argv[1]);
        rc = c ? c->fn(argc - 1, argv + 1, NULL) : unknown(argv[1]); /* NULL: tally's own pipeline */
    }
    /* The console text must reach its descriptor: a full disk under
     * `tally summary > log` is an error, not a silent short log. */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc != TL_EXIT_OUTPUT) {
        fprintf(stderr, "tally: standard output: write failed\n");
        rc = TL_EXIT_OUTPUT;
    }
    if (close_terminal_streams() != 0 && rc == TL_EXIT_OK)
        rc = TL_EXIT_OUTPUT;
    return rc;
}
