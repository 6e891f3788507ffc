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

#include <math.h>
#include <stdlib.h>
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
    assert_null(json_object_get(g, "process_used_bytes")); /* the fake lists no process unless told */
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
    json_array_foreach(series, i, pt)
    {
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
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML,
                          "TALLY_SAMPLE_MS=10",
                          "FAKE_NVML_DEVICES=1",
                          "FAKE_NVML_TEMP=91",
                          "FAKE_NVML_POWER_MW=395000",
                          "FAKE_NVML_LIMIT_MW=400000",
                          "FAKE_NVML_THROTTLE=36",
                          NULL };
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
    json_array_foreach(series, i, pt)
    {
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
    const char *nolimit[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", "FAKE_NVML_LIMIT_MW=0",
                              NULL };
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
    json_array_foreach(series, i, pt) assert_int_equal(tt_len(pt, "gpus"), 0);
    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    assert_null(json_object_get(json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "c"), "sampler/gpu0"));
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

/* ---- issue 26 item 2: NVML hangs, is slow, answers garbage -------------- */

/* Three snapshots, each timed (the slowest on stdout as "slowest snapshot N
 * ms"), then time for a hung call to pass its deadline. */
static int body_timed_snapshots(void *arg)
{
    (void)arg;
    double slowest = 0;
    for (int i = 0; i < 3; i++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        tally_memory_snapshot("timed");
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
        if (ms > slowest)
            slowest = ms;
    }
    printf("slowest snapshot %.0f ms\n", slowest);
    struct timespec ts = { 0, 700 * 1000 * 1000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
    return 0;
}

static double slowest_snapshot_ms(const tt_scenario *s)
{
    double ms = -1;
    if (sscanf(s->out, "slowest snapshot %lf ms", &ms) != 1)
        fail_msg("no timing on stdout: %s", s->out);
    return ms;
}

/* NVML is never called on the program's own thread (main: tid == pid), with
 * or without the sampler: on the old code, snapshots and the report at exit
 * called it there. */
static void test_nvml_off_the_host_thread(void **state)
{
    (void)state;
    for (int sampler = 0; sampler < 2; sampler++) {
        tt_scenario s;
        char log[700], var[800];
        tt_begin(&s);
        snprintf(log, sizeof log, "%s/calls.txt", s.base);
        snprintf(var, sizeof var, "FAKE_NVML_CALLS=%s", log);
        const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, var,
                              sampler ? "TALLY_SAMPLE_MS=10" : "TALLY_SAMPLE_MS=0", NULL };
        assert_int_equal(tt_run(&s, env, body_gpu, NULL), 0);
        assert_string_equal(s.err, "");
        char *calls = tt_read_file(log, NULL);
        assert_non_null(strstr(calls, "nvmlInit_v2 "));
        assert_non_null(strstr(calls, "nvmlDeviceGetMemoryInfo "));
        assert_non_null(strstr(calls, "nvmlShutdown "));
        char host[64];
        snprintf(host, sizeof host, " %ld\n", (long)s.pid);
        if (strstr(calls, host) != NULL)
            fail_msg("NVML called on the main thread (tid %ld):\n%s", (long)s.pid, calls);
        free(calls);
        /* and the snapshot still has the readings */
        json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
        json_t *snap = json_array_get(json_object_get(r, "memory_snapshots"), 0);
        assert_int_equal(tt_len(snap, "gpus"), 2);
        expect_fake_gpu(json_array_get(json_object_get(snap, "gpus"), 0), 0, 0);
        json_decref(r);
        tt_end(&s);
    }
}

/* A call that never returns: the program goes on and ends as usual, every
 * snapshot waits TL_NVML_WAIT_MS at most, the report says NVML was
 * abandoned (or, hung in nvmlShutdown, has the readings) and stderr says it
 * once. On the old code the program blocks for good (killed at 60 s). */
static void test_nvml_hangs(void **state)
{
    (void)state;
    static const struct {
        const char *fn;
        int sampler, readings;
    } cases[] = {
        { "nvmlInit_v2", 0, 0 },
        { "nvmlDeviceGetMemoryInfo", 0, 0 },
        { "nvmlDeviceGetMemoryInfo", 1, 0 },
        { "nvmlDeviceGetComputeRunningProcesses_v3", 0, 0 }, /* the per-process figure: the same deadline */
        { "nvmlShutdown", 0, 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tt_scenario s;
        char var[200];
        snprintf(var, sizeof var, "FAKE_NVML_HANG=%s", cases[i].fn);
        const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, var,
                              cases[i].sampler ? "TALLY_SAMPLE_MS=10" : "TALLY_SAMPLE_MS=0", NULL };
        tt_begin(&s);
        double t0 = tt_now_s();
        int status = tt_run(&s, env, body_timed_snapshots, NULL);
        double took = tt_now_s() - t0;
        if (status != 0 || took > 10)
            fail_msg("hung in %s: exit %d after %.1f s", cases[i].fn, status, took);
        assert_true(slowest_snapshot_ms(&s) < 1000);
        json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
        json_t *sys = json_object_get(r, "system");
        if (cases[i].readings) {
            assert_string_equal(s.err, "");
            assert_string_equal(tt_str(sys, "nvml"), "loaded " TALLY_FAKE_NVML);
            assert_int_equal(tt_len(sys, "gpus"), 2);
        } else {
            char want[200];
            snprintf(want, sizeof want, "abandoned: %s did not return within", cases[i].fn);
            if (strncmp(tt_str(sys, "nvml"), want, strlen(want)) != 0)
                fail_msg("system.nvml is \"%s\", expected \"%s...\"", tt_str(sys, "nvml"), want);
            assert_int_equal(tt_len(sys, "gpus"), 0);
            assert_int_equal(tt_count_lines(s.err, "tally: NVML is not answering"), 1);
            assert_int_equal(tt_count_lines(s.err, ""), 1);
        }
        json_decref(r);
        const char *args[] = { s.dir, NULL };
        json_decref(tt_check(args));
        tt_end(&s);
    }
}

/* 200 ms a call (a whole reading of 2 devices: 25 calls, 5 s; the base clocks
 * once more): a snapshot
 * waits TL_NVML_WAIT_MS at most, not the reading (on the old code, >= 3.4 s
 * each), and NVML is slow, not abandoned. */
static void test_nvml_slow(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "FAKE_NVML_DELAY_MS=200", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_timed_snapshots, NULL), 0);
    assert_string_equal(s.err, "");
    double ms = slowest_snapshot_ms(&s);
    if (ms > 600)
        fail_msg("a snapshot took %.0f ms", ms);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_string_equal(tt_str(json_object_get(r, "system"), "nvml"), "loaded " TALLY_FAKE_NVML);
    json_decref(r);
    tt_end(&s);
}

/* Impossible values (4294967295 %, C and mW; more memory used than the
 * device has) are not readings: left out (memory as null), counted in
 * problems.nvml_values_rejected, absent from the trace's counters. On the
 * old code they were written as they came. */
static void test_nvml_garbage(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "TALLY_SAMPLE_MS=10", "FAKE_NVML_GARBAGE=1", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_gpu, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *gpus = json_object_get(json_object_get(r, "system"), "gpus");
    assert_int_equal(json_array_size(gpus), 2);
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        assert_true(json_is_null(json_object_get(g, "used_bytes")));
        assert_true(json_is_null(json_object_get(g, "total_bytes")));
        assert_null(json_object_get(g, "utilization_pct"));
        assert_null(json_object_get(g, "memory_utilization_pct"));
        assert_null(json_object_get(g, "temperature_c"));
        assert_null(json_object_get(g, "power_w"));
        assert_null(json_object_get(g, "power_limit_w"));
        assert_int_equal(tt_int(g, "throttle_reasons"), 0); /* a bit mask: any value is one */
    }
    /* 5 values a device (memory, utilization, temperature, power, limit), 2
     * devices, in every reading: the system block's, the snapshot's, the sampler's */
    long long rejected = tt_int(json_object_get(r, "problems"), "nvml_values_rejected");
    assert_true(rejected >= 10 * 3 && rejected % 10 == 0);
    json_t *pt;
    json_array_foreach(json_object_get(json_object_get(r, "sampler"), "series"), i, pt)
        assert_true(json_is_null(json_object_get(json_array_get(json_object_get(pt, "gpus"), 0), "used_bytes")));
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    /* no counter without a value */
    assert_null(json_object_get(json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "c"), "sampler/gpu0"));
    json_decref(sum);
    tt_end(&s);
}

/* ---- issue 28 item 2: the program's own GPU memory -------------------------- */

#define MIB (1024.0 * 1024)

/* Another process on the GPU takes 973 MiB once (from the 4th reading): the
 * device-wide used_bytes jumps by 973 MiB, this process's process_used_bytes
 * (NVML's per-process accounting, its own pid) stays at 512 MiB, in the
 * sampler, the snapshot and the trace's counters. On the old code there was
 * no process_used_bytes: only the device-wide figure. */
static void test_nvml_own_memory(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML,
                          "TALLY_SAMPLE_MS=10",
                          "FAKE_NVML_DEVICES=1",
                          "FAKE_NVML_OWN_MIB=512",
                          "FAKE_NVML_OTHER_MIB=100",
                          "FAKE_NVML_OTHER_JUMP_MIB=973",
                          "FAKE_NVML_OTHER_JUMP_AT=4",
                          NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_gpu, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *snap = json_array_get(json_object_get(r, "memory_snapshots"), 0);
    json_t *sg = json_array_get(json_object_get(snap, "gpus"), 0);
    assert_true(tt_num(sg, "process_used_bytes") == 512 * MIB);
    json_t *series = json_object_get(json_object_get(r, "sampler"), "series");
    assert_true(json_array_size(series) >= 4);
    size_t i;
    json_t *pt;
    int after = 0;
    json_array_foreach(series, i, pt)
    {
        json_t *g = json_array_get(json_object_get(pt, "gpus"), 0);
        assert_true(tt_num(g, "process_used_bytes") == 512 * MIB);
        double used = tt_num(g, "used_bytes");
        after += used == 10 * GIB + 973 * MIB;
        assert_true(used == 10 * GIB || used == 10 * GIB + 973 * MIB);
    }
    assert_true(after > 0);
    json_t *sys = json_array_get(json_object_get(json_object_get(r, "system"), "gpus"), 0);
    assert_true(tt_num(sys, "used_bytes") == 10 * GIB + 973 * MIB);
    assert_true(tt_num(sys, "process_used_bytes") == 512 * MIB);
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    json_t *gc = json_object_get(json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "c"), "sampler/gpu0");
    json_t *last = json_object_get(gc, "last");
    assert_true(tt_num(last, "process_memory_used_bytes") == 512 * MIB);
    assert_true(tt_num(last, "memory_used_bytes") == 10 * GIB + 973 * MIB);
    json_decref(sum);
    tt_end(&s);
}

/* A library without the _v3 entry point (drivers before CUDA 11): the first
 * one, whose records have no instance ids, read with their own size (the
 * other process is listed first, so a reader with the _v3 layout would miss
 * this one). The own process grows 8 MiB a reading: process_used_bytes rises. */
static void test_nvml_own_memory_v1(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML_V1,
                          "TALLY_SAMPLE_MS=10",
                          "FAKE_NVML_DEVICES=2",
                          "FAKE_NVML_OWN_MIB=256",
                          "FAKE_NVML_OWN_STEP_MIB=8",
                          "FAKE_NVML_OTHER_MIB=100",
                          NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_gpu, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *series = json_object_get(json_object_get(r, "sampler"), "series");
    assert_true(json_array_size(series) >= 2);
    size_t i;
    json_t *pt;
    double prev[2] = { 0, 0 };
    json_array_foreach(series, i, pt)
    {
        for (size_t d = 0; d < 2; d++) {
            json_t *g = json_array_get(json_object_get(pt, "gpus"), d);
            double own = tt_num(g, "process_used_bytes");
            assert_true(own >= 256 * MIB && own < 80 * GIB);
            assert_true(fmod(own, 8 * MIB) == 0);
            assert_true(own > prev[d]);
            /* the device-wide figure has the own process's growth in it */
            assert_true(tt_num(g, "used_bytes") == (double)(d + 1) * 10 * GIB + own - 256 * MIB);
            prev[d] = own;
        }
    }
    json_decref(r);
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fake_nvml, tt_teardown),
        cmocka_unit_test_teardown(test_fake_nvml_one_hot_gpu, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_absent, tt_teardown),
        cmocka_unit_test_teardown(test_not_nvml, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_off_the_host_thread, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_hangs, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_slow, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_garbage, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_own_memory, tt_teardown),
        cmocka_unit_test_teardown(test_nvml_own_memory_v1, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
