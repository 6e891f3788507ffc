/*
 * cmd_validate.c - `tally validate INPUT...`: every problem of every input,
 * one line each ("tally: file: offset N: what was expected"); exit 1 when
 * there is any problem, 0 when every input is a clean profile.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "commands.h"
#include "term.h"

int tl_cmd_validate(int argc, char **argv)
{
    const tl_cli_spec spec = {
        "validate", "INPUT...", "Check every input against its format and print every problem, one a line.",
        "Exit 1 when there is any problem, 0 when every input is a clean profile.", NULL, 1, -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec);
    if (rc >= 0)
        return rc;
    tl_run run;
    int quiet = cli.quiet;
    cli.quiet = 1; /* printed below, in one place */
    tl_cli_ingest(&cli, &run, NULL, NULL);
    /* Notes (files skipped as not profiles, inputs read once) are not problems. */
    if (!quiet)
        for (size_t i = 0; i < run.nnotes; i++)
            fprintf(stderr, "tally: note: %s\n", run.notes[i]);
    uint64_t problems = run.nproblems, clean = 0;
    /* one problem a line: newlines inside names escaped too (term.h) */
    static char path[8192], what[8192];
    for (size_t i = 0; i < run.nproblems; i++)
        printf("%s\n", tl_term_escape(what, sizeof what, run.problems[i]));
    for (size_t i = 0; i < run.n; i++) {
        const tl_profile *p = run.profiles[i];
        uint64_t n = (uint64_t)p->nwarnings + p->warnings_dropped;
        tl_term_escape(path, sizeof path, p->path);
        for (int w = 0; w < p->nwarnings; w++)
            printf("%s: %s\n", path, tl_term_escape(what, sizeof what, p->warnings[w]));
        if (p->warnings_dropped)
            printf("%s: %" PRIu64 " more problems\n", path, p->warnings_dropped);
        problems += n;
        clean += n == 0 && !p->skipped;
    }
    if (!quiet)
        fprintf(stderr, "tally validate: %zu inputs, %" PRIu64 " clean, %" PRIu64 " problems\n",
                run.n + run.nproblems, clean, problems);
    rc = tl_cli_close_output(stdout, "standard output") != 0 ? TL_EXIT_OUTPUT
         : run.n + run.nproblems == 0           ? TL_EXIT_NO_INPUT
         : problems                             ? TL_EXIT_GATE
                                                : TL_EXIT_OK;
    tl_run_release(&run);
    tl_cli_release(&cli);
    return rc;
}
