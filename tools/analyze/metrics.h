/*
 * metrics.h - the registry of per-rank metrics: one table says, for every
 * number a rank has, its name, label, unit, which way is better, how it is
 * summarized across ranks and where it is shown.
 *
 * Everything that lists per-rank metrics iterates this table instead of
 * keeping a list of its own: the aggregate computes one across-rank row per
 * entry (tl_aggregate_finish), summary, the HTML page, Markdown and the JSON
 * print those rows with the entry's label and unit, and compare sets the two
 * runs' figures of every entry side by side (over the ranks both have). A new metric is one line here
 * and one getter; docs/analysis.md lists the table (test_docs checks it).
 */
#ifndef TALLY_METRICS_H
#define TALLY_METRICS_H

#include <stddef.h>
#include <stdio.h>

struct tl_rank_result;

/* Which way a change is good. */
typedef enum tl_better {
    TL_BETTER_LOWER = -1,  /* times, idle shares, memory, temperature */
    TL_BETTER_NEITHER = 0, /* a description of the run, not a goal (block size, clocks) */
    TL_BETTER_HIGHER = 1,  /* throughput, compute share, overlap */
} tl_better;

/* The across-rank figure that stands for the job (compare sets these side by
 * side; every output also shows min, median, mean, max and imbalance). */
typedef enum tl_across_policy {
    TL_ACROSS_MEAN = 0, /* the typical rank */
    TL_ACROSS_MAX,      /* the rank that limits the job: a memory peak, a temperature */
} tl_across_policy;

/* Where the metric is shown. */
typedef enum tl_metric_section {
    TL_SECTION_RANKS = 0, /* the "across ranks" table */
    TL_SECTION_TELEMETRY, /* the Telemetry section (sampled series, energy) */
} tl_metric_section;

typedef struct tl_metric {
    const char *name;  /* "gpu.idle_pct": the key in the aggregate JSON's "across_ranks" */
    const char *label; /* "GPU idle" */
    int unit;          /* TL_UNIT_* (units.h) */
    int better;        /* tl_better */
    int policy;        /* tl_across_policy */
    int section;       /* tl_metric_section */
    /* compare has a table of its own for the metric (steps, peak memory, the
     * GPU breakdown): its metrics table leaves the entry out. */
    int compared_elsewhere;
    /* The rank's value; NaN when the rank does not have it. arg: the entry's. */
    double (*get)(const struct tl_rank_result *r, int arg);
    int arg;
    const char *definition; /* one sentence for docs/analysis.md */
    /* The rank's value adds its sessions up (wall time, kernel time,
     * energy): compare takes it per session, so a run of two sessions does
     * not read twice as long. */
    int sessions_summed;
} tl_metric;

/* The registry, in the order every output lists it. */
const tl_metric *tl_metrics(size_t *n);
/* The entry of a name, or NULL. */
const tl_metric *tl_metric_find(const char *name);
/* "lower", "higher", "neither"; "mean", "max". */
const char *tl_better_name(int better);
const char *tl_across_policy_name(int policy);

#endif
