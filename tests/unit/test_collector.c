/*
 * test_collector.c - libtally end to end through its public API.
 *
 * Each test runs a scenario in a forked child (collector_test_util.h): the
 * child configures the library through the environment or a tally_config,
 * records, and exits; the test reads the report with jansson, asserts the
 * numbers the scenario implies, and runs check_outputs.py (schema, trace
 * against report). Covered here: every recording call and what it produces,
 * rank detection and tally_set_rank, the schedule, the event budget, flush,
 * TALLY_ENABLE=0, init from a struct, invalid variables, the console summary
 * and calls after shutdown.
 */
#include "collector_test_util.h"

#include <pthread.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tally/tally.h"

/* Some work, so that durations are not all zero. */
static void spin(int n)
{
    volatile unsigned x = 0;
    for (int i = 0; i < n; i++)
        x += (unsigned)i * 2654435761u;
    (void)x; /* clang's -Wunused-but-set-variable */
}

/* A file of the output directory; "t-rank0.report.json" is the run's report
 * t-rank0.{pid}-{time}.report.json. */
static json_t *load_out(tt_scenario *s, const char *file)
{
    const char *path = tt_out(s, "%s", file);
    size_t n = strlen(file), x = strlen(".report.json");
    if (!tt_exists(path) && n > x && strcmp(file + n - x, ".report.json") == 0) {
        char stem[256];
        snprintf(stem, sizeof stem, "%.*s", (int)(n - x), file);
        path = tt_report(s, stem);
    }
    return tt_load_json(path);
}

static json_t *section(json_t *report, const char *list, const char *name)
{
    json_t *x = tt_find(json_object_get(report, list), "name", name);
    if (x == NULL)
        fail_msg("no %s entry named \"%s\"", list, name);
    return x;
}

static json_t *check_dir(tt_scenario *s)
{
    const char *args[] = { s->dir, NULL };
    return tt_check(args);
}

/* ---- every recording call --------------------------------------------- */

static const double alloc_amounts[2] = { 1048576, 2097152 };

static void fake_alloc_provider(tally_provider_sink *sink, void *user)
{
    const double *a = user;
    tally_provider_put(sink, "allocated", a[0]);
    tally_provider_put(sink, "reserved", a[1]);
}

static void greedy_provider(tally_provider_sink *sink, void *user)
{
    (void)user;
    for (int i = 0; i < 20; i++) { /* more than the 16 readings allowed per call */
        char key[16];
        snprintf(key, sizeof key, "k%02d", i);
        tally_provider_put(sink, key, i);
    }
}

static void silent_provider(tally_provider_sink *sink, void *user)
{
    (void)sink;
    (void)user;
}

static const char weird_name[] = "we\"ird\xff";

static int body_every_call(void *arg)
{
    (void)arg;
    TT_REQUIRE(tally_register_memory_provider("fakealloc", fake_alloc_provider, (void *)alloc_amounts) == 0);
    TT_REQUIRE(tally_register_memory_provider("greedy", greedy_provider, NULL) == 0);
    TT_REQUIRE(tally_register_memory_provider(NULL, silent_provider, NULL) == TALLY_EINVAL);
    TT_REQUIRE(tally_register_memory_provider("", silent_provider, NULL) == TALLY_EINVAL);
    TT_REQUIRE(tally_register_memory_provider("nofn", NULL, NULL) == TALLY_EINVAL);
    for (int i = 2; i < 8; i++)
        TT_REQUIRE(tally_register_memory_provider("silent", silent_provider, NULL) == 0);
    TT_REQUIRE(tally_register_memory_provider("ninth", silent_provider, NULL) == TALLY_EFULL);

    TT_REQUIRE(tally_tag("model", "sd") == 0);
    TT_REQUIRE(tally_tag("model", "sdxl") == 0); /* replaces */
    TT_REQUIRE(tally_tag("batch", "4") == 0);
    TT_REQUIRE(tally_tag(NULL, "x") == TALLY_EINVAL);
    TT_REQUIRE(tally_tag("", "x") == TALLY_EINVAL);
    TT_REQUIRE(tally_tag("k", NULL) == TALLY_EINVAL);
    for (int i = 0; i < 62; i++) {
        char key[16];
        snprintf(key, sizeof key, "t%d", i);
        TT_REQUIRE(tally_tag(key, "v") == 0);
    }
    TT_REQUIRE(tally_tag("one_too_many", "v") == TALLY_EFULL);
    TT_REQUIRE(tally_tag("batch", "8") == 0); /* replacing still works when full */

    TT_REQUIRE(!tally_enabled()); /* tags and providers do not initialize */
    for (int i = 0; i < 10; i++) {
        TALLY_SCOPE("outer");
        tally_begin("inner");
        spin(2000);
        tally_end();
        tally_counter("tokens", i + 1);
    }
    TT_REQUIRE(tally_enabled()); /* the first recording call did */
    for (int i = 0; i < 4; i++) {
        tally_iteration_begin("step");
        spin(5000);
        tally_iteration_end("step");
    }
    tally_memory_snapshot("after_load");
    tally_event("checkpoint", "{\"epoch\":3}");
    tally_event("note", "not json \"quoted\"");
    tally_event("none", NULL);

    char buf[16]; /* one buffer reused for different names */
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof buf, "dyn%d", i);
        tally_begin(buf);
        tally_end();
    }
    tally_begin(weird_name);
    tally_end();
    char long_name[2001];
    memset(long_name, 'L', 2000);
    long_name[2000] = '\0';
    tally_begin(long_name);
    tally_end();

    tally_end();                        /* nothing open: unmatched */
    tally_iteration_end("never_begun"); /* unmatched too */
    tally_begin("left_open");           /* closed by shutdown: "unclosed" */
    tally_iteration_begin("open_loop"); /* unclosed too */
    tally_step();
    tally_step();
    return 0;
}

static void test_every_call(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_every_call, NULL), 0);
    assert_string_equal(s.err, "");
    assert_true(tt_exists(tt_report(&s, "t-rank0")));
    assert_true(tt_exists(tt_trace(&s, "t-rank0")));
    json_t *r = load_out(&s, "t-rank0.report.json");

    assert_string_equal(tt_str(r, "format"), "tally-report");
    assert_int_equal(tt_int(r, "version"), TALLY_REPORT_VERSION);
    assert_string_equal(tt_str(r, "name"), "t");
    assert_int_equal(tt_int(r, "rank"), 0);
    assert_int_equal(tt_int(r, "world_size"), 1);
    assert_string_equal(tt_str(r, "rank_source"), "default");
    assert_int_equal(tt_int(r, "pid"), s.pid);
    assert_true(json_is_false(json_object_get(r, "fork_child")));
    assert_int_equal(tt_int(r, "threads"), 1);
    assert_int_equal(tt_int(r, "steps"), 2);
    assert_true(json_is_null(json_object_get(r, "schedule")));
    assert_true(json_is_null(json_object_get(r, "sampler")));

    json_t *outer = section(r, "sections", "outer"), *inner = section(r, "sections", "inner");
    assert_int_equal(tt_int(outer, "count"), 10);
    assert_int_equal(tt_int(inner, "count"), 10);
    assert_true(tt_int(outer, "total_ns") >= tt_int(inner, "total_ns")); /* nested */
    assert_true(tt_int(inner, "total_ns") > 0);
    for (json_t *x = outer; x; x = x == outer ? inner : NULL) {
        double mean = tt_num(x, "mean_ns");
        assert_true(fabs(mean * 10 - (double)tt_int(x, "total_ns")) <= 10 * 0.05 + 1);
        assert_true(tt_int(x, "min_ns") <= tt_num(x, "median_ns"));
        assert_true(tt_num(x, "median_ns") <= tt_num(x, "p95_ns"));
        assert_true(tt_num(x, "p95_ns") <= tt_int(x, "max_ns"));
        assert_int_equal(tt_len(x, "samples_ns"), 10);
        assert_int_equal(tt_int(x, "samples_dropped"), 0);
        long long sum = 0;
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(x, "samples_ns"), i, v) sum += json_integer_value(v);
        assert_true(llabs(sum - tt_int(x, "total_ns")) <= 10); /* rounding, 1 ns each */
    }
    /* Sorted by total time, descending. */
    json_t *secs = json_object_get(r, "sections");
    for (size_t i = 1; i < json_array_size(secs); i++)
        assert_true(tt_int(json_array_get(secs, i - 1), "total_ns") >= tt_int(json_array_get(secs, i), "total_ns"));
    assert_null(tt_find(secs, "name", "left_open"));
    assert_null(tt_find(json_object_get(r, "iterations"), "name", "open_loop"));
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "dyn%d", i);
        assert_int_equal(tt_int(section(r, "sections", name), "count"), 1);
    }
    section(r, "sections", "we\"ird\xef\xbf\xbd"); /* escaped, invalid byte replaced */
    size_t longest = 0;
    size_t i;
    json_t *v;
    json_array_foreach(secs, i, v) if (strlen(tt_str(v, "name")) > longest) longest = strlen(tt_str(v, "name"));
    assert_int_equal(longest, 1024); /* names are cut at TL_MAX_NAME_LEN */
    assert_int_equal(json_array_size(secs), 2 + 3 + 1 + 1);

    json_t *step = section(r, "iterations", "step");
    assert_int_equal(tt_int(step, "count"), 4);
    assert_true(fabs(tt_num(step, "it_per_s") - 1e9 / tt_num(step, "mean_ns")) <= 1e-3 * tt_num(step, "it_per_s"));
    assert_int_equal(json_array_size(json_object_get(r, "iterations")), 1);

    json_t *tokens = section(r, "counters", "tokens");
    assert_int_equal(tt_int(tokens, "count"), 10);
    assert_true(tt_num(tokens, "sum") == 55);
    assert_true(tt_num(tokens, "mean") == 5.5);
    assert_true(tt_num(tokens, "min") == 1);
    assert_true(tt_num(tokens, "max") == 10);
    assert_true(tt_num(tokens, "last") == 10);
    assert_true(fabs(tt_num(tokens, "std") - 3.0276503540974917) < 1e-12); /* sample std of 1..10 */

    json_t *snaps = json_object_get(r, "memory_snapshots");
    assert_int_equal(json_array_size(snaps), 1);
    json_t *snap = json_array_get(snaps, 0);
    assert_string_equal(tt_str(snap, "label"), "after_load");
    assert_true(tt_num(snap, "rss_bytes") > 1e6);
    assert_true(tt_num(snap, "peak_rss_bytes") >= tt_num(snap, "rss_bytes"));
    assert_true(tt_num(snap, "system_total_bytes") >= tt_num(snap, "system_available_bytes"));
    json_t *prov = json_object_get(snap, "providers");
    assert_true(tt_num(prov, "fakealloc.allocated") == 1048576);
    assert_true(tt_num(prov, "fakealloc.reserved") == 2097152);
    assert_true(tt_num(prov, "greedy.k15") == 15);
    assert_null(json_object_get(prov, "greedy.k16")); /* 16 readings per provider and call */
    assert_int_equal(json_object_size(prov), 2 + 16);
    assert_int_equal(json_array_size(json_object_get(snap, "gpus")), 0);

    json_t *events = json_object_get(r, "events");
    assert_int_equal(json_array_size(events), 3);
    json_t *cp = tt_find(events, "name", "checkpoint"), *note = tt_find(events, "name", "note");
    assert_int_equal(tt_int(json_object_get(cp, "args"), "epoch"), 3);
    assert_string_equal(tt_str(json_object_get(note, "args"), "text"), "not json \"quoted\"");
    assert_int_equal(json_object_size(json_object_get(tt_find(events, "name", "none"), "args")), 0);
    assert_int_equal(tt_int(r, "events_dropped"), 0);

    json_t *tags = json_object_get(r, "tags");
    assert_int_equal(json_object_size(tags), 64);
    assert_string_equal(tt_str(tags, "model"), "sdxl");
    assert_string_equal(tt_str(tags, "batch"), "8");
    assert_null(json_object_get(tags, "one_too_many"));

    json_t *problems = json_object_get(r, "problems");
    assert_int_equal(tt_int(problems, "unmatched_ends"), 2);
    assert_int_equal(tt_int(problems, "unclosed"), 2);
    assert_int_equal(tt_int(problems, "names_overflowed"), 0);

    json_t *trace = json_object_get(r, "trace");
    assert_true(json_is_true(json_object_get(trace, "enabled")));
    assert_string_equal(tt_str(trace, "path"), tt_trace(&s, "t-rank0"));
    /* 10 outer + 10 inner + 10 tokens + 4 step + 3 dyn + weird + long */
    assert_int_equal(tt_int(trace, "events_recorded"), 39);
    assert_int_equal(tt_int(trace, "events_dropped"), 0);

    json_t *sum = check_dir(&s);
    json_t *one = tt_summary_of(sum, "t-rank0.report.json");
    json_t *x = json_object_get(one, "x");
    assert_int_equal(tt_int(json_object_get(x, "section/outer"), "count"), 10);
    assert_int_equal(tt_int(json_object_get(x, "iteration/step"), "count"), 4);
    assert_int_equal(tt_int(json_object_get(json_object_get(one, "c"), "counter/tokens"), "count"), 10);
    assert_int_equal(tt_int(json_object_get(one, "i"), "memory/after_load"), 1);
    assert_int_equal(tt_int(json_object_get(one, "i"), "event/note"), 1);
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

/* ---- rank --------------------------------------------------------------- */

static int body_small(void *arg)
{
    (void)arg;
    tally_begin("work");
    spin(1000);
    tally_end();
    return 0;
}

static int body_set_rank_late(void *arg)
{
    (void)arg;
    tally_begin("work");
    tally_end();
    tally_set_rank(5, 16); /* after recording: the files use the rank at write time */
    return 0;
}

static void expect_rank_files(const char *const *env, tt_body body, const char *file, int rank, int world,
                              const char *source)
{
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body, NULL), 0);
    assert_int_equal(tt_count_files(s.dir, ".report.json"), 1);
    json_t *r = load_out(&s, file);
    assert_int_equal(tt_int(r, "rank"), rank);
    if (world > 0)
        assert_int_equal(tt_int(r, "world_size"), world);
    else
        assert_true(json_is_null(json_object_get(r, "world_size")));
    assert_string_equal(tt_str(r, "rank_source"), source);
    json_t *sum = check_dir(&s); /* also compares the trace's distributedInfo */
    json_t *di = json_object_get(tt_summary_of(sum, file), "distributedInfo");
    assert_int_equal(tt_int(di, "rank"), rank);
    assert_int_equal(tt_int(di, "world_size"), world > 0 ? world : 1);
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

static void test_rank(void **state)
{
    (void)state;
    const char *ompi[] = { "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=8", "SLURM_PROCID=7", "SLURM_NTASKS=9",
                           NULL };
    expect_rank_files(ompi, body_small, "t-rank3.report.json", 3, 8, "OMPI_COMM_WORLD_RANK");
    const char *slurm[] = { "SLURM_PROCID=7", "SLURM_NTASKS=9", NULL };
    expect_rank_files(slurm, body_small, "t-rank7.report.json", 7, 9, "SLURM_PROCID");
    const char *no_size[] = { "RANK=2", NULL };
    expect_rank_files(no_size, body_small, "t-rank2.report.json", 2, 0, "RANK");
    const char *torch[] = { "RANK=1", "WORLD_SIZE=2", NULL };
    expect_rank_files(torch, body_set_rank_late, "t-rank5.report.json", 5, 16, "tally_set_rank");
}

/* ---- schedule ------------------------------------------------------------ */

static int body_schedule(void *arg)
{
    int steps = *(const int *)arg;
    for (int i = 0; i < steps; i++) {
        if (i == 0)
            tally_memory_snapshot("during_wait"); /* snapshots are always recorded */
        tally_begin("s");
        spin(500);
        tally_end();
        tally_counter("c", i);
        tally_iteration_begin("it");
        tally_iteration_end("it");
        tally_step();
    }
    return 0;
}

static void expect_schedule(const char *schedule, int steps, int recorded)
{
    tt_scenario s;
    char var[128];
    snprintf(var, sizeof var, "TALLY_SCHEDULE=%s", schedule);
    const char *env[] = { var, NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_schedule, &steps), 0);
    json_t *r = load_out(&s, "t-rank0.report.json");
    assert_int_equal(tt_int(section(r, "sections", "s"), "count"), recorded);
    assert_int_equal(tt_int(section(r, "counters", "c"), "count"), recorded);
    assert_int_equal(tt_int(section(r, "iterations", "it"), "count"), recorded);
    assert_int_equal(tt_int(r, "steps"), steps);
    json_t *sched = json_object_get(r, "schedule");
    assert_int_equal(tt_int(sched, "recorded_steps"), recorded);
    assert_int_equal(tt_int(sched, "wait"), 1);
    assert_int_equal(tt_int(sched, "warmup"), 1);
    assert_int_equal(tt_int(sched, "active"), 3);
    assert_string_equal(tt_str(json_object_get(r, "config"), "schedule"), schedule);
    assert_int_equal(tt_len(r, "memory_snapshots"), 1);
    json_t *sum = check_dir(&s);
    assert_int_equal(
        tt_int(json_object_get(json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "x"), "section/s"), "count"),
        recorded);
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

static void test_schedule(void **state)
{
    (void)state;
    /* Steps 2, 3, 4 of 0..9 are active; nothing after the one cycle. */
    expect_schedule("wait=1,warmup=1,active=3,repeat=1", 10, 3);
    /* repeat=0: cycles forever; of 12 steps, 2-4 and 7-9 are active. */
    expect_schedule("wait=1,warmup=1,active=3,repeat=0", 12, 6);
}

/* ---- the event budget ---------------------------------------------------- */

static int body_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < 5000; i++) {
        tally_begin("d");
        tally_end();
        if (i % 10 == 0)
            tally_counter("dc", i);
    }
    return 0;
}

static void test_dropped_events(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_MAX_EVENTS=1000", "TALLY_MAX_SAMPLES=100", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_many, NULL), 0);
    json_t *r = load_out(&s, "t-rank0.report.json");
    json_t *d = section(r, "sections", "d");
    assert_int_equal(tt_int(d, "count"), 5000);           /* statistics are complete */
    assert_int_equal(tt_len(d, "samples_ns"), 100);       /* samples bounded... */
    assert_int_equal(tt_int(d, "samples_dropped"), 4900); /* ...and the rest counted */
    assert_int_equal(tt_int(section(r, "counters", "dc"), "count"), 500);
    json_t *trace = json_object_get(r, "trace");
    assert_int_equal(tt_int(trace, "events_recorded"), 1000);
    assert_int_equal(tt_int(trace, "events_dropped"), 5000 + 500 - 1000);
    assert_int_equal(tt_int(trace, "max_events"), 1000);
    json_t *sum = check_dir(&s);
    json_t *one = tt_summary_of(sum, "t-rank0.report.json");
    long long xd = tt_int(json_object_get(json_object_get(one, "x"), "section/d"), "count");
    long long cd = tt_int(json_object_get(json_object_get(one, "c"), "counter/dc"), "count");
    assert_int_equal(xd + cd, 1000);
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

/* ---- flush --------------------------------------------------------------- */

static int body_flush(void *arg)
{
    tt_scenario *s = arg;
    tally_begin("outer");
    for (int i = 0; i < 100; i++) {
        tally_begin("a");
        tally_end();
    }
    TT_REQUIRE(tally_flush() == 0);
    /* Keep the flushed files under names the final write will not touch. */
    TT_REQUIRE(rename(tt_report(s, "t-rank0"), tt_out(s, "mid.json")) == 0);
    TT_REQUIRE(rename(tt_trace(s, "t-rank0"), tt_out(s, "mid.trace.gz")) == 0);
    for (int i = 0; i < 150; i++) {
        tally_begin("a");
        tally_end();
    }
    tally_end();
    return 0;
}

static void test_flush(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_flush, &s), 0);
    json_t *mid = load_out(&s, "mid.json"), *fin = load_out(&s, "t-rank0.report.json");
    assert_int_equal(tt_int(section(mid, "sections", "a"), "count"), 100);
    assert_null(tt_find(json_object_get(mid, "sections"), "name", "outer"));
    assert_int_equal(tt_int(json_object_get(mid, "problems"), "unclosed"), 1);
    assert_int_equal(tt_int(section(fin, "sections", "a"), "count"), 250);
    assert_int_equal(tt_int(section(fin, "sections", "outer"), "count"), 1);
    assert_int_equal(tt_int(json_object_get(fin, "problems"), "unclosed"), 0);
    assert_true(tt_int(fin, "duration_ns") >= tt_int(mid, "duration_ns"));
    const char *mid_args[] = { "--trace", tt_out(&s, "mid.trace.gz"), tt_out(&s, "mid.json"), NULL };
    json_t *sum = tt_check(mid_args);
    assert_int_equal(
        tt_int(json_object_get(json_object_get(tt_summary_of(sum, "mid.json"), "x"), "section/a"), "count"), 100);
    json_decref(sum);
    json_decref(check_dir(&s));
    json_decref(mid);
    json_decref(fin);
    tt_end(&s);
}

/* ---- disabled at run time, init from a struct, bad variables --------------- */

static int body_disabled(void *arg)
{
    (void)arg;
    tally_begin("a"); /* the first call initializes from the environment */
    tally_end();
    TT_REQUIRE(!tally_enabled());
    TT_REQUIRE(tally_init(NULL) == TALLY_ESTATE); /* already initialized (off) */
    for (int i = 0; i < 1000; i++) {
        TALLY_SCOPE("b");
        tally_counter("c", i);
        tally_iteration_begin("it");
        tally_iteration_end("it");
    }
    tally_memory_snapshot("m");
    tally_event("e", "{}");
    tally_step();
    TT_REQUIRE(tally_flush() == TALLY_ESTATE);
    TT_REQUIRE(tally_shutdown() == 0);
    return 0;
}

static void test_disabled_at_run_time(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_ENABLE=0", "TALLY_SAMPLE_MS=1", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_disabled, NULL), 0);
    assert_int_equal(tt_count_files(s.dir, ""), 0);
    assert_string_equal(s.err, "");
    tt_end(&s);
}

static int body_struct_config(void *arg)
{
    (void)arg;
    tally_config c;
    tally_config_init(&c);
    char dir[600];
    snprintf(dir, sizeof dir, "%s", getenv("TALLY_OUTPUT_DIR"));
    c.output_dir = dir;
    c.name = "fromstruct";
    c.trace = 0;
    c.max_samples = 3;
    TT_REQUIRE(tally_init(&c) == 0);
    memset(dir, 0, sizeof dir); /* strings are copied by tally_init */
    TT_REQUIRE(tally_init(NULL) == TALLY_ESTATE);
    TT_REQUIRE(tally_enabled());
    for (int i = 0; i < 5; i++) {
        tally_begin("a");
        tally_end();
    }
    return 0;
}

static void test_init_from_struct(void **state)
{
    (void)state;
    tt_scenario s;
    /* The struct wins over the environment. */
    const char *env[] = { "TALLY_NAME=envname", "TALLY_TRACE=1", "TALLY_MAX_SAMPLES=50", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_struct_config, NULL), 0);
    assert_int_equal(tt_count_files(s.dir, ""), 1);
    json_t *r = load_out(&s, "fromstruct-rank0.report.json");
    assert_string_equal(tt_str(r, "name"), "fromstruct");
    json_t *cfg = json_object_get(r, "config");
    assert_true(json_is_false(json_object_get(cfg, "trace")));
    assert_int_equal(tt_int(cfg, "max_samples"), 3);
    assert_int_equal(tt_len(section(r, "sections", "a"), "samples_ns"), 3);
    json_t *trace = json_object_get(r, "trace");
    assert_true(json_is_null(json_object_get(trace, "path")));
    json_decref(check_dir(&s));
    json_decref(r);
    tt_end(&s);
}

static void test_invalid_variable(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_MAX_EVENTS=abc", "TALLY_MAX_SAMPLES=7", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_small, NULL), 0);
    assert_int_equal(tt_count_lines(s.err, "tally:"), 1);
    assert_non_null(strstr(s.err, "TALLY_MAX_EVENTS=abc"));
    json_t *r = load_out(&s, "t-rank0.report.json");
    json_t *cfg = json_object_get(r, "config");
    assert_int_equal(tt_int(cfg, "max_events"), 1000000); /* default kept */
    assert_int_equal(tt_int(cfg, "max_samples"), 7);      /* the valid one taken */
    json_decref(r);
    tt_end(&s);
}

/* ---- summary, calls after shutdown ----------------------------------------- */

static int body_summary(void *arg)
{
    (void)arg;
    tally_register_memory_provider("fakealloc", fake_alloc_provider, (void *)alloc_amounts);
    for (int i = 0; i < 3; i++) {
        tally_begin("summarized_section");
        spin(1000);
        tally_end();
        tally_iteration_begin("summarized_loop");
        tally_iteration_end("summarized_loop");
    }
    tally_memory_snapshot("summarized_snapshot");
    return 0;
}

static void test_summary(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_SUMMARY=1", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_summary, NULL), 0);
    assert_non_null(strstr(s.err, "TOP SECTIONS BY TOTAL TIME (rank 0)"));
    assert_non_null(strstr(s.err, "summarized_section"));
    assert_non_null(strstr(s.err, "MEMORY SNAPSHOTS"));
    assert_non_null(strstr(s.err, "summarized_snapshot"));
    assert_non_null(strstr(s.err, "fakealloc.allocated=1.0 MiB")); /* units.h, as every output */
    assert_non_null(strstr(s.err, "ITERATIONS"));
    assert_non_null(strstr(s.err, "summarized_loop"));
    assert_null(strstr(s.err, "dropped"));
    assert_int_equal(tt_count_lines(s.out, ""), 0); /* stdout untouched */
    tt_end(&s);
}

static int body_after_shutdown(void *arg)
{
    (void)arg;
    tally_begin("before");
    tally_end();
    TT_REQUIRE(tally_shutdown() == 0);
    TT_REQUIRE(!tally_enabled());
    tally_begin("late");
    tally_end();
    tally_counter("late_counter", 1);
    tally_memory_snapshot("late_snapshot");
    tally_event("late_event", NULL);
    TT_REQUIRE(tally_flush() == TALLY_ESTATE);
    TT_REQUIRE(tally_shutdown() == 0); /* idempotent */
    return 0;
}

static void test_after_shutdown(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_after_shutdown, NULL), 0);
    json_t *r = load_out(&s, "t-rank0.report.json");
    assert_int_equal(tt_len(r, "sections"), 1);
    section(r, "sections", "before");
    assert_int_equal(tt_len(r, "counters"), 0);
    assert_int_equal(tt_len(r, "memory_snapshots"), 0);
    assert_int_equal(tt_len(r, "events"), 0);
    json_decref(check_dir(&s));
    json_decref(r);
    tt_end(&s);
}

/* ---- issue 10 item 11: nothing dropped without a count -------------------- */

/* Ends before anything began (the first calls of the program, so they also
 * initialize the library), sections nested beyond 256, a negative rank. */
/* ---- the begin/end pair's fast path and its general path --------------- */

/* A buffer reused for names of each length around the 32 bytes the fast
 * path compares at once (collector.c, internal.h tl_name_is_short): each
 * text twice, then its last byte changed; NULL names once the name cache is
 * warm; names that end at the end of a readable page. */
static const size_t fast_lens[] = { 1, 15, 16, 20, 31, 32, 33, 40 };

static int body_fast_path(void *arg)
{
    (void)arg;
    char buf[64];
    for (size_t i = 0; i < sizeof fast_lens / sizeof fast_lens[0]; i++) {
        memset(buf, 0, sizeof buf);
        memset(buf, 'a', fast_lens[i]);
        for (int k = 0; k < 2; k++) {
            tally_begin(buf);
            tally_end();
        }
        buf[fast_lens[i] - 1] = 'b';
        tally_begin(buf);
        tally_end();
    }
    for (int k = 0; k < 3; k++) {
        tally_begin(NULL);
        tally_end();
    }
    long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + page, (size_t)page, PROT_NONE) != 0)
        return 1;
    for (int n = 1; n <= 40; n++) {
        char *name = map + page - n; /* its NUL is the page's last byte */
        memset(name, 'p', (size_t)n - 1);
        name[n - 1] = '\0';
        tally_begin(name);
        tally_end();
    }
    return 0;
}

static void check_fast_path(const char *clock)
{
    tt_scenario s;
    const char *env[] = { clock, NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_fast_path, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = load_out(&s, "t-rank0.report.json");
    assert_string_equal(tt_str(json_object_get(r, "clock"), "source"),
                        strcmp(clock, "TALLY_CLOCK=tsc") == 0 ? "tsc" : "CLOCK_MONOTONIC");
    char name[64];
    for (size_t i = 0; i < sizeof fast_lens / sizeof fast_lens[0]; i++) {
        memset(name, 0, sizeof name);
        memset(name, 'a', fast_lens[i]);
        assert_int_equal(tt_int(section(r, "sections", name), "count"), 2);
        name[fast_lens[i] - 1] = 'b';
        assert_int_equal(tt_int(section(r, "sections", name), "count"), 1);
    }
    assert_int_equal(tt_int(section(r, "sections", "(null)"), "count"), 3);
    for (int n = 1; n <= 40; n++) {
        memset(name, 0, sizeof name);
        memset(name, 'p', (size_t)n - 1);
        assert_int_equal(tt_int(section(r, "sections", name), "count"), 1); /* n == 1: "" */
    }
    assert_int_equal(tt_int(json_object_get(r, "problems"), "unmatched_ends"), 0);
    json_decref(check_dir(&s));
    json_decref(r);
    tt_end(&s);
}

static void test_fast_path_tsc(void **state)
{
    (void)state;
    check_fast_path("TALLY_CLOCK=tsc");
}

static void test_general_path_monotonic(void **state)
{
    (void)state;
    check_fast_path("TALLY_CLOCK=monotonic");
}

static int body_limits(void *arg)
{
    (void)arg;
    tally_end();                        /* before initialization */
    tally_iteration_end("never_begun"); /* likewise, on a thread with no buffer yet */
    for (int i = 0; i < 300; i++)
        tally_begin("deep");
    for (int i = 0; i < 300; i++)
        tally_end();
    tally_set_rank(-5, -1); /* refused: the rank stays 2 (RANK) */
    tally_set_rank(4, 3);   /* rank kept, world size unknown */
    return 0;
}

static void test_limits_counted(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "RANK=2", "WORLD_SIZE=8", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_limits, NULL), 0);
    assert_int_equal(tt_count_lines(s.err, "tally: tally_set_rank(-5, -1)"), 1); /* said once */
    assert_int_equal(tt_count_lines(s.err, "tally:"), 1);
    json_t *r = load_out(&s, "t-rank4.report.json");
    json_t *pr = json_object_get(r, "problems");
    assert_int_equal(tt_int(pr, "unmatched_ends"), 2);
    assert_int_equal(tt_int(pr, "depth_overflow"), 300 - 256);
    assert_int_equal(tt_int(pr, "unclosed"), 0);
    assert_int_equal(tt_int(pr, "rank_rejected"), 2);
    assert_int_equal(tt_int(section(r, "sections", "deep"), "count"), 256);
    assert_int_equal(tt_int(r, "rank"), 4);
    assert_true(json_is_null(json_object_get(r, "world_size")));
    assert_string_equal(tt_str(r, "rank_source"), "tally_set_rank");
    json_decref(check_dir(&s));
    json_decref(r);
    tt_end(&s);
}

static int body_negative_rank_only(void *arg)
{
    (void)arg;
    tally_set_rank(-5, -1);
    tally_begin("a");
    tally_end();
    return 0;
}

static void test_negative_rank_not_zero(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "SLURM_PROCID=3", "SLURM_NTASKS=4", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_negative_rank_only, NULL), 0);
    json_t *r = load_out(&s, "t-rank3.report.json"); /* detected, not silently 0 */
    assert_int_equal(tt_int(r, "rank"), 3);
    assert_string_equal(tt_str(r, "rank_source"), "SLURM_PROCID");
    assert_int_equal(tt_int(json_object_get(r, "problems"), "rank_rejected"), 1);
    assert_int_equal(tt_count_files(s.dir, "rank0"), 0);
    json_decref(r);
    tt_end(&s);
}

/* Issue 26 item 10: a launcher's rank variable that is not a rank (RANK=-1,
 * abc, 9999999999999) is said on stderr and counted, and the next launcher's
 * variable (or the default) is used: on the old code, silently rank 0. */
static void test_rank_variable_refused(void **state)
{
    (void)state;
    static const char *const bad[] = { "RANK=-1", "RANK=abc", "RANK=9999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int slurm = 0; slurm < 2; slurm++) {
            tt_scenario s;
            const char *env[] = { bad[i], slurm ? "SLURM_PROCID=2" : NULL, slurm ? "SLURM_NTASKS=4" : NULL, NULL };
            char want[200];
            tt_begin(&s);
            assert_int_equal(tt_run(&s, env, body_small, NULL), 0);
            snprintf(want, sizeof want, "tally: ignoring %s: expected an integer from 0 to 2147483647\n", bad[i]);
            assert_string_equal(s.err, want);
            json_t *r = load_out(&s, slurm ? "t-rank2.report.json" : "t-rank0.report.json");
            assert_int_equal(tt_int(r, "rank"), slurm ? 2 : 0);
            assert_string_equal(tt_str(r, "rank_source"), slurm ? "SLURM_PROCID" : "default");
            assert_int_equal(tt_int(json_object_get(r, "problems"), "rank_rejected"), 1);
            json_decref(r);
            tt_end(&s);
        }
    }
}

/* TALLY_NAME must name a file inside the output directory. */
static void test_name_is_a_file_name(void **state)
{
    (void)state;
    static const char *const bad[] = { "TALLY_NAME=../escaped", "TALLY_NAME=sub/x", "TALLY_NAME=..",
                                       "TALLY_NAME=/tmp/abs" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tt_scenario s;
        const char *env[] = { bad[i], NULL };
        tt_begin(&s);
        assert_int_equal(tt_run(&s, env, body_small, NULL), 0);
        assert_int_equal(tt_count_lines(s.err, "tally: ignoring the name"), 1);
        assert_int_equal(tt_count_files(s.base, ""), 1);                     /* nothing beside out/ */
        assert_int_equal(tt_count_files(s.dir, "test_collector-rank0."), 2); /* program name */
        tt_end(&s);
    }
}

/* ---- tally_stats_get ------------------------------------------------------ */

static void *stats_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        tally_begin("shared");
        spin(2000);
        tally_end();
    }
    return NULL;
}

static int body_stats_get(void *arg)
{
    (void)arg;
    tally_stats st;
    TT_REQUIRE(tally_stats_get("x", &st) == TALLY_ESTATE); /* not initialized */
    TT_REQUIRE(tally_stats_get(NULL, &st) == TALLY_EINVAL);
    TT_REQUIRE(tally_stats_get("x", NULL) == TALLY_EINVAL);
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        TT_REQUIRE(pthread_create(&th[i], NULL, stats_worker, NULL) == 0);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 7; i++) {
        tally_iteration_begin("loop");
        spin(1000);
        tally_iteration_end("loop");
    }
    tally_begin("open_only"); /* open: nothing completed yet */
    TT_REQUIRE(tally_stats_get("open_only", &st) == TALLY_ENOENT);
    TT_REQUIRE(st.count == 0);
    tally_end();
    TT_REQUIRE(tally_stats_get("never_recorded", &st) == TALLY_ENOENT);
    TT_REQUIRE(tally_stats_get("shared", &st) == 0);
    TT_REQUIRE(st.iteration == 0);
    TT_REQUIRE(st.count == 150); /* every thread's, merged */
    TT_REQUIRE(st.min_ns > 0 && st.min_ns <= st.median_ns && st.median_ns <= st.p95_ns && st.p95_ns <= st.max_ns);
    TT_REQUIRE(st.mean_ns >= st.min_ns && st.mean_ns <= st.max_ns);
    TT_REQUIRE(st.total_ns > 149 * st.min_ns && st.total_ns < 151 * st.max_ns);
    /* Print what the report will say too: the test compares the two. */
    printf("shared %llu %.0f %.0f %.0f\n", (unsigned long long)st.count, st.total_ns, st.min_ns, st.max_ns);
    TT_REQUIRE(tally_stats_get("loop", &st) == 0);
    TT_REQUIRE(st.iteration == 1 && st.count == 7);
    TT_REQUIRE(tally_shutdown() == 0);
    TT_REQUIRE(tally_stats_get("shared", &st) == 0 && st.count == 150); /* still readable */
    return 0;
}

static void test_stats_get(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_stats_get, NULL), 0);
    unsigned long long count;
    double total, min, max;
    assert_int_equal(sscanf(s.out, "shared %llu %lf %lf %lf", &count, &total, &min, &max), 4);
    json_t *r = load_out(&s, "t-rank0.report.json");
    json_t *e = section(r, "sections", "shared");
    assert_int_equal(tt_int(e, "count"), (long long)count);
    /* the same ticks; converted with a calibration measured a little earlier */
    assert_true(fabs(tt_num(e, "total_ns") - total) <= 0.02 * total);
    assert_true(fabs(tt_num(e, "min_ns") - min) <= 0.02 * min + 2);
    assert_true(fabs(tt_num(e, "max_ns") - max) <= 0.02 * max + 2);
    assert_null(tt_find(json_object_get(r, "sections"), "name", "never_recorded"));
    json_decref(r);
    tt_end(&s);
}

static int body_stats_disabled(void *arg)
{
    (void)arg;
    tally_stats st;
    tally_begin("a");
    tally_end();
    TT_REQUIRE(tally_stats_get("a", &st) == TALLY_ESTATE);
    return 0;
}

static void test_stats_get_disabled(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_ENABLE=0", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_stats_disabled, NULL), 0);
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_limits_counted, tt_teardown),
        cmocka_unit_test_teardown(test_fast_path_tsc, tt_teardown),
        cmocka_unit_test_teardown(test_general_path_monotonic, tt_teardown),
        cmocka_unit_test_teardown(test_negative_rank_not_zero, tt_teardown),
        cmocka_unit_test_teardown(test_rank_variable_refused, tt_teardown),
        cmocka_unit_test_teardown(test_name_is_a_file_name, tt_teardown),
        cmocka_unit_test_teardown(test_stats_get, tt_teardown),
        cmocka_unit_test_teardown(test_stats_get_disabled, tt_teardown),
        cmocka_unit_test_teardown(test_every_call, tt_teardown),
        cmocka_unit_test_teardown(test_rank, tt_teardown),
        cmocka_unit_test_teardown(test_schedule, tt_teardown),
        cmocka_unit_test_teardown(test_dropped_events, tt_teardown),
        cmocka_unit_test_teardown(test_flush, tt_teardown),
        cmocka_unit_test_teardown(test_disabled_at_run_time, tt_teardown),
        cmocka_unit_test_teardown(test_init_from_struct, tt_teardown),
        cmocka_unit_test_teardown(test_invalid_variable, tt_teardown),
        cmocka_unit_test_teardown(test_summary, tt_teardown),
        cmocka_unit_test_teardown(test_after_shutdown, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
