/*
 * compare.h - `tally compare`: a baseline run against a candidate run.
 *
 * The one idea: both runs are finished aggregates (tl_aggregate), and a
 * comparison is a list of rows, one per (group, name) overall and per rank
 * present in both runs, each with both sides' medians and confidence
 * intervals, the delta of the chosen metric, a Mann–Whitney U test over the
 * raw samples (per call, per iteration, per step) and a verdict. Everything
 * the outputs show (HTML, JSON, Markdown, JUnit) is read from that list, so
 * they cannot disagree.
 *
 * Names are matched exactly, or by their normalized form (--normalize: C++
 * template arguments, parameter lists, return types and numeric suffixes
 * dropped), in which case the samples of every name that normalizes the same
 * are pooled. Ranks are matched by rank number. The statistics are those of
 * significance.h; a regression is a significant slowdown of more than the
 * threshold in the chosen metric, an improvement likewise.
 *
 * Each name is compared by several metrics, each a row: the time per call
 * (the samples), the total per run (count x time: what the run spent on it),
 * the total per step and the calls per step (more calls of a faster function
 * is slower overall). Steps are compared by step time, and each rank's peak
 * memory (allocated, reserved, RSS) by its value per session.
 *
 * The rows are two families (docs/compare.md says all of it):
 *  - primary rows decide the gate: step time (all ranks and each rank), and
 *    over all ranks the total per run of every stage (sections, iterations,
 *    GPU annotations, kernels) and peak memory. The gate's question has a
 *    direction, so their one-sided "slower" p-values are adjusted with Holm's
 *    method: alpha bounds the chance of any false regression in the gate
 *    (their "faster" p-values likewise, apart);
 *  - explanatory rows (per call, per step, calls per step, ops, runtime) say
 *    why; their two-sided p-values are adjusted with Benjamini–Hochberg (the
 *    share of false verdicts among the verdicts stays under alpha).
 * Every test carries the threshold: "slower by more than the threshold" is
 * the U test of the candidate's samples over (1 + threshold) against the
 * baseline's, so a run that did not change is far inside the null; within
 * one rank, from 5 to 8 samples a side, the exact permutation test of the
 * trimmed means of the log durations with the same hypotheses (a spike
 * among 8 calls cannot hide a change).
 * The ranks of one run are not one sample of a name (a straggler is not a
 * change), so an all-ranks row does not pool them: with samples on every
 * rank, the stratified U test (the ranks' U statistics summed, each rank
 * against itself); with one sample a rank, the rank-level test over the
 * per-rank log ratios (their mean, the variance pooled over the rows of
 * like noise of the family, group and metric, a spike on one rank left
 * out; the change wanted on most ranks). A row that cannot be tested at all (one report per side, as
 * FramePack and Inferix write) gets a verdict from its effect size alone,
 * labelled as untested, when the change is beyond the large-change threshold
 * (max_untested_pct, 25 %); the gate honours it on primary rows (all ranks)
 * whose increase is at least untested_floor_pct (1 %) of the run's time.
 */
#ifndef TALLY_COMPARE_H
#define TALLY_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aggregate.h"
#include "json_writer.h"
#include "significance.h"

/* Steps are compared like a group of their own, after the name groups, and
 * peak memory after them. */
#define TL_CMP_GROUP_STEPS TL_GROUP_COUNT
#define TL_CMP_GROUP_MEMORY (TL_GROUP_COUNT + 1)
#define TL_CMP_NGROUPS (TL_GROUP_COUNT + 2)
/* The name of the steps row. */
#define TL_CMP_STEP_NAME "step"

/* A side needs this many samples for the U test. */
#define TL_CMP_MIN_SAMPLES 4
/* The rank-level test needs this many ranks on both sides. */
#define TL_CMP_MIN_RANKS 3
/* The share of samples trimmed off each end by the permutation test of
 * trimmed means (within one rank, 5 to 8 samples a side). */
#define TL_CMP_TRIM 0.2
/* The rank-level test pools the variance of the rows of one family, group
 * and kind when there are at least TL_CMP_POOL_MIN of them, over those of
 * like noise: a row whose variance the F test against the median of the
 * rows' variances finds larger at level TL_CMP_POOL_LEVEL is not, and is
 * judged without its farthest rank or by its own variance (compare.c,
 * rank_level_pooled). */
#define TL_CMP_POOL_MIN 5
#define TL_CMP_POOL_LEVEL 0.001
/* Rows of like noise whose variances still differ beyond chance at this
 * level (Bartlett) are judged each by its own variance moderated towards
 * the pool's (Smyth's empirical Bayes), not by the pooled one. */
#define TL_CMP_MODERATE_LEVEL 0.01
/* A row like the pool but for a spike on one rank is judged without that
 * rank with the pool's variance when its other ranks are quiet in their
 * ratios and their levels at this level (the F test of both, compare.c,
 * mark_like); else by the larger of the pool's and their own. */
#define TL_CMP_QUIET_LEVEL 0.2
/* A row is of like noise (or like it without its farthest rank) only when
 * its ranks' levels are not noisier than the pool's at this level either: a
 * stage noisier than the rest spreads its levels as much as its ratios,
 * which may happen to look quiet (compare.c, level_ss, mark_like). */
#define TL_CMP_LEVELS_LEVEL 0.01
/* A rank's effect on the levels is learnt from the pool's other rows, at
 * least this many; a row with a rank in fewer is judged without levels. */
#define TL_CMP_LEVELS_MIN_ROWS 3
/* Default large-change threshold of untested rows (--max-untested-change). */
#define TL_CMP_MAX_UNTESTED_PCT 25.0
/* Default floor of the gate's untested rows (--untested-floor): an untested
 * increase of a stage's total per run fails the gate only when it adds this
 * share of the run's time (tl_cmp_row.run_share_pct). */
#define TL_CMP_UNTESTED_FLOOR_PCT 1.0

/* What a row compares. */
enum tl_cmp_kind {
    TL_CMP_PER_CALL = 0,   /* time per call: the samples (steps: the step time) */
    TL_CMP_PER_RUN,        /* total per run: each session's total is one sample */
    TL_CMP_PER_STEP,       /* total per step: the run's total over its steps */
    TL_CMP_CALLS_PER_STEP, /* calls per step (counted, not tested) */
    TL_CMP_PEAK_ALLOCATED, /* bytes, one value per session */
    TL_CMP_PEAK_RESERVED,
    TL_CMP_PEAK_RSS,
    TL_CMP_KIND_COUNT
};

enum tl_cmp_metric { TL_CMP_MEDIAN = 0, TL_CMP_MEAN, TL_CMP_TOTAL };

/* How the p-values of a comparison's many tests are corrected. */
enum tl_cmp_correction { TL_CMP_HOLM = 0, TL_CMP_NO_CORRECTION };

/* Where a row's p-value comes from. */
enum tl_cmp_test {
    TL_TEST_NONE = 0, /* not tested (added, removed, too few samples) */
    TL_TEST_EXACT,    /* U test, exact null distribution */
    TL_TEST_NORMAL,   /* U test, normal approximation */
    TL_TEST_STRATA,   /* all ranks: the stratified U test (the ranks' U statistics summed) */
    TL_TEST_RANK_T,   /* all ranks: t over the per-rank log ratios, variance pooled */
    TL_TEST_PERM,     /* within one rank, 5 to 8 a side: permutation test of trimmed means of logs */
    TL_TEST_COUNT
};

enum tl_verdict {
    TL_VERDICT_UNCHANGED = 0,
    TL_VERDICT_REGRESSION,
    TL_VERDICT_IMPROVEMENT,
    TL_VERDICT_ADDED,          /* only in the candidate */
    TL_VERDICT_REMOVED,        /* only in the baseline */
    TL_VERDICT_TOO_FEW,        /* a side has fewer than TL_CMP_MIN_SAMPLES samples */
    TL_VERDICT_LARGE_INCREASE, /* not tested, but larger than max_untested_pct */
    TL_VERDICT_LARGE_DECREASE,
    TL_VERDICT_CHANGED, /* a count changed (calls per step) */
    TL_VERDICT_COUNT
};

typedef struct tl_cmp_options {
    int metric;                  /* tl_cmp_metric: what delta_pct and the geomean compare */
    double threshold_pct;        /* a regression is slower by more than this (5) */
    double alpha;                /* significance level (0.05), of the family with TL_CMP_HOLM */
    int correction;              /* tl_cmp_correction */
    double confidence;           /* of the median's interval (0.95) */
    int normalize;               /* match names by tl_compare_normalize */
    unsigned groups;             /* bit (1 << group) for each group compared, steps and memory included */
    double max_untested_pct;     /* untested rows beyond this change get a verdict (25) */
    double untested_floor_pct;   /* ... and fail the gate when they add this % of the run's time (1) */
    double memory_threshold_pct; /* peak memory rows: a regression grows by more than this; NaN: threshold_pct */
    double material_pct;         /* a name's total per run may fail the gate when its change per step is at least
                                 * this % of the baseline's step time (without steps: of the run's time); NaN:
                                 * threshold_pct (--materiality) */
    const char *title;           /* --title: what the comparison is (borrowed; NULL: none) */
    const char *labels[2];       /* --labels BASE,CAND: the runs' names ("main@abc1234", "PR 42"; borrowed;
                                 * NULL: "baseline", "candidate") */
    int session[2];              /* compare only this session (0-based) of each rank on each side; -1 all,
                                 * -2 the last (tally compare --sessions) */
} tl_cmp_options;

/* Defaults: median, 5 %, alpha 0.05 with Holm's correction (Benjamini–
 * Hochberg for explanatory rows), 95 % intervals, exact names, every group
 * except Python functions and "other" (too many, too noisy to gate on),
 * untested changes beyond 25 %, every session. */
void tl_cmp_options_init(tl_cmp_options *o);

/* One side of a row. Times in ns; NaN unknown. */
typedef struct tl_cmp_side {
    int present;
    uint64_t count;             /* calls (steps) */
    double total, mean, median; /* median of the samples (a report's summary median without them) */
    double ci_lo, ci_hi;        /* the median's interval; NaN with too few samples */
    size_t nsamples;            /* the samples tested: each session keeps up to TL_PROFILE_MAX_SAMPLES per name;
                                 * all-ranks run rows: the ranks */
    uint64_t steps;             /* run rows: the steps of the sessions compared */
    size_t nsessions;           /* run rows on a rank: the sessions compared */
} tl_cmp_side;

typedef struct tl_cmp_row {
    int group;      /* tl_group, TL_CMP_GROUP_STEPS or TL_CMP_GROUP_MEMORY */
    int kind;       /* tl_cmp_kind */
    int primary;    /* in the gate family */
    int gate;       /* its verdict fails --fail-on-regression */
    char *note;     /* why the verdict (untested, count changed), or NULL; owned */
    size_t all_row; /* a rank row: the index of its all-ranks row; SIZE_MAX otherwise */
    char *name;     /* as matched (normalized with --normalize); invalid UTF-8 shown as U+FFFD */
    int rank;       /* -1: all ranks */
    tl_cmp_side base, cand;
    double value_base, value_cand;   /* the chosen metric (per call), the row's value (other kinds) */
    double robust_base, robust_cand; /* per_run, per_step: calls x median per call instead of the calls'
                                      * total (NaN without samples); an untested verdict needs both */
    double delta_pct;                /* 100 (cand - base) / base of the chosen metric; NaN unknown */
    double impact_ns;                /* cand.total - base.total (what the bars sort by) */
    int floored;                     /* an untested increase kept out of the gate by untested_floor_pct */
    double step_share_pct;           /* all-ranks per-run rows of names with steps on both sides: 100 (the
                                 * candidate's time per rank and step - the baseline's) / the baseline's
                                 * median step time (compare.c, materiality); NaN otherwise */
    int material;                    /* primary rows: may fail the gate -- step and memory rows always; a name's
                                 * total per run when its change per step (step_share_pct; without steps
                                 * run_share_pct) is at least the threshold's share of the step (run) */
    int call_mix;                    /* per-call rows: the verdict is a change of call mix (calls x N, each call
                                 * about / N, the total per run not beyond the threshold), not of speed */
    int inconclusive;                /* unchanged, but moved beyond the threshold: not significant, or
                                 * (rank-level test) not on most ranks */
    double run_share_pct;            /* all-ranks per-run rows of names: 100 (value_cand - value_base) / the
                                 * run's time of the ranks that run the name (compare.c, run_shares,
                                 * rank_time); NaN otherwise */
    double u, p_value;               /* the test's U (of the candidate) and p; NaN when not tested */
    double p_adjusted;               /* p after the correction for all the comparison's tests */
    double p_floor;                  /* the smallest one-sided p the row's test could give (1 / C(n1 + n2, n1) for U) */
    double p_up, p_down;             /* one-sided p of "slower by more than the threshold", "faster by more" */
    tl_mwu mwu;                      /* the U test of the row's samples, whatever their number (p NaN: none) */
    tl_mwu mwu_up, mwu_down;         /* the same with the candidate's samples over 1 + threshold, 1 - threshold */
    /* The rank-level test (all-ranks rows, TL_TEST_RANK_T) over the ranks'
     * log ratios candidate/baseline: n ranks, how many changed by more than
     * the threshold up and down, the mean and sum of squares of all n, the
     * same of the n - 1 but the rank farthest from the median (from 4
     * ranks), whether the ratios differ at all; and what the test used: its
     * mean log ratio (the change it found: exp(lr_est) - 1) over lr_used
     * ranks. */
    size_t lr_n, lr_up, lr_down, lr_used;
    double lr_mean, lr_ss, lr_mean1, lr_ss1, lr_est;
    double lr_far;               /* the log ratio of the rank left out of lr_mean1 (NaN: none) */
    size_t ranks_from, ranks_to; /* its rank rows, rows[ranks_from, ranks_to) (empty: dropped) */
    int lr_spread;
    int test;        /* tl_cmp_test */
    int significant; /* p_adjusted < alpha */
    int verdict;     /* tl_verdict */
} tl_cmp_row;

/* The GPU temporal breakdown of a rank (or all ranks: rank -1) on each side,
 * in % of kernel time (HTA's definitions; overlap: % of communication time
 * overlapped by compute). [0] baseline, [1] candidate; NaN unknown. */
typedef struct tl_cmp_gpu {
    int rank;
    int present[2];
    double idle_pct[2], compute_pct[2], non_compute_pct[2], overlap_pct[2];
} tl_cmp_gpu;

/* How a metric of the registry moved (tl_cmp_metric_row). */
enum tl_cmp_change {
    TL_CHANGE_NONE = 0, /* not judged: no common rank, or neither direction is better */
    TL_CHANGE_WITHIN,   /* within the large-change threshold */
    TL_CHANGE_BETTER,   /* beyond it, the way the registry calls better */
    TL_CHANGE_WORSE,
};

/* A per-rank metric of the registry (metrics.h) on both sides: the across-
 * rank figure its policy names (the mean of the ranks, or the most), over
 * the ranks both runs have it on. One value per rank is too few to test:
 * these rows are descriptive, never in the gate; a change is judged only
 * beyond the large-change threshold (max_untested_pct; % metrics by points)
 * and only over common ranks. Metrics compare has rows of its own for
 * (steps, peak memory, the GPU breakdown) are left out. */
typedef struct tl_cmp_metric_row {
    const tl_metric *info;
    double value[2];  /* [0] baseline, [1] candidate; NaN: the side does not have it */
    int ranks[2];     /* ranks the figure is over (the same when common) */
    int common;       /* over the ranks both runs have it on; 0: no such rank, each run's own
                                 * ranks, not judged */
    double delta_pct; /* 100 (cand - base) / |base|; NaN unknown */
    double delta_pp;  /* % metrics: cand - base in percentage points; NaN otherwise */
    int change;       /* tl_cmp_change: beyond max_untested_pct, % metrics by points */
} tl_cmp_metric_row;

/* A counter the programs recorded (libtally's tally_counter, a trace's "C"
 * events), on either side: the mean of the compared sessions' means (each
 * session once, over the ranks the all-ranks rows are over), the largest
 * value, the samples recorded. No test (a counter's samples are not kept)
 * and never in the gate: a change beyond the large-change threshold
 * (max_untested_pct) is marked, like the registry's metrics. */
typedef struct tl_cmp_counter_row {
    char *name;             /* owned */
    double mean[2], max[2]; /* [0] baseline, [1] candidate; NaN: the side does not have it */
    uint64_t count[2];      /* values recorded */
    size_t sessions[2];     /* sessions that have it */
    double delta_pct;       /* of the mean: 100 (cand - base) / |base|; NaN unknown */
    int beyond;             /* |delta_pct| > max_untested_pct */
} tl_cmp_counter_row;

typedef struct tl_compare {
    tl_cmp_options opt;
    const tl_aggregate *base, *cand; /* borrowed: must outlive the comparison */
    tl_cmp_row *rows;                /* by group, name, then rank (-1 first) */
    size_t nrows, rows_cap;
    tl_cmp_gpu *gpu; /* all ranks first, then each rank of either side */
    size_t ngpu;
    int *ranks_base_only, *ranks_cand_only;
    size_t nbase_only, ncand_only;
    int *ranks; /* the ranks both runs have (matched by number), ascending */
    size_t nranks;
    int common_only;      /* the runs' ranks differ but some are common: the all-ranks rows,
                                 * spans and GPU breakdown are over the common ones only */
    double geomean_ratio; /* over names matched overall; NaN when none */
    size_t geomean_n;
    size_t counts[TL_VERDICT_COUNT]; /* rows of each verdict, every rank included */
    size_t gate_failures;            /* rows with gate set */
    size_t inconclusive;             /* of counts[TL_VERDICT_UNCHANGED]: the rows with inconclusive set */
    double span_ns[2];               /* each side: a rank's profiled wall time per run (sessions' spans, the
                                 * mean of the ranks); NaN when a session's is unknown */
    tl_cmp_metric_row *metrics;      /* the registry's metrics either side has, in its order; none with --sessions */
    size_t nmetrics;
    tl_cmp_counter_row *counters; /* the counters either side has, by name */
    size_t ncounters;
    /* One rank alone got slower in a stage while the step grew alike on
     * every rank (tl_cmp_lone_rank, compare_verdicts.c): the ranks wait
     * for it. found 0: not found. */
    struct {
        int found;
        int rank;
        size_t row;      /* the stage's per_run row on that rank */
        double stage_ns; /* its growth per step on that rank */
        double step_ns;  /* that rank's step growth (median) */
    } lone;
} tl_compare;

/* Finds c->lone (compare_verdicts.c); tl_compare_run calls it. */
void tl_cmp_lone_rank(tl_compare *c);
/* The candidate's last-arrival straggler that the baseline's waits analysis
 * does not name (compare_verdicts.c), or NULL. */
const tl_straggler *tl_cmp_new_last_arrival(const tl_compare *c);

/* Compare two finished aggregates. c is initialized here; release it either
 * way. The aggregates are borrowed (the HTML page draws their steps and
 * timelines). Deterministic: the same aggregates and options give the same
 * rows. Cost: O(S log S) in the number of samples S of both sides.
 * Returns 0, or -1 when out of memory. */
int tl_compare_run(tl_compare *c, const tl_aggregate *base, const tl_aggregate *cand, const tl_cmp_options *o);
void tl_compare_release(tl_compare *c);

/* The comparison's one verdict: the exit code (--fail-on-regression), the
 * console line, the JUnit failures, the Markdown status line and the HTML
 * headline all derive from it, so they cannot disagree. */
typedef struct tl_cmp_verdict {
    int fails;              /* the gate fails: some row has gate set */
    size_t failures;        /* the rows that fail the gate (tl_compare.gate_failures) */
    const tl_cmp_row *step; /* the all-ranks step row with both sides; NULL without steps */
    const tl_cmp_row *lead; /* the gate failure that leads: the step row when it fails, else the
                                 * failing row of the largest impact; NULL when the gate passes */
    size_t explained;       /* regression verdicts that do not fail the gate (immaterial to the step,
                                 * explanatory rows, ranks) */
} tl_cmp_verdict;

/* Fill v from a finished comparison (borrowed pointers into c). */
void tl_compare_verdict(const tl_compare *c, tl_cmp_verdict *v);

/* Is s a session one side compares (tl_cmp_options.session: -1 every one,
 * -2 the rank's last, else its 0-based number; with a session chosen, ranks
 * with one session are left out)? */
int tl_compare_session_wanted(const tl_aggregate *a, const tl_session *s, int which);

/* "regression", "improvement", "unchanged", "added", "removed",
 * "too_few_samples", "large_increase_untested", "large_decrease_untested",
 * "changed". */
const char *tl_verdict_name(int verdict);
/* "per_call", "per_run", "per_step", "calls_per_step", "peak_allocated",
 * "peak_reserved", "peak_rss". */
const char *tl_cmp_kind_name(int kind);
/* A group's name ("kernels", ... "steps"). */
const char *tl_cmp_group_name(int group);
/* "median", "mean", "total". */
const char *tl_cmp_metric_name(int metric);
/* "better", "worse", "within threshold", "" (TL_CHANGE_NONE): the words;
 * "better", "worse", "within_threshold", NULL: the JSON's and the page's key. */
const char *tl_cmp_change_name(int change);
const char *tl_cmp_change_key(int change);

/* Parse a metric name; -1 when unknown. */
int tl_cmp_metric_parse(const char *s);

/* The normalized form of a name, malloc'd (NULL when out of memory):
 * template arguments <...> (nested), a trailing parameter list (...), a
 * return type or qualifiers before the last top-level space, and a trailing
 * number with its separator (#12, _3, .4, 7) are dropped, so
 * "void foo<float, 4>(float*, int)" becomes "foo" and "ProfilerStep#12"
 * "ProfilerStep". Unbalanced brackets are kept as they are; a name that
 * would become empty is kept whole. */
char *tl_compare_normalize(const char *name);

/* Indices of the rows that pass keep (NULL: all), by |impact_ns| descending,
 * then name (malloc'd; *n gets the count; NULL when out of memory). */
size_t *tl_compare_by_impact(const tl_compare *c, int (*keep)(const tl_cmp_row *, void *), void *ctx, size_t *n);

#endif
