/*
 * html_sections.h - the sections of the HTML report, one function each, in
 * docs/architecture.md's order, and the small helpers they share.
 * html_report.c calls them in order between the template's header and footer.
 *
 * A section is <section id="..."><h2>..</h2>...</section>; one without data
 * says so in a line. Tables have a <caption> and <th scope>; every chart is
 * followed by its data as a table in <details>. Lists are bounded: the top
 * TL_HTML_TOP rows are shown, up to TL_HTML_MAX_ROWS in <details>, and the
 * rest are counted ("and K more").
 */
#ifndef TALLY_RENDER_HTML_SECTIONS_H
#define TALLY_RENDER_HTML_SECTIONS_H

#include <stdio.h>

#include "aggregate.h"
#include "render.h"

#define TL_HTML_TOP 25
#define TL_HTML_MAX_ROWS 200
#define TL_HTML_NAME_MAX 2000       /* bytes of a full name or path printed; longer ones end in "…" */
#define TL_HTML_LABEL_COLS 46       /* a name's label in charts and tables (svg.c's bar labels) */
#define TL_HTML_FULL_CLAMP_COLS 100 /* a full name under its label longer than this shows 2 lines, opens whole */
#define TL_HTML_WORD_COLS 24        /* a part of a name or path (between separators) longer than this wraps inside */

typedef struct tl_html {
    FILE *f;
    const tl_aggregate *a;
    const tl_report_options *o;
    int charts; /* charts so far, for page-unique ids */
    int oom;    /* an allocation failed: the page is incomplete */
} tl_html;

/* <section id><h2>title</h2> and </section>. */
void tl_html_open(tl_html *h, const char *id, const char *title);
void tl_html_close(tl_html *h);
/* A one-line paragraph saying there is no data (text is fixed, not escaped). */
void tl_html_none(tl_html *h, const char *text);
/* "and K more <what>" when shown < total. */
void tl_html_more(tl_html *h, size_t shown, size_t total, const char *what);
/* A new chart id ("c1", "c2", ...) into buf. */
const char *tl_html_chart_id(tl_html *h, char *buf, size_t len);
/* <code>name</code>: demangled; longer than max columns (0: no limit), a
 * label (labels.h) with the full name as its title, else the whole name,
 * breakable at its separators. */
void tl_html_code(FILE *f, const char *name, size_t max);
/* A table's name cell content: the label, and under it the full name when
 * the label is not the whole of it (the full name is always in the table). */
void tl_html_name_cell(FILE *f, const char *label, const char *full);
/* s escaped as HTML text with <wbr> after path and name separators, so it
 * wraps there and not inside words; cut to max bytes with "…". */
void tl_html_breakable(FILE *f, const char *s, size_t max);
/* <td> of a number in a unit (class num). */
void tl_html_td(FILE *f, double v, int unit);
/* <details><summary>text</summary> and </details>. */
void tl_html_details(FILE *f, const char *summary);
void tl_html_details_end(FILE *f);

/* Which ranks a chart or table draws when there are more than max: the
 * stragglers (and the rank the others wait for), the ranks with the
 * shortest and longest mean step, then an even sample of the rest --
 * never simply the lowest-numbered. A malloc'd mask by rank index (all set
 * when nranks <= max), *n the ranks set; NULL out of memory. */
unsigned char *tl_html_ranks_drawn(const tl_aggregate *a, size_t max, size_t *n);
/* "K of N ranks drawn: ..." when K < N. */
void tl_html_ranks_drawn_note(tl_html *h, size_t k, size_t n);

void tl_html_headline(tl_html *h);
void tl_html_waits(tl_html *h);
/* Collective bandwidth (html_collbw.c): a subsection at the end of Waits, nothing without sized collectives. */
void tl_html_collbw(tl_html *h);
void tl_html_recommendations(tl_html *h);
void tl_html_ranks(tl_html *h);
void tl_html_breakdown(tl_html *h);
/* Operators by input shape (html_shapes.c): a subsection at the end of Stages and ops, nothing without shapes. */
void tl_html_shapes(tl_html *h);
void tl_html_calltree(tl_html *h);
void tl_html_steps(tl_html *h);
/* Video diffusion (html_diffusion.c): a subsection of the steps section, nothing without records. */
void tl_html_diffusion(tl_html *h);
void tl_html_gpu(tl_html *h);
void tl_html_timelines(tl_html *h);
/* Step time by category (html_stepcats.c): one rank's steps and each rank's mean step. */
void tl_html_stepcats(tl_html *h);
void tl_html_kernels(tl_html *h);
/* How the top kernels (idx: name rows, n of them, by total) were launched (html_kinfo.c): nothing when no kernel says. */
void tl_html_kernel_launches(tl_html *h, const size_t *idx, size_t n);
void tl_html_memory(tl_html *h);
void tl_html_telemetry(tl_html *h);
/* The events (html_events.c): markers for the timelines and a subsection of
 * the timelines section with a strip per rank and a bounded table. */
void tl_html_events(tl_html *h);
/* The System section's "GPUs" entry: every GPU of each rank (html_telemetry.c). */
void tl_html_system_gpus(tl_html *h);
void tl_html_sessions(tl_html *h);
void tl_html_inputs(tl_html *h);
void tl_html_system(tl_html *h);

/* The time axes of the timelines and the memory chart (html_axis.c):
 * periods of time, each a chain of sessions whose time ranges overlap (the
 * ranks of one run); periods apart in time are drawn on their own axes. */
typedef struct tl_html_periods {
    size_t n;
    int64_t *start, *end; /* [n], ascending */
    int *of;              /* [nsessions]: the period of each session, -1 none */
} tl_html_periods;
int tl_html_periods_find(tl_html_periods *p, const tl_aggregate *a);
void tl_html_periods_release(tl_html_periods *p);
/* The range of a counted session's timeline and memory series (start >= end: none). */
void tl_html_session_range(const tl_session *s, int64_t *start, int64_t *end);

#endif
