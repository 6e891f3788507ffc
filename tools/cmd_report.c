/*
 * cmd_report.c - `tally report INPUT... [-o report.html] [--title T]
 * [--json aggregate.json] [--markdown summary.md]`: the aggregate rendered as
 * one self-contained HTML page, plus optionally its JSON and a Markdown
 * summary for CI job pages. The date shown comes from SOURCE_DATE_EPOCH when
 * set, so the same inputs give the same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "aggregate_json.h"
#include "cli.h"
#include "commands.h"
#include "output.h"
#include "render.h"

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

/* Write one output; returns TL_EXIT_OK or TL_EXIT_OUTPUT. */
static int write_html(const char *path, const tl_cli *cli, const tl_aggregate *a, const tl_report_options *ro)
{
    tl_output o;
    if (tl_output_open(&o, path, cli->inputs, cli->ninputs) != 0)
        return TL_EXIT_OUTPUT;
    if (tl_render_html(o.f, a, ro) != 0) {
        fprintf(stderr, "tally: %s: out of memory while rendering\n", path);
        tl_output_abort(&o);
        return TL_EXIT_OUTPUT;
    }
    return tl_output_close(&o) == 0 ? TL_EXIT_OK : TL_EXIT_OUTPUT;
}

static int write_markdown(const char *path, const tl_cli *cli, const tl_aggregate *a, const tl_report_options *ro)
{
    tl_output o;
    if (tl_output_open(&o, path, cli->inputs, cli->ninputs) != 0)
        return TL_EXIT_OUTPUT;
    if (tl_render_markdown(o.f, a, ro) != 0) {
        tl_output_abort(&o);
        return TL_EXIT_OUTPUT;
    }
    return tl_output_close(&o) == 0 ? TL_EXIT_OK : TL_EXIT_OUTPUT;
}

static int write_json(const char *path, const tl_cli *cli, const tl_aggregate *a)
{
    tl_output o;
    if (tl_output_open(&o, path, cli->inputs, cli->ninputs) != 0)
        return TL_EXIT_OUTPUT;
    tl_aggregate_write(tl_output_json(&o), a, "tally " TALLY_VERSION);
    return tl_output_close(&o) == 0 ? TL_EXIT_OK : TL_EXIT_OUTPUT;
}

int tl_cmd_report(int argc, char **argv)
{
    static const char usage[] =
        "usage: tally report INPUT... [-o report.html] [--title T] [--json aggregate.json] [--markdown summary.md]\n"
        "  -o FILE          the HTML report (default: report.html; - for standard output)\n"
        "  --title T        the report's title\n"
        "  --json FILE      also write the aggregate JSON\n"
        "  --markdown FILE  also write a Markdown summary (for a CI job summary)\n"
        "  --whole-trace    GPU breakdown over the whole trace, not the ProfilerStep window";
    tl_cli cli;
    int whole = 0;
    const char *out = "report.html", *title = NULL, *json = NULL, *md = NULL;
    const tl_cli_opt opts[] = {
        { "--output", "-o", 1, NULL, &out },
        { "--title", NULL, 1, NULL, &title },
        { "--json", NULL, 1, NULL, &json },
        { "--markdown", NULL, 1, NULL, &md },
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
        tl_report_options ro = { title, report_date(), TALLY_VERSION };
        int r1 = write_html(out, &cli, &agg, &ro);
        int r2 = json ? write_json(json, &cli, &agg) : TL_EXIT_OK;
        int r3 = md ? write_markdown(md, &cli, &agg, &ro) : TL_EXIT_OK;
        rc = r1 != TL_EXIT_OK || r2 != TL_EXIT_OK || r3 != TL_EXIT_OK ? TL_EXIT_OUTPUT
             : cli.strict && warnings                                 ? TL_EXIT_GATE
                                                                      : TL_EXIT_OK;
        if (rc == TL_EXIT_OK && !cli.quiet && out[0] != '-')
            fprintf(stderr, "tally: wrote %s\n", out);
    }
    tl_aggregate_release(&agg);
    free(cli.inputs);
    return rc;
}
