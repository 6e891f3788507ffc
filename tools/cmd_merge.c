/*
 * cmd_merge.c - `tally merge PARTIAL... -o aggregate.json`: combine partial
 * aggregates (from `tally aggregate --partial` over parts of the inputs) into
 * the aggregate that one run over all the inputs would have written.
 * --partial writes the merged partial instead (for a tree of merges). An
 * analysis option given to merge (--kernel-class, --max-names, ...) is the
 * one every partial must have been made with.
 */
#include <stdio.h>

#include "cli.h"
#include "pipeline.h"
#include "commands.h"

int tl_cmd_merge(int argc, char **argv, const tl_engine *engine)
{
    int partial = 0;
    const char *out = "-";
    tl_cli cli;
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out, "where to write (default: standard output)", "FILE" },
        { "--partial", "-p", 0, &partial, NULL, "write the merged partial aggregate (for a tree of merges)", NULL },
        TL_CLI_OPT_JSON_ALL(cli),
        { 0 },
    };
    const tl_cli_spec spec = {
        "merge", "PARTIAL...", "Merge partial aggregates (tally aggregate --partial) into one aggregate.", NULL, opts,
        1,       -1,
    };
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0 || (rc = tl_cli_check_outputs(&cli, &out, 1)) >= 0)
        return rc;
    tl_aggregate agg;
    tl_aggregate_init(&agg, NULL);
    tl_spill_limits(&agg.opt.spill_after, &agg.opt.spill_after_bytes); /* many partials: bounded memory (spill.h) */
    /* The partials carry the options they were made with; an analysis
     * option given here says which the merge expects, so each partial is
     * checked against it (else against the partials taken before it). */
    const tl_analyze_options *expect = cli.analysis_given ? &cli.analyze : NULL;
    int read = 0;
    for (int i = 0; i < cli.ninputs; i++) {
        if (tl_pipeline_add_partial(&cli, &agg, cli.inputs[i], expect) == 0)
            read++;
        else if (cli.strict) {
            rc = TL_EXIT_GATE;
            goto out;
        }
    }
    if (read == 0) {
        rc = TL_EXIT_NO_INPUT;
        goto out;
    }
    if (tl_aggregate_finish(&agg) != 0) {
        fprintf(stderr, "tally: out of memory\n");
        rc = TL_EXIT_NOMEM;
        goto out;
    }
    /* run identity, missing ranks, ranks shared by input order: said as in a run over the inputs */
    size_t notes = tl_pipeline_notes(&cli, &agg);
    /* Unreadable partials were reported; with --strict they already failed. */
    rc = tl_cli_strict(&cli, tl_cli_write_aggregate(&cli, out, &agg, partial), notes);
out:
    tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
