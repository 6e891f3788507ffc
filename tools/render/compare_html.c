/*
 * compare_html.c - the `tally compare` page: one self-contained HTML file
 * (inline CSS and SVG, no script, nothing fetched), see compare.h. The page
 * shell and the stylesheet are the report's (tl_render_page: the template
 * and assets/report.css), so both pages look like one product.
 *
 * Sections, in order: headline (what got faster or slower, the geomean),
 * delta bars of the names whose total time changed most, step times side by
 * side, GPU breakdowns side by side, both runs' timelines on one time scale,
 * every compared name by group, added and removed names, and the method.
 * Every table and chart is capped, so the page's size does not grow with the
 * inputs; every string from an input goes through escape.h (or svg.h, which
 * escapes its own text). The page is a function of the comparison alone: the
 * same inputs give the same bytes.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "text_numbers.h"
#include "compare_rows.h"
#include "escape.h"
#include "render.h"
#include "svg.h"
#include "units.h"

enum {
    TOP_BARS = 30,    /* delta bars */
    TOP_NAMES = 5,    /* names in the headline */
    TABLE_ROWS = 100, /* rows per table */
    LIST_ROWS = 100,  /* added / removed names */
    NAME_MAX = 2000,  /* bytes of a name in a table cell: whole, so no two rows read alike */
    CHART_RANKS = 8,  /* ranks drawn per side in the step chart */
    GPU_RANKS = 16,   /* ranks in the GPU chart */
    TL_COLS = 960,    /* timeline columns over the longer run */
    TL_LANES = 24,    /* timeline lanes per run */
};

/* ---- small pieces ------------------------------------------------------------------ */

static void cell_name(FILE *f, const char *name)
{
    fputs("<td class=\"name\" title=\"", f);
    tl_escape_attr_n(f, name, 1000);
    fputs("\">", f);
    tl_escape_html_n(f, name, NAME_MAX);
    fputs("</td>", f);
}

/* A side's compared value in its unit, with the median's interval per call. */
static void cell_median(FILE *f, const tl_cmp_row *r, int cand)
{
    tl_cmp_side_cell cell;
    tl_cmp_side_cell_of(&cell, r, cand);
    fprintf(f, "<td class=\"n\">%s", cell.value);
    if (cell.ci[0])
        fprintf(f, "<br><span class=\"note\">%s</span>", cell.ci);
    fputs("</td>", f);
}

/* "+1.234 ms", the row's change of total time; "\xe2\x80\x93" where it has
 * none of its own (bytes; per step and calls per step: a share of the
 * per-run row's change), which the rows keep as 0 for sorting. */
static const char *impact_text(char *buf, size_t len, const tl_cmp_row *r)
{
    if (r->group == TL_CMP_GROUP_MEMORY || r->kind == TL_CMP_PER_STEP || r->kind == TL_CMP_CALLS_PER_STEP) {
        snprintf(buf, len, "\xe2\x80\x93");
        return buf;
    }
    char t[48];
    snprintf(buf, len, "%s%s", r->impact_ns >= 0 ? "+" : "", tl_units_dur(t, sizeof t, r->impact_ns));
    return buf;
}

/* A p-value printed into HTML: "&lt;0.001" where the Markdown and JUnit
 * outputs write "<0.001". */
static const char *p_text(char *buf, size_t len, double p)
{
    return tl_cmp_p_text(buf, len, p, "&lt;");
}

/* The verdict cell: the verdict, "gate" when it fails the gate, the note. */
static void cell_verdict(FILE *f, const tl_cmp_row *r)
{
    fprintf(f, "<td class=\"v-%s\">%s%s", tl_verdict_name(r->verdict), tl_cmp_verdict_text(r, 1),
            r->gate      ? " <b>(gate)</b>"
            : r->floored ? " (under the gate's floor)"
                         : "");
    if (r->note) {
        fputs("<br><span class=\"note\">", f);
        char *note = tl_text_numbers(r->note);
        tl_escape_html_n(f, note ? note : "", NAME_MAX);
        free(note);
        fputs("</span>", f);
    }
    fputs("</td>", f);
}

/* Overall rows of a verdict among the ones a headline names: step time,
 * totals per run, peak memory (the per-call and per-step rows explain them). */
static int v_overall(const tl_cmp_row *r, void *ctx)
{
    int v = *(const int *)ctx;
    return tl_cmp_keep_overall(r, ctx) &&
           (v == TL_VERDICT_ADDED || v == TL_VERDICT_REMOVED || r->primary || r->kind == TL_CMP_PER_RUN);
}

/* ---- head and headline --------------------------------------------------------------- */

static void run_line(FILE *f, const char *what, const char *label, const tl_aggregate *a)
{
    fprintf(f, "<p class=\"meta\">%s", what);
    if (label) {
        fputs(" <b>", f);
        tl_escape_html_n(f, label, 200);
        fputs("</b>", f);
    }
    fprintf(f, ": %zu file%s, %zu rank%s", a->nsessions, a->nsessions == 1 ? "" : "s", a->nranks,
            a->nranks == 1 ? "" : "s");
    if (a->nsessions > 0) {
        fputs(" (", f);
        tl_escape_html_n(f, a->sessions[0].id.path, 200);
        fputs(a->nsessions > 1 ? ", \xe2\x80\xa6)" : ")", f);
    }
    fputs("</p>\n", f);
}

/* "name (+30.1%), name (+12.0%)" for the top overall rows of a verdict. */
static int headline_names(FILE *f, const tl_compare *c, int verdict, const char *label)
{
    tl_cmp_top t;
    if (tl_cmp_top_select(&t, c, v_overall, &verdict, TOP_NAMES) != 0)
        return -1;
    if (t.n == 0) { /* only some ranks changed */
        tl_cmp_top_release(&t);
        if (tl_cmp_top_select(&t, c, tl_cmp_keep_rank, &verdict, TOP_NAMES) != 0)
            return -1;
    }
    if (t.n > 0) {
        fprintf(f, "<p><b>%s:</b> ", label);
        for (size_t i = 0; i < t.shown; i++) {
            const tl_cmp_row *r = tl_cmp_top_row(&t, c, i);
            char d[48], rb[24];
            fputs(i ? ", " : "", f);
            fputs("<code>", f);
            tl_escape_html_n(f, r->name, 80);
            if (r->rank >= 0)
                snprintf(rb, sizeof rb, "rank %d", r->rank);
            /* The kind ("per run", "per step") tells apart rows of one name and rank. */
            char kind[32];
            snprintf(kind, sizeof kind, "%s", tl_cmp_kind_name(r->kind));
            for (char *u = kind; *u; u++)
                if (*u == '_')
                    *u = ' ';
            fprintf(f, "</code> (%s %s %s, %s", tl_cmp_group_name(r->group), kind, tl_cmp_delta_text(d, sizeof d, r),
                    r->rank < 0 ? "all ranks" : rb);
            if (r->floored) {
                char share[32];
                fprintf(f, "; %s of the run: under the gate's floor",
                        tl_units_pct_down(share, sizeof share, r->run_share_pct));
            }
            fputc(')', f);
        }
        if (t.n > t.shown)
            fprintf(f, " and %zu more", t.n - t.shown);
        fputs("</p>\n", f);
    }
    tl_cmp_top_release(&t);
    return 0;
}

static int headline(FILE *f, const tl_compare *c)
{
    const size_t *n = c->counts;
    /* Red (the report's .headline) only for what needs action: the counts when a
     * regression is listed, the gate when it fails; otherwise the calm box. */
    /* the verdict first, as every output writes it (tl_compare_verdict) */
    char status[512], advice[1024];
    /* no emoji here: a page must read without an emoji font (the box's
     * colour and the words say it) */
    fprintf(f, "<section id=\"headline\"><h2>Headline</h2>\n<p class=\"headline%s\" id=\"status\"><b>",
            c->gate_failures ? "" : " calm");
    tl_cmp_status_text(status, sizeof status, c);
    if (status[0] == 'g')
        status[0] = 'G'; /* "Gate fails: ..." leads a paragraph */
    tl_escape_html(f, status);
    fputs("</b></p>\n<p class=\"note\"><b>What to do:</b> ", f);
    tl_escape_html(f, tl_cmp_advice_text(advice, sizeof advice, c));
    fprintf(f, "</p>\n<p class=\"headline%s\">", c->gate_failures ? "" : " calm");
    char sentence[400];
    if (tl_cmp_step_text(sentence, sizeof sentence, c)[0]) {
        fputs("<b>", f);
        tl_escape_html(f, sentence);
        fputs("</b> ", f);
    }
    if (tl_cmp_geomean_sentence(sentence, sizeof sentence, c)[0]) {
        tl_escape_html(f, sentence);
        fputc(' ', f);
    }
    fprintf(f,
            "<b>%zu regression%s</b> and <b>%zu improvement%s</b> (significant at \xce\xb1 = %.3g and beyond "
            "%.4g%%); %zu unchanged, %zu inconclusive (beyond the threshold, not significant), %zu with too few "
            "samples, %zu added, %zu removed.</p>\n",
            n[TL_VERDICT_REGRESSION], n[TL_VERDICT_REGRESSION] == 1 ? "" : "s", n[TL_VERDICT_IMPROVEMENT],
            n[TL_VERDICT_IMPROVEMENT] == 1 ? "" : "s", c->opt.alpha, c->opt.threshold_pct,
            n[TL_VERDICT_UNCHANGED] - c->inconclusive, c->inconclusive, n[TL_VERDICT_TOO_FEW], n[TL_VERDICT_ADDED],
            n[TL_VERDICT_REMOVED]);
    char split[96];
    double material = isnan(c->opt.material_pct) ? c->opt.threshold_pct : c->opt.material_pct;
    fprintf(f,
            "<p class=\"note\">The gate: %zu failure%s (the step time first, then the stages, ops and kernels "
            "whose change is %.4g%% of the step or more, and peak memory%s). %zu change%s beyond %.4g%% could "
            "not be tested (too few samples).</p>\n",
            c->gate_failures, c->gate_failures == 1 ? "" : "s", material, tl_cmp_gate_split(split, sizeof split, c),
            n[TL_VERDICT_LARGE_INCREASE] + n[TL_VERDICT_LARGE_DECREASE],
            n[TL_VERDICT_LARGE_INCREASE] + n[TL_VERDICT_LARGE_DECREASE] == 1 ? "" : "s", c->opt.max_untested_pct);
    if (headline_names(f, c, TL_VERDICT_REGRESSION, "Slower") != 0 ||
        headline_names(f, c, TL_VERDICT_LARGE_INCREASE, "Larger, not tested") != 0 ||
        headline_names(f, c, TL_VERDICT_IMPROVEMENT, "Faster") != 0)
        return -1;
    if (c->nbase_only || c->ncand_only) {
        char ranks[512];
        fputs("<p class=\"note\">Warning: ", f);
        tl_escape_html(f, tl_cmp_ranks_text(ranks, sizeof ranks, c));
        fputs(" (a missing rank fails the gate with --strict).</p>\n", f);
    }
    fputs("</section>\n", f);
    return 0;
}

/* ---- delta bars ------------------------------------------------------------------------ */

/* DB_LABEL_COLS: a name's label (labels.h) in DB_LABEL px at 12 px. */
enum { DB_W = 960, DB_LABEL = 330, DB_X = 340, DB_PLOT = 520, DB_ROW = 20, DB_TOP = 24, DB_LABEL_COLS = 44 };

static const char *bar_class(const tl_cmp_row *r)
{
    return r->verdict == TL_VERDICT_REGRESSION ? "reg" : r->verdict == TL_VERDICT_IMPROVEMENT ? "imp" : "neu";
}

static void delta_bar(FILE *f, const tl_cmp_row *r, const char *label, double y, double scale)
{
    char d[48], b1[48], b2[48], t[48], p[32];
    double v = isfinite(r->delta_pct) ? fmax(-scale, fmin(scale, r->delta_pct)) : 0;
    double zero = DB_X + DB_PLOT / 2.0, w = DB_PLOT / 2.0 * fabs(v) / scale;
    fputs("<g><title>", f);
    tl_escape_html_n(f, r->name, 1000);
    /* the row's own figure: a median per call, or a total per run */
    int per_call = r->kind == TL_CMP_PER_CALL;
    fprintf(f, " (%s): %s %s \xe2\x86\x92 %s, %s; total %s; p %s</title>", tl_cmp_group_name(r->group),
            per_call ? "median" : tl_cmp_kind_name(r->kind),
            tl_cmp_value_text(b1, sizeof b1, r, per_call ? r->base.median : r->value_base),
            tl_cmp_value_text(b2, sizeof b2, r, per_call ? r->cand.median : r->value_cand),
            tl_cmp_delta_text(d, sizeof d, r), impact_text(t, sizeof t, r), p_text(p, sizeof p, r->p_adjusted));
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", DB_LABEL, y + 13);
    tl_escape_html(f, label);
    fprintf(f, "</text><rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\"/>", bar_class(r),
            v < 0 ? zero - w : zero, y + 2, w);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n", DB_X + DB_PLOT + 8.0, y + 13, d);
}

/* Does a row lead the chart: a verdict (tested or untested) or a gate
 * failure? Rows without one (unchanged, inconclusive, too few samples) come
 * after, however large their change: a non-significant +2595 % never leads. */
static int leads(const tl_cmp_row *r)
{
    return r->gate || r->verdict == TL_VERDICT_REGRESSION || r->verdict == TL_VERDICT_IMPROVEMENT ||
           r->verdict == TL_VERDICT_LARGE_INCREASE || r->verdict == TL_VERDICT_LARGE_DECREASE;
}

/* Rows with a verdict first, then larger change of the metric first (NaN
 * last); equal ones by name. */
static int by_delta(const void *x, const void *y, void *ctx)
{
    const tl_compare *c = ctx;
    const tl_cmp_row *a = &c->rows[*(const size_t *)x], *b = &c->rows[*(const size_t *)y];
    if (leads(a) != leads(b))
        return leads(a) ? -1 : 1;
    double da = isfinite(a->delta_pct) ? a->delta_pct : -INFINITY,
           db = isfinite(b->delta_pct) ? b->delta_pct : -INFINITY;
    if (da != db)
        return da < db ? 1 : -1;
    return strcmp(a->name, b->name);
}

static int delta_bars(FILE *f, const tl_compare *c)
{
    tl_cmp_top t;
    if (tl_cmp_top_select(&t, c, tl_cmp_keep_matched, NULL, TOP_BARS) != 0)
        return -1;
    fputs("<section id=\"deltas\"><h2>What changed most</h2>\n", f);
    if (t.n == 0) {
        fputs("<p>No name is in both runs.</p></section>\n", f);
        tl_cmp_top_release(&t);
        return 0;
    }
    size_t shown = t.shown;
    /* the names chosen by their change in total, drawn in the order of what
     * the bars show: the most slower first, the most faster last */
    qsort_r(t.idx, shown, sizeof *t.idx, by_delta, (void *)c);
    double scale = 5;
    for (size_t i = 0; i < shown; i++)
        if (isfinite(tl_cmp_top_row(&t, c, i)->delta_pct))
            scale = fmax(scale, fmin(100.0, fabs(tl_cmp_top_row(&t, c, i)->delta_pct)));
    fprintf(f,
            "<p class=\"note\">The %zu names (all ranks) whose total time changed most: those with a verdict "
            "first, then those without (grey, not significant: ~), each part ordered by the change each bar "
            "shows: the change of the %s (clipped at \xc2\xb1%.0f%%), red slower, green faster.</p>\n",
            shown, tl_cmp_metric_name(c->opt.metric), scale);
    double h = DB_TOP + (double)shown * DB_ROW + 8, zero = DB_X + DB_PLOT / 2.0;
    fprintf(f,
            "<svg class=\"chart deltas\" role=\"img\" aria-labelledby=\"deltas-t\" viewBox=\"0 0 %d %.0f\" "
            "width=\"%d\" height=\"%.0f\"><title id=\"deltas-t\">Change of the %s per name</title>\n",
            DB_W, h, DB_W, h, tl_cmp_metric_name(c->opt.metric));
    fprintf(f,
            "<text class=\"tick\" x=\"%d\" y=\"14\">%+.0f%% (faster)</text><text class=\"tick\" x=\"%.1f\" y=\"14\" "
            "text-anchor=\"middle\">0</text><text class=\"tick\" x=\"%d\" y=\"14\" text-anchor=\"end\">%+.0f%% "
            "(slower)</text>\n",
            DB_X, -scale, zero, DB_X + DB_PLOT, scale);
    fprintf(f, "<line class=\"zero\" x1=\"%.1f\" y1=\"18\" x2=\"%.1f\" y2=\"%.0f\"/>\n", zero, zero, h);
    tl_cmp_top_label(&t, c, DB_LABEL_COLS);
    for (size_t i = 0; i < shown; i++) {
        /* A name in two groups (a section and a GPU annotation "forward")
         * would read twice alike: its group tells them apart. */
        const char *label = tl_cmp_top_label_of(&t, i, "");
        char both[DB_LABEL_COLS * 4 + 48];
        for (size_t j = 0; j < shown; j++)
            if (j != i && strcmp(tl_cmp_top_label_of(&t, j, ""), label) == 0) {
                snprintf(both, sizeof both, "%s [%s]", label, tl_cmp_group_name(tl_cmp_top_row(&t, c, i)->group));
                label = both;
                break;
            }
        delta_bar(f, tl_cmp_top_row(&t, c, i), label, DB_TOP + (double)i * DB_ROW, scale);
    }
    fputs("</svg>\n</section>\n", f);
    tl_cmp_top_release(&t);
    return 0;
}

/* ---- steps ---------------------------------------------------------------------------- */

static void steps_table(FILE *f, const tl_compare *c)
{
    fputs("<table><tr><th>rank</th><th>baseline median [95% CI]</th><th>candidate median [95% CI]</th>"
          "<th>\xce\x94</th><th>p (adj.)</th><th>steps</th><th>verdict</th></tr>\n",
          f);
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->group != TL_CMP_GROUP_STEPS)
            continue;
        char rb[16], d[48], p[32];
        fprintf(f, "<tr><td>%s</td>", tl_cmp_rank_label(rb, sizeof rb, r->rank));
        cell_median(f, r, 0);
        cell_median(f, r, 1);
        fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%" PRIu64 " / %" PRIu64 "</td>",
                tl_cmp_delta_text(d, sizeof d, r), p_text(p, sizeof p, r->p_adjusted), r->base.count, r->cand.count);
        cell_verdict(f, r);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

typedef struct step_series {
    tl_svg_series s[2 * CHART_RANKS];
    double *x[2 * CHART_RANKS], *y[2 * CHART_RANKS];
    char label[2 * CHART_RANKS][40];
    char cls[2 * CHART_RANKS][32];
    size_t n;
} step_series;

static int add_series(step_series *ss, const tl_sstep *steps, size_t nsteps, int rank, int side, size_t rank_slot)
{
    size_t k = ss->n;
    ss->x[k] = malloc((nsteps + 1) * sizeof(double));
    ss->y[k] = malloc((nsteps + 1) * sizeof(double));
    if (ss->x[k] == NULL || ss->y[k] == NULL) {
        free(ss->x[k]);
        free(ss->y[k]);
        return -1;
    }
    for (size_t i = 0; i < nsteps; i++) {
        ss->x[k][i] = (double)i;
        ss->y[k][i] = (double)steps[i].dur_ns;
    }
    snprintf(ss->label[k], sizeof ss->label[k], "%s rank %d", side ? "candidate" : "baseline", rank);
    /* the rank's color on both sides (the same rank reads as one hue), the
     * baseline dotted */
    snprintf(ss->cls[k], sizeof ss->cls[k], "%s%s", tl_svg_rank_class(rank >= 0 ? (size_t)rank : rank_slot),
             side ? "" : " base");
    ss->s[k] = (tl_svg_series){ ss->label[k], ss->cls[k], ss->x[k], ss->y[k], nsteps };
    ss->n++;
    return 0;
}

/* The steps a side compares of rank r: all of the rank's, or with a session
 * chosen (--sessions) that session's only -- both sides are then one
 * aggregate, and the rank's steps would draw both sessions twice. */
static const tl_sstep *side_steps(const tl_compare *c, const tl_aggregate *a, const tl_rank_result *r, int side,
                                  size_t *n)
{
    *n = r->nsteps;
    if (c->opt.session[side] == -1)
        return r->steps;
    *n = 0;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        if (tl_compare_session_wanted(a, s, c->opt.session[side])) {
            *n = s->nsteps;
            return s->steps;
        }
    }
    return NULL;
}

static int steps_chart(FILE *f, const tl_compare *c)
{
    step_series ss;
    memset(&ss, 0, sizeof ss);
    const tl_aggregate *a[2] = { c->base, c->cand };
    int rc = 0;
    for (int side = 0; side < 2 && rc == 0; side++)
        for (size_t i = 0, drawn = 0; i < a[side]->nranks && drawn < CHART_RANKS && rc == 0; i++) {
            size_t n;
            const tl_sstep *steps = side_steps(c, a[side], &a[side]->ranks[i], side, &n);
            if (n > 0) {
                rc = add_series(&ss, steps, n, a[side]->ranks[i].rank, side, drawn);
                drawn++;
            }
        }
    if (rc == 0 && ss.n > 0) {
        tl_svg_frame fr = {
            "steps", "Step time per step and rank, baseline and candidate",
            "One line per rank and run, in the rank's color: dotted the baseline, solid the candidate."
        };
        tl_svg_axes ax = { "step (in order)", "step time", TL_UNIT_COUNT, TL_UNIT_NS };
        tl_svg_lines(f, &fr, &ax, ss.s, ss.n);
    }
    for (size_t k = 0; k < ss.n; k++) {
        free(ss.x[k]);
        free(ss.y[k]);
    }
    return rc;
}

static int steps_section(FILE *f, const tl_compare *c)
{
    fputs("<section id=\"steps\"><h2>Step times</h2>\n", f);
    int any = 0;
    for (size_t i = 0; i < c->nrows && !any; i++)
        any = c->rows[i].group == TL_CMP_GROUP_STEPS;
    if (!any) {
        fputs("<p>Neither run has steps (ProfilerStep#N or a main loop's iterations).</p></section>\n", f);
        return 0;
    }
    steps_table(f, c);
    int rc = steps_chart(f, c);
    fputs("</section>\n", f);
    return rc;
}

/* ---- GPU breakdown --------------------------------------------------------------------- */

static void gpu_stack(tl_svg_stack *st, char *label, size_t len, const tl_cmp_gpu *g, int side)
{
    char rb[16];
    const char *who = side ? "candidate" : "baseline";
    if (g->rank < 0)
        snprintf(label, len, "all ranks \xc2\xb7 %s", who);
    else
        snprintf(label, len, "rank %s \xc2\xb7 %s", tl_cmp_rank_label(rb, sizeof rb, g->rank), who);
    memset(st, 0, sizeof *st);
    st->label = label;
    st->total = 100;
    st->segs[0] = (tl_svg_seg){ "compute", "compute", g->compute_pct[side] };
    st->segs[1] = (tl_svg_seg){ "non-compute", "comm", g->non_compute_pct[side] };
    st->segs[2] = (tl_svg_seg){ "idle", "idle", g->idle_pct[side] };
    st->nsegs = 3;
}

static void gpu_chart(FILE *f, const tl_compare *c)
{
    tl_svg_stack st[2 * (GPU_RANKS + 1)];
    char labels[2 * (GPU_RANKS + 1)][48];
    size_t n = 0;
    for (size_t i = 0; i < c->ngpu && i <= GPU_RANKS; i++)
        for (int side = 0; side < 2; side++)
            if (c->gpu[i].present[side]) {
                gpu_stack(&st[n], labels[n], sizeof labels[n], &c->gpu[i], side);
                n++;
            }
    if (n == 0)
        return;
    tl_svg_frame fr = { "gpu", "GPU time breakdown, baseline and candidate",
                        "Compute, non-compute and idle time as a share of kernel time, per rank and run." };
    tl_svg_stacked(f, &fr, st, n, TL_UNIT_PCT);
}

static void gpu_section(FILE *f, const tl_compare *c)
{
    fputs("<section id=\"gpu\"><h2>GPU time breakdown</h2>\n", f);
    if (c->ngpu == 0 || (!c->gpu[0].present[0] && !c->gpu[0].present[1])) {
        fputs("<p>Neither run has GPU events.</p></section>\n", f);
        return;
    }
    gpu_chart(f, c);
    fputs("<table><tr><th>rank</th><th>idle</th><th>compute</th><th>non-compute</th>"
          "<th>communication overlapped by compute</th></tr>\n",
          f);
    for (size_t i = 0; i < c->ngpu && i <= TABLE_ROWS; i++) {
        const tl_cmp_gpu *g = &c->gpu[i];
        char rb[16];
        tl_cmp_pct_cell cells[TL_CMP_GPU_COLS];
        tl_cmp_gpu_cells(g, cells);
        fprintf(f, "<tr><td>%s</td>", tl_cmp_rank_label(rb, sizeof rb, g->rank));
        for (int k = 0; k < TL_CMP_GPU_COLS; k++) {
            fprintf(f, "<td class=\"n\">%s", cells[k].pair);
            if (cells[k].pp[0])
                fprintf(f, "<br><span class=\"note\">%s</span>", cells[k].pp);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p class=\"note\">% of kernel time (HTA's temporal breakdown), baseline \xe2\x86\x92 "
          "candidate; pp: percentage points.</p>\n</section>\n",
          f);
}

/* The registry's per-rank metrics side by side: descriptive, one value per
 * rank, so no test and no verdict; the change is colored only when the
 * registry says which way is better. */
static void metrics_section(FILE *f, const tl_compare *c)
{
    if (c->nmetrics == 0)
        return;
    fputs("<section id=\"metrics\"><h2>Per-rank metrics</h2>\n<table><tr><th>metric</th><th>figure</th>"
          "<th>baseline</th><th>candidate</th><th>\xce\x94</th><th>better</th><th>change</th></tr>\n",
          f);
    for (size_t i = 0; i < c->nmetrics; i++) {
        const tl_cmp_metric_row *m = &c->metrics[i];
        tl_cmp_metric_cells x;
        tl_cmp_metric_cells_of(&x, m);
        fputs("<tr><td>", f);
        tl_escape_html(f, m->info->label);
        fprintf(f,
                "</td><td>%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                "<td>%s</td><td class=\"c-%s\">%s</td></tr>\n",
                x.figure, x.base, x.cand, x.delta, tl_better_name(m->info->better),
                tl_cmp_change_key(m->change) ? tl_cmp_change_key(m->change) : "none", x.change);
    }
    fprintf(f,
            "</table>\n<p class=\"note\">Each metric's across-rank figure (the mean of the ranks, or the "
            "most: the rank that limits the job) in each run; \xce\x94 of %% metrics in percentage points. "
            "Over the ranks both runs have the metric on; with none in common each run's own, not judged. "
            "One value per rank is too few to test: these rows describe, they are not verdicts and not in "
            "the gate. Better or worse: beyond the large-change threshold of untested rows (%.4g%%, %% "
            "metrics by points). Definitions: docs/analysis.md, Per-rank metrics.</p>\n</section>\n",
            c->opt.max_untested_pct);
}

/* The counters the programs recorded, side by side (not tested). */
static void counters_section(FILE *f, const tl_compare *c)
{
    if (c->ncounters == 0)
        return;
    fputs("<section id=\"counters\"><h2>Counters</h2>\n<table><tr><th>counter</th><th>baseline mean</th>"
          "<th>candidate mean</th><th>values recorded</th><th>\xce\x94</th><th>change</th></tr>\n",
          f);
    for (size_t i = 0; i < c->ncounters && i < LIST_ROWS; i++) {
        tl_cmp_counter_cells x;
        tl_cmp_counter_cells_of(&x, &c->counters[i]);
        fputs("<tr>", f);
        cell_name(f, c->counters[i].name);
        fprintf(f,
                "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                "<td>%s</td></tr>\n",
                x.base, x.cand, x.counts, x.delta, x.change);
    }
    fputs("</table>\n", f);
    if (c->ncounters > LIST_ROWS)
        fprintf(f, "<p class=\"note\">%zu more counters in the JSON output.</p>\n", c->ncounters - LIST_ROWS);
    fprintf(f,
            "<p class=\"note\">Each counter's mean over the compared sessions' means (tally_counter, a trace's C "
            "events). Its values are not kept, so it is not tested and never in the gate: changed beyond the "
            "large-change threshold (%.4g%%).</p>\n</section>\n",
            c->opt.max_untested_pct);
}

/* ---- timelines ------------------------------------------------------------------------- */

typedef struct run_lanes {
    tl_svg_lane lanes[TL_LANES];
    uint8_t kind[TL_LANES][TL_COLS], level[TL_LANES][TL_COLS];
    double busy[TL_COLS][TL_KT_COUNT]; /* scratch of lane_columns */
    size_t n;
} run_lanes;

/* The sessions of a side's timeline: those it compares (which: its
 * tl_cmp_options.session). */
static int drawn_session(const tl_aggregate *a, const tl_session *s, int which)
{
    return tl_session_counts(s) && s->timeline.start_ns < s->timeline.end_ns && tl_compare_session_wanted(a, s, which);
}

/* The run's time range on its timeline axis; start >= end: no timeline. */
static void run_range(const tl_aggregate *a, int which, int64_t *start, int64_t *end)
{
    *start = INT64_MAX;
    *end = INT64_MIN;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_timeline *t = &a->sessions[i].timeline;
        if (!drawn_session(a, &a->sessions[i], which) || t->nlanes == 0)
            continue;
        if (t->start_ns < *start)
            *start = t->start_ns;
        if (t->end_ns > *end)
            *end = t->end_ns;
    }
}

/* Resample a lane's bins onto columns of col_ns from t0: per column the
 * dominant kind and a busy level 0..4. */
static void lane_columns(const tl_timeline *t, const tl_lane *l, int64_t t0, double col_ns, uint8_t *kind,
                         uint8_t *level, double (*busy)[TL_KT_COUNT])
{
    memset(busy, 0, TL_COLS * sizeof *busy);
    double bin_ns = ((double)t->end_ns - (double)t->start_ns) / TL_TIMELINE_BINS;
    /* each bin adds to the columns it overlaps, in proportion to the overlap
     * (as html_timeline.c does): a bin given whole to the column of its
     * midpoint gives some columns two bins and others one, which shows as
     * stripes of alternating shade */
    for (int b = 0; b < TL_TIMELINE_BINS; b++) {
        double x0 = (((double)t->start_ns - (double)t0) + b * bin_ns) / col_ns, x1 = x0 + bin_ns / col_ns;
        long c0 = x0 < 0 ? 0 : (long)floor(x0), c1 = x1 > TL_COLS ? TL_COLS : (long)ceil(x1);
        for (long col = c0; col < c1; col++) {
            double ov = (fmin(x1, col + 1.0) - fmax(x0, (double)col)) * col_ns;
            for (int k = 0; ov > 0 && k < TL_KT_COUNT; k++)
                busy[col][k] += tl_lane_busy(l, k, (size_t)b) * ov;
        }
    }
    for (int col = 0; col < TL_COLS; col++) {
        double sum = 0, best = 0;
        kind[col] = 0;
        for (int k = 0; k < TL_KT_COUNT; k++) {
            sum += busy[col][k];
            if (busy[col][k] > best) {
                best = busy[col][k];
                kind[col] = (uint8_t)k;
            }
        }
        double frac = fmin(1.0, sum / col_ns);
        level[col] = !(frac > 0) ? 0 : (uint8_t)(1 + (frac >= 0.25) + (frac >= 0.5) + (frac >= 0.75));
    }
}

static void build_lanes(run_lanes *rl, const tl_aggregate *a, int which, int64_t t0, double col_ns, char (*labels)[64])
{
    int last_rank = -1;
    for (size_t i = 0; i < a->nsessions && rl->n < TL_LANES; i++) {
        const tl_session *s = &a->sessions[i];
        if (!drawn_session(a, s, which))
            continue;
        for (size_t k = 0; k < s->timeline.nlanes && rl->n < TL_LANES; k++) {
            size_t j = rl->n++;
            tl_svg_lane *l = &rl->lanes[j];
            snprintf(labels[j], 64, "r%d %s", s->id.rank, s->timeline.lanes[k].label);
            lane_columns(&s->timeline, &s->timeline.lanes[k], t0, col_ns, rl->kind[j], rl->level[j], rl->busy);
            l->label = labels[j];
            l->kind = rl->kind[j];
            l->level = rl->level[j];
            l->cpu = s->timeline.lanes[k].kind == TL_LANE_CPU;
            snprintf(l->note, sizeof l->note, "busy share per column; darker is busier");
            l->group_start = s->id.rank != last_rank;
            last_rank = s->id.rank;
        }
    }
}

static int draw_run_timeline(FILE *f, const tl_aggregate *a, int which, const char *id, const char *what,
                             double span_ns)
{
    int64_t t0, t1;
    run_range(a, which, &t0, &t1);
    if (t0 >= t1) {
        fprintf(f, "<p>The %s has no timeline.</p>\n", what);
        return 0;
    }
    run_lanes *rl = calloc(1, sizeof *rl);
    char(*labels)[64] = calloc(TL_LANES, sizeof *labels);
    if (rl == NULL || labels == NULL) {
        free(rl);
        free(labels);
        return -1;
    }
    build_lanes(rl, a, which, t0, span_ns / TL_COLS, labels);
    char axis[96], title[64];
    snprintf(axis, sizeof axis, "time since the %s's start (shared scale)", what);
    snprintf(title, sizeof title, "Timeline of the %s", what);
    tl_svg_frame fr = { id, title,
                        "One swimlane per GPU stream (or CPU thread) and rank; both runs on one time scale." };
    tl_svg_timeline t = { rl->lanes, rl->n, TL_COLS, span_ns, axis, NULL, 0 };
    fprintf(f, "<h3>%s</h3>\n", what);
    tl_svg_timeline_write(f, &fr, &t);
    free(rl);
    free(labels);
    return 0;
}

static int timelines(FILE *f, const tl_compare *c)
{
    int64_t b0, b1, c0, c1;
    run_range(c->base, c->opt.session[0], &b0, &b1);
    run_range(c->cand, c->opt.session[1], &c0, &c1);
    double span = fmax(b1 > b0 ? ((double)b1 - (double)b0) : 0, c1 > c0 ? ((double)c1 - (double)c0) : 0);
    fputs("<section id=\"timelines\"><h2>Timelines</h2>\n", f);
    if (!(span > 0)) {
        fputs("<p>Neither run has a timeline; each run's own report (tally report) shows what it has.</p>"
              "</section>\n",
              f);
        return 0;
    }
    fputs("<p class=\"note\">Both runs from their own start, on the same time scale: a shorter run ends "
          "earlier.</p>\n",
          f);
    int rc = draw_run_timeline(f, c->base, c->opt.session[0], "tl-base", "baseline", span);
    if (rc == 0)
        rc = draw_run_timeline(f, c->cand, c->opt.session[1], "tl-cand", "candidate", span);
    fputs("</section>\n", f);
    return rc;
}

/* ---- tables of rows ---------------------------------------------------------------------- */

static void row_tr(FILE *f, const tl_cmp_row *r, int with_rank)
{
    char d[48], p[32], t[48], rb[16];
    fputs("<tr>", f);
    cell_name(f, r->name);
    fprintf(f, "<td>%s</td>", tl_cmp_kind_name(r->kind));
    if (with_rank)
        fprintf(f, "<td>%s</td>", tl_cmp_rank_label(rb, sizeof rb, r->rank));
    cell_median(f, r, 0);
    cell_median(f, r, 1);
    fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s</td>",
            tl_cmp_delta_text(d, sizeof d, r), p_text(p, sizeof p, r->p_adjusted), impact_text(t, sizeof t, r));
    cell_verdict(f, r);
    fputs("</tr>\n", f);
}

static void table_head(FILE *f, int with_rank)
{
    fprintf(f,
            "<table><tr><th>name</th><th>metric</th>%s<th>baseline [95%% CI]</th><th>candidate [95%% CI]</th>"
            "<th>\xce\x94</th><th>p (adj.)</th><th>total change</th><th>verdict</th></tr>\n",
            with_rank ? "<th>rank</th>" : "");
}

typedef struct group_filter {
    int group;
} group_filter;

static int in_group(const tl_cmp_row *r, void *ctx)
{
    return r->rank < 0 && r->base.present && r->cand.present && r->group == ((const group_filter *)ctx)->group;
}

/* The shown rows of t as a table. */
static void rows_table(FILE *f, const tl_compare *c, const tl_cmp_top *t, int with_rank)
{
    table_head(f, with_rank);
    for (size_t i = 0; i < t->shown; i++)
        row_tr(f, tl_cmp_top_row(t, c, i), with_rank);
    fputs("</table>\n", f);
}

/* Under a table that does not show every row of t: how many more. */
static void more_note(FILE *f, const tl_cmp_top *t)
{
    if (t->n > t->shown)
        fprintf(f, "<p class=\"note\">%zu more in the JSON output (--json).</p>\n", t->n - t->shown);
}

static int group_table(FILE *f, const tl_compare *c, int group, int *first)
{
    group_filter gf = { group };
    tl_cmp_top t;
    if (tl_cmp_top_select(&t, c, in_group, &gf, TABLE_ROWS) != 0)
        return -1;
    if (t.n > 0) {
        fprintf(f, "<details%s><summary>%s (%zu)</summary>\n", *first ? " open" : "", tl_cmp_group_name(group), t.n);
        *first = 0;
        rows_table(f, c, &t, 0);
        more_note(f, &t);
        fputs("</details>\n", f);
    }
    tl_cmp_top_release(&t);
    return 0;
}

static int per_rank_changes(FILE *f, const tl_compare *c)
{
    int verdicts[3] = { TL_VERDICT_REGRESSION, TL_VERDICT_IMPROVEMENT, TL_VERDICT_LARGE_INCREASE };
    static const char *titles[3] = { "Regressions", "Improvements", "Large increases, not tested" };
    for (int v = 0; v < 3; v++) {
        tl_cmp_top t;
        if (tl_cmp_top_select(&t, c, tl_cmp_keep_rank, &verdicts[v], TABLE_ROWS) != 0)
            return -1;
        if (t.n > 0) {
            fprintf(f, "<details><summary>%s per rank (%zu)</summary>\n", titles[v], t.n);
            rows_table(f, c, &t, 1);
            fputs("</details>\n", f);
        }
        tl_cmp_top_release(&t);
    }
    return 0;
}

static int rows_section(FILE *f, const tl_compare *c)
{
    fputs("<section id=\"names\"><h2>Every compared name</h2>\n<p class=\"note\">All ranks together, by the change "
          "in total time; ~ marks a change that is not significant.</p>\n",
          f);
    int first = 1;
    for (int g = 0; g < TL_CMP_NGROUPS; g++)
        if (g != TL_CMP_GROUP_STEPS && group_table(f, c, g, &first) != 0)
            return -1;
    int rc = per_rank_changes(f, c);
    fputs("</section>\n", f);
    return rc;
}

static int name_list(FILE *f, const tl_compare *c, int verdict, const char *title)
{
    tl_cmp_top t;
    if (tl_cmp_top_select(&t, c, v_overall, &verdict, LIST_ROWS) != 0)
        return -1;
    fprintf(f, "<details%s><summary>%s (%zu)</summary>\n", t.n ? " open" : "", title, t.n);
    if (t.n > 0) {
        fputs("<table><tr><th>name</th><th>group</th><th>calls</th><th>total</th><th>median</th></tr>\n", f);
        for (size_t i = 0; i < t.shown; i++) {
            const tl_cmp_row *r = tl_cmp_top_row(&t, c, i);
            const tl_cmp_side *s = r->base.present ? &r->base : &r->cand;
            char tb[48], m[48];
            fputs("<tr>", f);
            cell_name(f, r->name);
            fprintf(f,
                    "<td>%s</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%s</td>"
                    "<td class=\"n\">%s</td></tr>\n",
                    tl_cmp_group_name(r->group), s->count, tl_units_dur(tb, sizeof tb, s->total),
                    tl_units_dur(m, sizeof m, s->median));
        }
        fputs("</table>\n", f);
        more_note(f, &t);
    }
    fputs("</details>\n", f);
    tl_cmp_top_release(&t);
    return 0;
}

static void method(FILE *f, const tl_compare *c)
{
    fprintf(f,
            "<section id=\"method\"><h2>Method</h2>\n<ul>\n"
            "<li>Names are matched %s, per rank (by rank number) and over all ranks.</li>\n"
            "<li>Each side: the median of the raw samples (per call, per iteration or per step) with a "
            "distribution-free %.0f%% confidence interval from order statistics: [x<sub>(k)</sub>, "
            "x<sub>(n\xe2\x88\x92k+1)</sub>], k the largest with P(B \xe2\x89\xa4 k\xe2\x88\x92"
            "1) \xe2\x89\xa4 %.3g for B ~ "
            "Binomial(n, \xc2\xbd) (none below 6 samples).</li>\n"
            "<li>\xce\x94: the change of the %s. Tests: Mann\xe2\x80\x93Whitney U over the samples of "
            "hypotheses that carry the threshold (\xe2\x80\x9cslower by more than %.4g%%\xe2\x80\x9d: the "
            "candidate's samples over 1 + threshold against the baseline's, one-sided; \xe2\x80\x9c"
            "faster by "
            "more\xe2\x80\x9d likewise), exact null distribution (dynamic programming) when both sides have at "
            "most 20 samples and no ties, else the normal approximation with tie and continuity corrections; too "
            "few samples below %d on a side. Within one rank, from 5 to 8 samples a side, the exact permutation "
            "test of the trimmed means of the log durations (20%% off each end; the same hypotheses) judges "
            "the row instead: one spike cannot hide a change. The all-ranks rows take the median, interval and "
            "\xce\x94 of the "
            "pooled samples; their test is the stratified U test (the ranks' U statistics summed, each rank "
            "compared with itself) when every rank has 2 samples a side or more.</li>\n"
            "<li>Per name, four metrics: the time per call (above), the total per run and per step (the calls' "
            "total; untested verdicts also need count \xc3\x97 median per call to move; a report without samples: "
            "its recorded total) and the calls per step "
            "(counted, not tested); per rank, the peaks of allocated and reserved device memory and of RSS, one "
            "value per session (all ranks: the largest). A rank row of a total is tested like its per-call row; "
            "when the ranks have one sample each, the all-ranks row is tested over the ranks' log ratios (at "
            "least %d ranks, each one sample of the change): Student's t, its variance pooled over the rows of "
            "like noise of the family, group and metric (from 4 ranks a row with a spike on one rank, or "
            "noisier than them, judged without its farthest rank), the verdict on the change measured on the ranks, "
            "wanted on more than half of "
            "them.</li>\n"
            "<li>The gate (--fail-on-regression) is the primary family: step time, the total per run of "
            "sections, iterations, GPU annotations and kernels, and peak memory. A row that cannot be tested "
            "(one report per side) is judged by its change alone beyond %.4g%%, labelled as not tested; a large "
            "increase on a primary row fails the gate when the all-ranks row could not be tested either and, "
            "for a stage's total, adds at least %.4g%% of the run's time of the ranks that run it (their "
            "profiled time, or the group's time when that is shorter than a stage).</li>\n"
            "<li>%s; significant when the adjusted p &lt; %.3g (~ otherwise).</li>\n"
            "<li>A regression is a slowdown shown to be beyond %.4g%% (significant), an improvement a speed-up "
            "shown to be beyond %.4g%%.</li>\n"
            "<li>Overall: the geometric mean of candidate/baseline of the %s over the names in both runs (all "
            "ranks), each weighted equally.</li>\n</ul>\n</section>\n",
            c->opt.normalize ? "by normalized name (template arguments, parameters, return types and numeric "
                               "suffixes dropped)"
                             : "by exact name",
            100 * c->opt.confidence, (1 - c->opt.confidence) / 2, tl_cmp_metric_name(c->opt.metric),
            c->opt.threshold_pct, TL_CMP_MIN_SAMPLES, TL_CMP_MIN_RANKS, c->opt.max_untested_pct,
            c->opt.untested_floor_pct,
            c->opt.correction == TL_CMP_HOLM
                ? "p (adj.): Holm's step-down adjustment over the primary rows' one-sided \xe2\x80\x9cslower"
                  "\xe2\x80\x9d p-values, so \xce\xb1 bounds the chance of any false regression in the gate (and "
                  "apart over their \xe2\x80\x9c"
                  "faster\xe2\x80\x9d p-values); Benjamini\xe2\x80\x93Hochberg "
                  "over the explanatory rows' two-sided p-values, so \xce\xb1 bounds the expected share of false "
                  "verdicts among them"
                : "p (adj.): not adjusted (--correction none), each row is tested on its own",
            c->opt.alpha, c->opt.threshold_pct, c->opt.threshold_pct, tl_cmp_metric_name(c->opt.metric));
}

typedef struct page_ctx {
    const tl_compare *c;
    const char *version;
} page_ctx;

static void compare_meta(FILE *f, void *ctx)
{
    const tl_compare *c = ((const page_ctx *)ctx)->c;
    run_line(f, "Baseline", c->opt.labels[0], c->base);
    run_line(f, "Candidate", c->opt.labels[1], c->cand);
    fprintf(f, "<p class=\"meta\">Metric: %s \xc2\xb7 threshold %.4g%% \xc2\xb7 \xce\xb1 = %.3g</p>\n",
            tl_cmp_metric_name(c->opt.metric), c->opt.threshold_pct, c->opt.alpha);
}

static int compare_body(FILE *f, void *ctx)
{
    const tl_compare *c = ((const page_ctx *)ctx)->c;
    /* the verdict, what changed with a verdict first, the names added and
     * removed (a new kernel is often the cause), then the step times and the
     * rest */
    if (headline(f, c) != 0 || delta_bars(f, c) != 0)
        return -1;
    fputs("<section id=\"changes\"><h2>Added and removed</h2>\n", f);
    if (name_list(f, c, TL_VERDICT_ADDED, "Only in the candidate") != 0 ||
        name_list(f, c, TL_VERDICT_REMOVED, "Only in the baseline") != 0)
        return -1;
    fputs("</section>\n", f);
    if (steps_section(f, c) != 0)
        return -1;
    gpu_section(f, c);
    metrics_section(f, c);
    counters_section(f, c);
    if (timelines(f, c) != 0 || rows_section(f, c) != 0)
        return -1;
    method(f, c);
    return 0;
}

static void compare_footer(FILE *f, void *ctx)
{
    const char *version = ((const page_ctx *)ctx)->version;
    fputs("Generated by tally ", f);
    tl_escape_html(f, version ? version : "");
    fputs(". The method and its definitions: docs/compare.md.", f);
}

int tl_render_compare_html(FILE *f, const tl_compare *c, const char *version)
{
    page_ctx ctx = { c, version };
    /* the page's title (escaped by tl_render_page): --title, else the runs' labels */
    char title[600];
    if (c->opt.title)
        snprintf(title, sizeof title, "tally compare: %.500s", c->opt.title);
    else
        snprintf(title, sizeof title, "tally compare: %.250s vs %.250s",
                 c->opt.labels[0] ? c->opt.labels[0] : "baseline", c->opt.labels[1] ? c->opt.labels[1] : "candidate");
    tl_page p = { title, version, compare_meta, compare_body, compare_footer, &ctx };
    return tl_render_page(f, &p);
}
