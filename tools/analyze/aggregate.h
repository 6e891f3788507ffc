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

#include "calltree.h"
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
    uint64_t host_gaps;        /* the gaps counted in host_wait (their mean tells launch
                                * overhead from host work between launches) */
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

/* A CPU lane's longest calls, drawn by name over the bins: the
 * TL_LANE_TOP_EVENTS longest calls of the thread at most TL_LANE_MAX_DEPTH
 * deep in their kind's stack (nesting.h), each on a row: one below the
 * innermost kept call that contains it, or further down when that row is
 * taken (the kinds nest separately, so an operator and an annotation can
 * overlap without one containing the other). Calls that would go below
 * TL_LANE_MAX_DEPTH rows are left out and counted. */
typedef struct tl_lane_call {
    int64_t ts_ns, dur_ns;     /* on the timeline's axis */
    uint32_t name;             /* id in the timeline's names */
    uint8_t row;               /* 0 .. TL_LANE_MAX_DEPTH - 1 */
} tl_lane_call;

typedef struct tl_lane {
    int kind;                  /* tl_lane_kind */
    int64_t a, b;              /* GPU: device, stream; CPU: pid, tid */
    char *label;               /* "GPU 0 stream 7", "thread 1234 main" */
    float busy[TL_KT_COUNT][TL_TIMELINE_BINS]; /* fraction 0..1 of each bin, by tl_kernel_type */
    tl_lane_call *calls;       /* CPU lanes: sorted by start; NULL when none */
    uint32_t ncalls;
    uint64_t calls_left;       /* nested calls of the thread not among calls (shorter, deeper) */
} tl_lane;

typedef struct tl_timeline {
    int64_t start_ns, end_ns;  /* the bins' range; start >= end: no timeline */
    tl_lane *lanes;
    size_t nlanes;
    tl_strtab names;           /* the names of the lanes' calls */
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
    int64_t ts_ns;             /* on the timeline axis; INT64_MIN unknown */
} tl_ssnap;

/* ---- what a session carries besides its timings ---------------------------
 * Events, tags, counters and the host (context.c), the video diffusion
 * metrics (diffusion.c), each GPU's temperature and power against their
 * limits (gpu_health.c) and memory that grows at a repeated point of the
 * work (growth.c). Definitions: docs/analysis.md. */

/* A report's event (libtally's tally_event, Inferix's custom events). */
typedef struct tl_sevent {
    int64_t ts_ns;             /* on the timeline axis; INT64_MIN unknown */
    char *name, *payload;      /* payload: its data as text, at most TL_EVENT_PAYLOAD_MAX bytes */
} tl_sevent;
#define TL_SESSION_MAX_EVENTS 200    /* kept per session (the first by time); events_total counts all */

/* A counter the program recorded (libtally's tally_counter, a trace's "C" events). */
typedef struct tl_scounter {
    char *name;
    int source;                /* tl_counter_source */
    uint64_t count;
    double min, mean, max;
} tl_scounter;
#define TL_SESSION_MAX_COUNTERS 64   /* kept per session (by name); counters_total counts all */
#define TL_SESSION_MAX_TAGS 64

/* The host a collector ran on ("" / 0 / NaN unknown). */
typedef struct tl_ssystem {
    char *hostname, *os;
    int cpus;
    double memory_bytes;
} tl_ssystem;

/* Block-wise video diffusion (Inferix's block_analysis, diffusion_analysis and
 * computation_analysis), per session. */
typedef struct tl_sdiffusion {
    uint64_t blocks;           /* block records; 0: none */
    uint64_t sized;            /* blocks that say their size (frames) */
    double frames;             /* the sized blocks' frames added up */
    double size_min, size_max; /* frames per block; NaN unknown */
    int64_t block_ns;          /* the blocks' computation time added up */
    int64_t sized_ns;          /* ... of the sized blocks (FPS = frames / sized_ns) */
    int64_t first_block_ns;    /* the first block's computation time; -1 none */
    int64_t later_median_ns;   /* the median of the blocks after the first; -1 fewer than 2 */
    uint64_t steps;            /* denoising step records (diffusion_analysis.steps) */
    int64_t step_ns;           /* their computation time added up */
    uint32_t layers;           /* layers timed (computation_analysis.layer_performance) */
    int64_t layers_ns;         /* their total time added up */
    char *top_layer;           /* the layer with the most time, or NULL */
    int64_t top_layer_ns;
} tl_sdiffusion;

/* A GPU's temperature and power against their limits (thresholds below). */
typedef struct tl_shealth {
    int64_t device;
    uint64_t temp_n, hot_n;    /* temperature samples; those above TL_HOT_C */
    int64_t hot_ns;            /* time above TL_HOT_C: each hot sample until the next sample */
    double temp_max;           /* NaN without temperature samples */
    uint64_t power_n, cap_n;   /* power samples with a known limit; those at TL_POWER_CAP_SHARE of it or above */
    double power_limit_w;      /* the highest limit seen; NaN unknown */
    double power_max;          /* the highest power sample; NaN none */
    uint64_t reasons_n;        /* samples with NVML's clocks event reasons */
    uint64_t thermal_n, power_throttle_n; /* ... reporting a thermal slowdown / a power cap or brake */
} tl_shealth;
#define TL_HOT_C 85.0              /* Inferix's thermal_throttling_risk threshold */
#define TL_POWER_CAP_SHARE 0.95    /* a power sample within 5 % of the limit */

/* A memory reading taken again and again at one point of the work (a
 * snapshot label, each step, each block, windows of a monitor's samples). */
typedef struct tl_sgrowth {
    char *what;                /* "allocated at snapshot \"after_step_#\"", ... */
    int metric;                /* tl_growth_metric */
    uint32_t n, drops;         /* repetitions; those below the one before by over TL_GROWTH_NOISE */
    double first, last, max;   /* bytes */
    int64_t span_ns;           /* from the first to the last repetition; -1 unknown */
} tl_sgrowth;
enum tl_growth_metric { TL_GROWTH_ALLOCATED = 0, TL_GROWTH_DEVICE_USED, TL_GROWTH_RSS, TL_GROWTH_COUNT };
#define TL_SESSION_MAX_GROWTH 16
#define TL_GROWTH_MIN_REPEATS 4    /* repetitions for a sequence */
#define TL_GROWTH_NOISE 0.01       /* a drop under 1 % of the value is noise, not a drop */
#define TL_GROWTH_WINDOWS 8        /* a monitor's samples after the first quarter: 8 windows ... */
#define TL_GROWTH_MIN_SAMPLES 24   /* ... of at least 24 samples */

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
    int abs_time;              /* start_ns is on the wall clock (base time known, or the
                                * trace's own clock is the wall clock: TL_WALL_CLOCK_MIN_NS) */
    int64_t pid;               /* the process that recorded it; -1 unknown (run identity;
                                * the host is sys.hostname) */
    uint64_t graph_launches;   /* cudaGraphLaunch / hipGraphLaunch calls and graph replays */
    int run;                   /* which run it belongs to (run identity, aggregate.c); 0 the analyzed one */
    /* The call tree of the nested CPU events (calltree.h, names its own);
     * empty (n == 0) when the input does not nest. */
    tl_calltree calltree;

    double peak_allocated, peak_reserved, device_total, peak_rss; /* bytes, NaN unknown */
    double peak_device_used;   /* NVML's device memory used (all processes); never merged
                                * into peak_allocated (docs/analysis.md); NaN unknown */
    double gpu_util_mean;      /* % from a monitor's samples (Inferix, sampler); NaN unknown */

    /* besides the timings (see above) */
    tl_sevent *events;         /* the first TL_SESSION_MAX_EVENTS by time */
    size_t nevents;
    uint64_t events_total;     /* every event the input recorded */
    char **tags;               /* "key=value" */
    size_t ntags;
    tl_scounter *counters;
    size_t ncounters;
    uint64_t counters_total;
    tl_ssystem sys;
    tl_sdiffusion diff;
    tl_shealth *health;        /* per GPU with temperature or power samples */
    size_t nhealth;
    tl_sgrowth *growth;
    size_t ngrowth;
} tl_session;

/* A trace time at or beyond this (2001-09-09 in ns since the epoch) is on
 * the wall clock: older Kineto traces write absolute µs without
 * baseTimeNanoseconds, and no monotonic or relative clock gets that far. */
#define TL_WALL_CLOCK_MIN_NS 1000000000000000000LL

/* What a session carries besides its timings, from its profile (the four
 * modules above); 0 or -1 (out of memory). */
int tl_session_context(tl_session *s, const tl_profile *p);   /* context.c */
int tl_session_diffusion(tl_session *s, const tl_profile *p); /* diffusion.c */
int tl_session_health(tl_session *s, const tl_profile *p);    /* gpu_health.c */
int tl_session_growth(tl_session *s, const tl_profile *p);    /* growth.c */
void tl_session_extras_init(tl_session *s);
void tl_session_extras_release(tl_session *s);

/* Analysis options. */
typedef struct tl_analyze_options {
    int whole_trace;           /* use every GPU event, not the ProfilerStep window */
    int64_t kernel_wait_ns;    /* gap under which idle time is kernel_wait (30 µs) */
    /* Every input of a rank is one of its sessions, even one that run
     * identity tells apart as another run (said in a note): what
     * `tally compare --sessions` asks for. */
    int sessions_across_runs;
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

/* ---- per rank ------------------------------------------------------------ */

/* Video diffusion of a rank's sessions added up (diffusion.c; docs/analysis.md). */
typedef struct tl_rank_diffusion {
    uint64_t blocks, sized, steps;
    double frames, size_min, size_max;
    int64_t block_ns, sized_ns, step_ns;
    int64_t first_block_ns, later_median_ns; /* of the first session with blocks; -1 none */
    double fps, bps, block_size; /* frames / s and blocks / s of block computation, frames per block; NaN unknown */
} tl_rank_diffusion;
void tl_rank_diffusion_init(tl_rank_diffusion *d);
void tl_rank_diffusion_add(tl_rank_diffusion *d, const tl_sdiffusion *s);
void tl_rank_diffusion_finish(tl_rank_diffusion *d);

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
    uint64_t step_count;       /* steps: nsteps, else the count of a report's loop summary (FramePack) */
    int steps_summarized;      /* step_count and the step statistics come from a loop summary */
    tl_rank_diffusion diff;    /* video diffusion of every session (diffusion.c) */
    /* The rank's call tree: its session's, or the sum of its sessions' when
     * there are several (own_calltree); NULL when no session has one. */
    const tl_calltree *calltree;
    tl_calltree own_calltree;
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
    int absent;                /* the inputs carry no data of the kind the rule reads
                                * (no GPU events, no monitor samples, no diffusion
                                * blocks): summary and Markdown list these by id only */
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
    /* The call trees of the ranks summed path by path (calltrees.c), with
     * each node's least and most inclusive time of one rank (a rank that has
     * a tree but not the node counts 0); calltree_ranks ranks have a tree. */
    tl_calltree calltree;
    int calltree_ranks;
    tl_analyze_options opt;
} tl_aggregate;

void tl_aggregate_init(tl_aggregate *a, const tl_analyze_options *opt);
void tl_aggregate_release(tl_aggregate *a);
/* Take ownership of a session result. */
int tl_aggregate_add_session(tl_aggregate *a, tl_session *s);
/* Sort sessions, build ranks, across-rank metrics, stragglers and
 * recommendations. Deterministic in the set of sessions. */
int tl_aggregate_finish(tl_aggregate *a);

/* The across-rank rows "diffusion.fps", ".bps", ".first_block_ns", ".block_size" (diffusion.c). */
void tl_diffusion_across(tl_aggregate *a);
/* The ranks' and the merged call trees (calltrees.c), run by tl_aggregate_finish
 * after the ranks are built. 0, or -1 when out of memory. */
int tl_aggregate_calltrees(tl_aggregate *a);

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
/* The rules that did not apply for want of any data of their kind, as one
 * phrase: "thermal, power-at-cap (the inputs carry no such data; tally
 * aggregate says what each needs)". Malloc'd; NULL when out of memory. */
char *tl_rule_skip_absent_list(const tl_aggregate *a);
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

/* The ranks a declared world size promises and are not there, as one
 * sentence in buf ("1 of 8 ranks present (world size 8): missing ranks
 * 1-7"), with ranks at or beyond it; ranks sorted ascending, each once.
 * 1 when there is something to say, else 0 (buf ""). */
int tl_missing_ranks(const int *ranks, size_t n, int world, char *buf, size_t size);

/* The across-rank entry of a metric, or NULL. */
const tl_across *tl_aggregate_across(const tl_aggregate *a, const char *metric);

#endif
