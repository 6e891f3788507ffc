/*
 * cmd_report.c - `tally report INPUT... [-o report.html] [--title T]
 * [--json aggregate.json] [--markdown summary.md] [--trace job.trace.json.gz]`:
 * the aggregate rendered as one self-contained HTML page, plus optionally its
 * JSON, a Markdown summary for CI job pages and one merged Chrome trace of
 * the job for Perfetto (gzip-compressed when its name ends in .gz). Only the outputs asked for are written; with none
 * asked for, report.html (and stderr says so). The date shown comes from
 * SOURCE_DATE_EPOCH when set, so the same inputs give the same bytes.
 *
 * One input's way from here to the page, header by header: cli.h
 * (tl_pipeline_run), ingest.h, profile.h, identity.h (settled in ingest),
 * session.h, aggregate.h (with metrics.h, the per-rank metrics), render.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "pipeline.h"
#include "commands.h"
#include "render.h"

/* The HTML's name when no output is asked for. */
#define DEFAULT_OUTPUT "report.html"

static int64_t report_date(void)
{
    const char *e = getenv("SOURCE_DATE_EPOCH");
    if (e != NULL && *e) {
        char *end;
        errno = 0;
        long long v = strtoll(e, &end, 10);
        if (errno == 0 && *end == '\0' && v >= 0)
            return v;
        fprintf(stderr, "tally: ignoring SOURCE_DATE_EPOCH=%s: not a number of seconds\n", e);
    }
    return (int64_t)time(NULL);
}

typedef struct report_doc {
    const tl_aggregate *agg;
    const tl_report_options *ro;
    int trace_gzip; /* the --trace path ends in .gz */
    int json_all;   /* --json-all */
} report_doc;

/* Output i of tl_cmd_report's paths (-o, --json, --markdown, --trace): the
 * HTML report, the aggregate JSON, the Markdown summary, the merged trace.
 * 0, or -1 when out of memory. */
static int write_output(tl_output *o, size_t i, void *ctx)
{
    const report_doc *d = ctx;
    if (i == 3)
        return tl_render_trace(o->f, d->agg, d->ro->version, d->trace_gzip);
    if (i == 1) {
        tl_cli_aggregate_json(o, d->agg, 0, d->json_all);
        return 0;
    }
    return i == 0 ? tl_render_html(o->f, d->agg, d->ro) : tl_render_markdown(o->f, d->agg, d->ro);
}

int tl_cmd_report(int argc, char **argv, const tl_engine *engine)
{
    const char *out = NULL, *title = NULL, *json = NULL, *md = NULL, *trace = NULL;
    tl_cli cli;
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out, "the HTML report (- for standard output)", "FILE" },
        { "--title", "-t", 1, NULL, &title, "the report's title", "T" },
        { "--json", NULL, 1, NULL, &json, "the aggregate JSON (schema/tally-aggregate.schema.json)", "FILE" },
        { "--markdown", NULL, 1, NULL, &md, "a Markdown summary (for a CI job summary)", "FILE" },
        { "--trace", NULL, 1, NULL, &trace, "one Chrome trace of the whole job for Perfetto (.gz: compressed)",
          "FILE" },
        TL_CLI_OPT_JSON_ALL(cli),
        TL_CLI_OPT_WHOLE_TRACE(cli),
        { 0 },
    };
    const tl_cli_spec spec = {
        "report",
        "INPUT...",
        "Read every input and write one self-contained HTML report of the run.",
        "Only the outputs asked for are written. With none of -o, --json, --markdown,\n"
        "--trace, the HTML goes to " DEFAULT_OUTPUT " (and stderr says so).",
        opts,
        1,
        -1,
    };
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0)
        return rc;
    const char *paths[] = { out, json, md, trace };
    tl_cli_default_output(&cli, paths, 4, DEFAULT_OUTPUT, "report");
    if ((rc = tl_cli_check_outputs(&cli, paths, 4)) >= 0)
        return rc;
    cli.analyze.drop_samples = json == NULL; /* only the JSON aggregate carries them */
    tl_aggregate agg;
    size_t warnings = 0;
    tl_spill_limits(&cli.analyze.spill_after,
                    &cli.analyze.spill_after_bytes); /* many ranks: bounded memory (spill.h) */
    rc = tl_pipeline_run(&cli, &cli.analyze, &agg, &warnings);
    if (rc == TL_EXIT_OK) {
        tl_report_options ro = { title, report_date(), TALLY_VERSION };
        size_t tlen = trace ? strlen(trace) : 0;
        report_doc doc = { &agg, &ro, tlen >= 3 && strcmp(trace + tlen - 3, ".gz") == 0, cli.json_all };
        rc = tl_cli_write_outputs(&cli, paths, 4, agg.opt.output_jobs, write_output, &doc);
        if (rc == TL_EXIT_OK && !cli.quiet)
            for (size_t i = 0; i < 4; i++)
                if (paths[i] && strcmp(paths[i], "-") != 0)
                    fprintf(stderr, "tally: wrote %s\n", paths[i]);
        rc = tl_cli_strict(&cli, rc, warnings);
    }
    if (tl_cli_free_at_exit()) /* else the exit frees it, at once */
        tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
