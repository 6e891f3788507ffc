/*
 * telemetry_text.c - the telemetry tables of the console summary and the
 * Markdown report (telemetry_text.h). Both read the across-rank rows
 * "telemetry.<series>.mean|max" (analyze/telemetry.c), so a row says: the
 * rank with the lowest and highest mean, the median of the ranks' means,
 * and the highest sample of any rank.
 */
#define _GNU_SOURCE
#include "telemetry_text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "units.h"

#define RULE "--------------------------------------------------------------------------------------------------------------------------------"

const char *tl_telemetry_fmt(char *buf, size_t len, double v, int kind)
{
    const char *u = tl_series_unit(kind);
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (strcmp(u, "bytes") == 0)
        tl_units_bytes(buf, len, v);
    else if (strcmp(u, "%") == 0)
        snprintf(buf, len, "%.1f%%", v);
    else if (strcmp(u, "MHz") == 0)
        snprintf(buf, len, "%.0f MHz", v);
    else if (*u)
        snprintf(buf, len, "%.1f %s", v, u);
    else
        snprintf(buf, len, "%.2f", v);
    return buf;
}

const char *tl_telemetry_energy(char *buf, size_t len, double j)
{
    if (!isfinite(j))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3f Wh (%.0f J)", j / 3600.0, j);
    return buf;
}

int tl_telemetry_is_metric(const char *metric)
{
    return strncmp(metric, "telemetry.", 10) == 0;
}

/* The across rows of a series kind: mean and max, or NULL. */
static const tl_across *row(const tl_aggregate *a, int kind, const char *which)
{
    char m[96];
    snprintf(m, sizeof m, "telemetry.%s.%s", tl_series_kind_name(kind), which);
    return tl_aggregate_across(a, m);
}

int tl_telemetry_row_of(const tl_aggregate *a, int kind, tl_telemetry_row *l)
{
    const tl_across *mean = row(a, kind, "mean"), *max = row(a, kind, "max");
    if (mean == NULL)
        return 0;
    char v[32];
    snprintf(l->label, sizeof l->label, "%s%s", tl_series_label(kind),
             tl_series_kind_gpu(kind) ? "" : " (host)");
    snprintf(l->ranks, sizeof l->ranks, "%d", mean->n);
    snprintf(l->lo, sizeof l->lo, "%s (%d)", tl_telemetry_fmt(v, sizeof v, mean->min, kind), mean->min_rank);
    tl_telemetry_fmt(l->med, sizeof l->med, mean->median, kind);
    snprintf(l->hi, sizeof l->hi, "%s (%d)", tl_telemetry_fmt(v, sizeof v, mean->max, kind), mean->max_rank);
    if (max != NULL)
        snprintf(l->peak, sizeof l->peak, "%s (%d)", tl_telemetry_fmt(v, sizeof v, max->max, kind), max->max_rank);
    else
        snprintf(l->peak, sizeof l->peak, "-");
    snprintf(l->imbal, sizeof l->imbal, "%.2f", mean->imbalance);
    return 1;
}

static int any_telemetry(const tl_aggregate *a)
{
    for (int i = 0; i < a->nacross; i++)
        if (tl_telemetry_is_metric(a->across[i].metric))
            return 1;
    return 0;
}

/* "Energy 0.806 Wh (2902 J) over 2 ranks: min ... (rank r), max ... (rank r); GPU draw 1200.0 W" */
void tl_telemetry_energy_sentence(FILE *out, const tl_aggregate *a)
{
    const tl_across *e = tl_aggregate_across(a, "telemetry.energy_j");
    const tl_across *p = tl_aggregate_across(a, "telemetry.power_w");
    char t[48], lo[48], hi[48];
    if (e == NULL)
        return;
    fprintf(out, "GPU energy %s over %d rank%s", tl_telemetry_energy(t, sizeof t, tl_telemetry_energy_total(a)),
            e->n, e->n == 1 ? "" : "s");
    if (e->n > 1)
        fprintf(out, ": min %s (rank %d), max %s (rank %d)", tl_telemetry_energy(lo, sizeof lo, e->min), e->min_rank,
                tl_telemetry_energy(hi, sizeof hi, e->max), e->max_rank);
    if (p != NULL)
        fprintf(out, "; mean draw %.1f W in all (every GPU's mean added up)", tl_telemetry_power_total(a));
    fputs("\n", out);
}

void tl_telemetry_summary(FILE *out, const tl_aggregate *a)
{
    if (!any_telemetry(a))
        return;
    fprintf(out, "\nTELEMETRY (sampled; GPU rows per GPU; mean: ranks' means, peak: highest sample)\n%.124s\n", RULE);
    fprintf(out, "%-32s %5s %18s %12s %18s %18s %6s\n", "Series", "Ranks", "Mean min (rank)", "Mean median",
            "Mean max (rank)", "Peak (rank)", "imbal");
    for (int k = 0; k < TL_SERIES_COUNT; k++) {
        tl_telemetry_row l;
        if (tl_telemetry_row_of(a, k, &l))
            fprintf(out, "%-32s %5s %18s %12s %18s %18s %6s\n", l.label, l.ranks, l.lo, l.med, l.hi, l.peak, l.imbal);
    }
    tl_telemetry_energy_sentence(out, a);
}

void tl_telemetry_markdown(FILE *out, const tl_aggregate *a)
{
    if (!any_telemetry(a))
        return;
    fputs("\n## Telemetry\n\nSampled by a monitor (libtally's sampler, Inferix's GPU/CPU monitors); GPU rows are per "
          "GPU. Mean: the lowest, median and highest of the ranks' means; peak: the highest sample.\n\n"
          "| Series | Ranks | Mean min (rank) | Mean median | Mean max (rank) | Peak (rank) | Imbalance |\n"
          "|---|---:|---:|---:|---:|---:|---:|\n",
          out);
    for (int k = 0; k < TL_SERIES_COUNT; k++) {
        tl_telemetry_row l;
        if (tl_telemetry_row_of(a, k, &l))
            fprintf(out, "| %s | %s | %s | %s | %s | %s | %s |\n", l.label, l.ranks, l.lo, l.med, l.hi, l.peak,
                    l.imbal);
    }
    fputs("\n", out);
    tl_telemetry_energy_sentence(out, a);
}
