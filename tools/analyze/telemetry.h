/*
 * telemetry.h - sampled GPU and host telemetry: per session, one bounded
 * series per (metric, device); per rank, each metric's mean and maximum and
 * the energy; across ranks, the same rows as every other per-rank metric.
 *
 * The one idea: a series is kept as TL_SERIES_BINS bins of min/mean/max over
 * the time its samples cover (like the timelines), plus the exact summary of
 * every sample, so a session's size does not grow with the sampling rate and
 * a partial aggregate carries it whole. Definitions: docs/analysis.md,
 * "Telemetry".
 */
#ifndef TALLY_TELEMETRY_H
#define TALLY_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "session.h"

/* The series of a session (tl_tseries, TL_SERIES_BINS, TL_SERIES_MAX) are
 * declared with it, in session.h. */

/* Per rank: each metric over all its sessions and devices. */
typedef struct tl_rank_telemetry {
    uint64_t n[TL_SERIES_COUNT];  /* samples; 0: the rank does not have the metric */
    double mean[TL_SERIES_COUNT]; /* sample-weighted mean over devices and sessions */
    double max[TL_SERIES_COUNT];
    double energy_j;    /* every GPU, every session; NaN without power samples */
    double power_w;     /* the rank's GPUs' mean draw added up (sessions averaged) */
    int gpus;           /* distinct GPU devices with samples */
    int power_sessions; /* sessions with power samples */
} tl_rank_telemetry;

struct tl_session;
struct tl_aggregate;

/* Build the series of a profile's GPU samples and telemetry points into
 * *out (allocated; *n series). base shifts times onto the timeline axis.
 * Warns on p when TL_SERIES_MAX is reached. 0 or -1 (out of memory). */
int tl_telemetry_series(const tl_profile *p, int64_t base, tl_tseries **out, size_t *n, char **warning);
/* Fold a session's series into a rank's telemetry (init with tl_rank_telemetry_init). */
void tl_rank_telemetry_init(tl_rank_telemetry *t);
void tl_rank_telemetry_add(tl_rank_telemetry *t, const tl_tseries *s, size_t n);
void tl_rank_telemetry_finish(tl_rank_telemetry *t);
/* Totals across ranks: the energy and the mean draw of every GPU; NaN without
 * power. A GPU of a recorded host is counted once however many ranks sampled
 * it (host, device); without the host, every rank's samples count (several
 * ranks on one node that each sampled its GPUs count them once per rank). */
double tl_telemetry_energy_total(const struct tl_aggregate *a);
double tl_telemetry_power_total(const struct tl_aggregate *a);
/* The GPUs those totals count, and whether they were told apart by host and
 * device (*by_host; else they are the ranks' samples added up). */
int tl_telemetry_gpus_counted(const struct tl_aggregate *a, int *by_host);
/* The unit word of a kind for tables ("%", "bytes", "C", "W", "MHz", ""). */
const char *tl_series_unit(int kind);
/* A short label ("GPU util", "GPU memory", ...). */
const char *tl_series_label(int kind);

#endif
