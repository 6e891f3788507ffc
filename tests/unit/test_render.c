/*
 * test_render.c - the render stage (tools/render): context escaping, and the
 * HTML and Markdown reports of synthetic aggregates.
 *
 * The aggregates are built from session results filled in directly (as
 * test_rules.c does) and finished with tl_aggregate_finish. Their names,
 * paths, labels and warnings carry strings made to break out of HTML, SVG
 * attributes and Markdown: the pages must hold their escaped forms and never
 * the raw ones. Also: the sections come in docs/architecture.md's order,
 * the same aggregate gives the same bytes (whatever order its sessions
 * arrived in), and the pages stay small for inputs with 100k names or 64
 * ranks x 8 lanes of busy timelines.
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

#include "aggregate.h"
#include "escape.h"
#include "numbers.h"
#include "render.h"
#include "text_numbers.h"
#include "units.h"
#include "tt_support.h"

#define MS(x) ((int64_t)((x)*1e6 + 0.5))
#define BASE_NS 1700000000000000000LL
#define NSTEPS 5

/* Hostile strings: script injection, attribute break-out, SVG break-out. */
#define H_SCRIPT "<script>alert(1)</script>"
#define H_QUOTE "q\"'&x"
#define H_SVG "evil</svg><svg onload=alert(2)>"

/* ---- capture ------------------------------------------------------------------------ */

typedef struct page {
    char *buf;
    size_t len;
} page;

typedef void (*escape_fn)(FILE *, const char *);

static char *escaped(escape_fn fn, const char *s)
{
    page p = { NULL, 0 };
    FILE *f = open_memstream(&p.buf, &p.len);
    assert_non_null(f);
    fn(f, s);
    assert_int_equal(fclose(f), 0);
    return p.buf;
}

/* The page is valid UTF-8 (no stray bytes, overlongs or surrogates). */
static void assert_utf8(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        size_t len = c < 0x80                 ? 1
                     : c >= 0xc2 && c <= 0xdf ? 2
                     : c >= 0xe0 && c <= 0xef ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
        if (len == 0 || i + len > n)
            fail_msg("invalid UTF-8 at byte %zu", i);
        for (size_t k = 1; k < len; k++)
            if ((u[i + k] & 0xc0) != 0x80)
                fail_msg("invalid UTF-8 at byte %zu", i);
        if ((c == 0xe0 && u[i + 1] < 0xa0) || (c == 0xed && u[i + 1] > 0x9f))
            fail_msg("overlong or surrogate at byte %zu", i);
        i += len;
    }
}

static page render(const tl_aggregate *a, int markdown)
{
    page p = { NULL, 0 };
    FILE *f = open_memstream(&p.buf, &p.len);
    assert_non_null(f);
    tl_report_options o = { "Report of <b>\"x\"</b> & co", 1700000000, "0.1.0-test" };
    int rc = markdown ? tl_render_markdown(f, a, &o) : tl_render_html(f, a, &o);
    assert_int_equal(rc, 0);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(strlen(p.buf), p.len); /* no NUL inside */
    assert_utf8(p.buf, p.len);
    return p;
}

static void assert_has(const char *hay, const char *needle)
{
    if (strstr(hay, needle) == NULL)
        fail_msg("the page does not contain \"%s\"", needle);
}

static void assert_lacks(const char *hay, const char *needle)
{
    const char *at = strstr(hay, needle);
    if (at != NULL)
        fail_msg("the page contains \"%s\" at byte %td: ...%.80s", needle, at - hay, at > hay + 40 ? at - 40 : hay);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---- escaping ----------------------------------------------------------------------- */

static void test_escape_html_text(void **state)
{
    (void)state;
    char *s = escaped(tl_escape_html, H_SCRIPT " " H_QUOTE " " H_SVG);
    assert_string_equal(s,
                        "&lt;script&gt;alert(1)&lt;/script&gt; q\"'&amp;x evil&lt;/svg&gt;&lt;svg onload=alert(2)&gt;");
    free(s);
    s = escaped(tl_escape_html, "a\x01"
                                "b\x7f"
                                "c\td\n\xc3\xa9");
    assert_string_equal(s, "a\xef\xbf\xbd"
                           "b\xef\xbf\xbd"
                           "c\td\n\xc3\xa9"); /* controls: U+FFFD; UTF-8 kept */
    free(s);
    /* invalid UTF-8 (a stray byte, a cut sequence, an overlong '<', a surrogate, a C1 control) */
    s = escaped(tl_escape_html, "a\xff"
                                "b\xc3"
                                "c\xc0\xbc"
                                "d\xed\xa0\x80"
                                "e\xc2\x85"
                                "f\xf0\x9f\x98\x80");
    assert_string_equal(s, "a\xef\xbf\xbd"
                           "b\xef\xbf\xbd"
                           "c\xef\xbf\xbd\xef\xbf\xbd"
                           "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                           "e\xef\xbf\xbd\xef\xbf\xbd"
                           "f\xf0\x9f\x98\x80");
    free(s);
    s = escaped(tl_escape_html, NULL);
    assert_string_equal(s, "");
    free(s);
}

static void test_escape_attr(void **state)
{
    (void)state;
    char *s = escaped(tl_escape_attr, "\" onmouseover='x' & <a>\n");
    assert_string_equal(s, "&quot; onmouseover=&#39;x&#39; &amp; &lt;a&gt;&#10;");
    free(s);
}

static void test_escape_markdown(void **state)
{
    (void)state;
    char *s = escaped(tl_escape_md, "a|b\\c`d*e_f[g](h)<i>#j~k&l!m\nn\r\to");
    assert_string_equal(s, "a\\|b\\\\c\\`d\\*e\\_f\\[g\\](h)\\<i\\>\\#j\\~k\\&l\\!m n  o");
    free(s);
    s = escaped(tl_escape_md, H_SCRIPT);
    assert_string_equal(s, "\\<script\\>alert(1)\\</script\\>");
    free(s);
}

static void md_cut5(FILE *f, const char *s)
{
    tl_escape_md_n(f, s, 5);
}
static void html_cut4(FILE *f, const char *s)
{
    tl_escape_html_n(f, s, 4);
}

static void test_escape_cut(void **state)
{
    (void)state;
    /* "aé" is 3 bytes: a cut at 2 would split é, so it cuts at 1 */
    assert_int_equal(tl_escape_cut("a\xc3\xa9z", 2), 1);
    assert_int_equal(tl_escape_cut("a\xc3\xa9z", 3), 3);
    assert_int_equal(tl_escape_cut("abc", 0), 3);
    char *s = escaped(html_cut4, "<<<<<<");
    assert_string_equal(s, "&lt;&lt;&lt;&lt;\xe2\x80\xa6");
    free(s);
    s = escaped(md_cut5, "ab|cd");
    assert_string_equal(s, "ab\\|cd"); /* not cut: exactly 5 */
    free(s);
}

static void test_units(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(tl_units_dur(b, sizeof b, 1246000), "1.246 ms");
    assert_string_equal(tl_units_dur(b, sizeof b, 14455000), "14.46 ms");
    assert_string_equal(tl_units_dur(b, sizeof b, 317500000), "317.5 ms");
    assert_string_equal(tl_units_dur(b, sizeof b, 870), "870 ns");
    assert_string_equal(tl_units_dur(b, sizeof b, NAN), "\xe2\x80\x93");
    /* what would round to a 1000 of a unit is 1 of the next */
    assert_string_equal(tl_units_dur(b, sizeof b, 999960), "1.000 ms");
    assert_string_equal(tl_units_dur(b, sizeof b, 999.6), "1.000 \xc2\xb5s");
    assert_string_equal(tl_units_dur(b, sizeof b, 338000), "338.0 \xc2\xb5s");
    assert_int_equal(tl_units_cols(tl_units_dur(b, sizeof b, 999.9e3 - 1)), TL_UNITS_MAX_COLS - 2); /* "999.9 µs" */
    assert_string_equal(tl_units_count(b, sizeof b, 1e9 / 16.008e6), "62.47");
    assert_string_equal(tl_units_count(b, sizeof b, 1024), "1024");
    assert_string_equal(tl_units_bytes(b, sizeof b, 1.5 * 1024 * 1024 * 1024), "1.5 GiB");
    assert_string_equal(tl_units_pct(b, sizeof b, 45.25), "45.2%");
    assert_string_equal(tl_units_date(b, sizeof b, 1700000000), "2023-11-14T22:13:20Z");
    assert_string_equal(tl_units_time(b, sizeof b, 1694128201426556000LL), "2023-09-07T23:10:01.426Z");
    assert_string_equal(tl_units_tick(b, sizeof b, 5e6, 5e6, TL_UNIT_NS), "5 ms");
    assert_true(tl_units_nice_step(100, 5, TL_UNIT_COUNT) == 20);
}

/* ---- synthetic sessions ----------------------------------------------------------------- */

static void add_name(tl_session *s, int group, const char *name, int64_t total_ns, int n)
{
    tl_sname *x = &s->names[s->nnames++];
    memset(x, 0, sizeof *x);
    x->group = group;
    x->name = tt_xstrdup(name);
    x->exact = 1;
    x->median_ns = x->p95_ns = x->std_ns = NAN;
    for (int i = 0; i < n; i++)
        tl_dur_stat_add(&x->d, (uint64_t)(total_ns / n), TL_PROFILE_MAX_SAMPLES);
}

static void add_kernel(tl_session *s, const char *name, int type, int64_t total_ns, int n)
{
    tl_skernel *k = &s->kernels[s->nkernels++];
    memset(k, 0, sizeof *k);
    k->name = tt_xstrdup(name);
    k->type = type;
    for (int i = 0; i < n; i++)
        tl_dur_stat_add(&k->d, (uint64_t)(total_ns / n), TL_PROFILE_MAX_SAMPLES);
}

static void gpu_numbers(tl_session *s, double slow)
{
    tl_gpu_breakdown *g = &s->gpu;
    g->present = 1;
    g->steps_in_window = NSTEPS - 1;
    g->events = 1000;
    g->window_start = s->start_ns;
    g->window_end = s->start_ns + MS(100);
    g->kernel_time = MS(100);
    g->busy = MS(60 * slow > 95 ? 95 : 60 * slow);
    g->idle = g->kernel_time - g->busy;
    g->compute = MS(40 * slow);
    g->non_compute = g->busy - g->compute;
    g->comm = MS(15);
    g->comm_compute = MS(5);
    g->by_mask[TL_MASK_COMPUTE] = g->compute - g->comm_compute;
    g->by_mask[TL_MASK_COMM] = g->comm - g->comm_compute;
    g->by_mask[TL_MASK_COMPUTE | TL_MASK_COMM] = g->comm_compute;
    g->streams = calloc(1, sizeof *g->streams);
    assert_non_null(g->streams);
    g->nstreams = 1;
    g->streams[0] = (tl_stream_idle){ 0, 7, MS(20), MS(10), MS(10), 100, MS(60), 40, MS(20), 0 };
}

/* Lanes over 100 ms. noisy: every bin a different kind and level, the
 * worst case for the run-length drawing; else blocks of compute and comm. */
static void timeline(tl_session *s, int nlanes, int noisy)
{
    tl_timeline *t = &s->timeline;
    t->start_ns = s->start_ns;
    t->end_ns = s->start_ns + MS(100);
    t->lanes = calloc((size_t)nlanes, sizeof *t->lanes);
    assert_non_null(t->lanes);
    t->nlanes = (size_t)nlanes;
    for (int l = 0; l < nlanes; l++) {
        tl_lane *lane = &t->lanes[l];
        char label[96];
        lane->kind = TL_LANE_GPU;
        lane->a = s->id.rank;
        lane->b = 7 + l;
        snprintf(label, sizeof label, l == 0 ? "GPU %d stream %d " H_SCRIPT : "GPU %d stream %d", s->id.rank, 7 + l);
        lane->label = tt_xstrdup(label);
        for (int i = 0; i < TL_TIMELINE_BINS; i++) {
            if (noisy)
                tl_lane_busy_row(lane, (i + l + s->id.rank) % TL_KT_COUNT)[i] =
                    (float)((i * 7 + l * 5 + s->id.rank) % 11) / 10.0f;
            else if ((i / 64) % 2 == 0)
                tl_lane_busy_row(lane, (i / 128) % 2 ? TL_KT_COMM : TL_KT_COMPUTE)[i] = 0.9f;
        }
    }
}

static void memory(tl_session *s)
{
    s->mem = calloc(50, sizeof *s->mem);
    assert_non_null(s->mem);
    s->nmem = 50;
    for (int i = 0; i < 50; i++)
        s->mem[i] = (tl_mem_sample){ s->start_ns + MS(2 * i), 1e9 + 1e7 * i, 2e9 };
    s->snaps = calloc(2, sizeof *s->snaps);
    assert_non_null(s->snaps);
    s->snaps[s->nsnaps++] = (tl_ssnap){ tt_xstrdup("after_load " H_SVG), 1e9, 2e9, 1.5e9, 3e9, NAN, INT64_MIN };
    s->snaps[s->nsnaps++] = (tl_ssnap){ tt_xstrdup("after " H_QUOTE), 1.2e9, 2e9, 1.5e9, 3e9, NAN, INT64_MIN };
    s->peak_allocated = 1.5e9;
    s->peak_reserved = 2e9;
    s->device_total = 32e9;
    s->peak_rss = 3e9;
}

typedef struct synth {
    int rank, world, lanes, noisy;
    double slow;    /* step and compute time factor: > 1.2 makes a straggler */
    int64_t offset; /* added to the start time */
} synth;

static void session(tl_session *s, const synth *p)
{
    char path[128];
    memset(s, 0, sizeof *s);
    snprintf(path, sizeof path, "runs/" H_SCRIPT "/rank%d.pt.trace.json", p->rank);
    s->id.path = tt_xstrdup(path);
    s->id.format = TL_FMT_KINETO;
    s->id.rank = p->rank;
    s->id.world_size = p->world;
    s->id.rank_source = TL_RANK_CONTENT;
    s->id.rank_detail = tt_xstrdup("distributedInfo.rank " H_QUOTE);
    s->start_ns = BASE_NS + p->rank * 1000 + p->offset;
    s->span_ns = MS(100 * p->slow);
    assert_int_equal(
        tl_problems_add_text(&s->id.problems, TL_PROBLEM_WARNING, -1, "skipped an event: " H_SVG " " H_QUOTE), 0);
    s->device_name = tt_xstrdup("GPU " H_QUOTE);
    s->names = calloc(8, sizeof *s->names);
    assert_non_null(s->names);
    add_name(s, TL_GROUP_SECTIONS, "forward", MS(30 * p->slow), 5);
    add_name(s, TL_GROUP_SECTIONS, H_SCRIPT, MS(20 * p->slow), 5);
    add_name(s, TL_GROUP_SECTIONS, H_QUOTE, MS(10), 5);
    add_name(s, TL_GROUP_SECTIONS, "bytes \xff\xfe\xc3 end", MS(9), 5);
    add_name(s, TL_GROUP_OPS, H_SVG, MS(8), 50);
    add_name(s, TL_GROUP_OPS, "aten::mm", MS(12), 50);
    s->kernels = calloc(4, sizeof *s->kernels);
    assert_non_null(s->kernels);
    add_kernel(s, "gemm " H_SCRIPT, TL_KT_COMPUTE, MS(30 * p->slow), 100);
    add_kernel(s, "ncclKernel_AllReduce " H_QUOTE, TL_KT_COMM, MS(15), 10);
    add_kernel(s, H_SVG, TL_KT_MEMORY, MS(1), 10);
    s->steps = calloc(NSTEPS, sizeof *s->steps);
    assert_non_null(s->steps);
    s->nsteps = NSTEPS;
    for (int i = 0; i < NSTEPS; i++)
        s->steps[i] = (tl_sstep){ i + 1, MS(20 * p->slow), MS(8 * p->slow), s->start_ns + MS(20 * i), 0 };
    gpu_numbers(s, p->slow);
    if (p->lanes > 0)
        timeline(s, p->lanes, p->noisy);
    memory(s);
    s->gpu_util_mean = NAN;
}

static tl_aggregate *aggregate(int nranks, int lanes, int noisy, int reverse)
{
    tl_aggregate *a = malloc(sizeof *a);
    assert_non_null(a);
    tl_aggregate_init(a, NULL);
    for (int k = 0; k < nranks; k++) {
        int r = reverse ? nranks - 1 - k : k;
        synth p = { r, nranks, lanes, noisy, r == 1 ? 1.5 : 1.0, 0 };
        tl_session s;
        session(&s, &p);
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    /* an input that is not a profile */
    tl_session x;
    memset(&x, 0, sizeof x);
    x.id.path = tt_xstrdup("notes/" H_SVG ".txt");
    x.id.rank = -1;
    x.id.rank_detail = tt_xstrdup("");
    x.start_ns = INT64_MIN;
    x.span_ns = -1;
    x.peak_allocated = x.peak_reserved = x.device_total = x.peak_rss = x.gpu_util_mean = NAN;
    assert_int_equal(tl_problems_add_text(&x.id.problems, TL_PROBLEM_SKIPPED, -1, "not a profile: " H_SCRIPT), 0);
    assert_int_equal(tl_aggregate_add_session(a, &x), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
    return a;
}

static void done(tl_aggregate *a)
{
    tl_aggregate_release(a);
    free(a);
}

/* ---- the HTML page ---------------------------------------------------------------------- */

static void test_html_escapes_hostile_strings(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(4, 2, 0, 0);
    page p = render(a, 0);
    assert_lacks(p.buf, "<script");
    assert_lacks(p.buf, H_SVG);
    assert_lacks(p.buf, "<svg onload");
    assert_lacks(p.buf, H_QUOTE);
    assert_lacks(p.buf, "<b>");
    assert_has(p.buf, "&lt;script&gt;alert(1)&lt;/script&gt;");
    assert_has(p.buf, "evil&lt;/svg&gt;&lt;svg onload=alert(2)&gt;");
    assert_has(p.buf, "q\"'&amp;x");                                  /* in text */
    assert_has(p.buf, "Report of &lt;b&gt;\"x\"&lt;/b&gt; &amp; co"); /* the title */
    /* every <svg is one of ours: a chart or its nested plot */
    assert_int_equal(count(p.buf, "<svg"), count(p.buf, "<svg class=\"chart") + count(p.buf, "<svg class=\"plot\""));
    assert_int_equal(count(p.buf, "<svg"), count(p.buf, "</svg>"));
    /* nothing fetched */
    assert_lacks(p.buf, "http://");
    assert_lacks(p.buf, "https://");
    assert_lacks(p.buf, "src=");
    assert_lacks(p.buf, "{{");
    free(p.buf);
    done(a);
}

static void test_html_sections_in_design_order(void **state)
{
    (void)state;
    static const char *const ids[] = { "headline",  "waits",           "recommendations", "per-rank",
                                       "breakdown", "calltree",        "steps",           "gpu",
                                       "timelines", "step-categories", "kernels",         "memory",
                                       "telemetry", "sessions",        "inputs",          "system" };
    tl_aggregate *a = aggregate(4, 2, 0, 0);
    page p = render(a, 0);
    const char *at = p.buf;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char tag[64];
        snprintf(tag, sizeof tag, "<section id=\"%s\"", ids[i]);
        const char *hit = strstr(at, tag);
        if (hit == NULL)
            fail_msg("section %s missing or out of order", ids[i]);
        at = hit + 1;
    }
    assert_int_equal(count(p.buf, "<section "), sizeof ids / sizeof ids[0]);
    free(p.buf);
    done(a);
}

/* The page has what the browser and CLI tests rely on, and the straggler is marked in text. */
static void test_html_structure(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(4, 2, 0, 0);
    assert_true(a->nstragglers > 0 && a->stragglers[0].rank == 1);
    page p = render(a, 0);
    const char *t = strstr(p.buf, "<table id=\"ranks\">");
    assert_non_null(t);
    const char *body = strstr(t, "<tbody>"), *end = strstr(t, "</tbody>");
    assert_true(body && end && body < end);
    size_t rows = 0;
    for (const char *r = strstr(body, "<tr"); r && r < end; r = strstr(r + 1, "<tr"))
        rows++;
    assert_int_equal(rows, 4);
    assert_has(t, "<tr class=\"straggler\"><th scope=\"row\">1 <span class=\"tag\">straggler</span>");
    const char *tl = strstr(p.buf, "<section id=\"timelines\""), *km = strstr(p.buf, "<section id=\"kernels\"");
    assert_true(tl && km);
    const char *svg = strstr(tl, "<svg");
    assert_true(svg != NULL && svg < km);
    /* charts are accessible: role, title, desc */
    size_t charts = count(p.buf, "<svg class=\"chart");
    assert_true(charts >= 6);
    assert_int_equal(count(p.buf, "role=\"img\" aria-labelledby="), charts);
    assert_int_equal(count(p.buf, "<desc id="), charts);
    /* the headline names the straggler with its numbers */
    assert_has(p.buf, "<p class=\"headline\">Rank 1 is a straggler: its GPU compute per step is 50% above the other "
                      "ranks' median on average, slower in ");
    assert_has(p.buf, "2023-11-14T22:13:20Z");
    free(p.buf);
    done(a);
}

static void test_html_is_deterministic(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(6, 3, 0, 0), *b = aggregate(6, 3, 0, 1);
    page p1 = render(a, 0), p2 = render(a, 0), p3 = render(b, 0);
    assert_int_equal(p1.len, p2.len);
    assert_memory_equal(p1.buf, p2.buf, p1.len);
    assert_int_equal(p1.len, p3.len); /* sessions added in the other order */
    assert_memory_equal(p1.buf, p3.buf, p1.len);
    page m1 = render(a, 1), m2 = render(b, 1);
    assert_int_equal(m1.len, m2.len);
    assert_memory_equal(m1.buf, m2.buf, m1.len);
    free(p1.buf);
    free(p2.buf);
    free(p3.buf);
    free(m1.buf);
    free(m2.buf);
    done(a);
    done(b);
}

static void test_html_without_timelines(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(2, 0, 0, 0);
    page p = render(a, 0);
    const char *tl = strstr(p.buf, "<section id=\"timelines\"");
    assert_non_null(tl);
    assert_has(tl, "No timeline data");
    free(p.buf);
    done(a);
}

/* Counts read as English: one rank is "1 rank", in the page and its Markdown
 * ("1 input", "1 warning" when there is one). */
static void test_plurals(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(1, 0, 0, 0);
    page p = render(a, 0), m = render(a, 1);
    assert_has(p.buf, "one line per rank (1 rank)");
    assert_lacks(p.buf, "(1 ranks)");
    assert_lacks(p.buf, "of 1 ranks");
    assert_lacks(m.buf, " 1 warnings");
    assert_lacks(m.buf, " 1 inputs");
    free(p.buf);
    free(m.buf);
    done(a);
    a = aggregate(3, 0, 0, 0);
    p = render(a, 0);
    assert_has(p.buf, "one line per rank (3 ranks)");
    free(p.buf);
    done(a);
}

static void test_html_of_nothing(void **state)
{
    (void)state;
    tl_aggregate a;
    tl_aggregate_init(&a, NULL);
    assert_int_equal(tl_aggregate_finish(&a), 0);
    page p = render(&a, 0), m = render(&a, 1);
    assert_has(p.buf, "No usable input");
    assert_has(p.buf, "<section id=\"system\"");
    assert_has(m.buf, "No usable input");
    free(p.buf);
    free(m.buf);
    tl_aggregate_release(&a);
}

/* Sessions at these (rank, offset) pairs, a day is 86400e9 ns. */
static tl_aggregate *at_times(const int *ranks, const int64_t *offsets, int n)
{
    tl_aggregate *a = malloc(sizeof *a);
    assert_non_null(a);
    tl_aggregate_init(a, NULL);
    for (int i = 0; i < n; i++) {
        synth p = { ranks[i], 2, 2, 0, 1.0, offsets[i] };
        tl_session s;
        session(&s, &p);
        assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    }
    assert_int_equal(tl_aggregate_finish(a), 0);
    return a;
}

static size_t timeline_charts(const char *html)
{
    const char *tl = strstr(html, "<section id=\"timelines\""), *end = strstr(html, "<section id=\"kernels\"");
    size_t n = 0;
    assert_true(tl && end);
    for (const char *p = strstr(tl, "<svg class=\"chart timeline\""); p && p < end;
         p = strstr(p + 1, "<svg class=\"chart timeline\""))
        n++;
    return n;
}

/* Ranks that overlap share one axis; ranks a day apart get one each; so do
 * the sessions of a rank a day apart. */
static void test_timeline_axes(void **state)
{
    (void)state;
    const int64_t day = 86400LL * 1000000000LL;
    static const int ranks[] = { 0, 1 }, one_rank[] = { 0, 0 };
    const int64_t together[] = { 0, 0 }, apart[] = { 0, day };
    tl_aggregate *a = at_times(ranks, together, 2), *b = at_times(ranks, apart, 2), *c = at_times(one_rank, apart, 2);
    page pa = render(a, 0), pb = render(b, 0), pc = render(c, 0);
    assert_int_equal(timeline_charts(pa.buf), 1);
    assert_lacks(pa.buf, "own time axis");
    assert_has(pa.buf, "Timeline of 2 ranks</title>");
    assert_int_equal(timeline_charts(pb.buf), 2);
    assert_has(pb.buf, "The inputs cover 2 periods of time");
    assert_has(pb.buf, "Timeline of rank 0, period 1 of 2");
    assert_has(pb.buf, "Timeline of rank 1, period 2 of 2");
    assert_int_equal(timeline_charts(pc.buf), 2);
    assert_has(pc.buf, "Timeline of rank 0, period 2 of 2");
    free(pa.buf);
    free(pb.buf);
    free(pc.buf);
    done(a);
    done(b);
    done(c);
}

/* 64 ranks x 8 lanes of timelines whose every bin differs from the next. */
static void test_html_size_bounded(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(64, 8, 1, 0);
    page p = render(a, 0);
    print_message("64 ranks x 8 noisy lanes: %zu bytes of HTML\n", p.len);
    assert_true(p.len < 3u * 1024 * 1024);
    const char *t = strstr(p.buf, "<table id=\"ranks\">");
    assert_non_null(t);
    assert_int_equal(count(strstr(t, "<tbody>"), "<tr") - count(strstr(t, "</tbody>"), "<tr"), 64);
    free(p.buf);
    done(a);
}

/* ---- Markdown --------------------------------------------------------------------------- */

static void test_markdown_escapes(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(4, 0, 0, 0);
    page m = render(a, 1);
    assert_lacks(m.buf, "]("); /* no links */
    assert_has(m.buf, "\\<script\\>alert(1)\\</script\\>");
    assert_has(m.buf, "# Report of \\<b\\>\"x\"\\</b\\> \\& co");
    assert_has(m.buf, "## Recommendations");
    assert_has(m.buf, "| 1 (straggler) |");
    /* every '<' is escaped; the lines of a table have as many unescaped pipes as its header */
    size_t cols = 0;
    for (const char *c = m.buf; *c; c++)
        if (*c == '<' && (c == m.buf || c[-1] != '\\'))
            fail_msg("unescaped '<' at byte %td", c - m.buf);
    for (const char *line = m.buf; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line), pipes = 0;
        for (size_t i = 0; i < len; i++)
            pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
        if (len > 0 && line[0] == '|') {
            if (cols == 0)
                cols = pipes;
            if (pipes != cols)
                fail_msg("a table line with %zu cells instead of %zu: %.*s", pipes, cols, (int)len, line);
        } else {
            cols = 0;
        }
        line += len + (nl != NULL);
    }
    free(m.buf);
    done(a);
}

/* 100k names, each long and hostile: the summary stays under 1 MiB, the page under 3 MiB. */
/* ---- one formatter for the analysis's numbers ------------------------------------------- */

static int to_file(void *ctx, const void *buf, size_t len)
{
    return fwrite(buf, 1, len, ctx) == len ? 0 : -1;
}

/* Every output, as the user reads it. */
static char *every_output(const tl_aggregate *a, int which)
{
    page p = { NULL, 0 };
    FILE *f = open_memstream(&p.buf, &p.len);
    assert_non_null(f);
    tl_report_options o = { "numbers", 1700000000, "0.1.0-test" };
    tl_json j;
    switch (which) {
    case 0:
        assert_int_equal(tl_render_html(f, a, &o), 0);
        break;
    case 1:
        assert_int_equal(tl_render_markdown(f, a, &o), 0);
        break;
    case 2:
        tl_render_summary(f, a, 0, 200);
        break;
    case 3:
        tl_json_init(&j, to_file, f);
        tl_aggregate_write(&j, a, "test", 1);
        assert_int_equal(tl_json_finish(&j), 0);
        break;
    default:
        assert_int_equal(tl_render_trace(f, a, "0.1.0-test", 0), 0);
        break;
    }
    assert_int_equal(fclose(f), 0);
    return p.buf;
}

/* A duration, a size and a percentage analyze puts in a finding, its
 * evidence, a skipped rule's reason and the headline read the same in the
 * console, the Markdown, the HTML page, the aggregate JSON and the merged
 * trace: the text common/units.h gives the same value in a table
 * ("42.00 µs", never "0.042 ms"), and no token is left. */
static void test_numbers_one_format(void **state)
{
    (void)state;
    tl_aggregate *a = aggregate(2, 0, 0, 0);
    char want_dur[32], want_bytes[32], want_pct[32];
    tl_units_dur(want_dur, sizeof want_dur, 42000);
    tl_units_bytes(want_bytes, sizeof want_bytes, 1.5 * 1073741824.0);
    tl_units_pct(want_pct, sizeof want_pct, 45.25);
    assert_string_equal(want_dur, "42.00 \xc2\xb5s");
    assert_string_equal(want_bytes, "1.5 GiB");
    assert_string_equal(want_pct, "45.2%");
    char t[32];
    assert_string_equal(tl_text_number(t, sizeof t, TL_NUM_DUR, 42000), want_dur);
    assert_string_equal(tl_text_number(t, sizeof t, TL_NUM_DUR_ROUND, 1e6), "1 ms");
    assert_string_equal(tl_text_number(t, sizeof t, TL_NUM_BYTES_ROUND, 256.0 * 1048576), "256 MiB");
    assert_string_equal(tl_text_number(t, sizeof t, TL_NUM_PCT_WHOLE, 30), "30%");
    assert_string_equal(tl_text_number(t, sizeof t, TL_NUM_PCT_SIGNED, -12.25), "-12.2%");
    /* a token cut short by a bounded buffer leaves nothing behind */
    char cut[64];
    snprintf(cut, sizeof cut, "took %s", TL_DUR(42000));
    cut[strlen(cut) - 6] = '\0';
    char *plain = tl_text_numbers(cut);
    assert_string_equal(plain, "took ");
    free(plain);

    /* the headline and a finding in analyze's words, with typed numbers */
    free(a->headline);
    a->headline = tl_format("On rank 0, each gap is %s on average", TL_DUR(42000));
    a->headline_severity = "warning";
    assert_true(a->nrecs < TL_MAX_RECOMMENDATIONS && a->nskips < TL_MAX_RECOMMENDATIONS);
    tl_recommendation *r = &a->recs[a->nrecs++];
    memset(r, 0, sizeof *r);
    r->id = "launch-bound";
    r->severity = "warning";
    r->rank = 0;
    r->advice = "Use CUDA graphs.";
    r->finding = tl_format("On rank 0, the host's part averages %s a gap.", TL_DUR(42000));
    r->message = tl_format("%s %s", r->finding, r->advice);
    r->evidence =
        tl_format("gaps of %s; %s of %s reserved", TL_DUR(42000), TL_PCT(45.25), TL_BYTES(1.5 * 1073741824.0));
    a->skips[a->nskips].id = "eager-attention";
    a->skips[a->nskips].absent = 0;
    a->skips[a->nskips++].why = tl_format("under %s of the time", TL_PCT(45.25));

    static const char *const outputs[] = { "HTML", "Markdown", "console", "aggregate JSON", "merged trace" };
    for (int k = 0; k < 5; k++) {
        char *out = every_output(a, k);
        /* each output has the three numbers, never the old fixed-unit text nor a token */
        if (strstr(out, want_dur) == NULL || strstr(out, want_bytes) == NULL || strstr(out, want_pct) == NULL)
            fail_msg("the %s output lacks \"%s\", \"%s\" or \"%s\"", outputs[k], want_dur, want_bytes, want_pct);
        if (strstr(out, "0.042 ms") != NULL || strchr(out, '\x1f') != NULL || strchr(out, '\x1e') != NULL)
            fail_msg("the %s output writes a number another way", outputs[k]);
        /* the headline (first in every output that has one) with its number */
        if (k != 4) /* the merged trace has no headline */
            if (strstr(out, "each gap is 42.00 \xc2\xb5s on average") == NULL)
                fail_msg("the %s output's headline lacks its number", outputs[k]);
        free(out);
    }
    done(a);
}

static void test_markdown_size_bounded(void **state)
{
    (void)state;
    enum { N = 100000 };
    tl_aggregate *a = aggregate(2, 0, 0, 0);
    tl_session s;
    synth p = { 2, 2, 0, 0, 1.0, 0 }; /* the run's world size: a world size of 3 is another run */
    session(&s, &p);
    tl_sname *names = realloc(s.names, (s.nnames + 2 * N) * sizeof *names);
    assert_non_null(names);
    s.names = names;
    for (int i = 0; i < 2 * N; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s_%06d_%0150d|" H_SCRIPT, i % 2 ? "op" : "section", i / 2, i);
        tl_sname *x = &s.names[s.nnames++];
        memset(x, 0, sizeof *x);
        x->group = i % 2 ? TL_GROUP_OPS : TL_GROUP_SECTIONS;
        x->name = tt_xstrdup(name);
        x->median_ns = x->p95_ns = x->std_ns = NAN;
        x->d.count = 1;
        x->d.total = x->d.min = x->d.max = (uint64_t)(1000 + i);
        x->d.mean = 1000.0 + i;
    }
    assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
    assert_true(a->names.n >= 2 * N);
    page m = render(a, 1), h = render(a, 0);
    print_message("%d names: %zu bytes of Markdown, %zu of HTML\n", 2 * N, m.len, h.len);
    assert_true(m.len < 1024 * 1024);
    assert_true(h.len < 3u * 1024 * 1024);
    assert_has(m.buf, "more names");
    assert_lacks(h.buf, "<script");
    free(m.buf);
    free(h.buf);
    done(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_html_text),
        cmocka_unit_test(test_escape_attr),
        cmocka_unit_test(test_escape_markdown),
        cmocka_unit_test(test_escape_cut),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_html_escapes_hostile_strings),
        cmocka_unit_test(test_html_sections_in_design_order),
        cmocka_unit_test(test_html_structure),
        cmocka_unit_test(test_html_is_deterministic),
        cmocka_unit_test(test_html_without_timelines),
        cmocka_unit_test(test_plurals),
        cmocka_unit_test(test_html_of_nothing),
        cmocka_unit_test(test_html_size_bounded),
        cmocka_unit_test(test_timeline_axes),
        cmocka_unit_test(test_markdown_escapes),
        cmocka_unit_test(test_markdown_size_bounded),
        cmocka_unit_test(test_numbers_one_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
