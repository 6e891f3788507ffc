/*
 * telemetry.c - sampled GPU and host telemetry as bounded series, per rank
 * and across ranks (telemetry.h; definitions in docs/analysis.md).
 *
 * Samples arrive as tl_gpu_sample (one reading of every GPU metric of one
 * device) and tl_series_point (one host reading); both are flattened to
 * (kind, device, time, value), sorted, and cut into series. Energy is the
 * trapezoid rule over consecutive power samples: the time before the first
 * and after the last sample is not counted, so it is a lower bound of what
 * the GPU drew while the program ran.
 */
#define _GNU_SOURCE
#include "telemetry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"

static int by_key_time(const void *x, const void *y)
{
    const tl_series_point *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return (a->ts_ns > b->ts_ns) - (a->ts_ns < b->ts_ns);
}

/* One series from points [lo, hi) of one (kind, device), sorted by time. */
static void build(tl_tseries *s, const tl_series_point *pt, size_t n, int64_t base)
{
    memset(s, 0, sizeof *s);
    s->kind = pt[0].kind;
    s->device = pt[0].device;
    s->n = n;
    s->start_ns = pt[0].ts_ns + base;
    s->end_ns = pt[n - 1].ts_ns + base;
    s->min = s->max = pt[0].v;
    s->energy_j = NAN;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += pt[i].v;
        if (pt[i].v < s->min)
            s->min = pt[i].v;
        if (pt[i].v > s->max)
            s->max = pt[i].v;
    }
    s->mean = sum / (double)n;
    /* A rate's mean is the bytes over the time, each point weighted by the
     * time since the one before: the mean of the points would weigh a point
     * after a short interval (a sampler that woke late, then on time) as much
     * as a full one, and overstate the rate. The first point's interval is
     * not in the data: it is weighted by the next one (the sampling period). */
    if (tl_series_kind_rate(s->kind) && n > 1 && pt[n - 1].ts_ns > pt[0].ts_ns) {
        /* intervals as doubles: a report's times may be anything its range allows */
        double first = (double)pt[1].ts_ns - (double)pt[0].ts_ns, bytes = pt[0].v * first;
        for (size_t i = 1; i < n; i++)
            bytes += pt[i].v * ((double)pt[i].ts_ns - (double)pt[i - 1].ts_ns);
        s->mean = bytes / ((double)pt[n - 1].ts_ns - (double)pt[0].ts_ns + first);
    }
    if (s->kind == TL_SERIES_GPU_POWER) {
        double e = 0;
        for (size_t i = 1; i < n; i++)
            e += 0.5 * (pt[i].v + pt[i - 1].v) * (double)(pt[i].ts_ns - pt[i - 1].ts_ns) / 1e9;
        s->energy_j = e;
    }
    /* two samples a bin on average when there are few, so that a sampler's
     * jitter seldom leaves a bin empty */
    s->nbins = n / 2 < TL_SERIES_BINS ? (int)(n / 2) : TL_SERIES_BINS;
    if (s->nbins < 1)
        s->nbins = 1;
    uint64_t cnt[TL_SERIES_BINS] = { 0 };
    for (int b = 0; b < s->nbins; b++) {
        s->bmin[b] = s->bmax[b] = NAN;
        s->bmean[b] = 0;
    }
    double span = (double)(pt[n - 1].ts_ns - pt[0].ts_ns);
    for (size_t i = 0; i < n; i++) {
        int b = span > 0 ? (int)((double)(pt[i].ts_ns - pt[0].ts_ns) / span * s->nbins) : 0;
        if (b >= s->nbins)
            b = s->nbins - 1;
        if (cnt[b] == 0 || pt[i].v < s->bmin[b])
            s->bmin[b] = pt[i].v;
        if (cnt[b] == 0 || pt[i].v > s->bmax[b])
            s->bmax[b] = pt[i].v;
        s->bmean[b] += pt[i].v;
        cnt[b]++;
    }
    for (int b = 0; b < s->nbins; b++)
        s->bmean[b] = cnt[b] ? s->bmean[b] / (double)cnt[b] : NAN;
}

int tl_telemetry_series(const tl_profile *p, int64_t base, tl_tseries **out, size_t *nout, char **warning)
{
    int rc = -1;
    size_t n = p->npoints + p->ngpu_samples * 6, m = 0, ns = 0;
    tl_series_point *pt = NULL;
    tl_tseries *s = NULL;
    *out = NULL;
    *nout = 0;
    *warning = NULL;
    if (n == 0)
        return 0;
    pt = malloc(n * sizeof *pt);
    if (pt == NULL)
        goto out;
    for (size_t i = 0; i < p->npoints; i++)
        if (isfinite(p->points[i].v))
            pt[m++] = p->points[i];
    for (size_t i = 0; i < p->ngpu_samples; i++) {
        const tl_gpu_sample *g = &p->gpu_samples[i];
        const double v[4] = { g->util_pct, g->mem_used, g->temperature_c, g->power_w };
        for (int k = 0; k < 4; k++)
            if (isfinite(v[k]))
                pt[m++] = (tl_series_point){ g->ts_ns, (int32_t)g->device, TL_SERIES_GPU_UTIL + k, v[k] };
        /* clocks: 0 is unknown (a clock never reads 0 MHz on a running GPU) */
        if (g->sm_clock_mhz > 0 && isfinite(g->sm_clock_mhz))
            pt[m++] = (tl_series_point){ g->ts_ns, (int32_t)g->device, TL_SERIES_GPU_SM_CLOCK, g->sm_clock_mhz };
        if (g->mem_clock_mhz > 0 && isfinite(g->mem_clock_mhz))
            pt[m++] = (tl_series_point){ g->ts_ns, (int32_t)g->device, TL_SERIES_GPU_MEM_CLOCK, g->mem_clock_mhz };
    }
    if (m == 0) {
        rc = 0;
        goto out;
    }
    qsort(pt, m, sizeof *pt, by_key_time);
    s = malloc(TL_SERIES_MAX * sizeof *s);
    if (s == NULL)
        goto out;
    size_t dropped = 0;
    for (size_t lo = 0, hi; lo < m; lo = hi) {
        for (hi = lo + 1; hi < m && pt[hi].kind == pt[lo].kind && pt[hi].device == pt[lo].device; hi++)
            ;
        if (ns == TL_SERIES_MAX) {
            dropped++;
            continue;
        }
        build(&s[ns++], pt + lo, hi - lo, base);
    }
    if (dropped && asprintf(warning, "telemetry: %zu series beyond the first %d (TL_SERIES_MAX) are not shown", dropped,
                            TL_SERIES_MAX) < 0)
        *warning = NULL;
    *out = s;
    *nout = ns;
    s = NULL;
    rc = 0;
out:
    free(s);
    free(pt);
    return rc;
}

void tl_rank_telemetry_init(tl_rank_telemetry *t)
{
    memset(t, 0, sizeof *t);
    for (int k = 0; k < TL_SERIES_COUNT; k++)
        t->mean[k] = t->max[k] = NAN;
    t->energy_j = t->power_w = NAN;
}

/* Devices seen by the rank, for the GPU count (a rank has few). */
#define TL_RANK_MAX_GPUS 64

void tl_rank_telemetry_add(tl_rank_telemetry *t, const tl_tseries *s, size_t n)
{
    double draw = 0;
    int has_power = 0;
    for (size_t i = 0; i < n; i++) {
        int k = s[i].kind;
        if (k < 0 || k >= TL_SERIES_COUNT || s[i].n == 0)
            continue;
        double sum = (t->n[k] ? t->mean[k] * (double)t->n[k] : 0) + s[i].mean * (double)s[i].n;
        t->n[k] += s[i].n;
        t->mean[k] = sum / (double)t->n[k];
        if (!(s[i].max <= t->max[k]))
            t->max[k] = s[i].max;
        if (k == TL_SERIES_GPU_POWER && isfinite(s[i].energy_j)) {
            t->energy_j = (isfinite(t->energy_j) ? t->energy_j : 0) + s[i].energy_j;
            double dur = (double)(s[i].end_ns - s[i].start_ns) / 1e9;
            draw += dur > 0 ? s[i].energy_j / dur : s[i].mean;
            has_power = 1;
        }
    }
    /* the session's GPU draw, summed over its devices; averaged over sessions in finish */
    if (has_power) {
        t->power_sessions++;
        t->power_w = (isfinite(t->power_w) ? t->power_w : 0) + draw;
    }
    int devs = 0;
    int64_t seen[TL_RANK_MAX_GPUS];
    for (size_t i = 0; i < n; i++) {
        if (!tl_series_kind_gpu(s[i].kind))
            continue;
        int dup = 0;
        for (int d = 0; d < devs; d++)
            dup |= seen[d] == s[i].device;
        if (!dup && devs < TL_RANK_MAX_GPUS)
            seen[devs++] = s[i].device;
    }
    if (devs > t->gpus)
        t->gpus = devs;
}

void tl_rank_telemetry_finish(tl_rank_telemetry *t)
{
    if (t->power_sessions > 1 && isfinite(t->power_w))
        t->power_w /= (double)t->power_sessions;
}

/* ---- totals over the GPUs ------------------------------------------------------
 * Each rank's sampler reads every GPU of its node, so ranks that share a node
 * sample the same GPUs: a GPU is counted once when the collector recorded the
 * host, as (host, device), taking the rank that sampled it most (its sessions
 * added up). Without a host (Inferix reports, older reports) the GPUs of
 * different ranks cannot be told apart, and the totals are the sum over the
 * ranks' samples. */

typedef struct gpu_total {
    const char *host; /* NULL: unknown, then keyed by rank too */
    int64_t device;
    int rank;
    double energy, draw; /* sessions added up; the draw averaged over them in the end */
    int sessions;
} gpu_total;

/* Every (host, device, rank) with power samples; *n entries (the caller frees). */
static gpu_total *gpu_totals(const tl_aggregate *a, size_t *n)
{
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < a->nsessions; i++)
        cap += a->sessions[i].nseries;
    gpu_total *g = calloc(cap + 1, sizeof *g);
    if (g == NULL)
        return NULL;
    for (size_t i = 0; i < a->nsessions; i++) {
        const tl_session *s = &a->sessions[i];
        if (!tl_session_counts(s))
            continue;
        for (size_t k = 0; k < s->nseries; k++) {
            const tl_tseries *t = &s->series[k];
            if (t->kind != TL_SERIES_GPU_POWER || !isfinite(t->energy_j))
                continue;
            size_t j = 0;
            while (j < *n && !(g[j].device == t->device && g[j].rank == s->id.rank &&
                               ((g[j].host == NULL && s->sys.hostname == NULL) ||
                                (g[j].host && s->sys.hostname && strcmp(g[j].host, s->sys.hostname) == 0))))
                j++;
            if (j == *n)
                g[(*n)++] = (gpu_total){ s->sys.hostname, t->device, s->id.rank, 0, 0, 0 };
            double dur = (double)(t->end_ns - t->start_ns) / 1e9;
            g[j].energy += t->energy_j;
            g[j].draw += dur > 0 ? t->energy_j / dur : t->mean;
            g[j].sessions++;
        }
    }
    for (size_t j = 0; j < *n; j++)
        g[j].draw /= g[j].sessions;
    return g;
}

/* The total: per GPU of a known host, the rank that sampled most; else every entry. */
static double total(const tl_aggregate *a, int energy, int *gpus)
{
    size_t n;
    gpu_total *g = gpu_totals(a, &n);
    double sum = NAN;
    *gpus = 0;
    for (size_t j = 0; g && j < n; j++) {
        int best = 1;
        for (size_t k = 0; g[j].host && k < n && best; k++)
            if (k != j && g[k].host && g[k].device == g[j].device && strcmp(g[k].host, g[j].host) == 0 &&
                (g[k].energy > g[j].energy || (g[k].energy == g[j].energy && k < j)))
                best = 0;
        if (!best)
            continue;
        (*gpus)++;
        sum = (isfinite(sum) ? sum : 0) + (energy ? g[j].energy : g[j].draw);
    }
    free(g);
    return sum;
}

double tl_telemetry_energy_total(const tl_aggregate *a)
{
    int gpus;
    return total(a, 1, &gpus);
}

double tl_telemetry_power_total(const tl_aggregate *a)
{
    int gpus;
    return total(a, 0, &gpus);
}

int tl_telemetry_gpus_counted(const tl_aggregate *a, int *by_host)
{
    size_t n;
    gpu_total *g = gpu_totals(a, &n);
    int gpus = 0;
    *by_host = n > 0;
    for (size_t j = 0; g && j < n; j++)
        *by_host &= g[j].host != NULL;
    free(g);
    total(a, 1, &gpus);
    return gpus;
}

const char *tl_series_unit(int kind)
{
    static const char *const units[] = { "%",     "bytes", "C", "W",   "MHz",     "%",       "%",       "bytes",
                                         "bytes", "bytes", "",  "MHz", "bytes/s", "bytes/s", "bytes/s", "bytes/s" };
    /* a kind added without its unit is a build error, not a NULL read */
    _Static_assert(sizeof units / sizeof units[0] == TL_SERIES_COUNT, "a unit per series kind");
    return kind >= 0 && kind < TL_SERIES_COUNT ? units[kind] : "";
}

const char *tl_series_label(int kind)
{
    static const char *const labels[] = {
        "GPU utilization", "GPU memory used",  "GPU temperature", "GPU power",          "GPU SM clock",
        "Process CPU",     "System CPU",       "Process RSS",     "System memory used", "System memory available",
        "Load (1 min)",    "GPU memory clock", "Disk read",       "Disk write",         "Device read",
        "Device write",
    };
    _Static_assert(sizeof labels / sizeof labels[0] == TL_SERIES_COUNT, "a label per series kind");
    return kind >= 0 && kind < TL_SERIES_COUNT ? labels[kind] : "";
}
