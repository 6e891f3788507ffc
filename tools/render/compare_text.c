/*
 * compare_text.c - a comparison as Markdown (a CI job summary), as the
 * console's summary line and list of gate failures, and as JUnit XML (one
 * test case per compared metric), see render.h.
 *
 * The one idea for Markdown: its size is bounded by construction. Every table
 * shows at most MD_ROWS rows (with a count of the rest) and every name is cut
 * to MD_NAME bytes, so the text stays far under GitHub's 1 MiB limit for a
 * job summary whatever the inputs. JUnit lists every compared row; its text
 * is escaped for XML 1.0 here (escape.h covers HTML and Markdown), including
 * bytes that are not valid UTF-8 or not allowed in XML, which become U+FFFD,
 * so the file is always well-formed.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "text_numbers.h"
#include "compare_rows.h"
#include "render.h"
#include "escape.h"
#include "term.h"
#include "units.h"

enum { MD_ROWS = 25, MD_LIST = 40, MD_NAME = 120, MD_NOTE = 100, MD_LABEL_COLS = 36, XML_NAME = 1024 };

/* "<0.001" where compare_html.c writes "&lt;0.001". */
static const char *p_text(char *buf, size_t len, double p)
{
    return tl_cmp_p_text(buf, len, p, "<");
}

/* ---- Markdown ------------------------------------------------------------------ */

/* A section's title: a heading when it leads, else folded in <details> (a
 * job summary shows the verdict and the regressions; the rest on a click).
 * md_end closes what md_begin opened. */
static void md_begin(FILE *f, int fold, const char *title, size_t n)
{
    if (fold)
        fprintf(f, "<details><summary>%s (%zu)</summary>\n\n", title, n);
    else
        fprintf(f, "### %s (%zu)\n\n", title, n);
}

static void md_end(FILE *f, int fold)
{
    fputs(fold ? "\n</details>\n\n" : "\n", f);
}

static void md_headline(FILE *f, const tl_compare *c)
{
    const size_t *n = c->counts;
    char status[512], advice[1024];
    tl_cmp_status_text(status, sizeof status, c);
    /* the status line first: what a CI job page shows of the summary */
    fputs("## tally compare", f);
    if (c->opt.title) {
        fputs(": ", f);
        tl_escape_md_n(f, c->opt.title, MD_NAME);
    }
    if (c->opt.labels[0] && c->opt.labels[1]) {
        fputs("\n\n", f);
        tl_escape_md_n(f, c->opt.labels[0], MD_NAME);
        fputs(" (baseline) \xe2\x86\x92 ", f);
        tl_escape_md_n(f, c->opt.labels[1], MD_NAME);
        fputs(" (candidate)", f);
    }
    fprintf(f, "\n\n%s **", c->gate_failures ? "\xe2\x9d\x8c" : "\xe2\x9c\x85");
    tl_escape_md(f, status);
    fprintf(f, "**\n\n**%zu regression%s, %zu improvement%s**", n[TL_VERDICT_REGRESSION],
            n[TL_VERDICT_REGRESSION] == 1 ? "" : "s", n[TL_VERDICT_IMPROVEMENT],
            n[TL_VERDICT_IMPROVEMENT] == 1 ? "" : "s");
    if (isfinite(c->geomean_ratio)) {
        char g[48];
        fprintf(f, " \xc2\xb7 geomean ratio %.4f (%s) over %zu names, each once", c->geomean_ratio,
                tl_cmp_geomean_text(g, sizeof g, c->geomean_ratio), c->geomean_n);
    }
    char step[400];
    if (tl_cmp_step_text(step, sizeof step, c)[0])
        fprintf(f, "\n\n%s", step);
    fprintf(f, "\n\n**What to do:** %s", tl_cmp_advice_text(advice, sizeof advice, c));
    char split[96];
    double material = isnan(c->opt.material_pct) ? c->opt.threshold_pct : c->opt.material_pct;
    fprintf(f,
            "\n\n**Gate: %s** (%zu failure%s: the step time first, then stages, ops and kernels whose change is "
            "%.4g%% of the step or more, peak memory%s)",
            c->gate_failures ? "fails" : "passes", c->gate_failures, c->gate_failures == 1 ? "" : "s", material,
            tl_cmp_gate_split(split, sizeof split, c));
    fprintf(f,
            "\n\nMetric per call: %s \xc2\xb7 threshold %.4g%% \xc2\xb7 \xce\xb1 = %.3g \xc2\xb7 untested rows judged "
            "beyond %.4g%% (a stage's in the gate from %.4g%% of the run's time) \xc2\xb7 %zu unchanged, %zu "
            "inconclusive (beyond the threshold, not significant), %zu with too few samples, %zu large untested "
            "changes, %zu added, %zu removed (rows per rank and metric included).\n\n",
            tl_cmp_metric_name(c->opt.metric), c->opt.threshold_pct, c->opt.alpha, c->opt.max_untested_pct,
            c->opt.untested_floor_pct, n[TL_VERDICT_UNCHANGED] - c->inconclusive, c->inconclusive,
            n[TL_VERDICT_TOO_FEW], n[TL_VERDICT_LARGE_INCREASE] + n[TL_VERDICT_LARGE_DECREASE], n[TL_VERDICT_ADDED],
            n[TL_VERDICT_REMOVED]);
    if (c->nbase_only || c->ncand_only) {
        char ranks[512];
        fputs("**Ranks:** ", f);
        tl_escape_md(f, tl_cmp_ranks_text(ranks, sizeof ranks, c));
        fputs(".\n\n", f);
    }
}

/* "rank | baseline | candidate | Δ | p | verdict |\n": the cells a row of
 * names (md_row) and a row of steps (md_steps) share. */
static void md_rank_cells(FILE *f, const tl_cmp_row *r)
{
    char rb[16], db[48], pb[32];
    tl_cmp_side_cell cell;
    fprintf(f, "%s | ", tl_cmp_rank_label(rb, sizeof rb, r->rank));
    /* both sides in one cell and the p beside the delta, no intervals (they
     * are in the JSON and on the page): the table fits a job summary */
    tl_cmp_side_cell_of(&cell, r, 0);
    fputs(cell.value, f);
    fputs(" \xe2\x86\x92 ", f);
    tl_cmp_side_cell_of(&cell, r, 1);
    fputs(cell.value, f);
    fprintf(f, " | %s (%s) | %s%s", tl_cmp_delta_text(db, sizeof db, r), p_text(pb, sizeof pb, r->p_adjusted),
            tl_cmp_verdict_text(r, 0),
            r->gate      ? " (gate)"
            : r->floored ? " (under the gate's floor)"
                         : "");
    if (r->note) {
        fputs(": ", f);
        char *note = tl_text_numbers(r->note);
        tl_escape_md_n(f, note ? note : "", MD_NOTE);
        free(note);
    }
    fputs(" |\n", f);
}

static void md_row(FILE *f, const tl_cmp_row *r, const char *label)
{
    fputs("| ", f);
    if (label != NULL)
        tl_escape_md(f, label);
    else
        tl_escape_md_n(f, r->name, MD_NAME);
    fprintf(f, " | %s %s | ", tl_cmp_group_name(r->group), tl_cmp_kind_name(r->kind));
    md_rank_cells(f, r);
}

/* A table of the top rows t (t->n counted, t->shown shown); fold: in
 * <details>. */
static void md_table(FILE *f, const tl_compare *c, const char *title, tl_cmp_top *t, int fold)
{
    if (t->n == 0)
        return;
    md_begin(f, fold, title, t->n);
    fputs("| name | what | rank | baseline \xe2\x86\x92 candidate | \xce\x94 (p adj.) | verdict |\n"
          "|---|---|---|---|---|---|\n",
          f);
    /* names as labels (labels.h), the report's Markdown rules: one row, one text */
    tl_cmp_top_label(t, c, MD_LABEL_COLS);
    for (size_t i = 0; i < t->shown; i++)
        md_row(f, tl_cmp_top_row(t, c, i), tl_cmp_top_label_of(t, i, NULL));
    if (t->n > t->shown)
        fprintf(f, "\n%zu more not shown (see the JSON or HTML output).\n", t->n - t->shown);
    md_end(f, fold);
}

/* The rows of a verdict: all ranks first, then single ranks, each by impact. */
static int md_verdict_table(FILE *f, const tl_compare *c, int verdict, const char *title, int fold)
{
    tl_cmp_top t;
    /* one rank a side: rank 0's rows repeat the all-ranks ones */
    if (tl_cmp_top_select(&t, c, tl_cmp_keep_overall, &verdict, MD_ROWS) != 0 ||
        (!tl_cmp_single_rank(c) && tl_cmp_top_append(&t, c, tl_cmp_keep_rank, &verdict) != 0)) {
        tl_cmp_top_release(&t);
        return -1;
    }
    md_table(f, c, title, &t, fold);
    tl_cmp_top_release(&t);
    return 0;
}

static int keep_gate(const tl_cmp_row *r, void *ctx)
{
    int rank = *(const int *)ctx;
    return r->gate && (r->rank < 0) == (rank < 0);
}

static int keep_explained(const tl_cmp_row *r, void *ctx)
{
    int rank = *(const int *)ctx;
    return r->verdict == TL_VERDICT_REGRESSION && !r->gate && (r->rank < 0) == (rank < 0);
}

/* The rows of a filter taking "all ranks" (-1) or "a rank" (0) as its
 * context: all ranks first, each part by impact. */
static int md_split_table(FILE *f, const tl_compare *c, int (*keep)(const tl_cmp_row *, void *), const char *title,
                          int fold)
{
    tl_cmp_top t;
    int all = -1, one = 0;
    if (tl_cmp_top_select(&t, c, keep, &all, MD_ROWS) != 0 ||
        (!tl_cmp_single_rank(c) && tl_cmp_top_append(&t, c, keep, &one) != 0)) {
        tl_cmp_top_release(&t);
        return -1;
    }
    md_table(f, c, title, &t, fold);
    tl_cmp_top_release(&t);
    return 0;
}

static void md_steps(FILE *f, const tl_compare *c)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nrows; i++)
        n += c->rows[i].group == TL_CMP_GROUP_STEPS && (c->rows[i].rank < 0 || !tl_cmp_single_rank(c));
    if (n == 0)
        return;
    md_begin(f, 1, "Step time per rank", n);
    fputs("| rank | median, baseline \xe2\x86\x92 candidate | \xce\x94 (p adj.) | verdict |\n|---|---|---|---|\n", f);
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->group != TL_CMP_GROUP_STEPS || (r->rank >= 0 && tl_cmp_single_rank(c)))
            continue;
        fputs("| ", f);
        md_rank_cells(f, r);
    }
    md_end(f, 1);
}

/* Peak memory: the all-ranks rows (the largest rank), then the ranks. */
static void md_memory(FILE *f, const tl_compare *c)
{
    size_t shown = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->nrows && shown < MD_ROWS; i++) {
            const tl_cmp_row *r = &c->rows[i];
            if (r->group != TL_CMP_GROUP_MEMORY || (r->rank < 0) != (pass == 0) ||
                (r->rank >= 0 && tl_cmp_single_rank(c)))
                continue;
            if (shown++ == 0)
                fputs("<details><summary>Peak memory (all ranks: the largest rank)</summary>\n\n| metric | rank | "
                      "baseline \xe2\x86\x92 candidate | \xce\x94 (p adj.) | verdict |\n|---|---|---|---|---|\n",
                      f);
            fprintf(f, "| %s | ", tl_cmp_kind_name(r->kind));
            md_rank_cells(f, r);
        }
    if (shown)
        md_end(f, 1);
}

static void md_gpu(FILE *f, const tl_compare *c)
{
    size_t shown = 0;
    for (size_t i = 0; i < c->ngpu && shown < MD_ROWS; i++) {
        const tl_cmp_gpu *g = &c->gpu[i];
        if (!g->present[0] && !g->present[1])
            continue;
        if (shown++ == 0)
            fputs(
                "<details><summary>GPU time breakdown (% of kernel time, baseline \xe2\x86\x92 candidate)</summary>\n\n"
                "| rank | idle | compute | non-compute | comm. overlapped by compute |\n|---|---|---|---|---|\n",
                f);
        char rb[16];
        tl_cmp_pct_cell cells[TL_CMP_GPU_COLS];
        tl_cmp_gpu_cells(g, cells);
        fprintf(f, "| %s |", tl_cmp_rank_label(rb, sizeof rb, g->rank));
        for (int k = 0; k < TL_CMP_GPU_COLS; k++)
            fprintf(f, " %s%s%s%s |", cells[k].pair, cells[k].pp[0] ? " (" : "", cells[k].pp,
                    cells[k].pp[0] ? ")" : "");
        fputc('\n', f);
    }
    if (shown)
        md_end(f, 1);
}

/* The registry's per-rank metrics, side by side (descriptive: not tested). */
static void md_metrics(FILE *f, const tl_compare *c)
{
    if (c->nmetrics == 0)
        return;
    fprintf(f,
            "<details><summary>Per-rank metrics (one value per rank: not tested, not in the gate; better or worse "
            "beyond %.4g%%)</summary>\n\n"
            "| metric | figure | baseline | candidate | \xce\x94 | better | change |\n|---|---|---|---|---|---|---|\n",
            c->opt.max_untested_pct);
    for (size_t i = 0; i < c->nmetrics; i++) {
        const tl_cmp_metric_row *m = &c->metrics[i];
        tl_cmp_metric_cells x;
        tl_cmp_metric_cells_of(&x, m);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", m->info->label, x.figure, x.base, x.cand, x.delta,
                tl_better_name(m->info->better), x.change);
    }
    md_end(f, 1);
}

/* The counters, side by side (not tested), folded. */
static void md_counters(FILE *f, const tl_compare *c)
{
    if (c->ncounters == 0)
        return;
    md_begin(f, 1, "Counters (not tested, not in the gate)", c->ncounters);
    fputs("| counter | baseline mean | candidate mean | values | \xce\x94 | change |\n|---|---|---|---|---|---|\n", f);
    for (size_t i = 0; i < c->ncounters && i < MD_ROWS; i++) {
        tl_cmp_counter_cells x;
        tl_cmp_counter_cells_of(&x, &c->counters[i]);
        fputs("| ", f);
        tl_escape_md_n(f, c->counters[i].name, MD_NAME);
        fprintf(f, " | %s | %s | %s | %s | %s |\n", x.base, x.cand, x.counts, x.delta, x.change);
    }
    if (c->ncounters > MD_ROWS)
        fprintf(f, "\n%zu more not shown (see the JSON output).\n", c->ncounters - MD_ROWS);
    md_end(f, 1);
}

/* Added or removed names (overall rows), as a capped list. */
static int md_list(FILE *f, const tl_compare *c, int verdict, const char *title)
{
    tl_cmp_top t;
    if (tl_cmp_top_select(&t, c, tl_cmp_keep_overall, &verdict, MD_LIST) != 0)
        return -1;
    if (t.n > 0) {
        char tb[48];
        fprintf(f, "### %s (%zu)\n\n", title, t.n);
        for (size_t i = 0; i < t.shown; i++) {
            const tl_cmp_row *r = tl_cmp_top_row(&t, c, i);
            const tl_cmp_side *s = r->base.present ? &r->base : &r->cand;
            fprintf(f, "- %s: ", tl_cmp_group_name(r->group));
            tl_escape_md_n(f, r->name, MD_NAME);
            fprintf(f, " (%" PRIu64 " call%s, %s in total)\n", s->count, s->count == 1 ? "" : "s",
                    tl_units_dur(tb, sizeof tb, s->total));
        }
        if (t.n > t.shown)
            fprintf(f, "- \xe2\x80\xa6 and %zu more\n", t.n - t.shown);
        fputc('\n', f);
    }
    tl_cmp_top_release(&t);
    return 0;
}

/* The names whose total time changed most (all ranks): at most MD_ROWS, all
 * of them counted in the title. */
static int md_biggest(FILE *f, const tl_compare *c)
{
    tl_cmp_top t;
    if (tl_cmp_top_select(&t, c, tl_cmp_keep_matched, NULL, MD_ROWS) != 0)
        return -1;
    t.n = t.shown;
    md_table(f, c, "Biggest changes in total time per run (all ranks)", &t, 1);
    tl_cmp_top_release(&t);
    return 0;
}

int tl_render_compare_markdown(FILE *f, const tl_compare *c)
{
    md_headline(f, c);
    /* what fails or may fail first; added and removed names next (a new
     * kernel is often the cause); the rest folded */
    if (md_split_table(f, c, keep_gate, "Gate failures", 0) != 0 ||
        md_split_table(f, c, keep_explained,
                       "Regressions that do not fail the gate (immaterial to the step, or "
                       "explanatory)",
                       1) != 0 ||
        md_verdict_table(f, c, TL_VERDICT_LARGE_INCREASE, "Large increases, not tested (too few samples)", 0) != 0 ||
        md_list(f, c, TL_VERDICT_ADDED, "Added (only in the candidate)") != 0 ||
        md_list(f, c, TL_VERDICT_REMOVED, "Removed (only in the baseline)") != 0 ||
        md_verdict_table(f, c, TL_VERDICT_IMPROVEMENT, "Improvements", 1) != 0 ||
        md_verdict_table(f, c, TL_VERDICT_LARGE_DECREASE, "Large decreases, not tested (too few samples)", 1) != 0 ||
        md_verdict_table(f, c, TL_VERDICT_CHANGED, "Call counts and call mixes that changed", 1) != 0)
        return -1;
    md_steps(f, c);
    md_memory(f, c);
    md_gpu(f, c);
    md_metrics(f, c);
    md_counters(f, c);
    if (md_biggest(f, c) != 0)
        return -1;
    fprintf(
        f,
        "<sub>Per call: medians with distribution-free 95%% confidence intervals (order statistics, "
        "binomial), \xce\x94 of the %s; per run and per step: the calls' total; "
        "Mann\xe2\x80\x93Whitney U of \xe2\x80\x9c"
        "beyond the threshold\xe2\x80\x9d (the candidate "
        "over 1 \xc2\xb1 threshold; exact for n \xe2\x89\xa4 20 without ties, else normal with tie and "
        "continuity corrections; within a rank from 5 to 8 samples a side the permutation test of "
        "the trimmed means of the log durations), one-sided on gate rows; all ranks: the ranks' U statistics summed "
        "(stratified), or, with one sample a rank, a t over the ranks' log ratios (variance "
        "pooled over rows of like noise, the change on most ranks); p adjusted by %s; ~ not significant at "
        "\xce\xb1 = %.3g. See docs/compare.md.</sub>\n",
        tl_cmp_metric_name(c->opt.metric),
        c->opt.correction == TL_CMP_HOLM ? "Holm (gate rows) and Benjamini\xe2\x80\x93Hochberg (the others)"
                                         : "nothing",
        c->opt.alpha);
    return 0;
}

/* ---- console ------------------------------------------------------------------------ */

void tl_render_compare_console(FILE *f, const tl_compare *c)
{
    const size_t *n = c->counts;
    static char status[512], shown[1024];
    tl_cmp_status_text(status, sizeof status, c);
    fprintf(f, "tally compare: %s\n", tl_term_escape(shown, sizeof shown, status)); /* a name from an input is in it */
    fprintf(f,
            "tally compare: %zu regression%s, %zu improvement%s, %zu unchanged, %zu inconclusive, %zu with too few "
            "samples, %zu large untested change%s; %zu added, %zu removed; %zu gate failure%s",
            n[TL_VERDICT_REGRESSION], n[TL_VERDICT_REGRESSION] == 1 ? "" : "s", n[TL_VERDICT_IMPROVEMENT],
            n[TL_VERDICT_IMPROVEMENT] == 1 ? "" : "s", n[TL_VERDICT_UNCHANGED] - c->inconclusive, c->inconclusive,
            n[TL_VERDICT_TOO_FEW], n[TL_VERDICT_LARGE_INCREASE] + n[TL_VERDICT_LARGE_DECREASE],
            n[TL_VERDICT_LARGE_INCREASE] + n[TL_VERDICT_LARGE_DECREASE] == 1 ? "" : "s", n[TL_VERDICT_ADDED],
            n[TL_VERDICT_REMOVED], c->gate_failures, c->gate_failures == 1 ? "" : "s");
    if (isfinite(c->geomean_ratio))
        fprintf(f, "; geomean ratio %.4f (%s, %zu names)", c->geomean_ratio, tl_cmp_metric_name(c->opt.metric),
                c->geomean_n);
    fputc('\n', f);
}

void tl_render_compare_regressions(FILE *f, const tl_compare *c)
{
    static char name[4096]; /* one line per regression: a newline in a name escaped */
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (!r->gate)
            continue;
        char where[32] = "all ranks";
        if (r->rank >= 0)
            snprintf(where, sizeof where, "rank %d", r->rank);
        const char *what = r->kind == TL_CMP_PER_CALL ? tl_cmp_metric_name(c->opt.metric) : tl_cmp_kind_name(r->kind);
        char b[48], k[48]; /* the values in their unit: "499.5 ms -> 675.3 ms" */
        tl_cmp_value_text(b, sizeof b, r, r->value_base);
        tl_cmp_value_text(k, sizeof k, r, r->value_cand);
        tl_term_escape(name, sizeof name, r->name);
        if (r->verdict == TL_VERDICT_REGRESSION)
            fprintf(f, "tally: regression: %s \"%s\" (%s): %s %+.1f%% (%s -> %s), p = %.3g (adjusted %.3g)\n",
                    tl_cmp_group_name(r->group), name, where, what, r->delta_pct, b, k, r->p_value, r->p_adjusted);
        else {
            char *note = r->note ? tl_text_numbers(r->note) : NULL;
            fprintf(f, "tally: regression (untested): %s \"%s\" (%s): %s %s (%s -> %s)\n", tl_cmp_group_name(r->group),
                    name, where, what, note ? note : "", b, k);
            free(note);
        }
    }
}

/* ---- JUnit XML -------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (allowed in XML 1.0), or 0. */
static size_t xml_char_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' ? 1 : 0;
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xc0) != 0x80)
            return 0;
    if (n == 3) {
        unsigned cp = ((c & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
        if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
            return 0;
    } else if (n == 4) {
        unsigned cp = ((c & 0x07u) << 18) | ((s[1] & 0x3fu) << 12) | ((s[2] & 0x3fu) << 6) | (s[3] & 0x3fu);
        if (cp < 0x10000 || cp > 0x10ffff)
            return 0;
    }
    return n;
}

/* Text or an attribute value (in double quotes), cut to max bytes. */
static void xml_escape(FILE *f, const char *s, size_t max)
{
    size_t n = tl_escape_cut(s, max);
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = xml_char_len(u + i);
        if (len == 0 || i + len > n) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
            i++;
            continue;
        }
        switch (u[i]) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        case '\n':
            fputs("&#10;", f);
            break;
        case '\r':
            fputs("&#13;", f);
            break;
        case '\t':
            fputs("&#9;", f);
            break;
        default:
            fwrite(u + i, 1, len, f);
            break;
        }
        i += len;
    }
    if (s[n] != '\0')
        fputs("\xe2\x80\xa6", f);
}

static int compared(const tl_cmp_row *r)
{
    return r->base.present && r->cand.present;
}

typedef struct junit_counts {
    size_t tests, failures, skipped;
} junit_counts;

static junit_counts count_group(const tl_compare *c, int group)
{
    junit_counts k = { 0, 0, 0 };
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if ((group >= 0 && r->group != group) || !compared(r))
            continue;
        k.tests++;
        k.failures += r->gate;
        k.skipped += !r->gate && r->verdict == TL_VERDICT_TOO_FEW;
    }
    return k;
}

static void junit_case(FILE *f, const tl_compare *c, const tl_cmp_row *r)
{
    char rb[32], db[48], pb[32], b1[48], b2[48];
    fputs("    <testcase classname=\"tally.compare.", f);
    for (const char *g = tl_cmp_group_name(r->group); *g; g++)
        fputc(*g == ' ' ? '_' : *g, f);
    fputs("\" name=\"", f);
    xml_escape(f, r->name, XML_NAME);
    if (r->rank >= 0)
        snprintf(rb, sizeof rb, " (rank %d)", r->rank);
    else
        snprintf(rb, sizeof rb, " (all ranks)");
    fprintf(f, " [%s]%s\" time=\"0\"", tl_cmp_kind_name(r->kind), rb);
    const char *metric = r->kind == TL_CMP_PER_CALL ? tl_cmp_metric_name(c->opt.metric) : tl_cmp_kind_name(r->kind);
    /* One failure per gate failure, as the exit code counts them; a
     * regression that does not fail the gate (immaterial to the step, an
     * explanatory row) passes, its verdict in its output. */
    if (r->gate && r->verdict != TL_VERDICT_REGRESSION) {
        fputs(">\n      <failure type=\"large_increase_untested\" message=\"", f);
        char *note = r->note ? tl_text_numbers(r->note) : NULL;
        xml_escape(f, note ? note : "", 0);
        free(note);
        fputs("\"/>\n    </testcase>\n", f);
    } else if (r->verdict == TL_VERDICT_REGRESSION) {
        char msg[160], text[400];
        snprintf(msg, sizeof msg, "%s %s, adjusted p = %s", metric, tl_cmp_delta_text(db, sizeof db, r),
                 p_text(pb, sizeof pb, r->p_adjusted));
        snprintf(text, sizeof text, "%s %s -> %s", metric, tl_cmp_value_text(b1, sizeof b1, r, r->value_base),
                 tl_cmp_value_text(b2, sizeof b2, r, r->value_cand));
        if (r->gate) {
            fputs(">\n      <failure type=\"regression\" message=\"", f);
            xml_escape(f, msg, 0);
            fputs("\">", f);
            xml_escape(f, text, 0);
            fputs("</failure>\n    </testcase>\n", f);
        } else {
            fputs(">\n      <system-out>regression, not in the gate (", f);
            xml_escape(f, r->primary && !r->material ? "immaterial to the step" : "an explanatory row", 0);
            fputs("): ", f);
            xml_escape(f, msg, 0);
            fputs("; ", f);
            xml_escape(f, text, 0);
            fputs("</system-out>\n    </testcase>\n", f);
        }
    } else if (r->verdict == TL_VERDICT_TOO_FEW) {
        fprintf(f,
                ">\n      <skipped message=\"too few samples for a test that could be significant (%zu baseline, "
                "%zu candidate)\"/>\n    </testcase>\n",
                r->base.nsamples, r->cand.nsamples);
    } else {
        fputs("/>\n", f);
    }
}

int tl_render_compare_junit(FILE *f, const tl_compare *c)
{
    junit_counts all = count_group(c, -1);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    /* no "skipped" on <testsuites>: Jenkins xUnit's JUnit schema has none there */
    fprintf(f, "<testsuites name=\"tally compare\" tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n", all.tests,
            all.failures);
    for (int g = 0; g < TL_CMP_NGROUPS; g++) {
        junit_counts k = count_group(c, g);
        if (k.tests == 0)
            continue;
        fprintf(f, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
                tl_cmp_group_name(g), k.tests, k.failures, k.skipped);
        for (size_t i = 0; i < c->nrows; i++)
            if (c->rows[i].group == g && compared(&c->rows[i]))
                junit_case(f, c, &c->rows[i]);
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    return 0;
}
