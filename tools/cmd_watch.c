/*
 * cmd_watch.c - `tally watch DIR|FILE [--interval S] [--once]`: re-read a
 * running program's flushed libtally report every S seconds and show a
 * compact view of it (analyze/watch.h, render/watch_text.c).
 *
 * libtally writes its report at exit, at tally_flush() and, with
 * TALLY_FLUSH_S set, every so many seconds, always to a temporary name
 * renamed over the report: a read sees the old report or the new one, never
 * half of one. FILE is read as it is; in DIR the newest *.report.json (by
 * modification time) is, with the other ranks' reports of its run (the same
 * name before "-rank", written within WATCH_RUN_WINDOW_S of it), looked up
 * again at every frame, so a program that starts again is followed. A report that is absent or not readable yet is
 * waited for, and the frame says so. On a terminal each frame replaces the
 * last (the screen cleared with ANSI codes); elsewhere frames are plain text
 * separated by a blank line. Ctrl-C ends it, exit 0. --once prints one frame:
 * exit 0, or 3 when there is no report to show.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pipeline.h"
#include "commands.h"
#include "render.h"
#include "watch.h"

/* The longest --interval, and the shortest. */
#define WATCH_MAX_INTERVAL_S 3600.0
#define WATCH_MIN_INTERVAL_S 0.1
/* The suffix of libtally's reports. */
#define REPORT_SUFFIX ".report.json"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* A report of the directory. */
typedef struct report_file {
    char *path;
    struct timespec mtime;
} report_file;

static int newer(struct timespec a, struct timespec b)
{
    return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

/* The run of a libtally report's name: what comes before "-rank"
 * ("pipeline" of "pipeline-rank3.4242-20261128T111455Z.report.json"), its
 * length; the whole name without "-rank". */
static size_t run_prefix(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *r = strstr(base, "-rank");
    return (size_t)((r ? r : base + strlen(base)) - path);
}

/* The reports to read now (malloc'd into *paths, *n of them; the newest's
 * modification time into *mtime): target itself, or in a directory the
 * newest report and the other ranks' of its run -- the same name before
 * "-rank", written within WATCH_RUN_WINDOW_S of it. 0, or -1 with why. */
#define WATCH_RUN_WINDOW_S 30
static int pick(const char *target, char ***paths, size_t *n, int64_t *mtime, char *why, size_t whylen)
{
    struct stat st;
    *paths = NULL;
    *n = 0;
    if (stat(target, &st) != 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        *mtime = (int64_t)st.st_mtime;
        if ((*paths = malloc(sizeof **paths)) == NULL || ((*paths)[0] = strdup(target)) == NULL) {
            free(*paths);
            *paths = NULL;
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        *n = 1;
        return 0;
    }
    DIR *d = opendir(target);
    if (d == NULL) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    report_file *all = NULL;
    size_t nall = 0, cap = 0, best = 0;
    int rc = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char full[4096];
        if (!has_suffix(e->d_name, REPORT_SUFFIX) ||
            (size_t)snprintf(full, sizeof full, "%s/%s", target, e->d_name) >= sizeof full)
            continue;
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* renamed away between readdir and stat */
        if (nall == cap) {
            report_file *x = realloc(all, (cap = cap ? 2 * cap : 16) * sizeof *x);
            if (x == NULL)
                goto oom;
            all = x;
        }
        if ((all[nall].path = strdup(full)) == NULL)
            goto oom;
        all[nall].mtime = st.st_mtim;
        if (nall == 0 || newer(st.st_mtim, all[best].mtime) ||
            (!newer(all[best].mtime, st.st_mtim) && strcmp(full, all[best].path) > 0))
            best = nall;
        nall++;
    }
    if (nall == 0) {
        snprintf(why, whylen, "no *%s in it yet", REPORT_SUFFIX);
        goto out;
    }
    if ((*paths = malloc(nall * sizeof **paths)) == NULL)
        goto oom;
    size_t plen = run_prefix(all[best].path);
    for (size_t i = 0; i < nall; i++)
        if (i == best || (run_prefix(all[i].path) == plen && !strncmp(all[i].path, all[best].path, plen) &&
                          all[best].mtime.tv_sec - all[i].mtime.tv_sec <= WATCH_RUN_WINDOW_S))
            (*paths)[(*n)++] = all[i].path;
    for (size_t i = 0; i < nall; i++) /* the chosen ones are *paths' now */
        for (size_t k = 0; k < *n; k++)
            if (all[i].path == (*paths)[k])
                all[i].path = NULL;
    *mtime = (int64_t)all[best].mtime.tv_sec;
    rc = 0;
    goto out;
oom:
    snprintf(why, whylen, "out of memory");
out:
    closedir(d);
    for (size_t i = 0; i < nall; i++)
        free(all[i].path);
    free(all);
    return rc;
}

/* One frame into f: 1 when a report was shown, 0 when there was none to
 * show (the frame says why), -1 when out of memory. */
static int frame(FILE *f, const tl_cli *cli, const char *target, double interval, int once)
{
    char why[512] = "";
    char **paths;
    size_t npaths;
    int64_t mtime;
    if (pick(target, &paths, &npaths, &mtime, why, sizeof why) != 0) {
        fprintf(f, "tally watch: %s: %s; %s\n", target, why,
                once ? "nothing to show" : "waiting for the program to flush its report");
        return 0;
    }
    tl_cli one = *cli;
    int starts[2] = { 0, (int)npaths };
    one.inputs = (const char **)paths;
    one.ninputs = (int)npaths;
    one.nargs = 1;
    one.arg_start = starts;
    one.quiet = 1; /* a report replaced while read is read again at the next frame */
    one.progress = 0;
    tl_aggregate agg;
    size_t warnings = 0;
    int rc = tl_pipeline_run(&one, &one.analyze, &agg, &warnings), shown = 0;
    if (rc == TL_EXIT_OK) {
        tl_watch_view v;
        tl_watch_compute(&v, &agg);
        tl_render_watch_frame(f, &v, npaths == 1 ? paths[0] : target, mtime, (int64_t)time(NULL));
        shown = 1;
    } else if (rc == TL_EXIT_NOMEM) {
        shown = -1;
    } else {
        fprintf(f, "tally watch: %s: not a readable report%s\n", npaths == 1 ? paths[0] : target,
                once ? "" : " yet; reading it again at the next frame");
    }
    if (!once && shown >= 0)
        fprintf(f, "(every %g s; Ctrl-C ends)\n", interval);
    tl_aggregate_release(&agg);
    for (size_t i = 0; i < npaths; i++)
        free(paths[i]);
    free(paths);
    return shown;
}

/* Sleep s seconds, or until a signal sets stop. */
static void pause_for(double s)
{
    struct timespec t = { (time_t)s, (long)((s - floor(s)) * 1e9) };
    while (!stop && nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

int tl_cmd_watch(int argc, char **argv, const tl_engine *engine)
{
    const char *interval_arg = NULL;
    int once = 0;
    tl_cli cli;
    const tl_cli_opt opts[] = {
        { "--interval", NULL, 1, NULL, &interval_arg, "seconds between frames (default 2)", "S" },
        { "--once", NULL, 0, &once, NULL, "print one frame and exit (3 when there is no report yet)", NULL },
        { 0 },
    };
    const tl_cli_spec spec = {
        "watch",
        "DIR|FILE",
        "Follow a running program's flushed libtally report: steps/s, stages, GPU telemetry.",
        "FILE is a libtally report; in DIR (TALLY_OUTPUT_DIR) the newest *.report.json is shown,\n"
        "looked up again at every frame. libtally writes it at tally_flush(), at exit and every\n"
        "TALLY_FLUSH_S seconds. On a terminal each frame replaces the last; Ctrl-C ends.",
        opts,
        1,
        1,
    };
    int rc = tl_cli_begin(&cli, argc, argv, &spec, engine);
    if (rc >= 0)
        return rc;
    double interval = 2.0;
    if (interval_arg) {
        char *end;
        interval = strtod(interval_arg, &end);
        if (end == interval_arg || *end != '\0' ||
            !(interval >= WATCH_MIN_INTERVAL_S && interval <= WATCH_MAX_INTERVAL_S)) {
            fprintf(stderr, "tally watch: --interval wants seconds from %g to %g, like 2 or 0.5\n",
                    WATCH_MIN_INTERVAL_S, WATCH_MAX_INTERVAL_S);
            tl_cli_release(&cli);
            return TL_EXIT_USAGE;
        }
    }
    const char *target = cli.inputs[0];
    int tty = isatty(STDOUT_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: the sleep ends at once */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    rc = TL_EXIT_OK;
    for (int n = 0; !stop; n++) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        int shown = mem ? frame(mem, &cli, target, interval, once) : -1;
        if (mem)
            fclose(mem);
        if (shown < 0) {
            free(text);
            fprintf(stderr, "tally: out of memory\n");
            rc = TL_EXIT_NOMEM;
            break;
        }
        fflush(stdout);
        if (tty) /* the codes go to the descriptor: stdout escapes control characters (term.h) */
            (void)!write(STDOUT_FILENO, "\033[H\033[2J", 7);
        else if (n > 0)
            fputc('\n', stdout);
        fputs(text, stdout);
        fflush(stdout);
        free(text);
        if (once) {
            rc = shown ? TL_EXIT_OK : TL_EXIT_NO_INPUT;
            break;
        }
        if (ferror(stdout))
            break; /* a closed pipe: main reports it */
        pause_for(interval);
    }
    tl_cli_release(&cli);
    return rc;
}
