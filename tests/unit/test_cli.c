/*
 * test_cli.c - tools/cli.c: what the command line shares. --jobs defaults to
 * the CPUs this process may use: its affinity mask (taskset, a Slurm
 * allocation), bounded by the cgroup v2 quota (cpu.max of its cgroup and
 * every parent), not the machine's CPU count.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"
#include "tt_support.h"

/* A fake cgroup2 tree under a temp dir: "cgroup" (the mount) and "self" (the
 * process's /proc/self/cgroup). */
typedef struct fake {
    char dir[256], root[300], self[300];
} fake;

static void fake_init(fake *f, const char *self_line)
{
    snprintf(f->dir, sizeof f->dir, "%s/tally-cli-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(f->dir));
    snprintf(f->root, sizeof f->root, "%s/cgroup", f->dir);
    snprintf(f->self, sizeof f->self, "%s/self", f->dir);
    assert_int_equal(mkdir(f->root, 0700), 0);
    tt_write_file(f->self, self_line);
}

/* cpu.max of the cgroup at rel ("" the root, "/a/b"), made with its parents. */
static void fake_cpu_max(fake *f, const char *rel, const char *text)
{
    char path[600];
    snprintf(path, sizeof path, "%s%s", f->root, rel);
    for (char *p = path + strlen(f->root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0700);
            *p = '/';
        }
    mkdir(path, 0700);
    char file[700];
    snprintf(file, sizeof file, "%s/cpu.max", path);
    tt_write_file(file, text);
}

static int limit_of(fake *f)
{
    return tl_cli_cgroup_cpu_limit(f->root, f->self);
}

static void quota_of_own_cgroup(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, "12:memory:/x\n0::/job/step\n");
    fake_cpu_max(&f, "/job", "max 100000\n");
    fake_cpu_max(&f, "/job/step", "150000 100000\n"); /* 1.5 CPUs: 2 threads */
    assert_int_equal(limit_of(&f), 2);
    tt_rmtree(f.dir);
}

static void tightest_parent_wins(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, "0::/job/step\n");
    fake_cpu_max(&f, "/job", "100000 100000\n");
    fake_cpu_max(&f, "/job/step", "400000 100000\n");
    assert_int_equal(limit_of(&f), 1);
    tt_rmtree(f.dir);
}

static void container_root_quota(void **state)
{
    (void)state;
    fake f; /* a cgroup namespace: the container's cgroup is "/" */
    fake_init(&f, "0::/\n");
    fake_cpu_max(&f, "", "300000 100000\n");
    assert_int_equal(limit_of(&f), 3);
    tt_rmtree(f.dir);
}

static void no_quota(void **state)
{
    (void)state;
    fake f;
    fake_init(&f, "0::/a\n");
    fake_cpu_max(&f, "/a", "max 100000\n");
    assert_int_equal(limit_of(&f), 0);
    tt_rmtree(f.dir);
    fake_init(&f, "4:cpu:/a\n3:memory:/a\n"); /* cgroup v1 only */
    fake_cpu_max(&f, "/a", "100000 100000\n");
    assert_int_equal(limit_of(&f), 0);
    tt_rmtree(f.dir);
    fake_init(&f, "0::/a\n");
    fake_cpu_max(&f, "/a", "garbage\n");
    assert_int_equal(limit_of(&f), 0);
    assert_int_equal(tl_cli_cgroup_cpu_limit(f.root, "/nonexistent/cgroup"), 0);
    tt_rmtree(f.dir);
}

/* taskset -c 0: one CPU in the mask is one job, whatever the machine has. */
static void affinity_bounds_jobs(void **state)
{
    (void)state;
    cpu_set_t old, one;
    assert_int_equal(sched_getaffinity(0, sizeof old, &old), 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &old))
            first = c;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    assert_int_equal(tl_cli_cpus(), 1);
    const tl_cli_spec spec = { "inspect", "INPUT...", "test", NULL, NULL, 1, -1 };
    char *argv[] = { "inspect", "x", NULL };
    tl_cli cli;
    assert_int_equal(tl_cli_begin(&cli, 2, argv, &spec, NULL), -1);
    assert_int_equal(cli.jobs, 1);
    tl_cli_release(&cli);
    assert_int_equal(sched_setaffinity(0, sizeof old, &old), 0);
    assert_int_equal(tl_cli_cpus() >= 1, 1);
    assert_int_equal(tl_cli_cpus() <= CPU_COUNT(&old), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quota_of_own_cgroup),  cmocka_unit_test(tightest_parent_wins),
        cmocka_unit_test(container_root_quota), cmocka_unit_test(no_quota),
        cmocka_unit_test(affinity_bounds_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
