/*
 * drift.h - the same stage across the sessions of a run: a table of each
 * stage per session, its trend, and which stages drift.
 *
 * The one idea: sessions are kept apart. Two inputs of one rank (a rerun, a
 * second epoch) are two sessions, numbered in start order; session k of the
 * run is session k of every rank. A stage's value in session k is the median
 * over the ranks of its time per call in that session (its total over its
 * calls: sessions need not be as long), and the step time's is the median
 * over the ranks of each rank's median whole step. A
 * stage drifts when its last session differs from its first by more than
 * TL_DRIFT_PCT; the finding ("session-drift", rules.c) names the largest.
 * `tally compare --sessions` tests the same change (docs/compare.md).
 */
#ifndef TALLY_DRIFT_H
#define TALLY_DRIFT_H

#include <stddef.h>

/* A stage whose last session is this much slower or faster than its first drifts. */
#define TL_DRIFT_PCT 20.0
/* Sessions with a column of their own; the table says how many more there were. */
#define TL_DRIFT_MAX_SESSIONS 16
/* Stages kept in the table (by their first session's time, largest first);
 * the rest are counted. */
#define TL_DRIFT_MAX_STAGES 64
/* A stage under this share of the first session's time is too small to drift. */
#define TL_DRIFT_MIN_SHARE_PCT 1.0

typedef struct tl_drift_stage {
    int group;  /* tl_group, or -1 for the step time */
    char *name; /* "step" for the step time */
    double value
        [TL_DRIFT_MAX_SESSIONS]; /* ns per call (the step time: median step) per session; NaN where no rank has it */
    double calls[TL_DRIFT_MAX_SESSIONS]; /* calls (steps) in each session, the mean over its ranks; NaN as value */
    int nranks[TL_DRIFT_MAX_SESSIONS];   /* ranks behind each value */
    double change_pct;                   /* last session against the first; NaN unknown */
    double slope_pct;                    /* least-squares slope per session, % of the first; NaN unknown */
    int drifts;                          /* |change_pct| > TL_DRIFT_PCT and the stage is not too small */
} tl_drift_stage;

typedef struct tl_drift {
    int nsessions;          /* sessions of the rank with the most (the columns: at most TL_DRIFT_MAX_SESSIONS) */
    int sessions_dropped;   /* sessions beyond the columns */
    tl_drift_stage *stages; /* step time first, then stages by first-session value, largest first */
    size_t nstages;
    size_t stages_dropped; /* beyond TL_DRIFT_MAX_STAGES */
} tl_drift;

struct tl_aggregate;

/* Build the table of a finished aggregate's sessions (nothing when no rank
 * has two sessions). d is initialized here; release it either way. Returns
 * 0, or -1 when out of memory. */
int tl_drift_compute(tl_drift *d, struct tl_aggregate *a); /* holds each session it reads (spill.h) */
void tl_drift_release(tl_drift *d);

#endif
