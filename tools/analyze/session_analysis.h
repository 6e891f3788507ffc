/*
 * session_analysis.h - the per-session stage: one input's profile (ingest's
 * tl_profile) into its session result (ingest's tl_session), on the thread
 * that read it, with the analysis options every command passes down.
 *
 * Which file implements what:
 *   session_analysis.c  tl_analyze_options_init, tl_session_analyze (names,
 *                       steps, the GPU breakdown, timeline, memory, call tree,
 *                       collectives, shapes), tl_session_drop_samples,
 *                       tl_session_drop_bins
 *   context.c           tl_session_context
 *   diffusion.c         tl_session_diffusion
 *   gpu_health.c        tl_session_health
 *   growth.c            tl_session_growth
 *   stepcats.c          tl_session_stepcats
 *   kinfo.c             tl_session_kinfo
 * What crosses sessions and ranks is in aggregate.h.
 */
#ifndef TALLY_SESSION_ANALYSIS_H
#define TALLY_SESSION_ANALYSIS_H

#include <stdint.h>

#include "profile.h"
#include "session.h"

/* Thresholds of the per-session analysis (gpu_health.c, growth.c; docs/analysis.md). */
#define TL_HOT_C 85.0            /* Inferix's thermal_throttling_risk threshold */
#define TL_POWER_CAP_SHARE 0.95  /* a power sample within 5 % of the limit */
#define TL_LOADED_UTIL_PCT 50.0  /* a GPU sample "under load": utilization at 50 % or more */
#define TL_GROWTH_NOISE 0.01     /* a drop under 1 % of the value is noise, not a drop */
#define TL_GROWTH_WINDOWS 8      /* a monitor's samples after the first quarter: 8 windows ... */
#define TL_GROWTH_MIN_SAMPLES 24 /* ... of at least 24 samples */

/* A trace time at or beyond this (2001-09-09 in ns since the epoch) is on
 * the wall clock: older Kineto traces write absolute µs without
 * baseTimeNanoseconds, and no monotonic or relative clock gets that far. */
#define TL_WALL_CLOCK_MIN_NS 1000000000000000000LL

/* What a session carries besides its timings (session.h), from its profile;
 * 0 or -1 (out of memory). */
int tl_session_context(tl_session *s, const tl_profile *p);   /* context.c */
int tl_session_diffusion(tl_session *s, const tl_profile *p); /* diffusion.c */
int tl_session_health(tl_session *s, const tl_profile *p);    /* gpu_health.c */
int tl_session_growth(tl_session *s, const tl_profile *p);    /* growth.c */
/* stepcats.c: each step's time by category, and each collective instance's
 * window (s->insts taken first) */
int tl_session_stepcats(tl_session *s, const tl_profile *p);
int tl_session_kinfo(tl_session *s, const tl_profile *p); /* kinfo.c: kernels' launching operators */

/* Every option that changes what the analysis computes, in one struct: the
 * command line fills it (cli.c), the pipeline passes it down to the readers
 * (tl_pipeline_ingest_options) and to each session's analysis, and the
 * aggregate keeps a copy (tl_aggregate.opt). No option lives in process
 * state. Partials record those the sessions depend on (tl_partial_options_of,
 * aggregate.h). */
typedef struct tl_analyze_options {
    int whole_trace;        /* use every GPU event, not the ProfilerStep window */
    int64_t kernel_wait_ns; /* gap under which idle time is kernel_wait (30 µs) */
    /* Every input of a rank is one of its sessions, even one that run
     * identity tells apart as another run (said in a note): what
     * `tally compare --sessions` asks for. Applied when the aggregate is
     * finished, after partials join: partials need not record it. */
    int sessions_across_runs;
    /* The --kernel-class patterns GPU events are classified with (ingest
     * classifies each event by them; stragglers and waits classify names);
     * partials record them (tl_kernel_classes_spec) and a partial must match
     * them to join. Not owned; NULL: the built-in table only. */
    const tl_kernel_classes *kernel_classes;
    /* Read bounds per input (0: the defaults of profile.h and discover.h):
     * reached, they change the numbers, so partials record them too. */
    uint32_t max_names;       /* --max-names N */
    uint64_t max_events;      /* --max-events N */
    uint64_t max_input_bytes; /* --max-input-size BYTES (K, M, G suffixes) */
    /* The command has no use for each session's samples of every name (only
     * compare and partial aggregates do): they are freed as soon as a session
     * is analyzed (tl_session_drop_samples), so that memory per rank stays
     * small. Not an analysis option: partials do not record it. */
    int drop_samples;
    /* Nor for the timeline's bins (only the HTML, the merged trace and JSON
     * draw or write them; no analysis reads them): each lane's busy rows are
     * freed as soon as a session is analyzed (tl_session_drop_bins), ~32 KB
     * of every rank of a real H200 trace. `summary` sets it. Not recorded. */
    int drop_bins;
    /* Sessions kept whole in memory, by count or by the bytes of their
     * details, before the bulk of the rest goes to a temporary file
     * (spill.h; tl_spill_limits): set by the commands that read many ranks
     * into one aggregate (report, summary, aggregate, merge, tally-mpi's
     * process 0); SIZE_MAX and UINT64_MAX (the default): never. Not an
     * analysis option: nothing it reads changes, partials do not record it. */
    size_t spill_after;
    uint64_t spill_after_bytes;
    /* Outputs written at once (report's HTML, JSON, Markdown and trace, each
     * on a thread of its own; the JSON's sessions on up to 8): the command's
     * --jobs; tally-mpi's process 0 takes the CPUs its job's processes on its
     * node were bound to once they are done. Nothing it computes changes;
     * partials do not record it. */
    int output_jobs;
} tl_analyze_options;

void tl_analyze_options_init(tl_analyze_options *o);

/* Analyze one usable profile into a session result (allocated inside s),
 * with a copy of its identity as it stands: analysis runs on the reading
 * threads, before ingest settles ranks and companions over the whole run,
 * so the caller takes those in afterwards (tl_identity_take_settled). */
int tl_session_analyze(tl_session *s, const tl_profile *p, const tl_analyze_options *opt);
/* Free the samples kept per name and kernel (up to TL_PROFILE_MAX_SAMPLES each,
 * the largest part of an analyzed session); counts, totals, histograms and
 * everything else stay. */
void tl_session_drop_samples(tl_session *s);
/* Free each timeline lane's busy rows (tl_lane_busy reads 0 after); the lanes,
 * their labels and calls stay (settle places a report's steps by the calls). */
void tl_session_drop_bins(tl_session *s);

#endif
