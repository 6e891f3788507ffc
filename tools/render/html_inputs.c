/*
 * html_inputs.c - the closing sections: the sessions (each counted input,
 * per rank in start order), the inputs (every file, also the skipped ones
 * and companions, with its format, how its rank was found and its warnings)
 * and system information (devices, world sizes, formats, tally and its
 * options).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context_text.h"
#include "escape.h"
#include "html_sections.h"
#include "report_text.h"
#include "units.h"

#define MAX_WARNINGS 5 /* per input, the rest counted */
#define MAX_TAGS 16    /* per session in the sessions table, the rest counted */

static void path_cell(FILE *f, const char *path)
{
    fputs("<th scope=\"row\" class=\"path\">", f);
    tl_html_code(f, path ? path : "", 0);
    fputs("</th>", f);
}

/* ---- sessions ------------------------------------------------------------------------------------ */

static void session_row(FILE *f, const tl_session *s)
{
    char b[48];
    fprintf(f, "<tr><td class=\"num\">%d</td><td class=\"num\">%d</td>", s->id.rank, s->id.session);
    path_cell(f, s->id.path);
    fprintf(f, "<td>%s</td><td>%s</td>", tl_format_name(s->id.format), tl_units_time(b, sizeof b, s->start_ns));
    tl_html_td(f, s->span_ns >= 0 ? (double)s->span_ns : NAN, TL_UNIT_NS);
    fprintf(f, "<td class=\"num\">%zu</td><td class=\"num\">%llu</td><td class=\"num\">%zu</td><td class=\"wrap\">",
            s->nsteps, (unsigned long long)s->gpu.events,
            s->timeline.start_ns < s->timeline.end_ns ? s->timeline.nlanes : 0);
    tl_escape_html_n(f, s->device_name ? s->device_name : "\xe2\x80\x93", 100);
    fputs("</td><td class=\"tags\">", f);
    /* the run's tags (tally_tag, Inferix's session tags) */
    for (size_t i = 0; i < s->ntags && i < MAX_TAGS; i++) {
        fputs(i ? ", <code>" : "<code>", f);
        tl_html_breakable(f, s->tags[i], 140);
        fputs("</code>", f);
    }
    if (s->ntags > MAX_TAGS)
        fprintf(f, " and %zu more", s->ntags - MAX_TAGS);
    fputs("</td></tr>\n", f);
}

/* Each stage per session with its trend (drift.h), when ranks have several
 * sessions: sessions are kept apart, and this is where they meet. */
static void drift_table(tl_html *h)
{
    FILE *f = h->f;
    const tl_drift *d = &h->a->drift;
    if (d->nstages == 0)
        return;
    fprintf(f,
            "<div class=\"scroll\"><table id=\"drift-table\">\n<caption>Each stage per session: the median over "
            "the ranks of its time per call in that session (the step: its median whole step); the change from the "
            "first session to the last and the "
            "least-squares trend per session; a stage drifts beyond %.0f%% (tally compare --sessions tests the "
            "change)</caption>\n<thead><tr><th scope=\"col\">Stage</th>",
            TL_DRIFT_PCT);
    for (int k = 0; k < d->nsessions; k++)
        fprintf(f, "<th scope=\"col\">Session %d</th>", k + 1);
    fputs("<th scope=\"col\">Change</th><th scope=\"col\">Trend per session</th><th scope=\"col\"></th></tr>"
          "</thead>\n<tbody>\n",
          f);
    size_t shown = 0;
    for (size_t i = 0; i < d->nstages && shown < TL_HTML_MAX_ROWS; i++, shown++) {
        const tl_drift_stage *s = &d->stages[i];
        fputs("<tr><th scope=\"row\">", f);
        tl_escape_html_n(f, s->name, 100);
        fputs("</th>", f);
        for (int k = 0; k < d->nsessions; k++)
            tl_html_td(f, s->value[k], TL_UNIT_NS);
        if (isfinite(s->change_pct))
            fprintf(f, "<td class=\"num\">%+.1f%%</td><td class=\"num\">%+.1f%%</td>", s->change_pct, s->slope_pct);
        else
            fputs("<td class=\"num\">\xe2\x80\x93</td><td class=\"num\">\xe2\x80\x93</td>", f);
        fprintf(f, "<td>%s</td></tr>\n", s->drifts ? "<strong>drifts</strong>" : "");
    }
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, d->nstages + d->stages_dropped, "stages");
    if (d->sessions_dropped)
        fprintf(f, "<p class=\"note\">%d more sessions are not shown (at most %d columns).</p>\n", d->sessions_dropped,
                TL_DRIFT_MAX_SESSIONS);
}

void tl_html_sessions(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0, total = 0;
    tl_html_open(h, "sessions", "Sessions");
    for (size_t i = 0; i < h->a->nsessions; i++)
        total += tl_session_counts(&h->a->sessions[i]);
    if (total == 0) {
        tl_html_none(h, "No sessions: no input could be read as a profile.");
        tl_html_close(h);
        return;
    }
    fputs(
        "<div class=\"scroll\"><table id=\"sessions-table\">\n<caption>Every profile that counts, per rank in "
        "order of start time (two inputs of one rank are two sessions), with the tags of its run</caption>\n<thead><tr>"
        "<th scope=\"col\">Rank</th><th scope=\"col\">Session</th><th scope=\"col\">Path</th>"
        "<th scope=\"col\">Format</th><th scope=\"col\">Start (UTC)</th><th scope=\"col\">Span</th>"
        "<th scope=\"col\">Steps</th><th scope=\"col\">GPU events</th><th scope=\"col\">Lanes</th>"
        "<th scope=\"col\">Device</th><th scope=\"col\">Tags</th></tr></thead>\n<tbody>\n",
        f);
    for (size_t i = 0; i < h->a->nsessions && shown < TL_HTML_MAX_ROWS; i++)
        if (tl_session_counts(&h->a->sessions[i])) {
            session_row(f, &h->a->sessions[i]);
            shown++;
        }
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, total, "sessions");
    drift_table(h);
    tl_html_close(h);
}

/* ---- inputs -------------------------------------------------------------------------------------- */

static void warnings_cell(FILE *f, const tl_session *s)
{
    fputs("<td>", f);
    if (s->id.problems.n > 0) {
        fputs("<ul class=\"warnings\">", f);
        for (size_t w = 0; w < s->id.problems.n && w < MAX_WARNINGS; w++) {
            fputs("<li>", f);
            tl_escape_html_n(f, s->id.problems.v[w].text, 500);
            fputs("</li>", f);
        }
        if (s->id.problems.n > MAX_WARNINGS)
            fprintf(f, "<li>and %zu more</li>", s->id.problems.n - MAX_WARNINGS);
        fputs("</ul>", f);
    }
    fputs("</td>", f);
}

static void input_row(FILE *f, const tl_session *s)
{
    fputs("<tr>", f);
    path_cell(f, s->id.path);
    fprintf(f, "<td>%s</td>", s->id.format != TL_FMT_UNKNOWN ? tl_format_name(s->id.format) : "not a profile");
    if (s->id.rank >= 0) {
        fprintf(f, "<td class=\"num\">%d</td><td>%s", s->id.rank, tl_text_rank_source(s->id.rank_source));
        if (s->id.rank_detail && *s->id.rank_detail) {
            fputs(": ", f);
            tl_escape_html_n(f, s->id.rank_detail, 200);
        }
        fputs("</td>", f);
    } else {
        fputs("<td class=\"num\">\xe2\x80\x93</td><td>\xe2\x80\x93</td>", f);
    }
    /* why it is not counted (identity.h), then whether it was cut short */
    int standing = tl_identity_standing(&s->id);
    fputs("<td>", f);
    if (standing == TL_STANDING_COMPANION) {
        fputs("companion of ", f);
        tl_html_code(f, s->id.companion_of, 0);
        fputs(" (not counted)", f);
    } else if (standing == TL_STANDING_OTHER_RUN) {
        fputs("another run: left out of the numbers (see Recommendations)", f);
    }
    if (s->truncated)
        fputs(standing == TL_STANDING_COMPANION || standing == TL_STANDING_OTHER_RUN
                  ? "; truncated: read up to the last complete event"
                  : "truncated: read up to the last complete event",
              f);
    fputs("</td>", f);
    warnings_cell(f, s);
    fputs("</tr>\n", f);
}

static void inputs_summary(tl_html *h)
{
    size_t used = 0, skipped = 0, companions = 0, warnings = 0, truncated = 0;
    for (size_t i = 0; i < h->a->nsessions; i++) {
        const tl_session *s = &h->a->sessions[i];
        int standing = tl_identity_standing(&s->id);
        used += standing == TL_STANDING_COUNTED;
        skipped += standing == TL_STANDING_NOT_READ;
        companions += standing == TL_STANDING_COMPANION;
        warnings += s->id.problems.n;
        truncated += s->truncated != 0;
    }
    fprintf(h->f,
            "<p>%zu input%s: %zu used, %zu companion%s (not counted), %zu skipped; %zu truncated; %zu "
            "warning%s.</p>\n",
            h->a->nsessions, h->a->nsessions == 1 ? "" : "s", used, companions, companions == 1 ? "" : "s", skipped,
            truncated, warnings, warnings == 1 ? "" : "s");
}

void tl_html_inputs(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0;
    tl_html_open(h, "inputs", "Inputs");
    if (h->a->nsessions == 0) {
        tl_html_none(h, "No inputs.");
        tl_html_close(h);
        return;
    }
    inputs_summary(h);
    fputs("<div class=\"scroll\"><table id=\"inputs-table\">\n<caption>Every input: its format, its rank and how "
          "the rank was found (content, then name, then input order), and its warnings</caption>\n<thead><tr>"
          "<th scope=\"col\">Path</th><th scope=\"col\">Format</th><th scope=\"col\">Rank</th>"
          "<th scope=\"col\">Rank from</th><th scope=\"col\">Notes</th><th scope=\"col\">Warnings</th></tr>"
          "</thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < h->a->nsessions && shown < TL_HTML_MAX_ROWS; i++, shown++)
        input_row(f, &h->a->sessions[i]);
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, h->a->nsessions, "inputs");
    tl_html_close(h);
}

/* ---- system ---------------------------------------------------------------------------------------- */

/* The name of a session's i-th GPU ("" unknown): its devices, else its device name. */
static const char *gpu_name(const tl_session *s, size_t i)
{
    if (s->ndevices > 0)
        return s->devices[i].name ? s->devices[i].name : "";
    return s->device_name ? s->device_name : "";
}

static size_t gpus_of(const tl_session *s)
{
    return s->ndevices > 0 ? s->ndevices : s->device_name != NULL;
}

/* Every GPU of the counted sessions, by name (first seen first): how many
 * each session lists of that name, in how many sessions (a listing, not the
 * GPUs in use: nothing says which one a process used). */
static void devices(tl_html *h)
{
    FILE *f = h->f;
    size_t shown = 0, distinct = 0;
    fputs("<dt>Devices</dt><dd>", f);
    for (size_t i = 0; i < h->a->nsessions; i++) {
        const tl_session *s = &h->a->sessions[i];
        if (!tl_session_counts(s))
            continue;
        for (size_t g = 0; g < gpus_of(s); g++) {
            const char *d = gpu_name(s, g);
            int seen = 0;
            for (size_t k = 0; k <= i && !seen; k++) {
                const tl_session *t = &h->a->sessions[k];
                for (size_t e = 0; tl_session_counts(t) && e < gpus_of(t) && (k < i || e < g) && !seen; e++)
                    seen = strcmp(gpu_name(t, e), d) == 0;
            }
            if (seen)
                continue;
            size_t gpus = 0, sessions = 0;
            for (size_t k = i; k < h->a->nsessions; k++) {
                const tl_session *t = &h->a->sessions[k];
                size_t here = 0;
                for (size_t e = 0; tl_session_counts(t) && e < gpus_of(t); e++)
                    here += strcmp(gpu_name(t, e), d) == 0;
                gpus += here;
                sessions += here > 0;
            }
            if (shown++ < 10) {
                fputs(shown > 1 ? "; " : "", f);
                tl_escape_html_n(f, *d ? d : "unnamed GPU", 100);
                /* what each input lists: a PyTorch trace lists every GPU
                 * its process could see, so 8 ranks of one node read "64
                 * GPUs" for 8 */
                if (sessions == 1 && gpus == 1)
                    fputs(" (listed by 1 session)", f);
                else if (sessions == 1)
                    fprintf(f, " (%zu listed by 1 session)", gpus);
                else if (gpus % sessions == 0)
                    fprintf(f, " (%zu listed by each of %zu sessions)", gpus / sessions, sessions);
                else
                    fprintf(f, " (listed %zu time%s by %zu session%s)", gpus, gpus == 1 ? "" : "s", sessions,
                            sessions == 1 ? "" : "s");
            }
            distinct++;
        }
    }
    if (distinct == 0)
        fputs("not recorded in the inputs", f);
    else if (distinct > 10)
        fprintf(f, "; and %zu more", distinct - 10);
    fputs("</dd>\n", f);
}

/* The hosts the collector recorded (hostname, ranks, OS, CPUs, memory). */
static void hosts(tl_html *h)
{
    char *text = tl_hosts_sentence(h->a);
    if (text && *text) {
        fputs("<dt>Hosts</dt><dd>", h->f);
        tl_escape_html_n(h->f, text, 4000);
        fputs("</dd>\n", h->f);
    }
    free(text);
}

/* The models and their parameter counts (Inferix's model_analysis, tags). */
static void models(tl_html *h)
{
    char *text = tl_models_sentence(h->a);
    if (text && *text) {
        fputs("<dt>Models</dt><dd>", h->f);
        tl_escape_html_n(h->f, text, 4000);
        fputs("</dd>\n", h->f);
    }
    free(text);
}

static void world_sizes(tl_html *h)
{
    FILE *f = h->f;
    int printed = 0;
    fprintf(f, "<dt>Ranks</dt><dd>%zu seen; world size ", h->a->nranks);
    for (size_t i = 0; i < h->a->nranks; i++) {
        int w = h->a->ranks[i].world_size, seen = 0;
        for (size_t k = 0; k < i && !seen; k++)
            seen = h->a->ranks[k].world_size == w;
        if (w <= 0 || seen || printed >= 8)
            continue;
        fprintf(f, printed ? ", %d" : "%d", w);
        printed++;
    }
    fputs(printed ? " (from the inputs)" : "not recorded", f);
    fputs("</dd>\n", f);
}

static void formats(tl_html *h)
{
    FILE *f = h->f;
    int printed = 0;
    fputs("<dt>Formats</dt><dd>", f);
    for (int fmt = 0; fmt <= TL_FMT_FRAMEPACK_MEMLOG; fmt++) {
        size_t n = 0;
        for (size_t i = 0; i < h->a->nsessions; i++)
            n += h->a->sessions[i].id.format == fmt;
        if (n == 0)
            continue;
        fprintf(f, "%s%s: %zu", printed ? "; " : "", fmt == TL_FMT_UNKNOWN ? "not a profile" : tl_format_name(fmt), n);
        printed = 1;
    }
    fputs("</dd>\n", f);
}

void tl_html_system(tl_html *h)
{
    FILE *f = h->f;
    char d[40], kw[48];
    tl_html_open(h, "system", "System");
    fputs("<dl class=\"system\">\n", f);
    hosts(h);
    devices(h);
    tl_html_system_gpus(h);
    models(h);
    world_sizes(h);
    formats(h);
    fputs("<dt>tally</dt><dd>", f);
    tl_escape_html(f, h->o->version ? h->o->version : "");
    fprintf(f, "; report generated %s</dd>\n", tl_units_date(d, sizeof d, h->o->generated_unix_s));
    fprintf(f, "<dt>Options</dt><dd>GPU window: %s; kernel_wait under %s</dd>\n",
            h->a->opt.whole_trace ? "whole trace" : "ProfilerSteps (the last one dropped when there are two or more)",
            tl_units_dur(kw, sizeof kw, (double)h->a->opt.kernel_wait_ns));
    fputs("</dl>\n", f);
    tl_html_close(h);
}
