/*
 * cmd_compare.c - `tally compare BASELINE CANDIDATE [-o compare.html]
 * [--json F] [--markdown F] [--junit F] [--threshold 5%] [--metric M]
 * [--normalize] [--correction holm|none] [--max-untested-change 25%]
 * [--untested-floor 1%] [--materiality P] [--memory-threshold P] [--title T] [--labels BASE,CAND]
 * [--fail-on-regression]`: two runs side by side,
 * with a significance test per name and metric and a verdict
 * (tools/analyze/compare.h, docs/compare.md). `tally compare --sessions
 * INPUT` compares the first session of each rank of one input with its last.
 *
 * Each side is one argument: anything `tally report` reads (a directory, an
 * archive, a file), a partial aggregate from `tally aggregate --partial`, or
 * an input list (@FILE) of such paths.
 * With --fail-on-regression the exit code is the CI gate: 1 when a primary
 * row that is material to the step (--materiality: its change per step at
 * least the threshold's share of the step time) regressed, or changed
 * beyond --max-untested-change where it could not
 * be tested (a stage's total: by --untested-floor of the run's time or
 * more; each is printed on stderr), 0 otherwise. Ranks present on one
 * side only are warnings, and gate failures with --strict.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pipeline.h"
#include "commands.h"
#include "compare.h"
#include "render.h"

/* The HTML's name when no output is asked for. */
#define DEFAULT_OUTPUT "compare.html"

/* Output i of tl_cmd_compare's paths (-o, --json, --markdown, --junit): the
 * HTML page, the JSON, the Markdown summary, the JUnit XML. 0, or -1 when out
 * of memory. */
static int write_output(tl_output *o, size_t i, void *ctx)
{
    const tl_compare *c = ctx;
    tl_json j;
    switch (i) {
    case 0:
        return tl_render_compare_html(o->f, c, TALLY_VERSION);
    case 2:
        return tl_render_compare_markdown(o->f, c);
    case 3:
        return tl_render_compare_junit(o->f, c);
    default:
        tl_json_init(&j, tl_output_write, o);
        tl_compare_write_json(&j, c, "tally " TALLY_VERSION);
        tl_json_finish(&j); /* write errors are seen at commit (ferror) */
        return 0;
    }
}

/* Ranks on one side only: a warning each (a rank missing from the candidate
 * must not pass unnoticed); returns how many. */
static size_t warn_unmatched_ranks(const tl_compare *c)
{
    for (size_t i = 0; i < c->nbase_only; i++)
        fprintf(stderr, "tally: warning: rank %d is in the baseline only: the candidate has no input for it\n",
                c->ranks_base_only[i]);
    for (size_t i = 0; i < c->ncand_only; i++)
        fprintf(stderr, "tally: warning: rank %d is in the candidate only: the baseline has no input for it\n",
                c->ranks_cand_only[i]);
    return c->nbase_only + c->ncand_only;
}

typedef struct compare_args {
    const char *out, *json, *md, *junit, *threshold, *metric, *correction, *untested, *floor, *memory, *material;
    const char *title, *labels;
    char *labels_copy; /* --labels split at its comma (owned) */
    int fail, normalize, sessions;
} compare_args;

static int check_args(const tl_cli *cli, compare_args *a, tl_cmp_options *co)
{
    if (cli->nargs != (a->sessions ? 1 : 2)) {
        fprintf(stderr, "tally compare: needs exactly %s\n",
                a->sessions ? "one input with --sessions" : "two inputs, BASELINE and CANDIDATE");
        return -1;
    }
    tl_cmp_options_init(co);
    if (a->sessions) {
        co->session[0] = 0;
        co->session[1] = -2;
    }
    if (a->memory && tl_cli_parse_percent(a->memory, &co->memory_threshold_pct) != 0) {
        fprintf(stderr, "tally compare: --memory-threshold wants a percentage from 0 to 1000, like 10%%\n");
        return -1;
    }
    if (a->untested && tl_cli_parse_percent(a->untested, &co->max_untested_pct) != 0) {
        fprintf(stderr, "tally compare: --max-untested-change wants a percentage from 0 to 1000, like 25%%\n");
        return -1;
    }
    if (a->floor && tl_cli_parse_percent(a->floor, &co->untested_floor_pct) != 0) {
        fprintf(stderr, "tally compare: --untested-floor wants a percentage from 0 to 1000, like 1%%\n");
        return -1;
    }
    if (a->material && tl_cli_parse_percent(a->material, &co->material_pct) != 0) {
        fprintf(stderr, "tally compare: --materiality wants a percentage from 0 to 1000, like 5%%\n");
        return -1;
    }
    co->title = a->title;
    if (a->labels) {
        char *comma = strchr(a->labels, ',');
        if (comma == NULL || comma == a->labels || comma[1] == '\0' || strchr(comma + 1, ',') != NULL ||
            (a->labels_copy = strdup(a->labels)) == NULL) {
            fprintf(stderr,
                    "tally compare: --labels wants BASE,CAND (two names and one comma), like main@abc1234,PR 42\n");
            return -1;
        }
        a->labels_copy[comma - a->labels] = '\0';
        co->labels[0] = a->labels_copy;
        co->labels[1] = a->labels_copy + (comma - a->labels) + 1;
    }
    co->normalize = a->normalize;
    if (a->threshold && tl_cli_parse_percent(a->threshold, &co->threshold_pct) != 0) {
        fprintf(stderr, "tally compare: --threshold wants a percentage from 0 to 1000, like 5%%\n");
        return -1;
    }
    if (a->correction && strcmp(a->correction, "holm") != 0 && strcmp(a->correction, "none") != 0) {
        fprintf(stderr, "tally compare: --correction is holm or none, not '%s'\n", a->correction);
        return -1;
    }
    if (a->correction && !strcmp(a->correction, "none"))
        co->correction = TL_CMP_NO_CORRECTION;
    if (a->metric && (co->metric = tl_cmp_metric_parse(a->metric)) < 0) {
        fprintf(stderr, "tally compare: --metric is median, mean or total, not '%s'\n", a->metric);
        return -1;
    }
    return 0;
}

int tl_cmd_compare(int argc, char **argv, const tl_engine *engine)
{
    compare_args a;
    memset(&a, 0, sizeof a);
    tl_cli cli;
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &a.out, "the HTML page (- for standard output)", "FILE" },
        { "--json", NULL, 1, NULL, &a.json, "the comparison as JSON (schema/tally-compare.schema.json)", "FILE" },
        { "--markdown", NULL, 1, NULL, &a.md, "a Markdown summary for a CI job page (under 1 MiB)", "FILE" },
        { "--junit", NULL, 1, NULL, &a.junit, "JUnit XML: one test case per compared metric", "FILE" },
        { "--threshold", NULL, 1, NULL, &a.threshold,
          "a regression is a significant slowdown of more than P % (default 5%)", "P" },
        { "--metric", NULL, 1, NULL, &a.metric,
          "what the deltas and the geomean compare: median (default), mean, total", "M" },
        { "--normalize", NULL, 0, &a.normalize, NULL,
          "match names without template arguments, parameters and numeric suffixes", NULL },
        { "--correction", NULL, 1, NULL, &a.correction,
          "holm (default: Holm over the gate rows, Benjamini-Hochberg over the rest) or none (each row at alpha)",
          "C" },
        { "--max-untested-change", NULL, 1, NULL, &a.untested,
          "rows too small to test (one report a side) get a verdict beyond P % (default 25%); the gate honours it",
          "P" },
        { "--untested-floor", NULL, 1, NULL, &a.floor,
          "a stage's untested increase fails the gate only when it adds P % of its ranks' run time (default 1%; 0: "
          "always)",
          "P" },
        { "--materiality", NULL, 1, NULL, &a.material,
          "a stage, op or kernel fails the gate only when its change per step is P % of the step time or more (of the "
          "run's time without steps; default: --threshold)",
          "P" },
        { "--memory-threshold", NULL, 1, NULL, &a.memory,
          "peak memory (allocated, reserved, RSS) regresses beyond P % (default: --threshold)", "P" },
        { "--title", NULL, 1, NULL, &a.title, "what the comparison is, on the page, in the Markdown and the JSON",
          "T" },
        { "--labels", NULL, 1, NULL, &a.labels,
          "the runs' names instead of baseline and candidate (e.g. main@abc1234,PR 42)", "BASE,CAND" },
        { "--sessions", NULL, 0, &a.sessions, NULL, "one INPUT: each rank's first session against its last", NULL },
        { "--fail-on-regression", NULL, 0, &a.fail, NULL,
          "exit 1 when a gate row regressed (listed on stderr; docs/compare.md)", NULL },
        TL_CLI_OPT_WHOLE_TRACE(cli),
        { 0 },
    };
    const tl_cli_spec spec = {
        "compare",
        "BASELINE CANDIDATE",
        "Compare a baseline run with a candidate: per-name deltas, significance, verdicts.",
        "BASELINE and CANDIDATE are one input each: a directory, archive or file `tally report`\n"
        "reads, or a partial aggregate (tally aggregate --partial). With --sessions, one INPUT.\n"
        "Only the outputs asked for are written. With none of -o, --json, --markdown, --junit,\n"
        "the HTML goes to " DEFAULT_OUTPUT " (and stderr says so).",
        opts,
        1,
        2, /* two, or one with --sessions (check_args) */
    };
    tl_cmp_options co;
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0)
        return rc;
    if (check_args(&cli, &a, &co) != 0) {
        free(a.labels_copy);
        tl_cli_release(&cli);
        return TL_EXIT_USAGE;
    }
    const char *paths[] = { a.out, a.json, a.md, a.junit };
    tl_cli_default_output(&cli, paths, 4, DEFAULT_OUTPUT, "page");
    if ((rc = tl_cli_check_outputs(&cli, paths, 4)) >= 0) {
        free(a.labels_copy);
        return rc;
    }
    cli.analyze.sessions_across_runs = a.sessions;
    tl_aggregate base, cand;
    size_t wb = 0, wc = 0;
    rc = tl_pipeline_run_arg(&cli, 0, &base, &wb);
    /* --sessions: both sides are the one input, told apart by co.session. */
    int rc2 = a.sessions ? TL_EXIT_OK : tl_pipeline_run_arg(&cli, 1, &cand, &wc);
    tl_compare c;
    memset(&c, 0, sizeof c);
    if (rc != TL_EXIT_OK || rc2 != TL_EXIT_OK) {
        rc = rc == TL_EXIT_NOMEM || rc2 == TL_EXIT_NOMEM ? TL_EXIT_NOMEM : TL_EXIT_NO_INPUT;
        goto out;
    }
    if (tl_compare_run(&c, &base, a.sessions ? &base : &cand, &co) != 0) {
        fprintf(stderr, "tally: out of memory while comparing\n");
        rc = TL_EXIT_NOMEM;
        goto out;
    }
    rc = tl_cli_write_outputs(&cli, paths, 4, 1, write_output, &c);
    if (rc != TL_EXIT_OK)
        goto out;
    if (!cli.quiet)
        tl_render_compare_console(paths[0] && !strcmp(paths[0], "-") ? stderr : stdout, &c);
    size_t unmatched = warn_unmatched_ranks(&c);
    if (a.fail && c.gate_failures > 0) {
        tl_render_compare_regressions(stderr, &c);
        rc = TL_EXIT_GATE;
    } else {
        rc = tl_cli_strict(&cli, rc, wb + wc + unmatched);
    }
out:
    tl_compare_release(&c);
    tl_aggregate_release(&base);
    if (!a.sessions)
        tl_aggregate_release(&cand);
    free(a.labels_copy);
    tl_cli_release(&cli);
    return rc;
}
