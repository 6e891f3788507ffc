/*
 * test_rules.c - the recommendation table (tools/analyze/rules.c).
 *
 * For every rule of tl_rules() there is a case that makes it fire (its id,
 * severity, rank, and the numbers that made it fire in its evidence or
 * message) and a case just on the other side of its threshold that does not.
 * The aggregate is built from synthetic session results (struct fields filled
 * directly) through tl_aggregate_add_session and tl_aggregate_finish, as
 * `tally merge` does. A healthy run fires no rule at all, and a rule added to
 * the table without a case here fails test_every_rule_is_tested.
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
#include "text_numbers.h"
#include "tt_support.h"

/* The analysis's text as a reader sees it: its numbers written by render's
 * one formatter (text_numbers.h), as every output writes them. */
static void text_contains(const char *hay, const char *needle, const char *what)
{
    char *text = hay ? tl_text_numbers(hay) : NULL;
    tt_assert_contains(text, needle, what);
    free(text);
}

#define MS(x) ((int64_t)((x)*1e6 + 0.5))
#define MAX_NAMES 8
#define NSTEPS 5

/* ---- synthetic sessions ----------------------------------------------------- */

static void add_name(tl_session *s, int group, const char *name, int64_t total_ns, int count)
{
    assert_true(s->nnames < MAX_NAMES);
    tl_sname *n = &s->names[s->nnames++];
    memset(n, 0, sizeof *n);
    n->group = group;
    n->name = tt_xstrdup(name);
    n->exact = 1;
    n->median_ns = n->p95_ns = n->std_ns = NAN;
    n->incl_ns = n->self_ns = -1; /* no nesting known: a report's sections */
    for (int i = 0; i < count; i++)
        tl_dur_stat_add(&n->d, (uint64_t)(total_ns / count), TL_PROFILE_MAX_SAMPLES);
}

static void set_steps(tl_session *s, const double *ms, double compute_ms)
{
    for (size_t i = 0; i < s->nsteps; i++) {
        s->steps[i].dur_ns = MS(ms[i]);
        s->steps[i].compute_ns = MS(compute_ms);
    }
}

static void set_step_time(tl_session *s, double ms)
{
    for (size_t i = 0; i < s->nsteps; i++)
        s->steps[i].dur_ns = MS(ms);
}

static void set_compute(tl_session *s, double ms)
{
    for (size_t i = 0; i < s->nsteps; i++)
        s->steps[i].compute_ns = MS(ms);
}

/* GPU numbers over a 100 ms kernel time, in ms. */
static void set_gpu(tl_session *s, double busy, double compute, double comm, double comm_compute)
{
    tl_gpu_breakdown *g = &s->gpu;
    g->kernel_time = MS(100);
    g->busy = MS(busy);
    g->idle = g->kernel_time - g->busy;
    g->compute = MS(compute);
    g->non_compute = g->busy - g->compute;
    g->comm = MS(comm);
    g->comm_compute = MS(comm_compute);
    g->by_mask[TL_MASK_COMPUTE] = g->compute - g->comm_compute;
    g->by_mask[TL_MASK_COMM] = g->comm - g->comm_compute;
    g->by_mask[TL_MASK_COMPUTE | TL_MASK_COMM] = g->comm_compute;
    if (g->nstreams > 0)
        g->streams[0].busy = g->busy; /* one stream carries all the work */
}

static void set_idle(tl_session *s, double host_wait, double kernel_wait, double other)
{
    s->gpu.streams[0].host_wait = MS(host_wait);
    s->gpu.streams[0].host_part = MS(host_wait); /* all of it before the launches */
    /* gaps of 40 µs: launch overhead (test_launch_bound sets longer ones) */
    s->gpu.streams[0].host_gaps = (uint64_t)(host_wait * 25);
    s->gpu.streams[0].kernel_wait = MS(kernel_wait);
    s->gpu.streams[0].other = MS(other);
}

/*
 * A healthy rank: 100 ms span, 5 steps of 20 ms with 15 ms of compute each,
 * GPU busy 92 % of a 100 ms kernel time (idle 8 %: under the launch-bound
 * gate), compute 80 ms, communication 6 ms of which 5 ms under compute,
 * idle gaps mostly kernel_wait, memory at 52.5 % of the device with little
 * fragmentation, sections at 25 % and 28 % of the span.
 */
static void healthy(tl_session *s, int rank, int world)
{
    memset(s, 0, sizeof *s);
    char path[64];
    snprintf(path, sizeof path, "rank%d.pt.trace.json", rank);
    s->id.path = tt_xstrdup(path);
    s->id.format = TL_FMT_KINETO;
    s->id.rank = rank;
    s->id.world_size = world;
    s->id.rank_source = TL_RANK_CONTENT;
    s->id.rank_detail = tt_xstrdup("distributedInfo.rank");
    s->start_ns = 1700000000000000000LL;
    s->span_ns = MS(100);
    s->names = calloc(MAX_NAMES, sizeof *s->names);
    assert_non_null(s->names);
    add_name(s, TL_GROUP_SECTIONS, "forward", MS(25), 5);
    add_name(s, TL_GROUP_SECTIONS, "backward", MS(28), 5);
    add_name(s, TL_GROUP_OPS, "aten::mm", MS(10), 50);
    s->steps = calloc(NSTEPS, sizeof *s->steps);
    assert_non_null(s->steps);
    s->nsteps = NSTEPS;
    for (size_t i = 0; i < NSTEPS; i++)
        s->steps[i].number = (int64_t)i + 1;
    set_step_time(s, 20);
    set_compute(s, 15);
    s->gpu.present = 1;
    s->gpu.steps_in_window = NSTEPS - 1;
    s->gpu.events = 1000;
    set_gpu(s, 92, 80, 6, 5);
    s->gpu.streams = calloc(1, sizeof *s->gpu.streams);
    assert_non_null(s->gpu.streams);
    s->gpu.nstreams = 1;
    s->gpu.streams[0].stream = 7;
    s->gpu.streams[0].gaps = 100;
    s->gpu.streams[0].busy = s->gpu.busy;
    set_idle(s, 2, 6, 0);
    s->peak_allocated = 40e9;
    s->peak_reserved = 42e9;
    s->device_total = 80e9;
    s->peak_rss = NAN;
    s->gpu_util_mean = NAN;
}

#define NRANKS 4

/* A healthy run of NRANKS ranks in s[]; tests change one thing and call finish(). */
static void healthy_run(tl_session *s)
{
    for (int r = 0; r < NRANKS; r++)
        healthy(&s[r], r, NRANKS);
}

static tl_aggregate *finish(tl_session *s, int n)
{
    tl_aggregate *a = malloc(sizeof *a);
    assert_non_null(a);
    tl_aggregate_init(a, NULL);
    /* added in reverse: the aggregate sorts them */
    for (int r = n - 1; r >= 0; r--)
        assert_int_equal(tl_aggregate_add_session(a, &s[r]), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
    return a;
}

static void done(tl_aggregate *a)
{
    tl_aggregate_release(a);
    free(a);
}

static const tl_recommendation *find(const tl_aggregate *a, const char *id)
{
    const tl_recommendation *hit = NULL;
    for (int i = 0; i < a->nrecs; i++)
        if (strcmp(a->recs[i].id, id) == 0) {
            if (hit != NULL)
                fail_msg("rule %s fired twice", id);
            hit = &a->recs[i];
        }
    return hit;
}

static const tl_rule_info *info(const char *id)
{
    size_t n;
    const tl_rule_info *r = tl_rules(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(r[i].id, id) == 0)
            return &r[i];
    fail_msg("no rule %s in tl_rules()", id);
    return NULL;
}

/* The rule fired once, only it (with `also` allowed besides), on this rank, with the
 * table's severity and these strings in its evidence (ev) and message (msg). */
static void assert_fires(const tl_aggregate *a, const char *id, int rank, const char *also, const char *const *ev,
                         const char *const *msg)
{
    const tl_recommendation *r = find(a, id);
    if (r == NULL) {
        for (int i = 0; i < a->nrecs; i++)
            print_message("fired: %s: %s\n", a->recs[i].id, a->recs[i].evidence);
        fail_msg("rule %s did not fire", id);
    }
    assert_string_equal(r->severity, info(id)->severity);
    assert_int_equal(r->rank, rank);
    for (; ev && *ev; ev++)
        text_contains(r->evidence, *ev, "evidence");
    for (; msg && *msg; msg++)
        text_contains(r->message, *msg, "message");
    /* the message ends with the rule's advice */
    text_contains(r->message, info(id)->advice, "message");
    for (int i = 0; i < a->nrecs; i++)
        if (strcmp(a->recs[i].id, id) != 0 && (also == NULL || strcmp(a->recs[i].id, also) != 0))
            fail_msg("rule %s fired too: %s", a->recs[i].id, a->recs[i].evidence);
}

static void assert_silent(const tl_aggregate *a)
{
    for (int i = 0; i < a->nrecs; i++)
        print_message("fired: %s (rank %d): %s\n", a->recs[i].id, a->recs[i].rank, a->recs[i].evidence);
    assert_int_equal(a->nrecs, 0);
}

#define STRS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* ---- the table ------------------------------------------------------------------- */

static const char *const tested[] = {
    "dominant-stage",
    "memory-near-capacity",
    "low-gpu-utilization",
    "communication-heavy",
    "low-overlap",
    "launch-bound",
    "host-bound",
    "data-loading",
    "step-time-variance",
    "memory-fragmentation",
    "straggler",
    "rank-imbalance",
    "blocking-host-call",
    "session-drift",
    "low-sampled-utilization",
    "thermal",
    "power-at-cap",
    "memory-growth",
    "low-fps",
    "first-block-delay",
    "dominant-layer",
    "clocks-below-base",
    "reserved-memory-jumps",
    "eager-attention",
};

static void test_every_rule_is_tested(void **state)
{
    (void)state;
    size_t n;
    const tl_rule_info *r = tl_rules(&n);
    assert_int_equal(n, sizeof tested / sizeof tested[0]);
    for (size_t i = 0; i < n; i++) {
        int found = 0;
        for (size_t k = 0; k < n; k++)
            found += strcmp(r[i].id, tested[k]) == 0;
        if (found != 1)
            fail_msg("rule %s has no case in test_rules.c", r[i].id);
        assert_true(strcmp(r[i].severity, "info") == 0 || strcmp(r[i].severity, "warning") == 0 ||
                    strcmp(r[i].severity, "critical") == 0);
        assert_true(strlen(r[i].condition) > 10);
        assert_true(strlen(r[i].preconditions) > 10);
        assert_true(strlen(r[i].evidence) > 5);
        assert_true(strlen(r[i].advice) > 10);
    }
}

static void test_healthy_fires_nothing(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    healthy_run(s);
    tl_aggregate *a = finish(s, NRANKS);
    assert_int_equal(a->nranks, NRANKS);
    assert_int_equal(a->nstragglers, 0);
    assert_silent(a);
    done(a);
}

/* A realistic healthy run: 8 ranks, each a little different (±2 %), no rule fires. */
static void test_healthy_jittered_fires_nothing(void **state)
{
    (void)state;
    enum { N = 8 };
    static const double jitter[N] = { 0.0, 0.012, -0.015, 0.004, -0.02, 0.018, -0.006, 0.009 };
    tl_session s[N];
    for (int r = 0; r < N; r++) {
        healthy(&s[r], r, N);
        double f = 1 + jitter[r];
        double steps[NSTEPS] = { 20 * f, 20.3 * f, 19.8 * f, 20.1 * f, 20.2 * f };
        set_steps(&s[r], steps, 15 * f);
        set_gpu(&s[r], 92 - 3 * jitter[r] * 100, 80 * f, 6 * f, 5 * f);
        s[r].peak_allocated = 40e9 * f;
    }
    tl_aggregate *a = finish(s, N);
    assert_int_equal(a->nstragglers, 0);
    assert_silent(a);
    done(a);
}

static void test_dominant_stage(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* 31 % of rank 2's 100 ms span */
    healthy_run(s);
    s[2].names[1].d.total = (uint64_t)MS(31);
    tl_aggregate *a = finish(s, NRANKS);
    /* on one rank of 4 (the others 28 ms): said, with the ranks' median */
    assert_fires(a, "dominant-stage", 2, NULL,
                 STRS("backward", "31.0%", "rank 2", "threshold 30%", "total 31.00 ms",
                      "over 30% on 1 of the 4 ranks it runs on, their median 28.0%"),
                 STRS("\"backward\" takes 31.0% of rank 2's time; over 30% on 1 of the 4 ranks it runs on, "
                      "their median 28.0%."));
    done(a);

    /* on every rank: the finding says so only in the evidence */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        s[r].names[1].d.total = (uint64_t)MS(31 + r);
    a = finish(s, NRANKS);
    assert_fires(a, "dominant-stage", 3, NULL, STRS("over 30% on 4 of the 4 ranks it runs on, their median 32.5%"),
                 STRS("\"backward\" takes 34.0% of rank 3's time."));
    done(a);

    /* 29.9 %: no */
    healthy_run(s);
    s[2].names[1].d.total = (uint64_t)MS(29.9);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* no wall time (a FramePack report): a share of its timed sections,
     * said so -- rank 2's backward 40 ms of its 65 (forward 25), 61.5 %,
     * above the other ranks' forward, 25 of 45 */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++) {
        s[r].span_ns = 0;
        s[r].names[1].d.total = (uint64_t)MS(20);
    }
    s[2].names[1].d.total = (uint64_t)MS(40);
    a = finish(s, NRANKS);
    assert_fires(a, "dominant-stage", 2, NULL,
                 STRS("backward", "61.5% of rank 2's timed sections (the report has no wall time"),
                 STRS("\"backward\" takes 61.5% of rank 2's timed sections"));
    done(a);

    /* a wrapper around the whole run (99.5 %) says nothing */
    healthy_run(s);
    add_name(&s[0], TL_GROUP_SECTIONS, "main", MS(99.5), 1);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);
}

/* The reason a rule did not apply, or NULL. */
static const char *skip_why(const tl_aggregate *a, const char *id)
{
    for (int i = 0; i < a->nskips; i++)
        if (strcmp(a->skips[i].id, id) == 0)
            return a->skips[i].why;
    return NULL;
}

/* Skip reasons name what is missing: no GPU events (not "communication
 * not over 5%" of reports without any), no data-loading section (not "no
 * steps" of reports that have them). */
static void test_skip_reasons(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        s[r].gpu.present = 0;
    tl_aggregate *a = finish(s, NRANKS);
    assert_non_null(skip_why(a, "low-overlap"));
    text_contains(skip_why(a, "low-overlap"), "no GPU events", "low-overlap");
    assert_non_null(skip_why(a, "data-loading"));
    text_contains(skip_why(a, "data-loading"), "no data-loading section or operator", "data-loading");
    done(a);
}

static void test_memory_near_capacity(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* 72.8 GB of an 80 GB device: 91 % */
    healthy_run(s);
    s[1].peak_allocated = 72.8e9;
    s[1].peak_reserved = 72.8e9;
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "memory-near-capacity", 1, NULL,
                 STRS("above the threshold of", "on 1 of the 4 ranks it applies to", "threshold of 90%", "rank 1"),
                 STRS("On rank 1", "peak device memory at 91.0% of the device"));
    done(a);

    /* the reserved memory counts too */
    healthy_run(s);
    s[3].peak_allocated = 60e9;
    s[3].peak_reserved = 74e9; /* 92.5 % */
    a = finish(s, NRANKS);
    assert_fires(a, "memory-near-capacity", 3, NULL,
                 STRS("above the threshold of", "on 1 of the 4 ranks it applies to", "threshold of 90%"),
                 STRS("92.5%"));
    done(a);

    /* only the device's used memory known (an Inferix report's monitor):
     * the evidence names that peak, no "nan" and no false "reserved 0.00" */
    healthy_run(s);
    s[2].peak_allocated = s[2].peak_reserved = NAN;
    s[2].peak_device_used = 76.0e9;
    a = finish(s, NRANKS);
    assert_fires(a, "memory-near-capacity", 2, NULL,
                 STRS("rank 2: peak used on the device 70.8 GiB, of a device of 74.5 GiB (95.0%)"), STRS("95.0%"));
    const tl_recommendation *nc = find(a, "memory-near-capacity");
    assert_null(strstr(nc->evidence, "nan"));
    assert_null(strstr(nc->evidence, "reserved"));
    done(a);

    /* 89.9 %: no */
    healthy_run(s);
    s[1].peak_allocated = 71.92e9;
    s[1].peak_reserved = 71.92e9;
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);
}

static void test_low_gpu_utilization(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* busy 49 % of the kernel time (idle 51 %, but the gaps are kernel_wait: not launch-bound) */
    healthy_run(s);
    set_gpu(&s[3], 49, 45, 4, 3.5);
    set_idle(&s[3], 10, 41, 0);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "low-gpu-utilization", 3, NULL,
                 STRS("below the threshold of", "on 1 of the 4 ranks it applies to", "threshold of 50%", "rank 3",
                      "kernel time 100.0 ms", "idle 51.0%"),
                 STRS("busy only 49.0%"));
    done(a);

    /* 50 %: no */
    healthy_run(s);
    set_gpu(&s[3], 50, 45, 4, 3.5);
    set_idle(&s[3], 10, 40, 0);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* a monitor's utilization is not kernel time: without a breakdown this rule is silent
     * (low-sampled-utilization speaks) */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++) {
        s[r].gpu.present = 0;
        s[r].gpu_util_mean = r == 2 ? 45.0 : 90.0;
    }
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* too little GPU work for a share of it to mean anything: 110 ns of kernel
     * time in 6 events (kineto-docs-traces), or 2 ms in 4 events */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++) {
        set_gpu(&s[r], 45, 18, 0, 0);
        s[r].gpu.kernel_time = 110;
        s[r].gpu.busy = 50;
        s[r].gpu.idle = 60;
        s[r].gpu.events = 6;
    }
    a = finish(s, NRANKS);
    assert_silent(a);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped += strcmp(a->skips[i].id, "low-gpu-utilization") == 0 && strstr(a->skips[i].why, "under 1 ms") != NULL;
    assert_int_equal(skipped, 1);
    assert_null(strstr(a->headline, "kernel time"));
    done(a);
    healthy_run(s);
    set_gpu(&s[3], 49, 45, 4, 3.5);
    set_idle(&s[3], 10, 41, 0);
    s[3].gpu.events = 4;
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);
}

/* ---- the seeds' rules ---------------------------------------------------------- */

/* A telemetry series of n samples (mean, max) on device dev of session s. */
static void add_series(tl_session *s, int kind, int64_t dev, uint64_t n, double mean, double max)
{
    tl_tseries *x = realloc(s->series, (s->nseries + 1) * sizeof *x);
    assert_non_null(x);
    s->series = x;
    tl_tseries *t = &s->series[s->nseries++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->device = dev;
    t->n = n;
    t->start_ns = s->start_ns;
    t->end_ns = s->start_ns + MS(100);
    t->min = mean;
    t->mean = mean;
    t->max = max;
    t->energy_j = NAN;
    t->nbins = 1;
    t->bmin[0] = t->bmean[0] = t->bmax[0] = mean;
}

static void test_low_sampled_utilization(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* the monitor's utilization averages 30 % on rank 1 (an Inferix report: no kernel time at all) */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++) {
        s[r].gpu.present = 0;
        add_series(&s[r], TL_SERIES_GPU_UTIL, 0, 20, r == 1 ? 30.0 : 91.0, r == 1 ? 44.0 : 95.0);
    }
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(
        a, "low-sampled-utilization", 1, NULL,
        STRS("sampled utilization mean 30.0%", "highest 44.0%", "20 samples", "on 1 of the 4 ranks with samples"),
        STRS("sampled GPU utilization averages 30.0%"));
    /* worded as sampled utilization, never as kernel time */
    assert_null(strstr(find(a, "low-sampled-utilization")->message, "kernel time"));
    assert_null(find(a, "low-gpu-utilization"));
    done(a);

    /* 50 %: no; and 2 samples are not enough */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        add_series(&s[r], TL_SERIES_GPU_UTIL, 0, 20, r == 1 ? 50.0 : 91.0, 95.0);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);
    healthy_run(s);
    add_series(&s[1], TL_SERIES_GPU_UTIL, 0, 2, 10.0, 12.0);
    a = finish(s, NRANKS);
    assert_silent(a);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped += strcmp(a->skips[i].id, "low-sampled-utilization") == 0;
    assert_int_equal(skipped, 1);
    done(a);
}

/* One GPU's health on session s. */
static tl_shealth *add_health(tl_session *s, int64_t dev)
{
    tl_shealth *x = realloc(s->health, (s->nhealth + 1) * sizeof *x);
    assert_non_null(x);
    s->health = x;
    tl_shealth *h = &s->health[s->nhealth++];
    memset(h, 0, sizeof *h);
    h->device = dev;
    h->temp_max = h->power_limit_w = h->power_max = NAN;
    return h;
}

static void temps(tl_shealth *h, uint64_t n, uint64_t hot, double max)
{
    h->temp_n = n;
    h->hot_n = hot;
    h->hot_ns = (int64_t)hot * 500000000;
    h->temp_max = max;
}

static void test_thermal(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* GPU 1 of rank 2 at 92 C in 30 of 40 samples: warning, on that GPU */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        for (int d = 0; d < 2; d++)
            temps(add_health(&s[r], d), 40, 0, 70 + r);
    temps(&s[2].health[1], 40, 30, 92);
    tl_aggregate *a = finish(s, NRANKS);
    const tl_recommendation *r = find(a, "thermal");
    assert_non_null(r);
    assert_string_equal(r->severity, "warning");
    assert_int_equal(r->rank, 2);
    text_contains(r->message, "GPU 1 reaches 92", "message");
    text_contains(r->evidence, "above 85", "evidence");
    text_contains(r->evidence, "in 30 of 40 samples (15.00 s)", "evidence");
    text_contains(r->evidence, "1 GPU over the threshold", "evidence");
    assert_int_equal(a->nrecs, 1);
    done(a);

    /* a brief 87 C: info */
    healthy_run(s);
    temps(add_health(&s[0], 0), 100, 2, 87);
    a = finish(s, NRANKS);
    assert_non_null(find(a, "thermal"));
    assert_string_equal(find(a, "thermal")->severity, "info");
    done(a);

    /* NVML's thermal slowdown in 20 of 100 samples at 84 C: critical, though under 85 C */
    healthy_run(s);
    tl_shealth *h = add_health(&s[3], 0);
    temps(h, 100, 0, 84);
    h->reasons_n = 100;
    h->thermal_n = 20;
    a = finish(s, NRANKS);
    assert_non_null(find(a, "thermal"));
    assert_string_equal(find(a, "thermal")->severity, "critical");
    text_contains(find(a, "thermal")->evidence, "NVML thermal slowdown in 20 of 100 samples", "evidence");
    assert_string_equal(a->headline_severity, "critical");
    done(a);

    /* 95 C over most of the samples: critical */
    healthy_run(s);
    temps(add_health(&s[1], 0), 50, 40, 96);
    a = finish(s, NRANKS);
    assert_string_equal(find(a, "thermal")->severity, "critical");
    done(a);

    /* 85 C exactly (the threshold is "over"), and no reasons: nothing */
    healthy_run(s);
    temps(add_health(&s[1], 0), 50, 0, 85);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* no samples at all: not applicable, with the reason */
    healthy_run(s);
    a = finish(s, NRANKS);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped += strcmp(a->skips[i].id, "thermal") == 0 && strstr(a->skips[i].why, "no GPU temperature") != NULL;
    assert_int_equal(skipped, 1);
    done(a);
}

static void test_power_at_cap(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* rank 0's GPU at 95 % of its 400 W limit or above in 80 of 100 samples */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++) {
        tl_shealth *h = add_health(&s[r], 0);
        h->power_n = 100;
        h->cap_n = r == 0 ? 80 : 10;
        h->power_limit_w = 400;
        h->power_max = r == 0 ? 399 : 390;
    }
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "power-at-cap", 0, NULL,
                 STRS("in 80 of 100 samples", "400 W limit", "highest 399 W", "1 GPU over it"),
                 STRS("runs at its power limit 80% of the time"));
    done(a);

    /* half of the samples is not over half */
    healthy_run(s);
    tl_shealth *h = add_health(&s[0], 0);
    h->power_n = 100;
    h->cap_n = 50;
    h->power_limit_w = 400;
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* NVML's power-cap reasons alone (no limit recorded) */
    healthy_run(s);
    h = add_health(&s[2], 1);
    h->reasons_n = 10;
    h->power_throttle_n = 9;
    a = finish(s, NRANKS);
    assert_fires(a, "power-at-cap", 2, NULL, STRS("no limit recorded", "NVML power cap or brake in 9 of 10 samples"),
                 NULL);
    done(a);

    /* power samples without a limit (Inferix): not applicable, and it says why */
    healthy_run(s);
    h = add_health(&s[2], 0);
    h->power_max = 450.5;
    a = finish(s, NRANKS);
    assert_silent(a);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped += strcmp(a->skips[i].id, "power-at-cap") == 0 && strstr(a->skips[i].why, "no power limit") != NULL;
    assert_int_equal(skipped, 1);
    done(a);
}

/* One GPU's busy samples against its base clock on session s. */
static void add_clock(tl_session *s, int64_t dev, uint64_t n, uint64_t slow, uint64_t reasons, double base, double min)
{
    tl_sclock *x = realloc(s->clocks, (s->nclocks + 1) * sizeof *x);
    assert_non_null(x);
    s->clocks = x;
    s->clocks[s->nclocks++] = (tl_sclock){ dev, n, slow, reasons, base, min };
}

static void test_clocks_below_base(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* rank 1's GPU 3 below its 1095 MHz base in 30 of 100 busy samples, with
     * power reasons in 25 of them; the others at their boost clock */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        add_clock(&s[r], 3, 100, r == 1 ? 30 : 0, r == 1 ? 25 : 0, 1095, r == 1 ? 810 : 1410);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "clocks-below-base", 1, NULL,
                 STRS("below the 1095 MHz base in 30 of 100 busy samples", "lowest 810 MHz",
                      "NVML's power or thermal reasons in 25 of them", "1 GPU over it"),
                 STRS("On rank 1, busy GPU 3 runs below its 1095 MHz base clock 30% of the time."));
    assert_int_equal(a->nrecs, 1);
    done(a);

    /* 10 of 100 is not over 10 %: silent; a clock at the base exactly is not below it (gpu_health.c) */
    healthy_run(s);
    add_clock(&s[0], 0, 100, 10, 0, 1095, 1000);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* below the base in 4 of 4 busy samples: too few to say */
    healthy_run(s);
    add_clock(&s[2], 0, 4, 4, 0, 1095, 600);
    a = finish(s, NRANKS);
    assert_silent(a);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped +=
            strcmp(a->skips[i].id, "clocks-below-base") == 0 && strstr(a->skips[i].why, "5 busy samples") != NULL;
    assert_int_equal(skipped, 1);
    done(a);

    /* without reasons: said so */
    healthy_run(s);
    add_clock(&s[3], 1, 20, 20, 0, 1275, 900);
    a = finish(s, NRANKS);
    assert_fires(a, "clocks-below-base", 3, NULL, STRS("no power or thermal reason from NVML in them", "in 20 of 20"),
                 NULL);
    done(a);
}

static void add_growth(tl_session *s, const char *what, uint32_t n, uint32_t drops, double first, double last)
{
    tl_sgrowth *x = realloc(s->growth, (s->ngrowth + 1) * sizeof *x);
    assert_non_null(x);
    s->growth = x;
    s->growth[s->ngrowth++] =
        (tl_sgrowth){ tt_xstrdup(what),
                      TL_GROWTH_ALLOCATED,
                      n,
                      drops,
                      first,
                      last,
                      last > first ? last : first,
                      MS(5000),
                      last > first ? 2 * (last - first) / (n - 1) : 0 }; /* an even rise: 2 steps of it */
}

#define GIB 1073741824.0

static void test_memory_growth(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* allocated at "after_step_#" from 10 to 12 GiB over 8 repetitions, never lower */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        add_growth(&s[r], "allocated at snapshot \"after_step_#\"", 8, 0, 10 * GIB, r == 3 ? 12 * GIB : 10.2 * GIB);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "memory-growth", 3, NULL,
                 STRS("10.0 GiB first, 12.0 GiB last (+20%, +2.0 GiB) over 5.000 s", "8 repetitions"),
                 STRS("rises 20% over 8 repetitions", "after_step_#"));
    done(a);

    /* the same rise, 80 % of it within three repetitions (the real H200 job of
     * tests/fixtures/ddp-h200: flat through start-up, +544 MiB in the first
     * two steps, flat after): a one-time allocation, said as a skip */
    healthy_run(s);
    add_growth(&s[2], "own GPU memory (NVML, this process)", 8, 0, 10 * GIB, 12 * GIB);
    s[2].growth[0].metric = TL_GROWTH_PROCESS_USED;
    s[2].growth[0].max_rise = 1.6 * GIB;
    a = finish(s, NRANKS);
    assert_null(find(a, "memory-growth"));
    int jump = 0;
    for (int i = 0; i < a->nskips; i++)
        jump += strcmp(a->skips[i].id, "memory-growth") == 0 &&
                strstr(a->skips[i].why, "within three consecutive ones") != NULL &&
                strstr(a->skips[i].why, "rank 2") != NULL;
    assert_int_equal(jump, 1);
    done(a);
    /* an older partial without the figure (NAN): read as before */
    healthy_run(s);
    add_growth(&s[2], "allocated at snapshot \"after_step_#\"", 8, 0, 10 * GIB, 12 * GIB);
    s[2].growth[0].max_rise = NAN;
    a = finish(s, NRANKS);
    assert_non_null(find(a, "memory-growth"));
    done(a);

    /* a drop along the way: not leak-like */
    healthy_run(s);
    add_growth(&s[0], "allocated at snapshot \"after_step_#\"", 8, 1, 10 * GIB, 12 * GIB);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* 10 % of a small value is under 64 MiB; 9 % of a large one is under 10 % */
    healthy_run(s);
    add_growth(&s[0], "RSS at snapshot \"x\"", 8, 0, 300e6, 340e6);
    add_growth(&s[1], "allocated at snapshot \"y\"", 8, 0, 10 * GIB, 10.9 * GIB);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* no repeated reading: not applicable */
    healthy_run(s);
    a = finish(s, NRANKS);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped += strcmp(a->skips[i].id, "memory-growth") == 0;
    assert_int_equal(skipped, 1);
    done(a);
}

/* Seven blocks of 3 frames: the first first_ms, the later ones later_ms each. */
static void blocks(tl_session *s, double first_ms, double later_ms)
{
    tl_sdiffusion *d = &s->diff;
    d->blocks = d->sized = 7;
    d->frames = 21;
    d->size_min = d->size_max = 3;
    d->block_ns = d->sized_ns = MS(first_ms + 6 * later_ms);
    d->first_block_ns = MS(first_ms);
    d->later_median_ns = MS(later_ms);
    d->steps = 28;
    d->step_ns = MS(7 * later_ms);
}

static void test_low_fps(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* 21 frames in 10.84 s (Inferix's corpus rank 0): 1.94 FPS */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        blocks(&s[r], r == 1 ? 1420 : 200, r == 1 ? 1570 : 100);
    tl_aggregate *a = finish(s, NRANKS);
    const tl_recommendation *rec = find(a, "low-fps");
    assert_non_null(rec);
    assert_int_equal(rec->rank, 1);
    assert_string_equal(rec->severity, "info");
    text_contains(rec->evidence, "21 frames in 7 blocks over 10.84 s of block computation: 1.94 FPS", "evidence");
    text_contains(rec->evidence, "on 1 of the 4 ranks with blocks", "evidence");
    done(a);

    /* 21 frames in 2.1 s: 10 FPS, not under */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        blocks(&s[r], 300, 300);
    a = finish(s, NRANKS);
    assert_null(find(a, "low-fps"));
    done(a);

    /* without block sizes: not applicable */
    healthy_run(s);
    a = finish(s, NRANKS);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped += strcmp(a->skips[i].id, "low-fps") == 0 || strcmp(a->skips[i].id, "first-block-delay") == 0;
    assert_int_equal(skipped, 2);
    done(a);
}

static void test_first_block_delay(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* 2.32 s against 1.42 s (Inferix's corpus rank 0): 1.63x, 0.9 s more */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        blocks(&s[r], r == 0 ? 2320 : 150, r == 0 ? 1420 : 140);
    tl_aggregate *a = finish(s, NRANKS);
    const tl_recommendation *rec = find(a, "first-block-delay");
    assert_non_null(rec);
    assert_int_equal(rec->rank, 0);
    text_contains(rec->evidence, "first block 2.320 s, later blocks' median 1.420 s (+900.0 ms, 1.63x)", "evidence");
    text_contains(rec->message, "the first block takes 2.320 s, 1.6x the later blocks", "message");
    done(a);

    /* 1.5x exactly, and 2x but only 0.3 s more: no */
    healthy_run(s);
    blocks(&s[0], 2130, 1420);
    blocks(&s[1], 600, 300);
    a = finish(s, NRANKS);
    assert_null(find(a, "first-block-delay"));
    done(a);
}

static void test_dominant_layer(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    healthy_run(s);
    s[2].diff.layers = 4;
    s[2].diff.layers_ns = MS(1000);
    s[2].diff.top_layer = tt_xstrdup("self_attn");
    s[2].diff.top_layer_ns = MS(450);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "dominant-layer", 2, NULL, STRS("self_attn: 450.0 ms of 1.000 s over 4 layers (45.0%)"),
                 STRS("layer \"self_attn\" takes 45.0% of the layers' time"));
    done(a);

    healthy_run(s);
    s[2].diff.layers = 4;
    s[2].diff.layers_ns = MS(1000);
    s[2].diff.top_layer = tt_xstrdup("self_attn");
    s[2].diff.top_layer_ns = MS(300);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* one layer is always all of the layers' time: not applicable */
    healthy_run(s);
    s[2].diff.layers = 1;
    s[2].diff.layers_ns = MS(1000);
    s[2].diff.top_layer = tt_xstrdup("only");
    s[2].diff.top_layer_ns = MS(1000);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);
}

static void test_communication_heavy(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* 16 ms of communication in 100 ms of kernel time, 5.5 of them under
     * compute (34.4 %: not low overlap): 10.5 % exposed */
    healthy_run(s);
    set_gpu(&s[0], 92, 80, 16, 5.5);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "communication-heavy", 0, NULL,
                 STRS("communication 16.0% of the kernel time, 34.4% of it overlapping compute, exposed 10.5%",
                      "on 1 of the 4 ranks it applies to", "threshold of 10%", "communication 16.00 ms"),
                 STRS("communication takes 16.0% of the kernel time, 10.5% not hidden under compute"));
    done(a);

    /* 10 % exposed: no */
    healthy_run(s);
    set_gpu(&s[0], 92, 80, 15.5, 5.5);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* a third of the kernel time, but 71 % of it under compute (HTA's
     * trace_diff test rank): 9.8 % exposed, the advice to overlap is
     * followed already: no */
    healthy_run(s);
    set_gpu(&s[0], 96, 80, 33.8, 24);
    a = finish(s, NRANKS);
    assert_null(find(a, "communication-heavy"));
    done(a);
}

/* n collectives of ms each on s, all of one kernel name. */
static void add_named_collectives(tl_session *s, const char *name, size_t n, double ms)
{
    s->kernels = calloc(1, sizeof *s->kernels);
    s->colls = calloc(n, sizeof *s->colls);
    assert_true(s->kernels != NULL && s->colls != NULL);
    s->kernels[0].name = tt_xstrdup(name);
    s->kernels[0].type = TL_KT_COMM;
    s->nkernels = 1;
    for (size_t i = 0; i < n; i++)
        s->colls[s->ncolls++] = (tl_collective){ 0, MS(ms) };
}

/* n all-reduces of ms each on s. */
static void add_collectives(tl_session *s, size_t n, double ms)
{
    add_named_collectives(s, "ncclKernel_AllReduce_RING_LL_Sum_float", n, ms);
}

/* Rank 0 spends 20 ms in the same 8 collectives that take 6 ms on the others:
 * the message says it is likely waiting, and the advice looks for the late
 * rank, not at the volume; with different collectives, it does not. */
static void test_communication_wait(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    healthy_run(s);
    set_gpu(&s[0], 95, 80, 20, 7);
    for (int k = 0; k < NRANKS; k++)
        add_collectives(&s[k], 8, k == 0 ? 2.5 : 0.75);
    tl_aggregate *a = finish(s, NRANKS);
    const tl_recommendation *r = find(a, "communication-heavy");
    assert_non_null(r);
    assert_int_equal(r->rank, 0);
    text_contains(r->message,
                  "The same 8 collectives take 6.000 ms on rank 1 against 20.00 ms here: most of it "
                  "is likely waiting for a rank that arrives later.",
                  "message");
    text_contains(r->message, "arrive early wait for the late one", "message");
    assert_null(strstr(r->message, "Overlap communication with compute"));
    done(a);

    healthy_run(s);
    set_gpu(&s[0], 95, 80, 20, 7);
    for (int k = 0; k < NRANKS; k++)
        add_collectives(&s[k], k == 0 ? 16 : 8, 0.75);
    a = finish(s, NRANKS);
    r = find(a, "communication-heavy");
    assert_non_null(r);
    assert_null(strstr(r->message, "likely waiting"));
    text_contains(r->message, "Overlap communication with compute", "message");
    done(a);

    /* as many collectives, but of another kind (another parallel group) */
    healthy_run(s);
    set_gpu(&s[0], 95, 80, 20, 7);
    for (int k = 0; k < NRANKS; k++)
        add_named_collectives(&s[k], k == 0 ? "ncclKernel_AllGather_RING_LL_Sum_float" : "ncclKernel_AllReduce_RING_LL",
                              8, k == 0 ? 2.5 : 0.75);
    a = finish(s, NRANKS);
    r = find(a, "communication-heavy");
    assert_non_null(r);
    assert_null(strstr(r->message, "likely waiting"));
    done(a);
}

static void test_low_overlap(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* 1.7 of 6 ms of communication under compute: 28.3 % */
    healthy_run(s);
    set_gpu(&s[1], 92, 80, 6, 1.7);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "low-overlap", 1, NULL,
                 STRS("below the threshold of", "on 1 of the 4 ranks it applies to", "threshold of 30%", "rank 1",
                      "communication 6.000 ms"),
                 STRS("only 28.3% of the communication overlaps compute"));
    done(a);

    /* 30.2 %: no */
    healthy_run(s);
    set_gpu(&s[1], 92, 80, 6, 1.81);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* no overlap at all, but communication is only 5 % of the kernel time: no */
    healthy_run(s);
    set_gpu(&s[1], 92, 80, 5, 0);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);
}

/* A healthy run whose rank 2 is mostly idle (55 %), 32 of the 55 ms of gaps
 * host_wait (58.2 %), all of it before the launches. */
static void mostly_idle(tl_session *s)
{
    healthy_run(s);
    set_gpu(&s[2], 45, 38, 6, 5);
    set_idle(&s[2], 32, 23, 0);
}

/* Neither launch-bound nor host-bound fires on s. */
static void no_host_rule(tl_session *s)
{
    tl_aggregate *a = finish(s, NRANKS);
    assert_null(find(a, "launch-bound"));
    assert_null(find(a, "host-bound"));
    done(a);
}

static void test_launch_bound(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* a mostly idle GPU (idle 55 %) whose gaps are mostly host_wait: 32 of 55 ms, 58.2 % */
    mostly_idle(s);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "launch-bound", 2, "low-gpu-utilization",
                 STRS("the host's part of host_wait 58.2% of the idle gaps of the 1 stream",
                      "threshold 50% in 3 gaps or more on 1 rank", "idle 55.0%"),
                 STRS("waits for the host to launch work during 58.2% of its idle gaps", "use CUDA graphs"));
    done(a);

    /* the same host_wait, but 10 of its 32 ms after the launches (the kernels
     * waited on another stream): the host's part is 22 of 55 ms, 40 % */
    mostly_idle(s);
    s[2].gpu.streams[0].host_part = MS(22);
    no_host_rule(s);

    /* an older partial without the host's part, the collectives' share or
     * the gap count (-1, -1, 0): all of host_wait, the stream counts, no
     * minimum of gaps -- and the evidence claims none of them */
    mostly_idle(s);
    s[2].gpu.streams[0].host_part = -1;
    s[2].gpu.streams[0].comm_busy = -1;
    s[2].gpu.streams[0].host_gaps = 0;
    a = finish(s, NRANKS);
    const tl_recommendation *old = find(a, "launch-bound");
    assert_non_null(old);
    assert_null(strstr(old->evidence, "collectives' streams left out"));
    assert_null(strstr(old->evidence, "after the launches"));
    done(a);

    /* the stream is mostly collectives: its gaps are the time between them */
    mostly_idle(s);
    s[2].gpu.streams[0].comm_busy = s[2].gpu.streams[0].busy * 3 / 4;
    no_host_rule(s);

    /* two long gaps: a pause, not a pattern */
    mostly_idle(s);
    s[2].gpu.streams[0].host_gaps = 2;
    no_host_rule(s);

    /* host_wait exactly half: no */
    healthy_run(s);
    set_gpu(&s[2], 45, 38, 6, 5);
    set_idle(&s[2], 27.5, 27.5, 0);
    a = finish(s, NRANKS);
    assert_null(find(a, "launch-bound"));
    done(a);

    /* all of the idle time is host_wait, but the GPU is 88 % busy: not launch-bound */
    healthy_run(s);
    set_gpu(&s[2], 88, 80, 6, 5);
    set_idle(&s[2], 12, 0, 0);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* the trace replays CUDA graphs: graph-aware advice, never "use CUDA graphs" */
    mostly_idle(s);
    s[2].graph_launches = 120;
    a = finish(s, NRANKS);
    assert_null(find(a, "launch-bound"));
    const tl_recommendation *r = find(a, "host-bound");
    assert_non_null(r);
    text_contains(r->message, "between graph replays", "message");
    text_contains(r->message, "replays CUDA/HIP graphs", "message");
    assert_null(strstr(r->message, "use CUDA graphs"));
    done(a);

    /* host_wait on a side stream with two tiny kernels: the main stream has no host_wait */
    healthy_run(s);
    set_gpu(&s[2], 45, 38, 6, 5);
    set_idle(&s[2], 0, 55, 0);
    {
        tl_stream_idle *x = realloc(s[2].gpu.streams, 2 * sizeof *x);
        assert_non_null(x);
        s[2].gpu.streams = x;
        s[2].gpu.nstreams = 2;
        x[1] = (tl_stream_idle){ 0, 20, MS(465), 0, 0, 1, MS(0.01), 1, MS(465), 0 }; /* 2 kernels 465 ms apart */
    }
    no_host_rule(s);

    /* the same wait in 16 gaps of 2 ms: host work between launches, not launch
     * overhead: host-bound, and never "use CUDA graphs" */
    mostly_idle(s);
    s[2].gpu.streams[0].host_gaps = 16;
    a = finish(s, NRANKS);
    assert_null(find(a, "launch-bound"));
    assert_fires(
        a, "host-bound", 2, "low-gpu-utilization",
        STRS("the host's part of host_wait 58.2% of the idle gaps of the 1 stream",
             "(16 host-wait gaps, the host's part averaging 2.000 ms; HTA's host_wait 32.00 ms, of it 0 ns "
             "after the launches)"),
        STRS("waits for host work between launches", "2.000 ms a gap on average", "CUDA graphs would not help"));
    done(a);

    /* 1600 gaps of 20 µs: launch overhead */
    mostly_idle(s);
    s[2].gpu.streams[0].host_gaps = 1600;
    a = finish(s, NRANKS);
    assert_null(find(a, "host-bound"));
    assert_non_null(find(a, "launch-bound"));
    done(a);
}

static void test_blocking_host_call(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* idle 55 ms, 40 of them under cudaMemcpy: the cause is named, launch-bound stays silent */
    healthy_run(s);
    set_gpu(&s[1], 45, 38, 6, 5);
    set_idle(&s[1], 50, 5, 0);
    s[1].gpu.blocked_idle = MS(40);
    s[1].gpu.blocking_call_ns = MS(40);
    snprintf(s[1].gpu.blocking_call, sizeof s[1].gpu.blocking_call, "cudaMemcpy");
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "blocking-host-call", 1, "low-gpu-utilization",
                 STRS("cover 40.00 ms of 55.00 ms GPU idle (72.7%)", "cudaMemcpy alone 40.00 ms"),
                 STRS("the host sits in cudaMemcpy during 72.7% of the GPU idle time"));
    assert_null(find(a, "launch-bound"));
    done(a);

    /* a blocking call covering 20 of 55 ms: not the cause; launch-bound decides */
    healthy_run(s);
    set_gpu(&s[1], 45, 38, 6, 5);
    set_idle(&s[1], 50, 5, 0);
    s[1].gpu.blocked_idle = MS(20);
    s[1].gpu.blocking_call_ns = MS(20);
    snprintf(s[1].gpu.blocking_call, sizeof s[1].gpu.blocking_call, "cudaStreamSynchronize");
    a = finish(s, NRANKS);
    assert_null(find(a, "blocking-host-call"));
    assert_non_null(find(a, "launch-bound"));
    done(a);
}

static void test_data_loading(void **state)
{
    (void)state;
    static const char dl[] = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
    tl_session s[NRANKS];
    /* 5.5 ms of data loading over 5 steps of 20 ms */
    healthy_run(s);
    add_name(&s[3], TL_GROUP_OPS, dl, MS(5.5), 5);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(
        a, "data-loading", 3, NULL,
        STRS(dl, "5.500 ms over 5 steps of 100.0 ms total (5.5%)", "threshold 5% on 1 of the 1 ranks it applies to"),
        STRS("5.5% of rank 3's step time"));
    done(a);

    /* a section named like a data loader counts too */
    healthy_run(s);
    add_name(&s[0], TL_GROUP_SECTIONS, "data_loading", MS(8), 5);
    a = finish(s, NRANKS);
    assert_fires(a, "data-loading", 0, NULL, STRS("data_loading", "(8.0%)"), NULL);
    done(a);

    /* 5 %: no */
    healthy_run(s);
    add_name(&s[3], TL_GROUP_OPS, dl, MS(5), 5);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* a trace without steps: over the profiled span (8 of 100 ms) */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++) {
        s[r].nsteps = 0;
        s[r].span_ns = MS(100);
    }
    add_name(&s[2], TL_GROUP_OPS, dl, MS(8), 5);
    a = finish(s, NRANKS);
    assert_fires(a, "data-loading", 2, NULL, STRS("8.000 ms of the 100.0 ms profiled (8.0%; no steps in the trace)"),
                 STRS("8.0% of rank 2's profiled time"));
    done(a);
}

/* Every rank launches 19.5 ms of compute a step; rank 1's steps take ms on
 * the host. */
static tl_aggregate *run_ahead(tl_session *s, const double *ms)
{
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        set_compute(&s[r], 19.5);
    set_steps(&s[1], ms, 19.5);
    return finish(s, NRANKS);
}

static void test_step_time_variance(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* the steady state (the first and the last step left out: 18, 24, 30)
     * spreads (30 - 18) / 24 = 50 %, and 25 % without its farthest step */
    healthy_run(s);
    static const double spread[NSTEPS] = { 20, 18, 24, 30, 20 };
    set_steps(&s[1], spread, 15);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "step-time-variance", 1, NULL,
                 STRS("min 18.00 ms", "median 24.00 ms", "max 30.00 ms", "over 3 comparable steps",
                      "the first and the last left out", "threshold 20%"),
                 STRS("vary by 50% of the median"));
    done(a);

    /* one slow step (24.2 among 20s: 21 %) is not variance */
    healthy_run(s);
    static const double one[NSTEPS] = { 20, 20, 24.2, 20, 20 };
    set_steps(&s[1], one, 15);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* a slow first and last step (start-up; a recorder stopping), a calm
     * steady state: the real H200 job of tests/fixtures/ddp-h200 (393 ms,
     * then ~64 ms, 149 ms last) */
    healthy_run(s);
    static const double edges[NSTEPS] = { 120, 20, 21, 20, 45 };
    set_steps(&s[1], edges, 15);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* 19.5 %: no */
    healthy_run(s);
    static const double calm[NSTEPS] = { 20, 20, 23.9, 20, 20 };
    set_steps(&s[1], calm, 15);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* two steps are not enough to speak of variance */
    healthy_run(s);
    s[1].nsteps = 2;
    s[1].steps[1].dur_ns = MS(30);
    a = finish(s, NRANKS);
    assert_null(find(a, "step-time-variance"));
    done(a);

    /* the host ran ahead in the first two steps (7 and 14 ms on the CPU),
     * each launching 19.5 ms of compute: the GPU's steps are all about 20 ms
     * (ns_resolution's shape): no */
    static const double ahead[NSTEPS] = { 7, 14, 20, 20, 20 };
    a = run_ahead(s, ahead);
    assert_null(find(a, "step-time-variance"));
    /* the headline's mean step time: 19.05 ms on the host, 19.95 ms with
     * the compute: 4.7 % apart, not said */
    text_contains(a->headline, "mean step time 19.05 ms, GPU busy", "headline");
    done(a);

    /* every rank ran ahead so: 16.2 ms on the host, 19.8 ms with the compute */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        set_steps(&s[r], ahead, 19.5);
    a = finish(s, NRANKS);
    assert_null(find(a, "step-time-variance"));
    text_contains(a->headline,
                  "mean step time 16.20 ms on the host, 19.80 ms counting the GPU compute each "
                  "step launched, GPU busy",
                  "headline");
    done(a);

    /* ... but slow steps stay slow, and the run-ahead step is said (the
     * steady state: 14 -> 19.5, 25, 31 ms; the first and last left out) */
    static const double ahead_slow[NSTEPS] = { 7, 14, 25, 31, 20 };
    a = run_ahead(s, ahead_slow);
    assert_fires(a, "step-time-variance", 1, NULL,
                 STRS("min 19.50 ms", "max 31.00 ms",
                      "(1 step shorter on the host than the GPU compute it "
                      "launched counted as that compute)"),
                 STRS("vary by 46% of the median"));
    done(a);
}

static void test_memory_fragmentation(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* reserved 15.1 GB for 10 GB allocated: 1.51x and 5.1 GB apart */
    healthy_run(s);
    s[2].peak_allocated = 10e9;
    s[2].peak_reserved = 15.1e9;
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "memory-fragmentation", 2, NULL,
                 STRS("peak reserved 14.1 GiB", "allocated 9.3 GiB", "thresholds 1.5x and 1 GiB"),
                 STRS("Rank 2 reserves 1.5x"));
    done(a);

    /* 1.49x: no */
    healthy_run(s);
    s[2].peak_allocated = 10e9;
    s[2].peak_reserved = 14.9e9;
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* 2x but only 1 GB (under 1 GiB) apart: no */
    healthy_run(s);
    s[2].peak_allocated = 1e9;
    s[2].peak_reserved = 2e9;
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);
}

/* Snapshots of allocated and reserved memory (GiB; peak allocated NaN). */
static void set_snaps(tl_session *s, int n, const double *alloc_gib, const double *rsv_gib)
{
    s->snaps = calloc((size_t)n, sizeof *s->snaps);
    assert_non_null(s->snaps);
    s->nsnaps = (size_t)n;
    for (int i = 0; i < n; i++) {
        char label[32];
        snprintf(label, sizeof label, "after_chunk_%d", i);
        s->snaps[i].label = tt_xstrdup(label);
        s->snaps[i].allocated = alloc_gib[i] * GIB;
        s->snaps[i].reserved = rsv_gib[i] * GIB;
        s->snaps[i].peak_allocated = s->snaps[i].rss = s->snaps[i].device_used = NAN;
        s->snaps[i].ts_ns = INT64_MIN;
    }
}

static void test_reserved_memory_jumps(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* allocated flat at 10 GiB, reserved 12 -> 14 -> 14 -> 16 GiB: two jumps of 2 GiB (16.7 %, 14.3 %) */
    healthy_run(s);
    set_snaps(&s[1], 4, (const double[]){ 10, 10.1, 10, 10.1 }, (const double[]){ 12, 14, 14, 16 });
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "reserved-memory-jumps", 1, NULL,
                 STRS("2 jumps of reserved memory adding up to 4.0 GiB over memory snapshots",
                      "the largest +2.0 GiB at snapshot 'after_chunk_1' with 10.1 GiB allocated"),
                 STRS("On rank 1, reserved GPU memory grew in 2 jumps (4.0 GiB)"));
    done(a);

    /* reserved grows with allocated (each jump's growth explained by a new high): no */
    healthy_run(s);
    set_snaps(&s[1], 4, (const double[]){ 10, 11.5, 11, 13 }, (const double[]){ 12, 14, 14, 16 });
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* a snapshot's recorded peak explains the jump: no */
    healthy_run(s);
    set_snaps(&s[1], 4, (const double[]){ 10, 10, 10, 10 }, (const double[]){ 12, 14, 14, 16 });
    s[1].snaps[1].peak_allocated = 13 * GIB;
    s[1].snaps[3].peak_allocated = 15 * GIB;
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* one jump only, and jumps of 8 % of the reserved memory: no */
    healthy_run(s);
    set_snaps(&s[1], 3, (const double[]){ 10, 10, 10 }, (const double[]){ 12, 14, 14 });
    set_snaps(&s[2], 4, (const double[]){ 10, 10, 10, 10 }, (const double[]){ 25, 27, 27, 29 });
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* no readings: not applicable */
    healthy_run(s);
    a = finish(s, NRANKS);
    int skipped = 0;
    for (int i = 0; i < a->nskips; i++)
        skipped += strcmp(a->skips[i].id, "reserved-memory-jumps") == 0 && a->skips[i].absent;
    assert_int_equal(skipped, 1);
    done(a);
}

/* Attention op by op on a rank: softmax over scores of dims, in dtype, for total_ms. */
static void eager(tl_session *s, const char *device, const char *dims, const char *types, double total_ms)
{
    add_name(s, TL_GROUP_OPS, "aten::_softmax", MS(total_ms), 10);
    add_name(s, TL_GROUP_OPS, "aten::bmm", MS(4), 20);
    s->device_name = device ? tt_xstrdup(device) : NULL;
    s->shapes = calloc(1, sizeof *s->shapes);
    assert_non_null(s->shapes);
    s->nshapes = 1;
    s->shapes[0].name = tt_xstrdup("aten::_softmax");
    s->shapes[0].dims = tt_xstrdup(dims);
    s->shapes[0].types = tt_xstrdup(types);
    s->shapes[0].count = 10;
    s->shapes[0].total_ns = MS(total_ms);
}

static void test_eager_attention(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* bf16 softmax over [8,16,1024,1024] scores, 3 ms of a 100 ms span, on an H100 */
    healthy_run(s);
    eager(&s[2], "NVIDIA H100 80GB HBM3", "[[8,16,1024,1024],[],[]]", "c10::BFloat16,Scalar,Scalar", 3);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "eager-attention", 2, NULL,
                 STRS("aten::_softmax: 10 calls, inputs [[8,16,1024,1024],[],[]] of c10::BFloat16,Scalar,Scalar",
                      "3.000 ms (3.0% of the rank's 100.0 ms)", "threshold 1%"),
                 STRS("On rank 2, attention runs unfused (aten::_softmax) for 3.0% of the time"));
    done(a);

    /* a fused attention kernel in the session: no */
    healthy_run(s);
    eager(&s[2], "NVIDIA H100 80GB HBM3", "[[8,16,1024,1024],[],[]]", "c10::BFloat16,Scalar,Scalar", 3);
    add_name(&s[2], TL_GROUP_OPS, "aten::_scaled_dot_product_flash_attention", MS(2), 2);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* fp32, scores not square (a [512,1024] softmax over a vocabulary), under 1 %, an A100-less
     * unknown device, no dtypes: no */
    static const struct {
        const char *device, *dims, *types;
        double ms;
    } quiet[] = {
        { "NVIDIA H100 80GB HBM3", "[[8,16,1024,1024],[],[]]", "float,Scalar,Scalar", 3 },
        { "NVIDIA H100 80GB HBM3", "[[8,512,32000],[],[]]", "c10::BFloat16,Scalar,Scalar", 3 },
        { "NVIDIA H100 80GB HBM3", "[[8,16,1024,1024],[],[]]", "c10::BFloat16,Scalar,Scalar", 0.5 },
        { "AMD Instinct MI300X", "[[8,16,1024,1024],[],[]]", "c10::BFloat16,Scalar,Scalar", 3 },
        { "Tesla V100-SXM2-16GB", "[[8,16,1024,1024],[],[]]", "c10::Half,Scalar,Scalar", 3 },
        { NULL, "[[8,16,1024,1024],[],[]]", "c10::BFloat16,Scalar,Scalar", 3 },
        { "NVIDIA H100 80GB HBM3", "[[8,16,1024,1024],[],[]]", "", 3 },
    };
    for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++) {
        healthy_run(s);
        eager(&s[2], quiet[i].device, quiet[i].dims, quiet[i].types, quiet[i].ms);
        a = finish(s, NRANKS);
        assert_silent(a);
        done(a);
    }
}

static void test_straggler(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* rank 3's compute per step 16.65 ms vs 15 ms: +11 % */
    healthy_run(s);
    set_compute(&s[3], 16.65);
    tl_aggregate *a = finish(s, NRANKS);
    assert_int_equal(a->nstragglers, 1);
    assert_fires(a, "straggler", 3, NULL,
                 STRS("rank 3: GPU compute per step 11% above the median of the other ranks on average, slower in "
                      "5 of 5 comparable steps (median 16.65 ms vs 15.00 ms"),
                 STRS("Rank 3 is a straggler (slow compute)"));
    assert_true(a->ranks[3].straggler);
    done(a);

    /* +4.7 %: under the 5 % floor, no */
    healthy_run(s);
    set_compute(&s[3], 15.7);
    a = finish(s, NRANKS);
    assert_int_equal(a->nstragglers, 0);
    assert_silent(a);
    done(a);

    /* +11 % in one step of five only: not consistent, no */
    healthy_run(s);
    s[3].steps[2].compute_ns = MS(16.65 * 5);
    a = finish(s, NRANKS);
    assert_int_equal(a->nstragglers, 0);
    done(a);

    /* +11 % but the ranks trade places by ±15 % from step to step: within the noise, no */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        for (int k = 0; k < NSTEPS; k++)
            s[r].steps[k].compute_ns = MS((r == 3 ? 16.65 : 15) * ((k + r) % 2 ? 1.15 : 0.85));
    a = finish(s, NRANKS);
    assert_int_equal(a->nstragglers, 0);
    done(a);

    /* two steps only: no rank is named, and the report says why */
    healthy_run(s);
    set_compute(&s[3], 20);
    for (int r = 0; r < NRANKS; r++)
        s[r].nsteps = 2;
    a = finish(s, NRANKS);
    assert_int_equal(a->nstragglers, 0);
    assert_non_null(a->straggler_note);
    text_contains(a->straggler_note, "2 comparable steps on every rank: need 3", "note");
    done(a);

    /* +30 % in every one of 5 steps: critical */
    healthy_run(s);
    set_compute(&s[3], 19.5);
    a = finish(s, NRANKS);
    assert_int_equal(a->nstragglers, 1);
    assert_string_equal(find(a, "straggler")->severity, "critical");
    done(a);
}

/* Reports with a loop summary but no step samples (FramePack): 5 iterations of ms each. */
static void loop_only(tl_session *s, double ms)
{
    s->nsteps = 0;
    add_name(s, TL_GROUP_ITERATIONS, "loop", MS(5 * ms), 5);
}

static void test_rank_imbalance(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    /* rank 1 at 26 ms, the others at 20: mean 21.5, 26 / 21.5 = 1.209 */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        loop_only(&s[r], r == 1 ? 26 : 20);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(a, "rank-imbalance", 1, NULL,
                 STRS("step time max 26.00 ms (rank 1)", "mean 21.50 ms", "min 20.00 ms (rank 0)", "threshold 1.20x"),
                 STRS("1.21x the mean step time"));
    done(a);

    /* 25.6 / 21.4 = 1.196: no */
    healthy_run(s);
    for (int r = 0; r < NRANKS; r++)
        loop_only(&s[r], r == 1 ? 25.6 : 20);
    a = finish(s, NRANKS);
    assert_silent(a);
    done(a);

    /* with step samples, the per-step straggler analysis decides: rank 1's
     * step time is 30 % longer but its GPU compute is the same (it waits) */
    healthy_run(s);
    set_step_time(&s[1], 26);
    a = finish(s, NRANKS);
    assert_null(find(a, "rank-imbalance"));
    done(a);

    /* one rank without steps (a report's loop summary) among ranks with
     * them: no per-step comparison, so rank-imbalance speaks, on the
     * step-less rank (26 ms against 20 ms steps) */
    healthy_run(s);
    set_step_time(&s[0], 20);
    set_step_time(&s[1], 20);
    set_step_time(&s[2], 20);
    loop_only(&s[3], 26);
    a = finish(s, NRANKS);
    assert_non_null(a->straggler_note);
    text_contains(a->straggler_note,
                  "no steps: cannot compare ranks (no ProfilerStep or tally iteration on some ranks)", "note");
    assert_int_equal(a->nstragglers, 0);
    assert_fires(a, "rank-imbalance", 3, NULL, STRS("step time max 26.00 ms (rank 3)", "min 20.00 ms (rank 0)"),
                 STRS("1.21x the mean step time"));
    done(a);

    /* one rank: nothing to be imbalanced against */
    healthy(&s[0], 0, 1);
    loop_only(&s[0], 26);
    a = finish(s, 1);
    assert_silent(a);
    done(a);
}

/* Two sessions of every rank in s[2 * NRANKS], the second a second later. */
static void two_sessions(tl_session *s)
{
    healthy_run(s);
    healthy_run(s + NRANKS);
    for (int r = 0; r < NRANKS; r++) {
        tl_session *later = &s[NRANKS + r];
        later->start_ns += 1000000000LL;
        free(later->id.path);
        char path[64];
        snprintf(path, sizeof path, "later/rank%d.pt.trace.json", r);
        later->id.path = tt_xstrdup(path);
    }
}

/* A rule over ranks fires once, on the worst rank, and counts the others. */
/* Two sessions of every rank, the second a second later: "forward" 24 % faster
 * in the second fires session-drift for the run (rank -1), with both values;
 * 19 % faster, or the same, does not; one session has no table at all. */
static void test_session_drift(void **state)
{
    (void)state;
    const double forward_ms[] = { 19, 20.25, 25 };
    for (int c = 0; c < 3; c++) {
        tl_session s[2 * NRANKS];
        two_sessions(s);
        for (int r = 0; r < NRANKS; r++)
            s[NRANKS + r].names[0].d.total = (uint64_t)MS(forward_ms[c]);
        tl_aggregate *a = finish(s, 2 * NRANKS);
        assert_int_equal(a->drift.nsessions, 2);
        const tl_drift_stage *fw = NULL;
        for (size_t i = 0; i < a->drift.nstages; i++)
            if (!strcmp(a->drift.stages[i].name, "forward"))
                fw = &a->drift.stages[i];
        assert_non_null(fw);
        /* per call: 5 calls a session */
        assert_true(fabs(fw->value[0] - 5e6) < 1 && fabs(fw->value[1] - forward_ms[c] / 5 * 1e6) < 1);
        assert_true(fw->calls[0] == 5 && fw->calls[1] == 5);
        if (c == 0)
            assert_fires(a, "session-drift", -1, NULL,
                         STRS("forward: 5.000 ms a call in session 1 (5 calls), 3.800 ms in session 2 (5 calls)",
                              "-24.0%", "threshold 20%"),
                         STRS("\"forward\" is 24% faster a call in the last of 2 sessions than in the first"));
        else
            assert_silent(a);
        done(a);
    }
    /* the second session profiled 2.5x as long: every name has 2.5x the
     * calls and the total, each call as long: no drift (it read "forward
     * 150% slower", the sessions' totals) */
    {
        tl_session s[2 * NRANKS];
        two_sessions(s);
        for (int r = 0; r < NRANKS; r++) {
            tl_session *later = &s[NRANKS + r];
            for (size_t i = 0; i < later->nnames; i++) {
                later->names[i].d.total = later->names[i].d.total * 5 / 2;
                later->names[i].d.count = later->names[i].d.count * 5 / 2;
            }
        }
        tl_aggregate *a = finish(s, 2 * NRANKS);
        assert_int_equal(a->drift.nsessions, 2);
        assert_null(find(a, "session-drift"));
        done(a);
    }
    tl_session one[NRANKS];
    healthy_run(one);
    tl_aggregate *a = finish(one, NRANKS);
    assert_int_equal(a->drift.nstages, 0);
    done(a);
}

static void test_rank_rule_counts_ranks(void **state)
{
    (void)state;
    tl_session s[NRANKS];
    healthy_run(s);
    set_gpu(&s[0], 95, 80, 16, 5);
    set_gpu(&s[2], 95, 80, 20, 7);
    set_gpu(&s[3], 95, 80, 16, 5);
    tl_aggregate *a = finish(s, NRANKS);
    assert_fires(
        a, "communication-heavy", 2, NULL,
        STRS("above the threshold of", "on 3 of the 4 ranks it applies to", "rank 2", "communication 20.00 ms"),
        STRS("On rank 2, communication takes 20.0% of the kernel time, 13.0% not hidden"));
    done(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_rule_is_tested),
        cmocka_unit_test(test_healthy_fires_nothing),
        cmocka_unit_test(test_healthy_jittered_fires_nothing),
        cmocka_unit_test(test_dominant_stage),
        cmocka_unit_test(test_skip_reasons),
        cmocka_unit_test(test_memory_near_capacity),
        cmocka_unit_test(test_low_gpu_utilization),
        cmocka_unit_test(test_communication_wait),
        cmocka_unit_test(test_communication_heavy),
        cmocka_unit_test(test_low_overlap),
        cmocka_unit_test(test_launch_bound),
        cmocka_unit_test(test_blocking_host_call),
        cmocka_unit_test(test_data_loading),
        cmocka_unit_test(test_step_time_variance),
        cmocka_unit_test(test_memory_fragmentation),
        cmocka_unit_test(test_reserved_memory_jumps),
        cmocka_unit_test(test_eager_attention),
        cmocka_unit_test(test_straggler),
        cmocka_unit_test(test_rank_imbalance),
        cmocka_unit_test(test_rank_rule_counts_ranks),
        cmocka_unit_test(test_session_drift),
        cmocka_unit_test(test_low_sampled_utilization),
        cmocka_unit_test(test_thermal),
        cmocka_unit_test(test_power_at_cap),
        cmocka_unit_test(test_clocks_below_base),
        cmocka_unit_test(test_memory_growth),
        cmocka_unit_test(test_low_fps),
        cmocka_unit_test(test_first_block_delay),
        cmocka_unit_test(test_dominant_layer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
