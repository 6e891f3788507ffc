/*
 * compare_verdicts.c - each row's verdict once its test is done
 * (compare_internal.h; docs/compare.md): the threshold, the family-wise
 * correction over the tested rows (Holm or Bonferroni), rows too large to
 * leave untested, the rows' share of the run and their materiality, the call
 * mix, and the overall verdict of a comparison (tl_compare_verdict).
 */
#define _GNU_SOURCE
#include "compare_internal.h"
#include "numbers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The note of an untested verdict: "+850.0 %, one run each: beyond the
 * large-change threshold (25 %), not tested". */
static char *untested_note(const tl_cmp_row *r, double limit)
{
    char buf[160], runs[48];
    /* a rank's total per run or step is tested over its calls, the
     * all-ranks one over its ranks */
    int run = r->kind == TL_CMP_PER_RUN || r->kind == TL_CMP_PER_STEP;
    int one_rank = r->rank < 0 && run && r->base.nsamples <= 1 && r->cand.nsamples <= 1;
    if (one_rank && (r->base.nsessions > 1 || r->cand.nsessions > 1))
        snprintf(runs, sizeof runs, "%zu and %zu runs of one rank", r->base.nsessions, r->cand.nsessions);
    else if (r->base.nsamples <= 1 && r->cand.nsamples <= 1)
        snprintf(runs, sizeof runs, "one run each");
    else
        snprintf(runs, sizeof runs, "%zu and %zu %s", r->base.nsamples, r->cand.nsamples,
                 !run           ? "samples"
                 : r->rank >= 0 ? "calls"
                                : "ranks");
    snprintf(buf, sizeof buf, "%s, %s: beyond the large-change threshold (%s), not tested", TL_PCT_SIGNED(r->delta_pct),
             runs, TL_PCT_AS_SET(limit));
    return strdup(buf);
}

/* Verdicts that need no test: untested rows beyond the large-change
 * threshold, and changed call counts. */
static int untested_verdict(tl_cmp_row *r, const tl_cmp_options *o)
{
    if (r->kind == TL_CMP_CALLS_PER_STEP) {
        if (!(isfinite(r->delta_pct) && fabs(r->delta_pct) > o->threshold_pct))
            return 0;
        char buf[160];
        r->verdict = TL_VERDICT_CHANGED;
        /* Per rank and run: the all-ranks counts add up every rank's
         * sessions (a rank with two sessions read "12 times per run instead
         * of 12" for 6 per run). */
        double nb = r->base.nsessions ? (double)r->base.nsessions : 1;
        double nc = r->cand.nsessions ? (double)r->cand.nsessions : 1;
        double per_c = (double)r->cand.count / nc, per_b = (double)r->base.count / nb;
        snprintf(buf, sizeof buf, "called %.4g time%s per run instead of %.4g (%.3g per step instead of %.3g)", per_c,
                 per_c == 1 ? "" : "s", per_b, r->value_cand, r->value_base);
        r->note = strdup(buf);
        return r->note ? 0 : -1;
    }
    if (r->verdict != TL_VERDICT_TOO_FEW || !isfinite(r->delta_pct) || fabs(r->delta_pct) <= o->max_untested_pct)
        return 0;
    /* A total that moved but whose calls' typical size (count x median) did
     * not move the same way beyond the threshold is one outlier call (a GC
     * pause in one of four calls: +50 %) or a change of the calls' shape
     * (HTA trace_diff's wait_sparse_data_dist: two of six calls of 40-53 ms
     * in one run, none in the other: the total -62 %, count x median
     * +223 %): not a verdict from the effect size alone. */
    if (isfinite(r->robust_base) && isfinite(r->robust_cand) && r->robust_base > 0) {
        double typical = 100.0 * (r->robust_cand - r->robust_base) / r->robust_base;
        if (!(fabs(typical) > o->max_untested_pct && (typical > 0) == (r->delta_pct > 0))) {
            char buf[200];
            snprintf(buf, sizeof buf,
                     "%s in total but %s in calls x median: one outlier call or a "
                     "change of the calls' spread, not judged untested",
                     TL_PCT_SIGNED(r->delta_pct), TL_PCT_SIGNED(typical));
            free(r->note);
            r->note = strdup(buf);
            return r->note ? 0 : -1;
        }
    }
    r->verdict = r->delta_pct > 0 ? TL_VERDICT_LARGE_INCREASE : TL_VERDICT_LARGE_DECREASE;
    r->note = untested_note(r, o->max_untested_pct);
    return r->note ? 0 : -1;
}

/* The note of a rank-level verdict whose total says otherwise: "+24.6 % on
 * the ranks (3 of 4, the one far from the others left out); the total moved
 * -2.8 %". */
static char *ranks_note(const tl_cmp_row *r, double change)
{
    char buf[240], used[96];
    if (r->lr_used < r->lr_n)
        snprintf(used, sizeof used, "%zu of %zu, the one far from the others left out", r->lr_used, r->lr_n);
    else
        snprintf(used, sizeof used, "the mean of %zu", r->lr_n);
    snprintf(buf, sizeof buf, "%s on the ranks (%s); the total moved %s", TL_PCT_SIGNED(change), used,
             TL_PCT_SIGNED(r->delta_pct));
    return strdup(buf);
}

/* What the run shares of one group are measured against (run_shares): on
 * each side the name that takes the most time per rank; on the baseline the
 * names' per-run values summed and the most ranks a name of the group runs
 * on. */
typedef struct group_time {
    double largest[2], sum;
    size_t ranks;
} group_time;

/* A rank's run time for the rows of a group: the smaller of the two runs'
 * profiled wall time per rank (span_ns) among those at least as long as
 * their own side's longest name of the group (a report's timestamps may
 * cover less than its stages: FramePack's span is its memory snapshots',
 * 0.25 ms, against 40 s of stages); with neither, the baseline group's
 * time per rank, never below its longest name. */
static double rank_time(const tl_compare *c, const group_time *g)
{
    double best = NAN;
    for (int k = 0; k < 2; k++)
        if (isfinite(c->span_ns[k]) && c->span_ns[k] >= g->largest[k] && !(best <= c->span_ns[k]))
            best = c->span_ns[k];
    if (isfinite(best))
        return best;
    double per_rank = g->ranks ? g->sum / (double)g->ranks : NAN;
    return per_rank > g->largest[0] ? per_rank : g->largest[0];
}

/* Each all-ranks per-run row of a name's share of the run: 100 (candidate -
 * baseline, summed over the ranks) / (a rank's run time, rank_time, x the
 * ranks that run the name on the baseline), so that a stage of one rank of
 * 64 is measured against that rank's time. An untested increase below
 * untested_floor_pct of the run does not fail the gate: one trace a side,
 * every name called fewer than 4 times a run is untested, and a 5 us kernel
 * that took 7 us (+37 %, 0.0004 % of a 500 ms run) is run-to-run noise, not
 * a regression; the note says so. Tested regressions are not floored: a
 * +25 % change of a stage of 2 % of the run is a real change the tests were
 * built to find. */
static int run_shares(tl_compare *c, int floor_notes)
{
    group_time gt[TL_GROUP_COUNT];
    memset(gt, 0, sizeof gt);
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->rank >= 0 || r->kind != TL_CMP_PER_RUN || r->group >= TL_GROUP_COUNT)
            continue;
        const tl_cmp_side *sd[2] = { &r->base, &r->cand };
        const double v[2] = { r->value_base, r->value_cand };
        for (int k = 0; k < 2; k++) {
            if (!sd[k]->present || !isfinite(v[k]) || sd[k]->nsamples == 0)
                continue;
            group_time *g = &gt[r->group];
            double per_rank = v[k] / (double)sd[k]->nsamples;
            g->largest[k] = per_rank > g->largest[k] ? per_rank : g->largest[k];
            if (k == 0) {
                g->sum += v[k];
                g->ranks = sd[k]->nsamples > g->ranks ? sd[k]->nsamples : g->ranks;
            }
        }
    }
    for (size_t i = 0; i < c->nrows; i++) {
        tl_cmp_row *r = &c->rows[i];
        r->run_share_pct = NAN;
        if (r->rank >= 0 || r->kind != TL_CMP_PER_RUN || r->group >= TL_GROUP_COUNT || !r->base.present ||
            !r->cand.present || r->base.nsamples == 0)
            continue;
        double run = rank_time(c, &gt[r->group]) * (double)r->base.nsamples;
        if (run > 0 && isfinite(r->value_base) && isfinite(r->value_cand))
            r->run_share_pct = 100 * (r->value_cand - r->value_base) / run;
        if (!floor_notes || !r->primary || r->verdict != TL_VERDICT_LARGE_INCREASE ||
            !(r->run_share_pct < c->opt.untested_floor_pct) || !r->note)
            continue;
        r->floored = 1;
        char buf[320];
        snprintf(buf, sizeof buf, "%s; %s of the run's time, below the gate's floor (%s)", r->note,
                 TL_PCT_DOWN(r->run_share_pct), TL_PCT_AS_SET(c->opt.untested_floor_pct));
        char *note = strdup(buf);
        if (note == NULL)
            return -1;
        free(r->note);
        r->note = note;
    }
    return 0;
}

/* The baseline's median step time (all ranks); NaN without steps. */
static double base_step_ns(const tl_compare *c)
{
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->group == TL_CMP_GROUP_STEPS && r->rank < 0 && r->kind == TL_CMP_PER_CALL && r->base.present)
            return r->base.median;
    }
    return NAN;
}

/* Materiality: which primary rows may fail the gate. The gate's question is
 * the step (the run, without steps): a stage, op or kernel fails it only when
 * its change is material to the step, not only to itself -- its change per
 * step (the candidate's time per rank and step minus the baseline's) at least
 * material_pct (the threshold) of the baseline's median step time; without
 * steps its run share (run_shares). An optimizer kernel +13 % that adds 0.2
 * ms to a 54 ms step is a true change and an explanation, not a failed job.
 * Step and memory rows are always material; a name whose share cannot be
 * measured (one side has no value) stays material. Decided from the values
 * alone, before any test: immaterial rows leave the gate's families, so that
 * Holm's correction is over the rows that could fail it. */
static void materiality(tl_compare *c)
{
    double step = base_step_ns(c);
    double limit = isnan(c->opt.material_pct) ? c->opt.threshold_pct : c->opt.material_pct;
    for (size_t i = 0; i < c->nrows; i++) {
        tl_cmp_row *r = &c->rows[i];
        r->step_share_pct = NAN;
        r->material = r->primary;
        if (!r->primary || r->group >= TL_GROUP_COUNT)
            continue;
        if (step > 0 && r->base.present && r->cand.present && r->base.steps > 0 && r->cand.steps > 0)
            r->step_share_pct =
                100 * (r->cand.total / (double)r->cand.steps - r->base.total / (double)r->base.steps) / step;
        double share = isfinite(r->step_share_pct) ? r->step_share_pct : r->run_share_pct;
        r->material = !(fabs(share) < limit);
    }
}

/* The families of the correction: the rows that may fail the gate, in two
 * levels -- the all-ranks step time, the one question, then the other
 * material primary rows (rank step times, stages, peak memory) -- and the
 * explanatory rows (immaterial primary rows among them). */
enum { FAM_EXPLAIN = 0, FAM_GATE, FAM_STEP, FAM_COUNT };

static int family(const tl_cmp_row *r)
{
    if (!r->primary || !r->material)
        return FAM_EXPLAIN;
    return r->group == TL_CMP_GROUP_STEPS && r->rank < 0 && r->kind == TL_CMP_PER_CALL ? FAM_STEP : FAM_GATE;
}

/* A rank's row with 5 samples a side or more is tested whatever the size of
 * its (Benjamini–Hochberg) family: the floor below is Bonferroni's bound,
 * which BH does not have (a rank whose DataLoader took 5.3x in all 8 steps
 * read "untested"). */
static int keeps_test(const tl_cmp_row *r)
{
    return family(r) == FAM_EXPLAIN && r->rank >= 0 && r->base.nsamples >= 5 && r->cand.nsamples >= 5;
}

/* A per-call verdict that is a change of call mix, not of speed: the calls
 * per run moved beyond the threshold against the per-call time (740 calls of
 * an op became 20, each 40x longer) and the total per run did not move
 * beyond the threshold the per-call way. The per-run row of the same name and
 * rank follows the per-call rows of its block (compare_block). */
static int call_mix(tl_compare *c, size_t i)
{
    tl_cmp_row *r = &c->rows[i];
    if (r->kind != TL_CMP_PER_CALL || r->group >= TL_GROUP_COUNT ||
        (r->verdict != TL_VERDICT_REGRESSION && r->verdict != TL_VERDICT_IMPROVEMENT))
        return 0;
    const tl_cmp_row *run = NULL;
    for (size_t k = i + 1; k < c->nrows && c->rows[k].group == r->group && !strcmp(c->rows[k].name, r->name); k++)
        if (c->rows[k].kind == TL_CMP_PER_RUN && c->rows[k].rank == r->rank) {
            run = &c->rows[k];
            break;
        }
    if (run == NULL || !run->base.nsessions || !run->cand.nsessions || !run->base.count || !isfinite(run->delta_pct))
        return 0;
    double t = c->opt.threshold_pct / 100;
    double calls_b = (double)run->base.count / (double)run->base.nsessions;
    double calls_c = (double)run->cand.count / (double)run->cand.nsessions;
    double ratio = calls_c / calls_b;
    int up = r->verdict == TL_VERDICT_REGRESSION;
    if (up ? !(ratio < 1 / (1 + t) && run->delta_pct <= 100 * t) : !(ratio > 1 + t && run->delta_pct >= -100 * t))
        return 0;
    char buf[240];
    snprintf(buf, sizeof buf, "call mix: %.4g calls per run instead of %.4g, each %s; the total per run %s", calls_c,
             calls_b, TL_PCT_SIGNED(r->delta_pct), TL_PCT_SIGNED(run->delta_pct));
    char *note = strdup(buf);
    if (note == NULL)
        return -1;
    free(r->note);
    r->note = note;
    r->verdict = TL_VERDICT_CHANGED;
    r->call_mix = 1;
    return 0;
}

/* Correct the p-values for the number of tests, each family apart, then
 * give every row its verdict, decide which fail the gate and count them.
 * The gate's question has a direction: the primary rows' "slower by more
 * than the threshold" p-values are adjusted with Holm's method, so alpha
 * bounds the chance of any false regression in the gate; their "faster"
 * p-values likewise, apart (improvements never fail the gate). Explanatory
 * rows take the two-sided p (twice the smaller one-sided one), adjusted
 * with Benjamini–Hochberg. */
int tl_cmp_decide(tl_compare *c)
{
    size_t n = c->nrows;
    double *p = malloc((5 * n + 1) * sizeof *p), *adj = malloc((5 * n + 1) * sizeof *adj);
    int rc = -1;
    if (p == NULL || adj == NULL)
        goto out;
    if (run_shares(c, 0) != 0)
        goto out;
    materiality(c);
    /* A test that could not give a p small enough to be significant in its
     * family, however large the change (4 against 4 samples: at best 1/70
     * one-sided, never below alpha over a family of ten), had too few
     * samples: the row is judged like an untested one. The families shrink
     * as rows leave, so this runs until nothing changes. */
    for (int changed = 1; changed;) {
        size_t m[FAM_COUNT] = { 0, 0, 0 };
        changed = 0;
        for (size_t i = 0; i < n; i++)
            m[family(&c->rows[i])] += c->rows[i].test != TL_TEST_NONE;
        for (size_t i = 0; i < n; i++) {
            tl_cmp_row *r = &c->rows[i];
            int f = family(r);
            double sides = f == FAM_EXPLAIN ? 2 : 1;
            if (r->test == TL_TEST_NONE || keeps_test(r) || !(sides * r->p_floor * (double)m[f] >= c->opt.alpha))
                continue;
            r->test = TL_TEST_NONE;
            r->verdict = TL_VERDICT_TOO_FEW;
            r->p_value = r->u = r->p_up = r->p_down = NAN;
            changed = 1;
        }
    }
    if (tl_cmp_levels_pooled(c) != 0)
        goto out;
    /* p[0, n): the step row, slower; p[n, 2n): faster; p[2n, 3n) and
     * p[3n, 4n): the other rows that may fail the gate, likewise;
     * p[4n, 5n): the explanatory rows, two-sided. */
    size_t m_step = 0, m_gate = 0;
    for (size_t i = 0; i < n; i++) {
        const tl_cmp_row *r = &c->rows[i];
        int t = r->test != TL_TEST_NONE, f = family(r);
        m_step += t && f == FAM_STEP;
        m_gate += t && f == FAM_GATE;
        p[i] = f == FAM_STEP && t ? r->p_up : NAN;
        p[n + i] = f == FAM_STEP && t ? r->p_down : NAN;
        p[2 * n + i] = f == FAM_GATE && t ? r->p_up : NAN;
        p[3 * n + i] = f == FAM_GATE && t ? r->p_down : NAN;
        p[4 * n + i] = f == FAM_EXPLAIN && t ? fmin(1.0, 2.0 * fmin(r->p_up, r->p_down)) : NAN;
    }
    /* The gate's two levels share alpha by the fallback procedure (Wiens
     * 2003): the step row at alpha / 2 when other rows may fail the gate
     * (else at alpha), the others (Holm) at alpha / 2, or at the whole alpha
     * once the step row is rejected in that direction. The family-wise error
     * stays alpha, and the step time is never drowned by a correction over
     * dozens of rows (one rank's data loading 5.3x slower: the step's p
     * 0.011 became 0.54 under Holm over 50 rows). The adjusted p-values are
     * scaled to be compared with alpha: p x alpha / level. */
    double level_step = c->opt.alpha, level_gate[2] = { c->opt.alpha, c->opt.alpha };
    if (c->opt.correction == TL_CMP_HOLM) {
        if (tl_signif_holm(p, n, adj) != 0 || tl_signif_holm(p + n, n, adj + n) != 0 ||
            tl_signif_holm(p + 2 * n, n, adj + 2 * n) != 0 || tl_signif_holm(p + 3 * n, n, adj + 3 * n) != 0 ||
            tl_signif_bh(p + 4 * n, n, adj + 4 * n) != 0)
            goto out;
        if (m_step > 0 && m_gate > 0) {
            level_step = c->opt.alpha / 2;
            for (int d = 0; d < 2; d++) {
                int rejected = 0;
                for (size_t i = 0; i < n; i++)
                    rejected |= adj[d * n + i] < level_step;
                level_gate[d] = rejected ? c->opt.alpha : c->opt.alpha / 2;
            }
        }
        for (size_t i = 0; i < n; i++)
            for (int d = 0; d < 2; d++) {
                adj[d * n + i] = fmin(1.0, adj[d * n + i] * c->opt.alpha / level_step);
                adj[(2 + d) * n + i] = fmin(1.0, adj[(2 + d) * n + i] * c->opt.alpha / level_gate[d]);
            }
    } else {
        memcpy(adj, p, 5 * n * sizeof *adj);
    }
    for (size_t i = 0; i < n; i++) {
        tl_cmp_row *r = &c->rows[i];
        if (r->test == TL_TEST_NONE) {
            if (untested_verdict(r, &c->opt) != 0)
                goto out;
            continue;
        }
        int f = family(r);
        size_t at = f == FAM_STEP ? 0 : f == FAM_GATE ? 2 * n : 4 * n;
        double up = adj[at + i], down = f == FAM_EXPLAIN ? adj[at + i] : adj[at + n + i];
        double limit = tl_cmp_row_limit(&c->opt, r->group);
        /* The change the verdict weighs: the row's delta; for the rank-level
         * test the change it measured on the ranks (exp of its mean log
         * ratio, minus 1), which a one-off spike in one rank's total cannot
         * turn around (baseline 20, 20, 20 and a 50 ms spike, candidate 25
         * ms on every rank: -9 % in total, +25 % on the ranks). A primary
         * row reports the side of its change; an explanatory row its
         * two-sided p. */
        double change = r->test == TL_TEST_RANK_T && isfinite(r->lr_est) ? 100 * expm1(r->lr_est) : r->delta_pct;
        int slower = !(change < 0);
        r->p_value = f == FAM_EXPLAIN ? fmin(1.0, 2.0 * fmin(r->p_up, r->p_down)) : slower ? r->p_up : r->p_down;
        r->p_adjusted = slower ? up : down;
        r->significant = r->p_adjusted < c->opt.alpha;
        /* The rank-level test also wants the change on most ranks: more than
         * half of them beyond the threshold the same way. */
        int most_up = r->test != TL_TEST_RANK_T || 2 * r->lr_up > r->lr_n;
        int most_down = r->test != TL_TEST_RANK_T || 2 * r->lr_down > r->lr_n;
        if (up < c->opt.alpha && change > limit && most_up)
            r->verdict = TL_VERDICT_REGRESSION;
        else if (down < c->opt.alpha && change < -limit && most_down)
            r->verdict = TL_VERDICT_IMPROVEMENT;
        /* Unchanged is not "the same": a row that moved beyond the
         * threshold without a verdict is shown as inconclusive (not
         * significant), so "+95 %, unchanged" is never read. */
        r->inconclusive = r->verdict == TL_VERDICT_UNCHANGED && (fabs(change) > limit || fabs(r->delta_pct) > limit);
        if ((r->verdict == TL_VERDICT_REGRESSION && !(r->delta_pct > limit)) ||
            (r->verdict == TL_VERDICT_IMPROVEMENT && !(r->delta_pct < -limit))) {
            free(r->note);
            if ((r->note = ranks_note(r, change)) == NULL)
                goto out;
        }
    }
    if (run_shares(c, 1) != 0)
        goto out;
    for (size_t i = 0; i < n; i++) {
        tl_cmp_row *r = &c->rows[i];
        /* Untested verdicts gate on all-ranks rows (primary ones are) that
         * could not be tested (with enough ranks the rank-level test
         * decides), and for a stage only when its increase is a share of the
         * run worth a failed job (run_shares). */
        if (call_mix(c, i) != 0)
            goto out;
        int large = r->verdict == TL_VERDICT_LARGE_INCREASE && r->rank < 0 && !r->floored;
        r->gate = r->primary && r->material && (r->verdict == TL_VERDICT_REGRESSION || large);
        c->gate_failures += r->gate;
        c->counts[r->verdict]++;
        c->inconclusive += r->inconclusive;
    }
    rc = 0;
out:
    free(p);
    free(adj);
    return rc;
}

void tl_compare_verdict(const tl_compare *c, tl_cmp_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->failures = c->gate_failures;
    v->fails = c->gate_failures > 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->group == TL_CMP_GROUP_STEPS && r->rank < 0 && r->kind == TL_CMP_PER_CALL && r->base.present &&
            r->cand.present)
            v->step = r;
        v->explained += r->verdict == TL_VERDICT_REGRESSION && !r->gate;
        if (r->gate && (v->lead == NULL || fabs(r->impact_ns) > fabs(v->lead->impact_ns)))
            v->lead = r;
    }
    if (v->step && v->step->gate)
        v->lead = v->step;
}

/* ---- who the others wait for ------------------------------------------------ */

/* The candidate's own waits analysis names a rank the others wait for in
 * the collectives (a last-arrival straggler) that the baseline's does not:
 * then what grew in the collectives, and in the stages that hold them (DDP's
 * backward), is that waiting, not their own cost. A real H200 DDP job whose
 * rank 3 loads data 30 ms slower a step failed the gate on gloo:all_reduce
 * +135% and backward +70% on all ranks, with rank 3's data_loading (+792%)
 * among the explanatory rows. NULL when no such rank. */
const tl_straggler *tl_cmp_new_last_arrival(const tl_compare *c)
{
    if (c->cand == NULL)
        return NULL;
    for (int i = 0; i < c->cand->nstragglers; i++) {
        const tl_straggler *s = &c->cand->stragglers[i];
        if (s->kind == NULL || strcmp(s->kind, "last_arrival") != 0)
            continue;
        int before = 0;
        for (int k = 0; c->base && k < c->base->nstragglers; k++)
            before |= c->base->stragglers[k].rank == s->rank && c->base->stragglers[k].kind &&
                      strcmp(c->base->stragglers[k].kind, "last_arrival") == 0;
        if (!before)
            return s;
    }
    return NULL;
}

/* ---- one rank alone slower: who the others wait for, without collectives ---- */

/* A data-parallel job whose ranks synchronize every step (DDP's all-reduce
 * inside backward) shows one rank's slowdown on every rank's step time; what
 * it has of its own is the stage that grew on that rank alone. Found when
 * the step time regresses on every rank by about the same (the largest and
 * the smallest growth at most 2 x LONE_STEP_SPREAD of their mean apart: the
 * ranks wait for each other), and
 * exactly one rank has stages whose per_run rows regress while the same
 * stage regresses on no other rank; of those, the one that grew most per step
 * must account for LONE_SHARE of that rank's step growth or more. A real H200
 * DDP job recorded with tally's Python module (tests/fixtures/ddp-h200, no
 * collective ranges in its reports): rank 3's data_loading +30.1 ms a step,
 * every rank's step +27.2 to +27.7 ms, backward +95 % on ranks 0-2 and -11 %
 * on rank 3. docs/compare.md, "Who the others wait for". */
#define LONE_STEP_SPREAD 0.25
#define LONE_SHARE 0.5

static int stage_group(int g)
{
    return g == TL_GROUP_SECTIONS || g == TL_GROUP_OPS || g == TL_GROUP_KERNELS || g == TL_GROUP_RUNTIME ||
           g == TL_GROUP_GPU_ANNOTATIONS;
}

void tl_cmp_lone_rank(tl_compare *c)
{
    c->lone.found = 0;
    if (c->nranks < 2)
        return;
    /* each rank's step growth, every one a regression */
    double *grow = calloc(c->nranks, sizeof *grow);
    if (grow == NULL)
        return;
    size_t nstep = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->group != TL_CMP_GROUP_STEPS || r->rank < 0 || r->kind != TL_CMP_PER_CALL)
            continue;
        if (r->verdict != TL_VERDICT_REGRESSION || !isfinite(r->value_cand - r->value_base))
            goto out;
        for (size_t k = 0; k < c->nranks; k++)
            if (c->ranks[k] == r->rank) {
                grow[k] = r->value_cand - r->value_base;
                nstep++;
            }
    }
    if (nstep != c->nranks)
        goto out;
    double lo = grow[0], hi = grow[0], sum = 0;
    for (size_t k = 0; k < c->nranks; k++) {
        lo = grow[k] < lo ? grow[k] : lo;
        hi = grow[k] > hi ? grow[k] : hi;
        sum += grow[k];
    }
    double mean = sum / (double)c->nranks;
    if (!(mean > 0) || hi - lo > 2 * LONE_STEP_SPREAD * mean)
        goto out;
    /* stages whose rank rows regress on exactly one rank: each all-ranks
     * row's regressing per_run rank rows, counted in one pass (rows[].all_row) */
    size_t *hits = calloc(c->nrows, sizeof *hits), *last = malloc(c->nrows * sizeof *last);
    if (hits == NULL || last == NULL) {
        free(hits);
        free(last);
        goto out;
    }
    for (size_t j = 0; j < c->nrows; j++) {
        const tl_cmp_row *x = &c->rows[j];
        if (x->rank >= 0 && x->all_row < c->nrows && x->kind == TL_CMP_PER_RUN && x->verdict == TL_VERDICT_REGRESSION) {
            hits[x->all_row]++;
            last[x->all_row] = j;
        }
    }
    int who = -1, two = 0;
    size_t best = SIZE_MAX;
    double best_ns = 0;
    for (size_t i = 0; i < c->nrows && !two; i++) {
        const tl_cmp_row *r = &c->rows[i];
        if (r->rank >= 0 || r->kind != TL_CMP_PER_RUN || !stage_group(r->group) || hits[i] != 1)
            continue;
        const tl_cmp_row *x = &c->rows[last[i]];
        two = who >= 0 && x->rank != who; /* two ranks each alone in something: not one rank */
        who = x->rank;
        double per = x->cand.steps > 0 ? (x->value_cand - x->value_base) / (double)x->cand.steps : NAN;
        if (per > best_ns) {
            best_ns = per;
            best = last[i];
        }
    }
    free(hits);
    free(last);
    if (two)
        goto out;
    if (who < 0 || best == SIZE_MAX)
        goto out;
    double step = NAN;
    for (size_t k = 0; k < c->nranks; k++)
        if (c->ranks[k] == who)
            step = grow[k];
    if (!(best_ns >= LONE_SHARE * step))
        goto out;
    c->lone.found = 1;
    c->lone.rank = who;
    c->lone.row = best;
    c->lone.stage_ns = best_ns;
    c->lone.step_ns = step;
out:
    free(grow);
}
