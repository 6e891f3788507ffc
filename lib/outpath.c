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
 * and when files of that stem exist already (a pid reused within the same
 * second, as in containers where every job is pid 1), "-2", "-3", ... is
 * appended. The stem is chosen at the first write and kept, so a flush and
 * the final write of one run go to the same files; it is chosen again only
 * when the rank changed in between. tally pairs a report with its trace by
 * this common stem. Exact paths (TALLY_REPORT_PATH, TALLY_TRACE_PATH) are
 * used as given.
 *
 * Everything here runs under tl_g.write_lock.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static struct {
    int set;
    int rank;
    int pid;
    char stem[TL_OUTPATH_MAX];
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

static int taken(const char *stem)
{
    static const char *const suffixes[] = { ".report.json", ".trace.json", ".trace.json.gz" };
    char path[TL_OUTPATH_MAX + 32];
    struct stat sb;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(path, sizeof path, "%s%s", stem, suffixes[i]);
        if (lstat(path, &sb) == 0)
            return 1;
    }
    return 0;
}

/* The stem without the "-2", "-3", ... of a taken name. */
static void base_stem(char *base, size_t len)
{
    char when[32] = "";
    time_t secs = (time_t)(tl_g.start_realtime_ns / 1000000000);
    struct tm tm;
    if (gmtime_r(&secs, &tm) != NULL)
        strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(base, len, "%s/%s-rank%d.%d-%s", tl_g.output_dir, tl_g.name, tl_g.rank.rank, tl_g.pid,
             when);
}

/* Choose the stem of this run (see the file comment). */
static void choose_stem(void)
{
    char base[TL_OUTPATH_MAX];
    base_stem(base, sizeof base);
    snprintf(st.stem, sizeof st.stem, "%s", base);
    int k;
    for (k = 2; k <= TL_OUTPATH_MAX_TRIES && taken(st.stem); k++)
        snprintf(st.stem, sizeof st.stem, "%.*s-%d", (int)sizeof base - 16, base, k);
    if (k > TL_OUTPATH_MAX_TRIES && taken(st.stem))
        fprintf(stderr, "tally: %d runs are named %s already (TL_OUTPATH_MAX_TRIES); the last "
                        "one is overwritten\n", TL_OUTPATH_MAX_TRIES, base);
    st.set = 1;
    st.rank = tl_g.rank.rank;
    st.pid = tl_g.pid;
}

void tl_outpath_forget(void) { st.set = 0; }

int tl_outpath_prepare(char *err, size_t errlen)
{
    int own_names = !tl_g.report_path[0] || (tl_g.trace && !tl_g.trace_path[0]) ||
                    tl_g.is_fork_child;
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
    if (!st.set || st.rank != tl_g.rank.rank || st.pid != tl_g.pid)
        choose_stem();
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
