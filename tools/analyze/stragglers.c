/*
 * stragglers.c - which rank holds the others back, and why; named only with
 * per-step evidence (docs/analysis.md, "Stragglers", says all of this).
 *
 *  - slow compute: steps are matched across ranks (ProfilerStep#N or tally
 *    iterations, by number; the last ProfilerStep of a trace is left out, it
 *    is usually cut short). Per step, each rank's compute (the union of its
 *    compute kernels launched in the step; without GPU data the step time) is
 *    divided by the median of the other ranks in that step. A rank is a
 *    straggler when, over at least STRAGGLER_MIN_STEPS comparable steps, it is
 *    slower by more than STRAGGLER_FLOOR in most of them, and its median
 *    median excess is over the floor and its mean excess beyond both the floor
 *    and NOISE_K standard errors of a mean of that many steps given the
 *    ranks' own step-to-step noise (a single step says little; ten steps
 *    that agree say a lot). Without steps no rank is named.
 *  - last arrival: every rank waits in a collective until the last one
 *    arrives; waits.c matches the collectives across ranks and names the
 *    rank that arrives last in most of them beyond noise, with the waiting it
 *    causes and its cause (waits.h). Named by both, a rank is one straggler.
 *  - the two never contradict each other: when both name ranks and the sets
 *    differ, only the ranks both name are kept, and the others are dropped
 *    with a note; when they share none, no rank is named.
 *
 * Cost: per step one sort of the ranks' values, so O(S R log R) for S steps
 * and R ranks; the evidence is the top rows' medians over the other ranks, per
 * straggler (at most TL_MAX_STRAGGLERS).
 */
#define _GNU_SOURCE
#include "aggregate.h"
#include "numbers.h"
#include "straggler_limits.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* STRAGGLER_MIN_STEPS, _FLOOR, _SEVERE_*, _WARN_EFFECT: straggler_limits.h */
#define STRAGGLER_MAX_STEPS 512 /* the last this many comparable steps are compared (said when reached) */
#define NOISE_K 2.0             /* ... and by more than two standard errors of a median excess */
#define EVIDENCE_ROWS 64        /* rows of a group searched for the evidence */

/* The steps of a rank the analysis compares: not the partial last one. */
static size_t comparable(const tl_rank_result *r)
{
    size_t n = 0;
    for (size_t k = 0; k < r->nsteps; k++)
        n += !r->steps[k].partial;
    return n;
}

static int by_int64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

typedef struct ranked {
    double v;
    uint32_t rank;
} ranked;

static int by_ranked(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Median of sorted s[0..n) without element p. */
static double median_without(const ranked *s, size_t n, size_t p)
{
    size_t m = n - 1;
    size_t i = (m - 1) / 2, j = m / 2;
    double a = s[i < p ? i : i + 1].v, b = s[j < p ? j : j + 1].v;
    return (a + b) / 2;
}

static void set_note(tl_aggregate *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_note(tl_aggregate *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(a->straggler_note);
    a->straggler_note = tl_vformat(fmt, ap);
    va_end(ap);
}

/* ---- evidence ------------------------------------------------------------------ */

/* Steps of a rank for per-step name totals: its steps, else its loop's count. */
static double steps_of(const tl_rank_result *r)
{
    if (r->nsteps > 0)
        return (double)r->nsteps;
    /* the count of its main loop's summary, as rank_steps found it (aggregate.c) */
    return r->steps_summarized ? (double)r->step_count : 1;
}

/* The top rows of a group, searched for a straggler's evidence (found once
 * for every straggler). Communication kernels are left out: their time is
 * mostly waiting for the other ranks, a symptom, not a cause. */
typedef struct evidence_rows {
    size_t *rows;
    size_t n;
    double *per_step_div; /* steps_of per rank index */
    double *scratch;      /* the other ranks' per-step times of a row */
} evidence_rows;

static void evidence_rows_build(tl_aggregate *a, evidence_rows *e, int group)
{
    memset(e, 0, sizeof *e);
    size_t count = 0;
    size_t *top = tl_name_table_top(&a->names, group, &count);
    e->scratch = malloc((a->nranks + 1) * sizeof *e->scratch);
    e->per_step_div = malloc((a->nranks + 1) * sizeof *e->per_step_div);
    e->rows = malloc((EVIDENCE_ROWS + 1) * sizeof *e->rows);
    if (top == NULL || e->scratch == NULL || e->per_step_div == NULL || e->rows == NULL)
        goto out;
    for (size_t i = 0; i < a->nranks; i++)
        e->per_step_div[i] = steps_of(&a->ranks[i]);
    for (size_t t = 0; t < count && e->n < EVIDENCE_ROWS; t++) {
        const tl_name_row *row = &a->names.rows[top[t]];
        if (group == TL_GROUP_KERNELS &&
            tl_kernel_type_of(a->opt.kernel_classes, row->name, strlen(row->name), TL_CC_KERNEL) != TL_KT_COMPUTE)
            continue;
        e->rows[e->n++] = top[t];
    }
out:
    free(top);
}

static void evidence_rows_release(evidence_rows *e)
{
    free(e->rows);
    free(e->scratch);
    free(e->per_step_div);
}

/* The names whose per-step time grew most on rank index ri (top 5), each
 * against the median of the other ranks (as the step itself: with 2 ranks a
 * median over both would halve every excess). A name that takes longer per
 * step than the rank's step contains steps (Inferix's run_inference, a
 * block of 4 steps): it says nothing of where in the step the time went.
 * Nor does one called less than once a step on the rank: it runs outside the
 * steps (the pipeline sample's load_models and vae_decode, once a run, read
 * "+16.2 ms per step" beside a 23.3 ms excess) or not in every step. */
static void evidence(tl_aggregate *a, tl_straggler *s, size_t ri, const evidence_rows *e)
{
    const tl_rank_result *r = &a->ranks[ri];
    for (size_t t = 0; t < e->n && e->scratch != NULL; t++) {
        const tl_name_row *row = &a->names.rows[e->rows[t]];
        size_t n = 0;
        for (size_t i = 0; i < a->nranks; i++)
            if (i != ri)
                e->scratch[n++] = row->rank_total[i] / e->per_step_div[i];
        double mine = row->rank_total[ri] / e->per_step_div[ri];
        if (n == 0 || (r->step_median > 0 && mine > r->step_median) ||
            (double)row->rank_count[ri] < e->per_step_div[ri])
            continue;
        double delta = mine - tl_median_sort(e->scratch, n);
        if (!(delta > 0))
            continue;
        int pos = s->nitems;
        while (pos > 0 && s->items[pos - 1].delta_ns < delta)
            pos--;
        if (pos >= 5)
            continue;
        if (s->nitems == 5) {
            free(s->items[4].name);
            s->nitems--;
        }
        memmove(&s->items[pos + 1], &s->items[pos], (size_t)(s->nitems - pos) * sizeof s->items[0]);
        s->items[pos].name = strdup(row->name);
        s->items[pos].delta_ns = delta;
        s->nitems++;
    }
}

const char *tl_straggler_lead(const tl_straggler *s)
{
    return s->nitems > 0 && s->items[0].delta_ns >= 0.5 * (s->value - s->others_median) ? "most of it in"
                                                                                        : "the largest part in";
}

/* ---- slow compute ---------------------------------------------------------------- */

typedef struct candidate {
    size_t ri;
    double effect, noise;
    int slower;
} candidate;

static int by_effect(const void *x, const void *y)
{
    const candidate *a = x, *b = y;
    if (a->effect != b->effect)
        return a->effect > b->effect ? -1 : 1;
    return a->ri < b->ri ? -1 : a->ri > b->ri;
}

static const char *severity_of(double effect, int slower, int units)
{
    if (effect >= STRAGGLER_SEVERE_EFFECT && slower >= STRAGGLER_SEVERE_SHARE * units &&
        units >= STRAGGLER_SEVERE_STEPS)
        return "critical";
    if (effect >= STRAGGLER_WARN_EFFECT && 3 * slower >= 2 * units)
        return "warning";
    return "info";
}

static void compute_stragglers(tl_aggregate *a)
{
    size_t nr = a->nranks, total = 0, ncommon = 0, nout = 0;
    unsigned char *out = NULL; /* out[i]: rank index i left out, too few steps */
    int64_t *all = NULL, *common = NULL;
    double *val = NULL, *x = NULL, *tmp = NULL;
    ranked *col = NULL;
    candidate *cand = NULL;
    if (nr < 2) {
        set_note(a, "one rank: nothing to compare it with");
        return;
    }
    /* A rank with far fewer steps than the others (a truncated trace, one
     * without steps) is left out, so one cut-short rank among 64 does not
     * switch the comparison off for the job (issue 27): fewer than
     * STRAGGLER_MIN_STEPS or half the median rank's, while the median rank
     * has enough, and at most a quarter of the ranks. */
    out = calloc(nr, 1);
    double *counts = malloc(nr * sizeof *counts);
    if (out == NULL || counts == NULL) {
        free(counts);
        goto out;
    }
    for (size_t i = 0; i < nr; i++)
        counts[i] = (double)comparable(&a->ranks[i]);
    double med = tl_median_sort(counts, nr);
    free(counts);
    char left[200] = "";
    size_t llen = 0;
    if (med >= STRAGGLER_MIN_STEPS) {
        for (size_t i = 0; i < nr; i++) {
            double c = (double)comparable(&a->ranks[i]);
            /* a report's loop summary (steps counted, not timed one by one)
             * is left to rank-imbalance, which compares the means */
            int summarized = a->ranks[i].nsteps == 0 && a->ranks[i].step_count > 0;
            if (!summarized && (c < STRAGGLER_MIN_STEPS || c < 0.5 * med))
                out[i] = 1, nout++;
        }
        if (4 * nout > nr || nr - nout < 2) {
            memset(out, 0, nr);
            nout = 0;
        }
        for (size_t i = 0; i < nr && nout > 0; i++)
            if (out[i] && llen < sizeof left)
                llen += (size_t)snprintf(left + llen, sizeof left - llen, "%s%d (%zu)", llen ? ", " : "",
                                         a->ranks[i].rank, comparable(&a->ranks[i]));
    }
    /* Which metric: compute per step when every comparable step of every rank has it. */
    int use_compute = 1;
    size_t min_steps = SIZE_MAX;
    for (size_t i = 0; i < nr; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (out[i])
            continue;
        size_t c = comparable(r);
        if (c < min_steps)
            min_steps = c;
        for (size_t k = 0; k < r->nsteps; k++)
            if (!r->steps[k].partial && r->steps[k].compute_ns <= 0)
                use_compute = 0;
        total += c;
    }
    if (min_steps == 0) {
        set_note(a, "no steps: cannot compare ranks (no ProfilerStep or tally iteration on %s)",
                 total == 0 ? "any rank" : "some ranks");
        goto out;
    }
    /* Step numbers present on every rank (each rank's numbers made unique). */
    all = malloc(total * sizeof *all);
    if (all == NULL)
        goto out;
    size_t n = 0;
    for (size_t i = 0; i < nr; i++) {
        const tl_rank_result *r = &a->ranks[i];
        size_t first = n;
        for (size_t k = 0; k < r->nsteps && !out[i]; k++)
            if (!r->steps[k].partial)
                all[n++] = r->steps[k].number;
        qsort(all + first, n - first, sizeof *all, by_int64);
        size_t w = first;
        for (size_t k = first; k < n; k++)
            if (k == first || all[k] != all[w - 1])
                all[w++] = all[k];
        n = w;
    }
    qsort(all, n, sizeof *all, by_int64);
    common = malloc((n + 1) * sizeof *common);
    if (common == NULL)
        goto out;
    for (size_t k = 0; k < n;) {
        size_t e = k;
        while (e < n && all[e] == all[k])
            e++;
        if (e - k == nr - nout)
            common[ncommon++] = all[k];
        k = e;
    }
    if (ncommon < STRAGGLER_MIN_STEPS) {
        set_note(a, "%zu comparable step%s on every rank: need %d to compare ranks", ncommon, ncommon == 1 ? "" : "s",
                 STRAGGLER_MIN_STEPS);
        goto out;
    }
    size_t skip = ncommon > STRAGGLER_MAX_STEPS ? ncommon - STRAGGLER_MAX_STEPS : 0;
    size_t K = ncommon - skip;
    val = malloc(K * nr * sizeof *val);
    x = malloc(K * nr * sizeof *x);
    tmp = malloc((K > nr ? K : nr) * sizeof *tmp);
    col = malloc(nr * sizeof *col);
    cand = malloc(nr * sizeof *cand);
    if (val == NULL || x == NULL || tmp == NULL || col == NULL || cand == NULL)
        goto out;
    for (size_t i = 0; i < K * nr; i++)
        val[i] = NAN;
    for (size_t i = 0; i < nr; i++) {
        const tl_rank_result *r = &a->ranks[i];
        for (size_t k = 0; k < r->nsteps && !out[i]; k++) {
            if (r->steps[k].partial)
                continue;
            int64_t *hit = bsearch(&r->steps[k].number, common + skip, K, sizeof *common, by_int64);
            if (hit == NULL)
                continue;
            size_t c = (size_t)(hit - (common + skip));
            if (isnan(val[c * nr + i])) /* the first session's step of that number */
                val[c * nr + i] = (double)(use_compute ? r->steps[k].compute_ns : r->steps[k].dur_ns);
        }
    }
    a->steps_compared = (int)K;
    /* Per step: each rank against the median of the others. */
    size_t nin = nr - nout;
    for (size_t c = 0; c < K; c++) {
        size_t m = 0;
        for (size_t i = 0; i < nr; i++) {
            x[c * nr + i] = 0;
            if (!out[i])
                col[m++] = (ranked){ val[c * nr + i], (uint32_t)i };
        }
        qsort(col, nin, sizeof *col, by_ranked);
        for (size_t p = 0; p < nin; p++) {
            double md = median_without(col, nin, p);
            x[c * nr + col[p].rank] = md > 0 ? col[p].v / md - 1 : 0;
        }
    }
    /* Per rank: steps slower, median excess, and its noise: how much its
     * standing against the others moves from step to step (the standard
     * deviation of its per-step excess). A rank that is 11 % slower in every
     * step has none; ranks that trade places every step have a lot. The
     * ranks' noise is the median of theirs, so one unsteady rank does not
     * raise the bar for the others. */
    size_t ncand = 0;
    double *noise = malloc(nr * sizeof *noise);
    if (noise == NULL)
        goto out;
    for (size_t i = 0; i < nr; i++) {
        double sum = 0, ss = 0;
        for (size_t c = 0; c < K; c++)
            sum += x[c * nr + i];
        double mean = sum / (double)K;
        for (size_t c = 0; c < K; c++)
            ss += (x[c * nr + i] - mean) * (x[c * nr + i] - mean);
        noise[i] = K > 1 ? sqrt(ss / (double)(K - 1)) : 0;
    }
    size_t nn = 0;
    for (size_t i = 0; i < nr; i++)
        if (!out[i])
            tmp[nn++] = noise[i];
    double noise_all = tl_median_sort(tmp, nn);
    /* the standard error of a mean of K steps given that noise */
    double bar = NOISE_K * noise_all / sqrt((double)K);
    if (bar < STRAGGLER_FLOOR)
        bar = STRAGGLER_FLOOR;
    for (size_t i = 0; i < nr; i++) {
        int slower = 0;
        double sum = 0;
        for (size_t c = 0; c < K; c++) {
            tmp[c] = x[c * nr + i];
            slower += tmp[c] > STRAGGLER_FLOOR;
            sum += tmp[c];
        }
        /* the mean excess carries the evidence (its standard error is known);
         * the median and the count keep one huge step from deciding alone */
        double mean = sum / (double)K, median = tl_median_sort(tmp, K);
        if (!out[i] && 2 * (size_t)slower > K && median > STRAGGLER_FLOOR && mean > bar)
            cand[ncand++] = (candidate){ i, mean, noise_all, slower };
    }
    free(noise);
    if (ncand == 0) {
        set_note(a,
                 "no rank is slower than the others in most of %zu comparable steps by more than %s (the "
                 "larger of %s and two standard errors given the ranks' own noise of %s per step; %s)%s%s",
                 K, TL_PCT(100 * bar), TL_PCT_WHOLE(100 * STRAGGLER_FLOOR), TL_PCT(100 * noise_all),
                 use_compute ? "GPU compute per step" : "step time", nout ? "; left out for too few steps: rank " : "",
                 nout ? left : "");
        goto out;
    }
    qsort(cand, ncand, sizeof *cand, by_effect);
    evidence_rows ev;
    evidence_rows_build(a, &ev, use_compute ? TL_GROUP_KERNELS : TL_GROUP_SECTIONS);
    evidence_rows ev_ops;
    evidence_rows_build(a, &ev_ops, TL_GROUP_OPS);
    for (size_t k = 0; k < ncand && a->nstragglers < TL_MAX_STRAGGLERS; k++) {
        const candidate *cd = &cand[k];
        const tl_rank_result *r = &a->ranks[cd->ri];
        tl_straggler *s = &a->stragglers[a->nstragglers++];
        memset(s, 0, sizeof *s);
        s->rank = r->rank;
        s->kind = strdup("compute");
        s->units = (int)K;
        s->slower = cd->slower;
        s->noise_pct = 100 * cd->noise;
        s->delta_pct = 100 * cd->effect;
        s->severity = severity_of(cd->effect, cd->slower, (int)K);
        for (size_t c = 0; c < K; c++)
            tmp[c] = val[c * nr + cd->ri];
        s->value = tl_median_sort(tmp, K);
        for (size_t c = 0; c < K; c++) /* the others' median in each step */
            tmp[c] = val[c * nr + cd->ri] / (1 + x[c * nr + cd->ri]);
        s->others_median = tl_median_sort(tmp, K);
        a->ranks[cd->ri].straggler = 1;
        evidence(a, s, cd->ri, &ev);
        if (s->nitems == 0 && !use_compute)
            evidence(a, s, cd->ri, &ev_ops);
        char buf[700];
        int len = snprintf(buf, sizeof buf,
                           "rank %d: %s %s above the median of the other ranks on average, slower in %d of %zu "
                           "comparable steps (median %s vs %s; the ranks' own noise %s per step)",
                           s->rank, use_compute ? "GPU compute per step" : "step time", TL_PCT_WHOLE(s->delta_pct),
                           s->slower, K, TL_DUR(s->value), TL_DUR(s->others_median), TL_PCT(s->noise_pct));
        if (s->nitems > 0 && len > 0 && (size_t)len < sizeof buf)
            len +=
                snprintf(buf + len, sizeof buf - (size_t)len, "; %s %.160s%s (+%s per step)", tl_straggler_lead(s),
                         s->items[0].name, strlen(s->items[0].name) > 160 ? "..." : "", TL_DUR(s->items[0].delta_ns));
        if (nout > 0 && len > 0 && (size_t)len < sizeof buf)
            snprintf(buf + len, sizeof buf - (size_t)len, "; left out for too few steps: rank %s", left);
        s->summary = strdup(buf);
    }
    if (ncand > TL_MAX_STRAGGLERS)
        set_note(a, "%zu ranks are slower than the others; the %d slowest are named (TL_MAX_STRAGGLERS)", ncand,
                 TL_MAX_STRAGGLERS);
    else if (skip)
        set_note(a, "the last %d of %zu comparable steps were compared", STRAGGLER_MAX_STEPS, ncommon);
    evidence_rows_release(&ev);
    evidence_rows_release(&ev_ops);
out:
    free(out);
    free(all);
    free(common);
    free(val);
    free(x);
    free(tmp);
    free(col);
    free(cand);
}

/* ---- last arrival ------------------------------------------------------------------ */

/* The rank the others wait for in collectives (waits.c decides it, with its
 * evidence). When the slow-compute analysis names the same rank, the two
 * are one verdict: its summary gains the waiting it causes. 1 when a new
 * straggler was added. */
static int last_arrival(tl_aggregate *a)
{
    const tl_waits *w = &a->waits;
    if (w->straggler < 0 || a->nstragglers >= TL_MAX_STRAGGLERS)
        return 0;
    char waits[500];
    int others = (int)w->used - 1;
    int len = snprintf(waits, sizeof waits,
                       "rank %d arrives last to %llu of %llu matched collectives (p = %.2g) "
                       "and causes %s of the waiting",
                       w->straggler, (unsigned long long)w->straggler_last, (unsigned long long)w->matched,
                       w->straggler_p, TL_PCT_WHOLE(w->caused_share_pct));
    if (w->steps > 0 && isfinite(w->step_share_pct))
        snprintf(waits + len, sizeof waits - (size_t)len,
                 "; the other %d rank%s wait %s a step for it, %s of "
                 "their step",
                 others, others == 1 ? "" : "s", TL_DUR(w->caused_per_step_ns), TL_PCT(w->step_share_pct));
    else
        snprintf(waits + len, sizeof waits - (size_t)len, "; the other %d rank%s wait %s each time", others,
                 others == 1 ? "" : "s", TL_DUR(w->caused_per_step_ns));
    for (int i = 0; i < a->nstragglers; i++)
        if (a->stragglers[i].rank == w->straggler) {
            char *both = NULL;
            if (asprintf(&both, "%s; %s", a->stragglers[i].summary, waits) > 0) {
                free(a->stragglers[i].summary);
                a->stragglers[i].summary = both;
            }
            return 0;
        }
    tl_straggler *s = &a->stragglers[a->nstragglers++];
    memset(s, 0, sizeof *s);
    s->rank = w->straggler;
    s->kind = strdup("last_arrival");
    s->units = (int)w->matched;
    s->slower = (int)w->straggler_last;
    s->value = w->caused_per_step_ns;
    s->others_median = isfinite(w->others_step_ns) ? w->others_step_ns : 0;
    s->delta_pct =
        isfinite(w->step_share_pct) ? w->step_share_pct : 100.0 * (double)w->straggler_last / (double)w->matched;
    double share = (double)w->straggler_last / (double)w->matched;
    if (w->caused_share_pct / 100 > share)
        share = w->caused_share_pct / 100;
    s->severity = share >= STRAGGLER_SEVERE_SHARE && w->matched >= STRAGGLER_SEVERE_STEPS &&
                          (!isfinite(w->step_share_pct) || w->step_share_pct >= 10)
                      ? "critical"
                      : "warning";
    a->ranks[w->straggler_ri].straggler = 1;
    s->summary = strdup(waits);
    for (int k = 0; k < w->ncause && k < 5; k++) {
        s->items[k].name = strdup(w->cause[k].name);
        s->items[k].delta_ns = w->cause[k].delta_ns;
        s->nitems += s->items[k].name != NULL;
    }
    return 1;
}

static void drop_straggler(tl_aggregate *a, int i)
{
    tl_straggler *s = &a->stragglers[i];
    for (size_t r = 0; r < a->nranks; r++)
        if (a->ranks[r].rank == s->rank)
            a->ranks[r].straggler = 0;
    free(s->kind);
    free(s->summary);
    for (int k = 0; k < s->nitems; k++)
        free(s->items[k].name);
    memmove(s, s + 1, (size_t)(a->nstragglers - i - 1) * sizeof *s);
    a->nstragglers--;
}

static int named_as(const tl_aggregate *a, int rank, const char *kind)
{
    for (int i = 0; i < a->nstragglers; i++)
        if (a->stragglers[i].rank == rank && strcmp(a->stragglers[i].kind, kind) == 0)
            return 1;
    return 0;
}

/* Slow compute and last arrival must tell one story. */
static void reconcile(tl_aggregate *a, int ncompute)
{
    int nlast = a->nstragglers - ncompute;
    if (ncompute == 0 || nlast == 0)
        return;
    char dropped[200] = "";
    size_t len = 0;
    int agree = 0;
    for (int i = 0; i < a->nstragglers; i++) {
        const char *other = strcmp(a->stragglers[i].kind, "compute") == 0 ? "last_arrival" : "compute";
        agree += named_as(a, a->stragglers[i].rank, other);
    }
    for (int i = a->nstragglers - 1; i >= 0; i--) {
        const char *other = strcmp(a->stragglers[i].kind, "compute") == 0 ? "last_arrival" : "compute";
        if (agree && named_as(a, a->stragglers[i].rank, other))
            continue;
        if (len < sizeof dropped)
            len += (size_t)snprintf(dropped + len, sizeof dropped - len, "%s%d (%s)", len ? ", " : "",
                                    a->stragglers[i].rank,
                                    strcmp(a->stragglers[i].kind, "compute") == 0 ? "slow compute" : "last arrival");
        drop_straggler(a, i);
    }
    if (agree)
        set_note(a,
                 "the per-step compute and the collective arrival order disagree on rank %s: only the ranks both "
                 "name are stragglers",
                 dropped);
    else
        set_note(a,
                 "the per-step compute and the collective arrival order point to different ranks (%s): the "
                 "evidence disagrees, no straggler named",
                 dropped);
}

void tl_find_stragglers(tl_aggregate *a)
{
    compute_stragglers(a);
    int ncompute = a->nstragglers;
    last_arrival(a);
    reconcile(a, ncompute);
    if (a->nstragglers > 0) {
        free(a->straggler_note);
        a->straggler_note = NULL;
    }
}
