/*
 * stats.h - per-name statistics shared by the collector and the tally command.
 *
 * tl_dur_stat keeps exact count/total/min/max, Welford's running mean and M2,
 * a log-bucket histogram (median, p95 within 1 %) and a bounded list of raw
 * samples. Values are unsigned integers in any unit (the collector uses clock
 * ticks, the command nanoseconds). tl_value_stat does the same for counters
 * (doubles, with the last value by time). Merges use Chan et al.'s pairwise
 * update, so a merged variance equals the variance of all values.
 */
#ifndef TALLY_STATS_H
#define TALLY_STATS_H

#include <stdint.h>

#include "histogram.h"

typedef struct tl_dur_stat {
    uint64_t count, total, min, max;
    double mean, m2;
    tl_hist hist;
    uint64_t *samples;
    uint32_t nsamples, samples_cap;
    uint64_t samples_dropped;
    /* Beyond the bound: 1 keeps the first values in order (the collector:
     * a report's step table reads its main iteration's samples as steps);
     * 0 keeps a uniform random sample of every value (reservoir sampling:
     * what tests and medians need, tally's analysis). Merges follow dst. */
    uint8_t keep_first;
} tl_dur_stat;

void tl_dur_stat_add(tl_dur_stat *s, uint64_t v, long max_samples);
/* Merge src into dst. Samples: with dst->keep_first appended up to
 * max_samples; else all of both when they fit, or a sample of both, each
 * side in proportion to the values it stands for. */
void tl_dur_stat_merge(tl_dur_stat *dst, const tl_dur_stat *src, long max_samples);
/* Sample standard deviation (n - 1); 0 for fewer than two values. */
double tl_dur_stat_std(const tl_dur_stat *s);
/* Quantile q from the histogram, clamped to [min, max]. */
double tl_dur_stat_quantile(const tl_dur_stat *s, double q);
void tl_dur_stat_release(tl_dur_stat *s);

typedef struct tl_value_stat {
    uint64_t count;
    double sum, min, max, mean, m2, last;
    uint64_t last_ticks;
} tl_value_stat;

void tl_value_stat_add(tl_value_stat *s, double v, uint64_t ticks);
void tl_value_stat_merge(tl_value_stat *dst, const tl_value_stat *src);
/* Sample standard deviation (n - 1); 0 for fewer than two values. */
double tl_value_stat_std(const tl_value_stat *s);

#endif
