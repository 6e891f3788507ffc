/*
 * test_output.c - common/output.c, the one output module, on its own: both
 * ways of making the temporary file (O_TMPFILE, and the named O_EXCL
 * fallback), commit of several outputs with rollback when one fails, the
 * input check, gzip, and the errors that must come before anything is
 * written. The command-line behaviour is in tests/cli/outputs.sh, the
 * collector's in test_outputs.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "output.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/tally-output-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    tl_output_named_temps = 0;
    return system(cmd) == 0 ? 0 : -1;
}

static const char *in_dir(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void put(const char *name, const char *text)
{
    FILE *f = fopen(in_dir(name), "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *name)
{
    static char buf[4096];
    FILE *f = fopen(in_dir(name), "r");
    if (f == NULL)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Entries in dir, and how many of them are temporary files (".tmp"/".old"). */
static int entries(int *temps)
{
    DIR *d = opendir(dir);
    int n = 0;
    *temps = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        *temps += strstr(e->d_name, ".tmp") != NULL || strstr(e->d_name, ".old") != NULL;
    }
    closedir(d);
    return n;
}

static void write_text(tl_output *o, const char *text)
{
    assert_int_equal(tl_output_write(o, text, strlen(text)), 0);
}

static void replace_keeps_mode(int named)
{
    int temps;
    tl_output_named_temps = named;
    put("r.txt", "old\n");
    chmod(in_dir("r.txt"), 0640);
    tl_output o;
    assert_int_equal(tl_output_open(&o, in_dir("r.txt"), 0, NULL, NULL), 0);
    assert_int_equal(o.kind, TL_OUTPUT_ATOMIC);
    write_text(&o, "new\n");
    /* until the commit, readers see the old file; the temporary file is
     * unnamed (not in the directory at all) or one named one */
    assert_string_equal(get("r.txt"), "old\n");
    assert_int_equal(entries(&temps), named ? 2 : 1);
    assert_int_equal(temps, named ? 1 : 0);
    assert_int_equal(tl_output_commit(&o), 0);
    assert_string_equal(get("r.txt"), "new\n");
    struct stat st;
    assert_int_equal(stat(in_dir("r.txt"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(entries(&temps), 1);
}

static void test_replace_unnamed(void **state)
{
    (void)state;
    replace_keeps_mode(0);
}

static void test_replace_named(void **state)
{
    (void)state;
    replace_keeps_mode(1);
}

/* The named temporary file is created O_EXCL|O_NOFOLLOW: it is a regular
 * file we made, never something that was there. */
static void test_named_temp_is_fresh(void **state)
{
    (void)state;
    tl_output_named_temps = 1;
    tl_output o;
    assert_int_equal(tl_output_open(&o, in_dir("n.txt"), 0, NULL, NULL), 0);
    assert_non_null(o.tmpname);
    struct stat st;
    assert_int_equal(fstatat(o.dirfd, o.tmpname, &st, AT_SYMLINK_NOFOLLOW), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_size, 0);
    assert_non_null(strstr(o.tmpname, "n.txt"));
    tl_output_abort(&o);
    int temps;
    assert_int_equal(entries(&temps), 0); /* abort removes it; n.txt never created */
}

static void test_abort_keeps_old(void **state)
{
    (void)state;
    int temps;
    for (int named = 0; named < 2; named++) {
        tl_output_named_temps = named;
        put("a.txt", "old\n");
        tl_output o;
        assert_int_equal(tl_output_open(&o, in_dir("a.txt"), 0, NULL, NULL), 0);
        write_text(&o, "half");
        tl_output_abort(&o);
        assert_string_equal(get("a.txt"), "old\n");
        assert_int_equal(entries(&temps), 1);
    }
}

/* Three outputs; the third cannot be renamed (its path became a non-empty
 * directory after it was opened): none of the three is replaced, the new
 * one is not left behind, and no temporary or backup file remains. */
static void test_commit_all_rolls_back(void **state)
{
    (void)state;
    for (int named = 0; named < 2; named++) {
        tl_output_named_temps = named;
        put("one.txt", "old one\n");
        unlink(in_dir("two.txt"));
        tl_output o1, o2, o3;
        assert_int_equal(tl_output_open(&o1, in_dir("one.txt"), 0, NULL, NULL), 0);
        assert_int_equal(tl_output_open(&o2, in_dir("two.txt"), 0, NULL, NULL), 0);
        assert_int_equal(tl_output_open(&o3, in_dir("three"), 0, NULL, NULL), 0);
        write_text(&o1, "new one\n");
        write_text(&o2, "new two\n");
        write_text(&o3, "new three\n");
        assert_int_equal(mkdir(in_dir("three"), 0755), 0);
        put("three/keep", "x");
        tl_output *all[] = { &o1, &o2, &o3 };
        assert_int_equal(tl_output_commit_all(all, 3), -1);
        assert_true(o3.failed);
        assert_non_null(strstr(o3.err, "cannot move the new file into place"));
        assert_string_equal(get("one.txt"), "old one\n");
        assert_null(get("two.txt"));
        int temps;
        assert_int_equal(entries(&temps), 2); /* one.txt, three/ */
        assert_int_equal(temps, 0);
        unlink(in_dir("three/keep"));
        assert_int_equal(rmdir(in_dir("three")), 0);
    }
}

static void test_commit_all_together(void **state)
{
    (void)state;
    put("x.txt", "old x\n");
    tl_output a, b;
    assert_int_equal(tl_output_open(&a, in_dir("x.txt"), 0, NULL, NULL), 0);
    assert_int_equal(tl_output_open(&b, in_dir("y.txt"), 0, NULL, NULL), 0);
    write_text(&a, "new x\n");
    write_text(&b, "new y\n");
    tl_output *all[] = { &a, &b };
    assert_int_equal(tl_output_commit_all(all, 2), 0);
    assert_string_equal(get("x.txt"), "new x\n");
    assert_string_equal(get("y.txt"), "new y\n");
    int temps;
    assert_int_equal(entries(&temps), 2);
    assert_int_equal(temps, 0);
}

static int refuse_ino;
static int is_input(dev_t dev, ino_t ino, void *user)
{
    (void)dev;
    return ino == *(ino_t *)user && refuse_ino;
}

static void test_errors_before_writing(void **state)
{
    (void)state;
    tl_output o;
    char err[TL_OUTPUT_ERR_LEN];
    /* a directory */
    assert_int_equal(tl_output_open(&o, dir, 0, NULL, NULL), -1);
    assert_non_null(strstr(o.err, "is a directory"));
    assert_int_equal(tl_output_check(dir, err, sizeof err), -1);
    /* a missing directory */
    assert_int_equal(tl_output_open(&o, in_dir("no/such.txt"), 0, NULL, NULL), -1);
    assert_non_null(strstr(o.err, "does not exist"));
    /* an input, by inode */
    put("in.json", "{}");
    struct stat st;
    stat(in_dir("in.json"), &st);
    ino_t ino = st.st_ino;
    refuse_ino = 1;
    assert_int_equal(tl_output_open(&o, in_dir("in.json"), 0, is_input, &ino), -1);
    assert_non_null(strstr(o.err, "is one of the inputs"));
    /* ... also through a symlink to it */
    assert_int_equal(symlink("in.json", in_dir("link.json")), 0);
    assert_int_equal(tl_output_open(&o, in_dir("link.json"), 0, is_input, &ino), -1);
    assert_string_equal(get("in.json"), "{}");
    int temps;
    assert_int_equal(entries(&temps), 2);
    assert_int_equal(temps, 0);
    /* a symlink loop */
    assert_int_equal(symlink("loop2", in_dir("loop1")), 0);
    assert_int_equal(symlink("loop1", in_dir("loop2")), 0);
    assert_int_equal(tl_output_open(&o, in_dir("loop1"), 0, NULL, NULL), -1);
    assert_non_null(strstr(o.err, "symbolic links"));
}

static void test_gzip(void **state)
{
    (void)state;
    tl_output o;
    assert_int_equal(tl_output_open(&o, in_dir("t.json.gz"), TL_OUTPUT_GZIP, NULL, NULL), 0);
    for (int i = 0; i < 1000; i++)
        write_text(&o, "{\"name\":\"x\"},");
    assert_int_equal(tl_output_commit(&o), 0);
    gzFile gz = gzopen(in_dir("t.json.gz"), "rb");
    assert_non_null(gz);
    char buf[20000];
    int n = gzread(gz, buf, sizeof buf);
    gzclose(gz);
    assert_int_equal(n, 13 * 1000);
}

/* A FIFO is written directly and stays a FIFO. */
static void test_fifo(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(in_dir("p"), 0600), 0);
    int rfd = open(in_dir("p"), O_RDONLY | O_NONBLOCK);
    assert_true(rfd >= 0);
    tl_output o;
    assert_int_equal(tl_output_open(&o, in_dir("p"), 0, NULL, NULL), 0);
    assert_int_equal(o.kind, TL_OUTPUT_DIRECT);
    write_text(&o, "through the pipe");
    assert_int_equal(tl_output_commit(&o), 0);
    char buf[64] = "";
    assert_int_equal(read(rfd, buf, sizeof buf), 16);
    close(rfd);
    struct stat st;
    assert_int_equal(lstat(in_dir("p"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replace_unnamed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_named_temp_is_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_keeps_old, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_all_rolls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commit_all_together, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_before_writing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gzip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
