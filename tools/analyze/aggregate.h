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
 * Analysis decides nothing about who an input is. tl_aggregate_finish first
 * has ingest settle the identity of the complete list (tl_sessions_settle,
 * session.h); from then on every analysis here, and every output in render,
 * takes a session into the numbers exactly when tl_session_counts says so.
 *
 * Times are int64 ns; sizes are bytes as doubles (NaN: unknown).
 *
 * Which file implements what is declared here (each section says it too):
 *   aggregate.c     init, sessions and partials in (tl_aggregate_add_*, the
 *                   options check), tl_aggregate_finish and its ranks, across
 *                   rows, tl_pct, tl_rank_peak_device_pct, tl_format
 *   diffusion.c     tl_rank_diffusion_* (per rank; per session in
 *                   session_analysis.h)
 *   calltrees.c     tl_calltrees_begin, _add_rank, _end
 *   stragglers.c    tl_find_stragglers, tl_straggler_lead
 *   kinfo.c         tl_kernel_info, tl_kernel_type
 *   stepcats.c      tl_aggregate_stepcats
 *   rules.c         tl_apply_rules, tl_decide_headline, tl_rules,
 *                   tl_rule_skip_absent_list
 * The analysis of one input into its session (session_analysis.c, context.c,
 * diffusion.c, gpu_health.c, growth.c, stepcats.c, kinfo.c) and the analysis
 * options are declared in session_analysis.h, which this header includes;
 * the other steps of tl_aggregate_finish have their own headers (names.h,
 * metrics.h, drift.h, waits.h, collbw.h, shapes.h, telemetry.h).
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
#include "metrics.h"
#include "names.h"
#include "profile.h"
#include "partial.h"
#include "session.h"
#include "spill.h"
#include "telemetry.h"
#include "collbw.h"
#include "shapes.h"
#include "waits.h"

#include "session_analysis.h" /* the per-session stage and tl_analyze_options */

/* ---- per rank ------------------------------------------------------------ */

/* Video diffusion of a rank's sessions added up (diffusion.c; docs/analysis.md). */
typedef struct tl_rank_diffusion {
    uint64_t blocks, sized, steps;
    double frames, size_min, size_max;
    int64_t block_ns, sized_ns, step_ns;
    int64_t first_block_ns, later_median_ns; /* of the first session with blocks; -1 none */
    double mem_peak, rss_peak;               /* the most GPU memory and RSS of a block over the sessions; NaN unknown */
    double fps, bps, block_size; /* frames / s and blocks / s of block computation, frames per block; NaN unknown */
} tl_rank_diffusion;
void tl_rank_diffusion_init(tl_rank_diffusion *d);
void tl_rank_diffusion_add(tl_rank_diffusion *d, const tl_sdiffusion *s);
void tl_rank_diffusion_finish(tl_rank_diffusion *d);

typedef struct tl_rank_result {
    int rank;
    int world_size;
    size_t nsessions;
    size_t *sessions; /* indices into the aggregate's sessions, in order */
    /* steps of every session, in session order */
    tl_sstep *steps;
    size_t nsteps;
    double step_mean, step_median, step_min, step_max, step_std, step_spread; /* ns; spread = (max-min)/median */
    double compute_per_step; /* median of the per-step compute; NaN unknown */
    tl_gpu_breakdown gpu;    /* sessions added up */
    double peak_allocated, peak_reserved, device_total, peak_rss, gpu_util_mean;
    double peak_device_used; /* as in tl_session */
    int64_t span_ns;         /* sum of the sessions' spans */
    tl_rank_telemetry tel;   /* sampled telemetry of every session */
    int straggler;           /* marked by the straggler analysis */
    uint64_t step_count;     /* steps: nsteps, else the count of a report's loop summary (FramePack) */
    int steps_summarized;    /* step_count and the step statistics come from a loop summary */
    tl_rank_diffusion diff;  /* video diffusion of every session (diffusion.c) */
    /* The rank's call tree: its session's, or the sum of its sessions' when
     * there are several (own_calltree); NULL when no session has one. */
    const tl_calltree *calltree;
    tl_calltree own_calltree;
    /* The rank's mean step by category (stepcats.c): over its steps that
     * have categories and are not cut short (tl_sstep.partial); ns by
     * tl_stepcat. stepcat_steps 0: none. */
    double stepcat_mean[TL_SC_COUNT];
    size_t stepcat_steps;
    int stepcats_cut; /* a session's host events went past the ranges' cap */
} tl_rank_result;

/* ---- across ranks --------------------------------------------------------- */

/* A per-rank metric summarized across ranks: one per entry of the metrics
 * registry (metrics.h) that at least one rank has. */
typedef struct tl_across {
    const tl_metric *info;                         /* its registry entry: label, unit, direction */
    const char *metric;                            /* info->name, e.g. "step_time_ns", "gpu.idle_pct" */
    int n;                                         /* ranks that have it */
    double min, max, mean, median, std, imbalance; /* imbalance = max / mean */
    int min_rank, max_rank;
} tl_across;

typedef struct tl_evidence_item {
    char *name;      /* a kernel, op or section */
    double delta_ns; /* how much more the straggler spends on it per step */
} tl_evidence_item;

typedef struct tl_straggler {
    int rank;
    char *kind;                  /* "compute" or "last_arrival" */
    const char *severity;        /* "info", "warning", "critical": by effect and evidence */
    int units, slower;           /* steps (or collectives) compared, and those it was slower in (last in) */
    double noise_pct;            /* the ranks' own step-to-step noise, % */
    char *summary;               /* one sentence with the numbers */
    double value, others_median; /* the metric on this rank and the median of the others */
    double delta_pct;
    tl_evidence_item items[5];
    int nitems;
} tl_straggler;

/* How a straggler's first evidence item is introduced: "most of it in" when
 * its excess per step is at least half the straggler's, else "the largest
 * part in" (names nest: the items' excesses overlap and do not add up). */
const char *tl_straggler_lead(const tl_straggler *s);

/* A rule that did not apply to this data, and why. */
typedef struct tl_rule_skip {
    const char *id;
    char *why;
    int absent; /* the inputs carry no data of the kind the rule reads
                                * (no GPU events, no monitor samples, no diffusion
                                * blocks): summary and Markdown list these by id only */
} tl_rule_skip;

typedef struct tl_recommendation {
    const char *id;
    const char *severity; /* "info", "warning", "critical" */
    char *finding;        /* what was found, one sentence with its number */
    const char *advice;   /* what to do (the rule's, or one chosen from the evidence) */
    char *message;        /* finding + advice */
    char *evidence;       /* the numbers that made it fire */
    int rank;             /* -1 for the whole run */
} tl_recommendation;

/* What the rules and the shapes table read of a session's bulk (its names,
 * kernels, memory series), taken in tl_aggregate_finish's one pass over it
 * (spill.h: the bulk may be on disk when they run). rules.c fills it
 * (tl_rules_session_facts). */
typedef struct tl_session_facts {
    int has_kernels;     /* kernels > 0 (shapes.c: the operators ran beside GPU work) */
    uint64_t colls_hash; /* its collectives' kernel names, FNV-1a of each, summed */
    unsigned attention;  /* TL_ATTENTION_*: the attention paths its names and kernels show */
    /* the jumps of reserved memory in its readings (rules.c, reserved_jumps):
     * enough readings to scan, of snapshots (else its memory series); the
     * jumps, their total, the largest, the allocated memory at it, the
     * reading after it and, in a series, its time after the first reading */
    int jumps_read, jumps_snaps, jumps_n;
    double jumps_total, jumps_big, jumps_big_alloc;
    size_t jumps_big_at;
    int64_t jumps_big_after_ns;
} tl_session_facts;
enum {
    TL_ATTENTION_MATH = 1, /* aten::_scaled_dot_product_attention_math */
    TL_ATTENTION_SOFTMAX = 2,
    TL_ATTENTION_MATMUL = 4, /* aten::bmm, matmul, baddbmm */
    TL_ATTENTION_FUSED = 8,  /* a fused (flash, memory-efficient) attention operator or kernel */
};
void tl_rules_session_facts(const tl_session *s, tl_session_facts *f);

#define TL_MAX_ACROSS 64
#define TL_MAX_STRAGGLERS 16
#define TL_MAX_RECOMMENDATIONS 32

typedef struct tl_aggregate {
    tl_session *sessions; /* every input (skipped ones too), sorted by rank, start, path */
    size_t nsessions, sessions_cap;
    tl_rank_result *ranks;
    size_t nranks;
    tl_name_table names; /* per (group, name) across ranks */
    tl_across across[TL_MAX_ACROSS];
    int nacross;
    tl_straggler stragglers[TL_MAX_STRAGGLERS];
    int nstragglers;
    tl_recommendation recs[TL_MAX_RECOMMENDATIONS];
    int nrecs;
    tl_rule_skip skips[TL_MAX_RECOMMENDATIONS];
    int nskips;
    char *straggler_note;          /* why no straggler was named ("no steps: cannot compare ranks"), or NULL */
    char *headline;                /* one sentence: the biggest opportunity with its number */
    const char *headline_severity; /* "ok" when nothing is wrong, else the finding's severity */
    int steps_compared;            /* the straggler analysis compared ranks step by step */
    char **notes;                  /* from tl_sessions_settle: separate runs, missing ranks (warnings) */
    size_t nnotes;
    tl_drift drift;   /* each stage per session, when a rank has two or more (drift.h) */
    tl_waits waits;   /* who waits for whom in collectives (waits.h) */
    tl_collbw collbw; /* collective bytes and bandwidth (collbw.h) */
    tl_shapes shapes; /* operators by input shape, FLOPs (analyze/shapes.h) */
    /* The call trees of the ranks summed path by path (calltrees.c), with
     * each node's least and most inclusive time of one rank (a rank that has
     * a tree but not the node counts 0); calltree_ranks ranks have a tree. */
    tl_calltree calltree;
    int calltree_ranks;
    /* The rank whose steps the per-step view shows (stepcats.c): the
     * straggler when one is named and has categories, else the rank whose
     * mean step is the median of those that have them; -1 none. */
    int stepcat_rank;
    int stepcat_rank_straggler; /* chosen as the straggler */
    tl_session_facts *facts;    /* per session (by index), from the pass over the bulk */
    /* Each kernel name's type (tl_kernel_type), by id in kernel_type_names. */
    int *kernel_types;
    size_t kernel_types_cap;
    tl_strtab kernel_type_names;
    /* Each kernel name's launch details (tl_kernel_info), by id in kinfo_names. */
    tl_skinfo *kinfo;
    size_t nkinfo, kinfo_cap;
    tl_strtab kinfo_names;
    tl_analyze_options opt;
    tl_kernel_classes *own_kernel_classes; /* owned: opt.kernel_classes when taken from a partial */
} tl_aggregate;

void tl_aggregate_init(tl_aggregate *a, const tl_analyze_options *opt);
void tl_aggregate_release(tl_aggregate *a);
/* Take ownership of a session result. */
int tl_aggregate_add_session(tl_aggregate *a, tl_session *s);
/* Take the sessions of a partial aggregate that ingest read (partial.h): they
 * become a's and p is left empty. An aggregate without sessions takes the
 * partial's analysis options; one with sessions refuses a partial analyzed
 * with other options (returns -1, err says so, p untouched). 0, or -1 when
 * out of memory (the sessions not yet taken stay p's). */
int tl_aggregate_add_partial(tl_aggregate *a, tl_partial *p, char *err, size_t errlen);
/* The analysis options as a partial records them (its "options": the GPU
 * window, the kernel-wait gap, the --kernel-class patterns, the read bounds
 * --max-names, --max-events and --max-input-size, each 0 when it is the
 * default): what the writer (render/partial_json.c), tally-mpi's wire and
 * tl_partial_options_check all take. Points into opt's kernel classes. */
tl_partial tl_partial_options_of(const tl_analyze_options *opt);
/* The one check of a partial's recorded analysis options against opt (the
 * command's, or those of the partials already taken, as others says: "this
 * command", "the inputs before it"): 0 when they agree (or the partial records
 * none), else -1 with why naming the first option that differs and both
 * values ("made with --kernel-class 'x*=comm', this command with no
 * --kernel-class"). */
int tl_partial_options_check(const tl_partial *p, const tl_analyze_options *opt, const char *others, char *why,
                             size_t n);
/* Settle the sessions' identity (tl_sessions_settle: sorted, runs, session
 * numbers, notes), then build ranks from the sessions that count, across-rank
 * metrics, stragglers and recommendations. Deterministic in the set of
 * sessions. */
int tl_aggregate_finish(tl_aggregate *a);

/* The ranks' and the merged call trees (calltrees.c), built rank by rank in
 * tl_aggregate_finish's pass over the sessions' bulk (each rank's sessions
 * held, spill.h): begin, each rank in order, end. A rank of one session with a
 * tree points at that session's (read while it is held); of several, at its
 * own sum. 0, or -1 when out of memory. */
typedef struct tl_calltrees {
    uint32_t *map; /* a rank's node -> the merged node */
    uint32_t have; /* merged nodes with their least and most set up */
} tl_calltrees;
int tl_calltrees_begin(tl_calltrees *c);
int tl_calltrees_add_rank(tl_aggregate *a, tl_calltrees *c, tl_rank_result *r);
void tl_calltrees_end(tl_aggregate *a, tl_calltrees *c);

/* Stragglers (stragglers.c) and rules (rules.c), run by tl_aggregate_finish. */
void tl_find_stragglers(tl_aggregate *a);
/* The launch details of a kernel name over the counted sessions (kinfo.c):
 * the entry of the session where most of its time has a known operator, or
 * else the first with a launch configuration; NULL when none has it. Read
 * from the table tl_aggregate_finish builds (a session's details may be on
 * disk by then: spill.h). */
const tl_skinfo *tl_kernel_info(const tl_aggregate *a, const char *name);
/* A rank's sessions with their bulk in memory (spill.h) until the matching
 * drop: what an output that shows a rank in full reads first. */
void tl_aggregate_hold_rank(const tl_aggregate *a, const tl_rank_result *r);
void tl_aggregate_drop_rank(const tl_aggregate *a, const tl_rank_result *r);
/* The type (tl_kernel_type) of a kernel name over the counted sessions, what
 * the kernel tables colour it by; the lowest when sessions disagree; -1 when
 * no session has the kernel. */
int tl_kernel_type(const tl_aggregate *a, const char *name);
/* Add a counted session's launch details and kernel types to those tables
 * (sessions in order); 0, or -1 when out of memory. */
int tl_aggregate_kinfo_add(tl_aggregate *a, const tl_session *s);
void tl_aggregate_kinfo_release(tl_aggregate *a);
/* Each rank's mean step by category and the rank the per-step view shows (stepcats.c). */
void tl_aggregate_stepcats(tl_aggregate *a);
void tl_apply_rules(tl_aggregate *a);

/* One rule of the recommendation table (rules.c): what it says and the check
 * that decides it, together. Its texts name thresholds as {NAME}, one of
 * tl_rule_thresholds (the docs table writes their values in). */
typedef struct tl_rule_info {
    const char *id, *severity;
    void (*check)(tl_aggregate *a); /* decides this rule (and the rules next to it with the same check) */
    const char *condition, *preconditions, *evidence, *advice;
    const char *scale; /* how the severity grows, when it is not always `severity` (or NULL) */
} tl_rule_info;
/* A threshold the rules' texts name: NAME is its #define in rules.c (or the
 * header it comes from), kind a tl_num_kind (numbers.h) saying how it reads. */
typedef struct tl_rule_threshold {
    const char *name;
    int kind;
    double value;
} tl_rule_threshold;
const tl_rule_threshold *tl_rule_thresholds(size_t *n);
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

/* 100 * part / whole, 0 when whole is not positive (aggregate.c). */
double tl_pct(int64_t part, int64_t whole);
/* How full the rank's device got, in % of its memory: the largest of peak
 * allocated, peak reserved and peak device used (each its own series, see
 * docs/analysis.md); NaN when none is known or the device size is unknown.
 * The one peak figure everywhere a share is shown (ranks table, memory
 * table, JSON, the memory rule). */
double tl_rank_peak_device_pct(const tl_rank_result *r);

/* The across-rank entry of a metric, or NULL. */
const tl_across *tl_aggregate_across(const tl_aggregate *a, const char *metric);

#endif
