/*
 * units.h - numbers in human units for the report pages: durations, bytes,
 * percentages, dates and axis ticks. Every function prints with a fixed
 * number of decimals through snprintf in the C locale, so the same number
 * always gives the same bytes. NaN (unknown) prints "–".
 */
#ifndef TALLY_RENDER_UNITS_H
#define TALLY_RENDER_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* What a chart axis or a table column holds. */
enum tl_unit { TL_UNIT_COUNT = 0, TL_UNIT_NS, TL_UNIT_BYTES, TL_UNIT_PCT, TL_UNIT_RATIO };

/* A duration in ns: "14.46 ms", "317.5 ms", "1.246 s", "870 ns". */
const char *tl_units_dur(char *buf, size_t len, double ns);
/* Bytes: "1.5 GiB". */
const char *tl_units_bytes(char *buf, size_t len, double bytes);
/* A percentage: "45.3%". */
const char *tl_units_pct(char *buf, size_t len, double pct);
/* A value of any unit (TL_UNIT_RATIO: "1.12x", TL_UNIT_COUNT: "%.4g"). */
const char *tl_units_fmt(char *buf, size_t len, double v, int unit);
/* An axis tick label: short, trailing zeros dropped ("0", "5 ms", "1.5 GiB"). */
const char *tl_units_tick(char *buf, size_t len, double v, double step, int unit);
/* A "nice" step (1, 2 or 5 times a power of ten; for bytes also powers of
 * 1024) that divides [0, span] into at most about n ticks. */
double tl_units_nice_step(double span, int n, int unit);
/* Seconds since the epoch as UTC ISO 8601: "2024-01-31T12:00:00Z". */
const char *tl_units_date(char *buf, size_t len, int64_t unix_s);
/* A wall-clock time in ns since the epoch, with milliseconds:
 * "2023-09-07T23:10:01.426Z"; times before 2000 (a trace's own clock) print
 * as a duration from its zero: "+1.250 s". */
const char *tl_units_time(char *buf, size_t len, int64_t ns);
/* Whether ns looks like wall-clock time (after 2000-01-01). */
int tl_units_is_wall(int64_t ns);

#endif
