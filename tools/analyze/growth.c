/*
 * growth.c - memory read again and again at one point of the work, per
 * session: what the memory-growth rule reads (aggregate.h; docs/analysis.md,
 * "Memory growth").
 *
 * The one idea: memory that rises while a program loads its models is not a
 * leak; memory that is higher every time the program comes back to the same
 * point is. So only repeated readings make a sequence: a snapshot label taken
 * four or more times (digits in labels are ignored, so "after_step_3" and
 * "after_step_4" are one point), the lowest allocator reading of each step
 * (PyTorch's [memory] events, ProfilerSteps), and a monitor's samples after
 * its first quarter (model loading) cut into eight windows, each window's
 * lowest sample. Each sequence is summarized (first, last, highest, drops);
 * the rule decides. Not Inferix's block memory: torch.cuda.max_memory_allocated()
 * without a reset, a high-water mark that cannot drop, so "rises without a
 * drop" says nothing of a leak (a block's transient peak, a KV cache).
 *
 * Whose memory: the allocator's allocated, the program's own device memory
 * (NVML's per-process accounting, libtally's process_used_bytes) and its RSS
 * are the program's; device-wide used memory is every process's on the GPU
 * (another program allocating 973 MiB once reads as a step). Each is its own
 * sequence, never merged, the program's own first (the sequences are
 * bounded); the rule never reads device-wide growth as a leak.
 *
 * Each sequence also keeps its largest rise within three consecutive
 * repetitions: a leak adds a little every time, while a one-time allocation
 * (a warm-up that outlasts the first quarter of the samples: a real H200 job
 * spent 5 of its 7 s starting up, then rose 544 MiB in its first two steps
 * and stayed flat) makes one jump, which the rule does not call a leak.
 */
#define _GNU_SOURCE
#include "session_analysis.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const metric_word[TL_GROWTH_COUNT] = { "allocated", "device-wide used (every process's)", "RSS",
                                                          "own GPU memory (NVML, this process)" };
/* The order sequences are made in: the program's own memory first. */
static const int metric_order[TL_GROWTH_COUNT] = { TL_GROWTH_ALLOCATED, TL_GROWTH_PROCESS_USED, TL_GROWTH_RSS,
                                                   TL_GROWTH_DEVICE_USED };

static double snapshot_value(const tl_mem_snapshot *x, int m)
{
    switch (m) {
    case TL_GROWTH_ALLOCATED:
        return x->allocated;
    case TL_GROWTH_DEVICE_USED:
        return x->device_used;
    case TL_GROWTH_PROCESS_USED:
        return x->process_used;
    default:
        return x->rss;
    }
}

/* Summarize v[0..n) (finite values) into a new sequence of s. */
static int add(tl_session *s, int metric, const double *v, const int64_t *ts, size_t n, const char *what)
{
    if (n < TL_GROWTH_MIN_REPEATS || s->ngrowth == TL_SESSION_MAX_GROWTH)
        return 0;
    if (s->growth == NULL && (s->growth = calloc(TL_SESSION_MAX_GROWTH, sizeof *s->growth)) == NULL)
        return -1;
    tl_sgrowth *g = &s->growth[s->ngrowth];
    memset(g, 0, sizeof *g);
    g->metric = metric;
    g->n = (uint32_t)n;
    g->first = v[0];
    g->last = v[n - 1];
    g->max = v[0];
    g->max_rise = 0;
    for (size_t i = 1; i < n; i++) {
        g->drops += v[i] < v[i - 1] * (1 - TL_GROWTH_NOISE);
        if (v[i] > g->max)
            g->max = v[i];
        /* over two steps: a one-time allocation between two repetitions
         * can leave an intermediate value in the one it falls in (a window's
         * lowest sample taken before it) */
        double rise = v[i] - v[i >= 2 ? i - 2 : i - 1];
        if (rise > g->max_rise)
            g->max_rise = rise;
    }
    g->span_ns = ts && ts[0] != INT64_MIN && ts[n - 1] != INT64_MIN ? ts[n - 1] - ts[0] : -1;
    if ((g->what = strdup(what)) == NULL)
        return -1;
    s->ngrowth++;
    return 0;
}

/* The label with every run of digits as one '#'. */
static void normalize(char *out, size_t size, const char *label)
{
    size_t o = 0;
    for (const char *c = label; *c && o + 1 < size; c++) {
        if (isdigit((unsigned char)*c)) {
            if (o == 0 || out[o - 1] != '#')
                out[o++] = '#';
        } else {
            out[o++] = *c;
        }
    }
    out[o] = '\0';
}

static int snapshots(tl_session *s, const tl_profile *p)
{
    size_t n = p->nsnapshots;
    if (n < TL_GROWTH_MIN_REPEATS)
        return 0;
    char(*key)[80] = malloc(n * sizeof *key);
    char *done = calloc(n, 1);
    double *v = malloc(n * sizeof *v);
    int64_t *ts = malloc(n * sizeof *ts);
    int rc = key && done && v && ts ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        normalize(key[i], sizeof key[i], tl_strtab_get(&p->strs, p->snapshots[i].label));
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (done[i])
            continue;
        for (int o = 0; rc == 0 && o < TL_GROWTH_COUNT; o++) {
            int m = metric_order[o];
            size_t k = 0;
            for (size_t j = i; j < n; j++) {
                if (strcmp(key[j], key[i]) != 0)
                    continue;
                done[j] = 1;
                const tl_mem_snapshot *x = &p->snapshots[j];
                double val = snapshot_value(x, m);
                if (isfinite(val)) {
                    ts[k] = x->ts_ns;
                    v[k++] = val;
                }
            }
            char what[160];
            snprintf(what, sizeof what, "%s at snapshot \"%s\"", metric_word[m], key[i]);
            rc = add(s, m, v, ts, k, what);
        }
    }
    free(key);
    free(done);
    free(v);
    free(ts);
    return rc;
}

static int by_ts(const void *x, const void *y)
{
    const tl_mem_point *a = x, *b = y;
    return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}

/* The lowest allocator reading in each step (the last, cut-short
 * ProfilerStep left out), on the GPU with the most readings. Only traces
 * place their steps on the clock of their memory events. */
static int steps(tl_session *s, const tl_profile *p)
{
    if ((p->id.format != TL_FMT_KINETO && p->id.format != TL_FMT_CHROME_TRACE) ||
        p->nsteps < TL_GROWTH_MIN_REPEATS + 1 || p->nmem == 0)
        return 0;
    enum { MAX_DEVICES = 64 }; /* devices told apart */
    int64_t devs[MAX_DEVICES], dev = -1;
    size_t cnt[MAX_DEVICES], nd = 0, best = 0;
    for (size_t i = 0; i < p->nmem; i++) {
        if (p->mem[i].device < 0 || !isfinite(p->mem[i].allocated))
            continue;
        size_t k = 0;
        while (k < nd && devs[k] != p->mem[i].device)
            k++;
        if (k == nd) {
            if (nd == MAX_DEVICES)
                continue;
            devs[nd] = p->mem[i].device;
            cnt[nd++] = 0;
        }
        cnt[k]++;
    }
    for (size_t k = 0; k < nd; k++)
        if (cnt[k] > best || (cnt[k] == best && devs[k] < dev)) {
            best = cnt[k];
            dev = devs[k];
        }
    if (dev < 0)
        return 0;
    tl_mem_point *pts = malloc(best * sizeof *pts);
    size_t nsteps = p->nsteps - 1;
    double *v = malloc(nsteps * sizeof *v);
    int64_t *ts = malloc(nsteps * sizeof *ts);
    int rc = pts && v && ts ? 0 : -1;
    size_t n = 0, k = 0;
    for (size_t i = 0; rc == 0 && i < p->nmem; i++)
        if (p->mem[i].device == dev && isfinite(p->mem[i].allocated) && n < best)
            pts[n++] = p->mem[i];
    if (rc == 0)
        qsort(pts, n, sizeof *pts, by_ts);
    /* steps are sorted by number; their times rise with it (where they do
     * not, the scan starts over) */
    size_t from = 0;
    for (size_t i = 0; rc == 0 && i < nsteps; i++) {
        int64_t a = p->steps[i].ts_ns, b = a + p->steps[i].dur_ns;
        double lo = NAN;
        if (i > 0 && a < p->steps[i - 1].ts_ns)
            from = 0;
        while (from < n && pts[from].ts_ns < a)
            from++;
        for (size_t j = from; j < n && pts[j].ts_ns < b; j++)
            if (!(pts[j].allocated >= lo))
                lo = pts[j].allocated;
        if (isfinite(lo)) {
            ts[k] = a;
            v[k++] = lo;
        }
    }
    char what[64];
    snprintf(what, sizeof what, "lowest allocated in each step (GPU %lld)", (long long)dev);
    if (rc == 0)
        rc = add(s, TL_GROWTH_ALLOCATED, v, ts, k, what);
    free(pts);
    free(v);
    free(ts);
    return rc;
}

/* A monitor's samples (t[i], x[i]) sorted by time, after the first quarter
 * of their span: the lowest sample of each of TL_GROWTH_WINDOWS windows. */
static int windows(tl_session *s, int metric, const int64_t *t, const double *x, size_t n, const char *what)
{
    if (n < TL_GROWTH_MIN_SAMPLES || t[n - 1] <= t[0])
        return 0;
    double v[TL_GROWTH_WINDOWS];
    int64_t ts[TL_GROWTH_WINDOWS];
    int64_t cut = t[0] + (t[n - 1] - t[0]) / 4, len = t[n - 1] - cut;
    for (int w = 0; w < TL_GROWTH_WINDOWS; w++) {
        v[w] = NAN;
        ts[w] = cut + len * w / TL_GROWTH_WINDOWS;
    }
    for (size_t i = 0; i < n; i++) {
        if (t[i] < cut)
            continue;
        int w = (int)((double)(t[i] - cut) / (double)len * TL_GROWTH_WINDOWS);
        if (w >= TL_GROWTH_WINDOWS)
            w = TL_GROWTH_WINDOWS - 1;
        if (!(x[i] >= v[w]))
            v[w] = x[i];
    }
    for (int w = 0; w < TL_GROWTH_WINDOWS; w++)
        if (!isfinite(v[w]))
            return 0; /* a pause in the samples: no even windows */
    char text[160];
    snprintf(text, sizeof text, "lowest %s of each eighth of %s after their first quarter", metric_word[metric], what);
    return add(s, metric, v, ts, TL_GROWTH_WINDOWS, text);
}

static int by_device_time(const void *x, const void *y)
{
    const tl_gpu_sample *a = x, *b = y;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}

static int monitors(tl_session *s, const tl_profile *p)
{
    size_t cap = p->ngpu_samples > p->npoints ? p->ngpu_samples : p->npoints;
    if (cap < TL_GROWTH_MIN_SAMPLES)
        return 0;
    int64_t *t = malloc(cap * sizeof *t);
    double *x = malloc(cap * sizeof *x);
    tl_gpu_sample *g = p->ngpu_samples ? malloc(p->ngpu_samples * sizeof *g) : NULL;
    int rc = t && x && (g || !p->ngpu_samples) ? 0 : -1;
    if (rc == 0 && g) {
        memcpy(g, p->gpu_samples, p->ngpu_samples * sizeof *g);
        qsort(g, p->ngpu_samples, sizeof *g, by_device_time);
    }
    /* the program's own memory on each GPU (NVML per process), then the
     * device-wide figure: two sequences of their own */
    for (int own = 1; own >= 0; own--)
        for (size_t lo = 0, hi; rc == 0 && g && lo < p->ngpu_samples; lo = hi) {
            size_t n = 0;
            for (hi = lo; hi < p->ngpu_samples && g[hi].device == g[lo].device; hi++) {
                double v = own ? g[hi].proc_used : g[hi].mem_used;
                if (isfinite(v)) {
                    t[n] = g[hi].ts_ns;
                    x[n++] = v;
                }
            }
            char what[64];
            snprintf(what, sizeof what, "GPU %lld's samples", (long long)g[lo].device);
            rc = windows(s, own ? TL_GROWTH_PROCESS_USED : TL_GROWTH_DEVICE_USED, t, x, n, what);
        }
    /* the process RSS (libtally's sampler), in time order */
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < p->npoints; i++)
        if (p->points[i].kind == TL_SERIES_RSS) {
            t[n] = p->points[i].ts_ns;
            x[n++] = p->points[i].v;
        }
    for (size_t i = 1; rc == 0 && i < n; i++)
        if (t[i] < t[i - 1]) {
            n = 0; /* out of order: not a series this can read */
            break;
        }
    if (rc == 0)
        rc = windows(s, TL_GROWTH_RSS, t, x, n, "the process's samples");
    free(t);
    free(x);
    free(g);
    return rc;
}

int tl_session_growth(tl_session *s, const tl_profile *p)
{
    if (snapshots(s, p) != 0 || steps(s, p) != 0 || monitors(s, p) != 0)
        return -1;
    return 0;
}
