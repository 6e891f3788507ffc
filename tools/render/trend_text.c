/*
 * trend_text.c - the outputs of `tally trend` (analyze/trend.h): the console
 * table, the Markdown table and the JSON document
 * (schema/tally-trend.schema.json). All three read the one tl_trend, so they
 * cannot disagree; the wording of a run's mark is mark_text's alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "labels.h"
#include "render.h"
#include "term.h"
#include "text_table.h"
#include "units.h"

/* A run's change column: "", "+1.2 %", "change: +23.4 % slower",
 * "unconfirmed: +23.4 % slower (last run)", "out of line: +30 %",
 * "no samples, no verdict". */
static const char *mark_text(char *buf, size_t n, const tl_trend_run *r)
{
    char d[32] = "";
    if (isfinite(r->delta_pct))
        snprintf(d, sizeof d, "%+.1f%%", r->delta_pct);
    const char *way = r->dir > 0 ? "slower" : "faster";
    switch (r->mark) {
    case TL_TREND_SAME:
        snprintf(buf, n, "%s", d);
        break;
    case TL_TREND_CHANGE:
        snprintf(buf, n, "change: %s %s", d, way);
        break;
    case TL_TREND_UNCONFIRMED:
        snprintf(buf, n, "unconfirmed: %s %s (last run)", d, way);
        break;
    case TL_TREND_OUTLIER:
        snprintf(buf, n, "out of line: %s, back after", d);
        break;
    case TL_TREND_NO_VERDICT:
        snprintf(buf, n, "no samples, no verdict");
        break;
    case TL_TREND_INCONCLUSIVE:
        snprintf(buf, n, "%s, not significant", d);
        break;
    default:
        buf[0] = '\0';
        break;
    }
    return buf;
}

/* The console's stage headers are labels of this many columns (the
 * Markdown's and the JSON's are whole). */
#define TL_TREND_STAGE_COLS 22

/* The columns every output has, in order; the stages follow. */
enum { C_NUM, C_RUN, C_STEPS, C_MED, C_P90, C_RATE, C_BUSY, C_UTIL, C_ALLOC, C_RSV, C_RSS, C_FIXED };
static const char *const heads[C_FIXED] = { "#",        "run",      "steps",      "step median",   "p90",     "it/s",
                                            "GPU busy", "GPU util", "peak alloc", "peak reserved", "peak RSS" };

static const char *cell(char *buf, size_t n, const tl_trend_run *r, int col, size_t index)
{
    switch (col) {
    case C_NUM:
        snprintf(buf, n, "%zu", index + 1);
        return buf;
    case C_RUN:
        return r->label;
    case C_STEPS:
        return r->steps ? (snprintf(buf, n, "%llu", (unsigned long long)r->steps), buf) : "\xe2\x80\x93";
    case C_MED:
        return tl_units_dur(buf, n, r->step_median);
    case C_P90:
        return tl_units_dur(buf, n, r->step_p90);
    case C_RATE:
        return isfinite(r->steps_per_s) ? (snprintf(buf, n, "%.3g", r->steps_per_s), buf) : "\xe2\x80\x93";
    case C_BUSY:
        return tl_units_pct(buf, n, r->gpu_busy_pct);
    case C_UTIL:
        return tl_units_pct(buf, n, r->gpu_util_pct);
    case C_ALLOC:
        return tl_units_bytes(buf, n, r->peak_allocated);
    case C_RSV:
        return tl_units_bytes(buf, n, r->peak_reserved);
    default:
        return tl_units_bytes(buf, n, r->peak_rss);
    }
}

/* Whether any run has a value in a column: columns that no run has are left
 * out of the console and Markdown tables. */
static int column_used(const tl_trend *t, int col)
{
    for (size_t i = 0; i < t->nruns; i++) {
        const tl_trend_run *r = &t->runs[i];
        double v = col == C_P90     ? r->step_p90
                   : col == C_RATE  ? r->steps_per_s
                   : col == C_BUSY  ? r->gpu_busy_pct
                   : col == C_UTIL  ? r->gpu_util_pct
                   : col == C_ALLOC ? r->peak_allocated
                   : col == C_RSV   ? r->peak_reserved
                   : col == C_RSS   ? r->peak_rss
                   : col == C_MED   ? r->step_median
                                    : 1;
        if (col == C_STEPS ? r->steps > 0 : isfinite(v))
            return 1;
    }
    return 0;
}

/* The sentence under the table: what the series did, and how it was judged. */
static void verdict_lines(FILE *f, const tl_trend *t, int md)
{
    static char label[1024];
    const size_t *c = t->counts;
    size_t boundaries = t->nruns > 0 ? t->nruns - 1 : 0;
    fprintf(f,
            "%s%zu run%s: %zu change point%s, %zu unconfirmed at the last run, %zu out of line, %zu within "
            "the threshold, %zu inconclusive, %zu without a verdict (no step samples)%s\n",
            md ? "**" : "tally trend: ", t->nruns, t->nruns == 1 ? "" : "s", c[TL_TREND_CHANGE],
            c[TL_TREND_CHANGE] == 1 ? "" : "s", c[TL_TREND_UNCONFIRMED], c[TL_TREND_OUTLIER], c[TL_TREND_SAME],
            c[TL_TREND_INCONCLUSIVE], c[TL_TREND_NO_VERDICT], md ? "**" : "");
    if (md)
        fputc('\n', f);
    for (size_t i = 0; i < t->nruns; i++) {
        const tl_trend_run *r = &t->runs[i];
        if (r->mark != TL_TREND_CHANGE && r->mark != TL_TREND_UNCONFIRMED)
            continue;
        char a[32], b[32];
        const tl_trend_run *ref = &t->runs[r->ref];
        fprintf(f, "%s%s at run %zu (",
                md ? "- " : "tally trend: ", r->mark == TL_TREND_CHANGE ? "change point" : "unconfirmed change", i + 1);
        if (md)
            tl_escape_md(f, r->label);
        else
            fputs(tl_term_escape(label, sizeof label, r->label), f);
        fprintf(f, "): step time %s -> %s (%+.1f%%, %s, p = %.2g against run %zu)\n",
                tl_units_dur(a, sizeof a, ref->step_median), tl_units_dur(b, sizeof b, r->step_median), r->delta_pct,
                r->dir > 0 ? "slower" : "faster", r->p, r->ref + 1);
    }
    if (md)
        fputc('\n', f);
    fprintf(f,
            "%sa change point is a step-time shift beyond %.3g%% (compare's test, each boundary at alpha "
            "%.3g / %zu) that the next run holds; docs/compare.md, \"Trend\"%s\n",
            md ? "_" : "tally trend: ", t->threshold_pct, t->alpha, boundaries ? boundaries : 1, md ? "_" : "");
}

void tl_render_trend_console(FILE *f, const tl_trend *t, size_t width)
{
    tl_text_col cols[C_FIXED + TL_TREND_STAGES + 1];
    int map[C_FIXED + TL_TREND_STAGES + 1];
    size_t nc = 0;
    static const int prio[C_FIXED] = { 0, 0, 3, 0, 2, 2, 3, 3, 4, 4, 5 };
    for (int col = 0; col < C_FIXED; col++)
        if (col == C_NUM || col == C_RUN || column_used(t, col)) {
            cols[nc] = (tl_text_col){ heads[col], col != C_RUN, prio[col], col == C_RUN };
            map[nc++] = col;
        }
    static char stage_head[TL_TREND_STAGES][128];
    tl_labels lab;
    int have = tl_labels_make(&lab, (const char *const *)t->stages, t->nstages, TL_TREND_STAGE_COLS) == 0;
    for (size_t s = 0; s < t->nstages; s++) {
        snprintf(stage_head[s], sizeof stage_head[s], "%s %%", have ? lab.text[s] : t->stages[s]);
        cols[nc] = (tl_text_col){ stage_head[s], 1, 6 + (int)s, 0 };
        map[nc++] = C_FIXED + (int)s;
    }
    if (have)
        tl_labels_release(&lab);
    cols[nc] = (tl_text_col){ "change", 0, 1, 0 };
    map[nc++] = -1;
    tl_text_table tab;
    tl_text_table_init(&tab, cols, nc);
    char buf[C_FIXED + TL_TREND_STAGES + 1][96];
    const char *cells[C_FIXED + TL_TREND_STAGES + 1];
    for (size_t i = 0; i < t->nruns; i++) {
        const tl_trend_run *r = &t->runs[i];
        for (size_t k = 0; k < nc; k++) {
            if (map[k] < 0)
                cells[k] = mark_text(buf[k], sizeof buf[k], r);
            else if (map[k] >= C_FIXED)
                cells[k] = tl_units_pct(buf[k], sizeof buf[k], r->share[map[k] - C_FIXED]);
            else
                cells[k] = cell(buf[k], sizeof buf[k], r, map[k], i);
        }
        tl_text_table_row(&tab, cells);
    }
    tl_text_table_print(f, &tab, width);
    tl_text_table_release(&tab);
    verdict_lines(f, t, 0);
}

int tl_render_trend_markdown(FILE *f, const tl_trend *t)
{
    fprintf(f, "## tally trend\n\n");
    verdict_lines(f, t, 1);
    fputc('\n', f);
    int used[C_FIXED];
    for (int col = 0; col < C_FIXED; col++) {
        used[col] = col == C_NUM || col == C_RUN || column_used(t, col);
        if (used[col])
            fprintf(f, "| %s ", heads[col]);
    }
    for (size_t s = 0; s < t->nstages; s++) {
        fputs("| ", f);
        tl_escape_md_n(f, t->stages[s], 60);
        fputs(" % ", f);
    }
    fputs("| change |\n", f);
    for (int col = 0; col < C_FIXED; col++)
        if (used[col])
            fputs(col == C_RUN ? "|---" : "|---:", f);
    for (size_t s = 0; s < t->nstages; s++)
        fputs("|---:", f);
    fputs("|---|\n", f);
    char buf[96];
    for (size_t i = 0; i < t->nruns; i++) {
        const tl_trend_run *r = &t->runs[i];
        for (int col = 0; col < C_FIXED; col++) {
            if (!used[col])
                continue;
            fputs("| ", f);
            if (col == C_RUN)
                tl_escape_md_n(f, r->label, 120);
            else
                fputs(cell(buf, sizeof buf, r, col, i), f);
            fputc(' ', f);
        }
        for (size_t s = 0; s < t->nstages; s++)
            fprintf(f, "| %s ", tl_units_pct(buf, sizeof buf, r->share[s]));
        const char *m = mark_text(buf, sizeof buf, r);
        fprintf(f, "| %s%s%s |\n", r->mark == TL_TREND_CHANGE ? "**" : "", m, r->mark == TL_TREND_CHANGE ? "**" : "");
    }
    return 0;
}

void tl_trend_write_json(tl_json *j, const tl_trend *t, const char *producer)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "format", "tally-trend");
    tl_json_kv_int(j, "version", 1);
    tl_json_kv_string(j, "producer", producer);
    tl_json_kv_double(j, "threshold_pct", t->threshold_pct);
    tl_json_kv_double(j, "alpha", t->alpha);
    tl_json_key(j, "stages");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "group", tl_group_name(t->stage_group));
    tl_json_key(j, "names");
    tl_json_array_begin(j);
    for (size_t s = 0; s < t->nstages; s++)
        tl_json_string(j, t->stages[s]);
    tl_json_array_end(j);
    tl_json_object_end(j);
    tl_json_key(j, "counts");
    tl_json_object_begin(j);
    for (int m = TL_TREND_SAME; m < TL_TREND_MARK_COUNT; m++)
        tl_json_kv_uint(j, tl_trend_mark_name(m), t->counts[m]);
    tl_json_object_end(j);
    tl_json_key(j, "last_change");
    if (t->last_change)
        tl_json_uint(j, (uint64_t)(t->last_change - t->runs));
    else
        tl_json_null(j);
    tl_json_kv_bool(j, "ends_slower", t->fails);
    tl_json_key(j, "runs");
    tl_json_array_begin(j);
    for (size_t i = 0; i < t->nruns; i++) {
        const tl_trend_run *r = &t->runs[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "label", r->label);
        tl_json_kv_uint(j, "ranks", r->nranks);
        tl_json_kv_uint(j, "steps", r->steps);
        tl_json_kv_bool(j, "step_samples", r->step_samples);
        tl_json_kv_double(j, "step_median_ns", r->step_median);
        tl_json_kv_double(j, "step_p90_ns", r->step_p90);
        tl_json_kv_double(j, "steps_per_s", r->steps_per_s);
        tl_json_kv_double(j, "span_ns", r->span_ns);
        tl_json_kv_double(j, "gpu_busy_pct", r->gpu_busy_pct);
        tl_json_kv_double(j, "gpu_util_pct", r->gpu_util_pct);
        tl_json_kv_double(j, "peak_allocated_bytes", r->peak_allocated);
        tl_json_kv_double(j, "peak_reserved_bytes", r->peak_reserved);
        tl_json_kv_double(j, "peak_device_used_bytes", r->peak_device_used);
        tl_json_kv_double(j, "peak_rss_bytes", r->peak_rss);
        tl_json_key(j, "stage_share_pct");
        tl_json_array_begin(j);
        for (size_t s = 0; s < t->nstages; s++)
            tl_json_double(j, r->share[s]);
        tl_json_array_end(j);
        tl_json_kv_string(j, "mark", tl_trend_mark_name(r->mark));
        if (r->mark != TL_TREND_FIRST) {
            tl_json_kv_uint(j, "reference", r->ref);
            tl_json_kv_int(j, "direction", r->dir);
            tl_json_kv_double(j, "delta_pct", r->delta_pct);
            tl_json_kv_double(j, "p_value", r->p);
        }
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
}
