/*
 * compare_json.c - a comparison as JSON (schema/tally-compare.schema.json):
 * the options and methods, both runs' inputs and ranks, the overall figures,
 * then every row and the GPU breakdowns. Unknown numbers (NaN) are null.
 */
#include <math.h>
#include <stdlib.h>

#include "compare.h"
#include "text_numbers.h"
#include "compare_rows.h"
#include "render.h"

static const char method_test[] =
    "Mann-Whitney U over the raw samples, of hypotheses that carry the threshold: 'slower by more than the "
    "threshold' is the one-sided test of the candidate's samples over (1 + threshold) against the baseline's, "
    "'faster by more' of them over (1 - threshold); exact null distribution (dynamic programming) when both "
    "sides have at most 20 samples and there are no ties, else the normal approximation with tie and continuity "
    "corrections; within one rank (its rows, and the all-ranks row of a run of one rank) from 5 to 8 samples a "
    "side (up to C(16, 8) splits) the exact permutation test of the trimmed means of the log durations instead "
    "(20 % off each end; the same hypotheses, the threshold as log(1 + threshold) and log(1 - threshold)), the "
    "U statistics kept for the stratified test; p_value of a primary row is the one-sided p of the direction of "
    "its change, of an explanatory row twice the smaller one-sided p";
static const char method_all_ranks[] =
    "all-ranks rows: median, interval and delta of the pooled samples; when every rank has at least 2 samples "
    "a side, the stratified U test: the ranks' U statistics summed, against the convolution of their exact null "
    "distributions (normal approximation beyond 400 pairs or with ties), each rank compared with itself only; "
    "ranks whose ratios are all equal count as one";
static const char method_rank_level[] =
    "all-ranks rows whose ranks have one sample (at least 3 ranks): the rank-level test over the per-rank log "
    "ratios candidate/baseline, each rank one sample of the change: the mean log ratio with the variance pooled "
    "over the rows of the same family, group and metric when there are at least 5 of them, over those of like "
    "noise (a row whose variance the F test against the median of the rows' variances finds larger at 0.001 is "
    "not, nor one whose ranks' levels -- log baseline + log candidate, less the rank's effect over the pool's "
    "other rows, at least 3 -- it finds larger at 0.01); from 4 ranks a row whose farthest rank from the median is a "
    "spike (the sum of "
    "squares it adds against the typical variance, chi-square(1) at 0.001 / n) or that is not of like noise, but "
    "like it without that rank: the other ranks' mean with the larger of the pooled variance and their own -- "
    "with the pooled one when that rank was a spike and the other ranks' ratios and levels together are not "
    "noisier than the pool at 0.2, with the larger of their own and the whole row's when their levels are "
    "noisier at 0.01; otherwise Student's t of the row alone; the verdict weighs "
    "the change measured on the ranks (exp of the mean log ratio, minus 1) and also needs more than half of the "
    "ranks beyond the threshold the same way";
static const char method_families[] =
    "primary rows (step time, total per run of sections, iterations, GPU annotations and kernels, peak memory) "
    "decide the gate; the others (per call, per step, calls per step, ops, runtime) explain";
static const char method_untested[] =
    "rows that cannot be tested (too few samples on a side, e.g. one report per side) get "
    "large_increase_untested / large_decrease_untested when |delta| exceeds max_untested_pct (for a total per "
    "run or step with samples, when count x median per call moved beyond it the same way too: one outlier call "
    "is not a verdict); "
    "on primary rows a large increase fails the gate unless the all-ranks row was tested, and for a stage's "
    "total per run only when it adds untested_floor_pct of the run's time of the ranks that run it or more "
    "(run_share_pct)";
static const char method_holm[] =
    "Holm's step-down adjustment over the primary rows' 'slower' p-values (alpha bounds the chance of any false "
    "regression in the gate) and, apart, over their 'faster' p-values; Benjamini-Hochberg over the explanatory "
    "rows' two-sided p-values: significant when p_adjusted < alpha";
static const char method_none[] = "none: each row is tested at alpha";
static const char method_ci[] =
    "distribution-free interval of the median from order statistics [x(k), x(n-k+1)], k the largest with "
    "P(Binomial(n, 1/2) <= k-1) <= (1-confidence)/2 (exact binomial); null for fewer than 6 samples";
static const char method_geomean[] =
    "exp(mean(log(candidate/baseline))) of the chosen metric over the names matched on both sides (all "
    "ranks), each weighted equally";

static void write_run(tl_json *j, const tl_aggregate *a)
{
    tl_json_object_begin(j);
    tl_json_key(j, "inputs");
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nsessions; i++)
        tl_json_string(j, a->sessions[i].id.path);
    tl_json_array_end(j);
    tl_json_key(j, "ranks");
    tl_json_array_begin(j);
    for (size_t i = 0; i < a->nranks; i++)
        tl_json_int(j, a->ranks[i].rank);
    tl_json_array_end(j);
    tl_json_object_end(j);
}

static void write_ints(tl_json *j, const char *key, const int *v, size_t n)
{
    tl_json_key(j, key);
    tl_json_array_begin(j);
    for (size_t i = 0; i < n; i++)
        tl_json_int(j, v[i]);
    tl_json_array_end(j);
}

static void write_ci(tl_json *j, const char *key, const tl_cmp_side *s)
{
    tl_json_key(j, key);
    if (!s->present || !isfinite(s->ci_lo) || !isfinite(s->ci_hi)) {
        tl_json_null(j);
        return;
    }
    tl_json_array_begin(j);
    tl_json_double(j, s->ci_lo);
    tl_json_double(j, s->ci_hi);
    tl_json_array_end(j);
}

static void kv_side_double(tl_json *j, const char *key, const tl_cmp_side *s, double v)
{
    tl_json_kv_double(j, key, s->present ? v : NAN);
}

static void kv_side_count(tl_json *j, const char *key, const tl_cmp_side *s, uint64_t v)
{
    tl_json_key(j, key);
    if (s->present)
        tl_json_uint(j, v);
    else
        tl_json_null(j);
}

static void write_row(tl_json *j, const tl_cmp_row *r)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "name", r->name);
    tl_json_kv_string(j, "group", tl_cmp_group_name(r->group));
    tl_json_kv_string(j, "metric", tl_cmp_kind_name(r->kind));
    tl_json_kv_bool(j, "primary", r->primary);
    tl_json_kv_bool(j, "gate", r->gate);
    tl_json_key(j, "rank");
    if (r->rank >= 0)
        tl_json_int(j, r->rank);
    else
        tl_json_null(j);
    /* per call: the median; the other metrics: the row's value (a rank's
     * per_run row used to give its calls' median here, the all-ranks row
     * its total) */
    int per_call = r->kind == TL_CMP_PER_CALL;
    kv_side_double(j, "baseline", &r->base, per_call ? r->base.median : r->value_base);
    kv_side_double(j, "candidate", &r->cand, per_call ? r->cand.median : r->value_cand);
    write_ci(j, "baseline_ci", &r->base);
    write_ci(j, "candidate_ci", &r->cand);
    tl_json_kv_double(j, "delta_pct", r->delta_pct);
    tl_json_kv_double(j, "p_value", r->p_value);
    tl_json_kv_double(j, "p_adjusted", r->p_adjusted);
    tl_json_kv_bool(j, "significant", r->significant);
    tl_json_kv_bool(j, "inconclusive", r->inconclusive);
    tl_json_kv_string(j, "verdict", tl_verdict_name(r->verdict));
    tl_json_key(j, "note");
    char *note = r->note ? tl_text_numbers(r->note) : NULL;
    if (note)
        tl_json_string(j, note);
    else
        tl_json_null(j);
    free(note);
    tl_json_kv_double(j, "baseline_value", r->value_base);
    tl_json_kv_double(j, "candidate_value", r->value_cand);
    kv_side_double(j, "baseline_mean", &r->base, r->base.mean);
    kv_side_double(j, "candidate_mean", &r->cand, r->cand.mean);
    kv_side_double(j, "baseline_total", &r->base, r->base.total);
    kv_side_double(j, "candidate_total", &r->cand, r->cand.total);
    kv_side_count(j, "baseline_count", &r->base, r->base.count);
    kv_side_count(j, "candidate_count", &r->cand, r->cand.count);
    kv_side_count(j, "baseline_samples", &r->base, r->base.nsamples);
    kv_side_count(j, "candidate_samples", &r->cand, r->cand.nsamples);
    tl_json_kv_double(j, "impact_ns", r->impact_ns);
    tl_json_kv_double(j, "run_share_pct", r->run_share_pct);
    tl_json_kv_double(j, "step_share_pct", r->step_share_pct);
    tl_json_kv_bool(j, "material", r->material);
    tl_json_kv_bool(j, "call_mix", r->call_mix);
    tl_json_kv_double(j, "u", r->u);
    static const char *tests[TL_TEST_COUNT] = { NULL, "exact", "normal", "strata", "rank_t", "perm" };
    tl_json_key(j, "test");
    if (r->test > TL_TEST_NONE && r->test < TL_TEST_COUNT)
        tl_json_string(j, tests[r->test]);
    else
        tl_json_null(j);
    tl_json_object_end(j);
}

static void write_gpu_side(tl_json *j, const char *key, const tl_cmp_gpu *g, int s)
{
    tl_json_key(j, key);
    if (!g->present[s]) {
        tl_json_null(j);
        return;
    }
    tl_json_object_begin(j);
    tl_json_kv_double(j, "idle_pct", g->idle_pct[s]);
    tl_json_kv_double(j, "compute_pct", g->compute_pct[s]);
    tl_json_kv_double(j, "non_compute_pct", g->non_compute_pct[s]);
    tl_json_kv_double(j, "overlap_pct", g->overlap_pct[s]);
    tl_json_object_end(j);
}

static void write_gpu(tl_json *j, const tl_cmp_gpu *g)
{
    tl_json_object_begin(j);
    tl_json_key(j, "rank");
    if (g->rank >= 0)
        tl_json_int(j, g->rank);
    else
        tl_json_null(j);
    write_gpu_side(j, "baseline", g, 0);
    write_gpu_side(j, "candidate", g, 1);
    tl_json_object_end(j);
}

/* A registry metric side by side (compare.h's tl_cmp_metric_row). */
static void write_metric(tl_json *j, const tl_cmp_metric_row *m)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "metric", m->info->name);
    tl_json_kv_string(j, "label", m->info->label);
    tl_json_kv_string(j, "better", tl_better_name(m->info->better));
    tl_json_kv_string(j, "figure", tl_across_policy_name(m->info->policy));
    tl_json_kv_double(j, "baseline", m->value[0]);
    tl_json_kv_double(j, "candidate", m->value[1]);
    tl_json_kv_int(j, "ranks_baseline", m->ranks[0]);
    tl_json_kv_int(j, "ranks_candidate", m->ranks[1]);
    tl_json_kv_double(j, "delta_pct", m->delta_pct);
    tl_json_kv_double(j, "delta_pp", m->delta_pp);
    tl_json_kv_bool(j, "common_ranks", m->common);
    tl_json_key(j, "change");
    if (tl_cmp_change_key(m->change) == NULL)
        tl_json_null(j);
    else
        tl_json_string(j, tl_cmp_change_key(m->change));
    tl_json_object_end(j);
}

static void write_options(tl_json *j, const tl_compare *c)
{
    tl_json_kv_string(j, "metric", tl_cmp_metric_name(c->opt.metric));
    tl_json_kv_double(j, "threshold_pct", c->opt.threshold_pct);
    tl_json_kv_double(j, "alpha", c->opt.alpha);
    tl_json_kv_double(j, "confidence", c->opt.confidence);
    tl_json_kv_bool(j, "normalize", c->opt.normalize);
    tl_json_kv_string(j, "correction", c->opt.correction == TL_CMP_HOLM ? "holm" : "none");
    tl_json_kv_double(j, "max_untested_pct", c->opt.max_untested_pct);
    tl_json_kv_double(j, "untested_floor_pct", c->opt.untested_floor_pct);
    tl_json_kv_double(j, "material_pct", isnan(c->opt.material_pct) ? c->opt.threshold_pct : c->opt.material_pct);
    tl_json_kv_double(j, "memory_threshold_pct",
                      isnan(c->opt.memory_threshold_pct) ? c->opt.threshold_pct : c->opt.memory_threshold_pct);
    tl_json_key(j, "title");
    if (c->opt.title)
        tl_json_string(j, c->opt.title);
    else
        tl_json_null(j);
    tl_json_key(j, "labels");
    tl_json_object_begin(j);
    for (int s = 0; s < 2; s++) {
        tl_json_key(j, s ? "candidate" : "baseline");
        if (c->opt.labels[s])
            tl_json_string(j, c->opt.labels[s]);
        else
            tl_json_null(j);
    }
    tl_json_object_end(j);
    {
        char status[512];
        tl_json_kv_string(j, "status", tl_cmp_status_text(status, sizeof status, c));
    }
    tl_json_key(j, "sessions");
    if (c->opt.session[0] == -1 && c->opt.session[1] == -1) {
        tl_json_null(j);
    } else {
        tl_json_array_begin(j);
        for (int s = 0; s < 2; s++)
            tl_json_int(j, c->opt.session[s] == -2 ? -1 : c->opt.session[s]);
        tl_json_array_end(j);
    }
    tl_json_key(j, "methods");
    tl_json_object_begin(j);
    tl_json_kv_string(j, "test", method_test);
    tl_json_kv_string(j, "all_ranks", method_all_ranks);
    tl_json_kv_string(j, "rank_level", method_rank_level);
    tl_json_kv_string(j, "families", method_families);
    tl_json_kv_string(j, "untested", method_untested);
    tl_json_kv_string(j, "correction", c->opt.correction == TL_CMP_HOLM ? method_holm : method_none);
    tl_json_kv_string(j, "median_ci", method_ci);
    tl_json_kv_string(j, "geomean", method_geomean);
    tl_json_object_end(j);
}

void tl_compare_write_json(tl_json *j, const tl_compare *c, const char *producer)
{
    tl_json_object_begin(j);
    tl_json_kv_string(j, "format", "tally-compare");
    tl_json_kv_int(j, "version", 1);
    tl_json_kv_string(j, "producer", producer);
    write_options(j, c);
    tl_json_key(j, "baseline");
    write_run(j, c->base);
    tl_json_key(j, "candidate");
    write_run(j, c->cand);
    write_ints(j, "ranks_only_in_baseline", c->ranks_base_only, c->nbase_only);
    write_ints(j, "ranks_only_in_candidate", c->ranks_cand_only, c->ncand_only);
    write_ints(j, "ranks_in_both", c->ranks, c->nranks);
    /* which ranks the all-ranks rows are over (tl_compare.common_only) */
    tl_json_kv_string(j, "all_ranks_over", c->common_only ? "ranks_in_both" : c->nranks > 0 ? "all" : "each_runs_own");
    tl_json_kv_double(j, "geomean_ratio", c->geomean_ratio);
    tl_json_kv_uint(j, "geomean_names", c->geomean_n);
    tl_json_kv_uint(j, "regressions", c->counts[TL_VERDICT_REGRESSION]);
    tl_json_kv_uint(j, "improvements", c->counts[TL_VERDICT_IMPROVEMENT]);
    tl_json_kv_uint(j, "gate_failures", c->gate_failures);
    tl_json_kv_uint(j, "inconclusive", c->inconclusive);
    tl_json_key(j, "counts");
    tl_json_object_begin(j);
    for (int v = 0; v < TL_VERDICT_COUNT; v++)
        tl_json_kv_uint(j, tl_verdict_name(v), c->counts[v]);
    tl_json_object_end(j);
    tl_json_key(j, "rows");
    tl_json_array_begin(j);
    for (size_t i = 0; i < c->nrows; i++)
        write_row(j, &c->rows[i]);
    tl_json_array_end(j);
    tl_json_key(j, "gpu");
    tl_json_array_begin(j);
    for (size_t i = 0; i < c->ngpu; i++)
        write_gpu(j, &c->gpu[i]);
    tl_json_array_end(j);
    tl_json_key(j, "metrics");
    tl_json_array_begin(j);
    for (size_t i = 0; i < c->nmetrics; i++)
        write_metric(j, &c->metrics[i]);
    tl_json_array_end(j);
    tl_json_key(j, "counters");
    tl_json_array_begin(j);
    for (size_t i = 0; i < c->ncounters; i++) {
        const tl_cmp_counter_row *x = &c->counters[i];
        tl_json_object_begin(j);
        tl_json_kv_string(j, "name", x->name);
        tl_json_kv_double(j, "baseline", x->mean[0]);
        tl_json_kv_double(j, "candidate", x->mean[1]);
        tl_json_kv_double(j, "baseline_max", x->max[0]);
        tl_json_kv_double(j, "candidate_max", x->max[1]);
        tl_json_kv_uint(j, "baseline_count", x->count[0]);
        tl_json_kv_uint(j, "candidate_count", x->count[1]);
        tl_json_kv_double(j, "delta_pct", x->delta_pct);
        tl_json_kv_bool(j, "beyond_threshold", x->beyond);
        tl_json_object_end(j);
    }
    tl_json_array_end(j);
    tl_json_object_end(j);
    tl_json_write(j, "\n", 1);
}
