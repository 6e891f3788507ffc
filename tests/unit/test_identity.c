/*
 * test_identity.c - an input's identity, settled once in ingest
 * (tools/ingest/identity.h, run.c, settle.c):
 *   - a rank by input order is a problem of the input, said once however
 *     often the identity is taken over (tl_identity_set_rank, _take_settled);
 *   - the reason a skipped input was skipped is its first problem; problems
 *     beyond the cap are counted; kinds come back from a partial's words;
 *   - inputs that cannot be opened are identities with one problem, their
 *     names kept whole (a ": " in a file name once split them wrongly);
 *   - run.c pairs a libtally trace with its report by stem;
 *   - tl_sessions_settle: a companion lends its report what a report lacks
 *     and never counts, runs are told apart with a note (pooled with
 *     `--sessions`), sessions are numbered within their run and rank, the
 *     rank notes are made, and the result does not depend on input order;
 *   - the one predicate and the standing of every kind of input.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ingest.h"
#include "session.h"
#include "tt_support.h"

static const char *const ORDER_TEXT = "no rank in the content or the name; rank 3 assigned by input order";

static size_t count_kind(const tl_problems *l, int kind)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->v[i].kind == kind;
    return n;
}

/* ---- one identity ------------------------------------------------------------------- */

static void test_set_rank(void **state)
{
    (void)state;
    tl_identity id;
    assert_int_equal(tl_identity_init(&id, "runs/a.json"), 0);
    assert_int_equal(id.rank, -1);
    assert_string_equal(id.rank_detail, "");
    assert_int_equal(tl_identity_set_rank(&id, 1, TL_RANK_CONTENT, "distributedInfo.rank"), 0);
    assert_int_equal(id.problems.n, 0); /* a rank from the content is no problem */
    char longer[300];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    assert_int_equal(tl_identity_set_rank(&id, 2, TL_RANK_NAME, longer), 0);
    assert_int_equal(strlen(id.rank_detail), TL_RANK_DETAIL_MAX);
    assert_int_equal(tl_identity_set_rank(&id, 3, TL_RANK_ORDER, "input order"), 0);
    assert_int_equal(id.problems.n, 1);
    assert_int_equal(id.problems.v[0].kind, TL_PROBLEM_RANK_ORDER);
    assert_int_equal(id.problems.v[0].offset, -1);
    assert_string_equal(id.problems.v[0].text, ORDER_TEXT);
    tl_identity_release(&id);
}

/* A session is made from its profile before ranks are settled; it takes the
 * settled identity after, keeping what the analysis added, and says the
 * rank-order problem once however often it is taken. */
static void test_take_settled(void **state)
{
    (void)state;
    tl_identity p, s;
    assert_int_equal(tl_identity_init(&p, "t.json"), 0);
    tl_problems_add(&p.problems, TL_PROBLEM_WARNING, 17, "offset 17: %s", "bad event");
    memset(&s, 0, sizeof s);
    assert_int_equal(tl_identity_copy(&s, &p), 0);
    assert_int_equal(s.problems.n, 1);
    assert_int_equal(s.problems.v[0].offset, 17);
    tl_problems_add_text(&s.problems, TL_PROBLEM_WARNING, -1, "telemetry: more series than kept");
    /* run.c settles */
    assert_int_equal(tl_identity_set_rank(&p, 3, TL_RANK_ORDER, "input order"), 0);
    p.session = 2;
    p.world_size = 8;
    p.companion_of = tt_xstrdup("r.report.json");
    for (int twice = 0; twice < 2; twice++)
        assert_int_equal(tl_identity_take_settled(&s, &p), 0);
    assert_int_equal(s.rank, 3);
    assert_int_equal(s.rank_source, TL_RANK_ORDER);
    assert_int_equal(s.session, 2);
    assert_int_equal(s.world_size, 8);
    assert_string_equal(s.companion_of, "r.report.json");
    assert_int_equal(s.problems.n, 3);
    assert_string_equal(s.problems.v[1].text, "telemetry: more series than kept");
    assert_int_equal(s.problems.v[2].kind, TL_PROBLEM_RANK_ORDER);
    assert_int_equal(count_kind(&s.problems, TL_PROBLEM_RANK_ORDER), 1);
    tl_identity_release(&p);
    tl_identity_release(&s);
}

static void test_problems_cap_and_skip(void **state)
{
    (void)state;
    tl_profile p;
    tl_profile_init(&p, "x.json");
    tl_profile_warn(&p, "first");
    tl_profile_warn_at(&p, 42, "offset 42: second");
    tl_profile_skip(&p, "not a profile: %s", "a README");
    assert_true(p.skipped);
    assert_int_equal(p.id.problems.n, 3);
    assert_string_equal(p.id.problems.v[0].text, "not a profile: a README"); /* the reason first */
    assert_int_equal(p.id.problems.v[0].kind, TL_PROBLEM_SKIPPED);
    assert_string_equal(p.id.problems.v[1].text, "first");
    assert_int_equal(p.id.problems.v[2].offset, 42);
    for (int i = 0; i < 2 * TL_IDENTITY_MAX_PROBLEMS; i++)
        tl_profile_warn(&p, "warning %d", i);
    assert_int_equal(p.id.problems.n, TL_IDENTITY_MAX_PROBLEMS);
    assert_int_equal(p.id.problems.dropped, 2 * TL_IDENTITY_MAX_PROBLEMS - (TL_IDENTITY_MAX_PROBLEMS - 3));
    char big[2000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tl_problems l = { 0 };
    tl_problems_add(&l, TL_PROBLEM_WARNING, -1, "%s", big);
    assert_int_equal(strlen(l.v[0].text), TL_PROBLEM_TEXT_MAX);
    tl_problems_release(&l);
    tl_profile_release(&p);

    /* a reader's last word becomes the reason */
    tl_profile_init(&p, "y.json");
    tl_profile_warn(&p, "3 NaN literals read as null");
    tl_profile_warn(&p, "invalid JSON at line 1");
    tl_profile_skip_last(&p);
    assert_string_equal(p.id.problems.v[0].text, "invalid JSON at line 1");
    assert_int_equal(p.id.problems.v[0].kind, TL_PROBLEM_SKIPPED);
    assert_int_equal(p.id.problems.v[1].kind, TL_PROBLEM_WARNING);
    tl_profile_release(&p);
}

/* What a partial writes is words; the kinds follow from the identity. */
static void test_kinds_from_words(void **state)
{
    (void)state;
    tl_identity id;
    assert_int_equal(tl_identity_init(&id, "notes.txt"), 0);
    tl_problems_add_text(&id.problems, TL_PROBLEM_WARNING, -1, "not JSON (starts with \"#\")");
    tl_problems_add_text(&id.problems, TL_PROBLEM_WARNING, -1, "something else");
    tl_identity_kinds_from_words(&id); /* format unknown: not a profile */
    assert_int_equal(id.problems.v[0].kind, TL_PROBLEM_SKIPPED);
    assert_int_equal(id.problems.v[1].kind, TL_PROBLEM_WARNING);
    tl_identity_release(&id);

    assert_int_equal(tl_identity_init(&id, "trace.json"), 0);
    id.format = TL_FMT_CHROME_TRACE;
    id.rank = 3;
    id.rank_source = TL_RANK_ORDER;
    tl_problems_add_text(&id.problems, TL_PROBLEM_WARNING, 9, "offset 9: an event without ph");
    tl_problems_add_text(&id.problems, TL_PROBLEM_WARNING, -1, ORDER_TEXT);
    tl_identity_kinds_from_words(&id);
    assert_int_equal(id.problems.v[0].kind, TL_PROBLEM_WARNING);
    assert_int_equal(id.problems.v[0].offset, 9);
    assert_int_equal(id.problems.v[1].kind, TL_PROBLEM_RANK_ORDER);
    id.rank_source = TL_RANK_NAME; /* the same words without a rank by order are a warning */
    tl_identity_kinds_from_words(&id);
    assert_int_equal(id.problems.v[1].kind, TL_PROBLEM_WARNING);
    tl_identity_release(&id);
}

static void test_standing(void **state)
{
    (void)state;
    tl_identity id = { .rank = -1 };
    assert_int_equal(tl_identity_standing(&id), TL_STANDING_NOT_READ);
    assert_false(tl_identity_counts(&id));
    id.rank = 0;
    assert_int_equal(tl_identity_standing(&id), TL_STANDING_COUNTED);
    assert_true(tl_identity_counts(&id));
    id.run = 2;
    assert_int_equal(tl_identity_standing(&id), TL_STANDING_OTHER_RUN);
    assert_false(tl_identity_counts(&id));
    assert_true(tl_identity_is_session(&id));
    id.run = 0;
    id.companion_of = (char *)"r.report.json";
    assert_int_equal(tl_identity_standing(&id), TL_STANDING_COMPANION);
    assert_false(tl_identity_counts(&id));
    assert_false(tl_identity_is_session(&id));
    id.rank = -1; /* a companion is one whatever its rank */
    assert_int_equal(tl_identity_standing(&id), TL_STANDING_COMPANION);
}

/* ---- run.c: inputs that cannot be opened, companions ---------------------------------------- */

static char g_dir[256];

static void path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", g_dir, name);
}

static void test_unreadable_keeps_its_name(void **state)
{
    (void)state;
    char missing[512];
    path_in(missing, sizeof missing, "no: such rank3.json");
    const char *paths[] = { missing };
    tl_ingest_options opt;
    tl_ingest_options_init(&opt);
    tl_run run;
    tl_run_init(&run);
    assert_int_equal(tl_run_ingest(&run, paths, 1, &opt), 0);
    assert_int_equal(run.nunreadable, 1);
    assert_string_equal(run.unreadable[0].path, missing);
    assert_int_equal(run.unreadable[0].problems.n, 1);
    assert_int_equal(run.unreadable[0].problems.v[0].kind, TL_PROBLEM_UNREADABLE);
    assert_null(strstr(run.unreadable[0].problems.v[0].text, missing)); /* the text without the name */
    tl_session s;
    assert_int_equal(tl_session_from_identity(&s, &run.unreadable[0]), 0);
    assert_string_equal(s.id.path, missing);
    assert_int_equal(tl_identity_standing(&s.id), TL_STANDING_NOT_READ);
    tl_session_release(&s);
    tl_run_release(&run);
}

/* A libtally report and the trace of the same process (same stem): the
 * trace is the report's companion, ranked from its content, not usable on
 * its own; an input without a rank gets one by order, with its problem. */
static void test_companion_and_order(void **state)
{
    (void)state;
    char report[512], trace[512], loose[512];
    path_in(report, sizeof report, "job-rank2.1-x.report.json");
    path_in(trace, sizeof trace, "job-rank2.1-x.trace.json");
    path_in(loose, sizeof loose, "zz-loose.json");
    char fixture[512];
    snprintf(fixture, sizeof fixture, "%s/tests/fixtures/tally-report-v1.json", TALLY_SOURCE_DIR);
    char *doc = tt_slurp(fixture, NULL);
    tt_write_file(report, doc);
    free(doc);
    tt_write_file(trace, "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"vae_decode\",\"ts\":0,\"dur\":5,\"pid\":1,"
                         "\"tid\":1}],\"otherData\":{\"producer\":\"libtally 0.1.0\",\"rank\":2}}");
    tt_write_file(loose, "[{\"ph\":\"X\",\"name\":\"step\",\"ts\":0,\"dur\":5,\"pid\":1,\"tid\":1}]");
    const char *paths[] = { g_dir };
    tl_ingest_options opt;
    tl_ingest_options_init(&opt);
    tl_run run;
    tl_run_init(&run);
    tl_run_ingest(&run, paths, 1, &opt);
    const tl_profile *r = NULL, *t = NULL, *l = NULL;
    for (size_t i = 0; i < run.n; i++) {
        const tl_profile *p = run.profiles[i];
        if (strcmp(p->id.path, report) == 0)
            r = p;
        else if (strcmp(p->id.path, trace) == 0)
            t = p;
        else if (strcmp(p->id.path, loose) == 0)
            l = p;
    }
    assert_non_null(r);
    assert_non_null(t);
    assert_non_null(l);
    assert_int_equal(t->id.format, TL_FMT_TALLY_TRACE);
    assert_non_null(t->id.companion_of);
    assert_string_equal(t->id.companion_of, report);
    assert_false(tl_profile_usable(t));
    assert_null(r->id.companion_of);
    assert_true(tl_profile_usable(r));
    assert_int_equal(r->id.rank, 2);
    /* the loose trace: no rank in content or name, the lowest free one by order */
    assert_int_equal(l->id.rank_source, TL_RANK_ORDER);
    assert_int_equal(l->id.rank, 0);
    assert_int_equal(count_kind(&l->id.problems, TL_PROBLEM_RANK_ORDER), 1);
    assert_int_equal(count_kind(&r->id.problems, TL_PROBLEM_RANK_ORDER), 0);
    tl_run_release(&run);
    unlink(report);
    unlink(trace);
    unlink(loose);
}

/* ---- settle.c: over every session ---------------------------------------------------------- */

typedef struct spec {
    const char *path;
    int rank, world, format;
    int64_t start, span, pid;
    const char *companion_of;
} spec;

static void make(tl_session *s, const spec *p)
{
    tl_session_init(s);
    assert_int_equal(tl_identity_init(&s->id, p->path), 0);
    s->id.rank = p->rank;
    s->id.world_size = p->world;
    s->id.format = p->format;
    s->id.rank_source = p->rank >= 0 ? TL_RANK_CONTENT : TL_RANK_UNKNOWN;
    s->id.companion_of = p->companion_of ? tt_xstrdup(p->companion_of) : NULL;
    s->start_ns = p->start;
    s->span_ns = p->span;
    s->abs_time = 1;
    s->pid = p->pid;
}

static void settle(tl_session *v, size_t n, int pool, char ***notes, size_t *nnotes)
{
    *notes = NULL;
    *nnotes = 0;
    assert_int_equal(tl_sessions_settle(v, n, pool, notes, nnotes, NULL), 0);
}

static void free_all(tl_session *v, size_t n, char **notes, size_t nnotes)
{
    for (size_t i = 0; i < n; i++)
        tl_session_release(&v[i]);
    for (size_t i = 0; i < nnotes; i++)
        free(notes[i]);
    free(notes);
}

#define T0 1700000000000000000LL
#define MS 1000000LL

static void test_settle_companion(void **state)
{
    (void)state;
    const spec in[] = {
        { "b/r1.trace.json", 1, 2, TL_FMT_TALLY_TRACE, T0, 100 * MS, 7, "b/r1.report.json" },
        { "notes.txt", -1, 0, TL_FMT_UNKNOWN, INT64_MIN, -1, -1, NULL },
        { "b/r1.report.json", 1, 2, TL_FMT_TALLY_REPORT, T0, 100 * MS, 7, NULL },
        { "a/r0.report.json", 0, 2, TL_FMT_TALLY_REPORT, T0, 100 * MS, 6, NULL },
    };
    tl_session v[4];
    for (size_t i = 0; i < 4; i++)
        make(&v[i], &in[i]);
    /* the trace has what a report lacks: a timeline, a memory series, a call tree */
    v[0].timeline.start_ns = 0;
    v[0].timeline.end_ns = 10;
    v[0].timeline.nlanes = 1;
    v[0].timeline.lanes = calloc(1, sizeof *v[0].timeline.lanes);
    v[0].timeline.lanes[0].label = tt_xstrdup("thread 1 main");
    v[0].mem = calloc(1, sizeof *v[0].mem);
    v[0].nmem = 1;
    tl_calltree_init(&v[0].calltree);
    uint32_t name = tl_strtab_intern(&v[0].calltree.names, "vae_decode", 10);
    assert_int_not_equal(tl_calltree_child(&v[0].calltree, TL_CALLTREE_NONE, name), TL_CALLTREE_NONE);
    char **notes;
    size_t nnotes;
    settle(v, 4, 0, &notes, &nnotes);
    /* sessions of their own by rank, then the rest by path */
    assert_string_equal(v[0].id.path, "a/r0.report.json");
    assert_string_equal(v[1].id.path, "b/r1.report.json");
    assert_string_equal(v[2].id.path, "b/r1.trace.json");
    assert_string_equal(v[3].id.path, "notes.txt");
    assert_true(tl_session_counts(&v[0]));
    assert_true(tl_session_counts(&v[1]));
    assert_false(tl_session_counts(&v[2]));
    assert_false(tl_session_counts(&v[3]));
    /* the report took the trace's timeline, memory and tree */
    assert_int_equal(v[1].timeline.nlanes, 1);
    assert_int_equal(v[1].nmem, 1);
    assert_int_equal(v[1].calltree.n, 1);
    assert_int_equal(v[2].timeline.nlanes, 0);
    assert_int_equal(v[2].calltree.n, 0);
    assert_int_equal(nnotes, 0);
    free_all(v, 4, notes, nnotes);
}

/* A libtally report's steps are laid back to back from its start (it has no
 * start times); its companion trace's lane holds the iterations where they
 * ran: the report's steps move there (by length, in order). The third
 * iteration is not among the lane's calls (a trace cut short): it follows
 * the second. A section as long as a step is not taken for it. */
static void test_settle_report_steps_at_trace_times(void **state)
{
    (void)state;
    const spec in[] = {
        { "b/r1.trace.json", 1, 2, TL_FMT_TALLY_TRACE, T0, 900 * MS, 7, "b/r1.report.json" },
        { "b/r1.report.json", 1, 2, TL_FMT_TALLY_REPORT, T0, 900 * MS, 7, NULL },
    };
    tl_session v[2];
    for (size_t i = 0; i < 2; i++)
        make(&v[i], &in[i]);
    tl_session *r = &v[1];
    const int64_t dur[4] = { 120 * MS + 17, 100 * MS + 3, 110 * MS, 105 * MS + 1 };
    r->steps = calloc(4, sizeof *r->steps);
    r->nsteps = 4;
    int64_t sum = T0;
    for (int k = 0; k < 4; k++) {
        r->steps[k] = (tl_sstep){ k, dur[k], -1, sum, 0 };
        sum += dur[k];
    }
    r->names = calloc(2, sizeof *r->names);
    r->nnames = 2;
    r->names[0] = (tl_sname){ .group = TL_GROUP_ITERATIONS, .name = tt_xstrdup("diffusion_step") };
    r->names[0].d.total = 435 * MS;
    r->names[1] = (tl_sname){ .group = TL_GROUP_ITERATIONS, .name = tt_xstrdup("warmup") };
    r->names[1].d.total = 5 * MS;
    tl_timeline *t = &v[0].timeline;
    t->start_ns = T0;
    t->end_ns = T0 + 900 * MS;
    t->nlanes = 1;
    t->lanes = calloc(1, sizeof *t->lanes);
    t->lanes[0].kind = TL_LANE_CPU;
    t->lanes[0].label = tt_xstrdup("thread 7 main");
    uint32_t step = tl_strtab_intern(&t->names, "diffusion_step", 14);
    uint32_t load = tl_strtab_intern(&t->names, "load", 4);
    t->lanes[0].calls = calloc(4, sizeof *t->lanes[0].calls);
    t->lanes[0].ncalls = 4;
    /* by duration, as nesting.c keeps them: not by start */
    t->lanes[0].calls[0] = (tl_lane_call){ T0 + 404 * MS, dur[0] + 400, step, 0 };
    t->lanes[0].calls[1] = (tl_lane_call){ T0 + 300 * MS, dur[0], load, 0 };
    t->lanes[0].calls[2] = (tl_lane_call){ T0 + 800 * MS, dur[3], step, 0 };
    t->lanes[0].calls[3] = (tl_lane_call){ T0 + 530 * MS, dur[1], step, 0 };
    char **notes;
    size_t nnotes;
    settle(v, 2, 0, &notes, &nnotes);
    r = &v[0];
    assert_string_equal(r->id.path, "b/r1.report.json");
    assert_int_equal(r->nsteps, 4);
    assert_int_equal(r->steps[0].ts_ns, T0 + 404 * MS);
    assert_int_equal(r->steps[1].ts_ns, T0 + 530 * MS);
    assert_int_equal(r->steps[2].ts_ns, T0 + 530 * MS + dur[1]);
    assert_int_equal(r->steps[3].ts_ns, T0 + 800 * MS);
    for (int k = 0; k < 4; k++)
        assert_int_equal(r->steps[k].dur_ns, dur[k]);
    free_all(v, 2, notes, nnotes);
}

/* Rank 0 recorded twice at the same time by two processes, and a rank of a
 * job with another world size: three runs; the biggest is analyzed. */
static const spec two_runs[] = {
    { "x/rank0.json", 0, 2, TL_FMT_KINETO, T0, 100 * MS, 10, NULL },
    { "x/rank1.json", 1, 2, TL_FMT_KINETO, T0, 100 * MS, 11, NULL },
    { "x/rank0-later.json", 0, 2, TL_FMT_KINETO, T0 + 200 * MS, 100 * MS, 10, NULL },
    { "y/rank0.json", 0, 2, TL_FMT_KINETO, T0 + 50 * MS, 100 * MS, 20, NULL },
    { "z/rank5.json", 5, 8, TL_FMT_KINETO, T0, 100 * MS, 30, NULL },
};
#define NTWO (sizeof two_runs / sizeof two_runs[0])

static const tl_session *find(const tl_session *v, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].id.path, path) == 0)
            return &v[i];
    fail_msg("no session %s", path);
    return NULL;
}

static void test_settle_runs(void **state)
{
    (void)state;
    tl_session v[NTWO];
    for (size_t i = 0; i < NTWO; i++)
        make(&v[i], &two_runs[i]);
    char **notes;
    size_t nnotes;
    settle(v, NTWO, 0, &notes, &nnotes);
    const tl_session *a = find(v, NTWO, "x/rank0.json"), *b = find(v, NTWO, "x/rank0-later.json"),
                     *c = find(v, NTWO, "y/rank0.json"), *d = find(v, NTWO, "z/rank5.json"),
                     *e = find(v, NTWO, "x/rank1.json");
    assert_int_equal(a->id.run, 0);
    assert_int_equal(b->id.run, 0);
    assert_int_equal(e->id.run, 0);
    assert_int_equal(a->id.session, 0);
    assert_int_equal(b->id.session, 1); /* the same process, after: a later session */
    assert_true(c->id.run > 0);         /* another process, overlapping: another run */
    assert_true(d->id.run > 0 && d->id.run != c->id.run);
    assert_int_equal(c->id.session, 0);
    assert_int_equal(tl_identity_standing(&c->id), TL_STANDING_OTHER_RUN);
    assert_int_equal(nnotes, 2);
    tt_assert_contains(notes[0], "left out of the numbers", "note");
    tt_assert_contains(notes[0], "y/rank0.json", "note");
    tt_assert_contains(notes[0], "(rank 0 in process 20, not 10)", "note");
    tt_assert_contains(notes[1], "world size 8, not 2", "note");
    free_all(v, NTWO, notes, nnotes);

    /* --sessions: pooled, still said */
    for (size_t i = 0; i < NTWO; i++)
        make(&v[i], &two_runs[i]);
    settle(v, NTWO, 1, &notes, &nnotes);
    for (size_t i = 0; i < NTWO; i++)
        assert_int_equal(v[i].id.run, 0);
    c = find(v, NTWO, "y/rank0.json");
    b = find(v, NTWO, "x/rank0-later.json");
    assert_int_equal(c->id.session, 1); /* by start: x/rank0, y/rank0, x/rank0-later */
    assert_int_equal(b->id.session, 2);
    assert_int_equal(nnotes, 3);
    tt_assert_contains(notes[0], "compared as later sessions", "note");
    /* rank 5 now counts, and its world size promises 8 */
    assert_string_equal(notes[2], "3 of 8 ranks present (world size 8): missing ranks 2-4, 6-7");
    free_all(v, NTWO, notes, nnotes);
}

/* HTA's test data in one folder: ranks 0 and 1 of a 128-GPU job recorded
 * 0.5 ms apart, a rank 1 without a world size recorded 240 days before them,
 * and a rank 2 three hours after. The ranks of one job record together: the
 * early rank 1 must not take the job's rank 1's place (it did: first come,
 * and the job's own rank 1 was left out as "process 4045, not 4037"), and the
 * late rank 2 is another run. Without wall-clock times nothing says so. */
static const spec apart[] = {
    { "filter/rank0.json", 0, 128, TL_FMT_KINETO, T0, 3000 * MS, 4037, NULL },
    { "filter/rank1.json", 1, 128, TL_FMT_KINETO, T0 + MS / 2, 3000 * MS, 4045, NULL },
    { "compare/base.json", 1, 0, TL_FMT_KINETO, T0 - 240LL * 86400000 * MS, 700 * MS, 2568503, NULL },
    { "later/rank2.json", 2, 0, TL_FMT_KINETO, T0 + 3 * 3600000 * MS, 700 * MS, 77, NULL },
};
#define NAPART (sizeof apart / sizeof apart[0])

/* Twenty runs in one folder (a CI artifact of nightly runs): rank 0 of each
 * recorded at once by its own process, rank 1 only in the first. Every run
 * stays apart and the two-input run is analyzed; a fixed table of 16 runs
 * pooled runs 16-19 into run 15, which then had the most inputs and was
 * analyzed with five times the counts. */
static void test_settle_twenty_runs(void **state)
{
    (void)state;
    enum { NRUNS = 20, N = NRUNS + 1 };
    tl_session v[N];
    char paths[N][32];
    for (int i = 0; i < N; i++) {
        snprintf(paths[i], sizeof paths[i], "run%02d/rank%d.json", i < NRUNS ? i : 0, i < NRUNS ? 0 : 1);
        spec sp = { paths[i], i < NRUNS ? 0 : 1, 2, TL_FMT_KINETO, T0, 100 * MS, i < NRUNS ? 100 + i : 99, NULL };
        make(&v[i], &sp);
    }
    char **notes;
    size_t nnotes;
    settle(v, N, 0, &notes, &nnotes);
    assert_int_equal(find(v, N, "run00/rank0.json")->id.run, 0);
    assert_int_equal(find(v, N, "run00/rank1.json")->id.run, 0);
    int seen[NRUNS + 2] = { 0 };
    for (int i = 1; i < NRUNS; i++) {
        int run = find(v, N, paths[i])->id.run;
        assert_true(run > 0 && run <= NRUNS);
        assert_int_equal(seen[run]++, 0); /* each a run of its own */
    }
    assert_int_equal(nnotes, NRUNS - 1);
    for (size_t i = 0; i < nnotes; i++)
        tt_assert_contains(notes[i], "1 input of a different run", "note");
    free_all(v, N, notes, nnotes);
}

/* A partial's start_ns = INT64_MIN (issue 26, item 9): the time between it
 * and a run overflowed (UBSan) and wrapped to "0.0 hours apart", so it joined
 * the run. The difference saturates: it is another run. */
static void test_settle_extreme_start(void **state)
{
    (void)state;
    const spec in[] = {
        { "a/rank0.json", 0, 2, TL_FMT_KINETO, T0, 100 * MS, 10, NULL },
        { "b/rank1.json", 1, 2, TL_FMT_KINETO, INT64_MIN, 100 * MS, 11, NULL },
        { "c/rank1.json", 1, 2, TL_FMT_KINETO, INT64_MAX - 50 * MS, 100 * MS, 12, NULL },
    };
    tl_session v[3];
    for (size_t i = 0; i < 3; i++)
        make(&v[i], &in[i]);
    char **notes;
    size_t nnotes;
    settle(v, 3, 0, &notes, &nnotes);
    assert_int_equal(find(v, 3, "a/rank0.json")->id.run, 0);
    assert_true(find(v, 3, "b/rank1.json")->id.run > 0);
    assert_true(find(v, 3, "c/rank1.json")->id.run > 0);
    free_all(v, 3, notes, nnotes);
}

static void test_settle_runs_apart_in_time(void **state)
{
    (void)state;
    tl_session v[NAPART];
    for (size_t i = 0; i < NAPART; i++)
        make(&v[i], &apart[i]);
    char **notes;
    size_t nnotes;
    settle(v, NAPART, 0, &notes, &nnotes);
    assert_int_equal(find(v, NAPART, "filter/rank0.json")->id.run, 0);
    assert_int_equal(find(v, NAPART, "filter/rank1.json")->id.run, 0);
    assert_true(find(v, NAPART, "compare/base.json")->id.run > 0);
    assert_true(find(v, NAPART, "later/rank2.json")->id.run > 0);
    assert_int_equal(nnotes, 3);
    tt_assert_contains(notes[0],
                       "1 input of a different run (rank 1 in process 2568503, not 4045) left out of the "
                       "numbers: compare/base.json",
                       "note");
    tt_assert_contains(notes[1],
                       "1 input of a different run (recorded 3.0 hours after it) left out of the numbers: "
                       "later/rank2.json; analyze it on its own (the run analyzed includes filter/rank0.json)",
                       "note");
    tt_assert_contains(notes[2], "2 of 128 ranks present", "note");
    free_all(v, NAPART, notes, nnotes);

    /* 59 minutes after: one run */
    for (size_t i = 0; i < NAPART; i++)
        make(&v[i], &apart[i]);
    v[3].start_ns = T0 + 3000 * MS + 59 * 60000 * MS;
    settle(v, NAPART, 0, &notes, &nnotes);
    assert_int_equal(find(v, NAPART, "later/rank2.json")->id.run, 0);
    free_all(v, NAPART, notes, nnotes);

    /* no wall clock: no time to tell them apart, first come */
    for (size_t i = 0; i < NAPART; i++) {
        make(&v[i], &apart[i]);
        v[i].abs_time = 0;
    }
    settle(v, NAPART, 0, &notes, &nnotes);
    assert_int_equal(find(v, NAPART, "compare/base.json")->id.run, 0);
    assert_int_equal(find(v, NAPART, "later/rank2.json")->id.run, 0);
    assert_true(find(v, NAPART, "filter/rank1.json")->id.run > 0);
    free_all(v, NAPART, notes, nnotes);
}

/* The same sessions in any order settle the same. */
static void test_settle_order_free(void **state)
{
    (void)state;
    tl_session first[NTWO];
    char **n0;
    size_t nn0;
    for (size_t i = 0; i < NTWO; i++)
        make(&first[i], &two_runs[i]);
    settle(first, NTWO, 0, &n0, &nn0);
    uint64_t seed = 42;
    for (int round = 0; round < 20; round++) {
        size_t perm[NTWO];
        for (size_t i = 0; i < NTWO; i++)
            perm[i] = i;
        for (size_t i = NTWO - 1; i > 0; i--) {
            size_t k = (size_t)(tt_splitmix64(&seed) % (i + 1));
            size_t t = perm[i];
            perm[i] = perm[k];
            perm[k] = t;
        }
        tl_session v[NTWO];
        for (size_t i = 0; i < NTWO; i++)
            make(&v[i], &two_runs[perm[i]]);
        char **notes;
        size_t nnotes;
        settle(v, NTWO, 0, &notes, &nnotes);
        for (size_t i = 0; i < NTWO; i++) {
            assert_string_equal(v[i].id.path, first[i].id.path);
            assert_int_equal(v[i].id.run, first[i].id.run);
            assert_int_equal(v[i].id.session, first[i].id.session);
        }
        assert_int_equal(nnotes, nn0);
        for (size_t i = 0; i < nnotes; i++)
            assert_string_equal(notes[i], n0[i]);
        free_all(v, NTWO, notes, nnotes);
    }
    free_all(first, NTWO, n0, nn0);
}

/* The ranks a world size promises; ranks that two partials both numbered by order. */
static void test_settle_rank_notes(void **state)
{
    (void)state;
    const spec in[] = {
        { "p1/a.json", 0, 4, TL_FMT_CHROME_TRACE, T0, MS, -1, NULL },
        { "p2/b.json", 0, 4, TL_FMT_CHROME_TRACE, T0 + 10 * MS, MS, -1, NULL },
    };
    tl_session v[2];
    for (size_t i = 0; i < 2; i++) {
        make(&v[i], &in[i]);
        v[i].id.rank_source = TL_RANK_ORDER;
    }
    char **notes;
    size_t nnotes;
    settle(v, 2, 0, &notes, &nnotes);
    assert_int_equal(nnotes, 2);
    assert_string_equal(notes[0], "1 of 4 ranks present (world size 4): missing ranks 1-3");
    tt_assert_contains(notes[1], "2 inputs share a rank only by input order (rank 0)", "note");
    assert_int_equal(v[1].id.session, 1);
    free_all(v, 2, notes, nnotes);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/tally-test-identity-%d", (int)getpid());
    tt_rmtree(g_dir);
    return mkdir(g_dir, 0700);
}

static int teardown(void **state)
{
    (void)state;
    tt_rmtree(g_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_rank),
        cmocka_unit_test(test_take_settled),
        cmocka_unit_test(test_problems_cap_and_skip),
        cmocka_unit_test(test_kinds_from_words),
        cmocka_unit_test(test_standing),
        cmocka_unit_test(test_unreadable_keeps_its_name),
        cmocka_unit_test(test_companion_and_order),
        cmocka_unit_test(test_settle_companion),
        cmocka_unit_test(test_settle_report_steps_at_trace_times),
        cmocka_unit_test(test_settle_runs),
        cmocka_unit_test(test_settle_runs_apart_in_time),
        cmocka_unit_test(test_settle_twenty_runs),
        cmocka_unit_test(test_settle_extreme_start),
        cmocka_unit_test(test_settle_order_free),
        cmocka_unit_test(test_settle_rank_notes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
