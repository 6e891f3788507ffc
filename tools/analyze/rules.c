/*
 * rules.c - the recommendation table. Each rule has an id, a severity, the
 * condition under which it fires (checked against the aggregate) and advice;
 * a rule that fires says which numbers made it fire. The thresholds are the
 * seed profilers' (FramePack, Inferix) and HTA's, named where they are set.
 */
#define _GNU_SOURCE
#include "aggregate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STAGE_SHARE 30.0          /* a stage over 30 % of the time (Inferix's bottleneck rule) */
#define MEMORY_PEAK_PCT 90.0      /* peak memory over 90 % of the device */
#define LOW_GPU_UTIL_PCT 50.0     /* GPU busy under 50 % of the kernel time */
#define COMM_HEAVY_PCT 10.0       /* communication over 10 % of the kernel time */
#define LOW_OVERLAP_PCT 30.0      /* less than 30 % of communication hidden under compute */
#define LAUNCH_BOUND_SHARE 50.0   /* host_wait over half of the idle time ... */
#define LAUNCH_BOUND_IDLE 10.0    /* ... when idle is over 10 % */
#define DATA_LOADING_PCT 5.0      /* data loading over 5 % of the step */
#define STEP_SPREAD 0.20          /* (max - min) / median of step times over 20 % */
#define FRAGMENTATION_RATIO 1.5   /* reserved over 1.5 x allocated ... */
#define FRAGMENTATION_BYTES (1024.0 * 1024 * 1024) /* ... and over 1 GiB apart */
#define IMBALANCE 1.20            /* a rank 20 % above the mean step time */

static const tl_rule_info rules[] = {
    { "dominant-stage", "info", "a section or stage takes over 30% of a rank's time",
      "Optimize this stage first: it bounds what any other optimization can gain." },
    { "memory-near-capacity", "warning", "peak device memory over 90% of the device's capacity",
      "Reduce activation memory (activation checkpointing, smaller micro-batches) before it runs out." },
    { "low-gpu-utilization", "warning", "the GPU is busy less than 50% of the kernel time",
      "Find what the GPU waits for: the idle breakdown says whether it is the host (launch-bound) or gaps between kernels." },
    { "communication-heavy", "warning", "communication kernels take over 10% of the kernel time",
      "Overlap communication with compute (bucketed all-reduce, prefetching) or reduce its volume." },
    { "low-overlap", "info", "less than 30% of the communication time overlaps compute (with communication over 5%)",
      "Schedule collectives on a separate stream alongside independent compute." },
    { "launch-bound", "warning", "host_wait is over half of the GPU idle time and idle is over 10%",
      "The CPU does not launch kernels fast enough: use CUDA graphs, fuse small kernels, or move Python overhead off the critical path." },
    { "data-loading", "warning", "data loading takes over 5% of the step time",
      "Use more DataLoader workers, pinned memory and prefetching so the next batch is ready." },
    { "step-time-variance", "info", "(max - min) / median of the step times is over 20%",
      "Look for periodic work (checkpointing, logging, garbage collection) or input-dependent shapes." },
    { "memory-fragmentation", "info", "reserved memory is over 1.5x the allocated memory and over 1 GiB more",
      "The caching allocator holds memory it cannot reuse: try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True." },
    { "straggler", "critical", "a rank's compute per step is an outlier, or the others wait for it in collectives",
      "Check that rank's host and GPU (clocks, thermal throttling, neighbours) and its share of the data." },
    { "rank-imbalance", "warning", "a rank's step time is over 1.2x the mean step time of all ranks",
      "Balance the work across ranks (data sharding, pipeline stage sizes)." },
    { "session-drift", "warning", "a stage's last session differs from its first by over 20% (median over the ranks)",
      "Sessions of one run should cost the same: look for what changed between them (data, caches, memory growth, "
      "thermal state), and confirm with tally compare --sessions." },
};

const tl_rule_info *tl_rules(size_t *n)
{
    *n = sizeof rules / sizeof rules[0];
    return rules;
}

static const tl_rule_info *rule(const char *id)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (strcmp(rules[i].id, id) == 0)
            return &rules[i];
    return &rules[0];
}

static void fire(tl_aggregate *a, const char *id, int rank, const char *message, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void fire(tl_aggregate *a, const char *id, int rank, const char *message, const char *fmt, ...)
{
    if (a->nrecs == TL_MAX_RECOMMENDATIONS)
        return;
    char ev[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev, sizeof ev, fmt, ap);
    va_end(ap);
    const tl_rule_info *r = rule(id);
    tl_recommendation *rec = &a->recs[a->nrecs++];
    rec->id = r->id;
    rec->severity = r->severity;
    rec->rank = rank;
    size_t len = strlen(message) + strlen(r->advice) + 3;
    rec->message = malloc(len);
    if (rec->message)
        snprintf(rec->message, len, "%s %s", message, r->advice);
    rec->evidence = strdup(ev);
}

/* The largest section share of a rank's time, over every rank. */
static void dominant_stage(tl_aggregate *a)
{
    const tl_name_table *t = &a->names;
    double best = 0;
    const tl_name_row *brow = NULL;
    int brank = -1;
    for (size_t ri = 0; ri < a->nranks; ri++) {
        const tl_rank_result *r = &a->ranks[ri];
        /* The rank's time: its wall span, else the sum of its sections (reports). */
        /* A report's span can be shorter than its sections (FramePack's span
         * is its snapshots'): then the sum of the sections is the time. */
        double whole = r->span_ns > 0 ? (double)r->span_ns : 0, sections = 0, largest = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->rows[i].group == TL_GROUP_SECTIONS) {
                sections += t->rows[i].rank_total[ri];
                if (t->rows[i].rank_total[ri] > largest)
                    largest = t->rows[i].rank_total[ri];
            }
        if (whole < largest)
            whole = sections;
        if (whole <= 0)
            continue;
        for (size_t i = 0; i < t->n; i++) {
            const tl_name_row *row = &t->rows[i];
            if (row->group != TL_GROUP_SECTIONS)
                continue;
            double share = 100 * row->rank_total[ri] / whole;
            /* A section that covers the whole run (a "main" wrapper) says nothing. */
            if (share > best && share < 99.0) {
                best = share;
                brow = row;
                brank = r->rank;
            }
        }
    }
    if (brow != NULL && best > STAGE_SHARE) {
        char msg[400];
        snprintf(msg, sizeof msg, "\"%.200s\" takes %.1f%% of rank %d's time.", brow->name, best, brank);
        fire(a, "dominant-stage", brank, msg, "%s: %.1f%% of rank %d's time (total %.3f ms over all ranks); threshold %.0f%%",
             brow->name, best, brank, (double)brow->all.total / 1e6, STAGE_SHARE);
    }
}

/* Per-rank metrics of the rules that look at one rank at a time. */
static double peak_memory_pct(const tl_rank_result *r)
{
    return tl_rank_peak_device_pct(r);
}

static double busy_pct(const tl_rank_result *r)
{
    if (r->gpu.present)
        return tl_pct(r->gpu.busy, r->gpu.kernel_time);
    return r->gpu_util_mean; /* a monitor's utilization (Inferix, sampler), or NaN */
}

static double comm_pct(const tl_rank_result *r)
{
    return r->gpu.present ? tl_pct(r->gpu.comm, r->gpu.kernel_time) : NAN;
}

static double overlap_pct(const tl_rank_result *r)
{
    if (!r->gpu.present || r->gpu.comm <= 0 || comm_pct(r) <= 5.0)
        return NAN;
    return tl_pct(r->gpu.comm_compute, r->gpu.comm);
}

static double host_wait_share(const tl_rank_result *r)
{
    int64_t host = 0, gaps = 0;
    for (size_t s = 0; s < r->gpu.nstreams; s++) {
        const tl_stream_idle *st = &r->gpu.streams[s];
        host = tl_ns_add(host, st->host_wait);
        gaps = tl_ns_add(gaps, tl_ns_add(st->host_wait, tl_ns_add(st->kernel_wait, st->other)));
    }
    if (!r->gpu.present || tl_pct(r->gpu.idle, r->gpu.kernel_time) <= LAUNCH_BOUND_IDLE)
        return NAN;
    return tl_pct(host, gaps);
}

/* A rule over ranks: fires once, on the worst rank, saying how many ranks
 * meet the condition (value above the threshold, or below when `below`). */
typedef struct rank_rule {
    const char *id;
    double (*metric)(const tl_rank_result *);
    double threshold;
    int below;
    const char *before, *after; /* the message around the value */
} rank_rule;

static void rank_rules(tl_aggregate *a)
{
    static const rank_rule table[] = {
        { "memory-near-capacity", peak_memory_pct, MEMORY_PEAK_PCT, 0, "peak device memory at ", "% of the device" },
        { "low-gpu-utilization", busy_pct, LOW_GPU_UTIL_PCT, 1, "the GPU is busy only ", "% of the kernel time" },
        { "communication-heavy", comm_pct, COMM_HEAVY_PCT, 0, "communication takes ", "% of the kernel time" },
        { "low-overlap", overlap_pct, LOW_OVERLAP_PCT, 1, "only ", "% of the communication overlaps compute" },
        { "launch-bound", host_wait_share, LAUNCH_BOUND_SHARE, 0, "host_wait is ", "% of the GPU idle gaps" },
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        const rank_rule *rr = &table[k];
        int hits = 0, with = 0;
        const tl_rank_result *worst = NULL;
        double wv = 0;
        for (size_t i = 0; i < a->nranks; i++) {
            double v = rr->metric(&a->ranks[i]);
            if (!isfinite(v))
                continue;
            with++;
            if (rr->below ? v < rr->threshold : v > rr->threshold) {
                hits++;
                if (worst == NULL || (rr->below ? v < wv : v > wv)) {
                    worst = &a->ranks[i];
                    wv = v;
                }
            }
        }
        if (worst == NULL)
            continue;
        char msg[300];
        snprintf(msg, sizeof msg, "On rank %d, %s%.1f%s.", worst->rank, rr->before, wv, rr->after);
        const tl_gpu_breakdown *g = &worst->gpu;
        if (g->present)
            fire(a, rr->id, worst->rank, msg,
                 "rank %d: %s%.1f%s; %s the threshold of %.0f%% on %d of the %d ranks it applies to; "
                 "rank %d: kernel time %.3f ms, idle %.1f%%, compute %.1f%%, communication %.3f ms",
                 worst->rank, rr->before, wv, rr->after, rr->below ? "below" : "above", rr->threshold, hits, with,
                 worst->rank, (double)g->kernel_time / 1e6, tl_pct(g->idle, g->kernel_time),
                 tl_pct(g->compute, g->kernel_time), (double)g->comm / 1e6);
        else
            fire(a, rr->id, worst->rank, msg, "rank %d: %s%.1f%s; %s the threshold of %.0f%% on %d of the %d ranks it applies to",
                 worst->rank, rr->before, wv, rr->after, rr->below ? "below" : "above", rr->threshold, hits, with);
    }
}

static int is_data_loading(const char *name)
{
    return strcasestr(name, "DataLoader") != NULL || strcasestr(name, "data_load") != NULL ||
           strcasestr(name, "dataloader") != NULL;
}

static void data_loading(tl_aggregate *a)
{
    const tl_name_table *t = &a->names;
    const tl_rank_result *worst = NULL;
    const char *wname = NULL;
    double wpct = 0, wload = 0, wtotal = 0;
    for (size_t ri = 0; ri < a->nranks; ri++) {
        const tl_rank_result *r = &a->ranks[ri];
        if (r->nsteps == 0)
            continue;
        double step_total = 0, load = 0;
        for (size_t k = 0; k < r->nsteps; k++)
            step_total += (double)r->steps[k].dur_ns;
        /* The outermost data loading: the largest matching row per rank (rows
         * nest, e.g. enumerate(DataLoader) around its __next__). */
        const char *which = NULL;
        for (size_t i = 0; i < t->n; i++)
            if ((t->rows[i].group == TL_GROUP_SECTIONS || t->rows[i].group == TL_GROUP_OPS) &&
                is_data_loading(t->rows[i].name) && t->rows[i].rank_total[ri] > load) {
                load = t->rows[i].rank_total[ri];
                which = t->rows[i].name;
            }
        double pct = step_total > 0 ? 100 * load / step_total : 0;
        /* Fire once, on the worst rank (it used to fire on the first rank over
         * the threshold, whatever the others). */
        if (which && pct > DATA_LOADING_PCT && pct > wpct) {
            worst = r;
            wname = which;
            wpct = pct;
            wload = load;
            wtotal = step_total;
        }
    }
    if (worst != NULL) {
        char msg[300];
        snprintf(msg, sizeof msg, "Data loading takes %.1f%% of rank %d's step time.", wpct, worst->rank);
        fire(a, "data-loading", worst->rank, msg, "%s: %.3f ms over %zu steps of %.3f ms total (%.1f%%); threshold %.0f%%",
             wname, wload / 1e6, worst->nsteps, wtotal / 1e6, wpct, DATA_LOADING_PCT);
    }
}

static void step_rules(tl_aggregate *a)
{
    int fired_variance = 0;
    const tl_across *st = tl_aggregate_across(a, "step_time_ns");
    for (size_t i = 0; i < a->nranks; i++) {
        const tl_rank_result *r = &a->ranks[i];
        char msg[256];
        if (!fired_variance && r->nsteps >= 3 && isfinite(r->step_spread) && r->step_spread > STEP_SPREAD) {
            snprintf(msg, sizeof msg, "Rank %d's step times vary by %.0f%% of the median.", r->rank, 100 * r->step_spread);
            fire(a, "step-time-variance", r->rank, msg, "min %.3f ms, median %.3f ms, max %.3f ms over %zu steps; threshold %.0f%%",
                 r->step_min / 1e6, r->step_median / 1e6, r->step_max / 1e6, r->nsteps, 100 * STEP_SPREAD);
            fired_variance = 1;
        }
        if (isfinite(r->peak_allocated) && isfinite(r->peak_reserved) &&
            r->peak_reserved > FRAGMENTATION_RATIO * r->peak_allocated &&
            r->peak_reserved - r->peak_allocated > FRAGMENTATION_BYTES) {
            snprintf(msg, sizeof msg, "Rank %d reserves %.1fx the memory it allocates.", r->rank,
                     r->peak_reserved / r->peak_allocated);
            fire(a, "memory-fragmentation", r->rank, msg, "peak reserved %.2f GiB vs allocated %.2f GiB; thresholds %.1fx and 1 GiB",
                 r->peak_reserved / 1073741824.0, r->peak_allocated / 1073741824.0, FRAGMENTATION_RATIO);
        }
    }
    if (st != NULL && st->n >= 2 && st->imbalance > IMBALANCE) {
        char msg[256];
        snprintf(msg, sizeof msg, "Rank %d's steps take %.2fx the mean step time of all ranks.", st->max_rank, st->imbalance);
        fire(a, "rank-imbalance", st->max_rank, msg, "step time max %.3f ms (rank %d), mean %.3f ms, min %.3f ms (rank %d); threshold %.2fx",
             st->max / 1e6, st->max_rank, st->mean / 1e6, st->min / 1e6, st->min_rank, IMBALANCE);
    }
}

static void straggler_rule(tl_aggregate *a)
{
    for (int i = 0; i < a->nstragglers; i++) {
        char msg[300];
        snprintf(msg, sizeof msg, "Rank %d is a straggler (%s).", a->stragglers[i].rank,
                 strcmp(a->stragglers[i].kind, "compute") == 0 ? "slow compute" : "last to arrive at collectives");
        fire(a, "straggler", a->stragglers[i].rank, msg, "%s", a->stragglers[i].summary ? a->stragglers[i].summary : "");
    }
}

/* The stage that drifts most across sessions (drift.h), with the step time
 * when it drifts too. */
static void drift_rule(tl_aggregate *a)
{
    const tl_drift *d = &a->drift;
    const tl_drift_stage *worst = NULL, *step = NULL;
    size_t n = 0;
    for (size_t i = 0; i < d->nstages; i++) {
        const tl_drift_stage *s = &d->stages[i];
        if (!s->drifts)
            continue;
        n++;
        if (s->group < 0)
            step = s;
        else if (worst == NULL || fabs(s->change_pct) > fabs(worst->change_pct))
            worst = s;
    }
    if (worst == NULL && step == NULL)
        return;
    const tl_drift_stage *s = worst ? worst : step;
    char msg[320];
    snprintf(msg, sizeof msg, "\"%.120s\" is %.0f%% %s in the last of %d sessions than in the first (%zu stage%s "
             "drift).", s->name, fabs(s->change_pct), s->change_pct > 0 ? "slower" : "faster", d->nsessions, n,
             n == 1 ? "" : "s");
    int last = d->nsessions - 1;
    while (last > 0 && !isfinite(s->value[last]))
        last--;
    fire(a, "session-drift", -1, msg, "%s: %.3f ms in session 1, %.3f ms in session %d (%+.1f%%, trend %+.1f%% "
         "per session)%s%s; threshold %.0f%%", s->name, s->value[0] / 1e6, s->value[last] / 1e6, last + 1,
         s->change_pct, s->slope_pct, step && step != s ? "; step time " : "",
         step && step != s ? (step->change_pct > 0 ? "slower too" : "faster too") : "", TL_DRIFT_PCT);
}

static int severity_rank(const char *s)
{
    return strcmp(s, "critical") == 0 ? 0 : strcmp(s, "warning") == 0 ? 1 : 2;
}

void tl_apply_rules(tl_aggregate *a)
{
    straggler_rule(a);
    rank_rules(a);
    step_rules(a);
    data_loading(a);
    dominant_stage(a);
    drift_rule(a);
    /* Most severe first; within a severity, the order of the rule table
     * (insertion sort: stable, and there are few). */
    for (int i = 1; i < a->nrecs; i++) {
        tl_recommendation r = a->recs[i];
        int j = i;
        while (j > 0 && severity_rank(a->recs[j - 1].severity) > severity_rank(r.severity)) {
            a->recs[j] = a->recs[j - 1];
            j--;
        }
        a->recs[j] = r;
    }
}
