/*
 * main.c - the `tally` command: a table of subcommands, each in its own
 * tools/cmd_<name>.c (git's builtin/, perf's builtin-*.c).
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

#ifndef TALLY_VERSION
#define TALLY_VERSION "unknown"
#endif

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

static const struct command commands[] = {
    { "report", tl_cmd_report, "one self-contained HTML report (and optionally JSON and Markdown) of a run" },
    { "aggregate", tl_cmd_aggregate, "every analysis as JSON: per rank, across ranks, stragglers, recommendations" },
    { "merge", tl_cmd_merge, "merge partial aggregates (tally aggregate --partial) into one" },
    { "compare", tl_cmd_compare, "a baseline run against a candidate: per-name deltas, significance, regressions" },
    { "summary", tl_cmd_summary, "console tables: top names by total time, per rank and across ranks" },
    { "validate", tl_cmd_validate, "check inputs against their format; report every problem" },
    { "inspect", tl_cmd_inspect, "what each file is: format, rank, session, events, time span" },
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tally <command> [options] INPUT...\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\ncommon options: --help, --version\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("tally %s\n", TALLY_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) != 0)
            continue;
        if (commands[i].fn == NULL) {
            fprintf(stderr, "tally: %s: not implemented yet\n", argv[1]);
            return 2;
        }
        return commands[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "tally: '%s' is not a tally command; see 'tally --help'\n", argv[1]);
    return 2;
}
