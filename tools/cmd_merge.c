/*
 * cmd_merge.c - `tally merge PARTIAL... -o aggregate.json`: combine partial
 * aggregates (from `tally aggregate --partial` over parts of the inputs) into
 * the aggregate that one run over all the inputs would have written.
 * --partial writes the merged partial instead (for a tree of merges).
 */
#include <stdio.h>
#include <stdlib.h>

#include "aggregate_json.h"
#include "cli.h"
#include "commands.h"
#include "output.h"

int tl_cmd_merge(int argc, char **argv)
{
    static const char usage[] = "usage: tally merge PARTIAL... [-o aggregate.json] [--partial]";
    tl_cli cli;
    int partial = 0;
    const char *out = "-";
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out },
        { "--partial", NULL, 0, &partial, NULL },
        { NULL, NULL, 0, NULL, NULL },
    };
    int rc = tl_cli_begin(&cli, argc, argv, opts, usage);
    if (rc >= 0)
        return rc;
    tl_aggregate agg;
    tl_aggregate_init(&agg, NULL);
    int read = 0;
    for (int i = 0; i < cli.ninputs; i++) {
        char err[512] = "";
        if (tl_partial_read(&agg, cli.inputs[i], err, sizeof err) != 0) {
            fprintf(stderr, "tally: %s: %s\n", cli.inputs[i], err);
            if (cli.strict) {
                rc = TL_EXIT_GATE;
                goto out;
            }
            continue;
        }
        read++;
    }
    if (read == 0) {
        rc = TL_EXIT_NO_INPUT;
        goto out;
    }
    if (tl_aggregate_finish(&agg) != 0) {
        fprintf(stderr, "tally: out of memory\n");
        rc = TL_EXIT_NO_INPUT;
        goto out;
    }
    tl_output o;
    if (tl_output_open(&o, out, cli.inputs, cli.ninputs) != 0) {
        rc = TL_EXIT_OUTPUT;
        goto out;
    }
    if (partial)
        tl_partial_write(tl_output_json(&o), &agg, "tally " TALLY_VERSION);
    else
        tl_aggregate_write(tl_output_json(&o), &agg, "tally " TALLY_VERSION);
    /* Unreadable partials were reported; with --strict they already failed. */
    rc = tl_output_close(&o) != 0 ? TL_EXIT_OUTPUT : TL_EXIT_OK;
out:
    tl_aggregate_release(&agg);
    free(cli.inputs);
    return rc;
}
