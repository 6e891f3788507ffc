/*
 * Tests of ingest/nesting: self and inclusive time do not depend on the order in which events
 * arrive, within the reorder window, whichever form the reorder buffer takes (a sorted ring for
 * events nearly in order, a heap once one arrives far out of order).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "nesting.h"

#define NAMES 7
#define EVENTS 3000

struct ev {
    int64_t ts, dur, tid;
    uint32_t stat;
};

/* Nested call trees on two threads: each tree a root with children and grandchildren. */
static size_t make_events(struct ev *v, unsigned seed)
{
    size_t n = 0;
    int64_t t[2] = { 0, 50 };

    srand(seed);
    while (n + 8 <= EVENTS) {
        int th = rand() % 2;
        int64_t root = t[th], at = root + 1;
        size_t r = n++;
        int kids = 1 + rand() % 3;
        v[r] = (struct ev){ root, 0, th, (uint32_t)(rand() % NAMES) };
        for (int k = 0; k < kids; k++) {
            int64_t d = 2 + rand() % 10;
            v[n++] = (struct ev){ at, d, th, (uint32_t)(rand() % NAMES) };
            if (rand() % 2)
                v[n++] = (struct ev){ at + 1 + rand() % (d / 2 + 1) / 2, 1, th, (uint32_t)(rand() % NAMES) };
            at += d + rand() % 3;
        }
        v[r].dur = at + 1 - root;
        t[th] = at + 2 + rand() % 4;
    }
    /* No two events of the two threads start at the same time (the times are made
	 * distinct per thread, as real threads' are). */
    for (size_t i = 0; i < n; i++) {
        v[i].ts = 2 * v[i].ts + v[i].tid;
        v[i].dur *= 2;
    }
    return n;
}

static int by_start(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->dur > y->dur ? -1 : x->dur < y->dur;
}

struct result {
    int64_t self[NAMES], incl[NAMES];
    int nesting;
    int was_heap;
};

static void run(const struct ev *v, size_t n, struct result *r)
{
    tl_profile p;
    tl_nest nest;

    tl_profile_init(&p, "test");
    for (int i = 0; i < NAMES; i++) {
        char name[8] = { 'n', (char)('0' + i), 0 };
        assert_non_null(tl_profile_stat(&p, "cpu_op", 6, name, 2));
    }
    tl_nest_init(&nest, &p);
    for (size_t i = 0; i < n; i++)
        tl_nest_add(&nest, 1, v[i].tid, 1, v[i].ts, v[i].dur, v[i].stat);
    r->was_heap = nest.is_heap;
    tl_nest_finish(&nest);
    tl_nest_release(&nest);
    for (int i = 0; i < NAMES; i++) {
        r->self[i] = p.stats[i].self_ns;
        r->incl[i] = p.stats[i].incl_ns;
    }
    r->nesting = p.nesting;
    tl_profile_release(&p);
}

static void test_order_does_not_matter(void **state)
{
    static struct ev sorted[EVENTS], v[EVENTS];
    (void)state;

    for (unsigned seed = 1; seed <= 20; seed++) {
        size_t n = make_events(sorted, seed);
        struct result want, got;
        qsort(sorted, n, sizeof *sorted, by_start);
        run(sorted, n, &want);
        assert_int_equal(want.nesting, TL_NEST_DONE);
        assert_false(want.was_heap);
        for (int mode = 0; mode < 5; mode++) {
            memcpy(v, sorted, n * sizeof *v);
            if (mode == 0) { /* end order, as B/E pairs and libtally write them: a parent after its children */
                for (size_t i = 0; i + 1 < n; i++)
                    for (size_t j = i + 1; j < n && j < i + 12; j++)
                        if (v[j].ts >= v[i].ts && v[j].ts + v[j].dur <= v[i].ts + v[i].dur) {
                            struct ev x = v[i];
                            memmove(v + i, v + i + 1, (j - i) * sizeof *v);
                            v[j] = x;
                            break;
                        }
            } else if (mode == 4) { /* a few events written long after their time, as Kineto
			                          * writes a step's GPU annotation: still the ring */
                for (size_t i = 100; i + 301 < n; i += 500) {
                    struct ev x = v[i];
                    memmove(v + i, v + i + 1, 300 * sizeof *v);
                    v[i + 300] = x;
                }
            } else { /* swaps within a distance: small (the ring) or large, everywhere (a heap) */
                size_t dist = mode == 1 ? 3 : mode == 2 ? 200 : 5000;
                for (size_t i = 0; i < n; i++) {
                    size_t j = i + (size_t)rand() % dist;
                    if (j < n) {
                        struct ev x = v[i];
                        v[i] = v[j];
                        v[j] = x;
                    }
                }
            }
            run(v, n, &got);
            assert_int_equal(got.nesting, TL_NEST_DONE);
            assert_memory_equal(got.self, want.self, sizeof want.self);
            assert_memory_equal(got.incl, want.incl, sizeof want.incl);
            if (mode == 2 || mode == 3)
                assert_true(got.was_heap);
            else
                assert_false(got.was_heap);
        }
    }
}

/* Inclusive time counts a name nested in itself once, on its own thread: the
 * same name open on the other thread is another call. Reference: each thread's
 * events by start (longer first), a stack, an event counts when no frame of
 * its name is on its thread's stack. */
static void reference_incl(const struct ev *sorted, size_t n, int64_t *incl)
{
    memset(incl, 0, NAMES * sizeof *incl);
    for (int th = 0; th < 2; th++) {
        const struct ev *stack[EVENTS];
        size_t depth = 0;
        for (size_t i = 0; i < n; i++) {
            const struct ev *e = &sorted[i];
            if (e->tid != th)
                continue;
            while (depth > 0 && stack[depth - 1]->ts + stack[depth - 1]->dur <= e->ts)
                depth--;
            int outer = 1;
            for (size_t k = 0; k < depth; k++)
                outer &= stack[k]->stat != e->stat;
            if (outer)
                incl[e->stat] += e->dur;
            stack[depth++] = e;
        }
    }
}

static void test_inclusive_per_thread(void **state)
{
    static struct ev sorted[EVENTS];
    (void)state;
    for (unsigned seed = 1; seed <= 20; seed++) {
        size_t n = make_events(sorted, seed);
        qsort(sorted, n, sizeof *sorted, by_start);
        int64_t want[NAMES];
        reference_incl(sorted, n, want);
        struct result got;
        run(sorted, n, &got);
        assert_memory_equal(got.incl, want, sizeof want);
    }
    /* the review's case: A on thread 0 for 10, later A on thread 1 for 5
	 * (thread 0's frame still on its stack, no later event there): 15 */
    struct ev two[2] = { { 0, 10, 0, 3 }, { 50, 5, 1, 3 } };
    struct result got;
    run(two, 2, &got);
    assert_int_equal(got.incl[3], 15);
    assert_int_equal(got.self[3], 15);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_does_not_matter),
        cmocka_unit_test(test_inclusive_per_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
