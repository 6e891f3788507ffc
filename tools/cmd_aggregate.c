/*
 * cmd_aggregate.c - `tally aggregate INPUT... [-o aggregate.json] [--partial]`:
 * every analysis of DESIGN.md as JSON (schema/tally-aggregate.schema.json),
 * or with --partial the session results that `tally merge` combines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate_json.h"
#include "cli.h"
#include "commands.h"
#include "output.h"

int tl_cmd_aggregate(int argc, char **argv)
{
    static const char usage[] =
        "usage: tally aggregate INPUT... [-o aggregate.json] [--partial] [--whole-trace]\n"
        "  -o FILE         where to write (default: standard output)\n"
        "  --partial       write a partial aggregate for `tally merge`\n"
        "  --whole-trace   GPU breakdown over the whole trace, not the ProfilerStep window";
    tl_cli cli;
    int partial = 0, whole = 0;
    const char *out = "-";
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out },
        { "--partial", NULL, 0, &partial, NULL },
        { "--whole-trace", NULL, 0, &whole, NULL },
        { NULL, NULL, 0, NULL, NULL },
    };
    int rc = tl_cli_begin(&cli, argc, argv, opts, usage);
    if (rc >= 0)
        return rc;
    tl_analyze_options aopt;
    tl_analyze_options_init(&aopt);
    aopt.whole_trace = whole;
    tl_aggregate agg;
    size_t warnings = 0;
    rc = tl_cli_analyze(&cli, &aopt, &agg, &warnings);
    if (rc == TL_EXIT_OK) {
        tl_output o;
        if (tl_output_open(&o, out, cli.inputs, cli.ninputs) != 0) {
            rc = TL_EXIT_OUTPUT;
        } else {
            tl_json *j = tl_output_json(&o);
            if (partial)
                tl_partial_write(j, &agg, "tally " TALLY_VERSION);
            else
                tl_aggregate_write(j, &agg, "tally " TALLY_VERSION);
            rc = tl_output_close(&o) != 0 ? TL_EXIT_OUTPUT : cli.strict && warnings ? TL_EXIT_GATE : TL_EXIT_OK;
        }
    }
    tl_aggregate_release(&agg);
    free(cli.inputs);
    return rc;
}
