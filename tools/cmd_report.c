/*
 * cmd_report.c - `tally report INPUT... [-o report.html] [--title T]
 * [--json aggregate.json] [--markdown summary.md]`: the aggregate rendered as
 * one self-contained HTML page, plus optionally its JSON and a Markdown
 * summary for CI job pages. Only the outputs asked for are written; with none
 * asked for, report.html (and stderr says so). The date shown comes from
 * SOURCE_DATE_EPOCH when set, so the same inputs give the same bytes.
 *
 * One input's way from here to the page, header by header: cli.h
 * (tl_cli_analyze), ingest.h, profile.h, identity.h (settled in ingest),
 * session.h, aggregate.h, render.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
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

/* Open every output asked for first (so a bad one fails before a byte is
 * written anywhere, standard output included), render each, then commit
 * them together. TL_EXIT_OK, TL_EXIT_OUTPUT or TL_EXIT_NOMEM. */
static int render(tl_cli *cli, const char *const paths[3], const tl_aggregate *a, const tl_report_options *ro)
{
    tl_output *o[3] = { NULL, NULL, NULL };
    for (size_t i = 0; i < 3; i++)
        if (paths[i] && (o[i] = tl_cli_open_output(cli, paths[i], 0)) == NULL)
            return TL_EXIT_OUTPUT;
    if (o[0] && tl_render_html(o[0]->f, a, ro) != 0) {
        fprintf(stderr, "tally: %s: out of memory while rendering\n", paths[0]);
        return TL_EXIT_NOMEM;
    }
    if (o[1]) {
        tl_json j;
        tl_json_init(&j, tl_output_write, o[1]);
        tl_aggregate_write(&j, a, "tally " TALLY_VERSION);
        tl_json_finish(&j); /* write errors are seen at commit (ferror) */
    }
    if (o[2] && tl_render_markdown(o[2]->f, a, ro) != 0) {
        fprintf(stderr, "tally: %s: out of memory while rendering\n", paths[2]);
        return TL_EXIT_NOMEM;
    }
    return tl_cli_commit_outputs(cli);
}

int tl_cmd_report(int argc, char **argv)
{
    int whole = 0;
    const char *out = NULL, *title = NULL, *json = NULL, *md = NULL;
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out, "the HTML report (- for standard output)", "FILE" },
        { "--title", "-t", 1, NULL, &title, "the report's title", "T" },
        { "--json", NULL, 1, NULL, &json, "the aggregate JSON (schema/tally-aggregate.schema.json)", "FILE" },
        { "--markdown", NULL, 1, NULL, &md, "a Markdown summary (for a CI job summary)", "FILE" },
        { "--whole-trace", NULL, 0, &whole, NULL, "GPU breakdown over the whole trace, not the ProfilerStep window", NULL },
        { 0 },
    };
    const tl_cli_spec spec = {
        "report", "INPUT...", "Read every input and write one self-contained HTML report of the run.",
        "Only the outputs asked for are written. With none of -o, --json, --markdown,\n"
        "the HTML goes to " DEFAULT_OUTPUT " (and stderr says so).",
        opts, 1, -1,
    };
    tl_cli cli;
    int rc = tl_cli_begin(&cli, argc, argv, &spec);
    if (rc >= 0)
        return rc;
    if (out == NULL && json == NULL && md == NULL) {
        out = DEFAULT_OUTPUT;
        if (!cli.quiet)
            fprintf(stderr, "tally: no output asked for; writing the HTML report to %s (-o FILE names it)\n", out);
    }
    const char *paths[] = { out, json, md };
    for (size_t i = 0; i < 3; i++)
        if (paths[i] && tl_cli_check_output(&cli, paths[i]) != 0) {
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
        tl_report_options ro = { title, report_date(), TALLY_VERSION };
        rc = render(&cli, paths, &agg, &ro);
        if (rc == TL_EXIT_OK && !cli.quiet)
            for (size_t i = 0; i < 3; i++)
                if (paths[i] && strcmp(paths[i], "-") != 0)
                    fprintf(stderr, "tally: wrote %s\n", paths[i]);
        if (rc == TL_EXIT_OK && cli.strict && warnings)
            rc = TL_EXIT_GATE;
    }
    tl_aggregate_release(&agg);
    tl_cli_release(&cli);
    return rc;
}
