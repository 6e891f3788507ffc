/*
 * test_blocks.c - tally_block_begin/end end to end (lib/blocks.c, issue 36):
 * the report's blocks (times, frames, the counts of misuse and of blocks
 * beyond the cap) and the trace's block events, checked against each other
 * by check_outputs.py. FPS and the first-block delay that tally reads from
 * them are tested in tests/python (TestBlocks) and the demo. And the
 * metadata of sections (lib/section_args.c, tally_begin_args) and the rates
 * of counter pairs (lib/counter_rates.c, tally_counter_rate).
 */
#include "collector_test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tally/tally.h"

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int body_blocks(void *arg)
{
    (void)arg;
    tally_block_end(); /* nothing open: counted */
    tally_block_begin(4);
    sleep_ms(60);
    tally_block_end();
    tally_block_begin(4);
    sleep_ms(20);
    tally_block_end();
    tally_block_begin(NAN); /* frames unknown */
    tally_block_begin(2);   /* restarts the open one */
    sleep_ms(20);
    tally_block_end();
    tally_block_begin(1); /* still open at exit */
    return 0;
}

static void test_blocks(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_blocks, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *b = json_object_get(r, "blocks");
    assert_int_equal(tt_int(b, "count"), 3);
    assert_true(tt_num(b, "frames") == 10);
    assert_int_equal(tt_int(b, "dropped"), 0);
    assert_int_equal(tt_int(b, "unmatched_ends"), 1);
    assert_int_equal(tt_int(b, "restarted"), 1);
    assert_true(json_is_true(json_object_get(b, "open")));
    json_t *items = json_object_get(b, "items");
    const double want_ms[3] = { 60, 20, 20 }, frames[3] = { 4, 4, 2 };
    long long prev_end = 0;
    for (size_t i = 0; i < 3; i++) {
        json_t *x = json_array_get(items, i);
        /* no sampler: the RSS at the end, no GPU memory */
        assert_true(tt_num(x, "rss_bytes") > 1e6);
        assert_null(json_object_get(x, "gpu_memory_bytes"));
        double ms = (double)tt_int(x, "dur_ns") / 1e6;
        if (!(ms >= want_ms[i] && ms < want_ms[i] + 40))
            fail_msg("block %zu took %.1f ms, slept %.0f", i, ms, want_ms[i]);
        assert_true(tt_num(x, "frames") == frames[i]);
        assert_true(tt_int(x, "time_ns") >= prev_end);
        prev_end = tt_int(x, "time_ns") + tt_int(x, "dur_ns");
    }
    json_decref(r);
    /* the trace: a complete event of category "block" per block */
    json_t *t = tt_load_json(tt_trace(&s, "t-rank0"));
    size_t i, n = 0;
    json_t *e;
    json_array_foreach(json_object_get(t, "traceEvents"), i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (cat == NULL || strcmp(cat, "block") != 0)
            continue;
        char name[16];
        snprintf(name, sizeof name, "block %zu", n);
        assert_string_equal(tt_str(e, "name"), name);
        assert_string_equal(tt_str(e, "ph"), "X");
        assert_true(tt_num(json_object_get(e, "args"), "frames") == frames[n]);
        n++;
    }
    assert_int_equal(n, 3);
    json_decref(t);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

/* Memory per block: the fake NVML's own memory grows 100 MiB per reading
 * (every 10 ms), and the second block touches 64 MiB more of the heap. */
static int body_block_memory(void *arg)
{
    (void)arg;
    tally_reading r;
    tally_begin("start"); /* starts libtally and its sampler */
    tally_end();
    for (int i = 0; i < 500 && !(tally_current(&r) == 0 && (r.valid & TALLY_READING_GPU)); i++)
        sleep_ms(10);
    TT_REQUIRE(r.valid & TALLY_READING_GPU);
    tally_block_begin(4);
    sleep_ms(50);
    tally_block_end();
    tally_block_begin(4);
    size_t n = 64u << 20;
    /* fresh pages (a malloc could reuse resident ones the heap freed) */
    char *big = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    TT_REQUIRE(big != MAP_FAILED);
    memset(big, 1, n);
    sleep_ms(50);
    tally_block_end();
    munmap(big, n);
    return 0;
}

static void test_block_memory(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    const char *env[] = { "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "FAKE_NVML_DEVICES=1", "FAKE_NVML_OWN_MIB=1000",
                          "FAKE_NVML_OWN_STEP_MIB=100",          "TALLY_SAMPLE_MS=10",  NULL };
    assert_int_equal(tt_run(&s, env, body_block_memory, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *items = json_object_get(json_object_get(r, "blocks"), "items");
    assert_int_equal(json_array_size(items), 2);
    json_t *b0 = json_array_get(items, 0), *b1 = json_array_get(items, 1);
    /* the process's own GPU memory of a sampler reading taken before the
     * block's end: one of the series' values, and it grew between blocks */
    json_t *series = json_object_get(json_object_get(r, "sampler"), "series");
    for (int k = 0; k < 2; k++) {
        json_t *b = k ? b1 : b0;
        assert_string_equal(tt_str(b, "gpu_memory_kind"), "process");
        double mem = tt_num(b, "gpu_memory_bytes");
        long long end = tt_int(b, "time_ns") + tt_int(b, "dur_ns");
        int found = 0;
        size_t i;
        json_t *p;
        json_array_foreach(series, i, p)
        {
            json_t *g = json_array_get(json_object_get(p, "gpus"), 0);
            found |= g && tt_int(p, "time_ns") <= end + 1000000 && tt_num(g, "process_used_bytes") == mem;
        }
        if (!found)
            fail_msg("block %d: %.0f bytes of GPU memory, in no sampler point before its end", k, mem);
        assert_true(mem >= 1100.0 * 1024 * 1024);
    }
    assert_true(tt_num(b1, "gpu_memory_bytes") >= tt_num(b0, "gpu_memory_bytes") + 200.0 * 1024 * 1024);
    if (!(tt_num(b1, "rss_bytes") >= tt_num(b0, "rss_bytes") + 60.0 * 1024 * 1024))
        fail_msg("RSS %.0f then %.0f: not 64 MiB more", tt_num(b0, "rss_bytes"), tt_num(b1, "rss_bytes"));
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

/* More than the cap: the first TL_MAX_BLOCKS (100000) listed, the rest counted. */
static int body_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < 100005; i++) {
        tally_block_begin(1);
        tally_block_end();
    }
    return 0;
}

static void test_blocks_cap(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    const char *env[] = { "TALLY_TRACE=0", NULL };
    assert_int_equal(tt_run(&s, env, body_many, NULL), 0);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *b = json_object_get(r, "blocks");
    assert_int_equal(tt_int(b, "count"), 100000);
    assert_int_equal(tt_int(b, "dropped"), 5);
    assert_int_equal(tt_len(b, "items"), 100000);
    json_decref(r);
    tt_end(&s);
}

/* tally_begin_args on two threads' worth of nesting, text that is not JSON,
 * and an orphan: the report's section_args, at the sections' own starts. */
static int body_args(void *arg)
{
    (void)arg;
    tally_begin_args("load_model", "{\"model\":\"dit\",\"params\":1300000000}");
    tally_begin_args("read_shard", "shard 3 of 8");
    tally_end();
    tally_end();
    tally_section_args("{\"orphan\":1}");
    return 0;
}

static void test_section_args(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_args, NULL), 0);
    assert_string_equal(s.err, "");
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *a = json_object_get(r, "section_args");
    assert_int_equal(json_array_size(a), 2);
    json_t *x = json_array_get(a, 0), *y = json_array_get(a, 1);
    assert_string_equal(tt_str(x, "name"), "load_model");
    assert_string_equal(tt_str(json_object_get(x, "args"), "model"), "dit");
    assert_true(tt_num(json_object_get(x, "args"), "params") == 1.3e9);
    assert_string_equal(tt_str(y, "name"), "read_shard");
    assert_string_equal(tt_str(json_object_get(y, "args"), "text"), "shard 3 of 8");
    assert_true(tt_int(y, "time_ns") >= tt_int(x, "time_ns"));
    assert_int_equal(tt_int(r, "section_args_orphans"), 1);
    assert_int_equal(tt_int(r, "section_args_dropped"), 0);
    json_t *secs = json_object_get(r, "sections");
    assert_int_equal(tt_int(tt_find(secs, "name", "load_model"), "count"), 1);
    assert_int_equal(tt_int(tt_find(secs, "name", "read_shard"), "count"), 1);
    /* each section's entry has its metadata */
    json_t *lm = tt_find(secs, "name", "load_model");
    assert_string_equal(tt_str(json_object_get(lm, "args"), "model"), "dit");
    assert_int_equal(tt_int(lm, "args_count"), 1);
    assert_string_equal(tt_str(json_object_get(tt_find(secs, "name", "read_shard"), "args"), "text"), "shard 3 of 8");
    json_decref(r);
    /* the trace: the metadata is the args of the section's own X event, no instant */
    json_t *t = tt_load_json(tt_trace(&s, "t-rank0"));
    size_t i, with = 0;
    json_t *e;
    json_array_foreach(json_object_get(t, "traceEvents"), i, e)
    {
        const char *cat = json_string_value(json_object_get(e, "cat"));
        assert_false(cat != NULL && strcmp(cat, "section_args") == 0);
        if (cat == NULL || strcmp(cat, "section") != 0)
            continue;
        assert_string_equal(tt_str(e, "ph"), "X");
        if (strcmp(tt_str(e, "name"), "load_model") == 0) {
            assert_true(tt_num(json_object_get(e, "args"), "params") == 1.3e9);
            with++;
        } else if (strcmp(tt_str(e, "name"), "read_shard") == 0) {
            assert_string_equal(tt_str(json_object_get(e, "args"), "text"), "shard 3 of 8");
            with++;
        }
    }
    assert_int_equal(with, 2);
    json_decref(t);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

/* tally_counter_rate: registered before init, summed over threads, replaced
 * when registered again; misuse refused. */
static void *misses_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 25; i++)
        tally_counter("cache.misses", 1);
    return NULL;
}

static int body_rates(void *arg)
{
    (void)arg;
    TT_REQUIRE(tally_counter_rate("cache.hit_rate", "cache.hits", "wrong") == 0);
    TT_REQUIRE(tally_counter_rate("cache.hit_rate", "cache.hits", "cache.misses") == 0); /* replaces */
    TT_REQUIRE(tally_counter_rate("", "a", "b") == TALLY_EINVAL);
    TT_REQUIRE(tally_counter_rate("x", NULL, "b") == TALLY_EINVAL);
    char many[16];
    for (int i = 0; i < 31; i++) {
        snprintf(many, sizeof many, "r%d", i);
        TT_REQUIRE(tally_counter_rate(many, "h", "m") == 0);
    }
    TT_REQUIRE(tally_counter_rate("one_too_many", "h", "m") == TALLY_EFULL);
    pthread_t th;
    TT_REQUIRE(pthread_create(&th, NULL, misses_thread, NULL) == 0);
    tally_counter("cache.hits", 50);
    tally_counter("cache.hits", 25);
    pthread_join(th, NULL);
    return 0;
}

static void test_counter_rates(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_rates, NULL), 0);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *rates = json_object_get(r, "counter_rates");
    assert_int_equal(json_array_size(rates), 32);
    json_t *c = tt_find(rates, "name", "cache.hit_rate");
    assert_non_null(c);
    assert_string_equal(tt_str(c, "misses"), "cache.misses");
    assert_true(tt_num(c, "hits_total") == 75);
    assert_true(tt_num(c, "misses_total") == 25);
    assert_true(tt_num(c, "rate") == 0.75);
    assert_true(json_is_null(json_object_get(tt_find(rates, "name", "r0"), "rate")));
    json_decref(r);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_blocks, tt_teardown),
        cmocka_unit_test_teardown(test_blocks_cap, tt_teardown),
        cmocka_unit_test_teardown(test_block_memory, tt_teardown),
        cmocka_unit_test_teardown(test_section_args, tt_teardown),
        cmocka_unit_test_teardown(test_counter_rates, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
