/*
 * test_calltree.c - the call tree (tools/ingest/calltree.c, nesting.c,
 * tools/analyze/calltrees.c) on generated traces: exact inclusive and self
 * time and counts per path for recursion, siblings, equal start times and
 * input written in end order (libtally, B/E pairs); the node cap with its
 * stated count; the trip through a partial aggregate (every node equal, and
 * hostile partials refused); the merge across ranks (sums, least and most
 * of one rank); a CPU lane's calls on their rows.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <cmocka.h>

#include "aggregate.h"
#include "partial.h"
#include "calltree.h"
#include "json_writer.h"
#include "read_trace.h"
#include "render.h"
#include "tt_support.h"

/* ---- reading a trace from memory --------------------------------------------------------------- */

static tl_profile *read_text(const char *text, const char *path)
{
    tl_profile *p = calloc(1, sizeof *p);
    tl_profile_init(p, path);
    tt_mem_src m = { text, strlen(text), 0, 0, 0 };
    tl_trace_options opt;
    tl_trace_options_init(&opt);
    assert_int_equal(tl_read_trace(p, tt_mem_read, &m, &opt), 0);
    return p;
}

static void free_profile(tl_profile *p)
{
    tl_profile_release(p);
    free(p);
}

/* A growing JSON array of events. */
typedef struct text {
    char *s;
    size_t len;
    FILE *f;
    int n;
} text;

static void text_begin(text *t)
{
    t->s = NULL;
    t->len = 0;
    t->n = 0;
    t->f = open_memstream(&t->s, &t->len);
    fputs("[\n", t->f);
}

static void x(text *t, const char *cat, const char *name, int tid, double ts_us, double dur_us)
{
    fprintf(t->f, "%s{\"ph\":\"X\",\"pid\":1,\"tid\":%d,%s%s%s\"name\":\"%s\",\"ts\":%.3f,\"dur\":%.3f}",
            t->n++ ? ",\n" : "", tid, cat ? "\"cat\":\"" : "", cat ? cat : "", cat ? "\"," : "", name, ts_us, dur_us);
}

static void be(text *t, char ph, const char *name, double ts_us)
{
    fprintf(t->f, "%s{\"ph\":\"%c\",\"pid\":1,\"tid\":1,\"name\":\"%s\",\"ts\":%.3f}", t->n++ ? ",\n" : "", ph, name,
            ts_us);
}

static char *text_end(text *t)
{
    fputs("\n]\n", t->f);
    fclose(t->f);
    return t->s;
}

/* The node of a path "a/b/c" under the root named root; NONE when absent. */
static uint32_t path(const tl_calltree *t, const tl_strtab *strs, const char *root, const char *p)
{
    uint32_t at = TL_CALLTREE_NONE;
    for (uint32_t i = 0; i < t->n; i++)
        if (t->nodes[i].parent == TL_CALLTREE_NONE && strcmp(tl_strtab_get(strs, t->nodes[i].name), root) == 0)
            at = i;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", p);
    for (char *tok = strtok(buf, "/"); tok && at != TL_CALLTREE_NONE; tok = strtok(NULL, "/")) {
        uint32_t next = TL_CALLTREE_NONE;
        for (uint32_t i = 0; i < t->n; i++)
            if (t->nodes[i].parent == at && strcmp(tl_strtab_get(strs, t->nodes[i].name), tok) == 0)
                next = i;
        at = next;
    }
    return at;
}

#define US 1000

static void expect(const tl_calltree *t, const tl_strtab *strs, const char *root, const char *p, int64_t incl_us,
                   int64_t self_us, uint64_t count)
{
    uint32_t i = path(t, strs, root, p);
    if (i == TL_CALLTREE_NONE)
        fail_msg("no path %s/%s", root, p);
    if (t->nodes[i].incl_ns != incl_us * US || t->nodes[i].self_ns != self_us * US || t->nodes[i].count != count)
        fail_msg("%s/%s: inclusive %lld, self %lld, count %llu; expected %lld, %lld, %llu", root, p,
                 (long long)t->nodes[i].incl_ns, (long long)t->nodes[i].self_ns, (unsigned long long)t->nodes[i].count,
                 (long long)(incl_us * US), (long long)(self_us * US), (unsigned long long)count);
}

/* The generated nesting, in start order or in end order (children first):
 * operators inside annotations, one tree for the thread:
 *   annotation step [0,400) > annotation fwd [0,100) > op a [0,100) (the
 *   same range: the annotation holds the op) > op a [10,60) > op b [20,40);
 *   op a > op c [70,90)
 *   step > op d [200,250) and its child e [200,220): equal starts, the child first
 *   step > op a [300,310); op a [500,510) outside every annotation
 */
static char *generated(int end_order)
{
    text t;
    text_begin(&t);
    struct {
        const char *cat, *name;
        double ts, dur;
    } ev[] = {
        { "cpu_op", "a", 0, 100 },
        { "cpu_op", "a", 10, 50 },
        { "cpu_op", "b", 20, 20 },
        { "cpu_op", "c", 70, 20 },
        { "cpu_op", "e", 200, 20 },
        { "cpu_op", "d", 200, 50 },
        { "cpu_op", "a", 300, 10 },
        { "user_annotation", "step", 0, 400 },
        { "user_annotation", "fwd", 0, 100 },
        { "cpu_op", "a", 500, 10 },
    };
    size_t n = sizeof ev / sizeof ev[0];
    int order[16];
    for (size_t i = 0; i < n; i++)
        order[i] = (int)i;
    if (end_order) /* by end, inner first on equal ends: how a writer at completion orders them */
        for (size_t i = 0; i < n; i++)
            for (size_t j = i + 1; j < n; j++) {
                double ei = ev[order[i]].ts + ev[order[i]].dur, ej = ev[order[j]].ts + ev[order[j]].dur;
                if (ej < ei || (ej == ei && ev[order[j]].dur < ev[order[i]].dur)) {
                    int k = order[i];
                    order[i] = order[j];
                    order[j] = k;
                }
            }
    for (size_t i = 0; i < n; i++)
        x(&t, ev[order[i]].cat, ev[order[i]].name, 1, ev[order[i]].ts, ev[order[i]].dur);
    return text_end(&t);
}

static void expect_kind(const tl_calltree *t, const tl_strtab *strs, const char *root, const char *p, int kind)
{
    uint32_t i = path(t, strs, root, p);
    if (i == TL_CALLTREE_NONE || t->nodes[i].kind != kind)
        fail_msg("%s/%s: kind %d, expected %d", root, p, i == TL_CALLTREE_NONE ? -1 : t->nodes[i].kind, kind);
}

static void check_generated(const tl_calltree *t, const tl_strtab *strs)
{
    const char *ops = tl_calltree_kind_label(TL_CTK_OPS), *ann = tl_calltree_kind_label(TL_CTK_ANNOTATIONS);
    /* the annotations' root: its one top-level call, step, holds the operators */
    expect(t, strs, ann, "", 400, 0, 1);
    expect(t, strs, ann, "step", 400, 240, 1);
    expect(t, strs, ann, "step/fwd", 100, 0, 1);
    expect(t, strs, ann, "step/fwd/a", 100, 30, 1);
    expect(t, strs, ann, "step/fwd/a/a", 50, 30, 1);
    expect(t, strs, ann, "step/fwd/a/a/b", 20, 20, 1);
    expect(t, strs, ann, "step/fwd/a/c", 20, 20, 1);
    expect(t, strs, ann, "step/d", 50, 30, 1);
    expect(t, strs, ann, "step/d/e", 20, 20, 1);
    expect(t, strs, ann, "step/a", 10, 10, 1);
    /* the operators' root: the op outside every annotation */
    expect(t, strs, ops, "", 10, 0, 1);
    expect(t, strs, ops, "a", 10, 10, 1);
    /* each node its own kind */
    expect_kind(t, strs, ann, "", TL_CTK_ANNOTATIONS);
    expect_kind(t, strs, ann, "step/fwd", TL_CTK_ANNOTATIONS);
    expect_kind(t, strs, ann, "step/fwd/a", TL_CTK_OPS);
    expect_kind(t, strs, ann, "step/fwd/a/a/b", TL_CTK_OPS);
    expect_kind(t, strs, ops, "", TL_CTK_OPS);
    assert_int_equal(t->n, 12);
    assert_int_equal(t->dropped, 0);
    /* a parent before its children */
    for (uint32_t i = 0; i < t->n; i++)
        assert_true(t->nodes[i].parent == TL_CALLTREE_NONE || t->nodes[i].parent < i);
}

static void test_start_order(void **state)
{
    (void)state;
    char *s = generated(0);
    tl_profile *p = read_text(s, "start.json");
    assert_int_equal(p->nesting, TL_NEST_DONE);
    assert_non_null(p->calltree);
    check_generated(p->calltree, &p->strs);
    free_profile(p);
    free(s);
}

static void test_end_order(void **state)
{
    (void)state;
    char *s = generated(1);
    tl_profile *p = read_text(s, "end.json");
    assert_int_equal(p->nesting, TL_NEST_DONE);
    check_generated(p->calltree, &p->strs);
    free_profile(p);
    free(s);
}

/* PyTorch's numbered steps are one node, their operators under it: two
 * steps of a thread, and a range only named like one. */
static void test_profiler_steps(void **state)
{
    (void)state;
    text t;
    text_begin(&t);
    x(&t, "user_annotation", "ProfilerStep#1", 1, 0, 100);
    x(&t, "cpu_op", "aten::mm", 1, 10, 40);
    x(&t, "user_annotation", "ProfilerStep#2", 1, 100, 100);
    x(&t, "cpu_op", "aten::mm", 1, 110, 20);
    x(&t, "user_annotation", "ProfilerStep#2b", 1, 300, 10);
    char *s = text_end(&t);
    tl_profile *p = read_text(s, "steps.json");
    const char *ann = tl_calltree_kind_label(TL_CTK_ANNOTATIONS);
    expect(p->calltree, &p->strs, ann, "", 210, 0, 3);
    expect(p->calltree, &p->strs, ann, "ProfilerStep#*", 200, 140, 2);
    expect(p->calltree, &p->strs, ann, "ProfilerStep#*/aten::mm", 60, 60, 2);
    expect_kind(p->calltree, &p->strs, ann, "ProfilerStep#*/aten::mm", TL_CTK_OPS);
    expect(p->calltree, &p->strs, ann, "ProfilerStep#2b", 10, 10, 1);
    assert_int_equal(p->calltree->n, 4);
    free_profile(p);
    free(s);
}

/* B/E pairs complete at their E: the same nesting, written in end order. */
static void test_begin_end(void **state)
{
    (void)state;
    text t;
    text_begin(&t);
    be(&t, 'B', "outer", 0);
    be(&t, 'B', "mid", 10);
    be(&t, 'B', "leaf", 10);
    be(&t, 'E', "leaf", 15);
    be(&t, 'E', "mid", 40);
    be(&t, 'B', "mid", 50);
    be(&t, 'E', "mid", 70);
    be(&t, 'E', "outer", 100);
    char *s = text_end(&t);
    tl_profile *p = read_text(s, "be.json");
    const char *ev = tl_calltree_kind_label(TL_CTK_OTHER);
    expect(p->calltree, &p->strs, ev, "", 100, 0, 1);
    expect(p->calltree, &p->strs, ev, "outer", 100, 50, 1);
    expect(p->calltree, &p->strs, ev, "outer/mid", 50, 45, 2);
    expect(p->calltree, &p->strs, ev, "outer/mid/leaf", 5, 5, 1);
    free_profile(p);
    free(s);
}

/* Beyond TL_CALLTREE_MAX_NODES paths, calls are counted, not recorded; the
 * root still holds every top-level call, the session and the page say so. */
static void test_cap(void **state)
{
    (void)state;
    text t;
    text_begin(&t);
    const uint32_t extra = 37;
    char name[32];
    /* one caller with MAX children: the root, the caller and MAX - 2 children fit */
    x(&t, "cpu_op", "caller", 1, 0, 1e6);
    for (uint32_t i = 0; i < TL_CALLTREE_MAX_NODES + extra; i++) {
        snprintf(name, sizeof name, "f%u", i);
        x(&t, "cpu_op", name, 1, (double)i * 10, 5);
    }
    char *s = text_end(&t);
    tl_profile *p = read_text(s, "cap.json");
    tl_calltree *c = p->calltree;
    assert_non_null(c);
    assert_int_equal(c->n, TL_CALLTREE_MAX_NODES);
    assert_int_equal(c->dropped, (TL_CALLTREE_MAX_NODES + extra) - (TL_CALLTREE_MAX_NODES - 2));
    const char *ops = tl_calltree_kind_label(TL_CTK_OPS);
    /* the caller's self time is still right: every child's time is taken out */
    expect(c, &p->strs, ops, "caller", 1000000, 1000000 - 5 * (TL_CALLTREE_MAX_NODES + extra), 1);
    expect(c, &p->strs, ops, "", 1000000, 0, 1);

    tl_analyze_options o;
    tl_analyze_options_init(&o);
    p->id.rank = 0;
    tl_session sess;
    assert_int_equal(tl_session_analyze(&sess, p, &o), 0);
    assert_int_equal(sess.calltree.dropped, c->dropped);
    tl_aggregate a;
    tl_aggregate_init(&a, &o);
    assert_int_equal(tl_aggregate_add_session(&a, &sess), 0);
    assert_int_equal(tl_aggregate_finish(&a), 0);
    assert_int_equal(a.calltree.dropped, c->dropped);
    char *page = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    tl_report_options ro = { "cap", 1700000000, "test" };
    assert_int_equal(tl_render_html(f, &a, &ro), 0);
    fclose(f);
    char want[160];
    snprintf(want, sizeof want, "%llu calls are not in the tree", (unsigned long long)c->dropped);
    if (strstr(page, want) == NULL)
        fail_msg("the page does not say \"%s\"", want);
    free(page);
    tl_aggregate_release(&a);
    free_profile(p);
    free(s);
}

/* ---- sessions, partials, the merge ------------------------------------------------------------- */

static void session_of(tl_session *s, const char *trace, int rank, const char *file)
{
    tl_profile *p = read_text(trace, file);
    p->id.rank = rank;
    p->id.rank_source = TL_RANK_CONTENT;
    tl_analyze_options o;
    tl_analyze_options_init(&o);
    assert_int_equal(tl_session_analyze(s, p, &o), 0);
    free_profile(p);
}

typedef struct sink {
    char *data;
    size_t len, cap;
} sink;

static int sink_write(void *ctx, const void *buf, size_t len)
{
    sink *s = ctx;
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + len + 1) * 2;
        s->data = realloc(s->data, s->cap);
    }
    memcpy(s->data + s->len, buf, len);
    s->len += len;
    s->data[s->len] = '\0';
    return 0;
}

static char *partial_of(const tl_aggregate *a)
{
    sink s = { 0 };
    tl_json *j = malloc(sizeof *j);
    tl_json_init(j, sink_write, &s);
    tl_partial_write(j, a, "test");
    assert_int_equal(tl_json_finish(j), 0);
    free(j);
    return s.data;
}

/* Read a partial into b (initialized) the way tally merge does: ingest reads,
 * the aggregate takes the sessions. */
static int read_partial(tl_aggregate *b, const char *json, char *err, size_t errlen)
{
    tl_partial p;
    tl_partial_init(&p);
    int rc = tl_partial_read_buffer(&p, json, strlen(json), err, errlen) != 0 ||
                     tl_aggregate_add_partial(b, &p, err, errlen) != 0
                 ? -1
                 : 0;
    tl_partial_release(&p);
    return rc;
}

static void assert_same_tree(const tl_calltree *x, const tl_calltree *y)
{
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->dropped, y->dropped);
    for (uint32_t i = 0; i < x->n; i++) {
        assert_int_equal(x->nodes[i].parent, y->nodes[i].parent);
        assert_string_equal(tl_calltree_name(x, i), tl_calltree_name(y, i));
        assert_int_equal(x->nodes[i].incl_ns, y->nodes[i].incl_ns);
        assert_int_equal(x->nodes[i].self_ns, y->nodes[i].self_ns);
        assert_int_equal(x->nodes[i].count, y->nodes[i].count);
        assert_int_equal(x->nodes[i].kind, y->nodes[i].kind);
        if (x->min_ns || y->min_ns) {
            assert_int_equal(x->min_ns[i], y->min_ns[i]);
            assert_int_equal(x->max_ns[i], y->max_ns[i]);
            assert_int_equal(x->ranks[i], y->ranks[i]);
        }
    }
}

/* rank 1: the generated nesting with a longer b and without c */
static char *other_rank(void)
{
    text t;
    text_begin(&t);
    x(&t, "user_annotation", "step", 1, 0, 400);
    x(&t, "user_annotation", "fwd", 1, 0, 100);
    x(&t, "cpu_op", "a", 1, 0, 100);
    x(&t, "cpu_op", "a", 1, 10, 50);
    x(&t, "cpu_op", "b", 1, 20, 30);
    return text_end(&t);
}

static void build(tl_aggregate *a, char *t0, char *t1)
{
    tl_analyze_options o;
    tl_analyze_options_init(&o);
    tl_aggregate_init(a, &o);
    tl_session s;
    session_of(&s, t0, 0, "rank0.json");
    assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    session_of(&s, t1, 1, "rank1.json");
    assert_int_equal(tl_aggregate_add_session(a, &s), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
}

static void test_merge_and_partial(void **state)
{
    (void)state;
    char *t0 = generated(0), *t1 = other_rank();
    tl_aggregate a;
    build(&a, t0, t1);
    const tl_calltree *m = &a.calltree;
    const char *ann = tl_calltree_kind_label(TL_CTK_ANNOTATIONS);
    assert_int_equal(a.calltree_ranks, 2);
    /* sums over ranks, path by path, each node of its kind */
    expect(m, &m->names, ann, "step/fwd/a", 200, 80, 2);
    expect(m, &m->names, ann, "step/fwd/a/a/b", 50, 50, 2);
    expect(m, &m->names, ann, "step/fwd/a/c", 20, 20, 1);
    expect_kind(m, &m->names, ann, "step/fwd", TL_CTK_ANNOTATIONS);
    expect_kind(m, &m->names, ann, "step/fwd/a/c", TL_CTK_OPS);
    /* the least and the most of one rank; rank 1 has no a/c: its least is 0 */
    uint32_t ab = path(m, &m->names, ann, "step/fwd/a/a/b"), ac = path(m, &m->names, ann, "step/fwd/a/c");
    assert_int_equal(m->min_ns[ab], 20 * US);
    assert_int_equal(m->max_ns[ab], 30 * US);
    assert_int_equal(m->ranks[ab], 2);
    assert_int_equal(m->min_ns[ac], 0);
    assert_int_equal(m->max_ns[ac], 20 * US);
    assert_int_equal(m->ranks[ac], 1);
    /* every rank's tree is its session's */
    assert_ptr_equal(a.ranks[0].calltree, &a.sessions[0].calltree);

    /* the partial reads back to the same sessions and the same merge */
    char *json = partial_of(&a), err[256] = "";
    tl_aggregate b;
    tl_aggregate_init(&b, NULL);
    if (read_partial(&b, json, err, sizeof err) != 0)
        fail_msg("partial: %s", err);
    assert_int_equal(tl_aggregate_finish(&b), 0);
    for (size_t i = 0; i < a.nsessions; i++)
        assert_same_tree(&a.sessions[i].calltree, &b.sessions[i].calltree);
    assert_same_tree(&a.calltree, &b.calltree);
    /* and written again, byte for byte */
    char *again = partial_of(&b);
    assert_string_equal(json, again);
    free(again);
    tl_aggregate_release(&b);
    free(json);
    tl_aggregate_release(&a);
    free(t0);
    free(t1);
}

/* Each hostile change to a good partial is refused with a reason. */
static void test_hostile_partial(void **state)
{
    (void)state;
    char *t0 = generated(0), *t1 = other_rank();
    tl_aggregate a;
    build(&a, t0, t1);
    char *json = partial_of(&a);
    /* the first node of the first tree is [-1,0,...]: a root */
    const char *nodes = strstr(json, "\"nodes\":[[");
    assert_non_null(nodes);
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        { "\"nodes\":[[-1,", "\"nodes\":[[0,", "parent must come before it" }, /* its own parent */
        { "\"nodes\":[[-1,", "\"nodes\":[[5,", "parent must come before it" }, /* a parent after it */
        { "\"nodes\":[[-1,0,", "\"nodes\":[[-1,99,", "name id out of range" },
        { "\"dropped\":0", "\"dropped\":-1", "out of range" },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t at = (size_t)(strstr(json, cases[k].from) - json);
        char *bad = NULL;
        assert_true(asprintf(&bad, "%.*s%s%s", (int)at, json, cases[k].to, json + at + strlen(cases[k].from)) > 0);
        tl_aggregate b;
        tl_aggregate_init(&b, NULL);
        char err[256] = "";
        assert_int_not_equal(read_partial(&b, bad, err, sizeof err), 0);
        if (strstr(err, cases[k].why) == NULL)
            fail_msg("case %zu: \"%s\" does not say \"%s\"", k, err, cases[k].why);
        tl_aggregate_release(&b);
        free(bad);
    }
    tl_aggregate_release(&a);
    free(json);
    free(t0);
    free(t1);
}

static void test_duplicate_path_and_self(void **state)
{
    (void)state;
    static const char *docs[] = {
        /* the same path twice */
        "{\"format\":\"tally-partial\",\"version\":1,\"sessions\":[{\"path\":\"x\",\"format\":2,\"rank\":0,"
        "\"world_size\":0,\"rank_source\":1,\"rank_detail\":\"\",\"start_ns\":0,\"span_ns\":1,\"truncated\":0,"
        "\"warnings\":[],\"names\":[],\"kernels\":[],\"steps\":[],\"gpu\":{\"present\":0,\"whole_trace\":1,"
        "\"steps_in_window\":0,\"window_start\":0,\"window_end\":0,\"events\":0,\"kernel_time\":0,\"busy\":0,"
        "\"idle\":0,\"compute\":0,\"non_compute\":0,\"comm\":0,\"comm_compute\":0,\"by_mask\":[0,0,0,0,0,0,0,0],"
        "\"streams\":[]},\"collectives\":[],\"snapshots\":[],\"timeline\":{\"start_ns\":0,\"end_ns\":0,\"lanes\":[]},"
        "\"mem\":[],\"peak_allocated\":null,\"peak_reserved\":null,\"device_total\":null,\"peak_rss\":null,"
        "\"gpu_util_mean\":null,\"calltree\":{\"dropped\":0,\"names\":[\"r\",\"a\"],\"nodes\":[[-1,0,10,0,1],"
        "[0,1,10,10,1],[0,1,10,10,1]]}}]}",
        /* self beyond inclusive */
        "{\"format\":\"tally-partial\",\"version\":1,\"sessions\":[{\"path\":\"x\",\"format\":2,\"rank\":0,"
        "\"world_size\":0,\"rank_source\":1,\"rank_detail\":\"\",\"start_ns\":0,\"span_ns\":1,\"truncated\":0,"
        "\"warnings\":[],\"names\":[],\"kernels\":[],\"steps\":[],\"gpu\":{\"present\":0,\"whole_trace\":1,"
        "\"steps_in_window\":0,\"window_start\":0,\"window_end\":0,\"events\":0,\"kernel_time\":0,\"busy\":0,"
        "\"idle\":0,\"compute\":0,\"non_compute\":0,\"comm\":0,\"comm_compute\":0,\"by_mask\":[0,0,0,0,0,0,0,0],"
        "\"streams\":[]},\"collectives\":[],\"snapshots\":[],\"timeline\":{\"start_ns\":0,\"end_ns\":0,\"lanes\":[]},"
        "\"mem\":[],\"peak_allocated\":null,\"peak_reserved\":null,\"device_total\":null,\"peak_rss\":null,"
        "\"gpu_util_mean\":null,\"calltree\":{\"dropped\":0,\"names\":[\"r\",\"a\"],\"nodes\":[[-1,0,10,0,1],"
        "[0,1,10,11,1]]}}]}",
    };
    static const char *why[] = { "a path given twice", "self time beyond" };
    for (size_t k = 0; k < 2; k++) {
        tl_aggregate b;
        tl_aggregate_init(&b, NULL);
        char err[256] = "";
        assert_int_not_equal(read_partial(&b, docs[k], err, sizeof err), 0);
        if (strstr(err, why[k]) == NULL)
            fail_msg("doc %zu: \"%s\" does not say \"%s\"", k, err, why[k]);
        tl_aggregate_release(&b);
    }
    /* the same document with distinct paths reads */
    char *good = strdup(docs[1]);
    char *at = strstr(good, "[0,1,10,11,1]");
    memcpy(at, "[0,1,10,10,1]", 13);
    tl_aggregate b;
    tl_aggregate_init(&b, NULL);
    char err[256] = "";
    if (read_partial(&b, good, err, sizeof err) != 0)
        fail_msg("good doc: %s", err);
    assert_int_equal(b.sessions[0].calltree.n, 2);
    tl_aggregate_release(&b);
    free(good);
}

/* A CPU-only trace's lane keeps its calls on rows: nested ones below their
 * caller, overlapping kinds side by side on the first free row. */
static void test_lane_rows(void **state)
{
    (void)state;
    char *t0 = generated(0);
    tl_session s;
    session_of(&s, t0, 0, "lane.json");
    assert_int_equal(s.timeline.nlanes, 1);
    const tl_lane *l = &s.timeline.lanes[0];
    assert_int_equal(l->ncalls, 10);
    assert_int_equal(l->calls_left, 0);
    static const struct {
        const char *name;
        int64_t ts_us;
        int row;
    } want[] = {
        { "step", 0, 0 }, { "a", 0, 1 },   { "fwd", 0, 2 }, { "a", 10, 3 },  { "b", 20, 4 },
        { "c", 70, 3 },   { "d", 200, 1 }, { "e", 200, 2 }, { "a", 300, 1 }, { "a", 500, 0 },
    };
    for (size_t i = 0; i < 10; i++) {
        const tl_lane_call *c = &l->calls[i];
        if (strcmp(tl_strtab_get(&s.timeline.names, c->name), want[i].name) != 0 || c->ts_ns != want[i].ts_us * US ||
            c->row != want[i].row)
            fail_msg("call %zu: %s at %lld row %d; expected %s at %lld row %d", i,
                     tl_strtab_get(&s.timeline.names, c->name), (long long)c->ts_ns, c->row, want[i].name,
                     (long long)(want[i].ts_us * US), want[i].row);
    }
    tl_session_release(&s);
    free(t0);
}

/* Many ranks with wide trees: the page draws the merged graph and 16 per-rank
 * graphs (the straggler first), says how many ranks it left out, and its
 * boxes stay within the budgets however many paths there are. */
static void test_page_bounded(void **state)
{
    (void)state;
    enum { RANKS = 20 };
    tl_analyze_options o;
    tl_analyze_options_init(&o);
    tl_aggregate a;
    tl_aggregate_init(&a, &o);
    char name[32], file[32];
    for (int r = 0; r < RANKS; r++) {
        text t;
        text_begin(&t);
        /* 40 callers, each a chain of 20 nested calls ending in 20 callees of 1 to 1.6 px,
         * times varying by rank: 1,641 paths of a pixel or more, over the budget */
        for (int c = 0; c < 40; c++) {
            double t0 = c * 1000.0;
            for (int d = 0; d <= 20; d++) {
                snprintf(name, sizeof name, d ? "nested%d_%d" : "caller%d", c, d);
                x(&t, "cpu_op", name, 1, t0 + d, 900 - 2 * d);
            }
            for (int k = 0; k < 20; k++) {
                snprintf(name, sizeof name, "callee%d_%d", c, k);
                x(&t, "cpu_op", name, 1, t0 + 21 + k * 42, 30 + k + r % 2);
            }
        }
        char *txt = text_end(&t);
        tl_session s;
        snprintf(file, sizeof file, "rank%d.json", r);
        session_of(&s, txt, r, file);
        assert_int_equal(tl_aggregate_add_session(&a, &s), 0);
        free(txt);
    }
    assert_int_equal(tl_aggregate_finish(&a), 0);
    assert_int_equal(a.calltree_ranks, RANKS);
    assert_int_equal(a.calltree.n, 1 + 40 * 21 + 40 * 20);
    a.ranks[17].straggler = 1; /* as the straggler analysis would mark it */
    char *page = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    tl_report_options ro = { "bounded", 1700000000, "test" };
    assert_int_equal(tl_render_html(f, &a, &ro), 0);
    fclose(f);
    const char *sec = strstr(page, "<section id=\"calltree\"");
    assert_non_null(sec);
    const char *end = strstr(sec, "</section>");
    size_t boxes = 0, graphs = 0;
    for (const char *p = sec; (p = strstr(p, "<g class=\"f")) != NULL && p < end; p++)
        boxes++;
    for (const char *p = sec; (p = strstr(p, "<svg class=\"chart flame\"")) != NULL && p < end; p++)
        graphs++;
    print_message("%zu ranks: %zu flame graphs, %zu boxes, %zu bytes of call tree section\n", (size_t)RANKS, graphs,
                  boxes, (size_t)(end - sec));
    assert_int_equal(graphs, 1 + 16);
    /* the merged graph's 1,200 and the per-rank graphs' 2,400 boxes, and a merged box at most per drawn frame */
    assert_true(boxes <= 2 * (1200 + 2400) + 2 * 17);
    assert_true((size_t)(end - sec) < 1500000);
    const char *first = strstr(sec, "<summary>Rank ");
    assert_non_null(first);
    assert_int_equal(strncmp(first, "<summary>Rank 17 (straggler)", 28), 0);
    if (strstr(sec, "and 4 more ranks not drawn") == NULL)
        fail_msg("the page does not say how many ranks it left out");
    /* what was too narrow is said, with its time, and the budget raised the least width */
    assert_non_null(strstr(sec, "narrower than"));
    assert_non_null(strstr(sec, "the page's budget of boxes"));
    free(page);
    tl_aggregate_release(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_order),
        cmocka_unit_test(test_end_order),
        cmocka_unit_test(test_begin_end),
        cmocka_unit_test(test_profiler_steps),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_merge_and_partial),
        cmocka_unit_test(test_hostile_partial),
        cmocka_unit_test(test_duplicate_path_and_self),
        cmocka_unit_test(test_lane_rows),
        cmocka_unit_test(test_page_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
