/*
 * test_config.c - configuration from the environment, the profiling
 * schedule, and rank detection (lib/config.c).
 *
 * tally_config_from_env() must take every valid TALLY_* value, and for an
 * invalid one keep the default, name the variable on stderr and return
 * TALLY_EINVAL without disturbing the other variables. The schedule decides
 * which steps are recorded, checked step by step against the cycle of
 * torch.profiler's schedule. The rank comes from the first launcher variable
 * set, in the documented order, and the report names it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;

static const char *const rank_vars[] = {
    "RANK",     "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",    "PMIX_SIZE",
    "PMI_RANK", "PMI_SIZE",   "MV2_COMM_WORLD_RANK",  "MV2_COMM_WORLD_SIZE",  "SLURM_PROCID", "SLURM_NTASKS",
};

/* Start every test from an environment without TALLY_* or rank variables. */
static int clean_env(void **state)
{
    (void)state;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++) {
            if (strncmp(*e, "TALLY_", 6) == 0) {
                char name[256];
                size_t n = strcspn(*e, "=");
                snprintf(name, sizeof name, "%.*s", (int)n, *e);
                unsetenv(name);
                again = 1;
                break;
            }
        }
    }
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++)
        unsetenv(rank_vars[i]);
    return 0;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Run tally_config_from_env with stderr captured into err. */
static int from_env_capture(tally_config *cfg, char *err, size_t errlen)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = tally_config_from_env(cfg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(err, 1, errlen - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
    return rc;
}

static void test_defaults(void **state)
{
    (void)state;
    tally_config a, b;
    tally_config_init(&a);
    assert_int_equal(a.enable, 1);
    assert_string_equal(a.output_dir, ".");
    assert_null(a.name);
    assert_null(a.report_path);
    assert_null(a.trace_path);
    assert_int_equal(a.trace, 1);
    assert_int_equal(a.trace_gzip, 1);
    assert_int_equal(a.max_events, 1000000);
    assert_int_equal(a.max_samples, 10000);
    assert_int_equal(a.sample_ms, 0);
    assert_null(a.schedule);
    assert_int_equal(a.summary, 0);
    assert_string_equal(a.clock, "auto");
    /* With nothing set, from_env is the defaults and succeeds silently. */
    char err[1024];
    assert_int_equal(from_env_capture(&b, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_memory_equal(&a, &b, sizeof a);
}

static void test_valid_values(void **state)
{
    (void)state;
    setenv("TALLY_ENABLE", "0", 1);
    setenv("TALLY_OUTPUT_DIR", "/some/dir", 1);
    setenv("TALLY_NAME", "job", 1);
    setenv("TALLY_REPORT_PATH", "/r.json", 1);
    setenv("TALLY_TRACE_PATH", "/t.json", 1);
    setenv("TALLY_TRACE", "off", 1);
    setenv("TALLY_TRACE_GZIP", "false", 1);
    setenv("TALLY_MAX_EVENTS", "0", 1);
    setenv("TALLY_MAX_SAMPLES", "123", 1);
    setenv("TALLY_SAMPLE_MS", "250", 1);
    setenv("TALLY_SCHEDULE", "wait=1,warmup=1,active=3,repeat=1", 1);
    setenv("TALLY_SUMMARY", "yes", 1);
    setenv("TALLY_CLOCK", "monotonic", 1);
    tally_config c;
    char err[1024];
    assert_int_equal(from_env_capture(&c, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(c.enable, 0);
    assert_string_equal(c.output_dir, "/some/dir");
    assert_string_equal(c.name, "job");
    assert_string_equal(c.report_path, "/r.json");
    assert_string_equal(c.trace_path, "/t.json");
    assert_int_equal(c.trace, 0);
    assert_int_equal(c.trace_gzip, 0);
    assert_int_equal(c.max_events, 0);
    assert_int_equal(c.max_samples, 123);
    assert_int_equal(c.sample_ms, 250);
    assert_string_equal(c.schedule, "wait=1,warmup=1,active=3,repeat=1");
    assert_int_equal(c.summary, 1);
    assert_string_equal(c.clock, "monotonic");

    /* The other spellings of the booleans, and empty values meaning "unset". */
    setenv("TALLY_ENABLE", "true", 1);
    setenv("TALLY_TRACE", "on", 1);
    setenv("TALLY_TRACE_GZIP", "1", 1);
    setenv("TALLY_SUMMARY", "no", 1);
    setenv("TALLY_OUTPUT_DIR", "", 1);
    setenv("TALLY_MAX_EVENTS", "", 1);
    assert_int_equal(tally_config_from_env(&c), 0);
    assert_int_equal(c.enable, 1);
    assert_int_equal(c.trace, 1);
    assert_int_equal(c.trace_gzip, 1);
    assert_int_equal(c.summary, 0);
    assert_string_equal(c.output_dir, ".");
    assert_int_equal(c.max_events, 1000000);
}

/* Set one variable to a bad value: EINVAL, the default kept, one stderr line
 * naming it, and a valid variable set alongside still taken. */
static void expect_invalid(const char *var, const char *value)
{
    clean_env(NULL);
    /* a valid neighbour */
    setenv(strcmp(var, "TALLY_MAX_SAMPLES") ? "TALLY_MAX_SAMPLES" : "TALLY_MAX_EVENTS", "77", 1);
    setenv(var, value, 1);
    tally_config c, d;
    char err[1024];
    int rc = from_env_capture(&c, err, sizeof err);
    if (rc != TALLY_EINVAL)
        fail_msg("%s=%s: returned %d, not TALLY_EINVAL", var, value, rc);
    if (count_lines(err) != 1 || strstr(err, var) == NULL || strncmp(err, "tally: ", 7) != 0)
        fail_msg("%s=%s: stderr should be one line naming it, got: %s", var, value, err);
    tally_config_init(&d);
    if (strcmp(var, "TALLY_MAX_SAMPLES") == 0) {
        assert_int_equal(c.max_events, 77);
        assert_int_equal(c.max_samples, d.max_samples);
        return;
    }
    assert_int_equal(c.max_samples, 77);
    assert_int_equal(c.enable, d.enable);
    assert_int_equal(c.trace, d.trace);
    assert_int_equal(c.trace_gzip, d.trace_gzip);
    assert_int_equal(c.max_events, d.max_events);
    assert_int_equal(c.sample_ms, d.sample_ms);
    assert_null(c.schedule);
    assert_int_equal(c.summary, d.summary);
    assert_string_equal(c.clock, d.clock);
}

static void test_invalid_values(void **state)
{
    (void)state;
    expect_invalid("TALLY_ENABLE", "maybe");
    expect_invalid("TALLY_ENABLE", "2");
    expect_invalid("TALLY_TRACE", "enabled");
    expect_invalid("TALLY_TRACE_GZIP", "9");
    expect_invalid("TALLY_SUMMARY", "TRUE ");
    expect_invalid("TALLY_MAX_EVENTS", "abc");
    expect_invalid("TALLY_MAX_EVENTS", "-5");
    expect_invalid("TALLY_MAX_EVENTS", "10k");
    expect_invalid("TALLY_MAX_EVENTS", "99999999999999999999999");
    expect_invalid("TALLY_MAX_SAMPLES", "1.5");
    expect_invalid("TALLY_SAMPLE_MS", "-1");
    expect_invalid("TALLY_SCHEDULE", "wait=1,warmup=x");
    expect_invalid("TALLY_SCHEDULE", "active=0");
    expect_invalid("TALLY_CLOCK", "rdtsc");
    expect_invalid("TALLY_SAMPLE_GPU_MS", "fast");
    expect_invalid("TALLY_SAMPLE_CPU_MS", "-3");
    expect_invalid("TALLY_SAMPLE", "gpu,network");
    expect_invalid("TALLY_GPUS", "0,x");
    expect_invalid("TALLY_GPUS", "64");
    expect_invalid("TALLY_SAMPLE_POINTS", "3");
    expect_invalid("TALLY_FLUSH_S", "-1");
    expect_invalid("TALLY_PRESET", "fast");
}

/* The sampler's variables (issue 36): each part's period, the readings, the
 * devices, the budget, the flushes. */
static void test_sampler_values(void **state)
{
    (void)state;
    setenv("TALLY_SAMPLE_GPU_MS", "20", 1);
    setenv("TALLY_SAMPLE_CPU_MS", "500", 1);
    setenv("TALLY_SAMPLE", "gpu,disk", 1);
    setenv("TALLY_GPUS", "0,2", 1);
    setenv("TALLY_SAMPLE_POINTS", "5000", 1);
    setenv("TALLY_FLUSH_S", "3", 1);
    tally_config c;
    char err[1024];
    assert_int_equal(from_env_capture(&c, err, sizeof err), 0);
    assert_string_equal(err, "");
    assert_int_equal(c.sample_ms, 0);
    assert_int_equal(c.sample_gpu_ms, 20);
    assert_int_equal(c.sample_cpu_ms, 500);
    assert_string_equal(c.sample, "gpu,disk");
    assert_string_equal(c.gpus, "0,2");
    assert_int_equal(c.sample_points, 5000);
    assert_int_equal(c.flush_s, 3);
    assert_null(c.preset);

    unsigned mask;
    uint64_t gpus;
    char why[128];
    assert_int_equal(tl_sample_parse("gpu,disk", &mask, why, sizeof why), 0);
    assert_int_equal(mask, TL_SAMPLE_GPU | TL_SAMPLE_DISK);
    assert_int_equal(tl_sample_parse("load,cpu,memory", &mask, why, sizeof why), 0);
    assert_int_equal(mask, TL_SAMPLE_LOAD | TL_SAMPLE_CPU | TL_SAMPLE_MEMORY);
    assert_int_equal(tl_sample_parse("all", &mask, why, sizeof why), 0);
    assert_int_equal(mask, TL_SAMPLE_ALL);
    assert_int_equal(tl_sample_parse("none", &mask, why, sizeof why), 0);
    assert_int_equal(mask, 0);
    char words[64];
    tl_sample_format(TL_SAMPLE_GPU | TL_SAMPLE_LOAD, words, sizeof words);
    assert_string_equal(words, "gpu,load");
    tl_sample_format(TL_SAMPLE_ALL, words, sizeof words);
    assert_string_equal(words, "gpu,cpu,memory,disk,load");
    assert_int_equal(tl_sample_parse("gpu,", &mask, why, sizeof why), -1);
    assert_int_equal(tl_sample_parse("gpus", &mask, why, sizeof why), -1);
    assert_string_equal(why, "unknown reading \"gpus\"");
    assert_int_equal(tl_gpus_parse("0,2,63", &gpus, why, sizeof why), 0);
    assert_true(gpus == (1ull | 4ull | 1ull << 63));
    assert_int_equal(tl_gpus_parse("64", &gpus, why, sizeof why), -1);
    assert_int_equal(tl_gpus_parse("1,,2", &gpus, why, sizeof why), -1);
    assert_int_equal(tl_gpus_parse("-1", &gpus, why, sizeof why), -1);
}

/* The preset table: each row's values, documented in docs/collector.md as a
 * table row of the same numbers; an explicit variable overrides the preset. */
static void test_presets(void **state)
{
    (void)state;
    static const struct {
        const char *name, *row;
        long gpu_ms, cpu_ms;
        const char *sample;
        int trace;
        long max_samples;
        int summary;
        long flush_s;
    } rows[] = {
        { "dev", "| `dev` | 500 | 500 | all | 1 | 10000 | 1 | 0 |", 500, 500, NULL, 1, 10000, 1, 0 },
        { "prod", "| `prod` | 1000 | 5000 | gpu,cpu,memory | 0 | 1000 | 0 | 0 |", 1000, 5000, "gpu,cpu,memory", 0, 1000,
          0, 0 },
        { "debug", "| `debug` | 50 | 50 | all | 1 | 100000 | 1 | 10 |", 50, 50, NULL, 1, 100000, 1, 10 },
    };
    char *docs = NULL;
    FILE *f = fopen(TALLY_SOURCE_DIR "/docs/collector.md", "r");
    assert_non_null(f);
    size_t cap = 0;
    assert_true(getdelim(&docs, &cap, '\0', f) > 0);
    fclose(f);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        tally_config c;
        char err[1024];
        clean_env(NULL);
        setenv("TALLY_PRESET", rows[i].name, 1);
        assert_int_equal(from_env_capture(&c, err, sizeof err), 0);
        assert_string_equal(err, "");
        assert_string_equal(c.preset, rows[i].name);
        assert_int_equal(c.sample_gpu_ms, rows[i].gpu_ms);
        assert_int_equal(c.sample_cpu_ms, rows[i].cpu_ms);
        if (rows[i].sample)
            assert_string_equal(c.sample, rows[i].sample);
        else
            assert_null(c.sample);
        assert_int_equal(c.trace, rows[i].trace);
        assert_int_equal(c.max_samples, rows[i].max_samples);
        assert_int_equal(c.summary, rows[i].summary);
        assert_int_equal(c.flush_s, rows[i].flush_s);
        if (strstr(docs, rows[i].row) == NULL)
            fail_msg("docs/collector.md lacks the preset row %s", rows[i].row);
        /* the same through the API, on a config of the defaults */
        tally_config d;
        tally_config_init(&d);
        assert_int_equal(tally_config_preset(&d, rows[i].name), 0);
        assert_int_equal(d.sample_gpu_ms, rows[i].gpu_ms);
        assert_int_equal(d.flush_s, rows[i].flush_s);
    }
    free(docs);
    /* explicit variables win over the preset's values */
    clean_env(NULL);
    setenv("TALLY_PRESET", "prod", 1);
    setenv("TALLY_TRACE", "1", 1);
    setenv("TALLY_SAMPLE_CPU_MS", "250", 1);
    setenv("TALLY_SAMPLE", "cpu", 1);
    tally_config c;
    char err[1024];
    assert_int_equal(from_env_capture(&c, err, sizeof err), 0);
    assert_int_equal(c.trace, 1);
    assert_int_equal(c.sample_gpu_ms, 1000);
    assert_int_equal(c.sample_cpu_ms, 250);
    assert_string_equal(c.sample, "cpu");
    assert_int_equal(c.max_samples, 1000);
    /* TALLY_SAMPLE_MS set is the period of both parts, over the preset's */
    setenv("TALLY_SAMPLE_MS", "100", 1);
    unsetenv("TALLY_SAMPLE_CPU_MS");
    assert_int_equal(from_env_capture(&c, err, sizeof err), 0);
    assert_int_equal(c.sample_ms, 100);
    assert_int_equal(c.sample_gpu_ms, 0);
    assert_int_equal(c.sample_cpu_ms, 0);
    /* an unknown preset changes nothing */
    tally_config d;
    tally_config_init(&d);
    assert_int_equal(tally_config_preset(&d, "fast"), TALLY_EINVAL);
    tally_config e;
    tally_config_init(&e);
    assert_memory_equal(&d, &e, sizeof d);
}

static void test_schedule_parse(void **state)
{
    (void)state;
    tl_schedule s;
    assert_int_equal(tl_schedule_parse("wait=1,warmup=1,active=3,repeat=1", &s, NULL, 0), 0);
    assert_int_equal(s.set, 1);
    assert_int_equal(s.wait, 1);
    assert_int_equal(s.warmup, 1);
    assert_int_equal(s.active, 3);
    assert_int_equal(s.repeat, 1);
    /* Any order; missing keys 0, active 1. */
    assert_int_equal(tl_schedule_parse("repeat=2,wait=5", &s, NULL, 0), 0);
    assert_int_equal(s.wait, 5);
    assert_int_equal(s.warmup, 0);
    assert_int_equal(s.active, 1);
    assert_int_equal(s.repeat, 2);

    static const char *const bad[] = {
        "",
        "wait",
        "wait=",
        "wait=-1",
        "wait=1x",
        "foo=1",
        "active=0",
        "wait=1;active=2",
        "waitx=1",
        "wai=1",
        "active=99999999999999999999999",
        "=1",
        "wait=1,,active=2",
        /* issue 10 item 5: a trailing comma, duplicate keys, signs and values
         * whose sums or products overflowed a long (SIGFPE through step % 0) */
        "wait=1,",
        "active=3,",
        "wait=1,wait=2",
        "wait=+1",
        "wait= 1",
        "wait=9223372036854775807,warmup=9223372036854775807,active=2",
        "active=1000000001",
        "repeat=4611686018427387904,active=2,wait=2",
        "wait=3074457345618258602,warmup=3074457345618258602,active=3074457345618258604",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_schedule keep = { 1, 7, 7, 7, 7 };
        if (tl_schedule_parse(bad[i], &keep, NULL, 0) != TALLY_EINVAL)
            fail_msg("accepted schedule \"%s\"", bad[i]);
        assert_int_equal(keep.wait, 7); /* untouched on error */
    }
    assert_int_equal(tl_schedule_parse(NULL, &s, NULL, 0), TALLY_EINVAL);

    /* The reason is given, and the bound itself is accepted. */
    char why[128];
    tl_schedule keep = { 1, 7, 7, 7, 7 };
    assert_int_equal(tl_schedule_parse("wait=1,", &keep, why, sizeof why), TALLY_EINVAL);
    assert_string_equal(why, "trailing comma");
    assert_int_equal(tl_schedule_parse("wait=1,active=99999999999", &keep, why, sizeof why), TALLY_EINVAL);
    assert_string_equal(why, "active: 99999999999 is absurd (at most 1000000000 steps)");
    assert_int_equal(tl_schedule_parse("wait=1000000000,warmup=1000000000,active=1000000000,"
                                       "repeat=1000000000",
                                       &s, why, sizeof why),
                     0);
}

/* The largest schedule never overflows or divides by zero, whatever the step,
 * and a hand-made struct with a zero cycle records instead of raising SIGFPE. */
static void test_schedule_bounds(void **state)
{
    (void)state;
    tl_schedule s;
    assert_int_equal(tl_schedule_parse("wait=1000000000,warmup=1000000000,active=1000000000,"
                                       "repeat=1000000000",
                                       &s, NULL, 0),
                     0);
    assert_int_equal(tl_schedule_records(&s, 0), 0);
    assert_int_equal(tl_schedule_records(&s, 2000000000L), 1);
    assert_int_equal(tl_schedule_records(&s, 2999999999L), 1);
    assert_int_equal(tl_schedule_records(&s, 3000000000L), 0);
    assert_int_equal(tl_schedule_records(&s, LONG_MAX), 0);
    assert_int_equal(tl_schedule_records(&s, -1), 0);
    tl_schedule zero = { 1, 0, 0, 0, 0 };
    assert_int_equal(tl_schedule_records(&zero, 5), 1);
    tl_schedule wrap = { 1, LONG_MAX, LONG_MAX, 2, 0 };
    (void)tl_schedule_records(&wrap, 12345); /* no UB under UBSan, no SIGFPE */
}

static void expect_steps(const char *text, const char *pattern)
{
    tl_schedule s;
    assert_int_equal(tl_schedule_parse(text, &s, NULL, 0), 0);
    for (long i = 0; pattern[i]; i++) {
        int want = pattern[i] == '1';
        if (tl_schedule_records(&s, i) != want)
            fail_msg("%s: step %ld should %sbe recorded", text, i, want ? "" : "not ");
    }
}

static void test_schedule_records(void **state)
{
    (void)state;
    /* wait, warmup, then active; with repeat=1 nothing after the first cycle. */
    expect_steps("wait=1,warmup=1,active=3,repeat=1", "00111000000000000000");
    /* repeat=0: the cycle forever. */
    expect_steps("wait=1,warmup=1,active=3,repeat=0", "00111001110011100111");
    expect_steps("wait=1,warmup=1,active=3,repeat=2", "00111001110000000000");
    expect_steps("active=1", "11111111111111111111");
    expect_steps("wait=2,active=2,repeat=3", "0011001100110000");
    tl_schedule none = { 0 };
    for (long i = 0; i < 100; i++)
        assert_int_equal(tl_schedule_records(&none, i), 1); /* no schedule: all */
    tl_schedule s;
    tl_schedule_parse("wait=1,warmup=1,active=3,repeat=1", &s, NULL, 0);
    assert_int_equal(tl_schedule_records(&s, 1000000), 0);
}

static void expect_rank(int rank, int world, const char *source)
{
    tl_rank_info r;
    memset(&r, 0x55, sizeof r);
    tl_rank_detect(&r);
    if (r.rank != rank || r.world_size != world || strcmp(r.source, source) != 0)
        fail_msg("rank %d/%d from %s, expected %d/%d from %s", r.rank, r.world_size, r.source, rank, world, source);
}

static void test_rank_order(void **state)
{
    (void)state;
    expect_rank(0, 1, "default");
    /* All set: each unset reveals the next in the documented order. */
    setenv("SLURM_PROCID", "6", 1);
    setenv("SLURM_NTASKS", "60", 1);
    setenv("MV2_COMM_WORLD_RANK", "5", 1);
    setenv("MV2_COMM_WORLD_SIZE", "50", 1);
    setenv("PMI_RANK", "4", 1);
    setenv("PMI_SIZE", "40", 1);
    setenv("PMIX_RANK", "3", 1);
    setenv("PMIX_SIZE", "30", 1);
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "20", 1);
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "10", 1);
    expect_rank(1, 10, "RANK");
    unsetenv("RANK");
    expect_rank(2, 20, "OMPI_COMM_WORLD_RANK");
    unsetenv("OMPI_COMM_WORLD_RANK");
    expect_rank(3, 30, "PMIX_RANK");
    unsetenv("PMIX_RANK");
    expect_rank(4, 40, "PMI_RANK");
    unsetenv("PMI_RANK");
    expect_rank(5, 50, "MV2_COMM_WORLD_RANK");
    unsetenv("MV2_COMM_WORLD_RANK");
    expect_rank(6, 60, "SLURM_PROCID");
    unsetenv("SLURM_PROCID");
    expect_rank(0, 1, "default");
}

static void test_rank_values(void **state)
{
    (void)state;
    /* The size belongs to the variable that gave the rank, not another launcher's. */
    setenv("RANK", "3", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
    expect_rank(3, 0, "RANK"); /* world size unknown */
    setenv("WORLD_SIZE", "4", 1);
    expect_rank(3, 4, "RANK");
    setenv("WORLD_SIZE", "3", 1); /* rank must be below the size: unknown */
    expect_rank(3, 0, "RANK");
    setenv("WORLD_SIZE", "x", 1);
    expect_rank(3, 0, "RANK");
    /* A rank that is not a non-negative integer is skipped for the next variable. */
    setenv("RANK", "abc", 1);
    setenv("OMPI_COMM_WORLD_RANK", "7", 1);
    expect_rank(7, 8, "OMPI_COMM_WORLD_RANK");
    setenv("RANK", "-1", 1);
    expect_rank(7, 8, "OMPI_COMM_WORLD_RANK");
    setenv("RANK", "", 1);
    expect_rank(7, 8, "OMPI_COMM_WORLD_RANK");
    setenv("RANK", "0", 1);
    setenv("WORLD_SIZE", "1", 1);
    expect_rank(0, 1, "RANK");
}

/* Issue 26 item 10: a rank variable that cannot be a rank is refused and
 * counted (said on stderr by tl_rank_detect), never silently rank 0. */
static void test_rank_rejected_counted(void **state)
{
    (void)state;
    static const char *const bad[] = { "-1", "abc", "9999999999999", "+3", " 3", "3x", "2147483648" };
    tl_rank_info r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("RANK", bad[i], 1);
        if (tl_rank_detect(&r) != 1)
            fail_msg("RANK=\"%s\" not counted as refused", bad[i]);
        assert_string_equal(r.source, "default");
    }
    setenv("SLURM_PROCID", "5", 1);
    setenv("SLURM_NTASKS", "many", 1); /* a refused world size counts too */
    assert_int_equal(tl_rank_detect(&r), 2);
    assert_int_equal(r.rank, 5);
    assert_int_equal(r.world_size, 0);
    assert_string_equal(r.source, "SLURM_PROCID");
    setenv("RANK", "2147483647", 1);
    setenv("WORLD_SIZE", "0", 1);
    assert_int_equal(tl_rank_detect(&r), 0);
    assert_int_equal(r.rank, 2147483647);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, clean_env),
        cmocka_unit_test_setup(test_valid_values, clean_env),
        cmocka_unit_test_setup(test_invalid_values, clean_env),
        cmocka_unit_test_setup(test_sampler_values, clean_env),
        cmocka_unit_test_setup(test_presets, clean_env),
        cmocka_unit_test_setup(test_schedule_parse, clean_env),
        cmocka_unit_test_setup(test_schedule_records, clean_env),
        cmocka_unit_test_setup(test_schedule_bounds, clean_env),
        cmocka_unit_test_setup(test_rank_order, clean_env),
        cmocka_unit_test_setup(test_rank_values, clean_env),
        cmocka_unit_test_setup(test_rank_rejected_counted, clean_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
