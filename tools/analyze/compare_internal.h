/*
 * compare_internal.h - what compare.c, compare_levels.c and
 * compare_verdicts.c share (internal to analyze/): the rows' thresholds, the
 * pooled judgment of the rank-level rows, and the verdicts.
 */
#ifndef TALLY_COMPARE_INTERNAL_H
#define TALLY_COMPARE_INTERNAL_H

#include "compare.h"

/* The threshold of a row's group, in %: peak memory has its own. */
double tl_cmp_row_limit(const tl_cmp_options *o, int group);
/* The candidate's scale of "faster by more than the threshold" (a fraction):
 * 1 - threshold; from a threshold of 100 % on nothing can be that much
 * faster, and a scale near 0 makes every candidate sample larger. */
double tl_cmp_faster_scale(double limit);
/* Mean and sum of squared deviations of v[0, n) (Welford); NaN when n is 0. */
void tl_cmp_mean_ss(const double *v, size_t n, double *mean, double *ss);

/* The rank-level rows (TL_TEST_RANK_T) judged again with the pooled,
 * moderated variance of the rows of like noise: p_up, p_down, p_value and
 * the levels' figures of each such row. 0, or -1 out of memory. */
int tl_cmp_levels_pooled(tl_compare *c);

/* Every row's verdict from its test (compare_verdicts.c): thresholds, the
 * correction over the tested rows, untested large changes, run shares,
 * materiality and call mix. 0, or -1 out of memory. */
int tl_cmp_decide(tl_compare *c);

#endif
