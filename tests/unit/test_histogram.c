/*
 * test_histogram.c - the log-bucket histogram (common/histogram.c).
 *
 * The report's median and p95 come from this histogram, and the promise is a
 * relative error of at most 1 % (a bucket is at most 1/64 of its lower bound
 * wide and its midpoint is reported: 1/128 = 0.78 %). Each test draws a
 * distribution from a fixed-seed generator, computes the exact nearest-rank
 * quantiles from the sorted samples, and compares; values below 128 must come
 * back exactly. Merging histograms must give the same counts as adding every
 * value to one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "histogram.h"
#include "tt_support.h"

static const double quantiles[] = { 0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0 };
#define NQ (sizeof quantiles / sizeof quantiles[0])
#define BOUND (1.0 / 128 + 1e-12)

static uint64_t rng_state;
static uint64_t rng(void)
{
    return tt_splitmix64(&rng_state);
}
static double uniform01(void)
{
    return (double)(rng() >> 11) / 9007199254740992.0;
}
static double normal(void)
{
    double u = uniform01(), v = uniform01();
    return sqrt(-2 * log(u > 0 ? u : 1e-300)) * cos(2 * M_PI * v);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The nearest-rank quantile of sorted values, the definition tl_hist_quantile uses. */
static uint64_t exact_quantile(const uint64_t *sorted, size_t n, double q)
{
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank == 0)
        rank = 1;
    return sorted[rank - 1];
}

/* Add values to a histogram and check every quantile against the exact one. */
static void check_quantiles(uint64_t *v, size_t n, double bound)
{
    tl_hist h = { 0 };
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tl_hist_add(&h, v[i]), 0);
    qsort(v, n, sizeof *v, cmp_u64);
    for (size_t k = 0; k < NQ; k++) {
        double exact = (double)exact_quantile(v, n, quantiles[k]);
        double got = tl_hist_quantile(&h, n, quantiles[k]);
        double err = exact == 0 ? fabs(got) : fabs(got - exact) / exact;
        if (err > bound)
            fail_msg("q=%g: histogram %.17g, exact %.17g, relative error %g > %g", quantiles[k], got, exact, err,
                     bound);
    }
    tl_hist_release(&h);
}

static void test_uniform(void **state)
{
    (void)state;
    size_t n = 100000;
    uint64_t *v = malloc(n * sizeof *v);
    rng_state = 1;
    for (size_t i = 0; i < n; i++)
        v[i] = 1000 + rng() % 999001; /* 1 µs .. 1 ms in ns */
    check_quantiles(v, n, BOUND);
    free(v);
}

static void test_lognormal(void **state)
{
    (void)state;
    size_t n = 100000;
    uint64_t *v = malloc(n * sizeof *v);
    rng_state = 2;
    for (size_t i = 0; i < n; i++)
        v[i] = (uint64_t)llround(exp(11.0 + 2.0 * normal())); /* ~60 µs, long tail */
    check_quantiles(v, n, BOUND);
    free(v);
}

static void test_constant(void **state)
{
    (void)state;
    uint64_t v[1000];
    for (size_t i = 0; i < 1000; i++)
        v[i] = 12345;
    check_quantiles(v, 1000, BOUND);
}

static void test_small_values_exact(void **state)
{
    (void)state;
    /* Below 128 every bucket holds a single value: exact. */
    uint64_t v[5000];
    rng_state = 3;
    for (size_t i = 0; i < 5000; i++)
        v[i] = rng() % 128;
    check_quantiles(v, 5000, 0.0);
    uint64_t few[] = { 0, 0, 1, 63, 64, 127 };
    check_quantiles(few, 6, 0.0);
}

static void test_wide_range(void **state)
{
    (void)state;
    /* From 0 to UINT64_MAX: the last page must not overflow. */
    size_t n = 20000;
    uint64_t *v = malloc(n * sizeof *v);
    rng_state = 4;
    for (size_t i = 0; i < n; i++)
        v[i] = rng() >> (rng() % 64);
    v[0] = 0;
    v[1] = UINT64_MAX;
    v[2] = (uint64_t)1 << 63;
    check_quantiles(v, n, BOUND);
    free(v);
}

static void test_every_single_value_within_bound(void **state)
{
    (void)state;
    /* A histogram of one value reports it within 1/128 whatever its bucket:
     * every value up to 2^16, then both sides of each power of two. */
    for (uint64_t x = 0; x < 70000; x++) {
        tl_hist h = { 0 };
        tl_hist_add(&h, x);
        double got = tl_hist_quantile(&h, 1, 0.5);
        if (x < 128)
            assert_true(got == (double)x);
        else if (fabs(got - (double)x) / (double)x > BOUND)
            fail_msg("value %llu reported as %.17g", (unsigned long long)x, got);
        tl_hist_release(&h);
    }
    for (int e = 17; e < 64; e++) {
        uint64_t p = (uint64_t)1 << e;
        uint64_t probes[] = { p - 1, p, p + 1, p + p / 3, p | (p - 1) };
        for (size_t i = 0; i < 5; i++) {
            tl_hist h = { 0 };
            tl_hist_add(&h, probes[i]);
            double got = tl_hist_quantile(&h, 1, 0.5);
            assert_true(fabs(got - (double)probes[i]) / (double)probes[i] <= BOUND);
            tl_hist_release(&h);
        }
    }
}

static void test_edge_cases(void **state)
{
    (void)state;
    tl_hist h = { 0 };
    assert_true(tl_hist_quantile(&h, 0, 0.5) == 0.0); /* empty */
    tl_hist_add(&h, 10);
    tl_hist_add(&h, 20);
    tl_hist_add(&h, 30);
    assert_true(tl_hist_quantile(&h, 3, -1.0) == 10.0); /* clamped to 0 */
    assert_true(tl_hist_quantile(&h, 3, 2.0) == 30.0);  /* clamped to 1 */
    assert_true(tl_hist_quantile(&h, 3, 0.5) == 20.0);
    /* Only the buckets in use are held (with some room): 10, 20 and 30 in less than a page. */
    assert_non_null(h.counts);
    assert_int_equal(h.first, 0);
    assert_true(h.n >= 31 && h.n <= TL_HIST_SUB);
    assert_int_equal(tl_hist_count(&h, 20), 1);
    assert_int_equal(tl_hist_count(&h, 21), 0);
    assert_int_equal(tl_hist_count(&h, TL_HIST_BUCKETS - 1), 0); /* outside the range held */
    tl_hist_release(&h);
    assert_null(h.counts);
    assert_int_equal(h.n, 0);
}

static void test_merge_equals_single(void **state)
{
    (void)state;
    size_t n = 30000;
    tl_hist all = { 0 }, part[3] = { { 0 }, { 0 }, { 0 } }, merged = { 0 };
    rng_state = 5;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = (uint64_t)llround(exp(8.0 + 3.0 * normal()));
        tl_hist_add(&all, x);
        tl_hist_add(&part[i % 7 == 0 ? 0 : i % 3 == 0 ? 1 : 2], x); /* uneven parts */
    }
    for (int k = 0; k < 3; k++)
        assert_int_equal(tl_hist_merge(&merged, &part[k]), 0);
    tl_hist empty = { 0 };
    assert_int_equal(tl_hist_merge(&merged, &empty), 0); /* merging nothing changes nothing */
    for (unsigned b = 0; b < TL_HIST_BUCKETS; b++)
        assert_int_equal(tl_hist_count(&all, b), tl_hist_count(&merged, b));
    for (size_t k = 0; k < NQ; k++)
        assert_true(tl_hist_quantile(&all, n, quantiles[k]) == tl_hist_quantile(&merged, n, quantiles[k]));
    tl_hist_release(&all);
    tl_hist_release(&merged);
    for (int k = 0; k < 3; k++)
        tl_hist_release(&part[k]);
}

/* The range held grows down as well as up; bucket by bucket (a partial read
 * back) gives the same histogram, and a count saturates instead of wrapping. */
static void test_grow_both_ways(void **state)
{
    (void)state;
    tl_hist down = { 0 }, up = { 0 }, buckets = { 0 };
    for (uint64_t v = 1000000000; v > 0; v = v * 9 / 10)
        assert_int_equal(tl_hist_add(&down, v), 0);
    uint64_t vals[512], n = 0;
    for (uint64_t v = 1000000000; v > 0; v = v * 9 / 10)
        vals[n++] = v;
    for (uint64_t i = n; i-- > 0;)
        assert_int_equal(tl_hist_add(&up, vals[i]), 0);
    for (unsigned b = 0; b < TL_HIST_BUCKETS; b++) {
        assert_int_equal(tl_hist_count(&down, b), tl_hist_count(&up, b));
        if (tl_hist_count(&down, b))
            assert_int_equal(tl_hist_add_bucket(&buckets, b, tl_hist_count(&down, b)), 0);
    }
    for (size_t k = 0; k < NQ; k++) {
        assert_true(tl_hist_quantile(&down, n, quantiles[k]) == tl_hist_quantile(&up, n, quantiles[k]));
        assert_true(tl_hist_quantile(&down, n, quantiles[k]) == tl_hist_quantile(&buckets, n, quantiles[k]));
    }
    assert_int_equal(tl_hist_add_bucket(&buckets, TL_HIST_BUCKETS, 1), -1); /* no such bucket */
    assert_int_equal(tl_hist_add_bucket(&buckets, 7, UINT32_MAX), 0);
    assert_int_equal(tl_hist_add_bucket(&buckets, 7, 5), 0);
    assert_true(tl_hist_count(&buckets, 7) == UINT32_MAX);
    tl_hist_release(&down);
    tl_hist_release(&up);
    tl_hist_release(&buckets);
}

/* A histogram that stopped growing holds only the buckets from its first to
 * its last count (tl_hist_trim, issue 33: a session's histograms kept the
 * slack of growing, about a third of them), and reads the same. */
static void test_trim(void **state)
{
    (void)state;
    tl_hist h = { 0 }, ref = { 0 };
    static const uint64_t v[] = { 1000, 1010, 5000, 90000, 91000, 2000000 };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        assert_int_equal(tl_hist_add(&h, v[i]), 0);
        assert_int_equal(tl_hist_add(&ref, v[i]), 0);
    }
    unsigned lo = tl_hist_bucket(1000), hi = tl_hist_bucket(2000000);
    assert_true(h.first < lo || h.first + h.n > hi + 1); /* growing left room */
    tl_hist_trim(&h);
    assert_int_equal(h.first, lo);
    assert_int_equal(h.n, hi - lo + 1);
    for (unsigned b = 0; b < TL_HIST_BUCKETS; b++)
        assert_int_equal(tl_hist_count(&h, b), tl_hist_count(&ref, b));
    for (size_t q = 0; q < NQ; q++)
        assert_true(tl_hist_quantile(&h, 6, quantiles[q]) == tl_hist_quantile(&ref, 6, quantiles[q]));
    /* it still grows and merges */
    assert_int_equal(tl_hist_add(&h, 3), 0);
    assert_int_equal(tl_hist_merge(&h, &ref), 0);
    assert_int_equal(tl_hist_count(&h, tl_hist_bucket(3)), 1);
    assert_int_equal(tl_hist_count(&h, lo), 2 * tl_hist_count(&ref, lo));
    tl_hist empty = { 0 };
    tl_hist_trim(&empty);
    assert_null(empty.counts);
    tl_hist_release(&h);
    tl_hist_release(&ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_uniform),        cmocka_unit_test(test_trim),
        cmocka_unit_test(test_grow_both_ways), cmocka_unit_test(test_lognormal),
        cmocka_unit_test(test_constant),       cmocka_unit_test(test_small_values_exact),
        cmocka_unit_test(test_wide_range),     cmocka_unit_test(test_every_single_value_within_bound),
        cmocka_unit_test(test_edge_cases),     cmocka_unit_test(test_merge_equals_single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
