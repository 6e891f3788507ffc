/*
 * test_intervals.c - the interval algebra behind the GPU breakdowns
 * (tools/analyze/intervals.c).
 *
 * Unions of overlapping, touching, nested, unsorted, empty and zero-length
 * intervals; lengths; the intersection of two unions; the kind sweep on cases
 * computed by hand. Then a randomized check with a fixed seed: on small
 * ranges every result is compared with a brute-force grid of one cell per ns.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "intervals.h"
#include "tt_support.h"

static tl_ivset make(const int64_t (*v)[2], size_t n)
{
    tl_ivset s;
    tl_ivset_init(&s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(tl_ivset_add(&s, v[i][0], v[i][1]), 0);
    return s;
}

/* The union must be exactly these intervals, in this order. */
static void assert_union(tl_ivset *s, const int64_t (*want)[2], size_t n)
{
    assert_int_equal(s->n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s->v[i].start, want[i][0]);
        assert_int_equal(s->v[i].end, want[i][1]);
    }
}

static void test_union_overlapping(void **state)
{
    (void)state;
    static const int64_t in[][2] = { { 0, 10 }, { 5, 15 }, { 12, 20 }, { 30, 40 } };
    static const int64_t want[][2] = { { 0, 20 }, { 30, 40 } };
    tl_ivset s = make(in, 4);
    tl_ivset_union(&s);
    assert_union(&s, want, 2);
    assert_int_equal(tl_ivset_length(&s), 30);
    tl_ivset_release(&s);
}

static void test_union_touching(void **state)
{
    (void)state;
    /* [a,b) and [b,c) merge into one interval */
    static const int64_t in[][2] = { { 0, 10 }, { 10, 20 }, { 20, 25 }, { 26, 30 } };
    static const int64_t want[][2] = { { 0, 25 }, { 26, 30 } };
    tl_ivset s = make(in, 4);
    tl_ivset_union(&s);
    assert_union(&s, want, 2);
    assert_int_equal(tl_ivset_length(&s), 29);
    tl_ivset_release(&s);
}

static void test_union_nested(void **state)
{
    (void)state;
    /* inner intervals, including one that ends exactly where the outer ends */
    static const int64_t in[][2] = { { 0, 100 }, { 10, 20 }, { 30, 100 }, { 50, 60 }, { 0, 5 } };
    static const int64_t want[][2] = { { 0, 100 } };
    tl_ivset s = make(in, 5);
    tl_ivset_union(&s);
    assert_union(&s, want, 1);
    assert_int_equal(tl_ivset_length(&s), 100);
    tl_ivset_release(&s);
}

static void test_union_unsorted(void **state)
{
    (void)state;
    static const int64_t in[][2] = { { 90, 95 }, { 40, 50 }, { -20, -10 }, { 45, 60 }, { 0, 1 }, { -15, -5 } };
    static const int64_t want[][2] = { { -20, -5 }, { 0, 1 }, { 40, 60 }, { 90, 95 } };
    tl_ivset s = make(in, 6);
    tl_ivset_union(&s);
    assert_union(&s, want, 4);
    assert_int_equal(tl_ivset_length(&s), 15 + 1 + 20 + 5);
    tl_ivset_release(&s);
}

static void test_union_empty_and_single(void **state)
{
    (void)state;
    tl_ivset s;
    tl_ivset_init(&s);
    tl_ivset_union(&s);
    assert_int_equal(s.n, 0);
    assert_int_equal(tl_ivset_length(&s), 0);
    assert_int_equal(tl_ivset_add(&s, 7, 9), 0);
    tl_ivset_union(&s);
    assert_int_equal(s.n, 1);
    assert_int_equal(tl_ivset_length(&s), 2);
    tl_ivset_release(&s);
    assert_null(s.v);
    assert_int_equal(s.n, 0);
}

static void test_union_zero_length(void **state)
{
    (void)state;
    /* zero-length intervals add nothing; one inside another disappears; an
     * end before the start is clamped to zero length */
    static const int64_t in[][2] = { { 5, 5 }, { 0, 10 }, { 3, 3 }, { 20, 20 }, { 40, 30 } };
    tl_ivset s = make(in, 5);
    assert_int_equal(s.v[4].start, 40);
    assert_int_equal(s.v[4].end, 40);
    tl_ivset_union(&s);
    assert_int_equal(tl_ivset_length(&s), 10);
    assert_int_equal(s.v[0].start, 0);
    assert_int_equal(s.v[0].end, 10);
    for (size_t i = 1; i < s.n; i++)
        assert_int_equal(s.v[i].end - s.v[i].start, 0);
    tl_ivset_release(&s);

    /* only zero-length intervals: length 0 */
    static const int64_t z[][2] = { { 1, 1 }, { 1, 1 }, { 2, 2 } };
    s = make(z, 3);
    tl_ivset_union(&s);
    assert_int_equal(tl_ivset_length(&s), 0);
    tl_ivset_release(&s);
}

static void test_union_many_grows(void **state)
{
    (void)state;
    /* more than the initial capacity (256): disjoint unit intervals every 2 ns */
    tl_ivset s;
    tl_ivset_init(&s);
    for (int64_t i = 999; i >= 0; i--)
        assert_int_equal(tl_ivset_add(&s, 2 * i, 2 * i + 1), 0);
    tl_ivset_union(&s);
    assert_int_equal(s.n, 1000);
    assert_int_equal(tl_ivset_length(&s), 1000);
    for (size_t i = 0; i < s.n; i++)
        assert_int_equal(s.v[i].start, (int64_t)(2 * i));
    tl_ivset_release(&s);
}

static void test_intersection(void **state)
{
    (void)state;
    static const int64_t a_in[][2] = { { 0, 10 }, { 20, 30 }, { 40, 50 } };
    static const int64_t b_in[][2] = { { 5, 25 }, { 28, 45 }, { 50, 60 } };
    tl_ivset a = make(a_in, 3), b = make(b_in, 3);
    tl_ivset_union(&a);
    tl_ivset_union(&b);
    /* [5,10) 5 + [20,25) 5 + [28,30) 2 + [40,45) 5; [50,60) only touches */
    assert_int_equal(tl_ivset_intersection(&a, &b), 17);
    assert_int_equal(tl_ivset_intersection(&b, &a), 17);
    assert_int_equal(tl_ivset_intersection(&a, &a), tl_ivset_length(&a));

    tl_ivset empty;
    tl_ivset_init(&empty);
    assert_int_equal(tl_ivset_intersection(&a, &empty), 0);
    assert_int_equal(tl_ivset_intersection(&empty, &b), 0);

    /* one long interval against many short ones */
    static const int64_t c_in[][2] = { { -100, 1000 } };
    tl_ivset c = make(c_in, 1);
    assert_int_equal(tl_ivset_intersection(&c, &b), tl_ivset_length(&b));
    assert_int_equal(tl_ivset_intersection(&b, &c), 20 + 17 + 10);
    tl_ivset_release(&a);
    tl_ivset_release(&b);
    tl_ivset_release(&c);
}

static void test_sweep_by_hand(void **state)
{
    (void)state;
    /* kind 0 compute, 1 communication, 2 memory (bits 1, 2, 4):
     *   compute [0,100) and [150,200)
     *   comm    [50,160)
     *   memory  [90,95) and [155,170)
     * [0,50) c 50 | [50,90) c+m 40 | [90,95) c+m+mem 5 | [95,100) c+m 5 |
     * [100,150) comm 50 | [150,155) c+comm 5 | [155,160) all 5 |
     * [160,170) c+mem 10 | [170,200) c 30 */
    const tl_kinded v[] = {
        { 0, 100, 0 }, { 150, 200, 0 }, { 50, 160, 1 }, { 90, 95, 2 }, { 155, 170, 2 },
    };
    int64_t out[8];
    assert_int_equal(tl_sweep_kinds(v, 5, out), 0);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 50 + 30);    /* compute only */
    assert_int_equal(out[2], 50);         /* communication only */
    assert_int_equal(out[3], 40 + 5 + 5); /* compute + communication */
    assert_int_equal(out[4], 0);          /* memory only */
    assert_int_equal(out[5], 10);         /* compute + memory */
    assert_int_equal(out[6], 0);          /* communication + memory */
    assert_int_equal(out[7], 5 + 5);      /* all three */
}

static void test_sweep_same_kind_overlap_and_gaps(void **state)
{
    (void)state;
    /* overlapping intervals of one kind count once; gaps count nowhere; an
     * interval that ends where the next starts leaves no gap and no double
     * count; zero-length, reversed and out-of-range-kind intervals are ignored */
    const tl_kinded v[] = {
        { 0, 10, 1 }, { 5, 20, 1 }, { 20, 30, 1 }, { 100, 110, 2 }, { 105, 105, 0 }, { 50, 40, 0 }, { 0, 5, 7 },
    };
    int64_t out[8];
    memset(out, 0x55, sizeof out);
    assert_int_equal(tl_sweep_kinds(v, 7, out), 0);
    assert_int_equal(out[0], 0);
    assert_int_equal(out[1], 0); /* zero-length and reversed compute intervals are ignored */
    assert_int_equal(out[2], 30);
    assert_int_equal(out[4], 10);
    assert_int_equal(out[3] + out[5] + out[6] + out[7], 0);
    /* no intervals: every mask is zeroed */
    memset(out, 0x55, sizeof out);
    assert_int_equal(tl_sweep_kinds(v, 0, out), 0);
    for (int m = 0; m < 8; m++)
        assert_int_equal(out[m], 0);
}

/* ---- randomized, against a per-ns grid -------------------------------------- */

static uint64_t rng_state;
static uint64_t rng(void)
{
    return tt_splitmix64(&rng_state);
}

#define GRID 200

static void test_random_against_grid(void **state)
{
    (void)state;
    rng_state = 20240611;
    for (int round = 0; round < 2000; round++) {
        size_t na = rng() % 12, nb = rng() % 12;
        tl_ivset a, b;
        tl_ivset_init(&a);
        tl_ivset_init(&b);
        tl_kinded kv[24];
        uint8_t ga[GRID] = { 0 }, gb[GRID] = { 0 }, gk[GRID] = { 0 };
        size_t nk = 0;
        for (size_t i = 0; i < na + nb; i++) {
            int64_t s = (int64_t)(rng() % GRID);
            int64_t len = (int64_t)(rng() % 8 == 0 ? 0 : rng() % 40); /* some zero-length */
            int64_t e = s + len > GRID ? GRID : s + len;
            int kind = (int)(rng() % 3);
            tl_ivset *set = i < na ? &a : &b;
            uint8_t *grid = i < na ? ga : gb;
            assert_int_equal(tl_ivset_add(set, s, e), 0);
            kv[nk++] = (tl_kinded){ s, e, kind };
            for (int64_t t = s; t < e; t++) {
                grid[t] = 1;
                gk[t] |= (uint8_t)(1u << kind);
            }
        }
        tl_ivset_union(&a);
        tl_ivset_union(&b);
        int64_t la = 0, lb = 0, lab = 0, masks[8] = { 0 };
        for (int t = 0; t < GRID; t++) {
            la += ga[t];
            lb += gb[t];
            lab += ga[t] && gb[t];
            masks[gk[t]]++;
        }
        assert_int_equal(tl_ivset_length(&a), la);
        assert_int_equal(tl_ivset_length(&b), lb);
        assert_int_equal(tl_ivset_intersection(&a, &b), lab);
        assert_int_equal(tl_ivset_intersection(&b, &a), lab);
        /* disjoint, ordered, and not touching: a gap between consecutive intervals */
        for (size_t i = 0; i + 1 < a.n; i++)
            assert_true(a.v[i].end < a.v[i + 1].start);
        /* every covered ns is inside exactly one interval of the union */
        for (int t = 0; t < GRID; t++) {
            int in = 0;
            for (size_t i = 0; i < a.n; i++)
                in += t >= a.v[i].start && t < a.v[i].end;
            assert_int_equal(in, ga[t]);
        }
        int64_t out[8];
        assert_int_equal(tl_sweep_kinds(kv, nk, out), 0);
        assert_int_equal(out[0], 0);
        for (int m = 1; m < 8; m++)
            assert_int_equal(out[m], masks[m]);
        /* the same intervals in start order take the one-pass sweep (no sort):
         * the same times; and the union of sorted input skips its sort alike */
        for (size_t i = 1; i < nk; i++)
            for (size_t j = i; j > 0 && kv[j].start < kv[j - 1].start; j--) {
                tl_kinded t = kv[j];
                kv[j] = kv[j - 1];
                kv[j - 1] = t;
            }
        memset(out, 0x55, sizeof out);
        assert_int_equal(tl_sweep_kinds(kv, nk, out), 0);
        assert_int_equal(out[0], 0);
        for (int m = 1; m < 8; m++)
            assert_int_equal(out[m], masks[m]);
        tl_ivset sorted;
        tl_ivset_init(&sorted);
        for (size_t i = 0; i < nk; i++)
            assert_int_equal(tl_ivset_add(&sorted, kv[i].start, kv[i].end), 0);
        tl_ivset_union(&sorted);
        int64_t lall = 0;
        for (int t = 0; t < GRID; t++)
            lall += gk[t] != 0;
        assert_int_equal(tl_ivset_length(&sorted), lall);
        tl_ivset_release(&sorted);
        tl_ivset_release(&a);
        tl_ivset_release(&b);
    }
}

/* The streaming forms (issue 33: the analysis reads the sorted GPU events in
 * place) give what the sets give, on intervals in start order with
 * overlapping, touching, nested and zero-length ones: tl_ivrun's length and
 * gaps are tl_ivset_union's (the gaps between its components), |A n B| is
 * |A| + |B| - |A u B|, and tl_kindsweep is tl_sweep_kinds. */
static void test_streaming_against_sets(void **state)
{
    (void)state;
    rng_state = 20261128;
    for (int round = 0; round < 2000; round++) {
        size_t n = rng() % 24;
        tl_kinded kv[24];
        for (size_t i = 0; i < n; i++) {
            int64_t s = (int64_t)(rng() % GRID);
            int64_t len = (int64_t)(rng() % 6 == 0 ? 0 : rng() % 40);
            kv[i] = (tl_kinded){ s, s + len, (int)(rng() % 4) - (rng() % 9 == 0) }; /* kinds -1..3: some invalid */
        }
        for (size_t i = 1; i < n; i++) /* start order, ties in any order */
            for (size_t j = i; j > 0 && kv[j].start < kv[j - 1].start; j--) {
                tl_kinded t = kv[j];
                kv[j] = kv[j - 1];
                kv[j - 1] = t;
            }
        tl_ivset all, a, b, ab;
        tl_ivset_init(&all);
        tl_ivset_init(&a);
        tl_ivset_init(&b);
        tl_ivset_init(&ab);
        tl_ivrun rall, ra, rb, rab;
        tl_ivrun_init(&rall);
        tl_ivrun_init(&ra);
        tl_ivrun_init(&rb);
        tl_ivrun_init(&rab);
        tl_kindsweep ks;
        tl_kindsweep_init(&ks);
        int64_t gaps[24][2], from;
        size_t ngaps = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t s = kv[i].start, e = kv[i].end;
            assert_int_equal(tl_ivset_add(&all, s, e), 0);
            if (tl_ivrun_add(&rall, s, e, &from)) {
                gaps[ngaps][0] = from;
                gaps[ngaps++][1] = s;
            }
            if (kv[i].kind == 0 || kv[i].kind == 1) {
                tl_ivset *set = kv[i].kind == 0 ? &a : &b;
                assert_int_equal(tl_ivset_add(set, s, e), 0);
                assert_int_equal(tl_ivset_add(&ab, s, e), 0);
                (void)tl_ivrun_add(kv[i].kind == 0 ? &ra : &rb, s, e, &from);
                (void)tl_ivrun_add(&rab, s, e, &from);
            }
            tl_kindsweep_add(&ks, s, e, kv[i].kind);
        }
        tl_ivset_union(&all);
        tl_ivset_union(&a);
        tl_ivset_union(&b);
        tl_ivset_union(&ab);
        assert_int_equal(tl_ivrun_length(&rall), tl_ivset_length(&all));
        assert_int_equal(tl_ivrun_length(&ra), tl_ivset_length(&a));
        assert_int_equal(tl_ivrun_length(&rb), tl_ivset_length(&b));
        assert_int_equal(tl_ivrun_length(&ra) + tl_ivrun_length(&rb) - tl_ivrun_length(&rab),
                         tl_ivset_intersection(&a, &b));
        assert_int_equal(ngaps + (all.n > 0), all.n); /* a gap between each two components */
        for (size_t i = 0; i < ngaps; i++) {
            assert_int_equal(gaps[i][0], all.v[i].end);
            assert_int_equal(gaps[i][1], all.v[i + 1].start);
        }
        int64_t want[8], got[8];
        assert_int_equal(tl_sweep_kinds(kv, n, want), 0);
        tl_kindsweep_finish(&ks, got);
        for (int m = 0; m < 8; m++)
            assert_int_equal(got[m], want[m]);
        tl_ivset_release(&all);
        tl_ivset_release(&a);
        tl_ivset_release(&b);
        tl_ivset_release(&ab);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union_overlapping),      cmocka_unit_test(test_union_touching),
        cmocka_unit_test(test_union_nested),           cmocka_unit_test(test_union_unsorted),
        cmocka_unit_test(test_union_empty_and_single), cmocka_unit_test(test_union_zero_length),
        cmocka_unit_test(test_union_many_grows),       cmocka_unit_test(test_intersection),
        cmocka_unit_test(test_sweep_by_hand),          cmocka_unit_test(test_sweep_same_kind_overlap_and_gaps),
        cmocka_unit_test(test_random_against_grid),    cmocka_unit_test(test_streaming_against_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
