/*
 * render.h - the render stage: an aggregate into the outputs people read.
 * Render never parses input; everything comes from the aggregate (and its
 * sessions' timelines), a comparison of two, or for `tally inspect` the run
 * that ingest read. Every output of the `tally` command is written here; the
 * commands parse options, call the stages and commit what these write. Every
 * string that came from an input is escaped for the context it lands in
 * (HTML text, attribute, SVG, Markdown, the console).
 *
 * Render shows an input's identity and never decides it: a session is in a
 * table, a chart or a count of "used" inputs exactly when tl_session_counts
 * (session.h) says so, and the inputs that are not say why from
 * tl_identity_standing (identity.h) -- a companion with the report it
 * belongs to, another run, not read -- with their problems' texts.
 */
#ifndef TALLY_RENDER_H
#define TALLY_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"
#include "compare.h"
#include "trend.h"
#include "watch.h"
#include "ingest.h"
#include "json_writer.h"

typedef struct tl_report_options {
    const char *title;        /* --title; NULL: "tally report" */
    int64_t generated_unix_s; /* the date shown: SOURCE_DATE_EPOCH when set, else now */
    const char *version;      /* tally's version */
} tl_report_options;

/* The HTML report: one self-contained page (inline CSS and SVG, no script
 * needed, nothing fetched). The same aggregate and options give the same
 * bytes. Returns 0, or -1 when out of memory (out's errors are the caller's
 * to check). */
int tl_render_html(FILE *out, const tl_aggregate *a, const tl_report_options *o);

/* GitHub-flavoured Markdown for CI job summaries: headline, recommendations
 * and the key tables, without links; stays under 1 MiB whatever the input. */
int tl_render_markdown(FILE *out, const tl_aggregate *a, const tl_report_options *o);

/* One Chrome Trace Event file of the whole job for Perfetto UI and
 * chrome://tracing (chrome_trace.c; docs/analysis.md, "Merged trace"): a
 * process per rank with its steps, timeline lanes and waits in collectives,
 * clocks aligned by the waits' offsets, and a "tally findings" process; at
 * most TL_TRACE_MAX_EVENTS events, the bound and the count left out in its
 * otherData. gzip: write it gzip-compressed. Deterministic. Returns 0, or -1
 * when out of memory or a write failed. */
int tl_render_trace(FILE *out, const tl_aggregate *a, const char *version, int gzip);

/* One page of tally's (the report, the compare page): the template
 * templates/report.html with assets/report.css, so both pages are one
 * product. The callbacks write the header's lines under the title ({{meta}},
 * whole <p> elements), the page's sections ({{sections}}) and the footer's
 * text ({{footer}}); body returns 0 or -1 (out of memory), which
 * tl_render_page returns. title and version are escaped here. */
typedef struct tl_page {
    const char *title;
    const char *version;
    void (*meta)(FILE *f, void *ctx);
    int (*body)(FILE *f, void *ctx);
    void (*footer)(FILE *f, void *ctx);
    void *ctx;
} tl_page;
int tl_render_page(FILE *out, const tl_page *p);

/* ---- JSON -------------------------------------------------------------------
 * In aggregate_json.c and partial_json.c. All write through j (tl_json_finish
 * is the caller's). */

/* The aggregate document (schema/tally-aggregate.schema.json), with every
 * session result as in a partial, so that an aggregate is an input too: up
 * to TL_JSON_RANKS_FULL ranks, or with all set (--json-all). Past it, its size
 * is bounded: the ranks rank_pick.h picks (TL_RANKS_PICKED) keep their full
 * rows and sessions, every rank a short row in "rank_rows", and "detail" says
 * how many were left out; such a document is refused as an input. */
#define TL_JSON_RANKS_FULL 256
void tl_aggregate_write(tl_json *j, const tl_aggregate *a, const char *producer, int all);
/* The partial aggregate (schema/tally-partial.schema.json): a's analysis
 * options and every session result, exactly, for tally merge and tally-mpi;
 * ingest's tl_partial_read (partial.h) reads it back. */
void tl_partial_write(tl_json *j, const tl_aggregate *a, const char *producer);
/* Its parts, which the aggregate carries too: the "options" object and the
 * "sessions" array, by the field tables of ingest's partial.h. */
void tl_partial_write_options(tl_json *j, const tl_analyze_options *o);
/* keep: NULL, every session; else only those with keep[i] != 0. threads > 1 writes that many
 * sessions at once (the same bytes). */
void tl_partial_write_sessions(tl_json *j, const tl_session *s, size_t n, const unsigned char *keep, int threads);

/* ---- console ----------------------------------------------------------------
 * What the commands print on standard output (a stream of term.h's, which
 * shows control characters from inputs escaped). Write errors on out are the
 * caller's to check. */

/* `tally summary` (summary_text.c): a line counting sessions, ranks and the
 * run's warnings, the headline, notes and findings, the rules that did not
 * apply, the top names by total time per group with their across-rank
 * columns, per rank steps, GPU and memory, the across-rank metrics,
 * diffusion, telemetry, counters, events and hosts, memory snapshots and
 * each stage per session. Everything fits width columns (text_table.h). */
void tl_render_summary(FILE *out, const tl_aggregate *a, size_t warnings, size_t width);

/* `tally inspect` (inspect_text.c): what each profile of the run is, a
 * record per profile: format, rank and how it was found, session, events by
 * phase and category, contents, time span, truncation, warnings. */
void tl_render_inspect(FILE *out, const tl_run *run);
/* `tally inspect --json` (inspect_json.c): one array with an object per
 * profile of the run and one per input that could not be read at all, and a
 * newline (tl_json_finish is the caller's). */
void tl_inspect_write_json(tl_json *j, const tl_run *run);

/* ---- compare ---------------------------------------------------------------
 * The renderers of a comparison (analyze/compare.h), in compare_html.c and
 * compare_text.c, which print rows alike through compare_rows.h. Each
 * writes to out and returns 0, or -1 when out of memory (write errors on out
 * are the caller's to check with ferror/fclose). Every string from an input
 * is escaped for its context. */

/* One self-contained HTML page (inline CSS and SVG, no script, nothing
 * fetched): headline, delta bars by impact, step times and GPU breakdowns
 * side by side, the rows, added and removed names. Deterministic. */
int tl_render_compare_html(FILE *out, const tl_compare *c, const char *version);
/* GitHub-flavoured Markdown for CI job summaries; rows are capped so the
 * text stays well under 1 MiB whatever the inputs. */
int tl_render_compare_markdown(FILE *out, const tl_compare *c);
/* The console's line (`tally compare: 2 regressions, ...; geomean ratio ...`)
 * and the gate's failures, one line each ("tally: regression: ..."; names
 * escaped, term.h), for --fail-on-regression. */
void tl_render_compare_console(FILE *out, const tl_compare *c);
void tl_render_compare_regressions(FILE *out, const tl_compare *c);
/* JUnit XML: a <testsuites> root, one <testsuite> per group, one <testcase>
 * per compared row (both sides present); a regression is a <failure>, too
 * few samples <skipped/>. */
int tl_render_compare_junit(FILE *out, const tl_compare *c);
/* The JSON document (schema/tally-compare.schema.json), in compare_json.c. */
void tl_compare_write_json(tl_json *j, const tl_compare *c, const char *producer);

/* ---- trend -----------------------------------------------------------------
 * `tally trend` (analyze/trend.h), in trend_text.c: the runs as a console
 * table fitting width (the run names the flexible column) with the change
 * points under it, the same as a Markdown table, and the JSON document
 * (schema/tally-trend.schema.json). */
void tl_render_trend_console(FILE *out, const tl_trend *t, size_t width);
int tl_render_trend_markdown(FILE *out, const tl_trend *t);
void tl_trend_write_json(tl_json *j, const tl_trend *t, const char *producer);

/* ---- watch -----------------------------------------------------------------
 * One frame of `tally watch` (analyze/watch.h), in watch_text.c: the report's
 * path, when it was written (written_s, seconds since the epoch) and its age
 * at now_s, the steps and their rate, the largest stages, each sampled
 * series' latest value with a sparkline. Plain text lines. */
void tl_render_watch_frame(FILE *out, const tl_watch_view *v, const char *path, int64_t written_s, int64_t now_s);

/* The assets compiled into the binary (cmake/embed.cmake). */
extern const char tl_asset_report_html[];
extern const size_t tl_asset_report_html_len;
extern const char tl_asset_report_css[];
extern const size_t tl_asset_report_css_len;

#endif
