/*
 * trend.h - `tally trend RUN...`: the primary metrics of N runs in the order
 * given (nightly runs, a bisection), and the runs where the step time moved
 * to a new level: the change points.
 *
 * The one idea: a change point is claimed with compare's own machinery, not
 * a second statistic. Each run is compared with the last run of the level
 * before it (tl_compare_run, the step row over all ranks: the U test of the
 * step times with the threshold carried, stratified by rank), and the change
 * must hold: the run after it is also beyond the threshold, the same way,
 * against that reference. A run that jumps and comes back is a run out of
 * line, not a change; a jump at the last run has no run after it and is
 * reported as not yet confirmed. The boundaries are tested at alpha / (N - 1)
 * each (Bonferroni over the series), so a long archive of quiet runs stays
 * quiet. Without step samples on both sides (one report per run, as FramePack
 * and Inferix write) a boundary gets no verdict, and the table says so:
 * "no samples, no verdict". docs/compare.md ("Trend") says all of it.
 *
 * The other columns (throughput, GPU busy and utilization, peak memory, the
 * top stages' shares of the run's time) describe; they are never judged.
 */
#ifndef TALLY_TREND_H
#define TALLY_TREND_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"

/* Stages whose share of the run's time is a column: the largest of the last
 * run (sections; kernels when no run has sections). */
#define TL_TREND_STAGES 3
/* The step time's upper percentile shown beside its median. */
#define TL_TREND_PCT 90.0

/* What a run's boundary with its reference found. */
enum tl_trend_mark {
    TL_TREND_FIRST = 0,    /* the first run: nothing before it */
    TL_TREND_SAME,         /* tested: within the threshold of the reference's level */
    TL_TREND_CHANGE,       /* a change point: beyond the threshold, held by the next run */
    TL_TREND_UNCONFIRMED,  /* beyond the threshold at the last run: no run after it yet */
    TL_TREND_OUTLIER,      /* beyond the threshold, but the next run is back: out of line */
    TL_TREND_NO_VERDICT,   /* a side has no step samples to test: no samples, no verdict */
    TL_TREND_INCONCLUSIVE, /* moved beyond the threshold, but not significantly (compare's inconclusive):
                                 * the run becomes the reference, as after SAME */
    TL_TREND_MARK_COUNT
};

typedef struct tl_trend_run {
    const char *label; /* the argument (borrowed) */
    size_t nranks;
    uint64_t steps;               /* over the ranks */
    int step_samples;             /* per-step durations exist (not only a loop summary) */
    double step_median, step_p90; /* ns, of every rank's steps pooled; a summary's median without them; NaN */
    double steps_per_s;           /* 1e9 / step_median */
    double span_ns;               /* the longest rank's profiled wall time; NaN unknown */
    double gpu_busy_pct;          /* 100 - the ranks' mean GPU idle % (HTA's breakdown); NaN */
    double gpu_util_pct;          /* the sampled GPU utilization, mean of the ranks; NaN */
    double peak_allocated, peak_reserved, peak_device_used, peak_rss; /* bytes, the largest rank; NaN */
    double share[TL_TREND_STAGES]; /* % of the ranks' run time in each stage (tl_trend.stages); NaN */
    /* the boundary with its reference run (mark != FIRST) */
    int mark;         /* tl_trend_mark */
    size_t ref;       /* the run it was compared with */
    int dir;          /* +1 slower, -1 faster, 0 neither */
    double delta_pct; /* the step time's change against ref (median), NaN unknown */
    double p;         /* the one-sided p of the verdict's direction (adjusted), NaN */
} tl_trend_run;

typedef struct tl_trend {
    tl_trend_run *runs;
    size_t nruns;
    char *stages[TL_TREND_STAGES]; /* owned; NULL past nstages */
    size_t nstages;
    int stage_group;      /* tl_group of the stages */
    double threshold_pct; /* compare's --threshold */
    double alpha;         /* the series' level; each boundary at alpha / (nruns - 1) */
    size_t counts[TL_TREND_MARK_COUNT];
    /* The latest change point (or unconfirmed change at the last run): the
     * series ends at a level it reached there. NULL when none. */
    const tl_trend_run *last_change;
    int fails; /* last_change is slower: what --fail-on-regression gates on */
} tl_trend;

/* Judge the finished aggregates runs[0, n) in order, labels[i] naming each
 * (borrowed, must outlive t). threshold_pct and alpha as compare's. The
 * aggregates keep their samples (compare needs them). Returns 0, or -1 when
 * out of memory. Release t either way. */
int tl_trend_run_series(tl_trend *t, const tl_aggregate *runs, const char *const *labels, size_t n,
                        double threshold_pct, double alpha);
void tl_trend_release(tl_trend *t);

/* "first", "same", "change", "unconfirmed", "outlier", "no_verdict",
 * "inconclusive". */
const char *tl_trend_mark_name(int mark);

#endif
