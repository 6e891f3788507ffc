/*
 * cmd_validate.c - `tally validate INPUT...`: every problem of every input,
 * one line each ("tally: file: offset N: what was expected"); exit 1 when
 * there is any problem, 0 when every input is a clean profile. Ranks that a
 * declared world size promises and no input holds are a warning, and a
 * problem under --strict.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "aggregate.h"
#include "cli.h"
#include "pipeline.h"
#include "commands.h"
#include "term.h"

static int by_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* The ranks a declared world size promises that no input holds (a rank that
 * crashed before writing): a warning, and under --strict a problem of the
 * input set, one line. Ranks guessed from the input order say nothing. */
static int missing_ranks(const tl_run *run, int strict, int quiet)
{
    int world = 0, *ranks = malloc((run->n + 1) * sizeof *ranks);
    size_t n = 0;
    if (ranks == NULL)
        return 0;
    for (size_t i = 0; i < run->n; i++) {
        const tl_profile *p = run->profiles[i];
        if (!tl_profile_usable(p) || tl_profile_is_aggregate(p) || p->id.rank < 0 || p->id.rank_source == TL_RANK_ORDER)
            continue;
        if (p->id.world_size > world)
            world = p->id.world_size;
        ranks[n++] = p->id.rank;
    }
    qsort(ranks, n, sizeof *ranks, by_int);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || ranks[u - 1] != ranks[i])
            ranks[u++] = ranks[i];
    char text[400];
    int found = tl_missing_ranks(ranks, u, world, text, sizeof text);
    if (found && strict)
        printf("inputs: %s\n", text);
    else if (found && !quiet)
        fprintf(stderr, "tally: warning: %s (a problem under --strict)\n", text);
    free(ranks);
    return found && strict;
}

/* The input's own problems (identity.h: not a rank guessed from the input
 * order), one a line, "NAME: TEXT" (newlines inside names escaped too,
 * term.h), and "NAME: N more problems" for those not kept; returns how many. */
static uint64_t print_problems(const tl_identity *id)
{
    static char path[8192], what[8192];
    uint64_t n = id->problems.dropped;
    tl_term_escape(path, sizeof path, id->path);
    for (size_t w = 0; w < id->problems.n; w++)
        if (tl_problem_of_input(&id->problems.v[w])) {
            printf("%s: %s\n", path, tl_term_escape(what, sizeof what, id->problems.v[w].text));
            n++;
        }
    if (id->problems.dropped)
        printf("%s: %" PRIu64 " more problems\n", path, id->problems.dropped);
    return n;
}

/* On the reading thread, once an input is read: validate reports its problems
 * and its identity only, so its events, statistics and strings go at once
 * (kept, 64 copies of a 4-rank DDP job took 117 MB, 1.7 MB a rank). */
static void keep_identity(tl_profile *p, void *user)
{
    (void)user;
    tl_profile_shrink(p);
}

int tl_cmd_validate(int argc, char **argv, const tl_engine *engine)
{
    const tl_cli_spec spec = {
        "validate",
        "INPUT...",
        "Check every input against its format and print every problem, one a line.",
        "Exit 1 when there is any problem, 0 when every input is a clean profile.",
        NULL,
        1,
        -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0)
        return rc;
    tl_run run;
    int quiet = cli.quiet;
    cli.quiet = 1; /* printed below, in one place */
    tl_pipeline_read(&cli, &run, keep_identity, NULL);
    /* Notes (files skipped as not profiles, inputs read once) are not problems. */
    if (!quiet)
        for (size_t i = 0; i < run.nnotes; i++)
            fprintf(stderr, "tally: note: %s\n", run.notes[i]);
    uint64_t problems = 0, clean = 0;
    for (size_t i = 0; i < run.nunreadable; i++)
        problems += print_problems(&run.unreadable[i]);
    for (size_t i = 0; i < run.n; i++) {
        uint64_t n = print_problems(&run.profiles[i]->id);
        problems += n;
        clean += n == 0 && !run.profiles[i]->skipped;
    }
    problems += (uint64_t)missing_ranks(&run, cli.strict, quiet);
    if (!quiet)
        fprintf(stderr, "tally validate: %zu input%s, %" PRIu64 " clean, %" PRIu64 " problem%s\n",
                run.n + run.nunreadable, tl_plural_s(run.n + run.nunreadable), clean, problems,
                tl_plural_s((size_t)problems));
    rc = tl_cli_close_output(stdout, "standard output") != 0 ? TL_EXIT_OUTPUT
         : run.n + run.nunreadable == 0                      ? TL_EXIT_NO_INPUT
         : problems                                          ? TL_EXIT_GATE
                                                             : TL_EXIT_OK;
    tl_run_release(&run);
    tl_cli_release(&cli);
    return rc;
}
