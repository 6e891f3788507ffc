/*
 * test_waits.c - who waits for whom (tools/analyze/waits.c, run by
 * tl_aggregate_finish), on synthetic session results whose collectives are
 * placed by hand:
 *  - 4 ranks, 12 collectives, rank 2 arrives 5 ms after the others every time
 *    and ranks 1 and 3 have clocks off by +3 ms and -7 ms: the offsets are
 *    estimated from the ends, rank 2 is named with the exact waits;
 *  - the same matched by sequence number when one rank records them out of
 *    order; a sequence number twice on one rank: not judged;
 *  - arrivals that differ by jitter only: none named, why_none says why;
 *  - a rank with 3 of 12 collectives (truncated): left out, the rest matched;
 *  - the rank last most often, but in half the collectives only: not named;
 *  - three all-reduces a step that overlap in time (DDP's buckets), the late
 *    rank 30 ms behind in each: the others wait 34 ms a step (the union of
 *    their waits), not 90 (their sum).
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
#include "tt_support.h"

#define MS(x) ((int64_t)((x)*1e6 + 0.5))
#define NR 4
#define NC 12
#define NSTEPS 4
#define STEP_MS 100.0

/* A rank with NSTEPS steps of STEP_MS and no GPU data. */
static void make(tl_session *s, int rank)
{
    tl_session_init(s);
    char path[64];
    snprintf(path, sizeof path, "rank%d.pt.trace.json", rank);
    s->id.path = tt_xstrdup(path);
    s->id.rank_detail = tt_xstrdup("distributedInfo.rank");
    s->id.format = TL_FMT_KINETO;
    s->id.rank = rank;
    s->id.world_size = NR;
    s->id.rank_source = TL_RANK_CONTENT;
    s->start_ns = 0;
    s->span_ns = MS(STEP_MS * NSTEPS);
    s->steps = calloc(NSTEPS, sizeof *s->steps);
    assert_non_null(s->steps);
    for (int i = 0; i < NSTEPS; i++)
        s->steps[s->nsteps++] =
            (tl_sstep){ .number = i + 1, .dur_ns = MS(STEP_MS), .compute_ns = -1, .ts_ns = INT64_MIN };
}

/* Collective c of rank r: arrives at arrive_ms (on the true clock), ends at
 * the release 30 ms into its slot; the rank's clock reads skew_ms more. */
static void colls(tl_session *s, int n, const double *arrive_ms, double skew_ms, const int64_t *seq)
{
    s->coll_names = calloc(2, sizeof *s->coll_names);
    s->coll_names[s->ncoll_names++] = tt_xstrdup("gloo:all_reduce");
    s->insts = calloc((size_t)n + 1, sizeof *s->insts);
    assert_true(s->coll_names != NULL && s->insts != NULL);
    for (int c = 0; c < n; c++) {
        int k = seq ? (int)seq[c] : c;
        double release = 33.0 * k + 30.0;
        s->insts[s->ninsts++] = (tl_scoll){
            0, TL_COLL_RUN, MS(arrive_ms[k] + skew_ms), MS(release - arrive_ms[k]), seq ? seq[c] : -1, 1024, -1, -1, -1
        };
    }
}

static tl_aggregate *finish(tl_session *s, int n)
{
    tl_aggregate *a = malloc(sizeof *a);
    assert_non_null(a);
    tl_aggregate_init(a, NULL);
    for (int r = 0; r < n; r++)
        assert_int_equal(tl_aggregate_add_session(a, &s[r]), 0);
    assert_int_equal(tl_aggregate_finish(a), 0);
    return a;
}

static void done(tl_aggregate *a)
{
    tl_aggregate_release(a);
    free(a);
}

static const double skews[NR] = { 0, 3, 0, -7 };

/* Rank late arrives 5 ms after the others (which arrive at 10 ms into each slot,
 * spread by jitter_ms per rank). */
static void job(tl_session *s, int late, double jitter_ms, const int64_t *seq_of_rank1)
{
    for (int r = 0; r < NR; r++) {
        make(&s[r], r);
        double arrive[NC];
        for (int c = 0; c < NC; c++)
            arrive[c] = 33.0 * c + 10.0 + (r == late ? 5.0 : 0) + jitter_ms * (((r * 5 + c * 3) % 7) - 3) / 3.0;
        colls(&s[r], NC, arrive, skews[r], r == 1 ? seq_of_rank1 : NULL);
    }
}

static void test_late_rank_with_skewed_clocks(void **state)
{
    (void)state;
    tl_session s[NR];
    job(s, 2, 0, NULL);
    tl_aggregate *a = finish(s, NR);
    const tl_waits *w = &a->waits;
    assert_int_equal(w->source, TL_WAITS_CPU);
    assert_int_equal(w->matched_by, TL_WAITS_BY_ORDER);
    assert_int_equal(w->matched, NC);
    assert_int_equal(w->straggler, 2);
    assert_int_equal(w->straggler_last, NC);
    /* the clocks: rank 1 reads 3 ms more, rank 3 7 ms less (against the median) */
    assert_true(llabs(w->ranks[1].offset_ns - w->ranks[0].offset_ns - MS(3)) < 1000);
    assert_true(llabs(w->ranks[3].offset_ns - w->ranks[0].offset_ns + MS(7)) < 1000);
    assert_true(w->residual_ns < 1000);
    /* every other rank waits 5 ms in each of 12: 60 ms; rank 2 causes 60 ms, 15 ms a step */
    for (int r = 0; r < NR; r++)
        assert_true(llabs(w->ranks[r].waited_ns - (r == 2 ? 0 : MS(60))) < 10000);
    assert_true(llabs(w->ranks[2].caused_ns - MS(60)) < 10000);
    assert_true(fabs(w->caused_per_step_ns - 15e6) < 1e4);
    assert_true(fabs(w->step_share_pct - 15.0) < 0.01);
    assert_true(w->straggler_p < 1e-6);
    /* one verdict: a last_arrival straggler */
    assert_int_equal(a->nstragglers, 1);
    assert_string_equal(a->stragglers[0].kind, "last_arrival");
    assert_int_equal(a->stragglers[0].rank, 2);
    done(a);
}

static void test_by_sequence(void **state)
{
    (void)state;
    /* rank 1 records its collectives out of order, each with its sequence number */
    static const int64_t seq1[NC] = { 3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10 };
    static const int64_t seq[NC] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
    tl_session s[NR];
    for (int r = 0; r < NR; r++) {
        make(&s[r], r);
        double arrive[NC];
        for (int c = 0; c < NC; c++)
            arrive[c] = 33.0 * c + 10.0 + (r == 3 ? 4.0 : 0);
        colls(&s[r], NC, arrive, skews[r], r == 1 ? seq1 : seq);
    }
    tl_aggregate *a = finish(s, NR);
    assert_int_equal(a->waits.matched_by, TL_WAITS_BY_SEQ);
    assert_int_equal(a->waits.matched, NC);
    assert_int_equal(a->waits.partial, 0);
    assert_int_equal(a->waits.straggler, 3);
    done(a);

    /* a sequence number twice on rank 1 (and one missing): those two are not judged */
    static const int64_t dup[NC] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10 };
    for (int r = 0; r < NR; r++) {
        make(&s[r], r);
        double arrive[NC];
        for (int c = 0; c < NC; c++)
            arrive[c] = 33.0 * c + 10.0 + (r == 3 ? 4.0 : 0);
        colls(&s[r], NC, arrive, 0, r == 1 ? dup : seq);
    }
    a = finish(s, NR);
    assert_int_equal(a->waits.matched, NC - 2);
    assert_int_equal(a->waits.partial, 2);
    assert_int_equal(a->waits.straggler, 3);
    done(a);
}

static void test_jitter_only(void **state)
{
    (void)state;
    tl_session s[NR];
    job(s, -1, 2.0, NULL);
    tl_aggregate *a = finish(s, NR);
    assert_int_equal(a->waits.matched, NC);
    assert_int_equal(a->waits.straggler, -1);
    assert_non_null(a->waits.why_none);
    assert_int_equal(a->nstragglers, 0);
    done(a);
}

static void test_truncated_rank_left_out(void **state)
{
    (void)state;
    tl_session s[NR];
    for (int r = 0; r < NR; r++) {
        make(&s[r], r);
        double arrive[NC];
        for (int c = 0; c < NC; c++)
            arrive[c] = 33.0 * c + 10.0 + (r == 1 ? 6.0 : 0);
        colls(&s[r], r == 0 ? 3 : NC, arrive, 0, NULL);
    }
    tl_aggregate *a = finish(s, NR);
    const tl_waits *w = &a->waits;
    assert_false(w->ranks[0].used);
    tt_assert_contains(w->ranks[0].why_out, "fewer collectives than the other ranks", NULL);
    assert_int_equal(w->used, 3);
    assert_int_equal(w->matched, NC);
    assert_int_equal(w->straggler, 1);
    done(a);
}

static void test_half_the_time_not_named(void **state)
{
    (void)state;
    tl_session s[NR];
    for (int r = 0; r < NR; r++) {
        make(&s[r], r);
        double arrive[NC];
        for (int c = 0; c < NC; c++) /* rank 2 last in the even ones, rank 0 in the odd */
            arrive[c] = 33.0 * c + 10.0 + ((c % 2 == 0 && r == 2) || (c % 2 == 1 && r == 0) ? 5.0 : 0);
        colls(&s[r], NC, arrive, 0, NULL);
    }
    tl_aggregate *a = finish(s, NR);
    assert_int_equal(a->waits.straggler, -1);
    assert_int_equal(a->waits.most_last_n, NC / 2);
    assert_string_equal(a->waits.why_none,
                        "no rank arrives last in two thirds of the collectives or causes two thirds of the waiting");
    done(a);
}

/* Rank late is 30 ms behind in each of 3 overlapping all-reduces a step: the
 * others arrive at 10, 12 and 14 ms into the step, it at 40, 42 and 44; each
 * is released 1 ms after it arrives. */
static void test_overlapping_buckets(void **state)
{
    (void)state;
    tl_session s[NR];
    const int late = 1;
    for (int r = 0; r < NR; r++) {
        make(&s[r], r);
        s[r].coll_names = calloc(2, sizeof *s[r].coll_names);
        s[r].insts = calloc(NSTEPS * 3 + 1, sizeof *s[r].insts);
        assert_true(s[r].coll_names != NULL && s[r].insts != NULL);
        s[r].coll_names[s[r].ncoll_names++] = tt_xstrdup("gloo:all_reduce");
        for (int st = 0; st < NSTEPS; st++)
            for (int b = 0; b < 3; b++) {
                double base = STEP_MS * st, mine = base + 10 + 2 * b + (r == late ? 30 : 0);
                double release = base + 40 + 2 * b + 1;
                s[r].insts[s[r].ninsts++] =
                    (tl_scoll){ 0, TL_COLL_RUN, MS(mine), MS(release - mine), -1, 1000 + b, -1, -1, -1 };
            }
    }
    tl_aggregate *a = finish(s, NR);
    const tl_waits *w = &a->waits;
    assert_int_equal(w->matched, NSTEPS * 3);
    assert_int_equal(w->straggler, late);
    /* each other rank waits [10, 40), [12, 42), [14, 44) ms of every step: 34 ms, not 90 */
    for (int r = 0; r < NR; r++)
        assert_true(llabs(w->ranks[r].waited_ns - (r == late ? 0 : NSTEPS * MS(34))) < 10000);
    assert_true(llabs(w->ranks[late].caused_ns - NSTEPS * MS(34)) < 10000);
    assert_true(fabs(w->caused_per_step_ns - 34e6) < 1e4);
    assert_true(fabs(w->step_share_pct - 34.0) < 0.01);
    done(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_rank_with_skewed_clocks),
        cmocka_unit_test(test_by_sequence),
        cmocka_unit_test(test_jitter_only),
        cmocka_unit_test(test_truncated_rank_left_out),
        cmocka_unit_test(test_half_the_time_not_named),
        cmocka_unit_test(test_overlapping_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
