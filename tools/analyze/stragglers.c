/*
 * stragglers.c - which rank holds the others back, and why.
 *
 * Two signals, both with their evidence:
 *  - compute: a rank whose compute per step (the union of its compute kernels
 *    launched in each step, median over steps) is an outlier against the other
 *    ranks; without GPU data, its step time (or, without steps, its wall span).
 *    The evidence is the per-step delta against the median of the others and
 *    the kernels (or sections) whose per-step time grew the most.
 *  - last arrival: in a collective, every rank waits in its communication
 *    kernel until the last one arrives, so the last rank's kernel is the
 *    shortest. Matching the i-th collective of each name across ranks (NCCL
 *    issues them in the same order everywhere), the rank that is shortest most
 *    often, by a clear margin, is the one the others wait for.
 *
 * An outlier is more than STRAGGLER_MIN_DELTA above the median of the other
 * ranks and more than 3 scaled MADs above it when there are enough ranks for
 * a MAD to mean something; with two ranks only the relative margin counts.
 */
#define _GNU_SOURCE
#include "aggregate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRAGGLER_MIN_DELTA 0.10   /* 10 % above the others' median */
#define LAST_ARRIVAL_MIN_SHARE 0.5 /* last in at least half of the collectives */

/* The per-step metric of a rank used to find compute stragglers, and its unit. */
static double rank_metric(const tl_rank_result *r, int *kind)
{
    if (isfinite(r->compute_per_step) && r->compute_per_step > 0) {
        *kind = 0;
        return r->compute_per_step;
    }
    if (isfinite(r->step_median) && r->step_median > 0) {
        *kind = 1;
        return r->step_median;
    }
    *kind = 2;
    return r->span_ns > 0 ? (double)r->span_ns : NAN;
}

/* The steps of a rank: its step samples, else the count of its main loop (a
 * report with a loop summary but no samples, as rank_steps uses for the step
 * time), else 1. Dividing such a rank's totals by 1 compared whole-run totals
 * with the other ranks' per-step times. */
static double steps_of(const tl_aggregate *a, const tl_rank_result *r)
{
    if (r->nsteps > 0)
        return (double)r->nsteps;
    const tl_sname *loop = NULL;
    for (size_t k = 0; k < r->nsessions; k++) {
        const tl_session *s = &a->sessions[r->sessions[k]];
        for (size_t i = 0; i < s->nnames; i++)
            if (s->names[i].group == TL_GROUP_ITERATIONS && (loop == NULL || s->names[i].d.total > loop->d.total))
                loop = &s->names[i];
    }
    return loop != NULL && loop->d.count > 0 ? (double)loop->d.count : 1;
}

/* Per-step time of a (group, name) row on a rank. */
static double per_step(const tl_aggregate *a, const tl_name_row *row, int ri)
{
    return row->rank_total[ri] / steps_of(a, &a->ranks[ri]);
}

/* The names whose per-step time grew most on rank index ri. For kernels only
 * compute kernels count: a communication kernel's time is mostly waiting for
 * the other ranks, so it is a symptom, not a cause. */
static void evidence(tl_aggregate *a, tl_straggler *s, int ri, int group)
{
    const tl_name_table *t = &a->names;
    double *others = malloc((a->nranks + 1) * sizeof *others);
    if (others == NULL)
        return;
    for (size_t i = 0; i < t->n; i++) {
        const tl_name_row *row = &t->rows[i];
        if (row->group != group)
            continue;
        if (group == TL_GROUP_KERNELS && tl_kernel_type_of(row->name, strlen(row->name), TL_CC_KERNEL) != TL_KT_COMPUTE)
            continue;
        size_t n = 0;
        for (size_t k = 0; k < a->nranks; k++)
            if ((int)k != ri)
                others[n++] = per_step(a, row, (int)k);
        double delta = per_step(a, row, ri) - tl_median_sort(others, n);
        if (!(delta > 0))
            continue;
        /* keep the top 5 by delta */
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
    free(others);
}

static void compute_stragglers(tl_aggregate *a)
{
    if (a->nranks < 2)
        return;
    double *v = malloc(a->nranks * sizeof *v), *others = malloc(a->nranks * sizeof *others);
    double *dev = malloc(a->nranks * sizeof *dev);
    if (v == NULL || others == NULL || dev == NULL)
        goto out;
    int kind = 0, k0;
    for (size_t i = 0; i < a->nranks; i++) {
        v[i] = rank_metric(&a->ranks[i], &k0);
        if (i == 0)
            kind = k0;
        else if (k0 != kind)
            goto out; /* ranks measured differently: no fair comparison */
    }
    for (size_t i = 0; i < a->nranks && a->nstragglers < TL_MAX_STRAGGLERS; i++) {
        if (!isfinite(v[i]))
            continue;
        size_t n = 0;
        for (size_t k = 0; k < a->nranks; k++)
            if (k != i && isfinite(v[k]))
                others[n++] = v[k];
        if (n == 0)
            continue;
        double med = tl_median_sort(others, n);
        for (size_t k = 0; k < n; k++)
            dev[k] = fabs(others[k] - med);
        double mad = 1.4826 * tl_median_sort(dev, n); /* scaled: the std of a normal sample */
        double delta = v[i] - med;
        int outlier = med > 0 && delta > STRAGGLER_MIN_DELTA * med && (n < 4 || delta > 3 * mad);
        if (!outlier)
            continue;
        tl_straggler *s = &a->stragglers[a->nstragglers++];
        memset(s, 0, sizeof *s);
        s->rank = a->ranks[i].rank;
        s->kind = strdup("compute");
        s->value = v[i];
        s->others_median = med;
        s->delta_pct = 100 * delta / med;
        a->ranks[i].straggler = 1;
        evidence(a, s, (int)i, kind == 0 ? TL_GROUP_KERNELS : TL_GROUP_SECTIONS);
        if (s->nitems == 0 && kind != 0)
            evidence(a, s, (int)i, TL_GROUP_OPS);
        static const char *what[] = { "compute per step", "step time", "wall time" };
        char buf[512];
        int len = snprintf(buf, sizeof buf, "rank %d: %s %.3f ms vs %.3f ms median of the other ranks (+%.1f%%)",
                           s->rank, what[kind], v[i] / 1e6, med / 1e6, s->delta_pct);
        if (s->nitems > 0 && len > 0 && (size_t)len < sizeof buf)
            snprintf(buf + len, sizeof buf - (size_t)len, "; most of it in %.160s%s (+%.3f ms per step)",
                     s->items[0].name, strlen(s->items[0].name) > 160 ? "..." : "", s->items[0].delta_ns / 1e6);
        s->summary = strdup(buf);
    }
out:
    free(v);
    free(others);
    free(dev);
}

/* The rank that the others wait for in collectives. */
static void last_arrival(tl_aggregate *a)
{
    if (a->nranks < 2)
        return;
    /* For each rank, its collectives by (kernel name, occurrence). */
    size_t nr = a->nranks;
    uint64_t *last = calloc(nr, sizeof *last);
    double *wait = calloc(nr, sizeof *wait);
    if (last == NULL || wait == NULL)
        goto out;
    uint64_t matched = 0;
    /* The ranks' first sessions carry their collectives in launch order. */
    const tl_session **ss = calloc(nr, sizeof *ss);
    if (ss == NULL)
        goto out;
    for (size_t i = 0; i < nr; i++)
        ss[i] = &a->sessions[a->ranks[i].sessions[0]];
    /* Walk collectives of rank 0's kernels in order; for each, find the same
     * occurrence of the same kernel name on every other rank. */
    const tl_session *base = ss[0];
    size_t *cursor = calloc(nr, sizeof *cursor);
    if (cursor == NULL) {
        free(ss);
        goto out;
    }
    for (size_t c = 0; c < base->ncolls; c++) {
        const char *name = base->kernels[base->colls[c].kernel].name;
        int64_t best = INT64_MAX, second = INT64_MAX;
        size_t best_rank = 0, found = 0;
        int64_t durs_max = 0;
        for (size_t i = 0; i < nr; i++) {
            const tl_session *s = ss[i];
            /* advance this rank's cursor to its next collective of that name */
            size_t k = cursor[i];
            while (k < s->ncolls && strcmp(s->kernels[s->colls[k].kernel].name, name) != 0)
                k++;
            if (k >= s->ncolls)
                break;
            cursor[i] = k + 1;
            int64_t d = s->colls[k].dur_ns;
            found++;
            if (d > durs_max)
                durs_max = d;
            if (d < best) {
                second = best;
                best = d;
                best_rank = i;
            } else if (d < second) {
                second = d;
            }
        }
        if (found != nr)
            break; /* the sequences diverge: stop matching */
        matched++;
        /* A clear last arrival: the shortest is clearly shorter than the rest. */
        if (second > 0 && (double)best < 0.8 * (double)second) {
            last[best_rank]++;
            wait[best_rank] += (double)(durs_max - best);
        }
    }
    free(cursor);
    free(ss);
    for (size_t i = 0; i < nr && matched >= 4 && a->nstragglers < TL_MAX_STRAGGLERS; i++) {
        double share = (double)last[i] / (double)matched;
        if (share < LAST_ARRIVAL_MIN_SHARE)
            continue;
        tl_straggler *s = &a->stragglers[a->nstragglers++];
        memset(s, 0, sizeof *s);
        s->rank = a->ranks[i].rank;
        s->kind = strdup("last_arrival");
        s->value = 100 * share;
        s->others_median = (double)matched;
        s->delta_pct = 100 * share;
        a->ranks[i].straggler = 1;
        char buf[400];
        snprintf(buf, sizeof buf,
                 "rank %d arrives last to %.0f%% of %llu collectives: its communication kernels are the shortest "
                 "while the other ranks wait (%.3f ms of waiting per collective on average)",
                 s->rank, 100 * share, (unsigned long long)matched, last[i] ? wait[i] / (double)last[i] / 1e6 : 0.0);
        s->summary = strdup(buf);
        evidence(a, s, (int)i, TL_GROUP_KERNELS);
    }
out:
    free(last);
    free(wait);
}

void tl_find_stragglers(tl_aggregate *a)
{
    compute_stragglers(a);
    last_arrival(a);
}
