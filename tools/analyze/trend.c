/*
 * trend.c - `tally trend`: the primary metrics of N runs and their change
 * points (trend.h; docs/compare.md, "Trend").
 *
 * The figures of a run are read from its finished aggregate: the step time
 * from every rank's steps pooled, the rest from the metrics registry's
 * across-rank rows (the same numbers `tally summary` prints). The change
 * points come from tl_compare_run on pairs of runs, restricted to the steps
 * (the gate family is then the step rows alone), at alpha / (N - 1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "trend.h"

const char *tl_trend_mark_name(int mark)
{
    static const char *const names[TL_TREND_MARK_COUNT] = { "first",   "same",       "change",      "unconfirmed",
                                                            "outlier", "no_verdict", "inconclusive" };
    return mark >= 0 && mark < TL_TREND_MARK_COUNT ? names[mark] : "?";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The across-rank figure of a registry metric (its policy's: the mean of the
 * ranks or the most), NaN when no rank has it. */
static double across(const tl_aggregate *a, const char *name)
{
    for (int i = 0; i < a->nacross; i++)
        if (!strcmp(a->across[i].metric, name) && a->across[i].n > 0)
            return a->across[i].info->policy == TL_ACROSS_MAX ? a->across[i].max : a->across[i].mean;
    return NAN;
}

/* The largest of a per-rank field over the ranks that know it. */
static double rank_max(const tl_aggregate *a, size_t offset)
{
    double m = NAN;
    for (size_t i = 0; i < a->nranks; i++) {
        double v = *(const double *)((const char *)&a->ranks[i] + offset);
        if (isfinite(v) && !(v <= m))
            m = v;
    }
    return m;
}

/* The run's step time: the median and TL_TREND_PCT percentile (linear
 * between order statistics) of every rank's complete steps pooled; without
 * step durations, the mean of the ranks' summarized medians (FramePack's
 * loop summary). 0, or -1 when out of memory. */
static int step_figures(tl_trend_run *r, const tl_aggregate *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nranks; i++)
        n += a->ranks[i].nsteps;
    r->step_median = r->step_p90 = r->steps_per_s = NAN;
    r->steps = 0;
    for (size_t i = 0; i < a->nranks; i++)
        r->steps += a->ranks[i].step_count;
    if (n == 0) {
        r->step_median = across(a, "step_median_ns");
        if (isfinite(r->step_median) && r->step_median > 0)
            r->steps_per_s = 1e9 / r->step_median;
        return 0;
    }
    double *v = malloc(n * sizeof *v);
    if (v == NULL)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < a->nranks; i++)
        for (size_t s = 0; s < a->ranks[i].nsteps; s++)
            if (!a->ranks[i].steps[s].partial && a->ranks[i].steps[s].dur_ns > 0)
                v[k++] = (double)a->ranks[i].steps[s].dur_ns;
    if (k > 0) {
        qsort(v, k, sizeof *v, cmp_double);
        r->step_samples = 1;
        r->step_median = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
        double pos = TL_TREND_PCT / 100.0 * (double)(k - 1);
        size_t lo = (size_t)pos;
        r->step_p90 = lo + 1 < k ? v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]) : v[lo];
        r->steps_per_s = 1e9 / r->step_median;
    }
    free(v);
    return 0;
}

/* The stages shown: the largest TL_TREND_STAGES sections of the last run
 * that has any (by inclusive total over its ranks), else its kernels. */
static int pick_stages(tl_trend *t, const tl_aggregate *runs, size_t n)
{
    static const int groups[] = { TL_GROUP_SECTIONS, TL_GROUP_KERNELS };
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        for (size_t i = n; i-- > 0;) {
            size_t count = 0;
            size_t *top = tl_name_table_top(&runs[i].names, groups[g], &count);
            if (top == NULL && count > 0)
                return -1;
            for (size_t k = 0; k < count && t->nstages < TL_TREND_STAGES; k++)
                if ((t->stages[t->nstages] = strdup(runs[i].names.rows[top[k]].name)) == NULL) {
                    free(top);
                    return -1;
                } else
                    t->nstages++;
            free(top);
            if (t->nstages > 0) {
                t->stage_group = groups[g];
                return 0;
            }
        }
    }
    return 0;
}

/* A stage's share of a run's time: its inclusive total over the ranks, over
 * the ranks' profiled wall time added up. NaN when unknown. */
static double stage_share(const tl_aggregate *a, int group, const char *name)
{
    double span = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        if (a->ranks[i].span_ns <= 0)
            return NAN;
        span += (double)a->ranks[i].span_ns;
    }
    if (!(span > 0))
        return NAN;
    for (size_t i = 0; i < a->names.n; i++)
        if (a->names.rows[i].group == group && !strcmp(a->names.rows[i].name, name))
            return 100.0 * a->names.rows[i].incl_total / span;
    return 0;
}

static int run_figures(tl_trend *t, tl_trend_run *r, const tl_aggregate *a)
{
    r->nranks = a->nranks;
    if (step_figures(r, a) != 0)
        return -1;
    r->span_ns = across(a, "span_ns");
    double idle = across(a, "gpu.idle_pct");
    r->gpu_busy_pct = isfinite(idle) ? 100.0 - idle : NAN;
    r->gpu_util_pct = across(a, "telemetry.gpu_util_pct.mean");
    if (!isfinite(r->gpu_util_pct))
        r->gpu_util_pct = across(a, "gpu_util_mean_pct");
    r->peak_allocated = rank_max(a, offsetof(tl_rank_result, peak_allocated));
    r->peak_reserved = rank_max(a, offsetof(tl_rank_result, peak_reserved));
    r->peak_device_used = rank_max(a, offsetof(tl_rank_result, peak_device_used));
    r->peak_rss = rank_max(a, offsetof(tl_rank_result, peak_rss));
    for (size_t s = 0; s < TL_TREND_STAGES; s++)
        r->share[s] = s < t->nstages ? stage_share(a, t->stage_group, t->stages[s]) : NAN;
    return 0;
}

/* The step row of base against cand into *dir: +1 slower beyond the
 * threshold, -1 faster, 0 not beyond it (tested), NO_VERDICT when there is
 * no step sample to test on a side. *delta and *p get the row's change and
 * the adjusted p of its verdict; *inconclusive whether it moved beyond the
 * threshold without significance. 0, or -1 when out of memory. */
#define NO_VERDICT 2
static int judge(const tl_aggregate *base, const tl_aggregate *cand, const tl_cmp_options *co, int *dir, double *delta,
                 double *p, int *inconclusive)
{
    tl_compare c;
    *delta = *p = NAN;
    *dir = NO_VERDICT;
    *inconclusive = 0;
    if (tl_compare_run(&c, base, cand, co) != 0) {
        tl_compare_release(&c);
        return -1;
    }
    tl_cmp_verdict v;
    tl_compare_verdict(&c, &v);
    if (v.step != NULL) {
        *delta = v.step->delta_pct;
        if (v.step->test != TL_TEST_NONE && isfinite(v.step->p_adjusted)) {
            *dir = v.step->verdict == TL_VERDICT_REGRESSION ? 1 : v.step->verdict == TL_VERDICT_IMPROVEMENT ? -1 : 0;
            *p = v.step->p_adjusted;
            *inconclusive = *dir == 0 && v.step->inconclusive;
        }
    }
    tl_compare_release(&c);
    return 0;
}

/* The change points (trend.h): each run against the last run of the level
 * before it; a jump must be held by the run after it. */
static int find_changes(tl_trend *t, const tl_aggregate *runs, size_t n, const tl_cmp_options *co)
{
    size_t ref = 0;
    for (size_t k = 1; k < n; k++) {
        tl_trend_run *r = &t->runs[k];
        r->ref = ref;
        int j, h, inconclusive;
        if (judge(&runs[ref], &runs[k], co, &j, &r->delta_pct, &r->p, &inconclusive) != 0)
            return -1;
        if (j == NO_VERDICT || j == 0) {
            r->mark = j == NO_VERDICT ? TL_TREND_NO_VERDICT : inconclusive ? TL_TREND_INCONCLUSIVE : TL_TREND_SAME;
            ref = k;
            continue;
        }
        r->dir = j;
        if (k + 1 == n) {
            r->mark = TL_TREND_UNCONFIRMED;
            break;
        }
        double d2, p2;
        if (judge(&runs[ref], &runs[k + 1], co, &h, &d2, &p2, &inconclusive) != 0)
            return -1;
        if (h == j) {
            r->mark = TL_TREND_CHANGE;
            ref = k;
        } else {
            r->mark = TL_TREND_OUTLIER; /* the next run is compared with ref again */
        }
    }
    return 0;
}

int tl_trend_run_series(tl_trend *t, const tl_aggregate *runs, const char *const *labels, size_t n,
                        double threshold_pct, double alpha)
{
    memset(t, 0, sizeof *t);
    t->threshold_pct = threshold_pct;
    t->alpha = alpha;
    if (n == 0)
        return 0;
    if ((t->runs = calloc(n, sizeof *t->runs)) == NULL)
        return -1;
    t->nruns = n;
    if (pick_stages(t, runs, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        t->runs[i].label = labels[i];
        t->runs[i].delta_pct = t->runs[i].p = NAN;
        if (run_figures(t, &t->runs[i], &runs[i]) != 0)
            return -1;
    }
    tl_cmp_options co;
    tl_cmp_options_init(&co);
    co.threshold_pct = threshold_pct;
    co.alpha = n > 2 ? alpha / (double)(n - 1) : alpha;
    co.groups = 1u << TL_CMP_GROUP_STEPS;
    if (find_changes(t, runs, n, &co) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        t->counts[t->runs[i].mark]++;
        if (t->runs[i].mark == TL_TREND_CHANGE || t->runs[i].mark == TL_TREND_UNCONFIRMED)
            t->last_change = &t->runs[i];
    }
    t->fails = t->last_change != NULL && t->last_change->dir > 0;
    return 0;
}

void tl_trend_release(tl_trend *t)
{
    free(t->runs);
    for (size_t s = 0; s < TL_TREND_STAGES; s++)
        free(t->stages[s]);
    memset(t, 0, sizeof *t);
}
