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
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "text_table.h"
#include "units.h"

const char *tl_telemetry_fmt(char *buf, size_t len, double v, int kind)
{
    const char *u = tl_series_unit(kind);
    char n[48];
    if (!isfinite(v) || strcmp(u, "bytes") == 0)
        return tl_units_fmt(buf, len, v, strcmp(u, "bytes") == 0 ? TL_UNIT_BYTES : TL_UNIT_COUNT);
    if (strcmp(u, "%") == 0)
        return tl_units_pct(buf, len, v);
    if (strcmp(u, "bytes/s") == 0) { /* "1.5 GiB/s" */
        tl_units_fmt(n, sizeof n, v, TL_UNIT_BYTES);
        snprintf(buf, len, "%s/s", n);
        return buf;
    }
    tl_units_count(n, sizeof n, v);
    if (strcmp(u, "C") == 0)
        snprintf(buf, len, "%s °C", n);
    else if (*u)
        snprintf(buf, len, "%s %s", n, u);
    else
        snprintf(buf, len, "%s", n);
    return buf;
}

const char *tl_telemetry_energy(char *buf, size_t len, double j)
{
    if (!isfinite(j))
        tl_units_fmt(buf, len, NAN, TL_UNIT_COUNT);
    else
        snprintf(buf, len, "%.3f Wh (%.0f J)", j / 3600.0, j);
    return buf;
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
    snprintf(l->label, sizeof l->label, "%s%s", tl_series_label(kind), tl_series_kind_gpu(kind) ? "" : " (host)");
    snprintf(l->ranks, sizeof l->ranks, "%d", mean->n);
    snprintf(l->lo, sizeof l->lo, "%s (r%d)", tl_telemetry_fmt(v, sizeof v, mean->min, kind), mean->min_rank);
    tl_telemetry_fmt(l->med, sizeof l->med, mean->median, kind);
    snprintf(l->hi, sizeof l->hi, "%s (r%d)", tl_telemetry_fmt(v, sizeof v, mean->max, kind), mean->max_rank);
    if (max != NULL)
        snprintf(l->peak, sizeof l->peak, "%s (r%d)", tl_telemetry_fmt(v, sizeof v, max->max, kind), max->max_rank);
    else
        tl_units_fmt(l->peak, sizeof l->peak, NAN, TL_UNIT_COUNT);
    tl_units_fmt(l->imbal, sizeof l->imbal, mean->imbalance, TL_UNIT_RATIO);
    return 1;
}

static int any_telemetry(const tl_aggregate *a)
{
    for (int i = 0; i < a->nacross; i++)
        if (a->across[i].info->section == TL_SECTION_TELEMETRY)
            return 1;
    return 0;
}

/* "GPU energy 0.806 Wh (2902 J) over 2 ranks, least 0.398 Wh (r0), most 0.408 Wh (r1); mean draw of all GPUs 1200 W" */
void tl_telemetry_energy_sentence(FILE *out, const tl_aggregate *a)
{
    const tl_across *e = tl_aggregate_across(a, "telemetry.energy_j");
    const tl_across *p = tl_aggregate_across(a, "telemetry.power_w");
    char t[48], lo[48], hi[48], w[48];
    if (e == NULL)
        return;
    int by_host, gpus = tl_telemetry_gpus_counted(a, &by_host);
    fprintf(out, "GPU energy %s over %d rank%s", tl_telemetry_energy(t, sizeof t, tl_telemetry_energy_total(a)), e->n,
            e->n == 1 ? "" : "s");
    if (by_host)
        fprintf(out, " (%d GPU%s by host and device: a GPU several ranks sampled counts once)", gpus,
                gpus == 1 ? "" : "s");
    else if (e->n > 1)
        fputs(" (the sum over the ranks' samples: hosts not recorded, so a GPU several ranks sampled counts once per "
              "rank)",
              out);
    if (e->n > 1)
        fprintf(out, ", least %s (r%d), most %s (r%d)", tl_telemetry_energy(lo, sizeof lo, e->min), e->min_rank,
                tl_telemetry_energy(hi, sizeof hi, e->max), e->max_rank);
    if (p != NULL)
        fprintf(out, "; mean draw of all GPUs %s W", tl_units_count(w, sizeof w, tl_telemetry_power_total(a)));
    fputs("\n", out);
}

void tl_telemetry_summary(FILE *out, const tl_aggregate *a, size_t width)
{
    static const tl_text_col cols[] = {
        { "Series", 0, 0, 1 },    { "Ranks", 1, 4, 0 }, { "Mean least", 1, 0, 0 }, { "Mean median", 1, 3, 0 },
        { "Mean most", 1, 0, 0 }, { "Peak", 1, 1, 0 },  { "Imbal", 1, 2, 0 },
    };
    if (!any_telemetry(a))
        return;
    fputs("\nTELEMETRY\n", out);
    tl_text_wrap(out, "",
                 "Sampled by a monitor; GPU rows are per GPU. Mean: the ranks' means; peak: the highest "
                 "sample.",
                 width);
    tl_text_table tt;
    tl_text_table_init(&tt, cols, sizeof cols / sizeof cols[0]);
    for (int k = 0; k < TL_SERIES_COUNT; k++) {
        tl_telemetry_row l;
        if (!tl_telemetry_row_of(a, k, &l))
            continue;
        const char *cells[] = { l.label, l.ranks, l.lo, l.med, l.hi, l.peak, l.imbal };
        tl_text_table_row(&tt, cells);
    }
    tl_text_table_print(out, &tt, width);
    tl_text_table_release(&tt);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m == NULL)
        return;
    tl_telemetry_energy_sentence(m, a);
    fclose(m);
    if (len > 0 && text[len - 1] == '\n')
        text[len - 1] = '\0';
    if (len > 0)
        tl_text_wrap(out, "", text, width);
    free(text);
}

void tl_telemetry_markdown(FILE *out, const tl_aggregate *a)
{
    if (!any_telemetry(a))
        return;
    fputs("\n## Telemetry\n\nSampled by a monitor (libtally's sampler, Inferix's GPU/CPU monitors); GPU rows are per "
          "GPU. Mean: the lowest, median and highest of the ranks' means; peak: the highest sample.\n\n"
          "| Series | Ranks | Mean least | Mean median | Mean most | Peak | Imbalance |\n"
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
