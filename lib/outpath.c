/*
 * outpath.c - where this process's outputs go: the output directory (made if
 * missing, like `mkdir -p`) and one file stem per run.
 *
 * The one idea: a run never overwrites an earlier one. Like PyTorch's
 * tensorboard_trace_handler ({worker}.{time}.pt.trace.json), the stem carries
 * the process id and the start time of recording,
 *
 *   {dir}/{name}-rank{N}.{pid}-{YYYYmmddTHHMMSSZ}.report.json
 *   {dir}/{name}-rank{N}.{pid}-{YYYYmmddTHHMMSSZ}.trace.json.gz
 *
 * and the stem is reserved atomically while its first write is in progress:
 * mkdir("{stem}.lock") succeeds for one process only (O_EXCL's guarantee,
 * without an empty placeholder report that a process killed in the middle of
 * its write would leave behind), and a stem whose report or trace exists is
 * taken too. Once the run's files exist they keep the stem, and the lock
 * directory is removed (tl_outpath_written). When
 * the name is taken (a pid reused within the same second, as in containers
 * where every job is pid 1), a random part is appended, "-3fa09c1e", so
 * processes with the same pid in the same second, even on several hosts
 * sharing one directory, get stems of their own. The stem is chosen at the
 * first write and kept, so a flush and the final write of one run go to the
 * same files; it is chosen again only when the rank changed in between, and
 * then the files the earlier flush wrote under the old rank are removed once
 * the new ones are written (tl_outpath_written). A process killed during its
 * first write leaves an empty {stem}.lock directory, never a half or empty
 * report. tally pairs a report
 * with its trace by this common stem. Exact paths (TALLY_REPORT_PATH,
 * TALLY_TRACE_PATH) are used as given.
 *
 * Test seam: TALLY__TEST_STEM_PID and TALLY__TEST_STEM_TIME replace the pid
 * and the time in the stem (the tests' stand-in for many pid-1 containers
 * started in one second); nothing else reads them.
 *
 * Everything here runs under tl_g.write_lock.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TL_OUTPATH_SUFFIX_MAX 32 /* ".report.json", ".trace.json.gz" */

static struct {
    int set;
    int rank;
    int pid;
    char stem[TL_OUTPATH_MAX];
    /* the lock directory that reserves the stem until its files exist */
    char reserved[TL_OUTPATH_MAX + TL_OUTPATH_SUFFIX_MAX];
    /* a stem given up for a new rank: its files go once the new ones exist */
    char stale[TL_OUTPATH_MAX];
} st;

int tl_outpath_mkdirs(const char *dir, char *err, size_t errlen)
{
    char path[TL_OUTPATH_MAX];
    struct stat sb;
    int n = snprintf(path, sizeof path, "%s", dir && *dir ? dir : ".");
    if (n < 0 || (size_t)n >= sizeof path) {
        snprintf(err, errlen, "cannot create directory %.200s...: the path is too long", dir);
        return -1;
    }
    /* Each prefix ending before a '/', then the whole path. */
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        if (mkdir(path, TL_OUTPATH_DIR_MODE) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create directory %s: %s", path, strerror(errno));
            return -1;
        }
        *p = c;
        if (c == '\0')
            break;
    }
    if (stat(path, &sb) != 0) {
        snprintf(err, errlen, "cannot write into %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "cannot write into %s: not a directory", path);
        return -1;
    }
    return 0;
}

static const char *const suffixes[] = { ".report.json", ".trace.json", ".trace.json.gz" };
#define NSUFFIXES (sizeof suffixes / sizeof suffixes[0])

/* Does a file of stem exist under any of the suffixes? */
static int taken(const char *stem)
{
    char path[TL_OUTPATH_MAX + TL_OUTPATH_SUFFIX_MAX];
    struct stat sb;
    for (size_t i = 0; i < NSUFFIXES; i++) {
        snprintf(path, sizeof path, "%s%s", stem, suffixes[i]);
        if (lstat(path, &sb) == 0)
            return 1;
    }
    return 0;
}

/* A test seam's value: digits only (pid) or digits, 'T' and 'Z' (time). */
static const char *seam(const char *var, const char *allowed)
{
    const char *v = getenv(var);
    if (v == NULL || *v == '\0' || strlen(v) > 24 || strspn(v, allowed) != strlen(v))
        return NULL;
    return v;
}

/* The stem without the random part of a taken name. */
static void base_stem(char *base, size_t len)
{
    char when[32] = "", pid[32];
    const char *forced_time = seam("TALLY__TEST_STEM_TIME", "0123456789TZ");
    const char *forced_pid = seam("TALLY__TEST_STEM_PID", "0123456789");
    time_t secs = (time_t)(tl_g.start_realtime_ns / 1000000000);
    struct tm tm;
    if (forced_time != NULL)
        snprintf(when, sizeof when, "%s", forced_time);
    else if (gmtime_r(&secs, &tm) != NULL)
        strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
    if (forced_pid != NULL)
        snprintf(pid, sizeof pid, "%s", forced_pid);
    else
        snprintf(pid, sizeof pid, "%d", tl_g.pid);
    snprintf(base, len, "%s/%s-rank%d.%s-%s", tl_g.output_dir, tl_g.name, tl_g.rank.rank, pid, when);
}

/* 32 random bits for a taken stem: getrandom, else what tells this process
 * apart from its twins (host name, pid, the clock's nanoseconds). */
static unsigned random_part(unsigned attempt)
{
    unsigned r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = host; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h ^= tl_clock_ns_monotonic() + ((uint64_t)getpid() << 32) + attempt;
    h *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 32);
}

/* Reserve stem: mkdir {stem}.lock, atomic like O_EXCL. 1 reserved, 0 taken
 * (locked by another process, or a file of the stem exists), -1 another
 * error (the write will say it). */
static int reserve(const char *stem)
{
    char path[sizeof st.reserved];
    snprintf(path, sizeof path, "%s.lock", stem);
    if (mkdir(path, 0700) != 0)
        return errno == EEXIST ? 0 : -1;
    if (taken(stem)) { /* an earlier run's files, its lock gone */
        rmdir(path);
        return 0;
    }
    snprintf(st.reserved, sizeof st.reserved, "%s", path);
    return 1;
}

/* Choose and reserve the stem of this run (see the file comment). */
static void choose_stem(void)
{
    char base[TL_OUTPATH_MAX];
    base_stem(base, sizeof base);
    snprintf(st.stem, sizeof st.stem, "%s", base);
    st.reserved[0] = '\0';
    int k, got = 0;
    for (k = 1; k <= TL_OUTPATH_MAX_TRIES && (got = reserve(st.stem)) == 0; k++)
        snprintf(st.stem, sizeof st.stem, "%.*s-%08x", (int)sizeof base - 16, base, random_part((unsigned)k));
    if (got == 0)
        fprintf(stderr,
                "tally: %d names of runs named %s were taken (TL_OUTPATH_MAX_TRIES); the "
                "last one is overwritten\n",
                TL_OUTPATH_MAX_TRIES, base);
    st.set = 1;
    st.rank = tl_g.rank.rank;
    st.pid = tl_g.pid;
}

/* The parent's placeholder and old files are the parent's business. */
void tl_outpath_forget(void)
{
    st.set = 0;
    st.reserved[0] = '\0';
    st.stale[0] = '\0';
}

static void remove_stem_files(const char *stem)
{
    char path[TL_OUTPATH_MAX + TL_OUTPATH_SUFFIX_MAX];
    for (size_t i = 0; i < NSUFFIXES; i++) {
        snprintf(path, sizeof path, "%s%s", stem, suffixes[i]);
        unlink(path);
    }
}

void tl_outpath_written(int report_ok, int trace_ok)
{
    /* the file the stem is known by: the report, unless it has an exact path */
    int own_report = !tl_g.report_path[0] || tl_g.is_fork_child;
    int kept = own_report ? report_ok : trace_ok;
    if (st.reserved[0]) {
        rmdir(st.reserved);
        st.reserved[0] = '\0';
        if (!kept)
            st.set = 0; /* nothing holds the stem: the next write reserves afresh */
    }
    if (st.stale[0] && report_ok && (trace_ok || !tl_g.trace)) {
        remove_stem_files(st.stale);
        st.stale[0] = '\0';
    }
}

int tl_outpath_prepare(char *err, size_t errlen)
{
    int own_names = !tl_g.report_path[0] || (tl_g.trace && !tl_g.trace_path[0]) || tl_g.is_fork_child;
    if (!own_names)
        return 0;
    if (tl_outpath_mkdirs(tl_g.output_dir, err, errlen) != 0) {
        /* Nothing can be written, but the message names the files that
         * would have been: the stem they would have had (not kept, so a
         * later write that can make the directory chooses it afresh). */
        if (!st.set || st.rank != tl_g.rank.rank || st.pid != tl_g.pid) {
            base_stem(st.stem, sizeof st.stem);
            st.set = 0;
        }
        return -1;
    }
    if (!st.set || st.rank != tl_g.rank.rank || st.pid != tl_g.pid) {
        /* the files an earlier flush wrote under another rank, to remove
         * once this write has replaced them (a flush before tally_set_rank) */
        if (st.set && st.pid == tl_g.pid && st.rank != tl_g.rank.rank && !st.stale[0] && taken(st.stem))
            snprintf(st.stale, sizeof st.stale, "%s", st.stem);
        choose_stem();
    }
    return 0;
}

void tl_output_paths(char *report, size_t rlen, char *trace, size_t tlen)
{
    /* A fork child never writes to the parent's exact paths. */
    if (tl_g.report_path[0] && !tl_g.is_fork_child)
        snprintf(report, rlen, "%s", tl_g.report_path);
    else
        snprintf(report, rlen, "%s.report.json", st.stem);
    if (tl_g.trace_path[0] && !tl_g.is_fork_child)
        snprintf(trace, tlen, "%s", tl_g.trace_path);
    else
        snprintf(trace, tlen, "%s.trace.json%s", st.stem, tl_g.trace_gzip ? ".gz" : "");
}
