/*
 * collector_test_util.c - forked scenarios and file inspection for the
 * collector's end-to-end tests (see collector_test_util.h).
 */
#define _GNU_SOURCE
#include "collector_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TALLY_PYTHON_EXE
#define TALLY_PYTHON_EXE "/usr/bin/python3"
#endif
#define CHECKER TALLY_SOURCE_DIR "/tests/collector/check_outputs.py"

extern char **environ;

/* Launcher variables that tally_init() reads for the rank (config.c). */
static const char *const rank_vars[] = {
    "RANK",     "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",    "PMIX_SIZE",
    "PMI_RANK", "PMI_SIZE",   "MV2_COMM_WORLD_RANK",  "MV2_COMM_WORLD_SIZE",  "SLURM_PROCID", "SLURM_NTASKS",
};

/*
 * LeakSanitizer in a fork child of a multithreaded process cannot scan the
 * threads that did not survive the fork ("Running thread ... was not
 * suspended"). A failed dlopen (NVML absent) on the sampler thread leaves
 * glibc's dlerror buffer referenced only from that thread's TLS: a false leak
 * in every child forked while the sampler runs. Only that one is suppressed.
 */
#define LSAN_HOOK __attribute__((visibility("default"), used)) /* found by the runtime */
LSAN_HOOK const char *__lsan_default_suppressions(void);
LSAN_HOOK const char *__lsan_default_suppressions(void)
{
    return "leak:_dlerror_run\n";
}
/* Quietly: the tests read the children's stderr. */
LSAN_HOOK const char *__lsan_default_options(void);
LSAN_HOOK const char *__lsan_default_options(void)
{
    return "print_suppressions=0";
}

/* What the scenarios begun and not yet ended own (their directory and
 * captured output), kept here too: a failed assertion leaves the test through
 * longjmp, past tt_end(), and tt_teardown() releases it from this copy. */
#define MAX_LIVE 8
static struct owned {
    int used;
    char base[512];
    char *out, *err;
} live[MAX_LIVE];

static void release(struct owned *o)
{
    if (o->base[0])
        tt_rmtree(o->base);
    free(o->out);
    free(o->err);
    memset(o, 0, sizeof *o);
}

void tt_begin(tt_scenario *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->base, sizeof s->base, "%s/tally-test-XXXXXX", TALLY_BINARY_DIR);
    if (mkdtemp(s->base) == NULL) {
        snprintf(s->base, sizeof s->base, "/tmp/tally-test-XXXXXX");
        assert_non_null(mkdtemp(s->base));
    }
    snprintf(s->dir, sizeof s->dir, "%s/out", s->base);
    assert_int_equal(mkdir(s->dir, 0755), 0);
    s->slot = -1;
    for (int i = 0; i < MAX_LIVE && s->slot < 0; i++) {
        if (!live[i].used) {
            live[i].used = 1;
            snprintf(live[i].base, sizeof live[i].base, "%s", s->base);
            s->slot = i;
        }
    }
}

void tt_end(tt_scenario *s)
{
    struct owned own = { 1, "", s->out, s->err };
    snprintf(own.base, sizeof own.base, "%s", s->base);
    if (s->slot >= 0)
        memset(&live[s->slot], 0, sizeof live[s->slot]);
    release(&own);
    memset(s, 0, sizeof *s);
}

int tt_teardown(void **state)
{
    (void)state;
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i].used)
            release(&live[i]);
    return 0;
}

static void clean_environment(void)
{
    for (;;) {
        char name[256] = "";
        for (char **e = environ; *e != NULL; e++) {
            size_t n = strcspn(*e, "=");
            if (n < sizeof name && strncmp(*e, "TALLY_", 6) == 0) {
                memcpy(name, *e, n);
                name[n] = '\0';
                break;
            }
        }
        if (!name[0])
            break;
        unsetenv(name);
    }
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++)
        unsetenv(rank_vars[i]);
}

static void apply_env(const char *const *env)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
        const char *eq = strchr(env[i], '=');
        char name[256];
        if (eq == NULL || (size_t)(eq - env[i]) >= sizeof name)
            _exit(120);
        memcpy(name, env[i], (size_t)(eq - env[i]));
        name[eq - env[i]] = '\0';
        setenv(name, eq + 1, 1);
    }
}

/* Append what is readable on fd to *buf; 0 at EOF. */
static int drain(int fd, char **buf, size_t *len)
{
    char tmp[65536];
    ssize_t n = read(fd, tmp, sizeof tmp);
    if (n < 0 && errno == EINTR)
        return 1;
    if (n <= 0)
        return 0;
    char *p = realloc(*buf, *len + (size_t)n + 1);
    if (p == NULL)
        abort();
    memcpy(p + *len, tmp, (size_t)n);
    *len += (size_t)n;
    p[*len] = '\0';
    *buf = p;
    return 1;
}

/*
 * Fork; the child runs fn(arg) in a process group of its own, with
 * stdout/stderr on pipes that the parent drains into *out and *err. Returns
 * the child's exit status (128 + signal). Scenarios fork children of their
 * own, which inherit the pipes but not the child's alarm: once the child has
 * exited, descendants still holding the pipes get 10 s, then the whole group
 * is killed, so a hung grandchild can neither block the test nor outlive it.
 */
static int run_captured(void (*fn)(void *), void *arg, pid_t *pid_out, char **out, char **err)
{
    int po[2], pe[2];
    assert_int_equal(pipe(po), 0);
    assert_int_equal(pipe(pe), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        close(po[0]);
        close(pe[0]);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[1]);
        close(pe[1]);
        alarm(60); /* a hung scenario dies instead of hanging ctest */
        fn(arg);
        _exit(121); /* fn does not return */
    }
    setpgid(pid, pid); /* also here: whichever runs first */
    close(po[1]);
    close(pe[1]);
    size_t olen = 0, elen = 0;
    *out = calloc(1, 1);
    *err = calloc(1, 1);
    struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
    int open_fds = 2, st = 0, reaped = 0;
    double exited_at = 0;
    while (open_fds > 0) {
        if (!reaped && waitpid(pid, &st, WNOHANG) == pid) {
            reaped = 1;
            exited_at = tt_now_s();
        }
        if (reaped && tt_now_s() - exited_at > 10) {
            kill(-pid, SIGKILL); /* descendants left behind, holding the pipes */
            break;
        }
        if (poll(fds, 2, 200) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd >= 0 && fds[i].revents) {
                if (!drain(fds[i].fd, i == 0 ? out : err, i == 0 ? &olen : &elen)) {
                    close(fds[i].fd);
                    fds[i].fd = -1;
                    open_fds--;
                }
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    while (!reaped && waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    kill(-pid, SIGKILL); /* any descendant still in the group (ESRCH when none) */
    if (pid_out)
        *pid_out = pid;
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
}

struct scenario_call {
    tt_scenario *s;
    const char *const *env;
    tt_body body;
    void *arg;
};

static void scenario_child(void *p)
{
    struct scenario_call *c = p;
    clean_environment();
    setenv("TALLY_OUTPUT_DIR", c->s->dir, 1);
    setenv("TALLY_NAME", "t", 1);
    setenv("TALLY_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    apply_env(c->env);
    exit(c->body(c->arg)); /* exit(), not _exit(): libtally writes at exit */
}

int tt_run(tt_scenario *s, const char *const *env, tt_body body, void *arg)
{
    struct scenario_call c = { s, env, body, arg };
    free(s->out);
    free(s->err);
    s->status = run_captured(scenario_child, &c, &s->pid, &s->out, &s->err);
    if (s->slot >= 0) {
        live[s->slot].out = s->out;
        live[s->slot].err = s->err;
    }
    if ((s->status == 99 || s->status >= 120) && s->err[0]) /* TT_REQUIRE, crash, timeout */
        print_message("scenario exited %d; its stderr:\n%s\n", s->status, s->err);
    return s->status;
}

const char *tt_out(const tt_scenario *s, const char *fmt, ...)
{
    static char bufs[8][1200];
    static int next;
    char *b = bufs[next++ & 7];
    char name[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    snprintf(b, sizeof bufs[0], "%s/%s", s->dir, name);
    return b;
}

/* The one entry of dir named {stem}.{pid}-{time}[-k]{suffix} (any pid when
 * pid is 0): NULL if none; the test fails if there are several. */
static const char *find_output(const char *dir, const char *stem, long pid, const char *suffix)
{
    static char bufs[8][1200];
    static int next;
    char *b = bufs[next++ & 7];
    char prefix[300];
    if (pid > 0)
        snprintf(prefix, sizeof prefix, "%s.%ld-", stem, pid);
    else
        snprintf(prefix, sizeof prefix, "%s.", stem);
    size_t pl = strlen(prefix), xl = strlen(suffix);
    int found = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= pl + xl || strncmp(e->d_name, prefix, pl) != 0 || strcmp(e->d_name + n - xl, suffix) != 0 ||
            memchr(e->d_name + pl, '.', n - xl - pl) != NULL)
            continue;
        if (found++)
            fail_msg("%s: two outputs %s*%s (%s and %s)", dir, prefix, suffix, strrchr(b, '/') + 1, e->d_name);
        snprintf(b, sizeof bufs[0], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return found ? b : NULL;
}

const char *tt_output(const tt_scenario *s, const char *stem, long pid, const char *suffix)
{
    return find_output(s->dir, stem, pid, suffix);
}

const char *tt_report_of(const tt_scenario *s, const char *stem, long pid)
{
    const char *p = find_output(s->dir, stem, pid, ".report.json");
    if (p == NULL)
        fail_msg("%s: no %s.%ld-{time}.report.json", s->dir, stem, pid);
    return p;
}

const char *tt_trace_of(const tt_scenario *s, const char *stem, long pid)
{
    const char *p = find_output(s->dir, stem, pid, ".trace.json.gz");
    if (p == NULL)
        p = find_output(s->dir, stem, pid, ".trace.json");
    if (p == NULL)
        fail_msg("%s: no %s.%ld-{time}.trace.json(.gz)", s->dir, stem, pid);
    return p;
}

const char *tt_report(const tt_scenario *s, const char *stem)
{
    return tt_report_of(s, stem, s->pid > 0 ? (long)s->pid : (long)getpid());
}

const char *tt_trace(const tt_scenario *s, const char *stem)
{
    return tt_trace_of(s, stem, s->pid > 0 ? (long)s->pid : (long)getpid());
}

json_t *tt_load_json(const char *path)
{
    size_t len;
    char *text = tt_read_gunzip(path, &len);
    if (text == NULL)
        fail_msg("cannot read %s", path);
    json_error_t e;
    json_t *j = json_loadb(text, len, 0, &e);
    free(text);
    if (j == NULL)
        fail_msg("%s: invalid JSON at line %d: %s", path, e.line, e.text);
    return j;
}

json_t *tt_find(json_t *array, const char *key, const char *value)
{
    size_t i;
    json_t *x;
    if (!json_is_array(array))
        return NULL;
    json_array_foreach(array, i, x)
    {
        const char *v = json_string_value(json_object_get(x, key));
        if (v != NULL && strcmp(v, value) == 0)
            return x;
    }
    return NULL;
}

long long tt_int(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        fail_msg("member %s is not an integer", key);
    return json_integer_value(v);
}

double tt_num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        fail_msg("member %s is not a number", key);
    return json_number_value(v);
}

const char *tt_str(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        fail_msg("member %s is not a string", key);
    return json_string_value(v);
}

size_t tt_len(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_array(v))
        fail_msg("member %s is not an array", key);
    return json_array_size(v);
}

static void exec_checker(void *arg)
{
    const char *const *args = arg;
    const char *argv[64];
    size_t n = 0;
    argv[n++] = TALLY_PYTHON_EXE;
    argv[n++] = CHECKER;
    for (size_t i = 0; args[i] != NULL && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

static int checker(const char *const *args, char **out, char **err)
{
    return run_captured(exec_checker, (void *)args, NULL, out, err);
}

int tt_check_status(const char *const *args)
{
    char *out, *err;
    int st = checker(args, &out, &err);
    free(out);
    free(err);
    return st;
}

json_t *tt_check(const char *const *args)
{
    char *out, *err;
    int st = checker(args, &out, &err);
    if (st != 0) {
        print_error("check_outputs.py exited %d:\n%s\n", st, err);
        free(out);
        free(err);
        fail_msg("the outputs do not pass check_outputs.py");
    }
    json_error_t e;
    json_t *j = json_loads(out, 0, &e);
    free(out);
    free(err);
    if (j == NULL)
        fail_msg("check_outputs.py printed no JSON summary: %s", e.text);
    return j;
}

json_t *tt_summary_of(json_t *summary, const char *basename)
{
    json_t *reports = json_object_get(summary, "reports");
    json_t *r = json_object_get(reports, basename);
    /* "t-rank0.report.json" stands for the run's "t-rank0.{pid}-{time}.report.json" */
    size_t bl = strlen(basename), xl = strlen(".report.json");
    if (r == NULL && bl > xl && strcmp(basename + bl - xl, ".report.json") == 0) {
        const char *key;
        json_t *v;
        json_object_foreach(reports, key, v)
        {
            size_t kl = strlen(key);
            if (kl > bl && strncmp(key, basename, bl - xl) == 0 && key[bl - xl] == '.' &&
                strcmp(key + kl - xl, ".report.json") == 0 &&
                memchr(key + bl - xl + 1, '.', kl - xl - (bl - xl) - 1) == NULL) {
                if (r != NULL)
                    fail_msg("the checker saw two runs of %s", basename);
                r = v;
            }
        }
    }
    if (r == NULL)
        fail_msg("the checker did not see %s", basename);
    return r;
}
