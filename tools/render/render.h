/*
 * render.h - the render stage: an aggregate into the outputs people read.
 * Render never parses input; everything comes from the aggregate (and its
 * sessions' timelines). Every string that came from an input is escaped for
 * the context it lands in (HTML text, attribute, SVG, Markdown).
 */
#ifndef TALLY_RENDER_H
#define TALLY_RENDER_H

#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"

typedef struct tl_report_options {
    const char *title;          /* --title; NULL: "tally report" */
    int64_t generated_unix_s;   /* the date shown: SOURCE_DATE_EPOCH when set, else now */
    const char *version;        /* tally's version */
} tl_report_options;

/* The HTML report: one self-contained page (inline CSS and SVG, no script
 * needed, nothing fetched). The same aggregate and options give the same
 * bytes. Returns 0, or -1 when out of memory (out's errors are the caller's
 * to check). */
int tl_render_html(FILE *out, const tl_aggregate *a, const tl_report_options *o);

/* GitHub-flavoured Markdown for CI job summaries: headline, recommendations
 * and the key tables, without links; stays under 1 MiB whatever the input. */
int tl_render_markdown(FILE *out, const tl_aggregate *a, const tl_report_options *o);

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

/* The assets compiled into the binary (cmake/embed.cmake). */
extern const char tl_asset_report_html[];
extern const size_t tl_asset_report_html_len;
extern const char tl_asset_report_css[];
extern const size_t tl_asset_report_css_len;

#endif
