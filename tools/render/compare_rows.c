/*
 * compare_rows.c - the wording, filters and top rows that the compare page
 * and the CI outputs share (see compare_rows.h).
 */
#include "compare_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

/* ---- the wording of a row ------------------------------------------------------ */

const char *tl_cmp_rank_label(char *buf, size_t len, int rank)
{
    if (rank < 0)
        snprintf(buf, len, "all");
    else
        snprintf(buf, len, "%d", rank);
    return buf;
}

/* "+12.3%", with " ~" when the change is not significant. (A row with too few
 * samples is never tested, so it is never significant: compare_verdicts.c's tl_cmp_decide.) */
const char *tl_cmp_delta_text(char *buf, size_t len, const tl_cmp_row *r)
{
    if (!isfinite(r->delta_pct))
        snprintf(buf, len, "\xe2\x80\x93");
    else
        snprintf(buf, len, "%+.1f%%%s", r->delta_pct, r->significant ? "" : " ~");
    return buf;
}

const char *tl_cmp_gate_split(char *buf, size_t len, const tl_compare *c)
{
    size_t tested = 0, untested = 0;
    for (size_t i = 0; i < c->nrows; i++) {
        tested += c->rows[i].gate && c->rows[i].verdict == TL_VERDICT_REGRESSION;
        untested += c->rows[i].gate && c->rows[i].verdict != TL_VERDICT_REGRESSION;
    }
    if (tested + untested == 0)
        buf[0] = '\0';
    else
        snprintf(buf, len, "; %zu tested regression%s, %zu large untested increase%s", tested, tested == 1 ? "" : "s",
                 untested, untested == 1 ? "" : "s");
    return buf;
}

const tl_cmp_row *tl_cmp_step_row(const tl_compare *c)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (c->rows[i].group == TL_CMP_GROUP_STEPS && c->rows[i].rank < 0)
            return &c->rows[i];
    return NULL;
}

const char *tl_cmp_status_text(char *buf, size_t len, const tl_compare *c)
{
    tl_cmp_verdict v;
    tl_compare_verdict(c, &v);
    char b[48], k[48], d[48], p[32], extra[160] = "";
    size_t used;
    const tl_cmp_row *r = v.lead ? v.lead : v.step;
    if (r == v.step && r != NULL) {
        const char *how = r->verdict == TL_VERDICT_REGRESSION || r->verdict == TL_VERDICT_IMPROVEMENT
                              ? tl_verdict_name(r->verdict)
                          : r->inconclusive ? tl_cmp_verdict_text(r, 1)
                                            : "within the threshold";
        if (v.fails)
            snprintf(buf, len, "gate fails: step time %+.1f%% (%s \xe2\x86\x92 %s), adjusted p %s", r->delta_pct,
                     tl_cmp_value_text(b, sizeof b, r, r->base.median),
                     tl_cmp_value_text(k, sizeof k, r, r->cand.median),
                     tl_cmp_p_text(p, sizeof p, r->p_adjusted, "< "));
        else
            snprintf(buf, len, "gate passes: step time %+.1f%% (%s \xe2\x86\x92 %s, %s)", r->delta_pct,
                     tl_cmp_value_text(b, sizeof b, r, r->base.median),
                     tl_cmp_value_text(k, sizeof k, r, r->cand.median), how);
    } else if (r != NULL) {
        char name[88], share[64] = "";
        snprintf(name, sizeof name, "%.80s%s", r->name, strlen(r->name) > 80 ? "\xe2\x80\xa6" : "");
        if (isfinite(r->step_share_pct) && r->base.steps > 0 && r->cand.steps > 0) {
            double per = r->cand.total / (double)r->cand.steps - r->base.total / (double)r->base.steps;
            snprintf(share, sizeof share, " (%s%s a step, %.1f%% of the step)", per >= 0 ? "+" : "",
                     tl_units_dur(d, sizeof d, per), r->step_share_pct);
        } else if (isfinite(r->run_share_pct))
            snprintf(share, sizeof share, " (%.1f%% of the run)", r->run_share_pct);
        snprintf(buf, len, "gate fails: %s \"%s\" %s %+.1f%%%s%s", tl_cmp_group_name(r->group), name,
                 r->group == TL_CMP_GROUP_MEMORY ? "peak" : tl_cmp_kind_name(r->kind), r->delta_pct, share,
                 r->verdict == TL_VERDICT_REGRESSION ? "" : ", not tested");
    } else {
        snprintf(buf, len, "gate passes: no step time to compare, no material regression");
    }
    used = 0;
    if (v.failures > 1)
        used += (size_t)snprintf(extra + used, sizeof extra - used, "; %zu more gate failure%s", v.failures - 1,
                                 v.failures == 2 ? "" : "s");
    if (v.explained > 0 && used < sizeof extra)
        snprintf(extra + used, sizeof extra - used,
                 "; %zu regression verdict%s do%s not fail it (immaterial to the "
                 "step, or explanatory)",
                 v.explained, v.explained == 1 ? "" : "s", v.explained == 1 ? "es" : "");
    size_t n = strlen(buf);
    if (n + 1 < len)
        snprintf(buf + n, len - n, "%s", extra);
    return buf;
}

void tl_cmp_counter_cells_of(tl_cmp_counter_cells *cells, const tl_cmp_counter_row *x)
{
    char *v[2] = { cells->base, cells->cand };
    for (int k = 0; k < 2; k++) {
        if (isfinite(x->mean[k]))
            snprintf(v[k], sizeof cells->base, "%.4g", x->mean[k]);
        else
            snprintf(v[k], sizeof cells->base, "\xe2\x80\x93");
    }
    snprintf(cells->counts, sizeof cells->counts, "%llu / %llu", (unsigned long long)x->count[0],
             (unsigned long long)x->count[1]);
    if (isfinite(x->delta_pct))
        snprintf(cells->delta, sizeof cells->delta, "%+.1f%%", x->delta_pct);
    else
        snprintf(cells->delta, sizeof cells->delta, "\xe2\x80\x93");
    cells->change = !isfinite(x->delta_pct) ? "" : x->beyond ? "changed" : "within threshold";
}

int tl_cmp_single_rank(const tl_compare *c)
{
    return c->nranks == 1 && c->nbase_only == 0 && c->ncand_only == 0;
}

/* " The candidate's collectives wait for rank 3: ...", " Rank 3 alone got
 * slower in ..." (c->lone), or "". */
static void waits_advice(char *buf, size_t len, const tl_compare *c)
{
    const tl_straggler *s = tl_cmp_new_last_arrival(c);
    buf[0] = '\0';
    if (s == NULL && c->lone.found && c->lone.row < c->nrows) {
        char a[32], b[32];
        snprintf(buf, len,
                 " Rank %d alone got slower in \"%.100s\" (+%s a step, on no other rank), about as much as the step "
                 "grew on every rank (+%s on rank %d): the ranks wait for each other every step, so the others "
                 "waited for rank %d. Look at rank %d's \"%.100s\" first.",
                 c->lone.rank, c->rows[c->lone.row].name, tl_units_dur(a, sizeof a, c->lone.stage_ns),
                 tl_units_dur(b, sizeof b, c->lone.step_ns), c->lone.rank, c->lone.rank, c->lone.rank,
                 c->rows[c->lone.row].name);
        return;
    }
    if (s == NULL)
        return;
    char what[300] = "", d[32];
    if (s->nitems > 0 && s->items[0].name && s->items[0].delta_ns > 0)
        snprintf(what, sizeof what, ", spending %s a step more than the others in \"%.200s\"",
                 tl_units_dur(d, sizeof d, s->items[0].delta_ns), s->items[0].name);
    snprintf(buf, len,
             " The candidate's collectives wait for rank %d: it arrives last to %d of %d (the candidate's waits "
             "analysis)%s. What grew in the collectives and in the stages that hold them is that waiting: look at "
             "rank %d's own rows first.",
             s->rank, s->slower, s->units, what, s->rank);
}

const char *tl_cmp_advice_text(char *buf, size_t len, const tl_compare *c)
{
    tl_cmp_verdict v;
    tl_compare_verdict(c, &v);
    double material = isnan(c->opt.material_pct) ? c->opt.threshold_pct : c->opt.material_pct;
    char waits[768];
    waits_advice(waits, sizeof waits, c);
    if (v.fails && v.lead == v.step)
        snprintf(buf, len,
                 "The step got slower beyond the %.4g%% threshold: the cause is among the material "
                 "regressions (each adds %.4g%% of the step or more) and the added names; a rank's rows name a "
                 "rank that alone got slower.%s Rerun both sides on the same machine if it was shared: run-to-run "
                 "variation is not tested.",
                 c->opt.threshold_pct, material, waits);
    else if (v.fails)
        snprintf(buf, len,
                 "A stage, op or kernel got slower by %.4g%% of the step or more%s: fix it, or raise "
                 "--materiality if that share is acceptable.%s",
                 material,
                 v.step ? " although the step itself did not fail the gate (an improvement elsewhere made up for it)"
                        : "",
                 waits);
    else if (v.explained > 0)
        snprintf(buf, len,
                 "Nothing to fix for the gate. The regressions listed are real changes of rows that add "
                 "less than %.4g%% of the step each (or explain another row): watch them, they pass.",
                 material);
    else if (v.step == NULL)
        snprintf(buf, len,
                 "No step time on both sides: the gate weighs each stage against the run's time. Profile "
                 "steps (ProfilerStep, tally iterations) to test the step itself.");
    else if (v.step->test == TL_TEST_NONE)
        snprintf(buf, len, "Too few steps to test the step time: profile 5 or more steps a side (or more ranks).");
    else
        snprintf(buf, len, "Nothing to do: no material change beyond the %.4g%% threshold.", c->opt.threshold_pct);
    return buf;
}

const char *tl_cmp_step_text(char *buf, size_t len, const tl_compare *c)
{
    const tl_cmp_row *r = tl_cmp_step_row(c);
    buf[0] = '\0';
    if (r == NULL || !r->base.present || !r->cand.present)
        return buf;
    char b[48], v[48], d[48];
    snprintf(buf, len, "Step time (median, all ranks): %s \xe2\x86\x92 %s, %s (%s).",
             tl_cmp_value_text(b, sizeof b, r, r->base.median), tl_cmp_value_text(v, sizeof v, r, r->cand.median),
             tl_cmp_delta_text(d, sizeof d, r), tl_cmp_verdict_text(r, 1));
    return buf;
}

const char *tl_cmp_geomean_sentence(char *buf, size_t len, const tl_compare *c)
{
    buf[0] = '\0';
    if (!isfinite(c->geomean_ratio))
        return buf;
    double pct = 100.0 * (c->geomean_ratio - 1.0);
    char g[48];
    snprintf(buf, len,
             "Per name, the geometric mean of the %s ratios is %.4f over %zu names (%s%s; each name counts "
             "once, whatever its share of the time).",
             tl_cmp_metric_name(c->opt.metric), c->geomean_ratio, c->geomean_n,
             tl_cmp_geomean_text(g, sizeof g, c->geomean_ratio),
             fabs(pct) < c->opt.threshold_pct && fabs(pct) >= 0.005 ? ", within the threshold" : "");
    return buf;
}

const char *tl_cmp_geomean_text(char *buf, size_t len, double ratio)
{
    double pct = 100.0 * (ratio - 1.0);
    if (fabs(pct) < 0.005)
        snprintf(buf, len, "as fast");
    else
        snprintf(buf, len, "%.*f%% %s", fabs(pct) < 1 ? 2 : 1, fabs(pct), pct < 0 ? "faster" : "slower");
    return buf;
}

const char *tl_cmp_verdict_text(const tl_cmp_row *r, int words)
{
    if (r->verdict == TL_VERDICT_UNCHANGED && r->inconclusive)
        return r->significant ? "not on most ranks" : "not significant";
    if (!words)
        return tl_verdict_name(r->verdict);
    switch (r->verdict) {
    case TL_VERDICT_TOO_FEW:
        return "too few samples";
    case TL_VERDICT_LARGE_INCREASE:
        return "large increase, not tested";
    case TL_VERDICT_LARGE_DECREASE:
        return "large decrease, not tested";
    default:
        return tl_verdict_name(r->verdict);
    }
}

/* "2 ranks only in the baseline (3, 7)": up to 8 listed, then "...". */
static size_t ranks_list(char *buf, size_t len, size_t at, const int *ranks, size_t n, const char *side)
{
    if (n == 0 || at >= len)
        return at;
    at += (size_t)snprintf(buf + at, len - at, "%s%zu rank%s only in the %s (", at ? ", " : "", n, n == 1 ? "" : "s",
                           side);
    for (size_t i = 0; i < n && i < 8 && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? ", " : "", ranks[i]);
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, "%s)", n > 8 ? ", \xe2\x80\xa6" : "");
    return at;
}

const char *tl_cmp_ranks_text(char *buf, size_t len, const tl_compare *c)
{
    buf[0] = '\0';
    if (c->nbase_only == 0 && c->ncand_only == 0)
        return buf;
    size_t at = ranks_list(buf, len, 0, c->ranks_base_only, c->nbase_only, "baseline");
    at = ranks_list(buf, len, at, c->ranks_cand_only, c->ncand_only, "candidate");
    if (at >= len)
        return buf;
    if (c->nranks > 0)
        snprintf(buf + at, len - at, ": the all-ranks rows compare the %zu rank%s both runs have", c->nranks,
                 c->nranks == 1 ? "" : "s");
    else
        snprintf(buf + at, len - at, ": no rank is in both runs, the all-ranks rows compare each run's own ranks");
    return buf;
}

const char *tl_cmp_value_text(char *buf, size_t len, const tl_cmp_row *r, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "\xe2\x80\x93");
    else if (r->group == TL_CMP_GROUP_MEMORY)
        tl_units_bytes(buf, len, v);
    else if (r->kind == TL_CMP_CALLS_PER_STEP)
        snprintf(buf, len, "%.3g calls a step", v);
    else
        tl_units_dur(buf, len, v);
    return buf;
}

const char *tl_cmp_p_text(char *buf, size_t len, double p, const char *lt)
{
    if (!isfinite(p))
        snprintf(buf, len, "\xe2\x80\x93");
    else if (p < 0.001)
        snprintf(buf, len, "%s0.001", lt);
    else
        snprintf(buf, len, "%.3f", p);
    return buf;
}

void tl_cmp_side_cell_of(tl_cmp_side_cell *cell, const tl_cmp_row *r, int cand)
{
    const tl_cmp_side *s = cand ? &r->cand : &r->base;
    char lo[48], hi[48];
    cell->ci[0] = '\0';
    if (!s->present) {
        snprintf(cell->value, sizeof cell->value, "\xe2\x80\x93");
        return;
    }
    tl_cmp_value_text(cell->value, sizeof cell->value, r, cand ? r->value_cand : r->value_base);
    if (r->kind == TL_CMP_PER_CALL && r->group != TL_CMP_GROUP_MEMORY && isfinite(s->ci_lo))
        snprintf(cell->ci, sizeof cell->ci, "[%s, %s]", tl_units_dur(lo, sizeof lo, s->ci_lo),
                 tl_units_dur(hi, sizeof hi, s->ci_hi));
}

static void pct_cell(tl_cmp_pct_cell *cell, const double v[2])
{
    char x[32], y[32];
    snprintf(cell->pair, sizeof cell->pair, "%s \xe2\x86\x92 %s", tl_units_pct(x, sizeof x, v[0]),
             tl_units_pct(y, sizeof y, v[1]));
    cell->pp[0] = '\0';
    if (isfinite(v[0]) && isfinite(v[1]))
        snprintf(cell->pp, sizeof cell->pp, "%+.1f pp", v[1] - v[0]);
}

void tl_cmp_gpu_cells(const tl_cmp_gpu *g, tl_cmp_pct_cell cells[TL_CMP_GPU_COLS])
{
    pct_cell(&cells[0], g->idle_pct);
    pct_cell(&cells[1], g->compute_pct);
    pct_cell(&cells[2], g->non_compute_pct);
    pct_cell(&cells[3], g->overlap_pct);
}

void tl_cmp_metric_cells_of(tl_cmp_metric_cells *cells, const tl_cmp_metric_row *m)
{
    const char *fig = m->info->policy == TL_ACROSS_MAX ? "most" : "mean";
    if (m->common)
        snprintf(cells->figure, sizeof cells->figure, "%s of %d rank%s", fig, m->ranks[0], m->ranks[0] == 1 ? "" : "s");
    else
        snprintf(cells->figure, sizeof cells->figure, "%s of %d / %d ranks, none in common", fig, m->ranks[0],
                 m->ranks[1]);
    tl_units_fmt(cells->base, sizeof cells->base, m->value[0], m->info->unit);
    tl_units_fmt(cells->cand, sizeof cells->cand, m->value[1], m->info->unit);
    if (isfinite(m->delta_pp))
        snprintf(cells->delta, sizeof cells->delta, "%+.1f pp", m->delta_pp);
    else if (isfinite(m->delta_pct))
        snprintf(cells->delta, sizeof cells->delta, "%+.1f%%", m->delta_pct);
    else
        snprintf(cells->delta, sizeof cells->delta, "\xe2\x80\x93");
    cells->change = tl_cmp_change_name(m->change);
}

/* ---- which rows ------------------------------------------------------------------ */

int tl_cmp_keep_matched(const tl_cmp_row *r, void *ctx)
{
    (void)ctx;
    return r->rank < 0 && r->base.present && r->cand.present && r->group != TL_CMP_GROUP_STEPS &&
           r->group != TL_CMP_GROUP_MEMORY && r->kind == TL_CMP_PER_RUN;
}

int tl_cmp_keep_overall(const tl_cmp_row *r, void *ctx)
{
    return r->rank < 0 && r->verdict == *(const int *)ctx;
}

int tl_cmp_keep_rank(const tl_cmp_row *r, void *ctx)
{
    return r->rank >= 0 && r->verdict == *(const int *)ctx;
}

int tl_cmp_top_select(tl_cmp_top *t, const tl_compare *c, int (*keep)(const tl_cmp_row *, void *), void *ctx,
                      size_t max)
{
    memset(t, 0, sizeof *t);
    t->max = max;
    t->idx = tl_compare_by_impact(c, keep, ctx, &t->n);
    if (t->idx == NULL) {
        t->n = 0;
        return -1;
    }
    t->shown = t->n < max ? t->n : max;
    return 0;
}

int tl_cmp_top_append(tl_cmp_top *t, const tl_compare *c, int (*keep)(const tl_cmp_row *, void *), void *ctx)
{
    size_t n;
    size_t *more = tl_compare_by_impact(c, keep, ctx, &n);
    size_t *idx = more ? realloc(t->idx, (t->n + n + 1) * sizeof *idx) : NULL;
    if (idx == NULL) {
        free(more);
        return -1;
    }
    memcpy(idx + t->n, more, n * sizeof *idx);
    free(more);
    t->idx = idx;
    t->n += n;
    t->shown = t->n < t->max ? t->n : t->max;
    return 0;
}

const tl_cmp_row *tl_cmp_top_row(const tl_cmp_top *t, const tl_compare *c, size_t i)
{
    return &c->rows[t->idx[i]];
}

/* The labels of the rows shown: one per distinct name, so that rows of one
 * name (its metrics, its ranks) print that name alike and only different
 * names are told apart (never "vae_decode #2" for vae_decode's per-run row). */
void tl_cmp_top_label(tl_cmp_top *t, const tl_compare *c, size_t width)
{
    const char **names = malloc((t->shown + 1) * sizeof *names);
    size_t *of = malloc((t->shown + 1) * sizeof *of), nu = 0;
    tl_labels uniq = { 0 };
    tl_labels_release(&t->lab);
    if (names == NULL || of == NULL)
        goto out;
    for (size_t i = 0; i < t->shown; i++) {
        const char *name = tl_cmp_top_row(t, c, i)->name;
        size_t k = 0;
        while (k < nu && strcmp(names[k], name) != 0)
            k++;
        if (k == nu)
            names[nu++] = name;
        of[i] = k;
    }
    if (tl_labels_make(&uniq, names, nu, width) != 0)
        goto out; /* out of memory: none (the fallback) */
    t->lab.full = calloc(t->shown + 1, sizeof *t->lab.full);
    t->lab.text = calloc(t->shown + 1, sizeof *t->lab.text);
    if (t->lab.full == NULL || t->lab.text == NULL) {
        tl_labels_release(&t->lab);
        goto out;
    }
    for (size_t i = 0; i < t->shown; i++, t->lab.n++) {
        t->lab.full[i] = strdup(uniq.full[of[i]]);
        t->lab.text[i] = strdup(uniq.text[of[i]]);
        if (t->lab.full[i] == NULL || t->lab.text[i] == NULL) {
            t->lab.n++;
            tl_labels_release(&t->lab);
            goto out;
        }
    }
out:
    tl_labels_release(&uniq);
    free(names);
    free(of);
}

const char *tl_cmp_top_label_of(const tl_cmp_top *t, size_t i, const char *fallback)
{
    return i < t->lab.n ? t->lab.text[i] : fallback;
}

void tl_cmp_top_release(tl_cmp_top *t)
{
    tl_labels_release(&t->lab);
    free(t->idx);
    memset(t, 0, sizeof *t);
}
