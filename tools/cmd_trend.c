/*
 * cmd_trend.c - `tally trend RUN... [--json F] [--markdown F] [--threshold 5%]
 * [--alpha A] [--width N] [--fail-on-regression]`: the primary metrics of
 * N runs in the order given, one row a run, and the change points of the
 * step time (analyze/trend.h, docs/compare.md "Trend").
 *
 * Each RUN is one argument: anything `tally report` reads (a directory, an
 * archive, a file), a partial aggregate, or an input list (@FILE) of such
 * paths. With --fail-on-regression the exit code is the nightly gate: 1 when
 * the series ends slower than it was -- its latest change point (or a change
 * at the last run, not yet confirmed) is a slowdown -- 0 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "pipeline.h"
#include "commands.h"
#include "render.h"
#include "text_table.h"
#include "trend.h"

/* Output i of the paths (--json, --markdown). */
static int write_output(tl_output *o, size_t i, void *ctx)
{
    const tl_trend *t = ctx;
    if (i == 1)
        return tl_render_trend_markdown(o->f, t);
    tl_json j;
    tl_json_init(&j, tl_output_write, o);
    tl_trend_write_json(&j, t, "tally " TALLY_VERSION);
    tl_json_finish(&j); /* write errors are seen at commit (ferror) */
    return 0;
}

int tl_cmd_trend(int argc, char **argv, const tl_engine *engine)
{
    const char *json = NULL, *md = NULL, *threshold = NULL, *alpha_arg = NULL, *width_arg = NULL;
    int fail = 0;
    tl_cli cli;
    const tl_cli_opt opts[] = {
        { "--json", NULL, 1, NULL, &json, "the series as JSON (schema/tally-trend.schema.json)", "FILE" },
        { "--markdown", NULL, 1, NULL, &md, "the table as Markdown for a CI job page", "FILE" },
        { "--threshold", NULL, 1, NULL, &threshold, "a change point moves the step time by more than P % (default 5%)",
          "P" },
        { "--alpha", NULL, 1, NULL, &alpha_arg,
          "the series' significance level, split over its boundaries (default 0.05)", "A" },
        { "--width", NULL, 1, NULL, &width_arg, "columns to fit (default: the terminal's width, else 80)", "N" },
        { "--fail-on-regression", NULL, 0, &fail, NULL,
          "exit 1 when the series ends slower: its latest change point is a slowdown", NULL },
        TL_CLI_OPT_WHOLE_TRACE(cli),
        { 0 },
    };
    const tl_cli_spec spec = {
        "trend",
        "RUN...",
        "The primary metrics of N runs in order, with the change points of the step time.",
        "Each RUN is one input: a directory, archive or file `tally report` reads, a partial\n"
        "aggregate, or @FILE (an input list of one run). The runs are read in the order given\n"
        "(oldest first). A change point is a step-time shift beyond --threshold, judged by\n"
        "compare's test against the run before, that the next run holds; runs without step\n"
        "samples get no verdict (docs/compare.md, \"Trend\").",
        opts,
        2,
        -1,
    };
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0)
        return rc;
    double threshold_pct = 5.0, alpha = 0.05;
    long want = 0;
    if (threshold && tl_cli_parse_percent(threshold, &threshold_pct) != 0) {
        fprintf(stderr, "tally trend: --threshold wants a percentage from 0 to 1000, like 5%%\n");
        rc = TL_EXIT_USAGE;
    } else if (alpha_arg && (alpha = strtod(alpha_arg, NULL), !(alpha > 0 && alpha < 1))) {
        fprintf(stderr, "tally trend: --alpha wants a level between 0 and 1, like 0.05\n");
        rc = TL_EXIT_USAGE;
    } else if (width_arg) {
        char *end;
        want = strtol(width_arg, &end, 10);
        if (*width_arg == '\0' || *end != '\0' || want < TL_TEXT_MIN_WIDTH || want > TL_TEXT_MAX_WIDTH) {
            fprintf(stderr, "tally trend: --width wants a number of columns from %d to %d\n", TL_TEXT_MIN_WIDTH,
                    TL_TEXT_MAX_WIDTH);
            rc = TL_EXIT_USAGE;
        }
    }
    if (rc >= 0) {
        tl_cli_release(&cli);
        return rc;
    }
    const char *paths[] = { json, md };
    if ((rc = tl_cli_check_outputs(&cli, paths, 2)) >= 0)
        return rc;
    size_t n = (size_t)cli.nargs;
    tl_aggregate *runs = calloc(n, sizeof *runs);
    const char **labels = calloc(n, sizeof *labels);
    size_t loaded = 0, warnings = 0;
    tl_trend t;
    memset(&t, 0, sizeof t);
    if (runs == NULL || labels == NULL) {
        fprintf(stderr, "tally: out of memory\n");
        rc = TL_EXIT_NOMEM;
        goto out;
    }
    for (size_t k = 0; k < n; k++, loaded++) {
        labels[k] = cli.inputs[cli.arg_start[k]];
        if ((rc = tl_pipeline_run_arg(&cli, (int)k, &runs[k], &warnings)) != TL_EXIT_OK) {
            loaded++; /* released below either way */
            goto out;
        }
    }
    if (tl_trend_run_series(&t, runs, labels, n, threshold_pct, alpha) != 0) {
        fprintf(stderr, "tally: out of memory while comparing the runs\n");
        rc = TL_EXIT_NOMEM;
        goto out;
    }
    rc = tl_cli_write_outputs(&cli, paths, 2, 1, write_output, &t);
    if (rc != TL_EXIT_OK)
        goto out;
    if (!cli.quiet)
        tl_render_trend_console(stdout, &t, tl_text_width((int)want, STDOUT_FILENO));
    if (fail && t.fails) {
        fprintf(stderr, "tally: regression: the series ends slower: run %zu's step time is %+.1f%% against run %zu\n",
                (size_t)(t.last_change - t.runs) + 1, t.last_change->delta_pct, t.last_change->ref + 1);
        rc = TL_EXIT_GATE;
    } else {
        rc = tl_cli_strict(&cli, rc, warnings);
    }
out:
    tl_trend_release(&t);
    for (size_t k = 0; k < loaded && runs; k++)
        tl_aggregate_release(&runs[k]);
    free(runs);
    free(labels);
    tl_cli_release(&cli);
    return rc;
}
