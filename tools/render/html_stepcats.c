/*
 * html_stepcats.c - the report's "Step time by category" section: one rank's
 * steps as stacked columns by category (TensorBoard's overview), then each
 * rank's mean step the same way, each chart followed by its data table.
 * The numbers are analyze/stepcats.c's; docs/analysis.md defines them.
 */
#include "html_sections.h"
#include "svg.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps drawn at most (the first ones; the rest are counted). */
#define TL_HTML_MAX_STEP_COLS 200

static const char *const sc_cls[TL_SC_COUNT] = {
    "sc-kernel", "sc-memcpy", "sc-memset", "sc-comm", "sc-runtime", "sc-data", "sc-cpu", "sc-other",
};

/* The categories some rank has time in (a column's legend lists only those). */
static void used_cats(const tl_aggregate *a, int used[TL_SC_COUNT])
{
    for (int c = 0; c < TL_SC_COUNT; c++)
        used[c] = 0;
    for (size_t i = 0; i < a->nranks; i++)
        for (int c = 0; c < TL_SC_COUNT && a->ranks[i].stepcat_steps; c++)
            used[c] |= a->ranks[i].stepcat_mean[c] > 0;
    used[TL_SC_OTHER] = 1;
}

static void fill(tl_svg_stack *col, const char *label, const int64_t *ns, const double *mean, const int used[])
{
    col->label = label;
    col->total = 0;
    col->nsegs = 0;
    for (int c = 0; c < TL_SC_COUNT; c++) {
        if (!used[c])
            continue;
        double v = ns ? (double)ns[c] : mean[c];
        col->segs[col->nsegs++] = (tl_svg_seg){ tl_stepcat_label(c), sc_cls[c], v };
        col->total += v;
    }
}

static void table_head(FILE *f, const char *caption, const char *first, const int used[])
{
    fprintf(f,
            "<div class=\"scroll\"><table>\n<caption>%s</caption>\n<thead><tr><th scope=\"col\">%s</th>"
            "<th scope=\"col\">Time</th>",
            caption, first);
    for (int c = 0; c < TL_SC_COUNT; c++)
        if (used[c])
            fprintf(f, "<th scope=\"col\">%s</th>", tl_stepcat_label(c));
    fputs("</tr></thead>\n<tbody>\n", f);
}

static void table_row(FILE *f, const tl_svg_stack *col, const char *mark)
{
    fprintf(f, "<tr><th scope=\"row\">%s%s</th>", col->label, mark);
    tl_html_td(f, col->total, TL_UNIT_NS);
    for (int k = 0; k < col->nsegs; k++)
        tl_html_td(f, col->segs[k].value, TL_UNIT_NS);
    fputs("</tr>\n", f);
}

static const tl_rank_result *shown_rank(const tl_aggregate *a)
{
    for (size_t i = 0; i < a->nranks && a->stepcat_rank >= 0; i++)
        if (a->ranks[i].rank == a->stepcat_rank)
            return &a->ranks[i];
    return NULL;
}

/* The shown rank's steps, every session's in order, at most TL_HTML_MAX_STEP_COLS. */
static void per_step(tl_html *h, const tl_rank_result *r, const int used[])
{
    const tl_aggregate *a = h->a;
    FILE *f = h->f;
    size_t total = 0, n = 0;
    int any_cut = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (s->nstepcats == s->nsteps)
            total += s->nstepcats;
    }
    size_t cap = total < TL_HTML_MAX_STEP_COLS ? total : TL_HTML_MAX_STEP_COLS;
    tl_svg_stack *cols = calloc(cap + 1, sizeof *cols);
    char(*labels)[32] = calloc(cap + 1, sizeof *labels);
    unsigned char *cut = calloc(cap + 1, 1);
    if (cols == NULL || labels == NULL || cut == NULL) {
        h->oom = 1;
        goto out;
    }
    for (size_t k = 0; k < r->nsessions && n < cap; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (s->nstepcats != s->nsteps)
            continue;
        for (size_t i = 0; i < s->nstepcats && n < cap; i++, n++) {
            /* two sessions may number their steps alike: the session tells them apart */
            if (r->nsessions > 1)
                snprintf(labels[n], sizeof labels[n], "%zu:%lld", k, (long long)s->stepcats[i].number);
            else
                snprintf(labels[n], sizeof labels[n], "%lld", (long long)s->stepcats[i].number);
            cut[n] = (unsigned char)s->steps[i].partial;
            if (cut[n]) {
                size_t len = strlen(labels[n]);
                snprintf(labels[n] + len, sizeof labels[n] - len, "*");
                any_cut = 1;
            }
            fill(&cols[n], labels[n], s->stepcats[i].ns, NULL, used);
        }
    }
    fprintf(f,
            "<h3>Rank %d, step by step</h3>\n<p>Rank %d is shown as %s. Each column is one step (its "
            "ProfilerStep range, or its loop iteration), split by what ran at each instant of it.</p>\n",
            r->rank, r->rank,
            a->stepcat_rank_straggler ? "the straggler" : "the rank whose mean step is the median of the ranks'");
    char id[16], desc[200];
    snprintf(desc, sizeof desc, "Stacked columns: each step of rank %d, its time split by category.", r->rank);
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Step time by category, step by step", desc };
    tl_svg_columns(f, &fr, cols, n, TL_UNIT_NS, r->nsessions > 1 ? "step (session:number)" : "step", "step");
    if (any_cut)
        fputs("<p class=\"note\">* the trace's last step, usually cut short by the profiler: drawn, but not in "
              "the rank's mean below.</p>\n",
              f);
    tl_html_more(h, n, total, "steps (the first are drawn)");
    tl_html_details(f, "Data table");
    table_head(f,
               "Each step's time by category (a step marked * is the trace's last, usually cut short; it is "
               "not in the rank's mean)",
               "Step", used);
    for (size_t i = 0; i < n; i++)
        table_row(f, &cols[i], "");
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_details_end(f);
out:
    free(cols);
    free(labels);
    free(cut);
}

/* Each rank's mean step, ranks picked as elsewhere when there are many. */
static void per_rank(tl_html *h, const int used[])
{
    const tl_aggregate *a = h->a;
    FILE *f = h->f;
    size_t nd = 0, n = 0, with = 0;
    unsigned char *drawn = tl_html_ranks_drawn(a, 64, &nd);
    tl_svg_stack *cols = calloc(a->nranks + 1, sizeof *cols);
    char(*labels)[32] = calloc(a->nranks + 1, sizeof *labels);
    if (drawn == NULL || cols == NULL || labels == NULL) {
        h->oom = 1;
        goto out;
    }
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (r->stepcat_steps == 0)
            continue;
        with++;
        if (!drawn[i])
            continue;
        snprintf(labels[n], sizeof labels[n], "%d%s", r->rank, r->straggler ? " (straggler)" : "");
        fill(&cols[n], labels[n], NULL, r->stepcat_mean, used);
        n++;
    }
    fputs("<h3>Each rank's mean step</h3>\n<p>Over each rank's steps; a profiler trace of two or more steps has "
          "its last left out (it is usually cut short).</p>\n",
          f);
    char id[16];
    tl_svg_frame fr = { tl_html_chart_id(h, id, sizeof id), "Mean step time by category, per rank",
                        "Stacked columns: each rank's mean step, split by category." };
    tl_svg_columns(f, &fr, cols, n, TL_UNIT_NS, "rank", "rank");
    if (nd < a->nranks)
        tl_html_ranks_drawn_note(h, nd, a->nranks);
    tl_html_details(f, "Data table");
    table_head(f, "Each rank's mean step by category", "Rank", used);
    for (size_t i = 0; i < n; i++)
        table_row(f, &cols[i], "");
    fputs("</tbody>\n</table></div>\n", f);
    tl_html_more(h, n, with, "ranks");
    tl_html_details_end(f);
out:
    free(drawn);
    free(cols);
    free(labels);
}

void tl_html_stepcats(tl_html *h)
{
    const tl_aggregate *a = h->a;
    const tl_rank_result *r = shown_rank(a);
    tl_html_open(h, "step-categories", "Step time by category");
    if (r == NULL) {
        tl_html_none(h, "No step to split: the categories need a trace with ProfilerStep ranges and the events "
                        "inside them, or a libtally report with its trace (the same process, every step in it).");
        tl_html_close(h);
        return;
    }
    int used[TL_SC_COUNT], cut = 0;
    used_cats(a, used);
    for (size_t i = 0; i < a->nranks; i++)
        cut |= a->ranks[i].stepcats_cut;
    fputs("<p>As TensorBoard's overview splits a step: each instant goes to the first category active at it "
          "&mdash; GPU kernels, copies, sets, communication (kernels, and collectives the host runs in place, "
          "such as gloo's), then the host's runtime calls, data loading and CPU execution (operators, Python, "
          "libtally sections); "
          "what none covers is <em>other</em>. A step's categories add up to its time "
          "(<code>docs/analysis.md</code>, &ldquo;Step time by category&rdquo;).</p>\n",
          h->f);
    int libtally = 0;
    for (size_t k = 0; k < r->nsessions; k++)
        libtally |=
            a->sessions[r->sessions[k]].id.format == TL_FMT_TALLY_REPORT && a->sessions[r->sessions[k]].nstepcats > 0;
    if (libtally)
        fputs("<p class=\"note\">These steps are a libtally report's loop, split by its trace's sections: the trace "
              "has the CPU side only, so a section that waits for the GPU is CPU execution here, and kernels, "
              "copies and the runtime are not seen.</p>\n",
              h->f);
    if (cut)
        fprintf(h->f,
                "<p class=\"note\">A rank's host events went past the %u ranges kept per category: later "
                "host time is counted as other.</p>\n",
                (unsigned)TL_PROFILE_MAX_RANGES);
    per_step(h, r, used);
    per_rank(h, used);
    tl_html_close(h);
}
