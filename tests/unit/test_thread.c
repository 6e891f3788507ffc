/*
 * test_thread.c - the writer's lock of a recording thread's buffer
 * (lib/thread.c, tl_thread_lock_for_write), linked statically with lib/.
 *
 * A signal may interrupt a thread in the middle of an update, while it holds
 * its buffer's flag; the writer woken by the signal handler must not wait
 * for it forever (the handler waits for the writer, so the program would hang
 * until the handler's timeout and then lose every output). While the outputs
 * are written for a signal, a flag that is not released within
 * TL_SIGNAL_LOCK_WAIT_NS leaves that thread out of the merge, counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "tt_support.h"

static void test_skips_a_held_flag_only_for_signals(void **state)
{
    (void)state;
    tl_thread *t = tl_thread_self();
    assert_non_null(t);
    uint32_t id = tl_intern("interrupted");
    tl_thread_lock(t);
    tl_dur_stat_add(tl_thread_dur_stat(t, TL_SECTION, id), 5, 10);
    tl_thread_unlock(t);

    tl_merged m;
    assert_int_equal(tl_merged_build(&m), 0);
    assert_int_equal(m.stats[TL_SECTION][id].count, 1);
    assert_int_equal(m.threads_skipped, 0);
    tl_merged_release(&m);

    /* The thread holds its flag (interrupted mid-update) during a signal write. */
    tl_thread_lock(t);
    atomic_store(&tl_g.signal_writing, 1);
    double t0 = tt_now_s();
    assert_int_equal(tl_merged_build(&m), 0);
    double waited = tt_now_s() - t0;
    assert_int_equal(m.threads_skipped, 1);
    assert_int_equal(m.stats[TL_SECTION][id].count, 0); /* left out, not half read */
    assert_true(waited >= TL_SIGNAL_LOCK_WAIT_NS / 1e9 * 0.9);
    assert_true(waited < 5.0);
    tl_merged_release(&m);
    assert_int_equal(tl_thread_lock_for_write(t), 0);

    /* Released: taken at once. */
    tl_thread_unlock(t);
    assert_int_equal(tl_thread_lock_for_write(t), 1);
    tl_thread_unlock(t);
    atomic_store(&tl_g.signal_writing, 0);
    assert_int_equal(tl_merged_build(&m), 0);
    assert_int_equal(m.stats[TL_SECTION][id].count, 1);
    assert_int_equal(m.threads_skipped, 0);
    tl_merged_release(&m);
}

/* The name cache's check of the text behind a cached pointer (internal.h,
 * tl_name_is): one buffer reused for names of every length around the 16
 * bytes compared at once, differing in their last byte, at byte 16 and in
 * length; and a name that ends at the end of a page followed by an
 * unreadable one (the fast compare must not read across it). */
static void test_name_cache_checks_the_text(void **state)
{
    (void)state;
    tl_thread *t = tl_thread_self();
    assert_non_null(t);
    char buf[64];
    static const size_t lens[] = { 0, 1, 14, 15, 16, 17, 31, 40 };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        for (int variant = 0; variant < 3; variant++) {
            memset(buf, 0, sizeof buf);
            memset(buf, 'a', lens[i]);
            if (variant == 1 && lens[i] > 0)
                buf[lens[i] - 1] = 'b'; /* the last byte differs */
            if (variant == 2)
                buf[lens[i]] = 'c'; /* one byte longer */
            uint32_t id = tl_thread_lookup_name(t, buf);
            assert_string_equal(tl_name(id), buf);
            assert_int_equal(tl_thread_lookup_name(t, buf), id); /* cached */
        }
    }
    /* 17 bytes, then the same 16 and another 17th */
    snprintf(buf, sizeof buf, "%s", "0123456789abcdefX");
    uint32_t x = tl_thread_lookup_name(t, buf);
    buf[16] = 'Y';
    uint32_t y = tl_thread_lookup_name(t, buf);
    assert_int_not_equal(x, y);
    assert_string_equal(tl_name(y), "0123456789abcdefY");

    long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(map != MAP_FAILED);
    assert_int_equal(mprotect(map + page, (size_t)page, PROT_NONE), 0);
    for (int n = 1; n <= 20; n++) {
        char *name = map + page - n; /* its NUL is the page's last byte */
        memset(name, 'p', (size_t)n - 1);
        name[n - 1] = '\0';
        uint32_t id = tl_thread_lookup_name(t, name);
        assert_string_equal(tl_name(id), name);
        assert_int_equal(tl_thread_lookup_name(t, name), id);
        if (n > 1) {
            name[0] = 'q';
            assert_string_equal(tl_name(tl_thread_lookup_name(t, name)), name);
        }
    }
    munmap(map, (size_t)page * 2);
}

/* Sections that end go to the trace's chunks, or to the ring when the trace
 * does not keep them; the statistics count both in the order they ended
 * (the kept samples are the first ones, in order), whoever folds: the owner
 * when the ring is full, or a merge. */
static void test_fold_counts_in_order(void **state)
{
    (void)state;
    tl_thread *t = tl_thread_self();
    assert_non_null(t);
    uint32_t id = tl_intern("folded");
    long saved_samples = tl_g.max_samples;
    tl_g.max_samples = 100000;
    const uint64_t n_trace = 3000, n_ring = 5 * TL_PENDING_CAP + 7, n_again = 300;
    uint64_t v = 1;
    /* the trace keeps the first n_trace (a budget of exactly that) */
    atomic_store(&tl_g.events_budget, (long)n_trace);
    for (uint64_t i = 0; i < n_trace; i++, v++)
        assert_int_equal(tl_thread_push(t, TL_EV_SECTION, id, 1000 + v, v), 1);
    /* then the budget is spent: into the ring, which wraps five times */
    for (uint64_t i = 0; i < n_ring; i++, v++) {
        uint64_t dropped = t->dropped;
        int kept = tl_thread_push(t, TL_EV_SECTION, id, 1000 + v, v);
        if (!kept) {
            assert_int_equal(t->dropped, dropped + 1);
            tl_thread_pend(t, id, v);
        }
    }
    /* budget again: what the ring holds is counted before the new chunk */
    atomic_store(&tl_g.events_budget, (long)n_again);
    for (uint64_t i = 0; i < n_again; i++, v++)
        if (!tl_thread_push(t, TL_EV_SECTION, id, 1000 + v, v))
            tl_thread_pend(t, id, v);

    tl_merged m;
    assert_int_equal(tl_merged_build(&m), 0);
    const tl_dur_stat *s = &m.stats[TL_SECTION][id];
    uint64_t n = v - 1;
    assert_int_equal(s->count, n);
    assert_int_equal(s->total, n * (n + 1) / 2);
    assert_int_equal(s->min, 1);
    assert_int_equal(s->max, n);
    assert_int_equal(s->nsamples, n);
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(s->samples[i], i + 1);
    assert_int_equal(m.events, n_trace + n_again);
    assert_int_equal(m.dropped, n_ring);
    tl_merged_release(&m);
    /* folded once: a second merge counts nothing twice */
    assert_int_equal(tl_merged_build(&m), 0);
    assert_int_equal(m.stats[TL_SECTION][id].count, n);
    tl_merged_release(&m);
    tl_g.max_samples = saved_samples;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skips_a_held_flag_only_for_signals),
        cmocka_unit_test(test_name_cache_checks_the_text),
        cmocka_unit_test(test_fold_counts_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
