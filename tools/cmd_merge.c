/*
 * cmd_merge.c - `tally merge PARTIAL... -o aggregate.json`: combine partial
 * aggregates (from `tally aggregate --partial` over parts of the inputs) into
 * the aggregate that one run over all the inputs would have written.
 * --partial writes the merged partial instead (for a tree of merges).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "partial.h"
#include "render.h"

int tl_cmd_merge(int argc, char **argv)
{
    int partial = 0;
    const char *out = "-";
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out, "where to write (default: standard output)", "FILE" },
        { "--partial", "-p", 0, &partial, NULL, "write the merged partial aggregate (for a tree of merges)", NULL },
        { 0 },
    };
    const tl_cli_spec spec = {
        "merge", "PARTIAL...", "Merge partial aggregates (tally aggregate --partial) into one aggregate.", NULL,
        opts, 1, -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec);
    if (rc >= 0)
        return rc;
    if (tl_cli_check_output(&cli, out) != 0) {
        tl_cli_release(&cli);
        return TL_EXIT_OUTPUT;
    }
    tl_aggregate agg;
    tl_aggregate_init(&agg, NULL);
    int read = 0;
    for (int i = 0; i < cli.ninputs; i++) {
        char err[512] = "";
        tl_cli_seen_path(&cli, cli.inputs[i]); /* the output may not replace it */
        tl_partial part;
        tl_partial_init(&part);
        int bad = tl_partial_read(&part, cli.inputs[i], err, sizeof err) != 0 ||
                  tl_aggregate_add_partial(&agg, &part, err, sizeof err) != 0;
        tl_partial_release(&part);
        if (bad) {
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
        rc = TL_EXIT_NOMEM;
        goto out;
    }
    /* run identity, missing ranks, ranks shared by input order: said as in a run over the inputs */
    size_t notes = tl_cli_notes(&cli, &agg);
    tl_output *o = tl_cli_open_output(&cli, out, 0);
    if (o == NULL) {
        rc = TL_EXIT_OUTPUT;
        goto out;
    }
    tl_json j;
    tl_json_init(&j, tl_output_write, o);
    if (partial)
        tl_partial_write(&j, &agg, "tally " TALLY_VERSION);
    else
        tl_aggregate_write(&j, &agg, "tally " TALLY_VERSION);
    tl_json_finish(&j);
    /* Unreadable partials were reported; with --strict they already failed. */
    rc = tl_cli_commit_outputs(&cli);
    if (rc == TL_EXIT_OK && cli.strict && notes)
        rc = TL_EXIT_GATE;
out:
    tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
