/*
 * rank_pick.c - the ranks a bounded per-rank table or chart lists
 * (rank_pick.h). The percentiles are of the ranks' mean step time, the
 * quantity the step tables and the step chart show; ranks without steps are
 * only ever in the sample.
 */
#include "rank_pick.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const double quantiles[] = { 0.10, 0.25, 0.50, 0.75, 0.90 };

typedef struct keyed {
    double v;
    size_t i;
} keyed;

static int by_value(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static void take(unsigned char *m, size_t i, unsigned char why, size_t max, size_t *n)
{
    if (m[i]) {
        m[i] |= why & 0x0e; /* a flag joins; the first percentile stays */
        return;
    }
    if (*n < max)
        m[i] = why, (*n)++;
}

unsigned char *tl_rank_pick(const tl_aggregate *a, size_t max, size_t *n)
{
    size_t nr = a->nranks, m = 0;
    unsigned char *why = calloc(nr + 1, 1);
    keyed *k = calloc(nr + 1, sizeof *k);
    *n = 0;
    if (why == NULL || k == NULL) {
        free(why);
        free(k);
        return NULL;
    }
    if (nr <= max) {
        for (size_t i = 0; i < nr; i++)
            why[i] = TL_PICK_ALL;
        *n = nr;
        free(k);
        return why;
    }
    for (size_t i = 0; i < nr; i++) {
        const tl_rank_result *r = &a->ranks[i];
        if (r->straggler || r->rank == a->waits.straggler)
            take(why, i, TL_PICK_STRAGGLER, max, n);
        if (isfinite(r->step_mean))
            k[m++] = (keyed){ r->step_mean, i };
    }
    if (m > 0) {
        qsort(k, m, sizeof *k, by_value);
        take(why, k[0].i, TL_PICK_LEAST, max, n);
        take(why, k[m - 1].i, TL_PICK_MOST, max, n);
        for (size_t q = 0; q < sizeof quantiles / sizeof quantiles[0]; q++) {
            size_t at = (size_t)llround(quantiles[q] * (double)(m - 1));
            take(why, k[at].i, (unsigned char)((q + 1) << 4), max, n);
        }
    }
    /* an even sample of the rest, deterministic: every (nr / room)-th rank */
    size_t room = max > *n ? max - *n : 0;
    for (size_t j = 0; j < room; j++) {
        size_t i = (size_t)((double)j * (double)nr / (double)room);
        while (i < nr && why[i])
            i++;
        if (i < nr)
            why[i] = TL_PICK_SAMPLE, (*n)++;
    }
    free(k);
    return why;
}

const char *tl_rank_pick_tag(unsigned char why)
{
    static const char *q[] = { "", "p10", "p25", "median", "p75", "p90", "", "" };
    if (why & TL_PICK_LEAST)
        return "min";
    if (why & TL_PICK_MOST)
        return "max";
    return q[TL_PICK_QUANTILE(why)];
}

void tl_rank_pick_note(char *buf, size_t len, size_t listed, size_t total)
{
    if (len > 0)
        buf[0] = '\0';
    if (listed >= total)
        return;
    snprintf(buf, len,
             "%zu of %zu ranks listed: the stragglers, the shortest and longest mean step (min, max), the ranks at "
             "its 10th, 25th, 50th, 75th and 90th percentile (p10 ... p90) and an even sample of the rest; %zu left "
             "out (every rank is in the JSON aggregate)",
             listed, total, total - listed);
}
