/*
 * Tests of ingest/trace_stream and ingest/gzip_source against the shared corpus.
 *
 * The central check: for every .json/.gz file of the corpus, the number of events the stream
 * returns equals the number of object elements of traceEvents that Python's json module finds
 * (tests/unit/corpus_event_counts.txt, written by tests/tools/count_events.py and re-checked
 * against the corpus by the ctest trace_stream_corpus_counts). Files Python cannot read must
 * give events with a warning, or an error that names an offset. The rest pins down what each
 * derived edge case must produce, that the way bytes arrive (1 byte, 7 bytes, all at once)
 * never changes a result, and that times keep nanosecond precision.
 */
#define _GNU_SOURCE /* nftw */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/gzip_source.h"
#include "ingest/trace_stream.h"
#include "tt_support.h"

#define CORPUS TALLY_CORPUS_DIR
#define COUNTS_FILE TALLY_SOURCE_DIR "/tests/unit/corpus_event_counts.txt"
#define KEEP 80

/* ---------------------------------------------------------------------------------------- */
/* Helpers: load a file, feed it in chunks, record what the stream returned                   */

struct blob {
    char *data;
    size_t len;
};

static struct blob load(const char *path)
{
    struct blob b = { NULL, 0 };

    b.data = tt_slurp(path, &b.len);
    return b;
}

static struct blob load_corpus(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CORPUS, rel);
    return load(path);
}

/* The fields of an event, copied out of the stream's buffer. */
struct ev_copy {
    char name[160], cat[40], ph[16], id[48], id2_local[24], pid_str[40], tid_str[40], args[512];
    int64_t ts, dur, pid, tid, stream, device, correlation, external_id;
    unsigned char has_ts, has_dur, pid_int, tid_int, pid_quoted, tid_quoted, id_quoted;
    unsigned char has_stream, has_device, has_correlation, has_external_id;
    char phase;
    uint64_t offset;
};

struct run {
    int rc;
    tl_trace_stats stats;
    tl_trace_meta meta; /* other_data/metadata pointers cleared; text in other_data */
    char other_data[256];
    int has_error;
    tl_parse_error error;
    unsigned problem_count;
    tl_parse_error problems[TL_TRACE_MAX_PROBLEMS];
    uint64_t *digest; /* one hash per event */
    size_t n;
    uint64_t total;
    uint64_t fast_events; /* events the index walker read (the rest: the byte parser) */
    struct ev_copy ev[KEEP];
    int gz_is_gzip;
    unsigned gz_members;
    char gz_error[200];
};

/* Copy `v` as a C string, cut to fit; an absent view becomes "<absent>". */
static void copy_view(char *dst, size_t cap, tl_view v)
{
    size_t n;

    if (!v.ptr) {
        v.ptr = "<absent>";
        v.len = strlen(v.ptr);
    }
    n = v.len < cap - 1 ? v.len : cap - 1;
    memcpy(dst, v.ptr, n);
    dst[n] = '\0';
}

static void copy_str(char *dst, size_t cap, const char *src)
{
    tl_view v = { src, strlen(src) };
    copy_view(dst, cap, v);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fnv_view(uint64_t h, tl_view v)
{
    unsigned char absent = v.ptr == NULL;
    h = fnv(h, &absent, 1);
    h = fnv(h, &v.len, sizeof v.len);
    return v.ptr ? fnv(h, v.ptr, v.len) : h;
}

/* A hash of everything the stream decoded about one event. */
static uint64_t event_digest(const tl_trace_event *e)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const tl_view views[] = { e->name, e->cat,       e->ph,         e->scope,   e->bp,      e->s,
                              e->id,   e->id2_local, e->id2_global, e->pid_str, e->tid_str, e->args };
    const int64_t nums[] = { e->ts_ns,           e->dur_ns,       e->pid,         e->tid,
                             e->stream,          e->device,       e->correlation, e->external_id,
                             (int64_t)e->offset, (int64_t)e->size };
    const unsigned char flags[] = { e->has_ts,     e->has_dur,         e->pid_int,         e->tid_int,
                                    e->pid_quoted, e->tid_quoted,      e->id_quoted,       e->has_stream,
                                    e->has_device, e->has_correlation, e->has_external_id, (unsigned char)e->phase };

    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++)
        h = fnv_view(h, views[i]);
    h = fnv(h, nums, sizeof nums);
    return fnv(h, flags, sizeof flags);
}

static void keep_event(struct ev_copy *c, const tl_trace_event *e)
{
    copy_view(c->name, sizeof c->name, e->name);
    copy_view(c->cat, sizeof c->cat, e->cat);
    copy_view(c->ph, sizeof c->ph, e->ph);
    copy_view(c->id, sizeof c->id, e->id);
    copy_view(c->id2_local, sizeof c->id2_local, e->id2_local);
    copy_view(c->pid_str, sizeof c->pid_str, e->pid_str);
    copy_view(c->tid_str, sizeof c->tid_str, e->tid_str);
    copy_view(c->args, sizeof c->args, e->args);
    c->ts = e->ts_ns;
    c->dur = e->dur_ns;
    c->pid = e->pid;
    c->tid = e->tid;
    c->stream = e->stream;
    c->device = e->device;
    c->correlation = e->correlation;
    c->external_id = e->external_id;
    c->has_ts = e->has_ts;
    c->has_dur = e->has_dur;
    c->pid_int = e->pid_int;
    c->tid_int = e->tid_int;
    c->pid_quoted = e->pid_quoted;
    c->tid_quoted = e->tid_quoted;
    c->id_quoted = e->id_quoted;
    c->has_stream = e->has_stream;
    c->has_device = e->has_device;
    c->has_correlation = e->has_correlation;
    c->has_external_id = e->has_external_id;
    c->phase = e->phase;
    c->offset = e->offset;
}

/* Read `len` bytes of `data` through a gzip source (sniffing) or directly, `chunk` bytes per
 * read call (0 = as much as asked), with `opt` (NULL = defaults). */
static struct run *run_bytes(const char *data, size_t len, size_t chunk, const tl_trace_options *opt, int use_gzip)
{
    struct run *r = calloc(1, sizeof *r);
    tt_mem_src m = { data, len, 0, chunk, 0 };
    tl_gzip_source g;
    tl_trace_stream s;
    tl_trace_event e;
    size_t cap = 1024;

    assert_non_null(r);
    r->digest = malloc(cap * sizeof *r->digest);
    assert_int_equal(tl_gzip_source_init(&g, tt_mem_read, &m), 0);
    if (use_gzip)
        assert_int_equal(tl_trace_stream_open(&s, tl_gzip_source_read, &g, "test", opt), 0);
    else
        assert_int_equal(tl_trace_stream_open(&s, tt_mem_read, &m, "test", opt), 0);
    r->total = 0xcbf29ce484222325ull;
    while ((r->rc = tl_trace_stream_next(&s, &e)) == 1) {
        uint64_t d = event_digest(&e);
        if (r->n == cap) {
            cap *= 2;
            r->digest = realloc(r->digest, cap * sizeof *r->digest);
            assert_non_null(r->digest);
        }
        if (r->n < KEEP)
            keep_event(&r->ev[r->n], &e);
        r->digest[r->n++] = d;
        r->total = fnv(r->total, &d, sizeof d);
    }
    /* after the end, the stream keeps saying so */
    assert_int_equal(tl_trace_stream_next(&s, &e), r->rc);
    r->stats = s.stats;
    r->fast_events = s.fast_events;
    r->meta = s.meta;
    if (s.meta.other_data)
        copy_str(r->other_data, sizeof r->other_data, s.meta.other_data);
    r->meta.other_data = r->meta.metadata = NULL;
    r->has_error = s.has_error;
    r->error = s.error;
    r->problem_count = s.problem_count;
    memcpy(r->problems, s.problems, sizeof r->problems);
    r->gz_is_gzip = g.is_gzip;
    r->gz_members = g.members;
    memcpy(r->gz_error, g.error, sizeof r->gz_error);
    tl_trace_stream_release(&s);
    tl_gzip_source_release(&g);
    return r;
}

static struct run *run_text(const char *text)
{
    return run_bytes(text, strlen(text), 0, NULL, 1);
}

static struct run *run_file(const char *rel)
{
    struct blob b = load_corpus(rel);
    struct run *r = run_bytes(b.data, b.len, 0, NULL, 1);
    free(b.data);
    return r;
}

static void run_free(struct run *r)
{
    if (r) {
        free(r->digest);
        free(r);
    }
}

/* 1 if some problem report contains `needle`. */
static int has_problem(const struct run *r, const char *needle)
{
    for (unsigned i = 0; i < r->problem_count; i++)
        if (strstr(r->problems[i].text, needle))
            return 1;
    return 0;
}

/* The first problem report containing `needle`; fails the test when there is none. */
static const tl_parse_error *find_problem(const struct run *r, const char *needle)
{
    for (unsigned i = 0; i < r->problem_count; i++)
        if (strstr(r->problems[i].text, needle))
            return &r->problems[i];
    fail_msg("no problem report contains \"%s\"", needle);
    return &r->problems[0];
}

/* Two runs returned the same events and said the same things about the input. */
static void assert_same_run(const struct run *a, const struct run *b)
{
    assert_int_equal(a->rc, b->rc);
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->total, b->total);
    {
        /* bytes_read may differ when reading stopped early: it is how far the buffer got */
        tl_trace_stats sa = a->stats, sb = b->stats;
        sa.bytes_read = sb.bytes_read = 0;
        assert_memory_equal(&sa, &sb, sizeof sa);
    }
    assert_int_equal(a->has_error, b->has_error);
    if (a->has_error) {
        assert_int_equal(a->error.offset, b->error.offset);
        assert_string_equal(a->error.text, b->error.text);
    }
    assert_int_equal(a->problem_count, b->problem_count);
    for (unsigned i = 0; i < a->problem_count; i++) {
        assert_int_equal(a->problems[i].offset, b->problems[i].offset);
        assert_string_equal(a->problems[i].text, b->problems[i].text);
    }
    assert_int_equal(a->meta.device_count, b->meta.device_count);
    assert_int_equal(a->meta.rank, b->meta.rank);
    assert_int_equal(a->meta.base_time_ns, b->meta.base_time_ns);
    assert_string_equal(a->meta.display_time_unit, b->meta.display_time_unit);
}

/* ---------------------------------------------------------------------------------------- */
/* Times                                                                                      */

static int64_t ns_of(const char *text, int *rc)
{
    tl_view v = { text, strlen(text) };
    int64_t out = -12345;
    *rc = tl_trace_us_to_ns(v, &out);
    return out;
}

static void test_us_to_ns(void **state)
{
    static const struct {
        const char *text;
        int rc;
        int64_t ns;
    } cases[] = {
        { "1234567.891", 0, 1234567891 },
        { "5e2", 0, 500000 },
        { "1", 0, 1000 },
        { "0", 0, 0 },
        { "-3", 0, -3000 },
        { "0.001", 0, 1 },
        { "0.0005", 0, 1 }, /* half a ns rounds away from zero */
        { "0.0004999", 0, 0 },
        { "-0.0005", 0, -1 },
        { "1.0005", 0, 1001 },
        { "1.00049", 0, 1000 },
        { "2.5e-3", 0, 3 },
        { ".5", 0, 500 },
        { "5.", 0, 5000 },
        { "+3", 0, 3000 },
        { "1E3", 0, 1000000 },
        { "1740461679470692.999", 0, 1740461679470692999 }, /* a double would lose it */
        { "1.7404616794706925e+15", 0, 1740461679470692500 },
        { "88437691101.719", 0, 88437691101719 },
        { "9223372036854775.807", 0, INT64_MAX },
        { "-9223372036854775.807", 0, -INT64_MAX },
        { "9223372036854775.808", -2, 0 },
        { "1e300", -2, 0 },
        { "1e-300", 0, 0 },
        { "00012.5", 0, 12500 },
        { "0.000000000000000000000001e24", 0, 1000 },
        { "", -1, 0 },
        { "abc", -1, 0 },
        { "100a", -1, 0 },
        { "1e", -1, 0 },
        { "2e+", -1, 0 },
        { ".", -1, 0 },
        { "-", -1, 0 },
        { "1.2.3", -1, 0 },
        { " 1", -1, 0 },
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;
        int64_t ns = ns_of(cases[i].text, &rc);
        if (rc != cases[i].rc || (rc == 0 && ns != cases[i].ns))
            fail_msg("\"%s\": rc %d ns %lld, want rc %d ns %lld", cases[i].text, rc, (long long)ns, cases[i].rc,
                     (long long)cases[i].ns);
    }
}

static void test_ts_precision_in_events(void **state)
{
    struct run *r = run_text("[{\"ph\":\"X\",\"ts\":1234567.891,\"dur\":0.0015},"
                             "{\"ph\":\"i\",\"ts\":\"5e2\"},"
                             "{\"ph\":\"i\",\"ts\":1.0000005},"
                             "{\"ph\":\"i\",\"ts\":\"1.5e3\",\"dur\":\"2\"}]");
    (void)state;
    assert_int_equal(r->n, 4);
    assert_int_equal(r->ev[0].ts, 1234567891);
    assert_int_equal(r->ev[0].dur, 2); /* 1.5 ns rounds to 2 */
    assert_int_equal(r->ev[1].ts, 500000);
    assert_int_equal(r->ev[2].ts, 1000); /* 1000.0005 ns */
    assert_int_equal(r->ev[3].ts, 1500000);
    assert_int_equal(r->ev[3].dur, 2000);
    assert_int_equal(r->stats.warnings, 0);
    run_free(r);
}

static void test_exponent_and_precision_file(void **state)
{
    struct run *r = run_file("derived-edge-cases/exponent_and_precision_numbers.json");
    (void)state;
    assert_int_equal(r->n, 3);
    assert_string_equal(r->meta.display_time_unit, "ns");
    assert_int_equal(r->ev[0].ts, 1740461679470692500); /* 1.7404616794706925e+15 µs */
    assert_int_equal(r->ev[0].dur, 0);                  /* 9.9999999999999995e-07 µs < 0.5 ns */
    assert_true(r->ev[0].has_dur);
    assert_int_equal(r->ev[1].ts, 1740461679470692999);
    assert_int_equal(r->ev[1].dur, 1);
    assert_int_equal(r->ev[2].ts, 1740461679470693500); /* a string */
    assert_int_equal(r->ev[2].dur, 2000);
    assert_int_equal(r->stats.warnings, 0);
    run_free(r);
}

static void test_string_ts_perfetto(void **state)
{
    struct run *r = run_file("perfetto-difftests/inline/string_ts_trailing_chars.json");
    (void)state;
    assert_int_equal(r->n, 2);
    assert_false(r->ev[0].has_ts); /* "100a" */
    assert_true(r->ev[0].has_dur);
    assert_int_equal(r->ev[0].dur, 50000);
    assert_true(r->ev[1].has_ts);
    assert_int_equal(r->ev[1].ts, 200000);
    assert_false(r->ev[1].has_dur); /* "50a" */
    assert_int_equal(r->stats.bad_numbers, 2);
    run_free(r);

    r = run_file("perfetto-difftests/inline/string_ts_and_dur.json");
    assert_int_equal(r->n, 3);
    assert_int_equal(r->stats.bad_numbers, 0);
    for (size_t i = 0; i < r->n; i++)
        assert_true(r->ev[i].has_ts);
    run_free(r);
}

/* ---------------------------------------------------------------------------------------- */
/* The whole corpus against Python                                                            */

struct expected {
    char path[512];
    char value[32];
};

static struct expected *g_expected;
static size_t g_nexpected;
static char (*g_files)[512];
static size_t g_nfiles, g_capfiles;

static void load_expected(void)
{
    FILE *f = fopen(COUNTS_FILE, "r");
    char line[1024];
    size_t cap = 0;

    if (!f)
        fail_msg("cannot open %s", COUNTS_FILE);
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        tab[strcspn(tab + 1, "\r\n") + 1] = '\0';
        if (g_nexpected == cap) {
            cap = cap ? cap * 2 : 64;
            g_expected = realloc(g_expected, cap * sizeof *g_expected);
            assert_non_null(g_expected);
        }
        copy_str(g_expected[g_nexpected].path, sizeof g_expected->path, line);
        copy_str(g_expected[g_nexpected].value, sizeof g_expected->value, tab + 1);
        g_nexpected++;
    }
    fclose(f);
}

static const char *expected_for(const char *rel)
{
    for (size_t i = 0; i < g_nexpected; i++)
        if (!strcmp(g_expected[i].path, rel))
            return g_expected[i].value;
    return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int collect_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (type == FTW_F && (ends_with(path, ".json") || ends_with(path, ".gz"))) {
        if (g_nfiles == g_capfiles) {
            g_capfiles = g_capfiles ? g_capfiles * 2 : 128;
            g_files = realloc(g_files, g_capfiles * sizeof *g_files);
            if (!g_files)
                return -1;
        }
        copy_str(g_files[g_nfiles++], sizeof *g_files, path + strlen(CORPUS) + 1);
    }
    return 0;
}

static int cmp_paths(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* Where tally deliberately differs from Python, and why. */
static const struct {
    const char *path;
    uint64_t events, malformed;
    const char *why;
} known_differences[] = {
    { "derived-edge-cases/deep_nested_args.json", 0, 1,
      "nesting beyond max_depth (256) makes the event malformed; Python's limit is ~1000" },
};

static void test_corpus_counts_match_python(void **state)
{
    size_t traces = 0, unparsable = 0, not_traces = 0;
    (void)state;

    load_expected();
    assert_true(g_nexpected > 100);
    assert_int_equal(nftw(CORPUS, collect_file, 16, FTW_PHYS), 0);
    qsort(g_files, g_nfiles, sizeof *g_files, cmp_paths);
    assert_int_equal(g_nfiles, g_nexpected);

    for (size_t i = 0; i < g_nfiles; i++) {
        const char *rel = g_files[i], *want = expected_for(rel);
        struct run *r;
        size_t k;

        if (!want)
            fail_msg("%s is not in %s: regenerate it with tests/tools/count_events.py", rel, COUNTS_FILE);
        r = run_file(rel);
        for (k = 0; k < sizeof known_differences / sizeof known_differences[0]; k++)
            if (!strcmp(known_differences[k].path, rel))
                break;
        if (k < sizeof known_differences / sizeof known_differences[0]) {
            if (r->stats.events != known_differences[k].events || r->stats.malformed != known_differences[k].malformed)
                fail_msg("%s: %llu events, %llu malformed; expected %llu, %llu (%s)", rel,
                         (unsigned long long)r->stats.events, (unsigned long long)r->stats.malformed,
                         (unsigned long long)known_differences[k].events,
                         (unsigned long long)known_differences[k].malformed, known_differences[k].why);
            traces++;
        } else if (!strcmp(want, "unparsable")) {
            int events_with_warning =
                r->stats.events > 0 && (r->stats.warnings > 0 || r->stats.unterminated || r->stats.truncated);
            int error_with_offset = r->has_error && r->error.text[0] && r->error.offset <= r->stats.bytes_read;
            if (!events_with_warning && !error_with_offset)
                fail_msg("%s: Python cannot parse it, yet tally gave %llu events, no warning, "
                         "no error",
                         rel, (unsigned long long)r->stats.events);
            unparsable++;
        } else if (!strcmp(want, "not-a-trace")) {
            if (r->stats.events != 0 || r->meta.has_trace_events || r->rc != 0)
                fail_msg("%s: not a trace, yet %llu events (rc %d)", rel, (unsigned long long)r->stats.events, r->rc);
            not_traces++;
        } else {
            unsigned long long n = strtoull(want, NULL, 10);
            if (r->stats.events != n || r->n != n)
                fail_msg("%s: tally reads %llu events, Python %llu", rel, (unsigned long long)r->stats.events, n);
            if (r->rc != 0 || r->stats.malformed || r->stats.truncated || r->has_error)
                fail_msg("%s: rc %d, malformed %llu, truncated %d, error \"%s\"", rel, r->rc,
                         (unsigned long long)r->stats.malformed, r->stats.truncated, r->has_error ? r->error.text : "");
            traces++;
        }
        run_free(r);
    }
    /* the corpus is what we think it is */
    assert_true(traces >= 100);
    assert_true(unparsable >= 10);
    assert_true(not_traces >= 8);
    free(g_files);
    free(g_expected);
    g_files = NULL;
    g_expected = NULL;
    g_nfiles = g_capfiles = g_nexpected = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* How bytes arrive must not matter                                                           */

static void test_chunking_gives_identical_results(void **state)
{
    static const char *const files[] = {
        "kineto-docs-traces/before_fix_trace.json",
        "derived-edge-cases/array_bom_crlf.json",
        "derived-edge-cases/kineto_object_truncated_mid_event.json",
        "derived-edge-cases/kineto_object_truncated_after_comma.json",
        "derived-edge-cases/deep_nested_args.json",
        "derived-edge-cases/raw_control_chars_in_strings.json",
        "derived-edge-cases/invalid_utf8_bytes.json",
        "derived-edge-cases/unicode_and_escapes.json",
        "derived-edge-cases/nan_infinity_literals.json",
        "derived-edge-cases/leading_comma_array.json",
        "derived-edge-cases/rank0_truncated_stream.json.gz",
        "perfetto-difftests/inline/args_ordered.json",
        "speedscope-trace-event-fixtures/simple-partial.json",
        "catapult-test_data/trace-with-bad-world-bounds.json",
        "catapult-test_data/simple_trace_gz.gz",
        "param-dlrm_kineto-8rank/worker3_step_12.1694128201557.pt.trace.json",
    };
    static const struct {
        size_t chunk, buffer;
    } ways[] = { { 1, 16 }, { 7, 16 }, { 7, 4096 }, { 1, 1u << 20 }, { 4093, 64 } };
    (void)state;

    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        struct blob b = load_corpus(files[f]);
        struct run *whole = run_bytes(b.data, b.len, 0, NULL, 1);
        for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
            tl_trace_options o;
            struct run *r;
            tl_trace_options_init(&o);
            o.buffer_size = ways[w].buffer;
            r = run_bytes(b.data, b.len, ways[w].chunk, &o, 1);
            print_message("%s chunk %zu buffer %zu: %zu events\n", files[f], ways[w].chunk, ways[w].buffer, r->n);
            assert_same_run(whole, r);
            run_free(r);
        }
        run_free(whole);
        free(b.data);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Derived edge cases                                                                         */

static void test_truncated_mid_event(void **state)
{
    struct run *r = run_file("derived-edge-cases/kineto_object_truncated_mid_event.json");
    (void)state;
    /* 41 complete events; the 42nd starts at byte 9423 and the file stops at 9457 */
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->n, 41);
    assert_true(r->stats.truncated);
    assert_false(r->stats.unterminated);
    assert_int_equal(r->stats.malformed, 0);
    assert_true(r->has_error);
    assert_int_equal(r->error.offset, 9423);
    assert_non_null(strstr(r->error.text, "offset 9423"));
    assert_string_equal(r->error.source, "test");
    /* the keys before traceEvents were read */
    assert_int_equal(r->meta.form, TL_TRACE_FORM_OBJECT);
    assert_int_equal(r->meta.device_count, 8);
    assert_string_equal(r->meta.display_time_unit, "ms");
    assert_int_equal(r->meta.schema_version, 1);
    run_free(r);
}

static void test_truncated_after_comma(void **state)
{
    struct run *r = run_file("derived-edge-cases/kineto_object_truncated_after_comma.json");
    (void)state;
    assert_int_equal(r->n, 62);
    assert_true(r->stats.truncated); /* the object form's "]}" is missing: data may be lost */
    assert_true(r->has_error);
    assert_int_equal(r->error.offset, 12597); /* the end of the input */
    assert_non_null(strstr(r->error.text, "traceEvents"));
    assert_string_equal(r->ev[61].name, "op_wait");
    run_free(r);
}

static void test_unterminated_array(void **state)
{
    struct run *r = run_file("derived-edge-cases/array_unterminated_trailing_comma.json");
    (void)state;
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->n, 75);
    assert_true(r->stats.unterminated);
    assert_false(r->stats.truncated);
    assert_false(r->has_error);
    assert_int_equal(r->stats.warnings, 0); /* the format allows it */
    assert_true(has_problem(r, "no closing ']'"));
    run_free(r);

    r = run_file("speedscope-trace-event-fixtures/simple-partial.json");
    assert_int_equal(r->n, 6);
    assert_true(r->stats.unterminated);
    assert_false(r->stats.truncated);
    run_free(r);

    /* cut inside an event of the array form: truncated, not unterminated */
    r = run_text("[{\"ph\":\"B\",\"ts\":1},\n{\"ph\":\"E\",\"t");
    assert_int_equal(r->n, 1);
    assert_true(r->stats.truncated);
    assert_false(r->stats.unterminated);
    assert_int_equal(r->error.offset, 20);
    run_free(r);
}

static void test_bom_crlf(void **state)
{
    struct run *r = run_file("derived-edge-cases/array_bom_crlf.json");
    struct run *ref = run_file("kineto-docs-traces/before_fix_trace.json");
    (void)state;
    assert_int_equal(r->n, 75);
    assert_true(r->stats.bom);
    assert_int_equal(r->stats.warnings, 0);
    assert_false(r->stats.unterminated);
    assert_false(r->has_error);
    /* the same events as the trace it was derived from */
    assert_int_equal(ref->n, 75);
    for (size_t i = 0; i < 75 && i < KEEP; i++) {
        assert_string_equal(r->ev[i].name, ref->ev[i].name);
        assert_string_equal(r->ev[i].ph, ref->ev[i].ph);
        assert_int_equal(r->ev[i].ts, ref->ev[i].ts);
        assert_int_equal(r->ev[i].dur, ref->ev[i].dur);
        assert_string_equal(r->ev[i].pid_str, ref->ev[i].pid_str);
        assert_string_equal(r->ev[i].tid_str, ref->ev[i].tid_str);
    }
    run_free(r);
    run_free(ref);
}

static void test_deep_nesting(void **state)
{
    struct run *r = run_file("derived-edge-cases/deep_nested_args.json");
    const tl_parse_error *p;
    tl_trace_options o;
    (void)state;
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->n, 0);
    assert_int_equal(r->stats.malformed, 1);
    assert_false(r->stats.truncated);
    p = find_problem(r, "nesting deeper than 256 levels");
    assert_non_null(p);
    assert_non_null(strstr(p->text, "event at offset 1 skipped"));
    assert_true(p->offset > 1 && p->offset < 1867);
    run_free(r);

    /* with a higher limit the same event reads fine: the limit is the only reason */
    tl_trace_options_init(&o);
    o.max_depth = 1024;
    {
        struct blob b = load_corpus("derived-edge-cases/deep_nested_args.json");
        r = run_bytes(b.data, b.len, 0, &o, 1);
        free(b.data);
    }
    assert_int_equal(r->n, 1);
    assert_string_equal(r->ev[0].name, "deep");
    assert_int_equal(r->stats.malformed, 0);
    run_free(r);

    /* 100000 levels: an error, not a crash, and reading goes on after it */
    {
        size_t depth = 100000, n = 0;
        char *t = malloc(2 * depth + 64);
        n += (size_t)snprintf(t, 64, "[{\"args\":");
        memset(t + n, '[', depth);
        n += depth;
        memset(t + n, ']', depth);
        n += depth;
        memcpy(t + n, "},{\"ph\":\"i\"}]", 14);
        r = run_bytes(t, strlen(t), 0, NULL, 1);
        free(t);
    }
    assert_int_equal(r->n, 1);
    assert_int_equal(r->stats.malformed, 1);
    assert_string_equal(r->ev[0].ph, "i");
    run_free(r);
}

static void test_dup_keys(void **state)
{
    struct run *r = run_file("derived-edge-cases/dup_keys.json");
    (void)state;
    assert_int_equal(r->n, 1);
    assert_int_equal(r->ev[0].ts, 5000); /* the last "ts" wins */
    assert_int_equal(r->ev[0].pid, 2);   /* the last "pid" wins */
    assert_int_equal(r->stats.duplicate_keys, 2);
    assert_true(has_problem(r, "the last one wins"));
    run_free(r);
}

static void test_nan_infinity(void **state)
{
    struct run *r = run_file("derived-edge-cases/nan_infinity_literals.json");
    tl_args_iter it;
    tl_view key;
    tl_json_value v;
    tl_view args;
    (void)state;
    assert_int_equal(r->n, 1);
    assert_int_equal(r->stats.nonfinite, 3);
    assert_int_equal(r->stats.malformed, 0);
    assert_true(r->ev[0].has_dur);
    args.ptr = r->ev[0].args;
    args.len = strlen(r->ev[0].args);
    tl_args_iter_init(&it, args);
    assert_true(tl_args_next(&it, &key, &v));
    assert_true(tl_view_eq(key, "occ"));
    assert_int_equal(v.kind, TL_JSON_NONFINITE);
    assert_false(v.is_number);
    assert_true(tl_args_next(&it, &key, &v));
    assert_true(tl_args_next(&it, &key, &v));
    assert_true(tl_view_eq(key, "neg"));
    assert_true(tl_view_eq(v.text, "-Infinity"));
    assert_false(tl_args_next(&it, &key, &v));
    run_free(r);

    /* NaN as ts: treated as missing */
    r = run_text("[{\"ph\":\"X\",\"ts\":NaN,\"dur\":-Infinity}]");
    assert_int_equal(r->n, 1);
    assert_false(r->ev[0].has_ts);
    assert_false(r->ev[0].has_dur);
    assert_int_equal(r->stats.nonfinite, 2);
    assert_int_equal(r->stats.bad_numbers, 0);
    run_free(r);
}

static void test_invalid_utf8_and_control_chars(void **state)
{
    struct run *r = run_file("derived-edge-cases/invalid_utf8_bytes.json");
    char buf[256];
    tl_view v;
    (void)state;
    assert_int_equal(r->n, 1);
    assert_int_equal(r->stats.invalid_utf8, 2); /* 0xFF and 0xFE */
    assert_true(has_problem(r, "invalid UTF-8"));
    assert_int_equal(strlen(r->ev[0].name), strlen("torch/_inductor/config.py(0): ") + 2);
    run_free(r);

    r = run_file("derived-edge-cases/raw_control_chars_in_strings.json");
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.control_chars, 2); /* a raw newline and a raw tab */
    assert_int_equal(r->stats.bad_escapes, 3);   /* \U, \x, \p (but \t is a real escape) */
    assert_string_equal(r->ev[0].name, "line1\nline2\ttab");
    v.ptr = r->ev[1].name;
    v.len = strlen(r->ev[1].name);
    assert_int_equal(tl_view_unescape(v, buf, sizeof buf), strlen(r->ev[1].name) - 1);
    assert_string_equal(buf, "C:\\Users\\x\torch\\profiler.py(611): __init__");
    run_free(r);

    /* valid multi-byte UTF-8 is not counted; overlongs and surrogates are */
    r = run_text("[{\"name\":\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"},"
                 "{\"name\":\"\xC0\xAF \xED\xA0\x80\"}]");
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.invalid_utf8, 2 + 3);
    run_free(r);
}

static void test_unicode_unescape(void **state)
{
    struct run *r = run_file("derived-edge-cases/unicode_and_escapes.json");
    char buf[128];
    tl_view v;
    size_t n;
    (void)state;
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.warnings, 0);
    v.ptr = r->ev[0].name;
    v.len = strlen(r->ev[0].name);
    n = tl_view_unescape(v, buf, sizeof buf);
    assert_int_equal(n, strlen("caf\xC3\xA9 \xF0\x9F\x98\x80 ") + 1 + 3); /* NUL inside */
    assert_memory_equal(buf, "caf\xC3\xA9 \xF0\x9F\x98\x80 \0nul", n);
    v.ptr = r->ev[1].name;
    v.len = strlen(r->ev[1].name);
    tl_view_unescape(v, buf, sizeof buf);
    assert_string_equal(buf, "lone \xEF\xBF\xBD surrogate");
    run_free(r);

    /* output cut like snprintf: the full length is returned */
    v.ptr = "abc\\n\\u00e9xyz";
    v.len = strlen(v.ptr);
    assert_int_equal(tl_view_unescape(v, buf, 5), 9);
    assert_string_equal(buf, "abc\n");
    assert_int_equal(tl_view_unescape(v, NULL, 0), 9);
}

static void test_commas(void **state)
{
    struct run *r = run_file("derived-edge-cases/leading_comma_array.json");
    (void)state;
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.extra_commas, 1);
    assert_int_equal(r->stats.by_phase['B'], 1);
    assert_int_equal(r->stats.by_phase['E'], 1);
    run_free(r);

    r = run_text("[{\"ph\":\"B\"}\n{\"ph\":\"E\"},,{\"ph\":\"i\",}, ]");
    assert_int_equal(r->n, 3);
    assert_int_equal(r->stats.missing_commas, 1);
    assert_int_equal(r->stats.extra_commas, 1);
    assert_int_equal(r->stats.trailing_commas, 2);
    assert_int_equal(r->stats.malformed, 0);
    run_free(r);

    r = run_file("perfetto-difftests/inline/args_ordered.json");
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.trailing_commas, 2); /* inside args */
    run_free(r);

    r = run_file("perfetto-difftests/inline/json_trailing_comma.json");
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.trailing_commas, 1);
    assert_false(r->stats.truncated);
    run_free(r);
}

static void test_ids(void **state)
{
    struct run *r = run_file("derived-edge-cases/big_and_hex_ids.json");
    (void)state;
    assert_int_equal(r->n, 4);
    assert_string_equal(r->ev[0].id, "18446744073709551615"); /* beyond int64, kept as text */
    assert_false(r->ev[0].id_quoted);
    assert_string_equal(r->ev[1].id, "0xffffffffffffffff");
    assert_true(r->ev[1].id_quoted);
    assert_string_equal(r->ev[2].id, "<absent>");
    assert_string_equal(r->ev[2].id2_local, "0x1");
    assert_string_equal(r->ev[3].id2_local, "0x1");
    assert_int_equal(r->stats.by_phase['s'], 1);
    assert_int_equal(r->stats.by_phase['f'], 1);
    run_free(r);
}

/* The index walker takes a flow's numeric "id" and its "bp", and a kernel's plain integer arrays
 * ("grid": [8192, 1, 1]), itself; what it does not take (a leading zero, a quoted id, a trailing
 * comma, a nested, negative or fractional element, an empty array) goes where it went before.
 * Either way the events, their every field, the warnings and their offsets are the byte
 * parser's (no_index). */
static void test_fast_path_flows_and_arrays(void **state)
{
    static const char text[] =
        "[\n"
        "{\"ph\": \"s\", \"id\": 157892, \"pid\": 1, \"tid\": 1, \"ts\": 5.208,\"cat\": \"ac2g\", "
        "\"name\": \"ac2g\"},\n"
        "{\"ph\": \"f\", \"id\": 157892, \"pid\": 0, \"tid\": 7, \"ts\": 6.502,\"cat\": \"ac2g\", "
        "\"name\": \"ac2g\", \"bp\": \"e\"},\n"
        "{\"ph\": \"f\", \"id\" : 0123 , \"bp\" :\"e\" , \"ts\": 7},\n"
        "{\"ph\": \"s\", \"id\": \"0x1f\", \"ts\": 8},\n"
        "{\"ph\": \"f\", \"id\": 9, \"bp\": 1, \"ts\": 9},\n"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 10, \"dur\": 1, \"args\": "
        "{\"stream\": 7, \"grid\": [8192, 1, 1], \"block\": [256 , 1,1], \"e\": [], \"n\": [[1]], "
        "\"m\": [-1, 2], \"f\": [1.5], \"correlation\": 3}},\n"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"t\", \"ts\": 11, \"dur\": 1, \"args\": "
        "{\"grid\": [1,], \"stream\": 7}},\n"
        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"u\", \"ts\": 12, \"dur\": 1, \"args\": "
        "{\"grid\": [1 2], \"stream\": 7}}\n"
        "]\n";
    tl_trace_options o;
    struct run *fast, *bytes;
    (void)state;

    fast = run_bytes(text, sizeof text - 1, 0, NULL, 0);
    tl_trace_options_init(&o);
    o.no_index = 1;
    bytes = run_bytes(text, sizeof text - 1, 0, &o, 0);
    assert_same_run(fast, bytes);
    assert_int_equal(fast->n, 8);
    for (size_t i = 0; i < fast->n; i++)
        assert_int_equal(fast->digest[i], bytes->digest[i]);
    assert_string_equal(fast->ev[0].id, "157892");
    assert_false(fast->ev[0].id_quoted);
    assert_string_equal(fast->ev[2].id, "0123");
    assert_string_equal(fast->ev[3].id, "0x1f");
    assert_true(fast->ev[3].id_quoted);
    assert_int_equal(fast->ev[5].stream, 7);
    assert_int_equal(fast->ev[5].correlation, 3);
    assert_int_equal(fast->stats.trailing_commas, 1); /* [1,] */
    assert_int_equal(fast->stats.missing_commas, 1);  /* [1 2] */
    assert_int_equal(bytes->fast_events, 0);
    /* all but the two events with a warning: the walker leaves those to the byte parser */
    assert_int_equal(fast->fast_events, 6);
    run_free(fast);
    run_free(bytes);
}

static void test_pid_tid_kinds(void **state)
{
    struct run *r = run_file("derived-edge-cases/mixed_string_int_tids.json");
    (void)state;
    assert_int_equal(r->n, 7);
    assert_true(r->ev[0].tid_int);
    assert_false(r->ev[0].tid_quoted);
    assert_int_equal(r->ev[0].tid, 7);
    assert_true(r->ev[1].tid_int); /* "7" is an integer written as a string */
    assert_true(r->ev[1].tid_quoted);
    assert_int_equal(r->ev[1].tid, 7);
    assert_false(r->ev[3].tid_int);
    assert_string_equal(r->ev[3].tid_str, "stream 7");
    assert_string_equal(r->ev[5].pid_str, "Spans");
    assert_false(r->ev[5].pid_int);
    assert_string_equal(r->ev[6].pid_str, ""); /* present but empty, not absent */
    assert_true(r->ev[6].pid_quoted);
    run_free(r);
}

static void test_dur_variants(void **state)
{
    struct run *r = run_file("derived-edge-cases/negative_and_missing_dur.json");
    (void)state;
    assert_int_equal(r->n, 3);
    assert_true(r->ev[0].has_dur);
    assert_int_equal(r->ev[0].dur, -3000); /* kept: the analysis decides */
    assert_false(r->ev[1].has_dur);
    assert_false(r->ev[2].has_dur); /* null */
    assert_int_equal(r->stats.warnings, 0);
    run_free(r);
}

static void test_phases(void **state)
{
    struct run *r = run_file("derived-edge-cases/unknown_phases_and_ph_variants.json");
    (void)state;
    assert_int_equal(r->n, 9);
    assert_int_equal(r->stats.phase_long, 1);    /* "XXX" */
    assert_int_equal(r->stats.phase_missing, 2); /* no "ph", and {} */
    assert_int_equal(r->stats.by_phase['Q'], 1);
    assert_int_equal(r->stats.by_phase['('], 1);
    assert_int_equal(r->stats.by_phase['='], 1);
    assert_int_equal(r->ev[0].phase, 0);
    assert_int_equal(r->ev[1].phase, 'Q');
    assert_string_equal(r->ev[8].name, "<absent>");
    run_free(r);

    r = run_file("derived-edge-cases/only_metadata.json");
    assert_int_equal(r->n, 4);
    assert_int_equal(r->stats.by_phase['M'], 4);
    assert_false(r->ev[0].has_ts);
    assert_non_null(strstr(r->ev[2].args, "rank 3"));
    run_free(r);

    r = run_file("perfetto-difftests/inline/trailing_empty_event.json");
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.phase_missing, 1);
    run_free(r);
}

static void test_x_ties_and_nesting(void **state)
{
    struct run *r = run_file("derived-edge-cases/x_ties_and_float_nesting.json");
    (void)state;
    assert_int_equal(r->n, 5);
    assert_int_equal(r->ev[0].ts, 244654227065);
    assert_int_equal(r->ev[0].dur, 36075);
    assert_int_equal(r->ev[1].ts, 244654227095);
    assert_int_equal(r->ev[1].dur, 36045);
    /* the child ends exactly where the parent does, in integer ns */
    assert_int_equal(r->ev[0].ts + r->ev[0].dur, r->ev[1].ts + r->ev[1].dur);
    run_free(r);
}

static void test_empty_and_other_data(void **state)
{
    struct run *r = run_file("derived-edge-cases/empty_trace_events.json");
    (void)state;
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->n, 0);
    assert_true(r->meta.has_trace_events);
    assert_int_equal(r->meta.form, TL_TRACE_FORM_OBJECT);
    assert_string_equal(r->meta.display_time_unit, "ms");
    assert_string_equal(r->other_data, "{\"version\":\"x\"}");
    assert_false(r->has_error);
    run_free(r);
}

/* ---------------------------------------------------------------------------------------- */
/* Kineto metadata and args                                                                   */

static void test_kineto_meta(void **state)
{
    struct run *r = run_file("param-dlrm_kineto-8rank/worker0_step_12.1694128201545.pt.trace.json");
    (void)state;
    assert_int_equal(r->n, 3290);
    assert_true(r->meta.has_rank);
    assert_int_equal(r->meta.rank, 0);
    assert_true(r->meta.has_world_size);
    assert_int_equal(r->meta.world_size, 8);
    assert_string_equal(r->meta.backend, "nccl");
    assert_int_equal(r->meta.device_count, 8);
    assert_string_equal(r->meta.devices[0].name, "Tesla V100-SXM2-32GB");
    assert_int_equal(r->meta.devices[0].total_global_mem, 34079899648);
    assert_int_equal(r->meta.devices[0].num_sms, 80);
    assert_int_equal(r->meta.devices[0].compute_major, 7);
    assert_int_equal(r->meta.devices[7].id, 7);
    assert_true(r->meta.has_schema_version);
    run_free(r);

    r = run_file("kineto-docs-traces/before_fix_trace.json");
    assert_true(r->meta.has_base_time);
    assert_int_equal(r->meta.base_time_ns, 1775078550000000000);
    assert_string_equal(r->meta.display_time_unit, "ms");
    assert_string_equal(r->meta.trace_name, "/tmp/libkineto_out_of_order_kwjg69.json");
    assert_int_equal(r->meta.device_count, 8);
    assert_string_equal(r->meta.devices[0].name, "NVIDIA H100");
    assert_false(r->meta.has_rank);
    run_free(r);

    /* keys after traceEvents are known at the end; unknown values of any size are skipped */
    r = run_text("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1}],\"stackFrames\":{\"1\":{\"name\":"
                 "\"a]}\\\"\"}},\"distributedInfo\":{\"backend\":\"gloo\",\"rank\":3,"
                 "\"world_size\":4},\"samples\":[1,2,[3]]}");
    assert_int_equal(r->n, 1);
    assert_int_equal(r->meta.rank, 3);
    assert_int_equal(r->meta.world_size, 4);
    assert_string_equal(r->meta.backend, "gloo");
    assert_int_equal(r->stats.warnings, 0);
    assert_false(r->has_error);
    run_free(r);
}

static void test_kineto_args(void **state)
{
    struct run *r = run_file("kineto-docs-traces/before_fix_trace.json");
    int kernel = 0, runtime = 0, cpu_op = 0;
    (void)state;
    for (size_t i = 0; i < r->n && i < KEEP; i++) {
        const struct ev_copy *e = &r->ev[i];
        if (!strcmp(e->cat, "kernel") && !kernel++) {
            assert_string_equal(e->name, "Kernel");
            assert_true(e->has_stream && e->has_device && e->has_correlation);
            assert_int_equal(e->stream, 1);
            assert_int_equal(e->device, 0);
            assert_int_equal(e->correlation, 1);
            assert_int_equal(e->ts, 88437691101749);
            assert_int_equal(e->dur, 20);
        }
        if (!strcmp(e->cat, "cuda_runtime") && !runtime++) {
            assert_string_equal(e->name, "cudaLaunchKernel");
            assert_true(e->has_correlation);
            assert_int_equal(e->correlation, 1);
            assert_false(e->has_stream);
        }
        if (!strcmp(e->cat, "cpu_op") && e->has_external_id)
            cpu_op++;
    }
    assert_true(kernel > 0 && runtime > 0 && cpu_op > 0);
    run_free(r);
}

static void test_args_iter(void **state)
{
    struct run *r = run_text("[{\"ph\":\"C\",\"name\":\"mem\",\"args\":{\"a\":1,\"b\":-2.5e1,"
                             "\"c\":\"3\",\"d\":{\"x\":[1,{}]},\"e\":null,\"f\":\"x\"}}]");
    static const struct {
        const char *key;
        enum tl_json_kind kind;
        int is_number;
        double number;
    } want[] = {
        { "a", TL_JSON_NUMBER, 1, 1 }, { "b", TL_JSON_NUMBER, 1, -25 }, { "c", TL_JSON_STRING, 1, 3 },
        { "d", TL_JSON_OBJECT, 0, 0 }, { "e", TL_JSON_NULL, 0, 0 },     { "f", TL_JSON_STRING, 0, 0 },
    };
    tl_args_iter it;
    tl_view key, args;
    tl_json_value v;
    (void)state;

    assert_int_equal(r->n, 1);
    args.ptr = r->ev[0].args;
    args.len = strlen(r->ev[0].args);
    tl_args_iter_init(&it, args);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_true(tl_args_next(&it, &key, &v));
        assert_true(tl_view_eq(key, want[i].key));
        assert_int_equal(v.kind, want[i].kind);
        assert_int_equal(v.is_number, want[i].is_number);
        if (want[i].is_number)
            assert_true(v.number == want[i].number);
    }
    assert_true(tl_view_eq(v.text, "x"));
    assert_false(tl_args_next(&it, &key, &v));
    assert_false(tl_args_next(&it, &key, &v));
    run_free(r);

    /* absent args: no members */
    args.ptr = NULL;
    args.len = 0;
    tl_args_iter_init(&it, args);
    assert_false(tl_args_next(&it, &key, &v));

    /* perfetto's counter string edge cases: only whole numbers count */
    r = run_file("perfetto-difftests/inline/json_counter_args.json");
    assert_int_equal(r->n, 1);
    args.ptr = r->ev[0].args;
    args.len = strlen(r->ev[0].args);
    tl_args_iter_init(&it, args);
    {
        int numbers = 0, members = 0;
        while (tl_args_next(&it, &key, &v)) {
            members++;
            numbers += v.is_number;
            if (tl_view_eq(key, "leading_dot"))
                assert_true(v.is_number && v.number == 0.75);
            if (tl_view_eq(key, "incomplete_exp") || tl_view_eq(key, "just_plus"))
                assert_false(v.is_number);
        }
        assert_int_equal(members, 10);
        assert_int_equal(numbers, 5); /* .75 246. 01.23 050 +10.5 */
    }
    run_free(r);
}

/* Arrays in args (kernels' "grid"/"block", record_shapes' "Input Dims"/"Input type"): each
 * member's kind and exact text, whether the array is one tl_args_next() checks itself (plain
 * integers and strings, one level deep) or one it leaves to the byte parser (fractions,
 * escapes, deeper nesting, a comma out of place); the members after them still come. */
static void test_args_arrays(void **state)
{
    static const char text[] = "{\"grid\": [8192, 1, 1], \"block\":[256,1,1],\"dims\": [[8, 1024, 4096], [], [-1, 0]],"
                               " \"types\": [\"c10::BFloat16\", \"\"], \"empty\": [ ], \"frac\": [1.5, 2e3],"
                               " \"deep\": [[[1]], 2], \"esc\": [\"a\\\"b\"], \"obj\": [{\"x\": 1}], \"lead0\": [01],"
                               " \"tc\": [1,], \"ws\": [\n1 ,\t2 ] , \"n\": 7}";
    static const struct {
        const char *key, *text;
        enum tl_json_kind kind;
    } want[] = {
        { "grid", "[8192, 1, 1]", TL_JSON_ARRAY },
        { "block", "[256,1,1]", TL_JSON_ARRAY },
        { "dims", "[[8, 1024, 4096], [], [-1, 0]]", TL_JSON_ARRAY },
        { "types", "[\"c10::BFloat16\", \"\"]", TL_JSON_ARRAY },
        { "empty", "[ ]", TL_JSON_ARRAY },
        { "frac", "[1.5, 2e3]", TL_JSON_ARRAY },
        { "deep", "[[[1]], 2]", TL_JSON_ARRAY },
        { "esc", "[\"a\\\"b\"]", TL_JSON_ARRAY },
        { "obj", "[{\"x\": 1}]", TL_JSON_ARRAY },
        { "lead0", "[01]", TL_JSON_ARRAY },
        { "tc", "[1,]", TL_JSON_ARRAY },
        { "ws", "[\n1 ,\t2 ]", TL_JSON_ARRAY },
        { "n", "7", TL_JSON_NUMBER },
    };
    tl_args_iter it;
    tl_view key, args = { text, sizeof text - 1 };
    tl_json_value v;
    (void)state;

    tl_args_iter_init(&it, args);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_true(tl_args_next(&it, &key, &v));
        assert_true(tl_view_eq(key, want[i].key));
        assert_int_equal(v.kind, want[i].kind);
        assert_int_equal(v.text.len, strlen(want[i].text));
        assert_memory_equal(v.text.ptr, want[i].text, v.text.len);
        assert_int_equal(v.is_number, want[i].kind == TL_JSON_NUMBER);
    }
    assert_false(tl_args_next(&it, &key, &v));

    /* a comma missing inside an array: the byte parser takes it as it does in events */
    static const char loose[] = "{\"a\": [1, 2], \"b\": [1 2], \"c\": 3}";
    tl_args_iter_init(&it, (tl_view){ loose, sizeof loose - 1 });
    assert_true(tl_args_next(&it, &key, &v));
    assert_true(tl_view_eq(key, "a") && tl_view_eq(v.text, "[1, 2]"));
    assert_true(tl_args_next(&it, &key, &v));
    assert_true(tl_view_eq(key, "b") && tl_view_eq(v.text, "[1 2]") && v.kind == TL_JSON_ARRAY);
    assert_true(tl_args_next(&it, &key, &v));
    assert_true(tl_view_eq(key, "c") && v.is_number && v.number == 3);
    assert_false(tl_args_next(&it, &key, &v));
}

/* tl_args_next_picked(): the members of the keys picked, with the values tl_args_next() gives,
 * both from the members the index walker kept (an X event's args) and without them (the
 * byte parser's event, a raw args text), and nothing after the last one. */
static int pick_two(tl_view k)
{
    return tl_view_eq(k, "grid") ? 1 : tl_view_eq(k, "registers per thread") ? 2 : 0;
}

static void test_args_picked(void **state)
{
    static const char text[] =
        "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2,\"pid\":0,\"tid\":7,"
        "\"args\":{\"External id\": 5, \"grid\": [8, 1, 1], \"stream\": 7, \"registers per thread\": 32,"
        " \"grid\": [9, 1, 1], \"x\": \"grid\"}}]";
    tt_mem_src m = { text, sizeof text - 1, 0, 0, 0 };
    tl_trace_stream s;
    tl_trace_event e;
    tl_args_iter it;
    tl_view key;
    tl_json_value v;
    int which;
    (void)state;

    assert_int_equal(tl_trace_stream_open(&s, tt_mem_read, &m, "test", NULL), 0);
    assert_int_equal(tl_trace_stream_next(&s, &e), 1);
    assert_non_null(e.args_index); /* an X event's members are kept */
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0)
            tl_args_iter_init_event(&it, &e); /* from the index */
        else
            tl_args_iter_init(&it, e.args); /* parsed again */
        assert_true(tl_args_next_picked(&it, pick_two, &which, &key, &v));
        assert_int_equal(which, 1);
        assert_true(tl_view_eq(key, "grid") && tl_view_eq(v.text, "[8, 1, 1]") && v.kind == TL_JSON_ARRAY);
        assert_true(tl_args_next_picked(&it, pick_two, &which, &key, &v));
        assert_int_equal(which, 2);
        assert_true(v.is_number && v.number == 32);
        assert_true(tl_args_next_picked(&it, pick_two, &which, &key, &v));
        assert_int_equal(which, 1);
        assert_true(tl_view_eq(v.text, "[9, 1, 1]")); /* a key given twice: both, in order */
        assert_false(tl_args_next_picked(&it, pick_two, &which, &key, &v));
        assert_false(tl_args_next(&it, &key, &v)); /* and the iterator stays at the end */
    }
    assert_int_equal(tl_trace_stream_next(&s, &e), 0);
    tl_trace_stream_release(&s);
}

/* tl_view_contains(): memmem()'s answer, at the edges of the view too. */
static void test_view_contains(void **state)
{
    static const char t[] = "{\"grid\": [1], \"x\": \"gridgrid\"}";
    (void)state;
    assert_true(tl_view_contains((tl_view){ t, sizeof t - 1 }, "\"grid\"", 6));
    assert_true(tl_view_contains((tl_view){ t + 1, 6 }, "\"grid\"", 6));    /* exactly the view */
    assert_false(tl_view_contains((tl_view){ t + 1, 5 }, "\"grid\"", 6));   /* one byte short */
    assert_false(tl_view_contains((tl_view){ t + 2, 8 }, "\"grid\"", 6));   /* starts past the quote */
    assert_false(tl_view_contains((tl_view){ t + 14, 19 }, "\"grid\"", 6)); /* grid unquoted */
    assert_false(tl_view_contains((tl_view){ NULL, 0 }, "\"grid\"", 6));
    assert_true(tl_view_contains((tl_view){ "ab", 2 }, "ab", 2));
    assert_false(tl_view_contains((tl_view){ "aab", 2 }, "ab", 2));
}

/* ---------------------------------------------------------------------------------------- */
/* Gzip                                                                                       */

static void test_gzip_bytes_named_json(void **state)
{
    struct blob b = load_corpus("derived-edge-cases/gzip_bytes_named_json.json");
    struct run *r = run_bytes(b.data, b.len, 0, NULL, 0); /* no gzip source */
    struct run *ref = run_file("kineto-docs-traces/before_fix_trace.json");
    (void)state;
    assert_int_equal(r->rc, TL_TRACE_ERR_FORMAT);
    assert_int_equal(r->n, 0);
    assert_int_equal(r->error.offset, 0);
    assert_non_null(strstr(r->error.text, "gzip"));
    run_free(r);

    r = run_bytes(b.data, b.len, 3, NULL, 1); /* sniffed, even 3 bytes at a time */
    assert_true(r->gz_is_gzip);
    assert_int_equal(r->n, 75);
    assert_int_equal(r->total, ref->total);
    run_free(r);
    run_free(ref);
    free(b.data);
}

static void test_gzip_multimember(void **state)
{
    struct run *gz = run_file("derived-edge-cases/rank0_multimember.json.gz");
    struct run *plain = run_file("param-dlrm_kineto-8rank/worker0_step_12.1694128201545.pt.trace.json");
    (void)state;
    assert_true(gz->gz_is_gzip);
    assert_true(gz->gz_members > 1);
    assert_int_equal(gz->rc, 0);
    assert_int_equal(gz->n, 3290);
    /* byte for byte the same stream: same events, same offsets */
    assert_int_equal(gz->total, plain->total);
    assert_int_equal(gz->stats.bytes_read, plain->stats.bytes_read);
    assert_int_equal(gz->meta.world_size, 8);
    assert_false(plain->gz_is_gzip);
    run_free(gz);
    run_free(plain);
}

static void test_gzip_truncated(void **state)
{
    struct run *gz = run_file("derived-edge-cases/rank0_truncated_stream.json.gz");
    struct run *plain = run_file("param-dlrm_kineto-8rank/worker0_step_12.1694128201545.pt.trace.json");
    (void)state;
    assert_true(gz->gz_is_gzip);
    assert_int_equal(gz->rc, TL_TRACE_ERR_READ);
    assert_true(gz->stats.truncated);
    assert_non_null(strstr(gz->gz_error, "compressed offset 26409")); /* the file's size */
    assert_true(gz->has_error);
    assert_non_null(strstr(gz->error.text, "read error"));
    /* the events decoded before the cut are kept, and they are the original's first ones */
    assert_true(gz->n > 1000);
    assert_true(gz->n < plain->n);
    for (size_t i = 0; i < gz->n; i++)
        assert_int_equal(gz->digest[i], plain->digest[i]);
    run_free(gz);
    run_free(plain);
}

/* Inflate all of `gz` through a gzip source, `cap` bytes per read; returns the bytes decoded
 * before the end or the error (in *out, malloc'd) and the error text in `err`. */
static size_t inflate_all(const unsigned char *gz, size_t n, size_t cap, int background, char **out, char *err,
                          size_t errcap)
{
    tt_mem_src m = { (const char *)gz, n, 0, 0, 0 };
    tl_gzip_source g;
    size_t len = 0, space = 1 << 16;
    ssize_t k;
    char *buf = malloc(space);

    assert_non_null(buf);
    assert_int_equal(tl_gzip_source_init(&g, tt_mem_read, &m), 0);
    g.background = background;
    for (;;) {
        if (space - len < cap) {
            space = space * 2 + cap;
            buf = realloc(buf, space);
            assert_non_null(buf);
        }
        if ((k = tl_gzip_source_read(&g, buf + len, cap)) <= 0)
            break;
        len += (size_t)k;
    }
    snprintf(err, errcap, "%s", g.error);
    tl_gzip_source_release(&g);
    *out = buf;
    return len;
}

/* Issue 10 item 14: a truncated member gave fewer bytes to small reads than to large ones (the
 * decoder still held the rest of a match when the input ran out, and was not asked for it),
 * so the events and problems of a truncated .gz depended on the read buffer size. Every cut of
 * a compressed trace must decode to the same bytes, and the same error, for 1-byte and 1 MiB
 * reads. */
static void test_gzip_truncated_same_for_every_read_size(void **state)
{
    struct blob b = load_corpus("catapult-test_data/nestable_async.json");
    unsigned char *gz;
    z_stream zs;
    size_t gzn, cuts = 0;
    (void)state;

    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
    gz = malloc(deflateBound(&zs, b.len));
    assert_non_null(gz);
    zs.next_in = (unsigned char *)b.data;
    zs.avail_in = (uInt)b.len;
    zs.next_out = gz;
    zs.avail_out = (uInt)deflateBound(&zs, b.len);
    assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
    gzn = zs.total_out;
    deflateEnd(&zs);
    for (size_t cut = 10; cut <= gzn; cut++) {
        char *small, *large, *other, *bg, esmall[200], elarge[200], eother[200], ebg[200];
        size_t ns, nl, no, nb;
        /* zlib, then the default decoder (isa-l when built in): the same bytes and error */
        setenv("TALLY_GZIP_DECODER", "zlib", 1);
        no = inflate_all(gz, cut, 1u << 20, 0, &other, eother, sizeof eother);
        unsetenv("TALLY_GZIP_DECODER");
        ns = inflate_all(gz, cut, 1, 0, &small, esmall, sizeof esmall);
        nl = inflate_all(gz, cut, 1u << 20, 0, &large, elarge, sizeof elarge);
        nb = inflate_all(gz, cut, 7, 1, &bg, ebg, sizeof ebg); /* the helper thread inflates */
        assert_int_equal(nb, nl);
        assert_memory_equal(bg, large, nb);
        assert_string_equal(ebg, elarge);
        free(bg);
        assert_int_equal(no, nl);
        assert_memory_equal(other, large, no);
        assert_string_equal(eother, elarge);
        free(other);
        assert_int_equal(ns, nl);
        assert_memory_equal(small, large, ns);
        assert_memory_equal(small, b.data, ns); /* a prefix of the original */
        assert_string_equal(esmall, elarge);
        if (cut < gzn) {
            assert_non_null(strstr(esmall, "gzip data ends early"));
            cuts++;
        } else {
            assert_int_equal(ns, b.len);
            assert_string_equal(esmall, "");
        }
        free(small);
        free(large);
    }
    assert_true(cuts > 100);
    free(gz);
    free(b.data);
}

/* Inflate `gz` `cap` bytes per read into a buffer whose unused space holds `fill` bytes. */
static size_t inflate_into(const unsigned char *gz, size_t n, size_t cap, int fill, int background, char **out,
                           char *err, size_t errcap)
{
    tt_mem_src m = { (const char *)gz, n, 0, 0, 0 };
    tl_gzip_source g;
    size_t len = 0, space = 4u << 20;
    ssize_t k;
    char *buf = malloc(space);

    assert_non_null(buf);
    memset(buf, fill, space);
    assert_int_equal(tl_gzip_source_init(&g, tt_mem_read, &m), 0);
    g.background = background;
    while (space - len >= cap && (k = tl_gzip_source_read(&g, buf + len, cap)) > 0)
        len += (size_t)k;
    assert_true(space - len >= cap); /* the input decodes to less than 4 MiB */
    snprintf(err, errcap, "%s", g.error);
    tl_gzip_source_release(&g);
    *out = buf;
    return len;
}

/* A fuzz finding (tests/fuzz/seeds/trace_stream/corrupt-gzip-isal-unwritten-tail.gz): on a
 * corrupt member isa-l counted as output the tail of a bad match that it never wrote, and the
 * source let it decode straight into the caller's buffer, so those bytes were whatever the
 * caller's buffer held: the trace stream saw 890 warnings with 1 MiB reads and 895 with 16
 * bytes. The decoded bytes and the error must not depend on the read size nor on what the
 * caller's buffer held before. */
static void test_gzip_corrupt_same_for_every_buffer(void **state)
{
    struct blob b = load(TALLY_SOURCE_DIR "/tests/fuzz/seeds/trace_stream/corrupt-gzip-isal-unwritten-tail.gz");
    static const size_t caps[] = { 1, 16, 4096, 256u << 10, 1u << 20 };
    char *ref, eref[200];
    size_t nref;
    (void)state;

    nref = inflate_into((const unsigned char *)b.data, b.len, 1u << 20, 0, 0, &ref, eref, sizeof eref);
    assert_true(nref > 900000);
    assert_non_null(strstr(eref, "invalid gzip data"));
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        for (int fill = 0; fill < 256 * 2; fill += 0xA5) { /* and inflated by the helper thread */
            char *got, egot[200];
            size_t n = inflate_into((const unsigned char *)b.data, b.len, caps[i], fill & 0xff, fill >= 256, &got, egot,
                                    sizeof egot);
            assert_int_equal(n, nref);
            assert_memory_equal(got, ref, n);
            assert_string_equal(egot, eref);
            free(got);
        }
    free(ref);
    free(b.data);
}

/* A reader that stops early sees the public fields of what it read, with or without the helper
 * thread (which may have inflated one chunk further, into the next member or the garbage). */
static void test_gzip_background_stopped_early(void **state)
{
    unsigned char *gz = malloc(4u << 20), *text = malloc(600000);
    size_t gzn = 0;
    (void)state;

    assert_non_null(gz);
    assert_non_null(text);
    for (size_t i = 0; i < 600000; i++) /* incompressible enough for several chunks */
        text[i] = (unsigned char)('a' + (i * 2654435761u >> 7) % 26);
    for (int m = 0; m < 3; m++) { /* three members, then bytes that are not gzip */
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        assert_int_equal(deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        zs.next_in = text;
        zs.avail_in = 600000;
        zs.next_out = gz + gzn;
        zs.avail_out = (uInt)((4u << 20) - gzn);
        assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
        gzn += zs.total_out;
        deflateEnd(&zs);
    }
    memcpy(gz + gzn, "garbage", 7);
    gzn += 7;
    for (size_t stop = 1000; stop < 3 * 600000 + 1000; stop += 150000) {
        tl_gzip_source g[2];
        unsigned char buf[4096];
        for (int bg = 0; bg < 2; bg++) {
            tt_mem_src m = { (const char *)gz, gzn, 0, 0, 0 };
            size_t got = 0;
            ssize_t k = 1;
            assert_int_equal(tl_gzip_source_init(&g[bg], tt_mem_read, &m), 0);
            g[bg].background = bg;
            while (got < stop && (k = tl_gzip_source_read(&g[bg], buf, sizeof buf)) > 0)
                got += (size_t)k;
            tl_gzip_source_finish(&g[bg]);
        }
        assert_int_equal(g[0].members, g[1].members);
        assert_int_equal(g[0].in_bytes, g[1].in_bytes);
        assert_int_equal(g[0].trailing_garbage, g[1].trailing_garbage);
        assert_string_equal(g[0].error, g[1].error);
        tl_gzip_source_release(&g[0]);
        tl_gzip_source_release(&g[1]);
    }
    free(gz);
    free(text);
}

static void test_gzip_source_plain_and_garbage(void **state)
{
    static const char text[] = "[{\"ph\":\"i\"}]";
    struct run *r = run_bytes(text, 1, 0, NULL, 1); /* one byte: too short to sniff */
    (void)state;
    assert_false(r->gz_is_gzip);
    assert_int_equal(r->rc, 0);
    assert_true(r->stats.unterminated);
    run_free(r);

    /* gzip, then bytes that are not another member: the data is kept, the rest noted */
    {
        struct blob b = load_corpus("catapult-test_data/simple_trace_gz.gz");
        tt_mem_src m;
        tl_gzip_source g;
        char *d = malloc(b.len + 4), out[4096];
        ssize_t n, total = 0;
        memcpy(d, b.data, b.len);
        memcpy(d + b.len, "\0\0\0\0", 4);
        m = (tt_mem_src){ d, b.len + 4, 0, 0, 0 };
        assert_int_equal(tl_gzip_source_init(&g, tt_mem_read, &m), 0);
        while ((n = tl_gzip_source_read(&g, out, sizeof out)) > 0)
            total += n;
        assert_int_equal(n, 0);
        assert_true(total > 1000);
        assert_true(g.trailing_garbage);
        assert_int_equal(g.members, 1);
        tl_gzip_source_release(&g);
        /* corrupt the deflate data: an error naming an offset, not a crash */
        d[b.len / 2] ^= 0x55;
        d[b.len / 2 + 1] ^= 0x55;
        m.pos = 0;
        assert_int_equal(tl_gzip_source_init(&g, tt_mem_read, &m), 0);
        while ((n = tl_gzip_source_read(&g, out, sizeof out)) > 0)
            ;
        assert_int_equal(n, -1);
        assert_non_null(strstr(g.error, "compressed offset"));
        tl_gzip_source_release(&g);
        free(d);
        free(b.data);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Malformed input                                                                            */

static void test_malformed_event_resync(void **state)
{
    static const char text[] = "[{\"name\":\"a\",\"ph\":\"X\"},\n"
                               "{\"name\" 1,\"ph\":\"X\",\"args\":{\"k\":[1,2]}},\n"
                               "{\"name\":\"c\",\"ph\":\"X\",\"ts\":tru},\n"
                               "{\"name\":\"d\",\"ph\":\"X\"}]";
    struct run *r = run_text(text);
    const tl_parse_error *p;
    uint64_t colon = (uint64_t)(strstr(text, "\"name\" 1") - text) + 7;
    uint64_t second = (uint64_t)(strstr(text, "{\"name\" 1") - text);
    (void)state;
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->n, 2);
    assert_string_equal(r->ev[0].name, "a");
    assert_string_equal(r->ev[1].name, "d");
    assert_int_equal(r->stats.malformed, 2);
    p = find_problem(r, "expected ':' after key");
    assert_non_null(p);
    assert_int_equal(p->offset, colon);
    {
        char want[64];
        snprintf(want, sizeof want, "event at offset %llu skipped", (unsigned long long)second);
        assert_non_null(strstr(p->text, want));
    }
    assert_non_null(find_problem(r, "expected a value"));
    assert_false(r->has_error);
    run_free(r);
}

static void test_junk_and_non_objects(void **state)
{
    struct run *r = run_text("[1,\"x\",null,{\"ph\":\"i\"},[1,[2]],:::{\"ph\":\"B\"}]");
    (void)state;
    assert_int_equal(r->n, 2);
    assert_int_equal(r->stats.non_objects, 4);
    assert_int_equal(r->stats.malformed, 1); /* the ':::' */
    assert_true(has_problem(r, "not an object"));
    run_free(r);

    r = run_text("[{\"ph\":\"i\"}] trailing");
    assert_int_equal(r->n, 1);
    assert_int_equal(r->stats.other, 1);
    assert_int_equal(r->rc, 0);
    run_free(r);

    r = run_text("{\"traceEvents\":{\"not\":\"an array\"}}");
    assert_int_equal(r->n, 0);
    assert_false(r->meta.has_trace_events);
    assert_true(has_problem(r, "not an array"));
    run_free(r);
}

static void test_not_a_trace(void **state)
{
    struct run *r = run_text("hello");
    (void)state;
    assert_int_equal(r->rc, TL_TRACE_ERR_FORMAT);
    assert_int_equal(r->error.offset, 0);
    run_free(r);

    r = run_text("  \n ");
    assert_int_equal(r->rc, TL_TRACE_ERR_FORMAT);
    assert_non_null(strstr(r->error.text, "empty"));
    run_free(r);

    r = run_text("{\"a\":1 \"b\"::2}");
    assert_int_equal(r->rc, TL_TRACE_ERR_FORMAT);
    assert_int_equal(r->error.offset, 11); /* the second colon after "b" */
    assert_int_equal(r->stats.missing_commas, 1);
    run_free(r);

    r = run_file("framepack/generated/profiling_report.json");
    assert_int_equal(r->rc, 0);
    assert_int_equal(r->n, 0);
    assert_int_equal(r->meta.form, TL_TRACE_FORM_OBJECT);
    assert_false(r->meta.has_trace_events);
    run_free(r);
}

static void test_oversized_event(void **state)
{
    char text[4096];
    size_t n;
    tl_trace_options o;
    (void)state;

    n = (size_t)snprintf(text, sizeof text, "[{\"ph\":\"B\",\"ts\":1},{\"ph\":\"X\",\"name\":\"");
    memset(text + n, 'x', 1000);
    n += 1000;
    n += (size_t)snprintf(text + n, sizeof text - n, "\",\"args\":{\"a\":\"}]\"}},{\"ph\":\"E\",\"ts\":2}]");
    tl_trace_options_init(&o);
    o.max_event_size = 256;
    for (size_t chunk = 0; chunk < 8; chunk += 7) {
        for (size_t buffer = 16; buffer <= 4096; buffer *= 16) {
            struct run *r;
            o.buffer_size = buffer;
            r = run_bytes(text, n, chunk, &o, 1);
            assert_int_equal(r->n, 2);
            assert_string_equal(r->ev[0].ph, "B");
            assert_string_equal(r->ev[1].ph, "E");
            assert_int_equal(r->ev[1].ts, 2000);
            assert_int_equal(r->stats.oversized, 1);
            assert_true(has_problem(r, "larger than 256 bytes"));
            assert_false(r->has_error);
            run_free(r);
        }
    }
}

static void test_big_skipped_top_level_value(void **state)
{
    size_t big = 300000, n = 0;
    char *t = malloc(big + 200);
    tl_trace_options o;
    struct run *r;
    (void)state;

    n += (size_t)snprintf(t, 100, "{\"systemTraceEvents\":\"");
    memset(t + n, 'a', big); /* a string much larger than the buffer and the event limit */
    n += big;
    n += (size_t)snprintf(t + n, 100, "\",\"traceEvents\":[{\"ph\":\"i\"}]}");
    tl_trace_options_init(&o);
    o.buffer_size = 64;
    o.max_event_size = 1024;
    r = run_bytes(t, n, 0, &o, 1);
    assert_int_equal(r->n, 1);
    assert_int_equal(r->stats.warnings, 0);
    assert_false(r->has_error);
    run_free(r);

    /* a metadata value the reader would parse, but larger than the limit: passed over */
    n = (size_t)snprintf(t, 100, "{\"otherData\":{\"k\":\"");
    memset(t + n, 'b', 2000);
    n += 2000;
    n += (size_t)snprintf(t + n, 100, "\"},\"traceEvents\":[{\"ph\":\"i\"}],\"schemaVersion\":3}");
    o.max_event_size = 256;
    r = run_bytes(t, n, 0, &o, 1);
    assert_int_equal(r->n, 1);
    assert_string_equal(r->other_data, "");
    assert_int_equal(r->meta.schema_version, 3);
    assert_false(r->has_error);
    run_free(r);
    n = (size_t)snprintf(t, 100, "{\"systemTraceEvents\":\"");
    memset(t + n, 'a', big);

    /* the same value cut off: truncated, naming where the value started */
    r = run_bytes(t, 1000, 0, &o, 1);
    assert_int_equal(r->n, 0);
    assert_true(r->stats.truncated);
    assert_non_null(strstr(r->error.text, "offset 21"));
    run_free(r);
    free(t);
}

static void test_fd_read(void **state)
{
    char path[1024];
    int fd;
    tl_trace_stream s;
    tl_trace_event e;
    int rc;
    (void)state;

    snprintf(path, sizeof path, "%s/%s", CORPUS, "param-dlrm_kineto-8rank/worker1_step_12.1694128201556.pt.trace.json");
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(tl_trace_stream_open(&s, tl_fd_read, &fd, path, NULL), 0);
    while ((rc = tl_trace_stream_next(&s, &e)) == 1)
        ;
    assert_int_equal(rc, 0);
    assert_int_equal(s.stats.events, 3424);
    assert_int_equal(s.meta.rank, 1);
    assert_int_equal(s.stats.bytes_read, 969531);
    tl_trace_stream_release(&s);
    close(fd);
}

/* Read `text` directly, with a read error where the input would end. */
static void read_failing(const char *text, size_t chunk, int *rc, tl_trace_stats *st, int *events)
{
    tt_mem_src m = { text, strlen(text), 0, chunk, 1 };
    tl_trace_options o;
    tl_trace_stream s;
    tl_trace_event e;

    tl_trace_options_init(&o);
    o.buffer_size = 16;
    assert_int_equal(tl_trace_stream_open(&s, tt_mem_read, &m, "failing", &o), 0);
    *events = 0;
    while ((*rc = tl_trace_stream_next(&s, &e)) == 1)
        (*events)++;
    *st = s.stats;
    assert_true(s.has_error);
    assert_non_null(strstr(s.error.text, "read error"));
    assert_non_null(strstr(s.error.text, strerror(EIO)));
    tl_trace_stream_release(&s);
}

static void test_read_error(void **state)
{
    tl_trace_stats st;
    int rc, events;
    (void)state;

    for (size_t chunk = 0; chunk < 3; chunk++) {
        /* broken off between events of the array form: truncated, not "unterminated" */
        read_failing("[{\"ph\":\"i\"},{\"ph\":\"i\"},", chunk, &rc, &st, &events);
        assert_int_equal(rc, TL_TRACE_ERR_READ);
        assert_int_equal(events, 2);
        assert_true(st.truncated);
        assert_false(st.unterminated);
        /* after a complete trace the error is still reported, but nothing is missing */
        read_failing("[{\"ph\":\"i\"}]  ", chunk, &rc, &st, &events);
        assert_int_equal(rc, TL_TRACE_ERR_READ);
        assert_int_equal(events, 1);
        assert_false(st.truncated);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_us_to_ns),
        cmocka_unit_test(test_ts_precision_in_events),
        cmocka_unit_test(test_exponent_and_precision_file),
        cmocka_unit_test(test_string_ts_perfetto),
        cmocka_unit_test(test_corpus_counts_match_python),
        cmocka_unit_test(test_chunking_gives_identical_results),
        cmocka_unit_test(test_truncated_mid_event),
        cmocka_unit_test(test_truncated_after_comma),
        cmocka_unit_test(test_unterminated_array),
        cmocka_unit_test(test_bom_crlf),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_dup_keys),
        cmocka_unit_test(test_nan_infinity),
        cmocka_unit_test(test_invalid_utf8_and_control_chars),
        cmocka_unit_test(test_unicode_unescape),
        cmocka_unit_test(test_commas),
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_fast_path_flows_and_arrays),
        cmocka_unit_test(test_pid_tid_kinds),
        cmocka_unit_test(test_dur_variants),
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_x_ties_and_nesting),
        cmocka_unit_test(test_empty_and_other_data),
        cmocka_unit_test(test_kineto_meta),
        cmocka_unit_test(test_kineto_args),
        cmocka_unit_test(test_args_iter),
        cmocka_unit_test(test_args_arrays),
        cmocka_unit_test(test_args_picked),
        cmocka_unit_test(test_view_contains),
        cmocka_unit_test(test_gzip_bytes_named_json),
        cmocka_unit_test(test_gzip_multimember),
        cmocka_unit_test(test_gzip_truncated),
        cmocka_unit_test(test_gzip_truncated_same_for_every_read_size),
        cmocka_unit_test(test_gzip_corrupt_same_for_every_buffer),
        cmocka_unit_test(test_gzip_background_stopped_early),
        cmocka_unit_test(test_gzip_source_plain_and_garbage),
        cmocka_unit_test(test_malformed_event_resync),
        cmocka_unit_test(test_junk_and_non_objects),
        cmocka_unit_test(test_not_a_trace),
        cmocka_unit_test(test_oversized_event),
        cmocka_unit_test(test_big_skipped_top_level_value),
        cmocka_unit_test(test_fd_read),
        cmocka_unit_test(test_read_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
