/*
 * test_stats.c - per-name statistics (common/stats.c).
 *
 * Durations keep exact count/total/min/max, Welford's running mean and M2,
 * a histogram and a bounded list of raw samples; per-thread statistics are
 * merged with Chan et al.'s pairwise update. The tests compare the running
 * mean and variance with a two-pass computation over the same values, check
 * that merging any split of the data gives the statistics of all of it, and
 * that samples stop at max_samples with the rest counted as dropped. Counter
 * statistics (tl_value_stat) get the same checks plus "last value" by time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tt_support.h"

static uint64_t rng_state;
static uint64_t rng(void)
{
    return tt_splitmix64(&rng_state);
}

/* Two-pass mean and sample variance of v[0..n). */
static void two_pass(const uint64_t *v, size_t n, double *mean, double *var)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)v[i];
    *mean = s / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += ((double)v[i] - *mean) * ((double)v[i] - *mean);
    *var = n > 1 ? ss / (double)(n - 1) : 0;
}

static void check_against(const tl_dur_stat *s, const uint64_t *v, size_t n)
{
    uint64_t total = 0, mn = UINT64_MAX, mx = 0;
    for (size_t i = 0; i < n; i++) {
        total += v[i];
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
    }
    double mean, var;
    two_pass(v, n, &mean, &var);
    assert_int_equal(s->count, n);
    assert_int_equal(s->total, total);
    assert_int_equal(s->min, mn);
    assert_int_equal(s->max, mx);
    tt_assert_close(s->mean, mean, 1e-12);
    tt_assert_close(s->m2 / (double)(n - 1), var, 1e-9);
}

static uint64_t *make_values(size_t n, uint64_t offset, uint64_t spread, uint64_t seed)
{
    uint64_t *v = malloc(n * sizeof *v);
    rng_state = seed;
    for (size_t i = 0; i < n; i++)
        v[i] = offset + rng() % spread;
    return v;
}

static void test_welford_matches_two_pass(void **state)
{
    (void)state;
    size_t n = 50000;
    uint64_t *v = make_values(n, 100, 10000000, 1);
    tl_dur_stat s = { 0 };
    for (size_t i = 0; i < n; i++)
        tl_dur_stat_add(&s, v[i], 10000);
    check_against(&s, v, n);
    tl_dur_stat_release(&s);
    free(v);
}

static void test_welford_large_offset(void **state)
{
    (void)state;
    /* ~1000 s in ns with a spread of 1 µs: a naive sum of squares loses
     * everything here, Welford keeps the variance. */
    size_t n = 20000;
    uint64_t *v = make_values(n, 1000000000000ull, 1000, 2);
    tl_dur_stat s = { 0 };
    for (size_t i = 0; i < n; i++)
        tl_dur_stat_add(&s, v[i], 0);
    double mean, var;
    two_pass(v, n, &mean, &var);
    tt_assert_close(s.mean, mean, 1e-15);
    tt_assert_close(s.m2 / (double)(n - 1), var, 1e-6);
    assert_true(var > 80000 && var < 90000); /* uniform over 1000 values: 83333 */
    tl_dur_stat_release(&s);
    free(v);
}

static void test_single_value(void **state)
{
    (void)state;
    tl_dur_stat s = { 0 };
    tl_dur_stat_add(&s, 42, 10);
    assert_int_equal(s.count, 1);
    assert_int_equal(s.min, 42);
    assert_int_equal(s.max, 42);
    assert_true(s.mean == 42.0);
    assert_true(s.m2 == 0.0);
    tl_dur_stat_add(&s, 0, 10); /* zero is a valid duration and a new minimum */
    assert_int_equal(s.min, 0);
    assert_int_equal(s.total, 42);
    tl_dur_stat_release(&s);
    assert_int_equal(s.count, 0);
    assert_null(s.samples);
}

static void test_merge_equals_all(void **state)
{
    (void)state;
    size_t n = 40000;
    uint64_t *v = make_values(n, 500, 5000000, 3);
    /* Parts of very different sizes, one empty; merged into an empty stat
     * in an order that is not the order of the data. */
    size_t cuts[] = { 0, 1, 1, 13000, 39000, 40000 };
    tl_dur_stat parts[5];
    memset(parts, 0, sizeof parts);
    for (int p = 0; p < 5; p++)
        for (size_t i = cuts[p]; i < cuts[p + 1]; i++)
            tl_dur_stat_add(&parts[p], v[i], 1000000);
    tl_dur_stat merged = { 0 };
    int order[] = { 3, 1, 0, 4, 2 };
    for (int k = 0; k < 5; k++)
        tl_dur_stat_merge(&merged, &parts[order[k]], 1000000);
    check_against(&merged, v, n);

    tl_dur_stat all = { 0 };
    for (size_t i = 0; i < n; i++)
        tl_dur_stat_add(&all, v[i], 1000000);
    for (unsigned b = 0; b < TL_HIST_BUCKETS; b++)
        assert_int_equal(tl_hist_count(&all.hist, b), tl_hist_count(&merged.hist, b));
    assert_int_equal(merged.nsamples, n);
    assert_int_equal(merged.samples_dropped, 0);
    tl_dur_stat_release(&all);
    tl_dur_stat_release(&merged);
    for (int p = 0; p < 5; p++)
        tl_dur_stat_release(&parts[p]);
    free(v);
}

static void test_samples_bounded(void **state)
{
    (void)state;
    tl_dur_stat s = { 0 };
    for (uint64_t i = 0; i < 250; i++)
        tl_dur_stat_add(&s, 1000 + i, 100);
    assert_int_equal(s.count, 250); /* statistics stay complete */
    assert_int_equal(s.nsamples, 100);
    assert_true(s.samples_cap <= 100); /* never more memory than the bound */
    assert_int_equal(s.samples_dropped, 150);
    int seen[250] = { 0 }, late = 0;
    for (uint32_t i = 0; i < 100; i++) {
        assert_true(s.samples[i] >= 1000 && s.samples[i] < 1250); /* values added, each once */
        assert_int_equal(seen[s.samples[i] - 1000]++, 0);
        late += s.samples[i] >= 1100;
    }
    assert_true(late > 0); /* not the first 100 only: a sample of all 250 */

    /* The collector keeps the first ones, in order (a report's step table
     * reads its main iteration's samples as steps). */
    tl_dur_stat f = { .keep_first = 1 };
    for (uint64_t i = 0; i < 250; i++)
        tl_dur_stat_add(&f, 1000 + i, 100);
    for (uint32_t i = 0; i < 100; i++)
        assert_int_equal(f.samples[i], 1000 + i);
    assert_int_equal(f.samples_dropped, 150);
    tl_dur_stat_release(&f);

    /* A uniform sample of everything, not the first values in file order: a
     * Kineto trace lists a thread's events together, so 5000 calls of 1 us
     * on one thread then 5000 of 3 us on another must keep about half of
     * each (binomial: 500 +- 16; the first 1000 would be all 1 us). */
    tl_dur_stat t = { 0 };
    for (uint64_t i = 0; i < 10000; i++)
        tl_dur_stat_add(&t, i < 5000 ? 1000 : 3000, 1000);
    int ones = 0;
    for (uint32_t i = 0; i < t.nsamples; i++)
        ones += t.samples[i] == 1000;
    assert_int_equal(t.nsamples, 1000);
    assert_true(ones > 430 && ones < 570);
    tl_dur_stat_release(&t);

    /* Merging: 60 + 60 samples into a bound of 100 keeps 100 of the 125
     * values, each side in proportion to the values it stands for (65 of b,
     * of which it kept 60: 52 from b, 48 from a). */
    tl_dur_stat a = { 0 }, b = { 0 }, m = { 0 };
    for (uint64_t i = 0; i < 60; i++)
        tl_dur_stat_add(&a, i, 100);
    for (uint64_t i = 0; i < 65; i++)
        tl_dur_stat_add(&b, 100 + i, 60); /* b drops 5 itself */
    assert_int_equal(b.samples_dropped, 5);
    tl_dur_stat_merge(&m, &a, 100);
    tl_dur_stat_merge(&m, &b, 100);
    assert_int_equal(m.count, 125);
    assert_int_equal(m.nsamples, 100);
    assert_int_equal(m.samples_dropped, 125 - 100);
    int from_a = 0;
    for (uint32_t i = 0; i < m.nsamples; i++)
        from_a += m.samples[i] < 100;
    assert_int_equal(from_a, 48);

    /* max_samples 0: no samples at all, every value counted as dropped. */
    tl_dur_stat z = { 0 };
    for (uint64_t i = 0; i < 10; i++)
        tl_dur_stat_add(&z, i, 0);
    assert_int_equal(z.nsamples, 0);
    assert_null(z.samples);
    assert_int_equal(z.samples_dropped, 10);
    assert_int_equal(z.count, 10);

    tl_dur_stat_release(&s);
    tl_dur_stat_release(&a);
    tl_dur_stat_release(&b);
    tl_dur_stat_release(&m);
    tl_dur_stat_release(&z);
}

static void test_value_stats(void **state)
{
    (void)state;
    /* Counters: negative and fractional values, last by time. */
    double v[] = { -3.5, 2.0, 10.25, -7.0, 0.0, 4.5, 1e6, -1e-3 };
    size_t n = sizeof v / sizeof v[0];
    tl_value_stat s;
    memset(&s, 0, sizeof s);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        tl_value_stat_add(&s, v[i], 100 + i);
        sum += v[i];
    }
    double mean = sum / (double)n, ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    assert_int_equal(s.count, n);
    tt_assert_close(s.sum, sum, 1e-15);
    assert_true(s.min == -7.0);
    assert_true(s.max == 1e6);
    tt_assert_close(s.mean, mean, 1e-12);
    tt_assert_close(s.m2, ss, 1e-12);
    assert_true(s.last == -1e-3);

    /* All negative: the first value must initialize max (not 0). */
    tl_value_stat neg;
    memset(&neg, 0, sizeof neg);
    tl_value_stat_add(&neg, -5, 1);
    tl_value_stat_add(&neg, -2, 2);
    assert_true(neg.max == -2.0);
    assert_true(neg.min == -5.0);
}

static void test_value_stats_merge(void **state)
{
    (void)state;
    size_t n = 10000;
    tl_value_stat all, a, b, m;
    memset(&all, 0, sizeof all);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(&m, 0, sizeof m);
    rng_state = 9;
    for (size_t i = 0; i < n; i++) {
        double x = (double)(rng() % 100000) / 7.0 - 5000.0;
        uint64_t ticks = 1000 + i;
        tl_value_stat_add(&all, x, ticks);
        /* a gets the later values: its last is the overall last */
        tl_value_stat_add(i < 3000 ? &b : &a, x, ticks);
    }
    tl_value_stat_merge(&m, &a); /* later first, so "last" must not follow merge order */
    tl_value_stat_merge(&m, &b);
    assert_int_equal(m.count, all.count);
    tt_assert_close(m.sum, all.sum, 1e-9);
    assert_true(m.min == all.min);
    assert_true(m.max == all.max);
    tt_assert_close(m.mean, all.mean, 1e-9);
    tt_assert_close(m.m2, all.m2, 1e-9);
    assert_true(m.last == all.last);
    assert_int_equal(m.last_ticks, all.last_ticks);

    tl_value_stat empty;
    memset(&empty, 0, sizeof empty);
    tl_value_stat before = m;
    tl_value_stat_merge(&m, &empty);
    assert_memory_equal(&m, &before, sizeof m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_welford_matches_two_pass),
        cmocka_unit_test(test_welford_large_offset),
        cmocka_unit_test(test_single_value),
        cmocka_unit_test(test_merge_equals_all),
        cmocka_unit_test(test_samples_bounded),
        cmocka_unit_test(test_value_stats),
        cmocka_unit_test(test_value_stats_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
