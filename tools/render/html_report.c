/*
 * html_report.c - tl_render_html: the report page. The template
 * (templates/report.html) gives the frame; {{sections}} is filled by one
 * function per section, in docs/architecture.md's order (html_sections.h).
 * Everything here is a function of the aggregate and the options, written in
 * a fixed order, so the same inputs give the same bytes.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "labels.h"
#include "html_sections.h"
#include "rank_pick.h"
#include "render.h"
#include "units.h"

/* ---- helpers shared by the sections -------------------------------------------------- */

void tl_html_open(tl_html *h, const char *id, const char *title)
{
    fprintf(h->f, "<section id=\"%s\" aria-labelledby=\"%s-h\">\n<h2 id=\"%s-h\">%s</h2>\n", id, id, id, title);
}

void tl_html_close(tl_html *h)
{
    fputs("</section>\n", h->f);
}

void tl_html_none(tl_html *h, const char *text)
{
    fprintf(h->f, "<p class=\"none\">%s</p>\n", text);
}

void tl_html_more(tl_html *h, size_t shown, size_t total, const char *what)
{
    if (total > shown)
        fprintf(h->f, "<p class=\"more\">and %zu more %s</p>\n", total - shown, what);
}

const char *tl_html_chart_id(tl_html *h, char *buf, size_t len)
{
    snprintf(buf, len, "c%d", ++h->charts);
    return buf;
}

void tl_html_code(FILE *f, const char *name, size_t max)
{
    char *full = tl_labels_full(name), *label = NULL;
    const char *shown = full ? full : name;
    if (max && tl_labels_cols(shown) > max) {
        char *c = tl_labels_compact(shown, 0);
        label = c ? tl_labels_fit(c, max, 0, 0) : NULL;
        free(c);
    }
    if (label != NULL) {
        fputs("<code title=\"", f);
        tl_escape_attr_n(f, shown, TL_HTML_NAME_MAX);
        fputs("\">", f);
        tl_escape_html(f, label);
    } else {
        fputs("<code>", f);
        tl_html_breakable(f, shown, TL_HTML_NAME_MAX);
    }
    fputs("</code>", f);
    free(label);
    free(full);
}

void tl_html_name_cell(FILE *f, const char *label, const char *full)
{
    fputs("<code class=\"lbl\">", f);
    tl_escape_html(f, label);
    fputs("</code>", f);
    if (strcmp(label, full) != 0) {
        /* A long signature (a mangled CUTLASS kernel runs to 30 lines) shows
         * its first lines; the <details> opens it whole, without script. */
        int clamp = tl_labels_cols(full) > TL_HTML_FULL_CLAMP_COLS;
        fputs(clamp ? "<details class=\"sig\"><summary><code class=\"full\">" : "<code class=\"full\">", f);
        tl_html_breakable(f, full, TL_HTML_NAME_MAX);
        fputs(clamp ? "</code></summary></details>" : "</code>", f);
    }
}

/* Where a long name or path may wrap: after a separator between its parts (a
 * path's directories, a C++ name's scopes, arguments and template arguments).
 * Inside a part - a file name, an identifier, a tag - only when the part is too
 * long to stay whole (TL_HTML_WORD_COLS), and then after '_', '.', '-' or '='. */
static int break_between(char c)
{
    return c == '/' || c == '\\' || c == ',' || c == ':' || c == '<' || c == '(' || c == '&' || c == ' ';
}

static int break_within(char c)
{
    return c == '_' || c == '.' || c == '-' || c == '=';
}

static int break_char(char c)
{
    return break_between(c) || break_within(c);
}

void tl_html_breakable(FILE *f, const char *s, size_t max)
{
    size_t n = tl_escape_cut(s, max), from = 0, part = 0;
    int long_part = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == part) { /* a new part: does it need breaks inside? */
            size_t e = i;
            while (e < n && !break_between(s[e]))
                e++;
            part = e + 1;
            long_part = e - i > TL_HTML_WORD_COLS;
        }
        /* a space breaks by itself */
        int at = (break_between(s[i]) && s[i] != ' ') || (long_part && break_within(s[i]));
        if (at && i + 1 < n && !break_char(s[i + 1])) {
            char *seg = strndup(s + from, i + 1 - from);
            if (seg == NULL)
                break;
            tl_escape_html(f, seg);
            free(seg);
            fputs("<wbr>", f);
            from = i + 1;
        }
    }
    char *rest = strndup(s + from, n - from);
    if (rest != NULL)
        tl_escape_html(f, rest);
    free(rest);
    if (n < strlen(s))
        fputs("\xe2\x80\xa6", f);
}

void tl_html_td(FILE *f, double v, int unit)
{
    char b[48];
    fprintf(f, "<td class=\"num\">%s</td>", tl_units_fmt(b, sizeof b, v, unit));
}

unsigned char *tl_html_ranks_drawn(const tl_aggregate *a, size_t max, size_t *n)
{
    return tl_rank_pick(a, max, n); /* the ranks every output lists (rank_pick.h) */
}

void tl_html_ranks_drawn_note(tl_html *h, size_t k, size_t n)
{
    if (k < n)
        fprintf(h->f,
                "<p class=\"more\">%zu of %zu ranks drawn: the stragglers, the ranks with the shortest and "
                "longest mean step, the ranks at its 10th, 25th, 50th, 75th and 90th percentile, and an even "
                "sample of the rest</p>\n",
                k, n);
}

void tl_html_details(FILE *f, const char *summary)
{
    fprintf(f, "<details>\n<summary>%s</summary>\n", summary);
}

void tl_html_details_end(FILE *f)
{
    fputs("</details>\n", f);
}

/* ---- the page -------------------------------------------------------------------------- */

static const struct {
    const char *id, *title;
    void (*write)(tl_html *);
} sections[] = {
    { "headline", "Summary", tl_html_headline },
    { "waits", "Waits", tl_html_waits },
    { "recommendations", "Recommendations", tl_html_recommendations },
    { "per-rank", "Ranks", tl_html_ranks },
    { "breakdown", "Stages and ops", tl_html_breakdown },
    { "calltree", "Call tree", tl_html_calltree },
    { "steps", "Step time per rank", tl_html_steps },
    { "gpu", "GPU time breakdown", tl_html_gpu },
    { "timelines", "Timelines", tl_html_timelines },
    { "step-categories", "Step time by category", tl_html_stepcats },
    { "kernels", "Kernels", tl_html_kernels },
    { "memory", "Memory", tl_html_memory },
    { "telemetry", "Telemetry", tl_html_telemetry },
    { "sessions", "Sessions", tl_html_sessions },
    { "inputs", "Inputs", tl_html_inputs },
    { "system", "System", tl_html_system },
};

static void nav(FILE *f)
{
    fputs("<nav aria-label=\"Sections\"><ul>", f);
    for (size_t i = 1; i < sizeof sections / sizeof sections[0]; i++)
        fprintf(f, "<li><a href=\"#%s\">%s</a></li>", sections[i].id, sections[i].title);
    fputs("</ul></nav>\n", f);
}

static void write_sections(tl_html *h)
{
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        if (i == 1)
            nav(h->f);
        sections[i].write(h);
    }
}

static void meta(FILE *f, const tl_aggregate *a, const tl_report_options *o)
{
    size_t skipped = 0;
    char d[40];
    for (size_t i = 0; i < a->nsessions; i++)
        skipped += tl_identity_standing(&a->sessions[i].id) == TL_STANDING_NOT_READ;
    fprintf(f, "<p class=\"meta\">%zu rank%s \xc2\xb7 %zu input%s", a->nranks, a->nranks == 1 ? "" : "s", a->nsessions,
            a->nsessions == 1 ? "" : "s");
    if (skipped)
        fprintf(f, " (%zu skipped)", skipped);
    /* Say what was used: a rank with fewer than two ProfilerSteps falls back
     * to its whole trace even when the option asks for the step window. */
    size_t stepped = 0, gpu = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        gpu += a->ranks[i].gpu.present;
        stepped += a->ranks[i].gpu.present && !a->ranks[i].gpu.whole_trace;
    }
    const char *window = a->opt.whole_trace || stepped == 0 ? "whole trace"
                         : stepped == gpu                   ? "ProfilerSteps"
                                          : "ProfilerSteps (whole trace on ranks with fewer than 2 steps)";
    /* no GPU events at all: no window to speak of */
    if (gpu > 0)
        fprintf(f, " \xc2\xb7 GPU window: %s", window);
    fprintf(f, " \xc2\xb7 generated %s</p>\n", tl_units_date(d, sizeof d, o->generated_unix_s));
}

/* Write the value of one {{key}}; 0 when the key is unknown. */
static int fill(FILE *f, const tl_page *p, const char *key, size_t len, int *rc)
{
    if (len == 5 && memcmp(key, "title", 5) == 0)
        tl_escape_html(f, p->title);
    else if (len == 7 && memcmp(key, "version", 7) == 0)
        tl_escape_html(f, p->version ? p->version : "");
    else if (len == 4 && memcmp(key, "meta", 4) == 0)
        p->meta(f, p->ctx);
    else if (len == 3 && memcmp(key, "css", 3) == 0)
        fwrite(tl_asset_report_css, 1, tl_asset_report_css_len, f);
    else if (len == 8 && memcmp(key, "sections", 8) == 0)
        *rc = p->body(f, p->ctx);
    else if (len == 6 && memcmp(key, "footer", 6) == 0)
        p->footer(f, p->ctx);
    else
        return 0;
    return 1;
}

int tl_render_page(FILE *out, const tl_page *p)
{
    const char *t = tl_asset_report_html, *end = t + tl_asset_report_html_len;
    int rc = 0;
    while (t < end) {
        const char *open = memmem(t, (size_t)(end - t), "{{", 2);
        const char *close = open ? memmem(open + 2, (size_t)(end - open - 2), "}}", 2) : NULL;
        if (open == NULL || close == NULL) {
            fwrite(t, 1, (size_t)(end - t), out);
            break;
        }
        fwrite(t, 1, (size_t)(open - t), out);
        if (!fill(out, p, open + 2, (size_t)(close - open - 2), &rc))
            fwrite(open, 1, (size_t)(close + 2 - open), out);
        t = close + 2;
    }
    return rc;
}

static void report_meta(FILE *f, void *ctx)
{
    tl_html *h = ctx;
    meta(f, h->a, h->o);
}

static int report_body(FILE *f, void *ctx)
{
    (void)f;
    tl_html *h = ctx;
    write_sections(h);
    return h->oom ? -1 : 0;
}

static void report_footer(FILE *f, void *ctx)
{
    tl_html *h = ctx;
    char d[40];
    fputs("Generated by tally ", f);
    tl_escape_html(f, h->o->version ? h->o->version : "");
    fprintf(f, " on %s. The numbers and their definitions: docs/analysis.md.",
            tl_units_date(d, sizeof d, h->o->generated_unix_s));
}

int tl_render_html(FILE *out, const tl_aggregate *a, const tl_report_options *o)
{
    tl_html h = { out, a, o, 0, 0 };
    tl_page p = { o->title ? o->title : "tally report", o->version, report_meta, report_body, report_footer, &h };
    return tl_render_page(out, &p);
}
