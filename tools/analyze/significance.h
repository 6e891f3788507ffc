/*
 * significance.h - the statistics `tally compare` rests on: the Mann–Whitney
 * U test (two-sided and one-sided) and its stratified sum over ranks, the
 * exact permutation test of trimmed means, Holm and Benjamini–Hochberg,
 * Student's t, a distribution-free confidence interval of the median, and
 * the geometric mean of ratios.
 *
 * The one idea: the tests of samples assume no distribution. Durations are
 * skewed, quantized and have outliers (a GC pause, a clock change), so the
 * tests compare ranks, or trimmed means against every split of the same
 * values, and the interval of the median comes from order statistics, not
 * from a standard error. (Student's t serves the rank-level test, over the
 * ranks' log ratios: compare.c, compare_levels.c.)
 *
 * All functions are pure (no global state) and thread-safe. Values are
 * doubles in any unit; the compare stage passes nanoseconds.
 */
#ifndef TALLY_SIGNIFICANCE_H
#define TALLY_SIGNIFICANCE_H

#include <stddef.h>

/* Samples at most this large on both sides (and without ties) get the exact
 * null distribution; larger ones the normal approximation. */
#define TL_SIGNIF_EXACT_MAX 20

/* The result of a Mann–Whitney U test of x against y. */
typedef struct tl_mwu {
    double u;         /* U of x: the number of pairs (x_i, y_j) with x_i > y_j, ties counting ½ */
    double z;         /* the normal approximation's z (with continuity correction); NaN when exact */
    double p;         /* two-sided p-value in [0, 1]; NaN when a side is empty */
    double p_greater; /* one-sided p: x stochastically larger than y (large U); NaN when a side is empty */
    double p_less;    /* one-sided p: x stochastically smaller (small U) */
    double var;       /* the variance of U under the null, tie-corrected */
    size_t nx, ny;    /* the sample sizes */
    int exact;        /* p from the exact null distribution */
    int ties;         /* some value occurs more than once in the pooled sample */
} tl_mwu;

/* Mann–Whitney U test of x (nx values) against y (ny values), two-sided and
 * both one-sided alternatives.
 *
 * When nx, ny <= TL_SIGNIF_EXACT_MAX and there are no ties, p is exact:
 * p_greater = P(U >= u), p_less = P(U <= u) and p = min(1, 2 min(p_less,
 * p_greater)) under the null distribution of U (tl_signif_mwu_exact_counts).
 * Otherwise they come from the normal approximation with the tie correction
 * and a continuity correction of ½:
 *   mu = nx ny / 2,  sigma² = nx ny / 12 · ((n + 1) − Σ(t³ − t) / (n (n − 1))),
 *   z = (|u − mu| − ½) / sigma,  p = min(1, erfc(z / √2)),
 *   p_greater = ½ erfc(((u − mu) − ½) / (sigma √2)), p_less likewise with mu − u,
 * with n = nx + ny and t the size of each group of tied values; every p is 1
 * when every value is the same. These are the definitions of
 * scipy.stats.mannwhitneyu (method "exact" and "asymptotic",
 * use_continuity=True, alternative "two-sided", "greater", "less").
 *
 * The inputs are not modified. Cost: O(n log n) time and O(n) memory (plus
 * O(nx ny · ny) for the exact case). Returns 0, or -1 when out of memory
 * (out then holds p = NaN). An empty side gives p = NaN and returns 0. */
int tl_signif_mwu(const double *x, size_t nx, const double *y, size_t ny, tl_mwu *out);

/* The exact null distribution of U for sample sizes n1, n2 (at most
 * TL_SIGNIF_EXACT_MAX each): fills count[u], u = 0 .. n1 n2, with the number
 * of the C(n1 + n2, n1) equally likely arrangements whose U is u. Dynamic
 * programming over Mann and Whitney's (1947) recurrence
 *   c(u; m, n) = c(u − n; m − 1, n) + c(u; m, n − 1).
 * count must hold n1 n2 + 1 doubles (the counts are exact integers: at most
 * C(40, 20) < 2^53). Returns 0, or -1 for sizes out of range or no memory. */
int tl_signif_mwu_exact_counts(size_t n1, size_t n2, double *count);

/* The stratified Mann–Whitney test: the sum S of the U statistics of n
 * independent strata (each the U test of one rank's samples; a stratum of one
 * value a side is a sign), tested against the sum of their null
 * distributions, so that a shift in the same direction in every stratum adds
 * up while strata never mix (a rank that is slower than the others is not a
 * change). One-sided p-values: *p_greater = P(S >= s), *p_less = P(S <= s).
 * Exact (the convolution of the strata's exact null distributions) when every
 * stratum is exact and Σ nx ny <= TL_SIGNIF_STRATA_EXACT_MAX; else the normal
 * approximation with mean Σ nx ny / 2, variance Σ var and a continuity
 * correction of ½. *floor (when not NULL) gets the smallest one-sided p the
 * strata could give: Π 1 / C(nx + ny, nx). Strata with a NaN p (an empty
 * side) are skipped. Returns 0, or -1 when out of memory (p-values NaN).
 * Cost: O((Σ nx ny)²) for the exact case. */
#define TL_SIGNIF_STRATA_EXACT_MAX 400
int tl_signif_mwu_strata(const tl_mwu *strata, size_t n, double *p_greater, double *p_less, double *floor);

/* P(T >= t) for Student's t with df degrees of freedom (df > 0); NaN when t
 * or df is NaN. */
double tl_signif_t_sf(double t, double df);

/* The median of n sorted values (the mean of the middle two when n is even);
 * NaN when n is 0. */
double tl_signif_median_sorted(const double *sorted, size_t n);

/* A distribution-free confidence interval of the median from order
 * statistics: [x(k), x(n−k+1)] (1-based, of the sorted values) with k the
 * largest integer such that P(B <= k − 1) <= (1 − conf) / 2 for
 * B ~ Binomial(n, ½). Its coverage, 1 − 2 P(B <= k − 1) >= conf, is stored in
 * *coverage when not NULL. The binomial tail is summed exactly (in log space).
 * Returns 0, or -1 when n is too small for any such interval (n < 6 at 95 %),
 * leaving *lo and *hi NaN. O(n). */
int tl_signif_median_ci(const double *sorted, size_t n, double conf, double *lo, double *hi, double *coverage);

/* Holm's (1979) step-down adjustment for testing n hypotheses at once: with
 * the p-values sorted ascending p(1) <= ... <= p(n), the adjusted p(i) is
 * max over j <= i of min(1, (n - j + 1) p(j)). Rejecting where adj < alpha
 * keeps the chance of any false rejection at most alpha, whatever the
 * dependence between the tests. NaN entries are not tests: they stay NaN and
 * do not count in n. Returns 0, or -1 when out of memory. O(n log n). */
int tl_signif_holm(const double *p, size_t n, double *adj);

/* Benjamini and Hochberg's (1995) step-up adjustment: with the p-values
 * sorted ascending, the adjusted p(i) is min over j >= i of min(1, n p(j) / j).
 * Rejecting where adj < q keeps the expected share of false rejections among
 * the rejections (the false discovery rate) at most q for independent or
 * positively dependent tests. NaN entries are not tests. Returns 0, or -1 when
 * out of memory. O(n log n). */
int tl_signif_bh(const double *p, size_t n, double *adj);

/* The exact permutation test of the difference of trimmed means: x and y
 * sorted, floor(trim * n) values off each end of each; with x shifted by
 * -shift_up, *p_greater is the share of the C(nx + ny, nx) splits of the
 * pooled values into groups of nx and ny whose difference of trimmed means
 * (x's group minus y's) is at least the observed one; with x shifted by
 * -shift_down, *p_less the share at most the observed one (compare passes
 * log durations and log(1 + threshold), log(1 - threshold)). Exact whatever
 * the distribution -- ties, quantized or bimodal durations -- under the
 * null of exchangeable samples, with U's floor 1 / C(nx + ny, nx). Returns
 * -1 (p NaN) beyond TL_SIGNIF_PERM_MAX splits or for unsorted input. */
#define TL_SIGNIF_PERM_MAX 12870 /* C(16, 8): up to 8 against 8 */
/* Whether nx against ny values are within TL_SIGNIF_PERM_MAX splits (and a
 * 31-bit mask). */
int tl_signif_perm_fits(size_t nx, size_t ny);
int tl_signif_perm_trimmed(const double *x, size_t nx, const double *y, size_t ny, double trim, double shift_up,
                           double shift_down, double *p_greater, double *p_less);

/* Student's one-sample t test of the mean of x (n values) against 0:
 * t = mean / (s / sqrt(n)) with s the sample standard deviation, two-sided
 * p = I_{df/(df+t^2)}(df/2, 1/2) (the regularized incomplete beta function),
 * df = n - 1. When every value is the same, p is 1 if that value is 0 and 0
 * otherwise (no spread: the difference is certain). *t_out gets t when not
 * NULL. NaN when n < 2. */
double tl_signif_t_one_sample(const double *x, size_t n, double *t_out);

/* The regularized incomplete beta function I_x(a, b), by the continued
 * fraction of Numerical Recipes (Lentz's method); NaN outside its domain. */
double tl_signif_betai(double a, double b, double x);

/* The geometric mean of cand[i] / base[i] over the n pairs where both are
 * finite and positive, each pair weighted equally: exp(mean(log ratio)).
 * *used (when not NULL) gets the number of pairs that counted. NaN when none
 * did. */
double tl_signif_geomean_ratio(const double *base, const double *cand, size_t n, size_t *used);

#endif
