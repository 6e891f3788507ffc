/*
 * aggregate.h - the analysis stage: per-session results, per-rank results
 * and the aggregate across ranks (what `tally aggregate` writes).
 *
 * The one idea: everything that crosses ranks is computed from a list of
 * session results, and a session result is small and serializable. A partial
 * aggregate (`tally aggregate --partial`) is that list; `tally merge`
 * concatenates lists and runs the same finalization, so the aggregate of any
 * split of the inputs equals the aggregate of all of them.
 *
 * Times are int64 ns; sizes are bytes as doubles (NaN: unknown).
 */
#ifndef TALLY_AGGREGATE_H
#define TALLY_AGGREGATE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "drift.h"
#include "intervals.h"
#include "names.h"
#include "profile.h"
#include "telemetry.h"

/* Idle time of one stream, in HTA's three categories. */
typedef struct tl_stream_idle {
    int64_t device, stream;
    int64_t host_wait, kernel_wait, other; /* ns */
    uint64_t gaps;
    int64_t busy;              /* sum of the stream's event durations in the window (ns) */
} tl_stream_idle;

/* Kernel-type masks of the union sweep. */
enum { TL_MASK_COMPUTE = 1, TL_MASK_COMM = 2, TL_MASK_MEMORY = 4 };

/* The GPU temporal breakdown of one session or rank (HTA's definitions). */
typedef struct tl_gpu_breakdown {
    int present;               /* there were GPU events in the window */
    int whole_trace;           /* the window is the whole trace */
    int steps_in_window;       /* ProfilerSteps inside the window */
    int64_t window_start, window_end;
    uint64_t events;           /* GPU events in the window */
    int64_t kernel_time, busy, idle, compute, non_compute;
    int64_t comm, comm_compute; /* |union of comm|, |comm ∩ compute| */
    int64_t by_mask[8];        /* time with exactly this set of kernel types running */
    tl_stream_idle *streams;
    size_t nstreams;
    /* Idle time of the GPU (gaps of the union of GPU events) during which the
     * host sat in a blocking call (cudaMemcpy, cudaStreamSynchronize, ...):
     * the call named is the one covering most of it. */
    int64_t blocked_idle;
    char blocking_call[48];
    int64_t blocking_call_ns;  /* idle covered by that call name */
} tl_gpu_breakdown;

/* Statistics of one (group, name) in a session. */
typedef struct tl_sname {
    int group;                 /* tl_group */
    char *name;
    int exact;                 /* from events: std/median/p95 come from d */
    /* Inclusive time (a name nested in itself on one thread counts once, at
     * its outermost occurrence) and self time (inclusive of every occurrence
     * minus the time of its children); -1 when the input has no nesting. */
    int64_t incl_ns, self_ns;
    double median_ns, p95_ns, std_ns; /* from a report's summary when !exact (NaN unknown) */
    tl_dur_stat d;             /* ns */
} tl_sname;

/* A GPU kernel (by name) inside the window. */
typedef struct tl_skernel {
    char *name;
    int type;                  /* tl_kernel_type */
    tl_dur_stat d;             /* ns */
} tl_skernel;

typedef struct tl_sstep {
    int64_t number;
    int64_t dur_ns;
    int64_t compute_ns;        /* |union of compute kernels launched in the step|; -1 unknown */
    int64_t ts_ns;             /* start on the session's timeline axis (see tl_timeline); INT64_MIN unknown */
    int partial;               /* the last ProfilerStep of a trace (usually cut short): not compared */
} tl_sstep;

/* ---- timelines --------------------------------------------------------------
 * A session's activity at a fixed resolution: lanes (one per GPU stream, or
 * per CPU thread when the trace has no GPU events) of TL_TIMELINE_BINS bins
 * over [start_ns, end_ns). Each bin holds the fraction of its time that each
 * kind of work covered (GPU: compute, communication, memory, other; CPU: the
 * outermost events as "compute"). Events narrower than a bin add up as
 * fractions, which is what keeps the report's size independent of the
 * number of events. Times are on the wall clock when the trace says where
 * its zero is (Kineto's baseTimeNanoseconds, a report's start time), else as
 * in the file. */
#define TL_TIMELINE_BINS 1024
#define TL_TIMELINE_MAX_LANES 64

enum tl_lane_kind { TL_LANE_GPU = 0, TL_LANE_CPU = 1 };

typedef struct tl_lane {
    int kind;                  /* tl_lane_kind */
    int64_t a, b;              /* GPU: device, stream; CPU: pid, tid */
    char *label;               /* "GPU 0 stream 7", "thread 1234 main" */
    float busy[TL_KT_COUNT][TL_TIMELINE_BINS]; /* fraction 0..1 of each bin, by tl_kernel_type */
} tl_lane;

typedef struct tl_timeline {
    int64_t start_ns, end_ns;  /* the bins' range; start >= end: no timeline */
    tl_lane *lanes;
    size_t nlanes;
} tl_timeline;

/* A point of the memory series (downsampled to at most TL_MEM_SERIES points). */
#define TL_MEM_SERIES 512
typedef struct tl_mem_sample {
    int64_t ts_ns;             /* on the timeline axis */
    double allocated, reserved; /* bytes, NaN unknown */
} tl_mem_sample;

/* One collective: the i-th communication kernel of a name, in launch order. */
typedef struct tl_collective {
    uint32_t kernel;           /* index into the session's kernels */
    int64_t dur_ns;
} tl_collective;

#define TL_MAX_COLLECTIVES 100000

/* A labelled memory snapshot from a report (bytes; NaN unknown). */
typedef struct tl_ssnap {
    char *label;
    double allocated, reserved, peak_allocated, rss;
    double device_used;        /* NVML's used memory (all processes), not allocated */
} tl_ssnap;

/* A GPU of a session: what the System section lists. */
#define TL_SESSION_MAX_DEVICES 64
typedef struct tl_sdevice {
    int64_t id;
    char *name;                /* "" when not recorded */
    double total_memory;       /* bytes; NaN unknown */
} tl_sdevice;

typedef struct tl_session {
    char *path;
    int format;                /* tl_format */
    int rank, world_size, rank_source, session;
    char *rank_detail;
    int64_t start_ns;          /* absolute when base time known, else as in the file */
    int64_t span_ns;           /* end - start of the events; -1 unknown */
    int truncated;
    char **warnings;
    size_t nwarnings;
    char *companion_of;        /* a libtally trace whose report is an input: not counted */

    tl_sname *names;
    size_t nnames;
    tl_skernel *kernels;
    size_t nkernels;
    tl_sstep *steps;
    size_t nsteps;
    tl_gpu_breakdown gpu;
    tl_collective *colls;
    size_t ncolls;
    tl_ssnap *snaps;
    size_t nsnaps;
    tl_timeline timeline;
    tl_mem_sample *mem;
    size_t nmem;
    char *device_name;         /* the first device's name (deviceProperties, NVML), or NULL */
    tl_sdevice *devices;       /* every GPU the input names (at most TL_SESSION_MAX_DEVICES) */
    size_t ndevices;
    tl_tseries *series;        /* telemetry (telemetry.h), sorted by kind and device */
    size_t nseries;
    int abs_time;              /* start_ns is on the wall clock (base time known) */
    uint64_t graph_launches;   /* cudaGraphLaunch / hipGraphLaunch calls and graph replays */
    int run;                   /* which run it belongs to (run identity, aggregate.c); 0 the analyzed one */

    double peak_allocated, peak_reserved, device_total, peak_rss; /* bytes, NaN unknown */
    double peak_device_used;   /* NVML's device memory used (all processes); never merged
                                * into peak_allocated (docs/analysis.md); NaN unknown */
    double gpu_util_mean;      /* % from a monitor's samples (Inferix, sampler); NaN unknown */
} tl_session;

/* Analysis options. */
typedef struct tl_analyze_options {
    int whole_trace;           /* use every GPU event, not the ProfilerStep window */
    int64_t kernel_wait_ns;    /* gap under which idle time is kernel_wait (30 µs) */
    /* The command has no use for each session's samples of every name (only
     * compare and partial aggregates do): they are freed as soon as a session
     * is analyzed (tl_session_drop_samples), so that memory per rank stays
     * small. Not an analysis option: partials do not record it. */
    int drop_samples;
} tl_analyze_options;

void tl_analyze_options_init(tl_analyze_options *o);

/* Analyze one usable profile into a session result (allocated inside s). */
int tl_session_analyze(tl_session *s, const tl_profile *p, const tl_analyze_options *opt);
/* An input that is not a profile still appears in "inputs": a session with
 * no data and its warnings. */
int tl_session_from_skipped(tl_session *s, const tl_profile *p);
/* Take the rank fields of p (after rank assignment), with a warning when the
 * rank was only guessed from the input order. */
int tl_session_set_rank(tl_session *s, const tl_profile *p);
void tl_session_release(tl_session *s);
/* Free the samples kept per name and kernel (up to TL_PROFILE_MAX_SAMPLES each,
 * the largest part of an analyzed session); counts, totals, histograms and
 * everything else stay. */
void tl_session_drop_samples(tl_session *s);

/* ---- per rank ------------------------------------------------------------ */

typedef struct tl_rank_result {
    int rank;
    int world_size;
    size_t nsessions;
    size_t *sessions;          /* indices into the aggregate's sessions, in order */
    /* steps of every session, in session order */
    tl_sstep *steps;
    size_t nsteps;
    double step_mean, step_median, step_min, step_max, step_std, step_spread; /* ns; spread = (max-min)/median */
    double compute_per_step;   /* median of the per-step compute; NaN unknown */
    tl_gpu_breakdown gpu;      /* sessions added up */
    double peak_allocated, peak_reserved, device_total, peak_rss, gpu_util_mean;
    double peak_device_used;   /* as in tl_session */
    int64_t span_ns;           /* sum of the sessions' spans */
    tl_rank_telemetry tel;     /* sampled telemetry of every session */
    int straggler;             /* marked by the straggler analysis */
} tl_rank_result;

/* ---- across ranks --------------------------------------------------------- */

/* A per-rank metric summarized across ranks. */
typedef struct tl_across {
    const char *metric;        /* e.g. "step_time_ns", "gpu.idle_pct" */
    int n;                     /* ranks that have it */
    double min, max, mean, median, std, imbalance; /* imbalance = max / mean */
    int min_rank, max_rank;
} tl_across;

typedef struct tl_evidence_item {
    char *name;                /* a kernel, op or section */
    double delta_ns;           /* how much more the straggler spends on it per step */
} tl_evidence_item;

typedef struct tl_straggler {
    int rank;
    char *kind;                /* "compute" or "last_arrival" */
    const char *severity;      /* "info", "warning", "critical": by effect and evidence */
    int units, slower;         /* steps (or collectives) compared, and those it was slower in (last in) */
    double noise_pct;          /* the ranks' own step-to-step noise, % */
    char *summary;             /* one sentence with the numbers */
    double value, others_median; /* the metric on this rank and the median of the others */
    double delta_pct;
    tl_evidence_item items[5];
    int nitems;
} tl_straggler;

/* A rule that did not apply to this data, and why. */
typedef struct tl_rule_skip {
    const char *id;
    char *why;
} tl_rule_skip;

typedef struct tl_recommendation {
    const char *id;
    const char *severity;      /* "info", "warning", "critical" */
    char *finding;             /* what was found, one sentence with its number */
    const char *advice;        /* what to do (the rule's, or one chosen from the evidence) */
    char *message;             /* finding + advice */
    char *evidence;            /* the numbers that made it fire */
    int rank;                  /* -1 for the whole run */
} tl_recommendation;

#define TL_MAX_ACROSS 64
#define TL_MAX_STRAGGLERS 16
#define TL_MAX_RECOMMENDATIONS 32

typedef struct tl_aggregate {
    tl_session *sessions;      /* every input (skipped ones too), sorted by rank, start, path */
    size_t nsessions, sessions_cap;
    tl_rank_result *ranks;
    size_t nranks;
    tl_name_table names;       /* per (group, name) across ranks */
    tl_across across[TL_MAX_ACROSS];
    int nacross;
    tl_straggler stragglers[TL_MAX_STRAGGLERS];
    int nstragglers;
    tl_recommendation recs[TL_MAX_RECOMMENDATIONS];
    int nrecs;
    tl_rule_skip skips[TL_MAX_RECOMMENDATIONS];
    int nskips;
    char *straggler_note;      /* why no straggler was named ("no steps: cannot compare ranks"), or NULL */
    char *headline;            /* one sentence: the biggest opportunity with its number */
    const char *headline_severity; /* "ok" when nothing is wrong, else the finding's severity */
    int steps_compared;        /* the straggler analysis compared ranks step by step */
    char **notes;              /* run identity: separate runs, missing ranks (warnings) */
    size_t nnotes;
    tl_drift drift;            /* each stage per session, when a rank has two or more (drift.h) */
    tl_analyze_options opt;
} tl_aggregate;

void tl_aggregate_init(tl_aggregate *a, const tl_analyze_options *opt);
void tl_aggregate_release(tl_aggregate *a);
/* Take ownership of a session result. */
int tl_aggregate_add_session(tl_aggregate *a, tl_session *s);
/* Sort sessions, build ranks, across-rank metrics, stragglers and
 * recommendations. Deterministic in the set of sessions. */
int tl_aggregate_finish(tl_aggregate *a);

/* Stragglers (stragglers.c) and rules (rules.c), run by tl_aggregate_finish. */
void tl_find_stragglers(tl_aggregate *a);
void tl_apply_rules(tl_aggregate *a);

/* One rule of the recommendation table, for documentation and tests. */
typedef struct tl_rule_info {
    const char *id, *severity, *condition, *preconditions, *evidence, *advice;
    const char *scale;         /* how the severity grows, when it is not always `severity` (or NULL) */
} tl_rule_info;
/* The rule table as Markdown (docs/analysis.md's rules section). */
void tl_rules_markdown(FILE *f);
/* The headline (rules.c), after the rules. */
void tl_decide_headline(tl_aggregate *a);
const tl_rule_info *tl_rules(size_t *n);

/* A formatted string the caller frees (vasprintf), or NULL when out of
 * memory: the notes, skips and evidence of the analysis. */
char *tl_format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *tl_vformat(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* a + b for times in ns, saturating at INT64_MIN / INT64_MAX instead of
 * overflowing: sums over sessions and ranks come from inputs (partials
 * included) that may hold anything the reader's ranges allow. */
static inline int64_t tl_ns_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* 100 * part / whole, 0 when whole is not positive (aggregate.c). */
double tl_pct(int64_t part, int64_t whole);
/* How full the rank's device got, in % of its memory: the largest of peak
 * allocated, peak reserved and peak device used (each its own series, see
 * docs/analysis.md); NaN when none is known or the device size is unknown.
 * The one peak figure everywhere a share is shown (ranks table, memory
 * table, JSON, the memory rule). */
double tl_rank_peak_device_pct(const tl_rank_result *r);

/* Add the across-rank row of a metric from one value per rank (vals[i] for
 * a->ranks[i]; NaN: the rank does not have it). metric must outlive a. */
void tl_aggregate_across_values(tl_aggregate *a, const char *metric, const double *vals);

/* The across-rank entry of a metric, or NULL. */
const tl_across *tl_aggregate_across(const tl_aggregate *a, const char *metric);

#endif
