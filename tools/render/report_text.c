/*
 * report_text.c - sentences shared by the HTML and Markdown reports (see
 * report_text.h). The headline picks the one thing a reader should look at
 * first; every branch states the numbers that made it the choice.
 */
#define _GNU_SOURCE
#include "report_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_numbers.h"
#include "units.h"

const tl_rank_result *tl_text_rank(const tl_aggregate *a, int rank)
{
    for (size_t i = 0; i < a->nranks; i++)
        if (a->ranks[i].rank == rank)
            return &a->ranks[i];
    return NULL;
}

const char *tl_text_rank_source(int s)
{
    return s == TL_RANK_CONTENT ? "content" : s == TL_RANK_NAME ? "name" : s == TL_RANK_ORDER ? "order" : "unknown";
}

const char *tl_text_advice(const tl_recommendation *r)
{
    if (r->advice)
        return r->advice;
    size_t n;
    const tl_rule_info *rules = tl_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (r->id && strcmp(rules[i].id, r->id) == 0)
            return rules[i].advice;
    return "";
}

char *tl_text_finding(const tl_recommendation *r)
{
    if (r->finding)
        return tl_text_numbers(r->finding);
    const char *m = r->message ? r->message : "", *adv = tl_text_advice(r);
    size_t n = strlen(m), k = strlen(adv);
    if (k > 0 && n > k && strcmp(m + n - k, adv) == 0) {
        n -= k;
        while (n > 0 && m[n - 1] == ' ')
            n--;
    }
    char *plain = strndup(m, n), *text = plain ? tl_text_numbers(plain) : NULL;
    free(plain);
    return text;
}

/* ---- shares of the time ---------------------------------------------------------- */

/* The time of each rank index: its span, else (no span, or a span shorter
 * than one of its sections: a report whose times do not cover its stages)
 * the sum of its sections. */
static double *rank_wholes(const tl_aggregate *a)
{
    double *w = calloc(a->nranks + 1, sizeof *w);
    for (size_t ri = 0; w && ri < a->nranks; ri++) {
        double sum = 0, max = 0;
        for (size_t i = 0; i < a->names.n; i++)
            if (a->names.rows[i].group == TL_GROUP_SECTIONS) {
                sum += a->names.rows[i].rank_total[ri];
                max = a->names.rows[i].rank_total[ri] > max ? a->names.rows[i].rank_total[ri] : max;
            }
        w[ri] = a->ranks[ri].span_ns > 0 && (double)a->ranks[ri].span_ns >= max ? (double)a->ranks[ri].span_ns : sum;
    }
    return w;
}

static double share_of(const tl_aggregate *a, const tl_name_row *row, const double *w)
{
    double part = 0, whole = 0;
    for (size_t ri = 0; ri < a->nranks && (int)ri < a->names.nranks; ri++)
        if (row->rank_count[ri] > 0 && w[ri] > 0) {
            part += row->rank_total[ri];
            whole += w[ri];
        }
    return whole > 0 ? 100 * part / whole : NAN;
}

double tl_text_share(const tl_aggregate *a, const tl_name_row *row)
{
    double *w = rank_wholes(a);
    double s = w ? share_of(a, row, w) : NAN;
    free(w);
    return s;
}

/* ---- the headline ------------------------------------------------------------------ */

/* The headline is decided in analyze (rules.c, tl_decide_headline); render
 * writes its numbers and escapes it. */
void tl_text_headline(FILE *f, const tl_aggregate *a, tl_text_name_fn name, tl_text_name_fn text)
{
    (void)name;
    tl_text_numbers_put(f, a->headline, text);
}

int tl_text_headline_calm(const tl_aggregate *a)
{
    return a->headline_severity == NULL || strcmp(a->headline_severity, "ok") == 0 ||
           strcmp(a->headline_severity, "info") == 0;
}

char *tl_text_waits(const tl_aggregate *a)
{
    const tl_waits *w = &a->waits;
    if (w->source == TL_WAITS_NONE)
        return NULL;
    char *out = NULL, d[48];
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (f == NULL)
        return NULL;
    fprintf(f, "%llu collective%s matched on %zu ranks (%s)", (unsigned long long)w->matched,
            w->matched == 1 ? "" : "s", w->used,
            w->source == TL_WAITS_GPU ? "GPU communication kernels" : "gloo/MPI ranges");
    if (w->straggler >= 0) {
        fprintf(f, "; rank %d arrives last to %llu of them", w->straggler, (unsigned long long)w->straggler_last);
        if (w->by_cause)
            fprintf(f, ", causing %.0f%% of the waiting,", w->caused_share_pct);
        fprintf(f, " and the other %zu rank%s wait %s %s for it", w->used - 1, w->used == 2 ? "" : "s",
                tl_units_dur(d, sizeof d, w->caused_per_step_ns), w->steps > 0 ? "a step" : "each time");
        if (isfinite(w->step_share_pct))
            fprintf(f, " (%.1f%% of their step)", w->step_share_pct);
        if (w->ncause > 0)
            fprintf(f, "; it spends %s %s more than the others in %s", tl_units_dur(d, sizeof d, w->cause[0].delta_ns),
                    w->steps > 0 ? "a step" : "each time", w->cause[0].name);
        if (w->window_cause >= 0) {
            char o[48];
            int c = w->window_cause;
            fprintf(f,
                    "; before its late arrivals it spends %s in %s against %s on the others (median, per arrival "
                    "over %llu)",
                    tl_units_dur(d, sizeof d, w->window_mine_ns[c]), tl_stepcat_phrase(c),
                    tl_units_dur(o, sizeof o, w->window_others_ns[c]), (unsigned long long)w->window_n);
        }
    } else {
        fprintf(f, "; no rank is named: %s", w->why_none ? w->why_none : "");
        if (w->most_last >= 0)
            fprintf(f, " (rank %d is last most often, in %llu)", w->most_last, (unsigned long long)w->most_last_n);
    }
    fputc('.', f);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}
