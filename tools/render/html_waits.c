/*
 * html_waits.c - the report's Waits section: who waits for whom in the
 * collectives (analyze/waits.h; docs/analysis.md, "Waits"). What was matched
 * and how, the verdict in a sentence, the time each rank waited and caused
 * (bars and a table, bounded), and the arrival order of the first
 * collectives (who was last, how long the others waited).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "html_sections.h"
#include "svg.h"
#include "units.h"

#define WAITS_BARS 20      /* ranks drawn: the rank waited for first, then by time caused and waited */
#define WAITS_INSTANCES 40 /* collectives drawn in arrival order */

static int by_weight(const void *x, const void *y, void *ctx)
{
    const tl_waits *w = ctx;
    const tl_rank_waits *a = &w->ranks[*(const size_t *)x], *b = &w->ranks[*(const size_t *)y];
    int as = a->rank == w->straggler, bs = b->rank == w->straggler;
    if (as != bs)
        return bs - as;
    if (a->caused_ns != b->caused_ns)
        return a->caused_ns > b->caused_ns ? -1 : 1;
    if (a->waited_ns != b->waited_ns)
        return a->waited_ns > b->waited_ns ? -1 : 1;
    return a->rank - b->rank;
}

static void verdict(tl_html *h, const tl_waits *w)
{
    char d[48];
    FILE *f = h->f;
    if (w->straggler >= 0) {
        fprintf(f, "<p class=\"strag\">Rank %d arrives last to %llu of %llu collectives (p = %.2g)", w->straggler,
                (unsigned long long)w->straggler_last, (unsigned long long)w->matched, w->straggler_p);
        if (w->by_cause)
            fprintf(f, " and causes %.0f%% of the waiting", w->caused_share_pct);
        fprintf(f, ": the other %zu rank%s wait %s %s for it", w->used - 1, w->used == 2 ? "" : "s",
                tl_units_dur(d, sizeof d, w->caused_per_step_ns), w->steps > 0 ? "a step" : "each time");
        if (isfinite(w->step_share_pct))
            fprintf(f, ", %.1f%% of their step", w->step_share_pct);
        fputs(".", f);
        if (w->ncause > 0) {
            fputs(" Meanwhile it spends more time than the others in ", f);
            for (int i = 0; i < w->ncause; i++) {
                fprintf(f, "%s", i == 0 ? "" : i + 1 == w->ncause ? " and " : ", ");
                tl_html_code(f, w->cause[i].name, TL_HTML_LABEL_COLS);
                fprintf(f, " (+%s %s)", tl_units_dur(d, sizeof d, w->cause[i].delta_ns),
                        w->steps > 0 ? "a step" : "each time");
            }
            fputs(".", f);
        }
        if (w->window_cause >= 0) {
            int c = w->window_cause;
            char o[48];
            fprintf(f,
                    " Before its late arrivals, from the previous release to its arrival, it spends %s in %s "
                    "against %s on the other ranks (median; per arrival, over %llu).",
                    tl_units_dur(d, sizeof d, w->window_mine_ns[c]), tl_stepcat_phrase(c),
                    tl_units_dur(o, sizeof o, w->window_others_ns[c]), (unsigned long long)w->window_n);
        }
        fputs("</p>\n", f);
        return;
    }
    fputs("<p>No rank is named: ", f);
    tl_escape_html(f, w->why_none ? w->why_none : "");
    if (w->most_last >= 0)
        fprintf(f, " (rank %d is last most often, in %llu of %llu; one-sided binomial p = %.2g).", w->most_last,
                (unsigned long long)w->most_last_n, (unsigned long long)w->matched, w->straggler_p);
    else
        fputs(".", f);
    fputs("</p>\n", f);
}

static void rank_bars(tl_html *h, const tl_waits *w, const size_t *order, size_t n)
{
    size_t k = n < WAITS_BARS ? n : WAITS_BARS;
    tl_svg_bar *bars = calloc(2 * k + 1, sizeof *bars);
    char(*labels)[48] = calloc(2 * k + 1, sizeof *labels);
    if (bars == NULL || labels == NULL) {
        h->oom = 1;
        free(bars);
        free(labels);
        return;
    }
    size_t nb = 0;
    for (size_t i = 0; i < k; i++) {
        const tl_rank_waits *r = &w->ranks[order[i]];
        if (r->caused_ns <= 0)
            goto waited; /* a "caused 0" bar for every waiting rank reads as noise */
        snprintf(labels[nb], sizeof labels[nb], "rank %d caused", r->rank);
        bars[nb] = (tl_svg_bar){ .label = labels[nb],
                                 .value = (double)r->caused_ns,
                                 .lo = NAN,
                                 .hi = NAN,
                                 .cls = r->rank == w->straggler ? "strag" : "comm" };
        snprintf(bars[nb].note, sizeof bars[nb].note,
                 "the others' median wait over the %llu collectives it was last in", (unsigned long long)r->last);
        nb++;
    waited:
        snprintf(labels[nb], sizeof labels[nb], "rank %d waited", r->rank);
        bars[nb] =
            (tl_svg_bar){ .label = labels[nb], .value = (double)r->waited_ns, .lo = NAN, .hi = NAN, .cls = "other" };
        snprintf(bars[nb].note, sizeof bars[nb].note, "its waits over %llu collectives",
                 (unsigned long long)r->instances);
        nb++;
    }
    char id[16];
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Time waited and caused per rank",
                        "For each rank: the time it made the others wait (their median wait in the collectives it "
                        "arrived last to) and the time it waited for others, each over time: collectives that "
                        "overlap (gradient buckets) count once." };
    tl_svg_hbars(h->f, &fr, bars, nb, TL_UNIT_NS, NULL);
    if (n > k)
        fprintf(h->f,
                "<p class=\"more\">%zu of %zu ranks drawn: the rank waited for, then the ranks that caused and "
                "waited most</p>\n",
                k, n);
    free(bars);
    free(labels);
}

static void rank_table(tl_html *h, const tl_waits *w, const size_t *order, size_t n)
{
    FILE *f = h->f;
    size_t shown = n < TL_HTML_MAX_ROWS ? n : TL_HTML_MAX_ROWS;
    tl_html_details(f, "Per rank: collectives, times last, waited and caused");
    fputs("<table>\n<caption>Waits per rank</caption>\n<thead><tr><th scope=\"col\">rank</th>"
          "<th scope=\"col\">collectives</th><th scope=\"col\">last</th><th scope=\"col\">waited</th>"
          "<th scope=\"col\">waited, % of step</th><th scope=\"col\">caused</th><th scope=\"col\">clock offset</th>"
          "<th scope=\"col\">note</th></tr></thead>\n<tbody>\n",
          f);
    for (size_t i = 0; i < shown; i++) {
        const tl_rank_waits *r = &w->ranks[order[i]];
        fprintf(f, "<tr%s><td>%d</td>", r->rank == w->straggler ? " class=\"straggler\"" : "", r->rank);
        tl_html_td(f, (double)r->instances, TL_UNIT_COUNT);
        tl_html_td(f, (double)r->last, TL_UNIT_COUNT);
        tl_html_td(f, (double)r->waited_ns, TL_UNIT_NS);
        tl_html_td(f, tl_waits_waited_pct(h->a, order[i]), TL_UNIT_PCT);
        tl_html_td(f, (double)r->caused_ns, TL_UNIT_NS);
        tl_html_td(f, (double)r->offset_ns, TL_UNIT_NS);
        fputs("<td>", f);
        tl_escape_html(f, r->why_out ? r->why_out : "");
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    tl_html_more(h, shown, n, "ranks");
    tl_html_details_end(f);
}

/* The windows before the late arrivals by category: the evidence of the
 * window sentence, every category beside the others' median. */
static void window_table(tl_html *h, const tl_waits *w)
{
    if (w->straggler < 0 || w->window_n == 0)
        return;
    FILE *f = h->f;
    tl_html_details(f, "Before its late arrivals: the windows by category");
    fprintf(f,
            "<table>\n<caption>From the previous release to the arrival, per late arrival of rank %d (%llu), "
            "against the other ranks at the same collectives</caption>\n<thead><tr><th scope=\"col\">category</th>"
            "<th scope=\"col\">rank %d</th><th scope=\"col\">others (median)</th><th scope=\"col\">more</th>"
            "</tr></thead>\n<tbody>\n",
            w->straggler, (unsigned long long)w->window_n, w->straggler);
    for (int c = 0; c < TL_SC_COUNT; c++) {
        fprintf(f, "<tr%s><td>%s</td>", c == w->window_cause ? " class=\"straggler\"" : "", tl_stepcat_label(c));
        tl_html_td(f, w->window_mine_ns[c], TL_UNIT_NS);
        tl_html_td(f, w->window_others_ns[c], TL_UNIT_NS);
        tl_html_td(f, w->window_mine_ns[c] - w->window_others_ns[c], TL_UNIT_NS);
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
    tl_html_details_end(f);
}

static void arrival_chart(tl_html *h, const tl_waits *w)
{
    size_t k = w->nchart < WAITS_INSTANCES ? w->nchart : WAITS_INSTANCES;
    if (k == 0)
        return;
    tl_svg_bar *bars = calloc(k + 1, sizeof *bars);
    char(*labels)[64] = calloc(k + 1, sizeof *labels);
    if (bars == NULL || labels == NULL) {
        h->oom = 1;
        free(bars);
        free(labels);
        return;
    }
    for (size_t i = 0; i < k; i++) {
        const tl_wait_inst *c = &w->chart[i];
        if (c->last_rank >= 0)
            snprintf(labels[i], sizeof labels[i], "#%zu last: rank %d", i + 1, c->last_rank);
        else
            snprintf(labels[i], sizeof labels[i], "#%zu no clear last", i + 1);
        const char *name = c->name >= 0 && c->name < w->nnames ? w->names[c->name] : "";
        bars[i] = (tl_svg_bar){ .label = labels[i],
                                .value = (double)c->caused_ns,
                                .lo = NAN,
                                .hi = NAN,
                                .cls = c->last_rank >= 0 && c->last_rank == w->straggler ? "strag" : "comm" };
        char sp[48];
        snprintf(bars[i].note, sizeof bars[i].note, "%.100s; arrivals spread over %s", name,
                 tl_units_dur(sp, sizeof sp, (double)c->spread_ns));
    }
    char id[16];
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Who arrives last, collective by collective",
                        "For each matched collective in time order: the rank that arrived last (beyond the clocks' "
                        "residual) and the other ranks' median wait for it." };
    fprintf(h->f, "<h3>Arrival order</h3>\n");
    tl_svg_hbars(h->f, &fr, bars, k, TL_UNIT_NS, NULL);
    tl_html_more(h, k, w->matched, "collectives");
    free(bars);
    free(labels);
}

void tl_html_waits(tl_html *h)
{
    const tl_waits *w = &h->a->waits;
    tl_html_open(h, "waits", "Waits");
    if (w->source == TL_WAITS_NONE) {
        tl_html_none(h, h->a->nranks < 2 ? "One rank: nobody waits for another."
                                         : "No collectives to match across ranks (no communication kernels on two "
                                           "ranks, no gloo or MPI collective ranges).");
        tl_html_collbw(h);
        tl_html_close(h);
        return;
    }
    char d1[48], d2[48];
    fprintf(h->f, "<p class=\"note\">%llu collectives matched on every one of %zu ranks (%s, by %s)",
            (unsigned long long)w->matched, w->used,
            w->source == TL_WAITS_GPU ? "GPU communication kernels" : "CPU ranges that run a collective: gloo, MPI",
            w->matched_by == TL_WAITS_BY_SEQ ? "sequence number" : "order of same-name, same-size collectives");
    if (w->partial)
        fprintf(h->f, "; %llu not on every rank, not judged", (unsigned long long)w->partial);
    fprintf(h->f,
            ". Clocks: residual %s after each rank's offset; an arrival counts as last when it is %s after the "
            "next.</p>\n",
            tl_units_dur(d1, sizeof d1, (double)w->residual_ns), tl_units_dur(d2, sizeof d2, (double)w->trust_ns));
    verdict(h, w);
    size_t *order = malloc((w->nranks + 1) * sizeof *order);
    if (order == NULL) {
        h->oom = 1;
        tl_html_close(h);
        return;
    }
    for (size_t i = 0; i < w->nranks; i++)
        order[i] = i;
    qsort_r(order, w->nranks, sizeof *order, by_weight, (void *)w);
    rank_bars(h, w, order, w->nranks);
    rank_table(h, w, order, w->nranks);
    window_table(h, w);
    free(order);
    arrival_chart(h, w);
    tl_html_collbw(h);
    tl_html_close(h);
}
