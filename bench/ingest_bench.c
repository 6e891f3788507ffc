/*
 * ingest_bench.c - bench_ingest: how fast tally reads a large PyTorch profiler trace, and
 * with how much memory, beside the usual ways of reading JSON, all measured in one run
 * (docs/architecture.md, "Performance": >= 1 GB/s per core on uncompressed Kineto JSON end to end,
 * .gz close to inflating alone, peak memory not growing with the raw event count, --jobs 2
 * about 2x on 8 rank files).
 *
 * The one idea: every measurement runs in its own child process, so the peak RSS that
 * wait4() reports (ru_maxrss) belongs to that measurement alone; the parent stays small.
 * Children that run tally time their own work with CLOCK_MONOTONIC and send the figures
 * back through a pipe; external baselines (python3, zcat) are timed by the parent from fork
 * to exit. tally's readers run three times and the median is shown; baselines run once.
 *
 *   bench_ingest [options] [TRACE]
 *
 * Without TRACE a ~300 MB trace and its .gz are generated (gen_kineto_trace.c, linked in)
 * into --data-dir and reused on later runs. See bench/README.md for the table's columns.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#ifdef BENCH_HAVE_YAJL
#include <yajl/yajl_parse.h>
#endif

#include "gzip_source.h"
#include "ingest.h"
#include "json_scan.h"
#include "profile.h"
#include "read_trace.h"
#include "trace_stream.h"

#ifndef BENCH_DATA_DIR
#define BENCH_DATA_DIR "bench-data"
#endif
#ifndef BENCH_BUILD_TYPE
#define BENCH_BUILD_TYPE ""
#endif

int bench_gen_main(int argc, char **argv); /* gen_kineto_trace.c */

/* ---- options ------------------------------------------------------------ */

typedef struct bench_options {
    int quick;
    const char *data_dir;
    const char *trace;   /* given by the user, or NULL */
    double size_mb;      /* generated main trace */
    double rank_size_mb; /* each file of the --jobs set */
    int ranks;           /* files in the --jobs set */
    int rss_ranks;       /* files in the larger set of the memory-per-rank rows (0: none) */
    int repeat;
    int baselines; /* jansson, python, zcat */
    int jobs_test, rss_test;
    int gz_level;
    int generate_only;
    int e2e;                /* the CLI end to end on both shapes (needs BENCH_TALLY) */
    double scaling_max_mb;  /* the scaling series up to this size (0: skip) */
    long names_max;         /* the names series up to this many names (0: skip) */
    int memory;             /* --memory: only the memory figures (memory_figures) */
    const char *real_ranks; /* the real rank files replicated for memory per extra rank */
} bench_options;

/* ---- what a child measured ---------------------------------------------- */

typedef struct result {
    int ok;
    double secs;
    uint64_t events, gpu, cpu_side, steps, bytes, profiles;
    char note[160];
} result;

#define MAX_RUNS 16

typedef struct measured {
    int ok, ran, skipped;
    double t[MAX_RUNS], cpus[MAX_RUNS]; /* each run's wall and CPU seconds */
    int nruns;
    double secs;    /* median over the runs */
    long maxrss_kb; /* largest over the runs */
    double cpu;     /* CPU seconds (user + system) of the median run */
    result r;       /* the child's report of the last run */
    char note[160];
} measured;

/* Copy a string into a fixed buffer, cut to fit. */
static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* What wait4() says about a child: its peak RSS and the CPU time it used. */
typedef struct child_usage {
    long maxrss_kb;
    double cpu;
} child_usage;

static void take_usage(child_usage *u, const struct rusage *ru)
{
    u->maxrss_kb = ru->ru_maxrss;
    u->cpu = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec * 1e-6 + (double)ru->ru_stime.tv_sec +
             (double)ru->ru_stime.tv_usec * 1e-6;
}

/* Run fn(arg, &result) in a child; the child's peak RSS comes back from wait4(). */
typedef void (*child_fn)(const void *arg, result *r);

static int run_child(child_fn fn, const void *arg, result *out, child_usage *u)
{
    int fds[2];
    memset(out, 0, sizeof *out);
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        result r;
        memset(&r, 0, sizeof r);
        fn(arg, &r);
        const char *p = (const char *)&r;
        size_t left = sizeof r;
        while (left > 0) {
            ssize_t w = write(fds[1], p, left);
            if (w <= 0)
                break;
            p += w;
            left -= (size_t)w;
        }
        _exit(0);
    }
    close(fds[1]);
    size_t got = 0;
    char *p = (char *)out;
    while (got < sizeof *out) {
        ssize_t n = read(fds[0], p + got, sizeof *out - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR)
            return -1;
    }
    take_usage(u, &ru);
    if (got != sizeof *out) {
        memset(out, 0, sizeof *out);
        snprintf(out->note, sizeof out->note, "child %s",
                 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited without a result");
        return -1;
    }
    return 0;
}

/* Run argv (stdout to /dev/null when quiet_stdout) and time it from fork to exit. */
static int run_exec(char *const argv[], int quiet_stdout, double *secs, child_usage *u, char *note, size_t note_len)
{
    fflush(stdout);
    fflush(stderr);
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(note, note_len, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (quiet_stdout) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) {
                dup2(fd, 1);
                close(fd);
            }
        }
        execvp(argv[0], argv);
        fprintf(stderr, "bench_ingest: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            snprintf(note, note_len, "wait: %s", strerror(errno));
            return -1;
        }
    }
    *secs = now() - t0;
    take_usage(u, &ru);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            snprintf(note, note_len, "%s: %s", argv[0], strsignal(WTERMSIG(status)));
        else
            snprintf(note, note_len, "%s exited with %d", argv[0], WEXITSTATUS(status));
        return -1;
    }
    return 0;
}

/* A measurement is a set of runs: the median time is shown, with the CPU time of that run,
 * and the largest RSS of any run. A failed run ends the measurement. */
static void measure_begin(measured *m)
{
    memset(m, 0, sizeof *m);
    m->ran = 1;
    m->ok = 1;
}

static void measure_run(measured *m, child_fn fn, const void *arg)
{
    result r;
    child_usage u = { 0, 0 };
    if (!m->ok || m->nruns == MAX_RUNS)
        return;
    if (run_child(fn, arg, &r, &u) != 0 || !r.ok) {
        copy_str(m->note, sizeof m->note, r.note[0] ? r.note : "failed");
        m->r = r;
        m->ok = 0;
        return;
    }
    m->t[m->nruns] = r.secs;
    m->cpus[m->nruns] = u.cpu;
    m->nruns++;
    if (u.maxrss_kb > m->maxrss_kb)
        m->maxrss_kb = u.maxrss_kb;
    m->r = r;
}

static void measure_end(measured *m)
{
    double sorted[MAX_RUNS];
    if (!m->ok || m->nruns == 0) {
        m->ok = 0;
        return;
    }
    memcpy(sorted, m->t, (size_t)m->nruns * sizeof m->t[0]);
    qsort(sorted, (size_t)m->nruns, sizeof sorted[0], cmp_double);
    m->secs = sorted[m->nruns / 2];
    for (int i = 0; i < m->nruns; i++)
        if (m->t[i] == m->secs)
            m->cpu = m->cpus[i];
    copy_str(m->note, sizeof m->note, m->r.note);
}

static void measure(measured *m, child_fn fn, const void *arg, int repeat)
{
    measure_begin(m);
    for (int i = 0; i < repeat; i++)
        measure_run(m, fn, arg);
    measure_end(m);
}

/* Several measurements, their runs interleaved (a, b, c, a, b, c, ...), so that a change
 * in the machine's background load falls on all of them alike. */
typedef struct plan {
    measured *m;
    child_fn fn;
    const void *arg;
} plan;

static void measure_interleaved(plan *p, int n, int repeat)
{
    for (int j = 0; j < n; j++)
        measure_begin(p[j].m);
    for (int i = 0; i < repeat; i++)
        for (int j = 0; j < n; j++)
            measure_run(p[j].m, p[j].fn, p[j].arg);
    for (int j = 0; j < n; j++)
        measure_end(p[j].m);
}

/* ---- the measurements --------------------------------------------------- */

typedef struct job {
    const char *path;
    int jobs;
} job;

static uint64_t count_category(const tl_profile *p, const char *cat)
{
    uint32_t id = tl_strtab_find(&p->cats, cat, strlen(cat));
    return id != UINT32_MAX && id < p->cat_counts_cap ? p->cat_counts[id] : 0;
}

static uint64_t cpu_side_events(const tl_profile *p)
{
    return count_category(p, "cpu_op") + count_category(p, "user_annotation") + count_category(p, "cpu_instant_event") +
           count_category(p, "cuda_runtime") + count_category(p, "cuda_driver");
}

/* tally end to end: sniffing, gzip when the bytes say so, the trace reader, the profile. */
static void child_ingest(const void *arg, result *r)
{
    const job *j = arg;
    tl_ingest_options opt;
    tl_ingest_options_init(&opt);
    double t0 = now();
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(r->note, sizeof r->note, "%s: %s", j->path, strerror(errno));
        return;
    }
    struct stat st;
    fstat(fd, &st);
    tl_input in = { .name = j->path,
                    .path = j->path,
                    .member = NULL,
                    .from_walk = 0,
                    .size = (int64_t)st.st_size,
                    .read = tl_fd_read,
                    .ctx = &fd };
    tl_profile *p = tl_ingest_one(&in, &opt);
    close(fd);
    r->secs = now() - t0;
    if (p == NULL) {
        snprintf(r->note, sizeof r->note, "out of memory");
        return;
    }
    r->ok = !p->skipped && !p->error;
    r->events = p->events;
    r->gpu = p->ngpu;
    r->cpu_side = cpu_side_events(p);
    r->steps = p->nsteps;
    r->bytes = p->bytes;
    r->profiles = 1;
    if (!r->ok)
        copy_str(r->note, sizeof r->note, p->id.problems.n ? p->id.problems.v[0].text : "not read");
    else if (p->truncated || p->malformed)
        snprintf(r->note, sizeof r->note, "truncated %d, malformed %" PRIu64, p->truncated, p->malformed);
    tl_profile_free(p);
}

/* tally end to end from a .gz with zlib instead of isa-l (the environment is the child's). */
static void child_ingest_zlib(const void *arg, result *r)
{
    setenv("TALLY_GZIP_DECODER", "zlib", 1);
    child_ingest(arg, r);
}

/* The tokenizer alone: every event handed out, nothing kept. jobs == -1: the byte parser
 * alone, without the structural index. */
static void child_tokenize(const void *arg, result *r)
{
    const job *j = arg;
    tl_trace_options topt;
    tl_trace_options_init(&topt);
    topt.no_index = j->jobs == -1;
    double t0 = now();
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(r->note, sizeof r->note, "%s: %s", j->path, strerror(errno));
        return;
    }
    tl_trace_stream s;
    tl_trace_event ev;
    int rc;
    uint64_t gpu = 0;
    if (tl_trace_stream_open(&s, tl_fd_read, &fd, j->path, &topt) != 0) {
        snprintf(r->note, sizeof r->note, "out of memory");
        tl_trace_stream_release(&s);
        close(fd);
        return;
    }
    while ((rc = tl_trace_stream_next(&s, &ev)) == 1)
        gpu += ev.has_stream; /* touch the event so the loop is not empty */
    r->secs = now() - t0;
    r->ok = rc == 0 && !s.stats.truncated;
    r->events = s.stats.events;
    r->gpu = gpu;
    r->bytes = s.stats.bytes_read;
    if (!r->ok)
        copy_str(r->note, sizeof r->note, s.has_error ? s.error.text : "stream error");
    tl_trace_stream_release(&s);
    close(fd);
}

/* read(2) alone, in the tokenizer's 1 MiB blocks: the floor set by the page cache. */
static void child_read(const void *arg, result *r)
{
    const job *j = arg;
    size_t cap = 1u << 20;
    char *buf = malloc(cap);
    double t0 = now();
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || buf == NULL) {
        snprintf(r->note, sizeof r->note, "%s: %s", j->path, strerror(errno));
        free(buf);
        return;
    }
    ssize_t n;
    uint64_t total = 0;
    while ((n = read(fd, buf, cap)) > 0)
        total += (uint64_t)n;
    r->secs = now() - t0;
    r->ok = n == 0;
    r->bytes = total;
    close(fd);
    free(buf);
}

/* Written by child_mmap() so the compiler keeps its copies. */
volatile uint64_t bench_sink;

/* mmap instead of read(2): the file mapped and copied out in the tokenizer's 1 MiB blocks,
 * which is what an mmap byte source for the stream would cost (the stream keeps its own
 * buffer, so a mapping saves no copy). */
static void child_mmap(const void *arg, result *r)
{
    const job *j = arg;
    size_t cap = 1u << 20;
    char *buf = malloc(cap);
    double t0 = now();
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || buf == NULL || fstat(fd, &st) != 0) {
        snprintf(r->note, sizeof r->note, "%s: %s", j->path, strerror(errno));
        free(buf);
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t size = (size_t)st.st_size;
    const char *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (size && map == MAP_FAILED) {
        snprintf(r->note, sizeof r->note, "mmap: %s", strerror(errno));
        free(buf);
        close(fd);
        return;
    }
    if (size)
        madvise((void *)map, size, MADV_SEQUENTIAL);
    for (size_t off = 0; off < size; off += cap) {
        size_t k = size - off < cap ? size - off : cap;
        memcpy(buf, map + off, k);
        bench_sink += (unsigned char)buf[k - 1]; /* the copies must happen */
    }
    r->secs = now() - t0;
    r->ok = 1;
    r->bytes = size;
    if (size)
        munmap((void *)map, size);
    close(fd);
    free(buf);
}

#ifdef BENCH_HAVE_YAJL
/* yajl's streaming parser summing "dur" of every object (the events): callbacks for keys and
 * numbers only, fed 1 MiB blocks. */
typedef struct yajl_sum {
    int depth, want;
    double sum;
    uint64_t events;
} yajl_sum;

static int ys_map_key(void *ctx, const unsigned char *key, size_t len)
{
    yajl_sum *y = ctx;
    y->want = len == 3 && memcmp(key, "dur", 3) == 0;
    return 1;
}

static int ys_number(void *ctx, const char *num, size_t len)
{
    yajl_sum *y = ctx;
    if (y->want) {
        char tmp[64];
        size_t n = len < sizeof tmp - 1 ? len : sizeof tmp - 1;
        memcpy(tmp, num, n);
        tmp[n] = '\0';
        y->sum += strtod(tmp, NULL);
    }
    y->want = 0;
    return 1;
}

static int ys_start_map(void *ctx)
{
    yajl_sum *y = ctx;
    if (++y->depth == 3) /* {"traceEvents": [ {event} ] } */
        y->events++;
    return 1;
}

static int ys_end_map(void *ctx)
{
    ((yajl_sum *)ctx)->depth--;
    return 1;
}

static int ys_other(void *ctx)
{
    ((yajl_sum *)ctx)->want = 0;
    return 1;
}

static int ys_string(void *ctx, const unsigned char *s, size_t len)
{
    (void)s;
    (void)len;
    return ys_other(ctx);
}

static int ys_bool(void *ctx, int b)
{
    (void)b;
    return ys_other(ctx);
}

static void child_yajl(const void *arg, result *r)
{
    const job *j = arg;
    static const yajl_callbacks cb = { ys_other,     ys_bool,    NULL,       NULL,     ys_number, ys_string,
                                       ys_start_map, ys_map_key, ys_end_map, ys_other, ys_other };
    size_t cap = 1u << 20;
    unsigned char *buf = malloc(cap);
    yajl_sum y = { 0, 0, 0, 0 };
    double t0 = now();
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || buf == NULL) {
        snprintf(r->note, sizeof r->note, "%s: %s", j->path, strerror(errno));
        free(buf);
        return;
    }
    yajl_handle h = yajl_alloc(&cb, NULL, &y);
    ssize_t n;
    yajl_status st = yajl_status_ok;
    while (st == yajl_status_ok && (n = read(fd, buf, cap)) > 0)
        st = yajl_parse(h, buf, (size_t)n);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    r->secs = now() - t0;
    r->ok = st == yajl_status_ok;
    r->events = y.events;
    if (!r->ok)
        snprintf(r->note, sizeof r->note, "yajl: parse error");
    yajl_free(h);
    close(fd);
    free(buf);
}
#endif

/* tally's gzip source alone (isa-l or zlib inflate behind the same read callback): the floor for
 * tally's .gz ingest, as zcat is for gzip(1). */
static void child_inflate(const void *arg, result *r)
{
    const job *j = arg;
    size_t cap = 1u << 20;
    char *buf = malloc(cap);
    double t0 = now();
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || buf == NULL) {
        snprintf(r->note, sizeof r->note, "%s: %s", j->path, strerror(errno));
        free(buf);
        return;
    }
    tl_gzip_source g;
    ssize_t n = -1;
    uint64_t total = 0;
    if (tl_gzip_source_init(&g, tl_fd_read, &fd) == 0)
        while ((n = tl_gzip_source_read(&g, buf, cap)) > 0)
            total += (uint64_t)n;
    r->secs = now() - t0;
    r->ok = n == 0 && g.is_gzip;
    r->bytes = total;
    if (!r->ok)
        copy_str(r->note, sizeof r->note, g.error[0] ? g.error : "not gzip");
    tl_gzip_source_release(&g);
    close(fd);
    free(buf);
}

/* jansson's DOM: the whole document into memory, then freed (as Python does). */
static void child_jansson(const void *arg, result *r)
{
    const job *j = arg;
    json_error_t err;
    double t0 = now();
    json_t *root = json_load_file(j->path, 0, &err);
    if (root == NULL) {
        snprintf(r->note, sizeof r->note, "line %d: %.120s", err.line, err.text);
        return;
    }
    json_t *ev = json_object_get(root, "traceEvents");
    r->events = json_is_array(ev) ? json_array_size(ev) : 0;
    json_decref(root);
    r->secs = now() - t0;
    r->ok = 1;
}

/* tl_run_ingest over a directory of rank files, --jobs wide. */
static void child_run(const void *arg, result *r)
{
    const job *j = arg;
    tl_ingest_options opt;
    tl_ingest_options_init(&opt);
    opt.jobs = j->jobs;
    tl_run run;
    tl_run_init(&run);
    const char *paths[1] = { j->path };
    double t0 = now();
    size_t usable = tl_run_ingest(&run, paths, 1, &opt);
    r->secs = now() - t0;
    r->ok = usable > 0 && run.nunreadable == 0;
    r->profiles = run.n;
    r->bytes = run.bytes;
    for (size_t i = 0; i < run.n; i++) {
        r->events += run.profiles[i]->events;
        r->gpu += run.profiles[i]->ngpu;
    }
    if (!r->ok) {
        if (run.nunreadable)
            snprintf(r->note, sizeof r->note, "%s: %s", run.unreadable[0].path, run.unreadable[0].problems.v[0].text);
        else
            copy_str(r->note, sizeof r->note, "no usable profile");
    }
    tl_run_release(&run);
}

/* An empty child: the RSS every forked measurement starts from. */
static void child_nothing(const void *arg, result *r)
{
    (void)arg;
    r->ok = 1;
}

/* ---- data ---------------------------------------------------------------- */

static int file_size(const char *path, int64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    *size = (int64_t)st.st_size;
    return 0;
}

static int dir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int mkdirs(const char *path)
{
    char tmp[4096];
    copy_str(tmp, sizeof tmp, path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(tmp, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

typedef struct gen_call {
    char *argv[40];
    int argc;
} gen_call;

static void gen_child(const void *arg, result *r)
{
    const gen_call *c = arg;
    char *argv[41];
    memcpy(argv, c->argv, sizeof c->argv);
    argv[c->argc] = NULL;
    double t0 = now();
    r->ok = bench_gen_main(c->argc, argv) == 0;
    r->secs = now() - t0;
}

static void gen_add(gen_call *c, const char *s)
{
    if (c->argc < 39)
        c->argv[c->argc++] = (char *)s;
}

/* Run the generator with the given arguments plus "--out tmp" (or "--dir tmp"), then
 * rename tmp to `path`, so an interrupted run never leaves a half file to be reused. */
static int generate(const char *path, int is_dir, const char *const *args, double *secs)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    gen_call c;
    memset(&c, 0, sizeof c);
    gen_add(&c, "bench_gen_kineto_trace");
    for (int i = 0; args[i]; i++)
        gen_add(&c, args[i]);
    gen_add(&c, "--quiet");
    /* the final name, not the temporary one, so a .gz holds the same text as its .json */
    char name[4200];
    copy_str(name, sizeof name, path);
    size_t pl = strlen(path);
    if (pl > 3 && strcmp(path + pl - 3, ".gz") == 0)
        name[pl - 3] = '\0';
    gen_add(&c, "--trace-name");
    gen_add(&c, name);
    if (!is_dir && pl > 3 && strcmp(path + pl - 3, ".gz") == 0)
        gen_add(&c, "--gzip"); /* the temporary name does not end in .gz */
    gen_add(&c, is_dir ? "--dir" : "--out");
    gen_add(&c, tmp);
    result r;
    child_usage u;
    if (run_child(gen_child, &c, &r, &u) != 0 || !r.ok) {
        fprintf(stderr, "bench_ingest: generating %s failed\n", path);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "bench_ingest: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (secs)
        *secs = r.secs;
    return 0;
}

/* Compress or decompress a user's file with zlib (in a child). */
typedef struct zjob {
    const char *in, *out;
    int compress, level;
} zjob;

static void z_child(const void *arg, result *r)
{
    const zjob *z = arg;
    size_t cap = 1u << 20;
    char *buf = malloc(cap);
    if (buf == NULL)
        return;
    if (z->compress) {
        char mode[8];
        snprintf(mode, sizeof mode, "wb%d", z->level);
        int fd = open(z->in, O_RDONLY);
        gzFile g = gzopen(z->out, mode);
        ssize_t n = 0;
        if (fd >= 0 && g != NULL)
            while ((n = read(fd, buf, cap)) > 0)
                if (gzwrite(g, buf, (unsigned)n) != (int)n)
                    break;
        r->ok = fd >= 0 && g != NULL && n == 0 && gzclose(g) == Z_OK;
        if (fd >= 0)
            close(fd);
    } else {
        gzFile g = gzopen(z->in, "rb");
        FILE *f = fopen(z->out, "wb");
        int n = 0;
        if (g != NULL && f != NULL)
            while ((n = gzread(g, buf, (unsigned)cap)) > 0)
                if (fwrite(buf, 1, (size_t)n, f) != (size_t)n)
                    break;
        r->ok = g != NULL && f != NULL && n == 0 && fclose(f) == 0;
        if (g != NULL)
            gzclose(g);
    }
    free(buf);
}

static int zconvert(const char *in, const char *out, int compress, int level)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", out, (int)getpid());
    zjob z = { in, tmp, compress, level };
    result r;
    child_usage u;
    if (run_child(z_child, &z, &r, &u) != 0 || !r.ok || rename(tmp, out) != 0) {
        fprintf(stderr, "bench_ingest: cannot write %s\n", out);
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* An external program, once, if it is installed (else the row says so). */
static int in_path(const char *name)
{
    if (strchr(name, '/'))
        return access(name, X_OK) == 0;
    const char *path = getenv("PATH");
    char dir[4096];
    while (path && *path) {
        size_t n = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s/%s", (int)n, path, name);
        if (access(dir, X_OK) == 0)
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

static void exec_baseline(measured *m, char *const argv[])
{
    child_usage u = { 0, 0 };
    m->ran = 1;
    if (!in_path(argv[0])) {
        m->skipped = 1;
        snprintf(m->note, sizeof m->note, "skipped: %s is not installed", argv[0]);
        return;
    }
    m->ok = run_exec(argv, 1, &m->secs, &u, m->note, sizeof m->note) == 0;
    m->maxrss_kb = u.maxrss_kb;
    m->cpu = u.cpu;
}

/* ---- printing ------------------------------------------------------------ */

static const char *count_str(uint64_t v, char *buf, size_t len)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    size_t k = 0;
    for (int i = 0; i < n && k + 1 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0 && k + 2 < len)
            buf[k++] = ',';
        buf[k++] = tmp[i];
    }
    buf[k] = '\0';
    return buf;
}

/* The 1-minute load average: other work on the machine makes wall times meaningless. */
static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static double mb(uint64_t bytes)
{
    return (double)bytes / 1e6;
}

/* One row: the reader's figures over `bytes` of uncompressed JSON, and its time and RSS
 * as a multiple of the reference row's (tally's). */
static void row(const char *name, const measured *m, uint64_t bytes, uint64_t events, const measured *ref)
{
    if (!m->ran)
        return;
    if (!m->ok) {
        printf("%-30s %s\n", name, m->note[0] ? m->note : "failed");
        return;
    }
    double lo = m->secs;
    for (int i = 0; i < m->nruns; i++)
        lo = m->t[i] < lo ? m->t[i] : lo;
    char best[16] = "";
    if (m->nruns > 1)
        snprintf(best, sizeof best, "%.1f", mb(bytes) / lo);
    char mev[16] = "";
    if (events)
        snprintf(mev, sizeof mev, "%.2f", (double)events / 1e6 / m->secs);
    printf("%-30s %8.3f %8.3f %9.1f %9s %7s %9.1f MB", name, m->secs, m->cpu, mb(bytes) / m->secs, best, mev,
           (double)m->maxrss_kb / 1024.0);
    if (ref && ref->ok && ref->secs > 0) {
        printf("   %7.2fx %8.1fx", m->secs / ref->secs,
               ref->maxrss_kb ? (double)m->maxrss_kb / (double)ref->maxrss_kb : 0.0);
    }
    if (m->note[0])
        printf("   (%s)", m->note);
    putchar('\n');
}

static void header_row(void)
{
    printf("%-30s %8s %8s %9s %9s %7s %12s   %8s %9s\n", "reader", "seconds", "CPU s", "MB/s", "best", "Mev/s",
           "peak RSS", "time/ref", "RSS/ref");
}

static void print_env(void)
{
    char model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ')
                        c++;
                    copy_str(model, sizeof model, c);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(f);
    }
    printf("machine: %s, %ld cores; build: %s\n", model, sysconf(_SC_NPROCESSORS_ONLN),
           BENCH_BUILD_TYPE[0] ? BENCH_BUILD_TYPE : "(unknown type)");
    if (strcmp(BENCH_BUILD_TYPE, "Release") != 0 && strcmp(BENCH_BUILD_TYPE, "RelWithDebInfo") != 0)
        printf("note: not an optimized build; figures are not representative\n");
}

/* ---- main ---------------------------------------------------------------- */

static void usage(FILE *f)
{
    fputs("usage: bench_ingest [options] [TRACE]\n"
          "Measure tally's trace ingest beside jansson, Python's json and zcat (see bench/README.md).\n"
          "  TRACE               a trace to measure (.json or .json.gz); default: a generated one\n"
          "  --data-dir DIR      where generated data is kept and reused (default " BENCH_DATA_DIR ")\n"
          "  --size-mb M         size of the generated trace (default 300)\n"
          "  --ranks N           files in the --jobs set (default 8)\n"
          "  --rank-size-mb M    size of each of them (default 40)\n"
          "  --rss-ranks N       memory per rank: tally summary and report over the --jobs\n"
          "                      set and a set of N such files (default 32; 0: skip)\n"
          "  --repeat N          runs of each tally measurement, median shown (default 3)\n"
          "  --no-baselines      skip jansson, Python and zcat\n"
          "  --no-jobs           skip the --jobs measurement\n"
          "  --no-rss            skip the peak-RSS-vs-events measurement\n"
          "  --no-e2e            skip tally summary / report end to end on both shapes\n"
          "  --scaling-max-mb M  the scaling series on the GPU-heavy shape from 50 MB up to M\n"
          "                      (default 1600; 0: skip)\n"
          "  --names-max N       the names series: traces of 10^3 .. N distinct kernel names\n"
          "                      (default 1000000; 0: skip)\n"
          "  --memory            only the memory figures: bytes of peak RSS per GPU event and per\n"
          "                      extra rank of real rank files, beside baselines from the same run\n"
          "  --real-ranks DIR    the rank files --memory replicates (default: the corpus'\n"
          "                      h200-ddp-gloo)\n"
          "  --quick             a ~5 MB trace, tally and jansson only: a smoke test\n"
          "  --generate-only     make the data (if missing) and stop\n"
          "  --once PATH         ingest PATH once in this process and print the profile's\n"
          "                      counts (for perf record / valgrind); a directory is read with\n"
          "                      tl_run_ingest, --jobs N wide (default 1); with --tokenizer\n"
          "                      (or --byte-parser) only the tl_trace_stream_next loop\n",
          f);
}

#ifdef BENCH_TALLY
/* Peak RSS of `tally` (the CLI: ingest, analysis and output) over the --jobs set of rank files
 * and over a larger set of the same files, and what each extra rank adds. The report goes to a
 * file in the data directory (removed afterwards). Returns 1 when every run succeeded. */
static int rss_per_rank(const bench_options *o, const char *small, const char *large)
{
    char html[4300], json[4300], js1[] = "--jobs", one[] = "1", two[] = "2";
    char sum[] = "summary", rep[] = "report", q[] = "-q", oo[] = "-o", jj[] = "--json";
    char tally[] = BENCH_TALLY;
    snprintf(html, sizeof html, "%s/rss-report.html", o->data_dir);
    snprintf(json, sizeof json, "%s/rss-report.json", o->data_dir);
    const char *dirs[2] = { small, large };
    int n[2] = { o->ranks, o->quick ? o->ranks + 4 : o->rss_ranks }, ok = 1;
    struct {
        const char *label;
        char *argv[12];
    } cmds[] = {
        { "tally summary --jobs 1", { tally, sum, q, js1, one, NULL } },
        { "tally summary --jobs 2", { tally, sum, q, js1, two, NULL } },
        { "tally report --jobs 2", { tally, rep, q, js1, two, oo, html, NULL } },
        { "tally report --jobs 2 --json", { tally, rep, q, js1, two, oo, html, jj, json, NULL } },
    };
    printf("\nmemory per rank: peak RSS of %s over %d and %d rank files of %g MB (%s, %s);\n"
           "goal: at most 0.5 MiB per extra rank beyond the report's own tables\n",
           BENCH_TALLY, n[0], n[1], o->quick ? 0.5 : o->rank_size_mb, dirs[0], dirs[1]);
    char h0[32], h1[32];
    snprintf(h0, sizeof h0, "%d ranks", n[0]);
    snprintf(h1, sizeof h1, "%d ranks", n[1]);
    printf("%-32s %10s %10s %16s\n", "command", h0, h1, "per extra rank");
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        long kb[2] = { 0, 0 };
        char note[160] = "";
        for (int d = 0; d < 2 && ok; d++) {
            char *argv[16];
            size_t k = 0;
            for (; cmds[c].argv[k]; k++)
                argv[k] = cmds[c].argv[k];
            argv[k++] = (char *)dirs[d];
            argv[k] = NULL;
            /* the median of o->repeat runs' peaks: the peak moves a little with timing */
            long peaks[MAX_RUNS];
            int runs = o->repeat;
            for (int r = 0; r < runs; r++) {
                double secs;
                child_usage u = { 0, 0 };
                if (run_exec(argv, 1, &secs, &u, note, sizeof note) != 0) {
                    ok = 0;
                    break;
                }
                peaks[r] = u.maxrss_kb;
            }
            if (!ok)
                break;
            for (int a = 1; a < runs; a++) /* insertion sort: a few runs */
                for (int b = a; b > 0 && peaks[b] < peaks[b - 1]; b--) {
                    long t = peaks[b];
                    peaks[b] = peaks[b - 1];
                    peaks[b - 1] = t;
                }
            kb[d] = peaks[runs / 2];
        }
        if (!ok) {
            printf("%-32s %s\n", cmds[c].label, note);
            break;
        }
        double per = (double)(kb[1] - kb[0]) / 1024.0 / (double)(n[1] - n[0]);
        printf("%-32s %7.1f MB %7.1f MB %10.2f MiB%s\n", cmds[c].label, (double)kb[0] / 1024.0, (double)kb[1] / 1024.0,
               per,
               c == 3       ? " (the JSON aggregate carries every session's samples)"
               : per <= 0.5 ? " (met)"
                            : " (NOT met)");
    }
    unlink(html);
    unlink(json);
    return ok;
}
#endif

#ifdef BENCH_TALLY
/* ---- end to end: the CLI on both shapes, and how its time scales ---------- */

/* The median CPU time (user + system) and the largest peak RSS of `repeat` runs of argv. */
static int exec_cpu(char *const argv[], int repeat, double *cpu, long *rss_kb, char *note, size_t note_len)
{
    double c[MAX_RUNS];
    *rss_kb = 0;
    for (int r = 0; r < repeat; r++) {
        double secs;
        child_usage u = { 0, 0 };
        if (run_exec(argv, 1, &secs, &u, note, note_len) != 0)
            return -1;
        c[r] = u.cpu;
        if (u.maxrss_kb > *rss_kb)
            *rss_kb = u.maxrss_kb;
    }
    qsort(c, (size_t)repeat, sizeof c[0], cmp_double);
    *cpu = c[repeat / 2];
    return 0;
}

/* The events and GPU events of a trace (tally's own count, one ingest in a child). */
static void count_events(const char *path, uint64_t *events, uint64_t *gpu)
{
    job j = { path, 1 };
    result r;
    child_usage u;
    *events = *gpu = 0;
    if (run_child(child_ingest, &j, &r, &u) == 0 && r.ok) {
        *events = r.events;
        *gpu = r.gpu;
    }
}

/* Make a generated trace (plain) if it is not there yet. */
static int ensure_trace(const char *path, const char *const *args)
{
    int64_t sz;
    if (file_size(path, &sz) == 0)
        return 0;
    fprintf(stderr, "generating %s ...\n", path);
    return generate(path, 0, args, NULL);
}

/* tally summary / tally report of `path` beside cat and simdjson, in CPU seconds. */
static int e2e_shape(const bench_options *o, const char *label, const char *path)
{
    char tally[] = BENCH_TALLY, sum[] = "summary", rep[] = "report", q[] = "-q", oo[] = "-o", cat[] = "cat";
    char html[4300], file[4200];
    snprintf(html, sizeof html, "%s/e2e-report.html", o->data_dir);
    copy_str(file, sizeof file, path);
    int64_t size = 0;
    file_size(path, &size);
    uint64_t events, gpu;
    count_events(path, &events, &gpu);
    char ev[32], gev[32];
    printf("\n%s: %s (%.1f MB, %s events, %s GPU events)\n", label, path, mb((uint64_t)size),
           count_str(events, ev, sizeof ev), count_str(gpu, gev, sizeof gev));
    printf("%-30s %8s %12s %9s %12s %10s\n", "command", "CPU s", "MB/s of CPU", "ns/event", "peak RSS", "CPU/cat");
    struct {
        const char *name;
        char *argv[8];
        int optional;
    } cmds[] = {
        { "cat > /dev/null", { cat, file, NULL }, 0 },
#ifdef BENCH_SIMDJSON
        { "simdjson ondemand, sum dur", { (char *)BENCH_SIMDJSON, file, NULL }, 1 },
#endif
        { "tally summary", { tally, sum, q, file, NULL }, 0 },
        { "tally report -o FILE", { tally, rep, q, file, oo, html, NULL }, 0 },
    };
    double cat_cpu = 0, simd_cpu = 0;
    int ok = 1;
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        double cpu = 0;
        long rss = 0;
        char note[160] = "";
        if (exec_cpu(cmds[c].argv, o->repeat, &cpu, &rss, note, sizeof note) != 0) {
            printf("%-30s %s\n", cmds[c].name, note);
            ok = ok && cmds[c].optional;
            continue;
        }
        if (c == 0)
            cat_cpu = cpu;
        if (strncmp(cmds[c].name, "simdjson", 8) == 0)
            simd_cpu = cpu;
        printf("%-30s %8.3f %12.1f %9.1f %9.1f MB %9.2fx", cmds[c].name, cpu, cpu > 0 ? mb((uint64_t)size) / cpu : 0,
               events ? cpu * 1e9 / (double)events : 0, (double)rss / 1024.0, cat_cpu > 0 ? cpu / cat_cpu : 0);
        if (simd_cpu > 0 && strncmp(cmds[c].name, "tally", 5) == 0)
            printf("  (%.2fx simdjson)", cpu / simd_cpu);
        if (strcmp(cmds[c].name, "tally summary") == 0 && gpu > 0)
            printf("\n%-30s goal >= 1000 MB/s of CPU per core: %s; %.0f B of peak RSS per GPU event", "",
                   mb((uint64_t)size) / cpu >= 1000 ? "met" : "NOT met", (double)rss * 1024.0 / (double)gpu);
        putchar('\n');
    }
    unlink(html);
    return ok;
}

/* ---- memory: bytes per GPU event and per extra rank (issue 33) ----------- */

/* The peak RSS (KB) of argv: the median of `repeat` runs (the peak moves a little with timing). */
static long median_rss(char *const argv[], int repeat, char *note, size_t note_len)
{
    long peaks[MAX_RUNS];
    for (int r = 0; r < repeat; r++) {
        double secs;
        child_usage u = { 0, 0 };
        if (run_exec(argv, 1, &secs, &u, note, note_len) != 0)
            return -1;
        peaks[r] = u.maxrss_kb;
    }
    for (int a = 1; a < repeat; a++)
        for (int b = a; b > 0 && peaks[b] < peaks[b - 1]; b--) {
            long t = peaks[b];
            peaks[b] = peaks[b - 1];
            peaks[b - 1] = t;
        }
    return peaks[repeat / 2];
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY), out = in < 0 ? -1 : open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char buf[1 << 16];
    ssize_t n = 0;
    while (out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            n = -1;
            break;
        }
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return in < 0 || out < 0 || n < 0 ? -1 : 0;
}

/* dst/rank{i}.{i}.pt.trace.json[.gz] for i < n, copies of src's rank files in turn
 * (renamed, so each is a rank of its own); made once. A rank's JSON bytes (uncompressed,
 * the mean over src's files) in *rank_bytes. */
static int replicate_ranks(const char *src, const char *dst, int n, double *rank_bytes)
{
    char names[64][512];
    int nsrc = 0;
    FILE *ls;
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -E '^rank[0-9]+.*\\.(json|json\\.gz)$' | sort -V", src);
    if ((ls = popen(cmd, "r")) == NULL)
        return -1;
    while (nsrc < 64 && fgets(names[nsrc], sizeof names[nsrc], ls) != NULL) {
        names[nsrc][strcspn(names[nsrc], "\n")] = 0;
        nsrc++;
    }
    pclose(ls);
    if (nsrc == 0)
        return -1;
    double total = 0;
    for (int i = 0; i < nsrc; i++) {
        char from[4700];
        int64_t sz = 0;
        if (snprintf(from, sizeof from, "%s/%s", src, names[i]) >= (int)sizeof from)
            return -1;
        gzFile f = gzopen(from, "rb"); /* the JSON's bytes: gzread reads a plain file as is */
        char buf[1 << 16];
        int got;
        while (f != NULL && (got = gzread(f, buf, sizeof buf)) > 0)
            sz += got;
        if (f != NULL)
            gzclose(f);
        total += (double)sz;
    }
    *rank_bytes = total / nsrc;
    if (dir_exists(dst))
        return 0;
    if (mkdirs(dst) != 0)
        return -1;
    for (int i = 0; i < n; i++) {
        const char *name = names[i % nsrc];
        const char *gz = strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".gz") ? ".gz" : "";
        char from[4700], to[4700];
        if (snprintf(from, sizeof from, "%s/%s", src, name) >= (int)sizeof from ||
            snprintf(to, sizeof to, "%s/rank%d.%d.pt.trace.json%s", dst, i, i, gz) >= (int)sizeof to ||
            copy_file(from, to) != 0)
            return -1;
    }
    return 0;
}

/* Peak RSS per GPU event (the slope between two GPU-heavy traces, so what every
 * process holds anyway cancels) and per extra rank of real rank files
 * replicated 8 and 64 times, each beside a baseline from the same run. */
static int memory_figures(const bench_options *o)
{
    char tally[] = BENCH_TALLY, sum[] = "summary", rep[] = "report", val[] = "validate", q[] = "-q";
    char js[] = "--jobs", one[] = "1", oo[] = "-o", note[160] = "";
    char html[4300];
    snprintf(html, sizeof html, "%s/memory-report.html", o->data_dir);
    int ok = 1;

    /* per GPU event */
    double sizes[2] = { o->quick ? 5 : 50, o->quick ? 15 : 200 };
    char paths[2][4200];
    uint64_t gpu[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) {
        char sz[32];
        uint64_t events;
        snprintf(sz, sizeof sz, "%g", sizes[k]);
        snprintf(paths[k], sizeof paths[k], "%s/kineto-gpu-seed1-%gmb.json", o->data_dir, sizes[k]);
        const char *args[] = { "--shape", "gpu", "--seed", "1", "--size-mb", sz, NULL };
        if (ensure_trace(paths[k], args) != 0)
            return 0;
        count_events(paths[k], &events, &gpu[k]);
    }
    printf("\nmemory per GPU event: peak RSS over the GPU-heavy shape, %g MB (%" PRIu64 " GPU events) and %g MB "
           "(%" PRIu64 "),\nthe slope between them (median of %d runs each); goal (issue 33): <= 60 B\n",
           sizes[0], gpu[0], sizes[1], gpu[1], o->repeat);
    printf("%-34s %12s %12s %14s %8s\n", "command", "small", "large", "B per GPU event", "ratio");
    struct {
        const char *label;
        char *argv[8];
    } per_event[] = {
#ifdef BENCH_SIMDJSON
        { "baseline: simdjson (file in memory)", { (char *)BENCH_SIMDJSON, NULL } },
#endif
        { "tally summary --jobs 1", { tally, sum, q, js, one, NULL } },
        { "tally report --jobs 1", { tally, rep, q, js, one, oo, html, NULL } },
    };
    double base = 0;
    for (size_t c = 0; c < sizeof per_event / sizeof per_event[0] && gpu[1] > gpu[0]; c++) {
        long kb[2];
        for (int k = 0; k < 2; k++) {
            char *argv[12];
            size_t a = 0;
            for (; per_event[c].argv[a]; a++)
                argv[a] = per_event[c].argv[a];
            argv[a++] = paths[k];
            argv[a] = NULL;
            if ((kb[k] = median_rss(argv, o->repeat, note, sizeof note)) < 0)
                break;
        }
        if (kb[0] < 0 || kb[1] < 0) {
            printf("%-34s %s\n", per_event[c].label, note);
            ok = ok && strncmp(per_event[c].label, "baseline", 8) == 0;
            continue;
        }
        double per = (double)(kb[1] - kb[0]) * 1024.0 / (double)(gpu[1] - gpu[0]);
        if (strncmp(per_event[c].label, "baseline", 8) == 0)
            base = per;
        printf("%-34s %9.1f MB %9.1f MB %14.0f", per_event[c].label, kb[0] / 1024.0, kb[1] / 1024.0, per);
        if (base > 0 && strncmp(per_event[c].label, "baseline", 8) != 0)
            printf(" %7.2fx  %s", per / base, per <= 60 ? "(met)" : "(NOT met)");
        putchar('\n');
    }

    /* per extra rank, real traces */
    const char *src = o->real_ranks ? o->real_ranks : BENCH_REAL_RANKS;
    int n[2] = { 8, o->quick ? 16 : 64 };
    char dirs[2][4200];
    double rank_bytes = 0;
    for (int k = 0; k < 2; k++) {
        snprintf(dirs[k], sizeof dirs[k], "%s/real-ranks%d", o->data_dir, n[k]);
        if (replicate_ranks(src, dirs[k], n[k], &rank_bytes) != 0) {
            printf("\nmemory per extra rank: no rank files in %s (--real-ranks DIR)\n", src);
            unlink(html);
            return ok;
        }
    }
    printf("\nmemory per extra rank: peak RSS over the rank files of %s replicated as %d and %d ranks\n"
           "(%s, %s; a rank file holds %.0f KB of JSON), median of %d runs; goal (issue 33): <= 0.25 MiB\n",
           src, n[0], n[1], dirs[0], dirs[1], rank_bytes / 1024.0, o->repeat);
    printf("%-34s %12s %12s %14s %8s\n", "command", "fewer", "more", "KB per rank", "ratio");
    struct {
        const char *label;
        char *argv[10];
    } per_rank[] = {
        { "baseline: tally validate --jobs 1", { tally, val, q, js, one, NULL } },
        { "tally summary --jobs 1", { tally, sum, q, js, one, NULL } },
        { "tally report --jobs 1", { tally, rep, q, js, one, oo, html, NULL } },
    };
    for (size_t c = 0; c < sizeof per_rank / sizeof per_rank[0]; c++) {
        long kb[2];
        for (int k = 0; k < 2; k++) {
            char *argv[12];
            size_t a = 0;
            for (; per_rank[c].argv[a]; a++)
                argv[a] = per_rank[c].argv[a];
            argv[a++] = dirs[k];
            argv[a] = NULL;
            if ((kb[k] = median_rss(argv, o->repeat, note, sizeof note)) < 0)
                break;
        }
        if (kb[0] < 0 || kb[1] < 0) {
            printf("%-34s %s\n", per_rank[c].label, note);
            ok = 0;
            continue;
        }
        double per = (double)(kb[1] - kb[0]) / (double)(n[1] - n[0]);
        printf("%-34s %9.1f MB %9.1f MB %14.1f", per_rank[c].label, kb[0] / 1024.0, kb[1] / 1024.0, per);
        if (c > 0)
            printf(" %7.2fx  %s", per * 1024.0 / rank_bytes, per <= 256 ? "(met)" : "(NOT met)");
        putchar('\n');
    }
    printf("ratio: per GPU event, over simdjson's (the file in memory) in the same run; per extra rank,\n"
           "over a rank's JSON bytes; validate reads every file and keeps identities only (the floor)\n");
    unlink(html);
    return ok;
}

/* Least squares of log(y) on log(x): the exponent of y ~ x^k. */
static double fit_exponent(const double *x, const double *y, int n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
    }
    double d = n * sxx - sx * sx;
    return d != 0 ? (n * sxy - sx * sy) / d : 0;
}

/* `tally summary` over GPU-heavy traces of growing size (and, at one size, more steps of
 * fewer layers; and more rank files): CPU time against size, and the fitted exponent. */
static int scaling(const bench_options *o)
{
    char tally[] = BENCH_TALLY, sum[] = "summary", q[] = "-q";
    int ok = 1;
    double xs[16], ys[16];
    int n = 0;
    printf("\nscaling: tally summary on the GPU-heavy shape (--shape gpu), median CPU s of %d runs\n", o->repeat);
    printf("%-34s %10s %12s %8s %12s %10s %12s\n", "trace", "MB", "events", "CPU s", "MB/s of CPU", "ns/event",
           "peak RSS");
    for (double size = 50; size <= o->scaling_max_mb * 1.001 && n < 16; size *= 2) {
        char path[4200], sz[32];
        snprintf(sz, sizeof sz, "%g", size);
        snprintf(path, sizeof path, "%s/kineto-gpu-seed1-%gmb.json", o->data_dir, size);
        const char *args[] = { "--shape", "gpu", "--seed", "1", "--size-mb", sz, NULL };
        if (ensure_trace(path, args) != 0)
            return 0;
        int64_t bytes = 0;
        file_size(path, &bytes);
        uint64_t events, gpu;
        count_events(path, &events, &gpu);
        char *argv[] = { tally, sum, q, path, NULL };
        double cpu;
        long rss;
        char note[160] = "", ev[32];
        if (exec_cpu(argv, o->repeat, &cpu, &rss, note, sizeof note) != 0) {
            printf("%-34s %s\n", path, note);
            ok = 0;
            break;
        }
        char label[64];
        snprintf(label, sizeof label, "size %g MB", size);
        printf("%-34s %10.1f %12s %8.3f %12.1f %10.1f %9.1f MB\n", label, mb((uint64_t)bytes),
               count_str(events, ev, sizeof ev), cpu, mb((uint64_t)bytes) / cpu, cpu * 1e9 / (double)events,
               (double)rss / 1024.0);
        xs[n] = (double)bytes;
        ys[n] = cpu;
        n++;
    }
    if (n >= 2)
        printf("fitted exponent of CPU time vs size (%d sizes): %.3f (goal <= 1.01: %s)\n", n, fit_exponent(xs, ys, n),
               fit_exponent(xs, ys, n) <= 1.01 ? "met" : "NOT met");
    /* steps: the same size with a quarter of the layers, so four times the steps */
    {
        char path[4200];
        snprintf(path, sizeof path, "%s/kineto-gpu-seed1-200mb-layers6.json", o->data_dir);
        const char *args[] = { "--shape", "gpu", "--seed", "1", "--size-mb", "200", "--layers", "6", NULL };
        if (ensure_trace(path, args) == 0) {
            int64_t bytes = 0;
            file_size(path, &bytes);
            uint64_t events, gpu;
            count_events(path, &events, &gpu);
            char *argv[] = { tally, sum, q, path, NULL };
            double cpu;
            long rss;
            char note[160] = "", ev[32];
            if (exec_cpu(argv, o->repeat, &cpu, &rss, note, sizeof note) == 0)
                printf("%-34s %10.1f %12s %8.3f %12.1f %10.1f %9.1f MB\n", "200 MB, 6 layers (4x the steps)",
                       mb((uint64_t)bytes), count_str(events, ev, sizeof ev), cpu, mb((uint64_t)bytes) / cpu,
                       cpu * 1e9 / (double)events, (double)rss / 1024.0);
        }
    }
    /* ranks: 1, 4 and 16 rank files of 25 MB each */
    printf("ranks (files of 25 MB, --shape gpu), tally summary --jobs 1:\n");
    double rx[3], ry[3];
    int nr = 0;
    for (int ranks = 1; ranks <= 16; ranks *= 4) {
        char dir[4200], nrs[16];
        snprintf(nrs, sizeof nrs, "%d", ranks);
        snprintf(dir, sizeof dir, "%s/gpu-ranks%d-25mb", o->data_dir, ranks);
        if (!dir_exists(dir)) {
            const char *args[] = { "--shape",   "gpu", "--seed", "3", "--ranks", nrs,
                                   "--size-mb", "25",  "--jobs", "2", NULL };
            fprintf(stderr, "generating %s ...\n", dir);
            if (generate(dir, 1, args, NULL) != 0)
                return 0;
        }
        char js[] = "--jobs", one[] = "1";
        char *argv[] = { tally, sum, q, js, one, dir, NULL };
        double cpu;
        long rss;
        char note[160] = "";
        if (exec_cpu(argv, o->repeat, &cpu, &rss, note, sizeof note) != 0) {
            printf("  %d ranks: %s\n", ranks, note);
            ok = 0;
            break;
        }
        printf("  %2d ranks: %8.3f CPU s, %.3f s a rank, peak RSS %.1f MB\n", ranks, cpu, cpu / ranks,
               (double)rss / 1024.0);
        rx[nr] = ranks;
        ry[nr] = cpu;
        nr++;
    }
    if (nr >= 2)
        printf("fitted exponent of CPU time vs ranks: %.3f\n", fit_exponent(rx, ry, nr));
    return ok;
}
/* A trace of n distinct kernel names, name i (i % 7) + 1 times (~4 events a name, ~120 bytes
 * an event: tests/reliability/gen_names.py's shape), written once to path. */
static int write_names_trace(const char *path, long n)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fputs("{\"traceEvents\":[\n", f);
    for (long i = 0; i < n; i++)
        for (long k = 0; k <= i % 7; k++)
            fprintf(f,
                    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel_%07ld\",\"ts\":%ld,\"dur\":%ld,\"pid\":0,"
                    "\"tid\":7,\"args\":{\"stream\":7,\"device\":0}},\n",
                    i, i * 100 + k * 10, 5 + i % 3);
    fputs("{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"end\",\"ts\":0,\"dur\":1,\"pid\":1,\"tid\":1}]}\n", f);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/* `tally summary` over traces of 10^3 .. names_max distinct names (issue 33: names beyond
 * 10^5 without a cliff): CPU time and peak RSS against the names, CPU per event, and the
 * fitted exponent of CPU time against events (a cliff shows as a jump in ns an event). With
 * tally's default name budget (--max-names 100,000) the names past it are folded. */
static int names_series(const bench_options *o)
{
    char tally[] = BENCH_TALLY, sum[] = "summary", q[] = "-q", js[] = "--jobs", one[] = "1";
    double xs[8], ys[8];
    int n = 0, ok = 1;
    printf("\nnames: tally summary --jobs 1 on traces of N distinct kernel names (~4 events a name), "
           "median CPU s of %d runs\n",
           o->repeat);
    printf("%-34s %12s %8s %10s %12s %14s\n", "names", "events", "CPU s", "ns/event", "peak RSS", "RSS per name");
    for (long names = 1000; names <= o->names_max && n < 8; names *= 10) {
        char path[4200];
        snprintf(path, sizeof path, "%s/names-%ld.json", o->data_dir, names);
        int64_t sz;
        if (file_size(path, &sz) != 0) {
            fprintf(stderr, "generating %s ...\n", path);
            if (write_names_trace(path, names) != 0) {
                printf("%-34s cannot write %s\n", "", path);
                return 0;
            }
        }
        uint64_t events = 0;
        for (long i = 0; i < names; i++)
            events += (uint64_t)(i % 7 + 1);
        events += 1;
        char *argv[] = { tally, sum, q, js, one, path, NULL };
        double cpu;
        long rss;
        char note[160] = "", label[64], ev[32];
        if (exec_cpu(argv, o->repeat, &cpu, &rss, note, sizeof note) != 0) {
            printf("%-34ld %s\n", names, note);
            ok = 0;
            break;
        }
        snprintf(label, sizeof label, "%ld", names);
        printf("%-34s %12s %8.3f %10.1f %9.1f MB %11.0f B\n", label, count_str(events, ev, sizeof ev), cpu,
               cpu * 1e9 / (double)events, (double)rss / 1024.0, (double)rss * 1024.0 / (double)names);
        xs[n] = (double)events;
        ys[n] = cpu;
        n++;
    }
    if (n >= 2)
        printf("fitted exponent of CPU time vs events (%d traces): %.3f (1: no cliff)\n", n, fit_exponent(xs, ys, n));
    return ok;
}
#endif

/* tokenize: 0 the whole ingest, 1 the tokenizer alone from the index, 2 with the byte parser */
static int once(const char *path, int jobs, int tokenize)
{
    job j = { path, tokenize == 2 ? -1 : jobs };
    result r;
    memset(&r, 0, sizeof r);
    if (tokenize)
        child_tokenize(&j, &r);
    else if (dir_exists(path))
        child_run(&j, &r);
    else
        child_ingest(&j, &r);
    char e[32], g[32];
    printf("%s: %s, %.3f s, %.1f MB (%.0f MB/s), %s events, %s GPU events, %" PRIu64 " steps, %" PRIu64
           " profiles%s%s\n",
           path, r.ok ? "ok" : "FAILED", r.secs, mb(r.bytes), mb(r.bytes) / r.secs, count_str(r.events, e, sizeof e),
           count_str(r.gpu, g, sizeof g), r.steps, r.profiles, r.note[0] ? ": " : "", r.note);
    return r.ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    bench_options o;
    memset(&o, 0, sizeof o);
    o.data_dir = BENCH_DATA_DIR;
    o.size_mb = 300;
    o.rank_size_mb = 40;
    o.ranks = 8;
    o.rss_ranks = 32;
    o.repeat = 3;
    o.baselines = 1;
    o.jobs_test = 1;
    o.rss_test = 1;
    o.gz_level = 6;
    o.e2e = 1;
    o.scaling_max_mb = 1600;
    o.names_max = 1000000;
    const char *once_path = NULL;
    int once_jobs = 1, once_tokenize = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--quick")) {
            o.quick = 1;
        } else if (!strcmp(a, "--data-dir") && more) {
            o.data_dir = argv[++i];
        } else if (!strcmp(a, "--size-mb") && more) {
            o.size_mb = atof(argv[++i]);
        } else if (!strcmp(a, "--rank-size-mb") && more) {
            o.rank_size_mb = atof(argv[++i]);
        } else if (!strcmp(a, "--ranks") && more) {
            o.ranks = atoi(argv[++i]);
        } else if (!strcmp(a, "--rss-ranks") && more) {
            o.rss_ranks = atoi(argv[++i]);
        } else if (!strcmp(a, "--repeat") && more) {
            o.repeat = atoi(argv[++i]);
        } else if (!strcmp(a, "--no-baselines")) {
            o.baselines = 0;
        } else if (!strcmp(a, "--no-jobs")) {
            o.jobs_test = 0;
        } else if (!strcmp(a, "--no-rss")) {
            o.rss_test = 0;
        } else if (!strcmp(a, "--no-e2e")) {
            o.e2e = 0;
        } else if (!strcmp(a, "--scaling-max-mb") && more) {
            o.scaling_max_mb = atof(argv[++i]);
        } else if (!strcmp(a, "--names-max") && more) {
            o.names_max = atol(argv[++i]);
        } else if (!strcmp(a, "--memory")) {
            o.memory = 1;
        } else if (!strcmp(a, "--real-ranks") && more) {
            o.real_ranks = argv[++i];
        } else if (!strcmp(a, "--generate-only")) {
            o.generate_only = 1;
        } else if (!strcmp(a, "--once") && more) {
            once_path = argv[++i];
        } else if (!strcmp(a, "--jobs") && more) {
            once_jobs = atoi(argv[++i]);
        } else if (!strcmp(a, "--tokenizer")) {
            once_tokenize = 1;
        } else if (!strcmp(a, "--byte-parser")) {
            once_tokenize = 2;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-') {
            usage(stderr);
            return 2;
        } else if (o.trace == NULL) {
            o.trace = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (once_path)
        return once(once_path, once_jobs < 1 ? 1 : once_jobs, once_tokenize);
    if (o.repeat < 1)
        o.repeat = 1;
    if (o.repeat > MAX_RUNS)
        o.repeat = MAX_RUNS;
    if (o.ranks < 1)
        o.ranks = 1;
    if (o.size_mb <= 0 || o.rank_size_mb <= 0) {
        fprintf(stderr, "bench_ingest: sizes must be positive\n");
        return 2;
    }
    if (o.quick)
        o.repeat = 1;
    if (mkdirs(o.data_dir) != 0) {
        fprintf(stderr, "bench_ingest: %s: %s\n", o.data_dir, strerror(errno));
        return 1;
    }
#ifdef BENCH_TALLY
    if (o.memory) {
        print_env();
        return memory_figures(&o) ? 0 : 1;
    }
#endif

    /* ---- the main trace and its .gz ---- */
    char plain[4096], gz[4200], size_arg[32], steps_arg[32];
    int64_t plain_size = 0, gz_size = 0;
    if (o.trace) {
        size_t n = strlen(o.trace);
        const char *base = strrchr(o.trace, '/');
        base = base ? base + 1 : o.trace;
        if (n > 3 && !strcmp(o.trace + n - 3, ".gz")) {
            copy_str(gz, sizeof gz, o.trace);
            snprintf(plain, sizeof plain, "%s/%.*s", o.data_dir, (int)(strlen(base) - 3), base);
            if (file_size(plain, &plain_size) != 0 && zconvert(gz, plain, 0, 0) != 0)
                return 1;
        } else {
            copy_str(plain, sizeof plain, o.trace);
            snprintf(gz, sizeof gz, "%s.gz", o.trace);
            if (file_size(gz, &gz_size) != 0) {
                snprintf(gz, sizeof gz, "%s/%s.gz", o.data_dir, base);
                if (file_size(gz, &gz_size) != 0 && zconvert(plain, gz, 1, o.gz_level) != 0)
                    return 1;
            }
        }
    } else {
        double size = o.quick ? 5 : o.size_mb;
        snprintf(size_arg, sizeof size_arg, "%g", size);
        snprintf(plain, sizeof plain, "%s/kineto-seed1-%gmb.json", o.data_dir, size);
        snprintf(gz, sizeof gz, "%s.gz", plain);
        if (file_size(plain, &plain_size) != 0) {
            double secs = 0;
            const char *args[] = { "--seed", "1", "--size-mb", size_arg, NULL };
            fprintf(stderr, "generating %s ...\n", plain);
            if (generate(plain, 0, args, &secs) != 0)
                return 1;
            file_size(plain, &plain_size);
            fprintf(stderr, "  %.1f MB in %.2f s: %.0f MB/s\n", mb((uint64_t)plain_size), secs,
                    mb((uint64_t)plain_size) / secs);
        }
        if (file_size(gz, &gz_size) != 0) {
            double secs = 0;
            char level[8];
            snprintf(level, sizeof level, "%d", o.gz_level);
            const char *args[] = { "--seed", "1", "--size-mb", size_arg, "--level", level, NULL };
            fprintf(stderr, "generating %s (gzip -%d) ...\n", gz, o.gz_level);
            if (generate(gz, 0, args, &secs) != 0)
                return 1;
            fprintf(stderr, "  in %.2f s: %.0f MB/s of JSON\n", secs, mb((uint64_t)plain_size) / secs);
        }
    }
    if (file_size(plain, &plain_size) != 0 || file_size(gz, &gz_size) != 0) {
        fprintf(stderr, "bench_ingest: %s or %s is missing\n", plain, gz);
        return 1;
    }

    /* ---- the same trace with 3x the CPU-side events, and the rank files for --jobs ---- */
    char cpu3[4200] = "", dir[4200] = "";
    int64_t cpu3_size = 0;
    if (o.rss_test && !o.trace) {
        snprintf(cpu3, sizeof cpu3, "%s/kineto-seed1-%gmb-cpu3x.json", o.data_dir, o.quick ? 5.0 : o.size_mb);
        if (file_size(cpu3, &cpu3_size) != 0) {
            /* as many steps as the main trace: read it once to count them */
            job j0 = { plain, 1 };
            result r0;
            child_usage u0;
            if (run_child(child_ingest, &j0, &r0, &u0) != 0 || !r0.ok || r0.steps == 0) {
                fprintf(stderr, "bench_ingest: %s: cannot count its steps\n", plain);
                return 1;
            }
            snprintf(steps_arg, sizeof steps_arg, "%" PRIu64, r0.steps);
            const char *args[] = { "--seed", "1", "--steps", steps_arg, "--cpu-mult", "3", NULL };
            fprintf(stderr, "generating %s ...\n", cpu3);
            if (generate(cpu3, 0, args, NULL) != 0)
                return 1;
            file_size(cpu3, &cpu3_size);
        }
    }
    if (o.jobs_test) {
        char rsz[32], nr[16];
        double per = o.quick ? 0.5 : o.rank_size_mb;
        snprintf(rsz, sizeof rsz, "%g", per);
        snprintf(nr, sizeof nr, "%d", o.ranks);
        snprintf(dir, sizeof dir, "%s/ranks%d-%gmb", o.data_dir, o.ranks, per);
        if (!dir_exists(dir)) {
            const char *args_quick[] = { "--seed",  "2", "--ranks", nr,  "--layers", "2",
                                         "--steps", "2", "--jobs",  "2", NULL };
            const char *args[] = { "--seed", "2", "--ranks", nr, "--size-mb", rsz, "--jobs", "2", NULL };
            double secs = 0;
            fprintf(stderr, "generating %s ...\n", dir);
            if (generate(dir, 1, o.quick ? args_quick : args, &secs) != 0)
                return 1;
            fprintf(stderr, "  %d files in %.2f s (2 processes)\n", o.ranks, secs);
        }
    }
    /* the larger set for memory per rank: the same files, more of them */
    char rdir[4200] = "";
#ifdef BENCH_TALLY
    if (o.jobs_test && o.rss_ranks > o.ranks) {
        char rsz[32], nr[16];
        double per = o.quick ? 0.5 : o.rank_size_mb;
        int n = o.quick ? o.ranks + 4 : o.rss_ranks;
        snprintf(rsz, sizeof rsz, "%g", per);
        snprintf(nr, sizeof nr, "%d", n);
        snprintf(rdir, sizeof rdir, "%s/ranks%d-%gmb", o.data_dir, n, per);
        if (!dir_exists(rdir)) {
            const char *args_quick[] = { "--seed",  "2", "--ranks", nr,  "--layers", "2",
                                         "--steps", "2", "--jobs",  "2", NULL };
            const char *args[] = { "--seed", "2", "--ranks", nr, "--size-mb", rsz, "--jobs", "2", NULL };
            double secs = 0;
            fprintf(stderr, "generating %s ...\n", rdir);
            if (generate(rdir, 1, o.quick ? args_quick : args, &secs) != 0)
                return 1;
            fprintf(stderr, "  %d files in %.2f s (2 processes)\n", n, secs);
        }
    }
#endif
    /* the GPU-heavy shape at the same size (--shape gpu): the shape users have */
    char gpu_trace[4200] = "";
#ifdef BENCH_TALLY
    if (o.e2e && !o.trace) {
        double size = o.quick ? 5 : o.size_mb;
        char sz[32];
        snprintf(sz, sizeof sz, "%g", size);
        snprintf(gpu_trace, sizeof gpu_trace, "%s/kineto-gpu-seed1-%gmb.json", o.data_dir, size);
        const char *args[] = { "--shape", "gpu", "--seed", "1", "--size-mb", sz, NULL };
        if (ensure_trace(gpu_trace, args) != 0)
            return 1;
    }
#endif
    if (o.generate_only) {
        printf("data in %s:\n  %s\n  %s\n", o.data_dir, plain, gz);
        if (gpu_trace[0])
            printf("  %s\n", gpu_trace);
        if (rdir[0])
            printf("  %s/\n", rdir);
        if (cpu3[0])
            printf("  %s\n", cpu3);
        if (dir[0])
            printf("  %s/\n", dir);
        return 0;
    }

    job jp = { plain, 1 }, jg = { gz, 1 }, jb = { plain, -1 };
    measured m_read, m_tok, m_tokb, m_ing, m_mmap, m_gz, m_gzz, m_inflate, m_jansson, m_python, m_zcat, m_floor, m_cat,
        m_simd, m_yajl, m_igzip, m_deflate;
    double load_start = loadavg();
    memset(&m_jansson, 0, sizeof m_jansson);
    memset(&m_python, 0, sizeof m_python);
    memset(&m_zcat, 0, sizeof m_zcat);
    memset(&m_cat, 0, sizeof m_cat);
    memset(&m_simd, 0, sizeof m_simd);
    memset(&m_yajl, 0, sizeof m_yajl);
    memset(&m_igzip, 0, sizeof m_igzip);
    memset(&m_deflate, 0, sizeof m_deflate);

    /* the floor every forked child starts from; then warm the page cache */
    measure(&m_floor, child_nothing, NULL, 1);
    measure(&m_read, child_read, &jp, 2);
    measure(&m_read, child_read, &jg, 1);
    plan main_plan[] = {
        { &m_read, child_read, &jp },       { &m_mmap, child_mmap, &jp },       { &m_tok, child_tokenize, &jp },
        { &m_tokb, child_tokenize, &jb },   { &m_ing, child_ingest, &jp },      { &m_gz, child_ingest, &jg },
        { &m_gzz, child_ingest_zlib, &jg }, { &m_inflate, child_inflate, &jg },
    };
    measure_interleaved(main_plan, (int)(sizeof main_plan / sizeof main_plan[0]), o.repeat);
    uint64_t bytes = (uint64_t)plain_size, events = m_ing.ok ? m_ing.r.events : m_tok.r.events;

    if (o.baselines) {
        if (plain_size > ((int64_t)1 << 30)) {
            m_jansson.ran = m_jansson.skipped = 1;
            snprintf(m_jansson.note, sizeof m_jansson.note, "skipped: the file is over 1 GB (the DOM would need ~10x)");
        } else {
            measure(&m_jansson, child_jansson, &jp, 1);
        }
        if (!o.quick) {
            char *py[] = { "/usr/bin/python3", "-c", "import json,sys; json.load(open(sys.argv[1]))", plain, NULL };
            m_python.ran = 1;
            if (access(py[0], X_OK) != 0) {
                snprintf(m_python.note, sizeof m_python.note, "skipped: no /usr/bin/python3");
            } else {
                child_usage u = { 0, 0 };
                m_python.ok = run_exec(py, 0, &m_python.secs, &u, m_python.note, sizeof m_python.note) == 0;
                m_python.maxrss_kb = u.maxrss_kb;
                m_python.cpu = u.cpu;
            }
            char *zc[] = { "zcat", gz, NULL };
            exec_baseline(&m_zcat, zc);
            char *ig[] = { "igzip", "-dc", gz, NULL };
            exec_baseline(&m_igzip, ig);
            char *ld[] = { "libdeflate-gunzip", "-c", gz, NULL };
            exec_baseline(&m_deflate, ld);
            char *ct[] = { "cat", plain, NULL };
            exec_baseline(&m_cat, ct);
#ifdef BENCH_SIMDJSON
            char *sj[] = { BENCH_SIMDJSON, plain, NULL };
            exec_baseline(&m_simd, sj);
#endif
        }
#ifdef BENCH_HAVE_YAJL
        measure(&m_yajl, child_yajl, &jp, 1);
#endif
    }

    char ev[32], gev[32];
    printf("\ningest benchmark: %s (%.1f MB, %s events, %s GPU events)\n", plain, mb(bytes),
           count_str(events, ev, sizeof ev), count_str(m_ing.r.gpu, gev, sizeof gev));
    printf("                  %s (%.1f MB compressed, %.1fx)\n", gz, mb((uint64_t)gz_size),
           gz_size ? (double)plain_size / (double)gz_size : 0.0);
    print_env();
    printf("MB/s and Mev/s are of the uncompressed JSON; tally rows: median of %d runs; "
           "baselines: 1 run; ref = tally ingest (.gz rows: tally ingest .gz)\n\n",
           o.repeat);
    printf("structural index: %s; gzip decoder: %s\n\n", tl_json_scan_isa(), tl_gzip_source_decoder());
    header_row();
    row("tally ingest (profile)", &m_ing, bytes, events, &m_ing);
    row("tally tokenizer, index", &m_tok, bytes, events, &m_ing);
    row("tally tokenizer, byte parser", &m_tokb, bytes, events, &m_ing);
    row("read(2) 1 MiB blocks", &m_read, bytes, 0, &m_ing);
    row("mmap + copy 1 MiB blocks", &m_mmap, bytes, 0, &m_ing);
    row("cat > /dev/null", &m_cat, bytes, 0, &m_ing);
    row("simdjson ondemand, sum dur", &m_simd, bytes, events, &m_ing);
    row("yajl, sum dur", &m_yajl, bytes, events, &m_ing);
    row("jansson json_load_file", &m_jansson, bytes, events, &m_ing);
    row("python json.load", &m_python, bytes, events, &m_ing);
    row("tally ingest .gz", &m_gz, bytes, events, &m_gz);
    row("tally ingest .gz, zlib", &m_gzz, bytes, events, &m_gz);
    row("tally gzip_source only", &m_inflate, bytes, 0, &m_gz);
    row("zcat > /dev/null", &m_zcat, bytes, 0, &m_gz);
    row("igzip -dc > /dev/null", &m_igzip, bytes, 0, &m_gz);
    row("libdeflate-gunzip -c", &m_deflate, bytes, 0, &m_gz);
    printf("(best: MB/s of the fastest run; CPU s: the child's user + system time in the median run;\n"
           " every child starts at %.1f MB of RSS, the forked benchmark itself)\n",
           (double)m_floor.maxrss_kb / 1024.0);
    if (m_tok.ok && m_ing.ok && m_tok.r.events != m_ing.r.events)
        printf("WARNING: the tokenizer saw %" PRIu64 " events, ingest %" PRIu64 "\n", m_tok.r.events, m_ing.r.events);
    if (m_jansson.ok && m_jansson.r.events && m_jansson.r.events != events)
        printf("WARNING: jansson counted %" PRIu64 " traceEvents, tally %" PRIu64 "\n", m_jansson.r.events, events);

    /* the split: where tally's time goes */
    if (m_ing.ok && m_tok.ok) {
        printf("\nsplit: tokenizer %.0f%% of tally ingest's time, the profile %.0f%%", 100.0 * m_tok.secs / m_ing.secs,
               100.0 * (m_ing.secs - m_tok.secs) / m_ing.secs);
        if (m_read.ok)
            printf(", read(2) %.0f%%", 100.0 * m_read.secs / m_ing.secs);
        putchar('\n');
    }
    printf("design targets (docs/architecture.md, Performance; per core = over CPU seconds):\n");
    if (m_ing.ok && m_ing.cpu > 0)
        printf("  ingest >= 1000 MB/s per core, uncompressed: %.0f MB/s of CPU time, %.0f MB/s wall (%s)\n",
               mb(bytes) / m_ing.cpu, mb(bytes) / m_ing.secs, mb(bytes) / m_ing.cpu >= 1000 ? "met" : "NOT met");
    if (m_ing.ok && m_simd.ok && m_simd.cpu > 0)
        printf("  >= 1/2 of simdjson's CPU rate: tally uses %.2fx simdjson's CPU time (%s)\n", m_ing.cpu / m_simd.cpu,
               m_ing.cpu <= 2 * m_simd.cpu ? "met" : "NOT met");
    if (m_tok.ok && m_tokb.ok)
        printf("  structural index vs byte parser (tokenizer alone): %.2fx the time\n", m_tok.secs / m_tokb.secs);
    if (m_ing.ok && m_gz.ok)
        printf("  .gz within 1.2x of plain: %.2fx (%s)\n", m_gz.secs / m_ing.secs,
               m_gz.secs <= 1.2 * m_ing.secs ? "met" : "NOT met");
    if (m_gz.ok && m_gzz.ok)
        printf("  isa-l vs zlib inside tally: .gz ingest takes %.2fx the zlib time\n", m_gz.secs / m_gzz.secs);
    if (m_read.ok && m_mmap.ok)
        printf("  plain file source: mmap + copy takes %.2fx read(2)'s time\n", m_mmap.secs / m_read.secs);
    if (m_gz.ok && m_zcat.ok)
        printf("  .gz close to inflating alone: tally .gz takes %.2fx zcat's time", m_gz.secs / m_zcat.secs);
    if (m_gz.ok && m_inflate.ok)
        printf("%s%.2fx its own inflate's", m_zcat.ok ? ", " : "  .gz: tally .gz takes ", m_gz.secs / m_inflate.secs);
    if (m_gz.ok && (m_zcat.ok || m_inflate.ok))
        putchar('\n');
    if (m_ing.ok && m_jansson.ok)
        printf("  vs jansson's DOM: %.1fx faster, %.0fx less memory\n", m_jansson.secs / m_ing.secs,
               (double)m_jansson.maxrss_kb / (double)m_ing.maxrss_kb);
    if (m_ing.ok && m_python.ok)
        printf("  vs Python's json: %.1fx faster, %.0fx less memory\n", m_python.secs / m_ing.secs,
               (double)m_python.maxrss_kb / (double)m_ing.maxrss_kb);

    if (m_tok.ok && m_tokb.ok && m_tok.r.events != m_tokb.r.events)
        printf("WARNING: the index saw %" PRIu64 " events, the byte parser %" PRIu64 "\n", m_tok.r.events,
               m_tokb.r.events);
    int failed = !m_ing.ok || !m_tok.ok || !m_tokb.ok || !m_gz.ok || !m_gzz.ok || !m_inflate.ok || !m_mmap.ok ||
                 (m_jansson.ran && !m_jansson.ok && !m_jansson.skipped);

    /* ---- peak RSS against the number of CPU-side events ---- */
    if (cpu3[0] && m_ing.ok) {
        int64_t sz = cpu3_size;
        job jc = { cpu3, 1 };
        measured m_cpu2;
        measure(&m_read, child_read, &jc, 1); /* warm the cache */
        measure(&m_cpu2, child_ingest, &jc, o.repeat);
        char a[32], b[32], c[32];
        printf("\npeak RSS against CPU-side events: the same steps, names and GPU events, with "
               "every CPU operator tree run 3 times (generator --cpu-mult 3):\n");
        printf("%-34s %10s %14s %12s %11s %10s %12s\n", "trace", "MB", "events", "CPU-side", "GPU events", "MB/s",
               "peak RSS");
        printf("%-34s %10.1f %14s %12s %11" PRIu64 " %10.1f %9.1f MB\n", "1x (the trace above)", mb(bytes),
               count_str(m_ing.r.events, a, sizeof a), count_str(m_ing.r.cpu_side, b, sizeof b), m_ing.r.gpu,
               mb(bytes) / m_ing.secs, (double)m_ing.maxrss_kb / 1024.0);
        if (m_cpu2.ok) {
            char label[64];
            snprintf(label, sizeof label, "%.2fx events (--cpu-mult 3)",
                     (double)m_cpu2.r.events / (double)(m_ing.r.events ? m_ing.r.events : 1));
            printf("%-34s %10.1f %14s %12s %11" PRIu64 " %10.1f %9.1f MB\n", label, mb((uint64_t)sz),
                   count_str(m_cpu2.r.events, a, sizeof a), count_str(m_cpu2.r.cpu_side, c, sizeof c), m_cpu2.r.gpu,
                   mb((uint64_t)sz) / m_cpu2.secs, (double)m_cpu2.maxrss_kb / 1024.0);
            printf("peak RSS ratio %.2fx for %.2fx the CPU-side events (%.2fx all events)\n",
                   (double)m_cpu2.maxrss_kb / (double)m_ing.maxrss_kb,
                   (double)m_cpu2.r.cpu_side / (double)(m_ing.r.cpu_side ? m_ing.r.cpu_side : 1),
                   (double)m_cpu2.r.events / (double)(m_ing.r.events ? m_ing.r.events : 1));
        } else {
            printf("--cpu-mult 3: %s\n", m_cpu2.note);
            failed = 1;
        }
    }

    /* ---- --jobs over a set of rank files ---- */
    if (dir[0]) {
        job j1 = { dir, 1 }, j2 = { dir, 2 };
        measured m1, m2;
        for (int r = 0; r < o.ranks; r++) { /* warm the cache */
            char path[4300];
            snprintf(path, sizeof path, "%s/rank%d.pt.trace.json", dir, r);
            job jr = { path, 1 };
            measure(&m_read, child_read, &jr, 1);
        }
        plan jobs_plan[] = { { &m1, child_run, &j1 }, { &m2, child_run, &j2 } };
        measure_interleaved(jobs_plan, 2, o.repeat);
        printf("\n--jobs: tl_run_ingest over %s (%d rank files)\n", dir, o.ranks);
        header_row();
        if (m1.ok) {
            uint64_t total = m1.r.bytes;
            row("tally run, jobs=1", &m1, total, m1.r.events, &m1);
            row("tally run, jobs=2", &m2, total, m1.r.events, &m1);
            if (m2.ok)
                printf("speedup with 2 jobs: %.2fx (design target: about 2x on 2 cores; %ld cores here)\n",
                       m1.secs / m2.secs, sysconf(_SC_NPROCESSORS_ONLN));
        } else {
            printf("tally run, jobs=1: %s\n", m1.note);
        }
        if (!m1.ok || !m2.ok)
            failed = 1;
    }
    /* ---- memory per rank: the CLI over the two sets ---- */
#ifdef BENCH_TALLY
    if (dir[0] && rdir[0] && !rss_per_rank(&o, dir, rdir))
        failed = 1;
    /* ---- end to end on both shapes, then the scaling series ---- */
    if (o.e2e) {
        printf("\nend to end: the tally command (median CPU s of %d runs) beside cat and simdjson "
               "(the whole file in memory, sum of dur) on the same file\n",
               o.repeat);
        if (!e2e_shape(&o, "operator shape (record_shapes, the trace above)", plain))
            failed = 1;
        if (gpu_trace[0] && !e2e_shape(&o, "GPU-heavy shape (--shape gpu)", gpu_trace))
            failed = 1;
    }
    if (!o.quick && !o.trace && o.scaling_max_mb >= 50 && !scaling(&o))
        failed = 1;
    if (!o.quick && !o.trace && o.names_max >= 1000 && !names_series(&o))
        failed = 1;
#endif
    double load_end = loadavg();
    printf("\nload average (1 min): %.2f at the start, %.2f at the end", load_start, load_end);
    if (load_start > 0.5 || load_end > 1.5)
        printf("\nWARNING: other processes were using the CPUs during this run: wall times (and MB/s)\n"
               "are inflated and --jobs speedups understated; compare the CPU s column, or run again\n"
               "on an idle machine");
    putchar('\n');
    fflush(stdout);
    return failed ? 1 : 0;
}
