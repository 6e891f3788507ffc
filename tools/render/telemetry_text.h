/*
 * telemetry_text.h - the telemetry tables of `tally summary` and the Markdown
 * report, and the value formats the HTML section shares: one row per sampled
 * series with its per-rank mean and peak across ranks, then the energy.
 */
#ifndef TALLY_RENDER_TELEMETRY_TEXT_H
#define TALLY_RENDER_TELEMETRY_TEXT_H

#include <stddef.h>
#include <stdio.h>

#include "aggregate.h"

/* A value of a series kind in the units module's style: "75.0%",
 * "20.0 GiB", "63.50 °C", "300 W", "1410 MHz", "11.86"; NaN prints "–". */
const char *tl_telemetry_fmt(char *buf, size_t len, double v, int kind);
/* Energy in J as "0.806 Wh (2902 J)". */
const char *tl_telemetry_energy(char *buf, size_t len, double joules);
/* One row of the telemetry tables, formatted: the series, the ranks that
 * have it, the lowest / median / highest of the ranks' means (with the
 * ranks), the highest sample (with its rank) and the imbalance of the means. */
typedef struct tl_telemetry_row {
    char label[64], ranks[16], lo[32], med[32], hi[32], peak[32], imbal[16];
} tl_telemetry_row;
/* Fill r for a series kind; 0 when no rank has it. */
int tl_telemetry_row_of(const tl_aggregate *a, int kind, tl_telemetry_row *r);
/* The energy sentence shared by every output, with a newline; nothing without power. */
void tl_telemetry_energy_sentence(FILE *out, const tl_aggregate *a);

/* The console table (TELEMETRY) in at most width columns (text_table.h);
 * nothing without samples. */
void tl_telemetry_summary(FILE *out, const tl_aggregate *a, size_t width);
/* The Markdown section (## Telemetry); nothing without samples. */
void tl_telemetry_markdown(FILE *out, const tl_aggregate *a);

#endif
