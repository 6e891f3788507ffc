/*
 * test_report_readers.c - the report readers (tools/ingest/read_*.c) on the
 * shared corpus (FramePack, Inferix) and on hand-written tally reports
 * (tests/fixtures/tally-report-*.json): the numbers a user would read, in ns
 * and bytes, and clean warnings that name the JSON path on hostile input.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_readers.h"
#include "tt_support.h"

#define MIB 1048576.0
#define FRAMEPACK TALLY_CORPUS_DIR "/framepack/"
#define INFERIX TALLY_CORPUS_DIR "/inferix/generated/"
#define INFERIX_RANK(n) INFERIX "multi_rank_reports/rank_" #n "/profiling_report_t2v_generation_20261121_215140.json"
#define FIXTURE(name) TALLY_SOURCE_DIR "/tests/fixtures/" name

/* ---- helpers ------------------------------------------------------------ */

typedef int (*reader_fn)(tl_profile *, const char *, size_t);

/* Read a file with a reader into p; returns the reader's result. */
static int read_path(tl_profile *p, reader_fn fn, const char *path)
{
    size_t len;
    char *buf = tt_slurp(path, &len);
    tl_profile_init(p, path);
    int rc = fn(p, buf, len);
    free(buf);
    return rc;
}

static int read_text(tl_profile *p, reader_fn fn, const char *text)
{
    tl_profile_init(p, "inline");
    return fn(p, text, strlen(text));
}

static const tl_name_stat *stat_of(const tl_profile *p, const char *cat, const char *name)
{
    uint32_t c = tl_strtab_find(&p->strs, cat, strlen(cat));
    uint32_t n = tl_strtab_find(&p->strs, name, strlen(name));
    for (uint32_t i = 0; i < p->nstats; i++)
        if (p->stats[i].cat == c && p->stats[i].name == n)
            return &p->stats[i];
    return NULL;
}

static uint32_t count_cat(const tl_profile *p, const char *cat)
{
    uint32_t c = tl_strtab_find(&p->strs, cat, strlen(cat)), n = 0;
    for (uint32_t i = 0; i < p->nstats; i++)
        n += p->stats[i].cat == c && p->stats[i].d.count > 0;
    return n;
}

static const tl_mem_snapshot *snapshot_of(const tl_profile *p, const char *label)
{
    for (size_t i = 0; i < p->nsnapshots; i++)
        if (strcmp(tl_strtab_get(&p->strs, p->snapshots[i].label), label) == 0)
            return &p->snapshots[i];
    return NULL;
}

static const tl_counter *counter_of(const tl_profile *p, const char *name)
{
    for (uint32_t i = 0; i < p->ncounters; i++)
        if (strcmp(tl_strtab_get(&p->strs, p->counters[i].name), name) == 0)
            return &p->counters[i];
    return NULL;
}

/* Is there a warning containing every one of the given substrings? */
static int warned(const tl_profile *p, const char *a, const char *b)
{
    for (size_t i = 0; i < p->id.problems.n; i++)
        if (strstr(p->id.problems.v[i].text, a) && (b == NULL || strstr(p->id.problems.v[i].text, b)))
            return 1;
    return 0;
}

static void print_warnings(const tl_profile *p)
{
    for (size_t i = 0; i < p->id.problems.n; i++)
        print_message("  warning: %s\n", p->id.problems.v[i].text);
}

#define assert_warned(p, a, b)                                                                                         \
    do {                                                                                                               \
        if (!warned((p), (a), (b))) {                                                                                  \
            print_warnings(p);                                                                                         \
            fail_msg("no warning with \"%s\"%s%s", (a), (b) ? " and " : "", (b) ? (b) : "");                           \
        }                                                                                                              \
    } while (0)

#define assert_near(x, y, eps) assert_true(fabs((double)(x) - (double)(y)) <= (eps))

/* ---- FramePack ---------------------------------------------------------- */

static void test_framepack_generated(void **state)
{
    (void)state;
    tl_profile p;
    assert_int_equal(read_path(&p, tl_read_framepack, FRAMEPACK "generated/profiling_report.json"), 0);
    print_warnings(&p);
    assert_int_equal(p.id.problems.n, 0);
    assert_int_equal(p.id.format, TL_FMT_FRAMEPACK);
    assert_int_equal(p.id.rank, -1); /* not in the content: the caller finds it from the path */

    assert_int_equal(count_cat(&p, "section"), 8);
    const tl_name_stat *s = stat_of(&p, "section", "text_encoding_positive");
    assert_non_null(s);
    assert_int_equal(s->from_summary, 1);
    assert_int_equal(s->cat_class, TL_CC_SECTION);
    assert_int_equal(s->d.count, 1);
    assert_int_equal(s->d.total, 12456000000ull);
    assert_int_equal(s->d.min, 12456000000ull);
    assert_int_equal(s->d.max, 12456000000ull);
    assert_near(s->d.mean, 12456000000.0, 1);
    assert_true(isnan(s->median_ns));
    s = stat_of(&p, "section", "vae_decode_section_chunk_1");
    assert_non_null(s);
    assert_int_equal(s->d.total, 3100000000ull);

    /* memory: MiB (torch bytes / 1024**2) to bytes; times from the earliest timestamp */
    assert_int_equal(p.nsnapshots, 5);
    const tl_mem_snapshot *m = snapshot_of(&p, "after_sampling_chunk_0");
    assert_non_null(m);
    assert_near(m->allocated, 12288.4 * MIB, 1);
    assert_near(m->reserved, 16384.0 * MIB, 0);
    assert_near(m->peak_allocated, 14336.2 * MIB, 1);
    assert_true(isnan(m->rss));
    assert_int_equal(p.base_time_ns, llround(1795297938.8564055 * 1e9));
    assert_int_equal(snapshot_of(&p, "worker_start")->ts_ns, 0);
    assert_near(m->ts_ns, (1795297938.8564138 - 1795297938.8564055) * 1e9, 1);
    /* the snapshots span 0.25 ms of a report with seconds of stages: that is
     * no wall time, so the span is unknown (start after end) */
    assert_true(p.start_ns > p.end_ns);

    /* FramePack's one loop, named "iteration" (the JSON has no name) */
    s = stat_of(&p, "iteration", "iteration");
    assert_non_null(s);
    assert_int_equal(s->cat_class, TL_CC_ITERATION);
    assert_int_equal(s->d.count, 5);
    assert_int_equal(s->d.total, 13083000000ull);
    assert_int_equal(s->d.min, 2103000000ull);
    assert_int_equal(s->d.max, 3421000000ull);
    assert_near(s->d.mean, 2616600000.0, 1);
    assert_near(s->median_ns, 2509000000.0, 0);
    tl_profile_release(&p);
}

static void test_framepack_gradio_no_iterations(void **state)
{
    (void)state;
    tl_profile p;
    assert_int_equal(read_path(&p, tl_read_framepack, FRAMEPACK "generated/as_demo_gradio/profiling_report.json"), 0);
    assert_int_equal(p.id.problems.n, 0);
    assert_int_equal(count_cat(&p, "section"), 8);
    assert_null(stat_of(&p, "iteration", "iteration")); /* "iteration_stats": {} */
    assert_int_equal(p.nsnapshots, 5);
    tl_profile_release(&p);
}

static void test_framepack_doc_snippet(void **state)
{
    (void)state;
    tl_profile p;
    /* the doc example has literal "..." lines: not JSON */
    assert_int_equal(read_path(&p, tl_read_framepack, FRAMEPACK "doc_example_PROFILING_FIX_md.json.txt"), -1);
    assert_int_equal(p.id.problems.n, 1);
    assert_warned(&p, "invalid JSON at line 11, column 5 (byte 186)", "expected near '.'");
    assert_int_equal(p.nstats, 0);
    tl_profile_release(&p);
}

/* Beyond the names budget (--max-names 10): 20 sections of 1..20 s; those
 * with the least time go to "(other names)" with their times, none is
 * dropped (they were, each with "a second section of this name"), and the
 * last, longest one keeps its row (a fold by first appearance hid it). */
static void test_framepack_names_budget(void **state)
{
    (void)state;
    char doc[4096];
    size_t len = (size_t)snprintf(doc, sizeof doc, "{\"timing_stats\": {");
    for (int i = 0; i < 20; i++)
        len += (size_t)snprintf(doc + len, sizeof doc - len,
                                "%s\"s%d\": {\"count\": 1, \"total\": %d, \"mean\": %d, \"min\": %d, \"max\": %d}",
                                i ? ", " : "", i, i + 1, i + 1, i + 1, i + 1);
    snprintf(doc + len, sizeof doc - len, "}}");
    tl_profile p;
    tl_profile_init(&p, "inline");
    p.max_names = 10;
    assert_int_equal(tl_read_framepack(&p, doc, strlen(doc)), 0);
    tl_profile_finish(&p);
    uint64_t total = 0, count = 0;
    for (uint32_t i = 0; i < p.nstats; i++) {
        total += p.stats[i].d.total;
        count += p.stats[i].d.count;
    }
    assert_int_equal(count, 20);
    assert_int_equal(total, 210000000000ull);
    const tl_name_stat *other = stat_of(&p, "section", "(other names)");
    assert_non_null(other);
    assert_int_equal(other->d.count, 15);
    const tl_name_stat *last = stat_of(&p, "section", "s19");
    assert_non_null(last);
    assert_int_equal(last->d.total, 20000000000ull);
    assert_false(warned(&p, "a second section", NULL));
    assert_warned(&p, "more than 10 distinct names", "(15 events in 1 categories)");
    tl_profile_release(&p);
}

static void test_framepack_wrong_types(void **state)
{
    (void)state;
    tl_profile p;
    const char *doc = "{\"timestamp\": 100.0,\n"
                      " \"timing_stats\": {\n"
                      "  \"vae_decode\": {\"count\": 2, \"total\": \"abc\", \"mean\": 1, \"min\": 1, \"max\": 1},\n"
                      "  \"negative\": {\"count\": -3, \"total\": 1, \"mean\": 1, \"min\": 1, \"max\": 1},\n"
                      "  \"huge\": {\"count\": 1, \"total\": 1e300, \"mean\": 1, \"min\": 1, \"max\": 1},\n"
                      "  \"no_max\": {\"count\": 1, \"total\": 1, \"mean\": 1, \"min\": 1},\n"
                      "  \"mean_out\": {\"count\": 2, \"total\": 3, \"mean\": 9, \"min\": 1, \"max\": 2},\n"
                      "  \"list\": [1, 2],\n"
                      "  \"good\": {\"count\": 2, \"total\": 0.5, \"mean\": 0.25, \"min\": 0.2, \"max\": 0.3}},\n"
                      " \"memory_snapshots\": [{\"label\": \"a\", \"timestamp\": 101.5, \"allocated_mb\": -1,\n"
                      "   \"reserved_mb\": 1, \"max_allocated_mb\": 1}, 3,\n"
                      "  {\"label\": \"b\", \"timestamp\": 102.0, \"allocated_mb\": 1, \"reserved_mb\": 2,\n"
                      "   \"max_allocated_mb\": 1.5}],\n"
                      " \"iteration_stats\": [1]}";
    assert_int_equal(read_text(&p, tl_read_framepack, doc), 0);
    assert_warned(&p, "timing_stats.vae_decode.total: expected a number >= 0, got a string", NULL);
    assert_warned(&p, "timing_stats.negative.count: expected an integer >= 1, got -3", NULL);
    assert_warned(&p, "timing_stats.huge.total", "too large");
    assert_warned(&p, "timing_stats.no_max.max: missing", NULL);
    assert_warned(&p, "timing_stats.mean_out", "outside [min, max]");
    assert_warned(&p, "timing_stats.list: expected an object, got an array", NULL);
    assert_warned(&p, "memory_snapshots[0].allocated_mb: expected a number >= 0, got -1", NULL);
    assert_warned(&p, "memory_snapshots[1]: expected an object, got a number", NULL);
    assert_warned(&p, "iteration_stats: expected an object, got an array", NULL);
    assert_int_equal(p.id.problems.n, 9);
    /* only the good entries are kept */
    assert_int_equal(p.nstats, 1);
    const tl_name_stat *s = stat_of(&p, "section", "good");
    assert_non_null(s);
    assert_int_equal(s->d.total, 500000000);
    assert_int_equal(p.nsnapshots, 1);
    assert_int_equal(p.snapshots[0].ts_ns, 2000000000); /* 102.0 - 100.0 s */
    assert_near(p.snapshots[0].reserved, 2 * MIB, 0);
    tl_profile_release(&p);
}

/* ---- Inferix ------------------------------------------------------------ */

static void check_inferix_rank(const tl_profile *p, int rank)
{
    assert_int_equal(p->id.format, TL_FMT_INFERIX);
    assert_int_equal(p->id.rank, rank);
    assert_int_equal(p->id.world_size, 2);
    assert_int_equal(p->id.rank_source, TL_RANK_CONTENT);
    assert_string_equal(p->id.rank_detail, "session_info.tags.rank");
    assert_int_equal(p->base_time_ns, 1750000000000000000ll);
    assert_int_equal(p->start_ns, 0);

    assert_int_equal(count_cat(p, "stage"), 4);
    const tl_name_stat *s = stat_of(p, "stage", "load_checkpoint");
    assert_non_null(s);
    assert_int_equal(s->from_summary, 1);
    assert_int_equal(s->cat_class, TL_CC_SECTION);
    assert_int_equal(s->d.count, 1);
    assert_int_equal(s->d.total, 8100000000ull);

    /* GPU monitor: 8 samples of device 0, MiB to bytes */
    assert_int_equal(p->ngpu_samples, 8);
    double peak = 0;
    for (size_t i = 0; i < p->ngpu_samples; i++) {
        assert_int_equal(p->gpu_samples[i].device, 0);
        peak = fmax(peak, p->gpu_samples[i].mem_used);
    }
    assert_near(peak, 21500 * MIB, 0);
    assert_near(p->gpu_samples[0].mem_total, 81559 * MIB, 0);
    assert_near(p->gpu_samples[0].util_pct, 90, 0);
    assert_near(p->gpu_samples[0].temperature_c, 60, 0);
    assert_near(p->gpu_samples[0].power_w, 450.5, 0);
    assert_int_equal(p->gpu_samples[7].ts_ns, 3500000000ll);
    assert_int_equal(p->nmem, 8);
    /* NVML's used memory is device used, never allocator-allocated (issue 13) */
    assert_true(isnan(p->mem[7].allocated));
    assert_near(p->mem[7].used, 21500 * MIB, 0);
    assert_int_equal(p->ndevices, 1);
    assert_near(p->devices[0].total_memory, 81559 * MIB, 0);

    /* CPU monitor as counters */
    const tl_counter *c = counter_of(p, "cpu_usage_pct");
    assert_non_null(c);
    assert_int_equal(c->v.count, 4);
    assert_near(c->v.max, 15.5, 0);
    c = counter_of(p, "host_memory_used");
    assert_non_null(c);
    assert_near(c->v.max, 153000 * MIB, 0);

    /* diffusion steps and blocks from their records */
    s = stat_of(p, "diffusion", "diffusion_step");
    assert_non_null(s);
    assert_int_equal(s->from_summary, 0);
    assert_int_equal(s->d.count, 28);
    assert_int_equal(s->d.nsamples, 28);
    s = stat_of(p, "block", "block_computation");
    assert_non_null(s);
    assert_int_equal(s->d.count, 7);
    assert_int_equal(p->events, 37); /* 28 diffusion_step, 7 block_computation, 2 others */
    assert_int_equal(p->by_phase['i'], 37);
}

static void test_inferix_ranks(void **state)
{
    (void)state;
    tl_profile r0, r1;
    assert_int_equal(read_path(&r0, tl_read_inferix, INFERIX_RANK(0)), 0);
    print_warnings(&r0);
    assert_int_equal(r0.id.problems.n, 0);
    check_inferix_rank(&r0, 0);
    assert_int_equal(read_path(&r1, tl_read_inferix, INFERIX_RANK(1)), 0);
    assert_int_equal(r1.id.problems.n, 0);
    check_inferix_rank(&r1, 1);

    const tl_name_stat *a = stat_of(&r0, "stage", "run_inference");
    const tl_name_stat *b = stat_of(&r1, "stage", "run_inference");
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(a->d.total, 28400000000ull);
    assert_int_equal(b->d.total, 32660000000ull);
    assert_true(b->d.total > a->d.total); /* rank 1 is the straggler */
    assert_int_equal(r0.end_ns, 42500000000ll);
    assert_int_equal(r1.end_ns, 48875000000ll);
    assert_int_equal(stat_of(&r0, "diffusion", "diffusion_step")->d.total, 8890000000ull);
    assert_int_equal(stat_of(&r0, "block", "block_computation")->d.total, 10840000000ull);
    assert_int_equal(stat_of(&r0, "block", "block_computation")->d.max, 2320000000ull);
    assert_string_equal(r0.format_detail, "session t2v_generation");
    tl_profile_release(&r0);
    tl_profile_release(&r1);
}

static void expect_kind(const char *path, int kind, const char *why)
{
    size_t len;
    char *buf = tt_slurp(path, &len);
    json_error_t err;
    json_t *root = json_loadb(buf, len, 0, &err);
    assert_non_null(root);
    char got[256];
    assert_int_equal(tl_report_kind(root, got, sizeof got), kind);
    assert_string_equal(got, why);
    json_decref(root);

    /* the readers refuse it with that reason; tl_read_report marks it skipped */
    tl_profile p;
    tl_profile_init(&p, path);
    assert_int_equal(tl_read_report(&p, buf, len), kind == TL_FMT_UNKNOWN ? -1 : 0);
    if (kind == TL_FMT_UNKNOWN) {
        assert_int_equal(p.skipped, 1);
        assert_warned(&p, "not a profile: ", why);
    }
    tl_profile_release(&p);
    if (kind == TL_FMT_UNKNOWN) {
        tl_profile_init(&p, path);
        assert_int_equal(tl_read_inferix(&p, buf, len), -1);
        assert_warned(&p, "not an Inferix profiling report: ", why);
        assert_int_equal(p.nstats, 0);
        tl_profile_release(&p);
    }
    free(buf);
}

static void test_inferix_not_profiles(void **state)
{
    (void)state;
    expect_kind(INFERIX "multi_rank_reports/rank_0/raw_profiling_data_t2v_generation_20261121_215140.json",
                TL_FMT_UNKNOWN, "Inferix raw profiling dump (session_id, gpu_data, cpu_data)");
    expect_kind(INFERIX "aggregated_report_from_real_layout.json", TL_FMT_UNKNOWN,
                "Inferix aggregated report (total_reports, rank_count)");
    expect_kind(INFERIX "summary_shaped/aggregated_report.json", TL_FMT_UNKNOWN,
                "Inferix aggregated report (total_reports, rank_count)");
    expect_kind(INFERIX "summary_shaped/inputs/rank_1/summary.json", TL_FMT_UNKNOWN,
                "Inferix summary (get_profiling_summary shape)");
    expect_kind(INFERIX_RANK(1), TL_FMT_INFERIX, "");
    expect_kind(FRAMEPACK "generated/profiling_report.json", TL_FMT_FRAMEPACK, "");
    expect_kind(FIXTURE("tally-report-v1.json"), TL_FMT_TALLY_REPORT, "");
}

static void test_inferix_wrong_types(void **state)
{
    (void)state;
    tl_profile p;
    const char *doc = "{\"session_info\": {\"id\": \"s\", \"start_time\": 1000.0, \"end_time\": null,\n"
                      "   \"duration\": 5.0, \"tags\": {\"rank\": \"3\", \"world_size\": \"two\"}},\n"
                      " \"gpu_metrics\": {\"timeline\": [\n"
                      "   {\"timestamp\": 1000.5, \"memory_used_mb\": \"lots\", \"memory_total_mb\": 100,\n"
                      "    \"utilization\": 1, \"temperature\": 0, \"power\": 0},\n"
                      "   {\"timestamp\": 1001.0, \"memory_used_mb\": 10, \"memory_total_mb\": 100,\n"
                      "    \"utilization\": 50, \"temperature\": 0, \"power\": 0}]},\n"
                      " \"stage_analysis\": {\"stages\": {\n"
                      "   \"zero_calls\": {\"total_time\": 1, \"call_count\": 0, \"avg_time\": 1, \"min_time\": 1,\n"
                      "                  \"max_time\": 1},\n"
                      "   \"ok\": {\"total_time\": 3, \"call_count\": 2, \"avg_time\": 1.5, \"min_time\": 1,\n"
                      "          \"max_time\": 2}}},\n"
                      " \"diffusion_analysis\": {\"steps\": [{\"computation_time_ms\": -2}, {\"step\": 1,\n"
                      "   \"computation_time_ms\": 250.5}]},\n"
                      " \"events\": {}}";
    assert_int_equal(read_text(&p, tl_read_inferix, doc), 0);
    assert_int_equal(p.id.rank, 3); /* a decimal string tag is accepted */
    assert_int_equal(p.id.world_size, 0);
    assert_warned(&p, "session_info.tags.world_size: expected an integer >= 1", NULL);
    assert_warned(&p, "gpu_metrics.timeline[0].memory_used_mb: expected a number >= 0, got a string", NULL);
    assert_warned(&p, "stage_analysis.stages.zero_calls.call_count: expected an integer >= 1, got 0", NULL);
    assert_warned(&p, "diffusion_analysis.steps[0].computation_time_ms: expected a number >= 0, got -2", NULL);
    assert_warned(&p, "events: expected an array, got an object", NULL);
    assert_int_equal(p.id.problems.n, 5);
    assert_int_equal(p.end_ns, 5000000000ll); /* end_time null: the duration */
    assert_int_equal(p.ngpu_samples, 1);
    assert_int_equal(p.gpu_samples[0].ts_ns, 1000000000ll);
    assert_true(isnan(p.gpu_samples[0].temperature_c)); /* 0 everywhere: never measured */
    assert_true(isnan(p.gpu_samples[0].power_w));
    assert_near(p.gpu_samples[0].util_pct, 50, 0);
    assert_null(stat_of(&p, "stage", "zero_calls"));
    const tl_name_stat *s = stat_of(&p, "stage", "ok");
    assert_non_null(s);
    assert_int_equal(s->d.count, 2);
    assert_near(s->d.mean, 1.5e9, 0);
    s = stat_of(&p, "diffusion", "diffusion_step");
    assert_non_null(s);
    assert_int_equal(s->d.count, 1);
    assert_int_equal(s->d.total, 250500000ull);
    tl_profile_release(&p);
}

/* ---- tally report ------------------------------------------------------- */

static void test_tally_report_v1(void **state)
{
    (void)state;
    tl_profile p;
    assert_int_equal(read_path(&p, tl_read_tally_report, FIXTURE("tally-report-v1.json")), 0);
    assert_int_equal(p.id.format, TL_FMT_TALLY_REPORT);
    assert_int_equal(p.id.rank, 2);
    assert_int_equal(p.id.world_size, 4);
    assert_int_equal(p.id.rank_source, TL_RANK_CONTENT);
    assert_string_equal(p.id.rank_detail, "report rank (RANK)");
    assert_int_equal(p.base_time_ns, 1750000000123456789ll); /* every digit kept */
    assert_int_equal(p.start_ns, 0);
    assert_int_equal(p.end_ns, 20000000000ll);

    /* the problems the collector reported, and nothing else */
    assert_warned(&p, "trace.events_dropped", "5 trace events");
    assert_warned(&p, "problems.unclosed", "1 sections");
    assert_int_equal(p.id.problems.n, 2);

    assert_int_equal(count_cat(&p, "section"), 2);
    const tl_name_stat *s = stat_of(&p, "section", "vae_decode");
    assert_non_null(s);
    /* every sample is in the report: exact, with a histogram of them (issue 13:
     * median and p95 were "unknown" once merged across ranks) */
    assert_int_equal(s->from_summary, 0);
    assert_near(tl_dur_stat_quantile(&s->d, 0.5), 3100000000.0, 0.01 * 3100000000.0);
    assert_near(tl_dur_stat_quantile(&s->d, 0.95), 3200000000.0, 0.01 * 3200000000.0);
    assert_int_equal(s->d.count, 3);
    assert_int_equal(s->d.total, 9300000000ull);
    assert_int_equal(s->d.min, 3000000000ull);
    assert_int_equal(s->d.max, 3200000000ull);
    assert_near(s->d.mean, 3100000000.0, 0);
    assert_near(s->median_ns, 3100000000.0, 0);
    assert_near(s->p95_ns, 3200000000.0, 0);
    assert_near(s->std_ns, 100000000.0, 0);
    assert_near(s->d.m2, 1e16 * 2, 1); /* std^2 * (n - 1) */
    assert_int_equal(s->d.nsamples, 3);
    assert_int_equal(s->d.samples[1], 3100000000ull);
    assert_int_equal(s->d.samples_dropped, 0);

    s = stat_of(&p, "iteration", "diffusion_step");
    assert_non_null(s);
    assert_int_equal(s->cat_class, TL_CC_ITERATION);
    assert_int_equal(s->d.count, 4);
    assert_int_equal(s->d.nsamples, 4);
    assert_near(s->median_ns, 2050000000.0, 0);
    assert_non_null(stat_of(&p, "iteration", "warmup"));
    /* steps from the first (largest) loop, back to back from 0 */
    assert_int_equal(p.nsteps, 4);
    static const int64_t ts[] = { 0, 2000000000, 4100000000, 6000000000 };
    static const int64_t dur[] = { 2000000000, 2100000000, 1900000000, 2400000000 };
    for (int i = 0; i < 4; i++) {
        assert_int_equal(p.steps[i].number, i);
        assert_int_equal(p.steps[i].ts_ns, ts[i]);
        assert_int_equal(p.steps[i].dur_ns, dur[i]);
    }

    const tl_counter *c = counter_of(&p, "tokens");
    assert_non_null(c);
    assert_int_equal(c->v.count, 4);
    assert_near(c->v.sum, 2048, 0);
    assert_near(c->v.max, 768, 0);
    c = counter_of(&p, "loss");
    assert_non_null(c);
    assert_near(c->v.min, -1, 0);
    assert_true(isnan(c->v.last)); /* null in the report */

    assert_int_equal(p.nsnapshots, 2);
    const tl_mem_snapshot *m = snapshot_of(&p, "after_load");
    assert_non_null(m);
    assert_int_equal(m->ts_ns, 1000000000);
    assert_near(m->allocated, 10737418240.0, 0); /* cuda.allocated provider */
    assert_near(m->reserved, 12884901888.0, 0);
    assert_near(m->rss, 2147483648.0, 0);
    m = snapshot_of(&p, "after_sampling");
    assert_non_null(m);
    /* no provider: nothing allocated is known; NVML's used memory is its own field */
    assert_true(isnan(m->allocated));
    assert_near(m->device_used, 21474836480.0, 0);
    assert_true(isnan(m->reserved));
    /* with a provider, both: allocated 10 GiB from it, 13 GiB used on the device */
    assert_near(snapshot_of(&p, "after_load")->device_used, 13958643712.0, 0);

    assert_int_equal(p.ngpu_samples, 2);
    assert_near(p.gpu_samples[0].util_pct, 87, 0);
    assert_near(p.gpu_samples[0].power_w, 410.5, 0);
    assert_true(isnan(p.gpu_samples[1].util_pct));
    assert_near(p.gpu_samples[1].mem_used, 14000000000.0, 0);
    assert_int_equal(p.nmem, 2);
    assert_int_equal(p.mem[1].device, -1);
    assert_true(isnan(p.mem[1].allocated)); /* the RSS is host memory used */
    assert_near(p.mem[1].used, 2100000000.0, 0);
    assert_int_equal(counter_of(&p, "cpu_usage_pct")->v.count, 2);
    assert_int_equal(p.ndevices, 1);
    assert_string_equal(p.devices[0].name, "NVIDIA H100 80GB HBM3");
    assert_near(p.devices[0].total_memory, 85520809984.0, 0);
    assert_int_equal(p.events, 2);
    assert_int_equal(p.by_phase['i'], 2);
    tl_profile_release(&p);
}

/* libtally's newer problem counters (issue 10 item 11) become warnings. */
static void test_tally_report_problem_counters(void **state)
{
    (void)state;
    size_t len;
    char *buf = tt_slurp(FIXTURE("tally-report-v1.json"), &len);
    const char *from = "\"names_overflowed\": 0}";
    char *at = strstr(buf, from);
    assert_non_null(at);
    char doc[65536];
    snprintf(doc, sizeof doc,
             "%.*s\"names_overflowed\": 0, \"depth_overflow\": 44, "
             "\"rank_rejected\": 2, \"threads_skipped\": 1}%s",
             (int)(at - buf), buf, at + strlen(from));
    free(buf);
    tl_profile p;
    assert_int_equal(read_text(&p, tl_read_tally_report, doc), 0);
    assert_warned(&p, "problems.depth_overflow", "44 sections were nested deeper");
    assert_warned(&p, "problems.rank_rejected", "2 tally_set_rank calls");
    assert_warned(&p, "problems.threads_skipped", "1 threads were left out");
    assert_int_equal(p.id.problems.n, 5); /* with the fixture's own two */
    tl_profile_release(&p);
}

static void test_tally_report_bad_version(void **state)
{
    (void)state;
    tl_profile p;
    assert_int_equal(read_path(&p, tl_read_tally_report, FIXTURE("tally-report-v2.json")), -1);
    assert_warned(&p, "tally report version 2 is not supported", "version 1");
    assert_int_equal(p.nstats, 0);
    tl_profile_release(&p);
}

/* 1500 samples: 1000 kept (TL_PROFILE_MAX_SAMPLES), the rest counted */
static void test_tally_report_samples_bounded(void **state)
{
    (void)state;
    size_t cap = 64 * 1024, o = 0;
    char *doc = malloc(cap);
    assert_non_null(doc);
    uint64_t total = 0;
    for (int i = 0; i < 1500; i++)
        total += 1000 + (uint64_t)i;
    o += (size_t)snprintf(doc + o, cap - o,
                          "{\"format\": \"tally-report\", \"version\": 1, \"rank\": 0, "
                          "\"world_size\": null, \"rank_source\": \"default\", "
                          "\"start_time_unix_ns\": 0, \"duration_ns\": 1, \"sections\": [], "
                          "\"counters\": [], \"memory_snapshots\": [], \"events\": [], "
                          "\"sampler\": null, \"system\": {\"gpus\": []}, "
                          "\"trace\": {\"events_dropped\": 0}, \"problems\": {\"unclosed\": 0, "
                          "\"unmatched_ends\": 0, \"names_overflowed\": 0}, \"iterations\": [{"
                          "\"name\": \"step\", \"count\": 1500, \"total_ns\": %llu, "
                          "\"mean_ns\": %.1f, \"min_ns\": 1000, \"max_ns\": 2499, \"std_ns\": 433.2, "
                          "\"median_ns\": 1750, \"p95_ns\": 2425, \"samples_dropped\": 0, "
                          "\"samples_ns\": [",
                          (unsigned long long)total, (double)total / 1500);
    for (int i = 0; i < 1500; i++)
        o += (size_t)snprintf(doc + o, cap - o, "%s%d", i ? "," : "", 1000 + i);
    o += (size_t)snprintf(doc + o, cap - o, "]}]}");
    assert_true(o < cap);

    tl_profile p;
    assert_int_equal(read_text(&p, tl_read_tally_report, doc), 0);
    print_warnings(&p);
    assert_int_equal(p.id.problems.n, 0);
    assert_int_equal(p.id.world_size, 0);
    assert_string_equal(p.id.rank_detail, "report rank (default)");
    const tl_name_stat *s = stat_of(&p, "iteration", "step");
    assert_non_null(s);
    assert_int_equal(s->d.count, 1500);
    assert_int_equal(s->d.nsamples, TL_PROFILE_MAX_SAMPLES);
    assert_int_equal(s->d.samples_dropped, 500);
    assert_int_equal(s->d.samples[999], 1999);
    /* The step table is not capped (issue 10, item 6): 1,500 iterations are
     * 1,500 steps, the last one 2,499 ns, and their mean is the report's. */
    assert_int_equal(p.nsteps, 1500);
    assert_int_equal(p.steps[1499].dur_ns, 2499);
    uint64_t sum = 0;
    for (size_t k = 0; k < p.nsteps; k++)
        sum += (uint64_t)p.steps[k].dur_ns;
    assert_int_equal(sum, total);
    tl_profile_release(&p);
    free(doc);
}

/* Times at the int64's ends (issue 26, item 9): a sampler point at
 * INT64_MAX ns and a start time of INT64_MAX were kept, and the base time
 * plus a relative time overflowed (UBSan; a wrapped start time in Release).
 * Beyond TL_TRACE_TS_MAX a time is not believed: warned, skipped. */
static void test_tally_report_extreme_times(void **state)
{
    (void)state;
    static const char doc[] = "{\"format\": \"tally-report\", \"version\": 1, \"rank\": 0, "
                              "\"world_size\": null, \"rank_source\": \"default\", "
                              "\"start_time_unix_ns\": 9223372036854775807, \"duration_ns\": 1, \"sections\": [], "
                              "\"counters\": [], \"memory_snapshots\": [], \"events\": [], "
                              "\"sampler\": {\"interval_ms\": 100, \"series\": ["
                              "{\"time_ns\": 9223372036854775807, \"cpu_pct\": 5, \"rss_bytes\": 1000},"
                              "{\"time_ns\": 1000, \"cpu_pct\": 7, \"rss_bytes\": 2000}]}, "
                              "\"system\": {\"gpus\": []}, \"trace\": {\"events_dropped\": 0}, "
                              "\"problems\": {\"unclosed\": 0, \"unmatched_ends\": 0, \"names_overflowed\": 0}, "
                              "\"iterations\": []}";
    tl_profile p;
    assert_int_equal(read_text(&p, tl_read_tally_report, doc), 0);
    assert_warned(&p, "start_time_unix_ns: 9223372036854775807 is too large for a time in ns", NULL);
    assert_warned(&p, "sampler.series[0].time_ns: 9223372036854775807 is too large", NULL);
    assert_int_equal(p.base_time_ns, INT64_MIN);
    for (size_t i = 0; i < p.nmem; i++)
        assert_true(p.mem[i].ts_ns <= TL_TRACE_TS_MAX);
    assert_int_equal(p.nmem, 1); /* the second point's RSS, not the first's */
    tl_profile_release(&p);
}

/* GPU readings no GPU gives (issue 26, item 10): NVML's 4294967295 ("not
 * available"), a utilization above 100 %, memory used above the total.
 * They were shown as they are; now left out and said once. */
static void test_tally_report_gpu_garbage(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"format\": \"tally-report\", \"version\": 1, \"rank\": 0, "
        "\"world_size\": null, \"rank_source\": \"default\", "
        "\"start_time_unix_ns\": 0, \"duration_ns\": 1, \"sections\": [], "
        "\"counters\": [], \"memory_snapshots\": [], \"events\": [], "
        "\"sampler\": {\"interval_ms\": 100, \"series\": ["
        "{\"time_ns\": 1000, \"gpus\": [{\"index\": 0, \"used_bytes\": 90000000000, \"total_bytes\": 80000000000, "
        "\"utilization_pct\": 4294967295, \"temperature_c\": 4294967295, \"power_w\": 300}]},"
        "{\"time_ns\": 2000, \"gpus\": [{\"index\": 0, \"used_bytes\": 1000, \"total_bytes\": 80000000000, "
        "\"utilization_pct\": 101, \"temperature_c\": 60, \"power_w\": 4294967.295}]},"
        "{\"time_ns\": 3000, \"gpus\": [{\"index\": 0, \"used_bytes\": 2000, \"total_bytes\": 80000000000, "
        "\"utilization_pct\": 55, \"temperature_c\": 61, \"power_w\": 250}]}]}, "
        "\"system\": {\"gpus\": []}, \"trace\": {\"events_dropped\": 0}, "
        "\"problems\": {\"unclosed\": 0, \"unmatched_ends\": 0, \"names_overflowed\": 0}, "
        "\"iterations\": []}";
    tl_profile p;
    assert_int_equal(read_text(&p, tl_read_tally_report, doc), 0);
    assert_warned(&p, "5 GPU readings that cannot be real left out",
                  "the first: sampler.series[0].gpus[0].utilization_pct = 4294967295");
    assert_int_equal(p.ngpu_samples, 3);
    assert_true(isnan(p.gpu_samples[0].util_pct));
    assert_true(isnan(p.gpu_samples[0].temperature_c));
    assert_true(isnan(p.gpu_samples[0].mem_used));
    assert_near(p.gpu_samples[0].power_w, 300, 1e-9);
    assert_true(isnan(p.gpu_samples[1].util_pct));
    assert_true(isnan(p.gpu_samples[1].power_w));
    assert_near(p.gpu_samples[1].mem_used, 1000, 1e-9);
    assert_near(p.gpu_samples[2].util_pct, 55, 1e-9);
    assert_near(p.gpu_samples[2].temperature_c, 61, 1e-9);
    tl_profile_release(&p);
}

/* Issue 28 item 2: process_used_bytes (the program's own memory on the GPU,
 * NVML per process) is read into a series of its own, beside the device-wide
 * used_bytes and never into it; a snapshot's is summed over its GPUs; a figure
 * above the device's total is not a reading. On the old code it was ignored. */
static void test_tally_report_own_memory(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"format\": \"tally-report\", \"version\": 1, \"rank\": 0, "
        "\"world_size\": null, \"rank_source\": \"default\", "
        "\"start_time_unix_ns\": 0, \"duration_ns\": 1, \"sections\": [], \"counters\": [], "
        "\"memory_snapshots\": [{\"label\": \"after_step\", \"time_ns\": 500, \"tid\": 1, "
        "\"rss_bytes\": 1000, \"peak_rss_bytes\": 1000, \"providers\": {}, \"gpus\": ["
        "{\"index\": 0, \"used_bytes\": 9000, \"total_bytes\": 80000, \"process_used_bytes\": 3000},"
        "{\"index\": 1, \"used_bytes\": 7000, \"total_bytes\": 80000, \"process_used_bytes\": 2000}]},"
        "{\"label\": \"before\", \"time_ns\": 600, \"tid\": 1, \"rss_bytes\": 1000, "
        "\"peak_rss_bytes\": 1000, \"providers\": {}, \"gpus\": [{\"index\": 0, \"used_bytes\": 9000, "
        "\"total_bytes\": 80000}]}], \"events\": [], "
        "\"sampler\": {\"interval_ms\": 100, \"series\": ["
        "{\"time_ns\": 1000, \"gpus\": [{\"index\": 0, \"used_bytes\": 9000, \"total_bytes\": 80000, "
        "\"process_used_bytes\": 3000}]},"
        "{\"time_ns\": 2000, \"gpus\": [{\"index\": 0, \"used_bytes\": 9973, \"total_bytes\": 80000}]},"
        "{\"time_ns\": 3000, \"gpus\": [{\"index\": 0, \"used_bytes\": 9000, \"total_bytes\": 80000, "
        "\"process_used_bytes\": 90000}]}]}, "
        "\"system\": {\"gpus\": []}, \"trace\": {\"events_dropped\": 0}, "
        "\"problems\": {\"unclosed\": 0, \"unmatched_ends\": 0, \"names_overflowed\": 0}, "
        "\"iterations\": []}";
    tl_profile p;
    assert_int_equal(read_text(&p, tl_read_tally_report, doc), 0);
    assert_warned(&p, "1 GPU reading that cannot be real left out",
                  "the first: sampler.series[2].gpus[0].process_used_bytes = 90000");
    assert_int_equal(p.ngpu_samples, 3);
    assert_near(p.gpu_samples[0].proc_used, 3000, 1e-9);
    assert_near(p.gpu_samples[0].mem_used, 9000, 1e-9);
    assert_true(isnan(p.gpu_samples[1].proc_used));
    assert_near(p.gpu_samples[1].mem_used, 9973, 1e-9);
    assert_true(isnan(p.gpu_samples[2].proc_used));
    assert_int_equal(p.nsnapshots, 2);
    assert_near(p.snapshots[0].process_used, 5000, 1e-9);
    assert_near(p.snapshots[0].device_used, 9000, 1e-9);
    assert_true(isnan(p.snapshots[1].process_used));
    tl_profile_release(&p);
}

static void test_tally_report_hostile(void **state)
{
    (void)state;
    tl_profile p;
    assert_int_equal(read_path(&p, tl_read_tally_report, FIXTURE("tally-report-hostile.json")), 0);
    assert_warned(&p, "producer: expected an object, got a string", NULL);
    assert_warned(&p, "rank: expected an integer in [0, ", "got a string");
    assert_warned(&p, "world_size: expected an integer in [1, ", "got -1");
    assert_warned(&p, "start_time_unix_ns: expected a number >= 0, got a string", NULL);
    assert_warned(&p, "duration_ns: expected a number >= 0, got -5", NULL);
    assert_warned(&p, "sections[0]: expected an object, got a string", NULL);
    assert_warned(&p, "sections[1].name: expected a string, got a number", NULL);
    assert_warned(&p, "sections[2].count: expected an integer >= 1, got -3", NULL);
    assert_warned(&p, "sections[3].total_ns: expected a number >= 0, got a string", NULL);
    assert_warned(&p, "sections[4]: min 20 ns is above max 10 ns", NULL);
    assert_warned(&p, "sections[5].samples_ns[1]", "such samples are skipped");
    assert_warned(&p, "sections[6].total_ns", "too large");
    assert_warned(&p, "iterations: expected an array, got an object", NULL);
    assert_warned(&p, "counters[0].count: expected an integer >= 1, got a string", NULL);
    assert_warned(&p, "memory_snapshots[0].time_ns: expected a number >= 0, got -5", NULL);
    assert_warned(&p, "events: expected an array, got a number", NULL);
    assert_warned(&p, "sampler: expected an object, got a string", NULL);
    assert_warned(&p, "trace: expected an object, got an array", NULL);
    assert_warned(&p, "problems.unclosed: expected an integer >= 0, got a string", NULL);
    assert_warned(&p, "system: expected an object, got null", NULL);
    assert_int_equal(p.id.problems.dropped, 0);
    assert_int_equal(p.id.rank, -1);
    assert_int_equal(p.base_time_ns, INT64_MIN);
    /* only the consistent section survives, without its bad sample */
    assert_int_equal(p.nstats, 1);
    const tl_name_stat *s = stat_of(&p, "section", "ok");
    assert_non_null(s);
    assert_int_equal(s->d.nsamples, 2);
    assert_int_equal(s->d.samples[1], 20);
    assert_int_equal(p.ncounters, 0);
    assert_int_equal(p.nsnapshots, 0);
    tl_profile_release(&p);
}

/* ---- hostile documents, all readers ------------------------------------- */

static reader_fn readers[] = { tl_read_tally_report, tl_read_framepack, tl_read_inferix, tl_read_report };

static void test_not_objects(void **state)
{
    (void)state;
    static const struct {
        const char *doc, *warning;
    } cases[] = {
        { "{}", "empty JSON object" },
        { "[1, 2, 3]", "JSON array, not an object" },
        { "{\"a\": 1, \"b\": [], \"c\": {}}", "JSON object with keys: a, b, c" },
        { "{\"traceEvents\": []}", "Chrome trace" },
        { "", "invalid JSON at line 1" },
        { "\"just a string\"", "invalid JSON" },
        { "{\"timing_stats\": {}} trailing", "invalid JSON at line 1, column " },
    };
    for (size_t r = 0; r < sizeof readers / sizeof readers[0]; r++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tl_profile p;
            assert_int_equal(read_text(&p, readers[r], cases[i].doc), -1);
            assert_warned(&p, cases[i].warning, NULL);
            assert_int_equal(p.nstats, 0);
            tl_profile_release(&p);
        }
    }
}

static void test_deep_nesting(void **state)
{
    (void)state;
    size_t n = 100000;
    char *doc = malloc(2 * n + 16);
    assert_non_null(doc);
    for (size_t r = 0; r < sizeof readers / sizeof readers[0]; r++) {
        /* arrays, then objects {"a":{"a":...}} */
        memset(doc, '[', n);
        memset(doc + n, ']', n);
        doc[2 * n] = '\0';
        tl_profile p;
        assert_int_equal(read_text(&p, readers[r], doc), -1);
        assert_warned(&p, "nested deeper than 512 levels", "(byte 512)");
        tl_profile_release(&p);

        size_t o = 0;
        for (int d = 0; d < 600; d++)
            o += (size_t)snprintf(doc + o, 2 * n + 16 - o, "{\"a\":");
        o += (size_t)snprintf(doc + o, 2 * n + 16 - o, "1");
        for (int d = 0; d < 600; d++)
            doc[o++] = '}';
        doc[o] = '\0';
        assert_int_equal(read_text(&p, readers[r], doc), -1);
        assert_warned(&p, "nested deeper than 512 levels", NULL);
        tl_profile_release(&p);
    }
    free(doc);
}

static void test_numbers_json_cannot_hold(void **state)
{
    (void)state;
    tl_profile p;
    /* 1e400 overflows a double: jansson refuses the document, with its position */
    assert_int_equal(
        read_text(&p, tl_read_framepack, "{\"timing_stats\": {\"a\": {\"count\": 1,\n \"total\": 1e400}}}"), -1);
    assert_warned(&p, "invalid JSON at line 2, column ", "real number overflow");
    tl_profile_release(&p);
    assert_int_equal(
        read_text(&p, tl_read_tally_report, "{\"format\": \"tally-report\", \"version\": 99999999999999999999}"), -1);
    assert_warned(&p, "invalid JSON", "too big");
    tl_profile_release(&p);

    /* Python's NaN/Infinity: read as null, so the entry is refused with its path */
    assert_int_equal(
        read_text(&p, tl_read_framepack,
                  "{\"timestamp\": 5, \"timing_stats\": {\n"
                  " \"a\": {\"count\": 1, \"total\": NaN, \"mean\": 1, \"min\": 1, \"max\": 1},\n"
                  " \"b\": {\"count\": 1, \"total\": 1, \"mean\": 1, \"min\": -Infinity, \"max\": Infinity},\n"
                  " \"NaN\": {\"count\": 1, \"total\": 2, \"mean\": 2, \"min\": 2, \"max\": 2}}}"),
        0);
    assert_warned(&p, "3 NaN/Infinity literals", "read as null");
    assert_warned(&p, "timing_stats.a.total: expected a number >= 0, got null", NULL);
    assert_warned(&p, "timing_stats.b.min: expected a number >= 0, got null", NULL);
    assert_int_equal(p.nstats, 1);
    assert_non_null(stat_of(&p, "section", "NaN")); /* a key, not a literal */
    tl_profile_release(&p);

    /* positions after a replaced NaN still point into the file as written */
    assert_int_equal(read_text(&p, tl_read_framepack, "{\"a\": NaN,\n \"b\": NaN, }"), -1);
    assert_warned(&p, "invalid JSON at line 2, column 12 (byte 22)", NULL);
    tl_profile_release(&p);
}

static void test_bom_duplicates_size(void **state)
{
    (void)state;
    tl_profile p;
    const char *doc = "\xEF\xBB\xBF{\"iteration_stats\": {\"count\": 1, \"count\": 2, \"total\": 2,"
                      " \"mean\": 1, \"min\": 0.5, \"max\": 1.5, \"median\": 1}}";
    assert_int_equal(read_text(&p, tl_read_framepack, doc), 0);
    assert_warned(&p, "duplicate object key", "the last value is used");
    const tl_name_stat *s = stat_of(&p, "iteration", "iteration");
    assert_non_null(s);
    assert_int_equal(s->d.count, 2);
    assert_int_equal(p.id.problems.n, 1);
    tl_profile_release(&p);

    /* the size limit is checked before a byte is read */
    static const char one[1] = { '{' };
    tl_profile_init(&p, "huge");
    assert_int_equal(tl_read_inferix(&p, one, TL_REPORT_MAX_BYTES + 1), -1);
    assert_warned(&p, "larger than 256 MiB", NULL);
    tl_profile_release(&p);
}

/* Every prefix of real reports, and byte flips: never a crash, always a clear result. */
static void test_truncated_and_mangled(void **state)
{
    (void)state;
    static const char *paths[] = { FRAMEPACK "generated/profiling_report.json", INFERIX_RANK(0),
                                   FIXTURE("tally-report-v1.json") };
    for (size_t f = 0; f < sizeof paths / sizeof paths[0]; f++) {
        size_t len;
        char *buf = tt_slurp(paths[f], &len);
        for (size_t cut = 0; cut < len; cut += 13) {
            tl_profile p;
            tl_profile_init(&p, paths[f]);
            int rc = tl_read_report(&p, buf, cut);
            assert_true(rc == -1 || rc == 0);
            if (rc == -1)
                assert_true(p.id.problems.n > 0);
            tl_profile_release(&p);
        }
        char *copy = malloc(len);
        assert_non_null(copy);
        uint32_t seed = 12345;
        for (int round = 0; round < 300; round++) {
            memcpy(copy, buf, len);
            for (int k = 0; k < 4; k++) {
                seed = seed * 1103515245u + 12345u;
                size_t at = (seed >> 8) % len;
                static const char junk[] = "0-9e.\"{}[],:nNaI \x01\xff";
                copy[at] = junk[(seed >> 4) % (sizeof junk - 1)];
            }
            tl_profile p;
            tl_profile_init(&p, paths[f]);
            int rc = tl_read_report(&p, copy, len);
            assert_true(rc == -1 || rc == 0);
            tl_profile_release(&p);
        }
        free(copy);
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_framepack_generated),
        cmocka_unit_test(test_framepack_gradio_no_iterations),
        cmocka_unit_test(test_framepack_doc_snippet),
        cmocka_unit_test(test_framepack_names_budget),
        cmocka_unit_test(test_framepack_wrong_types),
        cmocka_unit_test(test_inferix_ranks),
        cmocka_unit_test(test_inferix_not_profiles),
        cmocka_unit_test(test_inferix_wrong_types),
        cmocka_unit_test(test_tally_report_v1),
        cmocka_unit_test(test_tally_report_problem_counters),
        cmocka_unit_test(test_tally_report_bad_version),
        cmocka_unit_test(test_tally_report_samples_bounded),
        cmocka_unit_test(test_tally_report_hostile),
        cmocka_unit_test(test_tally_report_extreme_times),
        cmocka_unit_test(test_tally_report_gpu_garbage),
        cmocka_unit_test(test_tally_report_own_memory),
        cmocka_unit_test(test_not_objects),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_numbers_json_cannot_hold),
        cmocka_unit_test(test_bom_duplicates_size),
        cmocka_unit_test(test_truncated_and_mangled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
