/*
 * test_outputs.c - the files libtally writes, and what happens when it cannot.
 *
 * The trace is gzip by default, plain with TALLY_TRACE_GZIP=0, absent with
 * TALLY_TRACE=0. Files are written to a temporary name and renamed, so after
 * a run no temporary file is left and an existing report is replaced only by
 * a complete one; a full disk (RLIMIT_FSIZE here) leaves the old files as they
 * were. An unwritable directory or /dev/full is reported on stderr exactly
 * once, however many flushes fail, and the program goes on to exit with its
 * own status. The report and the trace are committed together (both new or
 * both old). Paths that are not regular files (/dev/stdout, a device made by
 * the test) are written in place; a symlink's target is replaced atomically,
 * the link stays. Last, check_outputs.py itself must reject broken files,
 * or the other tests would prove nothing.
 */
#include "collector_test_util.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tally/tally.h"

static int body_record(void *arg)
{
    int n = arg ? *(const int *)arg : 100;
    for (int i = 0; i < n; i++) {
        tally_begin("w");
        tally_end();
        tally_counter("wc", i);
    }
    return 0;
}

/* Record, fail to write at a flush, go on recording, fail again at shutdown,
 * and leave with the program's own status. */
static int body_write_fails(void *arg)
{
    (void)arg;
    body_record(NULL);
    TT_REQUIRE(tally_flush() == TALLY_EIO);
    TT_REQUIRE(tally_flush() == TALLY_EIO);
    body_record(NULL);
    TT_REQUIRE(tally_shutdown() == TALLY_EIO);
    return 7;
}

static json_t *check_dir(tt_scenario *s)
{
    const char *args[] = { s->dir, NULL };
    return tt_check(args);
}

static int starts_with_gzip_magic(const char *path)
{
    unsigned char m[2] = { 0, 0 };
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    size_t n = fread(m, 1, 2, f);
    fclose(f);
    return n == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

static void test_trace_variants(void **state)
{
    (void)state;
    tt_scenario s;

    tt_begin(&s); /* default: gzip */
    assert_int_equal(tt_run(&s, NULL, body_record, NULL), 0);
    assert_int_equal(starts_with_gzip_magic(tt_trace(&s, "t-rank0")), 1);
    assert_null(tt_output(&s, "t-rank0", 0, ".trace.json"));
    assert_int_equal(tt_count_files(s.dir, ""), 2);
    json_decref(check_dir(&s));
    tt_end(&s);

    const char *plain[] = { "TALLY_TRACE_GZIP=0", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, plain, body_record, NULL), 0);
    assert_int_equal(starts_with_gzip_magic(tt_trace(&s, "t-rank0")), 0);
    assert_null(tt_output(&s, "t-rank0", 0, ".trace.json.gz"));
    char *text = tt_read_file(tt_trace(&s, "t-rank0"), NULL);
    assert_true(text[0] == '{');
    free(text);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_string_equal(tt_str(json_object_get(r, "trace"), "path"), tt_trace(&s, "t-rank0"));
    assert_true(json_is_false(json_object_get(json_object_get(r, "config"), "trace_gzip")));
    json_decref(r);
    json_decref(check_dir(&s));
    tt_end(&s);

    const char *off[] = { "TALLY_TRACE=0", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, off, body_record, NULL), 0);
    assert_int_equal(tt_count_files(s.dir, ""), 1);
    assert_int_equal(tt_count_files(s.dir, "trace"), 0);
    r = tt_load_json(tt_report(&s, "t-rank0"));
    json_t *trace = json_object_get(r, "trace");
    assert_true(json_is_false(json_object_get(trace, "enabled")));
    assert_true(json_is_null(json_object_get(trace, "path")));
    /* No events were kept, and none was "dropped" either: there was no trace. */
    assert_int_equal(tt_int(trace, "events_recorded"), 0);
    assert_int_equal(tt_int(trace, "events_dropped"), 0);
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 100);
    json_decref(r);
    json_decref(check_dir(&s));
    tt_end(&s);
}

/* The program's status and exactly one "tally:" line on stderr, which names path. */
static void expect_one_complaint(tt_scenario *s, const char *path)
{
    assert_int_equal(s->status, 7);
    if (tt_count_lines(s->err, "tally:") != 1 || tt_count_lines(s->err, "") != 1)
        fail_msg("expected one line on stderr, got:\n%s", s->err);
    if (path && strstr(s->err, path) == NULL)
        fail_msg("the complaint does not name %s: %s", path, s->err);
    assert_string_equal(s->out, "");
}

/* The gzip trace of many events (megabytes of JSON through the compressor,
 * many of its buffers) by isa-l's level 1 (the default where libtally was
 * built with it) and by zlib's (TALLY_GZIP_ENCODER=zlib, and every build
 * without isa-l): both one valid gzip member that zlib inflates here and
 * Python's gzip in check_outputs.py, holding every event. */
static void test_trace_gzip_encoders(void **state)
{
    (void)state;
    static const char *const encoders[][2] = { { NULL, NULL }, { "TALLY_GZIP_ENCODER=zlib", NULL } };
    int n = 60000;
    for (int e = 0; e < 2; e++) {
        tt_scenario s;
        tt_begin(&s);
        assert_int_equal(tt_run(&s, encoders[e][0] ? encoders[e] : NULL, body_record, &n), 0);
        const char *trace = tt_trace(&s, "t-rank0");
        assert_int_equal(starts_with_gzip_magic(trace), 1);
        json_decref(check_dir(&s));
        json_t *t = tt_load_json(trace);
        json_t *events = json_object_get(t, "traceEvents");
        size_t i, sections = 0, counters = 0;
        json_t *ev;
        json_array_foreach(events, i, ev)
        {
            const char *ph = tt_str(ev, "ph");
            sections += strcmp(ph, "X") == 0;
            counters += strcmp(ph, "C") == 0 && strcmp(tt_str(ev, "cat"), "counter") == 0;
        }
        assert_int_equal(sections, (size_t)n);
        assert_int_equal(counters, (size_t)n);
        json_decref(t);
        tt_end(&s);
    }
}

static void test_unwritable_directory(void **state)
{
    (void)state;
    tt_scenario s;
    char var[1024], path[800];

    const char *env[] = { var, NULL };

    /* A path whose parent is a regular file (root ignores permission bits, not
     * this): the one complaint names the directory and both lost outputs. */
    tt_begin(&s);
    snprintf(path, sizeof path, "%s/file", s.base);
    tt_write_file(path, "not a directory\n");
    snprintf(path, sizeof path, "%s/file/sub", s.base);
    snprintf(var, sizeof var, "TALLY_OUTPUT_DIR=%s", path);
    tt_run(&s, env, body_write_fails, NULL);
    expect_one_complaint(&s, path);
    if (strstr(s.err, "lost: the report ") == NULL || strstr(s.err, ".report.json and the trace ") == NULL ||
        strstr(s.err, ".trace.json.gz;") == NULL)
        fail_msg("the complaint does not name both lost outputs: %s", s.err);
    /* ... by their whole names: the directory, the name, the rank and the run's stem */
    snprintf(path, sizeof path, "lost: the report %s/file/sub/", s.base);
    if (strstr(s.err, path) == NULL || strstr(s.err, "-rank0.") == NULL || strstr(s.err, "/.report.json") != NULL ||
        strstr(s.err, "/.trace.json") != NULL)
        fail_msg("the complaint does not name the lost files by their paths: %s", s.err);
    tt_end(&s);

    /* Without a trace, only the report is named. */
    const char *no_trace[] = { var, "TALLY_TRACE=0", NULL };
    tt_begin(&s);
    snprintf(path, sizeof path, "%s/file", s.base);
    tt_write_file(path, "not a directory\n");
    snprintf(path, sizeof path, "%s/file/sub", s.base);
    snprintf(var, sizeof var, "TALLY_OUTPUT_DIR=%s", path);
    tt_run(&s, no_trace, body_write_fails, NULL);
    expect_one_complaint(&s, path);
    if (strstr(s.err, "lost: the report ") == NULL || strstr(s.err, "trace") != NULL)
        fail_msg("the complaint should name the report only: %s", s.err);
    tt_end(&s);
}

/* Issue 13: TALLY_OUTPUT_DIR that does not exist is created (mode 0755, every
 * missing level, like mkdir -p), and the run's files are in it. */
static void test_missing_directory_is_created(void **state)
{
    (void)state;
    tt_scenario s;
    char var[1024], path[800];
    struct stat st;
    tt_begin(&s);
    snprintf(path, sizeof path, "%s/no/such/dir", s.base);
    snprintf(var, sizeof var, "TALLY_OUTPUT_DIR=%s", path);
    const char *env[] = { var, NULL };
    assert_int_equal(tt_run(&s, env, body_record, NULL), 0);
    assert_string_equal(s.err, "");
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    mode_t um = umask(0);
    umask(um);
    assert_int_equal(st.st_mode & 0777, 0755 & ~um);
    assert_int_equal(tt_count_files(path, ".report.json"), 1);
    assert_int_equal(tt_count_files(path, ".trace.json.gz"), 1);
    const char *args[] = { path, NULL };
    json_decref(tt_check(args));
    tt_end(&s);
}

/* Issue 13: a second run in the same directory keeps the first run's files:
 * each run has a stem of its own ({name}-rank{N}.{pid}-{time}), and the
 * trace's stem is the report's. */
static void test_second_run_keeps_the_first(void **state)
{
    (void)state;
    tt_scenario s;
    int n1 = 10, n2 = 20;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_record, &n1), 0);
    pid_t first = s.pid;
    char *r1 = tt_read_file(tt_report_of(&s, "t-rank0", first), NULL);
    assert_int_equal(tt_run(&s, NULL, body_record, &n2), 0);
    assert_int_equal(tt_count_files(s.dir, ".report.json"), 2);
    assert_int_equal(tt_count_files(s.dir, ".trace.json.gz"), 2);
    assert_int_equal(tt_count_files(s.dir, ".tmp"), 0);
    char *again = tt_read_file(tt_report_of(&s, "t-rank0", first), NULL);
    assert_string_equal(again, r1); /* untouched */
    json_t *a = tt_load_json(tt_report_of(&s, "t-rank0", first));
    json_t *b = tt_load_json(tt_report_of(&s, "t-rank0", s.pid));
    assert_int_equal(tt_int(tt_find(json_object_get(a, "sections"), "name", "w"), "count"), 10);
    assert_int_equal(tt_int(tt_find(json_object_get(b, "sections"), "name", "w"), "count"), 20);
    /* report and trace share the stem */
    char stem[1200];
    const char *rp = tt_report_of(&s, "t-rank0", s.pid);
    snprintf(stem, sizeof stem, "%.*s.trace.json.gz", (int)(strlen(rp) - strlen(".report.json")), rp);
    assert_string_equal(tt_str(json_object_get(b, "trace"), "path"), stem);
    assert_true(tt_exists(stem));
    json_decref(a);
    json_decref(b);
    free(r1);
    free(again);
    json_decref(check_dir(&s));
    tt_end(&s);
}

/* A full device made by the test (never the machine's own /dev/full): a
 * character device 1,7 inside the scenario's temporary directory. Needs root
 * (mknod); skipped otherwise. */
static int make_full_device(tt_scenario *s, char *path, size_t len)
{
    snprintf(path, len, "%s/full", s->base);
    return mknod(path, S_IFCHR | 0666, makedev(1, 7));
}

static void test_dev_full(void **state)
{
    (void)state;
    tt_scenario s;
    struct stat st;
    char full[600], var1[700], var2[700];

    /* Both outputs to the full device: written in place, fail at flush, reported once. */
    tt_begin(&s);
    if (make_full_device(&s, full, sizeof full) != 0) {
        tt_end(&s);
        skip();
    }
    snprintf(var1, sizeof var1, "TALLY_REPORT_PATH=%s", full);
    snprintf(var2, sizeof var2, "TALLY_TRACE_PATH=%s", full);
    const char *both[] = { var1, var2, NULL };
    tt_run(&s, both, body_write_fails, NULL);
    expect_one_complaint(&s, full);
    assert_int_equal(tt_count_files(s.dir, ""), 0);
    /* Still the device: never replaced by a renamed temporary file. */
    assert_int_equal(stat(full, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(tt_count_files(s.base, ".tmp"), 0);
    tt_end(&s);

    /* Only the report fails: the report and its trace are committed together,
     * so the trace beside it is not written either (no report without its
     * trace), and nothing is left behind. */
    tt_begin(&s);
    assert_int_equal(make_full_device(&s, full, sizeof full), 0);
    snprintf(var1, sizeof var1, "TALLY_REPORT_PATH=%s", full);
    snprintf(var2, sizeof var2, "TALLY_TRACE_PATH=%s", tt_out(&s, "x.trace.json"));
    const char *report_only[] = { var1, var2, "TALLY_TRACE_GZIP=0", NULL };
    tt_run(&s, report_only, body_write_fails, NULL);
    expect_one_complaint(&s, full);
    assert_false(tt_exists(tt_out(&s, "x.trace.json")));
    assert_int_equal(tt_count_files(s.dir, ""), 0);
    tt_end(&s);
}

/* A flush, then the final write to the same files: replaced atomically,
 * complete and valid, no temporary file left. */
static int body_flush_then_more(void *arg)
{
    int n = 5;
    body_record(&n);
    TT_REQUIRE(tally_flush() == 0);
    return body_record(arg);
}

static void test_atomic_replace(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_flush_then_more, NULL), 0);
    assert_int_equal(tt_count_files(s.dir, ".tmp"), 0);
    assert_int_equal(tt_count_files(s.dir, ""), 2);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 105);
    json_decref(r);
    json_decref(check_dir(&s)); /* replaced by complete, valid files */
    tt_end(&s);
}

/* The collector's files keep the mode of the files they replace, and a
 * symlink another user planted where older versions put the temporary file
 * ("{path}.tmp.{pid}", for the next pids to come) is never written through. */
static void test_replace_keeps_mode_and_ignores_planted_links(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    tt_write_file(tt_out(&s, "t-rank0.report.json"), "OLD REPORT\n");
    chmod(tt_out(&s, "t-rank0.report.json"), 0640);
    char victim[700];
    snprintf(victim, sizeof victim, "%s/victim", s.base);
    tt_write_file(victim, "SECRET\n");
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "r");
    int last = 0;
    if (f != NULL) {
        if (fscanf(f, "%d", &last) != 1)
            last = 0;
        fclose(f);
    }
    for (int pid = last + 1; last > 0 && pid <= last + 200; pid++) {
        symlink(victim, tt_out(&s, "t-rank0.report.json.tmp.%d", pid));
        symlink(victim, tt_out(&s, "t-rank0.trace.json.gz.tmp.%d", pid));
    }
    /* A run never replaces another run's files (its stem is its own): the
     * files replaced are the exact paths asked for. */
    char rvar[1200], tvar[1200];
    snprintf(rvar, sizeof rvar, "TALLY_REPORT_PATH=%s", tt_out(&s, "t-rank0.report.json"));
    snprintf(tvar, sizeof tvar, "TALLY_TRACE_PATH=%s", tt_out(&s, "t-rank0.trace.json.gz"));
    const char *env[] = { rvar, tvar, NULL };
    assert_int_equal(tt_run(&s, env, body_record, NULL), 0);
    char *v = tt_read_file(victim, NULL);
    assert_string_equal(v, "SECRET\n");
    free(v);
    struct stat st;
    assert_int_equal(stat(tt_out(&s, "t-rank0.report.json"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    json_t *r = tt_load_json(tt_out(&s, "t-rank0.report.json"));
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 100);
    json_decref(r);
    tt_end(&s);
}

/* Flush, then someone who can write to the output directory replaces the
 * report of this run (its name is known: stem plus pid) with a link to a
 * file of theirs choosing; the final write must not go through the link. */
static int body_flush_then_planted_link(void *arg)
{
    const char *victim = arg;
    int n = 5;
    body_record(&n);
    TT_REQUIRE(tally_flush() == 0);
    char path[1200];
    const char *dir = getenv("TALLY_OUTPUT_DIR");
    TT_REQUIRE(dir != NULL);
    /* the one report in the directory is ours */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "ls %s/*.report.json", dir);
    FILE *p = popen(cmd, "r");
    TT_REQUIRE(p != NULL && fgets(path, sizeof path, p) != NULL);
    pclose(p);
    path[strcspn(path, "\n")] = '\0';
    TT_REQUIRE(unlink(path) == 0 && symlink(victim, path) == 0);
    body_record(&n);
    return 0;
}

static void test_own_names_never_follow_planted_links(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    char victim[700];
    snprintf(victim, sizeof victim, "%s/victim", s.base);
    tt_write_file(victim, "SECRET\n");
    tt_run(&s, NULL, body_flush_then_planted_link, victim);
    char *v = tt_read_file(victim, NULL);
    assert_string_equal(v, "SECRET\n");
    free(v);
    /* the link is still a link (refused, said on stderr), never written through */
    assert_true(tt_count_files(s.dir, ".report.json") >= 1);
    tt_end(&s);
}

/* A disk that fills up during the write: files may not grow past 4 KiB. */
static int body_disk_full(void *arg)
{
    int small = 5;
    body_record(&small);
    TT_REQUIRE(tally_flush() == 0); /* these files must survive the failure */
    signal(SIGXFSZ, SIG_IGN);       /* then write() fails with EFBIG instead */
    struct rlimit rl = { 4096, 4096 };
    TT_REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    int n = 3000; /* the report's samples alone take more than 4 KiB */
    body_record(&n);
    (void)arg;
    return 7;
}

static void test_disk_full_keeps_old_files(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    tt_run(&s, NULL, body_disk_full, NULL);
    expect_one_complaint(&s, NULL);
    /* the flushed files are intact: 5 sections, and a trace that matches them */
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 5);
    json_decref(r);
    json_decref(check_dir(&s));
    assert_int_equal(tt_count_files(s.dir, ".tmp"), 0); /* partial files removed */
    assert_int_equal(tt_count_files(s.dir, ""), 2);
    tt_end(&s);
}

static void test_in_place_paths(void **state)
{
    (void)state;
    tt_scenario s;

    /* /dev/stdout (a pipe here): the report arrives on stdout. */
    const char *to_stdout[] = { "TALLY_REPORT_PATH=/dev/stdout", "TALLY_TRACE=0", NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, to_stdout, body_record, NULL), 0);
    json_error_t e;
    json_t *r = json_loads(s.out, 0, &e);
    if (r == NULL)
        fail_msg("stdout is not the report: %s\n%s", e.text, s.out);
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 100);
    json_decref(r);
    assert_int_equal(tt_count_files(s.dir, ""), 0);
    tt_end(&s);

    /* A symlink to a regular file: written through, the link stays a link
     * (not replaced by a renamed temporary file, as /dev/stdout -> a file
     * would be). */
    tt_begin(&s);
    char target[1024], var[1200];
    snprintf(target, sizeof target, "%s", tt_out(&s, "target.json"));
    tt_write_file(target, "OLD\n");
    assert_int_equal(symlink(target, tt_out(&s, "link.json")), 0);
    snprintf(var, sizeof var, "TALLY_REPORT_PATH=%s", tt_out(&s, "link.json"));
    const char *via_link[] = { var, "TALLY_TRACE=0", NULL };
    assert_int_equal(tt_run(&s, via_link, body_record, NULL), 0);
    struct stat st;
    assert_int_equal(lstat(tt_out(&s, "link.json"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    json_decref(tt_check((const char *const[]){ target, NULL }));
    assert_int_equal(tt_count_files(s.dir, ""), 2);
    tt_end(&s);
}

/* ---- issue 26: stems, a lost trace, one path for both, a rank change ---- */

#define NTWINS 8

/* Fork NTWINS processes that record (twin i: 1000 * (i + 1) sections), wait
 * on one pipe and leave together, so that their exit-time writes race. The
 * stem seam gives them all pid 1 and one second, as NTWINS containers
 * started together. This process never calls libtally. */
static int body_twins(void *arg)
{
    (void)arg;
    int go[2];
    pid_t kids[NTWINS];
    TT_REQUIRE(pipe(go) == 0);
    for (int i = 0; i < NTWINS; i++) {
        kids[i] = fork();
        TT_REQUIRE(kids[i] >= 0);
        if (kids[i] == 0) {
            char c;
            close(go[1]);
            int n = 1000 * (i + 1);
            body_record(&n);
            (void)!read(go[0], &c, 1); /* until every twin is ready */
            exit(0);
        }
    }
    close(go[0]);
    struct timespec ts = { 0, 300 * 1000 * 1000 }; /* all twins recorded */
    while (nanosleep(&ts, &ts) != 0)
        ;
    close(go[1]);
    int failed = 0;
    for (int i = 0; i < NTWINS; i++) {
        int st;
        TT_REQUIRE(waitpid(kids[i], &st, 0) == kids[i]);
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    return failed ? 98 : 0;
}

/* Item 4: 8 processes with the same pid in the same second keep 8 reports
 * and 8 traces, each its own (on the old lstat check: 1 or 2 of 8). */
static void test_same_pid_same_second(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY__TEST_STEM_PID=1", "TALLY__TEST_STEM_TIME=20260101T000000Z", "TALLY_MAX_SAMPLES=10",
                          NULL };
    tt_begin(&s);
    assert_int_equal(tt_run(&s, env, body_twins, NULL), 0);
    assert_string_equal(s.err, "");
    assert_int_equal(tt_count_files(s.dir, ".report.json"), NTWINS);
    assert_int_equal(tt_count_files(s.dir, ".trace.json.gz"), NTWINS);
    assert_int_equal(tt_count_files(s.dir, ".tmp"), 0);
    assert_int_equal(tt_count_files(s.dir, "t-rank0.1-20260101T000000Z"), 2 * NTWINS);
    /* every twin's own report, each paired with its own trace */
    int seen[NTWINS] = { 0 };
    DIR *d = opendir(s.dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 12 || strcmp(e->d_name + n - 12, ".report.json") != 0)
            continue;
        json_t *r = tt_load_json(tt_out(&s, "%s", e->d_name));
        long long count = tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count");
        assert_true(count % 1000 == 0 && count / 1000 >= 1 && count / 1000 <= NTWINS);
        seen[count / 1000 - 1]++;
        const char *trace = tt_str(json_object_get(r, "trace"), "path");
        assert_int_equal(strncmp(trace + strlen(s.dir) + 1, e->d_name, n - 12), 0);
        json_decref(r);
    }
    closedir(d);
    for (int i = 0; i < NTWINS; i++)
        if (seen[i] != 1)
            fail_msg("twin %d has %d reports", i, seen[i]);
    json_decref(check_dir(&s));
    tt_end(&s);
}

/* Flush a little (the trace fits), then record a trace that does not fit
 * under RLIMIT_FSIZE while the report does. */
static int body_trace_too_big(void *arg)
{
    (void)arg;
    int small = 5, big = 20000; /* ~1.4 MB of plain trace; the report ~3 KB */
    body_record(&small);
    TT_REQUIRE(tally_flush() == 0);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = { 64 * 1024, 64 * 1024 };
    TT_REQUIRE(setrlimit(RLIMIT_FSIZE, &rl) == 0);
    body_record(&big);
    TT_REQUIRE(tally_flush() == TALLY_EIO); /* the trace is lost, not the report */
    return 7;
}

/* Item 5: a trace that does not fit loses only itself: the report (complete
 * statistics) is written, says trace.lost, and the trace of the earlier
 * flush, which no longer matches it, is gone. On the old code: no new
 * report at all (the flushed 5 sections stay). */
static void test_trace_lost_report_kept(void **state)
{
    (void)state;
    tt_scenario s;
    const char *env[] = { "TALLY_TRACE_GZIP=0", "TALLY_MAX_SAMPLES=10", NULL };
    tt_begin(&s);
    tt_run(&s, env, body_trace_too_big, NULL);
    expect_one_complaint(&s, ".trace.json");
    if (strstr(s.err, "lost: the trace ") == NULL || strstr(s.err, "was written without it") == NULL)
        fail_msg("the complaint should say the trace alone is lost: %s", s.err);
    json_t *r = tt_load_json(tt_report(&s, "t-rank0"));
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 20005);
    json_t *trace = json_object_get(r, "trace");
    assert_true(json_is_true(json_object_get(trace, "enabled")));
    assert_true(json_is_null(json_object_get(trace, "path")));
    tt_assert_contains(tt_str(trace, "lost"), "File too large", "trace.lost");
    json_decref(r);
    assert_int_equal(tt_count_files(s.dir, ".trace.json"), 0);
    assert_int_equal(tt_count_files(s.dir, ".tmp"), 0);
    assert_int_equal(tt_count_files(s.dir, ""), 1);
    json_t *sum = check_dir(&s);
    assert_non_null(json_object_get(tt_summary_of(sum, "t-rank0.report.json"), "trace_lost"));
    json_decref(sum);
    tt_end(&s);
}

/* Item 10: TALLY_REPORT_PATH and TALLY_TRACE_PATH the same file: the report
 * is written, the trace is not (said on stderr and in trace.lost), instead
 * of one silently overwriting the other. */
static void test_report_and_trace_one_path(void **state)
{
    (void)state;
    tt_scenario s;
    char v1[1300], v2[1300], path[1200];
    tt_begin(&s);
    snprintf(path, sizeof path, "%s", tt_out(&s, "both.json"));
    snprintf(v1, sizeof v1, "TALLY_REPORT_PATH=%s", path);
    snprintf(v2, sizeof v2, "TALLY_TRACE_PATH=%s", path);
    const char *env[] = { v1, v2, "TALLY_TRACE_GZIP=0", NULL };
    tt_run(&s, env, body_record, NULL);
    assert_int_equal(s.status, 0);
    if (tt_count_lines(s.err, "tally:") != 1 || strstr(s.err, "the trace's path is the report's too") == NULL)
        fail_msg("expected one complaint about the shared path, got:\n%s", s.err);
    json_t *r = tt_load_json(path);
    assert_string_equal(tt_str(r, "format"), "tally-report");
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 100);
    tt_assert_contains(tt_str(json_object_get(r, "trace"), "lost"), "the report's too", "trace.lost");
    json_decref(r);
    assert_int_equal(tt_count_files(s.dir, ""), 1);
    json_decref(tt_check((const char *const[]){ path, NULL }));
    tt_end(&s);
}

/* A flush under rank 0, then tally_set_rank(3, 4), then the final write. */
static int body_flush_then_rank(void *arg)
{
    (void)arg;
    int n = 5;
    body_record(&n);
    TT_REQUIRE(tally_flush() == 0);
    tally_set_rank(3, 4);
    return body_record(&n);
}

/* Item 10: the files the flush wrote under rank 0 are gone once the rank-3
 * files exist (on the old code they stay, a stale rank 0 beside rank 3). */
static void test_flush_before_set_rank(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_flush_then_rank, NULL), 0);
    assert_string_equal(s.err, "");
    assert_int_equal(tt_count_files(s.dir, "rank0"), 0);
    assert_int_equal(tt_count_files(s.dir, ""), 2);
    json_t *r = tt_load_json(tt_report(&s, "t-rank3"));
    assert_int_equal(tt_int(r, "rank"), 3);
    assert_int_equal(tt_int(tt_find(json_object_get(r, "sections"), "name", "w"), "count"), 10);
    json_decref(r);
    json_decref(check_dir(&s));
    tt_end(&s);
}

/* ---- the checker rejects what it should ---------------------------------- */

static void expect_rejected(tt_scenario *s, void (*corrupt)(json_t *report), const char *why)
{
    json_t *r = tt_load_json(tt_report(s, "t-rank0"));
    corrupt(r);
    assert_int_equal(json_dump_file(r, tt_out(s, "bad.report.json"), 0), 0);
    json_decref(r);
    const char *args[] = { "--trace", tt_trace(s, "t-rank0"), tt_out(s, "bad.report.json"), NULL };
    if (tt_check_status(args) != 1)
        fail_msg("check_outputs.py accepted a report with %s", why);
    unlink(tt_out(s, "bad.report.json"));
}

static void drop_sections(json_t *r)
{
    json_object_del(r, "sections");
}
static void bad_rank_source(json_t *r)
{
    json_object_set_new(r, "rank_source", json_string("MY_RANK"));
}
static void negative_total(json_t *r)
{
    json_object_set_new(json_array_get(json_object_get(r, "sections"), 0), "total_ns", json_integer(-1));
}
static void count_plus_one(json_t *r)
{
    json_t *w = tt_find(json_object_get(r, "sections"), "name", "w");
    json_object_set_new(w, "count", json_integer(json_integer_value(json_object_get(w, "count")) + 1));
}
static void total_doubled(json_t *r)
{
    json_t *w = tt_find(json_object_get(r, "sections"), "name", "w");
    json_object_set_new(w, "total_ns", json_integer(2 * json_integer_value(json_object_get(w, "total_ns")) + 1000));
}
static void other_rank(json_t *r)
{
    json_object_set_new(r, "rank", json_integer(1));
}
static void other_pid(json_t *r)
{
    json_object_set_new(r, "pid", json_integer(1));
}
static void counter_count(json_t *r)
{
    json_object_set_new(json_array_get(json_object_get(r, "counters"), 0), "count", json_integer(1));
}
static void recorded_off(json_t *r)
{
    json_object_set_new(json_object_get(r, "trace"), "events_recorded", json_integer(5));
}

static void test_checker_rejects(void **state)
{
    (void)state;
    tt_scenario s;
    tt_begin(&s);
    assert_int_equal(tt_run(&s, NULL, body_record, NULL), 0);
    json_decref(check_dir(&s));
    expect_rejected(&s, drop_sections, "no sections (schema)");
    expect_rejected(&s, bad_rank_source, "an unknown rank_source (schema)");
    expect_rejected(&s, negative_total, "a negative total_ns (schema)");
    expect_rejected(&s, count_plus_one, "a count that the trace does not have");
    expect_rejected(&s, total_doubled, "a total_ns that the X durations do not sum to");
    expect_rejected(&s, other_rank, "a rank that the trace's distributedInfo does not have");
    expect_rejected(&s, other_pid, "a pid that the trace's events do not have");
    expect_rejected(&s, counter_count, "a counter count that the C events do not have");
    expect_rejected(&s, recorded_off, "events_recorded that the trace does not have");

    /* A trace event without thread_name metadata for its tid. */
    json_t *t = tt_load_json(tt_trace(&s, "t-rank0"));
    json_t *evs = json_object_get(t, "traceEvents");
    for (size_t i = json_array_size(evs); i-- > 0;) {
        json_t *e = json_array_get(evs, i);
        if (strcmp(tt_str(e, "ph"), "M") == 0 && strcmp(tt_str(e, "name"), "thread_name") == 0)
            json_array_remove(evs, i);
    }
    assert_int_equal(json_dump_file(t, tt_out(&s, "bad.trace.json"), 0), 0);
    json_decref(t);
    const char *args[] = { "--trace", tt_out(&s, "bad.trace.json"), tt_report(&s, "t-rank0"), NULL };
    assert_int_equal(tt_check_status(args), 1);
    tt_end(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_trace_variants, tt_teardown),
        cmocka_unit_test_teardown(test_trace_gzip_encoders, tt_teardown),
        cmocka_unit_test_teardown(test_unwritable_directory, tt_teardown),
        cmocka_unit_test_teardown(test_dev_full, tt_teardown),
        cmocka_unit_test_teardown(test_atomic_replace, tt_teardown),
        cmocka_unit_test_teardown(test_missing_directory_is_created, tt_teardown),
        cmocka_unit_test_teardown(test_second_run_keeps_the_first, tt_teardown),
        cmocka_unit_test_teardown(test_replace_keeps_mode_and_ignores_planted_links, tt_teardown),
        cmocka_unit_test_teardown(test_own_names_never_follow_planted_links, tt_teardown),
        cmocka_unit_test_teardown(test_disk_full_keeps_old_files, tt_teardown),
        cmocka_unit_test_teardown(test_in_place_paths, tt_teardown),
        cmocka_unit_test_teardown(test_checker_rejects, tt_teardown),
        cmocka_unit_test_teardown(test_same_pid_same_second, tt_teardown),
        cmocka_unit_test_teardown(test_trace_lost_report_kept, tt_teardown),
        cmocka_unit_test_teardown(test_report_and_trace_one_path, tt_teardown),
        cmocka_unit_test_teardown(test_flush_before_set_rank, tt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
