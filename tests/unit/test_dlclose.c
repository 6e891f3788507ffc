/*
 * test_dlclose.c - a program that loads libtally with dlopen, records,
 * unloads it with dlclose and is then sent SIGTERM ends of the SIGTERM, not
 * of a crash (issue 26 item 6).
 *
 * dlclose runs libtally's atexit handler (tally_shutdown: the outputs are
 * written), then unmaps its code. Before the fix the SIGTERM handler and the
 * writer thread stayed behind, pointing into unmapped code: exit 139. Now
 * tally_shutdown restores the program's dispositions and stops its threads
 * (writer, sampler, NVML worker). With an NVML call that never returns, the
 * worker cannot be stopped: libtally then stays loaded (RTLD_NODELETE), and
 * SIGTERM still ends the program cleanly.
 *
 * Not linked with libtally: the library is TALLY_SHARED_LIB, dlopen'ed in
 * each scenario's child.
 */
#include "collector_test_util.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*name_fn)(const char *);
typedef void (*void_fn)(void);

static int body_dlclose_then_sigterm(void *arg)
{
    (void)arg;
    void *h = dlopen(TALLY_SHARED_LIB, RTLD_NOW | RTLD_LOCAL);
    TT_REQUIRE(h != NULL);
    name_fn begin = (name_fn)dlsym(h, "tally_begin");
    void_fn end = (void_fn)dlsym(h, "tally_end");
    name_fn snapshot = (name_fn)dlsym(h, "tally_memory_snapshot");
    TT_REQUIRE(begin != NULL && end != NULL && snapshot != NULL);
    for (int i = 0; i < 10; i++) {
        begin("before_dlclose");
        end();
    }
    snapshot("loaded");
    struct timespec ts = { 0, 30 * 1000 * 1000 }; /* a few sampler points */
    while (nanosleep(&ts, &ts) != 0)
        ;
    TT_REQUIRE(dlclose(h) == 0);
    void *again = dlopen(TALLY_SHARED_LIB, RTLD_NOW | RTLD_NOLOAD);
    printf("%s\n", again == NULL ? "unloaded" : "kept loaded");
    fflush(stdout);
    kill(getpid(), SIGTERM);
    ts.tv_nsec = 200 * 1000 * 1000;
    while (nanosleep(&ts, &ts) != 0)
        ;
    return 5; /* not reached: SIGTERM's default action ends the process */
}

static void expect_sigterm_and_report(tt_scenario *s, const char *stdout_want)
{
    if (s->status != 128 + SIGTERM)
        fail_msg("exit status %d, expected %d (SIGTERM, not a crash)\n%s", s->status, 128 + SIGTERM, s->err);
    assert_string_equal(s->out, stdout_want);
    json_t *r = tt_load_json(tt_report(s, "t-rank0"));
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "before_dlclose"), "count"), 10);
    json_decref(r);
    const char *args[] = { s->dir, NULL };
    json_decref(tt_check(args));
}

static void test_dlclose_then_sigterm(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_SAMPLE_MS=5", "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, NULL };
    tt_begin(&s);
    tt_run(&s, env, body_dlclose_then_sigterm, NULL);
    expect_sigterm_and_report(&s, "unloaded\n");
    assert_string_equal(s.err, "");
    tt_end(&s);
}

/* NVML hung in nvmlInit: its worker cannot be stopped, so libtally stays
 * mapped (the worker would return into it), and SIGTERM is still clean. */
static void test_dlclose_with_hung_nvml(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_SAMPLE_MS=5", "TALLY_NVML_LIBRARY=" TALLY_FAKE_NVML, "FAKE_NVML_HANG=nvmlInit_v2",
                          NULL };
    tt_begin(&s);
    tt_run(&s, env, body_dlclose_then_sigterm, NULL);
    expect_sigterm_and_report(&s, "kept loaded\n");
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_dlclose_then_sigterm, tt_teardown),
        cmocka_unit_test_teardown(test_dlclose_with_hung_nvml, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
