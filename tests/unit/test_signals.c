/*
 * test_signals.c - a program stopped by SIGINT, SIGTERM or SIGHUP keeps its
 * profile (lib/signals.c), issue 10 item 4.
 *
 * Each scenario records, then is signalled by a thread of its own while the
 * main thread waits in pause(), as Ctrl-C, torchrun or Slurm would stop it.
 * Without a handler of the program's, the process must die of that very
 * signal (the exit status a launcher sees is unchanged) and leave a complete
 * report and trace (check_outputs.py compares them). With a handler of the
 * program's installed before libtally started, that handler runs after the
 * outputs were flushed, and the program goes on. SIGHUP ignored (nohup) stays
 * ignored, and TALLY_SIGNALS=0 leaves every signal alone.
 */
#include "collector_test_util.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tally/tally.h"

#define NRECORDED 100

static void record(void)
{
    for (int i = 0; i < NRECORDED; i++) {
        tally_begin("before_signal");
        tally_end();
    }
    tally_iteration_begin("step");
    tally_iteration_end("step");
    tally_counter("tokens", 512);
}

static void *killer(void *arg)
{
    int sig = *(const int *)arg;
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
    kill(getpid(), sig);
    return NULL;
}

/* Record, then have a thread send the signal while main waits. */
static int body_killed(void *arg)
{
    static int sig;
    sig = *(const int *)arg;
    pthread_t th;
    record();
    TT_REQUIRE(pthread_create(&th, NULL, killer, &sig) == 0);
    for (;;)
        pause();
    return 0;
}

static void expect_outputs(tt_scenario *s)
{
    json_t *r = tt_load_json(tt_report(s, "t-rank0"));
    json_t *e = tt_find(json_object_get(r, "sections"), "name", "before_signal");
    assert_non_null(e);
    assert_int_equal(tt_int(e, "count"), NRECORDED);
    assert_int_equal(tt_int(tt_find(json_object_get(r, "iterations"), "name", "step"), "count"), 1);
    assert_true(json_is_true(json_object_get(json_object_get(r, "config"), "signals")));
    json_decref(r);
    assert_true(tt_exists(tt_trace(s, "t-rank0")));
    assert_int_equal(tt_count_files(s->dir, ".tmp"), 0);
    const char *args[] = { s->dir, NULL };
    json_t *sum = tt_check(args); /* the trace is complete and matches the report */
    json_t *x = json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "x");
    assert_int_equal(tt_int(json_object_get(x, "section/before_signal"), "count"), NRECORDED);
    json_decref(sum);
}

static void test_default_disposition(void **state)
{
    (void)state;
    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        tt_scenario s;
        int sig = sigs[i];
        tt_begin(&s);
        int status = tt_run(&s, NULL, body_killed, &sig);
        if (status != 128 + sig)
            fail_msg("signal %d: exit status %d, expected %d (killed by the signal)\n%s", sig, status, 128 + sig,
                     s.err);
        assert_string_equal(s.err, "");
        expect_outputs(&s);
        tt_end(&s);
    }
}

static void test_signals_off(void **state)
{
    (void)state;
    tt_scenario s;
    int sig = SIGTERM;
    const char *env[] = { "TALLY_SIGNALS=0", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_killed, &sig), 128 + SIGTERM);
    assert_int_equal(tt_count_files(s.dir, ""), 0); /* as before: atexit never ran */
    tt_end(&s);
}

/* The program's own handler, installed before libtally starts: it is called
 * (chained) after the outputs were flushed, and the program decides. */
static volatile sig_atomic_t host_saw;
static void host_handler(int sig)
{
    host_saw = sig;
}

static int body_host_handler(void *arg)
{
    tt_scenario *s = arg;
    static int sig = SIGTERM;
    pthread_t th;
    TT_REQUIRE(signal(SIGTERM, host_handler) != SIG_ERR);
    record();
    TT_REQUIRE(pthread_create(&th, NULL, killer, &sig) == 0);
    while (!host_saw)
        pause();
    pthread_join(th, NULL);
    /* Flushed before the program's handler ran: the files exist now. */
    TT_REQUIRE(tt_output(s, "t-rank0", getpid(), ".report.json") != NULL);
    printf("host handler saw %d\n", (int)host_saw);
    tally_begin("after_signal"); /* recording goes on */
    tally_end();
    return 3;
}

static void test_host_handler_chained(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_host_handler, &s), 3);
    assert_string_equal(s.out, "host handler saw 15\n");
    assert_string_equal(s.err, "");
    expect_outputs(&s);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "after_signal"), "count"), 1);
    json_decref(r);
    tt_end(&s);
}

/* SIGHUP ignored before libtally starts (nohup) stays ignored. */
static int body_nohup(void *arg)
{
    (void)arg;
    TT_REQUIRE(signal(SIGHUP, SIG_IGN) != SIG_ERR);
    record();
    raise(SIGHUP);
    struct sigaction now;
    TT_REQUIRE(sigaction(SIGHUP, NULL, &now) == 0);
    TT_REQUIRE(!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN);
    return 0;
}

static void test_ignored_stays_ignored(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_nohup, NULL), 0);
    expect_outputs(&s); /* written at the normal exit */
    tt_end(&s);
}

/* ---- issue 26 item 3: a signal while tally_shutdown() writes ------------ */

#define NBIG 500000 /* the exit-time write of the trace takes a while */

/* Send SIGTERM as soon as the exit-time shutdown has begun (the library no
 * longer records: tally_enabled() turns 0), i.e. in the middle of its write. */
static void *killer_at_shutdown(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 50 * 1000 };
    while (tally_enabled())
        nanosleep(&ts, NULL);
    kill(getpid(), SIGTERM);
    return NULL;
}

static int body_big_then_exit(void *arg)
{
    (void)arg;
    pthread_t th;
    record();
    for (int i = 0; i < NBIG; i++) {
        tally_begin("big");
        tally_end();
    }
    TT_REQUIRE(pthread_create(&th, NULL, killer_at_shutdown, NULL) == 0);
    pthread_detach(th); /* not joined: the program may end before it does */
    return 0;           /* exit(): the atexit handler writes, and the killer strikes */
}

/* The profile is complete and the process still dies of the SIGTERM (the
 * status a launcher sees). On the old code the handler saw "not recording",
 * re-raised at once and the process died with nothing written. */
static void test_sigterm_during_shutdown(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_MAX_SAMPLES=10", NULL };
    tt_begin(&s);
    int status = tt_run(&s, env, body_big_then_exit, NULL);
    if (status != 128 + SIGTERM)
        fail_msg("exit status %d, expected %d (killed by SIGTERM after the write)\n%s", status, 128 + SIGTERM, s.err);
    assert_string_equal(s.err, "");
    expect_outputs(&s);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "big"), "count"), NBIG);
    json_decref(r);
    tt_end(&s);
}

/* Two signals in a row during that write (SIGTERM, then Ctrl-C): the second
 * is not held, and the process ends at once, before the write is done. */
static void *killer_twice_at_shutdown(void *arg)
{
    (void)arg;
    struct timespec ts = { 0, 50 * 1000 };
    while (tally_enabled())
        nanosleep(&ts, NULL);
    kill(getpid(), SIGTERM); /* two signals of one kind could merge while pending */
    ts.tv_nsec = 1000 * 1000;
    nanosleep(&ts, NULL);
    kill(getpid(), SIGINT);
    return NULL;
}

static int body_big_then_exit_twice(void *arg)
{
    (void)arg;
    pthread_t th;
    record();
    for (int i = 0; i < 2 * NBIG; i++) {
        tally_begin("big");
        tally_end();
    }
    TT_REQUIRE(pthread_create(&th, NULL, killer_twice_at_shutdown, NULL) == 0);
    pthread_detach(th);
    return 0;
}

static void test_second_signal_not_held(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_MAX_SAMPLES=10", NULL };
    tt_begin(&s);
    int status = tt_run(&s, env, body_big_then_exit_twice, NULL);
    if (status != 128 + SIGINT && status != 128 + SIGTERM)
        fail_msg("exit status %d, expected %d or %d (a signal)\n%s", status, 128 + SIGINT, 128 + SIGTERM, s.err);
    assert_null(tt_output(&s, "t-rank0", 0, ".report.json")); /* ended before the write did */
    tt_end(&s);
}

/* With a handler of the program's: the signal is held until the write is
 * done, then the program's handler runs and the program ends as it chose.
 * (A guard: the old code also got this right.) */
static void host_handler_write(int sig)
{
    (void)sig;
    static const char msg[] = "host handler ran\n";
    (void)!write(1, msg, sizeof msg - 1);
}

static int body_big_host_handler(void *arg)
{
    TT_REQUIRE(signal(SIGTERM, host_handler_write) != SIG_ERR);
    return body_big_then_exit(arg) == 0 ? 3 : 99;
}

static void test_sigterm_during_shutdown_chained(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_MAX_SAMPLES=10", NULL };
    tt_begin(&s);
    if (tt_run(&s, env, body_big_host_handler, NULL) != 3)
        fail_msg("exit status %d, expected 3\n%s", s.status, s.err);
    assert_string_equal(s.out, "host handler ran\n");
    assert_string_equal(s.err, "");
    expect_outputs(&s);
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_default_disposition, tt_teardown),
        cmocka_unit_test_teardown(test_signals_off, tt_teardown),
        cmocka_unit_test_teardown(test_host_handler_chained, tt_teardown),
        cmocka_unit_test_teardown(test_ignored_stays_ignored, tt_teardown),
        cmocka_unit_test_teardown(test_sigterm_during_shutdown, tt_teardown),
        cmocka_unit_test_teardown(test_sigterm_during_shutdown_chained, tt_teardown),
        cmocka_unit_test_teardown(test_second_signal_not_held, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
