/*
 * stats.c - per-name statistics: exact count/total/min/max, Welford's running
 * mean and variance, a log-bucket histogram for the median and p95, and a
 * bounded list of raw samples (tally compare tests significance on them).
 *
 * Merging per-thread statistics uses Chan, Golub and LeVeque's pairwise
 * update, so the merged variance equals the variance of all values.
 */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void samples_push(tl_dur_stat *s, uint64_t v, long max_samples)
{
    if (s->nsamples >= (uint64_t)max_samples) {
        s->samples_dropped++;
        return;
    }
    if (s->nsamples == s->samples_cap) { /* not tl_array_grow: the last block is clamped to max_samples */
        uint32_t cap = s->samples_cap ? s->samples_cap * 2 : 16;
        if ((long)cap > max_samples)
            cap = (uint32_t)max_samples;
        uint64_t *p = realloc(s->samples, cap * sizeof *p);
        if (p == NULL) {
            s->samples_dropped++;
            return;
        }
        s->samples = p;
        s->samples_cap = cap;
    }
    s->samples[s->nsamples++] = v;
}

/* Chan, Golub and LeVeque: the mean and M2 of two sets from theirs. */
static void chan_merge(double *mean, double *m2, double na, double mean_b, double m2_b, double nb)
{
    double n = na + nb, delta = mean_b - *mean;
    *mean += delta * nb / n;
    *m2 += m2_b + delta * delta * na * nb / n;
}

void tl_dur_stat_add(tl_dur_stat *s, uint64_t ticks, long max_samples)
{
    s->count++;
    s->total += ticks;
    if (s->count == 1 || ticks < s->min)
        s->min = ticks;
    if (ticks > s->max)
        s->max = ticks;
    double x = (double)ticks;
    double delta = x - s->mean;
    s->mean += delta / (double)s->count;
    s->m2 += delta * (x - s->mean);
    tl_hist_add(&s->hist, ticks);
    samples_push(s, ticks, max_samples);
}

void tl_dur_stat_merge(tl_dur_stat *dst, const tl_dur_stat *src, long max_samples)
{
    if (src->count == 0)
        return;
    if (dst->count == 0) {
        dst->min = src->min;
        dst->max = src->max;
    } else {
        if (src->min < dst->min)
            dst->min = src->min;
        if (src->max > dst->max)
            dst->max = src->max;
    }
    chan_merge(&dst->mean, &dst->m2, (double)dst->count, src->mean, src->m2, (double)src->count);
    dst->count += src->count;
    dst->total += src->total;
    tl_hist_merge(&dst->hist, &src->hist);
    for (uint32_t i = 0; i < src->nsamples; i++)
        samples_push(dst, src->samples[i], max_samples);
    dst->samples_dropped += src->samples_dropped;
}

void tl_dur_stat_release(tl_dur_stat *s)
{
    tl_hist_release(&s->hist);
    free(s->samples);
    memset(s, 0, sizeof *s);
}

void tl_value_stat_add(tl_value_stat *s, double v, uint64_t ticks)
{
    s->count++;
    s->sum += v;
    if (s->count == 1 || v < s->min)
        s->min = v;
    if (s->count == 1 || v > s->max)
        s->max = v;
    double delta = v - s->mean;
    s->mean += delta / (double)s->count;
    s->m2 += delta * (v - s->mean);
    if (ticks >= s->last_ticks) {
        s->last = v;
        s->last_ticks = ticks;
    }
}

void tl_value_stat_merge(tl_value_stat *dst, const tl_value_stat *src)
{
    if (src->count == 0)
        return;
    if (dst->count == 0) {
        *dst = *src;
        return;
    }
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    chan_merge(&dst->mean, &dst->m2, (double)dst->count, src->mean, src->m2, (double)src->count);
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->last_ticks >= dst->last_ticks) {
        dst->last = src->last;
        dst->last_ticks = src->last_ticks;
    }
}

/* The sample standard deviation (n - 1) from Welford's M2: one formula for both stats. */
static double sample_std(double m2, uint64_t n)
{
    return n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
}

double tl_dur_stat_std(const tl_dur_stat *s)
{
    return sample_std(s->m2, s->count);
}

double tl_value_stat_std(const tl_value_stat *s)
{
    return sample_std(s->m2, s->count);
}

double tl_dur_stat_quantile(const tl_dur_stat *s, double q)
{
    double v = tl_hist_quantile(&s->hist, s->count, q);
    return fmin(fmax(v, (double)s->min), (double)s->max);
}
