/*
 * cmd_aggregate.c - `tally aggregate INPUT... [-o aggregate.json] [--partial]`:
 * every analysis of DESIGN.md as JSON (schema/tally-aggregate.schema.json),
 * or with --partial the session results that `tally merge` combines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "cli.h"
#include "commands.h"

int tl_cmd_aggregate(int argc, char **argv)
{
    int partial = 0, whole = 0;
    const char *out = "-";
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out, "where to write (default: standard output)", "FILE" },
        { "--partial", "-p", 0, &partial, NULL, "write a partial aggregate for `tally merge`", NULL },
        { "--whole-trace", NULL, 0, &whole, NULL, "GPU breakdown over the whole trace, not the ProfilerStep window", NULL },
        { 0 },
    };
    const tl_cli_spec spec = {
        "aggregate", "INPUT...", "Every analysis of the inputs as one JSON document.", NULL, opts, 1, -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec);
    if (rc >= 0)
        return rc;
    if (tl_cli_check_output(&cli, out) != 0) {
        tl_cli_release(&cli);
        return TL_EXIT_OUTPUT;
    }
    tl_analyze_options aopt;
    tl_analyze_options_init(&aopt);
    aopt.whole_trace = whole;
    tl_aggregate agg;
    size_t warnings = 0;
    rc = tl_cli_analyze(&cli, &aopt, &agg, &warnings);
    if (rc == TL_EXIT_OK) {
        tl_output *o = tl_cli_open_output(&cli, out, 0);
        if (o == NULL) {
            rc = TL_EXIT_OUTPUT;
        } else {
            tl_json j;
            tl_json_init(&j, tl_output_write, o);
            if (partial)
                tl_partial_write(&j, &agg, "tally " TALLY_VERSION);
            else
                tl_aggregate_write(&j, &agg, "tally " TALLY_VERSION);
            tl_json_finish(&j);
            rc = tl_cli_commit_outputs(&cli);
            if (rc == TL_EXIT_OK && cli.strict && warnings)
                rc = TL_EXIT_GATE;
        }
    }
    tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
