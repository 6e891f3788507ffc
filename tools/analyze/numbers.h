/*
 * numbers.h - the numbers inside the analysis's sentences (findings, their
 * evidence, the rules that did not apply, the stragglers' summaries, the
 * headline). Analyze computes and never formats a number with its unit:
 * each duration, size or percentage it puts in a sentence is a typed value,
 * its kind and its exact double, written in place as a token that render
 * (tl_text_numbers, render/text_numbers.c) replaces by the one formatter's
 * text (common/units.h: "42.0 µs", "1.5 GiB", "45.3%"). So a finding says
 * 42.0 µs beside a table's 42.0 µs, never 0.042 ms.
 *
 * A token is TL_NUM_TOKEN_LEN bytes: 0x1F, the kind's letter, the value's
 * IEEE-754 bits as 16 lower-case hex digits, 0x1E. Control bytes that no
 * sentence of tally's holds; a name from an input that copies a token
 * exactly reads as that number, and anything else passes as it is.
 */
#ifndef TALLY_ANALYZE_NUMBERS_H
#define TALLY_ANALYZE_NUMBERS_H

#include <stddef.h>

/* The kinds of number a sentence carries (the token's letter). Counts and
 * ranks are whole numbers written as they are; they need no unit. */
typedef enum tl_num_kind {
    TL_NUM_DUR = 'd',         /* a duration in ns */
    TL_NUM_BYTES = 'b',       /* a size in bytes */
    TL_NUM_PCT = 'p',         /* a percentage, one decimal ("45.3%") */
    TL_NUM_PCT_WHOLE = 'w',   /* a percentage rounded to whole ("30%": thresholds, rough shares) */
    TL_NUM_PCT_SIGNED = 's',  /* a change in percent, with its sign ("+12.5%") */
    TL_NUM_DUR_ROUND = 'D',   /* a round duration, a threshold: no trailing zeros ("1 ms", "500 ms") */
    TL_NUM_BYTES_ROUND = 'B', /* a round size, a threshold: "256 MiB", "1 GiB" */
    TL_NUM_COUNT = 'n',       /* a threshold count as written ("3", "85") */
    TL_NUM_RATIO = 'x',       /* a threshold ratio ("1.5x") */
    TL_NUM_PCT_AS_SET = 'g',  /* a percentage option as the user set it ("10%", "2.5%") */
    TL_NUM_PCT_DOWN = 'f',    /* a small share rounded down ("0.99%", "under 0.01%": tl_units_pct_down) */
} tl_num_kind;

#define TL_NUM_TOKEN_LEN 19

/* Writes the token of (kind, v) into buf (TL_NUM_TOKEN_LEN + 1 bytes) and returns buf. */
const char *tl_num_token(char *buf, tl_num_kind kind, double v);

/* The token of a value as a %s argument, in storage that lives until the
 * end of the enclosing block: snprintf(b, n, "took %s", TL_DUR(ns)). */
#define TL_NUM_(kind, v) tl_num_token((char[TL_NUM_TOKEN_LEN + 1]){ 0 }, (kind), (double)(v))
#define TL_DUR(ns) TL_NUM_(TL_NUM_DUR, (ns))
#define TL_BYTES(b) TL_NUM_(TL_NUM_BYTES, (b))
#define TL_PCT(p) TL_NUM_(TL_NUM_PCT, (p))
#define TL_PCT_WHOLE(p) TL_NUM_(TL_NUM_PCT_WHOLE, (p))
#define TL_PCT_SIGNED(p) TL_NUM_(TL_NUM_PCT_SIGNED, (p))
#define TL_DUR_ROUND(ns) TL_NUM_(TL_NUM_DUR_ROUND, (ns))
#define TL_BYTES_ROUND(b) TL_NUM_(TL_NUM_BYTES_ROUND, (b))
#define TL_PCT_AS_SET(p) TL_NUM_(TL_NUM_PCT_AS_SET, (p))
#define TL_PCT_DOWN(p) TL_NUM_(TL_NUM_PCT_DOWN, (p))

/* Whether c is a kind's letter. */
int tl_num_kind_known(int c);
/* A token at s: its length (TL_NUM_TOKEN_LEN) with *kind and *v set, or 0
 * when s does not start with a whole token. */
size_t tl_num_parse(const char *s, tl_num_kind *kind, double *v);

#endif
