/*
 * test_fork.c - fork() while recording.
 *
 * A fork child starts with empty statistics: it writes
 * {name}-rank{N}.{PID}-{time}.report.json (and trace) with only what it recorded
 * itself, and only if it recorded something; the parent's files hold only the
 * parent's work. Here a recording parent forks a child that records other
 * names and leaves through exit(), then a child that records nothing; and a
 * parent whose second thread records without pause forks ten children in a
 * row (the library's locks must not be inherited held); and forks while the
 * sampler runs, with a grandchild; and forks while the helper that maps
 * spare trace chunks is at work, whose children trace full chunks of their
 * own (with the spares they inherited, then chunks they map: no helper of
 * their own). Every file written must pass
 * check_outputs.py, and under LeakSanitizer no child may leak the parent's
 * data it dropped (a leaking child would exit 23).
 */
#include "collector_test_util.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tally/tally.h"

static json_t *entry(json_t *report, const char *list, const char *name)
{
    json_t *x = tt_find(json_object_get(report, list), "name", name);
    if (x == NULL)
        fail_msg("no %s entry named %s", list, name);
    return x;
}

static int wait_ok(pid_t pid)
{
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The scenario's process P writes the pids of its children for the test. */
static int write_pids(const tt_scenario *s, const pid_t *pids, int n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/pids", s->base);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    for (int i = 0; i < n; i++)
        fprintf(f, "%d\n", (int)pids[i]);
    return fclose(f);
}

static void read_pids(const tt_scenario *s, pid_t *pids, int n)
{
    char path[700];
    snprintf(path, sizeof path, "%s/pids", s->base);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        int p;
        assert_int_equal(fscanf(f, "%d", &p), 1);
        pids[i] = p;
    }
    fclose(f);
}

/* ---- a parent, a child that records, a child that does not ----------------- */

static int body_fork(void *arg)
{
    tt_scenario *s = arg;
    for (int i = 0; i < 3; i++) {
        tally_begin("parent_before");
        tally_end();
    }
    tally_counter("parent_counter", 1);
    tally_memory_snapshot("parent_snapshot");
    tally_begin("around_fork"); /* open across the forks */

    pid_t pids[2];
    pids[0] = fork();
    TT_REQUIRE(pids[0] >= 0);
    if (pids[0] == 0) {
        for (int i = 0; i < 5; i++) {
            tally_begin("child_only");
            tally_end();
        }
        tally_counter("child_counter", 2);
        tally_memory_snapshot("child_snapshot");
        exit(0); /* the library writes the child's files at exit */
    }
    TT_REQUIRE(wait_ok(pids[0]));
    pids[1] = fork();
    TT_REQUIRE(pids[1] >= 0);
    if (pids[1] == 0)
        exit(0); /* records nothing: writes nothing */
    TT_REQUIRE(wait_ok(pids[1]));

    tally_end();
    for (int i = 0; i < 2; i++) {
        tally_begin("parent_after");
        tally_end();
    }
    TT_REQUIRE(write_pids(s, pids, 2) == 0);
    return 0;
}

/* stderr is empty but for LeakSanitizer's note, in fork children under
 * ASan, that the parent's other threads (libtally's signal writer, which a
 * child does not have) could not be suspended: not a leak, not a message of
 * libtally's. */
static void expect_quiet(const char *err)
{
    for (const char *line = err; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        if (n > 0 &&
            !(strncmp(line, "==", 2) == 0 && strstr(line, "was not suspended. False leaks are possible.") != NULL &&
              (size_t)(strstr(line, "was not suspended") - line) < n))
            fail_msg("unexpected stderr: %.*s", (int)n, line);
        line += end ? n + 1 : n;
    }
}

static void test_fork_child_writes_its_own(void **state)
{
    (void)state;
    tt_scenario s;
    pid_t pids[2];
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_fork, &s), 0);
    expect_quiet(s.err);
    read_pids(&s, pids, 2);

    json_t *p = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(p, "pid"), s.pid);
    assert_true(json_is_false(json_object_get(p, "fork_child")));
    assert_int_equal(tt_len(p, "sections"), 3);
    assert_int_equal(tt_int(entry(p, "sections", "parent_before"), "count"), 3);
    assert_int_equal(tt_int(entry(p, "sections", "around_fork"), "count"), 1);
    assert_int_equal(tt_int(entry(p, "sections", "parent_after"), "count"), 2);
    assert_int_equal(tt_len(p, "counters"), 1);
    entry(p, "counters", "parent_counter");
    assert_int_equal(tt_len(p, "memory_snapshots"), 1);
    assert_string_equal(tt_str(json_array_get(json_object_get(p, "memory_snapshots"), 0), "label"), "parent_snapshot");

    char name[128];
    json_t *c = tt_load_json(tt_report_of(&s, "t-rank0", pids[0]));
    assert_int_equal(tt_int(c, "pid"), pids[0]);
    assert_true(json_is_true(json_object_get(c, "fork_child")));
    /* NVML runs on a thread of the parent's (issue 26): none in the child */
    assert_string_equal(tt_str(json_object_get(p, "system"), "nvml"), "absent");
    assert_string_equal(tt_str(json_object_get(c, "system"), "nvml"), "not read in a fork child");
    assert_int_equal(tt_len(c, "sections"), 1);
    assert_int_equal(tt_int(entry(c, "sections", "child_only"), "count"), 5);
    assert_int_equal(tt_len(c, "counters"), 1);
    assert_true(tt_num(entry(c, "counters", "child_counter"), "sum") == 2);
    assert_int_equal(tt_len(c, "memory_snapshots"), 1);
    assert_string_equal(tt_str(json_array_get(json_object_get(c, "memory_snapshots"), 0), "label"), "child_snapshot");
    assert_int_equal(tt_int(json_object_get(c, "problems"), "unclosed"), 0);
    assert_int_equal(tt_int(json_object_get(c, "problems"), "unmatched_ends"), 0);
    assert_int_equal(tt_int(json_object_get(c, "trace"), "events_recorded"), 6);
    assert_string_equal(tt_str(json_object_get(c, "trace"), "path"), tt_trace_of(&s, "t-rank0", pids[0]));

    /* The child that recorded nothing left nothing; four files in all. */
    snprintf(name, sizeof name, ".%d-", (int)pids[1]);
    assert_int_equal(tt_count_files(s.dir, name), 0);
    assert_int_equal(tt_count_files(s.dir, ""), 4);
    assert_int_equal(tt_count_files(s.dir, ".tmp"), 0);

    /* Both traces are complete and hold only their own process's events. */
    const char *args[] = { s.dir, NULL };
    json_t *sum = tt_check(args);
    json_t *px = json_object_get(tt_summary_of(sum, tt_basename(tt_report(&s, "t-rank0"))), "x");
    json_t *cx = json_object_get(tt_summary_of(sum, tt_basename(tt_report_of(&s, "t-rank0", pids[0]))), "x");
    assert_int_equal(json_object_size(px), 3);
    assert_null(json_object_get(px, "section/child_only"));
    assert_int_equal(json_object_size(cx), 1);
    assert_int_equal(tt_int(json_object_get(cx, "section/child_only"), "count"), 5);
    json_decref(sum);
    json_decref(p);
    json_decref(c);
    tt_end(&s);
}

/* ---- forks while another thread records ------------------------------------- */

#define NFORKS 10

static atomic_int stop_spinner;
static atomic_long spins;

static void *spinner(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_spinner)) {
        tally_begin("spin");
        tally_counter("spin_counter", 1);
        tally_end();
        atomic_fetch_add(&spins, 1);
    }
    return NULL;
}

static int body_fork_threads(void *arg)
{
    tt_scenario *s = arg;
    pthread_t t;
    pid_t pids[NFORKS];
    tally_begin("parent");
    tally_end();
    TT_REQUIRE(pthread_create(&t, NULL, spinner, NULL) == 0);
    /* Fork once the spinner has its buffer: from then on its allocations
     * (tables, samples, histogram pages, event chunks) happen under its
     * buffer flag, which fork() waits for. (Creating the buffer is not: a
     * fork while another thread is inside malloc is safe with glibc, but not
     * with GCC 12's AddressSanitizer, whose allocator locks the child would
     * inherit held.) */
    while (atomic_load(&spins) < 10)
        sched_yield();
    for (int i = 0; i < NFORKS; i++) {
        pids[i] = fork();
        TT_REQUIRE(pids[i] >= 0);
        if (pids[i] == 0) {
            char name[32];
            snprintf(name, sizeof name, "child%d", i);
            tally_begin(name);
            tally_end();
            exit(0);
        }
        TT_REQUIRE(wait_ok(pids[i]));
    }
    atomic_store(&stop_spinner, 1);
    pthread_join(t, NULL);
    TT_REQUIRE(write_pids(s, pids, NFORKS) == 0);
    return 0;
}

static void test_fork_while_threads_record(void **state)
{
    (void)state;
    tt_scenario s;
    pid_t pids[NFORKS];
    /* The spinner records millions of sections; keep its trace small. */
    const char *env[] = { "TALLY_MAX_EVENTS=10000", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_fork_threads, &s), 0);
    read_pids(&s, pids, NFORKS);
    json_t *p = tt_load_json(tt_report(&s, "t-rank0"));
    assert_true(tt_int(entry(p, "sections", "spin"), "count") > 0);
    assert_int_equal(tt_len(p, "sections"), 2); /* parent, spin: no childN */
    assert_int_equal(tt_int(p, "threads"), 2);
    assert_true(tt_int(json_object_get(p, "trace"), "events_dropped") > 0);
    json_decref(p);
    for (int i = 0; i < NFORKS; i++) {
        char name[64];
        json_t *c = tt_load_json(tt_report_of(&s, "t-rank0", pids[i]));
        snprintf(name, sizeof name, "child%d", i);
        assert_int_equal(tt_len(c, "sections"), 1); /* not the spinner's work */
        assert_int_equal(tt_int(entry(c, "sections", name), "count"), 1);
        assert_int_equal(tt_len(c, "counters"), 0);
        assert_int_equal(tt_int(c, "threads"), 1);
        /* The child's event budget starts over, whatever the parent used. */
        assert_int_equal(tt_int(json_object_get(c, "trace"), "events_recorded"), 1);
        assert_int_equal(tt_int(json_object_get(c, "trace"), "events_dropped"), 0);
        json_decref(c);
    }
    assert_int_equal(tt_count_files(s.dir, ".report.json"), 1 + NFORKS);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

/* ---- fork while the sampler runs, and from a fork child ------------------- */

#define SAMPLER_FORKS 20

static int body_fork_sampler(void *arg)
{
    tt_scenario *s = arg;
    pid_t pids[2];
    tally_begin("parent");
    struct timespec ts = { 0, 60 * 1000 * 1000 }; /* a few sampler points first */
    while (nanosleep(&ts, &ts) != 0)
        ;
    tally_end();
    tally_event("parent_event", NULL);
    pids[0] = fork();
    TT_REQUIRE(pids[0] >= 0);
    if (pids[0] == 0) {
        tally_begin("child");
        tally_end();
        pid_t g = fork(); /* a grandchild: a fork child forks again */
        if (g == 0) {
            tally_begin("grandchild");
            tally_end();
            exit(0);
        }
        if (g < 0 || !wait_ok(g))
            _exit(98);
        int fd = open(tt_out(s, "../grandchild.pid"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dprintf(fd, "%d\n", (int)g) < 0 || close(fd) != 0)
            _exit(97);
        exit(0);
    }
    TT_REQUIRE(wait_ok(pids[0]));
    /* More forks at random points of the 1 ms sampler's cycle: a child forked
     * mid-point must not inherit a half-taken point (LeakSanitizer would
     * find its open file in the child). */
    for (int i = 0; i < SAMPLER_FORKS; i++) {
        pid_t c = fork();
        TT_REQUIRE(c >= 0);
        if (c == 0) {
            tally_begin("short_child");
            tally_end();
            exit(0);
        }
        TT_REQUIRE(wait_ok(c));
    }
    FILE *f = fopen(tt_out(s, "../grandchild.pid"), "r");
    int g = 0;
    TT_REQUIRE(f != NULL && fscanf(f, "%d", &g) == 1);
    fclose(f);
    pids[1] = g;
    TT_REQUIRE(write_pids(s, pids, 2) == 0);
    return 0;
}

static void test_fork_with_sampler_and_grandchild(void **state)
{
    (void)state;
    tt_scenario s;
    pid_t pids[2];
    const char *env[] = { "TALLY_SAMPLE_MS=1", NULL };
    tt_begin(&s);
    /* Under LeakSanitizer a child that leaked the parent's data exits 23. */
    assert_int_equal(tt_run(&s, env, body_fork_sampler, &s), 0);
    /* (LeakSanitizer may warn here about the sampler thread absent in the child.) */
    assert_int_equal(tt_count_lines(s.err, "tally:"), 0);
    read_pids(&s, pids, 2);
    json_t *p = tt_load_json(tt_report(&s, "t-rank0"));
    assert_true(tt_len(json_object_get(p, "sampler"), "series") >= 2);
    assert_int_equal(tt_len(p, "events"), 1);
    json_decref(p);
    const char *who[2] = { "child", "grandchild" };
    for (int i = 0; i < 2; i++) {
        json_t *c = tt_load_json(tt_report_of(&s, "t-rank0", pids[i]));
        assert_int_equal(tt_len(c, "sections"), 1);
        assert_int_equal(tt_int(entry(c, "sections", who[i]), "count"), 1);
        assert_int_equal(tt_len(c, "events"), 0); /* the parent's event is not theirs */
        json_decref(c);
    }
    assert_int_equal(tt_count_files(s.dir, ".report.json"), 3 + SAMPLER_FORKS);
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

/* ---- fork while spare trace chunks are mapped ------------------------------ */

#define SPARE_FORKS 4
#define SPARE_SPINS 400000L  /* the spinner: two dozen full chunks (16384 events) */
#define CHILD_SECTIONS 60000 /* a child: past the doubling, into full chunks */

static atomic_long spare_spins;
static atomic_int spare_forks_done;

static void *spare_spinner(void *arg)
{
    (void)arg;
    while (atomic_load(&spare_spins) < SPARE_SPINS) {
        tally_begin("spin");
        tally_end();
        atomic_fetch_add(&spare_spins, 1);
    }
    /* Alive until the last fork: a thread that ended unjoined before a fork
     * is one the child can never join (ThreadSanitizer calls it a leak). */
    while (!atomic_load(&spare_forks_done))
        sched_yield();
    return NULL;
}

/* Whether a thread of this process is named "tally-chunks" (the helper). */
static int chunk_helper_running(void)
{
    char path[300], comm[32];
    int found = 0;
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f != NULL && fgets(comm, sizeof comm, f) != NULL && strncmp(comm, "tally-chunks", 12) == 0)
            found = 1;
        if (f != NULL)
            fclose(f);
    }
    closedir(d);
    return found;
}

static int body_fork_spares(void *arg)
{
    tt_scenario *s = arg;
    pthread_t t;
    pid_t pids[SPARE_FORKS];
    TT_REQUIRE(chunk_helper_running() == 0);
    TT_REQUIRE(pthread_create(&t, NULL, spare_spinner, NULL) == 0);
    for (int i = 0; i < SPARE_FORKS; i++) {
        /* Forks spread over the spinner's run: some while the helper maps. */
        while (atomic_load(&spare_spins) < (long)(i + 1) * SPARE_SPINS / (SPARE_FORKS + 1))
            sched_yield();
        pids[i] = fork();
        TT_REQUIRE(pids[i] >= 0);
        if (pids[i] == 0) {
            for (int k = 0; k < CHILD_SECTIONS; k++) {
                tally_begin("child");
                tally_end();
            }
            exit(chunk_helper_running() == 0 ? 0 : 3);
        }
    }
    atomic_store(&spare_forks_done, 1);
    for (int i = 0; i < SPARE_FORKS; i++)
        TT_REQUIRE(wait_ok(pids[i]));
    pthread_join(t, NULL);
    TT_REQUIRE(chunk_helper_running() == 1);
    TT_REQUIRE(tally_shutdown() == 0);
    /* Stopped and joined. A joined thread can still be listed for a moment
     * (the kernel wakes the joiner before it unlists the thread): wait up
     * to 2 s for it to go. */
    for (int tries = 0; tries < 200 && chunk_helper_running() != 0; tries++) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    TT_REQUIRE(chunk_helper_running() == 0);
    FILE *f = fopen(tt_out(s, "../spins"), "w");
    TT_REQUIRE(f != NULL && fprintf(f, "%ld\n", atomic_load(&spare_spins)) > 0 && fclose(f) == 0);
    TT_REQUIRE(write_pids(s, pids, SPARE_FORKS) == 0);
    return 0;
}

static void test_fork_with_spare_chunks(void **state)
{
    (void)state;
    tt_scenario s;
    pid_t pids[SPARE_FORKS];
    long spun = 0; /* SPARE_SPINS, as the scenario saw it */
    const char *env[] = { "TALLY_MAX_EVENTS=1000000", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_fork_spares, &s), 0);
    assert_int_equal(tt_count_lines(s.err, "tally:"), 0);
    read_pids(&s, pids, SPARE_FORKS);
    FILE *f = fopen(tt_out(&s, "../spins"), "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld", &spun), 1);
    fclose(f);
    /* Every section traced, in the parent and in each child: the spares
     * change where pages are populated, never what is kept. */
    json_t *p = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(entry(p, "sections", "spin"), "count"), spun);
    assert_int_equal(tt_int(json_object_get(p, "trace"), "events_recorded"), spun);
    assert_int_equal(tt_int(json_object_get(p, "trace"), "events_dropped"), 0);
    json_decref(p);
    for (int i = 0; i < SPARE_FORKS; i++) {
        json_t *c = tt_load_json(tt_report_of(&s, "t-rank0", pids[i]));
        assert_int_equal(tt_len(c, "sections"), 1);
        assert_int_equal(tt_int(entry(c, "sections", "child"), "count"), CHILD_SECTIONS);
        assert_int_equal(tt_int(json_object_get(c, "trace"), "events_recorded"), CHILD_SECTIONS);
        assert_int_equal(tt_int(json_object_get(c, "trace"), "events_dropped"), 0);
        json_decref(c);
    }
    const char *args[] = { s.dir, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_fork_child_writes_its_own, tt_teardown),
        cmocka_unit_test_teardown(test_fork_while_threads_record, tt_teardown),
        cmocka_unit_test_teardown(test_fork_with_sampler_and_grandchild, tt_teardown),
        cmocka_unit_test_teardown(test_fork_with_spare_chunks, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
