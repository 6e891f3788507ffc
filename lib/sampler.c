/*
 * sampler.c - the background sampler thread (TALLY_SAMPLE_MS).
 *
 * Every period it records the process CPU use since the last point (user +
 * system time over wall time, in % of one core, so 4 busy threads read 400),
 * RSS, available system memory, the 1-minute load average and NVML readings.
 * The series is bounded (TL_MAX_SAMPLER_POINTS); further points are counted
 * as dropped. The thread sleeps on a condition variable so shutdown does not
 * wait out a long period.
 */
#include "internal.h"
#include "array.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static struct {
    pthread_mutex_t lock;
    pthread_mutex_t busy; /* held while a point is taken; fork() waits for it */
    pthread_cond_t wake;
    pthread_t thread;
    int running, stop;
    long period_ms;
    tl_sample_point *points;
    size_t n, cap;
    uint64_t dropped;
} sp = { .lock = PTHREAD_MUTEX_INITIALIZER, .busy = PTHREAD_MUTEX_INITIALIZER,
          .wake = PTHREAD_COND_INITIALIZER };

static double cpu_seconds(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double load1(void)
{
    double l = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL)
        return 0;
    if (fscanf(f, "%lf", &l) != 1)
        l = 0;
    fclose(f);
    return l;
}

static void record(double cpu_pct)
{
    tl_sample_point p;
    memset(&p, 0, sizeof p);
    p.ticks = tl_now();
    p.cpu_pct = cpu_pct;
    p.rss = tl_memory_rss();
    double total;
    tl_memory_system(&total, &p.sys_available);
    p.load1 = load1();
    /* never pins: a dlclose holding the loader's lock may be joining this thread */
    p.ngpus = tl_nvml_read(p.gpus, TL_MAX_GPUS, 0); /* waits TL_NVML_WAIT_MS at most */
    pthread_mutex_lock(&sp.lock);
    if (sp.n >= TL_MAX_SAMPLER_POINTS) {
        sp.dropped++;
    } else if (tl_array_grow(&sp.points, sp.n, &sp.cap, sizeof *sp.points, 64) == 0) {
        sp.points[sp.n++] = p;
    } else {
        sp.dropped++;
    }
    pthread_mutex_unlock(&sp.lock);
}

static void *sampler_main(void *arg)
{
    (void)arg;
    double last_cpu = cpu_seconds();
    uint64_t last_wall = tl_clock_ns_monotonic();
    pthread_mutex_lock(&sp.lock);
    while (!sp.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = until.tv_nsec + (sp.period_ms % 1000) * 1000000L;
        until.tv_sec += sp.period_ms / 1000 + ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        while (!sp.stop && pthread_cond_timedwait(&sp.wake, &sp.lock, &until) != ETIMEDOUT)
            ;
        if (sp.stop)
            break;
        pthread_mutex_unlock(&sp.lock);
        pthread_mutex_lock(&sp.busy);
        double cpu = cpu_seconds();
        uint64_t wall = tl_clock_ns_monotonic();
        double pct = wall > last_wall ? (cpu - last_cpu) / ((double)(wall - last_wall) / 1e9) * 100.0 : 0;
        last_cpu = cpu;
        last_wall = wall;
        record(pct);
        pthread_mutex_unlock(&sp.busy);
        pthread_mutex_lock(&sp.lock);
    }
    pthread_mutex_unlock(&sp.lock);
    return NULL;
}

int tl_sampler_start(long period_ms)
{
    int rc = 0;
    pthread_mutex_lock(&sp.lock);
    if (sp.running)
        goto out;
    sp.period_ms = period_ms;
    sp.stop = 0;
    /* Every signal blocked in the sampler (it inherits the mask): a SIGTERM
     * handler running on it would wait for a writer that joins it. */
    sigset_t all, prev;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &prev);
    int created = pthread_create(&sp.thread, NULL, sampler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &prev, NULL);
    if (created != 0) {
        rc = -1;
        goto out;
    }
    sp.running = 1;
out:
    pthread_mutex_unlock(&sp.lock);
    return rc;
}

void tl_sampler_stop(void)
{
    pthread_mutex_lock(&sp.lock);
    if (!sp.running) {
        pthread_mutex_unlock(&sp.lock);
        return;
    }
    sp.stop = 1;
    pthread_cond_signal(&sp.wake);
    pthread_mutex_unlock(&sp.lock);
    pthread_join(sp.thread, NULL);
    pthread_mutex_lock(&sp.lock);
    sp.running = 0;
    pthread_mutex_unlock(&sp.lock);
}

size_t tl_sampler_points(tl_sample_point **out, uint64_t *dropped)
{
    pthread_mutex_lock(&sp.lock);
    size_t n = sp.n;
    *out = NULL;
    if (n > 0) {
        *out = malloc(n * sizeof **out);
        if (*out != NULL)
            memcpy(*out, sp.points, n * sizeof **out);
        else
            n = 0;
    }
    *dropped = sp.dropped;
    pthread_mutex_unlock(&sp.lock);
    return n;
}

/* fork() waits until the sampler thread is between two points: a point
 * being taken holds open files and allocations (and may be growing the
 * series) that only that thread, absent in the child, refers to. Taking a
 * point never waits for a lock the forking thread holds. */
void tl_sampler_atfork_prepare(void) { pthread_mutex_lock(&sp.busy); }
void tl_sampler_atfork_parent(void) { pthread_mutex_unlock(&sp.busy); }

/* In a fork child the sampler thread does not exist and its lock may have
 * been held at the fork: start over, unlocked, with an empty series. */
void tl_sampler_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    sp.lock = fresh;
    sp.wake = fresh_cond;
    sp.running = 0;
    sp.stop = 0;
    sp.busy = fresh;
    free(sp.points); /* consistent: no point was being taken (see above) */
    sp.points = NULL;
    sp.n = sp.cap = 0;
    sp.dropped = 0;
}
