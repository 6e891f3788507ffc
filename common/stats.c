/*
 * stats.c - per-name statistics: exact count/total/min/max, Welford's running
 * mean and variance, a log-bucket histogram for the median and p95, and a
 * bounded list of raw samples (tally compare tests significance on them).
 *
 * Merging per-thread statistics uses Chan, Golub and LeVeque's pairwise
 * update, so the merged variance equals the variance of all values.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A pseudo-random 64-bit number from x (splitmix64's finalizer):
 * deterministic, so the same input keeps the same samples. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A uniform index in [0, n) from x (Lemire's multiply-shift, no division). */
static uint64_t below(uint64_t x, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)mix64(x) * n) >> 64);
}

/* Keep v among the samples. Beyond max_samples the samples are a uniform
 * random sample of every value so far (reservoir sampling, Vitter's
 * algorithm R: the i-th value replaces a random one of the k with chance
 * k / i). The first k in file order would describe the first thread or the
 * first steps only: a Kineto trace lists a thread's events together, and a
 * name with 2900 calls on two threads had its median from 606 forward-thread
 * calls at 6 us and 394 of 2292 backward-thread calls at 3 us. With
 * s->keep_first (the collector), the first ones. s->count is this value's
 * number (tl_dur_stat_add counts first). */
static void samples_push(tl_dur_stat *s, uint64_t v, long max_samples)
{
    if (max_samples <= 0) {
        s->samples_dropped++;
        return;
    }
    if (s->nsamples >= (uint64_t)max_samples) {
        s->samples_dropped++;
        if (s->keep_first)
            return;
        uint64_t j = below(s->count ^ (s->total << 17), s->count);
        if (j < s->nsamples)
            s->samples[j] = v;
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

/* Take k of the n samples of v[0, n) at random into out (a partial
 * Fisher-Yates shuffle of v, which it reorders). */
static void draw(uint64_t *v, uint32_t n, uint32_t k, uint64_t seed, uint64_t *out)
{
    for (uint32_t i = 0; i < k && i < n; i++) {
        uint32_t j = i + (uint32_t)below(seed + i, n - i);
        uint64_t t = v[i];
        v[i] = v[j];
        v[j] = t;
        out[i] = v[i];
    }
}

/* dst's samples (of dst_count values) and src's (of src->count) as one
 * sample of both: when every value of both fits, all of them; otherwise as
 * many as fit, each side's share drawn in proportion to the values it stands
 * for (a side of 100 000 calls and one of 10 keep their weights), each from
 * its own samples at random. */
static void merge_samples(tl_dur_stat *dst, const tl_dur_stat *src, uint64_t dst_count, long max_samples)
{
    if (src->nsamples == 0 || max_samples <= 0)
        return;
    int complete = dst->nsamples == dst_count && src->nsamples == src->count;
    if (complete && (uint64_t)dst->nsamples + src->nsamples <= (uint64_t)max_samples) {
        for (uint32_t i = 0; i < src->nsamples; i++)
            samples_push(dst, src->samples[i], max_samples);
        return;
    }
    uint64_t total = dst_count + src->count;
    uint64_t want = total < (uint64_t)max_samples ? total : (uint64_t)max_samples;
    uint64_t from_src = (uint64_t)((double)want * (double)src->count / (double)total + 0.5);
    if (from_src > src->nsamples)
        from_src = src->nsamples;
    uint64_t from_dst = want - from_src;
    if (from_dst > dst->nsamples) {
        from_dst = dst->nsamples;
        from_src = want - from_dst < src->nsamples ? want - from_dst : src->nsamples;
    }
    uint64_t *out = malloc((size_t)(from_dst + from_src + 1) * sizeof *out);
    uint64_t *copy = malloc(((size_t)src->nsamples + 1) * sizeof *copy);
    if (out == NULL || copy == NULL) {
        free(out);
        free(copy);
        return; /* keep dst's: a sample still, of its side only */
    }
    memcpy(copy, src->samples, src->nsamples * sizeof *copy);
    draw(dst->samples, dst->nsamples, (uint32_t)from_dst, total, out);
    draw(copy, src->nsamples, (uint32_t)from_src, total ^ 0x5bd1e995u, out + from_dst);
    free(copy);
    uint64_t n = from_dst + from_src;
    if (n > dst->samples_cap) {
        uint64_t *p = realloc(dst->samples, n * sizeof *p);
        if (p == NULL) {
            free(out);
            return;
        }
        dst->samples = p;
        dst->samples_cap = (uint32_t)n;
    }
    memcpy(dst->samples, out, n * sizeof *out);
    dst->nsamples = (uint32_t)n;
    free(out);
}

void tl_dur_stat_merge(tl_dur_stat *dst, const tl_dur_stat *src, long max_samples)
{
    if (src->count == 0)
        return;
    uint64_t dst_count = dst->count;
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
    /* dropped: each side's, and those the merge did not keep */
    uint64_t had = (uint64_t)dst->nsamples + src->nsamples, dropped = dst->samples_dropped + src->samples_dropped;
    if (dst->keep_first)
        for (uint32_t i = 0; i < src->nsamples; i++)
            samples_push(dst, src->samples[i], max_samples);
    else
        merge_samples(dst, src, dst_count, max_samples);
    dst->samples_dropped = dropped + (had - dst->nsamples);
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

/* The range and moments merge as in tl_dur_stat_merge (chan_merge is the one
 * shared step), kept apart on purpose: there the values are integer ns with a
 * histogram and samples, here doubles with a last value; a macro over both
 * types would hide from the compiler which one it checks. */
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
