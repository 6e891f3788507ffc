/*
 * cmd_aggregate.c - `tally aggregate INPUT... [-o aggregate.json] [--partial]`:
 * every analysis (docs/architecture.md, docs/analysis.md) as JSON
 * (schema/tally-aggregate.schema.json), or with --partial the session results
 * that `tally merge` combines.
 */
#include "cli.h"
#include "pipeline.h"
#include "commands.h"

int tl_cmd_aggregate(int argc, char **argv, const tl_engine *engine)
{
    int partial = 0;
    const char *out = "-";
    tl_cli cli;
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out, "where to write (default: standard output)", "FILE" },
        { "--partial", "-p", 0, &partial, NULL, "write a partial aggregate for `tally merge`", NULL },
        TL_CLI_OPT_JSON_ALL(cli),
        TL_CLI_OPT_WHOLE_TRACE(cli),
        { 0 },
    };
    const tl_cli_spec spec = {
        "aggregate", "INPUT...", "Every analysis of the inputs as one JSON document.", NULL, opts, 1, -1,
    };
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0 || (rc = tl_cli_check_outputs(&cli, &out, 1)) >= 0)
        return rc;
    tl_aggregate agg;
    size_t warnings = 0;
    tl_spill_limits(&cli.analyze.spill_after,
                    &cli.analyze.spill_after_bytes); /* many ranks: bounded memory (spill.h) */
    rc = tl_pipeline_run(&cli, &cli.analyze, &agg, &warnings);
    if (rc == TL_EXIT_OK)
        rc = tl_cli_strict(&cli, tl_cli_write_aggregate(&cli, out, &agg, partial), warnings);
    if (tl_cli_free_at_exit()) /* else the exit frees it, at once */
        tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
