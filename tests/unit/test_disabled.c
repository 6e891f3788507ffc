/*
 * test_disabled.c - every API macro with TALLY_DISABLE defined.
 *
 * This file is compiled with -DTALLY_DISABLE and linked without libtally:
 * that it builds at all is the first test. Then: the calls that return a
 * value return 0, the arguments are not even evaluated (the calls compile to
 * nothing), no libtally symbol is present in the process, and no file is
 * written.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "tally/tally.h"

#ifndef TALLY_DISABLE
#error "test_disabled.c must be compiled with -DTALLY_DISABLE"
#endif

/* Referenced only inside the macros' arguments, which the preprocessor drops. */
#define ONLY_IN_MACROS __attribute__((unused))

static int evaluated;
ONLY_IN_MACROS static const char *name_of(const char *s)
{
    evaluated++;
    return s;
}

ONLY_IN_MACROS static void provider(tally_provider_sink *sink, void *user)
{
    (void)user;
    tally_provider_put(sink, name_of("allocated"), 1.0);
}

static int scoped(int x)
{
    TALLY_SCOPE(name_of("scope"));
    return x * 2;
}

static void test_every_macro(void **state)
{
    (void)state;
    tally_config cfg; /* the type stays available for code that fills it */
    cfg.enable = 0;
    (void)cfg;
    assert_int_equal(tally_init(NULL), 0);
    assert_int_equal(tally_enabled(), 0);
    tally_begin(name_of("a"));
    tally_end();
    {
        TALLY_SCOPE(name_of("b"));
        TALLY_SCOPE(name_of("c")); /* two in one scope */
    }
    assert_int_equal(scoped(21), 42);
    tally_iteration_begin(name_of("step"));
    tally_iteration_end(name_of("step"));
    tally_counter(name_of("tokens"), (double)evaluated++);
    tally_event(name_of("ev"), name_of("{}"));
    tally_memory_snapshot(name_of("snap"));
    assert_int_equal(tally_register_memory_provider(name_of("p"), provider, NULL), 0);
    tally_provider_put(NULL, name_of("k"), 1.0);
    tally_set_rank(evaluated++, evaluated++);
    assert_int_equal(tally_tag(name_of("k"), name_of("v")), 0);
    tally_step();
    tally_block_begin((double)evaluated++);
    tally_block_end();
    tally_begin_args(name_of("s"), name_of("{}"));
    tally_section_args(name_of("{}"));
    assert_int_equal(tally_counter_rate(name_of("r"), name_of("h"), name_of("m")), 0);
    assert_true(tally_now() == 0);
    tally_range(name_of("r"), (uint64_t)evaluated++, (uint64_t)evaluated++);
    tally_reading cur = { 0 };
    assert_int_equal(tally_current(&cur), TALLY_ESTATE);
    (void)cur;
    tally_stats st = { 0 };
    assert_int_equal(tally_stats_get(name_of("a"), &st), TALLY_ESTATE);
    assert_int_equal(st.count, 0);
    assert_int_equal(tally_flush(), 0);
    assert_int_equal(tally_shutdown(), 0);
    assert_int_equal(evaluated, 0); /* nothing was evaluated: zero cost */
}

static void test_no_library(void **state)
{
    (void)state;
    /* Not linked: none of libtally's symbols is in the process. */
    assert_null(dlsym(RTLD_DEFAULT, "tally_begin"));
    assert_null(dlsym(RTLD_DEFAULT, "tally_init"));
    assert_null(dlsym(RTLD_DEFAULT, "tally_shutdown"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_macro),
        cmocka_unit_test(test_no_library),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
