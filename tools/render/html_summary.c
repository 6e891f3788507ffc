/*
 * html_summary.c - the first sections a reader sees: the headline, the
 * recommendations with their evidence, and the per-rank table with the
 * across-rank metrics (min, median, mean, max, imbalance and which ranks)
 * and the stragglers' evidence. The numbers are the aggregate JSON's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "html_sections.h"
#include "report_text.h"
#include "text_numbers.h"
#include "telemetry_text.h"
#include "units.h"

static void name_code(FILE *f, const char *name)
{
    tl_html_code(f, name, 60);
}

/* ---- headline -------------------------------------------------------------------------- */

void tl_html_headline(tl_html *h)
{
    tl_html_open(h, "headline", "Summary");
    fprintf(h->f, "<p class=\"headline%s\">", tl_text_headline_calm(h->a) ? " calm" : "");
    tl_text_headline(h->f, h->a, name_code, tl_escape_html);
    fputs("</p>\n", h->f);
    if (h->a->nrecs > 0)
        fprintf(h->f, "<p>%d rule%s of the recommendation table fired; see Recommendations.</p>\n", h->a->nrecs,
                h->a->nrecs == 1 ? "" : "s");
    tl_html_close(h);
}

/* ---- recommendations -------------------------------------------------------------------- */

static void recommendation(tl_html *h, const tl_recommendation *r)
{
    FILE *f = h->f;
    char *finding = tl_text_finding(r);
    if (finding == NULL)
        h->oom = 1;
    fprintf(f, "<li class=\"rec sev-%s\"><p class=\"rec-head\"><span class=\"sev\">%s</span> ", r->severity,
            r->severity);
    fprintf(f, "<code class=\"rule\">%s</code>", r->id);
    if (r->rank >= 0)
        fprintf(f, " \xc2\xb7 rank %d", r->rank);
    fputs("</p>\n<p class=\"finding\">", f);
    tl_escape_html(f, finding);
    fputs("</p>\n<p class=\"advice\">", f);
    tl_escape_html(f, tl_text_advice(r));
    fputs("</p>\n<p class=\"evidence\"><span>Evidence:</span> ", f);
    char *evidence = tl_text_numbers(r->evidence);
    tl_escape_html_n(f, evidence ? evidence : "", 2000);
    free(evidence);
    fputs("</p></li>\n", f);
    free(finding);
}

void tl_html_recommendations(tl_html *h)
{
    tl_html_open(h, "recommendations", "Recommendations");
    const tl_aggregate *a = h->a;
    for (size_t i = 0; i < a->nnotes; i++) {
        fputs("<p class=\"note\"><strong>Inputs:</strong> ", h->f);
        tl_escape_html_n(h->f, a->notes[i], 1000);
        fputs("</p>\n", h->f);
    }
    if (a->nstragglers == 0 && a->straggler_note) {
        fputs("<p class=\"note\"><strong>Stragglers:</strong> ", h->f);
        char *note = tl_text_numbers(a->straggler_note);
        tl_escape_html_n(h->f, note ? note : "", 1000);
        free(note);
        fputs("</p>\n", h->f);
    }
    if (a->nrecs == 0) {
        tl_html_none(h, "No rule fired: none of the recommendation table's conditions holds for these inputs.");
    } else {
        fputs("<ol class=\"recs\">\n", h->f);
        for (int i = 0; i < a->nrecs; i++)
            recommendation(h, &a->recs[i]);
        fputs("</ol>\n", h->f);
    }
    if (a->nskips > 0) {
        char summary[64];
        snprintf(summary, sizeof summary, "Rules that did not apply (%d)", a->nskips);
        tl_html_details(h->f, summary);
        fputs("<ul class=\"skips\">\n", h->f);
        for (int i = 0; i < a->nskips; i++) {
            fprintf(h->f, "<li><code class=\"rule\">%s</code>: ", a->skips[i].id);
            char *why = tl_text_numbers(a->skips[i].why);
            tl_escape_html_n(h->f, why ? why : "", 500);
            free(why);
            fputs("</li>\n", h->f);
        }
        fputs("</ul>\n</details>\n", h->f);
    }
    tl_html_close(h);
}

/* ---- ranks ------------------------------------------------------------------------------- */

static double gpu_pct(const tl_rank_result *r, int64_t part)
{
    return r->gpu.present ? tl_pct(part, r->gpu.kernel_time) : NAN;
}

static void rank_row(FILE *f, const tl_rank_result *r)
{
    char b[48], p[32];
    /* a loop summary's count (FramePack) is marked: its steps ran, their times were not recorded */
    fprintf(f, "<tr%s><th scope=\"row\">%d%s</th><td class=\"num\">%zu</td><td class=\"num\"%s>%llu%s</td>",
            r->straggler ? " class=\"straggler\"" : "", r->rank,
            r->straggler ? " <span class=\"tag\">straggler</span>" : "", r->nsessions,
            r->steps_summarized ? " title=\"from the report's loop summary: its count, mean, min and max, not each "
                                  "step\""
                                : "",
            (unsigned long long)r->step_count, r->steps_summarized ? " (summary)" : "");
    tl_html_td(f, r->step_mean, TL_UNIT_NS);
    tl_html_td(f, r->step_median, TL_UNIT_NS);
    tl_html_td(f, r->step_min, TL_UNIT_NS);
    tl_html_td(f, r->step_max, TL_UNIT_NS);
    fprintf(f, "<td class=\"num\">%s</td>",
            isfinite(r->step_mean) && r->step_mean > 0 ? (snprintf(b, sizeof b, "%.3f", 1e9 / r->step_mean), b)
                                                       : "\xe2\x80\x93");
    tl_html_td(f, gpu_pct(r, r->gpu.idle), TL_UNIT_PCT);
    tl_html_td(f, gpu_pct(r, r->gpu.compute), TL_UNIT_PCT);
    tl_html_td(f, gpu_pct(r, r->gpu.non_compute), TL_UNIT_PCT);
    tl_html_td(f, r->gpu.present && r->gpu.comm > 0 ? tl_pct(r->gpu.comm_compute, r->gpu.comm) : NAN, TL_UNIT_PCT);
    fprintf(f, "<td class=\"num\">%s", tl_units_bytes(b, sizeof b, r->peak_allocated));
    /* the one peak figure (tl_rank_peak_device_pct): the memory table shows the same.
     * Its share is of the largest peak series, named when it is not the allocated
     * figure beside it (Inferix has only NVML's "used"). */
    if (isfinite(tl_rank_peak_device_pct(r))) {
        const char *of = NULL;
        double v = r->peak_allocated;
        if (isfinite(r->peak_reserved) && !(r->peak_reserved <= v))
            v = r->peak_reserved, of = "reserved";
        if (isfinite(r->peak_device_used) && !(r->peak_device_used <= v))
            v = r->peak_device_used, of = "NVML used";
        if (of != NULL)
            fprintf(f, " (%s %s: %s of device)", of, tl_units_bytes(b, sizeof b, v),
                    tl_units_pct(p, sizeof p, tl_rank_peak_device_pct(r)));
        else
            fprintf(f, " (%s of device)", tl_units_pct(p, sizeof p, tl_rank_peak_device_pct(r)));
    }
    fputs("</td></tr>\n", f);
}

static void ranks_table(tl_html *h)
{
    FILE *f = h->f;
    const tl_aggregate *a = h->a;
    size_t shown = 0, cap = 4 * TL_HTML_MAX_ROWS;
    fputs("<div class=\"scroll\"><table id=\"ranks\">\n<caption>Per rank: step times, GPU time (HTA's temporal "
          "breakdown, as a share of the kernel time), communication overlapped by compute, and peak memory "
          "allocated (with the share of the device the largest peak fills: allocated, reserved or used as NVML "
          "sees it). Stragglers are marked.</caption>\n<thead><tr><th scope=\"col\">Rank</th>"
          "<th scope=\"col\">Sessions</th><th scope=\"col\">Steps</th><th scope=\"col\">Step mean</th>"
          "<th scope=\"col\">Median</th><th scope=\"col\">Min</th><th scope=\"col\">Max</th>"
          "<th scope=\"col\">it/s</th><th scope=\"col\">GPU idle</th><th scope=\"col\">Compute</th>"
          "<th scope=\"col\">Non-compute</th><th scope=\"col\">Overlap</th><th scope=\"col\">Peak memory</th>"
          "</tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < a->nranks; i++)
        if (shown < cap || a->ranks[i].straggler) {
            rank_row(f, &a->ranks[i]);
            shown++;
        }
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, shown, a->nranks, "ranks (stragglers are always listed)");
}

static void across_row(FILE *f, const tl_across *x)
{
    int unit = x->info->unit;
    const char *label = x->info->label;
    char b[48];
    fprintf(f, "<tr><th scope=\"row\">%s</th><td class=\"num\">%d</td>", label, x->n);
    fprintf(f, "<td class=\"num\">%s<small class=\"rk\">rank %d</small></td>", tl_units_fmt(b, sizeof b, x->min, unit),
            x->min_rank);
    tl_html_td(f, x->median, unit);
    tl_html_td(f, x->mean, unit);
    fprintf(f, "<td class=\"num\">%s<small class=\"rk\">rank %d</small></td>", tl_units_fmt(b, sizeof b, x->max, unit),
            x->max_rank);
    tl_html_td(f, x->std, unit);
    tl_html_td(f, x->imbalance, TL_UNIT_RATIO);
    fputs("</tr>\n", f);
}

static void across_table(tl_html *h)
{
    if (h->a->nacross == 0)
        return;
    fputs("<h3>Across ranks</h3>\n<div class=\"scroll\"><table id=\"across\">\n<caption>Each per-rank metric "
          "across the ranks that have it: least, median, mean and most (with the rank), standard deviation, and "
          "imbalance = max / mean.</caption>\n<thead><tr><th scope=\"col\">Metric</th><th scope=\"col\">Ranks</th>"
          "<th scope=\"col\">Min</th><th scope=\"col\">Median</th><th scope=\"col\">Mean</th>"
          "<th scope=\"col\">Max</th><th scope=\"col\">Std</th><th scope=\"col\">Imbalance</th></tr></thead>\n"
          "<tbody>\n",
          h->f);
    for (int i = 0; i < h->a->nacross; i++)
        if (h->a->across[i].info->section != TL_SECTION_TELEMETRY) /* the Telemetry section's */
            across_row(h->f, &h->a->across[i]);
    fputs("</tbody>\n</table></div>\n", h->f);
}

static void straggler(FILE *f, const tl_straggler *s)
{
    char d[48];
    fprintf(f, "<li><p><strong>Rank %d</strong> (%s): ", s->rank,
            strcmp(s->kind, "compute") == 0 ? "slow compute" : "last to arrive at collectives");
    char *summary = tl_text_numbers(s->summary);
    tl_escape_html_n(f, summary ? summary : "", 1000);
    free(summary);
    fputs("</p>\n", f);
    if (s->nitems > 0) {
        fputs("<table class=\"evidence\"><caption>Where the straggler spends more per step than the other "
              "ranks' median (names called at least once a step; a name's time includes the names that run inside "
              "it, so the rows overlap)</caption><thead><tr><th scope=\"col\">Name</th><th scope=\"col\">More per "
              "step</th>"
              "</tr></thead><tbody>\n",
              f);
        for (int k = 0; k < s->nitems; k++) {
            fputs("<tr><th scope=\"row\">", f);
            tl_html_code(f, s->items[k].name, 100);
            fprintf(f, "</th><td class=\"num\">+%s</td></tr>\n", tl_units_dur(d, sizeof d, s->items[k].delta_ns));
        }
        fputs("</tbody></table>\n", f);
    }
    fputs("</li>\n", f);
}

void tl_html_ranks(tl_html *h)
{
    tl_html_open(h, "per-rank", "Ranks");
    if (h->a->nranks == 0) {
        tl_html_none(h, "No rank has data.");
        tl_html_close(h);
        return;
    }
    ranks_table(h);
    across_table(h);
    if (h->a->nstragglers > 0) {
        fputs("<h3>Stragglers</h3>\n<ul class=\"stragglers\">\n", h->f);
        for (int i = 0; i < h->a->nstragglers; i++)
            straggler(h->f, &h->a->stragglers[i]);
        fputs("</ul>\n", h->f);
    }
    tl_html_close(h);
}
