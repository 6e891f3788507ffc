/*
 * test_threads.c - recording from many threads at once.
 *
 * Eight named threads each record 20000 nested section pairs and 20000
 * counter values, start after recording began and end before anything is
 * written: their work must be in the report, with exact counts (8 x 20000),
 * totals equal to the sum of their X-event durations in the trace, their
 * names kept after they exited, and one trace thread per worker holding
 * exactly its own 20000 + 20000 events. Then smaller waves of threads: a
 * flush after the first wave ended counts its work, and flushes while the
 * second wave records neither crash nor lose anything.
 */
#define _GNU_SOURCE
#include "collector_test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tally/tally.h"

#define WORKERS 8
#define PAIRS 20000
#define FLUSHES 5

typedef struct worker {
    pthread_t thread;
    int index;
    const char *prefix;
    int count;
} worker;

static void *nested_pairs(void *arg)
{
    worker *w = arg;
    char name[16];
    snprintf(name, sizeof name, "%s%d", w->prefix, w->index);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < w->count; i++) {
        tally_begin("outer");
        tally_begin("inner");
        tally_end();
        tally_end();
        tally_counter("work", 1.0);
    }
    return NULL;
}

static void *scopes(void *arg)
{
    worker *w = arg;
    char name[16];
    snprintf(name, sizeof name, "%s%d", w->prefix, w->index);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < w->count; i++) {
        TALLY_SCOPE("late");
    }
    return NULL;
}

static int start_wave(worker *w, int n, const char *prefix, int count, void *(*fn)(void *))
{
    for (int i = 0; i < n; i++) {
        w[i] = (worker){ 0, i, prefix, count };
        if (pthread_create(&w[i].thread, NULL, fn, &w[i]) != 0)
            return -1;
    }
    return 0;
}

static void join_wave(worker *w, int n)
{
    for (int i = 0; i < n; i++)
        pthread_join(w[i].thread, NULL);
}

static json_t *entry(json_t *report, const char *list, const char *name)
{
    json_t *x = tt_find(json_object_get(report, list), "name", name);
    if (x == NULL)
        fail_msg("no %s entry named %s", list, name);
    return x;
}

/* The report's total for name equals the sum of its X durations in the
 * trace, within the rounding of each duration to 1 ns. */
static void expect_total_matches_trace(json_t *report, json_t *summary, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "section/%s", name);
    json_t *x = json_object_get(json_object_get(summary, "x"), key);
    double dur = tt_num(x, "dur_ns");
    long long total = tt_int(entry(report, "sections", name), "total_ns");
    long long count = tt_int(entry(report, "sections", name), "count");
    if (fabs(dur - (double)total) > 0.5 * (double)count + 2)
        fail_msg("%s: report total_ns %lld, X durations sum to %.1f", name, total, dur);
}

/* ---- many threads, nested sections, counters ------------------------------ */

static int body_many_threads(void *arg)
{
    (void)arg;
    worker w[WORKERS];
    tally_begin("main");
    TT_REQUIRE(start_wave(w, WORKERS, "worker", PAIRS, nested_pairs) == 0);
    join_wave(w, WORKERS); /* every worker has exited before anything is written */
    tally_end();
    return 0;
}

static void test_many_threads(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    /* Plain JSON: gzip (tested elsewhere) would double the time of the write. */
    const char *env[] = { "TALLY_TRACE_GZIP=0", NULL };
    assert_int_equal(tt_run(&s, env, body_many_threads, NULL), 0);
    assert_string_equal(s.err, "");

    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *outer = entry(r, "sections", "outer"), *inner = entry(r, "sections", "inner");
    assert_int_equal(tt_int(outer, "count"), WORKERS * PAIRS);
    assert_int_equal(tt_int(inner, "count"), WORKERS * PAIRS);
    assert_true(tt_int(outer, "total_ns") >= tt_int(inner, "total_ns"));
    assert_int_equal(tt_len(outer, "samples_ns"), 10000);
    assert_int_equal(tt_int(outer, "samples_dropped"), WORKERS * PAIRS - 10000);
    assert_int_equal(tt_int(entry(r, "sections", "main"), "count"), 1);
    json_t *work = entry(r, "counters", "work");
    assert_int_equal(tt_int(work, "count"), WORKERS * PAIRS);
    assert_true(tt_num(work, "sum") == WORKERS * PAIRS);
    assert_true(tt_num(work, "std") == 0);
    assert_int_equal(tt_int(r, "threads"), 1 + WORKERS);
    json_t *problems = json_object_get(r, "problems");
    assert_int_equal(tt_int(problems, "unclosed"), 0);
    assert_int_equal(tt_int(problems, "unmatched_ends"), 0);
    json_t *trace = json_object_get(r, "trace");
    assert_int_equal(tt_int(trace, "events_recorded"), 3 * WORKERS * PAIRS + 1);
    assert_int_equal(tt_int(trace, "events_dropped"), 0);

    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    json_t *one = tt_summary_of(sum, "t-rank0.report.json");
    expect_total_matches_trace(r, one, "outer");
    expect_total_matches_trace(r, one, "inner");

    /* One trace thread per worker, named as it named itself before exiting,
     * with exactly its own events. */
    int seen = 0;
    const char *tid;
    json_t *th;
    json_object_foreach(json_object_get(one, "threads"), tid, th)
    {
        const char *name = json_string_value(json_object_get(th, "name"));
        json_t *x = json_object_get(th, "x");
        if (name && strncmp(name, "worker", 6) == 0) {
            seen++;
            assert_int_equal(tt_int(x, "section/outer"), PAIRS);
            assert_int_equal(tt_int(x, "section/inner"), PAIRS);
            assert_int_equal(json_object_size(x), 2);
        }
    }
    assert_int_equal(seen, WORKERS);
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

/* ---- flushes while threads come and go -------------------------------------- */

static int body_flush_waves(void *arg)
{
    tt_scenario *s = arg;
    worker w[4];
    TT_REQUIRE(start_wave(w, 4, "early", 2000, nested_pairs) == 0);
    join_wave(w, 4);
    /* The early threads are gone; a flush still counts their work. */
    TT_REQUIRE(tally_flush() == 0);
    TT_REQUIRE(rename(tt_report(s, "t-rank0"), tt_out(s, "wave1.json")) == 0);
    TT_REQUIRE(rename(tt_trace(s, "t-rank0"), tt_out(s, "wave1.trace.gz")) == 0);

    TT_REQUIRE(start_wave(w, 4, "late", 2000, scopes) == 0);
    for (int i = 0; i < FLUSHES; i++)
        TT_REQUIRE(tally_flush() == 0); /* while the late threads record */
    join_wave(w, 4);
    return 0;
}

static void test_flush_while_threads_come_and_go(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_flush_waves, &s), 0);
    assert_string_equal(s.err, "");

    json_t *w1 = tt_load_json(tt_out(&s, "wave1.json"));
    assert_int_equal(tt_int(entry(w1, "sections", "outer"), "count"), 4 * 2000);
    assert_int_equal(tt_int(entry(w1, "counters", "work"), "count"), 4 * 2000);
    assert_null(tt_find(json_object_get(w1, "sections"), "name", "late"));
    assert_int_equal(tt_int(w1, "threads"), 4);
    const char *args1[] = { "--trace", tt_out(&s, "wave1.trace.gz"), tt_out(&s, "wave1.json"), NULL };
    json_t *sum1 = tt_check(args1);
    expect_total_matches_trace(w1, tt_summary_of(sum1, "wave1.json"), "outer");
    json_decref(sum1);
    json_decref(w1);

    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(entry(r, "sections", "outer"), "count"), 4 * 2000);
    assert_int_equal(tt_int(entry(r, "sections", "late"), "count"), 4 * 2000);
    assert_int_equal(tt_int(r, "threads"), 8);
    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    expect_total_matches_trace(r, tt_summary_of(sum, "t-rank0.report.json"), "late");
    json_decref(sum);
    json_decref(r);
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_many_threads, tt_teardown),
        cmocka_unit_test_teardown(test_flush_while_threads_come_and_go, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
