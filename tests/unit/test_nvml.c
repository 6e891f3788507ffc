/*
 * test_nvml.c - GPU readings through NVML (lib/nvml.c), with a fake library.
 *
 * TALLY_NVML_LIBRARY points at tests/unit/fake_nvml.c built as a shared
 * library, whose fixed readings (2 devices, 80 GiB with 10 and 20 GiB used,
 * 75 % / 40 % utilization, 60 C, 300000 mW) must appear exactly in the
 * report's system.gpus, in memory snapshots, in the sampler series (power in
 * W: 300) and in the sampler's trace counters. Without NVML (a path that does
 * not exist, or a library without the NVML entry points) the report says so
 * and has no GPUs, and nothing else changes.
 */
#include "collector_test_util.h"

#include <string.h>
#include <time.h>

#include "tally/tally.h"

#define GIB (1024.0 * 1024 * 1024)

static int body_gpu(void *arg)
{
    (void)arg;
    tally_memory_snapshot("gpu_snap");
    tally_begin("wait_for_samples");
    struct timespec ts = { 0, 150 * 1000 * 1000 }; /* ~15 points; >= 2 even on a loaded machine */
    while (nanosleep(&ts, &ts) != 0)
        ;
    tally_end();
    return 0;
}

/* A GPU object as the fake reports device i. */
static void expect_fake_gpu(json_t *g, int i, int with_name)
{
    assert_int_equal(tt_int(g, "index"), i);
    if (with_name)
        assert_string_equal(tt_str(g, "name"), i == 0 ? "Fake GPU 0" : "Fake GPU 1");
    else
        assert_null(json_object_get(g, "name"));
    assert_true(tt_num(g, "used_bytes") == (i + 1) * 10 * GIB);
    assert_true(tt_num(g, "total_bytes") == 80 * GIB);
    assert_true(tt_num(g, "utilization_pct") == 75);
    assert_true(tt_num(g, "memory_utilization_pct") == 40);
    assert_true(tt_num(g, "temperature_c") == 60);
    assert_true(tt_num(g, "power_w") == 300);
    assert_true(tt_num(g, "power_limit_w") == 400);
    assert_int_equal(tt_int(g, "throttle_reasons"), 0);
}

static void test_fake_nvml(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_gpu, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));

    json_t *sys = json_object_get(r, "system");
    assert_string_equal(tt_str(sys, "nvml"), "loaded " TALLY_FAKE_NVML);
    json_t *gpus = json_object_get(sys, "gpus");
    assert_int_equal(json_array_size(gpus), 2);
    for (int i = 0; i < 2; i++)
        expect_fake_gpu(json_array_get(gpus, (size_t)i), i, 1);

    json_t *snap = json_array_get(json_object_get(r, "memory_snapshots"), 0);
    assert_string_equal(tt_str(snap, "label"), "gpu_snap");
    assert_int_equal(tt_len(snap, "gpus"), 2);
    for (int i = 0; i < 2; i++)
        expect_fake_gpu(json_array_get(json_object_get(snap, "gpus"), (size_t)i), i, 0);

    json_t *sampler = json_object_get(r, "sampler");
    assert_int_equal(tt_int(sampler, "interval_ms"), 10);
    json_t *series = json_object_get(sampler, "series");
    assert_true(json_array_size(series) >= 2);
    size_t i;
    json_t *pt;
    json_array_foreach(series, i, pt) {
        assert_int_equal(tt_len(pt, "gpus"), 2);
        for (int g = 0; g < 2; g++)
            expect_fake_gpu(json_array_get(json_object_get(pt, "gpus"), (size_t)g), g, 0);
        assert_true(tt_num(pt, "rss_bytes") > 0);
    }

    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    json_t *c = json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "c");
    for (int g = 0; g < 2; g++) {
        json_t *gc = json_object_get(c, g == 0 ? "sampler/gpu0" : "sampler/gpu1");
        assert_int_equal(tt_int(gc, "count"), json_array_size(series));
        json_t *last = json_object_get(gc, "last");
        assert_true(tt_num(last, "power_w") == 300);
        assert_true(tt_num(last, "memory_used_bytes") == (g + 1) * 10 * GIB);
        assert_true(tt_num(last, "utilization_pct") == 75);
        assert_true(tt_num(last, "temperature_c") == 60);
    }
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

/* One GPU, hot, at its power cap and throttled, from the fake's environment:
 * what the thermal and power-at-cap rules read. */
static void test_fake_nvml_one_hot_gpu(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", "FAKE_NVML_DEVICES=1",
                          "FAKE_NVML_TEMP=91", "FAKE_NVML_POWER_MW=395000", "FAKE_NVML_LIMIT_MW=400000",
                          "FAKE_NVML_THROTTLE=36", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_gpu, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *gpus = json_object_get(json_object_get(r, "system"), "gpus");
    assert_int_equal(json_array_size(gpus), 1);
    json_t *series = json_object_get(json_object_get(r, "sampler"), "series");
    assert_true(json_array_size(series) >= 2);
    size_t i;
    json_t *pt;
    json_array_foreach(series, i, pt) {
        assert_int_equal(tt_len(pt, "gpus"), 1);
        json_t *g = json_array_get(json_object_get(pt, "gpus"), 0);
        assert_true(tt_num(g, "temperature_c") == 91);
        assert_true(tt_num(g, "power_w") == 395);
        assert_true(tt_num(g, "power_limit_w") == 400);
        assert_int_equal(tt_int(g, "throttle_reasons"), 36); /* software power cap + software thermal slowdown */
    }
    json_decref(r);
    tt_end(&s);

    /* a limit the device does not support is not written (the power-at-cap rule does not apply) */
    const char *nolimit[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", "FAKE_NVML_LIMIT_MW=0", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, nolimit, body_gpu, NULL), 0);
    r = tt_load_json(tt_report(&s, "t-rank0"));
    gpus = json_object_get(json_object_get(r, "system"), "gpus");
    assert_int_equal(json_array_size(gpus), 2);
    assert_null(json_object_get(json_array_get(gpus, 0), "power_limit_w"));
    json_decref(r);
    tt_end(&s);
}

static void expect_no_gpus(const char *library, const char *status_prefix)
{
    tt_scenario s;
    char var[600];
    snprintf(var, sizeof var, "TALLY_NVML_LIBRARY=%s", library);
    const char *env[] = { var, "TALLY_SAMPLE_MS=10", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_gpu, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *sys = json_object_get(r, "system");
    if (strncmp(tt_str(sys, "nvml"), status_prefix, strlen(status_prefix)) != 0)
        fail_msg("system.nvml is \"%s\", expected \"%s...\"", tt_str(sys, "nvml"), status_prefix);
    assert_int_equal(tt_len(sys, "gpus"), 0);
    assert_int_equal(tt_len(json_array_get(json_object_get(r, "memory_snapshots"), 0), "gpus"), 0);
    json_t *series = json_object_get(json_object_get(r, "sampler"), "series");
    assert_true(json_array_size(series) >= 2);
    size_t i;
    json_t *pt;
    json_array_foreach(series, i, pt)
        assert_int_equal(tt_len(pt, "gpus"), 0);
    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    assert_null(json_object_get(json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "c"),
                                "sampler/gpu0"));
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

static void test_nvml_absent(void **state)
{
    (void)state;
    expect_no_gpus("/nonexistent/libnvidia-ml.so.1", "absent");
    expect_no_gpus("/nonexistent", "absent");
}

static void test_not_nvml(void **state)
{
    (void)state;
    /* A real library without NVML's functions. */
    expect_no_gpus("libz.so.1", "libz.so.1 lacks the NVML entry points");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fake_nvml, tt_teardown),
        cmocka_unit_test_teardown(test_fake_nvml_one_hot_gpu, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_absent, tt_teardown),
        cmocka_unit_test_teardown(test_not_nvml, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
