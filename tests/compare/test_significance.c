/*
 * test_significance.c - the statistics of `tally compare`
 * (tools/analyze/significance.c) against values derived independently.
 *
 * The expected numbers come from tests/compare/mwu_reference.py, which
 * computes them from the definitions with nothing shared with the C code
 * (exact p by enumerating every assignment of pooled ranks, the normal
 * approximation from its formula, binomial sums in rational arithmetic), and
 * from published tables: for n1 = n2 = 5 the two-sided 5 % critical value of
 * U is 2 (p = 8/252 at U = 2, 14/252 at U = 3), and the 95 % order-statistic
 * interval of the median is [x(6), x(15)] for n = 20 and [x(40), x(61)] for
 * n = 100 (Conover, Practical Nonparametric Statistics, table A3).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "significance.h"
#include "tt_support.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Small samples without ties: the exact distribution. */
static void exact_small_sample(void **state)
{
    (void)state;
    const double x[] = { 1.1, 2.3, 3.5, 4.2, 5.9 };
    const double y[] = { 2.0, 6.1, 7.3, 8.8, 9.4, 10.0 };
    tl_mwu t;
    assert_int_equal(tl_signif_mwu(x, N(x), y, N(y), &t), 0);
    assert_true(t.exact);
    assert_false(t.ties);
    tt_assert_close(t.u, 4.0, 0);
    tt_assert_close(t.p, 0.051948051948051951, 1e-12); /* 24/462 */
    assert_int_equal(tl_signif_mwu(y, N(y), x, N(x), &t), 0);
    tt_assert_close(t.u, 26.0, 0);
    tt_assert_close(t.p, 0.051948051948051951, 1e-12);
}

/* The textbook critical value for n1 = n2 = 5 at the two-sided 5 % level. */
static void exact_table_5_by_5(void **state)
{
    (void)state;
    const double a[] = { 1, 2, 3, 4, 5 };
    const double u2[] = { 3.5, 5.5, 6, 7, 8 }, u3[] = { 3.5, 4.5, 6, 7, 8 };
    tl_mwu t;
    assert_int_equal(tl_signif_mwu(a, 5, u2, 5, &t), 0);
    tt_assert_close(t.u, 2, 0);
    tt_assert_close(t.p, 8.0 / 252.0, 1e-12);
    assert_true(t.p < 0.05);
    /* One-sided: counts 1, 1, 2 for U = 0, 1, 2 of 252 arrangements. */
    tt_assert_close(t.p_less, 4.0 / 252.0, 1e-12);
    tt_assert_close(t.p_greater, 250.0 / 252.0, 1e-12);
    assert_int_equal(tl_signif_mwu(a, 5, u3, 5, &t), 0);
    tt_assert_close(t.u, 3, 0);
    tt_assert_close(t.p, 14.0 / 252.0, 1e-12);
    assert_true(t.p > 0.05);
}

/* The null distribution itself: symmetric, sums to C(n1 + n2, n1), and the
 * largest sizes stay exact integers. */
static void exact_counts(void **state)
{
    (void)state;
    double c[4 * 3 + 1];
    assert_int_equal(tl_signif_mwu_exact_counts(4, 3, c), 0);
    /* Gaussian binomial [7 choose 3]: 1 1 2 3 4 4 5 4 4 3 2 1 1 */
    const double want[] = { 1, 1, 2, 3, 4, 4, 5, 4, 4, 3, 2, 1, 1 };
    for (size_t u = 0; u < N(want); u++)
        tt_assert_close(c[u], want[u], 0);
    double *big = malloc((20 * 20 + 1) * sizeof *big);
    assert_non_null(big);
    assert_int_equal(tl_signif_mwu_exact_counts(20, 20, big), 0);
    double sum = 0;
    for (size_t u = 0; u <= 400; u++) {
        sum += big[u];
        tt_assert_close(big[u], big[400 - u], 0);
    }
    tt_assert_close(sum, 137846528820.0, 0); /* C(40, 20) */
    free(big);
    assert_int_equal(tl_signif_mwu_exact_counts(21, 3, c), -1);
}

static void tie_data(double *x, double *y, int shift)
{
    for (int i = 0; i < 25; i++)
        x[i] = (double)((i * 7) % 13);
    for (int i = 0; i < 30; i++)
        y[i] = (double)((i * 5) % 11 + shift);
}

/* Larger samples with ties: the normal approximation with the tie and
 * continuity corrections. */
static void normal_with_ties(void **state)
{
    (void)state;
    double x[25], y[30];
    tl_mwu t;
    tie_data(x, y, 2);
    assert_int_equal(tl_signif_mwu(x, 25, y, 30, &t), 0);
    assert_false(t.exact);
    assert_true(t.ties);
    tt_assert_close(t.u, 315.5, 0);
    tt_assert_close(t.z, 1.0005721364243709, 1e-12);
    tt_assert_close(t.p, 0.31703370653937046, 1e-12);
    tie_data(x, y, 5);
    assert_int_equal(tl_signif_mwu(x, 25, y, 30, &t), 0);
    tt_assert_close(t.u, 171.0, 0);
    tt_assert_close(t.z, 3.4485596859153804, 1e-12);
    tt_assert_close(t.p, 0.00056358489828791693, 1e-10);
}

/* Small samples with ties are not exact; every value equal: p = 1; an empty
 * side: NaN. */
static void edge_cases(void **state)
{
    (void)state;
    const double a[] = { 1, 2, 2, 3 }, b[] = { 2, 3, 4, 5 }, same[] = { 7, 7, 7, 7 };
    tl_mwu t;
    assert_int_equal(tl_signif_mwu(a, 4, b, 4, &t), 0);
    assert_false(t.exact);
    assert_true(t.ties);
    assert_int_equal(tl_signif_mwu(same, 4, same, 4, &t), 0);
    tt_assert_close(t.p, 1.0, 0);
    assert_int_equal(tl_signif_mwu(a, 4, b, 0, &t), 0);
    assert_true(isnan(t.p));
}

/* Interval of the median: k from exact binomial sums, as in the tables. */
static void median_ci(void **state)
{
    (void)state;
    double v[1000], lo, hi, cov;
    for (int i = 0; i < 1000; i++)
        v[i] = i + 1; /* x(i) = i */
    assert_int_equal(tl_signif_median_ci(v, 5, 0.95, &lo, &hi, &cov), -1);
    assert_true(isnan(lo) && isnan(hi));
    assert_int_equal(tl_signif_median_ci(v, 6, 0.95, &lo, &hi, &cov), 0);
    tt_assert_close(lo, 1, 0);
    tt_assert_close(hi, 6, 0);
    tt_assert_close(cov, 0.96875, 1e-12);
    assert_int_equal(tl_signif_median_ci(v, 10, 0.95, &lo, &hi, &cov), 0);
    tt_assert_close(lo, 2, 0);
    tt_assert_close(hi, 9, 0);
    tt_assert_close(cov, 0.978515625, 1e-12);
    assert_int_equal(tl_signif_median_ci(v, 20, 0.95, &lo, &hi, &cov), 0);
    tt_assert_close(lo, 6, 0);
    tt_assert_close(hi, 15, 0);
    tt_assert_close(cov, 0.9586105346679688, 1e-12);
    assert_int_equal(tl_signif_median_ci(v, 100, 0.95, &lo, &hi, &cov), 0);
    tt_assert_close(lo, 40, 0);
    tt_assert_close(hi, 61, 0);
    tt_assert_close(cov, 0.9647997997822951, 1e-10);
    assert_int_equal(tl_signif_median_ci(v, 1000, 0.95, &lo, &hi, &cov), 0);
    tt_assert_close(lo, 469, 0);
    tt_assert_close(hi, 532, 0);
    tt_assert_close(cov, 0.9537088026395019, 1e-9);
    tt_assert_close(tl_signif_median_sorted(v, 10), 5.5, 0);
    tt_assert_close(tl_signif_median_sorted(v, 5), 3, 0);
}

static void geomean(void **state)
{
    (void)state;
    const double base[] = { 1, 4, 2, 0, 5, NAN }, cand[] = { 2, 2, 3, 7, -1, 1 };
    size_t used;
    /* 2, 0.5, 1.5; the zero, negative and NaN pairs do not count. */
    tt_assert_close(tl_signif_geomean_ratio(base, cand, N(base), &used), 1.1447142425533319, 1e-12);
    assert_int_equal(used, 3);
    assert_true(isnan(tl_signif_geomean_ratio(base + 3, cand + 3, 3, &used)));
    assert_int_equal(used, 0);
}

static void holm(void **state)
{
    (void)state;
    const double p[] = { 0.01, 0.04, NAN, 0.03, 0.005 };
    double adj[5];
    assert_int_equal(tl_signif_holm(p, 5, adj), 0);
    tt_assert_close(adj[0], 0.03, 1e-12);
    tt_assert_close(adj[1], 0.06, 1e-12);
    assert_true(isnan(adj[2]));
    tt_assert_close(adj[3], 0.06, 1e-12);
    tt_assert_close(adj[4], 0.02, 1e-12);
}

/* Benjamini–Hochberg by hand: sorted 0.005, 0.01, 0.03, 0.04, 0.2 give
 * m p / k = 0.025, 0.025, 0.05, 0.05, 0.2, and the running minimum from the
 * largest keeps them. */
static void bh(void **state)
{
    (void)state;
    const double p[] = { 0.01, 0.04, 0.03, 0.2, NAN, 0.005 };
    double adj[6];
    assert_int_equal(tl_signif_bh(p, 6, adj), 0);
    tt_assert_close(adj[0], 0.025, 1e-12);
    tt_assert_close(adj[1], 0.05, 1e-12);
    tt_assert_close(adj[2], 0.05, 1e-12);
    tt_assert_close(adj[3], 0.2, 1e-12);
    assert_true(isnan(adj[4]));
    tt_assert_close(adj[5], 0.025, 1e-12);
    /* A later, larger p pulls an earlier one down (step-up): 0.04 (k = 2) and
     * 0.041 (k = 3) of m = 3 both become 0.041. */
    const double q[] = { 0.001, 0.04, 0.041 };
    assert_int_equal(tl_signif_bh(q, 3, adj), 0);
    tt_assert_close(adj[1], 0.041, 1e-12);
    tt_assert_close(adj[2], 0.041, 1e-12);
}

/* Student's t against closed forms (df 1: Cauchy, p = 1 - 2 atan|t| / pi;
 * df 2: p = 1 - |t| / sqrt(2 + t^2)) and the tables' 97.5 % quantiles
 * (df 3: 3.182446, df 10: 2.228139, where p = 0.05). */
static void t_test(void **state)
{
    (void)state;
    double t;
    const double two[] = { 1.0, 3.0 }; /* mean 2, s = sqrt(2), t = 2 / (sqrt(2) / sqrt(2)) = 2 */
    double p = tl_signif_t_one_sample(two, 2, &t);
    tt_assert_close(t, 2.0, 1e-12);
    tt_assert_close(p, 1.0 - 2.0 * atan(2.0) / M_PI, 1e-10);
    const double three[] = { 1.0, 2.0, 4.0 }; /* mean 7/3, s = sqrt(7/3), t = sqrt(7) */
    p = tl_signif_t_one_sample(three, 3, &t);
    tt_assert_close(t, sqrt(7.0), 1e-12);
    tt_assert_close(p, 1.0 - sqrt(7.0) / sqrt(9.0), 1e-10);
    /* Four values with t = 3.182446 exactly: mean m, s chosen so m / (s / 2) = t. */
    const double s4 = sqrt(5.0 / 3.0); /* sd of {-1.5, -0.5, 0.5, 1.5} */
    double m = 3.182446 * s4 / 2.0, four[] = { m - 1.5, m - 0.5, m + 0.5, m + 1.5 };
    tt_assert_close(tl_signif_t_one_sample(four, 4, NULL), 0.05, 1e-5);
    double eleven[11], m2 = 0;
    for (int i = 0; i < 11; i++)
        eleven[i] = i - 5.0, m2 += (i - 5.0) * (i - 5.0);
    double shift = 2.228139 * sqrt(m2 / 10.0) / sqrt(11.0);
    for (int i = 0; i < 11; i++)
        eleven[i] += shift;
    tt_assert_close(tl_signif_t_one_sample(eleven, 11, NULL), 0.05, 1e-5);
    /* No spread: certain when not zero, nothing when zero; too few values: NaN. */
    const double same[] = { 0.2, 0.2, 0.2 }, zero[] = { 0, 0, 0 };
    assert_true(tl_signif_t_one_sample(same, 3, NULL) == 0.0);
    assert_true(tl_signif_t_one_sample(zero, 3, NULL) == 1.0);
    assert_true(isnan(tl_signif_t_one_sample(same, 1, NULL)));
    /* The incomplete beta at its symmetric point: I_0.5(a, a) = 0.5. */
    tt_assert_close(tl_signif_betai(3.5, 3.5, 0.5), 0.5, 1e-12);
    assert_true(isnan(tl_signif_betai(-1, 1, 0.5)));
}

/* The stratified test by hand. Strata of one value a side are signs (U 0 or
 * 1, each with probability 1/2); a 2-against-2 stratum has U = 0..4 with
 * counts 1, 1, 2, 1, 1 of 6. */
static void strata(void **state)
{
    (void)state;
    const double one[] = { 1 }, two[] = { 2 }, lo[] = { 1, 2 }, hi[] = { 3, 4 };
    tl_mwu s[3];
    double up, down, floor;
    /* Two signs, both up: S = 2, P(S >= 2) = 1/4. */
    assert_int_equal(tl_signif_mwu(two, 1, one, 1, &s[0]), 0);
    assert_int_equal(tl_signif_mwu(two, 1, one, 1, &s[1]), 0);
    assert_int_equal(tl_signif_mwu_strata(s, 2, &up, &down, &floor), 0);
    tt_assert_close(up, 0.25, 1e-12);
    tt_assert_close(down, 1.0, 1e-12);
    tt_assert_close(floor, 0.25, 1e-12);
    /* 2 against 2 all above (U = 4) and a sign down (U = 0): S = 4,
     * P(S >= 4) = P(4) + P(3) P(1) = 1/6 + 1/12 = 1/4, P(S <= 4) = 1 - P(5) = 11/12. */
    assert_int_equal(tl_signif_mwu(hi, 2, lo, 2, &s[0]), 0);
    assert_int_equal(tl_signif_mwu(one, 1, two, 1, &s[1]), 0);
    assert_int_equal(tl_signif_mwu_strata(s, 2, &up, &down, &floor), 0);
    tt_assert_close(up, 0.25, 1e-12);
    tt_assert_close(down, 11.0 / 12.0, 1e-12);
    tt_assert_close(floor, 1.0 / 12.0, 1e-12);
    /* With ties, the normal approximation of the sum: mean and variance add. */
    const double tx[] = { 1, 2, 2, 3 }, ty[] = { 2, 3, 3, 4, 5 };
    assert_int_equal(tl_signif_mwu(tx, 4, ty, 5, &s[0]), 0);
    assert_int_equal(tl_signif_mwu(ty, 5, tx, 4, &s[1]), 0);
    assert_int_equal(tl_signif_mwu(hi, 2, lo, 2, &s[2]), 0);
    assert_true(s[0].ties && !s[0].exact);
    assert_int_equal(tl_signif_mwu_strata(s, 3, &up, &down, NULL), 0);
    double sum = s[0].u + s[1].u + s[2].u, mu = 10 + 10 + 2, var = s[0].var + s[1].var + s[2].var;
    tt_assert_close(s[2].var, 2.0 * 2.0 * 5.0 / 12.0, 1e-12);
    tt_assert_close(up, 0.5 * erfc((sum - mu - 0.5) / sqrt(2 * var)), 1e-12);
    tt_assert_close(down, 0.5 * erfc((mu - sum - 0.5) / sqrt(2 * var)), 1e-12);
    /* A stratum with an empty side is skipped; none at all: NaN. */
    assert_int_equal(tl_signif_mwu(hi, 2, lo, 0, &s[0]), 0);
    assert_int_equal(tl_signif_mwu_strata(s, 1, &up, &down, &floor), 0);
    assert_true(isnan(up) && isnan(down) && isnan(floor));
}

/* Student's t's upper tail: symmetric, 1/2 at 0, the tables' 97.5 %
 * quantile of 3 degrees of freedom. */
static void t_tail(void **state)
{
    (void)state;
    tt_assert_close(tl_signif_t_sf(0, 5), 0.5, 1e-12);
    tt_assert_close(tl_signif_t_sf(3.182446, 3), 0.025, 1e-5);
    tt_assert_close(tl_signif_t_sf(-2, 4), 1 - tl_signif_t_sf(2, 4), 1e-12);
    tt_assert_close(tl_signif_t_sf(1, 1), 0.25, 1e-10); /* Cauchy: 1/2 - atan(1) / pi */
    assert_true(tl_signif_t_sf(INFINITY, 3) == 0.0);
    assert_true(isnan(tl_signif_t_sf(NAN, 3)));
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The permutation test of trimmed means against brute force in Python
 * (itertools.combinations over the 12870 splits, the trimmed means written
 * out): 8 calls a side, the candidate +24 % with a spike on each side; and
 * microsecond-quantized durations full of ties, where a t test's variance
 * is 0. */
static void perm_trimmed(void **state)
{
    (void)state;
    double c[] = { 12.0, 12.5, 13.1, 12.8, 30.0, 12.2, 12.9, 13.3 };
    double b[] = { 10.1, 10.4, 9.9, 25.0, 10.2, 10.0, 10.6, 10.3 };
    for (size_t i = 0; i < 8; i++) {
        c[i] = log(c[i]);
        b[i] = log(b[i]);
    }
    qsort(c, 8, sizeof *c, by_value);
    qsort(b, 8, sizeof *b, by_value);
    double up, down;
    assert_int_equal(tl_signif_perm_trimmed(c, 8, b, 8, 0.2, log1p(0.05), log(0.95), &up, &down), 0);
    tt_assert_close(up, 1100.0 / 12870.0, 1e-12);
    tt_assert_close(down, 12695.0 / 12870.0, 1e-12);
    double qb[] = { log(9), log(9), log(9), log(9), log(10) }, qc[] = { log(9), log(10), log(10), log(10), log(10) };
    assert_int_equal(tl_signif_perm_trimmed(qc, 5, qb, 5, 0.2, log1p(0.05), log(0.95), &up, &down), 0);
    tt_assert_close(up, 26.0 / 252.0, 1e-12);
    tt_assert_close(down, 1.0, 1e-12);
    assert_true(tl_signif_perm_fits(8, 8) && tl_signif_perm_fits(5, 13) && !tl_signif_perm_fits(9, 9));
    assert_false(tl_signif_perm_fits(0, 5) || tl_signif_perm_fits(1, 31));
    /* Beyond C(16, 8) splits, unsorted: refused. */
    double many[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    assert_int_equal(tl_signif_perm_trimmed(many, 9, many, 9, 0.2, 0, 0, &up, &down), -1);
    assert_true(isnan(up));
    double unsorted[] = { 3, 1, 2, 4, 5 };
    assert_int_equal(tl_signif_perm_trimmed(unsorted, 5, qb, 5, 0.2, 0, 0, &up, &down), -1);
    /* A value that is not finite: refused, not p = 0 (a review's case). */
    double inf[] = { 1, 2, 4, 8, INFINITY }, fin[] = { 1, 2, 4, 8, 16 };
    assert_int_equal(tl_signif_perm_trimmed(inf, 5, fin, 5, 0.2, 0, 0, &up, &down), -1);
    /* Ties far below the extremes: the tolerance follows the values summed
     * (brute force: 0.6786 = 171/252). */
    double tx[] = { -1e6, -0.53, -0.53, -0.53, 1e6 }, ty[] = { -1.5e6, -0.53, -0.53, 0.71, 1.5e6 };
    assert_int_equal(tl_signif_perm_trimmed(tx, 5, ty, 5, 0.2, 0, 0, &up, &down), 0);
    tt_assert_close(up, 171.0 / 252.0, 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_small_sample),
        cmocka_unit_test(exact_table_5_by_5),
        cmocka_unit_test(exact_counts),
        cmocka_unit_test(normal_with_ties),
        cmocka_unit_test(edge_cases),
        cmocka_unit_test(median_ci),
        cmocka_unit_test(geomean),
        cmocka_unit_test(holm),
        cmocka_unit_test(bh),
        cmocka_unit_test(t_test),
        cmocka_unit_test(strata),
        cmocka_unit_test(t_tail),
        cmocka_unit_test(perm_trimmed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
