/*
 * cmd_watch.c - `tally watch DIR|FILE [--interval S] [--once]`: re-read a
 * running program's flushed libtally report every S seconds and show a
 * compact view of it (analyze/watch.h, render/watch_text.c).
 *
 * libtally writes its report at exit, at tally_flush() and, with
 * TALLY_FLUSH_S set, every so many seconds, always to a temporary name
 * renamed over the report: a read sees the old report or the new one, never
 * half of one. FILE is read as it is; in DIR the newest *.report.json (by
 * modification time) is, looked up again at every frame, so a program that
 * starts again is followed. A report that is absent or not readable yet is
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

/* The report to read now: target itself, or the newest report in it when it
 * is a directory (malloc'd into *path; its modification time into *mtime).
 * 0, or -1 with why filled. */
static int pick(const char *target, char **path, int64_t *mtime, char *why, size_t n)
{
    struct stat st;
    *path = NULL;
    if (stat(target, &st) != 0) {
        snprintf(why, n, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        *mtime = (int64_t)st.st_mtime;
        return (*path = strdup(target)) != NULL ? 0 : (snprintf(why, n, "out of memory"), -1);
    }
    DIR *d = opendir(target);
    if (d == NULL) {
        snprintf(why, n, "%s", strerror(errno));
        return -1;
    }
    struct dirent *e;
    char best[4096] = "";
    struct timespec best_t = { 0, 0 };
    while ((e = readdir(d)) != NULL) {
        char full[4096];
        if (!has_suffix(e->d_name, REPORT_SUFFIX) ||
            (size_t)snprintf(full, sizeof full, "%s/%s", target, e->d_name) >= sizeof full)
            continue;
        if (stat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* renamed away between readdir and stat */
        struct timespec t = st.st_mtim;
        if (best[0] == '\0' || t.tv_sec > best_t.tv_sec || (t.tv_sec == best_t.tv_sec && t.tv_nsec > best_t.tv_nsec) ||
            (t.tv_sec == best_t.tv_sec && t.tv_nsec == best_t.tv_nsec && strcmp(full, best) > 0)) {
            memcpy(best, full, sizeof best);
            best_t = t;
        }
    }
    closedir(d);
    if (best[0] == '\0') {
        snprintf(why, n, "no *%s in it yet", REPORT_SUFFIX);
        return -1;
    }
    *mtime = (int64_t)best_t.tv_sec;
    return (*path = strdup(best)) != NULL ? 0 : (snprintf(why, n, "out of memory"), -1);
}

/* One frame into f: 1 when a report was shown, 0 when there was none to
 * show (the frame says why), -1 when out of memory. */
static int frame(FILE *f, const tl_cli *cli, const char *target, double interval, int once)
{
    char why[512] = "";
    char *path;
    int64_t mtime;
    if (pick(target, &path, &mtime, why, sizeof why) != 0) {
        fprintf(f, "tally watch: %s: %s; %s\n", target, why,
                once ? "nothing to show" : "waiting for the program to flush its report");
        return 0;
    }
    tl_cli one = *cli;
    const char *inputs[1] = { path };
    int starts[2] = { 0, 1 };
    one.inputs = inputs;
    one.ninputs = 1;
    one.nargs = 1;
    one.arg_start = starts;
    one.quiet = 1;  /* a report replaced while read is read again at the next frame */
    one.progress = 0;
    tl_aggregate agg;
    size_t warnings = 0;
    int rc = tl_cli_analyze(&one, &one.analyze, &agg, &warnings), shown = 0;
    if (rc == TL_EXIT_OK) {
        tl_watch_view v;
        tl_watch_compute(&v, &agg);
        tl_render_watch_frame(f, &v, path, mtime, (int64_t)time(NULL));
        shown = 1;
    } else if (rc == TL_EXIT_NOMEM) {
        shown = -1;
    } else {
        fprintf(f, "tally watch: %s: not a readable report%s\n", path,
                once ? "" : " yet; reading it again at the next frame");
    }
    if (!once && shown >= 0)
        fprintf(f, "(every %g s; Ctrl-C ends)\n", interval);
    tl_aggregate_release(&agg);
    free(path);
    return shown;
}

/* Sleep s seconds, or until a signal sets stop. */
static void pause_for(double s)
{
    struct timespec t = { (time_t)s, (long)((s - floor(s)) * 1e9) };
    while (!stop && nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

int tl_cmd_watch(int argc, char **argv)
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
        "watch", "DIR|FILE", "Follow a running program's flushed libtally report: steps/s, stages, GPU telemetry.",
        "FILE is a libtally report; in DIR (TALLY_OUTPUT_DIR) the newest *.report.json is shown,\n"
        "looked up again at every frame. libtally writes it at tally_flush(), at exit and every\n"
        "TALLY_FLUSH_S seconds. On a terminal each frame replaces the last; Ctrl-C ends.",
        opts, 1, 1,
    };
    int rc = tl_cli_begin(&cli, argc, argv, &spec);
    if (rc >= 0)
        return rc;
    double interval = 2.0;
    if (interval_arg) {
        char *end;
        interval = strtod(interval_arg, &end);
        if (end == interval_arg || *end != '\0' || !(interval >= WATCH_MIN_INTERVAL_S && interval <= WATCH_MAX_INTERVAL_S)) {
            fprintf(stderr, "tally watch: --interval wants seconds from %g to %g, like 2 or 0.5\n", WATCH_MIN_INTERVAL_S,
                    WATCH_MAX_INTERVAL_S);
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
