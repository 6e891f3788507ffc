/*
 * test_telemetry.c - sampled series into bounded series, ranks and rows
 * across ranks (tools/analyze/telemetry.c).
 *
 * Profiles are built by hand (tl_profile_add_gpu_sample / add_point) with
 * numbers worked out on paper: the summary of every sample survives
 * downsampling, bins hold the lowest / mean / highest sample, energy is the
 * trapezoid rule, a rank adds up its GPUs' draw, and the cap on series is
 * reported, not silent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

#define S(x) ((int64_t)(x)*1000000000LL)

static void sample(tl_profile *p, int64_t ts, int64_t dev, double util, double temp, double power)
{
    tl_gpu_sample s = { ts, dev, NAN, NAN, util, temp, power, 0, 0, 0, NAN, 0, 0, 0 };
    assert_int_equal(tl_profile_add_gpu_sample(p, &s), 0);
}

static const tl_tseries *find(const tl_tseries *s, size_t n, int kind, int64_t dev)
{
    for (size_t i = 0; i < n; i++)
        if (s[i].kind == kind && s[i].device == dev)
            return &s[i];
    return NULL;
}

/* 10 000 samples over 1000 s: 120 bins, the exact summary, the ramp's bins in order. */
static void test_bounded_bins(void **state)
{
    (void)state;
    tl_profile p;
    tl_profile_init(&p, "x");
    for (int i = 0; i < 10000; i++)
        sample(&p, (int64_t)i * 100000000, 0, i % 10, 50 + i / 1000.0, 200);
    tl_tseries *s;
    size_t n;
    char *w;
    assert_int_equal(tl_telemetry_series(&p, 0, &s, &n, &w), 0);
    assert_null(w);
    assert_int_equal(n, 3); /* util, temperature, power: memory is NaN */
    const tl_tseries *u = find(s, n, TL_SERIES_GPU_UTIL, 0), *t = find(s, n, TL_SERIES_GPU_TEMP, 0);
    assert_non_null(u);
    assert_int_equal(u->nbins, TL_SERIES_BINS);
    assert_int_equal(u->n, 10000);
    assert_true(u->min == 0 && u->max == 9);
    assert_true(fabs(u->mean - 4.5) < 1e-9);
    for (int b = 0; b < u->nbins; b++) /* every bin holds ~83 samples: whole 0..9 cycles */
        assert_true(u->bmin[b] == 0 && u->bmax[b] == 9 && fabs(u->bmean[b] - 4.5) < 0.2);
    for (int b = 1; b < t->nbins; b++) /* a ramp: bins rise */
        assert_true(t->bmean[b] > t->bmean[b - 1]);
    assert_true(fabs(t->max - (50 + 9.999)) < 1e-9);
    /* 200 W over 999.9 s */
    const tl_tseries *pw = find(s, n, TL_SERIES_GPU_POWER, 0);
    assert_true(fabs(pw->energy_j - 200 * 999.9) < 1e-6);
    assert_true(isnan(u->energy_j));
    free(s);
    tl_profile_release(&p);
}

/* Trapezoids: 100 W then 300 W over 2 s is 400 J, not 200 or 600. */
static void test_energy_trapezoid(void **state)
{
    (void)state;
    tl_profile p;
    tl_profile_init(&p, "x");
    sample(&p, S(2), 0, NAN, NAN, 300); /* out of order: sorted by time */
    sample(&p, S(0), 0, NAN, NAN, 100);
    tl_tseries *s;
    size_t n;
    char *w;
    assert_int_equal(tl_telemetry_series(&p, S(10), &s, &n, &w), 0);
    assert_int_equal(n, 1);
    assert_true(fabs(s[0].energy_j - 400) < 1e-9);
    assert_true(s[0].start_ns == S(10) && s[0].end_ns == S(12)); /* on the axis: base added */
    tl_rank_telemetry t;
    tl_rank_telemetry_init(&t);
    tl_rank_telemetry_add(&t, s, n);
    tl_rank_telemetry_finish(&t);
    assert_true(fabs(t.power_w - 200) < 1e-9); /* 400 J over 2 s */
    assert_int_equal(t.gpus, 1);
    free(s);
    tl_profile_release(&p);
}

/* Two GPUs: per-GPU means and peaks, power added up; host points are host series. */
static void test_rank_two_gpus(void **state)
{
    (void)state;
    tl_profile p;
    tl_profile_init(&p, "x");
    for (int i = 0; i <= 10; i++) {
        sample(&p, S(i), 0, 90, 90, 500);
        sample(&p, S(i), 1, 50, 70, 300);
        assert_int_equal(tl_profile_add_point(&p, TL_SERIES_CPU, -1, S(i), i), 0);
    }
    assert_int_equal(tl_profile_add_point(&p, TL_SERIES_LOAD, -1, S(0), NAN), 0); /* not recorded */
    tl_tseries *s;
    size_t n;
    char *w;
    assert_int_equal(tl_telemetry_series(&p, 0, &s, &n, &w), 0);
    assert_int_equal(n, 7);
    assert_null(find(s, n, TL_SERIES_LOAD, -1));
    tl_rank_telemetry t;
    tl_rank_telemetry_init(&t);
    tl_rank_telemetry_add(&t, s, n);
    tl_rank_telemetry_finish(&t);
    assert_int_equal(t.gpus, 2);
    assert_true(t.mean[TL_SERIES_GPU_TEMP] == 80 && t.max[TL_SERIES_GPU_TEMP] == 90);
    assert_true(t.mean[TL_SERIES_GPU_POWER] == 400);
    assert_true(fabs(t.power_w - 800) < 1e-9);
    assert_true(fabs(t.energy_j - 8000) < 1e-9);
    assert_true(t.mean[TL_SERIES_CPU] == 5 && t.max[TL_SERIES_CPU] == 10);
    assert_int_equal(t.n[TL_SERIES_GPU_SM_CLOCK], 0);
    assert_true(isnan(t.mean[TL_SERIES_GPU_SM_CLOCK]));
    free(s);
    tl_profile_release(&p);
}

/* More than TL_SERIES_MAX series: the first are kept and a warning says how many were not. */
static void test_series_cap(void **state)
{
    (void)state;
    tl_profile p;
    tl_profile_init(&p, "x");
    for (int d = 0; d < 30; d++) /* 30 GPUs x 3 metrics = 90 series */
        sample(&p, S(1), d, 10, 20, 30);
    tl_tseries *s;
    size_t n;
    char *w;
    assert_int_equal(tl_telemetry_series(&p, 0, &s, &n, &w), 0);
    assert_int_equal(n, TL_SERIES_MAX);
    assert_non_null(w);
    assert_non_null(strstr(w, "26 series beyond the first 64 (TL_SERIES_MAX)"));
    free(w);
    free(s);
    tl_profile_release(&p);
}

/* A rate's mean is bytes over time. A sampler with a 10 ms period that woke
 * 8 ms late once, then on time: points at 0, 10, 28, 30, 40 ms. 2 MiB read
 * in each of the last four intervals: 200, 111.1, 1000, 200 MiB/s. The mean
 * of the points (~302 MiB/s) overstates it; the bytes over the time,
 * (0.01 * 0 + 8 MiB) / 50 ms (the first point weighted by the next
 * interval), is 160 MiB/s. A utilization keeps the mean of its points. */
static void test_rate_mean_is_bytes_over_time(void **state)
{
    (void)state;
    tl_profile p;
    tl_profile_init(&p, "x");
    const int64_t ms = 1000000;
    const int64_t t[] = { 0, 10 * ms, 28 * ms, 30 * ms, 40 * ms };
    const double mib = 1 << 20;
    const double rate[] = { 0, 2 * mib / 0.010, 2 * mib / 0.018, 2 * mib / 0.002, 2 * mib / 0.010 };
    for (int i = 0; i < 5; i++) {
        assert_int_equal(tl_profile_add_point(&p, TL_SERIES_DISK_READ, -1, t[i], rate[i]), 0);
        assert_int_equal(tl_profile_add_point(&p, TL_SERIES_CPU, -1, t[i], rate[i] / mib), 0);
    }
    tl_tseries *s;
    size_t n;
    char *w;
    assert_int_equal(tl_telemetry_series(&p, 0, &s, &n, &w), 0);
    const tl_tseries *rd = find(s, n, TL_SERIES_DISK_READ, -1), *cpu = find(s, n, TL_SERIES_CPU, -1);
    assert_non_null(rd);
    assert_non_null(cpu);
    assert_true(fabs(rd->mean - 8 * mib / 0.050) < 1e-3);
    assert_true(fabs(cpu->mean - (200 + 2 / 0.018 + 1000 + 200) / 5) < 1e-9);
    assert_true(rd->max == rate[3]);
    free(s);
    tl_profile_release(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounded_bins),
        cmocka_unit_test(test_energy_trapezoid),
        cmocka_unit_test(test_rank_two_gpus),
        cmocka_unit_test(test_series_cap),
        cmocka_unit_test(test_rate_mean_is_bytes_over_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
