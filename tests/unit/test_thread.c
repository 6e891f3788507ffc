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

#include <time.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skips_a_held_flag_only_for_signals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
