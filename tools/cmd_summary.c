/*
 * cmd_summary.c - `tally summary INPUT... [--width N]`: the aggregate as
 * console tables that fit the width (render.h's tl_render_summary, in
 * render/summary_text.c): 80 columns, the terminal's when standard output is
 * one, or --width N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "pipeline.h"
#include "commands.h"
#include "render.h"
#include "text_table.h" /* the widths --width accepts */

int tl_cmd_summary(int argc, char **argv, const tl_engine *engine)
{
    const char *width_arg = NULL;
    tl_cli cli;
    const tl_cli_opt opts[] = {
        TL_CLI_OPT_WHOLE_TRACE(cli),
        { "--width", NULL, 1, NULL, &width_arg, "columns to fit (default: the terminal's width, else 80)", "N" },
        { 0 },
    };
    const tl_cli_spec spec = {
        "summary", "INPUT...", "Console tables: findings, top names by total time, per rank and across ranks.",
        NULL,      opts,       1,
        -1,
    };
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0)
        return rc;
    long want = 0;
    if (width_arg != NULL) {
        char *end;
        want = strtol(width_arg, &end, 10);
        if (*width_arg == '\0' || *end != '\0' || want < TL_TEXT_MIN_WIDTH || want > TL_TEXT_MAX_WIDTH) {
            fprintf(stderr, "tally summary: --width wants a number of columns from %d to %d\n", TL_TEXT_MIN_WIDTH,
                    TL_TEXT_MAX_WIDTH);
            tl_cli_release(&cli);
            return TL_EXIT_USAGE;
        }
    }
    size_t width = tl_text_width((int)want, STDOUT_FILENO);
    cli.analyze.drop_samples = 1; /* no compare, no partial: the samples are not used */
    cli.analyze.drop_bins = 1;    /* nor the timeline's bins: no chart is drawn */
    tl_aggregate agg;
    size_t warnings = 0;
    tl_spill_limits(&cli.analyze.spill_after,
                    &cli.analyze.spill_after_bytes); /* many ranks: bounded memory (spill.h) */
    rc = tl_pipeline_run(&cli, &cli.analyze, &agg, &warnings);
    if (rc == TL_EXIT_OK) {
        tl_render_summary(stdout, &agg, warnings, width);
        rc = tl_cli_strict(&cli, tl_cli_close_output(stdout, "standard output") != 0 ? TL_EXIT_OUTPUT : TL_EXIT_OK,
                           warnings);
    }
    if (tl_cli_free_at_exit()) /* else the exit frees it, at once */
        tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
