/*
 * units.h - numbers in human units, the one formatter of every output: the
 * HTML and compare pages, the Markdown summary, `tally summary` and
 * `tally inspect` on the console, and the collector's exit summary
 * (TALLY_SUMMARY). Durations, bytes, percentages, rates, dates and axis
 * ticks. The one rule: about four significant digits with the decimals set
 * by the magnitude (1.246 ms, 14.46 ms, 317.5 ms, 870 ns), a space before
 * the unit, binary prefixes for bytes, and "–" (U+2013) for a value that is
 * unknown (NaN). Every function prints through snprintf in the C locale, so
 * the same number always gives the same bytes, and none is longer than
 * TL_UNITS_MAX_COLS display columns for values below 10^4 of their largest
 * unit. Thread-compatible: no state.
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
/* The widest text of tl_units_dur/bytes/pct below 10^4 of their largest
 * unit ("999.9 ms", "1023.9 KiB" is 10); console columns size by it. */
#define TL_UNITS_MAX_COLS 10

/* A percentage: "45.3%". */
const char *tl_units_pct(char *buf, size_t len, double pct);
/* A small share in two decimals rounded down, so a share under a floor never
 * reads as the floor ("0.99%" for 0.996 % under 1 %); "under 0.01%" below. */
const char *tl_units_pct_down(char *buf, size_t len, double pct);
/* A count or rate: whole numbers as they are ("1024"), others with the
 * decimals of a duration ("62.47", "1.246"). */
const char *tl_units_count(char *buf, size_t len, double v);
/* A value of any unit (TL_UNIT_RATIO: "1.12x", TL_UNIT_COUNT: tl_units_count). */
const char *tl_units_fmt(char *buf, size_t len, double v, int unit);
/* An axis tick label: short, trailing zeros dropped ("0", "5 ms", "1.5 GiB"). */
const char *tl_units_tick(char *buf, size_t len, double v, double step, int unit);
/* A "nice" step (1, 2 or 5 times a power of ten; for bytes also powers of
 * 1024) that divides [0, span] into at most about n ticks. */
double tl_units_nice_step(double span, int n, int unit);
/* The display columns of UTF-8 text: its code points ("µs" is 2). */
int tl_units_cols(const char *s);
/* Seconds since the epoch as UTC ISO 8601: "2024-01-31T12:00:00Z". */
const char *tl_units_date(char *buf, size_t len, int64_t unix_s);
/* A wall-clock time in ns since the epoch, with milliseconds:
 * "2023-09-07T23:10:01.426Z"; times before 2000 (a trace's own clock) print
 * as a duration from its zero: "+1.250 s". */
const char *tl_units_time(char *buf, size_t len, int64_t ns);
/* Whether ns looks like wall-clock time (after 2000-01-01). */
int tl_units_is_wall(int64_t ns);

#endif
