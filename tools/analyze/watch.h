/*
 * watch.h - `tally watch`: the few numbers of a running program's latest
 * flushed report that fit one terminal screen (docs/analysis.md, "Watch").
 *
 * The one idea: a frame is computed from the same finished aggregate every
 * other command reads, so its numbers are summary's: steps and their rate
 * (over the whole report and over the last TL_WATCH_RECENT steps: a rate
 * that changes while the program runs), the largest stages' shares of the
 * profiled time, and each sampled series' latest value with a short history
 * (the series' last TL_WATCH_SPARK bins) for a sparkline.
 */
#ifndef TALLY_WATCH_H
#define TALLY_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "aggregate.h"

/* The steps the recent rate is over. */
#define TL_WATCH_RECENT 10
/* The stages shown. */
#define TL_WATCH_STAGES 5
/* The series shown: by rank, its GPUs' utilization, memory used,
 * temperature and power, then its host's CPU, RSS and disk rates. */
#define TL_WATCH_SERIES 24
/* The history points of a series' sparkline. */
#define TL_WATCH_SPARK 16

typedef struct tl_watch_series {
    int kind;       /* tl_series_kind */
    int64_t device; /* GPU index; -1 the host */
    int rank;
    double last;                  /* the latest bin's mean; NaN none */
    double max;                   /* over every sample */
    double spark[TL_WATCH_SPARK]; /* the last bins' means, oldest first; NaN where a bin has no sample */
    int nspark;
} tl_watch_series;

typedef struct tl_watch_view {
    size_t nranks;
    uint64_t steps;                      /* over the ranks */
    double steps_per_s;                  /* the steps over their summed time, mean of the ranks; NaN none */
    double recent_per_s;                 /* the same over each rank's last TL_WATCH_RECENT steps */
    double step_last_ns;                 /* the last step of the first rank; NaN */
    double span_ns;                      /* the longest rank's profiled time; NaN */
    int64_t end_wall_ns;                 /* the last event on the wall clock (start + span); INT64_MIN unknown */
    const char *stages[TL_WATCH_STAGES]; /* borrowed from the aggregate's names */
    double share[TL_WATCH_STAGES];       /* % of the ranks' profiled time added up */
    size_t nstages;
    tl_watch_series series[TL_WATCH_SERIES];
    size_t nseries;
    size_t series_left; /* series beyond TL_WATCH_SERIES, not shown (the frame says how many) */
} tl_watch_view;

/* The frame's numbers from a finished aggregate (borrowed: the view's
 * strings point into it). */
void tl_watch_compute(tl_watch_view *v, const tl_aggregate *a);

#endif
